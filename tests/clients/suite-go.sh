#!/usr/bin/env bash
# go-mssqldb (Microsoft's Go driver): the feature tests in tests/clients/go (go test), then
# go-mssqldb's own test suite at the pinned version, from the module cache, as a measure:
# it runs against a server of its own (so it cannot disturb the shared one), bounded in
# time, and never fails the run; it prints "go-mssqldb own suite: P passed, F failed,
# S skipped" and the failing tests. MESQUITE_GO_OWN_SUITE=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
bash scripts/clients/setup-go.sh
cd tests/clients/go
rc=0
go test -count=1 -v -timeout 5m . || rc=$?

if [ "${MESQUITE_GO_OWN_SUITE:-1}" = 0 ]; then
  exit $rc
fi
(
  set +e
  WORK=$(mktemp -d)
  BIN="$ROOT/${CARGO_TARGET_DIR:-target}/debug/mesquite"
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PW="Mesquite-own-$RANDOM$RANDOM"
  MESQUITE_SA_PASSWORD=$PW "$BIN" serve --data-dir "$WORK/data" --port "$PORT" >"$WORK/serve.out" 2>&1 &
  SERVER=$!
  trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
  for _ in $(seq 1 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null && break
    sleep 0.1
  done
  if ! go test -c -o "$WORK/own.test" github.com/microsoft/go-mssqldb >"$WORK/build.out" 2>&1; then
    echo "go-mssqldb own suite: not run (the test binary did not build)"
    tail -5 "$WORK/build.out"
    exit 0
  fi
  export SQLSERVER_DSN="sqlserver://sa:$PW@127.0.0.1:$PORT?database=master&encrypt=disable"
  python3 own_suite.py "$WORK/own.test" "$(go list -m -f '{{.Dir}}' github.com/microsoft/go-mssqldb)" 300
  kill -0 $SERVER 2>/dev/null || { echo "  (the server of the own suite exited:)"; tail -5 "$WORK/serve.out"; }
) || true
exit $rc
