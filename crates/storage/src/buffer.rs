//! The buffer pool: a fixed set of 8 KB frames shared by every database of the instance.
//!
//! - Page table: `(database, file, page)` -> frame, sharded to keep lookups uncontended.
//! - Latches: each frame's page sits behind a reader-writer latch with SQL Server's modes
//!   SH (shared), UP (update: shared with readers, exclusive among updaters, upgradable
//!   to EX) and EX. A latch that must wait records PAGELATCH_xx, or PAGEIOLATCH_xx while
//!   the page is still being read from disk.
//! - Pins: a pinned frame is never evicted. Guards pin and latch; dropping them releases.
//! - Eviction: clock (second chance) over unpinned frames; a lazy writer thread keeps a
//!   reserve of free frames by writing dirty, unreferenced pages in the background.
//! - Dirty tracking: each dirty frame records its recLSN (the LSN of the change that first
//!   dirtied it); each database keeps its dirty pages ordered by recLSN, so a checkpoint
//!   knows the redo start point and the indirect-checkpoint writer flushes oldest first.
//! - Write-ahead logging: before a page is written, the database's [`WalGate`] is asked
//!   to flush the log up to the page LSN. A page is never written ahead of its log.
//! - Checksums are sealed on every write and verified on every read (error 824).

use crate::error::{Result, StorageError};
use crate::file::DataFiles;
use crate::page::{Page, PageId};
use diag::{LatchMode, WaitType};
use parking_lot::lock_api::{RwLockUpgradableReadGuard, RwLockWriteGuard};
use parking_lot::{Condvar, Mutex, RawRwLock, RwLock};
use std::collections::{BTreeSet, HashMap};
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Lets the buffer pool enforce write-ahead logging for one database.
pub trait WalGate: Send + Sync {
    /// Highest LSN known durable in the log.
    fn flushed_lsn(&self) -> u64;
    /// Makes the log durable at least up to `lsn`.
    fn flush_to(&self, lsn: u64) -> Result<()>;
}

/// The gate for a database without a log (before the transaction layer attaches one):
/// every LSN counts as flushed.
pub struct NoWal;

impl WalGate for NoWal {
    fn flushed_lsn(&self) -> u64 {
        u64::MAX
    }
    fn flush_to(&self, _lsn: u64) -> Result<()> {
        Ok(())
    }
}

/// "No page": key 0 is never a page (database ids start at 1), which makes an all-zero
/// frame a valid empty frame (see `BufferPool::new`).
const NO_KEY: u64 = 0;

type FrameWrite<'a> = RwLockWriteGuard<'a, RawRwLock, Page>;
const SHARDS: usize = 64;
/// Largest gathered write of a checkpoint: 128 pages, 1 MB (the write size of the raw
/// sequential bandwidth bench/commit compares checkpoints with).
pub const MAX_GATHERED_PAGES: usize = 128;

/// `(database, file, page)` packed into one word.
#[inline]
fn page_key(db: u16, id: PageId) -> u64 {
    debug_assert!(db != 0, "database id 0 is reserved");
    ((db as u64) << 48) | ((id.file_id as u64) << 32) | id.page_no as u64
}

#[inline]
fn key_parts(key: u64) -> (u16, PageId) {
    ((key >> 48) as u16, PageId { file_id: (key >> 32) as u16, page_no: key as u32 })
}

#[inline]
fn shard_of(key: u64) -> usize {
    // Fibonacci hashing spreads sequential page numbers over shards.
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SHARDS
}

/// Page keys are already well-distributed integers once multiplied: a multiply-shift
/// hash is enough and much cheaper than SipHash on the page-table hot path.
#[derive(Default, Clone, Copy)]
struct PageKeyHasher;

struct PageKeyHash(u64);

impl std::hash::BuildHasher for PageKeyHasher {
    type Hasher = PageKeyHash;
    fn build_hasher(&self) -> PageKeyHash {
        PageKeyHash(0)
    }
}

