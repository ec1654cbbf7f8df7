//! Folded stacks ("collapsed" format), the input of flame-graph tools
//! (Brendan Gregg's flamegraph.pl, inferno, speedscope): one line per
//! distinct stack, its frames root first joined with `;`, a space, and the
//! stack's value.
//!
//! The value is the sum of the events' weight field where their type has
//! one (the allocated bytes the events stand for: `weight` of
//! `jdk.ObjectAllocationSample` and `heapsampler.ObjectLifetime`, and the
//! TLAB events' fields as [`crate::model::allocation`] says), otherwise the number
//! of events.
//! Frames are `pkg.Class.method` without line numbers: a flame graph merges
//! a method's calls into one box per caller, where lines would split it into
//! one box per call site. A stack that was cut (by the recorder at its
//! depth, or by the depth asked for here) has lost the frames nearest the
//! root, so its line starts with [`TRUNCATED_FRAME`]: the graph shows the
//! cut rather than a root that is not one.
//!
//! An event of an allocated object (a type with an `objectClass` field)
//! ends its stack with a frame of the class, as async-profiler draws
//! allocations: `app.Main.main;java.util.Arrays.copyOf;byte[]_[k] 4096`.
//! The suffix is async-profiler's ([`class_frame_suffix`]), which
//! flamegraph.pl and inferno read as a kind of frame, colour so, and take
//! off the label. [`Fold::class_frame`] turns it off.
//!
//! Each stack also counts its events, beside their summed value: a flame
//! graph shows both.
//!
//! Events are added up by their stack trace's pool key (two integers to
//! hash), and each key's line is made once per chunk, when the chunk's sums
//! join the recording's.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};

use jfr_format::names::event;

use std::sync::{Mutex, PoisonError};

use crate::Error;
use crate::analysis::summary::missing_types;
use crate::model::allocation::{AllocationFields, FirstRead, Source};
use crate::model::filter::{ChunkFilter, Filter};
use crate::model::samples::{Liveness, Tracking, live_weight, tracking_probability};
use crate::model::text::Flattener;
use crate::model::types::Declared;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;
use jfr_reader::{IdMap, ReadError};

/// The frame written for an event without a stack trace, so that its value
/// still counts in the total (perf and inferno use the same name).
pub const UNKNOWN_FRAME: &str = "[unknown]";

/// The frame at the root end of a stack that was cut, where its missing
/// frames would be.
pub const TRUNCATED_FRAME: &str = "[truncated]";

/// The suffixes of an allocated class's frame ([`Fold::class_frame`]), as
/// async-profiler writes them: `_[k]` (its "kernel" kind) for an
/// allocation outside a TLAB and for a sampled one, whose TLAB is not
/// known; `_[i]` (its "inlined" kind, drawn in its own colour) for one in a
/// new TLAB.
const CLASS_FRAME_SUFFIXES: [&str; 2] = ["_[k]", "_[i]"];

/// Which of [`CLASS_FRAME_SUFFIXES`] the class frames of `event_type`'s
/// events end with.
fn class_frame_kind(event_type: &str) -> usize {
    usize::from(event_type == event::OBJECT_ALLOCATION_IN_NEW_TLAB)
}

/// The suffix of an allocated class's frame in events of `event_type`
/// ([`Fold::class_frame`]).
pub fn class_frame_suffix(event_type: &str) -> &'static str {
    CLASS_FRAME_SUFFIXES[class_frame_kind(event_type)]
}

/// The class of a folded frame that is an allocated class's
/// ([`class_frame_suffix`]): `byte[]` of `byte[]_[k]`.
pub fn class_of_frame(frame: &str) -> Option<&str> {
    CLASS_FRAME_SUFFIXES
        .iter()
        .find_map(|suffix| frame.strip_suffix(suffix))
}

/// What the events folded into one stack add up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// The sum of the events' weights (see the module's doc), or their
    /// number for a type without a weight.
    pub value: i64,
    /// The number of events.
    pub events: u64,
}

impl Totals {
    /// Adds `other` in (a sum too large for an `i64` stays at its largest).
    pub fn add(&mut self, other: Totals) {
        self.value = self.value.saturating_add(other.value);
        self.events += other.events;
    }
}

