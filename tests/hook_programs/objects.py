"""Hot functions that take instances of a class: their arguments alone tell that they
cannot compile, so the hook gives up on them without loading the compiler or LLVM."""
import sys


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def manhattan(p, q):
    total = 0
    for a, b in ((p.x, q.x), (p.y, q.y)):
        total += abs(a - b)
    return total


points = [Point(i % 17, i % 11) for i in range(200)]
print(sum(manhattan(p, q) for p in points for q in points[:20]))
print("llvmlite loaded:", "llvmlite" in sys.modules)
