//! Sequence objects: CREATE / ALTER / DROP SEQUENCE, NEXT VALUE FOR,
//! sp_sequence_get_range and the values sys.sequences shows.
//!
//! The definition is a catalog object (`catalog::Sequence`), changed transactionally
//! like any DDL. The values handed out are not: SQL Server never gives a value back when
//! the transaction that drew it rolls back. Each database's shared catalog keeps a
//! sequence's last value in memory ([`SequenceState`]); the host persists a *bound*, the
//! highest value that may have been handed out, in a transaction of its own
//! ([`Sequences`](crate::host::Sequences)). A value beyond the bound first moves the
//! bound: by one value for NO CACHE, by the cache size for CACHE (SQL Server's default
//! size, 50, when none is given). After a restart the sequence goes on after the bound,
//! so the values cached and not used are skipped, as SQL Server skips them after an
//! unexpected shutdown (it also persists the exact value at a clean one; Mesquite does
//! not). ALTER SEQUENCE ... RESTART counts a restart in the catalog; a bound persisted
//! under an older count is ignored.

use types::{SqlError, SqlType, Value};

use crate::ast::*;
use crate::catalog::{self, Object, ObjectBody, SequenceState};
use crate::host::DbId;

use super::base::host_err;
use super::context::Cx;
use super::ddl::{allocate_id, check_name_free, now_datetime, write_object};
use super::errors;
use super::run::{eval_standalone, ArgValue};

/// The cache size of `CACHE` without a number (SQL Server's).
const DEFAULT_CACHE: i128 = 50;

/// CREATE SEQUENCE.
pub(crate) fn create(cx: &mut Cx, def: &SequenceDef) -> Result<(), SqlError> {
    let (db, schema, name) = cx.resolve_name(&def.name)?;
    if schema < 0 {
        return Err(errors::schema_not_found(def.name.schema()));
    }
    let ty = match &def.data_type {
        Some(t) => match super::user_types::resolve(cx, t)? {
            super::user_types::DeclaredType::Scalar(ty) => ty,
            super::user_types::DeclaredType::Table(_) => return Err(invalid_type(&name)),
        },
        None => SqlType::BigInt,
    };
    let (type_min, type_max) = type_range(&ty).ok_or_else(|| invalid_type(&name))?;
    let increment = match &def.increment {
        Some(e) => constant(cx, e, "INCREMENT", type_min, type_max)?,
        None => 1,
    };
    let minimum = bound_or(cx, &def.min, "MINVALUE", type_min, type_max, type_min)?;
    let maximum = bound_or(cx, &def.max, "MAXVALUE", type_min, type_max, type_max)?;
    let start = match &def.start {
        Some(e) => constant(cx, e, "START WITH", type_min, type_max)?,
        None if increment > 0 => minimum,
        None => maximum,
    };
    let q = catalog::Sequence {
        ty,
        start,
        increment,
        minimum,
        maximum,
        cycle: def.cycle.unwrap_or(false),
        cache: cache_of(cx, &def.cache, &name)?.unwrap_or(Some(None)),
        restarts: 0,
    };
    validate(&q, &name, None)?;
    check_name_free(cx, db, schema, &name)?;
    let id = allocate_id(cx, db)?;
    let now = now_datetime();
    let obj = Object {
        id,
        schema_id: schema,
        name,
        create_date: now.clone(),
        modify_date: now,
        body: ObjectBody::Sequence(q),
    };
    write_object(cx, db, &obj)
}