/// Stacks and their summed values, gathered over the chunks of a recording.
#[derive(Debug, Default)]
pub struct FoldedStacks {
    stacks: HashMap<String, Totals>,
    /// Events of the types folded here that were read, kept by the filter
    /// or not.
    read: u64,
    /// Events folded.
    folded: u64,
    /// With [`Fold::live`]: events of objects whose liveness was not
    /// tracked, left out.
    untracked: Totals,
    /// How the liveness events read were tracked.
    tracking: Tracking,
}

/// Which events are folded, beyond their type and the filter, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    /// Frames kept per stack, those nearest the top.
    pub stack_depth: usize,
    /// `Some(min_gcs)`: only objects still live at the recording's end
    /// (`live` true; `tracked` not false) that outlived at least `min_gcs`
    /// collections (`gcsSurvived`), as `top --live` counts them, each by
    /// its weight over its tracking probability
    /// ([`live_weight`]). An event
    /// without a `live` field is not live.
    pub live: Option<u64>,
    /// End the stack of an event of a type with an `objectClass` field
    /// with a frame of that class (see the module's doc).
    pub class_frame: bool,
}

/// What is done with the events of one type in a chunk.
struct TypeFold<'c> {
    plan: EventPlan<'c>,
    /// The stacks its events are folded into; without, they are read (so
    /// a malformed one fails the conversion) but not folded.
    into: Option<usize>,
    /// What each of its fields is to the fold, by field number: one look
    /// per field of each event.
    roles: Vec<Role>,
}

/// What a field of an event is to the fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Nothing.
    Other,
    /// The bytes the event stands for ([`AllocationFields::weight`]).
    Weight,
    /// `stackTrace`.
    StackTrace,
    /// `live`.
    Live,
    /// `tracked`.
    Tracked,
    /// `trackingProbability`.
    TrackingProbability,
    /// `gcsSurvived`.
    GcsSurvived,
    /// With [`Fold::class_frame`], `objectClass`: the class of its frame,
    /// of this [kind](class_frame_kind).
    Class(usize),
}

impl Role {
    /// The roles of the fields of events of `plan`'s type, folded as
    /// `fold` says.
    fn of_fields(plan: &EventPlan<'_>, fold: Fold) -> Vec<Role> {
        let name = &plan.class().name;
        let class = fold
            .class_frame
            .then(|| Role::Class(class_frame_kind(name)));
        let fields = AllocationFields::of(plan);
        let named = [
            (fields.weight, Some(Role::Weight)),
            (fields.stack_trace, Some(Role::StackTrace)),
            (fields.live, Some(Role::Live)),
            (fields.tracked, Some(Role::Tracked)),
            (fields.tracking_probability, Some(Role::TrackingProbability)),
            (fields.gcs_survived, Some(Role::GcsSurvived)),
            (fields.object_class, class),
        ];
        let mut roles = vec![Role::Other; plan.class().fields.len()];
        for (index, role) in named {
            if let (Some(index), Some(role)) = (index, role) {
                roles[index] = role;
            }
        }
        roles
    }
}

/// What a line of one chunk is made of: the pool keys of its stack trace
/// (`None`: the event has none) and of its class frame's class, with the
/// frame's [kind](class_frame_kind) (`None`: no class frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineKey {
    stack: Option<(u64, u64)>,
    class: Option<((u64, u64), usize)>,
}

impl Hash for LineKey {
    /// The two pool keys, a word each, which tell a chunk's lines apart: a
    /// derived hash would add each `Option`'s discriminant and the kind,
    /// which [`IdHash`](jfr_reader::IdHash) takes a byte at a time, a
    /// multiply each, in one chain per event.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.stack.map_or(0, |(_, key)| key));
        state.write_u64(self.class.map_or(0, |((_, key), _)| key));
    }
}

/// One chunk's sums for one set of stacks, before their lines are made.
type ChunkSums = IdMap<LineKey, Totals>;

