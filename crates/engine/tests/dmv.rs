//! The DMVs on the real engine: work done through sessions (durable and delayed-durable
//! commits on an on-disk instance) must move the numbers the views show, per session and
//! per file, and DBCC SQLPERF(..., CLEAR) must reset the instance's waits.
//!
//! Wait, file and counter tables are process-wide (one instance per process, as SQL
//! Server), so the tests of this file run one at a time and compare before and after.

mod common;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::*;
use engine::{Instance, Session};
use sql::results::CollectSink;
use types::Value;

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn ok(s: &mut Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    assert!(sink.errors().is_empty(), "{text}: {:?}", sink.errors());
    sink
}

fn int(v: &Value) -> i64 {
    match v {
        Value::TinyInt(n) => i64::from(*n),
        Value::SmallInt(n) => i64::from(*n),
        Value::Int(n) => i64::from(*n),
        Value::BigInt(n) => *n,
        Value::Null => 0,
        other => panic!("not an integer: {other:?}"),
    }
}

/// The first column of the first row of the last result set (0 when there is no row).
fn scalar(s: &mut Session, text: &str) -> i64 {
    let r = ok(s, text);
    let sets = r.result_sets();
    let (_, rows) = sets.last().unwrap_or_else(|| panic!("{text}: no result set"));
    rows.first().map(|r| int(&r[0])).unwrap_or(0)
}

fn rows(s: &mut Session, text: &str) -> Vec<Vec<Value>> {
    let r = ok(s, text);
    r.result_sets().pop().map(|(_, rows)| rows).unwrap_or_default()
}

fn column_names(s: &mut Session, text: &str) -> Vec<String> {
    let r = ok(s, text);
    r.result_sets().pop().map(|(c, _)| c.into_iter().map(|c| c.name).collect()).unwrap_or_default()
}

fn session_writelog(s: &mut Session, spid: i32) -> i64 {
    scalar(
        s,
        &format!(
            "SELECT waiting_tasks_count FROM sys.dm_exec_session_wait_stats \
             WHERE session_id = {spid} AND wait_type = 'WRITELOG'"
        ),
    )
}

fn counter(s: &mut Session, counter: &str, instance: &str) -> i64 {
    scalar(
        s,
        &format!(
            "SELECT cntr_value FROM sys.dm_os_performance_counters \
             WHERE counter_name = '{counter}' AND instance_name = '{instance}'"
        ),
    )
}

/// (num_of_writes, num_of_bytes_written) of a database's log file.
fn log_writes(s: &mut Session, db: &str) -> (i64, i64) {
    let r = rows(
        s,
        &format!("SELECT num_of_writes, num_of_bytes_written FROM sys.dm_io_virtual_file_stats(DB_ID('{db}'), 2)"),
    );
    assert_eq!(r.len(), 1, "one log file for {db}");
    (int(&r[0][0]), int(&r[0][1]))
}

fn setup(inst: &Arc<Instance>, db: &str, delayed: &str) -> Session {
    let mut s = session(inst);
    ok(&mut s, &format!("CREATE DATABASE {db}"));
    ok(&mut s, &format!("ALTER DATABASE {db} SET DELAYED_DURABILITY = {delayed}"));
    ok(&mut s, &format!("USE {db}"));
    ok(
        &mut s,
        "CREATE TABLE dbo.TheTable (TheID int IDENTITY(1,1) PRIMARY KEY, \
         TheDate datetime NOT NULL DEFAULT CURRENT_TIMESTAMP, RowGuid uniqueidentifier NOT NULL DEFAULT NEWID())",
    );
    s
}

