//! `heapsampler top`: where the bytes go. Sums the sample weights (the
//! allocated bytes each sample stands for) by allocation site, class or
//! thread, from `jdk.ObjectAllocationSample` (any recording, ours or the
//! JDK's) or, for what is still live, from `heapsampler.ObjectLifetime`
//! events with `live = true`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::export::Flattener;
use crate::read::chunk::Chunk;
use crate::read::file::{FileError, RecordingFile};

/// What to group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
    /// Events of the type read ([`Query::event_type`]), counted or not.
    pub events: u64,
}

impl Query {
    /// The events whose weights are summed.
    pub fn event_type(&self) -> &'static str {
        if self.live {
            "heapsampler.ObjectLifetime"
        } else {
            "jdk.ObjectAllocationSample"
        }
    }

    /// Why a recording with no events of [`event_type`](Self::event_type)
    /// has none, and what to do.
    pub fn without_events(&self) -> &'static str {
        if self.live {
            "--live reads the agent's liveness events: record with heapsampler's agent and \
             liveness on (the default; live=false turns it off), or leave out --live to rank \
             what was allocated"
        } else {
            "record with heapsampler, or with JFR and allocation sampling on (JDK 16 or later: \
             settings=default or settings=profile)"
        }
    }
}

/// Sums the weights of a recording's samples.
pub fn top(path: &Path, query: Query) -> Result<Table, FileError> {
    let event_type = query.event_type();
    let column = match query.by {
        GroupBy::Site | GroupBy::AppSite => "stackTrace",
        GroupBy::Class => "objectClass",
        GroupBy::Thread => "eventThread",
    };
    let mut file = RecordingFile::open(path)?;
    let malformed = |source| FileError::Malformed {
        path: path.to_owned(),
        source,
    };
    let mut totals: HashMap<String, (f64, u64)> = HashMap::new();
    let mut events = 0;
    let mut untracked = Entry {
        key: "(not tracked)".to_owned(),
        bytes: 0.0,
        samples: 0,
    };
    while let Some(raw) = file.next_chunk()? {
        let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(malformed)?;
        let Some(class) = chunk.metadata.class_named(event_type) else {
            continue;
        };
        let index = |name: &str| class.fields.iter().position(|f| f.name == name);
        let (Some(key_at), Some(weight_at)) = (index(column), index("weight")) else {
            continue;
        };
        let (live_at, gcs_at, tracked_at) = (index("live"), index("gcsSurvived"), index("tracked"));
        // The top frame is the allocation site; the program's own may be
        // deeper.
        let depth = if query.by == GroupBy::AppSite { 64 } else { 1 };
        let flattener = Flattener::new(&chunk, depth);
        for event in chunk.events() {
            let event = event.map_err(malformed)?;
            if event.type_id != class.id {
                continue;
            }
            events += 1;
            let row = flattener.row(&event);
            let weight: f64 = row[weight_at].parse().unwrap_or(0.0);
            if query.live {
                // Recordings from before the field was added tracked everything.
                if tracked_at.is_some_and(|i| row[i] == "false") {
                    untracked.bytes += weight;
                    untracked.samples += 1;
                    continue;
                }
                let live = live_at.is_some_and(|i| row[i] == "true");
                let gcs: u64 = gcs_at.and_then(|i| row[i].parse().ok()).unwrap_or(0);
                if !live || gcs < query.min_gcs {
                    continue;
                }
            }
            let key = if row[key_at].is_empty() {
                query.by.missing().to_owned()
            } else if query.by == GroupBy::AppSite {
                app_frame(&row[key_at]).to_owned()
            } else {
                row[key_at].clone()
            };
            let total = totals.entry(key).or_insert((0.0, 0));
            total.0 += weight;
            total.1 += 1;
        }
    }
    let sum = totals.values().map(|t| t.0).sum();
    let mut entries: Vec<Entry> = totals
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
        untracked,
        events,
    })
}

/// The packages of the JDK's own code, which `--by app-site` looks past.
const JDK_PACKAGES: [&str; 5] = ["java.", "javax.", "jdk.", "sun.", "com.sun."];

/// The first frame of a stack (frames joined with `;`, top first) outside
/// the JDK's packages, or the top frame if there is none.
pub fn app_frame(stack: &str) -> &str {
    let top = stack.split(';').next().unwrap_or(stack);
    stack
        .split(';')
        .find(|frame| !JDK_PACKAGES.iter().any(|p| frame.starts_with(p)))
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
