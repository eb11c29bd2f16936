"""Quantitative-finance kernels: closed-form pricing, Monte Carlo, lattices."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def black_scholes_calls(spot, strike, tau, rate, vol, out):
    """European call prices, Black-Scholes, N(x) from math.erf; writes `out` and
    returns the book's total value."""
    n = len(spot)
    inv_sqrt2 = 1.0 / math.sqrt(2.0)
    total = 0.0
    for i in range(n):
        s = spot[i]
        k = strike[i]
        t = tau[i]
        sig = vol[i]
        sqrt_t = math.sqrt(t)
        d1 = (math.log(s / k) + (rate + 0.5 * sig * sig) * t) / (sig * sqrt_t)
        d2 = d1 - sig * sqrt_t
        nd1 = 0.5 * (1.0 + math.erf(d1 * inv_sqrt2))
        nd2 = 0.5 * (1.0 + math.erf(d2 * inv_sqrt2))
        price = s * nd1 - k * math.exp(-rate * t) * nd2
        out[i] = price
        total += price
    return total


def black_scholes_puts_erfc(spot, strike, tau, rate, vol):
    """European puts with N(-x) = erfc(x / sqrt 2) / 2; returns a new array."""
    n = spot.shape[0]
    out = np.empty(n)
    for i in range(n):
        sq = vol * math.sqrt(tau[i])
        d1 = (math.log(spot[i] / strike[i]) + (rate + vol**2 / 2) * tau[i]) / sq
        d2 = d1 - sq
        out[i] = strike[i] * math.exp(-rate * tau[i]) * 0.5 * math.erfc(d2 / math.sqrt(2)) - spot[i] * 0.5 * math.erfc(
            d1 / math.sqrt(2)
        )
    return out


def mc_asian_call(s0, strike, rate, vol, horizon, nsteps, npaths, seed):
    """Arithmetic-average Asian call by Monte Carlo, GBM paths. Normals from Box-Muller
    on uniforms from xorshift64 (64-bit masked Python ints). Returns (price, stderr)."""
    mask = 0xFFFFFFFFFFFFFFFF
    x = seed
    dt = horizon / nsteps
    drift = (rate - 0.5 * vol * vol) * dt
    diff = vol * math.sqrt(dt)
    disc = math.exp(-rate * horizon)
    acc = 0.0
    acc2 = 0.0
    for p in range(npaths):
        s = s0
        running = 0.0
        spare = 0.0
        have_spare = False
        for k in range(nsteps):
            if have_spare:
                z = spare
                have_spare = False
            else:
                x ^= (x << 13) & mask
                x ^= x >> 7
                x ^= (x << 17) & mask
                u1 = ((x >> 11) + 1) * (1.0 / 9007199254740993.0)
                x ^= (x << 13) & mask
                x ^= x >> 7
                x ^= (x << 17) & mask
                u2 = (x >> 11) * (1.0 / 9007199254740992.0)
                r = math.sqrt(-2.0 * math.log(u1))
                z = r * math.cos(2.0 * math.pi * u2)
                spare = r * math.sin(2.0 * math.pi * u2)
                have_spare = True
            s = s * math.exp(drift + diff * z)
            running += s
        payoff = max(running / nsteps - strike, 0.0)
        acc += payoff
        acc2 += payoff * payoff
    mean = acc / npaths
    var = acc2 / npaths - mean * mean
    return disc * mean, disc * math.sqrt(var / npaths)