/// ALTER SEQUENCE.
pub(crate) fn alter(cx: &mut Cx, def: &SequenceDef) -> Result<(), SqlError> {
    let (db, o) = find(cx, &def.name)?;
    let ObjectBody::Sequence(old) = &o.body else {
        return Err(not_a_sequence(&errors::written(&def.name)));
    };
    let name = o.name.clone();
    let (type_min, type_max) = type_range(&old.ty).ok_or_else(|| invalid_type(&name))?;
    let mut q = old.clone();
    if let Some(e) = &def.increment {
        q.increment = constant(cx, e, "INCREMENT", type_min, type_max)?;
    }
    q.minimum = bound_or(cx, &def.min, "MINVALUE", type_min, type_max, old.minimum)?;
    q.maximum = bound_or(cx, &def.max, "MAXVALUE", type_min, type_max, old.maximum)?;
    if let Some(c) = def.cycle {
        q.cycle = c;
    }
    if let Some(c) = cache_of(cx, &def.cache, &name)? {
        q.cache = c;
    }
    let current = match &def.restart {
        Some(r) => {
            if let Some(e) = r {
                q.start = constant(cx, e, "RESTART WITH", type_min, type_max)?;
            }
            q.restarts = q.restarts.wrapping_add(1);
            None
        }
        None => last_value(cx, db, o.id, old)?,
    };
    validate(&q, &name, current)?;
    let obj = Object { modify_date: now_datetime(), body: ObjectBody::Sequence(q), ..o };
    write_object(cx, db, &obj)
}

/// What expressions and the binder reach of sequences (they sit below this module).
impl Cx<'_> {
    /// NEXT VALUE FOR: the sequence's next value, in its type.
    pub fn next_sequence_value(&mut self, db: DbId, object_id: i32) -> Result<Value, SqlError> {
        let (name, q) = definition(self, db, object_id)?;
        let (first, _, _) = draw(self, db, object_id, &name, &q, 1)?;
        Ok(value_of(first, &q.ty))
    }

    /// The sequence NEXT VALUE FOR names: its database, object id and type (11726 for
    /// another kind of object, 208 for none).
    pub fn sequence_named(&mut self, name: &ObjectName) -> Result<(DbId, i32, SqlType), SqlError> {
        let (db, o) = find(self, name)?;
        match &o.body {
            ObjectBody::Sequence(q) => Ok((db, o.id, q.ty)),
            _ => Err(not_a_sequence(&errors::written(name))),
        }
    }
}

/// sp_sequence_get_range @sequence_name, @range_size, @range_first_value OUTPUT,
/// [@range_last_value OUTPUT, @range_cycle_count OUTPUT, @sequence_increment OUTPUT,
/// @sequence_min_value OUTPUT, @sequence_max_value OUTPUT]: reserves `range_size`
/// values at once (sql_variant outputs in the sequence's type).
pub(crate) fn sp_sequence_get_range(cx: &mut Cx, args: &[ArgValue], _line: u32) -> Result<i32, SqlError> {
    let arg = |i: usize, name: &str| {
        args.iter().find(|a| a.name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(name))).or_else(|| {
            // Positional arguments come before any named one.
            args.get(i).filter(|a| a.name.is_none())
        })
    };
    let seq_name = arg(0, "@sequence_name")
        .and_then(|a| super::expr::as_text(&a.value, &a.ty))
        .ok_or_else(|| missing_param("@sequence_name"))?;
    let size_arg = arg(1, "@range_size").ok_or_else(|| missing_param("@range_size"))?;
    let size = match super::run::int_value(&size_arg.value, &size_arg.ty) {
        Ok(n) if n > 0 => i128::from(n),
        _ => {
            return Err(SqlError::new(11733, 16, 1, "Parameter '@range_size' must be a positive integer."));
        }
    };
    let oname = super::base::parse_object_name(&seq_name)?;
    let (db, o) = find(cx, &oname)?;
    let ObjectBody::Sequence(q) = &o.body else {
        return Err(not_a_sequence(&seq_name));
    };
    let (first, last, cycles) = draw(cx, db, o.id, &o.name, q, size)?;
    let variant = |v: i128| Value::variant(value_of(v, &q.ty), &q.ty);
    let outputs: [(&str, Value); 6] = [
        ("@range_first_value", variant(first)?),
        ("@range_last_value", variant(last)?),
        ("@range_cycle_count", Value::Int(cycles)),
        ("@sequence_increment", variant(q.increment)?),
        ("@sequence_min_value", variant(q.minimum)?),
        ("@sequence_max_value", variant(q.maximum)?),
    ];
    for (i, (name, value)) in outputs.into_iter().enumerate() {
        if let Some(a) = arg(i + 2, name) {
            let ty = if name == "@range_cycle_count" { SqlType::Int } else { SqlType::Variant };
            super::procs::write_output(cx, a, name, ty, value)?;
        }
    }
    Ok(0)
}

