//! Undo: what storage gives the transaction layer to take changes back, physically (a
//! system transaction cut short) and logically (a user transaction rolling back).
//!
//! The log has physiological redo for every page op ([`PageOp`], applied by the
//! page-change context [`Database::change`]). Undo works in two layers.
//!
//! # System transactions and physical undo
//!
//! A *system transaction* is a group of page changes that is atomic across a crash:
//! opened with [`Database::begin_system_txn`] (or [`Database::system_txn`]) and ended
//! with [`SystemTxn::commit`](crate::database::SystemTxn::commit). Nested system
//! transactions flatten into the outermost one. If a crash (or an error) cuts one short,
//! its page ops are undone **physically**, in reverse, from the *undo material* the log
//! keeps beside each op ([`undo_material`], computed from the page image before the op,
//! [`PageChange::before`](crate::database::PageChange)) and applied with
//! [`apply_physical_undo`], which logs the inverse ops through [`Database::change`] like any
//! change (the hook logs them as compensation).
//!
//! Physical undo is only correct because nobody else touched those pages between the
//! system transaction's first op on a page and its end. So **a system transaction ends
//! (its end record is logged) while the latches that protect its pages are still held**:
//!
//! | System transaction | What protects its pages until the end |
//! |---|---|
//! | a row operation | the EX latches of the pages it changes (B-tree leaf; heap home, forwarded and target pages; LOB pages still reachable by others) |
//! | a B-tree structure modification (split, merge, new root, root collapse, unlink and free) | the exclusive tree latch |
//! | allocation (extent and page allocation and free, IAM/GAM/PFS allocated bits, directory, unit create/drop/set root, file growth) | the allocation mutex, held until the *outermost* system transaction ends (storage keeps it per thread) |
//! | pages a transaction allocated and releases before its end (LOB fragments) | nobody can reach them: they are not offered to free-space searches until the end |
//!
//! Bitmap pages are the exception: free-space and ghost notes (PFS fullness and ghost
//! bits) change a PFS byte under the PFS latch only, and the transaction layer's boot
//! page fields change outside the allocation mutex. Undo of a `WriteBody` is therefore an
//! XOR: the material records `old ^ new` and undo writes `current ^ delta`, which flips
//! back exactly the bits this op flipped and keeps what concurrent changes did to other
//! bits of the same bytes.
//!
//! A page change made outside any system transaction (a free-space note) is atomic by
//! itself: redo only, never undone.
//!
//! Inverse of each op:
//!
//! | Op | Undo |
//! |---|---|
//! | InsertSlot(s) | DeleteSlot(s) |
//! | DeleteSlot(s) | InsertSlot(s, old record) |
//! | PlaceSlot(s) | ClearSlot(s) (PlaceSlot may extend the slot array; ClearSlot trims it back) |
//! | ClearSlot(s) | PlaceSlot(s, old record) |
//! | ReplaceSlot(s) | ReplaceSlot(s, old record) |
//! | TruncateSlots(f) | TruncateSlots(f) if slots reappeared past `f`, then PlaceSlot(f + i, record i) for every removed record |
//! | SetLinks | SetLinks(old prev, old next) |
//! | WriteBody(o, new) | WriteBody(o', current ^ delta) over the span o' of bytes that changed |
//! | Format of an unformatted page, or of a page being allocated (the op names a unit) | nothing: the page is free again once the allocation is undone, and its content does not matter |
//! | Format to allocation unit 0 of a live page (a heap or text page emptied and un-owned before it is freed) | Format with the old header fields, SetLinks, then PlaceSlot of every record (slotted page types) or WriteBody of the old body (system page types) |
//!
//! No code formats a live page for a unit: a Format that names a unit is always the first
//! change to a page its caller allocated (B-tree create, split and new root; heap and
//! LOB pages; IAM pages in a newly claimed extent; directory pages), normally in the same
//! system transaction, whose undo frees the page again. System pages are formatted for
//! unit 0 over never-written space (database creation, file growth). The only live pages
//! formatted are emptied heap and text pages being un-owned (unit 0), restored as above.
//!
//! Physical undo restores the page's logical content (header fields, links, every slot's
//! record, the body of bitmap pages, `free_count`), not its byte layout: record offsets,
//! `free_data` and holes may differ (the inverse op may compact), and the page LSN is the
//! compensation's. A material that applies as several ops (TruncateSlots, Format) starts
//! by resetting the page (TruncateSlots / Format), so applying it again from any
//! intermediate state ends in the same content.
//!
//! Physical undo at run time (a system transaction rolled back by the hook) changes pages
//! under in-memory caches: storage rebuilds the allocation caches itself when the rolled
//! back transaction held the allocation mutex, and a B-tree structure modification that
//! fails reloads its root. After physical undo applied by anyone else (recovery), open the
//! structures afresh ([`Database::reload_allocation`], [`BTree::reload`]).
//!
//! # Row operations and logical undo
//!
//! Every user-visible row operation is one system transaction whose **last record is a
//! logical row-undo record** ([`RowUndo`]), logged with [`Database::log_row_undo`] while
//! the page latches are still held: B-tree insert/update/delete (and the `*_row`
//! variants), heap insert/update/delete, and [`crate::lob::write`]. That record ends the
//! system transaction's physical part and joins the user transaction's undo chain (the
//! transaction layer's business). If a crash cuts the row operation short, physical undo
//! removes it; once it completed, a rollback applies the logical undo with
//! [`apply_row_undo`].
//!
//! A row operation that changes one page and runs outside any other system transaction
//! (a B-tree leaf insert, update or delete that fits its leaf) takes a shorter form,
//! [`Database::change_row`]: the hook logs the page op and the `RowUndo` as one record
//! ([`LogHook::log_row_op`](crate::database::LogHook::log_row_op)), which a crash cannot
//! cut in two, so no system transaction, undo material or end record is needed.
//!
//! Structure modifications that a row operation needs run as *separate* system
//! transactions without a `RowUndo`: a B-tree insert or growing update that does not fit
//! first splits the leaf (its own system transaction, which does not place the new entry),
//! then performs the insert or update as an ordinary row operation; a delete removes the
//! entry (page op and `RowUndo`) and then rebalances (merge, free, root collapse) in a
//! system transaction of its own. Heap forwarding moves are part of the update's row
//! operation (home, old and new forwarded pages are all latched until its end).
//!
//! Logical undo is **idempotent** ("ensure" semantics), because recovery may apply one
//! twice (a crash after the compensation but before its compensation log record):
//!
//! | Row operation | RowUndo | Undo ensures |
//! |---|---|---|
//! | B-tree insert | BTreeRemove(stored key) | the stored key is absent |
//! | B-tree delete | BTreeRestore(stored key, value) | the entry is present with that value |
//! | B-tree update | BTreeRevalue(stored key, old value) | the key has the old value |
//! | heap insert | HeapClear(rid) | the slot holds no live row (the row is ghosted, so the slot is not reused before the rollback is over) |
//! | heap delete | HeapUnghost(rid) | the row is back (its ghost is live again) |
//! | heap update | HeapRevert(rid, old row) | the row has the old value (moving it internally if it no longer fits its page; the RID is stable) |
//! | LOB write | LobRemove(pointer, CRC32C of the value) | the value's records are gone (if the root still holds a value of that length and CRC) |
//! | allocation unit created by the transaction (logged alone, after the unit's own system transaction) | UnitDrop | the unit is gone (unit ids are never reused, so a missing unit was dropped by an earlier application) |
//!
//! Undo runs the normal structure code, which logs its page ops in system transactions
//! of its own, but must not log a new `RowUndo`: the hook's
//! [`LogHook::compensating`](crate::database::LogHook::compensating) flag, set by the
//! transaction layer while it applies undo, suppresses them. B-tree undo works on exact
//! stored keys through [`BTree::open_for_undo`], which needs no uniqueness flag.
//!
//! Heap deletes ghost rows instead of clearing them (the status type becomes ghost data,
//! [`crate::record::set_ghost`]), so the slot is not reused while the deleting transaction
//! may roll back; readers skip ghosts. After commit the transaction layer calls
//! [`Heap::remove_ghost`] for each deleted RID (and, after a rollback, for each RID whose
//! insert was undone); [`Heap::cleanup_ghosts`] removes every ghost of a heap at the end
//! of recovery. B-tree deletes stay physical (key locks keep others away from the key).
//! [`crate::lob::delete`] is not undoable: call it after the transaction that dropped the
//! value commits.
//!
//! Recovery order, for the transaction layer: redo; physical undo of incomplete system
//! transactions ([`apply_physical_undo`] needs no allocation caches); then
//! [`Database::finish_open`] (caches from the pages); logical undo of loser transactions
//! ([`apply_row_undo`]); then [`Heap::cleanup_ghosts`] on every heap.
//!
//! # RowUndo encoding
//!
//! One record: a tag byte, the allocation unit id (u64), then the fields below.
//! Byte strings are a u32 length then the bytes; a RID is 8 bytes (u32 page, u16 file,
//! u16 slot). All integers little-endian.
//!
//! | Tag | Variant | Fields after the unit id |
//! |---:|---|---|
//! | 1 | BTreeRemove | stored key |
//! | 2 | BTreeRestore | stored key, value |
//! | 3 | BTreeRevalue | stored key, old value |
//! | 4 | HeapClear | RID |
//! | 5 | HeapUnghost | RID |
//! | 6 | HeapRevert | RID, old row (primary record, unpadded) |
//! | 7 | LobRemove | u64 total length, root RID, u32 CRC32C of the value |
//! | 8 | UnitDrop | — |
//!
//! # Undo material encoding
//!
//! One material per page op: a tag byte then fields; slot numbers and lengths are u16, a
//! page id 6 bytes (u32 page, u16 file), records are a u16 length then the bytes.
//!
//! | Tag | Undo | Fields |
//! |---:|---|---|
//! | 0 | nothing | — |
//! | 1 | DeleteSlot | slot |
//! | 2 | InsertSlot | slot, record |
//! | 3 | ClearSlot | slot |
//! | 4 | PlaceSlot | slot, record |
//! | 5 | ReplaceSlot | slot, record |
//! | 6 | restore a truncated tail | from, count, `count` records (length 0 = an empty slot, left empty) |
//! | 7 | SetLinks | prev page id, next page id |
//! | 8 | XOR into the body | body offset, length, delta bytes |
//! | 9 | restore a page | u8 page type, u8 level, u16 index id, u32 object id, u64 unit id, prev page id, next page id, u8 kind; kind 0 (slotted): u16 slot count, then that many records (length 0 = empty slot); kind 1 (body): u16 length, then the first `length` body bytes (the rest are zero) |

