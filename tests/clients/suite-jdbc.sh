#!/usr/bin/env bash
# mssql-jdbc (Microsoft's JDBC driver): tests/clients/jdbc/MesquiteJdbcTest.java, compiled
# with javac and run with java against the driver jar scripts/clients/setup-jdbc.sh puts in
# tests/clients/jdbc/lib. The server's certificate goes into a PKCS12 trust store for the
# TLS checks that verify it (encrypt=true and encrypt=strict).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/clients/setup-jdbc.sh
LIB="tests/clients/jdbc/lib/*"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
keytool -importcert -noprompt -alias mesquite -file "$MESQUITE_SERVER_CERT" \
  -keystore "$WORK/trust.p12" -storetype PKCS12 -storepass changeit >/dev/null 2>&1
javac -nowarn -d "$WORK/classes" -cp "$LIB" tests/clients/jdbc/MesquiteJdbcTest.java
java -cp "$WORK/classes:$LIB" -Dmesquite.truststore="$WORK/trust.p12" MesquiteJdbcTest
