import sys
from collections import Counter

data = sys.stdin.buffer.read().split()
count = Counter(map(int, data[1:]))
pairs = sum(c * count[-x] for x, c in count.items() if x > 0)
print(pairs + count[0] * (count[0] - 1) // 2)
