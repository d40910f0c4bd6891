//! Allocation page geometry and byte layouts: where the system pages of a data file sit,
//! how a page or extent number maps to its PFS byte, GAM bit and IAM bit, and the
//! encoders/decoders of the file header page, boot page, IAM header and directory record.
//!
//! Everything here is pure (no I/O) so the address arithmetic can be tested at sizes no
//! test would create on disk (a GAM interval is about 4 GB). The tables describing these
//! layouts are in the documentation of the parent module ([`crate::alloc`]).
//!
//! Decoders never panic: every read is bounds-checked and a damaged page yields an error
//! string that the caller wraps into `StorageError::Corrupt` with the page id.

use crate::alloc::{AllocUnit, AllocUnitKind};
use crate::file::FileGrowth;
use crate::page::{PageId, HEADER_SIZE, PAGE_SIZE};

/// Bytes of a page body (after the 96-byte header).
pub const BODY_SIZE: usize = PAGE_SIZE - HEADER_SIZE;

/// Pages per extent.
pub const EXTENT_PAGES: u32 = 8;
/// Pages covered by one PFS page (one byte each), as in SQL Server.
pub const PFS_INTERVAL: u32 = 8_088;
/// Extents covered by one GAM (and SGAM, and IAM) page: one bit each.
pub const GAM_INTERVAL_EXTENTS: u32 = 63_904;
/// Pages covered by one GAM page: 511,232 pages, just under 4 GB.
pub const GAM_INTERVAL_PAGES: u32 = GAM_INTERVAL_EXTENTS * EXTENT_PAGES;
/// Bytes of a GAM, SGAM or IAM bitmap (63,904 bits).
pub const BITMAP_BYTES: usize = (GAM_INTERVAL_EXTENTS / 8) as usize;

/// Page 0 of every data file.
pub const FILE_HEADER_PAGE: u32 = 0;
/// The first PFS page; the others are at multiples of [`PFS_INTERVAL`].
pub const FIRST_PFS_PAGE: u32 = 1;
/// The first GAM page; the others are at multiples of [`GAM_INTERVAL_PAGES`].
pub const FIRST_GAM_PAGE: u32 = 2;
/// The boot page, in the primary file (file id 1) only.
pub const BOOT_PAGE: u32 = 9;
/// Extents 0 and 1 (pages 0-15) of every file hold system pages only.
pub const RESERVED_EXTENTS: u32 = 2;
/// Smallest data file we create: the two reserved extents, one for the allocation-unit
/// directory (in the primary) and one for data, so a new database can hold a table even
/// without FILEGROWTH.
pub const MIN_FILE_PAGES: u32 = (RESERVED_EXTENTS + 2) * EXTENT_PAGES;

/// Object id stamped in the header of allocation system pages (SQL Server uses 99 too).
pub const SYSTEM_OBJECT_ID: u32 = 99;
/// The allocation-unit directory: its reserved unit id and object id (sysallocunits is
/// object 7 in SQL Server).
pub const DIRECTORY_AU: u64 = 1;
pub const DIRECTORY_OBJECT_ID: u32 = 7;
/// Ids below this are reserved for system units; user units are numbered from here.
pub const FIRST_USER_AU: u64 = 1001;

// PFS byte bits, as SQL Server defines them.
pub const PFS_FULLNESS_MASK: u8 = 0x07;
pub const PFS_GHOST: u8 = 0x08;
pub const PFS_IAM: u8 = 0x10;
pub const PFS_MIXED: u8 = 0x20;
pub const PFS_ALLOCATED: u8 = 0x40;

/// Bytes of a page that records can use; the base of the PFS fullness percentages.
pub const PAGE_CAPACITY: usize = BODY_SIZE;

/// Strings in the file header and boot page: a u16 byte length and up to this many bytes
/// of UTF-8 (a sysname of 128 characters needs at most 512).
pub const NAME_CAP: usize = 512;
/// Paths (log file path in the boot page).
pub const PATH_CAP: usize = 1024;

// The layouts fit their pages, and the geometry has the properties the code relies on.
const _: () = {
    // One PFS byte per page of the interval fits the body.
    assert!(PFS_INTERVAL as usize <= BODY_SIZE);
    // An extent never straddles two PFS pages.
    assert!(PFS_INTERVAL % EXTENT_PAGES == 0);
    assert!(iam::BITMAP + BITMAP_BYTES <= BODY_SIZE);
    assert!(boot::END <= BODY_SIZE);
    assert!(fh::LIST < BODY_SIZE);
};

// ---------------------------------------------------------------------------------------
// Address arithmetic

/// The PFS page that holds the byte of `page_no`.
pub fn pfs_page_of(page_no: u32) -> u32 {
    if page_no < PFS_INTERVAL {
        FIRST_PFS_PAGE
    } else {
        page_no / PFS_INTERVAL * PFS_INTERVAL
    }
}

/// Index of `page_no`'s byte in its PFS page body.
pub fn pfs_index(page_no: u32) -> usize {
    (page_no % PFS_INTERVAL) as usize
}

/// Extent number (in its file) of a page.
pub fn extent_of(page_no: u32) -> u32 {
    page_no / EXTENT_PAGES
}

/// First page of an extent.
pub fn extent_first_page(ext: u32) -> u32 {
    ext.saturating_mul(EXTENT_PAGES)
}

