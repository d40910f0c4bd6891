//! Syntax errors: the exact SQL Server error (number, severity, state, line, message)
//! for bad input.
//!
//! How the expected messages were chosen (SQL Server's rules, as documented and observed):
//! - the first token that cannot continue the batch is named: Msg 102 "Incorrect syntax
//!   near 'x'." with the token's text (a string's or delimited name's value without its
//!   quotes), or Msg 156 "Incorrect syntax near the keyword 'x'." when that token is a
//!   reserved keyword, spelled as the user typed it;
//! - when the batch ends early, the last token is named (`SELECT * FROM t WHERE` is near
//!   the keyword 'WHERE');
//! - `SELECT * FORM t` is Msg 102 near 'FORM': `SELECT *` is a complete statement, and a
//!   statement cannot start with the word FORM (only the first statement of a batch may be
//!   a bare procedure name);
//! - the line is the offending token's line within the batch.

use sql::parse_batch;

fn check(sql: &str, number: i32, line: u32, message: &str) {
    let err = match parse_batch(sql) {
        Ok(b) => panic!("expected an error for {sql:?}, got {b:?}"),
        Err(e) => e,
    };
    assert_eq!(
        (err.number, err.severity, err.line, err.message.as_str()),
        (number, 15, line, message),
        "input: {sql:?}"
    );
    if matches!(number, 102 | 156 | 105 | 113 | 191 | 111) {
        assert_eq!(err.state, 1, "input: {sql:?}");
    }
}

