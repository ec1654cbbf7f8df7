//! The command line's grammar: every command, option and its help, as
//! clap parses them. What the commands do is in the other modules.
//!
//! The doc comments here are the help a terminal shows, written for it:
//! `[unknown]` is a frame's name there, not a link.
#![allow(rustdoc::broken_intra_doc_links)]

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use heapsampler_cli::analysis::top::{GroupBy, Query};
use heapsampler_cli::model::filter::{Filter, TimeBound, parse_regex};
use regex::Regex;

/// A low-overhead heap-allocation profiler for the JVM.
///
/// heapsampler records the JVM's sampled allocations (JEP 331) into JFR files
/// that JDK Mission Control and `jfr print` open, and tells for each sampled
/// object whether it is still live. Start with `heapsampler demo`; record
/// your program with `heapsampler record -- java ...`, or a running JVM
/// with `heapsampler attach PID`; or load the agent yourself:
/// `java -agentpath:/path/libheapsampler.so=file=alloc.jfr ...`
#[derive(Debug, Parser)]
#[command(name = "heapsampler", version, arg_required_else_help = true)]
#[command(after_help = "\
Exit codes: 0 success, 1 bad input (a file that cannot be read), 2 bad usage.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--every`'s value: `2s`, `500ms`, `1m`, from 200 ms to an hour.
fn refresh_every(text: &str) -> Result<std::time::Duration, String> {
    let nanos = match TimeBound::parse(text) {
        Ok(TimeBound::AfterStart(nanos)) => nanos,
        _ => {
            return Err(format!(
                "'{text}' is not a duration: expected 2s, 500ms or 1m"
            ));
        }
    };
    let every = std::time::Duration::from_nanos(nanos.max(0) as u64);
    if every < std::time::Duration::from_millis(200) || every > std::time::Duration::from_secs(3600)
    {
        return Err(format!("'{text}' is out of range: from 200ms to 1h"));
    }
    Ok(every)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command with the agent in every JVM it starts, then say what
    /// each recorded.
    ///
    /// The command is `java`, or anything that starts JVMs: `javac`, `mvn`,
    /// `gradle`, a service's start script. The agent reaches each JVM through
    /// JAVA_TOOL_OPTIONS (added to what is set there already; each JVM
    /// prints "Picked up JAVA_TOOL_OPTIONS" as it starts), and each writes
    /// a file of its own: the first to start --output itself, each later
    /// one --output with its process id before the extension
    /// (build-4242.jfr). Put %p in --output to name every file by its JVM.
    ///
    /// When the program exits, the agent forces a garbage collection before
    /// it writes the sampled objects still live, so that live (top --live,
    /// flame --live) means reachable at the end: under G1, Parallel and
    /// Serial, the collectors that can collect while the JVM exits (under
    /// ZGC and Shenandoah the output says the live objects were not
    /// collected). A program run from source
    /// (`java Main.java`) is loaded by a class loader the launcher lets go
    /// when main returns: its static fields are no longer reachable then,
    /// so compile it (`javac -d classes Main.java`, `java -cp classes Main`)
    /// to see what they hold.
    ///
    /// When the Java heap runs out (OutOfMemoryError), the recording gets a
    /// heapsampler.HeapExhausted event and the objects live then
    /// (jdk.OldObjectSample, for Mission Control's Memory Leak page),
    /// flushed before the error is thrown, and the report says so. With
    /// -XX:+ExitOnOutOfMemoryError or -XX:+CrashOnOutOfMemoryError the JVM
    /// ends before any agent hears of it: the recording holds what its last
    /// flush wrote, a second or less before, and no live objects.
    ///
    /// The program's exit code is passed through. To see the recording
    /// live while the program runs, run `heapsampler watch PID` beside it
    /// (it joins the recording).
    ///
    /// Example: heapsampler record -o alloc.jfr -- java -jar app.jar
    ///
    /// Example: heapsampler record -o build.jfr -- mvn -q package
    Record {
        /// The recording to write (%p: the JVM's process id).
        #[arg(short, long, default_value = "heapsampler.jfr")]
        output: PathBuf,
        #[command(flatten)]
        sampling: Sampling,
        /// The command and its arguments: `java ...`, or any command that
        /// starts JVMs.
        #[arg(last = true, required = true)]
        program: Vec<String>,
    },
    /// Start recording in a running JVM (JDK 11 or later), through jcmd.
    ///
    /// The JVM goes on; stop the recording with `heapsampler detach PID`,
    /// which finishes the file, or give --duration and it stops by itself.
    /// One recording at a time per JVM. The JVM must run as your user and
    /// accept agents at run time (JDK 21 and later print a warning unless
    /// started with -XX:+EnableDynamicAgentLoading). To attach and see what
    /// grows as it runs, use `heapsampler watch PID` instead.
    ///
    /// Example: heapsampler attach 4242 -o /tmp/service.jfr --interval 256k
    ///
    /// Example, for ten minutes: heapsampler attach 4242 --duration 10m
    Attach {
        /// The JVM's process id (`jcmd` with no arguments lists them).
        pid: u32,
        /// The recording to write (default: heapsampler-PID.jfr here).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Stop the recording by itself after this long, such as 30s, 10m or
        /// 2h (1s to 720h).
        ///
        /// The agent in the JVM keeps the time, so the recording ends and
        /// its file is finished even if this program, or the terminal it ran
        /// in, is gone by then; the agent is then free for the next attach.
        /// `heapsampler detach PID` still stops it sooner.
        #[arg(long, value_name = "DURATION")]
        duration: Option<String>,
        #[command(flatten)]
        sampling: Sampling,
        /// The jcmd to use (default: $JAVA_HOME/bin/jcmd, or the PATH's).
        #[arg(long)]
        jcmd: Option<PathBuf>,
    },
    /// Stop the recording `heapsampler attach` started, and summarise it.
    ///
    /// The agent finishes the file before detach returns. The objects it
    /// writes as live at the end (what top --live and flame --live show)
    /// are those no collection had freed yet: garbage made since the last
    /// collection, and what young collections left in the old generation,
    /// counts as live, and the outputs say so ("live: not collected yet").
    /// With --collect they are the reachable ones.
    ///
    /// Example: heapsampler detach 4242
    ///
    /// Example, live meaning reachable: heapsampler detach 4242 --collect
    Detach {
        /// The JVM's process id.
        pid: u32,
        /// Force a garbage collection first, so that the objects written as
        /// live at the end are the reachable ones ("live: reachable at the
        /// end").
        ///
        /// The service pauses for the collection, as for `jcmd PID GC.run`
        /// (a full collection under G1, Parallel and Serial; a concurrent
        /// one under ZGC and Shenandoah).
        #[arg(long)]
        collect: bool,
        /// The agent library (default: $HEAPSAMPLER_AGENT, or the one this program carries).
        #[arg(long)]
        agent: Option<PathBuf>,
        /// The jcmd to use (default: $JAVA_HOME/bin/jcmd, or the PATH's).
        #[arg(long)]
        jcmd: Option<PathBuf>,
    },
    /// Write a snapshot of a recording so far, the recording going on
    /// untouched (as `jcmd PID JFR.dump` does for JFR).
    ///
    /// Given a PID, asks the agent recording in that JVM (started by
    /// `heapsampler attach`, or with -agentpath) to flush and copy its
    /// recording; the snapshot is complete when dump returns. Given a file
    /// (a recording being written, by the agent or by any JFR writer), copies
    /// every chunk it holds as far as its last flush, without writing to it;
    /// a recording that rotates (maxsize, maxage) may rotate meanwhile. The
    /// snapshot is a complete recording: `jfr`, Mission Control and every
    /// heapsampler command read it. A compressed (.zst) recording cannot be
    /// snapshot.
    ///
    /// A snapshot asked of a JVM ends as the recording would end now: with
    /// the sampled objects still live (top --live, flame --live), those no
    /// collection had freed yet, garbage included ("live: not collected
    /// yet"); with --collect, the reachable ones. A
    /// snapshot of a file has no live objects: it did not end.
    ///
    /// Example: heapsampler dump 4242 -o /tmp/now.jfr
    ///
    /// Example: heapsampler dump service.jfr -o /tmp/now.jfr
    Dump {
        /// A JVM's process id, or a recording's file (a name that exists as a
        /// file is taken as one).
        target: String,
        /// Where the snapshot goes (a .jfr name, for the JDK's `jfr`).
        #[arg(short, long)]
        output: PathBuf,
        /// Of a JVM: force a garbage collection first, so that the
        /// snapshot's live objects are the reachable ones ("live: reachable
        /// at the end"). The service pauses for the collection, as for `jcmd
        /// PID GC.run`.
        #[arg(long)]
        collect: bool,
        /// The agent library (default: $HEAPSAMPLER_AGENT, or the one this program carries).
        #[arg(long)]
        agent: Option<PathBuf>,
        /// The jcmd to use (default: $JAVA_HOME/bin/jcmd, or the PATH's).
        #[arg(long)]
        jcmd: Option<PathBuf>,
    },
    /// Record a running JVM and show, live on this terminal, what it keeps.
    ///
    /// Attaches as `heapsampler attach` does (the same sampling options),
    /// or, when the agent records in that JVM already (an earlier attach,
    /// `record`, or -agentpath), joins that recording. The agent's watch
    /// writes into the recording, as it judges (at most every 10 s), the
    /// sites with the most live bytes and how fast each grew lately; every
    /// --every the view reads what the file holds since its last refresh
    /// and shows those sites (growth per minute with its 95% interval, over
    /// up to the last 10 minutes), the heap in use after each collection,
    /// and the leak suspects the agent raised. Nothing is asked of the
    /// agent.
    ///
    /// q or Ctrl-C quits: a recording watch started is stopped and its file
    /// finished, as `heapsampler detach PID` does, and its path printed;
    /// with --keep-recording it goes on. A recording it joined is left
    /// running (stop it with `heapsampler detach PID`).
    ///
    /// A refresh reads the chunks the agent ended since the last one once,
    /// and the last chunk again: at most a chunk (12 MB by default),
    /// however long the recording (a compressed .jfr.zst recording is read
    /// from its start each time). Until the watch first judges (under G1
    /// its first marking) there are no sites yet. Standard output must be
    /// a terminal.
    ///
    /// Example: heapsampler watch 4242 -o /tmp/service.jfr
    ///
    /// Example, leaving the recording on at the end: heapsampler watch 4242
    /// -o /tmp/service.jfr --keep-recording
    Watch {
        /// The JVM's process id (`jcmd` with no arguments lists them).
        pid: u32,
        /// The recording to write when watch starts one (default:
        /// heapsampler-PID.jfr here).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The time from one refresh's end to the next's start, such as 2s
        /// or 500ms (200ms to 1h).
        #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = refresh_every)]
        every: std::time::Duration,
        /// Leave the recording running at the end, to stop later with
        /// `heapsampler detach PID`.
        #[arg(long)]
        keep_recording: bool,
        #[command(flatten)]
        sampling: Sampling,
        /// The jcmd to use (default: $JAVA_HOME/bin/jcmd, or the PATH's).
        #[arg(long)]
        jcmd: Option<PathBuf>,
    },
    /// Record a bundled example and show what heapsampler finds in it.
    ///
    /// Compiles and runs a small order service (a few seconds, 4 threads)
    /// that allocates hard and leaks slowly, records it with the agent,
    /// checks the recording with the JDK's `jfr summary`, converts the
    /// samples to CSV, draws a flame graph (demo.svg), and prints the top
    /// allocation sites and what was still live at the end. Needs a JDK
    /// (java, javac) and the agent.
    Demo {
        /// Where the recording, its CSV, its flame graph and the example's
        /// source go.
        #[arg(long, default_value = "heapsampler-demo")]
        dir: PathBuf,
        /// How long the example runs.
        #[arg(long, default_value_t = 5)]
        seconds: u32,
        /// Seconds the example's JVM may run past --seconds before the demo
        /// kills it as hung: its start and the agent finishing the file take
        /// a few seconds on a loaded machine. Hidden: for the demo's tests.
        #[arg(long, hide = true, default_value_t = 60)]
        grace: u64,
        /// The agent library (default: $HEAPSAMPLER_AGENT, or the one this program carries).
        #[arg(long)]
        agent: Option<PathBuf>,
    },
    /// Summarise a recording: chunks, time span, events by type, and for
    /// heapsampler recordings the agent's counters (samples, lost, waits).
    ///
    /// Reads any JFR recording, ours or the JDK's, plain or compressed with
    /// zstd or gzip (recognised by content, not by name). Like `jfr
    /// summary`, it reads each event's type and size, not its fields: a
    /// quick look; `convert` checks every field.
    Summary {
        /// The recording.
        file: PathBuf,
    },
    /// The top allocation sites (or classes, or threads) by estimated bytes.
    ///
    /// Sums the allocated bytes each event stands for: the weight of
    /// jdk.ObjectAllocationSample (any recording, ours or the JDK's), or in a
    /// recording without those, the JDK's TLAB events, as Mission Control
    /// weights them: jdk.ObjectAllocationInNewTLAB by tlabSize and
    /// jdk.ObjectAllocationOutsideTLAB by allocationSize (async-profiler's
    /// allocation recordings too). The two kinds record the same
    /// allocations, so only one is added; the output says which. With
    /// --live, from heapsampler.ObjectLifetime events still live at the end:
    /// what the heap held, and who allocated it. When the recording has
    /// paths to GC roots (record --roots, the agent's roots=true), a line
    /// under each live row says what holds most of its objects: the chain
    /// of referrers, nearest first, and the root, and how many of the
    /// row's objects (after --min-gcs) it holds, of those with a path.
    /// Without paths, the table ends by saying none was recorded.
    ///
    /// Each estimate (bytes and objects) comes with its 95% interval: the
    /// range that holds the true figure in 95 recordings out of 100, from
    /// how the JVM samples (JDK 25's sampler; before it, some samples land
    /// on the wrong object, and a note under the table says so). Rows
    /// marked ~ have an interval wider than the estimate: a few samples,
    /// which say "some" and little more. Objects
    /// are estimated where the samples carry their object's size
    /// (heapsampler's recordings at a fixed interval); the JDK's own
    /// samples do not, and show bytes only.
    Top {
        /// The recording.
        file: PathBuf,
        #[command(flatten)]
        question: Question,
        /// How many lines.
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: usize,
    },
    /// What is leaking: the sites whose live bytes grow, how fast, and
    /// what they keep.
    ///
    /// Reads heapsampler's liveness events (each sampled object's
    /// allocation and the collection that freed it, or that it was still
    /// live at the end) and estimates each site's live bytes after every
    /// collection, with 95% intervals. A suspect is a site whose live
    /// bytes grow significantly after the warm-up (the first part of the
    /// recording): it is listed with its growth per minute and that
    /// growth's 95% interval, its live bytes at the end, the classes it
    /// keeps, the median age of its live objects and the collections they
    /// outlived, and, when the recording has paths to GC roots (record
    /// --roots), what holds them. Then the peak: the live set by site after
    /// the collection that left the heap fullest. And how much of the heap
    /// the sampled objects account for.
    ///
    /// Live after a collection means not freed by it: objects that died in
    /// the old generation count until a collection of the old generation
    /// frees them, as they do in the heap after each collection. The exit
    /// status is 0 whether or not there is a suspect.
    ///
    /// A verdict needs at least 5 collections: 4 after the warm-up (the
    /// first quarter of the time from the first collection to the last),
    /// in at least 4 of 8 equal slices of the time after it. Each slice
    /// with a collection is a point of the live bytes' course, and growth
    /// is told from their wander by Student's t on the degrees of freedom
    /// the points give: 3 points give one, with which the smallest leak
    /// found is 5 to 11 times what 4 find (the core's simulations of 30 s).
    /// Short of that, leaks says which is missing.
    ///
    /// Example: heapsampler leaks app.jfr --by app-site
    Leaks {
        /// The recording.
        file: PathBuf,
        /// Group by allocation site (the top frame), app-site (the first
        /// frame outside the JDK), class or thread.
        #[arg(long, value_enum, default_value_t = ByArg::Site)]
        by: ByArg,
        /// How many suspects and peak lines.
        #[arg(short = 'n', long, default_value_t = 10)]
        limit: usize,
    },
    /// One page that answers "what is leaking?": an HTML report.
    ///
    /// Writes one self-contained HTML file (no network, no external file:
    /// it opens offline in any browser) that leads with the verdict, then
    /// shows the heap after each collection with the suspects' estimated
    /// live bytes stacked under it, the suspects (as `leaks` lists them),
    /// the live set by site at the heap's peak, the allocation and live
    /// flame graphs, the top sites by bytes allocated, the per-thread
    /// estimates set against the JVM's own counts
    /// (jdk.ThreadAllocationStatistics), and what the recording is. It
    /// reads the JDK's own recordings too, and says what they lack.
    ///
    /// Example: heapsampler report app.jfr -o app.html
    Report {
        /// The recording.
        file: PathBuf,
        /// The page to write; by default beside the recording, named as it
        /// is with .html.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Group the leak analysis by allocation site (the top frame),
        /// app-site (the first frame outside the JDK), class or thread.
        #[arg(long, value_enum, default_value_t = ByArg::Site)]
        by: ByArg,
    },
    /// What changed between two recordings, per site, class or thread.
    ///
    /// Compares the allocation rate (estimated bytes per second of each
    /// recording, so recordings of different lengths compare), or with
    /// --live the bytes still live at each recording's end. Groups whose
    /// change is significant come first, largest change first; a change
    /// whose two 95% intervals overlap is marked ~, not significant. A
    /// group seen in only one recording is compared with what the other
    /// could have held unseen.
    ///
    /// Example: heapsampler diff before.jfr after.jfr --by app-site
    Diff {
        /// The recording to compare against (before a change, or earlier).
        base: PathBuf,
        /// The recording compared (after a change, or later).
        new: PathBuf,
        #[command(flatten)]
        question: Question,
        /// How many lines.
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: usize,
    },
    /// Draw an interactive flame graph of where the bytes were allocated.
    ///
    /// Writes one SVG file that any browser opens, offline. Each box is a
    /// method (pkg.Class.method), stacked on its caller from the root up,
    /// and as wide as the bytes allocated under it, estimated from the
    /// samples' weights (--samples: as the number of samples); the top box
    /// of each stack is the class allocated there (byte[],
    /// java.lang.String), as async-profiler draws allocations. A name too
    /// long for its box drops its package (HashMap.putVal) before it is
    /// cut. Hover over a box for its full name, bytes, share and samples;
    /// click it to zoom in; Search (or Ctrl-F) highlights the methods a
    /// regular expression matches and says what share they hold. Frames
    /// the recording marks hidden (lambda forms, the JDK's
    /// Main$$Lambda$14+0x...run) are left out, as `jfr print` does.
    ///
    /// Your code is drawn in red to yellow, the JDK's (java., javax., jdk.,
    /// sun., com.sun.) in blue, the allocated classes in green. A stack cut
    /// at the recording's depth (the agent's depth=, JFR's stackdepth) or
    /// at --depth starts with a grey [truncated] box, where its missing
    /// frames would be; samples without a stack count under [unknown].
    ///
    /// Reads jdk.ObjectAllocationSample (any recording, ours or the JDK's),
    /// or in a recording without those, the JDK's TLAB events, as top does.
    /// With --live, heapsampler.ObjectLifetime events of objects still live
    /// at the end: what the heap held, and who allocated it.
    #[command(after_long_help = "\
