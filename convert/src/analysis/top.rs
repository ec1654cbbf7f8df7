//! `heapsampler top`: where the bytes go. Sums the bytes allocation events
//! stand for by allocation site, class or thread: from
//! `jdk.ObjectAllocationSample` (any recording, ours or the JDK's) or, in a
//! recording without it, the JDK's TLAB allocation events (also what
//! async-profiler writes), weighted as [`crate::model::allocation`] says; or, for
//! what is still live, from `heapsampler.ObjectLifetime` events with
//! `live = true`. Weights, `live`, `gcsSurvived` and `tracked` are read as
//! numbers and booleans by the event decoder; the key is the text of the
//! pooled site, class or thread, made once per key per chunk.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use heapsampler_core::estimate::{Estimate, Interval};

use crate::model::allocation::{ALLOCATIONS, Source};
use crate::model::filter::Filter;
use crate::model::samples::{Kind, Liveness, OldObject, Sample, SampleVisitor, read_samples};
use crate::model::text::Flattener;
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::Field;
use jfr_reader::file::{FileError, RecordingFile};
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
    /// With `live`: how many old objects of the recording have a path to
    /// a GC root (none without the agent's `roots=true`).
    pub paths_to_roots: Option<u64>,
}

impl Query {
    /// The kinds of events read, in order of preference: the figures come
    /// from the first the recording has events of.
    pub fn sources(&self) -> &'static [Source] {
        if self.live {
            &[Source::ObjectLifetimes]
        } else {
            &ALLOCATIONS
        }
    }

    /// The events a recording without any of [`sources`](Self::sources)
    /// lacks: `jdk.ObjectAllocationSample events, nor ...`.
    pub fn missing(&self) -> String {
        let kinds: Vec<String> = self
            .sources()
            .iter()
            .map(|source| format!("{} events", source.names()))
            .collect();
        kinds.join(", nor ")
    }

    /// Why a recording with none of the events of
    /// [`sources`](Self::sources) has none, and what to do.
    pub fn without_events(&self) -> &'static str {
        if self.live {
            "--live reads the agent's liveness events: record with heapsampler's agent and \
             liveness on (the default; live=false turns it off), or leave out --live to rank \
             what was allocated"
        } else {
            "record with heapsampler, or with JFR and allocation sampling on (JDK 16 or later: \
             settings=default or settings=profile), or with JFR's TLAB allocation events on"
        }
    }
}

/// Sums the samples of the recording at `path`.
pub fn top(path: &Path, query: Query) -> Result<Table, FileError> {
    top_of(RecordingFile::open(path)?, query)
}

/// What each kind of events adds up to, kept apart from the other kinds
/// until the recording's end tells which one the table shows.
#[derive(Default)]
struct Tally {
    /// By group: the index of its line in [`Grouping::lines`].
    groups: Vec<Estimate>,
    untracked: Estimate,
}

/// Groups samples into [`Tally`]s by the query's key. A sample costs one
/// lookup of its pool key; the key's text is made, and looked up among the
/// lines, once per key per chunk.
struct Grouping {
    query: Query,
    tallies: Vec<Tally>,
    /// Each group's line (site, class or thread), and its index there.
    lines: Vec<String>,
    line_index: HashMap<String, usize>,
    /// The group of each pool key of this chunk.
    keys: IdMap<(u64, u64), usize>,
    /// With `live`: the paths to GC roots of the objects counted.
    held: Held,
}

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
#[derive(Default)]
struct Held {
    /// This chunk's old objects with a path not matched yet, by their
    /// allocation.
    paths: HashMap<Allocation, Vec<String>>,
    /// Per group, how many of its objects each path holds.
    by_group: HashMap<usize, HashMap<String, u64>>,
    /// Old objects with a path in the whole recording, matched or not.
    recorded: u64,
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

impl Held {
    /// Counts the path of the old object of `allocation`, if this chunk
    /// has one, for `group`.
    fn sample(&mut self, allocation: Allocation, group: usize) {
        let Some(path) = self.paths.get_mut(&allocation).and_then(Vec::pop) else {
            return;
        };
        *self
            .by_group
            .entry(group)
            .or_default()
            .entry(path)
            .or_default() += 1;
    }

