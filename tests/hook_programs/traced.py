"""Functions made native by the hook, then traced: the trace function must see every
line event that CPython gives (and the counters none of their own)."""
import sys


def work(n):
    t = 0
    for i in range(n):
        t += i * i
    return t


def countdown(n):
    while n > 0:
        n -= 1
    return n


def skips(n):
    t = 0
    for i in range(n):
        if i % 2:
            continue
        t += i
    else:
        t += 1
    return t


for _ in range(300):
    work(50)
    countdown(50)
    skips(20)

events = []


def tracer(frame, event, arg):
    if frame.f_code.co_name in ("work", "countdown", "skips"):
        events.append((frame.f_code.co_name, event, frame.f_lineno))
    return tracer


sys.settrace(tracer)
results = work(3), countdown(2), skips(4)
sys.settrace(None)
print(results)
print(events)
print(work(10), countdown(5), skips(7))
