//! The agent's options: `-agentpath:libheapsampler.so=file=alloc.jfr,interval=512k,...`.
//!
//! Every option is checked before the agent does anything, and a bad one
//! gives one line naming the option and what it accepts: the JVM then stops
//! at start (or, at attach, the attach fails and the JVM runs on).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest interval JVMTI takes: `SetHeapSamplingInterval` takes a `jint`.
pub const MAX_INTERVAL: u64 = i32::MAX as u64;
/// The deepest stack the agent records (as JFR's own `stackdepth` limit).
pub const MAX_DEPTH: usize = 2048;

/// How much the agent says on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Errors only.
    Quiet,
    /// Where the recording goes, and a summary at the end.
    Info,
    /// Everything, for finding a problem.
    Debug,
}

/// What the agent does with each sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Record it: the normal mode.
    Record,
    /// Diagnostic: take the stack and discard it, writing no samples. What
    /// remains is the cost no agent can remove (the JVM's sampling plus
    /// `GetStackTrace`), the floor the overhead benchmark compares against.
    Floor,
    /// Diagnostic: the callback does all its work and pushes the record;
    /// the writer takes it from the ring and drops it unwritten, releasing
    /// its weak reference. What handing samples to the writer costs, apart
    /// from what writing them costs.
    Discard,
}

/// Which sampled objects are tracked for liveness, by size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveMax {
    /// Objects smaller than G1's humongous threshold (half a region) when the
    /// JVM runs G1, every object otherwise. A weak reference to a humongous
    /// object stops G1 from reclaiming it at the next young collection.
    Auto,
    /// Objects smaller than this many bytes.
    Below(u64),
    /// Every object, whatever it costs the heap.
    Unlimited,
}

/// How many of the samples liveness covers are tracked
/// ([`crate::tracking`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LiveRate {
    /// About [`crate::tracking::AUTO_TRACKED_PER_SECOND`] a second on
    /// generational ZGC, whose young collections keep what a weak handle
    /// points to until the next major collection; every sample on the
    /// other collectors.
    Auto,
    /// Every sample, on every collector.
    All,
    /// About this many a second, on every collector.
    PerSecond(f64),
}

/// What the agent does beyond writing its event when its watch raises a
/// leak suspect or sees a new heap peak (`on_leak=`, `on_peak=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchAction {
    /// The event, and one line on stderr (at `log=info` or more).
    Log,
    /// That, and a snapshot of the recording ([`Options::auto_dump`]), at
    /// most once per [`Options::auto_dump_every`].
    Dump,
}

/// The parsed options.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Where the recording goes (`.jfr`, or `.jfr.zst` compressed).
    pub file: PathBuf,
    /// The mean sampling interval in bytes; 0 samples every allocation.
    pub interval: u64,
    /// The most stack frames kept per sample.
    pub depth: usize,
    /// Whether to track which sampled objects are still live.
    pub live: bool,
    /// Which objects liveness tracking covers, by size; larger ones get an
    /// `ObjectLifetime` with `tracked = false` at once.
    pub live_max: LiveMax,
    /// How many of the samples liveness covers are tracked (`live_rate=`):
    /// a share, drawn sample by sample, or all.
    pub live_rate: LiveRate,
    /// Record samples, or only take their stacks (diagnostic).
    pub mode: Mode,
    /// How often the recording is flushed to disk.
    pub flush: Duration,
    /// At most this many samples per second, by raising the interval.
    pub rate: Option<f64>,
    /// Only threads whose Java name matches this glob are sampled.
    pub threads: Option<glob::Pattern>,
    /// How much to say on stderr.
    pub log: LogLevel,
    /// The ring buffer between allocating threads and the writer, in bytes.
    pub ring: usize,
    /// At attach: stop the running recording instead of starting one.
    pub stop: bool,
    /// At attach: write a snapshot of the running recording to this file
    /// (absolute), the recording going on untouched.
    pub dump: Option<PathBuf>,
    /// Keep only the most recent chunks within this many bytes (JFR's
    /// `maxsize`); the chunk being written is always kept.
    pub max_size: Option<u64>,
    /// Keep only the chunks that ended within this age (JFR's `maxage`).
    pub max_age: Option<Duration>,
    /// Keep the frames of hidden classes (lambda proxies, lambda forms),
    /// marked hidden; by default they are left out, as in the JDK's own
    /// recordings.
    pub hidden_frames: bool,
    /// The most `jdk.OldObjectSample` events a chunk's end (and the
    /// recording's) writes for the sampled objects live then, largest
    /// weight first; the agent renames an earlier chunk end's once a later
    /// one's are written.
    pub old_objects: usize,
    /// Paths to GC roots for the sampled objects still live at the end, and
    /// for a leak suspect's (`roots=`, `roots_depth=`, `roots_time=`).
    pub roots: Roots,
    /// A chunk ends at the first flush after it grew past this many bytes.
    pub chunk_size: u64,
    /// A chunk ends at the first flush after it is this old. At a chunk's
    /// end the live objects are written (`jdk.OldObjectSample`) and what
    /// recent chunks did not use is dropped from memory.
    pub chunk_age: Duration,
    /// The recording stops by itself this long after it starts, as a
    /// `stop` would stop it (`duration=`); `None` records until stopped.
    pub duration: Option<Duration>,
    /// Whether a garbage collection is forced right before the live
    /// objects are written (`collect=`), so that "live" means reachable:
    /// at the recording's end, or, given with `stop` or `dump=`, at that
    /// stop or in that snapshot. `None`: each case's default
    /// ([`Options::collects_at`]).
    pub collect: Option<bool>,
    /// Write the process's environment variables at each chunk's start
    /// (`jdk.InitialEnvironmentVariable`), as the JDK does (`environment=`).
    /// They may hold secrets: Mission Control's PasswordsInEnvironment
    /// rule reads them, and so does anyone the file is given to.
    pub environment: bool,
    /// Whether the agent watches each allocation site's live bytes while
    /// the program runs and raises leak suspects (`watch=`): with `live`
    /// only, for it follows the tracked samples.
    pub watch: bool,
    /// What a leak suspect makes the agent do beyond its
    /// `heapsampler.LeakSuspect` event (`on_leak=`).
    pub on_leak: WatchAction,
    /// At a new heap peak past [`Options::peak_share`] of the heap's
    /// maximum, what the agent does beyond its `heapsampler.HeapPeak` event
    /// (`on_peak=`); `None`: it does not watch the heap's peaks.
    pub on_peak: Option<WatchAction>,
    /// The share of the heap's maximum a peak must pass (`peak_share=`),
    /// from 0 to 1.
    pub peak_share: f64,
    /// Where the snapshots the watch takes go (`auto_dump=`): `%e` in it
    /// is `leak` or `peak`, `%n` the snapshot's number; `None`: beside the
    /// recording ([`Options::auto_dump_path`]).
    pub auto_dump: Option<PathBuf>,
    /// The least time between two snapshots the watch takes
    /// (`auto_dump_every=`).
    pub auto_dump_every: Duration,
    /// Take `file` only if no file has its name; if one has (another JVM of
    /// the same command took it), record to [`with_process_id`]'s name
    /// instead (`exclusive=`; `heapsampler record` sets it, so that each
    /// JVM its command starts writes a file of its own).
    pub exclusive: bool,
}

