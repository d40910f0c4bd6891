//! Binding of the DMV table functions (their arguments, evaluated when the statement is
//! bound), what a running request is doing (sys.dm_exec_requests' command and nesting,
//! kept live per session), and DBCC SQLPERF and USEROPTIONS. The DMVs themselves are in
//! the system-object registry (`crate::system`).

use types::{SqlError, SqlType, Value};

use super::base::Flow;
use super::context::Cx;
use super::plan::{OutCol, Plan};
use super::query::{Binder, Scope};
use super::session::opt;
use crate::ast::{Dbcc, Expr, ExprKind, Literal};
use crate::host::{ClearStats, Isolation};
use crate::results::{ColumnInfo, Message};
use crate::system::{nv, s, ObjectKind};

/// Built-in DMV table functions; None when `name` is not one.
pub fn table_function(name: &str, args: &[Expr], b: &mut Binder) -> Result<Option<(Plan, Vec<OutCol>)>, SqlError> {
    let Some(object) = crate::system::lookup("sys", name).filter(|o| o.kind == ObjectKind::TableFunction) else {
        return Ok(None);
    };
    if args.len() < object.params.len() {
        return Err(SqlError::new(
            216,
            16,
            1,
            format!("Parameters were not supplied for the function 'sys.{}'.", object.name),
        ));
    }
    if args.len() > object.params.len() {
        return Err(SqlError::new(
            8144,
            16,
            2,
            format!("Procedure or function {} has too many arguments specified.", object.name),
        ));
    }
    // Integer arguments (NULL: all), evaluated now.
    let mut vals = [None, None];
    for (i, a) in args.iter().enumerate().take(vals.len()) {
        let e = b.bind_expr(a, &Scope::default())?;
        let v = e.eval(&[], b.cx)?;
        vals[i] = match &v {
            Value::Null => None,
            other => match Value::integer_part(other).and_then(|n| i32::try_from(n).ok()) {
                Some(n) => Some(n),
                None => {
                    return Err(SqlError::new(
                        8116,
                        16,
                        1,
                        format!(
                            "Argument data type {} is invalid for argument {} of {} function.",
                            e.ty().name(),
                            i + 1,
                            object.name
                        ),
                    ))
                }
            },
        };
    }
    let cols = object.out_cols();
    let Some(view) = object.view(b.cx.state.database, vals) else { return Ok(None) };
    Ok(Some((Plan::Virtual { view, cols: cols.clone() }, cols)))
}

// ---------------------------------------------------------------------------------------
// DBCC SQLPERF
// ---------------------------------------------------------------------------------------

fn incorrect_dbcc() -> SqlError {
    SqlError::new(
        2526,
        16,
        3,
        "Incorrect DBCC statement. Check the documentation for the correct DBCC syntax and options.",
    )
}

/// A DBCC argument as text: a bare word, a quoted name or a string literal.
fn word(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Column(n) => Some(n.parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".")),
        ExprKind::Literal(Literal::String { value, .. }) => Some(value.clone()),
        _ => None,
    }
}

/// DBCC SQLPERF(LOGSPACE) and DBCC SQLPERF('sys.dm_os_wait_stats' | 'sys.dm_os_latch_stats', CLEAR).
pub fn dbcc_sqlperf(cx: &mut Cx, d: &Dbcc) -> Result<Flow, SqlError> {
    let mut no_infomsgs = false;
    for o in &d.options {
        if o.is("NO_INFOMSGS") {
            no_infomsgs = true;
        } else if !o.is("TABLERESULTS") {
            return Err(incorrect_dbcc());
        }
    }
    let words: Vec<String> = d.args.iter().map(word).collect::<Option<_>>().ok_or_else(incorrect_dbcc)?;
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    if !cx.is_sysadmin() {
        return Err(SqlError::new(
            300,
            14,
            1,
            if lower.len() == 2 {
                "ALTER SERVER STATE permission was denied on object 'server', database 'master'."
            } else {
                "VIEW SERVER STATE permission was denied on object 'server', database 'master'."
            },
        ));
    }
    match lower.as_slice() {
        ["logspace"] => {
            let rows = cx.host.log_space();
            let info = [
                ColumnInfo::new("Database Name", nv(128), true),
                ColumnInfo::new("Log Size (MB)", SqlType::Real, true),
                ColumnInfo::new("Log Space Used (%)", SqlType::Real, true),
                ColumnInfo::new("Status", SqlType::Int, true),
            ];
            cx.sink.columns(&info).map_err(|_| super::base::cancelled())?;
            for r in &rows {
                let row = [
                    s(&r.database_name),
                    Value::Real(r.log_size_mb as f32),
                    Value::Real(r.log_space_used_percent as f32),
                    Value::Int(0),
                ];
                cx.sink.row(&row).map_err(|_| super::base::cancelled())?;
            }
            cx.state.rowcount = rows.len() as i64;
            dbcc_done(cx, no_infomsgs, Some(rows.len() as u64))?;
        }
        [stats, "clear"] => {
            let what = match *stats {
                "sys.dm_os_wait_stats" => ClearStats::WaitStats,
                "sys.dm_os_latch_stats" => ClearStats::LatchStats,
                _ => return Err(incorrect_dbcc()),
            };
            cx.host.clear_stats(what).map_err(super::base::host_err)?;
            dbcc_done(cx, no_infomsgs, None)?;
        }
        _ => return Err(incorrect_dbcc()),
    }
    Ok(Flow::Normal)
}

