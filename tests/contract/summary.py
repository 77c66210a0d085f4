"""Sums Schemathesis's NDJSON reports: test cases that passed every check, and those
that failed one (or could not be run), per report and in all."""

import json
import sys

passed = failed = 0
for path in sys.argv[1:]:
    ok = bad = 0
    for line in open(path, encoding="utf-8"):
        event = json.loads(line)
        if "NonFatalError" in event:
            bad += 1
            continue
        scenario = event.get("ScenarioFinished")
        if not scenario:
            continue
        for checks in (scenario["recorder"].get("checks") or {}).values():
            if any(check["status"] == "failure" for check in checks):
                bad += 1
            else:
                ok += 1
    print(f"{path.split('/')[-2]}: {ok} passed, {bad} failed")
    passed, failed = passed + ok, failed + bad
print(f"contract: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