/// sys.sequences' current_value and last_used_value: the last value handed out (the
/// start value before the first, with last_used_value NULL).
pub(crate) fn current_values(cx: &mut Cx, db: DbId, o: &Object) -> (Value, Value) {
    let ObjectBody::Sequence(q) = &o.body else {
        return (Value::Null, Value::Null);
    };
    match last_value(cx, db, o.id, q).ok().flatten() {
        Some(v) => (value_of(v, &q.ty), value_of(v, &q.ty)),
        None => (value_of(q.start, &q.ty), Value::Null),
    }
}

// ---- drawing values -----------------------------------------------------------------

/// Takes `count` consecutive values: the first, the last and how many times the range wrapped
/// (CYCLE). Serialised by the database's sequence map lock, held while the bound moves.
fn draw(
    cx: &mut Cx,
    db: DbId,
    object_id: i32,
    name: &str,
    q: &catalog::Sequence,
    count: i128,
) -> Result<(i128, i128, i32), SqlError> {
    let cat = cx.catalog(db)?;
    let mut states = cat.sequences.lock();
    let s = cached_state(cx, &mut states, db, object_id, q)?;
    // The first value: the start, or the one after the last (the other end's after
    // the end when the sequence cycles).
    let (first, cycles) = match s.last {
        None => (q.start, 0),
        Some(l) => match step(l, q.increment, q) {
            (_, true) if !q.cycle => return Err(exhausted(name)),
            (v, w) => (v, i32::from(w)),
        },
    };
    // A range (sp_sequence_get_range) must fit before the end: one that would cross it
    // is 11732 even for a cycling sequence (SQL Server returns the values up to the end
    // and counts the cycle; not modelled).
    let (last, crosses) = match q.increment.checked_mul(count - 1) {
        Some(span) => step(first, span, q),
        None => (first, true),
    };
    if crosses {
        return Err(SqlError::new(
            11732,
            16,
            1,
            format!("The requested range for sequence object '{name}' exceeds the maximum or minimum limit. Retry with a smaller range."),
        ));
    }
    let beyond = |v: i128, b: i128| if q.increment > 0 { v > b } else { v < b };
    let mut bound = s.bound;
    // After a wrap the bound lies ahead of the new values: move it back.
    if cycles > 0 || bound.is_none_or(|b| beyond(last, b)) {
        let cache = match q.cache {
            None => 1,
            Some(None) => DEFAULT_CACHE,
            Some(Some(n)) => i128::from(n),
        };
        let ahead = q.increment.saturating_mul(cache.max(count) - 1);
        let target = last.saturating_add(ahead).clamp(q.minimum, q.maximum);
        cx.host.set_sequence_bound(db, object_id, q.restarts, target).map_err(host_err)?;
        bound = Some(target);
    }
    states.insert(object_id, SequenceState { restarts: q.restarts, last: Some(last), bound });
    Ok((first, last, cycles))
}

/// `v + by` within the sequence's range: the value and whether it left the range (then
/// the value is the other end's when the sequence cycles).
fn step(v: i128, by: i128, q: &catalog::Sequence) -> (i128, bool) {
    match v.checked_add(by) {
        Some(n) if n >= q.minimum && n <= q.maximum => (n, false),
        _ => (if q.increment > 0 { q.minimum } else { q.maximum }, true),
    }
}

