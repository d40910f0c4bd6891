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

use super::errors;

/// The first compile error of `body` (a batch, or a module body whose parameters are
/// `params`, with their `@`), with its line.
pub(crate) fn check_body(body: &[Statement], params: &[&str]) -> Option<SqlError> {
    let mut w = Walk {
        labels: Vec::new(),
        variables: params.iter().map(|p| p.to_ascii_lowercase()).collect(),
        gotos: Vec::new(),
    };
    if let Err(e) = w.block(body, false) {
        return Some(e);
    }
    w.gotos.into_iter().find(|(label, _)| !w.labels.contains(&label.to_ascii_lowercase())).map(|(label, line)| {
        SqlError::new(
            133,
            15,
            1,
            format!("A GOTO statement references the label '{label}' but the label has not been declared."),
        )
        .at_line(line)
    })
}

struct Walk {
    /// Labels seen (lower-case: labels, like variables, ignore case).
    labels: Vec<String>,
    variables: Vec<String>,
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
