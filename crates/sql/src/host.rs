//! The traits through which the executor reaches storage, transactions and the instance.
//!
//! `sql` knows nothing about pages, logs or files. Everything it stores goes through a
//! [`Host`]: ordered indexes of (key bytes -> row of values), transactions, and the
//! instance's database list. The engine implements `Host` over `txn::LockedIndex` and
//! storage B-trees (rows encoded in the FixedVar record format, LOBs off-row); the
//! executor's own tests use [`crate::memhost::MemHost`], an in-memory implementation with
//! the same semantics (rollback, savepoints, duplicate keys).
//!
//! # Indexes
//!
//! Every table is a set of indexes, each an ordered map from a memcmp-comparable key
//! (built with `types::sort_key`) to a row of [`Value`]s whose types the index's
//! [`IndexRef::columns`] describe. The executor decides what goes in keys and rows
//! (clustered index: the whole row; nonclustered: key columns, included columns and the
//! clustering key), and maintains all indexes of a table itself, so that index
//! maintenance, uniqueness and constraint checks are written once, above both hosts.
//!
//! # Transactions
//!
//! A host runs everything a session does inside its current transaction. With no explicit
//! transaction the executor wraps each statement in [`Host::begin`] / [`Host::commit`]
//! (autocommit). Savepoints are named; [`Host::rollback_to`] undoes everything after the
//! savepoint and keeps the transaction open.

use std::ops::Bound;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

mod dmv;
pub use dmv::{
    AllocationUnitRow, ClearStats, ConnectionInfo, CounterRow, FileStatRow, LockRow, LogSpaceRow, RequestRow,
    SessionRow, SysInfo, TransactionInfo, WaitStatRow,
};

/// A database's id (`DB_ID()`): 1 master, 2 tempdb, 3 model, 4 msdb, then user databases.
pub type DbId = i16;

/// One stored column of an index's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredColumn {
    pub ty: SqlType,
    pub nullable: bool,
    pub sparse: bool,
    /// The code page char and varchar values are stored in: their column collation's.
    pub code_page: types::CodePage,
}

/// An index (B-tree) as the host knows it: where it lives and what its rows hold.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRef {
    pub db: DbId,
    /// The locking table hints of the table reference this access serves (`WITH
    /// (NOLOCK)`, `READPAST`, ...): none on the catalog's own references.
    pub hints: LockHints,
    /// The allocation unit / HoBT id the host gave the index at creation.
    pub hobt: u64,
    /// The object the index belongs to (for lock resources and messages).
    pub object_id: i32,
    pub index_id: i32,
    /// The types of the stored row (not of the key: keys are opaque bytes here).
    pub columns: Arc<[StoredColumn]>,
}

/// The locking table hints of one table reference, which override the session's
/// settings for that table's reads (docs/compatibility.md, "Table hints").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockHints {
    /// NOLOCK / READUNCOMMITTED, READCOMMITTED(LOCK), REPEATABLEREAD, HOLDLOCK /
    /// SERIALIZABLE: the isolation level of the reads of this table.
    pub isolation: Option<Isolation>,
    /// READPAST: rows whose lock is not free at once are skipped, not waited for.
    pub read_past: bool,
    /// NOWAIT: a lock not free at once is error 1222 (LOCK_TIMEOUT 0 for this table).
    pub no_wait: bool,
}

impl LockHints {
    /// The locking hints among a table reference's hints (the others: INDEX, FORCESEEK,
    /// TABLOCK, ROWLOCK, PAGLOCK, UPDLOCK, XLOCK, ... are accepted and change nothing).
    pub fn from_table_hints(hints: &[crate::ast::TableHint]) -> LockHints {
        let mut h = LockHints::default();
        for hint in hints {
            match hint.name.to_ascii_uppercase().as_str() {
                "NOLOCK" | "READUNCOMMITTED" => h.isolation = Some(Isolation::ReadUncommitted),
                "READCOMMITTED" | "READCOMMITTEDLOCK" => h.isolation = Some(Isolation::ReadCommitted),
                "REPEATABLEREAD" => h.isolation = Some(Isolation::RepeatableRead),
                "HOLDLOCK" | "SERIALIZABLE" => h.isolation = Some(Isolation::Serializable),
                "READPAST" => h.read_past = true,
                "NOWAIT" => h.no_wait = true,
                _ => {}
            }
        }
        h
    }

