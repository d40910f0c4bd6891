//! Printing the AST back as T-SQL.
//!
//! The contract: for any AST the parser produced, `parse(print(ast)) == ast` (spans
//! aside, see [`Span`]). Expressions and queries print on one line with the fewest
//! parentheses that keep the tree (SQL Server's precedence, left-associative operators);
//! statements print one per line, terminated by `;`, with nested blocks indented.
//!
//! Choices where T-SQL has several spellings of one meaning: `<>` for `!=`, `INNER JOIN`
//! for `JOIN`, `COMMIT TRANSACTION` for `COMMIT [WORK]`, `TOP (n)` for `TOP n`,
//! `expr AS alias` for `alias = expr`, `EXEC` for a batch-leading procedure call, `ON
//! PRIMARY` only when CREATE DATABASE has other filegroups.
//!
//! Limits (ASTs the parser never produces): a comparison used where T-SQL wants a scalar
//! prints in parentheses, which our parser accepts but SQL Server does not; an IF without
//! ELSE as the THEN branch of an IF with ELSE would print a dangling ELSE.

use std::fmt::{self, Display, Formatter, Write};

use types::TypeArg;

use crate::ast::*;

// ---------------------------------------------------------------------------------------
// Names, types, literals
// ---------------------------------------------------------------------------------------

impl Display for Ident {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.quote {
            QuoteStyle::None => f.write_str(&self.value),
            QuoteStyle::Bracket => write!(f, "[{}]", self.value.replace(']', "]]")),
            QuoteStyle::Double => write!(f, "\"{}\"", self.value.replace('"', "\"\"")),
        }
    }
}

impl Display for ObjectName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_char('.')?;
            }
            write!(f, "{part}")?;
        }
        Ok(())
    }
}

impl Display for NameRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            NameRef::Name(i) => write!(f, "{i}"),
            NameRef::Variable(v) => f.write_str(v),
        }
    }
}

impl Display for DataType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.args.is_empty() {
            f.write_char('(')?;
            for (i, a) in self.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                match a {
                    TypeArg::Num(n) => write!(f, "{n}")?,
                    TypeArg::Max => f.write_str("MAX")?,
                }
            }
            f.write_char(')')?;
        }
        Ok(())
    }
}

/// A string literal with `''` escapes.
pub fn quote_string(value: &str, unicode: bool) -> String {
    let mut s = String::with_capacity(value.len() + 3);
    if unicode {
        s.push('N');
    }
    s.push('\'');
    s.push_str(&value.replace('\'', "''"));
    s.push('\'');
    s
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Integer(s) | Literal::Decimal(s) | Literal::Float(s) => f.write_str(s),
            Literal::Money(s) => write!(f, "${s}"),
            Literal::String { value, unicode } => f.write_str(&quote_string(value, *unicode)),
            Literal::Binary(bytes) => {
                f.write_str("0x")?;
                for b in bytes {
                    write!(f, "{b:02X}")?;
                }
                Ok(())
            }
            Literal::Null => f.write_str("NULL"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------

const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_NOT: u8 = 3;
const P_CMP: u8 = 4;
const P_ADD: u8 = 5;
const P_MUL: u8 = 6;
const P_UNARY: u8 = 7;
const P_POSTFIX: u8 = 8;
const P_PRIMARY: u8 = 9;

fn binary_prec(op: BinaryOp) -> u8 {
    use BinaryOp as B;
    match op {
        B::Or => P_OR,
        B::And => P_AND,
        B::Mul | B::Div | B::Mod => P_MUL,
        B::Add | B::Sub | B::BitAnd | B::BitOr | B::BitXor => P_ADD,
        _ => P_CMP,
    }
}

fn binary_symbol(op: BinaryOp) -> &'static str {
    use BinaryOp as B;
    match op {
        B::Mul => "*",
        B::Div => "/",
        B::Mod => "%",
        B::Add => "+",
        B::Sub => "-",
        B::BitAnd => "&",
        B::BitOr => "|",
        B::BitXor => "^",
        B::Eq => "=",
        B::NotEq => "<>",
        B::Lt => "<",
        B::Gt => ">",
        B::LtEq => "<=",
        B::GtEq => ">=",
        B::NotLt => "!<",
        B::NotGt => "!>",
        B::And => "AND",
        B::Or => "OR",
    }
}

fn expr_prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary { op, .. } => binary_prec(*op),
        ExprKind::Unary { op: UnaryOp::Not, .. } => P_NOT,
        ExprKind::Unary { .. } => P_UNARY,
        ExprKind::Like { .. }
        | ExprKind::Between { .. }
        | ExprKind::InList { .. }
        | ExprKind::InSubquery { .. }
        | ExprKind::IsNull { .. }
        | ExprKind::Quantified { .. } => P_CMP,
        ExprKind::MethodCall { .. } | ExprKind::Collate { .. } | ExprKind::AtTimeZone { .. } => P_POSTFIX,
        _ => P_PRIMARY,
    }
}

/// An expression, in parentheses if it binds looser than `min`.
struct Prec<'a>(&'a Expr, u8);

impl Display for Prec<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if expr_prec(self.0) < self.1 {
            write!(f, "({})", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// A scalar position (select items, SET values, ...), parsed at additive level.
pub(crate) fn scalar(e: &Expr) -> impl Display + '_ {
    Prec(e, P_ADD)
}

struct List<'a, T>(&'a [T], &'a str);

impl<T: Display> Display for List<'_, T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

fn comma<T>(items: &[T]) -> List<'_, T> {
    List(items, ", ")
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal(l) => write!(f, "{l}"),
            ExprKind::Column(n) => write!(f, "{n}"),
            ExprKind::Variable(v) | ExprKind::SystemVariable(v) => f.write_str(v),
            ExprKind::Niladic(n) => f.write_str(match n {
                Niladic::CurrentTimestamp => "CURRENT_TIMESTAMP",
                Niladic::CurrentUser => "CURRENT_USER",
                Niladic::SessionUser => "SESSION_USER",
                Niladic::SystemUser => "SYSTEM_USER",
                Niladic::User => "USER",
            }),
            ExprKind::Default => f.write_str("DEFAULT"),
            ExprKind::Unary { op, expr } => {
                let sym = match op {
                    UnaryOp::Not => return write!(f, "NOT {}", Prec(expr, P_NOT)),
                    UnaryOp::Plus => "+",
                    UnaryOp::Minus => "-",
                    UnaryOp::BitNot => "~",
                };
                // `- -1` must not become the comment `--1`.
                let space = matches!(expr.kind, ExprKind::Unary { op: UnaryOp::Minus | UnaryOp::Plus, .. });
                write!(f, "{sym}{}{}", if space { " " } else { "" }, Prec(expr, P_UNARY))
            }
            ExprKind::Binary { op, left, right } => {
                let p = binary_prec(*op);
                if p == P_CMP {
                    // Comparisons do not chain: both sides are additive-level.
                    return write!(f, "{} {} {}", Prec(left, P_ADD), binary_symbol(*op), Prec(right, P_ADD));
                }
                // `a + b + c ...` is left-deep: walk its left spine in a loop rather than
                // recursing once per operator.
                let mut spine = vec![(*op, &**right)];
                let mut leftmost = &**left;
                while let ExprKind::Binary { op: lop, left: ll, right: lr } = &leftmost.kind {
                    if binary_prec(*lop) != p {
                        break;
                    }
                    spine.push((*lop, &**lr));
                    leftmost = ll;
                }
                write!(f, "{}", Prec(leftmost, p))?;
                for (op, r) in spine.iter().rev() {
                    write!(f, " {} {}", binary_symbol(*op), Prec(r, p + 1))?;
                }
                Ok(())
            }
            ExprKind::Like { expr, pattern, escape, negated } => {
                write!(f, "{} {}LIKE {}", Prec(expr, P_ADD), not(*negated), Prec(pattern, P_ADD))?;
                if let Some(e) = escape {
                    write!(f, " ESCAPE {}", Prec(e, P_ADD))?;
                }
                Ok(())
            }
            ExprKind::Between { expr, low, high, negated } => write!(
                f,
                "{} {}BETWEEN {} AND {}",
                Prec(expr, P_ADD),
                not(*negated),
                Prec(low, P_ADD),
                Prec(high, P_ADD)
            ),
            ExprKind::InList { expr, list, negated } => {
                write!(f, "{} {}IN ({})", Prec(expr, P_ADD), not(*negated), comma(list))
            }
            ExprKind::InSubquery { expr, query, negated } => {
                write!(f, "{} {}IN ({query})", Prec(expr, P_ADD), not(*negated))
            }
            ExprKind::Quantified { left, op, quantifier, query } => {
                let q = match quantifier {
                    Quantifier::All => "ALL",
                    Quantifier::Any => "ANY",
                    Quantifier::Some => "SOME",
                };
                write!(f, "{} {} {q} ({query})", Prec(left, P_ADD), binary_symbol(*op))
            }
            ExprKind::Exists(q) => write!(f, "EXISTS ({q})"),
            ExprKind::IsNull { expr, negated } => write!(f, "{} IS {}NULL", Prec(expr, P_ADD), not(*negated)),
            ExprKind::Case(c) => {
                f.write_str("CASE")?;
                if let Some(op) = &c.operand {
                    write!(f, " {op}")?;
                }
                for (w, t) in &c.branches {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(e) = &c.else_result {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            ExprKind::Cast { expr, data_type, try_cast } => {
                write!(f, "{}({expr} AS {data_type})", if *try_cast { "TRY_CAST" } else { "CAST" })
            }
            ExprKind::Convert { data_type, expr, style, try_convert } => {
                write!(f, "{}({data_type}, {expr}", if *try_convert { "TRY_CONVERT" } else { "CONVERT" })?;
                if let Some(s) = style {
                    write!(f, ", {s}")?;
                }
                f.write_char(')')
            }
            ExprKind::Parse { expr, data_type, culture, try_parse } => {
                write!(f, "{}({} AS {data_type}", if *try_parse { "TRY_PARSE" } else { "PARSE" }, Prec(expr, P_ADD))?;
                if let Some(c) = culture {
                    write!(f, " USING {c}")?;
                }
                f.write_char(')')
            }
            ExprKind::Function(call) => write!(f, "{call}"),
            ExprKind::StaticMethodCall { type_name, method, args } => {
                write!(f, "{type_name}::{method}({})", comma(args))
            }
            ExprKind::MethodCall { target, method, args } => {
                // `1.value(...)` would lex as the number `1.`, and in `d AT TIME ZONE
                // z.value(...)` the method would bind to the zone: parenthesize those.
                let wrap = matches!(
                    target.kind,
                    ExprKind::Literal(
                        Literal::Integer(_) | Literal::Decimal(_) | Literal::Float(_) | Literal::Money(_)
                    ) | ExprKind::AtTimeZone { .. }
                );
                if wrap {
                    write!(f, "({target}).{method}({})", comma(args))
                } else {
                    write!(f, "{}.{method}({})", Prec(target, P_POSTFIX), comma(args))
                }
            }
            ExprKind::Subquery(q) => write!(f, "({q})"),
            ExprKind::AtTimeZone { expr, zone } => {
                write!(f, "{} AT TIME ZONE {}", Prec(expr, P_POSTFIX), Prec(zone, P_PRIMARY))
            }
            ExprKind::Collate { expr, collation } => write!(f, "{} COLLATE {collation}", Prec(expr, P_POSTFIX)),
            ExprKind::NextValueFor { name, over } => {
                write!(f, "NEXT VALUE FOR {name}")?;
                match over {
                    Some(w) => write!(f, " OVER ({w})"),
                    None => Ok(()),
                }
            }
        }
    }
}

fn not(negated: bool) -> &'static str {
    if negated {
        "NOT "
    } else {
        ""
    }
}

