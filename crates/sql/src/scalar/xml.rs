//! The xml data type: a parser of our own into a small tree, the serializer that gives
//! SQL Server's stored form (attributes in double quotes, empty elements as `<a/>`, as
//! SQL Server sends them to clients, insignificant whitespace dropped), and the XQuery/XPath subset of the xml methods
//! (`value()`, `query()`, `exist()`, `nodes()`).
//!
//! A value of type xml is stored as its serialized text. A row of `x.nodes('path')`
//! carries its context node as [`CTX_MARK`], the node's depth, [`CTX_MARK`], then the
//! node wrapped in its ancestors (each with its attributes only): so `.`, `@a`, `..` and
//! relative paths from the context work, and the text stays small.

use types::SqlError;

/// Starts a context-node value (a nodes() row); never valid in XML text.
pub const CTX_MARK: char = '\u{0}';

/// A node of a parsed document; node 0 is the document node. Nodes are in document
/// order, so a node's index is its position.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub attrs: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Document,
    Element(String),
    Text(String),
    Comment(String),
}

#[derive(Debug, Clone)]
pub struct Doc {
    pub nodes: Vec<Node>,
    /// The context node a method starts from (the document, or a nodes() row's node).
    pub context: usize,
}

/// The deepest element nesting an xml instance may have, as in SQL Server. Every pass
/// over a parsed document (serializing, string values, the XQuery axes) recurses by
/// element depth, so this bound is also what keeps them within the thread's stack.
pub const MAX_DEPTH: usize = 128;

/// Msg 6335 (SQL Server gives state 101 for an instance built from text).
fn too_deep() -> SqlError {
    SqlError::new(
        6335,
        16,
        101,
        format!(
            "XML datatype instance has too many levels of nested nodes. Maximum allowed depth is {MAX_DEPTH} levels."
        ),
    )
}

fn parse_error(number: i32, line: usize, col: usize, what: &str) -> SqlError {
    SqlError::new(number, 16, 1, format!("XML parsing: line {line}, character {col}, {what}"))
}

/// Parses xml text (or a nodes() context value).
pub fn parse(text: &str) -> Result<Doc, SqlError> {
    if let Some(rest) = text.strip_prefix(CTX_MARK) {
        let (depth, body) = rest.split_once(CTX_MARK).unwrap_or(("0", rest));
        let mut doc = Parser::new(body).document()?;
        let mut at = 0;
        for _ in 0..depth.parse::<usize>().unwrap_or(0) {
            match doc.nodes[at].children.first() {
                Some(&c) => at = c,
                None => break,
            }
        }
        doc.context = at;
        return Ok(doc);
    }
    Parser::new(text).document()
}

