//! The SQL Server errors the lexer and parser raise. All are severity 15 (a syntax error:
//! the batch is not run), state 1, with the line of the offending token.

use types::SqlError;

/// Msg 102 "Incorrect syntax near '%.*ls'."
pub fn incorrect_syntax(near: &str, line: u32) -> SqlError {
    SqlError::new(102, 15, 1, format!("Incorrect syntax near '{near}'.")).at_line(line)
}

/// Msg 156 "Incorrect syntax near the keyword '%.*ls'." (a reserved keyword where it
/// cannot appear).
pub fn incorrect_syntax_keyword(keyword: &str, line: u32) -> SqlError {
    SqlError::new(156, 15, 1, format!("Incorrect syntax near the keyword '{keyword}'.")).at_line(line)
}

/// Msg 103: a delimited or regular identifier longer than 128 characters.
pub fn identifier_too_long(text: &str, line: u32) -> SqlError {
    let start: String = text.chars().take(MAX_IDENTIFIER_LEN).collect();
    SqlError::new(
        103,
        15,
        4,
        format!("The identifier that starts with '{start}' is too long. Maximum length is {MAX_IDENTIFIER_LEN}."),
    )
    .at_line(line)
}

/// Msg 105 "Unclosed quotation mark after the character string '%.*ls'." (`rest` is the
/// text after the opening quote, to the end of the batch).
pub fn unclosed_quote(rest: &str, line: u32) -> SqlError {
    SqlError::new(105, 15, 1, format!("Unclosed quotation mark after the character string '{rest}'.")).at_line(line)
}

/// Msg 113 "Missing end comment mark '*/'."
pub fn missing_end_comment(line: u32) -> SqlError {
    SqlError::new(113, 15, 1, "Missing end comment mark '*/'.").at_line(line)
}

/// Msg 1038: `[]` or `""` used as a name.
pub fn empty_identifier(line: u32) -> SqlError {
    SqlError::new(
        1038,
        15,
        4,
        "An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. \
         For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. \
         Change the alias to a valid name.",
    )
    .at_line(line)
}

/// Msg 191: the statement nests deeper than the parser allows.
pub fn nested_too_deeply(line: u32) -> SqlError {
    SqlError::new(
        191,
        15,
        1,
        "Some part of your SQL statement is nested too deeply. Rewrite the query or break it up into smaller queries.",
    )
    .at_line(line)
}

/// Msg 111: CREATE PROCEDURE/VIEW/FUNCTION/TRIGGER after another statement in the batch.
pub fn must_be_first_in_batch(what: &str, line: u32) -> SqlError {
    SqlError::new(111, 15, 1, format!("'{what}' must be the first statement in a query batch.")).at_line(line)
}

/// Msg 10713: MERGE without its mandatory terminating semicolon.
pub fn merge_needs_semicolon(line: u32) -> SqlError {
    SqlError::new(10713, 15, 1, "A MERGE statement must be terminated by a semi-colon (;).").at_line(line)
}

/// Msg 10714: a second WHEN clause of the same kind with the same action (`when` is
/// 'WHEN MATCHED', 'WHEN NOT MATCHED' or 'WHEN NOT MATCHED BY SOURCE').
pub fn merge_duplicate_action(when: &str, action: &str, line: u32) -> SqlError {
    SqlError::new(
        10714,
        15,
        1,
        format!("An action of type '{when}' cannot appear more than once in a '{action}' clause of a MERGE statement."),
    )
    .at_line(line)
}

/// The longest identifier SQL Server accepts (sysname is nvarchar(128)).
pub const MAX_IDENTIFIER_LEN: usize = 128;
