#!/usr/bin/env bash
# Real-client tests: starts `mesquite serve` on a free loopback port with a fresh data
# directory, runs each client suite against it (tests/clients/suite-<name>.sh), prints a
# client-by-feature table and exits non-zero if any suite failed. The server is stopped by
# its PID.
#
#   tests/clients/run.sh              all suites
#   tests/clients/run.sh pytds go     only these
#
# A suite script installs its client (idempotently, through scripts/clients/), runs its
# tests, and appends one line per feature to $MESQUITE_CLIENT_RESULTS:
#   <client> TAB <feature> TAB pass|FAIL|n/a
# Features (the table's columns): plain tls ddl dml params proc_output rollback types
# error cancel strict require_tls. A suite may also print extra measures (go-mssqldb's own suite).
# Suites read MESQUITE_HOST, MESQUITE_PORT, MESQUITE_SA_PASSWORD and MESQUITE_SERVER_CERT
# (the server's generated certificate, PEM, for clients that want a CA file for TLS).
set -euo pipefail
cd "$(dirname "$0")/../.."

SUITES=(pytds pymssql mssql-python tsql tedious jdbc go encryption)
if [ $# -gt 0 ]; then SUITES=("$@"); fi

cargo build --quiet -p mesquite
BIN="$PWD/${CARGO_TARGET_DIR:-target}/debug/mesquite"
export MESQUITE_BIN="$BIN"

DATA=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export MESQUITE_SA_PASSWORD="Mesquite-test-$RANDOM$RANDOM"
export MESQUITE_HOST=127.0.0.1 MESQUITE_PORT=$PORT
export MESQUITE_SERVER_CERT="$DATA/certs/mesquite-tds-cert.pem"
export MESQUITE_CLIENT_RESULTS="$DATA/results.tsv"
: >"$MESQUITE_CLIENT_RESULTS"

"$BIN" serve --data-dir "$DATA" --port "$PORT" >"$DATA/serve.out" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
  if python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null; then
    break
  fi
  sleep 0.1
done

FAILED=()
for s in "${SUITES[@]}"; do
  echo "=== client suite: $s"
  if ! bash "tests/clients/suite-$s.sh"; then
    FAILED+=("$s")
    printf '%s\tsuite\tFAIL\n' "$s" >>"$MESQUITE_CLIENT_RESULTS"
  fi
done

echo
python3 tests/clients/table.py "$MESQUITE_CLIENT_RESULTS"
if ! kill -0 "$SERVER" 2>/dev/null; then
  echo "the server exited during the client tests"
  FAILED+=(server)
fi
if [ ${#FAILED[@]} != 0 ]; then
  echo "failed: ${FAILED[*]}"
  echo "--- server output ---"
  tail -50 "$DATA/serve.out"
  exit 1
fi
