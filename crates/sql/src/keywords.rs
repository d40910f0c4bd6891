//! SQL Server's reserved keywords.
//!
//! T-SQL distinguishes *reserved* keywords, which can only be used as identifiers when
//! delimited (`[select]`, `"select"`), from the many *non-reserved* words that have meaning
//! only in some statements (`name`, `size`, `filename`, `RECOVERY`, `NOCOUNT`, `THROW`, ...)
//! and are ordinary identifiers everywhere else. The list below is SQL Server's (the
//! "Reserved Keywords (Transact-SQL)" page), minus the ODBC and future-keyword lists, which
//! SQL Server itself does not enforce.
//!
//! Decision: `WITHIN` (listed as "WITHIN GROUP" in recent documentation) is treated as
//! non-reserved, so that a column called `within` keeps working; `WITHIN GROUP` after an
//! aggregate is still recognised by position. Likewise `PRECISION`: SQL Server accepts it
//! as a column name (mssql-jdbc's DatabaseMetaData.getColumns declares a table variable
//! with a `PRECISION INT` column and selects `PRECISION AS COLUMN_SIZE`), and `DOUBLE
//! PRECISION` is recognised by position.

/// The reserved keywords, upper case, sorted for binary search.
const RESERVED: &[&str] = &[
    "ADD",
    "ALL",
    "ALTER",
    "AND",
    "ANY",
    "AS",
    "ASC",
    "AUTHORIZATION",
    "BACKUP",
    "BEGIN",
    "BETWEEN",
    "BREAK",
    "BROWSE",
    "BULK",
    "BY",
    "CASCADE",
    "CASE",
    "CHECK",
    "CHECKPOINT",
    "CLOSE",
    "CLUSTERED",
    "COALESCE",
    "COLLATE",
    "COLUMN",
    "COMMIT",
    "COMPUTE",
    "CONSTRAINT",
    "CONTAINS",
    "CONTAINSTABLE",
    "CONTINUE",
    "CONVERT",
    "CREATE",
    "CROSS",
    "CURRENT",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURSOR",
    "DATABASE",
    "DBCC",
    "DEALLOCATE",
    "DECLARE",
    "DEFAULT",
    "DELETE",
    "DENY",
    "DESC",
    "DISK",
    "DISTINCT",
    "DISTRIBUTED",
    "DOUBLE",
    "DROP",
    "DUMP",
    "ELSE",
    "END",
    "ERRLVL",
    "ESCAPE",
    "EXCEPT",
    "EXEC",
    "EXECUTE",
    "EXISTS",
    "EXIT",
    "EXTERNAL",
    "FETCH",
    "FILE",
    "FILLFACTOR",
    "FOR",
    "FOREIGN",
    "FREETEXT",
    "FREETEXTTABLE",
    "FROM",
    "FULL",
    "FUNCTION",
    "GOTO",
    "GRANT",
    "GROUP",
    "HAVING",
    "HOLDLOCK",
    "IDENTITY",
    "IDENTITYCOL",
    "IDENTITY_INSERT",
    "IF",
    "IN",
    "INDEX",
    "INNER",
    "INSERT",
    "INTERSECT",
    "INTO",
    "IS",
    "JOIN",
    "KEY",
    "KILL",
    "LEFT",
    "LIKE",
    "LINENO",
    "LOAD",
    "MERGE",
    "NATIONAL",
    "NOCHECK",
    "NONCLUSTERED",
    "NOT",
    "NULL",
    "NULLIF",
    "OF",
    "OFF",
    "OFFSETS",
    "ON",
    "OPEN",
    "OPENDATASOURCE",
    "OPENQUERY",
    "OPENROWSET",
    "OPENXML",
    "OPTION",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PERCENT",
    "PIVOT",
    "PLAN",
    "PRIMARY",
    "PRINT",
    "PROC",
    "PROCEDURE",
    "PUBLIC",
    "RAISERROR",
    "READ",
    "READTEXT",
    "RECONFIGURE",
    "REFERENCES",
    "REPLICATION",
    "RESTORE",
    "RESTRICT",
    "RETURN",
    "REVERT",
    "REVOKE",
    "RIGHT",
    "ROLLBACK",
    "ROWCOUNT",
    "ROWGUIDCOL",
    "RULE",
    "SAVE",
    "SCHEMA",
    "SECURITYAUDIT",
    "SELECT",
    "SEMANTICKEYPHRASETABLE",
    "SEMANTICSIMILARITYDETAILSTABLE",
    "SEMANTICSIMILARITYTABLE",
    "SESSION_USER",
    "SET",
    "SETUSER",
    "SHUTDOWN",
    "SOME",
    "STATISTICS",
    "SYSTEM_USER",
    "TABLE",
    "TABLESAMPLE",
    "TEXTSIZE",
    "THEN",
    "TO",
    "TOP",
    "TRAN",
    "TRANSACTION",
    "TRIGGER",
    "TRUNCATE",
    "TRY_CONVERT",
    "TSEQUAL",
    "UNION",
    "UNIQUE",
    "UNPIVOT",
    "UPDATE",
    "UPDATETEXT",
    "USE",
    "USER",
    "VALUES",
    "VARYING",
    "VIEW",
    "WAITFOR",
    "WHEN",
    "WHERE",
    "WHILE",
    "WITH",
    "WRITETEXT",
];

/// The longest reserved keyword; longer words are never reserved.
const MAX_KEYWORD_LEN: usize = 30;

/// A word of up to 32 bytes as four little-endian u64s, upper-cased by `& 0xDF` per
/// byte and zero-padded. For words made of letters and `_` (the only bytes in keywords)
/// the masking is exact case folding; the lexer's words may also hold digits, `@`, `#`,
/// `$` and non-ASCII bytes, none of which the mask turns into a letter or `_`, so equal
/// chunks still mean the same word ignoring case.
type Chunks = [u64; 4];

