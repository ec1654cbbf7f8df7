//! `heapsampler leaks` and the report's answer to "what is leaking?": each
//! site's (class's, thread's) estimated live bytes after the recording's
//! collections, how fast they grow, the sites whose growth is significant
//! (the suspects), and the live set at the heap's peak.
//!
//! Where it comes from. For every sampled object the agent writes one
//! `heapsampler.ObjectLifetime`: when it was allocated (`startTime`), the
//! `heapsampler.GarbageCollection` after which it was found dead
//! (`freedByGcId`), or that it was still live at the end. So the object was
//! live after every collection that ended after its allocation and came
//! before the one that freed it (all of them, for an object live at the
//! end): a range of collections, added to its group's
//! [`LiveSeries`], whose estimate after
//! each collection is the Horvitz-Thompson sum of the core's estimator
//! (each object still stands for its sample's weight over its tracking
//! probability while live: [`Sample::live_weight`]). The collections are
//! the checkpoints; a recording with more than [`MAX_CHECKPOINTS`] keeps
//! that many, evenly in time (the last collection in each of as many equal
//! slices of the recording).
//!
//! On generational ZGC the checkpoints are its major collections only
//! ([`GenerationalZgc`]): its young collections free nothing the agent
//! tracks, so after each the series would only have grown, and a sawtooth
//! of minor collections between majors would read as growth. `freedByGcId`
//! names one of the agent's collections, which there are ZGC's pauses: the
//! object was freed by the last major collection to start by the end of
//! that pause (`Checkpoints::live`), and was live after each major
//! before it that ended after its allocation.
//!
//! Three passes over the file, each on every core through the
//! [`Pipeline`], each with memory bounded by what it keeps, never by the
//! events: the collections and the heap after each (`jdk.GCHeapSummary`),
//! with the JVM's per-thread counts (`jdk.ThreadAllocationStatistics`) and
//! what the agent's watch wrote while the program ran
//! ([`model::watch`](crate::model::watch)); the
//! series of every group (memory: a sparse series per group, see
//! `LiveSeries`); then, for the suspects only, the classes they keep and
//! how old their live objects are. Paths to GC roots, when the recording
//! has them, come from `top --live`'s matching of old objects to samples.
//!
//! The agent's watch raises suspects of its own while the program runs
//! (`heapsampler.LeakSuspect`), from the same samples, over windows of its
//! own. A site it raised falls in the group its samples fall in
//! ([`group_of`]): a suspect says when the agent first raised a site of its
//! group, and the sites raised in no suspect's group are kept apart
//! ([`Leaks::raised_elsewhere`]), so that nothing it raised goes unsaid.
//!
//! Why the estimated live set falls short of the heap after a collection:
//! the heap holds objects allocated before the recording (an attached
//! agent), objects the agent did not track (at or above its `live_max`
//! size: by default G1's humongous objects), the JVM's own (class data
//! lives outside the heap, but interned strings, class mirrors and other
//! JVM-made objects are on it, and were never sampled), and the
//! collector's slack (a region only partly used counts as used).

use std::collections::HashMap;

use heapsampler_core::estimate::{Estimate, Interval};
use heapsampler_core::growth::{Growth, GrowthTest, LiveSeries, NoVerdict};
use jfr_format::names::{event, field};

use crate::Error;
use crate::analysis::liveness::{Ending, GenerationalZgc, ReadEnding};
use crate::analysis::top::{GroupBy, Grouping, Groups, HeldBy, Lines, Query};
use crate::model::allocation::Source;
use crate::model::filter::Filter;
use crate::model::samples::{self, Kind, Sample, SampleVisitor, SamplesRead, Tracking, Weights};
use crate::model::text::{Flattener, epoch_nanos};
use crate::model::watch::{Raised, Site, Watch, WatchEvent, WatchReader};
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::RecordingFile;
use jfr_reader::metadata::Metadata;
use jfr_reader::value::Value;

/// The most collections the series are kept at. A day's recording of a
/// busy service has hundreds of thousands of young collections; a chart
/// shows a few hundred points, and the growth test needs no more.
pub const MAX_CHECKPOINTS: usize = 400;

/// How many of the live set's sites the peak lists.
const PEAK_SITES: usize = 10;

/// How many classes a suspect's line lists.
const SUSPECT_CLASSES: usize = 5;

/// How many groups [`Leaks::largest`] lists.
pub const LARGEST_GROUPS: usize = 50;

/// A collection: one the agent saw (`heapsampler.GarbageCollection`), or
/// on generational ZGC a major collection (`jdk.GarbageCollection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collection {
    /// Its id: the agent's, which `ObjectLifetime.freedByGcId` names; a
    /// major collection's `gcId`.
    pub gc_id: u64,
    /// When it started, nanoseconds since the epoch.
    pub start_nanos: i64,
    /// When it ended, nanoseconds since the epoch.
    pub end_nanos: i64,
}

/// How much earlier than a major collection's start (as
/// `jdk.GarbageCollection` times it, to the millisecond and on the JVM's
/// management clock) a pause may start and still be the major's: the
/// agent places pauses in cycles with the same allowance.
const PAUSE_ALLOWANCE_NANOS: i64 = 3_000_000;

/// The heap in use right after a collection (`jdk.GCHeapSummary`, `when =
/// After GC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapAfter {
    /// When, nanoseconds since the epoch.
    pub nanos: i64,
    /// Bytes in use.
    pub used: u64,
}

/// The JVM's count of a thread's allocated bytes
/// (`jdk.ThreadAllocationStatistics`): its last in the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCount {
    /// The thread's name, as `top --by thread` writes it.
    pub thread: String,
    /// Bytes allocated since the thread started.
    pub allocated: u64,
    /// When it was counted, nanoseconds since the epoch.
    pub nanos: i64,
}

/// What the first pass reads: the recording's span, its collections, the
/// heap after each, the JVM's per-thread counts, and how many liveness
/// events there are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// The first chunk's start, nanoseconds since the epoch.
    pub start_nanos: Option<i64>,
    /// The last chunk's end, nanoseconds since the epoch.
    pub end_nanos: i64,
    /// The agent's collections, by id.
    pub collections: Vec<Collection>,
    /// The heap after each collection the JVM reported, in time order.
    pub heap_after: Vec<HeapAfter>,
    /// Each thread's last count, by name.
    pub threads: Vec<ThreadCount>,
    /// `heapsampler.ObjectLifetime` events.
    pub lifetimes: u64,
    /// The JVM's version line (`jdk.JVMInformation`'s `jvmVersion`), if
    /// the recording says.
    pub jvm: Option<String>,
    /// What the recording says of its end: whether its live set was taken
    /// right after a collection.
    pub ending: Ending,
    /// What the agent's watch wrote while the program ran: the suspects it
    /// raised and the heap peaks it saw.
    pub watch: Watch,
}