use crate::btree::BTree;
use crate::database::Database;
use crate::error::{Result, StorageError};
use crate::heap::Heap;
use crate::page::{Page, PageId, PageOp, PageType, HEADER_SIZE, PAGE_SIZE};
use crate::record::{LobPointer, Rid};
use std::sync::Arc;

/// The logical undo of one row operation (see the module doc). Byte strings borrow from
/// the caller (the structure code's buffers, or the log record being decoded), so building
/// one costs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowUndo<'a> {
    /// Undo of a B-tree insert: remove the stored key.
    BTreeRemove { au: u64, stored_key: &'a [u8] },
    /// Undo of a B-tree delete: put the entry back.
    BTreeRestore { au: u64, stored_key: &'a [u8], value: &'a [u8] },
    /// Undo of a B-tree update: give the key its old value.
    BTreeRevalue { au: u64, stored_key: &'a [u8], old_value: &'a [u8] },
    /// Undo of a heap insert: ghost the row.
    HeapClear { au: u64, rid: Rid },
    /// Undo of a heap delete: make the ghost live again.
    HeapUnghost { au: u64, rid: Rid },
    /// Undo of a heap update: the old row (primary form, unpadded).
    HeapRevert { au: u64, rid: Rid, old_record: &'a [u8] },
    /// Undo of a LOB write: remove the value's records.
    LobRemove { au: u64, ptr: LobPointer, crc: u32 },
    /// Undo of an allocation unit's creation by a user transaction (CREATE TABLE or
    /// INDEX, a table's first off-row value): drop the unit.
    UnitDrop { au: u64 },
}

const T_BTREE_REMOVE: u8 = 1;
const T_BTREE_RESTORE: u8 = 2;
const T_BTREE_REVALUE: u8 = 3;
const T_HEAP_CLEAR: u8 = 4;
const T_HEAP_UNGHOST: u8 = 5;
const T_HEAP_REVERT: u8 = 6;
const T_LOB_REMOVE: u8 = 7;
const T_UNIT_DROP: u8 = 8;

fn undecodable(what: &str) -> StorageError {
    StorageError::corrupt("row undo record", what.to_string())
}

/// A little-endian reader over a byte slice that fails instead of panicking.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|s| u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        let s = self.take(8)?;
        let mut x = [0u8; 8];
        x.copy_from_slice(s);
        Some(u64::from_le_bytes(x))
    }
    fn bytes32(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn bytes16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()? as usize;
        self.take(n)
    }
    fn rid(&mut self) -> Option<Rid> {
        Rid::from_bytes(self.take(Rid::LEN)?)
    }
    fn page_id(&mut self) -> Option<PageId> {
        PageId::from_bytes(self.take(6)?)
    }
    fn done(&self) -> bool {
        self.at == self.b.len()
    }
}

