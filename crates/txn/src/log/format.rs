//! The bytes of the log file: file header, VLF header, log block. The layouts are
//! documented in the parent module (`crate::log`); this module encodes and decodes them.
//!
//! Decoding never panics and never trusts a length it has not checked: anything that
//! does not validate is `None` (for a log block: the end of the log).

use super::lsn::Lsn;
use storage::file::FileGrowth;

/// Sector size: the unit of log I/O and of torn writes.
pub const SECTOR: usize = 512;
/// Size of the file header region at offset 0.
pub const FILE_HEADER_SIZE: u64 = 8192;
/// The two copies of the file header (written alternately) sit at these offsets; each is
/// one sector so that a crash can never tear one.
pub const FILE_HEADER_SLOTS: [u64; 2] = [0, 4096];
/// Largest log block: 60 KB, as in SQL Server.
pub const MAX_BLOCK_SECTORS: u32 = 120;
pub const MAX_BLOCK_BYTES: usize = MAX_BLOCK_SECTORS as usize * SECTOR;
/// Log block header size.
pub const BLOCK_HEADER: usize = 32;
/// Each record is prefixed by its length.
pub const RECORD_PREFIX: usize = 4;
/// Largest record: a record never spans blocks.
pub const MAX_RECORD: usize = MAX_BLOCK_BYTES - BLOCK_HEADER - RECORD_PREFIX;
/// Most records in one block (slots are 1-based and 12 bits wide).
pub const MAX_SLOTS: u16 = Lsn::MAX_SLOT;
/// Smallest VLF: its header sector plus room for one full-size block (plus slack).
pub const MIN_VLF_BYTES: u64 = 64 * 1024;
/// Largest VLF: the LSN's 20-bit block offset counts sectors from the VLF start.
pub const MAX_VLF_BYTES: u64 = (Lsn::MAX_BLOCK as u64 + 1) * SECTOR as u64;

pub const FILE_MAGIC: [u8; 4] = *b"MQLH";
pub const VLF_MAGIC: [u8; 4] = *b"MQLV";
pub const BLOCK_MAGIC: [u8; 4] = *b"MQLB";
pub const FORMAT_VERSION: u16 = 1;

/// Offset of the CRC32C field in each structure.
const FILE_CRC_AT: usize = 52;
const VLF_CRC_AT: usize = 40;
const BLOCK_CRC_AT: usize = 20;

fn get<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}
fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    get::<2>(b, at).map(u16::from_le_bytes)
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    get::<4>(b, at).map(u32::from_le_bytes)
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    get::<8>(b, at).map(u64::from_le_bytes)
}
fn put(b: &mut [u8], at: usize, v: &[u8]) {
    // Callers pass fixed offsets inside buffers they sized themselves.
    if let Some(dst) = b.get_mut(at..at + v.len()) {
        dst.copy_from_slice(v);
    }
}

/// CRC32C of `bytes` computed as if the 4 bytes at `crc_at` were zero.
fn crc_with_hole(bytes: &[u8], crc_at: usize) -> u32 {
    let (head, rest) = bytes.split_at(crc_at.min(bytes.len()));
    let tail = rest.get(4..).unwrap_or(&[]);
    let c = crc32c::crc32c(head);
    let c = crc32c::crc32c_append(c, &[0u8; 4][..rest.len().min(4)]);
    crc32c::crc32c_append(c, tail)
}

/// FILEGROWTH as stored in the file header: (kind, value).
fn growth_code(g: FileGrowth) -> (u8, u32) {
    match g {
        FileGrowth::None => (0, 0),
        FileGrowth::Pages(p) => (1, p),
        FileGrowth::Percent(p) => (2, p),
    }
}

fn growth_from_code(kind: u8, value: u32) -> Option<FileGrowth> {
    match kind {
        0 => Some(FileGrowth::None),
        1 => Some(FileGrowth::Pages(value)),
        2 => Some(FileGrowth::Percent(value)),
        _ => None,
    }
}

