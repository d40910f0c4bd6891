//! The recursive-descent T-SQL parser.
//!
//! Modules: this one holds the token cursor, error reporting, nesting limits and the
//! statement dispatcher; `expr` parses expressions by precedence climbing and data
//! types; `query` SELECT and table sources; `dml` INSERT/UPDATE/DELETE; `control`
//! variables, SET, control flow, EXEC and transactions; `ddl` CREATE/ALTER/DROP; `admin`
//! DBCC, BACKUP/RESTORE, Extended Events sessions, logins, permissions and the generic
//! option lists.
//!
//! Statement boundaries follow T-SQL: `;` is optional and statements may follow each
//! other on one line; a statement ends where its grammar ends. As in SQL Server, that
//! makes THROW and WITH (CTE) need a `;` before them when they follow another statement,
//! and a procedure body run to the end of the batch.
//!
//! Errors: the first token that does not fit gives Msg 102 "Incorrect syntax near 'x'."
//! (Msg 156 "... near the keyword 'X'." for a reserved keyword), with that token's line.
//! When the input ends early the last token is named, as SQL Server does. Nesting
//! (parentheses, subqueries, unary operators, blocks) and operator chains are bounded so
//! that no input can exhaust the stack: past the limit the error is Msg 191.

mod admin;
mod control;
mod ddl;
mod dml;
mod expr;
mod query;

pub(crate) use dml::literal_of_token;

use types::SqlError;

use crate::ast::*;
use crate::errors;
use crate::lexer::{tokenize_into, Token, TokenKind};

pub(crate) type PResult<T> = Result<T, SqlError>;

/// The depth budget. Each level of real nesting (a parenthesis, subquery, function call,
/// unary operator, nested block) costs [`NEST_COST`]; each link of a left-deep operator
/// chain (`a + b + c ...`, `x OR y OR ...`, `UNION ALL` lists) costs 1. So about 128
/// nested levels (a subquery or CASE uses two) or about 2000 chained operators fit. This
/// bounds the parser's recursion and the depth of the trees later passes (printer,
/// binder, Drop) recurse over: parsing any input at the limit needs well under 1 MiB of
/// stack (tests/robustness.rs checks this on a 1 MiB thread). SQL Server's own limits are
/// lower for subqueries (32) and CASE (10).
pub const MAX_DEPTH: u32 = 2048;
/// The cost of one level of recursive nesting (see [`MAX_DEPTH`]).
pub const NEST_COST: u32 = 16;

/// Parse one batch.
pub fn parse_batch(source: &str) -> Result<Batch, SqlError> {
    with_tokens(source, |p| p.batch())
}

/// Parse a single expression (the whole input must be the expression).
pub fn parse_expression(source: &str) -> Result<Expr, SqlError> {
    with_tokens(source, |p| {
        let e = p.parse_expr()?;
        if !p.at_eof() {
            return Err(p.error());
        }
        Ok(e)
    })
}

/// Parses a whole text as one multipart object name (`..t`, `db.dbo.t`).
pub fn parse_object_name_text(source: &str) -> Result<ObjectName, SqlError> {
    with_tokens(source, |p| {
        let n = p.parse_object_name()?;
        if !p.at_eof() {
            return Err(p.error());
        }
        Ok(n)
    })
}

/// Parse a data type written as text (`'decimal(18,2)'` in xml's value() method).
pub fn parse_data_type_text(source: &str) -> Result<DataType, SqlError> {
    with_tokens(source, |p| {
        let t = p.parse_data_type()?;
        if !p.at_eof() {
            return Err(p.error());
        }
        Ok(t)
    })
}

