//! T-SQL cursors: DECLARE CURSOR, SET @c = CURSOR, OPEN, FETCH, CLOSE, DEALLOCATE,
//! @@FETCH_STATUS, @@CURSOR_ROWS and CURSOR_STATUS.
//!
//! OPEN decides the cursor's type as SQL Server's implicit conversions do ("Use implicit
//! cursor conversions"): a query with no table, or with DISTINCT, aggregates, GROUP BY,
//! HAVING or a set operator (here also: joins, views, CTEs, subqueries, window functions,
//! anything whose rows are not each one row of one table) makes a STATIC cursor; a
//! DYNAMIC or forward-only one whose order is not the table's clustered index order, or
//! that has TOP, needs a worktable and becomes KEYSET; a KEYSET cursor over a table
//! without a unique index becomes STATIC. TYPE_WARNING reports a conversion of an
//! explicit KEYSET or DYNAMIC request with message 16956.
//!
//! - STATIC (and INSENSITIVE): the rows are materialized at OPEN.
//! - KEYSET: OPEN keeps the row locators (primary index keys) of the qualifying rows in
//!   order; each FETCH reads the row by its locator and computes the select list on its
//!   current values. A row deleted since OPEN (or whose key changed) is FETCH status -2
//!   and leaves the INTO variables alone; rows inserted after OPEN are not seen.
//! - DYNAMIC (and the default and FAST_FORWARD types when the query allows): the cursor
//!   keeps only the locator of its current row; each FETCH seeks the next (previous)
//!   row in clustered index order from it and evaluates the WHERE clause on the row
//!   found, so inserted, deleted and updated rows show. FETCH ABSOLUTE is 16925.
//!
//! Keyset and dynamic fetches read through the host as one statement each, locking as
//! the session's isolation level requires. Variables in the cursor's query take their
//! values at OPEN (their slots are replaced by constants).
//!
//! Scopes: GLOBAL cursors live in the session until DEALLOCATE or the connection's end
//! (RESETCONNECTION builds a new session state, which drops them); LOCAL cursors and
//! cursor variables live in their frame (the batch, a procedure or dynamic SQL) and go
//! with it.

use std::ops::Bound;
use std::sync::Arc;

use super::base::Flow;
use super::context::Cx;
use super::expr::{is_true, BExpr, Row};
use super::plan::column_info;
use super::plan::{OutCol, Plan};
use super::query::Binder;
use super::run::{assign_value, atomic, eval_standalone};
use super::table::TableInfo;
use super::{errors, plan};
use crate::ast::*;
use types::{SqlError, SqlType, Value};

pub(crate) use super::cursor_state::*;

fn find<'a>(v: &'a mut [Cursor], name: &str) -> Option<&'a mut Cursor> {
    v.iter_mut().find(|c| c.name.eq_ignore_ascii_case(name))
}

fn not_exist(name: &str) -> SqlError {
    SqlError::new(16916, 16, 1, format!("A cursor with the name '{name}' does not exist."))
}

/// A cursor statement naming a variable that is not a cursor variable: 16948 when it is
/// another variable, 137 when there is none.
fn not_a_cursor_variable(cx: &mut Cx, v: &str) -> SqlError {
    if cx.lookup_var(v).is_some() {
        SqlError::new(
            16948,
            16,
            1,
            format!("The variable '{v}' is not a cursor variable, but it is used in a place where a cursor variable is expected."),
        )
    } else {
        errors::must_declare(v)
    }
}

fn not_open() -> SqlError {
    SqlError::new(16917, 16, 1, "Cursor is not open.")
}

/// The cursor a statement names: a LOCAL one of the current frame first, then a GLOBAL
/// one (only GLOBAL ones with the GLOBAL keyword), or a cursor variable's.
fn resolve<'a>(cx: &'a mut Cx, r: &CursorRef) -> Result<&'a mut Cursor, SqlError> {
    match &r.name {
        NameRef::Variable(v) => {
            if !cx.frame().cursors.has_variable(v) {
                return Err(not_a_cursor_variable(cx, v));
            }
            let frame = cx.frame();
            match frame.cursors.variables.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(v)) {
                Some((_, Some(c))) => Ok(c),
                Some((_, None)) => Err(SqlError::new(
                    16950,
                    16,
                    2,
                    format!("The variable '{v}' does not currently have a cursor allocated to it."),
                )),
                None => Err(errors::must_declare(v)),
            }
        }
        NameRef::Name(id) => {
            let name = &id.value;
            if !r.global && find(&mut cx.frame().cursors.local, name).is_some() {
                return find(&mut cx.frame().cursors.local, name).ok_or_else(|| not_exist(name));
            }
            find(&mut cx.state.cursors.global, name).ok_or_else(|| not_exist(name))
        }
    }
}