/// Parses and re-serializes: what CAST(... AS xml) stores.
pub fn normalize(text: &str) -> Result<String, SqlError> {
    let doc = parse(text)?;
    let mut out = String::with_capacity(text.len());
    for &c in &doc.nodes[0].children {
        doc.write(c, &mut out);
    }
    Ok(out)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    nodes: Vec<Node>,
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_numeric() || c == '-' || c == '.' || c == '\u{B7}'
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        let nodes = vec![Node { kind: Kind::Document, parent: None, children: Vec::new(), attrs: Vec::new() }];
        Parser { s, pos: 0, nodes }
    }

    /// SQL Server's (line, character) of an error: the line from 1, the characters read
    /// on it including the offending one.
    fn where_(&self) -> (usize, usize) {
        let before = &self.s[..self.pos.min(self.s.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
        (line, col)
    }

    fn err(&self, number: i32, what: &str) -> SqlError {
        let (l, c) = self.where_();
        parse_error(number, l, c, what)
    }

    fn eof(&self) -> SqlError {
        self.err(9400, "unexpected end of input")
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: char, number: i32, what: &str) -> Result<(), SqlError> {
        match self.peek() {
            Some(x) if x == c => {
                self.pos += c.len_utf8();
                Ok(())
            }
            Some(_) => Err(self.err(number, what)),
            None => Err(self.eof()),
        }
    }

    fn name(&mut self) -> Result<String, SqlError> {
        let start = self.pos;
        match self.peek() {
            Some(c) if is_name_start(c) => {
                self.bump();
            }
            Some(_) => {
                self.bump();
                return Err(self.err(9455, "illegal qualified name character"));
            }
            None => return Err(self.eof()),
        }
        while self.peek().is_some_and(is_name_char) {
            self.bump();
        }
        Ok(self.s[start..self.pos].to_string())
    }

    fn add(&mut self, parent: usize, kind: Kind) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node { kind, parent: Some(parent), children: Vec::new(), attrs: Vec::new() });
        self.nodes[parent].children.push(id);
        id
    }

    /// Text up to `end`, consumed with it.
    fn until(&mut self, end: &str) -> Result<&'a str, SqlError> {
        match self.rest().find(end) {
            Some(i) => {
                let t = &self.rest()[..i];
                self.pos += i + end.len();
                Ok(t)
            }
            None => {
                self.pos = self.s.len();
                Err(self.eof())
            }
        }
    }

    /// `&...;` after the `&`: the character it stands for.
    fn reference(&mut self, out: &mut String) -> Result<(), SqlError> {
        let start = self.pos;
        let Some(semi) = self.rest().find(';') else {
            return Err(self.err(9411, "semicolon expected"));
        };
        let body = &self.rest()[..semi];
        let c = if let Some(num) = body.strip_prefix('#') {
            let n = match num.strip_prefix('x') {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => num.parse::<u32>().ok(),
            };
            match n.and_then(char::from_u32) {
                Some(c) if c != '\0' => c,
                _ => return Err(self.err(9420, "illegal xml character")),
            }
        } else {
            match body {
                "lt" => '<',
                "gt" => '>',
                "amp" => '&',
                "quot" => '"',
                "apos" => '\'',
                _ if body.chars().all(is_name_char) && !body.is_empty() => {
                    return Err(self.err(9448, &format!("undeclared entity '{body}'")))
                }
                _ => return Err(self.err(9411, "semicolon expected")),
            }
        };
        out.push(c);
        self.pos = start + semi + 1;
        Ok(())
    }

    fn document(mut self) -> Result<Doc, SqlError> {
        // A leading XML declaration is accepted and not stored (as SQL Server does).
        if self.rest().starts_with("<?xml") && self.rest()[5..].starts_with(|c: char| c.is_ascii_whitespace()) {
            self.until("?>")?;
        }
        let mut stack = vec![0usize];
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c != '<' {
                if c == '&' {
                    self.pos += 1;
                    self.reference(&mut text)?;
                } else if c == '\0' {
                    return Err(self.err(9420, "illegal xml character"));
                } else {
                    self.bump();
                    text.push(c);
                }
                continue;
            }
            let top = *stack.last().unwrap_or(&0);
            let r = self.rest();
            if r.starts_with("<![CDATA[") {
                self.pos += 9;
                let t = self.until("]]>")?;
                text.push_str(t);
                continue;
            }
            self.flush_text(top, &mut text);
            if r.starts_with("<!--") {
                self.pos += 4;
                let t = self.until("-->")?;
                self.add(top, Kind::Comment(t.to_string()));
            } else if r.starts_with("<?") {
                // Processing instructions are skipped.
                self.pos += 2;
                self.until("?>")?;
            } else if r.starts_with("<!") {
                return Err(self.err(9437, "Parsing XML with internal subset DTDs not allowed. Use CONVERT with style option 2 to enable limited internal subset DTD support"));
            } else if r.starts_with("</") {
                self.pos += 2;
                let name = self.name()?;
                self.skip_ws();
                self.expect('>', 9436, "end tag does not match start tag")?;
                let open = match &self.nodes[top].kind {
                    Kind::Element(n) => n == &name,
                    _ => false,
                };
                if !open {
                    return Err(self.err(9436, "end tag does not match start tag"));
                }
                stack.pop();
            } else {
                // The stack holds the document node and the open elements: its length is
                // the new element's level.
                if stack.len() > MAX_DEPTH {
                    return Err(too_deep());
                }
                self.pos += 1;
                let name = self.name()?;
                let id = self.add(top, Kind::Element(name));
                let empty = self.attributes(id)?;
                if !empty {
                    stack.push(id);
                }
            }
        }
        let top = *stack.last().unwrap_or(&0);
        if stack.len() > 1 {
            return Err(self.eof());
        }
        self.flush_text(top, &mut text);
        Ok(Doc { nodes: self.nodes, context: 0 })
    }

    /// Whitespace-only text between tags is insignificant (dropped, as SQL Server does
    /// without CONVERT style 1).
    fn flush_text(&mut self, parent: usize, text: &mut String) {
        if !text.is_empty() {
            if !text.chars().all(|c| c.is_ascii_whitespace()) {
                self.add(parent, Kind::Text(std::mem::take(text)));
            }
            text.clear();
        }
    }

    /// Attributes up to `>` or `/>`; true for an empty element.
    fn attributes(&mut self, id: usize) -> Result<bool, SqlError> {
        loop {
            let had_ws = self.peek().is_some_and(|c| c.is_ascii_whitespace());
            self.skip_ws();
            match self.peek() {
                None => return Err(self.eof()),
                Some('>') => {
                    self.pos += 1;
                    return Ok(false);
                }
                Some('/') => {
                    self.pos += 1;
                    self.expect('>', 9421, "illegal name character")?;
                    return Ok(true);
                }
                Some(_) if !had_ws => return Err(self.err(9410, "whitespace expected")),
                Some(_) => {}
            }
            let name = self.name()?;
            self.skip_ws();
            self.expect('=', 9408, "'=' expected")?;
            self.skip_ws();
            let quote = match self.bump() {
                Some(q @ ('"' | '\'')) => q,
                Some(_) => return Err(self.err(9413, "A string literal was expected")),
                None => return Err(self.eof()),
            };
            let mut value = String::new();
            loop {
                match self.bump() {
                    None => return Err(self.eof()),
                    Some(c) if c == quote => break,
                    Some('&') => self.reference(&mut value)?,
                    Some('<') => return Err(self.err(9422, "illegal '<' in attribute value")),
                    Some(c) => value.push(c),
                }
            }
            if self.nodes[id].attrs.iter().any(|(n, _)| *n == name) {
                return Err(self.err(9465, "duplicate attribute"));
            }
            self.nodes[id].attrs.push((name, value));
        }
    }
}

fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
}

fn escape_attr(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            '\r' => out.push_str("&#xD;"),
            '\n' => out.push_str("&#xA;"),
            '\t' => out.push_str("&#x9;"),
            c => out.push(c),
        }
    }
}

impl Doc {
    /// Serializes node `id` (and its subtree) in SQL Server's form.
    pub fn write(&self, id: usize, out: &mut String) {
        let n = &self.nodes[id];
        match &n.kind {
            Kind::Document => n.children.iter().for_each(|&c| self.write(c, out)),
            Kind::Text(t) => escape_text(t, out),
            Kind::Comment(t) => {
                out.push_str("<!--");
                out.push_str(t);
                out.push_str("-->");
            }
            Kind::Element(name) => {
                self.open_tag(id, out);
                if n.children.is_empty() {
                    out.push_str("/>");
                    return;
                }
                out.push('>');
                n.children.iter().for_each(|&c| self.write(c, out));
                out.push_str("</");
                out.push_str(name);
                out.push('>');
            }
        }
    }

