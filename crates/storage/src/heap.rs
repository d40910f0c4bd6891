//! Heaps: tables without a clustered index, with rows addressed by RID and forwarded
//! when an update makes them outgrow their page, as SQL Server does.
//!
//! # Pages
//!
//! A heap is one allocation unit of kind `InRowData` with index id 0. Its pages are
//! ordinary slotted pages ([`crate::page`]) of type `Data` (1), level 0, index id 0,
//! carrying the table's object id and the allocation unit id in the header. Heap pages
//! are not linked (prev/next stay NULL): a scan reads them in allocation order
//! ([`Database::alloc_unit_pages`], the IAM order), and free space is found through the
//! PFS role ([`Database::find_page_with_space`], [`Database::note_free_space`]).
//! Slots keep their numbers (a new record goes into an empty slot with `PageOp::PlaceSlot`
//! or after the last one with `InsertSlot` at the end; `ClearSlot` empties a slot and
//! `ReplaceSlot` rewrites one), so a RID `(file:page:slot)` stays valid for the life of
//! the row. Slots of removed rows (ghosts removed, see below) are reused by later inserts.
//!
//! # Records in a heap slot
//!
//! Rows arrive as FixedVar records of type *primary* already encoded by the caller
//! ([`crate::record`]); the heap reads only their status byte and length. A slot holds
//! one of:
//!
//! | Record              | Bytes                                                                     |
//! |---------------------|---------------------------------------------------------------------------|
//! | primary (type 0)    | the row as given, zero-padded to 9 bytes when shorter (see below)          |
//! | forwarding stub (2) | 9 bytes: status `0x04`, RID of the forwarded record                        |
//! | forwarded (1)       | the row with a back pointer appended as its last variable-length entry     |
//! | ghost data (6)      | a deleted row: the primary record with status type 6 at its home slot, or, for a deleted forwarded row, its forwarded record with status type 6 (the home slot keeps the stub) |
//!
//! - **Minimum size.** A primary record shorter than 9 bytes (a forwarding stub's size)
//!   is stored zero-padded to 9 bytes, so the row can always be turned into a stub in
//!   place even on a full page; readers cut the padding off using the record's own
//!   length. SQL Server pads heap rows for the same reason.
//! - **Forwarding.** When an update does not fit on the row's page, the new row is stored
//!   elsewhere as a *forwarded* record and the original slot becomes a *forwarding stub*
//!   pointing at it. The forwarded record is the primary record with status type 1, the
//!   variable-length section present (created with one entry if there was none), every
//!   existing end offset increased by 2 (the new offset entry shifts the data), and one
//!   more *complex* entry at the end: u16 complex id 1024 followed by the 8-byte RID of the
//!   stub. These are exactly the bytes `record::encode_forwarded_record` produces for the
//!   same values; the heap converts without knowing the table's layout.
//! - **One hop.** A stub always points at a forwarded record, never at another stub. When
//!   a forwarded row grows again it is updated in place or moved again and the *original*
//!   stub is re-pointed; when it shrinks enough to fit on its home page it moves back and
//!   the stub disappears. Callers (nonclustered indexes) keep the original RID forever.
//! - Callers always see rows in primary form: [`Heap::get`] and [`Heap::scan`] strip the
//!   back pointer and the padding.
//! - **Ghosts.** A delete turns the row into a ghost (the status type only, with
//!   `ReplaceSlot`) instead of clearing the slot, so no other insert takes the slot while
//!   the deleting transaction may still roll back; readers skip ghosts, updates and
//!   deletes see no row. The undo of a delete turns the ghost live again. A ghost goes
//!   with [`Heap::remove_ghost`] (the transaction layer calls it after the delete
//!   commits, and for the ghost an undone insert leaves) or [`Heap::cleanup_ghosts`] (at
//!   the end of recovery). Pages holding ghosts have the PFS ghost bit (0x08) set, kept
//!   in the same system transaction as the change that adds or removes a ghost.
//!
//! # Row operations and undo
//!
//! Insert, update and delete are row operations (see [`crate::undo`]): one system
//! transaction each, ending with the row's undo record (HeapClear, HeapRevert with the
//! old row, HeapUnghost) while the latches of every page it changed are held. Free-space
//! notes are made after it ends (hints, atomic on their own).
//!
//! # Latching
//!
//! A reader holds one page latch at a time (SH). A change latches EX every page it
//! changes until its system transaction ends: the home page, and for a forwarded row the
//! page of its forwarded record and the page receiving a new copy. Pages that other
//! operations can reach are latched in ascending page order (after a look under an SH
//! latch, and checked again once latched), so operations holding several pages cannot
//! deadlock; a new page for a moved row is allocated while they are held (the allocator
//! latches only system pages and the new page). A reader that follows a stub and finds
//! the target changed re-reads the home slot; readers skip forwarded records met
//! directly, which are returned through their stubs, so a scan returns each row exactly
//! once. Logical consistency between transactions (two updaters of one row) is the lock
//! manager's business, as in SQL Server; the heap only keeps its structure intact.
//!
//! # Freeing pages
//!
//! A page whose last record is removed is reformatted as an unowned page (type 0,
//! allocation unit 0) under its EX latch, then returned with [`Database::free_page`], in
//! the same system transaction. The reformat matters because the free-space cache may
//! still offer the page to a concurrent insert, and a scan may hold it in its page list:
//! both check the header and skip pages that are no longer theirs, instead of writing
//! into a freed page.

use crate::alloc::{AllocUnit, AllocUnitKind};
use crate::buffer::{PageReadGuard, PageWriteGuard};
use crate::database::Database;
use crate::error::{Result, StorageError};
use crate::page::{Page, PageId, PageOp, PageType, MAX_RECORD_ON_PAGE, SLOT_SIZE};
use crate::record::{
    self, RecordType, Rid, COMPLEX_ID_BACK_POINTER, FORWARDING_STUB_LEN, MAX_IN_ROW_RECORD, STATUS_A_NULL_BITMAP,
    STATUS_A_VAR_COLUMNS,
};
use crate::undo::RowUndo;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Status A bits holding the record type (bits 1-3), see [`crate::record`].
const TYPE_MASK: u8 = 0x0E;
/// High bit of a variable-length end offset: the entry is complex.
const COMPLEX_BIT: u16 = 0x8000;
const OFFSET_MASK: u16 = 0x7FFF;
/// Data of the back pointer entry: complex id and the stub's RID.
const BACK_POINTER_DATA_LEN: usize = 2 + Rid::LEN;
/// Smallest record stored in a heap slot: room for a forwarding stub.
const MIN_HEAP_RECORD: usize = FORWARDING_STUB_LEN;
/// How often an operation re-reads a row whose stub target changed under it before
/// calling the stub damaged. Each retry means another thread moved the row meanwhile.
const MAX_CHASE: usize = 64;
/// Candidate pages an insert tries from the free-space cache before allocating a page.
/// The cache may be stale or coarse (PFS keeps fullness in steps), so a candidate can
/// turn out to be too full; a bound keeps inserts from looping on such a page.
const MAX_CANDIDATES: usize = 4;

/// The header an emptied page gets before it is freed (see the module docs).
const UNOWNED: PageOp<'static> =
    PageOp::Format { page_type: PageType::Unformatted, level: 0, index_id: 0, object_id: 0, alloc_unit_id: 0 };

/// What [`Heap::check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeapStats {
    /// Pages of the heap.
    pub pages: u64,
    /// Pages without any record (allowed, but an empty page is normally freed).
    pub empty_pages: u64,
    /// Rows: primary records plus forwarding stubs.
    pub rows: u64,
    /// Forwarded records (sys.dm_db_index_physical_stats forwarded_record_count).
    pub forwarded_records: u64,
    /// Ghosts of deleted rows not yet removed (ghost_record_count), a deleted forwarded
    /// row counting once (its forwarded record).
    pub ghost_records: u64,
    /// Bytes of records on the pages, stubs and padding included.
    pub record_bytes: u64,
    /// Free bytes on the pages.
    pub free_bytes: u64,
}

/// A heap: the rows of a table without a clustered index.
pub struct Heap {
    db: Arc<Database>,
    au: AllocUnit,
}

fn corrupt(what: impl Into<String>, detail: impl Into<String>) -> StorageError {
    StorageError::corrupt(what, detail)
}

fn rec_err(at: Rid, e: record::RecordError) -> StorageError {
    corrupt(format!("heap record {at}"), e.to_string())
}

fn type_of(rec: &[u8], at: Rid) -> Result<RecordType> {
    record::record_type(rec).map_err(|e| rec_err(at, e))
}

fn stub_target(rec: &[u8], at: Rid) -> Result<Rid> {
    record::decode_forwarding_stub(rec).map_err(|e| rec_err(at, e))
}

/// The row as callers see it: padding removed.
fn logical(stored: &[u8], at: Rid) -> Result<&[u8]> {
    if stored.len() > MIN_HEAP_RECORD {
        return Ok(stored);
    }
    let n = record::record_length(stored).map_err(|e| rec_err(at, e))?;
    // record_length never returns more than it was given.
    stored.get(..n).ok_or_else(|| corrupt(format!("heap record {at}"), "bad length"))
}

