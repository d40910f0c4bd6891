"""Real-client tests through pytds (pure-Python TDS driver) against `mesquite serve`.

The server address comes from MESQUITE_HOST / MESQUITE_PORT and the sa password from
MESQUITE_SA_PASSWORD (tests/clients/run.sh starts a server and sets them); TLS tests
verify against MESQUITE_SERVER_CERT. A test named test_<feature>_... counts toward that
feature of the client-by-feature table (conftest.py).
"""
import datetime
import decimal
import time
import uuid

import OpenSSL.SSL
import pytds
import pytds.tls
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
    write_unrelated_cert,
)


def connect(**kw):
    args = dict(dsn=HOST, port=PORT, user="sa", password=PASSWORD, database="master", autocommit=True, timeout=30)
    args.update(kw)
    return pytds.connect(**args)


def encrypted(c):
    return isinstance(c._tds_socket.sock, pytds.tls.EncryptedSocket)


@pytest.fixture
def conn():
    c = connect()
    yield c
    c.close()


def test_plain_select_one(conn):
    assert not encrypted(conn)
    cur = conn.cursor()
    cur.execute("SELECT 1 AS one, N'héllo' AS s")
    assert cur.fetchall() == [(1, "héllo")]
    assert [d[0] for d in cur.description] == ["one", "s"]


def _tls_roundtrip(c):
    assert encrypted(c)
    cur = c.cursor()
    # Big enough to span several TLS records and TDS packets each way.
    cur.execute("SELECT %s AS s, REPLICATE(CAST('t' AS varchar(max)), 20000) AS big", ("x" * 10000,))
    s, big = cur.fetchone()
    assert s == "x" * 10000 and big == "t" * 20000


def test_tls_ca_file():
    # The certificate is verified against the server's PEM and its host name.
    c = connect(dsn=CERT_HOST, cafile=SERVER_CERT)
    _tls_roundtrip(c)
    c.close()


def test_tls_trust_server_certificate():
    # Like TrustServerCertificate: the host name is not checked (127.0.0.1 is not in the SAN).
    c = connect(cafile=SERVER_CERT, validate_host=False)
    _tls_roundtrip(c)
    c.close()


def test_tls_wrong_ca_refused(tmp_path):
    other = write_unrelated_cert(tmp_path / "other.pem")
    with pytest.raises(OpenSSL.SSL.Error, match="certificate verify failed"):
        connect(dsn=CERT_HOST, cafile=other, login_timeout=5).close()


def test_ddl(conn):
    cur = conn.cursor()
    for sql in ddl_cleanup("pytds") + ddl_statements("pytds"):
        cur.execute(sql)
    cur.execute(ddl_columns_query("pytds"))
    assert cur.fetchall() == DDL_COLUMNS_EXPECTED
    cur.execute(ddl_index_query("pytds"))
    assert cur.fetchone()[0] == 1
    cur.execute("SELECT * FROM dbo.pytds_ddl_v")
    assert [d[0] for d in cur.description] == ["id", "name"] and cur.fetchall() == []
    for sql in ddl_cleanup("pytds"):
        cur.execute(sql)
    cur.execute(ddl_gone_query("pytds"))
    assert cur.fetchone()[0] == 1


def test_dml(conn):
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
    cur.execute("DELETE FROM dbo.pytds_t WHERE name = 'gamma'")
    assert cur.rowcount == 1
    cur.execute("SELECT id, name, amount FROM dbo.pytds_t ORDER BY id")
    assert cur.fetchall() == [(1, "alpha", decimal.Decimal("13.50")), (2, "beta", decimal.Decimal("2.00"))]
    cur.execute("DROP TABLE dbo.pytds_t")



