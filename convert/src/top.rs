//! `heapsampler top`: where the bytes go. Sums the bytes allocation events
//! stand for by allocation site, class or thread: from
//! `jdk.ObjectAllocationSample` (any recording, ours or the JDK's) or, in a
//! recording without it, the JDK's TLAB allocation events (also what
//! async-profiler writes), weighted as [`crate::allocation`] says; or, for
//! what is still live, from `heapsampler.ObjectLifetime` events with
//! `live = true`. Weights, `live`, `gcsSurvived` and `tracked` are read as
//! numbers and booleans by the event decoder; the key is the text of the
//! pooled site, class or thread, made once per key per chunk.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use jfr_writer::format::names::field;

use crate::allocation::{ALLOCATIONS, Source};
use crate::export::Flattener;
use crate::read::chunk::{Chunk, MetadataCache};
use crate::read::event::{EventPlan, Field, RawEvent, TypeMap};
use crate::read::file::{FileError, RecordingFile};
use crate::read::value::Value;
use crate::read::{IdMap, ReadError};

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
    /// The line for samples without what they are grouped by.
    fn missing(self) -> &'static str {
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
    /// Sum of the weights: the estimated bytes.
    pub bytes: f64,
    /// Samples behind the estimate.
    pub samples: u64,
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
    /// The sum of every entry's bytes.
    pub total: f64,
    /// With `live`: the samples whose liveness the agent did not track
    /// (objects at or above its `live_max` size, by default G1's humongous
    /// objects), so neither counted as live nor as freed.
    pub untracked: Entry,
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

/// Sums the weights of the samples of the recording at `path`.
pub fn top(path: &Path, query: Query) -> Result<Table, FileError> {
    top_of(RecordingFile::open(path)?, query)
}

/// Where an event type keeps what [`top_of`] reads: indexes into its fields.
struct Columns {
    key: usize,
    weight: usize,
    live: Option<usize>,
    gcs_survived: Option<usize>,
    tracked: Option<usize>,
}

/// One sample, as its event's fields say.
struct Sample<'a> {
    key: Field<'a>,
    weight: f64,
    live: bool,
    gcs_survived: u64,
    tracked: bool,
}

/// What one kind of events adds up to, kept apart from the other kinds
/// until the recording's end tells which one the table shows.
struct Tally {
    totals: HashMap<String, (f64, u64)>,
    untracked: Entry,
    /// Events read per type of the source, counted or not.
    events: Vec<u64>,
}

/// How [`top_of`] reads the events of one type in a chunk.
struct TopType<'c> {
    plan: EventPlan<'c>,
    /// For a type of one of the query's sources: which (its index in
    /// [`Query::sources`] and in that source's types), and its columns.
    /// Events of other types are read (so that a malformed one fails as in
    /// every output) but not counted.
    counted: Option<(usize, usize, Columns)>,
}

/// Sums the weights of the samples of the recording `file`. Every kind of
/// events of [`Query::sources`] is summed on its own in one pass; the
/// table is the first kind the recording has events of.
pub fn top_of(mut file: RecordingFile, query: Query) -> Result<Table, FileError> {
    let sources = query.sources();
    let key_field = match query.by {
        GroupBy::Site | GroupBy::AppSite => field::STACK_TRACE,
        GroupBy::Class => field::OBJECT_CLASS,
        GroupBy::Thread => field::EVENT_THREAD,
    };
    let path = file.path().to_owned();
    let malformed = |source| FileError::Malformed {
        path: path.clone(),
        source,
    };
    let metadata = MetadataCache::default();
    let mut tallies: Vec<Tally> = sources
        .iter()
        .map(|source| Tally {
            totals: HashMap::new(),
            untracked: Entry {
                key: "(not tracked)".to_owned(),
                bytes: 0.0,
                samples: 0,
            },
            events: vec![0; source.types().len()],
        })
        .collect();
    // The columns of an event type that is one of the sources' types.
    let counted = |plan: &EventPlan<'_>| {
        let class = plan.class();
        let (source_at, type_at) = sources
            .iter()
            .enumerate()
            .find_map(|(at, source)| Some((at, source.position(&class.name)?)))?;
        let weighted = sources[source_at].types()[type_at];
        let index = |name: &str| plan.field_index(name);
        let columns = Columns {
            key: index(key_field)?,
            weight: index(weighted.weight)?,
            live: index(field::LIVE),
            gcs_survived: index(field::GCS_SURVIVED),
            tracked: index(field::TRACKED),
        };
        Some((source_at, type_at, columns))
    };
    while let Some(raw) = file.next_chunk()? {
        let chunk = Chunk::read_with(&raw.bytes, raw.offset, Some(&metadata)).map_err(malformed)?;
        // The top frame is the allocation site; the program's own may be
        // deeper.
        let depth = if query.by == GroupBy::AppSite { 64 } else { 1 };
        let flattener = Flattener::new(&chunk, depth);
        // Each pooled key's line, made once per chunk.
        let mut keys: IdMap<(u64, u64), String> = IdMap::default();
        let key_of = |text: String| {
            if text.is_empty() {
                query.by.missing().to_owned()
            } else if query.by == GroupBy::AppSite {
                app_frame(&text).to_owned()
            } else {
                text
            }
        };
        let mut types: TypeMap<Option<TopType<'_>>> = TypeMap::default();
        for raw in chunk.raw_events() {
            let mut raw = raw.map_err(malformed)?;
            let Some(top_type) = types.get_or_insert_with(raw.type_id, || {
                let plan = chunk.plan(raw.type_id)?;
                Some(TopType {
                    counted: counted(&plan),
                    plan,
                })
            }) else {
                continue; // undeclared: skipped, as the JDK does
            };
            let Some((source_at, type_at, columns)) = &top_type.counted else {
                top_type.plan.skip(&mut raw).map_err(malformed)?;
                continue;
            };
            let sample = read_sample(&top_type.plan, &mut raw, columns).map_err(malformed)?;
            let tally = &mut tallies[*source_at];
            tally.events[*type_at] += 1;
            if query.live {
                // A recording without the field tracked every object.
                if !sample.tracked {
                    tally.untracked.bytes += sample.weight;
                    tally.untracked.samples += 1;
                    continue;
                }
                if !sample.live || sample.gcs_survived < query.min_gcs {
                    continue;
                }
            }
            let inline;
            let key = match sample.key {
                Field::Pooled { class_id, key } => keys
                    .entry((class_id, key))
                    .or_insert_with(|| key_of(flattener.text(&Value::Ref { class_id, key }))),
                other => {
                    inline = key_of(flattener.text(&other.into_value()));
                    &inline
                }
            };
            let total = match tally.totals.get_mut(key.as_str()) {
                Some(total) => total,
                None => tally.totals.entry(key.clone()).or_insert((0.0, 0)),
            };
            total.0 += sample.weight;
            total.1 += 1;
        }
    }
    let read = |tally: &Tally| tally.events.iter().sum::<u64>();
    let chosen = tallies.iter().position(|t| read(t) > 0).unwrap_or(0);
    let left_out = sources
        .iter()
        .zip(&tallies)
        .enumerate()
        .filter(|&(at, (_, tally))| at != chosen && read(tally) > 0)
        .map(|(_, (&source, tally))| (source, read(tally)))
        .collect();
    let tally = tallies.swap_remove(chosen);
    let events = read(&tally);
    let sum = tally.totals.values().map(|t| t.0).sum();
    let mut entries: Vec<Entry> = tally
        .totals
        .into_iter()
        .map(|(key, (bytes, samples))| Entry {
            key,
            bytes,
            samples,
        })
        .collect();
    entries.sort_by(|a, b| b.bytes.total_cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
    Ok(Table {
        entries,
        total: sum,
        untracked: tally.untracked,
        source: sources[chosen],
        events_by_type: tally.events,
        events,
        left_out,
    })
}

