//! The sqllogictest conformance runner: runs the SQLite project's sqllogictest corpus
//! sample (`shared/sqllogictest/` beside the repository, or `$MESQUITE_SLT_DIR`) against a
//! fresh in-memory instance per file, through the same `execute_batch` the server uses.
//!
//! - Records are parsed by the `sqllogictest` crate and run one by one, so that each is
//!   counted: passed, failed (listed in `tests/slt/expected-failures.txt` or not),
//!   skipped (`skipif mssql`, `onlyif <other engine>`), or not run (time budget spent).
//! - Values are printed by SQLite's sqllogictest rules, driven by the column types the
//!   record declares (`query ITR`): `I` integers (reals and decimals truncated), `R` with
//!   three decimals, `T` text with the empty string as `(empty)` and control characters
//!   as `@`; NULL as `NULL` in every type. Results compare value-wise, and sets over the
//!   hash threshold (8 unless a file says otherwise) compare by MD5, as the corpus was written.
//! - The corpus files are the reference and are not edited: condition lines with
//!   trailing `# comments`, and `halt` under a condition (which the crate's parser would
//!   apply unconditionally), are rewritten in memory before parsing.
//! - Each record runs under a time limit: a watchdog sets the session's cancel flag, which
//!   the executor checks between rows and statements.
//!
//! Each file runs on a fresh in-memory engine instance (`engine::Instance`), or with
//! `MESQUITE_SLT_HOST=memhost` on the executor's in-memory test host, which separates
//! executor from storage problems. [`Embedded`] is the seam between the two.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sql::exec::{execute_batch, SessionState};
use sql::memhost::MemHost;
use sql::results::{CollectSink, Event, ResultSink};
use sqllogictest::{Condition, Control, DBOutput, DefaultColumnType, QueryExpect, Record, ResultMode, Runner, DB};
use types::{SqlType, Value};

/// The engine name of `onlyif` / `skipif` conditions.
pub const ENGINE_NAME: &str = "mssql";

/// A session that runs batches (see the module doc).
pub trait Embedded: Send {
    fn run(&mut self, text: &str, sink: &mut dyn ResultSink);
    /// The flag that cancels the running batch (checked between rows and statements).
    fn cancel_flag(&self) -> Arc<AtomicBool>;
}

/// The executor over the in-memory host, in `master`.
pub struct MemSession {
    state: SessionState,
    host: MemHost,
}

impl MemSession {
    pub fn new() -> MemSession {
        MemSession { state: SessionState::new(1, 51), host: MemHost::new() }
    }
}

impl Default for MemSession {
    fn default() -> Self {
        MemSession::new()
    }
}

impl Embedded for MemSession {
    fn run(&mut self, text: &str, sink: &mut dyn ResultSink) {
        execute_batch(&mut self.state, &mut self.host, text, sink);
    }
    fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.state.cancel)
    }
}

/// A session of a fresh in-memory engine instance, shut down when dropped.
pub struct EngineSession {
    session: Option<engine::Session>,
    instance: Arc<engine::Instance>,
}

impl EngineSession {
    pub fn start() -> Result<EngineSession, String> {
        const PASSWORD: &str = "slt-only";
        let instance =
            engine::Instance::start(engine::InstanceConfig::in_memory(PASSWORD)).map_err(|e| e.to_string())?;
        let session = instance.open_session("sa", PASSWORD, None).map_err(|e| e.to_string())?;
        Ok(EngineSession { session: Some(session), instance })
    }
}

impl Embedded for EngineSession {
    fn run(&mut self, text: &str, sink: &mut dyn ResultSink) {
        if let Some(s) = self.session.as_mut() {
            s.execute_batch(text, sink);
        }
    }
    fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.session.as_ref().map(|s| s.cancel_handle()).unwrap_or_default()
    }
}

impl Drop for EngineSession {
    fn drop(&mut self) {
        self.session = None;
        let _ = self.instance.shutdown();
    }
}

