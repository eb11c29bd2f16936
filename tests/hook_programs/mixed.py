"""A hot numeric function, an unsupported one, and one that overflows int64."""


def numeric(n):
    s = 0.0
    for i in range(n):
        s += (i % 13) * 0.5
    return s


def uses_dict(n):
    d = {}
    for i in range(n):
        d[i % 5] = d.get(i % 5, 0) + i
    return sorted(d.items())


def grows(n):
    x = 1
    for _ in range(n):
        x = x * 3 + 1
    return x


if __name__ == "__main__":
    print(sum(numeric(k) for k in range(400)))
    print([uses_dict(k) for k in range(300)][-1])
    print([grows(k) for k in range(200)][-1] % 1000003, grows(10))
