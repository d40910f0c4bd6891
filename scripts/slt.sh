#!/usr/bin/env bash
# Runs the sqllogictest corpus sample (shared/sqllogictest beside the repository, or
# $MESQUITE_SLT_DIR) against in-memory Mesquite instances and prints pass rates per
# directory. Arguments go to mesquite-slt: file filters (e.g. `evidence select1`),
# --failures (print unlisted failures), --list (print them as expected-failure entries),
# --jobs N, --budget SECS, --timeout SECS, --strict. Expected failures and their reasons
# are in tests/slt/expected-failures.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release --quiet -p slt -- "$@"
