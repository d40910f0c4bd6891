//! `EngineHost`: the `sql::host::Host` of one session, over the instance's databases.
//!
//! # Indexes
//!
//! Every index is a unique storage B-tree (its allocation unit id is the HoBT id) read
//! and written through `txn::access::LockedIndex`, which takes the locks the session's
//! isolation level calls for. Rows are FixedVar records (`rows.rs`); values that do not
//! fit in the row go off-row into the index's LOB allocation unit, created the first time
//! one is needed and recorded in the database's system table (`directory.rs`) by a
//! transaction of its own, so it never disappears under a concurrent writer.
//!
//! # Transactions
//!
//! A host transaction (`begin` .. `commit` / `rollback`) holds one `txn::Transaction`
//! per database it touches, begun lazily at the first access. Savepoints are taken in
//! every one of them (a transaction begun after a savepoint replays it at its start, so
//! `rollback_to` always finds it). Commit commits them one database after the other, in
//! database id order: **a transaction spanning databases is not atomic across them**
//! (SQL Server uses a two-phase commit between databases; a crash in the middle here can
//! leave one database committed and another not).
//!
//! A deadlock victim (1205) is rolled back at once, releasing its locks for the survivor
//! (as SQL Server does); the executor's later `rollback` finds nothing to do.
//!
//! # What waits for commit
//!
//! Storage cannot undo freeing pages, so frees wait for the commit that makes them final:
//! - the off-row values of deleted and updated rows are freed after the commit, which
//!   lists them in the log first (`Transaction::commit_freeing`): recovery frees those
//!   a crash kept from being freed;
//! - `drop_index` frees the tree and its LOB unit after the commit, the same way;
//! - `create_index` builds the tree at once, in the transaction
//!   (`BTree::create_in_transaction`): its undo chain holds a `UnitDrop`, so a rollback
//!   (or a rollback to an earlier savepoint), or recovery's undo after a crash, drops
//!   the unit again. A table's first off-row value makes its LOB unit the same way when
//!   the same transaction created the table.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use sql::ast::{AlterDatabase, CreateDatabase};
use sql::catalog::SharedCatalog;
use sql::host::{
    CommitGate, DataAccess, DatabaseInfo, DbId, DeferredCommit, Diagnostics, FileInfo, HostError, HostResult, IndexRef,
    InstanceAdmin, Isolation, KeyRow, LockHints, Logins, RowDecoder, Sequences, StoredBatch, StoredColumn,
    Transactions,
};
use storage::btree::{BTree, BTreeOptions};
use storage::record::LobPointer;
use txn::access::{AccessError, LockedIndex, LockingOptions, SessionContext};
use txn::lock::{IsolationLevel, LockTimeout};
use txn::xact::{DeferredFree, Transaction};
use types::{SqlError, Value};

use crate::error::{EngineError, Result};
use crate::instance::{DbHandle, Instance};
use crate::rows::RowCodec;

thread_local! {
    /// The record buffer of [`DataAccess::insert`], reused row after row.
    static RECORD: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The session id of the instance's own work (catalog loading at start).
pub const SYSTEM_SPID: i32 = 1;

/// Work that waits for the end of a transaction (see the module doc).
enum Pending {
    Savepoint(String),
    /// Free an off-row value after commit.
    FreeLob(LobPointer),
    /// Free an index's storage (its tree, and its LOB unit if it has one) after commit
    /// (DROP).
    DropIndexAtCommit(u64, Option<u64>),
    /// An index this transaction created: its unit (and LOB unit) are dropped by the
    /// rollback's undo (`RowUndo::UnitDrop`); the caches forget it after a rollback.
    DropIndexAtRollback(u64),
    /// A LOB unit this transaction created for an index it also created: a rollback to
    /// a savepoint before it drops the unit, so the cached unit id goes.
    ForgetLobUnit(u64),
}

struct DbTxn {
    db: Arc<DbHandle>,
    txn: Transaction,
    pending: Vec<Pending>,
    handles: Handles,
}

/// The index handles and row codecs a transaction has used, so that its row operations
/// skip the database's shared caches (two mutexes every session would take per row).
/// Kept only while the transaction lasts and dropped by anything that may free or
/// re-create an index (DDL, a rollback to a savepoint), so a handle never outlives its
/// tree.
type Handles = Vec<(u64, LockedIndex, Arc<RowCodec>)>;

/// The handle and codec of `index`, from the transaction's list or the database.
fn handle<'h>(hs: &'h mut Handles, db: &DbHandle, index: &IndexRef) -> Result<&'h (u64, LockedIndex, Arc<RowCodec>)> {
    let found = hs.iter().position(|(h, _, c)| *h == index.hobt && Arc::ptr_eq(&c.columns, &index.columns));
    let i = match found {
        Some(i) => i,
        None => {
            let li = db.index(index.hobt)?;
            let codec = db.codec(index)?;
            hs.retain(|(h, _, _)| *h != index.hobt);
            hs.push((index.hobt, li, codec));
            hs.len() - 1
        }
    };
    Ok(&hs[i])
}

/// The host of one session. See the module doc.
pub struct EngineHost {
    inst: Arc<Instance>,
    spid: i32,
    login: String,
    in_txn: bool,
    txn_name: String,
    txn_begin: std::time::SystemTime,
    savepoints: Vec<String>,
    txns: BTreeMap<DbId, DbTxn>,
    isolation: Isolation,
    lock_timeout: LockTimeout,
    descriptor: u64,
    sysadmin: bool,
    /// Set when the session's connection takes durable commits' replies to the log
    /// writer (`Session::defer_commits`): a commit leaves its flush wait here.
    commit_gate: Option<Arc<CommitGate>>,
}

