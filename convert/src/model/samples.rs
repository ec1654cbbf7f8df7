//! The allocation samples of a chunk, one at a time, each with what its
//! event says: stack, class and thread (as the decoder hands them on,
//! mostly pool keys), the bytes it stands for, the sampled object's size
//! when the recording tells it, and its liveness. What `top`, `diff` and
//! the pprof output read, through the one event decoder ([`read_chunk`]).
//!
//! The size, which estimates of object counts and exact intervals need
//! ([`heapsampler_core::estimate`]):
//! - `heapsampler.ObjectLifetime` carries it (`objectSize`).
//! - `jdk.ObjectAllocationSample` carries only the weight. heapsampler's
//!   agent records its sampling interval as a `jdk.ActiveSetting` of the
//!   type ([`setting::SAMPLING_INTERVAL`]); with the throttle off, every
//!   weight was computed at that interval, and names its object's size
//!   ([`size_from_weight`]). The JDK's sampler throttles by rate and weighs
//!   a sample by the bytes its thread allocated since its last one: no size.
//! - The TLAB events stand for a TLAB, not for a sampled object: no size.
//!
//! The liveness of `heapsampler.ObjectLifetime`, from `tracked` and
//! `trackingProbability` (`q`, drawn at the allocation; absent in older
//! recordings: 1 if tracked, else 0):
//! - tracked, `q` in (0, 1]: liveness known, and the sample stands for
//!   `weight / q` bytes of liveness ([`Sample::live_weight`]): the agent
//!   tracked it with probability `q`, so it stands for the samples not drawn
//!   as well. For the estimator it is a sample of inclusion probability
//!   `p q` ([`heapsampler_core::estimate`]). Allocation estimates keep
//!   `weight`.
//! - not tracked, `q` > 0: not drawn; the tracked ones stand for it.
//! - not tracked, `q` = 0: liveness unknown (the agent's `live_max` size, or
//!   its cap on tracked objects): untracked, reported apart.
//!
//! [`Tracking`] counts the three.

use heapsampler_core::estimate::Estimate;
use heapsampler_core::sampling::size_from_weight;
use jfr_format::names::{event, field, setting};

use crate::model::allocation::{AllocationFields, Source};
use crate::model::filter::{Check, ChunkFilter, Filter};
use crate::model::text::Flattener;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, RawEvent, TypeMap};
use jfr_reader::value::Value;
use jfr_reader::{IdMap, ReadError};

/// HotSpot aligns every object to 8 bytes (`ObjectAlignmentInBytes` is at
/// least 8), which makes a rounded weight name one size.
const OBJECT_ALIGNMENT: u64 = 8;

/// One allocation sample, as its event says.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    /// When the event starts, in the chunk's ticks: for
    /// `heapsampler.ObjectLifetime`, when the object was allocated.
    pub start_time: Option<i64>,
    /// The allocation's stack trace ([`Field::Null`] if the event has none).
    pub stack_trace: Field<'a>,
    /// The allocated object's class.
    pub object_class: Field<'a>,
    /// The allocating thread.
    pub event_thread: Field<'a>,
    /// The bytes the sample stands for.
    pub weight: f64,
    /// The sampled object's size, when the recording tells it (see the
    /// [module doc](self)).
    pub size: Option<u64>,
    /// Still live at the end (ObjectLifetime's `live`; false elsewhere).
    pub live: bool,
    /// Collections it outlived (ObjectLifetime's `gcsSurvived`; 0 elsewhere).
    pub gcs_survived: u64,
    /// The collection after which it was found dead (ObjectLifetime's
    /// `freedByGcId`, a `heapsampler.GarbageCollection` id; 0 while live,
    /// and elsewhere).
    pub freed_by_gc_id: u64,
    /// Whether the agent tracked its liveness (ObjectLifetime's `tracked`;
    /// absent: true).
    pub tracked: bool,
    /// The probability with which its liveness was to be tracked
    /// (ObjectLifetime's `trackingProbability`; absent: 1 if tracked, else
    /// 0): in (0, 1] when tracked (see the [module doc](self)).
    pub tracking_probability: f64,
}

