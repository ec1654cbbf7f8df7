//! `heapsampler convert --format pprof`: the allocation samples of a
//! recording as a heap profile of `go tool pprof` (google/pprof's
//! `proto/profile.proto`, gzip-compressed as pprof writes it).
//!
//! The sample types are a Go heap profile's, in Go's order:
//!
//! - `alloc_objects`/`count` and `alloc_space`/`bytes`: every allocation
//!   sample, the kind `heapsampler top` reads ([`ALLOCATIONS`]:
//!   `jdk.ObjectAllocationSample`, or in a recording without it the TLAB
//!   events), by its weight: the bytes it stands for, and `weight / size`
//!   objects (`1/p`, as [`Estimate::add_weighted`] counts them).
//! - `inuse_objects`/`count` and `inuse_space`/`bytes`: the objects still
//!   live at the end (`heapsampler.ObjectLifetime` with `live` and
//!   `tracked`, each by its weight over its tracking probability: what
//!   `top --live` sums). Left out for recordings without ObjectLifetime
//!   events.
//!
//! Objects need each sample's size ([`Sample::size`]). The JDK's own
//! sampler throttles by rate and weighs a sample by the bytes its thread
//! allocated since its last one, heapsampler's under `rate=` moves its
//! interval, and a TLAB event stands for a TLAB: their samples have no
//! size, and no honest count of objects can be made from them. Such a profile has `samples`/`count` (the samples themselves, as
//! in a Go CPU profile) where `alloc_objects` would be; leaving the type
//! out instead would make pprof's default view the bytes anyway, but the
//! count of samples tells how much an estimate rests on.
//!
//! With the `inuse_` types, a comment says what live means in the
//! recording ([`Ending::live_statement`]: on generational ZGC, as of the
//! last major collection; and the share of samples tracked):
//! `inuse_objects, inuse_space: live: ...` (`go tool pprof -comments`).
//!
//! `default_sample_type` is `inuse_space` when the profile has it, as Go's
//! heap profile (the last type, which pprof defaults to), otherwise
//! `alloc_space`, as Go's `allocs` profile sets it.
//!
//! Each pprof sample aggregates every sample with the same stack,
//! allocated class and thread (labels `class` and `thread`): the weights
//! are summed as floating-point numbers and rounded once to an integer, so
//! a profile's total differs from `heapsampler top`'s by less than half a
//! byte (or object) per pprof sample. Memory follows the distinct stacks,
//! classes and threads, not the samples; functions, locations and strings
//! are stored once.
//!
//! Functions are `pkg.Class.method`, their system name that with the JVM's
//! descriptor (`java.util.Arrays.copyOf([II)[I`, which tells overloads
//! apart). JFR records no source file for a class, and `pkg/Class.java`
//! would be wrong for nested and local classes, for other languages and
//! for generated classes, so a function's file name is left empty; its
//! start line is unknown (0). A location is a function and a line (0 when
//! unknown). A stack cut at the depth limit, when recorded or by
//! `--stack-depth`, ends at the root in the function
//! [`TRUNCATED_FRAME`]; a sample without a stack has the one function
//! [`UNKNOWN_FRAME`], as in folded stacks.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};

use heapsampler_core::estimate::Estimate;
use jfr_format::names::field;
use prost::Message;

use crate::Error;
use crate::analysis::fold::{TRUNCATED_FRAME, UNKNOWN_FRAME};
use crate::analysis::liveness::{Ending, ReadEnding};
use crate::model::allocation::{ALLOCATIONS, Source};
use crate::model::filter::Filter;
use crate::model::samples::{self, Kind, Liveness, Sample, SampleVisitor, SamplesRead, Weights};
use crate::model::text::Flattener;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::Field;
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;

/// The messages of google/pprof's `proto/profile.proto` (in
/// `convert/proto/`, with its licence), as prost-build generates them:
/// `tests/pprof.rs` checks the generated code against the .proto, and
/// says how to generate it again.
#[allow(missing_docs, clippy::all, rustdoc::all)]
pub mod proto {
    include!("../../proto/perftools.profiles.rs");
}

/// The kinds of events read, in one pass: the allocation kinds in `top`'s
/// order of preference, then the lifetimes.
const SOURCES: [Source; 3] = [ALLOCATIONS[0], ALLOCATIONS[1], Source::ObjectLifetimes];

/// The index of the lifetimes in [`SOURCES`].
const LIFETIMES: usize = 2;

/// The label of the allocated class's Java name.
pub const CLASS_LABEL: &str = "class";

/// The label of the allocating thread's name.
pub const THREAD_LABEL: &str = "thread";

/// A pprof sample's stack and labels: what samples are aggregated by.
/// Class and thread are string indexes, 0 for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    stack: u32,
    class: u32,
    thread: u32,
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Two words rather than three small writes (IdHash mixes words):
        // one lookup per sample.
        state.write_u64(u64::from(self.stack) << 32 | u64::from(self.class));
        state.write_u64(self.thread.into());
    }
}

