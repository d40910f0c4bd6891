//! Locked row access: reading and writing a B-tree (a clustered index, or a nonclustered
//! index made unique by its row locator) under SQL Server's isolation levels.
//!
//! Storage's [`BTree`] knows nothing about transactions or locks; the engine reads and
//! writes tables through a [`LockedIndex`], which takes the locks the session's isolation
//! level calls for (the plan in [`crate::lock::isolation`]) around every B-tree call:
//!
//! ```text
//! let index = LockedIndex::new(&txn_db, tree)?;
//! let t = txn_db.begin("user_transaction", 52)?;
//! let ctx = SessionContext::new(&t, LockingOptions { isolation: IsolationLevel::RepeatableRead, ..Default::default() });
//! let row = index.get(&ctx, b"key")?;          // S on the key, held until COMMIT
//! index.update(&ctx, b"key", b"new row")?;     // IX on the table, X on the key
//! t.commit(false)?;                             // releases everything
//! ```
//!
//! # The locks taken
//!
//! | level            | reads (`get`, `scan`)                                   | read locks held until | writes (`insert`, `update`, `delete`)  |
//! |------------------|---------------------------------------------------------|-----------------------|----------------------------------------|
//! | READ UNCOMMITTED | none: dirty reads, uncommitted deletes are not seen     | -                     | as below                               |
//! | READ COMMITTED   | IS on the OBJECT, S on each KEY                         | the row has been read (released before the next row is locked); IS until the call returns | as below |
//! | REPEATABLE READ  | IS on the OBJECT, S on each KEY read                    | end of transaction    | as below                               |
//! | SERIALIZABLE     | IS on the OBJECT, RangeS-S on each KEY read, on the first key after the range, and on the key after a missing key; `(ffffffffffff)` stands for "past the last key" | end of transaction | as below, RangeX-X instead of X |
//! | SNAPSHOT         | not implemented: error 3952                             | -                     | -                                      |
//! | READ COMMITTED with READ_COMMITTED_SNAPSHOT ON | not implemented: error 3952 | -                | -                                      |
//!
//! Writes, at every level: IX on the OBJECT; an insert takes RangeI-N on the key after
//! the new key (the next key, or `(ffffffffffff)`) and keeps it only until the new key is
//! in the tree (SQL Server's "instant" lock: it tests for a SERIALIZABLE range scan over
//! the gap, and waits for it), then X on the new key; update and delete take X on the key
//! (RangeX-X at SERIALIZABLE). All write locks are held until the transaction ends.
//! [`LockedIndex::get_for_update`] is the UPDLOCK read: IU on the OBJECT, U on the key
//! (RangeS-U at SERIALIZABLE), held until the transaction ends, so a later update of the
//! row converts U to X without the conversion deadlock two S readers would have.
//!
//! An absent key holds nothing below SERIALIZABLE (its lock is dropped once the read
//! finds nothing); at SERIALIZABLE the range up to the next key is locked instead, so the
//! key can't appear until the transaction ends. Locks are re-entrant: what a transaction
//! already holds is converted ([`LockMode::join`]), never lowered, so READ COMMITTED's
//! early release never drops a lock the transaction took for a write or at a higher
//! level.
//!
//! # Fast paths (same guarantees, fewer lock requests)
//!
//! - The table's IX (and IU) is held until the transaction ends, so it is requested once
//!   per transaction ([`LockManager::lock_kept`]); later rows find it in the owner's list.
//! - READ COMMITTED reads take no row lock when none is needed: a row is copied with its
//!   leaf latched, after asking the lock table, still under the latch, whether another
//!   owner holds a lock S conflicts with ([`LockManager::grantable_now`]). A writer takes
//!   its X lock before it latches the leaf and keeps it until it ends, so a row that
//!   passes is committed: what S taken and released at once would have guaranteed. A row
//!   that does not pass, and a ghost whose delete is in flight, go through the locking
//!   path (wait, re-read). Scans do this a batch of rows at a time.
//! - Until the first SERIALIZABLE access to a HoBT no range lock can exist on it, so an
//!   insert skips RangeI-N and its next-key probes (see "Phantoms" below), and ghost
//!   cleanup skips its conditional range locks.
//!
//! Key locks are `LockResource::Key` on the HoBT (the tree's allocation unit id) with the
//! 48-bit hash of the stored key ([`LockResource::key_from_bytes`]); the table lock is
//! `LockResource::Object` with the tree's object id. Schema stability (Sch-S) and the
//! database S lock are the statement's business, not this layer's.
//!
//! # Errors and what the caller must do
//!
//! Every lock request waits at most the session's LOCK_TIMEOUT
//! ([`LockingOptions::lock_timeout`]). Failures are [`AccessError`]s; map them to the
//! client's error with [`AccessError::to_sql_error`]:
//!
//! - 1222 (lock request time out): the statement fails, the transaction and its locks
//!   stay (SQL Server doesn't roll back on 1222 unless XACT_ABORT is ON).
//! - 1205 (deadlock victim): **the caller must roll the transaction back**
//!   ([`AccessError::requires_rollback`]); its locks stay until it does, blocking the
//!   survivor.
//! - storage errors (2601 duplicate key, 823/824 I/O, ...), and 3952 for the isolation
//!   levels built on row versioning.
//!
//! # Deleted keys: ghosts
//!
//! SQL Server leaves a deleted row in its page as a *ghost* until the delete commits, so a
//! scan still meets it, locks it (waiting for the deleter) and, at SERIALIZABLE, uses it as
//! a range boundary. Storage's B-tree removes the entry at once (rollback re-inserts it),
//! so this layer keeps the ghosts beside the tree: every key deleted through it is
//! remembered with its deleting transaction, and scans visit ghost keys like entries
//! (lock, re-read, skip when absent). Ghosts whose deleter has ended are dropped by
//! [`LockedIndex::cleanup_ghosts`] (also run as deletes accumulate, and by a READ
//! COMMITTED scan crossing a run of them), which, like SQL Server's ghost cleanup task,
//! first takes a conditional lock on the key so that no range lock still relies on it
//! (unnecessary, and skipped, while the HoBT has seen no SERIALIZABLE access).
//!
//! # Phantoms: the next-key protocol
//!
//! A SERIALIZABLE scan locks every key it returns and then checks that the key is still
//! the first one after the previous one (a key may have been inserted in between while it
//! waited); if not, it locks the newcomer instead. An insert locks RangeI-N on the next
//! key, then re-checks that it is still the next key *and* puts the new key in the tree in
//! one step under the HoBT's insert gate, a short exclusive lock the scans' checks take
//! too. SQL Server does the same check under the leaf page latch; storage has no hook for
//! that yet, so the gate serializes these inserts of one index (never while anyone waits
//! for a lock: nothing waits for a lock while holding it).
//!
//! All this is needed only once a SERIALIZABLE transaction has touched the HoBT: the first
//! one sets a flag (with the gate held exclusive) before it takes any lock. Until then an
//! insert takes X on its key and puts it in the tree with the gate held *shared*, after
//! checking the flag again: a SERIALIZABLE reader that came meanwhile either finds the new
//! key in its re-check (which takes the gate exclusive) or makes the insert use the
//! protocol above.
//!
//! # Not here (yet)
//!
//! - Non-unique clustered indexes (uniquifiers): storage picks the uniquifier inside the
//!   insert, after the point where the X lock on the stored key has to be taken.
//! - Heaps (RID locks): same problem, the RID is chosen inside `Heap::insert`; both need
//!   a storage hook that lets the caller take its lock while the page is latched.
//! - Lock escalation, page locks and PAGLOCK/TABLOCK hints, update scans with U locks
//!   (`scan` takes S / RangeS-S), reverse scans.
//!
//! # READPAST
//!
//! With [`LockingOptions::read_past`] at READ COMMITTED or REPEATABLE READ, a read whose
//! key lock is not free at once skips the key (a scan goes on after it, a point read
//! finds nothing) instead of waiting: the row-by-row step requests the lock NOWAIT, and
//! the READ COMMITTED batches hand it every key they cannot vouch for, as usual.

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::{Mutex, RwLock};
use storage::btree::BTree;
use storage::{Database, StorageError};
use types::SqlError;

