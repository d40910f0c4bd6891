//! JSON text: a parser that keeps every value's place in the source, JSON paths
//! (`[append] [lax | strict] $.a.b[0]."c d"`), and the functions built on them: ISJSON,
//! JSON_VALUE, JSON_QUERY, JSON_MODIFY, JSON_ARRAY, JSON_OBJECT, the rows of OPENJSON,
//! and how a SQL value is written as JSON (FOR JSON, JSON_MODIFY's new value).
//!
//! Rules and decisions:
//! - Errors are SQL Server's: 13609 "JSON text is not properly formatted. Unexpected
//!   character 'x' is found at position n." (n counts characters from 0), 13607 for a
//!   path, 13608 (strict path not found), 13623 (JSON_VALUE strict: not a scalar),
//!   13624 (JSON_QUERY strict: not an object or array), 13625 (JSON_VALUE strict: string
//!   longer than 4000 characters), 13611 (OPENJSON over a scalar).
//! - Values keep their source text: JSON_QUERY and OPENJSON return objects and arrays as
//!   written (whitespace included), numbers keep their digits. JSON_MODIFY splices the
//!   source, so the rest of the document keeps its formatting.
//! - Object keys may repeat; a path takes the first match (as SQL Server's does).

use types::{SqlError, SqlType, Value};

/// A parsed JSON value with its byte range in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    /// The number's text is the node's source range.
    Number,
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    /// Byte offset of the key's opening quote (JSON_MODIFY removes from here).
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    /// OPENJSON's type column: 0 null, 1 string, 2 number, 3 true/false, 4 array,
    /// 5 object.
    pub fn type_code(&self) -> u8 {
        match self.kind {
            Kind::Null => 0,
            Kind::String(_) => 1,
            Kind::Number => 2,
            Kind::Bool(_) => 3,
            Kind::Array(_) => 4,
            Kind::Object(_) => 5,
        }
    }

    pub fn is_container(&self) -> bool {
        matches!(self.kind, Kind::Array(_) | Kind::Object(_))
    }

    /// The value as JSON_VALUE and OPENJSON show a scalar: strings unescaped, numbers and
    /// true/false as written; None for null.
    pub fn scalar_text(&self, src: &str) -> Option<String> {
        match &self.kind {
            Kind::Null => None,
            Kind::String(s) => Some(s.clone()),
            _ => Some(src[self.start..self.end].to_string()),
        }
    }
}

// ---- errors ------------------------------------------------------------------------

/// Msg 13609 at byte offset `at` of `src`.
fn bad_text(src: &str, at: usize) -> SqlError {
    let at = at.min(src.len());
    let pos = src[..at].chars().count();
    let ch = src[at..].chars().next().map(String::from).unwrap_or_default();
    SqlError::new(
        13609,
        16,
        4,
        format!("JSON text is not properly formatted. Unexpected character '{ch}' is found at position {pos}."),
    )
}

/// Msg 13607 at byte offset `at` of the path.
fn bad_path(path: &str, at: usize) -> SqlError {
    let at = at.min(path.len());
    let pos = path[..at].chars().count();
    let ch = path[at..].chars().next().map(String::from).unwrap_or_default();
    SqlError::new(
        13607,
        16,
        4,
        format!("JSON path is not properly formatted. Unexpected character '{ch}' is found at position {pos}."),
    )
}

fn not_found() -> SqlError {
    SqlError::new(13608, 16, 1, "Property cannot be found on the specified JSON path.")
}

// ---- parsing -----------------------------------------------------------------------

/// Parses a whole JSON text (one value, whitespace around it).
pub fn parse(src: &str) -> Result<Node, SqlError> {
    let mut p = Parser { s: src.as_bytes(), src, i: 0, depth: 0 };
    p.ws();
    let node = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(bad_text(src, p.i));
    }
    Ok(node)
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    depth: usize,
}

