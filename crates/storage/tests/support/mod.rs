//! A recording log hook for the undo tests: it assigns LSNs and records every page change
//! (page, encoded op, undo material, optionally the page image before it), every row undo
//! record and every system transaction bracket, with the system transaction and thread
//! it belongs to. It tracks open system transactions per thread, rolls one back
//! physically on `end_system_txn(false)` (only the part since the matching begin when
//! nested), and has a per-thread compensating flag for applying logical undo.

#![allow(dead_code)]

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Weak};
use std::thread::ThreadId;
use storage::file::{FileGrowth, FileSpec};
use storage::io::MemFs;
use storage::{
    apply_physical_undo, undo_material, BufferPool, Database, LogHook, NoWal, Page, PageChange, PageId, Result, RowUndo,
};

/// What one record says.
#[derive(Debug, Clone)]
pub enum Kind {
    /// First record of a system transaction (logged at its outermost begin).
    Begin,
    /// Its end (outermost), committed or rolled back.
    End { committed: bool },
    /// A page change. `compensation`: written while rolling back (or applying physical
    /// undo for a test), not part of any system transaction's own work.
    Page { page: PageId, op: Vec<u8>, undo: Vec<u8>, before: Option<Box<Page>>, compensation: bool },
    /// A row undo record (encoded).
    RowUndo(Vec<u8>),
}

#[derive(Debug, Clone)]
pub struct Rec {
    pub lsn: u64,
    pub thread: ThreadId,
    /// System transaction id; 0 = outside any.
    pub txn: u64,
    pub kind: Kind,
}

#[derive(Default)]
struct ThreadState {
    /// LSN at each open begin, outermost first.
    levels: Vec<u64>,
    txn: u64,
    compensating: bool,
    /// Rolling back: changes logged now are compensation.
    undoing: u32,
}

#[derive(Default)]
struct Inner {
    next_lsn: u64,
    next_txn: u64,
    records: Vec<Rec>,
    threads: HashMap<ThreadId, ThreadState>,
    /// Page changes already undone (by a partial rollback or `undo_txn`).
    undone: HashSet<u64>,
}

#[derive(Default)]
pub struct RecordingHook {
    inner: Mutex<Inner>,
    db: Mutex<Weak<Database>>,
    /// Keep the page image before each change (for physical undo comparisons).
    pub capture_before: std::sync::atomic::AtomicBool,
}

impl RecordingHook {
    pub fn new() -> Arc<RecordingHook> {
        Arc::new(RecordingHook::default())
    }

    /// Installs the hook on `db`.
    pub fn attach(self: &Arc<Self>, db: &Arc<Database>) {
        *self.db.lock() = Arc::downgrade(db);
        db.set_log(self.clone(), Arc::new(NoWal)).expect("set_log");
    }

    pub fn set_capture(&self, on: bool) {
        self.capture_before.store(on, Ordering::Relaxed);
    }

    /// Index of the next record (a mark to read from).
    pub fn mark(&self) -> usize {
        self.inner.lock().records.len()
    }

    pub fn since(&self, mark: usize) -> Vec<Rec> {
        self.inner.lock().records[mark..].to_vec()
    }

    pub fn records(&self) -> Vec<Rec> {
        self.inner.lock().records.clone()
    }

    pub fn clear(&self) {
        self.inner.lock().records.clear();
    }

    /// Runs `f` with this thread's compensating flag set (no row undo gets logged).
    pub fn compensating<R>(&self, f: impl FnOnce() -> R) -> R {
        let me = std::thread::current().id();
        self.inner.lock().threads.entry(me).or_default().compensating = true;
        let r = f();
        self.inner.lock().threads.entry(me).or_default().compensating = false;
        r
    }

    /// The encoded row undo records of this thread since `mark`.
    pub fn row_undos_since(&self, mark: usize) -> Vec<Vec<u8>> {
        let me = std::thread::current().id();
        self.inner.lock().records[mark..]
            .iter()
            .filter(|r| r.thread == me)
            .filter_map(|r| match &r.kind {
                Kind::RowUndo(b) => Some(b.clone()),
                _ => None,
            })
            .collect()
    }