/// What the question "still live at the end?" (`--live`) makes of an
/// object whose liveness the agent recorded (`heapsampler.ObjectLifetime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Live at the end, and outlived the collections asked for.
    Live,
    /// Freed, or live but younger than asked for; or not drawn for
    /// tracking (the tracked samples stand for it).
    Not,
    /// Not tracked (at or above the agent's `live_max` size, or beyond its
    /// cap; tracking probability 0): neither live nor freed, so reported
    /// apart, never silently dropped.
    Untracked,
}

impl Liveness {
    /// An object `live` at the end (or not), `tracked` (or not) with
    /// probability `tracking_probability`, that outlived `gcs_survived`
    /// collections, asked for with `--min-gcs min_gcs`.
    pub fn of(
        live: bool,
        tracked: bool,
        tracking_probability: f64,
        gcs_survived: u64,
        min_gcs: u64,
    ) -> Self {
        if !tracked {
            if tracking_probability > 0.0 {
                Self::Not
            } else {
                Self::Untracked
            }
        } else if live && gcs_survived >= min_gcs {
            Self::Live
        } else {
            Self::Not
        }
    }
}

impl Sample<'_> {
    /// What `--live --min-gcs min_gcs` makes of the sample.
    pub fn liveness(&self, min_gcs: u64) -> Liveness {
        Liveness::of(
            self.live,
            self.tracked,
            self.tracking_probability,
            self.gcs_survived,
            min_gcs,
        )
    }

    /// The bytes of liveness the sample stands for: its weight over its
    /// tracking probability, as a tracked sample stands for those not
    /// drawn too; an untracked one's weight.
    pub fn live_weight(&self) -> f64 {
        live_weight(self.weight, self.tracking_probability)
    }
}

/// The bytes of liveness a sample of `weight` tracked with probability
/// `tracking_probability` stands for: `weight / tracking_probability`, or
/// `weight` at probability 0 (untracked: reported by its weight).
pub fn live_weight(weight: f64, tracking_probability: f64) -> f64 {
    if tracking_probability > 0.0 {
        weight / tracking_probability
    } else {
        weight
    }
}

/// How many liveness samples (`heapsampler.ObjectLifetime`) were tracked,
/// not drawn, and untracked (see the [module doc](self)): of one chunk, or
/// merged over a recording's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tracking {
    /// Tracked: liveness known.
    pub tracked: u64,
    /// Not drawn for tracking: the tracked ones stand for them.
    pub not_drawn: u64,
    /// Untracked (tracking probability 0): liveness unknown.
    pub untracked: u64,
}

impl Tracking {
    /// Counts a sample tracked (or not) with probability
    /// `tracking_probability`.
    pub fn count(&mut self, tracked: bool, tracking_probability: f64) {
        if tracked {
            self.tracked += 1;
        } else if tracking_probability > 0.0 {
            self.not_drawn += 1;
        } else {
            self.untracked += 1;
        }
    }

    /// Adds another chunk's counts.
    pub fn merge(&mut self, other: &Tracking) {
        self.tracked += other.tracked;
        self.not_drawn += other.not_drawn;
        self.untracked += other.untracked;
    }

    /// The liveness samples counted.
    pub fn samples(&self) -> u64 {
        self.tracked + self.not_drawn + self.untracked
    }

    /// Whether only a share of the samples was drawn for tracking, so that
    /// each tracked one stands for more than itself.
    pub fn is_thinned(&self) -> bool {
        self.not_drawn > 0
    }

    /// `liveness tracked for 1.2% of samples`, or `None` without liveness
    /// samples.
    pub fn clause(&self) -> Option<String> {
        let samples = self.samples();
        (samples > 0).then(|| {
            format!(
                "liveness tracked for {} of samples",
                percent(self.tracked as f64 / samples as f64)
            )
        })
    }
}

