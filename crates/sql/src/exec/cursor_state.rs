//! The cursors a session holds (global) and a frame holds (LOCAL cursors and cursor
//! variables), with their declaration, their open result set and how a KEYSET or
//! DYNAMIC cursor finds its base table's rows. The statements over them are in
//! `cursor.rs`.

use std::sync::Arc;

use super::expr::{BExpr, Row};
use super::plan::{OutCol, Plan};
use super::table::TableInfo;
use crate::ast::CursorDefinition;
use crate::host::DbId;
use crate::results::ColumnInfo;

/// A cursor type, as declared or as OPEN made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Static,
    Keyset,
    Dynamic,
    FastForward,
}

/// One declared cursor.
#[derive(Debug)]
pub struct Cursor {
    pub(crate) name: String,
    /// Distinguishes cursors for @@CURSOR_ROWS (which names the last one opened).
    pub(crate) id: u64,
    pub(crate) definition: Arc<CursorDefinition>,
    pub(crate) scroll: bool,
    /// The type asked for (no type: DYNAMIC forward-only, KEYSET with SCROLL).
    pub(crate) kind: Kind,
    /// KEYSET or DYNAMIC written out with TYPE_WARNING: a conversion sends 16956.
    pub(crate) warn: bool,
    /// STATIC, INSENSITIVE, FAST_FORWARD, READ_ONLY or FOR READ ONLY: no positioned
    /// UPDATE/DELETE (16929).
    pub(crate) read_only: bool,
    pub(crate) open: Option<OpenSet>,
}

/// An open cursor: its columns, the type OPEN gave it, its rows and position.
#[derive(Debug)]
pub(crate) struct OpenSet {
    pub(crate) columns: Vec<ColumnInfo>,
    pub(crate) kind: Kind,
    pub(crate) rows: Rows,
    /// The one base table of an updatable cursor (WHERE CURRENT OF changes its rows).
    pub(crate) base: Option<(DbId, i32)>,
}

#[derive(Debug)]
pub(crate) enum Rows {
    /// STATIC: the rows, and the position (-1 before the first, `len` after the last).
    Static { rows: Vec<Row>, pos: i64 },
    /// KEYSET: the locators of the rows OPEN found, in order, and the position.
    Keyset { keys: Vec<Vec<u8>>, pos: i64, path: Arc<RowPath> },
    /// DYNAMIC: where the cursor stands, in the order of `path`.
    Dynamic { at: DynPos, path: Arc<RowPath> },
}

/// A dynamic cursor's position.
#[derive(Debug, Clone)]
pub(crate) enum DynPos {
    Before,
    At(Vec<u8>),
    After,
}

/// The session's cursor state: GLOBAL cursors and the connection-wide @@ values.
#[derive(Debug)]
pub struct SessionCursors {
    pub(crate) global: Vec<Cursor>,
    pub(crate) fetch_status: i32,
    pub(crate) cursor_rows: i32,
    pub(crate) last_opened: u64,
    pub(crate) next_id: u64,
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
    pub(crate) local: Vec<Cursor>,
    pub(crate) variables: Vec<(String, Option<Cursor>)>,
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

/// How a KEYSET or DYNAMIC cursor makes its row from a row of its base table: the
/// projection nodes of its plan (Project and Trim, top down), applied to the table row
/// with its locator in place of the scan; for a dynamic cursor also the WHERE clause
/// and the order. Variables read by the query are constants of OPEN time.
#[derive(Debug)]
pub(crate) struct RowPath {
    pub(crate) table: Arc<TableInfo>,
    /// Project and Trim nodes from the top of the plan down.
    pub(crate) steps: Vec<Plan>,
    /// The scan's columns: the table's and the locator.
    pub(crate) scan_cols: Vec<OutCol>,
    /// The WHERE clause's conjuncts over the table row.
    pub(crate) filter: Vec<BExpr>,
    /// A DYNAMIC cursor can follow this query: clustered index order, no TOP, the
    /// WHERE clause over the table row.
    pub(crate) dynamic: bool,
    /// The cursor's order is the clustered index's, descending.
    pub(crate) reverse: bool,
}