/// GAM interval of an extent.
pub fn gam_interval_of(ext: u32) -> u32 {
    ext / GAM_INTERVAL_EXTENTS
}

/// Bit of an extent in its GAM/SGAM/IAM bitmap.
pub fn gam_bit_of(ext: u32) -> usize {
    (ext % GAM_INTERVAL_EXTENTS) as usize
}

/// First page of GAM interval `k` (what an IAM page records as its start page).
pub fn interval_start_page(k: u32) -> u32 {
    k.saturating_mul(GAM_INTERVAL_PAGES)
}

/// The GAM page of interval `k`: page 2 in the first interval, the first page of the
/// interval in the others.
pub fn gam_page_of_interval(k: u32) -> u32 {
    if k == 0 {
        FIRST_GAM_PAGE
    } else {
        interval_start_page(k)
    }
}

/// The SGAM page of interval `k`: the page after its GAM page.
pub fn sgam_page_of_interval(k: u32) -> u32 {
    gam_page_of_interval(k).saturating_add(1)
}

pub fn is_pfs_page(p: u32) -> bool {
    p == FIRST_PFS_PAGE || (p != 0 && p % PFS_INTERVAL == 0)
}

pub fn is_gam_page(p: u32) -> bool {
    p == FIRST_GAM_PAGE || (p != 0 && p % GAM_INTERVAL_PAGES == 0)
}

pub fn is_sgam_page(p: u32) -> bool {
    p != 0 && is_gam_page(p - 1)
}

/// A page that the allocation structures themselves occupy: file header, PFS, GAM, SGAM
/// and (in file 1) the boot page. They are marked allocated in PFS and owned by no IAM.
pub fn is_system_page(file_id: u16, p: u32) -> bool {
    p == FILE_HEADER_PAGE || is_pfs_page(p) || is_gam_page(p) || is_sgam_page(p) || (file_id == 1 && p == BOOT_PAGE)
}

/// An extent that holds a system page (or is one of the two reserved extents). It is
/// marked allocated in GAM, owned by no IAM, and never handed out: since only uniform
/// extents exist, its other pages stay unused (7 pages per 8,088, under 0.1%).
///
/// PFS pages sit at 8,088k = the first page of extent 1,011k; GAM and SGAM pages of later
/// intervals at 511,232k and 511,232k + 1 = the first two pages of extent 63,904k.
pub fn is_system_extent(ext: u32) -> bool {
    ext < RESERVED_EXTENTS || ext % (PFS_INTERVAL / EXTENT_PAGES) == 0 || ext % GAM_INTERVAL_EXTENTS == 0
}

/// Full extents in a file of `size_pages` pages (a trailing partial extent is unusable
/// until the file grows over it).
pub fn full_extents(size_pages: u32) -> u32 {
    size_pages / EXTENT_PAGES
}

/// GAM intervals that have at least one page in a file of `size_pages` pages.
pub fn intervals_in(size_pages: u32) -> u32 {
    if size_pages == 0 {
        0
    } else {
        (size_pages - 1) / GAM_INTERVAL_PAGES + 1
    }
}

/// Reads bit `i` of a bitmap (bit i%8 of byte i/8, least significant first).
pub fn bit(bitmap: &[u8], i: usize) -> bool {
    bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// Returns `byte` with bit `i % 8` set or cleared.
pub fn with_bit(byte: u8, i: usize, on: bool) -> u8 {
    if on {
        byte | (1 << (i % 8))
    } else {
        byte & !(1 << (i % 8))
    }
}

// ---------------------------------------------------------------------------------------
// PFS fullness buckets

/// Bytes used on a page at the upper bound of each bucket 1-3 (50%, 80%, 95% full).
const BUCKET_LIMITS: [usize; 3] = [PAGE_CAPACITY * 50 / 100, PAGE_CAPACITY * 80 / 100, PAGE_CAPACITY * 95 / 100];

/// The PFS fullness bucket of a page with `free_bytes` free: 0 empty, 1 up to 50% full,
/// 2 up to 80%, 3 up to 95%, 4 fuller than that.
pub fn fullness_bucket(free_bytes: usize) -> u8 {
    let used = PAGE_CAPACITY.saturating_sub(free_bytes);
    if used == 0 {
        0
    } else if used <= BUCKET_LIMITS[0] {
        1
    } else if used <= BUCKET_LIMITS[1] {
        2
    } else if used <= BUCKET_LIMITS[2] {
        3
    } else {
        4
    }
}

/// Free bytes a page in `bucket` is guaranteed to have (the inverse of
/// [`fullness_bucket`]): what an insert can count on without reading the page.
pub fn bucket_guaranteed_free(bucket: u8) -> usize {
    match bucket {
        0 => PAGE_CAPACITY,
        1..=3 => PAGE_CAPACITY - BUCKET_LIMITS[bucket as usize - 1],
        _ => 0,
    }
}

/// Fullness bucket names as DBCC PAGE prints them.
pub fn bucket_name(bucket: u8) -> &'static str {
    match bucket {
        0 => "0_PCT_FULL",
        1 => "50_PCT_FULL",
        2 => "80_PCT_FULL",
        3 => "95_PCT_FULL",
        4 => "100_PCT_FULL",
        _ => "INVALID",
    }
}

// ---------------------------------------------------------------------------------------
// Little-endian field access with bounds checks

pub(crate) type Decode<T> = std::result::Result<T, String>;

