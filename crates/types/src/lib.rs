//! SQL Server's type system as Mesquite stores and compares it: type descriptors with
//! their exact ranges and precisions, values, the byte encodings rows use on disk, and
//! `SqlError`, the one error shape every layer's errors become at the session boundary.

pub mod error;

pub use error::SqlError;
