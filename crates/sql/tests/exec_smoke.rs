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

#[test]
fn constraints_identity_and_defaults() {
    let mut db = Db::new();
    db.rows(
        "CREATE TABLE p (id int IDENTITY(10, 5) PRIMARY KEY, name varchar(10) NOT NULL DEFAULT 'x', \
         qty int CHECK (qty >= 0), twice AS qty * 2)",
    );
    db.rows("INSERT INTO p (qty) VALUES (1); INSERT INTO p (name, qty) VALUES ('b', 2)");
    assert_eq!(ints(&db.rows("SELECT id, twice FROM p ORDER BY id")), vec![vec![10, 2], vec![15, 4]]);
    assert_eq!(db.rows("SELECT name FROM p WHERE id = 10"), vec![vec![Value::String("x".into())]]);
    assert_eq!(db.run("INSERT INTO p (qty) VALUES (-1)").errors()[0].number, 547);
    assert_eq!(db.run("INSERT INTO p (name, qty) VALUES (NULL, 1)").errors()[0].number, 515);
    assert_eq!(db.run("INSERT INTO p (id, qty) VALUES (1, 1)").errors()[0].number, 544);
    // @@IDENTITY lasts for the session; SCOPE_IDENTITY() for its scope (a batch).
    assert_eq!(ints(&db.rows("SELECT CAST(@@IDENTITY AS int), CAST(SCOPE_IDENTITY() AS int)")), vec![vec![15, -999]]);
    assert_eq!(ints(&db.rows("INSERT INTO p (qty) VALUES (3); SELECT CAST(SCOPE_IDENTITY() AS int)")), vec![vec![30]]);
    // Foreign keys: NO ACTION refuses, CASCADE follows.
    db.rows("CREATE TABLE c (id int PRIMARY KEY, pid int REFERENCES p(id) ON DELETE CASCADE)");
    db.rows("INSERT INTO c VALUES (1, 10), (2, 15)");
    assert_eq!(db.run("INSERT INTO c VALUES (3, 99)").errors()[0].number, 547);
    db.rows("DELETE FROM p WHERE id = 10");
    assert_eq!(ints(&db.rows("SELECT id FROM c")), vec![vec![2]]);
    db.rows("CREATE TABLE c2 (id int PRIMARY KEY, pid int REFERENCES p(id))");
    db.rows("INSERT INTO c2 VALUES (1, 30)");
    assert_eq!(db.run("DELETE FROM p WHERE id = 30").errors()[0].number, 547);
}

#[test]
fn indexes_views_functions_and_output() {
    let mut db = Db::new();
    db.rows("CREATE TABLE t (id int PRIMARY KEY, k int, v int)");
    db.rows("INSERT INTO t VALUES (1, 5, 10), (2, 6, 20), (3, 5, NULL)");
    db.rows("CREATE UNIQUE INDEX ux ON t (v) WHERE v IS NOT NULL");
    assert_eq!(db.run("INSERT INTO t VALUES (4, 7, 10)").errors()[0].number, 2601);
    db.rows("INSERT INTO t VALUES (5, 7, NULL)");
    db.rows("CREATE INDEX ik ON t (k) INCLUDE (v)");
    assert_eq!(ints(&db.rows("SELECT id FROM t WHERE k = 5 ORDER BY id")), vec![vec![1], vec![3]]);
    let plan = db.rows("SET SHOWPLAN_TEXT ON");
    assert!(plan.is_empty());
    let plan = db.run("SELECT id FROM t WHERE k = 5");
    let text: Vec<String> = plan.result_sets()[0].1.iter().map(|r| r[0].to_string()).collect();
    assert!(text.iter().any(|l| l.contains("Index Seek") && l.contains("[ik]")), "{text:?}");
    db.rows("SET SHOWPLAN_TEXT OFF");
    db.rows("CREATE VIEW vv AS SELECT id, v FROM t WHERE v IS NOT NULL");
    assert_eq!(ints(&db.rows("SELECT COUNT(*) FROM vv")), vec![vec![2]]);
    db.rows("CREATE FUNCTION dbo.f (@x int) RETURNS int AS BEGIN RETURN @x * 3 END");
    assert_eq!(ints(&db.rows("SELECT dbo.f(id) FROM t WHERE id = 2")), vec![vec![6]]);
    db.rows("CREATE FUNCTION dbo.tf (@k int) RETURNS TABLE AS RETURN SELECT id FROM t WHERE k = @k");
    assert_eq!(ints(&db.rows("SELECT id FROM dbo.tf(5) ORDER BY id")), vec![vec![1], vec![3]]);
    let s = db.run("UPDATE t SET v = v + 1 OUTPUT deleted.v, inserted.v WHERE id = 1");
    assert!(s.errors().is_empty(), "{:?}", s.errors());
    assert_eq!(ints(&s.result_sets()[0].1), vec![vec![10, 11]]);
    // A failed statement inside a transaction undoes only itself.
    db.rows("BEGIN TRAN; INSERT INTO t VALUES (9, 9, 9)");
    assert_eq!(db.run("INSERT INTO t VALUES (10, 1, 1), (9, 1, 1)").errors()[0].number, 2627);
    db.rows("COMMIT");
    assert_eq!(ints(&db.rows("SELECT id FROM t WHERE id >= 9")), vec![vec![9]]);
}

