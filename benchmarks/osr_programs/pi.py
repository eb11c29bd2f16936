"""Monte Carlo estimate of pi with a hand-written linear congruential generator: the
whole program is one while loop at the top of main()."""
import sys


def main(samples):
    state = 12345
    inside = 0
    k = 0
    while k < samples:
        state = (state * 1103515245 + 12345) % 2147483648
        x = state / 2147483648.0
        state = (state * 1103515245 + 12345) % 2147483648
        y = state / 2147483648.0
        if x * x + y * y <= 1.0:
            inside += 1
        k += 1
    return 4.0 * inside / samples


print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 6000000))
