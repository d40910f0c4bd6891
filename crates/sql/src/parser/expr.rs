//! Expressions by precedence climbing, and data types.
//!
//! SQL Server's precedence, tightest first (one grammar covers scalar expressions and
//! search conditions):
//! 1. postfix: `.method(...)`, `COLLATE`, `AT TIME ZONE`
//! 2. unary `+ - ~`
//! 3. `* / %`
//! 4. `+ - & | ^` (binary; SQL Server puts the bitwise operators at this level)
//! 5. comparisons `= <> != < > <= >= !< !>` and the predicates LIKE, BETWEEN, IN, IS
//!    [NOT] NULL, quantified comparisons (not chainable: `a = b = c` is an error)
//! 6. NOT
//! 7. AND
//! 8. OR
//!
//! Binary operators are left-associative. Unary minus binds tighter than `*` here (the
//! usual reading; SQL Server's table lists it with `+`, which gives the same value for
//! every expression except overflow corner cases).

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::TokenKind;
use types::TypeArg;

const PREC_OR: u8 = 1;
const PREC_AND: u8 = 2;
const PREC_NOT: u8 = 3;
const PREC_CMP: u8 = 4;
pub(crate) const PREC_ADD: u8 = 5;
const PREC_MUL: u8 = 6;
const PREC_UNARY: u8 = 7;

/// The XML data type methods, recognised after a column name (`ed.value(...)`): written
/// like a schema-qualified function call, they are method calls on the column.
const XML_METHODS: &[&str] = &["value", "query", "exist", "nodes", "modify"];

pub(crate) fn is_xml_method(name: &str) -> bool {
    XML_METHODS.iter().any(|m| m.eq_ignore_ascii_case(name))
}

/// The instance methods of the CLR types (hierarchyid, geometry, geography), recognised
/// the same way; CLR method names are case-sensitive, as in SQL Server.
const CLR_METHODS: &[&str] = &[
    "GetLevel",
    "ToString",
    "GetAncestor",
    "IsDescendantOf",
    "GetDescendant",
    "GetReparentedValue",
    "STAsText",
    "STGeometryType",
    "STNumPoints",
    "STIsEmpty",
];

pub(crate) fn is_clr_method(name: &str) -> bool {
    CLR_METHODS.contains(&name)
}

/// geometry's and geography's properties, read without parentheses (`@g.STX`).
pub(crate) fn is_clr_property(name: &str) -> bool {
    ["STSrid", "STX", "STY", "Lat", "Long"].contains(&name)
}

/// What can follow an operand at the comparison level and above.
enum Infix {
    Binary(BinaryOp, u8),
    /// LIKE, IN, BETWEEN, IS with an optional NOT before (`negated`).
    Predicate {
        negated: bool,
    },
}

impl<'a> Parser<'a> {
    pub(crate) fn parse_expr(&mut self) -> PResult<Expr> {
        self.nest(|p| p.parse_binary(0))
    }

    /// An expression at additive level or tighter (operands of BETWEEN, bounds, TOP).
    pub(crate) fn parse_additive(&mut self) -> PResult<Expr> {
        self.nest(|p| p.parse_binary(PREC_ADD))
    }

    fn binary_op(&self) -> Option<(BinaryOp, u8)> {
        use BinaryOp as B;
        Some(match self.kind() {
            TokenKind::Star => (B::Mul, PREC_MUL),
            TokenKind::Slash => (B::Div, PREC_MUL),
            TokenKind::Percent => (B::Mod, PREC_MUL),
            TokenKind::Plus => (B::Add, PREC_ADD),
            TokenKind::Minus => (B::Sub, PREC_ADD),
            TokenKind::Amp => (B::BitAnd, PREC_ADD),
            TokenKind::Pipe => (B::BitOr, PREC_ADD),
            TokenKind::Caret => (B::BitXor, PREC_ADD),
            TokenKind::Eq => (B::Eq, PREC_CMP),
            TokenKind::LtGt | TokenKind::BangEq => (B::NotEq, PREC_CMP),
            TokenKind::Lt => (B::Lt, PREC_CMP),
            TokenKind::Gt => (B::Gt, PREC_CMP),
            TokenKind::LtEq => (B::LtEq, PREC_CMP),
            TokenKind::GtEq => (B::GtEq, PREC_CMP),
            TokenKind::NotLt => (B::NotLt, PREC_CMP),
            TokenKind::NotGt => (B::NotGt, PREC_CMP),
            TokenKind::Keyword if self.is_word("AND") => (B::And, PREC_AND),
            TokenKind::Keyword if self.is_word("OR") => (B::Or, PREC_OR),
            _ => return None,
        })
    }

