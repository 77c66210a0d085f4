"""The official Judge0 Python SDK (`judge0` on PyPI), unchanged, against UltiCode's
Judge0-compatible API: a single submission, a batch, async submit + wait, and the compile
error, runtime error and time limit a client reads.

Usage: python scenario.py URL AUTH_TOKEN
Prints each step and a closing `SDK scenario: N passed, N failed` line.
"""

import sys

import judge0

url, token = sys.argv[1], sys.argv[2]
passed, failed = 0, 0


def step(name, check):
    global passed, failed
    try:
        detail = check()
        passed += 1
        print(f"ok   {name}: {detail}")
    except Exception as e:  # report every step, then fail at the end
        failed += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}")


client = judge0.Client(url, {"X-Auth-Token": token})


def single():
    s = judge0.run(client=client, source_code="print('hello from the SDK')", language=judge0.PYTHON)
    assert s.status == judge0.Status.ACCEPTED, s.status
    assert s.stdout == "hello from the SDK\n", repr(s.stdout)
    assert s.time is not None and s.memory and s.created_at and s.finished_at, s
    return f"{s.status.name} stdout={s.stdout!r} time={s.time} memory={s.memory}"


def batch():
    results = judge0.run(
        client=client,
        source_code="print(int(input()) * 2)",
        language=judge0.PYTHON,
        test_cases=[("1", "2"), ("2", "4"), ("3", "7")],
    )
    statuses = [r.status for r in results]
    assert statuses == [
        judge0.Status.ACCEPTED,
        judge0.Status.ACCEPTED,
        judge0.Status.WRONG_ANSWER,
    ], statuses
    return ", ".join(f"{r.stdin!r}->{r.stdout!r} {r.status.name}" for r in results)


def async_and_wait():
    submissions = [
        judge0.Submission(source_code="#include <stdio.h>\nint main(){puts(\"from C\");return 0;}", language=judge0.C),
        judge0.Submission(source_code="#include <iostream>\nint main(){std::cout<<\"from C++\\n\";}", language=judge0.CPP),
        judge0.Submission(source_code="print('from Python')", language=judge0.PYTHON),
    ]
    created = judge0.async_run(client=client, submissions=submissions)
    assert all(s.token for s in created), [s.token for s in created]
    done = judge0.wait(client=client, submissions=created)
    outputs = [s.stdout for s in done]
    assert outputs == ["from C\n", "from C++\n", "from Python\n"], outputs
    return f"{len(done)} tokens, then {outputs}"


def compile_error():
    s = judge0.run(client=client, source_code="int main() { return 0", language=judge0.C)
    assert s.status == judge0.Status.COMPILATION_ERROR, s.status
    assert "error" in s.compile_output, s.compile_output
    return f"{s.status.name}: {s.compile_output.splitlines()[0]!r}"


def runtime_error():
    s = judge0.run(client=client, source_code="import sys\nprint('bye', file=sys.stderr)\nsys.exit(3)", language=judge0.PYTHON)
    assert s.status == judge0.Status.RUNTIME_ERROR_NZEC, s.status
    assert s.exit_code == 3 and s.stderr == "bye\n", (s.exit_code, s.stderr)
    segv = judge0.run(client=client, source_code="int main(){volatile int*p=0;*p=1;return 0;}", language=judge0.C)
    assert segv.status == judge0.Status.RUNTIME_ERROR_SIGSEGV, segv.status
    return f"{s.status.name} exit_code={s.exit_code}; {segv.status.name}"


def time_limit():
    s = judge0.run(client=client, source_code="while True:\n    pass", language=judge0.PYTHON, cpu_time_limit=1)
    assert s.status == judge0.Status.TIME_LIMIT_EXCEEDED, s.status
    return f"{s.status.name} time={s.time}"


def metadata():
    about = client.get_about()
    assert about["version"] == "1.13.1", about
    languages = client.get_languages()
    assert any(l.id == 71 for l in languages), languages
    config = client.get_config_info()
    return f"version {about['version']}, {len(languages)} languages, batch size {config.max_submission_batch_size}"


for name, check in [
    ("metadata", metadata),
    ("single submission", single),
    ("batch (test cases)", batch),
    ("async submit + wait", async_and_wait),
    ("compile error", compile_error),
    ("runtime errors", runtime_error),
    ("time limit", time_limit),
]:
    step(name, check)

print(f"SDK scenario: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
