//! Log records: what the transaction layer writes into the log manager's blocks.
//!
//! Every record has a 40-byte header followed by a body that depends on its kind. Two
//! undo chains run through the log:
//!
//! - the **user transaction chain** (`xact_id`, `prev_lsn`): BEGIN_XACT, ROW_OP,
//!   ROW_UNDO, CLR, COMMIT/ABORT. Rollback walks it backwards applying the
//!   logical row undo of ROW_OP and ROW_UNDO records; a CLR's `undo_next_lsn` skips what
//!   was already undone;
//! - the **system transaction chain** (`sys_id`, `sys_prev_lsn`): the PAGE_OP records of
//!   one system transaction (a row operation or a structure modification), ended by a
//!   ROW_UNDO or SYS_END record flagged `ENDS_SYS`. A system transaction cut short by a
//!   crash is undone physically by walking this chain. A compensation page op (flag
//!   `COMPENSATION`) stores in `sys_prev_lsn` the *undo-next* LSN (the record before the
//!   one it compensates), so the same walk skips undone work after a second crash.
//!
//! A row operation that changes a single page outside any other system transaction (a
//! B-tree leaf insert, update or delete: nearly every row) is one **ROW_OP** record
//! instead: the page op for redo and the logical row undo together, on the user chain
//! and on no system chain. One record is atomic by itself, so it needs no physical undo
//! material, no separate ROW_UNDO and no system transaction id (a row inserted costs one
//! 40-byte header instead of two, and a row deleted is not logged twice).
//!
//! ## Header (40 bytes, little-endian)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | kind (below) |
//! | 1 | 1 | flags: 0x01 full page image present, 0x02 ends the system transaction, 0x04 compensation (redo-only), 0x08 delayed-durable commit |
//! | 2 | 6 | reserved, 0 |
//! | 8 | 8 | xact_id: user transaction (0 = none) |
//! | 16 | 8 | prev_lsn: previous record of the user chain (0 = none) |
//! | 24 | 8 | sys_id: system transaction (0 = none) |
//! | 32 | 8 | sys_prev_lsn: previous record of the system chain, or undo-next for a compensation |
//!
//! ## Kinds and bodies
//!
//! | kind | name | body |
//! |---|---|---|
//! | 1 | BEGIN_XACT | u16 name length, UTF-8 name; written just before the transaction's first other record (a transaction that logs nothing has none) |
//! | 2 | COMMIT_XACT | u64 commit time (µs since the Unix epoch) |
//! | 3 | ABORT_XACT | nothing: rollback finished |
//! | 4 | PAGE_OP | page id (6: u32 page, u16 file), u16 undo material length, undo material, [8192-byte full page image if flag 0x01], encoded `PageOp` (rest) |
//! | 5 | ROW_UNDO | encoded `storage::undo::RowUndo` (logical undo of one row operation) |
//! | 6 | CLR | u64 undo_next_lsn: where the user chain's undo continues |
//! | 7 | SYS_END | nothing: a system transaction without row undo ended; or, for a deferred free, its completion tag: u64 xact_id, u32 index (the free of that entry of that transaction's DEFERRED_FREE list is done, atomically with the free) |
//! | 8 | CKPT_BEGIN | nothing |
//! | 9 | CKPT_END | u64 begin LSN, u64 redo start LSN, u64 next xact id, u32 n, n × (u64 xact_id, u64 first_lsn, u64 last_lsn), u32 m, m × (u64 sys_id, u64 first_lsn) of open system transactions, then (absent in logs written before it existed: none) u32 k, k × (u64 xact_id, u32 index, 16-byte DEFERRED_FREE entry) of the deferred frees of committed transactions not done at CKPT_BEGIN |
//! | 10 | SAVEPOINT | u16 name length, UTF-8 name; no longer written (savepoints are in-memory markers), still read |
//! | 11 | ROW_OP | page id (6), u16 row-undo length, encoded `storage::undo::RowUndo`, [8192-byte full page image if flag 0x01], encoded `PageOp` (rest): the PAGE_OP layout with the row undo in place of the physical undo material |
//! | 12 | DEFERRED_FREE | u32 first index, u16 n, n × 16-byte entry: what the transaction dropped, to be freed once it commits (entries are numbered from 0 across the transaction's DEFERRED_FREE records, written just before its COMMIT_XACT). An entry is an off-row value (u64 total length, u32 page, u16 file >= 1, u16 slot of its root record) or an allocation unit of a dropped index (u64 unit id, u32 0, u16 0, u16 0) |

