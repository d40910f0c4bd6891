//! T-SQL through sessions: the executor on the engine's host, end to end.

mod common;

use common::*;
use engine::Instance;
use types::Value;

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

/// Scans hand rows to the executor undecoded (`Host::scan_stored`): rows with values
/// stored off-row are read through the transaction instead, in key order either way,
/// across scan batches, through a nonclustered index and with a computed column.
#[test]
fn scans_decode_stored_rows_and_read_off_row_values() {
    let inst = memory();
    let mut s = session(&inst);
    ok(
        &mut s,
        "CREATE TABLE dbo.w (id int PRIMARY KEY, name varchar(20) NULL, big varchar(max) NULL, twice AS id * 2);
         CREATE INDEX ix_name ON dbo.w (name);",
    );
    // 1,200 rows (more than one scan batch); every 100th has a value too long for the row.
    let big = |id: i32| "b".repeat(9000 + id as usize);
    let mut expected = Vec::new();
    for id in 0..1200 {
        let name = if id % 7 == 0 { Value::Null } else { Value::String(format!("n{id:04}")) };
        let big_v = if id % 100 == 0 { Value::String(big(id)) } else { Value::String(format!("s{id}")) };
        let (name_sql, big_sql) = (
            match &name {
                Value::String(n) => format!("'{n}'"),
                _ => "NULL".to_string(),
            },
            if id % 100 == 0 {
                format!("REPLICATE(CAST('b' AS varchar(max)), {})", 9000 + id)
            } else {
                format!("'s{id}'")
            },
        );
        ok(&mut s, &format!("INSERT INTO dbo.w (id, name, big) VALUES ({id}, {name_sql}, {big_sql})"));
        expected.push(vec![Value::Int(id), name, big_v, Value::Int(id * 2)]);
    }
    let r = ok(&mut s, "SELECT id, name, big, twice FROM dbo.w");
    assert_eq!(r.result_sets()[0].1, expected);
    let r = ok(&mut s, "SELECT * FROM dbo.w ORDER BY id DESC");
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(r.result_sets()[0].1, reversed);
    let r = ok(&mut s, "SELECT id, big FROM dbo.w WITH (INDEX(ix_name)) WHERE name >= 'n1100' ORDER BY name");
    let by_name: Vec<Vec<Value>> = expected
        .iter()
        .filter(|row| matches!(&row[1], Value::String(n) if n.as_str() >= "n1100"))
        .map(|row| vec![row[0].clone(), row[2].clone()])
        .collect();
    assert_eq!(r.result_sets()[0].1, by_name);
    // Deleted rows with off-row values are not seen, the others are.
    ok(&mut s, "DELETE FROM dbo.w WHERE id % 200 = 0");
    let r = ok(&mut s, "SELECT COUNT(*), SUM(LEN(big)) FROM dbo.w WHERE id % 100 = 0");
    let kept: Vec<i32> = (0..1200).filter(|i| i % 100 == 0 && i % 200 != 0).collect();
    let len: i64 = kept.iter().map(|&i| 9000 + i64::from(i)).sum();
    assert_eq!(r.result_sets()[0].1, vec![vec![Value::Int(kept.len() as i32), Value::BigInt(len)]]);
    drop(s);
    inst.shutdown().unwrap();
}
