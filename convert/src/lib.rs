//! The analyses and outputs of the `heapsampler` command line, built on
//! `jfr-reader`. Any recording reads, ours or the JDK's, by its own
//! metadata; names of the format come from `jfr_format::names`, as the
//! writer's do.
//!
//! ```no_run
//! use heapsampler_convert::model::text::Flattener;
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
//! - [`model`]: the event model: which events are allocations, the text of
//!   values, filters, allocation samples.
//! - [`analysis`]: what events add up to: folded stacks, `top`, `diff`,
//!   `summary`, what live means.
//! - [`output`]: CSV rows, pprof profiles, flame graphs.
//! - [`conversion`]: `heapsampler convert`, from reading to writing.
//! - [`progress`]: progress of long reads on a terminal.
//!
//! The command line itself (`src/bin/heapsampler/`) parses arguments, runs
//! JVMs and jcmd, and prints; this library does no such thing.

mod error;

pub mod analysis;
pub mod model;
pub mod output;
pub mod pipeline;

pub use error::Error;
