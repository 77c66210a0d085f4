# Multi-pass output validator: input answer feedback_dir < team output. Exit 42 accepts
# (writing nextpass.in asks for another pass), 43 rejects. The feedback directory persists
# between passes, so the pass count and the current value are kept there.
import os
import sys

input_file, feedback = sys.argv[1], sys.argv[3]
state = os.path.join(feedback, "value.txt")
done = os.path.join(feedback, "passes.txt")
current = int(open(state if os.path.exists(state) else input_file).read())
passes = int(open(done).read()) if os.path.exists(done) else 0

words = sys.stdin.read().split()
with open(os.path.join(feedback, "judgemessage.txt"), "a") as message:
    if len(words) != 1 or words[0] != str(2 * current):
        message.write(f"pass {passes + 1}: expected {2 * current}\n")
        sys.exit(43)
    message.write(f"pass {passes + 1}: ok\n")
with open(done, "w") as f:
    f.write(str(passes + 1))
if passes + 1 < 3:
    with open(state, "w") as f:
        f.write(str(2 * current))
    with open(os.path.join(feedback, "nextpass.in"), "w") as f:
        f.write(f"{2 * current}\n")
sys.exit(42)