/// A fresh session for one corpus file: the engine's, or the in-memory test host's when
/// `MESQUITE_SLT_HOST=memhost`. An engine that fails to start falls back to the test host
/// with a note, so that the run still says something.
pub fn new_session() -> Box<dyn Embedded> {
    if std::env::var("MESQUITE_SLT_HOST").is_ok_and(|h| h == "memhost") {
        return Box::new(MemSession::new());
    }
    match EngineSession::start() {
        Ok(s) => Box::new(s),
        Err(e) => {
            eprintln!("the in-memory engine instance did not start ({e}); using the executor's test host");
            Box::new(MemSession::new())
        }
    }
}

/// The error a record gets: SQL Server's message text, or the harness's.
#[derive(Debug, Clone)]
pub struct SltError(pub String);

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SltError {}

/// State shared between a file's loop, its database adapter and its watchdog.
#[derive(Default)]
struct Shared {
    /// The column types the running query record declares.
    types: Mutex<Vec<char>>,
    /// Milliseconds since `epoch` when the running batch started; 0 when none runs.
    started_ms: AtomicU64,
    /// Set by the watchdog when it cancelled the running batch.
    timed_out: AtomicBool,
}

/// The `sqllogictest::DB` adapter: runs SQL as one batch and turns the collected result
/// into sqllogictest's strings.
pub struct MesquiteDb {
    session: Box<dyn Embedded>,
    shared: Arc<Shared>,
    epoch: Instant,
    cancel: Arc<AtomicBool>,
}

impl MesquiteDb {
    fn new(session: Box<dyn Embedded>, shared: Arc<Shared>, epoch: Instant) -> MesquiteDb {
        let cancel = session.cancel_flag();
        MesquiteDb { session, shared, epoch, cancel }
    }
}

impl DB for MesquiteDb {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let mut sink = CollectSink::default();
        self.cancel.store(false, Ordering::SeqCst);
        self.shared.timed_out.store(false, Ordering::SeqCst);
        let now = self.epoch.elapsed().as_millis() as u64;
        self.shared.started_ms.store(now.max(1), Ordering::SeqCst);
        self.session.run(sql, &mut sink);
        self.shared.started_ms.store(0, Ordering::SeqCst);
        if self.shared.timed_out.load(Ordering::SeqCst) {
            return Err(SltError("timed out (the batch was cancelled)".into()));
        }
        if let Some(e) = sink.errors().first() {
            return Err(SltError(e.to_string().replace('\n', ": ")));
        }
        let declared = self.shared.types.lock().map(|t| t.clone()).unwrap_or_default();
        if let Some((columns, rows)) = sink.result_sets().into_iter().next() {
            let kinds: Vec<char> = (0..columns.len())
                .map(|i| declared.get(i).copied().unwrap_or_else(|| natural_kind(&columns[i].ty)))
                .collect();
            let types = kinds.iter().map(|&k| column_type(k)).collect();
            let rows = rows.iter().map(|r| r.iter().zip(&kinds).map(|(v, &k)| format_value(v, k)).collect()).collect();
            return Ok(DBOutput::Rows { types, rows });
        }
        let count = sink
            .events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Done(d) => d.row_count,
                _ => None,
            })
            .unwrap_or(0);
        Ok(DBOutput::StatementComplete(count))
    }

    fn engine_name(&self) -> &str {
        ENGINE_NAME
    }
}

fn column_type(kind: char) -> DefaultColumnType {
    match kind {
        'I' => DefaultColumnType::Integer,
        'R' => DefaultColumnType::FloatingPoint,
        'T' => DefaultColumnType::Text,
        _ => DefaultColumnType::Any,
    }
}

/// The kind a column prints as when the record declares none.
fn natural_kind(ty: &SqlType) -> char {
    match ty {
        SqlType::Bit | SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt => 'I',
        SqlType::Real | SqlType::Float | SqlType::Decimal { .. } | SqlType::Numeric { .. } => 'R',
        SqlType::Money | SqlType::SmallMoney => 'R',
        _ => 'T',
    }
}