/// One copy of the file header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub db_id: u16,
    /// Incremented at every rewrite; of two valid copies the higher wins.
    pub header_seq: u64,
    /// The open generation: incremented (and made durable) at every open, stamped into
    /// every block written until the next open.
    pub generation: u32,
    pub vlf_count: u32,
    /// End of the last VLF: header + every VLF. The file may be longer (a growth that
    /// crashed before its header rewrite), never shorter.
    pub log_end: u64,
    pub growth: FileGrowth,
    /// MAXSIZE in bytes; `None` = UNLIMITED.
    pub max_bytes: Option<u64>,
    /// The transaction layer's master record (last checkpoint, data files), opaque here.
    pub master: Vec<u8>,
}

/// Bytes of one file header copy: the 512-byte header sector, then the master record
/// (u16 length, bytes, u32 CRC32C over header_seq + length + bytes), padded.
pub const FILE_HEADER_COPY: usize = 4096;
/// Largest master record a header copy holds.
pub const MAX_MASTER_RECORD: usize = FILE_HEADER_COPY - SECTOR - 6;

impl FileHeader {
    /// Encodes one header copy (`FILE_HEADER_COPY` bytes). The master record has its own
    /// checksum, which covers the header sequence too, so a copy torn between its sectors
    /// is rejected whole and the other copy is used.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.encode_sector().to_vec();
        let m = &self.master[..self.master.len().min(MAX_MASTER_RECORD)];
        out.extend_from_slice(&(m.len() as u16).to_le_bytes());
        out.extend_from_slice(m);
        let mut c = crc32c::crc32c(&self.header_seq.to_le_bytes());
        c = crc32c::crc32c_append(c, &out[SECTOR..]);
        out.extend_from_slice(&c.to_le_bytes());
        out.resize(FILE_HEADER_COPY, 0);
        out
    }

    fn encode_sector(&self) -> [u8; SECTOR] {
        let mut b = [0u8; SECTOR];
        put(&mut b, 0, &FILE_MAGIC);
        put(&mut b, 4, &FORMAT_VERSION.to_le_bytes());
        put(&mut b, 6, &self.db_id.to_le_bytes());
        put(&mut b, 8, &self.header_seq.to_le_bytes());
        put(&mut b, 16, &self.generation.to_le_bytes());
        put(&mut b, 20, &self.vlf_count.to_le_bytes());
        put(&mut b, 24, &self.log_end.to_le_bytes());
        let (kind, value) = growth_code(self.growth);
        b[32] = kind;
        put(&mut b, 36, &value.to_le_bytes());
        put(&mut b, 40, &self.max_bytes.unwrap_or(0).to_le_bytes());
        let crc = crc_with_hole(&b, FILE_CRC_AT);
        put(&mut b, FILE_CRC_AT, &crc.to_le_bytes());
        b
    }

    pub fn decode(full: &[u8]) -> Option<FileHeader> {
        let mut h = Self::decode_sector(full)?;
        let len = u16_at(full, SECTOR)? as usize;
        if len > MAX_MASTER_RECORD {
            return None;
        }
        let master = full.get(SECTOR + 2..SECTOR + 2 + len)?;
        let stored = u32_at(full, SECTOR + 2 + len)?;
        let mut c = crc32c::crc32c(&h.header_seq.to_le_bytes());
        c = crc32c::crc32c_append(c, &full[SECTOR..SECTOR + 2 + len]);
        if c != stored {
            return None;
        }
        h.master = master.to_vec();
        Some(h)
    }

    fn decode_sector(b: &[u8]) -> Option<FileHeader> {
        let b = b.get(..SECTOR)?;
        if get::<4>(b, 0)? != FILE_MAGIC || u16_at(b, 4)? != FORMAT_VERSION {
            return None;
        }
        if u32_at(b, FILE_CRC_AT)? != crc_with_hole(b, FILE_CRC_AT) {
            return None;
        }
        let max = u64_at(b, 40)?;
        let h = FileHeader {
            db_id: u16_at(b, 6)?,
            header_seq: u64_at(b, 8)?,
            generation: u32_at(b, 16)?,
            vlf_count: u32_at(b, 20)?,
            log_end: u64_at(b, 24)?,
            growth: growth_from_code(b[32], u32_at(b, 36)?)?,
            max_bytes: (max != 0).then_some(max),
            master: Vec::new(),
        };
        (h.log_end >= FILE_HEADER_SIZE).then_some(h)
    }
}

