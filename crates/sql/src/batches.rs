//! Splitting a script into batches on `GO`, as sqlcmd and SSMS do.
//!
//! GO is not T-SQL: the client splits the script and sends each batch separately, so the
//! server never sees it. The rule implemented is sqlcmd's: a line that holds only `GO`
//! (any case), optionally followed by a positive repeat count and a `--` comment, ends the
//! batch. The split is purely line-based, as in sqlcmd: a GO line inside a block comment
//! or a multi-line string still splits (which is why such scripts fail there too).
//! Decisions: a GO line with anything else on it (`GO;`, `GO 0`, `GO x`) is not a
//! separator and stays in the batch (the server then reports it); batches that are only
//! white space are dropped.

/// One batch of a script: the 1-based line of the script where its text starts, its
/// text, and how many times to run it (`GO 5` runs the batch five times).
pub type ScriptBatch = (u32, String, u32);

/// Split `script` into batches (see the module documentation).
pub fn split_batches(script: &str) -> Vec<ScriptBatch> {
    // A byte-order mark is not part of the first line.
    let script = script.strip_prefix('\u{feff}').unwrap_or(script);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start_line = 1u32;
    let mut line_no = 0u32;
    for line in script.split_inclusive('\n') {
        line_no += 1;
        if let Some(count) = go_line(line) {
            push_batch(&mut out, start_line, &mut current, count);
            start_line = line_no + 1;
            continue;
        }
        current.push_str(line);
    }
    push_batch(&mut out, start_line, &mut current, 1);
    out
}

fn push_batch(out: &mut Vec<ScriptBatch>, start_line: u32, current: &mut String, count: u32) {
    let text = std::mem::take(current);
    if !text.trim().is_empty() {
        // The last line's newline belongs to the separator, not to the batch.
        let text = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text).to_string();
        out.push((start_line, text, count));
    }
}

/// `Some(count)` if the line is a GO separator.
fn go_line(line: &str) -> Option<u32> {
    let mut rest = line.trim();
    if let Some(i) = rest.find("--") {
        rest = rest[..i].trim_end();
    }
    let word = rest.get(..2)?;
    if !word.eq_ignore_ascii_case("go") {
        return None;
    }
    let tail = &rest[2..];
    if tail.is_empty() {
        return Some(1);
    }
    // `GO` must be followed by white space before a count (`GOTO x` is T-SQL).
    if !tail.starts_with(|c: char| c.is_whitespace()) {
        return None;
    }
    let n: u32 = tail.trim().parse().ok()?;
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_go_lines() {
        let script = "SELECT 1\nGO\nSELECT 2\n  go  \nINSERT t VALUES (1)\nGO 1000000\nGO\nSELECT 3";
        assert_eq!(
            split_batches(script),
            vec![
                (1, "SELECT 1".to_string(), 1),
                (3, "SELECT 2".to_string(), 1),
                (5, "INSERT t VALUES (1)".to_string(), 1_000_000),
                (8, "SELECT 3".to_string(), 1),
            ]
        );
    }

    #[test]
    fn go_with_comment_and_crlf() {
        let script = "SELECT 1\r\nGO -- run it\r\nSELECT 2\r\n";
        assert_eq!(split_batches(script), vec![(1, "SELECT 1".to_string(), 1), (3, "SELECT 2".to_string(), 1)]);
    }

    #[test]
    fn not_separators() {
        for s in ["GOTO done", "GO;", "GO 0", "GO x", "SELECT 1 GO", "go2"] {
            assert_eq!(split_batches(s), vec![(1, s.to_string(), 1)], "{s}");
        }
        assert!(split_batches("GO\n\nGO\n").is_empty());
        assert_eq!(split_batches("\u{feff}GO\nSELECT 1"), vec![(2, "SELECT 1".to_string(), 1)]);
    }
}
