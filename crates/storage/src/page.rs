//! 8 KB pages: the header, the slot array, the checksum, and the physiological page
//! operations ([`PageOp`]) that are the only way page contents change.
//!
//! Layout (byte-exact description in docs/formats.md):
//! - a 96-byte header (page id, type, level, object, index and allocation-unit ids,
//!   prev/next links, slot count, free-space figures, page LSN, CRC32C checksum);
//! - records growing upward from offset 96;
//! - the slot array growing downward from the end of the page, 4 bytes per slot
//!   (u16 record offset, u16 record length; offset 0 marks an empty heap slot).
//!
//! Every change to a page is expressed as a `PageOp` and applied by [`apply`]. The
//! database's page-change context hands each op to the log hook before applying it, so the
//! transaction layer logs exactly what redo replays: `apply` is deterministic, given the
//! same page image and op it produces the same bytes.

use std::fmt;

pub const PAGE_SIZE: usize = 8192;
pub const HEADER_SIZE: usize = 96;
pub const SLOT_SIZE: usize = 4;
/// Largest record a page can hold with its slot (one record per page).
pub const MAX_RECORD_ON_PAGE: usize = PAGE_SIZE - HEADER_SIZE - SLOT_SIZE;
pub const HEADER_VERSION: u8 = 1;

/// A page address: file id and page number in that file, shown `file:page` as SQL
/// Server does (e.g. `1:153`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PageId {
    pub file_id: u16,
    pub page_no: u32,
}

impl PageId {
    pub const NULL: PageId = PageId { file_id: 0, page_no: 0 };

    pub const fn new(file_id: u16, page_no: u32) -> Self {
        PageId { file_id, page_no }
    }

    pub fn is_null(self) -> bool {
        self.file_id == 0
    }

    /// Byte offset of the page in its file.
    pub fn file_offset(self) -> u64 {
        self.page_no as u64 * PAGE_SIZE as u64
    }

    pub fn to_bytes(self) -> [u8; 6] {
        let mut b = [0u8; 6];
        b[0..4].copy_from_slice(&self.page_no.to_le_bytes());
        b[4..6].copy_from_slice(&self.file_id.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() < 6 {
            return None;
        }
        Some(PageId {
            page_no: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            file_id: u16::from_le_bytes([b[4], b[5]]),
        })
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file_id, self.page_no)
    }
}

/// Page types, numbered as SQL Server numbers them (DBCC PAGE m_type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PageType {
    /// Never formatted (all zeros).
    Unformatted = 0,
    Data = 1,
    Index = 2,
    TextMix = 3,
    TextTree = 4,
    Gam = 8,
    Sgam = 9,
    Iam = 10,
    Pfs = 11,
    Boot = 13,
    FileHeader = 15,
}

impl PageType {
    pub fn from_u8(v: u8) -> Option<PageType> {
        Some(match v {
            0 => PageType::Unformatted,
            1 => PageType::Data,
            2 => PageType::Index,
            3 => PageType::TextMix,
            4 => PageType::TextTree,
            8 => PageType::Gam,
            9 => PageType::Sgam,
            10 => PageType::Iam,
            11 => PageType::Pfs,
            13 => PageType::Boot,
            15 => PageType::FileHeader,
            _ => return None,
        })
    }
}

// Header field offsets (see docs/formats.md).
mod off {
    pub const VERSION: usize = 0;
    pub const TYPE: usize = 1;
    pub const LEVEL: usize = 3;
    pub const FLAGS: usize = 4;
    pub const INDEX_ID: usize = 6;
    pub const PAGE_NO: usize = 8;
    pub const FILE_ID: usize = 12;
    pub const ALLOC_UNIT: usize = 16;
    pub const OBJECT_ID: usize = 24;
    pub const PREV: usize = 28; // u32 page, u16 file
    pub const NEXT: usize = 34; // u32 page, u16 file
    pub const SLOT_COUNT: usize = 40;
    pub const FREE_DATA: usize = 42;
    pub const FREE_COUNT: usize = 44;
    pub const GHOST_COUNT: usize = 46;
    pub const LSN: usize = 48;
    pub const CHECKSUM: usize = 56;
}

/// Header flag: the page carries a checksum (always set when written by Mesquite).
pub const FLAG_CHECKSUM: u16 = 0x0001;

/// Errors of page-level operations: a bad op or a page whose structure is damaged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("slot {slot} is out of range (slot count {count})")]
    SlotOutOfRange { slot: u16, count: u16 },
    #[error("slot {0} is empty")]
    EmptySlot(u16),
    #[error("slot {0} is in use")]
    SlotInUse(u16),
    #[error("page has {free} free bytes, {needed} needed")]
    NoSpace { needed: usize, free: usize },
    #[error("record of {0} bytes is too large for a page")]
    RecordTooLarge(usize),
    #[error("body write at {offset} of {len} bytes is outside the page body")]
    BodyRange { offset: usize, len: usize },
    #[error("page structure is damaged: {0}")]
    Damaged(&'static str),
}

/// CRC32C of a page image with the checksum field taken as zero.
fn checksum_of(bytes: &[u8; PAGE_SIZE]) -> u32 {
    let c = crc32c::crc32c(&bytes[..off::CHECKSUM]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &bytes[off::CHECKSUM + 4..])
}

