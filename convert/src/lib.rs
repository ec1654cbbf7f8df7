//! The analyses and outputs of the `heapsampler` command line, built on
//! `jfr-reader`. Any recording reads, ours or the JDK's, by its own
//! metadata; names of the format come from `jfr_format::names`, as the
//! writer's do.
//!
//! The modules follow the data, from a recording's chunks to what is
//! written; each uses only those above it in this list (`jfr-reader` is
//! under them all, the command line over them all), so no two import each
//! other:
//!
//! - [`model`]: what the events mean, whatever reads them: which events
//!   stand for allocated bytes and where an allocation event keeps its
//!   fields ([`model::allocation`]), the text of values
//!   ([`model::text`]), which events to keep ([`model::filter`]), the event
//!   types a command names ([`model::types`]), a chunk's allocation
//!   samples with their weight, size and liveness ([`model::samples`]),
//!   what a recording says of its JVM ([`model::process`]), and what the
//!   agent's watch wrote while the program ran: the leak suspects it raised
//!   and the heap peaks it saw ([`model::watch`]).
//! - [`Error`]: why reading a recording, or making something of it, failed
//!   (its messages name the events a question reads, from `model`).
//! - [`pipeline`]: the one chunk pipeline every command reads through.
//!   Chunks are decoded on every core; an [`Analysis`](pipeline::Analysis)
//!   works on each and hands on parts, which are merged in chunk order, so
//!   what is made does not depend on the threads; memory stays bounded, the
//!   first failure in file order is the one reported, and progress is told
//!   as chunks are merged.
//! - [`analysis`]: what the events add up to, each an `Analysis` that takes
//!   an opened recording and returns data: folded stacks
//!   ([`analysis::fold`]), `top`'s groups ([`analysis::top`]) and
//!   [`analysis::diff`] of two of them, [`analysis::summary`], what live
//!   means at a recording's end ([`analysis::liveness`]), and the leak
//!   report ([`analysis::leaks`]: each group's live bytes after each
//!   collection, and those that grow).
//! - [`output`]: what is written: a recording converted, in any of five
//!   formats behind one signature ([`output::convert`]): CSV
//!   ([`output::csv`], rows made straight from the events' bytes), folded
//!   stacks, pprof heap profiles ([`output::pprof`]) and OpenTelemetry
//!   profiles made from them ([`output::otlp`]), Parquet tables of the
//!   allocation events ([`output::parquet`]); flame graphs
//!   ([`output::flame`]), the report's page ([`output::report`]), the
//!   analyses' text for a terminal ([`output::text`]), and figures for
//!   people ([`output::human`]).
//!
//! `model` is what analyses and outputs share, so that none borrows from a
//! sibling; an analysis reduces events to figures, an output writes events
//! or figures in a format (CSV is an output: events written as they come,
//! no figure between; pprof is both, its profile the figures).
//!
//! The library creates no files and prints nothing: it reads a
//! [`RecordingFile`](jfr_reader::file::RecordingFile), writes into the
//! writers it is given, tells progress to a callback and returns typed
//! errors. The command line (`src/bin/heapsampler/`) parses arguments, runs
//! JVMs and jcmd, makes paths and files, draws progress, prints, and turns
//! errors into exit codes.
//!
//! ```no_run
//! use heapsampler_cli::analysis::top::{GroupBy, Grouping, Groups, Query};
//! use heapsampler_cli::output::text;
//! use heapsampler_cli::pipeline::Pipeline;
//! use jfr_reader::file::RecordingFile;
//!
//! // `heapsampler top alloc.jfr --by class`, on every core.
//! let query = Query {
//!     by: GroupBy::Class,
//!     live: false,
//!     min_gcs: 0,
//! };
//! let file = RecordingFile::open("alloc.jfr")?;
//! let grouping = Grouping::new(query);
//! let ran = Pipeline::default().run(file, &grouping, Groups::new(query), &mut |_bytes| {})?;
//! print!("{}", text::top::render(&ran.merged.table(), 10));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;

pub mod analysis;
pub mod model;
pub mod output;
pub mod pipeline;

pub use error::Error;
