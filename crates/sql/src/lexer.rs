//! The T-SQL lexer: batch text to tokens with positions.
//!
//! What it recognises (SQL Server's rules, QUOTED_IDENTIFIER ON):
//! - words: regular identifiers (a letter, `_` or `#` first; then letters, digits, `_`,
//!   `@`, `#`, `$`). A word is [`TokenKind::Keyword`] when it is one of SQL Server's
//!   reserved keywords and [`TokenKind::Word`] otherwise; non-reserved keywords (`name`,
//!   `RECOVERY`, `THROW`) are words, and the parser gives them meaning by position.
//!   `#temp` and `##global` names are words (T-SQL identifiers may start with `#`), and so
//!   are `$action`-style pseudo-columns.
//! - delimited identifiers `[a]]b]` and `"a""b"`;
//! - `@variable` and `@@function` names;
//! - strings `'it''s'` and `N'unicode'`;
//! - numbers: integer `12`, decimal `1.5` `.5` `1.`, float `1e5` `2.5E-3`, money `$12.50`,
//!   binary `0x1F` (and the empty `0x`);
//! - operators, including `!=` `!<` `!>`, compound assignments (`+=` ...) and `::`;
//! - `--` line comments and nested `/* /* */ */` block comments, which are skipped.
//!
//! Errors are SQL Server's: 105 for an unclosed string or delimited identifier, 113 for an
//! unclosed comment, 103 for an identifier over 128 characters and 1038 for `[]`, each
//! with the line where the offending token starts. Any other unexpected character becomes
//! a [`TokenKind::Unknown`] token, which the parser reports as Msg 102 "Incorrect syntax
//! near ..." like SQL Server does.

use types::SqlError;

use crate::errors;
use crate::keywords::is_reserved_in;
pub use crate::span::Span;

/// One token: its kind and where it is. The text of words, numbers, variables and
/// operators is the source slice ([`Token::text`]); strings, delimited identifiers and
/// binary literals carry their decoded value.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

impl Token {
    /// The token's text as written in `source`.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        self.span.text(source)
    }
}

/// Which delimiters a delimited identifier used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuoteStyle {
    /// A regular identifier.
    None,
    /// `[name]`
    Bracket,
    /// `"name"`
    Double,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// A regular identifier or non-reserved keyword (text in the source).
    Word,
    /// A reserved keyword (text in the source).
    Keyword,
    /// `[x]` or `"x"`, with escapes (`]]`, `""`) removed.
    QuotedIdent {
        value: String,
        style: QuoteStyle,
    },
    /// `@name` (text in the source, including the `@`).
    Variable,
    /// `@@NAME` (text in the source, including the `@@`).
    SystemVariable,
    /// `'...'` or `N'...'` with `''` unescaped.
    String {
        value: String,
        unicode: bool,
    },
    /// Digits only.
    Integer,
    /// Digits with a decimal point.
    Decimal,
    /// A number with an exponent.
    Float,
    /// `$` followed by a number.
    Money,
    /// `0x...`: the bytes (an odd digit count gets a leading zero nibble, as in SQL Server).
    Binary(Vec<u8>),
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    /// `<>`
    LtGt,
    /// `!=`
    BangEq,
    Lt,
    Gt,
    LtEq,
    GtEq,
    /// `!<`
    NotLt,
    /// `!>`
    NotGt,
    Amp,
    Pipe,
    Caret,
    Tilde,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    DoubleColon,
    Colon,
    Dot,
    Comma,
    Semicolon,
    LParen,
    RParen,
    /// A character with no meaning in T-SQL (`?`, `{`, a backtick, ...).
    Unknown,
    /// End of input (always the last token; its span is empty, at the end).
    Eof,
}

impl TokenKind {
    /// A constant's token: a number, money, string or binary literal (NULL, a keyword,
    /// is not one).
    pub fn is_constant(&self) -> bool {
        matches!(
            self,
            TokenKind::Integer
                | TokenKind::Decimal
                | TokenKind::Float
                | TokenKind::Money
                | TokenKind::String { .. }
                | TokenKind::Binary(_)
        )
    }
}

/// Lex a whole batch. The result always ends with one [`TokenKind::Eof`] token.
pub fn tokenize(source: &str) -> Result<Vec<Token>, SqlError> {
    let mut tokens = Vec::new();
    tokenize_into(source, &mut tokens)?;
    Ok(tokens)
}

/// [`tokenize`] into `tokens` (cleared first), so a caller can reuse one buffer across
/// batches: a batch of a thousand statements has over ten thousand tokens, and a fresh
/// half-megabyte vector per batch was paid in page faults.
pub fn tokenize_into(source: &str, tokens: &mut Vec<Token>) -> Result<(), SqlError> {
    lex(source, tokens, true)
}