    pub fn is_none(&self) -> bool {
        *self == LockHints::default()
    }
}

/// Errors from the host. Everything except `Duplicate` is already a client error.
#[derive(Debug, Clone, PartialEq)]
pub enum HostError {
    /// The key is already in the index (the executor turns it into 2627 or 2601 with
    /// the constraint or index name and the key value).
    Duplicate,
    /// A SQL Server error from below (1205 deadlock, 1222 lock timeout, 823/824, 9002 ...).
    Sql(SqlError),
}

impl From<SqlError> for HostError {
    fn from(e: SqlError) -> Self {
        HostError::Sql(e)
    }
}

pub type HostResult<T> = Result<T, HostError>;

/// One key and its row, as a scan returns them.
pub type KeyRow = (Vec<u8>, Vec<Value>);

/// Rows of one index in the host's stored form, as [`Host::scan_stored`] returns them:
/// every key and record of a batch in one buffer, so a batch costs a few allocations
/// (reused by the next batch of the scan) rather than two per row.
#[derive(Debug, Default, Clone)]
pub struct StoredBatch {
    bytes: Vec<u8>,
    /// Per row: where its key starts, where its record starts, where it ends.
    spans: Vec<(usize, usize, usize)>,
}

impl StoredBatch {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Appends a row (copies the key and record).
    pub fn push(&mut self, key: &[u8], record: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(record);
        self.spans.push((start, start + key.len(), self.bytes.len()));
    }

    /// Appends rows packed the same way: `bytes` and, per row, where its key starts,
    /// where its record starts and where it ends in `bytes` (one copy for all of them).
    pub fn extend_packed(&mut self, bytes: &[u8], spans: &[(usize, usize, usize)]) {
        let base = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.spans.extend(spans.iter().map(|&(a, b, c)| (base + a, base + b, base + c)));
    }

    /// The key of row `i` (panics past the end, as slice indexing does).
    pub fn key(&self, i: usize) -> &[u8] {
        let (a, b, _) = self.spans[i];
        &self.bytes[a..b]
    }

    /// The stored record of row `i`.
    pub fn record(&self, i: usize) -> &[u8] {
        let (_, b, c) = self.spans[i];
        &self.bytes[b..c]
    }
}

/// Turns the stored rows of one index into values (see [`Host::scan_stored`]).
pub trait RowDecoder {
    /// Sets `out` to the values of one stored row: its length becomes the index's
    /// column count and every slot is overwritten, reusing the buffers of the values
    /// already there (a scan decodes each row into the previous row's vector, so a
    /// streamed string column allocates nothing per row). False when the row cannot be
    /// decoded from its bytes alone (a value stored off-row, which takes the
    /// transaction to read): the caller reads the row by its key with [`Host::get`].
    fn decode_row(&self, stored: &[u8], out: &mut Vec<Value>) -> HostResult<bool>;
    /// [`RowDecoder::decode_row`] for a reader of only the columns marked in `needed`
    /// (a column past its end counts as needed): the others may be left NULL without
    /// being decoded. By default every column is decoded.
    fn decode_columns(&self, stored: &[u8], needed: &[bool], out: &mut Vec<Value>) -> HostResult<bool> {
        let _ = needed;
        self.decode_row(stored, out)
    }
}

/// Isolation levels as `SET TRANSACTION ISOLATION LEVEL` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    ReadUncommitted,
    #[default]
    ReadCommitted,
    RepeatableRead,
    Serializable,
    Snapshot,
}