/// `path` with `-ID` before its extension (`.jfr` or `.jfr.zst`), or at the
/// end of a name without one: `javac.jfr` -> `javac-4242.jfr`. With `%p`
/// for `id`, the pattern `file=` takes ([`PID`]).
pub fn with_process_id(path: &Path, id: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let extension = [".jfr.zst", ".jfr"]
        .into_iter()
        .find(|extension| name.len() > extension.len() && name.ends_with(extension))
        .unwrap_or("");
    let stem = &name[..name.len() - extension.len()];
    path.with_file_name(format!("{stem}-{id}{extension}"))
}

/// What writes a recording's live objects, for [`Options::collects_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveSetAt {
    /// The JVM's exit.
    Exit,
    /// A `stop`, or the end of `duration=`, in a JVM that runs on.
    Stop,
    /// A snapshot (`dump=`) of a recording that goes on.
    Snapshot,
}

/// Whether and how far the heap is walked at the end for the paths from GC
/// roots to the sampled objects still live (`roots=true`, as JFR's
/// `path-to-gc-roots=true`). Off by default: the walk pauses the JVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roots {
    /// Whether to walk.
    pub enabled: bool,
    /// The most references followed from a root (`roots_depth=`): objects
    /// farther than this have no path.
    pub depth: usize,
    /// The longest the walk may pause the JVM (`roots_time=`): objects not
    /// reached by then have no path.
    pub time: Duration,
}

impl Default for Roots {
    fn default() -> Self {
        Self {
            enabled: false,
            depth: 64,
            time: Duration::from_secs(10),
        }
    }
}

/// The deepest `roots_depth=`.
pub const MAX_ROOTS_DEPTH: usize = 4096;

/// What `file=` replaces with the process id, as JFR's `filename=` does: a
/// name for each JVM of a command that starts several.
pub const PID: &str = "%p";

impl Options {
    /// The defaults, recording to `heapsampler-<pid>.jfr` in the working directory.
    pub fn defaults(pid: u32) -> Self {
        Self {
            file: PathBuf::from(format!("heapsampler-{pid}.jfr")),
            interval: 512 * 1024,
            depth: 64,
            live: true,
            live_max: LiveMax::Auto,
            live_rate: LiveRate::Auto,
            mode: Mode::Record,
            flush: Duration::from_secs(1),
            rate: None,
            threads: None,
            log: LogLevel::Info,
            ring: 4 << 20,
            stop: false,
            dump: None,
            max_size: None,
            max_age: None,
            hidden_frames: false,
            old_objects: DEFAULT_OLD_OBJECTS,
            roots: Roots::default(),
            chunk_size: 12 << 20,
            chunk_age: Duration::from_secs(3600),
            duration: None,
            collect: None,
            environment: true,
            exclusive: false,
            watch: true,
            on_leak: WatchAction::Log,
            on_peak: None,
            peak_share: 0.9,
            auto_dump: None,
            auto_dump_every: Duration::from_secs(600),
        }
    }

    /// Whether the watch runs: `watch=true` and `live=true`.
    pub fn watches(&self) -> bool {
        self.watch && self.live
    }

    /// The file of the watch's `number`th snapshot (from 1), taken for
    /// `reason` (`leak`, `peak`): `auto_dump=` with `%e` and `%n` replaced,
    /// or by default the recording's file with `-REASON-NUMBER` before its
    /// extension (`alloc.jfr` -> `alloc-leak-1.jfr`).
    pub fn auto_dump_path(&self, reason: &str, number: u64) -> PathBuf {
        match &self.auto_dump {
            Some(pattern) => PathBuf::from(
                pattern
                    .to_string_lossy()
                    .replace(REASON, reason)
                    .replace(NUMBER, &number.to_string()),
            ),
            None => {
                // A snapshot is a plain recording, whatever the file.
                let plain = match self.file.to_string_lossy().strip_suffix(".zst") {
                    Some(plain) => PathBuf::from(plain),
                    None => self.file.clone(),
                };
                with_process_id(&plain, &format!("{reason}-{number}"))
            }
        }
    }

