//! The instance: one data directory, one buffer pool, the system databases and the user
//! databases of the database directory, sessions and logins.
//!
//! # Start
//!
//! 1. The data directory is locked (`mesquite.lock`, see [`crate::config`]) and the
//!    error log installed (`log/ERRORLOG`).
//! 2. First start (no `mastlog.ldf`): master, tempdb, model and msdb are created with
//!    SQL Server's file names, their directory rows and the `sa` login are written to
//!    master's system table in one transaction. Later starts open master (running
//!    recovery), read the directory and open every database with recovery; tempdb's files
//!    are deleted and tempdb is created again, empty, as SQL Server does. A system
//!    database missing from the directory (a crash during the first start) is created.
//! 3. Each database gets its background checkpoint task (automatic when
//!    TARGET_RECOVERY_TIME is 0, else indirect) and its catalog is loaded from its
//!    catalog index.
//!
//! # Stop
//!
//! [`Instance::shutdown`] checkpoints and closes every database (the next start has
//! nothing to redo). Dropping the last reference without `shutdown` is, for the files,
//! a crash: dirty pages are not written and the next start runs recovery.
//!
//! # Decisions
//!
//! - `FILENAME`s are mapped to a file of the same base name directly under the data
//!   directory (`C:\Program Files\...\DATA\Sales.mdf` -> `<data>/Sales.mdf`), so scripts
//!   written for SQL Server run unchanged and every file of the instance is in one place.
//! - CREATE / ALTER / DROP DATABASE run in their own transactions on master, whatever
//!   transaction the session has open (SQL Server refuses them inside a user transaction;
//!   the executor enforces that).
//! - A CREATE DATABASE cut short by a crash after its files were created and before its
//!   directory row was committed leaves the files behind (a later CREATE with the same
//!   file names fails with 5170 until they are deleted).
//! - Each database has its own lock manager: a deadlock spanning two databases is not
//!   detected (it ends at the sessions' LOCK_TIMEOUT).

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI16, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use parking_lot::{Mutex, RwLock};
use sql::ast::{
    AlterDatabase, AlterDatabaseAction, CreateDatabase, DatabaseOption, FileSpec as AstFileSpec, MaxSize, Size,
    SizeUnit,
};
use sql::catalog::{catalog_index_columns, Catalog, SharedCatalog};
use sql::host::{DatabaseInfo, DbId, FileInfo, IndexRef, Transactions};
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FileSystem, MemFs, OsFs};
use storage::BufferPool;
use txn::access::LockedIndex;
use txn::recovery::LogSpec;
use txn::xact::{DelayedDurability, TxnDb};
use txn::LogConfig;

use crate::config::{DataDirLock, InstanceConfig, DEFAULT_MEMORY_LIMIT};
use crate::directory::{
    self, DbRecord, FileRecord, PageVerify, RecoveryModel, CATALOG_OBJECT_ID, KEY_DATABASE, SYSTEM_TABLE_OBJECT_ID,
};
use crate::error::{EngineError, Result};
use crate::host::EngineHost;
use crate::login::{self, LoginRecord};
use crate::rows::RowCodec;

mod files;
use files::*;

pub const MASTER: DbId = 1;
pub const TEMPDB: DbId = 2;
pub const MODEL: DbId = 3;
pub const MSDB: DbId = 4;
/// The first session id handed to a user session, as in SQL Server.
pub const FIRST_USER_SPID: i32 = 51;

/// Failed logins in a row that lock a CHECK_POLICY login out (the account lockout
/// threshold of Windows' policy, which SQL Server applies; 10 as in current Windows).
pub const LOGIN_LOCKOUT_THRESHOLD: u32 = 10;
/// How long a locked-out login stays locked (Windows' default lockout duration).
pub const LOGIN_LOCKOUT_DURATION: std::time::Duration = std::time::Duration::from_secs(600);

const RUNNING: u8 = 0;
const STOPPED: u8 = 1;

/// Pages per MB.
const MB: u32 = 128;

/// One open database.
pub(crate) struct DbHandle {
    pub id: DbId,
    pub txn: Arc<TxnDb>,
    pub record: RwLock<DbRecord>,
    pub catalog: Arc<SharedCatalog>,
    pub catalog_hobt: u64,
    /// The system table (see `directory.rs`), accessed without row locks: only DDL
    /// writes it, one key per index or database.
    pub system: BTree,
    trees: Mutex<HashMap<u64, LockedIndex>>,
    lob_units: Mutex<HashMap<u64, Option<u64>>>,
    codecs: Mutex<HashMap<u64, Arc<RowCodec>>>,
    /// Host transactions that have begun a transaction here (DROP DATABASE's "in use").
    pub active_txns: AtomicUsize,
}

impl DbHandle {
    /// A database just created or opened, with its options applied.
    pub(super) fn new(r: &DbRecord, txn: Arc<TxnDb>, system: BTree, catalog_hobt: u64) -> Arc<DbHandle> {
        let h = Arc::new(DbHandle {
            id: r.id,
            txn,
            record: RwLock::new(r.clone()),
            catalog: Arc::new(SharedCatalog::new(Catalog::new())),
            catalog_hobt,
            system,
            trees: Mutex::new(HashMap::new()),
            lob_units: Mutex::new(HashMap::new()),
            codecs: Mutex::new(HashMap::new()),
            active_txns: AtomicUsize::new(0),
        });
        apply_options(&h);
        h
    }

    pub fn name(&self) -> String {
        self.record.read().name.clone()
    }

    /// The HoBT of the database's system table.
    pub fn system_hobt(&self) -> u64 {
        self.system.alloc_unit_id()
    }

    pub fn read_only(&self) -> bool {
        self.record.read().read_only
    }

    /// The locked access handle of a HoBT (cached; handles are cheap clones).
    pub fn index(&self, hobt: u64) -> Result<LockedIndex> {
        if let Some(i) = self.trees.lock().get(&hobt) {
            return Ok(i.clone());
        }
        let tree = BTree::open(&self.txn.db, hobt, BTreeOptions { unique: true })?;
        let li = LockedIndex::new(&self.txn, tree)?;
        self.trees.lock().insert(hobt, li.clone());
        Ok(li)
    }

    /// The row codec for an index's stored columns (cached per HoBT while its columns
    /// stay the same).
    pub fn codec(&self, index: &IndexRef) -> Result<Arc<RowCodec>> {
        let mut c = self.codecs.lock();
        if let Some(codec) = c.get(&index.hobt) {
            if Arc::ptr_eq(&codec.columns, &index.columns) || *codec.columns == *index.columns {
                return Ok(codec.clone());
            }
        }
        let codec = Arc::new(RowCodec::new(index.columns.clone())?);
        c.insert(index.hobt, codec.clone());
        Ok(codec)
    }