use std::fmt;

pub const HEADER_LEN: usize = 40;
pub const PAGE_IMAGE_LEN: usize = storage::PAGE_SIZE;

pub mod flags {
    pub const FULL_PAGE_IMAGE: u8 = 0x01;
    pub const ENDS_SYS: u8 = 0x02;
    pub const COMPENSATION: u8 = 0x04;
    pub const DELAYED: u8 = 0x08;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    BeginXact = 1,
    CommitXact = 2,
    AbortXact = 3,
    PageOp = 4,
    RowUndo = 5,
    Clr = 6,
    SysEnd = 7,
    CkptBegin = 8,
    CkptEnd = 9,
    Savepoint = 10,
    RowOp = 11,
    DeferredFree = 12,
}

impl RecordKind {
    pub fn from_u8(v: u8) -> Option<RecordKind> {
        use RecordKind::*;
        Some(match v {
            1 => BeginXact,
            2 => CommitXact,
            3 => AbortXact,
            4 => PageOp,
            5 => RowUndo,
            6 => Clr,
            7 => SysEnd,
            8 => CkptBegin,
            9 => CkptEnd,
            10 => Savepoint,
            11 => RowOp,
            12 => DeferredFree,
            _ => return None,
        })
    }

    /// SQL Server's operation name, for fn_dblog-style listings.
    pub fn operation(self) -> &'static str {
        use RecordKind::*;
        match self {
            BeginXact => "LOP_BEGIN_XACT",
            CommitXact => "LOP_COMMIT_XACT",
            AbortXact => "LOP_ABORT_XACT",
            PageOp => "LOP_PAGE_OP",
            RowUndo => "LOP_ROW_UNDO",
            Clr => "LOP_COMPENSATION",
            SysEnd => "LOP_END_SYS",
            CkptBegin => "LOP_BEGIN_CKPT",
            CkptEnd => "LOP_END_CKPT",
            Savepoint => "LOP_SAVE_XACT",
            RowOp => "LOP_ROW_OP",
            DeferredFree => "LOP_DEFERRED_FREE",
        }
    }
}

/// The fixed header of every record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub kind: u8,
    pub flags: u8,
    pub xact_id: u64,
    pub prev_lsn: u64,
    pub sys_id: u64,
    pub sys_prev_lsn: u64,
}

impl Header {
    pub fn new(kind: RecordKind) -> Header {
        Header { kind: kind as u8, ..Default::default() }
    }

    pub fn kind(&self) -> Option<RecordKind> {
        RecordKind::from_u8(self.kind)
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        // One reservation, not a regrowth per field (records are often built from empty).
        out.reserve(HEADER_LEN);
        out.push(self.kind);
        out.push(self.flags);
        out.extend_from_slice(&[0u8; 6]);
        out.extend_from_slice(&self.xact_id.to_le_bytes());
        out.extend_from_slice(&self.prev_lsn.to_le_bytes());
        out.extend_from_slice(&self.sys_id.to_le_bytes());
        out.extend_from_slice(&self.sys_prev_lsn.to_le_bytes());
    }