    /// Whether a collection is forced before the live objects are written
    /// `at`: as `collect=` says, or by default only at the JVM's exit, which
    /// a collection cannot slow down. A running service is not made to
    /// collect (a full collection pauses it) unless asked.
    pub fn collects_at(&self, at: LiveSetAt) -> bool {
        self.collect.unwrap_or(at == LiveSetAt::Exit)
    }

    /// Parses the agent's option string (`None` or empty: all defaults).
    pub fn parse(text: Option<&str>, pid: u32) -> Result<Self, OptionError> {
        let mut options = Self::defaults(pid);
        // Whether an option of the watch was given: it needs liveness.
        let mut watch_given = false;
        let text = text.unwrap_or("").trim();
        if text.is_empty() {
            return Ok(options);
        }
        // Empty items (`a=1,,b=2`, a trailing comma) are harmless: skipped.
        for item in text.split(',').filter(|item| !item.trim().is_empty()) {
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name.trim(), Some(value.trim())),
                None => (item.trim(), None),
            };
            let bad = |accepted: &str| OptionError::Invalid {
                option: item.trim().to_owned(),
                accepted: accepted.to_owned(),
            };
            let need =
                |accepted: &str| value.filter(|v| !v.is_empty()).ok_or_else(|| bad(accepted));
            match name {
                name::FILE => {
                    options.file = PathBuf::from(need(FILE)?.replace(PID, &pid.to_string()))
                }
                name::INTERVAL => {
                    options.interval = parse_size(need(INTERVAL)?)
                        .filter(|&bytes| bytes <= MAX_INTERVAL)
                        .ok_or_else(|| bad(INTERVAL))?
                }
                name::DEPTH => {
                    options.depth = need(DEPTH)?
                        .parse()
                        .ok()
                        .filter(|d| (1..=MAX_DEPTH).contains(d))
                        .ok_or_else(|| bad(DEPTH))?
                }
                name::LIVE => options.live = parse_bool(need(BOOL)?).ok_or_else(|| bad(BOOL))?,
                name::ENVIRONMENT => {
                    options.environment =
                        parse_bool(need(ENVIRONMENT)?).ok_or_else(|| bad(ENVIRONMENT))?
                }
                name::EXCLUSIVE => {
                    options.exclusive = parse_bool(need(BOOL)?).ok_or_else(|| bad(BOOL))?
                }
                name::HIDDEN => {
                    options.hidden_frames = parse_bool(need(HIDDEN)?).ok_or_else(|| bad(HIDDEN))?
                }
                name::LIVE_MAX => {
                    options.live_max = match need(LIVE_MAX)? {
                        "auto" => LiveMax::Auto,
                        "none" => LiveMax::Unlimited,
                        size => LiveMax::Below(
                            parse_size(size)
                                .filter(|&bytes| bytes > 0)
                                .ok_or_else(|| bad(LIVE_MAX))?,
                        ),
                    }
                }
                name::LIVE_RATE => {
                    options.live_rate = match need(LIVE_RATE)? {
                        "auto" => LiveRate::Auto,
                        "all" => LiveRate::All,
                        rate => LiveRate::PerSecond(
                            rate.parse::<f64>()
                                .ok()
                                .filter(|r| r.is_finite() && *r > 0.0)
                                .ok_or_else(|| bad(LIVE_RATE))?,
                        ),
                    }
                }
                name::MODE => {
                    options.mode = match need(MODE)? {
                        "record" => Mode::Record,
                        "floor" => Mode::Floor,
                        "discard" => Mode::Discard,
                        _ => return Err(bad(MODE)),
                    }
                }
                name::FLUSH => {
                    options.flush = parse_duration(need(FLUSH)?)
                        .filter(|d| {
                            *d >= Duration::from_millis(10) && *d <= Duration::from_secs(3600)
                        })
                        .ok_or_else(|| bad(FLUSH))?
                }
                name::RATE => {
                    options.rate = Some(
                        need(RATE)?
                            .parse::<f64>()
                            .ok()
                            .filter(|r| r.is_finite() && *r > 0.0)
                            .ok_or_else(|| bad(RATE))?,
                    )
                }
                name::THREADS => {
                    options.threads =
                        Some(glob::Pattern::new(need(THREADS)?).map_err(|_| bad(THREADS))?)
                }
                name::LOG => {
                    options.log = match need(LOG)? {
                        "quiet" => LogLevel::Quiet,
                        "info" => LogLevel::Info,
                        "debug" => LogLevel::Debug,
                        _ => return Err(bad(LOG)),
                    }
                }
                name::RING => {
                    options.ring = parse_size(need(RING)?)
                        .filter(|&bytes| (4096..=1 << 30).contains(&bytes))
                        .ok_or_else(|| bad(RING))? as usize
                }
                name::OLD_OBJECTS => {
                    options.old_objects = need(OLD_OBJECTS)?
                        .parse()
                        .ok()
                        .filter(|&n| n <= MAX_OLD_OBJECTS)
                        .ok_or_else(|| bad(OLD_OBJECTS))?
                }
                name::ROOTS => {
                    options.roots.enabled = parse_bool(need(ROOTS)?).ok_or_else(|| bad(ROOTS))?
                }
                name::ROOTS_DEPTH => {
                    options.roots.depth = need(ROOTS_DEPTH)?
                        .parse()
                        .ok()
                        .filter(|d| (1..=MAX_ROOTS_DEPTH).contains(d))
                        .ok_or_else(|| bad(ROOTS_DEPTH))?
                }
                name::ROOTS_TIME => {
                    options.roots.time = parse_duration(need(ROOTS_TIME)?)
                        .filter(|d| {
                            *d >= Duration::from_millis(10) && *d <= Duration::from_secs(3600)
                        })
                        .ok_or_else(|| bad(ROOTS_TIME))?
                }
                name::MAXSIZE => {
                    options.max_size = Some(
                        parse_size(need(MAX_SIZE)?)
                            .filter(|&bytes| bytes >= MIN_MAX_SIZE)
                            .ok_or_else(|| bad(MAX_SIZE))?,
                    )
                }
                name::MAXAGE => {
                    options.max_age = Some(
                        parse_duration(need(MAX_AGE)?)
                            .filter(|d| *d >= Duration::from_secs(1))
                            .ok_or_else(|| bad(MAX_AGE))?,
                    )
                }
                name::DUMP => {
                    options.dump = Some(
                        Some(PathBuf::from(need(DUMP)?))
                            .filter(|path| path.is_absolute())
                            .ok_or_else(|| bad(DUMP))?,
                    )
                }
                name::CHUNK_SIZE => {
                    options.chunk_size = parse_size(need(CHUNK_SIZE)?)
                        .filter(|bytes| (1 << 20..=1 << 30).contains(bytes))
                        .ok_or_else(|| bad(CHUNK_SIZE))?
                }
                name::CHUNK_AGE => {
                    options.chunk_age = parse_duration(need(CHUNK_AGE)?)
                        .filter(|d| {
                            *d >= Duration::from_secs(1) && *d <= Duration::from_secs(86400)
                        })
                        .ok_or_else(|| bad(CHUNK_AGE))?
                }
                name::DURATION => {
                    options.duration = Some(
                        parse_duration(need(DURATION)?)
                            .filter(|d| (MIN_DURATION..=MAX_DURATION).contains(d))
                            .ok_or_else(|| bad(DURATION))?,
                    )
                }
                name::COLLECT => {
                    options.collect = Some(parse_bool(need(COLLECT)?).ok_or_else(|| bad(COLLECT))?)
                }
                name::WATCH => {
                    options.watch = parse_bool(need(WATCH)?).ok_or_else(|| bad(WATCH))?;
                    watch_given = true;
                }
                name::ON_LEAK => {
                    options.on_leak = match need(ON_LEAK)? {
                        "log" => WatchAction::Log,
                        "dump" => WatchAction::Dump,
                        _ => return Err(bad(ON_LEAK)),
                    };
                    watch_given = true;
                }
                name::ON_PEAK => {
                    options.on_peak = match need(ON_PEAK)? {
                        "off" => None,
                        "log" => Some(WatchAction::Log),
                        "dump" => Some(WatchAction::Dump),
                        _ => return Err(bad(ON_PEAK)),
                    };
                    watch_given |= options.on_peak.is_some();
                }
                name::PEAK_SHARE => {
                    options.peak_share = need(PEAK_SHARE)?
                        .strip_suffix('%')
                        .and_then(|percent| percent.parse::<f64>().ok())
                        .filter(|percent| (1.0..=100.0).contains(percent))
                        .map(|percent| percent / 100.0)
                        .ok_or_else(|| bad(PEAK_SHARE))?
                }
                name::AUTO_DUMP => options.auto_dump = Some(PathBuf::from(need(AUTO_DUMP)?)),
                name::AUTO_DUMP_EVERY => {
                    options.auto_dump_every = parse_duration(need(AUTO_DUMP_EVERY)?)
                        .filter(|d| {
                            *d >= Duration::from_secs(1) && *d <= Duration::from_secs(86400)
                        })
                        .ok_or_else(|| bad(AUTO_DUMP_EVERY))?
                }
                name::STOP if value.is_none() => options.stop = true,
                name::STOP => return Err(bad("stop takes no value")),
                _ => {
                    return Err(OptionError::Unknown {
                        option: name.to_owned(),
                    });
                }
            }
        }
        let compressed = options.file.extension().is_some_and(|e| e == "zst");
        if compressed && (options.max_size.is_some() || options.max_age.is_some()) {
            return Err(OptionError::Conflict {
                message: format!(
                    "maxsize and maxage need a plain .jfr file, not {}",
                    options.file.display()
                ),
            });
        }
        if watch_given && options.watch && !options.live {
            return Err(OptionError::Conflict {
                message: "the watch (watch, on_leak, on_peak) follows the tracked samples: it \
                          needs live=true"
                    .to_owned(),
            });
        }
        if options.dump.is_some() && options.stop {
            return Err(OptionError::Conflict {
                message: "dump and stop cannot be given together".to_owned(),
            });
        }
        Ok(options)
    }
}

