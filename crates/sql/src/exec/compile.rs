//! The checks SQL Server makes when it compiles a batch or a module's body, before any
//! statement runs: a batch that fails them runs nothing, and CREATE PROCEDURE, FUNCTION
//! or TRIGGER fails. Labels and variables belong to the whole batch or body whatever
//! block declares them, so these look at every statement of it:
//! - 132: a label declared twice; 133: GOTO to a label not declared;
//! - 134: a variable (scalar, table or cursor variable, or a parameter) declared twice;
//! - 135 / 136: BREAK / CONTINUE outside a WHILE loop.
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
    let mut w = Walk {
        labels: Vec::new(),
        variables: params.iter().map(|p| p.to_ascii_lowercase()).collect(),
        declared_at: Vec::new(),
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
    if module && params.is_empty() && w.declared_at.is_empty() && body.len() == 1 {
        return None;
    }
    let starts_with_call = matches!(body.first().map(|s| &s.kind), Some(StatementKind::Exec(_)));
    undeclared_variable(source, params, &w.declared_at, starts_with_call)
}

/// 137 (1087 where a table belongs) for the first variable the text uses before any
/// DECLARE of it (SQL Server checks declaration against the text's order, not the order
/// statements run in). The parameter names of a procedure call (`EXEC p @name = value`)
/// are not variables.
fn undeclared_variable(
    source: &str,
    params: &[&str],
    declared_at: &[(String, u32)],
    starts_with_call: bool,
) -> Option<SqlError> {
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
        let known = params.iter().any(|p| p.eq_ignore_ascii_case(name))
            || declared_at.iter().any(|(n, at)| *at <= t.span.start && n.eq_ignore_ascii_case(name));
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
    variables: Vec<String>,
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
                    if self.variables.contains(&key) {
                        return Err(errors::variable_declared(name).at_line(line));
                    }
                    self.declared_at.push((key.clone(), s.span.start));
                    self.variables.push(key);
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
