//! The analyses and outputs of the `heapsampler` command line, built on
//! `jfr-reader`. Any recording reads, ours or the JDK's, by its own
//! metadata; names of the format come from `jfr_format::names`, as the
//! writer's do.
//!
//! ```no_run
//! use heapsampler_convert::export::Flattener;
//! use jfr_reader::chunk::Chunk;
//! use jfr_reader::file::RecordingFile;
//! use jfr_format::names::{event, field};
//!
//! let mut file = RecordingFile::open("alloc.jfr")?;
//! while let Some(raw) = file.next_chunk()? {
//!     let chunk = Chunk::read(&raw.bytes, raw.offset)?;
//!     let Some(samples) = chunk.metadata.class_named(event::OBJECT_ALLOCATION_SAMPLE) else {
//!         continue;
//!     };
//!     let class = samples.fields.iter().position(|f| f.name == field::OBJECT_CLASS);
//!     let text = Flattener::new(&chunk, 64);
//!     for sample in chunk.events() {
//!         let sample = sample?;
//!         if sample.type_id == samples.id {
//!             println!("{}", class.map(|i| text.text(&sample.fields[i])).unwrap_or_default());
//!         }
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`allocation`]: which events stand for allocated bytes, by which field.
//! - [`summary`]: `heapsampler summary`.
//! - [`liveness`]: what "live" means in a recording (collected first or
//!   not), and whether its JVM ran out of heap.
//! - [`conversion`]: `heapsampler convert`, from reading to writing.
//! - [`export`]: the text of values, as every output shows them.
//! - [`rows`]: CSV rows, made as the event decoder reads the fields.
//! - [`collapsed`]: events to folded stacks, for flame graphs.
//! - [`flame`]: `heapsampler flame`, folded stacks as an interactive flame
//!   graph.
//! - [`pprof`]: allocation samples to a heap profile of `go tool pprof`.
//! - [`filter`]: which events to keep (time window, thread, class).
//! - [`progress`]: progress of long reads on a terminal.
//! - [`samples`]: the allocation samples of a recording, one at a time,
//!   with their weight, size and liveness.
//! - [`top`]: `heapsampler top`, where the bytes go, with 95% intervals.
//! - [`diff`]: `heapsampler diff`, what changed between two recordings.
//!
//! The command line itself (`src/bin/heapsampler/`) parses arguments, runs
//! JVMs and jcmd, and prints; this library does no such thing.

pub mod allocation;
pub mod collapsed;
pub mod conversion;
pub mod diff;
pub mod export;
pub mod filter;
pub mod flame;
pub mod liveness;
pub mod pprof;
pub mod progress;
pub mod rows;
pub mod samples;
pub mod summary;
pub mod top;