#[test]
fn simple_selects_reuse_their_plan_until_the_table_changes() {
    use sql::exec::parameterize;
    let mut db = Db::new();
    db.rows("CREATE TABLE t (id int PRIMARY KEY, v int NULL)");
    db.rows("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
    let kept = |db: &Db, text: &str| {
        let key = parameterize(text, db.state.database).unwrap().key;
        db.state.plan_cache.get(&key).map(|e| e.plan.plan.clone())
    };
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = 1")), vec![vec![10]]);
    let first = kept(&db, "SELECT v FROM t WHERE id = 1").expect("plan kept");
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = 3")), vec![vec![30]]);
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = 4")), Vec::<Vec<i64>>::new());
    let again = kept(&db, "SELECT v FROM t WHERE id = 2").expect("plan kept");
    assert!(std::sync::Arc::ptr_eq(&first, &again), "same shape, same plan");
    assert_eq!(db.state.plan_cache.len(), 1);
    // Another literal type is another plan; both answer.
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = 3000000000")), Vec::<Vec<i64>>::new());
    assert_eq!(db.state.plan_cache.len(), 2);
    // A schema change: the kept plan is not used, a new one is bound and kept.
    db.rows("ALTER TABLE t ADD w int NULL");
    db.rows("UPDATE t SET w = v + 1");
    assert_eq!(ints(&db.rows("SELECT * FROM t WHERE id = 2")), vec![vec![2, 20, 21]]);
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = 2")), vec![vec![20]]);
    let second = kept(&db, "SELECT v FROM t WHERE id = 1").expect("plan kept");
    assert!(!std::sync::Arc::ptr_eq(&first, &second));
    // The table dropped and created again with other columns.
    db.rows("DROP TABLE t");
    let s = db.run("SELECT v FROM t WHERE id = 2");
    assert_eq!(s.errors().first().map(|e| e.number), Some(208));
    db.rows("CREATE TABLE t (id int PRIMARY KEY, v varchar(5))");
    db.rows("INSERT INTO t VALUES (2, 'x')");
    let rows = db.rows("SELECT v FROM t WHERE id = 2");
    assert_eq!(rows, vec![vec![Value::String("x".into())]]);
}

#[test]
fn a_key_seek_with_a_string_that_does_not_convert_is_245_also_from_a_kept_plan() {
    use sql::exec::parameterize;
    let mut db = Db::new();
    db.rows("CREATE TABLE t (id int PRIMARY KEY, v int NULL)");
    db.rows("INSERT INTO t VALUES (1, 10), (2, 20)");
    // Bound and kept with a string that converts, then run again with one that does not.
    assert_eq!(ints(&db.rows("SELECT v FROM t WHERE id = '2'")), vec![vec![20]]);
    let key = parameterize("SELECT v FROM t WHERE id = 'x'", db.state.database).unwrap().key;
    assert!(db.state.plan_cache.get(&key).is_some(), "the shape is kept");
    let s = db.run("SELECT v FROM t WHERE id = 'x'");
    let e = s.errors();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0].number, e[0].message.as_str()),
        (245, "Conversion failed when converting the varchar value 'x' to data type int.")
    );
    // Ranges too.
    let s = db.run("SELECT v FROM t WHERE id > 'x'");
    assert_eq!(s.errors().first().map(|e| e.number), Some(245));
}
