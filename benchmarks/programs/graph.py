"""Shortest paths on a generated road graph: adjacency dicts, Dijkstra with a heap,
breadth-first search for hop counts, and connected components. Prints distances."""
import heapq


class Graph:
    def __init__(self):
        self.adj = {}

    def add_edge(self, a, b, w):
        self.adj.setdefault(a, []).append((b, w))
        self.adj.setdefault(b, []).append((a, w))

    def dijkstra(self, source):
        dist = {source: 0}
        heap = [(0, source)]
        while heap:
            d, node = heapq.heappop(heap)
            if d > dist[node]:
                continue
            for nxt, w in self.adj.get(node, ()):
                nd = d + w
                if nd < dist.get(nxt, 1 << 60):
                    dist[nxt] = nd
                    heapq.heappush(heap, (nd, nxt))
        return dist

    def hops(self, source):
        seen = {source: 0}
        frontier = [source]
        while frontier:
            nxt_frontier = []
            for node in frontier:
                for nxt, _ in self.adj.get(node, ()):
                    if nxt not in seen:
                        seen[nxt] = seen[node] + 1
                        nxt_frontier.append(nxt)
            frontier = nxt_frontier
        return seen

    def components(self):
        comp, count = {}, 0
        for start in self.adj:
            if start in comp:
                continue
            count += 1
            stack = [start]
            comp[start] = count
            while stack:
                node = stack.pop()
                for nxt, _ in self.adj[node]:
                    if nxt not in comp:
                        comp[nxt] = count
                        stack.append(nxt)
        return count


def grid_graph(n, seed):
    g, state = Graph(), seed
    for i in range(n):
        for j in range(n):
            for di, dj in ((0, 1), (1, 0)):
                if i + di < n and j + dj < n:
                    state = (state * 1103515245 + 12345) % 2**31
                    if state % 10:
                        g.add_edge((i, j), (i + di, j + dj), 1 + state % 9)
    return g


g = grid_graph(200, 7)
for source in ((0, 0), (100, 100), (199, 0)):
    dist = g.dijkstra(source)
    hops = g.hops(source)
    print(source, len(dist), max(dist.values()), sum(dist.values()) % 1000003, max(hops.values()))
print("components", g.components())
