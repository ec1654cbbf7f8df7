//! `heapsampler`, the command line: one entry point for recording, attaching,
//! converting and summarising heap-allocation recordings.

use clap::Parser;

/// A low-overhead heap-allocation profiler for the JVM.
///
/// heapsampler records the JVM's sampled allocations (JEP 331) into JFR files
/// that JDK Mission Control and `jfr print` open, and tells for each sampled
/// object whether it is still live.
#[derive(Debug, Parser)]
#[command(name = "heapsampler", version, about, long_about)]
#[command(after_help = "\
Not available yet: `record`, `attach`, `detach`, `demo`, `convert`, `summary` and `top`.
They arrive with the agent and the converter; see the project's README.")]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    eprintln!("heapsampler: no commands are available yet; see `heapsampler --help`");
    std::process::exit(2);
}
