#!/usr/bin/env bash
# FreeTDS `tsql` (Debian package freetds-bin): batches fed on stdin (here-docs, `go`
# separated), output compared exactly. tsql has no client-side parameters and no RPC: the
# parameterized query is sp_executesql in the batch, OUTPUT parameters and the return status
# come back through the batch's variables (and the RETURNSTATUS token as tsql's
# "(return status = N)" line). Connections are named entries of a freetds.conf generated in a
# temporary directory (FREETDSCONF), so the machine's configuration never counts. Writes the
# result lines itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLIENT=tsql
FEATURES=(plain tls ddl dml params proc_output rollback types error cancel)
RESULTS=${MESQUITE_CLIENT_RESULTS:-/dev/null}
record() { printf '%s\t%s\t%s\n' "$CLIENT" "$1" "$2" >>"$RESULTS"; }

if ! bash scripts/clients/setup-freetds.sh; then
  echo "suite-tsql: installing freetds-bin failed" >&2
  for f in "${FEATURES[@]}"; do record "$f" FAIL; done
  exit 1
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
: "${MESQUITE_HOST:?}" "${MESQUITE_PORT:?}" "${MESQUITE_SA_PASSWORD:?}" "${MESQUITE_SERVER_CERT:?}"
# tls_ca verifies the certificate and its host name: the generated certificate names
# localhost. tls_system verifies against the system's CAs, which must refuse it.
# `timeout` is the query timeout in seconds (the cancel test).
cat >"$WORK/freetds.conf" <<EOF
[global]
	client charset = UTF-8
[plain]
	host = $MESQUITE_HOST
	port = $MESQUITE_PORT
	encryption = off
[tls_trust]
	host = $MESQUITE_HOST
	port = $MESQUITE_PORT
	encryption = require
[tls_ca]
	host = localhost
	port = $MESQUITE_PORT
	encryption = require
	ca file = $MESQUITE_SERVER_CERT
[tls_system]
	host = localhost
	port = $MESQUITE_PORT
	encryption = require
	ca file = system
[timeout]
	host = $MESQUITE_HOST
	port = $MESQUITE_PORT
	encryption = off
	timeout = 1
EOF
export FREETDSCONF="$WORK/freetds.conf"

# run SERVER NAME [tsql options]: the batch on stdin; stdout to NAME.out, stderr (tsql's
# messages) to NAME.err, with the server's name in messages replaced by SERVER.
run() {
  local srv=$1 name=$2
  shift 2
  local rc=0
  timeout 60 tsql -S "$srv" -U sa -P "$MESQUITE_SA_PASSWORD" "$@" >"$WORK/$name.out" 2>"$WORK/$name.raw" || rc=$?
  sed -E 's/^(Msg [0-9]+ \(severity [0-9]+, state [0-9]+\) from )[^ ,:]+/\1SERVER/' "$WORK/$name.raw" >"$WORK/$name.err"
  echo "$rc" >"$WORK/$name.rc"
}

FAILED=()
# check FEATURE NAME FILE EXPECTED: FILE (out or err) of run NAME must equal EXPECTED.
check() {
  local feature=$1 name=$2 which=$3 expected=$4
  if [ "$(cat "$WORK/$name.$which")" == "$expected" ]; then
    record "$feature" pass
  else
    record "$feature" FAIL
    FAILED+=("$feature:$name")
    echo "--- $feature ($name): $which differs; expected:"
    printf '%s\n' "$expected" | cut -c1-300
    echo "--- got:"
    cut -c1-300 "$WORK/$name.$which"
    echo "--- stderr:"
    head -20 "$WORK/$name.raw"
  fi
}
# check_quiet FEATURE NAME EXPECTED_OUT: stdout equals, stderr empty, exit status 0.
check_quiet() {
  check "$1" "$2" out "$3"
  check "$1" "$2" err ""
  check "$1" "$2" rc 0
}

# --- plain: no encryption.
run plain plain -o q <<'EOF'
SELECT 1 AS one, N'héllo' AS s
go
EOF
check_quiet plain plain $'one\ts\n1\théllo'

# --- tls: encryption = require, without and with verification; verification against
# the system's CAs must refuse the self-signed certificate.
BIG=$(python3 -c 'print("t" * 20000)')
for srv in tls_trust tls_ca; do
  run $srv $srv -o q <<'EOF'
SELECT N'tls ünï' AS s, REPLICATE(CAST('t' AS varchar(max)), 20000) AS big
go
EOF
  check_quiet tls $srv $'s\tbig\ntls ünï\t'"$BIG"
