//! Statements that nest deeper than their text (views over views, dynamic SQL running
//! itself, long set operations, deep expressions) end with an error (217, 8631, 191)
//! instead of overflowing the thread's stack, and the session keeps serving. Each case
//! runs on a 2 MiB thread, a quarter of a request thread's stack, so the guard is shown
//! to hold well below the real limit.

use sql::exec::{execute_batch, SessionState};
use sql::memhost::MemHost;
use sql::results::CollectSink;

const SMALL_STACK: usize = 2 << 20;

/// Runs the batches in order on one session on a small stack; returns each batch's error
/// numbers. Panics (failing the test) if the thread overflows or panics.
fn run_on_small_stack(batches: Vec<String>) -> Vec<Vec<i32>> {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || {
            let mut host = MemHost::new();
            let mut state = SessionState::new(1, 51);
            let mut out = Vec::new();
            for b in batches.iter().map(String::as_str).chain(["SELECT 1 AS alive"]) {
                let mut sink = CollectSink::default();
                execute_batch(&mut state, &mut host, b, &mut sink);
                out.push(sink.errors().iter().map(|e| e.number).collect());
            }
            // The session still answers after whatever came before.
            assert_eq!(out.last(), Some(&Vec::new()), "the session no longer serves");
            out.pop();
            out
        })
        .expect("spawn")
        .join()
        .expect("no stack overflow or panic")
}

#[test]
fn dynamic_sql_running_itself_stops_at_nesting_level_32() {
    let errors = run_on_small_stack(vec![
        "DECLARE @s nvarchar(max) = N'EXEC sp_executesql @s, N''@s nvarchar(max)'', @s'; \
         EXEC sp_executesql @s, N'@s nvarchar(max)', @s;"
            .to_string(),
        "DECLARE @s nvarchar(max) = N'EXEC (@s)'; EXEC (N'DECLARE @s nvarchar(max) = N''EXEC (@s)''; EXEC (@s)');"
            .to_string(),
    ]);
    assert_eq!(errors[0].first(), Some(&217), "{errors:?}");
}

#[test]
fn views_over_deeply_nested_views_end_with_8631_or_217() {
    // Each view nests 50 derived tables over the previous one: within the parser's
    // limits for each text, far beyond them once expanded.
    let mut batches = vec!["CREATE VIEW v0 AS SELECT 1 AS a".to_string()];
    for i in 1..40 {
        batches.push(format!(
            "CREATE VIEW v{i} AS SELECT a FROM {}v{}{}",
            "(SELECT a FROM ".repeat(50),
            i - 1,
            ") AS t".repeat(50)
        ));
    }
    batches.push("SELECT a FROM v39".to_string());
    let errors = run_on_small_stack(batches);
    let all: Vec<i32> = errors.iter().flatten().copied().collect();
    assert!(all.contains(&8631), "{errors:?}");
    assert!(all.iter().all(|n| matches!(n, 8631 | 217 | 208)), "{errors:?}");
}

#[test]
fn deep_inputs_at_the_parser_limits_run_or_fail_cleanly() {
    let batches = vec![
        format!("SELECT 1 AS a{}", " UNION ALL SELECT 1".repeat(2000)),
        format!("SELECT 1 AS a{}", " UNION ALL SELECT 1".repeat(5000)),
        format!("SELECT {}1{} AS a", "(SELECT ".repeat(60), ")".repeat(60)),
        format!("SELECT {}1{} AS a", "CASE WHEN 1 = 1 THEN ".repeat(60), " END".repeat(60)),
        format!("SELECT 1{} AS a", " + 1".repeat(2000)),
        format!("SELECT 1 AS a WHERE {}", vec!["1 = 0"; 2000].join(" OR ")),
        format!("SELECT 1 AS a WHERE 1 IN {}(1){}", "(SELECT 1 WHERE 1 IN ".repeat(60), ")".repeat(60)),
        format!("SELECT {}1{} AS a", "(".repeat(5000), ")".repeat(5000)),
    ];
    let errors = run_on_small_stack(batches);
    for e in &errors {
        assert!(e.iter().all(|n| matches!(n, 191 | 8631)), "{errors:?}");
    }
    // Too deep for the parser.
    assert_eq!(errors[1], vec![191]);
    assert_eq!(errors[7], vec![191]);
}

#[test]
fn functions_calling_functions_with_deep_bodies_fail_cleanly() {
    // A scalar function whose body is a deep expression, recursing 32 levels.
    let body = format!("{}@n{}", "(1 + ".repeat(100), ")".repeat(100));
    let batches = vec![
        format!(
            "CREATE FUNCTION dbo.f(@n int) RETURNS int AS BEGIN \
             IF @n <= 0 RETURN 0; RETURN dbo.f(@n - 1) + {body}; END"
        ),
        "SELECT dbo.f(10) AS r".to_string(),
        "SELECT dbo.f(40) AS r".to_string(),
    ];
    let errors = run_on_small_stack(batches);
    assert_eq!(errors[0], Vec::<i32>::new());
    assert!(errors[1].is_empty() || errors[1] == vec![8631], "{errors:?}");
    assert!(matches!(errors[2].as_slice(), [217] | [8631]), "{errors:?}");
}
