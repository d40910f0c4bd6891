//! The `mesquite` binary: `serve` (the instance), and later `sql`, `stress`, `replay`,
//! `xe` and admin commands.
//!
//! Today `serve` prepares the instance's data directory (lock file, master database
//! files) and reports; the TDS listener on 127.0.0.1:1433 is built by issue 5.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FileSystem, OsFs};
use storage::{BufferPool, Database};

const USAGE: &str = "usage: mesquite serve [--data-dir DIR] [--memory-limit-mb N]
       mesquite version

The data directory defaults to $MESQUITE_DATA_DIR, else $XDG_DATA_HOME/mesquite,
else ~/.local/share/mesquite.";

fn default_data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MESQUITE_DATA_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(d).join("mesquite");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/mesquite")
}

/// Holds an exclusive lock on `<data>/mesquite.lock` for the life of the process, so a
/// second instance on the same directory fails clearly instead of corrupting files.
struct DataDirLock {
    _file: std::fs::File,
}

fn lock_data_dir(dir: &std::path::Path) -> Result<DataDirLock, String> {
    use std::os::unix::io::AsRawFd;
    let path = dir.join("mesquite.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: flock on a valid descriptor we own.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        return Err(format!(
            "another Mesquite instance is using the data directory {} (lock file {} is held)",
            dir.display(),
            path.display()
        ));
    }
    Ok(DataDirLock { _file: file })
}

fn serve(args: &[String]) -> Result<(), String> {
    let mut data_dir = default_data_dir();
    let mut memory_mb: u64 = 1024;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data-dir" => data_dir = PathBuf::from(it.next().ok_or("--data-dir needs a value")?),
            "--memory-limit-mb" => {
                memory_mb =
                    it.next().ok_or("--memory-limit-mb needs a value")?.parse().map_err(|_| "bad --memory-limit-mb")?
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let started = std::time::Instant::now();
    std::fs::create_dir_all(&data_dir).map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    let _lock = lock_data_dir(&data_dir)?;
    let pool = BufferPool::with_memory_limit(memory_mb * 1024 * 1024);
    pool.start_lazy_writer();
    let fs = OsFs;
    let master = data_dir.join("master.mdf");
    let db = if fs.exists(&master) {
        Database::open(Arc::clone(&pool), &fs, 1, &master).map_err(|e| e.to_sql_error().to_string())?
    } else {
        let spec = FileSpec {
            file_id: 1,
            name: "master".into(),
            path: master.clone(),
            size_pages: 512,
            growth: FileGrowth::Percent(10),
            max_pages: None,
        };
        Database::create(Arc::clone(&pool), &fs, 1, "master", vec![spec]).map_err(|e| e.to_sql_error().to_string())?
    };
    println!(
        "Mesquite {}: data directory {} ready in {:.1} ms (master: {} pages).",
        env!("CARGO_PKG_VERSION"),
        data_dir.display(),
        started.elapsed().as_secs_f64() * 1000.0,
        db.files().get(1).map(|f| f.size_pages()).unwrap_or(0)
    );
    println!("The TDS listener (127.0.0.1:1433) is not built yet (issue 5); exiting after a clean close.");
    db.close().map_err(|e| e.to_sql_error().to_string())?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("version") | Some("--version") => {
            println!("mesquite {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