/// The last value the sequence handed out (None before the first).
fn last_value(cx: &mut Cx, db: DbId, object_id: i32, q: &catalog::Sequence) -> Result<Option<i128>, SqlError> {
    let cat = cx.catalog(db)?;
    let mut states = cat.sequences.lock();
    Ok(cached_state(cx, &mut states, db, object_id, q)?.last)
}

/// The in-memory state (`states` is the database's locked map), loaded from the host's
/// bound the first time and after a restart of the sequence.
fn cached_state(
    cx: &mut Cx,
    states: &mut std::collections::HashMap<i32, SequenceState>,
    db: DbId,
    object_id: i32,
    q: &catalog::Sequence,
) -> Result<SequenceState, SqlError> {
    if let Some(s) = states.get(&object_id).filter(|s| s.restarts == q.restarts) {
        return Ok(*s);
    }
    let s = match cx.host.sequence_bound(db, object_id).map_err(host_err)? {
        // Values up to the bound may have been handed out before the restart.
        Some((restarts, bound)) if restarts == q.restarts => {
            SequenceState { restarts, last: Some(bound), bound: Some(bound) }
        }
        _ => SequenceState { restarts: q.restarts, last: None, bound: None },
    };
    states.insert(object_id, s);
    Ok(s)
}

// ---- definitions --------------------------------------------------------------------

fn find(cx: &mut Cx, name: &ObjectName) -> Result<(DbId, Object), SqlError> {
    cx.resolve_object(name)?.ok_or_else(|| errors::invalid_object(&errors::written(name)))
}

fn definition(cx: &mut Cx, db: DbId, object_id: i32) -> Result<(String, catalog::Sequence), SqlError> {
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    match g.objects.get(&object_id) {
        Some(Object { name, body: ObjectBody::Sequence(q), .. }) => Ok((name.clone(), q.clone())),
        // Dropped since the statement was bound.
        _ => Err(errors::invalid_object(&object_id.to_string())),
    }
}

/// The range of a sequence's type; None for a type a sequence cannot have.
fn type_range(ty: &SqlType) -> Option<(i128, i128)> {
    Some(match *ty {
        SqlType::TinyInt => (0, 255),
        SqlType::SmallInt => (i128::from(i16::MIN), i128::from(i16::MAX)),
        SqlType::Int => (i128::from(i32::MIN), i128::from(i32::MAX)),
        SqlType::BigInt => (i128::from(i64::MIN), i128::from(i64::MAX)),
        SqlType::Decimal { precision, scale: 0 } | SqlType::Numeric { precision, scale: 0 } => {
            let m = 10i128.pow(u32::from(precision)) - 1;
            (-m, m)
        }
        _ => return None,
    })
}

fn value_of(v: i128, ty: &SqlType) -> Value {
    match *ty {
        SqlType::TinyInt => Value::TinyInt(v as u8),
        SqlType::SmallInt => Value::SmallInt(v as i16),
        SqlType::Int => Value::Int(v as i32),
        SqlType::BigInt => Value::BigInt(v as i64),
        SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. } => {
            Value::Decimal { value: v, precision, scale: 0 }
        }
        _ => Value::Null,
    }
}

/// A signed numeric constant of an option, within the type's range (11708).
fn constant(cx: &mut Cx, e: &Expr, arg: &str, min: i128, max: i128) -> Result<i128, SqlError> {
    let (v, _) = eval_standalone(cx, e)?;
    // A whole number: a decimal with a fraction is not one.
    let n = match v {
        Value::Decimal { value, scale, .. } if value % 10i128.pow(u32::from(scale)) != 0 => None,
        v => v.integer_part(),
    };
    n.filter(|n| (min..=max).contains(n)).ok_or_else(|| {
        SqlError::new(
            11708,
            16,
            1,
            format!("An invalid value was specified for argument '{arg}' for the given data type."),
        )
    })
}