    /// Undoes a committed system transaction physically (as recovery would undo an
    /// incomplete one): its page changes' undo material, in reverse.
    pub fn undo_txn(&self, txn: u64) -> Result<()> {
        let todo = self.undo_list(|r| r.txn == txn);
        self.apply_undo(todo)
    }

    /// Undoes physically every page change since `mark` (system transactions and the
    /// free-space notes made outside them), newest first: the pages are as at `mark`.
    pub fn undo_since(&self, mark: usize) -> Result<()> {
        let first = self.inner.lock().records.get(mark).map_or(u64::MAX, |r| r.lsn);
        let todo = self.undo_list(|r| r.lsn >= first);
        self.apply_undo(todo)
    }

    /// Page changes matching `f` not undone yet, marked undone now.
    fn undo_list(&self, f: impl Fn(&Rec) -> bool) -> Vec<(PageId, Vec<u8>)> {
        let mut inner = self.inner.lock();
        let list: Vec<(u64, PageId, Vec<u8>)> = inner
            .records
            .iter()
            .filter(|r| f(r) && !inner.undone.contains(&r.lsn))
            .filter_map(|r| match &r.kind {
                Kind::Page { page, undo, compensation: false, .. } => Some((r.lsn, *page, undo.clone())),
                _ => None,
            })
            .collect();
        for (lsn, _, _) in &list {
            inner.undone.insert(*lsn);
        }
        list.into_iter().map(|(_, p, u)| (p, u)).collect()
    }

    fn apply_undo(&self, todo: Vec<(PageId, Vec<u8>)>) -> Result<()> {
        let db = self.db.lock().upgrade().expect("database alive");
        let me = std::thread::current().id();
        self.inner.lock().threads.entry(me).or_default().undoing += 1;
        let mut r = Ok(());
        for (page, m) in todo.into_iter().rev() {
            r = apply_physical_undo(&db, page, &m);
            if r.is_err() {
                break;
            }
        }
        self.inner.lock().threads.entry(me).or_default().undoing -= 1;
        r
    }

    fn push(inner: &mut Inner, txn: u64, kind: Kind) -> u64 {
        inner.next_lsn += 1;
        let lsn = inner.next_lsn;
        inner.records.push(Rec { lsn, thread: std::thread::current().id(), txn, kind });
        lsn
    }
}

impl LogHook for RecordingHook {
    fn log_page_op(&self, change: &PageChange<'_>) -> Result<u64> {
        let mut op = Vec::new();
        change.op.encode(&mut op);
        let mut undo = Vec::new();
        undo_material(change.before, change.op, &mut undo);
        let before = self.capture_before.load(Ordering::Relaxed).then(|| Box::new(change.before.clone()));
        let mut inner = self.inner.lock();
        let me = std::thread::current().id();
        let st = inner.threads.entry(me).or_default();
        let compensation = st.undoing > 0;
        let txn = if st.levels.is_empty() { 0 } else { st.txn };
        Ok(Self::push(&mut inner, txn, Kind::Page { page: change.page, op, undo, before, compensation }))
    }

    fn begin_system_txn(&self) -> Result<()> {
        let mut inner = self.inner.lock();
        let me = std::thread::current().id();
        let outer = inner.threads.entry(me).or_default().levels.is_empty();
        let lsn = if outer {
            inner.next_txn += 1;
            let id = inner.next_txn;
            inner.threads.entry(me).or_default().txn = id;
            Self::push(&mut inner, id, Kind::Begin)
        } else {
            inner.next_lsn
        };
        inner.threads.entry(me).or_default().levels.push(lsn);
        Ok(())
    }

    fn end_system_txn(&self, committed: bool) -> Result<()> {
        let me = std::thread::current().id();
        let (txn, start, outer) = {
            let mut inner = self.inner.lock();
            let st = inner.threads.entry(me).or_default();
            let start = st.levels.pop().expect("end without begin");
            (st.txn, start, st.levels.is_empty())
        };
        let mut result = Ok(());
        if !committed {
            // Undo this level's own changes (since its begin), newest first.
            let todo = self.undo_list(|r| r.txn == txn && r.lsn > start && r.thread == me);
            result = self.apply_undo(todo);
        }
        if outer {
            let mut inner = self.inner.lock();
            Self::push(&mut inner, txn, Kind::End { committed });
        }
        result
    }

