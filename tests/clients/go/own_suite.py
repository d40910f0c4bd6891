"""Runs go-mssqldb's own package tests (the module at the version go.mod pins, from the
module cache) against the Mesquite server named by SQLSERVER_DSN, and prints
"go-mssqldb own suite: P passed, F failed, S skipped" plus the failing tests.

A measure, not a gate: it always exits 0. The test binary is built once; a test that
panics ends its process, so the binary is run again with every test already reported
(and the one that panicked) skipped, until a run ends on its own or the time budget is
spent.

    python3 own_suite.py <compiled test binary> <package dir> <budget seconds> [report file]
"""
import json
import os
import re
import subprocess
import sys
import time

binary, pkgdir, budget = sys.argv[1], sys.argv[2], float(sys.argv[3])
report = sys.argv[4] if len(sys.argv) > 4 else None
deadline = time.monotonic() + budget

# Tests that would reach past this machine (the workplace allows loopback traffic only):
# never run, reported as not run.
EXCLUDED = {
    "TestConnectError": "dials 8.8.8.8 to provoke a connect timeout",
    "TestAccessTokenConnectorFailsToConnectIfNoAccessToken": "resolves and dials an Azure SQL host name",
}

listing = subprocess.run([binary, "-test.list", "."], cwd=pkgdir, capture_output=True, text=True)
all_tests = [t for t in listing.stdout.split() if re.match(r"^(Test|Example|Fuzz)", t) and t not in EXCLUDED]

results = {}  # top-level test name -> pass | fail | skip
output = {}  # top-level test name -> output lines
panicked = []
runs = 0

while True:
    left = deadline - time.monotonic()
    todo = [t for t in all_tests if t not in results]
    if left < 5 or not todo:
        break
    runs += 1
    args = [binary, "-test.v=test2json", "-test.count=1", f"-test.timeout={int(left)}s"]
    args.append("-test.skip=^(" + "|".join(re.escape(t) for t in sorted(set(results) | set(EXCLUDED))) + ")$")
    proc = subprocess.Popen(
        ["go", "tool", "test2json", "-t"] + args,
        cwd=pkgdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    before = len(results)
    for line in proc.stdout:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        test = ev.get("Test")
        if not test:
            continue
        top = test.split("/")[0]
        action = ev.get("Action")
        if action in ("pass", "fail", "skip") and "/" not in test:
            results[top] = action
        elif action == "output":
            out = ev.get("Output", "")
            output.setdefault(top, []).append(out.rstrip("\n"))
            if out.startswith("panic:") and top not in panicked:
                panicked.append(top)
    proc.wait()
    if len(results) == before:
        break
for t in all_tests:
    if t not in results and time.monotonic() < deadline:
        results[t] = "fail"  # never reported (the process ended inside it)
        output.setdefault(t, []).append("no result (the test process ended)")


def reason(test):
    lines = [l.strip() for l in output.get(test, [])]
    for i, l in enumerate(lines):
        if l.startswith("panic:"):
            return l
        m = re.match(r"^\S+_test\.go:\d+: ?(.*)$", l)
        if not m or re.match(r"^\d{4}-\d\d-\d\d", m.group(1)):
            continue
        if m.group(1):
            return l
        nxt = next((x for x in lines[i + 1 :] if x), "")
        return l + " " + nxt
    return next((l for l in lines if l and not l.startswith(("=== ", "--- "))), "")


passed = sum(1 for v in results.values() if v == "pass")
failed = sorted(t for t, v in results.items() if v == "fail")
skipped = sum(1 for v in results.values() if v == "skip")
lines = [f"go-mssqldb own suite: {passed} passed, {len(failed)} failed, {skipped} skipped"]
lines.append(f"  ({runs} run(s) of the test binary; panicked: {', '.join(panicked) or 'none'};"
             f" not run, as they reach past this machine: {', '.join(sorted(EXCLUDED))})")
for t in failed:
    lines.append(f"  failing {t}: {reason(t)[:240]}")
text = "\n".join(lines)
print(text)
if report:
    with open(report, "w", encoding="utf-8") as f:
        f.write(text + "\n")
