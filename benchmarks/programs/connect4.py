"""A board-game search: connect-four on a 6x7 list-of-lists board, negamax with
alpha-beta pruning and a window-counting evaluation. Prints the moves of a
self-played game and the nodes searched."""

ROWS, COLS = 6, 7


class Board:
    def __init__(self):
        self.cells = [[0] * COLS for _ in range(ROWS)]
        self.heights = [0] * COLS

    def moves(self):
        order = (3, 2, 4, 1, 5, 0, 6)
        return [c for c in order if self.heights[c] < ROWS]

    def play(self, col, player):
        self.cells[self.heights[col]][col] = player
        self.heights[col] += 1

    def undo(self, col):
        self.heights[col] -= 1
        self.cells[self.heights[col]][col] = 0

    def windows(self):
        cells = self.cells
        for r in range(ROWS):
            for c in range(COLS - 3):
                yield [cells[r][c + k] for k in range(4)]
        for r in range(ROWS - 3):
            for c in range(COLS):
                yield [cells[r + k][c] for k in range(4)]
        for r in range(ROWS - 3):
            for c in range(COLS - 3):
                yield [cells[r + k][c + k] for k in range(4)]
                yield [cells[r + 3 - k][c + k] for k in range(4)]

    def score(self, player):
        total = 0
        for w in self.windows():
            mine, theirs = w.count(player), w.count(-player)
            if mine == 4:
                return 100000
            if theirs == 4:
                return -100000
            if theirs == 0:
                total += (0, 1, 4, 16)[mine]
            elif mine == 0:
                total -= (0, 1, 4, 16)[theirs]
        return total


class Searcher:
    def __init__(self):
        self.nodes = 0

    def negamax(self, board, depth, alpha, beta, player):
        self.nodes += 1
        value = board.score(player)
        if depth == 0 or abs(value) >= 100000:
            return value
        moves = board.moves()
        if not moves:
            return 0
        best = -10**9
        for col in moves:
            board.play(col, player)
            v = -self.negamax(board, depth - 1, -beta, -alpha, -player)
            board.undo(col)
            if v > best:
                best = v
            alpha = max(alpha, v)
            if alpha >= beta:
                break
        return best

    def choose(self, board, depth, player):
        best_col, best = None, -10**9
        for col in board.moves():
            board.play(col, player)
            v = -self.negamax(board, depth - 1, -10**9, 10**9, -player)
            board.undo(col)
            if v > best:
                best_col, best = col, v
        return best_col


board, searcher, player, played = Board(), Searcher(), 1, []
for turn in range(14):
    col = searcher.choose(board, 4, player)
    board.play(col, player)
    played.append(col)
    if abs(board.score(player)) >= 100000:
        break
    player = -player
print("moves", played)
print("nodes", searcher.nodes)