impl Timeline {
    /// Seconds from the recording's start to `nanos`.
    pub fn seconds(&self, nanos: i64) -> f64 {
        self.start_nanos
            .map_or(0.0, |start| nanos.saturating_sub(start) as f64 / 1e9)
    }

    /// The recording's length in seconds.
    pub fn length(&self) -> f64 {
        self.seconds(self.end_nanos)
    }

    /// The collections after which what the agent tracks can have been
    /// freed: on generational ZGC its major collections, by start (see the
    /// [module doc](self)); otherwise every collection the agent saw.
    pub fn followed(&self) -> Vec<Collection> {
        match &self.ending.generational_zgc {
            Some(zgc) => majors(zgc),
            None => self.collections.clone(),
        }
    }

    /// At most [`MAX_CHECKPOINTS`] of the [followed](Self::followed)
    /// collections, evenly in time: all of them when there are no more;
    /// else the last to end in each of that many equal slices of the span
    /// from the first collection's end to the last's (a slice without one
    /// has none).
    pub fn checkpoints(&self) -> Vec<Collection> {
        let all = &self.followed();
        if all.len() <= MAX_CHECKPOINTS {
            return all.clone();
        }
        let (first, last) = (all[0].end_nanos, all[all.len() - 1].end_nanos);
        let span = (last - first).max(1) as f64;
        let slice = |c: &Collection| {
            (((c.end_nanos - first) as f64 / span) * MAX_CHECKPOINTS as f64)
                .min(MAX_CHECKPOINTS as f64 - 1.0) as usize
        };
        let mut kept: Vec<Collection> = Vec::with_capacity(MAX_CHECKPOINTS);
        for (at, collection) in all.iter().enumerate() {
            let next_in_another = all
                .get(at + 1)
                .is_none_or(|n| slice(n) != slice(collection));
            if next_in_another {
                kept.push(*collection);
            }
        }
        kept
    }
}

/// Reading a [`Timeline`]: only the fields of the collections, heap
/// summaries and thread counts are read; liveness events are counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTimeline;