/// What a definition's options ask for.
struct Options {
    local: bool,
    scroll: bool,
    kind: Kind,
    warn: bool,
    read_only: bool,
}

/// The options of a definition. Unknown words are a syntax error, as SQL Server's
/// parser has it.
fn options(d: &CursorDefinition) -> Result<Options, SqlError> {
    let mut local = false;
    let mut forward_only = false;
    let mut scroll = d.iso_options.iter().any(|o| o == "SCROLL");
    let mut kind: Option<&str> = d.iso_options.iter().any(|o| o == "INSENSITIVE").then_some("STATIC");
    let mut read_only = d.read_only;
    let mut type_warning = false;
    for o in &d.options {
        match o.as_str() {
            "LOCAL" => local = true,
            "GLOBAL" => local = false,
            "FORWARD_ONLY" => forward_only = true,
            "SCROLL" => scroll = true,
            "STATIC" | "KEYSET" | "DYNAMIC" | "FAST_FORWARD" => kind = Some(o.as_str()),
            "READ_ONLY" => read_only = true,
            "TYPE_WARNING" => type_warning = true,
            "SCROLL_LOCKS" | "OPTIMISTIC" => {}
            other => return Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{other}'."))),
        }
    }
    if kind == Some("FAST_FORWARD") && (scroll || d.for_update.is_some()) {
        let other = if scroll { "SCROLL" } else { "FOR UPDATE" };
        return Err(SqlError::new(1048, 15, 1, format!("Conflicting cursor options FAST_FORWARD and {other}.")));
    }
    // STATIC, KEYSET and DYNAMIC scroll unless FORWARD_ONLY says otherwise; FORWARD_ONLY
    // alone (and no option at all) is a dynamic cursor.
    let scroll = scroll || (!forward_only && matches!(kind, Some("STATIC" | "KEYSET" | "DYNAMIC")));
    let warn = type_warning && matches!(kind, Some("KEYSET" | "DYNAMIC"));
    // No type: a forward-only cursor is DYNAMIC; a scrolling one is KEYSET (ISO SCROLL
    // without INSENSITIVE sees updates and deletes, not inserts).
    let kind = match kind {
        Some("STATIC") => Kind::Static,
        Some("KEYSET") => Kind::Keyset,
        Some("FAST_FORWARD") => Kind::FastForward,
        Some(_) => Kind::Dynamic,
        None if scroll => Kind::Keyset,
        None => Kind::Dynamic,
    };
    // SQL Server's STATIC (and INSENSITIVE) cursors and FAST_FORWARD ones are read-only.
    let read_only = read_only || matches!(kind, Kind::Static | Kind::FastForward);
    Ok(Options { local, scroll, kind, warn, read_only })
}

fn new_cursor(cx: &mut Cx, name: &str, definition: &CursorDefinition) -> Result<(Cursor, bool), SqlError> {
    let o = options(definition)?;
    let id = cx.state.cursors.next_id;
    cx.state.cursors.next_id += 1;
    let c = Cursor {
        name: name.to_string(),
        id,
        definition: Arc::new(definition.clone()),
        scroll: o.scroll,
        kind: o.kind,
        warn: o.warn,
        read_only: o.read_only,
        open: None,
    };
    Ok((c, o.local))
}

/// DECLARE name CURSOR ...
pub fn declare(cx: &mut Cx, name: &Ident, definition: &CursorDefinition) -> Result<(), SqlError> {
    let (c, local) = new_cursor(cx, &name.value, definition)?;
    let list = if local { &mut cx.frame().cursors.local } else { &mut cx.state.cursors.global };
    if find(list, &name.value).is_some() {
        return Err(SqlError::new(16915, 16, 1, format!("A cursor with the name '{}' already exists.", name.value)));
    }
    list.push(c);
    Ok(())
}

/// SET @c = CURSOR ...: the variable's previous cursor, if any, is replaced.
pub fn set_variable(cx: &mut Cx, var: &str, definition: &CursorDefinition) -> Result<Flow, SqlError> {
    if !cx.frame().cursors.has_variable(var) {
        return Err(not_a_cursor_variable(cx, var));
    }
    let (c, _) = new_cursor(cx, var, definition)?;
    if let Some(slot) = cx.frame().cursors.variables.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(var)) {
        slot.1 = Some(c);
    }
    Ok(Flow::Normal)
}

