//! Concurrent UPDATE, DELETE and MERGE through real sessions at READ COMMITTED, on tables
//! with a clustered key and on heaps: a row that another transaction deletes or changes
//! while this one waits for its lock is neither deleted twice, nor counted twice, nor
//! updated from a stale value (no lost updates).

mod common;

use std::sync::{Arc, Barrier};

use common::*;
use engine::Instance;
use types::Value;

fn scalar(s: &mut engine::Session, text: &str) -> i64 {
    let r = run(s, text);
    assert!(r.errors().is_empty(), "{text}: {:?}", r.errors());
    match r.result_sets().last().and_then(|(_, rows)| rows.first().and_then(|row| row.first().cloned())) {
        Some(Value::Int(n)) => i64::from(n),
        Some(Value::BigInt(n)) => n,
        other => panic!("{text}: {other:?}"),
    }
}

/// Runs `batch` on `threads` sessions released together; returns each one's scalar result.
fn on_sessions(inst: &Arc<Instance>, db: &str, threads: usize, batch: &str) -> Vec<i64> {
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let inst = inst.clone();
            let barrier = barrier.clone();
            let batch = batch.to_string();
            let db = db.to_string();
            std::thread::spawn(move || {
                let mut s = inst.open_session("sa", PASSWORD, Some(&db)).expect("logs in");
                barrier.wait();
                scalar(&mut s, &batch)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("session thread")).collect()
}

/// dbo.T and dbo.C with clustered primary keys.
const CLUSTERED: &str = "CREATE TABLE dbo.T (id int IDENTITY PRIMARY KEY, v int NOT NULL);
                         CREATE TABLE dbo.C (id int PRIMARY KEY, n int NOT NULL);";
/// The same tables as heaps (no clustered index: trees keyed by a row id).
const HEAPS: &str = "CREATE TABLE dbo.T (v int NOT NULL);
                     CREATE TABLE dbo.C (id int NOT NULL, n int NOT NULL);";

fn setup(rows: i64) -> (TempDir, Arc<Instance>) {
    setup_tables(CLUSTERED, rows)
}

/// Database Conc with `tables` (dbo.T with `rows` rows, dbo.C with the row (1, 0)).
fn setup_tables(tables: &str, rows: i64) -> (TempDir, Arc<Instance>) {
    let dir = TempDir::new("concurrent-dml");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = session(&inst);
    let text = format!(
        "CREATE DATABASE Conc;
         USE Conc;
         {tables}
         INSERT dbo.C VALUES (1, 0);
         DECLARE @i int = 0;
         BEGIN TRAN;
         WHILE @i < {rows} BEGIN INSERT dbo.T (v) VALUES (@i); SET @i += 1; END;
         COMMIT;
         SELECT COUNT(*) FROM dbo.T;"
    );
    assert_eq!(scalar(&mut s, &text), rows);
    (dir, inst)
}

#[test]
fn concurrent_delete_top_deletes_and_counts_each_row_once() {
    delete_top_counts_each_row_once(CLUSTERED);
}

#[test]
fn concurrent_delete_top_on_a_heap_counts_each_row_once() {
    delete_top_counts_each_row_once(HEAPS);
}

fn delete_top_counts_each_row_once(tables: &str) {
    let (_dir, inst) = setup_tables(tables, 6000);
    let totals = on_sessions(
        &inst,
        "Conc",
        6,
        "DECLARE @n int = 1, @total int = 0;
         WHILE @n > 0
         BEGIN
           BEGIN TRAN;
           DELETE TOP (250) dbo.T;
           SET @n = @@ROWCOUNT;
           COMMIT;
           SET @total += @n;
         END;
         SELECT @total;",
    );
    let mut s = inst.open_session("sa", PASSWORD, Some("Conc")).unwrap();
    let left = scalar(&mut s, "SELECT COUNT(*) FROM dbo.T");
    assert_eq!(left, 0, "every session loops until DELETE TOP finds nothing");
    assert_eq!(totals.iter().sum::<i64>(), 6000, "@@ROWCOUNT per session: {totals:?}");
}

#[test]
fn concurrent_updates_lose_nothing() {
    updates_lose_nothing(CLUSTERED);
}

#[test]
fn concurrent_updates_of_a_heap_lose_nothing() {
    updates_lose_nothing(HEAPS);
}

fn updates_lose_nothing(tables: &str) {
    let (_dir, inst) = setup_tables(tables, 0);
    let done = on_sessions(
        &inst,
        "Conc",
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
    let mut s = inst.open_session("sa", PASSWORD, Some("Conc")).unwrap();
    assert_eq!(scalar(&mut s, "SELECT n FROM dbo.C WHERE id = 1"), 900);
}

#[test]
fn a_row_changed_while_waiting_is_checked_again() {
    // Session A holds an update that moves a row out of B's WHERE; B's DELETE waits for
    // the row and must not delete it once A commits.
    let (_dir, inst) = setup(0);
    let mut a = inst.open_session("sa", PASSWORD, Some("Conc")).unwrap();
    let r = run(&mut a, "INSERT dbo.C VALUES (2, 10); BEGIN TRAN; UPDATE dbo.C SET n = 99 WHERE id = 2;");
    assert!(r.errors().is_empty(), "{:?}", r.errors());
    let inst2 = inst.clone();
    let b = std::thread::spawn(move || {
        let mut b = inst2.open_session("sa", PASSWORD, Some("Conc")).unwrap();
        scalar(&mut b, "DELETE dbo.C WHERE n = 10; SELECT @@ROWCOUNT;")
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let r = run(&mut a, "COMMIT;");
    assert!(r.errors().is_empty(), "{:?}", r.errors());
    assert_eq!(b.join().unwrap(), 0, "the row no longer has n = 10 when B gets it");
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM dbo.C WHERE id = 2"), 1);
}

#[test]
fn concurrent_merges_lose_nothing() {
    // Every session upserts the shared row 1 and a row of its own in one MERGE: the shared
    // row's increments all count (each MERGE reads it again under its U lock), the own row
    // is inserted once and then updated.
    let (_dir, inst) = setup(0);
    let done = on_sessions(
        &inst,
        "Conc",
        6,
        "DECLARE @i int = 0, @rows int = 0;
         WHILE @i < 100
         BEGIN
           MERGE dbo.C AS t
           USING (VALUES (1), (@@SPID + 1000)) AS s (id) ON t.id = s.id
           WHEN MATCHED THEN UPDATE SET n = t.n + 1
           WHEN NOT MATCHED THEN INSERT (id, n) VALUES (s.id, 1);
           SET @rows += @@ROWCOUNT;
           SET @i += 1;
         END;
         SELECT @rows;",
    );
    assert_eq!(done, vec![200; 6]);
    let mut s = inst.open_session("sa", PASSWORD, Some("Conc")).unwrap();
    assert_eq!(scalar(&mut s, "SELECT n FROM dbo.C WHERE id = 1"), 600);
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.C WHERE id > 1000 AND n = 100"), 6);
}

#[test]
fn a_merge_rechecks_a_row_changed_while_waiting() {
    // B's MERGE matches row 2 on n = 10 and waits for A's update to n = 99; once A commits
    // the row no longer meets the ON condition, so B leaves it alone.
    let (_dir, inst) = setup(0);
    let mut a = inst.open_session("sa", PASSWORD, Some("Conc")).unwrap();
    let r = run(&mut a, "INSERT dbo.C VALUES (2, 10); BEGIN TRAN; UPDATE dbo.C SET n = 99 WHERE id = 2;");
    assert!(r.errors().is_empty(), "{:?}", r.errors());
    let inst2 = inst.clone();
    let b = std::thread::spawn(move || {
        let mut b = inst2.open_session("sa", PASSWORD, Some("Conc")).unwrap();
        scalar(
            &mut b,
            "MERGE dbo.C AS t USING (VALUES (2, 10)) AS s (id, n) ON t.id = s.id AND t.n = s.n
             WHEN MATCHED THEN DELETE;
             SELECT @@ROWCOUNT;",
        )
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let r = run(&mut a, "COMMIT;");
    assert!(r.errors().is_empty(), "{:?}", r.errors());
    assert_eq!(b.join().unwrap(), 0, "the row no longer has n = 10 when B gets it");
    assert_eq!(scalar(&mut a, "SELECT n FROM dbo.C WHERE id = 2"), 99);
}

/// INSERT ... SELECT writes its rows in batches, with one contiguous IDENTITY range:
/// sessions inserting at once, some statements rolled back, with readers scanning
/// meanwhile, end with every committed row once, each identity value once, and no
/// reader ever saw a rolled-back row.
#[test]
fn concurrent_batched_inserts_with_readers() {
    let (_dir, inst) = setup(0);
    let mut s = session(&inst);
    let source = "USE Conc;
         CREATE TABLE dbo.S (v int NOT NULL PRIMARY KEY);
         DECLARE @i int = 0;
         BEGIN TRAN;
         WHILE @i < 600 BEGIN INSERT dbo.S VALUES (@i); SET @i += 1; END;
         COMMIT;
         SELECT COUNT(*) FROM dbo.S;";
    assert_eq!(scalar(&mut s, source), 600);
    let writers = 4;
    let readers = 2;
    let barrier = Arc::new(Barrier::new(writers + readers));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawn = |batch: String| {
        let (inst, barrier) = (inst.clone(), barrier.clone());
        std::thread::spawn(move || {
            let mut s = inst.open_session("sa", PASSWORD, Some("Conc")).expect("logs in");
            barrier.wait();
            scalar(&mut s, &batch)
        })
    };
    // Every third statement is rolled back; its rows have v < 0.
    let w: Vec<_> = (0..writers)
        .map(|_| {
            spawn(
                "DECLARE @k int = 0;
                 WHILE @k < 15
                 BEGIN
                   BEGIN TRAN;
                   IF @k % 3 = 2 INSERT dbo.T (v) SELECT -1 - v FROM dbo.S;
                   ELSE INSERT dbo.T (v) SELECT v FROM dbo.S;
                   IF @k % 3 = 2 ROLLBACK; ELSE COMMIT;
                   SET @k += 1;
                 END;
                 SELECT 0;"
                    .to_string(),
            )
        })
        .collect();
    let r: Vec<_> = (0..readers)
        .map(|_| {
            let stop = stop.clone();
            let (inst, barrier) = (inst.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut s = inst.open_session("sa", PASSWORD, Some("Conc")).expect("logs in");
                barrier.wait();
                let mut seen = 0;
                while !stop.load(std::sync::atomic::Ordering::Acquire) {
                    seen += scalar(&mut s, "SELECT COUNT(*) FROM dbo.T WHERE v < 0");
                }
                seen
            })
        })
        .collect();
    let done: Vec<i64> = w.into_iter().map(|h| h.join().expect("writer")).collect();
    stop.store(true, std::sync::atomic::Ordering::Release);
    let seen: Vec<i64> = r.into_iter().map(|h| h.join().expect("reader")).collect();
    assert_eq!(done, vec![0; writers]);
    assert_eq!(seen, vec![0; readers], "readers saw rolled-back rows");
    let mut s = inst.open_session("sa", PASSWORD, Some("Conc")).unwrap();
    let expect = (writers * 10 * 600) as i64;
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.T"), expect);
    assert_eq!(scalar(&mut s, "SELECT COUNT(DISTINCT id) FROM dbo.T"), expect);
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.T WHERE v < 0"), 0);
    // Each committed statement's rows: one of each source value per statement.
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM (SELECT v FROM dbo.T GROUP BY v HAVING COUNT(*) <> 40) x"), 0);
    // Each statement drew its IDENTITY values as one range, in the order it read dbo.S:
    // id - v is one number per statement, shared by its 600 rows and no other's.
    assert_eq!(scalar(&mut s, "SELECT COUNT(DISTINCT id - v) FROM dbo.T"), (writers * 10) as i64);
    assert_eq!(
        scalar(&mut s, "SELECT COUNT(*) FROM (SELECT id - v d FROM dbo.T GROUP BY id - v HAVING COUNT(*) <> 600) x"),
        0
    );
}