    /// The LOB allocation unit of an index (None: the index has no variable-length
    /// column, so nothing of it is ever stored off-row).
    pub fn lob_unit(&self, hobt: u64) -> Result<Option<u64>> {
        if let Some(u) = self.lob_units.lock().get(&hobt) {
            return Ok(*u);
        }
        let u = self
            .system
            .get(&directory::lob_unit_key(hobt))?
            .and_then(|v| v.get(..8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes));
        self.lob_units.lock().insert(hobt, u);
        Ok(u)
    }

    pub fn forget_lob_unit_cache(&self, hobt: u64) {
        self.lob_units.lock().remove(&hobt);
    }

    pub fn remember_lob_unit(&self, hobt: u64, unit: Option<u64>) {
        self.lob_units.lock().insert(hobt, unit);
    }

    /// Forgets the cached handles of a dropped index.
    pub fn forget_index(&self, hobt: u64) {
        self.trees.lock().remove(&hobt);
        self.codecs.lock().remove(&hobt);
        self.lob_units.lock().remove(&hobt);
    }

    pub fn catalog_index(&self) -> IndexRef {
        IndexRef {
            db: self.id,
            hints: Default::default(),
            hobt: self.catalog_hobt,
            object_id: CATALOG_OBJECT_ID as i32,
            index_id: 1,
            columns: catalog_index_columns().into(),
        }
    }

    pub fn info(&self) -> DatabaseInfo {
        let r = self.record.read();
        DatabaseInfo {
            id: self.id,
            name: r.name.clone(),
            state: "ONLINE",
            recovery_model: r.recovery.desc(),
            delayed_durability: r.delayed.desc(),
            target_recovery_time_seconds: r.target_recovery_time,
            read_only: r.read_only,
            page_verify: r.page_verify.desc(),
            collation: r.collation,
            log_reuse_wait: self.txn.log.log_reuse_wait().name(),
            create_date: r.create_date(),
            catalog_index: self.catalog_index(),
        }
    }
}

/// What the instance knows about each session (for DROP DATABASE's "in use" and, later,
/// sys.dm_exec_sessions).
pub(crate) struct SessionSlot {
    pub database: AtomicI16,
    pub login: String,
    /// What the DMVs show of the session (see `dmv.rs`).
    pub activity: crate::dmv::SessionActivity,
    /// The session's cancel flag (its requests poll it; KILL sets it).
    pub cancel: Arc<std::sync::atomic::AtomicBool>,
    /// Set by KILL: the session runs nothing more and its connection closes.
    pub killed: std::sync::atomic::AtomicBool,
    /// The session came through the dedicated admin connection (at most one does).
    pub dedicated_admin: bool,
    /// How KILL wakes the session's connection (set by the server: it shuts the
    /// connection's socket, which ends an idle read and a blocked write alike).
    pub on_kill: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
}

/// A running instance. See the module doc.
pub struct Instance {
    data_dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    pool: Arc<BufferPool>,
    log_config: LogConfig,
    dbs: RwLock<BTreeMap<DbId, Arc<DbHandle>>>,
    /// Databases of the directory that could not be opened at start: their ids, names
    /// and files stay reserved.
    offline: RwLock<BTreeMap<DbId, DbRecord>>,
    /// Serialises CREATE / ALTER / DROP DATABASE and directory writes.
    ddl: Mutex<()>,
    sessions: Mutex<BTreeMap<i32, Arc<SessionSlot>>>,
    first_sa_password: Option<String>,
    /// Upper-cased login -> fingerprint of the last password verified (see `login.rs`).
    verified: Mutex<HashMap<String, [u8; 32]>>,
    /// Consecutive failed logins per login (upper-cased name) and when it was locked
    /// out (CHECK_POLICY; see [`Instance::authenticate`]). In memory: a restart unlocks.
    lockouts: Mutex<HashMap<String, (u32, Option<std::time::Instant>)>>,
    lock: Mutex<Option<DataDirLock>>,
    error_log_installed: bool,
    state: AtomicU8,
    next_descriptor: AtomicU64,
    killed: AtomicBool,
    /// When the instance started (sys.dm_os_sys_info): wall clock and monotonic ms.
    pub(crate) started_at: (SystemTime, i64),
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").field("data_dir", &self.data_dir).finish()
    }
}

fn now_datetime() -> (i32, u32) {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    // 1970-01-01 is day 25,567 after 1900-01-01.
    let days = (d.as_secs() / 86_400) as i32 + 25_567;
    let ms_of_day = (d.as_millis() % 86_400_000) as u64;
    (days, (ms_of_day * 300 / 1000) as u32)
}

/// The directory rows of the system databases on a new instance (SQL Server's names).
fn system_record(id: DbId) -> DbRecord {
    let (create_days, create_ticks) = now_datetime();
    let (name, data, data_file, log, log_file, recovery) = match id {
        MASTER => ("master", "master", "master.mdf", "mastlog", "mastlog.ldf", RecoveryModel::Simple),
        TEMPDB => ("tempdb", "tempdev", "tempdb.mdf", "templog", "templog.ldf", RecoveryModel::Simple),
        MODEL => ("model", "modeldev", "model.mdf", "modellog", "modellog.ldf", RecoveryModel::Full),
        _ => ("msdb", "MSDBData", "MSDBData.mdf", "MSDBLog", "MSDBLog.ldf", RecoveryModel::Simple),
    };
    DbRecord {
        id,
        name: name.to_string(),
        create_days,
        create_ticks,
        recovery,
        delayed: DelayedDurability::Disabled,
        target_recovery_time: 60,
        read_only: false,
        page_verify: PageVerify::Checksum,
        files: vec![
            // Small files growing by 10%, as SQL Server's system databases.
            file_record(1, 0, data, data_file, 4 * MB, 10, true),
            file_record(2, 1, log, log_file, MB, 10, true),
        ],
        // The instance's collation (SERVERPROPERTY('Collation')).
        collation: types::Collation::DEFAULT,
    }
}

impl Instance {
    /// Starts an instance (see the module doc). Fails with a clear message when another
    /// instance holds the data directory.
    pub fn start(config: InstanceConfig) -> std::result::Result<Arc<Instance>, types::SqlError> {
        Self::start_inner(config).map_err(|e| e.to_sql_error())
    }

