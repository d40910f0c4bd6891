//! `mesquite sql`: runs T-SQL scripts, a query, or an interactive prompt against an
//! embedded instance, the way sqlcmd does against a server.
//!
//! Input is split into batches on `GO` lines by [`sql::split_batches`] (the client-side
//! rule: the server never sees GO), `GO n` runs a batch n times, and results print through
//! [`crate::output::TextSink`] in sqlcmd's layout.
//!
//! Options follow sqlcmd where they exist (`-i`, `-Q`, `-b`, `-e`), except `-d`, which
//! names the data directory as `serve --data-dir` does (sqlcmd's `-d` is a database name;
//! use `USE db` instead). Not supported: sqlcmd's `:r`, `:setvar` and `$(var)` scripting
//! variables, `-v`, `-o` (use redirection), `-h`, `-s`, `-W`.
//!
//! The instance is the engine's (`engine::Instance`), embedded in the process: on the data
//! directory (which holds a lock, so a running `serve` on it is refused), or in memory with
//! `--memory`. The session logs in as `-U` (default `sa`) with `-P`, else
//! `$MESQUITE_SA_PASSWORD`, else the password the engine generates when this command
//! creates the instance (printed once on stderr). [`Embedded`] is the seam the script
//! tests and the sqllogictest runner also use.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;

use std::sync::Arc;

use engine::{Instance, InstanceConfig};
use sql::results::ResultSink;

use crate::output::TextSink;

const USAGE: &str = "usage: mesquite sql [-i FILE]... [-Q QUERY] [-d DIR | --memory] [-U LOGIN] [-P PASSWORD] [-b] [-e]

Runs T-SQL against an embedded instance: the script files given with -i, else the query
given with -Q, else standard input (an interactive prompt when it is a terminal: GO runs
the statements typed so far, GO n runs them n times, reset clears them, exit or quit
leaves).

  -i FILE         run FILE (several -i run in order, in one session)
  -Q QUERY        run QUERY and exit
  -d, --data-dir DIR
                  the instance's data directory (default: as for serve)
  --memory        an in-memory instance, gone when the command ends
  -U LOGIN        the login (default sa)
  -P PASSWORD     its password (default $MESQUITE_SA_PASSWORD)
  -b              stop at the first batch that raised an error, exit code 1
  -e              echo each batch before running it";

/// A session of an embedded instance that runs batches. It is the seam between the
/// command and whatever executes T-SQL: today the executor over the in-memory host, the
/// engine's session once `engine::Instance` exists.
pub trait Embedded {
    fn run(&mut self, text: &str, sink: &mut dyn ResultSink);
}

/// A session of the embedded engine instance, which it shuts down when dropped.
pub struct EngineSession {
    session: Option<engine::Session>,
    instance: Arc<Instance>,
}

impl Embedded for EngineSession {
    fn run(&mut self, text: &str, sink: &mut dyn ResultSink) {
        if let Some(s) = self.session.as_mut() {
            s.execute_batch(text, sink);
        }
    }
}

impl Drop for EngineSession {
    fn drop(&mut self) {
        // The session first: its open transaction rolls back before the checkpoint.
        self.session = None;
        if let Err(e) = self.instance.shutdown() {
            eprintln!("mesquite sql: shutdown: {e}");
        }
    }
}

/// Where the input comes from.
enum Input {
    Files(Vec<PathBuf>),
    Query(String),
    Stdin,
}

struct Options {
    input: Input,
    data_dir: PathBuf,
    memory: bool,
    login: String,
    password: Option<String>,
    abort_on_error: bool,
    echo: bool,
}

