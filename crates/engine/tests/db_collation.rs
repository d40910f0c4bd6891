//! Database collations: CREATE/ALTER DATABASE ... COLLATE kept in master's database
//! directory across restarts, the login's and USE's collation, and ALTER DATABASE
//! COLLATE refused (5030 then 5072) while another session uses the database.

mod common;

use common::*;
use engine::Instance;
use sql::results::{EnvChange, Event};
use types::{Collation, Value};

fn rows(s: &mut engine::Session, text: &str) -> Rows {
    let r = ok(s, text);
    r.result_sets().last().map(|(_, rows)| rows.clone()).unwrap_or_default()
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn coll(name: &str) -> Collation {
    Collation::from_name(name).unwrap()
}

type Rows = Vec<Vec<Value>>;

/// What sys.databases, a comparison of literals and a new column say of App.
fn app_state(sn: &mut engine::Session) -> (Rows, Rows, Rows) {
    let db = rows(sn, "SELECT collation_name FROM sys.databases WHERE name = 'App'");
    let cmp = rows(sn, "USE App; SELECT CASE WHEN 'a' = 'A' THEN 'equal' ELSE 'different' END");
    let col = rows(
        sn,
        "CREATE TABLE dbo.probe (c varchar(10));
         SELECT collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.probe');
         DROP TABLE dbo.probe",
    );
    (db, cmp, col)
}

#[test]
fn a_database_collation_survives_restarts() {
    let dir = TempDir::new("dbcoll");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    ok(&mut sn, "CREATE DATABASE App COLLATE Latin1_General_CS_AS");
    ok(&mut sn, "USE App; CREATE TABLE dbo.t (c varchar(10)); INSERT dbo.t VALUES ('a'), ('A')");
    drop(sn);
    inst.shutdown().unwrap();
    drop(inst);

    // Log in straight into App: the login's collation is App's.
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = inst.open_session("sa", PASSWORD, Some("App")).unwrap();
    assert_eq!(sn.database_collation(), coll("Latin1_General_CS_AS"));
    assert_eq!(
        app_state(&mut sn),
        (vec![vec![s("Latin1_General_CS_AS")]], vec![vec![s("different")]], vec![vec![s("Latin1_General_CS_AS")]])
    );
    assert_eq!(rows(&mut sn, "SELECT COUNT(*) FROM dbo.t WHERE c = 'a'"), vec![vec![Value::Int(1)]]);
    // USE of a database of another collation sends the SQL collation ENVCHANGE; USE of
    // one of the same collation does not.
    let used = ok(&mut sn, "USE master");
    let changes: Vec<&EnvChange> = used
        .events
        .iter()
        .filter_map(|e| match e {
            Event::EnvChange(c @ EnvChange::Collation { .. }) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(changes, vec![&EnvChange::Collation { old: coll("Latin1_General_CS_AS"), new: Collation::DEFAULT }]);
    let used = ok(&mut sn, "USE msdb");
    assert!(!used.events.iter().any(|e| matches!(e, Event::EnvChange(EnvChange::Collation { .. }))));

    // ALTER DATABASE ... COLLATE is kept too; the existing column keeps its collation.
    ok(&mut sn, "USE master; ALTER DATABASE App COLLATE Latin1_General_BIN2");
    drop(sn);
    inst.shutdown().unwrap();
    drop(inst);
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    assert_eq!(
        app_state(&mut sn),
        (vec![vec![s("Latin1_General_BIN2")]], vec![vec![s("different")]], vec![vec![s("Latin1_General_BIN2")]])
    );
    assert_eq!(
        rows(&mut sn, "SELECT collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t')"),
        vec![vec![s("Latin1_General_CS_AS")]]
    );

    // Back to the instance's collation (stored as a version 1 record again).
    ok(&mut sn, "USE master; ALTER DATABASE App COLLATE SQL_Latin1_General_CP1_CI_AS");
    drop(sn);
    inst.shutdown().unwrap();
    drop(inst);
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sn = session(&inst);
    assert_eq!(
        app_state(&mut sn),
        (
            vec![vec![s("SQL_Latin1_General_CP1_CI_AS")]],
            vec![vec![s("equal")]],
            vec![vec![s("SQL_Latin1_General_CP1_CI_AS")]]
        )
    );
    ok(&mut sn, "USE master; DROP DATABASE App");
    drop(sn);
    inst.shutdown().unwrap();
}

#[test]
fn alter_database_collate_needs_the_database_to_itself() {
    let inst = memory();
    let mut a = session(&inst);
    let mut b = session(&inst);
    ok(&mut a, "CREATE DATABASE Busy");
    // B's batch has ended in Busy: B is using it.
    ok(&mut b, "USE Busy");
    let r = run(&mut a, "ALTER DATABASE Busy COLLATE Latin1_General_CS_AS");
    let got: Vec<(i32, u8, String)> = r.errors().into_iter().map(|e| (e.number, e.state, e.message)).collect();
    assert_eq!(
        got,
        vec![
            (5030, 5, "The database Busy could not be exclusively locked to perform the operation.".to_string()),
            (
                5072,
                1,
                "ALTER DATABASE failed. The default collation of database 'Busy' cannot be set to Latin1_General_CS_AS."
                    .to_string()
            ),
        ]
    );
    assert_eq!(
        rows(&mut a, "SELECT collation_name FROM sys.databases WHERE name = 'Busy'"),
        vec![vec![s("SQL_Latin1_General_CP1_CI_AS")]]
    );
    // Once B has left, the change goes through; the session making it may be in the
    // database itself.
    ok(&mut b, "USE master");
    ok(&mut a, "USE Busy; ALTER DATABASE CURRENT COLLATE Latin1_General_CS_AS");
    assert_eq!(
        rows(&mut a, "SELECT CAST(DATABASEPROPERTYEX('Busy', 'Collation') AS nvarchar(128))"),
        vec![vec![s("Latin1_General_CS_AS")]]
    );
}
