//! Creating a log file, and opening one: header, VLF headers, the active chain, the
//! end-of-log scan, repairs of what a crash left half done, and a new generation.

use super::{Inner, LogConfig, LogManager, StatCells, State, Vlf, LOG_FILE_ID};
use crate::log::error::{LogError, LogResult};
use crate::log::file::LogFile;
use crate::log::format::{
    vlf_layout, FileHeader, VlfHeader, VlfState, FILE_HEADER_COPY, FILE_HEADER_SIZE, FILE_HEADER_SLOTS, MAX_VLF_BYTES,
    MIN_VLF_BYTES, SECTOR,
};
use crate::log::lsn::Lsn;
use crate::log::scan::{scan_to_end, ChainVlf};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use storage::file::FileGrowth;
use storage::io::FileSystem;

impl LogManager {
    /// Creates a new log file of `size_bytes` (the 8 KB header included) at `path` and
    /// starts its log writer. The file must not exist.
    pub fn create(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        db_id: u16,
        db_name: &str,
        size_bytes: u64,
        growth: FileGrowth,
        max_bytes: Option<u64>,
    ) -> LogResult<Arc<LogManager>> {
        Self::create_with(fs, path, db_id, db_name, size_bytes, growth, max_bytes, LogConfig::default())
    }

    /// [`create`](Self::create) with explicit tunables.
    #[allow(clippy::too_many_arguments)]
    pub fn create_with(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        db_id: u16,
        db_name: &str,
        size_bytes: u64,
        growth: FileGrowth,
        max_bytes: Option<u64>,
        config: LogConfig,
    ) -> LogResult<Arc<LogManager>> {
        let path_s = path.display().to_string();
        let io_err = |offset: u64| {
            let file = path_s.clone();
            move |source| LogError::Io { file, offset, source }
        };
        if fs.exists(path) {
            return Err(LogError::Invalid(format!("cannot create log file '{path_s}': it already exists")));
        }
        if max_bytes.is_some_and(|m| m < size_bytes) {
            return Err(LogError::Invalid(format!("log file '{path_s}': MAXSIZE is smaller than SIZE")));
        }
        let (count, vlf_bytes) = size_bytes.checked_sub(FILE_HEADER_SIZE).and_then(vlf_layout).ok_or_else(|| {
            LogError::Invalid(format!(
                "log file '{path_s}' of {size_bytes} bytes is too small (the minimum is {} bytes)",
                FILE_HEADER_SIZE + MIN_VLF_BYTES
            ))
        })?;
        let log_end = FILE_HEADER_SIZE + u64::from(count) * vlf_bytes;
        let file = Arc::new(LogFile {
            io: fs.open(path, true).map_err(io_err(0))?,
            path: path_s.clone(),
            stats: diag::register_file(db_id, LOG_FILE_ID),
        });
        file.set_len(log_end).map_err(io_err(log_end))?;
        if config.zero_fill {
            file.zero_fill(0, log_end).map_err(io_err(0))?;
        }
        let generation = 1;
        let mut vlfs = Vec::with_capacity(count as usize);
        for i in 0..u64::from(count) {
            let first = i == 0;
            let vlf = Vlf {
                offset: FILE_HEADER_SIZE + i * vlf_bytes,
                size_sectors: (vlf_bytes / SECTOR as u64) as u32,
                // The first VLF starts the log with FSeqNo 1.
                seq: u32::from(first),
                prev_seq: 0,
                state: if first { VlfState::Active } else { VlfState::Unused },
                truncating: false,
                activation_gen: if first { generation } else { 0 },
                create_lsn: Lsn::NULL,
            };
            file.write(vlf.offset, &vlf.header(db_id).encode()).map_err(io_err(vlf.offset))?;
            vlfs.push(vlf);
        }
        let header = FileHeader {
            db_id,
            header_seq: 1,
            generation,
            vlf_count: count,
            log_end,
            growth,
            max_bytes,
            master: Vec::new(),
        };
        file.write(FILE_HEADER_SLOTS[0], &header.encode()).map_err(io_err(0))?;
        file.sync().map_err(io_err(0))?;
        let state = State::new(header, 1, vlfs, 0, 1, 2, Lsn::NULL, &config);
        Self::start(file, db_id, db_name, generation, &config, state)
    }

