//! hierarchyid: a node's path from the root, `/1/3.2/-4/`, stored in SQL Server's
//! binary form ([MS-SSCLRT] "HIERARCHYID"): each integer of a level is a variable-length
//! bit field (a range prefix, the offset in the range with fixed separator bits, and an
//! F bit: 1 ends the level, 0 is a dot), the bits padded with zeros to whole bytes. The
//! encoding sorts as the tree's depth-first order byte by byte, so comparisons, ORDER BY
//! and index keys compare the bytes.
//!
//! The integer before a dot is stored plus one (`/1.5/` stores 2 then 5), which places
//! `/1.x/` after `/1/` and before `/2/`. Labels outside -4,294,971,464..4,294,972,495 (the
//! 48-bit ranges) are not supported.

use crate::error::SqlError;

/// The largest encoding SQL Server allows (sys.types max_length).
pub const MAX_BYTES: usize = 892;

/// One label range: its first value, the pattern after the range prefix bits, as written
/// in the spec: `x` an offset bit (most significant first), `0`/`1` fixed bits, `T` the
/// F bit.
struct Pattern {
    min: i64,
    max: i64,
    bits: &'static str,
}

const PATTERNS: &[Pattern] = &[
    Pattern { min: -4_294_971_464, max: -4169, bits: "000101xxxxxxxxxxxxxxxxxxx0xxxxxx0xxx0x1xxxT" },
    Pattern { min: -4168, max: -73, bits: "000110xxxxx0xxx0x1xxxT" },
    Pattern { min: -72, max: -9, bits: "0010xx0x1xxxT" },
    Pattern { min: -8, max: -1, bits: "00111xxxT" },
    Pattern { min: 0, max: 3, bits: "01xxT" },
    Pattern { min: 4, max: 7, bits: "100xxT" },
    Pattern { min: 8, max: 15, bits: "101xxxT" },
    Pattern { min: 16, max: 79, bits: "110xx0x1xxxT" },
    Pattern { min: 80, max: 1103, bits: "1110xxx0xxx0x1xxxT" },
    Pattern { min: 1104, max: 5199, bits: "11110xxxxx0xxx0x1xxxT" },
    Pattern { min: 5200, max: 4_294_972_495, bits: "111110xxxxxxxxxxxxxxxxxxx0xxxxxx0xxx0x1xxxT" },
];

/// The range prefix of a pattern: its bits before the first `x`.
fn prefix(p: &Pattern) -> &'static str {
    &p.bits[..p.bits.find('x').unwrap_or(p.bits.len())]
}

/// A node: its levels, each a list of integers (`/1.2/3/` is `[[1, 2], [3]]`); the root
/// has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HierarchyId {
    pub levels: Vec<Vec<i64>>,
}

/// SQL Server raises a .NET exception inside the CLR type as error 6522.
pub fn clr_error(exception: &str, detail: &str) -> SqlError {
    SqlError::new(
        6522,
        16,
        2,
        format!(
            "A .NET Framework error occurred during execution of user-defined routine or aggregate \"hierarchyid\": \n{exception}: {detail}"
        ),
    )
}

fn parse_failed(text: &str) -> SqlError {
    clr_error(
        "System.FormatException",
        &format!(
            "24001: SqlHierarchyId.Parse failed because the input string '{text}' is not a valid string representation of a SqlHierarchyId node."
        ),
    )
}

fn too_long() -> SqlError {
    clr_error(
        "Microsoft.SqlServer.Types.HierarchyIdException",
        "24002: SqlHierarchyId operation failed because the resulting representation exceeds 892 bytes.",
    )
}

impl HierarchyId {
    pub fn root() -> HierarchyId {
        HierarchyId { levels: Vec::new() }
    }