/// How the first pass reads an event type.
enum TimelineReading<'c> {
    Collection(EventPlan<'c>),
    HeapSummary(EventPlan<'c>),
    ThreadCount(EventPlan<'c>),
    Jvm(EventPlan<'c>),
    Lifetime,
    Watch(EventPlan<'c>, WatchEvent),
}

impl Analysis for ReadTimeline {
    type Part = Timeline;
    type Merged = Timeline;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        _context: &ChunkContext,
        hand_on: &mut dyn FnMut(Timeline) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let header = chunk.header;
        let mut part = Timeline {
            start_nanos: Some(header.start_nanos),
            end_nanos: header.start_nanos.saturating_add(header.duration_nanos),
            ..Timeline::default()
        };
        let text = Flattener::new(chunk, 1);
        let watch = WatchReader::new(chunk);
        let mut threads: HashMap<String, ThreadCount> = HashMap::new();
        let mut types: TypeMap<Option<TimelineReading<'_>>> = TypeMap::default();
        for raw_event in chunk.raw_events() {
            let mut raw_event = raw_event?;
            let Some(reading) = types.get_or_insert_with(raw_event.type_id, || {
                let plan = chunk.plan(raw_event.type_id)?;
                match plan.class().name.as_str() {
                    event::GARBAGE_COLLECTION => Some(TimelineReading::Collection(plan)),
                    event::GC_HEAP_SUMMARY => Some(TimelineReading::HeapSummary(plan)),
                    event::THREAD_ALLOCATION_STATISTICS => Some(TimelineReading::ThreadCount(plan)),
                    event::OBJECT_LIFETIME => Some(TimelineReading::Lifetime),
                    event::JVM_INFORMATION => Some(TimelineReading::Jvm(plan)),
                    name => WatchEvent::named(name).map(|kind| TimelineReading::Watch(plan, kind)),
                }
            }) else {
                continue;
            };
            let plan = match reading {
                TimelineReading::Lifetime => {
                    part.lifetimes += 1;
                    continue;
                }
                TimelineReading::Watch(plan, kind) => {
                    watch.read(*kind, plan, &mut raw_event, &mut part.watch)?;
                    continue;
                }
                TimelineReading::Collection(plan)
                | TimelineReading::HeapSummary(plan)
                | TimelineReading::ThreadCount(plan)
                | TimelineReading::Jvm(plan) => plan,
            };
            let names = &plan.class().fields;
            let (mut start, mut duration, mut id, mut used, mut allocated) = (0, 0, 0, 0, 0);
            let (mut after, mut thread, mut jvm) = (false, Value::Null, Value::Null);
            plan.read(
                &mut raw_event,
                &mut |index: usize, value: Field<'_>| match names[index].name.as_str() {
                    field::START_TIME => start = value.integer().unwrap_or(0),
                    field::DURATION => duration = value.integer().unwrap_or(0),
                    field::GC_ID => id = value.count().unwrap_or(0),
                    field::HEAP_USED => used = value.count().unwrap_or(0),
                    field::ALLOCATED => allocated = value.count().unwrap_or(0),
                    field::WHEN => after = text.text(&value.into_value()) == "After GC",
                    field::THREAD => thread = value.into_value(),
                    field::JVM_VERSION => jvm = value.into_value(),
                    _ => {}
                },
            )?;
            let nanos = epoch_nanos(&header, start);
            match reading {
                TimelineReading::Collection(_) => part.collections.push(Collection {
                    gc_id: id,
                    start_nanos: nanos,
                    end_nanos: epoch_nanos(&header, start.saturating_add(duration)),
                }),
                TimelineReading::Jvm(_) => part.jvm = Some(text.text(&jvm)),
                TimelineReading::HeapSummary(_) if after => {
                    part.heap_after.push(HeapAfter { nanos, used });
                }
                TimelineReading::ThreadCount(_) => {
                    let thread = GroupBy::Thread.line(text.text(&thread));
                    threads.insert(
                        thread.clone(),
                        ThreadCount {
                            thread,
                            allocated,
                            nanos,
                        },
                    );
                }
                _ => {}
            }
        }
        part.threads = threads.into_values().collect();
        Ok(hand_on(part)?)
    }

    fn merge(&self, timeline: &mut Timeline, part: Timeline) -> Result<(), Error> {
        timeline.start_nanos = timeline.start_nanos.or(part.start_nanos);
        timeline.end_nanos = timeline.end_nanos.max(part.end_nanos);
        timeline.collections.extend(part.collections);
        timeline.heap_after.extend(part.heap_after);
        timeline.lifetimes += part.lifetimes;
        timeline.jvm = timeline.jvm.take().or(part.jvm);
        timeline.watch.merge(part.watch);
        for count in part.threads {
            match timeline
                .threads
                .iter_mut()
                .find(|t| t.thread == count.thread)
            {
                Some(known) if known.nanos <= count.nanos => *known = count,
                Some(_) => {}
                None => timeline.threads.push(count),
            }
        }
        Ok(())
    }

    fn part_bytes(&self, part: &Timeline) -> usize {
        part.collections.len() * std::mem::size_of::<Collection>()
            + part.heap_after.len() * std::mem::size_of::<HeapAfter>()
            + part
                .threads
                .iter()
                .map(|t| t.thread.len() + std::mem::size_of::<ThreadCount>())
                .sum::<usize>()
            + part.watch.bytes()
    }
}

/// Reading what the agent's watch wrote, alone: for what shows it beside
/// other figures (the OTLP export's samples of the sites it raised).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadWatch;

impl Analysis for ReadWatch {
    type Part = Watch;
    type Merged = Watch;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        _context: &ChunkContext,
        hand_on: &mut dyn FnMut(Watch) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let reader = WatchReader::new(chunk);
        let mut part = Watch::default();
        let mut types: TypeMap<Option<(EventPlan<'_>, WatchEvent)>> = TypeMap::default();
        for raw_event in chunk.raw_events() {
            let mut raw_event = raw_event?;
            let Some((plan, kind)) = types.get_or_insert_with(raw_event.type_id, || {
                let plan = chunk.plan(raw_event.type_id)?;
                let kind = WatchEvent::named(&plan.class().name)?;
                Some((plan, kind))
            }) else {
                continue;
            };
            reader.read(*kind, plan, &mut raw_event, &mut part)?;
        }
        Ok(hand_on(part)?)
    }

    /// A chunk that declares none of the watch's events has none (a JDK
    /// recording's): a pass of its own skips it unread.
    fn reads(&self, metadata: &Metadata) -> bool {
        metadata
            .classes
            .iter()
            .any(|class| WatchEvent::named(&class.name).is_some())
    }

    fn merge(&self, watch: &mut Watch, part: Watch) -> Result<(), Error> {
        watch.merge(part);
        Ok(())
    }

    fn part_bytes(&self, part: &Watch) -> usize {
        part.bytes()
    }
}

/// The leak analysis's first pass: the recording's [`Timeline`] and what
/// it says of its end. It needs nothing found before, so it can run beside
/// other analyses in one pass ([`Timeline::of`] makes the timeline of what
/// it merges).
pub const FIRST_PASS: (ReadTimeline, ReadEnding) = (ReadTimeline, ReadEnding);

impl Timeline {
    /// The timeline of what the [`FIRST_PASS`] merged, with the
    /// recording's ending, sorted: collections by id, heap summaries and
    /// thread counts by time and name.
    pub fn of((mut timeline, ending): (Timeline, Ending)) -> Timeline {
        timeline.ending = ending;
        timeline.collections.sort_by_key(|c| c.gc_id);
        timeline.collections.dedup_by_key(|c| c.gc_id);
        timeline.heap_after.sort_by_key(|h| h.nanos);
        timeline.threads.sort_by(|a, b| a.thread.cmp(&b.thread));
        timeline
    }
}

/// Generational ZGC's major collections as [`Collection`]s, by start.
fn majors(zgc: &GenerationalZgc) -> Vec<Collection> {
    zgc.majors
        .iter()
        .map(|major| Collection {
            gc_id: major.gc_id,
            start_nanos: major.start_nanos,
            end_nanos: major.end_nanos,
        })
        .collect()
}

/// Where a sampled object was live: the checkpoints after which it was.
#[derive(Debug, Clone, Copy)]
struct Checkpoints<'t> {
    checkpoints: &'t [Collection],
    /// On generational ZGC, where the checkpoints are major collections:
    /// the agent's collections (ZGC's pauses, which `freedByGcId` names),
    /// by id, and every major collection, by start.
    majors: Option<(&'t [Collection], &'t [Collection])>,
}

impl Checkpoints<'_> {
    /// The checkpoints after which an object allocated at `allocated`
    /// (nanoseconds since the epoch) was live: those that ended after it,
    /// up to the collection that freed it (`freed_by`, one of the agent's;
    /// 0: live at the end). On generational ZGC, that collection is a
    /// pause; the object was freed by the last major collection to start
    /// by its end, within [`PAUSE_ALLOWANCE_NANOS`] (the one whose weak
    /// references were processed before that pause), and was live after
    /// the major collections before that one.
    fn live(&self, allocated: i64, freed_by: u64) -> std::ops::Range<usize> {
        let checkpoints = self.checkpoints;
        let first = checkpoints.partition_point(|c| c.end_nanos <= allocated);
        let end = match (freed_by, self.majors) {
            (0, _) => checkpoints.len(),
            (_, None) => checkpoints.partition_point(|c| c.gc_id < freed_by),
            (_, Some((pauses, majors))) => {
                // The pause that found it dead; an id the recording lacks
                // is placed after the last pause before it.
                let found = match pauses.partition_point(|p| p.gc_id <= freed_by) {
                    0 => return first..first,
                    at => pauses[at - 1].end_nanos,
                };
                match majors.partition_point(|m| {
                    m.start_nanos.saturating_sub(PAUSE_ALLOWANCE_NANOS) <= found
                }) {
                    // Found dead before any major collection: never live
                    // after one.
                    0 => 0,
                    at => {
                        let freeing = majors[at - 1].start_nanos;
                        checkpoints.partition_point(|c| c.start_nanos < freeing)
                    }
                }
            }
        };
        first..end.max(first)
    }
}

/// The second pass: every group's live series.
struct ReadSeries<'t> {
    by: GroupBy,
    checkpoints: Checkpoints<'t>,
}

/// A chunk's groups and their series: what the second pass hands on.
#[derive(Debug, Default)]
struct ChunkSeries {
    lines: Lines,
    series: Vec<GroupSeries>,
    untracked: Weights,
    tracking: Tracking,
}

/// A group's live bytes after each checkpoint, and those of its objects
/// still live at the end alone.
#[derive(Debug, Clone)]
struct GroupSeries {
    live: LiveSeries,
    /// Objects live at the end, from the first checkpoint after their
    /// allocation on: after checkpoint `k`, the bytes allocated before it
    /// that the end still holds.
    retained: LiveSeries,
}

impl GroupSeries {
    fn new(checkpoints: usize) -> Self {
        Self {
            live: LiveSeries::new(checkpoints),
            retained: LiveSeries::new(checkpoints),
        }
    }

