// Real-client tests through go-mssqldb (database/sql) against `mesquite serve`.
//
// The server comes from MESQUITE_HOST / MESQUITE_PORT, the sa password from
// MESQUITE_SA_PASSWORD and the server's certificate (PEM) from MESQUITE_SERVER_CERT
// (tests/clients/run.sh sets them). Each test records one feature line
// "go-mssqldb<TAB>feature<TAB>pass|FAIL" in $MESQUITE_CLIENT_RESULTS.
package clients

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

const client = "go-mssqldb"

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// dsn builds a sqlserver:// URL with the given extra query parameters.
func dsn(params map[string]string) string {
	q := url.Values{}
	q.Set("database", "master")
	q.Set("connection timeout", "30")
	for k, v := range params {
		q.Set(k, v)
	}
	u := url.URL{
		Scheme:   "sqlserver",
		User:     url.UserPassword("sa", env("MESQUITE_SA_PASSWORD", "")),
		Host:     env("MESQUITE_HOST", "127.0.0.1") + ":" + env("MESQUITE_PORT", "1433"),
		RawQuery: q.Encode(),
	}
	return u.String()
}

var plain = map[string]string{"encrypt": "disable"}

// record writes the test's outcome for its feature when the test ends.
func record(t *testing.T, feature string) {
	t.Cleanup(func() {
		path := os.Getenv("MESQUITE_CLIENT_RESULTS")
		if path == "" {
			return
		}
		result := "pass"
		if t.Failed() {
			result = "FAIL"
		} else if t.Skipped() {
			result = "n/a"
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("results file: %v", err)
			return
		}
		defer f.Close()
		fmt.Fprintf(f, "%s\t%s\t%s\n", client, feature, result)
	})
}