/// A durable commit put off by [`EngineHost::commit`] (see `sql::host::CommitGate`).
struct DeferredTxnCommit(txn::xact::PendingCommit);

impl DeferredCommit for DeferredTxnCommit {
    fn wait(self: Box<Self>) -> std::result::Result<(), SqlError> {
        self.0.wait().map(|_| ()).map_err(|e| EngineError::from(e).into())
    }

    fn when_durable(self: Box<Self>, then: Box<dyn FnOnce(std::result::Result<(), SqlError>) + Send>) {
        self.0.when_durable(move |r| then(r.map(|_| ()).map_err(|e| EngineError::from(e).into())));
    }
}

impl EngineHost {
    pub(crate) fn new(inst: Arc<Instance>, spid: i32, login: &str) -> EngineHost {
        EngineHost {
            inst,
            spid,
            login: login.to_string(),
            in_txn: false,
            txn_name: String::new(),
            txn_begin: std::time::SystemTime::UNIX_EPOCH,
            savepoints: Vec::new(),
            txns: BTreeMap::new(),
            isolation: Isolation::ReadCommitted,
            lock_timeout: LockTimeout::Infinite,
            descriptor: 0,
            sysadmin: true,
            commit_gate: None,
        }
    }

    /// From now on a durable COMMIT that ends the session's transaction does not wait
    /// for the log flush: it leaves the wait in `gate`, for the connection to take with
    /// the request's reply (or for the next statement to settle).
    pub(crate) fn defer_commits(&mut self, gate: Arc<CommitGate>) {
        self.commit_gate = Some(gate);
    }

    /// A commit whose flush wait can be put off: the session's connection takes such
    /// waits, and the transaction is in one database with nothing to do after its
    /// commit but release its locks (no storage to free, no cache to forget).
    fn deferrable(&self) -> Option<Arc<CommitGate>> {
        let gate = self.commit_gate.as_ref()?;
        let mut txns = self.txns.values();
        let only = txns.next()?;
        let plain = txns.next().is_none() && only.pending.iter().all(|p| matches!(p, Pending::Savepoint(_)));
        plain.then(|| gate.clone())
    }

    /// Whether the session's login is in the sysadmin role (decided at login).
    pub(crate) fn set_sysadmin(&mut self, on: bool) {
        self.sysadmin = on;
    }

    /// A host for the instance's own work.
    pub(crate) fn system(inst: Arc<Instance>) -> EngineHost {
        EngineHost::new(inst, SYSTEM_SPID, "sa")
    }

    /// The transaction descriptor the client sees in ENVCHANGE (0 outside a
    /// transaction).
    pub fn transaction_descriptor(&self) -> u64 {
        if self.in_txn {
            self.descriptor
        } else {
            0
        }
    }

    pub fn instance(&self) -> &Arc<Instance> {
        &self.inst
    }

    /// The open transaction as the transaction DMVs show it; `descriptor` is the one the
    /// client was sent. None outside a transaction.
    pub(crate) fn transaction_info(&self, descriptor: u64) -> Option<sql::host::TransactionInfo> {
        self.in_txn.then(|| sql::host::TransactionInfo {
            transaction_id: self.descriptor,
            name: if self.txn_name.is_empty() { "user_transaction".into() } else { self.txn_name.clone() },
            begin_time: self.txn_begin,
            descriptor,
        })
    }

    fn locking_options(&self) -> LockingOptions {
        let isolation = match self.isolation {
            Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
            Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
            Isolation::RepeatableRead => IsolationLevel::RepeatableRead,
            Isolation::Serializable => IsolationLevel::Serializable,
            Isolation::Snapshot => IsolationLevel::Snapshot,
        };
        LockingOptions { isolation, lock_timeout: self.lock_timeout, read_committed_snapshot: false, read_past: false }
    }

    /// The session's locking options with a table reference's locking hints applied.
    fn hinted_options(&self, hints: LockHints) -> LockingOptions {
        let mut o = self.locking_options();
        if let Some(level) = hints.isolation {
            o.isolation = match level {
                Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
                Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
                Isolation::RepeatableRead => IsolationLevel::RepeatableRead,
                Isolation::Serializable => IsolationLevel::Serializable,
                Isolation::Snapshot => IsolationLevel::Snapshot,
            };
        }
        o.read_past = hints.read_past;
        if hints.no_wait {
            o.lock_timeout = LockTimeout::NoWait;
        }
        o
    }

    /// The session's transaction in `db`, begun now if this is its first access there.
    fn txn_for(&mut self, db: DbId) -> Result<&mut DbTxn> {
        if !self.txns.contains_key(&db) {
            let h = self.inst.db(db)?;
            let name = if self.txn_name.is_empty() { "user_transaction" } else { &self.txn_name };
            let mut txn = h.txn.begin(name, self.spid)?;
            let mut pending = Vec::new();
            for sp in &self.savepoints {
                txn.save(sp)?;
                pending.push(Pending::Savepoint(sp.clone()));
            }
            h.active_txns.fetch_add(1, Ordering::AcqRel);
            self.txns.insert(db, DbTxn { db: h, txn, pending, handles: Vec::new() });
        }
        self.txns.get_mut(&db).ok_or_else(|| EngineError::NoSuchDatabase(db.to_string()))
    }