Examples:
  heapsampler flame alloc.jfr -o alloc.svg
  heapsampler flame alloc.jfr --live --min-gcs 2 -o leaks.svg
  heapsampler flame alloc.jfr --samples --thread '^worker-' --from 30s -o workers.svg")]
    Flame {
        /// The recording (plain, zstd or gzip).
        file: PathBuf,
        /// The SVG to write (`-`: standard output).
        ///
        /// Default: next to the recording, as NAME.svg.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Boxes as wide as their number of samples, not their estimated
        /// bytes.
        #[arg(long)]
        samples: bool,
        /// Only objects still live when the recording ended.
        ///
        /// What live means depends on how the recording ended, and the output
        /// says which in a line starting "live:". A JVM that exited (a program
        /// `record` ran) is collected right before under G1, Parallel and
        /// Serial, so live means reachable. A
        /// recording stopped in a running JVM (`detach`, --duration) or a
        /// snapshot of one (`dump PID`) counts what no collection had freed
        /// yet, garbage included, unless taken with --collect. A recording that did not end (its JVM killed) has none.
        #[arg(long)]
        live: bool,
        /// With --live: only objects that outlived at least this many collections.
        #[arg(long, default_value_t = 0, requires = "live")]
        min_gcs: u64,
        /// Keep at most this many frames of each stack (the top ones,
        /// nearest the allocation); deeper stacks start with [truncated].
        #[arg(long, default_value_t = 64, visible_alias = "stack-depth")]
        depth: usize,
        #[command(flatten)]
        filters: FilterArgs,
        /// Threads folding chunks at once (0: one per core). The graph is
        /// the same with any number.
        #[arg(long, value_name = "N", default_value_t = 0)]
        threads: usize,
        /// Leave out the box of the allocated class at the top of each
        /// stack: the graph of methods only.
        #[arg(long)]
        no_class_frame: bool,
    },
    /// Convert events to CSV, to folded stacks for flame graphs, to a heap
    /// profile for go tool pprof, to OpenTelemetry profiles, or to a
    /// Parquet table.
    ///
    /// CSV (the default): one row per event, one column per field. Threads
    /// become their names, classes their Java names (int[],
    /// java.lang.String), stack traces their frames top first as
    /// pkg.Class.method(line) joined with ';', times ISO-8601 UTC with
    /// nanoseconds, durations nanoseconds. With one event type the output is
    /// one CSV file; with several, a folder with one TYPE.csv each.
    ///
    /// Collapsed (--format collapsed): one line per distinct stack, frames
    /// root first as pkg.Class.method (no line numbers, so that a method is
    /// one box per caller in the graph) joined with ';', a space, and the
    /// value: the sum of the events' weight field (the estimated allocated
    /// bytes of jdk.ObjectAllocationSample and heapsampler.ObjectLifetime;
    /// tlabSize of jdk.ObjectAllocationInNewTLAB, allocationSize of
    /// jdk.ObjectAllocationOutsideTLAB), or the number of events for types
    /// without one. Without --events it folds jdk.ObjectAllocationSample, or
    /// in a recording without those, both TLAB events, as top does. Events
    /// without a stack count under the frame [unknown]; a stack cut at the
    /// recorder's depth or at --stack-depth starts with the frame
    /// [truncated], where its missing frames would be. Events of a type
    /// with an objectClass field (allocations) end with a frame of that
    /// class, suffixed as async-profiler writes it: byte[]_[k] (_[i] for
    /// jdk.ObjectAllocationInNewTLAB), which flamegraph.pl and
    /// inferno-flamegraph colour apart and take off the label
    /// (--no-class-frame: without). Frames the recording marks hidden are
    /// left out, in every format, as `jfr print` does. Lines are sorted by
    /// stack.
    /// The input of flamegraph.pl, inferno-flamegraph and speedscope.
    ///
    /// Pprof (--format pprof): a gzip-compressed heap profile for `go tool
    /// pprof`, with a Go heap profile's sample types: alloc_objects and
    /// alloc_space from the allocation events top reads, inuse_objects and
    /// inuse_space from heapsampler.ObjectLifetime events still live at the
    /// end (as top --live; left out when the recording has none). Samples
    /// of one stack, class and thread are summed and rounded once, so totals
    /// match top's to within half a unit per pprof sample. Samples that do
    /// not carry their object's size (the JDK's own sampler and ours with
    /// rate=, both throttled; TLAB events) cannot estimate objects: the
    /// profile has samples (a count of samples) in place of alloc_objects,
    /// and says so. Labels class and thread; functions pkg.Class.method with
    /// line numbers, no source file (JFR records none); [truncated] at the
    /// root of stacks cut at the depth limit. Takes no --events.
    ///
    /// OTLP (--format otlp): an OpenTelemetry profiles export
    /// (ExportProfilesServiceRequest of opentelemetry-proto v1.10.0's
    /// profiles/v1development), uncompressed protobuf: the body an OTLP/HTTP
    /// collector takes at /v1development/profiles (compress in transport,
    /// with Content-Encoding). The samples, sample types and rounding are
    /// pprof's; OTLP has one sample type per profile, so the request holds
    /// one profile per type, the default (inuse_space, else alloc_space)
    /// first. Attributes thread.name and heapsampler.allocated_class on each
    /// sample, and heapsampler.leak_suspect.first_raised on those of a site
    /// the agent raised as a leak suspect (when first); the resource names the JVM and process with OpenTelemetry's
    /// semantic conventions (process.pid, process.runtime.name and version,
    /// os.type, host.arch, host.name...) from what the recording says.
    /// Takes no --events.
    ///
    /// Parquet (--format parquet): the allocation events as a table, one
    /// row per event, for Spark, DuckDB, Trino or any lake engine. Columns:
    /// the recording's identity on every row (recording: the path as given;
    /// host: the JVM's HOSTNAME; pid; jvm_start; jvm_name; jvm_version), so
    /// that the files of many recordings query as one dataset; then event
    /// (the event type), time (of the allocation, UTC, microseconds),
    /// thread, class, weight (estimated bytes), size (when the recording
    /// tells it), tracked, tracking_probability (a tracked row stands for
    /// weight / tracking_probability live bytes), live, gcs_survived and
    /// freed_by_gc_id (from heapsampler.ObjectLifetime; null on other
    /// events), and stack: a list
    /// of frames pkg.Class.method(line), top (the allocation site) first,
    /// [truncated] last when cut; and leak_suspect_raised: when the agent
    /// first raised the row's site (its top frame and class) as a leak
    /// suspect, null for the sites it did not raise (read in a first pass
    /// over the recording). An object heapsampler sampled has two
    /// rows, its jdk.ObjectAllocationSample and its
    /// heapsampler.ObjectLifetime (TLAB events, in the JDK's recordings,
    /// record the same allocations again): sum weight over one event type.
    /// The stack is a list in each row rather than an id into a second
    /// table, so that one file is the whole recording and a glob over many
    /// needs no join; Parquet's dictionary encoding stores each frame once
    /// per row group. zstd-compressed; written chunk by chunk, one row group
    /// per chunk. --events keeps some of jdk.ObjectAllocationSample,
    /// heapsampler.ObjectLifetime, jdk.ObjectAllocationInNewTLAB and
    /// jdk.ObjectAllocationOutsideTLAB (default: all).
    ///
    /// The filters (--from, --to, --thread, --class) apply to every format;
    /// an event must pass all of them.
    #[command(after_long_help = "\
