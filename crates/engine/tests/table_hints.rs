//! Locking table hints through real sessions: NOLOCK reads past a writer's uncommitted
//! change without waiting, READPAST skips the rows another transaction has locked (also
//! as the target of DELETE TOP: the queue-table pattern), NOWAIT fails at once with
//! 1222, and HOLDLOCK keeps the range it read locked until the transaction ends.
//!
//! Every check that could block runs with a short LOCK_TIMEOUT, so a hint that is not
//! honoured fails the test with 1222 instead of hanging it.

mod common;

use common::*;
use engine::Instance;
use std::sync::Arc;
use types::Value;

/// Database Hints with dbo.q (id 1..=10, v = id * 10) and a second session that holds
/// an uncommitted update of rows 2 and 3 and an uncommitted insert of row 11.
fn setup() -> (TempDir, Arc<Instance>, engine::Session, engine::Session) {
    let dir = TempDir::new("table-hints");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut admin = session(&inst);
    ok(
        &mut admin,
        "CREATE DATABASE Hints; USE Hints;
         CREATE TABLE dbo.q (id int PRIMARY KEY, v int NOT NULL);
         DECLARE @i int = 1;
         WHILE @i <= 10 BEGIN INSERT dbo.q VALUES (@i, @i * 10); SET @i += 1; END;",
    );
    let mut writer = inst.open_session("sa", PASSWORD, Some("Hints")).unwrap();
    ok(&mut writer, "BEGIN TRAN; UPDATE dbo.q SET v = -v WHERE id IN (2, 3); INSERT dbo.q VALUES (11, 110);");
    let mut reader = inst.open_session("sa", PASSWORD, Some("Hints")).unwrap();
    ok(&mut reader, "SET LOCK_TIMEOUT 200;");
    (dir, inst, writer, reader)
}

