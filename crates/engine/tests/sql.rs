//! T-SQL through sessions: the executor on the engine's host, end to end.

mod common;

use common::*;
use engine::Instance;
use sql::results::CollectSink;
use types::Value;

fn run(s: &mut engine::Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    sink
}

fn ok(s: &mut engine::Session, text: &str) -> CollectSink {
    let sink = run(s, text);
    assert!(sink.errors().is_empty(), "{text}: {:?}", sink.errors());
    sink
}

#[test]
fn tables_survive_a_restart_and_rollback_undoes() {
    let dir = TempDir::new("sql");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = session(&inst);
    ok(&mut s, "CREATE DATABASE App");
    ok(&mut s, "USE App");
    assert_eq!(s.database_name(), "App");
    ok(
        &mut s,
        "CREATE TABLE dbo.t (id int PRIMARY KEY, name nvarchar(50) NULL, big varbinary(max) NULL);
         INSERT INTO dbo.t (id, name, big) VALUES (1, N'one', NULL), (2, N'two', 0x0102);",
    );
    ok(&mut s, "BEGIN TRAN; INSERT INTO dbo.t (id, name) VALUES (3, N'three'); ROLLBACK;");
    assert_eq!(s.transaction_descriptor(), 0);
    let r = ok(&mut s, "SELECT id, name FROM dbo.t ORDER BY id DESC");
    let rows = &r.result_sets()[0].1;
    assert_eq!(
        rows,
        &vec![vec![Value::Int(2), Value::String("two".into())], vec![Value::Int(1), Value::String("one".into())]]
    );
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);

    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = inst.open_session("sa", PASSWORD, Some("App")).unwrap();
    let r = ok(&mut s, "SELECT COUNT(*) FROM dbo.t");
    assert_eq!(r.result_sets()[0].1, vec![vec![Value::Int(2)]]);
    let r = run(&mut s, "USE master; DROP DATABASE App");
    assert!(r.errors().is_empty(), "{:?}", r.errors());
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn temp_tables_end_with_their_session() {
    // A session's #temp tables are dropped when it ends, so a later session that gets
    // the same spid can create its own under the same name (tedious after pytds, in the
    // real-client suites).
    let inst = memory();
    let mut s = session(&inst);
    let spid = s.spid();
    ok(&mut s, "CREATE TABLE #r (x int); INSERT INTO #r VALUES (1); BEGIN TRAN; INSERT INTO #r VALUES (2)");
    let count = |s: &mut engine::Session| {
        let r = ok(s, "SELECT COUNT(*) FROM tempdb.sys.objects WHERE name LIKE '#r[_]%'");
        r.result_sets()[0].1[0][0].clone()
    };
    assert_eq!(count(&mut s), Value::Int(1));
    drop(s);
    let mut s2 = session(&inst);
    assert_eq!(s2.spid(), spid);
    assert_eq!(count(&mut s2), Value::Int(0));
    ok(&mut s2, "CREATE TABLE #r (y varchar(5)); INSERT INTO #r VALUES ('a')");
    let r = ok(&mut s2, "SELECT y FROM #r");
    assert_eq!(r.result_sets()[0].1, vec![vec![Value::String("a".into())]]);
    drop(s2);
    inst.shutdown().unwrap();
}
