//! SELECT: common table expressions, set operators, select lists, table sources and
//! joins, GROUP BY, ORDER BY with OFFSET/FETCH, FOR XML/JSON and OPTION hints.

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::TokenKind;

/// Hints that may follow a table in parentheses without WITH (`FROM t (NOLOCK)`, an old
/// form SQL Server still accepts).
const BARE_TABLE_HINTS: &[&str] = &[
    "NOLOCK",
    "READUNCOMMITTED",
    "READCOMMITTED",
    "REPEATABLEREAD",
    "SERIALIZABLE",
    "HOLDLOCK",
    "UPDLOCK",
    "XLOCK",
    "TABLOCK",
    "TABLOCKX",
    "ROWLOCK",
    "PAGLOCK",
    "NOWAIT",
    "READPAST",
    "READCOMMITTEDLOCK",
];

impl<'a> Parser<'a> {
    /// A full query: [WITH ctes] body [ORDER BY] [OFFSET/FETCH] [FOR ...] [OPTION (...)].
    pub(crate) fn parse_query(&mut self) -> PResult<Query> {
        let start = self.pos;
        let with = if self.is_word("WITH") { self.parse_ctes()? } else { Vec::new() };
        let body = self.parse_set_expr()?;
        let mut q = Query {
            with,
            body,
            order_by: Vec::new(),
            offset: None,
            fetch: None,
            for_clause: None,
            hints: Vec::new(),
            span: Span::default(),
        };
        if self.is_word("ORDER") && self.is_word_at(1, "BY") {
            self.advance();
            self.advance();
            q.order_by = self.parse_order_by_items()?;
            if self.eat_word("OFFSET") {
                q.offset = Some(self.parse_additive()?);
                if !self.eat_word("ROWS") {
                    self.expect_word("ROW")?;
                }
                if self.eat_word("FETCH") {
                    if !self.eat_word("NEXT") {
                        self.expect_word("FIRST")?;
                    }
                    q.fetch = Some(self.parse_additive()?);
                    if !self.eat_word("ROWS") {
                        self.expect_word("ROW")?;
                    }
                    self.expect_word("ONLY")?;
                }
            }
        }
        if self.is_word("FOR") && ["XML", "JSON", "BROWSE"].iter().any(|k| self.is_word_at(1, k)) {
            q.for_clause = Some(self.parse_for_clause()?);
        }
        if self.is_word("OPTION") && self.is_at(1, &TokenKind::LParen) {
            q.hints = self.parse_option_hints()?;
        }
        q.span = self.span_from(start);
        Ok(q)
    }

    /// WITH name [(cols)] AS (query), ...
    pub(crate) fn parse_ctes(&mut self) -> PResult<Vec<Cte>> {
        self.expect_word("WITH")?;
        let mut ctes = Vec::new();
        loop {
            let name = self.parse_ident()?;
            let columns = if self.is(&TokenKind::LParen) { self.parse_paren_ident_list()? } else { Vec::new() };
            self.expect_word("AS")?;
            let query = self.parse_paren_query()?;
            ctes.push(Cte { name, columns, query: Box::new(query) });
            if !self.eat(&TokenKind::Comma) {
                return Ok(ctes);
            }
        }
    }

    /// UNION [ALL] and EXCEPT over INTERSECT terms (INTERSECT binds tighter).
    fn parse_set_expr(&mut self) -> PResult<SetExpr> {
        let mut left = self.parse_set_term()?;
        let mut links = 0u32;
        let result = loop {
            let op = if self.is_word("UNION") {
                if self.is_word_at(1, "ALL") {
                    self.advance();
                    SetOperator::UnionAll
                } else {
                    SetOperator::Union
                }
            } else if self.is_word("EXCEPT") {
                SetOperator::Except
            } else {
                break Ok(left);
            };
            self.advance();
            links += 1;
            if let Err(e) = self.chain_link() {
                break Err(e);
            }
            match self.parse_set_term() {
                Ok(right) => left = SetExpr::SetOp { op, left: Box::new(left), right: Box::new(right) },
                Err(e) => break Err(e),
            }
        };
        self.release(links);
        result
    }

    fn parse_set_term(&mut self) -> PResult<SetExpr> {
        let mut left = self.parse_set_primary()?;
        let mut links = 0u32;
        let result = loop {
            if !self.eat_word("INTERSECT") {
                break Ok(left);
            }
            links += 1;
            if let Err(e) = self.chain_link() {
                break Err(e);
            }
            match self.parse_set_primary() {
                Ok(right) => {
                    left = SetExpr::SetOp { op: SetOperator::Intersect, left: Box::new(left), right: Box::new(right) }
                }
                Err(e) => break Err(e),
            }
        };
        self.release(links);
        result
    }

