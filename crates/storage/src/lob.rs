//! Off-row storage of large values (`varchar(max)`, `nvarchar(max)`, `varbinary(max)`,
//! `xml`): a value of up to 2^31-1 bytes is cut into fragments stored as records on text
//! pages of a `LobData` allocation unit, under a small tree whose root the row points at
//! with a [`LobPointer`] (total length and root RID).
//!
//! # Records
//!
//! Every LOB record starts with a 4-byte header; integers are little-endian:
//!
//! | Offset | Size | Field                                                                     |
//! |--------|------|---------------------------------------------------------------------------|
//! | 0      | 1    | status A = `0x08`: record type 4 (blob fragment), no other bits            |
//! | 1      | 1    | kind: 3 = DATA, 2 = INTERNAL                                               |
//! | 2      | 1    | level: 0 for DATA, >= 1 for INTERNAL                                       |
//! | 3      | 1    | reserved, 0                                                                |
//!
//! - **DATA** (level 0): the header followed by 0 to [`MAX_FRAGMENT`] (8040) bytes of the
//!   value. The record length gives the fragment length.
//! - **INTERNAL** (level `L` >= 1): the header, u16 entry count `n` (1..=[`NODE_FANOUT`]),
//!   u16 reserved (0), then `n` entries of 12 bytes: u32 *end offset* and the 8-byte RID
//!   (u32 page, u16 file, u16 slot) of a child at level `L - 1`. End offsets are relative
//!   to the start of the node's own part of the value and strictly increasing; child `i`
//!   covers `[end[i-1], end[i])` (the first starts at 0) and the last end is the length
//!   of the node's part. A record of `n` entries is exactly `8 + 12 n` bytes.
//!
//! # Trees
//!
//! - A value of at most 8040 bytes (including the empty value) is a single DATA record:
//!   the pointer's root RID is that record.
//! - A longer value is cut into 8040-byte fragments (the last one shorter). Up to 673
//!   fragments (5.4 MB) are listed by one INTERNAL root at level 1. Beyond that, the
//!   fragments are grouped 673 at a time under level-1 nodes, those under a level-2 root,
//!   and so on: two levels cover 3.6 GB, more than the 2^31-1 bytes a value may have.
//! - Where records live: DATA records and root records go to `TextMix` pages (3), which
//!   values share, so small values pack together as in SQL Server's TEXT_MIX pages. A
//!   value of one record goes to any `TextMix` page with room. A longer value is written
//!   on new pages of its own: each full fragment (8044 bytes) takes a page, the tail
//!   fragment takes one and the root joins it when it fits (else it takes another one);
//!   once the value is written, the room left on the tail and root pages is offered to
//!   other values. Non-root INTERNAL nodes each take a page of their own of type
//!   `TextTree` (4), which publishes no free space, so nothing else is placed there.
//!   Text pages have level 0, the unit's object and index ids, and no links.
//!
//! Readers walk the tree from the root, checking every record's type, kind and level
//! (strictly decreasing, so damaged pointers cannot make a cycle), that child ranges
//! tile the parent's, and that DATA lengths match; damage is `StorageError::Corrupt`.
//! Each step holds one page latch. Deleting a value clears all its records and frees text
//! pages left empty (reformatted as unowned first, as heaps do, so a concurrent writer
//! offered the page by the free-space cache skips it); it latches the pages in page
//! order and keeps those still holding other values' records latched to its end.
//!
//! Values are immutable: an update of a MAX column writes the new value and deletes the
//! old one. Changing values in place (`.WRITE`) may come later.
//!
//! Writing a value is a row operation (see [`crate::undo`]): one system transaction
//! ending with a `LobRemove` undo record that carries the pointer and a CRC32C of the
//! value. Its pages are private to it until it ends (allocated without being offered to
//! free-space searches), so their latches can be released as fragments fill, however
//! large the value. Deleting a value ([`delete`]) is one system transaction without row
//! undo: call it once the transaction that dropped the value has committed. The
//! transaction layer uses [`delete_tagged`], whose end record says which of its deferred
//! frees it was, so that recovery redoes exactly the frees a crash cut short.