    pub fn decode(b: &[u8]) -> Result<Header, RecordError> {
        if b.len() < HEADER_LEN {
            return Err(RecordError("record shorter than its header"));
        }
        if RecordKind::from_u8(b[0]).is_none() {
            return Err(RecordError("unknown record kind"));
        }
        Ok(Header {
            kind: b[0],
            flags: b[1],
            xact_id: u64_at(b, 8),
            prev_lsn: u64_at(b, 16),
            sys_id: u64_at(b, 24),
            sys_prev_lsn: u64_at(b, 32),
        })
    }
}

/// A log record that cannot be decoded: the log is damaged (recovery stops with an
/// error rather than guessing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordError(pub &'static str);

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "damaged log record: {}", self.0)
    }
}

impl std::error::Error for RecordError {}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

fn take<'a>(b: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], RecordError> {
    let r = b.get(*at..*at + n).ok_or(RecordError("truncated body"))?;
    *at += n;
    Ok(r)
}

fn take_u16(b: &[u8], at: &mut usize) -> Result<u16, RecordError> {
    let r = take(b, at, 2)?;
    Ok(u16::from_le_bytes([r[0], r[1]]))
}

fn take_u32(b: &[u8], at: &mut usize) -> Result<u32, RecordError> {
    let r = take(b, at, 4)?;
    Ok(u32::from_le_bytes([r[0], r[1], r[2], r[3]]))
}

fn take_u64(b: &[u8], at: &mut usize) -> Result<u64, RecordError> {
    Ok(u64_at(take(b, at, 8)?, 0))
}

/// The parts of a PAGE_OP body, borrowed from the record bytes.
#[derive(Debug, Clone, Copy)]
pub struct PageOpBody<'a> {
    pub page: storage::PageId,
    pub undo_material: &'a [u8],
    pub image: Option<&'a [u8]>,
    /// The encoded `storage::PageOp`; decode with `PageOp::decode`.
    pub op: &'a [u8],
}

/// Encodes a PAGE_OP record.
pub fn encode_page_op(
    h: &Header,
    page: storage::PageId,
    undo: &[u8],
    image: Option<&[u8]>,
    op: &storage::PageOp,
    out: &mut Vec<u8>,
) {
    let mut h = *h;
    h.kind = RecordKind::PageOp as u8;
    if image.is_some() {
        h.flags |= flags::FULL_PAGE_IMAGE;
    }
    h.encode(out);
    out.extend_from_slice(&page.to_bytes());
    out.extend_from_slice(&(undo.len() as u16).to_le_bytes());
    out.extend_from_slice(undo);
    if let Some(img) = image {
        out.extend_from_slice(img);
    }
    op.encode(out);
}

/// Encodes a ROW_OP record: `row_undo(out)` appends the encoded row undo.
pub fn encode_row_op(
    h: &Header,
    page: storage::PageId,
    image: Option<&[u8]>,
    op: &storage::PageOp,
    row_undo: impl FnOnce(&mut Vec<u8>),
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    let mut h = *h;
    h.kind = RecordKind::RowOp as u8;
    if image.is_some() {
        h.flags |= flags::FULL_PAGE_IMAGE;
    }
    h.encode(out);
    out.extend_from_slice(&page.to_bytes());
    let len_at = out.len();
    out.extend_from_slice(&[0, 0]);
    row_undo(out);
    let len = u16::try_from(out.len() - len_at - 2).map_err(|_| RecordError("row undo longer than 65535 bytes"))?;
    out[len_at..len_at + 2].copy_from_slice(&len.to_le_bytes());
    if let Some(img) = image {
        out.extend_from_slice(img);
    }
    op.encode(out);
    Ok(())
}