    /// The path most of `group`'s matched objects share.
    fn of(&mut self, group: usize) -> Option<HeldBy> {
        let paths = self.by_group.remove(&group)?;
        let of = paths.values().sum();
        // The most objects; of equal counts, the first by text.
        let (path, objects) = paths
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
        Some(HeldBy { path, objects, of })
    }
}

impl Grouping {
    /// The group of a key's text.
    fn group_of(&mut self, text: String) -> usize {
        let line = if text.is_empty() {
            self.query.by.missing().to_owned()
        } else if self.query.by == GroupBy::AppSite {
            app_frame(&text).to_owned()
        } else {
            text
        };
        if let Some(&at) = self.line_index.get(&line) {
            return at;
        }
        self.lines.push(line.clone());
        self.line_index.insert(line, self.lines.len() - 1);
        self.lines.len() - 1
    }
}

impl SampleVisitor for Grouping {
    fn begin_chunk(&mut self, _chunk: &Chunk<'_>) {
        self.keys.clear();
        self.held.paths.clear();
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
        self.held.paths.entry(allocation).or_default().push(path);
        self.held.recorded += 1;
    }

    fn sample(&mut self, text: &Flattener<'_, '_>, kind: Kind, sample: &Sample<'_>) {
        if self.query.live {
            match sample.liveness(self.query.min_gcs) {
                Liveness::Live => {}
                Liveness::Not => return,
                Liveness::Untracked => {
                    let tally = &mut self.tallies[kind.source];
                    tally.untracked.add_weighted(sample.weight, sample.size);
                    return;
                }
            }
        }
        let key = match self.query.by {
            GroupBy::Site | GroupBy::AppSite => &sample.stack_trace,
            GroupBy::Class => &sample.object_class,
            GroupBy::Thread => &sample.event_thread,
        };
        let group = match *key {
            Field::Pooled { class_id, key } => match self.keys.get(&(class_id, key)) {
                Some(&group) => group,
                None => {
                    let group = self.group_of(text.text(&Value::Ref { class_id, key }));
                    self.keys.insert((class_id, key), group);
                    group
                }
            },
            ref other => self.group_of(text.text(&other.clone().into_value())),
        };
        if !self.held.paths.is_empty() {
            let allocation = Allocation {
                time: sample.start_time,
                thread: pool_key(&sample.event_thread),
                stack_trace: pool_key(&sample.stack_trace),
                class: pool_key(&sample.object_class),
            };
            self.held.sample(allocation, group);
        }
        let groups = &mut self.tallies[kind.source].groups;
        if groups.len() <= group {
            groups.resize(group + 1, Estimate::new());
        }
        groups[group].add_weighted(sample.weight, sample.size);
    }
}

/// Sums the samples of the recording `file`. Every kind of events of
/// [`Query::sources`] is summed on its own in one pass; the table is the
/// first kind the recording has events of.
pub fn top_of(mut file: RecordingFile, query: Query) -> Result<Table, FileError> {
    let sources = query.sources();
    let mut grouping = Grouping {
        query,
        tallies: sources.iter().map(|_| Tally::default()).collect(),
        lines: Vec::new(),
        line_index: HashMap::new(),
        keys: IdMap::default(),
        held: Held::default(),
    };
    // The top frame is the allocation site; the program's own may be
    // deeper.
    let depth = if query.by == GroupBy::AppSite { 64 } else { 1 };
    let read = read_samples(&mut file, sources, &Filter::default(), depth, &mut grouping)?;
    let chosen = read.first_found().unwrap_or(0);
    let left_out = sources
        .iter()
        .enumerate()
        .filter(|&(at, _)| at != chosen && read.events_of(at) > 0)
        .map(|(at, &source)| (source, read.events_of(at)))
        .collect();
    let tally = grouping.tallies.swap_remove(chosen);
    let mut total = Estimate::new();
    let mut held = grouping.held;
    let mut entries: Vec<Entry> = grouping
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
                held_by: held.of(group),
            }
        })
        .collect();
    entries.sort_by(|a, b| {
        b.bytes()
            .total_cmp(&a.bytes())
            .then_with(|| a.key.cmp(&b.key))
    });
    Ok(Table {
        entries,
        total,
        untracked: tally.untracked,
        source: sources[chosen],
        events_by_type: read.events[chosen].clone(),
        events: read.events_of(chosen),
        left_out,
        seconds: read.seconds(),
        paths_to_roots: query.live.then_some(held.recorded),
    })
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