    fn merge(&mut self, other: &GroupSeries) {
        self.live.merge(&other.live);
        self.retained.merge(&other.retained);
    }

    fn memory_bytes(&self) -> usize {
        self.live.memory_bytes() + self.retained.memory_bytes()
    }
}

/// All groups' series, merged in chunk order.
#[derive(Debug, Default)]
struct AllSeries {
    lines: Lines,
    series: Vec<GroupSeries>,
    untracked: Estimate,
    tracking: Tracking,
}

/// Groups the samples of a chunk by the query's key, as `top` does.
struct SeriesVisitor<'c, 't> {
    by: GroupBy,
    checkpoints: Checkpoints<'t>,
    header: &'c jfr_format::ChunkHeader,
    part: ChunkSeries,
    keys: IdMap<(u64, u64), usize>,
}

/// The line of a sample's key in `lines`, its text made once per pool key
/// per chunk.
fn line_of(
    by: GroupBy,
    text: &Flattener<'_, '_>,
    sample: &Sample<'_>,
    keys: &mut IdMap<(u64, u64), usize>,
    lines: &mut Lines,
) -> usize {
    let key = match by {
        GroupBy::Site | GroupBy::AppSite => &sample.stack_trace,
        GroupBy::Class => &sample.object_class,
        GroupBy::Thread => &sample.event_thread,
    };
    match *key {
        Field::Pooled { class_id, key } => *keys
            .entry((class_id, key))
            .or_insert_with(|| lines.number(by.line(text.text(&Value::Ref { class_id, key })))),
        ref other => lines.number(by.line(text.text(&other.clone().into_value()))),
    }
}

impl SampleVisitor for SeriesVisitor<'_, '_> {
    fn sample(&mut self, text: &Flattener<'_, '_>, _kind: Kind, sample: &Sample<'_>) {
        if !sample.tracked {
            // Not drawn: the tracked samples stand for it.
            if sample.tracking_probability == 0.0 {
                self.part.untracked.push(sample);
            }
            return;
        }
        let line = line_of(self.by, text, sample, &mut self.keys, &mut self.part.lines);
        if self.part.series.len() <= line {
            let checkpoints = self.checkpoints.checkpoints.len();
            self.part
                .series
                .resize_with(line + 1, || GroupSeries::new(checkpoints));
        }
        let allocated = epoch_nanos(self.header, sample.start_time.unwrap_or(0));
        let live = self.checkpoints.live(allocated, sample.freed_by_gc_id);
        let group = &mut self.part.series[line];
        let weight = sample.live_weight();
        if sample.live {
            group.retained.add(live.clone(), weight, sample.size);
        }
        group.live.add(live, weight, sample.size);
    }
}

impl Analysis for ReadSeries<'_> {
    type Part = ChunkSeries;
    type Merged = AllSeries;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(ChunkSeries) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let mut visitor = SeriesVisitor {
            by: self.by,
            checkpoints: self.checkpoints,
            header: &chunk.header,
            part: ChunkSeries::default(),
            keys: IdMap::default(),
        };
        visitor.part.tracking = read_lifetimes(chunk, context, self.by, &mut visitor)?.tracking;
        Ok(hand_on(visitor.part)?)
    }

    fn merge(&self, all: &mut AllSeries, part: ChunkSeries) -> Result<(), Error> {
        part.untracked.add_to(&mut all.untracked);
        all.tracking.merge(&part.tracking);
        let checkpoints = self.checkpoints.checkpoints.len();
        for (line, series) in part.lines.lines.into_iter().zip(part.series) {
            let at = all.lines.number(line);
            if all.series.len() <= at {
                all.series
                    .resize_with(at + 1, || GroupSeries::new(checkpoints));
            }
            all.series[at].merge(&series);
        }
        Ok(())
    }

    fn part_bytes(&self, part: &ChunkSeries) -> usize {
        let lines: usize = part.lines.lines.iter().map(|l| 2 * l.len() + 64).sum();
        lines
            + part
                .series
                .iter()
                .map(GroupSeries::memory_bytes)
                .sum::<usize>()
            + part.untracked.bytes()
    }
}

/// Hands `visitor` every `heapsampler.ObjectLifetime` of `chunk`, its
/// stack read as deep as grouping `by` needs; what was read.
fn read_lifetimes(
    chunk: &Chunk<'_>,
    context: &ChunkContext,
    by: GroupBy,
    visitor: &mut dyn SampleVisitor,
) -> Result<SamplesRead, jfr_reader::ReadError> {
    samples::read_chunk(
        chunk,
        context.recording_start,
        &[Source::ObjectLifetimes],
        &Filter::default(),
        by.stack_depth(),
        visitor,
    )
}

/// A site (class, thread) whose live bytes grow significantly.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    /// The site, class or thread.
    pub key: String,
    /// How fast its live bytes grow after the warm-up.
    pub growth: Growth,
    /// Its live bytes and objects after each checkpoint.
    pub live: Vec<Estimate>,
    /// The classes of its objects live at the end, most bytes first (at
    /// most a few).
    pub classes: Vec<(String, Estimate)>,
    /// The median age of its objects live at the end, in seconds, by bytes.
    pub median_age_seconds: Option<f64>,
    /// The median number of collections its objects live at the end
    /// outlived, by bytes.
    pub median_collections: Option<u64>,
    /// What holds most of its objects, when the recording has paths to GC
    /// roots.
    pub held_by: Option<HeldBy>,
    /// When the agent, watching while the program ran, first raised a
    /// site of its group as a leak suspect (`heapsampler.LeakSuspect`),
    /// nanoseconds since the epoch; `None` when it did not.
    pub first_raised_nanos: Option<i64>,
}

impl Suspect {
    /// Its live bytes after the last checkpoint.
    pub fn live_at_end(&self) -> Estimate {
        self.live.last().copied().unwrap_or_default()
    }
}

/// A group among those with the most live bytes after the last
/// checkpoint: what a live view lists, suspect or not.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveGroup {
    /// The group's line (its site, class or thread).
    pub key: String,
    /// Its estimated live bytes after the last checkpoint.
    pub live: Estimate,
    /// How fast its live bytes grow, fitted as a suspect's is; `None` when
    /// the collections' times give no verdict yet.
    pub growth: Option<Growth>,
    /// Whether it is among [`Leaks::suspects`].
    pub suspect: bool,
}

/// The live set at the collection after which the heap was fullest.
#[derive(Debug, Clone, PartialEq)]
pub struct Peak {
    /// The checkpoint's index.
    pub checkpoint: usize,
    /// The heap in use after the collection nearest it, if the recording
    /// has heap summaries.
    pub heap_used: Option<u64>,
    /// The groups live there, most bytes first (at most a few).
    pub groups: Vec<(String, Estimate)>,
    /// Every group together.
    pub total: Estimate,
}

