//! No input crashes the parser: random bytes, random token soups, and pathological
//! nesting. Round trips hold for whatever parses, and for random expression trees.

use proptest::prelude::*;
use sql::ast::*;
use sql::{parse_batch, parse_expression};

/// Run `f` on a thread with a 1 MiB stack: the parser's depth limits must keep every
/// input (parse, print, compare, drop) well inside that.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(1 << 20).spawn(f).expect("spawn").join().expect("no panic or overflow")
}

/// Parse; if it parses, the printed form must parse to the same AST and print the same.
fn check_round_trip(text: &str) {
    if let Ok(ast) = parse_batch(text) {
        let printed = ast.to_string();
        let again = parse_batch(&printed).unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}: {e}"));
        assert_eq!(ast, again, "{text:?} printed as {printed:?}");
        assert_eq!(printed, again.to_string());
    }
}

const VOCABULARY: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "CREATE",
    "ALTER",
    "DROP",
    "TABLE",
    "PROCEDURE",
    "VIEW",
    "FUNCTION",
    "INDEX",
    "DATABASE",
    "AS",
    "BEGIN",
    "END",
    "IF",
    "ELSE",
    "WHILE",
    "DECLARE",
    "EXEC",
    "WITH",
    "JOIN",
    "LEFT",
    "CROSS",
    "APPLY",
    "ON",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "IS",
    "IN",
    "LIKE",
    "BETWEEN",
    "CASE",
    "WHEN",
    "THEN",
    "TRY",
    "CATCH",
    "THROW",
    "RETURN",
    "ORDER",
    "BY",
    "GROUP",
    "TOP",
    "DISTINCT",
    "UNION",
    "ALL",
    "OVER",
    "PARTITION",
    "CAST",
    "CONVERT",
    "DBCC",
    "BACKUP",
    "RESTORE",
    "DISK",
    "TO",
    "EVENT",
    "SESSION",
    "SERVER",
    "ADD",
    "TARGET",
    "COMMIT",
    "ROLLBACK",
    "TRAN",
    "DEFAULT",
    "PRIMARY",
    "KEY",
    "IDENTITY",
    "OUTPUT",
    "GOTO",
    "PRINT",
    "RAISERROR",
    "WAITFOR",
    "DELAY",
    "EXISTS",
    "COLLATE",
    "MERGE",
    "TRIGGER",
    "CURSOR",
    "FETCH",
    "NEXT",
    "OPEN",
    "OPTION",
    "int",
    "varchar",
    "MAX",
    "a",
    "b",
    "t",
    "dbo",
    "sys",
    "x.y",
    "#tmp",
    "[q id]",
    "\"dq\"",
    "1",
    "0",
    "42.5",
    "1e3",
    "$5",
    "0x1F",
    "'s'",
    "N'n'",
    "@v",
    "@@ROWCOUNT",
    "(",
    ")",
    "(",
    ")",
    ",",
    ",",
    ";",
    ".",
    "=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    ">",
    "<=",
    "<>",
    "!=",
    "+=",
    ":",
    "::",
    "~",
    "&",
    "|",
    "^",
    "value",
    "nodes",
    "COUNT(*)",
    "GO",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..48).prop_map(|t| t.join(" "))
}

