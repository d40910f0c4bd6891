#!/usr/bin/env bash
# Downloads go-mssqldb (the version tests/clients/go/go.mod pins) and its dependencies,
# also those of its own tests, into the Go module cache (idempotent: with everything
# cached this only checks go.sum and returns at once).
set -euo pipefail
cd "$(dirname "$0")/../../tests/clients/go"
command -v go >/dev/null || { echo "setup-go: go not found" >&2; exit 1; }
export CI=true
go mod download </dev/null
go list -test -deps github.com/microsoft/go-mssqldb >/dev/null </dev/null
