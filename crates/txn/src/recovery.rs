//! Creating and opening a database with its log, and crash recovery (ARIES).
//!
//! The log file header carries a *master record* (the role of SQL Server's boot-page
//! dbi_checkptLSN): the LSNs of the last complete checkpoint and the data files of the
//! database, so recovery can attach every data file without reading one of its pages
//! first — the file header and boot page may be the torn pages recovery has to repair.
//!
//! Opening a database runs:
//! 1. **Analysis** from the last checkpoint (or from the first record of a system
//!    transaction that was open at the checkpoint, whichever is older): which user
//!    transactions never ended (losers), which system transactions were cut short, the
//!    next transaction id.
//! 2. **Redo** from the checkpoint's redo start (the oldest recLSN of the pages dirty at
//!    the checkpoint): every PAGE_OP whose page LSN is older is applied again — repeating
//!    history, compensation included. A record with a full page image rebuilds the page
//!    from the image, which repairs a page whose last write was torn.
//! 3. **Undo**, in two parts: system transactions cut short are undone physically
//!    (their pages are exactly as they left them: nobody else touched those pages while
//!    they ran), then the allocation state is loaded and loser user transactions are
//!    rolled back logically (row-undo records newest first, a CLR after each).
//!
//! 4. **Deferred frees**: storage dropped by committed transactions (off-row values of
//!    deletes and updates, dropped indexes' allocation units) that the crash kept from
//!    being freed (listed by the transactions' DEFERRED_FREE records or by the
//!    checkpoint, with no tagged SYS_END saying the free was done) are freed now.
//!
//! Undo writes compensation records, so a crash during recovery is recovered the same
//! way: redo repeats the compensation, and undo continues where it stopped. Progress and
//! per-phase times go to the error log the way SQL Server reports them.

use crate::lock::LockManager;
use crate::log::{LogConfig, LogManager, Lsn};
use crate::record::DeferredFree;
use crate::record::{self, flags, Header, RecordKind};
use crate::xact::{log_err, set_comp, Compensating, TxnDb, XactState};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::file::{FileGrowth, FileSpec};
use storage::io::FileSystem;
use storage::undo::{self, RowUndo};
use storage::{BufferPool, Database, PageOp, Result, StorageError};

const MASTER_MAGIC: &[u8; 4] = b"MQMR";

/// The master record kept in the log file header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MasterRecord {
    pub checkpoint_begin: u64,
    pub checkpoint_end: u64,
    /// Data files: (file id, path).
    pub files: Vec<(u16, PathBuf)>,
}

impl MasterRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MASTER_MAGIC);
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&self.checkpoint_begin.to_le_bytes());
        out.extend_from_slice(&self.checkpoint_end.to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u16).to_le_bytes());
        for (id, p) in &self.files {
            let s = p.to_string_lossy();
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&(s.len() as u16).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    pub fn decode(b: &[u8]) -> Option<MasterRecord> {
        if b.len() < 24 || &b[0..4] != MASTER_MAGIC {
            return None;
        }
        let u64_at = |i: usize| b.get(i..i + 8).map(|x| u64::from_le_bytes(x.try_into().unwrap_or([0; 8])));
        let u16_at = |i: usize| b.get(i..i + 2).map(|x| u16::from_le_bytes([x[0], x[1]]));
        let mut m = MasterRecord { checkpoint_begin: u64_at(6)?, checkpoint_end: u64_at(14)?, files: Vec::new() };
        let n = u16_at(22)? as usize;
        let mut at = 24;
        for _ in 0..n {
            let id = u16_at(at)?;
            let len = u16_at(at + 2)? as usize;
            let p = b.get(at + 4..at + 4 + len)?;
            m.files.push((id, PathBuf::from(String::from_utf8_lossy(p).into_owned())));
            at += 4 + len;
        }
        Some(m)
    }
}

/// The log file of a new database (LOG ON (...)).
#[derive(Debug, Clone)]
pub struct LogSpec {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub growth: FileGrowth,
    pub max_bytes: Option<u64>,
}

