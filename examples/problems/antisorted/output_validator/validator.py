"""Accepts a permutation of 1..n in which no neighbours differ by one (exit 42), rejects
anything else (exit 43) with the reason in judgemessage.txt."""
import sys

input_file, _answer_file, feedback_dir = sys.argv[1:4]


def reject(reason):
    with open(f"{feedback_dir}/judgemessage.txt", "w") as message:
        message.write(reason)
    sys.exit(43)


with open(input_file) as given:
    n = int(given.read())
tokens = sys.stdin.read().split()
if len(tokens) != n:
    reject(f"expected {n} numbers, got {len(tokens)}")
try:
    numbers = [int(token) for token in tokens]
except ValueError:
    reject("not a list of integers")
if sorted(numbers) != list(range(1, n + 1)):
    reject(f"not a permutation of 1..{n}")
for left, right in zip(numbers, numbers[1:]):
    if abs(left - right) == 1:
        reject(f"{left} and {right} are neighbours")
sys.exit(42)
