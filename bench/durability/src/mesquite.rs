//! The Mesquite side of the study, through the TDS client exactly as the article's scripts
//! run on SQL Server: the two DDTest databases, dbo.TheTable, AddSomeData/DeleteSomeData,
//! the Utility database's DD schema (file stats, wait stats, running SPIDs), the tests
//! driven by the stress runner, the per-thread-count shadow tables and the article's
//! analysis query.
//!
//! Every article statement is run as written (only sizes scaled down). One that fails is
//! recorded with Mesquite's exact error ([`ArticleFailure`]) before a workaround runs, so the
//! report shows what is still missing.

use std::time::Duration;

use stress::tds_conn::TdsConnector;
use stress::{Progress, StressOptions};
use tds::client::{message_text, BatchResult, Client, ResultSet};
use types::Value;

use crate::model::{ArticleFailure, Engine, OneRowResult, TestDef, TestResult, Workload};
use stress::server::MesquiteServer;

/// File sizes of the DDTest databases: the article's 32 GB / 16 GB / 1 GB growth scaled
/// down so CREATE DATABASE (which zero-fills the log) takes well under a second.
pub struct Sizes {
    pub data_mb: u64,
    pub log_mb: u64,
    pub growth_mb: u64,
}

pub struct MesquiteSide {
    pub server: MesquiteServer,
    admin: Client,
    pub failures: Vec<ArticleFailure>,
    /// Substitutions and other things the report must say.
    pub notes: Vec<String>,
    /// The FROM source of AddSomeData's 1000 rows: sys.all_columns, or dbo.Numbers when
    /// Mesquite's sys.all_columns has fewer than 1000 rows.
    source: String,
}

/// Runs a batch; Err with the transport error or every server error (SQL Server's text).
fn run_sql(client: &mut Client, sql: &str) -> Result<BatchResult, String> {
    let r = client.batch(sql).map_err(|e| e.to_string())?;
    if r.errors.is_empty() {
        Ok(r)
    } else {
        Err(r.errors.iter().map(message_text).collect::<Vec<_>>().join("\n"))
    }
}

pub fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::TinyInt(x) => Some(i64::from(*x)),
        Value::SmallInt(x) => Some(i64::from(*x)),
        Value::Int(x) => Some(i64::from(*x)),
        Value::BigInt(x) => Some(*x),
        Value::Decimal { value, scale, .. } => i64::try_from(*value / 10i128.pow(u32::from(*scale))).ok(),
        _ => None,
    }
}

fn scalar(client: &mut Client, sql: &str) -> Result<i64, String> {
    let r = run_sql(client, sql)?;
    r.result_sets
        .iter()
        .flat_map(|rs| rs.rows.first())
        .next()
        .and_then(|row| row.first())
        .and_then(as_i64)
        .ok_or_else(|| format!("no integer result from: {sql}"))
}

fn database_of(test: &TestDef) -> &'static str {
    if test.delayed {
        "DDTest_On"
    } else {
        "DDTest_Off"
    }
}

/// The article's procedure, for the DDTest_Off (`delayed` false: the WITH clause commented
/// out, as published) or DDTest_On database.
fn add_some_data(delayed: bool, source: &str) -> String {
    let commit = if delayed {
        "COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);"
    } else {
        "COMMIT TRANSACTION -- WITH (DELAYED_DURABILITY = ON);"
    };
    format!(
        "CREATE PROCEDURE dbo.AddSomeData
  @Iterations int = 1000
AS
BEGIN
  SET NOCOUNT ON;
  DECLARE @i int = 1;
  WHILE @i <= @Iterations
  BEGIN
    BEGIN TRANSACTION;
    INSERT dbo.TheTable(TheDate)
      SELECT TOP (1000) sysdatetime()
      FROM {source} AS s;
    {commit}
    SET @i += 1;
  END
END"
    )
}