func open(t *testing.T, params map[string]string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn(params))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustExec(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	t.Helper()
	r, err := db.ExecContext(ctx(t), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return r
}

func TestPlain(t *testing.T) {
	record(t, "plain")
	db := open(t, plain)
	var one int
	var s string
	if err := db.QueryRowContext(ctx(t), "SELECT 1 AS one, N'héllo' AS s").Scan(&one, &s); err != nil {
		t.Fatal(err)
	}
	if one != 1 || s != "héllo" {
		t.Fatalf("got %d %q", one, s)
	}
	// sys.dm_exec_connections: TCP from the client's address and port to the server's,
	// not encrypted.
	checkConnection(t, db, "FALSE")
}

// checkConnection checks the session's row of sys.dm_exec_connections.
func checkConnection(t *testing.T, db *sql.DB, encrypted string) {
	t.Helper()
	var transport, enc, clientAddr, localAddr string
	var clientPort, localPort, packetSize int
	var protocol int64
	err := db.QueryRowContext(ctx(t), `SELECT net_transport, encrypt_option, client_net_address, client_tcp_port,
		local_net_address, local_tcp_port, protocol_version, net_packet_size
		FROM sys.dm_exec_connections WHERE session_id = @@SPID`).Scan(&transport, &enc, &clientAddr, &clientPort,
		&localAddr, &localPort, &protocol, &packetSize)
	if err != nil {
		t.Fatal(err)
	}
	host := env("MESQUITE_HOST", "127.0.0.1")
	if transport != "TCP" || enc != encrypted || clientAddr != host || localAddr != host || clientPort <= 0 ||
		fmt.Sprint(localPort) != env("MESQUITE_PORT", "1433") || protocol == 0 || packetSize < 512 {
		t.Fatalf("dm_exec_connections: %s %s %s:%d -> %s:%d protocol %#x packet %d", transport, enc, clientAddr,
			clientPort, localAddr, localPort, protocol, packetSize)
	}
}

func tlsQuery(t *testing.T, params map[string]string) {
	t.Helper()
	db := open(t, params)
	var n int
	if err := db.QueryRowContext(ctx(t), "SELECT 40 + 2").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 42 {
		t.Fatalf("got %d", n)
	}
	// A result larger than one TLS record travels whole.
	var big string
	if err := db.QueryRowContext(ctx(t), "SELECT REPLICATE(CAST('t' AS varchar(max)), 40000)").Scan(&big); err != nil {
		t.Fatal(err)
	}
	if big != strings.Repeat("t", 40000) {
		t.Fatalf("got %d chars", len(big))
	}
	checkConnection(t, db, "TRUE")
}

func TestTLSTrustServerCertificate(t *testing.T) {
	record(t, "tls")
	tlsQuery(t, map[string]string{"encrypt": "true", "TrustServerCertificate": "true"})
}

func TestTLSCertificateFile(t *testing.T) {
	record(t, "tls")
	cert := os.Getenv("MESQUITE_SERVER_CERT")
	if cert == "" {
		t.Fatal("MESQUITE_SERVER_CERT is not set")
	}
	tlsQuery(t, map[string]string{"encrypt": "true", "certificate": cert, "hostNameInCertificate": "localhost"})
}

func TestTLSWrongCertificateRefused(t *testing.T) {
	record(t, "tls")
	// Verifying against the system roots (no certificate given) must fail: the
	// server's certificate is self-signed.
	db := open(t, map[string]string{"encrypt": "true", "hostNameInCertificate": "localhost"})
	if err := db.PingContext(ctx(t)); err == nil {
		t.Fatal("connected although the certificate cannot be verified")
	}
}

func TestStrict(t *testing.T) {
	record(t, "strict")
	cert := os.Getenv("MESQUITE_SERVER_CERT")
	if cert == "" {
		t.Fatal("MESQUITE_SERVER_CERT is not set")
	}
	db := open(t, map[string]string{"encrypt": "strict", "certificate": cert, "hostNameInCertificate": "localhost"})
	var n int
	var s string
	if err := db.QueryRowContext(ctx(t), "SELECT 7, N'strict'").Scan(&n, &s); err != nil {
		t.Fatal(err)
	}
	if n != 7 || s != "strict" {
		t.Fatalf("got %d %q", n, s)
	}
	var sum int
	if err := db.QueryRowContext(ctx(t), "SELECT @p1 + @p2", 20, 22).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != 42 {
		t.Fatalf("got %d", sum)
	}
	checkConnection(t, db, "TRUE")
}

func TestDDLAndDML(t *testing.T) {
	ddl := t.Run("ddl", func(t *testing.T) {
		record(t, "ddl")
		db := open(t, plain)
		mustExec(t, db, "IF OBJECT_ID('dbo.go_t') IS NOT NULL DROP TABLE dbo.go_t")
		mustExec(t, db, "CREATE TABLE dbo.go_t (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL, amount decimal(10, 2))")
		var n int
		if err := db.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM sys.columns WHERE object_id = OBJECT_ID('dbo.go_t')").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("%d columns", n)
		}
		mustExec(t, db, "CREATE INDEX ix_go_t_name ON dbo.go_t (name)")
	})
	if !ddl {
		t.Fatal("ddl failed")
	}
	t.Run("dml", func(t *testing.T) {
		record(t, "dml")
		db := open(t, plain)
		r := mustExec(t, db, "INSERT INTO dbo.go_t (name, amount) VALUES (N'alpha', 12.50), (N'beta', 1), (N'gamma', NULL)")
		if n, err := r.RowsAffected(); err != nil || n != 3 {
			t.Fatalf("insert affected %d, %v", n, err)
		}
		r = mustExec(t, db, "UPDATE dbo.go_t SET amount = amount + 1 WHERE amount IS NOT NULL")
		if n, _ := r.RowsAffected(); n != 2 {
			t.Fatalf("update affected %d", n)
		}
		r = mustExec(t, db, "DELETE FROM dbo.go_t WHERE name = N'gamma'")
		if n, _ := r.RowsAffected(); n != 1 {
			t.Fatalf("delete affected %d", n)
		}
		rows, err := db.QueryContext(ctx(t), "SELECT name, amount FROM dbo.go_t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var name, amount string
			if err := rows.Scan(&name, &amount); err != nil {
				t.Fatal(err)
			}
			got = append(got, name+"="+amount)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != "alpha=13.50,beta=2.00" {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("drop", func(t *testing.T) {
		record(t, "ddl")
		db := open(t, plain)
		mustExec(t, db, "DROP TABLE dbo.go_t")
		var id sql.NullInt64
		if err := db.QueryRowContext(ctx(t), "SELECT OBJECT_ID('dbo.go_t')").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if id.Valid {
			t.Fatal("table still there")
		}
	})
}

func TestParams(t *testing.T) {
	record(t, "params")
	db := open(t, plain)
	at := time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC)
	conn, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "CREATE TABLE #p (id int, name nvarchar(50), amount decimal(10, 2), at datetime2(7), blob varbinary(max))")
	for i, name := range []string{"alpha", "beta", "gämma"} {
		mustExec(t, conn, "INSERT INTO #p VALUES (@id, @name, @amount, @at, @blob)",
			sql.Named("id", i+1), sql.Named("name", name), sql.Named("amount", 12.5),
			sql.Named("at", at), sql.Named("blob", []byte{byte(i), 0xff}))
	}
	var id int
	var name string
	var gotAt time.Time
	var blob []byte
	err = conn.QueryRowContext(ctx(t), "SELECT id, name, at, blob FROM #p WHERE name = @p1 AND id > @p2", "gämma", 1).Scan(&id, &name, &gotAt, &blob)
	if err != nil {
		t.Fatal(err)
	}
	if id != 3 || name != "gämma" || !gotAt.Equal(at) || string(blob) != "\x02\xff" {
		t.Fatalf("got %d %q %v %x", id, name, gotAt, blob)
	}
	// A NULL parameter and a long string parameter.
	var isNull bool
	var n int
	long := strings.Repeat("ab", 5000)
	if err := conn.QueryRowContext(ctx(t), "SELECT CASE WHEN @p1 IS NULL THEN 1 ELSE 0 END, LEN(@p2)", nil, long).Scan(&isNull, &n); err != nil {
		t.Fatal(err)
	}
	if !isNull || n != 10000 {
		t.Fatalf("got %v %d", isNull, n)
	}
	// A prepared statement run twice.
	st, err := conn.PrepareContext(ctx(t), "SELECT COUNT(*) FROM #p WHERE id >= @p1")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct{ from, want int }{{1, 3}, {3, 1}} {
		if err := st.QueryRowContext(ctx(t), c.from).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Fatalf("from %d: %d rows", c.from, n)
		}
	}
}

func TestProcOutput(t *testing.T) {
	record(t, "proc_output")
	db := open(t, plain)
	mustExec(t, db, "IF OBJECT_ID('dbo.go_p') IS NOT NULL DROP PROCEDURE dbo.go_p")
	mustExec(t, db, "CREATE PROCEDURE dbo.go_p @a int, @b int OUTPUT, @s nvarchar(20) OUTPUT AS BEGIN SET @b = @a * 2; SET @s = @s + N'!'; RETURN 7 END")
	defer mustExec(t, db, "DROP PROCEDURE dbo.go_p")
	var b int
	s := "hi"
	var rs mssql.ReturnStatus
	_, err := db.ExecContext(ctx(t), "dbo.go_p", sql.Named("a", 21), sql.Named("b", sql.Out{Dest: &b}), sql.Named("s", sql.Out{Dest: &s, In: true}), &rs)
	if err != nil {
		t.Fatal(err)
	}
	if b != 42 || s != "hi!" || rs != 7 {
		t.Fatalf("b=%d s=%q return=%d", b, s, rs)
	}
}

func TestRollback(t *testing.T) {
	record(t, "rollback")
	db := open(t, plain)
	mustExec(t, db, "IF OBJECT_ID('dbo.go_r') IS NOT NULL DROP TABLE dbo.go_r")
	mustExec(t, db, "CREATE TABLE dbo.go_r (x int)")
	defer mustExec(t, db, "DROP TABLE dbo.go_r")
	tx, err := db.BeginTx(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO dbo.go_r VALUES (1), (2)")
	var n int
	if err := tx.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM dbo.go_r").Scan(&n); err != nil || n != 2 {
		t.Fatalf("inside the transaction: %d, %v", n, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM dbo.go_r").Scan(&n); err != nil || n != 0 {
		t.Fatalf("after rollback: %d, %v", n, err)
	}
	// A committed transaction stays.
	tx, err = db.BeginTx(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO dbo.go_r VALUES (3)")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM dbo.go_r").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after commit: %d, %v", n, err)
	}
}

func TestTypes(t *testing.T) {
	record(t, "types")
	db := open(t, plain)
	row := db.QueryRowContext(ctx(t), `SELECT CAST(1 AS bit), CAST(200 AS tinyint), CAST(-3 AS smallint), CAST(4 AS int),
		CAST(5000000000 AS bigint), CAST(1.25 AS decimal(5, 2)), CAST(2.5 AS float),
		CAST(1.5 AS real), CAST(12.3456 AS money), CAST('2024-02-29' AS date),
		CAST('13:14:15.1234567' AS time(7)), CAST('2024-02-29 13:14:15.123' AS datetime),
		CAST('2024-02-29 13:14:15.1234567' AS datetime2(7)),
		CAST('2024-02-29 13:14:15.1234567 +02:00' AS datetimeoffset(7)),
		CAST('abc' AS varchar(10)), CAST(N'ünï' AS nvarchar(10)), CAST('x' AS char(3)),
		CAST(0x0102 AS varbinary(10)), CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier),
		REPLICATE(CAST('z' AS varchar(max)), 9000), CAST(NULL AS int)`)
	var (
		bit                    bool
		ti, si, i              int64
		bi                     int64
		dec, money             string
		fl                     float64
		re                     float32
		date, tm, dt, dt2, dto time.Time
		vc, nvc, ch            string
		vb                     []byte
		guid                   mssql.UniqueIdentifier
		vmax                   string
		null                   sql.NullInt64
	)
	if err := row.Scan(&bit, &ti, &si, &i, &bi, &dec, &fl, &re, &money, &date, &tm, &dt, &dt2, &dto, &vc, &nvc, &ch, &vb, &guid, &vmax, &null); err != nil {
		t.Fatal(err)
	}
	check := func(what string, ok bool, got any) {
		if !ok {
			t.Errorf("%s: got %v", what, got)
		}
	}
	check("bit", bit, bit)
	check("tinyint", ti == 200, ti)
	check("smallint", si == -3, si)
	check("int", i == 4, i)
	check("bigint", bi == 5000000000, bi)
	check("decimal", dec == "1.25", dec)
	check("float", fl == 2.5, fl)
	check("real", re == 1.5, re)
	check("money", money == "12.3456", money)
	check("date", date.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)), date)
	check("time", tm.Hour() == 13 && tm.Minute() == 14 && tm.Second() == 15 && tm.Nanosecond() == 123456700, tm)
	check("datetime", dt.Equal(time.Date(2024, 2, 29, 13, 14, 15, 123000000, time.UTC)), dt)
	check("datetime2", dt2.Equal(time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC)), dt2)
	_, off := dto.Zone()
	check("datetimeoffset", off == 2*3600 && dto.Equal(time.Date(2024, 2, 29, 11, 14, 15, 123456700, time.UTC)), dto)
	check("varchar", vc == "abc", vc)
	check("nvarchar", nvc == "ünï", nvc)
	check("char", ch == "x  ", ch)
	check("varbinary", string(vb) == "\x01\x02", vb)
	check("uniqueidentifier", guid.String() == "6F9619FF-8B86-D011-B42D-00C04FC964FF", guid.String())
	check("varchar(max)", vmax == strings.Repeat("z", 9000), len(vmax))
	check("NULL", !null.Valid, null)

	// Column metadata: the declared types.
	rows, err := db.QueryContext(ctx(t), "SELECT CAST(1.25 AS decimal(5, 2)) AS d, CAST(N'x' AS nvarchar(10)) AS n, CAST(1 AS bigint) AS b")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, names := columnTypes(t, rows)
	if strings.Join(names, ",") != "DECIMAL,NVARCHAR,BIGINT" {
		t.Errorf("column types %v", names)
	}
	if p, s, ok := cts[0].DecimalSize(); !ok || p != 5 || s != 2 {
		t.Errorf("decimal size %d %d %v", p, s, ok)
	}
	if l, ok := cts[1].Length(); !ok || l != 10 {
		t.Errorf("nvarchar length %d %v", l, ok)
	}
}