    fn start_inner(config: InstanceConfig) -> Result<Arc<Instance>> {
        let started = Instant::now();
        let (fs, on_os): (Arc<dyn FileSystem>, bool) = match (&config.filesystem, config.in_memory) {
            (Some(fs), _) => (fs.clone(), false),
            (None, true) => (Arc::new(MemFs::new()), false),
            (None, false) => (Arc::new(OsFs), true),
        };
        let lock = if on_os { Some(DataDirLock::acquire(&config.data_dir)?) } else { None };
        let mut error_log_installed = false;
        if on_os && config.error_log_file {
            match diag::errorlog::install(&config.data_dir.join("log"), diag::errorlog::DEFAULT_ARCHIVES) {
                Ok(()) => error_log_installed = true,
                // The error log must never keep the instance from starting.
                Err(e) => eprintln!("cannot write the error log under {}: {e}", config.data_dir.display()),
            }
        }
        diag::errorlog::log("Server", &format!("Mesquite {} starting.", env!("CARGO_PKG_VERSION")));
        diag::errorlog::log("Server", &format!("Data directory: {}.", config.data_dir.display()));
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let schedulers = config.schedulers.unwrap_or(cpus);
        diag::sched::schedulers().configure(schedulers);
        // Query memory (sorts, hash tables, groups) as large as the buffer pool; one
        // request may take a quarter of it (see sql::exec::set_pool_bytes).
        sql::exec::set_pool_bytes(config.memory_limit_bytes.unwrap_or(DEFAULT_MEMORY_LIMIT));
        diag::errorlog::log(
            "Server",
            &format!("Mesquite detected {cpus} CPUs; {schedulers} schedulers run session workers (0: unscheduled)."),
        );
        let memory = config.memory_limit_bytes.unwrap_or(DEFAULT_MEMORY_LIMIT);
        let pool = BufferPool::with_memory_limit(memory);
        pool.start_lazy_writer();
        let first_start = !fs.exists(&config.data_dir.join("mastlog.ldf"));
        if first_start && fs.exists(&config.data_dir.join("master.mdf")) {
            return Err(EngineError::DataDirectory(format!(
                "{} holds a master.mdf without its log mastlog.ldf: the directory was made by an older Mesquite or is damaged; move it away or choose another data directory",
                config.data_dir.display()
            )));
        }
        let sa_password =
            config.sa_password.clone().or_else(|| std::env::var("MESQUITE_SA_PASSWORD").ok().filter(|p| !p.is_empty()));
        let mut inst = Instance {
            data_dir: config.data_dir.clone(),
            fs,
            pool,
            log_config: LogConfig::default(),
            dbs: RwLock::new(BTreeMap::new()),
            offline: RwLock::new(BTreeMap::new()),
            ddl: Mutex::new(()),
            sessions: Mutex::new(BTreeMap::new()),
            first_sa_password: None,
            verified: Mutex::new(HashMap::new()),
            lockouts: Mutex::new(HashMap::new()),
            lock: Mutex::new(lock),
            error_log_installed,
            state: AtomicU8::new(RUNNING),
            next_descriptor: AtomicU64::new(1),
            killed: AtomicBool::new(false),
            started_at: (SystemTime::now(), crate::dmv::ms_ticks()),
        };
        // Open or create master, then read the directory.
        let master = if first_start {
            inst.create_files(&system_record(MASTER))?
        } else {
            inst.open_files(&system_record(MASTER))?
        };
        let mut records = read_directory(&master)?;
        let had_master_row = records.contains_key(&MASTER);
        let master_record = records.remove(&MASTER).unwrap_or_else(|| system_record(MASTER));
        *master.record.write() = master_record.clone();
        apply_options(&master);
        inst.dbs.write().insert(MASTER, master.clone());
        let mut new_rows: Vec<DbRecord> = Vec::new();
        if !had_master_row {
            new_rows.push(master_record);
        }
        for id in [TEMPDB, MODEL, MSDB] {
            match records.remove(&id) {
                Some(mut r) if id == TEMPDB => {
                    // tempdb is new at every start (sys.databases shows the start time).
                    (r.create_days, r.create_ticks) = now_datetime();
                    diag::errorlog::log("spid0s", "Clearing tempdb database.");
                    inst.remove_files(&r);
                    let h = inst.create_files(&r)?;
                    diag::errorlog::log("spid0s", "Starting up database 'tempdb'.");
                    inst.dbs.write().insert(id, h);
                }
                Some(r) => {
                    let h = inst.open_files(&r)?;
                    inst.dbs.write().insert(id, h);
                }
                None => {
                    let r = system_record(id);
                    inst.remove_files(&r);
                    let h = inst.create_files(&r)?;
                    inst.dbs.write().insert(id, h);
                    new_rows.push(r);
                }
            }
        }
        for (id, r) in records {
            match inst.open_files(&r) {
                Ok(h) => {
                    inst.dbs.write().insert(id, h);
                }
                Err(e) => {
                    // One damaged user database must not keep the instance down (SQL
                    // Server marks it SUSPECT / RECOVERY_PENDING and goes on).
                    diag::errorlog::log(
                        "spid0s",
                        &format!("Database '{}' (database ID {id}) cannot be opened and is left offline: {e}", r.name),
                    );
                    inst.offline.write().insert(id, r);
                }
            }
        }
        // The sa login: created on the first start (or if missing).
        let sa_row = master.system.get(&directory::login_key("sa"))?;
        let mut sa_record = None;
        if sa_row.is_none() {
            let (password, generated) = match sa_password {
                Some(p) => (p, false),
                None => (login::generate_password().map_err(|e| io_error("generating the sa password", e))?, true),
            };
            sa_record = Some(LoginRecord::new("sa", &password).map_err(|e| io_error("reading the random source", e))?);
            if generated {
                inst.first_sa_password = Some(password);
            }
        }
        let inst = Arc::new(inst);
        if !new_rows.is_empty() || sa_record.is_some() {
            inst.master_write(|system| {
                for r in &new_rows {
                    upsert(system, &DbRecord::key(r.id), &r.encode())?;
                }
                if let Some(l) = &sa_record {
                    upsert(system, &directory::login_key(&l.name), &l.encode())?;
                }
                Ok(())
            })?;
        }
        // Catalogs, then the background checkpoint tasks.
        for db in inst.dbs.read().values().cloned().collect::<Vec<_>>() {
            inst.load_catalog(&db)?;
            db.txn.start_background_checkpoints();
        }
        diag::errorlog::log(
            "Server",
            &format!(
                "Mesquite is ready: {} databases online in {} ms.",
                inst.dbs.read().len(),
                started.elapsed().as_millis()
            ),
        );
        Ok(inst)
    }

