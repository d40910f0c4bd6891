//! DDL that changes stored objects, checked across a restart of an on-disk instance:
//! multi-statement table-valued functions (catalog kind TF), ALTER TABLE column
//! changes (rows rewritten in the new layout) and DML triggers (catalog kind TR).

mod common;

use common::*;
use engine::Instance;
use types::Value;

fn rows(s: &mut engine::Session, text: &str) -> Vec<Vec<Value>> {
    let r = ok(s, text);
    r.result_sets().last().map(|(_, rows)| rows.clone()).unwrap_or_default()
}

fn restart(
    inst: std::sync::Arc<Instance>,
    s: engine::Session,
    dir: &std::path::Path,
) -> (std::sync::Arc<Instance>, engine::Session) {
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);
    let inst = Instance::start(disk_config(dir)).unwrap();
    let s = inst.open_session("sa", PASSWORD, Some("App")).unwrap();
    (inst, s)
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

#[test]
fn table_valued_functions_survive_a_restart() {
    let dir = TempDir::new("tvf");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App");
    ok(&mut sn, "USE App");
    ok(
        &mut sn,
        "CREATE FUNCTION dbo.evens (@n int) RETURNS @t TABLE (v int NOT NULL PRIMARY KEY) AS
         BEGIN
             DECLARE @i int = 0;
             WHILE @i <= @n BEGIN INSERT @t VALUES (@i); SET @i += 2; END
             RETURN;
         END",
    );
    assert_eq!(rows(&mut sn, "SELECT COUNT(*) FROM dbo.evens(6)"), vec![vec![Value::Int(4)]]);
    let (inst, mut sn) = restart(inst, sn, dir.path());
    assert_eq!(rows(&mut sn, "SELECT type FROM sys.objects WHERE name = 'evens'"), vec![vec![s("TF")]]);
    assert_eq!(
        rows(&mut sn, "SELECT v FROM dbo.evens(4) ORDER BY v DESC"),
        vec![vec![Value::Int(4)], vec![Value::Int(2)], vec![Value::Int(0)]]
    );
    ok(&mut sn, "USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}

#[test]
fn altered_tables_read_back_after_a_restart() {
    let dir = TempDir::new("alter");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App");
    ok(&mut sn, "USE App");
    ok(
        &mut sn,
        "CREATE TABLE dbo.t (id int NOT NULL PRIMARY KEY, a varchar(10) NULL, b int NULL, c char(3) NULL);
         CREATE INDEX ix_b ON dbo.t (b);
         INSERT INTO dbo.t VALUES (1, 'one', 10, 'x'), (2, NULL, 20, 'y'), (3, 'three', NULL, 'z');",
    );
    // A column added with a default, a varchar widened and a char converted to int
    // (stored rows change layout), a column dropped from the middle.
    ok(&mut sn, "ALTER TABLE dbo.t ADD d decimal(5, 1) NOT NULL CONSTRAINT DF_t_d DEFAULT (2.5)");
    ok(&mut sn, "ALTER TABLE dbo.t ALTER COLUMN a varchar(max) NULL");
    ok(&mut sn, "UPDATE dbo.t SET c = '7' WHERE id = 1; UPDATE dbo.t SET c = NULL WHERE id > 1");
    ok(&mut sn, "ALTER TABLE dbo.t ALTER COLUMN c int NULL");
    ok(&mut sn, "ALTER TABLE dbo.t DROP COLUMN a");
    let expect = vec![
        vec![Value::Int(1), Value::Int(10), Value::Int(7), Value::Decimal { value: 25, precision: 5, scale: 1 }],
        vec![Value::Int(2), Value::Int(20), Value::Null, Value::Decimal { value: 25, precision: 5, scale: 1 }],
        vec![Value::Int(3), Value::Null, Value::Null, Value::Decimal { value: 25, precision: 5, scale: 1 }],
    ];
    assert_eq!(rows(&mut sn, "SELECT id, b, c, d FROM dbo.t ORDER BY id"), expect);
    let (inst, mut sn) = restart(inst, sn, dir.path());
    assert_eq!(rows(&mut sn, "SELECT * FROM dbo.t ORDER BY id"), expect);
    // The nonclustered index was rebuilt with the new locators and still answers.
    assert_eq!(rows(&mut sn, "SELECT id FROM dbo.t WITH (INDEX(ix_b)) WHERE b = 20"), vec![vec![Value::Int(2)]]);
    ok(&mut sn, "INSERT INTO dbo.t (id, b) VALUES (4, 40)");
    assert_eq!(
        rows(&mut sn, "SELECT id, c, d FROM dbo.t WHERE id = 4"),
        vec![vec![Value::Int(4), Value::Null, Value::Decimal { value: 25, precision: 5, scale: 1 }]]
    );
    let r = run(&mut sn, "ALTER TABLE dbo.t DROP COLUMN b");
    assert_eq!(r.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![5074, 4922]);
    ok(&mut sn, "DBCC CHECKDB WITH NO_INFOMSGS");
    ok(&mut sn, "USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}

#[test]
fn column_ids_keep_their_gaps_across_a_restart() {
    let dir = TempDir::new("colids");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App");
    ok(&mut sn, "USE App");
    ok(
        &mut sn,
        "CREATE TABLE dbo.t (id int NOT NULL PRIMARY KEY, a int NULL, b varchar(5) NULL, c int NULL);
         CREATE INDEX ix_b ON dbo.t (b);
         INSERT INTO dbo.t VALUES (1, 10, 'x', 100), (2, 20, 'y', 200);",
    );
    // A gap in the middle (a), and the last id used (c) dropped: stored as a version 2
    // table row, since no remaining column has the highest id used.
    ok(&mut sn, "ALTER TABLE dbo.t DROP COLUMN a");
    ok(&mut sn, "ALTER TABLE dbo.t DROP COLUMN c");
    let ids = "SELECT name, column_id FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t') ORDER BY column_id";
    let expect = vec![vec![s("id"), Value::Int(1)], vec![s("b"), Value::Int(3)]];
    assert_eq!(rows(&mut sn, ids), expect);
    let (inst, mut sn) = restart(inst, sn, dir.path());
    ok(&mut sn, "USE App");
    assert_eq!(rows(&mut sn, ids), expect);
    assert_eq!(rows(&mut sn, "SELECT max_column_id_used FROM sys.tables WHERE name = 't'"), vec![vec![Value::Int(4)]]);
    ok(&mut sn, "ALTER TABLE dbo.t ADD d int NULL");
    assert_eq!(
        rows(&mut sn, "SELECT column_id FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t') AND name = 'd'"),
        vec![vec![Value::Int(5)]]
    );
    assert_eq!(rows(&mut sn, "SELECT id FROM dbo.t WITH (INDEX(ix_b)) WHERE b = 'y'"), vec![vec![Value::Int(2)]]);
    ok(&mut sn, "DBCC CHECKDB WITH NO_INFOMSGS");
    ok(&mut sn, "USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}

#[test]
fn module_definitions_keep_their_batch_across_a_restart() {
    let dir = TempDir::new("moddef");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App");
    ok(&mut sn, "USE App");
    let text = "-- header\n/* two */\nCREATE PROCEDURE dbo.p AS\nSELECT 1 / 0 AS boom;\n-- after\n";
    ok(&mut sn, text);
    let (inst, mut sn) = restart(inst, sn, dir.path());
    assert_eq!(rows(&mut sn, "SELECT OBJECT_DEFINITION(OBJECT_ID('dbo.p'))"), vec![vec![s(text)]]);
    // The error's line counts from the start of the batch the procedure came from.
    let r = run(&mut sn, "EXEC dbo.p");
    let e = &r.errors()[0];
    assert_eq!((e.number, e.line, e.procedure.as_deref()), (8134, 4, Some("p")));
    ok(&mut sn, "DROP PROCEDURE dbo.p; USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}

#[test]
fn triggers_survive_a_restart() {
    let dir = TempDir::new("triggers");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App");
    ok(&mut sn, "USE App");
    ok(&mut sn, "CREATE TABLE t (id int PRIMARY KEY, v int); CREATE TABLE log (id int, what varchar(10))");
    ok(
        &mut sn,
        "CREATE TRIGGER trg_t ON t AFTER INSERT, DELETE AS
         INSERT INTO log SELECT id, 'ins' FROM inserted UNION ALL SELECT id, 'del' FROM deleted",
    );
    ok(&mut sn, "CREATE TRIGGER trg_t_off ON t INSTEAD OF UPDATE AS INSERT INTO log VALUES (0, 'upd')");
    ok(&mut sn, "DISABLE TRIGGER trg_t_off ON t");
    let (inst, mut sn) = restart(inst, sn, dir.path());
    ok(&mut sn, "USE App");
    assert_eq!(
        rows(&mut sn, "SELECT name, is_disabled, is_instead_of_trigger FROM sys.triggers ORDER BY name"),
        vec![
            vec![s("trg_t"), Value::Bit(false), Value::Bit(false)],
            vec![s("trg_t_off"), Value::Bit(true), Value::Bit(true)],
        ]
    );
    ok(&mut sn, "INSERT INTO t VALUES (1, 10), (2, 20); DELETE FROM t WHERE id = 1; UPDATE t SET v = 0");
    assert_eq!(
        rows(&mut sn, "SELECT id, what FROM log ORDER BY what DESC, id"),
        vec![vec![Value::Int(1), s("ins")], vec![Value::Int(2), s("ins")], vec![Value::Int(1), s("del")]]
    );
    assert_eq!(rows(&mut sn, "SELECT v FROM t"), vec![vec![Value::Int(0)]]);
    ok(&mut sn, "DROP TABLE t");
    assert_eq!(rows(&mut sn, "SELECT COUNT(*) FROM sys.triggers"), vec![vec![Value::Int(0)]]);
    ok(&mut sn, "USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}
