def weight(i, k):
    total = 0
    for j in range(k):
        total += (i * j) % 11
    return total
