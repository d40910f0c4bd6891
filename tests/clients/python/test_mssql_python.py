"""Real-client tests through mssql-python (Microsoft's Python driver; it loads the Microsoft
ODBC Driver 18 shipped in the mssql-python-odbc wheel) against `mesquite serve`.

Server address, password and certificate come from the environment (common.py). The suite
script selects the ODBC Driver 18 provider (MSSQL_PYTHON_NATIVE_PROVIDER=msodbcsql18).
A test named test_<feature>_... counts toward that feature (conftest.py).
"""
import datetime
import decimal
import time
import uuid

import mssql_python
import pytest

from common import (
    CERT_HOST,
    DDL_COLUMNS_EXPECTED,
    HOST,
    PASSWORD,
    PORT,
    SERVER_CERT,
    TYPES_QUERY,
    check_types_row,
    ddl_cleanup,
    ddl_columns_query,
    ddl_gone_query,
    ddl_index_query,
    ddl_statements,
)


def connect(extra="Encrypt=no;", host=HOST, autocommit=True):
    # ODBC braces protect a password with ; or }.
    pw = "{" + PASSWORD.replace("}", "}}") + "}"
    cs = f"Server={host},{PORT};UID=sa;PWD={pw};Database=master;{extra}"
    return mssql_python.connect(cs, autocommit=autocommit, timeout=10)


@pytest.fixture
def conn():
    c = connect()
    yield c
    c.close()


