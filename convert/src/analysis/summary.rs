//! `heapsampler summary`: what a recording holds, at a glance. Events are
//! counted by type and size from their framing, chunk by chunk on every
//! core; only the agent's statistics have their fields read, by the event
//! decoder.

use std::collections::HashMap;

use jfr_format::names;

use crate::Error;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::{Container, RecordingFile};
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

/// Reads the whole recording `file` through `pipeline`.
pub fn summarize(file: RecordingFile, pipeline: &Pipeline) -> Result<Summary, Error> {
    let container = file.container();
    let ran = pipeline.run(file, &Summarize, Summary::default(), &mut |_| {})?;
    Ok(Summary {
        container: Some(container),
        truncated: ran.truncated,
        ..ran.merged
    })
}

/// Reading what a recording holds: each event's size and type, its fields
/// left unread (as `jfr summary` does), except those of
/// `heapsampler.AgentStatistics`. Merges into a [`Summary`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Summarize;

/// What one chunk holds.
#[derive(Debug)]
pub struct ChunkSummary {
    start_nanos: i64,
    end_nanos: i64,
    types: HashMap<String, TypeTotals>,
    /// The chunk's last `heapsampler.AgentStatistics` event's fields.
    agent_statistics: Option<Vec<(String, i64)>>,
}

impl Analysis for Summarize {
    type Part = ChunkSummary;
    type Merged = Summary;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        _context: &ChunkContext,
        hand_on: &mut dyn FnMut(ChunkSummary) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let mut summary = ChunkSummary {
            start_nanos: chunk.header.start_nanos,
            end_nanos: chunk.header.start_nanos + chunk.header.duration_nanos,
            types: HashMap::new(),
            agent_statistics: None,
        };
        // Each event type's class, and for the agent's statistics the plan
        // that reads them.
        let mut types: TypeMap<Option<(&ClassInfo, Option<EventPlan<'_>>)>> = TypeMap::default();
        for event in chunk.raw_events() {
            let mut event = event?;
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
                })?;
                summary.agent_statistics = Some(fields);
            }
        }
        Ok(hand_on(summary)?)
    }

    fn merge(&self, summary: &mut Summary, chunk: ChunkSummary) -> Result<(), Error> {
        summary.chunks += 1;
        summary.start_nanos.get_or_insert(chunk.start_nanos);
        summary.end_nanos = Some(chunk.end_nanos);
        for (name, totals) in chunk.types {
            let sum = summary.types.entry(name).or_default();
            sum.count += totals.count;
            sum.bytes += totals.bytes;
        }
        if chunk.agent_statistics.is_some() {
            summary.agent_statistics = chunk.agent_statistics;
        }
        Ok(())
    }

    fn part_bytes(&self, chunk: &ChunkSummary) -> usize {
        chunk.types.keys().map(|name| name.len() + 64).sum()
    }
}

/// The error for event types named (`missing`) that `recording` does not
/// have, with the types it has: the file is read again for them (this is
/// the rare case, after a mistake; a stream, which cannot be, lists none).
pub(crate) fn missing_types(
    recording: &RecordingFile,
    missing: Vec<String>,
    pipeline: &Pipeline,
) -> Error {
    let mut present: Vec<(String, u64)> = recording
        .reopen()
        .map_err(Error::from)
        .and_then(|file| summarize(file, pipeline))
        .map(|summary| {
            summary
                .types
                .into_iter()
                .map(|(name, totals)| (name, totals.count))
                .collect()
        })
        .unwrap_or_default();
    present.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Error::MissingTypes {
        recording: recording.path().to_owned(),
        missing,
        present,
    }
}
