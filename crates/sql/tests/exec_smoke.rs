//! End-to-end executor tests over the in-memory host: batches in, result sets and
//! messages out.

use sql::exec::{execute_batch, SessionState};
use sql::memhost::MemHost;
use sql::results::CollectSink;
use types::Value;

struct Db {
    host: MemHost,
    state: SessionState,
}

impl Db {
    fn new() -> Db {
        Db { host: MemHost::new(), state: SessionState::new(1, 51) }
    }

    fn run(&mut self, sql: &str) -> CollectSink {
        let mut sink = CollectSink::default();
        execute_batch(&mut self.state, &mut self.host, sql, &mut sink);
        sink
    }

    /// Runs and asserts no errors; returns the rows of the last result set.
    fn rows(&mut self, sql: &str) -> Vec<Vec<Value>> {
        let s = self.run(sql);
        assert!(s.errors().is_empty(), "{sql}: {:?}", s.errors());
        s.result_sets().pop().map(|r| r.1).unwrap_or_default()
    }
}

fn ints(rows: &[Vec<Value>]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Int(n) => i64::from(*n),
                    Value::BigInt(n) => *n,
                    Value::TinyInt(n) => i64::from(*n),
                    Value::SmallInt(n) => i64::from(*n),
                    Value::Null => -999,
                    other => panic!("not an int: {other:?}"),
                })
                .collect()
        })
        .collect()
}

#[test]
fn create_insert_select() {
    let mut db = Db::new();
    db.rows("CREATE TABLE t (id int PRIMARY KEY, v int NULL, name varchar(20))");
    let s = db.run("INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c')");
    assert!(s.errors().is_empty(), "{:?}", s.errors());
    assert_eq!(ints(&db.rows("SELECT id, v FROM t ORDER BY id")), vec![vec![1, 10], vec![2, 20], vec![3, -999]]);
    assert_eq!(ints(&db.rows("SELECT id FROM t WHERE id = 2")), vec![vec![2]]);
    assert_eq!(ints(&db.rows("SELECT id FROM t WHERE name = 'C'")), vec![vec![3]]);
    assert_eq!(ints(&db.rows("SELECT COUNT(*), COUNT(v) FROM t")), vec![vec![3, 2]]);
    assert_eq!(ints(&db.rows("SELECT id FROM t ORDER BY id DESC")), vec![vec![3], vec![2], vec![1]]);
}

#[test]
fn duplicate_key_and_errors() {
    let mut db = Db::new();
    db.rows("CREATE TABLE t (id int PRIMARY KEY)");
    db.rows("INSERT INTO t VALUES (1)");
    let s = db.run("INSERT INTO t VALUES (1)");
    assert_eq!(s.errors()[0].number, 2627, "{:?}", s.errors());
    let s = db.run("SELECT * FROM nope");
    assert_eq!(s.errors()[0].number, 208);
    let s = db.run("SELECT nope FROM t");
    assert_eq!(s.errors()[0].number, 207);
}

#[test]
fn update_delete_and_transactions() {
    let mut db = Db::new();
    db.rows("CREATE TABLE t (id int PRIMARY KEY, v int)");
    db.rows("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)");
    db.rows("UPDATE t SET v = 9 WHERE id = 2");
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = 2")), vec![vec![9]]);
    db.rows("DELETE FROM t WHERE id = 1");
    assert_eq!(ints(&db.rows("SELECT id FROM t ORDER BY id")), vec![vec![2], vec![3]]);
    db.rows("BEGIN TRAN; DELETE FROM t; ROLLBACK");
    assert_eq!(ints(&db.rows("SELECT id FROM t ORDER BY id")), vec![vec![2], vec![3]]);
    assert_eq!(ints(&db.rows("SELECT @@TRANCOUNT")), vec![vec![0]]);
}

#[test]
fn joins_and_group_by() {
    let mut db = Db::new();
    db.rows("CREATE TABLE a (id int PRIMARY KEY, g int); CREATE TABLE b (id int PRIMARY KEY, aid int)");
    db.rows("INSERT INTO a VALUES (1, 1), (2, 1), (3, 2); INSERT INTO b VALUES (10, 1), (11, 1), (12, 3), (13, 4)");
    assert_eq!(
        ints(&db.rows("SELECT a.id, b.id FROM a JOIN b ON a.id = b.aid ORDER BY b.id")),
        vec![vec![1, 10], vec![1, 11], vec![3, 12]]
    );
    assert_eq!(
        ints(&db.rows("SELECT a.id, b.id FROM a LEFT JOIN b ON a.id = b.aid ORDER BY a.id, b.id")),
        vec![vec![1, 10], vec![1, 11], vec![2, -999], vec![3, 12]]
    );
    assert_eq!(ints(&db.rows("SELECT g, COUNT(*) FROM a GROUP BY g ORDER BY g")), vec![vec![1, 2], vec![2, 1]]);
    assert_eq!(
        ints(&db.rows("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id) ORDER BY id")),
        vec![vec![1], vec![3]]
    );
}

#[test]
fn variables_control_flow_and_try_catch() {
    let mut db = Db::new();
    let rows = db.rows("DECLARE @i int = 0, @s int = 0; WHILE @i < 5 BEGIN SET @i += 1; IF @i = 3 CONTINUE; SET @s += @i END; SELECT @s");
    assert_eq!(ints(&rows), vec![vec![12]]);
    let rows = db.rows("BEGIN TRY SELECT 1/0 END TRY BEGIN CATCH SELECT ERROR_NUMBER() END CATCH");
    assert_eq!(ints(&rows), vec![vec![8134]]);
}
