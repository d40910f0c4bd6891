//! A session's state that outlives batches (SessionState: database, SET options,
//! @@TRANCOUNT, temp tables, prepared statements, cursors), the @@OPTIONS bits, and the
//! variables and frames of running modules.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

use types::{SqlType, Value};

use crate::ast::*;
use crate::host::{DbId, Isolation};
use crate::results::DoneKind;

use super::cursor_state::{LocalCursors, SessionCursors};
use super::table::TableInfo;
use super::{parse_cache, plan_cache};

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
    /// setting it ([`super::statements`]).
    pub error: i32,
    /// XACT_STATE() = -1: the transaction can only be rolled back.
    pub doomed: bool,
    /// The outermost BEGIN TRANSACTION's name (ROLLBACK TRANSACTION name rolls it all
    /// back; another name must be a savepoint's).
    pub transaction_name: String,
    /// The statement running, for sys.dm_exec_requests (the host shares it).
    pub live: Arc<LiveRequest>,
    /// The #temp tables in scope (see [`TempTables`]).
    pub temp_tables: TempTables,
    /// Batches this session sent before, parsed.
    pub parse_cache: parse_cache::ParseCache,
    /// Plans of simple parameterized SELECTs (see plan_cache.rs).
    pub plan_cache: plan_cache::PlanCache,
    pub prepared: HashMap<i32, (String, String)>,
    pub next_handle: i32,
    pub descriptor: u64,
    pub(super) next_descriptor: u64,
    /// Databases whose catalog changed in the current transaction (reloaded on rollback).
    pub(super) catalog_dirty: HashSet<DbId>,
    pub(super) table_cache: HashMap<(DbId, i32), (u64, Arc<TableInfo>)>,
    /// A view's triggers (with their parsed bodies), by catalog version, as a table's
    /// live in its cached `TableInfo`.
    pub(super) view_triggers: HashMap<(DbId, i32), (u64, ViewTriggers)>,
    /// Table names this session resolved lately (see [`Cx::resolve_table_cached`]).
    pub(super) name_cache: Vec<NameEntry>,
    pub(super) next_temp: u64,
    /// GLOBAL cursors, @@FETCH_STATUS, @@CURSOR_ROWS.
    pub cursors: SessionCursors,
}

/// A view's triggers, shared by the statements that fire them.
pub(super) type ViewTriggers = Arc<[super::table::TriggerInfo]>;

/// A table name as resolved: where the name pointed, at which catalog version.
#[derive(Debug)]
pub(super) struct NameEntry {
    pub(super) db: DbId,
    pub(super) schema_id: i32,
    /// The object name as written (matched ignoring case, as the catalog matches).
    pub(super) name: String,
    pub(super) version: u64,
    pub(super) table: Arc<ResolvedTable>,
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
pub(super) const NAME_CACHE_ENTRIES: usize = 16;

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
            transaction_name: String::new(),
            live: Arc::new(LiveRequest::default()),
            temp_tables: TempTables::default(),
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
            cursors: SessionCursors::default(),
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

/// The SET options a procedure, trigger or dynamic SQL gives back when it returns: SQL
/// Server restores any SET option set inside one (SET TRANSACTION ISOLATION LEVEL
/// included). LANGUAGE and IDENTITY_INSERT are not restored here.
#[derive(Debug, Clone)]
pub struct ScopedSetOptions {
    xact_abort: bool,
    implicit_transactions: bool,
    nocount: bool,
    options: u32,
    pub(super) lock_timeout: i64,
    pub(super) isolation: Isolation,
    pub(super) datefirst: u8,
    showplan: bool,
    fmtonly: bool,
}

impl SessionState {
    /// The SET options as a module call finds them (see [`ScopedSetOptions`]).
    pub fn scoped_set_options(&self) -> ScopedSetOptions {
        ScopedSetOptions {
            xact_abort: self.xact_abort,
            implicit_transactions: self.implicit_transactions,
            nocount: self.nocount,
            options: self.options,
            lock_timeout: self.lock_timeout,
            isolation: self.isolation,
            datefirst: self.datefirst,
            showplan: self.showplan,
            fmtonly: self.fmtonly,
        }
    }

