//! The token-stream decoder (used by tools and tests to read responses).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tds::token::decode_tokens(data);
});
