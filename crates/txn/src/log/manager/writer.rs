//! The log writer thread: group commit and the delayed-durability timer.

use super::{bump, Inner, SealedBlock};
use crate::log::format::{seal_block, MAX_BLOCK_BYTES};
use crate::log::lsn::Lsn;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Inner {
    /// The log writer thread: waits for work, takes everything buffered, writes it in as
    /// few calls as possible, syncs, publishes the new flushed LSN and wakes waiters.
    pub(super) fn writer_loop(self: Arc<Self>) {
        let mut scratch = Vec::new();
        let mut ready = Vec::new();
        loop {
            let mut batch = {
                let mut st = self.state.lock();
                loop {
                    if let Some(cause) = st.failed.clone() {
                        // Whoever waits for a flush hears of the failure.
                        ready.append(&mut st.completions);
                        drop(st);
                        self.complete(&mut ready, Some(&|| self.unavailable(&cause)));
                        return;
                    }
                    if !st.has_unflushed() {
                        if st.shutdown {
                            return;
                        }
                        // Nothing buffered: a request means nothing to do. Sleep until
                        // an append starts the timer (or a flush, shutdown or failure):
                        // an idle database's writer does not wake 100 times a second.
                        st.flush_requested = false;
                        st.writer_idle = true;
                        self.writer_cv.wait(&mut st);
                        st.writer_idle = false;
                        continue;
                    }
                    let interval = st.flush_interval;
                    let age = st.oldest_unflushed.map_or(interval, |t| t.elapsed());
                    if st.shutdown || st.flush_requested || !st.sealed.is_empty() || age >= interval {
                        break;
                    }
                    self.writer_cv.wait_for(&mut st, interval - age);
                }
                self.seal_open(&mut st);
                st.in_flight_bytes += st.sealed_bytes;
                st.sealed_bytes = 0;
                st.flush_requested = false;
                st.oldest_unflushed = None;
                st.flush_gen += 1;
                if let Some(last) = st.sealed.last() {
                    st.in_flight_end = last.last_lsn;
                }
                std::mem::take(&mut st.sealed)
            };
            let result = self.write_batch(&mut batch, &mut scratch);
            let mut st = self.state.lock();
            st.in_flight_bytes = 0;
            st.in_flight_end = Lsn::NULL;
            let gen = st.flush_gen;
            let failed = match result {
                Ok(()) => {
                    if let Some(last) = batch.last() {
                        st.flushed_lsn = last.last_lsn;
                        self.flushed.store(last.last_lsn.0, Ordering::Release);
                    }
                    // The replies this flush made durable (`when_durable`).
                    let flushed = st.flushed_lsn;
                    let mut i = 0;
                    while i < st.completions.len() {
                        if st.completions[i].lsn <= flushed {
                            ready.push(st.completions.swap_remove(i));
                        } else {
                            i += 1;
                        }
                    }
                    false
                }
                Err(cause) => {
                    self.fail(&mut st, cause);
                    true
                }
            };
            let keep = st.buffer_limit / MAX_BLOCK_BYTES + 1;
            for b in batch {
                if st.spare.len() < keep {
                    st.spare.push(b.buf);
                }
            }
            self.done_cv.notify_all();
            // Only the committers this flush made durable (see `State::in_flight_end`).
            self.flush_done[(gen % 2) as usize].notify_all();
            drop(st);
            // A failure's completions are run at the top of the loop, with the rest.
            if !failed {
                self.complete(&mut ready, None);
            }
        }
    }

    /// Writes one batch of sealed blocks (already in log order) and syncs. Blocks that
    /// are contiguous in the file go out in one `write_at`.
    pub(super) fn write_batch(&self, batch: &mut [SealedBlock], scratch: &mut Vec<u8>) -> Result<(), String> {
        for b in batch.iter_mut() {
            seal_block(&mut b.buf, b.seq, b.sector, b.count, self.generation);
        }
        let mut total = 0u64;
        let mut writes = 0u64;
        let mut last_write: Option<(u64, Duration)> = None;
        let mut i = 0;
        while i < batch.len() {
            let mut j = i + 1;
            while j < batch.len()
                && batch[j].vlf == batch[j - 1].vlf
                && batch[j].sector == batch[j - 1].sector + batch[j - 1].sectors()
            {
                j += 1;
            }
            let run = &batch[i..j];
            let data: &[u8] = if run.len() == 1 {
                &run[0].buf
            } else {
                scratch.clear();
                for b in run {
                    scratch.extend_from_slice(&b.buf);
                }
                scratch
            };
            let took = self
                .file
                .write_uncounted(run[0].offset, data)
                .map_err(|e| format!("log write at {:#x}: {e}", run[0].offset))?;
            // Each write is recorded when the next one starts; the last one carries the
            // sync, which is what a committer really waits for.
            if let Some((bytes, stall)) = last_write.replace((data.len() as u64, took)) {
                self.file.stats.record_write(bytes, stall);
            }
            total += data.len() as u64;
            writes += 1;
            i = j;
        }
        let t = Instant::now();
        let synced = self.file.sync();
        let sync_time = t.elapsed();
        if let Some((bytes, stall)) = last_write {
            self.file.stats.record_write(bytes, stall + sync_time);
        }
        synced.map_err(|e| format!("log flush (sync): {e}"))?;
        bump(&self.stats.flushes, 1);
        bump(&self.stats.flush_writes, writes);
        bump(&self.stats.blocks_flushed, batch.len() as u64);
        bump(&self.stats.bytes_flushed, total);
        self.counters.log_flushes.inc();
        self.counters.log_bytes_flushed.add(total as i64);
        Ok(())
    }
}