    /// Parses `/`, `/1/`, `/1.2/-3/` (SqlHierarchyId.Parse).
    pub fn parse(text: &str) -> Result<HierarchyId, SqlError> {
        let t = text.trim();
        let inner = t.strip_prefix('/').and_then(|r| if r.is_empty() { Some(r) } else { r.strip_suffix('/') });
        let Some(inner) = inner else { return Err(parse_failed(text)) };
        let mut levels = Vec::new();
        if !inner.is_empty() {
            for level in inner.split('/') {
                let mut parts = Vec::new();
                for p in level.split('.') {
                    let v: i64 = p.parse().map_err(|_| parse_failed(text))?;
                    if !PATTERNS.iter().any(|r| r.min <= v && v <= r.max) {
                        return Err(parse_failed(text));
                    }
                    parts.push(v);
                }
                levels.push(parts);
            }
        }
        let h = HierarchyId { levels };
        h.encode()?;
        Ok(h)
    }

    /// The binary form (empty for the root).
    pub fn encode(&self) -> Result<Vec<u8>, SqlError> {
        let mut bits: Vec<bool> = Vec::new();
        for level in &self.levels {
            for (i, &v) in level.iter().enumerate() {
                let last = i + 1 == level.len();
                // The integer before a dot is stored plus one.
                let stored = if last { v } else { v.checked_add(1).ok_or_else(too_long)? };
                let p = PATTERNS.iter().find(|r| r.min <= stored && stored <= r.max).ok_or_else(too_long)?;
                let offset = (stored - p.min) as u64;
                let width = p.bits.bytes().filter(|&b| b == b'x').count();
                let mut k = width;
                for b in p.bits.bytes() {
                    match b {
                        b'0' => bits.push(false),
                        b'1' => bits.push(true),
                        b'x' => {
                            k -= 1;
                            bits.push(offset >> k & 1 == 1);
                        }
                        _ => bits.push(last),
                    }
                }
            }
        }
        let mut out = vec![0u8; bits.len().div_ceil(8)];
        for (i, b) in bits.iter().enumerate() {
            if *b {
                out[i / 8] |= 0x80 >> (i % 8);
            }
        }
        if out.len() > MAX_BYTES {
            return Err(too_long());
        }
        Ok(out)
    }

