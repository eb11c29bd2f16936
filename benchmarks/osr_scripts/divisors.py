# Sums of proper divisors up to a limit, by pairing each divisor below the square root
# with its cofactor: counts perfect, abundant and deficient numbers.
limit = 60000
perfect = abundant = deficient = 0
for n in range(2, limit):
    total = 1
    d = 2
    while d * d <= n:
        if n % d == 0:
            total += d
            other = n // d
            if other != d:
                total += other
        d += 1
    if total == n:
        perfect += 1
    elif total > n:
        abundant += 1
    else:
        deficient += 1
print("perfect", perfect, "abundant", abundant, "deficient", deficient)
