"""Dense linear algebra written out as loops."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def matmul(a, b):
    """C = A B, the textbook triple loop with a scalar accumulator."""
    n = a.shape[0]
    m = a.shape[1]
    p = b.shape[1]
    c = np.zeros((n, p))
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += a[i, k] * b[k, j]
            c[i, j] = s
    return c


def matmul_ikj_f32(a, b, c):
    """C += A B in i-k-j order (unit-stride inner loop), float32, into `c`."""
    n, m = a.shape
    p = b.shape[1]
    for i in range(n):
        for k in range(m):
            aik = a[i, k]
            for j in range(p):
                c[i, j] += aik * b[k, j]
    return c


def cholesky(a):
    """Cholesky-Banachiewicz: lower-triangular L with A = L L^T (A symmetric positive
    definite)."""
    n = a.shape[0]
    L = np.zeros_like(a)
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                L[i, j] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return L


def lu_inplace(a):
    """Doolittle LU without pivoting, overwriting A with L (unit diagonal, below) and
    U; returns the determinant."""
    n = len(a)
    for k in range(n):
        pivot = a[k, k]
        for i in range(k + 1, n):
            a[i, k] /= pivot
            f = a[i, k]
            for j in range(k + 1, n):
                a[i, j] -= f * a[k, j]
    det = 1.0
    for k in range(n):
        det *= a[k, k]
    return det


def jacobi_solve(a, b, iters):
    """Fixed number of Jacobi sweeps for Ax = b (diagonally dominant A); returns x and
    the final residual norm."""
    n = b.shape[0]
    x = np.zeros(n)
    x_new = np.zeros(n)
    for it in range(iters):
        for i in range(n):
            s = b[i]
            for j in range(n):
                if j != i:
                    s -= a[i, j] * x[j]
            x_new[i] = s / a[i, i]
        x, x_new = x_new, x
    res = 0.0
    for i in range(n):
        r = b[i]
        for j in range(n):
            r -= a[i, j] * x[j]
        res += r * r
    return x, math.sqrt(res)


def gauss_seidel(a, b, tol, max_iter):
    """Gauss-Seidel until the largest update is below tol (a while loop); returns
    (x, iterations)."""
    n = b.shape[0]
    x = np.zeros(n)
    it = 0
    delta = tol + 1.0
    while delta > tol and it < max_iter:
        delta = 0.0
        for i in range(n):
            s = b[i]
            for j in range(i):
                s -= a[i, j] * x[j]
            for j in range(i + 1, n):
                s -= a[i, j] * x[j]
            new = s / a[i, i]
            delta = max(delta, abs(new - x[i]))
            x[i] = new
        it += 1
    return x, it


def power_iteration(a, iters):
    """Dominant eigenvalue by power iteration with a Rayleigh quotient."""
    n = a.shape[0]
    v = np.ones(n)
    w = np.empty(n)
    lam = 0.0
    for it in range(iters):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += a[i, j] * v[j]
            w[i] = s
        norm = 0.0
        for i in range(n):
            norm += w[i] ** 2
        norm = math.sqrt(norm)
        lam = 0.0
        for i in range(n):
            lam += v[i] * w[i]
        vv = 0.0
        for i in range(n):
            vv += v[i] * v[i]
        lam /= vv
        for i in range(n):
            v[i] = w[i] / norm
    return lam


def tridiagonal_solve(lower, diag, upper, rhs):
    """Thomas algorithm for many right-hand sides stored as rows of `rhs` (same
    tridiagonal matrix); returns the solutions."""
    nsys, n = rhs.shape
    x = np.empty_like(rhs)
    cp = np.empty(n)
    dp = np.empty(n)
    for s in range(nsys):
        cp[0] = upper[0] / diag[0]
        dp[0] = rhs[s, 0] / diag[0]
        for i in range(1, n):
            m = diag[i] - lower[i] * cp[i - 1]
            cp[i] = upper[i] / m
            dp[i] = (rhs[s, i] - lower[i] * dp[i - 1]) / m
        x[s, n - 1] = dp[n - 1]
        for i in range(n - 2, -1, -1):
            x[s, i] = dp[i] - cp[i] * x[s, i + 1]
    return x


# -- inputs --------------------------------------------------------------------------


def _spd(seed, n):
    g = rng(seed)
    m = g.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def _diag_dominant(seed, n):
    g = rng(seed)
    a = g.uniform(-1.0, 1.0, (n, n))
    a += np.diag(np.abs(a).sum(axis=1) + 1.0)
    return a, g.uniform(-1.0, 1.0, n)


def _matmul_f32_args():
    g = rng(602)
    a = g.standard_normal((64, 64)).astype(np.float32)
    b = g.standard_normal((64, 64)).astype(np.float32)
    return a, b, np.zeros((64, 64), dtype=np.float32)


def _tridiag_args():
    g = rng(607)
    n = 400
    lower = np.full(n, -1.0)
    upper = np.full(n, -1.0)
    diag = np.full(n, 2.05)
    return lower, diag, upper, g.standard_normal((60, n))


CASES = [
    Case("matmul", matmul, lambda: (rng(601).standard_normal((64, 64)), rng(611).standard_normal((64, 64))), "linalg"),
    Case("matmul_ikj_f32", matmul_ikj_f32, _matmul_f32_args, "linalg", fresh_args=True),
    Case("cholesky", cholesky, lambda: (_spd(603, 120),), "linalg"),
    Case("lu_inplace", lu_inplace, lambda: (_diag_dominant(604, 100)[0],), "linalg", fresh_args=True),
    Case("jacobi_solve", jacobi_solve, lambda: _diag_dominant(605, 100) + (40,), "linalg"),
    Case("gauss_seidel", gauss_seidel, lambda: _diag_dominant(606, 100) + (1e-13, 200), "linalg"),
    Case("power_iteration", power_iteration, lambda: (_spd(608, 100), 40), "linalg"),
    Case("tridiagonal_solve", tridiagonal_solve, _tridiag_args, "linalg"),
]