/// The one token that starts exactly at byte `at` of `source` (no white space or comment
/// before it), as [`tokenize`] would lex it there: the lexer reads a token from its bytes
/// alone, whatever came before. None at white space, a comment, the end, or an error.
/// `scratch` is a buffer the caller reuses. Its span's line and column are not
/// meaningful (only the byte range is).
pub(crate) fn token_at(source: &str, at: usize, scratch: &mut Vec<Token>) -> Option<Token> {
    let bytes = source.as_bytes();
    let b = *bytes.get(at)?;
    if !source.is_char_boundary(at) || source.len() >= u32::MAX as usize {
        return None;
    }
    match simple_literal_at(bytes, at) {
        Some((SimpleLiteral::Integer, end)) => {
            return Some(Token { kind: TokenKind::Integer, span: Span::new(at as u32, end as u32, 1, 1) });
        }
        Some((SimpleLiteral::String { .. }, end)) => {
            let value = source[at + 1..end - 1].to_owned();
            return Some(Token {
                kind: TokenKind::String { value, unicode: false },
                span: Span::new(at as u32, end as u32, 1, 1),
            });
        }
        None if b == b'\'' && !bytes[at + 1..].contains(&b'\'') => return None,
        None => {}
    }
    let mut lx = Lexer { src: source, bytes, pos: at, line: 1, line_start: at, wide: 0 };
    // White space and comments start with these (or a non-ASCII space).
    if b >= 0x80 || class(b) & SPACE != 0 || matches!(b, b'-' | b'/') {
        lx.skip_trivia().ok()?;
        if lx.pos != at {
            return None;
        }
    }
    scratch.clear();
    // A number (what `scan` does for a digit that starts no binary literal).
    if b.is_ascii_digit() && !(b == b'0' && matches!(bytes.get(at + 1), Some(b'x' | b'X'))) {
        lx.number(scratch, at, 1, 1).ok()?;
    } else {
        lx.scan(1, 1, scratch).ok()?;
    }
    if scratch.len() != 1 {
        return None;
    }
    scratch.pop()
}

/// A literal [`simple_literal_at`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SimpleLiteral {
    /// Digits: a [`TokenKind::Integer`].
    Integer,
    /// A quoted string without `''` in it: a [`TokenKind::String`] (not Unicode) whose
    /// value is the text between the quotes; `line_break` when it holds a `\n`.
    String { line_break: bool },
}

/// The literals of a loading script's VALUES, without the lexer: plain digits (no point,
/// exponent or `0x` after them) and a quoted string without `''`, each what `number` and
/// `string` would lex at byte `at`, and the end of its token (a shape's slots are read a
/// thousand to a batch). None for anything else.
pub(crate) fn simple_literal_at(bytes: &[u8], at: usize) -> Option<(SimpleLiteral, usize)> {
    let b = *bytes.get(at)?;
    if b.is_ascii_digit() {
        let end = at + bytes[at..].iter().position(|b| !b.is_ascii_digit()).unwrap_or(bytes.len() - at);
        if !matches!(bytes.get(end), Some(b'.' | b'e' | b'E' | b'x' | b'X')) {
            return Some((SimpleLiteral::Integer, end));
        }
    } else if b == b'\'' {
        let mut line_break = false;
        for (k, &c) in bytes[at + 1..].iter().enumerate() {
            if c == b'\'' {
                let q = at + 1 + k;
                return (bytes.get(q + 1) != Some(&b'\'')).then_some((SimpleLiteral::String { line_break }, q + 1));
            }
            line_break |= c == b'\n';
        }
    }
    None
}