/// A checkpoint: one collection after which the live bytes are estimated
/// (on generational ZGC, a major collection).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checkpoint {
    /// The collection's id: the agent's, or a major collection's `gcId`.
    pub gc_id: u64,
    /// When it ended, seconds from the recording's start.
    pub seconds: f64,
    /// When it ended, nanoseconds since the epoch.
    pub end_nanos: i64,
}

/// The answer to "what is leaking?" for one recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaks {
    /// What the groups are.
    pub by: GroupBy,
    /// The recording's collections, heap summaries and thread counts.
    pub timeline: Timeline,
    /// The collections the live bytes are estimated after.
    pub checkpoints: Vec<Checkpoint>,
    /// Every group's live bytes together after each checkpoint: the
    /// estimated live set.
    pub live_set: Vec<Estimate>,
    /// How fast the estimated live set grows, or why the collections'
    /// times give no verdict on any group.
    pub live_set_growth: Result<Growth, NoVerdict>,
    /// Groups with a sample live after some checkpoint.
    pub groups: usize,
    /// Of those, the groups whose growth could be judged.
    pub judged: usize,
    /// The suspects, fastest growth first.
    pub suspects: Vec<Suspect>,
    /// The [`LARGEST_GROUPS`] groups with the most live bytes after the
    /// last checkpoint, most first, each with its growth: the live view's
    /// table (`heapsampler watch`).
    pub largest: Vec<LiveGroup>,
    /// Groups whose live bytes grew significantly but whose objects from
    /// the window's first half are gone at the end: garbage no collection
    /// of the old generation had reached yet (with G1, a mixed one), or a
    /// cache turning over, not a leak (see `retained`). In file order.
    pub freed: Vec<(String, Growth)>,
    /// The live set at the heap's peak.
    pub peak: Option<Peak>,
    /// Samples whose liveness the agent did not track.
    pub untracked: Estimate,
    /// How the liveness samples were tracked.
    pub tracking: Tracking,
    /// Whether the recording has paths to GC roots.
    pub paths_to_roots: bool,
    /// The sites the agent raised as leak suspects while the program ran
    /// that fall in no suspect's group ([`group_of`]), in the order first
    /// met.
    pub raised_elsewhere: Vec<Raised>,
}

/// Why a recording cannot say what leaks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unanswered {
    /// No `heapsampler.ObjectLifetime` events: the JDK's own recording, or
    /// the agent's with liveness off.
    NoLiveness,
    /// Too few collections, or too few after the warm-up, or those too
    /// bunched in time, to follow the live bytes over time.
    TooFewCollections(NoVerdict),
}

impl Leaks {
    /// Why the recording cannot say what leaks, if it cannot.
    pub fn unanswered(&self) -> Option<Unanswered> {
        if self.timeline.lifetimes == 0 {
            Some(Unanswered::NoLiveness)
        } else {
            self.live_set_growth
                .as_ref()
                .err()
                .map(|reason| Unanswered::TooFewCollections(*reason))
        }
    }

    /// The heap in use after the checkpoint `checkpoint` (an index), if a
    /// heap summary was written within a second of its end.
    pub fn heap_after(&self, checkpoint: usize) -> Option<u64> {
        heap_near(&self.timeline, self.checkpoints.get(checkpoint)?.end_nanos)
    }

    /// The checkpoints' times, seconds from the recording's start.
    pub fn seconds(&self) -> Vec<f64> {
        self.checkpoints.iter().map(|c| c.seconds).collect()
    }