/// Decodes a PAGE_OP or ROW_OP record (same layout; in a ROW_OP `undo_material` is the
/// encoded row undo).
pub fn decode_page_op<'a>(h: &Header, b: &'a [u8]) -> Result<PageOpBody<'a>, RecordError> {
    let mut at = HEADER_LEN;
    let page = storage::PageId::from_bytes(take(b, &mut at, 6)?).ok_or(RecordError("bad page id"))?;
    let ulen = take_u16(b, &mut at)? as usize;
    let undo_material = take(b, &mut at, ulen)?;
    let image = if h.has(flags::FULL_PAGE_IMAGE) { Some(take(b, &mut at, PAGE_IMAGE_LEN)?) } else { None };
    let op = b.get(at..).ok_or(RecordError("missing page op"))?;
    if op.is_empty() {
        return Err(RecordError("missing page op"));
    }
    Ok(PageOpBody { page, undo_material, image, op })
}

/// Encodes a record whose body is a name (BEGIN_XACT, SAVEPOINT).
pub fn encode_named(h: &Header, name: &str, out: &mut Vec<u8>) {
    h.encode(out);
    let n = &name.as_bytes()[..name.len().min(u16::MAX as usize)];
    out.extend_from_slice(&(n.len() as u16).to_le_bytes());
    out.extend_from_slice(n);
}

pub fn decode_named(b: &[u8]) -> Result<String, RecordError> {
    let mut at = HEADER_LEN;
    let n = take_u16(b, &mut at)? as usize;
    Ok(String::from_utf8_lossy(take(b, &mut at, n)?).into_owned())
}

/// Encodes a record whose body is one u64 (COMMIT_XACT time, CLR undo-next).
pub fn encode_u64(h: &Header, v: u64, out: &mut Vec<u8>) {
    h.encode(out);
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn decode_u64(b: &[u8]) -> Result<u64, RecordError> {
    let mut at = HEADER_LEN;
    take_u64(b, &mut at)
}

/// Encodes a record with a header only (ABORT_XACT, SYS_END, CKPT_BEGIN).
pub fn encode_bare(h: &Header, out: &mut Vec<u8>) {
    h.encode(out);
}

/// Encodes a ROW_UNDO record around already-encoded row-undo bytes.
pub fn encode_row_undo(h: &Header, undo: &[u8], out: &mut Vec<u8>) {
    h.encode(out);
    out.extend_from_slice(undo);
}

/// The body of a ROW_UNDO record.
pub fn row_undo_body(b: &[u8]) -> &[u8] {
    b.get(HEADER_LEN..).unwrap_or(&[])
}

/// What a deferred free frees once its transaction has committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeferredFree {
    /// An off-row value a delete or update dropped.
    Lob(storage::record::LobPointer),
    /// The allocation unit of a dropped index (its tree, or its LOB unit).
    AllocUnit(u64),
}

/// Bytes of a DEFERRED_FREE entry (in DEFERRED_FREE and CKPT_END).
pub const DEFERRED_FREE_BYTES: usize = 16;

fn put_deferred_free(f: &DeferredFree, out: &mut Vec<u8>) {
    // An allocation unit is written as a pointer into file 0, which no value can have.
    let (a, page, file, slot) = match f {
        DeferredFree::Lob(p) => (p.total_len, p.root.page_no, p.root.file_id, p.root.slot),
        DeferredFree::AllocUnit(au) => (*au, 0, 0, 0),
    };
    out.extend_from_slice(&a.to_le_bytes());
    out.extend_from_slice(&page.to_le_bytes());
    out.extend_from_slice(&file.to_le_bytes());
    out.extend_from_slice(&slot.to_le_bytes());
}

fn take_deferred_free(b: &[u8], at: &mut usize) -> Result<DeferredFree, RecordError> {
    let a = take_u64(b, at)?;
    let page_no = take_u32(b, at)?;
    let file_id = take_u16(b, at)?;
    let slot = take_u16(b, at)?;
    Ok(if file_id == 0 {
        DeferredFree::AllocUnit(a)
    } else {
        DeferredFree::Lob(storage::record::LobPointer {
            total_len: a,
            root: storage::record::Rid { file_id, page_no, slot },
        })
    })
}

