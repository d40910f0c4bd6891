//! PRELOGIN decoding; a decoded PRELOGIN re-encodes to something that decodes the same.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tds::prelogin::PreLogin;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = PreLogin::decode(data) {
        let again = PreLogin::decode(&p.encode()).expect("re-encoded PRELOGIN decodes");
        assert_eq!(again.encryption, p.encryption);
        let _ = tds::prelogin::negotiate(p.encryption.unwrap_or(2), false);
    }
});
