//! Script tests: every `tests/scripts/x.sql` runs through `mesquite sql --memory -i x.sql`
//! (a fresh in-memory instance per script, the CLI's own batch splitting and sqlcmd-style
//! output) and again through `mesquite sql -d DIR -i x.sql` on a fresh data directory on
//! disk; both outputs must equal `x.expected`.
//!
//! - Lines are compared without trailing white space (sqlcmd pads every column; expected
//!   files need not) and without trailing blank lines.
//! - A script's first line may be `-- mesquite-sql: ARGS` to add command-line options
//!   (`-b`, `-e`). A non-zero exit code is part of the output, as a last line
//!   `-- exit code N`.
//! - Scripts named in `tests/scripts/PENDING` (one name a line, `#` comments) run too, but
//!   a mismatch is reported, not failed: they are the spec of features not built yet. The
//!   test says when a pending script starts to match, so its entry can go.
//! - `MESQUITE_BLESS=1` rewrites the expected files of the scripts that are not pending
//!   (and writes missing ones); `MESQUITE_BLESS=all` rewrites pending ones too. Pending
//!   expected files are hand-written from SQL Server's behaviour, so blessing them would
//!   replace the spec with whatever the engine prints today.
//! - `MESQUITE_SCRIPTS=a,b` runs only the scripts whose names contain `a` or `b`;
//!   `MESQUITE_SCRIPT_TIMEOUT` (seconds, default 60) bounds each script's run;
//!   `MESQUITE_SCRIPTS_STORAGE=memory|disk` runs one storage only (default both).

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scripts")
}

/// Trailing white space off every line, trailing blank lines off the end, LF endings.
fn normalize(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().map(|l| l.trim_end()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn pending_list(dir: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(dir.join("PENDING")).unwrap_or_default();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.trim_end_matches(".sql").to_string())
        .collect()
}

/// The extra options of a `-- mesquite-sql: ...` first line.
fn extra_args(script: &str) -> Vec<String> {
    let first = script.lines().next().unwrap_or("");
    match first.trim().strip_prefix("-- mesquite-sql:") {
        Some(rest) => rest.split_whitespace().map(str::to_string).collect(),
        None => Vec::new(),
    }
}

struct Run {
    output: String,
    stderr: String,
}

/// Where a script's instance keeps its databases.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Storage {
    Memory,
    Disk,
}

/// Runs one script through the binary, killing it after `timeout`.
fn run_script(path: &Path, script: &str, timeout: Duration, storage: Storage) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mesquite"));
    cmd.arg("sql");
    let data_dir = match storage {
        Storage::Memory => {
            cmd.arg("--memory");
            None
        }
        Storage::Disk => {
            let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let dir = std::env::temp_dir().join(format!("mesquite-script-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            cmd.arg("-d").arg(&dir);
            Some(dir)
        }
    };
    cmd.arg("-i").arg(path).args(extra_args(script));
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Run { output: String::new(), stderr: format!("cannot start mesquite: {e}") },
    };
    // Drain both pipes on threads so a chatty script cannot block on a full pipe.
    let mut out_pipe = child.stdout.take().expect("stdout was piped");
    let mut err_pipe = child.stderr.take().expect("stderr was piped");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                timed_out = true;
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    let mut output = String::from_utf8_lossy(&stdout).into_owned();
    let mut stderr = String::from_utf8_lossy(&stderr).into_owned();
    if timed_out {
        stderr.push_str(&format!("\n(killed after {} s)", timeout.as_secs()));
    }
    if let Some(dir) = data_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    match status.and_then(|s| s.code()) {
        Some(0) => {}
        Some(code) => output.push_str(&format!("\n-- exit code {code}\n")),
        None => output.push_str("\n-- killed\n"),
    }
    Run { output, stderr }
}

/// A unified-style diff of the first differing region: common head and tail are skipped,
/// two lines of context are kept, at most 40 changed lines are shown.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let head = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let tail = e[head..].iter().rev().zip(a[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (e_mid, a_mid) = (&e[head..e.len() - tail], &a[head..a.len() - tail]);
    let ctx = head.saturating_sub(2);
    let mut out =
        format!("@@ -{},{} +{},{} @@\n", ctx + 1, e_mid.len() + head - ctx, ctx + 1, a_mid.len() + head - ctx);
    for l in &e[ctx..head] {
        out.push_str(&format!(" {l}\n"));
    }
    const LIMIT: usize = 40;
    for l in e_mid.iter().take(LIMIT) {
        out.push_str(&format!("-{l}\n"));
    }
    if e_mid.len() > LIMIT {
        out.push_str(&format!("-... ({} more)\n", e_mid.len() - LIMIT));
    }
    for l in a_mid.iter().take(LIMIT) {
        out.push_str(&format!("+{l}\n"));
    }
    if a_mid.len() > LIMIT {
        out.push_str(&format!("+... ({} more)\n", a_mid.len() - LIMIT));
    }
    for l in e[e.len() - tail..].iter().take(2) {
        out.push_str(&format!(" {l}\n"));
    }
    out
}

