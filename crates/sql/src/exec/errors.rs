//! SQL Server's messages for binding and execution errors, in one place.

use types::SqlError;

use crate::ast::Ident;

fn join(parts: &[Ident]) -> String {
    parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".")
}

/// Msg 208. SQL Server resolves a temporary table when the statement runs (deferred
/// name resolution), and that path reports state 0; a permanent table fails at compile
/// time with state 1.
pub fn invalid_object(name: &str) -> SqlError {
    let state = if name.starts_with('#') { 0 } else { 1 };
    SqlError::new(208, 16, state, format!("Invalid object name '{name}'."))
}

pub fn invalid_column(name: &str) -> SqlError {
    SqlError::new(207, 16, 1, format!("Invalid column name '{name}'."))
}

pub fn ambiguous_column(name: &str) -> SqlError {
    SqlError::new(209, 16, 1, format!("Ambiguous column name '{name}'."))
}

pub fn multipart_not_bound(parts: &[Ident]) -> SqlError {
    SqlError::new(4104, 16, 1, format!("The multi-part identifier \"{}\" could not be bound.", join(parts)))
}

pub fn must_declare(name: &str) -> SqlError {
    SqlError::new(137, 15, 2, format!("Must declare the scalar variable \"{name}\"."))
}

pub fn variable_declared(name: &str) -> SqlError {
    SqlError::new(
        134,
        15,
        1,
        format!("The variable name '{name}' has already been declared. Variable names must be unique within a query batch or stored procedure."),
    )
}

pub fn must_declare_table(name: &str) -> SqlError {
    SqlError::new(1087, 15, 2, format!("Must declare the table variable \"{name}\"."))
}

pub fn unknown_function(name: &str) -> SqlError {
    SqlError::new(195, 15, 10, format!("'{name}' is not a recognized built-in function name."))
}

/// A schema-qualified function name that names no function (4121).
pub fn unknown_udf(name: &crate::ast::ObjectName) -> SqlError {
    let first = name.parts.first().map(|p| p.value.as_str()).unwrap_or_default();
    SqlError::new(
        4121,
        16,
        1,
        format!(
            "Cannot find either column \"{first}\" or the user-defined function or aggregate \"{}\", or the name is ambiguous.",
            written(name)
        ),
    )
}

pub fn arg_count(name: &str, n: usize) -> SqlError {
    SqlError::new(174, 15, 1, format!("The {name} function requires {n} argument(s)."))
}

pub fn not_in_group_by(parts: &[Ident]) -> SqlError {
    SqlError::new(
        8120,
        16,
        1,
        format!(
            "Column '{}' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.",
            join(parts)
        ),
    )
}

pub fn aggregate_not_allowed() -> SqlError {
    SqlError::new(
        147,
        15,
        1,
        "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference.",
    )
}

pub fn subquery_multiple_rows() -> SqlError {
    SqlError::new(
        512,
        16,
        1,
        "Subquery returned more than 1 value. This is not permitted when the subquery follows =, !=, <, <= , >, >= or when the subquery is used as an expression.",
    )
}

pub fn subquery_one_column() -> SqlError {
    SqlError::new(
        116,
        16,
        1,
        "Only one expression can be specified in the select list when the subquery is not introduced with EXISTS.",
    )
}

pub fn order_by_position(n: usize) -> SqlError {
    let _ = n;
    SqlError::new(108, 16, 1, "The ORDER BY position number is out of range of the number of items in the select list.")
}

pub fn object_exists(name: &str) -> SqlError {
    SqlError::new(2714, 16, 6, format!("There is already an object named '{name}' in the database."))
}

pub fn cannot_drop(kind: &str, name: &str) -> SqlError {
    SqlError::new(
        3701,
        11,
        5,
        format!("Cannot drop the {kind} '{name}', because it does not exist or you do not have permission."),
    )
}

pub fn proc_not_found(name: &str) -> SqlError {
    SqlError::new(2812, 16, 62, format!("Could not find stored procedure '{name}'."))
}

/// 2760: a CREATE names a schema that does not exist (or that the user may not use).
pub fn schema_not_found(schema: Option<&crate::ast::Ident>) -> SqlError {
    SqlError::new(
        2760,
        16,
        1,
        format!(
            "The specified schema name \"{}\" either does not exist or you do not have permission to use it.",
            schema.map(|s| s.value.as_str()).unwrap_or_default()
        ),
    )
}

