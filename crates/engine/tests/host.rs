//! The engine's `Host` semantics: rows through indexes, transactions, savepoints,
//! locking between sessions, every type, sparse columns, off-row values.

mod common;

use std::ops::Bound;

use common::*;
use sql::host::{DataAccess, Host, HostError, IndexRef, Isolation, StoredColumn, Transactions};
use types::{Length, SqlType, Value};

fn int_table(host: &mut dyn Host) -> IndexRef {
    create_index(
        host,
        1,
        1_000_001,
        cols(&[(SqlType::Int, false), (SqlType::NVarChar { len: Length::Bounded(50) }, true)]),
    )
}

fn row(n: i32, s: &str) -> Vec<Value> {
    vec![Value::Int(n), Value::String(s.to_string())]
}

fn scan_all(
    host: &mut dyn Host,
    ix: &IndexRef,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    reverse: bool,
    max: usize,
) -> Vec<i32> {
    // Pages through the range `max` rows at a time, as the executor does.
    let mut out = Vec::new();
    let mut last: Option<Vec<u8>> = None;
    loop {
        let mut chunk = Vec::new();
        let (lo, hi) = match (&last, reverse) {
            (Some(k), false) => (Bound::Excluded(k.as_slice()), upper),
            (Some(k), true) => (lower, Bound::Excluded(k.as_slice())),
            (None, _) => (lower, upper),
        };
        let more = host.scan(ix, lo, hi, reverse, max, &mut chunk).unwrap();
        assert!(chunk.len() <= max);
        for (k, r) in &chunk {
            match r[0] {
                Value::Int(n) => {
                    assert_eq!(k, &key(n as u32));
                    out.push(n)
                }
                ref v => panic!("unexpected {v:?}"),
            }
        }
        last = chunk.last().map(|(k, _)| k.clone()).or(last);
        if !more {
            return out;
        }
    }
}

