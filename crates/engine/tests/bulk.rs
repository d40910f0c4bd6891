//! Bulk copy through a session: INSERT BULK, then the bulk-load message's rows
//! (`Session::execute_bulk_load`), with the options drivers send.

mod common;

use common::*;
use sql::request::{BulkColumn, BulkLoad};
use sql::results::{CollectSink, Event};
use types::{SqlType, Value};

fn ok(s: &mut engine::Session, text: &str) {
    let r = run(s, text);
    assert!(r.errors().is_empty(), "{text}: {:?}", r.errors());
}

fn rows(s: &mut engine::Session, text: &str) -> Vec<Vec<Value>> {
    let r = run(s, text);
    assert!(r.errors().is_empty(), "{text}: {:?}", r.errors());
    r.result_sets().pop().map(|(_, rows)| rows).unwrap_or_default()
}

fn load(cols: &[(&str, SqlType)], rows: Vec<Vec<Value>>) -> BulkLoad {
    BulkLoad { columns: cols.iter().map(|(n, ty)| BulkColumn { name: n.to_string(), ty: *ty }).collect(), rows }
}

/// INSERT BULK `stmt`, then `data`: the row count of the DONE, or the error numbers.
fn bulk(s: &mut engine::Session, stmt: &str, data: &BulkLoad) -> Result<u64, Vec<i32>> {
    ok(s, stmt);
    let mut sink = CollectSink::default();
    s.execute_bulk_load(data, &mut sink);
    let errors = sink.errors();
    if !errors.is_empty() {
        return Err(errors.iter().map(|e| e.number).collect());
    }
    // The load's own DONE comes last (a trigger's statements send theirs before it).
    let count = sink.events.iter().rev().find_map(|e| match e {
        Event::Done(d) => d.row_count,
        _ => None,
    });
    Ok(count.expect("a DONE with the row count"))
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

const NV: SqlType = SqlType::NVarChar { len: types::Length::Bounded(50) };

#[test]
fn bulk_load_inserts_through_the_insert_path() {
    let inst = memory();
    let mut ses = session(&inst);
    ok(
        &mut ses,
        "CREATE TABLE dbo.b (id int IDENTITY PRIMARY KEY, name nvarchar(20) NOT NULL UNIQUE,
         n int CONSTRAINT df_n DEFAULT 5, CHECK (n < 100))",
    );
    let cols = [("name", NV), ("n", SqlType::Int)];
    let stmt = "INSERT BULK dbo.b ([name] nvarchar(50) COLLATE SQL_Latin1_General_CP1_CI_AS, [n] int) WITH (TABLOCK, ROWS_PER_BATCH = 10, ORDER (name ASC))";
    let data = load(&cols, vec![vec![s("a"), Value::Int(1)], vec![s("b"), Value::Null]]);
    assert_eq!(bulk(&mut ses, stmt, &data), Ok(2));
    // Without KEEP_NULLS a NULL takes the default; with it, it stays NULL.
    let keep = "INSERT BULK dbo.b (name nvarchar(50), n int) WITH (KEEP_NULLS)";
    assert_eq!(bulk(&mut ses, keep, &load(&cols, vec![vec![s("c"), Value::Null]])), Ok(1));
    // CHECK constraints only with CHECK_CONSTRAINTS.
    let big = load(&cols, vec![vec![s("d"), Value::Int(500)]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.b (name nvarchar(50), n int)", &big), Ok(1));
    let big = load(&cols, vec![vec![s("e"), Value::Int(500)]]);
    assert_eq!(
        bulk(&mut ses, "INSERT BULK dbo.b (name nvarchar(50), n int) WITH (CHECK_CONSTRAINTS)", &big),
        Err(vec![547])
    );
    // NOT NULL and UNIQUE always; a failed load inserts nothing.
    let bad = load(&cols, vec![vec![s("f"), Value::Int(1)], vec![Value::Null, Value::Int(1)]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.b (name nvarchar(50), n int)", &bad), Err(vec![515]));
    let dup = load(&cols, vec![vec![s("g"), Value::Int(1)], vec![s("a"), Value::Int(1)]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.b (name nvarchar(50), n int)", &dup), Err(vec![2627]));
    assert_eq!(
        rows(&mut ses, "SELECT id, name, n FROM dbo.b ORDER BY id"),
        vec![
            vec![Value::Int(1), s("a"), Value::Int(1)],
            vec![Value::Int(2), s("b"), Value::Int(5)],
            vec![Value::Int(3), s("c"), Value::Null],
            vec![Value::Int(4), s("d"), Value::Int(500)],
        ]
    );
}

#[test]
fn identity_values_are_kept_only_with_keep_identity() {
    let inst = memory();
    let mut ses = session(&inst);
    ok(&mut ses, "CREATE TABLE dbo.i (id int IDENTITY(1, 1) PRIMARY KEY, v varchar(10))");
    let cols = [("id", SqlType::Int), ("v", NV)];
    let data = load(&cols, vec![vec![Value::Int(100), s("x")]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.i (id int, v nvarchar(50))", &data), Ok(1));
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.i (id int, v nvarchar(50)) WITH (KEEP_IDENTITY)", &data), Ok(1));
    assert_eq!(
        rows(&mut ses, "SELECT id, v FROM dbo.i ORDER BY id"),
        vec![vec![Value::Int(1), s("x")], vec![Value::Int(100), s("x")]]
    );
    // IDENTITY_INSERT is as it was.
    let r = run(&mut ses, "INSERT dbo.i (id, v) VALUES (7, 'y')");
    assert_eq!(r.errors().first().map(|e| e.number), Some(544));
}

#[test]
fn bulk_load_belongs_to_the_session_transaction() {
    let inst = memory();
    let mut ses = session(&inst);
    ok(&mut ses, "CREATE TABLE dbo.t (a int NOT NULL)");
    ok(&mut ses, "BEGIN TRAN");
    let data = load(&[("a", SqlType::Int)], vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.t (a int)", &data), Ok(2));
    assert_eq!(rows(&mut ses, "SELECT COUNT(*) FROM dbo.t"), vec![vec![Value::Int(2)]]);
    ok(&mut ses, "ROLLBACK");
    assert_eq!(rows(&mut ses, "SELECT COUNT(*) FROM dbo.t"), vec![vec![Value::Int(0)]]);
}

#[test]
fn insert_bulk_errors() {
    let inst = memory();
    let mut ses = session(&inst);
    ok(&mut ses, "CREATE TABLE dbo.t (a int NOT NULL, c AS a + 1)");
    let errs =
        |ses: &mut engine::Session, text: &str| run(ses, text).errors().iter().map(|e| e.number).collect::<Vec<_>>();
    assert_eq!(errs(&mut ses, "INSERT BULK dbo.nope (a int)"), vec![208]);
    assert_eq!(errs(&mut ses, "INSERT BULK dbo.t (b int)"), vec![207]);
    assert_eq!(errs(&mut ses, "INSERT BULK dbo.t (c int)"), vec![271]);
    assert_eq!(errs(&mut ses, "INSERT BULK dbo.t (a int) WITH (NO_SUCH_OPTION)"), vec![102]);
    // A bulk-load message with no INSERT BULK before it, or after another request.
    let data = load(&[("a", SqlType::Int)], vec![vec![Value::Int(1)]]);
    let mut sink = CollectSink::default();
    ses.execute_bulk_load(&data, &mut sink);
    assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![4002]);
    ok(&mut ses, "INSERT BULK dbo.t (a int)");
    ok(&mut ses, "SELECT 1");
    let mut sink = CollectSink::default();
    ses.execute_bulk_load(&data, &mut sink);
    assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![4002]);
    // Columns that do not match the INSERT BULK list.
    let two = load(&[("a", SqlType::Int), ("b", SqlType::Int)], vec![vec![Value::Int(1), Value::Int(2)]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.t (a int)", &two), Err(vec![4816]));
    // The session goes on.
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.t (a int)", &data), Ok(1));
    assert_eq!(rows(&mut ses, "SELECT a, c FROM dbo.t"), vec![vec![Value::Int(1), Value::Int(2)]]);
}

#[test]
fn triggers_fire_only_with_fire_triggers() {
    let inst = memory();
    let mut ses = session(&inst);
    ok(&mut ses, "CREATE TABLE dbo.t (a int NOT NULL); CREATE TABLE dbo.audit (n int, total int)");
    ok(
        &mut ses,
        "CREATE TRIGGER dbo.t_ins ON dbo.t AFTER INSERT AS
         INSERT INTO dbo.audit SELECT COUNT(*), SUM(a) FROM inserted",
    );
    let data = load(&[("a", SqlType::Int)], vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.t (a int)", &data), Ok(2));
    assert_eq!(rows(&mut ses, "SELECT COUNT(*) FROM dbo.audit"), vec![vec![Value::Int(0)]]);
    // Once for the load, with every row in `inserted`.
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.t (a int) WITH (FIRE_TRIGGERS)", &data), Ok(2));
    assert_eq!(rows(&mut ses, "SELECT n, total FROM dbo.audit"), vec![vec![Value::Int(2), Value::Int(3)]]);
    // An INSTEAD OF trigger gets the rows instead of the table.
    ok(
        &mut ses,
        "CREATE TRIGGER dbo.t_instead ON dbo.t INSTEAD OF INSERT AS
         INSERT INTO dbo.audit SELECT -COUNT(*), SUM(a) FROM inserted",
    );
    assert_eq!(bulk(&mut ses, "INSERT BULK dbo.t (a int) WITH (FIRE_TRIGGERS, CHECK_CONSTRAINTS)", &data), Ok(2));
    assert_eq!(rows(&mut ses, "SELECT COUNT(*) FROM dbo.t"), vec![vec![Value::Int(4)]]);
    assert_eq!(rows(&mut ses, "SELECT MIN(n) FROM dbo.audit"), vec![vec![Value::Int(-2)]]);
}
