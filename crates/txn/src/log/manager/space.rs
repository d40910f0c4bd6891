//! Log space: moving the log to its next VLF (reusing one or growing the file), and
//! truncation.

use super::{bump, Inner, State, Vlf};
use crate::log::error::{LogError, LogResult};
use crate::log::format::{vlf_layout, FileHeader, VlfState, FILE_HEADER_SLOTS, SECTOR};
use crate::log::lsn::Lsn;
use parking_lot::MutexGuard;

impl Inner {
    /// ALTER DATABASE ... MODIFY FILE on the log: the new FILEGROWTH and MAXSIZE take
    /// effect at once (a log that was full can grow again), made durable in the file
    /// header, and with `size` the file grows to it now. A smaller SIZE is refused
    /// (5039, as SQL Server: shrinking is DBCC SHRINKFILE's).
    pub(super) fn modify(
        &self,
        st: &mut MutexGuard<'_, State>,
        growth: storage::file::FileGrowth,
        max_bytes: Option<u64>,
        size: Option<u64>,
    ) -> LogResult<()> {
        let Some(header_seq) = st.header.header_seq.checked_add(1) else {
            return Err(LogError::Invalid("the log file header's sequence is exhausted".into()));
        };
        let header = FileHeader { header_seq, growth, max_bytes, ..st.header.clone() };
        let slot = st.next_header_slot;
        if let Err(e) = self.file.write_durable(FILE_HEADER_SLOTS[slot], &header.encode()) {
            return Err(self.fail(st, format!("rewriting the log file header: {e}")));
        }
        st.header = header;
        st.next_header_slot = 1 - slot;
        if let Some(size) = size {
            let cur = st.header.log_end;
            if size > cur {
                self.grow(st, false, Some(size - cur))?;
            }
        }
        Ok(())
    }

    /// Moves the log to the next VLF: the first reusable one after the tail in file
    /// order (wrapping), or new ones from growing the file. Its header (new FSeqNo,
    /// active, linked to the current tail) is written and synced before any block goes
    /// into it, so at most one activation is ever in doubt after a crash.
    /// `past_max`: a rollback's append, which may grow the file past MAXSIZE (see
    /// `LogManager::append_essential`).
    pub(super) fn switch_vlf(&self, st: &mut MutexGuard<'_, State>, past_max: bool) -> LogResult<()> {
        let n = st.vlfs.len();
        let candidate = (1..n).map(|i| (st.tail + i) % n).find(|&i| st.vlfs[i].reusable());
        let idx = match candidate {
            Some(i) => i,
            None => match self.grow(st, false, None) {
                Err(LogError::Full { .. }) if past_max => self.grow(st, true, None)?,
                r => r?,
            },
        };
        let seq = st.next_seq;
        let Some(next_seq) = seq.checked_add(1) else {
            return Err(self.fail(st, "FSeqNo exhausted".into()));
        };
        let prev_seq = st.vlfs[st.tail].seq;
        let mut v = st.vlfs[idx];
        v.seq = seq;
        v.prev_seq = prev_seq;
        v.state = VlfState::Active;
        v.activation_gen = self.generation;
        let written = self.file.write_durable(v.offset, &v.header(self.db_id).encode());
        if let Err(e) = written {
            // The header on disk is the old one or the new one (one sector); either is
            // consistent, but a log that cannot write is unavailable from now on.
            return Err(self.fail(st, format!("activating VLF at {:#x}: {e}", v.offset)));
        }
        st.vlfs[idx] = v;
        st.next_seq = next_seq;
        st.tail = idx;
        st.next_sector = 1;
        // A new VLF is the moment to see whether the log is filling up.
        if Self::under_pressure(st) {
            self.raise_pressure(st, false);
        }
        Ok(())
    }