done
run tls_system tls_system -o q <<'EOF'
SELECT 1
go
EOF
check tls tls_system rc 1
if grep -q "There was a problem connecting to the server" "$WORK/tls_system.raw"; then record tls pass; else record tls FAIL; FAILED+=(tls:tls_system); fi

# --- ddl
run plain ddl -o q <<'EOF'
IF OBJECT_ID('dbo.tsql_ddl_v') IS NOT NULL DROP VIEW dbo.tsql_ddl_v
IF OBJECT_ID('dbo.tsql_ddl') IS NOT NULL DROP TABLE dbo.tsql_ddl
go
CREATE TABLE dbo.tsql_ddl (id int NOT NULL PRIMARY KEY, name nvarchar(20) NULL)
go
ALTER TABLE dbo.tsql_ddl ADD qty int NULL
go
CREATE INDEX ix_tsql_ddl_name ON dbo.tsql_ddl (name)
go
CREATE VIEW dbo.tsql_ddl_v AS SELECT id, name FROM dbo.tsql_ddl
go
SELECT c.name, t.name AS type, c.max_length, c.is_nullable FROM sys.columns c
JOIN sys.types t ON t.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('dbo.tsql_ddl') ORDER BY c.column_id
go
SELECT COUNT(*) AS n FROM sys.indexes WHERE object_id = OBJECT_ID('dbo.tsql_ddl') AND name = 'ix_tsql_ddl_name'
go
SELECT * FROM dbo.tsql_ddl_v
go
DROP VIEW dbo.tsql_ddl_v
DROP TABLE dbo.tsql_ddl
go
SELECT CASE WHEN OBJECT_ID('dbo.tsql_ddl') IS NULL AND OBJECT_ID('dbo.tsql_ddl_v') IS NULL THEN 1 ELSE 0 END AS gone
go
EOF
check_quiet ddl ddl $'name\ttype\tmax_length\tis_nullable\nid\tint\t4\t0\nname\tnvarchar\t40\t1\nqty\tint\t4\t1\nn\n1\nid\tname\ngone\n1'

# --- dml
run plain dml -o q <<'EOF'
IF OBJECT_ID('dbo.tsql_t') IS NOT NULL DROP TABLE dbo.tsql_t
CREATE TABLE dbo.tsql_t (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL, amount decimal(10, 2))
go
INSERT INTO dbo.tsql_t (name, amount) VALUES (N'alpha', 12.50), (N'beta', 1), (N'gamma', NULL)
SELECT @@ROWCOUNT AS inserted
go
UPDATE dbo.tsql_t SET amount = amount + 1 WHERE amount IS NOT NULL
SELECT @@ROWCOUNT AS updated
go
DELETE FROM dbo.tsql_t WHERE name = N'gamma'
SELECT @@ROWCOUNT AS deleted
go
SELECT id, name, amount FROM dbo.tsql_t ORDER BY id
DROP TABLE dbo.tsql_t
go
EOF
check_quiet dml dml $'inserted\n3\nupdated\n2\ndeleted\n1\nid\tname\tamount\n1\talpha\t13.50\n2\tbeta\t2.00'

# --- params: sp_executesql with typed parameters, one of them OUTPUT.
run plain params -o q <<'EOF'
EXEC sp_executesql N'SELECT @i + 1 AS i, @s + N''!'' AS s, @d AS d, @n AS n',
  N'@i int, @s nvarchar(20), @d decimal(10, 4), @n int', @i = 41, @s = N'ünï', @d = -123.45, @n = NULL
go
DECLARE @o int
EXEC sp_executesql N'SET @o = @i * 2', N'@i int, @o int OUTPUT', @i = 21, @o = @o OUTPUT
SELECT @o AS o
go
EOF
check_quiet params params $'i\ts\td\tn\n42\tünï!\t-123.4500\tNULL\no\n42'

# --- proc_output: OUTPUT parameters and the return status into the batch's variables;
# without -o q tsql prints the RETURNSTATUS token as "(return status = N)".
run plain proc -o q <<'EOF'
IF OBJECT_ID('dbo.tsql_p') IS NOT NULL DROP PROCEDURE dbo.tsql_p
go
CREATE PROCEDURE dbo.tsql_p @a int, @b int OUTPUT, @s nvarchar(20) OUTPUT AS BEGIN SET @b = @a * 2; SET @s = N'out'; RETURN 7 END
go
DECLARE @b int, @s nvarchar(20), @rc int
EXEC @rc = dbo.tsql_p 21, @b OUTPUT, @s OUTPUT
SELECT @b AS b, @s AS s, @rc AS rc
go
EOF
check_quiet proc_output proc $'b\ts\trc\n42\tout\t7'
run plain proc_status <<'EOF'
DECLARE @b int, @s nvarchar(20)
EXEC dbo.tsql_p 5, @b OUTPUT, @s OUTPUT
go
DROP PROCEDURE dbo.tsql_p
go
EOF
if grep -q "(return status = 7)" "$WORK/proc_status.out"; then record proc_output pass; else record proc_output FAIL; FAILED+=(proc_output:proc_status); cat "$WORK/proc_status.out"; fi

