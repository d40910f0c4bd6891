//! The executor: runs a parsed batch against a [`Host`], writing results to a
//! [`ResultSink`].
//!
//! - [`query`]: binder and planner for queries; [`plan`]: plans and operators;
//!   [`expr`]: bound expressions; [`window`]: window functions; [`table`]: row and index
//!   layout of tables; [`dml`] and [`ddl`]: statements that change data and schema;
//!   [`sysviews`]: catalog views and DMVs; [`procs`]: procedures, dynamic SQL and RPC.
//!
//! # Error handling (SQL Server's rules, simplified)
//!
//! An error ends the statement; the batch goes on with the next statement, except for
//! errors that abort the batch in SQL Server (conversion errors 245/8114, 208 and 207 at
//! run time, deadlock 1205, any error under SET XACT_ABORT ON), which stop it. Inside
//! BEGIN TRY the error goes to the CATCH block instead and is not sent to the client.
//! Every data statement is atomic: in autocommit mode it runs in its own transaction; in
//! an explicit transaction a savepoint before the statement undoes its partial work.

pub mod alter;
pub mod bulk;
pub mod catalog_procs;
pub mod catalog_views;
pub mod clr;
pub mod cursor;
pub mod ddl;
pub mod dml;
pub mod dmv;
pub mod errors;
pub mod expr;
pub mod forclause;
pub mod index_spool;
pub mod language;
pub mod memory;
pub mod merge;
pub mod openjson;
pub mod parse_cache;
pub mod pivot;
pub mod plan;
pub mod plan_cache;
pub mod procs;
pub mod query;
pub mod security;
pub mod spill;
pub mod sysviews;
pub mod table;
pub mod trigger;
pub mod tvf;
pub mod user_types;
pub mod window;
pub mod xml;

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

pub const TEMPDB: DbId = 2;

/// A session's state that outlives batches: current database, SET options, the
/// transaction nesting count, temp tables, prepared statements.
#[derive(Debug)]
pub struct SessionState {
    /// EXECUTE AS contexts, innermost last: (login, member of sysadmin).
    pub impersonation: Vec<(String, bool)>,
    pub database: DbId,
    pub spid: i32,
    /// Set by the connection when the client sends an attention; checked between rows
    /// and statements.
    pub cancel: Arc<AtomicBool>,
    pub trancount: u32,
    pub xact_abort: bool,
    /// SET IMPLICIT_TRANSACTIONS ON: a data statement outside a transaction begins one
    /// (what JDBC's setAutoCommit(false) sends).
    pub implicit_transactions: bool,
    pub nocount: bool,
    /// The ON/OFF options @@OPTIONS reports that have no field of their own (the
    /// `opt::` bits); NOCOUNT, XACT_ABORT and IMPLICIT_TRANSACTIONS are the fields above.
    pub options: u32,
    pub lock_timeout: i64,
    pub isolation: Isolation,
    pub datefirst: u8,
    /// SET LANGUAGE: the language's name as sys.syslanguages has it.
    pub language: String,
    pub showplan: bool,
    /// SET FMTONLY ON: queries send their column metadata only, data changes are
    /// skipped (what FreeTDS's BCP asks before a bulk copy).
    pub fmtonly: bool,
    pub host_name: String,
    pub app_name: String,
    /// SET IDENTITY_INSERT t ON: (database, object id).
    pub identity_insert: Option<(DbId, i32)>,
    /// The last INSERT BULK, waiting for its bulk-load message (any other request drops it).
    pub bulk_target: Option<Box<InsertBulk>>,
    pub last_identity: Option<i128>,
    pub rowcount: i64,
    /// @@ERROR: set by [`Cx::set_error`], cleared when a statement completes without
    /// setting it ([`resets_error`]).
    pub error: i32,
    /// XACT_STATE() = -1: the transaction can only be rolled back.
    pub doomed: bool,
    /// The statement running, for sys.dm_exec_requests (the host shares it).
    pub live: Arc<dmv::LiveRequest>,
    /// #temp tables: user name (lower-case) -> internal name in tempdb.
    pub temp_tables: HashMap<String, String>,
    /// Batches this session sent before, parsed.
    pub parse_cache: parse_cache::ParseCache,
    /// Plans of simple parameterized SELECTs (see plan_cache.rs).
    pub plan_cache: plan_cache::PlanCache,
    pub prepared: HashMap<i32, (String, String)>,
    pub next_handle: i32,
    pub descriptor: u64,
    next_descriptor: u64,
    /// Databases whose catalog changed in the current transaction (reloaded on rollback).
    catalog_dirty: HashSet<DbId>,
    table_cache: HashMap<(DbId, i32), (u64, Arc<TableInfo>)>,
    /// A view's triggers (with their parsed bodies), by catalog version, as a table's
    /// live in its cached `TableInfo`.
    view_triggers: HashMap<(DbId, i32), (u64, ViewTriggers)>,
    /// Table names this session resolved lately (see [`Cx::resolve_table_cached`]).
    name_cache: Vec<NameEntry>,
    next_temp: u64,
    /// GLOBAL cursors, @@FETCH_STATUS, @@CURSOR_ROWS.
    pub cursors: cursor::SessionCursors,
}

/// A view's triggers, shared by the statements that fire them.
type ViewTriggers = Arc<[trigger::TriggerInfo]>;

/// A table name as resolved: where the name pointed, at which catalog version.
#[derive(Debug)]
struct NameEntry {
    db: DbId,
    schema_id: i32,
    /// The object name as written (matched ignoring case, as the catalog matches).
    name: String,
    version: u64,
    table: Arc<ResolvedTable>,
}

/// A table found by [`Cx::resolve_table_cached`].
#[derive(Debug, Clone)]
pub struct ResolvedTable {
    pub db: DbId,
    pub object_id: i32,
    pub schema_id: i32,
    /// The name in the catalog.
    pub name: String,
    pub info: Arc<TableInfo>,
}

/// Names kept in a session's name cache; a statement names few tables, and a linear
/// search of this many is cheaper than hashing a case-folded name.
const NAME_CACHE_ENTRIES: usize = 16;

impl SessionState {
    pub fn new(database: DbId, spid: i32) -> SessionState {
        SessionState {
            database,
            spid,
            cancel: Arc::new(AtomicBool::new(false)),
            trancount: 0,
            xact_abort: false,
            implicit_transactions: false,
            nocount: false,
            options: opt::DEFAULT,
            lock_timeout: -1,
            isolation: Isolation::ReadCommitted,
            datefirst: 7,
            language: "us_english".into(),
            showplan: false,
            fmtonly: false,
            host_name: String::new(),
            app_name: String::new(),
            identity_insert: None,
            bulk_target: None,
            last_identity: None,
            rowcount: 0,
            error: 0,
            doomed: false,
            live: Arc::new(dmv::LiveRequest::default()),
            temp_tables: HashMap::new(),
            parse_cache: parse_cache::ParseCache::default(),
            plan_cache: plan_cache::PlanCache::default(),
            prepared: HashMap::new(),
            next_handle: 1,
            descriptor: 0,
            next_descriptor: 1,
            catalog_dirty: HashSet::new(),
            table_cache: HashMap::new(),
            view_triggers: HashMap::new(),
            name_cache: Vec::new(),
            next_temp: 1,
            impersonation: Vec::new(),
            cursors: cursor::SessionCursors::default(),
        }
    }
}

/// @@OPTIONS bits (SQL Server's "user options" values).
pub mod opt {
    pub const DISABLE_DEF_CNST_CHK: u32 = 1;
    pub const IMPLICIT_TRANSACTIONS: u32 = 2;
    pub const CURSOR_CLOSE_ON_COMMIT: u32 = 4;
    pub const ANSI_WARNINGS: u32 = 8;
    pub const ANSI_PADDING: u32 = 16;
    pub const ANSI_NULLS: u32 = 32;
    pub const ARITHABORT: u32 = 64;
    pub const ARITHIGNORE: u32 = 128;
    pub const QUOTED_IDENTIFIER: u32 = 256;
    pub const NOCOUNT: u32 = 512;
    pub const ANSI_NULL_DFLT_ON: u32 = 1024;
    pub const ANSI_NULL_DFLT_OFF: u32 = 2048;
    pub const CONCAT_NULL_YIELDS_NULL: u32 = 4096;
    pub const NUMERIC_ROUNDABORT: u32 = 8192;
    pub const XACT_ABORT: u32 = 16384;
    /// What a driver's session starts with (@@OPTIONS 5432): the ISO options drivers
    /// turn on at login; ARITHABORT stays OFF for applications (SSMS sets it ON itself).
    pub const DEFAULT: u32 =
        ANSI_WARNINGS | ANSI_PADDING | ANSI_NULLS | QUOTED_IDENTIFIER | ANSI_NULL_DFLT_ON | CONCAT_NULL_YIELDS_NULL;

    /// The bits one SET option name stands for (ANSI_DEFAULTS is several).
    pub fn of(name: &str) -> u32 {
        match name {
            "DISABLE_DEF_CNST_CHK" => DISABLE_DEF_CNST_CHK,
            "CURSOR_CLOSE_ON_COMMIT" => CURSOR_CLOSE_ON_COMMIT,
            "ANSI_WARNINGS" => ANSI_WARNINGS,
            "ANSI_PADDING" => ANSI_PADDING,
            "ANSI_NULLS" => ANSI_NULLS,
            "ARITHABORT" => ARITHABORT,
            "ARITHIGNORE" => ARITHIGNORE,
            "QUOTED_IDENTIFIER" => QUOTED_IDENTIFIER,
            "ANSI_NULL_DFLT_ON" => ANSI_NULL_DFLT_ON,
            "ANSI_NULL_DFLT_OFF" => ANSI_NULL_DFLT_OFF,
            "CONCAT_NULL_YIELDS_NULL" => CONCAT_NULL_YIELDS_NULL,
            "NUMERIC_ROUNDABORT" => NUMERIC_ROUNDABORT,
            // IMPLICIT_TRANSACTIONS is set through its own field by the caller.
            "ANSI_DEFAULTS" => {
                ANSI_NULLS
                    | ANSI_NULL_DFLT_ON
                    | ANSI_PADDING
                    | ANSI_WARNINGS
                    | CURSOR_CLOSE_ON_COMMIT
                    | QUOTED_IDENTIFIER
            }
            _ => 0,
        }
    }
}

impl SessionState {
    /// @@OPTIONS: the session's ON/OFF SET options as bits.
    pub fn options_bits(&self) -> u32 {
        let mut o = self.options;
        for (on, bit) in [
            (self.nocount, opt::NOCOUNT),
            (self.xact_abort, opt::XACT_ABORT),
            (self.implicit_transactions, opt::IMPLICIT_TRANSACTIONS),
        ] {
            if on {
                o |= bit;
            }
        }
        o
    }

    /// True when the SET option (an `opt::` bit kept in `options`) is ON.
    pub fn option(&self, bit: u32) -> bool {
        self.options & bit != 0
    }
}

/// A variable of a frame.
#[derive(Debug, Clone)]
pub struct Var {
    pub name: String,
    pub ty: SqlType,
    pub value: Value,
    /// Table variables: the table in tempdb.
    pub table: Option<Arc<TableInfo>>,
    /// A table-valued parameter: READONLY, so no DML may target it (10700).
    pub readonly: bool,
}