func TestError(t *testing.T) {
	record(t, "error")
	db := open(t, plain)
	_, err := db.ExecContext(ctx(t), "/* the error is on line 2 */\nSELECT * FROM no_such_table")
	var e mssql.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an mssql.Error: %v", err)
	}
	if e.Number != 208 || e.LineNo != 2 || e.Class != 16 || !strings.Contains(e.Message, "no_such_table") {
		t.Fatalf("number %d line %d class %d message %q", e.Number, e.LineNo, e.Class, e.Message)
	}
	var n int
	if err := db.QueryRowContext(ctx(t), "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the error: %d, %v", n, err)
	}
}

func TestCancel(t *testing.T) {
	record(t, "cancel")
	db := open(t, plain)
	db.SetMaxOpenConns(1)
	c, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	started := time.Now()
	_, err := db.ExecContext(c, "WAITFOR DELAY '00:00:30'")
	elapsed := time.Since(started)
	if err == nil {
		t.Fatal("the WAITFOR was not cancelled")
	}
	if elapsed > 10*time.Second {
		t.Fatalf("cancel took %v", elapsed)
	}
	// The same pool (the connection the attention went over, if kept) and a new
	// connection both still work.
	var n int
	if err := db.QueryRowContext(ctx(t), "SELECT 3").Scan(&n); err != nil || n != 3 {
		t.Fatalf("after cancel: %d, %v", n, err)
	}
	db2 := open(t, plain)
	if err := db2.QueryRowContext(ctx(t), "SELECT 4").Scan(&n); err != nil || n != 4 {
		t.Fatalf("new connection after cancel: %d, %v", n, err)
	}
}

