#!/usr/bin/env bash
# Installs the Python client drivers the real-client tests use into .venv (idempotent:
# a second run with everything present only checks the marker and returns).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv
REQ=tests/clients/python-requirements.txt
MARK="$VENV/.installed-$(sha256sum "$REQ" | cut -c1-16)"
if [ -f "$MARK" ]; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQ"
touch "$MARK"
