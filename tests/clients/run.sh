#!/usr/bin/env bash
# Real-client tests: starts `mesquite serve` on a free loopback port with a fresh data
# directory, runs each client's test suite against it, prints a client-by-result table,
# stops the server (by its PID) and exits non-zero if any suite failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash scripts/clients/setup-python.sh
cargo build --quiet -p mesquite
BIN="${CARGO_TARGET_DIR:-target}/debug/mesquite"

DATA=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export MESQUITE_SA_PASSWORD="Mesquite-test-$RANDOM$RANDOM"
export MESQUITE_HOST=127.0.0.1 MESQUITE_PORT=$PORT

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

declare -A RESULT
FAILED=0
if .venv/bin/python -m pytest -q tests/clients/test_pytds.py; then
  RESULT[pytds]=pass
else
  RESULT[pytds]=FAIL
  FAILED=1
fi

echo
echo "client      result"
echo "----------  ------"
for c in "${!RESULT[@]}"; do
  printf '%-10s  %s\n' "$c" "${RESULT[$c]}"
done
if [ "$FAILED" != 0 ]; then
  echo "--- server output ---"
  tail -50 "$DATA/serve.out"
fi
exit "$FAILED"
