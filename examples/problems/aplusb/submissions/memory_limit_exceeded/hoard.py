# Keeps 1 MiB blocks that are written (not zero pages the kernel never backs), so memory
# grows by a MiB per step until the limit stops it.
hoard = []
for _ in range(4096):
    hoard.append(b"x" * (1 << 20))
print(len(hoard))
