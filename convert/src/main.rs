//! `heapsampler`, the command line: one entry point for recording,
//! converting and summarising heap-allocation recordings.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use heapsampler_convert::summary::summarize;

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
Coming with later releases: record, attach, detach, demo, convert and top.
Exit codes: 0 success, 1 bad input (a file that cannot be read), 2 bad usage.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Summarise a recording: chunks, time span, events by type, and for
    /// heapsampler recordings the agent's counters (samples, lost, waits).
    ///
    /// Reads any JFR recording, ours or the JDK's, plain or compressed with
    /// zstd or gzip (recognised by content, not by name).
    Summary {
        /// The recording.
        file: PathBuf,
    },
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
    }
}
