//! Append, flush, reopen, read back; LSNs; the reader's start points; damaged files.

mod common;

use common::*;
use proptest::prelude::*;
use std::sync::Arc;
use storage::file::FileGrowth;
use storage::io::{FaultFs, FileSystem, MemFs};
use txn::log::{LogError, LogManager, Lsn, MAX_RECORD};

const SIZES: &[usize] = &[
    1, 2, 3, 100, 479, 480, 507, 508, 511, 512, 513, 1000, 4096, 8000, 20_000, 50_000, 50_000, 7, 60_000, 1, 30_000,
    45_000, 2, 50_000,
];

fn mem() -> Arc<dyn FileSystem> {
    Arc::new(MemFs::new())
}

#[test]
fn append_flush_reopen_read_back() {
    let fs = mem();
    let db = db_id();
    let name = db_name("basic");
    let log = create(fs.clone(), db, &name, 4 * MB, FileGrowth::Pages(128), None);
    let mut expect = Vec::new();
    for (i, &len) in SIZES.iter().enumerate() {
        let rec = payload(1, i as u32, len);
        let lsn = log.append(&rec).unwrap();
        if let Some((prev, _)) = expect.last() {
            assert!(lsn > *prev, "LSNs grow: {prev} then {lsn}");
        }
        expect.push((lsn, rec));
        if i % 5 == 4 {
            log.flush_to(lsn).unwrap();
            assert!(log.flushed_lsn() >= lsn);
        }
    }
    let end = log.end_lsn();
    assert_eq!(end, expect.last().unwrap().0);
    log.flush_to(end).unwrap();
    assert_eq!(log.flushed_lsn(), end);
    assert_eq!(read_all(&log), expect);
    log.shutdown();
    assert!(matches!(log.append(b"x"), Err(LogError::ShutDown(_))));
    drop(log);

    let log = open(fs.clone(), db, &name);
    assert_eq!(log.end_lsn(), end);
    assert_eq!(log.flushed_lsn(), end);
    assert_eq!(read_all(&log), expect);
    // The next record starts a fresh block after the last one.
    let lsn = log.append(b"after reopen").unwrap();
    assert!(lsn > end);
    assert_eq!(lsn.slot(), 1);
    log.flush_to(lsn).unwrap();
    expect.push((lsn, b"after reopen".to_vec()));
    assert_eq!(read_all(&log), expect);
    drop(log);
    let log = open(fs, db, &name);
    assert_eq!(read_all(&log), expect);
    assert_eq!(log.generation(), 3);
}

#[test]
fn lsns_pack_print_and_parse() {
    let fs = mem();
    let log = create(fs, db_id(), &db_name("lsn"), MB, FileGrowth::None, None);
    let a = log.append(b"a").unwrap();
    let b = log.append(b"b").unwrap();
    // The first record of a new log: FSeqNo 1, the block right after the VLF header
    // sector, slot 1.
    assert_eq!(a, Lsn::new(1, 1, 1).unwrap());
    assert_eq!(a.to_string(), "00000001:00000001:0001");
    assert_eq!(b.to_string(), "00000001:00000001:0002");
    assert_eq!(b.to_string().parse::<Lsn>().unwrap(), b);
    log.flush_to(b).unwrap();
    // A flushed block is never appended to: the next record opens a new block right
    // after its sector.
    let c = log.append(b"c").unwrap();
    assert_eq!(c.to_string(), "00000001:00000002:0001");
}

#[test]
fn records_become_visible_to_the_reader_once_flushed() {
    let log = create(mem(), db_id(), &db_name("vis"), MB, FileGrowth::None, None);
    log.set_flush_interval(std::time::Duration::from_secs(3600));
    let a = log.append(b"one").unwrap();
    log.flush_to(a).unwrap();
    let _b = log.append(b"two").unwrap();
    let seen: Vec<_> = read_all(&log).into_iter().map(|(l, _)| l).collect();
    assert_eq!(seen, vec![a]);
}