/// A share as a percentage with two significant digits below 10%
/// (`1.2%`, `0.035%`), whole above (`45%`); `100%` only when all.
fn percent(share: f64) -> String {
    let percent = 100.0 * share;
    if share >= 1.0 {
        "100%".to_owned()
    } else if percent >= 10.0 {
        format!("{:.0}%", percent.min(99.0))
    } else if percent > 0.0 {
        let digits = (1 - percent.log10().floor() as i32).max(0) as usize;
        format!("{percent:.digits$}%")
    } else {
        "0%".to_owned()
    }
}

/// The weights and sizes of samples, in the order they were read, to be
/// added to an [`Estimate`] later. A chunk's work keeps them so, and the
/// merge adds them in chunk order: the sums of floating-point numbers
/// depend on their order, and so the estimates (and a pprof profile's
/// rounded values) are those of one thread reading the file through,
/// whatever the threads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights(Vec<(f64, Option<u64>)>);

impl Weights {
    /// Keeps `sample`'s weight and size.
    pub fn push(&mut self, sample: &Sample<'_>) {
        self.0.push((sample.weight, sample.size));
    }

    /// Keeps `sample`'s [live weight](Sample::live_weight) and size: for
    /// estimates of liveness.
    pub fn push_live(&mut self, sample: &Sample<'_>) {
        self.0.push((sample.live_weight(), sample.size));
    }

    /// Keeps `more`'s samples after these.
    pub fn extend(&mut self, more: Weights) {
        self.0.extend(more.0);
    }

    /// Adds the samples kept to `estimate`, in order.
    pub fn add_to(&self, estimate: &mut Estimate) {
        for &(weight, size) in &self.0 {
            estimate.add_weighted(weight, size);
        }
    }

    /// Whether no sample is kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// About how many bytes the samples kept take.
    pub fn bytes(&self) -> usize {
        self.0.len() * std::mem::size_of::<(f64, Option<u64>)>()
    }
}

/// A `jdk.OldObjectSample` with a path to a GC root: a sampled object
/// still live, what holds it, and the root that holds that.
#[derive(Debug, Clone, PartialEq)]
pub struct OldObject<'a> {
    /// When the object was allocated, in the chunk's ticks.
    pub allocation_time: Option<i64>,
    /// The allocation's stack trace.
    pub stack_trace: Field<'a>,
    /// The allocating thread.
    pub event_thread: Field<'a>,
    /// The object (`jdk.types.OldObject`), with its chain of referrers.
    pub object: Field<'a>,
    /// The object's class: the `type` of [`object`](Self::object), a
    /// reference into the same pool as the samples' `objectClass`.
    pub object_class: Value,
    /// The root (`jdk.types.OldObjectGcRoot`).
    pub root: Field<'a>,
}

/// Which kind of events a sample comes from: indexes into the sources read
/// and into that source's [`Source::types`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// The index of the source in the sources read.
    pub source: usize,
    /// The index of the event type in the source's types.
    pub event_type: usize,
}