impl Display for FunctionCall {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        if self.star {
            f.write_char('*')?;
        } else {
            if self.distinct {
                f.write_str("DISTINCT ")?;
            }
            write!(f, "{}", comma(&self.args))?;
        }
        f.write_char(')')?;
        if !self.within_group.is_empty() {
            write!(f, " WITHIN GROUP (ORDER BY {})", comma(&self.within_group))?;
        }
        if let Some(w) = &self.over {
            write!(f, " OVER ({w})")?;
        }
        Ok(())
    }
}

impl Display for WindowSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if !self.partition_by.is_empty() {
            write!(f, "PARTITION BY {}", comma(&self.partition_by))?;
            sep = " ";
        }
        if !self.order_by.is_empty() {
            write!(f, "{sep}ORDER BY {}", comma(&self.order_by))?;
            sep = " ";
        }
        if let Some(frame) = &self.frame {
            let units = match frame.units {
                FrameUnits::Rows => "ROWS",
                FrameUnits::Range => "RANGE",
            };
            match &frame.end {
                Some(end) => write!(f, "{sep}{units} BETWEEN {} AND {end}", frame.start)?,
                None => write!(f, "{sep}{units} {}", frame.start)?,
            }
        }
        Ok(())
    }
}

impl Display for FrameBound {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FrameBound::UnboundedPreceding => f.write_str("UNBOUNDED PRECEDING"),
            FrameBound::Preceding(e) => write!(f, "{} PRECEDING", Prec(e, P_ADD)),
            FrameBound::CurrentRow => f.write_str("CURRENT ROW"),
            FrameBound::Following(e) => write!(f, "{} FOLLOWING", Prec(e, P_ADD)),
            FrameBound::UnboundedFollowing => f.write_str("UNBOUNDED FOLLOWING"),
        }
    }
}

impl Display for OrderByItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        match self.direction {
            Some(SortDirection::Asc) => f.write_str(" ASC"),
            Some(SortDirection::Desc) => f.write_str(" DESC"),
            None => Ok(()),
        }
    }
}

impl Display for AssignOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AssignOp::Assign => "=",
            AssignOp::Add => "+=",
            AssignOp::Sub => "-=",
            AssignOp::Mul => "*=",
            AssignOp::Div => "/=",
            AssignOp::Mod => "%=",
            AssignOp::BitAnd => "&=",
            AssignOp::BitOr => "|=",
            AssignOp::BitXor => "^=",
        })
    }
}

// ---------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------

struct Ctes<'a>(&'a [Cte]);

impl Display for Ctes<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        f.write_str("WITH ")?;
        for (i, cte) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", cte.name)?;
            if !cte.columns.is_empty() {
                write!(f, " ({})", comma(&cte.columns))?;
            }
            write!(f, " AS ({})", cte.query)?;
        }
        f.write_char(' ')
    }
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", Ctes(&self.with), self.body)?;
        if !self.order_by.is_empty() {
            write!(f, " ORDER BY {}", comma(&self.order_by))?;
        }
        if let Some(o) = &self.offset {
            write!(f, " OFFSET {} ROWS", Prec(o, P_ADD))?;
        }
        if let Some(n) = &self.fetch {
            write!(f, " FETCH NEXT {} ROWS ONLY", Prec(n, P_ADD))?;
        }
        if let Some(fc) = &self.for_clause {
            write!(f, " {fc}")?;
        }
        if !self.hints.is_empty() {
            write!(f, " OPTION ({})", comma(&self.hints))?;
        }
        Ok(())
    }
}

impl Display for SetExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SetExpr::Select(s) => write!(f, "{s}"),
            SetExpr::Query(q) => write!(f, "({q})"),
            SetExpr::SetOp { op, left, right } => {
                // Left-deep like operator chains: loop down the left spine.
                let mut spine = vec![(*op, &**right)];
                let mut leftmost = &**left;
                while let SetExpr::SetOp { op, left, right } = leftmost {
                    spine.push((*op, &**right));
                    leftmost = left;
                }
                write!(f, "{leftmost}")?;
                for (op, right) in spine.iter().rev() {
                    let op = match op {
                        SetOperator::Union => "UNION",
                        SetOperator::UnionAll => "UNION ALL",
                        SetOperator::Except => "EXCEPT",
                        SetOperator::Intersect => "INTERSECT",
                    };
                    write!(f, " {op} {right}")?;
                }
                Ok(())
            }
        }
    }
}

impl Display for Top {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "TOP ({})", self.quantity)?;
        if self.percent {
            f.write_str(" PERCENT")?;
        }
        if self.with_ties {
            f.write_str(" WITH TIES")?;
        }
        Ok(())
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        if let Some(t) = &self.top {
            write!(f, "{t} ")?;
        }
        write!(f, "{}", comma(&self.items))?;
        if let Some(i) = &self.into {
            write!(f, " INTO {i}")?;
        }
        if !self.from.is_empty() {
            write!(f, " FROM {}", comma(&self.from))?;
        }
        if let Some(w) = &self.where_clause {
            write!(f, " WHERE {w}")?;
        }
        if !self.group_by.is_empty() {
            write!(f, " GROUP BY {}", comma(&self.group_by))?;
        }
        if let Some(h) = &self.having {
            write!(f, " HAVING {h}")?;
        }
        Ok(())
    }
}

impl Display for SelectItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SelectItem::Wildcard(None) => f.write_char('*'),
            SelectItem::Wildcard(Some(q)) => write!(f, "{q}.*"),
            SelectItem::Expr { expr, alias } => {
                write!(f, "{}", scalar(expr))?;
                if let Some(a) = alias {
                    write!(f, " AS {a}")?;
                }
                Ok(())
            }
            SelectItem::Assign { variable, op, expr } => write!(f, "{variable} {op} {}", scalar(expr)),
        }
    }
}

impl Display for GroupByItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            GroupByItem::Expr(e) => write!(f, "{e}"),
            GroupByItem::Rollup(v) => write!(f, "ROLLUP ({})", comma(v)),
            GroupByItem::Cube(v) => write!(f, "CUBE ({})", comma(v)),
            GroupByItem::GroupingSets(sets) => {
                f.write_str("GROUPING SETS (")?;
                for (i, set) in sets.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "({})", comma(set))?;
                }
                f.write_char(')')
            }
        }
    }
}

impl Display for TableWithJoins {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.relation)?;
        for j in &self.joins {
            let kind = match j.kind {
                JoinKind::Inner => "INNER",
                JoinKind::LeftOuter => "LEFT OUTER",
                JoinKind::RightOuter => "RIGHT OUTER",
                JoinKind::FullOuter => "FULL OUTER",
                JoinKind::Cross => "CROSS",
                JoinKind::CrossApply => "CROSS APPLY",
                JoinKind::OuterApply => "OUTER APPLY",
            };
            write!(f, " {kind}")?;
            if !matches!(j.kind, JoinKind::CrossApply | JoinKind::OuterApply) {
                if let Some(h) = &j.hint {
                    write!(f, " {h}")?;
                }
                f.write_str(" JOIN")?;
            }
            write!(f, " {}", j.relation)?;
            if let Some(on) = &j.on {
                write!(f, " ON {on}")?;
            }
        }
        Ok(())
    }
}

struct AliasCols<'a>(&'a Option<TableAlias>);

impl Display for AliasCols<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(a) = self.0 {
            write!(f, " AS {}", a.name)?;
            if !a.columns.is_empty() {
                write!(f, " ({})", comma(&a.columns))?;
            }
        }
        Ok(())
    }
}

impl Display for TableHint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.args.is_empty() {
            write!(f, "({})", comma(&self.args))?;
        }
        Ok(())
    }
}

fn rows(rows: &[Vec<Expr>]) -> String {
    rows.iter().map(|r| format!("({})", comma(r))).collect::<Vec<_>>().join(", ")
}

