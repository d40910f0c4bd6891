//! Concurrent DML on heaps (tables without a clustered index) through real sessions at
//! READ COMMITTED: no lost updates, no row deleted or counted twice.

mod common;

use std::sync::{Arc, Barrier};

use common::*;
use engine::Instance;
use sql::results::CollectSink;
use types::Value;

fn run(s: &mut engine::Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    sink
}

fn scalar(s: &mut engine::Session, text: &str) -> i64 {
    let r = run(s, text);
    assert!(r.errors().is_empty(), "{text}: {:?}", r.errors());
    match r.result_sets().last().and_then(|(_, rows)| rows.first().and_then(|row| row.first().cloned())) {
        Some(Value::Int(n)) => i64::from(n),
        Some(Value::BigInt(n)) => n,
        other => panic!("{text}: {other:?}"),
    }
}

fn on_sessions(inst: &Arc<Instance>, threads: usize, batch: &str) -> Vec<i64> {
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let inst = inst.clone();
            let barrier = barrier.clone();
            let batch = batch.to_string();
            std::thread::spawn(move || {
                let mut s = inst.open_session("sa", PASSWORD, Some("Heaps")).expect("logs in");
                barrier.wait();
                scalar(&mut s, &batch)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("session thread")).collect()
}

fn setup(rows: i64) -> (TempDir, Arc<Instance>) {
    let dir = TempDir::new("concurrent-heap");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = session(&inst);
    let text = format!(
        "CREATE DATABASE Heaps;
         USE Heaps;
         CREATE TABLE dbo.H (v int NOT NULL);
         CREATE TABLE dbo.C (id int NOT NULL, n int NOT NULL);
         INSERT dbo.C VALUES (1, 0);
         DECLARE @i int = 0;
         BEGIN TRAN;
         WHILE @i < {rows} BEGIN INSERT dbo.H (v) VALUES (@i); SET @i += 1; END;
         COMMIT;
         SELECT COUNT(*) FROM dbo.H;"
    );
    assert_eq!(scalar(&mut s, &text), rows);
    (dir, inst)
}

#[test]
fn concurrent_heap_updates_lose_nothing() {
    let (_dir, inst) = setup(0);
    let done = on_sessions(
        &inst,
        6,
        "DECLARE @i int = 0, @rows int = 0;
         WHILE @i < 150
         BEGIN
           UPDATE dbo.C SET n = n + 1 WHERE id = 1;
           SET @rows += @@ROWCOUNT;
           SET @i += 1;
         END;
         SELECT @rows;",
    );
    assert_eq!(done, vec![150; 6]);
    let mut s = inst.open_session("sa", PASSWORD, Some("Heaps")).unwrap();
    assert_eq!(scalar(&mut s, "SELECT n FROM dbo.C WHERE id = 1"), 900);
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.C"), 1);
}

#[test]
fn concurrent_heap_delete_top_counts_each_row_once() {
    let (_dir, inst) = setup(3000);
    let totals = on_sessions(
        &inst,
        6,
        "DECLARE @n int = 1, @total int = 0;
         WHILE @n > 0
         BEGIN
           BEGIN TRAN;
           DELETE TOP (100) dbo.H;
           SET @n = @@ROWCOUNT;
           COMMIT;
           SET @total += @n;
         END;
         SELECT @total;",
    );
    let mut s = inst.open_session("sa", PASSWORD, Some("Heaps")).unwrap();
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.H"), 0);
    assert_eq!(totals.iter().sum::<i64>(), 3000, "@@ROWCOUNT per session: {totals:?}");
}
