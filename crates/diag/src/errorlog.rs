//! The instance error log: `ERRORLOG` in the log directory, one line per event with a
//! timestamp and a source, archived as `ERRORLOG.1` ... `ERRORLOG.n` at each instance
//! start (and on `sp_cycle_errorlog`), read back by `sp_readerrorlog`.
//!
//! Line shape, as SQL Server writes it (times are UTC; SQL Server uses local time):
//!
//! ```text
//! 2026-11-21 13:33:01.23 Server      Mesquite 0.1.0 starting.
//! 2026-11-21 13:33:01.25 spid9s      Recovery completed for database DDTest (database ID 5) in 1 second(s) ...
//! ```
//!
//! Messages never contain a line break (they are replaced by spaces), so every line is one
//! entry. Until an instance installs a file with [`install`], lines go to an in-memory ring
//! (the last 1,000), which embedded use and tests read with [`recent`].

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// SQL Server keeps six archives by default.
pub const DEFAULT_ARCHIVES: u32 = 6;
const RING: usize = 1000;

/// One line of the error log, as `sp_readerrorlog` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLogEntry {
    /// `yyyy-mm-dd hh:mm:ss.cc`
    pub log_date: String,
    /// `Server`, `Logon`, `Backup`, `spidNNs`, ...
    pub process_info: String,
    pub text: String,
}

struct FileLog {
    dir: PathBuf,
    archives: u32,
    file: File,
}

struct ErrorLogState {
    file: Option<FileLog>,
    ring: VecDeque<ErrorLogEntry>,
}

fn state() -> &'static Mutex<ErrorLogState> {
    static STATE: OnceLock<Mutex<ErrorLogState>> = OnceLock::new();
    STATE.get_or_init(|| Mutex::new(ErrorLogState { file: None, ring: VecDeque::new() }))
}

/// Formats a UNIX time as SQL Server prints error log dates (hundredths of a second).
pub fn format_log_date(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, dd) = civil_from_unix_days(days);
    format!(
        "{y:04}-{m:02}-{dd:02} {:02}:{:02}:{:02}.{:02}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_millis() / 10
    )
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil_from_unix_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

fn path_of(dir: &Path, archive: u32) -> PathBuf {
    if archive == 0 {
        dir.join("ERRORLOG")
    } else {
        dir.join(format!("ERRORLOG.{archive}"))
    }
}

/// Shifts ERRORLOG -> ERRORLOG.1 -> ... dropping the oldest, and opens a new ERRORLOG.
fn rotate(dir: &Path, archives: u32) -> std::io::Result<File> {
    let _ = std::fs::remove_file(path_of(dir, archives));
    for i in (0..archives).rev() {
        let from = path_of(dir, i);
        if from.exists() {
            std::fs::rename(&from, path_of(dir, i + 1))?;
        }
    }
    OpenOptions::new().create(true).write(true).truncate(true).open(path_of(dir, 0))
}

/// Starts a new error log in `dir` (archiving the previous ones), as an instance does at
/// startup. Lines already in the memory ring are copied into it.
pub fn install(dir: &Path, archives: u32) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut file = rotate(dir, archives)?;
    let mut st = state().lock();
    for e in &st.ring {
        writeln!(file, "{} {:<11} {}", e.log_date, e.process_info, e.text)?;
    }
    st.file = Some(FileLog { dir: dir.to_path_buf(), archives, file });
    Ok(())
}

/// Stops writing to a file (instance shutdown); later lines go to the memory ring only.
pub fn uninstall() {
    state().lock().file = None;
}

/// sp_cycle_errorlog: closes the current file and starts a new one.
pub fn cycle() -> std::io::Result<()> {
    let mut st = state().lock();
    if let Some(f) = st.file.take() {
        let file = rotate(&f.dir, f.archives)?;
        st.file = Some(FileLog { file, ..f });
    }
    Ok(())
}