/// What is done with each sample of a chunk read.
pub trait SampleVisitor {
    /// A sample the filter kept. `text` gives the text of its fields'
    /// values (pool keys are keys into the chunk's pools).
    fn sample(&mut self, text: &Flattener<'_, '_>, kind: Kind, sample: &Sample<'_>);

    /// Whether a sample of `kind` is wanted: when not, its event is read
    /// (a malformed one still fails) and counted in [`SamplesRead::events`],
    /// but neither filtered nor handed on. Asked of each sample.
    fn wants_sample(&self, kind: Kind) -> bool {
        let _ = kind;
        true
    }

    /// Whether [`old_object`](Self::old_object) wants the old objects.
    fn wants_old_objects(&self) -> bool {
        false
    }

    /// An old object whose path to a GC root the recording has: its root
    /// names a value (the agent writes a null root for an object the heap
    /// walk did not reach, or when no walk was asked for). The filter does
    /// not apply.
    fn old_object(&mut self, text: &Flattener<'_, '_>, old: &OldObject<'_>) {
        let _ = (text, old);
    }
}

/// What reading the samples found, beside the samples: of one chunk, or
/// [merged](Self::merge) over a recording's chunks in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SamplesRead {
    /// Events read, kept by the filter or not: per source read, per type of
    /// that source.
    pub events: Vec<Vec<u64>>,
    /// The recording's start, nanoseconds since the epoch (its first
    /// chunk's); `None` for a recording without chunks.
    pub start_nanos: Option<i64>,
    /// The recording's end, nanoseconds since the epoch (the latest end of
    /// its chunks).
    pub end_nanos: i64,
    /// Every sampling interval of `jdk.ObjectAllocationSample` the
    /// settings name: none, one (`Some(Some(_))`), or several or one not
    /// understood (`Some(None)`).
    intervals: Option<Option<u64>>,
    /// How the liveness samples read, kept by the filter or not, were
    /// tracked.
    pub tracking: Tracking,
}

impl SamplesRead {
    /// Nothing read yet of `sources`.
    pub fn new(sources: &[Source]) -> Self {
        Self {
            events: sources.iter().map(|s| vec![0; s.types().len()]).collect(),
            ..Self::default()
        }
    }

    /// Adds what was read of the chunk after those read.
    pub fn merge(&mut self, chunk: &SamplesRead) {
        for (events, more) in self.events.iter_mut().zip(&chunk.events) {
            for (events, more) in events.iter_mut().zip(more) {
                *events += more;
            }
        }
        self.start_nanos = self.start_nanos.or(chunk.start_nanos);
        self.end_nanos = self.end_nanos.max(chunk.end_nanos);
        self.tracking.merge(&chunk.tracking);
        self.intervals = match (self.intervals, chunk.intervals) {
            (None, more) => more,
            (intervals, None) => intervals,
            (Some(one), Some(other)) if one == other => Some(one),
            _ => Some(None),
        };
    }

    /// Events read of the source at `source`.
    pub fn events_of(&self, source: usize) -> u64 {
        self.events
            .get(source)
            .map_or(0, |types| types.iter().sum())
    }

    /// The first source the recording has events of.
    pub fn first_found(&self) -> Option<usize> {
        (0..self.events.len()).find(|&at| self.events_of(at) > 0)
    }

    /// The recording's length in seconds (0 without chunks).
    pub fn seconds(&self) -> f64 {
        self.start_nanos
            .map_or(0.0, |start| (self.end_nanos - start).max(0) as f64 / 1e9)
    }

    /// The mean bytes between samples of `jdk.ObjectAllocationSample`, when
    /// the recording's settings name one interval for all of it (as
    /// heapsampler's agent records it; the JDK's sampler has none).
    pub fn interval(&self) -> Option<u64> {
        self.intervals.flatten()
    }
}

/// How the events of one type in a chunk are read.
enum Reading {
    /// Samples of the source and type of `kind`, whose weight is at
    /// `weight`.
    Samples(Kind, AllocationFields, usize),
    /// `jdk.OldObjectSample`: read for paths to GC roots, at these fields.
    OldObjects {
        allocation_time: Option<usize>,
        stack_trace: Option<usize>,
        event_thread: Option<usize>,
        object: usize,
        root: usize,
    },
    /// `jdk.ActiveSetting`: read for the sampling interval.
    Settings {
        id: usize,
        name: usize,
        value: usize,
    },
    /// Anything else: read (so that a malformed event fails as in every
    /// output) but not looked at.
    Skipped,
}

/// The sampling settings of heapsampler's `jdk.ObjectAllocationSample`, as
/// its `jdk.ActiveSetting` events say.
#[derive(Debug, Default)]
struct SamplingSettings {
    interval: Option<u64>,
    /// Every interval set: none, one, or several (`None`).
    intervals: Option<Option<u64>>,
    throttled: bool,
    /// Sizes found per weight (sizes repeat, and so do their weights).
    sizes: IdMap<u64, Option<u64>>,
}

