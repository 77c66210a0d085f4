import sys
data = sys.stdin.read().split()
print(sum(map(int, data[1:])))
