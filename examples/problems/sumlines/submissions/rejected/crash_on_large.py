import sys
data = sys.stdin.read().split()
if int(data[0]) > 100:
    raise SystemExit(3)
print(sum(map(int, data[1:])))