    fn open_tag(&self, id: usize, out: &mut String) {
        let n = &self.nodes[id];
        if let Kind::Element(name) = &n.kind {
            out.push('<');
            out.push_str(name);
            for (a, v) in &n.attrs {
                out.push(' ');
                out.push_str(a);
                out.push_str("=\"");
                escape_attr(v, out);
                out.push('"');
            }
        }
    }

    /// The string value: the text of the node and its descendants.
    pub fn string_value(&self, id: usize, out: &mut String) {
        match &self.nodes[id].kind {
            Kind::Text(t) | Kind::Comment(t) => out.push_str(t),
            _ => {
                for &c in &self.nodes[id].children {
                    if !matches!(self.nodes[c].kind, Kind::Comment(_)) {
                        self.string_value(c, out);
                    }
                }
            }
        }
    }

    /// The value of a nodes() row whose context is `id` (see the module comment).
    pub fn context_value(&self, id: usize) -> String {
        if id == 0 {
            let mut out = String::new();
            self.write(0, &mut out);
            return out;
        }
        let mut chain = vec![id];
        let mut at = id;
        while let Some(p) = self.nodes[at].parent {
            if p == 0 {
                break;
            }
            chain.push(p);
            at = p;
        }
        chain.reverse();
        let depth = chain.len();
        let mut out = String::new();
        out.push(CTX_MARK);
        out.push_str(&depth.to_string());
        out.push(CTX_MARK);
        for &a in &chain[..depth - 1] {
            self.open_tag(a, &mut out);
            out.push('>');
        }
        self.write(id, &mut out);
        for &a in chain[..depth - 1].iter().rev() {
            if let Kind::Element(name) = &self.nodes[a].kind {
                out.push_str("</");
                out.push_str(name);
                out.push('>');
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// XQuery subset

/// A compiled path expression.
#[derive(Debug, Clone, PartialEq)]
pub enum XExpr {
    /// `/`: the root of the context's document.
    Root,
    /// `.`
    Context,
    Step(Axis, Test),
    /// `a/b`: `b` evaluated from each node of `a`.
    Path(Box<XExpr>, Box<XExpr>),
    Filter(Box<XExpr>, Vec<XExpr>),
    Str(String),
    Num(f64),
    Cmp(CmpOp, Box<XExpr>, Box<XExpr>),
    And(Box<XExpr>, Box<XExpr>),
    Or(Box<XExpr>, Box<XExpr>),
    Call(Func, Vec<XExpr>),
    /// `sql:variable("@v")` / `sql:column("c")`: the i-th outside value.
    Outside(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Axis {
    Child,
    Descendant,
    DescendantOrSelf,
    Attribute,
    SelfAxis,
    Parent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    Name(String),
    Any,
    Text,
    Node,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Func {
    Data,
    String,
    LocalName,
    Name,
    Count,
    Not,
    Contains,
    Number,
    True,
    False,
    Position,
    Last,
}

/// An outside reference `sql:variable("@v")` or `sql:column("c")` the binder resolves.
#[derive(Debug, Clone, PartialEq)]
pub enum Outside {
    Variable(String),
    Column(String),
}

/// A compiled XQuery with the outside values it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct XQuery {
    pub expr: XExpr,
    pub outside: Vec<Outside>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Slash,
    DSlash,
    Dot,
    DDot,
    At,
    Star,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Comma,
    ColonColon,
    Op(&'a str),
    Name(&'a str),
    Str(&'a str),
    Num(&'a str),
}

/// The method name in XQuery errors: `XQuery [value()]: ...`.
fn xq_error(number: i32, method: &str, what: &str) -> SqlError {
    SqlError::new(number, 16, 1, format!("XQuery [{method}()]: {what}"))
}

fn lex<'a>(s: &'a str, method: &str) -> Result<Vec<Tok<'a>>, SqlError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let two = |x: &[u8]| b[i..].starts_with(x);
        let t = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'/' if two(b"//") => {
                i += 2;
                Tok::DSlash
            }
            b'/' => {
                i += 1;
                Tok::Slash
            }
            b'.' if two(b"..") => {
                i += 2;
                Tok::DDot
            }
            b'.' if !b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i += 1;
                Tok::Dot
            }
            b'@' => {
                i += 1;
                Tok::At
            }
            b'*' => {
                i += 1;
                Tok::Star
            }
            b'[' => {
                i += 1;
                Tok::LBracket
            }
            b']' => {
                i += 1;
                Tok::RBracket
            }
            b'(' => {
                i += 1;
                Tok::LParen
            }
            b')' => {
                i += 1;
                Tok::RParen
            }
            b',' => {
                i += 1;
                Tok::Comma
            }
            b':' if two(b"::") => {
                i += 2;
                Tok::ColonColon
            }
            b'!' | b'<' | b'>' if two(b"!=") || two(b"<=") || two(b">=") => {
                i += 2;
                Tok::Op(&s[start..i])
            }
            b'=' | b'<' | b'>' => {
                i += 1;
                Tok::Op(&s[start..i])
            }
            b'"' | b'\'' => {
                let Some(end) = s[i + 1..].find(c as char) else {
                    return Err(xq_error(2209, method, &format!("Syntax error near '{}'", &s[start..])));
                };
                i += end + 2;
                Tok::Str(&s[start + 1..i - 1])
            }
            b'0'..=b'9' | b'.' => {
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                Tok::Num(&s[start..i])
            }
            _ => {
                let ch = s[i..].chars().next().unwrap_or(' ');
                if !is_name_start(ch) {
                    return Err(xq_error(2209, method, &format!("Syntax error near '{ch}'")));
                }
                // Names are NCName, optionally `prefix:local` (`sql:variable`, `fn:data`).
                while i < b.len() {
                    let ch = s[i..].chars().next().unwrap_or(' ');
                    let colon_name = ch == ':'
                        && !b[i..].starts_with(b"::")
                        && s[i + 1..].chars().next().is_some_and(|n| is_name_start(n) && n != ':');
                    if (is_name_char(ch) && ch != ':') || colon_name {
                        i += ch.len_utf8();
                    } else {
                        break;
                    }
                }
                Tok::Name(&s[start..i])
            }
        };
        out.push(t);
    }
    Ok(out)
}

struct XParser<'a, 'm> {
    toks: Vec<Tok<'a>>,
    pos: usize,
    method: &'m str,
    outside: Vec<Outside>,
    depth: u32,
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Slash => "/".into(),
        Tok::DSlash => "//".into(),
        Tok::Dot => ".".into(),
        Tok::DDot => "..".into(),
        Tok::At => "@".into(),
        Tok::Star => "*".into(),
        Tok::LBracket => "[".into(),
        Tok::RBracket => "]".into(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
        Tok::Comma => ",".into(),
        Tok::ColonColon => "::".into(),
        Tok::Op(s) | Tok::Name(s) | Tok::Num(s) => s.to_string(),
        Tok::Str(s) => format!("\"{s}\""),
    }
}

/// Compiles an XQuery for `method` (value, query, exist, nodes).
pub fn compile(text: &str, method: &str) -> Result<XQuery, SqlError> {
    let toks = lex(text, method)?;
    if toks.is_empty() {
        return Err(xq_error(2209, method, "Syntax error near '<EOF>'"));
    }
    let mut p = XParser { toks, pos: 0, method, outside: Vec::new(), depth: 0 };
    let expr = p.or_expr()?;
    if let Some(t) = p.toks.get(p.pos) {
        return Err(xq_error(
            2370,
            method,
            &format!("No more tokens expected at the end of the XQuery expression. Found '{}'.", tok_text(t)),
        ));
    }
    Ok(XQuery { expr, outside: p.outside })
}

impl<'a> XParser<'a, '_> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    fn eat(&mut self, t: Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn syntax(&self) -> SqlError {
        let near = self.peek().map_or("<EOF>".to_string(), |t| tok_text(&t));
        xq_error(2209, self.method, &format!("Syntax error near '{near}'"))
    }

    fn expect(&mut self, t: Tok) -> Result<(), SqlError> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn or_expr(&mut self) -> Result<XExpr, SqlError> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(xq_error(2209, self.method, "Syntax error near '('"));
        }
        let mut l = self.and_expr()?;
        while self.peek() == Some(Tok::Name("or")) {
            self.pos += 1;
            let r = self.and_expr()?;
            l = XExpr::Or(Box::new(l), Box::new(r));
        }
        self.depth -= 1;
        Ok(l)
    }

    fn and_expr(&mut self) -> Result<XExpr, SqlError> {
        let mut l = self.cmp_expr()?;
        while self.peek() == Some(Tok::Name("and")) {
            self.pos += 1;
            let r = self.cmp_expr()?;
            l = XExpr::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn cmp_expr(&mut self) -> Result<XExpr, SqlError> {
        let l = self.path_expr()?;
        let op = match self.peek() {
            Some(Tok::Op("=")) | Some(Tok::Name("eq")) => CmpOp::Eq,
            Some(Tok::Op("!=")) | Some(Tok::Name("ne")) => CmpOp::Ne,
            Some(Tok::Op("<")) | Some(Tok::Name("lt")) => CmpOp::Lt,
            Some(Tok::Op("<=")) | Some(Tok::Name("le")) => CmpOp::Le,
            Some(Tok::Op(">")) | Some(Tok::Name("gt")) => CmpOp::Gt,
            Some(Tok::Op(">=")) | Some(Tok::Name("ge")) => CmpOp::Ge,
            _ => return Ok(l),
        };
        self.pos += 1;
        let r = self.path_expr()?;
        Ok(XExpr::Cmp(op, Box::new(l), Box::new(r)))
    }

    fn path_expr(&mut self) -> Result<XExpr, SqlError> {
        let mut e = if self.eat(Tok::Slash) {
            if self.starts_step() {
                let s = self.step()?;
                XExpr::Path(Box::new(XExpr::Root), Box::new(s))
            } else {
                return Ok(XExpr::Root);
            }
        } else if self.eat(Tok::DSlash) {
            let s = self.step()?;
            let all = XExpr::Path(Box::new(XExpr::Root), Box::new(XExpr::Step(Axis::DescendantOrSelf, Test::Node)));
            XExpr::Path(Box::new(all), Box::new(s))
        } else {
            self.step()?
        };
        loop {
            if self.eat(Tok::Slash) {
                let s = self.step()?;
                e = XExpr::Path(Box::new(e), Box::new(s));
            } else if self.eat(Tok::DSlash) {
                let s = self.step()?;
                let all = XExpr::Path(Box::new(e), Box::new(XExpr::Step(Axis::DescendantOrSelf, Test::Node)));
                e = XExpr::Path(Box::new(all), Box::new(s));
            } else {
                return Ok(e);
            }
        }
    }

    fn starts_step(&self) -> bool {
        matches!(self.peek(), Some(Tok::Name(_) | Tok::Star | Tok::At | Tok::Dot | Tok::DDot | Tok::LParen))
    }

    fn predicates(&mut self, e: XExpr) -> Result<XExpr, SqlError> {
        let mut preds = Vec::new();
        while self.eat(Tok::LBracket) {
            preds.push(self.or_expr()?);
            self.expect(Tok::RBracket)?;
        }
        Ok(if preds.is_empty() { e } else { XExpr::Filter(Box::new(e), preds) })
    }

    fn string_arg(&mut self) -> Result<String, SqlError> {
        self.expect(Tok::LParen)?;
        let Some(Tok::Str(s)) = self.peek() else { return Err(self.syntax()) };
        self.pos += 1;
        self.expect(Tok::RParen)?;
        Ok(s.to_string())
    }

    fn step(&mut self) -> Result<XExpr, SqlError> {
        let Some(t) = self.peek() else { return Err(self.syntax()) };
        self.pos += 1;
        let e = match t {
            Tok::Dot => XExpr::Context,
            Tok::DDot => XExpr::Step(Axis::Parent, Test::Node),
            Tok::Star => XExpr::Step(Axis::Child, Test::Any),
            Tok::At => {
                let test = match self.peek() {
                    Some(Tok::Star) => Test::Any,
                    Some(Tok::Name(n)) => Test::Name(n.to_string()),
                    _ => return Err(self.syntax()),
                };
                self.pos += 1;
                XExpr::Step(Axis::Attribute, test)
            }
            Tok::LParen => {
                let e = self.or_expr()?;
                self.expect(Tok::RParen)?;
                e
            }
            Tok::Str(s) => XExpr::Str(s.to_string()),
            Tok::Num(n) => XExpr::Num(n.parse().map_err(|_| self.syntax())?),
            Tok::Name(n) if self.peek() == Some(Tok::ColonColon) => {
                self.pos += 1;
                let axis = match n {
                    "child" => Axis::Child,
                    "descendant" => Axis::Descendant,
                    "descendant-or-self" => Axis::DescendantOrSelf,
                    "attribute" => Axis::Attribute,
                    "self" => Axis::SelfAxis,
                    "parent" => Axis::Parent,
                    _ => return Err(xq_error(2217, self.method, &format!("The axis '{n}' is not supported."))),
                };
                let test = self.node_test()?;
                XExpr::Step(axis, test)
            }
            Tok::Name(n) if self.peek() == Some(Tok::LParen) => self.call(n)?,
            Tok::Name(n) => XExpr::Step(Axis::Child, Test::Name(n.to_string())),
            _ => {
                self.pos -= 1;
                return Err(self.syntax());
            }
        };
        self.predicates(e)
    }

    fn node_test(&mut self) -> Result<Test, SqlError> {
        match self.peek() {
            Some(Tok::Star) => {
                self.pos += 1;
                Ok(Test::Any)
            }
            Some(Tok::Name(n)) if self.toks.get(self.pos + 1) == Some(&Tok::LParen) => {
                self.pos += 1;
                let t = match n {
                    "text" => Test::Text,
                    "node" => Test::Node,
                    _ => return Err(self.syntax()),
                };
                self.pos += 1;
                self.expect(Tok::RParen)?;
                Ok(t)
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                Ok(Test::Name(n.to_string()))
            }
            _ => Err(self.syntax()),
        }
    }

    fn call(&mut self, name: &str) -> Result<XExpr, SqlError> {
        let local = name.strip_prefix("fn:").unwrap_or(name);
        match local {
            "text" | "node" => {
                self.pos -= 1;
                let test = self.node_test()?;
                return Ok(XExpr::Step(Axis::Child, test));
            }
            _ => {}
        }
        if name == "sql:variable" || name == "sql:column" {
            let arg = self.string_arg()?;
            let o = if name == "sql:variable" { Outside::Variable(arg) } else { Outside::Column(arg) };
            let i = match self.outside.iter().position(|x| *x == o) {
                Some(i) => i,
                None => {
                    self.outside.push(o);
                    self.outside.len() - 1
                }
            };
            return Ok(XExpr::Outside(i));
        }
        let (f, arity) = match local {
            "data" => (Func::Data, 1..=1),
            "string" => (Func::String, 0..=1),
            "local-name" => (Func::LocalName, 0..=1),
            "name" => (Func::Name, 0..=1),
            "count" => (Func::Count, 1..=1),
            "not" => (Func::Not, 1..=1),
            "contains" => (Func::Contains, 2..=2),
            "number" => (Func::Number, 0..=1),
            "true" => (Func::True, 0..=0),
            "false" => (Func::False, 0..=0),
            "position" => (Func::Position, 0..=0),
            "last" => (Func::Last, 0..=0),
            _ => {
                return Err(xq_error(
                    2395,
                    self.method,
                    &format!("There is no function '{{http://www.w3.org/2004/07/xpath-functions}}:{local}()'"),
                ))
            }
        };
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        if !self.eat(Tok::RParen) {
            args.push(self.or_expr()?);
            while self.eat(Tok::Comma) {
                args.push(self.or_expr()?);
            }
            self.expect(Tok::RParen)?;
        }
        if !arity.contains(&args.len()) {
            return Err(xq_error(
                2395,
                self.method,
                &format!(
                    "There is no function '{{http://www.w3.org/2004/07/xpath-functions}}:{local}()' that takes {} argument(s)",
                    args.len()
                ),
            ));
        }
        Ok(XExpr::Call(f, args))
    }
}

/// Can `e` yield more than one item (SQL Server's static typing, simplified)?
pub fn may_be_many(e: &XExpr) -> bool {
    match e {
        XExpr::Root | XExpr::Context | XExpr::Str(_) | XExpr::Num(_) | XExpr::Outside(_) => false,
        XExpr::Cmp(..) | XExpr::And(..) | XExpr::Or(..) => false,
        XExpr::Step(Axis::SelfAxis | Axis::Parent, _) => false,
        XExpr::Step(Axis::Attribute, Test::Name(_)) => false,
        XExpr::Step(..) => true,
        XExpr::Path(a, b) => may_be_many(a) || may_be_many(b),
        XExpr::Filter(e, preds) => {
            may_be_many(e) && !preds.iter().any(|p| matches!(p, XExpr::Num(_) | XExpr::Call(Func::Last, _)))
        }
        XExpr::Call(Func::Data, args) => args.iter().any(may_be_many),
        XExpr::Call(..) => false,
    }
}

/// An item of a result sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Node(usize),
    /// Attribute `i` of element `node`.
    Attr(usize, usize),
    Str(String),
    Num(f64),
    Bool(bool),
}

impl Item {
    fn order_key(&self) -> Option<(usize, usize)> {
        match self {
            Item::Node(n) => Some((*n, 0)),
            Item::Attr(n, i) => Some((*n, i + 1)),
            _ => None,
        }
    }
}

fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Evaluation state: the document, the outside values, the focus size/position.
pub struct Eval<'d> {
    pub doc: &'d Doc,
    pub outside: &'d [Option<String>],
}

impl Eval<'_> {
    /// The atomized string of an item.
    pub fn string_of(&self, it: &Item) -> String {
        match it {
            Item::Node(n) => {
                let mut s = String::new();
                self.doc.string_value(*n, &mut s);
                s
            }
            Item::Attr(n, i) => self.doc.nodes[*n].attrs.get(*i).map(|a| a.1.clone()).unwrap_or_default(),
            Item::Str(s) => s.clone(),
            Item::Num(n) => fmt_num(*n),
            Item::Bool(b) => b.to_string(),
        }
    }