fn put32(out: &mut Vec<u8>, b: &[u8]) {
    // Row undo byte strings are page-bounded (keys, entries, rows); u32 leaves no doubt.
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn put16(out: &mut Vec<u8>, b: &[u8]) {
    // Records come from an 8 KB page: their length fits u16.
    out.extend_from_slice(&(b.len() as u16).to_le_bytes());
    out.extend_from_slice(b);
}

impl<'a> RowUndo<'a> {
    /// The allocation unit the undo applies to.
    pub fn au(&self) -> u64 {
        match *self {
            RowUndo::BTreeRemove { au, .. }
            | RowUndo::BTreeRestore { au, .. }
            | RowUndo::BTreeRevalue { au, .. }
            | RowUndo::HeapClear { au, .. }
            | RowUndo::HeapUnghost { au, .. }
            | RowUndo::HeapRevert { au, .. }
            | RowUndo::LobRemove { au, .. }
            | RowUndo::UnitDrop { au } => au,
        }
    }

    /// A short name for log dumps.
    pub fn kind_name(&self) -> &'static str {
        match self {
            RowUndo::BTreeRemove { .. } => "BTREE_REMOVE",
            RowUndo::BTreeRestore { .. } => "BTREE_RESTORE",
            RowUndo::BTreeRevalue { .. } => "BTREE_REVALUE",
            RowUndo::HeapClear { .. } => "HEAP_CLEAR",
            RowUndo::HeapUnghost { .. } => "HEAP_UNGHOST",
            RowUndo::HeapRevert { .. } => "HEAP_REVERT",
            RowUndo::LobRemove { .. } => "LOB_REMOVE",
            RowUndo::UnitDrop { .. } => "UNIT_DROP",
        }
    }

    /// Appends the encoding (module doc, "RowUndo encoding") to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let (tag, au) = match *self {
            RowUndo::BTreeRemove { au, .. } => (T_BTREE_REMOVE, au),
            RowUndo::BTreeRestore { au, .. } => (T_BTREE_RESTORE, au),
            RowUndo::BTreeRevalue { au, .. } => (T_BTREE_REVALUE, au),
            RowUndo::HeapClear { au, .. } => (T_HEAP_CLEAR, au),
            RowUndo::HeapUnghost { au, .. } => (T_HEAP_UNGHOST, au),
            RowUndo::HeapRevert { au, .. } => (T_HEAP_REVERT, au),
            RowUndo::LobRemove { au, .. } => (T_LOB_REMOVE, au),
            RowUndo::UnitDrop { au } => (T_UNIT_DROP, au),
        };
        out.push(tag);
        out.extend_from_slice(&au.to_le_bytes());
        match *self {
            RowUndo::BTreeRemove { stored_key, .. } => put32(out, stored_key),
            RowUndo::BTreeRestore { stored_key, value, .. } => {
                put32(out, stored_key);
                put32(out, value);
            }
            RowUndo::BTreeRevalue { stored_key, old_value, .. } => {
                put32(out, stored_key);
                put32(out, old_value);
            }
            RowUndo::HeapClear { rid, .. } | RowUndo::HeapUnghost { rid, .. } => out.extend_from_slice(&rid.to_bytes()),
            RowUndo::HeapRevert { rid, old_record, .. } => {
                out.extend_from_slice(&rid.to_bytes());
                put32(out, old_record);
            }
            RowUndo::LobRemove { ptr, crc, .. } => {
                out.extend_from_slice(&ptr.total_len.to_le_bytes());
                out.extend_from_slice(&ptr.root.to_bytes());
                out.extend_from_slice(&crc.to_le_bytes());
            }
            RowUndo::UnitDrop { .. } => {}
        }
    }

    /// Decodes one record occupying all of `b`, borrowing its byte strings. Garbage is a
    /// `Corrupt` error, never a panic.
    pub fn decode(b: &'a [u8]) -> Result<RowUndo<'a>> {
        let mut r = Reader { b, at: 0 };
        let bad = || undecodable("truncated or malformed");
        let tag = r.u8().ok_or_else(bad)?;
        let au = r.u64().ok_or_else(bad)?;
        let u = match tag {
            T_BTREE_REMOVE => RowUndo::BTreeRemove { au, stored_key: r.bytes32().ok_or_else(bad)? },
            T_BTREE_RESTORE => {
                let stored_key = r.bytes32().ok_or_else(bad)?;
                RowUndo::BTreeRestore { au, stored_key, value: r.bytes32().ok_or_else(bad)? }
            }
            T_BTREE_REVALUE => {
                let stored_key = r.bytes32().ok_or_else(bad)?;
                RowUndo::BTreeRevalue { au, stored_key, old_value: r.bytes32().ok_or_else(bad)? }
            }
            T_HEAP_CLEAR => RowUndo::HeapClear { au, rid: r.rid().ok_or_else(bad)? },
            T_HEAP_UNGHOST => RowUndo::HeapUnghost { au, rid: r.rid().ok_or_else(bad)? },
            T_HEAP_REVERT => {
                let rid = r.rid().ok_or_else(bad)?;
                RowUndo::HeapRevert { au, rid, old_record: r.bytes32().ok_or_else(bad)? }
            }
            T_LOB_REMOVE => {
                let total_len = r.u64().ok_or_else(bad)?;
                let root = r.rid().ok_or_else(bad)?;
                let crc = r.u32().ok_or_else(bad)?;
                RowUndo::LobRemove { au, ptr: LobPointer { total_len, root }, crc }
            }
            T_UNIT_DROP => RowUndo::UnitDrop { au },
            _ => return Err(undecodable("unknown tag")),
        };
        if !r.done() {
            return Err(undecodable("trailing bytes"));
        }
        Ok(u)
    }
}

