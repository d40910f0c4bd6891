//! `mesquite stress`: runs a batch from N connections, M times each, against a server
//! over TDS and reports per-thread times, errors and the wait deltas of its own sessions
//! (SQLQueryStress's job, from the command line). The runner is the `stress` crate; this
//! is its argument parsing and output.
//!
//! Exit status: 0 when the run completed, even with errors in iterations (they are in
//! the report) unless `--fail-on-error`; 1 when a connection failed or the arguments are
//! wrong.

use std::io::IsTerminal;
use std::path::PathBuf;

use stress::tds_conn::TdsConnector;
use stress::{Progress, StressOptions};
use tds::client::ClientConfig;

const USAGE: &str = "usage: mesquite stress (-Q BATCH | -f FILE) [-S HOST[,PORT] | --server HOST:PORT]
                       [-U LOGIN] [-P PASSWORD] [-d DATABASE] [-n THREADS] [-i ITERATIONS]
                       [--json FILE|-] [--progress bar|lines|none] [--fail-on-error]

Runs a T-SQL batch on THREADS connections, ITERATIONS times each; all threads connect
first and start together. Prints totals, a line per thread and the waits of its sessions
during the run (from sys.dm_exec_session_wait_stats).

  -Q BATCH            the batch to run
  -f FILE             read the batch from FILE (the whole file is one batch: no GO)
  -S HOST[,PORT]      the server (default 127.0.0.1,1433), as sqlcmd writes it
  --server HOST:PORT  the same, with a colon
  -U LOGIN            the login (default sa)
  -P PASSWORD         its password (default $MESQUITE_SA_PASSWORD)
  -d DATABASE         the database to connect to (default: the login's)
  -n, --threads N     connections, one thread each (default 1)
  -i, --iterations N  executions of the batch per thread (default 1)
  --json FILE         also write the report as JSON to FILE (- for standard output,
                      instead of the table)
  --progress MODE     bar (default on a terminal), lines (a line every 2 s; the default
                      otherwise) or none; shown on standard error
  --fail-on-error     exit with status 2 if any iteration failed (1 is for a failed
                      connection or bad arguments)";

struct Options {
    host: String,
    port: u16,
    user: String,
    password: Option<String>,
    database: Option<String>,
    threads: usize,
    iterations: u64,
    batch: Option<String>,
    json: Option<PathBuf>,
    progress: Progress,
    fail_on_error: bool,
}

/// `host`, `host,port` (sqlcmd) or `host:port`; a bracketed IPv6 address keeps its colons.
fn parse_server(s: &str, colon: bool) -> Result<(String, u16), String> {
    let bad = || format!("invalid server {s:?}: expected HOST, HOST,PORT or HOST:PORT");
    let split = if let Some(rest) = s.strip_prefix('[') {
        let (h, tail) = rest.split_once(']').ok_or_else(bad)?;
        let port = tail.strip_prefix(',').or_else(|| tail.strip_prefix(':'));
        match (tail.is_empty(), port) {
            (true, _) => (h.to_string(), None),
            (false, Some(p)) => (h.to_string(), Some(p)),
            _ => return Err(bad()),
        }
    } else if let Some((h, p)) = s.split_once(',') {
        (h.to_string(), Some(p))
    } else if colon || s.matches(':').count() == 1 {
        match s.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (s.to_string(), None),
        }
    } else {
        (s.to_string(), None)
    };
    let (host, port) = split;
    if host.is_empty() {
        return Err(bad());
    }
    let port = match port {
        Some(p) => p.trim().parse().map_err(|_| bad())?,
        None => 1433,
    };
    Ok((host, port))
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        host: "127.0.0.1".to_string(),
        port: 1433,
        user: "sa".to_string(),
        password: std::env::var("MESQUITE_SA_PASSWORD").ok().filter(|p| !p.is_empty()),
        database: None,
        threads: 1,
        iterations: 1,
        batch: None,
        json: None,
        progress: if std::io::stderr().is_terminal() { Progress::Bar } else { Progress::Lines },
        fail_on_error: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "-S" => (o.host, o.port) = parse_server(&value("-S")?, false)?,
            "--server" => (o.host, o.port) = parse_server(&value("--server")?, true)?,
            "-U" => o.user = value("-U")?,
            "-P" => o.password = Some(value("-P")?),
            "-d" | "--database" => o.database = Some(value("-d")?),
            "-n" | "--threads" => {
                let v = value("--threads")?;
                o.threads = v.parse().ok().filter(|&n| n >= 1).ok_or(format!("invalid thread count {v}"))?;
            }
            "-i" | "--iterations" => {
                let v = value("--iterations")?;
                o.iterations = v.parse().map_err(|_| format!("invalid iteration count {v}"))?;
            }
            "-Q" | "-q" => o.batch = Some(value("-Q")?),
            "-f" => {
                let f = value("-f")?;
                let text = std::fs::read_to_string(&f).map_err(|e| format!("cannot read {f}: {e}"))?;
                o.batch = Some(text);
            }
            "--json" => o.json = Some(PathBuf::from(value("--json")?)),
            "--progress" => {
                o.progress = match value("--progress")?.as_str() {
                    "bar" => Progress::Bar,
                    "lines" => Progress::Lines,
                    "none" => Progress::None,
                    other => return Err(format!("invalid --progress {other}: bar, lines or none")),
                }
            }
            "--fail-on-error" => o.fail_on_error = true,
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Runs the command. Ok(true) when the run had no failed iteration or errors are not to
/// fail it; Ok(false) for `--fail-on-error` with errors.
pub fn run(args: &[String]) -> Result<bool, String> {
    if args.iter().any(|a| a == "--help" || a == "-h" || a == "-?") {
        println!("{USAGE}");
        return Ok(true);
    }
    let o = parse_args(args)?;
    let batch = o.batch.ok_or_else(|| format!("no batch: give -Q BATCH or -f FILE\n{USAGE}"))?;
    let password = o.password.ok_or_else(|| "no password: give -P or set MESQUITE_SA_PASSWORD".to_string())?;
    let config = ClientConfig { database: o.database, ..ClientConfig::new(o.host, o.port, o.user, password) };
    let connector = TdsConnector::new(config);
    let opts = StressOptions { threads: o.threads, iterations: o.iterations, batch, progress: o.progress };
    let report = stress::run(&connector, &opts)?;
    match o.json.as_deref() {
        Some(p) if p.as_os_str() == "-" => println!("{}", report.to_json()),
        Some(p) => {
            std::fs::write(p, report.to_json() + "\n").map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            print!("{}", report.to_table());
        }
        None => print!("{}", report.to_table()),
    }
    Ok(!(o.fail_on_error && report.errors() > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_forms() {
        assert_eq!(parse_server("db1", false).unwrap(), ("db1".into(), 1433));
        assert_eq!(parse_server("db1,1500", false).unwrap(), ("db1".into(), 1500));
        assert_eq!(parse_server("127.0.0.1:1501", true).unwrap(), ("127.0.0.1".into(), 1501));
        assert_eq!(parse_server("127.0.0.1:1501", false).unwrap(), ("127.0.0.1".into(), 1501));
        assert_eq!(parse_server("[::1]:1502", true).unwrap(), ("::1".into(), 1502));
        assert_eq!(parse_server("[::1]", false).unwrap(), ("::1".into(), 1433));
        assert_eq!(parse_server("::1", false).unwrap(), ("::1".into(), 1433));
        for bad in ["", ",1", "h,x", "h:99999", "[::1"] {
            assert!(parse_server(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn options() {
        let args: Vec<String> =
            ["-S", "h,2000", "-n", "4", "-i", "25", "-Q", "SELECT 1", "--progress", "none", "-P", "pw", "-d", "db"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let o = parse_args(&args).unwrap();
        assert_eq!((o.host.as_str(), o.port, o.threads, o.iterations), ("h", 2000, 4, 25));
        assert_eq!(o.batch.as_deref(), Some("SELECT 1"));
        assert_eq!(o.progress, Progress::None);
        assert_eq!(o.database.as_deref(), Some("db"));
        assert!(parse_args(&["-n".to_string(), "0".to_string()]).is_err());
        assert!(parse_args(&["-n".to_string()]).is_err());
        assert!(parse_args(&["--bogus".to_string()]).is_err());
    }
}
