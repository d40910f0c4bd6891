//! The packet reassembler: arbitrary bytes as a connection's input stream, with a small
//! message limit so the size check is reached.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(messages) = tds::packet::decode_stream(data, 64 * 1024) {
        for m in messages {
            assert!(m.data.len() <= 64 * 1024);
        }
    }
});
