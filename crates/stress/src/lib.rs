//! The stress runner behind `mesquite stress` (SQLQueryStress-style): a batch run from N
//! threads, M iterations each, one connection per thread, with per-thread elapsed times,
//! errors and the wait-type deltas of the runner's own sessions.
//!
//! The runner is generic over [`Connector`] so the benchmarks in `bench/` drive a peer
//! (PostgreSQL, [`pg`]) with the same threads and timing code as Mesquite ([`tds_conn`]).
//!
//! A run ([`run`]) connects every thread first (one failure fails the run), reads each
//! session's cumulative waits, releases all threads together through a barrier, runs the
//! batch `iterations` times per thread, reads the waits again and disconnects. Batch errors
//! are counted per thread (the first three messages kept) and the thread goes on.
//!
//! [`StressReport::to_json`] writes one object with these fields (times in seconds,
//! waits in milliseconds, as the DMV reports them):
//!
//! ```text
//! peer                  string   what was driven ("mesquite 127.0.0.1:1433")
//! batch                 string   the batch text
//! threads               number   threads (= sessions)
//! iterations_per_thread number
//! total_elapsed_s       number   barrier release to the last thread's end
//! avg_thread_elapsed_s  number   mean of the threads' own elapsed times
//! executions            number   batches run, all threads
//! errors                number   batches that failed, all threads
//! rows_affected         number   row counts the server reported, all threads
//! iterations_per_s      number   executions / total_elapsed_s
//! per_thread            array of { thread (1-based), session_id (number or null),
//!                       iterations, errors, rows_affected, elapsed_s, first_errors
//!                       (array of strings), waits (array as below) }
//! waits                 null when the peer has no session wait view, else an array of
//!                       { wait_type, waiting_tasks_count, wait_time_ms,
//!                       signal_wait_time_ms, avg_wait_ms_per_thread }: the deltas summed
//!                       over the run's sessions, largest wait time first
//! first_errors          array of { thread, message }: each thread's first messages
//! ```

pub mod json;
pub mod pg;
pub mod server;
pub mod tds_conn;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Error messages kept per thread.
const FIRST_ERRORS: usize = 3;

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
    /// 1-based, as reports number threads.
    pub thread: usize,
    pub session_id: Option<i32>,
    pub iterations: u64,
    pub errors: u64,
    /// The first few error messages, for the report.
    pub first_errors: Vec<String>,
    pub elapsed: Duration,
    /// Waits of this thread's session during its iterations (after minus before).
    pub waits: Vec<WaitDelta>,
    /// Row counts the batches reported, summed.
    pub rows_affected: u64,
}

#[derive(Clone, Debug)]
pub struct StressReport {
    pub peer: String,
    pub batch: String,
    pub iterations_per_thread: u64,
    pub threads: Vec<ThreadReport>,
    /// From the moment all threads were connected and released to the last one's end.
    pub total_elapsed: Duration,
    /// Whether the peer reported session waits (false: `waits` are empty for lack of a
    /// view, not for lack of waiting).
    pub waits_available: bool,
}

impl StressReport {
    pub fn avg_thread_elapsed(&self) -> Duration {
        match u32::try_from(self.threads.len()) {
            Ok(n) if n > 0 => self.threads.iter().map(|t| t.elapsed).sum::<Duration>() / n,
            _ => Duration::ZERO,
        }
    }

    /// Waits summed over every thread's session, by wait type (largest wait time first).
    pub fn waits_total(&self) -> Vec<WaitDelta> {
        let mut by_type: BTreeMap<&str, WaitDelta> = BTreeMap::new();
        for w in self.threads.iter().flat_map(|t| &t.waits) {
            let e = by_type.entry(&w.wait_type).or_insert_with(|| WaitDelta {
                wait_type: w.wait_type.clone(),
                waiting_tasks_count: 0,
                wait_time_ms: 0,
                signal_wait_time_ms: 0,
            });
            e.waiting_tasks_count += w.waiting_tasks_count;
            e.wait_time_ms += w.wait_time_ms;
            e.signal_wait_time_ms += w.signal_wait_time_ms;
        }
        let mut v: Vec<WaitDelta> = by_type.into_values().collect();
        v.sort_by(|a, b| (b.wait_time_ms, b.waiting_tasks_count).cmp(&(a.wait_time_ms, a.waiting_tasks_count)));
        v
    }

