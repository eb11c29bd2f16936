def divide(a, b):
    quotient = 0
    for _ in range(30):  # a loop: a loop-free leaf is not compiled on its own (nor one too short to pay: the cost model)
        quotient = a // b
    return quotient


def run():
    total = 0
    for i in range(200):
        total += divide(i, 7)
    print("total", total)
    divide(1, 0)


run()