#[test]
fn insert_get_scan_update_delete() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    let ix = int_table(h);
    h.begin("t").unwrap();
    for n in (1..=200).rev() {
        h.insert(&ix, &key(n), &row(n as i32, &format!("row {n}"))).unwrap();
    }
    assert_eq!(h.insert(&ix, &key(7), &row(7, "again")), Err(HostError::Duplicate));
    h.commit(None).unwrap();

    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(42)).unwrap(), Some(row(42, "row 42")));
    assert_eq!(h.get(&ix, &key(999)).unwrap(), None);
    let all = scan_all(h, &ix, Bound::Unbounded, Bound::Unbounded, false, 7);
    assert_eq!(all, (1..=200).collect::<Vec<_>>());
    let rev = scan_all(h, &ix, Bound::Unbounded, Bound::Unbounded, true, 13);
    assert_eq!(rev, (1..=200).rev().collect::<Vec<_>>());
    let (lo, hi) = (key(10), key(20));
    assert_eq!(scan_all(h, &ix, Bound::Included(&lo), Bound::Excluded(&hi), false, 4), (10..20).collect::<Vec<_>>());
    assert_eq!(
        scan_all(h, &ix, Bound::Excluded(&lo), Bound::Included(&hi), true, 3),
        (11..=20).rev().collect::<Vec<_>>()
    );
    // An empty range, and max 0.
    let mut out = Vec::new();
    assert!(!h.scan(&ix, Bound::Included(&hi), Bound::Excluded(&lo), false, 10, &mut out).unwrap());
    assert!(out.is_empty());

    assert!(h.update(&ix, &key(5), &row(5, "five")).unwrap());
    assert!(!h.update(&ix, &key(500), &row(500, "none")).unwrap());
    assert!(h.delete(&ix, &key(6)).unwrap());
    assert!(!h.delete(&ix, &key(6)).unwrap());
    assert_eq!(h.get_for_update(&ix, &key(5)).unwrap(), Some(row(5, "five")));
    h.commit(None).unwrap();

    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(6)).unwrap(), None);
    assert_eq!(scan_all(h, &ix, Bound::Unbounded, Bound::Unbounded, false, 1000).len(), 199);
    h.commit(None).unwrap();
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn rollback_and_savepoints() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    let ix = int_table(h);
    h.begin("t").unwrap();
    h.insert(&ix, &key(1), &row(1, "kept")).unwrap();
    h.commit(None).unwrap();

    h.begin("t").unwrap();
    h.insert(&ix, &key(2), &row(2, "rolled back")).unwrap();
    h.update(&ix, &key(1), &row(1, "changed")).unwrap();
    assert!(h.in_transaction());
    h.rollback().unwrap();
    assert!(!h.in_transaction());

    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(1)).unwrap(), Some(row(1, "kept")));
    assert_eq!(h.get(&ix, &key(2)).unwrap(), None);
    h.insert(&ix, &key(3), &row(3, "before sp")).unwrap();
    h.save("sp1").unwrap();
    h.insert(&ix, &key(4), &row(4, "after sp")).unwrap();
    h.delete(&ix, &key(1)).unwrap();
    // An index created after the savepoint disappears with it.
    let hobt = h.create_index(1, 1_000_002, 1, &cols(&[(SqlType::Int, false)])).unwrap();
    h.rollback_to("SP1").unwrap();
    assert_eq!(h.get(&ix, &key(4)).unwrap(), None);
    assert_eq!(h.get(&ix, &key(1)).unwrap(), Some(row(1, "kept")));
    assert_eq!(h.get(&ix, &key(3)).unwrap(), Some(row(3, "before sp")));
    let gone = IndexRef {
        db: 1,
        hints: Default::default(),
        hobt,
        object_id: 1_000_002,
        index_id: 1,
        columns: cols(&[(SqlType::Int, false)]).into(),
    };
    assert!(h.get(&gone, &key(1)).is_err());
    // The savepoint survives its rollback; an unknown one is 6401.
    h.insert(&ix, &key(5), &row(5, "x")).unwrap();
    h.rollback_to("sp1").unwrap();
    assert_eq!(h.get(&ix, &key(5)).unwrap(), None);
    match h.rollback_to("nope") {
        Err(HostError::Sql(e)) => assert_eq!(e.number, 6401),
        other => panic!("{other:?}"),
    }
    h.commit(None).unwrap();

    h.begin("t").unwrap();
    assert_eq!(scan_all(h, &ix, Bound::Unbounded, Bound::Unbounded, false, 10), vec![1, 3]);
    h.commit(None).unwrap();
    match h.save("outside") {
        Err(HostError::Sql(e)) => assert_eq!(e.number, 628),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_transaction_across_databases_and_drop_index() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    let a = create_index(h, 1, 1_000_001, cols(&[(SqlType::Int, false)]));
    let b = create_index(h, 4, 1_000_001, cols(&[(SqlType::Int, false)]));
    h.begin("two dbs").unwrap();
    h.insert(&a, &key(1), &[Value::Int(1)]).unwrap();
    h.insert(&b, &key(1), &[Value::Int(1)]).unwrap();
    h.save("s").unwrap();
    h.insert(&b, &key(2), &[Value::Int(2)]).unwrap();
    h.rollback_to("s").unwrap();
    h.commit(None).unwrap();
    h.begin("t").unwrap();
    assert!(h.get(&a, &key(1)).unwrap().is_some());
    assert!(h.get(&b, &key(1)).unwrap().is_some());
    assert!(h.get(&b, &key(2)).unwrap().is_none());
    // DROP rolled back keeps the index; committed frees it.
    h.drop_index(&a).unwrap();
    h.rollback().unwrap();
    h.begin("t").unwrap();
    assert!(h.get(&a, &key(1)).unwrap().is_some());
    h.drop_index(&a).unwrap();
    h.commit(None).unwrap();
    h.begin("t").unwrap();
    assert!(h.get(&a, &key(1)).is_err(), "a dropped index is gone");
    h.commit(None).unwrap();
}

