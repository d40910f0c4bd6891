//! The study's output: text tables, the targets, a JSON file and an SVG chart (two grouped
//! bar charts like the article's: average WRITELOG wait per thread, average duration per
//! thread), all written by hand.

use std::fmt::Write as _;

use tds::client::ResultSet;

use crate::model::{ArticleFailure, Engine, OneRowResult, TestResult, TESTS};

/// Everything one run produced.
pub struct Study {
    pub command: String,
    pub iterations: u64,
    pub thread_counts: Vec<usize>,
    pub one_row_threads: usize,
    pub one_row_seconds: f64,
    pub mesquite_version: String,
    pub postgres_version: String,
    pub notes: Vec<String>,
    pub failures: Vec<ArticleFailure>,
    pub results: Vec<TestResult>,
    pub analysis: Option<ResultSet>,
    pub analysis_error: Option<String>,
    pub one_row: Vec<OneRowResult>,
    pub pgbench_tps: Option<f64>,
    pub pgbench_note: Option<String>,
}

pub struct Target {
    pub name: String,
    pub measured: String,
    pub met: Option<bool>,
}

/// Left-aligned first column, right-aligned others.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(c.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(headers.to_vec());
    out.push('\n');
    out.push_str(&line(widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().iter().map(String::as_str).collect()));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

fn f2(v: f64) -> String {
    format!("{v:.2}")
}

