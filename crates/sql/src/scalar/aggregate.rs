//! Aggregate functions: result types and running state (accumulators) with SQL
//! Server's types and overflow checks.
//!
//! Result types: COUNT int (Msg 8115 past 2^31 - 1 rows), COUNT_BIG bigint; SUM and AVG
//! of tinyint/smallint/int are int, of bigint bigint, of money/smallmoney money, of
//! float/real float; SUM(decimal(p, s)) is decimal(38, s), AVG(decimal(p, s)) decimal(38,
//! max(s, 6)); MIN/MAX keep the argument's type (strings by the collation, the first of
//! collation-equal values wins); STDEV/STDEVP/VAR/VARP float; STRING_AGG varchar(8000)
//! or nvarchar(4000) (Msg 9829 past 8000 bytes), varchar(max)/nvarchar(max) for MAX
//! input, nvarchar(4000) for non-string input; CHECKSUM_AGG int; GROUPING tinyint.
//! SUM/AVG/STDEV/VAR of bit, strings, dates, binaries or uniqueidentifier are Msg 8117
//! ("Operand data type bit is invalid for sum operator."), MIN/MAX of bit too.
//!
//! Arithmetic: sums are exact (i128 for integers, money and decimal), and overflow is
//! reported when the final value does not fit the result type (SUM(int) past int is
//! 8115 "... converting expression to data type int."), as SQL Server reports it. AVG is
//! SUM / COUNT with SQL Server's division: integer division for the integer types,
//! truncation at the result scale for decimal and money. Decision: CHECKSUM_AGG is the
//! XOR of the values (order-independent, like SQL Server's, but not bit-identical).

use std::cmp::Ordering;

use types::{Length, SqlError, SqlType, Value};

use super::convert;
use super::util::{self, exact_parts, invalid_operand, overflow, Rounding, Wide};

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

    /// The operator name SQL Server's messages use ("sum", "avg", ...).
    pub fn operator_name(self) -> &'static str {
        match self {
            AggKind::Count => "count",
            AggKind::CountBig => "count_big",
            AggKind::Sum => "sum",
            AggKind::Avg => "avg",
            AggKind::Min => "min",
            AggKind::Max => "max",
            AggKind::Stdev => "stdev",
            AggKind::Stdevp => "stdevp",
            AggKind::Var => "var",
            AggKind::Varp => "varp",
            AggKind::StringAgg => "string_agg",
            AggKind::ChecksumAgg => "checksum_agg",
            AggKind::Grouping => "grouping",
        }
    }
}