fn bound_or(
    cx: &mut Cx,
    given: &Option<Option<Expr>>,
    arg: &str,
    min: i128,
    max: i128,
    otherwise: i128,
) -> Result<i128, SqlError> {
    match given {
        Some(Some(e)) => constant(cx, e, arg, min, max),
        // NO MINVALUE / NO MAXVALUE: the type's own.
        Some(None) if arg == "MINVALUE" => Ok(min),
        Some(None) => Ok(max),
        None => Ok(otherwise),
    }
}

/// The cache option as the catalog keeps it (None when not given).
#[allow(clippy::option_option)]
fn cache_of(cx: &mut Cx, c: &Option<SequenceCache>, name: &str) -> Result<Option<Option<Option<i32>>>, SqlError> {
    Ok(match c {
        None => None,
        Some(SequenceCache::None) => Some(None),
        Some(SequenceCache::Default) => Some(Some(None)),
        Some(SequenceCache::Size(e)) => {
            let n = constant(cx, e, "CACHE", i128::MIN, i128::MAX).ok().filter(|n| *n > 0);
            let n = n.and_then(|n| i32::try_from(n).ok()).ok_or_else(|| {
                SqlError::new(
                    11706,
                    16,
                    1,
                    format!("The cache size for sequence object '{name}' must be greater than 0."),
                )
            })?;
            Some(Some(Some(n)))
        }
    })
}

/// SQL Server's checks of a definition (11700, 11701, 11703, 11704, 11705).
fn validate(q: &catalog::Sequence, name: &str, current: Option<i128>) -> Result<(), SqlError> {
    if q.increment == 0 {
        return Err(SqlError::new(11700, 16, 1, format!("The increment for sequence object '{name}' cannot be zero.")));
    }
    if q.minimum >= q.maximum {
        return Err(SqlError::new(
            11705,
            16,
            2,
            format!("The minimum value for sequence object '{name}' must be less than its maximum value."),
        ));
    }
    // decimal(38, 0)'s whole range is wider than an i128 holds: compare unsigned.
    if q.increment.unsigned_abs() > q.maximum.abs_diff(q.minimum) {
        return Err(SqlError::new(
            11701,
            16,
            1,
            format!("The absolute value of the increment for sequence object '{name}' must be less than or equal to the difference between the minimum and maximum value of the sequence object."),
        ));
    }
    if !(q.minimum..=q.maximum).contains(&q.start) {
        return Err(SqlError::new(
            11703,
            16,
            1,
            format!("The start value for sequence object '{name}' must be between the minimum and maximum value of the sequence object."),
        ));
    }
    if let Some(c) = current.filter(|c| !(q.minimum..=q.maximum).contains(c)) {
        return Err(SqlError::new(
            11704,
            16,
            1,
            format!("The current value '{c}' for sequence object '{name}' must be between the minimum and maximum value of the sequence object."),
        ));
    }
    Ok(())
}

fn invalid_type(name: &str) -> SqlError {
    SqlError::new(
        11702,
        16,
        2,
        format!("The sequence object '{name}' must be of data type int, bigint, smallint, tinyint, or decimal or numeric with a scale of 0, or any user-defined data type that is based on one of the above integer data types."),
    )
}

fn not_a_sequence(name: &str) -> SqlError {
    SqlError::new(11726, 16, 1, format!("Object '{name}' is not a sequence object."))
}

fn exhausted(name: &str) -> SqlError {
    SqlError::new(
        11728,
        16,
        1,
        format!("The sequence object '{name}' has reached its minimum or maximum value. Restart the sequence object to allow new values to be generated."),
    )
}

fn missing_param(name: &str) -> SqlError {
    SqlError::new(
        201,
        16,
        4,
        format!("Procedure or function 'sp_sequence_get_range' expects parameter '{name}', which was not supplied."),
    )
}
