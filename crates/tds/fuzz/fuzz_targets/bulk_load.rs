//! Bulk-load messages (the rows of a bulk copy): COLMETADATA, ROW/NBCROW tokens, DONE,
//! for clients before and after TDS 7.2.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (version, body) = match data.split_first() {
        Some((flag, rest)) if flag & 1 == 1 => (tds::login::TDS_7_1, rest),
        Some((_, rest)) => (tds::login::TDS_7_4, rest),
        None => return,
    };
    let _ = tds::bulk::decode_bulk_load(body, version);
});
