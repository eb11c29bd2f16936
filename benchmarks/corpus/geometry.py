"""Computational-geometry kernels."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def points_in_polygon(px, py, vx, vy, inside):
    """Even-odd ray casting of many points against one polygon (vertex arrays vx, vy);
    writes 0/1 into the uint8 array `inside` and returns the count inside."""
    npts = len(px)
    nv = len(vx)
    count = 0
    for p in range(npts):
        x = px[p]
        y = py[p]
        c = False
        j = nv - 1
        for i in range(nv):
            yi = vy[i]
            yj = vy[j]
            if (yi > y) != (yj > y):
                xcross = (vx[j] - vx[i]) * (y - yi) / (yj - yi) + vx[i]
                if x < xcross:
                    c = not c
            j = i
        if c:
            inside[p] = 1
            count += 1
        else:
            inside[p] = 0
    return count


def haversine_km(lat1, lon1, lat2, lon2):
    """Great-circle distances (degrees in, km out) between paired points; returns the
    distances and their total."""
    n = lat1.shape[0]
    out = np.empty(n)
    r = 6371.0088
    total = 0.0
    for i in range(n):
        phi1 = math.radians(lat1[i])
        phi2 = math.radians(lat2[i])
        dphi = phi2 - phi1
        dlmb = math.radians(lon2[i] - lon1[i])
        a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
        d = 2 * r * math.asin(math.sqrt(a))
        out[i] = d
        total += d
    return out, total


def closest_pair_brute(xy):
    """Smallest pairwise distance among (n, 2) points, brute force; returns (distance,
    i, j)."""
    n = xy.shape[0]
    best = math.inf
    bi = -1
    bj = -1
    for i in range(n):
        xi = xy[i, 0]
        yi = xy[i, 1]
        for j in range(i + 1, n):
            d2 = (xy[j, 0] - xi) ** 2 + (xy[j, 1] - yi) ** 2
            if d2 < best:
                best = d2
                bi = i
                bj = j
    return math.sqrt(best), bi, bj


def mean_pairwise_distance_3d(pts):
    """Mean Euclidean distance over all pairs of (n, 3) float32 points (float64 sums)."""
    n = len(pts)
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = float(pts[i, 0]) - float(pts[j, 0])
            dy = float(pts[i, 1]) - float(pts[j, 1])
            dz = float(pts[i, 2]) - float(pts[j, 2])
            total += math.sqrt(dx**2 + dy**2 + dz**2)
    return total / (n * (n - 1) / 2)


def polygon_area(x, y):
    """Shoelace formula: signed area of a polygon given by vertex arrays; returns (area,
    perimeter)."""
    n = len(x)
    s = 0.0
    perim = 0.0
    for i in range(n):
        j = (i + 1) % n
        s += x[i] * y[j] - x[j] * y[i]
        perim += math.hypot(x[j] - x[i], y[j] - y[i])
    return 0.5 * s, perim


def polygon_areas_batch(offsets, xs, ys, out):
    """Shoelace areas of many polygons packed into flat coordinate arrays
    (offsets[k]:offsets[k+1] is polygon k); writes |area| into out."""
    npoly = offsets.shape[0] - 1
    for k in range(npoly):
        start = offsets[k]
        stop = offsets[k + 1]
        s = 0.0
        i = start
        while i < stop:
            j = i + 1
            if j == stop:
                j = start
            s += xs[i] * ys[j] - xs[j] * ys[i]
            i += 1
        out[k] = abs(s) * 0.5
    return out


# -- inputs --------------------------------------------------------------------------


def _star_polygon(n, r1, r2):
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    r = np.where(np.arange(n) % 2 == 0, r1, r2)
    return r * np.cos(t), r * np.sin(t)


def _pip_args():
    g = rng(1001)
    vx, vy = _star_polygon(60, 1.0, 0.45)
    m = 2500
    return g.uniform(-1.1, 1.1, m), g.uniform(-1.1, 1.1, m), vx, vy, np.zeros(m, dtype=np.uint8)


def _haversine_args():
    g = rng(1002)
    n = 60000
    return g.uniform(-80, 80, n), g.uniform(-180, 180, n), g.uniform(-80, 80, n), g.uniform(-180, 180, n)


def _polygon_args():
    t = np.linspace(0.0, 2 * np.pi, 150000, endpoint=False)
    r = 1.0 + 0.3 * np.sin(7 * t)
    return r * np.cos(t), r * np.sin(t)


def _batch_args():
    g = rng(1006)
    npoly = 5000
    sizes = g.integers(3, 40, npoly)
    offsets = np.zeros(npoly + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(sizes)
    total = int(offsets[-1])
    xs = np.empty(total)
    ys = np.empty(total)
    for k in range(npoly):
        m = sizes[k]
        t = np.sort(g.uniform(0, 2 * np.pi, m))
        r = g.uniform(0.5, 1.0, m)
        xs[offsets[k] : offsets[k + 1]] = r * np.cos(t) + g.uniform(-10, 10)
        ys[offsets[k] : offsets[k + 1]] = r * np.sin(t) + g.uniform(-10, 10)
    return offsets, xs, ys, np.zeros(npoly)


CASES = [
    Case("points_in_polygon", points_in_polygon, _pip_args, "geometry"),
    Case("haversine_km", haversine_km, _haversine_args, "geometry"),
    Case("closest_pair_brute", closest_pair_brute, lambda: (rng(1003).uniform(0, 100, (600, 2)),), "geometry"),
    Case("mean_pairwise_distance_3d", mean_pairwise_distance_3d, lambda: (rng(1004).uniform(0, 1, (400, 3)).astype(np.float32),), "geometry"),
    Case("polygon_area", polygon_area, _polygon_args, "geometry"),
    Case("polygon_areas_batch", polygon_areas_batch, _batch_args, "geometry"),
]