fn slice(b: &[u8], at: usize, len: usize) -> Decode<&[u8]> {
    at.checked_add(len)
        .and_then(|end| b.get(at..end))
        .ok_or_else(|| format!("field at {at} (+{len}) is outside the page"))
}

pub(crate) fn get_u8(b: &[u8], at: usize) -> Decode<u8> {
    Ok(slice(b, at, 1)?[0])
}
pub(crate) fn get_u16(b: &[u8], at: usize) -> Decode<u16> {
    let s = slice(b, at, 2)?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}
pub(crate) fn get_u32(b: &[u8], at: usize) -> Decode<u32> {
    let s = slice(b, at, 4)?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}
pub(crate) fn get_u64(b: &[u8], at: usize) -> Decode<u64> {
    let s = slice(b, at, 8)?;
    let mut x = [0u8; 8];
    x.copy_from_slice(s);
    Ok(u64::from_le_bytes(x))
}
fn get_page_id(b: &[u8], at: usize) -> Decode<PageId> {
    PageId::from_bytes(slice(b, at, 6)?).ok_or_else(|| format!("page id at {at} is outside the page"))
}

/// A u16 length and that many bytes of UTF-8, at most `cap`.
fn get_str(b: &[u8], at: usize, cap: usize) -> Decode<String> {
    let len = get_u16(b, at)? as usize;
    if len > cap {
        return Err(format!("string at {at} claims {len} bytes, at most {cap} allowed"));
    }
    let s = slice(b, at + 2, len)?;
    String::from_utf8(s.to_vec()).map_err(|_| format!("string at {at} is not UTF-8"))
}

/// Writes into a zero-initialised buffer; callers size it for the largest layout.
struct Out(Vec<u8>);

impl Out {
    fn new(len: usize) -> Out {
        Out(vec![0; len])
    }
    fn put(&mut self, at: usize, bytes: &[u8]) {
        // Offsets are compile-time layout constants within the buffer's size, and string
        // lengths are checked against their caps by `check_str` before encoding.
        self.0[at..at + bytes.len()].copy_from_slice(bytes);
    }
    fn u8(&mut self, at: usize, v: u8) {
        self.put(at, &[v]);
    }
    fn u16(&mut self, at: usize, v: u16) {
        self.put(at, &v.to_le_bytes());
    }
    fn u32(&mut self, at: usize, v: u32) {
        self.put(at, &v.to_le_bytes());
    }
    fn u64(&mut self, at: usize, v: u64) {
        self.put(at, &v.to_le_bytes());
    }
    fn str(&mut self, at: usize, s: &str) {
        self.u16(at, s.len() as u16);
        self.put(at + 2, s.as_bytes());
    }
}

/// Rejects a string that does not fit its field.
pub(crate) fn check_str(what: &str, s: &str, cap: usize) -> Result<(), String> {
    if s.len() > cap {
        Err(format!("{what} is {} bytes long; at most {cap} bytes are allowed", s.len()))
    } else {
        Ok(())
    }
}

fn growth_code(g: FileGrowth) -> (u8, u32) {
    match g {
        FileGrowth::None => (0, 0),
        FileGrowth::Pages(p) => (1, p),
        FileGrowth::Percent(p) => (2, p),
    }
}

fn growth_from(kind: u8, v: u32) -> Decode<FileGrowth> {
    match kind {
        0 => Ok(FileGrowth::None),
        1 => Ok(FileGrowth::Pages(v)),
        2 => Ok(FileGrowth::Percent(v)),
        k => Err(format!("unknown growth kind {k}")),
    }
}

fn max_code(m: Option<u32>) -> u32 {
    m.unwrap_or(u32::MAX)
}

fn max_from(v: u32) -> Option<u32> {
    (v != u32::MAX).then_some(v)
}

// ---------------------------------------------------------------------------------------
// File header page

pub const FILE_HEADER_MAGIC: u32 = u32::from_le_bytes(*b"MQFH");
pub const FILE_HEADER_VERSION: u16 = 1;

pub mod fh {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 4;
    pub const FILE_ID: usize = 6;
    pub const BINDING: usize = 8;
    pub const DB_ID: usize = 16;
    pub const GROWTH_KIND: usize = 18;
    pub const FLAGS: usize = 19;
    pub const GROWTH: usize = 20;
    pub const SIZE: usize = 24;
    pub const MAX: usize = 28;
    pub const PFS_INTERVAL: usize = 32;
    pub const GAM_INTERVAL: usize = 36;
    pub const FILE_COUNT: usize = 40;
    pub const NAME: usize = 64;
    pub const LIST: usize = NAME + 2 + super::NAME_CAP; // 578
    /// Flag: this is the primary data file (it carries the file list).
    pub const FLAG_PRIMARY: u8 = 0x01;
    /// File list entry flag: the path is relative to the primary file's directory.
    pub const ENTRY_RELATIVE: u8 = 0x01;
}

/// One data file as listed in the primary file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileListEntry {
    pub file_id: u16,
    pub name: String,
    /// UTF-8 path; relative to the primary file's directory when `relative`.
    pub path: String,
    pub relative: bool,
    pub growth: FileGrowth,
    /// Size at creation (the file's own header has the current size).
    pub size_pages: u32,
    pub max_pages: Option<u32>,
}

