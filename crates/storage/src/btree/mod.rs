//! B+trees: the storage of clustered and nonclustered indexes.
//!
//! Storage knows nothing about SQL types. Keys are byte strings compared with `memcmp`
//! (the `types` crate produces memcmp-ordered sort keys); values are opaque bytes. A
//! clustered index stores the row record as the value; a nonclustered index stores the
//! row locator (a RID, or the clustering key) and its INCLUDE columns.
//!
//! # Page format
//!
//! Every page of a tree is a slotted page (docs/formats.md, "Page header") owned by the
//! tree's allocation unit, with the tree's object id and index id in its header.
//!
//! - **Leaf pages**: level 0; page type 1 (data) for a clustered index (index id 1), 2
//!   (index) for a nonclustered index. Entries are in key order in the slot array (slot
//!   0 holds the smallest key). Leaves form a doubly linked list in key order through the
//!   header's prev/next fields; the leftmost leaf is the allocation unit's `first_page`.
//! - **Internal pages**: level >= 1, page type 2 (index). Entry *i* holds a separator key
//!   and a child page id; the child's subtree holds the keys `k` with
//!   `separator[i] <= k < separator[i + 1]`. Entry 0's key is empty and means minus
//!   infinity, like SQL Server's non-leaf rows with a NULL first key. Every level is a
//!   doubly linked list too, as in SQL Server. The root is the allocation unit's `root`.
//!
//! **Entry encoding** (leaf and internal alike), one record per slot:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | key length `k`, u16 little-endian |
//! | 2 | k | key bytes |
//! | 2 + k | rest of the record | value: the leaf value, or in an internal entry the 6-byte child page id (u32 page number, u16 file id, little-endian) |
//!
//! Leaf separators are suffix-truncated: when a leaf splits, the separator pushed up is
//! the shortest prefix of the right page's first key that is greater than the left
//! page's last key, so internal pages hold more children.
//!
//! Limits: a key is at most [`MAX_KEY_LEN`] bytes (SQL Server's nonclustered key limit;
//! the engine enforces the tighter 900-byte clustered limit), an encoded leaf entry at
//! most [`MAX_ENTRY_LEN`] bytes (one entry alone on a page).
//!
//! # Unique and non-unique trees
//!
//! A unique tree rejects a second entry with an existing key (`StorageError::DuplicateKey`).
//! A non-unique tree (a clustered index without UNIQUE) makes every stored key unique as
//! SQL Server does, with a 4-byte **uniquifier** appended to the caller's key (big-endian,
//! so duplicates sort in insertion order): the first entry with a given key gets 0, each
//! further one the largest existing uniquifier + 1. [`BTree::insert`] returns it; the
//! stored key ([`stored_key`]) is what `get`, `update`, `delete` and scans use, and what a
//! nonclustered index stores as the row locator of a row in such a table.
//! Non-unique *nonclustered* indexes do not use uniquifiers: the engine appends the row
//! locator to their key, which makes the key unique, and creates them as unique trees.
//!
//! # Filtered indexes
//!
//! A handle may carry a [`RowFilter`]. The table layer (engine) maintains every index of
//! a table through [`BTree::insert_row`], [`BTree::delete_row`] and [`BTree::update_row`],
//! which consult the filter, so a filtered index only ever holds the rows that belong.
//!
//! # Concurrency
//!
//! Each tree has a tree latch (an `RwLock<()>`, SQL Server's
//! ACCESS_METHODS_HOBT_VIRTUAL_ROOT latch class; waits on it are recorded under that
//! class). Reads, and inserts/updates/deletes that fit in their leaf, take it shared:
//! internal pages change only by the splits below while it is held shared, so a descent
//! latches one page at a time (SH; the leaf EX for a change) without latch coupling. An
//! operation that must change the structure (split, merge, a new or collapsed root)
//! releases everything and retries under the exclusive tree latch. No page latch is
//! ever held while waiting for the tree latch, and in shared mode only a splitter holds
//! two page latches at once (in the order below), so latch waits cannot form a cycle.
//!
//! Escalation goes through a gate (a mutex) and the structure version: a thread that
//! found its leaf full at version `v` takes the gate, and only if the version is still
//! `v` takes the tree latch exclusive; otherwise another thread changed the structure
//! meanwhile (typically: split the very leaf it found full) and it retries in shared
//! mode. Without the gate, N sessions appending to the last page all queue for the
//! exclusive latch when it fills, and each takes it in turn, blocking every reader,
//! only to find the split already done.
//!
//! Leaf splits run in shared mode when the leaf's parent has room (`smo::split_shared`),
//! at the point the exclusive path would choose: for the rightmost leaf and an insert
//! past its last key or among its last few, the new entry, those above it and, while
//! keys arrive late, a few below it move to a new right page; inside the tree, a key
//! that continues an ascending run far below the next key splits the leaf at the insert
//! position (see "Structure changes"); else the split is the most even. So sessions
//! appending ever-increasing keys, slightly out of order as concurrent IDENTITY values
//! arrive, each to a key range of its own, or anywhere, do not drain the tree for each
//! new page. Such a split
//! changes only the split leaf's range, under its EX latch, and its parent, which does
//! not split in shared mode. The splitter latches the leaf, then its right neighbour
//! (whose back link changes), then the parent: leaves left to right, then the parent,
//! and no shared-mode thread holds a parent latch while it waits for a leaf, nor a leaf
//! while it waits for the one on its left. A descent that read a parent before such a
//! split may reach the leaf it split off from; `shared_splits`, bumped while the leaf is
//! still latched, tells the descent to go again. A range walk that read the leaf or its
//! neighbour before a split inside the tree would find their links changed;
//! `relinks`, bumped while both are latched, tells it to re-seek instead (a split of the
//! rightmost leaf changes no link a walk may still follow). DBCC's walk holds the SMO
//! gate exclusive, which the shared-mode split only tries shared, so it sees one
//! structure. Parent splits, root splits (the root leaf) and merges still escalate.
//!
//! Inserts, updates and deletes first try the insert hint, the leaf of the tree's last
//! insert, and latch it only if it is free: sessions appending to key ranges of their
//! own keep moving the hint to their own leaves, and a blocking latch there made each
//! wait for another session's row operation only to find the leaf was not its own.
//!
//! A structure version, bumped by every exclusive section, lets scans move from one leaf
//! to the next through the sibling link when nothing changed meanwhile, and re-seek from
//! the last key seen when something did. Cursors hold no latch between calls.
//!
//! All handles to one allocation unit in a process share one tree latch (handles are
//! registered per database and allocation unit).
//!
//! # Row operations and undo
//!
//! Insert, update and delete (and the `*_row` variants) are row operations (see
//! [`crate::undo`]): one page change on the leaf and the row's undo record (BTreeRemove,
//! BTreeRevalue with the old value, BTreeRestore with the deleted entry), one system
//! transaction ended while the leaf is latched. Deletes are physical (no ghosts: key
//! locks keep other transactions away from a deleted key until its transaction ends).
//! Logical undo uses [`BTree::open_for_undo`], which works on exact stored keys.
//!
//! # Structure changes
//!
//! Each structure modification is a system transaction of its own, without row undo,
//! under the exclusive tree latch (the leaf splits of "Concurrency" under the shared
//! one); the user's entry is never written inside one.
//!
//! - A leaf that cannot take an entry splits first; the insert (or growing update)
//!   follows as an ordinary row operation on the leaf the split made room in. The split
//!   point is chosen with the pending entry counted: the most even split by bytes, or,
//!   for an insert past the last key of the rightmost page of a level, a new empty right
//!   page whose separator is the new key's shortest prefix above the left page's last key
//!   (ever-increasing keys then leave pages full, as in SQL Server), and for an insert
//!   among the last quarter of a rightmost leaf, a split at the insert position (keys
//!   arriving slightly out of order leave full pages too). Inside the tree, an insert in
//!   the second half of a leaf whose next key (the entry above it, or past the last
//!   entry the leaf's upper bound) is further above it than the leaf's first key is below
//!   (sessions each appending to their own key range) splits at the insert position too:
//!   the new entry alone moves to the new page, or the entries above it move and it
//!   stays, so those leaves are left full as well (`smo::ascending_split_points`); random
//!   keys practically never qualify and keep the most even split. Parents split the
//!   same way, recursively (an internal split does carry its separator); a root split
//!   makes a new root. Every page a split needs is allocated inside its system
//!   transaction before anything changes, so running out of space leaves the tree
//!   intact. Each split counts in `Page Splits/sec`.
//! - A delete removes its entry (a row operation), then, if that left a non-root leaf
//!   under ~25% full, rebalances in a system transaction of its own: the leaf merges with
//!   a sibling under the same parent when both fit in one page (otherwise it stays
//!   underfull); an empty page is unlinked and freed; internal pages merge the same way; a
//!   root with a single child is replaced by that child.
//! - Leaves below the root are normally non-empty. An empty one remains only after a
//!   crash between an append split and its insert (two system transactions); it is valid
//!   and fills with the next insert in its range.

