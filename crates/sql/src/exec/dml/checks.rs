//! What a changed row must satisfy: conversion to its columns' types and lengths, NOT
//! NULL, CHECK constraints, and foreign keys in both directions; OUTPUT rows.

use super::*;

/// Converts a value for a column: implicit conversion, then the column's length and
/// precision (2628 truncation, 8115 overflow).
pub fn to_column(t: &TableInfo, col: usize, v: Value, from: &SqlType) -> Result<Value, SqlError> {
    let c = &t.columns[col];
    // NULL, and an int of an int column (a literal key): nothing to convert or fit.
    if v.is_exactly(&c.ty) && (*from == c.ty || v.is_null()) {
        return Ok(v);
    }
    // Text stored into xml is parsed and normalized (CONVERT does it).
    let to_xml = c.ty == SqlType::Xml && *from != SqlType::Xml;
    if !to_xml && fits_unchanged(&v, from, &c.ty) {
        return Ok(v);
    }
    // Between strings (or between binaries) the value is only fitted: CAST would cut a
    // long value silently, where assignment to a column is 2628.
    let same_family =
        !to_xml && ((from.is_character() && c.ty.is_character()) || (from.is_binary() && c.ty.is_binary()));
    let v = if *from == c.ty || same_family { v } else { convert::convert(&v, from, &c.ty, None)? };
    if !matches!(v, Value::String(_) | Value::Binary(_)) {
        // Only strings and binaries are truncated (2628, whose message shows the value).
        return v.fit_into(&c.ty);
    }
    v.fit_to_in(&c.ty, c.code_page()).map_err(|e| {
        if e.number == 8152 || e.number == 2628 {
            // The value as far as it fits the column.
            let fits = match c.ty {
                SqlType::Char { len } | SqlType::NChar { len } => usize::from(len),
                SqlType::VarChar { len: types::Length::Bounded(len) }
                | SqlType::NVarChar { len: types::Length::Bounded(len) } => usize::from(len),
                _ => 40,
            };
            let shown: String = match &v {
                Value::String(s) if c.code_page().is_double_byte() => {
                    match types::fit_code_page(
                        s,
                        &SqlType::VarChar { len: types::Length::Bounded(fits as u16) },
                        c.code_page(),
                    ) {
                        Value::String(t) => t,
                        _ => s.clone(),
                    }
                }
                Value::String(s) => s.chars().take(fits).collect(),
                other => other.to_string(),
            };
            SqlError::new(
                2628,
                16,
                1,
                format!(
                    "String or binary data would be truncated in table '{}.{}.{}', column '{}'. Truncated value: '{}'.",
                    t.db_name, t.schema, t.display_name, c.name, shown
                ),
            )
        } else {
            e
        }
    })
}

/// Whether [`to_column`] would return `v` as it is: an ASCII string of a variable-length
/// character type going into a variable-length character column it fits (conversion
/// between code page 1252 and Unicode changes no ASCII character, and nothing is cut or
/// padded). The common case of an INSERT of string literals, without the conversion's
/// copies.
pub(super) fn fits_unchanged(v: &Value, from: &SqlType, to: &SqlType) -> bool {
    use types::Length;
    let Value::String(s) = v else {
        return false;
    };
    if !matches!(from, SqlType::VarChar { .. } | SqlType::NVarChar { .. }) || !s.is_ascii() {
        return false;
    }
    match to {
        SqlType::VarChar { len: Length::Bounded(n) } | SqlType::NVarChar { len: Length::Bounded(n) } => {
            s.len() <= usize::from(*n)
        }
        _ => false,
    }
}

pub(crate) fn null_error(t: &TableInfo, col: usize, stmt: &str) -> SqlError {
    SqlError::new(
        515,
        16,
        2,
        format!(
            "Cannot insert the value NULL into column '{}', table '{}.{}.{}'; column does not allow nulls. {} fails.",
            t.columns[col].name, t.db_name, t.schema, t.display_name, stmt
        ),
    )
}

/// Checks NOT NULL, CHECK and FOREIGN KEY constraints of a new row.
pub(crate) fn check_row(t: &TableInfo, row: &Row, stmt: &str, cx: &mut Cx) -> Result<(), SqlError> {
    check_row_changed(t, None, row, stmt, cx)
}