    fn infix(&self) -> Option<Infix> {
        if let Some((op, prec)) = self.binary_op() {
            return Some(Infix::Binary(op, prec));
        }
        if self.is_any_word(&["LIKE", "IN", "BETWEEN", "IS"]) {
            return Some(Infix::Predicate { negated: false });
        }
        // `NOT` as an infix only before LIKE/IN/BETWEEN; `DEFAULT 0 NOT NULL` ends here.
        if self.is_word("NOT") && ["LIKE", "IN", "BETWEEN"].iter().any(|k| self.is_word_at(1, k)) {
            return Some(Infix::Predicate { negated: true });
        }
        None
    }

    fn parse_binary(&mut self, min_prec: u8) -> PResult<Expr> {
        // A lone literal or name before `,` `)` `;` or the end (a VALUES item, a select
        // list column): no prefix, postfix or infix can apply, so it is its primary.
        if matches!(
            self.kind(),
            TokenKind::Integer
                | TokenKind::Decimal
                | TokenKind::Float
                | TokenKind::Money
                | TokenKind::String { .. }
                | TokenKind::Word
        ) && matches!(self.kind_at(1), TokenKind::Comma | TokenKind::RParen | TokenKind::Semicolon | TokenKind::Eof)
        {
            return self.parse_primary();
        }
        let start = self.pos;
        let mut left = self.parse_prefix(min_prec)?;
        let mut links = 0u32;
        let mut compared = false;
        let result = loop {
            let Some(infix) = self.infix() else {
                break Ok(left);
            };
            let prec = match infix {
                Infix::Binary(_, p) => p,
                Infix::Predicate { .. } => PREC_CMP,
            };
            if prec < min_prec {
                break Ok(left);
            }
            if prec == PREC_CMP {
                if compared {
                    // Comparisons do not chain.
                    break Ok(left);
                }
                compared = true;
            } else {
                compared = false;
            }
            links += 1;
            if let Err(e) = self.chain_link() {
                break Err(e);
            }
            let next = match infix {
                Infix::Binary(op, prec) => self.finish_binary(left, op, prec),
                Infix::Predicate { negated } => self.finish_predicate(left, negated),
            };
            match next {
                Ok(e) => {
                    left = Expr { kind: e.kind, span: self.span_from(start) };
                }
                Err(e) => break Err(e),
            }
        };
        self.release(links);
        result
    }

    fn finish_binary(&mut self, left: Expr, op: BinaryOp, prec: u8) -> PResult<Expr> {
        self.advance();
        if op.is_comparison() && self.is_any_word(&["ALL", "ANY", "SOME"]) && self.is_at(1, &TokenKind::LParen) {
            let quantifier = match self.take_word_upper()?.as_str() {
                "ALL" => Quantifier::All,
                "ANY" => Quantifier::Any,
                _ => Quantifier::Some,
            };
            let query = self.parse_paren_query()?;
            return Ok(Expr::new(ExprKind::Quantified {
                left: Box::new(left),
                op,
                quantifier,
                query: Box::new(query),
            }));
        }
        let right = self.parse_binary(prec + 1)?;
        Ok(Expr::new(ExprKind::Binary { op, left: Box::new(left), right: Box::new(right) }))
    }

