//! sqlcmd-style text output: a [`ResultSink`] that prints result sets as aligned text
//! tables, row counts, messages and errors to any [`io::Write`]. `mesquite sql` prints
//! through it, and the script tests (`tests/scripts/`) compare its text.
//!
//! The layout is the classic (ODBC) sqlcmd's, so that a script's output can be compared
//! with what SQL Server's own client prints:
//!
//! - A result set prints a header line of column names, a line of dashes, then one line
//!   per row. Columns are separated by one space. Each column is as wide as the display
//!   size of its *type* (not of its data: sqlcmd streams rows without looking ahead), or
//!   its name if that is longer, and at least 4 (`NULL`) when the column is nullable.
//!   Display sizes are ODBC's: bit 1, tinyint 3, smallint 6, int 11, bigint 20,
//!   decimal(p, s) p + 2, money 21, smallmoney 12, float 24, real 14, date 10,
//!   time(s) 8 (+ s + 1), datetime 23, smalldatetime 19, datetime2(s) 19 (+ s + 1),
//!   datetimeoffset(s) 26 (+ s + 1), (n)char/(n)varchar(n) n, binary(n) 2 + 2n,
//!   uniqueidentifier 36; MAX types and xml are shown 256 wide and cut there (sqlcmd's
//!   `-y` default).
//! - Numbers are right-aligned, everything else left-aligned; NULL prints as `NULL`.
//! - A statement with a row count prints a blank line then `(1 row affected)` /
//!   `(n rows affected)`. A result set ended without a count (SET NOCOUNT ON) is followed
//!   by a blank line, so consecutive result sets stay apart.
//! - Informational messages (PRINT, RAISERROR severity <= 10) print as their text; errors
//!   as `Msg 208, Level 16, State 1, Line 3` (with `Procedure p, ` before `Line` when the
//!   error comes from a module) and the message on the next line. Unlike sqlcmd there is
//!   no `Server name,` part: an embedded instance has no server name worth printing.
//! - Values print as `types::format` shows them (SSMS's forms, e.g. `0.50`, where ODBC
//!   sqlcmd would print `.50`).
//!
//! Lines carry sqlcmd's trailing padding; the script tests strip trailing white space
//! before comparing, so expected files need none.

use std::io::{self, Write};

use sql::results::{ColumnInfo, Done, EnvChange, Message, ResultSink, ReturnValue, SinkError, SinkResult};
use types::{Length, SqlType, Value};

/// Width sqlcmd gives MAX types and xml (its `-y` default), and where it cuts them.
const MAX_TYPE_WIDTH: usize = 256;

/// One column of the open result set, as laid out.
struct Layout {
    width: usize,
    right: bool,
    /// Cut longer values at `width` (MAX types and xml only).
    cut: bool,
}

/// The sqlcmd-style printer. See the module documentation for the layout.
pub struct TextSink<W: Write> {
    out: W,
    layout: Vec<Layout>,
    /// A result set's header has been printed and its statement has not completed.
    in_result: bool,
    /// Error messages (severity >= 11) seen since [`TextSink::take_errors`].
    errors: u32,
    /// The first write error; later writes are skipped and the batch is cancelled.
    io_error: Option<io::Error>,
}

impl<W: Write> TextSink<W> {
    pub fn new(out: W) -> TextSink<W> {
        TextSink { out, layout: Vec::new(), in_result: false, errors: 0, io_error: None }
    }

    /// How many errors were printed since the last call (for `-b`), resetting the count.
    pub fn take_errors(&mut self) -> u32 {
        std::mem::take(&mut self.errors)
    }

    /// Ends a batch: closes a result set the executor left open (it should not) and
    /// flushes. Returns the first write error of the batch, if any.
    pub fn end_batch(&mut self) -> io::Result<()> {
        if self.in_result {
            self.in_result = false;
            self.write("\n");
        }
        if self.io_error.is_none() {
            if let Err(e) = self.out.flush() {
                self.io_error = Some(e);
            }
        }
        match self.io_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Writes text that is not a result (echoed input, CLI notes) in order with results.
    pub fn write_text(&mut self, text: &str) {
        self.write(text);
    }

    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }

    fn write(&mut self, s: &str) {
        if self.io_error.is_none() {
            if let Err(e) = self.out.write_all(s.as_bytes()) {
                self.io_error = Some(e);
            }
        }
    }