/// [`check_row`] for a row that replaces `old` (an UPDATE, or a row a FOREIGN KEY
/// cascade changes): only the FOREIGN KEYs whose columns changed or were assigned
/// (`assigned`: a cascade's SET DEFAULT may set the value a column has) are checked
/// against their referenced tables.
pub(super) fn check_row_changed(
    t: &TableInfo,
    old: Option<(&Row, &[usize])>,
    row: &Row,
    stmt: &str,
    cx: &mut Cx,
) -> Result<(), SqlError> {
    for (i, c) in t.columns.iter().enumerate() {
        if !c.nullable && row[i].is_null() && c.computed.is_none() {
            return Err(null_error(t, i, if matches!(stmt, "INSERT" | "MERGE") { stmt } else { "UPDATE" }));
        }
    }
    if cx.bulk_unchecked {
        return Ok(());
    }
    for (name, e) in &t.checks {
        let v = e.eval(row, cx)?;
        if matches!(v, Value::Bit(false)) {
            let mut cols = Vec::new();
            e.columns(&mut cols);
            let col = cols.first().map(|&c| format!(", column '{}'", t.columns[c].name)).unwrap_or_default();
            return Err(SqlError::new(
                547,
                16,
                0,
                format!(
                    "The {stmt} statement conflicted with the CHECK constraint \"{name}\". The conflict occurred in database \"{}\", table \"{}.{}\"{col}.",
                    t.db_name, t.schema, t.display_name
                ),
            ));
        }
    }
    if !cx.view_checks.is_empty() {
        let checks = std::mem::take(&mut cx.view_checks);
        let r = check_option_rows(t, row, &checks, cx);
        cx.view_checks = checks;
        r?;
    }
    for fk in &t.foreign_keys {
        let unchanged = |(o, assigned): (&Row, &[usize])| {
            fk.columns.iter().all(|&c| !assigned.contains(&c) && same_value(&o[c], &row[c]))
        };
        if old.is_some_and(unchanged) {
            continue;
        }
        let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        if vals.iter().any(|v| v.is_null()) {
            continue;
        }
        // A row that references itself is its own referenced row (SQL Server checks the
        // reference once the row is written).
        let own = fk.referenced.db == t.db && fk.referenced.object_id == t.object_id;
        if own && fk.referenced_columns.iter().zip(&vals).all(|(&c, v)| same_value(&row[c], v)) {
            continue;
        }
        if !exists_row(
            cx,
            &fk.referenced,
            &fk.referenced_columns,
            &vals,
            &fk.columns.iter().map(|&c| t.columns[c].ty).collect::<Vec<_>>(),
        )? {
            return Err(SqlError::new(
                547,
                16,
                0,
                format!(
                    "The {stmt} statement conflicted with the FOREIGN KEY constraint \"{}\". The conflict occurred in database \"{}\", table \"{}.{}\", column '{}'.",
                    fk.name,
                    fk.referenced.db_name,
                    fk.referenced.schema,
                    fk.referenced.display_name,
                    fk.referenced_columns.first().map(|&c| fk.referenced.columns[c].name.clone()).unwrap_or_default()
                ),
            ));
        }
    }
    Ok(())
}

/// 550 when a row written to `t` through a view WITH CHECK OPTION would not show in it.
fn check_option_rows(
    t: &TableInfo,
    row: &Row,
    checks: &[super::views::ViewCheck],
    cx: &mut Cx,
) -> Result<(), SqlError> {
    for c in checks.iter().filter(|c| c.db == t.db && c.object_id == t.object_id) {
        if !matches!(c.check.eval(row, cx)?, Value::Bit(true)) {
            return Err(SqlError::new(
                550,
                16,
                1,
                "The attempted insert or update failed because the target view either specifies WITH CHECK OPTION or spans a view that specifies WITH CHECK OPTION and one or more rows resulting from the operation did not qualify under the CHECK OPTION constraint.",
            ));
        }
    }
    Ok(())
}

/// Does `t` have a row whose `cols` equal `vals`? Uses an index on those columns when
/// there is one, else scans.
pub(super) fn exists_row(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    cols: &[usize],
    vals: &[Value],
    from: &[SqlType],
) -> Result<bool, SqlError> {
    let plan = key_match_plan(cx, t, cols, vals, from, false)?;
    let mut op = open(&plan, cx)?;
    Ok(op.next(cx)?.is_some())
}

/// A plan for the rows of `t` whose `cols` equal `vals` (typed `from`): a scan with the
/// equalities pushed down, so an index on those columns is used when there is one.
pub(super) fn key_match_plan(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    cols: &[usize],
    vals: &[Value],
    from: &[SqlType],
    with_locator: bool,
) -> Result<Plan, SqlError> {
    let mut eq = Vec::new();
    for (i, v) in vals.iter().enumerate() {
        eq.push(BExpr::Cmp(
            BinaryOp::Eq,
            Box::new(BExpr::Col(cols[i], t.columns[cols[i]].ty)),
            Box::new(BExpr::Const(v.clone(), from[i])),
            t.columns[cols[i]].ty,
        ));
    }
    let scan = Plan::Scan(ScanNode::all(t.clone(), with_locator));
    super::super::query::push_down(scan, eq, cx)
}