/// The value as an integer, as SQLite's `sqlite3_column_int64` gives it: reals and
/// decimals truncated toward zero, text by its leading number (0 when there is none).
fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Bit(b) => i64::from(*b),
        Value::TinyInt(x) => i64::from(*x),
        Value::SmallInt(x) => i64::from(*x),
        Value::Int(x) => i64::from(*x),
        Value::BigInt(x) => *x,
        Value::Decimal { value, scale, .. } => {
            let d = 10i128.checked_pow(u32::from(*scale)).unwrap_or(i128::MAX);
            (value / d).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        }
        Value::Money(m) => m / 10_000,
        // `as` saturates, as SQLite does for out-of-range reals.
        Value::Float(f) => *f as i64,
        Value::Real(f) => *f as i64,
        Value::String(s) => leading_number(s) as i64,
        _ => 0,
    }
}

/// The value as a real, as `sqlite3_column_double` gives it.
fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Decimal { value, scale, .. } => *value as f64 / 10f64.powi(i32::from(*scale)),
        Value::Money(m) => *m as f64 / 10_000.0,
        Value::Float(f) => *f,
        Value::Real(f) => f64::from(*f),
        Value::String(s) => leading_number(s),
        other => as_i64(other) as f64,
    }
}

/// The longest prefix of `s` (after leading spaces) that reads as a number, else 0.
fn leading_number(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    for (i, c) in t.char_indices() {
        match c {
            '+' | '-' if i == 0 => {}
            '0'..='9' => seen_digit = true,
            '.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        end = i + c.len_utf8();
    }
    if !seen_digit {
        return 0.0;
    }
    t[..end].trim_end_matches('.').parse().unwrap_or(0.0)
}

/// A value in SQLite sqllogictest's text form for a column of kind `I`, `R` or `T`.
pub fn format_value(v: &Value, kind: char) -> String {
    if matches!(v, Value::Null) {
        return "NULL".to_string();
    }
    match kind {
        'I' => as_i64(v).to_string(),
        'R' => format!("{:.3}", as_f64(v)),
        _ => {
            let text = match v {
                // Integers and text as they are; reals as SQLite's text of a real would be
                // (good enough: `T` columns of reals are rare in the corpus).
                Value::Float(f) => format!("{f}"),
                other => other.to_string(),
            };
            if text.is_empty() {
                return "(empty)".to_string();
            }
            text.chars().map(|c| if (' '..='~').contains(&c) { c } else { '@' }).collect()
        }
    }
}

/// Rewrites a corpus file for the parser (see the module doc): strips `# comments` after
/// conditions, and resolves `halt` records under conditions for our engine.
pub fn preprocess(script: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    // Condition lines seen since the last blank or record line, by index into `out`.
    let mut pending_conditions: Vec<usize> = Vec::new();
    for line in script.lines() {
        let trimmed = line.trim_end();
        let head = trimmed.split_whitespace().next().unwrap_or("");
        match head {
            "onlyif" | "skipif" => {
                let cond = trimmed.split('#').next().unwrap_or("").trim_end().to_string();
                pending_conditions.push(out.len());
                out.push(cond);
            }
            "halt" if trimmed == "halt" => {
                let applies = pending_conditions.iter().all(|&i| condition_applies(&out[i]));
                // The conditions belonged to the halt: drop them so they do not leak onto
                // the next record.
                for &i in pending_conditions.iter().rev() {
                    out.remove(i);
                }
                pending_conditions.clear();
                if applies {
                    out.push("halt".to_string());
                    break;
                }
            }
            _ => {
                pending_conditions.clear();
                out.push(line.to_string());
            }
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Whether a condition line lets the next record run on this engine.
fn condition_applies(line: &str) -> bool {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("onlyif"), Some(label)) => label == ENGINE_NAME,
        (Some("skipif"), Some(label)) => label != ENGINE_NAME,
        _ => true,
    }
}

fn skipped(conditions: &[Condition]) -> bool {
    conditions.iter().any(|c| match c {
        Condition::OnlyIf { label } => label != ENGINE_NAME,
        Condition::SkipIf { label } => label == ENGINE_NAME,
    })
}

/// One entry of the expected-failure list.
#[derive(Debug, Clone)]
pub struct ExpectedFailure {
    pub selector: Selector,
    pub reason: String,
    /// Line in the list file, for messages.
    pub line: usize,
}

#[derive(Debug, Clone)]
pub enum Selector {
    /// `path:line`: the record whose keyword line is `line`.
    Record { path: String, line: u32 },
    /// `path` or a glob with `*`: every record of matching files.
    Files(String),
    /// `sql~TEXT`: every record whose SQL contains TEXT (ASCII case-insensitive).
    Sql(String),
}

/// The expected-failure list: `SELECTOR -- REASON` per line, `#` comments. Every entry
/// needs a reason, so that the list says why Mesquite differs from SQLite there.
pub fn parse_expected_failures(text: &str) -> Result<Vec<ExpectedFailure>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((selector, reason)) = line.split_once(" -- ") else {
            return Err(format!("line {}: expected `SELECTOR -- REASON`, got {line:?}", i + 1));
        };
        let (selector, reason) = (selector.trim(), reason.trim());
        if reason.is_empty() {
            return Err(format!("line {}: no reason given", i + 1));
        }
        let selector = if let Some(sql) = selector.strip_prefix("sql~") {
            Selector::Sql(sql.to_ascii_lowercase())
        } else if let Some((path, n)) = selector.rsplit_once(':').and_then(|(p, n)| Some((p, n.parse().ok()?))) {
            Selector::Record { path: path.to_string(), line: n }
        } else {
            Selector::Files(selector.to_string())
        };
        out.push(ExpectedFailure { selector, reason: reason.to_string(), line: i + 1 });
    }
    Ok(out)
}