    fn log_row_undo(&self, _db: u16, undo: &RowUndo<'_>) -> Result<u64> {
        let mut b = Vec::new();
        undo.encode(&mut b);
        let mut inner = self.inner.lock();
        let me = std::thread::current().id();
        let st = inner.threads.entry(me).or_default();
        assert!(!st.levels.is_empty(), "a row undo record outside a system transaction");
        assert!(!st.compensating, "a row undo record while compensating");
        let txn = st.txn;
        Ok(Self::push(&mut inner, txn, Kind::RowUndo(b)))
    }

    fn compensating(&self) -> bool {
        let me = std::thread::current().id();
        self.inner.lock().threads.get(&me).is_some_and(|s| s.compensating)
    }
}

/// A system transaction as read back from the records.
#[derive(Debug, Clone, Default)]
pub struct Txn {
    pub id: u64,
    pub thread: Option<ThreadId>,
    /// Records in LSN order (page changes and row undo records).
    pub body: Vec<Rec>,
    pub end_lsn: Option<u64>,
    pub committed: bool,
}

impl Txn {
    pub fn row_undos(&self) -> Vec<Vec<u8>> {
        self.body
            .iter()
            .filter_map(|r| match &r.kind {
                Kind::RowUndo(b) => Some(b.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn pages(&self) -> Vec<PageId> {
        let mut v: Vec<PageId> = self
            .body
            .iter()
            .filter_map(|r| match &r.kind {
                Kind::Page { page, compensation: false, .. } => Some(*page),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn page_ops(&self) -> usize {
        self.body.iter().filter(|r| matches!(r.kind, Kind::Page { compensation: false, .. })).count()
    }
}

/// Groups records into system transactions, in the order they began.
pub fn txns(records: &[Rec]) -> Vec<Txn> {
    let mut by_id: HashMap<u64, Txn> = HashMap::new();
    let mut order = Vec::new();
    for r in records {
        if r.txn == 0 {
            continue;
        }
        let t = by_id.entry(r.txn).or_insert_with(|| {
            order.push(r.txn);
            Txn { id: r.txn, thread: Some(r.thread), ..Default::default() }
        });
        match &r.kind {
            Kind::Begin => {}
            Kind::End { committed } => {
                t.end_lsn = Some(r.lsn);
                t.committed = *committed;
            }
            _ => t.body.push(r.clone()),
        }
    }
    order.into_iter().filter_map(|id| by_id.remove(&id)).collect()
}

static NEXT_DB: AtomicU16 = AtomicU16::new(40_000);

/// A database in memory with a recording hook installed.
pub fn hooked_db(pool_pages: usize, size_pages: u32) -> (Arc<Database>, Arc<RecordingHook>) {
    let fs = MemFs::new();
    let spec = FileSpec {
        file_id: 1,
        name: "undo".into(),
        path: "/data/undo.mdf".into(),
        size_pages,
        growth: FileGrowth::Pages(512),
        max_pages: None,
    };
    let id = NEXT_DB.fetch_add(1, Ordering::Relaxed);
    let db = Database::create(BufferPool::new(pool_pages), &fs, id, "undo", vec![spec]).expect("create database");
    let hook = RecordingHook::new();
    hook.attach(&db);
    (db, hook)
}

/// Logical content of a page as physical undo restores it (see `storage::undo`): header
/// fields, links, free count, each slot's record; the whole body for non-slotted pages.
pub fn content(p: &Page) -> String {
    let slotted = matches!(p.page_type_raw(), 1..=4);
    let mut s = format!(
        "type {} level {} index {} object {} unit {} prev {} next {} free {} slots {}",
        p.page_type_raw(),
        p.level(),
        p.index_id(),
        p.object_id(),
        p.alloc_unit_id(),
        p.prev(),
        p.next(),
        p.free_count(),
        p.slot_count()
    );
    if slotted {
        for sl in 0..p.slot_count() {
            s.push_str(&format!(" [{sl}:{:?}]", p.record(sl)));
        }
    } else {
        // Non-zero bytes only: bitmap pages are mostly zero.
        for (i, b) in p.body().iter().enumerate() {
            if *b != 0 {
                s.push_str(&format!(" {i}={b:#x}"));
            }
        }
    }
    s
}
