"""Monte Carlo estimate of pi, written as a flat script: an inline linear
congruential generator in a module-level while loop."""

SAMPLES = 4_000_000
state = 12345
inside = 0
n = 0
while n < SAMPLES:
    state = (state * 1103515245 + 12345) % 2147483648
    x = state / 2147483648.0
    state = (state * 1103515245 + 12345) % 2147483648
    y = state / 2147483648.0
    if x * x + y * y <= 1.0:
        inside += 1
    n += 1

print("pi ~", 4.0 * inside / SAMPLES)
