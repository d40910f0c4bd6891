//! T-SQL cursors: DECLARE CURSOR, SET @c = CURSOR, OPEN, FETCH, CLOSE, DEALLOCATE,
//! @@FETCH_STATUS, @@CURSOR_ROWS and CURSOR_STATUS.
//!
//! Every cursor is materialized at OPEN (STATIC / INSENSITIVE semantics): KEYSET and
//! DYNAMIC cursors do not see changes made after OPEN, so FETCH never reports -2.
//! What the type still decides is what SQL Server reports: scrolling (16911 on a
//! forward-only cursor), @@CURSOR_ROWS (-1 for a dynamic one) and CURSOR_STATUS (an
//! open dynamic cursor is 1 even when empty).
//!
//! Scopes: GLOBAL cursors live in the session until DEALLOCATE or the connection's end
//! (RESETCONNECTION builds a new session state, which drops them); LOCAL cursors and
//! cursor variables live in their frame (the batch, a procedure or dynamic SQL) and go
//! with it.

use std::sync::Arc;

use super::expr::Row;
use super::query::Binder;
use super::table::TableInfo;
use super::{assign_value, atomic, column_info, errors, eval_standalone, plan, Cx, Flow};
use crate::ast::*;
use crate::host::DbId;
use crate::results::ColumnInfo;
use types::{SqlError, SqlType, Value};

/// One declared cursor.
#[derive(Debug)]
pub struct Cursor {
    name: String,
    /// Distinguishes cursors for @@CURSOR_ROWS (which names the last one opened).
    id: u64,
    definition: Arc<CursorDefinition>,
    scroll: bool,
    /// DYNAMIC, FAST_FORWARD, or the default forward-only type: SQL Server reports no
    /// row count for these.
    dynamic: bool,
    /// STATIC, INSENSITIVE, FAST_FORWARD, READ_ONLY or FOR READ ONLY: no positioned
    /// UPDATE/DELETE (16929).
    read_only: bool,
    open: Option<OpenSet>,
}

/// An open cursor's rows and position: -1 before the first row, `rows.len()` after the
/// last.
#[derive(Debug)]
struct OpenSet {
    columns: Vec<ColumnInfo>,
    /// With `base`, each row ends with its base row's locator (not shown).
    rows: Vec<Row>,
    pos: i64,
    /// The one base table of an updatable cursor (WHERE CURRENT OF changes its rows).
    base: Option<(DbId, i32)>,
}

/// The session's cursor state: GLOBAL cursors and the connection-wide @@ values.
#[derive(Debug)]
pub struct SessionCursors {
    global: Vec<Cursor>,
    fetch_status: i32,
    cursor_rows: i32,
    last_opened: u64,
    next_id: u64,
}

impl Default for SessionCursors {
    fn default() -> Self {
        // @@FETCH_STATUS is -1 before any FETCH.
        SessionCursors { global: Vec::new(), fetch_status: -1, cursor_rows: 0, last_opened: 0, next_id: 1 }
    }
}

/// A frame's LOCAL cursors and cursor variables (a variable holds at most one cursor).
#[derive(Debug, Default)]
pub struct LocalCursors {
    local: Vec<Cursor>,
    variables: Vec<(String, Option<Cursor>)>,
}

impl LocalCursors {
    pub fn has_variable(&self, name: &str) -> bool {
        self.variables.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// DECLARE @c CURSOR: the variable, with no cursor yet.
    pub fn declare_variable(&mut self, name: &str) {
        self.variables.push((name.to_string(), None));
    }
}

fn find<'a>(v: &'a mut [Cursor], name: &str) -> Option<&'a mut Cursor> {
    v.iter_mut().find(|c| c.name.eq_ignore_ascii_case(name))
}

fn not_exist(name: &str) -> SqlError {
    SqlError::new(16916, 16, 1, format!("A cursor with the name '{name}' does not exist."))
}

fn not_open() -> SqlError {
    SqlError::new(16917, 16, 1, "Cursor is not open.")
}