/// Random expression trees of the shapes the parser builds.
fn expr_tree() -> impl Strategy<Value = Expr> {
    let ident = prop::sample::select(vec!["a", "b", "c1", "dbo", "[weird col]", "\"dq\"", "#t"]);
    let leaf = prop_oneof![
        (0u32..1000).prop_map(|n| lit(Literal::Integer(n.to_string()))),
        Just(lit(Literal::Decimal("1.5".into()))),
        Just(lit(Literal::Float("2E3".into()))),
        Just(lit(Literal::Money("9.99".into()))),
        "[a-z' ]{0,6}".prop_map(|s| lit(Literal::String { value: s, unicode: false })),
        Just(lit(Literal::Binary(vec![0xAB, 0x01]))),
        Just(lit(Literal::Null)),
        Just(Expr::new(ExprKind::Variable("@v".into()))),
        Just(Expr::new(ExprKind::SystemVariable("@@SPID".into()))),
        prop::collection::vec(ident, 1..4).prop_map(|parts| {
            let parts = parts.into_iter().map(parse_ident).collect();
            Expr::new(ExprKind::Column(ObjectName { parts }))
        }),
        Just(Expr::new(ExprKind::Niladic(Niladic::CurrentTimestamp))),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        let ops = prop::sample::select(vec![
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Mod,
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::BitAnd,
            BinaryOp::BitOr,
            BinaryOp::BitXor,
            BinaryOp::Eq,
            BinaryOp::NotEq,
            BinaryOp::Lt,
            BinaryOp::GtEq,
            BinaryOp::NotLt,
            BinaryOp::And,
            BinaryOp::Or,
        ]);
        let unary = prop::sample::select(vec![UnaryOp::Plus, UnaryOp::Minus, UnaryOp::BitNot, UnaryOp::Not]);
        prop_oneof![
            (ops, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::new(ExprKind::Binary {
                op,
                left: Box::new(l),
                right: Box::new(r)
            })),
            (unary, inner.clone()).prop_map(|(op, e)| Expr::new(ExprKind::Unary { op, expr: Box::new(e) })),
            (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(e, p, negated)| Expr::new(ExprKind::Like {
                expr: Box::new(e),
                pattern: Box::new(p),
                escape: None,
                negated
            })),
            (inner.clone(), inner.clone(), inner.clone(), any::<bool>()).prop_map(|(e, lo, hi, negated)| Expr::new(
                ExprKind::Between { expr: Box::new(e), low: Box::new(lo), high: Box::new(hi), negated }
            )),
            (inner.clone(), prop::collection::vec(inner.clone(), 1..4), any::<bool>())
                .prop_map(|(e, list, negated)| { Expr::new(ExprKind::InList { expr: Box::new(e), list, negated }) }),
            (inner.clone(), any::<bool>())
                .prop_map(|(e, negated)| Expr::new(ExprKind::IsNull { expr: Box::new(e), negated })),
            (
                prop::option::of(inner.clone()),
                prop::collection::vec((inner.clone(), inner.clone()), 1..3),
                prop::option::of(inner.clone())
            )
                .prop_map(|(operand, branches, else_result)| Expr::new(ExprKind::Case(Box::new(Case {
                    operand,
                    branches,
                    else_result
                })))),
            (prop::collection::vec(inner.clone(), 0..3), any::<bool>()).prop_map(|(args, distinct)| {
                let distinct = distinct && !args.is_empty();
                Expr::new(ExprKind::Function(Box::new(FunctionCall {
                    name: ObjectName { parts: vec![Ident::plain("fn")] },
                    args,
                    star: false,
                    distinct,
                    within_group: Vec::new(),
                    over: None,
                })))
            }),
            inner.clone().prop_map(|e| Expr::new(ExprKind::Cast {
                expr: Box::new(e),
                data_type: DataType {
                    name: ObjectName { parts: vec![Ident::plain("varchar")] },
                    args: vec![types::TypeArg::Max]
                },
                try_cast: false
            })),
            inner.clone().prop_map(|e| Expr::new(ExprKind::Collate {
                expr: Box::new(e),
                collation: Ident::plain("Latin1_General_CI_AS")
            })),
            (inner.clone(), inner.clone())
                .prop_map(|(e, z)| Expr::new(ExprKind::AtTimeZone { expr: Box::new(e), zone: Box::new(z) })),
            (inner.clone(), inner).prop_map(|(t, a)| Expr::new(ExprKind::MethodCall {
                target: Box::new(t),
                method: Ident::plain("value"),
                args: vec![a]
            })),
        ]
    })
}

fn lit(l: Literal) -> Expr {
    Expr::new(ExprKind::Literal(l))
}

fn parse_ident(s: &str) -> Ident {
    match s.as_bytes()[0] {
        b'[' => Ident { value: s[1..s.len() - 1].to_string(), quote: QuoteStyle::Bracket },
        b'"' => Ident { value: s[1..s.len() - 1].to_string(), quote: QuoteStyle::Double },
        _ => Ident::plain(s),
    }
}

/// A method call on a one-part column would print as a two-part function name; the
/// parser only makes method calls on columns for the XML methods, which `value` is, and
/// reads `c.value(x)` back as a method on column `c`: equal. A column target with more
/// parts reads back the same way. So every generated tree is one the parser produces.
fn expr_round_trips(e: &Expr) {
    let printed = e.to_string();
    let parsed = parse_expression(&printed).unwrap_or_else(|err| panic!("{printed:?}: {err}\n{e:#?}"));
    assert_eq!(&parsed, e, "{printed}");
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The corpus batches as token texts, for mutation.
fn corpus_token_lists() -> Vec<Vec<String>> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        for (_, batch, _) in sql::split_batches(&text) {
            let toks = sql::lexer::tokenize(&batch).unwrap();
            out.push(toks.iter().map(|t| t.text(&batch).to_string()).filter(|t| !t.is_empty()).collect());
        }
    }
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Insert(usize, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (any::<usize>(), prop::sample::select(VOCABULARY)).prop_map(|(a, w)| Mutation::Insert(a, w)),
    ]
}

fn mutate(mut toks: Vec<String>, muts: &[Mutation]) -> String {
    for m in muts {
        if toks.is_empty() {
            break;
        }
        let n = toks.len();
        match *m {
            Mutation::Delete(i) => {
                toks.remove(i % n);
            }
            Mutation::Duplicate(i) => {
                let t = toks[i % n].clone();
                toks.insert(i % n, t);
            }
            Mutation::Swap(a, b) => toks.swap(a % n, b % n),
            Mutation::Insert(i, w) => toks.insert(i % (n + 1), w.to_string()),
        }
    }
    toks.join(" ")
}

