"""Generates data/ for Zero-Sum Pairs (deterministic: python3 generators/gen.py)."""
import random
from collections import Counter


def answer(a):
    count = Counter(a)
    pairs = sum(count[x] * count[-x] for x in count if x > 0)
    return pairs + count[0] * (count[0] - 1) // 2


def write(name, a):
    with open(f"data/{name}.in", "w") as f:
        f.write(f"{len(a)}\n{' '.join(map(str, a))}\n")
    with open(f"data/{name}.ans", "w") as f:
        f.write(f"{answer(a)}\n")


random.seed(2026)
write("sample/1", [1, -1, 2, 0, 0, -2])
write("sample/2", [5, 5, -5])
for k, n in enumerate([10, 500, 1000], 1):
    write(f"secret/subtask1/{k:02d}", [random.randint(-20, 20) for _ in range(n)])
write("secret/subtask2/01", [random.randint(-1000, 1000) for _ in range(200000)])
write("secret/subtask2/02", [random.choice([-7, 7, 0]) for _ in range(200000)])
write("secret/subtask2/03", [random.randint(-10**9, 10**9) for _ in range(100000)])
