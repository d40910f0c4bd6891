//! DDL that changes stored objects, checked across a restart of an on-disk instance:
//! multi-statement table-valued functions (catalog kind TF) and ALTER TABLE column
//! changes (rows rewritten in the new layout).

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

fn rows(s: &mut engine::Session, text: &str) -> Vec<Vec<Value>> {
    let r = ok(s, text);
    r.result_sets().last().map(|(_, rows)| rows.clone()).unwrap_or_default()
}

fn restart(
    inst: std::sync::Arc<Instance>,
    s: engine::Session,
    dir: &std::path::Path,
) -> (std::sync::Arc<Instance>, engine::Session) {
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);
    let inst = Instance::start(disk_config(dir)).unwrap();
    let s = inst.open_session("sa", PASSWORD, Some("App")).unwrap();
    (inst, s)
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

#[test]
fn table_valued_functions_survive_a_restart() {
    let dir = TempDir::new("tvf");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App");
    ok(&mut sn, "USE App");
    ok(
        &mut sn,
        "CREATE FUNCTION dbo.evens (@n int) RETURNS @t TABLE (v int NOT NULL PRIMARY KEY) AS
         BEGIN
             DECLARE @i int = 0;
             WHILE @i <= @n BEGIN INSERT @t VALUES (@i); SET @i += 2; END
             RETURN;
         END",
    );
    assert_eq!(rows(&mut sn, "SELECT COUNT(*) FROM dbo.evens(6)"), vec![vec![Value::Int(4)]]);
    let (inst, mut sn) = restart(inst, sn, dir.path());
    assert_eq!(rows(&mut sn, "SELECT type FROM sys.objects WHERE name = 'evens'"), vec![vec![s("TF")]]);
    assert_eq!(
        rows(&mut sn, "SELECT v FROM dbo.evens(4) ORDER BY v DESC"),
        vec![vec![Value::Int(4)], vec![Value::Int(2)], vec![Value::Int(0)]]
    );
    ok(&mut sn, "USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}
