//! Built-in scalar functions. (Skeleton: being written.)

use types::{SqlError, SqlType, Value};

use super::FnContext;

/// A resolved built-in function (by upper-cased name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Builtin(pub &'static str);

/// The built-in scalar function called `name` (case-insensitive), if there is one.
/// Functions needing the catalog or the session (DB_ID, OBJECT_ID, @@SPID, ...) are the
/// binder's and are not here.
pub fn lookup(name: &str) -> Option<Builtin> {
    let _ = name;
    None
}

/// The result type for these argument types. `args` holds each argument's static type;
/// `literals` holds the argument's value when it is a constant (the datepart of
/// DATEADD/DATEDIFF/DATEPART/DATENAME arrives as a constant string such as "day" or
/// "dd"; lengths of LEFT/SUBSTRING may shape the result type). Errors: 174 "The x
/// function requires n argument(s).", 8116 "Argument data type x is invalid for
/// argument n of y function.", 155 "'x' is not a recognized datepart option.".
pub fn return_type(f: Builtin, args: &[SqlType], literals: &[Option<Value>]) -> Result<SqlType, SqlError> {
    let _ = (f, args, literals);
    Err(SqlError::new(195, 15, 10, format!("'{}' is not a recognized built-in function name.", f.0)))
}

/// Calls the function on values of the static types `arg_types`; the result must be of
/// `ret` (from [`return_type`]).
pub fn call(
    f: Builtin,
    args: &[Value],
    arg_types: &[SqlType],
    ret: &SqlType,
    cx: &FnContext,
) -> Result<Value, SqlError> {
    let _ = (f, args, arg_types, ret, cx);
    Err(SqlError::new(195, 15, 10, format!("'{}' is not a recognized built-in function name.", f.0)))
}

/// Is the function nondeterministic per row (NEWID, RAND without seed)? Deterministic
/// functions of constants may be folded by the binder.
pub fn is_volatile(f: Builtin) -> bool {
    matches!(f.0, "NEWID" | "RAND" | "NEWSEQUENTIALID" | "GETDATE" | "SYSDATETIME")
}