impl std::hash::Hasher for PageKeyHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = (k ^ (k >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
}

struct Frame {
    latch: RwLock<Page>,
    key: AtomicU64,
    pins: AtomicU32,
    referenced: AtomicBool,
    dirty: AtomicBool,
    /// The page is being read from disk; waiters record PAGEIOLATCH.
    io_pending: AtomicBool,
    /// The last read failed; whoever pinned it must let go and report the error.
    invalid: AtomicBool,
    rec_lsn: AtomicU64,
}

struct DbEntry {
    files: Arc<DataFiles>,
    wal: Arc<dyn WalGate>,
    /// Dirty pages ordered by (recLSN, key): the dirty page list.
    dirty: Mutex<BTreeSet<(u64, u64)>>,
}

/// Counters the DMVs and benchmarks read.
#[derive(Debug, Default)]
pub struct BufferStats {
    pub hits: AtomicU64,
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub lazy_writes: AtomicU64,
    pub evictions: AtomicU64,
}

pub struct BufferPool {
    frames: Box<[Frame]>,
    table: Box<[Mutex<HashMap<u64, u32, PageKeyHasher>>]>,
    free: Mutex<Vec<u32>>,
    clock: AtomicUsize,
    dbs: RwLock<HashMap<u16, Arc<DbEntry>>>,
    pub stats: BufferStats,
    lazy_writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    lazy_wake: (Mutex<bool>, Condvar),
}

impl BufferPool {
    /// A pool of `capacity` pages (the memory limit divided by 8 KB).
    pub fn new(capacity: usize) -> Arc<BufferPool> {
        let capacity = capacity.max(16);
        // An all-zero Frame is valid and empty: unlocked latch (parking_lot's state 0),
        // zero pins and flags, key NO_KEY (0), an all-zero page. Zeroed memory comes from
        // the OS untouched, so a large pool costs nothing until its frames are used and the
        // instance starts in milliseconds whatever its memory limit.
        let frames: Box<[Frame]> = {
            let zeroed = Box::<[Frame]>::new_zeroed_slice(capacity);
            // SAFETY: every field of Frame is valid when all its bytes are zero (see above:
            // atomics, a parking_lot RwLock whose raw state 0 means unlocked, and a Page,
            // which is a plain byte array).
            unsafe { zeroed.assume_init() }
        };
        Arc::new(BufferPool {
            frames,
            table: (0..SHARDS).map(|_| Mutex::new(HashMap::with_hasher(PageKeyHasher::default()))).collect(),
            free: Mutex::new((0..capacity as u32).rev().collect()),
            clock: AtomicUsize::new(0),
            dbs: RwLock::new(HashMap::new()),
            stats: BufferStats::default(),
            lazy_writer: Mutex::new(None),
            lazy_wake: (Mutex::new(false), Condvar::new()),
        })
    }

    /// A pool sized by a memory limit in bytes.
    pub fn with_memory_limit(bytes: u64) -> Arc<BufferPool> {
        Self::new((bytes / crate::page::PAGE_SIZE as u64) as usize)
    }

    pub fn capacity(&self) -> usize {
        self.frames.len()
    }

    /// Makes a database's files reachable through the pool.
    pub fn attach(&self, db: u16, files: Arc<DataFiles>, wal: Arc<dyn WalGate>) {
        self.dbs.write().insert(db, Arc::new(DbEntry { files, wal, dirty: Mutex::new(BTreeSet::new()) }));
    }

    /// Replaces the WAL gate (the transaction layer installs its log manager).
    pub fn set_wal(&self, db: u16, wal: Arc<dyn WalGate>) -> Result<()> {
        let mut dbs = self.dbs.write();
        let e = dbs.get(&db).ok_or(StorageError::NoSuchDatabase(db))?;
        let ne = DbEntry { files: e.files.clone(), wal, dirty: Mutex::new(std::mem::take(&mut *e.dirty.lock())) };
        dbs.insert(db, Arc::new(ne));
        Ok(())
    }

    /// Writes every dirty page of the database and forgets its pages.
    pub fn detach(&self, db: u16) -> Result<()> {
        self.flush_all(db)?;
        self.discard(db);
        self.dbs.write().remove(&db);
        Ok(())
    }

    /// Drops a database's pages without writing them (a simulated crash, or DROP
    /// DATABASE). Pinned frames are left to their holders.
    pub fn discard(&self, db: u16) {
        for (i, f) in self.frames.iter().enumerate() {
            let key = f.key.load(Acquire);
            if key == NO_KEY || key_parts(key).0 != db {
                continue;
            }
            let mut shard = self.table[shard_of(key)].lock();
            if f.key.load(Acquire) == key && f.pins.load(Acquire) == 0 {
                shard.remove(&key);
                f.key.store(NO_KEY, Release);
                f.dirty.store(false, Release);
                drop(shard);
                self.free.lock().push(i as u32);
            }
        }
        if let Some(e) = self.dbs.read().get(&db) {
            e.dirty.lock().clear();
        }
    }

    fn db(&self, db: u16) -> Result<Arc<DbEntry>> {
        self.dbs.read().get(&db).cloned().ok_or(StorageError::NoSuchDatabase(db))
    }

    /// Pins the frame holding the page. For a page that was not resident, the frame is
    /// mapped and returned with its EX latch already held (taken before the mapping is
    /// published, so nobody can read the frame before it is loaded); the caller loads it
    /// from disk (`load`) or, for a freshly allocated page, zeroes it.
    fn pin(&self, db: u16, id: PageId, fresh: bool) -> Result<(u32, Option<FrameWrite<'_>>)> {
        let key = page_key(db, id);
        let shard = &self.table[shard_of(key)];
        loop {
            {
                let map = shard.lock();
                if let Some(&fi) = map.get(&key) {
                    let f = &self.frames[fi as usize];
                    f.pins.fetch_add(1, AcqRel);
                    drop(map);
                    if !f.referenced.load(Relaxed) {
                        f.referenced.store(true, Relaxed);
                    }
                    self.stats.hits.fetch_add(1, Relaxed);
                    return Ok((fi, None));
                }
            }
            // Miss: claim a frame without holding the shard (eviction takes other shards).
            let fi = self.claim_frame()?;
            let f = &self.frames[fi as usize];
            let mut map = shard.lock();
            if map.contains_key(&key) {
                // Someone loaded it meanwhile; give our frame back and retry as a hit.
                drop(map);
                f.pins.store(0, Release);
                self.free.lock().push(fi);
                continue;
            }
            // Only we hold this unmapped frame, so the latch is free.
            let Some(w) = f.latch.try_write() else {
                drop(map);
                f.pins.store(0, Release);
                self.free.lock().push(fi);
                continue;
            };
            map.insert(key, fi);
            f.key.store(key, Release);
            f.invalid.store(false, Release);
            f.referenced.store(true, Relaxed);
            f.io_pending.store(!fresh, Release);
            drop(map);
            return Ok((fi, Some(w)));
        }
    }

    /// Fills a newly mapped frame: reads it from disk, or zeroes it for a fresh page.
    fn fill(&self, db: u16, id: PageId, fi: u32, fresh: bool, w: &mut Page) -> Result<()> {
        if fresh {
            *w = Page::default();
            Ok(())
        } else {
            self.load(db, id, fi, w)
        }
    }

    /// Reads a page into a frame that `pin` just mapped, under its EX latch. On failure
    /// the frame is unmapped and zeroed, so damaged bytes are never handed out.
    fn load(&self, db: u16, id: PageId, fi: u32, guard: &mut Page) -> Result<()> {
        let f = &self.frames[fi as usize];
        // A read is a wait: the worker gives its scheduler up (see `diag::sched`).
        diag::sched::release();
        let r = self.db(db).and_then(|e| e.files.get(id.file_id)).and_then(|file| file.read_page(id, guard));
        self.stats.reads.fetch_add(1, Relaxed);
        diag::counters().page_reads.add(1);
        f.io_pending.store(false, Release);
        if let Err(e) = r {
            *guard = Page::default();
            f.invalid.store(true, Release);
            let key = page_key(db, id);
            let mut map = self.table[shard_of(key)].lock();
            if map.get(&key) == Some(&fi) {
                map.remove(&key);
            }
            f.key.store(NO_KEY, Release);
            return Err(e);
        }
        Ok(())
    }

    /// Takes a free frame, evicting with the clock if needed. The frame comes back pinned
    /// once and unmapped.
    fn claim_frame(&self) -> Result<u32> {
        while let Some(fi) = self.free.lock().pop() {
            let f = &self.frames[fi as usize];
            if f.pins.compare_exchange(0, 1, AcqRel, Acquire).is_ok() {
                if f.key.load(Acquire) == NO_KEY {
                    return Ok(fi);
                }
                f.pins.store(0, Release);
            }
        }
        let n = self.frames.len();
        // Two full sweeps look for a clean victim; dirty ones are written on the way.
        for round in 0..4 * n {
            let i = self.clock.fetch_add(1, Relaxed) % n;
            let f = &self.frames[i];
            if f.pins.load(Acquire) != 0 {
                continue;
            }
            if f.referenced.swap(false, Relaxed) && round < 2 * n {
                continue;
            }
            let key = f.key.load(Acquire);
            if key == NO_KEY {
                // Unmapped frames belong to the free list, which hands them out.
                continue;
            }
            if f.dirty.load(Acquire) {
                if round < n {
                    self.wake_lazy_writer();
                    continue;
                }
                // No clean victim found: write this one ourselves.
                let (db, id) = key_parts(key);
                if let Ok(Some(_)) = self.try_flush_frame(db, id, i as u32) {}
                if f.dirty.load(Acquire) {
                    continue;
                }
            }
            let mut map = self.table[shard_of(key)].lock();
            if f.key.load(Acquire) != key || f.dirty.load(Acquire) {
                continue;
            }
            if f.pins.compare_exchange(0, 1, AcqRel, Acquire).is_err() {
                continue;
            }
            map.remove(&key);
            f.key.store(NO_KEY, Release);
            self.stats.evictions.fetch_add(1, Relaxed);
            return Ok(i as u32);
        }
        Err(StorageError::BufferPoolFull)
    }

    fn unpin(&self, fi: u32) {
        let f = &self.frames[fi as usize];
        let prev = f.pins.fetch_sub(1, AcqRel);
        if prev == 1 && f.invalid.load(Acquire) && f.key.load(Acquire) == NO_KEY {
            // A failed read leaves an unmapped frame: return it.
            f.invalid.store(false, Release);
            self.free.lock().push(fi);
        }
    }

    fn check_valid(&self, fi: u32, db: u16, id: PageId) -> Result<()> {
        let f = &self.frames[fi as usize];
        if f.invalid.load(Acquire) || f.key.load(Acquire) != page_key(db, id) {
            return Err(StorageError::corrupt(
                format!("page ({id})"),
                "the page could not be read; see the earlier error",
            ));
        }
        Ok(())
    }

    /// Takes a resident frame's latch: the non-blocking try first, and only if that fails
    /// the blocking call, timed and recorded as a PAGELATCH (or PAGEIOLATCH while the page
    /// is still being read) wait in `mode`.
    fn latch<'a, G>(
        &'a self,
        fi: u32,
        mode: LatchMode,
        try_latch: impl Fn(&'a RwLock<Page>) -> Option<G>,
        latch: impl FnOnce(&'a RwLock<Page>) -> G,
    ) -> G {
        let f = &self.frames[fi as usize];
        if let Some(g) = try_latch(&f.latch) {
            return g;
        }
        let io = f.io_pending.load(Acquire);
        // A page being read stays latched for the read: spinning would only burn CPU.
        if !io {
            if let Some(g) = diag::sched::spin_try(|| try_latch(&f.latch)) {
                return g;
            }
        }
        diag::sched::release();
        let t = Instant::now();
        let g = latch(&f.latch);
        diag::record_page_latch_wait(mode, io, t.elapsed());
        g
    }

    /// After latching: the frame must still hold the page (a failed read unmaps it);
    /// otherwise the latch and pin are released and the error returned.
    fn still_valid<G>(&self, fi: u32, db: u16, id: PageId, g: G) -> Result<G> {
        match self.check_valid(fi, db, id) {
            Ok(()) => Ok(g),
            Err(e) => {
                drop(g);
                self.unpin(fi);
                Err(e)
            }
        }
    }

    /// Latches a page shared (SH).
    pub fn read(&self, db: u16, id: PageId) -> Result<PageReadGuard<'_>> {
        let (fi, new) = self.pin(db, id, false)?;
        if let Some(mut w) = new {
            if let Err(e) = self.load(db, id, fi, &mut w) {
                drop(w);
                self.unpin(fi);
                return Err(e);
            }
            let g = RwLockWriteGuard::downgrade(w);
            return Ok(PageReadGuard { pool: self, fi, guard: Some(g) });
        }
        let g = self.latch(fi, LatchMode::SH, RwLock::try_read, RwLock::read);
        let g = self.still_valid(fi, db, id, g)?;
        Ok(PageReadGuard { pool: self, fi, guard: Some(g) })
    }

    /// Latches a page exclusive (EX) for change.
    pub fn write(&self, db: u16, id: PageId) -> Result<PageWriteGuard<'_>> {
        self.write_inner(db, id, false)
    }

    /// Latches a page EX only if no other thread holds its latch: `None` instead of a
    /// wait, for a caller that has another way (a B-tree descent instead of its insert
    /// hint, which other sessions may be holding for their own inserts).
    pub fn try_write(&self, db: u16, id: PageId) -> Result<Option<PageWriteGuard<'_>>> {
        let (fi, new) = self.pin(db, id, false)?;
        if let Some(mut w) = new {
            if let Err(e) = self.fill(db, id, fi, false, &mut w) {
                drop(w);
                self.unpin(fi);
                return Err(e);
            }
            return Ok(Some(PageWriteGuard { pool: self, fi, db, id, guard: Some(w) }));
        }
        let Some(g) = self.frames[fi as usize].latch.try_write() else {
            self.unpin(fi);
            return Ok(None);
        };
        let g = self.still_valid(fi, db, id, g)?;
        Ok(Some(PageWriteGuard { pool: self, fi, db, id, guard: Some(g) }))
    }

    /// Latches a newly allocated page EX without reading it from disk: its old content
    /// is meaningless and the caller formats it.
    pub fn write_fresh(&self, db: u16, id: PageId) -> Result<PageWriteGuard<'_>> {
        self.write_inner(db, id, true)
    }

    fn write_inner(&self, db: u16, id: PageId, fresh: bool) -> Result<PageWriteGuard<'_>> {
        let (fi, new) = self.pin(db, id, fresh)?;
        if let Some(mut w) = new {
            if let Err(e) = self.fill(db, id, fi, fresh, &mut w) {
                drop(w);
                self.unpin(fi);
                return Err(e);
            }
            return Ok(PageWriteGuard { pool: self, fi, db, id, guard: Some(w) });
        }
        let g = self.latch(fi, LatchMode::EX, RwLock::try_write, RwLock::write);
        let g = self.still_valid(fi, db, id, g)?;
        Ok(PageWriteGuard { pool: self, fi, db, id, guard: Some(g) })
    }

    /// Latches a page in update mode (UP): readers may continue, other updaters wait.
    pub fn update(&self, db: u16, id: PageId) -> Result<PageUpdateGuard<'_>> {
        let (fi, new) = self.pin(db, id, false)?;
        if let Some(mut w) = new {
            if let Err(e) = self.load(db, id, fi, &mut w) {
                drop(w);
                self.unpin(fi);
                return Err(e);
            }
            let g = RwLockWriteGuard::downgrade_to_upgradable(w);
            return Ok(PageUpdateGuard { pool: self, fi, db, id, guard: Some(g) });
        }
        let g = self.latch(fi, LatchMode::UP, RwLock::try_upgradable_read, RwLock::upgradable_read);
        let g = self.still_valid(fi, db, id, g)?;
        Ok(PageUpdateGuard { pool: self, fi, db, id, guard: Some(g) })
    }

    fn mark_dirty(&self, fi: u32, db: u16, lsn: u64) {
        let f = &self.frames[fi as usize];
        if !f.dirty.load(Acquire) {
            f.rec_lsn.store(lsn, Release);
            f.dirty.store(true, Release);
            if let Ok(e) = self.db(db) {
                e.dirty.lock().insert((lsn, f.key.load(Acquire)));
            }
        }
    }

    /// Writes one dirty page if it is resident and dirty. Returns whether it wrote.
    fn try_flush_frame(&self, db: u16, id: PageId, fi: u32) -> Result<Option<()>> {
        let key = page_key(db, id);
        let f = &self.frames[fi as usize];
        {
            let map = self.table[shard_of(key)].lock();
            if map.get(&key) != Some(&fi) {
                return Ok(None);
            }
            f.pins.fetch_add(1, AcqRel);
        }
        let r = self.flush_pinned(db, id, fi);
        self.unpin(fi);
        r
    }

    fn flush_pinned(&self, db: u16, id: PageId, fi: u32) -> Result<Option<()>> {
        let f = &self.frames[fi as usize];
        let entry = self.db(db)?;
        let key = page_key(db, id);
        let mut copy: Box<Page>;
        let rec_lsn;
        {
            let g = f.latch.read();
            if !f.dirty.load(Acquire) || f.invalid.load(Acquire) {
                return Ok(None);
            }
            copy = Box::new((*g).clone());
            rec_lsn = f.rec_lsn.load(Acquire);
            // Clean from now on: a change after this point dirties the frame again with a
            // new recLSN (a second entry in the dirty list). The old entry stays listed
            // until the write has completed, so a checkpoint never computes its redo
            // start past a page that is not on disk yet.
            f.dirty.store(false, Release);
        }
        let res = (|| {
            let lsn = copy.lsn();
            if entry.wal.flushed_lsn() < lsn {
                entry.wal.flush_to(lsn)?;
            }
            copy.seal_checksum();
            entry.files.get(id.file_id)?.write_page(id, &copy)
        })();
        match res {
            Ok(()) => {
                entry.dirty.lock().remove(&(rec_lsn, key));
                self.stats.writes.fetch_add(1, Relaxed);
                diag::counters().page_writes.add(1);
                Ok(Some(()))
            }
            Err(e) => {
                // Not written: dirty again with its original recLSN (still listed).
                let _g = f.latch.read();
                if f.dirty.swap(true, AcqRel) {
                    // Re-dirtied meanwhile with a later recLSN: keep the older entry only.
                    let newer = f.rec_lsn.load(Acquire);
                    if newer != rec_lsn {
                        entry.dirty.lock().remove(&(newer, key));
                    }
                }
                f.rec_lsn.store(rec_lsn, Release);
                Err(e)
            }
        }
    }

    /// Writes one page if it is dirty (used by checkpoints and tests).
    pub fn flush_page(&self, db: u16, id: PageId) -> Result<bool> {
        let key = page_key(db, id);
        let fi = match self.table[shard_of(key)].lock().get(&key) {
            Some(&fi) => fi,
            None => return Ok(false),
        };
        Ok(self.try_flush_frame(db, id, fi)?.is_some())
    }

    /// The dirty page list: (recLSN, page) oldest first.
    pub fn dirty_pages(&self, db: u16) -> Vec<(u64, PageId)> {
        match self.db(db) {
            Ok(e) => e.dirty.lock().iter().map(|&(l, k)| (l, key_parts(k).1)).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Oldest recLSN among the database's dirty pages: where redo would start.
    pub fn min_rec_lsn(&self, db: u16) -> Option<u64> {
        self.db(db).ok()?.dirty.lock().iter().next().map(|&(l, _)| l)
    }

    pub fn dirty_count(&self, db: u16) -> usize {
        self.db(db).map(|e| e.dirty.lock().len()).unwrap_or(0)
    }

    /// Writes the oldest dirty pages (by recLSN) until `max_pages` are written or none
    /// with recLSN below `up_to_lsn` remain. The indirect-checkpoint writer's primitive.
    pub fn flush_oldest(&self, db: u16, up_to_lsn: u64, max_pages: usize) -> Result<usize> {
        let entry = self.db(db)?;
        // The oldest pages by recLSN, written in page order so neighbours among them go
        // out in gathered writes.
        let mut batch: Vec<PageId> = entry
            .dirty
            .lock()
            .iter()
            .take_while(|&&(l, _)| l < up_to_lsn)
            .take(max_pages)
            .map(|&(_, k)| key_parts(k).1)
            .collect();
        batch.sort_unstable();
        Ok(self.flush_pages(db, &batch)?.0)
    }

    /// Writes every dirty page of the database, in page order and in gathered writes of
    /// contiguous pages, then syncs the files. Returns pages written.
    pub fn flush_all(&self, db: u16) -> Result<usize> {
        let entry = self.db(db)?;
        let mut pages: Vec<PageId> = entry.dirty.lock().iter().map(|&(_, k)| key_parts(k).1).collect();
        pages.sort_unstable();
        let written = self.flush_pages(db, &pages)?.0;
        entry.files.sync_all()?;
        Ok(written)
    }

    /// Writes the dirty pages among `pages` (sorted by file and page), gathering runs of
    /// consecutive dirty pages into one write of up to [`MAX_GATHERED_PAGES`] pages, as a
    /// checkpoint does. No sync. Returns (pages written, write calls).
    pub fn flush_pages(&self, db: u16, pages: &[PageId]) -> Result<(usize, usize)> {
        let entry = self.db(db)?;
        let (mut written, mut writes) = (0, 0);
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len()
                && j - i < MAX_GATHERED_PAGES
                && pages[j].file_id == pages[i].file_id
                && pages[j].page_no == pages[j - 1].page_no.wrapping_add(1)
            {
                j += 1;
            }
            let (w, c) = self.flush_run(db, &entry, &pages[i..j])?;
            written += w;
            writes += c;
            i = j;
        }
        Ok((written, writes))
    }

    /// Writes one run of consecutive pages. Each page is copied under its SH latch (and
    /// marked clean then, as `flush_pinned` does) straight into this thread's gather
    /// buffer, where its checksum is sealed: one copy per page before the system call,
    /// no allocation. Pages that are not resident or not dirty split the run. The log is
    /// flushed up to the highest page LSN first.
    fn flush_run(&self, db: u16, entry: &DbEntry, run: &[PageId]) -> Result<(usize, usize)> {
        use crate::page::PAGE_SIZE;
        struct Taken {
            id: PageId,
            fi: u32,
            rec_lsn: u64,
        }
        thread_local! {
            /// Page images of the run being written, in `taken` order.
            static GATHER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        GATHER.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            let mut taken: Vec<Taken> = Vec::with_capacity(run.len());
            let mut max_lsn = 0;
            for &id in run {
                let key = page_key(db, id);
                let fi = {
                    let map = self.table[shard_of(key)].lock();
                    match map.get(&key) {
                        Some(&fi) => {
                            self.frames[fi as usize].pins.fetch_add(1, AcqRel);
                            Some(fi)
                        }
                        None => None,
                    }
                };
                let Some(fi) = fi else { continue };
                let f = &self.frames[fi as usize];
                let g = f.latch.read();
                if !f.dirty.load(Acquire) || f.invalid.load(Acquire) {
                    drop(g);
                    self.unpin(fi);
                    continue;
                }
                buf.extend_from_slice(g.as_bytes());
                max_lsn = max_lsn.max(g.lsn());
                let rec_lsn = f.rec_lsn.load(Acquire);
                f.dirty.store(false, Release);
                drop(g);
                taken.push(Taken { id, fi, rec_lsn });
            }
            let result: Result<usize> = (|| {
                if entry.wal.flushed_lsn() < max_lsn {
                    entry.wal.flush_to(max_lsn)?;
                }
                for chunk in buf.chunks_exact_mut(PAGE_SIZE) {
                    crate::page::seal_checksum_of(chunk.try_into().expect("a page-sized chunk"));
                }
                let mut writes = 0;
                let mut k = 0;
                while k < taken.len() {
                    // Pages skipped above break contiguity: one write per contiguous group.
                    let mut m = k + 1;
                    while m < taken.len() && taken[m].id.page_no == taken[m - 1].id.page_no.wrapping_add(1) {
                        m += 1;
                    }
                    let file = entry.files.get(taken[k].id.file_id)?;
                    file.write_pages(taken[k].id, &buf[k * PAGE_SIZE..m * PAGE_SIZE])?;
                    // The device starts on these pages now, while the next run is
                    // prepared, rather than all at the checkpoint's sync.
                    file.start_writeback(taken[k].id, (m - k) * PAGE_SIZE);
                    writes += 1;
                    k = m;
                }
                Ok(writes)
            })();
            match &result {
                Ok(_) => {
                    // Off the dirty page list only now that the writes are done (a
                    // checkpoint takes its redo start from that list), in one lock hold.
                    let mut dirty = entry.dirty.lock();
                    for t in &taken {
                        dirty.remove(&(t.rec_lsn, page_key(db, t.id)));
                    }
                }
                Err(_) => {
                    for t in &taken {
                        // Not written: dirty again with its original recLSN, as flush_pinned.
                        let key = page_key(db, t.id);
                        let f = &self.frames[t.fi as usize];
                        let _g = f.latch.read();
                        if f.dirty.swap(true, AcqRel) {
                            let newer = f.rec_lsn.load(Acquire);
                            if newer != t.rec_lsn {
                                entry.dirty.lock().remove(&(newer, key));
                            }
                        }
                        f.rec_lsn.store(t.rec_lsn, Release);
                    }
                }
            }
            for t in &taken {
                self.unpin(t.fi);
            }
            let writes = result?;
            self.stats.writes.fetch_add(taken.len() as u64, Relaxed);
            diag::counters().page_writes.add(taken.len() as i64);
            Ok((taken.len(), writes))
        })
    }

    /// Is this page resident? (tests and DBCC)
    pub fn is_resident(&self, db: u16, id: PageId) -> bool {
        let key = page_key(db, id);
        self.table[shard_of(key)].lock().contains_key(&key)
    }

    fn wake_lazy_writer(&self) {
        let (m, c) = &self.lazy_wake;
        *m.lock() = true;
        c.notify_one();
    }

    /// One lazy-writer pass: write dirty pages that are unpinned and not recently used,
    /// and free clean ones, until a reserve of free frames exists. Returns pages written.
    pub fn lazy_writer_pass(&self) -> usize {
        let n = self.frames.len();
        let reserve = (n / 64).max(4);
        let mut written = 0;
        let mut freed = 0;
        if self.free.lock().len() >= reserve {
            return 0;
        }
        for _ in 0..n {
            if self.free.lock().len() >= reserve {
                break;
            }
            let i = self.clock.fetch_add(1, Relaxed) % n;
            let f = &self.frames[i];
            if f.pins.load(Acquire) != 0 || f.referenced.swap(false, Relaxed) {
                continue;
            }
            let key = f.key.load(Acquire);
            if key == NO_KEY {
                continue;
            }
            let (db, id) = key_parts(key);
            if f.dirty.load(Acquire) {
                if let Ok(Some(())) = self.try_flush_frame(db, id, i as u32) {
                    written += 1;
                    self.stats.lazy_writes.fetch_add(1, Relaxed);
                    diag::counters().lazy_writes.add(1);
                }
            }
            let mut map = self.table[shard_of(key)].lock();
            if f.key.load(Acquire) == key
                && !f.dirty.load(Acquire)
                && f.pins.compare_exchange(0, 1, AcqRel, Acquire).is_ok()
            {
                map.remove(&key);
                f.key.store(NO_KEY, Release);
                f.pins.store(0, Release);
                drop(map);
                self.free.lock().push(i as u32);
                freed += 1;
            }
        }
        let _ = freed;
        written
    }

    /// Starts the lazy writer thread. It holds only a weak reference, so it ends when the
    /// pool is dropped (or at `stop_lazy_writer`).
    pub fn start_lazy_writer(self: &Arc<Self>) {
        let weak: Weak<BufferPool> = Arc::downgrade(self);
        let h = std::thread::Builder::new()
            .name("lazy writer".into())
            .spawn(move || loop {
                let Some(pool) = weak.upgrade() else { return };
                let stop = {
                    let (m, c) = &pool.lazy_wake;
                    let mut woke = m.lock();
                    if !*woke {
                        let t = Instant::now();
                        c.wait_for(&mut woke, Duration::from_millis(100));
                        diag::instance_waits().add(WaitType::LAZYWRITER_SLEEP, t.elapsed(), Duration::ZERO);
                    }
                    *woke = false;
                    Arc::strong_count(&pool) <= 1
                };
                if stop {
                    return;
                }
                pool.lazy_writer_pass();
            })
            .ok();
        *self.lazy_writer.lock() = h;
    }
}

