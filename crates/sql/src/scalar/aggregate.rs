//! Aggregate functions. (Skeleton: being written.)

use types::{SqlError, SqlType, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggKind {
    Count,
    CountBig,
    Sum,
    Avg,
    Min,
    Max,
    Stdev,
    Stdevp,
    Var,
    Varp,
    StringAgg,
    ChecksumAgg,
    /// GROUPING(col): 1 when the column is aggregated away by ROLLUP/CUBE.
    Grouping,
}

impl AggKind {
    pub fn from_name(name: &str) -> Option<AggKind> {
        Some(match name.to_ascii_uppercase().as_str() {
            "COUNT" => AggKind::Count,
            "COUNT_BIG" => AggKind::CountBig,
            "SUM" => AggKind::Sum,
            "AVG" => AggKind::Avg,
            "MIN" => AggKind::Min,
            "MAX" => AggKind::Max,
            "STDEV" => AggKind::Stdev,
            "STDEVP" => AggKind::Stdevp,
            "VAR" => AggKind::Var,
            "VARP" => AggKind::Varp,
            "STRING_AGG" => AggKind::StringAgg,
            "CHECKSUM_AGG" => AggKind::ChecksumAgg,
            "GROUPING" => AggKind::Grouping,
            _ => return None,
        })
    }
}

/// The result type (SUM(int) is int, SUM(decimal(p,s)) decimal(38,s), AVG(int) int,
/// AVG(decimal(p,s)) decimal(38, max(s,6)), COUNT int, COUNT_BIG bigint, STDEV float,
/// STRING_AGG nvarchar/varchar(8000 or max)). `arg` is None for COUNT(*).
/// Errors: 8117 "Operand data type x is invalid for sum operator.".
pub fn return_type(kind: AggKind, arg: Option<&SqlType>) -> Result<SqlType, SqlError> {
    let _ = arg;
    Ok(match kind {
        AggKind::Count | AggKind::Grouping | AggKind::ChecksumAgg => SqlType::Int,
        AggKind::CountBig => SqlType::BigInt,
        _ => arg.copied().unwrap_or(SqlType::Int),
    })
}

/// One group's running state. NULL inputs are skipped (and COUNT(*) counts rows: the
/// executor passes a non-NULL placeholder). DISTINCT is the executor's job (it feeds
/// each distinct value once).
#[derive(Debug, Clone)]
pub struct Accumulator {
    pub kind: AggKind,
    /// The argument's static type and the result type.
    pub arg_type: Option<SqlType>,
    pub result_type: SqlType,
    state: Vec<Value>,
    count: i64,
}

impl Accumulator {
    pub fn new(kind: AggKind, arg_type: Option<SqlType>, result_type: SqlType) -> Accumulator {
        Accumulator { kind, arg_type, result_type, state: Vec::new(), count: 0 }
    }

    /// Adds one input. For STRING_AGG `extra` is the separator.
    pub fn update(&mut self, v: &Value, extra: Option<&Value>) -> Result<(), SqlError> {
        let _ = extra;
        if !v.is_null() {
            self.count += 1;
            self.state.push(v.clone());
        }
        Ok(())
    }

    /// The aggregate's value (NULL for SUM/AVG/MIN/MAX over no non-NULL input; 0 for
    /// COUNT). Msg 8115 on overflow; "Warning: Null value is eliminated..." is the
    /// executor's.
    pub fn finish(&self) -> Result<Value, SqlError> {
        Ok(match self.kind {
            AggKind::Count => Value::Int(self.count as i32),
            AggKind::CountBig => Value::BigInt(self.count),
            _ => self.state.first().cloned().unwrap_or(Value::Null),
        })
    }

    /// Were any NULL inputs skipped? (for the ANSI_WARNINGS message 8153)
    pub fn saw_null(&self) -> bool {
        false
    }
}
