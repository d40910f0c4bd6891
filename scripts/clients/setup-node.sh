#!/usr/bin/env bash
# Installs the Node.js client drivers the real-client tests use (tedious) into
# tests/clients/node/node_modules with `npm ci` from the committed lock file (idempotent:
# a second run with the same lock only checks the marker and returns).
set -euo pipefail
cd "$(dirname "$0")/../../tests/clients/node"
LOCK=package-lock.json
MARK="node_modules/.installed-$(sha256sum "$LOCK" | cut -c1-16)"
if [ -f "$MARK" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "setup-node: npm not found" >&2; exit 1; }
rm -rf node_modules
CI=true npm ci --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null >/dev/null
touch "$MARK"
