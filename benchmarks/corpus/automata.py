"""Cellular automata."""

from __future__ import annotations

import numpy as np

from common import Case, rng


def life_steps_u8(grid, steps):
    """Conway's Game of Life on a uint8 torus (wraparound with %); returns the final
    grid and its population."""
    rows, cols = grid.shape
    cur = grid.copy()
    nxt = np.zeros_like(grid)
    for _ in range(steps):
        for i in range(rows):
            for j in range(cols):
                n = 0
                for di in range(-1, 2):
                    for dj in range(-1, 2):
                        if di != 0 or dj != 0:
                            n += cur[(i + di) % rows, (j + dj) % cols]
                if cur[i, j] == 1:
                    nxt[i, j] = 1 if n == 2 or n == 3 else 0
                else:
                    nxt[i, j] = 1 if n == 3 else 0
        cur, nxt = nxt, cur
    pop = 0
    for i in range(rows):
        for j in range(cols):
            pop += int(cur[i, j])
    return cur, pop


def life_steps_i64(board, steps):
    """Game of Life on an int64 torus with the neighbour rows and columns found by
    comparison (no modulo), updated into a second board; the boards are swapped."""
    n = board.shape[0]
    m = board.shape[1]
    a = board.copy()
    b = np.empty_like(board)
    for _ in range(steps):
        for i in range(n):
            up = i - 1 if i > 0 else n - 1
            down = i + 1 if i < n - 1 else 0
            for j in range(m):
                left = j - 1 if j > 0 else m - 1
                right = j + 1 if j < m - 1 else 0
                s = (
                    a[up, left] + a[up, j] + a[up, right]
                    + a[i, left] + a[i, right]
                    + a[down, left] + a[down, j] + a[down, right]
                )
                if s == 3 or (s == 2 and a[i, j] == 1):
                    b[i, j] = 1
                else:
                    b[i, j] = 0
        a, b = b, a
    return a


def elementary_ca(rule, width, steps):
    """1-D elementary cellular automaton (rule 30, 110, ...) from a single live cell,
    periodic; returns the (steps + 1, width) uint8 space-time diagram."""
    hist = np.zeros((steps + 1, width), dtype=np.uint8)
    hist[0, width // 2] = 1
    for t in range(steps):
        for x in range(width):
            l = hist[t, (x - 1) % width]
            c = hist[t, x]
            r = hist[t, (x + 1) % width]
            idx = 4 * l + 2 * c + r
            hist[t + 1, x] = (rule >> idx) & 1
    return hist


def rule110_density(cells, steps):
    """Rule 110 on an int64 ring, in place with a saved left neighbour (no second
    buffer); returns the density of live cells after each step."""
    n = len(cells)
    density = np.zeros(steps)
    for t in range(steps):
        first = cells[0]
        prev = cells[n - 1]
        live = 0
        for x in range(n):
            c = cells[x]
            r = cells[x + 1] if x + 1 < n else first
            pattern = (prev << 2) | (c << 1) | r
            prev = c
            v = (110 >> pattern) & 1
            cells[x] = v
            live += v
        density[t] = live / n
    return density


def sandpile_topple(grid):
    """Abelian sandpile: topple every site holding >= 4 grains until stable (sand
    falling off the edges), with a while loop over sweeps; returns the number of
    topplings."""
    h, w = grid.shape
    topples = 0
    unstable = True
    while unstable:
        unstable = False
        for i in range(h):
            for j in range(w):
                if grid[i, j] >= 4:
                    q = grid[i, j] // 4
                    grid[i, j] -= 4 * q
                    topples += q
                    if i > 0:
                        grid[i - 1, j] += q
                    if i < h - 1:
                        grid[i + 1, j] += q
                    if j > 0:
                        grid[i, j - 1] += q
                    if j < w - 1:
                        grid[i, j + 1] += q
                    unstable = True
    return topples


# -- inputs --------------------------------------------------------------------------


def _glider_soup(seed, n, dtype):
    return (rng(seed).random((n, n)) < 0.3).astype(dtype)


def _sandpile_args():
    g = rng(1105)
    grid = g.integers(0, 4, (40, 40)).astype(np.int64)
    grid[20, 20] += 1500
    return (grid,)


CASES = [
    Case("life_steps_u8", life_steps_u8, lambda: (_glider_soup(1101, 64, np.uint8), 4), "automata"),
    Case("life_steps_i64", life_steps_i64, lambda: (_glider_soup(1102, 96, np.int64), 8), "automata"),
    Case("elementary_ca_rule30", elementary_ca, lambda: (30, 401, 200), "automata"),
    Case("rule110_density", rule110_density, lambda: ((rng(1104).random(4000) < 0.5).astype(np.int64), 40), "automata"),
    Case("sandpile_topple", sandpile_topple, _sandpile_args, "automata", fresh_args=True),
]
