//! Measures how much stack parsing, printing, comparing and dropping need at the nesting
//! limit, for each kind of nesting: `cargo run -p sql --example stackprobe` (release or
//! dev). Each probe runs in a child process, since a stack overflow aborts.

fn ok_on(sql: &str, stack: usize) -> Option<bool> {
    let path = std::env::temp_dir().join(format!("stackprobe-{}.sql", std::process::id()));
    std::fs::write(&path, sql).unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("child")
        .arg(stack.to_string())
        .arg(&path)
        .output()
        .unwrap();
    if !child.status.success() {
        return None; // overflow
    }
    Some(String::from_utf8_lossy(&child.stdout).trim() == "ok")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        let stack: usize = args[2].parse().unwrap();
        let sql = std::fs::read_to_string(&args[3]).unwrap();
        let r = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || match sql::parse_batch(&sql) {
                Ok(b) => {
                    let printed = b.to_string();
                    let again = sql::parse_batch(&printed);
                    if again.as_ref().ok() != Some(&b) {
                        return "mismatch";
                    }
                    drop(again);
                    drop(b);
                    "ok"
                }
                Err(_) => "err",
            })
            .unwrap()
            .join()
            .unwrap();
        println!("{r}");
        return;
    }
    type Make = Box<dyn Fn(usize) -> String>;
    let cases: Vec<(&str, Make)> = vec![
        ("parens", Box::new(|n| format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)))),
        ("subq", Box::new(|n| format!("SELECT {}1{}", "(SELECT ".repeat(n), ")".repeat(n)))),
        ("neg", Box::new(|n| format!("SELECT {}1", "- ".repeat(n)))),
        ("not", Box::new(|n| format!("SELECT 1 WHERE {}1=1", "NOT ".repeat(n)))),
        ("if", Box::new(|n| format!("{}SELECT 1", "IF 1=1 ".repeat(n)))),
        ("begin", Box::new(|n| format!("{}SELECT 1{}", "BEGIN ".repeat(n), " END".repeat(n)))),
        ("case", Box::new(|n| format!("SELECT {}1{}", "CASE WHEN 1=1 THEN ".repeat(n), " END".repeat(n)))),
        ("fn", Box::new(|n| format!("SELECT {}1{}", "f(".repeat(n), ")".repeat(n)))),
        ("derived", Box::new(|n| format!("SELECT * FROM {}t{}", "(SELECT * FROM ".repeat(n), ") x".repeat(n)))),
        ("exists", Box::new(|n| format!("SELECT 1 WHERE {}1=1{}", "EXISTS (SELECT 1 WHERE ".repeat(n), ")".repeat(n)))),
        ("in", Box::new(|n| format!("SELECT 1 WHERE {}1{}", "1 IN (".repeat(n), ")".repeat(n)))),
        ("join", Box::new(|n| format!("SELECT * FROM {}t{}", "(t JOIN ".repeat(n), " ON 1=1)".repeat(n)))),
        (
            "proc",
            Box::new(|n| {
                format!(
                    "CREATE PROCEDURE p AS {}SELECT 1{}",
                    "BEGIN TRY ".repeat(n),
                    " END TRY BEGIN CATCH END CATCH".repeat(n)
                )
            }),
        ),
        ("elseif", Box::new(|n| format!("IF 1=1 SELECT 1{}", " ELSE IF 1=1 SELECT 1".repeat(n)))),
        ("chain", Box::new(|n| format!("SELECT 1{}", "+1".repeat(n)))),
        ("union", Box::new(|n| format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(n)))),
    ];
    for (name, make) in cases {
        // Deepest accepted input at a generous stack.
        let (mut lo, mut hi) = (1usize, 20000usize);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if ok_on(&make(mid), 64 << 20) == Some(true) {
                lo = mid
            } else {
                hi = mid - 1
            }
        }
        let sql = make(lo);
        // Smallest stack (in 16 KB steps) that survives it.
        let (mut slo, mut shi) = (16usize, 4096usize);
        while slo < shi {
            let mid = (slo + shi) / 2;
            if ok_on(&sql, mid * 1024).is_some() {
                shi = mid
            } else {
                slo = mid + 1
            }
        }
        println!("{name:8} deepest accepted {lo:6}  needs ~{slo} KB stack");
    }
}
