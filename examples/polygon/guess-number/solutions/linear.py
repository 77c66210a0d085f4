# Asks 1, 2, 3, ...: fine for small n, too many queries for large ones.
n = int(input())
for guess in range(1, n + 1):
    print("?", guess, flush=True)
    if input() == "=":
        break