/// What recovery did, for the error log, tests and benchmarks.
#[derive(Debug, Clone, Default)]
pub struct RecoveryReport {
    pub analysis: Duration,
    pub redo: Duration,
    pub system_undo: Duration,
    pub undo: Duration,
    pub redo_start: u64,
    pub end_lsn: u64,
    pub records_scanned: u64,
    pub redo_bytes: u64,
    pub pages_redone: u64,
    pub committed_rolled_forward: u64,
    pub losers_rolled_back: u64,
    pub system_txns_undone: u64,
    /// Deferred frees (storage dropped by committed transactions) done by recovery.
    pub deferred_frees: u64,
}

/// Reads the record at exactly `lsn`.
fn read_record(log: &LogManager, lsn: u64) -> Result<Vec<u8>> {
    let mut r = log.reader(Lsn(lsn));
    match r.next() {
        Some(Ok((got, bytes))) if got.as_u64() == lsn => Ok(bytes),
        Some(Err(e)) => Err(log_err(e)),
        _ => Err(StorageError::corrupt("transaction log", format!("no log record at LSN {}", Lsn(lsn)))),
    }
}

fn rec_err(e: record::RecordError) -> StorageError {
    StorageError::corrupt("transaction log", e.to_string())
}

impl TxnDb {
    /// CREATE DATABASE: creates the data files and the log, then takes the first
    /// checkpoint (which writes the master record).
    pub fn create(
        pool: Arc<BufferPool>,
        fs: Arc<dyn FileSystem>,
        id: u16,
        name: &str,
        files: Vec<FileSpec>,
        log: LogSpec,
        config: LogConfig,
    ) -> Result<Arc<TxnDb>> {
        if let Some(dir) = log.path.parent() {
            fs.create_dir_all(dir).map_err(|e| StorageError::Io {
                file: dir.display().to_string(),
                offset: 0,
                source: e,
            })?;
        }
        let lm =
            LogManager::create_with(fs.clone(), &log.path, id, name, log.size_bytes, log.growth, log.max_bytes, config)
                .map_err(log_err)?;
        let db = Database::create(pool, &*fs, id, name, files)?;
        let t = TxnDb::attach(db, lm, Arc::new(LockManager::new()), 1)?;
        t.checkpoint(crate::checkpoint::CheckpointKind::Internal)?;
        Ok(t)
    }

    /// Opens a database from its log file, running crash recovery.
    pub fn open(
        pool: Arc<BufferPool>,
        fs: Arc<dyn FileSystem>,
        id: u16,
        log_path: &Path,
        config: LogConfig,
    ) -> Result<(Arc<TxnDb>, RecoveryReport)> {
        Self::open_named(pool, fs, id, "", log_path, config)
    }

    /// [`TxnDb::open`] for a database whose name the caller knows (the instance's
    /// database directory): the error log's "Starting up database" line names it. With an
    /// empty name the primary data file's stem stands in.
    pub fn open_named(
        pool: Arc<BufferPool>,
        fs: Arc<dyn FileSystem>,
        id: u16,
        name: &str,
        log_path: &Path,
        config: LogConfig,
    ) -> Result<(Arc<TxnDb>, RecoveryReport)> {
        let lm = LogManager::open_with(fs.clone(), log_path, id, "", config).map_err(log_err)?;
        let master = lm
            .master_record()
            .and_then(|b| MasterRecord::decode(&b))
            .ok_or_else(|| StorageError::corrupt("transaction log", "the log file has no checkpoint record"))?;
        let primary =
            master.files.iter().find(|(id, _)| *id == 1).map(|(_, p)| p.clone()).ok_or_else(|| {
                StorageError::corrupt("transaction log", "the master record lists no primary data file")
            })?;
        let db = Database::attach_for_recovery(pool.clone(), &*fs, id, &master.files)?;
        let r = recover(&db, &lm, &master, &*fs, &primary, name);
        match r {
            Ok((t, report)) => Ok((t, report)),
            Err(e) => {
                pool.discard(id);
                let _ = pool.detach(id);
                lm.shutdown();
                Err(e)
            }
        }
    }
}

