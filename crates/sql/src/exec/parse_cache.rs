//! The session's parse cache: a batch text the session sends again (a stress tool's
//! batch, an application's fixed statements, a driver's connection SET batch) is lexed
//! and parsed once. SQL Server's plan cache plays this part for ad-hoc batches. Parsing
//! is a pure function of the text (no SET option changes how a batch lexes or parses),
//! so the text alone is the key; a text that fails to parse is not kept.
//!
//! Batches of INSERT ... VALUES statements (a loading script, a thousand to a batch,
//! each statement with other literals) are kept by *shape* too, as SQL Server's simple
//! parameterization keeps `INSERT ... VALUES (@1, @2)` for each such statement: a batch
//! whose statements are only INSERT ... VALUES of literals (no OUTPUT, TOP or WITH) and
//! transaction statements or SET options is kept with the byte ranges of its VALUES
//! literals (its slots). A later batch matches the shape when its text is the kept
//! text with another literal token in each slot: the text between the slots is compared
//! byte for byte, and each slot is lexed as one token (a literal or NULL, on one line).
//! Such a batch parses to the kept batch but for those literals, since the lexer reads a
//! token from its own bytes alone and a VALUES item that is one literal token parses the
//! same whatever literal it is; so it runs the kept batch, and the INSERT statements
//! take their values from the new batch's tokens ([`Literals`]) instead of the kept
//! literals. Statement lines are those of the kept batch, which are the same (no slot
//! spans lines); byte offsets in the kept statements' spans are not (nothing those
//! statements run reads them).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use crate::ast::{Batch, DmlTarget, ExprKind, Insert, InsertSource, Literal, StatementKind};
use crate::lexer::{simple_literal_at, token_at, SimpleLiteral, Token, TokenKind};

/// Batches kept per session; past this an arbitrary one makes room.
const MAX_ENTRIES: usize = 64;
/// Longer texts (scripts, procedure definitions) are parsed every time: they are
/// rarely repeated and would hold the most memory.
const MAX_TEXT: usize = 8 * 1024;

/// Shapes kept per session, newest first.
const MAX_SHAPES: usize = 4;
/// Longer batches are not kept by shape (the shape holds a copy of the text).
const MAX_SHAPE_TEXT: usize = 1 << 20;

#[derive(Debug, Default)]
pub struct ParseCache {
    map: HashMap<Box<str>, Arc<Batch>>,
    shapes: Vec<Shape>,
    /// The lexer's buffer for one token, and the last [`Literals`]' buffers, reused.
    scratch: Vec<Token>,
    spare: (Vec<Lit>, Vec<Token>),
}

/// A batch kept by shape (see the module doc).
#[derive(Debug)]
struct Shape {
    text: Box<str>,
    batch: Arc<Batch>,
    /// Byte ranges in `text` of the literals of its INSERT statements, in order.
    slots: Vec<Range<u32>>,
    inserts: Arc<[InsertSlots]>,
}

/// An INSERT statement of a kept batch (by address: the kept batch is not moved while it
/// runs) and the range of its literals among the batch's.
#[derive(Debug, Clone, Copy)]
struct InsertSlots {
    stmt: usize,
    slots: (u32, u32),
}

/// A slot's literal in a batch matched by shape: where it is in the batch's text, and
/// what it is. Digits and plain strings (most of a loading script's literals) are read
/// from the text when their statement runs; other literals are lexed into `tokens`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lit {
    start: u32,
    end: u32,
    kind: LitKind,
}

#[derive(Debug, Clone, Copy)]
enum LitKind {
    /// `lexer::SimpleLiteral::Integer`.
    Integer,
    /// `lexer::SimpleLiteral::String` (its token's span: the quotes included).
    String,
    /// This token of [`Literals::tokens`].
    Token(u32),
}

/// The literals of a batch matched by shape, in place of the kept batch's: the INSERT
/// statements of the kept batch take their VALUES from here.
#[derive(Debug)]
pub struct Literals {
    /// One literal per slot, spans in the new batch's text.
    lits: Vec<Lit>,
    tokens: Vec<Token>,
    inserts: Arc<[InsertSlots]>,
    /// The next INSERT statement to run (statements run in order; one that fails before
    /// it reaches its VALUES is passed over).
    next: usize,
}

