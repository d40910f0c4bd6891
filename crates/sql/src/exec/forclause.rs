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
//! - FOR XML EXPLICIT: the input is a universal table (Tag, Parent, then columns named
//!   `ElementName!TagNumber[!AttributeName[!Directive]]`); rows are read in order, each
//!   opens an element under the open element of its Parent tag (closing the deeper
//!   ones), with its tag's columns as attributes or, per directive, contained elements,
//!   text or CDATA.

use types::{Length, SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{BExpr, Row};
use super::plan::{open as open_plan, Op, OpResult, OutCol, Plan};
use super::query::{Binder, Scope};
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
    XmlExplicit,
}

/// How FOR XML EXPLICIT writes a data column (`ElementName!TagNumber!AttributeName!Directive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directive {
    /// An attribute (no directive, or ID/IDREF/IDREFS, which only type it).
    Attribute,
    /// A child element named by the attribute name, or the element's own text when the
    /// attribute name is empty; entity-encoded. ELEMENTXSINIL also for NULL.
    Element { xsinil: bool },
    /// As ELEMENT without entity encoding (also XMLTEXT, approximately).
    Xml,
    /// The element's text in a CDATA section.
    Cdata,
    /// Read (for ordering) but not written.
    Hide,
}

/// One data column of a FOR XML EXPLICIT universal table.
#[derive(Debug, Clone)]
pub struct ExplicitColumn {
    pub element: String,
    pub tag: i64,
    pub attribute: String,
    pub directive: Directive,
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
    /// FOR XML EXPLICIT: the data columns (from the third on), parsed.
    pub explicit: Vec<ExplicitColumn>,
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
            (ForKind::Xml, "EXPLICIT") => mode = Some(Mode::XmlExplicit),
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
                    6800,
                    16,
                    1,
                    "FOR XML AUTO requires at least one table for generating XML tags. Use FOR XML RAW or add a FROM clause with a table name.",
                )
            })?;
    }
    let explicit = if mode == Mode::XmlExplicit { explicit_columns(&in_cols)? } else { Vec::new() };
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
        explicit,
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
        let mut open: Vec<OpenTag> = Vec::new();
        let mut guard = crate::scalar::LobGuard::default();
        while let Some(row) = input.next(cx)? {
            if n.mode == Mode::XmlExplicit {
                explicit_row(n, &row, &mut open, &mut out)?;
            } else if n.is_json() {
                if rows > 0 {
                    out.push(',');
                }
                json_row(n, &row, &mut out)?;
            } else {
                xml_row(n, &row, &mut out, &mut self.last_data)?;
            }
            rows += 1;
            // The document is one nvarchar(max) value: Msg 7119 as it passes 2 GB.
            guard.check(&out, true)?;
            input.recycle(row);
        }
        while let Some(t) = open.pop() {
            close_tag(t, &mut out);
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

// ---- FOR XML EXPLICIT ---------------------------------------------------------------

fn explicit_error(number: i32, message: String) -> SqlError {
    SqlError::new(number, 16, 1, message)
}

/// Parses the universal table's column names: Tag, Parent, then
/// `ElementName!TagNumber[!AttributeName[!Directive]]` (6801, 6802, 6812, 6820, 6824).
fn explicit_columns(cols: &[OutCol]) -> Result<Vec<ExplicitColumn>, SqlError> {
    if cols.len() < 3 {
        return Err(explicit_error(
            6801,
            "FOR XML EXPLICIT requires at least three columns, including the tag column, the parent column, and at least one data column.".into(),
        ));
    }
    for (i, want) in [(0, "Tag"), (1, "Parent")] {
        if !cols[i].name.eq_ignore_ascii_case(want) {
            return Err(explicit_error(
                6820,
                format!(
                    "FOR XML EXPLICIT requires column {} to be named '{want}' instead of '{}'.",
                    i + 1,
                    cols[i].name
                ),
            ));
        }
    }
    let mut out: Vec<ExplicitColumn> = Vec::new();
    for c in &cols[2..] {
        let parts: Vec<&str> = c.name.split('!').collect();
        let bad = || {
            explicit_error(
                6802,
                format!("FOR XML EXPLICIT query contains the invalid column name '{}'. Use the TAGNAME!TAGID!ATTRIBUTENAME[!..] format where TAGID is a positive integer.", c.name),
            )
        };
        if parts.len() < 2 || parts.len() > 4 || parts[0].is_empty() {
            return Err(bad());
        }
        let tag: i64 = parts[1].trim().parse().ok().filter(|&t: &i64| t > 0).ok_or_else(bad)?;
        let attribute = parts.get(2).copied().unwrap_or("").to_string();
        let directive = match parts.get(3).map(|d| d.to_ascii_lowercase()) {
            None if attribute.is_empty() => Directive::Element { xsinil: false },
            None => Directive::Attribute,
            Some(d) => match d.as_str() {
                "" if attribute.is_empty() => Directive::Element { xsinil: false },
                "" | "id" | "idref" | "idrefs" => Directive::Attribute,
                "element" => Directive::Element { xsinil: false },
                "elementxsinil" => Directive::Element { xsinil: true },
                "xml" | "xmltext" => Directive::Xml,
                "cdata" => Directive::Cdata,
                "hide" => Directive::Hide,
                _ => {
                    return Err(explicit_error(
                        6824,
                        format!("In the FOR XML EXPLICIT clause, mode '{}' in a column name is invalid.", parts[3]),
                    ))
                }
            },
        };
        if let Some(prev) = out.iter().find(|p| p.tag == tag && !p.element.eq_ignore_ascii_case(parts[0])) {
            return Err(explicit_error(
                6812,
                format!(
                    "XML tag ID {tag} that was originally declared as '{}' is being redeclared as '{}'.",
                    prev.element, parts[0]
                ),
            ));
        }
        out.push(ExplicitColumn { element: parts[0].to_string(), tag, attribute, directive });
    }
    Ok(out)
}

/// An element FOR XML EXPLICIT has opened: its tag number and name, and whether its
/// start tag has been closed with `>` (it has content).
struct OpenTag {
    tag: i64,
    name: String,
    has_content: bool,
}

fn close_tag(t: OpenTag, out: &mut String) {
    if t.has_content {
        out.push_str("</");
        out.push_str(&t.name);
        out.push('>');
    } else {
        out.push_str("/>");
    }
}

/// Gives the innermost open element its content: ends its start tag first.
fn begin_content(open: &mut [OpenTag], out: &mut String) {
    if let Some(t) = open.last_mut() {
        if !t.has_content {
            out.push('>');
            t.has_content = true;
        }
    }
}

fn tag_number(v: &Value) -> Option<i64> {
    match v {
        Value::TinyInt(n) => Some(i64::from(*n)),
        Value::SmallInt(n) => Some(i64::from(*n)),
        Value::Int(n) => Some(i64::from(*n)),
        Value::BigInt(n) => Some(*n),
        _ => None,
    }
}

/// One row of the universal table: closes the open elements down to the row's parent
/// (rows must come parent first, 6833), then opens the row's element with its columns.
fn explicit_row(n: &ForNode, row: &Row, open: &mut Vec<OpenTag>, out: &mut String) -> Result<(), SqlError> {
    let tag = tag_number(&row[0]).filter(|&t| t > 0).ok_or_else(|| {
        explicit_error(
            6803,
            "FOR XML EXPLICIT requires the first column to hold positive integers that represent XML tag IDs.".into(),
        )
    })?;
    let parent = match &row[1] {
        Value::Null => 0,
        v => tag_number(v).filter(|&p| p >= 0).ok_or_else(|| {
            explicit_error(6804, "FOR XML EXPLICIT requires the second column to hold NULL or nonnegative integers that represent XML parent tag IDs.".into())
        })?,
    };
    let Some(name) = n.explicit.iter().find(|c| c.tag == tag).map(|c| c.element.clone()) else {
        return Err(explicit_error(6806, format!("Undeclared tag ID {tag} is used in a FOR XML EXPLICIT query.")));
    };
    if parent != 0 {
        if !n.explicit.iter().any(|c| c.tag == parent) {
            return Err(explicit_error(
                6807,
                format!("Undeclared parent tag ID {parent} is used in a FOR XML EXPLICIT query."),
            ));
        }
        if !open.iter().any(|t| t.tag == parent) {
            return Err(explicit_error(
                6833,
                format!("Parent tag ID {parent} is not among the open tags. FOR XML EXPLICIT requires parent tags to be opened first. Check the ordering of the result set."),
            ));
        }
    }
    while open.last().is_some_and(|t| t.tag != parent) {
        if let Some(t) = open.pop() {
            close_tag(t, out);
        }
    }
    begin_content(open, out);
    out.push('<');
    out.push_str(&name);
    let mut element = OpenTag { tag, name, has_content: false };
    let cells = || n.explicit.iter().zip(&row[2..]).zip(&n.types[2..]).filter(move |((c, _), _)| c.tag == tag);
    for ((c, v), ty) in cells() {
        if c.directive == Directive::Attribute && !v.is_null() {
            out.push(' ');
            out.push_str(&c.attribute);
            out.push_str("=\"");
            escape_xml(&xml_text(v, ty)?, true, out);
            out.push('"');
        }
    }
    for ((c, v), ty) in cells() {
        let (xsinil, encode) = match c.directive {
            Directive::Attribute | Directive::Hide => continue,
            Directive::Element { xsinil } => (xsinil, true),
            Directive::Xml => (false, false),
            Directive::Cdata => (false, false),
        };
        if v.is_null() && !xsinil {
            continue;
        }
        if !element.has_content {
            out.push('>');
            element.has_content = true;
        }
        let named = !c.attribute.is_empty() && c.directive != Directive::Cdata;
        if named {
            out.push('<');
            out.push_str(&c.attribute);
            if v.is_null() {
                out.push_str(" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:nil=\"true\"/>");
                continue;
            }
            out.push('>');
        }
        let text = xml_text(v, ty)?;
        match c.directive {
            Directive::Cdata => {
                out.push_str("<![CDATA[");
                out.push_str(&text);
                out.push_str("]]>");
            }
            _ if encode && *ty != SqlType::Xml => escape_xml(&text, false, out),
            _ => out.push_str(&text),
        }
        if named {
            out.push_str("</");
            out.push_str(&c.attribute);
            out.push('>');
        }
    }
    open.push(element);
    Ok(())
}
