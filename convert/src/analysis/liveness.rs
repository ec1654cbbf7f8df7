//! What "live" means in a recording, and whether its JVM ran out of heap:
//! how the recording's end found its live objects
//! (`heapsampler.LiveSet`: right after a collection forced for it, or as
//! of the last collection), and each Java heap exhaustion
//! (`heapsampler.HeapExhausted`). Every output that shows live objects
//! (`top --live`, `flame --live`, `record`'s report) says it in the words
//! of [`Ending::live_statement`], and a chart under its title in those of
//! [`Ending::live_brief`].

use std::path::Path;

use jfr_format::ChunkHeader;
use jfr_format::names::{event, field};

use crate::Error;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::RecordingFile;

/// How a recording's end found its live objects (`heapsampler.LiveSet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSet {
    /// When the live set was taken, in nanoseconds since the epoch.
    pub at_nanos: i64,
    /// Whether a collection was forced right before: live means reachable.
    pub collected: bool,
    /// When the last collection before it ended, in nanoseconds since the
    /// epoch; meaningless when `collections` is 0.
    pub last_collection_nanos: i64,
    /// Collections the agent saw during the recording.
    pub collections: u64,
    /// Objects found live.
    pub live_objects: u64,
}

/// A Java heap exhaustion (`heapsampler.HeapExhausted`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exhaustion {
    /// When the allocation failed, in nanoseconds since the epoch.
    pub at_nanos: i64,
    /// What the JVM said ran out: `Java heap space`.
    pub message: String,
    /// The old objects written with it (0: an exhaustion shortly before
    /// wrote them).
    pub old_objects: u64,
}

/// What a recording says of its live objects and of running out of heap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ending {
    /// The recording's start, in nanoseconds since the epoch (`None`
    /// without chunks).
    pub start_nanos: Option<i64>,
    /// The last live set, if the recording has one.
    pub live_set: Option<LiveSet>,
    /// The Java heap exhaustions, in file order.
    pub exhaustions: Vec<Exhaustion>,
}

/// Reads what the recording at `path` says of its end, on every core.
pub fn ending(path: &Path) -> Result<Ending, Error> {
    let file = RecordingFile::open(path)?;
    let ran = Pipeline::default().run(file, &ReadEnding, Ending::default(), &mut |_| {})?;
    Ok(ran.merged)
}

/// Reading what a recording says of its end: only the fields of its live
/// sets and heap exhaustions are read. Merges into an [`Ending`]: the last
/// live set, and every exhaustion in file order.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadEnding;

impl Analysis for ReadEnding {
    /// The chunk's, in the chunk's order.
    type Part = Ending;
    type Merged = Ending;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        _context: &ChunkContext,
        hand_on: &mut dyn FnMut(Ending) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let header = chunk.header;
        let mut ending = Ending {
            start_nanos: Some(header.start_nanos),
            ..Ending::default()
        };
        let mut types: TypeMap<Option<EventPlan<'_>>> = TypeMap::default();
        for raw_event in chunk.raw_events() {
            let mut raw_event = raw_event?;
            let Some(plan) = types.get_or_insert_with(raw_event.type_id, || {
                let plan = chunk.plan(raw_event.type_id)?;
                let name = plan.class().name.as_str();
                (name == event::LIVE_SET || name == event::HEAP_EXHAUSTED).then_some(plan)
            }) else {
                continue;
            };
            let names = &plan.class().fields;
            let mut fields = Fields::default();
            plan.read(&mut raw_event, &mut |index: usize, value: Field<'_>| {
                fields.take(&names[index].name, value);
            })?;
            let nanos = |ticks: i64| epoch_nanos(&header, ticks);
            if plan.class().name == event::LIVE_SET {
                ending.live_set = Some(LiveSet {
                    at_nanos: nanos(fields.start_time),
                    collected: fields.collected,
                    last_collection_nanos: nanos(fields.last_collection),
                    collections: fields.collections,
                    live_objects: fields.live_objects,
                });
            } else {
                ending.exhaustions.push(Exhaustion {
                    at_nanos: nanos(fields.start_time),
                    message: fields.message,
                    old_objects: fields.old_objects,
                });
            }
        }
        Ok(hand_on(ending)?)
    }

    fn merge(&self, ending: &mut Ending, chunk: Ending) -> Result<(), Error> {
        ending.start_nanos = ending.start_nanos.or(chunk.start_nanos);
        if chunk.live_set.is_some() {
            ending.live_set = chunk.live_set;
        }
        ending.exhaustions.extend(chunk.exhaustions);
        Ok(())
    }

    fn part_bytes(&self, chunk: &Ending) -> usize {
        std::mem::size_of::<Ending>()
            + chunk
                .exhaustions
                .iter()
                .map(|e| std::mem::size_of::<Exhaustion>() + e.message.len())
                .sum::<usize>()
    }
}

/// The fields of a live set or a heap exhaustion, by name.
#[derive(Default)]
struct Fields {
    start_time: i64,
    collected: bool,
    last_collection: i64,
    collections: u64,
    live_objects: u64,
    message: String,
    old_objects: u64,
}

