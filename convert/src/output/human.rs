//! Figures for people: bytes, counts and intervals as `top`, `diff`, the
//! flame graphs and the messages after a command write them.

use std::fmt::Write as _;

use heapsampler_core::estimate::{Estimate, Interval};

/// Bytes for people: `1.5 GB`, `340.2 MB`, `12.0 kB`, `512 B`.
pub fn human_bytes(bytes: f64) -> String {
    human(bytes, ["B", "kB", "MB", "GB", "TB"])
}

/// Counts for people: `12`, `12.3 k`, `4.5 M`, `1.2 G`.
pub fn human_count(count: f64) -> String {
    human(count, ["", "k", "M", "G", "T"])
}

/// `value` in thousands of the unit it reaches: a whole number below 1000,
/// one decimal from there on, the unit after a space (none for `""`).
fn human(value: f64, units: [&str; 5]) -> String {
    let mut value = value;
    let mut at = 0;
    while value >= 1000.0 && at + 1 < units.len() {
        value /= 1000.0;
        at += 1;
    }
    // abs: an empty sum of floats is -0.0.
    let number = if at == 0 {
        format!("{:.0}", value.abs())
    } else {
        format!("{value:.1}")
    };
    match units[at] {
        "" => number,
        unit => format!("{number} {unit}"),
    }
}

/// An interval for people, with `human` writing its bounds: `5.2-7.1 MB`,
/// or `900.0 kB-1.2 MB` where the units differ.
pub fn human_interval(interval: &Interval, human: fn(f64) -> String) -> String {
    let (low, high) = (human(interval.low), human(interval.high));
    match (low.split_once(' '), high.split_once(' ')) {
        // One unit: written once, after the upper bound.
        (Some((low_number, unit)), Some((_, high_unit))) if unit == high_unit => {
            format!("{low_number}-{high}")
        }
        _ => format!("{low}-{high}"),
    }
}

/// The mark of a row whose interval is wider than its estimate.
pub const WIDE_MARK: char = '~';

/// What [`WIDE_MARK`] means, for the line under a table that has one.
pub const WIDE_LEGEND: &str = "~ the 95% interval is wider than the estimate: too few samples to say more \
                               than \"some\"";

/// An estimate in a sentence: `10.5 MB estimated from 9 samples (95%
/// interval 8.1 MB-13.9 MB), 1.2 k objects (1.0 k-1.5 k)`.
pub fn describe(estimate: &Estimate) -> String {
    let mut text = format!(
        "{} estimated from {} samples (95% interval {})",
        human_bytes(estimate.bytes()),
        estimate.samples(),
        human_interval(&estimate.bytes_interval(), human_bytes)
    );
    if estimate.objects_known() && estimate.samples() > 0 {
        let _ = write!(
            text,
            ", {} objects ({})",
            human_count(estimate.objects()),
            human_interval(&estimate.objects_interval(), human_count)
        );
    }
    text
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_like_jfr_prints_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes([].iter().sum::<f64>()), "0 B");
        assert_eq!(human_bytes(12_000.0), "12.0 kB");
        assert_eq!(human_bytes(1_048_576.0), "1.0 MB");
        assert_eq!(human_bytes(3.4e9), "3.4 GB");
        assert_eq!(human_bytes(2.5e15), "2500.0 TB");
    }

    #[test]
    fn counts_read_as_bytes_do_without_the_b() {
        assert_eq!(human_count(12.0), "12");
        assert_eq!(human_count(-0.0), "0");
        assert_eq!(human_count(12_345.0), "12.3 k");
        assert_eq!(human_count(4.5e6), "4.5 M");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
