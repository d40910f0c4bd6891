//! Decoding errors. Every decoder in this crate returns a [`TdsError`] for malformed input
//! instead of panicking; the server turns a framing error into a closed connection (with
//! an error-log line) and a malformed request body into an ERROR token.

/// What was wrong with the bytes a client sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TdsError {
    /// The input ended inside the named structure.
    #[error("truncated {0}")]
    Truncated(&'static str),
    /// A field had a value the protocol does not allow.
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
    /// A message grew past the configured maximum message size.
    #[error("message of at least {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    /// A packet type the server does not accept at this point.
    #[error("unexpected packet type {0:#04x}")]
    UnexpectedPacket(u8),
    /// A TYPE_INFO type the codec does not support (TEXT, NTEXT, IMAGE, sql_variant, UDT,
    /// table-valued parameters).
    #[error("unsupported data type {0:#04x}")]
    UnsupportedType(u8),
}

impl TdsError {
    pub fn invalid(what: &'static str, detail: impl Into<String>) -> TdsError {
        TdsError::Invalid { what, detail: detail.into() }
    }
}

pub type Result<T> = std::result::Result<T, TdsError>;
