//! Runs the whole sqllogictest corpus sample and prints the pass rate per directory.
//!
//! It fails on any failure not in `tests/slt/expected-failures.txt`, on files that cannot
//! be parsed, and on records left unrun when the time budget (`MESQUITE_SLT_BUDGET_SECS`,
//! default 480; the whole sample takes about a minute on 2 cores) runs out.
//! `MESQUITE_SLT_STRICT=0` only reports. `MESQUITE_SLT_JOBS` sets the parallelism
//! (default: the cores).

use std::time::{Duration, Instant};

#[test]
fn corpus() {
    let root = slt::corpus_dir();
    let files = slt::corpus_files(&root);
    if files.is_empty() {
        println!("no sqllogictest corpus at {} (set MESQUITE_SLT_DIR); nothing to run", root.display());
        return;
    }
    let list_text = std::fs::read_to_string(slt::expected_failures_path()).expect("tests/slt/expected-failures.txt");
    let list = slt::parse_expected_failures(&list_text).expect("expected-failures.txt parses");
    let env_num = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let started = Instant::now();
    let settings = slt::Settings {
        record_timeout: Duration::from_secs(env_num("MESQUITE_SLT_TIMEOUT_SECS", 10)),
        deadline: Some(started + Duration::from_secs(env_num("MESQUITE_SLT_BUDGET_SECS", 480))),
        progress: std::env::var("MESQUITE_SLT_PROGRESS").is_ok_and(|v| v == "1"),
    };
    let jobs = env_num("MESQUITE_SLT_JOBS", std::thread::available_parallelism().map(|n| n.get() as u64).unwrap_or(1));
    let reports = slt::run_corpus(&root, &files, &list, &settings, jobs as usize);
    println!("{}", slt::summary_table(&reports));
    println!("{} files in {:.1} s", reports.len(), started.elapsed().as_secs_f64());

    let (_, all) = slt::totals(&reports);
    if !std::env::var("MESQUITE_SLT_STRICT").is_ok_and(|v| v == "0") {
        let mut shown = 0;
        for r in &reports {
            for f in r.unexpected() {
                if shown < 50 {
                    println!("unexpected failure {}:{}: {}", r.path, f.line, f.message);
                }
                shown += 1;
            }
        }
        assert_eq!(all.file_errors, 0, "corpus files failed to load");
        assert_eq!(all.not_run, 0, "the time budget ran out before the corpus finished");
        assert_eq!(all.failed_unexpected, 0, "failures not in tests/slt/expected-failures.txt");
    }
}
