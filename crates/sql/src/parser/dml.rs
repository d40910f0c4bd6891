//! INSERT, UPDATE, DELETE and MERGE.

use super::{PResult, Parser};
use crate::ast::*;
use crate::errors;
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    /// The table an INSERT/UPDATE/DELETE changes: a name with optional WITH (hints), or
    /// a table variable. No alias: UPDATE/DELETE alias through their FROM clause.
    fn parse_dml_target(&mut self) -> PResult<DmlTarget> {
        if self.is(&TokenKind::Variable) {
            return Ok(DmlTarget::Variable(self.take_variable()?));
        }
        let name = self.parse_object_name()?;
        let hints = self.parse_table_hints()?;
        Ok(DmlTarget::Table { name, hints })
    }

    /// OUTPUT items [INTO target [(cols)]], possibly twice (one with INTO, one without).
    fn parse_output_clauses(&mut self) -> PResult<Vec<OutputClause>> {
        let mut out = Vec::new();
        while self.eat_word("OUTPUT") {
            let items = self.parse_select_items()?;
            let into = if self.eat_word("INTO") {
                let target = self.parse_dml_target()?;
                let columns = if self.is(&TokenKind::LParen) { self.parse_paren_ident_list()? } else { Vec::new() };
                Some(OutputInto { target, columns })
            } else {
                None
            };
            out.push(OutputClause { items, into });
        }
        Ok(out)
    }

    pub(crate) fn parse_insert(&mut self, with: Vec<Cte>) -> PResult<Insert> {
        self.expect_word("INSERT")?;
        let top = if self.is_word("TOP") { Some(self.parse_top(true)?) } else { None };
        self.eat_word("INTO");
        let target = self.parse_dml_target()?;
        let columns = if self.is(&TokenKind::LParen) && !self.paren_starts_query() {
            self.parse_paren_ident_list()?
        } else {
            Vec::new()
        };
        let output = self.parse_output_clauses()?;
        let source = if self.eat_word("VALUES") {
            InsertSource::Values(self.parse_values_rows()?)
        } else if self.is_word("DEFAULT") && self.is_word_at(1, "VALUES") {
            self.advance();
            self.advance();
            InsertSource::DefaultValues
        } else if self.is_any_word(&["EXEC", "EXECUTE"]) {
            match self.parse_exec()? {
                StatementKind::Exec(e) => InsertSource::ExecProcedure(e),
                StatementKind::ExecString(e) => InsertSource::ExecString(e),
                _ => return Err(self.error()),
            }
        } else if self.is_any_word(&["SELECT", "WITH"]) || self.is(&TokenKind::LParen) {
            InsertSource::Query(Box::new(self.parse_query()?))
        } else {
            return Err(self.error());
        };
        Ok(Insert { with, top, target, columns, output, source })
    }

    pub(crate) fn parse_update(&mut self, with: Vec<Cte>) -> PResult<Update> {
        self.expect_word("UPDATE")?;
        let top = if self.is_word("TOP") { Some(self.parse_top(true)?) } else { None };
        let target = self.parse_dml_target()?;
        self.expect_word("SET")?;
        let assignments = self.parse_assignments()?;
        let output = self.parse_output_clauses()?;
        let from = if self.eat_word("FROM") { self.parse_from_list()? } else { Vec::new() };
        let where_clause = if self.eat_word("WHERE") { Some(self.parse_expr()?) } else { None };
        let hints = if self.is_word("OPTION") { self.parse_option_hints()? } else { Vec::new() };
        Ok(Update { with, top, target, assignments, output, from, where_clause, hints })
    }

    /// The assignments after SET in UPDATE and in MERGE's UPDATE action.
    fn parse_assignments(&mut self) -> PResult<Vec<Assignment>> {
        let mut assignments = Vec::new();
        loop {
            let target = if self.is(&TokenKind::Variable) {
                AssignTarget::Variable(self.take_variable()?)
            } else {
                AssignTarget::Column(self.parse_object_name()?)
            };
            let op = self.parse_assign_op()?;
            // Scalar only: `SET @v = col = 1` (an unsupported T-SQL form) is a syntax
            // error rather than a comparison.
            let value = if self.is_word("DEFAULT") { self.parse_arg()? } else { self.parse_additive()? };
            assignments.push(Assignment { target, op, value });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        Ok(assignments)
    }

    pub(crate) fn parse_delete(&mut self, with: Vec<Cte>) -> PResult<Delete> {
        self.expect_word("DELETE")?;
        let top = if self.is_word("TOP") { Some(self.parse_top(true)?) } else { None };
        self.eat_word("FROM");
        let target = self.parse_dml_target()?;
        let output = self.parse_output_clauses()?;
        let from = if self.eat_word("FROM") { self.parse_from_list()? } else { Vec::new() };
        let where_clause = if self.eat_word("WHERE") { Some(self.parse_expr()?) } else { None };
        let hints = if self.is_word("OPTION") { self.parse_option_hints()? } else { Vec::new() };
        Ok(Delete { with, top, target, output, from, where_clause, hints })
    }

    /// MERGE, up to and checking its mandatory `;` (which the caller consumes).
    pub(crate) fn parse_merge(&mut self, with: Vec<Cte>) -> PResult<Merge> {
        self.expect_word("MERGE")?;
        let top = if self.is_word("TOP") { Some(self.parse_top(true)?) } else { None };
        self.eat_word("INTO");
        let target = self.parse_dml_target()?;
        // USING is not reserved: it ends the target, it is not an alias.
        let alias = if self.eat_word("AS") || (self.is_ident() && !self.is_word("USING")) {
            Some(self.parse_ident()?)
        } else {
            None
        };
        self.expect_word("USING")?;
        let source = self.parse_table_with_joins()?;
        self.expect_word("ON")?;
        let on = self.parse_expr()?;
        let mut clauses: Vec<MergeClause> = Vec::new();
        while self.is_word("WHEN") {
            let line = self.peek().span.line;
            self.advance();
            let when = if self.eat_word("MATCHED") {
                MergeWhen::Matched
            } else {
                self.expect_word("NOT")?;
                self.expect_word("MATCHED")?;
                if self.eat_word("BY") {
                    if self.eat_word("SOURCE") {
                        MergeWhen::NotMatchedBySource
                    } else {
                        self.expect_word("TARGET")?;
                        MergeWhen::NotMatchedByTarget
                    }
                } else {
                    MergeWhen::NotMatchedByTarget
                }
            };
            let condition = if self.eat_word("AND") { Some(self.parse_expr()?) } else { None };
            self.expect_word("THEN")?;
            let action = if when == MergeWhen::NotMatchedByTarget {
                if !self.is_word("INSERT") {
                    return Err(self.error());
                }
                self.advance();
                if self.is_word("DEFAULT") && self.is_word_at(1, "VALUES") {
                    self.advance();
                    self.advance();
                    MergeAction::Insert { columns: Vec::new(), values: None }
                } else {
                    let columns = if self.is(&TokenKind::LParen) { self.parse_paren_ident_list()? } else { Vec::new() };
                    self.expect_word("VALUES")?;
                    let mut rows = self.parse_values_rows()?;
                    if rows.len() != 1 {
                        return Err(self.error());
                    }
                    MergeAction::Insert { columns, values: rows.pop() }
                }
            } else if self.eat_word("UPDATE") {
                self.expect_word("SET")?;
                MergeAction::Update(self.parse_assignments()?)
            } else if self.eat_word("DELETE") {
                MergeAction::Delete
            } else {
                return Err(self.error());
            };
            // At most one UPDATE and one DELETE per matched kind, one INSERT (Msg 10714).
            let same = |a: &MergeAction, b: &MergeAction| std::mem::discriminant(a) == std::mem::discriminant(b);
            if clauses.iter().any(|c| c.when == when && same(&c.action, &action)) {
                let w = match when {
                    MergeWhen::Matched => "WHEN MATCHED",
                    MergeWhen::NotMatchedByTarget => "WHEN NOT MATCHED",
                    MergeWhen::NotMatchedBySource => "WHEN NOT MATCHED BY SOURCE",
                };
                let a = match action {
                    MergeAction::Update(_) => "UPDATE",
                    MergeAction::Delete => "DELETE",
                    MergeAction::Insert { .. } => "INSERT",
                };
                return Err(errors::merge_duplicate_action(w, a, line));
            }
            clauses.push(MergeClause { when, condition, action });
        }
        if clauses.is_empty() {
            return Err(self.error());
        }
        let output = self.parse_output_clauses()?;
        let hints = if self.is_word("OPTION") { self.parse_option_hints()? } else { Vec::new() };
        if !self.is(&TokenKind::Semicolon) {
            // Reported where the statement should have ended: the next token, or the last
            // one at the end of the batch.
            let at = if self.at_eof() { self.pos.saturating_sub(1) } else { self.pos };
            return Err(errors::merge_needs_semicolon(self.toks[at.min(self.toks.len() - 1)].span.line));
        }
        Ok(Merge { with, top, target, alias, source, on, clauses, output, hints })
    }
}