    fn finish_predicate(&mut self, left: Expr, negated: bool) -> PResult<Expr> {
        if negated {
            self.advance(); // NOT
        }
        let left = Box::new(left);
        if self.eat_word("LIKE") {
            let pattern = Box::new(self.parse_binary(PREC_ADD)?);
            let escape = if self.eat_word("ESCAPE") { Some(Box::new(self.parse_binary(PREC_ADD)?)) } else { None };
            return Ok(Expr::new(ExprKind::Like { expr: left, pattern, escape, negated }));
        }
        if self.eat_word("BETWEEN") {
            let low = Box::new(self.parse_binary(PREC_ADD)?);
            self.expect_word("AND")?;
            let high = Box::new(self.parse_binary(PREC_ADD)?);
            return Ok(Expr::new(ExprKind::Between { expr: left, low, high, negated }));
        }
        if self.eat_word("IN") {
            if !self.is(&TokenKind::LParen) {
                return Err(self.error());
            }
            if self.paren_starts_query() {
                let query = self.parse_paren_query()?;
                return Ok(Expr::new(ExprKind::InSubquery { expr: left, query: Box::new(query), negated }));
            }
            self.advance();
            let list = self.nest(|p| {
                let mut list = vec![p.parse_expr()?];
                while p.eat(&TokenKind::Comma) {
                    list.push(p.parse_expr()?);
                }
                Ok(list)
            })?;
            self.expect(&TokenKind::RParen)?;
            return Ok(Expr::new(ExprKind::InList { expr: left, list, negated }));
        }
        if self.eat_word("IS") {
            let negated = self.eat_word("NOT");
            self.expect_word("NULL")?;
            return Ok(Expr::new(ExprKind::IsNull { expr: left, negated }));
        }
        Err(self.error())
    }

    /// NOT and unary operators, then a primary with its postfix operators.
    fn parse_prefix(&mut self, min_prec: u8) -> PResult<Expr> {
        let start = self.pos;
        if self.is_word("NOT") {
            if min_prec > PREC_NOT {
                return Err(self.error());
            }
            self.advance();
            let operand = self.nest(|p| p.parse_binary(PREC_NOT))?;
            return Ok(Expr {
                kind: ExprKind::Unary { op: UnaryOp::Not, expr: Box::new(operand) },
                span: self.span_from(start),
            });
        }
        let op = match self.kind() {
            TokenKind::Minus => Some(UnaryOp::Minus),
            TokenKind::Plus => Some(UnaryOp::Plus),
            TokenKind::Tilde => Some(UnaryOp::BitNot),
            _ => None,
        };
        if let Some(op) = op {
            self.advance();
            let operand = self.nest(|p| p.parse_binary(PREC_UNARY))?;
            return Ok(Expr { kind: ExprKind::Unary { op, expr: Box::new(operand) }, span: self.span_from(start) });
        }
        let primary = self.parse_primary()?;
        self.parse_postfix(primary, start)
    }

    fn parse_postfix(&mut self, mut expr: Expr, start: usize) -> PResult<Expr> {
        #[derive(Clone, Copy)]
        enum Step {
            Method,
            Collate,
            AtTimeZone,
        }
        let mut links = 0u32;
        let result = loop {
            // `(...).value(...)`, `@x.query(...)`, `CONVERT(xml, c).value(...)`; after a
            // column name the method was already taken by the name (see name_primary).
            let step = if self.is(&TokenKind::Dot)
                && self.is_ident_at(1)
                && (self.is_at(2, &TokenKind::LParen) || self.ident_at(1).is_some_and(is_clr_property))
                && !matches!(expr.kind, ExprKind::Column(_))
            {
                Step::Method
            } else if self.is_word("COLLATE") {
                Step::Collate
            } else if self.is_word("AT") && self.is_word_at(1, "TIME") && self.is_word_at(2, "ZONE") {
                Step::AtTimeZone
            } else {
                break Ok(expr);
            };
            // Postfix chains nest (each wraps the previous expression), so they cost a
            // full nesting level.
            links += super::NEST_COST;
            if let Err(e) = self.add_depth(super::NEST_COST) {
                break Err(e);
            }
            let target = Box::new(std::mem::replace(&mut expr, Expr::new(ExprKind::Default)));
            let kind = match step {
                Step::Method => {
                    self.advance();
                    self.parse_ident().and_then(|method| {
                        // A property (`@g.STX`) has no argument list.
                        let args = if self.is(&TokenKind::LParen) { self.parse_call_args()? } else { Vec::new() };
                        Ok(ExprKind::MethodCall { target, method, args })
                    })
                }
                Step::Collate => {
                    self.advance();
                    self.parse_ident().map(|collation| ExprKind::Collate { expr: target, collation })
                }
                Step::AtTimeZone => {
                    self.advance();
                    self.advance();
                    self.advance();
                    // The zone is a primary, so that `d AT TIME ZONE 'UTC' AT TIME ZONE
                    // 'Pacific Standard Time'` chains left to right.
                    self.nest(|p| p.parse_primary())
                        .map(|zone| ExprKind::AtTimeZone { expr: target, zone: Box::new(zone) })
                }
            };
            match kind {
                Ok(kind) => expr = Expr { kind, span: self.span_from(start) },
                Err(e) => break Err(e),
            }
        };
        self.release(links);
        result
    }