def test_dml_triggers(conn):
    """A trigger-maintained audit row, and an error a trigger raises arriving with its number."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_trg') IS NOT NULL DROP TABLE dbo.pytds_trg")
    cur.execute("IF OBJECT_ID('dbo.pytds_trg_audit') IS NOT NULL DROP TABLE dbo.pytds_trg_audit")
    cur.execute("CREATE TABLE dbo.pytds_trg (id int PRIMARY KEY, qty int NOT NULL)")
    cur.execute("CREATE TABLE dbo.pytds_trg_audit (id int, old_qty int, new_qty int)")
    cur.execute(
        "CREATE TRIGGER dbo.pytds_trg_upd ON dbo.pytds_trg AFTER UPDATE AS\n"
        "SET NOCOUNT ON;\n"
        "IF EXISTS (SELECT * FROM inserted WHERE qty < 0) THROW 50010, 'qty must not be negative', 1;\n"
        "INSERT INTO dbo.pytds_trg_audit SELECT i.id, d.qty, i.qty FROM inserted i JOIN deleted d ON d.id = i.id"
    )
    cur.execute("INSERT INTO dbo.pytds_trg VALUES (%s, %s)", (1, 5))
    cur.execute("UPDATE dbo.pytds_trg SET qty = %s WHERE id = %s", (7, 1))
    assert cur.rowcount == 1
    cur.execute("SELECT id, old_qty, new_qty FROM dbo.pytds_trg_audit")
    assert cur.fetchall() == [(1, 5, 7)]
    with pytest.raises(pytds.Error) as e:
        cur.execute("UPDATE dbo.pytds_trg SET qty = -1 WHERE id = 1")
    assert e.value.msg_no == 50010
    assert "negative" in e.value.text
    cur.execute("SELECT qty FROM dbo.pytds_trg")
    assert cur.fetchone()[0] == 7
    cur.execute("DROP TABLE dbo.pytds_trg")
    cur.execute("DROP TABLE dbo.pytds_trg_audit")


def test_dml_with_cte(conn):
    """A WITH clause before INSERT ... SELECT (recursive) and before UPDATE ... FROM."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_cte') IS NOT NULL DROP TABLE dbo.pytds_cte")
    cur.execute("CREATE TABLE dbo.pytds_cte (n int PRIMARY KEY, v int NULL)")
    cur.execute(
        "WITH r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < %s) "
        "INSERT INTO dbo.pytds_cte (n) SELECT n FROM r",
        (10,),
    )
    assert cur.rowcount == 10
    cur.execute(
        "WITH s AS (SELECT n, n * 10 AS v FROM dbo.pytds_cte WHERE n <= 3) "
        "UPDATE t SET v = s.v FROM dbo.pytds_cte AS t JOIN s ON s.n = t.n"
    )
    assert cur.rowcount == 3
    cur.execute("SELECT SUM(v), COUNT(*) FROM dbo.pytds_cte")
    assert cur.fetchone() == (60, 10)
    cur.execute("DROP TABLE dbo.pytds_cte")


def test_cte_as_dml_target_and_json_object(conn):
    """The dedupe idiom (a CTE as the DELETE target), an UPDATE through a TOP ... ORDER BY
    CTE, a positioned UPDATE through a cursor, and JSON_OBJECT, over TDS."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_dedupe') IS NOT NULL DROP TABLE dbo.pytds_dedupe")
    cur.execute("CREATE TABLE dbo.pytds_dedupe (id int IDENTITY PRIMARY KEY, k int, x int NULL)")
    cur.execute("INSERT INTO dbo.pytds_dedupe (k) VALUES (1), (1), (2), (2), (2), (3)")
    cur.execute(
        "WITH d AS (SELECT ROW_NUMBER() OVER (PARTITION BY k ORDER BY id) AS rn FROM dbo.pytds_dedupe) "
        "DELETE FROM d WHERE rn > 1"
    )
    assert cur.rowcount == 3
    cur.execute("WITH c AS (SELECT TOP (2) * FROM dbo.pytds_dedupe ORDER BY id DESC) UPDATE c SET x = %s", (7,))
    assert cur.rowcount == 2
    cur.execute("SELECT k, x FROM dbo.pytds_dedupe ORDER BY k")
    assert cur.fetchall() == [(1, None), (2, 7), (3, 7)]
    cur.execute(
        "DECLARE c CURSOR KEYSET FOR SELECT k FROM dbo.pytds_dedupe ORDER BY k; OPEN c; FETCH NEXT FROM c; "
        "UPDATE dbo.pytds_dedupe SET x = 0 WHERE CURRENT OF c; CLOSE c; DEALLOCATE c"
    )
    cur.execute("SELECT x FROM dbo.pytds_dedupe WHERE k = 1")
    assert cur.fetchone() == (0,)
    cur.execute("SELECT JSON_OBJECT('k': k, 'x': x ABSENT ON NULL) FROM dbo.pytds_dedupe WHERE k = 3")
    assert cur.fetchone() == ('{"k":3,"x":7}',)
    cur.execute("DROP TABLE dbo.pytds_dedupe")


def test_types_xml_methods(conn):
    """An xml column round-trips in its stored form; value() arrives typed, nodes() shreds."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_xml') IS NOT NULL DROP TABLE dbo.pytds_xml")
    cur.execute("CREATE TABLE dbo.pytds_xml (id int PRIMARY KEY, ed xml)")
    doc = (
        '<event name="checkpoint_end" timestamp="2020-01-20T00:19:33.644Z">\n'
        '  <data name="duration"><value>123</value></data>\n'
        '  <data name="database_id"><value>19</value></data>\n'
        "</event>"
    )
    cur.execute("INSERT INTO dbo.pytds_xml VALUES (%s, %s)", (1, doc))
    cur.execute("SELECT ed FROM dbo.pytds_xml")
    assert cur.fetchone()[0] == (
        '<event name="checkpoint_end" timestamp="2020-01-20T00:19:33.644Z">'
        '<data name="duration"><value>123</value></data>'
        '<data name="database_id"><value>19</value></data></event>'
    )
    cur.execute(
        "SELECT ed.value('(event/data[@name=\"duration\"]/value)[1]', 'bigint'),"
        " ed.value('(event/@timestamp)[1]', 'datetime2(3)'), ed.exist('event/data') FROM dbo.pytds_xml"
    )
    duration, ts, has_data = cur.fetchone()
    assert duration == 123 and isinstance(duration, int)
    assert ts == datetime.datetime(2020, 1, 20, 0, 19, 33, 644000)
    assert has_data is True
    cur.execute(
        "SELECT d.c.value('@name', 'nvarchar(50)'), d.c.value('(value)[1]', 'int')"
        " FROM dbo.pytds_xml CROSS APPLY ed.nodes('/event/data') AS d(c)"
    )
    assert cur.fetchall() == [("duration", 123), ("database_id", 19)]
    with pytest.raises(pytds.Error) as e:
        cur.execute("SELECT ed.value('event/@timestamp', 'datetime') FROM dbo.pytds_xml")
    assert e.value.msg_no == 2389
    cur.execute("DROP TABLE dbo.pytds_xml")


