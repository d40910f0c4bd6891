//! What a system object is: its schema, name, id, kind, columns, parameters, access and
//! the function that produces its rows or runs it, and how a plan reads one ([`View`]).
//! The objects themselves are in the family files; `mod.rs` indexes them.

use types::{Length, SqlError, SqlType, Value};

use crate::exec::context::Cx;
use crate::exec::plan::OutCol;
use crate::host::DbId;

pub use super::view::{view_server_state_denied, Access, Call, RowsFn, View};

/// A column of a system view or table function.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub name: &'static str,
    pub ty: SqlType,
    pub nullable: bool,
}

/// A column (`nullable` as sys.all_columns shows it).
pub const fn col(name: &'static str, ty: SqlType, nullable: bool) -> Col {
    Col { name, ty, nullable }
}

pub const INT: SqlType = SqlType::Int;
pub const BIGINT: SqlType = SqlType::BigInt;
pub const SMALLINT: SqlType = SqlType::SmallInt;
pub const TINYINT: SqlType = SqlType::TinyInt;
pub const BIT: SqlType = SqlType::Bit;
pub const DATETIME: SqlType = SqlType::DateTime;
pub const GUID: SqlType = SqlType::UniqueIdentifier;

pub const fn nv(n: u16) -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(n) }
}

pub const fn vc(n: u16) -> SqlType {
    SqlType::VarChar { len: Length::Bounded(n) }
}

pub const fn vb(n: u16) -> SqlType {
    SqlType::VarBinary { len: Length::Bounded(n) }
}

/// The schema a system object belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schema {
    Sys,
    InformationSchema,
}

impl Schema {
    pub fn id(self) -> i32 {
        match self {
            Schema::Sys => 4,
            Schema::InformationSchema => 3,
        }
    }

    /// The schema's name as SQL Server spells it.
    pub fn name(self) -> &'static str {
        match self {
            Schema::Sys => "sys",
            Schema::InformationSchema => "INFORMATION_SCHEMA",
        }
    }

    pub fn of(name: &str) -> Option<Schema> {
        if name.eq_ignore_ascii_case("sys") {
            Some(Schema::Sys)
        } else if name.eq_ignore_ascii_case("INFORMATION_SCHEMA") {
            Some(Schema::InformationSchema)
        } else {
            None
        }
    }
}

/// What kind of object it is (sys.objects' type and type_desc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    View,
    TableFunction,
    Procedure,
    ExtendedProcedure,
}

impl ObjectKind {
    pub fn type_code(self) -> &'static str {
        match self {
            ObjectKind::View => "V",
            ObjectKind::TableFunction => "IF",
            ObjectKind::Procedure => "P",
            ObjectKind::ExtendedProcedure => "X",
        }
    }

    pub fn type_desc(self) -> &'static str {
        match self {
            ObjectKind::View => "VIEW",
            ObjectKind::TableFunction => "SQL_INLINE_TABLE_VALUED_FUNCTION",
            ObjectKind::Procedure => "SQL_STORED_PROCEDURE",
            ObjectKind::ExtendedProcedure => "EXTENDED_STORED_PROCEDURE",
        }
    }
}

/// Runs a system procedure with its arguments (and the line of the EXEC, for messages);
/// returns its status.
pub type ProcFn = fn(&mut Cx, &[crate::exec::run::ArgValue], u32) -> Result<i32, SqlError>;

/// An object's columns.
#[derive(Clone, Copy)]
pub enum Columns {
    /// As consecutive runs (views that share runs of columns list them once).
    Runs(&'static [&'static [Col]]),
    /// Built by a function (views whose column lists are assembled from shared parts in
    /// `exec/catalog_views.rs`).
    Built(fn() -> Vec<OutCol>),
}

/// What an object does.
#[derive(Clone, Copy)]
pub enum Body {
    /// A view's or table function's rows.
    Rows(RowsFn),
    /// A procedure.
    Proc(ProcFn),
}

/// A system view or table function.
pub struct SystemObject {
    /// Negative and stable: existing ids never change, a new object takes an unused one.
    pub id: i32,
    pub schema: Schema,
    pub name: &'static str,
    pub kind: ObjectKind,
    pub access: Access,
    pub columns: Columns,
    /// A table function's parameters (integer arguments, evaluated when the statement is
    /// bound).
    pub params: &'static [&'static str],
    pub body: Body,
}

impl SystemObject {
    /// Builds the columns (the registry's index keeps them: `SystemObject::columns`).
    pub(super) fn build_columns(&self) -> Vec<OutCol> {
        match self.columns {
            Columns::Runs(runs) => {
                runs.iter().flat_map(|run| run.iter()).map(|c| OutCol::new(c.name, c.ty, c.nullable)).collect()
            }
            Columns::Built(build) => build(),
        }
    }

    /// The object's rows, after its access check (none for a procedure).
    /// The object as a plan reads it (None for a procedure).
    pub fn view(&'static self, db: DbId, args: [Option<i32>; 2]) -> Option<View> {
        match self.body {
            Body::Rows(rows) => Some(View { id: self.id, name: self.name, access: self.access, rows, db, args }),
            Body::Proc(_) => None,
        }
    }

    /// The procedure this object is, if it is one.
    pub fn procedure(&self) -> Option<ProcFn> {
        match self.body {
            Body::Proc(f) => Some(f),
            Body::Rows(_) => None,
        }
    }
}

impl std::fmt::Debug for SystemObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}.{} ({})", self.schema, self.name, self.id)
    }
}

/// Whether the caller may see session `session_id`'s rows: its own, or every session
/// with VIEW SERVER STATE (sysadmin), as the session DMVs filter in SQL Server.
pub fn visible(cx: &Cx, session_id: i32) -> bool {
    session_id == cx.state.spid || cx.is_sysadmin()
}

// Values as the DMVs show them.

pub fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

pub fn big(v: i64) -> Value {
    Value::BigInt(v)
}

/// An unsigned count as bigint (saturating).
pub fn big_u(v: u64) -> Value {
    Value::BigInt(v.min(i64::MAX as u64) as i64)
}

/// An int column from a millisecond count (saturating, as SQL Server's int columns do
/// not wrap).
pub fn int_ms(v: i64) -> Value {
    Value::Int(v.clamp(0, i64::from(i32::MAX)) as i32)
}

/// A point in time as a datetime value (the executor's clock is UTC, as GETDATE()).
pub fn datetime_of(t: std::time::SystemTime) -> Value {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    // 1970-01-01 is day 25,567 after 1900-01-01; datetime ticks are 1/300 s.
    let days = (d.as_secs() / 86_400) as i32 + 25_567;
    let ms_of_day = (d.as_millis() % 86_400_000) as u64;
    Value::DateTime { days, ticks: (ms_of_day * 300 / 1000) as u32 }
}