/// Strings stored once; index 0 is the empty string, as pprof requires.
#[derive(Debug)]
struct Strings(HashMap<String, u32>);

impl Default for Strings {
    fn default() -> Self {
        Self(HashMap::from([(String::new(), 0)]))
    }
}

impl Strings {
    /// The index of `text`, stored if it is new.
    fn index(&mut self, text: &str) -> u32 {
        if let Some(&index) = self.0.get(text) {
            return index;
        }
        let index = self.0.len() as u32;
        self.0.insert(text.to_owned(), index);
        index
    }

    /// The table, in index order.
    fn into_table(self) -> Vec<String> {
        let mut table = vec![String::new(); self.0.len()];
        for (text, index) in self.0 {
            table[index as usize] = text;
        }
        table
    }
}

/// Values stored once, numbered from 1 in order of arrival (pprof's ids
/// of functions and locations, and our stacks').
#[derive(Debug)]
struct Numbered<T>(HashMap<T, u64>);

impl<T> Default for Numbered<T> {
    fn default() -> Self {
        Self(HashMap::new())
    }
}

impl<T: Hash + Eq> Numbered<T> {
    fn id(&mut self, value: T) -> u64 {
        let next = self.0.len() as u64 + 1;
        *self.0.entry(value).or_insert(next)
    }

    /// The values, in id order.
    fn into_values(self) -> Vec<T> {
        let mut values: Vec<(u64, T)> = self.0.into_iter().map(|(v, id)| (id, v)).collect();
        values.sort_unstable_by_key(|&(id, _)| id);
        values.into_iter().map(|(_, v)| v).collect()
    }
}

/// pprof's tables: strings, functions, locations and stacks, each stored
/// once and numbered in order of arrival.
#[derive(Debug, Default)]
struct Tables {
    strings: Strings,
    /// Functions by name and system name (string indexes).
    functions: Numbered<(u32, u32)>,
    /// Locations by function and line.
    locations: Numbered<(u64, u32)>,
    /// Stacks: location ids, leaf first.
    stacks: Numbered<Box<[u64]>>,
}

/// What each kind of [`SOURCES`] adds up to, per stack and labels, kept
/// apart until the recording's end tells which allocation kind the
/// profile shows.
type Tallies = [IdMap<Key, Estimate>; 3];

/// One chunk's samples, in tables of the chunk's own: what the work on a
/// chunk hands on. The merge numbers what is new to the recording in the
/// order the chunk met it, and adds the samples' weights in the order they
/// were read, so ids and sums are those of one thread reading the
/// recording through.
#[derive(Debug)]
pub struct ChunkProfile {
    read: SamplesRead,
    tables: Tables,
    /// Per kind of [`SOURCES`]: each stack and labels' samples, in the
    /// order the chunk met them.
    tallies: [Vec<(Key, Weights)>; 3],
    /// Lifetimes of objects the agent did not track.
    untracked: Weights,
}

/// The samples of a recording gathered into pprof's tables, chunk after
/// chunk: what [`Profiling`] merges into.
#[derive(Debug)]
pub struct Gathered {
    read: SamplesRead,
    tables: Tables,
    tallies: Tallies,
    untracked: Estimate,
}

/// Gathers the samples of one chunk into its tables.
struct Builder {
    part: ChunkProfile,
    /// Where each stack and labels' samples are in [`ChunkProfile::tallies`].
    keys: [IdMap<Key, usize>; 3],
    /// The chunk's stacks, methods (as function ids) and labels, by pool
    /// key: each made once per chunk.
    chunk_stacks: IdMap<(u64, u64), u32>,
    chunk_functions: IdMap<(u64, u64), u64>,
    chunk_labels: IdMap<(u64, u64), u32>,
}

impl SampleVisitor for Builder {
    fn sample(&mut self, text: &Flattener<'_, '_>, kind: Kind, sample: &Sample<'_>) {
        if kind.source == LIFETIMES {
            // As `top --live`.
            match sample.liveness(0) {
                Liveness::Live => {}
                Liveness::Not => return,
                Liveness::Untracked => {
                    self.part.untracked.push(sample);
                    return;
                }
            }
        }
        let key = Key {
            stack: self.stack(text, &sample.stack_trace),
            class: self.label(text, &sample.object_class),
            thread: self.label(text, &sample.event_thread),
        };
        let tally = &mut self.part.tallies[kind.source];
        let at = *self.keys[kind.source].entry(key).or_insert_with(|| {
            tally.push((key, Weights::default()));
            tally.len() - 1
        });
        if kind.source == LIFETIMES {
            tally[at].1.push_live(sample);
        } else {
            tally[at].1.push(sample);
        }
    }
}

