//! INSERT, UPDATE, DELETE and MERGE.

use super::{PResult, Parser};
use crate::ast::*;
use crate::errors;
use crate::lexer::{Token, TokenKind};

/// The literal a literal token stands for (NULL included); None for any other token.
pub(crate) fn literal_of_token(t: &Token, src: &str) -> Option<Literal> {
    let text = || t.text(src).to_string();
    Some(match &t.kind {
        TokenKind::Integer => Literal::Integer(text()),
        TokenKind::Decimal => Literal::Decimal(text()),
        TokenKind::Float => Literal::Float(text()),
        // A money token is `$` (one byte) followed by the number.
        TokenKind::Money => Literal::Money(t.text(src).get(1..).unwrap_or("").to_string()),
        TokenKind::String { value, unicode } => Literal::String { value: value.clone(), unicode: *unicode },
        TokenKind::Binary(bytes) => Literal::Binary(bytes.clone()),
        TokenKind::Keyword if t.text(src).eq_ignore_ascii_case("NULL") => Literal::Null,
        _ => return None,
    })
}

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
        let mut with = with;
        if self.simple_inserts {
            if let Some(ins) = self.simple_insert_values(&mut with) {
                return Ok(ins);
            }
        }
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

    /// `INSERT [INTO] name VALUES (v, ...), ...` where the name is up to four dotted
    /// identifiers and each v a literal, NULL or DEFAULT (the statement of bulk-loading
    /// scripts, a thousand to a batch): checked on the tokens, then built straight from
    /// them into what the general path builds, spans included. None (nothing consumed)
    /// for anything else, which the general path parses or reports.
    fn simple_insert_values(&mut self, with: &mut Vec<Cte>) -> Option<Insert> {
        // The general path nests twice below a VALUES row; where that would pass the
        // depth limit it must be the one to say so.
        if self.depth + 2 * super::NEST_COST > super::MAX_DEPTH {
            return None;
        }
        let toks = &self.toks;
        let src = self.src.as_bytes();
        let kind = |i: usize| toks.get(i).map(|t| &t.kind);
        let word = |i: usize, w: &str| {
            toks.get(i).is_some_and(|t| {
                matches!(t.kind, TokenKind::Word | TokenKind::Keyword)
                    && src.get(t.span.range()).is_some_and(|b| b.eq_ignore_ascii_case(w.as_bytes()))
            })
        };
        let mut i = self.pos;
        if !word(i, "INSERT") {
            return None;
        }
        i += 1;
        if word(i, "INTO") {
            i += 1;
        }
        let name_start = i;
        loop {
            if !matches!(kind(i)?, TokenKind::Word | TokenKind::QuotedIdent { .. }) || i - name_start >= 7 {
                return None;
            }
            i += 1;
            if !matches!(kind(i)?, TokenKind::Dot) {
                break;
            }
            i += 1;
        }
        let name_end = i;
        if !word(i, "VALUES") {
            return None;
        }
        i += 1;
        let values_start = i;
        loop {
            if !matches!(kind(i)?, TokenKind::LParen) {
                return None;
            }
            i += 1;
            loop {
                let k = kind(i)?;
                let simple = k.is_constant() || (*k == TokenKind::Keyword && (word(i, "NULL") || word(i, "DEFAULT")));
                if !simple {
                    return None;
                }
                i += 1;
                match kind(i)? {
                    TokenKind::Comma => i += 1,
                    TokenKind::RParen => break,
                    _ => return None,
                }
            }
            i += 1;
            if !matches!(kind(i), Some(TokenKind::Comma)) {
                break;
            }
            i += 1;
        }
        let end = i;
        // Checked: build.
        let ident = |t: &Token| match &t.kind {
            TokenKind::QuotedIdent { value, style } => Ident { value: value.clone(), quote: *style },
            _ => Ident::plain(t.text(self.src)),
        };
        let mut parts = Vec::with_capacity((name_end - name_start).div_ceil(2));
        for t in toks[name_start..name_end].iter().step_by(2) {
            parts.push(ident(t));
        }
        let mut rows = Vec::with_capacity(1);
        let mut row = Vec::new();
        for t in &toks[values_start..end] {
            let kind = match &t.kind {
                TokenKind::Comma | TokenKind::LParen => continue,
                TokenKind::RParen => {
                    rows.push(std::mem::take(&mut row));
                    continue;
                }
                _ => match literal_of_token(t, self.src) {
                    Some(l) => ExprKind::Literal(l),
                    None => ExprKind::Default,
                },
            };
            row.push(Expr { kind, span: t.span });
        }
        self.pos = end;
        Some(Insert {
            with: std::mem::take(with),
            top: None,
            target: DmlTarget::Table { name: ObjectName { parts }, hints: Vec::new() },
            columns: Vec::new(),
            output: Vec::new(),
            source: InsertSource::Values(rows),
        })
    }

    pub(crate) fn parse_update(&mut self, with: Vec<Cte>) -> PResult<Update> {
        self.expect_word("UPDATE")?;
        let top = if self.is_word("TOP") { Some(self.parse_top(true)?) } else { None };
        let target = self.parse_dml_target()?;
        self.expect_word("SET")?;
        let assignments = self.parse_assignments()?;
        let output = self.parse_output_clauses()?;
        let from = if self.eat_word("FROM") { self.parse_from_list()? } else { Vec::new() };
        let (where_clause, current_of) = self.parse_dml_where()?;
        let hints = if self.is_word("OPTION") { self.parse_option_hints()? } else { Vec::new() };
        Ok(Update { with, top, target, assignments, output, from, where_clause, current_of, hints })
    }

    /// UPDATE's and DELETE's WHERE: a search condition, or the positioned form WHERE
    /// CURRENT OF [GLOBAL] cursor.
    fn parse_dml_where(&mut self) -> PResult<(Option<Expr>, Option<CursorRef>)> {
        if !self.eat_word("WHERE") {
            return Ok((None, None));
        }
        if self.is_word("CURRENT") && self.is_word_at(1, "OF") {
            self.advance();
            self.advance();
            return Ok((None, Some(self.parse_cursor_ref()?)));
        }
        Ok((Some(self.parse_expr()?), None))
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
        let (where_clause, current_of) = self.parse_dml_where()?;
        let hints = if self.is_word("OPTION") { self.parse_option_hints()? } else { Vec::new() };
        Ok(Delete { with, top, target, output, from, where_clause, current_of, hints })
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

#[cfg(test)]
mod tests {
    use crate::lexer::tokenize;
    use crate::parser::Parser;

    /// The batch parsed with and without the direct INSERT path, as Debug text (which
    /// shows spans, unlike `==`).
    fn both(src: &str) -> (String, String) {
        let run = |simple: bool| {
            let mut p = Parser::new(src, tokenize(src).unwrap());
            p.simple_inserts = simple;
            match p.batch() {
                Ok(b) => format!("{b:?}"),
                Err(e) => format!("error {} line {}: {}", e.number, e.line, e.message),
            }
        };
        (run(true), run(false))
    }

    #[test]
    fn simple_inserts_parse_as_the_general_path_does() {
        for src in [
            "INSERT INTO t VALUES (1, 1, 'value 1');",
            "insert t values (1.5, -- c\n 2e3, $4.50, N'x''y', 0x0102, NULL, DEFAULT)",
            "INSERT INTO [db].dbo.\"t\" VALUES (1), (2),\n(3)\nINSERT INTO t VALUES (4)",
            "BEGIN TRANSACTION; INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (2, 'b'); COMMIT;",
            "INSERT INTO a.b.c.d VALUES (1)",
            "WITH c AS (SELECT 1 AS x) INSERT INTO t VALUES (1)",
            // Not simple: the general path (or its error) decides.
            "INSERT INTO a.b.c.d.e VALUES (1)",
            "INSERT INTO t VALUES (-1)",
            "INSERT INTO t VALUES (1 + 1)",
            "INSERT INTO t (a) VALUES (1)",
            "INSERT INTO t VALUES (1), 2",
            "INSERT INTO t VALUES ()",
            "INSERT INTO t VALUES (1,)",
            "INSERT INTO t VALUES (1",
            "INSERT INTO t WITH (TABLOCK) VALUES (1)",
            "INSERT INTO db..t VALUES (1)",
            "INSERT INTO t.select VALUES (1)",
            "INSERT INTO t VALUES (1) OUTPUT",
            "INSERT INTO @t VALUES (1)",
            "INSERT TOP (1) INTO t VALUES (1)",
            "INSERT INTO t VALUES",
        ] {
            let (fast, general) = both(src);
            assert_eq!(fast, general, "{src}");
        }
        // The direct path is taken where it should be, and only there.
        let direct =
            |src: &str| Parser::new(src, tokenize(src).unwrap()).simple_insert_values(&mut Vec::new()).is_some();
        assert!(direct("INSERT INTO t VALUES (1, 1, 'value 1');"));
        assert!(direct("insert t values (1.5, 2e3, $4.50, N'x', 0x01, NULL, DEFAULT), (2)"));
        assert!(direct("INSERT INTO a.b.c.d VALUES (1)"));
        assert!(!direct("INSERT INTO a.b.c.d.e VALUES (1)"));
        assert!(!direct("INSERT INTO t VALUES (-1)"));
        assert!(!direct("INSERT INTO t VALUES (1), 2"));
    }
}
