//! The study's vocabulary: the article's four tests and what one run of a test measured on
//! either engine.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Mesquite,
    Postgres,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Mesquite => "Mesquite",
            Engine::Postgres => "PostgreSQL",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Insert,
    Delete,
}

/// One of the article's tests: 1 insert DD off, 2 insert DD on, 3 delete DD off, 4 delete
/// DD on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestDef {
    pub id: u8,
    pub workload: Workload,
    pub delayed: bool,
}

pub const TESTS: [TestDef; 4] = [
    TestDef { id: 1, workload: Workload::Insert, delayed: false },
    TestDef { id: 2, workload: Workload::Insert, delayed: true },
    TestDef { id: 3, workload: Workload::Delete, delayed: false },
    TestDef { id: 4, workload: Workload::Delete, delayed: true },
];

impl TestDef {
    /// "Insert, DD = OFF", as the article's query labels it (without the thread count).
    pub fn label(&self) -> String {
        format!(
            "{}, DD = {}",
            match self.workload {
                Workload::Insert => "Insert",
                Workload::Delete => "Delete",
            },
            if self.delayed { "ON" } else { "OFF" }
        )
    }
}

/// What one test measured on one engine at one thread count.
#[derive(Clone, Debug)]
pub struct TestResult {
    pub engine: Engine,
    pub threads: usize,
    pub test: TestDef,
    /// Rows the test inserted or deleted (checked against the table afterwards).
    pub rows: u64,
    /// Barrier release to the last thread's end.
    pub total_elapsed: Duration,
    /// Each thread's own elapsed time (its one batch).
    pub thread_elapsed: Vec<Duration>,
    /// Mesquite: sys.dm_io_virtual_file_stats num_of_writes of the log (file 2);
    /// PostgreSQL: pg_stat_wal.wal_write.
    pub log_writes: u64,
    /// PostgreSQL: pg_stat_wal.wal_sync (Mesquite's log writer syncs after every write).
    pub log_syncs: Option<u64>,
    /// Mesquite: io_stall_write_ms of the log; PostgreSQL: wal_write_time + wal_sync_time.
    pub write_stall_ms: f64,
    /// Mesquite: num_of_bytes_written of the log; PostgreSQL: wal_bytes.
    pub log_bytes: u64,
    /// Mesquite: the log file's size_on_disk_bytes after the test (did it grow?).
    pub log_file_bytes: Option<u64>,
    /// Mesquite: WRITELOG wait_time_ms of each thread's session during its batch
    /// (sys.dm_exec_session_wait_stats deltas); PostgreSQL has no per-session waits.
    pub writelog_ms: Option<Vec<i64>>,
    pub errors: u64,
    pub first_errors: Vec<String>,
    /// A row-count check that failed ("expected 0 rows left, found 5").
    pub check: Option<String>,
}

impl TestResult {
    pub fn rows_per_s(&self) -> f64 {
        self.rows as f64 / self.total_elapsed.as_secs_f64().max(1e-9)
    }

    pub fn avg_thread_s(&self) -> f64 {
        if self.thread_elapsed.is_empty() {
            return 0.0;
        }
        self.thread_elapsed.iter().map(Duration::as_secs_f64).sum::<f64>() / self.thread_elapsed.len() as f64
    }

    pub fn avg_writelog_ms(&self) -> Option<f64> {
        let w = self.writelog_ms.as_ref()?;
        if w.is_empty() {
            return Some(0.0);
        }
        Some(w.iter().sum::<i64>() as f64 / w.len() as f64)
    }
}

/// The one-row-transaction test on one engine.
#[derive(Clone, Debug)]
pub struct OneRowResult {
    pub engine: Engine,
    pub threads: usize,
    pub transactions: u64,
    pub elapsed: Duration,
    pub errors: u64,
    pub first_errors: Vec<String>,
}

impl OneRowResult {
    pub fn tps(&self) -> f64 {
        self.transactions.saturating_sub(self.errors) as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// An article statement Mesquite refused, and what the study ran instead.
#[derive(Clone, Debug)]
pub struct ArticleFailure {
    pub what: String,
    pub statement: String,
    pub error: String,
    pub workaround: String,
}