/// A page latched SH. Dropping it releases latch and pin.
pub struct PageReadGuard<'a> {
    pool: &'a BufferPool,
    fi: u32,
    guard: Option<parking_lot::lock_api::RwLockReadGuard<'a, RawRwLock, Page>>,
}

/// Deref to the page and unpin on drop: the same for every latch mode. The latch guard
/// is only taken out in `Drop` (or by `upgrade`, which forgets the old guard), so `deref`
/// always finds it.
macro_rules! page_guard_common {
    ($guard:ident) => {
        impl Deref for $guard<'_> {
            type Target = Page;
            fn deref(&self) -> &Page {
                self.guard.as_ref().map(|g| &**g).unwrap_or_else(|| unreachable!())
            }
        }

        impl Drop for $guard<'_> {
            fn drop(&mut self) {
                self.guard.take();
                self.pool.unpin(self.fi);
            }
        }
    };
}

page_guard_common!(PageReadGuard);
page_guard_common!(PageUpdateGuard);
page_guard_common!(PageWriteGuard);

/// A page latched UP: shared with readers, upgradable to EX.
pub struct PageUpdateGuard<'a> {
    pool: &'a BufferPool,
    fi: u32,
    db: u16,
    id: PageId,
    guard: Option<RwLockUpgradableReadGuard<'a, RawRwLock, Page>>,
}