impl FoldedStacks {
    /// No stacks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the events of `chunk` whose type `wanted` accepts and that
    /// `filter` keeps, keeping the `stack_depth` frames nearest the top of
    /// each stack, with their class frames; returns how many were added.
    pub fn add_chunk(
        &mut self,
        chunk: &Chunk<'_>,
        stack_depth: usize,
        wanted: &dyn Fn(&str) -> bool,
        filter: &ChunkFilter<'_, '_, '_>,
    ) -> Result<u64, ReadError> {
        let before = self.folded;
        let fold = Fold {
            stack_depth,
            live: None,
            class_frame: true,
        };
        let mut folded = [ChunkStacks::default()];
        fold_chunk(
            chunk,
            fold,
            &|name| wanted(name).then_some(0),
            &mut folded,
            Some(filter),
            &FirstRead::default(),
        )?;
        self.add_folded(&folded[0]);
        Ok(self.folded - before)
    }

    /// Adds the stacks of a chunk folded after those added.
    pub fn add_folded(&mut self, chunk: &ChunkStacks) {
        self.read += chunk.read;
        self.untracked.add(chunk.untracked);
        self.tracking.merge(&chunk.tracking);
        for (line, totals) in &chunk.lines {
            self.add(&chunk.text[line.clone()], *totals);
        }
    }

    /// Adds `totals` to the stack `line` (frames root first, joined with
    /// `;`), as if events of it had been folded.
    pub fn add(&mut self, line: &str, totals: Totals) {
        match self.stacks.get_mut(line) {
            Some(sum) => sum.add(totals),
            None => {
                self.stacks.insert(line.to_owned(), totals);
            }
        }
        self.folded += totals.events;
    }

    /// Events of the types folded here that were read, whether the filter
    /// kept them or not.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// Events folded.
    pub fn folded(&self) -> u64 {
        self.folded
    }

    /// With [`Fold::live`]: the events of objects whose liveness the agent
    /// did not track (objects at or above its `live_max` size), left out.
    pub fn untracked(&self) -> Totals {
        self.untracked
    }

    /// How the liveness events read (kept by the filter or not) were
    /// tracked.
    pub fn tracking(&self) -> Tracking {
        self.tracking
    }

    /// The number of distinct stacks.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Whether no event was added.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// The sum of every stack's value.
    pub fn total(&self) -> i64 {
        self.totals().value
    }

    /// The sums of every stack's value and events.
    pub fn totals(&self) -> Totals {
        let mut sum = Totals::default();
        self.stacks.values().for_each(|totals| sum.add(*totals));
        sum
    }

    /// The stacks and their totals, sorted by stack (byte order), so that
    /// the same recording always gives the same output.
    pub fn sorted(&self) -> Vec<(&str, Totals)> {
        let mut lines: Vec<(&str, Totals)> = self
            .stacks
            .iter()
            .map(|(stack, totals)| (stack.as_str(), *totals))
            .collect();
        lines.sort_unstable_by(|a, b| a.0.cmp(b.0));
        lines
    }