    pub fn eval(&self, e: &XExpr, ctx: &Item, pos: usize, size: usize) -> Vec<Item> {
        match e {
            XExpr::Root => vec![Item::Node(0)],
            XExpr::Context => vec![ctx.clone()],
            XExpr::Str(s) => vec![Item::Str(s.clone())],
            XExpr::Num(n) => vec![Item::Num(*n)],
            XExpr::Outside(i) => match self.outside.get(*i).cloned().flatten() {
                Some(s) => vec![Item::Str(s)],
                None => Vec::new(),
            },
            XExpr::Step(axis, test) => self.step(*axis, test, ctx),
            XExpr::Path(a, b) => {
                let left = self.eval(a, ctx, pos, size);
                let n = left.len();
                let mut out = Vec::new();
                for (i, it) in left.iter().enumerate() {
                    if it.order_key().is_none() {
                        continue;
                    }
                    out.extend(self.eval(b, it, i + 1, n));
                }
                if out.iter().all(|i| i.order_key().is_some()) {
                    out.sort_by_key(|i| i.order_key());
                    out.dedup();
                }
                out
            }
            XExpr::Filter(inner, preds) => {
                let mut items = self.eval(inner, ctx, pos, size);
                for p in preds {
                    let n = items.len();
                    let mut kept = Vec::new();
                    for (i, it) in items.into_iter().enumerate() {
                        let r = self.eval(p, &it, i + 1, n);
                        let keep = match r.as_slice() {
                            [Item::Num(k)] => *k == (i + 1) as f64,
                            _ => self.truth(&r),
                        };
                        if keep {
                            kept.push(it);
                        }
                    }
                    items = kept;
                }
                items
            }
            XExpr::Cmp(op, a, b) => {
                let l = self.eval(a, ctx, pos, size);
                let r = self.eval(b, ctx, pos, size);
                vec![Item::Bool(l.iter().any(|x| r.iter().any(|y| self.compare(*op, x, y))))]
            }
            XExpr::And(a, b) => {
                let l = self.truth(&self.eval(a, ctx, pos, size));
                vec![Item::Bool(l && self.truth(&self.eval(b, ctx, pos, size)))]
            }
            XExpr::Or(a, b) => {
                let l = self.truth(&self.eval(a, ctx, pos, size));
                vec![Item::Bool(l || self.truth(&self.eval(b, ctx, pos, size)))]
            }
            XExpr::Call(f, args) => self.call(*f, args, ctx, pos, size),
        }
    }

