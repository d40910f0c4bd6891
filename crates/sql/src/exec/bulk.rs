//! Bulk copy: the `INSERT BULK` statement a client's bulk copy API sends first (it names
//! the table, the columns and the options, and is kept on the session), then the
//! bulk-load message holding the rows ([MS-TDS] 2.2.6.1), which inserts them through the
//! ordinary insert path as one statement of the session's transaction.

use std::sync::atomic::Ordering as AtomicOrdering;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::run::rollback_all;
use super::run::{atomic, report};
use super::session::SessionState;
use super::{dml, errors, trigger};
use crate::ast::{BulkOption, DmlTarget, Ident, InsertBulk};
use crate::host::Host;
use crate::request::BulkLoad;
use crate::results::{command_code, ResultSink};

/// Options INSERT BULK takes. KEEP_IDENTITY is not in SQL Server's documented list, but
/// mssql-jdbc and SqlClient send it for their keep-identity option.
const FLAGS: &[&str] = &["CHECK_CONSTRAINTS", "FIRE_TRIGGERS", "KEEP_NULLS", "KEEP_IDENTITY", "TABLOCK"];
const VALUES: &[&str] = &["ROWS_PER_BATCH", "KILOBYTES_PER_BATCH"];

fn has_flag(ib: &InsertBulk, name: &str) -> bool {
    ib.options.iter().any(|o| matches!(o, BulkOption::Flag(f) if f == name))
}

fn target(ib: &InsertBulk) -> DmlTarget {
    DmlTarget::Table { name: ib.table.clone(), hints: Vec::new() }
}

fn column_idents(ib: &InsertBulk) -> Vec<Ident> {
    ib.columns.iter().map(|c| c.name.clone()).collect()
}

/// INSERT BULK: checks the table, its columns and the options, and keeps the statement
/// for the bulk-load message that follows.
pub fn insert_bulk(cx: &mut Cx, ib: &InsertBulk) -> Result<(), SqlError> {
    for o in &ib.options {
        let (name, known) = match o {
            BulkOption::Flag(n) => (n, FLAGS.contains(&n.as_str())),
            BulkOption::Value(n, _) => (n, VALUES.contains(&n.as_str())),
            BulkOption::Order(_) => continue,
        };
        if !known {
            return Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{name}'.")));
        }
    }
    let t = dml::target_table(cx, &target(ib), "INSERT")?;
    dml::insert_positions(cx, &t, &column_idents(ib))?;
    if let Some(BulkOption::Order(cols)) = ib.options.iter().find(|o| matches!(o, BulkOption::Order(_))) {
        for c in cols {
            t.column_index(&c.name.value).ok_or_else(|| errors::invalid_column(&c.name.value))?;
        }
    }
    cx.state.bulk_target = Some(Box::new(ib.clone()));
    cx.done(None)
}

fn bcp_column_error(number: i32, colid: usize) -> SqlError {
    let text = if number == 4815 {
        format!("Received an invalid column length from the bcp client for colid {colid}.")
    } else {
        format!("Invalid column type from bcp client for colid {colid}.")
    };
    SqlError::new(number, 16, 1, text)
}

/// Runs a bulk-load message: its rows go into the table the session's last INSERT BULK
/// named, as one atomic statement; DONE carries the row count.
pub fn execute_bulk_load(state: &mut SessionState, host: &mut dyn Host, load: &BulkLoad, sink: &mut dyn ResultSink) {
    state.cancel.store(false, AtomicOrdering::Relaxed);
    let pending = state.bulk_target.take();
    let mut cx = Cx::new(host, state, sink);
    cx.cur_cmd = command_code::INSERT;
    let Some(ib) = pending else {
        let e = SqlError::new(
            4002,
            16,
            1,
            "The incoming tabular data stream (TDS) protocol stream is incorrect: a bulk-load message without a preceding INSERT BULK statement.",
        );
        report(&mut cx, &e);
        return;
    };
    match atomic(&mut cx, |cx| load_rows(cx, &ib, load)) {
        Ok(n) => {
            cx.state.rowcount = n as i64;
            let _ = cx.done(Some(n));
        }
        Err(e) => {
            // A deadlock victim's transaction is gone (as in a batch).
            if (cx.state.xact_abort || e.number == 1205) && cx.state.trancount > 0 {
                let _ = rollback_all(&mut cx);
            }
            report(&mut cx, &e);
        }
    }
}