/// Applies a row undo, idempotently (see the module doc): applying it again after it
/// took effect changes nothing. Runs the structure code in system transactions of its
/// own; call it with the hook compensating, so no new `RowUndo` is logged.
pub fn apply_row_undo(db: &Arc<Database>, u: &RowUndo<'_>) -> Result<()> {
    match *u {
        RowUndo::BTreeRemove { au, stored_key } => BTree::open_for_undo(db, au)?.undo_remove(stored_key),
        RowUndo::BTreeRestore { au, stored_key, value } => {
            BTree::open_for_undo(db, au)?.undo_restore(stored_key, value)
        }
        RowUndo::BTreeRevalue { au, stored_key, old_value } => {
            BTree::open_for_undo(db, au)?.undo_revalue(stored_key, old_value)
        }
        RowUndo::HeapClear { au, rid } => Heap::open(db, au)?.undo_insert(rid),
        RowUndo::HeapUnghost { au, rid } => Heap::open(db, au)?.undo_delete(rid),
        RowUndo::HeapRevert { au, rid, old_record } => Heap::open(db, au)?.undo_update(rid, old_record),
        RowUndo::LobRemove { au, ptr, crc } => crate::lob::undo_write(db, au, ptr, crc),
        // Unit ids are never reused: a unit already gone is this undo done before.
        RowUndo::UnitDrop { au } if db.alloc_unit(au).is_err() => Ok(()),
        RowUndo::UnitDrop { au } => db.drop_alloc_unit(au),
    }
}

