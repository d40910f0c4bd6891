// Real-client tests through Microsoft's mssql-jdbc driver against `mesquite serve`.
//
// The server comes from MESQUITE_HOST / MESQUITE_PORT, the sa password from
// MESQUITE_SA_PASSWORD (tests/clients/run.sh sets them). Each check records one feature
// line "mssql-jdbc<TAB>feature<TAB>pass|FAIL" in $MESQUITE_CLIENT_RESULTS; the program
// prints "N passed, N failed" and exits 1 if any check failed.

import java.io.FileWriter;
import java.io.IOException;
import java.math.BigDecimal;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.microsoft.sqlserver.jdbc.SQLServerException;

public class MesquiteJdbcTest {
    static final String CLIENT = "mssql-jdbc";
    static final String HOST = env("MESQUITE_HOST", "127.0.0.1");
    static final String PORT = env("MESQUITE_PORT", "1433");
    static final String PASSWORD = env("MESQUITE_SA_PASSWORD", "");
    static int passed = 0, failed = 0;

    static String env(String name, String def) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? def : v;
    }

    interface Check {
        void run() throws Exception;
    }

    static void check(String feature, String name, Check c) {
        String result;
        try {
            c.run();
            result = "pass";
            passed++;
            System.out.println("PASS " + name);
        } catch (Throwable e) {
            result = "FAIL";
            failed++;
            System.out.println("FAIL " + name + ": " + e);
            e.printStackTrace(System.out);
        }
        String path = System.getenv("MESQUITE_CLIENT_RESULTS");
        if (path != null && !path.isEmpty()) {
            try (FileWriter w = new FileWriter(path, true)) {
                w.write(CLIENT + "\t" + feature + "\t" + result + "\n");
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static void expect(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    static void expectEq(Object want, Object got, String what) {
        boolean eq = want == null ? got == null : want.equals(got);
        if (!eq) throw new AssertionError(what + ": want <" + want + "> got <" + got + ">");
    }

    static Connection connect(String extra) throws SQLException {
        String url = "jdbc:sqlserver://" + HOST + ":" + PORT + ";databaseName=master;loginTimeout=30;" + extra;
        Properties p = new Properties();
        p.setProperty("user", "sa");
        p.setProperty("password", PASSWORD);
        return DriverManager.getConnection(url, p);
    }

    static final String PLAIN = "encrypt=false";

    static Connection plain() throws SQLException {
        return connect(PLAIN);
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static Object scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            expect(rs.next(), "a row from " + sql);
            return rs.getObject(1);
        }
    }

    public static void main(String[] args) throws Exception {
        check("plain", "plain connection and query", () -> {
            try (Connection c = plain();
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT 1 AS one, N'héllo' AS s")) {
                ResultSetMetaData md = rs.getMetaData();
                expectEq("one", md.getColumnName(1), "column name");
                expectEq("s", md.getColumnName(2), "column name");
                expect(rs.next(), "a row");
                expectEq(1, rs.getInt(1), "one");
                expectEq("héllo", rs.getString(2), "s");
                expect(!rs.next(), "one row only");
                expect(c.getMetaData().getDatabaseProductName().contains("SQL Server"), "product name");
                expectEq("master", c.getCatalog(), "catalog");
            }
        });

        check("tls", "TLS, trustServerCertificate", () -> {
            try (Connection c = connect("encrypt=true;trustServerCertificate=true")) {
                expectEq(42, scalar(c, "SELECT 40 + 2"), "40 + 2");
                String big = (String) scalar(c, "SELECT REPLICATE(CAST('t' AS varchar(max)), 40000)");
                expectEq("t".repeat(40000), big, "40000 chars over TLS");
            }
        });

        check("tls", "TLS, verifying the server certificate against a trust store", () -> {
            String pem = System.getenv("MESQUITE_SERVER_CERT");
            expect(pem != null && !pem.isEmpty(), "MESQUITE_SERVER_CERT is set");
            String store = System.getProperty("mesquite.truststore");
            expect(store != null, "-Dmesquite.truststore is set");
            try (Connection c = connect("encrypt=true;trustServerCertificate=false;hostNameInCertificate=localhost;trustStore="
                    + store + ";trustStorePassword=changeit")) {
                expectEq(7, scalar(c, "SELECT 7"), "SELECT 7");
            }
        });

        check("tls", "TLS, an untrusted certificate is refused", () -> {
            try (Connection c = connect("encrypt=true;trustServerCertificate=false;hostNameInCertificate=localhost")) {
                throw new AssertionError("connected although the certificate is not trusted");
            } catch (SQLServerException e) {
                expect(e.getMessage().toLowerCase().contains("ssl") || e.getMessage().toLowerCase().contains("certif"),
                        "a TLS error: " + e.getMessage());
            }
        });

        boolean[] ddlOk = {false};
        check("ddl", "CREATE TABLE, CREATE INDEX", () -> {
            try (Connection c = plain()) {
                exec(c, "IF OBJECT_ID('dbo.jdbc_t') IS NOT NULL DROP TABLE dbo.jdbc_t");
                exec(c, "CREATE TABLE dbo.jdbc_t (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL, amount decimal(10, 2))");
                exec(c, "CREATE INDEX ix_jdbc_t_name ON dbo.jdbc_t (name)");
                expectEq(3, scalar(c, "SELECT COUNT(*) FROM sys.columns WHERE object_id = OBJECT_ID('dbo.jdbc_t')"), "columns");
                List<String> cols = new ArrayList<>();
                try (Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.jdbc_t') ORDER BY column_id")) {
                    while (rs.next()) cols.add(rs.getString(1));
                }
                expectEq(Arrays.asList("id", "name", "amount"), cols, "columns");
                ddlOk[0] = true;
            }
        });

        check("ddl", "DatabaseMetaData: getColumns, getTables, getPrimaryKeys, getImportedKeys", () -> {
            expect(ddlOk[0], "the table exists");
            try (Connection c = plain()) {
                exec(c, "IF OBJECT_ID('dbo.jdbc_child') IS NOT NULL DROP TABLE dbo.jdbc_child");
                exec(c, "CREATE TABLE dbo.jdbc_child (cid int PRIMARY KEY, parent int REFERENCES dbo.jdbc_t (id) ON DELETE CASCADE)");
                java.sql.DatabaseMetaData md = c.getMetaData();
                // getColumns runs sp_columns_100 into a table variable with a PRECISION column.
                List<String> got = new ArrayList<>();
                try (ResultSet rs = md.getColumns("master", "dbo", "jdbc_t", null)) {
                    while (rs.next()) {
                        got.add(rs.getString("TABLE_SCHEM") + "." + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME")
                                + ":" + rs.getInt("DATA_TYPE") + ":" + rs.getString("TYPE_NAME") + ":" + rs.getInt("COLUMN_SIZE")
                                + ":" + rs.getInt("DECIMAL_DIGITS") + ":" + rs.getInt("NULLABLE") + ":" + rs.getString("IS_NULLABLE")
                                + ":" + rs.getInt("ORDINAL_POSITION") + ":" + rs.getString("IS_AUTOINCREMENT"));
                    }
                }
                expectEq(Arrays.asList(
                        "dbo.jdbc_t.id:4:int identity:10:0:0:NO:1:YES",
                        "dbo.jdbc_t.name:-9:nvarchar:50:0:0:NO:2:NO",
                        "dbo.jdbc_t.amount:3:decimal:10:2:1:YES:3:NO"), got, "getColumns");
                try (ResultSet rs = md.getColumns(null, null, "jdbc_t", "am%")) {
                    expect(rs.next(), "a column matching am%");
                    expectEq("amount", rs.getString("COLUMN_NAME"), "pattern match");
                    expect(!rs.next(), "one column matching am%");
                }
                List<String> tables = new ArrayList<>();
                try (ResultSet rs = md.getTables(null, "dbo", "jdbc%", new String[] {"TABLE"})) {
                    while (rs.next()) tables.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
                }
                expectEq(Arrays.asList("jdbc_child:TABLE", "jdbc_t:TABLE"), tables, "getTables");
                try (ResultSet rs = md.getPrimaryKeys(null, "dbo", "jdbc_t")) {
                    expect(rs.next(), "a primary key column");
                    expectEq("id", rs.getString("COLUMN_NAME"), "primary key column");
                    expectEq(1, rs.getInt("KEY_SEQ"), "KEY_SEQ");
                    expect(!rs.next(), "one primary key column");
                }
                try (ResultSet rs = md.getImportedKeys(null, "dbo", "jdbc_child")) {
                    expect(rs.next(), "an imported key");
                    expectEq("jdbc_t.id -> jdbc_child.parent", rs.getString("PKTABLE_NAME") + "." + rs.getString("PKCOLUMN_NAME")
                            + " -> " + rs.getString("FKTABLE_NAME") + "." + rs.getString("FKCOLUMN_NAME"), "foreign key");
                    expectEq(java.sql.DatabaseMetaData.importedKeyCascade, rs.getInt("DELETE_RULE"), "DELETE_RULE");
                    expect(!rs.next(), "one imported key");
                }
                exec(c, "DROP TABLE dbo.jdbc_child");
            }
        });

        check("dml", "INSERT, UPDATE, DELETE with update counts, generated keys", () -> {
            expect(ddlOk[0], "the table exists");
            try (Connection c = plain(); Statement s = c.createStatement()) {
                expectEq(3, s.executeUpdate("INSERT INTO dbo.jdbc_t (name, amount) VALUES (N'alpha', 12.50), (N'beta', 1), (N'gamma', NULL)"), "insert count");
                expectEq(2, s.executeUpdate("UPDATE dbo.jdbc_t SET amount = amount + 1 WHERE amount IS NOT NULL"), "update count");
                expectEq(1, s.executeUpdate("DELETE FROM dbo.jdbc_t WHERE name = N'gamma'"), "delete count");
                expectEq(1, s.executeUpdate("INSERT INTO dbo.jdbc_t (name) VALUES (N'delta')", Statement.RETURN_GENERATED_KEYS), "insert count");
                try (ResultSet k = s.getGeneratedKeys()) {
                    expect(k.next(), "a generated key");
                    expectEq(4L, k.getLong(1), "generated identity");
                }
                List<String> got = new ArrayList<>();
                try (ResultSet rs = s.executeQuery("SELECT name, amount FROM dbo.jdbc_t ORDER BY id")) {
                    while (rs.next()) got.add(rs.getString(1) + "=" + rs.getBigDecimal(2));
                }
                expectEq(Arrays.asList("alpha=13.50", "beta=2.00", "delta=null"), got, "rows");
                // A batch of statements.
                s.addBatch("INSERT INTO dbo.jdbc_t (name) VALUES (N'e1')");
                s.addBatch("INSERT INTO dbo.jdbc_t (name) VALUES (N'e2')");
                int[] counts = s.executeBatch();
                expect(Arrays.equals(new int[] {1, 1}, counts), "batch counts " + Arrays.toString(counts));
            }
        });

        check("ddl", "DROP TABLE", () -> {
            try (Connection c = plain()) {
                exec(c, "DROP TABLE dbo.jdbc_t");
                expectEq(null, scalar(c, "SELECT OBJECT_ID('dbo.jdbc_t')"), "dropped");
            }
        });

        check("params", "PreparedStatement parameters", () -> {
            try (Connection c = plain()) {
                exec(c, "CREATE TABLE #p (id int, name nvarchar(50), amount decimal(10, 2), at datetime2(7), blob varbinary(max), flag bit)");
                LocalDateTime at = LocalDateTime.of(2024, 2, 29, 13, 14, 15, 123456700);
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO #p VALUES (?, ?, ?, ?, ?, ?)")) {
                    String[] names = {"alpha", "beta", "gämma"};
                    for (int i = 0; i < names.length; i++) {
                        ps.setInt(1, i + 1);
                        ps.setString(2, names[i]);
                        ps.setBigDecimal(3, new BigDecimal("12.50"));
                        ps.setObject(4, at);
                        ps.setBytes(5, new byte[] {(byte) i, (byte) 0xff});
                        ps.setBoolean(6, i % 2 == 0);
                        ps.addBatch();
                    }
                    int[] counts = ps.executeBatch();
                    expect(Arrays.equals(new int[] {1, 1, 1}, counts), "batch counts " + Arrays.toString(counts));
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT id, name, amount, at, blob, flag FROM #p WHERE name = ? AND id > ?")) {
                    ps.setString(1, "gämma");
                    ps.setInt(2, 1);
                    for (int round = 0; round < 2; round++) { // prepared once, executed twice
                        try (ResultSet rs = ps.executeQuery()) {
                            expect(rs.next(), "a row");
                            expectEq(3, rs.getInt(1), "id");
                            expectEq("gämma", rs.getString(2), "name");
                            expectEq(new BigDecimal("12.50"), rs.getBigDecimal(3), "amount");
                            expectEq(at, rs.getObject(4, LocalDateTime.class), "at");
                            expect(Arrays.equals(new byte[] {2, (byte) 0xff}, rs.getBytes(5)), "blob");
                            expectEq(true, rs.getBoolean(6), "flag");
                            expect(!rs.next(), "one row");
                        }
                    }
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT CASE WHEN ? IS NULL THEN 1 ELSE 0 END, LEN(?)")) {
                    ps.setNull(1, Types.INTEGER);
                    ps.setString(2, "ab".repeat(5000));
                    try (ResultSet rs = ps.executeQuery()) {
                        expect(rs.next(), "a row");
                        expectEq(1, rs.getInt(1), "NULL parameter");
                        expectEq(10000, rs.getInt(2), "long parameter");
                    }
                }
            }
        });

        check("proc_output", "CallableStatement OUTPUT parameters and return status", () -> {
            try (Connection c = plain()) {
                exec(c, "IF OBJECT_ID('dbo.jdbc_p') IS NOT NULL DROP PROCEDURE dbo.jdbc_p");
                exec(c, "CREATE PROCEDURE dbo.jdbc_p @a int, @b int OUTPUT, @s nvarchar(20) OUTPUT AS BEGIN SET @b = @a * 2; SET @s = @s + N'!'; RETURN 7 END");
                try (CallableStatement cs = c.prepareCall("{? = call dbo.jdbc_p(?, ?, ?)}")) {
                    cs.registerOutParameter(1, Types.INTEGER);
                    cs.setInt(2, 21);
                    cs.registerOutParameter(3, Types.INTEGER);
                    cs.setString(4, "hi");
                    cs.registerOutParameter(4, Types.NVARCHAR);
                    cs.execute();
                    expectEq(7, cs.getInt(1), "return status");
                    expectEq(42, cs.getInt(3), "@b");
                    expectEq("hi!", cs.getString(4), "@s");
                }
                exec(c, "DROP PROCEDURE dbo.jdbc_p");
            }
        });

        check("rollback", "a transaction that rolls back, one that commits", () -> {
            try (Connection c = plain()) {
                exec(c, "IF OBJECT_ID('dbo.jdbc_r') IS NOT NULL DROP TABLE dbo.jdbc_r");
                exec(c, "CREATE TABLE dbo.jdbc_r (x int)");
                c.setAutoCommit(false);
                exec(c, "INSERT INTO dbo.jdbc_r VALUES (1), (2)");
                expectEq(2, scalar(c, "SELECT COUNT(*) FROM dbo.jdbc_r"), "inside the transaction");
                expectEq(1, scalar(c, "SELECT @@TRANCOUNT"), "@@TRANCOUNT");
                c.rollback();
                expectEq(0, scalar(c, "SELECT COUNT(*) FROM dbo.jdbc_r"), "after rollback");
                exec(c, "INSERT INTO dbo.jdbc_r VALUES (3)");
                c.commit();
                c.setAutoCommit(true);
                expectEq(0, scalar(c, "SELECT @@TRANCOUNT"), "@@TRANCOUNT after commit");
                try (Connection c2 = plain()) {
                    expectEq(1, scalar(c2, "SELECT COUNT(*) FROM dbo.jdbc_r"), "committed row seen by another session");
                }
                exec(c, "DROP TABLE dbo.jdbc_r");
            }
        });

        check("types", "every supported type", () -> {
            try (Connection c = plain(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT CAST(1 AS bit), CAST(200 AS tinyint), CAST(-3 AS smallint), CAST(4 AS int),"
                         + " CAST(5000000000 AS bigint), CAST(1.25 AS decimal(5, 2)), CAST(2.5 AS float),"
                         + " CAST(1.5 AS real), CAST(12.3456 AS money), CAST('2024-02-29' AS date),"
                         + " CAST('13:14:15.1234567' AS time(7)), CAST('2024-02-29 13:14:15.123' AS datetime),"
                         + " CAST('2024-02-29 13:14:15.1234567' AS datetime2(7)),"
                         + " CAST('2024-02-29 13:14:15.1234567 +02:00' AS datetimeoffset(7)),"
                         + " CAST('abc' AS varchar(10)), CAST(N'ünï' AS nvarchar(10)), CAST('x' AS char(3)),"
                         + " CAST(0x0102 AS varbinary(10)), CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier),"
                         + " REPLICATE(CAST('z' AS varchar(max)), 9000), CAST(NULL AS int)")) {
                expect(rs.next(), "a row");
                expectEq(Boolean.TRUE, rs.getObject(1), "bit");
                expectEq((short) 200, rs.getObject(2), "tinyint");
                expectEq((short) -3, rs.getObject(3), "smallint");
                expectEq(4, rs.getObject(4), "int");
                expectEq(5000000000L, rs.getObject(5), "bigint");
                expectEq(new BigDecimal("1.25"), rs.getObject(6), "decimal");
                expectEq(2.5d, rs.getObject(7), "float");
                expectEq(1.5f, rs.getObject(8), "real");
                expectEq(new BigDecimal("12.3456"), rs.getObject(9), "money");
                expectEq(LocalDate.of(2024, 2, 29), rs.getObject(10, LocalDate.class), "date");
                expectEq(LocalTime.of(13, 14, 15, 123456700), rs.getObject(11, LocalTime.class), "time(7)");
                expectEq(Timestamp.valueOf("2024-02-29 13:14:15.123"), rs.getObject(12), "datetime");
                expectEq(Timestamp.valueOf("2024-02-29 13:14:15.1234567"), rs.getObject(13), "datetime2(7)");
                expectEq(OffsetDateTime.of(2024, 2, 29, 13, 14, 15, 123456700, ZoneOffset.ofHours(2)),
                        rs.getObject(14, OffsetDateTime.class), "datetimeoffset(7)");
                expectEq("abc", rs.getObject(15), "varchar");
                expectEq("ünï", rs.getObject(16), "nvarchar");
                expectEq("x  ", rs.getObject(17), "char(3)");
                expect(Arrays.equals(new byte[] {1, 2}, (byte[]) rs.getObject(18)), "varbinary");
                expectEq("6F9619FF-8B86-D011-B42D-00C04FC964FF", rs.getString(19), "uniqueidentifier");
                expectEq("z".repeat(9000), rs.getString(20), "varchar(max)");
                expectEq(null, rs.getObject(21), "NULL");
                expect(rs.wasNull(), "wasNull");
                ResultSetMetaData md = rs.getMetaData();
                String[] want = {"bit", "tinyint", "smallint", "int", "bigint", "decimal", "float", "real", "money", "date",
                        "time", "datetime", "datetime2", "datetimeoffset", "varchar", "nvarchar", "char", "varbinary",
                        "uniqueidentifier", "varchar", "int"};
                for (int i = 0; i < want.length; i++) {
                    expectEq(want[i], md.getColumnTypeName(i + 1), "type name of column " + (i + 1));
                }
                expectEq(5, md.getPrecision(6), "decimal precision");
                expectEq(2, md.getScale(6), "decimal scale");
                expectEq(7, md.getScale(13), "datetime2 scale");
                expectEq(10, md.getPrecision(16), "nvarchar length");
            }
        });

        check("error", "error 208 with its line number", () -> {
            try (Connection c = plain(); Statement s = c.createStatement()) {
                try {
                    s.execute("/* the error is on line 2 */\nSELECT * FROM no_such_table");
                    throw new AssertionError("no error");
                } catch (SQLServerException e) {
                    expectEq(208, e.getErrorCode(), "error number");
                    expectEq("S0002", e.getSQLState(), "SQLSTATE (mssql-jdbc maps 208 to S0002)");
                    expectEq(2L, e.getSQLServerError().getLineNumber(), "line number");
                    expectEq(16, e.getSQLServerError().getErrorSeverity(), "severity");
                    expect(e.getMessage().contains("no_such_table"), "message: " + e.getMessage());
                }
                expectEq(2, scalar(c, "SELECT 2"), "the connection still serves");
            }
        });

        check("error", "error scope: batch abort rolls back, TRY dooms the transaction (XACT_STATE -1, 3930)", () -> {
            try (Connection c = plain(); Statement s = c.createStatement()) {
                exec(c, "IF OBJECT_ID('dbo.jdbc_scope') IS NOT NULL DROP TABLE dbo.jdbc_scope");
                exec(c, "CREATE TABLE dbo.jdbc_scope (x int)");
                try {
                    s.execute("BEGIN TRANSACTION; INSERT dbo.jdbc_scope VALUES (1); DECLARE @n int = 'x'; SELECT 'not reached'");
                    while (s.getMoreResults() || s.getUpdateCount() != -1) { }
                    throw new AssertionError("no error");
                } catch (SQLServerException e) {
                    expectEq(245, e.getErrorCode(), "conversion error");
                }
                expectEq(0, scalar(c, "SELECT @@TRANCOUNT"), "rolled back by the batch abort");
                expectEq(0, scalar(c, "SELECT COUNT(*) FROM dbo.jdbc_scope"), "the insert is gone");
                // In CATCH: XACT_STATE() -1, a write and COMMIT each refused with 3930.
                try (ResultSet rs = s.executeQuery("BEGIN TRANSACTION; BEGIN TRY DECLARE @n int = 'x'; END TRY BEGIN CATCH"
                        + " SELECT XACT_STATE() AS xs, ERROR_NUMBER() AS en,"
                        + " (SELECT COUNT(*) FROM dbo.jdbc_scope) AS reads_work; END CATCH")) {
                    expect(rs.next(), "a row from CATCH");
                    expectEq(-1, rs.getInt(1), "XACT_STATE in CATCH");
                    expectEq(245, rs.getInt(2), "ERROR_NUMBER in CATCH");
                }
                for (String w : new String[] {"INSERT dbo.jdbc_scope VALUES (2)", "COMMIT"}) {
                    try {
                        s.execute("BEGIN TRANSACTION; BEGIN TRY DECLARE @n int = 'x'; END TRY BEGIN CATCH " + w + "; END CATCH");
                        while (s.getMoreResults() || s.getUpdateCount() != -1) { }
                        throw new AssertionError("no error from " + w);
                    } catch (SQLServerException e) {
                        expectEq(3930, e.getErrorCode(), w + " in an uncommittable transaction");
                    }
                    // The batch's end rolled the doomed transaction back (3998).
                    expectEq(0, scalar(c, "SELECT @@TRANCOUNT"), "rolled back at the end of the batch");
                }
                expectEq(0, scalar(c, "SELECT COUNT(*) FROM dbo.jdbc_scope"), "nothing written");
                exec(c, "DROP TABLE dbo.jdbc_scope");
            }
        });

        check("cancel", "setQueryTimeout on WAITFOR DELAY", () -> {
            try (Connection c = plain()) {
                try (Statement s = c.createStatement()) {
                    s.setQueryTimeout(1);
                    long t0 = System.nanoTime();
                    try {
                        s.execute("WAITFOR DELAY '00:00:30'");
                        throw new AssertionError("the WAITFOR was not cancelled");
                    } catch (SQLTimeoutException e) {
                        // expected: the driver sent an attention after one second
                    }
                    double secs = (System.nanoTime() - t0) / 1e9;
                    expect(secs < 10, "cancel took " + secs + " s");
                }
                expectEq(3, scalar(c, "SELECT 3"), "the same connection still serves");
            }
        });

        check("cancel", "Statement.cancel from another thread", () -> {
            ScheduledExecutorService ex = Executors.newSingleThreadScheduledExecutor();
            try (Connection c = plain(); Statement s = c.createStatement()) {
                ex.schedule(() -> {
                    try {
                        s.cancel();
                    } catch (SQLException e) {
                        throw new RuntimeException(e);
                    }
                }, 500, TimeUnit.MILLISECONDS);
                long t0 = System.nanoTime();
                try {
                    s.execute("WAITFOR DELAY '00:00:30'");
                    throw new AssertionError("the WAITFOR was not cancelled");
                } catch (SQLServerException e) {
                    expect(e.getMessage().toLowerCase().contains("cancel"), "a cancel error: " + e.getMessage());
                }
                double secs = (System.nanoTime() - t0) / 1e9;
                expect(secs < 10, "cancel took " + secs + " s");
                expectEq(4, scalar(c, "SELECT 4"), "the same connection still serves");
            } finally {
                ex.shutdownNow();
            }
            try (Connection c = plain()) {
                expectEq(5, scalar(c, "SELECT 5"), "a new connection after the cancel");
            }
        });

        check("strict", "encrypt=strict (TDS 8.0)", () -> {
            String store = System.getProperty("mesquite.truststore");
            try (Connection c = connect("encrypt=strict;hostNameInCertificate=localhost;trustStore=" + store + ";trustStorePassword=changeit")) {
                expectEq(7, scalar(c, "SELECT 7"), "SELECT 7");
                try (PreparedStatement ps = c.prepareStatement("SELECT ? + ?")) {
                    ps.setInt(1, 20);
                    ps.setInt(2, 22);
                    try (ResultSet rs = ps.executeQuery()) {
                        expect(rs.next(), "a row");
                        expectEq(42, rs.getInt(1), "20 + 22");
                    }
                }
            }
        });

        check("bulk_copy", "SQLServerBulkCopy.writeToServer from a ResultSet, TABLOCK", () -> {
            try (Connection c = plain(); Statement st = c.createStatement()) {
                st.execute("IF OBJECT_ID('dbo.jdbc_bulk') IS NOT NULL DROP TABLE dbo.jdbc_bulk");
                st.execute("CREATE TABLE dbo.jdbc_bulk (id int IDENTITY PRIMARY KEY, name nvarchar(20) NOT NULL, n int DEFAULT 5)");
                st.execute("IF OBJECT_ID('dbo.jdbc_bulk_src') IS NOT NULL DROP TABLE dbo.jdbc_bulk_src");
                st.execute("CREATE TABLE dbo.jdbc_bulk_src (name nvarchar(20) NOT NULL, n int NULL)");
                st.execute("INSERT dbo.jdbc_bulk_src VALUES (N'a', 1), (N'b', NULL), (N'c', 3)");
                try (Statement src = c.createStatement();
                     ResultSet rs = src.executeQuery("SELECT name, n FROM dbo.jdbc_bulk_src ORDER BY name");
                     com.microsoft.sqlserver.jdbc.SQLServerBulkCopy bc = new com.microsoft.sqlserver.jdbc.SQLServerBulkCopy(plain())) {
                    com.microsoft.sqlserver.jdbc.SQLServerBulkCopyOptions o = new com.microsoft.sqlserver.jdbc.SQLServerBulkCopyOptions();
                    o.setTableLock(true);
                    bc.setBulkCopyOptions(o);
                    bc.setDestinationTableName("dbo.jdbc_bulk");
                    bc.addColumnMapping("name", "name");
                    bc.addColumnMapping("n", "n");
                    bc.writeToServer(rs);
                }
                List<String> got = new ArrayList<>();
                try (ResultSet rs = st.executeQuery("SELECT id, name, n FROM dbo.jdbc_bulk ORDER BY id")) {
                    while (rs.next()) {
                        got.add(rs.getInt(1) + " " + rs.getString(2) + " " + rs.getObject(3));
                    }
                }
                expectEq(Arrays.asList("1 a 1", "2 b 5", "3 c 3"), got, "bulk-copied rows (NULL takes the default)");
                st.execute("DROP TABLE dbo.jdbc_bulk; DROP TABLE dbo.jdbc_bulk_src");
            }
        });

        check("tvp", "a SQLServerDataTable as a table-valued parameter", () -> {
            try (Connection c = plain(); Statement st = c.createStatement()) {
                st.execute("IF OBJECT_ID('dbo.jdbc_tvp_sum') IS NOT NULL DROP PROCEDURE dbo.jdbc_tvp_sum");
                st.execute("DROP TYPE IF EXISTS dbo.jdbc_pairs");
                st.execute("CREATE TYPE dbo.jdbc_pairs AS TABLE (k int NOT NULL, v nvarchar(20) NULL)");
                st.execute("CREATE PROCEDURE dbo.jdbc_tvp_sum @rows dbo.jdbc_pairs READONLY AS SELECT COUNT(*), SUM(k), MAX(v) FROM @rows");
                com.microsoft.sqlserver.jdbc.SQLServerDataTable t = new com.microsoft.sqlserver.jdbc.SQLServerDataTable();
                t.addColumnMetadata("k", Types.INTEGER);
                t.addColumnMetadata("v", Types.NVARCHAR);
                t.addRow(1, "x");
                t.addRow(2, null);
                t.addRow(3, "y");
                try (com.microsoft.sqlserver.jdbc.SQLServerPreparedStatement ps =
                         (com.microsoft.sqlserver.jdbc.SQLServerPreparedStatement) c.prepareStatement("EXEC dbo.jdbc_tvp_sum ?")) {
                    ps.setStructured(1, "dbo.jdbc_pairs", t);
                    try (ResultSet rs = ps.executeQuery()) {
                        expect(rs.next(), "a row");
                        expectEq("3 6 y", rs.getInt(1) + " " + rs.getInt(2) + " " + rs.getString(3), "count, sum, max");
                    }
                }
                st.execute("DROP PROCEDURE dbo.jdbc_tvp_sum; DROP TYPE dbo.jdbc_pairs");
            }
        });

        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
