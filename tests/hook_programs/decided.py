"""Functions the hook decides about: one goes native, one is unsupported. After the
decision neither keeps counting: the code they run (and the copy a native one falls
back to) is the code as written, and its locals are in the order CPython gave them."""

def numeric(n):
    total = 0.0
    for i in range(n):
        total += (i % 13) * 0.5
    return total


def uses_dict(n):
    seen = {}
    for i in range(n):
        seen[i % 5] = seen.get(i % 5, 0) + i
    return sorted(seen.items())


def counters_in(func):
    """How many of the hook's counters the code `func` runs holds (and, for a native
    function, the code its dispatcher falls back to)."""
    codes = [func.__code__] + [c.function.py_func.__code__ for c in func.__code__.co_consts if hasattr(c, "function")]
    return sum(type(c).__name__ == "Counter" for code in codes for c in code.co_consts)


for k in range(400):
    numeric(k)
    uses_dict(k)
print(numeric(50), uses_dict(12))
print(counters_in(numeric), counters_in(uses_dict))
print(numeric.__code__.co_varnames[:3], uses_dict.__code__.co_varnames)
