"""The two builtins names that counted code uses (see decode/counting.py, hook/hot.py).

Kept apart from both so that the hook can set up its counters without importing the
bytecode machinery, which only a cache miss needs."""

TICK = "__cuvil_bc_tick__"  # the builtin `next`, under a name of our own
TABLE = "__cuvil_bc__"  # key of a counted function -> its counter (an iterator)