/// The row as stored in its home slot: padded to the stub size when shorter.
fn padded(record: &[u8]) -> Cow<'_, [u8]> {
    if record.len() >= MIN_HEAP_RECORD {
        Cow::Borrowed(record)
    } else {
        let mut v = record.to_vec();
        v.resize(MIN_HEAP_RECORD, 0);
        Cow::Owned(v)
    }
}

/// Checks that `record` is one whole primary record a heap can store.
fn check_row(record: &[u8]) -> Result<()> {
    let rtype = record::record_type(record).map_err(|e| StorageError::Invalid(format!("not a valid heap row: {e}")))?;
    if rtype != RecordType::Primary {
        return Err(StorageError::Invalid(format!("a heap row must be a primary record, not a {rtype:?} record")));
    }
    let len = record::record_length(record).map_err(|e| StorageError::Invalid(format!("not a valid heap row: {e}")))?;
    if len != record.len() {
        return Err(StorageError::Invalid(format!(
            "the record is {len} bytes long but {} bytes were given",
            record.len()
        )));
    }
    if len > MAX_IN_ROW_RECORD {
        return Err(StorageError::Invalid(format!(
            "Cannot create a row of size {len} which is greater than the allowable maximum row size of {MAX_IN_ROW_RECORD}."
        )));
    }
    Ok(())
}

fn rd16(b: &[u8], at: usize) -> Option<u16> {
    let s: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_le_bytes(s))
}

/// Where a record's variable-length section starts (`pos`, the offset of its entry
/// count) and how many entries it has (`None`: no section). Reads only the structure
/// every FixedVar record shares, so no layout is needed.
fn var_section(rec: &[u8]) -> std::result::Result<(usize, Option<usize>), &'static str> {
    let status = *rec.first().ok_or("empty record")?;
    let fixed_end = usize::from(rd16(rec, 2).ok_or("truncated header")?);
    let n = usize::from(rd16(rec, fixed_end).ok_or("column count past the end")?);
    let mut pos = fixed_end + 2;
    if status & STATUS_A_NULL_BITMAP != 0 {
        pos += n.div_ceil(8);
    }
    if pos > rec.len() {
        return Err("null bitmap past the end");
    }
    if status & STATUS_A_VAR_COLUMNS == 0 {
        return Ok((pos, None));
    }
    let c = usize::from(rd16(rec, pos).ok_or("truncated variable-length count")?);
    if c == 0 {
        return Err("variable-length section with no entries");
    }
    if pos + 2 + 2 * c > rec.len() {
        return Err("variable-length offsets past the end");
    }
    Ok((pos, Some(c)))
}

/// Re-encodes the primary record `rec` (exact length, unpadded) as a forwarded record
/// whose back pointer is `stub`, into `out`.
fn to_forwarded(rec: &[u8], stub: Rid, out: &mut Vec<u8>) -> Result<()> {
    let bad = |d: &str| StorageError::Invalid(format!("cannot forward the row: {d}"));
    let (pos, c) = var_section(rec).map_err(bad)?;
    let status = (rec[0] & !TYPE_MASK) | (RecordType::Forwarded.code() << 1) | STATUS_A_VAR_COLUMNS;
    out.clear();
    out.extend_from_slice(&rec[..pos]);
    out[0] = status;
    let c = c.unwrap_or(0);
    let data_start = pos + if c == 0 { 0 } else { 2 + 2 * c };
    if c == 0 && rec.len() != pos {
        return Err(bad("bytes after the end of the record"));
    }
    out.extend_from_slice(&(c as u16 + 1).to_le_bytes());
    for i in 0..c {
        let e = rd16(rec, pos + 2 + 2 * i).ok_or_else(|| bad("truncated offsets"))?;
        // Existing data moves 2 bytes further for the added offset entry. A record
        // that had no section gains the count too, but then it has no entries to move.
        let v = (e & OFFSET_MASK) + 2;
        if v > OFFSET_MASK {
            return Err(bad("offset out of range"));
        }
        out.extend_from_slice(&(v | (e & COMPLEX_BIT)).to_le_bytes());
    }
    let new_len = out.len() + 2 + (rec.len() - data_start) + BACK_POINTER_DATA_LEN;
    out.extend_from_slice(&(new_len as u16 | COMPLEX_BIT).to_le_bytes());
    out.extend_from_slice(&rec[data_start..]);
    out.extend_from_slice(&COMPLEX_ID_BACK_POINTER.to_le_bytes());
    out.extend_from_slice(&stub.to_bytes());
    debug_assert_eq!(out.len(), new_len);
    Ok(())
}

/// Parses a forwarded record's back pointer: returns (section pos, entry count, start of
/// the back pointer entry, the stub RID). With `ghost`, a deleted forwarded record (status
/// type ghost data, otherwise the same bytes) is accepted too.
fn parse_forwarded(fwd: &[u8], ghost: bool) -> std::result::Result<(usize, usize, usize, Rid), &'static str> {
    match record::record_type(fwd) {
        Ok(RecordType::Forwarded) => {}
        Ok(RecordType::GhostData) if ghost => {}
        _ => return Err("not a forwarded record"),
    }
    let (pos, c) = var_section(fwd)?;
    let c = c.ok_or("forwarded record without a variable-length section")?;
    let last = rd16(fwd, pos + 2 * c).ok_or("truncated offsets")?;
    if last & COMPLEX_BIT == 0 {
        return Err("last entry of a forwarded record is not complex");
    }
    if usize::from(last & OFFSET_MASK) != fwd.len() {
        return Err("forwarded record length does not match its last offset");
    }
    let data_start = pos + 2 + 2 * c;
    let start = if c == 1 {
        data_start
    } else {
        usize::from(rd16(fwd, pos + 2 * (c - 1)).ok_or("truncated offsets")? & OFFSET_MASK)
    };
    if start < data_start || fwd.len().checked_sub(start) != Some(BACK_POINTER_DATA_LEN) {
        return Err("back pointer entry has the wrong size");
    }
    if rd16(fwd, start) != Some(COMPLEX_ID_BACK_POINTER) {
        return Err("last entry is not a back pointer");
    }
    let rid = fwd.get(start + 2..).and_then(Rid::from_bytes).ok_or("truncated back pointer")?;
    Ok((pos, c, start, rid))
}

/// Re-encodes a forwarded record as the primary record it came from, into `out`;
/// returns its back pointer.
fn to_primary(fwd: &[u8], at: Rid, out: &mut Vec<u8>) -> Result<Rid> {
    let bad = |d: &'static str| corrupt(format!("forwarded record {at}"), d);
    let (pos, c, start, rid) = parse_forwarded(fwd, false).map_err(bad)?;
    out.clear();
    out.extend_from_slice(&fwd[..pos]);
    out[0] &= !TYPE_MASK; // type 0, primary
    if c == 1 {
        out[0] &= !STATUS_A_VAR_COLUMNS;
        return Ok(rid);
    }
    out.extend_from_slice(&(c as u16 - 1).to_le_bytes());
    for i in 0..c - 1 {
        let e = rd16(fwd, pos + 2 + 2 * i).ok_or_else(|| bad("truncated offsets"))?;
        let v = (e & OFFSET_MASK).checked_sub(2).ok_or_else(|| bad("offset out of range"))?;
        out.extend_from_slice(&(v | (e & COMPLEX_BIT)).to_le_bytes());
    }
    out.extend_from_slice(&fwd[pos + 2 + 2 * c..start]);
    Ok(rid)
}

/// How a record is placed by [`place_record`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placement {
    pub page_type: PageType,
    /// Look for an existing page with room first (the PFS role); otherwise always
    /// allocate a new page (a record that needs most of a page).
    pub search: bool,
    /// A new page is allocated without being offered to free-space searches: its writer
    /// may release it before its system transaction ends (LOB fragments), and nobody else
    /// may change it until then. Its owner notes its free space (or not) afterwards.
    pub private: bool,
    /// Allocation hint.
    pub near: Option<PageId>,
}

/// Whose page a latched page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// It carries this allocation unit's id.
    Unit,
    /// An emptied page being freed, or a never-formatted one.
    Unowned,
    /// Another allocation unit's.
    Other,
}

pub(crate) fn owner(page: &Page, au: u64) -> Owner {
    if page.page_type() == Some(PageType::Unformatted) || page.alloc_unit_id() == 0 {
        Owner::Unowned
    } else if page.alloc_unit_id() == au {
        Owner::Unit
    } else {
        Owner::Other
    }
}