impl Display for TableFactor {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TableFactor::Table { name, alias, hints } => {
                write!(f, "{name}")?;
                if let Some(a) = alias {
                    write!(f, " AS {a}")?;
                }
                if !hints.is_empty() {
                    write!(f, " WITH ({})", comma(hints))?;
                }
                Ok(())
            }
            TableFactor::Variable { name, alias } => {
                f.write_str(name)?;
                if let Some(a) = alias {
                    write!(f, " AS {a}")?;
                }
                Ok(())
            }
            TableFactor::Derived { query, alias } => write!(f, "({query}){}", AliasCols(alias)),
            TableFactor::Values { rows: r, alias } => write!(f, "(VALUES {}){}", rows(r), AliasCols(alias)),
            TableFactor::Function { name, args, alias } => write!(f, "{name}({}){}", comma(args), AliasCols(alias)),
            TableFactor::OpenJson { args, schema, alias } => {
                write!(f, "OPENJSON({})", comma(args))?;
                if let Some(cols) = schema {
                    f.write_str(" WITH (")?;
                    for (i, c) in cols.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{} {}", c.name, c.data_type)?;
                        if let Some(p) = &c.path {
                            write!(f, " {}", quote_string(p, true))?;
                        }
                        if c.as_json {
                            f.write_str(" AS JSON")?;
                        }
                    }
                    f.write_str(")")?;
                }
                write!(f, "{}", AliasCols(alias))
            }
            TableFactor::XmlNodes { target, args, alias } => {
                write!(f, "{}.nodes({}){}", Prec(target, P_POSTFIX), comma(args), AliasCols(alias))
            }
            TableFactor::NestedJoin(t) => write!(f, "({t})"),
            TableFactor::Pivot { source, aggregate, value, column, values, alias } => {
                write!(f, "{source} PIVOT ({aggregate}({value}) FOR {column} IN ({})) AS {alias}", comma(values))
            }
            TableFactor::Unpivot { source, value, name, columns, alias } => {
                write!(f, "{source} UNPIVOT ({value} FOR {name} IN ({})) AS {alias}", comma(columns))
            }
        }
    }
}

impl Display for ForClause {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ForKind::Xml => "FOR XML",
            ForKind::Json => "FOR JSON",
            ForKind::Browse => "FOR BROWSE",
        })?;
        for (i, o) in self.options.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(&o.name)?;
            if let Some(a) = &o.arg {
                write!(f, "({a})")?;
            }
        }
        Ok(())
    }
}

impl Display for QueryHint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(v) = &self.value {
            write!(f, "{}{v}", if self.equals { " = " } else { " " })?;
        }
        if let Some(args) = &self.args {
            write!(f, " ({})", comma(args))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------

impl Display for OptionItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(v) = &self.value {
            write!(f, "{}{v}", if self.equals { " = " } else { " " })?;
        }
        Ok(())
    }
}

impl Display for OptionValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Name(n) => write!(f, "{n}"),
            OptionValue::Expr(e) => write!(f, "{e}"),
            OptionValue::Quantity { value, unit } if unit == "%" => write!(f, "{value}%"),
            OptionValue::Quantity { value, unit } => write!(f, "{value} {unit}"),
            OptionValue::List { word, items } => {
                if let Some(w) = word {
                    write!(f, "{w} ")?;
                }
                write!(f, "({})", comma(items))
            }
        }
    }
}

fn with_paren_options(options: &[OptionItem]) -> String {
    if options.is_empty() {
        String::new()
    } else {
        format!(" WITH ({})", comma(options))
    }
}

// ---------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------

impl Display for Batch {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut p = Printer::default();
        p.statements(&self.statements)?;
        f.write_str(&p.out)
    }
}

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)
    }
}

impl Display for StatementKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut p = Printer::default();
        p.statement(self)?;
        f.write_str(&p.out)
    }
}