    /// Does the `(` at the cursor open a query (`(SELECT`, `(WITH`)? `((SELECT 1) + 1)`
    /// is an expression whose inner parenthesis is the subquery.
    pub(crate) fn paren_starts_query(&self) -> bool {
        self.is(&TokenKind::LParen) && (self.is_word_at(1, "SELECT") || self.is_word_at(1, "WITH"))
    }

    /// `( query )`
    pub(crate) fn parse_paren_query(&mut self) -> PResult<Query> {
        self.expect(&TokenKind::LParen)?;
        let q = self.nest(|p| p.parse_query())?;
        self.expect(&TokenKind::RParen)?;
        Ok(q)
    }

    fn literal(&mut self, lit: Literal) -> Expr {
        let span = self.peek().span;
        self.advance();
        Expr { kind: ExprKind::Literal(lit), span }
    }

    fn parse_primary(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let text = self.text();
        let e = match self.kind() {
            TokenKind::Integer => return Ok(self.literal(Literal::Integer(text.to_string()))),
            TokenKind::Decimal => return Ok(self.literal(Literal::Decimal(text.to_string()))),
            TokenKind::Float => return Ok(self.literal(Literal::Float(text.to_string()))),
            // A money token is `$` (one byte) followed by the number.
            TokenKind::Money => return Ok(self.literal(Literal::Money(text.get(1..).unwrap_or("").to_string()))),
            TokenKind::String { value, unicode } => {
                let lit = Literal::String { value: value.clone(), unicode: *unicode };
                return Ok(self.literal(lit));
            }
            TokenKind::Binary(bytes) => {
                let lit = Literal::Binary(bytes.clone());
                return Ok(self.literal(lit));
            }
            TokenKind::Variable => {
                self.advance();
                ExprKind::Variable(text.to_string())
            }
            TokenKind::SystemVariable => {
                self.advance();
                ExprKind::SystemVariable(text.to_string())
            }
            TokenKind::LParen => {
                if self.paren_starts_query() {
                    ExprKind::Subquery(Box::new(self.parse_paren_query()?))
                } else {
                    self.advance();
                    let inner = self.parse_expr()?;
                    self.expect(&TokenKind::RParen)?;
                    return Ok(Expr { kind: inner.kind, span: self.span_from(start) });
                }
            }
            TokenKind::Keyword => self.keyword_primary()?,
            TokenKind::Word => self.word_primary()?,
            TokenKind::QuotedIdent { .. } => self.name_primary()?,
            _ => return Err(self.error()),
        };
        Ok(Expr { kind: e, span: self.span_from(start) })
    }

    fn keyword_primary(&mut self) -> PResult<ExprKind> {
        let mut buf = [0u8; 32];
        let kw = super::upper_keyword(self.text(), &mut buf);
        let call_follows = self.is_at(1, &TokenKind::LParen);
        match kw {
            "NULL" => {
                self.advance();
                Ok(ExprKind::Literal(Literal::Null))
            }
            "CASE" => self.parse_case(),
            "CONVERT" | "TRY_CONVERT" if call_follows => self.parse_convert(kw == "TRY_CONVERT"),
            "EXISTS" if call_follows => {
                self.advance();
                Ok(ExprKind::Exists(Box::new(self.parse_paren_query()?)))
            }
            "CURRENT_TIMESTAMP" | "CURRENT_USER" | "SESSION_USER" | "SYSTEM_USER" | "USER" if !call_follows => {
                self.advance();
                Ok(ExprKind::Niladic(match kw {
                    "CURRENT_TIMESTAMP" => Niladic::CurrentTimestamp,
                    "CURRENT_USER" => Niladic::CurrentUser,
                    "SESSION_USER" => Niladic::SessionUser,
                    "SYSTEM_USER" => Niladic::SystemUser,
                    _ => Niladic::User,
                }))
            }
            // Reserved words that are also function names.
            "LEFT" | "RIGHT" | "COALESCE" | "NULLIF" | "IDENTITY" | "UPDATE" if call_follows => {
                let name = ObjectName::from_ident(Ident::plain(self.text()));
                self.advance();
                self.parse_function_call(name)
            }
            _ => Err(self.error()),
        }
    }