def test_dml_merge(conn):
    """MERGE over TCP: a parameterized upsert's row count, then OUTPUT $action."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_m') IS NOT NULL DROP TABLE dbo.pytds_m")
    cur.execute("CREATE TABLE dbo.pytds_m (id int PRIMARY KEY, n int NOT NULL)")
    cur.execute("INSERT INTO dbo.pytds_m VALUES (1, 10)")
    cur.execute(
        "MERGE dbo.pytds_m AS t USING (VALUES (%s, %s), (%s, %s)) AS s(id, n) ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET n = t.n + s.n "
        "WHEN NOT MATCHED THEN INSERT (id, n) VALUES (s.id, s.n);",
        (1, 5, 2, 7),
    )
    assert cur.rowcount == 2
    cur.execute(
        "MERGE dbo.pytds_m AS t USING (SELECT 2 AS id) AS s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE OUTPUT $action, deleted.id;"
    )
    assert cur.fetchall() == [("DELETE", 2)]
    cur.execute("SELECT id, n FROM dbo.pytds_m ORDER BY id")
    assert cur.fetchall() == [(1, 15)]
    cur.execute("DROP TABLE dbo.pytds_m")

def test_dml_cursor_loop(conn):
    """A T-SQL cursor loop in one batch: the FETCH result sets (no INTO) and the final
    SELECT arrive in order, and a loop with INTO adds up what it fetched."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_cur') IS NOT NULL DROP TABLE dbo.pytds_cur")
    cur.execute("CREATE TABLE dbo.pytds_cur (id int PRIMARY KEY, name nvarchar(20) NOT NULL)")
    cur.execute("INSERT INTO dbo.pytds_cur VALUES (1, N'one'), (2, N'two'), (3, N'three')")
    cur.execute(
        "SET NOCOUNT ON; DECLARE c CURSOR LOCAL FOR SELECT id, name FROM dbo.pytds_cur ORDER BY id; "
        "OPEN c; FETCH NEXT FROM c; WHILE @@FETCH_STATUS = 0 FETCH NEXT FROM c; "
        "CLOSE c; DEALLOCATE c; SELECT @@FETCH_STATUS AS st"
    )
    fetched = []
    while True:
        fetched.append(cur.fetchall())
        if not cur.nextset():
            break
    assert fetched == [[(1, "one")], [(2, "two")], [(3, "three")], [], [(-1,)]]
    cur.execute(
        "DECLARE @id int, @sum int = 0, @names nvarchar(100) = N'', @n nvarchar(20); "
        "DECLARE c CURSOR LOCAL FAST_FORWARD FOR SELECT id, name FROM dbo.pytds_cur ORDER BY id DESC; "
        "OPEN c; FETCH NEXT FROM c INTO @id, @n; "
        "WHILE @@FETCH_STATUS = 0 BEGIN SET @sum += @id; SET @names += @n + N','; "
        "FETCH NEXT FROM c INTO @id, @n; END; "
        "CLOSE c; DEALLOCATE c; SELECT @sum, @names"
    )
    assert cur.fetchall() == [(6, "three,two,one,")]
    cur.execute("DROP TABLE dbo.pytds_cur")


def test_params(conn):
    # pytds sends parameters through sp_executesql (an RPC with typed parameters).
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
        pytds.Binary(b"\x00\xff"),
        uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF"),
    )
    cur.execute("SELECT " + ", ".join(["%s"] * len(values)), values)
    row = cur.fetchone()
    assert row == values
    assert type(row[9]) is bytes and type(row[6]) is bool
    cur.execute("SELECT name FROM sys.databases WHERE name = %(db)s OR database_id = %(id)s ORDER BY name", {"db": "master", "id": -1})
    assert cur.fetchall() == [("master",)]


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
    cur.execute("INSERT INTO #r VALUES (2)")
    c.commit()
    cur.execute("SELECT x FROM #r")
    assert cur.fetchall() == [(2,)]
    c.close()