/// Encodes a DEFERRED_FREE record: entries `first..first + frees.len()` of the
/// transaction's list.
pub fn encode_deferred_free(h: &Header, first: u32, frees: &[DeferredFree], out: &mut Vec<u8>) {
    h.encode(out);
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&(frees.len() as u16).to_le_bytes());
    for f in frees {
        put_deferred_free(f, out);
    }
}

/// The body of a DEFERRED_FREE record: the first entry's index and the entries.
pub fn decode_deferred_free(b: &[u8]) -> Result<(u32, Vec<DeferredFree>), RecordError> {
    let mut at = HEADER_LEN;
    let first = take_u32(b, &mut at)?;
    let n = take_u16(b, &mut at)? as usize;
    if n > b.len() / DEFERRED_FREE_BYTES {
        return Err(RecordError("deferred free lists more entries than it has bytes"));
    }
    let mut frees = Vec::with_capacity(n);
    for _ in 0..n {
        frees.push(take_deferred_free(b, &mut at)?);
    }
    Ok((first, frees))
}

/// Encodes a SYS_END carrying a deferred free's completion tag.
pub fn encode_sys_end_tagged(h: &Header, tag: (u64, u32), out: &mut Vec<u8>) {
    h.encode(out);
    out.extend_from_slice(&tag.0.to_le_bytes());
    out.extend_from_slice(&tag.1.to_le_bytes());
}

/// The completion tag of a SYS_END, if it carries one.
pub fn sys_end_tag(b: &[u8]) -> Option<(u64, u32)> {
    let mut at = HEADER_LEN;
    let xact = take_u64(b, &mut at).ok()?;
    let index = take_u32(b, &mut at).ok()?;
    Some((xact, index))
}

/// A deferred free a checkpoint records: entry `index` of committed transaction
/// `xact_id`'s list, not freed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingFree {
    pub xact_id: u64,
    pub index: u32,
    pub what: DeferredFree,
}

/// An active transaction as a checkpoint records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveXact {
    pub xact_id: u64,
    pub first_lsn: u64,
    pub last_lsn: u64,
}

/// The body of CKPT_END.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckpointEnd {
    pub begin_lsn: u64,
    /// Oldest recLSN of the dirty pages when the checkpoint ended (or the begin LSN if
    /// none was dirty): redo starts here.
    pub redo_start_lsn: u64,
    pub next_xact_id: u64,
    pub active: Vec<ActiveXact>,
    /// System transactions open at the checkpoint: (sys_id, first LSN).
    pub open_sys: Vec<(u64, u64)>,
    /// Deferred frees of committed transactions not done at CKPT_BEGIN.
    pub pending_frees: Vec<PendingFree>,
}

pub fn encode_ckpt_end(h: &Header, c: &CheckpointEnd, out: &mut Vec<u8>) {
    h.encode(out);
    out.extend_from_slice(&c.begin_lsn.to_le_bytes());
    out.extend_from_slice(&c.redo_start_lsn.to_le_bytes());
    out.extend_from_slice(&c.next_xact_id.to_le_bytes());
    out.extend_from_slice(&(c.active.len() as u32).to_le_bytes());
    for a in &c.active {
        out.extend_from_slice(&a.xact_id.to_le_bytes());
        out.extend_from_slice(&a.first_lsn.to_le_bytes());
        out.extend_from_slice(&a.last_lsn.to_le_bytes());
    }
    out.extend_from_slice(&(c.open_sys.len() as u32).to_le_bytes());
    for (id, first) in &c.open_sys {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&first.to_le_bytes());
    }
    out.extend_from_slice(&(c.pending_frees.len() as u32).to_le_bytes());
    for f in &c.pending_frees {
        out.extend_from_slice(&f.xact_id.to_le_bytes());
        out.extend_from_slice(&f.index.to_le_bytes());
        put_deferred_free(&f.what, out);
    }
}

