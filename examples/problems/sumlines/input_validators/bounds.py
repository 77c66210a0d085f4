# Input validator (exit 42: valid, 43: invalid): n values, each within the bound given as the
# first argument (input_validator_args), else 10^9.
import sys

bound = int(sys.argv[1]) if len(sys.argv) > 1 else 10**9
try:
    lines = sys.stdin.read().split("\n")
    n = int(lines[0])
    values = [int(v) for v in lines[1 : n + 1]]
except ValueError:
    sys.exit(43)
sys.exit(42 if n >= 1 and len(values) == n and all(abs(v) <= bound for v in values) else 43)