#[test]
fn reader_start_points() {
    let log = create(mem(), db_id(), &db_name("from"), 2 * MB, FileGrowth::None, None);
    let mut lsns = Vec::new();
    for i in 0..300u32 {
        lsns.push(log.append(&payload(2, i, 1 + (i as usize * 37) % 3000)).unwrap());
        if i % 7 == 0 {
            log.flush_to(*lsns.last().unwrap()).unwrap();
        }
    }
    log.flush_to(log.end_lsn()).unwrap();
    for k in [0usize, 1, 6, 7, 8, 150, 299] {
        let got: Vec<Lsn> = log.reader(lsns[k]).map(|r| r.unwrap().0).collect();
        assert_eq!(got, lsns[k..].to_vec(), "from record {k}");
    }
    // Past the end: nothing.
    let past = Lsn::new(lsns[299].vlf_seq() + 5, 1, 1).unwrap();
    assert_eq!(log.reader(past).count(), 0);
    // Inside the log but not at a block start (the second sector of a multi-sector
    // block): 9003.
    let (a, _) = lsns
        .windows(2)
        .map(|w| (w[0], w[1]))
        .find(|(a, b)| a.vlf_seq() == b.vlf_seq() && b.block() > a.block() + 1)
        .expect("a multi-sector block");
    let bogus = Lsn::new(a.vlf_seq(), a.block() + 1, 1).unwrap();
    match log.reader(bogus).next() {
        Some(Err(e)) => assert_eq!(e.to_sql_error().number, 9003, "{e}"),
        other => panic!("expected 9003, got {other:?}"),
    }
    // An FSeqNo the log does not hold (truncated away or never used) before the end: 9003.
    let gone = Lsn::new(0x7fff_0000, 1, 1).unwrap();
    assert_eq!(log.reader(gone).count(), 0, "past the end is simply empty");
}

#[test]
fn record_size_limits() {
    let log = create(mem(), db_id(), &db_name("big"), 2 * MB, FileGrowth::None, None);
    let max = vec![0xAB; MAX_RECORD];
    let l = log.append(&max).unwrap();
    let e = log.append(&vec![0u8; MAX_RECORD + 1]).unwrap_err();
    assert!(matches!(e, LogError::RecordTooLarge { .. }), "{e}");
    let empty = log.append(&[]).unwrap();
    log.flush_to(empty).unwrap();
    let all = read_all(&log);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0], (l, max));
    assert_eq!(all[1], (empty, Vec::new()));
}

#[test]
fn flush_to_past_the_end_flushes_everything() {
    let log = create(mem(), db_id(), &db_name("past"), MB, FileGrowth::None, None);
    log.flush_to(Lsn::new(99, 1, 1).unwrap()).unwrap();
    let a = log.append(b"x").unwrap();
    log.flush_to(Lsn::new(99, 1, 1).unwrap()).unwrap();
    assert_eq!(log.flushed_lsn(), a);
    log.flush_to(Lsn::NULL).unwrap();
}

#[test]
fn wal_gate_flushes_through_the_log() {
    use storage::WalGate;
    let log = create(mem(), db_id(), &db_name("wal"), MB, FileGrowth::None, None);
    log.set_flush_interval(std::time::Duration::from_secs(3600));
    let a = log.append(b"page op").unwrap();
    let gate: Arc<dyn WalGate> = log.clone();
    assert!(gate.flushed_lsn() < a.0);
    gate.flush_to(a.0).unwrap();
    assert!(gate.flushed_lsn() >= a.0);
}

#[test]
fn file_and_counter_statistics_record_flushes() {
    let db = db_id();
    let name = db_name("stats");
    let log = create(mem(), db, &name, MB, FileGrowth::None, None);
    let before = diag::file_stats(Some(db), Some(2))[0];
    for i in 0..10u32 {
        let l = log.append(&payload(3, i, 300)).unwrap();
        log.flush_to(l).unwrap();
    }
    let after = diag::file_stats(Some(db), Some(2))[0];
    let s = log.stats();
    assert_eq!(s.flushes, 10);
    assert_eq!(s.commits_flushed, 10);
    assert_eq!(after.num_of_writes - before.num_of_writes, s.flush_writes);
    assert_eq!(after.num_of_bytes_written - before.num_of_bytes_written, s.bytes_flushed);
    assert_eq!(s.bytes_flushed, 10 * 512);
    let c = diag::database_counters(&name);
    assert_eq!(c.log_flushes.get(), 10);
    assert_eq!(c.log_bytes_flushed.get(), 10 * 512);
}

#[test]
fn open_refuses_foreign_and_missing_files() {
    let fs = mem();
    let db = db_id();
    let name = db_name("foreign");
    drop(create(fs.clone(), db, &name, MB, FileGrowth::None, None));
    let e = LogManager::open(fs.clone(), &log_path(), db + 1, &name).err().unwrap();
    assert_eq!(e.to_sql_error().number, 9004, "{e}");
    let e = LogManager::open(fs.clone(), std::path::Path::new("/nope.ldf"), db, &name).err().unwrap();
    assert!(matches!(e, LogError::Io { .. }), "{e}");
    let e = LogManager::create(fs, &log_path(), db, &name, MB, FileGrowth::None, None).err().unwrap();
    assert!(matches!(e, LogError::Invalid(_)), "{e}");
}

