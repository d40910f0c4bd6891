//! The executor: runs a parsed batch against a [`Host`], writing results to a
//! [`ResultSink`]. (Being written: see docs/roadmap.md.)

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::host::{DbId, Host};
use crate::request::RpcCall;
use crate::results::ResultSink;

/// A session's state that outlives batches: current database, SET options, the
/// transaction nesting count, temp tables, prepared statements.
#[derive(Debug)]
pub struct SessionState {
    pub database: DbId,
    pub spid: i32,
    /// Set by the connection when the client sends an attention; checked between rows
    /// and statements.
    pub cancel: Arc<AtomicBool>,
}

impl SessionState {
    pub fn new(database: DbId, spid: i32) -> SessionState {
        SessionState { database, spid, cancel: Arc::new(AtomicBool::new(false)) }
    }
}

/// Parses and runs one batch. Errors go to the sink as messages (the batch goes on or
/// stops as SQL Server's abort rules say); this never fails itself.
pub fn execute_batch(state: &mut SessionState, host: &mut dyn Host, text: &str, sink: &mut dyn ResultSink) {
    let _ = (state, host, text, sink);
}

/// Runs an RPC request (sp_executesql, sp_prepare/sp_execute/sp_prepexec/sp_unprepare,
/// or a procedure by name) with typed parameters; OUTPUT parameters come back as
/// RETURNVALUE events, the return code as RETURNSTATUS, then DONEPROC.
pub fn execute_rpc(state: &mut SessionState, host: &mut dyn Host, call: &RpcCall, sink: &mut dyn ResultSink) {
    let _ = (state, host, call, sink);
}