mod check;
mod scan;
mod smo;
#[cfg(test)]
mod tests;

pub(crate) mod node;

pub use check::TreeStats;
pub use scan::Cursor;

use crate::alloc::AllocUnitKind;
use crate::buffer::{PageReadGuard, PageWriteGuard};
use crate::database::Database;
use crate::error::{Result, StorageError};
use crate::page::{Page, PageId, PageOp, PageType};
use crate::undo::RowUndo;
use diag::{LatchClass, LatchMode};
use node::*;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::*};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

/// Longest key a caller may pass (bytes). SQL Server allows 1700-byte nonclustered keys.
pub const MAX_KEY_LEN: usize = 1700;
/// Length of the uniquifier a non-unique tree appends to every key.
pub const UNIQUIFIER_LEN: usize = 4;
/// Longest stored key: a caller's key plus a uniquifier.
pub const MAX_STORED_KEY: usize = MAX_KEY_LEN + UNIQUIFIER_LEN;
/// Longest encoded leaf entry (2 + key + value): one entry alone on a page.
pub const MAX_ENTRY_LEN: usize = MAX_ENTRY;

/// The stored key of an entry of a non-unique tree: `key` followed by the big-endian
/// uniquifier.
pub fn stored_key(key: &[u8], uniquifier: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + UNIQUIFIER_LEN);
    k.extend_from_slice(key);
    k.extend_from_slice(&uniquifier.to_be_bytes());
    k
}

/// Splits a stored key of a non-unique tree into the caller's key and the uniquifier.
pub fn split_uniquifier(stored: &[u8]) -> Option<(&[u8], u32)> {
    let at = stored.len().checked_sub(UNIQUIFIER_LEN)?;
    let (k, u) = stored.split_at(at);
    Some((k, u32::from_be_bytes([u[0], u[1], u[2], u[3]])))
}

/// How a tree is created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BTreeOptions {
    /// Reject duplicate keys; otherwise keys get a uniquifier.
    pub unique: bool,
}

/// A filtered index's predicate over the table row (the engine implements it).
pub trait RowFilter: Send + Sync {
    fn belongs(&self, row: &[u8]) -> bool;
}

/// A handle to one B+tree. Cheap to clone; clones share the tree latch.
#[derive(Clone)]
pub struct BTree {
    inner: Arc<Inner>,
    filter: Option<Arc<dyn RowFilter>>,
}

/// Shared state of one tree.
pub(crate) struct Inner {
    db: Arc<Database>,
    au: u64,
    object_id: u32,
    index_id: u16,
    /// UNIQUE_YES / UNIQUE_NO, or UNIQUE_UNKNOWN for a tree opened only to apply undo
    /// (which works on exact stored keys); the first ordinary `open` settles it.
    unique: AtomicU8,
    leaf_type: PageType,
    /// The tree latch (ACCESS_METHODS_HOBT_VIRTUAL_ROOT).
    lock: RwLock<()>,
    /// Root page (packed), its level, and the leftmost leaf. Changed only under the
    /// exclusive tree latch.
    root: AtomicU64,
    root_level: AtomicU32,
    first: AtomicU64,
    /// Bumped at the start of every exclusive section.
    version: AtomicU64,
    /// Bumped by every split made in shared mode, while the split leaf is still
    /// latched: a shared-mode descent that read a parent before such a split may reach
    /// the leaf it split off from, so descents check it did not move (see
    /// "Concurrency").
    shared_splits: AtomicU64,
    /// Bumped by every split made in shared mode inside the tree (not of the rightmost
    /// leaf), while the split leaf and its right neighbour are still latched: it changes
    /// sibling links a range walk may be about to follow, so walks re-seek instead.
    relinks: AtomicU64,
    /// Serializes escalations to the exclusive tree latch (see "Concurrency").
    escalation: Mutex<()>,
    /// Taken shared (tried) by splits in shared mode, exclusive by DBCC's walk, which
    /// then sees one structure.
    smo_gate: RwLock<()>,
    /// Leaf that took the last insert (packed page id, 0 = none). Always either 0 or a
    /// leaf of the current structure: shared-mode writers set it to the leaf they just
    /// reached, exclusive sections clear it on entry and set it to a valid leaf on exit.
    /// Makes ever-increasing inserts skip the descent.
    hint: AtomicU64,
    /// How far below the right edge inserts into the rightmost leaf landed since it was
    /// last split (the most entries found above a new key), and for how many more splits
    /// of that leaf inserts that landed in other leaves count: together, how much room a
    /// split of the rightmost leaf leaves for keys still to come below the edge (see
    /// `smo::edge_split_point`). Both stay zero for ever-increasing keys.
    edge_disorder: AtomicU32,
    late_splits: AtomicU32,
}

/// Splits of the rightmost leaf that leave room for late keys after an insert landed
/// behind the right edge.
const LATE_SPLITS: u32 = 16;

#[inline]
fn pack(id: PageId) -> u64 {
    ((id.file_id as u64) << 32) | id.page_no as u64
}

#[inline]
fn unpack(v: u64) -> PageId {
    PageId { file_id: (v >> 32) as u16, page_no: v as u32 }
}

/// Open trees per (database, allocation unit), so that every handle shares one latch.
type Registry = HashMap<(usize, u64), (Weak<Database>, Weak<Inner>)>;

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

fn registry_key(db: &Arc<Database>, au: u64) -> (usize, u64) {
    (Arc::as_ptr(db) as usize, au)
}

/// Position a descent aims for.
#[derive(Clone, Copy)]
pub(crate) enum Seek<'a> {
    Key(&'a [u8]),
    First,
    Last,
}

/// One internal page on a descent path and the slot taken in it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    pub page: PageId,
    pub slot: u16,
}

