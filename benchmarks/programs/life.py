"""Conway's game of life two ways: a list-of-lists grid with neighbour counting, and a
set of live cells. Prints the population after each block of generations."""


class Grid:
    def __init__(self, rows, cols, live):
        self.rows, self.cols = rows, cols
        self.cells = [[0] * cols for _ in range(rows)]
        for r, c in live:
            self.cells[r][c] = 1

    def neighbours(self, r, c):
        total = 0
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if dr or dc:
                    total += self.cells[(r + dr) % self.rows][(c + dc) % self.cols]
        return total

    def step(self):
        nxt = [[0] * self.cols for _ in range(self.rows)]
        for r in range(self.rows):
            for c in range(self.cols):
                n = self.neighbours(r, c)
                nxt[r][c] = 1 if n == 3 or (n == 2 and self.cells[r][c]) else 0
        self.cells = nxt

    def population(self):
        return sum(map(sum, self.cells))


def sparse_step(live):
    counts = {}
    for r, c in live:
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if dr or dc:
                    key = (r + dr, c + dc)
                    counts[key] = counts.get(key, 0) + 1
    return {cell for cell, n in counts.items() if n == 3 or (n == 2 and cell in live)}


state, start = 99, []
for r in range(64):
    for c in range(64):
        state = (state * 69069 + 1) % 2**32
        if state >> 30 == 0:
            start.append((r, c))
grid = Grid(64, 64, start)
live = set(start)
for block in range(6):
    for _ in range(10):
        grid.step()
        live = sparse_step(live)
    print(block, grid.population(), len(live))