/// Statement printer: tracks indentation for nested blocks.
#[derive(Default)]
struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn w(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        self.out.write_fmt(args)
    }

    /// Statements each on a line, `;`-terminated (labels are not).
    fn statements(&mut self, stmts: &[Statement]) -> fmt::Result {
        for (i, s) in stmts.iter().enumerate() {
            if i > 0 {
                self.newline();
            }
            self.statement(&s.kind)?;
            // Labels take no terminator; a procedure's body already ends with one.
            if !matches!(
                s.kind,
                StatementKind::Label(_) | StatementKind::CreateProcedure(_) | StatementKind::CreateTrigger(_)
            ) {
                self.out.push(';');
            }
        }
        Ok(())
    }

    fn indented_block(&mut self, stmts: &[Statement]) -> fmt::Result {
        if !stmts.is_empty() {
            self.indent += 1;
            self.newline();
            self.statements(stmts)?;
            self.indent -= 1;
        }
        self.newline();
        Ok(())
    }

    /// The body of IF/ELSE/WHILE on its own line: indented, unless it is a BEGIN...END
    /// or TRY/CATCH block, which lines up with its keyword.
    fn nested(&mut self, s: &Statement) -> fmt::Result {
        let block = matches!(s.kind, StatementKind::Block(_) | StatementKind::TryCatch { .. });
        if !block {
            self.indent += 1;
        }
        self.newline();
        self.statement(&s.kind)?;
        if !block {
            self.indent -= 1;
        }
        Ok(())
    }

    fn statement(&mut self, s: &StatementKind) -> fmt::Result {
        use StatementKind as S;
        match s {
            S::Query(q) => self.w(format_args!("{q}")),
            S::Insert(i) => self.insert(i),
            S::Update(u) => self.update(u),
            S::Delete(d) => self.delete(d),
            S::Merge(m) => self.merge(m),
            S::InsertBulk(b) => {
                self.w(format_args!("INSERT BULK {} ({})", b.table, comma(&b.columns)))?;
                if !b.options.is_empty() {
                    let opts: Vec<String> = b
                        .options
                        .iter()
                        .map(|o| match o {
                            BulkOption::Flag(n) => n.clone(),
                            BulkOption::Value(n, v) => format!("{n} = {}", scalar(v)),
                            BulkOption::Order(cols) => format!("ORDER ({})", comma(cols)),
                        })
                        .collect();
                    self.w(format_args!(" WITH ({})", opts.join(", ")))?;
                }
                Ok(())
            }
            S::Use(db) => self.w(format_args!("USE {db}")),
            S::CreateDatabase(db) => self.create_database(db),
            S::AlterDatabase(a) => self.alter_database(a),
            S::CreateRole { name, authorization } => {
                self.w(format_args!("CREATE ROLE {name}"))?;
                if let Some(a) = authorization {
                    self.w(format_args!(" AUTHORIZATION {a}"))?;
                }
                Ok(())
            }
            S::CreateSchema { name, authorization } => {
                self.w(format_args!("CREATE SCHEMA {name}"))?;
                if let Some(a) = authorization {
                    self.w(format_args!(" AUTHORIZATION {a}"))?;
                }
                Ok(())
            }
            S::CreateTable(t) => {
                self.w(format_args!("CREATE TABLE {} ", t.name))?;
                self.table_elements(&t.elements)?;
                if let Some(on) = &t.on {
                    self.w(format_args!(" ON {}", FgRef(on)))?;
                }
                if let Some(ti) = &t.textimage_on {
                    self.w(format_args!(" TEXTIMAGE_ON {ti}"))?;
                }
                self.out.push_str(&with_paren_options(&t.options));
                Ok(())
            }
            S::AlterTable(a) => self.alter_table(a),
            S::CreateIndex(i) => self.create_index(i),
            S::AlterIndex(a) => {
                match &a.name {
                    Some(n) => self.w(format_args!("ALTER INDEX {n} ON {} ", a.table))?,
                    None => self.w(format_args!("ALTER INDEX ALL ON {} ", a.table))?,
                }
                match &a.action {
                    AlterIndexAction::Rebuild(o) => self.w(format_args!("REBUILD{}", with_paren_options(o))),
                    AlterIndexAction::Reorganize(o) => self.w(format_args!("REORGANIZE{}", with_paren_options(o))),
                    AlterIndexAction::Disable => self.w(format_args!("DISABLE")),
                    AlterIndexAction::Set(o) => self.w(format_args!("SET ({})", comma(o))),
                }
            }
            S::DropIndex { if_exists, indexes } => {
                self.w(format_args!("DROP INDEX {}", if *if_exists { "IF EXISTS " } else { "" }))?;
                for (i, item) in indexes.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.w(format_args!("{}", item.index))?;
                    if let Some(t) = &item.table {
                        self.w(format_args!(" ON {t}"))?;
                    }
                }
                Ok(())
            }
            S::CreateProcedure(p) => self.create_procedure(p),
            S::CreateTrigger(t) => self.create_trigger(t),
            S::EnableTrigger { enable, names, table } => {
                self.w(format_args!("{} TRIGGER ", if *enable { "ENABLE" } else { "DISABLE" }))?;
                match names {
                    None => self.out.push_str("ALL"),
                    Some(n) => self.w(format_args!("{}", comma(n)))?,
                }
                self.w(format_args!(" ON {table}"))
            }
            S::CreateView(v) => {
                self.w(format_args!("{} VIEW {}", mode(v.mode), v.name))?;
                if !v.columns.is_empty() {
                    self.w(format_args!(" ({})", comma(&v.columns)))?;
                }
                self.module_options(&v.options)?;
                self.w(format_args!(" AS"))?;
                self.newline();
                self.w(format_args!("{}", v.query))?;
                if v.check_option {
                    self.out.push_str(" WITH CHECK OPTION");
                }
                Ok(())
            }
            S::CreateFunction(func) => self.create_function(func),
            S::CreateType(t) => match &t.definition {
                TypeDefinition::Table(elements) => {
                    self.w(format_args!("CREATE TYPE {} AS TABLE ", t.name))?;
                    self.table_elements(elements)
                }
                TypeDefinition::Alias { base, nullable } => {
                    let null = match nullable {
                        Some(true) => " NULL",
                        Some(false) => " NOT NULL",
                        None => "",
                    };
                    self.w(format_args!("CREATE TYPE {} FROM {base}{null}", t.name))
                }
            },
            S::Drop { kind, if_exists, names } => {
                let what = match kind {
                    DropKind::Table => "TABLE",
                    DropKind::View => "VIEW",
                    DropKind::Procedure => "PROCEDURE",
                    DropKind::Function => "FUNCTION",
                    DropKind::Trigger => "TRIGGER",
                    DropKind::Database => "DATABASE",
                    DropKind::Schema => "SCHEMA",
                    DropKind::Login => "LOGIN",
                    DropKind::User => "USER",
                    DropKind::Role => "ROLE",
                    DropKind::Type => "TYPE",
                    DropKind::Sequence => "SEQUENCE",
                    DropKind::Synonym => "SYNONYM",
                    DropKind::EventSession(scope) => {
                        return self.w(format_args!("DROP EVENT SESSION {} ON {}", comma(names), scope_word(*scope)));
                    }
                };
                self.w(format_args!("DROP {what} {}{}", if *if_exists { "IF EXISTS " } else { "" }, comma(names)))
            }
            S::Truncate { table } => self.w(format_args!("TRUNCATE TABLE {table}")),
            S::Sequence { alter, def } => {
                self.w(format_args!("{} SEQUENCE {}", if *alter { "ALTER" } else { "CREATE" }, def.name))?;
                if let Some(t) = &def.data_type {
                    self.w(format_args!(" AS {t}"))?;
                }
                if let Some(v) = &def.start {
                    self.w(format_args!(" START WITH {v}"))?;
                }
                match &def.restart {
                    Some(Some(v)) => self.w(format_args!(" RESTART WITH {v}"))?,
                    Some(None) => self.w(format_args!(" RESTART"))?,
                    None => {}
                }
                if let Some(v) = &def.increment {
                    self.w(format_args!(" INCREMENT BY {v}"))?;
                }
                for (word, bound) in [("MINVALUE", &def.min), ("MAXVALUE", &def.max)] {
                    match bound {
                        Some(Some(v)) => self.w(format_args!(" {word} {v}"))?,
                        Some(None) => self.w(format_args!(" NO {word}"))?,
                        None => {}
                    }
                }
                match def.cycle {
                    Some(true) => self.w(format_args!(" CYCLE"))?,
                    Some(false) => self.w(format_args!(" NO CYCLE"))?,
                    None => {}
                }
                match &def.cache {
                    Some(SequenceCache::Default) => self.w(format_args!(" CACHE")),
                    Some(SequenceCache::Size(v)) => self.w(format_args!(" CACHE {v}")),
                    Some(SequenceCache::None) => self.w(format_args!(" NO CACHE")),
                    None => Ok(()),
                }
            }
            S::Declare(decls) => self.declare(decls),
            S::SetVariable { name, op, value } => self.w(format_args!("SET {name} {op} {}", scalar(value))),
            S::SetCursor { name, definition } => {
                self.w(format_args!("SET {name} = "))?;
                self.cursor_definition(definition)
            }
            S::SetOption(o) => self.set_option(o),
            S::Block(stmts) => {
                self.out.push_str("BEGIN");
                self.indented_block(stmts)?;
                self.out.push_str("END");
                Ok(())
            }
            S::If { condition, then_branch, else_branch } => {
                self.w(format_args!("IF {condition}"))?;
                self.nested(then_branch)?;
                if let Some(e) = else_branch {
                    self.newline();
                    self.out.push_str("ELSE");
                    if matches!(e.kind, StatementKind::If { .. }) {
                        // ELSE IF on one line.
                        self.out.push(' ');
                        self.statement(&e.kind)?;
                    } else {
                        self.nested(e)?;
                    }
                }
                Ok(())
            }
            S::While { condition, body } => {
                self.w(format_args!("WHILE {condition}"))?;
                self.nested(body)
            }
            S::Break => self.w(format_args!("BREAK")),
            S::Continue => self.w(format_args!("CONTINUE")),
            S::Goto(l) => self.w(format_args!("GOTO {l}")),
            S::Label(l) => self.w(format_args!("{l}:")),
            S::Return(None) => self.w(format_args!("RETURN")),
            S::Return(Some(e)) => self.w(format_args!("RETURN {e}")),
            S::TryCatch { try_block, catch_block } => {
                self.out.push_str("BEGIN TRY");
                self.indented_block(try_block)?;
                self.out.push_str("END TRY");
                self.newline();
                self.out.push_str("BEGIN CATCH");
                self.indented_block(catch_block)?;
                self.out.push_str("END CATCH");
                Ok(())
            }
            S::Throw(None) => self.w(format_args!("THROW")),
            S::Throw(Some(t)) => self.w(format_args!("THROW {}, {}, {}", t.number, t.message, t.state)),
            S::Raiserror(r) => {
                self.w(format_args!("RAISERROR({}, {}, {}", r.message, r.severity, r.state))?;
                for a in &r.args {
                    self.w(format_args!(", {a}"))?;
                }
                self.out.push(')');
                if !r.options.is_empty() {
                    let opts: Vec<&str> = r
                        .options
                        .iter()
                        .map(|o| match o {
                            RaiserrorOption::Log => "LOG",
                            RaiserrorOption::NoWait => "NOWAIT",
                            RaiserrorOption::SetError => "SETERROR",
                        })
                        .collect();
                    self.w(format_args!(" WITH {}", opts.join(", ")))?;
                }
                Ok(())
            }
            S::Print(e) => self.w(format_args!("PRINT {e}")),
            S::WaitFor { kind, value } => {
                let k = match kind {
                    WaitForKind::Delay => "DELAY",
                    WaitForKind::Time => "TIME",
                };
                self.w(format_args!("WAITFOR {k} {value}"))
            }
            S::Exec(e) => self.w(format_args!("{}", ExecDisplay(e))),
            S::ExecString(e) => self.w(format_args!("{}", ExecStringDisplay(e))),
            S::ExecuteAs(e) => self.w(format_args!("EXECUTE {}", ExecAs(e))),
            S::Revert => self.w(format_args!("REVERT")),
            S::BeginTransaction { name, distributed, mark } => {
                self.w(format_args!("BEGIN {}TRANSACTION", if *distributed { "DISTRIBUTED " } else { "" }))?;
                if let Some(n) = name {
                    self.w(format_args!(" {n}"))?;
                }
                if let Some(m) = mark {
                    self.out.push_str(" WITH MARK");
                    if let Some(d) = m {
                        self.w(format_args!(" {d}"))?;
                    }
                }
                Ok(())
            }
            S::Commit { name, delayed_durability } => {
                self.out.push_str("COMMIT TRANSACTION");
                if let Some(n) = name {
                    self.w(format_args!(" {n}"))?;
                }
                if let Some(dd) = delayed_durability {
                    self.w(format_args!(" WITH (DELAYED_DURABILITY = {})", if *dd { "ON" } else { "OFF" }))?;
                }
                Ok(())
            }
            S::Rollback { name } => {
                self.out.push_str("ROLLBACK TRANSACTION");
                if let Some(n) = name {
                    self.w(format_args!(" {n}"))?;
                }
                Ok(())
            }
            S::SaveTransaction { name } => self.w(format_args!("SAVE TRANSACTION {name}")),
            S::Checkpoint(None) => self.w(format_args!("CHECKPOINT")),
            S::Checkpoint(Some(e)) => self.w(format_args!("CHECKPOINT {e}")),
            S::Dbcc(d) => {
                self.w(format_args!("DBCC {}", d.command))?;
                if !d.args.is_empty() {
                    self.w(format_args!("({})", comma(&d.args)))?;
                }
                if !d.options.is_empty() {
                    self.w(format_args!(" WITH {}", comma(&d.options)))?;
                }
                Ok(())
            }
            S::Backup(b) => self.backup(b),
            S::Restore(r) => self.restore(r),
            S::EventSession(es) => self.event_session(es),
            S::CreateLogin(l) => {
                self.w(format_args!("CREATE LOGIN {}", l.name))?;
                if l.windows {
                    self.out.push_str(" FROM WINDOWS");
                }
                if !l.options.is_empty() {
                    self.w(format_args!(" WITH {}", comma(&l.options)))?;
                }
                Ok(())
            }
            S::AlterLogin(l) => {
                self.w(format_args!("ALTER LOGIN {} ", l.name))?;
                match &l.action {
                    AlterLoginAction::Enable => self.w(format_args!("ENABLE")),
                    AlterLoginAction::Disable => self.w(format_args!("DISABLE")),
                    AlterLoginAction::With(o) => self.w(format_args!("WITH {}", comma(o))),
                }
            }
            S::CreateUser(u) => {
                self.w(format_args!("CREATE USER {}", u.name))?;
                if let Some(l) = &u.login {
                    self.w(format_args!(" FOR LOGIN {l}"))?;
                }
                if u.without_login {
                    self.out.push_str(" WITHOUT LOGIN");
                }
                if !u.options.is_empty() {
                    self.w(format_args!(" WITH {}", comma(&u.options)))?;
                }
                Ok(())
            }
            S::AlterRole { server, role, add, member } => self.w(format_args!(
                "ALTER {}ROLE {role} {} MEMBER {member}",
                if *server { "SERVER " } else { "" },
                if *add { "ADD" } else { "DROP" }
            )),
            S::Permission(p) => self.permission(p),
            S::OpenCursor(c) => self.w(format_args!("OPEN {}", CursorDisplay(c))),
            S::CloseCursor(c) => self.w(format_args!("CLOSE {}", CursorDisplay(c))),
            S::DeallocateCursor(c) => self.w(format_args!("DEALLOCATE {}", CursorDisplay(c))),
            S::Fetch(fe) => {
                self.out.push_str("FETCH ");
                if let Some(d) = &fe.direction {
                    match d {
                        FetchDirection::Next => self.out.push_str("NEXT"),
                        FetchDirection::Prior => self.out.push_str("PRIOR"),
                        FetchDirection::First => self.out.push_str("FIRST"),
                        FetchDirection::Last => self.out.push_str("LAST"),
                        FetchDirection::Absolute(e) => self.w(format_args!("ABSOLUTE {e}"))?,
                        FetchDirection::Relative(e) => self.w(format_args!("RELATIVE {e}"))?,
                    }
                    self.out.push_str(" FROM ");
                }
                self.w(format_args!("{}", CursorDisplay(&fe.cursor)))?;
                if !fe.into.is_empty() {
                    self.w(format_args!(" INTO {}", fe.into.join(", ")))?;
                }
                Ok(())
            }
            S::Kill { target, status_only } => {
                self.w(format_args!("KILL {target}{}", if *status_only { " WITH STATUSONLY" } else { "" }))
            }
            S::Reconfigure { with_override } => {
                self.w(format_args!("RECONFIGURE{}", if *with_override { " WITH OVERRIDE" } else { "" }))
            }
            S::Shutdown { nowait } => self.w(format_args!("SHUTDOWN{}", if *nowait { " WITH NOWAIT" } else { "" })),
            S::Other { text, .. } => {
                self.out.push_str(text);
                Ok(())
            }
        }
    }

    fn output(&mut self, output: &[OutputClause]) -> fmt::Result {
        for o in output {
            self.w(format_args!(" OUTPUT {}", comma(&o.items)))?;
            if let Some(into) = &o.into {
                self.w(format_args!(" INTO {}", DmlTargetDisplay(&into.target)))?;
                if !into.columns.is_empty() {
                    self.w(format_args!(" ({})", comma(&into.columns)))?;
                }
            }
        }
        Ok(())
    }

    fn insert(&mut self, i: &Insert) -> fmt::Result {
        self.w(format_args!("{}INSERT ", Ctes(&i.with)))?;
        if let Some(t) = &i.top {
            self.w(format_args!("{t} "))?;
        }
        self.w(format_args!("INTO {}", DmlTargetDisplay(&i.target)))?;
        if !i.columns.is_empty() {
            self.w(format_args!(" ({})", comma(&i.columns)))?;
        }
        self.output(&i.output)?;
        match &i.source {
            InsertSource::Values(r) => self.w(format_args!(" VALUES {}", rows(r))),
            InsertSource::Query(q) => self.w(format_args!(" {q}")),
            InsertSource::ExecProcedure(e) => self.w(format_args!(" {}", ExecDisplay(e))),
            InsertSource::ExecString(e) => self.w(format_args!(" {}", ExecStringDisplay(e))),
            InsertSource::DefaultValues => self.w(format_args!(" DEFAULT VALUES")),
        }
    }

    fn update(&mut self, u: &Update) -> fmt::Result {
        self.w(format_args!("{}UPDATE ", Ctes(&u.with)))?;
        if let Some(t) = &u.top {
            self.w(format_args!("{t} "))?;
        }
        self.w(format_args!("{} SET ", DmlTargetDisplay(&u.target)))?;
        self.assignments(&u.assignments)?;
        self.output(&u.output)?;
        self.write_from_where(&u.from, &u.where_clause)?;
        self.current_of(&u.current_of)?;
        if !u.hints.is_empty() {
            self.w(format_args!(" OPTION ({})", comma(&u.hints)))?;
        }
        Ok(())
    }

    fn delete(&mut self, d: &Delete) -> fmt::Result {
        self.w(format_args!("{}DELETE ", Ctes(&d.with)))?;
        if let Some(t) = &d.top {
            self.w(format_args!("{t} "))?;
        }
        self.w(format_args!("FROM {}", DmlTargetDisplay(&d.target)))?;
        self.output(&d.output)?;
        self.write_from_where(&d.from, &d.where_clause)?;
        self.current_of(&d.current_of)?;
        if !d.hints.is_empty() {
            self.w(format_args!(" OPTION ({})", comma(&d.hints)))?;
        }
        Ok(())
    }

    fn merge(&mut self, m: &Merge) -> fmt::Result {
        self.w(format_args!("{}MERGE ", Ctes(&m.with)))?;
        if let Some(t) = &m.top {
            self.w(format_args!("{t} "))?;
        }
        self.w(format_args!("INTO {}", DmlTargetDisplay(&m.target)))?;
        if let Some(a) = &m.alias {
            self.w(format_args!(" AS {a}"))?;
        }
        self.w(format_args!(" USING {} ON {}", m.source, m.on))?;
        for c in &m.clauses {
            self.out.push_str(match c.when {
                MergeWhen::Matched => " WHEN MATCHED",
                MergeWhen::NotMatchedByTarget => " WHEN NOT MATCHED BY TARGET",
                MergeWhen::NotMatchedBySource => " WHEN NOT MATCHED BY SOURCE",
            });
            if let Some(cond) = &c.condition {
                self.w(format_args!(" AND {cond}"))?;
            }
            self.out.push_str(" THEN ");
            match &c.action {
                MergeAction::Update(assignments) => {
                    self.out.push_str("UPDATE SET ");
                    self.assignments(assignments)?;
                }
                MergeAction::Delete => self.out.push_str("DELETE"),
                MergeAction::Insert { columns, values } => {
                    self.out.push_str("INSERT");
                    if !columns.is_empty() {
                        self.w(format_args!(" ({})", comma(columns)))?;
                    }
                    match values {
                        Some(v) => self.w(format_args!(" VALUES {}", rows(std::slice::from_ref(v))))?,
                        None => self.out.push_str(" DEFAULT VALUES"),
                    }
                }
            }
        }
        self.output(&m.output)?;
        if !m.hints.is_empty() {
            self.w(format_args!(" OPTION ({})", comma(&m.hints)))?;
        }
        Ok(())
    }

    fn assignments(&mut self, assignments: &[Assignment]) -> fmt::Result {
        for (i, a) in assignments.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match &a.target {
                AssignTarget::Column(c) => self.w(format_args!("{c}"))?,
                AssignTarget::Variable(v) => self.out.push_str(v),
            }
            self.w(format_args!(" {} {}", a.op, scalar(&a.value)))?;
        }
        Ok(())
    }

    fn current_of(&mut self, c: &Option<CursorRef>) -> fmt::Result {
        match c {
            Some(c) => self.w(format_args!(" WHERE CURRENT OF {}", CursorDisplay(c))),
            None => Ok(()),
        }
    }

    fn write_from_where(&mut self, from: &[TableWithJoins], where_clause: &Option<Expr>) -> fmt::Result {
        if !from.is_empty() {
            self.w(format_args!(" FROM {}", comma(from)))?;
        }
        if let Some(w) = where_clause {
            self.w(format_args!(" WHERE {w}"))?;
        }
        Ok(())
    }

    fn create_database(&mut self, db: &CreateDatabase) -> fmt::Result {
        self.w(format_args!("CREATE DATABASE {}", db.name))?;
        if !db.files.is_empty() || !db.filegroups.is_empty() {
            // PRIMARY is optional; it is spelled out only when other filegroups follow.
            self.out.push_str(if db.filegroups.is_empty() { " ON" } else { " ON PRIMARY" });
            let mut first = true;
            for spec in &db.files {
                self.out.push_str(if first { " " } else { ", " });
                first = false;
                self.w(format_args!("{spec}"))?;
            }
            for fg in &db.filegroups {
                self.out.push_str(if first { " " } else { ", " });
                first = false;
                self.w(format_args!("FILEGROUP {}", fg.name))?;
                if let Some(c) = &fg.contains {
                    self.w(format_args!(" CONTAINS {c}"))?;
                }
                if fg.default {
                    self.out.push_str(" DEFAULT");
                }
                self.w(format_args!(" {}", comma(&fg.files)))?;
            }
        }
        if !db.log_files.is_empty() {
            self.w(format_args!(" LOG ON {}", comma(&db.log_files)))?;
        }
        if let Some(c) = &db.collation {
            self.w(format_args!(" COLLATE {c}"))?;
        }
        if let Some(s) = &db.snapshot_of {
            self.w(format_args!(" AS SNAPSHOT OF {s}"))?;
        }
        if !db.options.is_empty() {
            self.w(format_args!(" WITH {}", comma(&db.options)))?;
        }
        if let Some(a) = &db.attach {
            self.w(format_args!(" FOR {a}"))?;
        }
        Ok(())
    }

    fn alter_database(&mut self, a: &AlterDatabase) -> fmt::Result {
        match &a.database {
            DatabaseRef::Name(n) => self.w(format_args!("ALTER DATABASE {n} "))?,
            DatabaseRef::Current => self.out.push_str("ALTER DATABASE CURRENT "),
        }
        match &a.action {
            AlterDatabaseAction::Set { options, termination } => {
                self.w(format_args!("SET {}", comma(options)))?;
                match termination {
                    None => {}
                    Some(Termination::RollbackImmediate) => self.out.push_str(" WITH ROLLBACK IMMEDIATE"),
                    Some(Termination::RollbackAfter { seconds }) => {
                        self.w(format_args!(" WITH ROLLBACK AFTER {seconds} SECONDS"))?
                    }
                    Some(Termination::NoWait) => self.out.push_str(" WITH NO_WAIT"),
                }
                Ok(())
            }
            AlterDatabaseAction::ModifyName(n) => self.w(format_args!("MODIFY NAME = {n}")),
            AlterDatabaseAction::AddFiles { log, files, filegroup } => {
                self.w(format_args!("ADD {}FILE {}", if *log { "LOG " } else { "" }, comma(files)))?;
                if let Some(fg) = filegroup {
                    self.w(format_args!(" TO FILEGROUP {fg}"))?;
                }
                Ok(())
            }
            AlterDatabaseAction::ModifyFile(spec) => self.w(format_args!("MODIFY FILE {spec}")),
            AlterDatabaseAction::RemoveFile(n) => self.w(format_args!("REMOVE FILE {n}")),
            AlterDatabaseAction::AddFilegroup(n) => self.w(format_args!("ADD FILEGROUP {n}")),
            AlterDatabaseAction::RemoveFilegroup(n) => self.w(format_args!("REMOVE FILEGROUP {n}")),
            AlterDatabaseAction::Collate(c) => self.w(format_args!("COLLATE {c}")),
        }
    }

    fn table_elements(&mut self, elements: &[TableElement]) -> fmt::Result {
        self.out.push('(');
        self.indent += 1;
        for (i, e) in elements.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.newline();
            self.w(format_args!("{e}"))?;
        }
        self.indent -= 1;
        self.newline();
        self.out.push(')');
        Ok(())
    }

    fn alter_table(&mut self, a: &AlterTable) -> fmt::Result {
        self.w(format_args!("ALTER TABLE {} ", a.name))?;
        let with_check = |wc: &Option<bool>| match wc {
            Some(true) => "WITH CHECK ",
            Some(false) => "WITH NOCHECK ",
            None => "",
        };
        match &a.action {
            AlterTableAction::Add { with_check: wc, elements } => {
                self.w(format_args!("{}ADD {}", with_check(wc), comma(elements)))
            }
            AlterTableAction::Drop(items) => {
                self.out.push_str("DROP ");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.w(format_args!(
                        "{}{}{}",
                        if item.column { "COLUMN " } else { "CONSTRAINT " },
                        if item.if_exists { "IF EXISTS " } else { "" },
                        item.name
                    ))?;
                }
                Ok(())
            }
            AlterTableAction::AlterColumn { name, data_type, collation, nullable, sparse } => {
                self.w(format_args!("ALTER COLUMN {name} {data_type}"))?;
                if let Some(c) = collation {
                    self.w(format_args!(" COLLATE {c}"))?;
                }
                if *sparse {
                    self.out.push_str(" SPARSE");
                }
                match nullable {
                    Some(true) => self.out.push_str(" NULL"),
                    Some(false) => self.out.push_str(" NOT NULL"),
                    None => {}
                }
                Ok(())
            }
            AlterTableAction::AlterColumnProperty { name, add, property } => {
                self.w(format_args!("ALTER COLUMN {name} {} {property}", if *add { "ADD" } else { "DROP" }))
            }
            AlterTableAction::CheckConstraints { with_check: wc, enable, names } => {
                self.w(format_args!("{}{} CONSTRAINT ", with_check(wc), if *enable { "CHECK" } else { "NOCHECK" }))?;
                match names {
                    None => self.out.push_str("ALL"),
                    Some(n) => self.w(format_args!("{}", comma(n)))?,
                }
                Ok(())
            }
            AlterTableAction::Trigger { enable, names } => {
                self.w(format_args!("{} TRIGGER ", if *enable { "ENABLE" } else { "DISABLE" }))?;
                match names {
                    None => self.out.push_str("ALL"),
                    Some(n) => self.w(format_args!("{}", comma(n)))?,
                }
                Ok(())
            }
            AlterTableAction::Set(o) => self.w(format_args!("SET ({})", comma(o))),
            AlterTableAction::Rebuild(o) => self.w(format_args!("REBUILD{}", with_paren_options(o))),
        }
    }

    fn create_index(&mut self, i: &CreateIndex) -> fmt::Result {
        self.out.push_str("CREATE ");
        if i.unique {
            self.out.push_str("UNIQUE ");
        }
        self.out.push_str(clustered_word(i.clustered));
        if i.columnstore {
            self.out.push_str("COLUMNSTORE ");
        }
        self.w(format_args!("INDEX {} ON {}", i.name, i.table))?;
        if !i.columns.is_empty() {
            self.w(format_args!(" ({})", comma(&i.columns)))?;
        }
        if !i.include.is_empty() {
            self.w(format_args!(" INCLUDE ({})", comma(&i.include)))?;
        }
        if let Some(w) = &i.filter {
            self.w(format_args!(" WHERE {w}"))?;
        }
        self.out.push_str(&with_paren_options(&i.options));
        if let Some(on) = &i.on {
            self.w(format_args!(" ON {}", FgRef(on)))?;
        }
        Ok(())
    }

    fn params(&mut self, params: &[Parameter], parens: bool) -> fmt::Result {
        if parens {
            self.out.push_str(" (");
        }
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            if parens {
                if i > 0 {
                    self.out.push(' ');
                }
            } else {
                self.indent += 1;
                self.newline();
                self.indent -= 1;
            }
            self.w(format_args!("{} {}", p.name, p.data_type))?;
            if p.varying {
                self.out.push_str(" VARYING");
            }
            if let Some(d) = &p.default {
                self.w(format_args!(" = {d}"))?;
            }
            if p.output {
                self.out.push_str(" OUTPUT");
            }
            if p.readonly {
                self.out.push_str(" READONLY");
            }
        }
        if parens {
            self.out.push(')');
        }
        Ok(())
    }

    fn module_options(&mut self, options: &[ModuleOption]) -> fmt::Result {
        if options.is_empty() {
            return Ok(());
        }
        self.out.push_str(" WITH ");
        for (i, o) in options.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match o {
                ModuleOption::Encryption => self.out.push_str("ENCRYPTION"),
                ModuleOption::Recompile => self.out.push_str("RECOMPILE"),
                ModuleOption::SchemaBinding => self.out.push_str("SCHEMABINDING"),
                ModuleOption::NativeCompilation => self.out.push_str("NATIVE_COMPILATION"),
                ModuleOption::ViewMetadata => self.out.push_str("VIEW_METADATA"),
                ModuleOption::ReturnsNullOnNullInput => self.out.push_str("RETURNS NULL ON NULL INPUT"),
                ModuleOption::CalledOnNullInput => self.out.push_str("CALLED ON NULL INPUT"),
                ModuleOption::ExecuteAs(p) => match p {
                    ExecuteAsPrincipal::Caller => self.out.push_str("EXECUTE AS CALLER"),
                    ExecuteAsPrincipal::SelfPrincipal => self.out.push_str("EXECUTE AS SELF"),
                    ExecuteAsPrincipal::Owner => self.out.push_str("EXECUTE AS OWNER"),
                    ExecuteAsPrincipal::User(u) => self.w(format_args!("EXECUTE AS {u}"))?,
                },
                ModuleOption::Other(item) => self.w(format_args!("{item}"))?,
            }
        }
        Ok(())
    }

    fn create_procedure(&mut self, p: &CreateProcedure) -> fmt::Result {
        self.w(format_args!("{} PROCEDURE {}", mode(p.mode), p.name))?;
        self.params(&p.params, false)?;
        self.module_options(&p.options)?;
        if p.for_replication {
            self.out.push_str(" FOR REPLICATION");
        }
        self.newline();
        self.out.push_str("AS");
        self.newline();
        self.statements(&p.body)
    }

    fn create_trigger(&mut self, t: &CreateTrigger) -> fmt::Result {
        self.w(format_args!("{} TRIGGER {} ON {}", mode(t.mode), t.name, t.table))?;
        self.module_options(&t.options)?;
        self.out.push_str(match (t.timing, t.written_for) {
            (TriggerTiming::InsteadOf, _) => " INSTEAD OF ",
            (TriggerTiming::After, true) => " FOR ",
            (TriggerTiming::After, false) => " AFTER ",
        });
        let events: Vec<&str> = [(t.insert, "INSERT"), (t.update, "UPDATE"), (t.delete, "DELETE")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, e)| *e)
            .collect();
        self.out.push_str(&events.join(", "));
        if t.not_for_replication {
            self.out.push_str(" NOT FOR REPLICATION");
        }
        self.newline();
        self.out.push_str("AS");
        self.newline();
        self.statements(&t.body)
    }

    fn create_function(&mut self, func: &CreateFunction) -> fmt::Result {
        self.w(format_args!("{} FUNCTION {}", mode(func.mode), func.name))?;
        if func.params.is_empty() {
            self.out.push_str("()");
        } else {
            self.params(&func.params, true)?;
        }
        match &func.returns {
            FunctionBody::Scalar { data_type, body } => {
                self.w(format_args!(" RETURNS {data_type}"))?;
                self.module_options(&func.options)?;
                self.out.push_str(" AS");
                self.newline();
                self.out.push_str("BEGIN");
                self.indented_block(body)?;
                self.out.push_str("END");
            }
            FunctionBody::InlineTable { query } => {
                self.out.push_str(" RETURNS TABLE");
                self.module_options(&func.options)?;
                self.out.push_str(" AS");
                self.newline();
                self.w(format_args!("RETURN {query}"))?;
            }
            FunctionBody::MultiStatement { variable, elements, body } => {
                self.w(format_args!(" RETURNS {variable} TABLE "))?;
                self.table_elements(elements)?;
                self.module_options(&func.options)?;
                self.out.push_str(" AS");
                self.newline();
                self.out.push_str("BEGIN");
                self.indented_block(body)?;
                self.out.push_str("END");
            }
        }
        Ok(())
    }

    fn declare(&mut self, decls: &[Declaration]) -> fmt::Result {
        self.out.push_str("DECLARE ");
        for (i, d) in decls.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match d {
                Declaration::Variable { name, data_type, value } => {
                    self.w(format_args!("{name} {data_type}"))?;
                    if let Some(v) = value {
                        self.w(format_args!(" = {}", scalar(v)))?;
                    }
                }
                Declaration::Table { name, elements } => {
                    self.w(format_args!("{name} TABLE "))?;
                    self.table_elements(elements)?;
                }
                Declaration::Cursor { name, definition: c } => {
                    self.w(format_args!("{name} "))?;
                    self.cursor_definition(c)?;
                }
            }
        }
        Ok(())
    }

    fn cursor_definition(&mut self, c: &CursorDefinition) -> fmt::Result {
        for o in &c.iso_options {
            self.w(format_args!("{o} "))?;
        }
        self.out.push_str("CURSOR ");
        for o in &c.options {
            self.w(format_args!("{o} "))?;
        }
        self.w(format_args!("FOR {}", c.query))?;
        if let Some(cols) = &c.for_update {
            self.out.push_str(" FOR UPDATE");
            if !cols.is_empty() {
                self.w(format_args!(" OF {}", comma(cols)))?;
            }
        }
        if c.read_only {
            self.out.push_str(" FOR READ ONLY");
        }
        Ok(())
    }

    fn set_option(&mut self, o: &SetOption) -> fmt::Result {
        match o {
            SetOption::Flags { names, on } => {
                self.w(format_args!("SET {} {}", names.join(", "), if *on { "ON" } else { "OFF" }))
            }
            SetOption::IsolationLevel(l) => {
                let level = match l {
                    IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
                    IsolationLevel::ReadCommitted => "READ COMMITTED",
                    IsolationLevel::RepeatableRead => "REPEATABLE READ",
                    IsolationLevel::Snapshot => "SNAPSHOT",
                    IsolationLevel::Serializable => "SERIALIZABLE",
                };
                self.w(format_args!("SET TRANSACTION ISOLATION LEVEL {level}"))
            }
            SetOption::IdentityInsert { table, on } => {
                self.w(format_args!("SET IDENTITY_INSERT {table} {}", if *on { "ON" } else { "OFF" }))
            }
            SetOption::Value { name, value } => match value {
                SetValue::Word(w) => self.w(format_args!("SET {name} {w}")),
                SetValue::Expr(e) => self.w(format_args!("SET {name} {e}")),
            },
        }
    }

    fn backup(&mut self, b: &Backup) -> fmt::Result {
        let kind = match b.kind {
            BackupKind::Database => "DATABASE",
            BackupKind::Log => "LOG",
        };
        self.w(format_args!("BACKUP {kind} {} TO {}", b.database, comma(&b.to)))?;
        if !b.options.is_empty() {
            self.w(format_args!(" WITH {}", comma(&b.options)))?;
        }
        Ok(())
    }

    fn restore(&mut self, r: &Restore) -> fmt::Result {
        let kind = match r.kind {
            RestoreKind::Database => "DATABASE",
            RestoreKind::Log => "LOG",
            RestoreKind::VerifyOnly => "VERIFYONLY",
            RestoreKind::HeaderOnly => "HEADERONLY",
            RestoreKind::FileListOnly => "FILELISTONLY",
            RestoreKind::LabelOnly => "LABELONLY",
        };
        self.w(format_args!("RESTORE {kind}"))?;
        if let Some(db) = &r.database {
            self.w(format_args!(" {db}"))?;
        }
        if !r.from.is_empty() {
            self.w(format_args!(" FROM {}", comma(&r.from)))?;
        }
        if !r.options.is_empty() {
            self.w(format_args!(" WITH {}", comma(&r.options)))?;
        }
        Ok(())
    }

    fn event_session(&mut self, es: &EventSession) -> fmt::Result {
        self.w(format_args!(
            "{} EVENT SESSION {} ON {}",
            if es.alter { "ALTER" } else { "CREATE" },
            es.name,
            scope_word(es.scope)
        ))?;
        if let Some(start) = es.state {
            return self.w(format_args!(" STATE = {}", if start { "START" } else { "STOP" }));
        }
        let mut prev_target: Option<bool> = None;
        for c in &es.clauses {
            let is_target = matches!(c, EventSessionClause::AddTarget(_) | EventSessionClause::DropTarget(_));
            // Commas separate clauses of one kind; events and targets are not separated.
            if prev_target == Some(is_target) {
                self.out.push(',');
            }
            prev_target = Some(is_target);
            self.indent += 1;
            self.newline();
            self.indent -= 1;
            match c {
                EventSessionClause::AddEvent(e) => {
                    self.w(format_args!("ADD EVENT {}", e.name))?;
                    if !e.set.is_empty() || !e.actions.is_empty() || e.predicate.is_some() {
                        let mut parts = Vec::new();
                        if !e.set.is_empty() {
                            parts.push(format!("SET {}", set_list(&e.set)));
                        }
                        if !e.actions.is_empty() {
                            parts.push(format!("ACTION ({})", comma(&e.actions)));
                        }
                        if let Some(p) = &e.predicate {
                            parts.push(format!("WHERE {p}"));
                        }
                        self.w(format_args!(" ({})", parts.join(" ")))?;
                    }
                }
                EventSessionClause::DropEvent(n) => self.w(format_args!("DROP EVENT {n}"))?,
                EventSessionClause::AddTarget(t) => {
                    self.w(format_args!("ADD TARGET {}", t.name))?;
                    if !t.set.is_empty() {
                        self.w(format_args!(" (SET {})", set_list(&t.set)))?;
                    }
                }
                EventSessionClause::DropTarget(n) => self.w(format_args!("DROP TARGET {n}"))?,
            }
        }
        if !es.options.is_empty() {
            self.indent += 1;
            self.newline();
            self.indent -= 1;
            self.w(format_args!("WITH ({})", comma(&es.options)))?;
        }
        Ok(())
    }

    fn permission(&mut self, p: &Permission) -> fmt::Result {
        let verb = match p.action {
            PermissionAction::Grant => "GRANT",
            PermissionAction::Deny => "DENY",
            PermissionAction::Revoke => "REVOKE",
        };
        self.w(format_args!("{verb} "))?;
        if p.grant_option_for {
            self.out.push_str("GRANT OPTION FOR ");
        }
        self.out.push_str(&p.permissions.join(", "));
        if let Some(on) = &p.on {
            self.out.push_str(" ON ");
            if let Some(c) = &on.class {
                self.w(format_args!("{c}::"))?;
            }
            self.w(format_args!("{}", on.name))?;
        }
        let to = if p.action == PermissionAction::Revoke { "FROM" } else { "TO" };
        self.w(format_args!(" {to} {}", comma(&p.principals)))?;
        if p.with_grant_option {
            self.out.push_str(" WITH GRANT OPTION");
        }
        if p.cascade {
            self.out.push_str(" CASCADE");
        }
        if let Some(a) = &p.as_principal {
            self.w(format_args!(" AS {a}"))?;
        }
        Ok(())
    }
}