    /// Runs `f` in the session's transaction in `db`. Without an open host transaction
    /// (an executor bug) it is an error in debug builds and an autocommit transaction of
    /// its own in release builds.
    fn run<R>(
        &mut self,
        db: DbId,
        f: impl FnOnce(&DbHandle, &SessionContext<'_>, &mut Vec<Pending>, &mut Handles) -> Result<R>,
    ) -> HostResult<R> {
        self.run_hinted(db, LockHints::default(), f)
    }

    /// [`run`](Self::run) under a table reference's locking hints.
    fn run_hinted<R>(
        &mut self,
        db: DbId,
        hints: LockHints,
        f: impl FnOnce(&DbHandle, &SessionContext<'_>, &mut Vec<Pending>, &mut Handles) -> Result<R>,
    ) -> HostResult<R> {
        let auto = !self.in_txn;
        if auto {
            // The executor always brackets index work in begin/commit; catch a slip in
            // debug builds, and keep release builds correct with an autocommit.
            if cfg!(debug_assertions) {
                return Err(HostError::Sql(SqlError::new(
                    8630,
                    16,
                    1,
                    "Internal Query Processor Error: an index operation ran outside a transaction.",
                )));
            }
            self.begin("autocommit")?;
        }
        let options = if hints.is_none() { self.locking_options() } else { self.hinted_options(hints) };
        let r = match self.txn_for(db) {
            Ok(t) => {
                let ctx = SessionContext::new(&t.txn, options);
                f(&t.db, &ctx, &mut t.pending, &mut t.handles)
            }
            Err(e) => Err(e),
        };
        if let Err(EngineError::Access(e)) = &r {
            if e.requires_rollback() {
                // Deadlock victim: roll back now so the survivor gets our locks.
                let _ = self.rollback();
            }
        }
        if auto && self.in_txn {
            if r.is_ok() {
                self.commit(None)?;
            } else {
                let _ = self.rollback();
            }
        }
        r.map_err(HostError::from)
    }

    fn end_all(&mut self) -> Vec<DbTxn> {
        self.in_txn = false;
        self.savepoints.clear();
        self.descriptor = 0;
        let txns: Vec<DbTxn> = std::mem::take(&mut self.txns).into_values().collect();
        for t in &txns {
            t.db.active_txns.fetch_sub(1, Ordering::AcqRel);
        }
        txns
    }
}

fn check_writable(db: &DbHandle) -> Result<()> {
    if db.read_only() {
        return Err(EngineError::ReadOnly(db.name()));
    }
    Ok(())
}

/// The LOB unit of an index, created (and recorded) if it has none yet. Serialised per
/// database by the system table's row: a second creator finds the first one's row.
/// For an index its own transaction created, the unit and the row belong to that
/// transaction (no other session can reach the index before it commits), so a rollback,
/// or recovery's undo after a crash, drops them with the index; otherwise they are
/// committed on their own at once, since other sessions' values may go into the unit
/// before this transaction ends.
fn ensure_lob_unit(db: &DbHandle, ctx: &SessionContext<'_>, pending: &mut Vec<Pending>, hobt: u64) -> Result<u64> {
    if let Some(u) = db.lob_unit(hobt)? {
        return Ok(u);
    }
    static CREATE: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    let _one = CREATE.lock();
    db.forget_lob_unit_cache(hobt);
    if let Some(u) = db.lob_unit(hobt)? {
        return Ok(u);
    }
    let tree = db.index(hobt)?;
    if pending.iter().any(|p| matches!(p, Pending::DropIndexAtRollback(h) if *h == hobt)) {
        let _scope = ctx.transaction().enter();
        let unit =
            storage::lob::create_unit_in_transaction(&db.txn.db, tree.tree().object_id(), tree.tree().index_id())?;
        db.system.insert(&crate::directory::lob_unit_key(hobt), &unit.id.to_le_bytes())?;
        pending.push(Pending::ForgetLobUnit(hobt));
        db.remember_lob_unit(hobt, Some(unit.id));
        return Ok(unit.id);
    }
    let unit = storage::lob::create_unit(&db.txn.db, tree.tree().object_id(), tree.tree().index_id())?;
    let t = db.txn.begin("create LOB unit", SYSTEM_SPID)?;
    {
        let _scope = t.enter();
        db.system.insert(&crate::directory::lob_unit_key(hobt), &unit.id.to_le_bytes())?;
    }
    t.commit(false)?;
    db.remember_lob_unit(hobt, Some(unit.id));
    Ok(unit.id)
}

/// Frees an index's tree, its LOB unit and the system table row naming it.
fn drop_index_storage(db: &DbHandle, hobt: u64) {
    let lob = db.lob_unit(hobt).ok().flatten();
    db.forget_index(hobt);
    let r = (|| -> Result<()> {
        db.txn.db.drop_alloc_unit(hobt)?;
        if let Some(u) = lob {
            db.txn.db.drop_alloc_unit(u)?;
            let t = db.txn.begin("drop LOB unit", SYSTEM_SPID)?;
            {
                let _scope = t.enter();
                db.system.delete(&crate::directory::lob_unit_key(hobt))?;
            }
            t.commit(false)?;
        }
        Ok(())
    })();
    if let Err(e) = r {
        // The index is gone for the catalog; its pages stay allocated (DBCC reports them).
        diag::errorlog::log(
            "spid0s",
            &format!("Could not free the storage of HoBT {hobt} in database ID {}: {e}", db.id),
        );
    }
}

fn free_lobs(db: &DbHandle, ptrs: &[LobPointer]) {
    for p in ptrs {
        if let Err(e) = storage::lob::delete(&db.txn.db, *p) {
            diag::errorlog::log(
                "spid0s",
                &format!("Could not free an off-row value ({} bytes) in database ID {}: {e}", p.total_len, db.id),
            );
        }
    }
}

/// The storage a transaction dropped (off-row values its deletes and updates replaced,
/// dropped indexes' trees and LOB units): the commit lists it in the log and frees it
/// (`Transaction::commit_freeing`).
fn frees_at_commit(pending: &[Pending]) -> Vec<DeferredFree> {
    let mut out = Vec::new();
    for p in pending {
        match p {
            Pending::FreeLob(ptr) => out.push(DeferredFree::Lob(*ptr)),
            Pending::DropIndexAtCommit(hobt, lob) => {
                out.push(DeferredFree::AllocUnit(*hobt));
                out.extend(lob.map(DeferredFree::AllocUnit));
            }
            Pending::Savepoint(_) | Pending::DropIndexAtRollback(_) | Pending::ForgetLobUnit(_) => {}
        }
    }
    out
}

fn after_commit(db: &DbHandle, pending: Vec<Pending>) {
    for p in pending {
        if let Pending::DropIndexAtCommit(hobt, _) = p {
            db.forget_index(hobt);
        }
    }
}

fn after_rollback(db: &DbHandle, pending: Vec<Pending>) {
    for p in pending.into_iter().rev() {
        match p {
            // The rollback's undo dropped the units (RowUndo::UnitDrop); without a log
            // (nothing was undone) they are dropped here.
            Pending::DropIndexAtRollback(hobt) if db.txn.db.alloc_unit(hobt).is_ok() => drop_index_storage(db, hobt),
            Pending::DropIndexAtRollback(hobt) => db.forget_index(hobt),
            Pending::ForgetLobUnit(hobt) => db.forget_lob_unit_cache(hobt),
            _ => {}
        }
    }
}

/// Reads and decodes one row. An off-row value can vanish between reading the row and
/// reading the value at READ COMMITTED (the row's lock is released after the read and
/// a committed delete frees the value): the row is read again.
fn read_row(
    db: &DbHandle,
    index: &LockedIndex,
    ctx: &SessionContext<'_>,
    codec: &RowCodec,
    key: &[u8],
    for_update: bool,
) -> Result<Option<Vec<Value>>> {
    let mut attempt = 0;
    loop {
        let bytes = if for_update { index.get_for_update(ctx, key)? } else { index.get(ctx, key)? };
        let Some(bytes) = bytes else { return Ok(None) };
        match codec.decode(&bytes, &db.txn.db) {
            Ok(row) => return Ok(Some(row)),
            Err(e) if attempt >= 2 || !codec.has_lob_columns() => return Err(e),
            Err(_) => attempt += 1,
        }
    }
}

/// Takes up to `max` rows of a forward scan into a [`StoredBatch`]; `more` when one
/// more came. Whole READ COMMITTED batches are copied in bulk.
struct BatchSink<'a> {
    raw: &'a mut StoredBatch,
    max: usize,
    taken: usize,
    more: &'a mut bool,
}

impl txn::access::ScanSink for BatchSink<'_> {
    fn row(&mut self, key: &[u8], value: &[u8]) -> bool {
        if self.taken == self.max {
            *self.more = true;
            return false;
        }
        self.raw.push(key, value);
        self.taken += 1;
        true
    }