/// OPEN: decides the cursor's type (see the module doc), then runs the query (STATIC:
/// its rows; KEYSET: their locators) or, for a DYNAMIC cursor, only binds it.
pub fn open(cx: &mut Cx, r: &CursorRef) -> Result<Flow, SqlError> {
    let c = resolve(cx, r)?;
    if c.open.is_some() {
        return Err(SqlError::new(16905, 16, 1, "The cursor is already open."));
    }
    let (definition, asked, warn, read_only) = (c.definition.clone(), c.kind, c.warn, c.read_only);
    let set = atomic(cx, |cx| open_set(cx, &definition.query, asked, read_only))?;
    if warn && set.kind != asked {
        // Severity 10: the cursor opens as converted.
        let _ = cx.sink.message(&crate::results::Message {
            error: SqlError::new(16956, 10, 1, "The created cursor is not of the requested type."),
            info: true,
        });
    }
    let n = match &set.rows {
        Rows::Static { rows, .. } => rows.len(),
        Rows::Keyset { keys, .. } => keys.len(),
        Rows::Dynamic { .. } => 0,
    };
    // SQL Server reports no count for a dynamic or fast-forward cursor.
    let count = !matches!(set.kind, Kind::Dynamic | Kind::FastForward);
    let c = resolve(cx, r)?;
    let id = c.id;
    c.open = Some(set);
    let s = &mut cx.state.cursors;
    s.last_opened = id;
    s.cursor_rows = if count { i32::try_from(n).unwrap_or(i32::MAX) } else { -1 };
    Ok(Flow::Normal)
}

/// The open state of a cursor over `query` of type `asked` (inside OPEN's statement).
fn open_set(cx: &mut Cx, query: &Query, asked: Kind, read_only: bool) -> Result<OpenSet, SqlError> {
    // Only a query of one base table can be anything but STATIC: it is planned with
    // the table as `dml_target` and each row's locator as a hidden last column.
    let base = if asked == Kind::Static { None } else { base_table(cx, query)? };
    let located = match &base {
        Some(_) => with_locator(query),
        None => query.clone(),
    };
    cx.dml_target = base.as_ref().map(|t| (t.db, t.object_id));
    let planned = Binder::new(cx).plan_query(&located);
    cx.dml_target = None;
    let plan = planned?.0;
    cx.pending_assigns.clear();
    let mut columns = column_info(&plan);
    if base.is_some() {
        columns.pop();
    }
    let path = match &base {
        Some(t) => RowPath::of(cx, &plan, t, query).map(Arc::new),
        None => None,
    };
    let unique = base.as_ref().is_some_and(|t| t.indexes.iter().any(|ix| ix.meta.unique));
    let kind = match (asked, &path) {
        (Kind::Static, _) | (_, None) => Kind::Static,
        (Kind::FastForward, Some(p)) => {
            // A FAST_FORWARD cursor is never converted: without a dynamic plan it reads
            // the rows of OPEN time.
            if p.dynamic {
                Kind::FastForward
            } else {
                Kind::Static
            }
        }
        (Kind::Dynamic, Some(p)) if p.dynamic => Kind::Dynamic,
        (Kind::Dynamic | Kind::Keyset, Some(_)) if unique => Kind::Keyset,
        (Kind::Dynamic | Kind::Keyset, Some(_)) => Kind::Static,
    };
    // A FAST_FORWARD cursor keeps its declared type for @@CURSOR_ROWS and CURSOR_STATUS.
    let shown = if asked == Kind::FastForward { Kind::FastForward } else { kind };
    let updatable = !read_only && kind != Kind::Static;
    let base_id = base.as_ref().filter(|_| updatable).map(|t| (t.db, t.object_id));
    let rows = match (kind, path) {
        (Kind::Dynamic | Kind::FastForward, Some(path)) => Rows::Dynamic { at: DynPos::Before, path },
        (Kind::Keyset, Some(path)) => {
            let mut op = plan::open(&plan, cx)?;
            let mut keys = Vec::new();
            while let Some(mut row) = op.next(cx)? {
                if let Some(Value::Binary(k)) = row.pop() {
                    keys.push(k);
                }
            }
            Rows::Keyset { keys, pos: -1, path }
        }
        _ => {
            let mut op = plan::open(&plan, cx)?;
            let width = columns.len();
            let mut rows = Vec::new();
            while let Some(mut row) = op.next(cx)? {
                row.truncate(width);
                rows.push(row);
            }
            Rows::Static { rows, pos: -1 }
        }
    };
    Ok(OpenSet { columns, kind: shown, rows, base: base_id })
}