    /// Writes `stack value` lines, sorted by stack.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut number = itoa::Buffer::new();
        for (stack, totals) in self.sorted() {
            out.write_all(stack.as_bytes())?;
            out.write_all(b" ")?;
            out.write_all(number.format(totals.value).as_bytes())?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// One chunk's events folded into one set of stacks: lines, not yet added
/// up with those of other chunks. The lines are kept in one text, so that
/// a line the recording has already costs no allocation.
#[derive(Debug, Default)]
pub struct ChunkStacks {
    /// The lines, one after another.
    text: String,
    /// Each line's place in `text`, and its totals; a stack may come more
    /// than once.
    lines: Vec<(std::ops::Range<usize>, Totals)>,
    /// Events of the types folded here that were read, kept by the filter
    /// or not.
    read: u64,
    /// With [`Fold::live`]: events of objects whose liveness was not
    /// tracked, left out.
    untracked: Totals,
    /// How the liveness events read were tracked.
    tracking: Tracking,
}

impl ChunkStacks {
    /// Adds the line made by `make` at the end of the text.
    fn push(&mut self, totals: Totals, make: impl FnOnce(&mut String)) {
        let start = self.text.len();
        make(&mut self.text);
        self.lines.push((start..self.text.len(), totals));
    }

    /// Empties the lines, keeping their memory for the next chunk's.
    fn clear(&mut self) {
        self.text.clear();
        self.lines.clear();
        self.read = 0;
        self.untracked = Totals::default();
        self.tracking = Tracking::default();
    }

    /// About how many bytes the lines hold.
    fn bytes(&self) -> usize {
        self.text.len() + self.lines.len() * std::mem::size_of::<(std::ops::Range<usize>, Totals)>()
    }
}

/// Folds each event of `chunk` that `filter` (if any) keeps (and, with
/// [`Fold::live`], that is of an object still live) into the set of
/// `stacks` (each empty) that `into` names for its type (none: the event is
/// read but not folded), keeping the [`Fold::stack_depth`] frames nearest
/// the top of each stack. The chunk is read once, whatever the number of
/// sets; each pooled stack (the JDK's and ours) is folded into its line
/// once.
///
/// The sets are in order of preference, and only the first a recording has
/// events of is wanted ([`Folding::folded`]): `first_read`, shared by the
/// recording's chunks, knows the first set any of them has read an event
/// of so far, and the events of the sets after it are read and counted but
/// not folded, as those sets will not be wanted.
pub fn fold_chunk<'a>(
    chunk: &Chunk<'a>,
    fold: Fold,
    into: &dyn Fn(&str) -> Option<usize>,
    stacks: &mut [ChunkStacks],
    filter: Option<&ChunkFilter<'_, '_, '_>>,
    first_read: &FirstRead,
) -> Result<(), ReadError> {
    let flattener = Flattener::new(chunk, fold.stack_depth);
    let sets = stacks.len();
    let mut sums: Vec<ChunkSums> = (0..sets).map(|_| ChunkSums::default()).collect();
    let mut types: TypeMap<Option<TypeFold<'_>>> = TypeMap::default();
    for raw in chunk.raw_events() {
        let mut raw = raw?;
        let Some(fold_type) = types.get_or_insert_with(raw.type_id, || {
            let plan = chunk.plan(raw.type_id)?;
            Some(TypeFold {
                into: into(&plan.class().name).filter(|&at| at < sets),
                roles: Role::of_fields(&plan, fold),
                plan,
            })
        }) else {
            continue; // undeclared: skipped, as the JDK does
        };
        let Some(at) = fold_type.into else {
            fold_type.plan.skip(&mut raw)?;
            continue;
        };
        if !first_read.reads(at) {
            fold_type.plan.skip(&mut raw)?;
            stacks[at].read += 1;
            continue;
        }
        let mut check = filter.map(|filter| filter.check(raw.type_id));
        let mut stack = Field::Null;
        let mut class = None;
        let mut value = 1;
        let (mut live, mut tracked, mut gcs_survived) = (false, true, 0);
        // Liveness events have a `tracked` field.
        let (mut liveness, mut probability) = (false, None);
        let offset = raw.offset;
        let roles = &fold_type.roles;
        fold_type
            .plan
            .read(&mut raw, &mut |index: usize, field: Field<'a>| {
                if let (Some(filter), Some(check)) = (filter, check.as_mut()) {
                    filter.see(check, index, &field);
                }
                match roles.get(index) {
                    Some(Role::Weight) => value = field.integer().unwrap_or(0),
                    Some(Role::StackTrace) => stack = field,
                    Some(Role::Live) => live = field == Field::Boolean(true),
                    Some(Role::Tracked) => {
                        liveness = true;
                        tracked = field != Field::Boolean(false);
                    }
                    Some(Role::TrackingProbability) => probability = Some(field.number()),
                    Some(Role::GcsSurvived) => gcs_survived = field.count().unwrap_or(0),
                    // A class outside the pool (never seen) has no frame.
                    Some(&Role::Class(kind)) => {
                        class = match field {
                            Field::Pooled { class_id, key } => Some(((class_id, key), kind)),
                            _ => None,
                        }
                    }
                    Some(Role::Other) | None => {}
                }
            })?;
        stacks[at].read += 1;
        let probability = if liveness {
            let q = tracking_probability(tracked, probability)
                .map_err(|expected| ReadError::Malformed { offset, expected })?;
            stacks[at].tracking.count(tracked, q);
            q
        } else {
            1.0
        };
        if let (Some(filter), Some(check)) = (filter, check)
            && !filter.keeps(check)
        {
            continue;
        }
        let mut totals = Totals { value, events: 1 };
        if let Some(min_gcs) = fold.live {
            match Liveness::of(live, tracked, probability, gcs_survived, min_gcs) {
                Liveness::Live => {
                    totals.value = live_weight(value as f64, probability).round() as i64;
                }
                Liveness::Not => continue,
                Liveness::Untracked => {
                    stacks[at].untracked.add(totals);
                    continue;
                }
            }
        }
        let stack = match stack {
            Field::Pooled { class_id, key } => Some((class_id, key)),
            Field::Null => None,
            // Not pooled: rare enough to fold as it comes.
            inline => {
                stacks[at].push(totals, |text| {
                    push_stack(&flattener, &inline.into_value(), text);
                    push_class(&flattener, text, class);
                });
                continue;
            }
        };
        sums[at]
            .entry(LineKey { stack, class })
            .or_default()
            .add(totals);
    }
    for (stacks, sums) in stacks.iter_mut().zip(sums) {
        for (LineKey { stack, class }, totals) in sums {
            stacks.push(totals, |text| {
                match stack {
                    Some((class_id, key)) => {
                        push_stack(&flattener, &Value::Ref { class_id, key }, text)
                    }
                    None => text.push_str(UNKNOWN_FRAME),
                }
                push_class(&flattener, text, class);
            });
        }
    }
    Ok(())
}

