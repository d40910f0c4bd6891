//! The checks SQL Server makes when it compiles a batch or a module's body, before any
//! statement runs: a batch that fails them runs nothing, and CREATE PROCEDURE, FUNCTION
//! or TRIGGER fails. Labels and variables belong to the whole batch or body whatever
//! block declares them, so these look at every statement of it:
//! - 132: a label declared twice; 133: GOTO to a label not declared;
//! - 134: a variable (scalar, table or cursor variable, or a parameter) declared twice;
//! - 135 / 136: BREAK / CONTINUE outside a WHILE loop;
//! - 137 / 1087: a variable used before any DECLARE of it in the text (found in the
//!   text's tokens: every statement kind names variables its own way);
//! - 11717-11723: NEXT VALUE FOR where SQL Server does not allow it.
//!
//! Name resolution is deferred (a missing table is an error when its statement runs),
//! as in SQL Server; the binding checks of SELECTs are `batch::compile_check`'s.

use types::SqlError;

use crate::ast::*;
use crate::lexer::TokenKind;

use super::errors;

/// The first compile error of `body` (a batch, or a module body whose parameters are
/// `params`, with their `@`), with its line. `source` is the text the statements' spans
/// point into (the batch, or the CREATE statement of a module).
pub(crate) fn check_body(source: &str, body: &[Statement], params: &[&str]) -> Option<SqlError> {
    // Parameters are declared before the body's first character.
    let mut w = Walk {
        labels: Vec::new(),
        declared_at: params.iter().map(|p| (p.to_ascii_lowercase(), 0)).collect(),
        gotos: Vec::new(),
    };
    if let Err(e) = w.block(body, false) {
        return Some(e);
    }
    if let Some((label, line)) = w.gotos.iter().find(|(label, _)| !w.labels.contains(&label.to_ascii_lowercase())) {
        return Some(
            SqlError::new(
                133,
                15,
                1,
                format!("A GOTO statement references the label '{label}' but the label has not been declared."),
            )
            .at_line(*line),
        );
    }
    // A module's CREATE is alone in its batch; its own check covers its text.
    let module = matches!(
        body.first().map(|s| &s.kind),
        Some(
            StatementKind::CreateProcedure(_)
                | StatementKind::CreateFunction(_)
                | StatementKind::CreateTrigger(_)
                | StatementKind::CreateView(_)
        )
    );
    let module_batch = module && params.is_empty() && body.len() == 1;
    let starts_with_call = matches!(body.first().map(|s| &s.kind), Some(StatementKind::Exec(_)));
    let undeclared = if module_batch { None } else { undeclared_variable(source, &w.declared_at, starts_with_call) };
    undeclared.or_else(|| mentions_next_value(source).then(|| next_value_contexts(body)).flatten())
}

/// Could the text use NEXT VALUE FOR at all (the context checks are skipped otherwise)?
fn mentions_next_value(source: &str) -> bool {
    source.as_bytes().windows(10).any(|w| w.eq_ignore_ascii_case(b"NEXT VALUE"))
}

/// Where NEXT VALUE FOR may not stand (SQL Server's 11717-11723): in a module, view,
/// constraint, computed column, subquery, CTE or derived table (11719); in a WHERE,
/// GROUP BY, HAVING, ON, TOP or ORDER BY clause (11720); in a DISTINCT or set-operator
/// query (11721); without OVER in a query with ORDER BY (11723); with OVER in an UPDATE
/// (11717).
fn next_value_contexts(body: &[Statement]) -> Option<SqlError> {
    crate::ast::find_statement(body, &mut |s| {
        let e = |number: i32| Some(SqlError::new(number, 15, 1, next_value_message(number)).at_line(s.line()));
        let not_allowed = |what: &str| -> bool { what.contains("NEXT VALUE FOR") };
        match &s.kind {
            StatementKind::Query(q) => query_contexts(q, true).and_then(|n| e(n)),
            StatementKind::Insert(i) => match &i.source {
                InsertSource::Query(q) => query_contexts(q, true).and_then(|n| e(n)),
                _ => None,
            },
            StatementKind::Update(u) => {
                let over = u.assignments.iter().any(|a| {
                    let mut found = false;
                    walk_expr(&a.value, &mut |x| {
                        found |= matches!(&x.kind, ExprKind::NextValueFor { over: Some(_), .. })
                    });
                    found
                });
                if over {
                    return e(11717);
                }
                u.where_clause.as_ref().filter(|w| not_allowed(&w.to_string())).and_then(|_| e(11720))
            }
            StatementKind::CreateView(v) if not_allowed(&v.query.to_string()) => e(11719),
            // Procedures and triggers may draw values; functions may not.
            StatementKind::CreateFunction(_) if not_allowed(&s.kind.to_string()) => e(11719),
            StatementKind::CreateTable(t) => {
                let bad = t.elements.iter().any(|el| match el {
                    TableElement::Column(c) => {
                        c.computed.as_ref().is_some_and(|x| not_allowed(&x.expr.to_string()))
                            || c.options.iter().any(
                                |o| matches!(o, ColumnOption::Check { expr, .. } if not_allowed(&expr.to_string())),
                            )
                    }
                    TableElement::Constraint(TableConstraint { kind: ConstraintKind::Check { expr, .. }, .. }) => {
                        not_allowed(&expr.to_string())
                    }
                    _ => false,
                });
                if bad {
                    e(11719)
                } else {
                    None
                }
            }
            _ => None,
        }
    })
}

