"""Prints the client-by-feature table from the suites' result lines (client, feature, result)."""
import sys

FEATURES = ["plain", "tls", "ddl", "dml", "params", "proc_output", "rollback", "types", "error", "cancel", "strict", "require_tls", "bulk_copy", "tvp"]

results = {}
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.rstrip("\n").split("\t")
    if len(parts) != 3:
        continue
    client, feature, result = parts
    row = results.setdefault(client, {})
    # A failure anywhere in a feature wins over a pass recorded for it elsewhere.
    if row.get(feature) != "FAIL":
        row[feature] = result

extra = sorted({f for row in results.values() for f in row} - set(FEATURES))
cols = FEATURES + extra
width = max([len("client")] + [len(c) for c in results])
print("client".ljust(width) + "  " + "  ".join(cols))
for client, row in results.items():
    cells = [row.get(f, "-").ljust(len(f)) for f in cols]
    print(client.ljust(width) + "  " + "  ".join(cells))