def test_rollback_after_log_full(conn):
    """A transaction that fills a log that may not grow gets 9002 over TDS, still rolls
    back, and the database is consistent and usable at once (no restart)."""
    cur = conn.cursor()
    db = "pytds_logfull"
    cur.execute(f"IF DB_ID('{db}') IS NOT NULL DROP DATABASE {db}")
    cur.execute(
        f"CREATE DATABASE {db} ON (NAME = {db}, FILENAME = 'C:\\{db}.mdf', SIZE = 8MB) "
        f"LOG ON (NAME = {db}_log, FILENAME = 'C:\\{db}.ldf', SIZE = 1MB, FILEGROWTH = 0)"
    )
    cur.execute(f"USE {db}")
    cur.execute("CREATE TABLE dbo.t (id int PRIMARY KEY, pad char(800) NOT NULL DEFAULT 'x')")
    cur.execute("BEGIN TRANSACTION")
    inserted = 0
    with pytest.raises(pytds.Error) as e:
        for i in range(1, 20000):
            cur.execute("INSERT INTO dbo.t (id) VALUES (%s)", (i,))
            inserted += 1
    assert e.value.msg_no == 9002
    assert inserted > 100
    cur.execute("ROLLBACK")
    cur.execute("SELECT @@TRANCOUNT, (SELECT COUNT(*) FROM dbo.t)")
    assert cur.fetchone() == (0, 0)
    cur.execute(f"DBCC CHECKDB ({db}) WITH NO_INFOMSGS")
    cur.execute("CHECKPOINT")
    cur.execute("INSERT INTO dbo.t (id) VALUES (1)")
    cur.execute("SELECT COUNT(*) FROM dbo.t")
    assert cur.fetchone()[0] == 1
    cur.execute("USE master")
    cur.execute(f"DROP DATABASE {db}")

def test_types(conn):
    cur = conn.cursor()
    cur.execute(TYPES_QUERY)
    check_types_row(cur.fetchone())


def test_types_sql_variant(conn):
    cur = conn.cursor()
    cur.execute(
        "SELECT v FROM (VALUES (1, CAST(42 AS sql_variant)), (2, CAST(N'héllo' AS nvarchar(10))),"
        " (3, CAST('2024-05-06 07:08:09.1234567' AS datetime2)), (4, CAST(123.45 AS decimal(10, 2))),"
        " (5, CAST('6F9619FF-8B86-D011-B42D-00C04FD430C8' AS uniqueidentifier)), (6, NULL)) AS t(id, v) ORDER BY id"
    )
    assert [r[0] for r in cur.fetchall()] == [
        42,
        "héllo",
        datetime.datetime(2024, 5, 6, 7, 8, 9, 123456),
        decimal.Decimal("123.45"),
        uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FD430C8"),
        None,
    ]


