"""Real-client tests through pymssql (DB-API over FreeTDS db-lib, bundled in its wheel)
against `mesquite serve`.

Server address, password and certificate come from the environment (common.py). pymssql's
FreeTDS reads the freetds.conf named by FREETDSCONF: every test points it at a file of its
own (empty, or with a CA file for the TLS tests) so the machine's configuration never counts.
A test named test_<feature>_... counts toward that feature (conftest.py).
"""
import datetime
import decimal
import time

import pymssql
import pytest
from pymssql import _mssql

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
    write_unrelated_cert,
)


@pytest.fixture(autouse=True)
def freetds_conf(tmp_path, monkeypatch):
    """An empty freetds.conf; returns a function writing [global] settings into it."""
    path = tmp_path / "freetds.conf"
    path.write_text("")
    monkeypatch.setenv("FREETDSCONF", str(path))

    def write(**settings):
        lines = ["[global]"] + [f"\t{k.replace('_', ' ')} = {v}" for k, v in settings.items()]
        path.write_text("\n".join(lines) + "\n")

    return write


def connect(**kw):
    args = dict(server=HOST, port=str(PORT), user="sa", password=PASSWORD, database="master", autocommit=True, login_timeout=10)
    args.update(kw)
    return pymssql.connect(**args)


@pytest.fixture
def conn():
    c = connect()
    yield c
    c.close()


def test_plain_select_one(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS one, N'héllo' AS s")
    assert cur.fetchall() == [(1, "héllo")]
    assert [d[0] for d in cur.description] == ["one", "s"]


def _tls_roundtrip(c):
    cur = c.cursor()
    cur.execute("SELECT %s AS s, REPLICATE(CAST('t' AS varchar(max)), 20000) AS big", ("x" * 10000,))
    s, big = cur.fetchone()
    assert s == "x" * 10000 and big == "t" * 20000


def test_tls_ca_file(freetds_conf):
    # FreeTDS verifies the certificate against the CA file and the host name.
    freetds_conf(ca_file=SERVER_CERT)
    c = connect(server=CERT_HOST, encryption="require")
    _tls_roundtrip(c)
    c.close()


def test_tls_trust_server_certificate():
    # encryption = require without a CA file: encrypted, the certificate is not checked.
    c = connect(encryption="require")
    _tls_roundtrip(c)
    c.close()


def test_tls_wrong_ca_refused(freetds_conf, tmp_path):
    freetds_conf(ca_file=write_unrelated_cert(tmp_path / "other.pem"))
    with pytest.raises(pymssql.OperationalError) as e:
        connect(server=CERT_HOST, encryption="require").close()
    assert "20002" in str(e.value) and "connection failed" in str(e.value)


def test_ddl(conn):
    cur = conn.cursor()
    for sql in ddl_cleanup("pymssql") + ddl_statements("pymssql"):
        cur.execute(sql)
    cur.execute(ddl_columns_query("pymssql"))
    assert cur.fetchall() == DDL_COLUMNS_EXPECTED
    cur.execute(ddl_index_query("pymssql"))
    assert cur.fetchone()[0] == 1
    cur.execute("SELECT * FROM dbo.pymssql_ddl_v")
    assert [d[0] for d in cur.description] == ["id", "name"] and cur.fetchall() == []
    for sql in ddl_cleanup("pymssql"):
        cur.execute(sql)
    cur.execute(ddl_gone_query("pymssql"))
    assert cur.fetchone()[0] == 1


def test_dml(conn):
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pymssql_t') IS NOT NULL DROP TABLE dbo.pymssql_t")
    cur.execute("CREATE TABLE dbo.pymssql_t (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL, amount decimal(10, 2))")
    cur.execute("INSERT INTO dbo.pymssql_t (name, amount) VALUES (%s, %s)", ("alpha", decimal.Decimal("12.50")))
    assert cur.rowcount == 1
    cur.executemany("INSERT INTO dbo.pymssql_t (name, amount) VALUES (%s, %s)", [("beta", 1), ("gamma", None)])
    cur.execute("SELECT COUNT(*) FROM dbo.pymssql_t")
    assert cur.fetchone()[0] == 3
    cur.execute("UPDATE dbo.pymssql_t SET amount = amount + 1 WHERE amount IS NOT NULL")
    assert cur.rowcount == 2
    cur.execute("DELETE FROM dbo.pymssql_t WHERE name = 'gamma'")
    assert cur.rowcount == 1
    cur.execute("SELECT id, name, amount FROM dbo.pymssql_t ORDER BY id")
    assert cur.fetchall() == [(1, "alpha", decimal.Decimal("13.50")), (2, "beta", decimal.Decimal("2.00"))]
    cur.execute("DROP TABLE dbo.pymssql_t")


def test_params(conn):
    # pymssql quotes parameters into the batch text on the client.
    cur = conn.cursor()
    values = (42, 5000000000, "O'Brien ünï", None, decimal.Decimal("-123.4500"), b"\x00\xff")
    cur.execute("SELECT " + ", ".join(["%s"] * len(values)), values)
    assert cur.fetchone() == values
    cur.execute(
        "SELECT CAST(%s AS float), CAST(%s AS date), CAST(%s AS datetime2(6))",
        (2.25, datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 13, 14, 15, 123456)),
    )
    # pymssql writes a datetime with milliseconds.
    assert cur.fetchone() == (2.25, datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 13, 14, 15, 123000))
    cur.execute("SELECT name FROM sys.databases WHERE name = %(db)s OR database_id = %(id)d ORDER BY name", {"db": "master", "id": -1})
    assert cur.fetchall() == [("master",)]


