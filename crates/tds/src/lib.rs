//! The TDS layer (issue 5, not built yet): PRELOGIN, TLS, LOGIN7, SQL batches, RPC,
//! attention and the token stream, speaking only to `engine`'s session API.
