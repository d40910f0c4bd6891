//! The write-ahead log: log records in log blocks in virtual log files (VLFs) inside one
//! preallocated, recycled log file (file id 2, `.ldf`), a log writer thread doing group
//! commit, and the delayed-durability flush timer.
//!
//! The log manager is generic over record contents: a record is an opaque byte string
//! (at most [`MAX_RECORD`] = 61,404 bytes; records never span blocks) and gets an
//! [`Lsn`]. Record formats (page operations, begin/commit, CLRs) live above it.
//!
//! # Using it
//!
//! - [`LogManager::append`] copies a record into the log buffer and returns its LSN.
//! - [`LogManager::flush_to`] returns once every record up to an LSN is durable: a
//!   durable COMMIT, and the WAL rule before a page write (`impl storage::WalGate`).
//!   `sys.sp_flush_log` is `flush_to(end_lsn())`.
//! - [`LogManager::reader`] scans records in LSN order (recovery).
//! - [`LogManager::truncate`] frees VLFs wholly before an LSN the caller no longer needs.
//! - [`LogManager::vlf_info`] (DBCC LOGINFO), [`LogManager::space`] (DBCC
//!   SQLPERF(LOGSPACE)), [`LogManager::stats`] (flushes, commits per flush, waits).
//!
//! # Group commit
//!
//! Appenders fill the current log block in memory under a short mutex. A committer in
//! `flush_to` wakes the log writer thread and waits (WRITELOG). The writer takes every
//! block buffered so far (sealing the partly filled current one), writes blocks that are
//! contiguous in the file with one `write_at`, syncs, advances the flushed LSN and wakes
//! every waiter whose LSN is now durable. Committers arriving while a flush is in
//! progress are served together by the next one, so commits per flush grow with
//! concurrency. Each flush counts in the database's Log Flushes/sec and Log Bytes
//! Flushed/sec counters, and every wait for one in Log Flush Wait Time. All I/O on the
//! log file is recorded in its sys.dm_io_virtual_file_stats row (database id, file 2):
//! a flush as one write per `write_at` (the last one's stall includes the sync), VLF
//! activations, truncations and growth as their own writes, the scans as reads.
//!
//! A partly filled block that gets flushed is written as it is (its size covers the
//! sectors used) and later records go into a *new* block after it: a sector that was
//! flushed is never written again, so a torn write can never damage a durable block.
//!
//! # Delayed durability and the loss window
//!
//! A delayed-durable commit is an `append` without `flush_to`. The writer flushes on its
//! own when a block fills (60 KB buffered), when any durable commit or
//! `request_flush` asks, and at the latest `flush_interval` (default 10 ms, see
//! [`LogConfig`]) after the oldest unflushed record was appended. A crash therefore
//! loses at most the delayed commits acknowledged in the last `flush_interval` plus one
//! flush duration (the flush that would have hardened them; two if the writer was
//! still busy with the previous flush when the timer fired), and never more than the
//! log buffer holds ([`LogConfig::buffer_blocks`] x 60 KB, default 480 KB), because
//! appends wait (LOGBUFFER) when the buffer is full. What survives is always a prefix
//! of the log: a commit is never kept while an earlier record is lost.
//!
//! # File layout
//!
//! All integers are little-endian. Checksums are CRC32C computed with the checksum field
//! itself zeroed.
//!
//! ```text
//! offset 0       8 KB file header region
//!                  sector at 0:    file header copy A
//!                  sector at 4096: file header copy B
//! offset 8192    VLF 0: header sector, then log blocks
//!                VLF 1 ...
//!                ...              (VLFs are contiguous up to log_end)
//! ```
//!
//! **File header** (one 512-byte sector; two copies written alternately, the valid one
//! with the higher header sequence wins, so a torn rewrite loses nothing). Rewritten and
//! synced only when the VLF set changes (growth) and once at every open (to advance the
//! open generation).
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0  | 4 | magic `MQLH` |
//! | 4  | 2 | format version (1) |
//! | 6  | 2 | database id |
//! | 8  | 8 | header sequence (+1 per rewrite) |
//! | 16 | 4 | open generation (+1 per open; stamped into blocks) |
//! | 20 | 4 | VLF count |
//! | 24 | 8 | log end: 8192 + the sizes of all VLFs (the file may be longer, never shorter) |
//! | 32 | 1 | FILEGROWTH kind: 0 none, 1 pages, 2 percent |
//! | 33 | 3 | reserved (0) |
//! | 36 | 4 | FILEGROWTH value (8 KB pages or percent) |
//! | 40 | 8 | MAXSIZE in bytes (0 = UNLIMITED) |
//! | 48 | 4 | reserved (0) |
//! | 52 | 4 | CRC32C of the 512-byte sector |
//! | 56 | 456 | zero |
//!
//! **VLF header** (the first sector of every VLF). Written when the VLF is created
//! (growth), activated (new FSeqNo; synced before any block goes into the VLF), and
//! truncated (status inactive). Always a single-sector write, which a crash cannot tear.
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0  | 4 | magic `MQLV` |
//! | 4  | 4 | FSeqNo the VLF carries (0 = never used) |
//! | 8  | 8 | file offset of this VLF (self-check) |
//! | 16 | 4 | size in sectors, header sector included |
//! | 20 | 1 | status: 0 unused, 1 active, 2 inactive (truncated; keeps its FSeqNo) |
//! | 21 | 1 | reserved (0) |
//! | 22 | 2 | database id |
//! | 24 | 4 | previous FSeqNo: the VLF before this one in the log (0 = none) |
//! | 28 | 4 | open generation at activation |
//! | 32 | 8 | create LSN (the end of the log when growth created it; 0 for the initial VLFs) |
//! | 40 | 4 | CRC32C of the sector |
//! | 44 | 468 | zero |
//!
//! **Log block** (sector aligned, 1 to 120 sectors = 512 B to 60 KB). The first block of
//! a VLF is at sector 1. The next block starts where the previous one ends, unless
//! fewer than 120 sectors remain in the VLF: then the log continues at sector 1 of the
//! next VLF. Writer and scans share this rule, which is how a scan tells "continues in
//! the next VLF" from "ends here".
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0  | 4 | magic `MQLB` |
//! | 4  | 4 | FSeqNo of the VLF |
//! | 8  | 4 | block offset in sectors from the start of the VLF |
//! | 12 | 2 | size in sectors |
//! | 14 | 2 | record count (at most 4095) |
//! | 16 | 4 | open generation of the writer |
//! | 20 | 4 | CRC32C of the whole block (size x 512 bytes) |
//! | 24 | 8 | reserved (0) |
//! | 32 | .. | records: u32 length, then the bytes; back to back; zero padding to the sector end |
//!
//! The record in slot *s* (1-based) of the block at sector *b* of the VLF with FSeqNo
//! *f* has LSN *f*:*b*:*s* (see [`Lsn`]).
//!
//! # Finding the end of the log
//!
//! A block is the next block of the log only if its magic, FSeqNo, offset, size (inside
//! the VLF), record count, checksum and record chain are right and its generation is at
//! least the VLF's activation generation and the previous block's (and, for a reader of
//! a running log, at most the current one). The first block that fails is the end of
//! the log. That recognises:
//! - a torn or unwritten tail (checksum, magic);
//! - a recycled VLF's old blocks (they carry an older FSeqNo);
//! - stale blocks an earlier incarnation wrote past what turned out to be the end of
//!   the log (a crash tore an earlier block): every open syncs a new generation before
//!   writing, so when new blocks later reach such a stale block, its older generation
//!   stops the scan instead of splicing unacknowledged records into the log.
//!
//! `open` reads the file header and the VLF headers, takes the active chain (from the
//! active VLF with the highest FSeqNo back along the previous-FSeqNo links while they
//! lead to active VLFs), scans it from its oldest VLF to the end of the log, marks
//! inactive any active VLF not in the chain up to the end (leftovers of a crash during
//! activation or truncation), writes the new generation (one more than the highest in
//! the header or in any block of the log), and syncs. The next record goes into a fresh
//! block after the last valid one.
//!
//! # VLFs, growth, truncation, 9002
//!
//! A new file and every growth are split into VLFs as SQL Server does: under 64 MB
//! into 4, up to 1 GB into 8, beyond into 16; adjusted so a VLF stays between 64 KB and
//! 512 MB (the LSN's 20-bit block offset). When the log needs a new VLF it takes the
//! first reusable one after the current one in file order (wrapping). If none is
//! reusable it grows the file by FILEGROWTH (capped by MAXSIZE): the new space is zeroed,
//! the new VLF headers written and synced, then the file header rewritten and synced.
//! If it may not grow, `append` fails with 9002 ("The transaction log for database '%s'
//! is full due to '%s'", the reason set by [`LogManager::set_log_reuse_wait`]); nothing
//! logged is lost and appends work again once `truncate` frees a VLF. A failed log
//! write or sync makes the log unavailable (9001) until it is reopened.

mod error;
mod file;
mod format;
mod lsn;
mod manager;
mod scan;

pub use error::{LogError, LogResult, LogReuseWait};
pub use format::{MAX_BLOCK_BYTES, MAX_RECORD, MIN_VLF_BYTES, SECTOR};
pub use lsn::{Lsn, ParseLsnError};
pub use manager::{LogConfig, LogManager, LogSpace, LogStats, VlfInfo, VlfStatus, LOG_FILE_ID};
pub use scan::LogReader;

/// Size of the file header region at the start of the log file.
pub const FILE_HEADER_SIZE: u64 = format::FILE_HEADER_SIZE;