/// `*` matches any run of characters (including `/`); everything else literally.
fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

fn listed<'a>(list: &'a [ExpectedFailure], path: &str, line: u32, sql: &str) -> Option<&'a ExpectedFailure> {
    let sql_lower = sql.to_ascii_lowercase();
    list.iter().find(|e| match &e.selector {
        Selector::Record { path: p, line: l } => p == path && *l == line,
        Selector::Files(g) => glob_match(g, path),
        Selector::Sql(s) => sql_lower.contains(s.as_str()),
    })
}

/// A record that failed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub line: u32,
    pub message: String,
    /// The reason from the expected-failure list, when the failure is listed.
    pub listed: Option<String>,
}

/// What happened to one file's records.
#[derive(Debug, Clone, Default)]
pub struct FileReport {
    /// Relative to the corpus root, with `/`.
    pub path: String,
    pub passed: u64,
    /// Passed although the expected-failure list names them (the entry may go).
    pub passed_listed: u64,
    pub failures: Vec<Failure>,
    pub skipped: u64,
    /// Records left when the time budget ran out.
    pub not_run: u64,
    pub elapsed: Duration,
    /// The file could not be read or parsed.
    pub error: Option<String>,
}

impl FileReport {
    pub fn unexpected(&self) -> impl Iterator<Item = &Failure> {
        self.failures.iter().filter(|f| f.listed.is_none())
    }
}

/// Run settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Longest a single record may run before its batch is cancelled.
    pub record_timeout: Duration,
    /// When to stop starting records (the rest count as not run).
    pub deadline: Option<Instant>,
    /// Print a line to stderr as each file finishes.
    pub progress: bool,
}

/// Waits for panics raised while running records to be reported as failures rather than
/// printed: installs (once) a panic hook that keeps the message for the current thread.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_record = IN_RECORD.with(|f| f.get());
            if in_record {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".to_string());
                let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(format!("panic: {msg}{at}")));
            } else {
                default(info);
            }
        }));
    });
}