    pub fn executions(&self) -> u64 {
        self.threads.iter().map(|t| t.iterations).sum()
    }

    pub fn errors(&self) -> u64 {
        self.threads.iter().map(|t| t.errors).sum()
    }

    pub fn rows_affected(&self) -> u64 {
        self.threads.iter().map(|t| t.rows_affected).sum()
    }

    /// Executions per second of the whole run (0 for an empty run).
    pub fn iterations_per_sec(&self) -> f64 {
        let s = self.total_elapsed.as_secs_f64();
        if s > 0.0 {
            self.executions() as f64 / s
        } else {
            0.0
        }
    }

    fn avg_wait_per_thread(&self, w: &WaitDelta) -> f64 {
        if self.threads.is_empty() {
            0.0
        } else {
            w.wait_time_ms as f64 / self.threads.len() as f64
        }
    }

    /// A summary in the spirit of SQLQueryStress: totals, a line per thread, the waits of
    /// the run's sessions by type, then the first errors.
    pub fn to_table(&self) -> String {
        let mut o = String::new();
        let execs = self.executions();
        let avg = self.avg_thread_elapsed();
        let per_iter_ms = if self.iterations_per_thread > 0 {
            avg.as_secs_f64() * 1000.0 / self.iterations_per_thread as f64
        } else {
            0.0
        };
        let line = |o: &mut String, k: &str, v: String| o.push_str(&format!("{k:<24}{v}\n"));
        line(&mut o, "Peer:", self.peer.clone());
        line(&mut o, "Threads x iterations:", format!("{} x {}", self.threads.len(), self.iterations_per_thread));
        line(&mut o, "Total elapsed:", format!("{:.3} s", self.total_elapsed.as_secs_f64()));
        line(&mut o, "Avg thread elapsed:", format!("{:.3} s", avg.as_secs_f64()));
        line(&mut o, "Avg per iteration:", format!("{per_iter_ms:.3} ms"));
        line(&mut o, "Executions:", execs.to_string());
        line(&mut o, "Errors:", self.errors().to_string());
        line(&mut o, "Rows affected:", self.rows_affected().to_string());
        line(&mut o, "Iterations/s:", format!("{:.1}", self.iterations_per_sec()));

        o.push_str(&format!(
            "\n{:>6}  {:>10}  {:>10}  {:>8}  {:>10}\n",
            "Thread", "Session", "Iterations", "Errors", "Elapsed s"
        ));
        for t in &self.threads {
            let sid = t.session_id.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
            o.push_str(&format!(
                "{:>6}  {:>10}  {:>10}  {:>8}  {:>10.3}\n",
                t.thread,
                sid,
                t.iterations,
                t.errors,
                t.elapsed.as_secs_f64()
            ));
        }

        o.push('\n');
        if !self.waits_available {
            o.push_str("Waits: the peer has no per-session wait statistics.\n");
        } else {
            let waits = self.waits_total();
            if waits.is_empty() {
                o.push_str("Waits of these sessions during the run: none.\n");
            } else {
                o.push_str("Waits of these sessions during the run:\n");
                let width = waits.iter().map(|w| w.wait_type.len()).max().unwrap_or(0).max(9);
                o.push_str(&format!(
                    "{:<width$}  {:>10}  {:>12}  {:>12}  {:>14}\n",
                    "Wait type", "Count", "Wait ms", "Signal ms", "Avg ms/thread"
                ));
                for w in &waits {
                    o.push_str(&format!(
                        "{:<width$}  {:>10}  {:>12}  {:>12}  {:>14.1}\n",
                        w.wait_type,
                        w.waiting_tasks_count,
                        w.wait_time_ms,
                        w.signal_wait_time_ms,
                        self.avg_wait_per_thread(w)
                    ));
                }
            }
        }

        let errors: Vec<(usize, &String)> =
            self.threads.iter().flat_map(|t| t.first_errors.iter().map(move |e| (t.thread, e))).collect();
        if !errors.is_empty() {
            o.push_str("\nFirst errors:\n");
            for (t, e) in errors {
                o.push_str(&format!("  thread {t}: {e}\n"));
            }
        }
        o
    }

