//! The delayed-durability study (seed article "Measure Delayed Durability impact in SQL
//! Server 2016 and later") reproduced in one command, on Mesquite and beside PostgreSQL.
//!
//! Mesquite runs the article's scripts through TDS: two databases (delayed durability
//! disabled / allowed), AddSomeData and DeleteSomeData, the Utility database's file-stats,
//! wait-stats and SPID tables, the four tests at each thread count from the stress runner
//! (SQLQueryStress's role), the shadow tables and the article's analysis query. PostgreSQL
//! runs the same workload (synchronous_commit on / off) from the same runner. Then a
//! one-row-transaction test on both. Prints the article's table, ours, the comparison and
//! the targets; writes JSON and an SVG chart. See docs/durability-study.md.

mod mesquite;
mod model;
mod postgres;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use mesquite::{MesquiteSide, Sizes};
use model::TESTS;
use postgres::PgSide;
use report::Study;

const USAGE: &str = "usage: bench-durability [--threads 8,16] [--iterations N] [--quick] [--out DIR]
                        [--one-row-seconds S] [--memory-mb M] [--mesquite PATH]

  --threads LIST        thread counts, each running the article's four tests (default 8,16)
  --iterations N        AddSomeData/DeleteSomeData iterations per thread, 1000 rows each
                        (default 100; the article's is 1000)
  --quick               a smoke run: 5 iterations, 2 s of one-row transactions
  --out DIR             where the JSON and SVG go (default bench/durability/out)
  --one-row-seconds S   duration of the one-row-transaction test per engine (default 10)
  --memory-mb M         Mesquite's buffer pool and PostgreSQL's shared_buffers (default 1024)
  --mesquite PATH       the mesquite binary (default: beside this one)";

const DEFAULT_ITERATIONS: u64 = 100;

struct Args {
    threads: Vec<usize>,
    iterations: u64,
    out: PathBuf,
    one_row_seconds: f64,
    memory_mb: u64,
    mesquite: PathBuf,
    command: String,
}

fn parse_args() -> Result<Args, String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = vec![8, 16];
    let mut iterations = None;
    let mut quick = false;
    let mut out = PathBuf::from("bench/durability/out");
    let mut one_row_seconds = None;
    let mut memory_mb = 1024;
    let mut mesquite = None;
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "--threads" => {
                let v = value("--threads")?;
                threads = v
                    .split(',')
                    .map(|s| s.trim().parse::<usize>().ok().filter(|&n| n > 0 && n <= 255))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("bad --threads {v}: a comma-separated list of 1..255"))?;
                threads.sort_unstable();
                threads.dedup();
            }
            "--iterations" => {
                let v = value("--iterations")?;
                iterations = Some(v.parse::<u64>().ok().filter(|&n| n > 0).ok_or(format!("bad --iterations {v}"))?);
            }
            "--quick" => quick = true,
            "--out" => out = PathBuf::from(value("--out")?),
            "--one-row-seconds" => {
                let v = value("--one-row-seconds")?;
                one_row_seconds =
                    Some(v.parse::<f64>().ok().filter(|&s| s > 0.0).ok_or(format!("bad --one-row-seconds {v}"))?);
            }
            "--memory-mb" => {
                let v = value("--memory-mb")?;
                memory_mb = v.parse::<u64>().ok().filter(|&m| m >= 64).ok_or(format!("bad --memory-mb {v}"))?;
            }
            "--mesquite" => mesquite = Some(PathBuf::from(value("--mesquite")?)),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    let mesquite = match mesquite {
        Some(p) => p,
        None => std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("mesquite")))
            .ok_or("cannot locate the mesquite binary; pass --mesquite PATH")?,
    };
    if !mesquite.exists() {
        return Err(format!(
            "{} not found: build it (cargo build --release -p mesquite) or pass --mesquite PATH",
            mesquite.display()
        ));
    }
    Ok(Args {
        threads,
        iterations: iterations.unwrap_or(if quick { 5 } else { DEFAULT_ITERATIONS }),
        out,
        one_row_seconds: one_row_seconds.unwrap_or(if quick { 2.0 } else { 10.0 }),
        memory_mb,
        mesquite,
        command: format!("bash bench/durability/run {}", raw.join(" ")).trim_end().to_string(),
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-durability: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    if stress::pg::PgCluster::find_bindir().is_none() {
        return Err("PostgreSQL is not installed: run scripts/bench/setup-postgres.sh".to_string());
    }
    let started = Instant::now();
    let one_row_threads = 16;
    let mut study = Study {
        command: args.command.clone(),
        iterations: args.iterations,
        thread_counts: args.threads.clone(),
        one_row_threads,
        one_row_seconds: args.one_row_seconds,
        mesquite_version: String::new(),
        postgres_version: String::new(),
        notes: Vec::new(),
        failures: Vec::new(),
        results: Vec::new(),
        analysis: None,
        analysis_error: None,
        one_row: Vec::new(),
        pgbench_tps: None,
        pgbench_note: None,
    };

    // Mesquite first, then PostgreSQL: one server at a time, so neither's background
    // writers run during the other's tests.
    eprintln!("mesquite: starting a server ({} MB buffer pool) and creating the article's objects", args.memory_mb);
    let mut m = MesquiteSide::start(&args.mesquite, args.memory_mb)?;
    study.mesquite_version = m.version();
    let sizes = Sizes { data_mb: 512, log_mb: 256, growth_mb: 64 };
    let setup = m.setup(&sizes);
    study.failures.append(&mut m.failures);
    study.notes.append(&mut m.notes);
    if let Err(e) = setup {
        print_failures(&study);
        return Err(e);
    }
    for &t in &args.threads {
        for test in TESTS {
            let r = m.run_test(t, test, args.iterations)?;
            progress(&r);
            study.results.push(r);
        }
        m.shadow(t)?;
    }
    match m.analysis(&args.threads) {
        Ok(rs) => study.analysis = Some(rs),
        Err(e) => study.analysis_error = Some(e),
    }
    eprintln!("mesquite: one-row transactions, {one_row_threads} threads, {} s", args.one_row_seconds);
    study.one_row.push(m.one_row(one_row_threads, args.one_row_seconds)?);
    if !m.server.is_running() {
        return Err(format!("the mesquite server exited:\n{}", m.server.log_tail()));
    }
    drop(m);

    eprintln!("postgresql: starting a private cluster ({} MB shared_buffers)", args.memory_mb);
    let mut p = PgSide::start(args.memory_mb)?;
    study.postgres_version = p.version();
    p.setup()?;
    for &t in &args.threads {
        for test in TESTS {
            let r = p.run_test(t, test, args.iterations)?;
            progress(&r);
            study.results.push(r);
        }
    }
    eprintln!("postgresql: one-row transactions, {one_row_threads} threads, {} s", args.one_row_seconds);
    study.one_row.push(p.one_row(one_row_threads, args.one_row_seconds)?);
    let pgbench_seconds = args.one_row_seconds.round().max(1.0) as u64;
    match p.pgbench(one_row_threads, pgbench_seconds) {
        Ok(tps) => study.pgbench_tps = tps,
        Err(e) => study.pgbench_note = Some(e),
    }
    p.stop()?;
    drop(p);

    print_report(&study, started.elapsed().as_secs_f64());
    write_files(&study, &args.out)
}

fn progress(r: &model::TestResult) {
    eprintln!(
        "{}: test {} ({}), {} threads: {:.2} s, {} rows{}{}",
        r.engine.name(),
        r.test.id,
        r.test.label(),
        r.threads,
        r.total_elapsed.as_secs_f64(),
        r.rows,
        if r.errors > 0 { format!(", {} errors", r.errors) } else { String::new() },
        r.check.as_deref().map(|c| format!(" [{c}]")).unwrap_or_default()
    );
}

fn print_failures(study: &Study) {
    if study.failures.is_empty() {
        println!("Every article statement ran on Mesquite as written.\n");
        return;
    }
    println!("Article statements Mesquite refused (then worked around):");
    for f in &study.failures {
        println!("- {}: {}\n  workaround: {}", f.what, f.error, f.workaround);
    }
    println!();
}

fn print_report(study: &Study, seconds: f64) {
    println!("Delayed durability study: Mesquite beside PostgreSQL");
    println!("  {}", study.mesquite_version);
    println!("  {}", study.postgres_version);
    println!(
        "  {} iterations x 1000 rows per thread, threads {:?}; one-row test {} threads x {} s",
        study.iterations, study.thread_counts, study.one_row_threads, study.one_row_seconds
    );
    println!("  command: {}\n", study.command);
    for n in &study.notes {
        println!("Note: {n}");
    }
    if !study.notes.is_empty() {
        println!();
    }
    print_failures(study);
    let errors: Vec<&model::TestResult> = study.results.iter().filter(|r| r.errors > 0 || r.check.is_some()).collect();
    for r in errors {
        println!(
            "{} test {} at {} threads: {} batch errors{}{}",
            r.engine.name(),
            r.test.id,
            r.threads,
            r.errors,
            r.first_errors.first().map(|e| format!(", first: {e}")).unwrap_or_default(),
            r.check.as_deref().map(|c| format!("; {c}")).unwrap_or_default()
        );
    }
    println!("The article's analysis query, run on Mesquite over its DD.*Threads shadow tables:\n");
    println!("{}", study.analysis_table());
    println!("The same tests computed from the runner's measurements (both engines):\n");
    println!("{}", study.results_table());
    println!("Mesquite beside PostgreSQL (rows/s over the whole test, all threads):\n");
    println!("{}", study.comparison_table());
    println!("{}", study.one_row_table());
    for r in study.one_row.iter().filter(|r| r.errors > 0) {
        println!("{} one-row errors: {}", r.engine.name(), r.first_errors.join(" | "));
    }
    if let Some(n) = &study.pgbench_note {
        println!("pgbench: {n}\n");
    }
    println!("Targets:\n");
    println!("{}", study.targets_table());
    println!("The study took {seconds:.0} s.");
}

fn write_files(study: &Study, out: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let json = out.join("durability.json");
    let svg = out.join("durability.svg");
    std::fs::write(&json, study.to_json()).map_err(|e| format!("writing {}: {e}", json.display()))?;
    std::fs::write(&svg, study.to_svg()).map_err(|e| format!("writing {}: {e}", svg.display()))?;
    println!("Wrote {} and {}", json.display(), svg.display());
    Ok(())
}