thread_local! {
    static IN_RECORD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC_MESSAGE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs one corpus file on a fresh session made by `make_session`.
pub fn run_file(
    root: &Path,
    path: &Path,
    list: &[ExpectedFailure],
    settings: &Settings,
    make_session: &dyn Fn() -> Box<dyn Embedded>,
) -> FileReport {
    quiet_panics();
    let started = Instant::now();
    let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/");
    let mut report = FileReport { path: rel.clone(), ..FileReport::default() };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => preprocess(&t),
        Err(e) => {
            report.error = Some(format!("cannot read: {e}"));
            return report;
        }
    };
    let records: Vec<Record<DefaultColumnType>> = match sqllogictest::parse_with_name(&text, rel.as_str()) {
        Ok(r) => r,
        Err(e) => {
            report.error = Some(format!("cannot parse: {e}"));
            return report;
        }
    };

    let shared = Arc::new(Shared::default());
    let epoch = Instant::now();
    let session = make_session();
    let cancel = session.cancel_flag();
    let mut db = Some(MesquiteDb::new(session, Arc::clone(&shared), epoch));
    // The runner asks for a connection once (the corpus uses only the default one).
    let mut runner = Runner::new(move || {
        let db = db.take().ok_or_else(|| SltError("one connection per file".into()));
        async move { db }
    });
    // The corpus was generated with SQLite's `-ht 8`: files without a `hash-threshold`
    // record still expect hashes for results of more than 8 values.
    runner.with_hash_threshold(8);
    if runner.run(Record::Control(Control::ResultMode(ResultMode::ValueWise))).is_err() {
        report.error = Some("the runner refused the result mode".into());
        return report;
    }

    // The watchdog cancels a batch that runs past the record timeout.
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (shared, done, cancel) = (Arc::clone(&shared), Arc::clone(&done), Arc::clone(&cancel));
        let limit = settings.record_timeout.as_millis() as u64;
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
                let s = shared.started_ms.load(Ordering::SeqCst);
                if s != 0 && (epoch.elapsed().as_millis() as u64).saturating_sub(s) > limit {
                    shared.timed_out.store(true, Ordering::SeqCst);
                    cancel.store(true, Ordering::SeqCst);
                }
            }
        })
    };

    let mut stop = false;
    for record in records {
        let (line, sql, conditions, declared) = match &record {
            Record::Statement { loc, sql, conditions, .. } => (loc.line(), sql.clone(), conditions.clone(), Vec::new()),
            Record::Query { loc, sql, conditions, expected, .. } => {
                let declared = match expected {
                    QueryExpect::Results { types, .. } => types.iter().map(sqllogictest::ColumnType::to_char).collect(),
                    _ => Vec::new(),
                };
                (loc.line(), sql.clone(), conditions.clone(), declared)
            }
            Record::Halt { .. } => break,
            _ => {
                // Controls, hash thresholds, comments: the runner keeps their state.
                let _ = runner.run(record);
                continue;
            }
        };
        if stop || settings.deadline.is_some_and(|d| Instant::now() >= d) {
            stop = true;
            report.not_run += 1;
            continue;
        }
        if skipped(&conditions) {
            report.skipped += 1;
            continue;
        }
        if let Ok(mut t) = shared.types.lock() {
            *t = declared;
        }
        IN_RECORD.with(|f| f.set(true));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(record)));
        IN_RECORD.with(|f| f.set(false));
        let listed_reason = || listed(list, &rel, line, &sql).map(|e| e.reason.clone());
        match outcome {
            Ok(Ok(_)) => {
                if listed_reason().is_some() {
                    report.passed_listed += 1;
                }
                report.passed += 1;
            }
            Ok(Err(e)) => {
                let message = e.display(false).to_string();
                let message = message.lines().filter(|l| !l.trim().is_empty()).take(12).collect::<Vec<_>>().join(" | ");
                report.failures.push(Failure { line, message, listed: listed_reason() });
            }
            Err(_) => {
                let message = PANIC_MESSAGE.with(|m| m.borrow_mut().take()).unwrap_or_else(|| "panic".to_string());
                report.failures.push(Failure { line, message, listed: listed_reason() });
            }
        }
    }
    done.store(true, Ordering::SeqCst);
    let _ = watchdog.join();
    report.elapsed = started.elapsed();
    report
}

/// The corpus root: `$MESQUITE_SLT_DIR`, else `shared/sqllogictest` beside the repository.
pub fn corpus_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MESQUITE_SLT_DIR") {
        return PathBuf::from(d);
    }
    workspace_root().join("../shared/sqllogictest")
}

/// The repository root (where the workspace's Cargo.toml is).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The expected-failure list of the repository.
pub fn expected_failures_path() -> PathBuf {
    workspace_root().join("tests/slt/expected-failures.txt")
}

/// Every `*.test` file under `root`, sorted by path.
pub fn corpus_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "test") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out.sort();
    out
}