impl BTree {
    /// Creates an empty tree: a new allocation unit with an empty root leaf.
    /// `index_id` 1 is a clustered index (leaves are data pages), > 1 a nonclustered one.
    pub fn create(db: &Arc<Database>, object_id: u32, index_id: u16, opts: BTreeOptions) -> Result<BTree> {
        Self::create_with(db, object_id, index_id, opts, false)
    }

    /// [`BTree::create`] for a user transaction (CREATE TABLE or INDEX): the creation's
    /// system transaction ends with a `UnitDrop` row undo in the transaction's chain, so
    /// its rollback, or recovery's undo of it after a crash, drops the unit again; a
    /// crash leaves no unit that nothing refers to.
    pub fn create_in_transaction(
        db: &Arc<Database>,
        object_id: u32,
        index_id: u16,
        opts: BTreeOptions,
    ) -> Result<BTree> {
        Self::create_with(db, object_id, index_id, opts, true)
    }

    fn create_with(
        db: &Arc<Database>,
        object_id: u32,
        index_id: u16,
        opts: BTreeOptions,
        undo_at_rollback: bool,
    ) -> Result<BTree> {
        if index_id == 0 {
            return Err(StorageError::Invalid("index id 0 is a heap, not a B-tree".into()));
        }
        // One system transaction: a crash leaves either no unit or a unit with its root.
        let stx = db.begin_system_txn()?;
        let au = db.create_alloc_unit(AllocUnitKind::InRowData, object_id, index_id)?;
        let leaf_type = leaf_type(index_id);
        let made = (|| {
            let mut g = db.allocate_page(au.id, None)?;
            db.change(
                &mut g,
                &PageOp::Format { page_type: leaf_type, level: 0, index_id, object_id, alloc_unit_id: au.id },
            )?;
            let root = g.page_id();
            drop(g);
            db.set_alloc_unit_root(au.id, root, root)?;
            Ok(root)
        })();
        let root = match made {
            Ok(root) => root,
            Err(e) => {
                // Do not leave an allocation unit without a tree behind (with a log hook
                // the rollback undoes all of it anyway); the first error is the one to
                // report.
                let _ = db.drop_alloc_unit(au.id);
                return Err(e);
            }
        };
        if undo_at_rollback {
            // Ends the system transaction (the row-operation form), atomically.
            db.log_row_undo(&crate::undo::RowUndo::UnitDrop { au: au.id })?;
        }
        stx.commit()?;
        let inner = Arc::new(Inner::new(db.clone(), au.id, object_id, index_id, Some(opts.unique), root, 0, root));
        let mut reg = registry().lock();
        reg.retain(|_, (d, t)| d.strong_count() > 0 && t.strong_count() > 0);
        reg.insert(registry_key(db, au.id), (Arc::downgrade(db), Arc::downgrade(&inner)));
        Ok(BTree { inner, filter: None })
    }

    /// Opens the tree stored in allocation unit `au_id`. Uniqueness is not recorded in
    /// the pages (SQL Server keeps it in the catalog, sys.indexes.is_unique), so the
    /// caller passes the options the tree was created with.
    pub fn open(db: &Arc<Database>, au_id: u64, opts: BTreeOptions) -> Result<BTree> {
        Self::open_with(db, au_id, Some(opts.unique))
    }

    /// Opens the tree in `au_id` to apply logical undo ([`crate::undo::apply_row_undo`]),
    /// which works on exact stored keys and so needs no uniqueness flag. Returns the open
    /// handle if there is one (sharing its tree latch); a later [`BTree::open`] settles the
    /// uniqueness of a tree first opened this way. Such a handle refuses `insert` until
    /// then.
    pub fn open_for_undo(db: &Arc<Database>, au_id: u64) -> Result<BTree> {
        Self::open_with(db, au_id, None)
    }

    fn open_with(db: &Arc<Database>, au_id: u64, unique: Option<bool>) -> Result<BTree> {
        let mut reg = registry().lock();
        let key = registry_key(db, au_id);
        if let Some((d, t)) = reg.get(&key) {
            if let (Some(d), Some(t)) = (d.upgrade(), t.upgrade()) {
                if Arc::ptr_eq(&d, db) {
                    if let Some(u) = unique {
                        match t.unique_flag() {
                            None => t.unique.store(unique_code(Some(u)), Release),
                            Some(cur) if cur != u => {
                                return Err(StorageError::Invalid(format!(
                                    "allocation unit {au_id} is open as a {} tree",
                                    if cur { "unique" } else { "non-unique" }
                                )));
                            }
                            Some(_) => {}
                        }
                    }
                    return Ok(BTree { inner: t, filter: None });
                }
            }
        }
        let au = db.alloc_unit(au_id)?;
        if au.root.is_null() || au.first_page.is_null() || au.index_id == 0 {
            return Err(StorageError::Invalid(format!("allocation unit {au_id} does not hold a B-tree")));
        }
        let level = root_level_of(db, au_id, au.index_id, au.root)?;
        let inner = Arc::new(Inner::new(
            db.clone(),
            au_id,
            au.object_id,
            au.index_id,
            unique,
            au.root,
            level as u32,
            au.first_page,
        ));
        reg.retain(|_, (d, t)| d.strong_count() > 0 && t.strong_count() > 0);
        reg.insert(key, (Arc::downgrade(db), Arc::downgrade(&inner)));
        Ok(BTree { inner, filter: None })
    }

    /// Re-reads the root, its level and the first leaf from the allocation unit, after
    /// physical undo changed the tree's pages underneath the open handles (recovery, a
    /// system transaction rolled back by the transaction layer).
    pub fn reload(&self) -> Result<()> {
        let _x = self.inner.exclusive();
        self.inner.reload_root()
    }

    /// This handle with a filtered index's predicate, consulted by the `*_row` methods.
    pub fn with_filter(mut self, filter: Arc<dyn RowFilter>) -> BTree {
        self.filter = Some(filter);
        self
    }

    pub fn set_filter(&mut self, filter: Option<Arc<dyn RowFilter>>) {
        self.filter = filter;
    }

    pub fn alloc_unit_id(&self) -> u64 {
        self.inner.au
    }

    pub fn object_id(&self) -> u32 {
        self.inner.object_id
    }

    pub fn index_id(&self) -> u16 {
        self.inner.index_id
    }

    /// Whether the tree is unique (false while a handle opened only for undo does not
    /// know).
    pub fn is_unique(&self) -> bool {
        self.inner.unique_flag() == Some(true)
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.inner.db
    }

    /// Current root page and its level (0 = the root is the only leaf).
    pub fn root(&self) -> (PageId, u8) {
        let _g = self.inner.shared();
        (unpack(self.inner.root.load(Acquire)), self.inner.root_level.load(Acquire) as u8)
    }

