//! [`Connector`](crate::Connector) over TDS, with `tds::client`: what `mesquite stress`
//! drives. Session waits come from `sys.dm_exec_session_wait_stats`, as on SQL Server.

use tds::client::{message_text, Client, ClientConfig};
use types::Value;

use crate::{Connection, Connector, WaitDelta};

/// The session's cumulative waits (the row set SQL Server also has).
pub const SESSION_WAITS_SQL: &str = "SELECT wait_type, waiting_tasks_count, wait_time_ms, signal_wait_time_ms \
     FROM sys.dm_exec_session_wait_stats WHERE session_id = @@SPID";

#[derive(Clone, Debug)]
pub struct TdsConnector {
    pub config: ClientConfig,
}

impl TdsConnector {
    pub fn new(config: ClientConfig) -> TdsConnector {
        TdsConnector { config }
    }
}

impl Connector for TdsConnector {
    type Conn = TdsConnection;

    fn connect(&self) -> Result<TdsConnection, String> {
        Client::connect(&self.config).map(|client| TdsConnection { client }).map_err(|e| e.to_string())
    }

    fn describe(&self) -> String {
        format!("mesquite {}:{}", self.config.host, self.config.port)
    }
}

/// One stress thread's session.
pub struct TdsConnection {
    pub client: Client,
}

impl Connection for TdsConnection {
    /// Rows are decoded and dropped as they arrive (a batch may return any number). The
    /// first server error fails the execution, in SQL Server's words.
    fn execute(&mut self, batch: &str) -> Result<u64, String> {
        let r = self.client.batch_rows(batch, &mut |_| {}).map_err(|e| e.to_string())?;
        match r.errors.first() {
            Some(e) => Err(message_text(e)),
            None => Ok(r.total_rows()),
        }
    }

    fn session_id(&self) -> Option<i32> {
        Some(self.client.spid()).filter(|&s| s > 0)
    }

    fn session_waits(&mut self) -> Option<Vec<WaitDelta>> {
        let r = self.client.batch(SESSION_WAITS_SQL).ok()?;
        if !r.errors.is_empty() {
            return None;
        }
        let rs = r.result_sets.into_iter().next()?;
        rs.rows.iter().map(|row| parse_wait_row(row)).collect()
    }
}

fn as_i64(v: &Value) -> Option<i64> {
    match *v {
        Value::TinyInt(x) => Some(i64::from(x)),
        Value::SmallInt(x) => Some(i64::from(x)),
        Value::Int(x) => Some(i64::from(x)),
        Value::BigInt(x) => Some(x),
        Value::Null => Some(0),
        _ => None,
    }
}

fn parse_wait_row(row: &[Value]) -> Option<WaitDelta> {
    let [ty, count, wait, signal] = row else { return None };
    let Value::String(wait_type) = ty else { return None };
    Some(WaitDelta {
        wait_type: wait_type.clone(),
        waiting_tasks_count: as_i64(count)?,
        wait_time_ms: as_i64(wait)?,
        signal_wait_time_ms: as_i64(signal)?,
    })
}
