"""Checks a test's input (k) against the table.txt of its `.files`, which the input validator
finds in its working directory. Exit 42: valid, 43: invalid."""
import re
import sys

text = sys.stdin.read()
if not re.fullmatch(r"[1-9][0-9]*\n", text):
    print("expected one positive integer and a newline", file=sys.stderr)
    sys.exit(43)
k = int(text)
try:
    with open("table.txt") as table:
        lines = table.read().splitlines()
except OSError as error:
    print(f"no table.txt: {error}", file=sys.stderr)
    sys.exit(43)
if not all(re.fullmatch(r"-?(0|[1-9][0-9]*)", line) for line in lines):
    print("table.txt must hold one integer per line", file=sys.stderr)
    sys.exit(43)
if k > len(lines):
    print(f"k = {k} but the table has {len(lines)} lines", file=sys.stderr)
    sys.exit(43)
sys.exit(42)