/// Deeper nesting is refused rather than risking the thread's stack.
const MAX_DEPTH: usize = 128;

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn err(&self) -> SqlError {
        bad_text(self.src, self.i)
    }

    fn value(&mut self) -> Result<Node, SqlError> {
        let start = self.i;
        let kind = match self.s.get(self.i) {
            Some(b'{') => {
                self.enter()?;
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        if self.s.get(self.i) != Some(&b'"') {
                            return Err(self.err());
                        }
                        let key_start = self.i;
                        let key = self.string()?;
                        self.ws();
                        if self.s.get(self.i) != Some(&b':') {
                            return Err(self.err());
                        }
                        self.i += 1;
                        self.ws();
                        let value = self.value()?;
                        members.push(Member { key, key_start, value });
                        self.ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err()),
                        }
                    }
                }
                self.depth -= 1;
                Kind::Object(members)
            }
            Some(b'[') => {
                self.enter()?;
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        items.push(self.value()?);
                        self.ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.err()),
                        }
                    }
                }
                self.depth -= 1;
                Kind::Array(items)
            }
            Some(b'"') => Kind::String(self.string()?),
            Some(b't') => self.word("true", Kind::Bool(true))?,
            Some(b'f') => self.word("false", Kind::Bool(false))?,
            Some(b'n') => self.word("null", Kind::Null)?,
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                Kind::Number
            }
            _ => return Err(self.err()),
        };
        Ok(Node { kind, start, end: self.i })
    }

    fn enter(&mut self) -> Result<(), SqlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err());
        }
        Ok(())
    }

    fn word(&mut self, w: &str, kind: Kind) -> Result<Kind, SqlError> {
        for &b in w.as_bytes() {
            if self.s.get(self.i) != Some(&b) {
                return Err(self.err());
            }
            self.i += 1;
        }
        Ok(kind)
    }

    fn digits(&mut self) -> usize {
        let from = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - from
    }

    fn number(&mut self) -> Result<(), SqlError> {
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match self.s.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err()),
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err());
            }
        }
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.s.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err());
            }
        }
        Ok(())
    }

    /// A string starting at the opening quote; returns its unescaped text.
    fn string(&mut self) -> Result<String, SqlError> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let run = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(&self.src[run..self.i]);
            match self.s.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = match self.s.get(self.i) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.s.get(self.i + 1) == Some(&b'\\')
                                && self.s.get(self.i + 2) == Some(&b'u')
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    char::from_u32(c).unwrap_or('\u{fffd}')
                                } else {
                                    self.i = save;
                                    '\u{fffd}'
                                }
                            } else {
                                char::from_u32(hi).unwrap_or('\u{fffd}')
                            }
                        }
                        _ => return Err(self.err()),
                    };
                    out.push(c);
                    self.i += 1;
                }
                _ => return Err(self.err()),
            }
        }
    }

    /// The 4 hex digits after `\u` (`self.i` at the `u`); leaves `self.i` on the last.
    fn hex4(&mut self) -> Result<u32, SqlError> {
        let mut v = 0;
        for _ in 0..4 {
            self.i += 1;
            let d = match self.s.get(self.i) {
                Some(&b) => (b as char).to_digit(16),
                None => None,
            };
            v = v * 16 + d.ok_or_else(|| self.err())?;
        }
        Ok(v)
    }
}

// ---- paths -------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub strict: bool,
    /// `append` (JSON_MODIFY only).
    pub append: bool,
    pub steps: Vec<Step>,
}

