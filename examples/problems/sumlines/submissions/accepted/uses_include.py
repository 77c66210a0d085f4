import sys
from limits import MAX_N
data = sys.stdin.read().split()
assert int(data[0]) <= MAX_N
print(sum(map(int, data[1:])))