use crate::alloc::{AllocUnit, AllocUnitKind};
use crate::buffer::PageWriteGuard;
use crate::database::Database;
use crate::error::{Result, StorageError};
use crate::heap::{clear_slot, owner, place_record, read_if_in_files, try_place, Owner, Placement};
use crate::page::{Page, PageId, PageType, MAX_RECORD_ON_PAGE};
use crate::record::{LobPointer, RecordType, Rid};
use crate::undo::RowUndo;
use std::collections::{BTreeMap, HashSet};

/// Largest fragment of a value in one DATA record (SQL Server's figure).
pub const MAX_FRAGMENT: usize = 8040;
/// Entries of one INTERNAL record: as many as fit a record on a page.
pub const NODE_FANOUT: usize = (MAX_RECORD_ON_PAGE - NODE_HEADER_LEN) / NODE_ENTRY_LEN;
/// Largest value: 2^31-1 bytes, as SQL Server's MAX types.
pub const MAX_LOB_LEN: u64 = i32::MAX as u64;

const BLOB_STATUS: u8 = RecordType::BlobFragment.code() << 1;
const KIND_INTERNAL: u8 = 2;
const KIND_DATA: u8 = 3;
const HEADER_LEN: usize = 4;
const NODE_HEADER_LEN: usize = 8;
const NODE_ENTRY_LEN: usize = 12;
/// Deepest root accepted when reading: enough for any length a pointer can state (u32).
const MAX_LEVEL: u8 = 3;
/// Output reserved up front by `read` at most: a damaged pointer claiming 4 GB must not
/// make us allocate 4 GB before the tree proves it wrong.
const MAX_PREALLOC: u64 = 64 << 20;

/// What [`check`] found for one value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LobStats {
    pub total_len: u64,
    /// Levels of the tree including the DATA level (1 for a single-record value).
    pub levels: u8,
    pub data_records: u64,
    pub internal_records: u64,
    /// Distinct pages holding the value's records.
    pub pages: u64,
}

/// What [`check_unit`] found for a whole allocation unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LobUnitStats {
    pub values: u64,
    pub pages: u64,
    pub records: u64,
    /// Bytes of value data on the pages.
    pub data_bytes: u64,
    pub free_bytes: u64,
}

fn corrupt_at(rid: Rid, detail: impl Into<String>) -> StorageError {
    StorageError::corrupt(format!("LOB record {rid}"), detail)
}

fn rd16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn rd32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Creates the `LobData` allocation unit for the MAX columns of index `index_id` of
/// table `object_id`.
pub fn create_unit(db: &Database, object_id: u32, index_id: u16) -> Result<AllocUnit> {
    db.create_alloc_unit(AllocUnitKind::LobData, object_id, index_id)
}

/// [`create_unit`] for a user transaction that created the table itself: as
/// [`crate::btree::BTree::create_in_transaction`], the transaction's rollback (or
/// recovery's undo of it) drops the unit.
pub fn create_unit_in_transaction(db: &Database, object_id: u32, index_id: u16) -> Result<AllocUnit> {
    let stx = db.begin_system_txn()?;
    let unit = db.create_alloc_unit(AllocUnitKind::LobData, object_id, index_id)?;
    db.log_row_undo(&crate::undo::RowUndo::UnitDrop { au: unit.id })?;
    stx.commit()?;
    Ok(unit)
}

fn lob_unit(db: &Database, au: u64) -> Result<AllocUnit> {
    let unit = db.alloc_unit(au)?;
    if unit.kind != AllocUnitKind::LobData {
        return Err(StorageError::Invalid(format!("allocation unit {au} is not a LOB unit (kind {:?})", unit.kind)));
    }
    Ok(unit)
}