impl Literals {
    /// Where the literals of `ins` are, when it is a statement of the kept batch.
    pub fn find(&mut self, ins: &Insert) -> Option<Range<usize>> {
        let addr = ins as *const Insert as usize;
        let k = self.inserts[self.next.min(self.inserts.len())..].iter().position(|i| i.stmt == addr)? + self.next;
        self.next = k + 1;
        let (a, b) = self.inserts[k].slots;
        Some(a as usize..b as usize)
    }

    /// The value and type of literal `i` (see [`Literals::find`]), as the literal
    /// written there gives them (`query::literal_type_value`); its string or bytes are
    /// taken, so each literal is read once. `text` is the batch's text.
    pub fn value(&mut self, i: usize, text: &str) -> Result<(Value, SqlType), SqlError> {
        let null = || Ok((Value::Null, SqlType::Int));
        let Some(&Lit { start, end, kind }) = self.lits.get(i) else {
            return null();
        };
        let Some(lit) = text.get(start as usize..end as usize) else {
            return null();
        };
        match kind {
            LitKind::Integer => super::query::integer_literal(lit),
            LitKind::String => Ok(super::query::string_literal(lit[1..lit.len() - 1].to_owned(), false)),
            LitKind::Token(k) => {
                let Some(t) = self.tokens.get_mut(k as usize) else {
                    return null();
                };
                let kind = std::mem::replace(&mut t.kind, TokenKind::Eof);
                super::query::token_type_value(kind, lit).unwrap_or_else(null)
            }
        }
    }

    /// Literal `i` as an AST literal (for the statement rewritten with its own literals).
    pub fn literal(&self, i: usize, text: &str) -> Option<Literal> {
        let lit = self.lits.get(i)?;
        match lit.kind {
            LitKind::Token(k) => crate::parser::literal_of_token(self.tokens.get(k as usize)?, text),
            LitKind::Integer | LitKind::String => {
                crate::parser::literal_of_token(&token_at(text, lit.start as usize, &mut Vec::new())?, text)
            }
        }
    }
}

impl ParseCache {
    /// The parsed batch for `text`, from the cache or parsed now.
    pub fn parse(&mut self, text: &str) -> Result<Arc<Batch>, SqlError> {
        // A text too long to be kept is not looked up either (hashing it costs).
        if text.len() <= MAX_TEXT {
            if let Some(b) = self.map.get(text) {
                return Ok(b.clone());
            }
        }
        let batch = Arc::new(crate::parse_batch(text)?);
        if text.len() <= MAX_TEXT {
            if self.map.len() >= MAX_ENTRIES {
                if let Some(k) = self.map.keys().next().cloned() {
                    self.map.remove(&k);
                }
            }
            self.map.insert(text.into(), batch.clone());
        }
        Ok(batch)
    }

    /// [`ParseCache::parse`], also by shape (see the module doc): the batch to run and,
    /// when it is a kept batch matched by shape, the literals its INSERT statements take.
    pub fn parse_shaped(&mut self, text: &str) -> Result<(Arc<Batch>, Option<Literals>), SqlError> {
        if text.len() <= MAX_TEXT {
            if let Some(b) = self.map.get(text) {
                return Ok((b.clone(), None));
            }
        }
        let shapeable = text.len() <= MAX_SHAPE_TEXT;
        if shapeable && !self.shapes.is_empty() {
            let (mut lits, mut tokens) = std::mem::take(&mut self.spare);
            for (i, shape) in self.shapes.iter().enumerate() {
                if shape.matches(text, &mut lits, &mut tokens, &mut self.scratch) {
                    let (batch, inserts) = (shape.batch.clone(), shape.inserts.clone());
                    // The shape in use moves first.
                    self.shapes[..=i].rotate_right(1);
                    return Ok((batch, Some(Literals { lits, tokens, inserts, next: 0 })));
                }
            }
            self.spare = (lits, tokens);
        }
        let batch = self.parse(text)?;
        if shapeable {
            if let Some(shape) = Shape::of(text, &batch, &mut self.scratch) {
                self.shapes.insert(0, shape);
                self.shapes.truncate(MAX_SHAPES);
            }
        }
        Ok((batch, None))
    }

