//! Requests other than a SQL batch: RPC calls (a procedure by name or by the well-known
//! ids TDS gives the system procedures) with typed parameters.

use types::{SqlType, Value};

/// The procedure an RPC names. TDS lets clients name system procedures by id
/// ([MS-TDS] 2.2.6.6 ProcID): 10 sp_executesql, 11 sp_prepare, 12 sp_execute,
/// 13 sp_prepexec, 14 sp_prepexecrpc, 15 sp_unprepare, 1-9 the cursor procedures.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcRef {
    Name(String),
    Id(u16),
}

impl ProcRef {
    /// The procedure's name for a well-known id ("sp_executesql" for 10, ...).
    pub fn name(&self) -> Option<&str> {
        Some(match self {
            ProcRef::Name(n) => n,
            ProcRef::Id(1) => "sp_cursor",
            ProcRef::Id(2) => "sp_cursoropen",
            ProcRef::Id(3) => "sp_cursorprepare",
            ProcRef::Id(4) => "sp_cursorexecute",
            ProcRef::Id(5) => "sp_cursorprepexec",
            ProcRef::Id(6) => "sp_cursorunprepare",
            ProcRef::Id(7) => "sp_cursorfetch",
            ProcRef::Id(8) => "sp_cursoroption",
            ProcRef::Id(9) => "sp_cursorclose",
            ProcRef::Id(10) => "sp_executesql",
            ProcRef::Id(11) => "sp_prepare",
            ProcRef::Id(12) => "sp_execute",
            ProcRef::Id(13) => "sp_prepexec",
            ProcRef::Id(14) => "sp_prepexecrpc",
            ProcRef::Id(15) => "sp_unprepare",
            ProcRef::Id(_) => return None,
        })
    }
}

/// One parameter of an RPC call.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcParam {
    /// With its `@`; None for a positional parameter.
    pub name: Option<String>,
    /// The type the client declared in the TYPE_INFO.
    pub ty: SqlType,
    pub value: Value,
    /// The fByRefValue status bit: an OUTPUT parameter.
    pub output: bool,
    /// A table-valued parameter's rows (then `ty` and `value` are placeholders: int NULL).
    pub table: Option<Box<TableArg>>,
}

/// A table-valued parameter's value ([MS-TDS] 2.2.5.5.5): the table type it names and
/// its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TableArg {
    /// The type's schema as the client named it (empty: the default schema).
    pub schema: String,
    pub type_name: String,
    /// The columns sent, with their ordinal in the table type (a column the client
    /// marked as defaulted is not sent and takes its default or identity value).
    pub ordinals: Vec<usize>,
    pub data: BulkLoad,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RpcCall {
    pub procedure: ProcRef,
    pub params: Vec<RpcParam>,
}

/// One column of a bulk-load message, as its COLMETADATA described it.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkColumn {
    pub name: String,
    /// The type the client sends the column's values in.
    pub ty: SqlType,
}

/// A bulk-load message ([MS-TDS] 2.2.6.1), decoded: the rows for the table a preceding
/// INSERT BULK statement named.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BulkLoad {
    pub columns: Vec<BulkColumn>,
    pub rows: Vec<Vec<Value>>,
}
