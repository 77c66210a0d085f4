hoard = []
for _ in range(4096):
    hoard.append(bytearray(1 << 20))
print(len(hoard))
