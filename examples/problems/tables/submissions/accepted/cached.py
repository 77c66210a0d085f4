# Reads the table from the working directory and keeps a copy of its own there.
k = int(input())
with open("table.txt") as table:
    numbers = [int(line) for line in table]
# "x": nothing is left over from an earlier test.
with open("prefix.txt", "x") as cache:
    total = 0
    for number in numbers:
        total += number
        cache.write(f"{total}\n")
with open("prefix.txt") as cache:
    print(cache.read().split()[k - 1])