/// A database as the instance lists it (sys.databases).
#[derive(Debug, Clone, PartialEq)]
pub struct DatabaseInfo {
    pub id: DbId,
    pub name: String,
    /// "ONLINE", "RESTORING", ...
    pub state: &'static str,
    pub recovery_model: &'static str,
    pub delayed_durability: &'static str,
    pub target_recovery_time_seconds: i32,
    pub read_only: bool,
    pub page_verify: &'static str,
    /// The database collation (sys.databases.collation_name).
    pub collation: types::Collation,
    /// What holds the log (sys.databases.log_reuse_wait_desc): NOTHING, CHECKPOINT,
    /// LOG_BACKUP, ACTIVE_TRANSACTION.
    pub log_reuse_wait: &'static str,
    pub create_date: Value,
    /// The index holding this database's catalog rows (see [`crate::catalog`]).
    pub catalog_index: IndexRef,
}

/// A data or log file as sys.master_files shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    pub db: DbId,
    pub file_id: i32,
    /// 0 = ROWS, 1 = LOG.
    pub type_code: u8,
    pub logical_name: String,
    pub physical_name: String,
    /// In 8 KB pages.
    pub size_pages: i64,
    /// -1 unlimited, else pages.
    pub max_size_pages: i64,
    /// Pages, or percent when `growth_is_percent`.
    pub growth: i64,
    pub growth_is_percent: bool,
}

/// What CREATE DATABASE and ALTER DATABASE ask of the instance; the statement's AST is
/// passed as is (the engine owns file placement and options).
pub use crate::ast::{AlterDatabase, CreateDatabase};

