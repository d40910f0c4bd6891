//! INSERT, UPDATE and DELETE (MERGE is kept as an unmodelled statement, see
//! [`StatementKind::Other`]).

use super::{PResult, Parser};
use crate::ast::*;
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
        let output = self.parse_output_clauses()?;
        let from = if self.eat_word("FROM") { self.parse_from_list()? } else { Vec::new() };
        let where_clause = if self.eat_word("WHERE") { Some(self.parse_expr()?) } else { None };
        let hints = if self.is_word("OPTION") { self.parse_option_hints()? } else { Vec::new() };
        Ok(Update { with, top, target, assignments, output, from, where_clause, hints })
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
}
