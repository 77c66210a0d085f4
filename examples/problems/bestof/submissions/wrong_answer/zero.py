input()
print(0)
