//! Off-row values dropped by committed deletes and updates are freed after the commit
//! (deferred frees): a crash between the commit and the frees must not leak them, and
//! recovery must never free one twice. Checked with `kill` (files as a crash leaves
//! them) and the allocation and LOB-unit checks of `check_database` (DBCC CHECKDB).

mod common;

use std::sync::Arc;

use common::*;
use engine::{Instance, Session};
use sql::results::CollectSink;
use types::Value;

fn ok(s: &mut Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    assert!(sink.errors().is_empty(), "{text}: {:?}", sink.errors());
    sink
}

fn rows(s: &mut Session, text: &str) -> Vec<Vec<Value>> {
    ok(s, text).result_sets().pop().map(|(_, r)| r).unwrap_or_default()
}

/// A database with a table whose values go off-row (20,000 bytes each: three pages).
fn setup(dir: &std::path::Path) -> (Arc<Instance>, Session, sql::host::DbId) {
    let inst = Instance::start(disk_config(dir)).unwrap();
    let mut s = session(&inst);
    ok(&mut s, "CREATE DATABASE Lobs");
    ok(&mut s, "USE Lobs");
    ok(&mut s, "CREATE TABLE dbo.Docs (id int PRIMARY KEY, body varbinary(max) NOT NULL)");
    let id = inst.database_id("Lobs").unwrap();
    (inst, s, id)
}

fn insert(s: &mut Session, from: i32, to: i32, fill: u8) {
    ok(
        s,
        &format!(
            "DECLARE @i int = {from};
             WHILE @i < {to}
             BEGIN
                 INSERT dbo.Docs VALUES (@i, CAST(REPLICATE(CAST(CHAR({fill}) AS varchar(max)), 20000) AS varbinary(max)));
                 SET @i += 1;
             END"
        ),
    );
}

fn restart_after_crash(inst: Arc<Instance>, s: Session, dir: &std::path::Path) -> (Arc<Instance>, Session) {
    inst.kill();
    drop(s);
    drop(inst);
    let inst = Instance::start(disk_config(dir)).unwrap();
    let mut s = session(&inst);
    ok(&mut s, "USE Lobs");
    (inst, s)
}

fn problems(inst: &Instance, id: sql::host::DbId) -> Vec<String> {
    inst.check_database(id).unwrap()
}

/// Rows and the byte each value is made of, checked in full.
fn contents(s: &mut Session) -> Vec<(i32, u8)> {
    rows(s, "SELECT id, body FROM dbo.Docs ORDER BY id")
        .into_iter()
        .map(|r| {
            let Value::Int(id) = r[0] else { panic!("id {:?}", r[0]) };
            let Value::Binary(b) = &r[1] else { panic!("body {:?}", r[1]) };
            assert_eq!(b.len(), 20_000, "row {id}");
            assert!(b.iter().all(|&x| x == b[0]), "row {id} is damaged");
            (id, b[0])
        })
        .collect()
}

fn expected(ids: std::ops::Range<i32>, fill: u8) -> Vec<(i32, u8)> {
    ids.map(|i| (i, fill)).collect()
}

