"""Dynamic-programming kernels on integer arrays."""

from __future__ import annotations

import numpy as np

from common import Case, rng


def edit_distance(a, b):
    """Levenshtein distance between two int sequences, full (n+1) x (m+1) table."""
    n = len(a)
    m = len(b)
    d = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        ai = a[i - 1]
        for j in range(1, m + 1):
            cost = 0 if ai == b[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    return d[n, m]


def lcs_length(x, y):
    """Length of the longest common subsequence with two rolling rows (swapped)."""
    n = x.shape[0]
    m = y.shape[0]
    prev = np.zeros(m + 1, dtype=np.int32)
    cur = np.zeros(m + 1, dtype=np.int32)
    for i in range(n):
        xi = x[i]
        for j in range(m):
            if xi == y[j]:
                cur[j + 1] = prev[j] + 1
            elif prev[j + 1] >= cur[j]:
                cur[j + 1] = prev[j + 1]
            else:
                cur[j + 1] = cur[j]
        prev, cur = cur, prev
    return int(prev[m])


def knapsack_01(weights, values, capacity):
    """0/1 knapsack, 1-D table filled backwards; returns the best value."""
    best = np.zeros(capacity + 1, dtype=np.int64)
    for i in range(len(weights)):
        w = weights[i]
        v = values[i]
        for c in range(capacity, w - 1, -1):
            cand = best[c - w] + v
            if cand > best[c]:
                best[c] = cand
    return best[capacity]


def longest_increasing_subsequence(x):
    """O(n^2) LIS length with a predecessor array; returns (length, end index)."""
    n = len(x)
    length = np.ones(n, dtype=np.int64)
    pred = np.full(n, -1, dtype=np.int64)
    for i in range(1, n):
        for j in range(i):
            if x[j] < x[i] and length[j] + 1 > length[i]:
                length[i] = length[j] + 1
                pred[i] = j
    best = 0
    end = 0
    for i in range(n):
        if length[i] > best:
            best = length[i]
            end = i
    return best, end


def min_path_grid(cost):
    """Cheapest monotone (right/down) path through an int32 cost grid, in place on a
    copy; returns the total."""
    h, w = cost.shape
    acc = np.empty((h, w), dtype=np.int64)
    acc[0, 0] = cost[0, 0]
    for j in range(1, w):
        acc[0, j] = acc[0, j - 1] + cost[0, j]
    for i in range(1, h):
        acc[i, 0] = acc[i - 1, 0] + cost[i, 0]
        for j in range(1, w):
            up = acc[i - 1, j]
            left = acc[i, j - 1]
            acc[i, j] = cost[i, j] + (up if up < left else left)
    return acc[h - 1, w - 1]


def coin_change_ways(coins, amount):
    """Number of ways to make `amount` from the coin denominations, modulo 10**9 + 7
    (Python ints in an int64 table)."""
    mod = 1000000007
    ways = np.zeros(amount + 1, dtype=np.int64)
    ways[0] = 1
    for k in range(len(coins)):
        c = coins[k]
        for a in range(c, amount + 1):
            ways[a] = (ways[a] + ways[a - c]) % mod
    return ways[amount]


# -- inputs --------------------------------------------------------------------------


def _seq_pair(seed, n, alphabet, dtype):
    g = rng(seed)
    a = g.integers(0, alphabet, n).astype(dtype)
    b = a.copy()
    # mutate: a related sequence, so the DP does real work
    idx = g.integers(0, n, n // 5)
    b[idx] = g.integers(0, alphabet, n // 5)
    return a, b


def _knapsack_args():
    g = rng(803)
    n = 120
    weights = g.integers(5, 60, n).astype(np.int64)
    values = g.integers(1, 100, n).astype(np.int64)
    return weights, values, 2000


CASES = [
    Case("edit_distance", edit_distance, lambda: _seq_pair(801, 300, 8, np.int64), "dynprog"),
    Case("lcs_length", lcs_length, lambda: _seq_pair(802, 400, 4, np.int32), "dynprog"),
    Case("knapsack_01", knapsack_01, _knapsack_args, "dynprog"),
    Case("longest_increasing_subsequence", longest_increasing_subsequence, lambda: (rng(804).integers(0, 10000, 700),), "dynprog"),
    Case("min_path_grid", min_path_grid, lambda: (rng(805).integers(1, 10, (300, 300)).astype(np.int32),), "dynprog"),
    Case("coin_change_ways", coin_change_ways, lambda: (np.array([1, 2, 5, 10, 20, 50, 100, 200], dtype=np.int64), 30000), "dynprog"),
]
