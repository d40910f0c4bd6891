#!/usr/bin/env bash
# Downloads a Go module's dependencies into the Go module cache: by default those of
# tests/clients/go (go-mssqldb at the version its go.mod pins, also the dependencies of
# go-mssqldb's own tests); with an argument, those of that module directory (relative to
# the repository root, e.g. bench/tds/go). Idempotent: with everything cached this only
# checks go.sum and returns at once.
# Usage: bash scripts/clients/setup-go.sh [MODULE_DIR]
set -euo pipefail
DIR=${1:-tests/clients/go}
cd "$(dirname "$0")/../../$DIR"
command -v go >/dev/null || { echo "setup-go: go not found" >&2; exit 1; }
export CI=true
go mod download </dev/null
if [ "$DIR" = tests/clients/go ]; then
  go list -test -deps github.com/microsoft/go-mssqldb >/dev/null </dev/null
fi