/// The context error number for NEXT VALUE FOR in a top-level query, if any.
fn query_contexts(q: &Query, top: bool) -> Option<i32> {
    let has = |e: &Expr| e.to_string().contains("NEXT VALUE FOR");
    // Subqueries, CTEs and derived tables.
    if q.with.iter().any(|c| c.query.to_string().contains("NEXT VALUE FOR")) {
        return Some(11719);
    }
    let SetExpr::Select(sel) = &q.body else {
        // UNION, INTERSECT, EXCEPT or a parenthesized query.
        return q.to_string().contains("NEXT VALUE FOR").then_some(11721);
    };
    let items: Vec<&Expr> = sel
        .items
        .iter()
        .filter_map(|i| match i {
            SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => Some(expr),
            SelectItem::Wildcard(_) => None,
        })
        .collect();
    let mut in_subquery = false;
    let mut bare = false;
    for e in &items {
        walk_expr(e, &mut |x| match &x.kind {
            ExprKind::Subquery(sq) | ExprKind::Exists(sq) => in_subquery |= sq.to_string().contains("NEXT VALUE FOR"),
            ExprKind::InSubquery { query, .. } => in_subquery |= query.to_string().contains("NEXT VALUE FOR"),
            ExprKind::NextValueFor { over: None, .. } => bare = true,
            _ => {}
        });
    }
    let derived = sel.from.iter().any(|t| {
        let mut found = false;
        for_each_factor(std::slice::from_ref(t), &mut |f| {
            if let TableFactor::Derived { query, .. } = f {
                found |= query.to_string().contains("NEXT VALUE FOR");
            }
        });
        found
    });
    if in_subquery || derived {
        return Some(11719);
    }
    let clauses = sel.where_clause.iter().chain(sel.having.iter()).chain(sel.top.as_ref().map(|t| &t.quantity));
    let ons = sel.from.iter().flat_map(|t| t.joins.iter().filter_map(|j| j.on.as_ref()));
    let grouped = sel.group_by.iter().any(|g| g.to_string().contains("NEXT VALUE FOR"));
    if clauses.chain(ons).any(has) || grouped || q.order_by.iter().any(|o| has(&o.expr)) {
        return Some(11720);
    }
    let used = items.iter().any(|e| has(e));
    if used && sel.distinct {
        return Some(11721);
    }
    if bare && top && !q.order_by.is_empty() {
        return Some(11723);
    }
    None
}

fn next_value_message(number: i32) -> &'static str {
    match number {
        11717 => "NEXT VALUE FOR function does not support the OVER clause in default constraints, UPDATE statements, or MERGE statements.",
        11719 => "NEXT VALUE FOR function is not allowed in check constraints, default objects, computed columns, views, user-defined functions, user-defined aggregates, user-defined table types, sub-queries, common table expressions, derived tables or return statements.",
        11720 => "NEXT VALUE FOR function is not allowed in the TOP, OVER, OUTPUT, ON, WHERE, GROUP BY, HAVING, or ORDER BY clauses.",
        11721 => "NEXT VALUE FOR function cannot be used directly in a statement that uses a DISTINCT, UNION, UNION ALL, EXCEPT or INTERSECT operator.",
        _ => "NEXT VALUE FOR function cannot be used directly in a statement that contains an ORDER BY clause unless the OVER clause is specified.",
    }
}