    fn arg_or_ctx(&self, args: &[XExpr], ctx: &Item, pos: usize, size: usize) -> Vec<Item> {
        match args.first() {
            Some(a) => self.eval(a, ctx, pos, size),
            None => vec![ctx.clone()],
        }
    }

    fn call(&self, f: Func, args: &[XExpr], ctx: &Item, pos: usize, size: usize) -> Vec<Item> {
        match f {
            Func::Data => self
                .arg_or_ctx(args, ctx, pos, size)
                .iter()
                .map(|i| match i {
                    Item::Node(_) | Item::Attr(..) => Item::Str(self.string_of(i)),
                    other => other.clone(),
                })
                .collect(),
            Func::String => {
                let v = self.arg_or_ctx(args, ctx, pos, size);
                vec![Item::Str(v.first().map(|i| self.string_of(i)).unwrap_or_default())]
            }
            Func::Number => {
                let v = self.arg_or_ctx(args, ctx, pos, size);
                let n = v.first().and_then(|i| self.string_of(i).trim().parse::<f64>().ok()).unwrap_or(f64::NAN);
                vec![Item::Num(n)]
            }
            Func::LocalName | Func::Name => {
                let v = self.arg_or_ctx(args, ctx, pos, size);
                let name = match v.first() {
                    Some(Item::Node(n)) => match &self.doc.nodes[*n].kind {
                        Kind::Element(name) => name.clone(),
                        _ => String::new(),
                    },
                    Some(Item::Attr(n, i)) => self.doc.nodes[*n].attrs.get(*i).map(|a| a.0.clone()).unwrap_or_default(),
                    _ => String::new(),
                };
                let name = match f {
                    Func::LocalName => name.rsplit(':').next().unwrap_or("").to_string(),
                    _ => name,
                };
                vec![Item::Str(name)]
            }
            Func::Count => vec![Item::Num(self.arg_or_ctx(args, ctx, pos, size).len() as f64)],
            Func::Not => vec![Item::Bool(!self.truth(&self.arg_or_ctx(args, ctx, pos, size)))],
            Func::Contains => {
                let a = self.arg_or_ctx(args, ctx, pos, size);
                let b = args.get(1).map(|e| self.eval(e, ctx, pos, size)).unwrap_or_default();
                let s = a.first().map(|i| self.string_of(i)).unwrap_or_default();
                let t = b.first().map(|i| self.string_of(i)).unwrap_or_default();
                vec![Item::Bool(s.contains(&t))]
            }
            Func::True => vec![Item::Bool(true)],
            Func::False => vec![Item::Bool(false)],
            Func::Position => vec![Item::Num(pos as f64)],
            Func::Last => vec![Item::Num(size as f64)],
        }
    }

