import multiprocessing


def square(n):
    s = 0
    for i in range(n):
        s += i
    return s * 0 + n * n


if __name__ == "__main__":
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        print(pool.map(square, range(6)))