/// Stores `record` in a page of `au` with room (or a new page) and returns its RID with
/// the page still latched EX. Used by heaps (data pages) and LOB storage (text pages),
/// inside the caller's system transaction: the caller ends it while holding the returned
/// latch, then notes the page's free space. Holds one latch at a time until then.
pub(crate) fn place_record<'d>(
    db: &'d Database,
    au: &AllocUnit,
    how: Placement,
    record: &[u8],
) -> Result<(Rid, PageWriteGuard<'d>)> {
    if record.is_empty() || record.len() > MAX_RECORD_ON_PAGE {
        return Err(StorageError::Invalid(format!("a record of {} bytes cannot be stored on a page", record.len())));
    }
    if how.search {
        let needed = record.len() + SLOT_SIZE;
        for _ in 0..MAX_CANDIDATES {
            let Some(pid) = db.find_page_with_space(au.id, needed)? else {
                break;
            };
            let mut g = db.write(pid)?;
            if !usable_page(db, au.id, how.page_type, &g)? {
                continue;
            }
            if let Some(slot) = try_place(db, &mut g, record)? {
                return Ok((Rid::new(pid, slot), g));
            }
            // The hint was stale: correct it (a hint, so only while we know the truth).
            db.note_free_space(au.id, pid, g.free_count())?;
        }
    }
    let mut g =
        if how.private { db.allocate_private_page(au.id, how.near)? } else { db.allocate_page(au.id, how.near)? };
    let pid = g.page_id();
    let format = PageOp::Format {
        page_type: how.page_type,
        level: 0,
        index_id: au.index_id,
        object_id: au.object_id,
        alloc_unit_id: au.id,
    };
    let placed = db.change(&mut g, &format).and_then(|()| try_place(db, &mut g, record));
    match placed {
        Ok(Some(slot)) => Ok((Rid::new(pid, slot), g)),
        other => {
            // Give the page back rather than leak it (with a log hook the caller's
            // rollback undoes all of this too). Its header is not ours yet (or is reset
            // now), so concurrent inserts skip it.
            let _ = db.change(&mut g, &UNOWNED);
            drop(g);
            let _ = db.free_page(au.id, pid);
            match other {
                Err(e) => Err(e),
                _ => Err(corrupt(format!("page ({pid})"), "a freshly formatted page has no room for a record")),
            }
        }
    }
}

/// Whether a page the free-space hints offered is one to place a record of `page_type`
/// on (EX latched). Corrects the hints for pages that are not.
fn usable_page(db: &Database, au: u64, page_type: PageType, g: &PageWriteGuard<'_>) -> Result<bool> {
    let pid = g.page_id();
    match owner(g, au) {
        Owner::Unit if g.page_type() == Some(page_type) => Ok(true),
        Owner::Unit => {
            // A page of the unit that is not for sharing (a LOB tree node the
            // allocator's hints still call empty), or damage DBCC will report. Stop the
            // hints from offering it (only a hint: if the page was freed meanwhile the
            // note fails and that is fine).
            let _ = db.note_free_space(au, pid, 0);
            Ok(false)
        }
        // Freed after the hints offered it: the free removed it from them.
        Owner::Unowned => Ok(false),
        Owner::Other => Ok(false),
    }
}

/// Places `record` on the latched page: in an empty slot when there is one (slot numbers
/// of removed rows are reused, as SQL Server does), else in a new slot. `None`: no room.
pub(crate) fn try_place(db: &Database, g: &mut PageWriteGuard<'_>, record: &[u8]) -> Result<Option<u16>> {
    let free = g.free_count();
    let n = g.slot_count();
    if free >= record.len() {
        if let Some(slot) = (0..n).find(|&s| g.record(s).is_none()) {
            db.change(g, &PageOp::PlaceSlot { slot, record })?;
            return Ok(Some(slot));
        }
    }
    if free >= record.len() + SLOT_SIZE && n < u16::MAX {
        // Appending is done with InsertSlot at the end (which moves no other slot, so
        // it is the same change as a PlaceSlot there).
        db.change(g, &PageOp::InsertSlot { slot: n, record })?;
        return Ok(Some(n));
    }
    Ok(None)
}

/// Empties `slot` of the latched page, and frees the page if that leaves it empty
/// (reformatted as unowned first, see the module docs; the latch is kept, the caller's
/// system transaction still has to end). Returns whether the page was freed.
pub(crate) fn clear_slot(db: &Database, au: u64, g: &mut PageWriteGuard<'_>, slot: u16) -> Result<bool> {
    db.change(g, &PageOp::ClearSlot { slot })?;
    if g.slot_count() == 0 {
        // ClearSlot trims trailing empty slots, so no slots means no records.
        db.change(g, &UNOWNED)?;
        // The allocator does not latch the page it frees: keeping our latch is fine.
        db.free_page(au, g.page_id())?;
        return Ok(true);
    }
    Ok(false)
}

/// Whether `pid` lies inside the database's data files.
fn in_files(db: &Database, pid: PageId) -> bool {
    db.files().get(pid.file_id).map(|f| pid.page_no < f.size_pages()).unwrap_or(false)
}

/// Latches `pid` SH; `None` when the page lies outside the data files: a RID that cannot
/// be a row, or a damaged pointer (the caller says which). Checked only when the read
/// fails, so the common path costs nothing.
pub(crate) fn read_if_in_files(db: &Database, pid: PageId) -> Result<Option<PageReadGuard<'_>>> {
    match db.read(pid) {
        Ok(g) => Ok(Some(g)),
        Err(_) if !in_files(db, pid) => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`read_if_in_files`] with an EX latch.
pub(crate) fn write_if_in_files(db: &Database, pid: PageId) -> Result<Option<PageWriteGuard<'_>>> {
    match db.write(pid) {
        Ok(g) => Ok(Some(g)),
        Err(_) if !in_files(db, pid) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Pages latched EX together, taken in ascending page order so that operations holding
/// several pages cannot deadlock with each other.
struct Latched<'d> {
    pages: Vec<PageWriteGuard<'d>>,
}

impl<'d> Latched<'d> {
    /// Latches the distinct pages of `ids`; `None` if one lies outside the data files.
    fn take(db: &'d Database, ids: &[PageId]) -> Result<Option<Latched<'d>>> {
        let mut sorted: Vec<PageId> = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut pages = Vec::with_capacity(sorted.len());
        for id in sorted {
            match write_if_in_files(db, id)? {
                Some(g) => pages.push(g),
                None => return Ok(None),
            }
        }
        Ok(Some(Latched { pages }))
    }

    fn get(&mut self, id: PageId) -> Result<&mut PageWriteGuard<'d>> {
        self.pages
            .iter_mut()
            .find(|g| g.page_id() == id)
            .ok_or_else(|| StorageError::Invalid(format!("page ({id}) is not latched")))
    }
}

/// Runs `f`, the page changes of one operation on latched pages, as a system transaction
/// ended while `held` is still latched, and returns `f`'s result with the pages. On
/// failure the latches are released before the rollback (which latches pages itself).
fn in_txn<H, R>(db: &Database, mut held: H, f: impl FnOnce(&mut H) -> Result<R>) -> Result<(R, H)> {
    let stx = db.begin_system_txn()?;
    match f(&mut held) {
        Ok(v) => {
            stx.commit()?;
            Ok((v, held))
        }
        Err(e) => {
            drop(held);
            drop(stx);
            Err(e)
        }
    }
}

/// A forwarded record turned ghost (the delete of a forwarded row): same bytes, status
/// type ghost data. Found only through its stub.
fn ghost_of_forwarded(rec: &[u8]) -> Vec<u8> {
    let mut v = rec.to_vec();
    if let Some(s) = v.first_mut() {
        *s = (*s & !TYPE_MASK) | (RecordType::GhostData.code() << 1);
    }
    v
}

fn unghost_forwarded(rec: &[u8]) -> Vec<u8> {
    let mut v = rec.to_vec();
    if let Some(s) = v.first_mut() {
        *s = (*s & !TYPE_MASK) | (RecordType::Forwarded.code() << 1);
    }
    v
}

/// What a home slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Home {
    /// No row: empty slot, a page that is not this heap's, a forwarded record (no row's
    /// RID), or outside the files.
    Nothing,
    Primary,
    Ghost,
    Stub(Rid),
}

/// What the slot a stub points at holds, for the stub's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The row's forwarded record, this long.
    Live(usize),
    /// The row's forwarded record, deleted (ghost).
    Ghost,
    /// Something else: the row moved meanwhile, or damage.
    Other,
}

impl Heap {
    /// Creates an empty heap for table `object_id`: a new `InRowData` allocation unit
    /// with index id 0. It owns no page until the first insert.
    pub fn create(db: &Arc<Database>, object_id: u32) -> Result<Heap> {
        let au = db.create_alloc_unit(AllocUnitKind::InRowData, object_id, 0)?;
        Ok(Heap { db: Arc::clone(db), au })
    }

    /// Opens the heap stored in allocation unit `au_id`.
    pub fn open(db: &Arc<Database>, au_id: u64) -> Result<Heap> {
        let au = db.alloc_unit(au_id)?;
        if au.kind != AllocUnitKind::InRowData || au.index_id != 0 {
            return Err(StorageError::Invalid(format!(
                "allocation unit {au_id} is not a heap (kind {:?}, index id {})",
                au.kind, au.index_id
            )));
        }
        Ok(Heap { db: Arc::clone(db), au })
    }

    pub fn alloc_unit(&self) -> &AllocUnit {
        &self.au
    }