#[test]
fn two_sessions_block_on_a_key_until_the_lock_timeout() {
    let inst = memory();
    let mut s1 = session(&inst);
    let mut s2 = session(&inst);
    assert_eq!((s1.spid(), s2.spid()), (51, 52));
    let ix = int_table(s1.host());
    let h1 = s1.host();
    h1.begin("writer").unwrap();
    h1.insert(&ix, &key(1), &row(1, "uncommitted")).unwrap();
    assert_ne!(s1.transaction_descriptor(), 0);

    let h2 = s2.host();
    h2.set_lock_timeout(100);
    h2.begin("reader").unwrap();
    let t = std::time::Instant::now();
    match h2.get(&ix, &key(1)) {
        Err(HostError::Sql(e)) => {
            assert_eq!((e.number, e.message.as_str()), (1222, "Lock request time out period exceeded."))
        }
        other => panic!("expected 1222, got {other:?}"),
    }
    assert!(t.elapsed() >= std::time::Duration::from_millis(90));
    // READ UNCOMMITTED reads through the lock.
    h2.set_isolation(Isolation::ReadUncommitted).unwrap();
    assert_eq!(h2.get(&ix, &key(1)).unwrap(), Some(row(1, "uncommitted")));
    h2.set_isolation(Isolation::ReadCommitted).unwrap();
    // The statement failed, the transaction goes on; after the writer commits, the row is there.
    s1.host().commit(None).unwrap();
    assert_eq!(s1.transaction_descriptor(), 0);
    assert_eq!(s2.host().get(&ix, &key(1)).unwrap(), Some(row(1, "uncommitted")));
    s2.host().commit(None).unwrap();

    // Dropping a session rolls its transaction back and releases its locks.
    let h1 = s1.host();
    h1.begin("dropped").unwrap();
    h1.update(&ix, &key(1), &row(1, "never")).unwrap();
    drop(s1);
    let h2 = s2.host();
    h2.begin("t").unwrap();
    assert_eq!(h2.get(&ix, &key(1)).unwrap(), Some(row(1, "uncommitted")));
    h2.commit(None).unwrap();
    // SNAPSHOT is refused at the first access (row versioning is not built).
    h2.set_isolation(Isolation::Snapshot).unwrap();
    h2.begin("t").unwrap();
    match h2.get(&ix, &key(1)) {
        Err(HostError::Sql(e)) => assert_eq!(e.number, 3952),
        other => panic!("{other:?}"),
    }
    h2.rollback().unwrap();
}