/// Reads one sample's fields: the key as it is (a pool reference, mostly),
/// the weight as a number (an integer or a floating-point field; 0 for
/// anything else), `live` and `tracked` as booleans (absent: not live, and
/// tracked), and `gcsSurvived` as a count (absent or negative: 0).
fn read_sample<'a>(
    plan: &EventPlan<'_>,
    raw: &mut RawEvent<'a>,
    columns: &Columns,
) -> Result<Sample<'a>, ReadError> {
    let mut sample = Sample {
        key: Field::Null,
        weight: 0.0,
        live: false,
        gcs_survived: 0,
        tracked: true,
    };
    plan.read(raw, &mut |index: usize, field: Field<'a>| {
        if index == columns.weight {
            sample.weight = match &field {
                Field::Long(v) => *v as f64,
                Field::Int(v) => (*v).into(),
                Field::Short(v) => (*v).into(),
                Field::Byte(v) => (*v).into(),
                Field::Value(Value::Float(v)) => (*v).into(),
                Field::Value(Value::Double(v)) => *v,
                _ => 0.0,
            };
        }
        if Some(index) == columns.live {
            sample.live = field == Field::Boolean(true);
        }
        if Some(index) == columns.tracked {
            sample.tracked = field != Field::Boolean(false);
        }
        if Some(index) == columns.gcs_survived {
            sample.gcs_survived = match field {
                Field::Long(v) => u64::try_from(v).unwrap_or(0),
                Field::Int(v) => u64::try_from(v).unwrap_or(0),
                Field::Short(v) => u64::try_from(v).unwrap_or(0),
                Field::Byte(v) => u64::try_from(v).unwrap_or(0),
                _ => 0,
            };
        }
        if index == columns.key {
            sample.key = field;
        }
    })?;
    Ok(sample)
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
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000.0 {
        // abs: an empty sum of floats is -0.0.
        return format!("{:.0} B", bytes.abs());
    }
    let mut value = bytes;
    let mut unit = "B";
    for next in UNITS {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = next;
    }
    format!("{value:.1} {unit}")
}

impl Table {
    /// The table as text: rank, estimated bytes, share, samples, key; at
    /// most `limit` lines.
    pub fn render(&self, limit: usize) -> String {
        let mut out = render(&self.entries, self.total, limit);
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
        if self.untracked.samples > 0 {
            let _ = writeln!(
                out,
                "not tracked for liveness: {} estimated from {} samples of objects at or above \
                 the agent's live_max size (by default G1's humongous objects)",
                human_bytes(self.untracked.bytes),
                self.untracked.samples
            );
        }
        out
    }
}

fn render(entries: &[Entry], total: f64, limit: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>4} {:>10} {:>7} {:>8}  where",
        "#", "bytes", "share", "samples"
    );
    for (rank, entry) in entries.iter().take(limit).enumerate() {
        let share = if total > 0.0 {
            100.0 * entry.bytes / total
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "{:>4} {:>10} {:>6.1}% {:>8}  {}",
            rank + 1,
            human_bytes(entry.bytes),
            share,
            entry.samples,
            entry.key
        );
    }
    let samples: u64 = entries.iter().map(|e| e.samples).sum();
    let _ = writeln!(
        out,
        "total: {} estimated from {samples} samples",
        human_bytes(total)
    );
    out
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
    fn bytes_read_like_jfr_prints_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes([].iter().sum::<f64>()), "0 B");
        assert_eq!(human_bytes(12_000.0), "12.0 kB");
        assert_eq!(human_bytes(1_048_576.0), "1.0 MB");
        assert_eq!(human_bytes(3.4e9), "3.4 GB");
    }
}
