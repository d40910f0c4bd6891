//! Sessions: what the TDS server and `mesquite sql` talk to. A session is a login on the
//! instance with its current database, SET options and transaction (the executor's
//! `SessionState`) and its host (`EngineHost`); it runs one request at a time on
//! whatever worker thread calls it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sql::exec::SessionState;
use sql::host::{DbId, Transactions};
use sql::request::RpcCall;
use sql::results::ResultSink;
use types::SqlError;

use crate::error::EngineError;
use crate::host::EngineHost;
use crate::instance::{Instance, SessionSlot};

/// A logged-in session. Dropping it rolls back its open transaction and drops its #temp
/// tables.
pub struct Session {
    inst: Arc<Instance>,
    // Declared before `slot` so the host's rollback runs while the session is listed.
    host: EngineHost,
    state: SessionState,
    slot: Arc<SessionSlot>,
    spid: i32,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("spid", &self.spid)
            .field("login", &self.slot.login)
            .field("database", &self.state.database)
            .finish()
    }
}

impl Instance {
    /// Logs in (SQL authentication) and opens a session in `database` (default: master,
    /// the default database of `sa`). A wrong login or password is Msg 18456 with a line
    /// in the error log (never the password); an unknown database is Msg 4060.
    pub fn open_session(
        self: &Arc<Self>,
        login: &str,
        password: &str,
        database: Option<&str>,
    ) -> Result<Session, SqlError> {
        self.open_session_with(login, password, database, false)
    }

    /// [`Instance::open_session`], through the dedicated admin connection when
    /// `dedicated_admin`: only a sysadmin may log in there (18456 otherwise, with the
    /// reason in the error log), and only one such session at a time (17810).
    pub fn open_session_with(
        self: &Arc<Self>,
        login: &str,
        password: &str,
        database: Option<&str>,
        dedicated_admin: bool,
    ) -> Result<Session, SqlError> {
        let rec = self.authenticate(login, password)?;
        if dedicated_admin && !rec.sysadmin {
            diag::errorlog::log(
                "Logon",
                &format!("Login failed for user '{login}'. Reason: only members of the sysadmin role may use the dedicated administrator connection. [CLIENT: <local machine>]"),
            );
            return Err(SqlError::new(18456, 14, 1, format!("Login failed for user '{login}'.")));
        }
        let name = rec.name.clone();
        let db = match database.filter(|d| !d.is_empty()) {
            // The login's default database (master unless ALTER LOGIN changed it).
            None => self.database_id(&rec.default_database).ok_or_else(|| {
                SqlError::new(4064, 11, 1, "Cannot open user default database. Login failed.")
            })?,
            Some(d) => self.database_id(d).ok_or_else(|| {
                diag::errorlog::log(
                    "Logon",
                    &format!("Login failed for user '{login}'. Reason: Failed to open the explicitly specified database '{d}'. [CLIENT: <local machine>]"),
                );
                SqlError::new(4060, 11, 1, format!("Cannot open database \"{d}\" requested by the login. The login failed."))
            })?,
        };
        if !self.is_running() {
            return Err(EngineError::ShuttingDown.into());
        }
        if !rec.sysadmin {
            let catalog = self.db(db)?.catalog.clone();
            let db_name = self.db(db)?.name().to_string();
            if !sql::exec::can_access_database(&catalog.inner.read(), &name, db) {
                diag::errorlog::log(
                    "Logon",
                    &format!("Login failed for user '{login}'. Reason: Failed to open the explicitly specified database '{db_name}'. [CLIENT: <local machine>]"),
                );
                return Err(SqlError::new(
                    4060,
                    11,
                    1,
                    format!("Cannot open database \"{db_name}\" requested by the login. The login failed."),
                ));
            }
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let (spid, slot) = self.register_session(&name, db, cancel.clone(), dedicated_admin)?;
        let mut host = EngineHost::new(self.clone(), spid, &name);
        host.set_sysadmin(rec.sysadmin);
        let mut state = SessionState::new(db, spid);
        state.cancel = cancel;
        Ok(Session { inst: self.clone(), host, state, slot, spid })
    }
}

impl Session {
    /// The client's HOST_NAME() and APP_NAME() from its login.
    pub fn set_client_info(&mut self, host_name: &str, app_name: &str) {
        self.state.host_name = host_name.to_string();
        self.state.app_name = app_name.to_string();
        self.slot.activity.set_client(host_name, app_name);
    }

    /// How the client is connected (sys.dm_exec_connections).
    pub fn set_connection(&mut self, info: sql::host::ConnectionInfo) {
        self.slot.activity.set_connection(info);
    }

    /// Durable commits stop waiting for the log flush on the session's thread: a commit
    /// leaves its wait in `gate` for the caller to take after the request (see
    /// `sql::host::CommitGate`). Whoever calls this must take or settle the gate after
    /// every request and before sending anything that follows a commit.
    pub fn defer_commits(&mut self, gate: Arc<sql::host::CommitGate>) {
        self.host.defer_commits(gate);
    }

    /// Runs a SQL batch; results, messages and errors go to `sink`.
    pub fn execute_batch(&mut self, text: &str, sink: &mut dyn ResultSink) {
        if self.refuse_if_killed(sink) {
            return;
        }
        self.state.cancel.store(false, Ordering::Release);
        let _waits = self.slot.activity.begin_request(&self.state);
        // The request runs on one of the instance's schedulers (see `diag::sched`).
        let _scheduler = diag::sched::enter();
        sql::exec::execute_batch(&mut self.state, &mut self.host, text, sink);
        self.publish();
    }

