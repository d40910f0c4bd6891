//! `mesquite-slt`: runs the sqllogictest corpus (or the files matching the arguments) and
//! prints the pass rate per directory. `scripts/slt.sh` runs it in release mode.

use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: mesquite-slt [--jobs N] [--budget SECS] [--timeout SECS] [--failures] [--list] [FILTER]...

Runs the sqllogictest corpus ($MESQUITE_SLT_DIR, else shared/sqllogictest beside the
repository) against in-memory instances and prints pass rates per directory. FILTER
keeps the files whose path contains it.

  --jobs N        files run in parallel (default: the number of cores)
  --budget SECS   stop starting records after SECS seconds (default: none)
  --timeout SECS  cancel a record's batch after SECS seconds (default 10)
  --failures      print every failure not in tests/slt/expected-failures.txt
  --list          print those failures as expected-failure entries to fill in
  --strict        exit 1 if any failure is not listed";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut budget = None;
    let mut timeout = Duration::from_secs(10);
    let (mut show, mut list_mode, mut strict) = (false, false, false);
    let mut filters = Vec::new();
    let mut args = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> Result<u64, String> {
        v.and_then(|s| s.parse().ok()).ok_or_else(|| format!("{what} needs a number\n{USAGE}"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--jobs" => jobs = num(args.next(), "--jobs")? as usize,
            "--budget" => budget = Some(Duration::from_secs(num(args.next(), "--budget")?)),
            "--timeout" => timeout = Duration::from_secs(num(args.next(), "--timeout")?),
            "--failures" => show = true,
            "--list" => list_mode = true,
            "--strict" => strict = true,
            "-h" | "--help" => return Err(USAGE.to_string()),
            f if !f.starts_with('-') => filters.push(f.to_string()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let root = slt::corpus_dir();
    let files: Vec<_> = slt::corpus_files(&root)
        .into_iter()
        .filter(|p| filters.is_empty() || filters.iter().any(|f| p.to_string_lossy().contains(f.as_str())))
        .collect();
    if files.is_empty() {
        return Err(format!("no .test files under {} (set MESQUITE_SLT_DIR)", root.display()));
    }
    let list_text = std::fs::read_to_string(slt::expected_failures_path()).unwrap_or_default();
    let list = slt::parse_expected_failures(&list_text).map_err(|e| format!("expected-failures.txt: {e}"))?;
    let started = Instant::now();
    let settings = slt::Settings { record_timeout: timeout, deadline: budget.map(|b| started + b), progress: true };
    let reports = slt::run_corpus(&root, &files, &list, &settings, jobs);
    for r in &reports {
        for f in r.unexpected() {
            if list_mode {
                println!("{}:{} -- FIXME reason ({})", r.path, f.line, f.message);
            } else if show {
                println!("{}:{}: {}", r.path, f.line, f.message);
            }
        }
    }
    print!("{}", slt::summary_table(&reports));
    println!("{} files in {:.1} s", reports.len(), started.elapsed().as_secs_f64());
    let (_, all) = slt::totals(&reports);
    Ok(if strict && (all.failed_unexpected > 0 || all.file_errors > 0) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