    fn rows(&mut self, batch: &txn::access::EntryBatch, n: usize) -> bool {
        let fit = n.min(self.max - self.taken);
        let (bytes, spans) = batch.packed(fit);
        self.raw.extend_packed(bytes, spans);
        self.taken += fit;
        (fit..n).all(|i| self.row(batch.key(i), batch.value(i)))
    }
}

/// Up to `max` entries of the range as stored (key, record), in key order or reversed,
/// appended to `raw`; returns whether the range goes on after them. See `DataAccess::scan`.
fn scan_raw(
    li: &LockedIndex,
    ctx: &SessionContext<'_>,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    reverse: bool,
    max: usize,
    raw: &mut StoredBatch,
) -> Result<bool> {
    let mut more = false;
    let mut taken = 0usize;
    if !reverse {
        let sink = BatchSink { raw, max, taken: 0, more: &mut more };
        li.scan_expecting(ctx, lower, upper, max.saturating_add(1), sink)?;
    } else if ctx.isolation() == IsolationLevel::ReadUncommitted {
        let mut cur = li.tree().range_rev(lower, upper);
        while let Some((k, v)) = cur.next_entry().map_err(AccessError::from)? {
            if taken == max {
                more = true;
                break;
            }
            raw.push(k, v);
            taken += 1;
        }
    } else {
        // LockedIndex scans forward only: find where the last `max` keys of the
        // range begin, scan from there forward under locks, and reverse.
        let mut probe: Vec<Vec<u8>> = Vec::new();
        {
            let mut cur = li.tree().range_rev(lower, upper);
            while let Some((k, _)) = cur.next_entry().map_err(AccessError::from)? {
                probe.push(k.to_vec());
                if probe.len() > max {
                    break;
                }
            }
        }
        if max == 0 {
            return Ok(!probe.is_empty());
        }
        let start = if probe.len() > max {
            more = true;
            Bound::Included(probe[max - 1].as_slice())
        } else {
            lower
        };
        let mut rows = StoredBatch::default();
        li.scan(ctx, start, upper, |k, v| {
            rows.push(k, v);
            true
        })?;
        let skip = rows.len().saturating_sub(max);
        if skip > 0 {
            more = true;
        }
        for i in (skip..rows.len()).rev() {
            raw.push(rows.key(i), rows.record(i));
        }
    }
    Ok(more)
}