Examples:
  heapsampler convert alloc.jfr --events jdk.ObjectAllocationSample -o samples.csv
  heapsampler convert alloc.jfr --from 30s --to 1m --thread '^worker-' -o minute.csv
  heapsampler convert alloc.jfr --format collapsed -o - | inferno-flamegraph > alloc.svg
  heapsampler convert alloc.jfr --format collapsed --class 'byte\\[\\]' -o bytes.collapsed
  heapsampler convert recording.jfr --format collapsed --events jdk.ExecutionSample -o cpu.collapsed
  heapsampler convert alloc.jfr --format pprof -o heap.pb.gz && go tool pprof -top heap.pb.gz
  heapsampler convert alloc.jfr --format otlp -o heap.otlp.pb
  heapsampler convert alloc.jfr --format parquet -o lake/alloc.parquet
  duckdb -c \"SELECT stack[1] AS site, sum(weight) AS bytes FROM 'lake/*.parquet' \\
    WHERE event = 'jdk.ObjectAllocationSample' GROUP BY site ORDER BY bytes DESC LIMIT 10\"")]
    Convert {
        /// The recording (plain, zstd or gzip).
        file: PathBuf,
        /// Where to write: a file (`-`: standard output); for CSV of several
        /// event types, a folder.
        ///
        /// Default: next to the recording, as NAME.csv (one CSV type),
        /// NAME-csv/ (several), NAME.collapsed, NAME.pb.gz, NAME.otlp.pb or
        /// NAME.parquet. Example: -o - | less
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Only these event types, comma-separated (default: all for CSV,
        /// jdk.ObjectAllocationSample for collapsed).
        ///
        /// --format collapsed takes exactly one type, since bytes and event
        /// counts do not add up in one graph; --format pprof and otlp take
        /// none (they read the allocation events); --format parquet takes
        /// allocation event types (default: all of them). Example: --events
        /// jdk.ObjectAllocationSample,jdk.ExecutionSample
        #[arg(long, value_delimiter = ',')]
        events: Vec<String>,
        /// Keep at most this many frames of each stack trace (the top ones,
        /// nearest the allocation).
        ///
        /// Example: --stack-depth 16
        #[arg(long, default_value_t = 64)]
        stack_depth: usize,
        /// What to write: csv, collapsed (folded stacks for flame graphs),
        /// pprof (a heap profile for go tool pprof), otlp (OpenTelemetry
        /// profiles), or parquet (a table of the allocation events for
        /// Spark, DuckDB and other lake engines).
        ///
        /// Example: --format collapsed -o - | flamegraph.pl > alloc.svg
        #[arg(long, value_enum, default_value_t = FormatArg::Csv)]
        format: FormatArg,
        #[command(flatten)]
        filters: FilterArgs,
        /// Threads converting chunks at once (0: one per core): what each
        /// makes of its chunk (CSV rows, folded stacks, a profile's
        /// samples) is put together in chunk order, so the output is the
        /// same with any number.
        ///
        /// A recording of one chunk is converted on one thread. Example:
        /// --threads 1
        #[arg(long, value_name = "N", default_value_t = 0)]
        threads: usize,
        /// With --format collapsed: leave out the frame of the allocated
        /// class at the top of each stack.
        #[arg(long)]
        no_class_frame: bool,
    },
}

