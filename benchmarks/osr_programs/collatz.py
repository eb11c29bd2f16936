"""The longest Collatz chain below a limit: a while loop in a for loop, in a function
called once."""
import sys


def longest(limit):
    best, best_n = 0, 1
    for n in range(1, limit):
        steps, x = 0, n
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            steps += 1
        if steps > best:
            best, best_n = steps, n
    return best_n, best


print(longest(int(sys.argv[1]) if len(sys.argv) > 1 else 300000))