    /// Reads the binary form; None when it is not a valid encoding.
    pub fn decode(bytes: &[u8]) -> Option<HierarchyId> {
        let total = bytes.len() * 8;
        let bit = |i: usize| bytes.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0);
        let mut at = 0;
        let mut levels = Vec::new();
        let mut current = Vec::new();
        loop {
            // Only zero padding (less than a byte) may follow the last field.
            if (at..total).all(|i| !bit(i)) {
                if total - at >= 8 || !current.is_empty() {
                    return None;
                }
                break;
            }
            let p = PATTERNS.iter().find(|p| {
                let pre = prefix(p);
                at + p.bits.len() <= total && pre.bytes().enumerate().all(|(k, c)| bit(at + k) == (c == b'1'))
            })?;
            let mut offset: u64 = 0;
            let mut last = false;
            for (k, c) in p.bits.bytes().enumerate().skip(prefix(p).len()) {
                let b = bit(at + k);
                match c {
                    b'x' => offset = offset << 1 | u64::from(b),
                    b'0' if b => return None,
                    b'1' if !b => return None,
                    b'T' => last = b,
                    _ => {}
                }
            }
            at += p.bits.len();
            let stored = p.min.checked_add(offset as i64)?;
            if stored > p.max {
                return None;
            }
            if last {
                current.push(stored);
                levels.push(std::mem::take(&mut current));
            } else {
                current.push(stored - 1);
            }
        }
        Some(HierarchyId { levels })
    }

    /// The logical form: `/`, `/1/2.5/`.
    pub fn to_text(&self) -> String {
        let mut s = String::from("/");
        for l in &self.levels {
            let parts: Vec<String> = l.iter().map(|v| v.to_string()).collect();
            s.push_str(&parts.join("."));
            s.push('/');
        }
        s
    }

    /// GetLevel(): the root is 0.
    pub fn level(&self) -> usize {
        self.levels.len()
    }

    /// GetAncestor(n): None past the root.
    pub fn ancestor(&self, n: usize) -> Option<HierarchyId> {
        (n <= self.levels.len()).then(|| HierarchyId { levels: self.levels[..self.levels.len() - n].to_vec() })
    }

    /// IsDescendantOf(parent): true for the node itself too.
    pub fn is_descendant_of(&self, parent: &HierarchyId) -> bool {
        self.levels.starts_with(&parent.levels)
    }

    /// GetReparentedValue(old_root, new_root): None when this node is not under old_root.
    pub fn reparented(&self, old_root: &HierarchyId, new_root: &HierarchyId) -> Result<HierarchyId, SqlError> {
        if !self.is_descendant_of(old_root) {
            return Err(clr_error(
                "Microsoft.SqlServer.Types.HierarchyIdException",
                &format!(
                    "24009: SqlHierarchyId.GetReparentedValue failed because 'oldRoot' was not an ancestor node of 'this'.  'oldRoot' was '{}', and 'this' was '{}'.",
                    old_root.to_text(),
                    self.to_text()
                ),
            ));
        }
        let mut levels = new_root.levels.clone();
        levels.extend_from_slice(&self.levels[old_root.levels.len()..]);
        let h = HierarchyId { levels };
        h.encode()?;
        Ok(h)
    }

    /// GetDescendant(child1, child2): a child of this node after `c1` and before `c2`
    /// (either may be absent).
    pub fn descendant(&self, c1: Option<&HierarchyId>, c2: Option<&HierarchyId>) -> Result<HierarchyId, SqlError> {
        let child_label = |c: &HierarchyId, name: &str| -> Result<Vec<i64>, SqlError> {
            if c.levels.len() != self.levels.len() + 1 || !c.is_descendant_of(self) {
                return Err(clr_error(
                    "Microsoft.SqlServer.Types.HierarchyIdException",
                    &format!(
                        "24004: SqlHierarchyId.GetDescendant failed because '{name}' must be a child of 'this'.  '{name}' was '{}' and 'this' was '{}'.",
                        c.to_text(),
                        self.to_text()
                    ),
                ));
            }
            Ok(c.levels.last().cloned().unwrap_or_default())
        };
        let label = match (c1, c2) {
            (None, None) => vec![1],
            (Some(a), None) => {
                let a = child_label(a, "child1")?;
                vec![a[0].checked_add(1).ok_or_else(too_long)?]
            }
            (None, Some(b)) => {
                let b = child_label(b, "child2")?;
                vec![b[0].checked_sub(1).ok_or_else(too_long)?]
            }
            (Some(a), Some(b)) => {
                let (ha, hb) = (a, b);
                let a = child_label(a, "child1")?;
                let b = child_label(b, "child2")?;
                if ha.encode()? >= hb.encode()? {
                    return Err(clr_error(
                        "Microsoft.SqlServer.Types.HierarchyIdException",
                        &format!(
                            "24006: SqlHierarchyId.GetDescendant failed because 'child1' must be less than 'child2'.  'child1' was '{}' and 'child2' was '{}'.",
                            ha.to_text(),
                            hb.to_text()
                        ),
                    ));
                }
                between(&a, &b)
            }
        };
        let mut levels = self.levels.clone();
        levels.push(label);
        let h = HierarchyId { levels };
        h.encode()?;
        Ok(h)
    }
}