/// What `top` and `diff` group and count.
#[derive(Debug, clap::Args)]
pub struct Question {
    /// Group by allocation site (the top frame), app-site (the first
    /// frame outside the JDK: your code, not the Arrays.copyOf it
    /// called), class or thread.
    #[arg(long, value_enum, default_value_t = ByArg::Site)]
    pub by: ByArg,
    /// Only objects still live when the recording ended.
    ///
    /// What live means depends on how the recording ended, and the output
    /// says which in a line starting "live:". A JVM that exited (a program
    /// `record` ran) is collected right before under G1, Parallel and
    /// Serial, so live means reachable. A
    /// recording stopped in a running JVM (`detach`, --duration) or a
    /// snapshot of one (`dump PID`) counts what no collection had freed
    /// yet, garbage included, unless taken with --collect. A recording that did not end (its JVM killed) has none.
    #[arg(long)]
    pub live: bool,
    /// With --live: only objects that outlived at least this many collections.
    #[arg(long, default_value_t = 0, requires = "live")]
    pub min_gcs: u64,
}

impl From<&Question> for Query {
    fn from(question: &Question) -> Self {
        Query {
            by: question.by.into(),
            live: question.live,
            min_gcs: question.min_gcs,
        }
    }
}

/// Which events to keep: the filters `convert` and `flame` share. An event
/// must pass all of them.
#[derive(Debug, clap::Args)]
pub struct FilterArgs {
    /// Keep events that start at or after TIME.
    ///
    /// TIME is an RFC 3339 time with a zone, fractions of a second
    /// allowed (2026-11-22T10:15:00Z, 2026-11-22T11:15:00.5+01:00), or an
    /// offset from the recording's start: a number and a unit, ns, us,
    /// ms, s, m or h (500ms, 30s, 1.5m, 2h). Example: --from 30s
    #[arg(long, value_name = "TIME", value_parser = TimeBound::parse)]
    pub from: Option<TimeBound>,
    /// Keep events that start before TIME (the window is [from, to)).
    ///
    /// TIME takes the same forms as --from. Example: --from 1m --to 2m
    /// (the second minute), or --to 2026-11-22T10:15:00Z
    #[arg(long, value_name = "TIME", value_parser = TimeBound::parse)]
    pub to: Option<TimeBound>,
    /// Keep events whose thread's Java name matches REGEX.
    ///
    /// The thread is the event's eventThread (sampledThread for
    /// execution samples); a thread without a Java name is matched by its
    /// OS name; events without a thread are dropped. The regex matches
    /// anywhere in the name (anchor with ^ and $); syntax of Rust's
    /// regex crate. Example: --thread '^(main|worker-[0-3])$'
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub thread: Option<Regex>,
    /// Keep events whose class's Java name matches REGEX.
    ///
    /// The class is the event's first class field (objectClass for
    /// allocations), named as Java writes it: java.lang.String, int[],
    /// java.util.HashMap$Node[]. Events without a class field are
    /// dropped. Matches anywhere in the name. Example: --class
    /// '^java\.lang\.String$' or --class '\[\]$' (arrays)
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub class: Option<Regex>,
}