use crate::lock::{
    IsolationLevel, LockError, LockManager, LockMode, LockOwner, LockResource, LockTimeout, KEY_HASH_MASK,
};
use crate::xact::{Transaction, TxnDb};

/// The session settings that decide how a transaction locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LockingOptions {
    /// SET TRANSACTION ISOLATION LEVEL (default READ COMMITTED).
    pub isolation: IsolationLevel,
    /// SET LOCK_TIMEOUT (default -1: wait until granted or chosen as a deadlock victim).
    pub lock_timeout: LockTimeout,
    /// The database option READ_COMMITTED_SNAPSHOT. Not implemented: READ COMMITTED
    /// access fails with 3952 while it is on.
    pub read_committed_snapshot: bool,
    /// The READPAST table hint: at READ COMMITTED and REPEATABLE READ, reads skip a key
    /// whose lock is not free at once instead of waiting for it (ignored at the other
    /// levels).
    pub read_past: bool,
}

/// A transaction with the session settings it runs under: what every [`LockedIndex`]
/// call takes.
#[derive(Clone, Copy)]
pub struct SessionContext<'t> {
    txn: &'t Transaction,
    options: LockingOptions,
}

impl<'t> SessionContext<'t> {
    /// Also records the isolation level on the transaction's lock owner (the deadlock
    /// graph shows it). SNAPSHOT is accepted here and refused at the first access (3952),
    /// as SQL Server refuses it when the database doesn't allow snapshot isolation.
    pub fn new(txn: &'t Transaction, options: LockingOptions) -> SessionContext<'t> {
        txn.owner().set_isolation_level(options.isolation);
        SessionContext { txn, options }
    }

    /// READ COMMITTED with the given LOCK_TIMEOUT.
    pub fn read_committed(txn: &'t Transaction, lock_timeout: LockTimeout) -> SessionContext<'t> {
        Self::new(txn, LockingOptions { lock_timeout, ..LockingOptions::default() })
    }

    pub fn transaction(&self) -> &'t Transaction {
        self.txn
    }

    pub fn isolation(&self) -> IsolationLevel {
        self.options.isolation
    }

    pub fn lock_timeout(&self) -> LockTimeout {
        self.options.lock_timeout
    }

    pub fn options(&self) -> LockingOptions {
        self.options
    }

    /// READPAST applies (the hint, at READ COMMITTED or REPEATABLE READ).
    fn reads_past(&self) -> bool {
        self.options.read_past
            && matches!(self.options.isolation, IsolationLevel::ReadCommitted | IsolationLevel::RepeatableRead)
    }

    fn owner(&self) -> &LockOwner {
        self.txn.owner()
    }
}

/// Why a locked access failed.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// A lock request timed out (1222) or was chosen as a deadlock victim (1205; the
    /// transaction must be rolled back).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The B-tree failed (duplicate key, I/O, corruption, ...).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// SNAPSHOT isolation, or READ COMMITTED under READ_COMMITTED_SNAPSHOT: both read row
    /// versions, which Mesquite doesn't keep yet. Msg 3952, SQL Server's error for a
    /// database that doesn't allow snapshot isolation.
    #[error(
        "Snapshot isolation transaction failed accessing database '{database}' because snapshot isolation is not allowed in this database. {detail}"
    )]
    RowVersioningNotSupported { database: String, detail: &'static str },
}

impl AccessError {
    /// Msg 3952.
    pub const SNAPSHOT_NOT_ALLOWED: i32 = 3952;

    /// The SQL Server error number.
    pub fn number(&self) -> i32 {
        match self {
            AccessError::Lock(e) => e.number(),
            AccessError::Storage(e) => e.number(),
            AccessError::RowVersioningNotSupported { .. } => Self::SNAPSHOT_NOT_ALLOWED,
        }
    }

    /// The error as the client sees it (1222 and 1205 exactly as the lock manager
    /// reports them; 3952 severity 16 state 1).
    pub fn to_sql_error(&self) -> SqlError {
        match self {
            AccessError::Lock(e) => e.to_sql_error(),
            AccessError::Storage(e) => e.to_sql_error(),
            AccessError::RowVersioningNotSupported { .. } => SqlError::new(self.number(), 16, 1, self.to_string()),
        }
    }

    /// True for 1205: the transaction was chosen as a deadlock victim and must be rolled
    /// back before anything else; its locks stay until then.
    pub fn requires_rollback(&self) -> bool {
        matches!(self, AccessError::Lock(LockError::DeadlockVictim { .. }))
    }

    /// The lock error, if this is one.
    pub fn lock_error(&self) -> Option<&LockError> {
        match self {
            AccessError::Lock(e) => Some(e),
            _ => None,
        }
    }
}

impl From<AccessError> for SqlError {
    fn from(e: AccessError) -> SqlError {
        e.to_sql_error()
    }
}

pub type Result<T, E = AccessError> = std::result::Result<T, E>;

/// The key hash SQL Server shows for the range past the last key of an index
/// (`(ffffffffffff)`): the resource a SERIALIZABLE scan to the end, or an insert after
/// the last key, locks.
pub const END_OF_INDEX_HASH: u64 = KEY_HASH_MASK;

/// The session id the ghost cleanup's conditional locks show (a system task).
pub const GHOST_CLEANUP_SESSION_ID: i32 = 0;

/// Ghost entries kept before a delete triggers a cleanup pass (it then waits for twice
/// as many as survived).
const GHOST_CLEANUP_MIN: usize = 64;

/// Lock owner ids for ghost cleanup passes: counted down from the top, away from
/// transaction ids.
static CLEANUP_OWNER_IDS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Keys deleted through this layer whose deleting transaction may not have ended.
struct GhostTable {
    /// Key -> the deleting transaction's lock owner.
    entries: BTreeMap<Vec<u8>, LockOwner>,
    /// Size at which the next delete runs a cleanup pass.
    cleanup_at: usize,
}

/// What every handle to one HoBT shares: the ghosts and the insert gate.
struct HobtShared {
    ghosts: Mutex<GhostTable>,
    /// Held while an insert re-checks its next key and puts its key in the tree, and
    /// while a SERIALIZABLE read checks the range it locked (see the module docs). Lock
    /// order: gate, then ghosts, then the lock manager's internals. Never held while
    /// waiting for a lock.
    gate: RwLock<()>,
    /// Set (under the gate, exclusive) before the first SERIALIZABLE access to the HoBT
    /// takes a lock, and never cleared. Until then no range lock can exist on the HoBT, so
    /// an insert skips the next-key protocol (it takes the gate shared to check this
    /// flag and put its key in the tree in one step) and ghost cleanup needs no
    /// conditional range lock.
    serializable_seen: AtomicBool,
}