    /// Opens an existing log file: reads its header and VLF headers, finds the active
    /// VLFs, scans their blocks to the end of the log, and starts the log writer. The
    /// next record goes into a fresh block after the last valid one.
    pub fn open(fs: Arc<dyn FileSystem>, path: &Path, db_id: u16, db_name: &str) -> LogResult<Arc<LogManager>> {
        Self::open_with(fs, path, db_id, db_name, LogConfig::default())
    }

    /// [`open`](Self::open) with explicit tunables.
    pub fn open_with(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        db_id: u16,
        db_name: &str,
        config: LogConfig,
    ) -> LogResult<Arc<LogManager>> {
        let path_s = path.display().to_string();
        let io_err = |offset: u64| {
            let file = path_s.clone();
            move |source| LogError::Io { file, offset, source }
        };
        let corrupt = |detail: String| LogError::Corrupt {
            db: db_name.to_string(),
            detail: format!("log file '{path_s}': {detail}"),
        };
        let file = Arc::new(LogFile {
            io: fs.open(path, false).map_err(io_err(0))?,
            path: path_s.clone(),
            stats: diag::register_file(db_id, LOG_FILE_ID),
        });
        let len = file.len().map_err(io_err(0))?;
        if len < FILE_HEADER_SIZE {
            return Err(corrupt(format!("{len} bytes is shorter than its header")));
        }

        // File header: the valid copy with the higher sequence number.
        let mut best: Option<(FileHeader, usize)> = None;
        for (slot, &at) in FILE_HEADER_SLOTS.iter().enumerate() {
            let mut b = vec![0u8; FILE_HEADER_COPY];
            file.read(at, &mut b).map_err(io_err(at))?;
            if let Some(h) = FileHeader::decode(&b) {
                match &best {
                    Some((cur, _)) if cur.header_seq >= h.header_seq => {}
                    _ => best = Some((h, slot)),
                }
            }
        }
        let (header, slot) = best.ok_or_else(|| corrupt("no valid file header".into()))?;
        if header.db_id != db_id {
            return Err(corrupt(format!("it belongs to database id {}, not {db_id}", header.db_id)));
        }
        if header.log_end > len {
            return Err(corrupt(format!("the header describes {} bytes but the file has {len}", header.log_end)));
        }

        // VLF headers, contiguous from the end of the file header.
        let mut vlfs = Vec::new();
        let mut at = FILE_HEADER_SIZE;
        for i in 0..header.vlf_count {
            let mut b = [0u8; SECTOR];
            file.read(at, &mut b).map_err(io_err(at))?;
            let h = VlfHeader::decode(&b)
                .filter(|h| h.offset == at && h.db_id == db_id)
                .filter(|h| (MIN_VLF_BYTES..=MAX_VLF_BYTES).contains(&(u64::from(h.size_sectors) * SECTOR as u64)))
                .ok_or_else(|| corrupt(format!("the header of VLF {i} at {at:#x} is damaged")))?;
            let v = Vlf::from_header(&h);
            at = at
                .checked_add(v.bytes())
                .filter(|&end| end <= header.log_end)
                .ok_or_else(|| corrupt(format!("VLF {i} at {at:#x} runs past the log end")))?;
            vlfs.push(v);
        }
        if at != header.log_end || vlfs.is_empty() {
            return Err(corrupt("the VLFs do not add up to the log size".into()));
        }

        // The active chain: from the newest active VLF back through the previous-FSeqNo
        // links while they lead to active VLFs. Active VLFs off the chain are leftovers
        // of a truncation whose writes were partly lost; they are reset below.
        let chain_idx = find_chain(&vlfs);
        if chain_idx.is_empty() {
            return Err(corrupt("no active VLF".into()));
        }
        let chain: Vec<ChainVlf> = chain_idx.iter().map(|&i| vlfs[i].chain()).collect();
        // No upper bound on block generations here: if the newer header copy was lost
        // to bit rot, the older one has an older generation, and the blocks written
        // since must still count.
        let end = scan_to_end(&file, &chain, u32::MAX)?;
        let tail = chain_idx[end.tail];

        // Anything active that is not in the chain up to the tail was activated (or
        // truncated) by writes that did not all survive: mark it inactive, durably,
        // before anything new is written.
        let mut resets = Vec::new();
        for (i, v) in vlfs.iter_mut().enumerate() {
            let in_log = chain_idx[..=end.tail].contains(&i);
            if v.state == VlfState::Active && !in_log {
                v.state = VlfState::Inactive;
                resets.push(i);
            }
        }
        for &i in &resets {
            let v = &vlfs[i];
            file.write(v.offset, &v.header(db_id).encode()).map_err(io_err(v.offset))?;
        }
        // A new generation for this incarnation: blocks it writes can be told apart
        // from stale blocks an earlier one left past the end of the log.
        let generation = header
            .generation
            .max(end.last_gen)
            .checked_add(1)
            .ok_or_else(|| corrupt("generation counter exhausted".into()))?;
        let header_seq = header.header_seq.checked_add(1).ok_or_else(|| corrupt("header sequence exhausted".into()))?;
        let header = FileHeader { generation, header_seq, ..header };
        let write_slot = 1 - slot;
        file.write(FILE_HEADER_SLOTS[write_slot], &header.encode()).map_err(io_err(FILE_HEADER_SLOTS[write_slot]))?;
        file.sync().map_err(io_err(0))?;

        let max_seq = vlfs.iter().map(|v| v.seq).max().unwrap_or(0);
        let next_seq = max_seq.checked_add(1).ok_or_else(|| corrupt("FSeqNo exhausted".into()))?;
        let state = State::new(header, slot, vlfs, tail, end.next_sector, next_seq, end.last_lsn, &config);
        Self::start(file, db_id, db_name, generation, &config, state)
    }

