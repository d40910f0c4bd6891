//! The `mesquite` binary: `serve` (the instance), `sql`, `stress`, and later `replay`,
//! `xe` and admin commands.
//!
//! `serve` starts the instance and the TDS listener ([`serve`]); `sql` runs scripts or a
//! prompt against an embedded instance ([`sql_cmd`]); `stress` runs a batch from many
//! connections against a server and reports times and waits ([`stress`]).

mod output;
mod serve;
mod sql_cmd;
mod stress;

use std::process::ExitCode;

/// mimalloc instead of the C library's malloc (see the workspace Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use engine::default_data_dir;

const USAGE: &str = "usage: mesquite serve [options]   (mesquite serve --help)
       mesquite sql [options]     (mesquite sql --help)
       mesquite stress [options]  (mesquite stress --help)
       mesquite version

The data directory defaults to $MESQUITE_DATA_DIR, else $XDG_DATA_HOME/mesquite,
else ~/.local/share/mesquite. The sa password of a new instance comes from
$MESQUITE_SA_PASSWORD; without it one is generated and printed once.";

fn main() -> ExitCode {
    // Every file and directory the instance creates (data and log files, the error log,
    // certificates) is its owner's only: master's data file holds every login's salt
    // and hash.
    // SAFETY: umask(2) only sets the process's file mode creation mask.
    unsafe { libc::umask(0o077) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve::run(&args[1..]),
        Some("sql") => sql_cmd::run(&args[1..], default_data_dir()),
        Some("stress") => match stress::run(&args[1..]) {
            // --fail-on-error and an iteration failed: the report is printed, status 2.
            Ok(false) => return ExitCode::from(2),
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        },
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
