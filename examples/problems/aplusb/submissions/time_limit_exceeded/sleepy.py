import time
a, b = map(int, input().split())
time.sleep(30)
print(a + b)