    /// Inserts an entry. A unique tree fails with `DuplicateKey` if `key` exists and
    /// returns `None`; a non-unique tree appends a uniquifier and returns it (the stored
    /// key is [`stored_key`]`(key, u)`).
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<Option<u32>> {
        let Some(unique) = self.inner.unique_flag() else {
            return Err(StorageError::Invalid(format!(
                "the B-tree of allocation unit {} was opened for undo only: open it with its options to insert",
                self.inner.au
            )));
        };
        if unique {
            check_sizes(key.len(), value.len(), MAX_KEY_LEN)?;
        } else {
            check_sizes(key.len() + UNIQUIFIER_LEN, value.len(), MAX_STORED_KEY)?;
        }
        if unique {
            self.inner.insert_exact(key, value)?;
            return Ok(None);
        }
        // A retry means another insert took the uniquifier just computed; each retry
        // sees that insert, so retries are few. The bound turns damage that makes the
        // search inconsistent into an error instead of a livelock.
        for _ in 0..10_000 {
            let u = match self.inner.insert_duplicate_fast(key, value)? {
                Dup::Done(u) => return Ok(Some(u)),
                Dup::Use(u) => u,
            };
            match self.inner.insert_exact(&stored_key(key, u), value) {
                Ok(()) => return Ok(Some(u)),
                Err(StorageError::DuplicateKey) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(StorageError::corrupt(
            format!("B-tree of allocation unit {}", self.inner.au),
            "no free uniquifier found for a duplicate key",
        ))
    }

    /// Inserts a run of entries, in order, into a unique tree: as [`BTree::insert`] of
    /// each, but consecutive entries that land in the same leaf are inserted under one
    /// latch of that leaf and one descent (the hint covers the first). Keys in ascending
    /// order (an IDENTITY range) make the whole run one or a few leaf visits; other
    /// orders are correct, each key whose leaf is not provably the latched one descends
    /// again. Each entry is still its own row operation (one log record with its undo).
    ///
    /// Returns how many entries were inserted: all of them, or the entries before the
    /// one that failed, with its error (the caller rolls the statement back).
    pub fn insert_run(&self, entries: &[(&[u8], &[u8])]) -> (usize, Result<()>) {
        if self.inner.unique_flag() != Some(true) {
            // Non-unique trees pick a uniquifier per entry: one at a time.
            for (i, (k, v)) in entries.iter().enumerate() {
                if let Err(e) = self.insert(k, v) {
                    return (i, Err(e));
                }
            }
            return (entries.len(), Ok(()));
        }
        for (i, (k, v)) in entries.iter().enumerate() {
            if let Err(e) = check_sizes(k.len(), v.len(), MAX_KEY_LEN) {
                // As one insert at a time would: the entries before it go in.
                return match self.insert_run(&entries[..i]) {
                    (n, Ok(())) => (n, Err(e)),
                    failed => failed,
                };
            }
        }
        let mut done = 0;
        let mut rec = Vec::new();
        while done < entries.len() {
            match self.inner.insert_run_step(&entries[done..], &mut rec) {
                Ok(n) => done += n,
                Err((n, e)) => return (done + n, Err(e)),
            }
        }
        (done, Ok(()))
    }

    /// The value stored under `key` (for a non-unique tree: the stored key).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_with(key, |v| v.to_vec())
    }

    /// Calls `f` on the value stored under `key` while its leaf is latched, without
    /// copying. `f` must not call into this tree.
    pub fn get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        let _g = self.inner.shared();
        let leaf = self.inner.descend_read(Seek::Key(key))?;
        let (slot, found) = lower_bound(&leaf, key)?;
        if !found {
            return Ok(None);
        }
        Ok(Some(f(entry(&leaf, slot)?.1)))
    }

    /// Every entry of a non-unique tree whose key (without uniquifier) is `key`, as
    /// (uniquifier, value) in uniquifier order.
    pub fn duplicates(&self, key: &[u8]) -> Result<Vec<(u32, Vec<u8>)>> {
        let lo = stored_key(key, 0);
        let hi = stored_key(key, u32::MAX);
        let mut out = Vec::new();
        self.scan(Bound::Included(&lo), Bound::Included(&hi), |k, v| {
            if let Some((base, u)) = split_uniquifier(k) {
                if base == key {
                    out.push((u, v.to_vec()));
                }
            }
            true
        })?;
        Ok(out)
    }

    /// Replaces the value stored under `key`; returns false if there is no such entry.
    /// In place when it fits, else the entry moves (the leaf splits). A value that
    /// shrinks never merges pages.
    pub fn update(&self, key: &[u8], value: &[u8]) -> Result<bool> {
        check_sizes(key.len(), value.len(), MAX_STORED_KEY)?;
        let mut rec = Vec::new();
        encode_entry(key, value, &mut rec);
        loop {
            let seen = {
                let _g = self.inner.shared();
                let leaf = self.inner.leaf_for_write(key)?;
                let (slot, found) = lower_bound(&leaf, key)?;
                if !found {
                    return Ok(false);
                }
                let old = leaf.record(slot).map_or(0, |r| r.len());
                if rec.len() <= old || leaf.free_count() >= rec.len() - old {
                    self.inner.update_row_op(leaf, slot, key, &rec)?;
                    return Ok(true);
                }
                self.inner.version()
            };
            if let Some(_x) = self.inner.escalate(seen) {
                return smo::update(&self.inner, key, &rec);
            }
        }
    }

