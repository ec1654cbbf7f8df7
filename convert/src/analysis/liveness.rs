//! What "live" means in a recording, and whether its JVM ran out of heap:
//! how the recording's end found its live objects
//! (`heapsampler.LiveSet`: right after a collection forced for it, or as
//! of the last collection), which collections can free what the agent
//! tracks, the share of samples tracked, and each Java heap exhaustion
//! (`heapsampler.HeapExhausted`). Every output that shows live objects
//! (`top --live`, `flame --live`, `leaks`, the report, `record`'s report,
//! pprof's and OTLP's in-use types) says it in the words of
//! [`Ending::live_statement`], and a chart under its title in those of
//! [`Ending::live_brief`].
//!
//! Generational ZGC. Its young collections treat every weak root as
//! strong (JDK-8375615), so an object the agent tracks through a weak
//! reference is found dead only after a major collection: "live" there
//! means live as of the last major collection. The recording tells the
//! collector by its collections' names (`jdk.GarbageCollection`: `ZGC
//! Minor`, `ZGC Major`), and those are the major ones
//! ([`GenerationalZgc`]). JVMTI, and so `heapsampler.GarbageCollection`,
//! counts its pauses, not its collections (three a minor collection, five
//! a major one): a pause is placed in a collection by time.

use jfr_format::ChunkHeader;
use jfr_format::names::{event, field};

use crate::Error;
use crate::model::samples::Tracking;
use crate::model::text::Flattener;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Stopped};
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};

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

/// The name of generational ZGC's major collections in
/// `jdk.GarbageCollection`, as the JDK and the agent write it.
pub const ZGC_MAJOR: &str = "ZGC Major";

/// The name of generational ZGC's minor (young) collections.
pub const ZGC_MINOR: &str = "ZGC Minor";

/// A collection as `jdk.GarbageCollection` times it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    /// Its `gcId` (the JDK's sequence, not `heapsampler.GarbageCollection`'s).
    pub gc_id: u64,
    /// When it started, nanoseconds since the epoch.
    pub start_nanos: i64,
    /// When it ended, nanoseconds since the epoch.
    pub end_nanos: i64,
}

/// A recording of generational ZGC: its major collections, the only ones
/// that free what the agent tracks (see the [module doc](self)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerationalZgc {
    /// The major collections, by start.
    pub majors: Vec<Cycle>,
}

impl GenerationalZgc {
    /// The last major collection to end at or before `nanos`.
    pub fn last_major_by(&self, nanos: i64) -> Option<&Cycle> {
        self.majors
            .iter()
            .filter(|major| major.end_nanos <= nanos)
            .max_by_key(|major| major.end_nanos)
    }
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
    /// When the recording's collections are generational ZGC's (any
    /// `jdk.GarbageCollection` named [`ZGC_MINOR`] or [`ZGC_MAJOR`]): its
    /// major collections.
    pub generational_zgc: Option<GenerationalZgc>,
}

/// Reading what a recording says of its end: only the fields of its live
/// sets, heap exhaustions and collections (`jdk.GarbageCollection`) are
/// read. Merges into an [`Ending`]: the last live set, every exhaustion in
/// file order, and generational ZGC's major collections by start.
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
        let text = Flattener::new(chunk, 1);
        let mut types: TypeMap<Option<EventPlan<'_>>> = TypeMap::default();
        for raw_event in chunk.raw_events() {
            let mut raw_event = raw_event?;
            let Some(plan) = types.get_or_insert_with(raw_event.type_id, || {
                let plan = chunk.plan(raw_event.type_id)?;
                let name = plan.class().name.as_str();
                [
                    event::LIVE_SET,
                    event::HEAP_EXHAUSTED,
                    event::JDK_GARBAGE_COLLECTION,
                ]
                .contains(&name)
                .then_some(plan)
            }) else {
                continue;
            };
            let names = &plan.class().fields;
            let mut fields = Fields::default();
            plan.read(&mut raw_event, &mut |index: usize, value: Field<'_>| {
                fields.take(&names[index].name, value, &text);
            })?;
            let nanos = |ticks: i64| epoch_nanos(&header, ticks);
            if plan.class().name == event::JDK_GARBAGE_COLLECTION {
                if fields.name == ZGC_MAJOR || fields.name == ZGC_MINOR {
                    let zgc = ending.generational_zgc.get_or_insert_default();
                    if fields.name == ZGC_MAJOR {
                        zgc.majors.push(Cycle {
                            gc_id: fields.gc_id,
                            start_nanos: nanos(fields.start_time),
                            end_nanos: nanos(fields.start_time.saturating_add(fields.duration)),
                        });
                    }
                }
            } else if plan.class().name == event::LIVE_SET {
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
        if let Some(chunk) = chunk.generational_zgc {
            let zgc = ending.generational_zgc.get_or_insert_default();
            zgc.majors.extend(chunk.majors);
            // The agent writes collections in the order they started, but
            // a chunk's may start before the last one's ended.
            if !zgc.majors.is_sorted_by_key(|major| major.start_nanos) {
                zgc.majors.sort_by_key(|major| major.start_nanos);
            }
        }
        Ok(())
    }

    fn part_bytes(&self, chunk: &Ending) -> usize {
        std::mem::size_of::<Ending>()
            + chunk
                .exhaustions
                .iter()
                .map(|e| std::mem::size_of::<Exhaustion>() + e.message.len())
                .sum::<usize>()
            + chunk
                .generational_zgc
                .as_ref()
                .map_or(0, |zgc| zgc.majors.len() * std::mem::size_of::<Cycle>())
    }
}

