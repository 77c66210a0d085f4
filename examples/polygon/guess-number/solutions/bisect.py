n = int(input())
low, high = 1, n
while low <= high:
    mid = (low + high) // 2
    print("?", mid, flush=True)
    reply = input()
    if reply == "=":
        break
    low, high = (mid + 1, high) if reply == "<" else (low, mid - 1)
