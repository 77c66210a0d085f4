import math
a, b = map(float, input().split())
print(f"{math.hypot(a, b):.7f}")