impl<'a> PageUpdateGuard<'a> {
    /// Upgrades to EX (waits for readers to leave).
    pub fn upgrade(mut self) -> PageWriteGuard<'a> {
        let g = self.guard.take().unwrap_or_else(|| unreachable!());
        let w = match RwLockUpgradableReadGuard::try_upgrade(g) {
            Ok(w) => w,
            Err(g) => {
                diag::sched::release();
                let t = Instant::now();
                let w = RwLockUpgradableReadGuard::upgrade(g);
                diag::record_page_latch_wait(LatchMode::EX, false, t.elapsed());
                w
            }
        };
        let out = PageWriteGuard { pool: self.pool, fi: self.fi, db: self.db, id: self.id, guard: Some(w) };
        // Ownership of the pin moves to the write guard.
        std::mem::forget(self);
        out
    }
}

/// A page latched EX. Changes go through [`PageWriteGuard::page_mut`] and are recorded
/// with [`PageWriteGuard::mark_dirty`] (the database's page-change context does both).
pub struct PageWriteGuard<'a> {
    pool: &'a BufferPool,
    fi: u32,
    db: u16,
    id: PageId,
    guard: Option<RwLockWriteGuard<'a, RawRwLock, Page>>,
}

impl PageWriteGuard<'_> {
    pub fn page_id(&self) -> PageId {
        self.id
    }

    pub fn db_id(&self) -> u16 {
        self.db
    }

    /// Whether the buffer holds changes not yet written to disk.
    pub fn is_dirty(&self) -> bool {
        self.pool.frames[self.fi as usize].dirty.load(Acquire)
    }

    /// Mutable access to the page image. Structure code must not call this directly: use
    /// the database's `change`, which logs the op first.
    pub fn page_mut(&mut self) -> &mut Page {
        self.guard.as_mut().map(|g| &mut **g).unwrap_or_else(|| unreachable!())
    }

    /// Records that the page now carries the change logged at `lsn`: sets the page LSN
    /// and, if the frame was clean, its recLSN.
    pub fn mark_dirty(&mut self, lsn: u64) {
        let p = self.page_mut();
        if lsn > p.lsn() {
            p.set_lsn(lsn);
        }
        self.pool.mark_dirty(self.fi, self.db, lsn);
    }
}
