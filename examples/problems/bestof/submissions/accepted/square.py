x = int(input())
print(x * x)
