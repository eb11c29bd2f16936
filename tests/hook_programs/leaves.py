"""A loop-free leaf called from interpreted code (spectral_norm's eval_A), a loop that
calls it, and a loop-free function that calls the program's own (recursion)."""


def eval_a(i, j):
    return 1.0 / ((i + j) * (i + j + 1) // 2 + i + 1)


def row(i, n):
    total = 0.0
    for j in range(n):
        total += eval_a(i, j)
    return total


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


print(sum(eval_a(i, j) for i in range(40) for j in range(40)))
print(sum(row(i, 50) for i in range(300)))
print(sum(fib(k) for k in range(300) if k < 15))