/// CLOSE: the rows go; the cursor can be opened again.
pub fn close(cx: &mut Cx, r: &CursorRef) -> Result<Flow, SqlError> {
    let c = resolve(cx, r)?;
    if c.open.take().is_none() {
        return Err(not_open());
    }
    let id = c.id;
    forget_rows(cx, id);
    Ok(Flow::Normal)
}

/// @@CURSOR_ROWS is 0 once the last cursor opened is closed or deallocated.
fn forget_rows(cx: &mut Cx, id: u64) {
    if cx.state.cursors.last_opened == id {
        cx.state.cursors.cursor_rows = 0;
    }
}

/// DEALLOCATE: the name (or the variable's reference) goes.
pub fn deallocate(cx: &mut Cx, r: &CursorRef) -> Result<Flow, SqlError> {
    let id = resolve(cx, r)?.id;
    let removed = match &r.name {
        NameRef::Variable(v) => cx
            .frame()
            .cursors
            .variables
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(v))
            .and_then(|slot| slot.1.take())
            .is_some(),
        NameRef::Name(_) => {
            // `resolve` found it in one of the two lists.
            cx.frame().cursors.local.retain(|c| c.id != id);
            cx.state.cursors.global.retain(|c| c.id != id);
            true
        }
    };
    if removed {
        forget_rows(cx, id);
    }
    Ok(Flow::Normal)
}

/// The lower-case name SQL Server's 16911 gives a fetch type.
fn direction_name(d: &FetchDirection) -> &'static str {
    match d {
        FetchDirection::Next => "next",
        FetchDirection::Prior => "prior",
        FetchDirection::First => "first",
        FetchDirection::Last => "last",
        FetchDirection::Absolute(_) => "absolute",
        FetchDirection::Relative(_) => "relative",
    }
}

/// The row number ABSOLUTE / RELATIVE name: an integer constant or variable.
fn offset(cx: &mut Cx, e: &Expr) -> Result<i64, SqlError> {
    let (v, ty) = eval_standalone(cx, e)?;
    // A NULL row number fetches no row, as ABSOLUTE 0 does.
    match crate::scalar::convert::convert(&v, &ty, &SqlType::BigInt, None)? {
        Value::BigInt(n) => Ok(n),
        _ => Ok(0),
    }
}

/// What a FETCH found.
enum Fetched {
    Row(Row),
    /// A keyset row deleted since OPEN (@@FETCH_STATUS -2).
    Missing,
    /// Past either end (-1).
    Nothing,
}

