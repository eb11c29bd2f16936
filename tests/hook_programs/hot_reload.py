"""A callee gets new code while a compiled caller has its old code compiled in."""


def step(x):
    t = 0
    for i in range(100):
        t += x + i
    return t


def step_v2(x):
    t = 0
    for i in range(100):
        t += x * 100
    return t


def caller(x):
    s = 0
    for i in range(100):
        s += step(x)
    return s


for _ in range(300):
    step(5)
    caller(5)
print(step(5), caller(5), step(2.5), caller(2.5))
step.__code__ = step_v2.__code__  # what a hot-reload tool does
print(step(5), caller(5), step(2.5), caller(2.5))
