//! The shapes the parser builds for constructs where T-SQL's rules are subtle:
//! precedence, statement boundaries, names that are methods, spans and lines.

use sql::ast::*;
use sql::{parse_batch, parse_expression};

fn one(sql: &str) -> StatementKind {
    let mut b = parse_batch(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(b.statements.len(), 1, "{sql}: {:?}", b.statements);
    b.statements.remove(0).kind
}

fn expr(sql: &str) -> Expr {
    parse_expression(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The expression printed with explicit parentheses around every operator, to check
/// the tree shape.
fn shape(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Binary { op, left, right } => format!("({} {op:?} {})", shape(left), shape(right)),
        ExprKind::Unary { op, expr } => format!("({op:?} {})", shape(expr)),
        ExprKind::Like { expr, pattern, negated, .. } => {
            format!("({} like{} {})", shape(expr), if *negated { "!" } else { "" }, shape(pattern))
        }
        ExprKind::Between { expr, low, high, .. } => {
            format!("({} between {} {})", shape(expr), shape(low), shape(high))
        }
        ExprKind::IsNull { expr, negated } => format!("({} isnull{})", shape(expr), if *negated { "!" } else { "" }),
        ExprKind::AtTimeZone { expr, zone } => format!("({} @tz {})", shape(expr), shape(zone)),
        ExprKind::Collate { expr, collation } => format!("({} collate {})", shape(expr), collation.value),
        ExprKind::MethodCall { target, method, .. } => format!("({}.{}())", shape(target), method.value),
        _ => e.to_string(),
    }
}

#[test]
fn operator_precedence() {
    let cases = [
        ("1 + 2 * 3", "(1 Add (2 Mul 3))"),
        ("1 - 2 - 3", "((1 Sub 2) Sub 3)"),
        ("1 + 2 & 3", "((1 Add 2) BitAnd 3)"),
        ("-a * b", "((Minus a) Mul b)"),
        ("~a + 1", "((BitNot a) Add 1)"),
        ("a OR b AND c", "(a Or (b And c))"),
        ("NOT a = 1 AND b = 2", "((Not (a Eq 1)) And (b Eq 2))"),
        ("a = 1 OR NOT b LIKE 'x%'", "((a Eq 1) Or (Not (b like 'x%')))"),
        ("a + 1 BETWEEN 2 AND 3 AND c IS NOT NULL", "(((a Add 1) between 2 3) And (c isnull!))"),
        ("a NOT LIKE b + 'c'", "(a like! (b Add 'c'))"),
        ("d AT TIME ZONE 'UTC' AT TIME ZONE 'Pacific Standard Time'", "((d @tz 'UTC') @tz 'Pacific Standard Time')"),
        ("a + b COLLATE Latin1_General_CS_AS", "(a Add (b collate Latin1_General_CS_AS))"),
        ("x.value('a', 'int') + 1", "((x.value()) Add 1)"),
        ("(a + b) * c", "((a Add b) Mul c)"),
        ("a * (b + c)", "(a Mul (b Add c))"),
        ("1 - -1", "(1 Sub (Minus 1))"),
    ];
    for (sql, want) in cases {
        assert_eq!(shape(&expr(sql)), want, "{sql}");
    }
}

#[test]
fn xml_methods_on_columns_variables_and_expressions() {
    let e = expr("ed.value(N'(event/@timestamp)[1]', N'datetime')");
    let ExprKind::MethodCall { target, method, args } = &e.kind else { panic!("{e:?}") };
    assert_eq!(method.value, "value");
    assert_eq!(args.len(), 2);
    assert!(matches!(&target.kind, ExprKind::Column(n) if n.parts.len() == 1 && n.parts[0].value == "ed"));
    // A two-part name with another last part is a function call.
    assert!(matches!(expr("dbo.fn(1)").kind, ExprKind::Function(_)));
    assert!(matches!(expr("@x.query('.')").kind, ExprKind::MethodCall { .. }));
    assert!(matches!(expr("CAST(c AS xml).exist('/a')").kind, ExprKind::MethodCall { .. }));
    let StatementKind::Query(q) = one("SELECT c.value('.', 'int') FROM t CROSS APPLY t.x.nodes('/r') AS n(c)") else {
        panic!()
    };
    let SetExpr::Select(s) = &q.body else { panic!() };
    let TableFactor::XmlNodes { target, alias, .. } = &s.from[0].joins[0].relation else { panic!() };
    assert_eq!(target.to_string(), "t.x");
    assert_eq!(alias.as_ref().map(|a| a.columns.len()), Some(1));
}

#[test]
fn select_list_forms() {
    let StatementKind::Query(q) =
        one("SELECT event = SUBSTRING([object_name], 12, 5), @v = 1, @w += 2, x AS y, z w, 'lit' 'alias', t.*, *")
    else {
        panic!()
    };
    let SetExpr::Select(s) = &q.body else { panic!() };
    let aliases: Vec<String> = s
        .items
        .iter()
        .map(|i| match i {
            SelectItem::Expr { alias, .. } => alias.as_ref().map(|a| a.value.clone()).unwrap_or_default(),
            SelectItem::Assign { variable, op, .. } => format!("{variable}{op}"),
            SelectItem::Wildcard(q) => format!("*{}", q.as_ref().map(|n| n.to_string()).unwrap_or_default()),
        })
        .collect();
    assert_eq!(aliases, ["event", "@v=", "@w+=", "y", "w", "alias", "*t", "*"]);
}

#[test]
fn statement_boundaries() {
    // Statements may follow each other without `;`, even on one line.
    let b = parse_batch("SET NOCOUNT ON; DECLARE @i int = 1 SELECT @i SET @i += 1 PRINT @i").unwrap();
    assert_eq!(b.statements.len(), 5);
    // ROLLBACK TRANSACTION takes the next word as its name (hence THROW's `;` rule).
    assert!(matches!(
        one("ROLLBACK TRANSACTION THROW"),
        StatementKind::Rollback { name: Some(NameRef::Name(n)) } if n.value == "THROW"
    ));
    // A batch that starts with a name runs that procedure...
    let StatementKind::Exec(e) = one("sp_who2 active") else { panic!() };
    assert_eq!(e.args[0].value.as_name(), Some("active"));
    // ... but only the first statement may.
    assert_eq!(parse_batch("SELECT 1; sp_who2").unwrap_err().number, 102);
    // Labels.
    let b = parse_batch("GOTO done\nPRINT 1\ndone:\nPRINT 2").unwrap();
    assert!(matches!(&b.statements[2].kind, StatementKind::Label(l) if l.value == "done"));
    // `;` before ELSE.
    assert!(matches!(one("IF 1 = 1 SELECT 1; ELSE SELECT 2"), StatementKind::If { else_branch: Some(_), .. }));
    // A CTE attaches to the statement after it.
    assert!(matches!(one("WITH c AS (SELECT 1 AS x) DELETE FROM c"), StatementKind::Delete(d) if d.with.len() == 1));
}

#[test]
fn procedure_bodies_run_to_the_end_of_the_batch() {
    let src = "CREATE PROCEDURE p @a int = 5, @b int OUTPUT AS\nBEGIN\n  SELECT @a\nEND\nSELECT 2 -- still the body\n";
    let b = parse_batch(src).unwrap();
    assert_eq!(b.statements.len(), 1);
    let StatementKind::CreateProcedure(p) = &b.statements[0].kind else { panic!() };
    assert_eq!(p.body.len(), 2);
    assert_eq!(p.params.len(), 2);
    assert!(p.params[1].output);
    assert_eq!(p.body_span.text(src), "BEGIN\n  SELECT @a\nEND\nSELECT 2");
    assert_eq!(b.statements[0].span.text(src), src.trim_end().trim_end_matches("-- still the body").trim_end());
}

#[test]
fn spans_and_lines() {
    let src = "SELECT 1\n\nSELECT a\n  FROM t\n  WHERE b = 1 / 0;\nPRINT 'x'";
    let b = parse_batch(src).unwrap();
    let lines: Vec<u32> = b.statements.iter().map(|s| s.line()).collect();
    assert_eq!(lines, [1, 3, 6]);
    assert_eq!(b.statements[1].span.text(src), "SELECT a\n  FROM t\n  WHERE b = 1 / 0");
    let StatementKind::Query(q) = &b.statements[1].kind else { panic!() };
    let SetExpr::Select(s) = &q.body else { panic!() };
    let w = s.where_clause.as_ref().unwrap();
    let ExprKind::Binary { right, .. } = &w.kind else { panic!() };
    // The division (which can fail at run time) knows its line and text.
    assert_eq!((right.span.line, right.span.column, right.span.text(src)), (5, 13, "1 / 0"));
}

#[test]
fn other_statements_keep_their_text() {
    let src = "MERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE;\nUPDATE STATISTICS t WITH FULLSCAN\nSELECT 1";
    let b = parse_batch(src).unwrap();
    assert_eq!(b.statements.len(), 3);
    let StatementKind::Merge(m) = &b.statements[0].kind else { panic!() };
    assert_eq!(
        (m.clauses.len(), b.statements[0].span.text(src)),
        (1, "MERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE")
    );
    let StatementKind::Other { keyword, text } = &b.statements[1].kind else { panic!() };
    assert_eq!((keyword.as_str(), text.as_str()), ("UPDATE STATISTICS", "UPDATE STATISTICS t WITH FULLSCAN"));
}

#[test]
fn database_and_file_options() {
    let StatementKind::CreateDatabase(db) =
        one("CREATE DATABASE d ON (name = N'd_data', size = 32768MB, filegrowth = 10%, filename = N'K:\\d.mdf') \
         LOG ON (name = d_log, size = 1GB, maxsize = UNLIMITED, filename = 'J:\\d.ldf')")
    else {
        panic!()
    };
    assert_eq!(db.files[0].name.as_ref().and_then(|n| n.as_name()), Some("d_data"));
    assert_eq!(db.files[0].size, Some(Size { value: 32768, unit: Some(SizeUnit::Mb) }));
    assert_eq!(db.files[0].file_growth, Some(Size { value: 10, unit: Some(SizeUnit::Percent) }));
    assert_eq!(db.log_files[0].name.as_ref().and_then(|n| n.as_name()), Some("d_log"));
    assert_eq!(db.log_files[0].max_size, Some(MaxSize::Unlimited));
    let StatementKind::AlterDatabase(a) =
        one("ALTER DATABASE d SET DELAYED_DURABILITY = ALLOWED, TARGET_RECOVERY_TIME = 60 SECONDS, AUTO_CLOSE OFF")
    else {
        panic!()
    };
    let AlterDatabaseAction::Set { options, .. } = &a.action else { panic!() };
    assert_eq!(options[0], DatabaseOption::DelayedDurability(DelayedDurability::Allowed));
    assert_eq!(options[1], DatabaseOption::TargetRecoveryTime { value: 60, unit: TimeUnit::Seconds });
    assert!(matches!(&options[2], DatabaseOption::Other(o) if o.is("AUTO_CLOSE") && !o.equals));
}

#[test]
fn commit_with_delayed_durability_and_event_sessions() {
    assert!(matches!(
        one("COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON)"),
        StatementKind::Commit { name: None, delayed_durability: Some(true) }
    ));
    let StatementKind::EventSession(es) = one(
        "CREATE EVENT SESSION s ON SERVER ADD EVENT sqlserver.checkpoint_end (ACTION (package0.event_sequence) WHERE sqlserver.database_id = 5) \
         ADD TARGET package0.event_file (SET filename = N'x.xel', max_file_size = 128) WITH (MAX_MEMORY = 4096 KB, TRACK_CAUSALITY = ON)",
    ) else {
        panic!()
    };
    let EventSessionClause::AddEvent(ev) = &es.clauses[0] else { panic!() };
    assert_eq!(ev.name.to_string(), "sqlserver.checkpoint_end");
    assert_eq!(ev.actions.len(), 1);
    assert!(ev.predicate.is_some());
    let EventSessionClause::AddTarget(t) = &es.clauses[1] else { panic!() };
    assert_eq!(t.set.len(), 2);
    assert!(matches!(&es.options[0].value, Some(OptionValue::Quantity { unit, .. }) if unit == "KB"));
    assert!(
        matches!(one("ALTER EVENT SESSION s ON SERVER STATE = STOP"), StatementKind::EventSession(e) if e.state == Some(false))
    );
}

#[test]
fn backup_restore_and_dbcc() {
    let StatementKind::Backup(b) =
        one("BACKUP DATABASE db TO DISK = 'NUL' WITH COPY_ONLY, STATS = 5, BUFFERCOUNT = 50, RETAINDAYS = 3")
    else {
        panic!()
    };
    assert_eq!(b.options.len(), 4);
    assert!(matches!(b.options[0], BackupOption::CopyOnly));
    assert!(matches!(&b.options[3], BackupOption::Other(o) if o.is("RETAINDAYS")));
    let StatementKind::Restore(r) = one("RESTORE DATABASE db FROM DISK = 'b' WITH MOVE 'a' TO 'c', NORECOVERY") else {
        panic!()
    };
    assert!(matches!(&r.options[0], RestoreOption::Move { .. }));
    let StatementKind::Dbcc(d) = one("DBCC SQLPERF('sys.dm_os_wait_stats', CLEAR)") else { panic!() };
    assert_eq!(d.command, "SQLPERF");
    assert_eq!(d.args.iter().map(|a| a.as_name().unwrap_or("")).collect::<Vec<_>>(), ["sys.dm_os_wait_stats", "CLEAR"]);
}

#[test]
fn set_options_from_client_logins() {
    assert_eq!(
        one("SET ANSI_NULLS, QUOTED_IDENTIFIER ON"),
        StatementKind::SetOption(SetOption::Flags {
            names: vec!["ANSI_NULLS".into(), "QUOTED_IDENTIFIER".into()],
            on: true
        })
    );
    assert_eq!(
        one("SET STATISTICS IO, TIME OFF"),
        StatementKind::SetOption(SetOption::Flags {
            names: vec!["STATISTICS IO".into(), "STATISTICS TIME".into()],
            on: false
        })
    );
    assert!(
        matches!(one("SET LOCK_TIMEOUT -1"), StatementKind::SetOption(SetOption::Value { name, .. }) if name == "LOCK_TIMEOUT")
    );
    assert!(matches!(
        one("set transaction isolation level snapshot"),
        StatementKind::SetOption(SetOption::IsolationLevel(IsolationLevel::Snapshot))
    ));
}

#[test]
fn keywords_are_case_insensitive_and_nonreserved_words_are_names() {
    let StatementKind::Query(q) = one("select name, size, filename, [select] from sys.database_files") else {
        panic!()
    };
    let SetExpr::Select(s) = &q.body else { panic!() };
    assert_eq!(s.items.len(), 4);
    // A reserved word needs delimiters.
    let e = parse_batch("SELECT key FROM t").unwrap_err();
    assert_eq!((e.number, e.message.as_str()), (156, "Incorrect syntax near the keyword 'key'."));
}

#[test]
fn merge_clauses() {
    let StatementKind::Merge(m) =
        one("MERGE INTO t WITH (HOLDLOCK) AS x USING (VALUES (1, 2)) AS s (a, b) ON x.a = s.a \
         WHEN MATCHED AND s.b IS NULL THEN DELETE WHEN MATCHED THEN UPDATE SET b = s.b \
         WHEN NOT MATCHED THEN INSERT (a, b) VALUES (s.a, s.b) \
         WHEN NOT MATCHED BY SOURCE THEN DELETE OUTPUT $action, inserted.*;")
    else {
        panic!()
    };
    assert_eq!(m.alias.as_ref().map(|a| a.value.as_str()), Some("x"));
    let whens: Vec<MergeWhen> = m.clauses.iter().map(|c| c.when).collect();
    assert_eq!(
        whens,
        vec![MergeWhen::Matched, MergeWhen::Matched, MergeWhen::NotMatchedByTarget, MergeWhen::NotMatchedBySource]
    );
    assert!(matches!(m.clauses[0].action, MergeAction::Delete) && m.clauses[0].condition.is_some());
    assert!(
        matches!(&m.clauses[2].action, MergeAction::Insert { columns, values: Some(v) } if columns.len() == 2 && v.len() == 2)
    );
    assert_eq!(m.output.len(), 1);
    // The target is not aliased USING.
    let StatementKind::Merge(m) = one("MERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE;") else { panic!() };
    assert!(m.alias.is_none());
}