    /// Hands back the token buffer of [`Literals`] for the next match.
    pub fn recycle(&mut self, literals: Literals) {
        self.spare = (literals.lits, literals.tokens);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl Shape {
    /// The shape of `batch` (parsed from `text`) when it can be kept by shape.
    fn of(text: &str, batch: &Arc<Batch>, scratch: &mut Vec<Token>) -> Option<Shape> {
        let mut slots = Vec::new();
        let mut inserts = Vec::new();
        for stmt in &batch.statements {
            match &stmt.kind {
                StatementKind::Insert(ins) => {
                    let start = slots.len() as u32;
                    shape_slots(ins, text, scratch, &mut slots)?;
                    inserts.push(InsertSlots {
                        stmt: &**ins as *const Insert as usize,
                        slots: (start, slots.len() as u32),
                    });
                }
                StatementKind::BeginTransaction { .. }
                | StatementKind::Commit { .. }
                | StatementKind::Rollback { .. }
                | StatementKind::SaveTransaction { .. }
                | StatementKind::SetOption(_) => {}
                _ => return None,
            }
        }
        if slots.is_empty() {
            return None;
        }
        Some(Shape { text: text.into(), batch: batch.clone(), slots, inserts: inserts.into() })
    }

    /// Does `text` have this shape? Its slot literals go to `lits` and `tokens` (cleared
    /// first).
    fn matches(&self, text: &str, lits: &mut Vec<Lit>, tokens: &mut Vec<Token>, scratch: &mut Vec<Token>) -> bool {
        let (new, old) = (text.as_bytes(), self.text.as_bytes());
        lits.clear();
        tokens.clear();
        let (mut at, mut old_at) = (0usize, 0usize);
        for slot in &self.slots {
            let fixed = &old[old_at..slot.start as usize];
            if !new[at..].starts_with(fixed) {
                return false;
            }
            at += fixed.len();
            // Digits and plain strings are only delimited here (what `literal_token_at`
            // accepts of them: a string on one line).
            let (kind, end) = match simple_literal_at(new, at) {
                Some((SimpleLiteral::Integer, end)) => (LitKind::Integer, end),
                Some((SimpleLiteral::String { line_break: false }, end)) => (LitKind::String, end),
                Some((SimpleLiteral::String { line_break: true }, _)) => return false,
                None => {
                    let Some(t) = literal_token_at(text, at, scratch) else {
                        return false;
                    };
                    let end = t.span.end as usize;
                    tokens.push(t);
                    (LitKind::Token(tokens.len() as u32 - 1), end)
                }
            };
            lits.push(Lit { start: at as u32, end: end as u32, kind });
            at = end;
            old_at = slot.end as usize;
        }
        new[at..] == old[old_at..]
    }
}

/// The slots of an INSERT that can be kept by shape: each of its VALUES items a literal
/// token (DEFAULT is part of the fixed text). None for any other INSERT.
fn shape_slots(ins: &Insert, text: &str, scratch: &mut Vec<Token>, slots: &mut Vec<Range<u32>>) -> Option<()> {
    if !ins.with.is_empty() || ins.top.is_some() || !ins.output.is_empty() {
        return None;
    }
    let (DmlTarget::Table { .. }, InsertSource::Values(rows)) = (&ins.target, &ins.source) else {
        return None;
    };
    for e in rows.iter().flatten() {
        match &e.kind {
            ExprKind::Default => {}
            ExprKind::Literal(_) => {
                let t = literal_token_at(text, e.span.start as usize, scratch)?;
                if t.span.end != e.span.end {
                    return None;
                }
                slots.push(e.span.start..e.span.end);
            }
            _ => return None,
        }
    }
    Some(())
}

/// The literal token (NULL included) at byte `at` of `text`, when it is on one line.
fn literal_token_at(text: &str, at: usize, scratch: &mut Vec<Token>) -> Option<Token> {
    let t = token_at(text, at, scratch)?;
    let literal = t.kind.is_constant() || (t.kind == TokenKind::Keyword && t.text(text).eq_ignore_ascii_case("NULL"));
    // Only a string can hold a line break.
    (literal && !(matches!(t.kind, TokenKind::String { .. }) && t.text(text).contains('\n'))).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_batch_is_parsed_once_and_errors_are_not_kept() {
        let mut c = ParseCache::default();
        let a = c.parse("SELECT 1; SELECT 2").unwrap();
        let b = c.parse("SELECT 1; SELECT 2").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.statements.len(), 2);
        let e = c.parse("SELECT 1 +;").unwrap_err();
        assert_eq!(e.number, 102);
        assert!(c.parse("SELECT 1 +;").is_err());
        assert_eq!(c.len(), 1);
        for i in 0..(MAX_ENTRIES * 2) {
            c.parse(&format!("SELECT {i}")).unwrap();
        }
        assert_eq!(c.len(), MAX_ENTRIES);
        let long = format!("SELECT 1{}", " ".repeat(MAX_TEXT));
        let x = c.parse(&long).unwrap();
        let y = c.parse(&long).unwrap();
        assert!(!Arc::ptr_eq(&x, &y), "long texts are not kept");
    }

    #[test]
    fn integer_literals_are_int_then_bigint_then_numeric() {
        use crate::exec::query::integer_literal;
        for (text, want) in [
            ("0", (Value::Int(0), SqlType::Int)),
            ("000000007", (Value::Int(7), SqlType::Int)),
            ("999999999", (Value::Int(999_999_999), SqlType::Int)),
            ("2147483647", (Value::Int(i32::MAX), SqlType::Int)),
            ("2147483648", (Value::BigInt(2_147_483_648), SqlType::BigInt)),
            ("0000000000012", (Value::Int(12), SqlType::Int)),
        ] {
            assert_eq!(integer_literal(text).unwrap(), want, "{text}");
        }
        let (v, ty) = integer_literal("99999999999999999999").unwrap();
        assert_eq!(ty, SqlType::Decimal { precision: 20, scale: 0 });
        assert_eq!(v.to_string(), "99999999999999999999");
    }

    /// The literals of the INSERT statements of `batch`, in order, as values.
    fn literal_values(batch: &Batch) -> Vec<(Value, SqlType)> {
        let mut out = Vec::new();
        for stmt in &batch.statements {
            if let StatementKind::Insert(ins) = &stmt.kind {
                if let InsertSource::Values(rows) = &ins.source {
                    for e in rows.iter().flatten() {
                        if let ExprKind::Literal(l) = &e.kind {
                            out.push(crate::exec::query::literal_type_value(l).unwrap());
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn a_batch_of_a_kept_shape_runs_the_kept_batch_with_its_own_literals() {
        let kept = "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1, 'a', NULL);\n\
                    INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n";
        let mut c = ParseCache::default();
        let (first, l) = c.parse_shaped(kept).unwrap();
        assert!(l.is_none(), "the first batch is parsed");
        // The same text is kept as it is (see `parse`).
        let (again, l) = c.parse_shaped(kept).unwrap();
        assert!(l.is_none() && Arc::ptr_eq(&again, &first));
        // Each of these parses to the kept batch but for its literals.
        let same = [
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (12345678901, N'it''s', 'b');\n\
             INSERT INTO t (x, y) VALUES ($4.5, DEFAULT), (NULL, 1e-3);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (.5, '', N'');\n\
             INSERT INTO t (x, y) VALUES (0x, DEFAULT), (99999999999999999999, 'x');\nCOMMIT;\n",
        ];
        for text in same {
            let (b, l) = c.parse_shaped(text).unwrap();
            let mut l = l.unwrap_or_else(|| panic!("not matched: {text}"));
            assert!(Arc::ptr_eq(&b, &first));
            let parsed = crate::parse_batch(text).unwrap();
            let want = literal_values(&parsed);
            let got: Vec<_> = (0..want.len()).map(|i| l.value(i, text).unwrap()).collect();
            assert_eq!(got, want, "{text}");
            // The statements keep their lines.
            let lines = |b: &Batch| b.statements.iter().map(|s| s.line()).collect::<Vec<_>>();
            assert_eq!(lines(&b), lines(&parsed));
            c.recycle(l);
        }
        // None of these has the shape: each is parsed.
        let other = [
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (-1, 'a', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1 + 1, 'a', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (DEFAULT, 'a', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1, 'a\nb', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1, @a, NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1, 'a', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, 7), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1,  'a', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n",
            "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1, 'a', NULL);\n\
             INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;",
        ];
        for text in other {
            let mut fresh = ParseCache::default();
            fresh.parse_shaped(kept).unwrap();
            let (b, l) = fresh.parse_shaped(text).unwrap();
            assert!(l.is_none(), "matched: {text}");
            assert!(!Arc::ptr_eq(&b, &first));
        }
        // An unclosed string in a slot is not a literal: the batch is parsed (and fails).
        let bad = "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1, 'a, NULL);\n\
                   INSERT INTO t (x, y) VALUES (2.5, DEFAULT), (3, 0x01);\nCOMMIT;\n";
        assert_eq!(c.parse_shaped(bad).unwrap_err().number, 105);
        // Other statements than INSERT ... VALUES and transaction statements: no shape.
        let mut fresh = ParseCache::default();
        fresh.parse_shaped("INSERT INTO t VALUES (1); SELECT 1;").unwrap();
        assert!(fresh.parse_shaped("INSERT INTO t VALUES (2); SELECT 1;").unwrap().1.is_none());
    }
}