fn thousands(v: f64) -> String {
    let n = v.round() as i64;
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

impl Study {
    pub fn result(&self, engine: Engine, threads: usize, test_id: u8) -> Option<&TestResult> {
        self.results.iter().find(|r| r.engine == engine && r.threads == threads && r.test.id == test_id)
    }

    fn one_row_of(&self, engine: Engine) -> Option<&OneRowResult> {
        self.one_row.iter().find(|r| r.engine == engine)
    }

    /// The thread count the targets are judged at: 16 when run, else the largest.
    fn target_threads(&self) -> usize {
        if self.thread_counts.contains(&16) {
            16
        } else {
            self.thread_counts.iter().copied().max().unwrap_or(0)
        }
    }

    pub fn analysis_table(&self) -> String {
        match (&self.analysis, &self.analysis_error) {
            (Some(rs), _) => {
                let headers: Vec<&str> = rs.columns.iter().map(String::as_str).collect();
                let rows: Vec<Vec<String>> =
                    rs.rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect();
                table(&headers, &rows)
            }
            (None, Some(e)) => format!("(the analysis query failed: {e})\n"),
            (None, None) => "(not run)\n".to_string(),
        }
    }

    /// Our table, from the same data: both engines.
    pub fn results_table(&self) -> String {
        let mut rows = Vec::new();
        for r in &self.results {
            rows.push(vec![
                format!("{}, {} threads", r.test.label(), r.threads),
                r.engine.name().to_string(),
                thousands(r.rows as f64),
                r.log_writes.to_string(),
                r.log_syncs.map_or("-".to_string(), |s| s.to_string()),
                f1(r.log_bytes as f64 / 1048576.0),
                f1(r.write_stall_ms),
                r.avg_writelog_ms().map_or("n/a".to_string(), f2),
                f2(r.avg_thread_s()),
                thousands(r.rows_per_s()),
                if r.errors > 0 { r.errors.to_string() } else { String::new() },
            ]);
        }
        table(
            &[
                "Test",
                "Engine",
                "Rows",
                "Log writes",
                "Log syncs",
                "Log MB",
                "Write stall ms",
                "Avg WRITELOG/thread ms",
                "Avg duration/thread s",
                "Rows/s",
                "Errors",
            ],
            &rows,
        )
    }

    pub fn comparison_table(&self) -> String {
        let mut rows = Vec::new();
        for &t in &self.thread_counts {
            for test in TESTS {
                let m = self.result(Engine::Mesquite, t, test.id);
                let p = self.result(Engine::Postgres, t, test.id);
                let ratio = match (m, p) {
                    (Some(m), Some(p)) if p.rows_per_s() > 0.0 => format!("{:.2}x", m.rows_per_s() / p.rows_per_s()),
                    _ => "-".to_string(),
                };
                rows.push(vec![
                    format!("{}, {t} threads", test.label()),
                    m.map_or("-".to_string(), |m| thousands(m.rows_per_s())),
                    p.map_or("-".to_string(), |p| thousands(p.rows_per_s())),
                    ratio,
                    m.map_or("-".to_string(), |m| f2(m.avg_thread_s())),
                    p.map_or("-".to_string(), |p| f2(p.avg_thread_s())),
                ]);
            }
        }
        table(
            &["Test", "Mesquite rows/s", "PostgreSQL rows/s", "Mesquite/PG", "Mesquite s/thread", "PG s/thread"],
            &rows,
        )
    }

    pub fn one_row_table(&self) -> String {
        let mut rows: Vec<Vec<String>> = self
            .one_row
            .iter()
            .map(|r| {
                vec![
                    format!("{} (stress runner, {} threads)", r.engine.name(), r.threads),
                    thousands(r.transactions as f64),
                    f2(r.elapsed.as_secs_f64()),
                    thousands(r.tps()),
                    r.errors.to_string(),
                ]
            })
            .collect();
        if let Some(tps) = self.pgbench_tps {
            rows.push(vec![
                format!("PostgreSQL (pgbench -n -c {} -j 2)", self.one_row_threads),
                "-".to_string(),
                format!("{:.0}", self.one_row_seconds.max(1.0).round()),
                thousands(tps),
                "-".to_string(),
            ]);
        }
        table(&["One-row transactions", "Transactions", "Seconds", "TPS", "Errors"], &rows)
    }

    pub fn targets(&self) -> Vec<Target> {
        let t = self.target_threads();
        let mut out = Vec::new();
        let ratio_target = |name: String, m: Option<f64>, p: Option<f64>| match (m, p) {
            (Some(m), Some(p)) if p > 0.0 => Target {
                name,
                measured: format!("{} vs {} rows/s = {:.3}x", thousands(m), thousands(p), m / p),
                met: Some(m / p >= 1.5),
            },
            _ => Target { name, measured: "not measured".to_string(), met: None },
        };
        let rps = |e, id| self.result(e, t, id).map(TestResult::rows_per_s);
        out.push(ratio_target(
            format!("Durable insert, {t} threads: Mesquite (DD off) >= 1.5x PostgreSQL (synchronous_commit on)"),
            rps(Engine::Mesquite, 1),
            rps(Engine::Postgres, 1),
        ));
        out.push(ratio_target(
            format!("Delayed insert, {t} threads: Mesquite (DD on) >= 1.5x PostgreSQL (synchronous_commit off)"),
            rps(Engine::Mesquite, 2),
            rps(Engine::Postgres, 2),
        ));
        for (name, off, on) in [("insert", 1, 2), ("delete", 3, 4)] {
            let w = |id| self.result(Engine::Mesquite, t, id).and_then(TestResult::avg_writelog_ms);
            let target_name = format!("WRITELOG per thread, {name}, {t} threads: DD on >= 95% below DD off");
            out.push(match (w(off), w(on)) {
                (Some(off), Some(on)) if off > 0.0 => {
                    let down = 1.0 - on / off;
                    Target {
                        name: target_name,
                        measured: format!("{off:.1} ms -> {on:.1} ms, down {:.1}%", down * 100.0),
                        met: Some(down >= 0.95),
                    }
                }
                (Some(off), Some(on)) => Target {
                    name: target_name,
                    measured: format!("{off:.1} ms -> {on:.1} ms (no WRITELOG waits with DD off)"),
                    met: None,
                },
                _ => Target { name: target_name, measured: "not measured".to_string(), met: None },
            });
        }
        let tps = |e| self.one_row_of(e).map(OneRowResult::tps);
        out.push(match (tps(Engine::Mesquite), tps(Engine::Postgres)) {
            (Some(m), Some(p)) if p > 0.0 => Target {
                name: format!(
                    "One-row transactions, {} clients, durable: Mesquite TPS >= 1.5x PostgreSQL",
                    self.one_row_threads
                ),
                measured: format!("{} vs {} TPS = {:.3}x", thousands(m), thousands(p), m / p),
                met: Some(m / p >= 1.5),
            },
            _ => Target {
                name: "One-row transactions: Mesquite TPS >= 1.5x PostgreSQL".to_string(),
                measured: "not measured".to_string(),
                met: None,
            },
        });
        out
    }

    pub fn targets_table(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .targets()
            .into_iter()
            .map(|t| {
                vec![
                    t.name,
                    t.measured,
                    match t.met {
                        Some(true) => "met",
                        Some(false) => "NOT MET",
                        None => "n/a",
                    }
                    .to_string(),
                ]
            })
            .collect();
        table(&["Target", "Measured", "Result"], &rows)
    }

    pub fn to_json(&self) -> String {
        let mut o = String::from("{\n");
        let _ = writeln!(o, "  \"command\": {},", js(&self.command));
        let _ = writeln!(o, "  \"iterations_per_thread\": {},", self.iterations);
        let _ = writeln!(o, "  \"rows_per_iteration\": 1000,");
        let _ = writeln!(
            o,
            "  \"thread_counts\": [{}],",
            self.thread_counts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
        );
        let _ = writeln!(o, "  \"mesquite_version\": {},", js(&self.mesquite_version));
        let _ = writeln!(o, "  \"postgres_version\": {},", js(&self.postgres_version));
        let _ = writeln!(o, "  \"notes\": [{}],", self.notes.iter().map(|n| js(n)).collect::<Vec<_>>().join(", "));
        let failures: Vec<String> = self
            .failures
            .iter()
            .map(|f| {
                format!(
                    "{{\"what\": {}, \"statement\": {}, \"error\": {}, \"workaround\": {}}}",
                    js(&f.what),
                    js(&f.statement),
                    js(&f.error),
                    js(&f.workaround)
                )
            })
            .collect();
        let _ = writeln!(o, "  \"article_failures\": [{}],", failures.join(", "));
        let tests: Vec<String> = self
            .results
            .iter()
            .map(|r| {
                format!(
                    "    {{\"engine\": {}, \"threads\": {}, \"test_id\": {}, \"test\": {}, \"rows\": {}, \
                     \"total_elapsed_s\": {}, \"avg_thread_elapsed_s\": {}, \"thread_elapsed_s\": [{}], \
                     \"rows_per_s\": {}, \"log_writes\": {}, \"log_syncs\": {}, \"log_bytes\": {}, \
                     \"log_file_bytes\": {}, \"write_stall_ms\": {}, \"avg_writelog_ms_per_thread\": {}, \"writelog_ms\": {}, \
                     \"errors\": {}, \"first_errors\": [{}], \"check\": {}}}",
                    js(r.engine.name()),
                    r.threads,
                    r.test.id,
                    js(&r.test.label()),
                    r.rows,
                    num(r.total_elapsed.as_secs_f64()),
                    num(r.avg_thread_s()),
                    r.thread_elapsed.iter().map(|d| num(d.as_secs_f64())).collect::<Vec<_>>().join(", "),
                    num(r.rows_per_s()),
                    r.log_writes,
                    r.log_syncs.map_or("null".to_string(), |s| s.to_string()),
                    r.log_bytes,
                    r.log_file_bytes.map_or("null".to_string(), |b| b.to_string()),
                    num(r.write_stall_ms),
                    r.avg_writelog_ms().map_or("null".to_string(), num),
                    r.writelog_ms.as_ref().map_or("null".to_string(), |w| format!(
                        "[{}]",
                        w.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
                    )),
                    r.errors,
                    r.first_errors.iter().map(|e| js(e)).collect::<Vec<_>>().join(", "),
                    r.check.as_deref().map_or("null".to_string(), js),
                )
            })
            .collect();
        let _ = writeln!(o, "  \"tests\": [\n{}\n  ],", tests.join(",\n"));
        let one: Vec<String> = self
            .one_row
            .iter()
            .map(|r| {
                format!(
                    "    {{\"engine\": {}, \"threads\": {}, \"transactions\": {}, \"elapsed_s\": {}, \"tps\": {}, \"errors\": {}}}",
                    js(r.engine.name()),
                    r.threads,
                    r.transactions,
                    num(r.elapsed.as_secs_f64()),
                    num(r.tps()),
                    r.errors
                )
            })
            .collect();
        let _ = writeln!(o, "  \"one_row\": [\n{}\n  ],", one.join(",\n"));
        let _ = writeln!(o, "  \"pgbench_tps\": {},", self.pgbench_tps.map_or("null".to_string(), num));
        match &self.analysis {
            Some(rs) => {
                let rows: Vec<String> = rs
                    .rows
                    .iter()
                    .map(|r| format!("[{}]", r.iter().map(|v| js(&v.to_string())).collect::<Vec<_>>().join(", ")))
                    .collect();
                let _ = writeln!(
                    o,
                    "  \"analysis_query\": {{\"columns\": [{}], \"rows\": [{}]}},",
                    rs.columns.iter().map(|c| js(c)).collect::<Vec<_>>().join(", "),
                    rows.join(", ")
                );
            }
            None => {
                let _ = writeln!(o, "  \"analysis_query\": null,");
            }
        }
        let targets: Vec<String> = self
            .targets()
            .iter()
            .map(|t| {
                format!(
                    "    {{\"target\": {}, \"measured\": {}, \"met\": {}}}",
                    js(&t.name),
                    js(&t.measured),
                    t.met.map_or("null".to_string(), |m| m.to_string())
                )
            })
            .collect();
        let _ = writeln!(o, "  \"targets\": [\n{}\n  ]", targets.join(",\n"));
        o.push_str("}\n");
        o
    }

    /// Two grouped bar charts, one above the other: average WRITELOG wait per thread
    /// (Mesquite only: PostgreSQL has no per-session waits) and average duration per thread
    /// (both engines), grouped by test, one bar per engine and thread count.
    pub fn to_svg(&self) -> String {
        let groups: Vec<String> = TESTS.iter().map(|t| t.label()).collect();
        let mesquite_colors = ["#1f5fa8", "#6fa8dc", "#0b3d6e", "#a9c8ec"];
        let pg_colors = ["#d9822b", "#f2b880", "#9c5412", "#f7d3ad"];
        let mut writelog = Vec::new();
        let mut durations = Vec::new();
        for (i, &t) in self.thread_counts.iter().enumerate() {
            let values = |e: Engine, f: &dyn Fn(&TestResult) -> Option<f64>| -> Vec<Option<f64>> {
                TESTS.iter().map(|test| self.result(e, t, test.id).and_then(f)).collect()
            };
            writelog.push(Series {
                name: format!("Mesquite, {t} threads"),
                color: mesquite_colors[i % 4],
                values: values(Engine::Mesquite, &|r| r.avg_writelog_ms()),
            });
            durations.push(Series {
                name: format!("Mesquite, {t} threads"),
                color: mesquite_colors[i % 4],
                values: values(Engine::Mesquite, &|r| Some(r.avg_thread_s())),
            });
        }
        for (i, &t) in self.thread_counts.iter().enumerate() {
            durations.push(Series {
                name: format!("PostgreSQL, {t} threads"),
                color: pg_colors[i % 4],
                values: TESTS
                    .iter()
                    .map(|test| self.result(Engine::Postgres, t, test.id).map(|r| r.avg_thread_s()))
                    .collect(),
            });
        }
        let (w, h) = (960.0, 420.0);
        let mut svg = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\" viewBox=\"0 0 {w} {}\" \
             font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
            2.0 * h,
            2.0 * h
        );
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"40\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">Mesquite only: \
             PostgreSQL keeps no cumulative waits per session</text>\n",
            w / 2.0
        ));
        svg.push_str(&bar_chart(
            &format!("Average WRITELOG wait per thread (ms), {} iterations x 1000 rows per thread", self.iterations),
            "ms",
            &groups,
            &writelog,
            0.0,
            w,
            h,
        ));
        svg.push_str(&bar_chart("Average duration per thread (s)", "s", &groups, &durations, h, w, h));
        svg.push_str("</svg>\n");
        svg
    }
}

