//! Request bodies after login: RPC, SQL batch and transaction-manager requests, with and
//! without ALL_HEADERS.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (required, body) = match data.split_first() {
        Some((flag, rest)) => (flag & 1 == 1, rest),
        None => return,
    };
    let _ = tds::rpc::decode_rpc(body, required);
    let _ = tds::rpc::decode_sql_batch(body, required);
    if let Ok((_, tm)) = tds::rpc::decode_tm(body, required) {
        let _ = tm.to_sql();
    }
});
