//! `heapsampler top`'s table as people read it: each group's estimated
//! bytes and objects with their 95% intervals, and what the figures come
//! from.

use std::fmt::Write as _;

use crate::analysis::top::Table;
use crate::output::human::{
    WIDE_LEGEND, WIDE_MARK, describe, human_bytes, human_count, human_interval,
};

/// The table as text: rank, estimated bytes and objects with their 95%
/// intervals, share, samples, key; at most `limit` lines. Cells are
/// separated by at least two spaces and hold no two in a row.
pub fn render(table: &Table, limit: usize) -> String {
    let mut out = String::new();
    let objects_known = table.total.objects_known();
    let _ = writeln!(
        out,
        "{:>4}   {:>9}  {:>17}  {:>6}  {:>9}  {:>15}  {:>7}  where",
        "#", "bytes", "95% interval", "share", "objects", "95% interval", "samples"
    );
    let total = table.total.bytes();
    let mut marked = false;
    for (rank, entry) in table.entries.iter().take(limit).enumerate() {
        let e = &entry.estimate;
        let bytes = e.bytes_interval();
        let objects = e.objects_interval();
        let wide =
            bytes.is_wider_than_estimate() || (objects_known && objects.is_wider_than_estimate());
        marked |= wide;
        let share = if total > 0.0 {
            100.0 * e.bytes() / total
        } else {
            0.0
        };
        let (objects, objects_interval) = if objects_known {
            (
                human_count(e.objects()),
                human_interval(&objects, human_count),
            )
        } else {
            ("-".to_owned(), "-".to_owned())
        };
        let _ = writeln!(
            out,
            "{:>4}{}  {:>9}  {:>17}  {:>5.1}%  {:>9}  {:>15}  {:>7}  {}",
            rank + 1,
            if wide { WIDE_MARK } else { ' ' },
            human_bytes(e.bytes()),
            human_interval(&bytes, human_bytes),
            share,
            objects,
            objects_interval,
            e.samples(),
            entry.key
        );
        if let Some(held) = &entry.held_by {
            let _ = writeln!(
                out,
                "{:>7}held by {}  ({} of {} old objects with a path)",
                "", held.path, held.objects, held.of
            );
        }
    }
    let _ = writeln!(out, "total: {}", describe(&table.total));
    if marked {
        let _ = writeln!(out, "{WIDE_LEGEND}");
    }
    if !objects_known && table.total.samples() > 0 {
        let _ = writeln!(
            out,
            "objects: not estimated, as these samples do not carry their object's size \
             (the JDK's sampler, a throttled one, or TLAB events); the bytes' intervals \
             count each sample as a small object, so are wider than need be"
        );
    }
    let read: Vec<String> = table
        .source
        .types()
        .iter()
        .zip(&table.events_by_type)
        .map(|(t, events)| format!("{events} {} events by {}", t.event_type, t.weight))
        .collect();
    let _ = writeln!(out, "from {}", read.join(" and "));
    for (source, events) in &table.left_out {
        let _ = writeln!(
            out,
            "not added: {events} {} events, which record the same allocations",
            source.names()
        );
    }
    if table.paths_to_roots == Some(0) && table.total.samples() > 0 {
        let _ = writeln!(
            out,
            "no paths to GC roots recorded: record with --roots to see what holds these objects"
        );
    }
    if table.untracked.samples() > 0 {
        let _ = writeln!(
            out,
            "not tracked for liveness: {} of objects at or above the agent's live_max size \
             (by default G1's humongous objects)",
            describe(&table.untracked)
        );
    }
    out
}