fn set_list(set: &[(Ident, Expr)]) -> String {
    set.iter().map(|(k, v)| format!("{k} = {}", scalar(v))).collect::<Vec<_>>().join(", ")
}

fn scope_word(scope: EventSessionScope) -> &'static str {
    match scope {
        EventSessionScope::Server => "SERVER",
        EventSessionScope::Database => "DATABASE",
    }
}

fn mode(m: CreateMode) -> &'static str {
    match m {
        CreateMode::Create => "CREATE",
        CreateMode::Alter => "ALTER",
        CreateMode::CreateOrAlter => "CREATE OR ALTER",
    }
}

fn clustered_word(c: Option<bool>) -> &'static str {
    match c {
        Some(true) => "CLUSTERED ",
        Some(false) => "NONCLUSTERED ",
        None => "",
    }
}

struct FgRef<'a>(&'a FilegroupRef);

impl Display for FgRef<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.name)?;
        if let Some(c) = &self.0.partition_column {
            write!(f, "({c})")?;
        }
        Ok(())
    }
}

struct DmlTargetDisplay<'a>(&'a DmlTarget);

impl Display for DmlTargetDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            DmlTarget::Table { name, hints } => {
                write!(f, "{name}")?;
                if !hints.is_empty() {
                    write!(f, " WITH ({})", comma(hints))?;
                }
                Ok(())
            }
            DmlTarget::Variable(v) => f.write_str(v),
        }
    }
}