    /// The effective boolean value.
    pub fn truth(&self, v: &[Item]) -> bool {
        match v {
            [] => false,
            [Item::Bool(b)] => *b,
            [Item::Num(n)] => *n != 0.0 && !n.is_nan(),
            [Item::Str(s)] => !s.is_empty(),
            _ => true,
        }
    }

    fn compare(&self, op: CmpOp, a: &Item, b: &Item) -> bool {
        use std::cmp::Ordering;
        let numeric = |i: &Item| matches!(i, Item::Num(_));
        let ord = if numeric(a) || numeric(b) {
            let x = self.string_of(a).trim().parse::<f64>();
            let y = self.string_of(b).trim().parse::<f64>();
            match (x, y) {
                (Ok(x), Ok(y)) => x.partial_cmp(&y),
                _ => None,
            }
        } else if let (Item::Bool(x), Item::Bool(y)) = (a, b) {
            Some(x.cmp(y))
        } else {
            Some(self.string_of(a).cmp(&self.string_of(b)))
        };
        let Some(ord) = ord else { return false };
        match op {
            CmpOp::Eq => ord == Ordering::Equal,
            CmpOp::Ne => ord != Ordering::Equal,
            CmpOp::Lt => ord == Ordering::Less,
            CmpOp::Le => ord != Ordering::Greater,
            CmpOp::Gt => ord == Ordering::Greater,
            CmpOp::Ge => ord != Ordering::Less,
        }
    }