fn load_rows(cx: &mut Cx, ib: &InsertBulk, load: &BulkLoad) -> Result<u64, SqlError> {
    let t = dml::target_table(cx, &target(ib), "INSERT")?;
    let listed = dml::insert_positions(cx, &t, &column_idents(ib))?;
    if load.columns.len() != listed.len() {
        return Err(bcp_column_error(4816, load.columns.len().min(listed.len()) + 1));
    }
    let keep_identity = has_flag(ib, "KEEP_IDENTITY");
    let keep_nulls = has_flag(ib, "KEEP_NULLS");
    // Which of the message's columns are inserted: an identity column's values are
    // ignored (the table numbers the rows) unless KEEP_IDENTITY.
    let kept: Vec<usize> = (0..listed.len()).filter(|&k| keep_identity || !t.columns[listed[k]].is_identity).collect();
    let positions: Vec<usize> = kept.iter().map(|&k| listed[k]).collect();
    let tys: Vec<SqlType> = kept.iter().map(|&k| load.columns[k].ty).collect();
    let explicit_identity = positions.iter().any(|&p| t.columns[p].is_identity);
    let saved_identity_insert = cx.state.identity_insert;
    if explicit_identity {
        cx.state.identity_insert = Some((t.db, t.object_id));
    }
    // CHECK and FOREIGN KEY constraints are checked only with CHECK_CONSTRAINTS (SQL
    // Server then marks them not trusted; here they stay as they were).
    let saved_unchecked = std::mem::replace(&mut cx.bulk_unchecked, !has_flag(ib, "CHECK_CONSTRAINTS"));
    // Triggers fire only with FIRE_TRIGGERS, as in SQL Server: once for the load (one
    // batch), with every row in `inserted`; an INSTEAD OF INSERT trigger gets the rows
    // instead of the table.
    let (instead, keep) = if has_flag(ib, "FIRE_TRIGGERS") {
        dml::statement_triggers(cx, &t, trigger::Event::Insert, &[])?
    } else {
        (None, false)
    };
    let r = (|| {
        let mut fired_rows = Vec::new();
        let mut count = 0u64;
        for row in &load.rows {
            cx.check_cancel()?;
            let mut vals = Vec::with_capacity(kept.len());
            for (i, &k) in kept.iter().enumerate() {
                let v = row.get(k).cloned().unwrap_or(Value::Null);
                // Without KEEP_NULLS a NULL takes the column's default, if it has one.
                if v.is_null() && !keep_nulls && t.defaults[positions[i]].is_some() {
                    vals.push(dml::default_marker());
                } else {
                    vals.push(v);
                }
            }
            let row = if instead.is_some() {
                dml::would_insert(cx, &t, &positions, vals, &tys)?
            } else {
                dml::insert_values(cx, &t, &positions, vals, &tys)?
            };
            if keep {
                fired_rows.push(row);
            }
            count += 1;
        }
        Ok((count, fired_rows))
    })();
    cx.bulk_unchecked = saved_unchecked;
    cx.state.identity_insert = saved_identity_insert;
    let (count, fired_rows) = r?;
    // The trigger body runs under the session's own settings, not the load's.
    if keep {
        let f = trigger::Fired { inserted: fired_rows, deleted: Vec::new(), updated: None, row_count: count };
        match &instead {
            Some(tr) => trigger::fire_instead(cx, &t, tr, f)?,
            None => trigger::fire_after(cx, &t, trigger::Event::Insert, f)?,
        }
    }
    Ok(count)
}