impl From<FilterArgs> for Filter {
    fn from(args: FilterArgs) -> Self {
        Self {
            from: args.from,
            to: args.to,
            thread: args.thread,
            class: args.class,
        }
    }
}

/// `--by` of `top`: the library's [`GroupBy`], as the command line spells it.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ByArg {
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

impl From<ByArg> for GroupBy {
    fn from(by: ByArg) -> Self {
        match by {
            ByArg::Site => Self::Site,
            ByArg::AppSite => Self::AppSite,
            ByArg::Class => Self::Class,
            ByArg::Thread => Self::Thread,
        }
    }
}

/// `--format` of `convert`: what to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FormatArg {
    /// One row per event, one column per field.
    #[default]
    Csv,
    /// Folded stacks for flame graphs: `root;...;top value` per stack.
    Collapsed,
    /// A heap profile for go tool pprof (gzip-compressed protobuf).
    Pprof,
    /// An OpenTelemetry profiles export (ExportProfilesServiceRequest,
    /// protobuf).
    Otlp,
    /// The allocation events as a Parquet table, one row per event.
    Parquet,
}

/// How to sample: the options `record` and `attach` share.
#[derive(Debug, clap::Args)]
pub struct Sampling {
    /// Mean bytes between samples (k, m, g suffixes; 0: every allocation).
    #[arg(long, default_value = "512k")]
    pub interval: String,
    /// Stack frames kept per sample.
    #[arg(long, default_value_t = 64)]
    pub depth: usize,
    /// Do not track whether sampled objects stay live.
    #[arg(long)]
    pub no_live: bool,
    /// At most about this many samples per second.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Keep the frames of hidden classes (lambda proxies such as
    /// Main$$Lambda$14.0x...run(), lambda forms) in the file, marked hidden.
    ///
    /// By default the agent leaves them out of stack traces, so that stacks
    /// read as the source does. The JDK's own recordings keep them, marked
    /// hidden; `jfr print` and every heapsampler command that reads stacks
    /// (top, flame, convert) leave frames marked hidden out, in any
    /// recording: keep them for tools that show them.
    #[arg(long)]
    pub keep_hidden_frames: bool,
    /// Leave the JVM's environment variables out of the recording.
    ///
    /// By default each chunk starts with the process's environment
    /// variables (jdk.InitialEnvironmentVariable), as the JDK's own
    /// recordings do: they may hold secrets (tokens, passwords), and go
    /// wherever the file goes. Mission Control's PasswordsInEnvironment
    /// rule reads them and warns of names that look like passwords.
    #[arg(long)]
    pub no_environment: bool,
    /// The most live sampled objects each chunk's end reports as
    /// jdk.OldObjectSample, largest first (0: none).
    ///
    /// Mission Control's Memory Leak page and leak rule read them. A
    /// recording's statistics say how many the cap left out.
    ///
    /// Once a chunk's end has written them, the chunk end's before are
    /// renamed heapsampler.OldObjectSnapshot in the file, so that Mission
    /// Control, which reads every chunk as one, counts each live object
    /// once: the newest live set keeps the JDK's name, also in a file whose
    /// JVM was killed. A .jfr.zst recording writes them at its end only.
    #[arg(long, default_value_t = heapsampler_core::options::DEFAULT_OLD_OBJECTS)]
    pub old_objects: usize,
    #[command(flatten)]
    pub roots: Roots,
    #[command(flatten)]
    pub bounds: Bounds,
    #[command(flatten)]
    pub watch: WatchFlags,
    /// The agent library (default: $HEAPSAMPLER_AGENT, or the one this program carries).
    #[arg(long)]
    pub agent: Option<PathBuf>,
}