impl SamplingSettings {
    fn set(&mut self, name: &str, value: &str) {
        if name == setting::SAMPLING_INTERVAL {
            self.interval = value
                .strip_suffix(" bytes")
                .and_then(|n| n.trim().parse().ok());
            self.sizes.clear();
            self.intervals = match self.intervals {
                None => Some(self.interval),
                Some(one) if one == self.interval => Some(one),
                Some(_) => Some(None),
            };
        } else if name == setting::THROTTLE {
            self.throttled = value != setting::THROTTLE_OFF;
        }
    }

    /// The size of a sampled object of `weight`, if the settings tell it.
    fn size(&mut self, weight: f64) -> Option<u64> {
        let interval = self.interval.filter(|_| !self.throttled)?;
        if !(weight >= 0.0 && weight.fract() == 0.0) {
            return None;
        }
        let weight = weight as u64;
        *self
            .sizes
            .entry(weight)
            .or_insert_with(|| size_from_weight(weight, interval, OBJECT_ALIGNMENT))
    }
}

/// Reads the samples of `sources` in `chunk`, handing each `filter`
/// keeps to `visitor`. `stack_depth` is the depth of the stack traces'
/// text. Offsets such as `--from 30s` count from `recording_start`, in
/// nanoseconds since the epoch.
///
/// The sampling interval that names a sample's size (see the [module
/// doc](self)) is the one the chunk's own settings name before it: the JDK
/// and heapsampler's agent write every setting at each chunk's start, as
/// chunks are self-contained.
pub fn read_chunk(
    chunk: &Chunk<'_>,
    recording_start: i64,
    sources: &[Source],
    filter: &Filter,
    stack_depth: usize,
    visitor: &mut dyn SampleVisitor,
) -> Result<SamplesRead, ReadError> {
    let header = &chunk.header;
    let mut read = SamplesRead {
        start_nanos: Some(header.start_nanos),
        end_nanos: header.start_nanos.saturating_add(header.duration_nanos),
        ..SamplesRead::new(sources)
    };
    let mut settings = SamplingSettings::default();
    // None when empty: a sample then costs the filter nothing.
    let chunk_filter = (!filter.is_empty())
        .then(|| ChunkFilter::new(filter, filter.window(recording_start), chunk));
    let text = Flattener::new(chunk, stack_depth);
    let mut types: TypeMap<Option<(EventPlan<'_>, Reading)>> = TypeMap::default();
    for raw in chunk.raw_events() {
        let mut raw = raw?;
        let Some((plan, reading)) = types.get_or_insert_with(raw.type_id, || {
            let plan = chunk.plan(raw.type_id)?;
            let reading = reading_of(&plan, sources, visitor.wants_old_objects());
            Some((plan, reading))
        }) else {
            continue; // undeclared: skipped, as the JDK does
        };
        match reading {
            Reading::Samples(kind, columns, weight) => {
                if !visitor.wants_sample(*kind) {
                    plan.skip(&mut raw)?;
                    read.events[kind.source][kind.event_type] += 1;
                    continue;
                }
                let filter = chunk_filter.as_ref();
                let mut check = filter.map(|filter| filter.check(raw.type_id));
                let mut sample =
                    read_sample(plan, &mut raw, columns, *weight, filter.zip(check.as_mut()))?;
                read.events[kind.source][kind.event_type] += 1;
                if columns.tracked.is_some() {
                    read.tracking
                        .count(sample.tracked, sample.tracking_probability);
                }
                if let (Some(filter), Some(check)) = (filter, check)
                    && !filter.keeps(check)
                {
                    continue;
                }
                if columns.object_size.is_none()
                    && sources[kind.source] == Source::AllocationSamples
                {
                    sample.size = settings.size(sample.weight);
                }
                visitor.sample(&text, *kind, &sample);
            }
            Reading::Settings { id, name, value } => {
                let (mut of, mut named, mut valued) = (None, None, None);
                plan.read(&mut raw, &mut |index: usize, field: Field<'_>| {
                    if index == *id {
                        of = field.count();
                    } else if index == *name {
                        named = Some(text.text(&field.into_value()));
                    } else if index == *value {
                        valued = Some(text.text(&field.into_value()));
                    }
                })?;
                let of_samples = of
                    .and_then(|id| chunk.metadata.class(id))
                    .is_some_and(|c| c.name == event::OBJECT_ALLOCATION_SAMPLE);
                if let (true, Some(name), Some(value)) = (of_samples, named, valued) {
                    settings.set(&name, &value);
                }
            }
            Reading::OldObjects {
                allocation_time,
                stack_trace,
                event_thread,
                object,
                root,
            } => {
                let old = read_old_object(
                    chunk,
                    plan,
                    &mut raw,
                    [
                        *allocation_time,
                        *stack_trace,
                        *event_thread,
                        Some(*object),
                        Some(*root),
                    ],
                )?;
                let root = old.root.clone().into_value();
                if *chunk.resolve(&root) != Value::Null {
                    visitor.old_object(&text, &old);
                }
            }
            Reading::Skipped => plan.skip(&mut raw)?,
        }
    }
    read.intervals = settings.intervals;
    Ok(read)
}

