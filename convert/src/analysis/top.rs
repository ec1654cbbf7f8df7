//! `heapsampler top`: where the bytes go. Sums the bytes allocation events
//! stand for by allocation site, class or thread: from
//! `jdk.ObjectAllocationSample` (any recording, ours or the JDK's) or, in a
//! recording without it, the JDK's TLAB allocation events (also what
//! async-profiler writes), weighted as [`crate::model::allocation`] says;
//! or, for what is still live, from `heapsampler.ObjectLifetime` events with
//! `live = true`, each by its weight over its tracking probability
//! ([`Sample::live_weight`]). Weights, `live`, `gcsSurvived`, `tracked` and
//! `trackingProbability` are read as numbers and booleans by the event
//! decoder; the key is the text of the
//! pooled site, class or thread, made once per key per chunk. Each chunk's
//! sums are made on any core and added up in chunk order ([`Grouping`] is
//! the analysis, [`Groups`] what it adds up to).

use std::collections::HashMap;

use heapsampler_core::estimate::Estimate;

use crate::Error;
use crate::model::allocation::{self, FirstRead, Source};
use crate::model::filter::Filter;
use crate::model::samples::{
    self, Kind, Liveness, OldObject, Sample, SampleVisitor, SamplesRead, Tracking, Weights,
};
use crate::model::text::{Flattener, app_frame};
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::Field;
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;

/// What to group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// The allocating frame: `pkg.Class.method(line)`.
    Site,
    /// The first frame outside the JDK (`java.`, `javax.`, `jdk.`, `sun.`,
    /// `com.sun.`): the program's own code that asked for the bytes, rather
    /// than the `Arrays.copyOf` it called. The top frame when every frame
    /// is the JDK's.
    AppSite,
    /// The allocated object's class.
    Class,
    /// The allocating thread.
    Thread,
}

impl GroupBy {
    /// The grouping as the command line names it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Site => "site",
            Self::AppSite => "app-site",
            Self::Class => "class",
            Self::Thread => "thread",
        }
    }

    /// The depth of the stack traces' text to read: the top frame is the
    /// allocation site; the program's own may be deeper.
    pub fn stack_depth(self) -> usize {
        if self == Self::AppSite { 64 } else { 1 }
    }

    /// The line of a group whose key's text is `text`: the app frame of a
    /// stack for `app-site`, [`missing`](Self::missing) for an empty one.
    pub fn line(self, text: String) -> String {
        if text.is_empty() {
            self.missing().to_owned()
        } else if self == Self::AppSite {
            app_frame(&text).to_owned()
        } else {
            text
        }
    }

    /// The line for samples without what they are grouped by.
    pub fn missing(self) -> &'static str {
        match self {
            // The JVM allocated with no Java frame on the thread's stack
            // (during its start, say), or the stack was not recorded.
            Self::Site | Self::AppSite => "(no Java frames)",
            Self::Class => "(no class)",
            // Virtual threads have no name unless the program gives one.
            Self::Thread => "(unnamed thread)",
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The site, class or thread.
    pub key: String,
    /// What its samples estimate: bytes and objects, with their intervals.
    pub estimate: Estimate,
    /// With `live`, when the recording has paths to GC roots for some of
    /// the objects counted: what holds most of them.
    pub held_by: Option<HeldBy>,
}

/// The path to a GC root most of a group's old objects share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBy {
    /// The referrers, nearest first, and the root:
    /// `java.util.HashMap$Node.value <- ... <- root Universe: Global Handle`.
    pub path: String,
    /// The group's objects held so.
    pub objects: u64,
    /// The group's objects with a path: of the objects its samples count
    /// (after `--min-gcs`), those whose old object has one. At most the
    /// group's samples.
    pub of: u64,
}

impl Entry {
    /// The estimated bytes: the sum of the samples' weights.
    pub fn bytes(&self) -> f64 {
        self.estimate.bytes()
    }

