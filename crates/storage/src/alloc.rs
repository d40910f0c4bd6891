//! Allocation: which pages belong to whom, kept on disk the way SQL Server keeps it.
//!
//! Every structure below lives in pages and changes only through the page-change
//! context ([`Database::change`], with `PageOp::Format`, `WriteBody`, `SetLinks` and the
//! slot ops for the directory), so the log manager sees every allocation change. The
//! in-memory state (unit descriptors, per-unit extents with free pages, per-file search
//! hints, free-space buckets) is a cache rebuilt at open from the pages.
//!
//! # Geometry
//!
//! - An *extent* is 8 contiguous pages; extent `e` of a file holds pages `8e .. 8e+7`.
//! - **Uniform extents only**: every extent belongs to one allocation unit, as in user
//!   databases of SQL Server 2016 and later (`MIXED_PAGE_ALLOCATION OFF`). SGAM pages are
//!   therefore kept, formatted and always all zero. A unit's IAM pages do not come from
//!   mixed extents either: an IAM page is the first page of the first extent its unit
//!   takes in that GAM interval of that file (it counts as a page of its own unit).
//! - Extents 0 and 1 (pages 0-15) of every file are reserved for system pages, and so is
//!   every extent that holds a PFS, GAM or SGAM page (extents 1,011k and 63,904k). System
//!   extents are marked allocated in GAM, owned by no IAM, and never handed out; their
//!   unused pages cost 7 pages per 8,088 (under 0.1%).
//! - A trailing partial extent of a file is unusable until the file grows over it.
//!
//! | Page of a file          | What                                                      |
//! |-------------------------|-----------------------------------------------------------|
//! | 0                       | file header (`PageType::FileHeader`)                      |
//! | 1, 8088, 16176, ...     | PFS: one byte per page, 8,088 pages per PFS page          |
//! | 2, 511232, 1022464, ... | GAM: one bit per extent, 63,904 extents per GAM page      |
//! | 3, 511233, ...          | SGAM (GAM + 1): all zero, no mixed extents                |
//! | 9 (file 1 only)         | boot page (`PageType::Boot`)                              |
//!
//! All integers are little-endian. Offsets below are **from the start of the page body**,
//! that is page byte 96 (the 96-byte page header is described in `page.rs`). System pages
//! carry object id 99, index id 0, allocation unit id 0 in their page header; IAM pages
//! carry their unit's ids; directory pages carry object 7, index 0, unit 1.
//!
//! # File header page (page 0 of every data file)
//!
//! | Offset | Size | Field                                                             |
//! |-------:|-----:|-------------------------------------------------------------------|
//! | 0      | 4    | magic `MQFH` (0x4846514D)                                         |
//! | 4      | 2    | layout version (1)                                                |
//! | 6      | 2    | file id (1 primary, 3, 4, ... secondary; 2 is the log)            |
//! | 8      | 8    | binding id: same in every file and the boot page of a database    |
//! | 16     | 2    | database id at creation                                           |
//! | 18     | 1    | growth kind: 0 none, 1 pages, 2 percent                           |
//! | 19     | 1    | flags: 0x01 primary file (carries the file list)                  |
//! | 20     | 4    | growth value (pages or percent)                                   |
//! | 24     | 4    | size in pages: PFS/GAM/SGAM are formatted for every page below it |
//! | 28     | 4    | max size in pages (0xFFFFFFFF = UNLIMITED)                        |
//! | 32     | 4    | PFS interval (8088), checked at open                              |
//! | 36     | 4    | GAM interval in pages (511232), checked at open                   |
//! | 40     | 2    | number of file list entries (primary only, else 0)                |
//! | 42     | 22   | reserved, zero                                                    |
//! | 64     | 2+n  | logical name: u16 byte length, UTF-8 bytes (n <= 512)             |
//! | 578    | ...  | file list entries (primary only), packed one after the other      |
//!
//! File list entry (one per data file, including the primary itself):
//!
//! | Offset | Size | Field                                                               |
//! |-------:|-----:|---------------------------------------------------------------------|
//! | 0      | 2    | file id                                                             |
//! | 2      | 1    | growth kind                                                         |
//! | 3      | 1    | flags: 0x01 path is relative to the primary file's directory        |
//! | 4      | 4    | growth value                                                        |
//! | 8      | 4    | size in pages at creation (the file's own header has the current)   |
//! | 12     | 4    | max size in pages (0xFFFFFFFF = UNLIMITED)                          |
//! | 16     | 2+n  | logical name (u16 length + UTF-8, n <= 512)                         |
//! | 18+n   | 2+m  | path (u16 length + UTF-8)                                           |
//!
//! # PFS page (`PageType::Pfs`)
//!
//! Body byte `i` (0 <= i < 8088) describes page `base + i`, where `base` is 0 for the PFS
//! page at page 1 and the PFS page's own number otherwise. Bytes 8088..8096 are zero.
//!
//! | Bits | Meaning                                                                       |
//! |-----:|-------------------------------------------------------------------------------|
//! | 0-2  | fullness: 0 empty, 1 1-50% full, 2 51-80%, 3 81-95%, 4 96-100% (of 8,096 B)   |
//! | 3    | 0x08 has ghost records (reserved for the heap/B-tree code)                    |
//! | 4    | 0x10 IAM page                                                                 |
//! | 5    | 0x20 mixed page (never set: no mixed extents)                                 |
//! | 6    | 0x40 allocated                                                                |
//! | 7    | unused, zero                                                                  |
//!
//! System pages (header, PFS, GAM, SGAM, boot) are 0x40. Fullness is only maintained for
//! pages whose owner reports it ([`Database::note_free_space`]), as SQL Server does for
//! heap and LOB pages.
//!
//! # GAM and SGAM pages (`PageType::Gam`, `PageType::Sgam`)
//!
//! | Offset | Size | Field                                                               |
//! |-------:|-----:|---------------------------------------------------------------------|
//! | 0      | 7988 | bitmap: bit `j` (byte j/8, bit j%8, LSB first) is extent `k*63904+j` |
//!
//! GAM bit 1 = the extent is free (as in SQL Server), 0 = allocated, a system extent, or
//! beyond the end of the file (growth sets the bits of the new extents). SGAM is all zero.
//!
//! # IAM page (`PageType::Iam`), one per allocation unit per GAM interval per file
//!
//! | Offset | Size | Field                                                               |
//! |-------:|-----:|---------------------------------------------------------------------|
//! | 0      | 8    | allocation unit id                                                  |
//! | 8      | 4    | sequence number: position in the unit's IAM chain, from 0           |
//! | 12     | 2    | file id of the interval                                             |
//! | 14     | 2    | reserved, zero                                                      |
//! | 16     | 4    | start page of the GAM interval (k * 511232)                         |
//! | 20     | 12   | reserved, zero                                                      |
//! | 32     | 7988 | bitmap of extents of the interval owned by the unit (GAM bit order) |
//!
//! The IAM pages of a unit form its **IAM chain** through the page header's prev/next
//! pointers, in creation order; [`AllocUnit::first_iam`] is its head.
//!
//! # Boot page (file 1, page 9, `PageType::Boot`)
//!
//! | Offset | Size | Field                                                               |
//! |-------:|-----:|---------------------------------------------------------------------|
//! | 0      | 4    | magic `MQBT` (0x5442514D)                                           |
//! | 4      | 2    | layout version (1)                                                  |
//! | 6      | 2    | database id at creation                                             |
//! | 8      | 8    | binding id (same as in the file headers)                            |
//! | 16     | 8    | creation time, microseconds since the Unix epoch (UTC)              |
//! | 24     | 8    | creation LSN (page LSN of the boot page's formatting)               |
//! | 32     | 8    | next allocation unit id                                             |
//! | 40     | 8    | checkpoint LSN (dbi_checkptLSN; transaction layer; 0 = none)        |
//! | 48     | 8    | last known good CHECKDB, µs since epoch (dbi_dbccLastKnownGood)     |
//! | 56     | 64   | reserved for the transaction layer, zero until it defines them      |
//! | 120    | 2    | log file id                                                         |
//! | 122    | 1    | log growth kind                                                     |
//! | 123    | 1    | log flags: 0x01 the log fields are set                              |
//! | 124    | 4    | log growth value                                                    |
//! | 128    | 4    | log size in pages                                                   |
//! | 132    | 4    | log max size in pages (0xFFFFFFFF = UNLIMITED)                      |
//! | 136    | 8    | reserved for the log manager                                        |
//! | 144    | 40   | descriptor of the allocation-unit directory (directory record)      |
//! | 184    | 8    | reserved, zero                                                      |
//! | 192    | 2+n  | database name (u16 length + UTF-8, n <= 512)                        |
//! | 706    | 2+n  | log logical name (u16 length + UTF-8, n <= 512)                     |
//! | 1220   | 2+n  | log path (u16 length + UTF-8, n <= 1024)                            |
//!
//! # Allocation-unit directory (the role of sys.sysallocunits)
//!
//! One 40-byte record per allocation unit, in slotted data pages (`PageType::Data`,
//! object 7) of the reserved unit 1, whose own descriptor is in the boot page. Records
//! keep their slot (a dropped unit's slot is emptied, not shifted). Directory pages are
//! found through unit 1's IAM chain like any unit's pages.
//!
//! | Offset | Size | Field                                                               |
//! |-------:|-----:|---------------------------------------------------------------------|
//! | 0      | 1    | record version (1)                                                  |
//! | 1      | 1    | kind: 1 IN_ROW_DATA, 2 LOB_DATA, 3 ROW_OVERFLOW_DATA                |
//! | 2      | 2    | index id                                                            |
//! | 4      | 4    | object id                                                           |
//! | 8      | 8    | allocation unit id                                                  |
//! | 16     | 6    | first IAM page (u32 page, u16 file; 0:0 = none)                     |
//! | 22     | 6    | root page                                                           |
//! | 28     | 6    | first page                                                          |
//! | 34     | 6    | reserved, zero                                                      |
//!
//! # Allocating
//!
//! A page for a unit comes first from an extent it already owns that has a free page
//! (the extent of `near`, then later extents, then any), else from a new extent: the
//! first free extent in GAM, searched from `near` in its file, otherwise round-robin over
//! the files (SQL Server's proportional fill, simplified). When no file has a free extent
//! the files grow by their FILEGROWTH, round-robin; when none can, the error is
//! [`StorageError::FilegroupFull`] (1105) and nothing has changed.
//!
//! Concurrency: one allocation mutex serialises changes to GAM, IAM, PFS allocated bits
//! and the directory. Free-space notes (PFS fullness and ghost bits) do not take it: they
//! change one PFS byte under the PFS page's EX latch. Callers may hold data page latches
//! when they allocate or free (a split holds its leaf, a heap move its home page); the
//! allocator then latches system pages and the page it hands out, and takes the
//! free-space hint mutex last.
//!
//! # Allocation and system transactions
//!
//! Every allocation change runs in a system transaction (its own, or the caller's when
//! one is open: a page split allocates inside the split's). Inside a system transaction
//! the allocation mutex is held until the outermost one ends
//! (`Database::lock_allocation`): physical undo of a system transaction that claimed an
//! extent, created an IAM page or grew a file is only correct if no other allocation saw
//! those changes before it ended. XOR undo of bitmap writes (see [`crate::undo`]) keeps
//! the free-space notes other threads make meanwhile (other bits of the same PFS page).
//! A thread holding the mutex this way latches, after its allocations, only pages nobody
//! else can be holding while waiting for the mutex: pages it just allocated, pages of a
//! tree whose exclusive tree latch it holds, and system pages. When a system transaction
//! that held the mutex is rolled back at run time, the in-memory caches are rebuilt from
//! the pages ([`Database::reload_allocation`]).