pub fn decode_ckpt_end(b: &[u8]) -> Result<CheckpointEnd, RecordError> {
    let mut at = HEADER_LEN;
    let begin_lsn = take_u64(b, &mut at)?;
    let redo_start_lsn = take_u64(b, &mut at)?;
    let next_xact_id = take_u64(b, &mut at)?;
    let n = take_u32(b, &mut at)? as usize;
    if n > b.len() / 24 {
        return Err(RecordError("checkpoint lists more transactions than it has bytes"));
    }
    let mut active = Vec::with_capacity(n);
    for _ in 0..n {
        active.push(ActiveXact {
            xact_id: take_u64(b, &mut at)?,
            first_lsn: take_u64(b, &mut at)?,
            last_lsn: take_u64(b, &mut at)?,
        });
    }
    let m = take_u32(b, &mut at)? as usize;
    if m > b.len() / 16 {
        return Err(RecordError("checkpoint lists more system transactions than it has bytes"));
    }
    let mut open_sys = Vec::with_capacity(m);
    for _ in 0..m {
        open_sys.push((take_u64(b, &mut at)?, take_u64(b, &mut at)?));
    }
    // Logs written before deferred frees were recorded end here.
    let mut pending_frees = Vec::new();
    if at < b.len() {
        let k = take_u32(b, &mut at)? as usize;
        if k > b.len() / (12 + DEFERRED_FREE_BYTES) {
            return Err(RecordError("checkpoint lists more deferred frees than it has bytes"));
        }
        for _ in 0..k {
            let xact_id = take_u64(b, &mut at)?;
            let index = take_u32(b, &mut at)?;
            pending_frees.push(PendingFree { xact_id, index, what: take_deferred_free(b, &mut at)? });
        }
    }
    Ok(CheckpointEnd { begin_lsn, redo_start_lsn, next_xact_id, active, open_sys, pending_frees })
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::{PageId, PageOp};

    #[test]
    fn page_op_round_trip() {
        let h = Header { xact_id: 7, prev_lsn: 0, sys_id: 9, sys_prev_lsn: 123, ..Header::new(RecordKind::PageOp) };
        let img = vec![5u8; PAGE_IMAGE_LEN];
        let op = PageOp::InsertSlot { slot: 3, record: b"row" };
        let mut out = Vec::new();
        encode_page_op(&h, PageId::new(1, 77), b"undo", Some(&img), &op, &mut out);
        let hd = Header::decode(&out).unwrap();
        assert_eq!(hd.kind(), Some(RecordKind::PageOp));
        assert!(hd.has(flags::FULL_PAGE_IMAGE));
        assert_eq!((hd.xact_id, hd.sys_id, hd.sys_prev_lsn), (7, 9, 123));
        let body = decode_page_op(&hd, &out).unwrap();
        assert_eq!(body.page, PageId::new(1, 77));
        assert_eq!(body.undo_material, b"undo");
        assert_eq!(body.image.unwrap().len(), PAGE_IMAGE_LEN);
        assert_eq!(PageOp::decode(body.op).unwrap().0, op);
        for cut in 0..out.len().min(100) {
            if let Ok(h) = Header::decode(&out[..cut]) {
                let _ = decode_page_op(&h, &out[..cut]);
            }
        }
    }

    #[test]
    fn row_op_round_trip() {
        let h = Header { xact_id: 7, prev_lsn: 55, ..Header::new(RecordKind::RowOp) };
        let op = PageOp::InsertSlot { slot: 3, record: b"\x02\x00k1row" };
        let undo = storage::undo::RowUndo::BTreeRemove { au: 42, stored_key: b"k1" };
        for image in [None, Some(vec![9u8; PAGE_IMAGE_LEN])] {
            let mut out = Vec::new();
            encode_row_op(&h, PageId::new(1, 8), image.as_deref(), &op, |o| undo.encode(o), &mut out).unwrap();
            let hd = Header::decode(&out).unwrap();
            assert_eq!(hd.kind(), Some(RecordKind::RowOp));
            assert_eq!(hd.has(flags::FULL_PAGE_IMAGE), image.is_some());
            assert_eq!((hd.xact_id, hd.prev_lsn, hd.sys_id), (7, 55, 0));
            let body = decode_page_op(&hd, &out).unwrap();
            assert_eq!(body.page, PageId::new(1, 8));
            assert_eq!(storage::undo::RowUndo::decode(body.undo_material).unwrap(), undo);
            assert_eq!(body.image.map(|i| i.len()), image.as_ref().map(|i| i.len()));
            assert_eq!(PageOp::decode(body.op).unwrap().0, op);
        }
        // A row undo that does not fit the u16 length is refused, not truncated.
        let mut out = Vec::new();
        let big = encode_row_op(&h, PageId::new(1, 8), None, &op, |o| o.extend(vec![0u8; 70_000]), &mut out);
        assert!(big.is_err());
    }

    fn lob(len: u64, page: u32, slot: u16) -> storage::record::LobPointer {
        storage::record::LobPointer { total_len: len, root: storage::record::Rid { file_id: 1, page_no: page, slot } }
    }

    #[test]
    fn deferred_free_and_tagged_end_round_trip() {
        let h = Header { xact_id: 8, prev_lsn: 70, ..Header::new(RecordKind::DeferredFree) };
        let frees = [
            DeferredFree::Lob(lob(10_000, 40, 0)),
            DeferredFree::AllocUnit(77),
            DeferredFree::Lob(lob(u64::from(u32::MAX) + 5, 41, 3)),
        ];
        let mut out = Vec::new();
        encode_deferred_free(&h, 5, &frees, &mut out);
        assert_eq!(Header::decode(&out).unwrap().kind(), Some(RecordKind::DeferredFree));
        assert_eq!(decode_deferred_free(&out).unwrap(), (5, frees.to_vec()));
        for cut in HEADER_LEN..out.len() {
            assert!(decode_deferred_free(&out[..cut]).is_err(), "cut at {cut}");
        }
        let mut end = Vec::new();
        encode_sys_end_tagged(&Header::new(RecordKind::SysEnd), (8, 1), &mut end);
        assert_eq!(sys_end_tag(&end), Some((8, 1)));
        let mut bare = Vec::new();
        encode_bare(&Header::new(RecordKind::SysEnd), &mut bare);
        assert_eq!(sys_end_tag(&bare), None);
    }

    #[test]
    fn checkpoint_round_trip() {
        let c = CheckpointEnd {
            begin_lsn: 10,
            redo_start_lsn: 5,
            next_xact_id: 99,
            active: vec![ActiveXact { xact_id: 3, first_lsn: 6, last_lsn: 9 }],
            open_sys: vec![(12, 4)],
            pending_frees: vec![
                PendingFree { xact_id: 3, index: 7, what: DeferredFree::Lob(lob(9000, 55, 2)) },
                PendingFree { xact_id: 4, index: 0, what: DeferredFree::AllocUnit(1 << 40) },
            ],
        };
        let mut out = Vec::new();
        encode_ckpt_end(&Header::new(RecordKind::CkptEnd), &c, &mut out);
        assert_eq!(decode_ckpt_end(&out).unwrap(), c);
        assert!(decode_ckpt_end(&out[..out.len() - 1]).is_err());
        // A checkpoint written before deferred frees existed ends after its system
        // transactions: it reads as having none.
        let old_len = out.len() - 4 - 2 * (12 + DEFERRED_FREE_BYTES);
        assert_eq!(decode_ckpt_end(&out[..old_len]).unwrap(), CheckpointEnd { pending_frees: Vec::new(), ..c.clone() });
        let mut named = Vec::new();
        encode_named(&Header::new(RecordKind::BeginXact), "tran1", &mut named);
        assert_eq!(decode_named(&named).unwrap(), "tran1");
        assert!(Header::decode(&[42u8; 40]).is_err());
    }
}
