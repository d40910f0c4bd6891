//! The transaction layer (issue 3, not built yet): the write-ahead log (log blocks in
//! VLFs), group commit and delayed durability, the lock manager, transactions, ARIES
//! recovery and checkpoints. It plugs into `storage` through the page-change hook
//! (`storage::LogHook`) and the buffer pool's WAL gate (`storage::WalGate`).
