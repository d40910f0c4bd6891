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

/// Is `word` (any case) one of SQL Server's reserved keywords?
pub fn is_reserved(word: &str) -> bool {
    if word.len() > MAX_KEYWORD_LEN || !word.is_ascii() {
        return false;
    }
    // Upper-case into a stack buffer: this runs for every word the lexer sees.
    let mut buf = [0u8; MAX_KEYWORD_LEN];
    let bytes = word.as_bytes();
    for (dst, src) in buf.iter_mut().zip(bytes) {
        *dst = src.to_ascii_uppercase();
    }
    let upper = &buf[..bytes.len()];
    RESERVED.binary_search_by(|k| k.as_bytes().cmp(upper)).is_ok()
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
        assert!(RESERVED.iter().all(|k| k.len() <= MAX_KEYWORD_LEN));
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