fn delete_some_data(delayed: bool) -> String {
    let commit = if delayed {
        "COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);"
    } else {
        "COMMIT TRANSACTION -- WITH (DELAYED_DURABILITY = ON);"
    };
    format!(
        "CREATE PROCEDURE dbo.DeleteSomeData
  @Iterations int = 1000
AS
BEGIN
  SET NOCOUNT ON;
  DECLARE @i int = 1;
  WHILE @i <= @Iterations
  BEGIN
    BEGIN TRANSACTION;
    DELETE TOP (1000) dbo.TheTable;
    {commit}
    SET @i += 1;
  END
END"
    )
}

const THE_TABLE: &str = "CREATE TABLE dbo.TheTable
(
  TheID   int              IDENTITY(1,1) PRIMARY KEY,
  TheDate datetime         NOT NULL DEFAULT CURRENT_TIMESTAMP,
  RowGuid uniqueidentifier NOT NULL DEFAULT NEWID()
);";

/// The Utility database's objects, in the article's order (LogWaitStats is created but not
/// run: the stress runner measures each session's waits exactly, see `run_test`).
const UTILITY: [(&str, &str); 8] = [
    ("CREATE SCHEMA DD", "CREATE SCHEMA DD AUTHORIZATION dbo;"),
    (
        "DD.FileStats (SELECT TOP (0) ... INTO)",
        "SELECT TOP (0)
  TestID     = CONVERT(tinyint, 1),
  StepID     = CONVERT(tinyint, 1),
  EventTime  = sysdatetime(),
  *
INTO DD.FileStats
FROM sys.dm_io_virtual_file_stats(DB_ID('model'), 2);",
    ),
    (
        "DD.LogFileStats",
        "CREATE PROCEDURE DD.LogFileStats
  @TestID tinyint,
  @StepID tinyint
AS
BEGIN
  INSERT DD.FileStats
    SELECT @TestID, @StepID, sysdatetime(), *
    FROM sys.dm_io_virtual_file_stats
    (DB_ID(CASE WHEN @TestID IN (1,3) THEN 'DDTest_Off' ELSE 'DDTest_On' END), 2);
END",
    ),
    (
        "DD.WaitStats (SELECT TOP (0) ... INTO)",
        "SELECT TOP (0)
  TestID     = CONVERT(tinyint, 1),
  EventTime  = sysdatetime(),
  *
INTO DD.WaitStats
FROM sys.dm_exec_session_wait_stats;",
    ),
    (
        "DD.LogWaitStats",
        "CREATE PROCEDURE DD.LogWaitStats
  @TestID tinyint
AS
BEGIN
  WHILE 1 = 1
  BEGIN
    INSERT DD.WaitStats
      SELECT @TestID, sysdatetime(), *
        FROM sys.dm_exec_session_wait_stats
       WHERE session_id IN
       (
         SELECT SessionID
           FROM DD.RunningSPIDs
          WHERE EndTime IS NULL
       );
    WAITFOR DELAY '00:00:03';
  END
END",
    ),
    (
        "DD.RunningSPIDs",
        "CREATE TABLE DD.RunningSPIDs
(
  TestID     tinyint,
  SessionID  int,
  StartTime  datetime2 NOT NULL DEFAULT sysdatetime(),
  EndTime    datetime2
);",
    ),
    (
        "DD.RegisterSPID",
        "CREATE PROCEDURE DD.RegisterSPID
  @TestID tinyint
AS
BEGIN
    INSERT DD.RunningSPIDs(SessionID, TestID)
      SELECT @@SPID, @TestID
      WHERE NOT EXISTS
      (
        SELECT 1 FROM DD.RunningSPIDs
        WHERE TestID    = @TestID
          AND SessionID = @@SPID
          AND EndTime   IS NULL
      );
END",
    ),
    (
        "DD.DeregisterSPID",
        "CREATE PROCEDURE DD.DeregisterSPID
  @TestID tinyint
AS
BEGIN
    UPDATE DD.RunningSPIDs
       SET EndTime   = sysdatetime()
     WHERE TestID    = @TestID
       AND SessionID = @@SPID
       AND EndTime   IS NULL;
END",
    ),
];