    /// The report as one JSON object; the fields are listed in the module documentation.
    pub fn to_json(&self) -> String {
        let mut o = String::from("{");
        let waits_json = |o: &mut String, waits: &[WaitDelta], with_avg: bool| {
            o.push('[');
            for (i, w) in waits.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                o.push_str(&format!(
                    "{{\"wait_type\":{},\"waiting_tasks_count\":{},\"wait_time_ms\":{},\"signal_wait_time_ms\":{}",
                    json_str(&w.wait_type),
                    w.waiting_tasks_count,
                    w.wait_time_ms,
                    w.signal_wait_time_ms
                ));
                if with_avg {
                    o.push_str(&format!(",\"avg_wait_ms_per_thread\":{}", json_num(self.avg_wait_per_thread(w))));
                }
                o.push('}');
            }
            o.push(']');
        };
        o.push_str(&format!("\"peer\":{},", json_str(&self.peer)));
        o.push_str(&format!("\"batch\":{},", json_str(&self.batch)));
        o.push_str(&format!("\"threads\":{},", self.threads.len()));
        o.push_str(&format!("\"iterations_per_thread\":{},", self.iterations_per_thread));
        o.push_str(&format!("\"total_elapsed_s\":{},", json_num(self.total_elapsed.as_secs_f64())));
        o.push_str(&format!("\"avg_thread_elapsed_s\":{},", json_num(self.avg_thread_elapsed().as_secs_f64())));
        o.push_str(&format!("\"executions\":{},", self.executions()));
        o.push_str(&format!("\"errors\":{},", self.errors()));
        o.push_str(&format!("\"rows_affected\":{},", self.rows_affected()));
        o.push_str(&format!("\"iterations_per_s\":{},", json_num(self.iterations_per_sec())));
        o.push_str("\"per_thread\":[");
        for (i, t) in self.threads.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let sid = t.session_id.map(|s| s.to_string()).unwrap_or_else(|| "null".into());
            let errs: Vec<String> = t.first_errors.iter().map(|e| json_str(e)).collect();
            o.push_str(&format!(
                "{{\"thread\":{},\"session_id\":{},\"iterations\":{},\"errors\":{},\"rows_affected\":{},\"elapsed_s\":{},\"first_errors\":[{}],\"waits\":",
                t.thread,
                sid,
                t.iterations,
                t.errors,
                t.rows_affected,
                json_num(t.elapsed.as_secs_f64()),
                errs.join(",")
            ));
            waits_json(&mut o, &t.waits, false);
            o.push('}');
        }
        o.push_str("],\"waits\":");
        if self.waits_available {
            waits_json(&mut o, &self.waits_total(), true);
        } else {
            o.push_str("null");
        }
        o.push_str(",\"first_errors\":[");
        let mut first = true;
        for t in &self.threads {
            for e in &t.first_errors {
                if !first {
                    o.push(',');
                }
                first = false;
                o.push_str(&format!("{{\"thread\":{},\"message\":{}}}", t.thread, json_str(e)));
            }
        }
        o.push_str("]}");
        o
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON number; JSON has no NaN or infinity, so those become 0.
fn json_num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "0".to_string()
    }
}