/// How events of the type of `plan` are read.
fn reading_of(plan: &EventPlan<'_>, sources: &[Source], old_objects: bool) -> Reading {
    let class = plan.class();
    let index = |name: &str| plan.field_index(name);
    if old_objects && class.name == event::OLD_OBJECT_SAMPLE {
        return match (index(field::OBJECT), index(field::ROOT)) {
            (Some(object), Some(root)) => Reading::OldObjects {
                allocation_time: index(field::ALLOCATION_TIME),
                stack_trace: index(field::STACK_TRACE),
                event_thread: index(field::EVENT_THREAD),
                object,
                root,
            },
            _ => Reading::Skipped,
        };
    }
    if class.name == event::ACTIVE_SETTING {
        return match (index(field::ID), index(field::NAME), index(field::VALUE)) {
            (Some(id), Some(name), Some(value)) => Reading::Settings { id, name, value },
            _ => Reading::Skipped,
        };
    }
    let found = sources
        .iter()
        .enumerate()
        .find_map(|(at, source)| Some((at, source.position(&class.name)?)));
    let Some((source, event_type)) = found else {
        return Reading::Skipped;
    };
    let columns = AllocationFields::of(plan);
    let Some(weight) = columns.weight else {
        return Reading::Skipped;
    };
    Reading::Samples(Kind { source, event_type }, columns, weight)
}

/// Reads one sample's fields, showing each to the filter (if any) as well:
/// the weight as a number (an integer or a floating-point field; 0 for
/// anything else), `live` and `tracked` as booleans (absent: not live, and
/// tracked), `gcsSurvived`, `freedByGcId` and `objectSize` as counts
/// (absent or negative: 0, and no size), `trackingProbability` as a number
/// that must fit `tracked` ([`tracking_probability`]).
fn read_sample<'a>(
    plan: &EventPlan<'_>,
    raw: &mut RawEvent<'a>,
    columns: &AllocationFields,
    weight: usize,
    mut filter: Option<(&ChunkFilter<'_, '_, '_>, &mut Check)>,
) -> Result<Sample<'a>, ReadError> {
    let mut sample = Sample {
        start_time: None,
        stack_trace: Field::Null,
        object_class: Field::Null,
        event_thread: Field::Null,
        weight: 0.0,
        size: None,
        live: false,
        gcs_survived: 0,
        freed_by_gc_id: 0,
        tracked: true,
        tracking_probability: 1.0,
    };
    let offset = raw.offset;
    let mut probability = None;
    plan.read(raw, &mut |index: usize, field: Field<'a>| {
        if let Some((filter, check)) = &mut filter {
            filter.see(check, index, &field);
        }
        if index == weight {
            sample.weight = field.number().unwrap_or(0.0);
        } else if Some(index) == columns.start_time {
            sample.start_time = field.integer();
        } else if Some(index) == columns.stack_trace {
            sample.stack_trace = field;
        } else if Some(index) == columns.object_class {
            sample.object_class = field;
        } else if Some(index) == columns.event_thread {
            sample.event_thread = field;
        } else if Some(index) == columns.live {
            sample.live = field == Field::Boolean(true);
        } else if Some(index) == columns.tracked {
            sample.tracked = field != Field::Boolean(false);
        } else if Some(index) == columns.gcs_survived {
            sample.gcs_survived = field.count().unwrap_or(0);
        } else if Some(index) == columns.freed_by_gc_id {
            sample.freed_by_gc_id = field.count().unwrap_or(0);
        } else if Some(index) == columns.object_size {
            sample.size = field.count();
        } else if Some(index) == columns.tracking_probability {
            probability = Some(field.number());
        }
    })?;
    sample.tracking_probability = tracking_probability(sample.tracked, probability)
        .map_err(|expected| ReadError::Malformed { offset, expected })?;
    Ok(sample)
}