// ---------------------------------------------------------------------------------------
// Physical undo

const M_NONE: u8 = 0;
const M_DELETE: u8 = 1;
const M_INSERT: u8 = 2;
const M_CLEAR: u8 = 3;
const M_PLACE: u8 = 4;
const M_REPLACE: u8 = 5;
const M_TAIL: u8 = 6;
const M_LINKS: u8 = 7;
const M_XOR: u8 = 8;
const M_PAGE: u8 = 9;

const KIND_SLOTTED: u8 = 0;
const KIND_BODY: u8 = 1;

/// Page types whose content is a slot array of records; the others (system pages) are a
/// body of bytes.
fn slotted(t: PageType) -> bool {
    matches!(t, PageType::Data | PageType::Index | PageType::TextMix | PageType::TextTree)
}

/// Appends to `out` what undoing `op` needs, from `before`, the page image the op applies
/// to (module doc, "Undo material encoding"). `op` is one `page::check` accepted for
/// `before` (the page-change context checks before it logs); for anything else the
/// material is still well-formed, though applying it may fail.
pub fn undo_material(before: &Page, op: &PageOp<'_>, out: &mut Vec<u8>) {
    let slot_rec = |out: &mut Vec<u8>, tag: u8, slot: u16| {
        out.push(tag);
        out.extend_from_slice(&slot.to_le_bytes());
        put16(out, before.record(slot).unwrap_or_default());
    };
    match *op {
        PageOp::InsertSlot { slot, .. } => {
            out.push(M_DELETE);
            out.extend_from_slice(&slot.to_le_bytes());
        }
        PageOp::DeleteSlot { slot } => slot_rec(out, M_INSERT, slot),
        PageOp::PlaceSlot { slot, .. } => {
            out.push(M_CLEAR);
            out.extend_from_slice(&slot.to_le_bytes());
        }
        PageOp::ClearSlot { slot } => slot_rec(out, M_PLACE, slot),
        PageOp::ReplaceSlot { slot, .. } => slot_rec(out, M_REPLACE, slot),
        PageOp::TruncateSlots { from } => {
            let n = before.slot_count();
            out.push(M_TAIL);
            out.extend_from_slice(&from.to_le_bytes());
            out.extend_from_slice(&n.saturating_sub(from).to_le_bytes());
            for s in from..n {
                put16(out, before.record(s).unwrap_or_default());
            }
        }
        PageOp::SetLinks { .. } => {
            out.push(M_LINKS);
            out.extend_from_slice(&before.prev().to_bytes());
            out.extend_from_slice(&before.next().to_bytes());
        }
        PageOp::WriteBody { offset, bytes } => {
            let start = offset as usize;
            let old = before.body().get(start..start.saturating_add(bytes.len())).unwrap_or_default();
            // Only the span of bytes that really change: a bitmap write usually flips a
            // bit or two in a longer range.
            let first = (0..old.len()).find(|&i| old[i] != bytes[i]);
            let last = (0..old.len()).rev().find(|&i| old[i] != bytes[i]);
            match (first, last) {
                (Some(a), Some(z)) => {
                    out.push(M_XOR);
                    // a < bytes.len() <= body size: the offset fits u16.
                    out.extend_from_slice(&((start + a) as u16).to_le_bytes());
                    out.extend_from_slice(&((z - a + 1) as u16).to_le_bytes());
                    out.extend((a..=z).map(|i| old[i] ^ bytes[i]));
                }
                _ => out.push(M_NONE),
            }
        }
        PageOp::Format { alloc_unit_id, .. } => {
            let live =
                matches!(before.page_type(), Some(t) if t != PageType::Unformatted) && before.alloc_unit_id() != 0;
            match before.page_type() {
                // Un-owning a live page (it is being freed): bring it back.
                Some(t) if live && alloc_unit_id == 0 => {
                    out.push(M_PAGE);
                    out.push(t as u8);
                    out.push(before.level());
                    out.extend_from_slice(&before.index_id().to_le_bytes());
                    out.extend_from_slice(&before.object_id().to_le_bytes());
                    out.extend_from_slice(&before.alloc_unit_id().to_le_bytes());
                    out.extend_from_slice(&before.prev().to_bytes());
                    out.extend_from_slice(&before.next().to_bytes());
                    if slotted(t) {
                        out.push(KIND_SLOTTED);
                        let n = before.slot_count();
                        out.extend_from_slice(&n.to_le_bytes());
                        for s in 0..n {
                            put16(out, before.record(s).unwrap_or_default());
                        }
                    } else {
                        out.push(KIND_BODY);
                        let body = before.body();
                        let len = body.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
                        put16(out, &body[..len]);
                    }
                }
                // A page being allocated (or never formatted): nothing to restore.
                _ => out.push(M_NONE),
            }
        }
    }
}

