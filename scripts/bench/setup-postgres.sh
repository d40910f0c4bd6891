#!/usr/bin/env bash
# Installs the PostgreSQL server binaries (Debian package postgresql: initdb, pg_ctl,
# postgres, pgbench) with apt-get, only when no initdb is found where the benchmarks look
# (`pg_config --bindir`, then /usr/lib/postgresql/<major>/bin): with PostgreSQL present this
# returns at once. The benchmarks start their own private cluster; the package's default
# cluster is not used. Runs without a terminal; uses sudo only when not root.
set -euo pipefail

have_server() {
  local bindir
  if bindir=$(pg_config --bindir 2>/dev/null) && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ]; then
    return 0
  fi
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if have_server; then
  exit 0
fi
command -v apt-get >/dev/null || { echo "setup-postgres: PostgreSQL not found and no apt-get to install it" >&2; exit 1; }
SUDO=()
if [ "$(id -u)" != 0 ]; then SUDO=(sudo -n); fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq </dev/null >/dev/null
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends postgresql </dev/null >/dev/null
have_server || { echo "setup-postgres: postgresql installed but initdb is still missing" >&2; exit 1; }
