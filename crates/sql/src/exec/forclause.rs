//! FOR JSON and FOR XML: a query's rows serialized into one value.
//!
//! `plan_for` wraps the query's plan in `Plan::ForClause`; opening it reads every input
//! row and returns one row of one column: nvarchar(max) named
//! JSON_F52E2B61-18A1-11d1-B105-00805F49916B or XML_F52E2B61-18A1-11d1-B105-00805F49916B
//! (xml with FOR XML ..., TYPE), or no row when the query has none (a subquery then reads
//! NULL). SQL Server splits a long result into rows of about 2,000 characters for the
//! client; Mesquite sends it whole in one row, which clients that concatenate the rows
//! read the same way.
//!
//! - FOR JSON PATH: a dotted alias (`a.b`) nests objects; consecutive columns sharing a
//!   prefix share the object. FOR JSON AUTO writes the columns flat (no nesting by
//!   joined table). NULLs are left out unless INCLUDE_NULL_VALUES. A column that already
//!   is JSON (a FOR JSON subquery, JSON_QUERY, JSON_MODIFY, JSON_ARRAY, JSON_OBJECT) is embedded.
//!   ROOT('x') wraps the array in an object; WITHOUT_ARRAY_WRAPPER drops the brackets.
//!   A column without a name is 13605.
//! - FOR XML RAW[('name')]: one element per row, columns as attributes (ELEMENTS: as
//!   child elements). AUTO: the same with the first table's name or alias as the element
//!   name (no nesting by joined table). PATH[('name')]: columns as child elements; an
//!   alias `@a` is an attribute, `a/b` nests (consecutive columns share elements), and a
//!   column without a name (or `text()`, `*`, `data()`) is text of the row element, so
//!   PATH('') concatenates. ROOT('x') wraps the whole; TYPE makes the result xml; xml
//!   values (FOR XML ..., TYPE subqueries) are embedded as they are. Text escapes & < >,
//!   attributes also ".

use types::{Length, SqlError, SqlType, Value};

use super::expr::{BExpr, Row};
use super::plan::{open as open_plan, Op, OpResult, OutCol, Plan};
use super::query::{Binder, Scope};
use super::Cx;
use crate::ast::{ForClause, ForKind, Select, SelectItem, TableFactor};
use crate::scalar::json;

const JSON_COLUMN: &str = "JSON_F52E2B61-18A1-11d1-B105-00805F49916B";
const XML_COLUMN: &str = "XML_F52E2B61-18A1-11d1-B105-00805F49916B";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    JsonPath,
    JsonAuto,
    XmlRaw,
    XmlAuto,
    XmlPath,
}

#[derive(Debug, Clone)]
pub struct ForNode {
    pub input: Plan,
    pub mode: Mode,
    /// RAW/PATH element name (AUTO: the table's); "" writes no row element.
    pub row_name: String,
    pub root: Option<String>,
    pub include_nulls: bool,
    pub without_array_wrapper: bool,
    pub elements: bool,
    /// The input's column names and types, and which columns already are JSON.
    pub names: Vec<String>,
    pub types: Vec<SqlType>,
    pub json_cols: Vec<bool>,
    pub cols: Vec<OutCol>,
}

impl ForNode {
    pub fn is_json(&self) -> bool {
        matches!(self.mode, Mode::JsonPath | Mode::JsonAuto)
    }

    pub fn describe(&self) -> String {
        format!("UDX ({:?})", self.mode)
    }
}

/// Whether a bound expression's value already is JSON text, which FOR JSON and
/// JSON_MODIFY embed instead of quoting.
pub fn is_json_expr(e: &BExpr) -> bool {
    match e {
        BExpr::Func { f, .. } => {
            matches!(f.0, "JSON_QUERY" | "JSON_MODIFY" | "JSON_MODIFY JSON" | "JSON_ARRAY" | "JSON_OBJECT")
        }
        BExpr::Subquery(plan, _) => matches!(&**plan, Plan::ForClause(n) if n.is_json()),
        _ => false,
    }
}

/// Whether an expression as written gives JSON text (constant calls are folded before
/// the bound form could tell).
pub fn is_json_ast(e: &crate::ast::Expr) -> bool {
    use crate::ast::ExprKind;
    match &e.kind {
        ExprKind::Function(f) => {
            f.name.parts.len() == 1
                && ["JSON_QUERY", "JSON_MODIFY", "JSON_ARRAY", "JSON_OBJECT"]
                    .iter()
                    .any(|n| f.name.name().value.eq_ignore_ascii_case(n))
        }
        ExprKind::Subquery(q) => q.for_clause.as_ref().is_some_and(|fc| fc.kind == ForKind::Json),
        _ => false,
    }
}