    fn word_primary(&mut self) -> PResult<ExprKind> {
        let call_follows = self.is_at(1, &TokenKind::LParen);
        if call_follows {
            if self.is_word("CAST") || self.is_word("TRY_CAST") {
                let try_cast = self.is_word("TRY_CAST");
                self.advance();
                self.advance();
                let expr = self.parse_expr()?;
                self.expect_word("AS")?;
                let data_type = self.parse_data_type()?;
                self.expect(&TokenKind::RParen)?;
                return Ok(ExprKind::Cast { expr: Box::new(expr), data_type, try_cast });
            }
            if self.is_word("PARSE") || self.is_word("TRY_PARSE") {
                let try_parse = self.is_word("TRY_PARSE");
                self.advance();
                self.advance();
                let expr = self.parse_additive()?;
                self.expect_word("AS")?;
                let data_type = self.parse_data_type()?;
                let culture = if self.eat_word("USING") { Some(Box::new(self.parse_expr()?)) } else { None };
                self.expect(&TokenKind::RParen)?;
                return Ok(ExprKind::Parse { expr: Box::new(expr), data_type, culture, try_parse });
            }
        }
        if self.is_word("NEXT") && self.is_word_at(1, "VALUE") && self.is_word_at(2, "FOR") {
            self.advance();
            self.advance();
            self.advance();
            let name = self.parse_object_name()?;
            let over = if self.eat_word("OVER") { Some(Box::new(self.parse_window_spec()?)) } else { None };
            return Ok(ExprKind::NextValueFor { name, over });
        }
        self.name_primary()
    }

    /// A column reference, function call or XML method call on a column.
    fn name_primary(&mut self) -> PResult<ExprKind> {
        let start = self.pos;
        let name = self.parse_object_name()?;
        if name.parts.len() == 1 && self.is(&TokenKind::DoubleColon) {
            // `hierarchyid::GetRoot()`: a static method of a CLR system type.
            self.advance();
            let method = self.parse_ident()?;
            let args = self.parse_call_args()?;
            let type_name = name.parts.into_iter().next().unwrap_or_else(|| Ident::plain(""));
            return Ok(ExprKind::StaticMethodCall { type_name, method, args });
        }
        if !self.is(&TokenKind::LParen) {
            return Ok(ExprKind::Column(name));
        }
        if name.parts.len() >= 2 && (is_xml_method(&name.name().value) || is_clr_method(&name.name().value)) {
            // The target's span is the whole dotted name (its line is what matters).
            let span = self.span_from(start);
            let mut parts = name.parts;
            let method = parts.pop().unwrap_or_else(|| Ident::plain(""));
            let args = self.parse_call_args()?;
            let target = Expr { kind: ExprKind::Column(ObjectName { parts }), span };
            return Ok(ExprKind::MethodCall { target: Box::new(target), method, args });
        }
        self.parse_function_call(name)
    }

    /// `( [arg, ...] )` where an argument may be DEFAULT.
    pub(crate) fn parse_call_args(&mut self) -> PResult<Vec<Expr>> {
        self.expect(&TokenKind::LParen)?;
        let mut args = Vec::new();
        if !self.eat(&TokenKind::RParen) {
            args = self.nest(|p| {
                let mut args = vec![p.parse_arg()?];
                while p.eat(&TokenKind::Comma) {
                    args.push(p.parse_arg()?);
                }
                Ok(args)
            })?;
            self.expect(&TokenKind::RParen)?;
        }
        Ok(args)
    }

    /// An expression, or DEFAULT where a function or VALUES row allows it.
    pub(crate) fn parse_arg(&mut self) -> PResult<Expr> {
        if self.is_word("DEFAULT") {
            let span = self.peek().span;
            self.advance();
            return Ok(Expr { kind: ExprKind::Default, span });
        }
        self.parse_expr()
    }