def test_types_text_ntext_image(conn):
    """text, ntext and image columns read back through their own TDS types (TEXTTYPE,
    NTEXTTYPE, IMAGETYPE with text pointers), values past 8000 bytes included, and
    parameters sent as those types."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('pytds_lob') IS NOT NULL DROP TABLE pytds_lob")
    cur.execute("CREATE TABLE pytds_lob (id int PRIMARY KEY, t text NULL, nt ntext NULL, im image NULL)")
    big = "x" * 9000
    cur.execute(
        "INSERT INTO pytds_lob VALUES (1, 'hello', N'wörld', 0x0102), (2, NULL, NULL, NULL),"
        " (3, REPLICATE(CAST('x' AS varchar(max)), 9000), REPLICATE(CAST(N'é' AS nvarchar(max)), 5000), 0x)"
    )
    cur.execute(
        "INSERT INTO pytds_lob VALUES (4, %s, %s, %s)",
        (
            pytds.tds_base.Param(type=pytds.tds_types.TextType(), value="from a text parameter"),
            pytds.tds_base.Param(type=pytds.tds_types.NTextType(), value="ntext ü"),
            pytds.tds_base.Param(type=pytds.tds_types.ImageType(), value=b"\x00\xff"),
        ),
    )
    cur.execute("SELECT id, t, nt, im FROM pytds_lob ORDER BY id")
    assert [d[1] for d in cur.description[1:]] == [0x23, 0x63, 0x22]  # TEXT, NTEXT, IMAGE
    assert cur.fetchall() == [
        (1, "hello", "wörld", b"\x01\x02"),
        (2, None, None, None),
        (3, big, "é" * 5000, b""),
        (4, "from a text parameter", "ntext ü", b"\x00\xff"),
    ]
    with pytest.raises(pytds.Error) as e:
        cur.execute("SELECT id FROM pytds_lob WHERE t = 'hello'")
    assert e.value.msg_no == 402
    cur.execute("DROP TABLE pytds_lob")


def test_error_number_and_line(conn):
    cur = conn.cursor()
    with pytest.raises(pytds.ProgrammingError) as e:
        cur.execute("/* the error is on line 2 */\nSELECT * FROM no_such_table")
    assert e.value.msg_no == 208
    assert e.value.line == 2
    assert "no_such_table" in e.value.text
    cur.execute("SELECT 2")
    assert cur.fetchone()[0] == 2


def test_error_scope_and_uncommittable_transaction(conn):
    """A conversion failure ends the batch and rolls the transaction back; in TRY it
    dooms it (XACT_STATE() -1, writes and COMMIT refused with 3930, rolled back with
    3998 at the end of the batch); a missing table in a procedure ends only the
    procedure."""
    cur = conn.cursor()

    def run_all(sql):
        """Runs a batch and reads every result, so errors after the first one surface."""
        rows = []
        cur.execute(sql)
        while True:
            if cur.description:
                rows += cur.fetchall()
            if not cur.nextset():
                return rows

    run_all("IF OBJECT_ID('dbo.pytds_scope') IS NOT NULL DROP TABLE dbo.pytds_scope")
    run_all("CREATE TABLE dbo.pytds_scope (x int)")
    with pytest.raises(pytds.DatabaseError) as e:
        run_all("BEGIN TRANSACTION; INSERT dbo.pytds_scope VALUES (1); DECLARE @n int = 'x'; SELECT 'not reached'")
    assert e.value.msg_no == 245
    assert run_all("SELECT @@TRANCOUNT, (SELECT COUNT(*) FROM dbo.pytds_scope)") == [(0, 0)]
    # In CATCH: XACT_STATE() -1, and a write and COMMIT each refused with 3930.
    assert run_all(
        "BEGIN TRANSACTION; BEGIN TRY DECLARE @n int = 'x'; END TRY "
        "BEGIN CATCH SELECT XACT_STATE(), ERROR_NUMBER(); "
        "BEGIN TRY INSERT dbo.pytds_scope VALUES (2); END TRY BEGIN CATCH SELECT ERROR_NUMBER(); END CATCH; "
        "BEGIN TRY COMMIT; END TRY BEGIN CATCH SELECT ERROR_NUMBER(), @@TRANCOUNT; END CATCH; "
        "ROLLBACK; END CATCH; SELECT @@TRANCOUNT"
    ) == [(-1, 245), (3930,), (3930, 1), (0,)]
    # Left open, the doomed transaction is rolled back when the batch ends (3998).
    with pytest.raises(pytds.DatabaseError) as e:
        run_all("BEGIN TRANSACTION; BEGIN TRY DECLARE @n int = 'x'; END TRY BEGIN CATCH SELECT XACT_STATE(); END CATCH")
    assert e.value.msg_no == 3998
    assert run_all("SELECT @@TRANCOUNT, XACT_STATE()") == [(0, 0)]
    run_all("IF OBJECT_ID('dbo.pytds_scope_p') IS NOT NULL DROP PROCEDURE dbo.pytds_scope_p")
    run_all("CREATE PROCEDURE dbo.pytds_scope_p AS SELECT * FROM dbo.no_such_table")
    with pytest.raises(pytds.DatabaseError) as e:
        run_all("EXEC dbo.pytds_scope_p; INSERT dbo.pytds_scope VALUES (9)")
    assert e.value.msg_no == 208
    # The caller went on after the procedure's error.
    assert run_all("SELECT COUNT(*) FROM dbo.pytds_scope WHERE x = 9") == [(1,)]
    run_all("DROP PROCEDURE dbo.pytds_scope_p; DROP TABLE dbo.pytds_scope")


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


def test_bulk_copy(conn):
    """cursor.copy_to: INSERT BULK and the bulk-load message; defaults, KEEP_NULLS, errors."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_bulk') IS NOT NULL DROP TABLE dbo.pytds_bulk")
    cur.execute(
        "CREATE TABLE dbo.pytds_bulk (id int IDENTITY PRIMARY KEY, name nvarchar(20) NOT NULL UNIQUE,"
        " n int DEFAULT 5, at datetime2 NULL)"
    )
    # Column names only: pytds sends every value as nvarchar(4000); the server converts.
    cur.copy_to(
        table_or_view="pytds_bulk",
        columns=["name", "n", "at"],
        data=[("a", "1", None), ("b", None, "2024-01-02 03:04:05"), ("c", "3", None)],
        tablock=True,
    )
    cur.copy_to(table_or_view="pytds_bulk", columns=["name", "n"], data=[("d", None)], keep_nulls=True)
    cur.execute("SELECT id, name, n, at FROM dbo.pytds_bulk ORDER BY id")
    assert cur.fetchall() == [
        (1, "a", 1, None),
        (2, "b", 5, datetime.datetime(2024, 1, 2, 3, 4, 5)),
        (3, "c", 3, None),
        (4, "d", None, None),
    ]
    # A duplicate rolls the whole load back; the connection goes on.
    with pytest.raises(pytds.IntegrityError) as e:
        cur.copy_to(table_or_view="pytds_bulk", columns=["name"], data=[("e",), ("a",)])
    assert e.value.msg_no == 2627
    cur.execute("SELECT COUNT(*) FROM dbo.pytds_bulk")
    assert cur.fetchone()[0] == 4
    cur.execute("DROP TABLE dbo.pytds_bulk")


