//! A system view or table function as a query plan reads it ([`View`]): what a rows
//! function is called with, who may read the rows. Kept apart from the registry so that
//! the operators depend on this alone.

use types::SqlError;

use crate::exec::context::Cx;
use crate::exec::expr::Row;
use crate::host::DbId;

/// Who may read an object's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Everyone (the rows function may still filter by session, see [`visible`]).
    Public,
    /// VIEW SERVER STATE, which only sysadmin logins hold in Mesquite: Msg 300 otherwise.
    ServerState,
}

/// What a rows function is called with: the database the statement runs in, a table
/// function's arguments (NULL = None) and the columns its consumer reads.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub db: DbId,
    pub args: [Option<i32>; 2],
    /// The columns read (None: all). A rows function may leave the others NULL, and when
    /// none is read may return empty rows (the caller pads them): seed 002 inserts
    /// `TOP (1000) sysdatetime() FROM sys.all_columns`, a thousand rows of which nothing
    /// is read.
    pub need: Option<&'a [bool]>,
}

/// Produces an object's rows (each of its columns' width, or empty, see [`Call::need`])
/// when a query opens it.
pub type RowsFn = fn(&mut Cx, &Call<'_>) -> Result<Vec<Row>, SqlError>;

/// A system view or table function as a plan reads it: the object (its id and name,
/// who may read it, its rows function), the database whose catalog it reads, and a
/// table function's arguments. Compared by object, database and arguments.
#[derive(Clone)]
pub struct View {
    pub id: i32,
    pub name: &'static str,
    pub access: Access,
    pub rows: RowsFn,
    pub db: DbId,
    pub args: [Option<i32>; 2],
}

impl View {
    /// The view's rows for a consumer reading the `need` columns, after its access check.
    pub fn rows(&self, cx: &mut Cx, need: Option<&[bool]>) -> Result<Vec<Row>, SqlError> {
        if self.access == Access::ServerState && !cx.is_sysadmin() {
            return Err(view_server_state_denied());
        }
        (self.rows)(cx, &Call { db: self.db, args: self.args, need })
    }
}

impl PartialEq for View {
    fn eq(&self, other: &View) -> bool {
        (self.id, self.db, self.args) == (other.id, other.db, other.args)
    }
}

impl Eq for View {}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}) in database {}", self.name, self.id, self.db)
    }
}

/// Msg 300: a server-level object without VIEW SERVER STATE.
pub fn view_server_state_denied() -> SqlError {
    SqlError::new(300, 14, 1, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.")
}