pub fn not_supported(what: &str) -> SqlError {
    SqlError::new(40000, 16, 1, format!("{what} is not supported by Mesquite yet."))
}

pub fn column_count_mismatch() -> SqlError {
    SqlError::new(213, 16, 1, "Column name or number of supplied values does not match table definition.")
}

pub fn insert_count_mismatch(more_columns: bool) -> SqlError {
    if more_columns {
        SqlError::new(
            109,
            15,
            1,
            "There are more columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.",
        )
    } else {
        SqlError::new(
            110,
            15,
            1,
            "There are fewer columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.",
        )
    }
}

/// A multi-part name as the user wrote it (`dbo.t`), for messages.
pub fn written(name: &crate::ast::ObjectName) -> String {
    join(&name.parts)
}

/// Msg 217: procedures, functions, views and dynamic SQL nest at most 32 levels.
pub fn nesting_exceeded() -> SqlError {
    SqlError::new(217, 16, 1, "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).")
}

/// Msg 1919: an index key column of a type no index can key on (the MAX types, xml,
/// text, ntext, image).
pub fn invalid_key_column(column: &str, table: &str) -> SqlError {
    SqlError::new(
        1919,
        16,
        1,
        format!(
            "Column '{column}' in table '{table}' is of a type that is invalid for use as a key column in an index."
        ),
    )
}

/// Msg 306 for text, ntext or image as an ORDER BY, GROUP BY, PARTITION BY or WITHIN
/// GROUP key (SQL Server's state 2), 249 naming `clause` for geometry and geography; Ok
/// for every other type.
pub fn check_sortable(ty: &types::SqlType, clause: &str) -> Result<(), SqlError> {
    if ty.is_spatial() {
        return Err(not_comparable(ty, clause));
    }
    if ty.is_legacy_lob() {
        return Err(SqlError::new(
            306,
            16,
            2,
            "The text, ntext, and image data types cannot be compared or sorted, except when using IS NULL or LIKE operator.",
        ));
    }
    Ok(())
}

/// Msg 249: geometry and geography are not byte-ordered CLR types; SQL Server names the
/// clause.
fn not_comparable(ty: &types::SqlType, clause: &str) -> SqlError {
    SqlError::new(
        249,
        16,
        1,
        format!("The type \"{}\" is not comparable. It cannot be used in the {clause} clause.", ty.name()),
    )
}

/// Msg 421 for a text, ntext, image, geometry or geography column of SELECT DISTINCT.
pub fn check_distinct(ty: &types::SqlType) -> Result<(), SqlError> {
    if ty.is_legacy_lob() || ty.is_spatial() {
        return Err(SqlError::new(
            421,
            16,
            1,
            format!("The {} data type cannot be selected as DISTINCT because it is not comparable.", ty.name()),
        ));
    }
    Ok(())
}

/// Msg 5335 for a text, ntext or image column of UNION, INTERSECT or EXCEPT (UNION ALL
/// compares nothing and takes them).
pub fn check_set_operand(ty: &types::SqlType) -> Result<(), SqlError> {
    if ty.is_legacy_lob() || ty.is_spatial() {
        return Err(SqlError::new(
            5335,
            16,
            1,
            format!(
                "The data type {} cannot be used as an operand to the UNION, INTERSECT or EXCEPT operators because it is not comparable.",
                ty.name()
            ),
        ));
    }
    Ok(())
}

/// Msg 2739: DECLARE of a variable (or table-valued function result variable) as text,
/// ntext or image.
pub fn check_variable_type(ty: &types::SqlType) -> Result<(), SqlError> {
    if ty.is_legacy_lob() {
        return Err(SqlError::new(
            2739,
            16,
            1,
            "The text, ntext, and image data types are invalid for local variables.",
        ));
    }
    Ok(())
}

/// Msg 10700: DML on a table-valued parameter, which is READONLY.
pub fn readonly_tvp(name: &str) -> SqlError {
    SqlError::new(10700, 16, 1, format!("The table-valued parameter \"{name}\" is READONLY and cannot be modified."))
}