/// The fields of a live set, a heap exhaustion or a collection, by name.
#[derive(Default)]
struct Fields {
    start_time: i64,
    duration: i64,
    gc_id: u64,
    name: String,
    collected: bool,
    last_collection: i64,
    collections: u64,
    live_objects: u64,
    message: String,
    old_objects: u64,
}

impl Fields {
    fn take(&mut self, name: &str, value: Field<'_>, text: &Flattener<'_, '_>) {
        match name {
            field::START_TIME => self.start_time = value.integer().unwrap_or(0),
            field::DURATION => self.duration = value.integer().unwrap_or(0),
            field::GC_ID => self.gc_id = value.count().unwrap_or(0),
            field::NAME => self.name = text.text(&value.into_value()),
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
    /// subtitle: `reachable`, `not collected yet: garbage included`, `as of
    /// the last major collection (generational ZGC)`, or `no live set: the
    /// recording did not end`; and where only a share of samples was
    /// tracked, that share (`tracking` counts the samples shown).
    pub fn live_brief(&self, tracking: &Tracking) -> String {
        let meaning = match (&self.live_set, &self.generational_zgc) {
            (None, _) => return "no live set: the recording did not end".to_owned(),
            (Some(live), _) if live.collected => "reachable",
            (Some(live), Some(zgc)) if zgc.last_major_by(live.at_nanos).is_some() => {
                "as of the last major collection (generational ZGC)"
            }
            (Some(_), Some(_)) => "no major collection yet (generational ZGC): garbage included",
            (Some(_), None) => "not collected yet: garbage included",
        };
        match self.tracking_clause(tracking) {
            Some(share) => format!("{meaning}; {share}"),
            None => meaning.to_owned(),
        }
    }

    /// What "live" means in this recording, in one line: `live: reachable
    /// at the end (collected before the final sweep)`, `live: not collected
    /// yet: ...`, `live: as of the last major collection (generational
    /// ZGC ...)`, or why the recording knows of no live object; and where
    /// only a share of samples was tracked, or on generational ZGC, that
    /// share (`tracking` counts the samples shown).
    pub fn live_statement(&self, tracking: &Tracking) -> String {
        let Some(live) = &self.live_set else {
            return "live: none known: the recording has no live set (heapsampler.LiveSet), \
                    written at its end: it did not end (its JVM was killed, or it is a copy of a \
                    file still being written; `heapsampler dump PID` writes one), or an older \
                    agent wrote it"
                .to_owned();
        };
        let meaning = if live.collected {
            "live: reachable at the end (collected before the final sweep)".to_owned()
        } else if let Some(zgc) = &self.generational_zgc {
            match zgc.last_major_by(live.at_nanos) {
                Some(major) => format!(
                    "live: as of the last major collection (generational ZGC, whose young \
                     collections keep what the agent tracks), which ended at {:.2} s, {:.2} s \
                     before the end",
                    self.seconds_in(major.end_nanos),
                    live.at_nanos.saturating_sub(major.end_nanos) as f64 / 1e9
                ),
                None => "live: as of no collection: generational ZGC frees what the agent \
                         tracks only in major collections, and none ran during the recording, \
                         so every object sampled counts as live"
                    .to_owned(),
            }
        } else if live.collections == 0 {
            "live: not collected yet: no collection ran during the recording, so every \
             object sampled counts as live"
                .to_owned()
        } else {
            format!(
                "live: not collected yet: includes garbage no collection has freed (the last \
                 ended at {:.2} s, {:.2} s before the end)",
                self.seconds_in(live.last_collection_nanos),
                live.at_nanos.saturating_sub(live.last_collection_nanos) as f64 / 1e9
            )
        };
        match self.tracking_clause(tracking) {
            Some(share) => format!("{meaning}; {share}"),
            None => meaning,
        }
    }

    /// Whether live needs qualifying beyond a live set's: on generational
    /// ZGC, or when only a share of the samples (`tracking`) was drawn
    /// for tracking.
    pub fn qualifies_live(&self, tracking: &Tracking) -> bool {
        tracking.is_thinned() || self.generational_zgc.is_some()
    }

    /// `liveness tracked for 1.2% of samples`, where that is news
    /// ([`qualifies_live`](Self::qualifies_live)).
    fn tracking_clause(&self, tracking: &Tracking) -> Option<String> {
        self.qualifies_live(tracking)
            .then(|| tracking.clause())
            .flatten()
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
            generational_zgc: None,
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
            ending(Some(live_set(true, 3))).live_statement(&Tracking::default()),
            "live: reachable at the end (collected before the final sweep)"
        );
        assert_eq!(
            ending(Some(live_set(false, 3))).live_statement(&Tracking::default()),
            "live: not collected yet: includes garbage no collection has freed (the last \
             ended at 2.25 s, 1.25 s before the end)"
        );
        assert!(
            ending(Some(live_set(false, 0)))
                .live_statement(&Tracking::default())
                .starts_with("live: not collected yet: no collection ran")
        );
        assert!(
            ending(None)
                .live_statement(&Tracking::default())
                .starts_with("live: none known: the recording has no live set")
        );
    }

    /// Majors at 1.0-1.5 s and 2.0-3.0 s from the start.
    fn generational_zgc() -> GenerationalZgc {
        let cycle = |gc_id, start: f64, end: f64| Cycle {
            gc_id,
            start_nanos: 1_000_000_000 + (start * 1e9) as i64,
            end_nanos: 1_000_000_000 + (end * 1e9) as i64,
        };
        GenerationalZgc {
            majors: vec![cycle(3, 1.0, 1.5), cycle(7, 2.0, 3.0)],
        }
    }

    #[test]
    fn on_generational_zgc_live_is_as_of_the_last_major_collection() {
        let thinned = Tracking {
            tracked: 12,
            not_drawn: 988,
            untracked: 0,
        };
        let mut zgc = ending(Some(live_set(false, 40)));
        zgc.generational_zgc = Some(generational_zgc());
        assert_eq!(
            zgc.live_statement(&thinned),
            "live: as of the last major collection (generational ZGC, whose young collections \
             keep what the agent tracks), which ended at 3.00 s, 0.50 s before the end; \
             liveness tracked for 1.2% of samples"
        );
        assert_eq!(
            zgc.live_brief(&thinned),
            "as of the last major collection (generational ZGC); liveness tracked for 1.2% of \
             samples"
        );
        // Generational ZGC says the share even when it is all.
        let all = Tracking {
            tracked: 10,
            ..Tracking::default()
        };
        assert!(
            zgc.live_statement(&all)
                .ends_with("; liveness tracked for 100% of samples")
        );
        // A major that ended after the live set was taken is not its.
        zgc.live_set.as_mut().unwrap().at_nanos = 2_700_000_000;
        assert!(
            zgc.live_statement(&all)
                .contains("which ended at 1.50 s, 0.20 s before the end")
        );
        zgc.generational_zgc = Some(GenerationalZgc::default());
        assert!(
            zgc.live_statement(&all)
                .starts_with("live: as of no collection: generational ZGC frees")
        );
        assert!(zgc.live_brief(&all).starts_with("no major collection yet"));
        // A collection forced at the end reaches everything.
        zgc.live_set.as_mut().unwrap().collected = true;
        assert_eq!(
            zgc.live_statement(&thinned),
            "live: reachable at the end (collected before the final sweep); liveness tracked \
             for 1.2% of samples"
        );
        // Another collector says the share only when samples were not drawn.
        let g1 = ending(Some(live_set(true, 3)));
        assert_eq!(
            g1.live_statement(&all),
            "live: reachable at the end (collected before the final sweep)"
        );
        assert!(
            g1.live_statement(&thinned)
                .ends_with("tracked for 1.2% of samples")
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
