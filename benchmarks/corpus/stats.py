"""Descriptive-statistics kernels."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def moving_average(x, window):
    """Trailing moving average with a running sum; returns len(x) - window + 1 values."""
    n = len(x)
    out = np.empty(n - window + 1)
    s = 0.0
    for i in range(window):
        s += x[i]
    out[0] = s / window
    for i in range(window, n):
        s += x[i] - x[i - window]
        out[i - window + 1] = s / window
    return out


def nanmean(x):
    """Mean of the non-NaN entries (`v != v` tests for NaN); NaN when all are NaN."""
    total = 0.0
    count = 0
    for i in range(x.shape[0]):
        v = x[i]
        if v != v:
            continue
        total += v
        count += 1
    if count == 0:
        return math.nan
    return total / count


def nanstd_2d(x):
    """Per-column NaN-aware mean and standard deviation of a 2-D array (math.isnan),
    two passes; returns (means, stds)."""
    rows, cols = x.shape
    means = np.zeros(cols)
    stds = np.zeros(cols)
    for j in range(cols):
        s = 0.0
        c = 0
        for i in range(rows):
            if not math.isnan(x[i, j]):
                s += x[i, j]
                c += 1
        m = s / c
        ss = 0.0
        for i in range(rows):
            v = x[i, j]
            if not math.isnan(v):
                ss += (v - m) ** 2
        means[j] = m
        stds[j] = math.sqrt(ss / (c - 1))
    return means, stds


def welford_variance(x):
    """Welford's online mean/variance (sample variance) with min and max."""
    n = 0
    mean = 0.0
    m2 = 0.0
    lo = math.inf
    hi = -math.inf
    for i in range(len(x)):
        v = x[i]
        n += 1
        delta = v - mean
        mean += delta / n
        m2 += delta * (v - mean)
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    return mean, m2 / (n - 1), lo, hi


def covariance(x, y):
    """Two-pass sample covariance of two equally long arrays."""
    n = x.shape[0]
    mx = 0.0
    my = 0.0
    for i in range(n):
        mx += x[i]
        my += y[i]
    mx /= n
    my /= n
    c = 0.0
    for i in range(n):
        c += (x[i] - mx) * (y[i] - my)
    return c / (n - 1)


def pearson_f32(x, y):
    """Pearson correlation of float32 samples, one pass over sums (accumulating in
    float32, as NumPy scalars do once the first element is added)."""
    n = len(x)
    sx = 0.0
    sy = 0.0
    sxx = 0.0
    syy = 0.0
    sxy = 0.0
    for i in range(n):
        a = x[i]
        b = y[i]
        sx += a
        sy += b
        sxx += a * a
        syy += b * b
        sxy += a * b
    num = n * sxy - sx * sy
    den = math.sqrt(n * sxx - sx * sx) * math.sqrt(n * syy - sy * sy)
    return num / den


def binned_counts(x, lo, hi, nbins):
    """Histogram of float data into nbins equal bins on [lo, hi); values outside are
    counted in the under/overflow slots 0 and nbins + 1."""
    counts = np.zeros(nbins + 2, dtype=np.int64)
    width = (hi - lo) / nbins
    for i in range(len(x)):
        v = x[i]
        if v < lo:
            counts[0] += 1
        elif v >= hi:
            counts[nbins + 1] += 1
        else:
            b = int((v - lo) / width)
            counts[b + 1] += 1
    return counts


def rank_int_counts(labels, nclasses):
    """Class frequencies and the mode of an int32 label array."""
    counts = np.zeros(nclasses, dtype=np.int32)
    for i in range(labels.shape[0]):
        counts[labels[i]] += 1
    best = 0
    for c in range(1, nclasses):
        if counts[c] > counts[best]:
            best = c
    return counts, best


# -- inputs --------------------------------------------------------------------------


def _with_nans(seed, shape, frac):
    g = rng(seed)
    x = g.normal(3.0, 2.0, shape)
    x[g.random(shape) < frac] = np.nan
    return x


def _pair(seed, n, dtype=np.float64):
    g = rng(seed)
    x = g.normal(0.0, 1.0, n)
    y = 0.6 * x + 0.8 * g.normal(0.0, 1.0, n)
    return x.astype(dtype), y.astype(dtype)


CASES = [
    Case("moving_average", moving_average, lambda: (rng(501).normal(0, 1, 200000), 50), "stats"),
    Case("nanmean", nanmean, lambda: (_with_nans(502, 300000, 0.1),), "stats"),
    Case("nanstd_2d", nanstd_2d, lambda: (_with_nans(503, (400, 200), 0.05),), "stats"),
    Case("welford_variance", welford_variance, lambda: (rng(504).normal(5, 3, 200000),), "stats"),
    Case("covariance", covariance, lambda: _pair(505, 200000), "stats"),
    Case("pearson_f32", pearson_f32, lambda: _pair(506, 100000, np.float32), "stats"),
    Case("binned_counts", binned_counts, lambda: (rng(507).normal(0, 1, 300000), -3.0, 3.0, 60), "stats"),
    Case("rank_int_counts", rank_int_counts, lambda: (rng(508).integers(0, 50, 300000).astype(np.int32), 50), "stats"),
]
