"""Identity, references, decorators and inspect survive a function turning native."""

import functools
import inspect


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)

    wrapper.calls = 0
    return wrapper


def poly(x, scale=2):
    """A documented numeric function."""
    total = 0
    for i in range(8):
        total += (x + i) * scale
    return total


@logged
def decorated(n):
    s = 0
    for i in range(n):
        s += i % 3
    return s


before = poly  # a reference taken before it turns native
registry = {"poly": poly}

results = [poly(k) for k in range(400)] + [decorated(k) for k in range(400)]
print(sum(results), before is poly, registry["poly"] is poly, decorated.calls)
print(poly.__name__, poly.__qualname__, poly.__doc__, poly.__defaults__, poly.__module__)
print(inspect.signature(poly), inspect.signature(decorated))
print(inspect.getsource(poly).splitlines()[0], inspect.getsourcelines(poly)[1])
print(poly(3), poly(3, scale=5), poly(x=2.5), before(1, 1))
try:
    poly(1, 2, 3)
except TypeError as e:
    print("TypeError:", e)
try:
    poly()
except TypeError as e:
    print("TypeError:", e)