fn node_record(level: u8, entries: &[(u32, Rid)], base: u32, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[BLOB_STATUS, KIND_INTERNAL, level, 0]);
    // At most NODE_FANOUT entries: fits u16.
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    for &(end, rid) in entries {
        out.extend_from_slice(&(end - base).to_le_bytes());
        out.extend_from_slice(&rid.to_bytes());
    }
}

/// Stores `value` in LOB unit `au` and returns the pointer a row keeps. A row operation
/// (see [`crate::undo`]): one system transaction whose last record is the
/// `LobRemove` undo. The value's pages are its own while it is written (allocated
/// without being offered to other writers; fragment pages are released as they fill,
/// which is safe because nobody else can reach them), except the page that takes a small
/// value, which stays latched until the end. On failure nothing of the value remains.
pub fn write(db: &Database, au: u64, value: &[u8]) -> Result<LobPointer> {
    let total = value.len() as u64;
    if total > MAX_LOB_LEN {
        return Err(StorageError::Invalid(format!(
            "a value of {total} bytes is larger than the 2147483647 bytes a MAX type holds"
        )));
    }
    let unit = lob_unit(db, au)?;
    // Only a logged undo needs the checksum (it tells the value apart from another one
    // that reused its root slot, see `undo_write`).
    let crc = if db.row_undo_wanted() { crc32c::crc32c(value) } else { 0 };
    let stx = db.begin_system_txn()?;
    let mut written = Vec::new();
    let mut held = Vec::new();
    let done = write_tree(db, &unit, value, &mut written, &mut held).and_then(|root| {
        let ptr = LobPointer { total_len: total, root };
        db.log_row_undo(&RowUndo::LobRemove { au, ptr, crc })?;
        Ok(ptr)
    });
    let ptr = match done {
        Ok(ptr) => ptr,
        Err(e) => {
            drop(held);
            if !db.has_log_hook() {
                // Without a log nothing rolls back: remove what was written (best effort,
                // the error that matters is the first one).
                let _ = free_records(db, &written, None);
            }
            drop(stx);
            return Err(e);
        }
    };
    stx.commit()?;
    // Now others may use the room left on the pages this value shares.
    for g in &held {
        db.note_free_space(au, g.page_id(), g.free_count())?;
    }
    Ok(ptr)
}

fn write_tree<'d>(
    db: &'d Database,
    unit: &AllocUnit,
    value: &[u8],
    written: &mut Vec<Rid>,
    held: &mut Vec<PageWriteGuard<'d>>,
) -> Result<Rid> {
    let mut rec = Vec::with_capacity(HEADER_LEN + MAX_FRAGMENT.min(value.len()));
    if value.len() <= MAX_FRAGMENT {
        rec.extend_from_slice(&[BLOB_STATUS, KIND_DATA, 0, 0]);
        rec.extend_from_slice(value);
        let mix = Placement { page_type: PageType::TextMix, search: true, private: false, near: None };
        let (rid, g) = place_record(db, unit, mix, &rec)?;
        written.push(rid);
        held.push(g);
        return Ok(rid);
    }
    // Pages of this value alone: full fragments, the tail and the root, tree nodes.
    let own = |page_type, near| Placement { page_type, search: false, private: true, near };
    let mut entries: Vec<(u32, Rid)> = Vec::with_capacity(value.len().div_ceil(MAX_FRAGMENT));
    let mut end = 0u32;
    let mut near = None;
    // The page of the last fragment when it is not full: the root joins it if it fits.
    let mut tail: Option<PageWriteGuard<'d>> = None;
    for chunk in value.chunks(MAX_FRAGMENT) {
        rec.clear();
        rec.extend_from_slice(&[BLOB_STATUS, KIND_DATA, 0, 0]);
        rec.extend_from_slice(chunk);
        let (rid, g) = place_record(db, unit, own(PageType::TextMix, near), &rec)?;
        written.push(rid);
        near = Some(rid.page_id());
        if chunk.len() < MAX_FRAGMENT {
            tail = Some(g);
        } else {
            // A full fragment leaves too little room to offer: never published, and
            // released now (nobody can reach the page before this write ends).
            drop(g);
        }
        // value.len() <= 2^31-1: fits u32.
        end += chunk.len() as u32;
        entries.push((end, rid));
    }
    let mut level = 1u8;
    while entries.len() > NODE_FANOUT {
        let mut upper = Vec::with_capacity(entries.len().div_ceil(NODE_FANOUT));
        let mut base = 0u32;
        for group in entries.chunks(NODE_FANOUT) {
            node_record(level, group, base, &mut rec);
            // Non-root nodes take a TextTree page each, which is never shared.
            let (rid, g) = place_record(db, unit, own(PageType::TextTree, near), &rec)?;
            drop(g);
            written.push(rid);
            let group_end = group.last().map_or(base, |e| e.0);
            upper.push((group_end, rid));
            base = group_end;
        }
        entries = upper;
        level += 1;
    }
    node_record(level, &entries, 0, &mut rec);
    if let Some(mut g) = tail {
        let pid = g.page_id();
        let placed = try_place(db, &mut g, &rec)?;
        held.push(g);
        if let Some(slot) = placed {
            let root = Rid::new(pid, slot);
            written.push(root);
            return Ok(root);
        }
    }
    let (root, g) = place_record(db, unit, own(PageType::TextMix, near), &rec)?;
    written.push(root);
    held.push(g);
    Ok(root)
}