def test_params_rpc(conn):
    # Parameters through an RPC: callproc binds them with dbrpcparam.
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pymssql_echo') IS NOT NULL DROP PROCEDURE dbo.pymssql_echo")
    cur.execute("CREATE PROCEDURE dbo.pymssql_echo @i int, @s nvarchar(40) AS SELECT @i + 1, @s + N'!'")
    cur.callproc("dbo.pymssql_echo", (41, "ünï"))
    assert cur.fetchall() == [(42, "ünï!")]
    cur.execute("DROP PROCEDURE dbo.pymssql_echo")


def test_proc_output(conn):
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pymssql_p') IS NOT NULL DROP PROCEDURE dbo.pymssql_p")
    cur.execute("CREATE PROCEDURE dbo.pymssql_p @a int, @b int OUTPUT, @s nvarchar(20) OUTPUT AS BEGIN SET @b = @a * 2; SET @s = N'out'; RETURN 7 END")
    out = cur.callproc("dbo.pymssql_p", (21, pymssql.output(int), pymssql.output(str, "")))
    assert out == (21, 42, "out")
    assert cur.returnvalue == 7
    cur.execute("DROP PROCEDURE dbo.pymssql_p")


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
    assert cur.fetchall() == [(2,)]
    c.close()


def test_types(conn):
    cur = conn.cursor()
    cur.execute(TYPES_QUERY)
    check_types_row(cur.fetchone())


def test_error_number_and_line(conn):
    cur = conn.cursor()
    with pytest.raises(pymssql.ProgrammingError) as e:
        cur.execute("/* the error is on line 2 */\nSELECT * FROM no_such_table")
    assert e.value.args[0] == 208
    assert b"Invalid object name 'no_such_table'." in e.value.args[1]
    # The DB-API exception has no line; the _mssql layer underneath keeps every field.
    with pytest.raises(_mssql.MSSQLDatabaseException) as e:
        conn._conn.execute_non_query("/* the error is on line 2 */\nSELECT * FROM no_such_table")
    assert (e.value.number, e.value.severity, e.value.state, e.value.line) == (208, 16, 1, 2)
    cur.execute("SELECT 2")
    assert cur.fetchone()[0] == 2


def test_cancel_long_waitfor():
    # pymssql's query timeout: db-lib gives up waiting after `timeout` seconds and, as
    # pymssql's error handler asks, drops the connection (pymssql documents that the
    # connection is unusable after a timeout); a new connection must work.
    c = connect(timeout=1)
    cur = c.cursor()
    started = time.monotonic()
    with pytest.raises(pymssql.OperationalError) as e:
        cur.execute("WAITFOR DELAY '00:00:30'")
    assert time.monotonic() - started < 10
    assert b"timed out" in e.value.args[1]
    c.close()
    c2 = connect()
    cur2 = c2.cursor()
    cur2.execute("SELECT 3")
    assert cur2.fetchone()[0] == 3
    c2.close()


def test_bulk_copy(conn):
    """conn.bulk_copy (FreeTDS BCP): INSERT BULK, then a bulk-load message that ends after
    its last row (no DONE); NULL takes the column's default, a duplicate fails the load."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pymssql_bulk') IS NOT NULL DROP TABLE dbo.pymssql_bulk")
    cur.execute(
        "CREATE TABLE dbo.pymssql_bulk (id int NOT NULL PRIMARY KEY, name nvarchar(20) NULL,"
        " n int DEFAULT 5, at datetime2 NULL)"
    )
    conn.bulk_copy(
        "dbo.pymssql_bulk",
        [(1, "a", 2, datetime.datetime(2024, 1, 2, 3, 4, 5)), (2, None, None, None), (3, "ü", 7, None)],
        column_ids=[1, 2, 3, 4],
        tablock=True,
    )
    cur.execute("SELECT id, name, n, at FROM dbo.pymssql_bulk ORDER BY id")
    assert cur.fetchall() == [
        (1, "a", 2, datetime.datetime(2024, 1, 2, 3, 4, 5)),
        (2, None, 5, None),
        (3, "ü", 7, None),
    ]
    # A duplicate key rolls the whole load back; the connection goes on.
    with pytest.raises(_mssql.MSSQLDatabaseException) as e:
        conn.bulk_copy("dbo.pymssql_bulk", [(4, "d"), (1, "dup")], column_ids=[1, 2])
    assert e.value.number == 2627
    cur.execute("SELECT COUNT(*) FROM dbo.pymssql_bulk")
    assert cur.fetchone()[0] == 3
    cur.execute("DROP TABLE dbo.pymssql_bulk")