struct Series {
    name: String,
    color: &'static str,
    values: Vec<Option<f64>>,
}

/// A step of 1, 2 or 5 x 10^k giving about five gridlines up to `max`.
fn nice_step(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

fn label_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// An axis label with as many decimals as the step needs ("0", "2.5", "0.05").
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    format!("{v:.decimals$}")
}

fn bar_chart(title: &str, unit: &str, groups: &[String], series: &[Series], top: f64, w: f64, h: f64) -> String {
    let (left, right, plot_top, bottom) = (70.0, 20.0, top + 60.0, top + h - 70.0);
    let plot_w = w - left - right;
    let plot_h = bottom - plot_top;
    let max = series.iter().flat_map(|s| s.values.iter().flatten()).fold(0.0f64, |a, &b| a.max(b));
    let step = nice_step(max);
    let axis_max = ((max / step).ceil() * step).max(step);
    let y = |v: f64| bottom - v / axis_max * plot_h;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        w / 2.0,
        top + 24.0,
        xml(title)
    );
    let mut v = 0.0;
    while v <= axis_max + step / 2.0 {
        let yy = y(v);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            tick_label(v, step)
        );
        v += step;
    }
    let _ = writeln!(
        s,
        "<text x=\"18\" y=\"{:.1}\" transform=\"rotate(-90 18 {:.1})\" text-anchor=\"middle\">{}</text>",
        (plot_top + bottom) / 2.0,
        (plot_top + bottom) / 2.0,
        xml(unit)
    );
    let _ = writeln!(
        s,
        "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{:.1}\" y2=\"{bottom}\" stroke=\"#333\"/>",
        left + plot_w
    );
    let group_w = plot_w / groups.len().max(1) as f64;
    let n = series.len().max(1) as f64;
    let bar_w = (group_w * 0.8 / n).min(60.0);
    for (gi, g) in groups.iter().enumerate() {
        let gx = left + gi as f64 * group_w;
        let start = gx + (group_w - bar_w * n) / 2.0;
        for (si, se) in series.iter().enumerate() {
            let Some(val) = se.values.get(gi).copied().flatten() else { continue };
            let x = start + si as f64 * bar_w;
            let yy = y(val);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}</title></rect>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
                bar_w - 2.0,
                (bottom - yy).max(0.0),
                se.color,
                xml(&se.name),
                label_value(val),
                x + bar_w / 2.0 - 1.0,
                yy - 3.0,
                label_value(val)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            gx + group_w / 2.0,
            bottom + 18.0,
            xml(g)
        );
    }
    // Legend, one row under the axis labels.
    let mut lx = left;
    let ly = bottom + 40.0;
    for se in series {
        let _ = writeln!(
            s,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{ly:.1}\">{}</text>",
            ly - 10.0,
            se.color,
            lx + 16.0,
            xml(&se.name)
        );
        lx += 24.0 + se.name.len() as f64 * 7.0;
    }
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A JSON string literal.
pub fn js(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON number (non-finite values become null).
fn num(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s.is_empty() || s == "-" {
            "0".to_string()
        } else {
            s.to_string()
        }
    } else {
        "null".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(js("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(f64::NAN), "null");
        assert_eq!(nice_step(47.0), 10.0);
        assert_eq!(nice_step(0.0), 1.0);
        assert_eq!(tick_label(0.0, 0.5), "0.0");
        assert_eq!(tick_label(200.0, 100.0), "200");
        let t = table(&["A", "B"], &[vec!["x".into(), "10".into()]]);
        assert_eq!(t, "A   B\n-  --\nx  10\n");
    }
}
