//! `heapsampler summary`: what a recording holds, at a glance. Events are
//! counted by type and size from their framing; only the agent's
//! statistics have their fields read, by the event decoder.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use jfr_format::names::{self, field};

use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::{Container, FileError, RecordingFile};
use jfr_reader::metadata::{ClassInfo, FieldInfo};
use jfr_reader::value::Value;

/// Counts and sizes of one event type.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TypeTotals {
    /// Events of the type.
    pub count: u64,
    /// Their bytes in the file.
    pub bytes: u64,
}

/// What a recording holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Summary {
    /// How the file is stored.
    pub container: Option<Container>,
    /// Complete chunks read.
    pub chunks: u64,
    /// The first chunk's start, nanoseconds since the epoch.
    pub start_nanos: Option<i64>,
    /// The last complete chunk's end, nanoseconds since the epoch.
    pub end_nanos: Option<i64>,
    /// Per event type name.
    pub types: HashMap<String, TypeTotals>,
    /// The last `heapsampler.AgentStatistics` event's fields, by name.
    pub agent_statistics: Option<Vec<(String, i64)>>,
    /// A last chunk cut short: its offset and the bytes it had.
    pub truncated: Option<(u64, u64)>,
}

/// Reads the whole recording at `path`.
pub fn summarize(path: &Path) -> Result<Summary, FileError> {
    summarize_file(RecordingFile::open(path)?)
}

/// Reads the whole recording `file`: each event's size and type, its
/// fields left unread (as `jfr summary` does), except those of
/// `heapsampler.AgentStatistics`.
pub fn summarize_file(mut file: RecordingFile) -> Result<Summary, FileError> {
    let mut summary = Summary {
        container: Some(file.container()),
        ..Summary::default()
    };
    let path = file.path().to_owned();
    let malformed = |source| FileError::Malformed {
        path: path.clone(),
        source,
    };
    while let Some(raw) = file.next_chunk()? {
        let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(malformed)?;
        summary.chunks += 1;
        summary.start_nanos.get_or_insert(chunk.header.start_nanos);
        summary.end_nanos = Some(chunk.header.start_nanos + chunk.header.duration_nanos);
        // Each event type's class, and for the agent's statistics the plan
        // that reads them.
        let mut types: TypeMap<Option<(&ClassInfo, Option<EventPlan<'_>>)>> = TypeMap::default();
        for event in chunk.raw_events() {
            let mut event = event.map_err(malformed)?;
            let Some((class, statistics)) = types.get_or_insert_with(event.type_id, || {
                let plan = chunk.plan(event.type_id)?;
                let statistics = plan.class().name == names::event::AGENT_STATISTICS;
                Some((plan.class(), statistics.then_some(plan)))
            }) else {
                continue; // undeclared: skipped, as the JDK does
            };
            // Looked up by reference: a name is cloned once per type.
            let totals = match summary.types.get_mut(&class.name) {
                Some(totals) => totals,
                None => summary.types.entry(class.name.clone()).or_default(),
            };
            totals.count += 1;
            totals.bytes += event.size;
            if let Some(plan) = statistics {
                let names: &[FieldInfo] = &class.fields;
                let mut fields = Vec::new();
                plan.read(&mut event, &mut |index: usize, field: Field<'_>| {
                    if let Value::Long(value) = chunk.resolve(&field.into_value()) {
                        fields.push((names[index].name.clone(), *value));
                    }
                })
                .map_err(malformed)?;
                summary.agent_statistics = Some(fields);
            }
        }
    }
    summary.truncated = file.truncated();
    Ok(summary)
}

fn time(nanos: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(nanos)
        .format("%Y-%m-%d %H:%M:%S%.3f UTC")
        .to_string()
}

impl Summary {
    /// The summary as text, for a terminal.
    pub fn render(&self, path: &Path) -> String {
        let mut out = String::new();
        let stored = match self.container {
            Some(Container::Zstd) => " (zstd-compressed)",
            Some(Container::Gzip) => " (gzip-compressed)",
            _ => "",
        };
        let _ = writeln!(out, " File: {}{stored}", path.display());
        let _ = writeln!(out, " Chunks: {}", self.chunks);
        if let (Some(start), Some(end)) = (self.start_nanos, self.end_nanos) {
            let _ = writeln!(out, " Start: {}", time(start));
            let _ = writeln!(out, " Duration: {:.3} s", (end - start) as f64 / 1e9);
        }
        let mut types: Vec<_> = self.types.iter().collect();
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
        if let Some(statistics) = &self.agent_statistics {
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
}