/// `after - before` per wait type; types absent before count from zero; all-zero deltas
/// are dropped.
pub fn wait_deltas(before: &[WaitDelta], after: &[WaitDelta]) -> Vec<WaitDelta> {
    let prior: BTreeMap<&str, &WaitDelta> = before.iter().map(|w| (w.wait_type.as_str(), w)).collect();
    after
        .iter()
        .filter_map(|a| {
            let (c, w, s) = match prior.get(a.wait_type.as_str()) {
                Some(b) => (b.waiting_tasks_count, b.wait_time_ms, b.signal_wait_time_ms),
                None => (0, 0, 0),
            };
            let d = WaitDelta {
                wait_type: a.wait_type.clone(),
                waiting_tasks_count: a.waiting_tasks_count - c,
                wait_time_ms: a.wait_time_ms - w,
                signal_wait_time_ms: a.signal_wait_time_ms - s,
            };
            (d.waiting_tasks_count != 0 || d.wait_time_ms != 0 || d.signal_wait_time_ms != 0).then_some(d)
        })
        .collect()
}

/// Connects `opts.threads` sessions, releases them together, runs the batch
/// `opts.iterations` times on each, and reports. A connection failure fails the run; a
/// batch error is counted and the thread goes on.
pub fn run<C: Connector>(connector: &C, opts: &StressOptions) -> Result<StressReport, String> {
    run_limited(connector, opts, None)
}

/// Where the threads wait once connected until this thread releases (or dismisses) them
/// all at once. Unlike `std::sync::Barrier` it never waits for a thread that failed to
/// start.
struct Gate {
    /// (threads arrived, None while closed / Some(go) once opened).
    state: Mutex<(usize, Option<bool>)>,
    cv: Condvar,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, Option<bool>)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A thread arrives and waits; true when released to run, false when dismissed.
    fn arrive(&self) -> bool {
        let mut s = self.lock();
        s.0 += 1;
        self.cv.notify_all();
        loop {
            if let Some(go) = s.1 {
                return go;
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn wait_for(&self, threads: usize) {
        let mut s = self.lock();
        while s.0 < threads {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn open(&self, go: bool) {
        self.lock().1 = Some(go);
        self.cv.notify_all();
    }
}

/// Shared between the threads and the progress display.
struct Counters {
    done: AtomicU64,
    errors: AtomicU64,
}

/// What a thread hands back.
struct Finished {
    report: ThreadReport,
    end: Instant,
    waits_available: bool,
}

/// One thread's life: connect and read its waits, wait at the gate, run, read the waits
/// again, disconnect. None when dismissed (another thread could not connect).
fn thread_body<C: Connector>(
    thread: usize,
    connector: &C,
    opts: &StressOptions,
    time_limit: Option<Duration>,
    gate: &Gate,
    connect_error: &Mutex<Option<String>>,
    counters: &Counters,
) -> Option<Finished> {
    // A panic in a peer's client must not leave the run waiting for this thread.
    let connected = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut c = connector.connect()?;
        let before = c.session_waits();
        Ok::<_, String>((c, before))
    }))
    .unwrap_or_else(|_| Err("the connection code panicked".to_string()));
    let (mut conn, before) = match connected {
        Ok((c, before)) => (c, before),
        Err(e) => {
            let mut slot = connect_error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(format!("thread {thread}: cannot connect: {e}"));
            drop(slot);
            gate.arrive();
            return None;
        }
    };
    if !gate.arrive() {
        return None;
    }
    let mut report = ThreadReport {
        thread,
        session_id: conn.session_id(),
        iterations: 0,
        errors: 0,
        first_errors: Vec::new(),
        elapsed: Duration::ZERO,
        waits: Vec::new(),
        rows_affected: 0,
    };
    let start = Instant::now();
    for _ in 0..opts.iterations {
        if time_limit.is_some_and(|l| start.elapsed() >= l) {
            break;
        }
        match conn.execute(&opts.batch) {
            Ok(rows) => report.rows_affected += rows,
            Err(e) => {
                report.errors += 1;
                counters.errors.fetch_add(1, Ordering::Relaxed);
                if report.first_errors.len() < FIRST_ERRORS {
                    report.first_errors.push(e);
                }
            }
        }
        report.iterations += 1;
        counters.done.fetch_add(1, Ordering::Relaxed);
    }
    report.elapsed = start.elapsed();
    let end = Instant::now();
    let after = conn.session_waits();
    let waits_available = before.is_some() && after.is_some();
    if let (Some(b), Some(a)) = (&before, &after) {
        report.waits = wait_deltas(b, a);
    }
    drop(conn);
    Some(Finished { report, end, waits_available })
}

/// [`run`], with each thread also stopping once `time_limit` has passed since the release
/// (`iterations` is then a cap): for benchmarks that measure for a fixed time.
pub fn run_limited<C: Connector>(
    connector: &C,
    opts: &StressOptions,
    time_limit: Option<Duration>,
) -> Result<StressReport, String> {
    let n = opts.threads;
    if n == 0 {
        return Err("the number of threads must be at least 1".to_string());
    }
    let gate = Gate { state: Mutex::new((0, None)), cv: Condvar::new() };
    let connect_error: Mutex<Option<String>> = Mutex::new(None);
    let counters = Counters { done: AtomicU64::new(0), errors: AtomicU64::new(0) };

    let outcome = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let (gate, connect_error, counters) = (&gate, &connect_error, &counters);
            let spawned =
                std::thread::Builder::new().name(format!("stress-{}", i + 1)).spawn_scoped(scope, move || {
                    thread_body(i + 1, connector, opts, time_limit, gate, connect_error, counters)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    let mut slot = connect_error.lock().unwrap_or_else(|p| p.into_inner());
                    slot.get_or_insert(format!("cannot start thread {}: {e}", i + 1));
                    break;
                }
            }
        }
        gate.wait_for(handles.len());
        let failed = connect_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let released = Instant::now();
        gate.open(failed.is_none());
        if failed.is_none() {
            show_progress(opts, time_limit, released, &handles, &counters);
        }
        let mut finished = Vec::with_capacity(n);
        let mut panicked = false;
        for h in handles {
            match h.join() {
                Ok(Some(f)) => finished.push(f),
                Ok(None) => {}
                Err(_) => panicked = true,
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if panicked {
            return Err("a stress thread panicked".to_string());
        }
        Ok((released, finished))
    });
    let (released, finished) = outcome?;
    let total_elapsed =
        finished.iter().map(|f| f.end.saturating_duration_since(released)).max().unwrap_or(Duration::ZERO);
    let waits_available = !finished.is_empty() && finished.iter().all(|f| f.waits_available);
    Ok(StressReport {
        peer: connector.describe(),
        batch: opts.batch.clone(),
        iterations_per_thread: opts.iterations,
        threads: finished.into_iter().map(|f| f.report).collect(),
        total_elapsed,
        waits_available,
    })
}