struct Analysis {
    /// Loser user transactions: id -> last LSN of their chain.
    losers: HashMap<u64, u64>,
    /// System transactions cut short: id -> last LSN of their chain.
    open_sys: HashMap<u64, u64>,
    next_id: u64,
    redo_start: u64,
    committed: u64,
    /// Deferred frees of committed transactions that the log does not show done.
    pending_frees: HashMap<storage::CompletionTag, DeferredFree>,
}

fn analyse(log: &LogManager, master: &MasterRecord) -> Result<(Analysis, u64)> {
    let end = record::decode_ckpt_end(&read_record(log, master.checkpoint_end)?).map_err(rec_err)?;
    let start =
        end.open_sys.iter().map(|&(_, f)| f).chain(std::iter::once(end.begin_lsn)).min().unwrap_or(end.begin_lsn);
    let mut a = Analysis {
        losers: end.active.iter().map(|x| (x.xact_id, x.last_lsn)).collect(),
        open_sys: HashMap::new(),
        next_id: end.next_xact_id,
        redo_start: end.redo_start_lsn.min(end.begin_lsn),
        committed: 0,
        pending_frees: end.pending_frees.iter().map(|f| ((f.xact_id, f.index), f.what)).collect(),
    };
    // DEFERRED_FREE entries of transactions whose COMMIT_XACT has not been seen yet.
    let mut intents: HashMap<u64, Vec<(u32, DeferredFree)>> = HashMap::new();
    let mut scanned = 0u64;
    for item in log.reader(Lsn(start)) {
        let (lsn, bytes) = item.map_err(log_err)?;
        let lsn = lsn.as_u64();
        scanned += 1;
        let h = Header::decode(&bytes).map_err(rec_err)?;
        a.next_id = a.next_id.max(h.xact_id + 1).max(h.sys_id + 1);
        if h.sys_id != 0 {
            if h.has(flags::ENDS_SYS) {
                a.open_sys.remove(&h.sys_id);
                if h.kind() == Some(RecordKind::SysEnd) {
                    if let Some(tag) = record::sys_end_tag(&bytes) {
                        a.pending_frees.remove(&tag);
                    }
                }
            } else if matches!(h.kind(), Some(RecordKind::PageOp)) {
                a.open_sys.insert(h.sys_id, lsn);
            }
        }
        if h.xact_id == 0 {
            continue;
        }
        match h.kind() {
            Some(
                RecordKind::BeginXact
                | RecordKind::RowUndo
                | RecordKind::RowOp
                | RecordKind::Clr
                | RecordKind::Savepoint,
            ) => {
                a.losers.insert(h.xact_id, lsn);
            }
            Some(RecordKind::DeferredFree) => {
                a.losers.insert(h.xact_id, lsn);
                let (first, ptrs) = record::decode_deferred_free(&bytes).map_err(rec_err)?;
                let list = intents.entry(h.xact_id).or_default();
                list.extend(ptrs.into_iter().enumerate().map(|(i, p)| (first + i as u32, p)));
            }
            Some(RecordKind::CommitXact) => {
                if a.losers.remove(&h.xact_id).is_some() {
                    a.committed += 1;
                }
                for (index, p) in intents.remove(&h.xact_id).unwrap_or_default() {
                    a.pending_frees.insert((h.xact_id, index), p);
                }
            }
            Some(RecordKind::AbortXact) => {
                a.losers.remove(&h.xact_id);
                intents.remove(&h.xact_id);
            }
            _ => {}
        }
    }
    Ok((a, scanned))
}

