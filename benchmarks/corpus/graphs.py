"""Graph algorithms on dense matrices and CSR arrays."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def floyd_warshall(dist):
    """All-pairs shortest paths in place on a dense float matrix (inf = no edge);
    returns the sum of the finite distances."""
    n = dist.shape[0]
    for k in range(n):
        for i in range(n):
            dik = dist[i, k]
            if dik == math.inf:
                continue
            for j in range(n):
                nd = dik + dist[k, j]
                if nd < dist[i, j]:
                    dist[i, j] = nd
    total = 0.0
    for i in range(n):
        for j in range(n):
            if dist[i, j] < math.inf:
                total += dist[i, j]
    return total


def bfs_csr(indptr, indices, source):
    """Breadth-first search over CSR adjacency (int64 indptr/indices) with an explicit
    array queue; returns (levels, reached count, eccentricity of source)."""
    n = len(indptr) - 1
    level = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    queue[tail] = source
    tail += 1
    level[source] = 0
    while head < tail:
        u = queue[head]
        head += 1
        lu = level[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if level[v] < 0:
                level[v] = lu + 1
                queue[tail] = v
                tail += 1
    return level, tail, level[queue[tail - 1]]


def dijkstra_dense(w, source):
    """O(n^2) Dijkstra on a dense weight matrix (inf = no edge), with a visited mask;
    returns distances and predecessors."""
    n = w.shape[0]
    dist = np.full(n, math.inf)
    pred = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, dtype=np.uint8)
    dist[source] = 0.0
    for _ in range(n):
        u = -1
        best = math.inf
        for v in range(n):
            if done[v] == 0 and dist[v] < best:
                best = dist[v]
                u = v
        if u < 0:
            break
        done[u] = 1
        for v in range(n):
            wuv = w[u, v]
            if wuv < math.inf and done[v] == 0:
                alt = best + wuv
                if alt < dist[v]:
                    dist[v] = alt
                    pred[v] = u
    return dist, pred


def connected_components(n, src, dst):
    """Union-find with path halving and union by size over an int32 edge list;
    returns (number of components, size of the largest)."""
    parent = np.arange(n, dtype=np.int64)
    size = np.ones(n, dtype=np.int64)
    ncomp = n
    for e in range(len(src)):
        a = src[e]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        b = dst[e]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            if size[a] < size[b]:
                a, b = b, a
            parent[b] = a
            size[a] += size[b]
            ncomp -= 1
    largest = 0
    for v in range(n):
        if parent[v] == v and size[v] > largest:
            largest = size[v]
    return ncomp, largest


def pagerank_csr(indptr, indices, outdeg, damping, iters):
    """PageRank by power iteration on in-link CSR (row v lists the sources of v's
    in-links); dangling nodes spread uniformly."""
    n = indptr.shape[0] - 1
    rank = np.full(n, 1.0 / n)
    new = np.empty(n)
    for it in range(iters):
        dangling = 0.0
        for v in range(n):
            if outdeg[v] == 0:
                dangling += rank[v]
        base = (1.0 - damping) / n + damping * dangling / n
        for v in range(n):
            s = 0.0
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                s += rank[u] / outdeg[u]
            new[v] = base + damping * s
        rank, new = new, rank
    return rank


# -- inputs --------------------------------------------------------------------------


def _dense_graph(seed, n, p):
    g = rng(seed)
    w = g.uniform(1.0, 10.0, (n, n))
    w[g.random((n, n)) > p] = np.inf
    np.fill_diagonal(w, 0.0)
    return w


def _random_csr(seed, n, deg):
    g = rng(seed)
    src = g.integers(0, n, n * deg)
    dst = g.integers(0, n, n * deg)
    order = np.argsort(src, kind="stable")
    src = src[order]
    dst = dst[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, src + 1, 1)
    indptr = np.cumsum(indptr).astype(np.int64)
    return indptr, dst.astype(np.int64), src, dst


def _bfs_args():
    indptr, indices, _, _ = _random_csr(702, 60000, 6)
    return indptr, indices, 0


def _cc_args():
    g = rng(704)
    n = 100000
    m = 70000
    return n, g.integers(0, n, m).astype(np.int32), g.integers(0, n, m).astype(np.int32)


def _pagerank_args():
    n = 20000
    indptr_out, _, src, dst = _random_csr(705, n, 4)
    outdeg = np.diff(indptr_out).astype(np.int64)
    order = np.argsort(dst, kind="stable")
    s_in = src[order]
    d_in = dst[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, d_in + 1, 1)
    return np.cumsum(indptr).astype(np.int64), s_in.astype(np.int64), outdeg, 0.85, 5


CASES = [
    Case("floyd_warshall", floyd_warshall, lambda: (_dense_graph(701, 64, 0.15),), "graphs", fresh_args=True),
    Case("bfs_csr", bfs_csr, _bfs_args, "graphs"),
    Case("dijkstra_dense", dijkstra_dense, lambda: (_dense_graph(703, 300, 0.1), 0), "graphs"),
    Case("connected_components", connected_components, _cc_args, "graphs"),
    Case("pagerank_csr", pagerank_csr, _pagerank_args, "graphs"),
]