#[test]
fn durable_commits_move_session_waits_file_stats_and_counters() {
    let _g = serial();
    let dir = TempDir::new("dmv-durable");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = setup(&inst, "DDTest_Off", "DISABLED");
    let spid = s.spid();

    let waits0 = session_writelog(&mut s, spid);
    let (writes0, bytes0) = log_writes(&mut s, "DDTest_Off");
    let flushes0 = counter(&mut s, "Log Flushes/sec", "DDTest_Off");
    let flushed0 = counter(&mut s, "Log Bytes Flushed/sec", "DDTest_Off");
    let xacts0 = counter(&mut s, "Transactions/sec", "DDTest_Off");
    let batches0 = counter(&mut s, "Batch Requests/sec", "");

    const N: i64 = 40;
    for _ in 0..N {
        ok(&mut s, "BEGIN TRAN; INSERT dbo.TheTable(TheDate) VALUES (sysdatetime()), (sysdatetime()); COMMIT;");
    }

    let waits1 = session_writelog(&mut s, spid);
    let (writes1, bytes1) = log_writes(&mut s, "DDTest_Off");
    let flushes1 = counter(&mut s, "Log Flushes/sec", "DDTest_Off");
    let flushed1 = counter(&mut s, "Log Bytes Flushed/sec", "DDTest_Off");
    let xacts1 = counter(&mut s, "Transactions/sec", "DDTest_Off");
    let batches1 = counter(&mut s, "Batch Requests/sec", "");

    // Every durable commit waits for its flush (one session: no group commit to share).
    assert!(waits1 - waits0 >= N / 2, "WRITELOG waits {waits0} -> {waits1}");
    assert!(writes1 - writes0 >= N / 2, "log writes {writes0} -> {writes1}");
    assert!(bytes1 - bytes0 >= (N / 2) * 512, "log bytes {bytes0} -> {bytes1}");
    assert!(flushes1 - flushes0 >= N / 2, "Log Flushes/sec {flushes0} -> {flushes1}");
    assert!(flushed1 - flushed0 >= (N / 2) * 512, "Log Bytes Flushed/sec {flushed0} -> {flushed1}");
    assert!(xacts1 - xacts0 >= N, "Transactions/sec {xacts0} -> {xacts1}");
    assert!(batches1 - batches0 >= N, "Batch Requests/sec {batches0} -> {batches1}");

    // The session's WRITELOG time is what the log writer made it wait: never more than
    // the instance saw.
    let r = rows(
        &mut s,
        &format!(
            "SELECT s.wait_time_ms, s.max_wait_time_ms, o.wait_time_ms FROM sys.dm_exec_session_wait_stats AS s \
             JOIN sys.dm_os_wait_stats AS o ON o.wait_type = s.wait_type \
             WHERE s.session_id = {spid} AND s.wait_type = 'WRITELOG'"
        ),
    );
    assert_eq!(r.len(), 1);
    assert!(int(&r[0][1]) <= int(&r[0][0]));
    assert!(int(&r[0][0]) <= int(&r[0][2]));

    // NULL file: both files of the database; NULL database: every database's files.
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM sys.dm_io_virtual_file_stats(DB_ID('DDTest_Off'), NULL)"), 2);
    let all = scalar(&mut s, "SELECT COUNT(*) FROM sys.dm_io_virtual_file_stats(NULL, NULL)");
    let files = scalar(&mut s, "SELECT COUNT(*) FROM sys.master_files");
    assert_eq!(all, files);
    // The data file is written by checkpoints, and its size is the file's.
    ok(&mut s, "CHECKPOINT");
    let r = rows(
        &mut s,
        "SELECT v.num_of_writes, v.size_on_disk_bytes, f.size FROM sys.dm_io_virtual_file_stats(DB_ID(), 1) AS v \
         JOIN sys.database_files AS f ON f.file_id = v.file_id",
    );
    assert!(int(&r[0][0]) > 0);
    assert_eq!(int(&r[0][1]), int(&r[0][2]) * 8192);
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn delayed_durable_commits_do_not_wait_for_writelog() {
    let _g = serial();
    let dir = TempDir::new("dmv-delayed");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = setup(&inst, "DDTest_On", "ALLOWED");
    let spid = s.spid();
    let waits0 = session_writelog(&mut s, spid);
    let xacts0 = counter(&mut s, "Transactions/sec", "DDTest_On");
    ok(
        &mut s,
        "DECLARE @i int = 1;
         WHILE @i <= 40
         BEGIN
           BEGIN TRANSACTION; INSERT dbo.TheTable(TheDate) VALUES (sysdatetime());
           COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);
           SET @i += 1;
         END",
    );
    let waits1 = session_writelog(&mut s, spid);
    assert_eq!(waits1, waits0, "delayed-durable commits do not wait for the log flush");
    assert!(counter(&mut s, "Transactions/sec", "DDTest_On") - xacts0 >= 40);
    // sp_flush_log hardens them: the log file is written.
    let (w0, _) = log_writes(&mut s, "DDTest_On");
    ok(&mut s, "BEGIN TRAN; INSERT dbo.TheTable(TheDate) VALUES (sysdatetime()); COMMIT WITH (DELAYED_DURABILITY = ON); EXEC sys.sp_flush_log;");
    let (w1, _) = log_writes(&mut s, "DDTest_On");
    assert!(w1 > w0, "log writes {w0} -> {w1}");
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn a_second_session_has_its_own_waits_and_sees_the_first() {
    let _g = serial();
    let dir = TempDir::new("dmv-sessions");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut a = setup(&inst, "Work", "DISABLED");
    let mut b = session(&inst);
    b.set_client_info("client-host", "dmv-test");
    let (sa, sb) = (a.spid(), b.spid());
    assert_ne!(sa, sb);
    for _ in 0..10 {
        ok(&mut a, "INSERT dbo.TheTable(TheDate) VALUES (sysdatetime())");
    }
    // b sees a's WRITELOG waits and has none of its own.
    assert!(session_writelog(&mut b, sa) >= 5);
    assert_eq!(session_writelog(&mut b, sb), 0);
    assert_eq!(
        scalar(&mut b, &format!("SELECT COUNT(*) FROM sys.dm_exec_session_wait_stats WHERE session_id = {sb} AND wait_type = 'WRITELOG'")),
        0
    );

    // Sessions: both listed, a sleeping in Work, b running this query.
    let r = rows(
        &mut b,
        "SELECT s.session_id, s.status, d.name, s.host_name, s.program_name, s.login_name, s.is_user_process, \
                s.transaction_isolation_level, s.open_transaction_count \
         FROM sys.dm_exec_sessions AS s JOIN sys.databases AS d ON d.database_id = s.database_id ORDER BY s.session_id",
    );
    assert_eq!(r.len(), 2);
    let a_row = r.iter().find(|r| int(&r[0]) == i64::from(sa)).expect("session a listed");
    let b_row = r.iter().find(|r| int(&r[0]) == i64::from(sb)).expect("session b listed");
    assert_eq!(a_row[1], Value::String("sleeping".into()));
    assert_eq!(a_row[2], Value::String("Work".into()));
    assert_eq!(b_row[1], Value::String("running".into()));
    assert_eq!(b_row[3], Value::String("client-host".into()));
    assert_eq!(b_row[4], Value::String("dmv-test".into()));
    assert_eq!(b_row[5], Value::String("sa".into()));
    assert_eq!(b_row[6], Value::Bit(true));
    assert_eq!(int(&b_row[7]), 2);

    // SET options and the open transaction of a are published when its batch ends.
    ok(&mut a, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN;");
    let r = rows(
        &mut b,
        &format!(
            "SELECT transaction_isolation_level, open_transaction_count, cpu_time, total_scheduled_time \
             FROM sys.dm_exec_sessions WHERE session_id = {sa}"
        ),
    );
    assert_eq!((int(&r[0][0]), int(&r[0][1])), (4, 1));
    assert!(int(&r[0][3]) >= int(&r[0][2]));
    ok(&mut a, "COMMIT");

    // Requests: only b's own (a is idle).
    let r =
        rows(&mut b, "SELECT session_id, status, command, wait_type, blocking_session_id FROM sys.dm_exec_requests");
    assert_eq!(r.len(), 1);
    assert_eq!(int(&r[0][0]), i64::from(sb));
    assert_eq!(r[0][1], Value::String("running".into()));
    assert_eq!(r[0][2], Value::String("SELECT".into()));
    assert_eq!(r[0][3], Value::Null);
    assert_eq!(int(&r[0][4]), 0);

    // User Connections counts live sessions.
    let users = counter(&mut b, "User Connections", "");
    assert!(users >= 2);
    drop(a);
    assert_eq!(counter(&mut b, "User Connections", ""), users - 1);
    drop(b);
    inst.shutdown().unwrap();
}

#[test]
fn a_blocked_request_shows_its_lock_wait_and_blocker() {
    let _g = serial();
    let inst = memory();
    let mut a = setup(&inst, "Locks", "DISABLED");
    ok(&mut a, "INSERT dbo.TheTable(TheDate) VALUES (sysdatetime())");
    let mut b = session(&inst);
    ok(&mut b, "USE Locks");
    let mut watcher = session(&inst);
    let (sa, sb) = (a.spid(), b.spid());
    ok(&mut a, "BEGIN TRAN; UPDATE dbo.TheTable SET TheDate = sysdatetime() WHERE TheID = 1;");
    // b is kept open after its request (a closed session's waits are not listed). The
    // assertions come after a's COMMIT: one failing inside the scope would leave b
    // blocked and the scope waiting for it forever.
    let (_b, row) = std::thread::scope(|scope| {
        let blocked = scope.spawn(move || {
            let mut sink = CollectSink::default();
            b.execute_batch("SELECT TheID FROM dbo.TheTable WHERE TheID = 1", &mut sink);
            (b, sink)
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        let row = loop {
            let r = rows(
                &mut watcher,
                &format!(
                    "SELECT status, command, wait_type, blocking_session_id, wait_resource, wait_time \
                     FROM sys.dm_exec_requests WHERE session_id = {sb}"
                ),
            );
            if let Some(row) = r.into_iter().next() {
                if matches!(&row[2], Value::String(w) if w.starts_with("LCK_M_")) {
                    break Some(row);
                }
            }
            if Instant::now() >= deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        ok(&mut a, "COMMIT");
        let (b, sink) = blocked.join().expect("the blocked session finishes");
        assert!(sink.errors().is_empty(), "{:?}", sink.errors());
        (b, row)
    });
    let row = row.unwrap_or_else(|| panic!("session {sb} never showed a lock wait"));
    assert_eq!(row[0], Value::String("suspended".into()));
    assert_eq!(row[1], Value::String("SELECT".into()));
    assert_eq!(int(&row[3]), i64::from(sa));
    assert!(matches!(&row[4], Value::String(r) if !r.is_empty()), "{:?}", row[4]);
    // The lock wait is now in b's waits and is its last wait.
    let n = scalar(
        &mut watcher,
        &format!("SELECT SUM(waiting_tasks_count) FROM sys.dm_exec_session_wait_stats WHERE session_id = {sb} AND wait_type LIKE 'LCK_M_%'"),
    );
    assert!(n >= 1);
}

#[test]
fn sqlperf_clear_resets_instance_waits_but_not_sessions() {
    let _g = serial();
    let dir = TempDir::new("dmv-clear");
    let inst = Instance::start(disk_config(dir.path())).unwrap();
    let mut s = setup(&inst, "ClearMe", "DISABLED");
    let spid = s.spid();
    for _ in 0..20 {
        ok(&mut s, "INSERT dbo.TheTable(TheDate) VALUES (sysdatetime())");
    }
    let before = scalar(&mut s, "SELECT waiting_tasks_count FROM sys.dm_os_wait_stats WHERE wait_type = 'WRITELOG'");
    assert!(before >= 10, "{before}");
    let session_before = session_writelog(&mut s, spid);
    let r = ok(&mut s, "DBCC SQLPERF('sys.dm_os_wait_stats', CLEAR)");
    // Msg 2528, informational.
    assert!(r.events.iter().any(|e| matches!(e, sql::results::Event::Message(m) if m.error.number == 2528 && m.info)));
    let after = scalar(&mut s, "SELECT waiting_tasks_count FROM sys.dm_os_wait_stats WHERE wait_type = 'WRITELOG'");
    assert!(after < before && after <= 2, "{before} -> {after}");
    // Every wait type is listed, even with no waits.
    let types = scalar(&mut s, "SELECT COUNT(*) FROM sys.dm_os_wait_stats");
    assert!(types >= 60, "{types}");
    // The sessions' tables are not the instance's.
    assert_eq!(session_writelog(&mut s, spid), session_before);
    // Latch statistics too, and the quoted-identifier spelling.
    ok(&mut s, "DBCC SQLPERF(\"sys.dm_os_latch_stats\", CLEAR) WITH NO_INFOMSGS");
    // Wrong arguments are SQL Server's error.
    let mut sink = CollectSink::default();
    s.execute_batch("DBCC SQLPERF('sys.dm_os_nothing', CLEAR)", &mut sink);
    assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![2526]);

    // LOGSPACE: one row per database with SQL Server's column names.
    let r = ok(&mut s, "DBCC SQLPERF(LOGSPACE)");
    let (cols, rows) = r.result_sets().pop().expect("a result set");
    assert_eq!(
        cols.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["Database Name", "Log Size (MB)", "Log Space Used (%)", "Status"]
    );
    let dbs = scalar(&mut s, "SELECT COUNT(*) FROM sys.databases");
    assert_eq!(rows.len() as i64, dbs);
    for r in &rows {
        let Value::Real(size) = r[1] else { panic!("{r:?}") };
        let Value::Real(used) = r[2] else { panic!("{r:?}") };
        assert!(size > 0.0 && used > 0.0 && used <= 100.0, "{r:?}");
        assert_eq!(r[3], Value::Int(0));
    }
    drop(s);
    inst.shutdown().unwrap();
}

#[test]
fn dmv_columns_are_sql_servers() {
    let _g = serial();
    let inst = memory();
    let mut s = session(&inst);
    assert_eq!(
        column_names(&mut s, "SELECT * FROM sys.dm_exec_session_wait_stats"),
        ["session_id", "wait_type", "waiting_tasks_count", "wait_time_ms", "max_wait_time_ms", "signal_wait_time_ms"]
    );
    assert_eq!(
        column_names(&mut s, "SELECT * FROM sys.dm_os_wait_stats"),
        ["wait_type", "waiting_tasks_count", "wait_time_ms", "max_wait_time_ms", "signal_wait_time_ms"]
    );
    assert_eq!(
        column_names(&mut s, "SELECT * FROM sys.dm_io_virtual_file_stats(NULL, NULL)")[..12],
        [
            "database_id",
            "file_id",
            "sample_ms",
            "num_of_reads",
            "num_of_bytes_read",
            "io_stall_read_ms",
            "num_of_writes",
            "num_of_bytes_written",
            "io_stall_write_ms",
            "io_stall",
            "size_on_disk_bytes",
            "file_handle"
        ]
    );
    assert_eq!(
        column_names(&mut s, "SELECT * FROM sys.dm_os_performance_counters"),
        ["object_name", "counter_name", "instance_name", "cntr_value", "cntr_type"]
    );
    let sessions = column_names(&mut s, "SELECT * FROM sys.dm_exec_sessions");
    for c in [
        "session_id",
        "login_time",
        "host_name",
        "program_name",
        "login_name",
        "status",
        "database_id",
        "cpu_time",
        "reads",
        "writes",
        "logical_reads",
        "transaction_isolation_level",
        "is_user_process",
        "open_transaction_count",
    ] {
        assert!(sessions.iter().any(|n| n == c), "sys.dm_exec_sessions.{c}");
    }
    let requests = column_names(&mut s, "SELECT * FROM sys.dm_exec_requests");
    for c in [
        "session_id",
        "request_id",
        "start_time",
        "status",
        "command",
        "database_id",
        "wait_type",
        "wait_time",
        "last_wait_type",
        "blocking_session_id",
        "cpu_time",
        "total_elapsed_time",
        "wait_resource",
        "nest_level",
    ] {
        assert!(requests.iter().any(|n| n == c), "sys.dm_exec_requests.{c}");
    }
    // Argument errors.
    let mut sink = CollectSink::default();
    s.execute_batch("SELECT * FROM sys.dm_io_virtual_file_stats(NULL)", &mut sink);
    assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![216]);
    let mut sink = CollectSink::default();
    s.execute_batch("SELECT * FROM sys.dm_io_virtual_file_stats(1, 2, 3)", &mut sink);
    assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![8144]);
    // A database id that does not exist: no rows, as SQL Server.
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM sys.dm_io_virtual_file_stats(999, NULL)"), 0);
}

#[test]
fn without_view_server_state_a_login_sees_only_its_own_session() {
    let _g = serial();
    let inst = memory();
    let mut admin = session(&inst);
    ok(&mut admin, "CREATE LOGIN watcher WITH PASSWORD = 'Watch#Passw0rd1', CHECK_POLICY = OFF");
    let mut w = inst.open_session("watcher", "Watch#Passw0rd1", None).expect("watcher logs in");
    let own = i64::from(w.spid());
    let r = rows(&mut w, "SELECT session_id FROM sys.dm_exec_sessions");
    assert_eq!(r.iter().map(|r| int(&r[0])).collect::<Vec<_>>(), vec![own]);
    let r = rows(&mut w, "SELECT session_id FROM sys.dm_exec_requests");
    assert_eq!(r.iter().map(|r| int(&r[0])).collect::<Vec<_>>(), vec![own]);
    assert!(rows(&mut w, "SELECT session_id FROM sys.dm_exec_session_wait_stats").iter().all(|r| int(&r[0]) == own));
    for q in [
        "SELECT * FROM sys.dm_os_wait_stats",
        "SELECT * FROM sys.dm_io_virtual_file_stats(NULL, NULL)",
        "SELECT * FROM sys.dm_os_performance_counters",
        "DBCC SQLPERF(LOGSPACE)",
        "DBCC SQLPERF('sys.dm_os_wait_stats', CLEAR)",
        "SELECT * FROM sys.dm_exec_connections",
        "SELECT * FROM sys.dm_tran_session_transactions",
        "SELECT * FROM sys.dm_tran_active_transactions",
        "SELECT * FROM sys.dm_os_sys_info",
    ] {
        let mut sink = CollectSink::default();
        w.execute_batch(q, &mut sink);
        assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![300], "{q}");
    }
    // The administrator sees both sessions.
    assert_eq!(scalar(&mut admin, "SELECT COUNT(*) FROM sys.dm_exec_sessions"), 2);
}

#[test]
fn connections_and_transactions_of_other_sessions() {
    let _g = serial();
    let inst = memory();
    let mut a = session(&inst);
    let mut b = session(&inst);
    let client: std::net::SocketAddr = "10.1.2.3:50123".parse().unwrap();
    let server: std::net::SocketAddr = "10.1.2.1:1433".parse().unwrap();
    b.set_connection(sql::host::ConnectionInfo {
        client_addr: Some(client),
        local_addr: Some(server),
        encrypted: true,
        protocol_version: 0x7400_0004,
        packet_size: 8000,
        ..Default::default()
    });
    let q = |spid: i32| {
        format!(
            "SELECT net_transport, encrypt_option, client_net_address, client_tcp_port, local_net_address, \
                    local_tcp_port, protocol_version, net_packet_size, endpoint_id \
             FROM sys.dm_exec_connections WHERE session_id = {spid}"
        )
    };
    let r = rows(&mut a, &q(b.spid()));
    let s = |v: &str| Value::String(v.into());
    assert_eq!(
        r,
        vec![vec![
            s("TCP"),
            s("TRUE"),
            s("10.1.2.3"),
            Value::Int(50123),
            s("10.1.2.1"),
            Value::Int(1433),
            Value::Int(0x7400_0004),
            Value::Int(8000),
            Value::Int(4),
        ]]
    );
    let own = q(a.spid());
    let r = rows(&mut a, &own);
    assert_eq!(r[0][0], s("Shared memory"));
    assert_eq!(r[0][2], s("<local machine>"));
    assert_eq!(r[0][3], Value::Null);

    // b's transaction, as published at the end of its request; gone after its commit.
    ok(&mut b, "BEGIN TRANSACTION Shipping; BEGIN TRANSACTION");
    let r = rows(
        &mut a,
        &format!(
            "SELECT s.open_transaction_count, a.name, a.transaction_state, s.is_user_transaction \
             FROM sys.dm_tran_session_transactions AS s \
             JOIN sys.dm_tran_active_transactions AS a ON a.transaction_id = s.transaction_id \
             WHERE s.session_id = {}",
            b.spid()
        ),
    );
    assert_eq!(r, vec![vec![Value::Int(2), s("Shipping"), Value::Int(2), Value::Bit(true)]]);
    ok(&mut b, "COMMIT; COMMIT");
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM sys.dm_tran_session_transactions"), 0);
}

#[test]
fn reset_connection_rolls_back_and_resets_the_session() {
    let _g = serial();
    let inst = memory();
    let mut a = session(&inst);
    let mut b = session(&inst);
    ok(&mut a, "CREATE TABLE dbo.Pooled (x int)");
    ok(&mut a, "SET LANGUAGE British; SET XACT_ABORT ON; CREATE TABLE #t (x int); BEGIN TRANSACTION; INSERT dbo.Pooled VALUES (1)");
    assert_eq!(scalar(&mut b, "SELECT COUNT(*) FROM sys.dm_tran_session_transactions"), 1);
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM #t"), 0);
    // What a driver's RESETCONNECTION does to a pooled connection (sp_reset_connection).
    a.reset_connection();
    assert_eq!(scalar(&mut b, "SELECT COUNT(*) FROM sys.dm_tran_session_transactions"), 0);
    assert_eq!(scalar(&mut a, "SELECT @@TRANCOUNT"), 0);
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM dbo.Pooled"), 0);
    assert_eq!(scalar(&mut a, "SELECT @@DATEFIRST"), 7);
    let r = rows(&mut a, "SELECT @@LANGUAGE, OBJECT_ID('tempdb..#t')");
    assert_eq!(r, vec![vec![Value::String("us_english".into()), Value::Null]]);
    // XACT_ABORT is off again: a failing statement does not end the batch.
    let mut sink = CollectSink::default();
    a.execute_batch("SELECT 1 / 0; SELECT 2", &mut sink);
    assert_eq!(sink.errors().iter().map(|e| e.number).collect::<Vec<_>>(), vec![8134]);
    assert_eq!(sink.result_sets().len(), 2);
    // A temp table without a transaction is dropped too; a session with neither is reset
    // without the rollback and cleanup pass.
    ok(&mut a, "CREATE TABLE #u (x int)");
    a.reset_connection();
    assert_eq!(rows(&mut a, "SELECT OBJECT_ID('tempdb..#u')"), vec![vec![Value::Null]]);
    ok(&mut a, "CREATE TABLE #u (x int)");
    a.reset_connection();
    a.reset_connection();
    assert_eq!(rows(&mut a, "SELECT OBJECT_ID('tempdb..#u')"), vec![vec![Value::Null]]);
}