/// A label after `a` and before `b` (`a` < `b` as labels of one level): the next integer
/// when there is room, else one more dotted component.
fn between(a: &[i64], b: &[i64]) -> Vec<i64> {
    match (a.first(), b.first()) {
        (Some(&x), Some(&y)) if x == y => {
            let mut out = vec![x];
            if a.len() == 1 {
                // After /x/ and before /x.b.../: /x.(b-1)/.
                out.push(b.get(1).copied().unwrap_or(1) - 1);
            } else {
                out.extend(between(&a[1..], &b[1..]));
            }
            out
        }
        (Some(&x), Some(&y)) if y - x >= 2 => vec![x + 1],
        (Some(&x), _) => {
            // Adjacent integers: after /x.../ with one more component.
            let mut out = vec![x];
            match a.get(1) {
                Some(&n) => out.push(n + 1),
                None => out.push(1),
            }
            out
        }
        (None, _) => vec![1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Vec<u8> {
        HierarchyId::parse(text).unwrap().encode().unwrap()
    }

    #[test]
    fn the_specifications_examples() {
        assert_eq!(bytes("/"), Vec::<u8>::new());
        assert_eq!(bytes("/1/"), vec![0x58]);
        assert_eq!(bytes("/1/-2.18/"), vec![0b0101_1001, 0b1111_1011, 0b0000_0101, 0b0100_0000]);
    }

    #[test]
    fn round_trips_and_orders_depth_first() {
        let nodes = [
            "/",
            "/-5000/",
            "/-70/",
            "/-3/",
            "/0/",
            "/1/",
            "/1/1/",
            "/1/1.1/",
            "/1/2/",
            "/1.0/",
            "/1.1/",
            "/2/",
            "/3/1/",
            "/7/",
            "/15/",
            "/79/",
            "/80/",
            "/1103/",
            "/1104/",
            "/5199/",
            "/5200/",
            "/4294972495/",
        ];
        let mut prev: Option<Vec<u8>> = None;
        for n in nodes {
            let b = bytes(n);
            let back = HierarchyId::decode(&b).unwrap();
            assert_eq!(back.to_text(), n, "{n}");
            if let Some(p) = &prev {
                assert!(p < &b, "{n} sorts after the previous node");
            }
            prev = Some(b);
        }
    }

    #[test]
    fn bad_text_and_bytes_are_rejected() {
        for t in ["", "1/", "/1", "/a/", "/1//", "/1..2/", "/99999999999999/"] {
            assert!(HierarchyId::parse(t).is_err(), "{t}");
        }
        assert!(HierarchyId::decode(&[0xFF]).is_none());
        assert!(HierarchyId::decode(&[0x58, 0x00]).is_none());
    }

    #[test]
    fn methods() {
        let h = HierarchyId::parse("/1/2/3/").unwrap();
        assert_eq!(h.level(), 3);
        assert_eq!(h.ancestor(1).unwrap().to_text(), "/1/2/");
        assert_eq!(h.ancestor(3).unwrap().to_text(), "/");
        assert!(h.ancestor(4).is_none());
        let p = HierarchyId::parse("/1/").unwrap();
        assert!(h.is_descendant_of(&p) && !p.is_descendant_of(&h) && p.is_descendant_of(&p));
        let moved = h.reparented(&p, &HierarchyId::parse("/5/").unwrap()).unwrap();
        assert_eq!(moved.to_text(), "/5/2/3/");
        let d = |a: Option<&str>, b: Option<&str>| {
            let a = a.map(|x| HierarchyId::parse(x).unwrap());
            let b = b.map(|x| HierarchyId::parse(x).unwrap());
            p.descendant(a.as_ref(), b.as_ref()).map(|h| h.to_text())
        };
        assert_eq!(d(None, None).unwrap(), "/1/1/");
        assert_eq!(d(Some("/1/3/"), None).unwrap(), "/1/4/");
        assert_eq!(d(None, Some("/1/3/")).unwrap(), "/1/2/");
        assert_eq!(d(Some("/1/1/"), Some("/1/3/")).unwrap(), "/1/2/");
        assert_eq!(d(Some("/1/1/"), Some("/1/2/")).unwrap(), "/1/1.1/");
        assert_eq!(d(Some("/1/1.1/"), Some("/1/2/")).unwrap(), "/1/1.2/");
        assert_eq!(d(Some("/1/1/"), Some("/1/1.1/")).unwrap(), "/1/1.0/");
        assert!(d(Some("/1/3/"), Some("/1/2/")).is_err());
        assert!(d(Some("/2/1/"), None).is_err());
    }
}