impl Builder {
    /// The stack id of a sample's stack trace.
    fn stack(&mut self, text: &Flattener<'_, '_>, stack_trace: &Field<'_>) -> u32 {
        match *stack_trace {
            Field::Pooled { class_id, key } => {
                if let Some(&id) = self.chunk_stacks.get(&(class_id, key)) {
                    return id;
                }
                let id = self.new_stack(text, &Value::Ref { class_id, key });
                self.chunk_stacks.insert((class_id, key), id);
                id
            }
            ref inline => self.new_stack(text, &inline.clone().into_value()),
        }
    }

    /// The stack id of a stack trace value, storing its locations and
    /// functions if they are new.
    fn new_stack(&mut self, text: &Flattener<'_, '_>, stack_trace: &Value) -> u32 {
        let stack = text.stack_parts(stack_trace);
        let mut locations = Vec::with_capacity(stack.frames.len() + 1);
        for frame in &stack.frames {
            let function = self.function(text, &frame.method);
            let tables = &mut self.part.tables;
            locations.push(tables.locations.id((function, frame.line.unwrap_or(0))));
        }
        let tables = &mut self.part.tables;
        if stack.truncated {
            let function = tables.special_function(TRUNCATED_FRAME);
            locations.push(tables.locations.id((function, 0)));
        } else if locations.is_empty() {
            let function = tables.special_function(UNKNOWN_FRAME);
            locations.push(tables.locations.id((function, 0)));
        }
        tables.stacks.id(locations.into_boxed_slice()) as u32
    }

    /// The function id of a frame's method.
    fn function(&mut self, text: &Flattener<'_, '_>, method: &Value) -> u64 {
        let pooled = match *method {
            Value::Ref { class_id, key } => Some((class_id, key)),
            _ => None,
        };
        if let Some(id) = pooled.and_then(|key| self.chunk_functions.get(&key)) {
            return *id;
        }
        let name = text.text(method);
        let tables = &mut self.part.tables;
        let id = if name.is_empty() {
            // A method missing from its pool.
            tables.special_function(UNKNOWN_FRAME)
        } else {
            let descriptor = text.field_text_of(method, field::DESCRIPTOR);
            let system_name = format!("{name}{descriptor}");
            let (name, system_name) = (
                tables.strings.index(&name),
                tables.strings.index(&system_name),
            );
            tables.functions.id((name, system_name))
        };
        if let Some(key) = pooled {
            self.chunk_functions.insert(key, id);
        }
        id
    }

    /// The string index of the text of a class or thread field (0, no
    /// label, when it has none).
    fn label(&mut self, text: &Flattener<'_, '_>, value: &Field<'_>) -> u32 {
        let strings = &mut self.part.tables.strings;
        match *value {
            Field::Pooled { class_id, key } => {
                if let Some(&index) = self.chunk_labels.get(&(class_id, key)) {
                    return index;
                }
                let index = strings.index(&text.text(&Value::Ref { class_id, key }));
                self.chunk_labels.insert((class_id, key), index);
                index
            }
            ref inline => strings.index(&text.text(&inline.clone().into_value())),
        }
    }
}

impl Tables {
    /// The function id of a frame of ours, such as [`TRUNCATED_FRAME`].
    fn special_function(&mut self, name: &str) -> u64 {
        let name = self.strings.index(name);
        self.functions.id((name, name))
    }

    /// Adds the tables of a chunk after those added, in the order the chunk
    /// numbered them: the ids they have here, by the chunk's.
    fn add(&mut self, chunk: Tables) -> Renumbered {
        let strings: Vec<u32> = chunk
            .strings
            .into_table()
            .iter()
            .map(|text| self.strings.index(text))
            .collect();
        let functions: Vec<u64> = chunk
            .functions
            .into_values()
            .into_iter()
            .map(|(name, system_name)| {
                let (name, system_name) = (strings[name as usize], strings[system_name as usize]);
                self.functions.id((name, system_name))
            })
            .collect();
        let locations: Vec<u64> = chunk
            .locations
            .into_values()
            .into_iter()
            .map(|(function, line)| self.locations.id((functions[function as usize - 1], line)))
            .collect();
        let stacks = chunk
            .stacks
            .into_values()
            .into_iter()
            .map(|stack| {
                let stack = stack.iter().map(|&at| locations[at as usize - 1]).collect();
                self.stacks.id(stack) as u32
            })
            .collect();
        Renumbered { strings, stacks }
    }
}

/// The ids a chunk's strings and stacks have in the recording's tables,
/// by the chunk's (strings from 0, stacks from 1).
struct Renumbered {
    strings: Vec<u32>,
    stacks: Vec<u32>,
}

impl Renumbered {
    fn key(&self, key: Key) -> Key {
        Key {
            stack: self.stacks[key.stack as usize - 1],
            class: self.strings[key.class as usize],
            thread: self.strings[key.thread as usize],
        }
    }
}

