//! Lock request failures and their SQL Server errors.

use types::SqlError;

use super::{LockMode, LockResource};

/// Why a lock request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// The request waited for its LOCK_TIMEOUT (or couldn't be granted at once with
    /// `SET LOCK_TIMEOUT 0`). Msg 1222. The statement fails; the transaction and its
    /// other locks stay.
    #[error("Lock request time out period exceeded.")]
    Timeout { resource: LockResource, mode: LockMode },
    /// The request was chosen as a deadlock victim. Msg 1205. The caller must roll the
    /// transaction back (and so call `release_all`); the victim's other locks stay
    /// until then.
    #[error(
        "Transaction (Process ID {session_id}) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction."
    )]
    DeadlockVictim { session_id: i32, resource: LockResource, mode: LockMode },
    /// The request was cancelled while it waited (an attention, KILL, or shutdown; see
    /// `diag::cancelled`): the statement ends as a cancelled one.
    #[error("The query was cancelled by the client (attention).")]
    Cancelled { resource: LockResource, mode: LockMode },
}

impl LockError {
    /// Msg 1222: lock request time-out.
    pub const LOCK_TIMEOUT: i32 = 1222;
    /// Msg 1205: deadlock victim.
    pub const DEADLOCK_VICTIM: i32 = 1205;
    /// The executor's number for a cancelled request (it ends the batch quietly, as an
    /// attention does).
    pub const CANCELLED: i32 = 3617;

    /// The SQL Server error number.
    pub fn number(&self) -> i32 {
        match self {
            LockError::Timeout { .. } => Self::LOCK_TIMEOUT,
            LockError::DeadlockVictim { .. } => Self::DEADLOCK_VICTIM,
            LockError::Cancelled { .. } => Self::CANCELLED,
        }
    }

    /// The error as a client sees it: 1222 at severity 16, 1205 at severity 13, both
    /// state 51 (the state SQL Server reports for these from the lock manager).
    pub fn to_sql_error(&self) -> SqlError {
        let (severity, state) = match self {
            LockError::Timeout { .. } => (16, 51),
            LockError::DeadlockVictim { .. } => (13, 51),
            LockError::Cancelled { .. } => (25, 1),
        };
        SqlError::new(self.number(), severity, state, self.to_string())
    }

    /// The resource the failed request was for.
    pub fn resource(&self) -> LockResource {
        match self {
            LockError::Timeout { resource, .. }
            | LockError::DeadlockVictim { resource, .. }
            | LockError::Cancelled { resource, .. } => *resource,
        }
    }
}

impl From<LockError> for SqlError {
    fn from(e: LockError) -> SqlError {
        e.to_sql_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let r = LockResource::key(5, 1, 2);
        let t = LockError::Timeout { resource: r, mode: LockMode::X }.to_sql_error();
        assert_eq!((t.number, t.severity, t.message.as_str()), (1222, 16, "Lock request time out period exceeded."));
        let d = LockError::DeadlockVictim { session_id: 57, resource: r, mode: LockMode::S }.to_sql_error();
        assert_eq!((d.number, d.severity), (1205, 13));
        assert_eq!(
            d.message,
            "Transaction (Process ID 57) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction."
        );
    }
}