    /// The samples behind the estimate.
    pub fn samples(&self) -> u64 {
        self.estimate.samples()
    }
}

/// The question asked.
#[derive(Debug, Clone, Copy)]
pub struct Query {
    /// What to group by.
    pub by: GroupBy,
    /// Only objects still live at the end (our ObjectLifetime events).
    pub live: bool,
    /// With `live`: only objects that outlived at least this many collections.
    pub min_gcs: u64,
}

/// The answer: entries, largest first, and what they add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The entries, largest first.
    pub entries: Vec<Entry>,
    /// Every entry's samples together.
    pub total: Estimate,
    /// With `live`: the samples whose liveness the agent did not track
    /// (objects at or above its `live_max` size, by default G1's humongous
    /// objects), so neither counted as live nor as freed.
    pub untracked: Estimate,
    /// With `live`: how the liveness samples were tracked (the share
    /// tracked, which each tracked one's weight stands for).
    pub tracking: Tracking,
    /// The events the figures come from.
    pub source: Source,
    /// Events of each of the source's types read (as [`Source::types`]
    /// lists them), counted or not.
    pub events_by_type: Vec<u64>,
    /// Events of the source's types read, counted or not.
    pub events: u64,
    /// Other kinds of allocation events the recording has, and how many:
    /// not added, as they record the same allocations.
    pub left_out: Vec<(Source, u64)>,
    /// The recording's length in seconds.
    pub seconds: f64,
    /// The mean bytes between samples, when the recording names one for
    /// all of it (heapsampler's agent does; the JDK's sampler has none).
    pub interval: Option<u64>,
    /// With `live`: how many old objects of the recording have a path to
    /// a GC root (none without the agent's `roots=true`).
    pub paths_to_roots: Option<u64>,
}

impl Query {
    /// The kinds of events read, in order of preference: the figures come
    /// from the first the recording has events of.
    pub fn sources(&self) -> &'static [Source] {
        allocation::sources(self.live)
    }
}

/// Sums the samples of `recording` as `query` asks, through `pipeline`.
pub fn top(recording: RecordingFile, query: Query, pipeline: &Pipeline) -> Result<Table, Error> {
    let grouping = Grouping::new(query);
    let ran = pipeline.run(recording, &grouping, Groups::new(query), &mut |_| {})?;
    Ok(ran.merged.table())
}

/// Grouping a recording's samples as a [`Query`] asks: the analysis, whose
/// chunks' groups add up to [`Groups`]. Each kind of events of
/// [`Query::sources`] is summed on its own, in one pass, until the
/// recording's end tells which the table shows (the first it has events
/// of); once any chunk has read a sample of one kind, the samples of the
/// kinds after it are counted, not summed ([`FirstRead`]).
#[derive(Debug)]
pub struct Grouping {
    query: Query,
    /// The first of the query's sources any chunk has read a sample of so
    /// far.
    first_read: FirstRead,
}

impl Grouping {
    /// Grouping as `query` asks.
    pub fn new(query: Query) -> Self {
        Self {
            query,
            first_read: FirstRead::default(),
        }
    }
}

/// What each kind of events adds up to, kept apart from the other kinds
/// until the recording's end tells which one the table shows.
#[derive(Debug, Default)]
struct Tally {
    /// By group: the index of its line.
    groups: Vec<Estimate>,
    untracked: Estimate,
}

impl Tally {
    fn group(&mut self, group: usize) -> &mut Estimate {
        if self.groups.len() <= group {
            self.groups.resize(group + 1, Estimate::new());
        }
        &mut self.groups[group]
    }
}

/// A [`Tally`] of one chunk: the samples' weights, added up in chunk
/// order by the merge.
#[derive(Debug, Default)]
struct ChunkTally {
    /// By line of the chunk.
    groups: Vec<Weights>,
    untracked: Weights,
}