/// Gathering the allocation samples of a recording that a filter keeps
/// into a heap profile, keeping the frames nearest the top of each stack.
#[derive(Debug)]
pub struct Profiling<'f> {
    /// Which samples to keep.
    pub filter: &'f Filter,
    /// Frames kept per stack, those nearest the top.
    pub stack_depth: usize,
}

impl Analysis for Profiling<'_> {
    type Part = ChunkProfile;
    type Merged = Gathered;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(ChunkProfile) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let mut builder = Builder {
            part: ChunkProfile {
                read: SamplesRead::default(),
                tables: Tables::default(),
                tallies: Default::default(),
                untracked: Weights::default(),
            },
            keys: Default::default(),
            chunk_stacks: IdMap::default(),
            chunk_functions: IdMap::default(),
            chunk_labels: IdMap::default(),
        };
        builder.part.read = samples::read_chunk(
            chunk,
            context.recording_start,
            &SOURCES,
            self.filter,
            self.stack_depth,
            &mut builder,
        )?;
        Ok(hand_on(builder.part)?)
    }

    fn merge(&self, gathered: &mut Gathered, part: ChunkProfile) -> Result<(), Error> {
        gathered.read.merge(&part.read);
        part.untracked.add_to(&mut gathered.untracked);
        let ids = gathered.tables.add(part.tables);
        for (tally, part) in gathered.tallies.iter_mut().zip(part.tallies) {
            for (key, weights) in part {
                weights.add_to(tally.entry(ids.key(key)).or_default());
            }
        }
        Ok(())
    }

    fn part_bytes(&self, part: &ChunkProfile) -> usize {
        let tables = &part.tables;
        let strings: usize = tables.strings.0.keys().map(|s| 2 * s.len() + 32).sum();
        let stacks: usize = tables.stacks.0.keys().map(|s| 8 * s.len() + 32).sum();
        let tallies: usize = part
            .tallies
            .iter()
            .flatten()
            .map(|(_, weights)| std::mem::size_of::<(Key, Weights)>() + weights.bytes())
            .sum::<usize>()
            + part.untracked.bytes();
        strings + stacks + 48 * (tables.functions.0.len() + tables.locations.0.len()) + tallies
    }
}

impl Gathered {
    /// No samples yet.
    pub fn new() -> Self {
        Self {
            read: SamplesRead::new(&SOURCES),
            tables: Tables::default(),
            tallies: Default::default(),
            untracked: Estimate::new(),
        }
    }
}

impl Default for Gathered {
    fn default() -> Self {
        Self::new()
    }
}

/// A profile and what it was made of: pprof's ([`Pprof`]) or the
/// OpenTelemetry request made from it ([`crate::output::otlp::Otlp`]).
#[derive(Debug, Clone)]
pub struct Profiled<P> {
    /// The profile.
    pub profile: P,
    /// What it was made of, for the messages after it.
    pub contents: Contents,
}

/// A heap profile and what it was made of.
pub type Pprof = Profiled<proto::Profile>;

/// What a profile was made of.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contents {
    /// The kind of allocation events of the `alloc_` types; `None` when
    /// the recording has none (nothing to profile).
    pub source: Option<Source>,
    /// Other kinds of allocation events the recording has, and how many:
    /// left out, as they record the same allocations.
    pub left_out: Vec<(Source, u64)>,
    /// The allocation samples kept (by the filter) in the profile.
    pub allocations: Estimate,
    /// The live objects in `inuse_`; `None` when the recording has no
    /// `heapsampler.ObjectLifetime` events (no `inuse_` types).
    pub live: Option<Estimate>,
    /// Objects whose liveness the agent did not track, so not in
    /// `inuse_` (see [`crate::analysis::top::Table::untracked`]).
    pub untracked: Estimate,
    /// With `inuse_` types, what live means in the recording
    /// ([`Ending::live_statement`]): the profile's comment says it.
    pub live_meaning: Option<String>,
    /// Whether that is news: on generational ZGC, or with only a share of
    /// samples tracked ([`Ending::qualifies_live`]).
    pub live_qualified: bool,
    /// The event types read.
    pub types: Vec<String>,
    /// Where a torn tail began, and the file's length, if it has one.
    pub truncated: Option<(u64, u64)>,
}

impl Contents {
    /// Whether the profile counts objects (`alloc_objects`), rather than
    /// samples: whether every allocation sample carried its size.
    pub fn objects_known(&self) -> bool {
        self.allocations.objects_known()
    }
}

