//! The read path on the engine's host: hash joins (integer keys dense and sparse, string
//! and composite keys, NULLs, duplicates, outer joins) against nested loops, scans that
//! decode only the columns a query reads, and streamed rows decoded into recycled rows.

mod common;

use common::*;
use sql::results::CollectSink;
use types::Value;

fn ok(s: &mut engine::Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    assert!(sink.errors().is_empty(), "{text}: {:?}", sink.errors());
    sink
}

/// The rows of the last result set, in a canonical order (joins have none of their own).
fn rows(s: &mut engine::Session, text: &str) -> Vec<Vec<Value>> {
    let mut r = ok(s, text).result_sets().pop().map(|r| r.1).unwrap_or_default();
    r.sort_by_key(|row| format!("{row:?}"));
    r
}

/// Tables bigger than a scan batch (512 rows): `a` keyed 1..=700 with a string column in
/// two cases; `b` with duplicate, missing, NULL and out-of-range keys into `a`, in an
/// order unrelated to them (`b.aid` spans a small range: an array; `b.sparse` a wide
/// one: a hash table).
fn setup(s: &mut engine::Session) {
    ok(s, "CREATE DATABASE rp; USE rp");
    ok(
        s,
        "CREATE TABLE digits (i int NOT NULL);
         INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
         CREATE TABLE a (id int PRIMARY KEY, x int NULL, name varchar(20) NULL, big bigint NOT NULL);
         CREATE TABLE b (id int PRIMARY KEY, aid int NULL, name varchar(20) NULL, sparse bigint NULL);",
    );
    ok(
        s,
        "INSERT INTO a SELECT n, n % 7, CASE WHEN n % 2 = 0 THEN 'Name ' ELSE 'NAME ' END + CAST(n % 50 AS varchar(10)),
                CAST(n AS bigint) * 1000000007
         FROM (SELECT 1 + d1.i + 10 * d2.i + 100 * d3.i + 1000 * d4.i AS n
               FROM digits d1, digits d2, digits d3, digits d4) x WHERE n <= 700",
    );
    ok(
        s,
        "INSERT INTO b SELECT n,
                CASE WHEN n % 11 = 0 THEN NULL WHEN n % 13 = 0 THEN -n ELSE (n * 37) % 800 END,
                CASE WHEN n % 17 <> 0 THEN 'name ' + CAST((n * 7) % 60 AS varchar(10)) END,
                CASE WHEN n % 5 = 0 THEN NULL ELSE CAST((n * 37) % 800 AS bigint) * 1000000007 END
         FROM (SELECT 1 + d1.i + 10 * d2.i + 100 * d3.i + 1000 * d4.i AS n
               FROM digits d1, digits d2, digits d3, digits d4) x WHERE n <= 600",
    );
}

#[test]
fn hash_joins_return_what_nested_loops_return() {
    let inst = memory();
    let mut s = session(&inst);
    setup(&mut s);
    let kinds = ["INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER"];
    // Dense int keys (an array; probed from inside and outside its range), sparse
    // bigint keys (a hash table), strings compared case-insensitively, two keys at once
    // (encoded keys), and a residual predicate.
    let conditions = [
        "a.id = b.aid",
        "a.id - 650 = b.aid",
        "a.big = b.sparse",
        "a.name = b.name",
        "a.id = b.aid AND a.x = b.id % 7",
        "a.id = b.aid AND b.id > a.x * 100",
    ];
    for kind in kinds {
        for on in conditions {
            let hash = rows(&mut s, &format!("SELECT a.id, a.x, b.id, b.aid FROM a {kind} JOIN b ON {on}"));
            let kw = kind.split(' ').next().unwrap_or(kind);
            let looped = rows(&mut s, &format!("SELECT a.id, a.x, b.id, b.aid FROM a {kw} LOOP JOIN b ON {on}"));
            assert_eq!(hash.len(), looped.len(), "{kind} JOIN ON {on}");
            assert_eq!(hash, looped, "{kind} JOIN ON {on}");
            assert!(!hash.is_empty(), "{kind} JOIN ON {on} matched nothing");
        }
    }
    // Duplicates on both sides multiply; NULL keys match nothing.
    let n = rows(&mut s, "SELECT COUNT(*) FROM a JOIN b ON a.name = b.name");
    let expected = rows(
        &mut s,
        "SELECT SUM(CAST(ca.c AS int) * cb.c) FROM
           (SELECT UPPER(name) AS k, COUNT(*) AS c FROM a GROUP BY UPPER(name)) ca
           JOIN (SELECT UPPER(name) AS k, COUNT(*) AS c FROM b WHERE name IS NOT NULL GROUP BY UPPER(name)) cb
           ON ca.k = cb.k",
    );
    assert_eq!(n, expected);
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM a JOIN b ON a.x = b.aid AND b.aid IS NULL"),
        vec![vec![Value::Int(0)]]
    );
}