/// The whole value.
pub fn read(db: &Database, ptr: LobPointer) -> Result<Vec<u8>> {
    read_range(db, ptr, 0, ptr.total_len)
}

/// `len` bytes of the value from byte `offset` (fewer at the end of the value, none past
/// it), as SUBSTRING reads them.
pub fn read_range(db: &Database, ptr: LobPointer, offset: u64, len: u64) -> Result<Vec<u8>> {
    let want = len.min(ptr.total_len.saturating_sub(offset));
    let mut out = Vec::with_capacity(want.min(MAX_PREALLOC) as usize);
    read_range_with(db, ptr, offset, len, |b| out.extend_from_slice(b))?;
    Ok(out)
}

/// Streams a range of the value to `f` piece by piece, straight from the pages (each
/// call runs under one page's SH latch; `f` must not touch LOB storage). Returns the
/// number of bytes delivered.
pub fn read_range_with(db: &Database, ptr: LobPointer, offset: u64, len: u64, mut f: impl FnMut(&[u8])) -> Result<u64> {
    let lo = offset.min(ptr.total_len);
    let hi = offset.saturating_add(len).min(ptr.total_len);
    let mut delivered = 0u64;
    let mut walker = Walker::new(db, None, false);
    walker.walk(ptr.root, ptr.total_len, None, lo, hi, &mut |b: &[u8]| {
        delivered += b.len() as u64;
        f(b)
    })?;
    Ok(delivered)
}

/// Deletes the value: clears all its records and frees text pages left empty, in one
/// system transaction without row undo (not undoable: call it after the transaction that
/// dropped the value commits). The tree is checked completely before anything is
/// removed.
pub fn delete(db: &Database, ptr: LobPointer) -> Result<()> {
    let (rids, _) = collect(db, ptr)?;
    free_records(db, &rids, None)
}

/// [`delete`] whose system transaction ends with `tag` in its end record, so the log
/// says, atomically with the free, that this value was freed (the transaction layer's
/// deferred frees: a free that a crash cut short is done again at recovery, one that
/// completed is never done twice).
pub fn delete_tagged(db: &Database, ptr: LobPointer, tag: crate::CompletionTag) -> Result<()> {
    let (rids, _) = collect(db, ptr)?;
    free_records(db, &rids, Some(tag))
}

