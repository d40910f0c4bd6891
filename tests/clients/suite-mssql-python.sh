#!/usr/bin/env bash
# mssql-python (Microsoft's Python driver) over the Microsoft ODBC Driver 18 it ships in the
# mssql-python-odbc wheel (selected explicitly: the driver can also load a Rust provider).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! bash scripts/clients/setup-mssql-python.sh; then
  echo "suite-mssql-python: installing mssql-python or its system libraries failed" >&2
  for f in plain tls ddl dml params proc_output rollback types error cancel; do
    printf 'mssql-python\t%s\tFAIL\n' "$f" >>"${MESQUITE_CLIENT_RESULTS:-/dev/null}"
  done
  exit 1
fi
MSSQL_PYTHON_NATIVE_PROVIDER=msodbcsql18 MESQUITE_CLIENT=mssql-python \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/clients/python/test_mssql_python.py
