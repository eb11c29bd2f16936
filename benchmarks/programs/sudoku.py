"""A constraint solver: sudoku by constraint propagation (sets of candidates per cell,
peers, naked singles) and depth-first search. Prints the solved grids' first rows."""

ROWS = "ABCDEFGHI"
COLS = "123456789"
CELLS = [r + c for r in ROWS for c in COLS]
UNITS = (
    [[r + c for c in COLS] for r in ROWS]
    + [[r + c for r in ROWS] for c in COLS]
    + [[r + c for r in rs for c in cs] for rs in ("ABC", "DEF", "GHI") for cs in ("123", "456", "789")]
)
UNITS_OF = {cell: [u for u in UNITS if cell in u] for cell in CELLS}
PEERS = {cell: set(sum(UNITS_OF[cell], [])) - {cell} for cell in CELLS}


def assign(values, cell, digit):
    for other in values[cell] - {digit}:
        if not eliminate(values, cell, other):
            return False
    return True


def eliminate(values, cell, digit):
    if digit not in values[cell]:
        return True
    values[cell] = values[cell] - {digit}
    if not values[cell]:
        return False
    if len(values[cell]) == 1:
        (last,) = values[cell]
        if not all(eliminate(values, peer, last) for peer in PEERS[cell]):
            return False
    for unit in UNITS_OF[cell]:
        places = [c for c in unit if digit in values[c]]
        if not places:
            return False
        if len(places) == 1 and not assign(values, places[0], digit):
            return False
    return True


def parse(grid):
    values = {cell: set(COLS) for cell in CELLS}
    for cell, ch in zip(CELLS, grid):
        if ch in COLS and not assign(values, cell, ch):
            return None
    return values


def search(values):
    if values is None:
        return None
    if all(len(values[c]) == 1 for c in CELLS):
        return values
    size, cell = min((len(values[c]), c) for c in CELLS if len(values[c]) > 1)
    for digit in sorted(values[cell]):
        attempt = {c: set(v) for c, v in values.items()}
        if assign(attempt, cell, digit):
            found = search(attempt)
            if found:
                return found
    return None


PUZZLES = [
    "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......",
    "52...6.........7.13...........4..8..6......5...........418.........3..2...87.....",
    "6.....8.3.4.7.................5.4.7.3..2.....1.6.......2.....5.....8.6......1....",
    "48.3............71.2.......7.5....6....2..8.............1.76...3.....4......5....",
    "....14....3....2...7..........9...3.6.1.............8.2.....1.4....5.6.....7.8...",
]

for puzzle in PUZZLES * 6:
    solved = search(parse(puzzle))
    print("".join(min(solved[c]) for c in CELLS[:18]))