/// Runs `files` on `jobs` threads, each file on a fresh in-memory session. Reports come
/// back in the order of `files`.
pub fn run_corpus(
    root: &Path,
    files: &[PathBuf],
    list: &[ExpectedFailure],
    settings: &Settings,
    jobs: usize,
) -> Vec<FileReport> {
    let next = AtomicU64::new(0);
    let results: Mutex<Vec<(usize, FileReport)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                let Some(path) = files.get(i) else { break };
                let report = run_file(root, path, list, settings, &new_session);
                if settings.progress {
                    eprintln!(
                        "{}: {} passed, {} failed, {} skipped, {} not run in {:.1} s",
                        report.path,
                        report.passed,
                        report.failures.len(),
                        report.skipped,
                        report.not_run,
                        report.elapsed.as_secs_f64()
                    );
                }
                if let Ok(mut r) = results.lock() {
                    r.push((i, report));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Totals of a group of files.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub files: u64,
    pub passed: u64,
    pub failed_listed: u64,
    pub failed_unexpected: u64,
    pub passed_listed: u64,
    pub skipped: u64,
    pub not_run: u64,
    pub file_errors: u64,
}

impl Totals {
    fn add(&mut self, r: &FileReport) {
        self.files += 1;
        self.passed += r.passed;
        self.passed_listed += r.passed_listed;
        let unexpected = r.unexpected().count() as u64;
        self.failed_unexpected += unexpected;
        self.failed_listed += r.failures.len() as u64 - unexpected;
        self.skipped += r.skipped;
        self.not_run += r.not_run;
        self.file_errors += u64::from(r.error.is_some());
    }

    /// Records that ran.
    pub fn ran(&self) -> u64 {
        self.passed + self.failed_listed + self.failed_unexpected
    }
}

/// Totals per directory (the parent of each file's path; `.` for the root) and overall.
pub fn totals(reports: &[FileReport]) -> (BTreeMap<String, Totals>, Totals) {
    let mut per_dir: BTreeMap<String, Totals> = BTreeMap::new();
    let mut all = Totals::default();
    for r in reports {
        let dir = match r.path.rsplit_once('/') {
            Some((d, _)) => d.to_string(),
            None => ".".to_string(),
        };
        per_dir.entry(dir).or_default().add(r);
        all.add(r);
    }
    (per_dir, all)
}

/// The pass-rate table printed by the test and the command.
pub fn summary_table(reports: &[FileReport]) -> String {
    let (per_dir, all) = totals(reports);
    let mut out = format!(
        "{:<28} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}\n",
        "directory", "files", "ran", "passed", "listed", "failed", "skipped", "not run", "pass %"
    );
    let row = |name: &str, t: &Totals| {
        let rate = if t.ran() == 0 { 0.0 } else { 100.0 * t.passed as f64 / t.ran() as f64 };
        format!(
            "{:<28} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6.1}%\n",
            name,
            t.files,
            t.ran(),
            t.passed,
            t.failed_listed,
            t.failed_unexpected,
            t.skipped,
            t.not_run,
            rate
        )
    };
    for (dir, t) in &per_dir {
        out.push_str(&row(dir, t));
    }
    out.push_str(&row("all", &all));
    out.push_str(
        "(listed: failed as the expected-failure list says; failed: not listed; not run: the time budget ran out)\n",
    );
    if all.passed_listed > 0 {
        out.push_str(&format!(
            "{} listed record(s) passed: their entries in tests/slt/expected-failures.txt may be too broad or stale\n",
            all.passed_listed
        ));
    }
    for r in reports {
        if let Some(e) = &r.error {
            out.push_str(&format!("{}: {e}\n", r.path));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_value_formats() {
        assert_eq!(format_value(&Value::Int(-7), 'I'), "-7");
        assert_eq!(format_value(&Value::Float(2.999), 'I'), "2");
        assert_eq!(format_value(&Value::Decimal { value: -1234, precision: 5, scale: 2 }, 'I'), "-12");
        assert_eq!(format_value(&Value::Int(3), 'R'), "3.000");
        assert_eq!(format_value(&Value::Float(1.23456), 'R'), "1.235");
        assert_eq!(format_value(&Value::Decimal { value: 15, precision: 5, scale: 1 }, 'R'), "1.500");
        assert_eq!(format_value(&Value::Null, 'R'), "NULL");
        assert_eq!(format_value(&Value::String(String::new()), 'T'), "(empty)");
        assert_eq!(format_value(&Value::String("a\tb".into()), 'T'), "a@b");
        assert_eq!(format_value(&Value::String("12abc".into()), 'I'), "12");
        assert_eq!(format_value(&Value::String("x".into()), 'I'), "0");
        assert_eq!(format_value(&Value::Int(5), 'T'), "5");
    }

    #[test]
    fn preprocessing_conditions_and_halts() {
        let src = "onlyif mysql # DIV for integer division\nquery I\nSELECT 1\n----\n1\n\nonlyif oracle\nhalt\n\nskipif mssql # not compatible\nstatement ok\nX\n\nonlyif mssql\nhalt\n\nstatement ok\nY\n";
        let out = preprocess(src);
        assert!(out.starts_with("onlyif mysql\nquery I\n"), "{out}");
        assert!(!out.contains("oracle"), "{out}");
        assert!(out.contains("skipif mssql\nstatement ok\nX"), "{out}");
        assert!(out.trim_end().ends_with("halt"), "{out}");
        assert!(!out.contains('Y'), "{out}");
    }

    #[test]
    fn expected_failure_list() {
        let list = parse_expected_failures(
            "# comment\nselect1.test:12 -- integer AVG\nindex/*/10/*.test -- whole files\nsql~avg( -- any AVG\n",
        )
        .unwrap();
        assert_eq!(list.len(), 3);
        assert!(listed(&list, "select1.test", 12, "SELECT 1").is_some());
        assert!(listed(&list, "select1.test", 13, "SELECT 1").is_none());
        assert!(listed(&list, "index/in/10/slt_good_3.test", 1, "x").is_some());
        assert!(listed(&list, "select2.test", 1, "SELECT AVG(a) FROM t").is_some());
        assert!(parse_expected_failures("select1.test:3\n").is_err());
        assert!(parse_expected_failures("select1.test:3 -- \n").is_err());
        assert!(glob_match("a*c", "abbc") && !glob_match("a*c", "abd") && glob_match("*", "x"));
    }

    /// A session that answers every query with one integer, to check the adapter and the
    /// runner end to end without the executor.
    struct Answer42(Arc<AtomicBool>);

    impl Embedded for Answer42 {
        fn run(&mut self, text: &str, sink: &mut dyn ResultSink) {
            use sql::results::{ColumnInfo, Done, DoneKind};
            let done = |n| Done { kind: DoneKind::Statement, row_count: n, error: false, in_xact: false };
            if text.starts_with("SELECT") {
                let _ = sink.columns(&[ColumnInfo::new("", SqlType::Int, false)]);
                let _ = sink.row(&[Value::Int(42)]);
                let _ = sink.done(done(Some(1)));
            } else {
                let _ = sink.done(done(None));
            }
        }
        fn cancel_flag(&self) -> Arc<AtomicBool> {
            Arc::clone(&self.0)
        }
    }

    #[test]
    fn runs_records_and_counts_them() {
        let dir = std::env::temp_dir().join(format!("mesquite-slt-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.test");
        std::fs::write(
            &file,
            "statement ok\nCREATE TABLE t(a INT)\n\nquery I nosort\nSELECT a FROM t\n----\n42\n\nquery R nosort\nSELECT 1\n----\n42.000\n\nquery I nosort\nSELECT 2\n----\n7\n\nskipif mssql\nquery I nosort\nSELECT 3\n----\n9\n",
        )
        .unwrap();
        let list = parse_expected_failures("t.test:14 -- known").unwrap();
        let settings = Settings { record_timeout: Duration::from_secs(5), deadline: None, progress: false };
        let r = run_file(&dir, &file, &list, &settings, &|| Box::new(Answer42(Arc::new(AtomicBool::new(false)))));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(r.error.is_none(), "{:?}", r.error);
        assert_eq!((r.passed, r.failures.len(), r.skipped), (3, 1, 1), "{r:?}");
        assert_eq!(r.failures[0].line, 14);
        assert_eq!(r.failures[0].listed.as_deref(), Some("known"));
        assert_eq!(r.unexpected().count(), 0);
    }
}