thread_local! {
    /// The token buffer of the thread's last parse, kept for the next one (see
    /// [`crate::lexer::tokenize_into`]).
    static TOKENS: std::cell::Cell<Vec<Token>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Lex `source` (in the thread's token buffer) and give `f` the tokens.
pub(crate) fn with_lexed<T>(source: &str, f: impl FnOnce(&[Token]) -> T) -> Result<T, SqlError> {
    with_tokens(source, |p| Ok(f(&p.toks)))
}

/// The most statements [`Parser::batch`] reserves room for up front.
const MAX_STATEMENTS_GUESS: usize = 4096;

/// A token buffer larger than this (bytes) is not kept after a parse.
const MAX_KEPT_TOKENS_BYTES: usize = 4 << 20;

/// Lex `source` into the thread's token buffer and run `f` over it.
fn with_tokens<T>(source: &str, f: impl FnOnce(&mut Parser) -> PResult<T>) -> PResult<T> {
    let mut tokens = TOKENS.take();
    let r = match tokenize_into(source, &mut tokens) {
        Ok(()) => {
            let mut p = Parser::new(source, tokens);
            let r = f(&mut p);
            tokens = p.toks;
            r
        }
        Err(e) => Err(e),
    };
    if tokens.capacity() * std::mem::size_of::<Token>() <= MAX_KEPT_TOKENS_BYTES {
        tokens.clear();
        TOKENS.set(tokens);
    }
    r
}

/// The cursor over a batch's tokens. Invariant: `toks` is what [`tokenize`] returns, so
/// it is never empty and ends with the Eof token; `pos` never moves past that token. The
/// indexing below relies on this.
pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    /// Current depth (see [`MAX_DEPTH`]).
    depth: u32,
    /// How many top-level statements came before the current one.
    top_index: usize,
    /// How deep inside other statements (blocks, IF, WHILE, TRY) we are.
    stmt_nesting: u32,
    /// Whether INSERT ... VALUES of literals may take the direct path (tests compare it
    /// with the general one).
    pub(crate) simple_inserts: bool,
}

/// Words that begin a statement; an unmodelled statement (`Other`) ends before one of
/// them at parenthesis depth 0, or at `;`.
const STATEMENT_STARTERS: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "CREATE",
    "ALTER",
    "DROP",
    "DECLARE",
    "IF",
    "WHILE",
    "BEGIN",
    "END",
    "EXEC",
    "EXECUTE",
    "PRINT",
    "RETURN",
    "USE",
    "TRUNCATE",
    "DBCC",
    "BACKUP",
    "RESTORE",
    "COMMIT",
    "ROLLBACK",
    "SAVE",
    "CHECKPOINT",
    "WAITFOR",
    "RAISERROR",
    "GOTO",
    "BREAK",
    "CONTINUE",
    "OPEN",
    "FETCH",
    "CLOSE",
    "DEALLOCATE",
    "KILL",
    "GRANT",
    "DENY",
    "REVOKE",
];

