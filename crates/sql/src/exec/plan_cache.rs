//! Simple parameterization, as SQL Server calls it: a batch that is one simple SELECT
//! (columns of one table, filtered by comparisons of columns with literals joined by
//! AND, like `SELECT val FROM t WHERE id = 12345`) is planned once per shape. The
//! literals become parameters `@1`, `@2`, ...: the batch's template is the text with
//! each literal replaced by its parameter, and the template is parsed and bound once,
//! with the parameters as variables of the literals' types. A later batch with the same
//! template, parameter types and current database runs the kept plan with its own
//! literal values, without being parsed (only lexed) or bound.
//!
//! Why this is the same as binding the literal: the shape only lets a literal be one
//! side of a comparison with a column, and a comparison is typed from the types of its
//! sides (a parameter has its literal's type) and compared at run time; an index seek
//! takes its bounds from any expression that does not read the row. Nothing in the
//! shape folds or inspects a literal's value while binding.
//!
//! A kept plan is for one catalog version of the table's database (any DDL, GRANT or
//! REVOKE bumps it), and the table's SELECT permission is checked at every run, as the
//! binder checks it. Literals whose text spans lines are not parameterized, so error
//! line numbers stay those of the original text.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use types::{SqlType, Value};

use super::plan::Plan;
use super::session::ResolvedTable;
use crate::ast::{Batch, Literal};
use crate::host::DbId;
use crate::lexer::{Token, TokenKind};
use crate::results::ColumnInfo;

/// Shapes kept per session; past this an arbitrary one makes room.
const MAX_ENTRIES: usize = 64;
/// Longer batches are not looked at.
const MAX_TEXT: usize = 4 * 1024;

/// What a kept plan is for: the template text, the parameters' types and the current
/// database (which unqualified names resolve in).
#[derive(Debug, PartialEq, Eq, Hash, Clone)]
pub struct PlanKey {
    template: String,
    types: Vec<SqlType>,
    database: DbId,
}

impl PlanKey {
    pub fn template(&self) -> &str {
        &self.template
    }

    pub fn database(&self) -> DbId {
        self.database
    }
}

/// A batch text seen as a template, and its parameter values (in order: `@1` first).
#[derive(Debug)]
pub struct Parameterized {
    pub key: PlanKey,
    pub values: Vec<(Value, SqlType)>,
}

/// A plan with the result set's column descriptions (computed once).
#[derive(Debug, Clone)]
pub struct KeptPlan {
    pub plan: Arc<Plan>,
    pub columns: Arc<[ColumnInfo]>,
}

/// A kept plan.
#[derive(Debug)]
pub struct Entry {
    /// The template, parsed: one SELECT statement whose literals are `@1`, `@2`, ...
    pub batch: Arc<Batch>,
    pub plan: KeptPlan,
    /// The table the plan reads, and the catalog version of its database the plan was
    /// bound at.
    pub table: Arc<ResolvedTable>,
    pub version: u64,
}

#[derive(Debug, Default)]
pub struct PlanCache {
    map: HashMap<PlanKey, Arc<Entry>, BuildHasherDefault<KeyHasher>>,
}

/// A multiply-rotate hash over the key's bytes, eight at a time: a lookup hashes the
/// template text on every batch, and the default SipHash cost more than the rest of the
/// lookup. The keys are the session's own texts, so there is nobody to collide them on
/// purpose.
#[derive(Default)]
struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(last) ^ (bytes.len() as u64) << 56);
    }
}

impl PlanCache {
    pub fn get(&self, key: &PlanKey) -> Option<Arc<Entry>> {
        self.map.get(key).cloned()
    }

    pub fn insert(&mut self, key: PlanKey, entry: Entry) {
        if self.map.len() >= MAX_ENTRIES && !self.map.contains_key(&key) {
            if let Some(k) = self.map.keys().next().cloned() {
                self.map.remove(&k);
            }
        }
        self.map.insert(key, Arc::new(entry));
    }