type HobtRegistry = HashMap<(usize, u64), (Weak<Database>, Weak<HobtShared>)>;

/// One `HobtShared` per (database, allocation unit) in the process, however many
/// `LockedIndex` handles are opened on it.
fn hobt_shared(db: &Arc<Database>, au: u64) -> Arc<HobtShared> {
    static REGISTRY: OnceLock<Mutex<HobtRegistry>> = OnceLock::new();
    let mut reg = REGISTRY.get_or_init(|| Mutex::new(HashMap::new())).lock();
    let key = (Arc::as_ptr(db) as usize, au);
    if let Some((d, s)) = reg.get(&key) {
        if let (Some(d), Some(s)) = (d.upgrade(), s.upgrade()) {
            if Arc::ptr_eq(&d, db) {
                return s;
            }
        }
    }
    let shared = Arc::new(HobtShared {
        ghosts: Mutex::new(GhostTable { entries: BTreeMap::new(), cleanup_at: GHOST_CLEANUP_MIN }),
        gate: RwLock::new(()),
        serializable_seen: AtomicBool::new(false),
    });
    reg.retain(|_, (d, s)| d.strong_count() > 0 && s.strong_count() > 0);
    reg.insert(key, (Arc::downgrade(db), Arc::downgrade(&shared)));
    shared
}

/// The first key after a position, in the tree or among the ghosts.
struct Probe {
    /// The key, and `Some` when it is in the tree (its value if the probe asked for
    /// values, else empty), `None` for a ghost.
    first: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// The key after it: where to look next (a hint, checked again under its lock).
    second: Option<Vec<u8>>,
}

impl Probe {
    fn first_key(&self) -> Option<&[u8]> {
        self.first.as_ref().map(|(k, _)| k.as_slice())
    }
}

/// A unique B-tree accessed under locks. Cheap to clone; every handle on one HoBT shares
/// its ghosts and insert gate. See the module documentation.
#[derive(Clone)]
pub struct LockedIndex {
    tree: BTree,
    locks: Arc<LockManager>,
    db_id: u16,
    object_id: i32,
    hobt_id: i64,
    shared: Arc<HobtShared>,
}

impl LockedIndex {
    /// Wraps `tree`, a unique tree of `db`'s database, locking through `db`'s lock
    /// manager. Non-unique trees are refused (see "Not here").
    pub fn new(db: &TxnDb, tree: BTree) -> Result<LockedIndex> {
        if !Arc::ptr_eq(tree.database(), &db.db) {
            return Err(StorageError::Invalid(format!(
                "the B-tree of allocation unit {} belongs to another database",
                tree.alloc_unit_id()
            ))
            .into());
        }
        if !tree.is_unique() {
            return Err(StorageError::Invalid(format!(
                "locked access needs a unique B-tree; allocation unit {} is not unique (uniquifiers are not supported yet)",
                tree.alloc_unit_id()
            ))
            .into());
        }
        let shared = hobt_shared(&db.db, tree.alloc_unit_id());
        Ok(LockedIndex {
            db_id: db.db.id,
            // sys.objects.object_id is an int: the catalog never hands out larger ids.
            object_id: tree.object_id() as i32,
            hobt_id: tree.alloc_unit_id() as i64,
            locks: db.locks.clone(),
            tree,
            shared,
        })
    }

    /// The B-tree underneath (unlocked access: recovery, DBCC, bulk loads under TABLOCKX).
    pub fn tree(&self) -> &BTree {
        &self.tree
    }

    pub fn object_id(&self) -> i32 {
        self.object_id
    }

    pub fn hobt_id(&self) -> i64 {
        self.hobt_id
    }

    /// The table's lock resource (`OBJECT: db:object_id:0`).
    pub fn object_resource(&self) -> LockResource {
        LockResource::object(self.db_id, self.object_id)
    }

    /// A key's lock resource (`KEY: db:hobt (hash)`).
    pub fn key_resource(&self, key: &[u8]) -> LockResource {
        LockResource::key_from_bytes(self.db_id, self.hobt_id, key)
    }

    /// The resource of the range past the last key (`KEY: db:hobt (ffffffffffff)`).
    pub fn end_of_index_resource(&self) -> LockResource {
        LockResource::key(self.db_id, self.hobt_id, END_OF_INDEX_HASH)
    }

    /// The resource a range lock ending at `key` is taken on: the key's, or the end of
    /// the index for `None`.
    fn boundary_resource(&self, key: Option<&[u8]>) -> LockResource {
        match key {
            Some(k) => self.key_resource(k),
            None => self.end_of_index_resource(),
        }
    }

    // ---- reads ----

    /// The row stored under `key`, locked as the session's isolation level says (module
    /// docs). At SERIALIZABLE a missing key's range stays locked, so a repeated `get`
    /// finds it missing again.
    pub fn get(&self, ctx: &SessionContext<'_>, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_level(ctx)?;
        let level = ctx.isolation();
        if level == IsolationLevel::ReadUncommitted {
            return Ok(self.tree.get(key)?);
        }
        let mode = if level == IsolationLevel::Serializable { LockMode::RangeS_S } else { LockMode::S };
        let object = self.object_resource();
        self.lock(ctx, object, LockMode::IS)?;
        let r = if level == IsolationLevel::ReadCommitted {
            match self.read_committed_fast(ctx, key) {
                Ok(Some(found)) => Ok(found),
                Ok(None) => self.read_key(ctx, key, mode),
                Err(e) => Err(e),
            }
        } else {
            self.read_key(ctx, key, mode)
        };
        if level == IsolationLevel::ReadCommitted {
            self.locks.unlock(ctx.owner(), object);
        }
        r
    }

    /// UPDLOCK read: the row under `key` with U on the key (RangeS-U at SERIALIZABLE) and
    /// IU on the table, held until the transaction ends at every isolation level.
    pub fn get_for_update(&self, ctx: &SessionContext<'_>, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_level(ctx)?;
        let mode = if ctx.isolation() == IsolationLevel::Serializable { LockMode::RangeS_U } else { LockMode::U };
        self.lock_kept(ctx, self.object_resource(), LockMode::IU)?;
        let res = self.key_resource(key);
        self.lock(ctx, res, mode)?;
        let value = self.tree.get(key)?;
        if value.is_none() {
            self.absent_key(ctx, key, res, LockMode::RangeS_U)?;
        }
        Ok(value)
    }

    /// READ COMMITTED without taking the row lock: the key is looked up with its leaf
    /// latched and, still under the latch, the lock table is asked whether another owner
    /// holds a lock S conflicts with. If not, what the leaf holds is committed (a writer
    /// takes its X lock before it latches the leaf and keeps it until it ends), which is
    /// all the S lock taken and released at once would have guaranteed. `Some(row)` is the
    /// answer; `None` means the key is locked, or absent with a ghost that may be locked:
    /// the caller takes the locking path.
    fn read_committed_fast(&self, ctx: &SessionContext<'_>, key: &[u8]) -> Result<Option<Option<Vec<u8>>>> {
        let res = self.key_resource(key);
        let owner = ctx.owner();
        let got =
            self.tree.get_with(key, |v| self.locks.grantable_now(owner, &res, LockMode::S).then(|| v.to_vec()))?;
        match got {
            Some(Some(v)) => Ok(Some(Some(v))),
            Some(None) => Ok(None),
            // Absent: a ghost (a delete in flight) must be waited for; the ghost goes in
            // before the key leaves the tree, so looking after the tree read is enough.
            None if self.shared.ghosts.lock().entries.contains_key(key) => Ok(None),
            None => Ok(Some(None)),
        }
    }

