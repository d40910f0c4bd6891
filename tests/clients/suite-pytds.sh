#!/usr/bin/env bash
# pytds (pure-Python TDS driver; pyOpenSSL for TLS).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! bash scripts/clients/setup-python.sh; then
  echo "suite-pytds: installing the Python drivers failed" >&2
  for f in plain tls ddl dml params proc_output rollback types error cancel; do
    printf 'pytds\t%s\tFAIL\n' "$f" >>"${MESQUITE_CLIENT_RESULTS:-/dev/null}"
  done
  exit 1
fi
MESQUITE_CLIENT=pytds .venv/bin/python -m pytest -q -p no:cacheprovider tests/clients/python/test_pytds.py
