#!/usr/bin/env python3
"""Writes examples/contests/autumn-cup: a CLICS contest package (2023-06) of an ended ICPC
contest with teams, judged submissions, clarifications and a thawed freeze, built from the
example problems' own submissions. `ulticode up` imports it at its first start. Run again
after changing this script; the output is committed."""
import json, os, shutil, zipfile

ROOT = os.path.join(os.path.dirname(__file__), "..")
OUT = os.path.join(ROOT, "examples", "contests", "autumn-cup")
PROBLEMS = os.path.join(ROOT, "examples", "problems")

START = "2026-11-01T09:00:00.000+00:00"
def t(minutes, seconds=0):
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}.000"
def at(minutes, seconds=0):
    h, m = 9 + minutes // 60, minutes % 60
    return f"2026-11-01T{h:02d}:{m:02d}:{seconds:02d}.000+00:00"

problems = [
    {"id": "aplusb", "label": "A", "name": "A+B", "ordinal": 1, "rgb": "#e53935", "color": "red"},
    {"id": "echo", "label": "B", "name": "Echo", "ordinal": 2, "rgb": "#1e88e5", "color": "blue"},
    {"id": "pairsum", "label": "C", "name": "Pair Sum", "ordinal": 3, "rgb": "#43a047", "color": "green"},
]
files = {
    ("aplusb", "AC"): "aplusb/submissions/accepted/sum.py",
    ("aplusb", "WA"): "aplusb/submissions/wrong_answer/difference.py",
    ("echo", "AC"): "echo/submissions/accepted/echo.py",
    ("echo", "WA"): "echo/submissions/wrong_answer/reverse.py",
    ("pairsum", "AC"): "pairsum/submissions/accepted/sorted.py",
    ("pairsum", "WA"): "pairsum/submissions/wrong_answer/always_minus_one.py",
}
organizations = [
    {"id": "kyoto", "name": "Kyoto", "formal_name": "Kyoto University"},
    {"id": "tsinghua", "name": "Tsinghua", "formal_name": "Tsinghua University"},
    {"id": "kth", "name": "KTH", "formal_name": "KTH Royal Institute of Technology"},
]
groups = [{"id": "students", "name": "Students"}]
teams = [
    ("1", "Kyoto Kernels", "kyoto"), ("2", "Tsinghua Trees", "tsinghua"),
    ("3", "KTH Knights", "kth"), ("4", "Kyoto Kites", "kyoto"),
    ("5", "Tsinghua Tries", "tsinghua"), ("6", "KTH Kites", "kth"),
]
# (team, problem, minute, verdict): the last hour (from minute 240) is frozen.
history = [
    ("1", "aplusb", 7, "AC"), ("2", "aplusb", 5, "WA"), ("2", "aplusb", 9, "AC"),
    ("3", "aplusb", 12, "AC"), ("4", "aplusb", 30, "WA"), ("4", "aplusb", 31, "WA"),
    ("4", "aplusb", 44, "AC"), ("5", "aplusb", 61, "AC"), ("1", "echo", 35, "AC"),
    ("2", "echo", 50, "AC"), ("3", "echo", 80, "WA"), ("3", "echo", 95, "AC"),
    ("1", "pairsum", 120, "WA"), ("1", "pairsum", 150, "AC"), ("2", "pairsum", 250, "AC"),
    ("5", "echo", 260, "WA"), ("6", "aplusb", 290, "WA"), ("3", "pairsum", 299, "AC"),
]

shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
def write(name, value):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")

with open(os.path.join(OUT, "contest.yaml"), "w") as f:
    f.write("id: autumn-cup\nname: Autumn Cup 2026\nformal_name: Autumn Cup 2026 (example)\n"
            f"start_time: '{START}'\nduration: '5:00:00'\nscoreboard_freeze_duration: '1:00:00'\n"
            "scoreboard_type: pass-fail\npenalty_time: 20\n")
write("problems.json", problems)
write("organizations.json", organizations)
write("groups.json", groups)
write("teams.json", [{"id": i, "label": i, "name": n, "display_name": n, "organization_id": o, "group_ids": ["students"]} for i, n, o in teams])
write("accounts.json", [{"id": f"team{i}", "username": f"autumn-team{i}", "type": "team", "team_id": i} for i, _, _ in teams])
submissions, judgements = [], []
for number, (team, problem, minute, verdict) in enumerate(history, start=1):
    sid = str(number)
    submissions.append({"id": sid, "language_id": "python3", "problem_id": problem, "team_id": team,
                        "time": at(minute, 13), "contest_time": t(minute, 13),
                        "files": [{"href": f"contests/autumn-cup/submissions/{sid}/files", "filename": "files.zip", "mime": "application/zip"}]})
    judgements.append({"id": f"j{sid}", "submission_id": sid, "judgement_type_id": verdict,
                       "start_time": at(minute, 14), "start_contest_time": t(minute, 14),
                       "end_time": at(minute, 20), "end_contest_time": t(minute, 20), "max_run_time": 0.04})
    os.makedirs(os.path.join(OUT, "submissions", sid))
    with zipfile.ZipFile(os.path.join(OUT, "submissions", sid, "files.zip"), "w") as z:
        info = zipfile.ZipInfo("main.py", date_time=(2026, 11, 1, 9, 0, 0))
        with open(os.path.join(PROBLEMS, files[(problem, verdict)])) as src:
            z.writestr(info, src.read())
write("submissions.json", submissions)
write("judgements.json", judgements)
write("clarifications.json", [
    {"id": "c1", "from_team_id": "4", "problem_id": "aplusb", "text": "Can the numbers be negative?", "time": at(20), "contest_time": t(20)},
    {"id": "c2", "reply_to_id": "c1", "problem_id": "aplusb", "text": "Yes: read the input section.", "time": at(25), "contest_time": t(25)},
    {"id": "c3", "text": "The scoreboard freezes in ten minutes.", "time": at(230), "contest_time": t(230)},
])
write("state.json", {"started": START, "frozen": at(240), "ended": at(300), "thawed": "2026-11-01T15:00:00.000+00:00",
                     "finalized": "2026-11-01T15:05:00.000+00:00", "end_of_updates": "2026-11-01T15:05:00.000+00:00"})