#[test]
fn scripts() {
    let dir = scripts_dir();
    let pending = pending_list(&dir);
    let bless = std::env::var("MESQUITE_BLESS").unwrap_or_default();
    let filter: Vec<String> = std::env::var("MESQUITE_SCRIPTS")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let timeout =
        Duration::from_secs(std::env::var("MESQUITE_SCRIPT_TIMEOUT").ok().and_then(|s| s.parse().ok()).unwrap_or(60));
    let storages: Vec<Storage> = match std::env::var("MESQUITE_SCRIPTS_STORAGE").unwrap_or_default().as_str() {
        "memory" => vec![Storage::Memory],
        "disk" => vec![Storage::Disk],
        _ => vec![Storage::Memory, Storage::Disk],
    };

    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/scripts exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no scripts in {}", dir.display());

    let names: BTreeSet<String> =
        paths.iter().filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned())).collect();
    for p in &pending {
        assert!(names.contains(p), "tests/scripts/PENDING names {p}, which has no script");
    }

    let (mut matched, mut failed, mut pending_differ) = (Vec::new(), Vec::new(), Vec::new());
    let mut now_pass = Vec::new();
    for path in &paths {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let is_pending = pending.contains(&name);
        let script = std::fs::read_to_string(path).expect("script is readable UTF-8");
        let expected_path = path.with_extension("expected");
        // The first storage's output is the one compared (and blessed); every other
        // storage must print exactly the same.
        let run = run_script(path, &script, timeout, storages[0]);
        let actual = normalize(&run.output);
        let expected = std::fs::read_to_string(&expected_path).ok().map(|e| normalize(&e));
        if !is_pending {
            for &other in &storages[1..] {
                let again = run_script(path, &script, timeout, other);
                let other_out = normalize(&again.output);
                if other_out != actual {
                    let mut report = format!(
                        "--- {name} ({:?})\n+++ {name} ({other:?})\n{}",
                        storages[0],
                        diff(&actual, &other_out)
                    );
                    if !again.stderr.trim().is_empty() {
                        report.push_str(&format!("stderr:\n{}\n", again.stderr.trim_end()));
                    }
                    failed.push((format!("{name} ({other:?})"), report));
                }
            }
        }

        let may_bless = bless == "all" || (bless == "1" && (!is_pending || expected.is_none()));
        if may_bless && expected.as_deref() != Some(actual.as_str()) {
            std::fs::write(&expected_path, &actual).expect("write expected file");
            println!("blessed {name}.expected");
            matched.push(name);
            continue;
        }
        match expected {
            Some(e) if e == actual => {
                if is_pending {
                    now_pass.push(name.clone());
                }
                matched.push(name);
            }
            Some(e) => {
                let mut report = format!("--- {name}.expected\n+++ {name} (actual)\n{}", diff(&e, &actual));
                if !run.stderr.trim().is_empty() {
                    report.push_str(&format!("stderr:\n{}\n", run.stderr.trim_end()));
                }
                if is_pending {
                    pending_differ.push((name, report));
                } else {
                    failed.push((name, report));
                }
            }
            None => {
                let report = format!("{name}: no {name}.expected (write it, or run with MESQUITE_BLESS=1)\n");
                if is_pending {
                    pending_differ.push((name, report));
                } else {
                    failed.push((name, report));
                }
            }
        }
    }

    // Pending mismatches are expected while features are missing: list them briefly, and
    // show the diffs only when asked.
    let verbose = std::env::var("MESQUITE_SCRIPTS_VERBOSE").is_ok_and(|v| v == "1");
    for (name, report) in &pending_differ {
        if verbose {
            println!("pending (differs): {name}\n{report}");
        } else {
            println!("pending (differs): {name}");
        }
    }
    for name in &now_pass {
        println!("pending but matches now: {name} (remove it from tests/scripts/PENDING)");
    }
    for (name, report) in &failed {
        println!("FAILED: {name}\n{report}");
    }
    println!(
        "script tests: {} match, {} differ, {} pending and differ (MESQUITE_SCRIPTS_VERBOSE=1 shows their diffs)",
        matched.len(),
        failed.len(),
        pending_differ.len()
    );
    assert!(
        failed.is_empty(),
        "{} script(s) differ from their expected output: {}",
        failed.len(),
        failed.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
    );
}

#[test]
fn diff_shows_the_changed_region() {
    let d = diff("a\nb\nc\nd\ne\n", "a\nb\nX\nd\ne\n");
    assert_eq!(d, "@@ -1,3 +1,3 @@\n a\n b\n-c\n+X\n d\n e\n");
    assert_eq!(normalize("x  \r\ny\n\n\n"), "x\ny\n");
}