/// A VLF's state as its header sector records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VlfState {
    /// Never used since it was created (FSeqNo 0).
    Unused,
    /// Part of the active log.
    Active,
    /// Truncated: reusable. Keeps the FSeqNo it last carried.
    Inactive,
}

impl VlfState {
    fn code(self) -> u8 {
        match self {
            VlfState::Unused => 0,
            VlfState::Active => 1,
            VlfState::Inactive => 2,
        }
    }
    fn from_code(c: u8) -> Option<VlfState> {
        match c {
            0 => Some(VlfState::Unused),
            1 => Some(VlfState::Active),
            2 => Some(VlfState::Inactive),
            _ => None,
        }
    }
}

/// The header sector at the start of every VLF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlfHeader {
    pub db_id: u16,
    /// FSeqNo: the sequence number the VLF carries now (0 = never used).
    pub seq: u32,
    /// File offset of this VLF (a self-check against misplaced sectors).
    pub offset: u64,
    /// Size in sectors, including this header sector.
    pub size_sectors: u32,
    pub state: VlfState,
    /// FSeqNo of the VLF that precedes this one in the log (0 = none).
    pub prev_seq: u32,
    /// Open generation at activation; blocks in this VLF carry at least this one.
    pub activation_gen: u32,
    /// LSN at the time the growth that created this VLF happened (NULL for the VLFs
    /// the file was created with), as DBCC LOGINFO's CreateLSN.
    pub create_lsn: Lsn,
}