fn parse_args(args: &[String], default_data_dir: PathBuf) -> Result<Options, String> {
    let mut files = Vec::new();
    let mut query = None;
    let mut opts = Options {
        input: Input::Stdin,
        data_dir: default_data_dir,
        memory: false,
        login: "sa".to_string(),
        password: std::env::var("MESQUITE_SA_PASSWORD").ok().filter(|p| !p.is_empty()),
        abort_on_error: false,
        echo: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-i" => files.push(PathBuf::from(it.next().ok_or("-i needs a file name")?)),
            "-Q" | "-q" => query = Some(it.next().ok_or("-Q needs a query")?.clone()),
            "-d" | "--data-dir" => opts.data_dir = PathBuf::from(it.next().ok_or("--data-dir needs a value")?),
            "--memory" => opts.memory = true,
            "-U" => opts.login = it.next().ok_or("-U needs a login")?.clone(),
            "-P" => opts.password = Some(it.next().ok_or("-P needs a password")?.clone()),
            "-b" => opts.abort_on_error = true,
            "-e" => opts.echo = true,
            "-h" | "--help" | "-?" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    opts.input = match (files.is_empty(), query) {
        (false, Some(_)) => return Err(format!("-i and -Q cannot be used together\n{USAGE}")),
        (false, None) => Input::Files(files),
        (true, Some(q)) => Input::Query(q),
        (true, None) => Input::Stdin,
    };
    Ok(opts)
}

/// Starts the instance the options name and logs in.
fn open_session(opts: &Options) -> Result<EngineSession, String> {
    let config = if opts.memory {
        // Nobody else can reach an in-memory instance: any password will do.
        let password = opts.password.clone().unwrap_or_else(|| "embedded-only".to_string());
        InstanceConfig::in_memory(&password)
    } else {
        let mut c = InstanceConfig::on_disk(&opts.data_dir);
        c.sa_password = opts.password.clone();
        c
    };
    let instance = Instance::start(config).map_err(|e| e.to_string())?;
    let password = match (&opts.password, instance.first_start_sa_password()) {
        (Some(p), _) => p.clone(),
        (None, Some(generated)) => {
            if !opts.memory {
                eprintln!(
                    "Created the instance in {}; the sa password is {generated} (shown once: \
                     set MESQUITE_SA_PASSWORD or pass -P next time).",
                    opts.data_dir.display()
                );
            }
            generated.to_string()
        }
        (None, None) if opts.memory => "embedded-only".to_string(),
        (None, None) => String::new(),
    };
    let session = instance.open_session(&opts.login, &password, None);
    match session {
        Ok(session) => Ok(EngineSession { session: Some(session), instance }),
        Err(e) => {
            let _ = instance.shutdown();
            Err(format!("{e}\n(give the password with -P or MESQUITE_SA_PASSWORD)"))
        }
    }
}

/// What running a script ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// `-b` and a batch raised an error.
    Aborted,
}

/// Runs a script (GO-separated batches) on `session`, printing to `sink`. With
/// `abort_on_error`, stops after the first batch that printed an error.
pub fn run_script<W: Write>(
    session: &mut dyn Embedded,
    script: &str,
    sink: &mut TextSink<W>,
    echo: bool,
    abort_on_error: bool,
) -> io::Result<Outcome> {
    for (_line, text, count) in sql::split_batches(script) {
        if run_batch(session, &text, count, sink, echo, abort_on_error)? == Outcome::Aborted {
            return Ok(Outcome::Aborted);
        }
    }
    Ok(Outcome::Completed)
}

fn run_batch<W: Write>(
    session: &mut dyn Embedded,
    text: &str,
    count: u32,
    sink: &mut TextSink<W>,
    echo: bool,
    abort_on_error: bool,
) -> io::Result<Outcome> {
    if echo {
        sink.write_text(text);
        sink.write_text("\n");
    }
    for _ in 0..count {
        session.run(text, sink);
        sink.end_batch()?;
        if abort_on_error && sink.take_errors() > 0 {
            return Ok(Outcome::Aborted);
        }
    }
    Ok(Outcome::Completed)
}

/// `Some(n)` if `line` is a GO separator (`GO`, `GO n`, with an optional comment), by
/// the one rule [`sql::split_batches`] implements: a script of one line of text followed
/// by `line` splits into exactly that line, run n times, only when `line` is a separator.
fn go_line(line: &str) -> Option<u32> {
    if line.trim().is_empty() {
        return None;
    }
    match sql::split_batches(&format!("x\n{line}")).as_slice() {
        [(1, text, n)] if text == "x" => Some(*n),
        _ => None,
    }
}

