#!/usr/bin/env bash
# pymssql (DB-API over FreeTDS db-lib, bundled in its wheel).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! bash scripts/clients/setup-python.sh; then
  echo "suite-pymssql: installing the Python drivers failed" >&2
  for f in plain tls ddl dml params proc_output rollback types error cancel; do
    printf 'pymssql\t%s\tFAIL\n' "$f" >>"${MESQUITE_CLIENT_RESULTS:-/dev/null}"
  done
  exit 1
fi
MESQUITE_CLIENT=pymssql .venv/bin/python -m pytest -q -p no:cacheprovider tests/clients/python/test_pymssql.py