/// How an unmodelled statement's extent is found.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capture {
    /// To the end of the batch (CREATE TRIGGER: the body is the rest of the batch).
    ToEndOfBatch,
    /// To `;` or the next statement-starting keyword at parenthesis depth 0.
    Heuristic,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, toks: Vec<Token>) -> Parser<'a> {
        Parser { src, toks, pos: 0, depth: 0, top_index: 0, stmt_nesting: 0, simple_inserts: true }
    }

    // -----------------------------------------------------------------------------------
    // Cursor
    // -----------------------------------------------------------------------------------

    pub(crate) fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    /// The token `n` ahead (the Eof token past the end).
    pub(crate) fn peek_at(&self, n: usize) -> &Token {
        let idx = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[idx]
    }

    pub(crate) fn kind(&self) -> &TokenKind {
        &self.peek().kind
    }

    pub(crate) fn kind_at(&self, n: usize) -> &TokenKind {
        &self.peek_at(n).kind
    }

    pub(crate) fn advance(&mut self) {
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
    }

    pub(crate) fn at_eof(&self) -> bool {
        matches!(self.kind(), TokenKind::Eof)
    }

    pub(crate) fn text_of(&self, tok: &Token) -> &'a str {
        tok.span.text(self.src)
    }

    pub(crate) fn text(&self) -> &'a str {
        self.text_of(self.peek())
    }

    /// Is the current token of this kind? (Compares the variant only.)
    pub(crate) fn is(&self, kind: &TokenKind) -> bool {
        std::mem::discriminant(self.kind()) == std::mem::discriminant(kind)
    }

    pub(crate) fn is_at(&self, n: usize, kind: &TokenKind) -> bool {
        std::mem::discriminant(self.kind_at(n)) == std::mem::discriminant(kind)
    }

    pub(crate) fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.is(kind) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, kind: &TokenKind) -> PResult<()> {
        if self.eat(kind) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Is the token `n` ahead the word `kw` (reserved or not, any case, undelimited)?
    pub(crate) fn is_word_at(&self, n: usize, kw: &str) -> bool {
        let tok = self.peek_at(n);
        matches!(tok.kind, TokenKind::Word | TokenKind::Keyword) && self.text_of(tok).eq_ignore_ascii_case(kw)
    }

    pub(crate) fn is_word(&self, kw: &str) -> bool {
        self.is_word_at(0, kw)
    }

    /// The text of the undelimited word `n` ahead, if it is one.
    pub(crate) fn ident_at(&self, n: usize) -> Option<&str> {
        let tok = self.peek_at(n);
        matches!(tok.kind, TokenKind::Word).then(|| self.text_of(tok))
    }

    pub(crate) fn is_any_word(&self, kws: &[&str]) -> bool {
        kws.iter().any(|k| self.is_word(k))
    }

    /// An optional `NULL` / `NOT NULL`: Some(true), Some(false), or None when neither.
    pub(crate) fn parse_nullability(&mut self) -> Option<bool> {
        if self.eat_word("NULL") {
            Some(true)
        } else if self.is_word("NOT") && self.is_word_at(1, "NULL") {
            self.advance();
            self.advance();
            Some(false)
        } else {
            None
        }
    }

    pub(crate) fn eat_word(&mut self, kw: &str) -> bool {
        if self.is_word(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_word(&mut self, kw: &str) -> PResult<()> {
        if self.eat_word(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Is the current token an undelimited word (reserved or not)?
    pub(crate) fn is_bare_word(&self) -> bool {
        matches!(self.kind(), TokenKind::Word | TokenKind::Keyword)
    }

    /// The current word upper-cased, consuming it (any undelimited word).
    pub(crate) fn take_word_upper(&mut self) -> PResult<String> {
        if !self.is_bare_word() {
            return Err(self.error());
        }
        let w = self.text().to_ascii_uppercase();
        self.advance();
        Ok(w)
    }

    /// End offset of the last consumed token.
    pub(crate) fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            self.toks[0].span.start
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    /// The span from token `start` to the last consumed token.
    pub(crate) fn span_from(&self, start: usize) -> Span {
        let first = self.toks[start.min(self.toks.len() - 1)].span;
        Span::new(first.start, self.prev_end().max(first.start), first.line, first.column)
    }

    // -----------------------------------------------------------------------------------
    // Errors and limits
    // -----------------------------------------------------------------------------------

    /// Msg 102/156 at the current token (or the last token, at the end of input).
    pub(crate) fn error(&self) -> SqlError {
        self.error_at(self.pos)
    }

    pub(crate) fn error_at(&self, idx: usize) -> SqlError {
        let mut idx = idx.min(self.toks.len() - 1);
        if matches!(self.toks[idx].kind, TokenKind::Eof) && idx > 0 {
            idx -= 1;
        }
        let tok = &self.toks[idx];
        let line = tok.span.line;
        match &tok.kind {
            TokenKind::Keyword => errors::incorrect_syntax_keyword(self.text_of(tok), line),
            TokenKind::String { value, .. } => errors::incorrect_syntax(value, line),
            TokenKind::QuotedIdent { value, .. } => errors::incorrect_syntax(value, line),
            _ => errors::incorrect_syntax(self.text_of(tok), line),
        }
    }

    /// Run `f` one nesting level deeper; Msg 191 past the limit.
    #[inline]
    pub(crate) fn nest<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.depth += NEST_COST;
        if self.depth > MAX_DEPTH {
            return Err(errors::nested_too_deeply(self.peek().span.line));
        }
        let r = f(self);
        self.depth -= NEST_COST;
        r
    }

    /// Account for one more link of a left-deep chain (see [`MAX_DEPTH`]); the caller
    /// gives the links back with [`Parser::release`] when the chain ends.
    pub(crate) fn chain_link(&mut self) -> PResult<()> {
        self.add_depth(1)
    }

    /// Add `n` to the depth (the caller gives it back with [`Parser::release`]).
    pub(crate) fn add_depth(&mut self, n: u32) -> PResult<()> {
        self.depth += n;
        if self.depth > MAX_DEPTH {
            return Err(errors::nested_too_deeply(self.peek().span.line));
        }
        Ok(())
    }

    pub(crate) fn release(&mut self, links: u32) {
        self.depth -= links;
    }

    // -----------------------------------------------------------------------------------
    // Names
    // -----------------------------------------------------------------------------------

    /// A non-reserved word or a delimited identifier.
    pub(crate) fn is_ident(&self) -> bool {
        matches!(self.kind(), TokenKind::Word | TokenKind::QuotedIdent { .. })
    }

    pub(crate) fn is_ident_at(&self, n: usize) -> bool {
        matches!(self.kind_at(n), TokenKind::Word | TokenKind::QuotedIdent { .. })
    }

    pub(crate) fn parse_ident(&mut self) -> PResult<Ident> {
        let ident = match self.kind() {
            TokenKind::Word => Ident::plain(self.text()),
            TokenKind::QuotedIdent { value, style } => Ident { value: value.clone(), quote: *style },
            _ => return Err(self.error()),
        };
        self.advance();
        Ok(ident)
    }

    /// An identifier where T-SQL also accepts a reserved word (`ON PRIMARY`, `TO public`,
    /// the parts after a dot).
    pub(crate) fn parse_ident_or_keyword(&mut self) -> PResult<Ident> {
        if matches!(self.kind(), TokenKind::Keyword) {
            let ident = Ident::plain(self.text());
            self.advance();
            return Ok(ident);
        }
        self.parse_ident()
    }

    /// `a`, `a.b`, `a..b`, up to 5 parts (4 for objects plus a column). A `.` followed by
    /// `*` is left for the caller (`t.*`).
    pub(crate) fn parse_object_name(&mut self) -> PResult<ObjectName> {
        // Leading parts may be omitted too: `..t`, `.dbo.t` (the current database, the
        // default schema), as SQL Server reads them.
        let mut parts = Vec::new();
        while self.is(&TokenKind::Dot) && parts.len() < 3 {
            self.advance();
            parts.push(Ident::plain(""));
        }
        parts.push(if parts.is_empty() { self.parse_ident()? } else { self.parse_ident_or_keyword()? });
        while self.is(&TokenKind::Dot) && !self.is_at(1, &TokenKind::Star) {
            if parts.len() >= 5 {
                return Err(self.error());
            }
            self.advance();
            if self.is(&TokenKind::Dot) {
                // `db..t`: the omitted part is empty.
                parts.push(Ident::plain(""));
                continue;
            }
            parts.push(self.parse_ident_or_keyword()?);
        }
        if parts.last().is_some_and(|p| p.value.is_empty()) {
            return Err(self.error());
        }
        Ok(ObjectName { parts })
    }

    /// `@name` or an identifier.
    pub(crate) fn parse_name_ref(&mut self) -> PResult<NameRef> {
        if self.is(&TokenKind::Variable) {
            let v = self.text().to_string();
            self.advance();
            return Ok(NameRef::Variable(v));
        }
        Ok(NameRef::Name(self.parse_ident()?))
    }

    /// `( ident, ident, ... )`
    pub(crate) fn parse_paren_ident_list(&mut self) -> PResult<Vec<Ident>> {
        self.expect(&TokenKind::LParen)?;
        let mut out = vec![self.parse_ident()?];
        while self.eat(&TokenKind::Comma) {
            out.push(self.parse_ident()?);
        }
        self.expect(&TokenKind::RParen)?;
        Ok(out)
    }

    pub(crate) fn take_variable(&mut self) -> PResult<String> {
        if !self.is(&TokenKind::Variable) {
            return Err(self.error());
        }
        let v = self.text().to_string();
        self.advance();
        Ok(v)
    }

    // -----------------------------------------------------------------------------------
    // Batches and statements
    // -----------------------------------------------------------------------------------

    fn batch(&mut self) -> PResult<Batch> {
        // One statement per `;` is a good guess for scripts that end statements with
        // one, and saves growing the list (statements are large) a dozen times in a
        // batch of a thousand.
        let semicolons = self.toks.iter().filter(|t| matches!(t.kind, TokenKind::Semicolon)).count();
        let mut statements = Vec::with_capacity(semicolons.min(MAX_STATEMENTS_GUESS) + 1);
        loop {
            while self.eat(&TokenKind::Semicolon) {}
            if self.at_eof() {
                break;
            }
            self.top_index = statements.len();
            statements.push(self.parse_statement()?);
        }
        Ok(Batch { statements })
    }

    /// Statements until `END` (not consumed) for BEGIN...END and TRY/CATCH blocks.
    pub(crate) fn parse_block_until_end(&mut self) -> PResult<Vec<Statement>> {
        let mut out = Vec::new();
        loop {
            while self.eat(&TokenKind::Semicolon) {}
            if self.is_word("END") || self.at_eof() {
                return Ok(out);
            }
            out.push(self.parse_nested_statement()?);
        }
    }

    /// `AS` and a module's body (procedures, triggers): at least one statement, to the
    /// end of the batch, with the body's span.
    pub(crate) fn parse_module_body(&mut self) -> PResult<(Vec<Statement>, Span)> {
        self.expect_word("AS")?;
        let body_start = self.pos;
        let body = self.parse_rest_of_batch()?;
        if body.is_empty() {
            return Err(self.error());
        }
        Ok((body, self.span_from(body_start)))
    }

    /// Statements to the end of the batch (procedure bodies).
    pub(crate) fn parse_rest_of_batch(&mut self) -> PResult<Vec<Statement>> {
        let mut out = Vec::new();
        loop {
            while self.eat(&TokenKind::Semicolon) {}
            if self.at_eof() {
                return Ok(out);
            }
            out.push(self.parse_nested_statement()?);
        }
    }

    /// Is this the first statement of the batch, at top level? (CREATE PROCEDURE and
    /// friends must be; so may a procedure call without EXEC.)
    pub(crate) fn first_in_batch(&self) -> bool {
        self.top_index == 0 && self.stmt_nesting == 0
    }

    /// A nested statement (inside a block, IF, WHILE or a module body).
    pub(crate) fn parse_nested_statement(&mut self) -> PResult<Statement> {
        self.stmt_nesting += 1;
        let r = self.nest(|p| p.parse_statement());
        self.stmt_nesting -= 1;
        r
    }

    pub(crate) fn parse_statement(&mut self) -> PResult<Statement> {
        let start = self.pos;
        let kind = self.statement_kind()?;
        Ok(Statement { kind, span: self.span_from(start) })
    }

    fn statement_kind(&mut self) -> PResult<StatementKind> {
        match self.kind() {
            TokenKind::Keyword => {}
            TokenKind::Word => return self.word_statement(),
            TokenKind::QuotedIdent { .. } if self.first_in_batch() => return self.parse_exec_body(),
            TokenKind::LParen => return Ok(StatementKind::Query(Box::new(self.parse_query()?))),
            _ => return Err(self.error()),
        }
        // Reserved keywords are short ASCII words: upper-cased on the stack.
        let mut buf = [0u8; 32];
        let kw = upper_keyword(self.text(), &mut buf);
        match kw {
            "SELECT" => Ok(StatementKind::Query(Box::new(self.parse_query()?))),
            "WITH" => self.parse_with_statement(),
            "INSERT" if self.is_word_at(1, "BULK") => self.parse_insert_bulk(),
            "INSERT" => Ok(StatementKind::Insert(Box::new(self.parse_insert(Vec::new())?))),
            "UPDATE" => {
                if self.is_word_at(1, "STATISTICS") {
                    let start = self.pos;
                    self.advance();
                    self.advance();
                    return self.capture_other(start, "UPDATE STATISTICS", Capture::Heuristic);
                }
                Ok(StatementKind::Update(Box::new(self.parse_update(Vec::new())?)))
            }
            "DELETE" => Ok(StatementKind::Delete(Box::new(self.parse_delete(Vec::new())?))),
            "MERGE" => Ok(StatementKind::Merge(Box::new(self.parse_merge(Vec::new())?))),
            "BULK" => {
                let start = self.pos;
                self.advance();
                self.expect_word("INSERT")?;
                self.capture_other(start, "BULK INSERT", Capture::Heuristic)
            }
            "USE" => {
                self.advance();
                Ok(StatementKind::Use(self.parse_ident_or_keyword()?))
            }
            "CREATE" => self.parse_create(),
            "ALTER" => self.parse_alter(),
            "DROP" => self.parse_drop(),
            "TRUNCATE" => {
                self.advance();
                self.expect_word("TABLE")?;
                Ok(StatementKind::Truncate { table: self.parse_object_name()? })
            }
            "DECLARE" => self.parse_declare(),
            "SET" => self.parse_set(),
            "IF" => self.parse_if(),
            "WHILE" => self.parse_while(),
            "BEGIN" => self.parse_begin(),
            "BREAK" => {
                self.advance();
                Ok(StatementKind::Break)
            }
            "CONTINUE" => {
                self.advance();
                Ok(StatementKind::Continue)
            }
            "GOTO" => {
                self.advance();
                Ok(StatementKind::Goto(self.parse_ident()?))
            }
            "RETURN" => self.parse_return(),
            "RAISERROR" => self.parse_raiserror(),
            "PRINT" => {
                self.advance();
                Ok(StatementKind::Print(self.parse_expr()?))
            }
            "WAITFOR" => self.parse_waitfor(),
            "EXEC" | "EXECUTE" => self.parse_exec(),
            "REVERT" => {
                self.advance();
                Ok(StatementKind::Revert)
            }
            "COMMIT" => self.parse_commit(),
            "ROLLBACK" => self.parse_rollback(),
            "SAVE" => self.parse_save(),
            "CHECKPOINT" => {
                self.advance();
                let duration = if self.starts_value() { Some(self.parse_expr()?) } else { None };
                Ok(StatementKind::Checkpoint(duration))
            }
            "DBCC" => self.parse_dbcc(),
            "BACKUP" => self.parse_backup(),
            "RESTORE" => self.parse_restore(),
            "GRANT" | "DENY" | "REVOKE" => self.parse_permission(),
            "OPEN" => {
                self.advance();
                Ok(StatementKind::OpenCursor(self.parse_cursor_ref()?))
            }
            "CLOSE" => {
                self.advance();
                Ok(StatementKind::CloseCursor(self.parse_cursor_ref()?))
            }
            "DEALLOCATE" => {
                self.advance();
                Ok(StatementKind::DeallocateCursor(self.parse_cursor_ref()?))
            }
            "FETCH" => self.parse_fetch(),
            "KILL" => {
                self.advance();
                let target = self.parse_expr()?;
                let status_only = if self.is_word("WITH") && self.is_word_at(1, "STATUSONLY") {
                    self.advance();
                    self.advance();
                    true
                } else {
                    false
                };
                Ok(StatementKind::Kill { target, status_only })
            }
            "RECONFIGURE" => {
                self.advance();
                let with_override = if self.is_word("WITH") && self.is_word_at(1, "OVERRIDE") {
                    self.advance();
                    self.advance();
                    true
                } else {
                    false
                };
                Ok(StatementKind::Reconfigure { with_override })
            }
            "SHUTDOWN" => {
                self.advance();
                let nowait = if self.is_word("WITH") && self.is_word_at(1, "NOWAIT") {
                    self.advance();
                    self.advance();
                    true
                } else {
                    false
                };
                Ok(StatementKind::Shutdown { nowait })
            }
            _ => Err(self.error()),
        }
    }

    /// A statement that starts with a non-reserved word.
    fn word_statement(&mut self) -> PResult<StatementKind> {
        if self.is(&TokenKind::Word) && self.is_at(1, &TokenKind::Colon) {
            let label = self.parse_ident()?;
            self.advance();
            return Ok(StatementKind::Label(label));
        }
        if self.is_word("THROW") {
            return self.parse_throw();
        }
        if self.is_any_word(&["ENABLE", "DISABLE"]) && self.is_word_at(1, "TRIGGER") {
            let start = self.pos;
            let keyword = format!("{} TRIGGER", self.text().to_ascii_uppercase());
            let enable = self.is_word("ENABLE");
            self.advance();
            self.advance();
            let names = if self.eat_word("ALL") {
                None
            } else {
                let mut names = vec![self.parse_object_name()?];
                while self.eat(&TokenKind::Comma) {
                    names.push(self.parse_object_name()?);
                }
                Some(names)
            };
            self.expect_word("ON")?;
            if self.is_word("DATABASE") || self.is_word("ALL") {
                // DDL triggers: not modelled.
                self.pos = start;
                self.advance();
                self.advance();
                return self.capture_other(start, &keyword, Capture::Heuristic);
            }
            let table = self.parse_object_name()?;
            return Ok(StatementKind::EnableTrigger { enable, names, table });
        }
        if self.first_in_batch() {
            // SQL Server runs a batch that starts with a name as a procedure call.
            return self.parse_exec_body();
        }
        Err(self.error())
    }

    /// WITH cte AS (...) followed by SELECT, INSERT, UPDATE, DELETE or MERGE.
    fn parse_with_statement(&mut self) -> PResult<StatementKind> {
        let start = self.pos;
        let ctes = self.parse_ctes()?;
        if self.is_word("SELECT") || self.is(&TokenKind::LParen) {
            let mut q = self.parse_query()?;
            q.with = ctes;
            q.span = self.span_from(start);
            return Ok(StatementKind::Query(Box::new(q)));
        }
        if self.is_word("INSERT") {
            return Ok(StatementKind::Insert(Box::new(self.parse_insert(ctes)?)));
        }
        if self.is_word("UPDATE") {
            return Ok(StatementKind::Update(Box::new(self.parse_update(ctes)?)));
        }
        if self.is_word("DELETE") {
            return Ok(StatementKind::Delete(Box::new(self.parse_delete(ctes)?)));
        }
        if self.is_word("MERGE") {
            return Ok(StatementKind::Merge(Box::new(self.parse_merge(ctes)?)));
        }
        Err(self.error())
    }

    /// Consume an unmodelled statement that began at token `start`; the tokens before
    /// the current position are its leading keywords.
    pub(crate) fn capture_other(&mut self, start: usize, keyword: &str, mode: Capture) -> PResult<StatementKind> {
        let mut depth = 0i64;
        let mut last_end = self.prev_end();
        loop {
            match self.kind() {
                TokenKind::Eof => break,
                TokenKind::Semicolon if depth <= 0 && mode != Capture::ToEndOfBatch => break,
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth -= 1,
                TokenKind::Keyword | TokenKind::Word
                    if mode == Capture::Heuristic
                        && depth <= 0
                        && STATEMENT_STARTERS.iter().any(|s| self.text().eq_ignore_ascii_case(s)) =>
                {
                    break
                }
                _ => {}
            }
            if !matches!(self.kind(), TokenKind::Semicolon) {
                last_end = self.peek().span.end;
            }
            self.advance();
        }
        let begin = self.toks[start].span.start as usize;
        let text = self.src.get(begin..last_end as usize).unwrap_or("").to_string();
        Ok(StatementKind::Other { keyword: keyword.to_string(), text })
    }

    /// Can the current token start a value (an optional operand such as CHECKPOINT's
    /// duration or RETURN's expression)?
    pub(crate) fn starts_value(&self) -> bool {
        match self.kind() {
            k if k.is_constant() => true,
            TokenKind::Variable
            | TokenKind::SystemVariable
            | TokenKind::LParen
            | TokenKind::Minus
            | TokenKind::Plus
            | TokenKind::Tilde
            | TokenKind::QuotedIdent { .. } => true,
            // A word: a column or function name, unless it is a label (`x:`).
            TokenKind::Word => !self.is_at(1, &TokenKind::Colon),
            TokenKind::Keyword => self.is_any_word(&[
                "NULL",
                "CASE",
                "CAST",
                "CONVERT",
                "TRY_CONVERT",
                "COALESCE",
                "NULLIF",
                "LEFT",
                "RIGHT",
                "EXISTS",
                "CURRENT_TIMESTAMP",
                "CURRENT_USER",
                "SESSION_USER",
                "SYSTEM_USER",
                "USER",
            ]),
            _ => false,
        }
    }
}

/// `word` upper-cased into `buf`, or "" when it does not fit (no keyword is that long).
pub(crate) fn upper_keyword<'b>(word: &str, buf: &'b mut [u8; 32]) -> &'b str {
    let Some(dst) = buf.get_mut(..word.len()) else {
        return "";
    };
    dst.copy_from_slice(word.as_bytes());
    dst.make_ascii_uppercase();
    std::str::from_utf8(dst).unwrap_or("")
}
