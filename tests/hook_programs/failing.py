def divide(a, b):
    return a // b


def run():
    total = 0
    for i in range(200):
        total += divide(i, 7)
    print("total", total)
    divide(1, 0)


run()