/// FETCH: moves the cursor and returns the row as a result set or into variables.
pub fn fetch(cx: &mut Cx, f: &Fetch) -> Result<Flow, SqlError> {
    let direction = f.direction.clone().unwrap_or(FetchDirection::Next);
    let n = match &direction {
        FetchDirection::Absolute(e) | FetchDirection::Relative(e) => offset(cx, e)?,
        _ => 0,
    };
    let c = resolve(cx, &f.cursor)?;
    if !c.scroll && !matches!(direction, FetchDirection::Next) {
        return Err(SqlError::new(
            16911,
            16,
            1,
            format!("fetch: The fetch type {} cannot be used with forward only cursors.", direction_name(&direction)),
        ));
    }
    let set = c.open.as_mut().ok_or_else(not_open)?;
    if !f.into.is_empty() && f.into.len() != set.columns.len() {
        return Err(SqlError::new(
            16924,
            16,
            1,
            "Cursorfetch: The number of variables declared in the INTO list must match that of selected columns.",
        ));
    }
    let columns = set.columns.clone();
    let width = columns.len();
    let fetched = match &mut set.rows {
        Rows::Static { rows, pos } => {
            let target = move_to(*pos, rows.len(), &direction, n);
            *pos = target.clamp(-1, rows.len() as i64);
            match usize::try_from(target).ok().and_then(|t| rows.get(t)) {
                Some(row) => Fetched::Row(row[..width].to_vec()),
                None => Fetched::Nothing,
            }
        }
        Rows::Keyset { keys, pos, path } => {
            let target = move_to(*pos, keys.len(), &direction, n);
            *pos = target.clamp(-1, keys.len() as i64);
            match usize::try_from(target).ok().and_then(|t| keys.get(t)) {
                Some(key) => {
                    let (key, path) = (key.clone(), path.clone());
                    match atomic(cx, |cx| path.read(cx, &key, false))? {
                        Some(row) => Fetched::Row(row),
                        None => Fetched::Missing,
                    }
                }
                None => Fetched::Nothing,
            }
        }
        Rows::Dynamic { at, path } => {
            if matches!(direction, FetchDirection::Absolute(_)) {
                return Err(SqlError::new(
                    16925,
                    16,
                    1,
                    "The fetch type absolute cannot be used with dynamic cursors.",
                ));
            }
            let (from, path) = (at.clone(), path.clone());
            let (to, fetched) = atomic(cx, |cx| dynamic_move(cx, &path, from, &direction, n))?;
            // The cursor is still where `resolve` found it: nothing in between names it.
            if let Some(Rows::Dynamic { at, .. }) = resolve(cx, &f.cursor)?.open.as_mut().map(|s| &mut s.rows) {
                *at = to;
            }
            fetched
        }
    };
    cx.state.cursors.fetch_status = match fetched {
        Fetched::Row(_) => 0,
        Fetched::Missing => -2,
        Fetched::Nothing => -1,
    };
    let row = match fetched {
        Fetched::Row(mut row) => {
            row.truncate(width);
            Some(row)
        }
        _ => None,
    };
    let count = u64::from(row.is_some());
    cx.state.rowcount = count as i64;
    if f.into.is_empty() {
        // No INTO: the row is a result set of its own (empty past either end or for a
        // missing row).
        cx.sink.columns(&columns).map_err(|_| super::base::cancelled())?;
        if let Some(row) = &row {
            cx.sink.row(row).map_err(|_| super::base::cancelled())?;
        }
        cx.done(Some(count))?;
        return Ok(Flow::Normal);
    }
    if let Some(row) = row {
        for ((name, v), col) in f.into.iter().zip(row).zip(&columns) {
            let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
            let v = assign_value(cx, slot, ty, AssignOp::Assign, v, &col.ty)?;
            cx.set_var(slot, v);
        }
    }
    Ok(Flow::Normal)
}

/// The row number a fetch moves a STATIC or KEYSET cursor to, from `pos` among `len`
/// rows (-1 or `len` and beyond: no row).
fn move_to(pos: i64, len: usize, direction: &FetchDirection, n: i64) -> i64 {
    let len = len as i64;
    match direction {
        FetchDirection::Next => pos.saturating_add(1),
        FetchDirection::Prior => pos.saturating_sub(1),
        FetchDirection::First => 0,
        FetchDirection::Last => len - 1,
        // ABSOLUTE 0 returns no row and leaves the cursor before the first one.
        FetchDirection::Absolute(_) if n == 0 => -1,
        FetchDirection::Absolute(_) if n > 0 => n - 1,
        FetchDirection::Absolute(_) => len.saturating_add(n),
        FetchDirection::Relative(_) => pos.saturating_add(n),
    }
}

/// A dynamic cursor's fetch from `at`: where it ends and what it found. RELATIVE n
/// steps n rows; RELATIVE 0 reads the current row again.
fn dynamic_move(
    cx: &mut Cx,
    path: &RowPath,
    at: DynPos,
    direction: &FetchDirection,
    n: i64,
) -> Result<(DynPos, Fetched), SqlError> {
    let (forward, steps) = match direction {
        FetchDirection::Next => (true, 1),
        FetchDirection::Prior => (false, 1),
        FetchDirection::First => return step(cx, path, DynPos::Before, true),
        FetchDirection::Last => return step(cx, path, DynPos::After, false),
        FetchDirection::Relative(_) if n == 0 => {
            return Ok(match at {
                DynPos::At(k) => match path.read(cx, &k, true)? {
                    Some(row) => (DynPos::At(k), Fetched::Row(row)),
                    None => (DynPos::At(k), Fetched::Missing),
                },
                other => (other, Fetched::Nothing),
            });
        }
        FetchDirection::Relative(_) => (n > 0, n.unsigned_abs()),
        // Refused before (16925).
        FetchDirection::Absolute(_) => return Ok((at, Fetched::Nothing)),
    };
    let mut at = at;
    let mut found = Fetched::Nothing;
    for _ in 0..steps {
        let (to, f) = step(cx, path, at, forward)?;
        at = to;
        found = f;
        if !matches!(found, Fetched::Row(_)) {
            break;
        }
    }
    Ok((at, found))
}