mod check;
mod format;
pub mod layout;

pub(crate) use format::{attach_files, prepare_specs};
pub use layout::{BootInfo, FileHeader, FileListEntry, LogFileInfo};

use crate::buffer::{PageReadGuard, PageWriteGuard};
use crate::database::Database;
use crate::error::{Result, StorageError};
use crate::page::{PageId, PageOp, PageType, SLOT_SIZE};
use layout::*;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// What an allocation unit stores (sys.allocation_units.type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum AllocUnitKind {
    InRowData = 1,
    LobData = 2,
    RowOverflowData = 3,
}

/// An allocation unit: the pages of one heap, index, or LOB column of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocUnit {
    pub id: u64,
    pub kind: AllocUnitKind,
    pub object_id: u32,
    pub index_id: u16,
    /// First IAM page of the unit's IAM chain.
    pub first_iam: PageId,
    /// B+tree root (NULL for heaps and LOB units).
    pub root: PageId,
    /// First page (leftmost leaf of a B+tree, first page of a heap).
    pub first_page: PageId,
}

/// An extent address: file and extent number in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Ext {
    file: u16,
    ext: u32,
}

impl Ext {
    fn of(id: PageId) -> Ext {
        Ext { file: id.file_id, ext: extent_of(id.page_no) }
    }
    fn first_page_no(self) -> u32 {
        extent_first_page(self.ext)
    }
    fn page(self, i: usize) -> PageId {
        PageId::new(self.file, self.first_page_no().saturating_add(i as u32))
    }
    fn interval(self) -> u32 {
        gam_interval_of(self.ext)
    }
}

impl fmt::Display for Ext {
    /// Extents are shown by their first page, as SQL Server's messages do.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}:{})", self.file, self.first_page_no())
    }
}

/// Allocation state of one unit (cache of its IAM chain).
#[derive(Default)]
struct UnitAlloc {
    /// IAM pages in chain order.
    chain: Vec<PageId>,
    /// (file, GAM interval) -> IAM page.
    by_interval: HashMap<(u16, u32), PageId>,
    /// Owned extents that may have a free page (a hint: verified before use).
    with_free: BTreeSet<Ext>,
}

struct FileAlloc {
    /// Pages formatted for allocation (the size in the file header).
    formatted: u32,
    /// No free extent below this one: where the GAM search starts.
    hint: u32,
}

#[derive(Default)]
struct State {
    units: HashMap<u64, UnitAlloc>,
    files: BTreeMap<u16, FileAlloc>,
    /// Round-robin position over `files` for new extents without a `near`.
    rr: usize,
    /// Where each unit's directory record is: (page, slot).
    dir_loc: HashMap<u64, (PageId, u16)>,
    /// Directory pages in (file, page) order.
    dir_pages: Vec<PageId>,
    /// Directory pages that may have room for a record.
    dir_room: BTreeSet<PageId>,
    next_au: u64,
}

impl State {
    fn full_extents(&self, file: u16) -> u32 {
        self.files.get(&file).map(|f| full_extents(f.formatted)).unwrap_or(0)
    }

    fn unit_mut(&mut self, au: u64) -> Result<&mut UnitAlloc> {
        self.units.get_mut(&au).ok_or_else(|| no_unit(au))
    }

    /// Does this page exist in a formatted part of one of the files?
    fn page_in_range(&self, id: PageId) -> bool {
        self.files.get(&id.file_id).is_some_and(|f| id.page_no < f.formatted)
    }
}

/// Free-space buckets of the data pages of one unit that reports them (heaps and LOB
/// units): pages with room, by PFS fullness bucket 0-3. A page in none of the sets is
/// full (bucket 4). Kept equal to the PFS bytes: every change of either updates both.
#[derive(Default)]
struct SpaceHints {
    by_bucket: [BTreeSet<PageId>; 4],
}