/// For each output column of a select plan, whether its expression is JSON text.
fn json_columns(plan: &Plan, width: usize) -> Vec<bool> {
    match plan {
        Plan::Project { exprs, .. } => exprs.iter().map(is_json_expr).collect(),
        Plan::Sort { input, .. } | Plan::Top { input, .. } | Plan::Distinct { input } | Plan::Trim { input, .. } => {
            let mut v = json_columns(input, width);
            v.resize(width, false);
            v
        }
        _ => vec![false; width],
    }
}

/// Evaluates an option's argument (ROOT('x'), PATH('row')) as text.
fn option_text(b: &mut Binder, arg: Option<&crate::ast::Expr>) -> Result<Option<String>, SqlError> {
    let Some(e) = arg else { return Ok(None) };
    let x = b.bind_expr(e, &Scope::default())?;
    let v = x.eval(&[], b.cx)?;
    Ok(Some(if v.is_null() { String::new() } else { v.to_string() }))
}

fn unsupported(what: &str) -> SqlError {
    SqlError::new(40000, 16, 1, format!("{what} is not supported yet."))
}

/// Wraps a query's plan for its FOR JSON / FOR XML clause. `select` is the query's
/// SELECT (AUTO mode names elements after its first table).
pub fn plan_for(
    b: &mut Binder,
    fc: &ForClause,
    select: Option<&Select>,
    input: Plan,
) -> Result<(Plan, Vec<OutCol>), SqlError> {
    let in_cols = input.columns();
    let mut mode = None;
    let mut row_name = "row".to_string();
    let mut root = None;
    let (mut include_nulls, mut without_array_wrapper, mut elements, mut typed) = (false, false, false, false);
    for opt in &fc.options {
        match (fc.kind, opt.name.as_str()) {
            (ForKind::Json, "PATH") => mode = Some(Mode::JsonPath),
            (ForKind::Json, "AUTO") => mode = Some(Mode::JsonAuto),
            (ForKind::Json, "INCLUDE_NULL_VALUES") => include_nulls = true,
            (ForKind::Json, "WITHOUT_ARRAY_WRAPPER") => without_array_wrapper = true,
            (ForKind::Xml, "RAW" | "PATH") => {
                mode = Some(if opt.name == "RAW" { Mode::XmlRaw } else { Mode::XmlPath });
                if let Some(n) = option_text(b, opt.arg.as_ref())? {
                    row_name = n;
                }
            }
            (ForKind::Xml, "AUTO") => mode = Some(Mode::XmlAuto),
            (ForKind::Xml, "EXPLICIT") => return Err(unsupported("FOR XML EXPLICIT")),
            (ForKind::Xml, "ELEMENTS") => elements = true,
            (ForKind::Xml, "TYPE") => typed = true,
            (ForKind::Xml, "BINARY BASE64") => {}
            (ForKind::Xml, "ELEMENTS XSINIL" | "ELEMENTS ABSENT") => elements = true,
            (ForKind::Xml, "XMLDATA" | "XMLSCHEMA") => return Err(unsupported(&format!("FOR XML {}", opt.name))),
            (_, "ROOT") => root = Some(option_text(b, opt.arg.as_ref())?.unwrap_or_else(|| "root".to_string())),
            (_, other) => {
                return Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{other}'.")));
            }
        }
    }
    let Some(mode) = mode else {
        let near = fc.options.first().map_or("FOR", |o| o.name.as_str()).to_string();
        return Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{near}'.")));
    };
    let is_json = matches!(mode, Mode::JsonPath | Mode::JsonAuto);
    if is_json {
        if without_array_wrapper && root.is_some() {
            return Err(SqlError::new(
                13620,
                16,
                1,
                "ROOT option and WITHOUT_ARRAY_WRAPPER option cannot be used together in FOR JSON. Remove one of these options.",
            ));
        }
        if in_cols.iter().any(|c| c.name.is_empty()) {
            return Err(SqlError::new(
                13605,
                16,
                1,
                "Column expressions and data sources without names or aliases cannot be formatted as JSON text using FOR JSON clause. Add alias to the unnamed column or table.",
            ));
        }
    }
    if mode == Mode::XmlAuto {
        row_name = select
            .and_then(|s| s.from.first())
            .and_then(|t| match &t.relation {
                TableFactor::Table { name, alias, .. } => {
                    Some(alias.as_ref().map_or_else(|| name.name().value.clone(), |a| a.value.clone()))
                }
                TableFactor::Derived { alias: Some(a), .. } => Some(a.name.value.clone()),
                _ => None,
            })
            .ok_or_else(|| {
                SqlError::new(
                    6858,
                    16,
                    1,
                    "FOR XML AUTO requires at least one table for generating XML tags. Use FOR XML RAW or add a FROM clause with a table name.",
                )
            })?;
    }
    let (name, ty) = if is_json {
        (JSON_COLUMN, SqlType::NVarChar { len: Length::Max })
    } else if typed {
        (XML_COLUMN, SqlType::Xml)
    } else {
        (XML_COLUMN, SqlType::NVarChar { len: Length::Max })
    };
    let cols = vec![OutCol::new(name, ty, true)];
    let mut json_cols = json_columns(&input, in_cols.len());
    if let Some(s) = select {
        // Without a wildcard the select items are the columns, in order.
        if s.items.len() == in_cols.len() {
            for (flag, item) in json_cols.iter_mut().zip(&s.items) {
                if let SelectItem::Expr { expr, .. } = item {
                    *flag |= is_json_ast(expr);
                }
            }
        }
    }
    let node = ForNode {
        json_cols,
        names: in_cols.iter().map(|c| c.name.clone()).collect(),
        types: in_cols.iter().map(|c| c.ty).collect(),
        input,
        mode,
        row_name,
        root,
        include_nulls,
        without_array_wrapper,
        elements,
        cols: cols.clone(),
    };
    Ok((Plan::ForClause(Box::new(node)), cols))
}

