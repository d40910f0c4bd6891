//! What the executor holds of triggers while statements run: the rows a statement hands
//! its triggers ([`Fired`]), the rows FOREIGN KEY cascades changed in a referencing
//! table ([`Cascaded`]) and what a running trigger's body sees ([`TriggerContext`]). A
//! table's triggers are in its [`TableInfo`]; firing them is `trigger.rs`.

use std::sync::Arc;

use types::{SqlError, Value};

use super::errors;
use super::expr::Row;
use super::plan::OutCol;
use super::table::{Event, TableInfo};
use crate::ast::ObjectName;

/// What a running trigger's body sees (in its frame).
#[derive(Debug)]
pub struct TriggerContext {
    pub trigger_id: i32,
    pub parent_id: i32,
    pub inserted: Arc<Vec<Row>>,
    pub deleted: Arc<Vec<Row>>,
    /// The parent's columns (the pseudo-tables' columns).
    pub cols: Vec<OutCol>,
    /// Per column: changed by the statement (UPDATE(col), COLUMNS_UPDATED()).
    pub updated: Vec<bool>,
    /// Per column: its column_id (COLUMNS_UPDATED()'s bit positions).
    pub column_ids: Vec<i32>,
}

/// The rows a statement hands its triggers.
pub struct Fired {
    pub inserted: Vec<Row>,
    pub deleted: Vec<Row>,
    /// Columns the statement sets (None: every column, as for INSERT).
    pub updated: Option<Vec<bool>>,
    pub row_count: u64,
}

/// Rows a FOREIGN KEY cascade (CASCADE, SET NULL, SET DEFAULT) changed in one
/// referencing table, for that table's AFTER triggers.
pub struct Cascaded {
    pub(crate) table: Arc<TableInfo>,
    pub(crate) event: Event,
    pub(crate) fired: Fired,
}

/// What a trigger body reads of its firing.
impl TriggerContext {
    /// `inserted` / `deleted` in the body's FROM: the rows and columns.
    pub fn pseudo_table(&self, name: &ObjectName) -> Option<(Arc<Vec<Row>>, Vec<OutCol>)> {
        if name.parts.len() != 1 {
            return None;
        }
        let n = &name.name().value;
        if n.eq_ignore_ascii_case("inserted") {
            Some((self.inserted.clone(), self.cols.clone()))
        } else if n.eq_ignore_ascii_case("deleted") {
            Some((self.deleted.clone(), self.cols.clone()))
        } else {
            None
        }
    }

    /// UPDATE(column).
    pub fn column_updated(&self, column: &str) -> Result<bool, SqlError> {
        let i = self
            .cols
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(column))
            .ok_or_else(|| errors::invalid_column(column))?;
        Ok(self.updated[i])
    }

    /// COLUMNS_UPDATED(): bit (column_id - 1) of the varbinary, low bit of byte 0 first.
    pub fn columns_updated(&self) -> Value {
        let max = self.column_ids.iter().copied().max().unwrap_or(0).max(1);
        let mut bytes = vec![0u8; (max as usize).div_ceil(8)];
        for (i, id) in self.column_ids.iter().enumerate() {
            if self.updated[i] && *id > 0 {
                let b = (*id - 1) as usize;
                bytes[b / 8] |= 1 << (b % 8);
            }
        }
        Value::Binary(bytes)
    }
}
