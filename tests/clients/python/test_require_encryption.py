"""The server's require-encryption option (`mesquite serve --require-encryption`) through
real drivers. tests/clients/suite-encryption.sh starts such a server and runs this file
once per client (MESQUITE_CLIENT = pytds, pymssql or mssql-python); each test counts toward
the require_tls feature of that client.

SQL Server's Force Encryption: a client that offers encryption, or leaves it to the server
(ENCRYPT_OFF), gets a fully encrypted connection; a client that cannot encrypt
(ENCRYPT_NOT_SUP) is refused. Every refusal must leave the server serving.
"""
import os

import pytest

from common import HOST, PASSWORD, PORT, SERVER_CERT

CLIENT = os.environ.get("MESQUITE_CLIENT", "")


def only(client):
    return pytest.mark.skipif(CLIENT != client, reason=f"runs with MESQUITE_CLIENT={client}")


def _roundtrip(c):
    cur = c.cursor()
    cur.execute("SELECT 42, N'secret'")
    assert tuple(cur.fetchone()) == (42, "secret")


@only("pytds")
def test_require_tls_pytds_without_tls_refused():
    import pytds

    with pytest.raises(Exception) as e:
        pytds.connect(dsn=HOST, port=PORT, user="sa", password=PASSWORD, login_timeout=5, autocommit=True).close()
    assert "encrypt" in str(e.value).lower()


@only("pytds")
def test_require_tls_pytds_with_tls():
    import pytds
    import pytds.tls

    c = pytds.connect(
        dsn=HOST, port=PORT, user="sa", password=PASSWORD, cafile=SERVER_CERT, validate_host=False, autocommit=True
    )
    # The whole connection is encrypted, not only the login.
    assert isinstance(c._tds_socket.sock, pytds.tls.EncryptedSocket)
    _roundtrip(c)
    c.close()


def _pymssql(encryption):
    import pymssql

    return pymssql.connect(
        server=HOST, port=str(PORT), user="sa", password=PASSWORD, autocommit=True, login_timeout=5, encryption=encryption
    )


@only("pymssql")
def test_require_tls_pymssql_encryption_off_refused():
    import pymssql

    # FreeTDS "encryption = off" offers no encryption (ENCRYPT_NOT_SUP).
    with pytest.raises(pymssql.OperationalError):
        _pymssql("off").close()


@only("pymssql")
def test_require_tls_pymssql_request_is_encrypted():
    # "request" leaves it to the server (ENCRYPT_OFF), which answers "required".
    c = _pymssql("request")
    _roundtrip(c)
    c.close()


@only("pymssql")
def test_require_tls_pymssql_require():
    c = _pymssql("require")
    _roundtrip(c)
    c.close()


def _mssql_python(extra):
    import mssql_python

    pw = "{" + PASSWORD.replace("}", "}}") + "}"
    return mssql_python.connect(f"Server={HOST},{PORT};UID=sa;PWD={pw};{extra}", autocommit=True, timeout=10)


@only("mssql-python")
def test_require_tls_mssql_python_encrypt_no_still_encrypts():
    # Encrypt=no sends ENCRYPT_OFF; the server requires encryption, so ODBC Driver 18
    # encrypts the connection (and trusts the certificate as asked).
    c = _mssql_python("Encrypt=no;TrustServerCertificate=yes;")
    _roundtrip(c)
    c.close()


@only("mssql-python")
def test_require_tls_mssql_python_encrypt_yes():
    c = _mssql_python("Encrypt=yes;TrustServerCertificate=yes;")
    _roundtrip(c)
    c.close()