/// The sqlcmd commands of the interactive prompt, other than GO.
enum Command {
    Exit,
    Reset,
}

fn command(line: &str) -> Option<Command> {
    let word = line.trim();
    let word = word.strip_prefix(':').unwrap_or(word);
    if word.eq_ignore_ascii_case("exit") || word.eq_ignore_ascii_case("quit") {
        Some(Command::Exit)
    } else if word.eq_ignore_ascii_case("reset") {
        Some(Command::Reset)
    } else {
        None
    }
}

/// The interactive prompt: `1>`, `2>`, ... per line of the statement being typed.
fn interactive<W: Write>(session: &mut dyn Embedded, sink: &mut TextSink<W>, opts: &Options) -> io::Result<Outcome> {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    let mut buffer = String::new();
    let mut line_no = 1u32;
    loop {
        sink.write_text(&format!("{line_no}> "));
        sink.end_batch()?;
        let Some(line) = lines.next() else {
            sink.write_text("\n");
            break;
        };
        let line = line?;
        if let Some(n) = go_line(&line) {
            if !buffer.trim().is_empty()
                && run_batch(session, buffer.trim_end_matches('\n'), n, sink, opts.echo, opts.abort_on_error)?
                    == Outcome::Aborted
            {
                return Ok(Outcome::Aborted);
            }
            buffer.clear();
            line_no = 1;
            continue;
        }
        match command(&line) {
            Some(Command::Exit) => return Ok(Outcome::Completed),
            Some(Command::Reset) => {
                buffer.clear();
                line_no = 1;
                continue;
            }
            None => {}
        }
        buffer.push_str(&line);
        buffer.push('\n');
        line_no += 1;
    }
    // End of input: like sqlcmd reading a file, what was typed after the last GO runs.
    if !buffer.trim().is_empty() {
        return run_batch(session, buffer.trim_end_matches('\n'), 1, sink, opts.echo, opts.abort_on_error);
    }
    Ok(Outcome::Completed)
}