impl DataAccess for EngineHost {
    fn scan(
        &mut self,
        index: &IndexRef,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        max: usize,
        out: &mut Vec<KeyRow>,
    ) -> HostResult<bool> {
        self.run_hinted(index.db, index.hints, |db, ctx, _, hs| {
            let (_, li, codec) = handle(hs, db, index)?;
            let mut raw = StoredBatch::default();
            let more = scan_raw(li, ctx, lower, upper, reverse, max, &mut raw)?;
            for i in 0..raw.len() {
                let k = raw.key(i);
                match codec.decode(raw.record(i), &db.txn.db) {
                    Ok(row) => out.push((k.to_vec(), row)),
                    Err(e) if !codec.has_lob_columns() => return Err(e),
                    // See `read_row`: read the row again; gone means deleted meanwhile.
                    Err(_) => {
                        if let Some(row) = read_row(db, li, ctx, codec, k, false)? {
                            out.push((k.to_vec(), row));
                        }
                    }
                }
            }
            Ok(more)
        })
    }
    fn scan_stored(
        &mut self,
        index: &IndexRef,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        max: usize,
        out: &mut StoredBatch,
    ) -> HostResult<Option<(bool, Arc<dyn RowDecoder>)>> {
        self.run_hinted(index.db, index.hints, |db, ctx, _, hs| {
            let (_, li, codec) = handle(hs, db, index)?;
            let more = scan_raw(li, ctx, lower, upper, reverse, max, out)?;
            let decoder: Arc<dyn RowDecoder> = codec.clone();
            Ok(Some((more, decoder)))
        })
    }
    fn get(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<Option<Vec<Value>>> {
        self.run_hinted(index.db, index.hints, |db, ctx, _, hs| {
            let (_, li, codec) = handle(hs, db, index)?;
            read_row(db, li, ctx, codec, key, false)
        })
    }
    fn get_for_update(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<Option<Vec<Value>>> {
        self.run_hinted(index.db, index.hints, |db, ctx, _, hs| {
            let (_, li, codec) = handle(hs, db, index)?;
            read_row(db, li, ctx, codec, key, true)
        })
    }
    fn insert(&mut self, index: &IndexRef, key: &[u8], row: &[Value]) -> HostResult<()> {
        self.run(index.db, |db, ctx, pending, hs| {
            check_writable(db)?;
            let (_, li, codec) = handle(hs, db, index)?;
            let mut written = Vec::new();
            let r = RECORD.with(|cell| {
                // The thread's record buffer (no allocation per row); taken, so that a
                // nested insert (a LOB unit's directory row) would only find it empty.
                let mut rec = cell.take();
                let r = (|| {
                    codec.encode_into(
                        row,
                        key.len(),
                        &mut written,
                        |bytes| {
                            let unit = ensure_lob_unit(db, ctx, pending, index.hobt)?;
                            let _scope = ctx.transaction().enter();
                            Ok(storage::lob::write(&db.txn.db, unit, bytes)?)
                        },
                        &mut rec,
                    )?;
                    li.insert(ctx, key, &rec)?;
                    Ok(())
                })();
                cell.set(rec);
                r
            });
            if r.is_err() {
                // Never visible to anyone: freed now (the undo of their writes, should
                // the transaction roll back, finds them gone and does nothing).
                free_lobs(db, &written);
            }
            r
        })
    }
    fn insert_many(&mut self, index: &IndexRef, rows: &[(Vec<u8>, Vec<Value>)]) -> Result<(), (usize, HostError)> {
        // Where the first failure is (rows before it are in); the run's closure reports
        // the error itself, so that a deadlock still rolls back at once.
        let mut failed_at = 0usize;
        let mut one_by_one = false;
        let r = self.run(index.db, |db, ctx, _, hs| {
            check_writable(db)?;
            let (_, li, codec) = handle(hs, db, index)?;
            if codec.has_lob_columns() {
                // Off-row values are written while a row is encoded and freed when its
                // insert fails: kept per row, through `insert`.
                one_by_one = true;
                return Ok(());
            }
            RECORD.with(|cell| {
                // All the rows' records in the thread's buffer, one after another.
                let mut buf = cell.take();
                buf.clear();
                let mut ends = Vec::with_capacity(rows.len());
                let mut written = Vec::new();
                let mut one = Vec::new();
                let mut encode_err = None;
                for (key, row) in rows {
                    // Never called: the codec has no LOB columns.
                    let no_lob =
                        |_: &[u8]| Err(EngineError::NotSupported("An off-row value in a batched insert".into()));
                    if let Err(e) = codec.encode_into(row, key.len(), &mut written, no_lob, &mut one) {
                        encode_err = Some(e);
                        break;
                    }
                    let start = buf.len();
                    buf.extend_from_slice(&one);
                    ends.push((start, buf.len()));
                }
                let entries: Vec<(&[u8], &[u8])> =
                    ends.iter().zip(rows).map(|(&(a, b), (key, _))| (key.as_slice(), &buf[a..b])).collect();
                let (n, r) = li.insert_run(ctx, &entries);
                drop(entries);
                cell.set(buf);
                failed_at = n;
                r?;
                match encode_err {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            })
        });
        match r {
            Ok(()) if one_by_one => {
                for (i, (key, row)) in rows.iter().enumerate() {
                    self.insert(index, key, row).map_err(|e| (i, e))?;
                }
                Ok(())
            }
            Ok(()) => Ok(()),
            Err(e) => Err((failed_at, e)),
        }
    }
    fn update(&mut self, index: &IndexRef, key: &[u8], row: &[Value]) -> HostResult<bool> {
        self.run(index.db, |db, ctx, pending, hs| {
            check_writable(db)?;
            let (_, li, codec) = handle(hs, db, index)?;
            let old = if codec.has_lob_columns() {
                match li.get_for_update(ctx, key)? {
                    Some(old) => Some(old),
                    None => return Ok(false),
                }
            } else {
                None
            };
            let mut written = Vec::new();
            let r = (|| {
                let rec = codec.encode(row, key.len(), &mut written, |bytes| {
                    let unit = ensure_lob_unit(db, ctx, pending, index.hobt)?;
                    let _scope = ctx.transaction().enter();
                    Ok(storage::lob::write(&db.txn.db, unit, bytes)?)
                })?;
                Ok(li.update(ctx, key, &rec)?)
            })();
            match r {
                Ok(true) => {
                    if let Some(old) = old {
                        match codec.lob_pointers(&old) {
                            Ok(ptrs) => pending.extend(ptrs.into_iter().map(Pending::FreeLob)),
                            Err(e) => diag::errorlog::log(
                                "spid0s",
                                &format!("The old version of an updated row could not be read to free its off-row values: {e}"),
                            ),
                        }
                    }
                    Ok(true)
                }
                other => {
                    free_lobs(db, &written);
                    other
                }
            }
        })
    }
    fn delete(&mut self, index: &IndexRef, key: &[u8]) -> HostResult<bool> {
        self.run(index.db, |db, ctx, pending, hs| {
            check_writable(db)?;
            let (_, li, codec) = handle(hs, db, index)?;
            let old = if codec.has_lob_columns() { li.get_for_update(ctx, key)? } else { None };
            let deleted = li.delete(ctx, key)?;
            if deleted {
                if let Some(old) = old {
                    if let Ok(ptrs) = codec.lob_pointers(&old) {
                        pending.extend(ptrs.into_iter().map(Pending::FreeLob));
                    }
                }
            }
            Ok(deleted)
        })
    }
    fn create_index(&mut self, db: DbId, object_id: i32, index_id: i32, _columns: &[StoredColumn]) -> HostResult<u64> {
        self.run(db, |h, ctx, pending, hs| {
            hs.clear();
            check_writable(h)?;
            // Storage numbers a heap's tree like a clustered index: both hold whole rows.
            let storage_index_id = u16::try_from(index_id.max(1)).map_err(|_| {
                EngineError::Sql(SqlError::new(1910, 16, 1, format!("Index id {index_id} is out of range.")))
            })?;
            let tree = {
                // In the transaction's scope, so its commit flushes the new tree's log.
                let _scope = ctx.transaction().enter();
                BTree::create_in_transaction(
                    &h.txn.db,
                    object_id as u32,
                    storage_index_id,
                    BTreeOptions { unique: true },
                )?
            };
            let hobt = tree.alloc_unit_id();
            h.remember_lob_unit(hobt, None);
            pending.push(Pending::DropIndexAtRollback(hobt));
            Ok(hobt)
        })
    }
    fn drop_index(&mut self, index: &IndexRef) -> HostResult<()> {
        self.run(index.db, |db, ctx, pending, hs| {
            hs.clear();
            check_writable(db)?;
            // The system table's row naming the LOB unit goes in this transaction (a
            // rollback puts it back); the units themselves are freed after the commit.
            let lob = db.lob_unit(index.hobt)?;
            if lob.is_some() {
                let _scope = ctx.transaction().enter();
                db.system.delete(&crate::directory::lob_unit_key(index.hobt))?;
            }
            pending.push(Pending::DropIndexAtCommit(index.hobt, lob));
            Ok(())
        })
    }
}

impl Transactions for EngineHost {
    fn begin(&mut self, name: &str) -> HostResult<()> {
        if self.in_txn {
            return Ok(());
        }
        if !self.inst.is_running() {
            return Err(EngineError::ShuttingDown.into());
        }
        self.in_txn = true;
        self.txn_name = name.to_string();
        self.txn_begin = std::time::SystemTime::now();
        self.descriptor = self.inst.next_descriptor();
        Ok(())
    }
    fn commit(&mut self, delayed: Option<bool>) -> HostResult<()> {
        if !self.in_txn {
            return Ok(());
        }
        if let Some(gate) = self.deferrable() {
            let Some(t) = self.end_all().pop() else { return Ok(()) };
            return match t.txn.commit_deferrable(delayed.unwrap_or(false)) {
                Ok(txn::xact::CommitOutcome::Done(_)) => Ok(()),
                Ok(txn::xact::CommitOutcome::Pending(p)) => {
                    gate.put(Box::new(DeferredTxnCommit(p))).map_err(HostError::Sql)
                }
                // A failed commit rolled the transaction back (Transaction's drop).
                Err(e) => Err(EngineError::from(e).into()),
            };
        }
        let mut first_err: Option<EngineError> = None;
        for t in self.end_all() {
            let DbTxn { db, txn, pending, .. } = t;
            match txn.commit_freeing(delayed.unwrap_or(false), &frees_at_commit(&pending)) {
                Ok(_) => after_commit(&db, pending),
                Err(e) => {
                    // A failed commit rolled the transaction back (Transaction's drop).
                    after_rollback(&db, pending);
                    first_err.get_or_insert(e.into());
                }
            }
        }
        first_err.map_or(Ok(()), |e| Err(e.into()))
    }
    fn rollback(&mut self) -> HostResult<()> {
        let mut first_err: Option<EngineError> = None;
        for t in self.end_all() {
            let DbTxn { db, txn, pending, .. } = t;
            if let Err(e) = txn.rollback() {
                first_err.get_or_insert(e.into());
            }
            after_rollback(&db, pending);
        }
        first_err.map_or(Ok(()), |e| Err(e.into()))
    }
    fn save(&mut self, name: &str) -> HostResult<()> {
        if !self.in_txn {
            return Err(HostError::Sql(SqlError::new(
                628,
                16,
                0,
                "Cannot issue SAVE TRANSACTION when there is no active transaction.",
            )));
        }
        // The same name as the newest savepoint replaces it (see `Transaction::save`):
        // the executor saves one before every statement of a transaction.
        // (An exact match first: the executor's own name, every statement.)
        let again = self.savepoints.last().is_some_and(|s| s == name || s.eq_ignore_ascii_case(name));
        for t in self.txns.values_mut() {
            t.txn.save(name).map_err(EngineError::from)?;
            let newest = t.pending.iter().rposition(|p| matches!(p, Pending::Savepoint(_)));
            match newest {
                Some(i) if again => {
                    let marker = t.pending.remove(i);
                    t.pending.push(marker);
                }
                _ => t.pending.push(Pending::Savepoint(name.to_string())),
            }
        }
        if !again {
            self.savepoints.push(name.to_string());
        }
        Ok(())
    }
    fn rollback_to(&mut self, name: &str) -> HostResult<()> {
        let Some(pos) = self.savepoints.iter().rposition(|s| s.eq_ignore_ascii_case(name)).filter(|_| self.in_txn)
        else {
            return Err(HostError::Sql(SqlError::new(
                6401,
                16,
                1,
                format!("Cannot roll back {name}. No transaction or savepoint of that name was found."),
            )));
        };
        let mut first_err: Option<EngineError> = None;
        for t in self.txns.values_mut() {
            // A savepoint rollback may free indexes created after it.
            t.handles.clear();
            if let Err(e) = t.txn.rollback_to(name) {
                first_err.get_or_insert(e.into());
            }
            // Undo the deferred work newer than the savepoint (the marker stays: the
            // savepoint can be rolled back to again).
            let mut undone = Vec::new();
            while let Some(p) = t.pending.pop() {
                if matches!(&p, Pending::Savepoint(s) if s.eq_ignore_ascii_case(name)) {
                    t.pending.push(p);
                    break;
                }
                undone.push(p);
            }
            undone.reverse();
            after_rollback(&t.db, undone);
        }
        self.savepoints.truncate(pos + 1);
        first_err.map_or(Ok(()), |e| Err(e.into()))
    }
    fn in_transaction(&self) -> bool {
        self.in_txn
    }
    fn settle_commit(&mut self) -> HostResult<()> {
        match &self.commit_gate {
            Some(gate) => gate.settle().map_err(HostError::Sql),
            None => Ok(()),
        }
    }
    fn set_isolation(&mut self, level: Isolation) -> HostResult<()> {
        self.isolation = level;
        Ok(())
    }
    fn set_lock_timeout(&mut self, ms: i64) {
        self.lock_timeout = LockTimeout::from_setting(ms);
    }
}

impl InstanceAdmin for EngineHost {
    fn databases(&self) -> Vec<DatabaseInfo> {
        self.inst.databases()
    }
    fn database_files(&self, db: DbId) -> Vec<FileInfo> {
        self.inst.database_files(db)
    }
    fn create_database(&mut self, stmt: &CreateDatabase) -> HostResult<DbId> {
        Ok(self.inst.create_database(stmt)?)
    }
    fn alter_database(&mut self, db: DbId, stmt: &AlterDatabase) -> HostResult<()> {
        let own_txn = self.txns.contains_key(&db);
        Ok(self.inst.alter_database(db, stmt, self.spid, own_txn)?)
    }
    fn drop_database(&mut self, db: DbId) -> HostResult<()> {
        let own_txn = self.txns.contains_key(&db);
        self.inst.drop_database(db, self.spid, own_txn)?;
        if let Some(DbTxn { db: h, txn, .. }) = self.txns.remove(&db) {
            // The database is gone with its files: its transaction can only be abandoned.
            h.active_txns.fetch_sub(1, Ordering::AcqRel);
            let _ = txn.rollback();
        }
        Ok(())
    }
    fn checkpoint(&mut self, db: DbId, duration_seconds: Option<i32>) -> HostResult<()> {
        let h = self.inst.db(db)?;
        let duration = duration_seconds.filter(|s| *s > 0).map(|s| Duration::from_secs(s as u64));
        h.txn.checkpoint_manual(duration).map_err(EngineError::from)?;
        Ok(())
    }
    fn flush_log(&mut self, db: DbId) -> HostResult<()> {
        let h = self.inst.db(db)?;
        h.txn.log.flush_to(h.txn.log.end_lsn()).map_err(EngineError::from)?;
        Ok(())
    }
    fn catalog(&self, db: DbId) -> HostResult<Arc<SharedCatalog>> {
        Ok(self.inst.db(db)?.catalog.clone())
    }
    fn spill_dir(&self) -> std::path::PathBuf {
        self.inst.spill_dir()
    }
    fn kill_session(&mut self, spid: i32, status_only: bool) -> Result<Option<String>, SqlError> {
        self.inst.kill_session(self.spid, spid, status_only)
    }
    fn check_database(&mut self, db: DbId) -> HostResult<Vec<String>> {
        Ok(self.inst.check_database(db)?)
    }
}

impl Sequences for EngineHost {
    fn sequence_bound(&mut self, db: DbId, object_id: i32) -> HostResult<Option<(u32, i128)>> {
        let h = self.inst.db(db)?;
        let Some(v) = h.system.get(&crate::directory::sequence_key(object_id)).map_err(EngineError::from)? else {
            return Ok(None);
        };
        let restarts = v.get(..4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
        let bound = v.get(4..20).and_then(|b| b.try_into().ok()).map(i128::from_le_bytes);
        match (restarts, bound) {
            (Some(r), Some(b)) => Ok(Some((r, b))),
            _ => Err(EngineError::CorruptSystemTable {
                db,
                detail: format!("the bound of sequence object {object_id} is damaged"),
            }
            .into()),
        }
    }
    fn set_sequence_bound(&mut self, db: DbId, object_id: i32, restarts: u32, bound: i128) -> HostResult<()> {
        let h = self.inst.db(db)?;
        check_writable(&h)?;
        let key = crate::directory::sequence_key(object_id);
        let mut value = restarts.to_le_bytes().to_vec();
        value.extend_from_slice(&bound.to_le_bytes());
        // A transaction of its own, committed at once: the session's rollback must not
        // give values back.
        let t = h.txn.begin("sequence bound", SYSTEM_SPID).map_err(EngineError::from)?;
        {
            let _scope = t.enter();
            if !h.system.update(&key, &value).map_err(EngineError::from)? {
                h.system.insert(&key, &value).map_err(EngineError::from)?;
            }
        }
        t.commit(false).map_err(EngineError::from)?;
        Ok(())
    }
}

impl Diagnostics for EngineHost {
    fn os_wait_stats(&self) -> Vec<sql::host::WaitStatRow> {
        crate::dmv::os_wait_stats()
    }
    fn session_wait_stats(&self) -> Vec<sql::host::WaitStatRow> {
        self.inst.dmv_session_waits()
    }
    fn virtual_file_stats(&self, db: Option<DbId>, file_id: Option<i32>) -> Vec<sql::host::FileStatRow> {
        self.inst.dmv_file_stats(db, file_id)
    }
    fn sessions(&self) -> Vec<sql::host::SessionRow> {
        let mut rows = self.inst.dmv_sessions();
        // The caller's own transaction as it is now (the published one is from the end
        // of its last request); the executor fills in its descriptor.
        if let Some(own) = rows.iter_mut().find(|r| r.session_id == self.spid) {
            own.transaction = self.transaction_info(0);
        }
        rows
    }
    fn allocation_units(&self, db: DbId) -> Vec<sql::host::AllocationUnitRow> {
        self.inst.dmv_allocation_units(db)
    }
    fn sys_info(&self) -> Option<sql::host::SysInfo> {
        Some(self.inst.dmv_sys_info())
    }
    fn performance_counters(&self) -> Vec<sql::host::CounterRow> {
        crate::dmv::performance_counters()
    }
    fn log_space(&self) -> Vec<sql::host::LogSpaceRow> {
        self.inst.dmv_log_space()
    }
    fn clear_stats(&mut self, what: sql::host::ClearStats) -> HostResult<()> {
        crate::dmv::clear_stats(what);
        Ok(())
    }
    fn locks(&self) -> Vec<sql::host::LockRow> {
        self.inst.dmv_locks()
    }
}

impl Logins for EngineHost {
    fn session_id(&self) -> i32 {
        self.spid
    }
    fn login_name(&self) -> String {
        self.login.clone()
    }
    fn is_sysadmin(&self) -> bool {
        self.sysadmin
    }
    fn create_login(
        &mut self,
        name: &str,
        password: &str,
        default_database: &str,
        check_policy: bool,
    ) -> HostResult<()> {
        Ok(self.inst.create_login(name, password, default_database, check_policy)?)
    }
    fn alter_login(&mut self, name: &str, change: sql::host::LoginChange) -> HostResult<()> {
        Ok(self.inst.alter_login(name, change)?)
    }
    fn drop_login(&mut self, name: &str) -> HostResult<()> {
        Ok(self.inst.drop_login(name)?)
    }
    fn logins(&mut self) -> HostResult<Vec<sql::host::LoginInfo>> {
        let recs = self.inst.logins()?;
        Ok(recs
            .into_iter()
            .map(|r| sql::host::LoginInfo {
                principal_id: r.principal_id,
                name: r.name,
                disabled: r.disabled,
                sysadmin: r.sysadmin,
                policy_checked: r.policy_checked,
                default_database: r.default_database,
                create_date: datetime_from_ms(r.create_ms),
                modify_date: datetime_from_ms(r.modify_ms),
            })
            .collect())
    }
}

/// A datetime value for milliseconds since 1970-01-01 UTC.
fn datetime_from_ms(ms: i64) -> types::Value {
    // datetime counts days from 1900-01-01 (25,567 days before 1970) and 1/300 s ticks.
    let days = ms.div_euclid(86_400_000) + 25_567;
    let ticks = ms.rem_euclid(86_400_000) * 3 / 10;
    types::Value::DateTime { days: days as i32, ticks: ticks as u32 }
}

impl Drop for EngineHost {
    fn drop(&mut self) {
        if self.in_txn || !self.txns.is_empty() {
            let _ = self.rollback();
        }
    }
}
