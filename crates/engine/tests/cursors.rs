//! KEYSET and DYNAMIC cursors over real sessions: each FETCH reads the table as another
//! session has committed it since OPEN, and waits on (here: times out on) a row that
//! session holds locked, as a READ COMMITTED read does.

mod common;

use common::*;
use types::Value;

/// The single row of the batch's last result set, as integers.
fn ints(s: &mut engine::Session, text: &str) -> Vec<i64> {
    let r = run(s, text);
    assert!(r.errors().is_empty(), "{text}: {:?}", r.errors());
    let sets = r.result_sets();
    let row = sets.last().and_then(|(_, rows)| rows.first().cloned()).unwrap_or_default();
    row.into_iter()
        .map(|v| match v {
            Value::Int(n) => i64::from(n),
            Value::BigInt(n) => n,
            Value::Null => i64::MIN,
            other => panic!("{text}: {other:?}"),
        })
        .collect()
}

#[test]
fn keyset_and_dynamic_cursors_see_another_sessions_changes() {
    let inst = memory();
    let mut a = session(&inst);
    let mut b = session(&inst);
    let setup = run(
        &mut a,
        "CREATE TABLE dbo.t (id int PRIMARY KEY, v int NOT NULL);
         INSERT dbo.t VALUES (10, 1), (20, 2), (30, 3);
         DECLARE k CURSOR GLOBAL KEYSET FOR SELECT id, v FROM dbo.t ORDER BY id;
         DECLARE d CURSOR GLOBAL DYNAMIC FOR SELECT id, v FROM dbo.t WHERE v > 0;
         OPEN d; OPEN k;",
    );
    assert!(setup.errors().is_empty(), "{:?}", setup.errors());

    run(&mut b, "DELETE dbo.t WHERE id = 10; UPDATE dbo.t SET v = 22 WHERE id = 20; INSERT dbo.t VALUES (15, 5);");
    let fetch = "DECLARE @id int = -1, @v int = -1; FETCH NEXT FROM k INTO @id, @v; SELECT @@FETCH_STATUS, @id, @v;";
    // The keyset: the deleted row is missing, the updated one has its new value, the
    // inserted one is not there.
    assert_eq!(ints(&mut a, fetch), vec![-2, -1, -1]);
    assert_eq!(ints(&mut a, fetch), vec![0, 20, 22]);
    assert_eq!(ints(&mut a, fetch), vec![0, 30, 3]);
    assert_eq!(ints(&mut a, fetch), vec![-1, -1, -1]);
    // @@CURSOR_ROWS names the cursor opened last: the keyset, its size of OPEN time.
    assert_eq!(ints(&mut a, "SELECT @@CURSOR_ROWS"), vec![3]);

    // The dynamic cursor: the inserted row, not the deleted one.
    let next = "DECLARE @id int = -1, @v int = -1; FETCH NEXT FROM d INTO @id, @v; SELECT @@FETCH_STATUS, @id, @v;";
    assert_eq!(ints(&mut a, next), vec![0, 15, 5]);
    run(&mut b, "UPDATE dbo.t SET v = 0 WHERE id = 20; INSERT dbo.t VALUES (25, 7);");
    assert_eq!(ints(&mut a, next), vec![0, 25, 7]);

    // A row the other session holds locked: the fetch waits for it (LOCK_TIMEOUT: 1222).
    run(&mut b, "BEGIN TRAN; UPDATE dbo.t SET v = 33 WHERE id = 30;");
    let blocked = run(&mut a, "SET LOCK_TIMEOUT 200; FETCH NEXT FROM d;");
    let numbers: Vec<i32> = blocked.errors().iter().map(|e| e.number).collect();
    assert_eq!(numbers, vec![1222]);
    run(&mut b, "ROLLBACK;");
    let prior =
        "SET LOCK_TIMEOUT -1; DECLARE @id int, @v int; FETCH PRIOR FROM d INTO @id, @v; SELECT @@FETCH_STATUS, @id;";
    assert_eq!(ints(&mut a, prior), vec![0, 15]);
}