    /// Puts back options taken by [`SessionState::scoped_set_options`] (the host's
    /// isolation and lock timeout are the caller's: `control::restore_set_options`).
    pub fn restore_set_options(&mut self, s: ScopedSetOptions) {
        self.xact_abort = s.xact_abort;
        self.implicit_transactions = s.implicit_transactions;
        self.nocount = s.nocount;
        self.options = s.options;
        self.lock_timeout = s.lock_timeout;
        self.isolation = s.isolation;
        self.datefirst = s.datefirst;
        self.showplan = s.showplan;
        self.fmtonly = s.fmtonly;
    }

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
    pub cursors: LocalCursors,
    /// A trigger's body: its `inserted` and `deleted` rows and updated columns.
    pub trigger: Option<Arc<super::firing::TriggerContext>>,
}

// ---------------------------------------------------------------------------------------
// What a running request is doing, for sys.dm_exec_requests
// ---------------------------------------------------------------------------------------

/// The statement a session's request is executing and how deeply nested, shared between
/// the executor (which sets it per statement: one relaxed store) and the host (which
/// shows it in sys.dm_exec_requests for any session).
#[derive(Debug, Default)]
pub struct LiveRequest {
    command: AtomicU8,
    nest_level: AtomicU8,
}

impl LiveRequest {
    /// Notes the statement about to run. Control-flow statements (IF, WHILE, SET, ...)
    /// keep the previous command (so does MERGE, which has no entry in the commands).
    /// `command`: the statement's position in the commands (`StatementProps`).
    pub fn statement(&self, command: Option<u8>, nest_level: usize) {
        let Some(c) = command else { return };
        self.command.store(c, Relaxed);
        self.nest_level.store(nest_level.min(255) as u8, Relaxed);
    }

    /// A new request starts (before its first statement).
    pub fn start(&self) {
        self.command.store(0, Relaxed);
        self.nest_level.store(0, Relaxed);
    }

    pub fn command(&self) -> &'static str {
        super::statements::COMMANDS.get(usize::from(self.command.load(Relaxed))).copied().unwrap_or("SELECT")
    }

    /// @@NESTLEVEL of the statement running.
    pub fn nest_level(&self) -> i32 {
        i32::from(self.nest_level.load(Relaxed))
    }
}

/// A session's #temp tables: by user name (lower-case), the internal names in tempdb,
/// each with the nesting level (procedure or dynamic SQL frames) that created it. A
/// procedure may create a #temp table its caller already has: the new one shadows the
/// caller's until the procedure returns and drops it, as in SQL Server. The ##global
/// temp tables the session created are kept too: they go when the session ends.
#[derive(Debug, Default)]
pub struct TempTables {
    /// By user name (lower-case): (nesting level, internal name), innermost last.
    scoped: HashMap<String, Vec<(usize, String)>>,
    /// The ##global temp tables this session created.
    globals: Vec<String>,
}

impl TempTables {
    /// The internal name `name` reaches now (the innermost scope's table).
    pub fn get(&self, name: &str) -> Option<&String> {
        self.scoped.get(&name.to_ascii_lowercase()).and_then(|v| v.last()).map(|(_, n)| n)
    }

    /// Did the scope at `level` itself create a #temp table of this name (2714)?
    pub fn created_at(&self, name: &str, level: usize) -> bool {
        self.scoped.get(&name.to_ascii_lowercase()).and_then(|v| v.last()).is_some_and(|(l, _)| *l == level)
    }

    pub fn insert(&mut self, name: &str, level: usize, internal: String) {
        self.scoped.entry(name.to_ascii_lowercase()).or_default().push((level, internal));
    }

    /// Forgets the innermost table of this name (DROP TABLE).
    pub fn remove(&mut self, name: &str) {
        let key = name.to_ascii_lowercase();
        if let Some(v) = self.scoped.get_mut(&key) {
            v.pop();
            if v.is_empty() {
                self.scoped.remove(&key);
            }
        }
    }

    /// Forgets the tables created at `level` or deeper and returns their internal names
    /// (the scope ending drops them).
    pub fn take_from(&mut self, level: usize) -> Vec<String> {
        let mut out = Vec::new();
        self.scoped.retain(|_, v| {
            while v.last().is_some_and(|(l, _)| *l >= level) {
                if let Some((_, n)) = v.pop() {
                    out.push(n);
                }
            }
            !v.is_empty()
        });
        out
    }

    pub fn is_empty(&self) -> bool {
        self.scoped.is_empty() && self.globals.is_empty()
    }

    /// A ##global temp table this session created.
    pub fn created_global(&mut self, name: &str) {
        self.globals.push(name.to_string());
    }

    /// The ##global temp tables this session created (it is ending).
    pub fn take_globals(&mut self) -> Vec<String> {
        std::mem::take(&mut self.globals)
    }
}