/// Parses a JSON path; `append` is accepted only where `allow_append`.
pub fn parse_path(text: &str, allow_append: bool) -> Result<Path, SqlError> {
    let b = text.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while b.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
    };
    let mut path = Path { strict: false, append: false, steps: Vec::new() };
    skip_ws(&mut i);
    // Mode words, each followed by whitespace.
    loop {
        let rest = &text[i..];
        let word_end = rest.find(|c: char| c.is_ascii_whitespace()).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word_end == rest.len() {
            break;
        }
        if allow_append && !path.append && word.eq_ignore_ascii_case("append") {
            path.append = true;
        } else if word.eq_ignore_ascii_case("lax") || word.eq_ignore_ascii_case("strict") {
            path.strict = word.eq_ignore_ascii_case("strict");
            i += word_end;
            skip_ws(&mut i);
            break;
        } else {
            break;
        }
        i += word_end;
        skip_ws(&mut i);
    }
    if b.get(i) != Some(&b'$') {
        return Err(bad_path(text, i));
    }
    i += 1;
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                if b.get(i) == Some(&b'"') {
                    let mut p = Parser { s: b, src: text, i, depth: 0 };
                    let key = p.string().map_err(|_| bad_path(text, p.i))?;
                    i = p.i;
                    path.steps.push(Step::Key(key));
                } else {
                    let from = i;
                    while i < b.len() && !matches!(b[i], b'.' | b'[') && !b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    let key = &text[from..i];
                    let ok = key
                        .chars()
                        .enumerate()
                        .all(|(k, c)| c.is_alphabetic() || c == '_' || c == '$' || (k > 0 && c.is_ascii_digit()));
                    if key.is_empty() || !ok {
                        let bad = key.char_indices().find(|&(k, c)| {
                            !(c.is_alphabetic() || c == '_' || c == '$' || (k > 0 && c.is_ascii_digit()))
                        });
                        return Err(bad_path(text, from + bad.map_or(key.len(), |(k, _)| k)));
                    }
                    path.steps.push(Step::Key(key.to_string()));
                }
            }
            b'[' => {
                i += 1;
                let from = i;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == from || b.get(i) != Some(&b']') {
                    return Err(bad_path(text, i));
                }
                let n = text[from..i].parse::<usize>().map_err(|_| bad_path(text, from))?;
                path.steps.push(Step::Index(n));
                i += 1;
            }
            _ => return Err(bad_path(text, i)),
        }
    }
    Ok(path)
}

/// The node a path leads to, if any.
pub fn find<'n>(root: &'n Node, steps: &[Step]) -> Option<&'n Node> {
    let mut cur = root;
    for s in steps {
        cur = match (s, &cur.kind) {
            (Step::Key(k), Kind::Object(members)) => &members.iter().find(|m| m.key == *k)?.value,
            (Step::Index(n), Kind::Array(items)) => items.get(*n)?,
            _ => return None,
        };
    }
    Some(cur)
}

// ---- functions ---------------------------------------------------------------------

/// ISJSON(text [, VALUE | ARRAY | OBJECT | SCALAR]): 1 or 0, never an error for bad
/// text. Without a constraint only an object or an array counts.
pub fn is_json(text: &str, constraint: Option<&str>) -> Result<bool, SqlError> {
    let Ok(node) = parse(text) else { return Ok(false) };
    let c = constraint.map(|c| c.trim().to_ascii_uppercase());
    Ok(match c.as_deref() {
        None => node.is_container(),
        Some("VALUE") => true,
        Some("ARRAY") => matches!(node.kind, Kind::Array(_)),
        Some("OBJECT") => matches!(node.kind, Kind::Object(_)),
        Some("SCALAR") => matches!(node.kind, Kind::String(_) | Kind::Number),
        Some(other) => return Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{other}'."))),
    })
}

/// JSON_VALUE(text, path): a scalar as nvarchar(4000).
pub fn value(text: &str, path: &str) -> Result<Option<String>, SqlError> {
    let path = parse_path(path, false)?;
    let root = parse(text)?;
    let Some(node) = find(&root, &path.steps) else {
        return if path.strict { Err(not_found()) } else { Ok(None) };
    };
    if node.is_container() {
        return if path.strict {
            Err(SqlError::new(13623, 16, 1, "Scalar value cannot be found in the specified JSON path."))
        } else {
            Ok(None)
        };
    }
    let v = node.scalar_text(text);
    if v.as_ref().is_some_and(|s| types::ucs2::len(&s) > 4000) {
        return if path.strict {
            Err(SqlError::new(13625, 16, 1, "String value in the specified JSON path would be truncated."))
        } else {
            Ok(None)
        };
    }
    Ok(v)
}