/// Builds a log with some records, then returns its file system and the records.
fn log_with_records(seed: u64, n: u32) -> (FaultFs, u16, String, Vec<(Lsn, Vec<u8>)>) {
    let fs = FaultFs::new(seed);
    let db = db_id();
    let name = db_name("rot");
    let log = create(Arc::new(fs.clone()), db, &name, 512 * KB, FileGrowth::Pages(64), None);
    let mut recs = Vec::new();
    for i in 0..n {
        let rec = payload(9, i, 1 + (i as usize * 977) % 9000);
        let l = log.append(&rec).unwrap();
        recs.push((l, rec));
        if i % 3 == 0 {
            log.flush_to(l).unwrap();
        }
    }
    log.shutdown();
    (fs, db, name, recs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        if std::env::var("MESQUITE_LONG").is_ok() { 400 } else { 48 }
    ))]

    /// Bit rot anywhere: opening fails with a typed error, or the log reads back as a
    /// prefix of what was written, never a damaged record.
    #[test]
    fn damaged_log_is_a_prefix_or_a_typed_error(
        seed in 0u64..1000,
        n in 1u32..80,
        hits in proptest::collection::vec((any::<u32>(), 1u8..=255), 1..4),
    ) {
        let (fs, db, name, recs) = log_with_records(seed, n);
        let path = log_path();
        let len = fs.durable_bytes(&path).unwrap().len() as u64;
        for (at, mask) in hits {
            fs.corrupt(&path, u64::from(at) % len, &[mask]).unwrap();
        }
        match LogManager::open_with(Arc::new(fs.clone()), &path, db, &name, config_fast()) {
            Err(e) => {
                let n = e.to_sql_error().number;
                prop_assert!(n == 9004 || n == 823, "{e}");
            }
            Ok(log) => {
                let got: Vec<_> = log.reader(Lsn::NULL).collect();
                for (i, r) in got.iter().enumerate() {
                    let r = r.as_ref().map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(r, &recs[i]);
                }
                // And the log still works.
                let l = log.append(b"after rot").unwrap();
                log.flush_to(l).unwrap();
            }
        }
    }

    /// Pure garbage is never a log.
    #[test]
    fn garbage_file_is_not_a_log(bytes in proptest::collection::vec(any::<u8>(), 0..20_000)) {
        let fs = MemFs::new();
        let f = fs.open(&log_path(), true).unwrap();
        f.write_at(0, &bytes).unwrap();
        let r = LogManager::open(Arc::new(fs), &log_path(), 1, "garbage");
        prop_assert!(r.is_err());
    }
}

#[test]
fn either_file_header_copy_is_enough() {
    for damaged in [0u64, 4096] {
        let fs = FaultFs::new(damaged);
        let db = db_id();
        let name = db_name("hdr");
        let mut expect = Vec::new();
        let log = create(Arc::new(fs.clone()), db, &name, MB, FileGrowth::Pages(64), None);
        // Three incarnations (generations 1 to 3), so both copies are valid and differ.
        for session in 0..3u32 {
            let log = if session == 0 { log.clone() } else { open(Arc::new(fs.clone()), db, &name) };
            for i in 0..5u32 {
                let rec = payload(session, i, 3_000);
                expect.push((log.append(&rec).unwrap(), rec));
            }
            log.flush_to(log.end_lsn()).unwrap();
            log.shutdown();
        }
        fs.corrupt(&log_path(), damaged + 10, &[0xFF]).unwrap();
        let log = open(Arc::new(fs.clone()), db, &name);
        assert_eq!(read_all(&log), expect, "header copy at {damaged} damaged");
        let l = log.append(b"more").unwrap();
        log.flush_to(l).unwrap();
    }
}

#[test]
fn a_failed_flush_makes_the_log_unavailable_until_reopened() {
    let fs = FaultFs::new(11);
    let db = db_id();
    let name = db_name("ioerr");
    let log = create(Arc::new(fs.clone()), db, &name, MB, FileGrowth::None, None);
    let mut durable = Vec::new();
    for i in 0..5u32 {
        let rec = payload(6, i, 700);
        let l = log.append(&rec).unwrap();
        log.flush_to(l).unwrap();
        durable.push((l, rec));
    }
    fs.fail_writes_after(0, std::io::ErrorKind::Other);
    let l = log.append(b"lost").unwrap();
    let e = log.flush_to(l).unwrap_err();
    assert_eq!(e.to_sql_error().number, 9001, "{e}");
    assert_eq!(e.to_sql_error().severity, 21);
    // Sticky: nothing more is logged, but what was durable stays so.
    assert_eq!(log.append(b"x").unwrap_err().to_sql_error().number, 9001);
    log.flush_to(durable[4].0).unwrap();
    // The WAL gate reports it as a storage error.
    let se = storage::WalGate::flush_to(&*log, l.0).unwrap_err();
    assert!(se.to_string().contains("not available"), "{se}");
    drop(log);
    fs.clear_faults();
    let log = open(Arc::new(fs), db, &name);
    let got = read_all(&log);
    assert!(got.starts_with(&durable));
    assert!(got.len() <= durable.len() + 1);
}