/// The rows of the tables referencing `t` through a FOREIGN KEY, once `t`'s row `old`
/// was deleted (`new` None) or replaced by `new`: NO ACTION is 547 when one still
/// references the old key; CASCADE, SET NULL and SET DEFAULT change them as statements
/// of their own would (`write_update`, `write_delete`), so a cascaded row is checked
/// and goes on down to the tables referencing it.
pub(super) fn check_referenced(
    t: &TableInfo,
    old: &Row,
    new: Option<&Row>,
    stmt: &str,
    cx: &mut Cx,
) -> Result<(), SqlError> {
    // Cascades recurse (8631 rather than overflow on cyclic references).
    crate::stack::check()?;
    for (name, child, child_cols, our_cols) in &t.referenced_by {
        let vals: Vec<Value> = our_cols.iter().map(|&c| old[c].clone()).collect();
        if vals.iter().any(|v| v.is_null()) {
            continue;
        }
        if let Some(n) = new {
            // The referenced key did not change: nothing to check.
            if our_cols.iter().all(|&c| same_value(&old[c], &n[c])) {
                continue;
            }
        }
        let action = {
            let cat = cx.catalog(child.db)?;
            let g = cat.inner.read();
            g.objects
                .get(&child.object_id)
                .and_then(|o| o.table())
                .and_then(|ct| {
                    ct.foreign_keys.iter().find(|f| &f.name == name).map(|f| {
                        if new.is_some() {
                            f.on_update
                        } else {
                            f.on_delete
                        }
                    })
                })
                .unwrap_or(ReferentialAction::NoAction)
        };
        let types_: Vec<SqlType> = our_cols.iter().map(|&c| t.columns[c].ty).collect();
        match action {
            ReferentialAction::NoAction => {
                if exists_row(cx, child, child_cols, &vals, &types_)? {
                    return Err(SqlError::new(
                        547,
                        16,
                        0,
                        format!(
                            "The {stmt} statement conflicted with the REFERENCE constraint \"{name}\". The conflict occurred in database \"{}\", table \"{}.{}\", column '{}'.",
                            child.db_name,
                            child.schema,
                            child.display_name,
                            child_cols.first().map(|&c| child.columns[c].name.clone()).unwrap_or_default()
                        ),
                    ));
                }
            }
            ReferentialAction::Cascade | ReferentialAction::SetNull | ReferentialAction::SetDefault => {
                // `referenced_by` holds the referencing table without its own links and
                // triggers (built one level deep): a cascade needs the whole table, to
                // check its rows against its own foreign keys, to go on to the tables
                // referencing it and to fire its triggers.
                let full =
                    if child.object_id != t.object_id { cx.table_info_by_id(child.db, child.object_id)? } else { None };
                let child = full.as_ref().unwrap_or(child);
                let rows = matching_rows(cx, child, child_cols, &vals, &types_)?;
                // The referencing table's AFTER triggers get the rows once the statement
                // has written all of its own (trigger::fire_cascades).
                let deletes = action == ReferentialAction::Cascade && new.is_none();
                let event = if deletes { trigger::Event::Delete } else { trigger::Event::Update };
                let slot = if rows.is_empty() { None } else { trigger::cascade_slot(cx, child, event, child_cols) };
                for (pk, crow) in rows {
                    let nr = if deletes {
                        if !write_delete(cx, child, &pk, &crow, stmt)? {
                            continue;
                        }
                        None
                    } else {
                        let mut nr = crow.clone();
                        for (k, &cc) in child_cols.iter().enumerate() {
                            nr[cc] = match (action, new) {
                                (ReferentialAction::Cascade, Some(n)) => n[our_cols[k]].clone(),
                                (ReferentialAction::SetDefault, _) => match &child.defaults[cc] {
                                    Some(d) => {
                                        let v = d.eval(&[], cx)?;
                                        to_column(child, cc, v, &d.ty())?
                                    }
                                    None => Value::Null,
                                },
                                _ => Value::Null,
                            };
                        }
                        Some(write_update_of(cx, child, &pk, &crow, nr, stmt, child_cols)?)
                    };
                    if let Some(s) = slot {
                        trigger::cascade_row(cx, s, crow, nr);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether a column's value is the same before and after a change (NULL is NULL).
pub(super) fn same_value(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => types::compare(a, b) == Some(std::cmp::Ordering::Equal),
        _ => false,
    }
}

pub(super) fn matching_rows(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    cols: &[usize],
    vals: &[Value],
    from: &[SqlType],
) -> Result<Vec<(Vec<u8>, Row)>, SqlError> {
    let plan = key_match_plan(cx, t, cols, vals, from, true)?;
    let mut op = open(&plan, cx)?;
    let mut out = Vec::new();
    let w = t.columns.len();
    while let Some(mut r) = op.next(cx)? {
        let Some(Value::Binary(pk)) = r.pop() else { continue };
        r.truncate(w);
        out.push((pk, r));
    }
    Ok(out)
}

/// OUTPUT clause: items bound over `[deleted columns..., inserted columns...]`.
pub(in crate::exec) struct Output {
    pub(super) exprs: Vec<BExpr>,
    pub(super) cols: Vec<OutCol>,
    pub(super) into: Option<(Arc<TableInfo>, Vec<usize>)>,
    pub(super) rows: Vec<Row>,
}
