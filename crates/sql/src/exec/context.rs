//! The execution context of one request (`Cx`): the host, the session, the result sink,
//! the frames of variables, and the helpers every statement uses (name resolution,
//! catalogs, permissions, messages).

use std::collections::HashMap;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use crate::ast::*;
use crate::catalog::{Catalog, Object, ObjectBody};
use crate::host::{DbId, Host, IndexRef};
use crate::results::{ColumnInfo, Done, DoneKind, Message, ResultSink};
use crate::scalar::FnContext;

use super::base::*;
use super::expr::{BExpr, Row, SysFn};
use super::plan::{column_info, open, Plan};
use super::session::*;
use super::table::TableInfo;
use super::{errors, memory, parse_cache, plan, plan_cache};

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
    /// The reported error ending the batch's statements now ends only the current scope
    /// (see `aborts_scope`): the procedure or dynamic SQL that it unwinds to takes it.
    pub scope_abort: bool,
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
    /// WITH CHECK OPTION predicates of the views the running statement writes through.
    pub view_checks: Vec<super::dml::views::ViewCheck>,
    /// The running statement's DONE command code (see [`super::statements`]).
    pub cur_cmd: u16,
    /// An RPC's OUTPUT parameters, sent after its RETURNSTATUS ([`procs::rpc`]).
    pub rpc_outputs: Vec<crate::results::ReturnValue>,
    /// The plan cache's hold on the batch's one query (see plan_cache.rs).
    pub plan_slot: Option<plan_cache::PlanSlot>,
    /// The literals of a batch the parse cache matched by shape: its INSERT statements
    /// take their VALUES from here, not from the kept batch (see parse_cache.rs).
    pub literals: Option<parse_cache::Literals>,
    pub(crate) null_warned: bool,
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
    /// collected while a statement writes (see [`super::firing::Cascaded`]).
    pub cascades: Vec<super::firing::Cascaded>,
    /// The values and types vectors of the last one-row INSERT, reused by the next
    /// (see `dml::insert_into`).
    pub(crate) spare_row: Row,
    pub(crate) spare_types: Vec<SqlType>,
    /// The primary key buffer of `TableInfo::insert_row`.
    pub(crate) spare_key: Vec<u8>,
    /// The request's query memory grant (see [`memory`]).
    pub memory: memory::Grant,
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
            scope_abort: false,
            try_frames: Vec::new(),
            dml_target: None,
            source: Arc::from(""),
            function_result: None,
            view_depth: 0,
            view_checks: Vec::new(),
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

    /// (database, schema id, object name) of a name; `#temp` names resolve in tempdb.
    pub fn resolve_name(&mut self, name: &ObjectName) -> Result<(DbId, i32, String), SqlError> {
        let obj = name.name().value.clone();
        if obj.starts_with('#') {
            let internal = if obj.starts_with("##") {
                obj.clone()
            } else {
                self.state.temp_tables.get(&obj).cloned().unwrap_or_else(|| obj.clone())
            };
            return Ok((TEMPDB, crate::catalog::SCHEMA_DBO, internal));
        }
        let (db, schema) = self.resolve_qualifiers(name)?;
        Ok((db, schema, obj))
    }

    /// The database and schema id a name that is not a `#temp` name is in (schema -1
    /// when the schema does not exist).
    pub(super) fn resolve_qualifiers(&mut self, name: &ObjectName) -> Result<(DbId, i32), SqlError> {
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
    pub(crate) fn names_missing_database(&self, name: &ObjectName) -> bool {
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

    pub(super) fn reload_dirty_catalogs(&mut self) {
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

    pub(super) fn done_kind(&self) -> DoneKind {
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

impl Cx<'_> {
    /// Sets @@ERROR (see [`super::statements`] for when it is cleared).
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
    pub(super) fn reload_dirty_catalogs_keep(&mut self) {
        let dirty: Vec<DbId> = self.state.catalog_dirty.iter().copied().collect();
        self.reload_dirty_catalogs();
        self.state.catalog_dirty.extend(dirty);
    }
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
