"""A damped oscillator integrated with fixed steps, energy sampled on the way: a float
loop with an inner sampling loop, at module level through one call."""
import math
import sys


def simulate(steps, dt):
    x, v = 1.0, 0.0
    energy = 0.0
    for i in range(steps):
        a = -x - 0.1 * v + 0.05 * math.sin(i * dt)
        v += a * dt
        x += v * dt
        if i % 1000 == 0:
            for k in range(10):
                energy += 0.5 * (v * v + x * x) / (k + 1)
    return x, v, energy


x, v, energy = simulate(int(sys.argv[1]) if len(sys.argv) > 1 else 4000000, 1e-4)
print(round(x, 9), round(v, 9), round(energy, 6))