/// The result type (SUM(int) is int, SUM(decimal(p,s)) decimal(38,s), AVG(int) int,
/// AVG(decimal(p,s)) decimal(38, max(s,6)), COUNT int, COUNT_BIG bigint, STDEV float,
/// STRING_AGG nvarchar/varchar(8000 or max)). `arg` is None for COUNT(*).
/// Errors: 8117 "Operand data type x is invalid for sum operator.".
pub fn return_type(kind: AggKind, arg: Option<&SqlType>) -> Result<SqlType, SqlError> {
    let arg = arg.copied();
    let invalid = |t: &SqlType| invalid_operand(t.name(), kind.operator_name());
    // No aggregate takes text, ntext or image, COUNT included (SQL Server's 8117).
    if let Some(t) = arg.filter(|t| t.is_legacy_lob()) {
        return Err(if kind == AggKind::StringAgg {
            util::invalid_arg(t.name(), 1, "string_agg")
        } else {
            invalid(&t)
        });
    }
    Ok(match kind {
        AggKind::Count => SqlType::Int,
        AggKind::CountBig => SqlType::BigInt,
        AggKind::Grouping => SqlType::TinyInt,
        AggKind::Sum | AggKind::Avg => {
            let t = arg.unwrap_or(SqlType::Int);
            match t {
                SqlType::TinyInt | SqlType::SmallInt | SqlType::Int => SqlType::Int,
                SqlType::BigInt => SqlType::BigInt,
                SqlType::Money | SqlType::SmallMoney => SqlType::Money,
                SqlType::Float | SqlType::Real => SqlType::Float,
                SqlType::Decimal { scale, .. } => {
                    SqlType::Decimal { precision: 38, scale: if kind == AggKind::Avg { scale.max(6) } else { scale } }
                }
                SqlType::Numeric { scale, .. } => {
                    SqlType::Numeric { precision: 38, scale: if kind == AggKind::Avg { scale.max(6) } else { scale } }
                }
                t => return Err(invalid(&t)),
            }
        }
        AggKind::Min | AggKind::Max => {
            let t = arg.unwrap_or(SqlType::Int);
            if matches!(t, SqlType::Bit | SqlType::Xml) {
                return Err(invalid(&t));
            }
            t
        }
        AggKind::Stdev | AggKind::Stdevp | AggKind::Var | AggKind::Varp => {
            let t = arg.unwrap_or(SqlType::Int);
            if !t.is_numeric() || t == SqlType::Bit {
                return Err(invalid(&t));
            }
            SqlType::Float
        }
        AggKind::StringAgg => match arg.unwrap_or(SqlType::NVarChar { len: Length::Max }) {
            SqlType::NVarChar { len: Length::Max } => SqlType::NVarChar { len: Length::Max },
            SqlType::VarChar { len: Length::Max } => SqlType::VarChar { len: Length::Max },
            SqlType::Char { .. } | SqlType::VarChar { .. } => SqlType::VarChar { len: Length::Bounded(8000) },
            t if t.is_binary() || t == SqlType::Xml => return Err(util::invalid_arg(t.name(), 1, "string_agg")),
            _ => SqlType::NVarChar { len: Length::Bounded(4000) },
        },
        AggKind::ChecksumAgg => {
            let t = arg.unwrap_or(SqlType::Int);
            if !matches!(t, SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt | SqlType::Bit) {
                return Err(invalid(&t));
            }
            SqlType::Int
        }
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
    count: i64,
    saw_null: bool,
    /// Exact sum (integers, money units, decimal unscaled at `sum_scale`).
    sum: i128,
    sum_scale: u8,
    /// Approximate sum, and Welford's running mean and squared deviations.
    fsum: f64,
    mean: f64,
    m2: f64,
    best: Option<Value>,
    text: String,
    separator: String,
    /// STRING_AGG into a MAX type: the 2 GB check (Msg 7119).
    lob_guard: super::util::LobGuard,
    xor: i64,
}

impl Accumulator {
    pub fn new(kind: AggKind, arg_type: Option<SqlType>, result_type: SqlType) -> Accumulator {
        let sum_scale = match arg_type {
            Some(SqlType::Money | SqlType::SmallMoney) => 4,
            Some(t) => t.decimal_params().map_or(0, |(_, s)| s),
            None => 0,
        };
        Accumulator {
            kind,
            arg_type,
            result_type,
            count: 0,
            saw_null: false,
            sum: 0,
            sum_scale,
            fsum: 0.0,
            mean: 0.0,
            m2: 0.0,
            best: None,
            text: String::new(),
            separator: String::new(),
            lob_guard: Default::default(),
            xor: 0,
        }
    }

    fn approximate(&self) -> bool {
        matches!(self.result_type, SqlType::Float)
    }

    /// Adds one input. For STRING_AGG `extra` is the separator.
    pub fn update(&mut self, v: &Value, extra: Option<&Value>) -> Result<(), SqlError> {
        if v.is_null() {
            self.saw_null = true;
            return Ok(());
        }
        self.count += 1;
        match self.kind {
            AggKind::Count | AggKind::CountBig => {}
            AggKind::Sum | AggKind::Avg => {
                if self.approximate() {
                    self.fsum += util::to_f64(v).unwrap_or(0.0);
                } else {
                    let (x, s) = exact_parts(v).ok_or_else(|| overflow(self.result_type.name()))?;
                    let x = util::rescale(x, s, self.sum_scale).ok_or_else(|| overflow(self.result_type.name()))?;
                    self.sum = self.sum.checked_add(x).ok_or_else(|| overflow(self.result_type.name()))?;
                }
            }
            AggKind::Stdev | AggKind::Stdevp | AggKind::Var | AggKind::Varp => {
                let x = util::to_f64(v).unwrap_or(0.0);
                let delta = x - self.mean;
                self.mean += delta / self.count as f64;
                self.m2 += delta * (x - self.mean);
            }
            AggKind::Min | AggKind::Max => {
                let replace = match &self.best {
                    None => true,
                    Some(b) => {
                        let want = if self.kind == AggKind::Max { Ordering::Greater } else { Ordering::Less };
                        super::ops::compare(v, b, &self.result_type) == Some(want)
                    }
                };
                if replace {
                    self.best = Some(v.clone());
                }
            }
            AggKind::StringAgg => {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => {
                        let from = self.arg_type.unwrap_or_else(|| util::value_type(other));
                        match convert::convert(other, &from, &SqlType::NVarChar { len: Length::Max }, None)? {
                            Value::String(s) => s,
                            _ => String::new(),
                        }
                    }
                };
                if let Some(Value::String(sep)) = extra {
                    self.separator = sep.clone();
                }
                if self.count > 1 {
                    self.text.push_str(&self.separator);
                }
                self.text.push_str(&text);
                self.check_string_limit()?;
            }
            AggKind::ChecksumAgg => {
                let (x, _) = exact_parts(v).unwrap_or((0, 0));
                self.xor ^= x as i64;
            }
            AggKind::Grouping => self.best = Some(v.clone()),
        }
        Ok(())
    }

    /// Msg 9829 when a bounded STRING_AGG result passes 8000 bytes.
    fn check_string_limit(&mut self) -> Result<(), SqlError> {
        let bytes = match self.result_type {
            SqlType::NVarChar { len: Length::Bounded(_) } => 2 * types::ucs2::len(&self.text),
            SqlType::VarChar { len: Length::Bounded(_) } => self.text.chars().count(),
            // A MAX result: Msg 7119 as it passes 2 GB.
            ty => return self.lob_guard.check(&self.text, ty.is_unicode()),
        };
        if bytes > 8000 {
            return Err(SqlError::new(
                9829,
                16,
                1,
                "STRING_AGG aggregation result exceeded the limit of 8000 bytes. Use LOB types to avoid result truncation.",
            ));
        }
        Ok(())
    }

    /// Combines another accumulator of the same aggregate (parallel or partial
    /// aggregation). STRING_AGG appends the other's text after this one's.
    pub fn merge(&mut self, other: &Accumulator) -> Result<(), SqlError> {
        self.saw_null |= other.saw_null;
        if other.count == 0 {
            return Ok(());
        }
        let n1 = self.count as f64;
        let n2 = other.count as f64;
        let before = self.count;
        self.count += other.count;
        match self.kind {
            AggKind::Sum | AggKind::Avg => {
                self.fsum += other.fsum;
                self.sum = self.sum.checked_add(other.sum).ok_or_else(|| overflow(self.result_type.name()))?;
            }
            AggKind::Stdev | AggKind::Stdevp | AggKind::Var | AggKind::Varp => {
                let delta = other.mean - self.mean;
                let n = n1 + n2;
                self.mean += delta * n2 / n;
                self.m2 += other.m2 + delta * delta * n1 * n2 / n;
            }
            AggKind::Min | AggKind::Max => {
                self.count = before;
                if let Some(b) = &other.best {
                    self.update(b, None)?;
                }
                self.count = before + other.count;
            }
            AggKind::StringAgg => {
                if before > 0 {
                    self.text.push_str(&other.separator);
                }
                self.text.push_str(&other.text);
                self.check_string_limit()?;
            }
            AggKind::ChecksumAgg => self.xor ^= other.xor,
            AggKind::Grouping => {
                if self.best.is_none() {
                    self.best = other.best.clone();
                }
            }
            AggKind::Count | AggKind::CountBig => {}
        }
        Ok(())
    }

    /// The aggregate's value (NULL for SUM/AVG/MIN/MAX over no non-NULL input; 0 for
    /// COUNT). Msg 8115 on overflow; "Warning: Null value is eliminated..." is the
    /// executor's.
    pub fn finish(&self) -> Result<Value, SqlError> {
        let ty = &self.result_type;
        let ovf = || overflow(ty.name());
        Ok(match self.kind {
            AggKind::Count => Value::Int(i32::try_from(self.count).map_err(|_| overflow("int"))?),
            AggKind::CountBig => Value::BigInt(self.count),
            _ if self.count == 0 && self.kind != AggKind::Grouping => Value::Null,
            AggKind::Sum | AggKind::Avg => {
                let avg = self.kind == AggKind::Avg;
                if self.approximate() {
                    let v = if avg { self.fsum / self.count as f64 } else { self.fsum };
                    if !v.is_finite() {
                        return Err(overflow("float"));
                    }
                    return Ok(Value::Float(v));
                }
                match *ty {
                    SqlType::Int | SqlType::BigInt => {
                        // The sum must fit the result type even for AVG.
                        let sum = if *ty == SqlType::Int {
                            i128::from(i32::try_from(self.sum).map_err(|_| ovf())?)
                        } else {
                            i128::from(i64::try_from(self.sum).map_err(|_| ovf())?)
                        };
                        let v = if avg { sum / i128::from(self.count) } else { sum };
                        if *ty == SqlType::Int {
                            Value::Int(v as i32)
                        } else {
                            Value::BigInt(v as i64)
                        }
                    }
                    SqlType::Money => {
                        let sum = i64::try_from(self.sum).map_err(|_| ovf())?;
                        Value::Money(if avg { sum / self.count } else { sum })
                    }
                    _ => {
                        let (precision, scale) = ty.decimal_params().unwrap_or((38, self.sum_scale));
                        let num_ovf = || overflow("numeric");
                        let v = if avg {
                            Wide::from_i128(self.sum)
                                .mul_pow10(u32::from(scale.saturating_sub(self.sum_scale)))
                                .and_then(|w| w.div(Wide::from_i128(i128::from(self.count)), Rounding::Truncate))
                                .and_then(Wide::to_i128)
                                .ok_or_else(num_ovf)?
                        } else {
                            util::rescale(self.sum, self.sum_scale, scale).ok_or_else(num_ovf)?
                        };
                        if !types::decimal::fits_precision(v, precision) {
                            return Err(num_ovf());
                        }
                        Value::Decimal { value: v, precision, scale }
                    }
                }
            }
            AggKind::Stdev | AggKind::Var => {
                if self.count < 2 {
                    Value::Null
                } else {
                    let var = self.m2 / (self.count - 1) as f64;
                    Value::Float(if self.kind == AggKind::Stdev { var.sqrt() } else { var })
                }
            }
            AggKind::Stdevp | AggKind::Varp => {
                let var = (self.m2 / self.count as f64).max(0.0);
                Value::Float(if self.kind == AggKind::Stdevp { var.sqrt() } else { var })
            }
            AggKind::Min | AggKind::Max => self.best.clone().unwrap_or(Value::Null),
            AggKind::StringAgg => Value::String(self.text.clone()),
            AggKind::ChecksumAgg => Value::Int(self.xor as i32),
            AggKind::Grouping => Value::TinyInt(match &self.best {
                Some(v) => u8::from(exact_parts(v).is_some_and(|(x, _)| x != 0)),
                None => 0,
            }),
        })
    }

    /// Were any NULL inputs skipped? (for the ANSI_WARNINGS message 8153)
    pub fn saw_null(&self) -> bool {
        self.saw_null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: AggKind, arg: SqlType, vals: &[Value]) -> Result<Value, SqlError> {
        let rt = return_type(kind, Some(&arg))?;
        let mut a = Accumulator::new(kind, Some(arg), rt);
        for v in vals {
            a.update(v, Some(&Value::String(", ".into())))?;
        }
        a.finish()
    }

    fn ints(xs: &[i32]) -> Vec<Value> {
        xs.iter().map(|&x| Value::Int(x)).collect()
    }

    fn d(v: i128, p: u8, s: u8) -> Value {
        Value::Decimal { value: v, precision: p, scale: s }
    }

    #[test]
    fn result_types() {
        let dec = SqlType::Decimal { precision: 10, scale: 2 };
        assert_eq!(return_type(AggKind::Count, None).unwrap(), SqlType::Int);
        assert_eq!(return_type(AggKind::CountBig, None).unwrap(), SqlType::BigInt);
        assert_eq!(return_type(AggKind::Sum, Some(&SqlType::TinyInt)).unwrap(), SqlType::Int);
        assert_eq!(return_type(AggKind::Sum, Some(&SqlType::BigInt)).unwrap(), SqlType::BigInt);
        assert_eq!(return_type(AggKind::Sum, Some(&dec)).unwrap(), SqlType::Decimal { precision: 38, scale: 2 });
        assert_eq!(return_type(AggKind::Avg, Some(&dec)).unwrap(), SqlType::Decimal { precision: 38, scale: 6 });
        assert_eq!(
            return_type(AggKind::Avg, Some(&SqlType::Decimal { precision: 20, scale: 8 })).unwrap(),
            SqlType::Decimal { precision: 38, scale: 8 }
        );
        assert_eq!(return_type(AggKind::Sum, Some(&SqlType::SmallMoney)).unwrap(), SqlType::Money);
        assert_eq!(return_type(AggKind::Avg, Some(&SqlType::Real)).unwrap(), SqlType::Float);
        assert_eq!(
            return_type(AggKind::Max, Some(&SqlType::varchar(5).unwrap())).unwrap(),
            SqlType::varchar(5).unwrap()
        );
        assert_eq!(return_type(AggKind::Stdev, Some(&SqlType::Int)).unwrap(), SqlType::Float);
        assert_eq!(
            return_type(AggKind::StringAgg, Some(&SqlType::varchar(5).unwrap())).unwrap(),
            SqlType::varchar(8000).unwrap()
        );
        assert_eq!(
            return_type(AggKind::StringAgg, Some(&SqlType::nvarchar(5).unwrap())).unwrap(),
            SqlType::nvarchar(4000).unwrap()
        );
        assert_eq!(
            return_type(AggKind::StringAgg, Some(&SqlType::VarChar { len: Length::Max })).unwrap(),
            SqlType::VarChar { len: Length::Max }
        );
        assert_eq!(return_type(AggKind::StringAgg, Some(&SqlType::Int)).unwrap(), SqlType::nvarchar(4000).unwrap());
        assert_eq!(return_type(AggKind::Grouping, None).unwrap(), SqlType::TinyInt);
        let e = return_type(AggKind::Sum, Some(&SqlType::Bit)).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (8117, "Operand data type bit is invalid for sum operator."));
        let e = return_type(AggKind::Avg, Some(&SqlType::varchar(5).unwrap())).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (8117, "Operand data type varchar is invalid for avg operator."));
        assert_eq!(return_type(AggKind::Max, Some(&SqlType::Bit)).unwrap_err().number, 8117);
        assert_eq!(return_type(AggKind::Stdev, Some(&SqlType::Date)).unwrap_err().number, 8117);
        assert_eq!(AggKind::from_name("string_agg"), Some(AggKind::StringAgg));
    }

    #[test]
    fn counts_sums_and_averages() {
        let mut c = Accumulator::new(AggKind::Count, Some(SqlType::Int), SqlType::Int);
        for v in [Value::Int(1), Value::Null, Value::Int(2)] {
            c.update(&v, None).unwrap();
        }
        assert_eq!(c.finish().unwrap(), Value::Int(2));
        assert!(c.saw_null());
        let empty = Accumulator::new(AggKind::Count, None, SqlType::Int);
        assert_eq!(empty.finish().unwrap(), Value::Int(0));
        assert!(!empty.saw_null());
        assert_eq!(run(AggKind::Sum, SqlType::Int, &ints(&[1, 2, 3])).unwrap(), Value::Int(6));
        assert_eq!(run(AggKind::Sum, SqlType::Int, &[]).unwrap(), Value::Null);
        let e = run(AggKind::Sum, SqlType::Int, &ints(&[i32::MAX, 1])).unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (8115, "Arithmetic overflow error converting expression to data type int.")
        );
        assert_eq!(run(AggKind::Sum, SqlType::Int, &ints(&[i32::MAX, 1, -5])).unwrap(), Value::Int(i32::MAX - 4));
        assert_eq!(run(AggKind::Avg, SqlType::Int, &ints(&[1, 2])).unwrap(), Value::Int(1));
        assert_eq!(run(AggKind::Avg, SqlType::Int, &ints(&[-1, -2])).unwrap(), Value::Int(-1));
        assert_eq!(run(AggKind::Avg, SqlType::Int, &ints(&[i32::MAX, i32::MAX])).unwrap_err().number, 8115);
        let dec = SqlType::Decimal { precision: 10, scale: 2 };
        assert_eq!(run(AggKind::Sum, dec, &[d(150, 10, 2), d(275, 10, 2)]).unwrap(), d(425, 38, 2));
        // AVG(decimal) divides with truncation at scale max(s, 6).
        assert_eq!(
            run(AggKind::Avg, dec, &[d(100, 10, 2), d(100, 10, 2), d(200, 10, 2)]).unwrap(),
            d(1_333_333, 38, 6)
        );
        let four = [d(400, 10, 2)].into_iter().chain(std::iter::repeat_n(d(0, 10, 2), 6)).collect::<Vec<_>>();
        assert_eq!(run(AggKind::Avg, dec, &four).unwrap(), d(571_428, 38, 6));
        assert_eq!(
            run(AggKind::Avg, SqlType::Money, &[Value::Money(10_000), Value::Money(0), Value::Money(0)]).unwrap(),
            Value::Money(3_333)
        );
        assert_eq!(
            run(AggKind::Sum, SqlType::SmallMoney, &[Value::Money(10_000), Value::Money(5)]).unwrap(),
            Value::Money(10_005)
        );
        assert_eq!(
            run(AggKind::Avg, SqlType::Float, &[Value::Float(1.0), Value::Float(2.0)]).unwrap(),
            Value::Float(1.5)
        );
        assert_eq!(
            run(AggKind::Sum, SqlType::Real, &[Value::Real(16_777_216.0), Value::Real(1.0), Value::Real(1.0)]).unwrap(),
            Value::Float(16_777_218.0)
        );
        assert_eq!(
            run(AggKind::Sum, SqlType::Float, &[Value::Float(f64::MAX), Value::Float(f64::MAX)]).unwrap_err().number,
            8115
        );
        assert_eq!(
            run(AggKind::Sum, SqlType::BigInt, &[Value::BigInt(i64::MAX), Value::BigInt(1)]).unwrap_err().number,
            8115
        );
    }

    #[test]
    fn extremes_and_statistics() {
        let vc = SqlType::varchar(5).unwrap();
        let s = |x: &str| Value::String(x.into());
        assert_eq!(run(AggKind::Max, vc, &[s("apple"), s("Banana"), s("cherry")]).unwrap(), s("cherry"));
        assert_eq!(run(AggKind::Min, vc, &[s("b"), s("A"), s("a")]).unwrap(), s("A"));
        assert_eq!(run(AggKind::Min, SqlType::Int, &ints(&[3, -1, 2])).unwrap(), Value::Int(-1));
        assert_eq!(run(AggKind::Max, SqlType::Int, &[]).unwrap(), Value::Null);
        let xs: Vec<Value> = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].iter().map(|&x| Value::Float(x)).collect();
        assert_eq!(run(AggKind::Stdevp, SqlType::Float, &xs).unwrap(), Value::Float(2.0));
        assert_eq!(run(AggKind::Varp, SqlType::Float, &xs).unwrap(), Value::Float(4.0));
        let Value::Float(v) = run(AggKind::Var, SqlType::Float, &xs).unwrap() else { panic!() };
        assert!((v - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(run(AggKind::Stdev, SqlType::Int, &ints(&[5])).unwrap(), Value::Null);
        assert_eq!(run(AggKind::Stdevp, SqlType::Int, &ints(&[5])).unwrap(), Value::Float(0.0));
        assert_eq!(run(AggKind::ChecksumAgg, SqlType::Int, &ints(&[5, 3, 5])).unwrap(), Value::Int(3));
    }

    #[test]
    fn string_agg() {
        let vc = SqlType::varchar(5).unwrap();
        let s = |x: &str| Value::String(x.into());
        assert_eq!(run(AggKind::StringAgg, vc, &[s("a"), Value::Null, s("b")]).unwrap(), s("a, b"));
        assert_eq!(run(AggKind::StringAgg, vc, &[]).unwrap(), Value::Null);
        assert_eq!(run(AggKind::StringAgg, SqlType::Int, &ints(&[1, 2])).unwrap(), s("1, 2"));
        let long: Vec<Value> = (0..2000).map(|_| s("abcd")).collect();
        let e = run(AggKind::StringAgg, vc, &long).unwrap_err();
        assert_eq!(e.number, 9829);
        assert!(run(AggKind::StringAgg, SqlType::VarChar { len: Length::Max }, &long).is_ok());
    }

    #[test]
    fn merging_and_grouping() {
        let mut a = Accumulator::new(AggKind::Var, Some(SqlType::Float), SqlType::Float);
        let mut b = a.clone();
        for x in [2.0, 4.0, 4.0, 4.0] {
            a.update(&Value::Float(x), None).unwrap();
        }
        for x in [5.0, 5.0, 7.0, 9.0] {
            b.update(&Value::Float(x), None).unwrap();
        }
        a.merge(&b).unwrap();
        let Value::Float(v) = a.finish().unwrap() else { panic!() };
        assert!((v - 32.0 / 7.0).abs() < 1e-12);
        let mut m = Accumulator::new(AggKind::Max, Some(SqlType::Int), SqlType::Int);
        let mut n = m.clone();
        m.update(&Value::Int(3), None).unwrap();
        n.update(&Value::Int(9), None).unwrap();
        m.merge(&n).unwrap();
        assert_eq!(m.finish().unwrap(), Value::Int(9));
        let mut g = Accumulator::new(AggKind::Grouping, None, SqlType::TinyInt);
        g.update(&Value::Int(1), None).unwrap();
        assert_eq!(g.finish().unwrap(), Value::TinyInt(1));
    }
}