impl SpaceHints {
    fn bucket(&self, id: PageId) -> u8 {
        (0..4u8).find(|&b| self.by_bucket[b as usize].contains(&id)).unwrap_or(4)
    }
    fn set(&mut self, id: PageId, bucket: u8) {
        for s in self.by_bucket.iter_mut() {
            s.remove(&id);
        }
        if let Some(s) = self.by_bucket.get_mut(bucket as usize) {
            s.insert(id);
        }
    }
    fn remove(&mut self, id: PageId) {
        self.set(id, 4);
    }
}

/// Whether a unit's pages report free space: SQL Server tracks PFS fullness for heap and
/// LOB pages only; B-tree pages are found by key, never by free space.
fn tracks_space(u: &AllocUnit) -> bool {
    u.id != DIRECTORY_AU && (u.index_id == 0 || u.kind != AllocUnitKind::InRowData)
}

pub(crate) struct Allocator {
    /// The allocation mutex (see the module doc): held by mutators, possibly until the end
    /// of their system transaction.
    pub(crate) gate: std::sync::Arc<crate::database::AllocGate>,
    /// The allocator's state, locked briefly inside the allocation mutex (and by readers
    /// that only look).
    state: Mutex<State>,
    /// Unit descriptors, read-mostly; changed only with `state` held.
    units: RwLock<HashMap<u64, AllocUnit>>,
    space: Mutex<HashMap<u64, SpaceHints>>,
}

fn no_unit(au: u64) -> StorageError {
    StorageError::Invalid(format!("allocation unit {au} does not exist"))
}

fn corrupt(id: PageId, detail: impl Into<String>) -> StorageError {
    StorageError::corrupt(format!("page ({id})"), detail)
}

fn pfs_id(file: u16, page_no: u32) -> PageId {
    PageId::new(file, pfs_page_of(page_no))
}

fn gam_id(e: Ext) -> PageId {
    PageId::new(e.file, gam_page_of_interval(e.interval()))
}

/// Describes the set bits of a PFS byte the way DBCC PAGE does.
pub fn pfs_flags(b: u8) -> String {
    let mut s = Vec::new();
    if b & PFS_IAM != 0 {
        s.push("IAM_PG");
    }
    if b & PFS_MIXED != 0 {
        s.push("MIXED_EXT");
    }
    s.push(if b & PFS_ALLOCATED != 0 { "ALLOCATED" } else { "NOT ALLOCATED" });
    s.push(bucket_name(b & PFS_FULLNESS_MASK));
    if b & PFS_GHOST != 0 {
        s.push("Has Ghost");
    }
    s.join(" ")
}

impl Allocator {
    pub(crate) fn new() -> Allocator {
        Allocator {
            gate: Default::default(),
            state: Mutex::new(State::default()),
            units: RwLock::new(HashMap::new()),
            space: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn get(&self, au: u64) -> Option<AllocUnit> {
        self.units.read().get(&au).cloned()
    }
}

// ---------------------------------------------------------------------------------------
// Page access helpers

impl Database {
    /// Latches a system page SH and checks its type: a page of the wrong type (or never
    /// formatted) where an allocation structure must be is corruption, not a panic.
    fn sys_read(&self, id: PageId, ty: PageType) -> Result<PageReadGuard<'_>> {
        let g = self.read(id)?;
        if g.page_type() != Some(ty) {
            return Err(corrupt(id, format!("expected a {ty:?} page, found page type {}", g.page_type_raw())));
        }
        Ok(g)
    }

    fn sys_write(&self, id: PageId, ty: PageType) -> Result<PageWriteGuard<'_>> {
        let g = self.write(id)?;
        if g.page_type() != Some(ty) {
            return Err(corrupt(id, format!("expected a {ty:?} page, found page type {}", g.page_type_raw())));
        }
        Ok(g)
    }

    /// Latches a directory page EX after checking its structure: the slot ops that
    /// follow must never run on a damaged slot array.
    fn dir_write(&self, id: PageId) -> Result<PageWriteGuard<'_>> {
        let g = self.sys_write(id, PageType::Data)?;
        if g.alloc_unit_id() != DIRECTORY_AU {
            return Err(corrupt(id, "a page of the allocation-unit directory belongs to another unit"));
        }
        g.check_structure().map_err(|e| corrupt(id, format!("directory page: {e}")))?;
        Ok(g)
    }

    /// Formats a page that is being (re)created: its old content is not read.
    fn sys_format(
        &self,
        id: PageId,
        ty: PageType,
        au: u64,
        object_id: u32,
        index_id: u16,
    ) -> Result<PageWriteGuard<'_>> {
        let mut g = self.pool().write_fresh(self.id, id)?;
        self.change(&mut g, &PageOp::Format { page_type: ty, level: 0, index_id, object_id, alloc_unit_id: au })?;
        Ok(g)
    }

    fn body_write(&self, g: &mut PageWriteGuard<'_>, at: usize, bytes: &[u8]) -> Result<()> {
        // Body offsets are below 8,096 and fit in u16; `change` rejects a range outside
        // the body before anything is logged.
        self.change(g, &PageOp::WriteBody { offset: at as u16, bytes })
    }

    // ---- PFS ----

    fn pfs_get(&self, id: PageId) -> Result<u8> {
        let g = self.sys_read(pfs_id(id.file_id, id.page_no), PageType::Pfs)?;
        // pfs_index < 8,088 <= body length.
        Ok(g.body()[pfs_index(id.page_no)])
    }

    /// Sets a page's PFS byte; returns the old one.
    fn pfs_set(&self, id: PageId, v: u8) -> Result<u8> {
        let mut g = self.sys_write(pfs_id(id.file_id, id.page_no), PageType::Pfs)?;
        let i = pfs_index(id.page_no);
        let old = g.body()[i];
        if old != v {
            self.body_write(&mut g, i, &[v])?;
        }
        Ok(old)
    }

    /// The PFS bytes of an extent's 8 pages (an extent never straddles PFS pages).
    fn pfs_extent(&self, e: Ext) -> Result<[u8; 8]> {
        let first = e.first_page_no();
        let g = self.sys_read(pfs_id(e.file, first), PageType::Pfs)?;
        let i = pfs_index(first);
        let mut b = [0u8; 8];
        b.copy_from_slice(&g.body()[i..i + 8]);
        Ok(b)
    }

    // ---- GAM ----

    fn gam_set(&self, e: Ext, free: bool) -> Result<()> {
        let mut g = self.sys_write(gam_id(e), PageType::Gam)?;
        let i = gam_bit_of(e.ext);
        let old = g.body()[i / 8];
        let new = with_bit(old, i, free);
        if old != new {
            self.body_write(&mut g, i / 8, &[new])?;
        }
        Ok(())
    }

    /// Sets or clears the GAM bits of many extents of one file, one change per GAM page.
    fn gam_set_many(&self, file: u16, exts: &[u32], free: bool) -> Result<()> {
        let mut by_interval: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for &x in exts {
            by_interval.entry(gam_interval_of(x)).or_default().push(gam_bit_of(x));
        }
        for (k, bits) in by_interval {
            let id = PageId::new(file, gam_page_of_interval(k));
            let mut g = self.sys_write(id, PageType::Gam)?;
            self.write_bits(&mut g, 0, &bits, free)?;
        }
        Ok(())
    }

    /// Changes bitmap bits (at body offset `base`) with one `WriteBody` covering the
    /// changed bytes; nothing is written when no bit changes.
    fn write_bits(&self, g: &mut PageWriteGuard<'_>, base: usize, bits: &[usize], on: bool) -> Result<()> {
        let (Some(&lo), Some(&hi)) = (bits.iter().min(), bits.iter().max()) else {
            return Ok(());
        };
        let (lo, hi) = (lo / 8, hi / 8);
        let mut bytes = g.body()[base + lo..=base + hi].to_vec();
        for &b in bits {
            let at = b / 8 - lo;
            bytes[at] = with_bit(bytes[at], b, on);
        }
        if bytes[..] != g.body()[base + lo..=base + hi] {
            self.body_write(g, base + lo, &bytes)?;
        }
        Ok(())
    }

    /// First free extent of `file` in `[from, to)`, scanning the GAM pages.
    fn gam_find_free(&self, file: u16, from: u32, to: u32) -> Result<Option<u32>> {
        let mut e = from.max(RESERVED_EXTENTS);
        while e < to {
            let k = gam_interval_of(e);
            let interval_end = (k as u64 + 1) * GAM_INTERVAL_EXTENTS as u64;
            let end = (to as u64).min(interval_end) as u32;
            let g = self.sys_read(PageId::new(file, gam_page_of_interval(k)), PageType::Gam)?;
            let bm = &g.body()[..BITMAP_BYTES];
            let base = k * GAM_INTERVAL_EXTENTS;
            let mut i = gam_bit_of(e);
            let iend = (end - base) as usize;
            while i < iend {
                if i % 8 == 0 && bm[i / 8] == 0 {
                    i += 8;
                    continue;
                }
                // A system extent is never free in a consistent GAM; skip it if it is.
                if bit(bm, i) && !is_system_extent(base + i as u32) {
                    return Ok(Some(base + i as u32));
                }
                i += 1;
            }
            e = end;
        }
        Ok(None)
    }

    // ---- IAM ----

    fn iam_owns(&self, iam: PageId, au: u64, e: Ext) -> Result<bool> {
        let g = self.sys_read(iam, PageType::Iam)?;
        if g.alloc_unit_id() != au {
            return Err(corrupt(
                iam,
                format!("IAM page of allocation unit {} found in the chain of unit {au}", g.alloc_unit_id()),
            ));
        }
        Ok(bit(&g.body()[iam::BITMAP..iam::BITMAP + BITMAP_BYTES], gam_bit_of(e.ext)))
    }

    fn iam_set(&self, iam: PageId, e: Ext, on: bool) -> Result<()> {
        let mut g = self.sys_write(iam, PageType::Iam)?;
        self.write_bits(&mut g, iam::BITMAP, &[gam_bit_of(e.ext)], on)
    }

    /// Reads and validates an IAM page of `au`: header, next pointer, owned extents.
    fn iam_read(&self, id: PageId, au: u64) -> Result<(IamHeader, PageId, Vec<Ext>)> {
        let g = self.sys_read(id, PageType::Iam)?;
        let h = IamHeader::decode(g.body()).map_err(|d| corrupt(id, d))?;
        if h.au != au || g.alloc_unit_id() != au {
            return Err(corrupt(id, format!("IAM page of allocation unit {} found in the chain of unit {au}", h.au)));
        }
        if h.file_id != id.file_id {
            return Err(corrupt(id, format!("IAM page maps file {} but lies in file {}", h.file_id, id.file_id)));
        }
        let bm = &g.body()[iam::BITMAP..iam::BITMAP + BITMAP_BYTES];
        let base = h.interval() * GAM_INTERVAL_EXTENTS;
        // The last interval a u32 page number reaches is only partly addressable.
        let last_ext = u32::MAX / EXTENT_PAGES;
        let mut exts = Vec::new();
        for (i, &byte) in bm.iter().enumerate() {
            if byte == 0 {
                continue;
            }
            for j in 0..8 {
                if byte & (1 << j) != 0 {
                    let ext = base + (i * 8 + j) as u32;
                    if ext >= last_ext {
                        return Err(corrupt(id, format!("IAM page maps extent {ext}, beyond any file")));
                    }
                    exts.push(Ext { file: h.file_id, ext });
                }
            }
        }
        Ok((h, g.next(), exts))
    }
}

