# Looks for the table beside the input, not in the working directory.
k = int(input())
with open("/data/table.txt") as table:
    print(sum(int(line) for line in list(table)[:k]))