    /// The `sa` password generated at this instance's first start (no password was
    /// configured): shown once by the CLI and never stored in plain text.
    pub fn first_start_sa_password(&self) -> Option<&str> {
        self.first_sa_password.as_deref()
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The buffer pool (sys.dm_os_buffer_descriptors, benchmarks).
    pub fn buffer_pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// The transaction layer's database (checkpoint statistics, tests, DMVs).
    pub fn txn_database(&self, id: DbId) -> Option<Arc<TxnDb>> {
        self.dbs.read().get(&id).map(|d| d.txn.clone())
    }

    /// DB_ID(name).
    pub fn database_id(&self, name: &str) -> Option<DbId> {
        self.dbs.read().values().find(|d| d.name().eq_ignore_ascii_case(name)).map(|d| d.id)
    }

    pub fn databases(&self) -> Vec<DatabaseInfo> {
        self.dbs.read().values().map(|d| d.info()).collect()
    }

    pub(crate) fn is_running(&self) -> bool {
        self.state.load(Ordering::Acquire) == RUNNING
    }

    pub(crate) fn db(&self, id: DbId) -> Result<Arc<DbHandle>> {
        if !self.is_running() {
            return Err(EngineError::ShuttingDown);
        }
        self.dbs.read().get(&id).cloned().ok_or_else(|| EngineError::NoSuchDatabase(id.to_string()))
    }

    pub(crate) fn next_descriptor(&self) -> u64 {
        self.next_descriptor.fetch_add(1, Ordering::Relaxed)
    }

    fn load_catalog(self: &Arc<Self>, db: &Arc<DbHandle>) -> Result<()> {
        let mut host = EngineHost::system(self.clone());
        host.begin("load catalog").map_err(host_err)?;
        let r = Catalog::load(&mut host, &db.catalog_index());
        let _ = host.commit(None);
        *db.catalog.inner.write() = r?;
        Ok(())
    }

    /// Runs `f` on master's system table in a transaction of its own and commits it.
    pub(crate) fn master_write(&self, f: impl FnOnce(&BTree) -> storage::Result<()>) -> Result<()> {
        let master = self.dbs.read().get(&MASTER).cloned().ok_or(EngineError::ShuttingDown)?;
        let t = master.txn.begin("sysdbreg", 0)?;
        {
            let _scope = t.enter();
            f(&master.system)?;
        }
        t.commit(false)?;
        Ok(())
    }

    // ---- sessions and logins -------------------------------------------------------

    pub(crate) fn register_session(
        &self,
        login: &str,
        database: DbId,
        cancel: Arc<std::sync::atomic::AtomicBool>,
        dedicated_admin: bool,
    ) -> std::result::Result<(i32, Arc<SessionSlot>), types::SqlError> {
        let mut s = self.sessions.lock();
        if dedicated_admin && s.values().any(|v| v.dedicated_admin) {
            return Err(types::SqlError::new(
                17810,
                20,
                1,
                "Could not connect because the maximum number of '1' dedicated administrator connections already exists. Before a new connection can be made, the existing dedicated administrator connection must be dropped, either by logging off or ending the process.",
            ));
        }
        // SQL Server reuses the lowest free session id.
        let mut spid = FIRST_USER_SPID;
        for k in s.keys() {
            if *k == spid {
                spid += 1;
            } else if *k > spid {
                break;
            }
        }
        let slot = Arc::new(SessionSlot {
            database: AtomicI16::new(database),
            login: login.to_string(),
            activity: crate::dmv::SessionActivity::new(),
            cancel,
            killed: std::sync::atomic::AtomicBool::new(false),
            dedicated_admin,
            on_kill: Mutex::new(None),
        });
        s.insert(spid, slot.clone());
        diag::counters().user_connections.inc();
        Ok((spid, slot))
    }

    /// KILL `target` from session `killer`: the target's running request is cancelled
    /// (a lock or WAITFOR wait included), its connection is closed, and dropping the
    /// session rolls its transaction back and frees its worker. With `status_only`, only
    /// the report of a rollback in progress (Msg 6120 when there is none).
    pub fn kill_session(
        &self,
        killer: i32,
        target: i32,
        status_only: bool,
    ) -> std::result::Result<Option<String>, types::SqlError> {
        if target == killer {
            return Err(types::SqlError::new(6104, 16, 1, "Cannot use KILL to kill your own process."));
        }
        let slot = self.sessions.lock().get(&target).cloned();
        let Some(slot) = slot else {
            if (1..FIRST_USER_SPID).contains(&target) {
                return Err(types::SqlError::new(6107, 14, 1, "Only user processes can be killed."));
            }
            return Err(types::SqlError::new(6106, 16, 2, format!("Process ID {target} is not an active process ID.")));
        };
        let killed = slot.killed.load(std::sync::atomic::Ordering::Acquire);
        if status_only {
            // A killed session still listed is ending: its rollback is under way.
            if killed {
                return Ok(Some(format!(
                    "SPID {target}: transaction rollback in progress. Estimated rollback completion: 0%. Estimated time remaining: 0 seconds."
                )));
            }
            return Err(types::SqlError::new(
                6120,
                16,
                1,
                format!(
                    "Status report cannot be obtained. Rollback operation for Process ID {target} is not in progress."
                ),
            ));
        }
        slot.killed.store(true, std::sync::atomic::Ordering::Release);
        slot.cancel.store(true, std::sync::atomic::Ordering::Release);
        if let Some(wake) = &*slot.on_kill.lock() {
            wake();
        }
        diag::errorlog::log(&format!("spid{killer}"), &format!("Process ID {target} was killed by session {killer}."));
        Ok(None)
    }

    pub(crate) fn unregister_session(&self, spid: i32) {
        if self.sessions.lock().remove(&spid).is_some() {
            diag::counters().user_connections.dec();
        }
    }

    /// Where sorts that outgrow their memory grant write their runs: `spill` in the data
    /// directory (tempdb's place), or the system's temporary directory for an instance
    /// kept in memory.
    pub fn spill_dir(&self) -> PathBuf {
        if self.lock.lock().is_some() {
            self.data_dir.join("spill")
        } else {
            std::env::temp_dir().join("mesquite-spill")
        }
    }

    /// The sessions, by session id (the DMVs).
    pub(crate) fn session_slots(&self) -> Vec<(i32, Arc<SessionSlot>)> {
        self.sessions.lock().iter().map(|(k, v)| (*k, v.clone())).collect()
    }

    /// Number of user sessions.
    pub fn session_count(&self) -> usize {
        self.sessions.lock().len()
    }

    /// Checks a SQL login's password (18456 and an error log line without the password
    /// when it does not match; 18470 when the login is disabled). Returns the login.
    pub(crate) fn authenticate(&self, login: &str, password: &str) -> Result<LoginRecord> {
        if !self.is_running() {
            return Err(EngineError::ShuttingDown);
        }
        let key = login.to_uppercase();
        let fail = |reason: &str| {
            diag::errorlog::log(
                "Logon",
                &format!("Login failed for user '{login}'. Reason: {reason} [CLIENT: <local machine>]"),
            );
            EngineError::LoginFailed(login.to_string())
        };
        let Some(rec) = self.login_record(login)? else {
            // As slow as a wrong password for a login that exists, so that the time a
            // failure takes does not tell which logins exist.
            let _ = crate::login::pbkdf2_sha256(password.as_bytes(), b"no such login salt", crate::login::ITERATIONS);
            return Err(fail("Could not find a login matching the name provided."));
        };
        // CHECK_POLICY = ON: LOGIN_LOCKOUT_THRESHOLD failures in a row lock the login out
        // for LOGIN_LOCKOUT_DURATION (Windows' account lockout policy, which SQL Server
        // applies; ALTER LOGIN ... WITH PASSWORD unlocks).
        if rec.policy_checked {
            let mut l = self.lockouts.lock();
            if let Some((_, Some(at))) = l.get(&key) {
                if at.elapsed() < LOGIN_LOCKOUT_DURATION {
                    diag::errorlog::log(
                        "Logon",
                        &format!("Login failed for user '{login}' because the account is currently locked out. The system administrator can unlock it. [CLIENT: <local machine>]"),
                    );
                    return Err(EngineError::Sql(types::SqlError::new(
                        18486,
                        14,
                        1,
                        format!("Login failed for user '{}' because the account is currently locked out. The system administrator can unlock it.", rec.name),
                    )));
                }
                l.remove(&key);
            }
        }
        let fp = rec.fingerprint(password);
        if self.verified.lock().get(&key) != Some(&fp) {
            if !rec.verify(password) {
                if rec.policy_checked {
                    let mut l = self.lockouts.lock();
                    let e = l.entry(key.clone()).or_insert((0, None));
                    e.0 += 1;
                    if e.0 >= LOGIN_LOCKOUT_THRESHOLD {
                        e.1 = Some(std::time::Instant::now());
                    }
                }
                return Err(fail("Password did not match that for the login provided."));
            }
            self.verified.lock().insert(key.clone(), fp);
        }
        self.lockouts.lock().remove(&key);
        if rec.disabled {
            diag::errorlog::log(
                "Logon",
                &format!("Login failed for user '{login}'. Reason: The account is disabled. [CLIENT: <local machine>]"),
            );
            return Err(EngineError::Sql(types::SqlError::new(
                18470,
                14,
                1,
                format!("Login failed for user '{}'. Reason: The account is disabled.", rec.name),
            )));
        }
        Ok(rec)
    }

    /// A login's stored record, if it exists.
    pub(crate) fn login_record(&self, login: &str) -> Result<Option<LoginRecord>> {
        let master = self.db(MASTER)?;
        let Some(row) = master.system.get(&directory::login_key(login))? else {
            return Ok(None);
        };
        let rec = LoginRecord::decode(&row).ok_or_else(|| EngineError::CorruptSystemTable {
            db: MASTER,
            detail: format!("the login row of '{login}' does not decode"),
        })?;
        Ok(Some(rec))
    }

    /// Every login, by name.
    pub fn logins(&self) -> Result<Vec<LoginRecord>> {
        let master = self.db(MASTER)?;
        let lo = [directory::KEY_LOGIN];
        let hi = [directory::KEY_LOGIN + 1];
        let mut cur = master.system.range(Bound::Included(&lo[..]), Bound::Excluded(&hi[..]));
        let mut out = Vec::new();
        while let Some((_, v)) = cur.next_entry()? {
            out.push(LoginRecord::decode(v).ok_or_else(|| EngineError::CorruptSystemTable {
                db: MASTER,
                detail: "a login row does not decode".into(),
            })?);
        }
        Ok(out)
    }

    /// CREATE LOGIN (see [`sql::host::Logins::create_login`]).
    pub fn create_login(
        &self,
        name: &str,
        password: &str,
        default_database: &str,
        check_policy: bool,
    ) -> std::result::Result<(), types::SqlError> {
        let _ddl = self.ddl.lock();
        if self.login_record(name)?.is_some() {
            return Err(types::SqlError::new(15025, 16, 2, format!("The server principal '{name}' already exists.")));
        }
        check_password_policy(password, check_policy)?;
        let next_id = self.logins()?.iter().map(|l| l.principal_id).max().unwrap_or(0).max(255) + 1;
        let mut rec = LoginRecord::new(name, password).map_err(|e| io_error("reading the random source", e))?;
        rec.principal_id = next_id;
        rec.sysadmin = false;
        rec.policy_checked = check_policy;
        rec.default_database = default_database.to_string();
        self.master_write(|system| upsert(system, &directory::login_key(name), &rec.encode()))?;
        Ok(())
    }

    /// A password change at login (LOGIN7's ChangePassword): the old password must be
    /// the login's; the new one meets the policy when the login's is checked.
    pub fn change_password(&self, login: &str, old: &str, new: &str) -> std::result::Result<(), types::SqlError> {
        let rec = self.authenticate(login, old)?;
        let change = sql::host::LoginChange::Password { new: new.to_string(), check_policy: true };
        self.alter_login(&rec.name, change)
    }

    /// ALTER LOGIN / ALTER SERVER ROLE sysadmin (see [`sql::host::Logins::alter_login`]).
    pub fn alter_login(&self, name: &str, change: sql::host::LoginChange) -> std::result::Result<(), types::SqlError> {
        use sql::host::LoginChange;
        let _ddl = self.ddl.lock();
        let missing = || {
            types::SqlError::new(
                15151,
                16,
                1,
                format!("Cannot alter the login '{name}', because it does not exist or you do not have permission."),
            )
        };
        let mut rec = self.login_record(name)?.ok_or_else(missing)?;
        let old_key = directory::login_key(&rec.name);
        match change {
            LoginChange::Password { new, check_policy } => {
                check_password_policy(&new, check_policy && rec.policy_checked)?;
                rec.set_password(&new).map_err(|e| io_error("reading the random source", e))?;
            }
            LoginChange::Enable => rec.disabled = false,
            LoginChange::Disable => rec.disabled = true,
            LoginChange::DefaultDatabase(d) => rec.default_database = d,
            LoginChange::CheckPolicy(on) => rec.policy_checked = on,
            LoginChange::Sysadmin(on) => {
                if rec.principal_id == 1 && !on {
                    return Err(types::SqlError::new(15405, 11, 1, "Cannot use the special principal 'sa'."));
                }
                rec.sysadmin = on;
            }
            LoginChange::Name(n) => {
                if !n.eq_ignore_ascii_case(&rec.name) && self.login_record(&n)?.is_some() {
                    return Err(types::SqlError::new(
                        15025,
                        16,
                        2,
                        format!("The server principal '{n}' already exists."),
                    ));
                }
                rec.name = n;
            }
        }
        rec.modify_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let new_key = directory::login_key(&rec.name);
        self.master_write(|system| {
            if new_key != old_key {
                system.delete(&old_key)?;
            }
            upsert(system, &new_key, &rec.encode())
        })?;
        self.verified.lock().remove(&name.to_uppercase());
        self.lockouts.lock().remove(&name.to_uppercase());
        Ok(())
    }

    /// DROP LOGIN (see [`sql::host::Logins::drop_login`]).
    pub fn drop_login(&self, name: &str) -> std::result::Result<(), types::SqlError> {
        let _ddl = self.ddl.lock();
        let rec = self.login_record(name)?.ok_or_else(|| {
            types::SqlError::new(
                15151,
                16,
                1,
                format!("Cannot drop the login '{name}', because it does not exist or you do not have permission."),
            )
        })?;
        if rec.principal_id == 1 {
            return Err(types::SqlError::new(15405, 11, 1, "Cannot use the special principal 'sa'."));
        }
        if self.sessions.lock().values().any(|s| s.login.eq_ignore_ascii_case(&rec.name)) {
            return Err(types::SqlError::new(
                15434,
                16,
                1,
                format!("Could not drop login '{}' as the user is currently logged in.", rec.name),
            ));
        }
        self.master_write(|system| system.delete(&directory::login_key(name)).map(|_| ()))?;
        self.verified.lock().remove(&name.to_uppercase());
        Ok(())
    }

    /// Changes a login's password (ALTER LOGIN ... WITH PASSWORD; also for tests).
    pub fn set_login_password(&self, login: &str, password: &str) -> std::result::Result<(), types::SqlError> {
        self.alter_login(login, sql::host::LoginChange::Password { new: password.to_string(), check_policy: false })
    }

    // ---- CREATE / ALTER / DROP DATABASE ------------------------------------------------

    pub(crate) fn create_database(self: &Arc<Self>, stmt: &CreateDatabase) -> Result<DbId> {
        if stmt.attach.is_some() {
            return Err(EngineError::NotSupported("CREATE DATABASE ... FOR ATTACH".into()));
        }
        if stmt.snapshot_of.is_some() {
            return Err(EngineError::NotSupported("Database snapshots".into()));
        }
        if !stmt.filegroups.is_empty() {
            return Err(EngineError::NotSupported("Filegroups other than PRIMARY".into()));
        }
        let name = stmt.name.value.clone();
        if name.is_empty() || name.len() > 128 {
            return Err(EngineError::Sql(types::SqlError::new(
                1038,
                15,
                4,
                "An object or column name is missing or empty.",
            )));
        }
        let _ddl = self.ddl.lock();
        let offline = self.offline.read().clone();
        if self.database_id(&name).is_some() || offline.values().any(|r| r.name.eq_ignore_ascii_case(&name)) {
            return Err(EngineError::DatabaseExists(name));
        }
        let id = {
            let dbs = self.dbs.read();
            let mut id: DbId = 5;
            while dbs.contains_key(&id) || offline.contains_key(&id) {
                id = id.checked_add(1).ok_or_else(|| EngineError::NotSupported("more than 32,767 databases".into()))?;
            }
            id
        };
        let (create_days, create_ticks) = now_datetime();
        let mut record = DbRecord {
            id,
            name: name.clone(),
            create_days,
            create_ticks,
            recovery: RecoveryModel::Full,
            delayed: DelayedDurability::Disabled,
            target_recovery_time: 60,
            read_only: false,
            page_verify: PageVerify::Checksum,
            files: self.file_records(&name, &stmt.files, &stmt.log_files)?,
            // Without COLLATE, the instance's (model's) collation.
            collation: match &stmt.collation {
                Some(n) => sql::exec::collation_named(&n.value)?,
                None => types::Collation::DEFAULT,
            },
        };
        // CREATE DATABASE ... WITH options (TRUSTWORTHY, DB_CHAINING, DEFAULT_LANGUAGE,
        // ...) are accepted and have no effect: none of those settings exists yet.
        // Files must not exist (5170) and belong to no other database.
        for f in &record.files {
            let p = self.path_of(&f.path);
            let taken = self.dbs.read().values().any(|d| d.record.read().files.iter().any(|g| g.path == f.path))
                || offline.values().any(|r| r.files.iter().any(|g| g.path == f.path));
            if taken || self.fs.exists(&p) {
                return Err(EngineError::FileExists(p.display().to_string()));
            }
        }
        record.files.sort_by_key(|f| f.file_id);
        let h = self.create_files(&record)?;
        if let Err(e) = self.master_write(|s| upsert(s, &DbRecord::key(id), &record.encode())) {
            let _ = h.txn.close();
            self.remove_files(&record);
            return Err(e);
        }
        h.txn.start_background_checkpoints();
        self.dbs.write().insert(id, h);
        diag::errorlog::log("spid0s", &format!("Starting up database '{name}'."));
        Ok(id)
    }

    /// ALTER DATABASE. `own_spid` and `own_txn` describe the calling session, as for
    /// [`Instance::drop_database`] (COLLATE needs the database to itself).
    pub(crate) fn alter_database(
        self: &Arc<Self>,
        id: DbId,
        stmt: &AlterDatabase,
        own_spid: i32,
        own_txn: bool,
    ) -> Result<()> {
        let _ddl = self.ddl.lock();
        let db = self.db(id)?;
        let mut r = db.record.read().clone();
        match &stmt.action {
            AlterDatabaseAction::Set { options, .. } => {
                for o in options {
                    match o {
                        DatabaseOption::Recovery(m) => {
                            r.recovery = match m {
                                sql::ast::RecoveryModel::Simple => RecoveryModel::Simple,
                                sql::ast::RecoveryModel::Full => RecoveryModel::Full,
                                sql::ast::RecoveryModel::BulkLogged => RecoveryModel::BulkLogged,
                            }
                        }
                        DatabaseOption::DelayedDurability(d) => {
                            r.delayed = match d {
                                sql::ast::DelayedDurability::Disabled => DelayedDurability::Disabled,
                                sql::ast::DelayedDurability::Allowed => DelayedDurability::Allowed,
                                sql::ast::DelayedDurability::Forced => DelayedDurability::Forced,
                            }
                        }
                        DatabaseOption::TargetRecoveryTime { value, unit } => {
                            let secs = match unit {
                                sql::ast::TimeUnit::Seconds => *value,
                                sql::ast::TimeUnit::Minutes => value.saturating_mul(60),
                            };
                            r.target_recovery_time = secs.min(i32::MAX as u64) as i32;
                        }
                        DatabaseOption::ReadOnly => r.read_only = true,
                        DatabaseOption::ReadWrite => r.read_only = false,
                        DatabaseOption::PageVerify(p) => {
                            r.page_verify = match p {
                                sql::ast::PageVerify::Checksum => PageVerify::Checksum,
                                sql::ast::PageVerify::TornPageDetection => PageVerify::TornPageDetection,
                                sql::ast::PageVerify::None => PageVerify::None,
                            }
                        }
                        // Accepted and without effect: there is one user mode and every
                        // database is online.
                        DatabaseOption::MultiUser | DatabaseOption::Online => {}
                        DatabaseOption::SingleUser
                        | DatabaseOption::RestrictedUser
                        | DatabaseOption::Offline
                        | DatabaseOption::Emergency => {
                            return Err(EngineError::NotSupported(format!("ALTER DATABASE SET {}", option_name(o))))
                        }
                        DatabaseOption::Other(item) => {
                            return Err(EngineError::NotSupported(format!("ALTER DATABASE SET {}", item.name)))
                        }
                    }
                }
                if id == MASTER || id == TEMPDB {
                    if r.read_only {
                        return Err(EngineError::Sql(types::SqlError::new(
                            5058,
                            16,
                            6,
                            format!("Option 'READ_ONLY' cannot be set in database '{}'.", r.name),
                        )));
                    }
                }
            }
            AlterDatabaseAction::ModifyName(new) => {
                if id <= MSDB {
                    return Err(EngineError::Sql(types::SqlError::new(
                        5058,
                        16,
                        6,
                        format!("Option 'MODIFY NAME' cannot be set in database '{}'.", r.name),
                    )));
                }
                if let Some(other) = self.database_id(&new.value) {
                    if other != id {
                        return Err(EngineError::DatabaseExists(new.value.clone()));
                    }
                }
                r.name = new.value.clone();
            }
            AlterDatabaseAction::ModifyFile(spec) => {
                let name = spec.name.as_ref().and_then(|e| e.as_name()).unwrap_or("").to_string();
                let Some(f) = r.files.iter_mut().find(|f| f.logical_name.eq_ignore_ascii_case(&name)) else {
                    return Err(EngineError::NoSuchFile(name));
                };
                if spec.filename.is_some() || spec.new_name.is_some() {
                    return Err(EngineError::NotSupported("MODIFY FILE with FILENAME or NEWNAME".into()));
                }
                if let Some(g) = &spec.file_growth {
                    let (growth, pct) = growth_value(g)?;
                    f.growth = growth;
                    f.growth_is_percent = pct;
                }
                if let Some(m) = &spec.max_size {
                    f.max_size_pages = match m {
                        MaxSize::Unlimited => -1,
                        MaxSize::Size(s) => i64::from(size_pages(s)?),
                    };
                }
                let mut grow_to = None;
                if let Some(s) = &spec.size {
                    let pages = size_pages(s)?;
                    let current = current_size_pages(&db, f);
                    if u64::from(pages) <= current {
                        return Err(EngineError::Sql(types::SqlError::new(
                            5039,
                            16,
                            1,
                            "MODIFY FILE failed. Specified size is less than or equal to current size.",
                        )));
                    }
                    grow_to = Some(pages);
                }
                let f = f.clone();
                // Apply to the open file first: a refused growth changes nothing.
                if f.type_code == 0 {
                    let file = db.txn.db.files().get(f.file_id)?;
                    {
                        let mut spec = file.spec.write();
                        spec.growth = growth_of(&f);
                        spec.max_pages = (f.max_size_pages >= 0).then(|| f.max_size_pages.min(u32::MAX as i64) as u32);
                    }
                    if let Some(pages) = grow_to {
                        let add = pages.saturating_sub(file.size_pages());
                        let saved = file.spec.read().growth;
                        file.spec.write().growth = FileGrowth::Pages(add.max(1));
                        let grown = file.grow(add);
                        file.spec.write().growth = saved;
                        grown?;
                    }
                } else {
                    // The log: FILEGROWTH and MAXSIZE apply to the running log at once (a
                    // full log can grow again), SIZE grows it now.
                    let max_bytes =
                        (f.max_size_pages >= 0).then(|| (f.max_size_pages as u64).max(u64::from(MB)) * 8192);
                    let size = grow_to.map(|p| u64::from(p) * 8192);
                    db.txn.log.modify_file(growth_of(&f), max_bytes, size)?;
                }
            }
            AlterDatabaseAction::AddFiles { .. } => {
                return Err(EngineError::NotSupported("ALTER DATABASE ADD FILE".into()))
            }
            AlterDatabaseAction::RemoveFile(_) => {
                return Err(EngineError::NotSupported("ALTER DATABASE REMOVE FILE".into()))
            }
            AlterDatabaseAction::AddFilegroup(_) | AlterDatabaseAction::RemoveFilegroup(_) => {
                return Err(EngineError::NotSupported("Filegroups other than PRIMARY".into()))
            }
            AlterDatabaseAction::Collate(name) => {
                // The executor has refused system databases and schema-bound dependents
                // (it owns the catalog); the exclusive use is the instance's to check.
                r.collation = sql::exec::collation_named(&name.value)?;
                let others = self
                    .sessions
                    .lock()
                    .iter()
                    .any(|(spid, s)| *spid != own_spid && s.database.load(Ordering::Acquire) == id);
                let txns = db.active_txns.load(Ordering::Acquire).saturating_sub(usize::from(own_txn));
                if others || txns > 0 {
                    // SQL Server 2022's text (earlier versions omit the name); state 5 as
                    // SQL Server reports it for COLLATE. The executor follows it with 5072.
                    return Err(EngineError::Sql(types::SqlError::new(
                        5030,
                        16,
                        5,
                        format!("The database {} could not be exclusively locked to perform the operation.", r.name),
                    )));
                }
            }
        }
        self.master_write(|s| upsert(s, &DbRecord::key(id), &r.encode()))?;
        *db.record.write() = r;
        apply_options(&db);
        Ok(())
    }

    /// DROP DATABASE. `own_spid` and `own_txn` describe the calling session, which the
    /// executor checks itself (its current database is not published until its batch
    /// ends; its own transaction on the database is the statement's).
    pub(crate) fn drop_database(&self, id: DbId, own_spid: i32, own_txn: bool) -> Result<()> {
        let _ddl = self.ddl.lock();
        let db = self.db(id)?;
        let name = db.name();
        if id <= MSDB {
            return Err(EngineError::SystemDatabase(name));
        }
        let in_use =
            self.sessions.lock().iter().any(|(spid, s)| *spid != own_spid && s.database.load(Ordering::Acquire) == id);
        let txns = db.active_txns.load(Ordering::Acquire).saturating_sub(usize::from(own_txn));
        if in_use || txns > 0 {
            return Err(EngineError::DatabaseInUse(name));
        }
        self.master_write(|s| s.delete(&DbRecord::key(id)).map(drop))?;
        self.dbs.write().remove(&id);
        let record = db.record.read().clone();
        db.txn.stop_background_checkpoints();
        // The pages go unwritten: the files are deleted next.
        db.txn.log.shutdown();
        self.pool.discard(db.txn.db.id);
        let _ = self.pool.detach(db.txn.db.id);
        self.remove_files(&record);
        // Its files and counters stop existing: a database that reuses the id or the
        // name starts from zero.
        diag::file_registry().unregister_database(id as u16);
        diag::drop_database_counters(&name);
        diag::errorlog::log("spid0s", &format!("Database '{name}' (database ID {id}) was dropped."));
        Ok(())
    }

    // ---- shutdown ----------------------------------------------------------------------

    /// Stops the instance cleanly: every database is checkpointed and closed, the data
    /// directory unlocked. Sessions still open get errors from then on.
    pub fn shutdown(&self) -> std::result::Result<(), types::SqlError> {
        if self.state.swap(STOPPED, Ordering::AcqRel) != RUNNING {
            return Ok(());
        }
        diag::errorlog::log("Server", "Mesquite is shutting down: checkpointing every database.");
        let dbs: Vec<Arc<DbHandle>> = std::mem::take(&mut *self.dbs.write()).into_values().collect();
        let mut first_err = None;
        // User databases first, master last (as SQL Server).
        for db in dbs.iter().rev() {
            if let Err(e) = db.txn.close() {
                diag::errorlog::log("spid0s", &format!("Shutdown of database '{}' failed: {e}", db.name()));
                first_err.get_or_insert(e.to_sql_error());
            }
        }
        self.lock.lock().take();
        diag::errorlog::log("Server", "Mesquite shut down.");
        if self.error_log_installed {
            diag::errorlog::uninstall();
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Stops the instance as `kill -9` would, for crash tests: nothing more reaches the
    /// files (dirty pages and unflushed log are dropped, open transactions are left to
    /// recovery) and the data directory is unlocked so another instance can start on it.
    pub fn kill(&self) {
        if self.state.swap(STOPPED, Ordering::AcqRel) != RUNNING {
            return;
        }
        self.killed.store(true, Ordering::Release);
        let dbs: Vec<Arc<DbHandle>> = std::mem::take(&mut *self.dbs.write()).into_values().collect();
        for db in &dbs {
            db.txn.stop_background_checkpoints();
            self.pool.discard(db.txn.db.id);
            let _ = self.pool.detach(db.txn.db.id);
        }
        for db in &dbs {
            db.txn.log.shutdown();
        }
        self.lock.lock().take();
    }

    /// Whether [`Instance::kill`] ended this instance.
    pub fn was_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // Without shutdown: a crash as far as the files go (see the module doc). The
        // checkpoint tasks hold only weak references and end by themselves.
        if self.error_log_installed && self.is_running() {
            diag::errorlog::uninstall();
        }
    }
}

/// Pushes a database's options into the transaction layer.
fn apply_options(db: &DbHandle) {
    let r = db.record.read();
    db.txn.set_delayed_durability(r.delayed);
    db.txn.set_target_recovery_time(r.target_recovery_time.max(0) as u32);
    let mut c = db.catalog.collation.write();
    if *c != r.collation {
        *c = r.collation;
        // Plans bound under the old collation are stale (plan_cache checks the version).
        db.catalog.version.fetch_add(1, Ordering::AcqRel);
    }
}

fn option_name(o: &DatabaseOption) -> &'static str {
    match o {
        DatabaseOption::SingleUser => "SINGLE_USER",
        DatabaseOption::RestrictedUser => "RESTRICTED_USER",
        DatabaseOption::Offline => "OFFLINE",
        DatabaseOption::Emergency => "EMERGENCY",
        _ => "option",
    }
}

fn upsert(tree: &BTree, key: &[u8], value: &[u8]) -> storage::Result<()> {
    if !tree.update(key, value)? {
        tree.insert(key, value)?;
    }
    Ok(())
}

fn read_directory(master: &DbHandle) -> Result<BTreeMap<DbId, DbRecord>> {
    let mut out = BTreeMap::new();
    let lo = [KEY_DATABASE];
    let hi = [KEY_DATABASE + 1];
    let mut cur = master.system.range(Bound::Included(&lo[..]), Bound::Excluded(&hi[..]));
    while let Some((_, v)) = cur.next_entry()? {
        let r = DbRecord::decode(v).ok_or_else(|| EngineError::CorruptSystemTable {
            db: MASTER,
            detail: "a database directory row does not decode".into(),
        })?;
        out.insert(r.id, r);
    }
    Ok(out)
}

/// 15118 when the password policy is checked and the password is not complex enough.
fn check_password_policy(password: &str, check: bool) -> std::result::Result<(), types::SqlError> {
    if check && !login::password_is_complex(password) {
        return Err(types::SqlError::new(
            15118,
            16,
            1,
            "Password validation failed. The password does not meet the operating system policy requirements because it is not complex enough.",
        ));
    }
    Ok(())
}

fn io_error(what: &str, e: std::io::Error) -> EngineError {
    EngineError::DataDirectory(format!("{what}: {e}"))
}

fn host_err(e: sql::host::HostError) -> EngineError {
    match e {
        sql::host::HostError::Sql(e) => EngineError::Sql(e),
        sql::host::HostError::Duplicate => EngineError::Storage(storage::StorageError::DuplicateKey),
    }
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Instance>();
}