/// The agent's watch while the program runs: `watch=`, `on_leak=`,
/// `on_peak=`, `peak_share=`, `auto_dump=` and `auto_dump_every=`.
#[derive(Debug, Default, clap::Args)]
pub struct WatchFlags {
    /// Do not watch the allocation sites' live bytes for leaks while the
    /// program runs.
    ///
    /// By default (with liveness) the agent follows each site's live bytes
    /// after each collection that marks the whole heap (a full one, G1's
    /// marking from JDK 21 on; where the JVM does not say when a marking
    /// ends, an object of the agent's own tells: the README's "Leaving it
    /// on"), 256 sites on their own and the rest together, and tests them
    /// for growth on its writer thread: a site whose live bytes rise
    /// significantly, to a level above any before, is a leak suspect. It
    /// writes a heapsampler.LeakSuspect event (the site's stack and class,
    /// its growth per second with a 95% interval, its live bytes, the time
    /// until the heap is full at that rate) and says one line on the JVM's
    /// standard error. A steady service raises a false suspect at most once
    /// in 700 days (simulated); a 500 KiB/s leak is raised within about a
    /// minute. `leaks` and `report` show when each was raised.
    #[arg(long)]
    pub no_watch: bool,
    /// What a leak suspect makes the agent do beyond its event and its
    /// line: `dump` also writes a snapshot of the recording (see
    /// --auto-dump).
    #[arg(long, value_name = "ACTION", value_parser = ["log", "dump"])]
    pub on_leak: Option<String>,
    /// Watch the heap's peaks: when the heap after a collection passes
    /// --peak-share of its maximum and is higher than any peak before,
    /// write a heapsampler.HeapPeak event with the live bytes by site then
    /// (log), and a snapshot (dump).
    #[arg(long, value_name = "ACTION", value_parser = ["off", "log", "dump"])]
    pub on_peak: Option<String>,
    /// The share of the heap's maximum a peak must pass, such as 90%
    /// (default 90%).
    #[arg(long, value_name = "PERCENT")]
    pub peak_share: Option<String>,
    /// Where the watch's snapshots go: %e in it is leak or peak, %n the
    /// snapshot's number (default: beside the recording, run.jfr ->
    /// run-leak-1.jfr).
    #[arg(long, value_name = "PATH")]
    pub auto_dump: Option<PathBuf>,
    /// The least time between two of the watch's snapshots, such as 10m (1s
    /// to 24h; default 10m).
    #[arg(long, value_name = "DURATION")]
    pub auto_dump_every: Option<String>,
}