    /// Grows the file by its FILEGROWTH (capped by MAXSIZE) and returns the index of the
    /// first new VLF, or 9002 if it may not grow. New space is zeroed and the new VLF
    /// headers synced before the file header that makes them part of the log is
    /// rewritten (to the other header slot) and synced: a crash at any point leaves
    /// either the old VLF set or the new one.
    ///
    /// Runs under the log's lock: logging stalls while the log grows, as in SQL Server.
    /// `by`: grow by this many bytes instead of FILEGROWTH (ALTER DATABASE ... MODIFY
    /// FILE SIZE).
    pub(super) fn grow(&self, st: &mut MutexGuard<'_, State>, past_max: bool, by: Option<u64>) -> LogResult<usize> {
        let reason = super::full_reason(st);
        let full = || LogError::Full { db: self.db_name.clone(), reason };
        let create_lsn = st.end_lsn;
        let cur = st.header.log_end;
        let cur_pages = u32::try_from(cur / 8192).unwrap_or(u32::MAX);
        let mut add = by.unwrap_or_else(|| u64::from(st.header.growth.increment(cur_pages)) * 8192);
        if past_max {
            // A rollback that must finish: its growth, at least 1 MB, whatever MAXSIZE
            // and FILEGROWTH say.
            add = add.max(1 << 20);
            diag::errorlog::log(
                "spid0",
                &format!(
                    "The transaction log for database '{}' was grown past its MAXSIZE by {} KB so that a rollback could complete.",
                    self.db_name,
                    add / 1024
                ),
            );
        } else if let Some(max) = st.header.max_bytes {
            add = add.min(max.saturating_sub(cur));
        }
        let Some((count, vlf_bytes)) = (add > 0).then(|| vlf_layout(add)).flatten() else {
            return Err(full());
        };
        // Counters that cannot grow any further make the file "unable to grow" too.
        let (Some(header_seq), Some(vlf_count)) =
            (st.header.header_seq.checked_add(1), st.header.vlf_count.checked_add(count))
        else {
            return Err(full());
        };
        let new_end = cur + u64::from(count) * vlf_bytes;
        let grown = (|| -> Result<(), (u64, std::io::Error)> {
            self.file.set_len(new_end).map_err(|e| (new_end, e))?;
            if self.zero_fill {
                self.file.zero_fill(cur, new_end).map_err(|e| (cur, e))?;
            }
            for i in 0..u64::from(count) {
                let v = Vlf {
                    offset: cur + i * vlf_bytes,
                    size_sectors: (vlf_bytes / SECTOR as u64) as u32,
                    seq: 0,
                    prev_seq: 0,
                    state: VlfState::Unused,
                    truncating: false,
                    activation_gen: 0,
                    create_lsn,
                };
                self.file.write(v.offset, &v.header(self.db_id).encode()).map_err(|e| (v.offset, e))?;
            }
            self.file.sync().map_err(|e| (cur, e))
        })();
        if let Err((offset, e)) = grown {
            // The file header still describes the old VLF set, so the log is intact;
            // report the failure to grow without failing the log.
            return Err(self.file.err(offset, e));
        }
        let header = FileHeader { header_seq, vlf_count, log_end: new_end, ..st.header.clone() };
        let slot = st.next_header_slot;
        let at = FILE_HEADER_SLOTS[slot];
        let written = self.file.write_durable(at, &header.encode());
        if let Err(e) = written {
            // Which header copy a restart will pick is now unknown (both describe a
            // valid log, one without the new VLFs); stop logging to stay consistent.
            return Err(self.fail(st, format!("rewriting the log file header: {e}")));
        }
        st.header = header;
        st.next_header_slot = 1 - slot;
        let first = st.vlfs.len();
        for i in 0..u64::from(count) {
            st.vlfs.push(Vlf {
                offset: cur + i * vlf_bytes,
                size_sectors: (vlf_bytes / SECTOR as u64) as u32,
                seq: 0,
                prev_seq: 0,
                state: VlfState::Unused,
                truncating: false,
                activation_gen: 0,
                create_lsn,
            });
        }
        bump(&self.stats.growths, 1);
        Ok(first)
    }

    pub(super) fn truncate(&self, keep_from: Lsn) -> LogResult<usize> {
        let _one_at_a_time = self.truncate_lock.lock();
        let victims: Vec<(usize, Vlf)> = {
            let mut st = self.state.lock();
            self.check_usable(&st)?;
            // Only VLFs older than the one holding the last flushed record: everything
            // in them is durable. Never the tail.
            let limit = keep_from.vlf_seq().min(st.flushed_lsn.vlf_seq());
            let tail = st.tail;
            let mut out = Vec::new();
            for (i, v) in st.vlfs.iter_mut().enumerate() {
                if v.state == VlfState::Active && !v.truncating && v.seq < limit && i != tail {
                    v.truncating = true;
                    out.push((i, *v));
                }
            }
            out
        };
        if victims.is_empty() {
            return Ok(0);
        }
        // If a crash keeps only some of these writes, the active chain `open` finds
        // (walking back from the newest VLF) stops at the newest VLF marked inactive:
        // it may keep more VLFs than asked, never lose one that is needed. Newest first
        // so that a device that keeps writes in order leaves the fewest behind.
        let mut ordered = victims.clone();
        ordered.sort_by_key(|(_, v)| std::cmp::Reverse(v.seq));
        let mut result = Ok(());
        for (_, v) in &ordered {
            let mut h = v.header(self.db_id);
            h.state = VlfState::Inactive;
            if let Err(e) = self.file.write(v.offset, &h.encode()) {
                result = Err(self.file.err(v.offset, e));
                break;
            }
        }
        if result.is_ok() {
            if let Err(e) = self.file.sync() {
                result = Err(self.file.err(0, e));
            }
        }
        let mut st = self.state.lock();
        for (i, _) in &victims {
            let v = &mut st.vlfs[*i];
            v.truncating = false;
            if result.is_ok() {
                v.state = VlfState::Inactive;
            }
        }
        result.map(|()| victims.len())
    }
}
