//! Source positions.

use std::fmt;
use std::ops::Range;

/// Where something is in the batch text: a byte range, and the 1-based line and column
/// (in characters) of its first character.
///
/// A `Span` is metadata, not meaning: **every `Span` compares equal to every other**, so
/// that two ASTs compare equal when they say the same thing, wherever their text was (this
/// is what lets a printed statement be checked against the original by `==`). Compare
/// `start`/`end`/`line` explicitly when positions matter.
#[derive(Clone, Copy, Default)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
    /// 1-based line of the first character (lines are counted by `\n`).
    pub line: u32,
    /// 1-based column of the first character, counted in characters.
    pub column: u32,
}

impl Span {
    pub fn new(start: u32, end: u32, line: u32, column: u32) -> Span {
        Span { start, end, line, column }
    }

    /// The byte range in the source.
    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The source text this span covers, or `""` if the span does not fit `source` (a span
    /// from another text).
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.range()).unwrap_or("")
    }

    /// A span from the start of `self` to the end of `other`.
    pub fn to(&self, other: Span) -> Span {
        Span { start: self.start, end: other.end.max(self.start), line: self.line, column: self.column }
    }
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl Eq for Span {}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}@{}:{}", self.start, self.end, self.line, self.column)
    }
}
