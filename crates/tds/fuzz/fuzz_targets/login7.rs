//! LOGIN7 decoding; a decoded LOGIN7 re-encodes to one that decodes to the same fields.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tds::login::Login7;

fuzz_target!(|data: &[u8]| {
    if let Ok(l) = Login7::decode(data) {
        let _ = l.to_request(4096);
        if let Ok(again) = Login7::decode(&l.encode()) {
            assert_eq!(again.user_name, l.user_name);
            assert_eq!(again.password, l.password);
        }
    }
});