    fn status(&self) -> SinkResult {
        // A closed pipe (`mesquite sql ... | head`) cancels the batch like an attention.
        if self.io_error.is_some() {
            Err(SinkError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// The display size of a type (see the module table) and whether it is right-aligned.
pub fn display_width(ty: &SqlType) -> (usize, bool) {
    let frac = |s: u8| if s > 0 { usize::from(s) + 1 } else { 0 };
    let bounded = |len: &Length| match len {
        Length::Bounded(n) => usize::from(*n),
        Length::Max => MAX_TYPE_WIDTH,
    };
    match ty {
        SqlType::Bit => (1, true),
        SqlType::TinyInt => (3, true),
        SqlType::SmallInt => (6, true),
        SqlType::Int => (11, true),
        SqlType::BigInt => (20, true),
        SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. } => (usize::from(*precision) + 2, true),
        SqlType::Money => (21, true),
        SqlType::SmallMoney => (12, true),
        SqlType::Float => (24, true),
        SqlType::Real => (14, true),
        SqlType::Date => (10, false),
        SqlType::Time { scale } => (8 + frac(*scale), false),
        SqlType::DateTime => (23, false),
        SqlType::SmallDateTime => (19, false),
        SqlType::DateTime2 { scale } => (19 + frac(*scale), false),
        SqlType::DateTimeOffset { scale } => (26 + frac(*scale), false),
        SqlType::Char { len } | SqlType::NChar { len } => (usize::from(*len), false),
        SqlType::VarChar { len } | SqlType::NVarChar { len } => (bounded(len), false),
        SqlType::Binary { len } => (2 + 2 * usize::from(*len), false),
        SqlType::VarBinary { len } => match len {
            Length::Bounded(n) => (2 + 2 * usize::from(*n), false),
            Length::Max => (MAX_TYPE_WIDTH, false),
        },
        SqlType::UniqueIdentifier => (36, false),
        SqlType::Xml | SqlType::Text | SqlType::NText | SqlType::Image => (MAX_TYPE_WIDTH, false),
        // sqlcmd gives sql_variant its 8000 characters; shown like a MAX type here.
        SqlType::Variant => (MAX_TYPE_WIDTH, false),
        // Shown as its bytes, 0x..., like sqlcmd.
        SqlType::HierarchyId | SqlType::Geometry | SqlType::Geography => (MAX_TYPE_WIDTH, false),
    }
}

fn layout_of(c: &ColumnInfo) -> Layout {
    let (type_width, right) = display_width(&c.ty);
    let mut width = type_width.max(c.name.chars().count());
    if c.nullable {
        width = width.max(4);
    }
    let cut = matches!(
        c.ty,
        SqlType::VarChar { len: Length::Max }
            | SqlType::NVarChar { len: Length::Max }
            | SqlType::VarBinary { len: Length::Max }
            | SqlType::Xml
            | SqlType::Variant
            | SqlType::HierarchyId
            | SqlType::Geometry
            | SqlType::Geography
            | SqlType::Text
            | SqlType::NText
            | SqlType::Image
    );
    Layout { width, right, cut }
}

/// `text` padded (or, for MAX types, cut) to the column's width.
fn cell(out: &mut String, text: &str, l: &Layout) {
    let len = text.chars().count();
    if l.cut && len > l.width {
        out.extend(text.chars().take(l.width));
        return;
    }
    let pad = l.width.saturating_sub(len);
    if l.right {
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(text);
    } else {
        out.push_str(text);
        out.extend(std::iter::repeat_n(' ', pad));
    }
}

/// The text of a value in a result grid (NULL as `NULL`). Line breaks inside values are
/// printed as they are, as sqlcmd does.
pub fn value_text(v: &Value) -> String {
    v.to_string()
}

/// The row-count line without its leading blank line.
pub fn rows_affected(n: u64) -> String {
    if n == 1 {
        "(1 row affected)".to_string()
    } else {
        format!("({n} rows affected)")
    }
}

/// The text sqlcmd prints for a message (without the final newline).
pub fn message_text(m: &Message) -> String {
    if m.info {
        return m.error.message.clone();
    }
    let e = &m.error;
    let mut s = format!("Msg {}, Level {}, State {}, ", e.number, e.severity, e.state);
    if let Some(p) = &e.procedure {
        s.push_str(&format!("Procedure {p}, "));
    }
    s.push_str(&format!("Line {}\n{}", e.line, e.message));
    s
}

impl<W: Write> ResultSink for TextSink<W> {
    fn columns(&mut self, columns: &[ColumnInfo]) -> SinkResult {
        if self.in_result {
            // A new result set without a completion for the previous one.
            self.write("\n");
        }
        self.layout = columns.iter().map(layout_of).collect();
        let mut names = String::new();
        let mut dashes = String::new();
        for (i, (c, l)) in columns.iter().zip(&self.layout).enumerate() {
            if i > 0 {
                names.push(' ');
                dashes.push(' ');
            }
            cell(&mut names, &c.name, &Layout { width: l.width, right: false, cut: false });
            dashes.extend(std::iter::repeat_n('-', l.width));
        }
        names.push('\n');
        dashes.push('\n');
        self.write(&names);
        self.write(&dashes);
        self.in_result = true;
        self.status()
    }

    fn row(&mut self, row: &[Value]) -> SinkResult {
        let mut line = String::new();
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            let text = value_text(v);
            match self.layout.get(i) {
                Some(l) => cell(&mut line, &text, l),
                // More values than columns: print them rather than lose them.
                None => line.push_str(&text),
            }
        }
        line.push('\n');
        self.write(&line);
        self.status()
    }

    fn done(&mut self, done: Done) -> SinkResult {
        let was_result = std::mem::take(&mut self.in_result);
        match done.row_count {
            Some(n) => {
                let line = format!("\n{}\n", rows_affected(n));
                self.write(&line);
            }
            None if was_result => self.write("\n"),
            None => {}
        }
        self.status()
    }

    fn message(&mut self, message: &Message) -> SinkResult {
        if !message.info {
            self.errors += 1;
        }
        let text = message_text(message);
        self.write(&text);
        self.write("\n");
        self.status()
    }

    fn env_change(&mut self, _change: &EnvChange) -> SinkResult {
        // sqlcmd shows database changes through the server's message 5701, not these.
        self.status()
    }

    fn return_status(&mut self, _status: i32) -> SinkResult {
        self.status()
    }

    fn return_value(&mut self, _value: &ReturnValue) -> SinkResult {
        self.status()
    }

    fn flush(&mut self) -> SinkResult {
        if self.io_error.is_none() {
            if let Err(e) = self.out.flush() {
                self.io_error = Some(e);
            }
        }
        self.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sql::results::DoneKind;
    use types::SqlError;

    fn done(n: Option<u64>) -> Done {
        Done { kind: DoneKind::Statement, row_count: n, error: false, in_xact: false }
    }

    fn text(f: impl FnOnce(&mut TextSink<Vec<u8>>)) -> String {
        let mut s = TextSink::new(Vec::new());
        f(&mut s);
        s.end_batch().unwrap();
        String::from_utf8(s.into_inner()).unwrap()
    }

    #[test]
    fn result_set_like_sqlcmd() {
        let out = text(|s| {
            s.columns(&[
                ColumnInfo::new("Id", SqlType::Int, false),
                ColumnInfo::new("Name", SqlType::VarChar { len: Length::Bounded(8) }, true),
                ColumnInfo::new("", SqlType::Decimal { precision: 5, scale: 2 }, true),
            ])
            .unwrap();
            s.row(&[
                Value::Int(1),
                Value::String("Jared".into()),
                Value::Decimal { value: 1230, precision: 5, scale: 2 },
            ])
            .unwrap();
            s.row(&[Value::Int(-20), Value::Null, Value::Null]).unwrap();
            s.done(done(Some(2))).unwrap();
        });
        let expected = [
            "Id          Name            ",
            "----------- -------- -------",
            "          1 Jared      12.30",
            "        -20 NULL        NULL",
            "",
            "(2 rows affected)",
        ];
        assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn counts_messages_and_errors() {
        let out = text(|s| {
            s.done(done(Some(1))).unwrap();
            s.message(&Message { error: SqlError::new(0, 0, 1, "hello"), info: true }).unwrap();
            let e = SqlError::new(208, 16, 1, "Invalid object name 'nope'.").at_line(3);
            s.message(&Message { error: e, info: false }).unwrap();
            let e = SqlError::new(50000, 16, 1, "boom").at_line(5).in_procedure("p");
            s.message(&Message { error: e, info: false }).unwrap();
            s.done(done(None)).unwrap();
            assert_eq!(s.take_errors(), 2);
        });
        let expected = "\n(1 row affected)\nhello\nMsg 208, Level 16, State 1, Line 3\nInvalid object name 'nope'.\n\
Msg 50000, Level 16, State 1, Procedure p, Line 5\nboom\n";
        assert_eq!(out, expected);
    }

    #[test]
    fn nocount_result_sets_are_separated() {
        let out = text(|s| {
            s.columns(&[ColumnInfo::new("b", SqlType::Bit, false)]).unwrap();
            s.row(&[Value::Bit(true)]).unwrap();
            s.done(done(None)).unwrap();
            s.columns(&[ColumnInfo::new("n", SqlType::NVarChar { len: Length::Max }, true)]).unwrap();
            s.row(&[Value::String("x".repeat(300))]).unwrap();
            s.done(done(None)).unwrap();
        });
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(&lines[..4], &["b", "-", "1", ""]);
        assert_eq!(lines[4].len(), 256);
        assert_eq!(lines[6], "x".repeat(256));
        assert_eq!(lines[7], "");
    }

    #[test]
    fn widths() {
        assert_eq!(display_width(&SqlType::DateTime2 { scale: 7 }), (27, false));
        assert_eq!(display_width(&SqlType::DateTimeOffset { scale: 7 }), (34, false));
        assert_eq!(display_width(&SqlType::Time { scale: 0 }), (8, false));
        assert_eq!(display_width(&SqlType::Binary { len: 4 }), (10, false));
        assert_eq!(display_width(&SqlType::Money), (21, true));
    }
}