pub fn open(node: &ForNode, cx: &mut Cx) -> Result<Box<dyn Op>, SqlError> {
    Ok(Box::new(ForOp { node: node.clone(), last_data: false, input: Some(open_plan(&node.input, cx)?) }))
}

struct ForOp {
    node: ForNode,
    /// The last value written was a `data()` column: the next one is spaced from it,
    /// across rows too (PATH('') lists).
    last_data: bool,
    /// Taken when the one row has been built.
    input: Option<Box<dyn Op>>,
}

impl Op for ForOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let Some(mut input) = self.input.take() else { return Ok(None) };
        let n = &self.node;
        let mut out = String::new();
        let mut rows = 0usize;
        while let Some(row) = input.next(cx)? {
            if n.is_json() {
                if rows > 0 {
                    out.push(',');
                }
                json_row(n, &row, &mut out)?;
            } else {
                xml_row(n, &row, &mut out, &mut self.last_data)?;
            }
            rows += 1;
            input.recycle(row);
        }
        if rows == 0 {
            return Ok(None);
        }
        let text = if n.is_json() {
            match (&n.root, n.without_array_wrapper) {
                (Some(r), _) => format!("{{\"{}\":[{out}]}}", json::escape(r)),
                (None, true) => out,
                (None, false) => format!("[{out}]"),
            }
        } else {
            match &n.root {
                Some(r) => format!("<{r}>{out}</{r}>"),
                None => out,
            }
        };
        Ok(Some(vec![Value::String(text)]))
    }
}

// ---- JSON --------------------------------------------------------------------------

fn json_row(n: &ForNode, row: &Row, out: &mut String) -> Result<(), SqlError> {
    out.push('{');
    // The nested objects open now (PATH mode) and whether each level has a member yet.
    let mut open: Vec<&str> = Vec::new();
    let mut has_member = vec![false];
    for (i, v) in row.iter().enumerate() {
        if v.is_null() && !n.include_nulls {
            continue;
        }
        let name = n.names.get(i).map_or("", String::as_str);
        let parts: Vec<&str> = if n.mode == Mode::JsonPath { name.split('.').collect() } else { vec![name] };
        let (leaf, prefix) = parts.split_last().unwrap_or((&"", &[]));
        let common = open.iter().zip(prefix).take_while(|(a, b)| a == b).count();
        while open.len() > common {
            open.pop();
            has_member.pop();
            out.push('}');
        }
        for p in &prefix[common..] {
            member_key(out, &mut has_member, p);
            out.push('{');
            open.push(p);
            has_member.push(false);
        }
        member_key(out, &mut has_member, leaf);
        if v.is_null() {
            out.push_str("null");
        } else {
            let ty = n.types.get(i).copied().unwrap_or(SqlType::NVarChar { len: Length::Max });
            json::write_value(v, &ty, n.json_cols.get(i).copied().unwrap_or(false), out)?;
        }
    }
    for _ in open {
        out.push('}');
    }
    out.push('}');
    Ok(())
}

fn member_key(out: &mut String, has_member: &mut [bool], key: &str) {
    if let Some(h) = has_member.last_mut() {
        if *h {
            out.push(',');
        }
        *h = true;
    }
    out.push('"');
    json::escape_into(key, out);
    out.push_str("\":");
}

// ---- XML ---------------------------------------------------------------------------