/// 137 (1087 where a table belongs) for the first variable the text uses before any
/// DECLARE of it (SQL Server checks declaration against the text's order, not the order
/// statements run in). The parameter names of a procedure call (`EXEC p @name = value`)
/// are not variables.
fn undeclared_variable(source: &str, declared_at: &[(String, u32)], starts_with_call: bool) -> Option<SqlError> {
    if !source.contains('@') {
        return None;
    }
    let tokens = crate::lexer::tokenize(source).ok()?;
    let word = |t: &crate::lexer::Token, w: &str| {
        matches!(t.kind, TokenKind::Word | TokenKind::Keyword) && t.text(source).eq_ignore_ascii_case(w)
    };
    // In the arguments of a procedure call: `Some(first)`, `first` while no argument has
    // been read yet (`EXEC @rc = p` names a variable, `EXEC p @a = 1` a parameter).
    let mut call: Option<bool> = None;
    // A call at the start of a batch needs no EXEC.
    if starts_with_call
        && tokens.first().is_some_and(|t| matches!(t.kind, TokenKind::Word | TokenKind::QuotedIdent { .. }))
    {
        call = Some(false);
    }
    // After FETCH, INTO names variables; after INSERT or OUTPUT, a table.
    let mut fetching = false;
    for (i, t) in tokens.iter().enumerate() {
        if word(t, "FETCH") {
            fetching = true;
        } else if ["SELECT", "INSERT", "UPDATE", "DELETE", "SET", "OUTPUT", "MERGE"].iter().any(|w| word(t, w)) {
            fetching = false;
        }
        if word(t, "EXEC") || word(t, "EXECUTE") {
            call = Some(true);
            continue;
        }
        if let Some(first) = call {
            let in_args = match &t.kind {
                TokenKind::Variable
                | TokenKind::Eq
                | TokenKind::Comma
                | TokenKind::Dot
                | TokenKind::Minus
                | TokenKind::QuotedIdent { .. }
                | TokenKind::Word => true,
                k if k.is_constant() => true,
                _ => word(t, "OUTPUT") || word(t, "OUT") || word(t, "DEFAULT") || word(t, "NULL"),
            };
            if !in_args {
                call = None;
            } else {
                call = Some(false);
                let named = t.kind == TokenKind::Variable && tokens.get(i + 1).is_some_and(|n| n.kind == TokenKind::Eq);
                if named && !first {
                    // A parameter's name.
                    continue;
                }
            }
        }
        if t.kind != TokenKind::Variable {
            continue;
        }
        let name = t.text(source);
        let known = declared_at.iter().any(|(n, at)| *at <= t.span.start && n.eq_ignore_ascii_case(name));
        if known {
            continue;
        }
        let table = i > 0
            && (["FROM", "JOIN", "UPDATE", "TABLE", "INSERT", "DELETE"].iter().any(|w| word(&tokens[i - 1], w))
                || (!fetching && word(&tokens[i - 1], "INTO")));
        let e = if table { errors::must_declare_table(name) } else { errors::must_declare(name) };
        return Some(e.at_line(t.span.line));
    }
    None
}

struct Walk {
    /// Labels seen (lower-case: labels, like variables, ignore case).
    labels: Vec<String>,
    /// Each variable declared, with where its DECLARE starts in the source.
    declared_at: Vec<(String, u32)>,
    /// GOTO targets, checked once every label is known (GOTO may jump forward).
    gotos: Vec<(String, u32)>,
}

impl Walk {
    fn block(&mut self, body: &[Statement], in_loop: bool) -> Result<(), SqlError> {
        for s in body {
            self.statement(s, in_loop)?;
        }
        Ok(())
    }

    fn statement(&mut self, s: &Statement, in_loop: bool) -> Result<(), SqlError> {
        let line = s.line();
        match &s.kind {
            StatementKind::Label(l) => {
                let key = l.value.to_ascii_lowercase();
                if self.labels.contains(&key) {
                    return Err(SqlError::new(
                        132,
                        15,
                        1,
                        format!(
                            "The label '{}' has already been declared. Label names must be unique within a query batch or stored procedure.",
                            l.value
                        ),
                    )
                    .at_line(line));
                }
                self.labels.push(key);
            }
            StatementKind::Goto(l) => self.gotos.push((l.value.clone(), line)),
            StatementKind::Declare(decls) => {
                for d in decls {
                    let name = match d {
                        Declaration::Variable { name, .. } | Declaration::Table { name, .. } => name,
                        Declaration::Cursor { .. } => continue,
                    };
                    let key = name.to_ascii_lowercase();
                    if self.declared_at.iter().any(|(n, _)| *n == key) {
                        return Err(errors::variable_declared(name).at_line(line));
                    }
                    self.declared_at.push((key, s.span.start));
                }
            }
            StatementKind::Break if !in_loop => {
                return Err(SqlError::new(
                    135,
                    15,
                    1,
                    "Cannot use a BREAK statement outside the scope of a WHILE statement.",
                )
                .at_line(line))
            }
            StatementKind::Continue if !in_loop => {
                return Err(SqlError::new(
                    136,
                    15,
                    1,
                    "Cannot use a CONTINUE statement outside the scope of a WHILE statement.",
                )
                .at_line(line))
            }
            StatementKind::Block(b) => self.block(b, in_loop)?,
            StatementKind::If { then_branch, else_branch, .. } => {
                self.statement(then_branch, in_loop)?;
                if let Some(e) = else_branch {
                    self.statement(e, in_loop)?;
                }
            }
            StatementKind::While { body, .. } => self.statement(body, true)?,
            StatementKind::TryCatch { try_block, catch_block } => {
                self.block(try_block, in_loop)?;
                self.block(catch_block, in_loop)?;
            }
            _ => {}
        }
        Ok(())
    }
}