/// JSON_QUERY(text [, path]): an object or array as written.
pub fn query(text: &str, path: Option<&str>) -> Result<Option<String>, SqlError> {
    let path = parse_path(path.unwrap_or("$"), false)?;
    let root = parse(text)?;
    let Some(node) = find(&root, &path.steps) else {
        return if path.strict { Err(not_found()) } else { Ok(None) };
    };
    if !node.is_container() {
        return if path.strict {
            Err(SqlError::new(13624, 16, 1, "Object or array cannot be found in the specified JSON path."))
        } else {
            Ok(None)
        };
    }
    Ok(Some(text[node.start..node.end].to_string()))
}

/// JSON_MODIFY(text, path, new): `new` is the new value's JSON text, None for NULL
/// (which deletes the property in lax mode and writes null in strict mode).
pub fn modify(text: &str, path: &str, new: Option<&str>) -> Result<String, SqlError> {
    let path = parse_path(path, true)?;
    let root = parse(text)?;
    let Some((last, parent_steps)) = path.steps.split_last() else {
        // `$` itself: an append to a root array, or a replacement of the whole text.
        return match (&root.kind, path.append) {
            (Kind::Array(items), true) => Ok(append_item(text, &root, items, new.unwrap_or("null"))),
            (_, true) if path.strict => Err(not_found()),
            (_, true) => Ok(text.to_string()),
            (_, false) => Ok(new.unwrap_or("null").to_string()),
        };
    };
    let splice = |from: usize, to: usize, with: &str| format!("{}{}{}", &text[..from], with, &text[to..]);
    let Some(parent) = find(&root, parent_steps) else {
        return if path.strict { Err(not_found()) } else { Ok(text.to_string()) };
    };
    let target = find(parent, std::slice::from_ref(last));
    if path.append {
        return match target {
            Some(n) => match &n.kind {
                Kind::Array(items) => Ok(append_item(text, n, items, new.unwrap_or("null"))),
                // Not an array: strict mode cannot append, lax mode leaves the text.
                _ if path.strict => Err(not_found()),
                _ => Ok(text.to_string()),
            },
            None if path.strict => Err(not_found()),
            None => match (&parent.kind, last, new) {
                // Lax append to a missing key creates the array.
                (Kind::Object(members), Step::Key(k), Some(v)) => {
                    Ok(insert_member(text, parent, members, k, &format!("[{v}]")))
                }
                _ => Ok(text.to_string()),
            },
        };
    }
    match (target, new) {
        (Some(n), Some(v)) => Ok(splice(n.start, n.end, v)),
        (Some(n), None) if path.strict => Ok(splice(n.start, n.end, "null")),
        (Some(_), None) => {
            // Lax NULL deletes the property (an array element becomes null).
            match (&parent.kind, last) {
                (Kind::Object(members), Step::Key(k)) => {
                    let i = members.iter().position(|m| m.key == *k).unwrap_or(0);
                    let (from, to) = if i + 1 < members.len() {
                        (members[i].key_start, members[i + 1].key_start)
                    } else if i > 0 {
                        (members[i - 1].value.end, members[i].value.end)
                    } else {
                        (members[i].key_start, members[i].value.end)
                    };
                    Ok(splice(from, to, ""))
                }
                _ => {
                    let n = find(parent, std::slice::from_ref(last)).map(|n| (n.start, n.end));
                    Ok(n.map_or_else(|| text.to_string(), |(s, e)| splice(s, e, "null")))
                }
            }
        }
        (None, _) if path.strict => Err(not_found()),
        (None, None) => Ok(text.to_string()),
        (None, Some(v)) => match (&parent.kind, last) {
            (Kind::Object(members), Step::Key(k)) => Ok(insert_member(text, parent, members, k, v)),
            _ => Ok(text.to_string()),
        },
    }
}