/// A variable scope: the batch, or one procedure / function / dynamic SQL call.
#[derive(Debug, Default)]
pub struct Frame {
    pub vars: Vec<Var>,
    pub proc_name: Option<String>,
    pub proc_id: i32,
    pub scope_identity: Option<i128>,
    /// Table variables created in this frame (dropped when it ends).
    pub table_vars: Vec<Arc<TableInfo>>,
    pub done_kind: Option<DoneKind>,
    /// Inside a scalar function: its return type.
    pub function_returns: Option<SqlType>,
    /// A function's body (scalar or multi-statement): it may not EXEC a procedure (557).
    pub in_function: bool,
    /// A procedure's or function's body: objects it uses are reached through its
    /// ownership chain (see security.rs).
    pub in_module: bool,
    /// LOCAL cursors and cursor variables (they end with the frame).
    pub cursors: cursor::LocalCursors,
    /// A trigger's body: its `inserted` and `deleted` rows and updated columns.
    pub trigger: Option<Arc<trigger::TriggerContext>>,
}

/// The execution context of one request.
pub struct Cx<'a> {
    pub host: &'a mut dyn Host,
    pub state: &'a mut SessionState,
    pub sink: &'a mut dyn ResultSink,
    pub outer: Vec<Row>,
    pub fcx: FnContext,
    pub frames: Vec<Frame>,
    pub work_tables: HashMap<usize, Vec<Row>>,
    /// The rows of the statement's spools so far (`Plan::Spool`), by spool id; emptied
    /// before every statement.
    pub spools: HashMap<usize, plan::Spooled>,
    /// The values of the variables a spool read when it was filled, by spool id.
    pub spool_vars: HashMap<usize, Vec<Value>>,
    pub max_recursion: u32,
    pub pending_sets: Option<Vec<Vec<bool>>>,
    pub pending_assigns: Vec<(String, AssignOp)>,
    /// The errors being handled by enclosing CATCH blocks (ERROR_NUMBER() reads the last).
    pub catch_errors: Vec<SqlError>,
    pub try_depth: u32,
    /// The frame depth of each enclosing TRY block.
    pub try_frames: Vec<usize>,
    /// The table a DML statement changes: its scans carry the row locator.
    pub dml_target: Option<(DbId, i32)>,
    /// The text the current statements were parsed from (module definitions are cut
    /// from it).
    pub source: Arc<str>,
    /// A scalar function's RETURN value.
    pub function_result: Option<Value>,
    /// Views being expanded (their objects are reached through the ownership chain).
    pub view_depth: u32,
    /// The running statement's DONE command code (see [`command_of`]).
    pub cur_cmd: u16,
    /// An RPC's OUTPUT parameters, sent after its RETURNSTATUS ([`procs::rpc`]).
    pub rpc_outputs: Vec<crate::results::ReturnValue>,
    /// The plan cache's hold on the batch's one query (see plan_cache.rs).
    pub plan_slot: Option<plan_cache::PlanSlot>,
    /// The literals of a batch the parse cache matched by shape: its INSERT statements
    /// take their VALUES from here, not from the kept batch (see parse_cache.rs).
    pub literals: Option<parse_cache::Literals>,
    pub(super) null_warned: bool,
    /// Errors SQL Server reports ahead of a statement's own error (5074 before 4922,
    /// 8114 before 473): [`report`] sends them first, at the same line.
    pub preceding: Vec<SqlError>,
    /// A bulk load without CHECK_CONSTRAINTS: CHECK and FOREIGN KEY constraints are not
    /// checked.
    pub bulk_unchecked: bool,
    /// Counts [`Cx::set_error`] calls: a statement that completes with the count it
    /// started with clears @@ERROR.
    pub error_sets: u32,
    /// Rows FOREIGN KEY cascades changed in referencing tables with AFTER triggers,
    /// collected while a statement writes (see [`trigger::Cascaded`]).
    pub cascades: Vec<trigger::Cascaded>,
    /// The values and types vectors of the last one-row INSERT, reused by the next
    /// (see `dml::insert_into`).
    pub(super) spare_row: Row,
    pub(super) spare_types: Vec<SqlType>,
    /// The primary key buffer of `TableInfo::insert_row`.
    pub(super) spare_key: Vec<u8>,
    /// The request's query memory grant (see [`memory`]).
    pub memory: memory::Grant,
}

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