impl ChunkTally {
    fn group(&mut self, line: usize) -> &mut Weights {
        if self.groups.len() <= line {
            self.groups.resize(line + 1, Weights::default());
        }
        &mut self.groups[line]
    }
}

/// Lines (sites, classes or threads) numbered in the order they come.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pub(crate) lines: Vec<String>,
    index: HashMap<String, usize>,
}

impl Lines {
    /// The number of `line`, given one if it is new.
    pub(crate) fn number(&mut self, line: String) -> usize {
        if let Some(&at) = self.index.get(&line) {
            return at;
        }
        self.lines.push(line.clone());
        self.index.insert(line, self.lines.len() - 1);
        self.lines.len() - 1
    }
}

/// One chunk's samples grouped by the query's key: what the work on a
/// chunk hands on. A sample costs one lookup of its pool key; the key's
/// text is made, and looked up among the lines, once per key per chunk.
#[derive(Debug)]
pub struct ChunkGroups {
    /// What was read of the chunk.
    read: SamplesRead,
    /// The chunk's lines; its tallies and paths count by their number.
    lines: Lines,
    tallies: Vec<ChunkTally>,
    /// With `live`: per line, how many of its objects each path holds.
    held: HashMap<usize, HashMap<String, u64>>,
    /// Old objects with a path in the chunk, matched or not.
    recorded: u64,
}

/// The samples of a recording grouped by the query's key, chunk after
/// chunk: what [`Grouping`] merges into, and makes a [`Table`] of.
#[derive(Debug)]
pub struct Groups {
    query: Query,
    read: SamplesRead,
    lines: Lines,
    tallies: Vec<Tally>,
    /// With `live`: per group, how many of its objects each path holds.
    held: HashMap<usize, HashMap<String, u64>>,
    /// Old objects with a path in the whole recording, matched or not.
    recorded: u64,
}

/// The samples of one chunk being grouped into its [`ChunkGroups`].
///
/// With `live`, what holds the objects counted: each old object with a
/// path to a GC root is matched to the sample of the same object, so that
/// a group's paths are those of the objects its samples count, after
/// `--min-gcs` as they are.
///
/// The agent ends the recording with one `jdk.OldObjectSample` per tracked
/// object (up to its cap), then one `heapsampler.ObjectLifetime` with
/// `live = true` per object still tracked (`Writer::finish`): in one chunk,
/// the old objects first, both with the object's allocation time
/// (`allocationTime`, `startTime`), thread, stack trace and class under the
/// same pool keys. A live sample is matched as it comes, by those, to an
/// old object of its chunk read before it; old objects of earlier chunks
/// (the live set at their end) match nothing, and count nowhere.
struct ChunkGrouping<'g> {
    query: Query,
    /// The recording's [`Grouping::first_read`].
    first_read: &'g FirstRead,
    part: ChunkGroups,
    /// The line of each pool key of the chunk.
    keys: IdMap<(u64, u64), usize>,
    /// The chunk's old objects with a path not matched yet, by their
    /// allocation.
    paths: HashMap<Allocation, Vec<String>>,
}

/// One allocation as an old object and its sample both name it, in one
/// chunk: its time in ticks, and the pool keys of its thread, stack trace
/// and class (`None`: absent, or not pooled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Allocation {
    time: Option<i64>,
    thread: Option<(u64, u64)>,
    stack_trace: Option<(u64, u64)>,
    class: Option<(u64, u64)>,
}

/// The pool key a field refers to.
fn pool_key(field: &Field<'_>) -> Option<(u64, u64)> {
    match *field {
        Field::Pooled { class_id, key } => Some((class_id, key)),
        _ => None,
    }
}

/// Counts `path` `objects` times for `line` among `held`.
fn count_path(
    held: &mut HashMap<usize, HashMap<String, u64>>,
    line: usize,
    path: String,
    objects: u64,
) {
    *held.entry(line).or_default().entry(path).or_default() += objects;
}