/// The lexer; `fast` takes the shortcuts for the commonest ASCII tokens (tests compare
/// it with the general path).
fn lex(source: &str, tokens: &mut Vec<Token>, fast: bool) -> Result<(), SqlError> {
    tokens.clear();
    // Spans are u32: a batch over 4 GB is refused rather than mis-positioned.
    if source.len() >= u32::MAX as usize {
        return Err(errors::incorrect_syntax("", 1));
    }
    let mut lx = Lexer { src: source, bytes: source.as_bytes(), pos: 0, line: 1, line_start: 0, wide: 0 };
    // About one token per four bytes of SQL text.
    tokens.reserve(source.len() / 4 + 1);
    let bytes = source.as_bytes();
    loop {
        if fast {
            // Spaces, newlines, punctuation that never starts a longer token, ASCII words
            // and integers, as `skip_trivia` and `scan` would take them; anything else
            // (or a word that runs into a non-ASCII character) goes the general way.
            let pos = lx.pos;
            let Some(&b) = bytes.get(pos) else {
                let end = pos as u32;
                tokens.push(Token { kind: TokenKind::Eof, span: Span::new(end, end, lx.line, lx.col()) });
                return Ok(());
            };
            let single = match b {
                b' ' | b'\t' => {
                    lx.pos += 1;
                    continue;
                }
                b'\n' => {
                    lx.pos += 1;
                    lx.line += 1;
                    lx.line_start = lx.pos;
                    lx.wide = 0;
                    continue;
                }
                b'(' => Some(TokenKind::LParen),
                b')' => Some(TokenKind::RParen),
                b',' => Some(TokenKind::Comma),
                b';' => Some(TokenKind::Semicolon),
                b'=' => Some(TokenKind::Eq),
                b'~' => Some(TokenKind::Tilde),
                _ => None,
            };
            if let Some(kind) = single {
                tokens.push(Token { kind, span: Span::new(pos as u32, pos as u32 + 1, lx.line, lx.col()) });
                lx.pos += 1;
                continue;
            }
            let ident = b < 0x80 && ASCII_CLASS[b as usize] & IDENT_START != 0;
            if (ident && !(matches!(b, b'N' | b'n') && bytes.get(pos + 1) == Some(&b'\'')))
                || (b.is_ascii_digit() && !(b == b'0' && matches!(bytes.get(pos + 1), Some(b'x' | b'X'))))
            {
                let mut end = pos + 1;
                let class = if ident { IDENT_CHAR } else { DIGIT };
                while let Some(&c) = bytes.get(end) {
                    if c >= 0x80 || ASCII_CLASS[c as usize] & class == 0 {
                        break;
                    }
                    end += 1;
                }
                // A number going on as a decimal or float, a word going on with a
                // non-ASCII letter, or one too long: the general path.
                let more = match bytes.get(end) {
                    Some(&c) if ident => c >= 0x80,
                    Some(b'.' | b'e' | b'E') => true,
                    _ => false,
                };
                if !more && end - pos <= errors::MAX_IDENTIFIER_LEN {
                    let kind = if !ident {
                        TokenKind::Integer
                    } else if is_reserved_in(bytes, pos, end) {
                        TokenKind::Keyword
                    } else {
                        TokenKind::Word
                    };
                    tokens.push(Token { kind, span: Span::new(pos as u32, end as u32, lx.line, lx.col()) });
                    lx.pos = end;
                    continue;
                }
            }
        }
        lx.skip_trivia().map_err(|e| *e)?;
        let start = lx.pos;
        let line = lx.line;
        let column = lx.col();
        if start >= lx.bytes.len() {
            let end = start as u32;
            tokens.push(Token { kind: TokenKind::Eof, span: Span::new(end, end, line, column) });
            return Ok(());
        }
        lx.scan(line, column, tokens).map_err(|e| *e)?;
    }
}

/// Lexer results: errors are rare and boxed, so the common path moves small values.
type Lexed<T> = Result<T, Box<SqlError>>;

/// The lexer works on bytes: every token starts and ends with an ASCII byte or a whole
/// character, so every slice `src[a..b]` taken between two positions is on character
/// boundaries. Columns count characters: `wide` is the number of UTF-8 continuation
/// bytes between the start of the current line and `pos`, so the column is the byte
/// distance minus `wide`, and ASCII text is skipped without counting anything.
struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    /// Byte offset where the current line starts.
    line_start: usize,
    /// Continuation bytes between `line_start` and `pos`.
    wide: usize,
}

/// ASCII character classes (bit set per byte below 0x80).
const IDENT_START: u8 = 1;
const IDENT_CHAR: u8 = 2;
const SPACE: u8 = 4;
const DIGIT: u8 = 8;

const ASCII_CLASS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        let alpha = c.is_ascii_alphabetic();
        if alpha || c == b'_' || c == b'#' {
            t[b] |= IDENT_START;
        }
        if alpha || c.is_ascii_digit() || matches!(c, b'_' | b'@' | b'#' | b'$') {
            t[b] |= IDENT_CHAR;
        }
        if matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0B | 0x0C) {
            t[b] |= SPACE;
        }
        if c.is_ascii_digit() {
            t[b] |= DIGIT;
        }
        b += 1;
    }
    t
};

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '#'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')
}

fn class(b: u8) -> u8 {
    if b < 0x80 {
        ASCII_CLASS[b as usize]
    } else {
        0
    }
}

impl<'a> Lexer<'a> {
    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// The character at `at` (a character boundary).
    fn char_at(&self, at: usize) -> Option<char> {
        self.src.get(at..).and_then(|s| s.chars().next())
    }

    fn col(&self) -> u32 {
        (self.pos - self.line_start - self.wide) as u32 + 1
    }

    /// Move to `end` over text that may hold newlines and non-ASCII characters.
    fn advance_to(&mut self, end: usize) {
        for i in self.pos..end {
            let b = self.bytes[i];
            if b == b'\n' {
                self.line += 1;
                self.line_start = i + 1;
                self.wide = 0;
            } else if b & 0xC0 == 0x80 {
                self.wide += 1;
            }
        }
        self.pos = end;
    }

    /// Step over one non-ASCII character (never a newline).
    fn bump_wide(&mut self, c: char) {
        self.pos += c.len_utf8();
        self.wide += c.len_utf8() - 1;
    }