// ---------------------------------------------------------------------------------------
// The allocator proper (every function here runs with the allocation mutex held)

impl Database {
    fn allocate_locked(
        &self,
        st: &mut State,
        au: u64,
        near: Option<PageId>,
        publish: bool,
    ) -> Result<PageWriteGuard<'_>> {
        if !st.units.contains_key(&au) {
            return Err(no_unit(au));
        }
        let near = near.filter(|n| st.page_in_range(*n));
        let start = near.map(Ext::of);
        // 1. A free page in an extent the unit owns: near's extent, then later ones.
        loop {
            let cand = {
                let ua = st.unit_mut(au)?;
                start
                    .and_then(|s| ua.with_free.range(s..).next().copied())
                    .or_else(|| ua.with_free.iter().next().copied())
            };
            let Some(e) = cand else { break };
            if let Some(g) = self.alloc_in_extent(st, au, e, publish)? {
                return Ok(g);
            }
        }
        // 2. A new extent.
        let e = self.claim_extent(st, au, near)?;
        self.alloc_in_extent(st, au, e, publish)?
            .ok_or_else(|| StorageError::corrupt(format!("extent {e}"), "a newly allocated extent has no free page"))
    }

    /// Takes the first free page of an owned extent. `None` (and the extent leaves the
    /// unit's hint set) when the extent has no free page or is not owned after all.
    fn alloc_in_extent(&self, st: &mut State, au: u64, e: Ext, publish: bool) -> Result<Option<PageWriteGuard<'_>>> {
        let iam = st.unit_mut(au)?.by_interval.get(&(e.file, e.interval())).copied();
        let owned = match iam {
            Some(iam) => self.iam_owns(iam, au, e)?,
            None => false,
        };
        if !owned {
            st.unit_mut(au)?.with_free.remove(&e);
            return Ok(None);
        }
        let first = e.first_page_no();
        let (page, more) = {
            let mut g = self.sys_write(pfs_id(e.file, first), PageType::Pfs)?;
            let base = pfs_index(first);
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&g.body()[base..base + 8]);
            let Some(i) = bytes.iter().position(|b| b & PFS_ALLOCATED == 0) else {
                drop(g);
                st.unit_mut(au)?.with_free.remove(&e);
                return Ok(None);
            };
            self.body_write(&mut g, base + i, &[PFS_ALLOCATED])?;
            let more = bytes.iter().enumerate().any(|(j, b)| j != i && b & PFS_ALLOCATED == 0);
            (e.page(i), more)
        };
        if !more {
            st.unit_mut(au)?.with_free.remove(&e);
        }
        // Latch the page before anyone can find it through the free-space hints: a
        // concurrent insert waits for the caller to format it.
        let g = match self.pool().write_fresh(self.id, page) {
            Ok(g) => g,
            Err(err) => {
                // Give the page back so it is not left allocated and unformatted.
                self.pfs_set(page, 0)?;
                st.unit_mut(au)?.with_free.insert(e);
                return Err(err);
            }
        };
        if publish {
            if let Some(h) = self.alloc.space.lock().get_mut(&au) {
                h.set(page, 0);
            }
        }
        Ok(Some(g))
    }

    /// Finds, takes and maps a free extent for `au` (growing files if needed).
    fn claim_extent(&self, st: &mut State, au: u64, near: Option<PageId>) -> Result<Ext> {
        if let Some(n) = near {
            let to = st.full_extents(n.file_id);
            if let Some(x) = self.gam_find_free(n.file_id, extent_of(n.page_no), to)? {
                let e = Ext { file: n.file_id, ext: x };
                self.take_extent(st, au, e)?;
                return Ok(e);
            }
        }
        let files: Vec<u16> = st.files.keys().copied().collect();
        let n = files.len();
        for i in 0..n {
            let idx = (st.rr + i) % n;
            if let Some(x) = self.search_file(st, files[idx])? {
                st.rr = (idx + 1) % n;
                let e = Ext { file: files[idx], ext: x };
                self.take_extent(st, au, e)?;
                return Ok(e);
            }
        }
        // Every file is full: grow them in turn until one yields an extent.
        for i in 0..n {
            let idx = (st.rr + i) % n;
            while self.grow_file(st, files[idx])? {
                if let Some(x) = self.search_file(st, files[idx])? {
                    st.rr = (idx + 1) % n;
                    let e = Ext { file: files[idx], ext: x };
                    self.take_extent(st, au, e)?;
                    return Ok(e);
                }
            }
        }
        Err(StorageError::FilegroupFull { db: self.id })
    }

    /// GAM search of one file from its hint; moves the hint past allocated extents.
    fn search_file(&self, st: &mut State, file: u16) -> Result<Option<u32>> {
        let Some(fa) = st.files.get(&file) else {
            return Ok(None);
        };
        let to = full_extents(fa.formatted);
        let found = self.gam_find_free(file, fa.hint, to)?;
        if let Some(fa) = st.files.get_mut(&file) {
            fa.hint = found.unwrap_or(to);
        }
        Ok(found)
    }

    /// Marks a free extent allocated in GAM and owned by `au` in its IAM page (creating
    /// that IAM page, in the extent itself, if the unit has none for the interval).
    fn take_extent(&self, st: &mut State, au: u64, e: Ext) -> Result<()> {
        self.gam_set(e, false)?;
        if let Some(fa) = st.files.get_mut(&e.file) {
            if fa.hint == e.ext {
                fa.hint = e.ext + 1;
            }
        }
        let mapped = (|| {
            let iam = match st.unit_mut(au)?.by_interval.get(&(e.file, e.interval())).copied() {
                Some(p) => p,
                None => self.new_iam(st, au, e)?,
            };
            self.iam_set(iam, e, true)
        })();
        if let Err(err) = mapped {
            // Best effort: hand the extent back to the GAM rather than leak it. (Once the
            // log exists, the transaction layer's rollback makes this step atomic.)
            let _ = self.gam_set(e, true);
            if let Some(fa) = st.files.get_mut(&e.file) {
                fa.hint = fa.hint.min(e.ext);
            }
            return Err(err);
        }
        st.unit_mut(au)?.with_free.insert(e);
        Ok(())
    }

    /// Creates the IAM page of `au` for `e`'s interval as the first page of `e`, and
    /// appends it to the unit's IAM chain.
    fn new_iam(&self, st: &mut State, au: u64, e: Ext) -> Result<PageId> {
        let mut desc = self.alloc.get(au).ok_or_else(|| no_unit(au))?;
        let page = e.page(0);
        let (seq, prev) = {
            let ua = st.unit_mut(au)?;
            (ua.chain.len() as u32, ua.chain.last().copied())
        };
        {
            let mut g = self.sys_format(page, PageType::Iam, au, desc.object_id, desc.index_id)?;
            let h = IamHeader { au, seq, file_id: e.file, start_page: interval_start_page(e.interval()) };
            self.body_write(&mut g, 0, &h.encode())?;
            if let Some(prev) = prev {
                self.change(&mut g, &PageOp::SetLinks { prev, next: PageId::NULL })?;
            }
        }
        self.pfs_set(page, PFS_ALLOCATED | PFS_IAM)?;
        match prev {
            Some(prev) => {
                let mut g = self.sys_write(prev, PageType::Iam)?;
                let pp = g.prev();
                self.change(&mut g, &PageOp::SetLinks { prev: pp, next: page })?;
            }
            None => {
                desc.first_iam = page;
                self.store_unit(st, &desc)?;
            }
        }
        let ua = st.unit_mut(au)?;
        ua.chain.push(page);
        ua.by_interval.insert((e.file, e.interval()), page);
        Ok(page)
    }

    fn free_locked(&self, st: &mut State, au: u64, id: PageId) -> Result<()> {
        if !st.units.contains_key(&au) {
            return Err(no_unit(au));
        }
        let not_his = || corrupt(id, format!("is not allocated to allocation unit {au}"));
        if !st.page_in_range(id) || is_system_extent(extent_of(id.page_no)) {
            return Err(not_his());
        }
        let e = Ext::of(id);
        let iam = st.unit_mut(au)?.by_interval.get(&(e.file, e.interval())).copied().ok_or_else(not_his)?;
        if !self.iam_owns(iam, au, e)? {
            return Err(not_his());
        }
        let empty = {
            let first = e.first_page_no();
            let mut g = self.sys_write(pfs_id(e.file, first), PageType::Pfs)?;
            let i = pfs_index(id.page_no);
            let old = g.body()[i];
            if old & PFS_ALLOCATED == 0 {
                return Err(corrupt(id, format!("is not allocated (PFS: {}); freed twice?", pfs_flags(old))));
            }
            if old & PFS_IAM != 0 {
                return Err(corrupt(id, "is an IAM page; it is freed with its allocation unit"));
            }
            self.body_write(&mut g, i, &[0])?;
            let base = pfs_index(first);
            g.body()[base..base + 8].iter().all(|b| b & PFS_ALLOCATED == 0)
        };
        if let Some(h) = self.alloc.space.lock().get_mut(&au) {
            h.remove(id);
        }
        if empty {
            // The extent goes back to the GAM: unmap it from the IAM first, so a crash in
            // between (before logging exists) leaks an extent rather than sharing one.
            self.iam_set(iam, e, false)?;
            self.gam_set(e, true)?;
            st.unit_mut(au)?.with_free.remove(&e);
            if let Some(fa) = st.files.get_mut(&e.file) {
                fa.hint = fa.hint.min(e.ext);
            }
        } else {
            st.unit_mut(au)?.with_free.insert(e);
        }
        Ok(())
    }

    fn drop_locked(&self, st: &mut State, au: u64) -> Result<()> {
        if au == DIRECTORY_AU {
            return Err(StorageError::Invalid("the allocation-unit directory cannot be dropped".into()));
        }
        let chain = st.units.get(&au).map(|u| u.chain.clone()).ok_or_else(|| no_unit(au))?;
        // Read the whole map before changing anything, so a damaged chain fails the drop
        // without a half-freed unit.
        let mut exts: Vec<Ext> = Vec::new();
        for &iam in &chain {
            exts.extend(self.iam_read(iam, au)?.2);
        }
        exts.sort_unstable();
        // The directory entry goes first: without a log, a crash in the middle then leaks
        // extents (CHECKALLOC reports them) instead of leaving a unit over freed pages.
        self.dir_remove(st, au)?;
        // PFS: clear the bytes of every page of the extents, one change per PFS page.
        let mut by_pfs: BTreeMap<PageId, Vec<usize>> = BTreeMap::new();
        for e in &exts {
            let first = e.first_page_no();
            by_pfs.entry(pfs_id(e.file, first)).or_default().push(pfs_index(first));
        }
        for (pfs, starts) in by_pfs {
            let mut g = self.sys_write(pfs, PageType::Pfs)?;
            let (Some(&lo), Some(&hi)) = (starts.first(), starts.last()) else {
                continue;
            };
            let mut bytes = g.body()[lo..hi + 8].to_vec();
            for s in starts {
                bytes[s - lo..s - lo + 8].fill(0);
            }
            self.body_write(&mut g, lo, &bytes)?;
        }
        // GAM: free the extents. The IAM pages themselves lie in the freed extents and
        // are left as they are; nothing reaches them once the directory entry is gone.
        let mut by_file: BTreeMap<u16, Vec<u32>> = BTreeMap::new();
        for e in &exts {
            by_file.entry(e.file).or_default().push(e.ext);
        }
        for (file, xs) in by_file {
            self.gam_set_many(file, &xs, true)?;
            if let (Some(fa), Some(&min)) = (st.files.get_mut(&file), xs.first()) {
                fa.hint = fa.hint.min(min);
            }
        }
        st.units.remove(&au);
        self.alloc.units.write().remove(&au);
        self.alloc.space.lock().remove(&au);
        Ok(())
    }

    /// Writes a unit's descriptor where it lives: the boot page for the directory itself,
    /// the directory otherwise; and refreshes the in-memory copy.
    fn store_unit(&self, st: &mut State, u: &AllocUnit) -> Result<()> {
        if u.id == DIRECTORY_AU {
            let mut g = self.sys_write(PageId::new(1, BOOT_PAGE), PageType::Boot)?;
            self.body_write(&mut g, boot::DIRECTORY, &encode_unit(u))?;
        } else {
            let &(page, slot) = st.dir_loc.get(&u.id).ok_or_else(|| no_unit(u.id))?;
            let mut g = self.dir_write(page)?;
            match g.record(slot).map(decode_unit) {
                Some(Ok(old)) if old.id == u.id => {}
                _ => {
                    return Err(corrupt(
                        page,
                        format!("slot {slot} does not hold the directory record of unit {}", u.id),
                    ))
                }
            }
            self.change(&mut g, &PageOp::ReplaceSlot { slot, record: &encode_unit(u) })?;
        }
        self.alloc.units.write().insert(u.id, u.clone());
        Ok(())
    }

    /// Adds a directory record (allocating a directory page when all are full).
    fn dir_insert(&self, st: &mut State, u: &AllocUnit) -> Result<()> {
        let rec = encode_unit(u);
        while let Some(&page) = st.dir_room.iter().next_back() {
            let mut g = self.dir_write(page)?;
            let n = g.slot_count();
            let slot = (0..n).find(|&s| g.record(s).is_none()).unwrap_or(n);
            let need = rec.len() + if slot == n { SLOT_SIZE } else { 0 };
            if g.free_count() >= need {
                self.change(&mut g, &PageOp::PlaceSlot { slot, record: &rec })?;
                st.dir_loc.insert(u.id, (page, slot));
                return Ok(());
            }
            st.dir_room.remove(&page);
        }
        let page = self.dir_add_page(st)?;
        let mut g = self.dir_write(page)?;
        self.change(&mut g, &PageOp::PlaceSlot { slot: 0, record: &rec })?;
        st.dir_loc.insert(u.id, (page, 0));
        Ok(())
    }

    fn dir_remove(&self, st: &mut State, au: u64) -> Result<()> {
        let (page, slot) = st.dir_loc.get(&au).copied().ok_or_else(|| no_unit(au))?;
        let mut g = self.dir_write(page)?;
        match g.record(slot).map(decode_unit) {
            Some(Ok(old)) if old.id == au => {}
            _ => return Err(corrupt(page, format!("slot {slot} does not hold the directory record of unit {au}"))),
        }
        self.change(&mut g, &PageOp::ClearSlot { slot })?;
        st.dir_loc.remove(&au);
        st.dir_room.insert(page);
        Ok(())
    }

    /// Every allocated non-IAM page of the extents mapped by `chain`, in (file, page)
    /// order. Reads IAM and PFS pages; needs no allocation mutex.
    fn chain_pages(&self, au: u64, chain: &[PageId]) -> Result<Vec<(PageId, u8)>> {
        let mut exts = Vec::new();
        for &iam in chain {
            exts.extend(self.iam_read(iam, au)?.2);
        }
        exts.sort_unstable();
        let mut out = Vec::with_capacity(exts.len() * 8);
        let mut cached: Option<(PageId, Vec<u8>)> = None;
        for e in exts {
            let first = e.first_page_no();
            let pfs = pfs_id(e.file, first);
            if cached.as_ref().map(|c| c.0) != Some(pfs) {
                let g = self.sys_read(pfs, PageType::Pfs)?;
                cached = Some((pfs, g.body().to_vec()));
            }
            if let Some((_, body)) = &cached {
                let base = pfs_index(first);
                for (i, &b) in body[base..base + 8].iter().enumerate() {
                    if b & PFS_ALLOCATED != 0 && b & PFS_IAM == 0 {
                        out.push((e.page(i), b));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Rebuilds a unit's allocation cache from its IAM chain and PFS.
    fn load_unit(&self, st: &State, u: &AllocUnit) -> Result<(UnitAlloc, Option<SpaceHints>)> {
        let mut ua = UnitAlloc::default();
        let mut space = tracks_space(u).then(SpaceHints::default);
        let mut cur = u.first_iam;
        let mut prev = PageId::NULL;
        while !cur.is_null() {
            if ua.by_interval.values().any(|&p| p == cur) || ua.chain.len() > 65_536 {
                return Err(corrupt(cur, format!("the IAM chain of allocation unit {} loops", u.id)));
            }
            if !st.page_in_range(cur) {
                return Err(corrupt(prev, format!("IAM chain of unit {} points outside the files: ({cur})", u.id)));
            }
            let (h, next, exts) = self.iam_read(cur, u.id)?;
            let full = st.full_extents(h.file_id);
            if ua.by_interval.insert((h.file_id, h.interval()), cur).is_some() {
                return Err(corrupt(
                    cur,
                    format!("unit {} has two IAM pages for interval {} of file {}", u.id, h.interval(), h.file_id),
                ));
            }
            for e in exts {
                if e.ext >= full || is_system_extent(e.ext) {
                    return Err(corrupt(
                        cur,
                        format!("IAM page maps extent {e}, which is a system extent or beyond the end of the file"),
                    ));
                }
                let pfs = self.pfs_extent(e)?;
                if pfs.iter().any(|b| b & PFS_ALLOCATED == 0) {
                    ua.with_free.insert(e);
                }
                if let Some(sp) = space.as_mut() {
                    for (i, &b) in pfs.iter().enumerate() {
                        let bucket = b & PFS_FULLNESS_MASK;
                        if b & PFS_ALLOCATED != 0 && b & PFS_IAM == 0 && bucket < 4 {
                            sp.set(e.page(i), bucket);
                        }
                    }
                }
            }
            ua.chain.push(cur);
            prev = cur;
            cur = next;
        }
        Ok((ua, space))
    }
}

// ---------------------------------------------------------------------------------------
// Public allocation API

impl Database {
    /// Creates an allocation unit (the storage of one heap, index or LOB column). Its
    /// descriptor is written to the directory; it owns no extent until its first page.
    pub fn create_alloc_unit(&self, kind: AllocUnitKind, object_id: u32, index_id: u16) -> Result<AllocUnit> {
        let stx = self.begin_system_txn()?;
        let _gate = self.lock_allocation();
        let u = {
            let mut st = self.alloc.state.lock();
            let id = st.next_au.max(FIRST_USER_AU);
            let u = AllocUnit {
                id,
                kind,
                object_id,
                index_id,
                first_iam: PageId::NULL,
                root: PageId::NULL,
                first_page: PageId::NULL,
            };
            {
                let mut g = self.sys_write(PageId::new(1, BOOT_PAGE), PageType::Boot)?;
                self.body_write(&mut g, boot::NEXT_AU, &(id + 1).to_le_bytes())?;
            }
            st.next_au = id + 1;
            self.dir_insert(&mut st, &u)?;
            st.units.insert(id, UnitAlloc::default());
            self.alloc.units.write().insert(id, u.clone());
            if tracks_space(&u) {
                self.alloc.space.lock().insert(id, SpaceHints::default());
            }
            u
        };
        stx.commit()?;
        Ok(u)
    }

    /// Looks up an allocation unit by id.
    pub fn alloc_unit(&self, au_id: u64) -> Result<AllocUnit> {
        self.alloc.get(au_id).ok_or_else(|| no_unit(au_id))
    }

    /// Every allocation unit of the database except the directory itself, by id.
    pub fn alloc_units(&self) -> Vec<AllocUnit> {
        let mut v: Vec<AllocUnit> =
            self.alloc.units.read().values().filter(|u| u.id != DIRECTORY_AU).cloned().collect();
        v.sort_by_key(|u| u.id);
        v
    }

    /// Records a new root / first page for an allocation unit (B+tree root split).
    pub fn set_alloc_unit_root(&self, au_id: u64, root: PageId, first_page: PageId) -> Result<()> {
        if au_id == DIRECTORY_AU {
            return Err(StorageError::Invalid("the allocation-unit directory is maintained by the allocator".into()));
        }
        let stx = self.begin_system_txn()?;
        let _gate = self.lock_allocation();
        {
            let mut st = self.alloc.state.lock();
            let mut u = self.alloc_unit(au_id)?;
            if u.root != root || u.first_page != first_page {
                u.root = root;
                u.first_page = first_page;
                self.store_unit(&mut st, &u)?;
            }
        }
        stx.commit()
    }

    /// Allocates a page for `au` (near `near` when possible) and returns it latched EX,
    /// not yet formatted: the caller's first change is a `PageOp::Format`. Call it inside
    /// the system transaction that formats and uses the page, so that a crash before that
    /// transaction ends frees the page again (outside one, the allocation is its own
    /// system transaction and a crash before the format leaves the page allocated).
    pub fn allocate_page(&self, au: u64, near: Option<PageId>) -> Result<PageWriteGuard<'_>> {
        self.allocate(au, near, true)
    }

    /// [`Database::allocate_page`] without offering the page to free-space searches
    /// ([`Database::find_page_with_space`]) until its owner notes its free space: for
    /// pages written by a system transaction that releases their latch before it ends
    /// (nobody else may change them until then).
    pub(crate) fn allocate_private_page(&self, au: u64, near: Option<PageId>) -> Result<PageWriteGuard<'_>> {
        self.allocate(au, near, false)
    }

    fn allocate(&self, au: u64, near: Option<PageId>, publish: bool) -> Result<PageWriteGuard<'_>> {
        if au == DIRECTORY_AU {
            return Err(StorageError::Invalid(
                "allocation unit 1 is reserved for the allocation-unit directory".into(),
            ));
        }
        let stx = self.begin_system_txn()?;
        let _gate = self.lock_allocation();
        let g = {
            let mut st = self.alloc.state.lock();
            self.allocate_locked(&mut st, au, near, publish)?
        };
        // Ended while the new page is latched (and the allocation mutex held).
        stx.commit()?;
        Ok(g)
    }

    /// Returns a page to free space. The page must be an allocated data page of `au`
    /// (ownership is checked in its IAM page): anything else is a corruption error.
    pub fn free_page(&self, au: u64, id: PageId) -> Result<()> {
        if au == DIRECTORY_AU {
            return Err(StorageError::Invalid(
                "allocation unit 1 is reserved for the allocation-unit directory".into(),
            ));
        }
        let stx = self.begin_system_txn()?;
        let _gate = self.lock_allocation();
        {
            let mut st = self.alloc.state.lock();
            self.free_locked(&mut st, au, id)?;
        }
        stx.commit()
    }

    /// Drops an allocation unit: frees every extent it owns (its IAM pages with them)
    /// and removes its directory entry.
    pub fn drop_alloc_unit(&self, au: u64) -> Result<()> {
        self.drop_alloc_unit_with(au, None)
    }

    /// [`drop_alloc_unit`](Self::drop_alloc_unit) whose system transaction ends with
    /// `tag` in its end record (the transaction layer's deferred frees; see
    /// [`crate::lob::delete_tagged`]).
    pub fn drop_alloc_unit_tagged(&self, au: u64, tag: crate::CompletionTag) -> Result<()> {
        self.drop_alloc_unit_with(au, Some(tag))
    }

    fn drop_alloc_unit_with(&self, au: u64, tag: Option<crate::CompletionTag>) -> Result<()> {
        let stx = self.begin_system_txn()?;
        let _gate = self.lock_allocation();
        {
            let mut st = self.alloc.state.lock();
            self.drop_locked(&mut st, au)?;
        }
        match tag {
            Some(t) => stx.commit_tagged(t),
            None => stx.commit(),
        }
    }

    /// Every page of an allocation unit, in allocation (file, page) order: the order a
    /// heap scan and DBCC read them. IAM pages are not included.
    pub fn alloc_unit_pages(&self, au: u64) -> Result<Vec<PageId>> {
        let chain = self.alloc.state.lock().units.get(&au).map(|u| u.chain.clone()).ok_or_else(|| no_unit(au))?;
        Ok(self.chain_pages(au, &chain)?.into_iter().map(|(p, _)| p).collect())
    }

    /// Records how full a page is (`free_bytes` as `Page::free_count` reports it) in its
    /// PFS fullness bits, so inserts can find room. The PFS page changes (and is logged)
    /// only when the fullness bucket changes, not on every insert.
    pub fn note_free_space(&self, au: u64, id: PageId, free_bytes: usize) -> Result<()> {
        let bucket = fullness_bucket(free_bytes);
        if let Some(h) = self.alloc.space.lock().get(&au) {
            if h.bucket(id) == bucket {
                return Ok(());
            }
        }
        if id.is_null() || is_system_page(id.file_id, id.page_no) || self.files().get(id.file_id).is_err() {
            return Err(StorageError::Invalid(format!("page ({id}) is not a data page")));
        }
        let pfs = pfs_id(id.file_id, id.page_no);
        let i = pfs_index(id.page_no);
        // UP latch: readers of the PFS page go on; EX only when the byte really changes.
        let g = self.update(pfs)?;
        if g.page_type() != Some(PageType::Pfs) {
            return Err(corrupt(pfs, format!("expected a Pfs page, found page type {}", g.page_type_raw())));
        }
        let old = g.body()[i];
        if old & PFS_ALLOCATED == 0 || old & PFS_IAM != 0 {
            return Err(corrupt(
                id,
                format!("free space noted for a page that is not an allocated data page (PFS: {})", pfs_flags(old)),
            ));
        }
        let new = (old & !PFS_FULLNESS_MASK) | bucket;
        // Either latch stays held until the hint is updated below.
        let (_up, _ex) = if new != old {
            let mut w = g.upgrade();
            self.body_write(&mut w, i, &[new])?;
            (None, Some(w))
        } else {
            (Some(g), None)
        };
        // Updated while the PFS latch is held, so hint and PFS change in the same order.
        if let Some(h) = self.alloc.space.lock().get_mut(&au) {
            h.set(id, bucket);
        }
        Ok(())
    }

    /// Records in a page's PFS byte whether it holds ghost records (SQL Server's "Has
    /// Ghost" bit), so ghost cleanup visits only such pages. Like the fullness bits it is
    /// a hint changed under the PFS page latch only, logged only when it changes.
    pub fn note_ghosts(&self, id: PageId, has_ghosts: bool) -> Result<()> {
        if id.is_null() || is_system_page(id.file_id, id.page_no) || self.files().get(id.file_id).is_err() {
            return Err(StorageError::Invalid(format!("page ({id}) is not a data page")));
        }
        let pfs = pfs_id(id.file_id, id.page_no);
        let i = pfs_index(id.page_no);
        let g = self.update(pfs)?;
        if g.page_type() != Some(PageType::Pfs) {
            return Err(corrupt(pfs, format!("expected a Pfs page, found page type {}", g.page_type_raw())));
        }
        let old = g.body()[i];
        // A page freed meanwhile keeps a clear byte.
        if old & PFS_ALLOCATED == 0 || (old & PFS_GHOST != 0) == has_ghosts {
            return Ok(());
        }
        let new = if has_ghosts { old | PFS_GHOST } else { old & !PFS_GHOST };
        let mut w = g.upgrade();
        self.body_write(&mut w, i, &[new])
    }

    /// The unit's pages whose PFS byte has the ghost bit set, in allocation order.
    pub fn pages_with_ghosts(&self, au: u64) -> Result<Vec<PageId>> {
        let chain = self.alloc.state.lock().units.get(&au).map(|u| u.chain.clone()).ok_or_else(|| no_unit(au))?;
        Ok(self.chain_pages(au, &chain)?.into_iter().filter(|&(_, b)| b & PFS_GHOST != 0).map(|(p, _)| p).collect())
    }

    /// A page of the unit whose PFS fullness guarantees at least `needed` free bytes
    /// (as SQL Server's heap insert finds one), or `None`: then allocate a new page.
    pub fn find_page_with_space(&self, au: u64, needed: usize) -> Result<Option<PageId>> {
        let max_bucket = (0..4u8).rev().find(|&b| bucket_guaranteed_free(b) >= needed);
        let Some(max_bucket) = max_bucket else {
            return Ok(None);
        };
        let tracked = self.alloc.space.lock().contains_key(&au);
        if !tracked {
            // B-tree units keep no hints: scan their PFS bytes (rarely wanted).
            let chain = self.alloc.state.lock().units.get(&au).map(|u| u.chain.clone()).ok_or_else(|| no_unit(au))?;
            let pages = self.chain_pages(au, &chain)?;
            return Ok(pages.into_iter().rev().find(|&(_, b)| b & PFS_FULLNESS_MASK <= max_bucket).map(|(p, _)| p));
        }
        // The hints mirror PFS; each candidate is still checked against its PFS byte, and
        // a stale hint is corrected. Bounded so a storm of concurrent changes cannot spin.
        for _ in 0..64 {
            let cand = {
                let sp = self.alloc.space.lock();
                let Some(h) = sp.get(&au) else {
                    return Ok(None);
                };
                (0..=max_bucket).rev().find_map(|b| h.by_bucket[b as usize].iter().next_back().copied())
            };
            let Some(id) = cand else { return Ok(None) };
            let b = self.pfs_get(id)?;
            let bucket = b & PFS_FULLNESS_MASK;
            if b & PFS_ALLOCATED != 0 && b & PFS_IAM == 0 && bucket <= max_bucket {
                return Ok(Some(id));
            }
            if let Some(h) = self.alloc.space.lock().get_mut(&au) {
                if b & PFS_ALLOCATED != 0 && b & PFS_IAM == 0 {
                    h.set(id, bucket);
                } else {
                    h.remove(id);
                }
            }
        }
        Ok(None)
    }

    /// The allocation unit owning a page, if any: the unit whose IAM maps the page's
    /// extent (DBCC cross-checks; reads one IAM page per unit with an IAM there). Pages
    /// of the allocation-unit directory belong to unit 1; system pages to none.
    pub fn page_owner(&self, id: PageId) -> Result<Option<u64>> {
        let st = self.alloc.state.lock();
        if !st.page_in_range(id) {
            return Ok(None);
        }
        let e = Ext::of(id);
        let mut units: Vec<(u64, PageId)> = st
            .units
            .iter()
            .filter_map(|(&au, u)| u.by_interval.get(&(e.file, e.interval())).map(|&p| (au, p)))
            .collect();
        units.sort_unstable();
        for (au, iam) in units {
            if self.iam_owns(iam, au, e)? {
                return Ok(Some(au));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use crate::file::{FileGrowth, FileSpec};
    use crate::io::MemFs;
    use std::sync::Arc;

    fn new_db(fs: &MemFs) -> Arc<Database> {
        let files = vec![
            FileSpec {
                file_id: 1,
                name: "a".into(),
                path: "/t/a.mdf".into(),
                size_pages: 48,
                growth: FileGrowth::Pages(40),
                max_pages: None,
            },
            FileSpec {
                file_id: 3,
                name: "b".into(),
                path: "/t/b.ndf".into(),
                size_pages: 48,
                growth: FileGrowth::Pages(40),
                max_pages: None,
            },
        ];
        Database::create(BufferPool::new(128), fs, 3, "t", files).unwrap()
    }

    fn page(db: &Database, au: u64, near: Option<PageId>) -> PageId {
        let mut g = db.allocate_page(au, near).unwrap();
        let fmt = PageOp::Format { page_type: PageType::Data, level: 0, index_id: 0, object_id: 1, alloc_unit_id: au };
        db.change(&mut g, &fmt).unwrap();
        g.page_id()
    }

    /// The in-memory caches maintained by allocate/free/note equal what a rebuild from
    /// the pages (the open path) produces.
    #[test]
    fn caches_equal_a_rebuild_from_pages() {
        let fs = MemFs::new();
        let db = new_db(&fs);
        let heap = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 0).unwrap();
        let tree = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 1).unwrap();
        let mut pages = Vec::new();
        for i in 0..300u32 {
            let au = if i % 3 == 0 { tree.id } else { heap.id };
            let p = page(&db, au, if i % 4 == 0 { pages.last().map(|&(_, p)| p) } else { None });
            if au == heap.id {
                db.note_free_space(au, p, (i as usize * 131) % 8200).unwrap();
            }
            pages.push((au, p));
        }
        for (i, &(au, p)) in pages.iter().enumerate() {
            if i % 5 == 1 {
                db.free_page(au, p).unwrap();
            }
        }
        let st = db.alloc.state.lock();
        for au in [DIRECTORY_AU, heap.id, tree.id] {
            let desc = db.alloc_unit(au).unwrap();
            let (ua, space) = db.load_unit(&st, &desc).unwrap();
            let cur = &st.units[&au];
            assert_eq!(ua.chain, cur.chain, "unit {au}");
            assert_eq!(ua.by_interval, cur.by_interval, "unit {au}");
            assert_eq!(ua.with_free, cur.with_free, "unit {au}");
            let live = db.alloc.space.lock();
            match (space, live.get(&au)) {
                (Some(a), Some(b)) => assert_eq!(a.by_bucket, b.by_bucket, "unit {au}"),
                (None, None) => {}
                _ => panic!("unit {au}: space tracking differs"),
            }
        }
        assert!(st.units[&heap.id].chain.len() >= 2, "the heap has an IAM page in each file");
    }

    /// Hints are only hints: an extent the unit does not own, and a free-space entry for
    /// a freed page, are dropped when met, never used.
    #[test]
    fn stale_hints_are_never_trusted() {
        let fs = MemFs::new();
        let db = new_db(&fs);
        let a = db.create_alloc_unit(AllocUnitKind::InRowData, 1, 0).unwrap();
        let b = db.create_alloc_unit(AllocUnitKind::InRowData, 2, 0).unwrap();
        let pa = page(&db, a.id, None);
        let pb = page(&db, b.id, None);
        // Give `a` a hint for b's extent and a free-space entry for a freed page.
        db.alloc.state.lock().units.get_mut(&a.id).unwrap().with_free.insert(Ext::of(pb));
        let pa2 = page(&db, a.id, None);
        db.free_page(a.id, pa2).unwrap();
        db.alloc.space.lock().get_mut(&a.id).unwrap().set(pa2, 0);
        for _ in 0..20 {
            let p = page(&db, a.id, None);
            assert_ne!(Ext::of(p), Ext::of(pb), "never from another unit's extent");
        }
        db.note_free_space(a.id, pa, 8000).unwrap();
        let found = db.find_page_with_space(a.id, 4000).unwrap();
        assert!(found.is_some() && found != Some(pa2));
        assert!(db.check_allocation().unwrap().is_empty());
    }

    #[test]
    fn pfs_flags_read_like_dbcc_page() {
        assert_eq!(pfs_flags(PFS_ALLOCATED | PFS_IAM), "IAM_PG ALLOCATED 0_PCT_FULL");
        assert_eq!(pfs_flags(PFS_ALLOCATED | 3 | PFS_GHOST), "ALLOCATED 95_PCT_FULL Has Ghost");
        assert_eq!(pfs_flags(0), "NOT ALLOCATED 0_PCT_FULL");
    }
}
