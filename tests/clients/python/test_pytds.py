"""Real-client tests through pytds (pure-Python TDS driver) against `mesquite serve`.

The server address comes from MESQUITE_HOST / MESQUITE_PORT and the sa password from
MESQUITE_SA_PASSWORD (tests/clients/run.sh starts a server and sets them).
"""
import datetime
import decimal
import os
import time
import uuid

import pytds
import pytest

HOST = os.environ.get("MESQUITE_HOST", "127.0.0.1")
PORT = int(os.environ.get("MESQUITE_PORT", "1433"))
PASSWORD = os.environ.get("MESQUITE_SA_PASSWORD", "")


def connect(**kw):
    args = dict(dsn=HOST, port=PORT, user="sa", password=PASSWORD, database="master", autocommit=True, timeout=30)
    args.update(kw)
    return pytds.connect(**args)


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


def test_dml_ddl_and_parameters(conn):
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_t') IS NOT NULL DROP TABLE dbo.pytds_t")
    cur.execute("CREATE TABLE dbo.pytds_t (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL, amount decimal(10, 2))")
    cur.execute("INSERT INTO dbo.pytds_t (name, amount) VALUES (%s, %s)", ("alpha", decimal.Decimal("12.50")))
    assert cur.rowcount == 1
    cur.executemany("INSERT INTO dbo.pytds_t (name, amount) VALUES (%s, %s)", [("beta", 1), ("gamma", None)])
    cur.execute("SELECT name, amount FROM dbo.pytds_t WHERE name = %s", ("beta",))
    assert cur.fetchall() == [("beta", decimal.Decimal("1.00"))]
    cur.execute("SELECT COUNT(*) FROM dbo.pytds_t")
    assert cur.fetchone()[0] == 3
    cur.execute("UPDATE dbo.pytds_t SET amount = amount + 1 WHERE amount IS NOT NULL")
    assert cur.rowcount == 2
    cur.execute("DROP TABLE dbo.pytds_t")


def test_proc_output(conn):
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_p') IS NOT NULL DROP PROCEDURE dbo.pytds_p")
    cur.execute("CREATE PROCEDURE dbo.pytds_p @a int, @b int OUTPUT AS BEGIN SET @b = @a * 2; RETURN 7 END")
    out = cur.callproc("dbo.pytds_p", (21, pytds.output(param_type=int)))
    assert out[1] == 42
    assert cur.return_value == 7
    cur.execute("DROP PROCEDURE dbo.pytds_p")


def test_rollback():
    c = connect(autocommit=False)
    cur = c.cursor()
    cur.execute("CREATE TABLE #r (x int)")
    c.commit()
    cur.execute("INSERT INTO #r VALUES (1)")
    c.rollback()
    cur.execute("SELECT COUNT(*) FROM #r")
    assert cur.fetchone()[0] == 0
    c.close()


def test_types(conn):
    cur = conn.cursor()
    cur.execute(
        """SELECT CAST(1 AS bit), CAST(200 AS tinyint), CAST(-3 AS smallint), CAST(4 AS int),
                  CAST(5000000000 AS bigint), CAST(1.25 AS decimal(5, 2)), CAST(2.5 AS float),
                  CAST(1.5 AS real), CAST(12.3456 AS money), CAST('2024-02-29' AS date),
                  CAST('13:14:15.1234567' AS time(7)), CAST('2024-02-29 13:14:15.123' AS datetime),
                  CAST('2024-02-29 13:14:15.1234567' AS datetime2(7)),
                  CAST('2024-02-29 13:14:15.1234567 +02:00' AS datetimeoffset(7)),
                  CAST('abc' AS varchar(10)), CAST(N'ünï' AS nvarchar(10)), CAST('x' AS char(3)),
                  CAST(0x0102 AS varbinary(10)), CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier),
                  REPLICATE(CAST('z' AS varchar(max)), 9000), CAST(NULL AS int)"""
    )
    row = cur.fetchone()
    assert row[0] is True
    assert row[1:5] == (200, -3, 4, 5000000000)
    assert row[5] == decimal.Decimal("1.25")
    assert row[6] == 2.5 and row[7] == 1.5
    assert row[8] == decimal.Decimal("12.3456")
    assert row[9] == datetime.date(2024, 2, 29)
    assert row[10] == datetime.time(13, 14, 15, 123456)
    assert row[11] == datetime.datetime(2024, 2, 29, 13, 14, 15, 123000)
    assert row[12] == datetime.datetime(2024, 2, 29, 13, 14, 15, 123456)
    assert row[13].utcoffset() == datetime.timedelta(hours=2)
    assert row[14] == "abc" and row[15] == "ünï" and row[16] == "x  "
    assert row[17] == b"\x01\x02"
    assert row[18] == uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")
    assert row[19] == "z" * 9000
    assert row[20] is None


def test_error_number_and_line(conn):
    cur = conn.cursor()
    with pytest.raises(pytds.ProgrammingError) as e:
        cur.execute("/* the error is on line 2 */\nSELECT * FROM no_such_table")
    assert e.value.msg_no == 208
    assert e.value.line == 2
    cur.execute("SELECT 2")
    assert cur.fetchone()[0] == 2


def test_cancel_long_waitfor():
    # pytds cancels through its query timeout: on a socket timeout it sends an
    # attention, reads the acknowledgement and raises TimeoutError.
    c = connect(timeout=1)
    cur = c.cursor()
    started = time.monotonic()
    with pytest.raises(Exception):
        cur.execute("WAITFOR DELAY '00:00:30'")
    assert time.monotonic() - started < 10
    c.close()
    # The server keeps serving.
    c2 = connect()
    cur2 = c2.cursor()
    cur2.execute("SELECT 3")
    assert cur2.fetchone()[0] == 3
    c2.close()