    /// Runs an RPC request (sp_executesql, prepared statements, procedures by name).
    pub fn execute_rpc(&mut self, call: &RpcCall, sink: &mut dyn ResultSink) {
        if self.refuse_if_killed(sink) {
            return;
        }
        self.state.cancel.store(false, Ordering::Release);
        let _waits = self.slot.activity.begin_request(&self.state);
        // The request runs on one of the instance's schedulers (see `diag::sched`).
        let _scheduler = diag::sched::enter();
        sql::exec::execute_rpc(&mut self.state, &mut self.host, call, sink);
        self.publish();
    }

    /// Runs a bulk-load message: the rows of the session's last INSERT BULK.
    pub fn execute_bulk_load(&mut self, load: &sql::request::BulkLoad, sink: &mut dyn ResultSink) {
        if self.refuse_if_killed(sink) {
            return;
        }
        self.state.cancel.store(false, Ordering::Release);
        let _waits = self.slot.activity.begin_request(&self.state);
        let _scheduler = diag::sched::enter();
        sql::exec::execute_bulk_load(&mut self.state, &mut self.host, load, sink);
        self.publish();
    }

    /// RESETCONNECTION (the driver reuses a pooled connection), as sp_reset_connection:
    /// rolls back an open transaction, drops #temp tables and prepared statements, and
    /// puts the SET options, the language and EXECUTE AS back to a new session's. The
    /// current database stays. The cancel flag and the live-request slot are shared with
    /// the connection and the DMVs, so they are kept.
    pub fn reset_connection(&mut self) {
        sql::exec::end_session(&mut self.state, &mut self.host);
        let mut fresh = SessionState::new(self.state.database, self.spid);
        fresh.cancel = self.state.cancel.clone();
        fresh.live = self.state.live.clone();
        fresh.host_name = std::mem::take(&mut self.state.host_name);
        fresh.app_name = std::mem::take(&mut self.state.app_name);
        fresh.parse_cache = std::mem::take(&mut self.state.parse_cache);
        self.state = fresh;
        let _ = self.host.set_isolation(self.state.isolation);
        self.host.set_lock_timeout(self.state.lock_timeout);
        self.publish();
    }

    /// Whether KILL ended this session.
    pub fn is_killed(&self) -> bool {
        self.slot.killed.load(Ordering::Acquire)
    }

    /// How KILL wakes this session's connection (e.g. shut its socket down). Called at
    /// most once per KILL, from the killing session's thread.
    pub fn set_kill_hook(&self, wake: Box<dyn Fn() + Send + Sync>) {
        *self.slot.on_kill.lock() = Some(wake);
    }

    /// A killed session runs nothing more: Msg 596 (severity 21 ends the connection).
    fn refuse_if_killed(&mut self, sink: &mut dyn ResultSink) -> bool {
        if !self.is_killed() {
            return false;
        }
        let error =
            SqlError::new(596, 21, 1, "Cannot continue the execution because the session is in the kill state.");
        let _ = sink.message(&sql::results::Message { error, info: false });
        let _ = sink.done(sql::results::Done {
            kind: sql::results::DoneKind::Statement,
            row_count: None,
            error: true,
            in_xact: self.in_transaction(),
        });
        true
    }

    /// Set by the connection when the client sends an attention: the running request
    /// stops at its next row or statement.
    pub fn cancel_handle(&self) -> Arc<AtomicBool> {
        self.state.cancel.clone()
    }

    /// The current database's name (DB_NAME()).
    pub fn database_name(&self) -> String {
        self.inst.databases().into_iter().find(|d| d.id == self.state.database).map(|d| d.name).unwrap_or_default()
    }

    /// The current database's collation (the login's SQL collation ENVCHANGE).
    pub fn database_collation(&self) -> types::Collation {
        self.inst.databases().into_iter().find(|d| d.id == self.state.database).map(|d| d.collation).unwrap_or_default()
    }

    /// The current database's id (DB_ID()).
    pub fn database_id(&self) -> DbId {
        self.state.database
    }

    /// @@SPID.
    pub fn spid(&self) -> i32 {
        self.spid
    }

    pub fn login_name(&self) -> String {
        self.slot.login.clone()
    }

    /// The TDS transaction descriptor: non-zero while a transaction is open.
    pub fn transaction_descriptor(&self) -> u64 {
        self.host.transaction_descriptor()
    }

    /// Whether a transaction is open (@@TRANCOUNT > 0).
    pub fn in_transaction(&self) -> bool {
        self.host.in_transaction()
    }

    /// The session's host, for callers that work below SQL (tools, tests).
    pub fn host(&mut self) -> &mut EngineHost {
        &mut self.host
    }

    pub fn instance(&self) -> &Arc<Instance> {
        &self.inst
    }

    /// Publishes the session's current database to the instance (DROP DATABASE's "in
    /// use" check, future DMVs).
    fn publish(&self) {
        self.slot.database.store(self.state.database, Ordering::Release);
        let txn = if self.state.trancount > 0 { self.host.transaction_info(self.state.descriptor) } else { None };
        self.slot.activity.end_request(&self.state, txn);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.inst.is_running() {
            sql::exec::end_session(&mut self.state, &mut self.host);
        } else if self.host.in_transaction() {
            let _ = self.host.rollback();
        }
        self.inst.unregister_session(self.spid);
    }
}

#[allow(dead_code)]
fn assert_send() {
    fn is<T: Send>() {}
    is::<Session>();
}