/// One row on from `at` (back when not `forward`), in the cursor's order.
fn step(cx: &mut Cx, path: &RowPath, at: DynPos, forward: bool) -> Result<(DynPos, Fetched), SqlError> {
    let from = match (&at, forward) {
        (DynPos::After, true) | (DynPos::Before, false) => return Ok((at, Fetched::Nothing)),
        (DynPos::At(k), _) => Some(k.as_slice()),
        _ => None,
    };
    Ok(match path.seek(cx, from, forward)? {
        Some((k, row)) => (DynPos::At(k), Fetched::Row(row)),
        None if forward => (DynPos::After, Fetched::Nothing),
        None => (DynPos::Before, Fetched::Nothing),
    })
}

/// The base table of a cursor query whose rows each come from one row of one table: a
/// SELECT of one table or table variable without DISTINCT, aggregates, GROUP BY or set
/// operators (other cursors are read-only, as SQL Server makes them).
fn base_table(cx: &mut Cx, q: &Query) -> Result<Option<Arc<TableInfo>>, SqlError> {
    let SetExpr::Select(sel) = &q.body else {
        return Ok(None);
    };
    let aggregate = sel.items.iter().any(|i| match i {
        SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => super::query::contains_aggregate(expr),
        SelectItem::Wildcard(_) => false,
    });
    if sel.distinct || aggregate || !sel.group_by.is_empty() || sel.having.is_some() || sel.into.is_some() {
        return Ok(None);
    }
    if sel.from.len() != 1 || !sel.from[0].joins.is_empty() {
        return Ok(None);
    }
    match &sel.from[0].relation {
        TableFactor::Table { name, .. } => {
            let cte =
                name.parts.len() == 1 && q.with.iter().any(|c| c.name.value.eq_ignore_ascii_case(&name.name().value));
            if cte {
                return Ok(None);
            }
            Ok(cx.resolve_table_cached(name)?.map(|t| t.info.clone()))
        }
        TableFactor::Variable { name, .. } => cx.table_variable(name).map(Some),
        _ => Ok(None),
    }
}

/// The cursor query with its base table's locator as a last column.
fn with_locator(q: &Query) -> Query {
    let mut q = q.clone();
    if let SetExpr::Select(sel) = &mut q.body {
        let locator = Expr::new(ExprKind::Column(ObjectName::from_ident(Ident::new("%%physloc%%"))));
        sel.items.push(SelectItem::Expr { expr: locator, alias: None });
    }
    q
}

/// Rows a dynamic fetch reads from the host at a time (the next qualifying row is
/// usually among the first few).
const SEEK_BATCH: usize = 16;