impl VlfHeader {
    pub fn encode(&self) -> [u8; SECTOR] {
        let mut b = [0u8; SECTOR];
        put(&mut b, 0, &VLF_MAGIC);
        put(&mut b, 4, &self.seq.to_le_bytes());
        put(&mut b, 8, &self.offset.to_le_bytes());
        put(&mut b, 16, &self.size_sectors.to_le_bytes());
        b[20] = self.state.code();
        put(&mut b, 22, &self.db_id.to_le_bytes());
        put(&mut b, 24, &self.prev_seq.to_le_bytes());
        put(&mut b, 28, &self.activation_gen.to_le_bytes());
        put(&mut b, 32, &self.create_lsn.0.to_le_bytes());
        let crc = crc_with_hole(&b, VLF_CRC_AT);
        put(&mut b, VLF_CRC_AT, &crc.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<VlfHeader> {
        let b = b.get(..SECTOR)?;
        if get::<4>(b, 0)? != VLF_MAGIC || u32_at(b, VLF_CRC_AT)? != crc_with_hole(b, VLF_CRC_AT) {
            return None;
        }
        Some(VlfHeader {
            seq: u32_at(b, 4)?,
            offset: u64_at(b, 8)?,
            size_sectors: u32_at(b, 16)?,
            state: VlfState::from_code(b[20])?,
            db_id: u16_at(b, 22)?,
            prev_seq: u32_at(b, 24)?,
            activation_gen: u32_at(b, 28)?,
            create_lsn: Lsn(u64_at(b, 32)?),
        })
    }
}

/// What a log block must be to count as the next block of the log.
#[derive(Clone, Copy, Debug)]
pub struct BlockExpect {
    pub seq: u32,
    pub sector: u32,
    /// Size of the VLF in sectors: the block must end inside it.
    pub vlf_sectors: u32,
    /// Generation bounds: at least the VLF's activation generation and the previous
    /// block's; at most the current one when reading a running log.
    pub min_gen: u32,
    pub max_gen: u32,
}

/// The fixed fields of a block header, decoded from its first sector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    pub seq: u32,
    pub sector: u32,
    pub size_sectors: u16,
    pub count: u16,
    pub generation: u32,
    pub crc: u32,
}

impl BlockHeader {
    /// Decodes and checks everything but the checksum, which needs the whole block.
    pub fn check(b: &[u8], e: &BlockExpect) -> Option<BlockHeader> {
        if get::<4>(b, 0)? != BLOCK_MAGIC {
            return None;
        }
        let h = BlockHeader {
            seq: u32_at(b, 4)?,
            sector: u32_at(b, 8)?,
            size_sectors: u16_at(b, 12)?,
            count: u16_at(b, 14)?,
            generation: u32_at(b, 16)?,
            crc: u32_at(b, 20)?,
        };
        let size = u32::from(h.size_sectors);
        let fits = e.sector.checked_add(size).is_some_and(|end| end <= e.vlf_sectors);
        let ok = h.seq == e.seq
            && h.sector == e.sector
            && (1..=MAX_BLOCK_SECTORS).contains(&size)
            && fits
            && h.count <= MAX_SLOTS
            && (e.min_gen..=e.max_gen).contains(&h.generation);
        ok.then_some(h)
    }
}

/// Checks a whole block (header already checked by [`BlockHeader::check`]) and returns
/// the byte ranges of its records, or `None` if the checksum or the record chain is off.
pub fn parse_block(h: &BlockHeader, block: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    let len = usize::from(h.size_sectors) * SECTOR;
    let block = block.get(..len)?;
    if crc_with_hole(block, BLOCK_CRC_AT) != h.crc {
        return None;
    }
    let mut out = Vec::with_capacity(usize::from(h.count));
    let mut at = BLOCK_HEADER;
    for _ in 0..h.count {
        let n = u32_at(block, at)? as usize;
        let start = at.checked_add(RECORD_PREFIX)?;
        let end = start.checked_add(n)?;
        if end > block.len() {
            return None;
        }
        out.push(start..end);
        at = end;
    }
    Some(out)
}

/// Fills in the header of a block whose records are already in `buf[BLOCK_HEADER..]`
/// and whose length is a whole number of sectors.
pub fn seal_block(buf: &mut [u8], seq: u32, sector: u32, count: u16, generation: u32) {
    let sectors = (buf.len() / SECTOR) as u16;
    put(buf, 0, &BLOCK_MAGIC);
    put(buf, 4, &seq.to_le_bytes());
    put(buf, 8, &sector.to_le_bytes());
    put(buf, 12, &sectors.to_le_bytes());
    put(buf, 14, &count.to_le_bytes());
    put(buf, 16, &generation.to_le_bytes());
    put(buf, BLOCK_CRC_AT, &[0u8; 4]);
    put(buf, 24, &[0u8; 8]);
    let crc = crc_with_hole(buf, BLOCK_CRC_AT);
    put(buf, BLOCK_CRC_AT, &crc.to_le_bytes());
}

/// Where the block after one ending at `end_sector` starts in a VLF of `vlf_sectors`:
/// `Some(end_sector)` if a full-size block still fits, `None` if the log moves on to
/// the next VLF. The writer and every scan use this one rule, which is what lets a scan
/// tell "the log continues in the next VLF" from "the log ends here".
pub fn next_block_in_vlf(end_sector: u32, vlf_sectors: u32) -> Option<u32> {
    (vlf_sectors.saturating_sub(end_sector) >= MAX_BLOCK_SECTORS).then_some(end_sector)
}

/// SQL Server's VLF count for a log file created with, or grown by, `bytes`: fewer than
/// 64 MB gives 4 VLFs, up to 1 GB 8, more 16. Two limits of this format adjust it: a VLF
/// holds at most 512 MB (the LSN's block field), so a huge growth gets more VLFs, and at
/// least 64 KB, so a tiny one gets fewer. Returns (count, VLF size in bytes, a multiple
/// of the sector size), or `None` if `bytes` cannot hold even one VLF.
pub fn vlf_layout(bytes: u64) -> Option<(u32, u64)> {
    const MB: u64 = 1024 * 1024;
    let mut n: u64 = if bytes < 64 * MB {
        4
    } else if bytes <= 1024 * MB {
        8
    } else {
        16
    };
    n = n.max(bytes.div_ceil(MAX_VLF_BYTES));
    n = n.min(bytes / MIN_VLF_BYTES);
    if n == 0 {
        return None;
    }
    let size = (bytes / n / SECTOR as u64 * SECTOR as u64).min(MAX_VLF_BYTES);
    let n = u32::try_from(n).ok()?;
    (size >= MIN_VLF_BYTES).then_some((n, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_header_round_trip_and_crc() {
        let h = FileHeader {
            db_id: 7,
            header_seq: 3,
            generation: 9,
            vlf_count: 4,
            log_end: 8192 + 4 * 65536,
            growth: FileGrowth::Percent(10),
            max_bytes: Some(1 << 30),
            master: b"checkpoint".to_vec(),
        };
        let mut b = h.encode();
        assert_eq!(FileHeader::decode(&b), Some(h.clone()));
        b[100] ^= 1;
        assert_eq!(FileHeader::decode(&b), None);
        assert_eq!(FileHeader::decode(&[0u8; 10]), None);
    }

    #[test]
    fn vlf_header_round_trip() {
        let h = VlfHeader {
            db_id: 1,
            seq: 42,
            offset: 8192,
            size_sectors: 256,
            state: VlfState::Active,
            prev_seq: 41,
            activation_gen: 2,
            create_lsn: Lsn::new(40, 1, 1).unwrap(),
        };
        let mut b = h.encode();
        assert_eq!(VlfHeader::decode(&b), Some(h));
        b[3] ^= 0x80;
        assert_eq!(VlfHeader::decode(&b), None);
    }

    #[test]
    fn block_seal_and_parse() {
        let mut buf = vec![0u8; 2 * SECTOR];
        let mut at = BLOCK_HEADER;
        for rec in [&b"abc"[..], &[7u8; 600][..]] {
            buf[at..at + 4].copy_from_slice(&(rec.len() as u32).to_le_bytes());
            buf[at + 4..at + 4 + rec.len()].copy_from_slice(rec);
            at += 4 + rec.len();
        }
        seal_block(&mut buf, 5, 17, 2, 3);
        let e = BlockExpect { seq: 5, sector: 17, vlf_sectors: 256, min_gen: 1, max_gen: 3 };
        let h = BlockHeader::check(&buf, &e).unwrap();
        let recs = parse_block(&h, &buf).unwrap();
        assert_eq!(&buf[recs[0].clone()], b"abc");
        assert_eq!(recs[1].len(), 600);
        // Wrong expectations are the end of the log.
        for bad in [
            BlockExpect { seq: 6, ..e },
            BlockExpect { sector: 18, ..e },
            BlockExpect { vlf_sectors: 18, ..e },
            BlockExpect { min_gen: 4, max_gen: 4, ..e },
        ] {
            assert!(BlockHeader::check(&buf, &bad).is_none());
        }
        buf[700] ^= 4;
        assert!(parse_block(&h, &buf).is_none());
    }

    #[test]
    fn vlf_counts_follow_sql_server() {
        const MB: u64 = 1024 * 1024;
        assert_eq!(vlf_layout(8 * MB), Some((4, 2 * MB)));
        assert_eq!(vlf_layout(64 * MB), Some((8, 8 * MB)));
        assert_eq!(vlf_layout(1024 * MB), Some((8, 128 * MB)));
        assert_eq!(vlf_layout(2048 * MB), Some((16, 128 * MB)));
        // 16 GB: 16 VLFs would be 1 GB each, over the 512 MB LSN limit.
        assert_eq!(vlf_layout(16 * 1024 * MB), Some((32, 512 * MB)));
        assert_eq!(vlf_layout(128 * 1024), Some((2, 64 * 1024)));
        assert_eq!(vlf_layout(60 * 1024), None);
    }

    #[test]
    fn block_position_rule() {
        assert_eq!(next_block_in_vlf(1, 256), Some(1));
        assert_eq!(next_block_in_vlf(136, 256), Some(136));
        assert_eq!(next_block_in_vlf(137, 256), None);
        assert_eq!(next_block_in_vlf(300, 256), None);
    }
}