    /// Locks `key` in `mode`, reads it, and keeps or drops the lock per the level.
    fn read_key(&self, ctx: &SessionContext<'_>, key: &[u8], mode: LockMode) -> Result<Option<Vec<u8>>> {
        let res = self.key_resource(key);
        if !self.lock_or_read_past(ctx, res, mode)? {
            return Ok(None); // READPAST: a locked key reads as absent
        }
        let value = match self.tree.get(key) {
            Ok(v) => v,
            Err(e) => {
                if !ctx.isolation().holds_read_locks() {
                    self.locks.unlock(ctx.owner(), res);
                }
                return Err(e.into());
            }
        };
        if value.is_none() {
            self.absent_key(ctx, key, res, LockMode::RangeS_S)?;
        } else if !ctx.isolation().holds_read_locks() {
            // READ COMMITTED: released as soon as the row has been read.
            self.locks.unlock(ctx.owner(), res);
        }
        Ok(value)
    }

    /// A read found `key` missing while holding `res`: below SERIALIZABLE nothing is kept;
    /// at SERIALIZABLE the range up to the next key is locked in `range_mode` first, so
    /// the key can't be inserted until the transaction ends.
    fn absent_key(&self, ctx: &SessionContext<'_>, key: &[u8], res: LockResource, range_mode: LockMode) -> Result<()> {
        let r = if ctx.isolation() == IsolationLevel::Serializable {
            self.lock_next_key(ctx, Bound::Excluded(key), range_mode)
        } else {
            Ok(())
        };
        // The key lock itself protects nothing once the range is locked (or at lower
        // levels, where a missing row holds nothing).
        self.locks.unlock(ctx.owner(), res);
        r
    }

    /// Locks the first key after `after` (or the end of the index) in `mode`, making sure
    /// it still is the first key once locked.
    fn lock_next_key(&self, ctx: &SessionContext<'_>, after: Bound<&[u8]>, mode: LockMode) -> Result<()> {
        let mut target = self.probe(after, false)?.first.map(|(k, _)| k);
        loop {
            self.lock(ctx, self.boundary_resource(target.as_deref()), mode)?;
            let now = {
                let _gate = self.shared.gate.write();
                self.probe(after, false)?
            };
            if now.first_key() == target.as_deref() {
                return Ok(());
            }
            // Something moved in (or out) while we waited: lock the new first key. The
            // lock already taken stays (it protects a range we may have relied on).
            target = now.first.map(|(k, _)| k);
        }
    }