/// How much of a long recording is kept, and how it is cut in chunks: the
/// agent's `maxsize=` and `maxage=` (as JFR's maxsize and maxage),
/// `chunk_size=` and `chunk_age=`.
#[derive(Debug, Default, clap::Args)]
pub struct Bounds {
    /// Keep only the most recent chunks within this size, such as 100m or 1g
    /// (at least 1m).
    ///
    /// The recording stays one .jfr file that every tool reads: when a chunk
    /// ends past the limit, the oldest whole chunks are dropped, down to
    /// three quarters of it (the kept ones are copied to a new file renamed
    /// over the old, so a reader never sees half a file). Chunks are then an eighth of the size, and the
    /// chunk being written is always kept, so the file holds up to the size
    /// plus one chunk. A chunk larger than the size (a chunk ends at a flush
    /// past its limit, and with up to --old-objects events) is kept alone,
    /// with the one being written; for a small size, lower --old-objects.
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// Keep only the chunks that ended within this age, such as 30m, 6h or
    /// 1d (at least 1s).
    ///
    /// Once a chunk is past the age, those past three quarters of it are
    /// dropped too. Chunks last an eighth of the age at most; the newest complete
    /// chunk and the one being written are always kept. With --max-size
    /// too, a chunk goes when it is past either limit.
    #[arg(long, value_name = "DURATION")]
    pub max_age: Option<String>,
    /// A chunk ends at the first flush past this size (1m to 1g; default
    /// 12m; with --max-size, at most an eighth of it).
    #[arg(long, value_name = "SIZE")]
    pub chunk_size: Option<String>,
    /// A chunk ends at the first flush past this age, such as 1m or 10m (1s
    /// to 24h; default 1h; with --max-age, at most an eighth of it).
    ///
    /// Each chunk's end writes the sampled objects still live
    /// (jdk.OldObjectSample, for Mission Control's Memory Leak page) and
    /// forgets the stacks, methods, classes and threads that recent chunks
    /// did not use, so the agent's memory follows what the program does
    /// now. A shorter age shows the live set more often in a recording left
    /// running for days, at the cost of writing each chunk's stacks again.
    #[arg(long, value_name = "DURATION")]
    pub chunk_age: Option<String>,
}

