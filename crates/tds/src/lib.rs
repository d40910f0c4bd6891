//! The TDS layer: the [MS-TDS] codec (PRELOGIN, LOGIN7, requests, the token stream, data
//! types) and the network server (TLS, login, requests on worker threads, attention).
//! It reaches the engine only through the [`backend`] traits.
//!
//! Modules, in the order bytes meet them:
//! - [`packet`] — packet headers, message reassembly with a size limit, packet writing;
//! - [`prelogin`] — PRELOGIN and encryption negotiation;
//! - [`tls`] — certificates, TLS inside PRELOGIN packets (TDS 7.x) and TDS 8.0 strict;
//! - [`login`] — LOGIN7;
//! - [`rpc`] — ALL_HEADERS, SQL batch, RPC and transaction-manager requests;
//! - [`bulk`] — the bulk-load message (the rows of a bulk copy);
//! - [`types`] — TYPE_INFO and value encodings for every SQL type;
//! - [`token`] — the response token stream (encoders, and a decoder for tests and tools);
//! - [`sink`] — the `ResultSink` that encodes an executor's results into packets;
//! - [`server`] — connections, login, the tokio request loop (TLS), workers, shutdown;
//! - `conn_thread` — a thread per plain TCP connection after login;
//! - `attention` — the epoll watcher that cancels a connection thread's request;
//! - [`backend`] — what the server needs from the engine.

mod attention;
pub mod backend;
pub mod bulk;
pub mod client;
mod conn_thread;
pub mod error;
pub mod login;
pub mod packet;
pub mod prelogin;
pub mod rpc;
pub mod server;
pub mod sink;
pub mod tls;
pub mod token;
pub mod types;
pub mod wire;

pub use backend::{Backend, BackendSession, LoginRequest};
pub use error::TdsError;
pub use server::{default_max_workers, run_blocking, serve, serve_on, ServerConfig, DAC_PORT};

/// The stack of a thread that runs requests (connection threads, and the runtime's
/// threads `mesquite serve` builds): 8 MB of address space, committed only as used. A
/// 1,000-branch UNION ALL (go-mssqldb's own suite sends one) recurses deeper than 2 MB
/// in a debug build and overflowed the stack, which aborts the whole server.
pub const REQUEST_STACK_SIZE: usize = 8 * 1024 * 1024;
