"""Prints what a program can observe about how it was started; used by test_hook_e2e."""

import atexit
import os
import pickle
import sys
import threading
import time


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def hot(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def later():
    time.sleep(0.2)
    print("thread done", flush=False)


if __name__ == "__main__":
    g = globals()
    print("name", __name__, "spec", __spec__, "package", __package__)
    print("file", __file__, "cached", g.get("__cached__"), "loader", type(__loader__).__name__, getattr(__loader__, "name", None))
    print("globals", sorted(k for k in g if k.startswith("__")))
    print("argv", sys.argv)
    print("path0", sys.path[0] == os.path.dirname(os.path.realpath(__file__)))
    data = pickle.dumps(Point(1, 2))
    print("pickle", data == pickle.dumps(Point(1, 2)), b"__main__" in data, pickle.loads(data).y)
    print("hot", [hot(k) for k in range(300)][-1])
    print("stdin", sys.stdin.read().strip())
    atexit.register(print, "atexit ran")
    threading.Thread(target=later).start()
    sys.stderr.write("to stderr, no newline")
    print("main done", end="")
    code = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sys.exit(code)