proptest! {
    // PROPTEST_CASES=n runs longer searches.
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn mutated_corpus_never_panics_and_round_trips(
        pick in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        thread_local! {
            static CORPUS: Vec<Vec<String>> = corpus_token_lists();
        }
        let text = CORPUS.with(|c| mutate(c[pick.index(c.len())].clone(), &muts));
        check_round_trip(&text);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_batch(&text);
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,120}") {
        let _ = parse_batch(&text);
    }

    #[test]
    fn token_soups_never_panic_and_round_trip(text in token_soup()) {
        check_round_trip(&text);
    }

    #[test]
    fn expression_trees_round_trip(e in expr_tree()) {
        expr_round_trips(&e);
    }
}

#[test]
fn deep_nesting_is_error_191_not_a_stack_overflow() {
    const N: usize = 10_000;
    let inputs: Vec<(&str, String)> = vec![
        ("parentheses", format!("SELECT {}1{}", "(".repeat(N), ")".repeat(N))),
        ("unclosed parentheses", format!("SELECT {}", "(".repeat(N))),
        ("subqueries", format!("SELECT {}1{}", "(SELECT ".repeat(N), ")".repeat(N))),
        ("derived tables", format!("SELECT * FROM {}t{}", "(SELECT * FROM ".repeat(N), ") x".repeat(N))),
        // (`--` would start a comment, so the minus signs are spaced.)
        ("bitwise not", format!("SELECT {}1", "~".repeat(N))),
        ("unary minus spaced", format!("SELECT {}1", "- ".repeat(N))),
        ("NOT", format!("SELECT 1 WHERE {}1 = 1", "NOT ".repeat(N))),
        ("CASE", format!("SELECT {}1{}", "CASE WHEN 1 = 1 THEN ".repeat(N), " END".repeat(N))),
        ("function calls", format!("SELECT {}1{}", "f(".repeat(N), ")".repeat(N))),
        ("IN lists", format!("SELECT 1 WHERE {}1{}", "1 IN (".repeat(N), ")".repeat(N))),
        ("EXISTS", format!("SELECT 1 WHERE {}1 = 1{}", "EXISTS (SELECT 1 WHERE ".repeat(N), ")".repeat(N))),
        ("nested joins", format!("SELECT * FROM {}t{}", "(t JOIN ".repeat(N), " ON 1 = 1)".repeat(N))),
        ("BEGIN blocks", format!("{}SELECT 1{}", "BEGIN ".repeat(N), " END".repeat(N))),
        ("IF", format!("{}SELECT 1", "IF 1 = 1 ".repeat(N))),
        ("ELSE IF", format!("IF 1 = 1 SELECT 1{}", " ELSE IF 1 = 1 SELECT 1".repeat(N))),
        ("WHILE", format!("{}BREAK", "WHILE 1 = 1 ".repeat(N))),
        ("TRY", format!("{}SELECT 1{}", "BEGIN TRY ".repeat(N), " END TRY BEGIN CATCH END CATCH".repeat(N))),
        ("COLLATE", format!("SELECT a{}", " COLLATE x".repeat(N))),
        ("method calls", format!("SELECT @x{}", ".value('a', 'int')".repeat(N))),
        ("long + chain", format!("SELECT 1{}", " + 1".repeat(10 * N))),
        ("long OR chain", format!("SELECT 1 WHERE a = 1{}", " OR a = 1".repeat(10 * N))),
        ("long UNION chain", format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(10 * N))),
        ("option values", format!("CREATE TABLE t (a int) WITH {}", "(x = ".repeat(N))),
        ("signed values", format!("EXEC p {}1", "- ".repeat(N))),
    ];
    for (name, text) in inputs {
        let err = on_small_stack(move || parse_batch(&text).map(|_| ()).unwrap_err());
        assert_eq!((err.number, err.severity, err.line), (191, 15, 1), "{name}: {err}");
        assert_eq!(
            err.message,
            "Some part of your SQL statement is nested too deeply. Rewrite the query or break it up into smaller queries."
        );
    }
}

#[test]
fn deepest_accepted_inputs_fit_a_small_stack() {
    // Just inside the limits: parse, print, re-parse, compare and drop on 1 MiB.
    let inputs: Vec<String> = vec![
        format!("SELECT {}1{}", "(".repeat(120), ")".repeat(120)),
        format!("SELECT {}1{}", "(SELECT ".repeat(60), ")".repeat(60)),
        format!("{}SELECT 1{}", "BEGIN ".repeat(120), " END".repeat(120)),
        format!("SELECT 1{}", " + 1".repeat(2000)),
        format!("SELECT 1 WHERE a = 1{}", " OR a = 1".repeat(2000)),
        format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(2000)),
    ];
    for text in inputs {
        on_small_stack(move || check_round_trip(&text));
    }
    // And they do parse.
    assert!(parse_batch(&format!("SELECT 1{}", " + 1".repeat(2000))).is_ok());
    assert!(parse_batch(&format!("SELECT {}1{}", "(".repeat(120), ")".repeat(120))).is_ok());
}