/// DBCC USEROPTIONS [WITH NO_INFOMSGS]: the session's SET options, as (Set Option,
/// Value) rows in SQL Server's order; ON options are listed with the value SET, OFF ones
/// not at all. The options Mesquite accepts without tracking show the drivers' login
/// defaults, as in sys.dm_exec_sessions.
pub fn dbcc_useroptions(cx: &mut Cx, d: &Dbcc) -> Result<Flow, SqlError> {
    let mut no_infomsgs = false;
    for o in &d.options {
        if o.is("NO_INFOMSGS") {
            no_infomsgs = true;
        } else if !o.is("TABLERESULTS") {
            return Err(incorrect_dbcc());
        }
    }
    if !d.args.is_empty() {
        return Err(incorrect_dbcc());
    }
    let st = &cx.state;
    let isolation = match st.isolation {
        Isolation::ReadUncommitted => "read uncommitted",
        Isolation::ReadCommitted => "read committed",
        Isolation::RepeatableRead => "repeatable read",
        Isolation::Serializable => "serializable",
        Isolation::Snapshot => "snapshot",
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("textsize", i32::MAX.to_string()),
        ("language", st.language.clone()),
        ("dateformat", "mdy".into()),
        ("datefirst", st.datefirst.to_string()),
        ("lock_timeout", st.lock_timeout.to_string()),
    ];
    // The ON options, in the order SQL Server lists them.
    let bits = st.options_bits();
    for (bit, name) in [
        (opt::QUOTED_IDENTIFIER, "quoted_identifier"),
        (opt::ARITHABORT, "arithabort"),
        (opt::ARITHIGNORE, "arithignore"),
        (opt::ANSI_NULL_DFLT_ON, "ansi_null_dflt_on"),
        (opt::ANSI_NULL_DFLT_OFF, "ansi_null_dflt_off"),
        (opt::ANSI_WARNINGS, "ansi_warnings"),
        (opt::ANSI_PADDING, "ansi_padding"),
        (opt::ANSI_NULLS, "ansi_nulls"),
        (opt::CONCAT_NULL_YIELDS_NULL, "concat_null_yields_null"),
        (opt::NUMERIC_ROUNDABORT, "numeric_roundabort"),
        (opt::CURSOR_CLOSE_ON_COMMIT, "cursor_close_on_commit"),
        (opt::NOCOUNT, "nocount"),
        (opt::XACT_ABORT, "xact_abort"),
        (opt::IMPLICIT_TRANSACTIONS, "implicit_transactions"),
    ] {
        if bits & bit != 0 {
            rows.push((name, "SET".into()));
        }
    }
    rows.push(("isolation level", isolation.into()));
    let info = [ColumnInfo::new("Set Option", nv(128), false), ColumnInfo::new("Value", nv(128), true)];
    cx.sink.columns(&info).map_err(|_| super::base::cancelled())?;
    for (k, v) in &rows {
        cx.sink.row(&[s(k), s(v)]).map_err(|_| super::base::cancelled())?;
    }
    cx.state.rowcount = rows.len() as i64;
    dbcc_done(cx, no_infomsgs, Some(rows.len() as u64))?;
    Ok(Flow::Normal)
}

/// Msg 2528 (unless WITH NO_INFOMSGS) and the statement's DONE.
fn dbcc_done(cx: &mut Cx, no_infomsgs: bool, count: Option<u64>) -> Result<(), SqlError> {
    if !no_infomsgs {
        let m = SqlError::new(
            2528,
            10,
            1,
            "DBCC execution completed. If DBCC printed error messages, contact your system administrator.",
        );
        cx.sink.message(&Message { error: m, info: true }).map_err(|_| super::base::cancelled())?;
    }
    cx.done(count)
}
