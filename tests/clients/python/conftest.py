"""Records each test's outcome as a feature result for tests/clients/table.py.

A test named test_<feature>[_anything] counts toward <feature> (see tests/clients/run.sh
for the list); the client name comes from MESQUITE_CLIENT.
"""
import os

FEATURES = ["proc_output", "plain", "tls", "ddl", "dml", "params", "rollback", "types", "error", "cancel", "strict", "require_tls", "bulk_copy", "tvp"]


def _feature(name):
    name = name.split("[")[0][len("test_"):]
    for f in FEATURES:
        if name == f or name.startswith(f + "_"):
            return f
    return None


def pytest_runtest_logreport(report):
    path = os.environ.get("MESQUITE_CLIENT_RESULTS")
    client = os.environ.get("MESQUITE_CLIENT")
    if not path or not client or report.when != "call" and not (report.when == "setup" and report.failed):
        return
    feature = _feature(report.location[2])
    if feature is None:
        return
    result = "pass" if report.passed else ("n/a" if report.skipped else "FAIL")
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{client}\t{feature}\t{result}\n")
