"""Signal-processing kernels: filters, FFT, correlation."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def fir_filter(x, taps):
    """Direct-form FIR filter (zero initial state); returns y with len(y) == len(x)."""
    n = len(x)
    m = len(taps)
    y = np.zeros(n)
    for i in range(n):
        acc = 0.0
        kmax = min(m, i + 1)
        for k in range(kmax):
            acc += taps[k] * x[i - k]
        y[i] = acc
    return y


def biquad_cascade(x, coeffs, y):
    """A cascade of IIR biquads, transposed direct form II, one row of `coeffs` per
    section: (b0, b1, b2, a1, a2) with a0 = 1. Writes into y; returns the output
    energy."""
    nsec = coeffs.shape[0]
    n = x.shape[0]
    for i in range(n):
        y[i] = x[i]
    for s in range(nsec):
        b0 = coeffs[s, 0]
        b1 = coeffs[s, 1]
        b2 = coeffs[s, 2]
        a1 = coeffs[s, 3]
        a2 = coeffs[s, 4]
        z1 = 0.0
        z2 = 0.0
        for i in range(n):
            xi = y[i]
            yi = b0 * xi + z1
            z1 = b1 * xi - a1 * yi + z2
            z2 = b2 * xi - a2 * yi
            y[i] = yi
    energy = 0.0
    for i in range(n):
        energy += y[i] * y[i]
    return energy


def fft_radix2(re, im):
    """In-place iterative radix-2 Cooley-Tukey FFT on separate real and imaginary
    float64 arrays (length a power of two): bit-reversal permutation, then butterflies
    with twiddles from a recurrence per stage."""
    n = re.shape[0]
    # bit reversal
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j ^= bit
        if i < j:
            t = re[i]
            re[i] = re[j]
            re[j] = t
            t = im[i]
            im[i] = im[j]
            im[j] = t
    size = 2
    while size <= n:
        half = size // 2
        theta = -2.0 * math.pi / size
        wpr = math.cos(theta)
        wpi = math.sin(theta)
        wr = 1.0
        wi = 0.0
        for k in range(half):
            for start in range(0, n, size):
                a = start + k
                b = a + half
                tr = wr * re[b] - wi * im[b]
                ti = wr * im[b] + wi * re[b]
                re[b] = re[a] - tr
                im[b] = im[a] - ti
                re[a] = re[a] + tr
                im[a] = im[a] + ti
            tmp = wr
            wr = wr * wpr - wi * wpi
            wi = tmp * wpi + wi * wpr
        size *= 2
    return re, im


def autocorrelation(x, maxlag):
    """Biased sample autocorrelation r[k] / r[0] for lags 0..maxlag-1 of a mean-removed
    series."""
    n = len(x)
    mean = 0.0
    for i in range(n):
        mean += x[i]
    mean /= n
    r = np.zeros(maxlag)
    for k in range(maxlag):
        s = 0.0
        for i in range(n - k):
            s += (x[i] - mean) * (x[i + k] - mean)
        r[k] = s / n
    r0 = r[0]
    for k in range(maxlag):
        r[k] = r[k] / r0
    return r


def goertzel_power(x, freqs, fs):
    """Goertzel algorithm: signal power at each frequency in `freqs` (float32 samples,
    float64 arithmetic)."""
    n = x.shape[0]
    nf = freqs.shape[0]
    out = np.empty(nf)
    for f in range(nf):
        k = int(0.5 + n * freqs[f] / fs)
        w = 2.0 * math.pi * k / n
        coeff = 2.0 * math.cos(w)
        s_prev = 0.0
        s_prev2 = 0.0
        for i in range(n):
            s = float(x[i]) + coeff * s_prev - s_prev2
            s_prev2 = s_prev
            s_prev = s
        out[f] = s_prev2 * s_prev2 + s_prev * s_prev - coeff * s_prev * s_prev2
    return out


def envelope_follower(x, attack, release):
    """Peak envelope follower (one-pole smoothing with separate attack and release)
    with a while loop; returns the envelope and its maximum."""
    n = len(x)
    env = np.empty(n, dtype=np.float32)
    level = 0.0
    peak = 0.0
    i = 0
    while i < n:
        v = abs(x[i])
        if v > level:
            level = attack * level + (1.0 - attack) * v
        else:
            level = release * level + (1.0 - release) * v
        env[i] = level
        if level > peak:
            peak = level
        i += 1
    return env, peak


# -- inputs --------------------------------------------------------------------------


def _signal(seed, n):
    g = rng(seed)
    t = np.arange(n) / 8000.0
    return np.sin(2 * np.pi * 440 * t) + 0.5 * np.sin(2 * np.pi * 1250 * t) + 0.3 * g.standard_normal(n)


def _fir_args():
    m = 31
    k = np.arange(m) - (m - 1) / 2
    taps = np.sinc(k * 0.25) * np.hamming(m) * 0.25
    return _signal(301, 6000), taps


def _biquad_args():
    # two low-pass sections (RBJ cookbook, fc = 1 kHz at 8 kHz, Q = 0.707), one peaking EQ
    def lowpass(fc, fs, q):
        w0 = 2 * math.pi * fc / fs
        alpha = math.sin(w0) / (2 * q)
        a0 = 1 + alpha
        c = math.cos(w0)
        return [(1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0]

    coeffs = np.array([lowpass(1000, 8000, 0.707), lowpass(1500, 8000, 1.2), lowpass(3000, 8000, 0.5)])
    x = _signal(302, 40000)
    return x, coeffs, np.zeros_like(x)


def _fft_args():
    n = 1 << 13
    x = _signal(303, n)
    return x.copy(), np.zeros(n)


def _goertzel_args():
    x = _signal(305, 6000).astype(np.float32)
    freqs = np.linspace(100.0, 3900.0, 40)
    return x, freqs, 8000.0


CASES = [
    Case("fir_filter", fir_filter, _fir_args, "signals"),
    Case("biquad_cascade", biquad_cascade, _biquad_args, "signals"),
    Case("fft_radix2", fft_radix2, _fft_args, "signals", fresh_args=True),
    Case("autocorrelation", autocorrelation, lambda: (_signal(304, 6000), 40), "signals"),
    Case("goertzel_power", goertzel_power, _goertzel_args, "signals"),
    Case("envelope_follower", envelope_follower, lambda: (_signal(306, 100000), 0.9, 0.999), "signals"),
]