/// What to fold a recording's events into stacks for.
#[derive(Debug, Clone, Copy)]
pub struct FoldJob<'o> {
    /// The event types to fold, one set of stacks for them all; empty:
    /// each kind of `sources` apart, and the first the recording has events
    /// of is chosen.
    pub types: &'o [String],
    /// The kinds of events to fold when no type is named, in order of
    /// preference.
    pub sources: &'o [Source],
    /// Which events, and how deep.
    pub fold: Fold,
    /// Which events to keep.
    pub filter: &'o Filter,
}

/// What a recording's events fold into, and which kind of them.
#[derive(Debug)]
pub struct Folded {
    /// The stacks of the kind chosen.
    pub stacks: FoldedStacks,
    /// The event types folded; when the recording has none of the kinds
    /// looked for, every type looked for.
    pub types: Vec<String>,
    /// The kind of allocation events folded, when no type was named.
    pub source: Option<Source>,
    /// Other kinds of allocation events the recording has, and how many:
    /// not folded, as they record the same allocations.
    pub left_out: Vec<(Source, u64)>,
    /// What [`RecordingFile::truncated`] says.
    pub truncated: Option<(u64, u64)>,
}

/// Folds the events of the recording `file` into stacks, as `job` says,
/// through `pipeline`, telling `progress` the bytes read.
pub fn fold(
    file: RecordingFile,
    job: FoldJob<'_>,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Folded, Error> {
    let folding = Folding::new(job);
    let ran = pipeline.run(file, &folding, folding.start(), progress)?;
    folding.folded(&ran.recording, ran.merged, ran.truncated, pipeline)
}

/// Folding a recording's events into stacks, as a [`FoldJob`] says: each
/// chunk's folded lines are added up in chunk order, with each kind of
/// allocation events in its own set of stacks until the recording's end
/// tells which one the recording has. Once a chunk has read an event of one
/// kind, the kinds after it are only counted ([`fold_chunk`]).
#[derive(Debug)]
pub struct Folding<'o> {
    job: FoldJob<'o>,
    /// The event types of each set of stacks, in order of preference.
    kinds: Vec<Vec<&'o str>>,
    /// The first set any chunk has read an event of so far.
    first_read: FirstRead,
    /// Which of the types named the chunks declare.
    declared: Declared,
    /// Chunks' sets of lines added up, emptied, for other chunks to fill
    /// again: memory used again rather than fresh memory, which costs a
    /// page fault per page.
    spare: Mutex<Vec<Vec<ChunkStacks>>>,
}

/// Spare sets of lines kept at most: one for each chunk a thread folds
/// while the merge adds up another's, on any machine's number of cores.
const SPARE: usize = 64;

impl<'o> Folding<'o> {
    /// Folding as `job` says.
    pub fn new(job: FoldJob<'o>) -> Self {
        let kinds = if job.types.is_empty() {
            job.sources
                .iter()
                .map(|source| source.types().iter().map(|t| t.event_type).collect())
                .collect()
        } else {
            vec![job.types.iter().map(String::as_str).collect()]
        };
        Self {
            declared: Declared::new(job.types),
            first_read: FirstRead::default(),
            job,
            kinds,
            spare: Mutex::default(),
        }
    }