    /// After the function name: arguments, WITHIN GROUP, OVER.
    fn parse_function_call(&mut self, name: ObjectName) -> PResult<ExprKind> {
        self.expect(&TokenKind::LParen)?;
        let mut call =
            FunctionCall { name, args: Vec::new(), star: false, distinct: false, within_group: Vec::new(), over: None };
        let json_ctor = call.name.parts.len() == 1
            && ["JSON_OBJECT", "JSON_ARRAY"].iter().any(|n| call.name.name().value.eq_ignore_ascii_case(n));
        if json_ctor {
            let object = call.name.name().value.eq_ignore_ascii_case("JSON_OBJECT");
            call.args = self.nest(|p| p.parse_json_constructor_args(object))?;
        } else if self.is(&TokenKind::Star) && self.is_at(1, &TokenKind::RParen) {
            self.advance();
            call.star = true;
        } else if !self.is(&TokenKind::RParen) {
            if self.eat_word("DISTINCT") {
                call.distinct = true;
            } else {
                // ALL is the default and means nothing more.
                self.eat_word("ALL");
            }
            call.args = self.nest(|p| {
                let mut args = vec![p.parse_arg()?];
                while p.eat(&TokenKind::Comma) {
                    args.push(p.parse_arg()?);
                }
                Ok(args)
            })?;
        }
        self.expect(&TokenKind::RParen)?;
        if self.is_word("WITHIN") && self.is_word_at(1, "GROUP") {
            self.advance();
            self.advance();
            self.expect(&TokenKind::LParen)?;
            self.expect_word("ORDER")?;
            self.expect_word("BY")?;
            call.within_group = self.parse_order_by_items()?;
            self.expect(&TokenKind::RParen)?;
        }
        if self.eat_word("OVER") {
            call.over = Some(self.parse_window_spec()?);
        }
        Ok(ExprKind::Function(Box::new(call)))
    }