fn append_item(text: &str, array: &Node, items: &[Node], v: &str) -> String {
    match items.last() {
        Some(last) => format!("{},{}{}", &text[..last.end], v, &text[last.end..]),
        None => format!("{}{}{}", &text[..array.end - 1], v, &text[array.end - 1..]),
    }
}

fn insert_member(text: &str, object: &Node, members: &[Member], key: &str, v: &str) -> String {
    let pair = format!("\"{}\":{}", escape(key), v);
    match members.last() {
        Some(last) => format!("{},{}{}", &text[..last.value.end], pair, &text[last.value.end..]),
        None => format!("{}{}{}", &text[..object.end - 1], pair, &text[object.end - 1..]),
    }
}

/// The rows of OPENJSON's default schema: (key, value, type) for each member of an
/// object or element of an array at `path`; no rows when a lax path finds nothing.
pub fn open_rows(text: &str, path: Option<&str>) -> Result<Vec<(String, Option<String>, u8)>, SqlError> {
    let (root, node) = open_target(text, path)?;
    let Some(node) = node.and_then(|steps| find(&root, &steps).cloned()) else { return Ok(Vec::new()) };
    let cell = |n: &Node| if n.is_container() { Some(text[n.start..n.end].to_string()) } else { n.scalar_text(text) };
    Ok(match &node.kind {
        Kind::Object(members) => members.iter().map(|m| (m.key.clone(), cell(&m.value), m.value.type_code())).collect(),
        Kind::Array(items) => items.iter().enumerate().map(|(i, n)| (i.to_string(), cell(n), n.type_code())).collect(),
        _ => return Err(not_container()),
    })
}

fn not_container() -> SqlError {
    SqlError::new(
        13611,
        16,
        1,
        "Value referenced by JSON path is not an array or object and cannot be opened with OPENJSON.",
    )
}

/// Parses OPENJSON's input and path; the steps are None when a lax path finds nothing.
fn open_target(text: &str, path: Option<&str>) -> Result<(Node, Option<Vec<Step>>), SqlError> {
    let path = parse_path(path.unwrap_or("$"), false)?;
    let root = parse(text)?;
    match find(&root, &path.steps) {
        Some(n) if !n.is_container() => Err(not_container()),
        Some(_) => Ok((root, Some(path.steps))),
        None if path.strict => Err(not_found()),
        None => Ok((root, None)),
    }
}

/// One column of OPENJSON ... WITH: its path and whether it is `AS JSON`.
pub struct OpenColumn<'a> {
    pub path: &'a str,
    pub as_json: bool,
}

/// The rows of OPENJSON with an explicit schema, as text cells (the caller converts
/// them to the column types): one row per element of the array (or the one object)
/// at `path`.
pub fn open_with(text: &str, path: Option<&str>, cols: &[OpenColumn]) -> Result<Vec<Vec<Option<String>>>, SqlError> {
    let (root, steps) = open_target(text, path)?;
    let Some(node) = steps.and_then(|s| find(&root, &s).cloned()) else { return Ok(Vec::new()) };
    let mut paths = Vec::with_capacity(cols.len());
    for c in cols {
        paths.push(parse_path(c.path, false)?);
    }
    let items: Vec<&Node> = match &node.kind {
        Kind::Array(items) => items.iter().collect(),
        Kind::Object(_) => vec![&node],
        _ => return Err(not_container()),
    };
    let mut rows = Vec::with_capacity(items.len());
    for item in items {
        let mut row = Vec::with_capacity(cols.len());
        for (c, p) in cols.iter().zip(&paths) {
            let found = find(item, &p.steps);
            let cell = match found {
                None if p.strict => return Err(not_found()),
                None => None,
                Some(n) if c.as_json => {
                    if n.is_container() {
                        Some(text[n.start..n.end].to_string())
                    } else if p.strict {
                        return Err(SqlError::new(
                            13624,
                            16,
                            1,
                            "Object or array cannot be found in the specified JSON path.",
                        ));
                    } else {
                        None
                    }
                }
                Some(n) if n.is_container() => {
                    if p.strict {
                        return Err(SqlError::new(
                            13623,
                            16,
                            1,
                            "Scalar value cannot be found in the specified JSON path.",
                        ));
                    }
                    None
                }
                Some(n) => n.scalar_text(text),
            };
            row.push(cell);
        }
        rows.push(row);
    }
    Ok(rows)
}

