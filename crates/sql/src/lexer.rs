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
use crate::keywords::is_reserved;
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

/// Lex a whole batch. The result always ends with one [`TokenKind::Eof`] token.
pub fn tokenize(source: &str) -> Result<Vec<Token>, SqlError> {
    // Spans are u32: a batch over 4 GB is refused rather than mis-positioned.
    if source.len() >= u32::MAX as usize {
        return Err(errors::incorrect_syntax("", 1));
    }
    let mut lx = Lexer { src: source, bytes: source.as_bytes(), pos: 0, line: 1, col: 1 };
    let mut tokens = Vec::with_capacity(source.len() / 4 + 1);
    loop {
        lx.skip_trivia()?;
        if lx.pos >= lx.bytes.len() {
            let end = lx.pos as u32;
            tokens.push(Token { kind: TokenKind::Eof, span: Span::new(end, end, lx.line, lx.col) });
            return Ok(tokens);
        }
        tokens.push(lx.next_token()?);
    }
}

/// Invariant: `pos` only ever advances by whole characters ([`Lexer::bump`]) or over
/// ASCII bytes, so every slice `src[a..b]` taken between two positions is on character
/// boundaries.
struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '#'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')
}

impl<'a> Lexer<'a> {
    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn peek_char(&self) -> Option<char> {
        self.src.get(self.pos..).and_then(|s| s.chars().next())
    }