    /// The suspects' growths added up, in bytes per second: the estimates
    /// summed, and each side of the interval the root of the sum of the
    /// squares of theirs (the sites' samples are independent).
    pub fn suspects_growth(&self) -> Interval {
        let estimate: f64 = self
            .suspects
            .iter()
            .map(|s| s.growth.bytes_per_second)
            .sum();
        let side = |reach: fn(&Interval) -> f64| {
            self.suspects
                .iter()
                .map(|s| reach(&s.growth.interval).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        Interval {
            estimate,
            low: estimate - side(|i| i.estimate - i.low),
            high: estimate + side(|i| i.high - i.estimate),
        }
    }
}

/// Answers "what is leaking?" for `recording`, grouping by `by`, through
/// `pipeline`; `progress` is told the bytes read, pass after pass.
pub fn leaks(
    recording: RecordingFile,
    by: GroupBy,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(Pass, u64) + Send),
) -> Result<Leaks, Error> {
    let ran = pipeline.run(
        recording,
        &FIRST_PASS,
        (Timeline::default(), Ending::default()),
        &mut |bytes| progress(Pass::Collections, bytes),
    )?;
    answer(
        Timeline::of(ran.merged),
        &ran.recording,
        by,
        pipeline,
        progress,
    )
}

/// Answers "what is leaking?" once the [`FIRST_PASS`] over `recording`
/// has found its `timeline`: the passes after it, which need it, each over
/// `recording` [read again](RecordingFile::reopen).
pub fn answer(
    timeline: Timeline,
    recording: &RecordingFile,
    by: GroupBy,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(Pass, u64) + Send),
) -> Result<Leaks, Error> {
    let chosen = timeline.checkpoints();
    let majors = timeline.ending.generational_zgc.as_ref().map(majors);
    let checkpoints: Vec<Checkpoint> = chosen
        .iter()
        .map(|c| Checkpoint {
            gc_id: c.gc_id,
            seconds: timeline.seconds(c.end_nanos),
            end_nanos: c.end_nanos,
        })
        .collect();
    let seconds: Vec<f64> = checkpoints.iter().map(|c| c.seconds).collect();
    let all = if timeline.lifetimes == 0 {
        AllSeries::default()
    } else {
        let reading = ReadSeries {
            by,
            checkpoints: Checkpoints {
                checkpoints: &chosen,
                majors: majors
                    .as_deref()
                    .map(|majors| (timeline.collections.as_slice(), majors)),
            },
        };
        pipeline
            .run(
                recording.reopen()?,
                &reading,
                AllSeries::default(),
                &mut |bytes| progress(Pass::LiveBytes, bytes),
            )?
            .merged
    };
    let peak_checkpoint = peak_checkpoint(&timeline, &chosen);
    // Whether the collections give a verdict depends on their times alone.
    let test = GrowthTest::new(&seconds);
    let mut live_set = LiveSeries::new(chosen.len());
    let mut suspects = Vec::new();
    let mut freed = Vec::new();
    let mut at_peak: Vec<(String, Estimate)> = Vec::new();
    let mut largest: Vec<LiveGroup> = Vec::new();
    let (mut groups, mut judged) = (0, 0);
    for (key, series) in all.lines.lines.iter().zip(&all.series) {
        live_set.merge(&series.live);
        let live = series.live.estimates();
        if live.iter().all(|e| e.samples() == 0) {
            continue;
        }
        groups += 1;
        if let Some(peak) = peak_checkpoint.filter(|&p| live[p].samples() > 0) {
            at_peak.push((key.clone(), live[peak]));
        }
        let last = live.last().copied().unwrap_or_default();
        let growth = test.as_ref().ok().map(|test| test.fit(&live));
        let suspect = growth.as_ref().is_some_and(|growth| {
            growth.is_suspect() && retained(&seconds, &series.retained, growth)
        });
        if last.samples() > 0 {
            largest.push(LiveGroup {
                key: key.clone(),
                live: last,
                growth: growth.clone(),
                suspect,
            });
        }
        let Some(growth) = growth else {
            continue;
        };
        judged += 1;
        if growth.is_suspect() && !suspect {
            freed.push((key.clone(), growth));
        } else if suspect {
            suspects.push(Suspect {
                key: key.clone(),
                growth,
                live,
                classes: Vec::new(),
                median_age_seconds: None,
                median_collections: None,
                held_by: None,
                first_raised_nanos: None,
            });
        }
    }
    suspects.sort_by(|a, b| {
        b.growth
            .bytes_per_second
            .total_cmp(&a.growth.bytes_per_second)
            .then_with(|| a.key.cmp(&b.key))
    });
    let mut raised_elsewhere = Vec::new();
    for raised in &timeline.watch.raised {
        let group = group_of(by, &raised.site);
        match suspects.iter_mut().find(|s| Some(&s.key) == group.as_ref()) {
            Some(suspect) => {
                let first = suspect.first_raised_nanos.unwrap_or(i64::MAX);
                suspect.first_raised_nanos = Some(first.min(raised.first_nanos));
            }
            None => raised_elsewhere.push(raised.clone()),
        }
    }
    largest.sort_by(|a, b| {
        b.live
            .bytes()
            .total_cmp(&a.live.bytes())
            .then_with(|| a.key.cmp(&b.key))
    });
    largest.truncate(LARGEST_GROUPS);
    let live_set = live_set.estimates();
    let live_set_growth = test.map(|test| test.fit(&live_set));
    let peak = peak_checkpoint.map(|checkpoint| {
        at_peak.sort_by(|a, b| b.1.bytes().total_cmp(&a.1.bytes()).then(a.0.cmp(&b.0)));
        at_peak.truncate(PEAK_SITES);
        Peak {
            checkpoint,
            heap_used: heap_near(&timeline, chosen[checkpoint].end_nanos),
            groups: at_peak,
            total: live_set[checkpoint],
        }
    });
    let mut leaks = Leaks {
        by,
        checkpoints,
        live_set,
        live_set_growth,
        groups,
        judged,
        suspects,
        largest,
        freed,
        peak,
        untracked: all.untracked,
        tracking: all.tracking,
        paths_to_roots: false,
        raised_elsewhere,
        timeline,
    };
    if !leaks.suspects.is_empty() {
        describe_suspects(recording, pipeline, &mut leaks, progress)?;
    }
    Ok(leaks)
}

/// The group a site of the agent's watch falls in when the samples are
/// grouped `by`: the group its samples fall in (its stack's top frame, its
/// app frame, its class). None for the other sites, which have no stack
/// and no class, nor by thread: a site has none.
pub fn group_of(by: GroupBy, site: &Site) -> Option<String> {
    if site.other_sites {
        return None;
    }
    let text = match by {
        GroupBy::Site | GroupBy::AppSite => site
            .top_frames(by.stack_depth())
            .collect::<Vec<_>>()
            .join(";"),
        GroupBy::Class => site.class.clone(),
        GroupBy::Thread => return None,
    };
    Some(by.line(text))
}

/// Whether a group whose live bytes grew (`growth`) still holds at the
/// end what it grew by: of the bytes its live set grew by in the first half
/// of the window (at the lower bound of the growth), the objects allocated
/// in that half and live at the end hold at least half (at the upper bound
/// of their estimate, `retained`'s: the end's objects by the checkpoint
/// after their allocation).
///
/// Why. Live after a collection means not freed by it, and objects that
/// die in the old generation are freed only by a collection of the old
/// generation (with G1, a mixed or full one): between two, a site whose
/// old objects churn (a cache at its size, evicting its oldest) piles up
/// garbage as a leak would, and so does the heap after each collection.
/// What a leak keeps, the end still holds: its objects allocated early in
/// the window are there at the end, where a cache's were evicted and
/// freed. At a recording's end that collected the heap (a JVM that
/// exited), what the end holds is exactly what was reachable; otherwise it
/// may still include garbage, and the check lets more through.
fn retained(seconds: &[f64], retained: &LiveSeries, growth: &Growth) -> bool {
    let window = &growth.window;
    if window.len() < 2 {
        return true;
    }
    let start = window.start;
    let middle_time = (seconds[start] + seconds[window.end - 1]) / 2.0;
    let middle = start + seconds[window.clone()].partition_point(|&t| t < middle_time);
    let held = retained.estimates();
    let grew = growth.interval.low.max(0.0) * (seconds[middle] - seconds[start]);
    held[middle].bytes_interval().high - held[start].bytes() >= grew / 2.0
}

/// The passes [`leaks`] makes over the file, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The collections, heap summaries and thread counts.
    Collections,
    /// Every group's live bytes after each collection.
    LiveBytes,
    /// The suspects' classes, ages and paths to GC roots.
    Suspects,
}

impl Pass {
    /// What the pass reads, for a progress line: `collections`.
    pub fn what(self) -> &'static str {
        match self {
            Self::Collections => "collections, 1 of 3",
            Self::LiveBytes => "live bytes, 2 of 3",
            Self::Suspects => "suspects, 3 of 3",
        }
    }
}

/// The checkpoint the peak is at: the one nearest in time to the fullest
/// heap after a collection, or without heap summaries none.
fn peak_checkpoint(timeline: &Timeline, checkpoints: &[Collection]) -> Option<usize> {
    let last = checkpoints.last()?.end_nanos.saturating_add(1_000_000_000);
    let fullest = timeline
        .heap_after
        .iter()
        .filter(|h| h.nanos <= last)
        .max_by_key(|h| (h.used, std::cmp::Reverse(h.nanos)))?;
    nearest(checkpoints.iter().map(|c| c.end_nanos), fullest.nanos)
}

/// The index of the time in `times` nearest `nanos`.
fn nearest(times: impl Iterator<Item = i64>, nanos: i64) -> Option<usize> {
    times
        .enumerate()
        .min_by_key(|&(_, t)| t.abs_diff(nanos))
        .map(|(at, _)| at)
}