impl<'a> Cx<'a> {
    pub fn new(host: &'a mut dyn Host, state: &'a mut SessionState, sink: &'a mut dyn ResultSink) -> Cx<'a> {
        // Text-to-date conversion reads month names in the session's language from the
        // thread (types::lang); a request runs on one thread.
        types::lang::set_current(types::lang::by_name(&state.language));
        let state_spid = state.spid;
        let fcx = FnContext {
            datefirst: state.datefirst,
            now_utc: now_utc(),
            local_offset_minutes: 0,
            language: state.language.clone(),
        };
        Cx {
            host,
            state,
            sink,
            outer: Vec::new(),
            fcx,
            frames: vec![Frame::default()],
            work_tables: HashMap::new(),
            spools: HashMap::new(),
            spool_vars: HashMap::new(),
            max_recursion: 100,
            pending_sets: None,
            pending_assigns: Vec::new(),
            catch_errors: Vec::new(),
            try_depth: 0,
            try_frames: Vec::new(),
            dml_target: None,
            source: Arc::from(""),
            function_result: None,
            view_depth: 0,
            cur_cmd: 0,
            rpc_outputs: Vec::new(),
            plan_slot: None,
            literals: None,
            null_warned: false,
            preceding: Vec::new(),
            bulk_unchecked: false,
            error_sets: 0,
            cascades: Vec::new(),
            spare_row: Vec::new(),
            spare_types: Vec::new(),
            spare_key: Vec::new(),
            memory: memory::Grant::new(state_spid),
        }
    }

    pub fn check_cancel(&self) -> Result<(), SqlError> {
        if self.state.cancel.load(AtomicOrdering::Relaxed) {
            return Err(SqlError::new(3617, 25, 1, "The query was cancelled by the client (attention)."));
        }
        Ok(())
    }

    pub fn eval_with_outer(&mut self, e: &BExpr, row: &[Value]) -> Result<Value, SqlError> {
        e.eval(row, self)
    }

    pub fn frame(&mut self) -> &mut Frame {
        if self.frames.is_empty() {
            self.frames.push(Frame::default());
        }
        let n = self.frames.len() - 1;
        &mut self.frames[n]
    }

    pub fn var(&self, slot: usize) -> Value {
        self.frames.last().and_then(|f| f.vars.get(slot)).map(|v| v.value.clone()).unwrap_or(Value::Null)
    }

    /// The table of a table variable's slot (None for a scalar variable).
    pub fn var_table(&self, slot: usize) -> Option<Arc<TableInfo>> {
        self.frames.last().and_then(|f| f.vars.get(slot)).and_then(|v| v.table.clone())
    }

    pub fn lookup_var(&self, name: &str) -> Option<(usize, SqlType)> {
        let f = self.frames.last()?;
        f.vars.iter().position(|v| v.name.eq_ignore_ascii_case(name)).map(|i| (i, f.vars[i].ty))
    }

    pub fn set_var(&mut self, slot: usize, v: Value) {
        if let Some(var) = self.frame().vars.get_mut(slot) {
            var.value = v;
        }
    }

    pub fn nest_level(&self) -> usize {
        self.frames.iter().filter(|f| f.proc_name.is_some()).count()
    }

    pub fn current_proc_id(&self) -> i32 {
        self.frames.last().map(|f| f.proc_id).unwrap_or(0)
    }

    pub fn warn_null_eliminated(&mut self) {
        if !self.null_warned {
            self.null_warned = true;
            let _ = self.sink.message(&Message {
                error: SqlError::new(
                    8153,
                    10,
                    1,
                    "Warning: Null value is eliminated by an aggregate or other SET operation.",
                ),
                info: true,
            });
        }
    }

    pub fn sys_fn(&self, f: &SysFn) -> Value {
        let err = self.catch_errors.last();
        match f {
            SysFn::RowCount => Value::Int(self.state.rowcount.clamp(0, i64::from(i32::MAX)) as i32),
            SysFn::TranCount => Value::Int(self.state.trancount as i32),
            SysFn::Error => Value::Int(self.state.error),
            SysFn::Identity => self
                .state
                .last_identity
                .map(|v| Value::Decimal { value: v, precision: 38, scale: 0 })
                .unwrap_or(Value::Null),
            SysFn::ScopeIdentity => self
                .frames
                .last()
                .and_then(|f| f.scope_identity)
                .map(|v| Value::Decimal { value: v, precision: 38, scale: 0 })
                .unwrap_or(Value::Null),
            SysFn::Spid => Value::SmallInt(self.state.spid as i16),
            SysFn::XactState => Value::SmallInt(if self.state.trancount == 0 {
                0
            } else if self.state.doomed {
                -1
            } else {
                1
            }),
            SysFn::FetchStatus => Value::Int(self.fetch_status()),
            SysFn::CursorRows => Value::Int(self.cursor_rows()),
            SysFn::CursorStatus { kind, name } => Value::SmallInt(self.cursor_status(kind, name)),
            SysFn::ErrorNumber => err.map(|e| Value::Int(e.number)).unwrap_or(Value::Null),
            SysFn::ErrorMessage => err.map(|e| Value::String(e.message.clone())).unwrap_or(Value::Null),
            SysFn::ErrorSeverity => err.map(|e| Value::Int(i32::from(e.severity))).unwrap_or(Value::Null),
            SysFn::ErrorState => err.map(|e| Value::Int(i32::from(e.state))).unwrap_or(Value::Null),
            SysFn::ErrorLine => err.map(|e| Value::Int(e.line as i32)).unwrap_or(Value::Null),
            SysFn::ErrorProcedure => err.and_then(|e| e.procedure.clone()).map(Value::String).unwrap_or(Value::Null),
        }
    }

    /// Runs a subquery plan for `row` (pushed as its outer row); at most `limit` rows.
    /// Forgets spool `id`'s rows when a variable it read has changed since they were
    /// computed (a statement that assigns variables as it reads rows).
    pub fn check_spool_vars(&mut self, id: usize, vars: &[usize]) {
        if vars.is_empty() {
            return;
        }
        let now: Vec<Value> = vars.iter().map(|&v| self.var(v)).collect();
        if self.spool_vars.get(&id) != Some(&now) {
            self.spools.remove(&id);
            self.spool_vars.insert(id, now);
        }
    }

    pub fn run_subquery(&mut self, plan: &Plan, row: &[Value], limit: Option<usize>) -> Result<Vec<Row>, SqlError> {
        self.outer.push(row.to_vec());
        let r = (|| {
            let mut op = open(plan, self)?;
            let mut out = Vec::new();
            while let Some(r) = op.next(self)? {
                out.push(r);
                if limit.is_some_and(|l| out.len() >= l) {
                    break;
                }
            }
            Ok(out)
        })();
        self.outer.pop();
        r
    }

    pub fn call_udf(&mut self, db: DbId, object_id: i32, args: Vec<(Value, SqlType)>) -> Result<Value, SqlError> {
        procs::call_scalar_function(self, db, object_id, args)
    }

    // --- catalog access ----------------------------------------------------------------

    pub fn catalog(&self, db: DbId) -> Result<Arc<crate::catalog::SharedCatalog>, SqlError> {
        self.host.catalog(db).map_err(host_err)
    }

    /// Database `db`'s collation: the default of its new character columns, and what
    /// DATABASE_DEFAULT names while it is the current database.
    pub fn collation_of(&self, db: DbId) -> types::Collation {
        self.host.catalog(db).map(|c| *c.collation.read()).unwrap_or_default()
    }

    /// The current database's collation: that of literals, variables and parameters
    /// (the coercible-default label, docs/architecture.md "Collations").
    pub fn db_collation(&self) -> types::Collation {
        self.collation_of(self.state.database)
    }

    pub fn db_id_by_name(&self, name: &str) -> Option<DbId> {
        self.host.databases().into_iter().find(|d| d.name.eq_ignore_ascii_case(name)).map(|d| d.id)
    }

    pub fn db_name(&self, id: DbId) -> Option<String> {
        self.host.databases().into_iter().find(|d| d.id == id).map(|d| d.name)
    }

    pub fn current_db_name(&self) -> String {
        self.db_name(self.state.database).unwrap_or_else(|| "master".into())
    }

    pub fn object_name(&self, db: DbId, id: i32) -> Option<String> {
        if id < 0 {
            return sysviews::system_object_name(id).map(str::to_string);
        }
        let c = self.catalog(db).ok()?;
        let g = c.inner.read();
        g.objects.get(&id).map(|o| o.name.clone())
    }

    pub fn schema_name(&self, db: DbId, id: i32) -> Option<String> {
        let c = self.catalog(db).ok()?;
        let g = c.inner.read();
        g.schemas.get(&id).map(|s| s.name.clone())
    }

    pub fn schema_id(&self, db: DbId, name: &str) -> Option<i32> {
        let c = self.catalog(db).ok()?;
        let g = c.inner.read();
        g.schema_by_name(name).map(|s| s.id)
    }

    /// OBJECT_ID('name'): tables, views, procedures, functions, constraints.
    pub fn object_id_by_name(&mut self, text: &str) -> Result<Option<i32>, SqlError> {
        let Ok(name) = parse_object_name(text) else {
            return Ok(None);
        };
        if let Some(schema) = name.schema() {
            if let Some(id) = sysviews::system_object_id(&schema.value, &name.name().value) {
                return Ok(Some(id));
            }
        }
        Ok(self.resolve_object(&name)?.map(|(_, o)| o.id).or_else(|| {
            // Constraints are objects too.
            let (db, schema, n) = self.resolve_name(&name).ok()?;
            let c = self.catalog(db).ok()?;
            let g = c.inner.read();
            for o in g.objects.values() {
                if o.schema_id != schema {
                    continue;
                }
                if let ObjectBody::Table(t) = &o.body {
                    for (id, cname) in ddl::constraint_names(t) {
                        if cname.eq_ignore_ascii_case(&n) {
                            return Some(id);
                        }
                    }
                }
            }
            None
        }))
    }

    /// (database, schema id, object name) of a name; `#temp` names resolve in tempdb.
    pub fn resolve_name(&mut self, name: &ObjectName) -> Result<(DbId, i32, String), SqlError> {
        let obj = name.name().value.clone();
        if obj.starts_with('#') {
            let internal = if obj.starts_with("##") {
                obj.clone()
            } else {
                self.state.temp_tables.get(&obj.to_ascii_lowercase()).cloned().unwrap_or_else(|| obj.clone())
            };
            return Ok((TEMPDB, crate::catalog::SCHEMA_DBO, internal));
        }
        let (db, schema) = self.resolve_qualifiers(name)?;
        Ok((db, schema, obj))
    }

    /// The database and schema id a name that is not a `#temp` name is in (schema -1
    /// when the schema does not exist).
    fn resolve_qualifiers(&mut self, name: &ObjectName) -> Result<(DbId, i32), SqlError> {
        let db = match name.database() {
            Some(d) => self.db_id_by_name(&d.value).ok_or_else(|| {
                SqlError::new(
                    911,
                    16,
                    1,
                    format!("Database '{}' does not exist. Make sure that the name is entered correctly.", d.value),
                )
            })?,
            None => self.state.database,
        };
        let schema = match name.schema() {
            Some(s) => self.schema_id(db, &s.value).unwrap_or(-1),
            None => crate::catalog::SCHEMA_DBO,
        };
        Ok((db, schema))
    }

    /// A name in a database that does not exist names no object: the caller reports it
    /// as any missing object (208 for a table, 2812 for a procedure, NULL from
    /// OBJECT_ID), as SQL Server does; only USE and CREATE report the database (911).
    pub(super) fn names_missing_database(&self, name: &ObjectName) -> bool {
        name.database().is_some_and(|d| self.db_id_by_name(&d.value).is_none())
    }

    pub fn resolve_object(&mut self, name: &ObjectName) -> Result<Option<(DbId, Object)>, SqlError> {
        if self.names_missing_database(name) {
            return Ok(None);
        }
        let (db, schema, n) = self.resolve_name(name)?;
        let c = self.catalog(db)?;
        let g = c.inner.read();
        Ok(g.object_by_name(schema, &n).cloned().map(|o| (db, o)))
    }

    /// The table `name` names, when it names a table (None for a view, another kind of
    /// object or no object: the caller's general path deals with those). Resolved
    /// through the session's name cache: a statement that names the table it named
    /// before (each INSERT of a batch of INSERTs) finds the catalog version unchanged
    /// and skips the catalog search and the copy of the catalog entry. Any catalog
    /// change bumps the version, so a stale entry is never used.
    pub fn resolve_table_cached(&mut self, name: &ObjectName) -> Result<Option<Arc<ResolvedTable>>, SqlError> {
        if self.names_missing_database(name) {
            return Ok(None);
        }
        // `#temp` names map to internal names; other names are looked up as written.
        let (db, schema_id, temp_name) = if name.name().value.starts_with('#') {
            let (db, schema, n) = self.resolve_name(name)?;
            (db, schema, Some(n))
        } else {
            let (db, schema) = self.resolve_qualifiers(name)?;
            (db, schema, None)
        };
        let n = temp_name.as_deref().unwrap_or(&name.name().value);
        let cat = self.catalog(db)?;
        let version = cat.version();
        let cache = &mut self.state.name_cache;
        if let Some(e) = cache
            .iter()
            .find(|e| e.db == db && e.schema_id == schema_id && e.version == version && e.name.eq_ignore_ascii_case(n))
        {
            return Ok(Some(e.table.clone()));
        }
        let obj = {
            let g = cat.inner.read();
            match g.object_by_name(schema_id, n) {
                Some(o) if matches!(o.body, ObjectBody::Table(_)) => o.clone(),
                _ => return Ok(None),
            }
        };
        let key = n.to_string();
        let info = self.table_info(db, &obj)?;
        let table = Arc::new(ResolvedTable { db, object_id: obj.id, schema_id: obj.schema_id, name: obj.name, info });
        let cache = &mut self.state.name_cache;
        cache.retain(|e| e.version == version || e.db != db);
        if cache.len() >= NAME_CACHE_ENTRIES {
            cache.remove(0);
        }
        cache.push(NameEntry { db, schema_id, name: key, version, table: table.clone() });
        Ok(Some(table))
    }

    pub fn resolve_table_by_text(&mut self, text: &str) -> Result<Option<Arc<TableInfo>>, SqlError> {
        let Ok(name) = parse_object_name(text) else {
            return Ok(None);
        };
        match self.resolve_object(&name)? {
            Some((db, o)) if matches!(o.body, ObjectBody::Table(_)) => Ok(Some(self.table_info(db, &o)?)),
            _ => Ok(None),
        }
    }

    /// The executor's view of a table (cached per catalog version).
    pub fn table_info(&mut self, db: DbId, obj: &Object) -> Result<Arc<TableInfo>, SqlError> {
        let cat = self.catalog(db)?;
        let version = cat.version();
        if let Some((v, t)) = self.state.table_cache.get(&(db, obj.id)) {
            if *v == version {
                return Ok(t.clone());
            }
        }
        let t = Arc::new(ddl::build_table_info(self, db, obj, &cat)?);
        self.state.table_cache.insert((db, obj.id), (version, t.clone()));
        Ok(t)
    }

    /// A table variable that a DML statement changes: not a table-valued parameter,
    /// which is READONLY (10700).
    pub fn table_variable_for_dml(&mut self, name: &str) -> Result<Arc<TableInfo>, SqlError> {
        let f = self.frames.last().ok_or_else(|| errors::must_declare_table(name))?;
        if f.vars.iter().any(|v| v.readonly && v.name.eq_ignore_ascii_case(name)) {
            return Err(errors::readonly_tvp(name));
        }
        self.table_variable(name)
    }

    /// The executor's view of table `id` (cached as [`Cx::table_info`]), None if it is
    /// no table.
    pub fn table_info_by_id(&mut self, db: DbId, id: i32) -> Result<Option<Arc<TableInfo>>, SqlError> {
        let cat = self.catalog(db)?;
        if let Some((v, t)) = self.state.table_cache.get(&(db, id)) {
            if *v == cat.version() {
                return Ok(Some(t.clone()));
            }
        }
        let obj = cat.inner.read().objects.get(&id).filter(|o| o.table().is_some()).cloned();
        match obj {
            Some(o) => self.table_info(db, &o).map(Some),
            None => Ok(None),
        }
    }

    /// The triggers of view `view_id` (cached per catalog version, so a trigger's body
    /// is parsed at its first firing only, until the catalog changes).
    pub fn view_triggers(&mut self, db: DbId, view_id: i32) -> Result<ViewTriggers, SqlError> {
        let cat = self.catalog(db)?;
        let version = cat.version();
        if let Some((v, t)) = self.state.view_triggers.get(&(db, view_id)) {
            if *v == version {
                return Ok(t.clone());
            }
        }
        let list: ViewTriggers = trigger::triggers_of(&cat.inner.read(), db, view_id).into();
        self.state.view_triggers.insert((db, view_id), (version, list.clone()));
        Ok(list)
    }

    pub fn table_variable(&mut self, name: &str) -> Result<Arc<TableInfo>, SqlError> {
        let f = self.frames.last().ok_or_else(|| errors::must_declare_table(name))?;
        f.vars
            .iter()
            .find(|v| v.name.eq_ignore_ascii_case(name))
            .and_then(|v| v.table.clone())
            .ok_or_else(|| errors::must_declare_table(name))
    }

    /// Marks a database's catalog as changed by the current transaction.
    pub fn catalog_changed(&mut self, db: DbId) {
        self.state.catalog_dirty.insert(db);
        if let Ok(c) = self.catalog(db) {
            c.bump();
        }
    }

    fn reload_dirty_catalogs(&mut self) {
        let dirty: Vec<DbId> = self.state.catalog_dirty.drain().collect();
        if dirty.is_empty() {
            return;
        }
        // After a rollback there is no transaction; the host reads only inside one.
        let own = !self.host.in_transaction() && self.host.begin("catalog reload").is_ok();
        for db in dirty {
            let Some(info) = self.host.databases().into_iter().find(|d| d.id == db) else {
                continue;
            };
            if let Ok(c) = self.catalog(db) {
                if let Ok(fresh) = Catalog::load(self.host, &info.catalog_index) {
                    *c.inner.write() = fresh;
                    c.bump();
                }
            }
        }
        if own {
            let _ = self.host.commit(None);
        }
        self.state.table_cache.clear();
        self.state.view_triggers.clear();
    }

    pub fn catalog_index(&self, db: DbId) -> Result<IndexRef, SqlError> {
        self.host
            .databases()
            .into_iter()
            .find(|d| d.id == db)
            .map(|d| d.catalog_index)
            .ok_or_else(|| SqlError::new(911, 16, 1, format!("Database id {db} does not exist.")))
    }

    pub fn new_temp_name(&mut self, base: &str) -> String {
        let n = self.state.next_temp;
        self.state.next_temp += 1;
        let pad = 116usize.saturating_sub(base.len()).min(20);
        format!("{base}{}{:012X}", "_".repeat(pad), (self.state.spid as u64) << 32 | n)
    }

    // --- messages ----------------------------------------------------------------------

    pub fn info(&mut self, text: impl Into<String>) {
        let _ = self.sink.message(&Message { error: SqlError::new(0, 0, 1, text), info: true });
    }

    fn done_kind(&self) -> DoneKind {
        if self.frames.len() > 1 {
            DoneKind::InProc
        } else {
            DoneKind::Statement
        }
    }

    pub fn done(&mut self, count: Option<u64>) -> Result<(), SqlError> {
        let count = if self.state.nocount { None } else { count };
        let kind = self.done_kind();
        self.sink.command(self.cur_cmd);
        let r = self.sink.done(Done { kind, row_count: count, error: false, in_xact: self.state.trancount > 0 });
        if r.is_err() {
            self.state.cancel.store(true, AtomicOrdering::Relaxed);
        }
        r.map_err(|_| cancelled())
    }

    /// Sends a plan's rows as a result set; returns the row count.
    pub fn send_result(&mut self, plan: &Plan) -> Result<u64, SqlError> {
        let info = column_info(plan);
        self.send_rows(plan, &info)
    }

    /// [`Cx::send_result`] with the plan's [`column_info`] at hand.
    pub fn send_rows(&mut self, plan: &Plan, info: &[ColumnInfo]) -> Result<u64, SqlError> {
        if self.state.fmtonly {
            self.sink.columns(info).map_err(|_| cancelled())?;
            return Ok(0);
        }
        let mut op = open(plan, self)?;
        self.sink.columns(info).map_err(|_| cancelled())?;
        let mut n = 0u64;
        // Each row is built in this one vector (see `Op::next_into`).
        let mut row = Vec::new();
        while op.next_into(self, &mut row)? {
            self.sink.row(&row).map_err(|_| cancelled())?;
            n += 1;
        }
        Ok(n)
    }
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

// ---------------------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------------------

/// Parses and runs one batch. Errors go to the sink as messages (the batch goes on or
/// stops as SQL Server's abort rules say); this never fails itself.
pub fn execute_batch(state: &mut SessionState, host: &mut dyn Host, text: &str, sink: &mut dyn ResultSink) {
    state.cancel.store(false, AtomicOrdering::Relaxed);
    state.bulk_target = None;
    if !state.showplan {
        if let Some(p) = plan_cache::parameterize(text, state.database) {
            if execute_parameterized(state, host, text, sink, p) {
                return;
            }
        }
    }
    let (batch, literals) = match state.parse_cache.parse_shaped(text) {
        Ok(b) => b,
        Err(e) => {
            let _ = sink.message(&Message { error: e, info: false });
            let _ = sink.done(Done {
                kind: DoneKind::Statement,
                row_count: None,
                error: true,
                in_xact: state.trancount > 0,
            });
            return;
        }
    };
    let mut cx = Cx::new(host, state, sink);
    cx.source = Arc::from(text);
    cx.literals = literals;
    if let Some(e) = compile_check(&mut cx, &batch.statements) {
        // Nothing of the batch runs, as when SQL Server fails to compile it.
        report(&mut cx, &e);
    } else {
        run_top_level(&mut cx, &batch.statements);
    }
    if let Some(l) = cx.literals.take() {
        drop(cx);
        state.parse_cache.recycle(l);
    }
}

/// Runs a batch that [`plan_cache::parameterize`] took apart: its template with the
/// literals' values as parameters, with the kept plan when there is a current one (else
/// binding it and keeping it). False when the template does not parse (the caller then
/// runs the batch as it is, for its own error).
fn execute_parameterized(
    state: &mut SessionState,
    host: &mut dyn Host,
    text: &str,
    sink: &mut dyn ResultSink,
    p: plan_cache::Parameterized,
) -> bool {
    let plan_cache::Parameterized { key, values } = p;
    let kept = state.plan_cache.get(&key);
    let (batch, reuse, version) = match kept {
        Some(e) if host.catalog(e.table.db).is_ok_and(|c| c.version() == e.version) => {
            (e.batch.clone(), Some((e.plan.clone(), e.table.clone())), e.version)
        }
        stale => {
            if stale.is_some() {
                state.plan_cache.remove(&key);
            }
            let Ok(batch) = crate::parse_batch(key.template()) else {
                return false;
            };
            let version = host.catalog(state.database).map(|c| c.version()).unwrap_or(0);
            (Arc::new(batch), None, version)
        }
    };
    let Some(Statement { kind: StatementKind::Query(q), .. }) = batch.statements.first() else {
        return false;
    };
    let reusing = reuse.is_some();
    let mut cx = Cx::new(host, state, sink);
    cx.source = Arc::from(text);
    cx.frames[0].vars = values
        .into_iter()
        .enumerate()
        .map(|(i, (value, ty))| Var { name: plan_cache::param_name(i), ty, value, table: None, readonly: false })
        .collect();
    cx.plan_slot = Some(plan_cache::PlanSlot { query: &**q, reuse, captured: None });
    run_top_level(&mut cx, &batch.statements);
    let captured = cx.plan_slot.take().and_then(|s| s.captured);
    // Keep a plan bound now when its table's catalog did not change meanwhile.
    if let (false, Some(plan)) = (reusing, captured) {
        let SetExpr::Select(s) = &q.body else {
            return true;
        };
        let Some(TableFactor::Table { name, .. }) = s.from.first().map(|f| &f.relation) else {
            return true;
        };
        if let Ok(Some(table)) = cx.resolve_table_cached(name) {
            let current = cx.catalog(table.db).map(|c| c.version()).unwrap_or(0);
            if table.db == key.database() && current == version {
                drop(cx);
                state.plan_cache.insert(key, plan_cache::Entry { batch, plan, table, version });
            }
        }
    }
    true
}

/// SQL Server compiles a whole batch before running it: a SELECT naming a column that a
/// table existing at that time lacks (207, 209, 4104) fails the batch before its first
/// statement runs. Statements whose tables do not exist yet are compiled when reached
/// (deferred name resolution). Only SELECTs after the first statement are checked (the
/// first one fails the same way when it runs), and only up to the first statement that
/// may change what names mean (DDL, USE, EXEC), so a schema changed by the batch itself
/// is never judged by its old definition.
fn compile_check(cx: &mut Cx, statements: &[Statement]) -> Option<SqlError> {
    for stmt in statements.iter().skip(1) {
        match &stmt.kind {
            StatementKind::Query(q) => {
                if matches!(&q.body, SetExpr::Select(s) if s.into.is_some()) {
                    continue;
                }
                let r = {
                    let mut b = query::Binder::new(cx);
                    b.plan_query(q).map(|_| ())
                };
                if let Err(mut e) = r {
                    // What a failed bind queued goes with its error, reported when the
                    // statement runs.
                    if !matches!(e.number, 207 | 209 | 4104) {
                        cx.preceding.clear();
                    }
                    if matches!(e.number, 207 | 209 | 4104) {
                        if e.line == 0 {
                            e.line = stmt.line();
                        }
                        return Some(e);
                    }
                }
            }
            StatementKind::Declare(_)
            | StatementKind::SetVariable { .. }
            | StatementKind::SetOption(_)
            | StatementKind::Print(_)
            | StatementKind::Insert(_)
            | StatementKind::Update(_)
            | StatementKind::Delete(_)
            | StatementKind::Merge(_)
            | StatementKind::BeginTransaction { .. }
            | StatementKind::Commit { .. }
            | StatementKind::Rollback { .. }
            | StatementKind::SaveTransaction { .. } => {}
            _ => return None,
        }
    }
    None
}

/// Ends a session: rolls back its open transaction (reloading the catalogs it changed)
/// and drops its #temp tables, which live as long as the session (a later session that
/// gets the same spid would otherwise find them under the same internal names).
pub fn end_session(state: &mut SessionState, host: &mut dyn Host) {
    state.cancel.store(false, AtomicOrdering::Relaxed);
    // Nothing to end, the usual case when a pool resets a reused connection.
    if state.trancount == 0 && state.temp_tables.is_empty() && !host.in_transaction() {
        return;
    }
    let mut sink = crate::results::CollectSink::default();
    let mut cx = Cx::new(host, state, &mut sink);
    if cx.state.trancount > 0 || cx.host.in_transaction() {
        let _ = rollback_all(&mut cx);
    }
    procs::drop_scope_temp_tables(&mut cx, &[]);
}

/// Runs statements as a batch: errors reported, autocommit, XACT_ABORT handling.
pub fn run_top_level(cx: &mut Cx, statements: &[Statement]) {
    match exec_block(cx, statements) {
        Ok(Flow::Goto(label)) => {
            let e = SqlError::new(
                133,
                15,
                1,
                format!("A GOTO statement references the label '{label}' but the label has not been declared."),
            );
            report(cx, &e);
        }
        Ok(_) => {}
        Err(a) => {
            if !a.reported {
                report(cx, &a.error);
            }
        }
    }
    // Table variables of the batch go away with it.
    drop_frame_tables(cx);
}

pub fn drop_frame_tables(cx: &mut Cx) {
    let tables = std::mem::take(&mut cx.frame().table_vars);
    for t in tables {
        let _ = ddl::drop_storage(cx, &t);
    }
}

pub fn report(cx: &mut Cx, e: &SqlError) {
    cx.set_error(e.number);
    let mut e = e.clone();
    if e.procedure.is_none() {
        if let Some(p) = cx.frames.last().and_then(|f| f.proc_name.clone()) {
            e.procedure = Some(p);
        }
    }
    for mut p in std::mem::take(&mut cx.preceding) {
        if p.line == 0 {
            p.line = e.line;
        }
        p.procedure = p.procedure.or_else(|| e.procedure.clone());
        let _ = cx.sink.message(&Message { info: p.severity <= 10, error: p });
    }
    let sent = cx.sink.message(&Message { info: e.severity <= 10, error: e });
    let kind = cx.done_kind();
    cx.sink.command(cx.cur_cmd);
    let done = cx.sink.done(Done { kind, row_count: None, error: true, in_xact: cx.state.trancount > 0 });
    if sent.is_err() || done.is_err() {
        cx.state.cancel.store(true, AtomicOrdering::Relaxed);
    }
}

/// Runs a list of statements (a batch, a block, a procedure body), handling GOTO.
pub fn exec_block(cx: &mut Cx, statements: &[Statement]) -> ExecResult {
    let mut i = 0;
    while i < statements.len() {
        let stmt = &statements[i];
        i += 1;
        if let Err(e) = cx.check_cancel() {
            return Err(Abort { error: e, reported: false });
        }
        let sets = cx.error_sets;
        let flow = match exec_statement(cx, stmt) {
            Ok(f) => {
                if cx.error_sets == sets && resets_error(&stmt.kind) {
                    cx.state.error = 0;
                }
                f
            }
            Err(mut e) => {
                if e.line == 0 {
                    e.line = stmt.line();
                }
                if e.procedure.is_none() {
                    e.procedure = cx.frames.last().and_then(|f| f.proc_name.clone());
                }
                if e.number == 3617 {
                    return Err(Abort { error: e, reported: true });
                }
                // Name-resolution errors are compile errors of the TRY block's own scope
                // in SQL Server: CATCH does not see them (it does from a nested scope).
                let same_scope = cx.try_frames.last() == Some(&cx.frames.len());
                let uncatchable = same_scope && matches!(e.number, 207 | 208 | 4104);
                // Severity 20 and up ends the connection: no CATCH block sees it.
                if cx.try_depth > 0 && e.severity > 10 && !e.is_fatal() && !uncatchable {
                    return Err(Abort { error: e, reported: false });
                }
                report(cx, &e);
                if uncatchable {
                    return Err(Abort { error: e, reported: true });
                }
                let terminated = match stmt.kind {
                    StatementKind::Insert(_)
                    | StatementKind::Update(_)
                    | StatementKind::Delete(_)
                    | StatementKind::Merge(_) => {
                        matches!(e.number, 2627 | 2601 | 547 | 515 | 2628 | 8152 | 8115 | 8134 | 220 | 232 | 512)
                    }
                    // Rows rewritten by ALTER TABLE, keys built by CREATE INDEX.
                    StatementKind::AlterTable(_) | StatementKind::CreateIndex(_) => {
                        matches!(e.number, 515 | 2628 | 8152 | 1505 | 1750)
                    }
                    _ => false,
                };
                if terminated && !cx.state.xact_abort {
                    let _ = cx.sink.message(&Message {
                        error: SqlError::new(3621, 0, 0, "The statement has been terminated.").at_line(e.line),
                        info: true,
                    });
                }
                // RAISERROR does not honour XACT_ABORT (THROW does).
                let xact_abort = cx.state.xact_abort && !matches!(stmt.kind, StatementKind::Raiserror(_));
                let abort = aborts_batch(&e) || xact_abort || e.number == 1205;
                if (xact_abort || e.number == 1205) && cx.state.trancount > 0 {
                    let _ = rollback_all(cx);
                }
                if abort {
                    return Err(Abort { error: e, reported: true });
                }
                continue;
            }
        };
        match flow {
            Flow::Normal => {}
            Flow::Goto(label) => {
                match statements
                    .iter()
                    .position(|s| matches!(&s.kind, StatementKind::Label(l) if l.value.eq_ignore_ascii_case(&label)))
                {
                    Some(p) => i = p + 1,
                    None => return Ok(Flow::Goto(label)),
                }
            }
            other => return Ok(other),
        }
    }
    Ok(Flow::Normal)
}

/// Does the statement clear @@ERROR when it completes without an error? SQL Server clears
/// it after every statement executed, so `IF @@ERROR <> 0 PRINT @@ERROR` prints 0. Not
/// here: IF and WHILE clear it when their condition has been evaluated (their branch
/// runs statements of its own); blocks, TRY...CATCH (the CATCH block's first statement
/// still sees the error) and labels are no statements of their own; a DECLARE without
/// initial values is not executed in SQL Server (its variables exist from the batch's
/// compilation). An EXEC whose module set @@ERROR keeps it (the caller's `EXEC p; IF
/// @@ERROR <> 0` sees the error of the module's last statement), as any statement does
/// whose triggers or functions set it.
fn resets_error(k: &StatementKind) -> bool {
    match k {
        StatementKind::Block(_)
        | StatementKind::If { .. }
        | StatementKind::While { .. }
        | StatementKind::TryCatch { .. }
        | StatementKind::Label(_) => false,
        StatementKind::Declare(decls) => {
            decls.iter().any(|d| matches!(d, Declaration::Variable { value: Some(_), .. } | Declaration::Cursor { .. }))
        }
        _ => true,
    }
}

/// Is the statement one that reads or writes tables (and so runs in a transaction)?
fn is_data_statement(k: &StatementKind) -> bool {
    matches!(
        k,
        StatementKind::Query(_)
            | StatementKind::Insert(_)
            | StatementKind::Update(_)
            | StatementKind::Delete(_)
            | StatementKind::Merge(_)
            | StatementKind::CreateTable(_)
            | StatementKind::AlterTable(_)
            | StatementKind::CreateIndex(_)
            | StatementKind::DropIndex { .. }
            | StatementKind::CreateProcedure(_)
            | StatementKind::CreateTrigger(_)
            | StatementKind::EnableTrigger { .. }
            | StatementKind::CreateView(_)
            | StatementKind::CreateFunction(_)
            | StatementKind::CreateSchema { .. }
            | StatementKind::CreateType(_)
            | StatementKind::Truncate { .. }
    ) || matches!(k, StatementKind::Drop { kind, .. } if !matches!(kind, DropKind::Database | DropKind::Login))
        || security::is_database_security(k)
}

/// Does the statement begin a transaction under SET IMPLICIT_TRANSACTIONS ON? SQL
/// Server's list: DDL, DML, GRANT/REVOKE/DENY, BEGIN TRANSACTION, and SELECT from a
/// table (not `SELECT @@TRANCOUNT`).
fn begins_implicit_transaction(k: &StatementKind) -> bool {
    fn reads_table(q: &Query) -> bool {
        fn body(b: &SetExpr) -> bool {
            match b {
                SetExpr::Select(s) => !s.from.is_empty() || s.into.is_some(),
                SetExpr::Query(q) => reads_table(q),
                SetExpr::SetOp { left, right, .. } => body(left) || body(right),
            }
        }
        body(&q.body)
    }
    match k {
        StatementKind::Query(q) => reads_table(q),
        StatementKind::BeginTransaction { .. } => true,
        _ => is_data_statement(k),
    }
}

/// BEGIN TRANSACTION at @@TRANCOUNT 0: the host transaction, the descriptor, ENVCHANGE.
fn begin_user_transaction(cx: &mut Cx, name: &str) -> Result<(), SqlError> {
    cx.host.begin(name).map_err(host_err)?;
    cx.state.trancount = 1;
    cx.state.doomed = false;
    cx.state.descriptor = cx.state.next_descriptor;
    cx.state.next_descriptor += 1;
    let d = cx.state.descriptor;
    let _ = cx.sink.env_change(&EnvChange::BeginTransaction { descriptor: d });
    Ok(())
}

/// The DONE token's command code for a statement (SQL Server's values).
pub fn command_of(k: &StatementKind) -> u16 {
    use crate::results::command_code as c;
    match k {
        StatementKind::Query(q) => match &q.body {
            SetExpr::Select(s) if s.into.is_some() => c::SELECT_INTO,
            _ => c::SELECT,
        },
        StatementKind::Insert(_) => c::INSERT,
        StatementKind::Update(_) => c::UPDATE,
        StatementKind::Delete(_) => c::DELETE,
        StatementKind::Merge(_) => c::MERGE,
        StatementKind::CreateTable(_) => c::CREATE_TABLE,
        StatementKind::AlterTable(_) => c::ALTER_TABLE,
        StatementKind::CreateIndex(_) => c::CREATE_INDEX,
        StatementKind::DropIndex { .. } => c::DROP_INDEX,
        StatementKind::CreateDatabase(_) => c::CREATE_DATABASE,
        StatementKind::CreateView(_) => c::CREATE_VIEW,
        StatementKind::CreateProcedure(_) => c::CREATE_PROCEDURE,
        StatementKind::CreateFunction(_) => c::CREATE_FUNCTION,
        StatementKind::CreateSchema { .. } => c::CREATE_SCHEMA,
        StatementKind::Exec(_) | StatementKind::ExecString(_) => c::EXECUTE,
        StatementKind::Drop { kind, .. } => match kind {
            DropKind::Table => c::DROP_TABLE,
            DropKind::View => c::DROP_VIEW,
            DropKind::Procedure => c::DROP_PROCEDURE,
            DropKind::Function => c::DROP_FUNCTION,
            DropKind::Database => c::DROP_DATABASE,
            DropKind::Schema => c::DROP_SCHEMA,
            _ => 0,
        },
        _ => 0,
    }
}

/// Runs one statement with its DONE command code set (kept after an error, for the
/// error's DONE; restored for the enclosing statement otherwise).
fn exec_statement(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    crate::stack::check()?;
    cx.host.settle_commit().map_err(host_err)?;
    if !cx.spool_vars.is_empty() {
        cx.spool_vars.clear();
    }
    if !cx.spools.is_empty() {
        cx.spools.clear();
    }
    cx.preceding.clear();
    let outer = std::mem::replace(&mut cx.cur_cmd, command_of(&stmt.kind));
    let r = exec_statement_inner(cx, stmt);
    if r.is_ok() {
        cx.cur_cmd = outer;
    }
    r
}

fn exec_statement_inner(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    cx.fcx.now_utc = now_utc();
    cx.state.live.statement(&stmt.kind, cx.nest_level());
    if cx.state.implicit_transactions
        && cx.state.trancount == 0
        && !cx.host.in_transaction()
        && begins_implicit_transaction(&stmt.kind)
    {
        begin_user_transaction(cx, "implicit_transaction")?;
    }
    if cx.state.fmtonly
        && matches!(
            stmt.kind,
            StatementKind::Insert(_) | StatementKind::Update(_) | StatementKind::Delete(_) | StatementKind::Merge(_)
        )
    {
        return Ok(Flow::Normal);
    }
    if is_data_statement(&stmt.kind) {
        if cx.state.doomed && cx.state.trancount > 0 && !matches!(stmt.kind, StatementKind::Query(_)) {
            return Err(SqlError::new(
                3930,
                16,
                1,
                "The current transaction cannot be committed and cannot support operations that write to the log file. Roll back the transaction.",
            ));
        }
        return atomic(cx, |cx| exec_data_statement(cx, stmt));
    }
    exec_control(cx, stmt)
}

/// Runs `f` as one atomic statement: its own transaction in autocommit mode, else
/// under a savepoint.
pub fn atomic<T>(cx: &mut Cx, f: impl FnOnce(&mut Cx) -> Result<T, SqlError>) -> Result<T, SqlError> {
    if cx.state.trancount == 0 && !cx.host.in_transaction() {
        cx.host.begin("autocommit").map_err(host_err)?;
        match f(cx) {
            Ok(v) => {
                if let Err(e) = cx.host.commit(None) {
                    let _ = cx.host.rollback();
                    cx.reload_dirty_catalogs();
                    return Err(host_err(e));
                }
                cx.state.catalog_dirty.clear();
                Ok(v)
            }
            Err(e) => {
                let _ = cx.host.rollback();
                cx.reload_dirty_catalogs();
                Err(e)
            }
        }
    } else {
        let sp = "__mesquite_stmt";
        let saved = cx.host.save(sp).is_ok();
        match f(cx) {
            Ok(v) => Ok(v),
            Err(e) => {
                if e.number == 1205 {
                    return Err(e);
                }
                if saved && cx.host.in_transaction() {
                    let _ = cx.host.rollback_to(sp);
                    if !cx.state.catalog_dirty.is_empty() {
                        let dirty: Vec<DbId> = cx.state.catalog_dirty.iter().copied().collect();
                        cx.reload_dirty_catalogs();
                        cx.state.catalog_dirty.extend(dirty);
                    }
                }
                if cx.state.xact_abort {
                    cx.state.doomed = true;
                }
                Err(e)
            }
        }
    }
}

fn exec_data_statement(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    match &stmt.kind {
        StatementKind::Query(q) => {
            exec_query(cx, q)?;
        }
        StatementKind::Insert(i) => dml::insert(cx, i)?,
        StatementKind::Update(u) => dml::update(cx, u)?,
        StatementKind::Delete(d) => dml::delete(cx, d)?,
        StatementKind::Merge(m) => merge::merge(cx, m)?,
        k if security::is_database_security(k) => security::execute_database(cx, k)?,
        other => {
            security::check_ddl(cx, other)?;
            ddl::execute(cx, other, stmt)?
        }
    }
    Ok(Flow::Normal)
}

/// SELECT: a result set, a variable assignment, or SELECT INTO.
pub fn exec_query(cx: &mut Cx, q: &Query) -> Result<(), SqlError> {
    if let SetExpr::Select(s) = &q.body {
        if let Some(into) = &s.into {
            return dml::select_into(cx, q, into);
        }
    }
    cx.pending_assigns.clear();
    // The plan cache's query: run its kept plan, or keep the plan bound now.
    let cached = cx.plan_slot.as_mut().filter(|s| std::ptr::eq(s.query, q));
    let kept = match cached {
        Some(slot) => match slot.reuse.take() {
            Some((kept, t)) => {
                security::check_object_id(cx, t.db, t.object_id, t.schema_id, &t.name, "SELECT")?;
                Some(kept)
            }
            None => {
                let plan = Binder::new(cx).plan_query(q)?.0;
                let kept = plan_cache::KeptPlan { columns: column_info(&plan).into(), plan: Arc::new(plan) };
                if let Some(slot) = cx.plan_slot.as_mut() {
                    slot.captured = Some(kept.clone());
                }
                Some(kept)
            }
        },
        None => None,
    };
    let bound;
    let plan: &Plan = match &kept {
        Some(k) => &k.plan,
        None => {
            bound = Binder::new(cx).plan_query(q)?.0;
            &bound
        }
    };
    let assigns = std::mem::take(&mut cx.pending_assigns);
    if cx.state.showplan {
        return show_plan(cx, plan);
    }
    if !assigns.is_empty() {
        // SELECT @a = x, @b = y FROM ...: assign from every row, in order; the last row
        // wins. Each value is computed just before its assignment, so it sees what the
        // previous rows and items assigned (`SELECT @s = @s + name FROM t ORDER BY name`).
        let cols = plan.columns();
        let split = assignment_source(plan);
        let (source, exprs) = match &split {
            Some((source, exprs)) => (source, Some(exprs)),
            None => (plan, None),
        };
        let mut op = open(source, cx)?;
        let mut n = 0u64;
        while let Some(row) = op.next(cx)? {
            n += 1;
            for (i, (name, aop)) in assigns.iter().enumerate() {
                let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
                let v = match exprs.and_then(|e| e.get(i)) {
                    Some(e) => e.eval(&row, cx)?,
                    None => row.get(i).cloned().unwrap_or(Value::Null),
                };
                let v = assign_value(cx, slot, ty, *aop, v, &cols[i].ty)?;
                cx.set_var(slot, v);
            }
        }
        cx.state.rowcount = n as i64;
        cx.done(Some(n))?;
        return Ok(());
    }
    let n = match &kept {
        Some(k) => cx.send_rows(plan, &k.columns)?,
        None => cx.send_result(plan)?,
    };
    cx.state.rowcount = n as i64;
    cx.done(Some(n))?;
    Ok(())
}

/// An assignment SELECT's plan as the rows to assign from and the select items to
/// compute for each of them: its projection moved above its sort (and TOP), whose keys
/// then compute the projected expressions they read. None for other shapes (a DISTINCT,
/// a GROUP BY's projection is above its aggregate already): the items are then computed
/// by the plan.
fn assignment_source(plan: &Plan) -> Option<(Plan, Vec<BExpr>)> {
    match plan {
        Plan::Project { input, exprs, .. } => Some(((**input).clone(), exprs.clone())),
        Plan::Trim { input, .. } => assignment_source(input),
        Plan::Sort { input, keys } => {
            let Plan::Project { input: source, exprs, .. } = &**input else { return None };
            let mut moved = Vec::with_capacity(keys.len());
            for k in keys {
                let in_range = std::cell::Cell::new(true);
                let expr = k.expr.remap(&|i, t| {
                    exprs.get(i).cloned().unwrap_or_else(|| {
                        in_range.set(false);
                        BExpr::Col(i, t)
                    })
                });
                if !in_range.get() {
                    return None;
                }
                moved.push(plan::SortKey { expr, desc: k.desc });
            }
            Some((Plan::Sort { input: source.clone(), keys: moved }, exprs.clone()))
        }
        Plan::Top { input, count, percent, ties: None, offset } => {
            let (source, exprs) = assignment_source(input)?;
            let top = Plan::Top {
                input: Box::new(source),
                count: count.clone(),
                percent: *percent,
                ties: None,
                offset: offset.clone(),
            };
            Some((top, exprs))
        }
        _ => None,
    }
}

fn show_plan(cx: &mut Cx, plan: &Plan) -> Result<(), SqlError> {
    let mut lines = Vec::new();
    plan.explain(0, &mut lines);
    let ty = SqlType::NVarChar { len: types::Length::Max };
    cx.sink.columns(&[ColumnInfo::new("StmtText", ty, true)]).map_err(|_| cancelled())?;
    for l in &lines {
        cx.sink.row(&[Value::String(l.clone())]).map_err(|_| cancelled())?;
    }
    cx.done(Some(lines.len() as u64))?;
    Ok(())
}

/// The value a variable gets from `SET @v op= value` (converted to its type).
pub fn assign_value(
    cx: &mut Cx,
    slot: usize,
    ty: SqlType,
    op: AssignOp,
    v: Value,
    vty: &SqlType,
) -> Result<Value, SqlError> {
    let v = match op.binary_op() {
        None => v,
        Some(bop) => {
            let cur = cx.var(slot);
            let rty = crate::scalar::ops::binary_type(bop, &ty, vty)?;
            let r = crate::scalar::ops::binary(bop, &cur, &ty, &v, vty, &rty)?;
            return convert::convert(&r, &rty, &ty, None).and_then(|x| fit_variable(x, &ty));
        }
    };
    let v = if vty == &ty { v } else { convert::convert(&v, vty, &ty, None)? };
    fit_variable(v, &ty)
}

/// Variables truncate strings silently (unlike columns).
fn fit_variable(v: Value, ty: &SqlType) -> Result<Value, SqlError> {
    match (&v, ty) {
        (
            Value::String(s),
            SqlType::VarChar { len: types::Length::Bounded(n) }
            | SqlType::NVarChar { len: types::Length::Bounded(n) }
            | SqlType::Char { len: n }
            | SqlType::NChar { len: n },
        ) => {
            let truncated: String = if ty.is_unicode() {
                types::ucs2::decode(types::ucs2::units(s).take(usize::from(*n)))
            } else {
                s.chars().take(usize::from(*n)).collect()
            };
            Value::String(truncated).fit_to(ty)
        }
        _ => Ok(v),
    }
}

fn bind_standalone(cx: &mut Cx, e: &Expr) -> Result<BExpr, SqlError> {
    let mut b = Binder::new(cx);
    b.bind_expr(e, &Scope::default())
}

/// Evaluates an expression outside any query (SET, IF, PRINT, ...).
pub fn eval_standalone(cx: &mut Cx, e: &Expr) -> Result<(Value, SqlType), SqlError> {
    let b = bind_standalone(cx, e)?;
    let ty = b.ty();
    let needs_txn = !b.is_constant() && !cx.host.in_transaction();
    let v = if needs_txn { atomic(cx, |cx| b.eval(&[], cx))? } else { b.eval(&[], cx)? };
    Ok((v, ty))
}

fn exec_control(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    match &stmt.kind {
        StatementKind::Declare(decls) => {
            for d in decls {
                match d {
                    Declaration::Variable { name, data_type, value }
                        if data_type.name.parts.len() == 1
                            && data_type.name.parts[0].value.eq_ignore_ascii_case("CURSOR") =>
                    {
                        if cx.lookup_var(name).is_some() || cx.frame().cursors.has_variable(name) {
                            return Err(errors::variable_declared(name));
                        }
                        if value.is_some() {
                            return Err(errors::not_supported("a cursor variable's initial value"));
                        }
                        cx.frame().cursors.declare_variable(name);
                    }
                    Declaration::Variable { name, data_type, value } => {
                        let ty = match user_types::resolve(cx, data_type)? {
                            user_types::DeclaredType::Scalar(ty) => ty,
                            // DECLARE @t dbo.TableType: a table variable of the type.
                            user_types::DeclaredType::Table(tt) => {
                                let (var, owned) = user_types::table_param(cx, name, &tt, None, false)?;
                                cx.frame().table_vars.extend(owned);
                                cx.frame().vars.push(var);
                                continue;
                            }
                        };
                        errors::check_variable_type(&ty)?;
                        if cx.lookup_var(name).is_some() || cx.frame().cursors.has_variable(name) {
                            return Err(errors::variable_declared(name));
                        }
                        cx.frame().vars.push(Var {
                            name: name.clone(),
                            ty,
                            value: Value::Null,
                            table: None,
                            readonly: false,
                        });
                        if let Some(e) = value {
                            let (v, vty) = eval_standalone(cx, e)?;
                            let slot = cx.frame().vars.len() - 1;
                            let v = assign_value(cx, slot, ty, AssignOp::Assign, v, &vty)?;
                            cx.set_var(slot, v);
                        }
                    }
                    Declaration::Table { name, elements } => {
                        let t = ddl::create_table_variable(cx, name, elements)?;
                        cx.frame().table_vars.push(t.clone());
                        cx.frame().vars.push(Var {
                            name: name.clone(),
                            ty: SqlType::Int,
                            value: Value::Null,
                            table: Some(t),
                            readonly: false,
                        });
                    }
                    Declaration::Cursor { name, definition } => {
                        cursor::declare(cx, name, definition)?;
                        cx.done(None)?;
                    }
                }
            }
            Ok(Flow::Normal)
        }
        StatementKind::SetVariable { name, op, value } => {
            let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
            let (v, vty) = eval_standalone(cx, value)?;
            let v = assign_value(cx, slot, ty, *op, v, &vty)?;
            cx.set_var(slot, v);
            Ok(Flow::Normal)
        }
        StatementKind::SetCursor { name, definition } => cursor::set_variable(cx, name, definition),
        // Cursor statements end with a DONE of their own, as in SQL Server (a FETCH
        // without INTO sends its row and count itself).
        StatementKind::OpenCursor(c) => cursor::open(cx, c).and_then(|f| cx.done(None).map(|_| f)),
        StatementKind::CloseCursor(c) => cursor::close(cx, c).and_then(|f| cx.done(None).map(|_| f)),
        StatementKind::DeallocateCursor(c) => cursor::deallocate(cx, c).and_then(|f| cx.done(None).map(|_| f)),
        StatementKind::Fetch(f) => {
            let flow = cursor::fetch(cx, f)?;
            if !f.into.is_empty() {
                cx.done(None)?;
            }
            Ok(flow)
        }
        StatementKind::SetOption(o) => {
            set_option(cx, o)?;
            Ok(Flow::Normal)
        }
        StatementKind::Block(stmts) => exec_block(cx, stmts).map_err(|a| reraise(cx, a)),
        StatementKind::If { condition, then_branch, else_branch } => {
            let (v, _) = eval_standalone(cx, condition)?;
            cx.state.error = 0;
            // SQL Server ends the evaluation of a condition with a DONE (no count).
            cx.done(None)?;
            let branch = if expr::is_true(&v) { Some(&**then_branch) } else { else_branch.as_deref() };
            match branch {
                Some(s) => exec_block(cx, std::slice::from_ref(s)).map_err(|a| reraise(cx, a)),
                None => Ok(Flow::Normal),
            }
        }
        StatementKind::While { condition, body } => {
            loop {
                cx.check_cancel()?;
                // The condition runs again after the body without a statement of its own:
                // a COMMIT at the end of the body is settled first (see `exec_statement`).
                cx.host.settle_commit().map_err(host_err)?;
                let (v, _) = eval_standalone(cx, condition)?;
                cx.state.error = 0;
                cx.done(None)?;
                if !expr::is_true(&v) {
                    break;
                }
                match exec_block(cx, std::slice::from_ref(&**body)).map_err(|a| reraise(cx, a))? {
                    Flow::Break => break,
                    Flow::Normal | Flow::Continue => {}
                    other => return Ok(other),
                }
            }
            Ok(Flow::Normal)
        }
        StatementKind::Break => Ok(Flow::Break),
        StatementKind::Continue => Ok(Flow::Continue),
        StatementKind::Goto(l) => Ok(Flow::Goto(l.value.clone())),
        StatementKind::Label(_) => Ok(Flow::Normal),
        StatementKind::Return(e) => {
            if let (Some(ret), Some(e)) = (cx.frames.last().and_then(|f| f.function_returns), e) {
                let (v, ty) = eval_standalone(cx, e)?;
                let v = if v.is_null() { Value::Null } else { convert::convert(&v, &ty, &ret, None)? };
                cx.function_result = Some(v);
                return Ok(Flow::Return(None));
            }
            let v = match e {
                Some(e) => {
                    let (v, ty) = eval_standalone(cx, e)?;
                    match convert::convert(&v, &ty, &SqlType::Int, None)? {
                        Value::Int(n) => Some(n),
                        _ => Some(0),
                    }
                }
                None => None,
            };
            Ok(Flow::Return(v))
        }
        StatementKind::TryCatch { try_block, catch_block } => {
            cx.try_depth += 1;
            cx.try_frames.push(cx.frames.len());
            let r = exec_block(cx, try_block);
            cx.try_frames.pop();
            cx.try_depth -= 1;
            match r {
                Ok(f) => Ok(f),
                Err(a) if a.reported => Err(reraise(cx, a)),
                Err(a) => {
                    if a.error.number == 3617 {
                        return Err(a.error);
                    }
                    if cx.state.trancount > 0 && (cx.state.xact_abort || a.error.number == 1205) {
                        cx.state.doomed = true;
                    }
                    // The CATCH block's first statement still sees the error in @@ERROR.
                    cx.set_error(a.error.number);
                    cx.catch_errors.push(a.error);
                    let r = exec_block(cx, catch_block);
                    cx.catch_errors.pop();
                    r.map_err(|a| reraise(cx, a))
                }
            }
        }
        StatementKind::Throw(args) => {
            let e = match args {
                None => match cx.catch_errors.last() {
                    Some(e) => e.clone(),
                    None => {
                        return Err(SqlError::new(
                            10704,
                            15,
                            1,
                            "To rethrow an error, a THROW statement must be used inside a CATCH block. Insert the THROW statement inside a CATCH block, or add error parameters to the THROW statement.",
                        ))
                    }
                },
                Some(a) => {
                    let (n, nt) = eval_standalone(cx, &a.number)?;
                    let (m, mt) = eval_standalone(cx, &a.message)?;
                    let (s, st) = eval_standalone(cx, &a.state)?;
                    let n = int_value(&n, &nt)?;
                    if n < 50000 {
                        return Err(SqlError::new(
                            35100,
                            16,
                            10,
                            "Error number in THROW statement is outside the valid range. Specify an error number in the valid range of 50000 to 2147483647.",
                        ));
                    }
                    let m = expr::as_text(&m, &mt).unwrap_or_default();
                    let s = int_value(&s, &st)?.clamp(0, 255) as u8;
                    SqlError::new(n as i32, 16, s, m)
                }
            };
            let mut e = e;
            e.line = stmt.line();
            if cx.state.trancount > 0 && cx.state.xact_abort {
                cx.state.doomed = true;
            }
            // THROW always aborts the batch when not caught.
            if cx.try_depth == 0 {
                e.procedure = cx.frames.last().and_then(|f| f.proc_name.clone());
                report(cx, &e);
                return Err(SqlError { number: 3617, ..e });
            }
            Err(e)
        }
        StatementKind::Raiserror(r) => procs::raiserror(cx, r, stmt.line()),
        StatementKind::Print(e) => {
            let (v, ty) = eval_standalone(cx, e)?;
            let text = match v {
                Value::Null => String::new(),
                v => expr::as_text(&v, &ty).unwrap_or_default(),
            };
            if cx
                .sink
                .message(&Message { error: SqlError::new(0, 0, 1, text).at_line(stmt.line()), info: true })
                .is_err()
            {
                // The client is gone or cancelled: stop at the next check.
                cx.state.cancel.store(true, AtomicOrdering::Relaxed);
            }
            // PRINT ends with a DONE of its own (no count), as in SQL Server: drivers
            // that surface messages between result sets rely on it.
            cx.done(None)?;
            Ok(Flow::Normal)
        }
        StatementKind::WaitFor { kind, value } => {
            let (v, ty) = eval_standalone(cx, value)?;
            let text = expr::as_text(&v, &ty).unwrap_or_default();
            let t = types::parse(&text, &SqlType::Time { scale: 3 })
                .map_err(|_| SqlError::new(148, 15, 1, "Incorrect time syntax in time string used with WAITFOR."))?;
            let Value::Time { ticks, .. } = t else {
                return Ok(Flow::Normal);
            };
            let dur = match kind {
                WaitForKind::Delay => std::time::Duration::from_nanos(ticks * 100),
                WaitForKind::Time => {
                    let now = now_utc().1;
                    let wait = if ticks >= now { ticks - now } else { ticks + 864_000_000_000 - now };
                    std::time::Duration::from_nanos(wait * 100)
                }
            };
            let end = std::time::Instant::now() + dur;
            let _w = diag::waits::begin_wait(diag::waits::WaitType::WAITFOR);
            while std::time::Instant::now() < end {
                cx.check_cancel()?;
                let left = end.saturating_duration_since(std::time::Instant::now());
                std::thread::sleep(left.min(std::time::Duration::from_millis(10)));
            }
            Ok(Flow::Normal)
        }
        StatementKind::Kill { target, status_only } => {
            // ALTER ANY CONNECTION: sysadmin (and processadmin, which Mesquite has not).
            if !cx.host.is_sysadmin() {
                return Err(SqlError::new(6102, 14, 1, "User does not have permission to use the KILL statement."));
            }
            if cx.host.in_transaction() {
                return Err(SqlError::new(6115, 16, 1, "KILL command cannot be used inside user transactions."));
            }
            let (v, ty) = eval_standalone(cx, target)?;
            let spid = match crate::scalar::convert::convert(&v, &ty, &SqlType::Int, None) {
                Ok(Value::Int(n)) if n >= 1 => n,
                _ => {
                    let shown = expr::as_text(&v, &ty).unwrap_or_default();
                    return Err(SqlError::new(
                        6101,
                        16,
                        1,
                        format!("Process ID {shown} is not a valid process ID. Choose a number between 1 and 32767."),
                    ));
                }
            };
            if let Some(report) = cx.host.kill_session(spid, *status_only)? {
                cx.info(report);
            }
            Ok(Flow::Normal)
        }
        StatementKind::Exec(e) => procs::exec_procedure(cx, e, stmt.line()),
        StatementKind::ExecString(e) => {
            let (v, ty) = eval_standalone(cx, &e.sql)?;
            let text = expr::as_text(&v, &ty).unwrap_or_default();
            procs::exec_dynamic(cx, &text, Vec::new())?;
            Ok(Flow::Normal)
        }
        StatementKind::Use(db) => {
            let id = cx.db_id_by_name(&db.value).ok_or_else(|| {
                SqlError::new(
                    911,
                    16,
                    1,
                    format!("Database '{}' does not exist. Make sure that the name is entered correctly.", db.value),
                )
            })?;
            security::check_use(cx, id)?;
            let old = cx.current_db_name();
            let old_collation = cx.db_collation();
            cx.state.database = id;
            let new = cx.current_db_name();
            let _ = cx.sink.env_change(&EnvChange::Database { old, new: new.clone() });
            let _ = cx.sink.message(&Message {
                error: SqlError::new(5701, 0, 1, format!("Changed database context to '{new}'.")),
                info: true,
            });
            // A database of another collation: the client learns it as at login.
            let new_collation = cx.db_collation();
            if new_collation != old_collation {
                let _ = cx.sink.env_change(&EnvChange::Collation { old: old_collation, new: new_collation });
            }
            Ok(Flow::Normal)
        }
        StatementKind::BeginTransaction { name, .. } => {
            if cx.state.trancount == 0 {
                let n = name_of(cx, name.as_ref())?.unwrap_or_else(|| "user_transaction".into());
                begin_user_transaction(cx, &n)?;
            } else {
                cx.state.trancount += 1;
            }
            Ok(Flow::Normal)
        }
        StatementKind::Commit { delayed_durability, .. } => {
            match cx.state.trancount {
                0 => {
                    return Err(SqlError::new(
                        3902,
                        16,
                        1,
                        "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                    ))
                }
                1 => {
                    if cx.state.doomed {
                        return Err(SqlError::new(
                            3930,
                            16,
                            1,
                            "The current transaction cannot be committed and cannot support operations that write to the log file. Roll back the transaction.",
                        ));
                    }
                    let r = cx.host.commit(*delayed_durability);
                    cx.state.trancount = 0;
                    let d = cx.state.descriptor;
                    cx.state.descriptor = 0;
                    if let Err(e) = r {
                        let _ = cx.host.rollback();
                        cx.reload_dirty_catalogs();
                        let _ = cx.sink.env_change(&EnvChange::RollbackTransaction { descriptor: d });
                        return Err(host_err(e));
                    }
                    cx.state.catalog_dirty.clear();
                    let _ = cx.sink.env_change(&EnvChange::CommitTransaction { descriptor: d });
                }
                _ => cx.state.trancount -= 1,
            }
            Ok(Flow::Normal)
        }
        StatementKind::Rollback { name } => {
            let n = name_of(cx, name.as_ref())?;
            if cx.state.trancount == 0 {
                return Err(SqlError::new(
                    3903,
                    16,
                    1,
                    "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                ));
            }
            // A savepoint name rolls back to it; the transaction's own name (or none)
            // rolls back everything.
            if let Some(n) = n {
                if cx.host.rollback_to(&n).is_ok() {
                    cx.reload_dirty_catalogs_keep();
                    return Ok(Flow::Normal);
                }
            }
            rollback_all(cx)?;
            Ok(Flow::Normal)
        }
        StatementKind::SaveTransaction { name } => {
            if cx.state.trancount == 0 {
                return Err(SqlError::new(
                    628,
                    16,
                    0,
                    "Cannot issue SAVE TRANSACTION when there is no active transaction.",
                ));
            }
            let n = name_of(cx, Some(name))?.unwrap_or_default();
            cx.host.save(&n).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::Checkpoint(d) => {
            let secs = match d {
                Some(e) => {
                    let (v, ty) = eval_standalone(cx, e)?;
                    Some(int_value(&v, &ty)? as i32)
                }
                None => None,
            };
            let db = cx.state.database;
            security::check_checkpoint(cx, db)?;
            cx.host.checkpoint(db, secs).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::CreateDatabase(c) => {
            security::check_create_database(cx)?;
            no_user_transaction(cx, "CREATE DATABASE")?;
            cx.host.create_database(c).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::AlterDatabase(a) => {
            no_user_transaction(cx, "ALTER DATABASE")?;
            let db = match &a.database {
                DatabaseRef::Current => cx.state.database,
                DatabaseRef::Name(n) => cx.db_id_by_name(&n.value).ok_or_else(|| {
                    SqlError::new(
                        911,
                        16,
                        1,
                        format!("Database '{}' does not exist. Make sure that the name is entered correctly.", n.value),
                    )
                })?,
            };
            security::check_database_owner(cx, db, false)?;
            if let AlterDatabaseAction::Set { options, .. } = &a.action {
                // RECURSIVE_TRIGGERS is the executor's (kept in memory: see catalog).
                let recursive = |o: &DatabaseOption| match o {
                    DatabaseOption::Other(item) if item.is("RECURSIVE_TRIGGERS") => Some(matches!(
                        &item.value,
                        Some(OptionValue::Name(n)) if n.name().value.eq_ignore_ascii_case("ON")
                    )),
                    _ => None,
                };
                if !options.is_empty() && options.iter().all(|o| recursive(o).is_some()) {
                    let on = options.iter().rev().find_map(recursive).unwrap_or(false);
                    cx.catalog(db)?.recursive_triggers.store(on, AtomicOrdering::Relaxed);
                    return Ok(Flow::Normal);
                }
            }
            if let AlterDatabaseAction::Collate(name) = &a.action {
                alter_database_collation(cx, db, a, &name.value)?;
                return Ok(Flow::Normal);
            }
            cx.host.alter_database(db, a).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::Drop { kind: DropKind::Database, if_exists, names } => {
            no_user_transaction(cx, "DROP DATABASE")?;
            for n in names {
                let name = &n.name().value;
                match cx.db_id_by_name(name) {
                    Some(id) => {
                        security::check_database_owner(cx, id, true)?;
                        if id == cx.state.database {
                            return Err(SqlError::new(
                                3702,
                                16,
                                4,
                                format!("Cannot drop database \"{name}\" because it is currently in use."),
                            ));
                        }
                        if id <= 4 {
                            return Err(SqlError::new(
                                3708,
                                16,
                                1,
                                format!("Cannot drop the database '{name}' because it is a system database."),
                            ));
                        }
                        cx.host.drop_database(id).map_err(host_err)?;
                    }
                    None if *if_exists => {}
                    None => return Err(errors::cannot_drop("database", name)),
                }
            }
            Ok(Flow::Normal)
        }
        StatementKind::Dbcc(d) => procs::dbcc(cx, d),
        StatementKind::ExecuteAs(ctx) => {
            security::execute_as(cx, ctx)?;
            Ok(Flow::Normal)
        }
        StatementKind::Revert => {
            cx.state.impersonation.pop();
            Ok(Flow::Normal)
        }
        StatementKind::CreateLogin(_)
        | StatementKind::AlterLogin(_)
        | StatementKind::AlterRole { server: true, .. }
        | StatementKind::Drop { kind: DropKind::Login, .. } => {
            security::execute_server(cx, &stmt.kind)?;
            Ok(Flow::Normal)
        }
        StatementKind::InsertBulk(ib) => bulk::insert_bulk(cx, ib).map(|_| Flow::Normal),
        StatementKind::Other { keyword, .. } => Err(errors::not_supported(keyword)),
        _ => Err(errors::not_supported("This statement")),
    }
}

impl Cx<'_> {
    /// Sets @@ERROR (see [`resets_error`] for when it is cleared).
    pub fn set_error(&mut self, number: i32) {
        self.state.error = number;
        self.error_sets = self.error_sets.wrapping_add(1);
    }

    /// The login the session acts as (EXECUTE AS LOGIN/USER changes it until REVERT).
    pub fn login_name(&self) -> String {
        match self.state.impersonation.last() {
            Some((l, _)) => l.clone(),
            None => self.host.login_name(),
        }
    }

    /// Whether the acting login is in the sysadmin role.
    pub fn is_sysadmin(&self) -> bool {
        match self.state.impersonation.last() {
            Some((_, sa)) => *sa,
            None => self.host.is_sysadmin(),
        }
    }

    /// After ROLLBACK TO a savepoint: reload changed catalogs but keep them marked (the
    /// transaction may still commit DDL that came before the savepoint).
    fn reload_dirty_catalogs_keep(&mut self) {
        let dirty: Vec<DbId> = self.state.catalog_dirty.iter().copied().collect();
        self.reload_dirty_catalogs();
        self.state.catalog_dirty.extend(dirty);
    }
}

/// Msg 226: statements that run their own transaction in master.
fn no_user_transaction(cx: &Cx, what: &str) -> Result<(), SqlError> {
    if cx.state.trancount > 0 {
        return Err(SqlError::new(
            226,
            16,
            6,
            format!("{what} statement not allowed within multi-statement transaction."),
        ));
    }
    Ok(())
}

/// Turns a nested block's abort into the error its parent sees.
fn reraise(_cx: &mut Cx, a: Abort) -> SqlError {
    if a.reported {
        // Already sent: the batch must stop without sending it again.
        SqlError { number: 3617, ..a.error }
    } else {
        a.error
    }
}

pub fn rollback_all(cx: &mut Cx) -> Result<(), SqlError> {
    let r = cx.host.rollback();
    cx.state.trancount = 0;
    cx.state.doomed = false;
    cx.reload_dirty_catalogs();
    let d = cx.state.descriptor;
    cx.state.descriptor = 0;
    let _ = cx.sink.env_change(&EnvChange::RollbackTransaction { descriptor: d });
    r.map_err(host_err)
}

fn name_of(cx: &mut Cx, n: Option<&NameRef>) -> Result<Option<String>, SqlError> {
    Ok(match n {
        None => None,
        Some(NameRef::Name(i)) => Some(i.value.clone()),
        Some(NameRef::Variable(v)) => {
            let (slot, _) = cx.lookup_var(v).ok_or_else(|| errors::must_declare(v))?;
            match cx.var(slot) {
                Value::String(s) => Some(s),
                _ => None,
            }
        }
    })
}

pub fn int_value(v: &Value, ty: &SqlType) -> Result<i64, SqlError> {
    match convert::convert(v, ty, &SqlType::BigInt, None)? {
        Value::BigInt(n) => Ok(n),
        _ => Ok(0),
    }
}

fn set_option(cx: &mut Cx, o: &SetOption) -> Result<(), SqlError> {
    match o {
        SetOption::Flags { names, on } => {
            for n in names {
                let upper = n.to_ascii_uppercase();
                match upper.as_str() {
                    "NOCOUNT" => cx.state.nocount = *on,
                    "XACT_ABORT" => cx.state.xact_abort = *on,
                    "IMPLICIT_TRANSACTIONS" => cx.state.implicit_transactions = *on,
                    "SHOWPLAN_TEXT" | "SHOWPLAN_ALL" | "SHOWPLAN_XML" => cx.state.showplan = *on,
                    "FMTONLY" => cx.state.fmtonly = *on,
                    // ANSI_DEFAULTS also sets IMPLICIT_TRANSACTIONS (SQL Server's list).
                    "ANSI_DEFAULTS" => cx.state.implicit_transactions = *on,
                    // Accepted for compatibility with what clients send at login.
                    _ => {}
                }
                // Only recorded for @@OPTIONS, sys.dm_exec_sessions and DBCC USEROPTIONS:
                // the executor behaves as with SQL Server's defaults whatever they say.
                let bits = opt::of(&upper);
                if *on {
                    cx.state.options |= bits;
                    // ANSI_NULL_DFLT_ON and _OFF exclude each other.
                    if bits & opt::ANSI_NULL_DFLT_ON != 0 {
                        cx.state.options &= !opt::ANSI_NULL_DFLT_OFF;
                    } else if bits & opt::ANSI_NULL_DFLT_OFF != 0 {
                        cx.state.options &= !opt::ANSI_NULL_DFLT_ON;
                    }
                } else {
                    cx.state.options &= !bits;
                }
            }
        }
        SetOption::IsolationLevel(l) => {
            let level = match l {
                IsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
                IsolationLevel::ReadCommitted => Isolation::ReadCommitted,
                IsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                IsolationLevel::Serializable => Isolation::Serializable,
                IsolationLevel::Snapshot => Isolation::Snapshot,
            };
            cx.host.set_isolation(level).map_err(host_err)?;
            cx.state.isolation = level;
        }
        SetOption::IdentityInsert { table, on } => {
            let (db, o) = cx.resolve_object(table)?.ok_or_else(|| errors::invalid_object(&errors::written(table)))?;
            let t = cx.table_info(db, &o)?;
            if t.identity.is_none() {
                return Err(SqlError::new(
                    8106,
                    16,
                    1,
                    format!(
                        "Table '{}' does not have the identity property. Cannot perform SET operation.",
                        t.qualified_name()
                    ),
                ));
            }
            cx.state.identity_insert = if *on { Some((db, o.id)) } else { None };
        }
        SetOption::Value { name, value } => {
            let upper = name.to_ascii_uppercase();
            let num = |cx: &mut Cx, v: &SetValue| -> Result<i64, SqlError> {
                match v {
                    SetValue::Expr(e) => {
                        let (v, ty) = eval_standalone(cx, e)?;
                        int_value(&v, &ty)
                    }
                    SetValue::Word(w) => w
                        .value
                        .parse()
                        .map_err(|_| SqlError::new(102, 15, 1, format!("Incorrect syntax near '{}'.", w.value))),
                }
            };
            match upper.as_str() {
                "LOCK_TIMEOUT" => {
                    let ms = num(cx, value)?;
                    cx.state.lock_timeout = ms;
                    cx.host.set_lock_timeout(ms);
                }
                "DATEFIRST" => {
                    let d = num(cx, value)?;
                    if !(1..=7).contains(&d) {
                        return Err(SqlError::new(
                            1005,
                            15,
                            1,
                            format!("The value {d} is outside the range for SET DATEFIRST."),
                        ));
                    }
                    cx.state.datefirst = d as u8;
                    cx.fcx.datefirst = d as u8;
                }
                "LANGUAGE" => {
                    let name = match value {
                        SetValue::Word(w) => w.value.clone(),
                        SetValue::Expr(e) => {
                            let (v, ty) = eval_standalone(cx, e)?;
                            expr::as_text(&v, &ty).unwrap_or_default()
                        }
                    };
                    language::set_language(cx, &name)?;
                }
                // Accepted: DATEFORMAT, TEXTSIZE, DEADLOCK_PRIORITY, ROWCOUNT 0, ...
                _ => {}
            }
        }
    }
    Ok(())
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
