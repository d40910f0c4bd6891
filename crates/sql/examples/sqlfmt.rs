//! Parse a T-SQL script (split on GO) and print it back from the AST:
//! `cargo run -p sql --example sqlfmt -- file.sql`.
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: sqlfmt FILE.sql");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    for (line, batch, count) in sql::split_batches(&text) {
        match sql::parse_batch(&batch) {
            Ok(ast) => println!("{ast}\nGO{}", if count > 1 { format!(" {count}") } else { String::new() }),
            Err(e) => println!("-- batch at line {line}: {e}\nGO"),
        }
    }
}
