//! OPENJSON(json [, path]) [WITH (...)] in FROM.
//!
//! The arguments are bound where the call is written (under APPLY they read the left
//! row) and evaluated each time the plan is opened; the rows come from
//! `scalar::json`. Default schema: key nvarchar(4000), value nvarchar(max), type
//! tinyint. WITH: each column's path (default `$.name`) is read from each element of
//! the array (or the one object) and converted to the column's type as CAST would;
//! `AS JSON` columns must be nvarchar(max) (13618) and hold the object or array as
//! written. A NULL json argument gives no rows.

use types::{Length, SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{BExpr, Row};
use super::plan::{Op, OutCol, Plan, VecOp};
use super::query::{resolve_type, Binder, Scope};
use crate::ast::{Expr, OpenJsonColumn};
use crate::scalar::{convert, json};

#[derive(Debug, Clone)]
pub struct OpenJsonNode {
    pub json: BExpr,
    pub path: Option<BExpr>,
    /// WITH columns: path, AS JSON (None: the default schema).
    pub schema: Option<Vec<(String, bool)>>,
    pub cols: Vec<OutCol>,
}

/// Binds `OPENJSON(args) [WITH (schema)]`.
pub fn plan(b: &mut Binder, args: &[Expr], schema: Option<&[OpenJsonColumn]>) -> Result<(Plan, Vec<OutCol>), SqlError> {
    if args.is_empty() || args.len() > 2 {
        return Err(SqlError::new(
            174,
            15,
            1,
            format!("The openjson function requires {} argument(s).", if args.is_empty() { 1 } else { 2 }),
        ));
    }
    let json = b.bind_expr(&args[0], &Scope::default())?;
    let path = match args.get(1) {
        Some(a) => Some(b.bind_expr(a, &Scope::default())?),
        None => None,
    };
    let (schema, cols) = match schema {
        None => (
            None,
            vec![
                OutCol::new("key", SqlType::NVarChar { len: Length::Bounded(4000) }, false),
                OutCol::new("value", SqlType::NVarChar { len: Length::Max }, true),
                OutCol::new("type", SqlType::TinyInt, false),
            ],
        ),
        Some(cs) => {
            let mut paths = Vec::with_capacity(cs.len());
            let mut cols = Vec::with_capacity(cs.len());
            for c in cs {
                let ty = resolve_type(&c.data_type)?;
                if c.as_json && ty != (SqlType::NVarChar { len: Length::Max }) {
                    return Err(SqlError::new(
                        13618,
                        16,
                        1,
                        "AS JSON option can be specified only for column of nvarchar(max) type in WITH clause.",
                    ));
                }
                // A name that is not a plain path key is quoted in the default path.
                let path = c.path.clone().unwrap_or_else(|| format!("$.\"{}\"", json::escape(&c.name.value)));
                json::parse_path(&path, false)?;
                paths.push((path, c.as_json));
                cols.push(OutCol::new(c.name.value.clone(), ty, true));
            }
            (Some(paths), cols)
        }
    };
    let node = OpenJsonNode { json, path, schema, cols: cols.clone() };
    Ok((Plan::OpenJson(Box::new(node)), cols))
}

pub fn open(node: &OpenJsonNode, cx: &mut Cx) -> Result<Box<dyn Op>, SqlError> {
    let text = node.json.eval(&[], cx)?;
    let path = match &node.path {
        Some(p) => p.eval(&[], cx)?,
        None => Value::Null,
    };
    if text.is_null() {
        return Ok(Box::new(VecOp::new(Vec::new())));
    }
    let text = text.to_string();
    let path = if path.is_null() { None } else { Some(path.to_string()) };
    let rows: Vec<Row> = match &node.schema {
        None => json::open_rows(&text, path.as_deref())?
            .into_iter()
            .map(|(k, v, t)| vec![Value::String(k), v.map_or(Value::Null, Value::String), Value::TinyInt(t)])
            .collect(),
        Some(schema) => {
            let cols: Vec<json::OpenColumn> =
                schema.iter().map(|(p, as_json)| json::OpenColumn { path: p, as_json: *as_json }).collect();
            let from = SqlType::NVarChar { len: Length::Max };
            let mut rows = Vec::new();
            for cells in json::open_with(&text, path.as_deref(), &cols)? {
                let mut row = Vec::with_capacity(cells.len());
                for (cell, col) in cells.into_iter().zip(&node.cols) {
                    row.push(match cell {
                        None => Value::Null,
                        Some(s) => cell_value(s, &col.ty, &from)?,
                    });
                }
                rows.push(row);
            }
            rows
        }
    };
    Ok(Box::new(VecOp::new(rows)))
}

/// A WITH column's text converted to its type; JSON true/false read as 1/0 for bit and
/// numbers.
fn cell_value(s: String, ty: &SqlType, from: &SqlType) -> Result<Value, SqlError> {
    let s = if !ty.is_character() && (s == "true" || s == "false") {
        if s == "true" { "1" } else { "0" }.to_string()
    } else {
        s
    };
    convert::convert(&Value::String(s), from, ty, None)
}