/// The heap after the collection whose summary is nearest `nanos`, within
/// a second.
fn heap_near(timeline: &Timeline, nanos: i64) -> Option<u64> {
    let at = nearest(timeline.heap_after.iter().map(|h| h.nanos), nanos)?;
    let heap = timeline.heap_after[at];
    (heap.nanos.abs_diff(nanos) <= 1_000_000_000).then_some(heap.used)
}

/// The third pass, for the suspects: the classes of their objects live at
/// the end, with those objects' ages and collections outlived.
struct ReadSuspects<'t> {
    by: GroupBy,
    suspects: HashMap<&'t str, usize>,
    collections: &'t [Collection],
    end_nanos: i64,
}

/// What the third pass finds of each suspect, in a chunk or merged.
#[derive(Debug, Default)]
struct SuspectDetails {
    /// Per suspect: its live objects' classes and weights.
    classes: Vec<HashMap<String, Weights>>,
    /// Per suspect: each live sample's age (seconds), collections outlived
    /// and weight.
    ages: Vec<Vec<(f64, u64, f64)>>,
}

struct SuspectVisitor<'c, 't> {
    reading: &'c ReadSuspects<'t>,
    header: &'c jfr_format::ChunkHeader,
    part: SuspectDetails,
    lines: Lines,
    /// The suspect of each line of the chunk, if it is one.
    suspect_of: Vec<Option<usize>>,
    keys: IdMap<(u64, u64), usize>,
}

impl SampleVisitor for SuspectVisitor<'_, '_> {
    fn sample(&mut self, text: &Flattener<'_, '_>, _kind: Kind, sample: &Sample<'_>) {
        if !(sample.live && sample.tracked) {
            return;
        }
        let line = line_of(
            self.reading.by,
            text,
            sample,
            &mut self.keys,
            &mut self.lines,
        );
        while self.suspect_of.len() <= line {
            let key = &self.lines.lines[self.suspect_of.len()];
            self.suspect_of
                .push(self.reading.suspects.get(key.as_str()).copied());
        }
        let Some(suspect) = self.suspect_of[line] else {
            return;
        };
        let class = text.text(&sample.object_class.clone().into_value());
        self.part.classes[suspect]
            .entry(GroupBy::Class.line(class))
            .or_default()
            .push_live(sample);
        let allocated = epoch_nanos(self.header, sample.start_time.unwrap_or(0));
        let outlived = self.reading.collections.len()
            - self
                .reading
                .collections
                .partition_point(|c| c.end_nanos <= allocated);
        let age = (self.reading.end_nanos - allocated).max(0) as f64 / 1e9;
        self.part.ages[suspect].push((age, outlived as u64, sample.live_weight()));
    }
}

impl Analysis for ReadSuspects<'_> {
    type Part = SuspectDetails;
    type Merged = SuspectDetails;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(SuspectDetails) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let mut visitor = SuspectVisitor {
            reading: self,
            header: &chunk.header,
            part: SuspectDetails::new(self.suspects.len()),
            lines: Lines::default(),
            suspect_of: Vec::new(),
            keys: IdMap::default(),
        };
        read_lifetimes(chunk, context, self.by, &mut visitor)?;
        Ok(hand_on(visitor.part)?)
    }

    fn merge(&self, all: &mut SuspectDetails, part: SuspectDetails) -> Result<(), Error> {
        for (classes, more) in all.classes.iter_mut().zip(part.classes) {
            for (class, weights) in more {
                classes.entry(class).or_default().extend(weights);
            }
        }
        for (ages, more) in all.ages.iter_mut().zip(part.ages) {
            ages.extend(more);
        }
        Ok(())
    }

    fn part_bytes(&self, part: &SuspectDetails) -> usize {
        let classes: usize = part
            .classes
            .iter()
            .flat_map(|c| c.iter())
            .map(|(class, weights)| class.len() + weights.bytes() + 64)
            .sum();
        let ages: usize = part.ages.iter().map(|a| a.len() * 24).sum();
        classes + ages
    }
}

impl SuspectDetails {
    fn new(suspects: usize) -> Self {
        Self {
            classes: (0..suspects).map(|_| HashMap::new()).collect(),
            ages: vec![Vec::new(); suspects],
        }
    }
}

/// The weighted median of `values` (value, weight), or `None` for none.
fn weighted_median<T: Copy + PartialOrd>(mut values: Vec<(T, f64)>) -> Option<T> {
    values.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    let total: f64 = values.iter().map(|v| v.1).sum();
    let mut seen = 0.0;
    for (value, weight) in &values {
        seen += weight;
        if seen >= total / 2.0 {
            return Some(*value);
        }
    }
    values.last().map(|v| v.0)
}

