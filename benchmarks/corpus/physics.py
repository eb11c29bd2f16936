"""Physics kernels: particles, stencils, lattice models."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def nbody_step(pos, vel, mass, dt, nsteps, softening):
    """Direct-summation gravity, leapfrog-ish update. Positions and velocities are
    (n, 3) arrays updated in place; returns the final kinetic energy."""
    n = pos.shape[0]
    acc = np.zeros((n, 3))
    for step in range(nsteps):
        for i in range(n):
            acc[i, 0] = 0.0
            acc[i, 1] = 0.0
            acc[i, 2] = 0.0
        for i in range(n):
            xi = pos[i, 0]
            yi = pos[i, 1]
            zi = pos[i, 2]
            for j in range(i + 1, n):
                dx = pos[j, 0] - xi
                dy = pos[j, 1] - yi
                dz = pos[j, 2] - zi
                r2 = dx * dx + dy * dy + dz * dz + softening * softening
                inv_r3 = 1.0 / (r2 * math.sqrt(r2))
                fi = mass[j] * inv_r3
                fj = mass[i] * inv_r3
                acc[i, 0] += dx * fi
                acc[i, 1] += dy * fi
                acc[i, 2] += dz * fi
                acc[j, 0] -= dx * fj
                acc[j, 1] -= dy * fj
                acc[j, 2] -= dz * fj
        for i in range(n):
            for k in range(3):
                vel[i, k] += dt * acc[i, k]
                pos[i, k] += dt * vel[i, k]
    ke = 0.0
    for i in range(n):
        v2 = vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2
        ke += 0.5 * mass[i] * v2
    return ke


def heat_1d(u0, alpha, nsteps):
    """Explicit FTCS for u_t = alpha u_xx with fixed ends; returns the final profile."""
    n = len(u0)
    a = u0.copy()
    b = np.empty_like(a)
    b[0] = a[0]
    b[n - 1] = a[n - 1]
    for t in range(nsteps):
        for i in range(1, n - 1):
            b[i] = a[i] + alpha * (a[i - 1] - 2.0 * a[i] + a[i + 1])
        a, b = b, a
    return a


def heat_2d(grid, alpha, nsteps):
    """5-point Laplacian diffusion on a 2-D plate, Dirichlet boundary (the border of
    `grid` is kept). Ping-pongs between two buffers; returns (field, total heat)."""
    ny, nx = grid.shape
    cur = grid.copy()
    nxt = grid.copy()
    for t in range(nsteps):
        for i in range(1, ny - 1):
            for j in range(1, nx - 1):
                lap = cur[i - 1, j] + cur[i + 1, j] + cur[i, j - 1] + cur[i, j + 1] - 4.0 * cur[i, j]
                nxt[i, j] = cur[i, j] + alpha * lap
        cur, nxt = nxt, cur
    total = 0.0
    for i in range(ny):
        for j in range(nx):
            total += cur[i, j]
    return cur, total


def wave_1d(u_prev, u_curr, c, dx, dt, nsteps):
    """Leapfrog scheme for the 1-D wave equation with fixed ends; three buffers rotate.
    Returns the final displacement and a discrete energy."""
    n = u_curr.shape[0]
    r2 = (c * dt / dx) ** 2
    u_next = np.zeros(n)
    for t in range(nsteps):
        for i in range(1, n - 1):
            u_next[i] = 2.0 * u_curr[i] - u_prev[i] + r2 * (u_curr[i + 1] - 2.0 * u_curr[i] + u_curr[i - 1])
        u_next[0] = 0.0
        u_next[n - 1] = 0.0
        u_prev, u_curr, u_next = u_curr, u_next, u_prev
    energy = 0.0
    for i in range(1, n):
        vel = (u_curr[i] - u_prev[i]) / dt
        grad = (u_curr[i] - u_curr[i - 1]) / dx
        energy += 0.5 * (vel * vel + c * c * grad * grad) * dx
    return u_curr, energy


def wave_2d(u, v, c2dt2, nsteps):
    """2-D membrane: u is the displacement, v the velocity (both updated in place),
    semi-implicit Euler with a 5-point Laplacian and zero boundary."""
    rows = u.shape[0]
    cols = u.shape[1]
    for t in range(nsteps):
        for i in range(1, rows - 1):
            for j in range(1, cols - 1):
                v[i, j] += c2dt2 * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4 * u[i, j])
        for i in range(1, rows - 1):
            for j in range(1, cols - 1):
                u[i, j] += v[i, j]
    peak = 0.0
    for i in range(rows):
        for j in range(cols):
            if abs(u[i, j]) > peak:
                peak = abs(u[i, j])
    return peak


def ising_sweeps(spins, beta, nsweeps, seed):
    """Metropolis sweeps of the 2-D Ising model (J=1, periodic), int32 spins updated in
    place. Random numbers from a 64-bit LCG (Knuth's MMIX constants), top 53 bits.
    Returns (magnetisation, accepted flips, final RNG state)."""
    L = spins.shape[0]
    state = seed
    accepted = 0
    for sweep in range(nsweeps):
        for i in range(L):
            for j in range(L):
                s = spins[i, j]
                nb = spins[(i + 1) % L, j] + spins[(i - 1) % L, j] + spins[i, (j + 1) % L] + spins[i, (j - 1) % L]
                dE = 2 * s * nb
                state = (state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
                u = (state >> 11) * (1.0 / 9007199254740992.0)
                if dE <= 0 or u < math.exp(-beta * dE):
                    spins[i, j] = -s
                    accepted += 1
    m = 0
    for i in range(L):
        for j in range(L):
            m += spins[i, j]
    return m, accepted, state


def lj_forces(pos, box, rcut, forces):
    """Lennard-Jones (epsilon = sigma = 1) forces with the minimum-image convention in a
    cubic periodic box, written into `forces`; returns the potential energy."""
    n = pos.shape[0]
    rc2 = rcut * rcut
    for i in range(n):
        forces[i, 0] = 0.0
        forces[i, 1] = 0.0
        forces[i, 2] = 0.0
    epot = 0.0
    for i in range(n - 1):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            dx = dx - box * round(dx / box)
            dy = dy - box * round(dy / box)
            dz = dz - box * round(dz / box)
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < rc2:
                inv2 = 1.0 / r2
                inv6 = inv2 * inv2 * inv2
                epot += 4.0 * inv6 * (inv6 - 1.0)
                fmag = 24.0 * inv2 * inv6 * (2.0 * inv6 - 1.0)
                forces[i, 0] += fmag * dx
                forces[i, 1] += fmag * dy
                forces[i, 2] += fmag * dz
                forces[j, 0] -= fmag * dx
                forces[j, 1] -= fmag * dy
                forces[j, 2] -= fmag * dz
    return epot


def lorenz_rk4(x, y, z, sigma, rho, beta, dt, nsteps):
    """Classical RK4 on the Lorenz system, scalars only; returns the end point and the
    time-average of z."""
    zsum = 0.0
    for _ in range(nsteps):
        k1x = sigma * (y - x)
        k1y = x * (rho - z) - y
        k1z = x * y - beta * z
        x2 = x + 0.5 * dt * k1x
        y2 = y + 0.5 * dt * k1y
        z2 = z + 0.5 * dt * k1z
        k2x = sigma * (y2 - x2)
        k2y = x2 * (rho - z2) - y2
        k2z = x2 * y2 - beta * z2
        x3 = x + 0.5 * dt * k2x
        y3 = y + 0.5 * dt * k2y
        z3 = z + 0.5 * dt * k2z
        k3x = sigma * (y3 - x3)
        k3y = x3 * (rho - z3) - y3
        k3z = x3 * y3 - beta * z3
        x4 = x + dt * k3x
        y4 = y + dt * k3y
        z4 = z + dt * k3z
        k4x = sigma * (y4 - x4)
        k4y = x4 * (rho - z4) - y4
        k4z = x4 * y4 - beta * z4
        x += dt / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x)
        y += dt / 6.0 * (k1y + 2 * k2y + 2 * k3y + k4y)
        z += dt / 6.0 * (k1z + 2 * k2z + 2 * k3z + k4z)
        zsum += z
    return x, y, z, zsum / nsteps


# -- inputs --------------------------------------------------------------------------


def _nbody_args():
    g = rng(101)
    n = 96
    pos = g.standard_normal((n, 3))
    vel = g.standard_normal((n, 3)) * 0.1
    mass = g.uniform(0.5, 1.5, n)
    return pos, vel, mass, 1e-3, 6, 0.05


def _heat_1d_args():
    n = 4000
    x = np.linspace(0.0, 1.0, n)
    u = np.sin(math.pi * x) + 0.2 * np.sin(7 * math.pi * x)
    return u, 0.45, 40


def _heat_2d_args():
    g = rng(102)
    grid = np.zeros((96, 96))
    grid[0, :] = 100.0
    grid[:, 0] = 50.0
    grid[30:60, 30:60] = g.uniform(0.0, 80.0, (30, 30))
    return grid, 0.2, 20


def _wave_1d_args():
    n = 2000
    x = np.linspace(0.0, 1.0, n)
    u0 = np.exp(-200.0 * (x - 0.3) ** 2)
    u0[0] = 0.0
    u0[-1] = 0.0
    return u0.copy(), u0.copy(), 1.0, 1.0 / (n - 1), 0.4 / (n - 1), 60


def _wave_2d_args():
    n = 80
    y, x = np.mgrid[0:n, 0:n] / (n - 1.0)
    u = np.exp(-100.0 * ((x - 0.5) ** 2 + (y - 0.4) ** 2))
    u[0, :] = u[-1, :] = u[:, 0] = u[:, -1] = 0.0
    return u, np.zeros((n, n)), 0.2, 12


def _ising_args():
    g = rng(103)
    L = 64
    spins = np.where(g.random((L, L)) < 0.5, -1, 1).astype(np.int32)
    return spins, 0.44, 10, 12345


def _lj_args():
    g = rng(104)
    n = 216
    box = 7.0
    # a jittered cubic lattice: no two particles start on top of each other
    k = 6
    a = box / k
    pts = np.array([[i, j, l] for i in range(k) for j in range(k) for l in range(k)], dtype=np.float64) * a
    pts += g.uniform(-0.1, 0.1, pts.shape)
    return pts[:n].copy(), box, 2.5, np.zeros((n, 3))


CASES = [
    Case("nbody_step", nbody_step, _nbody_args, "physics"),
    Case("heat_1d", heat_1d, _heat_1d_args, "physics"),
    Case("heat_2d", heat_2d, _heat_2d_args, "physics"),
    Case("wave_1d", wave_1d, _wave_1d_args, "physics"),
    Case("wave_2d", wave_2d, _wave_2d_args, "physics", fresh_args=True),
    Case("ising_sweeps", ising_sweeps, _ising_args, "physics", fresh_args=True),
    Case("lj_forces", lj_forces, _lj_args, "physics"),
    Case("lorenz_rk4", lorenz_rk4, lambda: (1.0, 1.0, 1.0, 10.0, 28.0, 8.0 / 3.0, 0.001, 40000), "physics"),
]