const FOLD: u64 = 0xDFDF_DFDF_DFDF_DFDF;

const fn chunks(word: &[u8]) -> Chunks {
    let mut buf = [0u8; 32];
    let mut i = 0;
    while i < word.len() {
        buf[i] = word[i];
        i += 1;
    }
    let mut out = [0u64; 4];
    let mut k = 0;
    while k < 4 {
        let b = [
            buf[8 * k],
            buf[8 * k + 1],
            buf[8 * k + 2],
            buf[8 * k + 3],
            buf[8 * k + 4],
            buf[8 * k + 5],
            buf[8 * k + 6],
            buf[8 * k + 7],
        ];
        out[k] = u64::from_le_bytes(b) & FOLD;
        k += 1;
    }
    out
}

/// Slots of the keyword hash table (a power of two, about three times the keywords, so
/// a probe sequence is one or two slots long).
const TABLE_BITS: u32 = 9;
const TABLE_SIZE: usize = 1 << TABLE_BITS;

const fn slot_of(c: &Chunks) -> usize {
    let h =
        (c[0] ^ c[1].rotate_left(17) ^ c[2].rotate_left(31) ^ c[3].rotate_left(47)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - TABLE_BITS)) as usize
}

/// The keywords' chunks, in `RESERVED` order.
const KEYWORD_CHUNKS: [Chunks; RESERVED.len()] = {
    let mut t = [[0u64; 4]; RESERVED.len()];
    let mut k = 0;
    while k < RESERVED.len() {
        t[k] = chunks(RESERVED[k].as_bytes());
        k += 1;
    }
    t
};

/// Open-addressing table of `RESERVED` indices plus one (0 = empty slot), built at
/// compile time: the lexer asks it about every word it sees (a binary search over the
/// sorted list cost about eight string comparisons per word).
const TABLE: [u8; TABLE_SIZE] = {
    assert!(RESERVED.len() < 255);
    let mut t = [0u8; TABLE_SIZE];
    let mut k = 0;
    while k < RESERVED.len() {
        let mut slot = slot_of(&KEYWORD_CHUNKS[k]);
        while t[slot] != 0 {
            slot = (slot + 1) & (TABLE_SIZE - 1);
        }
        t[slot] = (k + 1) as u8;
        k += 1;
    }
    t
};

/// Is `word` (any case) one of SQL Server's reserved keywords?
pub fn is_reserved(word: &str) -> bool {
    // Keywords are letters and `_`; anything else (which the folding in `Chunks` would
    // not treat exactly) is not one.
    word.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_') && is_reserved_word(word.as_bytes())
}

/// [`is_reserved`] for a word as the lexer scans it: identifier characters only.
#[inline]
pub(crate) fn is_reserved_word(word: &[u8]) -> bool {
    is_reserved_in(word, 0, word.len())
}

/// [`is_reserved_word`] for the word `text[start..end]`. The word's chunks are read
/// eight bytes at a time from `text` (masked to the word), which saves copying the word
/// into a zeroed buffer first.
#[inline]
pub(crate) fn is_reserved_in(text: &[u8], start: usize, end: usize) -> bool {
    let len = end.saturating_sub(start);
    if !(2..=MAX_KEYWORD_LEN).contains(&len) {
        return false;
    }
    let mut c = [0u64; 4];
    let mut from = start;
    for chunk in c.iter_mut() {
        if from >= end {
            break;
        }
        let n = (end - from).min(8);
        let word = match text.get(from..from + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
            Some(b) => u64::from_le_bytes(b),
            None => {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&text[from..from + n]);
                u64::from_le_bytes(b)
            }
        };
        let mask = if n == 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        *chunk = word & mask & FOLD;
        from += 8;
    }
    let mut slot = slot_of(&c);
    loop {
        match TABLE[slot] {
            0 => return false,
            k => {
                if KEYWORD_CHUNKS[k as usize - 1] == c {
                    return true;
                }
            }
        }
        slot = (slot + 1) & (TABLE_SIZE - 1);
    }
}

/// All reserved keywords (upper case, sorted).
pub fn reserved_keywords() -> &'static [&'static str] {
    RESERVED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_and_bounded() {
        for pair in RESERVED.windows(2) {
            assert!(pair[0] < pair[1], "{} >= {}", pair[0], pair[1]);
        }
        assert!(RESERVED.iter().all(|k| k.len() <= MAX_KEYWORD_LEN && k.len() >= 2));
    }

    #[test]
    fn every_keyword_is_found_in_any_case_and_near_misses_are_not() {
        for k in RESERVED {
            assert!(is_reserved(k), "{k}");
            assert!(is_reserved(&k.to_ascii_lowercase()), "{k}");
            assert!(!is_reserved(&format!("{k}X")), "{k}X");
            assert!(!is_reserved(&k[1..]) || RESERVED.contains(&&k[1..]), "{k}");
        }
        // Bytes the hash folds onto keyword bytes (DEL onto `_`) and non-ASCII do not match.
        for w in ["IDENTITY\u{7f}INSERT", "\u{c9}ND", "SELEC\u{d4}", "0R", "", "a"] {
            assert!(!is_reserved(w), "{w:?}");
        }
    }

    #[test]
    fn reserved_vs_not() {
        for k in ["select", "Select", "FROM", "off", "percent", "file", "key", "Merge", "try_convert"] {
            assert!(is_reserved(k), "{k}");
        }
        for k in
            ["name", "size", "filename", "recovery", "nocount", "throw", "rows", "event", "within", "precision", "go"]
        {
            assert!(!is_reserved(k), "{k}");
        }
    }
}