/// Stamps the checksum (and its flag) into a page image about to be written: a
/// [`Page`], or a copy of one in a gathered-write buffer (`BufferPool::flush_pages`).
pub fn seal_checksum_of(bytes: &mut [u8; PAGE_SIZE]) {
    let f = rd16(bytes, off::FLAGS) | FLAG_CHECKSUM;
    wr16(bytes, off::FLAGS, f);
    let c = checksum_of(bytes);
    wr32(bytes, off::CHECKSUM, c);
}

/// An 8 KB page image.
#[derive(Clone)]
#[repr(C, align(8))]
pub struct Page {
    bytes: [u8; PAGE_SIZE],
}

impl Default for Page {
    fn default() -> Self {
        Page { bytes: [0; PAGE_SIZE] }
    }
}

impl fmt::Debug for Page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Page({} type={:?} level={} slots={} free={} lsn={})",
            self.page_id(),
            self.page_type(),
            self.level(),
            self.slot_count(),
            self.free_count(),
            self.lsn()
        )
    }
}

#[inline]
fn rd16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
#[inline]
fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
#[inline]
fn rd64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}
#[inline]
fn wr16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline]
fn wr32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
#[inline]
fn wr64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

impl Page {
    pub fn new_boxed() -> Box<Page> {
        Box::default()
    }

    /// A page image from 8 KB of bytes (log records carry full page images).
    pub fn from_slice(b: &[u8]) -> Box<Page> {
        let mut p = Page::new_boxed();
        let n = b.len().min(PAGE_SIZE);
        p.bytes[..n].copy_from_slice(&b[..n]);
        p
    }

    pub fn as_bytes(&self) -> &[u8; PAGE_SIZE] {
        &self.bytes
    }

    /// Raw mutable access, for the buffer pool's reads from disk and for tests that
    /// damage pages on purpose. Structure code changes pages through [`apply`] only.
    pub fn as_bytes_mut(&mut self) -> &mut [u8; PAGE_SIZE] {
        &mut self.bytes
    }

    // ---- header ----
    pub fn header_version(&self) -> u8 {
        self.bytes[off::VERSION]
    }
    pub fn page_type_raw(&self) -> u8 {
        self.bytes[off::TYPE]
    }
    pub fn page_type(&self) -> Option<PageType> {
        PageType::from_u8(self.bytes[off::TYPE])
    }
    pub fn level(&self) -> u8 {
        self.bytes[off::LEVEL]
    }
    pub fn flags(&self) -> u16 {
        rd16(&self.bytes, off::FLAGS)
    }
    pub fn index_id(&self) -> u16 {
        rd16(&self.bytes, off::INDEX_ID)
    }
    pub fn page_id(&self) -> PageId {
        PageId { file_id: rd16(&self.bytes, off::FILE_ID), page_no: rd32(&self.bytes, off::PAGE_NO) }
    }
    pub fn alloc_unit_id(&self) -> u64 {
        rd64(&self.bytes, off::ALLOC_UNIT)
    }
    pub fn object_id(&self) -> u32 {
        rd32(&self.bytes, off::OBJECT_ID)
    }
    pub fn prev(&self) -> PageId {
        PageId { page_no: rd32(&self.bytes, off::PREV), file_id: rd16(&self.bytes, off::PREV + 4) }
    }
    pub fn next(&self) -> PageId {
        PageId { page_no: rd32(&self.bytes, off::NEXT), file_id: rd16(&self.bytes, off::NEXT + 4) }
    }
    pub fn slot_count(&self) -> u16 {
        rd16(&self.bytes, off::SLOT_COUNT)
    }
    fn free_data(&self) -> usize {
        rd16(&self.bytes, off::FREE_DATA) as usize
    }
    /// Free bytes on the page, counting holes left by deleted or shrunk records.
    pub fn free_count(&self) -> usize {
        rd16(&self.bytes, off::FREE_COUNT) as usize
    }
    pub fn ghost_count(&self) -> u16 {
        rd16(&self.bytes, off::GHOST_COUNT)
    }
    /// LSN of the last logged change applied to this page.
    pub fn lsn(&self) -> u64 {
        rd64(&self.bytes, off::LSN)
    }
    pub fn set_lsn(&mut self, lsn: u64) {
        wr64(&mut self.bytes, off::LSN, lsn)
    }
    pub fn stored_checksum(&self) -> u32 {
        rd32(&self.bytes, off::CHECKSUM)
    }

    /// True for a page that was never written (all zeros), as in a freshly grown file.
    pub fn is_zeroed(&self) -> bool {
        self.bytes.iter().all(|&b| b == 0)
    }

    /// CRC32C of the page with the checksum field taken as zero.
    pub fn compute_checksum(&self) -> u32 {
        checksum_of(&self.bytes)
    }

    /// Stamps the checksum just before the page is written out.
    pub fn seal_checksum(&mut self) {
        seal_checksum_of(&mut self.bytes)
    }

    /// Checks a page just read from disk: `Ok` for a valid or never-written page.
    pub fn verify_checksum(&self) -> Result<(), (u32, u32)> {
        if self.flags() & FLAG_CHECKSUM == 0 {
            // Only a never-written page may lack a checksum; anything else is damage.
            return if self.is_zeroed() { Ok(()) } else { Err((0, self.compute_checksum())) };
        }
        let expected = self.stored_checksum();
        let actual = self.compute_checksum();
        if expected == actual {
            Ok(())
        } else {
            Err((expected, actual))
        }
    }

