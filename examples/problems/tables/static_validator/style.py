"""Style points: accepts a submission whose source lines are at most WIDTH characters (exit 42),
rejects it otherwise (exit 43). Called as `style.py language entry_point feedback_dir WIDTH`
with the submission's files in the working directory."""
import os
import sys

language, entry_point, feedback_dir, width = sys.argv[1:5]
SOURCES = (".c", ".cc", ".cpp", ".h", ".java", ".py", ".rs", ".go", ".kt", ".js")


def report(exit_code, message):
    with open(os.path.join(feedback_dir, "judgemessage.txt"), "w") as out:
        out.write(message)
    sys.exit(exit_code)


for name in sorted(os.listdir(".")):
    if not name.endswith(SOURCES):
        continue
    with open(name, encoding="utf-8", errors="replace") as source:
        for number, line in enumerate(source, 1):
            if len(line.rstrip("\n")) > int(width):
                report(43, f"{name}:{number} is longer than {width} characters")
report(42, f"{language} submission {entry_point}: every line fits in {width} characters")