/// The article's analysis query for the given thread counts (the article's has 16 and 8:
/// one UNION ALL branch per count, largest first, reading the shadow tables).
pub fn analysis_query(thread_counts: &[usize]) -> String {
    let mut counts = thread_counts.to_vec();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let file_branches: Vec<String> = counts
        .iter()
        .map(|t| {
            format!(
                "    SELECT Threads = {t}, TestID, StepID,
        TotalWrites = num_of_writes - LAG(num_of_writes, 1)
          OVER (PARTITION BY TestID ORDER BY StepID),
        TotalWriteStall_ms = io_stall_write_ms - LAG(io_stall_write_ms, 1)
          OVER (PARTITION BY TestID ORDER BY StepID)
      FROM DD.FileStats{t}Threads"
            )
        })
        .collect();
    let wait_branches: Vec<String> = counts
        .iter()
        .map(|t| {
            format!(
                "    SELECT Threads = {t}, session_id, TestID, HighestWait = MAX(wait_time_ms)
      FROM DD.WaitStats{t}Threads WHERE wait_type = 'WRITELOG'
      GROUP BY session_id, TestID"
            )
        })
        .collect();
    let duration_branches: Vec<String> = counts
        .iter()
        .map(|t| {
            format!(
                "  SELECT Threads = {t}, TestID, AVG(1.0*DATEDIFF(SECOND, StartTime, EndTime))
    FROM DD.RunningSPIDs{t}Threads GROUP BY TestID"
            )
        })
        .collect();
    format!(
        ";WITH LogFileStats AS
(
  SELECT Threads, TestID, TotalWrites, TotalWriteStall_ms FROM
  (
{}
  ) AS x WHERE StepID = 20
),
WritelogWaitStats (Threads, TestID, AvgWritelogWaits_ms) AS
(
  SELECT Threads, TestID, CONVERT(decimal(10,2),AVG(1.0 * HighestWait)) FROM
  (
{}
  ) AS y GROUP BY Threads, TestID
),
WorkloadDurations (Threads, TestID, AvgDuration_s) AS
(
{}
)
SELECT Test = CASE WHEN l.TestID < 3 THEN 'Insert' ELSE 'Delete' END
    + ', ' + RTRIM(l.Threads) + ' threads, DD = '
    + CASE l.TestID % 2 WHEN 1 THEN 'OFF' ELSE 'ON' END,
  l.TotalWrites, l.TotalWriteStall_ms, w.AvgWritelogWaits_ms,
  AvgDuration_s = CONVERT(decimal(10,2), d.AvgDuration_s)
FROM LogFileStats AS l
INNER JOIN WritelogWaitStats AS w
  ON  l.Threads = w.Threads AND l.TestID  = w.TestID
INNER JOIN WorkloadDurations AS d
  ON  l.Threads = d.Threads AND l.TestID  = d.TestID
ORDER BY l.Threads, l.TestID;",
        file_branches.join("\n    UNION ALL\n"),
        wait_branches.join("\n    UNION ALL\n"),
        duration_branches.join("\n  UNION ALL\n"),
    )
}

impl MesquiteSide {
    pub fn start(bin: &std::path::Path, memory_mb: u64) -> Result<MesquiteSide, String> {
        let server = MesquiteServer::start(bin, memory_mb, "bench-durability")?;
        let admin = Client::connect(&server.config(None)).map_err(|e| format!("connecting to mesquite: {e}"))?;
        Ok(MesquiteSide {
            server,
            admin,
            failures: Vec::new(),
            notes: Vec::new(),
            source: "sys.all_columns".to_string(),
        })
    }