struct ExecDisplay<'a>(&'a ExecProcedure);

impl Display for ExecDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let e = self.0;
        f.write_str("EXEC ")?;
        if let Some(rc) = &e.return_status {
            write!(f, "{rc} = ")?;
        }
        match &e.procedure {
            ProcedureRef::Name(n) => write!(f, "{n}")?,
            ProcedureRef::Variable(v) => f.write_str(v)?,
        }
        for (i, a) in e.args.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            if let Some(n) = &a.name {
                write!(f, "{n} = ")?;
            }
            write!(f, "{}", a.value)?;
            if a.output {
                f.write_str(" OUTPUT")?;
            }
        }
        if e.recompile {
            f.write_str(" WITH RECOMPILE")?;
        }
        Ok(())
    }
}

struct ExecAs<'a>(&'a ExecuteAs);

impl Display for ExecAs<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            ExecuteAs::Caller => f.write_str("AS CALLER"),
            ExecuteAs::Login(e) => write!(f, "AS LOGIN = {e}"),
            ExecuteAs::User(e) => write!(f, "AS USER = {e}"),
        }
    }
}

struct ExecStringDisplay<'a>(&'a ExecString);

impl Display for ExecStringDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "EXEC ({})", self.0.sql)?;
        if let Some(c) = &self.0.context {
            write!(f, " {}", ExecAs(c))?;
        }
        if let Some(s) = &self.0.at_server {
            write!(f, " AT {s}")?;
        }
        Ok(())
    }
}

