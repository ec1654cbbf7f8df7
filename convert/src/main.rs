//! `heapsampler`, the command line: one entry point for recording,
//! converting and summarising heap-allocation recordings.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use heapsampler_convert::conversion::{self, ConvertError, Format};
use heapsampler_convert::filter::{Filter, TimeBound, parse_regex};
use heapsampler_convert::summary::summarize;
use heapsampler_convert::top::{self, GroupBy, Query};
use heapsampler_convert::{attach, demo, jdk, record};
use jfr_writer::format::names::event;
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
#[command(
    name = "heapsampler",
    version,
    about,
    long_about,
    arg_required_else_help = true
)]
#[command(after_help = "\
Exit codes: 0 success, 1 bad input (a file that cannot be read), 2 bad usage.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a Java program with the agent, then say where the recording is.
    ///
    /// Example: heapsampler record -o alloc.jfr -- java -jar app.jar
    /// The program's exit code is passed through.
    Record {
        /// The recording to write.
        #[arg(short, long, default_value = "heapsampler.jfr")]
        output: PathBuf,
        #[command(flatten)]
        sampling: Sampling,
        /// The program: `java` and its arguments.
        #[arg(last = true, required = true)]
        program: Vec<String>,
    },
    /// Start recording in a running JVM (JDK 11 or later), through jcmd.
    ///
    /// The JVM goes on; stop the recording with `heapsampler detach PID`,
    /// which finishes the file. One recording at a time per JVM. The JVM
    /// must run as your user and accept agents at run time (JDK 21 and later
    /// print a warning unless started with -XX:+EnableDynamicAgentLoading).
    ///
    /// Example: heapsampler attach 4242 -o /tmp/service.jfr --interval 256k
    Attach {
        /// The JVM's process id (`jcmd` with no arguments lists them).
        pid: u32,
        /// The recording to write (default: heapsampler-PID.jfr here).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        sampling: Sampling,
        /// The jcmd to use (default: $JAVA_HOME/bin/jcmd, or the PATH's).
        #[arg(long)]
        jcmd: Option<PathBuf>,
    },
    /// Stop the recording `heapsampler attach` started, and summarise it.
    ///
    /// The agent finishes the file before detach returns.
    /// Example: heapsampler detach 4242
    Detach {
        /// The JVM's process id.
        pid: u32,
        /// The agent library (default: $HEAPSAMPLER_AGENT, or next to this program).
        #[arg(long)]
        agent: Option<PathBuf>,
        /// The jcmd to use (default: $JAVA_HOME/bin/jcmd, or the PATH's).
        #[arg(long)]
        jcmd: Option<PathBuf>,
    },
    /// Record a bundled example and show what heapsampler finds in it.
    ///
    /// Compiles and runs a small order service (a few seconds, 4 threads)
    /// that allocates hard and leaks slowly, records it with the agent,
    /// checks the recording with the JDK's `jfr summary`, converts the
    /// samples to CSV, and prints the top allocation sites and what was
    /// still live at the end. Needs a JDK (java, javac) and the agent.
    Demo {
        /// Where the recording, its CSV and the example's source go.
        #[arg(long, default_value = "heapsampler-demo")]
        dir: PathBuf,
        /// How long the example runs.
        #[arg(long, default_value_t = 5)]
        seconds: u32,
        /// The agent library (default: $HEAPSAMPLER_AGENT, or next to this program).
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
    /// Sums sample weights, the allocated bytes each sample stands for, from
    /// jdk.ObjectAllocationSample (any recording, ours or the JDK's); with
    /// --live, from heapsampler.ObjectLifetime events still live at the end:
    /// what the heap held, and who allocated it.
    Top {
        /// The recording.
        file: PathBuf,
        /// Group by allocation site (the top frame), app-site (the first
        /// frame outside the JDK: your code, not the Arrays.copyOf it
        /// called), class or thread.
        #[arg(long, value_enum, default_value_t = ByArg::Site)]
        by: ByArg,
        /// Only objects still live when the recording ended.
        #[arg(long)]
        live: bool,
        /// With --live: only objects that outlived at least this many collections.
        #[arg(long, default_value_t = 0, requires = "live")]
        min_gcs: u64,
        /// How many lines.
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: usize,
    },
    /// Convert events to CSV, or to folded stacks for flame graphs.
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
    /// bytes of jdk.ObjectAllocationSample and heapsampler.ObjectLifetime),
    /// or the number of events for types without one. Events without a
    /// stack count under the frame [unknown]. Lines are sorted by stack.
    /// The input of flamegraph.pl, inferno-flamegraph and speedscope.
    ///
    /// The filters (--from, --to, --thread, --class) apply to both formats;
    /// an event must pass all of them.
    #[command(after_long_help = "\
Examples:
  heapsampler convert alloc.jfr --events jdk.ObjectAllocationSample -o samples.csv
  heapsampler convert alloc.jfr --from 30s --to 1m --thread '^worker-' -o minute.csv
  heapsampler convert alloc.jfr --format collapsed -o - | inferno-flamegraph > alloc.svg
  heapsampler convert alloc.jfr --format collapsed --class 'byte\\[\\]' -o bytes.collapsed
  heapsampler convert recording.jfr --format collapsed --events jdk.ExecutionSample -o cpu.collapsed")]
    Convert {
        /// The recording (plain, zstd or gzip).
        file: PathBuf,
        /// Where to write: a file (`-`: standard output); for CSV of several
        /// event types, a folder.
        ///
        /// Default: next to the recording, as NAME.csv (one CSV type),
        /// NAME-csv/ (several) or NAME.collapsed. Example: -o - | less
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Only these event types, comma-separated (default: all for CSV,
        /// jdk.ObjectAllocationSample for collapsed).
        ///
        /// --format collapsed takes exactly one type, since bytes and event
        /// counts do not add up in one graph. Example: --events
        /// jdk.ObjectAllocationSample,jdk.ExecutionSample
        #[arg(long, value_delimiter = ',')]
        events: Vec<String>,
        /// Keep at most this many frames of each stack trace (the top ones,
        /// nearest the allocation).
        ///
        /// Example: --stack-depth 16
        #[arg(long, default_value_t = 64)]
        stack_depth: usize,
        /// What to write: csv, or collapsed (folded stacks for flame graphs).
        ///
        /// Example: --format collapsed -o - | flamegraph.pl > alloc.svg
        #[arg(long, value_enum, default_value_t = FormatArg::Csv)]
        format: FormatArg,
        /// Keep events that start at or after TIME.
        ///
        /// TIME is an RFC 3339 time with a zone, fractions of a second
        /// allowed (2026-11-22T10:15:00Z, 2026-11-22T11:15:00.5+01:00), or an
        /// offset from the recording's start: a number and a unit, ns, us,
        /// ms, s, m or h (500ms, 30s, 1.5m, 2h). Example: --from 30s
        #[arg(long, value_name = "TIME", value_parser = TimeBound::parse)]
        from: Option<TimeBound>,
        /// Keep events that start before TIME (the window is [from, to)).
        ///
        /// TIME takes the same forms as --from. Example: --from 1m --to 2m
        /// (the second minute), or --to 2026-11-22T10:15:00Z
        #[arg(long, value_name = "TIME", value_parser = TimeBound::parse)]
        to: Option<TimeBound>,
        /// Keep events whose thread's Java name matches REGEX.
        ///
        /// The thread is the event's eventThread (sampledThread for
        /// execution samples); a thread without a Java name is matched by its
        /// OS name; events without a thread are dropped. The regex matches
        /// anywhere in the name (anchor with ^ and $); syntax of Rust's
        /// regex crate. Example: --thread '^(main|worker-[0-3])$'
        #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
        thread: Option<Regex>,
        /// Keep events whose class's Java name matches REGEX.
        ///
        /// The class is the event's first class field (objectClass for
        /// allocations), named as Java writes it: java.lang.String, int[],
        /// java.util.HashMap$Node[]. Events without a class field are
        /// dropped. Matches anywhere in the name. Example: --class
        /// '^java\.lang\.String$' or --class '\[\]$' (arrays)
        #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
        class: Option<Regex>,
        /// Threads converting chunks to CSV at once, each writing its
        /// chunk's rows in turn (0: one per core). The output is the same
        /// with any number.
        ///
        /// A recording of one chunk, and --format collapsed, are converted
        /// on one thread. Example: --threads 1
        #[arg(long, value_name = "N", default_value_t = 0)]
        threads: usize,
    },
}

/// `--by` of `top`: the library's [`GroupBy`], as the command line spells it.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ByArg {
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

/// `--format` of `convert`: the library's [`Format`], as the command line
/// spells it.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    /// One row per event, one column per field.
    Csv,
    /// Folded stacks for flame graphs: `root;...;top value` per stack.
    Collapsed,
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Csv => Self::Csv,
            FormatArg::Collapsed => Self::Collapsed,
        }
    }
}

