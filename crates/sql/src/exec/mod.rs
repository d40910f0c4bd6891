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
//!   object is registered in `crate::system`); [`procs`]: procedures, dynamic SQL and RPC;
//!   `sequence`: sequence objects and NEXT VALUE FOR.
//!
//! # Error handling
//!
//! An error ends its statement; which errors also end the scope, the batch or the
//! transaction, and what TRY/CATCH and XACT_STATE() see, follows SQL Server's rules as
//! docs/compatibility.md's "Errors: what an error ends" lays them out: the classes are
//! `base::aborts_batch`, `base::aborts_transaction` and `base::aborts_scope`, applied
//! in `batch::exec_block` and the TRY/CATCH handler in `control`. Every data statement
//! is atomic: in autocommit mode it runs in its own transaction; in an explicit
//! transaction a savepoint before the statement undoes its partial work. `compile`
//! rejects what SQL Server's compiler does before a batch or module runs.

pub(crate) mod alter;
pub(crate) mod bulk;
pub(crate) mod catalog_procs;
pub(crate) mod catalog_views;
pub(crate) mod clr;
pub(crate) mod compile;
pub(crate) mod cursor;
pub(crate) mod cursor_state;
pub(crate) mod ddl;
pub(crate) mod ddl_dispatch;
pub(crate) mod dml;
pub(crate) mod dmv;
pub(crate) mod errors;
pub(crate) mod expr;
pub(crate) mod firing;
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
pub(crate) mod run;
pub(crate) mod security;
pub(crate) mod sequence;
pub(crate) mod spill;
pub(crate) mod sysviews;
pub(crate) mod table;
pub(crate) mod trigger;
pub(crate) mod tvf;
pub(crate) mod user_types;
pub(crate) mod window;
pub(crate) mod xml;

pub(crate) mod base;
pub(crate) mod batch;
pub(crate) mod context;
pub(crate) mod control;
pub(crate) mod session;
pub(crate) mod statements;

// What engine, tds, cli and the tests use; the rest of the executor is crate-private.
pub use base::{parse_object_name, ExecResult, Flow, TEMPDB};
pub use batch::end_session;
pub use batch::execute_batch;
pub use bulk::execute_bulk_load;
pub use memory::set_pool_bytes;
pub use plan_cache::parameterize;
pub use procs::execute_rpc;
pub use query::collation_named;
pub use security::can_access_database;
pub use session::{opt, LiveRequest, SessionState};
pub use table::{nc_stored_columns, stored_columns};
