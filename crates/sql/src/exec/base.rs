//! What every part of the executor shares: the outcome of a statement ([`Flow`],
//! [`Abort`]), the errors that end a batch, host errors as SQL errors, names and module
//! definitions parsed back, the clock.

use types::SqlError;

use super::errors;
use crate::ast::{ExprKind, ObjectName, Statement};
use crate::host::{DbId, HostError};

pub const TEMPDB: DbId = 2;

/// What a statement tells its block to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    Normal,
    Break,
    Continue,
    Return(Option<i32>),
    Goto(String),
}

/// An error on its way up: `reported` once it has been sent to the client; `batch`
/// when it ends the batch.
#[derive(Debug)]
pub struct Abort {
    pub error: SqlError,
    pub reported: bool,
}

pub type ExecResult = Result<Flow, Abort>;

pub fn host_err(e: HostError) -> SqlError {
    match e {
        HostError::Sql(e) => e,
        HostError::Duplicate => SqlError::new(2601, 14, 1, "Cannot insert duplicate key row."),
    }
}

pub fn version_string() -> String {
    format!(
        "Microsoft SQL Server 2022 (RTM) - 16.0.1000.6 (X64) \n\tMesquite {} \n\tDeveloper Edition (64-bit) on Linux",
        env!("CARGO_PKG_VERSION")
    )
}

/// Is this error one that ends the batch (not just the statement)?
pub(crate) fn aborts_batch(e: &SqlError) -> bool {
    aborts_transaction(e) || matches!(e.number, 208 | 207 | 4104 | 137 | 2812 | 5333 | 5334 | 8631) || e.severity >= 20
}

/// Is this error one that ends the transaction with the batch, whatever SET XACT_ABORT
/// says: conversion failures, a deadlock, a trigger's ROLLBACK. Outside TRY it rolls the
/// open transaction back; inside TRY the transaction becomes uncommittable (XACT_STATE()
/// -1) and CATCH runs. Name-resolution errors (208, 207) end the batch but leave the
/// transaction as it was, as SQL Server's compile errors do.
pub(crate) fn aborts_transaction(e: &SqlError) -> bool {
    matches!(e.number, 245 | 8114 | 241 | 242 | 1205 | 3609)
}

/// Is this error one that ends only the current scope (procedure, dynamic SQL; the
/// batch at top level) when not caught: a name a statement compiled on first use could
/// not resolve (deferred name resolution). The caller goes on with @@ERROR set.
pub(crate) fn aborts_scope(e: &SqlError) -> bool {
    matches!(e.number, 207 | 208 | 209 | 4104)
}

/// 3930: a write, or COMMIT, in an uncommittable transaction.
pub(crate) fn uncommittable() -> SqlError {
    SqlError::new(
        3930,
        16,
        1,
        "The current transaction cannot be committed and cannot support operations that write to the log file. Roll back the transaction.",
    )
}

pub(crate) fn cancelled() -> SqlError {
    SqlError::new(3617, 25, 1, "The query was cancelled by the client (attention).")
}

pub fn now_utc() -> (u32, u64) {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    // Days from 0001-01-01 to 1970-01-01.
    const UNIX_EPOCH_DAYS: u64 = 719_162;
    let secs = d.as_secs();
    let days = UNIX_EPOCH_DAYS + secs / 86_400;
    let ticks = (secs % 86_400) * 10_000_000 + u64::from(d.subsec_nanos()) / 100;
    (days as u32, ticks)
}

pub fn parse_object_name(text: &str) -> Result<ObjectName, SqlError> {
    match crate::parse_expression(text).map(|e| e.kind) {
        Ok(ExprKind::Column(n)) => Ok(n),
        // Not an expression: a name with omitted leading parts (`..t`, `.dbo.t`).
        _ => crate::parser::parse_object_name_text(text).map_err(|_| errors::invalid_object(text)),
    }
}

/// Parses a module's stored definition (CREATE PROCEDURE/VIEW/FUNCTION ...).
pub fn parse_module(definition: &str) -> Result<Statement, SqlError> {
    let b = crate::parse_batch(definition)?;
    b.statements.into_iter().next().ok_or_else(|| errors::invalid_object("module"))
}