/// How to sample: the options `record` and `attach` share.
#[derive(Debug, clap::Args)]
struct Sampling {
    /// Mean bytes between samples (k, m, g suffixes; 0: every allocation).
    #[arg(long, default_value = "512k")]
    interval: String,
    /// Stack frames kept per sample.
    #[arg(long, default_value_t = 64)]
    depth: usize,
    /// Do not track whether sampled objects stay live.
    #[arg(long)]
    no_live: bool,
    /// At most about this many samples per second.
    #[arg(long)]
    rate: Option<f64>,
    /// The agent library (default: $HEAPSAMPLER_AGENT, or next to this program).
    #[arg(long)]
    agent: Option<PathBuf>,
}

impl Sampling {
    /// The agent's option string, checked by the agent's own parser so that
    /// a bad value is reported here, not on the JVM's stderr.
    fn agent_options(&self, output: &Path) -> Result<String, String> {
        let options =
            record::agent_options(output, &self.interval, self.depth, !self.no_live, self.rate);
        heapsampler_core::options::Options::parse(Some(&options), std::process::id())
            .map_err(|e| e.to_string())?;
        Ok(options)
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("heapsampler: {message}");
    ExitCode::from(1)
}

fn run_attach(
    pid: u32,
    output: Option<PathBuf>,
    sampling: &Sampling,
    jcmd: Option<&Path>,
) -> ExitCode {
    // The JVM has its own working directory: give it an absolute path.
    let output = output.unwrap_or_else(|| PathBuf::from(format!("heapsampler-{pid}.jfr")));
    let output = match std::path::absolute(&output) {
        Ok(path) => path,
        Err(e) => return fail(format_args!("{}: {e}", output.display())),
    };
    let result = (|| {
        let jcmd = jdk::find_tool("jcmd", jcmd)?;
        let agent = record::find_agent(sampling.agent.as_deref())?;
        let options = sampling.agent_options(&output)?;
        attach::attach(&jcmd, pid, &agent, &options, &output)
    })();
    match result {
        Ok(()) => {
            eprintln!(
                "heapsampler: recording JVM {pid} to {}; stop with `heapsampler detach {pid}`",
                output.display()
            );
            ExitCode::SUCCESS
        }
        Err(message) => fail(message),
    }
}

fn run_detach(pid: u32, agent: Option<&Path>, jcmd: Option<&Path>) -> ExitCode {
    let result = (|| {
        let jcmd = jdk::find_tool("jcmd", jcmd)?;
        let agent = record::find_agent(agent)?;
        attach::detach(&jcmd, pid, &agent)
    })();
    match result {
        Ok(Some(recording)) => {
            match record::report(&recording) {
                Ok(report) => report
                    .lines()
                    .for_each(|line| eprintln!("heapsampler: {line}")),
                Err(error) => {
                    eprintln!("heapsampler: stopped, but the recording cannot be read: {error}")
                }
            }
            ExitCode::SUCCESS
        }
        Ok(None) => {
            eprintln!("heapsampler: stopped the recording in JVM {pid}");
            ExitCode::SUCCESS
        }
        Err(message) => fail(message),
    }
}

fn run_demo(dir: &Path, seconds: u32, agent: Option<&Path>) -> ExitCode {
    let files = demo::Files::in_dir(dir);
    let agent = match record::find_agent(agent) {
        Ok(agent) => agent,
        Err(message) => return fail(message),
    };
    println!(
        "Recording a small order service for {seconds} s with the agent ({})...",
        agent.display()
    );
    match demo::record_workload(&files, &agent, seconds) {
        Ok(said) => println!("  the service said: {said}"),
        Err(message) => return fail(message),
    }
    match record::report(&files.recording) {
        Ok(report) => report.lines().for_each(|line| println!("  {line}")),
        Err(message) => return fail(format_args!("the recording cannot be read: {message}")),
    }
    match demo::check_with_jdk(&files.recording) {
        Some(Ok(events)) => println!("  the JDK's `jfr summary` reads it: {events} events"),
        Some(Err(message)) => {
            return fail(format_args!(
                "the JDK's jfr cannot read the recording: {message}"
            ));
        }
        None => println!("  (no `jfr` tool found to check it with the JDK's own parser)"),
    }
    let csv = conversion::Options {
        output: Some(files.csv.clone()),
        events: vec![event::OBJECT_ALLOCATION_SAMPLE.to_owned()],
        stack_depth: 64,
        format: Format::Csv,
        filter: Filter::default(),
        threads: 0,
    };
    match conversion::convert(&files.recording, &csv) {
        Ok(outcome) => println!(
            "  samples as CSV: {} ({} rows)",
            files.csv.display(),
            outcome.events
        ),
        Err(error) => return fail(error),
    }
    // Objects that outlived two collections: recent garbage not yet
    // collected is "live" too, and would hide the leak.
    for (live, min_gcs, title) in [
        (
            false,
            0,
            "Where the bytes were allocated (the first frame outside the JDK, estimated bytes):",
        ),
        (
            true,
            2,
            "Still live at the end after outliving 2 or more collections (a leak shows here):",
        ),
    ] {
        let query = Query {
            by: GroupBy::AppSite,
            live,
            min_gcs,
        };
        match top::top(&files.recording, query) {
            Ok(table) => {
                println!("\n{title}");
                print!("{}", table.render(if live { 5 } else { 10 }));
            }
            Err(error) => return fail(error),
        }
    }
    let recording = files.recording.display();
    println!(
        "\nNext: open {recording} in JDK Mission Control, or try\n  \
         heapsampler top {recording} --by site    (the top frame, JDK code included)\n  \
         heapsampler top {recording} --by class\n  \
         heapsampler top {recording} --live\n  \
         heapsampler convert {recording} --format collapsed -o {}/demo.collapsed",
        files.dir.display()
    );
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Summary { file } => match summarize(&file) {
            Ok(summary) => {
                print!("{}", summary.render(&file));
                if let Some((offset, bytes)) = summary.truncated {
                    eprintln!(
                        "heapsampler: warning: {}: the last chunk (at byte {offset}) is cut short after {bytes} bytes; \
                         the summary covers the complete chunks before it",
                        file.display()
                    );
                }
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("heapsampler: {error}");
                ExitCode::from(1)
            }
        },
        Command::Record {
            output,
            sampling,
            program,
        } => {
            let result = record::find_agent(sampling.agent.as_deref()).and_then(|agent| {
                let options = sampling.agent_options(&output)?;
                record::run(&agent, &options, &program)
            });
            match result {
                Ok(code) => {
                    match record::report(&output) {
                        Ok(report) => report
                            .lines()
                            .for_each(|line| eprintln!("heapsampler: {line}")),
                        Err(error) => eprintln!("heapsampler: no readable recording: {error}"),
                    }
                    ExitCode::from(code.clamp(0, 255) as u8)
                }
                Err(message) => {
                    eprintln!("heapsampler: {message}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Attach {
            pid,
            output,
            sampling,
            jcmd,
        } => run_attach(pid, output, &sampling, jcmd.as_deref()),
        Command::Detach { pid, agent, jcmd } => run_detach(pid, agent.as_deref(), jcmd.as_deref()),
        Command::Demo {
            dir,
            seconds,
            agent,
        } => run_demo(&dir, seconds, agent.as_deref()),
        Command::Top {
            file,
            by,
            live,
            min_gcs,
            limit,
        } => {
            let query = Query {
                by: by.into(),
                live,
                min_gcs,
            };
            match top::top(&file, query) {
                Ok(table) if table.events == 0 => {
                    // Not an empty table: the question does not fit the file.
                    eprintln!(
                        "heapsampler: {} has no {} events: {}",
                        file.display(),
                        query.event_type(),
                        query.without_events()
                    );
                    ExitCode::from(1)
                }
                Ok(table) => {
                    print!("{}", table.render(limit));
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("heapsampler: {error}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Convert {
            file,
            output,
            events,
            stack_depth,
            format,
            from,
            to,
            thread,
            class,
            threads,
        } => {
            let options = conversion::Options {
                output,
                events,
                stack_depth,
                format: format.into(),
                filter: Filter {
                    from,
                    to,
                    thread,
                    class,
                },
                threads,
            };
            match conversion::convert(&file, &options) {
                Ok(outcome) => {
                    for warning in outcome.warnings(&file) {
                        eprintln!("heapsampler: {warning}");
                    }
                    ExitCode::SUCCESS
                }
                Err(ConvertError::Usage(message)) => {
                    eprintln!("heapsampler: {message}");
                    ExitCode::from(2)
                }
                Err(ConvertError::Failed(message)) => {
                    eprintln!("heapsampler: {message}");
                    ExitCode::from(1)
                }
            }
        }
    }
}