/// Checks one value's tree and returns its shape.
pub fn check(db: &Database, ptr: LobPointer) -> Result<LobStats> {
    let (rids, stats) = collect(db, ptr)?;
    let pages: HashSet<PageId> = rids.iter().map(|r| r.page_id()).collect();
    Ok(LobStats { pages: pages.len() as u64, ..stats })
}

/// Checks a whole LOB unit against the pointers of every value stored in it (which the
/// table's rows hold): each tree is valid, no record belongs to two values, every
/// record on the unit's pages belongs to one of them (no orphans), and every page is a
/// well-formed text page of the unit.
pub fn check_unit(db: &Database, au: u64, ptrs: impl IntoIterator<Item = LobPointer>) -> Result<LobUnitStats> {
    let unit = lob_unit(db, au)?;
    let what = || format!("LOB allocation unit {au}");
    let mut stats = LobUnitStats::default();
    let mut referenced: HashSet<Rid> = HashSet::new();
    for ptr in ptrs {
        stats.values += 1;
        let mut walker = Walker::new(db, Some(au), true);
        walker.walk(ptr.root, ptr.total_len, None, 0, 0, &mut |_: &[u8]| {})?;
        for rid in walker.records {
            if !referenced.insert(rid) {
                return Err(StorageError::corrupt(what(), format!("record {rid} belongs to two values")));
            }
        }
    }
    let mut seen = 0u64;
    for pid in db.alloc_unit_pages(au)? {
        let g = db.read(pid)?;
        let bad = |d: String| StorageError::corrupt(what(), format!("page ({pid}): {d}"));
        if g.alloc_unit_id() != au || g.object_id() != unit.object_id || g.index_id() != unit.index_id {
            return Err(bad(format!(
                "header names allocation unit {} object {} index {}",
                g.alloc_unit_id(),
                g.object_id(),
                g.index_id()
            )));
        }
        if !matches!(g.page_type(), Some(PageType::TextMix | PageType::TextTree)) {
            return Err(bad(format!("page type {} is not a text page", g.page_type_raw())));
        }
        g.check_structure().map_err(|e| bad(e.to_string()))?;
        stats.pages += 1;
        stats.free_bytes += g.free_count() as u64;
        for (slot, rec) in g.records() {
            let rid = Rid::new(pid, slot);
            if !referenced.contains(&rid) {
                return Err(bad(format!("record {rid} belongs to no value")));
            }
            seen += 1;
            if rec.get(1) == Some(&KIND_DATA) {
                stats.data_bytes += rec.len().saturating_sub(HEADER_LEN) as u64;
            }
        }
    }
    stats.records = seen;
    if seen != referenced.len() as u64 {
        return Err(StorageError::corrupt(
            what(),
            format!("{} records of its values are on pages outside the unit", referenced.len() as u64 - seen),
        ));
    }
    Ok(stats)
}

/// Every record of the value, root last, after checking the whole tree.
fn collect(db: &Database, ptr: LobPointer) -> Result<(Vec<Rid>, LobStats)> {
    let mut walker = Walker::new(db, None, true);
    let root_level = walker.walk(ptr.root, ptr.total_len, None, 0, 0, &mut |_: &[u8]| {})?;
    let mut unique = HashSet::with_capacity(walker.records.len());
    if let Some(dup) = walker.records.iter().find(|r| !unique.insert(**r)) {
        return Err(corrupt_at(*dup, "the value's tree reaches this record twice"));
    }
    let stats = LobStats {
        total_len: ptr.total_len,
        levels: root_level + 1,
        data_records: walker.data_records,
        internal_records: walker.internal_records,
        pages: 0,
    };
    Ok((walker.records, stats))
}