    /// The sets of stacks before any chunk: what [`Analysis::merge`] adds to.
    pub fn start(&self) -> Vec<FoldedStacks> {
        self.kinds.iter().map(|_| FoldedStacks::new()).collect()
    }

    /// What the stacks of `recording` (read to its end) fold into: the
    /// kind chosen, or with types named that the recording does not
    /// declare, an error that says so (the file is read again for the types
    /// it has).
    pub fn folded(
        &self,
        recording: &RecordingFile,
        mut stacks: Vec<FoldedStacks>,
        truncated: Option<(u64, u64)>,
        pipeline: &Pipeline,
    ) -> Result<Folded, Error> {
        let missing = self.declared.missing();
        if !missing.is_empty() {
            return Err(missing_types(recording, missing, pipeline));
        }
        let sources = if self.job.types.is_empty() {
            self.job.sources
        } else {
            &[]
        };
        let found = stacks.iter().position(|s| s.read() > 0);
        let chosen = found.unwrap_or(0);
        let left_out = sources
            .iter()
            .zip(&stacks)
            .enumerate()
            .filter(|&(at, (_, stacks))| at != chosen && stacks.read() > 0)
            .map(|(_, (&source, stacks))| (source, stacks.read()))
            .collect();
        Ok(Folded {
            stacks: if stacks.is_empty() {
                FoldedStacks::new()
            } else {
                stacks.swap_remove(chosen)
            },
            // None found: every type looked for, for the message.
            types: match found {
                Some(at) => &self.kinds[at..=at],
                None => &self.kinds[..],
            }
            .concat()
            .into_iter()
            .map(str::to_owned)
            .collect(),
            source: sources.get(chosen).copied(),
            left_out,
            truncated,
        })
    }
}

impl Analysis for Folding<'_> {
    type Part = Vec<ChunkStacks>;
    type Merged = Vec<FoldedStacks>;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(Vec<ChunkStacks>) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        self.declared.see(chunk);
        let filter = &self.job.filter;
        // None when empty: an event then costs the filter nothing.
        let filter = (!filter.is_empty())
            .then(|| ChunkFilter::new(filter, filter.window(context.recording_start), chunk));
        let into = |type_name: &str| self.kinds.iter().position(|kind| kind.contains(&type_name));
        let spare = self
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut folded =
            spare.unwrap_or_else(|| self.kinds.iter().map(|_| ChunkStacks::default()).collect());
        fold_chunk(
            chunk,
            self.job.fold,
            &into,
            &mut folded,
            filter.as_ref(),
            &self.first_read,
        )?;
        Ok(hand_on(folded)?)
    }

    fn merge(
        &self,
        stacks: &mut Vec<FoldedStacks>,
        mut part: Vec<ChunkStacks>,
    ) -> Result<(), Error> {
        for (stacks, part) in stacks.iter_mut().zip(&mut part) {
            stacks.add_folded(part);
            part.clear();
        }
        let mut spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        if spare.len() < SPARE {
            spare.push(part);
        }
        Ok(())
    }

    fn part_bytes(&self, part: &Vec<ChunkStacks>) -> usize {
        part.iter().map(ChunkStacks::bytes).sum()
    }
}

/// Ends the line being made at the end of `text` with the frame of `class`
/// (its pool key and the frame's [kind](class_frame_kind)), if there is one
/// and the pool names it.
fn push_class(
    flattener: &Flattener<'_, '_>,
    text: &mut String,
    class: Option<((u64, u64), usize)>,
) {
    let Some(((class_id, key), kind)) = class else {
        return;
    };
    let name = flattener.text(&Value::Ref { class_id, key });
    if !name.is_empty() {
        text.push(';');
        text.push_str(&frame_name(&name));
        text.push_str(CLASS_FRAME_SUFFIXES[kind]);
    }
}

/// Appends a stack trace to `text` as one line: root first, frames joined
/// with `;`, after [`TRUNCATED_FRAME`] if the stack was cut.
fn push_stack(flattener: &Flattener<'_, '_>, stack_trace: &Value, text: &mut String) {
    let mut line = Line::new(text);
    let cut = flattener.frames_root_first(stack_trace, &mut |frame| line.push(frame));
    line.finish(cut);
}