fn bad_material(page: PageId, what: &str) -> StorageError {
    StorageError::corrupt(format!("undo material for page ({page})"), what.to_string())
}

/// Undoes one page op on `page` from its undo material (as [`undo_material`] made it),
/// through [`Database::change`], so the inverse ops are logged (the hook logs them as
/// compensation). Latches the page EX; the caller holds no latch on it.
pub fn apply_physical_undo(db: &Database, page: PageId, material: &[u8]) -> Result<()> {
    let bad = |what: &str| bad_material(page, what);
    let mut r = Reader { b: material, at: 0 };
    let tag = r.u8().ok_or_else(|| bad("empty"))?;
    if tag == M_NONE {
        return if r.done() { Ok(()) } else { Err(bad("trailing bytes")) };
    }
    let mut g = db.write(page)?;
    let trunc = || bad("truncated");
    match tag {
        M_DELETE => {
            let slot = r.u16().ok_or_else(trunc)?;
            db.change(&mut g, &PageOp::DeleteSlot { slot })?;
        }
        M_INSERT | M_PLACE | M_REPLACE => {
            let slot = r.u16().ok_or_else(trunc)?;
            let record = r.bytes16().ok_or_else(trunc)?;
            if record.is_empty() {
                return Err(bad("no record to restore"));
            }
            let op = match tag {
                M_INSERT => PageOp::InsertSlot { slot, record },
                M_PLACE => PageOp::PlaceSlot { slot, record },
                _ => PageOp::ReplaceSlot { slot, record },
            };
            db.change(&mut g, &op)?;
        }
        M_CLEAR => {
            let slot = r.u16().ok_or_else(trunc)?;
            db.change(&mut g, &PageOp::ClearSlot { slot })?;
        }
        M_TAIL => {
            let from = r.u16().ok_or_else(trunc)?;
            let count = r.u16().ok_or_else(trunc)?;
            let mut records = Vec::with_capacity(count as usize);
            for _ in 0..count {
                records.push(r.bytes16().ok_or_else(trunc)?);
            }
            if !r.done() {
                return Err(bad("trailing bytes"));
            }
            // Restart from the truncated state if part of this undo already happened.
            if g.slot_count() > from {
                db.change(&mut g, &PageOp::TruncateSlots { from })?;
            }
            for (i, record) in records.into_iter().enumerate() {
                if !record.is_empty() {
                    let slot = from.checked_add(i as u16).ok_or_else(|| bad("slot out of range"))?;
                    db.change(&mut g, &PageOp::PlaceSlot { slot, record })?;
                }
            }
            return Ok(());
        }
        M_LINKS => {
            let prev = r.page_id().ok_or_else(trunc)?;
            let next = r.page_id().ok_or_else(trunc)?;
            db.change(&mut g, &PageOp::SetLinks { prev, next })?;
        }
        M_XOR => {
            let offset = r.u16().ok_or_else(trunc)?;
            let delta = r.bytes16().ok_or_else(trunc)?;
            let start = offset as usize;
            let cur = g.body().get(start..start + delta.len()).ok_or_else(|| bad("body range outside the page"))?;
            let bytes: Vec<u8> = cur.iter().zip(delta).map(|(c, d)| c ^ d).collect();
            db.change(&mut g, &PageOp::WriteBody { offset, bytes: &bytes })?;
        }
        M_PAGE => {
            let page_type = r.u8().and_then(PageType::from_u8).ok_or_else(|| bad("bad page type"))?;
            let level = r.u8().ok_or_else(trunc)?;
            let index_id = r.u16().ok_or_else(trunc)?;
            let object_id = r.u32().ok_or_else(trunc)?;
            let alloc_unit_id = r.u64().ok_or_else(trunc)?;
            let prev = r.page_id().ok_or_else(trunc)?;
            let next = r.page_id().ok_or_else(trunc)?;
            let kind = r.u8().ok_or_else(trunc)?;
            let mut records = Vec::new();
            let mut body: &[u8] = &[];
            match kind {
                KIND_SLOTTED => {
                    let n = r.u16().ok_or_else(trunc)?;
                    for _ in 0..n {
                        records.push(r.bytes16().ok_or_else(trunc)?);
                    }
                }
                KIND_BODY => body = r.bytes16().ok_or_else(trunc)?,
                _ => return Err(bad("unknown page kind")),
            }
            if !r.done() {
                return Err(bad("trailing bytes"));
            }
            if body.len() > PAGE_SIZE - HEADER_SIZE {
                return Err(bad("body longer than a page"));
            }
            db.change(&mut g, &PageOp::Format { page_type, level, index_id, object_id, alloc_unit_id })?;
            if !prev.is_null() || !next.is_null() {
                db.change(&mut g, &PageOp::SetLinks { prev, next })?;
            }
            for (slot, record) in records.into_iter().enumerate() {
                if !record.is_empty() {
                    db.change(&mut g, &PageOp::PlaceSlot { slot: slot as u16, record })?;
                }
            }
            if !body.is_empty() {
                db.change(&mut g, &PageOp::WriteBody { offset: 0, bytes: body })?;
            }
            return Ok(());
        }
        _ => return Err(bad("unknown tag")),
    }
    if !r.done() {
        return Err(bad("trailing bytes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::apply;
    use proptest::prelude::*;

    #[test]
    fn row_undo_round_trips() {
        let rid = Rid { file_id: 1, page_no: 77, slot: 3 };
        let all = [
            RowUndo::BTreeRemove { au: 1001, stored_key: b"k" },
            RowUndo::BTreeRestore { au: 1002, stored_key: b"key", value: b"" },
            RowUndo::BTreeRevalue { au: u64::MAX, stored_key: b"", old_value: &[9; 300] },
            RowUndo::HeapClear { au: 5, rid },
            RowUndo::HeapUnghost { au: 6, rid },
            RowUndo::HeapRevert { au: 7, rid, old_record: b"row" },
            RowUndo::LobRemove { au: 8, ptr: LobPointer { total_len: 1 << 33, root: rid }, crc: 0xDEAD_BEEF },
        ];
        for u in all {
            let mut b = Vec::new();
            u.encode(&mut b);
            assert_eq!(RowUndo::decode(&b).unwrap(), u);
            for cut in 0..b.len() {
                assert!(RowUndo::decode(&b[..cut]).is_err());
            }
            b.push(0);
            assert!(RowUndo::decode(&b).is_err(), "trailing bytes");
        }
    }

    fn fresh(t: PageType) -> Box<Page> {
        let mut p = Page::new_boxed();
        let op = PageOp::Format { page_type: t, level: 0, index_id: 0, object_id: 1, alloc_unit_id: 1001 };
        apply(&mut p, PageId::new(1, 40), &op).unwrap();
        p
    }

    /// Logical content as undo restores it: header fields, links, records, body of
    /// non-slotted pages.
    fn content(p: &Page) -> String {
        let recs: Vec<Option<&[u8]>> = (0..p.slot_count()).map(|s| p.record(s)).collect();
        let body = if p.page_type().is_some_and(slotted) { &[][..] } else { p.body() };
        format!(
            "{} {} {} {} {} {} {} {} {:?} {:?}",
            p.page_type_raw(),
            p.level(),
            p.index_id(),
            p.object_id(),
            p.alloc_unit_id(),
            p.prev(),
            p.next(),
            p.free_count(),
            recs,
            body
        )
    }

    /// Applies a material to a page image directly (the database-free twin of
    /// `apply_physical_undo`, for page-level properties).
    fn undo_on(p: &mut Page, m: &[u8]) {
        let id = p.page_id();
        let mut r = Reader { b: m, at: 0 };
        match r.u8().unwrap() {
            M_NONE => {}
            M_DELETE => apply(p, id, &PageOp::DeleteSlot { slot: r.u16().unwrap() }).unwrap(),
            M_INSERT => {
                let slot = r.u16().unwrap();
                apply(p, id, &PageOp::InsertSlot { slot, record: r.bytes16().unwrap() }).unwrap()
            }
            M_CLEAR => apply(p, id, &PageOp::ClearSlot { slot: r.u16().unwrap() }).unwrap(),
            M_PLACE => {
                let slot = r.u16().unwrap();
                apply(p, id, &PageOp::PlaceSlot { slot, record: r.bytes16().unwrap() }).unwrap()
            }
            M_REPLACE => {
                let slot = r.u16().unwrap();
                apply(p, id, &PageOp::ReplaceSlot { slot, record: r.bytes16().unwrap() }).unwrap()
            }
            M_TAIL => {
                let from = r.u16().unwrap();
                let n = r.u16().unwrap();
                for i in 0..n {
                    let rec = r.bytes16().unwrap();
                    apply(p, id, &PageOp::PlaceSlot { slot: from + i, record: rec }).unwrap();
                }
            }
            M_XOR => {
                let off = r.u16().unwrap();
                let d = r.bytes16().unwrap();
                let cur: Vec<u8> =
                    p.body()[off as usize..off as usize + d.len()].iter().zip(d).map(|(a, b)| a ^ b).collect();
                apply(p, id, &PageOp::WriteBody { offset: off, bytes: &cur }).unwrap();
            }
            t => panic!("tag {t}"),
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16, Vec<u8>),
        Delete(u16),
        Place(u16, Vec<u8>),
        Clear(u16),
        Replace(u16, Vec<u8>),
        Truncate(u16),
        Body(u16, Vec<u8>),
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        let rec = || proptest::collection::vec(any::<u8>(), 1..300);
        prop_oneof![
            3 => (any::<u16>(), rec()).prop_map(|(s, r)| Op::Insert(s, r)),
            1 => any::<u16>().prop_map(Op::Delete),
            2 => (any::<u16>(), rec()).prop_map(|(s, r)| Op::Place(s, r)),
            1 => any::<u16>().prop_map(Op::Clear),
            2 => (any::<u16>(), rec()).prop_map(|(s, r)| Op::Replace(s, r)),
            1 => any::<u16>().prop_map(Op::Truncate),
            1 => (0u16..8000, proptest::collection::vec(any::<u8>(), 1..40)).prop_map(|(o, b)| Op::Body(o, b)),
        ]
    }

    proptest! {
        /// For any accepted op, applying it and then its undo material gives back the
        /// page's logical content. Ops are mixed the way the structures use them: B-tree
        /// pages (insert/delete/replace/truncate), heap and text pages (place/clear/
        /// replace, inserts at the end), bitmap pages (body writes).
        #[test]
        fn material_inverts_every_op(ops in proptest::collection::vec(op_strategy(), 1..80), mode in 0u8..3) {
            let mut p = fresh([PageType::Index, PageType::Data, PageType::Gam][mode as usize]);
            let id = p.page_id();
            for op in ops {
                let n = p.slot_count();
                let pick = |s: u16, extra: u16| if n + extra == 0 { 0 } else { s % (n + extra) };
                let page_op = match (&op, mode) {
                    (Op::Insert(s, r), 0) => PageOp::InsertSlot { slot: pick(*s, 1), record: r },
                    (Op::Insert(_, r), 1) => PageOp::InsertSlot { slot: n, record: r },
                    (Op::Delete(s), 0) => PageOp::DeleteSlot { slot: pick(*s, 0) },
                    (Op::Place(s, r), 1) => PageOp::PlaceSlot { slot: pick(*s, 3), record: r },
                    (Op::Clear(s), 1) => PageOp::ClearSlot { slot: pick(*s, 0) },
                    (Op::Replace(s, r), 0 | 1) => PageOp::ReplaceSlot { slot: pick(*s, 0), record: r },
                    (Op::Truncate(s), 0) => PageOp::TruncateSlots { from: pick(*s, 1) },
                    (Op::Body(o, b), 2) => PageOp::WriteBody { offset: *o, bytes: b },
                    _ => continue,
                };
                if crate::page::check(&p, &page_op).is_err() {
                    continue;
                }
                let before = p.clone();
                let mut m = Vec::new();
                undo_material(&before, &page_op, &mut m);
                if apply(&mut p, id, &page_op).is_err() {
                    continue;
                }
                let after = p.clone();
                undo_on(&mut p, &m);
                prop_assert_eq!(content(&p), content(&before), "op {:?}", op);
                p.check_structure().unwrap();
                // Back to the state after the op, to go on.
                p = after;
            }
        }

        #[test]
        fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = RowUndo::decode(&bytes);
            let mut r = Reader { b: &bytes, at: 0 };
            while r.u16().is_some() {}
        }
    }

    #[test]
    fn format_material_restores_an_unowned_page_and_ignores_new_ones() {
        let mut p = fresh(PageType::TextMix);
        let id = p.page_id();
        apply(&mut p, id, &PageOp::InsertSlot { slot: 0, record: b"abc" }).unwrap();
        apply(&mut p, id, &PageOp::PlaceSlot { slot: 2, record: b"xyz" }).unwrap();
        apply(&mut p, id, &PageOp::SetLinks { prev: PageId::new(1, 3), next: PageId::NULL }).unwrap();
        let unown =
            PageOp::Format { page_type: PageType::Unformatted, level: 0, index_id: 0, object_id: 0, alloc_unit_id: 0 };
        let mut m = Vec::new();
        undo_material(&p, &unown, &mut m);
        assert_eq!(m[0], M_PAGE);
        // Allocation of the same page to a unit: nothing to keep.
        let mut m2 = Vec::new();
        let alloc =
            PageOp::Format { page_type: PageType::Index, level: 1, index_id: 2, object_id: 3, alloc_unit_id: 1002 };
        undo_material(&p, &alloc, &mut m2);
        assert_eq!(m2, vec![M_NONE]);
        let mut z = Vec::new();
        undo_material(&Page::default(), &unown, &mut z);
        assert_eq!(z, vec![M_NONE]);
    }
}
