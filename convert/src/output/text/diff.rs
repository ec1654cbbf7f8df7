//! `heapsampler diff`'s comparison as people read it: each group's change
//! with both sides' figures and 95% intervals, and whether it is
//! significant.

use std::fmt::Write as _;

use heapsampler_core::estimate::Interval;

use crate::analysis::diff::Diff;
use crate::output::human::{WIDE_MARK, human_bytes, human_interval};

/// Bytes with a sign: `+12.3 MB`, `-512 B`, `0 B`.
fn signed_bytes(bytes: f64) -> String {
    let sign = if bytes > 0.0 {
        "+"
    } else if bytes < 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", human_bytes(bytes.abs()))
}

/// The comparison as text, at most `limit` groups. Cells are separated
/// by at least two spaces and hold no two in a row.
pub fn render(diff: &Diff, limit: usize) -> String {
    let unit = if diff.per_second { "/s" } else { "" };
    let bytes = |b: f64| format!("{}{unit}", human_bytes(b));
    let interval = |i: &Interval| format!("{}{unit}", human_interval(i, human_bytes));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>4}   {:>12}  {:>11}  {:>19}  {:>11}  {:>19}  {:>15}  where",
        "#", "change", "base", "95% interval", "new", "95% interval", "samples"
    );
    let mut marked = false;
    for (rank, change) in diff.changes.iter().take(limit).enumerate() {
        let same = !change.is_significant();
        marked |= same;
        let _ = writeln!(
            out,
            "{:>4}{}  {:>12}  {:>11}  {:>19}  {:>11}  {:>19}  {:>15}  {}",
            rank + 1,
            if same { WIDE_MARK } else { ' ' },
            format!("{}{unit}", signed_bytes(change.change())),
            bytes(change.base.estimate),
            interval(&change.base),
            bytes(change.new.estimate),
            interval(&change.new),
            format!("{} -> {}", change.samples.0, change.samples.1),
            change.key
        );
    }
    let total = &diff.total;
    let _ = writeln!(
        out,
        "total: {} ({}) -> {} ({}), {}{unit}{}",
        bytes(total.base.estimate),
        interval(&total.base),
        bytes(total.new.estimate),
        interval(&total.new),
        signed_bytes(total.change()),
        if total.is_significant() {
            ""
        } else {
            ", not significant"
        }
    );
    if marked {
        let _ = writeln!(
            out,
            "{} not significant: the two 95% intervals overlap",
            WIDE_MARK
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::Change;

    fn change(key: &str, base: f64, new: f64) -> Change {
        let interval = |at: f64| Interval {
            estimate: at,
            low: at * 0.9,
            high: at * 1.1,
        };
        Change {
            key: key.to_owned(),
            base: interval(base),
            new: interval(new),
            samples: (10, 20),
        }
    }

    #[test]
    fn changes_in_order_and_those_not_significant_marked() {
        let diff = Diff {
            changes: vec![
                change("leak", 1000.0, 5000.0),
                change("steady", 1000.0, 1010.0),
            ],
            total: change("", 2000.0, 6010.0),
            per_second: true,
        };
        let text = render(&diff, 10);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("+4.0 kB/s") && lines[1].ends_with("leak"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("   2~") && lines[2].ends_with("steady"),
            "{text}"
        );
        assert!(text.contains("~ not significant"), "{text}");
        assert!(
            render(&diff, 1)
                .lines()
                .all(|line| !line.contains("steady"))
        );
    }
}
