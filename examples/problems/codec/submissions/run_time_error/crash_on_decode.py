# Fine in the first pass, crashes in the second.
command, text = input().split()
if command == "decode":
    raise SystemExit(3)
print("x" + text, flush=True)
