//! `heapsampler`, the command line: one entry point for recording,
//! converting and summarising heap-allocation recordings.

use std::path::PathBuf;
use std::process::ExitCode;

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use clap::{Parser, Subcommand};
use heapsampler_convert::export::{ExportError, write_csv};
use heapsampler_convert::read::chunk::Chunk;
use heapsampler_convert::read::file::{FileError, RecordingFile};
use heapsampler_convert::record;
use heapsampler_convert::summary::summarize;
use heapsampler_convert::top::{self, GroupBy, Query};

/// A low-overhead heap-allocation profiler for the JVM.
///
/// heapsampler records the JVM's sampled allocations (JEP 331) into JFR files
/// that JDK Mission Control and `jfr print` open, and tells for each sampled
/// object whether it is still live. Record with the agent:
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
Coming with later releases: record, attach, detach, demo and top.
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
        /// The program: `java` and its arguments.
        #[arg(last = true, required = true)]
        program: Vec<String>,
    },
    /// Summarise a recording: chunks, time span, events by type, and for
    /// heapsampler recordings the agent's counters (samples, lost, waits).
    ///
    /// Reads any JFR recording, ours or the JDK's, plain or compressed with
    /// zstd or gzip (recognised by content, not by name).
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
        /// Group by allocation site (the top frame), class or thread.
        #[arg(long, value_enum, default_value_t = GroupBy::Site)]
        by: GroupBy,
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
    /// Convert events to CSV: one row per event, one column per field.
    ///
    /// Threads become their names, classes their Java names (int[],
    /// java.lang.String), stack traces their frames top first as
    /// pkg.Class.method(line) joined with ';', times ISO-8601 UTC with
    /// nanoseconds, durations nanoseconds. With one event type the output is
    /// one CSV file; with several, a folder with one TYPE.csv each.
    Convert {
        /// The recording (plain, zstd or gzip).
        file: PathBuf,
        /// Where to write: a file for one event type (`-`: standard
        /// output), a folder for several. Default: next to the recording.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Only these event types, comma-separated (default: all).
        #[arg(long, value_delimiter = ',')]
        events: Vec<String>,
        /// Keep at most this many frames of each stack trace.
        #[arg(long, default_value_t = 64)]
        stack_depth: usize,
    },
}

/// Where CSV goes: one writer for a single event type, or a folder with a
/// file per type.
enum Destination {
    Single(Option<Box<dyn Write>>),
    Folder(PathBuf),
}

fn create(path: &std::path::Path) -> Result<Box<dyn Write>, String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(Box::new(BufWriter::new(file)))
}

fn convert(
    file: &std::path::Path,
    output: Option<PathBuf>,
    events: &[String],
    stack_depth: usize,
) -> Result<(), String> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("recording");
    let stem = name.split('.').next().unwrap_or("recording");
    let mut destination = match (output, events.len() == 1) {
        (Some(path), true) if path.as_os_str() == "-" => {
            Destination::Single(Some(Box::new(BufWriter::new(io::stdout()))))
        }
        (Some(path), false) if path.as_os_str() == "-" => {
            return Err(
                "several event types cannot go to standard output: name one with --events"
                    .to_owned(),
            );
        }
        (Some(path), true) => Destination::Single(Some(create(&path)?)),
        (None, true) => {
            Destination::Single(Some(create(&file.with_file_name(format!("{stem}.csv")))?))
        }
        (Some(folder), false) => Destination::Folder(folder),
        (None, false) => Destination::Folder(file.with_file_name(format!("{stem}-csv"))),
    };
    if let Destination::Folder(folder) = &destination {
        std::fs::create_dir_all(folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    }
    let mut open = |type_name: &str| -> io::Result<Box<dyn Write>> {
        match &mut destination {
            Destination::Single(writer) => writer
                .take()
                .ok_or_else(|| io::Error::other("one output for one event type")),
            Destination::Folder(folder) => Ok(Box::new(BufWriter::new(File::create(
                folder.join(format!("{type_name}.csv")),
            )?))),
        }
    };
    let wanted = |type_name: &str| events.is_empty() || events.iter().any(|e| e == type_name);
    let mut writers: HashMap<String, csv::Writer<Box<dyn Write>>> = HashMap::new();
    let mut rows = HashMap::new();
    let mut recording = RecordingFile::open(file).map_err(|e| e.to_string())?;
    while let Some(raw) = recording.next_chunk().map_err(|e| e.to_string())? {
        let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(|source| {
            FileError::Malformed {
                path: file.to_owned(),
                source,
            }
            .to_string()
        })?;
        write_csv(
            &chunk,
            &wanted,
            stack_depth,
            &mut writers,
            &mut open,
            &mut rows,
        )
        .map_err(|e: ExportError| format!("{}: {e}", file.display()))?;
    }
    for writer in writers.values_mut() {
        writer.flush().map_err(|e| format!("writing CSV: {e}"))?;
    }
    if let Some((offset, bytes)) = recording.truncated() {
        eprintln!(
            "heapsampler: warning: {}: the last chunk (at byte {offset}) is cut short after {bytes} bytes; \
             converted the complete chunks before it",
            file.display()
        );
    }
    if rows.is_empty() {
        eprintln!(
            "heapsampler: {}: no events of the requested types",
            file.display()
        );
    }
    Ok(())
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
            interval,
            depth,
            no_live,
            rate,
            agent,
            program,
        } => {
            let result = record::find_agent(agent.as_deref()).and_then(|agent| {
                let options = record::agent_options(&output, &interval, depth, !no_live, rate);
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
        Command::Top {
            file,
            by,
            live,
            min_gcs,
            limit,
        } => match top::top(&file, Query { by, live, min_gcs }) {
            Ok(table) => {
                print!("{}", table.render(limit));
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("heapsampler: {error}");
                ExitCode::from(1)
            }
        },
        Command::Convert {
            file,
            output,
            events,
            stack_depth,
        } => match convert(&file, output, &events, stack_depth) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("heapsampler: {message}");
                ExitCode::from(1)
            }
        },
    }
}
