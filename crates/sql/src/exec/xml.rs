//! Binding the xml data type methods: `x.value('xquery', 'sqltype')`, `x.query(...)`,
//! `x.exist(...)` as [`BExpr::Xml`], and `x.nodes('xquery') AS t(c)` as a row source
//! ([`Plan::XmlNodes`]). The XQuery itself lives in `scalar/xml.rs`.

use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{BExpr, Row, XmlMethod};
use super::plan::{OutCol, Plan};
use super::query::{resolve_type, Binder, Scope};
use crate::ast::{Expr, ExprKind, Ident, Literal, ObjectName, TableAlias};
use crate::scalar::xml;

/// The string literal argument `i` (from 1) of `method`, or Msg 8172.
fn literal_arg<'e>(args: &'e [Expr], i: usize, method: &str) -> Result<&'e str, SqlError> {
    match args.get(i - 1).map(|a| &a.kind) {
        Some(ExprKind::Literal(Literal::String { value, .. })) => Ok(value),
        _ => Err(SqlError::new(
            8172,
            16,
            1,
            format!("The argument {i} of the XML data type method \"{method}\" must be a string literal."),
        )),
    }
}

/// Binds the xml target and the XQuery of a method call with `want` arguments.
fn bind_common(
    b: &mut Binder,
    target: &Expr,
    method: &str,
    args: &[Expr],
    want: usize,
    scope: &Scope,
) -> Result<(BExpr, Arc<xml::XQuery>, Vec<BExpr>), SqlError> {
    let t = match b.bind_expr(target, scope) {
        Ok(t) => t,
        // `a.b.value(...)` whose target is no column: the name is taken as a function.
        Err(e) if e.number == 207 || e.number == 4104 => {
            let written = match &target.kind {
                ExprKind::Column(n) => format!("{}.{method}", n),
                _ => method.to_string(),
            };
            let _ = e;
            return Err(SqlError::new(
                4121,
                16,
                1,
                format!("Cannot find either column \"{}\" or the user-defined function or aggregate \"{written}\", or the name is ambiguous.", written.split('.').next().unwrap_or("")),
            ));
        }
        Err(e) => return Err(e),
    };
    if t.ty() != SqlType::Xml {
        return Err(SqlError::new(258, 15, 1, format!("Cannot call methods on {}.", t.ty().name())));
    }
    if args.len() != want {
        return Err(SqlError::new(174, 15, 1, format!("The {method} function requires {want} argument(s).")));
    }
    let text = literal_arg(args, 1, method)?;
    let q = xml::compile(text, method)?;
    let mut outside = Vec::with_capacity(q.outside.len());
    for o in &q.outside {
        let e = match o {
            xml::Outside::Variable(v) => Expr::new(ExprKind::Variable(v.clone())),
            xml::Outside::Column(c) => {
                let parts = c.split('.').map(Ident::plain).collect();
                Expr::new(ExprKind::Column(ObjectName { parts }))
            }
        };
        outside.push(b.bind_expr(&e, scope)?);
    }
    Ok((t, Arc::new(q), outside))
}

/// `target.method(args)` in an expression.
pub(super) fn bind_method(
    b: &mut Binder,
    target: &Expr,
    method: &Ident,
    args: &[Expr],
    scope: &Scope,
) -> Result<BExpr, SqlError> {
    let name = method.value.to_ascii_lowercase();
    let (kind, want) =
        match name.as_str() {
            "value" => (XmlMethod::Value, 2),
            "query" => (XmlMethod::Query, 1),
            "exist" => (XmlMethod::Exist, 1),
            "modify" => return Err(SqlError::new(
                8137,
                16,
                1,
                "Incorrect use of the XML data type method 'modify'. A non-mutator method is expected in this context.",
            )),
            _ => {
                return Err(SqlError::new(
                    227,
                    15,
                    1,
                    format!("\"{}\" is not a valid function, property, or field.", method.value),
                ))
            }
        };
    let (target, query, outside) = bind_common(b, target, &name, args, want, scope)?;
    let ty = match kind {
        XmlMethod::Exist => SqlType::Bit,
        XmlMethod::Query => SqlType::Xml,
        XmlMethod::Value => {
            let written = literal_arg(args, 2, "value")?;
            let dt = crate::parser::parse_data_type_text(written)?;
            let base = dt.name.name().value.to_ascii_lowercase();
            let ty = resolve_type(&dt)?;
            let lob = ty.is_legacy_lob() || ["timestamp", "rowversion"].contains(&base.as_str());
            if lob || matches!(ty, SqlType::Xml | SqlType::Variant) {
                return Err(SqlError::new(
                    9500,
                    16,
                    1,
                    format!("The data type '{base}' used in the VALUE method is invalid."),
                ));
            }
            if xml::may_be_many(&query.expr) {
                return Err(SqlError::new(
                    2389,
                    16,
                    1,
                    "XQuery [value()]: 'value()' requires a singleton (or empty sequence), found operand of type 'xdt:untypedAtomic *'",
                ));
            }
            ty
        }
    };
    Ok(BExpr::Xml { method: kind, target: Box::new(target), query, outside, ty })
}

/// `target.nodes('xquery') AS t(c)`: one row per selected node, `c` an xml column whose
/// methods start from that node.
pub(super) fn plan_nodes(
    b: &mut Binder,
    target: &Expr,
    args: &[Expr],
    alias: &Option<TableAlias>,
) -> Result<(Plan, Scope), SqlError> {
    let (target, query, outside) = bind_common(b, target, "nodes", args, 1, &Scope::default())?;
    let Some(alias) = alias else {
        return Err(SqlError::new(
            495,
            16,
            1,
            "The return table column list on a user defined function or a table valued function is missing.",
        ));
    };
    let col = match alias.columns.as_slice() {
        [c] => c.value.clone(),
        _ => {
            return Err(SqlError::new(
                8158,
                16,
                1,
                format!("'{}' has more columns than were specified in the column list.", alias.name.value),
            ))
        }
    };
    let cols = vec![OutCol::new(col, SqlType::Xml, true)];
    let scope = Scope::from_cols(Some(&alias.name.value), &cols);
    Ok((Plan::XmlNodes { target, query, outside, cols }, scope))
}

/// The rows of a [`Plan::XmlNodes`].
pub(super) fn open_nodes(
    cx: &mut Cx,
    target: &BExpr,
    query: &xml::XQuery,
    outside: &[BExpr],
) -> Result<Vec<Row>, SqlError> {
    let v = target.eval(&[], cx)?;
    let Some(text) = super::expr::as_text(&v, &target.ty()) else { return Ok(Vec::new()) };
    let mut vals = Vec::with_capacity(outside.len());
    for o in outside {
        let v = o.eval(&[], cx)?;
        vals.push(super::expr::as_text(&v, &o.ty()));
    }
    let doc = xml::parse(&text)?;
    let ev = xml::Eval { doc: &doc, outside: &vals };
    let items = ev.eval(&query.expr, &xml::Item::Node(doc.context), 1, 1);
    Ok(items
        .iter()
        .filter_map(|it| match it {
            // Attribute and atomic items have no context form of their own here.
            xml::Item::Node(n) => Some(vec![Value::String(doc.context_value(*n))]),
            _ => None,
        })
        .collect())
}