/// Writes one line. `source` is the process info column (`Server`, `spid5s`, ...).
pub fn log(source: &str, message: &str) {
    let entry = ErrorLogEntry {
        log_date: format_log_date(SystemTime::now()),
        process_info: source.to_string(),
        text: message.replace(['\r', '\n'], " "),
    };
    let mut st = state().lock();
    if let Some(f) = st.file.as_mut() {
        // The error log must never take the instance down: a failed write is dropped.
        let _ = writeln!(f.file, "{} {:<11} {}", entry.log_date, entry.process_info, entry.text);
        let _ = f.file.flush();
    }
    if st.ring.len() == RING {
        st.ring.pop_front();
    }
    st.ring.push_back(entry);
}

/// The most recent lines written in this process (newest last).
pub fn recent(n: usize) -> Vec<ErrorLogEntry> {
    let st = state().lock();
    st.ring.iter().skip(st.ring.len().saturating_sub(n)).cloned().collect()
}

/// Parses one error log line; `None` for a line not in the format.
pub fn parse_line(line: &str) -> Option<ErrorLogEntry> {
    // "yyyy-mm-dd hh:mm:ss.cc" is 22 characters, then a space, the source, spaces, text.
    let date = line.get(..22)?;
    let b = date.as_bytes();
    if b[4] != b'-' || b[10] != b' ' || b[19] != b'.' {
        return None;
    }
    let rest = line.get(23..)?;
    let (src, text) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i..].trim_start()),
        None => (rest, ""),
    };
    Some(ErrorLogEntry { log_date: date.to_string(), process_info: src.to_string(), text: text.to_string() })
}

/// sp_readerrorlog archive (0 = current), optionally keeping lines that contain both
/// search strings (case-insensitive), as its third and fourth parameters do.
pub fn read(
    dir: &Path,
    archive: u32,
    search1: Option<&str>,
    search2: Option<&str>,
) -> std::io::Result<Vec<ErrorLogEntry>> {
    let f = File::open(path_of(dir, archive))?;
    let s1 = search1.map(str::to_lowercase);
    let s2 = search2.map(str::to_lowercase);
    let mut out = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line?;
        let Some(e) = parse_line(&line) else { continue };
        let lower = e.text.to_lowercase();
        if s1.as_ref().is_some_and(|s| !lower.contains(s.as_str()))
            || s2.as_ref().is_some_and(|s| !lower.contains(s.as_str()))
        {
            continue;
        }
        out.push(e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_like_sql_server() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(1_795_786_381_234);
        assert_eq!(format_log_date(t), "2026-11-27 13:33:01.23");
        assert_eq!(format_log_date(UNIX_EPOCH), "1970-01-01 00:00:00.00");
    }

    #[test]
    fn lines_round_trip() {
        let e = parse_line("2026-11-21 13:33:01.23 spid9s      Starting up database 'master'.").unwrap();
        assert_eq!(e.process_info, "spid9s");
        assert_eq!(e.text, "Starting up database 'master'.");
        assert!(parse_line("garbage").is_none());
        assert!(parse_line("").is_none());
    }

    #[test]
    fn file_rollover_and_read() {
        let dir = std::env::temp_dir().join(format!("mesquite-errorlog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        install(&dir, 2).unwrap();
        log("Server", "first instance start");
        install(&dir, 2).unwrap(); // a restart archives the previous log
        log("spid7s", "FlushCache: cleaned up 10 bufs\nwith 5 writes");
        cycle().unwrap();
        log("Logon", "Login failed for user 'x'.");
        uninstall();
        let current = read(&dir, 0, None, None).unwrap();
        assert!(current.iter().any(|e| e.process_info == "Logon"));
        let one = read(&dir, 1, Some("flushcache"), None).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].text, "FlushCache: cleaned up 10 bufs with 5 writes");
        let two = read(&dir, 2, Some("first"), None).unwrap();
        assert_eq!(two.len(), 1);
        assert!(read(&dir, 3, None, None).is_err(), "only two archives are kept");
        assert!(recent(3).iter().any(|e| e.text.starts_with("Login failed")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
