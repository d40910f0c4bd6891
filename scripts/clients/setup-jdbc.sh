#!/usr/bin/env bash
# Installs mssql-jdbc (the version tests/clients/jdbc/pom.xml pins) into
# tests/clients/jdbc/lib with `mvn dependency:copy-dependencies` (idempotent: a second run
# with the same pom only checks the marker and returns). Needs mvn and a JDK 11+.
set -euo pipefail
cd "$(dirname "$0")/../../tests/clients/jdbc"
MARK="lib/.installed-$(sha256sum pom.xml | cut -c1-16)"
if [ -f "$MARK" ]; then
  exit 0
fi
for tool in mvn javac java keytool; do
  command -v "$tool" >/dev/null || { echo "setup-jdbc: $tool not found" >&2; exit 1; }
done
rm -rf lib
LOG=$(mktemp)
if ! CI=true mvn -B -q -Dstyle.color=never dependency:copy-dependencies \
  -DoutputDirectory=lib -DincludeScope=runtime </dev/null >"$LOG" 2>&1; then
  cat "$LOG" >&2
  rm -f "$LOG"
  echo "setup-jdbc: mvn failed" >&2
  exit 1
fi
rm -f "$LOG"
ls lib/mssql-jdbc-*.jar >/dev/null
touch "$MARK"
