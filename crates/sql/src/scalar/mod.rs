//! Scalar semantics: conversions (CAST/CONVERT with styles), operators with SQL Server's
//! result types, built-in scalar functions and aggregate accumulators. Pure functions of
//! values and types; the binder decides types, the executor calls these per row.
//!
//! - [`convert`]: CAST/CONVERT/TRY_CONVERT between every pair of types, implicit
//!   conversion rules (which pairs convert silently, which need CAST: Msg 529/257).
//! - [`ops`]: arithmetic, string concatenation, bitwise operators, comparison and LIKE,
//!   with data type precedence and the decimal precision/scale rules.
//! - [`functions`]: the built-in scalar functions (string, math, date/time, system
//!   functions that need no catalog): registry, result types, evaluation.
//! - [`json`]: JSON text, paths, ISJSON/JSON_VALUE/JSON_QUERY/JSON_MODIFY, OPENJSON's
//!   rows and how values are written as JSON.
//! - [`dates`]: dateparts and the date/time functions, AT TIME ZONE with its table of
//!   Windows time zones and daylight-saving rules.
//! - `format` (private): FORMAT's .NET-style number and date patterns.
//! - `util` (private): shared error constructors, 256-bit decimal arithmetic, and the
//!   common clock every date/time type converts to exactly.
//! - [`xml`]: the xml type's parser and serializer and the XQuery subset of its methods.
//! - [`aggregate`]: COUNT, COUNT_BIG, SUM, AVG, MIN, MAX, STDEV, STDEVP, VAR, VARP,
//!   STRING_AGG, CHECKSUM_AGG, with SQL Server's result types.

pub mod aggregate;
pub(crate) mod clr;
pub mod convert;
pub mod dates;
mod format;
pub mod functions;
pub mod json;
pub mod ops;
mod util;
pub use util::{value_type, LobGuard};
pub mod xml;

/// What functions may read besides their arguments.
#[derive(Debug, Clone)]
pub struct FnContext {
    /// The statement's start time in UTC, as (days since 0001-01-01, 100 ns ticks since
    /// midnight). GETDATE() and friends return the same value within a statement.
    pub now_utc: (u32, u64),
    /// The server's local UTC offset in minutes at `now_utc`.
    pub local_offset_minutes: i16,
    /// SET DATEFIRST (1 = Monday ... 7 = Sunday; us_english default 7).
    pub datefirst: u8,
    /// SET LANGUAGE: the language's name (types::lang has its month and day names).
    pub language: String,
}

impl Default for FnContext {
    fn default() -> Self {
        FnContext { now_utc: (738_000, 0), local_offset_minutes: 0, datefirst: 7, language: "us_english".into() }
    }
}