fn ints(sink: &sql::results::CollectSink) -> Vec<i64> {
    sink.result_sets()
        .last()
        .map(|(_, rows)| {
            rows.iter()
                .map(|r| match r.first() {
                    Some(Value::Int(n)) => i64::from(*n),
                    Some(Value::BigInt(n)) => *n,
                    other => panic!("not an integer: {other:?}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn error_numbers(sink: &sql::results::CollectSink) -> Vec<i32> {
    sink.errors().iter().map(|e| e.number).collect()
}

#[test]
fn nolock_reads_uncommitted_rows_without_waiting() {
    let (_dir, _inst, mut writer, mut reader) = setup();
    // Without the hint the locked rows make the read wait: 1222 after 200 ms.
    assert_eq!(error_numbers(&run(&mut reader, "SELECT v FROM dbo.q WHERE id = 2;")), vec![1222]);
    let r = ok(&mut reader, "SELECT v FROM dbo.q WITH (NOLOCK) WHERE id = 2;");
    assert_eq!(ints(&r), vec![-20]);
    let r = ok(&mut reader, "SELECT COUNT(*) FROM dbo.q WITH (READUNCOMMITTED);");
    assert_eq!(ints(&r), vec![11]);
    ok(&mut writer, "ROLLBACK;");
    let r = ok(&mut reader, "SELECT v FROM dbo.q WITH (NOLOCK) WHERE id = 2;");
    assert_eq!(ints(&r), vec![20]);
}

#[test]
fn readpast_skips_locked_rows() {
    let (_dir, _inst, mut writer, mut reader) = setup();
    let r = ok(&mut reader, "SELECT id FROM dbo.q WITH (READPAST) ORDER BY id;");
    assert_eq!(ints(&r), vec![1, 4, 5, 6, 7, 8, 9, 10]);
    // A point read of a locked key finds nothing; of a free one, its row.
    assert_eq!(ints(&ok(&mut reader, "SELECT v FROM dbo.q WITH (READPAST) WHERE id = 3;")), Vec::<i64>::new());
    assert_eq!(ints(&ok(&mut reader, "SELECT v FROM dbo.q WITH (READPAST) WHERE id = 4;")), vec![40]);
    // Inside a REPEATABLE READ transaction too; the rows read stay locked, the skipped
    // ones were never locked.
    ok(&mut reader, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; BEGIN TRAN;");
    assert_eq!(ints(&ok(&mut reader, "SELECT COUNT(*) FROM dbo.q WITH (READPAST);")), vec![8]);
    ok(&mut writer, "COMMIT;");
    // The writer's rows are free now, and the reader's own locks did not include them.
    assert_eq!(ints(&ok(&mut reader, "SELECT COUNT(*) FROM dbo.q WITH (READPAST);")), vec![11]);
    ok(&mut reader, "COMMIT; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;");
}

#[test]
fn delete_top_with_readpast_takes_rows_nobody_holds() {
    let (_dir, inst, mut writer, mut reader) = setup();
    ok(&mut writer, "ROLLBACK;");
    // Two consumers of the queue: the first holds its five rows uncommitted, the second
    // takes the next five without waiting for it.
    let mut first = inst.open_session("sa", PASSWORD, Some("Hints")).unwrap();
    ok(&mut first, "BEGIN TRAN; DELETE TOP (5) FROM dbo.q WITH (READPAST);");
    let r = ok(&mut reader, "BEGIN TRAN; DELETE TOP (5) FROM dbo.q WITH (READPAST); SELECT @@ROWCOUNT;");
    assert_eq!(ints(&r), vec![5]);
    ok(&mut first, "COMMIT;");
    ok(&mut reader, "COMMIT;");
    assert_eq!(ints(&ok(&mut reader, "SELECT COUNT(*) FROM dbo.q;")), vec![0]);
    // Without READPAST the second consumer waits for the first: 1222 here.
    ok(&mut reader, "INSERT dbo.q VALUES (1, 1), (2, 2);");
    ok(&mut first, "BEGIN TRAN; DELETE TOP (1) FROM dbo.q;");
    assert_eq!(error_numbers(&run(&mut reader, "DELETE TOP (1) FROM dbo.q;")), vec![1222]);
    ok(&mut first, "ROLLBACK;");
}

#[test]
fn nowait_fails_at_once_and_holdlock_keeps_the_range() {
    let (_dir, inst, mut writer, _reader) = setup();
    let mut other = inst.open_session("sa", PASSWORD, Some("Hints")).unwrap();
    // A LOCK_TIMEOUT of 10 s: only NOWAIT makes this fail at once.
    ok(&mut other, "SET LOCK_TIMEOUT 10000;");
    let t = std::time::Instant::now();
    assert_eq!(error_numbers(&run(&mut other, "SELECT v FROM dbo.q WITH (NOWAIT) WHERE id = 2;")), vec![1222]);
    assert!(t.elapsed() < std::time::Duration::from_secs(3), "NOWAIT waited {:?}", t.elapsed());
    ok(&mut writer, "ROLLBACK;");
    // HOLDLOCK: the rows read stay locked until the reader's transaction ends (at READ
    // COMMITTED without it, each is released once read).
    ok(&mut other, "BEGIN TRAN; SELECT COUNT(*) FROM dbo.q WHERE id BETWEEN 4 AND 6;");
    ok(&mut writer, "SET LOCK_TIMEOUT 200; UPDATE dbo.q SET v = 0 WHERE id = 5;");
    ok(&mut other, "SELECT COUNT(*) FROM dbo.q WITH (HOLDLOCK) WHERE id BETWEEN 4 AND 6;");
    assert_eq!(error_numbers(&run(&mut writer, "UPDATE dbo.q SET v = 1 WHERE id = 5;")), vec![1222]);
    ok(&mut other, "COMMIT;");
    ok(&mut writer, "UPDATE dbo.q SET v = 1 WHERE id = 5;");
}