def test_tvp(conn):
    """A table-valued parameter (pytds.TableValuedParam) to a procedure."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.pytds_tvp_sum') IS NOT NULL DROP PROCEDURE dbo.pytds_tvp_sum")
    cur.execute("DROP TYPE IF EXISTS dbo.pytds_pairs")
    cur.execute("CREATE TYPE dbo.pytds_pairs AS TABLE (k int PRIMARY KEY, v nvarchar(20))")
    cur.execute(
        "CREATE PROCEDURE dbo.pytds_tvp_sum @rows dbo.pytds_pairs READONLY AS"
        " SELECT COUNT(*), SUM(k), MAX(v) FROM @rows"
    )
    tvp = pytds.TableValuedParam(type_name="dbo.pytds_pairs", rows=[(1, "x"), (2, "y"), (3, None)])
    cur.callproc("dbo.pytds_tvp_sum", (tvp,))
    assert cur.fetchall() == [(3, 6, "y")]
    cur.execute("SELECT COUNT(*) FROM %s", (pytds.TableValuedParam(type_name="dbo.pytds_pairs", rows=[(9, "z")]),))
    assert cur.fetchall() == [(1,)]
    # The type a procedure's parameter uses cannot be dropped (3732); a procedure body
    # that changes its READONLY parameter is not created (10700); the session goes on.
    with pytest.raises(pytds.Error) as e:
        cur.execute("DROP TYPE dbo.pytds_pairs")
    assert e.value.msg_no == 3732
    with pytest.raises(pytds.Error) as e:
        cur.execute("CREATE PROCEDURE dbo.pytds_tvp_change @rows dbo.pytds_pairs READONLY AS\nDELETE @rows")
    assert e.value.msg_no == 10700 and e.value.line == 2
    cur.execute("DROP PROCEDURE dbo.pytds_tvp_sum")
    cur.execute("DROP TYPE dbo.pytds_pairs")


def test_for_json_result_arrives_whole(conn):
    # About 40 KB of JSON: more than one TDS packet and far more than the 2,033-character
    # rows SQL Server splits a FOR JSON result into; clients join the rows, so joining
    # them is the portable way to read it (Mesquite sends one row).
    import json

    cur = conn.cursor()
    cur.execute("CREATE TABLE #fj (id int PRIMARY KEY, name nvarchar(40), price decimal(9, 2), ok bit)")
    cur.execute(
        "DECLARE @i int = 1; WHILE @i <= 600 BEGIN "
        "INSERT INTO #fj VALUES (@i, CONCAT(N'item \"', @i, N'\" é'), @i * 1.25, @i & 1); SET @i += 1; END"
    )
    cur.execute("SELECT id, name AS [info.name], price AS [info.price], ok FROM #fj ORDER BY id FOR JSON PATH")
    assert [d[0] for d in cur.description] == ["JSON_F52E2B61-18A1-11d1-B105-00805F49916B"]
    text = "".join(r[0] for r in cur.fetchall())
    assert len(text) > 30000
    doc = json.loads(text)
    assert len(doc) == 600
    assert doc[0] == {"id": 1, "info": {"name": 'item "1" é', "price": 1.25}, "ok": True}
    assert doc[599]["info"]["price"] == 750.0 and doc[599]["ok"] is False
    # The DBA idiom: a comma list through FOR XML PATH(''), XML escaping included.
    cur.execute("SELECT STUFF((SELECT ',' + CAST(id AS varchar(10)) + '&' FROM #fj WHERE id <= 3 ORDER BY id FOR XML PATH('')), 1, 1, '')")
    assert cur.fetchone()[0] == "1&amp;,2&amp;,3&amp;"


def test_for_xml_explicit(conn):
    """FOR XML EXPLICIT's universal table, and its error for a parent not yet open."""
    cur = conn.cursor()
    cur.execute(
        "SELECT 1 AS Tag, NULL AS Parent, 'C1' AS [Customer!1!id], NULL AS [Order!2!id], NULL AS [Order!2!note!element] "
        "UNION ALL SELECT 2, 1, 'C1', 'O1', N'a < b' "
        "UNION ALL SELECT 2, 1, 'C1', 'O2', NULL "
        "ORDER BY [Customer!1!id], [Order!2!id] FOR XML EXPLICIT"
    )
    text = "".join(r[0] for r in cur.fetchall())
    assert text == '<Customer id="C1"><Order id="O1"><note>a &lt; b</note></Order><Order id="O2"/></Customer>'
    # Found while the rows are read, so it arrives after the column metadata.
    with pytest.raises(pytds.Error) as e:
        cur.execute("SELECT 2 AS Tag, 1 AS Parent, 1 AS [a!1!x], 2 AS [b!2!y] FOR XML EXPLICIT")
        cur.fetchall()
    assert e.value.msg_no == 6833
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_column_collation(conn):
    """A column's COLLATE: a parameter compared with it takes its collation, and the
    COLMETADATA collation pytds reads is the column's (Latin1_General_CS_AS: LCID 0x409,
    sort id 0, case-sensitive)."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE #cs (id int PRIMARY KEY, n varchar(20) COLLATE Latin1_General_CS_AS)")
    cur.execute("INSERT #cs VALUES (1, 'anna'), (2, 'Anna')")
    cur.execute("SELECT id FROM #cs WHERE n = %s ORDER BY id", ("Anna",))
    assert cur.fetchall() == [(2,)]
    cur.execute("SELECT n FROM #cs WHERE id = 1")
    assert cur.fetchall() == [("anna",)]
    col = conn._tds_socket.main_session.res_info.columns[0]
    coll = col.serializer._collation
    assert (coll.lcid, coll.sort_id, coll.ignore_case) == (0x409, 0, False)


def test_database_collation(conn):
    """A case-sensitive database: USE (and a login into it) sends its collation in the
    SQL collation ENVCHANGE; literals and parameters compare case-sensitively there, a
    new column takes the database collation (also in COLMETADATA), and a #temp table
    (tempdb's collation) joined to it is SQL Server's 468."""
    cur = conn.cursor()
    db = "pytds_cs"
    cur.execute(f"IF DB_ID('{db}') IS NOT NULL DROP DATABASE {db}")
    cur.execute(f"CREATE DATABASE {db} COLLATE Latin1_General_CS_AS")
    try:
        cur.execute(f"USE {db}")
        coll = conn._tds_socket.collation
        assert (coll.lcid, coll.sort_id, coll.ignore_case) == (0x409, 0, False)
        cur.execute("SELECT CASE WHEN 'a' = 'A' THEN 1 ELSE 0 END, CASE WHEN %s = 'ABC' THEN 1 ELSE 0 END", ("abc",))
        assert cur.fetchall() == [(0, 0)]
        cur.execute("CREATE TABLE dbo.t (id int PRIMARY KEY, n varchar(20))")
        cur.execute("INSERT dbo.t VALUES (1, 'anna'), (2, 'Anna')")
        cur.execute("SELECT id FROM dbo.t WHERE n = %s ORDER BY id", ("Anna",))
        assert cur.fetchall() == [(2,)]
        cur.execute("SELECT n FROM dbo.t WHERE id = 1")
        assert cur.fetchall() == [("anna",)]
        c = conn._tds_socket.main_session.res_info.columns[0].serializer._collation
        assert (c.lcid, c.sort_id, c.ignore_case) == (0x409, 0, False)
        cur.execute("SELECT collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t') AND name = 'n'")
        assert cur.fetchall() == [("Latin1_General_CS_AS",)]
        cur.execute("CREATE TABLE #tmp (n varchar(20))")
        with pytest.raises(pytds.Error) as e:
            cur.execute("SELECT t.id FROM dbo.t t JOIN #tmp ON t.n = #tmp.n")
        assert e.value.msg_no == 468
        cur.execute("DROP TABLE #tmp")
        other = connect(database=db)
        try:
            coll = other._tds_socket.collation
            assert (coll.lcid, coll.sort_id, coll.ignore_case) == (0x409, 0, False)
        finally:
            other.close()
        cur.execute("USE master")
        coll = conn._tds_socket.collation
        assert (coll.lcid, coll.sort_id, coll.ignore_case) == (0x409, 52, True)
    finally:
        cur.execute("USE master")
        # The other connection's session may still be closing on the server (3702).
        for _ in range(50):
            try:
                cur.execute(f"DROP DATABASE {db}")
                break
            except pytds.Error as e:
                if e.msg_no != 3702:
                    raise
                time.sleep(0.1)


def test_explicit_collate(conn):
    """COLLATE in expressions: a parameter compared case-sensitively, sorting in code
    point order, and 468 for two different explicit collations."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE #names (id int PRIMARY KEY, n nvarchar(20))")
    cur.execute("INSERT #names VALUES (1, N'anna'), (2, N'Anna'), (3, N'ANNA'), (4, N'Bob')")
    cur.execute("SELECT id FROM #names WHERE n COLLATE Latin1_General_CS_AS = %s ORDER BY id", ("Anna",))
    assert cur.fetchall() == [(2,)]
    cur.execute("SELECT id FROM #names WHERE n = %s ORDER BY id", ("Anna",))
    assert cur.fetchall() == [(1,), (2,), (3,)]
    cur.execute("SELECT id FROM #names ORDER BY n COLLATE Latin1_General_BIN2")
    assert cur.fetchall() == [(3,), (2,), (4,), (1,)]
    with pytest.raises(pytds.Error) as e:
        cur.execute("SELECT 1 WHERE N'a' COLLATE Latin1_General_CS_AS = N'a' COLLATE Latin1_General_BIN2")
    assert e.value.msg_no == 468
    with pytest.raises(pytds.Error) as e:
        cur.execute("SELECT N'a' COLLATE Klingon_CI_AS")
    assert e.value.msg_no == 448
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_code_page_collations(conn):
    """varchar under a Thai or Cyrillic collation: the server sends the column's
    collation (Thai: LCID 0x41E) and the bytes in its code page (874, 1251), which pytds
    decodes back to the text; characters outside the code page arrive as '?'."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE #th (id int PRIMARY KEY, t varchar(20) COLLATE Thai_CI_AS, c varchar(20) COLLATE Cyrillic_General_CS_AS)")
    cur.execute("INSERT #th VALUES (1, N'สวัสดี', N'Привет'), (2, N'Привет', N'สวัสดี')")
    cur.execute("SELECT t, c FROM #th ORDER BY id")
    assert cur.fetchall() == [("สวัสดี", "Привет"), ("??????", "??????")]
    cols = conn._tds_socket.main_session.res_info.columns
    assert [c.serializer._collation.lcid for c in cols] == [0x41E, 0x419]
    cur.execute("SELECT CAST(CAST(N'สวัสดี' AS nvarchar(max)) COLLATE Thai_CI_AI AS varchar(max))")
    assert cur.fetchall() == [("สวัสดี",)]


def test_keyset_cursor_and_fk_cascade_checks(conn):
    """Over TCP: a KEYSET cursor reports a row deleted since OPEN as -2; a second cascade
    path to a table is refused with 1785 then 1750 and the server keeps serving."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE #k (id int PRIMARY KEY, v int)")
    cur.execute("INSERT #k VALUES (1, 10), (2, 20), (3, 30)")
    cur.execute(
        "SET NOCOUNT ON; DECLARE c CURSOR KEYSET FOR SELECT id, v FROM #k ORDER BY id; OPEN c;"
        " DECLARE @id int, @v int, @s1 int, @s2 int;"
        " FETCH NEXT FROM c INTO @id, @v; SET @s1 = @@FETCH_STATUS;"
        " DELETE #k WHERE id = 2; UPDATE #k SET v = 31 WHERE id = 3;"
        " FETCH NEXT FROM c INTO @id, @v; SET @s2 = @@FETCH_STATUS;"
        " FETCH NEXT FROM c INTO @id, @v;"
        " SELECT @s1, @s2, @@FETCH_STATUS, @id, @v, @@CURSOR_ROWS; CLOSE c; DEALLOCATE c;"
    )
    assert cur.fetchall() == [(0, -2, 0, 3, 31, 3)]
    cur.execute("CREATE TABLE dbo.pytds_fk_p (id int PRIMARY KEY)")
    try:
        with pytest.raises(pytds.Error) as e:
            cur.execute(
                "CREATE TABLE dbo.pytds_fk_c (id int PRIMARY KEY,"
                " a int REFERENCES dbo.pytds_fk_p (id) ON DELETE CASCADE,"
                " b int REFERENCES dbo.pytds_fk_p (id) ON DELETE CASCADE)"
            )
        assert e.value.msg_no in (1785, 1750)
        cur.execute("SELECT OBJECT_ID('dbo.pytds_fk_c')")
        assert cur.fetchone() == (None,)
    finally:
        cur.execute("DROP TABLE dbo.pytds_fk_p")


