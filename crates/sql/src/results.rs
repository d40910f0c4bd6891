//! What running a batch produces, as a stream: result sets (column metadata, then rows),
//! statement completions with row counts, messages (PRINT, RAISERROR, errors),
//! environment changes (USE, transactions), return status and output parameters.
//!
//! The executor writes to a [`ResultSink`] as it runs; the TDS layer implements it by
//! encoding tokens (COLMETADATA, ROW/NBCROW, DONE/DONEINPROC/DONEPROC, INFO/ERROR,
//! ENVCHANGE, RETURNSTATUS, RETURNVALUE) into packets, `mesquite sql` by printing, and
//! tests by collecting ([`CollectSink`]). A sink that returns [`SinkError::Cancelled`]
//! (the client sent an attention, or went away) stops the batch at the next row or
//! statement.

use types::{SqlError, SqlType, Value};

/// One column of a result set, as COLMETADATA describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnInfo {
    /// Empty for an unnamed expression ("(No column name)" in SSMS).
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    pub identity: bool,
    /// Can the client update it through a cursor (always false for now).
    pub updatable: bool,
    /// A character column's collation when not the default (COLMETADATA carries its
    /// TDS bytes).
    pub collation: Option<types::Collation>,
}

impl ColumnInfo {
    pub fn new(name: impl Into<String>, ty: SqlType, nullable: bool) -> ColumnInfo {
        ColumnInfo { name: name.into(), ty, nullable, identity: false, updatable: false, collation: None }
    }
}

/// Where a completion comes from, which decides the DONE token SQL Server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoneKind {
    /// A statement of the batch itself (DONE).
    Statement,
    /// A statement inside a procedure, trigger or dynamic SQL (DONEINPROC).
    InProc,
    /// The end of a procedure called by RPC (DONEPROC).
    Proc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub kind: DoneKind,
    /// Rows affected or returned, when the statement has a count to report (not for
    /// DECLARE, SET, IF, ...; and not when SET NOCOUNT ON hides it).
    pub row_count: Option<u64>,
    /// The statement ended in an error (DONE_ERROR).
    pub error: bool,
    /// A transaction is open and in an uncommittable state, or other server states the
    /// DONE status carries; reserved.
    pub in_xact: bool,
}

/// A message: informational (PRINT, RAISERROR severity <= 10) or an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub error: SqlError,
    /// true: an INFO token (severity 0-10); false: an ERROR token.
    pub info: bool,
}

/// ENVCHANGE events the client is told about.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvChange {
    Database {
        old: String,
        new: String,
    },
    Language {
        old: String,
        new: String,
    },
    /// The SQL collation (TDS ENVCHANGE type 7): the current database's collation,
    /// sent when USE changes it.
    Collation {
        old: types::Collation,
        new: types::Collation,
    },
    /// Begin of a transaction, with the transaction descriptor the client sends back in
    /// ALL_HEADERS.
    BeginTransaction {
        descriptor: u64,
    },
    CommitTransaction {
        descriptor: u64,
    },
    RollbackTransaction {
        descriptor: u64,
    },
}