    pub fn version(&mut self) -> String {
        run_sql(&mut self.admin, "SELECT @@VERSION")
            .ok()
            .and_then(|r| r.result_sets.into_iter().next())
            .and_then(|rs| rs.rows.into_iter().next())
            .and_then(|row| row.into_iter().next())
            // "Microsoft SQL Server 2022 (RTM) - ...\n\tMesquite 0.1.0\n\t...": Mesquite's own line.
            .map(|v| {
                let text = v.to_string();
                let line = text.lines().find(|l| l.contains("Mesquite")).or_else(|| text.lines().next());
                line.unwrap_or_default().trim().to_string()
            })
            .unwrap_or_else(|| "mesquite (version unknown)".to_string())
    }

    /// Runs an article statement as written. When Mesquite refuses it, records the exact
    /// error and runs `workaround` instead (no workaround: the study cannot go on).
    fn article(&mut self, what: &str, sql: &str, workaround: Option<(&str, String)>) -> Result<(), String> {
        match run_sql(&mut self.admin, sql) {
            Ok(_) => Ok(()),
            Err(error) => {
                let Some((why, alt)) = workaround else {
                    self.failures.push(ArticleFailure {
                        what: what.to_string(),
                        statement: sql.to_string(),
                        error: error.clone(),
                        workaround: "none: the study stops".to_string(),
                    });
                    return Err(format!("article statement failed on Mesquite ({what}): {error}"));
                };
                self.failures.push(ArticleFailure {
                    what: what.to_string(),
                    statement: sql.to_string(),
                    error,
                    workaround: why.to_string(),
                });
                run_sql(&mut self.admin, &alt).map(|_| ()).map_err(|e| format!("workaround for {what} failed: {e}"))
            }
        }
    }

    fn use_db(&mut self, db: &str) -> Result<(), String> {
        run_sql(&mut self.admin, &format!("USE {db};")).map(|_| ())
    }

