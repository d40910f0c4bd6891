//! The executor: runs a parsed batch against a [`Host`], writing results to a
//! [`ResultSink`].
//!
//! - `session`: [`SessionState`], what outlives a batch; `context`: [`Cx`], one
//!   request's context; `batch`: running a batch (statement properties, atomic
//!   statements, queries); `control`: control-of-flow and session statements.
//! - [`query`]: binder and planner for queries; [`plan`]: plans and operators;
//!   [`expr`]: bound expressions; [`window`]: window functions; [`table`]: row and index
//!   layout of tables; [`dml`] and [`ddl`]: statements that change data and schema;
//!   [`sysviews`] and [`catalog_views`]: the rows of the catalog views (every system
//!   object is registered in `crate::system`); [`procs`]: procedures, dynamic SQL and RPC.
//!
//! # Error handling (SQL Server's rules, simplified)
//!
//! An error ends the statement; the batch goes on with the next statement, except for
//! errors that abort the batch in SQL Server (conversion errors 245/8114, 208 and 207 at
//! run time, deadlock 1205, any error under SET XACT_ABORT ON), which stop it. Inside
//! BEGIN TRY the error goes to the CATCH block instead and is not sent to the client.
//! Every data statement is atomic: in autocommit mode it runs in its own transaction; in
//! an explicit transaction a savepoint before the statement undoes its partial work.

pub(crate) mod alter;
pub(crate) mod bulk;
pub(crate) mod catalog_procs;
pub(crate) mod catalog_views;
pub(crate) mod clr;
pub(crate) mod cursor;
pub(crate) mod ddl;
pub(crate) mod dml;
pub(crate) mod dmv;
pub(crate) mod errors;
pub(crate) mod expr;
pub(crate) mod forclause;
pub(crate) mod index_spool;
pub(crate) mod language;
pub(crate) mod memory;
pub(crate) mod merge;
pub(crate) mod openjson;
pub(crate) mod parse_cache;
pub(crate) mod pivot;
pub(crate) mod plan;
pub(crate) mod plan_cache;
pub(crate) mod procs;
pub(crate) mod query;
pub(crate) mod security;
pub(crate) mod spill;
pub(crate) mod sysviews;
pub(crate) mod table;
pub(crate) mod trigger;
pub(crate) mod tvf;
pub(crate) mod user_types;
pub(crate) mod window;
pub(crate) mod xml;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use crate::ast::*;
use crate::catalog::{Catalog, Object, ObjectBody};
use crate::host::{DbId, Host, HostError, IndexRef, Isolation};
use crate::request::RpcCall;
use crate::results::{ColumnInfo, Done, DoneKind, EnvChange, Message, ResultSink};
use crate::scalar::{convert, FnContext};
use expr::{BExpr, Row, SysFn};
use plan::{open, Plan, ScanNode};
use query::{Binder, Scope};
use table::{IndexInfo, TableInfo};

mod batch;
mod context;
mod control;
mod session;
pub(crate) mod statements;
pub use batch::*;
pub use context::*;
use control::*;
pub use session::*;

// What engine, tds, cli and the tests use; the rest of the executor is crate-private.
pub use bulk::execute_bulk_load;
pub use dmv::LiveRequest;
pub use memory::set_pool_bytes;
pub use plan_cache::parameterize;
pub use query::collation_named;
pub use security::can_access_database;
pub use table::{nc_stored_columns, stored_columns};

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
fn aborts_batch(e: &SqlError) -> bool {
    matches!(e.number, 245 | 8114 | 241 | 242 | 1205 | 208 | 207 | 4104 | 137 | 2812 | 5333 | 5334 | 8631 | 3609)
        || e.severity >= 20
}