impl RowPath {
    /// The path of `plan` (the cursor query of `table`, with its locator): None when it
    /// is not a chain of projections, sorts, TOP and filters over one scan of the
    /// table, or reads a subquery (which may read variables, and a row of its own).
    fn of(cx: &Cx, plan: &Plan, table: &Arc<TableInfo>, query: &Query) -> Option<RowPath> {
        let constants = |e: &BExpr| {
            e.map_leaves(&|x| match x {
                BExpr::Var(slot, ty) => Some(BExpr::Const(cx.var(*slot), *ty)),
                _ => None,
            })
        };
        let mut steps = Vec::new();
        let mut filter = Vec::new();
        let mut top = false;
        let mut filter_above = false;
        let mut node = plan;
        loop {
            match node {
                Plan::Trim { input, keep } => {
                    filter_above |= !filter.is_empty();
                    steps.push(Plan::Trim { input: Box::new(Plan::Unit), keep: *keep });
                    node = input;
                }
                Plan::Project { input, exprs, cols } => {
                    filter_above |= !filter.is_empty();
                    let exprs = exprs.iter().map(constants).collect();
                    steps.push(Plan::Project { input: Box::new(Plan::Unit), exprs, cols: cols.clone() });
                    node = input;
                }
                Plan::Sort { input, .. } => node = input,
                Plan::Top { input, .. } => {
                    top = true;
                    node = input;
                }
                Plan::Filter { input, pred } => {
                    filter.push(constants(pred));
                    node = input;
                }
                Plan::Scan(scan) => {
                    let same = Arc::ptr_eq(&scan.table, table)
                        || (scan.table.db == table.db && scan.table.object_id == table.object_id);
                    if !same || !scan.with_locator {
                        return None;
                    }
                    filter.extend(scan.filter.iter().map(constants));
                    break;
                }
                _ => return None,
            }
        }
        let mut subquery = false;
        let mut check = |e: &BExpr| {
            e.visit(&mut |x| {
                subquery |= matches!(
                    x,
                    BExpr::Subquery(..) | BExpr::Exists(..) | BExpr::InSubquery { .. } | BExpr::Quantified { .. }
                )
            })
        };
        filter.iter().for_each(&mut check);
        for s in &steps {
            if let Plan::Project { exprs, .. } = s {
                exprs.iter().for_each(&mut check);
            }
        }
        if subquery {
            return None;
        }
        let order = clustered_order(query, table);
        let mut scan_cols = table.out_cols();
        scan_cols.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: types::Length::Bounded(900) }, false));
        Some(RowPath {
            table: table.clone(),
            steps,
            scan_cols,
            filter,
            dynamic: !top && !filter_above && order.is_some(),
            reverse: order.unwrap_or(false),
        })
    }

    /// The cursor row of the table row under `key` as it is now; None when the row is
    /// gone (or, `check`ing, no longer passes the WHERE clause).
    fn read(&self, cx: &mut Cx, key: &[u8], check: bool) -> Result<Option<Row>, SqlError> {
        let index = &self.table.indexes[0].iref;
        let Some(mut row) = cx.host.get(index, key).map_err(super::base::host_err)? else {
            return Ok(None);
        };
        self.table.fill_computed(&mut row, cx)?;
        if check && !self.passes(cx, &row)? {
            return Ok(None);
        }
        self.project(cx, row, key).map(Some)
    }

    fn passes(&self, cx: &mut Cx, row: &[Value]) -> Result<bool, SqlError> {
        for f in &self.filter {
            if !is_true(&f.eval(row, cx)?) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The select list over the table row: the plan's projection nodes over that one
    /// row (so they evaluate exactly as OPEN's plan does).
    fn project(&self, cx: &mut Cx, mut row: Row, key: &[u8]) -> Result<Row, SqlError> {
        row.push(Value::Binary(key.to_vec()));
        let mut plan = Plan::Rows { rows: Arc::new(vec![row]), cols: self.scan_cols.clone() };
        for step in self.steps.iter().rev() {
            plan = match step {
                Plan::Trim { keep, .. } => Plan::Trim { input: Box::new(plan), keep: *keep },
                Plan::Project { exprs, cols, .. } => {
                    Plan::Project { input: Box::new(plan), exprs: exprs.clone(), cols: cols.clone() }
                }
                _ => plan,
            };
        }
        let mut op = plan::open(&plan, cx)?;
        Ok(op.next(cx)?.unwrap_or_default())
    }

    /// The first row after `from` (before it when not `forward`; from either end when
    /// None) in the cursor's order that passes the WHERE clause, with its locator.
    fn seek(&self, cx: &mut Cx, from: Option<&[u8]>, forward: bool) -> Result<Option<(Vec<u8>, Row)>, SqlError> {
        let index = &self.table.indexes[0].iref;
        let descending = forward == self.reverse;
        let mut last = from.map(<[u8]>::to_vec);
        let mut batch = Vec::with_capacity(SEEK_BATCH);
        loop {
            batch.clear();
            let after = match &last {
                Some(k) => Bound::Excluded(k.as_slice()),
                None => Bound::Unbounded,
            };
            let (lower, upper) = if descending { (Bound::Unbounded, after) } else { (after, Bound::Unbounded) };
            let more =
                cx.host.scan(index, lower, upper, descending, SEEK_BATCH, &mut batch).map_err(super::base::host_err)?;
            for (key, mut row) in batch.drain(..) {
                self.table.fill_computed(&mut row, cx)?;
                if self.passes(cx, &row)? {
                    let row = self.project(cx, row, &key)?;
                    return Ok(Some((key, row)));
                }
                last = Some(key);
            }
            if !more {
                return Ok(None);
            }
            cx.check_cancel()?;
        }
    }
}

/// Whether the query's ORDER BY is the clustered index order of `t` (a prefix of its
/// key, every column in the key's direction, or every one against it): Some(reversed);
/// no ORDER BY is the index order. None when the order needs a worktable.
fn clustered_order(q: &Query, t: &TableInfo) -> Option<bool> {
    if q.order_by.is_empty() {
        return Some(false);
    }
    let SetExpr::Select(sel) = &q.body else { return None };
    if t.is_heap() {
        return None;
    }
    let ix = &t.indexes[0];
    let mut reversed = None;
    for (k, item) in q.order_by.iter().enumerate() {
        let ExprKind::Column(name) = &item.expr.kind else { return None };
        let col = &name.name().value;
        // ORDER BY names a select-list alias before a column.
        let aliased = sel.items.iter().any(|i| match i {
            SelectItem::Expr { expr, alias: Some(a) } if a.value.eq_ignore_ascii_case(col) => {
                !matches!(&expr.kind, ExprKind::Column(n) if n.name().value.eq_ignore_ascii_case(col))
            }
            _ => false,
        });
        if aliased || ix.key_cols.get(k) != t.column_index(col).as_ref() {
            return None;
        }
        let desc = matches!(item.direction, Some(SortDirection::Desc));
        let flip = desc != ix.desc.get(k).copied().unwrap_or(false);
        if *reversed.get_or_insert(flip) != flip {
            return None;
        }
    }
    reversed
}

/// The row WHERE CURRENT OF names: the cursor's base table and the locator of the row
/// last fetched. 16929 for a read-only cursor (or one whose query is not of one table),
/// 16930 when no row is fetched, 16933 when `target` is not the cursor's table. A row
/// deleted since OPEN is SQL Server's message 16934 (severity 10: the statement goes on
/// and changes no row).
pub fn current_row(cx: &mut Cx, r: &CursorRef, target: &TableInfo) -> Result<Vec<u8>, SqlError> {
    let c = resolve(cx, r)?;
    let read_only = || SqlError::new(16929, 16, 1, "The cursor is READ ONLY.");
    if c.read_only {
        return Err(read_only());
    }
    let set = c.open.as_ref().ok_or_else(not_open)?;
    let Some(base) = set.base else {
        return Err(read_only());
    };
    if base != (target.db, target.object_id) {
        return Err(SqlError::new(
            16933,
            16,
            1,
            "The cursor does not include the table being modified or the table is not updatable through the cursor.",
        ));
    }
    let at = |pos: i64, len: usize| usize::try_from(pos).ok().filter(|&p| p < len);
    let pk = match &set.rows {
        Rows::Keyset { keys, pos, .. } => at(*pos, keys.len()).map(|p| keys[p].clone()),
        Rows::Dynamic { at: DynPos::At(k), .. } => Some(k.clone()),
        // A static cursor is read-only (no `base`).
        _ => None,
    };
    let Some(pk) = pk else {
        return Err(SqlError::new(16930, 16, 1, "The requested row is not in the fetch buffer."));
    };
    if cx.host.get(&target.indexes[0].iref, &pk).map_err(super::base::host_err)?.is_none() {
        let _ = cx.sink.message(&crate::results::Message {
            error: SqlError::new(
                16934,
                10,
                1,
                "Optimistic concurrency check failed. The row was modified outside of this cursor.",
            ),
            info: true,
        });
    }
    Ok(pk)
}

impl Cx<'_> {
    pub fn fetch_status(&self) -> i32 {
        self.state.cursors.fetch_status
    }

    pub fn cursor_rows(&self) -> i32 {
        self.state.cursors.cursor_rows
    }

    /// CURSOR_STATUS(kind, name): 1 open with rows (or open and dynamic), 0 open and
    /// empty, -1 closed, -2 a cursor variable with no cursor, -3 no such cursor.
    pub fn cursor_status(&self, kind: &str, name: &str) -> i16 {
        let frame = self.frames.last();
        let c = match kind.to_ascii_lowercase().as_str() {
            "local" => frame.and_then(|f| f.cursors.local.iter().find(|c| c.name.eq_ignore_ascii_case(name))),
            "global" => self.state.cursors.global.iter().find(|c| c.name.eq_ignore_ascii_case(name)),
            "variable" => {
                match frame.and_then(|f| f.cursors.variables.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))) {
                    Some((_, Some(c))) => Some(c),
                    Some((_, None)) => return -2,
                    None => None,
                }
            }
            _ => None,
        };
        match c {
            None => -3,
            Some(Cursor { open: None, .. }) => -1,
            Some(Cursor { open: Some(s), .. }) => i16::from(match &s.rows {
                Rows::Static { rows, .. } => s.kind == Kind::FastForward || !rows.is_empty(),
                Rows::Keyset { keys, .. } => !keys.is_empty(),
                Rows::Dynamic { .. } => true,
            }),
        }
    }
}