#[test]
fn frees_a_crash_kept_from_running_are_done_by_recovery() {
    let dir = TempDir::new("lob-frees-crash");
    let (inst, mut s, id) = setup(dir.path());
    insert(&mut s, 0, 20, b'a');
    let db = inst.txn_database(id).unwrap();
    // As if the process died right after the commits: the deletes and the update are
    // durable, their frees never ran.
    db.pause_deferred_frees(true);
    ok(&mut s, "DELETE dbo.Docs WHERE id < 10");
    ok(
        &mut s,
        "UPDATE dbo.Docs SET body = CAST(REPLICATE(CAST('b' AS varchar(max)), 20000) AS varbinary(max)) WHERE id = 15",
    );
    assert_eq!(db.pending_frees().len(), 11, "ten deleted values and the updated one's old value");
    // The leak is visible to CHECKDB: records of the unit that no row points at.
    let found = problems(&inst, id);
    assert!(found.iter().any(|p| p.contains("belongs to no value")), "{found:?}");
    drop(db);

    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    assert!(inst.txn_database(id).unwrap().pending_frees().is_empty());
    let mut want = expected(10..20, b'a');
    want[5].1 = b'b';
    assert_eq!(contents(&mut s), want);
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn frees_pending_at_a_checkpoint_are_recorded_by_it() {
    let dir = TempDir::new("lob-frees-ckpt");
    let (inst, mut s, id) = setup(dir.path());
    insert(&mut s, 0, 12, b'a');
    let db = inst.txn_database(id).unwrap();
    db.pause_deferred_frees(true);
    ok(&mut s, "DELETE dbo.Docs WHERE id % 2 = 0");
    // The commit and its DEFERRED_FREE records are now before the checkpoint where
    // recovery starts: only the checkpoint's list says the frees are pending.
    ok(&mut s, "CHECKPOINT");
    drop(db);
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    assert_eq!(contents(&mut s), (1..12).step_by(2).map(|i| (i, b'a')).collect::<Vec<_>>());
    // A second crash right away: the frees are done and not done again.
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    assert_eq!(contents(&mut s).len(), 6);
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn recovery_never_frees_a_value_twice() {
    // Values freed at run time, their space taken by new values, then a crash with all
    // of it after the last checkpoint: recovery sees the deletes' DEFERRED_FREE records
    // and must find each free done (its tagged end record), or it would free records
    // that now belong to the new values.
    let dir = TempDir::new("lob-frees-twice");
    let (inst, mut s, id) = setup(dir.path());
    ok(&mut s, "CHECKPOINT");
    for round in 0..3u8 {
        let base = i32::from(round) * 100;
        insert(&mut s, base, base + 10, b'c' + round);
        ok(&mut s, &format!("DELETE dbo.Docs WHERE id < {}", base + 5));
    }
    assert!(inst.txn_database(id).unwrap().pending_frees().is_empty());
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    assert_eq!(contents(&mut s), expected(205..210, b'e'));
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn a_rolled_back_delete_frees_nothing() {
    let dir = TempDir::new("lob-frees-rollback");
    let (inst, mut s, id) = setup(dir.path());
    insert(&mut s, 0, 6, b'a');
    ok(&mut s, "BEGIN TRAN; DELETE dbo.Docs WHERE id < 3; ROLLBACK;");
    assert!(inst.txn_database(id).unwrap().pending_frees().is_empty());
    // And one cut short by the crash.
    ok(&mut s, "BEGIN TRAN; DELETE dbo.Docs WHERE id >= 3;");
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    assert_eq!(contents(&mut s), expected(0..6, b'a'));
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn a_dropped_tables_storage_is_freed_after_a_crash() {
    let dir = TempDir::new("lob-frees-drop");
    let (inst, mut s, id) = setup(dir.path());
    insert(&mut s, 0, 8, b'a');
    ok(&mut s, "CREATE TABLE dbo.Keep (id int PRIMARY KEY, body varbinary(max))");
    ok(&mut s, "INSERT dbo.Keep VALUES (1, CAST(REPLICATE(CAST('k' AS varchar(max)), 30000) AS varbinary(max)))");
    // The table's units: its tree (IN_ROW_DATA) and its off-row values (LOB_DATA).
    // A table without off-row values: dropping it logs nothing but the frees.
    ok(&mut s, "CREATE TABLE dbo.Plain (id int PRIMARY KEY); INSERT dbo.Plain VALUES (1), (2);");
    let units_of = |s: &mut Session, table: &str| -> Vec<u64> {
        rows(
            s,
            &format!(
                "SELECT a.allocation_unit_id FROM sys.allocation_units AS a
                 JOIN sys.partitions AS p ON p.partition_id = a.container_id
                 WHERE p.object_id = OBJECT_ID('{table}') ORDER BY a.type"
            ),
        )
        .into_iter()
        .map(|r| match r[0] {
            Value::BigInt(n) => n as u64,
            ref v => panic!("{v:?}"),
        })
        .collect()
    };
    let mut units = units_of(&mut s, "dbo.Docs");
    assert_eq!(units.len(), 2, "{units:?}");
    let plain = units_of(&mut s, "dbo.Plain");
    assert_eq!(plain.len(), 1, "{plain:?}");
    units.extend(plain);
    let db = inst.txn_database(id).unwrap();
    // A DROP rolled back keeps everything, including the row naming the LOB unit.
    ok(&mut s, "BEGIN TRAN; DROP TABLE dbo.Docs; ROLLBACK;");
    assert_eq!(contents(&mut s).len(), 8);
    db.pause_deferred_frees(true);
    ok(&mut s, "DROP TABLE dbo.Docs");
    ok(&mut s, "DROP TABLE dbo.Plain");
    assert_eq!(db.pending_frees().len(), 3);
    for &u in &units {
        assert!(db.db.alloc_unit(u).is_ok(), "unit {u} is still allocated before the crash");
    }
    drop(db);
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    let db = inst.txn_database(id).unwrap();
    for &u in &units {
        assert!(db.db.alloc_unit(u).is_err(), "unit {u} was freed by recovery");
    }
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    let keep = rows(&mut s, "SELECT DATALENGTH(body) FROM dbo.Keep");
    assert_eq!(keep, vec![vec![Value::BigInt(30_000)]]);
    drop((db, s));
    inst.shutdown().unwrap();
}

/// Every allocation unit of the database, by id.
fn all_units(inst: &Instance, id: sql::host::DbId) -> Vec<u64> {
    let mut v: Vec<u64> = inst.txn_database(id).unwrap().db.alloc_units().iter().map(|u| u.id).collect();
    v.sort_unstable();
    v
}

#[test]
fn a_create_table_a_crash_kept_from_committing_leaves_no_unit() {
    let dir = TempDir::new("lob-frees-create");
    let (inst, mut s, id) = setup(dir.path());
    insert(&mut s, 0, 2, b'a');
    ok(&mut s, "CHECKPOINT");
    let before = all_units(&inst, id);
    // The new table's tree, its nonclustered index and its LOB unit (the first off-row
    // value) all belong to the open transaction.
    ok(
        &mut s,
        "BEGIN TRAN;
         CREATE TABLE dbo.Fresh (id int PRIMARY KEY, tag int, body varbinary(max));
         CREATE INDEX ix_tag ON dbo.Fresh (tag);
         INSERT dbo.Fresh VALUES (1, 7, CAST(REPLICATE(CAST('f' AS varchar(max)), 30000) AS varbinary(max)));",
    );
    let during = all_units(&inst, id);
    assert_eq!(during.len(), before.len() + 3, "{before:?} -> {during:?}");
    // Committed by another session meanwhile: must survive.
    let mut other = session(&inst);
    ok(&mut other, "USE Lobs");
    insert(&mut other, 2, 3, b'b');
    drop(other);
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(all_units(&inst, id), before, "recovery's undo dropped the uncommitted units");
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    assert_eq!(contents(&mut s), vec![(0, b'a'), (1, b'a'), (2, b'b')]);
    assert_eq!(rows(&mut s, "SELECT OBJECT_ID('dbo.Fresh')"), vec![vec![Value::Null]]);
    // The name is free again, and the table works.
    ok(&mut s, "CREATE TABLE dbo.Fresh (id int PRIMARY KEY, body varbinary(max))");
    ok(&mut s, "INSERT dbo.Fresh VALUES (1, CAST(REPLICATE(CAST('g' AS varchar(max)), 30000) AS varbinary(max)))");
    assert_eq!(rows(&mut s, "SELECT DATALENGTH(body) FROM dbo.Fresh"), vec![vec![Value::BigInt(30_000)]]);
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn a_rollback_to_a_savepoint_drops_the_lob_unit_it_created() {
    let dir = TempDir::new("lob-frees-savepoint");
    let (inst, mut s, id) = setup(dir.path());
    let before = all_units(&inst, id);
    ok(&mut s, "BEGIN TRAN; CREATE TABLE dbo.Fresh (id int PRIMARY KEY, body varbinary(max)); SAVE TRAN s;");
    let with_table = all_units(&inst, id);
    assert_eq!(with_table.len(), before.len() + 1);
    let big = "CAST(REPLICATE(CAST('f' AS varchar(max)), 30000) AS varbinary(max))";
    ok(&mut s, &format!("INSERT dbo.Fresh VALUES (1, {big})"));
    assert_eq!(all_units(&inst, id).len(), before.len() + 2);
    ok(&mut s, "ROLLBACK TRAN s");
    assert_eq!(all_units(&inst, id), with_table, "the LOB unit went with the savepoint");
    // A second first value makes a new unit, which the commit keeps.
    ok(&mut s, &format!("INSERT dbo.Fresh VALUES (2, {big}); COMMIT;"));
    assert_eq!(all_units(&inst, id).len(), before.len() + 2);
    assert_eq!(
        rows(&mut s, "SELECT id, DATALENGTH(body) FROM dbo.Fresh"),
        vec![vec![Value::Int(2), Value::BigInt(30_000)]]
    );
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    // A whole rollback of a CREATE drops every unit it made.
    ok(&mut s, &format!("BEGIN TRAN; CREATE TABLE dbo.Gone (id int PRIMARY KEY, b varbinary(max)); INSERT dbo.Gone VALUES (1, {big}); ROLLBACK;"));
    assert_eq!(all_units(&inst, id).len(), before.len() + 2);
    let (inst, mut s) = restart_after_crash(inst, s, dir.path());
    assert_eq!(
        rows(&mut s, "SELECT id, DATALENGTH(body) FROM dbo.Fresh"),
        vec![vec![Value::Int(2), Value::BigInt(30_000)]]
    );
    assert_eq!(all_units(&inst, id).len(), before.len() + 2);
    assert_eq!(problems(&inst, id), Vec::<String>::new());
    drop(s);
    inst.shutdown().unwrap();
}