/// A folded line being made, root first, at the end of a text.
struct Line<'t> {
    text: &'t mut String,
    /// Where the line starts in `text`.
    start: usize,
    frames: usize,
}

impl<'t> Line<'t> {
    /// A line at the end of `text`.
    fn new(text: &'t mut String) -> Self {
        Self {
            start: text.len(),
            text,
            frames: 0,
        }
    }

    /// Adds the frame after those added, nearer the top.
    fn push(&mut self, frame: &str) {
        if self.frames > 0 {
            self.text.push(';');
        }
        self.text.push_str(&frame_name(frame));
        self.frames += 1;
    }

    /// Ends the line; `cut`: frames nearest the root are missing.
    fn finish(self, cut: bool) {
        if self.frames == 0 {
            self.text.push_str(UNKNOWN_FRAME);
        } else if cut {
            self.text.insert(self.start, ';');
            self.text.insert_str(self.start, TRUNCATED_FRAME);
        }
    }
}

/// A frame as the folded format can carry it: `;` separates frames and a
/// line ends a stack, so neither may appear inside one (JVM languages other
/// than Java allow almost any character in a method name); an empty name
/// (a method missing from the pool) would merge with its neighbours.
fn frame_name(frame: &str) -> std::borrow::Cow<'_, str> {
    // Printable ASCII without `;`, as almost every name is: no char by char
    // look.
    if !frame.is_empty()
        && frame
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b';')
    {
        frame.into()
    } else if frame.is_empty() {
        UNKNOWN_FRAME.into()
    } else if frame.contains(|c: char| c == ';' || c.is_control()) {
        frame
            .replace(|c: char| c == ';' || c.is_control(), "_")
            .into()
    } else {
        frame.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_names_cannot_break_the_format() {
        assert_eq!(frame_name("a.B.c"), "a.B.c");
        assert_eq!(frame_name("a.B.ünïcode"), "a.B.ünïcode");
        assert_eq!(frame_name("a.B.c\u{85}"), "a.B.c_");
        assert_eq!(frame_name("a.B.`odd; name`"), "a.B.`odd_ name`");
        assert_eq!(frame_name("a.B.two\nlines"), "a.B.two_lines");
        assert_eq!(frame_name(""), UNKNOWN_FRAME);
    }

    #[test]
    fn a_cut_stack_starts_with_the_truncated_marker() {
        let line = |frames: &[&str], cut: bool| {
            // After another line, which stays as it is.
            let mut text = "a.B.before".to_owned();
            let mut line = Line::new(&mut text);
            frames.iter().for_each(|frame| line.push(frame));
            line.finish(cut);
            text.strip_prefix("a.B.before").unwrap().to_owned()
        };
        assert_eq!(
            line(&["a.B.caller", "a.B.alloc"], false),
            "a.B.caller;a.B.alloc"
        );
        assert_eq!(
            line(&["a.B.caller", "a.B.alloc"], true),
            "[truncated];a.B.caller;a.B.alloc"
        );
        assert_eq!(
            line(&["a.B.odd;name", ""], true),
            "[truncated];a.B.odd_name;[unknown]"
        );
        assert_eq!(line(&[], true), UNKNOWN_FRAME);
    }

    #[test]
    fn output_is_sorted_and_totals_add_up() {
        let mut stacks = FoldedStacks::new();
        let totals = |value, events| Totals { value, events };
        stacks.add("main;b", totals(5, 1));
        stacks.add("main;a", totals(7, 2));
        stacks.add(UNKNOWN_FRAME, totals(1, 1));
        let mut chunk = ChunkStacks::default();
        chunk.push(totals(3, 1), |text| text.push_str("main;a"));
        stacks.add_folded(&chunk);
        let mut out = Vec::new();
        stacks.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[unknown] 1\nmain;a 10\nmain;b 5\n"
        );
        assert_eq!(stacks.total(), 16);
        assert_eq!(stacks.totals(), totals(16, 5));
        assert_eq!(stacks.folded(), 5);
        assert_eq!(stacks.len(), 3);
    }
}
