# Interactive multi-pass validator: input answer feedback_dir, talking to the submission on
# stdin/stdout. Pass 1 (the test's input: a word): sends "encode WORD", reads a code and writes
# nextpass.in asking for pass 2 with it. Pass 2 (nextpass.in: "code CODE"): sends
# "decode CODE" and wants the word back. The feedback directory persists between passes.
import os
import re
import sys

input_file, answer_file, feedback = sys.argv[1], sys.argv[2], sys.argv[3]
word = open(answer_file).read().strip()
given = open(input_file).read().split()


def judge(code, message):
    with open(os.path.join(feedback, "judgemessage.txt"), "a") as out:
        out.write(message + "\n")
    sys.exit(code)


def ask(line):
    print(line, flush=True)
    reply = sys.stdin.readline().strip()
    if not re.fullmatch(r"[a-z]+", reply):
        judge(43, f"after {line!r}: expected lowercase letters, got {reply!r}")
    return reply


if given[0] != "code":
    code = ask(f"encode {word}")
    if code == word:
        judge(43, "the code is the word itself")
    with open(os.path.join(feedback, "nextpass.in"), "w") as out:
        out.write(f"code {code}\n")
    judge(42, f"pass 1: {word} -> {code}")
decoded = ask(f"decode {given[1]}")
if decoded != word:
    judge(43, f"pass 2: decoded {decoded!r}, not {word!r}")
judge(42, "pass 2: decoded")
