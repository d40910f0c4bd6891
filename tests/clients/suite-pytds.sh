#!/usr/bin/env bash
# pytds (pure-Python TDS driver).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/clients/setup-python.sh
MESQUITE_CLIENT=pytds .venv/bin/python -m pytest -q -p no:cacheprovider tests/clients/python/test_pytds.py
