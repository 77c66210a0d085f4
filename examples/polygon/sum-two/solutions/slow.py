# Correct, and maybe too slow: Polygon's "time-limit-exceeded-or-accepted".
import time
a, b = map(int, input().split())
time.sleep(0.1)
print(a + b)
