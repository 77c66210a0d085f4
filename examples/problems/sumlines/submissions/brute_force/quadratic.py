# Right on small inputs, far too slow on the large one (never a wrong answer).
import sys
data = sys.stdin.read().split()
values = list(map(int, data[1:]))
total = 0
for i in range(len(values)):
    for j in range(len(values)):
        if i == j:
            total += values[i]
print(total)