/// The body of a file header page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    pub file_id: u16,
    /// Identifies the database the file belongs to (same in every file and the boot page),
    /// so a file of another database is never attached by mistake.
    pub binding_id: u64,
    pub db_id: u16,
    pub primary: bool,
    pub growth: FileGrowth,
    /// Pages formatted for allocation: PFS, GAM and SGAM cover every page below it.
    pub size_pages: u32,
    pub max_pages: Option<u32>,
    pub name: String,
    /// All data files of the database (primary file only; empty elsewhere).
    pub files: Vec<FileListEntry>,
}

impl FileHeader {
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        check_str("the logical file name", &self.name, NAME_CAP)?;
        let mut o = Out::new(BODY_SIZE);
        o.u32(fh::MAGIC, FILE_HEADER_MAGIC);
        o.u16(fh::VERSION, FILE_HEADER_VERSION);
        o.u16(fh::FILE_ID, self.file_id);
        o.u64(fh::BINDING, self.binding_id);
        o.u16(fh::DB_ID, self.db_id);
        let (gk, gv) = growth_code(self.growth);
        o.u8(fh::GROWTH_KIND, gk);
        o.u8(fh::FLAGS, if self.primary { fh::FLAG_PRIMARY } else { 0 });
        o.u32(fh::GROWTH, gv);
        o.u32(fh::SIZE, self.size_pages);
        o.u32(fh::MAX, max_code(self.max_pages));
        o.u32(fh::PFS_INTERVAL, PFS_INTERVAL);
        o.u32(fh::GAM_INTERVAL, GAM_INTERVAL_PAGES);
        if self.files.len() > u16::MAX as usize {
            return Err("too many files".into());
        }
        o.u16(fh::FILE_COUNT, self.files.len() as u16);
        o.str(fh::NAME, &self.name);
        let mut at = fh::LIST;
        for e in &self.files {
            check_str("a logical file name", &e.name, NAME_CAP)?;
            let need = 20 + e.name.len() + e.path.len();
            if at + need > BODY_SIZE || e.path.len() > u16::MAX as usize {
                return Err(
                    "the file list does not fit in the primary file's header page (names or paths too long)".into()
                );
            }
            let (gk, gv) = growth_code(e.growth);
            o.u16(at, e.file_id);
            o.u8(at + 2, gk);
            o.u8(at + 3, if e.relative { fh::ENTRY_RELATIVE } else { 0 });
            o.u32(at + 4, gv);
            o.u32(at + 8, e.size_pages);
            o.u32(at + 12, max_code(e.max_pages));
            o.str(at + 16, &e.name);
            let p = at + 18 + e.name.len();
            o.str(p, &e.path);
            at = p + 2 + e.path.len();
        }
        o.0.truncate(at);
        Ok(o.0)
    }

    pub fn decode(b: &[u8]) -> Decode<FileHeader> {
        if get_u32(b, fh::MAGIC)? != FILE_HEADER_MAGIC {
            return Err("not a Mesquite file header (bad magic)".into());
        }
        let v = get_u16(b, fh::VERSION)?;
        if v != FILE_HEADER_VERSION {
            return Err(format!("unsupported file header version {v}"));
        }
        if get_u32(b, fh::PFS_INTERVAL)? != PFS_INTERVAL || get_u32(b, fh::GAM_INTERVAL)? != GAM_INTERVAL_PAGES {
            return Err("the file was formatted with another PFS/GAM geometry".into());
        }
        let count = get_u16(b, fh::FILE_COUNT)? as usize;
        let mut files = Vec::with_capacity(count.min(256));
        let mut at = fh::LIST;
        for _ in 0..count {
            let file_id = get_u16(b, at)?;
            let growth = growth_from(get_u8(b, at + 2)?, get_u32(b, at + 4)?)?;
            let relative = get_u8(b, at + 3)? & fh::ENTRY_RELATIVE != 0;
            let size_pages = get_u32(b, at + 8)?;
            let max_pages = max_from(get_u32(b, at + 12)?);
            let name = get_str(b, at + 16, NAME_CAP)?;
            let p = at + 18 + name.len();
            let path = get_str(b, p, BODY_SIZE)?;
            at = p + 2 + path.len();
            files.push(FileListEntry { file_id, name, path, relative, growth, size_pages, max_pages });
        }
        Ok(FileHeader {
            file_id: get_u16(b, fh::FILE_ID)?,
            binding_id: get_u64(b, fh::BINDING)?,
            db_id: get_u16(b, fh::DB_ID)?,
            primary: get_u8(b, fh::FLAGS)? & fh::FLAG_PRIMARY != 0,
            growth: growth_from(get_u8(b, fh::GROWTH_KIND)?, get_u32(b, fh::GROWTH)?)?,
            size_pages: get_u32(b, fh::SIZE)?,
            max_pages: max_from(get_u32(b, fh::MAX)?),
            name: get_str(b, fh::NAME, NAME_CAP)?,
            files,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Directory record (one allocation unit)

pub const DIR_RECORD_LEN: usize = 40;
pub const DIR_RECORD_VERSION: u8 = 1;

impl AllocUnitKind {
    pub fn from_u8(v: u8) -> Option<AllocUnitKind> {
        match v {
            1 => Some(AllocUnitKind::InRowData),
            2 => Some(AllocUnitKind::LobData),
            3 => Some(AllocUnitKind::RowOverflowData),
            _ => None,
        }
    }
}

/// Encodes an allocation unit descriptor (directory record and the boot page's copy of
/// the directory's own descriptor).
pub fn encode_unit(u: &AllocUnit) -> [u8; DIR_RECORD_LEN] {
    let mut b = [0u8; DIR_RECORD_LEN];
    b[0] = DIR_RECORD_VERSION;
    b[1] = u.kind as u8;
    b[2..4].copy_from_slice(&u.index_id.to_le_bytes());
    b[4..8].copy_from_slice(&u.object_id.to_le_bytes());
    b[8..16].copy_from_slice(&u.id.to_le_bytes());
    b[16..22].copy_from_slice(&u.first_iam.to_bytes());
    b[22..28].copy_from_slice(&u.root.to_bytes());
    b[28..34].copy_from_slice(&u.first_page.to_bytes());
    b
}

pub fn decode_unit(b: &[u8]) -> Decode<AllocUnit> {
    if b.len() != DIR_RECORD_LEN {
        return Err(format!("directory record of {} bytes, {DIR_RECORD_LEN} expected", b.len()));
    }
    if b[0] != DIR_RECORD_VERSION {
        return Err(format!("directory record version {}", b[0]));
    }
    let kind = AllocUnitKind::from_u8(b[1]).ok_or_else(|| format!("unknown allocation unit type {}", b[1]))?;
    Ok(AllocUnit {
        id: get_u64(b, 8)?,
        kind,
        object_id: get_u32(b, 4)?,
        index_id: get_u16(b, 2)?,
        first_iam: get_page_id(b, 16)?,
        root: get_page_id(b, 22)?,
        first_page: get_page_id(b, 28)?,
    })
}

// ---------------------------------------------------------------------------------------
// Boot page

pub const BOOT_MAGIC: u32 = u32::from_le_bytes(*b"MQBT");
pub const BOOT_VERSION: u16 = 1;
/// Bytes reserved for the transaction layer at [`boot::TXN_RESERVED`].
pub const TXN_RESERVED_LEN: usize = 64;

pub mod boot {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 4;
    pub const DB_ID: usize = 6;
    pub const BINDING: usize = 8;
    pub const CREATE_TIME: usize = 16;
    pub const CREATE_LSN: usize = 24;
    pub const NEXT_AU: usize = 32;
    pub const CHECKPOINT_LSN: usize = 40;
    pub const DBCC_LAST_KNOWN_GOOD: usize = 48;
    pub const TXN_RESERVED: usize = 56;
    pub const LOG: usize = 120;
    pub const LOG_FILE_ID: usize = LOG;
    pub const LOG_GROWTH_KIND: usize = LOG + 2;
    pub const LOG_FLAGS: usize = LOG + 3;
    pub const LOG_GROWTH: usize = LOG + 4;
    pub const LOG_SIZE: usize = LOG + 8;
    pub const LOG_MAX: usize = LOG + 12;
    pub const LOG_RESERVED: usize = LOG + 16;
    pub const DIRECTORY: usize = 144;
    pub const NAME: usize = 192;
    pub const LOG_NAME: usize = NAME + 2 + super::NAME_CAP; // 706
    pub const LOG_PATH: usize = LOG_NAME + 2 + super::NAME_CAP; // 1220
    pub const END: usize = LOG_PATH + 2 + super::PATH_CAP; // 2246
    /// Log flags: the log file fields are set.
    pub const LOG_PRESENT: u8 = 0x01;
}

/// The log file as the boot page records it (fields owned by the transaction layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFileInfo {
    /// File id of the log (2 in SQL Server's numbering).
    pub file_id: u16,
    pub name: String,
    /// UTF-8 path, as the transaction layer chooses to store it.
    pub path: String,
    pub size_pages: u32,
    pub growth: FileGrowth,
    pub max_pages: Option<u32>,
    /// Reserved for the log manager (e.g. the first LSN of the log); 0 until defined.
    pub reserved: u64,
}

/// The fields of the boot page (SQL Server's DBINFO).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootInfo {
    pub version: u16,
    /// Database id at creation (the id a database is attached under may differ).
    pub db_id: u16,
    pub binding_id: u64,
    pub name: String,
    /// Creation time, microseconds since the Unix epoch (UTC).
    pub create_time_us: u64,
    /// LSN of the boot page's formatting: no log record of this database is older.
    pub create_lsn: u64,
    /// Next allocation unit id to hand out.
    pub next_alloc_unit_id: u64,
    /// dbi_checkptLSN: LSN of the last checkpoint (0 = none). Transaction layer.
    pub checkpoint_lsn: u64,
    /// dbi_dbccLastKnownGood: time of the last clean CHECKDB, microseconds since the Unix
    /// epoch (0 = never). DBCC.
    pub dbcc_last_known_good_us: u64,
    /// Reserved for the transaction layer (log backup LSN, differential base, ...): zero
    /// until it defines them.
    pub txn_reserved: [u8; TXN_RESERVED_LEN],
    /// The log file, once the transaction layer records it.
    pub log: Option<LogFileInfo>,
    /// Descriptor of the allocation-unit directory (unit 1).
    pub directory: AllocUnit,
}

impl BootInfo {
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        check_str("the database name", &self.name, NAME_CAP)?;
        let mut o = Out::new(boot::END);
        o.u32(boot::MAGIC, BOOT_MAGIC);
        o.u16(boot::VERSION, self.version);
        o.u16(boot::DB_ID, self.db_id);
        o.u64(boot::BINDING, self.binding_id);
        o.u64(boot::CREATE_TIME, self.create_time_us);
        o.u64(boot::CREATE_LSN, self.create_lsn);
        o.u64(boot::NEXT_AU, self.next_alloc_unit_id);
        o.u64(boot::CHECKPOINT_LSN, self.checkpoint_lsn);
        o.u64(boot::DBCC_LAST_KNOWN_GOOD, self.dbcc_last_known_good_us);
        o.put(boot::TXN_RESERVED, &self.txn_reserved);
        o.put(boot::DIRECTORY, &encode_unit(&self.directory));
        o.str(boot::NAME, &self.name);
        if let Some(log) = &self.log {
            let (fixed, strings) = encode_log(log)?;
            o.put(boot::LOG, &fixed);
            o.put(boot::LOG_NAME, &strings);
        }
        Ok(o.0)
    }

    pub fn decode(b: &[u8]) -> Decode<BootInfo> {
        if get_u32(b, boot::MAGIC)? != BOOT_MAGIC {
            return Err("not a Mesquite boot page (bad magic)".into());
        }
        let version = get_u16(b, boot::VERSION)?;
        if version != BOOT_VERSION {
            return Err(format!("unsupported boot page version {version}"));
        }
        let mut txn_reserved = [0u8; TXN_RESERVED_LEN];
        txn_reserved.copy_from_slice(slice(b, boot::TXN_RESERVED, TXN_RESERVED_LEN)?);
        let log = if get_u8(b, boot::LOG_FLAGS)? & boot::LOG_PRESENT != 0 {
            Some(LogFileInfo {
                file_id: get_u16(b, boot::LOG_FILE_ID)?,
                name: get_str(b, boot::LOG_NAME, NAME_CAP)?,
                path: get_str(b, boot::LOG_PATH, PATH_CAP)?,
                size_pages: get_u32(b, boot::LOG_SIZE)?,
                growth: growth_from(get_u8(b, boot::LOG_GROWTH_KIND)?, get_u32(b, boot::LOG_GROWTH)?)?,
                max_pages: max_from(get_u32(b, boot::LOG_MAX)?),
                reserved: get_u64(b, boot::LOG_RESERVED)?,
            })
        } else {
            None
        };
        Ok(BootInfo {
            version,
            db_id: get_u16(b, boot::DB_ID)?,
            binding_id: get_u64(b, boot::BINDING)?,
            name: get_str(b, boot::NAME, NAME_CAP)?,
            create_time_us: get_u64(b, boot::CREATE_TIME)?,
            create_lsn: get_u64(b, boot::CREATE_LSN)?,
            next_alloc_unit_id: get_u64(b, boot::NEXT_AU)?,
            checkpoint_lsn: get_u64(b, boot::CHECKPOINT_LSN)?,
            dbcc_last_known_good_us: get_u64(b, boot::DBCC_LAST_KNOWN_GOOD)?,
            txn_reserved,
            log,
            directory: decode_unit(slice(b, boot::DIRECTORY, DIR_RECORD_LEN)?)?,
        })
    }
}