    /// Deletes the entry stored under `key`; returns whether it existed.
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        loop {
            let seen = {
                let _g = self.inner.shared();
                let leaf = self.inner.leaf_for_write(key)?;
                let (slot, found) = lower_bound(&leaf, key)?;
                if !found {
                    return Ok(false);
                }
                let is_root = leaf.page_id() == unpack(self.inner.root.load(Acquire));
                let before = used(&leaf);
                let after = before.saturating_sub(leaf.record(slot).map_or(0, |r| r.len()) + crate::page::SLOT_SIZE);
                // Rebalance when the leaf would empty, or when it crosses the underfull
                // line. A leaf already underfull (its sibling was too full to merge) does
                // not retry on every delete: that would serialize deletes on the tree latch.
                let rebalance = !is_root && (leaf.slot_count() == 1 || (before >= UNDERFULL && after < UNDERFULL));
                if !rebalance {
                    self.inner.delete_row_op(leaf, slot, key)?;
                    return Ok(true);
                }
                self.inner.version()
            };
            if let Some(_x) = self.inner.escalate(seen) {
                return smo::delete(&self.inner, key);
            }
        }
    }

    /// Inserts the index entry of a table row, unless the handle's filter says the row
    /// does not belong to this (filtered) index. Returns whether it inserted.
    pub fn insert_row(&self, key: &[u8], value: &[u8], row: &[u8]) -> Result<bool> {
        if !self.belongs(row) {
            return Ok(false);
        }
        self.insert(key, value)?;
        Ok(true)
    }

    /// Deletes the index entry of a table row; a no-op (false) for a row the filter
    /// excludes.
    pub fn delete_row(&self, key: &[u8], row: &[u8]) -> Result<bool> {
        if !self.belongs(row) {
            return Ok(false);
        }
        self.delete(key)
    }

    /// Maintains the index for a row changed from `old_row` (entry key `old_key`) to
    /// `new_row` (entry `new_key`, `new_value`): moves, inserts, deletes or updates the
    /// entry depending on the keys and on filter membership before and after.
    pub fn update_row(
        &self,
        old_key: &[u8],
        old_row: &[u8],
        new_key: &[u8],
        new_value: &[u8],
        new_row: &[u8],
    ) -> Result<()> {
        match (self.belongs(old_row), self.belongs(new_row)) {
            (false, false) => Ok(()),
            (false, true) => self.insert(new_key, new_value).map(|_| ()),
            (true, false) => self.delete(old_key).map(|_| ()),
            (true, true) if old_key == new_key => {
                if self.update(new_key, new_value)? {
                    Ok(())
                } else {
                    Err(StorageError::corrupt(
                        format!("index {} of object {}", self.inner.index_id, self.inner.object_id),
                        "the entry of an updated row is missing",
                    ))
                }
            }
            (true, true) => {
                self.delete(old_key)?;
                self.insert(new_key, new_value).map(|_| ())
            }
        }
    }

    fn belongs(&self, row: &[u8]) -> bool {
        match &self.filter {
            Some(f) => f.belongs(row),
            None => true,
        }
    }

    /// A forward cursor over the entries with `lower <= key <= upper` (per the bounds).
    pub fn range(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Cursor {
        Cursor::new(self.inner.clone(), lower, upper, false)
    }

    /// A cursor over the same entries in descending key order.
    pub fn range_rev(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Cursor {
        Cursor::new(self.inner.clone(), lower, upper, true)
    }

    /// Calls `f(key, value)` for each entry in the range in key order, straight from the
    /// latched leaf (no copy), until `f` returns false. The tree latch is held shared
    /// while `f` runs (and yielded between leaves): `f` must not call into this tree;
    /// use a [`Cursor`] for that.
    pub fn scan<F: FnMut(&[u8], &[u8]) -> bool>(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>, f: F) -> Result<()> {
        scan::scan(&self.inner, lower, upper, f)
    }

    /// Number of entries (walks the leaf level).
    pub fn count(&self) -> Result<u64> {
        scan::count(&self.inner)
    }

    /// Verifies the whole structure (see [`TreeStats`]); DBCC builds on it.
    pub fn check(&self) -> Result<TreeStats> {
        check::check(&self.inner)
    }

    // ---- logical undo (crate::undo), idempotent, on exact stored keys ----

    /// Undo of an insert: the stored key is absent afterwards.
    pub(crate) fn undo_remove(&self, key: &[u8]) -> Result<()> {
        self.delete(key).map(drop)
    }

    /// Undo of a delete: the entry is present with `value` afterwards.
    pub(crate) fn undo_restore(&self, key: &[u8], value: &[u8]) -> Result<()> {
        check_sizes(key.len(), value.len(), MAX_STORED_KEY)?;
        match self.inner.insert_exact(key, value) {
            Ok(()) => Ok(()),
            Err(StorageError::DuplicateKey) => self.undo_revalue(key, value),
            Err(e) => Err(e),
        }
    }

    /// Undo of an update: `key` has `old` afterwards (inserted if it is missing).
    pub(crate) fn undo_revalue(&self, key: &[u8], old: &[u8]) -> Result<()> {
        check_sizes(key.len(), old.len(), MAX_STORED_KEY)?;
        if self.get_with(key, |v| v == old)? == Some(true) {
            return Ok(());
        }
        if self.update(key, old)? {
            return Ok(());
        }
        match self.inner.insert_exact(key, old) {
            // Inserted by someone meanwhile: only possible without key locks.
            Err(StorageError::DuplicateKey) => self.update(key, old).map(drop),
            r => r,
        }
    }
}

/// The level of a tree's root page, checking that the page is the unit's.
fn root_level_of(db: &Database, au_id: u64, index_id: u16, root: PageId) -> Result<u8> {
    let g = db.read(root)?;
    if g.page_id() != root || g.alloc_unit_id() != au_id || g.index_id() != index_id {
        return Err(StorageError::corrupt(
            format!("B-tree root page ({root})"),
            "does not belong to the allocation unit",
        ));
    }
    Ok(g.level())
}

const UNIQUE_UNKNOWN: u8 = 0;
const UNIQUE_YES: u8 = 1;
const UNIQUE_NO: u8 = 2;

fn unique_code(u: Option<bool>) -> u8 {
    match u {
        None => UNIQUE_UNKNOWN,
        Some(true) => UNIQUE_YES,
        Some(false) => UNIQUE_NO,
    }
}

fn leaf_type(index_id: u16) -> PageType {
    if index_id == 1 {
        PageType::Data
    } else {
        PageType::Index
    }
}

/// Checks an entry about to be stored: key of `key_len` bytes (at most `max_key`).
fn check_sizes(key_len: usize, value_len: usize, max_key: usize) -> Result<()> {
    if key_len > max_key {
        return Err(StorageError::Invalid(format!(
            "index key of {key_len} bytes exceeds the maximum of {max_key} bytes"
        )));
    }
    let len = KEY_LEN_SIZE + key_len + value_len;
    if len > MAX_ENTRY_LEN {
        return Err(StorageError::Invalid(format!(
            "index entry of {len} bytes exceeds the maximum of {MAX_ENTRY_LEN} bytes"
        )));
    }
    Ok(())
}

/// Outcome of the fast path of a non-unique insert.
enum Dup {
    /// Inserted with this uniquifier.
    Done(u32),
    /// Insert the stored key with this uniquifier through the general path.
    Use(u32),
}

impl Inner {
    #[allow(clippy::too_many_arguments)]
    fn new(
        db: Arc<Database>,
        au: u64,
        object_id: u32,
        index_id: u16,
        unique: Option<bool>,
        root: PageId,
        root_level: u32,
        first: PageId,
    ) -> Inner {
        Inner {
            db,
            au,
            object_id,
            index_id,
            unique: AtomicU8::new(unique_code(unique)),
            leaf_type: leaf_type(index_id),
            lock: RwLock::new(()),
            root: AtomicU64::new(pack(root)),
            root_level: AtomicU32::new(root_level),
            first: AtomicU64::new(pack(first)),
            version: AtomicU64::new(0),
            shared_splits: AtomicU64::new(0),
            relinks: AtomicU64::new(0),
            escalation: Mutex::new(()),
            smo_gate: RwLock::new(()),
            hint: AtomicU64::new(0),
            edge_disorder: AtomicU32::new(0),
            late_splits: AtomicU32::new(0),
        }
    }

    /// Takes the tree latch shared, recording a wait if it had to wait.
    pub(crate) fn shared(&self) -> RwLockReadGuard<'_, ()> {
        latch_timed(LatchMode::SH, || self.lock.try_read(), || self.lock.read())
    }

    /// Takes the tree latch exclusive for a structure change: bumps the version (scans
    /// re-seek) and clears the insert hint (pages may be freed).
    pub(crate) fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        let g = latch_timed(LatchMode::EX, || self.lock.try_write(), || self.lock.write());
        self.version.fetch_add(1, AcqRel);
        self.hint.store(0, Release);
        g
    }

    /// The structure version; stable while the tree latch is held (in either mode).
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Acquire)
    }

    /// Takes the tree latch exclusive for a structure change that a shared-mode attempt
    /// found necessary at structure version `seen`, unless another thread changed the
    /// structure since: then `None`, and the caller retries in shared mode.
    pub(crate) fn escalate(&self, seen: u64) -> Option<RwLockWriteGuard<'_, ()>> {
        let _gate = latch_timed(LatchMode::EX, || self.escalation.try_lock(), || self.escalation.lock());
        if self.version.load(Acquire) != seen {
            return None;
        }
        Some(self.exclusive())
    }

    /// Uniqueness, when known (see [`BTree::open_for_undo`]).
    pub(crate) fn unique_flag(&self) -> Option<bool> {
        match self.unique.load(Acquire) {
            UNIQUE_YES => Some(true),
            UNIQUE_NO => Some(false),
            _ => None,
        }
    }

    /// Re-reads root, level and first leaf from the allocation unit (caller holds the
    /// tree latch exclusive).
    pub(crate) fn reload_root(&self) -> Result<()> {
        let au = self.db.alloc_unit(self.au)?;
        let level = root_level_of(&self.db, self.au, self.index_id, au.root)?;
        self.root.store(pack(au.root), Release);
        self.root_level.store(level as u32, Release);
        self.first.store(pack(au.first_page), Release);
        self.hint.store(0, Release);
        self.version.fetch_add(1, AcqRel);
        Ok(())
    }

    /// Runs `f`, a structure modification, as a system transaction without row undo
    /// (see [`crate::undo`]). The caller holds the tree latch exclusive, which protects
    /// the tree's pages until the end; `f` releases its page latches before returning.
    /// On failure the system transaction rolls back and the cached root is re-read.
    pub(crate) fn smo<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let stx = self.db.begin_system_txn()?;
        match f() {
            Ok(v) => {
                stx.commit()?;
                Ok(v)
            }
            Err(e) => {
                drop(stx);
                // Best effort: the root the failed work may have set was undone.
                let _ = self.reload_root();
                Err(e)
            }
        }
    }

    /// Applies `op` to the latched `page` as one row operation: a system transaction
    /// whose last record is `undo` (when given), ended while the page is latched.
    /// Returns the page, still latched. On failure the latch is released first, then the
    /// system transaction rolls back (its undo latches the page itself).
    #[inline]
    pub(crate) fn row_op<'g>(
        &self,
        mut page: PageWriteGuard<'g>,
        op: &PageOp<'_>,
        undo: Option<&RowUndo<'_>>,
    ) -> Result<PageWriteGuard<'g>> {
        if !self.db.has_log_hook() {
            // No log: nothing to bracket or record (the bulk-load fast path).
            self.put(&mut page, op)?;
            return Ok(page);
        }
        if let Some(u) = undo {
            // One log record with redo and undo, when the hook can (the common case).
            self.precheck(&page, op)?;
            if self.db.change_row(&mut page, op, u)? {
                return Ok(page);
            }
        }
        let stx = self.db.begin_system_txn()?;
        let done = self.put(&mut page, op).and_then(|()| match undo {
            Some(u) => self.db.log_row_undo(u).map(drop),
            None => Ok(()),
        });
        if let Err(e) = done {
            drop(page);
            drop(stx);
            return Err(e);
        }
        stx.commit()?;
        Ok(page)
    }

    /// Inserts the encoded entry `rec` (stored key `key`) at `slot` of the latched leaf as
    /// a row operation.
    #[inline]
    pub(crate) fn insert_row_op<'g>(
        &self,
        leaf: PageWriteGuard<'g>,
        slot: u16,
        key: &[u8],
        rec: &[u8],
    ) -> Result<PageWriteGuard<'g>> {
        let undo = RowUndo::BTreeRemove { au: self.au, stored_key: key };
        self.row_op(leaf, &PageOp::InsertSlot { slot, record: rec }, Some(&undo))
    }

    /// Replaces the entry at `slot` of the latched leaf (stored key `key`) by `rec` as a
    /// row operation.
    pub(crate) fn update_row_op<'g>(
        &self,
        leaf: PageWriteGuard<'g>,
        slot: u16,
        key: &[u8],
        rec: &[u8],
    ) -> Result<PageWriteGuard<'g>> {
        // The old value is copied only when a hook will log it.
        let old = if self.db.row_undo_wanted() { Some(entry(&leaf, slot)?.1.to_vec()) } else { None };
        let undo = old.as_deref().map(|v| RowUndo::BTreeRevalue { au: self.au, stored_key: key, old_value: v });
        self.row_op(leaf, &PageOp::ReplaceSlot { slot, record: rec }, undo.as_ref())
    }

    /// Deletes the entry at `slot` of the latched leaf (stored key `key`) as a row
    /// operation.
    pub(crate) fn delete_row_op<'g>(
        &self,
        leaf: PageWriteGuard<'g>,
        slot: u16,
        key: &[u8],
    ) -> Result<PageWriteGuard<'g>> {
        let old = if self.db.row_undo_wanted() { Some(entry(&leaf, slot)?.1.to_vec()) } else { None };
        let undo = old.as_deref().map(|v| RowUndo::BTreeRestore { au: self.au, stored_key: key, value: v });
        self.row_op(leaf, &PageOp::DeleteSlot { slot }, undo.as_ref())
    }

    pub(crate) fn root_id(&self) -> PageId {
        unpack(self.root.load(Acquire))
    }

    pub(crate) fn first_id(&self) -> PageId {
        unpack(self.first.load(Acquire))
    }

    pub(crate) fn root_level(&self) -> u8 {
        self.root_level.load(Acquire) as u8
    }

    fn set_root(&self, root: PageId, level: u8, first: PageId) -> Result<()> {
        self.db.set_alloc_unit_root(self.au, root, first)?;
        self.root.store(pack(root), Release);
        self.root_level.store(level as u32, Release);
        self.first.store(pack(first), Release);
        Ok(())
    }

    /// Notes where an insert landed: `above` entries above its key in the rightmost leaf,
    /// or (`rightmost` false) in another leaf, behind the edge. Stores only when the
    /// value changes: concurrent inserters would bounce the line.
    #[inline]
    fn note_insert_position(&self, rightmost: bool, above: u32) {
        if !rightmost {
            if self.late_splits.load(Relaxed) < LATE_SPLITS {
                self.late_splits.store(LATE_SPLITS, Relaxed);
            }
        } else if above > self.edge_disorder.load(Relaxed) {
            self.edge_disorder.store(above, Relaxed);
        }
    }

    /// For a split of the rightmost leaf: the most entries an insert found above its key
    /// there since the last such split, and whether inserts landed behind the edge
    /// lately. (Races between notes and splits only make the estimate a little off.)
    pub(crate) fn edge_disorder(&self) -> (u32, bool) {
        (self.edge_disorder.load(Relaxed), self.late_splits.load(Relaxed) > 0)
    }

    /// A split of the rightmost leaf was made: the new last leaf starts its own count,
    /// and one fewer split leaves room for late keys.
    pub(crate) fn edge_split_made(&self) {
        self.edge_disorder.store(0, Relaxed);
        let late = self.late_splits.load(Relaxed);
        if late > 0 {
            self.late_splits.store(late - 1, Relaxed);
        }
    }

    fn set_hint(&self, id: PageId) {
        let v = pack(id);
        // Skip the store when unchanged: concurrent inserters would bounce the line.
        if self.hint.load(Relaxed) != v {
            self.hint.store(v, Release);
        }
    }

    /// Checks that a latched page is the tree page we expect at `level`, and that the
    /// header fields later accesses rely on are in bounds.
    pub(crate) fn validate(&self, p: &Page, id: PageId, level: u8) -> Result<()> {
        let expected_type = if level == 0 { self.leaf_type } else { PageType::Index };
        let problem = if p.page_id() != id {
            "the page header carries another page id"
        } else if p.alloc_unit_id() != self.au {
            "the page belongs to another allocation unit"
        } else if p.index_id() != self.index_id || p.object_id() != self.object_id {
            "the page belongs to another index"
        } else if p.level() != level {
            "the page is not at the level its parent implies"
        } else if p.page_type() != Some(expected_type) {
            "wrong page type for a B-tree page at this level"
        } else if !header_sane(p) {
            "slot count or free space fields are out of range"
        } else if level > 0 && p.slot_count() == 0 {
            "internal page without entries"
        } else {
            return Ok(());
        };
        Err(StorageError::corrupt(format!("B-tree page ({id}) of allocation unit {}", self.au), problem))
    }

    pub(crate) fn read_page(&self, id: PageId, level: u8) -> Result<PageReadGuard<'_>> {
        let g = self.db.read(id)?;
        self.validate(&g, id, level)?;
        Ok(g)
    }

    pub(crate) fn write_page(&self, id: PageId, level: u8) -> Result<PageWriteGuard<'_>> {
        let g = self.db.write(id)?;
        self.validate(&g, id, level)?;
        Ok(g)
    }

    /// [`Inner::write_page`] without waiting: `None` when another thread holds the latch.
    fn try_write_page(&self, id: PageId, level: u8) -> Result<Option<PageWriteGuard<'_>>> {
        let Some(g) = self.db.try_write(id)? else { return Ok(None) };
        self.validate(&g, id, level)?;
        Ok(Some(g))
    }

    /// Applies a change through the database's page-change context. Before an op that
    /// may compact the page (which walks every slot entry), the whole page is checked,
    /// so a damaged page is reported instead of making the compaction index out of
    /// bounds. Compaction is rare, so the common path stays O(1).
    pub(crate) fn put(&self, g: &mut PageWriteGuard<'_>, op: &PageOp) -> Result<()> {
        self.precheck(g, op)?;
        self.db.change(g, op)
    }

    /// The whole-page check `put` makes before an op that may compact the page.
    fn precheck(&self, g: &Page, op: &PageOp) -> Result<()> {
        if let PageOp::InsertSlot { record, .. } | PageOp::ReplaceSlot { record, .. } = op {
            if may_compact(g, record.len()) {
                g.check_structure().map_err(|e| damaged(g, e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Descends to a leaf with SH latches, one page at a time (caller holds the tree
    /// latch, so internal pages are stable).
    pub(crate) fn descend_read(&self, seek: Seek<'_>) -> Result<PageReadGuard<'_>> {
        loop {
            let splits = self.shared_splits.load(Acquire);
            let mut id = self.root_id();
            let mut level = self.root_level();
            let leaf = loop {
                let g = self.read_page(id, level)?;
                if level == 0 {
                    break g;
                }
                id = child_at(&g, pick(&g, seek)?)?;
                level -= 1;
                #[cfg(test)]
                if level == 0 {
                    drop(g);
                    tests::slow_descent();
                }
            };
            if self.shared_splits.load(Acquire) == splits {
                return Ok(leaf);
            }
        }
    }

    /// Descends to the leaf for `key` and latches it EX (caller holds the tree latch).
    fn descend_write(&self, key: &[u8]) -> Result<PageWriteGuard<'_>> {
        self.descend_write_bounded(key, None)
    }

    /// [`Inner::descend_write`], also setting `upper` (when given) to the leaf's upper
    /// bound on the way: the nearest separator above the path (None: no bound, the
    /// rightmost leaf). It holds while the leaf stays latched under the shared tree
    /// latch: separators change only in exclusive mode, and a shared-mode split only
    /// narrows the leaf it splits, under that leaf's latch.
    fn descend_write_bounded(&self, key: &[u8], mut upper: Option<&mut Option<Vec<u8>>>) -> Result<PageWriteGuard<'_>> {
        loop {
            let splits = self.shared_splits.load(Acquire);
            let mut id = self.root_id();
            let mut level = self.root_level();
            if let Some(u) = upper.as_deref_mut() {
                *u = None;
            }
            while level > 0 {
                let g = self.read_page(id, level)?;
                let slot = route(&g, key)?;
                if let Some(u) = upper.as_deref_mut() {
                    if slot + 1 < g.slot_count() {
                        // Deeper separators are tighter.
                        *u = Some(key_at(&g, slot + 1)?.to_vec());
                    }
                }
                id = child_at(&g, slot)?;
                level -= 1;
                #[cfg(test)]
                if level == 0 {
                    drop(g);
                    tests::slow_descent();
                }
            }
            let leaf = self.write_page(id, 0)?;
            if self.shared_splits.load(Acquire) == splits {
                return Ok(leaf);
            }
        }
    }

    /// Descends recording the path (exclusive mode): internal pages from the root down
    /// with the slot taken in each, and the leaf reached.
    pub(crate) fn descend_path(&self, key: &[u8]) -> Result<(Vec<Step>, PageId)> {
        let mut id = self.root_id();
        let mut level = self.root_level();
        let mut path = Vec::with_capacity(level as usize);
        while level > 0 {
            let g = self.read_page(id, level)?;
            let slot = route(&g, key)?;
            path.push(Step { page: id, slot });
            id = child_at(&g, slot)?;
            level -= 1;
        }
        Ok((path, id))
    }

    /// The leaf that must hold `key`, latched EX: the insert hint when it provably
    /// covers `key`, else a descent (which then becomes the hint). The hint is only
    /// tried: sessions appending to ranges of their own keep moving it to their own
    /// leaves, and waiting for another session's row operation there, only to find the
    /// leaf is not ours, was most of the leaf latch waits at 16 sessions. When the hint
    /// is the right leaf and busy, the descent waits for it instead.
    fn leaf_for_write(&self, key: &[u8]) -> Result<PageWriteGuard<'_>> {
        if let Some(g) = self.hinted_leaf(key)? {
            return Ok(g);
        }
        let g = self.descend_write(key)?;
        self.set_hint(g.page_id());
        Ok(g)
    }

    /// The insert hint latched EX, if it was free and provably covers `key`.
    fn hinted_leaf(&self, key: &[u8]) -> Result<Option<PageWriteGuard<'_>>> {
        let h = self.hint.load(Acquire);
        if h == 0 {
            return Ok(None);
        }
        match self.try_write_page(unpack(h), 0)? {
            Some(g) if leaf_covers(&g, key)? => Ok(Some(g)),
            _ => Ok(None),
        }
    }

    /// [`Inner::leaf_for_write`] for a run: a descent also finds the leaf's upper bound
    /// (`upper`, None after the hint), so that the keys of the run past the leaf's last
    /// key can stay in it.
    fn leaf_for_run(&self, key: &[u8], upper: &mut Option<Vec<u8>>) -> Result<PageWriteGuard<'_>> {
        *upper = None;
        if let Some(g) = self.hinted_leaf(key)? {
            return Ok(g);
        }
        let g = self.descend_write_bounded(key, Some(upper))?;
        self.set_hint(g.page_id());
        Ok(g)
    }

    /// Inserts an exact key (unique trees, and stored keys of non-unique trees).
    fn insert_exact(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut rec = Vec::new();
        encode_entry(key, value, &mut rec);
        loop {
            let seen = {
                let _g = self.shared();
                let mut leaf = self.leaf_for_write(key)?;
                let (slot, found) = insert_position(&leaf, key)?;
                if found {
                    return Err(StorageError::DuplicateKey);
                }
                let rightmost = leaf.next().is_null();
                if slot < leaf.slot_count() || !rightmost {
                    self.note_insert_position(rightmost, u32::from(leaf.slot_count() - slot));
                }
                if fits(&leaf, rec.len()) {
                    if !self.db.has_log_hook() {
                        // Bulk loads without a log: the bare page change, nothing to record.
                        return self.put(&mut leaf, &PageOp::InsertSlot { slot, record: &rec });
                    }
                    return self.insert_row_op(leaf, slot, key, &rec).map(drop);
                }
                if smo::split_shared(self, leaf, key, &rec, slot)? {
                    // The rightmost leaf split without the exclusive tree latch: the key
                    // now belongs to the new right page.
                    continue;
                }
                self.version()
            };
            if let Some(_x) = self.escalate(seen) {
                return smo::insert(self, key, &rec);
            }
        }
    }

    /// One leaf visit of [`BTree::insert_run`]: inserts `entries[0]` (descending, and
    /// splitting as [`Inner::insert_exact`] does when its leaf is full), then, under the
    /// same leaf latch, each following entry that belongs to that leaf and fits there.
    /// Returns how many were inserted (at least one), or the error with the count
    /// inserted before it.
    fn insert_run_step(
        &self,
        entries: &[(&[u8], &[u8])],
        rec: &mut Vec<u8>,
    ) -> std::result::Result<usize, (usize, StorageError)> {
        let (key, value) = entries[0];
        rec.clear();
        encode_entry(key, value, rec);
        // The latched leaf's upper bound, when the descent found one.
        let mut upper: Option<Vec<u8>> = None;
        loop {
            let seen = {
                let _g = self.shared();
                let mut leaf = self.leaf_for_run(key, &mut upper).map_err(|e| (0, e))?;
                let (slot, found) = insert_position(&leaf, key).map_err(|e| (0, e))?;
                if found {
                    return Err((0, StorageError::DuplicateKey));
                }
                let rightmost = leaf.next().is_null();
                if slot < leaf.slot_count() || !rightmost {
                    self.note_insert_position(rightmost, u32::from(leaf.slot_count() - slot));
                }
                if fits(&leaf, rec.len()) {
                    leaf = self.put_entry(leaf, slot, key, rec).map_err(|e| (0, e))?;
                    let mut n = 1;
                    // The rest of the run, while it belongs here: a key with an entry of
                    // this leaf on each side (or past the last one of the rightmost
                    // leaf) is within the leaf's range.
                    while let Some(&(key, value)) = entries.get(n) {
                        let (slot, found) = insert_position(&leaf, key).map_err(|e| (n, e))?;
                        if found {
                            return Err((n, StorageError::DuplicateKey));
                        }
                        let count = leaf.slot_count();
                        let below_upper = match &upper {
                            Some(u) => key < u.as_slice(),
                            None => leaf.next().is_null(),
                        };
                        let within = (slot > 0 || leaf.prev().is_null()) && (slot < count || below_upper);
                        rec.clear();
                        encode_entry(key, value, rec);
                        if !within || !fits(&leaf, rec.len()) {
                            break;
                        }
                        if slot < count || !leaf.next().is_null() {
                            self.note_insert_position(leaf.next().is_null(), u32::from(count - slot));
                        }
                        leaf = self.put_entry(leaf, slot, key, rec).map_err(|e| (n, e))?;
                        n += 1;
                    }
                    return Ok(n);
                }
                if smo::split_shared(self, leaf, key, rec, slot).map_err(|e| (0, e))? {
                    continue;
                }
                self.version()
            };
            if let Some(_x) = self.escalate(seen) {
                return smo::insert(self, key, rec).map(|()| 1).map_err(|e| (0, e));
            }
        }
    }

    /// Inserts the encoded entry `rec` at `slot` of the latched leaf: a row operation, or
    /// the bare page change without a log (bulk loads).
    #[inline]
    fn put_entry<'g>(
        &self,
        mut leaf: PageWriteGuard<'g>,
        slot: u16,
        key: &[u8],
        rec: &[u8],
    ) -> Result<PageWriteGuard<'g>> {
        if !self.db.has_log_hook() {
            self.put(&mut leaf, &PageOp::InsertSlot { slot, record: rec })?;
            return Ok(leaf);
        }
        self.insert_row_op(leaf, slot, key, rec)
    }

    /// Non-unique insert, fast path: find the uniquifier from the entry just below
    /// `key || FFFFFFFF` in the same leaf and insert there if it fits. Falls back to a
    /// search for the largest uniquifier when the neighbour is in another leaf or is a
    /// longer key sorting between the duplicates (keys need not be prefix-free).
    fn insert_duplicate_fast(&self, key: &[u8], value: &[u8]) -> Result<Dup> {
        let probe = stored_key(key, u32::MAX);
        {
            let _g = self.shared();
            let leaf = self.leaf_for_write(&probe)?;
            let (slot, found) = insert_position(&leaf, &probe)?;
            if found {
                return Err(uniquifier_overflow());
            }
            let known = if slot == 0 {
                // Nothing below the probe in this leaf: only the leftmost leaf proves
                // there is no duplicate.
                leaf.prev().is_null().then_some(0)
            } else {
                let prev = key_at(&leaf, slot - 1)?;
                match split_uniquifier(prev) {
                    Some((base, u)) if base == key => Some(u.checked_add(1).ok_or_else(uniquifier_overflow)?),
                    // No entry lies between `prev` and the probe, so no duplicate exists.
                    _ if below_first_duplicate(prev, key) => Some(0),
                    // A longer key sorting among the duplicates: search.
                    _ => None,
                }
            };
            if let Some(u) = known {
                let stored = stored_key(key, u);
                let mut rec = Vec::new();
                encode_entry(&stored, value, &mut rec);
                if !fits(&leaf, rec.len()) {
                    return Ok(Dup::Use(u));
                }
                self.insert_row_op(leaf, slot, &stored, &rec)?;
                return Ok(Dup::Done(u));
            }
        }
        let max = scan::max_uniquifier(self, key)?;
        Ok(Dup::Use(match max {
            None => 0,
            Some(u) => u.checked_add(1).ok_or_else(uniquifier_overflow)?,
        }))
    }
}