    fn matches(&self, n: usize, test: &Test) -> bool {
        match (&self.doc.nodes[n].kind, test) {
            (_, Test::Node) => true,
            (Kind::Text(_), Test::Text) => true,
            (Kind::Element(_), Test::Any) => true,
            (Kind::Element(name), Test::Name(t)) => name == t,
            _ => false,
        }
    }

    fn descendants(&self, n: usize, test: &Test, out: &mut Vec<Item>) {
        for &c in &self.doc.nodes[n].children {
            if self.matches(c, test) {
                out.push(Item::Node(c));
            }
            self.descendants(c, test, out);
        }
    }

    fn step(&self, axis: Axis, test: &Test, ctx: &Item) -> Vec<Item> {
        let n = match ctx {
            Item::Node(n) => *n,
            Item::Attr(n, _) => {
                return match axis {
                    Axis::Parent => vec![Item::Node(*n)],
                    Axis::SelfAxis | Axis::DescendantOrSelf if *test == Test::Node => vec![ctx.clone()],
                    _ => Vec::new(),
                }
            }
            _ => return Vec::new(),
        };
        let node = &self.doc.nodes[n];
        match axis {
            Axis::Child => node.children.iter().filter(|&&c| self.matches(c, test)).map(|&c| Item::Node(c)).collect(),
            Axis::Attribute => node
                .attrs
                .iter()
                .enumerate()
                .filter(|(_, (name, _))| match test {
                    Test::Name(t) => name == t,
                    Test::Any | Test::Node => true,
                    Test::Text => false,
                })
                .map(|(i, _)| Item::Attr(n, i))
                .collect(),
            Axis::SelfAxis => {
                if self.matches(n, test) || (n == 0 && *test == Test::Node) {
                    vec![Item::Node(n)]
                } else {
                    Vec::new()
                }
            }
            Axis::Parent => match node.parent {
                Some(p) if *test == Test::Node || self.matches(p, test) => vec![Item::Node(p)],
                _ => Vec::new(),
            },
            Axis::Descendant | Axis::DescendantOrSelf => {
                let mut out = Vec::new();
                if axis == Axis::DescendantOrSelf && (self.matches(n, test) || *test == Test::Node) {
                    out.push(Item::Node(n));
                }
                self.descendants(n, test, &mut out);
                out
            }
        }
    }