/// Fills in each suspect's classes, ages and path to a GC root.
fn describe_suspects(
    recording: &RecordingFile,
    pipeline: &Pipeline,
    leaks: &mut Leaks,
    progress: &mut (dyn FnMut(Pass, u64) + Send),
) -> Result<(), Error> {
    let reading = ReadSuspects {
        by: leaks.by,
        suspects: leaks
            .suspects
            .iter()
            .enumerate()
            .map(|(at, s)| (s.key.as_str(), at))
            .collect(),
        collections: &leaks.timeline.followed(),
        end_nanos: leaks.timeline.end_nanos,
    };
    // Paths to GC roots come from top --live's matching of old objects to
    // samples, read in the same pass.
    let held = Query {
        by: leaks.by,
        live: true,
        min_gcs: 0,
    };
    let ran = pipeline.run(
        recording.reopen()?,
        &(reading, Grouping::new(held)),
        (SuspectDetails::new(leaks.suspects.len()), Groups::new(held)),
        &mut |bytes| progress(Pass::Suspects, bytes),
    )?;
    let (details, held) = ran.merged;
    let held = held.table();
    leaks.paths_to_roots = held.paths_to_roots.is_some_and(|paths| paths > 0);
    let mut held: HashMap<String, HeldBy> = held
        .entries
        .into_iter()
        .filter_map(|entry| Some((entry.key, entry.held_by?)))
        .collect();
    for ((suspect, classes), ages) in leaks
        .suspects
        .iter_mut()
        .zip(details.classes)
        .zip(details.ages)
    {
        let mut classes: Vec<(String, Estimate)> = classes
            .into_iter()
            .map(|(class, weights)| {
                let mut estimate = Estimate::new();
                weights.add_to(&mut estimate);
                (class, estimate)
            })
            .collect();
        classes.sort_by(|a, b| b.1.bytes().total_cmp(&a.1.bytes()).then(a.0.cmp(&b.0)));
        classes.truncate(SUSPECT_CLASSES);
        suspect.classes = classes;
        suspect.median_age_seconds = weighted_median(ages.iter().map(|a| (a.0, a.2)).collect());
        suspect.median_collections = weighted_median(ages.iter().map(|a| (a.1, a.2)).collect());
        suspect.held_by = held.remove(&suspect.key);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Collections ending at `ends` (nanoseconds), each a nanosecond long,
    /// numbered from 1.
    pub(crate) fn collections(ends: &[i64]) -> Vec<Collection> {
        ends.iter()
            .enumerate()
            .map(|(at, &end_nanos)| Collection {
                gc_id: at as u64 + 1,
                start_nanos: end_nanos - 1,
                end_nanos,
            })
            .collect()
    }

    #[test]
    fn an_object_is_live_after_the_collections_between_its_allocation_and_its_death() {
        let all = collections(&[10, 20, 30, 40]);
        let checkpoints = Checkpoints {
            checkpoints: &all,
            majors: None,
        };
        // Allocated before collection 2 ended, freed by collection 4:
        // live after 2 and 3.
        assert_eq!(checkpoints.live(15, 4), 1..3);
        // Live at the end.
        assert_eq!(checkpoints.live(15, 0), 1..4);
        // Allocated and freed between two collections: never live after one.
        assert_eq!(checkpoints.live(21, 3), 2..2);
        // Allocated after the last collection, live at the end: not yet.
        assert_eq!(checkpoints.live(41, 0), 4..4);
        // Freed by a collection before its allocation's (a late sweep).
        assert_eq!(checkpoints.live(35, 2), 3..3);
    }

    /// Generational ZGC, in milliseconds: majors from 100 to 140 and from
    /// 300 to 360 ms (gcId 2 and 5), and a minor between; the agent's
    /// collections are their pauses: 1 to 5 the first major's (the last,
    /// its Relocate Start, at 120 ms), 6 to 8 the minor's (200 ms), 9 to
    /// 13 the second major's (Relocate Start at 330 ms).
    #[test]
    fn on_generational_zgc_an_object_is_freed_by_the_major_collection_of_its_pause() {
        const MS: i64 = 1_000_000;
        let cycle = |gc_id, start: i64, end: i64| Collection {
            gc_id,
            start_nanos: start * MS,
            end_nanos: end * MS,
        };
        let majors = [cycle(2, 100, 140), cycle(5, 300, 360)];
        let pause_ends = [
            101, 104, 106, 115, 120, 200, 201, 203, 301, 304, 306, 320, 330,
        ];
        let pauses: Vec<Collection> = pause_ends
            .iter()
            .enumerate()
            .map(|(at, &end)| cycle(at as u64 + 1, end - 1, end))
            .collect();
        let checkpoints = Checkpoints {
            checkpoints: &majors,
            majors: Some((&pauses, &majors)),
        };
        let at = |ms: i64| ms * MS;
        // Allocated at 50 ms, found dead at the first major's Relocate
        // Start (pause 5): never live after a major.
        assert_eq!(checkpoints.live(at(50), 5), 0..0);
        // Found dead at a pause of the first major before its last (a
        // writer behind the collector): the same.
        assert_eq!(checkpoints.live(at(50), 2), 0..0);
        // Found dead at the second major's pauses: live after the first.
        assert_eq!(checkpoints.live(at(50), 13), 0..1);
        assert_eq!(checkpoints.live(at(50), 9), 0..1);
        // A pause 2 ms before the major's start as its GcInfo rounds it
        // (pause 9's start, 300 ms, against 302): still the second major's.
        let late = [cycle(2, 100, 140), cycle(5, 302, 360)];
        let late_checkpoints = Checkpoints {
            checkpoints: &late,
            majors: Some((&pauses, &late)),
        };
        assert_eq!(late_checkpoints.live(at(50), 9), 0..1);
        // Live at the end: after both; allocated during the first major
        // (after its marking began): live after it too.
        assert_eq!(checkpoints.live(at(50), 0), 0..2);
        assert_eq!(checkpoints.live(at(130), 0), 0..2);
        // Allocated after the first major, freed by the second.
        assert_eq!(checkpoints.live(at(150), 13), 1..1);
        // Found dead at the minor's pause (the writer late for the first
        // major's sweep): freed by the first major.
        assert_eq!(checkpoints.live(at(50), 7), 0..0);
        // An id the recording lacks, after the last pause: the second
        // major's.
        assert_eq!(checkpoints.live(at(50), 40), 0..1);
        // Only the second major followed (of many): the first major still
        // frees what it freed, and the object was live after none followed.
        let second = [majors[1]];
        let thinned = Checkpoints {
            checkpoints: &second,
            majors: Some((&pauses, &majors)),
        };
        assert_eq!(thinned.live(at(50), 5), 0..0);
        assert_eq!(thinned.live(at(50), 0), 0..1);
        // Freed by the second major: not live after it.
        assert_eq!(thinned.live(at(50), 13), 0..0);
    }

    #[test]
    fn many_collections_keep_at_most_the_maximum_evenly_in_time() {
        // Ten collections a second for 100 s, then a burst of 50 in the
        // last second.
        let mut ends: Vec<i64> = (0..1000).map(|i| i * 100_000_000).collect();
        ends.extend((0..50).map(|i| 100_000_000_000 + i * 1_000_000));
        let timeline = Timeline {
            collections: collections(&ends),
            ..Timeline::default()
        };
        let kept = timeline.checkpoints();
        assert!(kept.len() <= MAX_CHECKPOINTS, "{}", kept.len());
        assert!(kept.len() >= MAX_CHECKPOINTS - 2, "{}", kept.len());
        assert_eq!(kept.last(), timeline.collections.last(), "the last is kept");
        assert!(kept.windows(2).all(|w| w[0].gc_id < w[1].gc_id));
        // Evenly in time: no gap between kept ones much over a slice.
        let slice = (ends[ends.len() - 1] - ends[0]) / MAX_CHECKPOINTS as i64;
        assert!(
            kept.windows(2)
                .all(|w| w[1].end_nanos - w[0].end_nanos <= 2 * slice)
        );
        let few = Timeline {
            collections: collections(&[1, 2, 3]),
            ..Timeline::default()
        };
        assert_eq!(few.checkpoints(), few.collections);
    }

    #[test]
    fn the_median_is_by_weight() {
        assert_eq!(weighted_median::<f64>(Vec::new()), None);
        assert_eq!(weighted_median(vec![(1.0, 1.0), (5.0, 3.0)]), Some(5.0));
        assert_eq!(weighted_median(vec![(9, 1.0), (1, 1.0), (2, 1.0)]), Some(2));
    }
}