    /// Skip identifier characters (`is_ident_char`).
    fn skip_ident_chars(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b < 0x80 {
                if ASCII_CLASS[b as usize] & IDENT_CHAR == 0 {
                    return;
                }
                self.pos += 1;
            } else {
                match self.char_at(self.pos) {
                    Some(c) if is_ident_char(c) => self.bump_wide(c),
                    _ => return,
                }
            }
        }
    }

    fn skip_digits(&mut self) {
        while self.peek_byte(0).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    fn skip_trivia(&mut self) -> Lexed<()> {
        loop {
            match self.peek_byte(0) {
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                    self.wide = 0;
                }
                Some(b) if b < 0x80 && ASCII_CLASS[b as usize] & SPACE != 0 => self.pos += 1,
                Some(b'-') if self.peek_byte(1) == Some(b'-') => {
                    // To the end of the line; the newline itself is white space.
                    let end = self.bytes[self.pos..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(self.bytes.len(), |n| self.pos + n);
                    self.advance_to(end);
                }
                Some(b'/') if self.peek_byte(1) == Some(b'*') => self.skip_block_comment()?,
                Some(b) if b >= 0x80 => {
                    // Unicode spaces (no-break space and friends) are white space to SQL
                    // Server too; text pasted from web pages is full of them.
                    // A byte-order mark (scripts saved by SSMS start with one) too.
                    match self.char_at(self.pos) {
                        Some(c) if c.is_whitespace() || c == '\u{feff}' => self.bump_wide(c),
                        _ => return Ok(()),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// `/* ... */`, nesting like SQL Server's: each `/*` inside needs its own `*/`.
    fn skip_block_comment(&mut self) -> Lexed<()> {
        let start_line = self.line;
        let mut depth = 0usize;
        let mut i = self.pos;
        let end = loop {
            match (self.bytes.get(i), self.bytes.get(i + 1)) {
                (Some(b'/'), Some(b'*')) => {
                    i += 2;
                    depth += 1;
                }
                (Some(b'*'), Some(b'/')) => {
                    i += 2;
                    depth -= 1;
                    if depth == 0 {
                        break i;
                    }
                }
                (Some(_), _) => i += 1,
                (None, _) => return Err(Box::new(errors::missing_end_comment(start_line))),
            }
        };
        self.advance_to(end);
        Ok(())
    }

    /// Scan the token at `pos` (not at the end) and push it. Each kind is pushed where
    /// it is known: a token kind returned through one variable is copied in pieces, and
    /// those copies (read back right after being written) cost more than the scanning.
    fn scan(&mut self, line: u32, column: u32, tokens: &mut Vec<Token>) -> Lexed<()> {
        use TokenKind as T;
        let start = self.pos;
        macro_rules! emit {
            ($kind:expr) => {{
                let kind = $kind;
                tokens.push(Token { kind, span: Span::new(start as u32, self.pos as u32, line, column) });
                return Ok(());
            }};
        }
        let b = self.bytes[start];
        let next = self.peek_byte(1);
        if class(b) & IDENT_START != 0 && !(matches!(b, b'N' | b'n') && next == Some(b'\'')) {
            if self.word(line)? {
                emit!(T::Keyword)
            }
            emit!(T::Word)
        }
        match b {
            b'\'' => emit!(T::String { value: self.string(line)?, unicode: false }),
            b'N' | b'n' => {
                // N'...' (a word starting with N was taken above).
                self.pos += 1;
                emit!(T::String { value: self.string(line)?, unicode: true })
            }
            b'[' => emit!(T::QuotedIdent { value: self.delimited(b']', line)?, style: QuoteStyle::Bracket }),
            b'"' => emit!(T::QuotedIdent { value: self.delimited(b'"', line)?, style: QuoteStyle::Double }),
            b'@' => {
                self.pos += 1;
                let system = self.peek_byte(0) == Some(b'@');
                if system {
                    self.pos += 1;
                }
                let name_start = self.pos;
                self.skip_ident_chars();
                let text = &self.src[name_start..self.pos];
                if text.len() >= errors::MAX_IDENTIFIER_LEN && text.chars().count() + 1 > errors::MAX_IDENTIFIER_LEN {
                    return Err(Box::new(errors::identifier_too_long(text, line)));
                }
                if system {
                    emit!(T::SystemVariable)
                }
                emit!(T::Variable)
            }
            b'0' if matches!(next, Some(b'x' | b'X')) => {
                self.pos += 2;
                let digits_start = self.pos;
                while self.peek_byte(0).is_some_and(|b| b.is_ascii_hexdigit()) {
                    self.pos += 1;
                }
                emit!(T::Binary(decode_hex(&self.src[digits_start..self.pos])))
            }
            b'0'..=b'9' => self.number(tokens, start, line, column),
            b'.' if next.is_some_and(|b| b.is_ascii_digit()) => self.number(tokens, start, line, column),
            b'$' if next.is_some_and(|b| b.is_ascii_digit() || b == b'.') => {
                self.pos += 1;
                // `$.` alone is not a number; SQL Server reads `$` then `.`.
                if self.peek_byte(0) == Some(b'.') && !self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) {
                    emit!(T::Unknown)
                }
                self.skip_digits();
                if self.peek_byte(0) == Some(b'.') {
                    self.pos += 1;
                    self.skip_digits();
                }
                emit!(T::Money)
            }
            b'$' if self.char_at(start + 1).is_some_and(is_ident_start) => {
                // The `$` is part of the token but not of the word checked for length
                // and reservedness.
                self.pos += 1;
                if self.word(line)? {
                    emit!(T::Keyword)
                }
                emit!(T::Word)
            }
            _ if b >= 0x80 => match self.char_at(start) {
                Some(c) if is_ident_start(c) => {
                    // Not a keyword: those are ASCII.
                    self.word(line)?;
                    emit!(T::Word)
                }
                // A character with no meaning in T-SQL.
                Some(c) => {
                    self.bump_wide(c);
                    emit!(T::Unknown)
                }
                None => emit!(T::Eof),
            },
            _ => {
                let (kind, len) = operator(b, next);
                self.pos += len;
                emit!(kind)
            }
        }
    }

    /// A word: its first character (an identifier start) is at `pos`. Whether it is a
    /// reserved keyword.
    fn word(&mut self, line: u32) -> Lexed<bool> {
        let start = self.pos;
        let mut pos = start;
        let mut ascii = true;
        let first = self.bytes[start];
        if first < 0x80 {
            pos += 1;
        } else if let Some(c) = self.char_at(start) {
            pos += c.len_utf8();
            self.wide += c.len_utf8() - 1;
            ascii = false;
        }
        while let Some(&b) = self.bytes.get(pos) {
            if b < 0x80 {
                if ASCII_CLASS[b as usize] & IDENT_CHAR == 0 {
                    break;
                }
                pos += 1;
            } else {
                match self.char_at(pos) {
                    Some(c) if is_ident_char(c) => {
                        pos += c.len_utf8();
                        self.wide += c.len_utf8() - 1;
                        ascii = false;
                    }
                    _ => break,
                }
            }
        }
        self.pos = pos;
        let word = &self.bytes[start..pos];
        if word.len() > errors::MAX_IDENTIFIER_LEN {
            let text = &self.src[start..pos];
            if text.chars().count() > errors::MAX_IDENTIFIER_LEN {
                return Err(Box::new(errors::identifier_too_long(text, line)));
            }
        }
        // Reserved keywords are ASCII.
        Ok(ascii && is_reserved_in(self.bytes, start, pos))
    }

    /// `'...'` with `''` as an escaped quote: its value. The opening quote is at `pos`
    /// (after any N).
    fn string(&mut self, line: u32) -> Lexed<String> {
        let body_start = self.pos + 1;
        let mut value = String::new();
        let mut chunk_start = body_start;
        let mut i = body_start;
        loop {
            match self.bytes[i..].iter().position(|&b| b == b'\'') {
                None => return Err(Box::new(errors::unclosed_quote(&self.src[body_start..], line))),
                Some(n) => {
                    let q = i + n;
                    if self.bytes.get(q + 1) == Some(&b'\'') {
                        // `''`: one quote in the value.
                        value.push_str(&self.src[chunk_start..q + 1]);
                        i = q + 2;
                        chunk_start = i;
                    } else {
                        value.push_str(&self.src[chunk_start..q]);
                        self.advance_to(q + 1);
                        return Ok(value);
                    }
                }
            }
        }
    }

    /// `[...]` with `]]`, or `"..."` with `""`: the name.
    fn delimited(&mut self, close: u8, line: u32) -> Lexed<String> {
        let body_start = self.pos + 1;
        let mut value = String::new();
        let mut chunk_start = body_start;
        let mut i = body_start;
        loop {
            match self.bytes[i..].iter().position(|&b| b == close) {
                None => return Err(Box::new(errors::unclosed_quote(&self.src[body_start..], line))),
                Some(n) => {
                    let q = i + n;
                    if self.bytes.get(q + 1) == Some(&close) {
                        value.push_str(&self.src[chunk_start..q + 1]);
                        i = q + 2;
                        chunk_start = i;
                    } else {
                        value.push_str(&self.src[chunk_start..q]);
                        if value.is_empty() {
                            return Err(Box::new(errors::empty_identifier(line)));
                        }
                        if value.len() > errors::MAX_IDENTIFIER_LEN
                            && value.chars().count() > errors::MAX_IDENTIFIER_LEN
                        {
                            return Err(Box::new(errors::identifier_too_long(&value, line)));
                        }
                        self.advance_to(q + 1);
                        return Ok(value);
                    }
                }
            }
        }
    }

    /// Integer, decimal or float. SQL Server accepts an exponent marker without digits
    /// (`1e` is the float 1), so this does too.
    fn number(&mut self, tokens: &mut Vec<Token>, start: usize, line: u32, column: u32) -> Lexed<()> {
        self.skip_digits();
        let mut kind = TokenKind::Integer;
        if self.peek_byte(0) == Some(b'.') {
            self.pos += 1;
            self.skip_digits();
            kind = TokenKind::Decimal;
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek_byte(0), Some(b'+' | b'-')) && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1;
            }
            self.skip_digits();
            kind = TokenKind::Float;
        }
        tokens.push(Token { kind, span: Span::new(start as u32, self.pos as u32, line, column) });
        Ok(())
    }
}

/// The operator or punctuation starting with the ASCII byte `b` (then `next`), and its
/// length in bytes.
fn operator(b: u8, next: Option<u8>) -> (TokenKind, usize) {
    use TokenKind as T;
    let two = match (b, next) {
        (b'<', Some(b'>')) => T::LtGt,
        (b'<', Some(b'=')) => T::LtEq,
        (b'>', Some(b'=')) => T::GtEq,
        (b'!', Some(b'=')) => T::BangEq,
        (b'!', Some(b'<')) => T::NotLt,
        (b'!', Some(b'>')) => T::NotGt,
        (b'+', Some(b'=')) => T::PlusEq,
        (b'-', Some(b'=')) => T::MinusEq,
        (b'*', Some(b'=')) => T::StarEq,
        (b'/', Some(b'=')) => T::SlashEq,
        (b'%', Some(b'=')) => T::PercentEq,
        (b'&', Some(b'=')) => T::AmpEq,
        (b'|', Some(b'=')) => T::PipeEq,
        (b'^', Some(b'=')) => T::CaretEq,
        (b':', Some(b':')) => T::DoubleColon,
        _ => {
            let one = match b {
                b'+' => T::Plus,
                b'-' => T::Minus,
                b'*' => T::Star,
                b'/' => T::Slash,
                b'%' => T::Percent,
                b'=' => T::Eq,
                b'<' => T::Lt,
                b'>' => T::Gt,
                b'&' => T::Amp,
                b'|' => T::Pipe,
                b'^' => T::Caret,
                b'~' => T::Tilde,
                b':' => T::Colon,
                b'.' => T::Dot,
                b',' => T::Comma,
                b';' => T::Semicolon,
                b'(' => T::LParen,
                b')' => T::RParen,
                _ => T::Unknown,
            };
            return (one, 1);
        }
    };
    (two, 2)
}

/// Hex digits to bytes; an odd count is read with an implied leading zero (`0x1` = 0x01).
fn decode_hex(digits: &str) -> Vec<u8> {
    let nibble = |b: u8| match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    };
    let bytes = digits.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 2 + 1);
    let mut i = 0;
    if bytes.len() % 2 == 1 {
        out.push(nibble(bytes[0]));
        i = 1;
    }
    while i + 1 < bytes.len() {
        out.push(nibble(bytes[i]) << 4 | nibble(bytes[i + 1]));
        i += 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind as T;

    fn kinds(src: &str) -> Vec<TokenKind> {
        tokenize(src).unwrap().into_iter().map(|t| t.kind).collect()
    }

    fn texts(src: &str) -> Vec<String> {
        tokenize(src).unwrap().iter().map(|t| t.text(src).to_string()).collect()
    }

    #[test]
    fn token_at_lexes_the_token_tokenize_finds_there() {
        let src = "INSERT t VALUES (1, -2, 1.5e3, .5, 1., $4.25, $.5, 0x0aB, 0x, N'é''x', 'a', 'q''r', '', 'é\n', 007, 45E2, 3x, NULL, nuLL,\n\
                   @v, [q], \"d\", café, #t, 12a) -- c\n/* b */ x/y";
        let mut scratch = Vec::new();
        let all = tokenize(src).unwrap();
        for t in &all[..all.len() - 1] {
            let one = token_at(src, t.span.start as usize, &mut scratch).unwrap();
            assert_eq!(
                (&one.kind, one.span.start, one.span.end),
                (&t.kind, t.span.start, t.span.end),
                "{}",
                t.text(src)
            );
        }
        // Not at a token: white space, a comment, the end, past a character boundary.
        for at in [src.find(" -- c").unwrap(), src.find("-- c").unwrap(), src.find("/* b").unwrap(), src.len()] {
            assert!(token_at(src, at, &mut scratch).is_none(), "{at}");
        }
        assert!(token_at(src, src.find('é').unwrap() + 1, &mut scratch).is_none());
        assert!(token_at("'open", 0, &mut scratch).is_none());
    }

    #[test]
    fn words_and_keywords() {
        assert_eq!(
            kinds("SELECT name, size fRoM t"),
            vec![T::Keyword, T::Word, T::Comma, T::Word, T::Keyword, T::Word, T::Eof]
        );
        assert_eq!(texts("#temp ##global $action a@b#c$"), vec!["#temp", "##global", "$action", "a@b#c$", ""]);
        assert_eq!(kinds("#t ##g $action"), vec![T::Word, T::Word, T::Word, T::Eof]);
        // Unicode letters are identifier characters.
        assert_eq!(kinds("SELECT café"), vec![T::Keyword, T::Word, T::Eof]);
    }

    #[test]
    fn delimited_identifiers() {
        assert_eq!(
            kinds("[a]]b] \"x\"\"y\" [select]"),
            vec![
                T::QuotedIdent { value: "a]b".into(), style: QuoteStyle::Bracket },
                T::QuotedIdent { value: "x\"y".into(), style: QuoteStyle::Double },
                T::QuotedIdent { value: "select".into(), style: QuoteStyle::Bracket },
                T::Eof
            ]
        );
        assert_eq!(tokenize("SELECT []").unwrap_err().number, 1038);
        assert_eq!(tokenize("SELECT \"\"").unwrap_err().number, 1038);
    }

    #[test]
    fn variables() {
        assert_eq!(
            kinds("@x @@SPID @@rowcount @"),
            vec![T::Variable, T::SystemVariable, T::SystemVariable, T::Variable, T::Eof]
        );
        assert_eq!(texts("@i+=1"), vec!["@i", "+=", "1", ""]);
    }

    #[test]
    fn strings() {
        assert_eq!(
            kinds("'it''s' N'ünï' n'x' '' ''''"),
            vec![
                T::String { value: "it's".into(), unicode: false },
                T::String { value: "ünï".into(), unicode: true },
                T::String { value: "x".into(), unicode: true },
                T::String { value: "".into(), unicode: false },
                T::String { value: "'".into(), unicode: false },
                T::Eof
            ]
        );
        // A word that merely starts with N is a word.
        assert_eq!(kinds("Name"), vec![T::Word, T::Eof]);
        // Strings span lines.
        let toks = tokenize("'a\nb' x").unwrap();
        assert_eq!(toks[1].span.line, 2);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("12 1.5 .5 1. 1e5 2.5E-3 1e $12.50 $3 0x1F 0x 0x123"),
            vec![
                T::Integer,
                T::Decimal,
                T::Decimal,
                T::Decimal,
                T::Float,
                T::Float,
                T::Float,
                T::Money,
                T::Money,
                T::Binary(vec![0x1F]),
                T::Binary(vec![]),
                T::Binary(vec![0x01, 0x23]),
                T::Eof
            ]
        );
        assert_eq!(texts("1a"), vec!["1", "a", ""]);
        assert_eq!(texts("a.b.c"), vec!["a", ".", "b", ".", "c", ""]);
        assert_eq!(texts("1-2"), vec!["1", "-", "2", ""]);
        assert_eq!(texts("1e-2"), vec!["1e-2", ""]);
    }

    #[test]
    fn operators() {
        let src = "+ - * / % = <> != < > <= >= !< !> & | ^ ~ += -= *= /= %= &= |= ^= :: : . , ; ( )";
        assert_eq!(
            kinds(src),
            vec![
                T::Plus,
                T::Minus,
                T::Star,
                T::Slash,
                T::Percent,
                T::Eq,
                T::LtGt,
                T::BangEq,
                T::Lt,
                T::Gt,
                T::LtEq,
                T::GtEq,
                T::NotLt,
                T::NotGt,
                T::Amp,
                T::Pipe,
                T::Caret,
                T::Tilde,
                T::PlusEq,
                T::MinusEq,
                T::StarEq,
                T::SlashEq,
                T::PercentEq,
                T::AmpEq,
                T::PipeEq,
                T::CaretEq,
                T::DoubleColon,
                T::Colon,
                T::Dot,
                T::Comma,
                T::Semicolon,
                T::LParen,
                T::RParen,
                T::Eof
            ]
        );
        assert_eq!(kinds("? { `"), vec![T::Unknown, T::Unknown, T::Unknown, T::Eof]);
    }

    #[test]
    fn comments() {
        assert_eq!(texts("a -- comment\nb"), vec!["a", "b", ""]);
        assert_eq!(texts("a /* x /* nested */ still comment */ b"), vec!["a", "b", ""]);
        assert_eq!(texts("a/**/b"), vec!["a", "b", ""]);
        assert_eq!(texts("a --"), vec!["a", ""]);
        // `--` inside a string is not a comment.
        assert_eq!(kinds("'--x'"), vec![T::String { value: "--x".into(), unicode: false }, T::Eof]);
    }

    #[test]
    fn positions() {
        let src = "SELECT a,\n  [b c] -- x\n /* y\n */ FROM  t";
        let toks = tokenize(src).unwrap();
        let pos: Vec<(u32, u32, u32, u32)> =
            toks.iter().map(|t| (t.span.start, t.span.end, t.span.line, t.span.column)).collect();
        assert_eq!(
            pos,
            vec![
                (0, 6, 1, 1),
                (7, 8, 1, 8),
                (8, 9, 1, 9),
                (12, 17, 2, 3),
                (33, 37, 4, 5),
                (39, 40, 4, 11),
                (40, 40, 4, 12)
            ]
        );
        // Columns count characters, not bytes.
        let toks = tokenize("'é' x").unwrap();
        assert_eq!((toks[1].span.column, toks[1].span.start), (5, 5));
        // Non-ASCII in words, comments, strings and white space; lines restart columns.
        let src = "café\u{a0}x /* ü\n€€ */ N'日本\nö' [ä]] b] -- ß\n\u{feff}y";
        let pos: Vec<(u32, u32)> = tokenize(src).unwrap().iter().map(|t| (t.span.line, t.span.column)).collect();
        assert_eq!(pos, vec![(1, 1), (1, 6), (2, 7), (3, 4), (4, 2), (4, 3)]);
    }

    #[test]
    fn errors_with_lines() {
        let e = tokenize("SELECT 1\nSELECT 'abc\ndef").unwrap_err();
        assert_eq!((e.number, e.severity, e.line), (105, 15, 2));
        assert_eq!(e.message, "Unclosed quotation mark after the character string 'abc\ndef'.");
        let e = tokenize("SELECT [abc").unwrap_err();
        assert_eq!((e.number, e.line), (105, 1));
        let e = tokenize("\n\nSELECT 1 /* a /* b */ \n").unwrap_err();
        assert_eq!((e.number, e.line, e.message.as_str()), (113, 3, "Missing end comment mark '*/'."));
        let long = "x".repeat(129);
        let e = tokenize(&format!("SELECT {long}")).unwrap_err();
        assert_eq!(e.number, 103);
        assert_eq!(
            e.message,
            format!("The identifier that starts with '{}' is too long. Maximum length is 128.", &long[..128])
        );
        assert!(tokenize(&format!("SELECT [{}]", "y".repeat(128))).is_ok());
        assert_eq!(tokenize(&format!("SELECT [{}]", "y".repeat(129))).unwrap_err().number, 103);
        assert_eq!(tokenize(&format!("SELECT @{}", "v".repeat(128))).unwrap_err().number, 103);
    }

    /// The shortcuts give what the general path gives, for inputs mixing every kind of
    /// token, trivia and error.
    #[test]
    fn shortcuts_agree_with_the_general_path() {
        use proptest::prelude::*;
        const PIECES: &[&str] = &[
            "SELECT",
            "select",
            "x",
            "é",
            "日本",
            "\u{a0}",
            "\u{feff}",
            " ",
            "\n",
            "\r\n",
            "\t",
            "'",
            "''",
            "N'",
            "n",
            "[",
            "]",
            "\"",
            "@",
            "@@",
            "#",
            "$",
            "$select",
            "0x",
            "0X1f",
            "1",
            "12",
            ".",
            "5",
            "e",
            "E",
            "+",
            "-",
            "--",
            "/*",
            "*/",
            "*",
            "/",
            "<",
            ">",
            "=",
            "!",
            ":",
            ";",
            ",",
            "(",
            ")",
            "?",
            "€",
            "_",
            "a1",
            "ID",
            "identity_insert",
            "\u{7f}",
            "%",
            "&",
            "|",
            "^",
            "~",
            "\u{1F600}",
            "\x0b",
            "INSERT",
            "VALUES",
        ];
        let run = |src: &str, fast: bool| {
            let mut toks = Vec::new();
            match lex(src, &mut toks, fast) {
                Ok(()) => format!("{toks:?}"),
                Err(e) => format!("error {} line {}: {}", e.number, e.line, e.message),
            }
        };
        let mut runner =
            proptest::test_runner::TestRunner::new(ProptestConfig { cases: 5000, ..ProptestConfig::default() });
        runner
            .run(&prop::collection::vec(prop::sample::select(PIECES), 0..40), |parts| {
                let src: String = parts.concat();
                prop_assert_eq!(run(&src, true), run(&src, false), "{:?}", src);
                Ok(())
            })
            .unwrap();
        for n in [127, 128, 129] {
            let src = format!("SELECT {} , 1{}", "x".repeat(n), "2".repeat(n));
            assert_eq!(run(&src, true), run(&src, false));
        }
    }

    #[test]
    fn unicode_whitespace_is_skipped() {
        assert_eq!(texts("a\u{a0}b"), vec!["a", "b", ""]);
        assert_eq!(texts("\u{feff}SELECT 1"), vec!["SELECT", "1", ""]);
    }
}
