a, b = map(int, input().split())
# Never finishes: the CPU time limit ends it.
while True:
    a += b