    /// Calls `f(key, row)` for the rows with `lower <= key <= upper` (per the bounds) in
    /// key order, locking each as the isolation level says, until `f` returns false.
    /// Returns whether the scan reached the end of the range. `f` runs with no latch
    /// and no internal mutex held: it may call into this index or anything else.
    ///
    /// At SERIALIZABLE every key returned and the first key after the range (or the end
    /// of the index) are RangeS-S locked, so the same scan returns the same rows until
    /// the transaction ends (no phantoms). A scan stopped early by `f` has locked the
    /// range up to the last row it returned.
    pub fn scan<F>(&self, ctx: &SessionContext<'_>, lower: Bound<&[u8]>, upper: Bound<&[u8]>, f: F) -> Result<bool>
    where
        F: FnMut(&[u8], &[u8]) -> bool,
    {
        self.scan_expecting(ctx, lower, upper, usize::MAX, f)
    }

    /// [`scan`](Self::scan) told how many rows the caller will take before `f` returns
    /// false (a hint: READ COMMITTED copies no more than that ahead). The key and row
    /// handed to `f` are lent from a batch buffer reused for the whole scan: a caller
    /// that keeps them copies them once, into storage of its own.
    pub fn scan_expecting<F>(
        &self,
        ctx: &SessionContext<'_>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        expected: usize,
        mut f: F,
    ) -> Result<bool>
    where
        F: ScanSink,
    {
        self.check_level(ctx)?;
        let level = ctx.isolation();
        if level == IsolationLevel::ReadUncommitted {
            let mut cursor = self.tree.range(lower, upper);
            while let Some((k, v)) = cursor.next_entry()? {
                if !f.row(k, v) {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let object = self.object_resource();
        self.lock(ctx, object, LockMode::IS)?;
        let r = self.scan_locked(ctx, lower, upper, expected, &mut f);
        if level == IsolationLevel::ReadCommitted {
            self.locks.unlock(ctx.owner(), object);
        }
        r
    }

    fn scan_locked(
        &self,
        ctx: &SessionContext<'_>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        expected: usize,
        f: &mut dyn ScanSink,
    ) -> Result<bool> {
        if ctx.isolation() == IsolationLevel::ReadCommitted {
            return self.scan_read_committed(ctx, lower, upper, expected, f);
        }
        let _ = expected;
        match self.scan_locked_steps(ctx, lower, upper, f, usize::MAX)? {
            ScanEnd::Done(all) => Ok(all),
            ScanEnd::Paused(_) => Ok(true), // unreachable with an unbounded step count
        }
    }

    /// READ COMMITTED scan in batches: the rows of a stretch of leaf entries are copied
    /// with their leaf latched, each after asking the lock table whether another owner
    /// holds a conflicting lock on it (see `read_committed_fast`: no lock is taken). The
    /// ghosts in the stretch are checked next: one whose delete is still in flight, a key
    /// that is locked, or a ghost that came back into the tree (its delete rolled back)
    /// hands that one key to the locking path (`scan_locked_steps`, one step), which
    /// waits as the row-by-row protocol does; then batching resumes after it. A batch's
    /// rows are copied into one buffer ([`EntryBatch`]), reused by every batch.
    fn scan_read_committed(
        &self,
        ctx: &SessionContext<'_>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        expected: usize,
        f: &mut dyn ScanSink,
    ) -> Result<bool> {
        /// Ghosts checked per batch (a graveyard of committed deletes is crossed in
        /// several batches rather than copied whole).
        const GHOSTS_PER_BATCH: usize = 64;
        const MAX_BATCH: usize = 256;
        /// Ghosts in one batch's stretch that make it worth a cleanup pass.
        const GRAVEYARD: usize = 16;
        let owner = ctx.owner();
        let mut after: Bound<Vec<u8>> = lower.map(<[u8]>::to_vec);
        // Sized for the largest batch the caller takes, so it does not grow row by row.
        let most = expected.min(MAX_BATCH) + 1;
        let mut rows = EntryBatch { bytes: Vec::with_capacity(most * 32), spans: Vec::with_capacity(most) };
        // A caller that said how many rows it takes (a scan batch of the executor, whose
        // sink stops only when full) gets them in full batches: each batch descends the
        // tree again. Otherwise batches grow from a small first one, so that a scan its
        // caller stops early (TOP, EXISTS) copies little.
        let mut growth = if expected == usize::MAX { 16 } else { expected.min(MAX_BATCH) };
        let mut returned = 0usize;
        // At most one ghost cleanup per call (see below).
        let mut cleaned = false;
        'batches: loop {
            rows.clear();
            // No further ahead than the caller wants (plus the row that tells it there is
            // more).
            let want = expected.saturating_sub(returned).saturating_add(1);
            // A remainder just past a full batch (the row that tells there is more) comes
            // with it rather than in a batch of its own.
            let batch = if want <= growth + growth / 8 { want } else { growth }.max(1);
            let mut locked: Option<Vec<u8>> = None;
            let mut full = false;
            self.tree.scan(after.as_ref().map(Vec::as_slice), upper, |k, v| {
                if rows.len() == batch {
                    full = true;
                    return false;
                }
                // No key lock anywhere (checked per row: this row's leaf is latched) means
                // no key to look up.
                if self.locks.key_locks_exist() && !self.locks.grantable_now(owner, &self.key_resource(k), LockMode::S)
                {
                    locked = Some(k.to_vec());
                    return false;
                }
                rows.push(k, v);
                true
            })?;
            let next_batch = (growth * 2).min(MAX_BATCH);
            // The keys the batch speaks for end before the locked key, at the last row of
            // a full batch, or at the end of the range.
            let end: Bound<&[u8]> = match (&locked, rows.len()) {
                (Some(k), _) => Bound::Excluded(k.as_slice()),
                (None, n) if full && n > 0 => Bound::Included(rows.key(n - 1)),
                _ => upper,
            };
            let ghosts: Vec<Vec<u8>> = if nonempty(after.as_ref().map(Vec::as_slice), end) {
                let g = self.shared.ghosts.lock();
                g.entries
                    .range::<[u8], _>((after.as_ref().map(Vec::as_slice), end))
                    .take(GHOSTS_PER_BATCH)
                    .map(|(k, _)| k.clone())
                    .collect()
            } else {
                Vec::new() // an empty range (BTreeMap::range refuses inverted bounds)
            };
            // How many rows are good to return, and what comes after them.
            let mut emit = rows.len();
            let mut then = if locked.is_some() {
                Then::Step
            } else if full {
                Then::AfterLastRow
            } else {
                Then::Done
            };
            let mut cut = false;
            for gk in &ghosts {
                let pos = rows.partition_point(|k| k < gk.as_slice());
                if pos < rows.len() && rows.key(pos) == gk.as_slice() {
                    continue; // back in the tree when the batch was read: a row
                }
                if !self.locks.grantable_now(owner, &self.key_resource(gk), LockMode::S) {
                    emit = pos;
                    then = Then::Step;
                    cut = true;
                    break;
                }
                if !cleaned && ghosts.len() >= GRAVEYARD {
                    // A run of deletes that have ended: drop them (as SQL Server's scans
                    // hand ghosts to the cleanup task) instead of checking each one.
                    cleaned = true;
                    self.cleanup_ghosts();
                    continue 'batches;
                }
                // The delete ended; if it rolled back, the key is back in the tree.
                if self.tree.get_with(gk, |_| ())?.is_some() {
                    emit = pos;
                    then = Then::Step;
                    cut = true;
                    break;
                }
            }
            if !cut && ghosts.len() == GHOSTS_PER_BATCH {
                // More ghosts may follow: vouch only for the stretch up to the last one
                // checked (a row under that key included).
                let last = ghosts.len() - 1;
                emit = rows.partition_point(|k| k <= ghosts[last].as_slice());
                then = Then::AfterGhost(last);
            }
            if emit > 0 {
                after = Bound::Excluded(rows.key(emit - 1).to_vec());
            }
            returned += emit;
            if !f.rows(&rows, emit) {
                return Ok(false);
            }
            growth = next_batch;
            match then {
                Then::Done => return Ok(true),
                Then::AfterLastRow => {}
                Then::AfterGhost(i) => after = Bound::Excluded(ghosts[i].clone()),
                Then::Step => match self.scan_locked_steps(ctx, after.as_ref().map(Vec::as_slice), upper, f, 1)? {
                    ScanEnd::Done(all) => return Ok(all),
                    ScanEnd::Paused(k) => after = Bound::Excluded(k),
                },
            }
        }
    }

    /// The row-by-row locking scan (see `scan`), stopping after `steps` keys have been
    /// returned or skipped.
    fn scan_locked_steps(
        &self,
        ctx: &SessionContext<'_>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        f: &mut dyn ScanSink,
        mut steps: usize,
    ) -> Result<ScanEnd> {
        let level = ctx.isolation();
        let serializable = level == IsolationLevel::Serializable;
        let mode = if serializable { LockMode::RangeS_S } else { LockMode::S };
        let owner = ctx.owner();
        // Everything after `after` is still to be visited; `target` is the key expected
        // to come first (None = past the last key).
        let mut after: Bound<Vec<u8>> = lower.map(<[u8]>::to_vec);
        let mut target: Option<Vec<u8>> = self.probe(lower, false)?.first.map(|(k, _)| k);
        loop {
            let in_range = target.as_deref().is_some_and(|k| within_upper(k, upper));
            if !in_range && !serializable {
                return Ok(ScanEnd::Done(true));
            }
            let res = self.boundary_resource(target.as_deref());
            if in_range && !self.lock_or_read_past(ctx, res, mode)? {
                // READPAST: skip the locked key (counted as a step, as a skipped ghost).
                let Some(key) = target.take() else { return Ok(ScanEnd::Done(true)) };
                after = Bound::Excluded(key.clone());
                target = self.probe(after.as_ref().map(Vec::as_slice), false)?.first.map(|(k, _)| k);
                steps -= 1;
                if steps == 0 {
                    return Ok(ScanEnd::Paused(key));
                }
                continue;
            }
            if !in_range {
                self.lock(ctx, res, mode)?;
            }
            // Re-read now that the key is locked: the row's committed value, and whether a
            // key moved in before it while we waited.
            let probe = if serializable {
                let _gate = self.shared.gate.write();
                self.probe(after.as_ref().map(Vec::as_slice), true)
            } else {
                self.probe(after.as_ref().map(Vec::as_slice), true)
            };
            let probe = match probe {
                Ok(p) => p,
                Err(e) => {
                    if !serializable {
                        self.locks.unlock(owner, res);
                    }
                    return Err(e.into());
                }
            };
            if probe.first_key() != target.as_deref() {
                if !serializable {
                    self.locks.unlock(owner, res);
                }
                target = probe.first.map(|(k, _)| k);
                continue;
            }
            if !in_range {
                // SERIALIZABLE: the range past the last row is locked too.
                return Ok(ScanEnd::Done(true));
            }
            let Some((key, value)) = probe.first else {
                // Unreachable: `in_range` means `target` is a key and the probe agreed.
                return Ok(ScanEnd::Done(true));
            };
            let was_ghost = value.is_none();
            let go_on = match value {
                Some(v) => f.row(&key, &v),
                None => true, // a ghost: locked (a range boundary at SERIALIZABLE), skipped
            };
            let release = match level {
                IsolationLevel::ReadCommitted => true,
                // A ghost was never read: nothing to repeat.
                IsolationLevel::RepeatableRead => was_ghost,
                _ => false,
            };
            if release {
                self.locks.unlock(owner, res);
            }
            if !go_on {
                return Ok(ScanEnd::Done(false));
            }
            steps -= 1;
            if steps == 0 {
                return Ok(ScanEnd::Paused(key));
            }
            target = probe.second;
            after = Bound::Excluded(key);
        }
    }

    // ---- writes ----

    /// Inserts a row. Fails with 2601 (duplicate key) when the key exists; waits first
    /// when another transaction holds the key (an uncommitted insert or delete of it) or
    /// a SERIALIZABLE range over the gap the key falls in.
    pub fn insert(&self, ctx: &SessionContext<'_>, key: &[u8], value: &[u8]) -> Result<()> {
        // No latch is held here: a worker that waited takes a scheduler again.
        diag::sched::safe_point();
        diag::sched::safe_point_in(self.db_id);
        self.check_level(ctx)?;
        self.lock_kept(ctx, self.object_resource(), LockMode::IX)?;
        let owner = ctx.owner();
        let key_res = self.key_resource(key);
        let mut key_locked = false;
        if !self.shared.serializable_seen.load(Ordering::Acquire) {
            // No range lock can exist on this HoBT (nothing SERIALIZABLE touched it), so
            // RangeI-N on the next key would be granted at once: skip it and the probes
            // for the next key. The flag is checked again with the gate held shared, so a
            // SERIALIZABLE reader arriving now either sees our key in its re-check or
            // makes us take the full protocol.
            self.lock(ctx, key_res, LockMode::X)?;
            key_locked = true;
            let gate = self.shared.gate.read();
            if !self.shared.serializable_seen.load(Ordering::Acquire) {
                let _scope = ctx.txn.enter();
                let r = self.tree.insert(key, value).map(drop);
                drop(gate);
                return r.map_err(AccessError::from);
            }
        }
        let after = Bound::Excluded(key);
        let mut next = self.probe(after, false)?.first.map(|(k, _)| k);
        loop {
            let range_res = self.boundary_resource(next.as_deref());
            self.lock(ctx, range_res, LockMode::RangeI_N)?;
            if !key_locked {
                if let Err(e) = self.lock(ctx, key_res, LockMode::X) {
                    self.locks.unlock(owner, range_res);
                    return Err(e);
                }
                key_locked = true;
            }
            let step = {
                let _gate = self.shared.gate.write();
                match self.probe(after, false) {
                    Ok(now) if now.first_key() == next.as_deref() => {
                        let _scope = ctx.txn.enter();
                        InsertStep::Done(self.tree.insert(key, value).map(drop))
                    }
                    Ok(now) => InsertStep::NextKeyMoved(now.first.map(|(k, _)| k)),
                    Err(e) => InsertStep::Done(Err(e)),
                }
            };
            // RangeI-N is an instant lock: done once the key is in the tree (or failed).
            self.locks.unlock(owner, range_res);
            match step {
                InsertStep::Done(r) => return r.map_err(AccessError::from),
                InsertStep::NextKeyMoved(moved) => next = moved,
            }
        }
    }

    /// Inserts a run of rows (a statement's batch) as [`LockedIndex::insert`] of each, in
    /// order, with the same locks: X on every key first, then one storage
    /// [`BTree::insert_run`] under the gate, which latches each leaf once for the keys
    /// that land in it. Once a SERIALIZABLE transaction has touched the HoBT the rows go
    /// one at a time through the next-key protocol. Returns how many rows were inserted:
    /// all, or those before the one that failed, with its error.
    pub fn insert_run(&self, ctx: &SessionContext<'_>, rows: &[(&[u8], &[u8])]) -> (usize, Result<()>) {
        // No latch is held here: a worker that waited takes a scheduler again.
        diag::sched::safe_point();
        diag::sched::safe_point_in(self.db_id);
        if let Err(e) = self.check_level(ctx) {
            return (0, Err(e));
        }
        if let Err(e) = self.lock_kept(ctx, self.object_resource(), LockMode::IX) {
            return (0, Err(e));
        }
        if self.shared.serializable_seen.load(Ordering::Acquire) {
            return self.insert_each(ctx, rows);
        }
        // X on each key (as each row's insert takes it, before the row enters the tree).
        let mut locked = rows.len();
        let mut lock_err = None;
        for (i, (key, _)) in rows.iter().enumerate() {
            if let Err(e) = self.lock(ctx, self.key_resource(key), LockMode::X) {
                (locked, lock_err) = (i, Some(e));
                break;
            }
        }
        let gate = self.shared.gate.read();
        if self.shared.serializable_seen.load(Ordering::Acquire) {
            // A SERIALIZABLE reader came meanwhile: the next-key protocol, row by row
            // (the X locks taken are the transaction's anyway).
            drop(gate);
            let (n, r) = self.insert_each(ctx, &rows[..locked]);
            return (n, r.and(lock_err.map_or(Ok(()), Err)));
        }
        let (n, r) = {
            let _scope = ctx.txn.enter();
            self.tree.insert_run(&rows[..locked])
        };
        drop(gate);
        match (r, lock_err) {
            (Err(e), _) => (n, Err(AccessError::from(e))),
            (Ok(()), Some(e)) => (n, Err(e)),
            (Ok(()), None) => (n, Ok(())),
        }
    }

    fn insert_each(&self, ctx: &SessionContext<'_>, rows: &[(&[u8], &[u8])]) -> (usize, Result<()>) {
        for (i, (key, value)) in rows.iter().enumerate() {
            if let Err(e) = self.insert(ctx, key, value) {
                return (i, Err(e));
            }
        }
        (rows.len(), Ok(()))
    }

    /// Replaces the row under `key`; returns false when there is none (then nothing
    /// stays locked below SERIALIZABLE, and the missing key's range at SERIALIZABLE).
    pub fn update(&self, ctx: &SessionContext<'_>, key: &[u8], value: &[u8]) -> Result<bool> {
        // No latch is held here: a worker that waited takes a scheduler again.
        diag::sched::safe_point();
        diag::sched::safe_point_in(self.db_id);
        self.check_level(ctx)?;
        let res = self.lock_for_write(ctx, key)?;
        let updated = {
            let _scope = ctx.txn.enter();
            self.tree.update(key, value)?
        };
        if !updated {
            self.absent_key(ctx, key, res, LockMode::RangeS_U)?;
        }
        Ok(updated)
    }

    /// Deletes the row under `key`; returns whether there was one. The key stays a ghost
    /// (seen and locked by scans) until the transaction ends.
    pub fn delete(&self, ctx: &SessionContext<'_>, key: &[u8]) -> Result<bool> {
        // No latch is held here: a worker that waited takes a scheduler again.
        diag::sched::safe_point();
        diag::sched::safe_point_in(self.db_id);
        self.check_level(ctx)?;
        let res = self.lock_for_write(ctx, key)?;
        // The X lock keeps anyone else from adding or removing the key from here on.
        // The ghost goes in before the entry leaves the tree, so a scan always meets the
        // key in one or the other; if the key turns out to be absent, the ghost table is
        // put back. All this happens with the gate held shared, so no check made under
        // the gate (an insert's next-key check, a SERIALIZABLE scan's re-read) ever sees
        // the ghost of a key that was not there: an insert that took it for its next key
        // would lock RangeI-N on a key no range lock covers, and slip a phantom into a
        // range a SERIALIZABLE scan had locked up to the key after it.
        let deleted = {
            let _gate = self.shared.gate.read();
            let previous = self.shared.ghosts.lock().entries.insert(key.to_vec(), ctx.owner().clone());
            let deleted = {
                let _scope = ctx.txn.enter();
                self.tree.delete(key)
            };
            if !matches!(deleted, Ok(true)) {
                // Not deleted after all: put the ghost table back as it was.
                let mut g = self.shared.ghosts.lock();
                match previous {
                    Some(p) => g.entries.insert(key.to_vec(), p),
                    None => g.entries.remove(key),
                };
            }
            deleted
        };
        match deleted {
            Ok(true) => {}
            Ok(false) => {
                self.absent_key(ctx, key, res, LockMode::RangeS_U)?;
                return Ok(false);
            }
            Err(e) => return Err(e.into()),
        }
        let due = {
            let g = self.shared.ghosts.lock();
            g.entries.len() >= g.cleanup_at
        };
        if due {
            self.cleanup_ghosts();
        }
        Ok(true)
    }

    /// IX on the table and X (RangeX-X at SERIALIZABLE) on the key.
    fn lock_for_write(&self, ctx: &SessionContext<'_>, key: &[u8]) -> Result<LockResource> {
        let mode = if ctx.isolation() == IsolationLevel::Serializable { LockMode::RangeX_X } else { LockMode::X };
        self.lock_kept(ctx, self.object_resource(), LockMode::IX)?;
        let res = self.key_resource(key);
        self.lock(ctx, res, mode)?;
        Ok(res)
    }

    /// Drops the ghosts whose deleting transaction has ended and that no lock relies on
    /// (the ghost cleanup task's job; also run as deletes accumulate ghosts). Returns how
    /// many were dropped.
    ///
    /// A ghost whose key is back in the tree goes at once (the tree holds the boundary).
    /// Any other is dropped only under a conditional (NOWAIT) RangeX-X lock, as SQL
    /// Server's ghost cleanup does, so a range lock still resting on it keeps it; as in
    /// SQL Server, those conditional requests that fail count in Lock Timeouts/sec (not in
    /// Lock Timeouts (timeout > 0)/sec).
    pub fn cleanup_ghosts(&self) -> usize {
        let _gate = self.shared.gate.write();
        // Read under the gate: it cannot change during the pass.
        let no_range_locks = !self.shared.serializable_seen.load(Ordering::Acquire);
        // Whether each deleter is still running, asked once per deleter (there are few):
        // a running one holds its X lock on every key it deleted (locks are only released
        // at its end).
        let mut running: Vec<(u64, bool)> = Vec::new();
        let mut is_running =
            |key: &[u8], deleter: &LockOwner| match running.iter().find(|(t, _)| *t == deleter.txn_id()) {
                Some((_, r)) => *r,
                None => {
                    let r = self.locks.held_mode(deleter, &self.key_resource(key)).is_some();
                    running.push((deleter.txn_id(), r));
                    r
                }
            };
        if no_range_locks {
            // Nothing SERIALIZABLE ever locked a range here: no lock rests on a ghost, so
            // every ghost whose delete ended goes, in one pass over the table (lock order:
            // ghosts, then the lock manager).
            let mut g = self.shared.ghosts.lock();
            let before = g.entries.len();
            g.entries.retain(|k, deleter| is_running(k, deleter));
            let dropped = before - g.entries.len();
            g.cleanup_at = (g.entries.len() * 2).max(GHOST_CLEANUP_MIN);
            return dropped;
        }
        let candidates: Vec<(Vec<u8>, LockOwner)> =
            self.shared.ghosts.lock().entries.iter().map(|(k, o)| (k.clone(), o.clone())).collect();
        let cleaner = LockOwner::new(CLEANUP_OWNER_IDS.fetch_sub(1, Ordering::Relaxed), GHOST_CLEANUP_SESSION_ID);
        let mut dropped = 0;
        let mut drop_ghost = |key: &[u8], deleter: &LockOwner| {
            let mut g = self.shared.ghosts.lock();
            if g.entries.get(key).is_some_and(|o| o.txn_id() == deleter.txn_id()) {
                g.entries.remove(key);
                dropped += 1;
            }
        };
        for (key, deleter) in candidates {
            let res = self.key_resource(&key);
            if is_running(&key, &deleter) {
                continue; // the delete hasn't committed or rolled back yet
            }
            // A read error keeps the ghost: keeping one is always safe.
            if self.tree.get_with(&key, |_| ()).ok().flatten().is_some() {
                drop_ghost(&key, &deleter);
            } else if self.locks.lock(&cleaner, res, LockMode::RangeX_X, LockTimeout::NoWait).is_ok() {
                drop_ghost(&key, &deleter);
                self.locks.unlock(&cleaner, res);
            }
        }
        self.locks.release_all(&cleaner);
        let mut g = self.shared.ghosts.lock();
        g.cleanup_at = (g.entries.len() * 2).max(GHOST_CLEANUP_MIN);
        dropped
    }

    /// Number of ghost keys remembered (for tests and DMVs).
    pub fn ghost_count(&self) -> usize {
        self.shared.ghosts.lock().entries.len()
    }

    // ---- helpers ----

    fn check_level(&self, ctx: &SessionContext<'_>) -> Result<()> {
        let o = ctx.options();
        let detail = match o.isolation {
            IsolationLevel::Serializable => {
                self.note_serializable();
                return Ok(());
            }
            IsolationLevel::Snapshot => {
                "Mesquite does not implement row versioning yet: SNAPSHOT isolation is not available."
            }
            IsolationLevel::ReadCommitted if o.read_committed_snapshot => {
                "Mesquite does not implement row versioning yet: READ_COMMITTED_SNAPSHOT is not available."
            }
            _ => return Ok(()),
        };
        Err(AccessError::RowVersioningNotSupported { database: self.tree.database().name(), detail })
    }

    /// Marks the HoBT as seen by SERIALIZABLE (see `HobtShared::serializable_seen`),
    /// under the gate so that no insert is between its check of the flag and its tree
    /// insert meanwhile.
    fn note_serializable(&self) {
        if !self.shared.serializable_seen.load(Ordering::Acquire) {
            let _gate = self.shared.gate.write();
            self.shared.serializable_seen.store(true, Ordering::Release);
        }
    }

    /// A lock held until the transaction ends (a write's IX or IU on the table): taken
    /// once per transaction, later requests are answered from the owner's list.
    fn lock_kept(&self, ctx: &SessionContext<'_>, res: LockResource, mode: LockMode) -> Result<()> {
        self.locks.lock_kept(ctx.owner(), res, mode, ctx.lock_timeout()).map_err(AccessError::Lock)
    }

    /// Locks `res` for a read; with READPAST, NOWAIT, and false when it is not free.
    fn lock_or_read_past(&self, ctx: &SessionContext<'_>, res: LockResource, mode: LockMode) -> Result<bool> {
        if !ctx.reads_past() {
            return self.lock(ctx, res, mode).map(|()| true);
        }
        match self.locks.lock(ctx.owner(), res, mode, LockTimeout::NoWait) {
            Ok(_) => Ok(true),
            Err(LockError::Timeout { .. }) => Ok(false),
            Err(e) => Err(AccessError::Lock(e)),
        }
    }

    fn lock(&self, ctx: &SessionContext<'_>, res: LockResource, mode: LockMode) -> Result<()> {
        self.locks.lock(ctx.owner(), res, mode, ctx.lock_timeout()).map(drop).map_err(AccessError::Lock)
    }

    /// The first key after `after` in the tree or among the ghosts, with its value when
    /// `values` (and it is in the tree), and the key after it. Holds no latch on return.
    fn probe(&self, after: Bound<&[u8]>, values: bool) -> Result<Probe, StorageError> {
        let mut tree_first: Option<(Vec<u8>, Option<Vec<u8>>)> = None;
        let mut tree_second: Option<Vec<u8>> = None;
        self.tree.scan(after, Bound::Unbounded, |k, v| {
            if tree_first.is_none() {
                tree_first = Some((k.to_vec(), values.then(|| v.to_vec())));
                true
            } else {
                tree_second = Some(k.to_vec());
                false
            }
        })?;
        let ghosts: Vec<Vec<u8>> = {
            let g = self.shared.ghosts.lock();
            g.entries.range::<[u8], _>((after, Bound::Unbounded)).take(2).map(|(k, _)| k.clone()).collect()
        };
        // Merge the two sorted pairs; a key in both is a row (in the tree).
        let mut keys: Vec<(&[u8], bool)> = Vec::with_capacity(4);
        if let Some((k, _)) = &tree_first {
            keys.push((k, true));
        }
        if let Some(k) = &tree_second {
            keys.push((k, true));
        }
        for k in &ghosts {
            keys.push((k, false));
        }
        keys.sort_by(|a, b| a.0.cmp(b.0).then(b.1.cmp(&a.1)));
        keys.dedup_by(|a, b| a.0 == b.0);
        let first_key = keys.first().map(|(k, _)| k.to_vec());
        let second = keys.get(1).map(|(k, _)| k.to_vec());
        let first = match first_key {
            None => None,
            Some(k) => match tree_first {
                Some((tk, v)) if tk == k => Some((tk, Some(v.unwrap_or_default()))),
                _ => Some((k, None)),
            },
        };
        Ok(Probe { first, second })
    }
}

/// Where a bounded locking scan stopped.
enum ScanEnd {
    /// The scan ended: true when it reached the end of the range, false when the
    /// callback stopped it.
    Done(bool),
    /// The step budget ran out after this key (returned or skipped).
    Paused(Vec<u8>),
}

/// What a READ COMMITTED batch is followed by.
enum Then {
    /// The range is done.
    Done,
    /// The next batch, after the batch's last row.
    AfterLastRow,
    /// The next batch, after the ghost at this index of the batch's ghost list.
    AfterGhost(usize),
    /// One key through the locking path first.
    Step,
}

/// Where a scan hands its rows (`LockedIndex::scan_expecting`); any
/// `FnMut(key, value) -> bool` is one.
pub trait ScanSink {
    /// One row; false stops the scan.
    fn row(&mut self, key: &[u8], value: &[u8]) -> bool;
    /// The first `n` rows of `batch`, in order; false stops the scan (after any of
    /// them). A sink that stores rows may copy them in bulk.
    fn rows(&mut self, batch: &EntryBatch, n: usize) -> bool {
        (0..n).all(|i| self.row(batch.key(i), batch.value(i)))
    }
}

impl<F: FnMut(&[u8], &[u8]) -> bool> ScanSink for F {
    fn row(&mut self, key: &[u8], value: &[u8]) -> bool {
        self(key, value)
    }
}

/// The entries of one READ COMMITTED batch, copied out of the latched leaves into one
/// buffer (no allocation per row; the buffer serves every batch of the scan), lent to
/// a [`ScanSink`].
#[derive(Default)]
pub struct EntryBatch {
    bytes: Vec<u8>,
    /// Per entry: where its key starts, where its value starts, where it ends.
    spans: Vec<(usize, usize, usize)>,
}

impl EntryBatch {
    /// The first `n` entries as one buffer and, per entry, where its key starts, where
    /// its value starts and where it ends in that buffer (a sink copies them in bulk).
    pub fn packed(&self, n: usize) -> (&[u8], &[(usize, usize, usize)]) {
        let spans = &self.spans[..n.min(self.spans.len())];
        let end = spans.last().map_or(0, |s| s.2);
        (&self.bytes[..end], spans)
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.spans.push((start, start + key.len(), self.bytes.len()));
    }

    pub fn key(&self, i: usize) -> &[u8] {
        let (a, b, _) = self.spans[i];
        &self.bytes[a..b]
    }

    pub fn value(&self, i: usize) -> &[u8] {
        let (_, b, c) = self.spans[i];
        &self.bytes[b..c]
    }

    /// The number of leading entries whose key satisfies `pred` (keys are ascending).
    fn partition_point(&self, pred: impl Fn(&[u8]) -> bool) -> usize {
        self.spans.partition_point(|&(a, b, _)| pred(&self.bytes[a..b]))
    }
}

/// How an insert's attempt under the gate ended.
enum InsertStep {
    /// The next key was still the one RangeI-N locked: the insert ran (or failed).
    Done(Result<(), StorageError>),
    /// A key moved in after the new key, or the next key went away: lock the new one.
    NextKeyMoved(Option<Vec<u8>>),
}

/// Whether `key` is inside the upper bound.
fn within_upper(key: &[u8], upper: Bound<&[u8]>) -> bool {
    match upper {
        Bound::Included(u) => key.cmp(u) != CmpOrdering::Greater,
        Bound::Excluded(u) => key.cmp(u) == CmpOrdering::Less,
        Bound::Unbounded => true,
    }
}

/// Whether `(lower, upper)` may hold a key: false for bounds `BTreeMap::range` would
/// reject (start above end, or equal and both excluded).
fn nonempty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    let (lo, lo_in, hi, hi_in) = match (lower, upper) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => return true,
        (Bound::Included(a), Bound::Included(b)) => (a, true, b, true),
        (Bound::Included(a), Bound::Excluded(b)) => (a, true, b, false),
        (Bound::Excluded(a), Bound::Included(b)) => (a, false, b, true),
        (Bound::Excluded(a), Bound::Excluded(b)) => (a, false, b, false),
    };
    match lo.cmp(hi) {
        CmpOrdering::Less => true,
        CmpOrdering::Equal => lo_in && hi_in,
        CmpOrdering::Greater => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_bounds() {
        assert!(within_upper(b"b", Bound::Included(b"b")));
        assert!(!within_upper(b"b", Bound::Excluded(b"b")));
        assert!(within_upper(b"a", Bound::Excluded(b"b")));
        assert!(!within_upper(b"c", Bound::Included(b"b")));
        assert!(within_upper(b"zzz", Bound::Unbounded));
    }

    #[test]
    fn empty_ranges() {
        use Bound::*;
        assert!(nonempty(Unbounded, Excluded(b"a")));
        assert!(nonempty(Included(b"a"), Included(b"a")));
        assert!(!nonempty(Included(b"a"), Excluded(b"a")));
        assert!(!nonempty(Excluded(b"a"), Excluded(b"a")));
        assert!(!nonempty(Included(b"b"), Included(b"a")));
        assert!(nonempty(Excluded(b"a"), Included(b"b")));
    }

    #[test]
    fn error_numbers() {
        let e = AccessError::RowVersioningNotSupported { database: "db".into(), detail: "x" };
        let s = e.to_sql_error();
        assert_eq!((s.number, s.severity, s.state), (3952, 16, 1));
        assert!(s.message.starts_with("Snapshot isolation transaction failed accessing database 'db'"));
        let d = AccessError::Lock(LockError::DeadlockVictim {
            session_id: 52,
            resource: LockResource::key(1, 2, 3),
            mode: LockMode::S,
        });
        assert!(d.requires_rollback());
        assert_eq!(d.number(), 1205);
        let t = AccessError::Lock(LockError::Timeout { resource: LockResource::key(1, 2, 3), mode: LockMode::S });
        assert!(!t.requires_rollback());
        assert_eq!(t.to_sql_error().number, 1222);
        assert_eq!(AccessError::Storage(StorageError::DuplicateKey).number(), 2601);
    }
}