/// The packages of the JDK's own code, which `--by app-site` looks past.
const JDK_PACKAGES: [&str; 5] = ["java.", "javax.", "jdk.", "sun.", "com.sun."];

/// Whether `frame` (`pkg.Class.method`, with or without a line) is the
/// JDK's own code: in one of its packages.
pub fn is_jdk_frame(frame: &str) -> bool {
    JDK_PACKAGES.iter().any(|p| frame.starts_with(p))
}

/// The first frame of a stack (frames joined with `;`, top first) outside
/// the JDK's packages, or the top frame if there is none.
pub fn app_frame(stack: &str) -> &str {
    let top = stack.split(';').next().unwrap_or(stack);
    stack
        .split(';')
        .find(|frame| !is_jdk_frame(frame))
        .unwrap_or(top)
}

/// Bytes for people: `1.5 GB`, `340.2 MB`, `12.0 kB`, `512 B`.
pub fn human_bytes(bytes: f64) -> String {
    human(bytes, ["B", "kB", "MB", "GB", "TB"])
}

/// Counts for people: `12`, `12.3 k`, `4.5 M`, `1.2 G`.
pub fn human_count(count: f64) -> String {
    human(count, ["", "k", "M", "G", "T"])
}

/// `value` in thousands of the unit it reaches: a whole number below 1000,
/// one decimal from there on, the unit after a space (none for `""`).
fn human(value: f64, units: [&str; 5]) -> String {
    let mut value = value;
    let mut at = 0;
    while value >= 1000.0 && at + 1 < units.len() {
        value /= 1000.0;
        at += 1;
    }
    // abs: an empty sum of floats is -0.0.
    let number = if at == 0 {
        format!("{:.0}", value.abs())
    } else {
        format!("{value:.1}")
    };
    match units[at] {
        "" => number,
        unit => format!("{number} {unit}"),
    }
}

/// An interval for people, with `human` writing its bounds: `5.2-7.1 MB`,
/// or `900.0 kB-1.2 MB` where the units differ.
pub fn human_interval(interval: &Interval, human: fn(f64) -> String) -> String {
    let (low, high) = (human(interval.low), human(interval.high));
    match (low.split_once(' '), high.split_once(' ')) {
        // One unit: written once, after the upper bound.
        (Some((low_number, unit)), Some((_, high_unit))) if unit == high_unit => {
            format!("{low_number}-{high}")
        }
        _ => format!("{low}-{high}"),
    }
}

/// The mark of a row whose interval is wider than its estimate.
pub const WIDE_MARK: char = '~';

/// What [`WIDE_MARK`] means, for the line under a table that has one.
pub const WIDE_LEGEND: &str = "~ the 95% interval is wider than the estimate: too few samples to say more \
                               than \"some\"";