impl ChunkGrouping<'_> {
    /// The line of a key's text.
    fn line_of(&mut self, text: String) -> usize {
        self.part.lines.number(self.query.by.line(text))
    }
}

impl SampleVisitor for ChunkGrouping<'_> {
    fn wants_sample(&self, kind: Kind) -> bool {
        self.first_read.reads(kind.source)
    }

    fn wants_old_objects(&self) -> bool {
        self.query.live
    }

    fn old_object(&mut self, text: &Flattener<'_, '_>, old: &OldObject<'_>) {
        let value = |field: &Field<'_>| field.clone().into_value();
        // Without array indexes: the values of one map share its path.
        let chain = without_indexes(&text.text(&value(&old.object)));
        // The object itself is the row's: what holds it follows.
        let holders = chain.split_once(" <- ").map_or("", |(_, rest)| rest);
        let root = text.text(&value(&old.root));
        let path = if holders.is_empty() {
            format!("root {root}")
        } else {
            format!("{holders} <- root {root}")
        };
        let class = match old.object_class {
            Value::Ref { class_id, key } => Some((class_id, key)),
            _ => None,
        };
        let allocation = Allocation {
            time: old.allocation_time,
            thread: pool_key(&old.event_thread),
            stack_trace: pool_key(&old.stack_trace),
            class,
        };
        self.paths.entry(allocation).or_default().push(path);
        self.part.recorded += 1;
    }

    fn sample(&mut self, text: &Flattener<'_, '_>, kind: Kind, sample: &Sample<'_>) {
        if self.query.live {
            match sample.liveness(self.query.min_gcs) {
                Liveness::Live => {}
                Liveness::Not => return,
                Liveness::Untracked => {
                    self.part.tallies[kind.source].untracked.push(sample);
                    return;
                }
            }
        }
        let key = match self.query.by {
            GroupBy::Site | GroupBy::AppSite => &sample.stack_trace,
            GroupBy::Class => &sample.object_class,
            GroupBy::Thread => &sample.event_thread,
        };
        let line = match *key {
            Field::Pooled { class_id, key } => match self.keys.get(&(class_id, key)) {
                Some(&line) => line,
                None => {
                    let line = self.line_of(text.text(&Value::Ref { class_id, key }));
                    self.keys.insert((class_id, key), line);
                    line
                }
            },
            ref other => self.line_of(text.text(&other.clone().into_value())),
        };
        if !self.paths.is_empty() {
            let allocation = Allocation {
                time: sample.start_time,
                thread: pool_key(&sample.event_thread),
                stack_trace: pool_key(&sample.stack_trace),
                class: pool_key(&sample.object_class),
            };
            if let Some(path) = self.paths.get_mut(&allocation).and_then(Vec::pop) {
                count_path(&mut self.part.held, line, path, 1);
            }
        }
        let weights = self.part.tallies[kind.source].group(line);
        if self.query.live {
            weights.push_live(sample);
        } else {
            weights.push(sample);
        }
    }
}