    pub fn au_id(&self) -> u64 {
        self.au.id
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    /// Pages currently allocated to the heap.
    pub fn page_count(&self) -> Result<usize> {
        Ok(self.db.alloc_unit_pages(self.au.id)?.len())
    }

    /// Inserts a row (one primary FixedVar record of at most 8060 bytes) and returns its
    /// RID, which stays valid until the row is deleted. A row operation (undo: HeapClear).
    pub fn insert(&self, record: &[u8]) -> Result<Rid> {
        check_row(record)?;
        let rec = padded(record);
        let stx = self.db.begin_system_txn()?;
        let (rid, g) = place_record(&self.db, &self.au, self.data_placement(None), &rec)?;
        if let Err(e) = self.db.log_row_undo(&RowUndo::HeapClear { au: self.au.id, rid }) {
            drop(g);
            drop(stx);
            return Err(e);
        }
        stx.commit()?;
        self.note(&g)?;
        Ok(rid)
    }

    /// The row at `rid`, or `None` when there is none (empty slot, a ghost, a page that
    /// is not this heap's, or the location of a forwarded record, which is no row's RID).
    pub fn get(&self, rid: Rid) -> Result<Option<Vec<u8>>> {
        let mut scratch = Vec::new();
        self.visit_row(rid, &mut scratch, |r| r.to_vec())
    }

    /// Calls `f` with the row at `rid` without copying it out of the page when it is
    /// not forwarded. `f` runs under the page's SH latch and must not call into the heap.
    pub fn with_row<R>(&self, rid: Rid, f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        let mut scratch = Vec::new();
        self.visit_row(rid, &mut scratch, f)
    }

    /// Replaces the row at `rid`. Returns false when there is no row there. The row moves
    /// (forwarding) when it no longer fits on its page; its RID does not change. A row
    /// operation (undo: HeapRevert with the old row); a move latches the home page, the
    /// old and the new forwarded record's pages until it ends.
    pub fn update(&self, rid: Rid, record: &[u8]) -> Result<bool> {
        check_row(record)?;
        let home_rec = padded(record);
        let mut fwd = Vec::new();
        for _ in 0..MAX_CHASE {
            let step = match self.home(rid)? {
                Home::Nothing | Home::Ghost => return Ok(false),
                Home::Primary => self.update_primary(rid, record, &home_rec, &mut fwd)?,
                Home::Stub(target) => self.update_forwarded(rid, target, record, &home_rec, &mut fwd)?,
            };
            if let Some(done) = step {
                return Ok(done);
            }
        }
        Err(corrupt(format!("heap row {rid}"), "the row kept moving while it was being updated"))
    }

    /// Deletes the row at `rid`: it becomes a ghost (its forwarded record, for a
    /// forwarded row), which keeps its slot until [`Heap::remove_ghost`]. Returns false
    /// when there is no row there. A row operation (undo: HeapUnghost).
    pub fn delete(&self, rid: Rid) -> Result<bool> {
        self.ghost_row(rid, true)
    }

    /// Removes the ghost of a deleted row (after the deleting transaction committed, or
    /// of a row whose insert was rolled back): clears its slot (and its forwarded
    /// record's) and frees pages left empty. Its own system transaction, no row undo.
    /// Returns false when `rid` holds no ghost.
    pub fn remove_ghost(&self, rid: Rid) -> Result<bool> {
        for _ in 0..MAX_CHASE {
            let (ids, target) = match self.home(rid)? {
                Home::Ghost => (vec![rid.page_id()], None),
                Home::Stub(t) => (vec![rid.page_id(), t.page_id()], Some(t)),
                Home::Nothing | Home::Primary => return Ok(false),
            };
            let Some(mut l) = Latched::take(&self.db, &ids)? else {
                return Ok(false);
            };
            // Re-check under the latches.
            let now = self.home_of(l.get(rid.page_id())?, rid)?;
            match (now, target) {
                (Home::Ghost, None) => {}
                (Home::Stub(t), Some(t0)) if t == t0 => {
                    if self.target_of(l.get(t.page_id())?, t, rid)? != Target::Ghost {
                        return Ok(false);
                    }
                }
                _ => continue,
            }
            let au = self.au.id;
            let (freed, l) = in_txn(&self.db, l, |l| {
                let mut freed = Vec::new();
                if let Some(t) = target {
                    let g = l.get(t.page_id())?;
                    if clear_slot(&self.db, au, g, t.slot)? {
                        freed.push(t.page_id());
                    } else {
                        self.note_ghost_bit(g)?;
                    }
                }
                let g = l.get(rid.page_id())?;
                if g.page_type() != Some(PageType::Unformatted) {
                    if clear_slot(&self.db, au, g, rid.slot)? {
                        freed.push(rid.page_id());
                    } else {
                        self.note_ghost_bit(g)?;
                    }
                }
                Ok(freed)
            })?;
            for g in &l.pages {
                if !freed.contains(&g.page_id()) {
                    self.note(g)?;
                }
            }
            return Ok(true);
        }
        Err(corrupt(format!("heap row {rid}"), "the row kept moving while its ghost was being removed"))
    }

    /// Removes every ghost of the heap (at the end of recovery, when no transaction that
    /// deleted rows is left). Visits the pages whose PFS byte has the ghost bit. Returns
    /// the number of ghosts removed.
    pub fn cleanup_ghosts(&self) -> Result<u64> {
        let mut removed = 0;
        for pid in self.db.pages_with_ghosts(self.au.id)? {
            // The RIDs of the rows whose ghosts are on this page: the slot itself for a
            // ghost row, the back pointer for a ghost forwarded record.
            let mut rids = Vec::new();
            {
                let Some(g) = read_if_in_files(&self.db, pid)? else {
                    continue;
                };
                if !self.is_heap_page(&g, pid)? {
                    continue;
                }
                for (slot, rec) in g.records() {
                    let at = Rid::new(pid, slot);
                    if type_of(rec, at)? != RecordType::GhostData {
                        continue;
                    }
                    rids.push(match parse_forwarded(rec, true) {
                        Ok((_, _, _, back)) => back,
                        Err(_) => at,
                    });
                }
            }
            for rid in rids {
                if self.remove_ghost(rid)? {
                    removed += 1;
                }
            }
            // A bit left over (say by a crash between a ghost's removal and the note).
            if let Some(g) = write_if_in_files(&self.db, pid)? {
                if self.is_heap_page(&g, pid)? {
                    self.note_ghost_bit(&g)?;
                }
            }
        }
        Ok(removed)
    }

    /// Calls `f(rid, row)` for every row, in allocation order, until it returns false.
    /// Returns whether the scan ran to the end. Rows are read page by page under the
    /// page's SH latch without copying (a forwarded row is converted into a buffer
    /// reused for the whole scan); each row is returned once, through its original RID.
    /// Ghosts are skipped. `f` must not call into the heap.
    pub fn scan(&self, mut f: impl FnMut(Rid, &[u8]) -> bool) -> Result<bool> {
        let pages = self.db.alloc_unit_pages(self.au.id)?;
        let mut stubs: Vec<u16> = Vec::new();
        let mut scratch = Vec::new();
        for pid in pages {
            stubs.clear();
            {
                let g = self.db.read(pid)?;
                // A page freed or reused since the list was taken is skipped.
                if !self.is_heap_page(&g, pid)? {
                    continue;
                }
                for slot in 0..g.slot_count() {
                    let Some(rec) = g.record(slot) else {
                        continue;
                    };
                    let rid = Rid::new(pid, slot);
                    match type_of(rec, rid)? {
                        RecordType::Primary => {
                            if !f(rid, logical(rec, rid)?) {
                                return Ok(false);
                            }
                        }
                        // Followed after the latch is released (one latch at a time).
                        RecordType::ForwardingStub => stubs.push(slot),
                        // Returned through its stub; ghosts are deleted rows.
                        RecordType::Forwarded | RecordType::GhostData => {}
                        t => return Err(self.unexpected(rid, t)),
                    }
                }
            }
            for &slot in &stubs {
                let rid = Rid::new(pid, slot);
                if self.visit_row(rid, &mut scratch, |r| f(rid, r))? == Some(false) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Number of forwarded records (sys.dm_db_index_physical_stats forwarded_record_count).
    pub fn forwarded_count(&self) -> Result<u64> {
        let mut n = 0;
        for pid in self.db.alloc_unit_pages(self.au.id)? {
            let g = self.db.read(pid)?;
            if !self.is_heap_page(&g, pid)? {
                continue;
            }
            for (slot, rec) in g.records() {
                if type_of(rec, Rid::new(pid, slot))? == RecordType::Forwarded {
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// Checks the whole heap (run it while nothing changes the heap): page headers and
    /// structure, every record's type and length, every stub pointing at a forwarded
    /// record (live or ghost) whose back pointer points back, and no forwarded record
    /// without its stub.
    pub fn check(&self) -> Result<HeapStats> {
        let au = self.au.id;
        let what = || format!("heap (allocation unit {au}, object {})", self.au.object_id);
        let mut stats = HeapStats::default();
        // forwarded record location -> stub location, from both ends.
        let mut stubs: HashMap<Rid, Rid> = HashMap::new();
        let mut forwarded: HashMap<Rid, (Rid, bool)> = HashMap::new();
        let pages = self.db.alloc_unit_pages(au)?;
        let page_set: HashSet<PageId> = pages.iter().copied().collect();
        if page_set.len() != pages.len() {
            return Err(corrupt(what(), "a page is listed twice in the allocation unit"));
        }
        let mut scratch = Vec::new();
        for &pid in &pages {
            let g = self.db.read(pid)?;
            let bad = |d: String| corrupt(what(), format!("page ({pid}): {d}"));
            if g.alloc_unit_id() != au {
                return Err(bad(format!("header names allocation unit {}", g.alloc_unit_id())));
            }
            if g.page_type() != Some(PageType::Data) {
                return Err(bad(format!("page type {} is not a data page", g.page_type_raw())));
            }
            if g.index_id() != 0 || g.level() != 0 || g.object_id() != self.au.object_id {
                return Err(bad(format!(
                    "header says object {} index {} level {}",
                    g.object_id(),
                    g.index_id(),
                    g.level()
                )));
            }
            g.check_structure().map_err(|e| bad(e.to_string()))?;
            stats.pages += 1;
            stats.free_bytes += g.free_count() as u64;
            let mut any = false;
            for (slot, rec) in g.records() {
                any = true;
                let rid = Rid::new(pid, slot);
                stats.record_bytes += rec.len() as u64;
                match type_of(rec, rid)? {
                    t @ (RecordType::Primary | RecordType::GhostData) => {
                        if t == RecordType::GhostData {
                            // A deleted forwarded record keeps its layout.
                            if let Ok((_, _, _, back)) = parse_forwarded(rec, true) {
                                forwarded.insert(rid, (back, true));
                                stats.ghost_records += 1;
                                continue;
                            }
                        }
                        let n = record::record_length(rec).map_err(|e| rec_err(rid, e))?;
                        if rec.len() < MIN_HEAP_RECORD || (n != rec.len() && rec.len() != MIN_HEAP_RECORD) {
                            return Err(bad(format!("row {rid} is {} bytes, its record says {n}", rec.len())));
                        }
                        if t == RecordType::Primary {
                            stats.rows += 1;
                        } else {
                            stats.ghost_records += 1;
                        }
                    }
                    RecordType::ForwardingStub => {
                        let target = stub_target(rec, rid)?;
                        if !page_set.contains(&target.page_id()) {
                            return Err(bad(format!("stub {rid} points at {target}, outside the heap")));
                        }
                        if let Some(other) = stubs.insert(target, rid) {
                            return Err(bad(format!("stubs {other} and {rid} both point at {target}")));
                        }
                    }
                    RecordType::Forwarded => {
                        let back = to_primary(rec, rid, &mut scratch)?;
                        record::record_length(&scratch).map_err(|e| rec_err(rid, e))?;
                        forwarded.insert(rid, (back, false));
                        stats.forwarded_records += 1;
                    }
                    t => return Err(self.unexpected(rid, t)),
                }
            }
            if !any {
                stats.empty_pages += 1;
            }
        }
        for (target, stub) in &stubs {
            match forwarded.get(target) {
                Some((back, ghost)) if back == stub => {
                    if !ghost {
                        stats.rows += 1;
                    }
                }
                Some((back, _)) => {
                    return Err(corrupt(
                        what(),
                        format!("stub {stub} points at {target}, whose back pointer is {back}"),
                    ))
                }
                None => {
                    return Err(corrupt(
                        what(),
                        format!("stub {stub} points at {target}, which is not a forwarded record"),
                    ))
                }
            }
        }
        for (fwd, (back, _)) in &forwarded {
            if stubs.get(fwd) != Some(back) {
                return Err(corrupt(
                    what(),
                    format!("forwarded record {fwd} has no stub pointing at it (back pointer {back})"),
                ));
            }
        }
        Ok(stats)
    }

    // ---- logical undo (crate::undo), idempotent ----

    /// Undo of an insert: the row at `rid` is a ghost (or gone) afterwards.
    pub(crate) fn undo_insert(&self, rid: Rid) -> Result<()> {
        self.ghost_row(rid, false).map(drop)
    }

    /// Undo of a delete: the ghost at `rid` is a live row again (nothing if it is live).
    pub(crate) fn undo_delete(&self, rid: Rid) -> Result<()> {
        for _ in 0..MAX_CHASE {
            let (ids, target) = match self.home(rid)? {
                Home::Primary => return Ok(()),
                Home::Ghost => (vec![rid.page_id()], None),
                Home::Stub(t) => (vec![rid.page_id(), t.page_id()], Some(t)),
                Home::Nothing => {
                    return Err(corrupt(
                        format!("heap row {rid}"),
                        "the deleted row to restore has no ghost (was its ghost removed before the rollback?)",
                    ))
                }
            };
            let Some(mut l) = Latched::take(&self.db, &ids)? else {
                return Err(self.dangling(rid, target.unwrap_or(rid)));
            };
            let now = self.home_of(l.get(rid.page_id())?, rid)?;
            let (page, slot, rec) = match (now, target) {
                (Home::Ghost, None) => {
                    let g = l.get(rid.page_id())?;
                    let mut rec = g.record(rid.slot).unwrap_or_default().to_vec();
                    record::clear_ghost(&mut rec).map_err(|e| rec_err(rid, e))?;
                    (rid.page_id(), rid.slot, rec)
                }
                (Home::Stub(t), Some(t0)) if t == t0 => {
                    let g = l.get(t.page_id())?;
                    match self.target_of(g, t, rid)? {
                        Target::Live(_) => return Ok(()),
                        Target::Ghost => (t.page_id(), t.slot, unghost_forwarded(g.record(t.slot).unwrap_or_default())),
                        Target::Other => continue,
                    }
                }
                _ => continue,
            };
            in_txn(&self.db, l, |l| {
                let g = l.get(page)?;
                self.db.change(g, &PageOp::ReplaceSlot { slot, record: &rec })?;
                self.note_ghost_bit(g)
            })?;
            return Ok(());
        }
        Err(corrupt(format!("heap row {rid}"), "the row kept moving while it was being restored"))
    }

    /// Undo of an update: the row at `rid` is `old` afterwards.
    pub(crate) fn undo_update(&self, rid: Rid, old: &[u8]) -> Result<()> {
        if self.update(rid, old)? {
            Ok(())
        } else {
            Err(corrupt(format!("heap row {rid}"), "the updated row to restore is missing"))
        }
    }

    // ---- internals ----

    fn data_placement(&self, near: Option<PageId>) -> Placement {
        Placement { page_type: PageType::Data, search: true, private: false, near }
    }

    fn note(&self, page: &Page) -> Result<()> {
        self.db.note_free_space(self.au.id, page.page_id(), page.free_count())
    }

    /// Sets or clears the page's PFS ghost bit from what the latched page holds.
    fn note_ghost_bit(&self, page: &Page) -> Result<()> {
        if page.page_type() != Some(PageType::Data) {
            return Ok(());
        }
        let has = page.records().any(|(_, r)| record::record_type(r) == Ok(RecordType::GhostData));
        self.db.note_ghosts(page.page_id(), has)
    }

    /// Whether the latched page is one of this heap's data pages. A page of another unit
    /// or an unowned one is not (freed or reused meanwhile, or a RID that was never
    /// ours); a page with our unit id but the wrong type is damage.
    fn is_heap_page(&self, page: &Page, pid: PageId) -> Result<bool> {
        match owner(page, self.au.id) {
            Owner::Unit if page.page_type() == Some(PageType::Data) => Ok(true),
            Owner::Unit => Err(corrupt(
                format!("page ({pid})"),
                format!("page of heap allocation unit {} has type {}", self.au.id, page.page_type_raw()),
            )),
            Owner::Unowned | Owner::Other => Ok(false),
        }
    }

    /// What the home slot of `rid` holds (a quick look under an SH latch).
    fn home(&self, rid: Rid) -> Result<Home> {
        let Some(g) = read_if_in_files(&self.db, rid.page_id())? else {
            return Ok(Home::Nothing);
        };
        self.home_of(&g, rid)
    }

    fn home_of(&self, page: &Page, rid: Rid) -> Result<Home> {
        if !self.is_heap_page(page, rid.page_id())? {
            return Ok(Home::Nothing);
        }
        let Some(rec) = page.record(rid.slot) else {
            return Ok(Home::Nothing);
        };
        Ok(match type_of(rec, rid)? {
            RecordType::Primary => Home::Primary,
            RecordType::ForwardingStub => Home::Stub(stub_target(rec, rid)?),
            // A ghost at a home slot is a deleted row (a deleted forwarded record is
            // found only through its stub; as a "RID" it is no row, as a forwarded one).
            RecordType::GhostData if parse_forwarded(rec, true).is_err() => Home::Ghost,
            RecordType::GhostData | RecordType::Forwarded => Home::Nothing,
            t => return Err(self.unexpected(rid, t)),
        })
    }

    /// What `target` holds for the row whose stub is at `home`.
    fn target_of(&self, page: &Page, target: Rid, home: Rid) -> Result<Target> {
        if !self.is_heap_page(page, target.page_id())? {
            return Ok(Target::Other);
        }
        let Some(rec) = page.record(target.slot) else {
            return Ok(Target::Other);
        };
        match type_of(rec, target)? {
            RecordType::Forwarded => {
                let (_, _, _, back) =
                    parse_forwarded(rec, false).map_err(|d| corrupt(format!("forwarded record {target}"), d))?;
                Ok(if back == home { Target::Live(rec.len()) } else { Target::Other })
            }
            RecordType::GhostData => Ok(match parse_forwarded(rec, true) {
                Ok((_, _, _, back)) if back == home => Target::Ghost,
                _ => Target::Other,
            }),
            _ => Ok(Target::Other),
        }
    }

    /// The row in primary form from the latched record at `at` (home primary or
    /// forwarded record), for a `HeapRevert`, when a hook will log one.
    fn old_row(&self, rec: &[u8], at: Rid, forwarded: bool) -> Result<Option<Vec<u8>>> {
        if !self.db.row_undo_wanted() {
            return Ok(None);
        }
        if forwarded {
            let mut v = Vec::new();
            to_primary(rec, at, &mut v)?;
            Ok(Some(v))
        } else {
            Ok(Some(logical(rec, at)?.to_vec()))
        }
    }

    /// Logs the row operation's undo, if any (the last record of its system transaction).
    fn log_undo(&self, undo: Option<RowUndo<'_>>) -> Result<()> {
        match undo {
            Some(u) => self.db.log_row_undo(&u).map(drop),
            None => Ok(()),
        }
    }

    /// Update of a row stored at home. `None`: the row changed meanwhile, retry.
    fn update_primary(&self, rid: Rid, record: &[u8], home_rec: &[u8], fwd: &mut Vec<u8>) -> Result<Option<bool>> {
        let home = rid.page_id();
        let Some(mut l) = Latched::take(&self.db, &[home])? else {
            return Ok(Some(false));
        };
        let g = l.get(home)?;
        if self.home_of(g, rid)? != Home::Primary {
            return Ok(None);
        }
        let cur = g.record(rid.slot).unwrap_or_default();
        if g.free_count() + cur.len() < home_rec.len() {
            drop(l);
            return self.move_row(rid, None, record, fwd);
        }
        let old = self.old_row(cur, rid, false)?;
        let au = self.au.id;
        let (_, l) = in_txn(&self.db, l, |l| {
            let g = l.get(home)?;
            self.db.change(g, &PageOp::ReplaceSlot { slot: rid.slot, record: home_rec })?;
            self.log_undo(old.as_deref().map(|o| RowUndo::HeapRevert { au, rid, old_record: o }))
        })?;
        for g in &l.pages {
            self.note(g)?;
        }
        Ok(Some(true))
    }

    /// Update of a forwarded row (stub at home, forwarded record at `target`): back home
    /// if it fits there, in place if it fits the forwarded record's page, else moved.
    fn update_forwarded(
        &self,
        rid: Rid,
        target: Rid,
        record: &[u8],
        home_rec: &[u8],
        fwd: &mut Vec<u8>,
    ) -> Result<Option<bool>> {
        let home = rid.page_id();
        let Some(mut l) = Latched::take(&self.db, &[home, target.page_id()])? else {
            return Err(self.dangling(rid, target));
        };
        if self.home_of(l.get(home)?, rid)? != Home::Stub(target) {
            return Ok(None);
        }
        let old_len = match self.target_of(l.get(target.page_id())?, target, rid)? {
            Target::Live(n) => n,
            Target::Ghost => return Ok(Some(false)),
            Target::Other => return Err(self.dangling(rid, target)),
        };
        let old = {
            let t = l.get(target.page_id())?;
            self.old_row(t.record(target.slot).unwrap_or_default(), target, true)?
        };
        let au = self.au.id;
        let undo = old.as_deref().map(|o| RowUndo::HeapRevert { au, rid, old_record: o });
        let stub_len = l.get(home)?.record(rid.slot).map_or(0, |r| r.len());
        if l.get(home)?.free_count() + stub_len >= home_rec.len() {
            // It fits at home again: move it back and drop the forwarded copy.
            let (freed, l) = in_txn(&self.db, l, |l| {
                self.db.change(l.get(home)?, &PageOp::ReplaceSlot { slot: rid.slot, record: home_rec })?;
                let freed = clear_slot(&self.db, au, l.get(target.page_id())?, target.slot)?;
                self.log_undo(undo)?;
                Ok(freed)
            })?;
            for g in &l.pages {
                if !(freed && g.page_id() == target.page_id()) {
                    self.note(g)?;
                }
            }
            return Ok(Some(true));
        }
        to_forwarded(record, rid, fwd)?;
        if l.get(target.page_id())?.free_count() + old_len >= fwd.len() {
            let (_, l) = in_txn(&self.db, l, |l| {
                self.db.change(l.get(target.page_id())?, &PageOp::ReplaceSlot { slot: target.slot, record: fwd })?;
                self.log_undo(undo)
            })?;
            for g in &l.pages {
                self.note(g)?;
            }
            return Ok(Some(true));
        }
        drop(l);
        self.move_row(rid, Some(target), record, fwd)
    }

    /// Moves the row at `rid` to a new forwarded record on another page: the home slot
    /// becomes (or stays) a stub pointing there, and the previous forwarded record at
    /// `old` (if any) goes. One row operation holding the home, old and new pages
    /// (latched in page order; a new page is allocated while the others are held).
    /// `None`: the row changed meanwhile, retry.
    fn move_row(&self, rid: Rid, old: Option<Rid>, record: &[u8], fwd: &mut Vec<u8>) -> Result<Option<bool>> {
        to_forwarded(record, rid, fwd)?;
        let home = rid.page_id();
        let au = self.au.id;
        let mut ids = vec![home];
        ids.extend(old.map(|o| o.page_id()));
        let fixed = ids.clone();
        let needed = fwd.len() + SLOT_SIZE;
        // Checks the home slot and the old forwarded record under the latches; returns
        // the old row for the undo, or None when the row changed.
        let validate = |l: &mut Latched<'_>| -> Result<Option<Option<Vec<u8>>>> {
            let h = self.home_of(l.get(home)?, rid)?;
            match (h, old) {
                (Home::Primary, None) => {
                    let g = l.get(home)?;
                    Ok(Some(self.old_row(g.record(rid.slot).unwrap_or_default(), rid, false)?))
                }
                (Home::Stub(t), Some(o)) if t == o => {
                    let g = l.get(o.page_id())?;
                    match self.target_of(g, o, rid)? {
                        Target::Live(_) => Ok(Some(self.old_row(g.record(o.slot).unwrap_or_default(), o, true)?)),
                        _ => Ok(None),
                    }
                }
                _ => Ok(None),
            }
        };
        // The row's changes once the forwarded record is placed at `new`.
        let finish = |l: &mut Latched<'_>, new: Rid, undo: Option<RowUndo<'_>>| -> Result<Vec<PageId>> {
            let stub = record::forwarding_stub(new);
            // A home record is at least 9 bytes, so the stub always fits.
            self.db.change(l.get(home)?, &PageOp::ReplaceSlot { slot: rid.slot, record: &stub })?;
            let mut freed = Vec::new();
            if let Some(o) = old {
                if clear_slot(&self.db, au, l.get(o.page_id())?, o.slot)? {
                    freed.push(o.page_id());
                }
            }
            self.log_undo(undo)?;
            Ok(freed)
        };
        let publish = |pages: &[PageWriteGuard<'_>], freed: &[PageId]| -> Result<()> {
            for g in pages {
                if !freed.contains(&g.page_id()) {
                    self.note(g)?;
                }
            }
            Ok(())
        };
        // 1. A page with room, from the free-space hints.
        for _ in 0..MAX_CANDIDATES {
            let Some(cand) = self.db.find_page_with_space(au, needed)? else {
                break;
            };
            let mut all = fixed.clone();
            if !all.contains(&cand) {
                all.push(cand);
            }
            let Some(mut l) = Latched::take(&self.db, &all)? else {
                return Err(self.dangling(rid, old.unwrap_or(rid)));
            };
            let Some(old_row) = validate(&mut l)? else {
                return Ok(None);
            };
            let usable = !fixed.contains(&cand) && {
                let g = l.get(cand)?;
                usable_page(&self.db, au, PageType::Data, g)? && g.free_count() >= needed
            };
            if !usable {
                // Correct the hint that offered it (we know its real free space now).
                let g = l.get(cand)?;
                if owner(g, au) == Owner::Unit {
                    self.note(g)?;
                }
                continue;
            }
            let undo = old_row.as_deref().map(|o| RowUndo::HeapRevert { au, rid, old_record: o });
            let (freed, l) = in_txn(&self.db, l, |l| {
                let slot = try_place(&self.db, l.get(cand)?, fwd)?.ok_or_else(|| {
                    corrupt(format!("page ({cand})"), "a record did not fit where it was checked to fit")
                })?;
                finish(l, Rid::new(cand, slot), undo)
            })?;
            publish(&l.pages, &freed)?;
            return Ok(Some(true));
        }
        // 2. A new page, allocated while the home and old pages are held (allocation
        // latches only system pages and the new page, which nobody else can hold).
        let Some(mut l) = Latched::take(&self.db, &fixed)? else {
            return Err(self.dangling(rid, old.unwrap_or(rid)));
        };
        let Some(old_row) = validate(&mut l)? else {
            return Ok(None);
        };
        let undo = old_row.as_deref().map(|o| RowUndo::HeapRevert { au, rid, old_record: o });
        let ((freed, n), l) = in_txn(&self.db, l, |l| {
            let (new, n) =
                place_record(&self.db, &self.au, Placement { search: false, ..self.data_placement(Some(home)) }, fwd)?;
            // `n`, the new page, stays latched until the end too.
            let freed = finish(l, new, undo)?;
            Ok((freed, n))
        })?;
        publish(&l.pages, &freed)?;
        self.note(&n)?;
        Ok(Some(true))
    }

    /// Turns the row at `rid` into a ghost: the delete (`as_delete`: logs HeapUnghost,
    /// returns false when there is no row) and the undo of an insert (logs nothing, a
    /// row already gone is fine).
    fn ghost_row(&self, rid: Rid, as_delete: bool) -> Result<bool> {
        let au = self.au.id;
        for _ in 0..MAX_CHASE {
            let (ids, target) = match self.home(rid)? {
                Home::Nothing | Home::Ghost => return Ok(false),
                Home::Primary => (vec![rid.page_id()], None),
                Home::Stub(t) => (vec![rid.page_id(), t.page_id()], Some(t)),
            };
            let Some(mut l) = Latched::take(&self.db, &ids)? else {
                return Err(self.dangling(rid, target.unwrap_or(rid)));
            };
            let now = self.home_of(l.get(rid.page_id())?, rid)?;
            let (page, slot, rec) = match (now, target) {
                (Home::Primary, None) => {
                    let g = l.get(rid.page_id())?;
                    let mut rec = g.record(rid.slot).unwrap_or_default().to_vec();
                    record::set_ghost(&mut rec).map_err(|e| rec_err(rid, e))?;
                    (rid.page_id(), rid.slot, rec)
                }
                (Home::Stub(t), Some(t0)) if t == t0 => {
                    let g = l.get(t.page_id())?;
                    match self.target_of(g, t, rid)? {
                        Target::Live(_) => {
                            (t.page_id(), t.slot, ghost_of_forwarded(g.record(t.slot).unwrap_or_default()))
                        }
                        Target::Ghost => return Ok(false),
                        Target::Other => {
                            return Err(self.dangling(rid, t));
                        }
                    }
                }
                _ => continue,
            };
            in_txn(&self.db, l, |l| {
                let g = l.get(page)?;
                self.db.change(g, &PageOp::ReplaceSlot { slot, record: &rec })?;
                self.db.note_ghosts(page, true)?;
                self.log_undo(as_delete.then_some(RowUndo::HeapUnghost { au, rid }))
            })?;
            return Ok(true);
        }
        Err(corrupt(format!("heap row {rid}"), "the row kept moving while it was being deleted"))
    }

    /// Reads the row at `rid`, following a stub one hop, and gives `f` the row in primary
    /// form (a forwarded record is converted into `scratch`). Ghosts are no rows.
    fn visit_row<R>(&self, rid: Rid, scratch: &mut Vec<u8>, f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        let mut last_target = None;
        for _ in 0..MAX_CHASE {
            let target = {
                let Some(g) = read_if_in_files(&self.db, rid.page_id())? else {
                    return Ok(None);
                };
                match self.home_of(&g, rid)? {
                    Home::Nothing | Home::Ghost => return Ok(None),
                    Home::Primary => {
                        // home_of found a record there.
                        let rec = g.record(rid.slot).unwrap_or_default();
                        return Ok(Some(f(logical(rec, rid)?)));
                    }
                    Home::Stub(t) => t,
                }
            };
            let found = {
                let Some(g) = read_if_in_files(&self.db, target.page_id())? else {
                    return Err(self.dangling(rid, target));
                };
                match self.target_of(&g, target, rid)? {
                    Target::Live(_) => {
                        let rec = g.record(target.slot).unwrap_or_default();
                        to_primary(rec, target, scratch)?;
                        true
                    }
                    Target::Ghost => return Ok(None),
                    Target::Other => false,
                }
            };
            if found {
                return Ok(Some(f(scratch)));
            }
            // The row moved between the two reads, or the stub is damaged: a stub that
            // points at the same wrong place twice is damage.
            if last_target == Some(target) {
                return Err(self.dangling(rid, target));
            }
            last_target = Some(target);
        }
        Err(corrupt(format!("heap row {rid}"), "the row kept moving while it was being read"))
    }

    fn dangling(&self, home: Rid, target: Rid) -> StorageError {
        corrupt(
            format!("heap row {home}"),
            format!("its forwarding stub points at {target}, which is not its forwarded record"),
        )
    }

    fn unexpected(&self, rid: Rid, t: RecordType) -> StorageError {
        corrupt(format!("heap record {rid}"), format!("a {t:?} record does not belong in a heap"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use crate::file::{FileGrowth, FileSpec};
    use crate::io::MemFs;
    use crate::record::{encode_forwarded_record, encode_record, ColumnLayout, ColumnValue, LobPointer, RowLayout};

    fn db() -> Arc<Database> {
        let fs = MemFs::new();
        let spec = FileSpec {
            file_id: 1,
            name: "heap".into(),
            path: "/heap/heap.mdf".into(),
            size_pages: 128,
            growth: FileGrowth::Pages(64),
            max_pages: None,
        };
        Database::create(BufferPool::new(512), &fs, 7, "heap", vec![spec]).unwrap()
    }

    fn row(layout: &RowLayout, values: &[ColumnValue]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_record(layout, RecordType::Primary, values, &mut out).unwrap();
        out
    }

    /// The layout-free forwarding conversion produces exactly what the record module
    /// encodes for the same values, and converts back.
    #[test]
    fn forwarding_conversion_matches_record_module() {
        let stub = Rid { file_id: 1, page_no: 77, slot: 3 };
        let lob = LobPointer { total_len: 100_000, root: Rid { file_id: 1, page_no: 9, slot: 1 } };
        let cases: Vec<(RowLayout, Vec<ColumnValue>)> = vec![
            (RowLayout::new(vec![ColumnLayout::fixed(4)]).unwrap(), vec![ColumnValue::Inline(&[1, 2, 3, 4])]),
            (
                RowLayout::new(vec![ColumnLayout::fixed(4), ColumnLayout::variable().with_nullable()]).unwrap(),
                vec![ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Null],
            ),
            (
                RowLayout::new(vec![ColumnLayout::fixed(2), ColumnLayout::variable(), ColumnLayout::variable()])
                    .unwrap(),
                vec![ColumnValue::Inline(&[5, 6]), ColumnValue::Inline(b"hello"), ColumnValue::Inline(b"")],
            ),
            (
                RowLayout::new(vec![
                    ColumnLayout::fixed(1),
                    ColumnLayout::lob().with_nullable(),
                    ColumnLayout::fixed(8).with_sparse(),
                    ColumnLayout::variable().with_sparse(),
                ])
                .unwrap(),
                vec![
                    ColumnValue::Inline(&[9]),
                    ColumnValue::Lob(lob),
                    ColumnValue::Inline(&[1; 8]),
                    ColumnValue::Inline(b"sparse"),
                ],
            ),
        ];
        for (layout, values) in cases {
            let primary = row(&layout, &values);
            let mut expected = Vec::new();
            encode_forwarded_record(&layout, &values, stub, &mut expected).unwrap();
            let mut got = Vec::new();
            to_forwarded(&primary, stub, &mut got).unwrap();
            assert_eq!(got, expected, "layout {layout:?}");
            let mut back = Vec::new();
            assert_eq!(to_primary(&got, stub, &mut back).unwrap(), stub);
            assert_eq!(back, primary);
        }
    }

    #[test]
    fn insert_get_update_forward_delete() {
        let db = db();
        let heap = Heap::create(&db, 100).unwrap();
        let layout = RowLayout::new(vec![ColumnLayout::fixed(4), ColumnLayout::variable().with_nullable()]).unwrap();
        let small = |i: u32| row(&layout, &[ColumnValue::Inline(&i.to_le_bytes()), ColumnValue::Inline(b"x")]);
        let big =
            |i: u32, n: usize| row(&layout, &[ColumnValue::Inline(&i.to_le_bytes()), ColumnValue::Inline(&vec![7; n])]);
        let mut rids = Vec::new();
        for i in 0..35 {
            rids.push(heap.insert(&big(i, 190)).unwrap());
        }
        assert_eq!(heap.page_count().unwrap(), 1);
        // Grow one row beyond what its page has: it is forwarded, its RID still works.
        let grown = big(5, 6000);
        assert!(heap.update(rids[5], &grown).unwrap());
        assert_eq!(heap.get(rids[5]).unwrap().as_deref(), Some(&grown[..]));
        assert_eq!(heap.forwarded_count().unwrap(), 1);
        let st = heap.check().unwrap();
        assert_eq!((st.rows, st.forwarded_records), (35, 1));
        // Grow again: moved again, still one hop, same RID.
        let grown2 = big(5, 7900);
        assert!(heap.update(rids[5], &grown2).unwrap());
        assert_eq!(heap.get(rids[5]).unwrap().as_deref(), Some(&grown2[..]));
        assert_eq!(heap.check().unwrap().forwarded_records, 1);
        // Shrink: back home.
        assert!(heap.update(rids[5], &small(5)).unwrap());
        assert_eq!(heap.get(rids[5]).unwrap().as_deref(), Some(&small(5)[..]));
        assert_eq!(heap.forwarded_count().unwrap(), 0);
        heap.check().unwrap();
        // Forward, then delete: the row becomes a ghost (its forwarded record does), and
        // once the ghost is removed both records go and the emptied page is freed.
        assert!(heap.update(rids[6], &grown2).unwrap());
        assert_eq!(heap.page_count().unwrap(), 2);
        assert!(heap.delete(rids[6]).unwrap());
        assert_eq!(heap.get(rids[6]).unwrap(), None);
        assert!(!heap.delete(rids[6]).unwrap());
        assert!(!heap.update(rids[6], &small(6)).unwrap());
        let st = heap.check().unwrap();
        assert_eq!((st.rows, st.forwarded_records, st.ghost_records), (34, 0, 1));
        assert_eq!(heap.page_count().unwrap(), 2);
        // Undo of the delete brings it back; delete again, then remove the ghost.
        heap.undo_delete(rids[6]).unwrap();
        heap.undo_delete(rids[6]).unwrap();
        assert_eq!(heap.get(rids[6]).unwrap().as_deref(), Some(&grown2[..]));
        assert!(heap.delete(rids[6]).unwrap());
        assert!(heap.remove_ghost(rids[6]).unwrap());
        assert!(!heap.remove_ghost(rids[6]).unwrap());
        assert_eq!(heap.page_count().unwrap(), 1);
        let st = heap.check().unwrap();
        assert_eq!((st.rows, st.forwarded_records), (34, 0));
        let mut seen = 0;
        assert!(heap
            .scan(|_, _| {
                seen += 1;
                true
            })
            .unwrap());
        assert_eq!(seen, 34);
    }

    #[test]
    fn short_rows_are_padded_and_can_be_forwarded_from_a_full_page() {
        let db = db();
        let heap = Heap::create(&db, 101).unwrap();
        let tiny_layout = RowLayout::new(vec![ColumnLayout::fixed(1)]).unwrap();
        let tiny = row(&tiny_layout, &[ColumnValue::Inline(&[42])]);
        assert!(tiny.len() < MIN_HEAP_RECORD);
        let mut rids = Vec::new();
        // Fill a page completely with tiny rows.
        loop {
            let rid = heap.insert(&tiny).unwrap();
            if rid.page_no != rids.first().map_or(rid.page_no, |r: &Rid| r.page_no) {
                heap.delete(rid).unwrap();
                break;
            }
            rids.push(rid);
        }
        let layout = RowLayout::new(vec![ColumnLayout::variable()]).unwrap();
        let wide = row(&layout, &[ColumnValue::Inline(&[1; 500])]);
        assert!(heap.update(rids[10], &wide).unwrap());
        assert_eq!(heap.get(rids[10]).unwrap().unwrap(), wide);
        assert_eq!(heap.get(rids[11]).unwrap().unwrap(), tiny);
        heap.check().unwrap();
    }

    /// Appends into a page whose free space is mostly a hole, with a contiguous free
    /// block of 0 to 3 bytes: the new slot entry must not damage the last record.
    #[test]
    fn appends_into_fragmented_pages_keep_records_intact() {
        let layout = RowLayout::new(vec![ColumnLayout::variable()]).unwrap();
        let tiny_layout = RowLayout::new(vec![ColumnLayout::fixed(1)]).unwrap();
        let tiny = row(&tiny_layout, &[ColumnValue::Inline(&[7])]);
        for gap in 0..4usize {
            let db = db();
            let heap = Heap::create(&db, 105).unwrap();
            let first = heap.insert(&row(&layout, &[ColumnValue::Inline(&[1; 100])])).unwrap();
            let hole = heap.insert(&row(&layout, &[ColumnValue::Inline(&[2; 3000])])).unwrap();
            assert_eq!(hole.page_id(), first.page_id());
            // Fill the rest of the page exactly, leaving `gap` contiguous bytes.
            let filler = {
                let mut g = db.write(first.page_id()).unwrap();
                // Row of n payload bytes: 4 header + 2 count + 2 var count + 2 offset.
                let payload = g.free_count() - gap - SLOT_SIZE - 10;
                let r = row(&layout, &[ColumnValue::Inline(&vec![3; payload])]);
                let slot = g.slot_count();
                db.change(&mut g, &PageOp::InsertSlot { slot, record: &r }).unwrap();
                assert_eq!(g.free_count(), gap);
                (Rid::new(first.page_id(), slot), r)
            };
            // Shrinking a row leaves a hole the free-space hints advertise, and no empty
            // slot to reuse: the next insert appends a slot.
            assert!(heap.update(hole, &row(&layout, &[ColumnValue::Inline(&[4; 10])])).unwrap());
            let t = heap.insert(&tiny).unwrap();
            assert_eq!(t.page_id(), first.page_id(), "the hole is reused");
            assert_eq!(heap.get(filler.0).unwrap().as_ref(), Some(&filler.1), "gap {gap}");
            assert_eq!(heap.get(t).unwrap().as_ref(), Some(&tiny));
            heap.check().unwrap();
        }
    }

    #[test]
    fn rejects_bad_rows_and_foreign_rids() {
        let db = db();
        let heap = Heap::create(&db, 102).unwrap();
        assert!(matches!(heap.insert(&[]), Err(StorageError::Invalid(_))));
        assert!(matches!(heap.insert(&record::forwarding_stub(Rid::default())), Err(StorageError::Invalid(_))));
        assert!(matches!(heap.insert(&[0x10, 0, 4, 0, 1, 0, 0, 99]), Err(StorageError::Invalid(_))));
        let other = Heap::create(&db, 103).unwrap();
        let layout = RowLayout::new(vec![ColumnLayout::fixed(4)]).unwrap();
        let r = row(&layout, &[ColumnValue::Inline(&[1, 2, 3, 4])]);
        let rid = other.insert(&r).unwrap();
        assert_eq!(heap.get(rid).unwrap(), None);
        assert!(!heap.update(rid, &r).unwrap());
        assert!(!heap.delete(rid).unwrap());
        assert_eq!(other.get(rid).unwrap().as_ref(), Some(&r));
        // RIDs outside the data files, or in the log file: no row, not an I/O error.
        for far in [Rid { file_id: 1, page_no: 50_000_000, slot: 0 }, Rid { file_id: 2, page_no: 1, slot: 0 }] {
            assert_eq!(heap.get(far).unwrap(), None);
            assert!(!heap.update(far, &r).unwrap());
            assert!(!heap.delete(far).unwrap());
        }
    }

    #[test]
    fn damaged_stub_is_reported_not_panicked() {
        let db = db();
        let heap = Heap::create(&db, 104).unwrap();
        let layout = RowLayout::new(vec![ColumnLayout::variable()]).unwrap();
        let a = heap.insert(&row(&layout, &[ColumnValue::Inline(&[1; 4000])])).unwrap();
        let b = heap.insert(&row(&layout, &[ColumnValue::Inline(&[2; 4000])])).unwrap();
        assert!(heap.update(a, &row(&layout, &[ColumnValue::Inline(&[3; 5000])])).unwrap());
        // Point a's stub at b (a primary record): a dangling stub.
        {
            let mut g = db.write(a.page_id()).unwrap();
            db.change(&mut g, &PageOp::ReplaceSlot { slot: a.slot, record: &record::forwarding_stub(b) }).unwrap();
        }
        assert!(matches!(heap.get(a), Err(StorageError::Corrupt { .. })));
        assert!(matches!(heap.check(), Err(StorageError::Corrupt { .. })));
        assert!(matches!(
            heap.update(a, &row(&layout, &[ColumnValue::Inline(&[5; 7000])])),
            Err(StorageError::Corrupt { .. })
        ));
        assert!(matches!(heap.scan(|_, _| true), Err(StorageError::Corrupt { .. })));
        // A garbage record in a slot.
        {
            let mut g = db.write(b.page_id()).unwrap();
            db.change(&mut g, &PageOp::ReplaceSlot { slot: b.slot, record: &[0xFF; 12] }).unwrap();
        }
        assert!(matches!(heap.get(b), Err(StorageError::Corrupt { .. })));
    }
}