    fn parse_set_primary(&mut self) -> PResult<SetExpr> {
        if self.is_word("SELECT") {
            return Ok(SetExpr::Select(Box::new(self.parse_select()?)));
        }
        if self.is(&TokenKind::LParen) {
            return Ok(SetExpr::Query(Box::new(self.parse_paren_query()?)));
        }
        Err(self.error())
    }

    fn parse_select(&mut self) -> PResult<Select> {
        let start = self.pos;
        self.expect_word("SELECT")?;
        let distinct = if self.eat_word("DISTINCT") {
            true
        } else {
            self.eat_word("ALL");
            false
        };
        let top = if self.is_word("TOP") { Some(self.parse_top(false)?) } else { None };
        let items = self.parse_select_items()?;
        let into = if self.eat_word("INTO") { Some(self.parse_object_name()?) } else { None };
        let from = if self.eat_word("FROM") { self.parse_from_list()? } else { Vec::new() };
        let where_clause = if self.eat_word("WHERE") { Some(self.parse_expr()?) } else { None };
        let mut group_by = Vec::new();
        if self.is_word("GROUP") && self.is_word_at(1, "BY") {
            self.advance();
            self.advance();
            loop {
                group_by.push(self.parse_group_by_item()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let having = if self.eat_word("HAVING") { Some(self.parse_expr()?) } else { None };
        Ok(Select { distinct, top, items, into, from, where_clause, group_by, having, span: self.span_from(start) })
    }

    /// `TOP n`, `TOP (expr)` [PERCENT] [WITH TIES]. INSERT/UPDATE/DELETE require the
    /// parentheses (`parens_required`).
    pub(crate) fn parse_top(&mut self, parens_required: bool) -> PResult<Top> {
        self.expect_word("TOP")?;
        let quantity = if self.is(&TokenKind::LParen) {
            self.advance();
            let e = self.parse_expr()?;
            self.expect(&TokenKind::RParen)?;
            e
        } else if parens_required {
            return Err(self.error());
        } else {
            self.parse_simple_value()?
        };
        let percent = self.eat_word("PERCENT");
        let with_ties = if self.is_word("WITH") && self.is_word_at(1, "TIES") {
            self.advance();
            self.advance();
            true
        } else {
            false
        };
        Ok(Top { quantity, percent, with_ties })
    }

    pub(crate) fn parse_select_items(&mut self) -> PResult<Vec<SelectItem>> {
        let mut items = vec![self.parse_select_item()?];
        while self.eat(&TokenKind::Comma) {
            items.push(self.parse_select_item()?);
        }
        Ok(items)
    }

    fn assign_op_at(&self, n: usize) -> Option<AssignOp> {
        Some(match self.kind_at(n) {
            TokenKind::Eq => AssignOp::Assign,
            TokenKind::PlusEq => AssignOp::Add,
            TokenKind::MinusEq => AssignOp::Sub,
            TokenKind::StarEq => AssignOp::Mul,
            TokenKind::SlashEq => AssignOp::Div,
            TokenKind::PercentEq => AssignOp::Mod,
            TokenKind::AmpEq => AssignOp::BitAnd,
            TokenKind::PipeEq => AssignOp::BitOr,
            TokenKind::CaretEq => AssignOp::BitXor,
            _ => return None,
        })
    }

    /// `=` or a compound assignment operator, consumed.
    pub(crate) fn parse_assign_op(&mut self) -> PResult<AssignOp> {
        let op = self.assign_op_at(0).ok_or_else(|| self.error())?;
        self.advance();
        Ok(op)
    }

    fn parse_select_item(&mut self) -> PResult<SelectItem> {
        if self.eat(&TokenKind::Star) {
            return Ok(SelectItem::Wildcard(None));
        }
        // `@v = expr`: in a select list this is always an assignment.
        if self.is(&TokenKind::Variable) {
            if let Some(op) = self.assign_op_at(1) {
                let variable = self.take_variable()?;
                self.advance();
                let expr = self.parse_additive()?;
                return Ok(SelectItem::Assign { variable, op, expr });
            }
        }
        // `alias = expr`
        if self.is_at(1, &TokenKind::Eq) {
            let alias = match self.kind() {
                TokenKind::Word => Some(Ident::plain(self.text())),
                TokenKind::QuotedIdent { value, style } => Some(Ident { value: value.clone(), quote: *style }),
                TokenKind::String { value, .. } => Some(Ident { value: value.clone(), quote: QuoteStyle::Bracket }),
                _ => None,
            };
            if let Some(alias) = alias {
                self.advance();
                self.advance();
                let expr = self.parse_additive()?;
                return Ok(SelectItem::Expr { expr, alias: Some(alias) });
            }
        }
        // `t.*`, `s.t.*`
        if self.is_ident() {
            let mut n = 1;
            while self.is_at(n, &TokenKind::Dot) && (self.is_ident_at(n + 1) || self.is_at(n + 1, &TokenKind::Dot)) {
                n += if self.is_at(n + 1, &TokenKind::Dot) { 1 } else { 2 };
            }
            if self.is_at(n, &TokenKind::Dot) && self.is_at(n + 1, &TokenKind::Star) {
                let name = self.parse_object_name()?;
                self.expect(&TokenKind::Dot)?;
                self.expect(&TokenKind::Star)?;
                return Ok(SelectItem::Wildcard(Some(name)));
            }
        }
        // A select-list item is a scalar expression: `SELECT a = b` is an alias (above)
        // and `SELECT t.a = b` a syntax error near '=', as in SQL Server.
        let expr = self.parse_additive()?;
        let alias = self.parse_column_alias()?;
        Ok(SelectItem::Expr { expr, alias })
    }

    /// `[AS] alias` after a select-list expression; a string is accepted as the name.
    fn parse_column_alias(&mut self) -> PResult<Option<Ident>> {
        let has_as = self.eat_word("AS");
        match self.kind() {
            TokenKind::Word | TokenKind::QuotedIdent { .. } => Ok(Some(self.parse_ident()?)),
            TokenKind::String { value, .. } => {
                let alias = Ident { value: value.clone(), quote: QuoteStyle::Bracket };
                self.advance();
                Ok(Some(alias))
            }
            _ if has_as => Err(self.error()),
            _ => Ok(None),
        }
    }

    /// `[AS] alias [(col, ...)]` after a table source.
    fn parse_table_alias(&mut self, allow_columns: bool) -> PResult<Option<TableAlias>> {
        let has_as = self.eat_word("AS");
        if !self.is_ident() {
            if has_as {
                return Err(self.error());
            }
            return Ok(None);
        }
        let name = self.parse_ident()?;
        let columns =
            if allow_columns && self.is(&TokenKind::LParen) { self.parse_paren_ident_list()? } else { Vec::new() };
        Ok(Some(TableAlias { name, columns }))
    }

    pub(crate) fn parse_from_list(&mut self) -> PResult<Vec<TableWithJoins>> {
        let mut from = vec![self.parse_table_with_joins()?];
        while self.eat(&TokenKind::Comma) {
            from.push(self.parse_table_with_joins()?);
        }
        Ok(from)
    }

    pub(crate) fn parse_table_with_joins(&mut self) -> PResult<TableWithJoins> {
        let relation = self.parse_table_factor()?;
        let mut twj = TableWithJoins { relation, joins: Vec::new() };
        loop {
            // PIVOT / UNPIVOT take everything written before them as their source.
            if self.is_any_word(&["PIVOT", "UNPIVOT"]) {
                let placeholder = TableFactor::Variable { name: String::new(), alias: None };
                let source = std::mem::replace(&mut twj, TableWithJoins { relation: placeholder, joins: Vec::new() });
                twj.relation = self.parse_pivot(source)?;
                continue;
            }
            let Some((kind, hint)) = self.parse_join_operator()? else {
                break;
            };
            let mut relation = self.parse_table_factor()?;
            let on = if matches!(kind, JoinKind::Cross | JoinKind::CrossApply | JoinKind::OuterApply) {
                None
            } else {
                // `a JOIN b PIVOT (...) p ON ...`: the PIVOT belongs to the joined source.
                while self.is_any_word(&["PIVOT", "UNPIVOT"]) {
                    relation = self.parse_pivot(TableWithJoins { relation, joins: Vec::new() })?;
                }
                self.expect_word("ON")?;
                Some(self.parse_expr()?)
            };
            twj.joins.push(Join { kind, hint, relation, on });
        }
        Ok(twj)
    }

    /// `PIVOT (agg(value) FOR column IN (a, ...)) [AS] alias` or
    /// `UNPIVOT (value FOR name IN (a, ...)) [AS] alias` after `source`.
    fn parse_pivot(&mut self, source: TableWithJoins) -> PResult<TableFactor> {
        let source = Box::new(source);
        let unpivot = self.take_word_upper()? == "UNPIVOT";
        self.expect(&TokenKind::LParen)?;
        let factor = if unpivot {
            let value = self.parse_ident()?;
            self.expect_word("FOR")?;
            let name = self.parse_ident()?;
            self.expect_word("IN")?;
            let columns = self.parse_paren_ident_list()?;
            self.expect(&TokenKind::RParen)?;
            self.eat_word("AS");
            TableFactor::Unpivot { source, value, name, columns, alias: self.parse_ident()? }
        } else {
            let aggregate = self.parse_ident()?;
            self.expect(&TokenKind::LParen)?;
            let value = self.parse_object_name()?;
            self.expect(&TokenKind::RParen)?;
            self.expect_word("FOR")?;
            let column = self.parse_object_name()?;
            self.expect_word("IN")?;
            let values = self.parse_paren_ident_list()?;
            self.expect(&TokenKind::RParen)?;
            self.eat_word("AS");
            TableFactor::Pivot { source, aggregate, value, column, values, alias: self.parse_ident()? }
        };
        Ok(factor)
    }

    fn parse_join_hint(&mut self) -> Option<String> {
        for h in ["LOOP", "HASH", "MERGE", "REMOTE"] {
            if self.is_word(h) && self.is_word_at(1, "JOIN") {
                self.advance();
                return Some(h.to_string());
            }
        }
        None
    }

    fn parse_join_operator(&mut self) -> PResult<Option<(JoinKind, Option<String>)>> {
        if self.eat_word("JOIN") {
            return Ok(Some((JoinKind::Inner, None)));
        }
        if self.is_word("INNER") {
            self.advance();
            let hint = self.parse_join_hint();
            self.expect_word("JOIN")?;
            return Ok(Some((JoinKind::Inner, hint)));
        }
        for (kw, kind) in
            [("LEFT", JoinKind::LeftOuter), ("RIGHT", JoinKind::RightOuter), ("FULL", JoinKind::FullOuter)]
        {
            if self.is_word(kw) {
                self.advance();
                self.eat_word("OUTER");
                let hint = self.parse_join_hint();
                self.expect_word("JOIN")?;
                return Ok(Some((kind, hint)));
            }
        }
        if self.is_word("CROSS") {
            self.advance();
            if self.eat_word("APPLY") {
                return Ok(Some((JoinKind::CrossApply, None)));
            }
            self.expect_word("JOIN")?;
            return Ok(Some((JoinKind::Cross, None)));
        }
        if self.is_word("OUTER") && self.is_word_at(1, "APPLY") {
            self.advance();
            self.advance();
            return Ok(Some((JoinKind::OuterApply, None)));
        }
        Ok(None)
    }

    fn parse_table_factor(&mut self) -> PResult<TableFactor> {
        if self.is(&TokenKind::LParen) {
            return self.nest(|p| p.parse_paren_table_factor());
        }
        let start = self.pos;
        if self.is(&TokenKind::Variable) {
            let name = self.take_variable()?;
            if self.is(&TokenKind::Dot) && self.is_at(2, &TokenKind::LParen) {
                // @x.nodes('...') AS t(c)
                self.advance();
                let method = self.parse_ident()?;
                if !method.eq_ignore_case("nodes") {
                    return Err(self.error_at(self.pos - 1));
                }
                let span = self.span_from(start);
                let args = self.parse_call_args()?;
                let alias = self.parse_table_alias(true)?;
                let target = Box::new(Expr { kind: ExprKind::Variable(name), span });
                return Ok(TableFactor::XmlNodes { target, args, alias });
            }
            let alias = self.parse_table_alias(false)?.map(|a| a.name);
            return Ok(TableFactor::Variable { name, alias });
        }
        let name = self.parse_object_name()?;
        if self.is(&TokenKind::LParen) {
            if self.is_bare_hint_list() {
                let hints = self.parse_hint_list()?;
                let alias = self.parse_table_alias(false)?.map(|a| a.name);
                return Ok(TableFactor::Table { name, alias, hints });
            }
            if name.parts.len() >= 2 && name.name().eq_ignore_case("nodes") {
                let span = self.span_from(start);
                let mut parts = name.parts;
                parts.pop();
                let args = self.parse_call_args()?;
                let alias = self.parse_table_alias(true)?;
                let target = Box::new(Expr { kind: ExprKind::Column(ObjectName { parts }), span });
                return Ok(TableFactor::XmlNodes { target, args, alias });
            }
            let args = self.parse_call_args()?;
            if name.parts.len() == 1 && name.name().eq_ignore_case("OPENJSON") {
                let schema = if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
                    Some(self.parse_openjson_schema()?)
                } else {
                    None
                };
                let alias = self.parse_table_alias(true)?;
                return Ok(TableFactor::OpenJson { args, schema, alias });
            }
            let alias = self.parse_table_alias(true)?;
            return Ok(TableFactor::Function { name, args, alias });
        }
        let alias = self.parse_table_alias(false)?.map(|a| a.name);
        let hints = self.parse_table_hints()?;
        Ok(TableFactor::Table { name, alias, hints })
    }

    /// `(` query `)`, `(VALUES ...)` or `(` join `)`.
    fn parse_paren_table_factor(&mut self) -> PResult<TableFactor> {
        // Look past any further parentheses for SELECT/WITH: `((SELECT ...) UNION ...)`.
        let mut n = 1;
        while self.is_at(n, &TokenKind::LParen) {
            n += 1;
        }
        if self.is_word_at(n, "SELECT") || self.is_word_at(n, "WITH") {
            let query = self.parse_paren_query()?;
            let alias = self.parse_table_alias(true)?;
            return Ok(TableFactor::Derived { query: Box::new(query), alias });
        }
        if self.is_word_at(1, "VALUES") {
            self.advance();
            self.advance();
            let rows = self.parse_values_rows()?;
            self.expect(&TokenKind::RParen)?;
            let alias = self.parse_table_alias(true)?;
            return Ok(TableFactor::Values { rows, alias });
        }
        self.advance();
        let inner = self.parse_table_with_joins()?;
        self.expect(&TokenKind::RParen)?;
        Ok(TableFactor::NestedJoin(Box::new(inner)))
    }

    /// `(1, 2), (3, DEFAULT)` after VALUES.
    pub(crate) fn parse_values_rows(&mut self) -> PResult<Vec<Vec<Expr>>> {
        // Most VALUES lists have one row: allocate for exactly that first.
        let mut rows = Vec::with_capacity(1);
        loop {
            self.expect(&TokenKind::LParen)?;
            let row = self.nest(|p| {
                // `vec![first]` would grow again at the second item.
                let mut row = Vec::with_capacity(4);
                row.push(p.parse_arg()?);
                while p.eat(&TokenKind::Comma) {
                    row.push(p.parse_arg()?);
                }
                Ok(row)
            })?;
            self.expect(&TokenKind::RParen)?;
            rows.push(row);
            if !self.eat(&TokenKind::Comma) {
                return Ok(rows);
            }
        }
    }

    /// `(NOLOCK)`, `(NOLOCK, INDEX(ix))` after a table name without WITH.
    fn is_bare_hint_list(&self) -> bool {
        self.is(&TokenKind::LParen)
            && BARE_TABLE_HINTS.iter().any(|h| self.is_word_at(1, h))
            && (self.is_at(2, &TokenKind::RParen) || self.is_at(2, &TokenKind::Comma))
    }

    /// WITH (hint, ...) after a table.
    pub(crate) fn parse_table_hints(&mut self) -> PResult<Vec<TableHint>> {
        if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            return self.parse_hint_list();
        }
        Ok(Vec::new())
    }

    /// `( NOLOCK, INDEX(ix), INDEX = ix, FORCESEEK, ... )`
    fn parse_hint_list(&mut self) -> PResult<Vec<TableHint>> {
        self.expect(&TokenKind::LParen)?;
        let mut hints = Vec::new();
        loop {
            let name = self.take_word_upper()?;
            let args = if self.is(&TokenKind::LParen) {
                self.parse_call_args()?
            } else if self.eat(&TokenKind::Eq) {
                vec![self.parse_expr()?]
            } else {
                Vec::new()
            };
            hints.push(TableHint { name, args });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(hints)
    }

    fn parse_group_by_item(&mut self) -> PResult<GroupByItem> {
        let list = |p: &mut Self| -> PResult<Vec<Expr>> {
            p.expect(&TokenKind::LParen)?;
            let mut v = vec![p.parse_expr()?];
            while p.eat(&TokenKind::Comma) {
                v.push(p.parse_expr()?);
            }
            p.expect(&TokenKind::RParen)?;
            Ok(v)
        };
        if self.is_word("ROLLUP") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            return Ok(GroupByItem::Rollup(list(self)?));
        }
        if self.is_word("CUBE") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            return Ok(GroupByItem::Cube(list(self)?));
        }
        if self.is_word("GROUPING") && self.is_word_at(1, "SETS") {
            self.advance();
            self.advance();
            self.expect(&TokenKind::LParen)?;
            let mut sets = Vec::new();
            loop {
                if self.is(&TokenKind::LParen) {
                    if self.is_at(1, &TokenKind::RParen) {
                        self.advance();
                        self.advance();
                        sets.push(Vec::new());
                    } else {
                        sets.push(list(self)?);
                    }
                } else {
                    sets.push(vec![self.parse_expr()?]);
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
            return Ok(GroupByItem::GroupingSets(sets));
        }
        Ok(GroupByItem::Expr(self.parse_expr()?))
    }

    pub(crate) fn parse_order_by_items(&mut self) -> PResult<Vec<OrderByItem>> {
        let mut items = Vec::new();
        loop {
            let expr = self.parse_expr()?;
            let direction = if self.eat_word("ASC") {
                Some(SortDirection::Asc)
            } else if self.eat_word("DESC") {
                Some(SortDirection::Desc)
            } else {
                None
            };
            items.push(OrderByItem { expr, direction });
            if !self.eat(&TokenKind::Comma) {
                return Ok(items);
            }
        }
    }

    /// OPENJSON's `WITH (name type ['path'] [AS JSON], ...)`.
    fn parse_openjson_schema(&mut self) -> PResult<Vec<OpenJsonColumn>> {
        self.expect_word("WITH")?;
        self.expect(&TokenKind::LParen)?;
        let mut cols = Vec::new();
        loop {
            let name = self.parse_ident()?;
            let data_type = self.parse_data_type()?;
            let path = match self.kind() {
                TokenKind::String { value, .. } => {
                    let v = value.clone();
                    self.advance();
                    Some(v)
                }
                _ => None,
            };
            let as_json = if self.is_word("AS") && self.is_word_at(1, "JSON") {
                self.advance();
                self.advance();
                true
            } else {
                false
            };
            cols.push(OpenJsonColumn { name, data_type, path, as_json });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(cols)
    }

    fn parse_for_clause(&mut self) -> PResult<ForClause> {
        self.expect_word("FOR")?;
        let kind = match self.take_word_upper()?.as_str() {
            "XML" => ForKind::Xml,
            "JSON" => ForKind::Json,
            _ => return Ok(ForClause { kind: ForKind::Browse, options: Vec::new() }),
        };
        let mut options = Vec::new();
        loop {
            let mut words = vec![self.take_word_upper()?];
            // Two-word options: ELEMENTS XSINIL / ELEMENTS ABSENT, BINARY BASE64.
            if (words[0] == "ELEMENTS" && self.is_any_word(&["XSINIL", "ABSENT"]))
                || (words[0] == "BINARY" && self.is_word("BASE64"))
            {
                words.push(self.take_word_upper()?);
            }
            let arg = if self.is(&TokenKind::LParen) {
                self.advance();
                let e = self.parse_expr()?;
                self.expect(&TokenKind::RParen)?;
                Some(e)
            } else {
                None
            };
            options.push(ForOption { name: words.join(" "), arg });
            if !self.eat(&TokenKind::Comma) {
                return Ok(ForClause { kind, options });
            }
        }
    }

    /// OPTION ( hint, ... )
    pub(crate) fn parse_option_hints(&mut self) -> PResult<Vec<QueryHint>> {
        self.expect_word("OPTION")?;
        self.expect(&TokenKind::LParen)?;
        let mut hints = Vec::new();
        loop {
            let mut words = vec![self.take_word_upper()?];
            while self.is_bare_word() {
                words.push(self.take_word_upper()?);
            }
            let mut hint = QueryHint { name: words.join(" "), equals: false, value: None, args: None };
            if self.eat(&TokenKind::Eq) {
                hint.equals = true;
                hint.value = Some(self.parse_simple_value()?);
            } else if self.is(&TokenKind::LParen) {
                hint.args = Some(self.parse_call_args()?);
            } else if !self.is(&TokenKind::Comma) && !self.is(&TokenKind::RParen) {
                hint.value = Some(self.parse_simple_value()?);
            }
            hints.push(hint);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(hints)
    }
}