fn recover(
    db: &Arc<Database>,
    lm: &Arc<LogManager>,
    master: &MasterRecord,
    fs: &dyn FileSystem,
    primary: &Path,
    name: &str,
) -> Result<(Arc<TxnDb>, RecoveryReport)> {
    let mut report = RecoveryReport::default();
    let t0 = Instant::now();
    let name_guess = if name.is_empty() {
        primary.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    } else {
        name.to_string()
    };
    diag::errorlog::log("spid0s", &format!("Starting up database '{name_guess}'."));

    // 1. Analysis.
    let (a, scanned) = analyse(lm, master)?;
    report.analysis = t0.elapsed();
    report.records_scanned = scanned;
    report.redo_start = a.redo_start;
    report.committed_rolled_forward = a.committed;

    // 2. Redo.
    let t1 = Instant::now();
    let mut last_progress = Instant::now();
    // Pages whose disk image failed its checks (824: a write the crash tore) at a record
    // without a page image. A page written after the redo start and changed again logs a
    // full image at that change; if a later write of it was torn, its records before
    // that image cannot be applied to the disk copy, but need not be: the image holds
    // every earlier change. So the page's records are skipped until its next image (or
    // format); a page still waiting at the end of the log is really damaged.
    let mut torn: HashMap<storage::PageId, StorageError> = HashMap::new();
    for item in lm.reader(Lsn(a.redo_start)) {
        let (lsn, bytes) = item.map_err(log_err)?;
        let lsn = lsn.as_u64();
        report.end_lsn = lsn;
        let h = Header::decode(&bytes).map_err(rec_err)?;
        if !matches!(h.kind(), Some(RecordKind::PageOp | RecordKind::RowOp)) {
            continue;
        }
        report.redo_bytes += bytes.len() as u64;
        let body = record::decode_page_op(&h, &bytes).map_err(rec_err)?;
        let (op, _) = PageOp::decode(body.op).map_err(|e| StorageError::Page { page: body.page, source: e })?;
        let rebuilds = body.image.is_some() || matches!(op, PageOp::Format { .. });
        if !rebuilds && torn.contains_key(&body.page) {
            continue;
        }
        torn.remove(&body.page);
        match db.redo(body.page, lsn, body.image, &op) {
            Ok(true) => report.pages_redone += 1,
            Ok(false) => {}
            Err(e) if e.number() == 824 => {
                torn.insert(body.page, e);
            }
            Err(e) => return Err(e),
        }
        if last_progress.elapsed() > Duration::from_secs(5) {
            last_progress = Instant::now();
            diag::errorlog::log(
                "spid0s",
                &format!("Recovery of database '{name_guess}' ({}) is in progress: redo at LSN {}. Phase 2 of 3. This is an informational message only. No user action is required.", db.id, Lsn(lsn)),
            );
        }
    }
    if let Some((_, e)) = torn.into_iter().next() {
        return Err(e);
    }
    report.redo = t1.elapsed();

    // 3a. Physical undo of system transactions cut short. The hook is installed first so
    // the compensation is logged.
    let txn = TxnDb::attach(db.clone(), lm.clone(), Arc::new(LockManager::new()), a.next_id)?;
    let t2 = Instant::now();
    let mut sys: Vec<(u64, u64)> = a.open_sys.iter().map(|(&k, &v)| (k, v)).collect();
    sys.sort_by(|x, y| y.1.cmp(&x.1)); // newest first
    for (sys_id, last) in sys {
        let mut lsn = last;
        while lsn != 0 {
            let bytes = read_record(lm, lsn)?;
            let h = Header::decode(&bytes).map_err(rec_err)?;
            if h.has(flags::COMPENSATION) || !matches!(h.kind(), Some(RecordKind::PageOp)) {
                lsn = h.sys_prev_lsn;
                continue;
            }
            let body = record::decode_page_op(&h, &bytes).map_err(rec_err)?;
            set_comp(Some(Compensating::Physical { sys_id, undo_next: h.sys_prev_lsn }));
            let r = undo::apply_physical_undo(db, body.page, body.undo_material);
            set_comp(None);
            r?;
            lsn = h.sys_prev_lsn;
        }
        let h = Header { sys_id, flags: flags::ENDS_SYS, ..Header::new(RecordKind::SysEnd) };
        let mut rec = Vec::new();
        record::encode_bare(&h, &mut rec);
        lm.append(&rec).map_err(log_err)?;
        report.system_txns_undone += 1;
    }
    report.system_undo = t2.elapsed();

    // The pages are structurally consistent now: load the allocation state.
    db.finish_open(fs, primary)?;

    // 3b. Logical undo of loser user transactions.
    let t3 = Instant::now();
    let mut losers: Vec<(u64, u64)> = a.losers.iter().map(|(&k, &v)| (k, v)).collect();
    losers.sort_by(|x, y| y.1.cmp(&x.1));
    for (xact_id, last) in losers {
        let state = XactState::for_recovery(xact_id, db.id, last);
        let _scope = state.enter();
        let mut lsn = last;
        while lsn != 0 {
            let bytes = read_record(lm, lsn)?;
            let h = Header::decode(&bytes).map_err(rec_err)?;
            match h.kind() {
                Some(kind @ (RecordKind::RowUndo | RecordKind::RowOp)) => {
                    let body = if kind == RecordKind::RowOp {
                        record::decode_page_op(&h, &bytes).map_err(rec_err)?.undo_material
                    } else {
                        record::row_undo_body(&bytes)
                    };
                    let u = RowUndo::decode(body)?;
                    set_comp(Some(Compensating::Logical));
                    let r = undo::apply_row_undo(db, &u);
                    set_comp(None);
                    r?;
                    state.append_chain(&txn, RecordKind::Clr, |hh, out| record::encode_u64(hh, h.prev_lsn, out))?;
                    if let RowUndo::HeapClear { au, rid } = u {
                        storage::heap::Heap::open(db, au)?.remove_ghost(rid)?;
                    }
                    lsn = h.prev_lsn;
                }
                Some(RecordKind::Clr) => lsn = record::decode_u64(&bytes).map_err(rec_err)?,
                Some(RecordKind::BeginXact) => lsn = 0,
                _ => lsn = h.prev_lsn,
            }
        }
        state.append_chain(&txn, RecordKind::AbortXact, |hh, out| record::encode_bare(hh, out))?;
        report.losers_rolled_back += 1;
    }
    // Ghosts left by committed deletes whose cleanup the crash prevented: every
    // transaction has ended now, so every ghost can go (SQL Server's ghost cleanup).
    for au in db.alloc_units() {
        if au.kind == storage::AllocUnitKind::InRowData && au.index_id == 0 {
            storage::heap::Heap::open(db, au.id)?.cleanup_ghosts()?;
        }
    }
    report.undo = t3.elapsed();

    // Storage dropped by committed transactions that a crash kept from being freed
    // (their frees' tagged end records are missing): freed now, each tagged as at run
    // time, so a crash here leaves the rest for the next recovery and never frees one
    // twice.
    if !a.pending_frees.is_empty() {
        let mut frees: Vec<(storage::CompletionTag, DeferredFree)> = a.pending_frees.into_iter().collect();
        frees.sort_unstable_by_key(|(t, _)| *t);
        report.deferred_frees = frees.len() as u64;
        txn.add_pending_frees(&frees);
        txn.run_deferred_frees(frees);
    }
    lm.flush_to(lm.end_lsn()).map_err(log_err)?;

    let name = db.name();
    let id = db.id;
    if report.committed_rolled_forward > 0 {
        diag::errorlog::log("spid0s", &format!("{} transactions rolled forward in database '{name}' ({id}:0). This is an informational message only. No user action is required.", report.committed_rolled_forward));
    }
    if report.losers_rolled_back > 0 {
        diag::errorlog::log("spid0s", &format!("{} transactions rolled back in database '{name}' ({id}:0). This is an informational message only. No user action is required.", report.losers_rolled_back));
    }
    diag::errorlog::log(
        "spid0s",
        &format!(
            "Recovery completed for database {name} (database ID {id}) in {} second(s) (analysis {} ms, redo {} ms, undo {} ms [system undo {} ms, regular undo {} ms].) This is an informational message only. No user action is required.",
            t0.elapsed().as_secs(),
            report.analysis.as_millis(),
            report.redo.as_millis(),
            (report.system_undo + report.undo).as_millis(),
            report.system_undo.as_millis(),
            report.undo.as_millis()
        ),
    );
    txn.checkpoint(crate::checkpoint::CheckpointKind::Internal)?;
    Ok((txn, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_record_round_trip() {
        let m = MasterRecord {
            checkpoint_begin: 5,
            checkpoint_end: 9,
            files: vec![(1, "/d/a.mdf".into()), (3, "/d/b.ndf".into())],
        };
        assert_eq!(MasterRecord::decode(&m.encode()), Some(m.clone()));
        let enc = m.encode();
        for cut in 0..enc.len() {
            let _ = MasterRecord::decode(&enc[..cut]);
        }
        assert!(MasterRecord::decode(b"nope").is_none());
    }
}
