//! Reading the log back: the end-of-log scan `open` runs, and [`LogReader`], the
//! in-order record scan recovery uses.
//!
//! Both walk the same chain: the active VLFs in FSeqNo order, and in each VLF the log
//! blocks from sector 1, each block starting where the previous one ended, moving to the
//! next VLF exactly when [`next_block_in_vlf`] says a full-size block no longer fits.
//! The first block that does not validate (magic, FSeqNo, offset, size, generation,
//! checksum, record chain) is the end of the log.

use super::error::{LogError, LogResult};
use super::file::LogFile;
use super::format::{next_block_in_vlf, parse_block, BlockExpect, BlockHeader, SECTOR};
use super::lsn::Lsn;
use std::collections::VecDeque;
use std::io;
use std::ops::Range;
use std::sync::Arc;

/// One VLF of the chain, as a scan needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChainVlf {
    pub seq: u32,
    pub offset: u64,
    pub size_sectors: u32,
    pub activation_gen: u32,
}

/// A block read and validated.
pub(crate) struct ReadBlock {
    pub header: BlockHeader,
    pub records: Vec<Range<usize>>,
}

/// Reads the block at `sector` of `vlf` into `buf`. `Ok(None)` means it is not a valid
/// next block (the end of the log); errors are real I/O failures.
pub(crate) fn read_block(
    file: &LogFile,
    vlf: &ChainVlf,
    sector: u32,
    min_gen: u32,
    max_gen: u32,
    buf: &mut Vec<u8>,
) -> LogResult<Option<ReadBlock>> {
    let expect = BlockExpect {
        seq: vlf.seq,
        sector,
        vlf_sectors: vlf.size_sectors,
        min_gen: min_gen.max(vlf.activation_gen),
        max_gen,
    };
    if sector >= vlf.size_sectors {
        return Ok(None);
    }
    let offset = vlf.offset + u64::from(sector) * SECTOR as u64;
    buf.clear();
    buf.resize(SECTOR, 0);
    if !read_or_eof(file, offset, &mut buf[..])? {
        return Ok(None);
    }
    let Some(header) = BlockHeader::check(buf, &expect) else {
        return Ok(None);
    };
    let len = usize::from(header.size_sectors) * SECTOR;
    if len > SECTOR {
        buf.resize(len, 0);
        if !read_or_eof(file, offset + SECTOR as u64, &mut buf[SECTOR..len])? {
            return Ok(None);
        }
    }
    Ok(parse_block(&header, buf).map(|records| ReadBlock { header, records }))
}

/// `Ok(false)` when the range is past the end of the file (a log file cut short is the
/// end of the log, not an error).
fn read_or_eof(file: &LogFile, offset: u64, buf: &mut [u8]) -> LogResult<bool> {
    match file.read(offset, buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(source) => Err(file.err(offset, source)),
    }
}

/// Where the log ends, as found by [`scan_to_end`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanEnd {
    /// Position in the chain of the VLF the next block goes to (or that is full, in
    /// which case the next append moves on).
    pub tail: usize,
    /// Sector where the next block would start in that VLF.
    pub next_sector: u32,
    /// LSN of the last valid record (NULL for an empty log).
    pub last_lsn: Lsn,
    /// Generation of the last valid block (0 if none).
    pub last_gen: u32,
}

/// Follows the chain from its oldest VLF to the first invalid block.
pub(crate) fn scan_to_end(file: &LogFile, chain: &[ChainVlf], max_gen: u32) -> LogResult<ScanEnd> {
    let mut end = ScanEnd { tail: 0, next_sector: 1, last_lsn: Lsn::NULL, last_gen: 0 };
    let mut buf = Vec::new();
    for (ci, vlf) in chain.iter().enumerate() {
        if ci > 0 {
            // The log reaches this VLF only if the previous one was filled to its switch
            // point; otherwise it ended inside the previous one.
            let prev = &chain[ci - 1];
            if next_block_in_vlf(end.next_sector, prev.size_sectors).is_some() {
                break;
            }
        }
        let mut sector = 1;
        let mut found = false;
        let mut last_gen = end.last_gen;
        let mut last_lsn = end.last_lsn;
        while next_block_in_vlf(sector, vlf.size_sectors).is_some() {
            let Some(block) = read_block(file, vlf, sector, last_gen, max_gen, &mut buf)? else {
                break;
            };
            found = true;
            last_gen = block.header.generation;
            if block.header.count > 0 {
                // The header check bounded sector and count, so this always packs.
                last_lsn = Lsn::new(vlf.seq, sector, block.header.count).unwrap_or(last_lsn);
            }
            sector += u32::from(block.header.size_sectors);
        }
        if ci > 0 && !found {
            // Activated but nothing in it survived: the log ends at the previous VLF's
            // switch point.
            break;
        }
        end = ScanEnd { tail: ci, next_sector: sector, last_lsn, last_gen };
        if next_block_in_vlf(sector, vlf.size_sectors).is_some() {
            break;
        }
    }
    Ok(end)
}