    /// The arguments of JSON_OBJECT (`key : value, ...`) and JSON_ARRAY (`value, ...`),
    /// each with an optional `NULL ON NULL | ABSENT ON NULL`. The clause becomes a hidden
    /// first argument, the string 'NULL' or 'ABSENT' (the default is NULL ON NULL for
    /// JSON_OBJECT, ABSENT ON NULL for JSON_ARRAY), which the binder extends with the
    /// arguments that already are JSON (see `scalar::json::construct`).
    fn parse_json_constructor_args(&mut self, object: bool) -> PResult<Vec<Expr>> {
        let span = self.peek().span;
        let mut args = vec![Expr { kind: ExprKind::Literal(Literal::Null), span }];
        let mut null_on_null = object;
        if !self.is(&TokenKind::RParen) && self.json_null_clause().is_none() {
            loop {
                args.push(self.parse_expr()?);
                if object {
                    self.expect(&TokenKind::Colon)?;
                    args.push(self.parse_expr()?);
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        if let Some(on_null) = self.json_null_clause() {
            for _ in 0..3 {
                self.advance();
            }
            null_on_null = on_null;
        }
        let mode = if null_on_null { "NULL" } else { "ABSENT" };
        args[0].kind = ExprKind::Literal(Literal::String { value: mode.to_string(), unicode: false });
        Ok(args)
    }

    /// At `NULL ON NULL` (Some(true)) or `ABSENT ON NULL` (Some(false)).
    fn json_null_clause(&self) -> Option<bool> {
        let on_null = self.is_word_at(1, "ON") && self.is_word_at(2, "NULL");
        if on_null && self.is_word("NULL") {
            Some(true)
        } else if on_null && self.is_word("ABSENT") {
            Some(false)
        } else {
            None
        }
    }

    fn parse_window_spec(&mut self) -> PResult<WindowSpec> {
        self.expect(&TokenKind::LParen)?;
        let mut spec = WindowSpec { partition_by: Vec::new(), order_by: Vec::new(), frame: None };
        if self.is_word("PARTITION") {
            self.advance();
            self.expect_word("BY")?;
            spec.partition_by.push(self.parse_expr()?);
            while self.eat(&TokenKind::Comma) {
                spec.partition_by.push(self.parse_expr()?);
            }
        }
        if self.eat_word("ORDER") {
            self.expect_word("BY")?;
            spec.order_by = self.parse_order_by_items()?;
        }
        if self.is_any_word(&["ROWS", "RANGE"]) {
            let units = if self.take_word_upper()? == "ROWS" { FrameUnits::Rows } else { FrameUnits::Range };
            let (start, end) = if self.eat_word("BETWEEN") {
                let start = self.parse_frame_bound()?;
                self.expect_word("AND")?;
                (start, Some(self.parse_frame_bound()?))
            } else {
                (self.parse_frame_bound()?, None)
            };
            spec.frame = Some(WindowFrame { units, start, end });
        }
        self.expect(&TokenKind::RParen)?;
        Ok(spec)
    }

    fn parse_frame_bound(&mut self) -> PResult<FrameBound> {
        if self.eat_word("UNBOUNDED") {
            if self.eat_word("PRECEDING") {
                return Ok(FrameBound::UnboundedPreceding);
            }
            self.expect_word("FOLLOWING")?;
            return Ok(FrameBound::UnboundedFollowing);
        }
        if self.eat_word("CURRENT") {
            self.expect_word("ROW")?;
            return Ok(FrameBound::CurrentRow);
        }
        let n = Box::new(self.parse_additive()?);
        if self.eat_word("PRECEDING") {
            return Ok(FrameBound::Preceding(n));
        }
        self.expect_word("FOLLOWING")?;
        Ok(FrameBound::Following(n))
    }

    fn parse_case(&mut self) -> PResult<ExprKind> {
        self.advance(); // CASE
        self.nest(|p| {
            let operand = if p.is_word("WHEN") { None } else { Some(p.parse_expr()?) };
            let mut branches = Vec::new();
            while p.eat_word("WHEN") {
                let when = p.parse_expr()?;
                p.expect_word("THEN")?;
                branches.push((when, p.parse_expr()?));
            }
            if branches.is_empty() {
                return Err(p.error());
            }
            let else_result = if p.eat_word("ELSE") { Some(p.parse_expr()?) } else { None };
            p.expect_word("END")?;
            Ok(ExprKind::Case(Box::new(Case { operand, branches, else_result })))
        })
    }

    fn parse_convert(&mut self, try_convert: bool) -> PResult<ExprKind> {
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let data_type = self.parse_data_type()?;
        self.expect(&TokenKind::Comma)?;
        let expr = self.parse_expr()?;
        let style = if self.eat(&TokenKind::Comma) { Some(Box::new(self.parse_expr()?)) } else { None };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Convert { data_type, expr: Box::new(expr), style, try_convert })
    }

    /// `int`, `decimal(18, 2)`, `nvarchar(max)`, `dbo.MyType`, `double precision`,
    /// `national character varying(10)`.
    pub(crate) fn parse_data_type(&mut self) -> PResult<DataType> {
        let name = if self.is_word("DOUBLE") && self.is_word_at(1, "PRECISION") {
            let s = format!("{} {}", self.text(), self.text_of(self.peek_at(1)));
            self.advance();
            self.advance();
            ObjectName::from_ident(Ident::plain(s))
        } else if self.is_word("NATIONAL") || self.is_any_word(&["CHAR", "CHARACTER"]) && self.is_word_at(1, "VARYING")
        {
            let mut words = vec![self.text().to_string()];
            let national = self.is_word("NATIONAL");
            self.advance();
            if national {
                if !self.is_any_word(&["CHAR", "CHARACTER", "TEXT"]) {
                    return Err(self.error());
                }
                words.push(self.text().to_string());
                self.advance();
            }
            if self.is_word("VARYING") {
                words.push(self.text().to_string());
                self.advance();
            }
            ObjectName::from_ident(Ident::plain(words.join(" ")))
        } else {
            self.parse_object_name()?
        };
        let mut args = Vec::new();
        if self.is(&TokenKind::LParen) {
            self.advance();
            loop {
                if self.is_word("MAX") {
                    self.advance();
                    args.push(TypeArg::Max);
                } else if self.is(&TokenKind::Integer) {
                    let n: i64 = self.text().parse().map_err(|_| self.error())?;
                    self.advance();
                    args.push(TypeArg::Num(n));
                } else {
                    return Err(self.error());
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
        }
        Ok(DataType { name, args })
    }

    /// A literal with an optional sign, or a variable: what option values, EXEC
    /// arguments and parameter defaults take.
    pub(crate) fn parse_simple_value(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let op = match self.kind() {
            TokenKind::Minus => Some(UnaryOp::Minus),
            TokenKind::Plus => Some(UnaryOp::Plus),
            _ => None,
        };
        if let Some(op) = op {
            self.advance();
            let inner = self.nest(|p| p.parse_simple_value())?;
            return Ok(Expr { kind: ExprKind::Unary { op, expr: Box::new(inner) }, span: self.span_from(start) });
        }
        match self.kind() {
            k if k.is_constant() => self.parse_primary(),
            TokenKind::Variable | TokenKind::SystemVariable => self.parse_primary(),
            TokenKind::Keyword if self.is_word("NULL") => self.parse_primary(),
            _ => Err(self.error()),
        }
    }
}