    fn start(
        file: Arc<LogFile>,
        db_id: u16,
        db_name: &str,
        generation: u32,
        config: &LogConfig,
        state: State,
    ) -> LogResult<Arc<LogManager>> {
        file.stats.set_size(state.header.log_end);
        let flushed = AtomicU64::new(state.flushed_lsn.0);
        let inner = Arc::new(Inner {
            db_id,
            db_name: db_name.to_string(),
            file,
            generation,
            zero_fill: config.zero_fill,
            state: Mutex::new(state),
            writer_cv: Condvar::new(),
            done_cv: Condvar::new(),
            flush_done: [Condvar::new(), Condvar::new()],
            flushed,
            truncate_lock: Mutex::new(()),
            closed: AtomicBool::new(false),
            reserved: AtomicU64::new(0),
            counters: diag::database_counters(db_name),
            stats: StatCells::default(),
            pressure: Arc::new(AtomicBool::new(false)),
            relief: Mutex::new(None),
        });
        let for_writer = inner.clone();
        let handle = std::thread::Builder::new()
            .name(format!("log writer {db_name}"))
            .spawn(move || for_writer.writer_loop())
            .map_err(|e| LogError::Invalid(format!("cannot start the log writer: {e}")))?;
        Ok(Arc::new(LogManager { inner, writer: Mutex::new(Some(handle)) }))
    }
}

/// The active chain, oldest first: from the active VLF with the highest FSeqNo back
/// along the previous-FSeqNo links while they lead to active VLFs.
fn find_chain(vlfs: &[Vlf]) -> Vec<usize> {
    let mut by_seq: HashMap<u32, usize> = HashMap::new();
    for (i, v) in vlfs.iter().enumerate() {
        if v.state == VlfState::Active && v.seq != 0 {
            by_seq.entry(v.seq).or_insert(i);
        }
    }
    let Some(newest) = by_seq.iter().max_by_key(|(seq, _)| **seq).map(|(_, &i)| i) else {
        return Vec::new();
    };
    let mut chain = vec![newest];
    let mut cur = newest;
    loop {
        let (seq, prev) = (vlfs[cur].seq, vlfs[cur].prev_seq);
        // FSeqNos only grow along the log, which also guarantees this loop ends.
        if prev == 0 || prev >= seq {
            break;
        }
        match by_seq.get(&prev) {
            Some(&i) => {
                chain.push(i);
                cur = i;
            }
            None => break,
        }
    }
    chain.reverse();
    chain
}