/// The paths to GC roots: the agent's `roots=`, `roots_depth=` and
/// `roots_time=`.
#[derive(Debug, Default, clap::Args)]
pub struct Roots {
    /// At the end, walk the heap for the paths from GC roots to the sampled
    /// objects still live, as JFR's path-to-gc-roots=true does; and at each
    /// leak suspect the watch raises, for that site's live samples.
    ///
    /// The JVM pauses for the walk, within --roots-time (10 s by default):
    /// JVMTI's heap walk and the tags it needs cost 1.3 to 1.9 s of pause
    /// and 70 to 90 MB per million objects holding references (JDK 17, 2
    /// cores). Walking a 4 GiB heap 70% full takes about 11 s with the
    /// default budget (13% of the live samples get a path), and 22 s and
    /// 1.3 GB to the walk's limit of 16.8 M objects (42%); a 1 GiB heap
    /// takes 10 s (55%), or 17 s and 850 MB in full. Objects not reached in
    /// time have no path.
    #[arg(long)]
    pub roots: bool,
    /// The most references from a GC root the walk follows (1 to 4096;
    /// default 64); objects farther away have no path.
    #[arg(long, value_name = "N", requires = "roots")]
    pub roots_depth: Option<usize>,
    /// The longest the walk may pause the JVM, such as 10s or 2m (default
    /// 10s).
    #[arg(long, value_name = "DURATION", requires = "roots")]
    pub roots_time: Option<String>,
}
