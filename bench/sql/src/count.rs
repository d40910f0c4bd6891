//! The result sink the bench/sql binaries share: counts rows and keeps error messages.

use sql::results::{ColumnInfo, Done, EnvChange, Message, ResultSink, ReturnValue, SinkResult};
use types::Value;

/// Counts rows; keeps the error messages (the callers fail on them).
#[derive(Default)]
pub struct Count {
    pub rows: u64,
    pub errors: Vec<String>,
}

impl ResultSink for Count {
    fn columns(&mut self, _c: &[ColumnInfo]) -> SinkResult {
        Ok(())
    }
    fn row(&mut self, _r: &[Value]) -> SinkResult {
        self.rows += 1;
        Ok(())
    }
    fn done(&mut self, _d: Done) -> SinkResult {
        Ok(())
    }
    fn message(&mut self, m: &Message) -> SinkResult {
        if !m.info {
            self.errors.push(format!("Msg {}: {}", m.error.number, m.error.message));
        }
        Ok(())
    }
    fn env_change(&mut self, _c: &EnvChange) -> SinkResult {
        Ok(())
    }
    fn return_status(&mut self, _s: i32) -> SinkResult {
        Ok(())
    }
    fn return_value(&mut self, _v: &ReturnValue) -> SinkResult {
        Ok(())
    }
}
