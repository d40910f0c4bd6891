//! What the server needs from the database engine: log a client in, then run its batches
//! and RPCs on a session, writing results into a [`ResultSink`]. The engine implements
//! these traits for its instance and sessions; tests implement them with fakes.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use sql::request::{BulkLoad, RpcCall};
use sql::results::ResultSink;

/// The parts of LOGIN7 the engine decides on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoginRequest {
    pub user: String,
    pub password: String,
    /// LOGIN7's fChangePassword: the login's new password, set once `password` is
    /// verified, before the session opens.
    pub new_password: Option<String>,
    /// The database the client asked for; None means the login's default database.
    pub database: Option<String>,
    pub app_name: String,
    pub host_name: String,
    pub language: String,
    /// The negotiated packet size (what the server will use).
    pub packet_size: u32,
    /// The TDS version the client asked for (e.g. 0x74000004, 0x08000000 for TDS 8.0).
    pub tds_version: u32,
    /// The client's and the server's ends of the TCP connection (set by the server, not
    /// LOGIN7).
    pub client_addr: Option<SocketAddr>,
    pub local_addr: Option<SocketAddr>,
    /// Every packet is encrypted (TLS after PRELOGIN, or TDS 8.0), not only LOGIN7.
    pub encrypted: bool,
    /// The login came through the dedicated admin connection's listener: only a
    /// sysadmin may log in there.
    pub dedicated_admin: bool,
}

pub trait Backend: Send + Sync + 'static {
    type Session: BackendSession;
    /// Checks the credentials and opens a session. A failed login is Msg 18456
    /// ("Login failed for user 'x'."), which the server sends as an ERROR token.
    fn login(&self, req: &LoginRequest) -> Result<Self::Session, types::SqlError>;
    /// The server name that ERROR/INFO tokens carry (@@SERVERNAME).
    fn server_name(&self) -> String;
}

pub trait BackendSession: Send + 'static {
    /// The current database (for the login ENVCHANGE).
    fn database_name(&self) -> String;
    /// The current database's collation (for the login's SQL collation ENVCHANGE).
    fn database_collation(&self) -> types::Collation {
        types::Collation::DEFAULT
    }
    /// The session id (@@SPID), also put in the SPID field of every packet header.
    fn spid(&self) -> i32;
    fn execute_batch(&mut self, sql: &str, sink: &mut dyn ResultSink);
    fn execute_rpc(&mut self, call: &RpcCall, sink: &mut dyn ResultSink);
    /// Inserts the rows of a bulk-load message into the table of the session's last
    /// INSERT BULK. A backend without bulk copy refuses it.
    fn execute_bulk_load(&mut self, load: &BulkLoad, sink: &mut dyn ResultSink) {
        let _ = load;
        let e = types::SqlError::new(4002, 16, 1, "Bulk load (INSERT BULK) is not supported by this server.");
        let _ = sink.message(&sql::results::Message { error: e, info: false });
        let _ = sink.done(sql::results::Done {
            kind: sql::results::DoneKind::Statement,
            row_count: None,
            error: true,
            in_xact: false,
        });
    }
    /// The flag the server sets when the client sends an attention; the executor polls
    /// it (as well as getting `SinkError::Cancelled` from the sink) and stops.
    fn cancel_handle(&self) -> Arc<AtomicBool>;
    /// The current transaction's descriptor (0 outside a transaction).
    fn transaction_descriptor(&self) -> u64;
    /// A request arrived with the RESETCONNECTION bit (a pooled connection was reused):
    /// reset the session state as sp_reset_connection does. The server acknowledges with
    /// ENVCHANGE type 18 before the request's results.
    fn reset_connection(&mut self) {}
    /// The connection takes durable commits' replies to the log writer: the session
    /// leaves a commit's flush wait in `gate` instead of waiting (see
    /// `sql::host::CommitGate`). A backend that ignores this waits as usual.
    fn defer_commits(&mut self, gate: Arc<sql::host::CommitGate>) {
        let _ = gate;
    }
    /// How KILL of this session from another one wakes the connection (the server
    /// shuts the socket down or ends the request loop). A backend without KILL ignores it.
    fn set_kill_hook(&mut self, wake: Box<dyn Fn() + Send + Sync>) {
        let _ = wake;
    }
    /// Whether KILL ended the session: the connection closes after the request.
    fn is_killed(&self) -> bool {
        false
    }
}