fn every_type() -> Vec<(SqlType, Value)> {
    vec![
        (SqlType::Bit, Value::Bit(true)),
        (SqlType::TinyInt, Value::TinyInt(255)),
        (SqlType::SmallInt, Value::SmallInt(-32768)),
        (SqlType::Int, Value::Int(i32::MIN)),
        (SqlType::BigInt, Value::BigInt(i64::MAX)),
        (
            SqlType::Decimal { precision: 38, scale: 4 },
            Value::Decimal { value: -12_345_678_901_234_567_890_123, precision: 38, scale: 4 },
        ),
        (SqlType::Numeric { precision: 5, scale: 2 }, Value::Decimal { value: 99_999, precision: 5, scale: 2 }),
        (SqlType::Money, Value::Money(-922_337_203_685_477_580)),
        (SqlType::SmallMoney, Value::Money(2_147_483_647)),
        (SqlType::Real, Value::Real(1.5e-5)),
        (SqlType::Float, Value::Float(-1e300)),
        (SqlType::Date, Value::Date(738_000)),
        (SqlType::Time { scale: 7 }, Value::Time { ticks: 863_999_999_999, scale: 7 }),
        (SqlType::DateTime, Value::DateTime { days: -53_690, ticks: 25_919_999 }),
        (SqlType::SmallDateTime, Value::SmallDateTime { days: 65_535, minutes: 1439 }),
        (
            SqlType::DateTime2 { scale: 3 },
            Value::DateTime2 { days: 3_652_058, ticks: 864_000_000_000 - 10_000, scale: 3 },
        ),
        (
            SqlType::DateTimeOffset { scale: 0 },
            Value::DateTimeOffset { days: 700_000, ticks: 36_000_000_000, scale: 0, offset: -840 },
        ),
        (SqlType::Char { len: 5 }, Value::String("ab   ".into())),
        (SqlType::VarChar { len: Length::Bounded(20) }, Value::String("café".into())),
        (SqlType::VarChar { len: Length::Max }, Value::String("x".repeat(9000))),
        (SqlType::NChar { len: 3 }, Value::String("ñ€ ".into())),
        (SqlType::NVarChar { len: Length::Bounded(10) }, Value::String("日本語".into())),
        (SqlType::NVarChar { len: Length::Max }, Value::String("ü".repeat(5000))),
        (SqlType::Binary { len: 4 }, Value::Binary(vec![1, 2, 3, 4])),
        (SqlType::VarBinary { len: Length::Bounded(8000) }, Value::Binary(vec![7; 8000])),
        (SqlType::UniqueIdentifier, Value::Guid([9; 16])),
        (SqlType::Xml, Value::String("<a b=\"1\"/>".into())),
    ]
}

#[test]
fn every_type_with_and_without_nulls() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    let types = every_type();
    let columns: Vec<StoredColumn> = std::iter::once(StoredColumn {
        ty: SqlType::Int,
        nullable: false,
        sparse: false,
        code_page: types::CodePage::CP1252,
    })
    .chain(types.iter().map(|(ty, _)| StoredColumn {
        ty: *ty,
        nullable: true,
        sparse: false,
        code_page: types::CodePage::CP1252,
    }))
    .collect();
    let ix = create_index(h, 1, 1_000_010, columns);
    let full: Vec<Value> = std::iter::once(Value::Int(1)).chain(types.iter().map(|(_, v)| v.clone())).collect();
    let nulls: Vec<Value> = std::iter::once(Value::Int(2)).chain(types.iter().map(|_| Value::Null)).collect();
    // Every other column NULL.
    let mixed: Vec<Value> = std::iter::once(Value::Int(3))
        .chain(types.iter().enumerate().map(|(i, (_, v))| if i % 2 == 0 { Value::Null } else { v.clone() }))
        .collect();
    h.begin("t").unwrap();
    for (k, r) in [(1, &full), (2, &nulls), (3, &mixed)] {
        h.insert(&ix, &key(k), r).unwrap();
    }
    h.commit(None).unwrap();
    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(1)).unwrap().as_ref(), Some(&full));
    assert_eq!(h.get(&ix, &key(2)).unwrap().as_ref(), Some(&nulls));
    assert_eq!(h.get(&ix, &key(3)).unwrap().as_ref(), Some(&mixed));
    let mut out = Vec::new();
    h.scan(&ix, Bound::Unbounded, Bound::Unbounded, true, 10, &mut out).unwrap();
    assert_eq!(out.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(), vec![mixed, nulls, full]);
    // A value of the wrong type is refused with the type's error, nothing stored.
    let mut bad = out[0].1.clone();
    bad[1] = Value::String("not a bit".into());
    match h.insert(&ix, &key(9), &bad) {
        Err(HostError::Sql(e)) => assert_eq!(e.number, 206),
        other => panic!("{other:?}"),
    }
    h.commit(None).unwrap();
}