/// An element, or (with an empty name) escaped text or embedded xml.
#[derive(Default)]
struct Elem {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Elem>,
    text: String,
}

fn text_node(text: String) -> Elem {
    Elem { text, ..Elem::default() }
}

fn leaf_elem(name: &str, content: String) -> Elem {
    Elem { name: name.to_string(), children: vec![text_node(content)], ..Elem::default() }
}

fn escape_xml(s: &str, attr: bool, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\r' => out.push_str("&#x0D;"),
            c => out.push(c),
        }
    }
}

/// A non-NULL value as FOR XML writes it: dates in ISO 8601, binary in base64, bit 1/0.
fn xml_text(v: &Value, ty: &SqlType) -> Result<String, SqlError> {
    use crate::scalar::convert;
    let v = match v {
        Value::Variant(b) => return xml_text(&b.value, &b.ty),
        v => v,
    };
    let text = SqlType::NVarChar { len: Length::Max };
    Ok(match (v, ty) {
        (Value::String(s), _) => s.clone(),
        (Value::Binary(b), _) => json::base64(b),
        (Value::Bit(x), _) => if *x { "1" } else { "0" }.to_string(),
        (
            _,
            SqlType::Date
            | SqlType::Time { .. }
            | SqlType::DateTime
            | SqlType::SmallDateTime
            | SqlType::DateTime2 { .. }
            | SqlType::DateTimeOffset { .. },
        ) => convert::convert(v, ty, &text, Some(126))?.to_string(),
        _ => convert::convert(v, ty, &text, None)?.to_string(),
    })
}

fn xml_row(n: &ForNode, row: &Row, out: &mut String, last_data: &mut bool) -> Result<(), SqlError> {
    let mut top = Elem { name: n.row_name.clone(), ..Elem::default() };
    if !top.name.is_empty() {
        *last_data = false;
    }
    for (i, v) in row.iter().enumerate() {
        if v.is_null() {
            continue;
        }
        let name = n.names.get(i).map_or("", String::as_str);
        let ty = n.types.get(i).copied().unwrap_or(SqlType::NVarChar { len: Length::Max });
        let raw = xml_text(v, &ty)?;
        // xml values are embedded; everything else is escaped text.
        let content = if ty == SqlType::Xml {
            raw
        } else {
            let mut s = String::new();
            escape_xml(&raw, false, &mut s);
            s
        };
        let is_data = name.eq_ignore_ascii_case("data()");
        match n.mode {
            Mode::XmlRaw | Mode::XmlAuto => {
                if name.is_empty() {
                    top.children.push(text_node(content));
                } else if n.elements {
                    top.children.push(leaf_elem(name, content));
                } else {
                    top.attrs.push((name.to_string(), xml_text(v, &ty)?));
                }
            }
            _ => {
                if name.is_empty() || name == "*" || name.eq_ignore_ascii_case("text()") || is_data {
                    let content = if is_data && *last_data { format!(" {content}") } else { content };
                    top.children.push(text_node(content));
                } else {
                    let parts: Vec<&str> = name.split('/').collect();
                    let (leaf, prefix) = parts.split_last().unwrap_or((&"", &[]));
                    let mut cur = &mut top;
                    for p in prefix {
                        // Consecutive columns under one path share its element.
                        if cur.children.last().is_none_or(|e| e.name != *p) {
                            cur.children.push(Elem { name: p.to_string(), ..Elem::default() });
                        }
                        let k = cur.children.len() - 1;
                        cur = &mut cur.children[k];
                    }
                    if let Some(attr) = leaf.strip_prefix('@') {
                        cur.attrs.push((attr.to_string(), xml_text(v, &ty)?));
                    } else if leaf.eq_ignore_ascii_case("text()") || leaf.is_empty() {
                        cur.children.push(text_node(content));
                    } else {
                        cur.children.push(leaf_elem(leaf, content));
                    }
                }
            }
        }
        *last_data = is_data;
    }
    if top.name.is_empty() {
        for c in &top.children {
            write_elem(c, out);
        }
    } else {
        write_elem(&top, out);
    }
    Ok(())
}

fn write_elem(e: &Elem, out: &mut String) {
    if e.name.is_empty() {
        out.push_str(&e.text);
        return;
    }
    out.push('<');
    out.push_str(&e.name);
    for (k, v) in &e.attrs {
        out.push(' ');
        out.push_str(k);
        out.push_str("=\"");
        escape_xml(v, true, out);
        out.push('"');
    }
    if e.children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    for c in &e.children {
        write_elem(c, out);
    }
    out.push_str("</");
    out.push_str(&e.name);
    out.push('>');
}
