//! The analyses and outputs of the `heapsampler` command line, built on
//! `jfr-reader`. Any recording reads, ours or the JDK's, by its own
//! metadata; names of the format come from `jfr_format::names`, as the
//! writer's do.
//!
//! The modules follow the data, from a recording's chunks to what is
//! written:
//!
//! - [`pipeline`]: the one chunk pipeline every command reads through.
//!   Chunks are decoded on every core; an [`Analysis`](pipeline::Analysis)
//!   works on each and hands on parts, which are merged in chunk order, so
//!   what is made does not depend on the threads; memory stays bounded, the
//!   first failure in file order is the one reported, and progress is told
//!   as chunks are merged.
//! - [`model`]: what the events mean, whatever reads them: which events
//!   stand for allocated bytes ([`model::allocation`]), the text of values
//!   ([`model::text`]), which events to keep ([`model::filter`]), the event
//!   types a command names ([`model::types`]), a chunk's allocation
//!   samples with their weight, size and liveness ([`model::samples`]), and
//!   what a recording says of its JVM ([`model::process`]).
//! - [`analysis`]: what the events add up to, each an `Analysis`: folded
//!   stacks ([`analysis::fold`]), `top`'s groups ([`analysis::top`]) and
//!   [`analysis::diff`] of two of them, [`analysis::summary`], and what
//!   live means at a recording's end ([`analysis::liveness`]). The leak
//!   report (each site's live bytes at each collection) will be one more: a
//!   chunk's collections as its part, appended in chunk order.
//! - [`output`]: what is written: CSV ([`output::csv`], rows made straight
//!   from the events' bytes), pprof heap profiles ([`output::pprof`]) and
//!   OpenTelemetry profiles made from them ([`output::otlp`]), Parquet
//!   tables of the allocation events ([`output::parquet`]), flame graphs
//!   ([`output::flame`]), and figures for people
//!   ([`output::human`]).
//! - [`Error`]: why reading a recording, or making something of it, failed.
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
//! use heapsampler_convert::analysis::top::{GroupBy, Grouping, Groups, Query};
//! use heapsampler_convert::pipeline::Pipeline;
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
//! print!("{}", ran.merged.table().render(10));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;

pub mod analysis;
pub mod model;
pub mod output;
pub mod pipeline;

pub use error::Error;