    /// Creates everything the article creates, plus the one-row table.
    pub fn setup(&mut self, sizes: &Sizes) -> Result<(), String> {
        self.use_db("master")?;
        for db in ["DDTest_Off", "DDTest_On"] {
            let sql = format!(
                "CREATE DATABASE {db}
    ON (    name = N'{db}_data', size = {d}MB, filegrowth = {g}MB,
        filename = N'K:\\SQL\\Data\\DD\\{db}.mdf')
LOG ON (    name = N'{db}_log',  size = {l}MB, filegrowth = {g}MB,
        filename = N'J:\\SQL\\Data\\DD\\{db}.ldf');",
                d = sizes.data_mb,
                l = sizes.log_mb,
                g = sizes.growth_mb
            );
            self.article(
                &format!("CREATE DATABASE {db}"),
                &sql,
                Some(("plain CREATE DATABASE", format!("CREATE DATABASE {db};"))),
            )?;
        }
        self.article(
            "ALTER DATABASE ... SET DELAYED_DURABILITY",
            "ALTER DATABASE DDTest_On SET DELAYED_DURABILITY = ALLOWED;",
            None,
        )?;

        for db in ["DDTest_Off", "DDTest_On"] {
            self.use_db(db)?;
            self.article("CREATE TABLE dbo.TheTable", THE_TABLE, None)?;
            if db == "DDTest_Off" {
                let n = scalar(&mut self.admin, "SELECT COUNT(*) FROM sys.all_columns;")?;
                if n < 1000 {
                    self.source = "dbo.Numbers".to_string();
                    self.notes.push(format!(
                        "sys.all_columns has {n} rows on Mesquite (SQL Server: thousands), fewer than AddSomeData's \
                         TOP (1000): the procedures read a 1000-row dbo.Numbers table instead"
                    ));
                }
            }
            if self.source == "dbo.Numbers" {
                run_sql(
                    &mut self.admin,
                    "CREATE TABLE dbo.Numbers (n int NOT NULL PRIMARY KEY);
INSERT dbo.Numbers (n)
SELECT a.d * 100 + b.d * 10 + c.d + 1
FROM (VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)) AS a(d)
CROSS JOIN (VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)) AS b(d)
CROSS JOIN (VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)) AS c(d);",
                )?;
            }
            let delayed = db == "DDTest_On";
            let source = self.source.clone();
            self.article("CREATE PROCEDURE dbo.AddSomeData", &add_some_data(delayed, &source), None)?;
            self.article("CREATE PROCEDURE dbo.DeleteSomeData", &delete_some_data(delayed), None)?;
        }
        // The one-row-transaction test's table, in the durable database.
        self.use_db("DDTest_Off")?;
        run_sql(
            &mut self.admin,
            "CREATE TABLE dbo.OneRow (id int IDENTITY(1,1) PRIMARY KEY, payload varchar(100) NOT NULL);",
        )?;

        // The article assumes a Utility database exists.
        self.use_db("master")?;
        run_sql(&mut self.admin, "CREATE DATABASE Utility;")?;
        self.use_db("Utility")?;
        for (what, sql) in UTILITY {
            self.article(what, sql, None)?;
        }
        Ok(())
    }

    fn count_rows(&mut self, db: &str) -> Result<i64, String> {
        scalar(&mut self.admin, &format!("SELECT COUNT_BIG(*) FROM {db}.dbo.TheTable;"))
    }

    /// The article's sequence for one test: log file stats (step 10), the workload on
    /// `threads` sessions (register, run, deregister), log file stats (step 20); then the
    /// sessions' wait deltas go into DD.WaitStats.
    pub fn run_test(&mut self, threads: usize, test: TestDef, iterations: u64) -> Result<TestResult, String> {
        let db = database_of(&test);
        let before = self.count_rows(db)?;
        // A clean start: no dirty pages left over from the previous test to be written
        // during this one.
        run_sql(&mut self.admin, &format!("USE {db}; CHECKPOINT; USE Utility;"))?;
        let id = test.id;
        run_sql(&mut self.admin, &format!("EXEC Utility.DD.LogFileStats @TestID = {id}, @StepID = 10;"))?;
        let proc = match test.workload {
            Workload::Insert => "AddSomeData",
            Workload::Delete => "DeleteSomeData",
        };
        let batch = format!(
            "EXEC Utility.DD.RegisterSPID @TestID = {id};\nEXEC {db}.dbo.{proc} @iterations = {iterations};\nEXEC Utility.DD.DeregisterSPID @TestID = {id};"
        );
        let connector = TdsConnector::new(self.server.config(Some("Utility")));
        let report =
            stress::run(&connector, &StressOptions { threads, iterations: 1, batch, progress: Progress::None })?;
        run_sql(&mut self.admin, &format!("EXEC Utility.DD.LogFileStats @TestID = {id}, @StepID = 20;"))?;

        // Per-session waits, in DD.WaitStats's shape (max_wait_time_ms is not part of a
        // delta: 0). A session that never waited on WRITELOG gets a 0 row so the analysis
        // query's INNER JOIN keeps the test.
        let mut writelog = Vec::new();
        if report.waits_available {
            let mut values = Vec::new();
            for t in &report.threads {
                let Some(spid) = t.session_id else { continue };
                let mut saw_writelog = false;
                for w in &t.waits {
                    if w.wait_type == "WRITELOG" {
                        saw_writelog = true;
                        writelog.push(w.wait_time_ms);
                    }
                    values.push(format!(
                        "({id}, sysdatetime(), {spid}, N'{}', {}, {}, 0, {})",
                        w.wait_type.replace('\'', "''"),
                        w.waiting_tasks_count,
                        w.wait_time_ms,
                        w.signal_wait_time_ms
                    ));
                }
                if !saw_writelog {
                    writelog.push(0);
                    values.push(format!("({id}, sysdatetime(), {spid}, N'WRITELOG', 0, 0, 0, 0)"));
                }
            }
            for chunk in values.chunks(500) {
                run_sql(
                    &mut self.admin,
                    &format!(
                        "INSERT Utility.DD.WaitStats (TestID, EventTime, session_id, wait_type, waiting_tasks_count, \
                         wait_time_ms, max_wait_time_ms, signal_wait_time_ms) VALUES {};",
                        chunk.join(", ")
                    ),
                )?;
            }
        }

        let stats = run_sql(
            &mut self.admin,
            &format!(
                "SELECT StepID, num_of_writes, io_stall_write_ms, num_of_bytes_written, size_on_disk_bytes FROM Utility.DD.FileStats \
                 WHERE TestID = {id} ORDER BY StepID;"
            ),
        )?;
        let rows: Vec<Vec<i64>> = stats
            .result_sets
            .first()
            .map(|rs| rs.rows.iter().map(|r| r.iter().map(|v| as_i64(v).unwrap_or(0)).collect()).collect())
            .unwrap_or_default();
        let (Some(b), Some(a)) = (rows.iter().find(|r| r[0] == 10), rows.iter().find(|r| r[0] == 20)) else {
            return Err(format!("DD.FileStats has no step 10/20 rows for test {id}"));
        };

        let after = self.count_rows(db)?;
        let nominal = threads as i64 * iterations as i64 * 1000;
        let expected = match test.workload {
            Workload::Insert => before + nominal,
            Workload::Delete => (before - nominal).max(0),
        };
        let check =
            (after != expected).then(|| format!("expected {expected} rows in {db}.dbo.TheTable, found {after}"));
        Ok(TestResult {
            engine: Engine::Mesquite,
            threads,
            test,
            rows: (after - before).unsigned_abs(),
            total_elapsed: report.total_elapsed,
            thread_elapsed: report.threads.iter().map(|t| t.elapsed).collect(),
            log_writes: (a[1] - b[1]).max(0) as u64,
            log_syncs: None,
            write_stall_ms: (a[2] - b[2]) as f64,
            log_bytes: (a[3] - b[3]).max(0) as u64,
            log_file_bytes: Some(a[4].max(0) as u64),
            writelog_ms: report.waits_available.then_some(writelog),
            errors: report.errors(),
            first_errors: report.threads.iter().flat_map(|t| t.first_errors.iter().cloned()).take(3).collect(),
            check,
        })
    }

    /// The article's "shadow tables": this thread count's rows are copied to
    /// DD.FileStats{T}Threads (and WaitStats, RunningSPIDs) and the working tables emptied.
    pub fn shadow(&mut self, threads: usize) -> Result<(), String> {
        self.use_db("Utility")?;
        for t in ["FileStats", "WaitStats", "RunningSPIDs"] {
            run_sql(&mut self.admin, &format!("SELECT * INTO DD.{t}{threads}Threads FROM DD.{t}; DELETE DD.{t};"))?;
        }
        Ok(())
    }

    /// The article's analysis query over the shadow tables.
    pub fn analysis(&mut self, thread_counts: &[usize]) -> Result<ResultSet, String> {
        self.use_db("Utility")?;
        let r = run_sql(&mut self.admin, &analysis_query(thread_counts))?;
        r.result_sets.into_iter().next().ok_or_else(|| "the analysis query returned no result set".to_string())
    }

    /// One-row transactions (BEGIN TRAN; INSERT one row; COMMIT) from `threads` sessions for
    /// `seconds`, in the durable database.
    pub fn one_row(&mut self, threads: usize, seconds: f64) -> Result<OneRowResult, String> {
        run_sql(&mut self.admin, "USE DDTest_Off; CHECKPOINT; USE Utility;")?;
        let connector = TdsConnector::new(self.server.config(Some("DDTest_Off")));
        let opts = StressOptions {
            threads,
            iterations: u64::MAX,
            batch: "BEGIN TRAN; INSERT dbo.OneRow (payload) VALUES ('one row'); COMMIT;".to_string(),
            progress: Progress::None,
        };
        let report = stress::run_limited(&connector, &opts, Some(Duration::from_secs_f64(seconds)))?;
        Ok(OneRowResult {
            engine: Engine::Mesquite,
            threads,
            transactions: report.executions(),
            elapsed: report.total_elapsed,
            errors: report.errors(),
            first_errors: report.threads.iter().flat_map(|t| t.first_errors.iter().cloned()).take(3).collect(),
        })
    }
}