/// The cursor a statement names: a LOCAL one of the current frame first, then a GLOBAL
/// one (only GLOBAL ones with the GLOBAL keyword), or a cursor variable's.
fn resolve<'a>(cx: &'a mut Cx, r: &CursorRef) -> Result<&'a mut Cursor, SqlError> {
    match &r.name {
        NameRef::Variable(v) => {
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

/// The options of a definition: (LOCAL, scrollable, dynamic, read-only). Unknown words
/// are a syntax error, as SQL Server's parser has it.
fn options(d: &CursorDefinition) -> Result<(bool, bool, bool, bool), SqlError> {
    let mut local = false;
    let mut forward_only = false;
    let mut scroll = d.iso_options.iter().any(|o| o == "SCROLL");
    let mut kind: Option<&str> = d.iso_options.iter().any(|o| o == "INSENSITIVE").then_some("STATIC");
    let mut read_only = d.read_only;
    for o in &d.options {
        match o.as_str() {
            "LOCAL" => local = true,
            "GLOBAL" => local = false,
            "FORWARD_ONLY" => forward_only = true,
            "SCROLL" => scroll = true,
            "STATIC" | "KEYSET" | "DYNAMIC" | "FAST_FORWARD" => kind = Some(o.as_str()),
            "READ_ONLY" => read_only = true,
            "SCROLL_LOCKS" | "OPTIMISTIC" | "TYPE_WARNING" => {}
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
    let dynamic = matches!(kind, None | Some("DYNAMIC" | "FAST_FORWARD"));
    // SQL Server's STATIC (and INSENSITIVE) cursors and FAST_FORWARD ones are read-only.
    let read_only = read_only || matches!(kind, Some("STATIC" | "FAST_FORWARD"));
    Ok((local, scroll, dynamic, read_only))
}

fn new_cursor(cx: &mut Cx, name: &str, definition: &CursorDefinition) -> Result<(Cursor, bool), SqlError> {
    let (local, scroll, dynamic, read_only) = options(definition)?;
    let id = cx.state.cursors.next_id;
    cx.state.cursors.next_id += 1;
    let c = Cursor {
        name: name.to_string(),
        id,
        definition: Arc::new(definition.clone()),
        scroll,
        dynamic,
        read_only,
        open: None,
    };
    Ok((c, local))
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
        return Err(errors::must_declare(var));
    }
    let (c, _) = new_cursor(cx, var, definition)?;
    if let Some(slot) = cx.frame().cursors.variables.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(var)) {
        slot.1 = Some(c);
    }
    Ok(Flow::Normal)
}

/// OPEN: runs the query and keeps its rows.
pub fn open(cx: &mut Cx, r: &CursorRef) -> Result<Flow, SqlError> {
    let c = resolve(cx, r)?;
    if c.open.is_some() {
        return Err(SqlError::new(16905, 16, 1, "The cursor is already open."));
    }
    let definition = c.definition.clone();
    let read_only = c.read_only;
    let (columns, rows, base) = atomic(cx, |cx| {
        // An updatable cursor over one base table keeps each row's locator (as a hidden
        // last column of its query) for WHERE CURRENT OF.
        let base = if read_only { None } else { base_table(cx, &definition.query)? };
        let query = match &base {
            Some(_) => with_locator(&definition.query),
            None => (*definition.query).clone(),
        };
        cx.dml_target = base.as_ref().map(|t| (t.db, t.object_id));
        let planned = Binder::new(cx).plan_query(&query);
        cx.dml_target = None;
        let plan = planned?.0;
        cx.pending_assigns.clear();
        let mut columns = column_info(&plan);
        if base.is_some() {
            columns.pop();
        }
        let mut op = plan::open(&plan, cx)?;
        let mut rows = Vec::new();
        while let Some(row) = op.next(cx)? {
            rows.push(row);
        }
        Ok((columns, rows, base.map(|t| (t.db, t.object_id))))
    })?;
    let n = rows.len();
    let c = resolve(cx, r)?;
    let (id, dynamic) = (c.id, c.dynamic);
    c.open = Some(OpenSet { columns, rows, pos: -1, base });
    let s = &mut cx.state.cursors;
    s.last_opened = id;
    s.cursor_rows = if dynamic { -1 } else { i32::try_from(n).unwrap_or(i32::MAX) };
    Ok(Flow::Normal)
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
    match super::convert::convert(&v, &ty, &SqlType::BigInt, None)? {
        Value::BigInt(n) => Ok(n),
        _ => Ok(0),
    }
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
    let len = set.rows.len() as i64;
    let target = match direction {
        FetchDirection::Next => set.pos.saturating_add(1),
        FetchDirection::Prior => set.pos.saturating_sub(1),
        FetchDirection::First => 0,
        FetchDirection::Last => len - 1,
        // ABSOLUTE 0 returns no row and leaves the cursor before the first one.
        FetchDirection::Absolute(_) if n == 0 => -1,
        FetchDirection::Absolute(_) if n > 0 => n - 1,
        FetchDirection::Absolute(_) => len.saturating_add(n),
        FetchDirection::Relative(_) => set.pos.saturating_add(n),
    };
    // Off either end the cursor rests just outside the rows.
    set.pos = target.clamp(-1, len);
    let width = set.columns.len();
    let row = (0..len).contains(&target).then(|| set.rows[target as usize][..width].to_vec());
    let columns = if f.into.is_empty() { set.columns.clone() } else { Vec::new() };
    let col_types: Vec<SqlType> = set.columns.iter().map(|c| c.ty).collect();
    cx.state.cursors.fetch_status = if row.is_some() { 0 } else { -1 };
    let count = u64::from(row.is_some());
    cx.state.rowcount = count as i64;
    if f.into.is_empty() {
        // No INTO: the row is a result set of its own (empty past either end).
        cx.sink.columns(&columns).map_err(|_| super::cancelled())?;
        if let Some(row) = &row {
            cx.sink.row(row).map_err(|_| super::cancelled())?;
        }
        cx.done(Some(count))?;
        return Ok(Flow::Normal);
    }
    if let Some(row) = row {
        for ((name, v), vty) in f.into.iter().zip(row).zip(col_types) {
            let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
            let v = assign_value(cx, slot, ty, AssignOp::Assign, v, &vty)?;
            cx.set_var(slot, v);
        }
    }
    Ok(Flow::Normal)
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
    let row = usize::try_from(set.pos).ok().and_then(|p| set.rows.get(p));
    let pk = match row.and_then(|r| r.last()) {
        Some(Value::Binary(pk)) => pk.clone(),
        _ => return Err(SqlError::new(16930, 16, 1, "The requested row is not in the fetch buffer.")),
    };
    if cx.host.get(&target.indexes[0].iref, &pk).map_err(super::host_err)?.is_none() {
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
            Some(Cursor { open: Some(s), dynamic, .. }) => i16::from(*dynamic || !s.rows.is_empty()),
        }
    }
}
