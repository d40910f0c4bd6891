//! The corpus: T-SQL scripts in `tests/corpus/` (the seed articles' statements re-created
//! with our own names, plus every construct the parser models). Each script is split on
//! GO; every batch must parse, print, and parse back to the same AST, and printing must be
//! a fixed point.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use sql::ast::*;
use sql::{parse_batch, split_batches};

fn corpus() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).expect("read corpus file"))
        })
        .collect()
}

/// The variant name of a statement kind (from its Debug form).
fn variant(kind: &StatementKind) -> String {
    let dbg = format!("{kind:?}");
    dbg.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("").to_string()
}

fn walk<'a>(stmts: &'a [Statement], out: &mut Vec<&'a StatementKind>) {
    for s in stmts {
        out.push(&s.kind);
        match &s.kind {
            StatementKind::Block(b) => walk(b, out),
            StatementKind::If { then_branch, else_branch, .. } => {
                walk(std::slice::from_ref(then_branch), out);
                if let Some(e) = else_branch {
                    walk(std::slice::from_ref(e), out);
                }
            }
            StatementKind::While { body, .. } => walk(std::slice::from_ref(body), out),
            StatementKind::TryCatch { try_block, catch_block } => {
                walk(try_block, out);
                walk(catch_block, out);
            }
            StatementKind::CreateProcedure(p) => walk(&p.body, out),
            StatementKind::CreateFunction(f) => match &f.returns {
                FunctionBody::Scalar { body, .. } | FunctionBody::MultiStatement { body, .. } => walk(body, out),
                FunctionBody::InlineTable { .. } => {}
            },
            _ => {}
        }
    }
}

#[test]
fn every_batch_round_trips() {
    let mut batches = 0;
    let mut statements = 0;
    let mut variants = BTreeSet::new();
    let mut others = Vec::new();
    for (file, text) in corpus() {
        for (line, batch, _) in split_batches(&text) {
            batches += 1;
            let ast = parse_batch(&batch).unwrap_or_else(|e| panic!("{file}:{line}: {e}\n---\n{batch}"));
            assert!(!ast.statements.is_empty(), "{file}:{line}: no statements");
            for s in &ast.statements {
                // Every statement's span is real text of the batch.
                assert!(!s.span.text(&batch).is_empty(), "{file}:{line}: empty span {:?}", s.span);
            }
            let printed = ast.to_string();
            let reparsed = parse_batch(&printed)
                .unwrap_or_else(|e| panic!("{file}:{line}: printed text does not parse: {e}\n---\n{printed}"));
            assert_eq!(ast, reparsed, "{file}:{line}: round trip changed the AST\n---\n{batch}\n---\n{printed}");
            assert_eq!(printed, reparsed.to_string(), "{file}:{line}: printing is not a fixed point");
            let mut all = Vec::new();
            walk(&ast.statements, &mut all);
            statements += all.len();
            for k in all {
                variants.insert(variant(k));
                if let StatementKind::Other { keyword, .. } = k {
                    others.push(keyword.clone());
                }
            }
        }
    }
    assert!(batches > 60, "only {batches} batches");
    assert!(statements > 400, "only {statements} statements");

    // Every statement kind the AST has appears in the corpus.
    let expected = [
        "Query",
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Use",
        "CreateDatabase",
        "AlterDatabase",
        "CreateSchema",
        "CreateTable",
        "AlterTable",
        "CreateIndex",
        "AlterIndex",
        "DropIndex",
        "CreateProcedure",
        "CreateView",
        "CreateFunction",
        "Drop",
        "Truncate",
        "Declare",
        "SetVariable",
        "SetOption",
        "Block",
        "If",
        "While",
        "Break",
        "Continue",
        "Goto",
        "Label",
        "Return",
        "TryCatch",
        "Throw",
        "Raiserror",
        "Print",
        "WaitFor",
        "Exec",
        "ExecString",
        "ExecuteAs",
        "Revert",
        "BeginTransaction",
        "Commit",
        "Rollback",
        "SaveTransaction",
        "Checkpoint",
        "Dbcc",
        "Backup",
        "Restore",
        "EventSession",
        "CreateLogin",
        "AlterLogin",
        "CreateUser",
        "AlterRole",
        "Permission",
        "SetCursor",
        "OpenCursor",
        "CloseCursor",
        "DeallocateCursor",
        "Fetch",
        "Kill",
        "Reconfigure",
        "Shutdown",
        "CreateTrigger",
        "Sequence",
        "Other",
    ];
    let missing: Vec<&str> = expected.iter().copied().filter(|v| !variants.contains(*v)).collect();
    assert!(missing.is_empty(), "statement kinds missing from the corpus: {missing:?}");

    // What is kept as text, and nothing else.
    others.sort();
    assert_eq!(
        others,
        vec![
            "ALTER AUTHORIZATION",
            "ALTER SCHEMA",
            "BACKUP CERTIFICATE",
            "BULK INSERT",
            "CREATE SYNONYM",
            "DISABLE TRIGGER",
            "DROP STATISTICS",
            "ENABLE TRIGGER",
            "RESTORE REWINDONLY",
            "UPDATE STATISTICS",
        ]
    );
}

/// Parse every batch of the corpus repeatedly and print statements per second.
/// Run with `cargo test -p sql --release -- --ignored --nocapture bench_`.
#[test]
#[ignore]
fn bench_parse_corpus() {
    let batches: Vec<String> = corpus().into_iter().flat_map(|(_, t)| split_batches(&t)).map(|b| b.1).collect();
    let bytes: usize = batches.iter().map(|b| b.len()).sum();
    let per_round: usize = batches.iter().map(|b| parse_batch(b).unwrap().statements.len()).sum();
    let start = std::time::Instant::now();
    let mut rounds = 0u64;
    while start.elapsed().as_secs_f64() < 3.0 {
        for b in &batches {
            std::hint::black_box(parse_batch(b).unwrap());
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "parsed {} top-level statements ({} KB) x {rounds} rounds in {secs:.2}s: {:.0} statements/s, {:.1} MB/s",
        per_round,
        bytes / 1024,
        (per_round as u64 * rounds) as f64 / secs,
        (bytes as u64 * rounds) as f64 / secs / 1e6
    );
}