/// What `auto_dump=` replaces with why the snapshot was taken: `leak` or
/// `peak`.
pub const REASON: &str = "%e";
/// What `auto_dump=` replaces with the snapshot's number, from 1.
pub const NUMBER: &str = "%n";

const WATCH: &str = "true (watch each allocation site's live bytes while the program runs, and raise leak suspects) or false";
const ON_LEAK: &str = "log (a heapsampler.LeakSuspect event and a line on stderr) or dump (that, and a snapshot: auto_dump)";
const ON_PEAK: &str = "off, log (at a new heap peak past peak_share of the heap's maximum, a heapsampler.HeapPeak event with the live set by site, and a line on stderr) or dump (that, and a snapshot: auto_dump)";
const PEAK_SHARE: &str = "a share of the heap's maximum from 1% to 100%, such as 90%";
const AUTO_DUMP_EVERY: &str =
    "a duration from 1s to 24h, such as 10m: the least time between two snapshots the watch takes";
const AUTO_DUMP: &str =
    "a file path such as /var/tmp/app-%e-%n.jfr (%e: leak or peak, %n: the snapshot's number)";

/// The smallest `maxsize=`: chunks are an eighth of it, and each carries its
/// own metadata and constants (tens of KiB), so smaller chunks would hold
/// little else.
pub const MIN_MAX_SIZE: u64 = 1 << 20;

const MAX_SIZE: &str = "a size of at least 1m such as 100m or 1g (the recording keeps its most recent chunks within it, plus the chunk being written)";
const MAX_AGE: &str = "a duration of at least 1s such as 30m, 6h or 1d (the recording keeps the chunks that ended within it)";
const DUMP: &str = "an absolute path such as /tmp/snapshot.jfr";