/// Iterates over the log's records in LSN order from a starting LSN up to the last
/// flushed record when the reader was made. Created by `LogManager::reader`.
///
/// It reads the file, not the log buffer: records not yet flushed are not returned. A
/// VLF truncated and reused while the reader is in it ends the scan (its blocks carry
/// a new FSeqNo).
pub struct LogReader {
    file: Arc<LogFile>,
    db: String,
    chain: Vec<ChainVlf>,
    max_gen: u32,
    from: Lsn,
    limit: Lsn,
    /// Position in `chain` and sector of the next block to read.
    vlf: usize,
    sector: u32,
    last_gen: u32,
    first: bool,
    pending: VecDeque<(Lsn, Vec<u8>)>,
    done: bool,
    /// An error to report before anything else (the start LSN is not in the log).
    start_error: Option<LogError>,
    buf: Vec<u8>,
}

impl LogReader {
    pub(crate) fn new(
        file: Arc<LogFile>,
        db: String,
        chain: Vec<ChainVlf>,
        max_gen: u32,
        from: Lsn,
        limit: Lsn,
    ) -> LogReader {
        let mut r = LogReader {
            file,
            db,
            chain,
            max_gen,
            from,
            limit,
            vlf: 0,
            sector: 1,
            last_gen: 0,
            first: true,
            pending: VecDeque::new(),
            done: false,
            start_error: None,
            buf: Vec::new(),
        };
        if limit.is_null() || from > limit || r.chain.is_empty() {
            r.done = true;
        } else if !from.is_null() {
            match r.chain.iter().position(|v| v.seq == from.vlf_seq()) {
                Some(i) => {
                    r.vlf = i;
                    r.sector = from.block().max(1);
                }
                None => r.start_error = Some(r.invalid()),
            }
        }
        r
    }

    fn invalid(&self) -> LogError {
        LogError::InvalidLsn { db: self.db.clone(), lsn: self.from }
    }

    /// Reads the next block into `pending`; `Ok(false)` at the end of the log.
    fn fill(&mut self) -> LogResult<bool> {
        loop {
            let Some(vlf) = self.chain.get(self.vlf).copied() else {
                return Ok(false);
            };
            if next_block_in_vlf(self.sector, vlf.size_sectors).is_none() {
                self.vlf += 1;
                self.sector = 1;
                continue;
            }
            let past_limit = match Lsn::new(vlf.seq, self.sector, 1) {
                Some(first) => first > self.limit,
                None => true,
            };
            if past_limit {
                // Everything from here on was not flushed when the reader was made.
                return Ok(false);
            }
            let block = read_block(&self.file, &vlf, self.sector, self.last_gen, self.max_gen, &mut self.buf)?;
            let Some(block) = block else {
                if self.first && !self.from.is_null() {
                    // The start LSN does not name a block, yet it is not past the end.
                    return Err(self.invalid());
                }
                return Ok(false);
            };
            self.first = false;
            self.last_gen = block.header.generation;
            for (i, range) in block.records.iter().enumerate() {
                let slot = (i + 1) as u16;
                let Some(lsn) = Lsn::new(vlf.seq, self.sector, slot) else {
                    continue;
                };
                if lsn >= self.from && lsn <= self.limit {
                    let bytes = self.buf.get(range.clone()).unwrap_or(&[]).to_vec();
                    self.pending.push_back((lsn, bytes));
                }
            }
            self.sector += u32::from(block.header.size_sectors);
            if !self.pending.is_empty() {
                return Ok(true);
            }
        }
    }
}

impl Iterator for LogReader {
    type Item = LogResult<(Lsn, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.start_error.take() {
            self.done = true;
            return Some(Err(e));
        }
        loop {
            if let Some(rec) = self.pending.pop_front() {
                if rec.0 == self.limit {
                    self.done = true;
                    self.pending.clear();
                }
                return Some(Ok(rec));
            }
            if self.done {
                return None;
            }
            match self.fill() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