/// A liveness sample's tracking probability, from its `tracked` and its
/// `trackingProbability` (`None`: no such field; `Some(None)`: not a
/// number): absent, 1 if tracked and else 0; present, in (0, 1] if
/// tracked and in [0, 1] if not. Otherwise what was expected, for an error
/// (a weight divided by 0 or a negative probability would turn every live
/// estimate into nonsense).
pub fn tracking_probability(tracked: bool, read: Option<Option<f64>>) -> Result<f64, String> {
    let found = match read {
        None => return Ok(if tracked { 1.0 } else { 0.0 }),
        Some(Some(q)) if (if tracked { q > 0.0 } else { q >= 0.0 }) && q <= 1.0 => return Ok(q),
        Some(Some(q)) => format!("{q}"),
        Some(None) => "no number".to_owned(),
    };
    Err(format!(
        "{}'s {} in {}, found {found}",
        event::OBJECT_LIFETIME,
        field::TRACKING_PROBABILITY,
        if tracked {
            "(0, 1] for a tracked sample"
        } else {
            "[0, 1]"
        }
    ))
}

/// Reads an old object's fields at `columns`: allocation time, stack
/// trace, thread, object and root; and the object's class from the
/// object's pooled value in `chunk`.
fn read_old_object<'a>(
    chunk: &Chunk<'_>,
    plan: &EventPlan<'_>,
    raw: &mut RawEvent<'a>,
    columns: [Option<usize>; 5],
) -> Result<OldObject<'a>, ReadError> {
    let mut fields = [
        Field::Null,
        Field::Null,
        Field::Null,
        Field::Null,
        Field::Null,
    ];
    plan.read(raw, &mut |index: usize, field: Field<'a>| {
        if let Some(at) = columns.iter().position(|&c| c == Some(index)) {
            fields[at] = field;
        }
    })?;
    let [allocation_time, stack_trace, event_thread, object, root] = fields;
    let object_class = match chunk.resolve(&object.clone().into_value()) {
        Value::Object { class_id, fields } => chunk
            .metadata
            .class(*class_id)
            .and_then(|class| class.fields.iter().position(|f| f.name == field::TYPE))
            .and_then(|index| fields.get(index))
            .cloned()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    };
    Ok(OldObject {
        allocation_time: allocation_time.integer(),
        stack_trace,
        event_thread,
        object,
        object_class,
        root,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapsampler_core::sampling::bytes_weight;

    #[test]
    fn sizes_come_from_an_unthrottled_interval_only() {
        let t = 512 * 1024;
        let weight = bytes_weight(24, t).round();
        let mut settings = SamplingSettings::default();
        assert_eq!(settings.size(weight), None, "no interval recorded");
        settings.set(setting::SAMPLING_INTERVAL, "524288 bytes");
        settings.set(setting::THROTTLE, setting::THROTTLE_OFF);
        assert_eq!(settings.size(weight), Some(24));
        assert_eq!(settings.size(weight + 0.5), None, "not a stored weight");
        settings.set(setting::THROTTLE, "100/s");
        assert_eq!(settings.size(weight), None, "throttled: weights vary");
        settings.set(setting::THROTTLE, setting::THROTTLE_OFF);
        settings.set(setting::SAMPLING_INTERVAL, "32768 bytes");
        let weight = bytes_weight(24, 32 * 1024).round();
        assert_eq!(settings.size(weight), Some(24), "a new interval");
        settings.set(setting::SAMPLING_INTERVAL, "lots");
        assert_eq!(settings.size(weight), None);
    }

    #[test]
    fn a_tracking_probability_must_fit_tracked() {
        // Absent (older recordings): tracked samples are all of them.
        assert_eq!(tracking_probability(true, None), Ok(1.0));
        assert_eq!(tracking_probability(false, None), Ok(0.0));
        assert_eq!(tracking_probability(true, Some(Some(0.01))), Ok(0.01));
        assert_eq!(tracking_probability(false, Some(Some(0.01))), Ok(0.01));
        assert_eq!(tracking_probability(false, Some(Some(0.0))), Ok(0.0));
        assert_eq!(
            tracking_probability(true, Some(Some(0.0))),
            Err(
                "heapsampler.ObjectLifetime's trackingProbability in (0, 1] for a tracked \
                 sample, found 0"
                    .to_owned()
            )
        );
        for bad in [-0.5, 1.5, f64::NAN] {
            assert!(
                tracking_probability(false, Some(Some(bad))).is_err(),
                "{bad}"
            );
            assert!(
                tracking_probability(true, Some(Some(bad))).is_err(),
                "{bad}"
            );
        }
        assert!(
            tracking_probability(true, Some(None))
                .unwrap_err()
                .ends_with("found no number")
        );
    }

    #[test]
    fn a_tracked_sample_stands_for_those_not_drawn() {
        assert_eq!(live_weight(1000.0, 0.25), 4000.0);
        assert_eq!(live_weight(1000.0, 1.0), 1000.0);
        assert_eq!(live_weight(1000.0, 0.0), 1000.0, "untracked: its weight");
        let mut tracking = Tracking::default();
        tracking.count(true, 0.01);
        tracking.count(false, 0.01);
        tracking.count(false, 0.01);
        tracking.count(false, 0.0);
        assert_eq!(
            tracking,
            Tracking {
                tracked: 1,
                not_drawn: 2,
                untracked: 1
            }
        );
        assert!(tracking.is_thinned());
        assert_eq!(
            tracking.clause().unwrap(),
            "liveness tracked for 25% of samples"
        );
        assert_eq!(Tracking::default().clause(), None);
    }

    #[test]
    fn shares_keep_two_digits_below_ten_percent() {
        let cases = [
            (1.0, "100%"),
            (0.9999, "99%"),
            (0.456, "46%"),
            (0.0123, "1.2%"),
            (0.00035, "0.035%"),
            (0.0, "0%"),
        ];
        for (share, text) in cases {
            assert_eq!(percent(share), text, "{share}");
        }
    }

    #[test]
    fn the_interval_is_told_when_the_recording_has_one() {
        let mut settings = SamplingSettings::default();
        assert_eq!(settings.intervals.flatten(), None, "none recorded");
        // Each chunk repeats the settings.
        settings.set(setting::SAMPLING_INTERVAL, "524288 bytes");
        settings.set(setting::SAMPLING_INTERVAL, "524288 bytes");
        assert_eq!(settings.intervals.flatten(), Some(524288));
        settings.set(setting::SAMPLING_INTERVAL, "32768 bytes");
        assert_eq!(settings.intervals.flatten(), None, "two intervals");
        settings.set(setting::SAMPLING_INTERVAL, "524288 bytes");
        assert_eq!(settings.intervals.flatten(), None, "still two");
    }
}