fn read_file(path: &PathBuf) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // Scripts saved by SQL Server tools are often UTF-16 with a byte-order mark.
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        return Ok(String::from_utf16_lossy(&units));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `mesquite sql ...`. Returns Err with a message for usage and I/O errors; exits with
/// code 1 itself when `-b` stops a script.
pub fn run(args: &[String], default_data_dir: PathBuf) -> Result<(), String> {
    let opts = parse_args(args, default_data_dir)?;
    let scripts = match &opts.input {
        Input::Files(files) => files.iter().map(read_file).collect::<Result<Vec<_>, _>>()?,
        Input::Query(q) => vec![q.clone()],
        Input::Stdin => Vec::new(),
    };
    let mut session = open_session(&opts)?;
    let stdout = io::stdout();
    let mut sink = TextSink::new(io::BufWriter::new(stdout.lock()));
    let result = match opts.input {
        Input::Stdin if io::stdin().is_terminal() => interactive(&mut session, &mut sink, &opts),
        Input::Stdin => {
            let mut script = String::new();
            match io::Read::read_to_string(&mut io::stdin(), &mut script) {
                Ok(_) => run_script(&mut session, &script, &mut sink, opts.echo, opts.abort_on_error),
                Err(e) => Err(e),
            }
        }
        _ => {
            let mut outcome = Ok(Outcome::Completed);
            for script in &scripts {
                outcome = run_script(&mut session, script, &mut sink, opts.echo, opts.abort_on_error);
                if !matches!(outcome, Ok(Outcome::Completed)) {
                    break;
                }
            }
            outcome
        }
    };
    drop(sink);
    // Shut the instance down (a checkpoint on disk) before exiting, whatever the outcome.
    drop(session);
    match result {
        Ok(Outcome::Completed) => Ok(()),
        Ok(Outcome::Aborted) => std::process::exit(1),
        // Output closed early (`| head`): nothing left to tell anyone.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("mesquite sql: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sql::results::{ColumnInfo, Done, DoneKind, Message};
    use types::{SqlError, SqlType, Value};

    /// Stands in for the executor: `SELECT n` returns n, `ERR` raises, anything else
    /// completes with no count.
    struct Fake {
        batches: Vec<String>,
    }

    impl Embedded for Fake {
        fn run(&mut self, text: &str, sink: &mut dyn ResultSink) {
            self.batches.push(text.to_string());
            let done = |n| Done { kind: DoneKind::Statement, row_count: n, error: false, in_xact: false };
            if let Some(n) = text.strip_prefix("SELECT ").and_then(|n| n.trim().parse::<i32>().ok()) {
                let _ = sink.columns(&[ColumnInfo::new("", SqlType::Int, false)]);
                let _ = sink.row(&[Value::Int(n)]);
                let _ = sink.done(done(Some(1)));
            } else if text == "ERR" {
                let e = SqlError::new(50000, 16, 1, "bad").at_line(1);
                let _ = sink.message(&Message { error: e, info: false });
                let _ = sink.done(done(None));
            }
        }
    }

    fn run_fake(script: &str, echo: bool, abort: bool) -> (Vec<String>, String, Outcome) {
        let mut fake = Fake { batches: Vec::new() };
        let mut sink = TextSink::new(Vec::new());
        let outcome = run_script(&mut fake, script, &mut sink, echo, abort).unwrap();
        (fake.batches, String::from_utf8(sink.into_inner()).unwrap(), outcome)
    }

    #[test]
    fn batches_repeat_and_abort() {
        let (batches, _, outcome) = run_fake("SELECT 1\nGO 3\nERR\nGO\nSELECT 2\n", false, false);
        assert_eq!(batches, ["SELECT 1", "SELECT 1", "SELECT 1", "ERR", "SELECT 2"]);
        assert_eq!(outcome, Outcome::Completed);
        let (batches, out, outcome) = run_fake("SELECT 1\nGO\nERR\nGO\nSELECT 2\n", false, true);
        assert_eq!(batches, ["SELECT 1", "ERR"]);
        assert_eq!(outcome, Outcome::Aborted);
        assert!(out.ends_with("Msg 50000, Level 16, State 1, Line 1\nbad\n"), "{out}");
    }

    #[test]
    fn echo_prints_the_batch_first() {
        let (_, out, _) = run_fake("SELECT 7\ngo", true, false);
        assert_eq!(out, "SELECT 7\n           \n-----------\n          7\n\n(1 row affected)\n");
    }

    #[test]
    fn go_lines_and_commands() {
        assert_eq!(go_line("GO"), Some(1));
        assert_eq!(go_line("  go 5 -- again"), Some(5));
        assert_eq!(go_line("GOTO x"), None);
        assert_eq!(go_line(""), None);
        assert_eq!(go_line("SELECT 1"), None);
        assert!(matches!(command(" EXIT "), Some(Command::Exit)));
        assert!(matches!(command(":quit"), Some(Command::Exit)));
        assert!(matches!(command("reset"), Some(Command::Reset)));
        assert!(command("exit 1").is_none());
    }

    #[test]
    fn arguments() {
        let args = |a: &[&str]| parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>(), PathBuf::from("d"));
        let o = args(&["-i", "a.sql", "-i", "b.sql", "--memory", "-b", "-e"]).unwrap();
        assert!(matches!(o.input, Input::Files(ref f) if f.len() == 2));
        assert!(o.memory && o.abort_on_error && o.echo);
        assert!(matches!(args(&["-Q", "SELECT 1"]).unwrap().input, Input::Query(_)));
        assert!(args(&["-i", "a", "-Q", "x"]).is_err());
        assert!(args(&["-i"]).is_err());
        assert!(args(&["--bogus"]).is_err());
    }
}