#[test]
fn sparse_columns_and_a_megabyte_value() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    let mut columns =
        vec![StoredColumn { ty: SqlType::Int, nullable: false, sparse: false, code_page: types::CodePage::CP1252 }];
    for i in 0..40 {
        let ty = if i % 2 == 0 { SqlType::Int } else { SqlType::NVarChar { len: Length::Bounded(20) } };
        columns.push(StoredColumn { ty, nullable: true, sparse: true, code_page: types::CodePage::CP1252 });
    }
    columns.push(StoredColumn {
        ty: SqlType::VarBinary { len: Length::Max },
        nullable: true,
        sparse: false,
        code_page: types::CodePage::CP1252,
    });
    let ix = create_index(h, 1, 1_000_020, columns.clone());
    let mut r = vec![Value::Null; columns.len()];
    r[0] = Value::Int(1);
    r[5] = Value::Int(55);
    r[6] = Value::String("sparse six".into());
    r[40] = Value::String("last sparse".into());
    let big: Vec<u8> = (0..1_048_576u32).map(|i| (i * 7 % 251) as u8).collect();
    r[41] = Value::Binary(big.clone());
    h.begin("t").unwrap();
    h.insert(&ix, &key(1), &r).unwrap();
    let mut r2 = vec![Value::Null; columns.len()];
    r2[0] = Value::Int(2);
    h.insert(&ix, &key(2), &r2).unwrap();
    h.commit(None).unwrap();

    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(1)).unwrap(), Some(r.clone()));
    assert_eq!(h.get(&ix, &key(2)).unwrap(), Some(r2));
    // Replace the big value and delete the row: old values are freed after commit.
    let mut r3 = r.clone();
    r3[41] = Value::Binary(vec![1; 20_000]);
    assert!(h.update(&ix, &key(1), &r3).unwrap());
    assert_eq!(h.get(&ix, &key(1)).unwrap(), Some(r3));
    h.rollback().unwrap();
    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(1)).unwrap(), Some(r), "rollback restores the old megabyte");
    assert!(h.delete(&ix, &key(1)).unwrap());
    h.commit(None).unwrap();
    let db = inst.txn_database(1).unwrap();
    let lob = db
        .db
        .alloc_units()
        .into_iter()
        .find(|u| u.kind == storage::AllocUnitKind::LobData && u.object_id == 1_000_020)
        .expect("the index has a LOB unit");
    assert!(db.db.alloc_unit_pages(lob.id).unwrap().len() <= 1, "the deleted megabyte's pages are free");
}

#[test]
fn sessions_on_worker_threads() {
    let inst = memory();
    let ix = int_table(session(&inst).host());
    {
        let mut s = session(&inst);
        let h = s.host();
        h.begin("t").unwrap();
        h.insert(&ix, &key(0), &row(0, "counter")).unwrap();
        h.commit(None).unwrap();
    }
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let inst = inst.clone();
            let ix = ix.clone();
            std::thread::spawn(move || {
                let mut s = session(&inst);
                let h = s.host();
                for i in 0..25u32 {
                    let n = 1000 + t * 100 + i;
                    h.begin("insert").unwrap();
                    h.insert(&ix, &key(n), &row(n as i32, "w")).unwrap();
                    h.commit(None).unwrap();
                    // A read-modify-write of one hot row: U then X, no conversion deadlock.
                    h.begin("counter").unwrap();
                    let r = h.get_for_update(&ix, &key(0)).unwrap().unwrap();
                    let Value::String(c) = &r[1] else { panic!() };
                    let next = format!("{}", c.parse::<u32>().unwrap_or(0) + 1);
                    assert!(h.update(&ix, &key(0), &row(0, &next)).unwrap());
                    h.commit(None).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut s = session(&inst);
    let h = s.host();
    h.begin("t").unwrap();
    assert_eq!(h.get(&ix, &key(0)).unwrap(), Some(row(0, "100")));
    assert_eq!(scan_all(h, &ix, Bound::Unbounded, Bound::Unbounded, false, 64).len(), 101);
    h.commit(None).unwrap();
}
