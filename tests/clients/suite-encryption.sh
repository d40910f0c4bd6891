#!/usr/bin/env bash
# Require-encryption through real drivers: starts a second server with
# --require-encryption (its own port and data directory) and runs
# tests/clients/python/test_require_encryption.py with pytds, pymssql and mssql-python.
# Results go to the require_tls column of the client-by-feature table.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/clients/setup-python.sh >/dev/null
bash scripts/clients/setup-mssql-python.sh >/dev/null
BIN="${MESQUITE_BIN:?tests/clients/run.sh sets MESQUITE_BIN}"

DATA=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN" serve --data-dir "$DATA" --port "$PORT" --require-encryption >"$DATA/serve.out" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null && break
  sleep 0.1
done

export MESQUITE_PORT=$PORT MESQUITE_SERVER_CERT="$DATA/certs/mesquite-tds-cert.pem"
status=0
for client in pytds pymssql mssql-python; do
  MSSQL_PYTHON_NATIVE_PROVIDER=msodbcsql18 MESQUITE_CLIENT=$client \
    .venv/bin/python -m pytest -q -p no:cacheprovider tests/clients/python/test_require_encryption.py || status=1
done
if ! kill -0 "$SERVER" 2>/dev/null; then
  echo "the require-encryption server exited"; tail -20 "$DATA/serve.out"; status=1
fi
exit $status