impl Table {
    /// The table as text: rank, estimated bytes and objects with their 95%
    /// intervals, share, samples, key; at most `limit` lines. Cells are
    /// separated by at least two spaces and hold no two in a row.
    pub fn render(&self, limit: usize) -> String {
        let mut out = String::new();
        let objects_known = self.total.objects_known();
        let _ = writeln!(
            out,
            "{:>4}   {:>9}  {:>17}  {:>6}  {:>9}  {:>15}  {:>7}  where",
            "#", "bytes", "95% interval", "share", "objects", "95% interval", "samples"
        );
        let total = self.total.bytes();
        let mut marked = false;
        for (rank, entry) in self.entries.iter().take(limit).enumerate() {
            let e = &entry.estimate;
            let bytes = e.bytes_interval();
            let objects = e.objects_interval();
            let wide = bytes.is_wider_than_estimate()
                || (objects_known && objects.is_wider_than_estimate());
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
        let _ = writeln!(out, "total: {}", describe(&self.total));
        if marked {
            let _ = writeln!(out, "{WIDE_LEGEND}");
        }
        if !objects_known && self.total.samples() > 0 {
            let _ = writeln!(
                out,
                "objects: not estimated, as these samples do not carry their object's size \
                 (the JDK's sampler, a throttled one, or TLAB events); the bytes' intervals \
                 count each sample as a small object, so are wider than need be"
            );
        }
        let read: Vec<String> = self
            .source
            .types()
            .iter()
            .zip(&self.events_by_type)
            .map(|(t, events)| format!("{events} {} events by {}", t.event_type, t.weight))
            .collect();
        let _ = writeln!(out, "from {}", read.join(" and "));
        for (source, events) in &self.left_out {
            let _ = writeln!(
                out,
                "not added: {events} {} events, which record the same allocations",
                source.names()
            );
        }
        if self.paths_to_roots == Some(0) && self.total.samples() > 0 {
            let _ = writeln!(
                out,
                "no paths to GC roots recorded: record with --roots to see what holds these objects"
            );
        }
        if self.untracked.samples() > 0 {
            let _ = writeln!(
                out,
                "not tracked for liveness: {} of objects at or above the agent's live_max size \
                 (by default G1's humongous objects)",
                describe(&self.untracked)
            );
        }
        out
    }
}

/// An estimate in a sentence: `10.5 MB estimated from 9 samples (95%
/// interval 8.1 MB-13.9 MB), 1.2 k objects (1.0 k-1.5 k)`.
pub fn describe(estimate: &Estimate) -> String {
    let mut text = format!(
        "{} estimated from {} samples (95% interval {})",
        human_bytes(estimate.bytes()),
        estimate.samples(),
        human_interval(&estimate.bytes_interval(), human_bytes)
    );
    if estimate.objects_known() && estimate.samples() > 0 {
        let _ = write!(
            text,
            ", {} objects ({})",
            human_count(estimate.objects()),
            human_interval(&estimate.objects_interval(), human_count)
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_frame_is_the_first_outside_the_jdk() {
        let stack = "java.util.Arrays.copyOf(3537);jdk.internal.misc.X.y(1);App.grow(12);java.lang.Thread.run(840)";
        assert_eq!(app_frame(stack), "App.grow(12)");
        assert_eq!(app_frame("App.main(3)"), "App.main(3)");
        // Only the JDK's frames: the top one.
        assert_eq!(
            app_frame("java.lang.String.<init>(5);java.lang.Thread.run(840)"),
            "java.lang.String.<init>(5)"
        );
        // A package that only starts like the JDK's is the program's.
        assert_eq!(app_frame("javafx.Foo.bar(1)"), "javafx.Foo.bar(1)");
        assert_eq!(app_frame("java.a(1);javaish.B.c(2)"), "javaish.B.c(2)");
    }

    #[test]
    fn chains_lose_their_array_indexes_and_keep_array_types() {
        assert_eq!(
            without_indexes("byte[] <- a.Node.value <- a.Node[][12] <- a.Map.table"),
            "byte[] <- a.Node.value <- a.Node[] <- a.Map.table"
        );
        assert_eq!(without_indexes("int[][][3]"), "int[][]");
        assert_eq!(without_indexes("a[x] [ ]"), "a[x] [ ]");
    }

    #[test]
    fn bytes_read_like_jfr_prints_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes([].iter().sum::<f64>()), "0 B");
        assert_eq!(human_bytes(12_000.0), "12.0 kB");
        assert_eq!(human_bytes(1_048_576.0), "1.0 MB");
        assert_eq!(human_bytes(3.4e9), "3.4 GB");
        assert_eq!(human_bytes(2.5e15), "2500.0 TB");
    }

    #[test]
    fn counts_read_as_bytes_do_without_the_b() {
        assert_eq!(human_count(12.0), "12");
        assert_eq!(human_count(-0.0), "0");
        assert_eq!(human_count(12_345.0), "12.3 k");
        assert_eq!(human_count(4.5e6), "4.5 M");
    }
}