    /// Advance over one character, keeping line and column.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn bump_while(&mut self, pred: impl Fn(char) -> bool) {
        while let Some(c) = self.peek_char() {
            if !pred(c) {
                break;
            }
            self.bump();
        }
    }

    fn skip_trivia(&mut self) -> Result<(), SqlError> {
        loop {
            match self.peek_byte(0) {
                Some(b' ' | b'\t' | b'\r' | b'\n' | 0x0B | 0x0C) => {
                    self.bump();
                }
                Some(b'-') if self.peek_byte(1) == Some(b'-') => {
                    while let Some(c) = self.peek_char() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                Some(b'/') if self.peek_byte(1) == Some(b'*') => self.skip_block_comment()?,
                _ => {
                    // Unicode spaces (no-break space and friends) are white space to SQL
                    // Server too; text pasted from web pages is full of them.
                    // A byte-order mark (scripts saved by SSMS start with one) too.
                    match self.peek_char() {
                        Some(c) if !c.is_ascii() && (c.is_whitespace() || c == '\u{feff}') => {
                            self.bump();
                        }
                        _ => return Ok(()),
                    }
                }
            }
        }
    }

    /// `/* ... */`, nesting like SQL Server's: each `/*` inside needs its own `*/`.
    fn skip_block_comment(&mut self) -> Result<(), SqlError> {
        let start_line = self.line;
        let mut depth = 0usize;
        loop {
            match (self.peek_byte(0), self.peek_byte(1)) {
                (Some(b'/'), Some(b'*')) => {
                    self.bump();
                    self.bump();
                    depth += 1;
                }
                (Some(b'*'), Some(b'/')) => {
                    self.bump();
                    self.bump();
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                (Some(_), _) => {
                    self.bump();
                }
                (None, _) => return Err(errors::missing_end_comment(start_line)),
            }
        }
    }

    fn next_token(&mut self) -> Result<Token, SqlError> {
        let start = self.pos;
        let line = self.line;
        let col = self.col;
        let kind = self.scan(line)?;
        Ok(Token { kind, span: Span::new(start as u32, self.pos as u32, line, col) })
    }

    fn scan(&mut self, line: u32) -> Result<TokenKind, SqlError> {
        use TokenKind as T;
        let Some(c) = self.peek_char() else {
            return Ok(T::Eof);
        };
        let next = self.peek_byte(1);
        match c {
            '\'' => self.string(false, line),
            'N' | 'n' if next == Some(b'\'') => {
                self.bump();
                self.string(true, line)
            }
            '[' => self.delimited(']', QuoteStyle::Bracket, line),
            '"' => self.delimited('"', QuoteStyle::Double, line),
            '@' => {
                self.bump();
                let system = self.peek_byte(0) == Some(b'@');
                if system {
                    self.bump();
                }
                let name_start = self.pos;
                self.bump_while(is_ident_char);
                let text = &self.src[name_start..self.pos];
                if text.chars().count() + 1 > errors::MAX_IDENTIFIER_LEN {
                    return Err(errors::identifier_too_long(text, line));
                }
                Ok(if system { T::SystemVariable } else { T::Variable })
            }
            '0' if matches!(next, Some(b'x' | b'X')) => {
                self.bump();
                self.bump();
                let digits_start = self.pos;
                self.bump_while(|c| c.is_ascii_hexdigit());
                Ok(T::Binary(decode_hex(&self.src[digits_start..self.pos])))
            }
            '0'..='9' => Ok(self.number()),
            '.' if next.is_some_and(|b| b.is_ascii_digit()) => Ok(self.number()),
            '$' if next.is_some_and(|b| b.is_ascii_digit() || b == b'.') => {
                self.bump();
                // `$.` alone is not a number; SQL Server reads `$` then `.`.
                if self.peek_byte(0) == Some(b'.') && !self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) {
                    return Ok(T::Unknown);
                }
                self.bump_while(|c| c.is_ascii_digit());
                if self.peek_byte(0) == Some(b'.') {
                    self.bump();
                    self.bump_while(|c| c.is_ascii_digit());
                }
                Ok(T::Money)
            }
            '$' if self.src[self.pos + 1..].chars().next().is_some_and(is_ident_start) => {
                self.bump();
                self.word(line)
            }
            c if is_ident_start(c) => self.word(line),
            _ => Ok(self.operator()),
        }
    }

    fn word(&mut self, line: u32) -> Result<TokenKind, SqlError> {
        let start = self.pos;
        if let Some(c) = self.peek_char() {
            if is_ident_start(c) || c == '$' {
                self.bump();
            }
        }
        self.bump_while(is_ident_char);
        let text = &self.src[start..self.pos];
        if text.chars().count() > errors::MAX_IDENTIFIER_LEN {
            return Err(errors::identifier_too_long(text, line));
        }
        Ok(if is_reserved(text) { TokenKind::Keyword } else { TokenKind::Word })
    }

    /// `'...'` with `''` as an escaped quote. The opening quote is at `pos` (after any N).
    fn string(&mut self, unicode: bool, line: u32) -> Result<TokenKind, SqlError> {
        self.bump(); // opening quote
        let body_start = self.pos;
        let mut value = String::new();
        let mut chunk_start = self.pos;
        loop {
            match self.peek_char() {
                None => return Err(errors::unclosed_quote(&self.src[body_start..], line)),
                Some('\'') => {
                    value.push_str(&self.src[chunk_start..self.pos]);
                    self.bump();
                    if self.peek_byte(0) == Some(b'\'') {
                        self.bump();
                        value.push('\'');
                        chunk_start = self.pos;
                    } else {
                        return Ok(TokenKind::String { value, unicode });
                    }
                }
                Some(_) => {
                    self.bump();
                }
            }
        }
    }

    /// `[...]` with `]]`, or `"..."` with `""`.
    fn delimited(&mut self, close: char, style: QuoteStyle, line: u32) -> Result<TokenKind, SqlError> {
        self.bump(); // opening delimiter
        let body_start = self.pos;
        let mut value = String::new();
        let mut chunk_start = self.pos;
        loop {
            match self.peek_char() {
                None => return Err(errors::unclosed_quote(&self.src[body_start..], line)),
                Some(c) if c == close => {
                    value.push_str(&self.src[chunk_start..self.pos]);
                    self.bump();
                    if self.peek_char() == Some(close) {
                        self.bump();
                        value.push(close);
                        chunk_start = self.pos;
                    } else {
                        if value.is_empty() {
                            return Err(errors::empty_identifier(line));
                        }
                        if value.chars().count() > errors::MAX_IDENTIFIER_LEN {
                            return Err(errors::identifier_too_long(&value, line));
                        }
                        return Ok(TokenKind::QuotedIdent { value, style });
                    }
                }
                Some(_) => {
                    self.bump();
                }
            }
        }
    }

    /// Integer, decimal or float. SQL Server accepts an exponent marker without digits
    /// (`1e` is the float 1), so this does too.
    fn number(&mut self) -> TokenKind {
        self.bump_while(|c| c.is_ascii_digit());
        let mut kind = TokenKind::Integer;
        if self.peek_byte(0) == Some(b'.') {
            self.bump();
            self.bump_while(|c| c.is_ascii_digit());
            kind = TokenKind::Decimal;
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek_byte(0), Some(b'+' | b'-')) && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) {
                self.bump();
            }
            self.bump_while(|c| c.is_ascii_digit());
            kind = TokenKind::Float;
        }
        kind
    }

    fn operator(&mut self) -> TokenKind {
        use TokenKind as T;
        let two = |lx: &mut Lexer, kind: TokenKind| {
            lx.bump();
            lx.bump();
            kind
        };
        let next = self.peek_byte(1);
        let Some(c) = self.peek_char() else {
            return T::Eof;
        };
        match (c, next) {
            ('<', Some(b'>')) => two(self, T::LtGt),
            ('<', Some(b'=')) => two(self, T::LtEq),
            ('>', Some(b'=')) => two(self, T::GtEq),
            ('!', Some(b'=')) => two(self, T::BangEq),
            ('!', Some(b'<')) => two(self, T::NotLt),
            ('!', Some(b'>')) => two(self, T::NotGt),
            ('+', Some(b'=')) => two(self, T::PlusEq),
            ('-', Some(b'=')) => two(self, T::MinusEq),
            ('*', Some(b'=')) => two(self, T::StarEq),
            ('/', Some(b'=')) => two(self, T::SlashEq),
            ('%', Some(b'=')) => two(self, T::PercentEq),
            ('&', Some(b'=')) => two(self, T::AmpEq),
            ('|', Some(b'=')) => two(self, T::PipeEq),
            ('^', Some(b'=')) => two(self, T::CaretEq),
            (':', Some(b':')) => two(self, T::DoubleColon),
            _ => {
                self.bump();
                match c {
                    '+' => T::Plus,
                    '-' => T::Minus,
                    '*' => T::Star,
                    '/' => T::Slash,
                    '%' => T::Percent,
                    '=' => T::Eq,
                    '<' => T::Lt,
                    '>' => T::Gt,
                    '&' => T::Amp,
                    '|' => T::Pipe,
                    '^' => T::Caret,
                    '~' => T::Tilde,
                    ':' => T::Colon,
                    '.' => T::Dot,
                    ',' => T::Comma,
                    ';' => T::Semicolon,
                    '(' => T::LParen,
                    ')' => T::RParen,
                    _ => T::Unknown,
                }
            }
        }
    }
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

    #[test]
    fn unicode_whitespace_is_skipped() {
        assert_eq!(texts("a\u{a0}b"), vec!["a", "b", ""]);
        assert_eq!(texts("\u{feff}SELECT 1"), vec!["SELECT", "1", ""]);
    }
}