#[test]
fn scans_decode_the_columns_a_query_reads() {
    let inst = memory();
    let mut s = session(&inst);
    setup(&mut s);
    // Off-row values in a column no one reads are never fetched; the others are right.
    ok(&mut s, "CREATE TABLE w (id int PRIMARY KEY, g int NOT NULL, doc varchar(max) NULL, tag varchar(10) NULL)");
    ok(
        &mut s,
        "INSERT INTO w SELECT id, id % 10, REPLICATE(CAST('x' AS varchar(max)), 9000 + id), 't' + CAST(id % 3 AS varchar(1))
         FROM a WHERE id <= 600",
    );
    let grouped = rows(&mut s, "SELECT g, COUNT(*), SUM(id) FROM w GROUP BY g");
    assert_eq!(grouped.len(), 10);
    assert_eq!(grouped[0], vec![Value::Int(0), Value::Int(60), Value::Int((1..=60).map(|k| k * 10).sum())]);
    // A filter's columns are read too, and a correlated subquery reads the whole row.
    let filtered = rows(&mut s, "SELECT g, COUNT(*) FROM w WHERE tag = 't1' GROUP BY g");
    assert_eq!(filtered.iter().map(|r| &r[1]).filter(|v| **v == Value::Int(20)).count(), 10, "{filtered:?}");
    let correlated = rows(
        &mut s,
        "SELECT g, COUNT(*) FROM w WHERE EXISTS (SELECT 1 FROM b WHERE b.id = w.id AND LEN(w.doc) > 9000) GROUP BY g",
    );
    assert_eq!(correlated.iter().map(|r| if let Value::Int(n) = r[1] { n } else { 0 }).sum::<i32>(), 600);
    let projected = rows(&mut s, "SELECT id + g, LEN(doc) FROM w WHERE id IN (1, 600)");
    assert_eq!(projected, vec![vec![Value::Int(2), Value::BigInt(9001)], vec![Value::Int(600), Value::BigInt(9600)]]);
    let joined = rows(&mut s, "SELECT w.id, LEN(w.doc) FROM w JOIN b ON w.id = b.id WHERE b.id = 7");
    assert_eq!(joined, vec![vec![Value::Int(7), Value::BigInt(9007)]]);
    let sorted = ok(&mut s, "SELECT TOP (2) g, id FROM w ORDER BY LEN(doc) DESC").result_sets()[0].1.clone();
    assert_eq!(sorted, vec![vec![Value::Int(0), Value::Int(600)], vec![Value::Int(9), Value::Int(599)]]);
}

#[test]
fn streamed_rows_reuse_their_buffers_without_mixing_values() {
    let inst = memory();
    let mut s = session(&inst);
    setup(&mut s);
    // Strings of varying lengths and NULLs decoded into the previous row's buffers.
    let streamed = ok(&mut s, "SELECT id, name, aid FROM b").result_sets()[0].1.clone();
    assert_eq!(streamed.len(), 600);
    for row in &streamed {
        let Value::Int(id) = row[0] else { panic!("{row:?}") };
        let name = if id % 17 == 0 { Value::Null } else { Value::String(format!("name {}", (id * 7) % 60)) };
        assert_eq!(row[1], name, "{row:?}");
    }
    let projected = ok(&mut s, "SELECT name, id FROM b WHERE id % 3 = 0").result_sets()[0].1.clone();
    assert_eq!(projected.len(), 200);
    for row in &projected {
        let Value::Int(id) = row[1] else { panic!("{row:?}") };
        let name = if id % 17 == 0 { Value::Null } else { Value::String(format!("name {}", (id * 7) % 60)) };
        assert_eq!(row[0], name, "{row:?}");
    }
}
