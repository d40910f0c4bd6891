//! The instance: system databases, persistence across restarts and crashes, the
//! database directory, CREATE / ALTER / DROP DATABASE, logins.

mod common;

use std::ops::Bound;

use common::*;
use engine::{Instance, InstanceConfig};
use sql::catalog::{self, codec, Object, ObjectBody};
use sql::host::{DataAccess, HostError, IndexRef, InstanceAdmin, Transactions};
use types::{Length, SqlType, Value};

fn sql_err<T: std::fmt::Debug>(r: Result<T, HostError>) -> types::SqlError {
    match r {
        Err(HostError::Sql(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn first_start_creates_the_system_databases_and_files() {
    let dir = TempDir::new("first");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    assert_eq!(inst.first_start_sa_password(), None, "a configured password is not generated");
    let names: Vec<(i16, String)> = inst.databases().into_iter().map(|d| (d.id, d.name)).collect();
    assert_eq!(names, vec![(1, "master".into()), (2, "tempdb".into()), (3, "model".into()), (4, "msdb".into())]);
    for f in [
        "master.mdf",
        "mastlog.ldf",
        "tempdb.mdf",
        "templog.ldf",
        "model.mdf",
        "modellog.ldf",
        "MSDBData.mdf",
        "MSDBLog.ldf",
        "mesquite.lock",
    ] {
        assert!(dir.path().join(f).exists(), "{f} exists");
    }
    let mut s = session(&inst);
    let files = s.host().database_files(4);
    assert_eq!(files.len(), 2);
    assert_eq!((files[0].logical_name.as_str(), files[1].logical_name.as_str()), ("MSDBData", "MSDBLog"));
    assert!(files[0].physical_name.ends_with("MSDBData.mdf"));
    assert_eq!(files[1].type_code, 1);
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn a_second_instance_on_the_same_directory_is_refused() {
    let dir = TempDir::new("lock");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let e = Instance::start(disk_config(dir.path())).unwrap_err();
    assert!(e.message.contains("another Mesquite instance is using the data directory"), "{}", e.message);
    inst.shutdown().unwrap();
    // Released at shutdown.
    let again = Instance::start(disk_config(dir.path())).unwrap();
    again.shutdown().unwrap();
}

#[test]
fn logins() {
    let inst = memory();
    let s = inst.open_session("sa", PASSWORD, Some("msdb")).unwrap();
    assert_eq!((s.database_name(), s.spid(), s.login_name()), ("msdb".to_string(), 51, "sa".to_string()));
    let e = inst.open_session("sa", "wrong", None).unwrap_err();
    assert_eq!((e.number, e.severity, e.state), (18456, 14, 1));
    assert_eq!(e.message, "Login failed for user 'sa'.");
    let e = inst.open_session("bob", PASSWORD, None).unwrap_err();
    assert_eq!((e.number, e.message.as_str()), (18456, "Login failed for user 'bob'."));
    let log = diag::errorlog::recent(1000);
    let line = log
        .iter()
        .rev()
        .find(|l| l.process_info == "Logon" && l.text.contains("'sa'"))
        .expect("the failure is in the error log");
    assert!(line.text.contains("Password did not match"));
    assert!(!log.iter().any(|l| l.text.contains("wrong")), "never the password");
    let e = inst.open_session("sa", PASSWORD, Some("nosuchdb")).unwrap_err();
    assert_eq!(e.number, 4060);
    // Session ids are reused from the lowest.
    let s2 = inst.open_session("SA", PASSWORD, None).unwrap();
    assert_eq!(s2.spid(), 52);
    drop(s);
    let s3 = inst.open_session("sa", PASSWORD, None).unwrap();
    assert_eq!(s3.spid(), 51);
    // ALTER LOGIN ... WITH PASSWORD.
    inst.set_login_password("sa", "N3w#Password").unwrap();
    assert_eq!(inst.open_session("sa", PASSWORD, None).unwrap_err().number, 18456);
    inst.open_session("sa", "N3w#Password", None).unwrap();
}

#[test]
fn a_generated_sa_password_is_handed_out_once_and_stored_hashed() {
    let dir = TempDir::new("sa");
    let mut config = disk_config(dir.path());
    config.sa_password = None;
    if std::env::var_os("MESQUITE_SA_PASSWORD").is_some() {
        return; // The environment decides the password; nothing is generated.
    }
    let inst = Instance::start(config.clone()).unwrap();
    let password = inst.first_start_sa_password().expect("generated").to_string();
    inst.open_session("sa", &password, None).unwrap();
    inst.shutdown().unwrap();
    drop(inst);
    for f in ["master.mdf", "mastlog.ldf"] {
        let bytes = std::fs::read(dir.path().join(f)).unwrap();
        assert!(!bytes.windows(password.len()).any(|w| w == password.as_bytes()), "{f} has no plain password");
    }
    let inst = Instance::start(config).unwrap();
    assert_eq!(inst.first_start_sa_password(), None);
    inst.open_session("sa", &password, None).unwrap();
    inst.shutdown().unwrap();
}

fn table(columns: &[(SqlType, bool)]) -> Vec<sql::host::StoredColumn> {
    cols(columns)
}

fn sample_object(id: i32, hobt: u64) -> Object {
    Object {
        id,
        schema_id: catalog::SCHEMA_DBO,
        name: "Orders".into(),
        create_date: Value::DateTime { days: 45_000, ticks: 300 },
        modify_date: Value::DateTime { days: 45_000, ticks: 300 },
        body: ObjectBody::Table(catalog::Table {
            columns: vec![catalog::Column {
                column_id: 1,
                name: "id".into(),
                ty: SqlType::Int,
                nullable: false,
                is_identity: false,
                sparse: false,
                default: None,
                computed: None,
                collation: None,
            }],
            indexes: vec![catalog::Index {
                index_id: 1,
                name: Some("PK_Orders".into()),
                kind: catalog::IndexKind::Clustered,
                unique: true,
                primary_key: Some(id + 1),
                unique_constraint: None,
                key_columns: vec![(1, false)],
                included: vec![],
                filter: None,
                hobt,
            }],
            checks: vec![],
            foreign_keys: vec![],
            identity: None,
            max_column_id_used: 1,
            next_row_id: 0,
        }),
    }
}

#[test]
fn databases_rows_and_catalogs_persist_across_restarts() {
    let dir = TempDir::new("persist");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = session(&inst);
    let h = s.host();
    let db = h
        .create_database(&create_db_stmt(
            r"CREATE DATABASE Sales ON PRIMARY (NAME = Sales_data, FILENAME = 'C:\Program Files\Microsoft SQL Server\MSSQL\DATA\Sales.mdf', SIZE = 2MB, MAXSIZE = 100MB, FILEGROWTH = 10%) LOG ON (NAME = Sales_log, FILENAME = 'C:\Data\Sales_log.ldf', SIZE = 1MB, FILEGROWTH = 512KB)",
        ))
        .unwrap();
    assert_eq!(db, 5);
    assert!(dir.path().join("Sales.mdf").exists() && dir.path().join("Sales_log.ldf").exists());
    h.alter_database(
        db,
        &alter_db_stmt(
            "ALTER DATABASE Sales SET RECOVERY SIMPLE, DELAYED_DURABILITY = ALLOWED, TARGET_RECOVERY_TIME = 0 SECONDS",
        ),
    )
    .unwrap();
    h.alter_database(db, &alter_db_stmt("ALTER DATABASE Sales MODIFY FILE (NAME = Sales_data, SIZE = 4MB)")).unwrap();
    let ix =
        create_index(h, db, 1_000_000, table(&[(SqlType::Int, false), (SqlType::VarChar { len: Length::Max }, true)]));
    let catalog_index = h.databases().into_iter().find(|d| d.id == db).unwrap().catalog_index;
    let object = sample_object(1_000_000, ix.hobt);
    h.begin("t").unwrap();
    for n in 0..300u32 {
        h.insert(
            &ix,
            &key(n),
            &[Value::Int(n as i32), Value::String(format!("{n}").repeat(if n == 7 { 5000 } else { 3 }))],
        )
        .unwrap();
    }
    h.insert(&catalog_index, &catalog::object_key(object.id), &[Value::Binary(codec::encode_object(&object))]).unwrap();
    h.commit(None).unwrap();
    // tempdb data, to be gone after the restart.
    let tmp = create_index(h, 2, 1_000_000, table(&[(SqlType::Int, false)]));
    h.begin("t").unwrap();
    h.insert(&tmp, &key(1), &[Value::Int(1)]).unwrap();
    h.commit(None).unwrap();
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);

    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let info = inst.databases().into_iter().find(|d| d.name == "Sales").expect("Sales is back");
    assert_eq!(
        (info.id, info.recovery_model, info.delayed_durability, info.target_recovery_time_seconds, info.page_verify),
        (5, "SIMPLE", "ALLOWED", 0, "CHECKSUM")
    );
    let txn_db = inst.txn_database(5).unwrap();
    assert_eq!(txn_db.target_recovery_time(), 0);
    assert_eq!(txn_db.delayed_durability(), txn::xact::DelayedDurability::Allowed);
    let mut s = session(&inst);
    let h = s.host();
    let files = h.database_files(5);
    assert_eq!(files[0].logical_name, "Sales_data");
    assert_eq!(
        (files[0].size_pages, files[0].max_size_pages, files[0].growth, files[0].growth_is_percent),
        (512, 12_800, 10, true)
    );
    assert_eq!((files[1].logical_name.as_str(), files[1].growth, files[1].growth_is_percent), ("Sales_log", 64, false));
    // The catalog came back through the codec.
    let cat = h.catalog(5).unwrap();
    assert_eq!(cat.inner.read().objects.get(&1_000_000), Some(&object));
    h.begin("t").unwrap();
    let mut out = Vec::new();
    assert!(!h.scan(&ix, Bound::Unbounded, Bound::Unbounded, false, 1000, &mut out).unwrap());
    assert_eq!(out.len(), 300);
    assert_eq!(out[7].1[1], Value::String("7".repeat(5000)));
    h.commit(None).unwrap();
    // tempdb is new and empty: the old index is gone.
    let tmp_catalog = h.catalog(2).unwrap();
    assert!(tmp_catalog.inner.read().objects.is_empty());
    h.begin("t").unwrap();
    assert!(h.get(&tmp, &key(1)).is_err() || h.get(&tmp, &key(1)).unwrap().is_none());
    h.rollback().unwrap();
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn create_alter_drop_database_errors() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    let db = h.create_database(&create_db_stmt("CREATE DATABASE Shop")).unwrap();
    let e = sql_err(h.create_database(&create_db_stmt("CREATE DATABASE shop")));
    assert_eq!(
        (e.number, e.message.as_str()),
        (1801, "Database 'shop' already exists. Choose a different database name.")
    );
    // Files that exist: 5170.
    let e = sql_err(h.create_database(&create_db_stmt(
        r"CREATE DATABASE Other ON (NAME = o, FILENAME = 'D:\x\Shop.mdf') LOG ON (NAME = o_log, FILENAME = 'D:\x\o.ldf')",
    )));
    assert_eq!(e.number, 5170);
    assert!(
        e.message.starts_with("Cannot create file '") && e.message.contains("Shop.mdf' because it already exists.")
    );
    let e = sql_err(h.create_database(&create_db_stmt(
        "CREATE DATABASE Dup ON (NAME = a, FILENAME = 'a.mdf') LOG ON (NAME = a, FILENAME = 'a.ldf')",
    )));
    assert_eq!(e.number, 1828);
    assert_eq!(inst.database_id("Dup"), None);
    // System databases cannot be dropped; a database in use cannot either.
    assert_eq!(sql_err(h.drop_database(1)).number, 3708);
    let mut other = inst.open_session("sa", PASSWORD, Some("Shop")).unwrap();
    let e = sql_err(h.drop_database(db));
    assert_eq!((e.number, e.message.as_str()), (3702, "Cannot drop database \"Shop\" because it is currently in use."));
    // An open transaction in it counts too.
    let ix = create_index(other.host(), db, 1_000_000, cols(&[(SqlType::Int, false)]));
    let mut third = session(&inst);
    drop(other);
    let t = third.host();
    t.begin("t").unwrap();
    t.insert(&ix, &key(1), &[Value::Int(1)]).unwrap();
    assert_eq!(sql_err(h.drop_database(db)).number, 3702);
    t.rollback().unwrap();
    // ALTER on it, then DROP.
    h.alter_database(db, &alter_db_stmt("ALTER DATABASE Shop SET READ_ONLY")).unwrap();
    t.begin("t").unwrap();
    assert_eq!(sql_err(t.insert(&ix, &key(1), &[Value::Int(1)])).number, 3906);
    t.rollback().unwrap();
    assert_eq!(sql_err(h.alter_database(db, &alter_db_stmt("ALTER DATABASE Shop SET OFFLINE"))).number, 40000);
    h.alter_database(db, &alter_db_stmt("ALTER DATABASE Shop MODIFY NAME = Store")).unwrap();
    assert_eq!(inst.database_id("Store"), Some(db));
    h.drop_database(db).unwrap();
    assert_eq!(inst.database_id("Store"), None);
    assert_eq!(sql_err(h.catalog(db).map(|_| ())).number, 911);
    // The name and the files are free again.
    assert_eq!(h.create_database(&create_db_stmt("CREATE DATABASE Shop")).unwrap(), db);
    // A name that looks like a path stays inside the data directory.
    let evil = h.create_database(&create_db_stmt(r"CREATE DATABASE [..\../evil]")).unwrap();
    for f in h.database_files(evil) {
        let p = std::path::Path::new(&f.physical_name);
        assert_eq!(p.parent(), Some(inst.data_dir()), "{}", f.physical_name);
    }
}

#[test]
fn a_crash_keeps_committed_work_and_loses_the_rest() {
    let dir = TempDir::new("crash");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s1 = session(&inst);
    let mut s2 = session(&inst);
    let db = s1.host().create_database(&create_db_stmt("CREATE DATABASE Crashy")).unwrap();
    let ix = create_index(
        s1.host(),
        db,
        1_000_000,
        cols(&[(SqlType::Int, false), (SqlType::VarBinary { len: Length::Max }, true)]),
    );
    let h = s1.host();
    h.begin("committed").unwrap();
    for n in 0..100u32 {
        h.insert(&ix, &key(n), &[Value::Int(n as i32), Value::Binary(vec![n as u8; 100 + n as usize * 100])]).unwrap();
    }
    h.commit(None).unwrap();
    let h2 = s2.host();
    h2.begin("in flight").unwrap();
    for n in 100..150u32 {
        h2.insert(&ix, &key(n), &[Value::Int(n as i32), Value::Null]).unwrap();
    }
    h2.delete(&ix, &key(5)).unwrap();
    // Push the in-flight work to the log so recovery has something to undo.
    h2.flush_log(db).unwrap();
    inst.kill();
    drop((s1, s2));
    drop(inst);

    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = session(&inst);
    let h = s.host();
    h.begin("t").unwrap();
    let mut out = Vec::new();
    h.scan(&ix, Bound::Unbounded, Bound::Unbounded, false, 1000, &mut out).unwrap();
    let keys: Vec<i32> = out.iter().map(|(_, r)| if let Value::Int(n) = r[0] { n } else { -1 }).collect();
    assert_eq!(keys, (0..100).collect::<Vec<_>>(), "committed rows present, uncommitted absent");
    assert_eq!(out[99].1[1], Value::Binary(vec![99; 10_000]));
    h.commit(None).unwrap();
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn checkpoint_flush_log_and_shutdown_refuse_new_work() {
    let inst = memory();
    let mut s = session(&inst);
    let h = s.host();
    h.checkpoint(1, None).unwrap();
    h.checkpoint(1, Some(1)).unwrap();
    h.flush_log(1).unwrap();
    assert!(inst.txn_database(1).unwrap().checkpoints_completed() >= 2);
    inst.shutdown().unwrap();
    assert!(h.begin("after").is_err());
    assert!(inst.open_session("sa", PASSWORD, None).is_err());
    let _: &IndexRef;
}

#[test]
fn in_memory_instances_share_nothing() {
    let a = Instance::start(InstanceConfig::in_memory(PASSWORD)).unwrap();
    let b = Instance::start(InstanceConfig::in_memory(PASSWORD)).unwrap();
    let mut sa = session(&a);
    sa.host().create_database(&create_db_stmt("CREATE DATABASE OnlyInA")).unwrap();
    assert!(a.database_id("OnlyInA").is_some());
    assert!(b.database_id("OnlyInA").is_none());
}