impl Analysis for Grouping {
    type Part = ChunkGroups;
    type Merged = Groups;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(ChunkGroups) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let sources = self.query.sources();
        let mut grouping = ChunkGrouping {
            query: self.query,
            first_read: &self.first_read,
            part: ChunkGroups {
                read: SamplesRead::default(),
                lines: Lines::default(),
                tallies: sources.iter().map(|_| ChunkTally::default()).collect(),
                held: HashMap::new(),
                recorded: 0,
            },
            keys: IdMap::default(),
            paths: HashMap::new(),
        };
        grouping.part.read = samples::read_chunk(
            chunk,
            context.recording_start,
            sources,
            &Filter::default(),
            self.query.by.stack_depth(),
            &mut grouping,
        )?;
        Ok(hand_on(grouping.part)?)
    }

    fn merge(&self, groups: &mut Groups, part: ChunkGroups) -> Result<(), Error> {
        groups.read.merge(&part.read);
        let lines: Vec<usize> = part
            .lines
            .lines
            .into_iter()
            .map(|line| groups.lines.number(line))
            .collect();
        for (tally, part) in groups.tallies.iter_mut().zip(part.tallies) {
            part.untracked.add_to(&mut tally.untracked);
            for (line, weights) in part.groups.iter().enumerate() {
                if !weights.is_empty() {
                    weights.add_to(tally.group(lines[line]));
                }
            }
        }
        for (line, paths) in part.held {
            for (path, objects) in paths {
                count_path(&mut groups.held, lines[line], path, objects);
            }
        }
        groups.recorded += part.recorded;
        Ok(())
    }

    fn part_bytes(&self, part: &ChunkGroups) -> usize {
        let lines: usize = part
            .lines
            .lines
            .iter()
            .map(|line| 2 * line.len() + 64)
            .sum();
        let estimates: usize = part.tallies.iter().map(|t| t.groups.len()).sum();
        lines + estimates * std::mem::size_of::<Estimate>()
    }
}

impl Groups {
    /// No samples yet, for `query`.
    pub fn new(query: Query) -> Self {
        let sources = query.sources();
        Self {
            query,
            read: SamplesRead::new(sources),
            lines: Lines::default(),
            tallies: sources.iter().map(|_| Tally::default()).collect(),
            held: HashMap::new(),
            recorded: 0,
        }
    }

    /// The table of the groups, largest first.
    pub fn table(self) -> Table {
        let Groups {
            query,
            read,
            lines,
            mut tallies,
            mut held,
            recorded,
        } = self;
        let sources = query.sources();
        let chosen = read.first_found().unwrap_or(0);
        let left_out = sources
            .iter()
            .enumerate()
            .filter(|&(at, _)| at != chosen && read.events_of(at) > 0)
            .map(|(at, &source)| (source, read.events_of(at)))
            .collect();
        let tally = tallies.swap_remove(chosen);
        let mut total = Estimate::new();
        let mut entries: Vec<Entry> = lines
            .lines
            .into_iter()
            .zip(tally.groups)
            .enumerate()
            .filter(|(_, (_, estimate))| estimate.samples() > 0)
            .map(|(group, (key, estimate))| {
                total.merge(&estimate);
                Entry {
                    key,
                    estimate,
                    held_by: held_by(&mut held, group),
                }
            })
            .collect();
        entries.sort_by(|a, b| {
            b.bytes()
                .total_cmp(&a.bytes())
                .then_with(|| a.key.cmp(&b.key))
        });
        Table {
            entries,
            total,
            untracked: tally.untracked,
            tracking: read.tracking,
            source: sources[chosen],
            events_by_type: read.events[chosen].clone(),
            events: read.events_of(chosen),
            left_out,
            seconds: read.seconds(),
            interval: read.interval(),
            paths_to_roots: query.live.then_some(recorded),
        }
    }
}

/// The path most of `group`'s matched objects share.
fn held_by(held: &mut HashMap<usize, HashMap<String, u64>>, group: usize) -> Option<HeldBy> {
    let paths = held.remove(&group)?;
    let of = paths.values().sum();
    // The most objects; of equal counts, the first by text.
    let (path, objects) = paths
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
    Some(HeldBy { path, objects, of })
}

/// A chain of referrers without its array indexes (`[12]`).
fn without_indexes(chain: &str) -> String {
    let mut out = String::with_capacity(chain.len());
    let mut rest = chain;
    while let Some(at) = rest.find('[') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_lose_their_array_indexes_and_keep_array_types() {
        assert_eq!(
            without_indexes("byte[] <- a.Node.value <- a.Node[][12] <- a.Map.table"),
            "byte[] <- a.Node.value <- a.Node[] <- a.Map.table"
        );
        assert_eq!(without_indexes("int[][][3]"), "int[][]");
        assert_eq!(without_indexes("a[x] [ ]"), "a[x] [ ]");
    }
}