    // ---- slots ----
    #[inline]
    fn slot_pos(slot: u16) -> usize {
        PAGE_SIZE - SLOT_SIZE * (slot as usize + 1)
    }

    #[inline]
    fn slot_entry(&self, slot: u16) -> (usize, usize) {
        let p = Self::slot_pos(slot);
        (rd16(&self.bytes, p) as usize, rd16(&self.bytes, p + 2) as usize)
    }

    #[inline]
    fn set_slot_entry(&mut self, slot: u16, offset: usize, len: usize) {
        let p = Self::slot_pos(slot);
        wr16(&mut self.bytes, p, offset as u16);
        wr16(&mut self.bytes, p + 2, len as u16);
    }

    fn slot_array_start(&self) -> usize {
        PAGE_SIZE.saturating_sub(SLOT_SIZE * self.slot_count() as usize)
    }

    /// Largest slot count a page can physically hold (a damaged header may claim more).
    const MAX_SLOTS: usize = (PAGE_SIZE - HEADER_SIZE) / SLOT_SIZE;

    /// The record in `slot`, or `None` for an empty heap slot or an out-of-range slot.
    /// Bounds are checked so a damaged page never makes us read outside it.
    #[inline]
    pub fn record(&self, slot: u16) -> Option<&[u8]> {
        if slot >= self.slot_count() || slot as usize >= Self::MAX_SLOTS {
            return None;
        }
        let (o, l) = self.slot_entry(slot);
        if o == 0 || o < HEADER_SIZE || o + l > PAGE_SIZE {
            return None;
        }
        Some(&self.bytes[o..o + l])
    }

    /// Iterates (slot, record) over non-empty slots.
    pub fn records(&self) -> impl Iterator<Item = (u16, &[u8])> + '_ {
        (0..self.slot_count()).filter_map(move |s| self.record(s).map(|r| (s, r)))
    }

    /// Bytes available for one more record including its new slot entry.
    pub fn free_for_insert(&self) -> usize {
        self.free_count().saturating_sub(SLOT_SIZE)
    }

    /// The page body (after the header), for bitmap pages.
    pub fn body(&self) -> &[u8] {
        &self.bytes[HEADER_SIZE..]
    }

    /// Structural self-check used after reads and by DBCC: slot entries inside the record
    /// area, no overlapping records, free counts consistent.
    pub fn check_structure(&self) -> Result<(), PageError> {
        let n = self.slot_count() as usize;
        if n > Self::MAX_SLOTS {
            return Err(PageError::Damaged("slot array overlaps header"));
        }
        let fd = self.free_data();
        let sa = self.slot_array_start();
        if fd < HEADER_SIZE || fd > sa {
            return Err(PageError::Damaged("free data offset out of range"));
        }
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n);
        let mut used = 0usize;
        for s in 0..n as u16 {
            let (o, l) = self.slot_entry(s);
            if o == 0 {
                continue;
            }
            if o < HEADER_SIZE || o + l > fd {
                return Err(PageError::Damaged("record outside the record area"));
            }
            spans.push((o, o + l));
            used += l;
        }
        spans.sort_unstable();
        if spans.windows(2).any(|w| w[0].1 > w[1].0) {
            return Err(PageError::Damaged("overlapping records"));
        }
        if self.free_count() != PAGE_SIZE - HEADER_SIZE - n * SLOT_SIZE - used {
            return Err(PageError::Damaged("free count does not match records"));
        }
        Ok(())
    }

    /// Rewrites records contiguously so all free space is in one block. Deterministic:
    /// records keep their slot order.
    fn compact(&mut self) {
        let n = self.slot_count();
        let mut tmp = Vec::with_capacity(PAGE_SIZE);
        let mut entries = Vec::with_capacity(n as usize);
        for s in 0..n {
            let (o, l) = self.slot_entry(s);
            if o == 0 {
                entries.push((0usize, 0usize));
            } else {
                entries.push((HEADER_SIZE + tmp.len(), l));
                tmp.extend_from_slice(&self.bytes[o..o + l]);
            }
        }
        self.bytes[HEADER_SIZE..HEADER_SIZE + tmp.len()].copy_from_slice(&tmp);
        for (s, (o, l)) in entries.into_iter().enumerate() {
            self.set_slot_entry(s as u16, o, l);
        }
        wr16(&mut self.bytes, off::FREE_DATA, (HEADER_SIZE + tmp.len()) as u16);
    }

    /// Places `record` bytes in the record area (compacting if needed) and returns the
    /// offset. The caller has already accounted the slot entry.
    fn place_bytes(&mut self, record: &[u8], extra_slot: usize) -> Result<usize, PageError> {
        let need = record.len() + extra_slot;
        if self.free_count() < need {
            return Err(PageError::NoSpace { needed: need, free: self.free_count() });
        }
        if self.free_data() + need > self.slot_array_start() {
            self.compact();
        }
        let at = self.free_data();
        self.bytes[at..at + record.len()].copy_from_slice(record);
        wr16(&mut self.bytes, off::FREE_DATA, (at + record.len()) as u16);
        Ok(at)
    }

    fn add_free(&mut self, delta: isize) {
        let f = self.free_count() as isize + delta;
        wr16(&mut self.bytes, off::FREE_COUNT, f as u16);
    }

    fn set_slot_count(&mut self, n: u16) {
        wr16(&mut self.bytes, off::SLOT_COUNT, n);
    }
}

