//! `heapsampler summary` as people read it: the file, its chunks and
//! times, the event types by count, and the agent's statistics.

use std::fmt::Write as _;
use std::path::Path;

use jfr_format::names::field;
use jfr_reader::file::Container;

use crate::analysis::summary::Summary;

fn time(nanos: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(nanos)
        .format("%Y-%m-%d %H:%M:%S%.3f UTC")
        .to_string()
}

/// The summary as text, for a terminal.
pub fn render(summary: &Summary, path: &Path) -> String {
    let mut out = String::new();
    let stored = match summary.container {
        Some(Container::Zstd) => " (zstd-compressed)",
        Some(Container::Gzip) => " (gzip-compressed)",
        _ => "",
    };
    let _ = writeln!(out, " File: {}{stored}", path.display());
    let _ = writeln!(out, " Chunks: {}", summary.chunks);
    if let (Some(start), Some(end)) = (summary.start_nanos, summary.end_nanos) {
        let _ = writeln!(out, " Start: {}", time(start));
        let _ = writeln!(out, " Duration: {:.3} s", (end - start) as f64 / 1e9);
    }
    let mut types: Vec<_> = summary.types.iter().collect();
    types.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    let width = types
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(10)
        .max(10);
    let _ = writeln!(
        out,
        "\n {:<width$} {:>10} {:>14}",
        "Event Type", "Count", "Size (bytes)"
    );
    let _ = writeln!(out, " {}", "=".repeat(width + 26));
    for (name, totals) in types {
        let _ = writeln!(
            out,
            " {name:<width$} {:>10} {:>14}",
            totals.count, totals.bytes
        );
    }
    if let Some(statistics) = &summary.agent_statistics {
        let get = |name: &str| {
            statistics
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, v)| *v)
        };
        let _ = writeln!(
            out,
            "\n heapsampler agent: {} samples, {} lost, {} back-pressure waits ({:.1} ms), {} objects still tracked",
            get(field::SAMPLES),
            get(field::LOST_SAMPLES),
            get(field::BACK_PRESSURE_WAITS),
            get(field::BACK_PRESSURE_TIME) as f64 / 1e6,
            get(field::TRACKED_OBJECTS),
        );
        let left_out = get(field::OLD_OBJECTS_LEFT_OUT);
        if left_out > 0 {
            let _ = writeln!(
                out,
                " old objects: {left_out} live objects left out of jdk.OldObjectSample by the \
                 cap of {} per chunk (the agent's old_objects option)",
                get(field::OLD_OBJECT_CAP),
            );
        }
    }
    out
}