/// The log fields of the boot page: the fixed part (24 bytes at [`boot::LOG`]) and the
/// two strings (at [`boot::LOG_NAME`], running to [`boot::END`]).
pub(crate) fn encode_log(log: &LogFileInfo) -> Result<(Vec<u8>, Vec<u8>), String> {
    check_str("the log file name", &log.name, NAME_CAP)?;
    check_str("the log file path", &log.path, PATH_CAP)?;
    let mut f = Out::new(boot::DIRECTORY - boot::LOG);
    let (gk, gv) = growth_code(log.growth);
    f.u16(0, log.file_id);
    f.u8(2, gk);
    f.u8(3, boot::LOG_PRESENT);
    f.u32(4, gv);
    f.u32(8, log.size_pages);
    f.u32(12, max_code(log.max_pages));
    f.u64(16, log.reserved);
    let mut s = Out::new(boot::END - boot::LOG_NAME);
    s.str(0, &log.name);
    s.str(boot::LOG_PATH - boot::LOG_NAME, &log.path);
    Ok((f.0, s.0))
}

// ---------------------------------------------------------------------------------------
// IAM page

pub mod iam {
    pub const AU: usize = 0;
    pub const SEQ: usize = 8;
    pub const FILE_ID: usize = 12;
    pub const START_PAGE: usize = 16;
    pub const BITMAP: usize = 32;
}