/// A physiological page change: what the log records for redo, and the only way page
/// contents change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOp<'a> {
    /// Initialise the page: zero it and write a fresh header.
    Format { page_type: PageType, level: u8, index_id: u16, object_id: u32, alloc_unit_id: u64 },
    /// Insert a record at `slot`, shifting later slots up (B-tree pages keep key order).
    InsertSlot { slot: u16, record: &'a [u8] },
    /// Put a record into an empty heap slot, or at `slot >= slot_count`, extending the
    /// slot array (any gap becomes empty slots). Other slots keep their numbers, so RIDs
    /// stay valid; the extension makes this the exact inverse of a trimming ClearSlot.
    PlaceSlot { slot: u16, record: &'a [u8] },
    /// Remove a slot, shifting later slots down (B-tree pages).
    DeleteSlot { slot: u16 },
    /// Empty a heap slot in place.
    ClearSlot { slot: u16 },
    /// Replace the record in a slot (it may grow or shrink).
    ReplaceSlot { slot: u16, record: &'a [u8] },
    /// Remove every slot from `from` on (the half moved away by a page split).
    TruncateSlots { from: u16 },
    /// Set the previous and next page links.
    SetLinks { prev: PageId, next: PageId },
    /// Overwrite bytes of the body (bitmap and system pages: GAM, PFS, IAM, boot, file
    /// header). `offset` is relative to the start of the body.
    WriteBody { offset: u16, bytes: &'a [u8] },
}

impl PageOp<'_> {
    /// A copy that owns nothing borrowed from the caller, for code that must keep ops.
    pub fn kind_name(&self) -> &'static str {
        match self {
            PageOp::Format { .. } => "FORMAT_PAGE",
            PageOp::InsertSlot { .. } => "INSERT_ROWS",
            PageOp::PlaceSlot { .. } => "INSERT_ROWS",
            PageOp::DeleteSlot { .. } => "DELETE_ROWS",
            PageOp::ClearSlot { .. } => "DELETE_ROWS",
            PageOp::ReplaceSlot { .. } => "MODIFY_ROW",
            PageOp::TruncateSlots { .. } => "DELETE_SPLIT",
            PageOp::SetLinks { .. } => "MODIFY_HEADER",
            PageOp::WriteBody { .. } => "MODIFY_BITMAP",
        }
    }
}

/// Encoding of page ops inside log records (docs/formats.md, "Page operations"):
/// a tag byte, then the fields little-endian; record bytes are u16-length-prefixed.
impl<'a> PageOp<'a> {
    pub fn encode(&self, out: &mut Vec<u8>) {
        let bytes = |out: &mut Vec<u8>, b: &[u8]| {
            out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            out.extend_from_slice(b);
        };
        match *self {
            PageOp::Format { page_type, level, index_id, object_id, alloc_unit_id } => {
                out.push(1);
                out.push(page_type as u8);
                out.push(level);
                out.extend_from_slice(&index_id.to_le_bytes());
                out.extend_from_slice(&object_id.to_le_bytes());
                out.extend_from_slice(&alloc_unit_id.to_le_bytes());
            }
            PageOp::InsertSlot { slot, record } => {
                out.push(2);
                out.extend_from_slice(&slot.to_le_bytes());
                bytes(out, record);
            }
            PageOp::PlaceSlot { slot, record } => {
                out.push(3);
                out.extend_from_slice(&slot.to_le_bytes());
                bytes(out, record);
            }
            PageOp::DeleteSlot { slot } => {
                out.push(4);
                out.extend_from_slice(&slot.to_le_bytes());
            }
            PageOp::ClearSlot { slot } => {
                out.push(5);
                out.extend_from_slice(&slot.to_le_bytes());
            }
            PageOp::ReplaceSlot { slot, record } => {
                out.push(6);
                out.extend_from_slice(&slot.to_le_bytes());
                bytes(out, record);
            }
            PageOp::TruncateSlots { from } => {
                out.push(7);
                out.extend_from_slice(&from.to_le_bytes());
            }
            PageOp::SetLinks { prev, next } => {
                out.push(8);
                out.extend_from_slice(&prev.to_bytes());
                out.extend_from_slice(&next.to_bytes());
            }
            PageOp::WriteBody { offset, bytes: b } => {
                out.push(9);
                out.extend_from_slice(&offset.to_le_bytes());
                bytes(out, b);
            }
        }
    }

    /// Decodes an op from the front of `b`, borrowing record bytes from it. Returns the
    /// op and the bytes consumed; garbage is an error, never a panic.
    pub fn decode(b: &'a [u8]) -> Result<(PageOp<'a>, usize), PageError> {
        let bad = || PageError::Damaged("undecodable page op");
        let u16_at = |i: usize| b.get(i..i + 2).map(|x| u16::from_le_bytes([x[0], x[1]])).ok_or_else(bad);
        let rec_at = |i: usize| -> Result<(&'a [u8], usize), PageError> {
            let len = u16_at(i)? as usize;
            let r = b.get(i + 2..i + 2 + len).ok_or_else(bad)?;
            Ok((r, i + 2 + len))
        };
        let tag = *b.first().ok_or_else(bad)?;
        Ok(match tag {
            1 => {
                let f = b.get(1..17).ok_or_else(bad)?;
                let page_type = PageType::from_u8(f[0]).ok_or_else(bad)?;
                (
                    PageOp::Format {
                        page_type,
                        level: f[1],
                        index_id: u16::from_le_bytes([f[2], f[3]]),
                        object_id: u32::from_le_bytes([f[4], f[5], f[6], f[7]]),
                        alloc_unit_id: u64::from_le_bytes([f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15]]),
                    },
                    17,
                )
            }
            2 | 3 | 6 => {
                let slot = u16_at(1)?;
                let (record, end) = rec_at(3)?;
                let op = match tag {
                    2 => PageOp::InsertSlot { slot, record },
                    3 => PageOp::PlaceSlot { slot, record },
                    _ => PageOp::ReplaceSlot { slot, record },
                };
                (op, end)
            }
            4 => (PageOp::DeleteSlot { slot: u16_at(1)? }, 3),
            5 => (PageOp::ClearSlot { slot: u16_at(1)? }, 3),
            7 => (PageOp::TruncateSlots { from: u16_at(1)? }, 3),
            8 => {
                let prev = PageId::from_bytes(b.get(1..7).ok_or_else(bad)?).ok_or_else(bad)?;
                let next = PageId::from_bytes(b.get(7..13).ok_or_else(bad)?).ok_or_else(bad)?;
                (PageOp::SetLinks { prev, next }, 13)
            }
            9 => {
                let offset = u16_at(1)?;
                let (bytes, end) = rec_at(3)?;
                (PageOp::WriteBody { offset, bytes }, end)
            }
            _ => return Err(bad()),
        })
    }
}