    /// query(): the result sequence as xml text (atomic values separated by spaces).
    pub fn serialize(&self, items: &[Item]) -> String {
        let mut out = String::new();
        let mut prev_atomic = false;
        for it in items {
            match it {
                Item::Node(n) => {
                    self.doc.write(*n, &mut out);
                    prev_atomic = false;
                }
                other => {
                    if prev_atomic {
                        out.push(' ');
                    }
                    escape_text(&self.string_of(other), &mut out);
                    prev_atomic = true;
                }
            }
        }
        out
    }
}

/// value(): an atomized string in the form CONVERT reads for `ty` (xs:dateTime's UTC
/// `Z` and xs:boolean's words).
pub fn cast_text(s: &str, ty: &types::SqlType) -> String {
    use types::SqlType as T;
    let t = s.trim();
    match ty {
        T::DateTime | T::DateTime2 { .. } | T::SmallDateTime | T::Date | T::Time { .. } => {
            t.strip_suffix('Z').unwrap_or(t).to_string()
        }
        T::Bit if t == "true" => "1".into(),
        T::Bit if t == "false" => "0".into(),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize(s).unwrap()
    }

    fn run(doc: &str, q: &str) -> Vec<String> {
        let d = parse(doc).unwrap();
        let x = compile(q, "query").unwrap();
        let ev = Eval { doc: &d, outside: &[] };
        ev.eval(&x.expr, &Item::Node(d.context), 1, 1).iter().map(|i| ev.string_of(i)).collect()
    }

    #[test]
    fn parses_and_serializes_in_sql_server_form() {
        assert_eq!(norm("<a  b='1' c=\"x&amp;y\"></a>"), "<a b=\"1\" c=\"x&amp;y\"/>");
        assert_eq!(norm("<?xml version=\"1.0\"?>\n<a>\n  <b>t&lt;</b>\n</a>"), "<a><b>t&lt;</b></a>");
        assert_eq!(norm("<a><![CDATA[x<y]]><!--c--><?pi x?></a>"), "<a>x&lt;y<!--c--></a>");
        assert_eq!(norm("<a>&#65;&#x42;</a>"), "<a>AB</a>");
        assert_eq!(norm("<p:a xmlns:p=\"u\"/>text"), "<p:a xmlns:p=\"u\"/>text");
    }

    #[test]
    fn parse_errors_carry_sql_server_numbers() {
        let e = parse("<a><b></a>").unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (9436, "XML parsing: line 1, character 10, end tag does not match start tag")
        );
        assert_eq!(parse("<a>").unwrap_err().number, 9400);
        assert_eq!(parse("<a>&foo</a>").unwrap_err().number, 9411);
        assert_eq!(parse("<1a/>").unwrap_err().number, 9455);
    }

    #[test]
    fn nesting_is_limited_to_128_levels() {
        let nest = |n: usize, inner: &str| format!("{}{inner}{}", "<a>".repeat(n), "</a>".repeat(n));
        // 128 levels, the innermost one empty or holding text, are accepted.
        assert!(parse(&nest(127, "<b/>")).is_ok());
        assert!(parse(&nest(128, "text")).is_ok());
        for deeper in [nest(128, "<b/>"), nest(129, ""), nest(200_000, "")] {
            let e = parse(&deeper).unwrap_err();
            assert_eq!((e.number, e.severity), (6335, 16), "{}", e.message);
        }
    }

    #[test]
    fn paths_predicates_and_functions() {
        let d = "<event name=\"e\" timestamp=\"t1\"><data name=\"duration\"><value>123</value></data><data name=\"x\"><value>7</value></data></event>";
        assert_eq!(run(d, "(event/data[@name=\"duration\"]/value)[1]"), ["123"]);
        assert_eq!(run(d, "event/@timestamp"), ["t1"]);
        assert_eq!(run(d, "//value"), ["123", "7"]);
        assert_eq!(run(d, "/event/data[2]/value/text()"), ["7"]);
        assert_eq!(run(d, "count(//data)"), ["2"]);
        assert_eq!(run(d, "local-name(/*[1])"), ["event"]);
        assert_eq!(run(d, "string((//value)[2])"), ["7"]);
        assert_eq!(run(d, "//data[value > 100]/@name"), ["duration"]);
        assert_eq!(run(d, "//value/../@name"), ["duration", "x"]);
    }

    #[test]
    fn context_values_keep_ancestors() {
        let d = parse("<r a=\"1\"><e n=\"1\"><v>x</v></e><e n=\"2\"/></r>").unwrap();
        let ctx = d.context_value(5);
        let d2 = parse(&ctx).unwrap();
        let ev = Eval { doc: &d2, outside: &[] };
        let s = |q: &str| {
            let x = compile(q, "value").unwrap();
            ev.eval(&x.expr, &Item::Node(d2.context), 1, 1).iter().map(|i| ev.string_of(i)).collect::<Vec<_>>()
        };
        assert_eq!(s("@n"), ["2"]);
        assert_eq!(s("../@a"), ["1"]);
    }

    #[test]
    fn singleton_rules_and_syntax_errors() {
        let many = |q: &str| may_be_many(&compile(q, "value").unwrap().expr);
        assert!(many("event/@timestamp"));
        assert!(!many("(event/@timestamp)[1]"));
        assert!(!many("@timestamp"));
        assert!(!many("(data[@name=\"x\"]/value)[1]"));
        assert_eq!(compile("a[", "value").unwrap_err().number, 2209);
        assert_eq!(compile("a b", "value").unwrap_err().number, 2370);
        assert_eq!(compile("foo(1)", "value").unwrap_err().number, 2395);
    }
}
