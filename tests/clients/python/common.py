"""What the Python client suites share: the server address, the query that returns every
supported type and the values a driver must decode it to, and the DDL checks.

The address comes from MESQUITE_HOST / MESQUITE_PORT, the sa password from
MESQUITE_SA_PASSWORD and the server's certificate (PEM) from MESQUITE_SERVER_CERT
(tests/clients/run.sh starts a server and sets them).
"""
import datetime
import decimal
import os
import uuid

HOST = os.environ.get("MESQUITE_HOST", "127.0.0.1")
PORT = int(os.environ.get("MESQUITE_PORT", "1433"))
PASSWORD = os.environ.get("MESQUITE_SA_PASSWORD", "")
SERVER_CERT = os.environ.get("MESQUITE_SERVER_CERT", "")
# The generated certificate's subject alternative name (crates/tds/src/tls.rs): connections
# that verify the host name connect to this name, which resolves to the loopback address.
CERT_HOST = "localhost"

TYPES_QUERY = """SELECT CAST(1 AS bit), CAST(200 AS tinyint), CAST(-3 AS smallint), CAST(4 AS int),
       CAST(5000000000 AS bigint), CAST(1.25 AS decimal(5, 2)), CAST(2.5 AS float),
       CAST(1.5 AS real), CAST(12.3456 AS money), CAST('2024-02-29' AS date),
       CAST('13:14:15.1234567' AS time(7)), CAST('2024-02-29 13:14:15.123' AS datetime),
       CAST('2024-02-29 13:14:15.1234567' AS datetime2(7)),
       CAST('2024-02-29 13:14:15.1234567 +02:00' AS datetimeoffset(7)),
       CAST('abc' AS varchar(10)), CAST(N'ünï' AS nvarchar(10)), CAST('x' AS char(3)),
       CAST(0x0102 AS varbinary(10)), CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier),
       REPLICATE(CAST('z' AS varchar(max)), 9000), CAST(NULL AS int)"""

# Python's datetime has microseconds: the 7th fractional digit is truncated by the driver.
TYPES_EXPECTED = [
    True,
    200,
    -3,
    4,
    5000000000,
    decimal.Decimal("1.25"),
    2.5,
    1.5,
    decimal.Decimal("12.3456"),
    datetime.date(2024, 2, 29),
    datetime.time(13, 14, 15, 123456),
    datetime.datetime(2024, 2, 29, 13, 14, 15, 123000),
    datetime.datetime(2024, 2, 29, 13, 14, 15, 123456),
    datetime.datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    "abc",
    "ünï",
    "x  ",
    b"\x01\x02",
    uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF"),
    "z" * 9000,
    None,
]


def check_types_row(row):
    """Compares a fetched TYPES_QUERY row value by value, with the Python type too (so 1 is
    not taken for True, nor a naive datetime for an aware one)."""
    row = list(row)
    assert len(row) == len(TYPES_EXPECTED)
    for i, (got, want) in enumerate(zip(row, TYPES_EXPECTED)):
        assert type(got) is type(want), f"column {i}: {type(got).__name__} {got!r}, want {want!r}"
        assert got == want, f"column {i}: {got!r}, want {want!r}"
        if isinstance(want, datetime.datetime) and want.tzinfo is not None:
            assert got.utcoffset() == want.utcoffset(), f"column {i}: offset {got.utcoffset()}"


def ddl_statements(prefix):
    """DDL run through a client: a table, an added column, an index and a view."""
    return [
        f"CREATE TABLE dbo.{prefix}_ddl (id int NOT NULL PRIMARY KEY, name nvarchar(20) NULL)",
        f"ALTER TABLE dbo.{prefix}_ddl ADD qty int NULL",
        f"CREATE INDEX ix_{prefix}_ddl_name ON dbo.{prefix}_ddl (name)",
        f"CREATE VIEW dbo.{prefix}_ddl_v AS SELECT id, name FROM dbo.{prefix}_ddl",
    ]


def ddl_columns_query(prefix):
    return (
        "SELECT c.name, t.name, c.max_length, c.is_nullable FROM sys.columns c "
        "JOIN sys.types t ON t.user_type_id = c.user_type_id "
        f"WHERE c.object_id = OBJECT_ID('dbo.{prefix}_ddl') ORDER BY c.column_id"
    )


DDL_COLUMNS_EXPECTED = [("id", "int", 4, False), ("name", "nvarchar", 40, True), ("qty", "int", 4, True)]


def ddl_index_query(prefix):
    return f"SELECT COUNT(*) FROM sys.indexes WHERE object_id = OBJECT_ID('dbo.{prefix}_ddl') AND name = 'ix_{prefix}_ddl_name'"


def ddl_cleanup(prefix):
    return [
        f"IF OBJECT_ID('dbo.{prefix}_ddl_v') IS NOT NULL DROP VIEW dbo.{prefix}_ddl_v",
        f"IF OBJECT_ID('dbo.{prefix}_ddl') IS NOT NULL DROP TABLE dbo.{prefix}_ddl",
    ]


def ddl_gone_query(prefix):
    return f"SELECT CASE WHEN OBJECT_ID('dbo.{prefix}_ddl') IS NULL AND OBJECT_ID('dbo.{prefix}_ddl_v') IS NULL THEN 1 ELSE 0 END"


def write_unrelated_cert(path):
    """Writes a self-signed certificate for CERT_HOST that is not the server's, for the tests
    that a TLS connection verifying against the wrong CA is refused."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CERT_HOST)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(CERT_HOST)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    with open(path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return str(path)