/// The header of an IAM page body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IamHeader {
    pub au: u64,
    /// Position in the unit's IAM chain, from 0.
    pub seq: u32,
    pub file_id: u16,
    /// First page of the GAM interval the bitmap covers.
    pub start_page: u32,
}

impl IamHeader {
    pub fn encode(&self) -> [u8; iam::BITMAP] {
        let mut o = Out::new(iam::BITMAP);
        o.u64(iam::AU, self.au);
        o.u32(iam::SEQ, self.seq);
        o.u16(iam::FILE_ID, self.file_id);
        o.u32(iam::START_PAGE, self.start_page);
        let mut b = [0u8; iam::BITMAP];
        b.copy_from_slice(&o.0);
        b
    }

    pub fn decode(b: &[u8]) -> Decode<IamHeader> {
        let h = IamHeader {
            au: get_u64(b, iam::AU)?,
            seq: get_u32(b, iam::SEQ)?,
            file_id: get_u16(b, iam::FILE_ID)?,
            start_page: get_u32(b, iam::START_PAGE)?,
        };
        if h.start_page % GAM_INTERVAL_PAGES != 0 {
            return Err(format!("IAM start page {} is not the start of a GAM interval", h.start_page));
        }
        slice(b, iam::BITMAP, BITMAP_BYTES)?;
        Ok(h)
    }