/// The column descriptions of a plan's result set.
pub fn column_info(plan: &Plan) -> Vec<ColumnInfo> {
    plan.columns()
        .iter()
        .map(|c| ColumnInfo { collation: c.collation, ..ColumnInfo::new(c.name.clone(), c.ty, c.nullable) })
        .collect()
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

pub fn server_property(name: &str, cx: &Cx) -> Value {
    let s = |v: &str| Value::String(v.to_string());
    match name.to_ascii_lowercase().as_str() {
        "productversion" => s("16.0.1000.6"),
        "productlevel" => s("RTM"),
        "edition" => s("Developer Edition (64-bit)"),
        "engineedition" => Value::Int(3),
        "servername" | "machinename" => s(&cx.host.server_name()),
        "instancename" => Value::Null,
        "collation" => s("SQL_Latin1_General_CP1_CI_AS"),
        "isclustered" | "ishadrenabled" | "isintegratedsecurityonly" | "issingleuser" => Value::Int(0),
        "productmajorversion" => s("16"),
        "productminorversion" => s("0"),
        "processid" => Value::Int(std::process::id() as i32),
        _ => Value::Null,
    }
}

/// ALTER DATABASE ... COLLATE: refused for a system database (3708) and an unknown name
/// (448); then each schema-bound object that depends on the database collation (CHECK
/// constraints, computed columns, modules WITH SCHEMABINDING) is a 5075, and other
/// sessions in the database (the host's 5030) are refused, both followed by 5072. Existing
/// columns keep their collations.
fn alter_database_collation(cx: &mut Cx, db: DbId, a: &AlterDatabase, name: &str) -> Result<(), SqlError> {
    let db_name = cx.db_name(db).unwrap_or_default();
    if db <= 4 {
        // The number and text follow 3708's template ("Cannot %S_MSG the %S_MSG '%.*ls'
        // because it is a system %S_MSG."); the state is not checked against a server.
        return Err(SqlError::new(
            3708,
            16,
            5,
            format!("Cannot alter the database '{db_name}' because it is a system database."),
        ));
    }
    let collation = query::collation_named(name)?;
    let failed = |name: &str| {
        SqlError::new(
            5072,
            16,
            1,
            format!("ALTER DATABASE failed. The default collation of database '{db_name}' cannot be set to {name}."),
        )
    };
    if collation == cx.collation_of(db) {
        return Ok(());
    }
    // What depends on the collation, in object id order (a computed column under its
    // table's id). A check constraint is "object" and a computed column "column
    // 'table.column'", as SQL Server names them; "object" for a schema-bound module is
    // assumed, not checked against a server.
    let mut deps: Vec<(i32, String)> = Vec::new();
    {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        for o in g.objects.values() {
            match &o.body {
                ObjectBody::Table(t) => {
                    for c in t.columns.iter().filter(|c| c.computed.is_some()) {
                        deps.push((o.id, format!("column '{}.{}'", o.name, c.name)));
                    }
                    for ck in &t.checks {
                        deps.push((ck.object_id, format!("object '{}'", ck.name)));
                    }
                }
                _ => {
                    let bound = catalog_views::module_signature(o).is_some_and(|(_, _, opts)| {
                        opts.iter().any(|x| matches!(x, crate::ast::ModuleOption::SchemaBinding))
                    });
                    if bound {
                        deps.push((o.id, format!("object '{}'", o.name)));
                    }
                }
            }
        }
    }
    deps.sort_by_key(|d| d.0);
    if !deps.is_empty() {
        for (_, what) in deps {
            cx.preceding.push(SqlError::new(
                5075,
                16,
                1,
                format!("The {what} is dependent on database collation. The database collation cannot be changed if a schema-bound object depends on it. Remove the dependencies on the database collation and then retry the operation."),
            ));
        }
        return Err(failed(name));
    }
    match cx.host.alter_database(db, a) {
        Ok(()) => Ok(()),
        Err(crate::host::HostError::Sql(e)) if e.number == 5030 => {
            cx.preceding.push(e);
            Err(failed(name))
        }
        Err(e) => Err(host_err(e)),
    }
}

pub fn database_property(db: DbId, prop: &str, cx: &Cx) -> Value {
    let Some(info) = cx.host.databases().into_iter().find(|d| d.id == db) else {
        return Value::Null;
    };
    let s = |v: &str| Value::String(v.to_string());
    match prop.to_ascii_lowercase().as_str() {
        "status" => s(info.state),
        "recovery" => s(info.recovery_model),
        "updateability" => s(if info.read_only { "READ_ONLY" } else { "READ_WRITE" }),
        "collation" => s(&info.collation.name()),
        "useraccess" => s("MULTI_USER"),
        "version" => Value::Int(957),
        _ => Value::Null,
    }
}

/// Runs an RPC request (sp_executesql, sp_prepare/sp_execute/sp_prepexec/sp_unprepare,
/// or a procedure by name) with typed parameters; OUTPUT parameters come back as
/// RETURNVALUE events, the return code as RETURNSTATUS, then DONEPROC.
pub fn execute_rpc(state: &mut SessionState, host: &mut dyn Host, call: &RpcCall, sink: &mut dyn ResultSink) {
    state.cancel.store(false, AtomicOrdering::Relaxed);
    state.bulk_target = None;
    let mut cx = Cx::new(host, state, sink);
    procs::rpc(&mut cx, call);
}

// Cache invalidation: SharedCatalog carries a version bumped on every change.
impl crate::catalog::SharedCatalog {
    pub fn version(&self) -> u64 {
        self.version.load(AtomicOrdering::Acquire)
    }

    pub fn bump(&self) {
        self.version.fetch_add(1, AtomicOrdering::AcqRel);
    }
}

/// A scan of a whole table (for DML targets with the locator column).
pub fn table_scan(t: Arc<TableInfo>) -> Plan {
    Plan::Scan(ScanNode::all(t, false))
}

#[allow(dead_code)]
fn _index_info_is_used(_: &IndexInfo) {}
