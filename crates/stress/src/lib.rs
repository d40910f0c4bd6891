//! The stress runner behind `mesquite stress` (SQLQueryStress-style): a batch run from N
//! threads, M iterations each, one connection per thread, with per-thread elapsed times,
//! errors and the wait-type deltas of the runner's own sessions.
//!
//! The runner is generic over [`Connector`] so the benchmarks in `bench/` drive a peer
//! (PostgreSQL, [`pg`]) with the same threads and timing code as Mesquite ([`tds_conn`]).

pub mod pg;
pub mod tds_conn;

use std::time::Duration;

/// One row of a session's cumulative waits (SQL Server: `sys.dm_exec_session_wait_stats`),
/// or the difference of two such rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitDelta {
    pub wait_type: String,
    pub waiting_tasks_count: i64,
    pub wait_time_ms: i64,
    pub signal_wait_time_ms: i64,
}

/// A connection one stress thread drives.
pub trait Connection: Send {
    /// Runs one batch to completion, discarding result rows. Ok(total rows affected), or
    /// Err(the server's error as text, starting with its number: "Msg 1205, ...").
    fn execute(&mut self, batch: &str) -> Result<u64, String>;
    /// The server's id for this session (@@SPID; a PostgreSQL backend pid), if known.
    fn session_id(&self) -> Option<i32>;
    /// This session's cumulative waits, or None when the peer has no such view.
    fn session_waits(&mut self) -> Option<Vec<WaitDelta>>;
}

/// Opens connections for the stress threads.
pub trait Connector: Sync {
    type Conn: Connection;
    fn connect(&self) -> Result<Self::Conn, String>;
    /// Names the peer in reports ("mesquite 127.0.0.1:1433", "postgresql 15 ...").
    fn describe(&self) -> String;
}

/// How progress is shown while the threads run (on stderr).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    None,
    /// A redrawn bar (for a terminal).
    Bar,
    /// A line every few seconds (for logs and pipes).
    Lines,
}

#[derive(Clone, Debug)]
pub struct StressOptions {
    pub threads: usize,
    pub iterations: u64,
    pub batch: String,
    pub progress: Progress,
}

#[derive(Clone, Debug)]
pub struct ThreadReport {
    pub thread: usize,
    pub session_id: Option<i32>,
    pub iterations: u64,
    pub errors: u64,
    /// The first few error messages, for the report.
    pub first_errors: Vec<String>,
    pub elapsed: Duration,
    /// Waits of this thread's session during its iterations (after minus before).
    pub waits: Vec<WaitDelta>,
}

#[derive(Clone, Debug)]
pub struct StressReport {
    pub peer: String,
    pub batch: String,
    pub iterations_per_thread: u64,
    pub threads: Vec<ThreadReport>,
    /// From the moment all threads were connected and released to the last one's end.
    pub total_elapsed: Duration,
}

impl StressReport {
    pub fn avg_thread_elapsed(&self) -> Duration {
        unimplemented!("helper: stress runner")
    }
    /// Waits summed over every thread's session, by wait type.
    pub fn waits_total(&self) -> Vec<WaitDelta> {
        unimplemented!("helper: stress runner")
    }
    pub fn executions(&self) -> u64 {
        unimplemented!("helper: stress runner")
    }
    pub fn errors(&self) -> u64 {
        unimplemented!("helper: stress runner")
    }
    pub fn to_table(&self) -> String {
        unimplemented!("helper: stress runner")
    }
    pub fn to_json(&self) -> String {
        unimplemented!("helper: stress runner")
    }
}

/// Connects `opts.threads` sessions, releases them together, runs the batch
/// `opts.iterations` times on each, and reports. A connection failure fails the run; a
/// batch error is counted and the thread goes on.
pub fn run<C: Connector>(connector: &C, opts: &StressOptions) -> Result<StressReport, String> {
    let _ = (connector, opts);
    unimplemented!("helper: stress runner")
}
