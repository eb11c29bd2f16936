"""Streaming mean and variance (Welford) of a generated signal."""
import math

N = 3_000_000
mean = 0.0
m2 = 0.0
peak = -1.0
k = 0
for t in range(N):
    value = math.sin(t * 0.001) * 10.0 + (t % 17) * 0.25
    k += 1
    delta = value - mean
    mean += delta / k
    m2 += delta * (value - mean)
    if value > peak:
        peak = value
print(f"mean {mean:.6f} sd {math.sqrt(m2 / (k - 1)):.6f} peak {peak:.6f}")