/// Is `stored < key || 00000000`, i.e. below every stored key of `key`'s duplicates?
fn below_first_duplicate(stored: &[u8], key: &[u8]) -> bool {
    stored.iter().cmp(key.iter().chain([0u8; UNIQUIFIER_LEN].iter())) == std::cmp::Ordering::Less
}

fn uniquifier_overflow() -> StorageError {
    StorageError::Invalid("the uniquifier of a duplicate key exceeds its maximum (2^32 - 1 duplicates)".into())
}

/// Takes a tree-level latch (the tree latch or the escalation gate) with `try_take`, or
/// waits with `take` and records the wait under ACCESS_METHODS_HOBT_VIRTUAL_ROOT.
#[inline]
fn latch_timed<G>(mode: LatchMode, try_take: impl FnOnce() -> Option<G>, take: impl FnOnce() -> G) -> G {
    if let Some(g) = try_take() {
        return g;
    }
    diag::sched::release();
    let t = Instant::now();
    let g = take();
    diag::record_nonbuffer_latch_wait(LatchClass::ACCESS_METHODS_HOBT_VIRTUAL_ROOT, mode, t.elapsed());
    g
}

/// The slot a descent takes in an internal page.
#[inline]
fn pick(page: &Page, seek: Seek<'_>) -> Result<u16> {
    match seek {
        Seek::Key(k) => route(page, k),
        Seek::First => Ok(0),
        Seek::Last => Ok(page.slot_count().saturating_sub(1)),
    }
}

/// Does this leaf provably hold the key range around `key`? True when
/// `first <= key` and either `key <= last` or the leaf is the rightmost one. (Its real
/// range, from the parents, may be wider; proving it is enough.)
fn leaf_covers(leaf: &Page, key: &[u8]) -> Result<bool> {
    let n = leaf.slot_count();
    if n == 0 || key < key_at(leaf, 0)? {
        return Ok(false);
    }
    Ok(leaf.next().is_null() || key <= key_at(leaf, n - 1)?)
}