# --- rollback: inside a batch and across batches.
run plain rollback -o q <<'EOF'
CREATE TABLE #r (x int)
go
BEGIN TRAN
INSERT INTO #r VALUES (1)
SELECT @@TRANCOUNT AS t1
ROLLBACK
SELECT COUNT(*) AS n, @@TRANCOUNT AS t2 FROM #r
go
BEGIN TRAN
go
INSERT INTO #r VALUES (2)
go
ROLLBACK TRAN
go
INSERT INTO #r VALUES (3)
SELECT x FROM #r
go
EOF
check_quiet rollback rollback $'t1\n1\nn\tt2\n0\t0\nx\n3'

# --- types: every supported type. tsql converts each value to text with FreeTDS's
# default date format (month day year hour:minute AM/PM), so temporal values are compared
# to the minute; everything else exactly.
run plain types -o q <<'EOF'
SELECT CAST(1 AS bit), CAST(200 AS tinyint), CAST(-3 AS smallint), CAST(4 AS int),
       CAST(5000000000 AS bigint), CAST(1.25 AS decimal(5, 2)), CAST(2.5 AS float),
       CAST(1.5 AS real), CAST(12.3456 AS money), CAST('2024-02-29' AS date),
       CAST('13:14:15.1234567' AS time(7)), CAST('2024-02-29 13:14:15.123' AS datetime),
       CAST('2024-02-29 13:14:15.1234567' AS datetime2(7)),
       CAST('2024-02-29 13:14:15.1234567 +02:00' AS datetimeoffset(7)),
       CAST('abc' AS varchar(10)), CAST(N'ünï' AS nvarchar(10)), CAST('x' AS char(3)),
       CAST(0x0102 AS varbinary(10)), CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier),
       REPLICATE(CAST('z' AS varchar(max)), 9000), CAST(NULL AS int)
go
EOF
Z=$(python3 -c 'print("z" * 9000)')
HEADER=$(printf '\t%.0s' $(seq 1 20))
check_quiet types types "$HEADER"$'\n1\t200\t-3\t4\t5000000000\t1.25\t2.5\t1.5\t12.3456\tFeb 29 2024 12:00AM\tJan  1 1900 01:14PM\tFeb 29 2024 01:14PM\tFeb 29 2024 01:14PM\tFeb 29 2024 01:14PM\tabc\tünï\tx  \t0102\t6F9619FF-8B86-D011-B42D-00C04FC964FF\t'"$Z"$'\tNULL'

# --- error: number, severity, state and line from the server's ERROR token; the
# connection keeps working.
run plain error -o q <<'EOF'
/* the error is on line 2 */
SELECT * FROM no_such_table
go
SELECT 2 AS two
go
EOF
check error error out $'two\n2'
check error error err $'Msg 208 (severity 16, state 1) from SERVER Line 2:\n\t"Invalid object name \'no_such_table\'."'

# --- cancel: tsql's query timeout (freetds.conf `timeout = 1`). tsql's error handler
# answers the timeout with INT_CANCEL, on which FreeTDS closes the connection (tsql sends no
# attention), so the rest of that session fails; a new connection must work.
started=$(date +%s%N)
run timeout cancel -o q <<'EOF'
WAITFOR DELAY '00:00:30'
go
EOF
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
echo "tsql: the timed-out WAITFOR returned after ${elapsed_ms} ms"
if [ "$elapsed_ms" -lt 10000 ] && grep -q "Adaptive Server connection timed out" "$WORK/cancel.raw"; then
  record cancel pass
else
  record cancel FAIL
  FAILED+=(cancel:cancel)
  cat "$WORK/cancel.raw"
fi
run plain cancel_after -o q <<'EOF'
SELECT 'alive' AS a
go
EOF
check_quiet cancel cancel_after $'a\nalive'

if [ ${#FAILED[@]} != 0 ]; then
  echo "tsql: failed checks: ${FAILED[*]}"
  exit 1
fi
echo "tsql: all checks passed"