/// Reads the allocation samples of `file` that `filter` keeps, keeping the
/// `stack_depth` frames nearest the top of each stack, into a heap
/// profile, through `pipeline`, telling `progress` the bytes read.
pub fn profile(
    file: RecordingFile,
    filter: &Filter,
    stack_depth: usize,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Pprof, Error> {
    let profiling = Profiling {
        filter,
        stack_depth,
    };
    let ran = pipeline.run(
        file,
        &(profiling, ReadEnding),
        (Gathered::new(), Ending::default()),
        progress,
    )?;
    let (gathered, ending) = ran.merged;
    Ok(build(gathered, &ending, ran.truncated))
}

/// The one mapping every location is in: it says that functions and lines
/// are known, so pprof does not look for a binary to symbolize them with.
const MAPPING_ID: u64 = 1;

/// A sample type as Go names it: type and unit.
type SampleType = (&'static str, &'static str);

const ALLOC_OBJECTS: SampleType = ("alloc_objects", "count");
const SAMPLES: SampleType = ("samples", "count");
const ALLOC_SPACE: SampleType = ("alloc_space", "bytes");
const INUSE_OBJECTS: SampleType = ("inuse_objects", "count");
const INUSE_SPACE: SampleType = ("inuse_space", "bytes");

/// A profile of what [`Profiling`] gathered, with what the recording says
/// of its end, `ending` (the OTLP export is made from it:
/// [`crate::output::otlp`]).
pub fn build(gathered: Gathered, ending: &Ending, truncated: Option<(u64, u64)>) -> Pprof {
    let Gathered {
        read,
        tables,
        tallies,
        untracked,
    } = gathered;
    let found = (0..ALLOCATIONS.len()).find(|&at| read.events_of(at) > 0);
    let chosen = found.unwrap_or(0);
    let with_lifetimes = read.events_of(LIFETIMES) > 0;
    let [samples, tlab, lifetimes] = tallies;
    let allocations = if chosen == 0 { samples } else { tlab };
    let lifetimes = if with_lifetimes {
        lifetimes
    } else {
        IdMap::default()
    };
    let total = |tally: &IdMap<Key, Estimate>| {
        tally.values().fold(Estimate::new(), |mut total, e| {
            total.merge(e);
            total
        })
    };
    let contents = Contents {
        source: found.map(|at| SOURCES[at]),
        left_out: (0..ALLOCATIONS.len())
            .filter(|&at| Some(at) != found && read.events_of(at) > 0)
            .map(|at| (SOURCES[at], read.events_of(at)))
            .collect(),
        allocations: total(&allocations),
        live: with_lifetimes.then(|| total(&lifetimes)),
        untracked,
        live_meaning: with_lifetimes.then(|| ending.live_statement(&read.tracking)),
        live_qualified: with_lifetimes && ending.qualifies_live(&read.tracking),
        types: SOURCES[chosen]
            .types()
            .iter()
            .chain(if with_lifetimes {
                SOURCES[LIFETIMES].types()
            } else {
                &[]
            })
            .map(|t| t.event_type.to_owned())
            .collect(),
        truncated,
    };
    // Each sample's values, in the order of the sample types.
    let objects_known = contents.objects_known();
    let mut types = vec![
        if objects_known {
            ALLOC_OBJECTS
        } else {
            SAMPLES
        },
        ALLOC_SPACE,
    ];
    // ObjectLifetime events carry their size: inuse_objects can be
    // estimated whenever they are there.
    let inuse_objects = contents.live.is_some_and(|live| live.objects_known());
    if with_lifetimes {
        if inuse_objects {
            types.push(INUSE_OBJECTS);
        }
        types.push(INUSE_SPACE);
    }
    let alloc_values = |e: &Estimate| {
        let count = if objects_known {
            e.objects().round() as i64
        } else {
            e.samples() as i64
        };
        [count, e.bytes().round() as i64]
    };
    let inuse_values = |e: &Estimate| [e.objects().round() as i64, e.bytes().round() as i64];
    let mut keys: Vec<Key> = allocations
        .keys()
        .chain(lifetimes.keys())
        .copied()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let stacks = tables.stacks.into_values();
    let mut strings = tables.strings;
    let label = |key: &str, value: u32, strings: &mut Strings| {
        (value != 0).then(|| proto::Label {
            key: strings.index(key).into(),
            str: value.into(),
            ..proto::Label::default()
        })
    };
    let mut samples = Vec::with_capacity(keys.len());
    for key in keys {
        let mut value = Vec::with_capacity(types.len());
        value.extend(alloc_values(
            allocations.get(&key).unwrap_or(&Estimate::new()),
        ));
        if with_lifetimes {
            let [objects, bytes] = inuse_values(lifetimes.get(&key).unwrap_or(&Estimate::new()));
            if inuse_objects {
                value.push(objects);
            }
            value.push(bytes);
        }
        let labels = [
            label(CLASS_LABEL, key.class, &mut strings),
            label(THREAD_LABEL, key.thread, &mut strings),
        ];
        samples.push(proto::Sample {
            location_id: stacks[key.stack as usize - 1].to_vec(),
            value,
            label: labels.into_iter().flatten().collect(),
        });
    }
    let mut value_type = |(kind, unit): SampleType| proto::ValueType {
        r#type: strings.index(kind).into(),
        unit: strings.index(unit).into(),
    };
    let sample_type: Vec<proto::ValueType> = types.iter().map(|&t| value_type(t)).collect();
    let period_type = Some(value_type(("space", "bytes")));
    let default_sample_type = if with_lifetimes {
        INUSE_SPACE
    } else {
        ALLOC_SPACE
    };
    let default_sample_type = strings.index(default_sample_type.0).into();
    let comment = contents
        .live_meaning
        .iter()
        .map(|meaning| {
            let inuse: Vec<&str> = types
                .iter()
                .filter(|t| [INUSE_OBJECTS, INUSE_SPACE].contains(t))
                .map(|t| t.0)
                .collect();
            strings
                .index(&format!("{}: {meaning}", inuse.join(", ")))
                .into()
        })
        .collect();
    let location = tables
        .locations
        .into_values()
        .into_iter()
        .enumerate()
        .map(|(at, (function_id, line))| proto::Location {
            id: at as u64 + 1,
            mapping_id: MAPPING_ID,
            line: vec![proto::Line {
                function_id,
                line: line.into(),
                column: 0,
            }],
            ..proto::Location::default()
        })
        .collect();
    let function = tables
        .functions
        .into_values()
        .into_iter()
        .enumerate()
        .map(|(at, (name, system_name))| proto::Function {
            id: at as u64 + 1,
            name: name.into(),
            system_name: system_name.into(),
            ..proto::Function::default()
        })
        .collect();
    let start = read.start_nanos.unwrap_or(0);
    let profile = proto::Profile {
        sample_type,
        sample: samples,
        mapping: vec![proto::Mapping {
            id: MAPPING_ID,
            has_functions: true,
            has_line_numbers: true,
            ..proto::Mapping::default()
        }],
        location,
        function,
        string_table: strings.into_table(),
        time_nanos: start,
        duration_nanos: read.start_nanos.map_or(0, |s| (read.end_nanos - s).max(0)),
        period_type,
        // The period of samples taken at the interval: not of TLAB events,
        // nor of a throttled sampler's, whose interval moves (and whose
        // samples have no size).
        period: match contents.source {
            Some(Source::AllocationSamples) if objects_known => {
                read.interval().map_or(0, |i| i as i64)
            }
            _ => 0,
        },
        default_sample_type,
        comment,
        ..proto::Profile::default()
    };
    Pprof { profile, contents }
}

/// Writes `profile` gzip-compressed, as pprof writes and reads it.
pub fn write(profile: &proto::Profile, out: &mut dyn Write) -> io::Result<()> {
    let mut gzip = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gzip.write_all(&profile.encode_to_vec())?;
    gzip.finish()?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    use heapsampler_core::sampling::bytes_weight;
    use jfr_format::names::setting;
    use jfr_writer::events::{self, ActiveSetting, ObjectAllocationSample, ObjectLifetime};
    use jfr_writer::{
        Class, ClassRef, FrameType, Method, MethodRef, Options, Recording, StackFrame, StackTrace,
        StackTraceRef, Thread, ThreadRef, Ticks,
    };

    /// The interval the samples were taken at, small so that objects of
    /// a few dozen bytes stand for many.
    const INTERVAL: u64 = 1024;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("heapsampler-pprof-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// The weight a recording stores for an object of `size` bytes.
    fn weight(size: u64) -> i64 {
        bytes_weight(size, INTERVAL).round() as i64
    }

    /// A sample: stack, class, thread, the object's size.
    type Allocation = (Option<StackTraceRef>, ClassRef, ThreadRef, u64);

    /// A recording of heapsampler's kind: allocation samples (with the
    /// sampling interval and the throttle among its settings when
    /// `throttle` says the latter), and a lifetime for each of the first
    /// `lifetimes` samples: the first live, the second not tracked, the
    /// rest freed.
    fn recording(path: &Path, throttle: Option<&str>, lifetimes: usize) {
        let mut recording = Recording::create(path, Options::default()).unwrap();
        let alloc = recording
            .register(events::object_allocation_sample())
            .unwrap();
        let lifetime = recording.register(events::object_lifetime()).unwrap();
        if let Some(throttle) = throttle {
            let settings = recording.register(events::active_setting()).unwrap();
            let value = format!("{INTERVAL} bytes");
            for (name, value) in [
                (setting::SAMPLING_INTERVAL, value.as_str()),
                (setting::THROTTLE, throttle),
            ] {
                ActiveSetting {
                    start_time: Ticks(0),
                    duration: 0,
                    event_thread: None,
                    stack_trace: None.into(),
                    id: alloc.id().get() as i64,
                    name: Some(name),
                    value: Some(value),
                }
                .write(&mut recording, &settings)
                .unwrap();
            }
        }
        let mut thread = |name: &str, id| {
            recording.thread(Thread {
                os_name: name.into(),
                os_thread_id: id,
                java_name: name.into(),
                java_thread_id: id,
                group: None,
            })
        };
        let (main, worker) = (thread("main", 1), thread("worker", 2));
        let mut class = |name: &str| {
            let name = recording.symbol(name);
            recording.class(Class {
                class_loader: None,
                name,
                package: None,
                modifiers: 1,
                hidden: false,
            })
        };
        let (app, bytes, string) = (class("App"), class("[B"), class("java/lang/String"));
        let mut method = |name: &str, descriptor: &str| -> MethodRef {
            let (name, descriptor) = (recording.symbol(name), recording.symbol(descriptor));
            recording.method(Method {
                class: app,
                name,
                descriptor,
                modifiers: 9,
                hidden: false,
            })
        };
        let (alloc_method, main_method) = (
            method("alloc", "()V"),
            method("main", "([Ljava/lang/String;)V"),
        );
        let frame = |method, line_number| StackFrame {
            method,
            line_number,
            bytecode_index: 0,
            frame_type: FrameType::Interpreted,
        };
        let whole = recording.stack_trace(StackTrace {
            truncated: false,
            frames: vec![frame(alloc_method, 10), frame(main_method, 3)],
        });
        let cut = recording.stack_trace(StackTrace {
            truncated: true,
            frames: vec![frame(alloc_method, 12)],
        });
        let allocations: [Allocation; 7] = [
            // Three alike: one pprof sample.
            (Some(whole), bytes, main, 56),
            (Some(whole), bytes, main, 56),
            (Some(whole), bytes, main, 56),
            (Some(whole), string, main, 24),
            (Some(whole), bytes, worker, 4096),
            (Some(cut), bytes, main, 24),
            (None, string, main, 24),
        ];
        for (at, &(stack_trace, object_class, event_thread, size)) in allocations.iter().enumerate()
        {
            ObjectAllocationSample {
                start_time: Ticks(at as i64),
                event_thread: Some(event_thread),
                stack_trace: stack_trace.into(),
                object_class: Some(object_class),
                weight: weight(size),
            }
            .write(&mut recording, &alloc)
            .unwrap();
            if at < lifetimes {
                ObjectLifetime {
                    start_time: Ticks(at as i64),
                    duration: 1,
                    event_thread: Some(event_thread),
                    stack_trace: stack_trace.into(),
                    object_class: Some(object_class),
                    object_size: size as i64,
                    weight: weight(size),
                    live: at < 2,
                    gcs_survived: 0,
                    freed_by_gc_id: if at < 2 { 0 } else { 1 },
                    tracked: at != 1,
                    tracking_probability: if at != 1 { 1.0 } else { 0.0 },
                }
                .write(&mut recording, &lifetime)
                .unwrap();
            }
        }
        recording.close().unwrap();
    }

    fn profile_of(path: &Path, stack_depth: usize) -> Pprof {
        let file = RecordingFile::open(path).unwrap();
        profile(
            file,
            &Filter::default(),
            stack_depth,
            &Pipeline::default(),
            &mut |_| {},
        )
        .unwrap()
    }

    /// The profile's samples, one line each, sorted: its stack as function
    /// and line, leaf first; its labels; its values.
    fn samples(profile: &proto::Profile) -> Vec<String> {
        let text = |index: i64| profile.string_table[index as usize].as_str();
        let mut lines: Vec<String> = profile
            .sample
            .iter()
            .map(|sample| {
                let frames: Vec<String> = sample
                    .location_id
                    .iter()
                    .map(|&id| {
                        let location = &profile.location[id as usize - 1];
                        assert_eq!(location.id, id);
                        let line = &location.line[0];
                        let function = &profile.function[line.function_id as usize - 1];
                        format!("{}:{}", text(function.name), line.line)
                    })
                    .collect();
                let labels: Vec<String> = sample
                    .label
                    .iter()
                    .map(|l| format!("{}={}", text(l.key), text(l.str)))
                    .collect();
                format!(
                    "{} {} {:?}",
                    frames.join(";"),
                    labels.join(","),
                    sample.value
                )
            })
            .collect();
        lines.sort();
        lines
    }

    fn types(profile: &proto::Profile) -> Vec<String> {
        let text = |index: i64| profile.string_table[index as usize].as_str();
        profile
            .sample_type
            .iter()
            .map(|t| format!("{}/{}", text(t.r#type), text(t.unit)))
            .collect()
    }

    #[test]
    fn samples_of_one_stack_class_and_thread_are_one_rounded_once() {
        let path = temp("aggregated.jfr");
        recording(&path, Some(setting::THROTTLE_OFF), 3);
        let Pprof { profile, contents } = profile_of(&path, 64);
        assert_eq!(
            types(&profile),
            [
                "alloc_objects/count",
                "alloc_space/bytes",
                "inuse_objects/count",
                "inuse_space/bytes"
            ]
        );
        let default = profile.string_table[profile.default_sample_type as usize].as_str();
        assert_eq!(default, "inuse_space");
        assert_eq!(profile.period, INTERVAL as i64);
        assert!(profile.time_nanos > 0 && profile.duration_nanos >= 0);
        // 56-byte objects weigh 1052 bytes, 18.79 objects each: three are
        // 56.36 objects, which rounds to 56 (rounding each to 19 would make
        // 57). The first is live, the second live but not tracked.
        let (w24, w4096) = (weight(24), weight(4096));
        let o24 = (w24 as f64 / 24.0).round() as i64;
        assert_eq!(weight(56), 1052);
        assert_eq!(
            samples(&profile),
            [
                "App.alloc:10;App.main:3 class=byte[],thread=main [56, 3156, 19, 1052]".to_owned(),
                format!("App.alloc:10;App.main:3 class=byte[],thread=worker [1, {w4096}, 0, 0]"),
                format!(
                    "App.alloc:10;App.main:3 class=java.lang.String,thread=main [{o24}, {w24}, 0, 0]"
                ),
                format!("App.alloc:12;[truncated]:0 class=byte[],thread=main [{o24}, {w24}, 0, 0]"),
                format!("[unknown]:0 class=java.lang.String,thread=main [{o24}, {w24}, 0, 0]"),
            ]
        );
        assert_eq!(contents.source, Some(Source::AllocationSamples));
        assert_eq!(contents.allocations.samples(), 7);
        assert_eq!(contents.live.map(|l| l.samples()), Some(1));
        assert_eq!(contents.untracked.samples(), 1);
    }

    #[test]
    fn strings_functions_and_locations_are_stored_once() {
        let path = temp("tables.jfr");
        recording(&path, Some(setting::THROTTLE_OFF), 0);
        let profile = profile_of(&path, 64).profile;
        let strings = &profile.string_table;
        assert_eq!(strings[0], "", "pprof's string 0");
        let mut unique = strings.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), strings.len(), "{strings:?}");
        let functions: Vec<(&str, &str)> = profile
            .function
            .iter()
            .enumerate()
            .map(|(at, f)| {
                assert_eq!(f.id, at as u64 + 1);
                assert_eq!((f.filename, f.start_line), (0, 0), "no source file known");
                (
                    strings[f.name as usize].as_str(),
                    strings[f.system_name as usize].as_str(),
                )
            })
            .collect();
        assert_eq!(
            functions,
            [
                ("App.alloc", "App.alloc()V"),
                ("App.main", "App.main([Ljava/lang/String;)V"),
                ("[truncated]", "[truncated]"),
                ("[unknown]", "[unknown]"),
            ]
        );
        // alloc at lines 10 and 12, main, and ours.
        assert_eq!(profile.location.len(), 5);
        assert!(profile.location.iter().all(|l| l.mapping_id == MAPPING_ID));
        assert_eq!(profile.mapping.len(), 1);
        assert!(profile.mapping[0].has_functions);
        // No lifetimes: alloc types only, and alloc_space by default.
        assert_eq!(
            types(&profile),
            ["alloc_objects/count", "alloc_space/bytes"]
        );
        let default = strings[profile.default_sample_type as usize].as_str();
        assert_eq!(default, "alloc_space");
    }

    #[test]
    fn samples_without_sizes_are_counted_not_taken_for_objects() {
        let path = temp("unsized.jfr");
        // No interval among the settings: the weights name no size.
        recording(&path, None, 0);
        let Pprof { profile, contents } = profile_of(&path, 64);
        assert_eq!(types(&profile), ["samples/count", "alloc_space/bytes"]);
        assert_eq!(profile.period, 0, "no interval known");
        // Throttled: the interval moves, and names no size.
        let throttled = temp("throttled.jfr");
        recording(&throttled, Some("100/s"), 0);
        let throttled = profile_of(&throttled, 64).profile;
        assert_eq!(types(&throttled), ["samples/count", "alloc_space/bytes"]);
        assert_eq!(throttled.period, 0, "no one interval");
        assert!(!contents.objects_known());
        let lines = samples(&profile);
        assert_eq!(
            lines[0],
            "App.alloc:10;App.main:3 class=byte[],thread=main [3, 3156]"
        );
        assert!(!contents.objects_known());
    }

    #[test]
    fn stacks_cut_by_the_depth_end_in_truncated() {
        let path = temp("depth.jfr");
        recording(&path, Some(setting::THROTTLE_OFF), 0);
        let profile = profile_of(&path, 1).profile;
        let lines = samples(&profile);
        assert!(
            lines[0].starts_with("App.alloc:10;[truncated]:0 class=byte[],thread=main"),
            "{lines:?}"
        );
        // Cut when recorded and not here: one [truncated], not two.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("App.alloc:12;[truncated]:0 ")),
            "{lines:?}"
        );
    }
}