/// Removes records and frees the pages left empty, as one system transaction (no row
/// undo). Pages are latched in page order; a page that keeps records of other values
/// stays latched until the end, an emptied one is un-owned and freed at once (nobody
/// touches an un-owned page).
fn free_records(db: &Database, rids: &[Rid], tag: Option<crate::CompletionTag>) -> Result<()> {
    let mut by_page: BTreeMap<PageId, Vec<u16>> = BTreeMap::new();
    for r in rids {
        by_page.entry(r.page_id()).or_default().push(r.slot);
    }
    let stx = db.begin_system_txn()?;
    let mut kept = Vec::new();
    let done = (|| {
        for (pid, slots) in by_page {
            let mut g = db.write(pid)?;
            let au = g.alloc_unit_id();
            if !is_text_page(&g) || owner(&g, au) != Owner::Unit {
                return Err(StorageError::corrupt(format!("page ({pid})"), "is not a text page of a LOB unit"));
            }
            for &s in &slots {
                if g.record(s).and_then(|r| r.first()) != Some(&BLOB_STATUS) {
                    return Err(corrupt_at(Rid::new(pid, s), "is not a LOB record"));
                }
            }
            let mut freed = false;
            for &s in &slots {
                freed = clear_slot(db, au, &mut g, s)?;
            }
            if !freed {
                kept.push((au, g));
            }
        }
        Ok(())
    })();
    if let Err(e) = done {
        drop(kept);
        drop(stx);
        return Err(e);
    }
    match tag {
        Some(t) => stx.commit_tagged(t)?,
        None => stx.commit()?,
    }
    for (au, g) in &kept {
        db.note_free_space(*au, g.page_id(), g.free_count())?;
    }
    Ok(())
}

/// The undo of [`write`] (`LobRemove`), idempotent: removes the value whose root is at
/// `ptr.root` if that slot still holds a value of this length and checksum; otherwise it
/// is gone already (removed by an earlier application of this undo, whose slots may have
/// been reused since) and nothing happens.
pub(crate) fn undo_write(db: &Database, au: u64, ptr: LobPointer, crc: u32) -> Result<()> {
    {
        let Some(g) = read_if_in_files(db, ptr.root.page_id())? else {
            return Ok(());
        };
        let ours = is_text_page(&g)
            && g.alloc_unit_id() == au
            && g.record(ptr.root.slot).and_then(|r| r.first()) == Some(&BLOB_STATUS);
        if !ours {
            return Ok(());
        }
    }
    // A record of another value now at the root's place fails the walk (lengths) or the
    // checksum: not ours.
    let Ok((rids, _)) = collect(db, ptr) else {
        return Ok(());
    };
    let mut sum = 0u32;
    read_range_with(db, ptr, 0, ptr.total_len, |b| sum = crc32c::crc32c_append(sum, b))?;
    if sum != crc {
        return Ok(());
    }
    free_records(db, &rids, None)
}

fn is_text_page(page: &Page) -> bool {
    matches!(page.page_type(), Some(PageType::TextMix | PageType::TextTree))
}

/// Walks a value's tree, checking it, delivering the bytes in `[lo, hi)` and optionally
/// listing every record (children before their parent).
struct Walker<'a> {
    db: &'a Database,
    /// The unit every page must belong to; set from the root page when not given.
    au: Option<u64>,
    /// Visit every record, not only those overlapping the range, and list them.
    all: bool,
    /// With `all`: every record visited, children before their parent.
    records: Vec<Rid>,
    data_records: u64,
    internal_records: u64,
}

impl<'a> Walker<'a> {
    fn new(db: &'a Database, au: Option<u64>, all: bool) -> Self {
        Walker { db, au, all, records: Vec::new(), data_records: 0, internal_records: 0 }
    }