/// The executor's view of storage, transactions and the instance for one session: one
/// focused trait per area (a subsystem that needs engine state adds its own), all of them
/// together [`Host`].
///
/// Rows and indexes: reads and writes of a database's B-trees, in the session's transaction.
pub trait DataAccess {
    /// Up to `max` rows with keys in the range, in key order (descending if `reverse`),
    /// appended to `out`. Returns false when the range is exhausted. The executor resumes
    /// a scan by calling again with the last key returned as an excluded bound, so a host
    /// never keeps latches between calls.
    fn scan(
        &mut self,
        index: &IndexRef,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        max: usize,
        out: &mut Vec<KeyRow>,
    ) -> HostResult<bool>;
    /// [`DataAccess::scan`] leaving the rows in the host's stored form, appended to `out`,
    /// with the decoder that turns them into values. The executor decodes each row just
    /// before it uses it, so a batch holds bytes only (in one buffer) and a streaming
    /// scan reuses the same few allocations for every row. None when the host has no
    /// such form (`MemHost`): the rows are then read with `scan`.
    fn scan_stored(
        &mut self,
        index: &IndexRef,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        max: usize,
        out: &mut StoredBatch,
    ) -> HostResult<Option<(bool, Arc<dyn RowDecoder>)>> {
        let _ = (index, lower, upper, reverse, max, out);
        Ok(None)
    }
    fn get(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<Option<Vec<Value>>>;
    /// Like `get`, taking an update lock (U) on the key: the read of an UPDATE/DELETE.
    fn get_for_update(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<Option<Vec<Value>>> {
        self.get(index, key)
    }
    fn insert(&mut self, index: &IndexRef, key: &[u8], row: &[Value]) -> HostResult<()>;
    /// Inserts rows `(key, row)` in order, as `insert` of each would: on an error, the
    /// rows before the failing one are inserted and its position comes with the error.
    /// The executor batches a statement's rows this way when nothing can observe them
    /// one at a time (`exec/dml.rs`, "batched inserts"); the engine latches each leaf
    /// once per batch instead of once per row.
    fn insert_many(&mut self, index: &IndexRef, rows: &[(Vec<u8>, Vec<Value>)]) -> Result<(), (usize, HostError)> {
        for (i, (key, row)) in rows.iter().enumerate() {
            self.insert(index, key, row).map_err(|e| (i, e))?;
        }
        Ok(())
    }
    /// Replaces the row under an existing key; false if the key is absent.
    fn update(&mut self, index: &IndexRef, key: &[u8], row: &[Value]) -> HostResult<bool>;
    fn delete(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<bool>;
    /// Creates an empty index; returns its HoBT id.
    fn create_index(&mut self, db: DbId, object_id: i32, index_id: i32, columns: &[StoredColumn]) -> HostResult<u64>;
    /// Drops an index and frees its pages (at commit: the drop is transactional).
    fn drop_index(&mut self, index: &IndexRef) -> HostResult<()>;
}

/// The session's transaction: begin, commit (durable or delayed), rollback, savepoints,
/// isolation and lock timeout.
pub trait Transactions {
    /// Starts the session's transaction (the executor tracks @@TRANCOUNT nesting itself
    /// and calls this only for the outermost BEGIN or an autocommit statement).
    fn begin(&mut self, name: &str) -> HostResult<()>;
    /// Commits; `delayed` asks for a delayed-durable commit (the database's
    /// DELAYED_DURABILITY option decides whether it is honoured).
    fn commit(&mut self, delayed: Option<bool>) -> HostResult<()>;
    fn rollback(&mut self) -> HostResult<()>;
    fn save(&mut self, name: &str) -> HostResult<()>;
    fn rollback_to(&mut self, name: &str) -> HostResult<()>;
    fn in_transaction(&self) -> bool;
    /// Waits for a durable commit this session deferred (see [`CommitGate`]); the
    /// executor calls it before every statement, so nothing a batch does after a COMMIT
    /// runs before the commit is durable. Errors are the log's (9001).
    fn settle_commit(&mut self) -> HostResult<()> {
        Ok(())
    }
    fn set_isolation(&mut self, level: Isolation) -> HostResult<()>;
    /// Milliseconds; -1 waits for ever (SET LOCK_TIMEOUT).
    fn set_lock_timeout(&mut self, ms: i64);
}

/// The instance: databases and their files, checkpoints, the log, catalogs, sessions
/// (KILL), CHECKDB's storage checks.
pub trait InstanceAdmin {
    fn databases(&self) -> Vec<DatabaseInfo>;
    fn database_files(&self, db: DbId) -> Vec<FileInfo>;
    fn create_database(&mut self, stmt: &CreateDatabase) -> HostResult<DbId>;
    fn alter_database(&mut self, db: DbId, stmt: &AlterDatabase) -> HostResult<()>;
    fn drop_database(&mut self, db: DbId) -> HostResult<()>;
    /// CHECKPOINT [duration_seconds] in the given database.
    fn checkpoint(&mut self, db: DbId, duration_seconds: Option<i32>) -> HostResult<()>;
    /// sys.sp_flush_log: makes every delayed-durable commit of the database durable.
    fn flush_log(&mut self, db: DbId) -> HostResult<()>;
    /// The shared, cached catalog of a database (loaded by the host at open, see
    /// [`crate::catalog::Catalog::load`]).
    fn catalog(&self, db: DbId) -> HostResult<Arc<crate::catalog::SharedCatalog>>;
    /// Where sorts larger than their memory grant write their runs (tempdb's place).
    fn spill_dir(&self) -> std::path::PathBuf {
        std::env::temp_dir().join("mesquite-spill")
    }
    /// KILL `spid` (see the engine's `Instance::kill_session`): Ok(Some(text)) is the
    /// status report of KILL ... WITH STATUSONLY.
    fn kill_session(&mut self, spid: i32, status_only: bool) -> Result<Option<String>, SqlError> {
        let _ = (spid, status_only);
        Err(SqlError::new(6106, 16, 2, format!("Process ID {spid} is not an active process ID.")))
    }
    /// DBCC CHECKDB's structural core: allocation (GAM/SGAM/PFS/IAM) cross-checks and a
    /// check of every B-tree of the database; one line per problem, empty when clean.
    fn check_database(&mut self, db: DbId) -> HostResult<Vec<String>> {
        let _ = db;
        Err(HostError::Sql(SqlError::new(40000, 16, 1, "DBCC CHECKDB is not supported by this host.")))
    }
}

/// Live engine state for the dynamic management views (see `host/dmv.rs`); a host without
/// an instance behind it shows empty views.
pub trait Diagnostics {
    /// sys.dm_os_wait_stats: the instance's wait table, every wait type Mesquite records.
    fn os_wait_stats(&self) -> Vec<WaitStatRow> {
        Vec::new()
    }
    /// sys.dm_exec_session_wait_stats: each live session's waits (wait types with at
    /// least one wait).
    fn session_wait_stats(&self) -> Vec<WaitStatRow> {
        Vec::new()
    }
    /// sys.dm_io_virtual_file_stats(database_id, file_id); `None` (NULL) matches all.
    fn virtual_file_stats(&self, db: Option<DbId>, file_id: Option<i32>) -> Vec<FileStatRow> {
        let _ = (db, file_id);
        Vec::new()
    }
    /// sys.dm_exec_sessions, each with its running request (sys.dm_exec_requests).
    fn sessions(&self) -> Vec<SessionRow> {
        Vec::new()
    }
    /// sys.dm_os_performance_counters.
    fn performance_counters(&self) -> Vec<CounterRow> {
        Vec::new()
    }
    /// DBCC SQLPERF(LOGSPACE): every online database's log size and use.
    fn log_space(&self) -> Vec<LogSpaceRow> {
        Vec::new()
    }
    /// sys.dm_tran_locks: every lock request of every database's lock manager.
    fn locks(&self) -> Vec<LockRow> {
        Vec::new()
    }
    /// sys.allocation_units: the allocation units of a database's tables and indexes.
    fn allocation_units(&self, _db: DbId) -> Vec<AllocationUnitRow> {
        Vec::new()
    }
    /// sys.dm_os_sys_info and the values of sys.configurations the instance has.
    fn sys_info(&self) -> Option<SysInfo> {
        None
    }
    /// DBCC SQLPERF('sys.dm_os_wait_stats' | 'sys.dm_os_latch_stats', CLEAR).
    fn clear_stats(&mut self, what: ClearStats) -> HostResult<()> {
        let _ = what;
        Ok(())
    }
}

/// Who the session is (login, sysadmin, @@SPID, @@SERVERNAME) and the server's logins
/// (they live in master, outside any user transaction).
pub trait Logins {
    /// @@SERVERNAME.
    fn server_name(&self) -> String {
        "MESQUITE".to_string()
    }
    /// @@SPID.
    fn session_id(&self) -> i32;
    /// The login's name (SUSER_SNAME, SYSTEM_USER).
    fn login_name(&self) -> String {
        "sa".to_string()
    }
    /// Whether the login may run administrative statements (sysadmin).
    fn is_sysadmin(&self) -> bool {
        true
    }
    /// CREATE LOGIN name WITH PASSWORD: 15025 if it exists, 15118 if `check_policy` and
    /// the password is not complex enough.
    fn create_login(
        &mut self,
        name: &str,
        password: &str,
        default_database: &str,
        check_policy: bool,
    ) -> HostResult<()> {
        let _ = (name, password, default_database, check_policy);
        Err(HostError::Sql(SqlError::new(40000, 16, 1, "Logins are not supported by this host.")))
    }
    /// ALTER LOGIN and ALTER SERVER ROLE sysadmin: 15151 if the login does not exist.
    fn alter_login(&mut self, name: &str, change: LoginChange) -> HostResult<()> {
        let _ = (name, change);
        Err(HostError::Sql(SqlError::new(40000, 16, 1, "Logins are not supported by this host.")))
    }
    /// DROP LOGIN: 15151 if it does not exist, 15434 if it has a session.
    fn drop_login(&mut self, name: &str) -> HostResult<()> {
        let _ = name;
        Err(HostError::Sql(SqlError::new(40000, 16, 1, "Logins are not supported by this host.")))
    }
    /// Every login (sys.server_principals, sys.sql_logins).
    fn logins(&mut self) -> HostResult<Vec<LoginInfo>> {
        Ok(vec![LoginInfo {
            principal_id: 1,
            name: self.login_name(),
            disabled: false,
            sysadmin: true,
            policy_checked: true,
            default_database: "master".into(),
            create_date: Value::Null,
            modify_date: Value::Null,
        }])
    }
}

/// Everything the executor asks of its host for one session.
/// Sequence objects' values (see `exec::sequence`): persisted outside the session's
/// transaction, committed at once, since SQL Server never gives a value back on rollback.
pub trait Sequences {
    /// The bound a sequence persisted last (the highest value it may have handed out)
    /// and the restart count it was persisted under; None if it has none.
    fn sequence_bound(&mut self, db: DbId, object_id: i32) -> HostResult<Option<(u32, i128)>>;
    /// Persists a sequence's bound, in a transaction of its own committed at once.
    fn set_sequence_bound(&mut self, db: DbId, object_id: i32, restarts: u32, bound: i128) -> HostResult<()>;
}

pub trait Host: DataAccess + Transactions + InstanceAdmin + Diagnostics + Logins + Sequences {}

impl<T: DataAccess + Transactions + InstanceAdmin + Diagnostics + Logins + Sequences + ?Sized> Host for T {}

/// A server login as the catalog views see it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginInfo {
    pub principal_id: i32,
    pub name: String,
    pub disabled: bool,
    /// Member of the sysadmin fixed server role.
    pub sysadmin: bool,
    pub policy_checked: bool,
    pub default_database: String,
    /// datetime values.
    pub create_date: Value,
    pub modify_date: Value,
}

/// One change of ALTER LOGIN (or of ALTER SERVER ROLE sysadmin ADD/DROP MEMBER).
#[derive(Debug, Clone, PartialEq)]
pub enum LoginChange {
    Password { new: String, check_policy: bool },
    Enable,
    Disable,
    DefaultDatabase(String),
    Name(String),
    CheckPolicy(bool),
    Sysadmin(bool),
}

/// A durable commit whose wait for the log flush was put off: its COMMIT record is in
/// the log buffer and its transaction keeps its locks until the record is on disk.
pub trait DeferredCommit: Send {
    /// Waits for the flush on this thread (WRITELOG) and completes the commit.
    fn wait(self: Box<Self>) -> Result<(), SqlError>;
    /// Completes the commit once it is durable and then runs `then` with the outcome,
    /// on the log writer's thread (or at once on this one if it is durable already).
    fn when_durable(self: Box<Self>, then: Box<dyn FnOnce(Result<(), SqlError>) + Send>);
}

/// Where a session leaves the durable commit that ended its request, for the connection
/// to take with the reply: a connection thread hands the reply to the log writer, which
/// sends it once the commit is durable, instead of sleeping until the flush and waking
/// to send it (architecture.md, "Commit replies from the log writer"). Shared by the
/// session's host, which puts the commit here, and the connection, which takes it after
/// the request or settles it before writing any packet.
#[derive(Default)]
pub struct CommitGate {
    pending: parking_lot::Mutex<Option<Box<dyn DeferredCommit>>>,
    /// `pending` is Some (a check without the lock, made before every statement).
    armed: std::sync::atomic::AtomicBool,
}

impl CommitGate {
    /// Leaves a deferred commit here. One that was here already is settled first: an
    /// earlier commit must be durable before a later one is acknowledged.
    pub fn put(&self, commit: Box<dyn DeferredCommit>) -> Result<(), SqlError> {
        let r = self.settle();
        *self.pending.lock() = Some(commit);
        self.armed.store(true, std::sync::atomic::Ordering::Release);
        r
    }

    /// The deferred commit, if any, for the caller to wait on or hand on.
    pub fn take(&self) -> Option<Box<dyn DeferredCommit>> {
        if !self.armed.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        self.armed.store(false, std::sync::atomic::Ordering::Release);
        self.pending.lock().take()
    }

    /// Waits for the deferred commit, if any.
    pub fn settle(&self) -> Result<(), SqlError> {
        self.take().map_or(Ok(()), |c| c.wait())
    }
}