def test_locking_table_hints(conn):
    """NOLOCK and READPAST over TDS, beside a second connection's open transaction."""
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.hint_q') IS NOT NULL DROP TABLE dbo.hint_q")
    cur.execute("CREATE TABLE dbo.hint_q (id int PRIMARY KEY, v int NOT NULL)")
    cur.execute("INSERT dbo.hint_q VALUES (1, 10), (2, 20), (3, 30)")
    writer = connect(autocommit=False)
    try:
        w = writer.cursor()
        w.execute("UPDATE dbo.hint_q SET v = -20 WHERE id = 2")
        cur.execute("SET LOCK_TIMEOUT 300")
        with pytest.raises(pytds.Error) as e:
            # The error may follow the result's column metadata: it surfaces on fetch.
            cur.execute("SELECT v FROM dbo.hint_q WHERE id = 2")
            cur.fetchall()
        assert e.value.msg_no == 1222
        cur.execute("SELECT v FROM dbo.hint_q WITH (NOLOCK) WHERE id = 2")
        assert cur.fetchall() == [(-20,)]
        cur.execute("SELECT id FROM dbo.hint_q WITH (READPAST) ORDER BY id")
        assert cur.fetchall() == [(1,), (3,)]
        writer.rollback()
    finally:
        writer.close()
    cur.execute("SET LOCK_TIMEOUT -1")
    cur.execute("DROP TABLE dbo.hint_q")


def test_double_byte_collations(conn):
    """varchar under Chinese_PRC (code page 936) and Japanese (932): pytds decodes the
    bytes by the column's collation; varchar(4) holds two ideographs (lengths are bytes)."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE #zh (id int PRIMARY KEY, z varchar(4) COLLATE Chinese_PRC_CI_AS, j varchar(10) COLLATE Japanese_CI_AS)")
    cur.execute("INSERT #zh VALUES (1, N'中文', N'日本ｶﾀｶﾅ')")
    cur.execute("SELECT z, j, DATALENGTH(z), DATALENGTH(j) FROM #zh")
    assert cur.fetchall() == [("中文", "日本ｶﾀｶﾅ", 4, 8)]
    cols = conn._tds_socket.main_session.res_info.columns
    assert [c.serializer._collation.lcid for c in cols[:2]] == [0x804, 0x411]
    with pytest.raises(pytds.Error) as e:
        cur.execute("INSERT #zh VALUES (2, N'中文字', N'x')")
    assert e.value.msg_no == 2628
