# Explicit 1-D heat equation on a NumPy grid, stepped with plain loops at module level.
import numpy as np

cells = 400
steps = 3000
alpha = 0.24
u = np.zeros(cells)
u[cells // 2] = 100.0
nxt = np.empty(cells)
for step in range(steps):
    nxt[0] = u[0]
    nxt[cells - 1] = u[cells - 1]
    for i in range(1, cells - 1):
        nxt[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    for i in range(cells):
        u[i] = nxt[i]
print("centre", round(u[cells // 2], 6), "total", round(float(u.sum()), 6))
