#!/usr/bin/env bash
# Installs FreeTDS's command-line client `tsql` (Debian package freetds-bin) with apt-get,
# only when `tsql` is missing (idempotent: with tsql on PATH this returns at once). Runs
# without a terminal (CI=true, no stdin); uses sudo only when not root.
set -euo pipefail
if command -v tsql >/dev/null 2>&1; then
  exit 0
fi
command -v apt-get >/dev/null || { echo "setup-freetds: tsql not found and no apt-get to install freetds-bin" >&2; exit 1; }
SUDO=()
if [ "$(id -u)" != 0 ]; then SUDO=(sudo -n); fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq </dev/null >/dev/null
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends freetds-bin </dev/null >/dev/null
command -v tsql >/dev/null || { echo "setup-freetds: freetds-bin installed but tsql is still missing" >&2; exit 1; }