#[test]
fn syntax_errors() {
    let near = |t: &str| format!("Incorrect syntax near '{t}'.");
    let near_kw = |t: &str| format!("Incorrect syntax near the keyword '{t}'.");
    let cases: Vec<(&str, i32, u32, String)> = vec![
        ("SELECT * FORM t", 102, 1, near("FORM")),
        ("SELECT FROM", 156, 1, near_kw("FROM")),
        ("select from t", 156, 1, near_kw("from")),
        ("SELECT 1\nSELECT 2\nSELECT * FROM WHERE x = 1", 156, 3, near_kw("WHERE")),
        ("-- comment\n/* block\n comment */ SELECT FROM t", 156, 3, near_kw("FROM")),
        ("SELECT", 156, 1, near_kw("SELECT")),
        ("SELECT * FROM t WHERE", 156, 1, near_kw("WHERE")),
        ("SELECT 1 +", 102, 1, near("+")),
        ("SELECT (1", 102, 1, near("1")),
        ("SELECT 1 = 1", 102, 1, near("=")),
        ("SELECT * FROM t WHERE a = = 1", 102, 1, near("=")),
        ("SELECT a,\n  b\nFROM t\nWHERE c ==\n 1", 102, 4, near("=")),
        ("SELECT 'a' 'b' 'c'", 102, 1, near("c")),
        ("SELECT [my col] [alias] [extra]", 102, 1, near("extra")),
        ("SELECT ?", 102, 1, near("?")),
        ("SELECT 1 AS", 156, 1, near_kw("AS")),
        ("SELECT 1 ORDER BY", 156, 1, near_kw("BY")),
        ("SELECT * FROM t1 JOIN t2", 102, 1, near("t2")),
        ("SELECT x FROM t WITH (NOLOCK", 102, 1, near("NOLOCK")),
        ("SELECT * FROM t WHERE a IN ()", 102, 1, near(")")),
        ("INSERT INTO t VALUES (1,)", 102, 1, near(")")),
        ("CREATE TABLE t (a int,", 102, 1, near(",")),
        ("CREATE TABLE t (a int NOT)", 102, 1, near(")")),
        ("DECLARE @x int =", 102, 1, near("=")),
        ("IF 1 = 1", 102, 1, near("1")),
        ("BEGIN\n  SELECT 1", 102, 2, near("1")),
        ("BEGIN END", 156, 1, near_kw("END")),
        ("WHILE", 156, 1, near_kw("WHILE")),
        ("EXEC", 156, 1, near_kw("EXEC")),
        ("THROW 50000, 'oops'", 102, 1, near("oops")),
        ("SELECT 1;\nfoo", 102, 2, near("foo")),
        ("SELECT 1\nfoo bar", 102, 2, near("bar")),
        ("SELECT 1 THROW 50000, 'x', 1", 102, 1, near("50000")),
        ("BEGIN TRY SELECT 1 END TRY", 102, 1, near("TRY")),
        ("BEGIN TRY SELECT 1 END TRY; BEGIN CATCH END CATCH", 102, 1, near(";")),
        ("UPDATE t SET a = 1 = 2", 102, 1, near("=")),
        ("CREATE VIEW v AS SELECT 1 SELECT 2", 156, 1, near_kw("SELECT")),
        ("ALTER DATABASE d SET RECOVERY SOMETIMES", 102, 1, near("SOMETIMES")),
        ("BACKUP DATABASE d TO", 156, 1, near_kw("TO")),
        ("SELECT a.b.c.d.e.f FROM t", 102, 1, near(".")),
        ("CREATE EVENT SESSION s ON SERVER", 102, 1, near("SERVER")),
        ("DBCC CHECKDB WITH", 156, 1, near_kw("WITH")),
        ("SELECT CAST(1 AS)", 102, 1, near(")")),
        ("SELECT CASE END", 156, 1, near_kw("END")),
        ("SELECT CASE WHEN 1 = 1 THEN 1", 102, 1, near("1")),
        ("SET NOCOUNT", 102, 1, near("NOCOUNT")),
    ];
    let mut failures = Vec::new();
    for (sql, number, line, message) in cases {
        match parse_batch(sql) {
            Err(e)
                if (e.number, e.severity, e.state, e.line, e.message.as_str()) == (number, 15, 1, line, &message) => {}
            other => failures.push(format!("{sql:?}: expected {number} line {line} {message:?}, got {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lexical_errors() {
    check(
        "SELECT 1\nSELECT 'it''s\nnot closed",
        105,
        2,
        "Unclosed quotation mark after the character string 'it''s\nnot closed'.",
    );
    check("SELECT [abc", 105, 1, "Unclosed quotation mark after the character string 'abc'.");
    check("SELECT \"abc", 105, 1, "Unclosed quotation mark after the character string 'abc'.");
    check("SELECT 1\n/* outer /* inner */\nstill open", 113, 2, "Missing end comment mark '*/'.");
    let long = "a".repeat(129);
    check(
        &format!("SELECT 1 AS {long}"),
        103,
        1,
        &format!("The identifier that starts with '{}' is too long. Maximum length is 128.", &long[..128]),
    );
    let e = parse_batch("CREATE TABLE [] (a int)").unwrap_err();
    assert_eq!((e.number, e.severity, e.line), (1038, 15, 1));
}

#[test]
fn batch_level_errors() {
    check(
        "SELECT 1;\nCREATE PROCEDURE p AS SELECT 1",
        111,
        2,
        "'CREATE/ALTER PROCEDURE' must be the first statement in a query batch.",
    );
    check("PRINT 1\nCREATE VIEW v AS SELECT 1", 111, 2, "'CREATE VIEW' must be the first statement in a query batch.");
    check(
        "PRINT 1\nALTER FUNCTION f() RETURNS int AS BEGIN RETURN 1 END",
        111,
        2,
        "'ALTER FUNCTION' must be the first statement in a query batch.",
    );
    check(
        "\nMERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
        10713,
        2,
        "A MERGE statement must be terminated by a semi-colon (;).",
    );
    // At the end of a MERGE spread over lines: the line of its last token.
    check(
        "MERGE t\nUSING s ON t.id = s.id\nWHEN MATCHED THEN DELETE\n",
        10713,
        3,
        "A MERGE statement must be terminated by a semi-colon (;).",
    );
    check(
        "MERGE t USING s ON t.id = s.id\nWHEN MATCHED THEN DELETE\nWHEN MATCHED THEN DELETE;",
        10714,
        3,
        "An action of type 'WHEN MATCHED' cannot appear more than once in a 'DELETE' clause of a MERGE statement.",
    );
}

#[test]
fn errors_never_panic_on_truncations() {
    // Every prefix of a real batch either parses or gives a syntax error.
    let text = include_str!("corpus/03_delayed_durability.sql");
    for (_, batch, _) in sql::split_batches(text) {
        let mut cut = 0;
        while cut < batch.len() {
            if batch.is_char_boundary(cut) {
                let _ = parse_batch(&batch[..cut]);
            }
            cut += 7;
        }
    }
}
