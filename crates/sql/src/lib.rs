//! The T-SQL layer: our own lexer, AST and recursive-descent parser, a printer, the
//! binder, planner and executor ([`exec`]), the catalog model ([`catalog`]) and the
//! system-object registry ([`system`]). It reaches storage only through the [`host`]
//! traits it defines (indexes, transactions, the instance, DMV data), which `engine`
//! implements.
//!
//! - [`lexer`]: tokens with positions; SQL Server's lexical errors (105, 113, 103, 1038).
//! - [`keywords`]: SQL Server's reserved keyword list.
//! - [`ast`]: the T-SQL AST (statements, queries, expressions) with source spans.
//! - [`parser`]: [`parse_batch`] — recursive descent with precedence climbing; errors 102 /
//!   156 "Incorrect syntax near ..." with lines, 191 when nested too deeply.
//! - [`printer`]: `Display` for the AST, printing T-SQL that parses back to the same AST.
//! - [`batches`]: [`split_batches`], the client-side `GO` rule for the CLI.
//! - [`exec`]: the executor; [`system`]: the system views and functions;
//!   [`catalog`]: objects, columns, indexes and principals as stored per database.
//!
//! Why not the `sqlparser` crate: see DESIGN.md ("T-SQL"); in short it cannot represent
//! T-SQL's procedural and administrative statements faithfully.
//!
//! # Decisions
//!
//! Where SQL Server's behaviour was not certain or not worth copying exactly:
//! - **Errors.** One error per batch, the first. For an unclosed string SQL Server sends
//!   Msg 105 and then Msg 102; we send 105 alone. Lexical errors carry the line where the
//!   offending token (string, identifier, comment) starts. At the end of input the last
//!   token is named, so `SELECT * FROM t WHERE` is 156 near the keyword 'WHERE'. A reserved
//!   keyword is named as the user spelled it.
//! - **Statement boundaries** follow T-SQL's grammar, including its traps: without a `;`,
//!   `ROLLBACK TRANSACTION THROW` names a transaction THROW; a word after a select item is
//!   its alias. Only the first statement of a batch may be a procedure name without EXEC.
//! - **Unmodelled statements** are [`StatementKind::Other`] with their text:
//!   DDL and LOGON triggers (CREATE/ALTER to the end of the batch), UPDATE
//!   STATISTICS, BULK INSERT, ENABLE/DISABLE TRIGGER ON DATABASE, BACKUP CERTIFICATE, RESTORE
//!   REWINDONLY and other RESTORE forms, and CREATE/ALTER/DROP of object kinds the AST
//!   does not name (TYPE, SEQUENCE, SYNONYM, ROLE, STATISTICS, SCHEMA transfers,
//!   AUTHORIZATION, ...); these end at `;` or at the next statement keyword outside
//!   parentheses.
//! - **Not parsed** (a syntax error today): PIVOT/UNPIVOT, TABLESAMPLE, FOR SYSTEM_TIME,
//!   OPENROWSET/OPENQUERY/OPENDATASOURCE/OPENXML, OPENJSON's WITH clause (OPENJSON itself
//!   is an ordinary table-valued function call), WITH XMLNAMESPACES, `::` static
//!   methods, ODBC `{fn ...}` escapes, `SET @v = col = expr` and `.WRITE`, `WHERE CURRENT
//!   OF`, numbered procedures (`p;2`), `EXEC ... WITH RESULT SETS`, window names,
//!   `TRIM(... FROM ...)`, legacy `WITH FILLFACTOR = n` without parentheses, chained
//!   `a JOIN b JOIN c ON .. ON ..`.
//! - **Limits.** Nesting (parentheses, subqueries, calls, blocks) is capped at about 128
//!   levels and operator chains at about 2000 links ([`parser::MAX_DEPTH`]); beyond that
//!   is Msg 191. The cap keeps parsing, printing and dropping any AST within 1 MiB of stack.
//! - **Equality.** [`Span`]s compare equal to each other, so ASTs compare by meaning.
//! - **GO** is recognised only by [`split_batches`], on a line of its own (see there).

pub mod ast;
pub mod batches;
pub mod catalog;
mod errors;
pub mod exec;
pub mod host;
pub mod keywords;
pub mod lexer;
pub mod memhost;
pub mod parser;
pub mod printer;
pub mod request;
pub mod results;
pub mod scalar;
mod span;
pub mod stack;
pub mod system;

pub use ast::{Batch, Expr, Statement, StatementKind};
pub use batches::{split_batches, ScriptBatch};
pub use parser::{parse_batch, parse_expression};
pub use span::Span;