struct CursorDisplay<'a>(&'a CursorRef);

impl Display for CursorDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.0.global {
            f.write_str("GLOBAL ")?;
        }
        write!(f, "{}", self.0.name)
    }
}

impl Display for FileSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(n) = &self.name {
            parts.push(format!("NAME = {n}"));
        }
        if let Some(n) = &self.new_name {
            parts.push(format!("NEWNAME = {n}"));
        }
        if let Some(n) = &self.filename {
            parts.push(format!("FILENAME = {n}"));
        }
        if let Some(s) = &self.size {
            parts.push(format!("SIZE = {s}"));
        }
        match &self.max_size {
            Some(MaxSize::Unlimited) => parts.push("MAXSIZE = UNLIMITED".into()),
            Some(MaxSize::Size(s)) => parts.push(format!("MAXSIZE = {s}")),
            None => {}
        }
        if let Some(s) = &self.file_growth {
            parts.push(format!("FILEGROWTH = {s}"));
        }
        if self.offline {
            parts.push("OFFLINE".into());
        }
        write!(f, "({})", parts.join(", "))
    }
}

impl Display for Size {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value)?;
        f.write_str(match self.unit {
            None => "",
            Some(SizeUnit::Kb) => "KB",
            Some(SizeUnit::Mb) => "MB",
            Some(SizeUnit::Gb) => "GB",
            Some(SizeUnit::Tb) => "TB",
            Some(SizeUnit::Percent) => "%",
        })
    }
}

impl Display for DatabaseOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseOption::Recovery(r) => write!(
                f,
                "RECOVERY {}",
                match r {
                    RecoveryModel::Simple => "SIMPLE",
                    RecoveryModel::Full => "FULL",
                    RecoveryModel::BulkLogged => "BULK_LOGGED",
                }
            ),
            DatabaseOption::DelayedDurability(d) => write!(
                f,
                "DELAYED_DURABILITY = {}",
                match d {
                    DelayedDurability::Disabled => "DISABLED",
                    DelayedDurability::Allowed => "ALLOWED",
                    DelayedDurability::Forced => "FORCED",
                }
            ),
            DatabaseOption::TargetRecoveryTime { value, unit } => write!(
                f,
                "TARGET_RECOVERY_TIME = {value} {}",
                match unit {
                    TimeUnit::Seconds => "SECONDS",
                    TimeUnit::Minutes => "MINUTES",
                }
            ),
            DatabaseOption::ReadOnly => f.write_str("READ_ONLY"),
            DatabaseOption::ReadWrite => f.write_str("READ_WRITE"),
            DatabaseOption::PageVerify(p) => write!(
                f,
                "PAGE_VERIFY {}",
                match p {
                    PageVerify::Checksum => "CHECKSUM",
                    PageVerify::TornPageDetection => "TORN_PAGE_DETECTION",
                    PageVerify::None => "NONE",
                }
            ),
            DatabaseOption::SingleUser => f.write_str("SINGLE_USER"),
            DatabaseOption::RestrictedUser => f.write_str("RESTRICTED_USER"),
            DatabaseOption::MultiUser => f.write_str("MULTI_USER"),
            DatabaseOption::Online => f.write_str("ONLINE"),
            DatabaseOption::Offline => f.write_str("OFFLINE"),
            DatabaseOption::Emergency => f.write_str("EMERGENCY"),
            DatabaseOption::Other(item) => write!(f, "{item}"),
        }
    }
}

