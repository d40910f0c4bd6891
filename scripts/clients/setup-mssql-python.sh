#!/usr/bin/env bash
# Installs what mssql-python needs beyond its wheels: the Microsoft ODBC Driver 18 it loads
# (shipped inside the mssql-python-odbc wheel) links against libltdl.so.7 and the Kerberos
# libraries, which come from Debian packages (libltdl7, libkrb5-3, libgssapi-krb5-2). They
# are installed with apt-get only when missing (idempotent: with the libraries present this
# only asks ldconfig and returns). Runs without a terminal; uses sudo only when not root.
# Then installs the Python drivers (scripts/clients/setup-python.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
libs=$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p)
for pair in libltdl.so.7:libltdl7 libkrb5.so.3:libkrb5-3 libgssapi_krb5.so.2:libgssapi-krb5-2; do
  grep -q "${pair%%:*} " <<<"$libs" || missing+=("${pair#*:}")
done
if [ ${#missing[@]} != 0 ]; then
  command -v apt-get >/dev/null || { echo "setup-mssql-python: missing ${missing[*]} and no apt-get" >&2; exit 1; }
  SUDO=()
  if [ "$(id -u)" != 0 ]; then SUDO=(sudo -n); fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq </dev/null >/dev/null
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi
bash scripts/clients/setup-python.sh
