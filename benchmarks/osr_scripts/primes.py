# Count primes below a limit by trial division, the way a first script does it.
limit = 120000
count = 0
largest = 2
for candidate in range(2, limit):
    d = 2
    prime = True
    while d * d <= candidate:
        if candidate % d == 0:
            prime = False
            break
        d += 1
    if prime:
        count += 1
        largest = candidate
print(count, "primes below", limit, "largest", largest)
