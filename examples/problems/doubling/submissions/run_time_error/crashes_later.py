n = int(input())
if abs(n) > 8:
    raise SystemExit(1)
print(2 * n)