/// An OUTPUT parameter's value at the end of a procedure called by RPC.
#[derive(Debug, Clone, PartialEq)]
pub struct ReturnValue {
    /// With its `@`.
    pub name: String,
    /// 0-based position of the parameter in the RPC call (what drivers index by).
    pub ordinal: u16,
    pub ty: SqlType,
    pub value: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkError {
    /// The client cancelled (attention) or disconnected.
    Cancelled,
}

pub type SinkResult = Result<(), SinkError>;

/// The consumer of a batch's results. Calls arrive in protocol order: `columns` opens a
/// result set, `row` repeats, a `done` closes the statement.
pub trait ResultSink {
    fn columns(&mut self, columns: &[ColumnInfo]) -> SinkResult;
    fn row(&mut self, row: &[Value]) -> SinkResult;
    fn done(&mut self, done: Done) -> SinkResult;
    fn message(&mut self, message: &Message) -> SinkResult;
    fn env_change(&mut self, change: &EnvChange) -> SinkResult;
    fn return_status(&mut self, status: i32) -> SinkResult;
    fn return_value(&mut self, value: &ReturnValue) -> SinkResult;
    /// RAISERROR ... WITH NOWAIT and PRINT in long batches: send what is buffered now.
    fn flush(&mut self) -> SinkResult {
        Ok(())
    }
    /// The command of the statement whose DONE comes next: the DONE token's CurCmd
    /// (see [`command_code`]). mssql-jdbc reports an update count only from the DONE of
    /// a DML command.
    fn command(&mut self, _cmd: u16) {}
}

/// SQL Server's command codes for the DONE token's CurCmd ([MS-TDS] leaves them to the
/// server; drivers know them): 0 for statements without one.
pub mod command_code {
    pub const SELECT: u16 = 0xC1;
    pub const SELECT_INTO: u16 = 0xC2;
    pub const INSERT: u16 = 0xC3;
    pub const DELETE: u16 = 0xC4;
    pub const UPDATE: u16 = 0xC5;
    /// MERGE (SqlClient's and mssql-jdbc's TDS constants).
    pub const MERGE: u16 = 0x117;
    pub const CREATE_TABLE: u16 = 0xC6;
    pub const DROP_TABLE: u16 = 0xC7;
    pub const CREATE_INDEX: u16 = 0xC8;
    pub const DROP_INDEX: u16 = 0xC9;
    pub const CREATE_DATABASE: u16 = 0xCB;
    pub const DROP_DATABASE: u16 = 0xCC;
    pub const CREATE_VIEW: u16 = 0xCF;
    pub const DROP_VIEW: u16 = 0xD0;
    pub const ALTER_TABLE: u16 = 0xD8;
    pub const CREATE_PROCEDURE: u16 = 0xDE;
    pub const DROP_PROCEDURE: u16 = 0xDF;
    pub const EXECUTE: u16 = 0xE0;
    pub const CREATE_FUNCTION: u16 = 0xB2;
    pub const DROP_FUNCTION: u16 = 0xB3;
    pub const DROP_SCHEMA: u16 = 0xB0;
    pub const CREATE_SCHEMA: u16 = 0x14A;
}

/// One event, as [`CollectSink`] records them.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Columns(Vec<ColumnInfo>),
    Row(Vec<Value>),
    Done(Done),
    Message(Message),
    EnvChange(EnvChange),
    ReturnStatus(i32),
    ReturnValue(ReturnValue),
}

/// A sink that keeps everything (tests, `INSERT ... EXEC`).
#[derive(Debug, Default)]
pub struct CollectSink {
    pub events: Vec<Event>,
}

impl CollectSink {
    /// The rows of every result set, in order.
    pub fn result_sets(&self) -> Vec<(Vec<ColumnInfo>, Vec<Vec<Value>>)> {
        let mut sets: Vec<(Vec<ColumnInfo>, Vec<Vec<Value>>)> = Vec::new();
        for e in &self.events {
            match e {
                Event::Columns(c) => sets.push((c.clone(), Vec::new())),
                Event::Row(r) => {
                    if let Some(last) = sets.last_mut() {
                        last.1.push(r.clone());
                    }
                }
                _ => {}
            }
        }
        sets
    }

    /// The errors (not informational messages), in order.
    pub fn errors(&self) -> Vec<SqlError> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Message(m) if !m.info => Some(m.error.clone()),
                _ => None,
            })
            .collect()
    }
}

impl ResultSink for CollectSink {
    fn columns(&mut self, columns: &[ColumnInfo]) -> SinkResult {
        self.events.push(Event::Columns(columns.to_vec()));
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> SinkResult {
        self.events.push(Event::Row(row.to_vec()));
        Ok(())
    }
    fn done(&mut self, done: Done) -> SinkResult {
        self.events.push(Event::Done(done));
        Ok(())
    }
    fn message(&mut self, message: &Message) -> SinkResult {
        self.events.push(Event::Message(message.clone()));
        Ok(())
    }
    fn env_change(&mut self, change: &EnvChange) -> SinkResult {
        self.events.push(Event::EnvChange(change.clone()));
        Ok(())
    }
    fn return_status(&mut self, status: i32) -> SinkResult {
        self.events.push(Event::ReturnStatus(status));
        Ok(())
    }
    fn return_value(&mut self, value: &ReturnValue) -> SinkResult {
        self.events.push(Event::ReturnValue(value.clone()));
        Ok(())
    }
}