// ---- writing -----------------------------------------------------------------------

/// A string's JSON escape (without quotes): what STRING_ESCAPE(s, 'json') and FOR JSON
/// write.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    escape_into(s, &mut out);
    out
}

pub fn escape_into(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

/// Standard base64 with padding (FOR JSON and FOR XML write binary values so).
pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A non-NULL SQL value as FOR JSON and JSON_MODIFY write it: numbers bare, bit as
/// true/false, binary as a base64 string, dates and times in ISO 8601 (CONVERT style
/// 126), everything else as an escaped string. `is_json` marks text that already is
/// JSON (FOR JSON, JSON_QUERY, JSON_MODIFY results), written as it is.
pub fn write_value(v: &Value, ty: &SqlType, is_json: bool, out: &mut String) -> Result<(), SqlError> {
    use super::convert;
    let v = match v {
        Value::Variant(b) => return write_value(&b.value, &b.ty, false, out),
        v => v,
    };
    match ty {
        SqlType::Bit => out.push_str(if matches!(v, Value::Bit(false)) { "false" } else { "true" }),
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt => out.push_str(&v.to_string()),
        SqlType::Decimal { .. } | SqlType::Numeric { .. } | SqlType::Money | SqlType::SmallMoney => {
            let to = SqlType::VarChar { len: types::Length::Bounded(64) };
            let style = if matches!(ty, SqlType::Money | SqlType::SmallMoney) { Some(2) } else { None };
            match convert::convert(v, ty, &to, style)? {
                Value::String(s) => out.push_str(&s),
                other => out.push_str(&other.to_string()),
            }
        }
        SqlType::Float | SqlType::Real => match v {
            Value::Float(f) => out.push_str(&format_float(*f)),
            Value::Real(f) => out.push_str(&format_float(f64::from(*f))),
            other => out.push_str(&other.to_string()),
        },
        SqlType::Binary { .. } | SqlType::VarBinary { .. } => {
            if let Value::Binary(b) = v {
                out.push('"');
                out.push_str(&base64(b));
                out.push('"');
            }
        }
        SqlType::Date
        | SqlType::Time { .. }
        | SqlType::DateTime
        | SqlType::SmallDateTime
        | SqlType::DateTime2 { .. }
        | SqlType::DateTimeOffset { .. } => {
            let to = SqlType::NVarChar { len: types::Length::Bounded(64) };
            let s = convert::convert(v, ty, &to, Some(126))?;
            out.push('"');
            escape_into(&s.to_string(), out);
            out.push('"');
        }
        _ if is_json => out.push_str(&v.to_string()),
        _ => {
            out.push('"');
            match v {
                Value::String(s) => escape_into(s, out),
                other => {
                    let to = SqlType::NVarChar { len: types::Length::Max };
                    let s = convert::convert(other, ty, &to, None)?;
                    escape_into(&s.to_string(), out);
                }
            }
            out.push('"');
        }
    }
    Ok(())
}

/// JSON_ARRAY(values) and JSON_OBJECT(key, value, ...). `spec` is the hidden first
/// argument: `NULL` or `ABSENT` (the ON NULL clause), then after a `:` one flag per
/// argument, `1` where it already is JSON (a nested JSON_OBJECT, JSON_ARRAY,
/// JSON_QUERY ...), which is embedded as it is rather than quoted.
pub fn construct(spec: &str, args: &[Value], types: &[SqlType], object: bool) -> Result<String, SqlError> {
    let (mode, flags) = spec.split_once(':').unwrap_or((spec, ""));
    let absent = mode == "ABSENT";
    let is_json = |i: usize| flags.as_bytes().get(i) == Some(&b'1');
    let ty = |i: usize| types.get(i).cloned().unwrap_or_else(|| super::util::value_type(&args[i]));
    let step = if object { 2 } else { 1 };
    let mut out = String::from(if object { "{" } else { "[" });
    for i in (0..args.len()).step_by(step) {
        let v = i + step - 1;
        // A NULL key is an error whatever the NULL clause says. Number and text from a
        // probe of SQL Server 2025 published outside Microsoft's docs, which list
        // neither.
        if object && args[i].is_null() {
            return Err(SqlError::new(
                13638,
                16,
                1,
                "User error : Name parameter value in 'json_object' cannot be null",
            ));
        }
        if absent && args.get(v).is_none_or(Value::is_null) {
            continue;
        }
        if out.len() > 1 {
            out.push(',');
        }
        if object {
            let key = match &args[i] {
                Value::String(k) => k.clone(),
                k => {
                    let to = SqlType::NVarChar { len: types::Length::Max };
                    super::convert::convert(k, &ty(i), &to, None)?.to_string()
                }
            };
            out.push('"');
            escape_into(&key, &mut out);
            out.push_str("\":");
        }
        match args.get(v) {
            None | Some(Value::Null) => out.push_str("null"),
            Some(val) => write_value(val, &ty(v), is_json(v), &mut out)?,
        }
    }
    out.push(if object { '}' } else { ']' });
    Ok(out)
}

/// A float as JSON: the shortest text that reads back the same, without a trailing
/// `.0`.
fn format_float(f: f64) -> String {
    if f.is_finite() && f == f.trunc() && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_paths() {
        let t = r#"{"a": {"b": [1, "x\u0041", true, null]}, "c d": 2}"#;
        assert_eq!(value(t, "$.a.b[1]").unwrap().as_deref(), Some("xA"));
        assert_eq!(value(t, "$.\"c d\"").unwrap().as_deref(), Some("2"));
        assert_eq!(value(t, "$.a.b[3]").unwrap(), None);
        assert_eq!(query(t, Some("$.a")).unwrap().as_deref(), Some(r#"{"b": [1, "x\u0041", true, null]}"#));
        assert_eq!(value(t, "strict $.zz").unwrap_err().number, 13608);
        assert_eq!(value(t, "strict $.a").unwrap_err().number, 13623);
        assert_eq!(query(t, Some("strict $.c d")).unwrap_err().number, 13607);
        let e = parse("{\"a\":}").unwrap_err();
        assert_eq!(e.message, "JSON text is not properly formatted. Unexpected character '}' is found at position 5.");
        assert_eq!(parse_path("$a", false).unwrap_err().number, 13607);
    }

    #[test]
    fn modify_splices() {
        let t = r#"{"a":1,"b":[1]}"#;
        assert_eq!(modify(t, "$.a", Some("2")).unwrap(), r#"{"a":2,"b":[1]}"#);
        assert_eq!(modify(t, "$.c", Some("\"x\"")).unwrap(), r#"{"a":1,"b":[1],"c":"x"}"#);
        assert_eq!(modify(t, "$.a", None).unwrap(), r#"{"b":[1]}"#);
        assert_eq!(modify(t, "$.b", None).unwrap(), r#"{"a":1}"#);
        assert_eq!(modify(t, "append $.b", Some("2")).unwrap(), r#"{"a":1,"b":[1,2]}"#);
        assert_eq!(modify(t, "strict $.a", None).unwrap(), r#"{"a":null,"b":[1]}"#);
        assert_eq!(modify("{}", "$.k", Some("1")).unwrap(), r#"{"k":1}"#);
    }

    #[test]
    fn base64_padding() {
        assert_eq!(base64(b"M"), "TQ==");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"Man"), "TWFu");
    }
}