const FILE: &str = "a file path such as alloc.jfr (alloc.jfr.zst writes zstd-compressed; %p in it is the JVM's process id)";
const INTERVAL: &str =
    "a size in bytes from 0 to 2g with an optional k, m or g suffix; 0 samples every allocation";
const DEPTH: &str = "a number of frames from 1 to 2048";
const BOOL: &str = "true or false";
const HIDDEN: &str = "true (keep frames of hidden classes such as lambda proxies, marked hidden) or false (leave them out, as JFR does)";
const ENVIRONMENT: &str = "true (write the process's environment variables at each chunk's start, as the JDK does: they may hold secrets) or false (leave them out)";
const LIVE_MAX: &str =
    "auto (below G1's humongous size), none (every object), or a size such as 1m";
const LIVE_RATE: &str = "auto (a share of the samples on generational ZGC, every sample elsewhere), all (every sample), or a positive number of tracked samples a second";
const MODE: &str = "record, floor (diagnostic: take stacks, write no samples) or discard (diagnostic: hand samples to the writer, write none)";
const FLUSH: &str = "a duration from 10ms to 1h, such as 500ms, 1s or 2m";
const RATE: &str = "a positive number of samples per second";
const THREADS: &str = "a glob of Java thread names, such as http-* or worker-?";
const LOG: &str = "quiet, info or debug";
const RING: &str = "a size from 4k to 1g, such as 4m";
const COLLECT: &str = "true (force a garbage collection right before the live objects are written, so that live means reachable) or false; by default true at the JVM's exit, false at stop, at the end of duration= and for dump=";
const OLD_OBJECTS: &str =
    "a number of objects from 0 to 1000000 (0 writes no jdk.OldObjectSample events)";

/// How many live sampled objects a chunk's end reports as
/// `jdk.OldObjectSample` by default: the largest ones by weight. The JDK
/// keeps 256, unweighted; at the default interval 10,000 samples stand for
/// about 5 GB of live objects, and the events cost about 60 bytes each.
pub const DEFAULT_OLD_OBJECTS: usize = 10_000;
/// The most `old_objects` accepts.
pub const MAX_OLD_OBJECTS: usize = 1_000_000;

const ROOTS: &str = "true (at the end, and at each leak suspect for its site's samples, walk the heap for the paths from GC roots to the sampled objects still live; the JVM pauses for the walk, up to roots_time: a 4 GiB heap 70% full takes 22 s to the walk's limit of 16.8 M objects) or false";
const ROOTS_DEPTH: &str =
    "a number of references from a GC root, from 1 to 4096 (farther objects get no path)";
const ROOTS_TIME: &str = "a duration from 10ms to 1h, such as 10s: the longest the walk for roots=true may pause the JVM";

const CHUNK_SIZE: &str = "a size from 1m to 1g, such as 12m";
const CHUNK_AGE: &str = "a duration from 1s to 24h, such as 10m or 1h";

/// What `duration=` accepts, for messages about it.
pub const DURATION: &str = "a duration from 1s to 720h (30 days), such as 30s, 10m or 2h: the recording stops by itself after it";
/// The shortest `duration=`.
pub const MIN_DURATION: Duration = Duration::from_secs(1);
/// The longest `duration=`: 30 days.
pub const MAX_DURATION: Duration = Duration::from_secs(720 * 3600);

/// The agent options' names, spelled once: the parser matches them, and
/// the command line passes them.
#[allow(missing_docs)] // Each constant is the option its name says.
pub mod name {
    pub const FILE: &str = "file";
    pub const INTERVAL: &str = "interval";
    pub const DEPTH: &str = "depth";
    pub const LIVE: &str = "live";
    pub const HIDDEN: &str = "hidden";
    pub const LIVE_MAX: &str = "live_max";
    pub const LIVE_RATE: &str = "live_rate";
    pub const MODE: &str = "mode";
    pub const FLUSH: &str = "flush";
    pub const RATE: &str = "rate";
    pub const THREADS: &str = "threads";
    pub const LOG: &str = "log";
    pub const RING: &str = "ring";
    pub const OLD_OBJECTS: &str = "old_objects";
    pub const ROOTS: &str = "roots";
    pub const ROOTS_DEPTH: &str = "roots_depth";
    pub const ROOTS_TIME: &str = "roots_time";
    pub const MAXSIZE: &str = "maxsize";
    pub const MAXAGE: &str = "maxage";
    pub const DUMP: &str = "dump";
    pub const CHUNK_SIZE: &str = "chunk_size";
    pub const CHUNK_AGE: &str = "chunk_age";
    pub const DURATION: &str = "duration";
    pub const COLLECT: &str = "collect";
    pub const STOP: &str = "stop";
    pub const ENVIRONMENT: &str = "environment";
    pub const EXCLUSIVE: &str = "exclusive";
    pub const WATCH: &str = "watch";
    pub const ON_LEAK: &str = "on_leak";
    pub const ON_PEAK: &str = "on_peak";
    pub const PEAK_SHARE: &str = "peak_share";
    pub const AUTO_DUMP: &str = "auto_dump";
    pub const AUTO_DUMP_EVERY: &str = "auto_dump_every";
}

/// All the option names, for the message about an unknown one.
pub const OPTION_NAMES: &str = "file, interval, depth, live, live_max, live_rate, hidden, old_objects, mode, flush, rate, threads, log, ring, maxsize, maxage, stop, dump, collect, duration, roots, roots_depth, roots_time, chunk_size, chunk_age, environment, exclusive, watch, on_leak, on_peak, peak_share, auto_dump, auto_dump_every";