    /// GAM interval the page covers.
    pub fn interval(&self) -> u32 {
        self.start_page / GAM_INTERVAL_PAGES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pfs_addresses() {
        assert_eq!(pfs_page_of(0), 1);
        assert_eq!(pfs_page_of(1), 1);
        assert_eq!(pfs_page_of(8087), 1);
        assert_eq!(pfs_page_of(8088), 8088);
        assert_eq!(pfs_page_of(16175), 8088);
        assert_eq!(pfs_page_of(16176), 16176);
        assert_eq!(pfs_index(8087), 8087);
        assert_eq!(pfs_index(8088), 0);
        assert_eq!(pfs_index(8090), 2);
        assert!(is_pfs_page(1) && is_pfs_page(8088) && is_pfs_page(16176) && !is_pfs_page(0) && !is_pfs_page(8089));
        // A PFS page's own byte is in itself, at index 0 (index 1 for page 1).
        for p in [1u32, 8088, 16176, 509_544, 4_294_962_552] {
            assert!(is_pfs_page(p));
            assert_eq!(pfs_page_of(p), p);
        }
    }

    #[test]
    fn gam_addresses() {
        assert_eq!(GAM_INTERVAL_PAGES, 511_232);
        assert_eq!(BITMAP_BYTES, 7988);
        assert_eq!(gam_page_of_interval(0), 2);
        assert_eq!(sgam_page_of_interval(0), 3);
        assert_eq!(gam_page_of_interval(1), 511_232);
        assert_eq!(sgam_page_of_interval(1), 511_233);
        assert_eq!(gam_page_of_interval(2), 1_022_464);
        assert_eq!(gam_interval_of(63_903), 0);
        assert_eq!(gam_interval_of(63_904), 1);
        assert_eq!(gam_bit_of(63_904), 0);
        assert_eq!(gam_bit_of(63_905), 1);
        assert_eq!(gam_bit_of(127_807), 63_903);
        assert_eq!(gam_interval_of(extent_of(1_022_463)), 1);
        assert_eq!(gam_interval_of(extent_of(1_022_464)), 2);
        assert!(is_gam_page(2) && is_gam_page(511_232) && !is_gam_page(3) && !is_gam_page(0));
        assert!(is_sgam_page(3) && is_sgam_page(511_233) && !is_sgam_page(511_232) && !is_sgam_page(1));
        assert_eq!(interval_start_page(3), 1_533_696);
        // The last interval a u32 page number reaches does not overflow.
        let last = gam_interval_of(extent_of(u32::MAX));
        assert_eq!(last, 8401);
        assert!(last as u64 * GAM_INTERVAL_PAGES as u64 <= u32::MAX as u64);
        assert_eq!(gam_page_of_interval(last), 4_294_860_032);
        assert_eq!(intervals_in(0), 0);
        assert_eq!(intervals_in(1), 1);
        assert_eq!(intervals_in(511_232), 1);
        assert_eq!(intervals_in(511_233), 2);
    }

    #[test]
    fn system_extents() {
        assert!(is_system_extent(0) && is_system_extent(1));
        assert!(!is_system_extent(2));
        assert!(is_system_extent(1011), "holds PFS page 8088");
        assert!(!is_system_extent(1012));
        assert!(is_system_extent(63_904), "holds GAM 511232 and SGAM 511233");
        assert!(is_system_extent(2022));
        // Every system page lies in a system extent and every system extent holds one
        // (beyond the two reserved extents), over several intervals.
        for ext in 2..(3 * GAM_INTERVAL_EXTENTS) {
            let first = extent_first_page(ext);
            let has = (first..first + 8).any(|p| is_system_page(1, p));
            assert_eq!(has, is_system_extent(ext), "extent {ext}");
        }
        assert!(is_system_page(1, 9) && !is_system_page(3, 9));
        assert!(is_system_page(3, 0) && is_system_page(3, 1) && is_system_page(3, 2) && is_system_page(3, 3));
        assert!(!is_system_page(1, 16));
        assert_eq!(full_extents(23), 2);
        assert_eq!(full_extents(24), 3);
    }

    #[test]
    fn fullness_buckets_round_trip() {
        assert_eq!(fullness_bucket(PAGE_CAPACITY), 0);
        assert_eq!(fullness_bucket(PAGE_CAPACITY + 5), 0);
        assert_eq!(fullness_bucket(PAGE_CAPACITY - 1), 1);
        assert_eq!(fullness_bucket(0), 4);
        for free in 0..=PAGE_CAPACITY {
            let b = fullness_bucket(free);
            assert!(bucket_guaranteed_free(b) <= free, "free {free} bucket {b}");
            if b > 0 {
                // The guarantee is tight: the next emptier bucket promises more.
                assert!(bucket_guaranteed_free(b - 1) > free || b == 1);
            }
        }
        assert_eq!(bucket_guaranteed_free(4), 0);
    }

    #[test]
    fn bits() {
        let mut bm = vec![0u8; 4];
        bm[1] = with_bit(bm[1], 9, true);
        assert!(bit(&bm, 9) && !bit(&bm, 8) && !bit(&bm, 100));
        assert_eq!(bm[1], 0b10);
        bm[1] = with_bit(bm[1], 9, false);
        assert_eq!(bm[1], 0);
    }

    #[test]
    fn file_header_round_trip() {
        let h = FileHeader {
            file_id: 1,
            binding_id: 0xDEAD_BEEF_1234,
            db_id: 5,
            primary: true,
            growth: FileGrowth::Percent(10),
            size_pages: 1024,
            max_pages: None,
            name: "db_data".into(),
            files: vec![
                FileListEntry {
                    file_id: 1,
                    name: "db_data".into(),
                    path: "db.mdf".into(),
                    relative: true,
                    growth: FileGrowth::Percent(10),
                    size_pages: 1024,
                    max_pages: None,
                },
                FileListEntry {
                    file_id: 3,
                    name: "db_2".into(),
                    path: "/abs/db_2.ndf".into(),
                    relative: false,
                    growth: FileGrowth::None,
                    size_pages: 64,
                    max_pages: Some(128),
                },
            ],
        };
        let b = h.encode().unwrap();
        let mut page = vec![0u8; BODY_SIZE];
        page[..b.len()].copy_from_slice(&b);
        assert_eq!(FileHeader::decode(&page).unwrap(), h);
        // A long list is refused rather than truncated.
        let mut big = h.clone();
        for i in 0..40 {
            big.files.push(FileListEntry { file_id: 10 + i, path: "p".repeat(300), ..h.files[1].clone() });
        }
        assert!(big.encode().is_err());
    }

    #[test]
    fn boot_round_trip() {
        let dir = AllocUnit {
            id: 1,
            kind: AllocUnitKind::InRowData,
            object_id: 7,
            index_id: 0,
            first_iam: PageId::new(1, 16),
            root: PageId::NULL,
            first_page: PageId::new(1, 17),
        };
        let mut b = BootInfo {
            version: BOOT_VERSION,
            db_id: 9,
            binding_id: 77,
            name: "Ünïcode db".into(),
            create_time_us: 1_700_000_000_000_000,
            create_lsn: 3,
            next_alloc_unit_id: 1001,
            checkpoint_lsn: 0,
            dbcc_last_known_good_us: 0,
            txn_reserved: [0; TXN_RESERVED_LEN],
            log: None,
            directory: dir,
        };
        let mut page = vec![0u8; BODY_SIZE];
        let e = b.encode().unwrap();
        page[..e.len()].copy_from_slice(&e);
        assert_eq!(BootInfo::decode(&page).unwrap(), b);
        b.log = Some(LogFileInfo {
            file_id: 2,
            name: "db_log".into(),
            path: "db_log.ldf".into(),
            size_pages: 1024,
            growth: FileGrowth::Pages(8192),
            max_pages: Some(1 << 20),
            reserved: 0,
        });
        b.txn_reserved[3] = 9;
        let e = b.encode().unwrap();
        page[..e.len()].copy_from_slice(&e);
        assert_eq!(BootInfo::decode(&page).unwrap(), b);
    }

    #[test]
    fn decoders_refuse_garbage_without_panicking() {
        let zero = vec![0u8; BODY_SIZE];
        assert!(FileHeader::decode(&zero).is_err());
        assert!(BootInfo::decode(&zero).is_err());
        assert!(decode_unit(&zero[..40]).is_err());
        assert!(decode_unit(&zero[..3]).is_err());
        let mut x = 0x1234_5678_9abc_def0u64;
        for round in 0..300 {
            let mut b: Vec<u8> = (0..BODY_SIZE)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            // Give half the inputs a valid magic so the decoders get past the first check.
            if round % 2 == 0 {
                b[0..4].copy_from_slice(&FILE_HEADER_MAGIC.to_le_bytes());
                b[4..6].copy_from_slice(&1u16.to_le_bytes());
                b[32..36].copy_from_slice(&PFS_INTERVAL.to_le_bytes());
                b[36..40].copy_from_slice(&GAM_INTERVAL_PAGES.to_le_bytes());
            }
            let _ = FileHeader::decode(&b);
            b[0..4].copy_from_slice(&BOOT_MAGIC.to_le_bytes());
            let _ = BootInfo::decode(&b);
            let _ = IamHeader::decode(&b);
            let _ = decode_unit(&b[..40]);
            let _ = FileHeader::decode(&b[..100]);
        }
    }

    #[test]
    fn unit_and_iam_round_trip() {
        let u = AllocUnit {
            id: 72_057_594_037_927_936,
            kind: AllocUnitKind::LobData,
            object_id: 1_234_567,
            index_id: 3,
            first_iam: PageId::new(3, 511_240),
            root: PageId::new(1, 99),
            first_page: PageId::new(4, 8),
        };
        assert_eq!(decode_unit(&encode_unit(&u)).unwrap(), u);
        let h = IamHeader { au: 1001, seq: 4, file_id: 3, start_page: 511_232 };
        let mut body = vec![0u8; BODY_SIZE];
        body[..iam::BITMAP].copy_from_slice(&h.encode());
        let d = IamHeader::decode(&body).unwrap();
        assert_eq!(d, h);
        assert_eq!(d.interval(), 1);
    }
}