impl Fields {
    fn take(&mut self, name: &str, value: Field<'_>) {
        match name {
            field::START_TIME => self.start_time = value.integer().unwrap_or(0),
            field::COLLECTED => self.collected = value == Field::Boolean(true),
            field::LAST_COLLECTION => self.last_collection = value.integer().unwrap_or(0),
            field::COLLECTIONS => self.collections = value.count().unwrap_or(0),
            field::LIVE_OBJECTS => self.live_objects = value.count().unwrap_or(0),
            field::OLD_OBJECTS => self.old_objects = value.count().unwrap_or(0),
            field::MESSAGE => {
                if let jfr_reader::value::Value::String(text) = value.into_value() {
                    self.message = text;
                }
            }
            _ => {}
        }
    }
}

/// The wall-clock time of a chunk's `ticks`, in nanoseconds since the epoch.
fn epoch_nanos(header: &ChunkHeader, ticks: i64) -> i64 {
    let per_second = header.ticks_per_second.max(1) as i128;
    let since_start = (ticks as i128 - header.start_ticks as i128) * 1_000_000_000 / per_second;
    (header.start_nanos as i128 + since_start).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

impl Ending {
    /// Seconds from the recording's start to `nanos`.
    fn seconds_in(&self, nanos: i64) -> f64 {
        self.start_nanos
            .map_or(0.0, |start| nanos.saturating_sub(start) as f64 / 1e9)
    }

    /// What "live" means in this recording, in a few words for a chart's
    /// subtitle: `reachable`, `not collected yet: garbage included`, or
    /// `no live set: the recording did not end`.
    pub fn live_brief(&self) -> &'static str {
        match &self.live_set {
            None => "no live set: the recording did not end",
            Some(live) if live.collected => "reachable",
            Some(_) => "not collected yet: garbage included",
        }
    }

    /// What "live" means in this recording, in one line: `live: reachable
    /// at the end (collected before the final sweep)`, or `live: not
    /// collected yet: ...`, or why the recording knows of no live object.
    pub fn live_statement(&self) -> String {
        let Some(live) = &self.live_set else {
            return "live: none known: the recording has no live set (heapsampler.LiveSet), \
                    written at its end: it did not end (its JVM was killed, or it is a copy of a \
                    file still being written; `heapsampler dump PID` writes one), or an older \
                    agent wrote it"
                .to_owned();
        };
        if live.collected {
            return "live: reachable at the end (collected before the final sweep)".to_owned();
        }
        if live.collections == 0 {
            return "live: not collected yet: no collection ran during the recording, so every \
                    object sampled counts as live"
                .to_owned();
        }
        format!(
            "live: not collected yet: includes garbage no collection has freed (the last \
             ended at {:.2} s, {:.2} s before the end)",
            self.seconds_in(live.last_collection_nanos),
            live.at_nanos.saturating_sub(live.last_collection_nanos) as f64 / 1e9
        )
    }

    /// `the JVM ran out of memory ...`, if it did: when, what, and how
    /// often.
    pub fn exhaustion_statement(&self) -> Option<String> {
        let first = self.exhaustions.first()?;
        let mut line = format!(
            "the JVM ran out of memory ({}) at {:.2} s, {}",
            if first.message.is_empty() {
                "Java heap"
            } else {
                &first.message
            },
            self.seconds_in(first.at_nanos),
            chrono::DateTime::from_timestamp_nanos(first.at_nanos).format("%H:%M:%S%.3f UTC")
        );
        if self.exhaustions.len() > 1 {
            line.push_str(&format!(
                ", {} times in all (the last at {:.2} s)",
                self.exhaustions.len(),
                self.seconds_in(self.exhaustions.last().map_or(0, |e| e.at_nanos))
            ));
        }
        line.push_str(
            "; what was live then is in its jdk.OldObjectSample events (Mission Control's \
             Memory Leak page)",
        );
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(live_set: Option<LiveSet>) -> Ending {
        Ending {
            start_nanos: Some(1_000_000_000),
            live_set,
            exhaustions: Vec::new(),
        }
    }

    fn live_set(collected: bool, collections: u64) -> LiveSet {
        LiveSet {
            at_nanos: 4_500_000_000,
            collected,
            last_collection_nanos: 3_250_000_000,
            collections,
            live_objects: 10,
        }
    }

    #[test]
    fn live_says_reachable_only_after_a_forced_collection() {
        assert_eq!(
            ending(Some(live_set(true, 3))).live_statement(),
            "live: reachable at the end (collected before the final sweep)"
        );
        assert_eq!(
            ending(Some(live_set(false, 3))).live_statement(),
            "live: not collected yet: includes garbage no collection has freed (the last \
             ended at 2.25 s, 1.25 s before the end)"
        );
        assert!(
            ending(Some(live_set(false, 0)))
                .live_statement()
                .starts_with("live: not collected yet: no collection ran")
        );
        assert!(
            ending(None)
                .live_statement()
                .starts_with("live: none known: the recording has no live set")
        );
    }

    #[test]
    fn running_out_of_memory_is_said_with_when_and_how_often() {
        let mut recording = ending(None);
        assert_eq!(recording.exhaustion_statement(), None);
        recording.exhaustions = vec![
            Exhaustion {
                at_nanos: 2_500_000_000,
                message: "Java heap space".to_owned(),
                old_objects: 12,
            },
            Exhaustion {
                at_nanos: 3_000_000_000,
                message: "Java heap space".to_owned(),
                old_objects: 0,
            },
        ];
        let line = recording.exhaustion_statement().unwrap();
        assert!(
            line.starts_with(
                "the JVM ran out of memory (Java heap space) at 1.50 s, 00:00:02.500 UTC, \
                 2 times in all (the last at 2.00 s)"
            ),
            "{line}"
        );
    }
}