    /// Walks the subtree at `rid`, which covers `len` bytes, and returns its level.
    fn walk(
        &mut self,
        rid: Rid,
        len: u64,
        level: Option<u8>,
        lo: u64,
        hi: u64,
        out: &mut dyn FnMut(&[u8]),
    ) -> Result<u8> {
        let mut entries: Vec<(u64, Rid)> = Vec::new();
        let node_level = {
            let Some(g) = read_if_in_files(self.db, rid.page_id())? else {
                return Err(corrupt_at(rid, "the page is outside the database files"));
            };
            if !is_text_page(&g) {
                return Err(corrupt_at(rid, format!("page type {} is not a text page", g.page_type_raw())));
            }
            let au = *self.au.get_or_insert(g.alloc_unit_id());
            if g.alloc_unit_id() != au {
                return Err(corrupt_at(
                    rid,
                    format!("page belongs to allocation unit {}, not {au}", g.alloc_unit_id()),
                ));
            }
            let rec = g.record(rid.slot).ok_or_else(|| corrupt_at(rid, "the slot is empty"))?;
            if rec.len() < HEADER_LEN || rec[0] != BLOB_STATUS || rec[3] != 0 {
                return Err(corrupt_at(rid, "not a LOB record"));
            }
            let (kind, lvl) = (rec[1], rec[2]);
            match level {
                Some(l) if l != lvl => {
                    return Err(corrupt_at(rid, format!("level {lvl} where level {l} was expected")))
                }
                None if lvl > MAX_LEVEL => return Err(corrupt_at(rid, format!("root level {lvl} is too deep"))),
                _ => {}
            }
            match (kind, lvl) {
                (KIND_DATA, 0) => {
                    let data = &rec[HEADER_LEN..];
                    if data.len() as u64 != len {
                        return Err(corrupt_at(
                            rid,
                            format!("fragment has {} bytes where {len} were expected", data.len()),
                        ));
                    }
                    if lo < hi {
                        // lo < hi <= len = data.len().
                        out(&data[lo as usize..hi as usize]);
                    }
                }
                (KIND_INTERNAL, 1..) => {
                    let n = usize::from(rd16(rec, HEADER_LEN).unwrap_or(0));
                    if n == 0 || n > NODE_FANOUT || rec.len() != NODE_HEADER_LEN + NODE_ENTRY_LEN * n {
                        return Err(corrupt_at(rid, format!("node of {} bytes with {n} entries", rec.len())));
                    }
                    if rd16(rec, HEADER_LEN + 2) != Some(0) {
                        return Err(corrupt_at(rid, "reserved node bytes are set"));
                    }
                    entries.reserve(n);
                    let mut prev = 0u64;
                    for i in 0..n {
                        let at = NODE_HEADER_LEN + NODE_ENTRY_LEN * i;
                        let end = rd32(rec, at).map(u64::from);
                        let child = rec.get(at + 4..).and_then(Rid::from_bytes);
                        let (Some(end), Some(child)) = (end, child) else {
                            return Err(corrupt_at(rid, "truncated node entry"));
                        };
                        if end <= prev {
                            return Err(corrupt_at(rid, "node entries are not in increasing order"));
                        }
                        entries.push((end, child));
                        prev = end;
                    }
                    if prev != len {
                        return Err(corrupt_at(rid, format!("node covers {prev} bytes where {len} were expected")));
                    }
                }
                _ => return Err(corrupt_at(rid, format!("kind {kind} at level {lvl}"))),
            }
            lvl
        };
        // The latch is released: children are read one at a time.
        let mut start = 0u64;
        for (end, child) in entries {
            let overlaps = lo < end && hi > start && lo < hi;
            if self.all || overlaps {
                let (clo, chi) = if overlaps { (lo.max(start) - start, hi.min(end) - start) } else { (0, 0) };
                self.walk(child, end - start, Some(node_level - 1), clo, chi, out)?;
            }
            start = end;
        }
        if node_level == 0 {
            self.data_records += 1;
        } else {
            self.internal_records += 1;
        }
        if self.all {
            self.records.push(rid);
        }
        Ok(node_level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use crate::file::{FileGrowth, FileSpec};
    use crate::io::MemFs;
    use crate::page::PageOp;
    use std::sync::Arc;

    fn db() -> Arc<Database> {
        let fs = MemFs::new();
        let spec = FileSpec {
            file_id: 1,
            name: "lob".into(),
            path: "/lob/lob.mdf".into(),
            size_pages: 128,
            growth: FileGrowth::Pages(256),
            max_pages: None,
        };
        Database::create(BufferPool::new(1024), &fs, 8, "lob", vec![spec]).unwrap()
    }

    fn value(n: usize, seed: u8) -> Vec<u8> {
        (0..n).map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(seed as u32) as u8).collect()
    }

    #[test]
    fn multi_level_tree_round_trips() {
        // More than NODE_FANOUT fragments forces a level-2 root with TextTree nodes.
        let db = db();
        let au = create_unit(&db, 1, 1).unwrap().id;
        let v = value((NODE_FANOUT + 5) * MAX_FRAGMENT + 17, 3);
        let p = write(&db, au, &v).unwrap();
        let st = check(&db, p).unwrap();
        assert_eq!(st.levels, 3);
        assert_eq!(st.data_records, (NODE_FANOUT + 6) as u64);
        assert_eq!(st.internal_records, 3);
        assert_eq!(read(&db, p).unwrap(), v);
        let off = (NODE_FANOUT * MAX_FRAGMENT - 10) as u64;
        assert_eq!(read_range(&db, p, off, 30).unwrap(), &v[off as usize..off as usize + 30]);
        check_unit(&db, au, [p]).unwrap();
        delete(&db, p).unwrap();
        assert_eq!(db.alloc_unit_pages(au).unwrap().len(), 0);
    }

    #[test]
    fn damaged_trees_are_reported() {
        let db = db();
        let au = create_unit(&db, 1, 1).unwrap().id;
        let v = value(3 * MAX_FRAGMENT, 1);
        let p = write(&db, au, &v).unwrap();
        // Wrong length in the pointer.
        assert!(matches!(read(&db, LobPointer { total_len: 5, ..p }), Err(StorageError::Corrupt { .. })));
        assert!(matches!(delete(&db, LobPointer { total_len: 5, ..p }), Err(StorageError::Corrupt { .. })));
        // A root claiming a level deeper than any tree.
        let mut g = db.write(p.root.page_id()).unwrap();
        let node = g.record(p.root.slot).unwrap().to_vec();
        let mut bad = node.clone();
        bad[2] = 9;
        db.change(&mut g, &PageOp::ReplaceSlot { slot: p.root.slot, record: &bad }).unwrap();
        drop(g);
        assert!(matches!(read(&db, p), Err(StorageError::Corrupt { .. })));
        // Entries out of order.
        let mut bad = node.clone();
        bad[8..12].copy_from_slice(&20_000u32.to_le_bytes());
        let mut g = db.write(p.root.page_id()).unwrap();
        db.change(&mut g, &PageOp::ReplaceSlot { slot: p.root.slot, record: &bad }).unwrap();
        drop(g);
        assert!(matches!(read(&db, p), Err(StorageError::Corrupt { .. })));
        assert!(matches!(check(&db, p), Err(StorageError::Corrupt { .. })));
        // A child entry pointing at the root itself (a cycle): the level check stops it.
        let mut bad = node.clone();
        bad[12..20].copy_from_slice(&p.root.to_bytes());
        let mut g = db.write(p.root.page_id()).unwrap();
        db.change(&mut g, &PageOp::ReplaceSlot { slot: p.root.slot, record: &bad }).unwrap();
        drop(g);
        assert!(matches!(read(&db, p), Err(StorageError::Corrupt { .. })));
        // Restored, all is well again.
        let mut g = db.write(p.root.page_id()).unwrap();
        db.change(&mut g, &PageOp::ReplaceSlot { slot: p.root.slot, record: &node }).unwrap();
        drop(g);
        assert_eq!(read(&db, p).unwrap(), v);
        // An orphan record is found by check_unit.
        let q = write(&db, au, b"orphan").unwrap();
        assert!(matches!(check_unit(&db, au, [p]), Err(StorageError::Corrupt { .. })));
        check_unit(&db, au, [p, q]).unwrap();
    }
}