/// A bad option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// An option the agent does not know.
    #[error("unknown option '{option}' (options: {OPTION_NAMES})")]
    Unknown {
        /// The option's name as given.
        option: String,
    },
    /// A known option with a value it does not accept.
    #[error("bad option '{option}': expected {accepted}")]
    Invalid {
        /// The option as given (`name=value`).
        option: String,
        /// What it accepts.
        accepted: String,
    },
    /// Options that cannot be given together.
    #[error("{message}")]
    Conflict {
        /// Which, and why.
        message: String,
    },
}

/// `512k`, `1m`, `2g`, `100` (bytes, powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let (digits, shift) = match lower.as_bytes().last()? {
        b'k' => (&lower[..lower.len() - 1], 10),
        b'm' => (&lower[..lower.len() - 1], 20),
        b'g' => (&lower[..lower.len() - 1], 30),
        _ => (&lower[..], 0),
    };
    let number: u64 = digits.parse().ok()?;
    number.checked_mul(1 << shift)
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `500ms`, `1s`, `2m`, `1h`, `1d`; a bare number is seconds.
fn parse_duration(text: &str) -> Option<Duration> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: u64 = digits.parse().ok()?;
    Some(match unit {
        "ms" => Duration::from_millis(number),
        "" | "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.checked_mul(60)?),
        "h" => Duration::from_secs(number.checked_mul(3600)?),
        "d" => Duration::from_secs(number.checked_mul(86_400)?),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Options, OptionError> {
        Options::parse(Some(text), 4242)
    }

    #[test]
    fn defaults_match_the_documentation() {
        let options = Options::parse(None, 4242).unwrap();
        assert_eq!(options.file, PathBuf::from("heapsampler-4242.jfr"));
        assert_eq!(options.interval, 512 * 1024);
        assert_eq!(options.depth, 64);
        assert!(options.live);
        assert!(!options.hidden_frames);
        assert_eq!(options.live_max, LiveMax::Auto);
        assert_eq!(options.live_rate, LiveRate::Auto);
        assert_eq!(options.mode, Mode::Record);
        assert_eq!(options.flush, Duration::from_secs(1));
        assert_eq!(options.rate, None);
        assert!(options.threads.is_none());
        assert_eq!(options.log, LogLevel::Info);
        assert!(!options.roots.enabled);
        assert_eq!(options.roots.depth, 64);
        assert_eq!(options.roots.time, Duration::from_secs(10));
        assert_eq!(options.chunk_size, 12 << 20);
        assert_eq!(options.chunk_age, Duration::from_secs(3600));
        assert_eq!(options.duration, None);
        assert_eq!(options.collect, None);
        assert!(options.environment);
        assert!(!options.exclusive);
        assert!(options.watch);
        assert_eq!(options.on_leak, WatchAction::Log);
        assert_eq!(options.on_peak, None);
        assert_eq!(options.peak_share, 0.9);
        assert_eq!(options.auto_dump, None);
        assert_eq!(options.auto_dump_every, Duration::from_secs(600));
        assert_eq!(parse("").unwrap(), options);
        assert_eq!(parse("live=true,,").unwrap(), options);
    }

    #[test]
    fn every_option_parses() {
        let options = parse(
            "file=/tmp/a.jfr,interval=32k,depth=2048,live=false,flush=250ms,rate=100,threads=http-*,log=debug,ring=64k",
        )
        .unwrap();
        assert_eq!(options.file, PathBuf::from("/tmp/a.jfr"));
        assert_eq!(
            parse("file=/tmp/%p/javac-%p.jfr").unwrap().file,
            PathBuf::from("/tmp/4242/javac-4242.jfr")
        );
        assert!(parse("exclusive=true").unwrap().exclusive);
        for (path, named) in [
            ("/tmp/javac.jfr", "/tmp/javac-4242.jfr"),
            ("a.jfr.zst", "a-4242.jfr.zst"),
            ("run", "run-4242"),
            (".jfr", ".jfr-4242"),
        ] {
            assert_eq!(
                with_process_id(Path::new(path), "4242"),
                PathBuf::from(named)
            );
        }
        assert_eq!(options.interval, 32 * 1024);
        assert_eq!(options.depth, 2048);
        assert!(!options.live);
        assert_eq!(options.flush, Duration::from_millis(250));
        assert_eq!(options.rate, Some(100.0));
        assert!(options.threads.as_ref().unwrap().matches("http-nio-1"));
        assert!(!options.threads.as_ref().unwrap().matches("main"));
        assert_eq!(options.log, LogLevel::Debug);
        assert_eq!(options.ring, 64 * 1024);
        assert!(parse("stop").unwrap().stop);
        assert_eq!(
            parse("live_max=1m").unwrap().live_max,
            LiveMax::Below(1 << 20)
        );
        assert_eq!(parse("live_max=none").unwrap().live_max, LiveMax::Unlimited);
        assert_eq!(parse("live_max=auto").unwrap().live_max, LiveMax::Auto);
        assert_eq!(parse("live_rate=auto").unwrap().live_rate, LiveRate::Auto);
        assert_eq!(parse("live_rate=all").unwrap().live_rate, LiveRate::All);
        assert_eq!(
            parse("live_rate=100").unwrap().live_rate,
            LiveRate::PerSecond(100.0)
        );
        assert_eq!(
            parse("live_rate=0.5").unwrap().live_rate,
            LiveRate::PerSecond(0.5)
        );
        assert_eq!(parse("mode=floor").unwrap().mode, Mode::Floor);
        assert_eq!(parse("mode=discard").unwrap().mode, Mode::Discard);
        assert_eq!(parse("mode=record").unwrap().mode, Mode::Record);
        assert_eq!(parse("old_objects=0").unwrap().old_objects, 0);
        assert_eq!(parse("old_objects=1000000").unwrap().old_objects, 1_000_000);
        assert!(parse("old_objects=1000001").is_err());
        assert!(parse("old_objects=-1").is_err());
        assert!(parse("hidden=true").unwrap().hidden_frames);
        assert!(!parse("hidden=false").unwrap().hidden_frames);
        assert!(!parse("environment=false").unwrap().environment);
        assert!(parse("environment=true").unwrap().environment);
        assert!(parse("environment=maybe").is_err());
    }

    #[test]
    fn the_watch_options_parse_and_need_liveness() {
        let options = parse("on_leak=dump,on_peak=log,peak_share=75%,auto_dump_every=30s").unwrap();
        assert_eq!(options.on_leak, WatchAction::Dump);
        assert_eq!(options.on_peak, Some(WatchAction::Log));
        assert_eq!(options.peak_share, 0.75);
        assert_eq!(options.auto_dump_every, Duration::from_secs(30));
        assert!(options.watches());
        assert_eq!(parse("on_peak=off").unwrap().on_peak, None);
        for bad in [
            "on_leak=page",
            "on_peak=90%",
            "peak_share=0.9",
            "peak_share=0%",
            "peak_share=101%",
            "auto_dump_every=0s",
            "watch=maybe",
        ] {
            assert!(
                matches!(parse(bad), Err(OptionError::Invalid { .. })),
                "{bad}"
            );
        }
        // Without liveness the watch is off, and asking for it is an error.
        assert!(!parse("live=false").unwrap().watches());
        assert!(parse("live=false,watch=false").is_ok());
        for conflict in ["live=false,on_leak=dump", "on_peak=log,live=false"] {
            let error = parse(conflict).unwrap_err().to_string();
            assert!(error.contains("needs live=true"), "{error}");
        }
    }

    #[test]
    fn the_watchs_snapshots_go_beside_the_recording_unless_told() {
        let options = parse("file=/tmp/run.jfr.zst").unwrap();
        assert_eq!(
            options.auto_dump_path("leak", 1),
            PathBuf::from("/tmp/run-leak-1.jfr")
        );
        let options = parse("file=run.jfr,auto_dump=/var/tmp/%e/app-%n.jfr").unwrap();
        assert_eq!(
            options.auto_dump_path("peak", 12),
            PathBuf::from("/var/tmp/peak/app-12.jfr")
        );
    }

    #[test]
    fn chunk_limits_parse_within_their_ranges() {
        let options = parse("chunk_size=1m,chunk_age=1s").unwrap();
        assert_eq!(
            (options.chunk_size, options.chunk_age),
            (1 << 20, Duration::from_secs(1))
        );
        let options = parse("chunk_size=1g,chunk_age=24h").unwrap();
        assert_eq!(
            (options.chunk_size, options.chunk_age),
            (1 << 30, Duration::from_secs(86400))
        );
        for (text, message) in [
            (
                "chunk_size=512k",
                "bad option 'chunk_size=512k': expected a size from 1m to 1g",
            ),
            ("chunk_size=2g", "bad option 'chunk_size=2g'"),
            (
                "chunk_age=500ms",
                "bad option 'chunk_age=500ms': expected a duration from 1s to 24h",
            ),
            ("chunk_age=25h", "bad option 'chunk_age=25h'"),
            ("chunk_age=", "bad option 'chunk_age=': expected"),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.starts_with(message), "{text}: {error}");
        }
    }

    #[test]
    fn roots_options_parse() {
        let roots = parse("roots=true,roots_depth=8,roots_time=500ms")
            .unwrap()
            .roots;
        assert_eq!(
            roots,
            Roots {
                enabled: true,
                depth: 8,
                time: Duration::from_millis(500)
            }
        );
        assert!(!parse("roots=false").unwrap().roots.enabled);
        // Depth and time alone change the walk's limits, not whether it runs.
        let limits = parse("roots_depth=4096,roots_time=1h").unwrap().roots;
        assert!(!limits.enabled);
        assert_eq!(
            (limits.depth, limits.time),
            (4096, Duration::from_secs(3600))
        );
        for (text, message) in [
            (
                "roots=maybe",
                "bad option 'roots=maybe': expected true (at the end",
            ),
            (
                "roots_depth=0",
                "bad option 'roots_depth=0': expected a number of references from a GC root, from 1 to 4096",
            ),
            ("roots_depth=4097", "bad option 'roots_depth=4097'"),
            ("roots_depth=deep", "bad option 'roots_depth=deep'"),
            (
                "roots_time=5ms",
                "bad option 'roots_time=5ms': expected a duration from 10ms to 1h",
            ),
            ("roots_time=2h", "bad option 'roots_time=2h'"),
            ("roots_time=", "bad option 'roots_time='"),
        ] {
            let error = parse(text).expect_err(text).to_string();
            assert!(error.starts_with(message), "{text}: got {error:?}");
        }
    }

    #[test]
    fn duration_stops_the_recording_after_it() {
        for (text, seconds) in [
            ("duration=30s", 30),
            ("duration=10m", 600),
            ("duration=2h", 7200),
            ("duration=45", 45),
            ("duration=1000ms", 1),
            ("duration=720h", 720 * 3600),
            ("duration=30d", 720 * 3600),
        ] {
            assert_eq!(
                parse(text).unwrap().duration,
                Some(Duration::from_secs(seconds)),
                "{text}"
            );
        }
        for text in [
            "duration=",
            "duration",
            "duration=0",
            "duration=500ms",
            "duration=721h",
            "duration=31d",
            "duration=-1s",
            "duration=forever",
        ] {
            let error = parse(text).expect_err(text).to_string();
            assert!(
                error.starts_with(&format!(
                    "bad option '{text}': expected a duration from 1s to 720h (30 days), such as 30s, 10m or 2h"
                )),
                "{text}: got {error:?}"
            );
        }
    }

    #[test]
    fn collect_forces_a_collection_at_the_exit_only_unless_told() {
        let default = parse("").unwrap();
        assert!(default.collects_at(LiveSetAt::Exit));
        assert!(!default.collects_at(LiveSetAt::Stop));
        assert!(!default.collects_at(LiveSetAt::Snapshot));
        for (text, collect) in [("collect=true", true), ("collect=false", false)] {
            let options = parse(text).unwrap();
            assert_eq!(options.collect, Some(collect));
            for at in [LiveSetAt::Exit, LiveSetAt::Stop, LiveSetAt::Snapshot] {
                assert_eq!(options.collects_at(at), collect, "{text} at {at:?}");
            }
        }
        // Given with the stop or the snapshot it is for.
        assert_eq!(parse("stop,collect=true").unwrap().collect, Some(true));
        assert_eq!(
            parse("dump=/tmp/s.jfr,collect=yes").unwrap().collect,
            Some(true)
        );
        for text in ["collect", "collect=", "collect=maybe"] {
            let error = parse(text).expect_err(text).to_string();
            assert!(
                error.starts_with(&format!(
                    "bad option '{text}': expected true (force a garbage collection right before"
                )),
                "{text}: got {error:?}"
            );
        }
    }

    #[test]
    fn rotation_and_dump_options_parse() {
        let options = parse("maxsize=100m,maxage=1d").unwrap();
        assert_eq!(options.max_size, Some(100 << 20));
        assert_eq!(options.max_age, Some(Duration::from_secs(86_400)));
        assert_eq!(
            parse("maxage=30m").unwrap().max_age,
            Some(Duration::from_secs(1800))
        );
        assert_eq!(parse("maxsize=1m").unwrap().max_size, Some(1 << 20));
        assert_eq!(
            parse("dump=/tmp/s.jfr").unwrap().dump,
            Some(PathBuf::from("/tmp/s.jfr"))
        );
        for (text, message) in [
            (
                "maxsize=1023k",
                "bad option 'maxsize=1023k': expected a size of at least 1m",
            ),
            ("maxsize=big", "bad option 'maxsize=big'"),
            (
                "maxage=0s",
                "bad option 'maxage=0s': expected a duration of at least 1s",
            ),
            ("maxage=1w", "bad option 'maxage=1w'"),
            (
                "dump=s.jfr",
                "bad option 'dump=s.jfr': expected an absolute path",
            ),
            (
                "file=a.jfr.zst,maxsize=1m",
                "maxsize and maxage need a plain .jfr file, not a.jfr.zst",
            ),
            (
                "dump=/tmp/s.jfr,stop",
                "dump and stop cannot be given together",
            ),
        ] {
            let error = parse(text).expect_err(text).to_string();
            assert!(error.starts_with(message), "{text}: got {error:?}");
        }
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse("interval=0").unwrap().interval, 0);
        assert_eq!(parse("interval=1m").unwrap().interval, 1 << 20);
        assert_eq!(parse("interval=1G").unwrap().interval, 1 << 30);
        assert_eq!(parse("interval=100").unwrap().interval, 100);
        assert_eq!(parse("flush=2m").unwrap().flush, Duration::from_secs(120));
        assert_eq!(parse("flush=3").unwrap().flush, Duration::from_secs(3));
    }

    #[test]
    fn bad_options_name_the_option_and_what_is_accepted() {
        let cases = [
            (
                "intervl=1k",
                "unknown option 'intervl' (options: file, interval",
            ),
            (
                "interval=-5",
                "bad option 'interval=-5': expected a size in bytes from 0 to 2g",
            ),
            ("interval=3g", "bad option 'interval=3g'"),
            ("interval=12x", "bad option 'interval=12x'"),
            ("interval=", "bad option 'interval='"),
            ("interval", "bad option 'interval'"),
            (
                "depth=0",
                "bad option 'depth=0': expected a number of frames from 1 to 2048",
            ),
            ("depth=4096", "bad option 'depth=4096'"),
            (
                "live=maybe",
                "bad option 'live=maybe': expected true or false",
            ),
            (
                "flush=1ms",
                "bad option 'flush=1ms': expected a duration from 10ms to 1h",
            ),
            ("flush=1d", "bad option 'flush=1d'"),
            ("rate=0", "bad option 'rate=0': expected a positive number"),
            ("rate=NaN", "bad option 'rate=NaN'"),
            ("threads=[", "bad option 'threads=[': expected a glob"),
            (
                "log=loud",
                "bad option 'log=loud': expected quiet, info or debug",
            ),
            ("ring=1", "bad option 'ring=1'"),
            (
                "live_max=0",
                "bad option 'live_max=0': expected auto (below G1's humongous size)",
            ),
            ("live_max=big", "bad option 'live_max=big'"),
            (
                "live_rate=0",
                "bad option 'live_rate=0': expected auto (a share of the samples on generational ZGC",
            ),
            ("live_rate=-5", "bad option 'live_rate=-5'"),
            ("live_rate=NaN", "bad option 'live_rate=NaN'"),
            ("live_rate=inf", "bad option 'live_rate=inf'"),
            ("live_rate=some", "bad option 'live_rate=some'"),
            ("live_rate=", "bad option 'live_rate='"),
            (
                "mode=fast",
                "bad option 'mode=fast': expected record, floor (diagnostic",
            ),
            ("stop=now", "bad option 'stop=now'"),
            (
                "hidden=maybe",
                "bad option 'hidden=maybe': expected true (keep frames of hidden classes",
            ),
            ("file=", "bad option 'file=': expected a file path"),
        ];
        for (text, message) in cases {
            let error = parse(text).expect_err(text).to_string();
            assert!(error.starts_with(message), "{text}: got {error:?}");
        }
    }
}
