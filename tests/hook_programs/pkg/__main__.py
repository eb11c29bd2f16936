import sys

from .helpers import weight

print("pkg", __name__, __package__, __spec__.name, sys.argv[1:])
print(sum(weight(i, 50) for i in range(400)))