/// Checks, without changing the page, that `op` would apply. The page-change context
/// calls it before logging, so a refused op is neither logged nor applied.
pub fn check(page: &Page, op: &PageOp) -> Result<(), PageError> {
    let n = page.slot_count();
    match *op {
        PageOp::InsertSlot { slot, record } => {
            check_record_len(record)?;
            if slot > n {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            need(page, record.len() + SLOT_SIZE)
        }
        PageOp::PlaceSlot { slot, record } => {
            check_record_len(record)?;
            if slot as usize >= Page::MAX_SLOTS {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            if slot >= n {
                need(page, record.len() + SLOT_SIZE * (slot - n + 1) as usize)
            } else if page.slot_entry(slot).0 != 0 {
                Err(PageError::SlotInUse(slot))
            } else {
                need(page, record.len())
            }
        }
        PageOp::ReplaceSlot { slot, record } => {
            check_record_len(record)?;
            if slot >= n {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            let (o, l) = page.slot_entry(slot);
            if o == 0 {
                return Err(PageError::EmptySlot(slot));
            }
            if record.len() > l {
                need(page, record.len() - l)
            } else {
                Ok(())
            }
        }
        PageOp::DeleteSlot { slot } if slot >= n => Err(PageError::SlotOutOfRange { slot, count: n }),
        PageOp::ClearSlot { slot } if slot >= n => Err(PageError::SlotOutOfRange { slot, count: n }),
        PageOp::ClearSlot { slot } if page.slot_entry(slot).0 == 0 => Err(PageError::EmptySlot(slot)),
        PageOp::TruncateSlots { from } if from > n => Err(PageError::SlotOutOfRange { slot: from, count: n }),
        PageOp::WriteBody { offset, bytes } if HEADER_SIZE + offset as usize + bytes.len() > PAGE_SIZE => {
            Err(PageError::BodyRange { offset: offset as usize, len: bytes.len() })
        }
        _ => Ok(()),
    }
}

fn need(page: &Page, needed: usize) -> Result<(), PageError> {
    if page.free_count() < needed {
        Err(PageError::NoSpace { needed, free: page.free_count() })
    } else {
        Ok(())
    }
}

/// Applies `op` to `page` (whose own id is `id`, needed by Format). Validates first, so a
/// failed op leaves the page unchanged.
pub fn apply(page: &mut Page, id: PageId, op: &PageOp) -> Result<(), PageError> {
    match *op {
        PageOp::Format { page_type, level, index_id, object_id, alloc_unit_id } => {
            let lsn = page.lsn();
            page.bytes = [0; PAGE_SIZE];
            let b = &mut page.bytes;
            b[off::VERSION] = HEADER_VERSION;
            b[off::TYPE] = page_type as u8;
            b[off::LEVEL] = level;
            wr16(b, off::INDEX_ID, index_id);
            wr32(b, off::PAGE_NO, id.page_no);
            wr16(b, off::FILE_ID, id.file_id);
            wr64(b, off::ALLOC_UNIT, alloc_unit_id);
            wr32(b, off::OBJECT_ID, object_id);
            wr16(b, off::FREE_DATA, HEADER_SIZE as u16);
            wr16(b, off::FREE_COUNT, (PAGE_SIZE - HEADER_SIZE) as u16);
            // The LSN is the caller's to set after apply; keep it monotonic meanwhile.
            wr64(b, off::LSN, lsn);
            Ok(())
        }
        PageOp::InsertSlot { slot, record } => {
            check_record_len(record)?;
            let n = page.slot_count();
            if slot > n {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            let at = page.place_bytes(record, SLOT_SIZE)?;
            // Shift slot entries [slot, n) up by one (toward lower addresses).
            let lo = Page::slot_pos(n);
            let hi = Page::slot_pos(slot) + SLOT_SIZE;
            page.bytes.copy_within(lo + SLOT_SIZE..hi, lo);
            page.set_slot_count(n + 1);
            page.set_slot_entry(slot, at, record.len());
            page.add_free(-((record.len() + SLOT_SIZE) as isize));
            Ok(())
        }
        PageOp::PlaceSlot { slot, record } => {
            check(page, op)?;
            let n = page.slot_count();
            if slot >= n {
                // Place the bytes first (compacting if needed, counting the new slot
                // entries), then grow the slot array: writing entries first could land on
                // the tail of the last record when contiguous space is short.
                let added = (slot - n + 1) as usize;
                let at = page.place_bytes(record, SLOT_SIZE * added)?;
                page.set_slot_count(slot + 1);
                for s in n..slot {
                    page.set_slot_entry(s, 0, 0);
                }
                page.set_slot_entry(slot, at, record.len());
                page.add_free(-((SLOT_SIZE * added) as isize));
            } else {
                let at = page.place_bytes(record, 0)?;
                page.set_slot_entry(slot, at, record.len());
            }
            page.add_free(-(record.len() as isize));
            Ok(())
        }
        PageOp::DeleteSlot { slot } => {
            let n = page.slot_count();
            if slot >= n {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            let (_, l) = page.slot_entry(slot);
            let lo = Page::slot_pos(n - 1);
            let hi = Page::slot_pos(slot);
            page.bytes.copy_within(lo..hi, lo + SLOT_SIZE);
            page.set_slot_count(n - 1);
            page.add_free((l + SLOT_SIZE) as isize);
            Ok(())
        }
        PageOp::ClearSlot { slot } => {
            let n = page.slot_count();
            if slot >= n {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            let (o, l) = page.slot_entry(slot);
            if o == 0 {
                return Err(PageError::EmptySlot(slot));
            }
            page.set_slot_entry(slot, 0, 0);
            page.add_free(l as isize);
            // Trailing empty slots are dropped so the slot array does not only grow.
            let mut m = n;
            while m > 0 && page.slot_entry(m - 1).0 == 0 {
                m -= 1;
                page.add_free(SLOT_SIZE as isize);
            }
            page.set_slot_count(m);
            Ok(())
        }
        PageOp::ReplaceSlot { slot, record } => {
            check_record_len(record)?;
            let n = page.slot_count();
            if slot >= n {
                return Err(PageError::SlotOutOfRange { slot, count: n });
            }
            let (o, l) = page.slot_entry(slot);
            if o == 0 {
                return Err(PageError::EmptySlot(slot));
            }
            if record.len() <= l {
                page.bytes[o..o + record.len()].copy_from_slice(record);
                page.set_slot_entry(slot, o, record.len());
                page.add_free((l - record.len()) as isize);
                return Ok(());
            }
            if page.free_count() + l < record.len() {
                return Err(PageError::NoSpace { needed: record.len() - l, free: page.free_count() });
            }
            // Free the old copy first so compaction can reuse its space.
            page.set_slot_entry(slot, 0, 0);
            page.add_free(l as isize);
            let at = page.place_bytes(record, 0)?;
            page.set_slot_entry(slot, at, record.len());
            page.add_free(-(record.len() as isize));
            Ok(())
        }
        PageOp::TruncateSlots { from } => {
            let n = page.slot_count();
            if from > n {
                return Err(PageError::SlotOutOfRange { slot: from, count: n });
            }
            let mut freed = 0usize;
            for s in from..n {
                freed += page.slot_entry(s).1 + SLOT_SIZE;
            }
            page.set_slot_count(from);
            page.add_free(freed as isize);
            Ok(())
        }
        PageOp::SetLinks { prev, next } => {
            wr32(&mut page.bytes, off::PREV, prev.page_no);
            wr16(&mut page.bytes, off::PREV + 4, prev.file_id);
            wr32(&mut page.bytes, off::NEXT, next.page_no);
            wr16(&mut page.bytes, off::NEXT + 4, next.file_id);
            Ok(())
        }
        PageOp::WriteBody { offset, bytes } => {
            let start = HEADER_SIZE + offset as usize;
            if start + bytes.len() > PAGE_SIZE {
                return Err(PageError::BodyRange { offset: offset as usize, len: bytes.len() });
            }
            page.bytes[start..start + bytes.len()].copy_from_slice(bytes);
            Ok(())
        }
    }
}

fn check_record_len(record: &[u8]) -> Result<(), PageError> {
    if record.is_empty() || record.len() > MAX_RECORD_ON_PAGE {
        return Err(PageError::RecordTooLarge(record.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fresh() -> Box<Page> {
        let mut p = Page::new_boxed();
        let id = PageId::new(1, 42);
        apply(
            &mut p,
            id,
            &PageOp::Format { page_type: PageType::Data, level: 0, index_id: 0, object_id: 7, alloc_unit_id: 99 },
        )
        .unwrap();
        p
    }

    #[test]
    fn header_round_trip_and_checksum() {
        let mut p = fresh();
        assert_eq!(p.page_id(), PageId::new(1, 42));
        assert_eq!(p.page_type(), Some(PageType::Data));
        assert_eq!(p.object_id(), 7);
        assert_eq!(p.alloc_unit_id(), 99);
        apply(&mut p, PageId::new(1, 42), &PageOp::SetLinks { prev: PageId::new(1, 41), next: PageId::new(3, 43) })
            .unwrap();
        assert_eq!(p.prev(), PageId::new(1, 41));
        assert_eq!(p.next(), PageId::new(3, 43));
        p.set_lsn(12345);
        p.seal_checksum();
        assert!(p.verify_checksum().is_ok());
        p.as_bytes_mut()[5000] ^= 1;
        assert!(p.verify_checksum().is_err());
        assert!(Page::default().verify_checksum().is_ok(), "a never-written page is valid");
    }

    #[test]
    fn insert_delete_shift_slots() {
        let mut p = fresh();
        let id = p.page_id();
        apply(&mut p, id, &PageOp::InsertSlot { slot: 0, record: b"bbb" }).unwrap();
        apply(&mut p, id, &PageOp::InsertSlot { slot: 0, record: b"aa" }).unwrap();
        apply(&mut p, id, &PageOp::InsertSlot { slot: 2, record: b"cccc" }).unwrap();
        let got: Vec<&[u8]> = p.records().map(|(_, r)| r).collect();
        assert_eq!(got, vec![&b"aa"[..], b"bbb", b"cccc"]);
        apply(&mut p, id, &PageOp::DeleteSlot { slot: 1 }).unwrap();
        let got: Vec<&[u8]> = p.records().map(|(_, r)| r).collect();
        assert_eq!(got, vec![&b"aa"[..], b"cccc"]);
        p.check_structure().unwrap();
        assert_eq!(
            apply(&mut p, id, &PageOp::DeleteSlot { slot: 5 }),
            Err(PageError::SlotOutOfRange { slot: 5, count: 2 })
        );
    }

    #[test]
    fn heap_slots_keep_numbers() {
        let mut p = fresh();
        let id = p.page_id();
        for (i, r) in [b"r0", b"r1", b"r2"].iter().enumerate() {
            apply(&mut p, id, &PageOp::PlaceSlot { slot: i as u16, record: *r }).unwrap();
        }
        apply(&mut p, id, &PageOp::ClearSlot { slot: 1 }).unwrap();
        assert_eq!(p.record(1), None);
        assert_eq!(p.record(2), Some(&b"r2"[..]));
        apply(&mut p, id, &PageOp::PlaceSlot { slot: 1, record: b"new" }).unwrap();
        assert_eq!(p.record(1), Some(&b"new"[..]));
        assert_eq!(apply(&mut p, id, &PageOp::PlaceSlot { slot: 1, record: b"x" }), Err(PageError::SlotInUse(1)));
        apply(&mut p, id, &PageOp::ClearSlot { slot: 2 }).unwrap();
        assert_eq!(p.slot_count(), 2, "trailing empty slots are trimmed");
        p.check_structure().unwrap();
    }

    #[test]
    fn fills_compacts_and_refuses_when_full() {
        let mut p = fresh();
        let id = p.page_id();
        let rec = [7u8; 100];
        let mut n = 0;
        while apply(&mut p, id, &PageOp::PlaceSlot { slot: n, record: &rec }).is_ok() {
            n += 1;
        }
        assert_eq!(n as usize, (PAGE_SIZE - HEADER_SIZE) / (100 + SLOT_SIZE));
        // Free every other record, then a bigger record fits only after compaction.
        for s in (0..n).step_by(2) {
            apply(&mut p, id, &PageOp::ClearSlot { slot: s }).unwrap();
        }
        apply(&mut p, id, &PageOp::ReplaceSlot { slot: 1, record: &[9u8; 180] }).unwrap();
        assert_eq!(p.record(1), Some(&[9u8; 180][..]));
        p.check_structure().unwrap();
    }

    #[test]
    fn append_into_fragmented_page_keeps_records_intact() {
        let mut p = fresh();
        let id = p.page_id();
        // Fill the page so the contiguous gap is smaller than a slot entry.
        let mut n = 0u16;
        loop {
            let left = p.slot_array_start() - p.free_data();
            let len = if left >= 200 + SLOT_SIZE {
                200
            } else if left > SLOT_SIZE + 2 {
                left - SLOT_SIZE - 2
            } else {
                break;
            };
            apply(&mut p, id, &PageOp::PlaceSlot { slot: n, record: &vec![n as u8 + 1; len] }).unwrap();
            n += 1;
        }
        assert!(p.slot_array_start() - p.free_data() < SLOT_SIZE);
        apply(&mut p, id, &PageOp::ClearSlot { slot: 0 }).unwrap();
        apply(&mut p, id, &PageOp::PlaceSlot { slot: n, record: b"tail" }).unwrap();
        p.check_structure().unwrap();
        for s in 1..n {
            let r = p.record(s).unwrap();
            assert!(r.iter().all(|&b| b == s as u8 + 1), "record {s} damaged");
        }
        assert_eq!(p.record(n), Some(&b"tail"[..]));
    }

    #[test]
    fn place_slot_extends_and_inverts_a_trimming_clear() {
        let mut p = fresh();
        let id = p.page_id();
        for s in 0..4u16 {
            apply(&mut p, id, &PageOp::PlaceSlot { slot: s, record: b"abc" }).unwrap();
        }
        apply(&mut p, id, &PageOp::ClearSlot { slot: 2 }).unwrap();
        let before = p.as_bytes().to_vec();
        apply(&mut p, id, &PageOp::ClearSlot { slot: 3 }).unwrap();
        assert_eq!(p.slot_count(), 2, "slots 2 and 3 trimmed");
        apply(&mut p, id, &PageOp::PlaceSlot { slot: 3, record: b"abc" }).unwrap();
        assert_eq!(p.slot_count(), 4);
        assert_eq!(p.record(2), None);
        assert_eq!(p.record(3), Some(&b"abc"[..]));
        assert_eq!(p.free_count(), Page::from_slice(&before).free_count());
        p.check_structure().unwrap();
    }

    #[test]
    fn page_ops_encode_and_decode() {
        let ops = [
            PageOp::Format { page_type: PageType::Index, level: 2, index_id: 3, object_id: 77, alloc_unit_id: 1 << 40 },
            PageOp::InsertSlot { slot: 5, record: b"hello" },
            PageOp::PlaceSlot { slot: 9, record: b"" },
            PageOp::DeleteSlot { slot: 1 },
            PageOp::ClearSlot { slot: 2 },
            PageOp::ReplaceSlot { slot: 3, record: &[7u8; 300] },
            PageOp::TruncateSlots { from: 4 },
            PageOp::SetLinks { prev: PageId::new(1, 9), next: PageId::new(3, 4_000_000) },
            PageOp::WriteBody { offset: 100, bytes: &[1, 2, 3] },
        ];
        let mut buf = Vec::new();
        for op in &ops {
            op.encode(&mut buf);
        }
        let mut at = 0;
        for op in &ops {
            let (got, used) = PageOp::decode(&buf[at..]).unwrap();
            assert_eq!(&got, op);
            at += used;
        }
        assert_eq!(at, buf.len());
        for cut in 0..buf.len().min(40) {
            let _ = PageOp::decode(&buf[..cut]);
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16, Vec<u8>),
        Delete(u16),
        Replace(u16, Vec<u8>),
        Truncate(u16),
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u16>(), proptest::collection::vec(any::<u8>(), 1..400)).prop_map(|(s, r)| Op::Insert(s, r)),
            2 => any::<u16>().prop_map(Op::Delete),
            2 => (any::<u16>(), proptest::collection::vec(any::<u8>(), 1..600)).prop_map(|(s, r)| Op::Replace(s, r)),
            1 => any::<u16>().prop_map(Op::Truncate),
        ]
    }

    proptest! {
        /// The slotted page behaves like a Vec of records, and a refused op changes nothing.
        #[test]
        fn slotted_page_matches_vec_model(ops in proptest::collection::vec(op_strategy(), 1..200)) {
            let mut p = fresh();
            let id = p.page_id();
            let mut model: Vec<Vec<u8>> = Vec::new();
            for op in ops {
                let before = p.as_bytes().to_vec();
                let n = model.len() as u16;
                let probe = match &op {
                    Op::Insert(s, r) => Some(PageOp::InsertSlot { slot: if n == 0 { 0 } else { s % (n + 1) }, record: r }),
                    Op::Replace(s, r) if n > 0 => Some(PageOp::ReplaceSlot { slot: s % n, record: r }),
                    _ => None,
                };
                let predicted = probe.as_ref().map(|o| check(&p, o).is_ok());
                let res = match &op {
                    Op::Insert(s, r) => {
                        let s = if n == 0 { 0 } else { s % (n + 1) };
                        apply(&mut p, id, &PageOp::InsertSlot { slot: s, record: r }).map(|_| model.insert(s as usize, r.clone()))
                    }
                    Op::Delete(s) if n > 0 => {
                        let s = s % n;
                        apply(&mut p, id, &PageOp::DeleteSlot { slot: s }).map(|_| { model.remove(s as usize); })
                    }
                    Op::Replace(s, r) if n > 0 => {
                        let s = s % n;
                        apply(&mut p, id, &PageOp::ReplaceSlot { slot: s, record: r }).map(|_| model[s as usize] = r.clone())
                    }
                    Op::Truncate(s) => {
                        let s = s % (n + 1);
                        apply(&mut p, id, &PageOp::TruncateSlots { from: s }).map(|_| model.truncate(s as usize))
                    }
                    _ => Ok(()),
                };
                if res.is_err() {
                    prop_assert_eq!(&before[..], &p.as_bytes()[..]);
                }
                if let Some(ok) = predicted {
                    prop_assert_eq!(ok, res.is_ok(), "check() must predict apply()");
                }
                p.check_structure().unwrap();
                let got: Vec<Vec<u8>> = p.records().map(|(_, r)| r.to_vec()).collect();
                prop_assert_eq!(&got, &model);
            }
        }

        /// Random bytes never make the op decoder panic.
        #[test]
        fn op_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = PageOp::decode(&bytes);
        }

        /// Garbage pages never make accessors panic or read out of bounds.
        #[test]
        fn damaged_pages_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), PAGE_SIZE)) {
            let mut p = Page::new_boxed();
            p.as_bytes_mut().copy_from_slice(&bytes);
            let _ = p.check_structure();
            let _ = p.verify_checksum();
            for s in 0..p.slot_count().min(3000) {
                let _ = p.record(s);
            }
        }
    }
}