impl Display for TableElement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TableElement::Column(c) => write!(f, "{c}"),
            TableElement::Constraint(c) => write!(f, "{c}"),
            TableElement::Index(i) => {
                write!(f, "INDEX {} ", i.name)?;
                if i.unique {
                    f.write_str("UNIQUE ")?;
                }
                write!(f, "{}({})", clustered_word(i.clustered), comma(&i.columns))?;
                f.write_str(&with_paren_options(&i.options))
            }
        }
    }
}

impl Display for IndexColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        match self.direction {
            Some(SortDirection::Asc) => f.write_str(" ASC"),
            Some(SortDirection::Desc) => f.write_str(" DESC"),
            None => Ok(()),
        }
    }
}

fn constraint_name(f: &mut Formatter<'_>, name: &Option<Ident>) -> fmt::Result {
    if let Some(n) = name {
        write!(f, "CONSTRAINT {n} ")?;
    }
    Ok(())
}

fn index_tail(f: &mut Formatter<'_>, options: &[OptionItem], on: &Option<FilegroupRef>) -> fmt::Result {
    f.write_str(&with_paren_options(options))?;
    if let Some(on) = on {
        write!(f, " ON {}", FgRef(on))?;
    }
    Ok(())
}

impl Display for Reference {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "REFERENCES {}", self.table)?;
        if !self.columns.is_empty() {
            write!(f, " ({})", comma(&self.columns))?;
        }
        let action = |a: ReferentialAction| match a {
            ReferentialAction::NoAction => "NO ACTION",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET NULL",
            ReferentialAction::SetDefault => "SET DEFAULT",
        };
        if let Some(a) = self.on_delete {
            write!(f, " ON DELETE {}", action(a))?;
        }
        if let Some(a) = self.on_update {
            write!(f, " ON UPDATE {}", action(a))?;
        }
        if self.not_for_replication {
            f.write_str(" NOT FOR REPLICATION")?;
        }
        Ok(())
    }
}

impl Display for ColumnDef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if let Some(t) = &self.data_type {
            write!(f, " {t}")?;
        }
        if let Some(c) = &self.computed {
            write!(f, " AS {}", c.expr)?;
            if c.persisted {
                f.write_str(" PERSISTED")?;
            }
        }
        for o in &self.options {
            f.write_char(' ')?;
            match o {
                ColumnOption::Null => f.write_str("NULL")?,
                ColumnOption::NotNull => f.write_str("NOT NULL")?,
                ColumnOption::Identity { seed_increment, not_for_replication } => {
                    f.write_str("IDENTITY")?;
                    if let Some((s, i)) = seed_increment {
                        write!(f, "({s}, {i})")?;
                    }
                    if *not_for_replication {
                        f.write_str(" NOT FOR REPLICATION")?;
                    }
                }
                ColumnOption::Default { name, expr } => {
                    constraint_name(f, name)?;
                    write!(f, "DEFAULT {expr}")?;
                }
                ColumnOption::PrimaryKey { name, clustered, options, on } => {
                    constraint_name(f, name)?;
                    f.write_str("PRIMARY KEY")?;
                    if let Some(c) = clustered {
                        f.write_str(if *c { " CLUSTERED" } else { " NONCLUSTERED" })?;
                    }
                    index_tail(f, options, on)?;
                }
                ColumnOption::Unique { name, clustered, options, on } => {
                    constraint_name(f, name)?;
                    f.write_str("UNIQUE")?;
                    if let Some(c) = clustered {
                        f.write_str(if *c { " CLUSTERED" } else { " NONCLUSTERED" })?;
                    }
                    index_tail(f, options, on)?;
                }
                ColumnOption::Check { name, expr, not_for_replication } => {
                    constraint_name(f, name)?;
                    f.write_str("CHECK ")?;
                    if *not_for_replication {
                        f.write_str("NOT FOR REPLICATION ")?;
                    }
                    write!(f, "({expr})")?;
                }
                ColumnOption::References { name, reference } => {
                    constraint_name(f, name)?;
                    write!(f, "{reference}")?;
                }
                ColumnOption::Collate(c) => write!(f, "COLLATE {c}")?,
                ColumnOption::Sparse => f.write_str("SPARSE")?,
                ColumnOption::RowGuidCol => f.write_str("ROWGUIDCOL")?,
                ColumnOption::Filestream => f.write_str("FILESTREAM")?,
                ColumnOption::ColumnSet => f.write_str("COLUMN_SET FOR ALL_SPARSE_COLUMNS")?,
                ColumnOption::WithValues => f.write_str("WITH VALUES")?,
                ColumnOption::Index { name, clustered } => {
                    write!(f, "INDEX {name}")?;
                    if let Some(c) = clustered {
                        f.write_str(if *c { " CLUSTERED" } else { " NONCLUSTERED" })?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Display for TableConstraint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        constraint_name(f, &self.name)?;
        match &self.kind {
            ConstraintKind::PrimaryKey { clustered, columns, options, on } => {
                write!(f, "PRIMARY KEY {}({})", clustered_word(*clustered), comma(columns))?;
                index_tail(f, options, on)
            }
            ConstraintKind::Unique { clustered, columns, options, on } => {
                write!(f, "UNIQUE {}({})", clustered_word(*clustered), comma(columns))?;
                index_tail(f, options, on)
            }
            ConstraintKind::ForeignKey { columns, reference } => {
                write!(f, "FOREIGN KEY ({}) {reference}", comma(columns))
            }
            ConstraintKind::Check { expr, not_for_replication } => {
                f.write_str("CHECK ")?;
                if *not_for_replication {
                    f.write_str("NOT FOR REPLICATION ")?;
                }
                write!(f, "({expr})")
            }
            ConstraintKind::Default { expr, column } => write!(f, "DEFAULT {expr} FOR {column}"),
        }
    }
}

impl Display for BackupDevice {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            BackupDevice::File { kind, path } => {
                let k = match kind {
                    DeviceKind::Disk => "DISK",
                    DeviceKind::Tape => "TAPE",
                    DeviceKind::Url => "URL",
                };
                write!(f, "{k} = {path}")
            }
            BackupDevice::Logical(n) => write!(f, "{n}"),
        }
    }
}

impl Display for BackupOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let yes_no = |b: bool, yes: &'static str, no: &'static str| if b { yes } else { no };
        match self {
            BackupOption::Checksum(b) => f.write_str(yes_no(*b, "CHECKSUM", "NO_CHECKSUM")),
            BackupOption::Compression(b) => f.write_str(yes_no(*b, "COMPRESSION", "NO_COMPRESSION")),
            BackupOption::CopyOnly => f.write_str("COPY_ONLY"),
            BackupOption::Init(b) => f.write_str(yes_no(*b, "INIT", "NOINIT")),
            BackupOption::Format(b) => f.write_str(yes_no(*b, "FORMAT", "NOFORMAT")),
            BackupOption::Differential => f.write_str("DIFFERENTIAL"),
            BackupOption::Stats(None) => f.write_str("STATS"),
            BackupOption::Stats(Some(e)) => write!(f, "STATS = {e}"),
            BackupOption::BufferCount(e) => write!(f, "BUFFERCOUNT = {e}"),
            BackupOption::MaxTransferSize(e) => write!(f, "MAXTRANSFERSIZE = {e}"),
            BackupOption::BlockSize(e) => write!(f, "BLOCKSIZE = {e}"),
            BackupOption::Name(e) => write!(f, "NAME = {e}"),
            BackupOption::Description(e) => write!(f, "DESCRIPTION = {e}"),
            BackupOption::ContinueAfterError(b) => f.write_str(yes_no(*b, "CONTINUE_AFTER_ERROR", "STOP_ON_ERROR")),
            BackupOption::Other(item) => write!(f, "{item}"),
        }
    }
}

impl Display for RestoreOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            RestoreOption::Move { logical, physical } => write!(f, "MOVE {logical} TO {physical}"),
            RestoreOption::Replace => f.write_str("REPLACE"),
            RestoreOption::Recovery => f.write_str("RECOVERY"),
            RestoreOption::NoRecovery => f.write_str("NORECOVERY"),
            RestoreOption::Standby(e) => write!(f, "STANDBY = {e}"),
            RestoreOption::StopAt(e) => write!(f, "STOPAT = {e}"),
            RestoreOption::Stats(None) => f.write_str("STATS"),
            RestoreOption::Stats(Some(e)) => write!(f, "STATS = {e}"),
            RestoreOption::File(e) => write!(f, "FILE = {e}"),
            RestoreOption::Checksum(b) => f.write_str(if *b { "CHECKSUM" } else { "NO_CHECKSUM" }),
            RestoreOption::ContinueAfterError(b) => {
                f.write_str(if *b { "CONTINUE_AFTER_ERROR" } else { "STOP_ON_ERROR" })
            }
            RestoreOption::Other(item) => write!(f, "{item}"),
        }
    }
}

impl Display for LoginOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            LoginOption::Password { value, hashed, must_change, unlock, old_password } => {
                write!(f, "PASSWORD = {value}")?;
                if *hashed {
                    f.write_str(" HASHED")?;
                }
                if let Some(o) = old_password {
                    write!(f, " OLD_PASSWORD = {o}")?;
                }
                if *must_change {
                    f.write_str(" MUST_CHANGE")?;
                }
                if *unlock {
                    f.write_str(" UNLOCK")?;
                }
                Ok(())
            }
            LoginOption::Other(item) => write!(f, "{item}"),
        }
    }
}
