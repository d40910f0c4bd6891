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

    /// Msg 245: a character string that is not a number of the target integer type,
    /// e.g. "Conversion failed when converting the varchar value 'abc' to data type int."
    pub fn conversion_failed(value: &str, from: &str, to: &str) -> Self {
        SqlError::new(
            245,
            16,
            1,
            format!("Conversion failed when converting the {from} value '{value}' to data type {to}."),
        )
    }

    /// Msg 8114: "Error converting data type varchar to numeric." SQL Server uses this for
    /// strings that are not valid decimal, float or bigint literals.
    pub fn error_converting(from: &str, to: &str) -> Self {
        SqlError::new(8114, 16, 5, format!("Error converting data type {from} to {to}."))
    }

    /// Msg 8115 in its most common form: "Arithmetic overflow error converting expression
    /// to data type int."
    pub fn arithmetic_overflow(to: &str) -> Self {
        SqlError::arithmetic_overflow_from("expression", to)
    }

    /// Msg 8115 naming the source: "Arithmetic overflow error converting varchar to data
    /// type numeric."
    pub fn arithmetic_overflow_from(from: &str, to: &str) -> Self {
        SqlError::new(8115, 16, 8, format!("Arithmetic overflow error converting {from} to data type {to}."))
    }

    /// Msg 241: a string that is not a date or time SQL Server understands.
    pub fn datetime_conversion_failed() -> Self {
        SqlError::new(241, 16, 1, "Conversion failed when converting date and/or time from character string.")
    }

    /// Msg 242: a well-formed date or time outside the target type's range, e.g. "The
    /// conversion of a varchar data type to a datetime data type resulted in an
    /// out-of-range value."
    pub fn datetime_out_of_range(from: &str, to: &str) -> Self {
        SqlError::new(
            242,
            16,
            3,
            format!("The conversion of a {from} data type to a {to} data type resulted in an out-of-range value."),
        )
    }

    /// Msg 8152: a value longer than its column. (SQL Server 2019+ can report 2628 with
    /// table and column names instead; the layer that knows the names may rebuild it.)
    pub fn string_truncated() -> Self {
        SqlError::new(8152, 16, 14, "String or binary data would be truncated.")
    }

    /// Msg 206: a value of one type family handed to a slot of another, e.g. "Operand type
    /// clash: int is incompatible with date".
    pub fn operand_type_clash(from: &str, to: &str) -> Self {
        SqlError::new(206, 16, 2, format!("Operand type clash: {from} is incompatible with {to}"))
    }

    /// Msg 2570 (as DBCC reports out-of-range column values): bytes read back from a row
    /// that do not decode to a legal value of the column's type.
    pub fn invalid_stored_value(type_name: &str) -> Self {
        SqlError::new(
            2570,
            16,
            3,
            format!("Column value is out of range for data type \"{type_name}\". Update column to a legal value."),
        )
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
