//! `SqlError`: what a client sees when something fails, shaped like SQL Server's error
//! (number, severity, state, message, and where it happened).

use std::fmt;

/// An error as SQL Server reports it. `number` and `severity` follow SQL Server's
/// catalogue (sys.messages); `line` and `procedure` are filled in by the executor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    pub number: i32,
    pub severity: u8,
    pub state: u8,
    pub message: String,
    pub procedure: Option<String>,
    pub line: u32,
}

impl SqlError {
    pub fn new(number: i32, severity: u8, state: u8, message: impl Into<String>) -> Self {
        SqlError { number, severity, state, message: message.into(), procedure: None, line: 0 }
    }

    pub fn at_line(mut self, line: u32) -> Self {
        self.line = line;
        self
    }

    pub fn in_procedure(mut self, name: impl Into<String>) -> Self {
        self.procedure = Some(name.into());
        self
    }

    /// Severity 20 and above ends the connection in SQL Server (fatal errors).
    pub fn is_fatal(&self) -> bool {
        self.severity >= 20
    }
}

impl fmt::Display for SqlError {
    /// The shape sqlcmd prints: `Msg 824, Level 24, State 2, Line 1` then the text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Msg {}, Level {}, State {}", self.number, self.severity, self.state)?;
        if let Some(p) = &self.procedure {
            write!(f, ", Procedure {p}")?;
        }
        write!(f, ", Line {}\n{}", self.line, self.message)
    }
}

impl std::error::Error for SqlError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_sqlcmd() {
        let e = SqlError::new(8134, 16, 1, "Divide by zero error encountered.").at_line(3);
        assert_eq!(e.to_string(), "Msg 8134, Level 16, State 1, Line 3\nDivide by zero error encountered.");
        assert!(!e.is_fatal());
        assert!(SqlError::new(824, 24, 2, "x").is_fatal());
    }
}