    pub fn remove(&mut self, key: &PlanKey) {
        self.map.remove(key);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The template and parameters of `text` when it is one simple SELECT with at least one
/// literal to parameterize (see the module doc), run in database `database`.
pub fn parameterize(text: &str, database: DbId) -> Option<Parameterized> {
    if text.len() > MAX_TEXT || !may_start_with_select(text) {
        return None;
    }
    let literals = crate::parser::with_lexed(text, |toks| simple_select_literals(text, toks)).ok()??;
    if literals.is_empty() {
        return None;
    }
    let mut template = String::with_capacity(text.len() + 4 * literals.len());
    let mut values = Vec::with_capacity(literals.len());
    let mut types = Vec::with_capacity(literals.len());
    let mut at = 0;
    for (i, (range, lit)) in literals.into_iter().enumerate() {
        let (v, ty) = super::query::literal_type_value(&lit).ok()?;
        template.push_str(&text[at..range.start]);
        // A parameter is a variable name: keep it from running into a word before or
        // after (`WHERE'a'` would become `WHERE@1`, one word).
        if text[..range.start].chars().next_back().is_some_and(is_word_char) {
            template.push(' ');
        }
        template.push('@');
        template.push_str(itoa(i + 1, &mut [0u8; 20]));
        if text[range.end..].chars().next().is_some_and(is_word_char) {
            template.push(' ');
        }
        at = range.end;
        values.push((v, ty));
        types.push(ty);
    }
    template.push_str(&text[at..]);
    Some(Parameterized { key: PlanKey { template, types, database }, values })
}

/// Whether `text` may begin with the SELECT keyword: false when its first word is
/// plainly another one, so that batches of other statements (a transaction's BEGIN TRAN,
/// INSERT, COMMIT) are not lexed twice, once here and once to run them. Text starting
/// with a comment or anything but a letter is left to the lexer.
fn may_start_with_select(text: &str) -> bool {
    let t = text.trim_start().as_bytes();
    match t.first() {
        Some(c) if c.is_ascii_alphabetic() => {
            t.len() >= 6
                && t[..6].eq_ignore_ascii_case(b"select")
                && !t.get(6).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
        }
        _ => true,
    }
}

/// The name of parameter `i` (0-based): `@1`, `@2`, ...
pub fn param_name(i: usize) -> String {
    let mut name = String::with_capacity(4);
    name.push('@');
    name.push_str(itoa(i + 1, &mut [0u8; 20]));
    name
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')
}

/// `n` in decimal, in `buf`.
fn itoa(mut n: usize, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

/// The literals (byte range, value) of a batch of the form
/// `SELECT item, ... FROM name WHERE cond AND cond ... [;]` where an item is `*` or a
/// (dotted) column name, the table name is dotted names, and a condition is a dotted
/// column name compared with an integer, decimal or string literal (either way round);
/// None for any other batch.
fn simple_select_literals(text: &str, toks: &[Token]) -> Option<Vec<(std::ops::Range<usize>, Literal)>> {
    let mut c = Cursor { text, toks, pos: 0 };
    c.keyword("SELECT")?;
    loop {
        if !c.eat(|k| matches!(k, TokenKind::Star)) {
            c.dotted_name(true)?;
        }
        if !c.eat(|k| matches!(k, TokenKind::Comma)) {
            break;
        }
    }
    c.keyword("FROM")?;
    c.dotted_name(false)?;
    let mut literals = Vec::with_capacity(4);
    if c.keyword("WHERE").is_some() {
        loop {
            if let Some(l) = c.literal() {
                c.comparison()?;
                c.dotted_name(false)?;
                literals.push(l);
            } else {
                c.dotted_name(false)?;
                c.comparison()?;
                literals.push(c.literal()?);
            }
            if c.keyword("AND").is_none() {
                break;
            }
        }
    }
    while c.eat(|k| matches!(k, TokenKind::Semicolon)) {}
    matches!(c.toks.get(c.pos)?.kind, TokenKind::Eof).then_some(literals)
}

struct Cursor<'a> {
    text: &'a str,
    toks: &'a [Token],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, f: impl Fn(&TokenKind) -> bool) -> bool {
        if self.peek().is_some_and(|t| f(&t.kind)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn keyword(&mut self, kw: &str) -> Option<()> {
        let t = self.peek()?;
        (matches!(t.kind, TokenKind::Keyword) && t.text(self.text).eq_ignore_ascii_case(kw)).then(|| self.pos += 1)
    }

    /// `a`, `a.b`, ... of non-reserved words and delimited identifiers; with `star`, a
    /// last `.*` too.
    fn dotted_name(&mut self, star: bool) -> Option<()> {
        loop {
            if !self.eat(|k| matches!(k, TokenKind::Word | TokenKind::QuotedIdent { .. })) {
                return None;
            }
            if !self.eat(|k| matches!(k, TokenKind::Dot)) {
                return Some(());
            }
            if star && self.eat(|k| matches!(k, TokenKind::Star)) {
                return Some(());
            }
        }
    }

    fn comparison(&mut self) -> Option<()> {
        self.eat(|k| {
            matches!(
                k,
                TokenKind::Eq
                    | TokenKind::LtGt
                    | TokenKind::BangEq
                    | TokenKind::Lt
                    | TokenKind::Gt
                    | TokenKind::LtEq
                    | TokenKind::GtEq
            )
        })
        .then_some(())
    }

    /// An integer, decimal or string literal on one line.
    fn literal(&mut self) -> Option<(std::ops::Range<usize>, Literal)> {
        let toks = self.toks;
        let t = toks.get(self.pos)?;
        let text = t.text(self.text);
        if text.contains('\n') {
            return None;
        }
        let lit = match &t.kind {
            TokenKind::Integer => Literal::Integer(text.to_string()),
            TokenKind::Decimal => Literal::Decimal(text.to_string()),
            TokenKind::String { value, unicode } => Literal::String { value: value.clone(), unicode: *unicode },
            _ => return None,
        };
        self.pos += 1;
        Some((t.span.range(), lit))
    }
}

/// Kept plans reused or bound for the batch's one query (see `batch::exec_query`).
#[derive(Debug)]
pub struct PlanSlot {
    /// The query, by address in the template batch.
    pub query: *const crate::ast::Query,
    /// A kept plan to run instead of binding, and its table (for the permission check).
    pub reuse: Option<(KeptPlan, Arc<ResolvedTable>)>,
    /// The plan bound for the query, for the cache to keep.
    pub captured: Option<KeptPlan>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> Option<(String, Vec<SqlType>)> {
        parameterize(text, 5).map(|p| (p.key.template().to_string(), p.key.types.clone()))
    }

    #[test]
    fn only_text_that_may_start_with_select_is_lexed() {
        for t in ["SELECT 1", "  select\tx", "\r\nSeLeCt(1)", "-- c\nSELECT 1", "/* c */ SELECT 1", "(SELECT 1)", ""] {
            assert!(may_start_with_select(t), "{t:?}");
        }
        for t in [
            "BEGIN TRAN; SELECT 1",
            "INSERT t VALUES (1)",
            "selector",
            "SELECT_1",
            "sel",
            "WITH a AS (SELECT 1) SELECT 1",
        ] {
            assert!(!may_start_with_select(t), "{t:?}");
        }
        assert!(template("-- why\nSELECT val FROM t WHERE id = 1").is_some());
    }

    #[test]
    fn simple_selects_become_templates() {
        let (t, ty) = template("SELECT val FROM t WHERE id = 12345").unwrap();
        assert_eq!(t, "SELECT val FROM t WHERE id = @1");
        assert_eq!(ty, vec![SqlType::Int]);
        let a = parameterize("SELECT val FROM t WHERE id = 1", 5).unwrap();
        let b = parameterize("SELECT val FROM t WHERE id = 99", 5).unwrap();
        assert_eq!(a.key, b.key);
        assert_eq!(b.values[0].0, Value::Int(99));
        // A different type, database or text is another key.
        assert_ne!(a.key, parameterize("SELECT val FROM t WHERE id = 99999999999", 5).unwrap().key);
        assert_ne!(a.key, parameterize("SELECT val FROM t WHERE id = 1", 6).unwrap().key);
        assert_ne!(a.key, parameterize("select val FROM t WHERE id = 1", 5).unwrap().key);
        let (t, ty) = template("select a, t.b, t.* ,* from [d].dbo.t where 'x'=a and b<>N'y' AND c >= 1.50;").unwrap();
        assert_eq!(t, "select a, t.b, t.* ,* from [d].dbo.t where @1=a and b<>@2 AND c >= @3;");
        assert_eq!(
            ty,
            vec![
                SqlType::VarChar { len: types::Length::Bounded(1) },
                SqlType::NVarChar { len: types::Length::Bounded(1) },
                SqlType::Decimal { precision: 3, scale: 2 }
            ]
        );
        // Parameters never run into a neighbouring word.
        assert_eq!(template("SELECT a FROM t WHERE'x'=a").unwrap().0, "SELECT a FROM t WHERE @1=a");
        assert_eq!(template("SELECT a FROM t WHERE a=1AND b=2").unwrap().0, "SELECT a FROM t WHERE a=@1 AND b=@2");
    }

    #[test]
    fn other_batches_are_not_parameterized() {
        for text in [
            "SELECT val FROM t",
            "SELECT val FROM t WHERE id = @v",
            "SELECT val FROM t WHERE id = -1",
            "SELECT val FROM t WHERE id = 1 OR id = 2",
            "SELECT val + 1 FROM t WHERE id = 1",
            "SELECT TOP 1 val FROM t WHERE id = 1",
            "SELECT val FROM t WHERE id = 1 ORDER BY val",
            "SELECT val FROM t WITH (NOLOCK) WHERE id = 1",
            "SELECT val FROM t a WHERE a.id = 1",
            "SELECT val INTO x FROM t WHERE id = 1",
            "SELECT val FROM t WHERE id = 1; SELECT 2",
            "SELECT val FROM t WHERE id = 0x01",
            "SELECT val FROM t WHERE id = NULL",
            "SELECT val FROM t WHERE id = 1e5",
            "SELECT val FROM t WHERE name = 'two\nlines'",
            "SELECT val FROM t WHERE id = 1 +",
            "SELECT val FROM t WHERE id = 'unclosed",
        ] {
            assert!(parameterize(text, 1).is_none(), "{text}");
        }
    }
}