// TestBulkCopy: mssql.CopyIn (INSERT BULK, then the bulk-load message) inside a
// transaction, with KEEP_NULLS and the row count; a NULL into a NOT NULL column fails the
// load and the connection goes on.
func TestBulkCopy(t *testing.T) {
	record(t, "bulk_copy")
	db := open(t, plain)
	mustExec(t, db, "IF OBJECT_ID('dbo.go_bulk') IS NOT NULL DROP TABLE dbo.go_bulk")
	mustExec(t, db, "CREATE TABLE dbo.go_bulk (id int IDENTITY PRIMARY KEY, name nvarchar(20) NOT NULL, n int DEFAULT 5, at datetime2(3) NULL, amount decimal(10, 2))")
	t.Cleanup(func() { db.Exec("DROP TABLE dbo.go_bulk") })
	copyIn := func(opts mssql.BulkOptions, rows ...[]any) (int64, error) {
		txn, err := db.BeginTx(ctx(t), nil)
		if err != nil {
			return 0, err
		}
		defer txn.Rollback()
		stmt, err := txn.PrepareContext(ctx(t), mssql.CopyIn("dbo.go_bulk", opts, "name", "n", "at", "amount"))
		if err != nil {
			return 0, err
		}
		for _, r := range rows {
			if _, err := stmt.ExecContext(ctx(t), r...); err != nil {
				return 0, err
			}
		}
		res, err := stmt.ExecContext(ctx(t))
		if err != nil {
			return 0, err
		}
		n, _ := res.RowsAffected()
		return n, txn.Commit()
	}
	at := time.Date(2024, 5, 6, 7, 8, 9, 123000000, time.UTC)
	n, err := copyIn(mssql.BulkOptions{Tablock: true, RowsPerBatch: 10},
		[]any{"a", 1, at, "12.50"}, []any{"b", nil, nil, nil})
	if err != nil || n != 2 {
		t.Fatalf("bulk copy: %d rows, %v", n, err)
	}
	if n, err := copyIn(mssql.BulkOptions{KeepNulls: true}, []any{"c", nil, nil, nil}); err != nil || n != 1 {
		t.Fatalf("KEEP_NULLS: %d rows, %v", n, err)
	}
	_, err = copyIn(mssql.BulkOptions{}, []any{"d", 1, nil, nil}, []any{nil, 2, nil, nil})
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != 515 {
		t.Fatalf("NULL into NOT NULL: %v", err)
	}
	rows, err := db.QueryContext(ctx(t), "SELECT id, name, n, at, amount FROM dbo.go_bulk ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id int
		var name string
		var nv sql.NullInt64
		var atv sql.NullTime
		var amount sql.NullString
		if err := rows.Scan(&id, &name, &nv, &atv, &amount); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %v %v %v", id, name, nv, atv.Time.Format(time.RFC3339Nano), amount))
	}
	want := []string{
		"1 a {1 true} 2024-05-06T07:08:09.123Z {12.50 true}",
		"2 b {5 true} 0001-01-01T00:00:00Z { false}",
		"3 c {0 false} 0001-01-01T00:00:00Z { false}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTVP: a table-valued parameter (mssql.TVP) to a procedure and to sp_executesql.
func TestTVP(t *testing.T) {
	record(t, "tvp")
	db := open(t, plain)
	mustExec(t, db, "IF OBJECT_ID('dbo.go_tvp_sum') IS NOT NULL DROP PROCEDURE dbo.go_tvp_sum")
	mustExec(t, db, "DROP TYPE IF EXISTS dbo.go_pairs")
	mustExec(t, db, "CREATE TYPE dbo.go_pairs AS TABLE (k int NOT NULL, v nvarchar(20) NULL)")
	mustExec(t, db, "CREATE PROCEDURE dbo.go_tvp_sum @rows dbo.go_pairs READONLY AS SELECT COUNT(*), SUM(k), MAX(v) FROM @rows")
	t.Cleanup(func() {
		db.Exec("DROP PROCEDURE dbo.go_tvp_sum")
		db.Exec("DROP TYPE dbo.go_pairs")
	})
	type pair struct {
		K int
		V *string
	}
	y := "y"
	tvp := mssql.TVP{TypeName: "dbo.go_pairs", Value: []pair{{1, nil}, {2, &y}, {3, nil}}}
	var count, sum int
	var max sql.NullString
	if err := db.QueryRowContext(ctx(t), "EXEC dbo.go_tvp_sum @rows", sql.Named("rows", tvp)).Scan(&count, &sum, &max); err != nil {
		t.Fatal(err)
	}
	if count != 3 || sum != 6 || max.String != "y" {
		t.Fatalf("got %d %d %v", count, sum, max)
	}
	if err := db.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM @p", sql.Named("p", tvp)).Scan(&count); err != nil || count != 3 {
		t.Fatalf("sp_executesql: %d %v", count, err)
	}
}

// A sql_variant column (SSVARIANTTYPE) holding several base types reads back exactly.
func TestTypesSqlVariant(t *testing.T) {
	record(t, "types")
	db := open(t, plain)
	rows, err := db.QueryContext(ctx(t), `SELECT v FROM (VALUES (1, CAST(42 AS sql_variant)),
		(2, CAST(N'héllo' AS nvarchar(10))), (3, CAST('2024-05-06 07:08:09.1234567' AS datetime2)),
		(4, CAST(123.45 AS decimal(10, 2))), (5, CAST('6F9619FF-8B86-D011-B42D-00C04FD430C8' AS uniqueidentifier)),
		(6, NULL)) AS t(id, v) ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []any
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("rows: %v", got)
	}
	if v, ok := got[0].(int64); !ok || v != 42 {
		t.Errorf("int: %#v", got[0])
	}
	if v, ok := got[1].(string); !ok || v != "héllo" {
		t.Errorf("nvarchar: %#v", got[1])
	}
	if v, ok := got[2].(time.Time); !ok || !v.Equal(time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)) {
		t.Errorf("datetime2: %#v", got[2])
	}
	if v, ok := got[3].([]byte); !ok || string(v) != "123.45" {
		t.Errorf("decimal: %#v", got[3])
	}
	var g mssql.UniqueIdentifier
	if v, ok := got[4].([]byte); !ok || g.Scan(v) != nil || g.String() != "6F9619FF-8B86-D011-B42D-00C04FD430C8" {
		t.Errorf("uniqueidentifier: %#v", got[4])
	}
	if got[5] != nil {
		t.Errorf("NULL: %#v", got[5])
	}
}

// hierarchyid columns travel as UDT (0xF0) with SQL Server's binary form: the driver
// reports the type name and returns the bytes; a string parameter converts to the type,
// and the methods run on the server.
func TestTypesHierarchyId(t *testing.T) {
	record(t, "types")
	db := open(t, plain)
	c := ctx(t)
	if _, err := db.ExecContext(c, `IF OBJECT_ID('dbo.go_org') IS NOT NULL DROP TABLE dbo.go_org;
		CREATE TABLE dbo.go_org (node hierarchyid PRIMARY KEY, name nvarchar(20) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct{ node, name string }{{"/1/", "a"}, {"/", "root"}, {"/1/1/", "aa"}, {"/-2.18/", "neg"}} {
		if _, err := db.ExecContext(c, "INSERT dbo.go_org VALUES (@p1, @p2)", n.node, n.name); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.QueryContext(c, "SELECT node, node.ToString(), node.GetLevel(), name FROM dbo.go_org ORDER BY node")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if got := types[0].DatabaseTypeName(); got != "HIERARCHYID" {
		t.Errorf("type name %q", got)
	}
	var got []string
	for rows.Next() {
		var b []byte
		var text, name string
		var level int64
		if err := rows.Scan(&b, &text, &level, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%x %s %d %s", b, text, level, name))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Depth-first order: the root, then the negative label, then /1/ and its child.
	want := []string{" / 0 root", "3f60a8 /-2.18/ 1 neg", "58 /1/ 1 a", "5ac0 /1/1/ 2 aa"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// geometry and geography travel as UDTs with SQL Server's serialization: a bulk copy
// sends the bytes as varbinary, the values read back exactly, the methods run on the
// server, and text converts on the way in.
func TestTypesSpatial(t *testing.T) {
	record(t, "types")
	db := open(t, plain)
	c := ctx(t)
	conn, err := db.Conn(c)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(c, "CREATE TABLE #shapes (id int PRIMARY KEY, g geometry NULL, gg geography NULL)"); err != nil {
		t.Fatal(err)
	}
	point, _ := hex.DecodeString("E6100000010C00000000000034400000000000004440") // POINT (20 40), SRID 4326
	stmt, err := conn.PrepareContext(c, mssql.CopyIn("#shapes", mssql.BulkOptions{}, "id", "g"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stmt.ExecContext(c, 1, point); err != nil {
		t.Fatal(err)
	}
	if _, err := stmt.ExecContext(c); err != nil {
		t.Fatal(err)
	}
	stmt.Close()
	if _, err := conn.ExecContext(c, "INSERT #shapes VALUES (2, @p1, geography::Point(47.65, -122.35, 4326))", "LINESTRING (0 0, 10 10, 20 0)"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(c, "SELECT g, g.STAsText(), g.STSrid, gg.Lat, gg.ToString() FROM #shapes ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if got := types[0].DatabaseTypeName(); got != "GEOMETRY" {
		t.Errorf("type name %q", got)
	}
	var got []string
	for rows.Next() {
		var b []byte
		var text string
		var srid int64
		var lat sql.NullFloat64
		var gtext sql.NullString
		if err := rows.Scan(&b, &text, &srid, &lat, &gtext); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%X|%s|%d|%v|%v", b, text, srid, lat, gtext))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"E6100000010C00000000000034400000000000004440|POINT (20 40)|4326|{0 false}|{ false}",
		"0000000001040300000000000000000000000000000000000000000000000000244000000000000024400000000000003440000000000000000001000000010000000001000000FFFFFFFF0000000002" +
			"|LINESTRING (0 0, 10 10, 20 0)|0|{47.65 true}|{POINT (-122.35 47.65) true}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// text, ntext and image columns (TEXTTYPE, NTEXTTYPE, IMAGETYPE with text pointers) filled
// by mssql.CopyIn (their bulk-load form: the table name in COLMETADATA, a text pointer
// before each value) read back exactly, with their type names.
func TestBulkCopyTextNtextImage(t *testing.T) {
	record(t, "bulk_copy")
	db := open(t, plain)
	mustExec(t, db, "IF OBJECT_ID('dbo.go_lob') IS NOT NULL DROP TABLE dbo.go_lob")
	mustExec(t, db, "CREATE TABLE dbo.go_lob (id int PRIMARY KEY, t text NULL, nt ntext NULL, im image NULL)")
	t.Cleanup(func() { db.Exec("DROP TABLE dbo.go_lob") })
	big := strings.Repeat("x", 9000)
	txn, err := db.BeginTx(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Rollback()
	stmt, err := txn.PrepareContext(ctx(t), mssql.CopyIn("dbo.go_lob", mssql.BulkOptions{}, "id", "t", "nt", "im"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][]any{{1, "hello", "wörld", []byte{1, 2}}, {2, nil, nil, nil}, {3, big, "é", []byte{}}} {
		if _, err := stmt.ExecContext(ctx(t), r...); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := stmt.ExecContext(ctx(t)); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 3 {
		t.Fatalf("rows copied: %d", n)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx(t), "SELECT t, nt, im FROM dbo.go_lob ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	_, names := columnTypes(t, rows)
	if strings.Join(names, ",") != "TEXT,NTEXT,IMAGE" {
		t.Errorf("column types: %v", names)
	}
	wantT := []sql.NullString{{String: "hello", Valid: true}, {}, {String: big, Valid: true}}
	var got []string
	for i := 0; rows.Next(); i++ {
		var tv, ntv sql.NullString
		var im []byte
		if err := rows.Scan(&tv, &ntv, &im); err != nil {
			t.Fatal(err)
		}
		if i >= len(wantT) || tv != wantT[i] {
			t.Errorf("row %d: text of %d characters (valid %v)", i+1, len(tv.String), tv.Valid)
		}
		got = append(got, fmt.Sprintf("%v|%x|%v", ntv, im, im == nil))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"{wörld true}|0102|false", "{ false}||true", "{é true}||false"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// columnTypes returns a result's column types and their database type names.
func columnTypes(t *testing.T, rows *sql.Rows) ([]*sql.ColumnType, []string) {
	t.Helper()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ct := range cts {
		names = append(names, ct.DatabaseTypeName())
	}
	return cts, names
}

// Always Encrypted on: the server acknowledges COLUMNENCRYPTION, so every result set's
// COLMETADATA carries an (empty) CEK table, and the driver asks
// sp_describe_parameter_encryption before each parameterized query; no column is
// encrypted, so parameters go in plaintext and round-trip unchanged.
func TestColumnEncryptionNegotiated(t *testing.T) {
	db := open(t, map[string]string{"encrypt": "disable", "columnencryption": "true"})
	conn, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "CREATE TABLE #ae (id int PRIMARY KEY, name nvarchar(50), amount decimal(10, 2))")
	for i, name := range []string{"alpha", "gämma"} {
		mustExec(t, conn, "INSERT INTO #ae VALUES (@id, @name, @amount)",
			sql.Named("id", i+1), sql.Named("name", name), sql.Named("amount", 2.5*float64(i+1)))
	}
	var id int
	var name, amount string
	err = conn.QueryRowContext(ctx(t), "SELECT id, name, amount FROM #ae WHERE name = @p1", "gämma").Scan(&id, &name, &amount)
	if err != nil {
		t.Fatal(err)
	}
	if id != 2 || name != "gämma" || amount != "5.00" {
		t.Fatalf("got %d %q %q", id, name, amount)
	}
	// Several result sets and an error keep their framing.
	rows, err := conn.QueryContext(ctx(t), "SELECT COUNT(*) FROM #ae; SELECT name FROM #ae ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	rows.Close()
	if strings.Join(got, ",") != "2,alpha,gämma" {
		t.Fatalf("got %v", got)
	}
	_, err = conn.ExecContext(ctx(t), "INSERT INTO #ae VALUES (@p1, N'dup', 1)", 1)
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != 2627 {
		t.Fatalf("want 2627, got %v", err)
	}
	// A bulk copy: the driver's own COLMETADATA carries the (empty) CEK table too.
	stmt, err := conn.PrepareContext(ctx(t), mssql.CopyIn("#ae", mssql.BulkOptions{}, "id", "name", "amount"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i <= 4; i++ {
		if _, err := stmt.ExecContext(ctx(t), i, fmt.Sprintf("bulk %d", i), "1.25"); err != nil {
			t.Fatal(err)
		}
	}
	res, err := stmt.ExecContext(ctx(t))
	if err != nil {
		t.Fatalf("bulk copy: %v", err)
	}
	stmt.Close()
	var n int
	if err := conn.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM #ae WHERE name LIKE 'bulk%' AND amount = 1.25").Scan(&n); err != nil || n != 2 {
		rc, _ := res.RowsAffected()
		t.Fatalf("bulk rows: %d (%d affected), %v", n, rc, err)
	}
}