def test_plain_select_one(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS one, N'héllo' AS s")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "héllo")]
    assert [d[0] for d in cur.description] == ["one", "s"]


def _tls_roundtrip(c):
    cur = c.cursor()
    cur.execute("SELECT ? AS s, REPLICATE(CAST('t' AS varchar(max)), 20000) AS big", "x" * 10000)
    s, big = cur.fetchone()
    assert s == "x" * 10000 and big == "t" * 20000


def test_tls_trust_server_certificate():
    c = connect("Encrypt=yes;TrustServerCertificate=yes;")
    _tls_roundtrip(c)
    c.close()


def test_tls_strict_server_certificate_file():
    # ODBC Driver 18's ServerCertificate (only with Encrypt=strict, TDS 8.0: TLS before
    # PRELOGIN): the server's certificate must equal this file.
    c = connect(f"Encrypt=strict;ServerCertificate={SERVER_CERT};HostNameInCertificate={CERT_HOST};", host=CERT_HOST)
    _tls_roundtrip(c)
    c.close()


def test_tls_untrusted_certificate_refused():
    # Verified against the system's CAs, the self-signed certificate must be refused.
    with pytest.raises(mssql_python.Error) as e:
        connect("Encrypt=yes;TrustServerCertificate=no;", host=CERT_HOST).close()
    assert "certificate" in str(e.value).lower()


def test_ddl(conn):
    cur = conn.cursor()
    for sql in ddl_cleanup("mssqlpy") + ddl_statements("mssqlpy"):
        cur.execute(sql)
    cur.execute(ddl_columns_query("mssqlpy"))
    assert [tuple(r) for r in cur.fetchall()] == DDL_COLUMNS_EXPECTED
    cur.execute(ddl_index_query("mssqlpy"))
    assert cur.fetchone()[0] == 1
    cur.execute("SELECT * FROM dbo.mssqlpy_ddl_v")
    assert [d[0] for d in cur.description] == ["id", "name"] and cur.fetchall() == []
    for sql in ddl_cleanup("mssqlpy"):
        cur.execute(sql)
    cur.execute(ddl_gone_query("mssqlpy"))
    assert cur.fetchone()[0] == 1


def test_dml(conn):
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.mssqlpy_t') IS NOT NULL DROP TABLE dbo.mssqlpy_t")
    cur.execute("CREATE TABLE dbo.mssqlpy_t (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL, amount decimal(10, 2))")
    cur.execute("INSERT INTO dbo.mssqlpy_t (name, amount) VALUES (?, ?)", "alpha", decimal.Decimal("12.50"))
    assert cur.rowcount == 1
    cur.executemany("INSERT INTO dbo.mssqlpy_t (name, amount) VALUES (?, ?)", [("beta", decimal.Decimal("1")), ("gamma", None)])
    cur.execute("SELECT COUNT(*) FROM dbo.mssqlpy_t")
    assert cur.fetchone()[0] == 3
    cur.execute("UPDATE dbo.mssqlpy_t SET amount = amount + 1 WHERE amount IS NOT NULL")
    assert cur.rowcount == 2
    cur.execute("DELETE FROM dbo.mssqlpy_t WHERE name = 'gamma'")
    assert cur.rowcount == 1
    cur.execute("SELECT id, name, amount FROM dbo.mssqlpy_t ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == [(1, "alpha", decimal.Decimal("13.50")), (2, "beta", decimal.Decimal("2.00"))]
    cur.execute("DROP TABLE dbo.mssqlpy_t")


def test_params(conn):
    # ODBC binds typed parameters (SQLBindParameter): an RPC on the wire.
    cur = conn.cursor()
    values = (
        42,
        5000000000,
        "ünïcode",
        None,
        decimal.Decimal("-123.4500"),
        2.25,
        True,
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 2, 29, 13, 14, 15, 123456),
        b"\x00\xff",
        uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF"),
    )
    cur.execute("SELECT " + ", ".join(["?"] * len(values)), *values)
    row = tuple(cur.fetchone())
    assert row == values
    assert type(row[6]) is bool and type(row[9]) is bytes
    cur.execute("SELECT name FROM sys.databases WHERE name = ? OR database_id = ? ORDER BY name", "master", -1)
    assert [tuple(r) for r in cur.fetchall()] == [("master",)]


def test_proc_output(conn):
    # mssql-python has no callproc and binds input parameters only, so the OUTPUT parameter
    # and the return status come back through the caller's variables in the batch.
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.mssqlpy_p') IS NOT NULL DROP PROCEDURE dbo.mssqlpy_p")
    cur.execute("CREATE PROCEDURE dbo.mssqlpy_p @a int, @b int OUTPUT, @s nvarchar(20) OUTPUT AS BEGIN SET @b = @a * 2; SET @s = N'out'; RETURN 7 END")
    cur.execute("SET NOCOUNT ON; DECLARE @b int, @s nvarchar(20), @rc int; EXEC @rc = dbo.mssqlpy_p ?, @b OUTPUT, @s OUTPUT; SELECT @b, @s, @rc", 21)
    assert tuple(cur.fetchone()) == (42, "out", 7)
    cur.execute("DROP PROCEDURE dbo.mssqlpy_p")


def test_rollback():
    c = connect(autocommit=False)
    cur = c.cursor()
    cur.execute("CREATE TABLE #r (x int)")
    c.commit()
    cur.execute("INSERT INTO #r VALUES (1)")
    c.rollback()
    cur.execute("SELECT COUNT(*) FROM #r")
    assert cur.fetchone()[0] == 0
    cur.execute("INSERT INTO #r VALUES (2)")
    c.commit()
    cur.execute("SELECT x FROM #r")
    assert [tuple(r) for r in cur.fetchall()] == [(2,)]
    c.close()


def test_types(conn):
    cur = conn.cursor()
    cur.execute(TYPES_QUERY)
    check_types_row(tuple(cur.fetchone()))


def test_error_number(conn):
    # The driver's exception carries the SQLSTATE and the message; the native error number
    # is in the diagnostic records, which executemany keeps in cursor.messages. ODBC's
    # SQLGetDiagRec has no line number, and mssql-python exposes no SQLGetDiagField, so the
    # line cannot be observed through this driver.
    cur = conn.cursor()
    with pytest.raises(mssql_python.ProgrammingError) as e:
        cur.execute("/* the error is on line 2 */\nSELECT * FROM no_such_table")
    assert "Invalid object name 'no_such_table'." in str(e.value)
    with pytest.raises(mssql_python.ProgrammingError):
        cur.executemany("/* the error is on line 2 */\nSELECT * FROM no_such_table WHERE 1 = ?", [(1,)])
    assert any(state == "[42S02] (208)" and "Invalid object name 'no_such_table'." in text for state, text in cur.messages), cur.messages
    cur.execute("SELECT 2")
    assert cur.fetchone()[0] == 2


def test_cancel_long_waitfor(conn):
    # The ODBC query timeout: the driver sends an attention when it expires and waits for
    # its acknowledgement; the same connection then keeps working.
    conn.timeout = 1
    cur = conn.cursor()
    started = time.monotonic()
    with pytest.raises(mssql_python.OperationalError) as e:
        cur.execute("WAITFOR DELAY '00:00:30'")
    assert time.monotonic() - started < 10
    assert "timeout expired" in str(e.value).lower()
    conn.timeout = 0
    cur = conn.cursor()
    cur.execute("SELECT 3")
    assert cur.fetchone()[0] == 3