def mc_paths_lcg(paths, s0, mu, sigma, dt, seed):
    """Fill a (npaths, nsteps + 1) array with GBM paths; uniforms from a 64-bit LCG,
    normals from Box-Muller (one per pair: the textbook form). Returns the RNG state."""
    npaths, ncols = paths.shape
    state = seed
    a = (mu - 0.5 * sigma**2) * dt
    b = sigma * math.sqrt(dt)
    for p in range(npaths):
        paths[p, 0] = s0
        for t in range(1, ncols):
            state = (state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
            u1 = ((state >> 11) + 0.5) / 9007199254740992.0
            state = (state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
            u2 = ((state >> 11) + 0.5) / 9007199254740992.0
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
            paths[p, t] = paths[p, t - 1] * math.exp(a + b * z)
    return state


def american_put_binomial(s0, strike, rate, vol, horizon, nsteps):
    """American put on a Cox-Ross-Rubinstein tree with early exercise."""
    dt = horizon / nsteps
    u = math.exp(vol * math.sqrt(dt))
    d = 1.0 / u
    disc = math.exp(-rate * dt)
    p = (math.exp(rate * dt) - d) / (u - d)
    q = 1.0 - p
    values = np.empty(nsteps + 1)
    for i in range(nsteps + 1):
        st = s0 * u ** (nsteps - i) * d**i
        values[i] = max(strike - st, 0.0)
    for step in range(nsteps - 1, -1, -1):
        for i in range(step + 1):
            cont = disc * (p * values[i] + q * values[i + 1])
            st = s0 * u ** (step - i) * d**i
            exercise = strike - st
            values[i] = cont if cont > exercise else exercise
    return values[0]


def max_drawdown(prices):
    """Largest peak-to-trough loss of a price series: (fraction, peak index, trough
    index)."""
    n = len(prices)
    peak = prices[0]
    peak_i = 0
    best = 0.0
    best_peak = 0
    best_trough = 0
    for i in range(1, n):
        p = prices[i]
        if p > peak:
            peak = p
            peak_i = i
        else:
            dd = (peak - p) / peak
            if dd > best:
                best = dd
                best_peak = peak_i
                best_trough = i
    return best, best_peak, best_trough


def ewma_volatility(returns, lam, out):
    """RiskMetrics EWMA variance recursion (float32 returns), annualised volatility
    written into out (float64)."""
    n = returns.shape[0]
    var = 0.0
    for i in range(20):
        var += returns[i] * returns[i]
    var /= 20
    for i in range(n):
        r = returns[i]
        var = lam * var + (1.0 - lam) * r * r
        out[i] = math.sqrt(252.0 * var)
    return out


# -- inputs --------------------------------------------------------------------------


def _bs_args(seed, n):
    g = rng(seed)
    spot = g.uniform(50.0, 150.0, n)
    strike = g.uniform(60.0, 140.0, n)
    tau = g.uniform(0.05, 2.0, n)
    vol = g.uniform(0.1, 0.6, n)
    return spot, strike, tau, 0.03, vol


def _bs_call_args():
    spot, strike, tau, rate, vol = _bs_args(401, 40000)
    return spot, strike, tau, rate, vol, np.zeros(40000)


def _bs_put_args():
    spot, strike, tau, rate, _ = _bs_args(402, 40000)
    return spot, strike, tau, rate, 0.25


def _prices(seed, n):
    g = rng(seed)
    return 100.0 * np.exp(np.cumsum(g.normal(0.0002, 0.01, n)))


def _ewma_args():
    g = rng(405)
    r = g.standard_t(4, 100000).astype(np.float32) * np.float32(0.01)
    return r, 0.94, np.zeros(100000)


CASES = [
    Case("black_scholes_calls", black_scholes_calls, _bs_call_args, "finance"),
    Case("black_scholes_puts_erfc", black_scholes_puts_erfc, _bs_put_args, "finance"),
    Case("mc_asian_call", mc_asian_call, lambda: (100.0, 100.0, 0.03, 0.25, 1.0, 64, 800, 88172645463325252), "finance"),
    Case("mc_paths_lcg", mc_paths_lcg, lambda: (np.zeros((200, 201)), 100.0, 0.05, 0.2, 1.0 / 200, 42), "finance"),
    Case("american_put_binomial", american_put_binomial, lambda: (100.0, 105.0, 0.03, 0.3, 1.0, 500), "finance"),
    Case("max_drawdown", max_drawdown, lambda: (_prices(404, 300000),), "finance"),
    Case("ewma_volatility", ewma_volatility, _ewma_args, "finance"),
]
