//! Logins and permissions through real sessions: a plain login's access, its errors,
//! and that logins, users and grants survive a restart.

mod common;

use common::*;
use engine::Instance;
use sql::results::CollectSink;
use types::Value;

fn error_numbers(sink: &CollectSink) -> Vec<i32> {
    sink.errors().iter().map(|e| e.number).collect()
}

#[test]
fn plain_login_is_limited_and_everything_survives_a_restart() {
    let dir = TempDir::new("security");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sa = session(&inst);
    ok(&mut sa, "CREATE DATABASE Shop");
    ok(&mut sa, "CREATE LOGIN clerk WITH PASSWORD = 'Clerk#12345', DEFAULT_DATABASE = Shop");
    ok(&mut sa, "CREATE LOGIN visitor WITH PASSWORD = 'Visitor#12345'");
    ok(&mut sa, "CREATE LOGIN banned WITH PASSWORD = 'Banned#12345'");
    ok(&mut sa, "ALTER LOGIN banned DISABLE");
    ok(
        &mut sa,
        "USE Shop; CREATE TABLE dbo.items (id int PRIMARY KEY, name varchar(20));
         INSERT INTO dbo.items VALUES (1, 'pen');
         CREATE USER clerk FOR LOGIN clerk; GRANT SELECT, INSERT ON dbo.items TO clerk;",
    );

    // Wrong password and disabled login.
    let e = inst.open_session("clerk", "wrong", None).err().expect("wrong password fails");
    assert_eq!(e.number, 18456);
    let e = inst.open_session("banned", "Banned#12345", None).err().expect("disabled login fails");
    assert_eq!(e.number, 18470);
    // No user in Shop: 4060 when asked for it; master through guest is fine.
    let e = inst.open_session("visitor", "Visitor#12345", Some("Shop")).err().expect("no access to Shop");
    assert_eq!(e.number, 4060);
    let mut visitor = inst.open_session("visitor", "Visitor#12345", None).unwrap();
    assert_eq!(visitor.database_name(), "master");
    assert_eq!(error_numbers(&run(&mut visitor, "USE Shop")), vec![916]);
    assert_eq!(error_numbers(&run(&mut visitor, "CREATE LOGIN x WITH PASSWORD = 'Xx#123456'")), vec![15247]);
    assert_eq!(error_numbers(&run(&mut visitor, "CREATE DATABASE Other")), vec![262]);

    // The clerk lands in its default database and has exactly its grants.
    let mut clerk = inst.open_session("clerk", "Clerk#12345", None).unwrap();
    assert_eq!(clerk.database_name(), "Shop");
    ok(&mut clerk, "INSERT INTO dbo.items VALUES (2, 'ink')");
    let r = ok(&mut clerk, "SELECT COUNT(*) FROM dbo.items");
    assert_eq!(r.result_sets()[0].1, vec![vec![Value::Int(2)]]);
    assert_eq!(error_numbers(&run(&mut clerk, "DELETE FROM dbo.items")), vec![229]);
    assert_eq!(error_numbers(&run(&mut clerk, "CREATE TABLE dbo.t2 (x int)")), vec![262]);
    // The server keeps serving the clerk after the errors.
    ok(&mut clerk, "SELECT 1");
    drop(clerk);
    drop(visitor);
    drop(sa);
    inst.shutdown().unwrap();
    drop(inst);

    // After a restart: the login, its default database, the user and the grants remain.
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut clerk = inst.open_session("clerk", "Clerk#12345", None).unwrap();
    assert_eq!(clerk.database_name(), "Shop");
    let r = ok(&mut clerk, "SELECT name FROM dbo.items ORDER BY id");
    assert_eq!(r.result_sets()[0].1.len(), 2);
    assert_eq!(error_numbers(&run(&mut clerk, "UPDATE dbo.items SET name = 'x'")), vec![229]);
    let e = inst.open_session("banned", "Banned#12345", None).err().expect("still disabled");
    assert_eq!(e.number, 18470);
    // A login cannot be dropped while it has a session; afterwards it can.
    let mut sa = session(&inst);
    assert_eq!(error_numbers(&run(&mut sa, "DROP LOGIN clerk")), vec![15434]);
    drop(clerk);
    ok(&mut sa, "DROP LOGIN clerk");
    let e = inst.open_session("clerk", "Clerk#12345", None).err().expect("dropped login fails");
    assert_eq!(e.number, 18456);
    drop(sa);
    inst.shutdown().unwrap();
}

#[test]
fn password_change_at_login() {
    // LOGIN7's ChangePassword: the old password must match; the new one replaces it.
    let dir = TempDir::new("security-change-password");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut sa = session(&inst);
    ok(&mut sa, "CREATE LOGIN mover WITH PASSWORD = 'Mover#12345', CHECK_POLICY = OFF");
    let e = inst.change_password("mover", "wrong", "Moved#12345").err().expect("a wrong old password fails");
    assert_eq!(e.number, 18456);
    assert!(inst.open_session("mover", "Mover#12345", None).is_ok(), "the password is unchanged");
    inst.change_password("mover", "Mover#12345", "Moved#12345").unwrap();
    assert_eq!(inst.open_session("mover", "Mover#12345", None).err().map(|e| e.number), Some(18456));
    assert!(inst.open_session("mover", "Moved#12345", None).is_ok());
}