/// Shows progress on stderr until every thread has finished. A bar needs a terminal; on
/// anything else it falls back to lines.
fn show_progress<T>(
    opts: &StressOptions,
    time_limit: Option<Duration>,
    released: Instant,
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    counters: &Counters,
) {
    let mode = match opts.progress {
        Progress::Bar if !std::io::stderr().is_terminal() => Progress::Lines,
        p => p,
    };
    if mode == Progress::None {
        return;
    }
    let total = opts.iterations.saturating_mul(opts.threads as u64);
    let every = if mode == Progress::Bar { Duration::from_millis(200) } else { Duration::from_secs(2) };
    let mut last = Instant::now();
    let draw = |final_draw: bool| {
        let done = counters.done.load(Ordering::Relaxed);
        let errors = counters.errors.load(Ordering::Relaxed);
        let elapsed = released.elapsed().as_secs_f64();
        let mut frac = if total > 0 { done as f64 / total as f64 } else { 1.0 };
        if let Some(l) = time_limit {
            frac = frac.max(elapsed / l.as_secs_f64().max(1e-9));
        }
        let frac = if final_draw { 1.0 } else { frac.clamp(0.0, 1.0) };
        let mut err = std::io::stderr().lock();
        let _ = match mode {
            Progress::Bar => {
                const WIDTH: usize = 30;
                let filled = ((frac * WIDTH as f64) as usize).min(WIDTH);
                write!(
                    err,
                    "\r[{}{}] {done}/{total} iterations  {elapsed:.1} s  {errors} errors\x1b[K{}",
                    "#".repeat(filled),
                    "-".repeat(WIDTH - filled),
                    if final_draw { "\n" } else { "" }
                )
            }
            _ => writeln!(err, "stress: {done}/{total} iterations, {elapsed:.1} s, {errors} errors"),
        };
        let _ = err.flush();
    };
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        if last.elapsed() >= every {
            last = Instant::now();
            draw(false);
        }
    }
    if mode == Progress::Bar {
        draw(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI32;

    /// A fake peer: batches are "ok", "rows N" or "fail"; every execution adds one
    /// WRITELOG wait of 2 ms to the session's cumulative waits.
    struct Fake {
        next_id: AtomicI32,
        fail_connect_at: Option<i32>,
        waits: bool,
    }

    struct FakeConn {
        id: i32,
        writelog: i64,
        waits: bool,
    }

    impl Connector for Fake {
        type Conn = FakeConn;
        fn connect(&self) -> Result<FakeConn, String> {
            let id = self.next_id.fetch_add(1, Ordering::SeqCst);
            if Some(id) == self.fail_connect_at {
                return Err("Login failed for user 'x'.".into());
            }
            Ok(FakeConn { id, writelog: 0, waits: self.waits })
        }
        fn describe(&self) -> String {
            "fake \"peer\"".into()
        }
    }

    impl Connection for FakeConn {
        fn execute(&mut self, batch: &str) -> Result<u64, String> {
            self.writelog += 1;
            match batch.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["ok"] => Ok(0),
                ["rows", n] => Ok(n.parse().unwrap_or(0)),
                _ => Err(format!("Msg 8134, Level 16, State 1, Line 1: failed on session {}", self.id)),
            }
        }
        fn session_id(&self) -> Option<i32> {
            Some(self.id)
        }
        fn session_waits(&mut self) -> Option<Vec<WaitDelta>> {
            self.waits.then(|| {
                vec![
                    WaitDelta {
                        wait_type: "WRITELOG".into(),
                        waiting_tasks_count: self.writelog,
                        wait_time_ms: 2 * self.writelog,
                        signal_wait_time_ms: 0,
                    },
                    WaitDelta {
                        wait_type: "IDLE".into(),
                        waiting_tasks_count: 7,
                        wait_time_ms: 70,
                        signal_wait_time_ms: 1,
                    },
                ]
            })
        }
    }

    fn fake(waits: bool) -> Fake {
        Fake { next_id: AtomicI32::new(51), fail_connect_at: None, waits }
    }

    fn opts(threads: usize, iterations: u64, batch: &str) -> StressOptions {
        StressOptions { threads, iterations, batch: batch.into(), progress: Progress::None }
    }

    #[test]
    fn runs_every_thread_and_counts() {
        let r = run(&fake(true), &opts(4, 25, "rows 2")).unwrap();
        assert_eq!(r.threads.len(), 4);
        assert_eq!(r.executions(), 100);
        assert_eq!(r.errors(), 0);
        assert_eq!(r.rows_affected(), 200);
        let mut ids: Vec<i32> = r.threads.iter().filter_map(|t| t.session_id).collect();
        ids.sort();
        assert_eq!(ids, [51, 52, 53, 54]);
        assert_eq!(r.threads.iter().map(|t| t.thread).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert!(r.threads.iter().all(|t| t.elapsed <= r.total_elapsed));
        // Deltas only: IDLE did not change and is dropped.
        assert!(r.waits_available);
        assert_eq!(
            r.waits_total(),
            [WaitDelta {
                wait_type: "WRITELOG".into(),
                waiting_tasks_count: 100,
                wait_time_ms: 200,
                signal_wait_time_ms: 0
            }]
        );
        let table = r.to_table();
        assert!(table.contains("4 x 25"), "{table}");
        assert!(table.contains("WRITELOG"), "{table}");
        assert!(!table.contains("IDLE"), "{table}");
        assert!(!table.contains("First errors"), "{table}");
    }

    #[test]
    fn errors_are_counted_and_the_first_three_kept() {
        let r = run(&fake(false), &opts(2, 10, "fail")).unwrap();
        assert_eq!(r.executions(), 20);
        assert_eq!(r.errors(), 20);
        for t in &r.threads {
            assert_eq!(t.errors, 10);
            assert_eq!(t.first_errors.len(), 3);
            assert!(t.first_errors[0].starts_with("Msg 8134,"), "{:?}", t.first_errors);
        }
        assert!(!r.waits_available);
        let table = r.to_table();
        assert!(table.contains("First errors:\n  thread 1: Msg 8134"), "{table}");
        assert!(table.contains("no per-session wait statistics"), "{table}");
    }

    #[test]
    fn a_failed_connection_fails_the_run() {
        let f = Fake { fail_connect_at: Some(53), ..fake(true) };
        let e = run(&f, &opts(5, 1000, "ok")).unwrap_err();
        assert!(e.contains("cannot connect: Login failed"), "{e}");
        assert_eq!(run(&fake(true), &opts(0, 1, "ok")).unwrap_err(), "the number of threads must be at least 1");
    }

    #[test]
    fn time_limit_caps_iterations() {
        let r = run_limited(&fake(false), &opts(2, u64::MAX, "ok"), Some(Duration::from_millis(20))).unwrap();
        assert!(r.executions() > 0);
        assert!(r.threads.iter().all(|t| t.iterations < u64::MAX));
    }

    #[test]
    fn json_round_trips_through_the_reader() {
        let mut r = run(&fake(true), &opts(3, 4, "fail")).unwrap();
        r.batch = "SELECT 'a\"b\\c'\n\t\u{1}é".into();
        let j = json::parse(&r.to_json()).unwrap();
        assert_eq!(j.get("peer").and_then(|v| v.as_str()), Some("fake \"peer\""));
        assert_eq!(j.get("batch").and_then(|v| v.as_str()), Some(r.batch.as_str()));
        assert_eq!(j.get("threads").and_then(|v| v.as_u64()), Some(3));
        assert_eq!(j.get("iterations_per_thread").and_then(|v| v.as_u64()), Some(4));
        assert_eq!(j.get("executions").and_then(|v| v.as_u64()), Some(12));
        assert_eq!(j.get("errors").and_then(|v| v.as_u64()), Some(12));
        let per = j.get("per_thread").and_then(|v| v.as_array()).unwrap();
        assert_eq!(per.len(), 3);
        assert_eq!(per[0].get("first_errors").and_then(|v| v.as_array()).map(|a| a.len()), Some(3));
        let waits = j.get("waits").and_then(|v| v.as_array()).unwrap();
        assert_eq!(waits[0].get("wait_type").and_then(|v| v.as_str()), Some("WRITELOG"));
        assert_eq!(waits[0].get("waiting_tasks_count").and_then(|v| v.as_u64()), Some(12));
        assert_eq!(waits[0].get("avg_wait_ms_per_thread").and_then(|v| v.as_f64()), Some(8.0));
        assert_eq!(j.get("first_errors").and_then(|v| v.as_array()).map(|a| a.len()), Some(9));
        let no_waits = run(&fake(false), &opts(1, 1, "ok")).unwrap();
        assert_eq!(json::parse(&no_waits.to_json()).unwrap().get("waits"), Some(&json::Json::Null));
    }

    #[test]
    fn deltas_count_new_types_from_zero() {
        let w = |t: &str, c, ms| WaitDelta {
            wait_type: t.into(),
            waiting_tasks_count: c,
            wait_time_ms: ms,
            signal_wait_time_ms: 0,
        };
        let d = wait_deltas(&[w("A", 1, 10), w("B", 2, 2)], &[w("A", 3, 15), w("B", 2, 2), w("C", 1, 4)]);
        assert_eq!(d, [w("A", 2, 5), w("C", 1, 4)]);
    }
}
