//! A JFR (JDK Flight Recorder) binary encoder that any Rust program can use to
//! write recordings that JDK Mission Control and the JDK's `jfr` tool read.
//!
//! ```no_run
//! use jfr_writer::{EventTypeBuilder, FieldSpec, FieldType, Options, Recording, Unit};
//!
//! let mut recording = Recording::create("out.jfr", Options::default())?;
//! let cache_miss = recording.register(
//!     EventTypeBuilder::new("myapp.CacheMiss")
//!         .label("Cache Miss")
//!         .category(&["My Application"])
//!         .with_duration()
//!         .field(FieldSpec::new("key", FieldType::String).label("Key"))
//!         .field(FieldSpec::new("bytes", FieldType::Long).label("Bytes").unit(Unit::Bytes)),
//! )?;
//! let start = recording.clock().now();
//! let duration = recording.clock().now().0 - start.0;
//! recording
//!     .event(&cache_miss, start)
//!     .duration(duration)
//!     .string(Some("user:42"))
//!     .long(4096)
//!     .commit()?;
//! recording.close()?;
//! # Ok::<(), jfr_writer::Error>(())
//! ```
//!
//! # Layout
//!
//! Each module uses only those listed before it:
//!
//! - the `jfr-format` crate, beneath them all: the format's names,
//!   constants and primitives, shared with the reader.
//! - `sized`, `metadata`: size-prefixed records, and the metadata event
//!   that declares every class of a chunk.
//! - [`field`]: the types, units and declarations of fields.
//! - `types`: the standard classes (primitives, the `jdk.jfr` annotations,
//!   the setting classes), declared as JDK 17 declares them, and
//!   [`Setting`].
//! - [`pool`]: constant pools (threads, classes, methods, stack traces,
//!   ...), the refs that name their values, and the values' structs.
//! - [`event`]: declaring event types and value types; [`Value`].
//! - [`demote`]: events written under one type and renamed to another in
//!   the output later ([`Recording::begin_demotable`]).
//! - [`recording`]: a recording, in parts each owning one share of it:
//!   the clock (`clock`), where the bytes go ([`Sink`], and files that keep
//!   only their most recent chunks: [`Options::max_size`],
//!   [`Options::max_age`]; `sink`), the types registered (`registry`), the
//!   pooled values its users add (`constants`), chunks and flushes
//!   (`chunks`), events renamed later (`demotion`) and snapshots
//!   (`snapshots`).
//! - [`writer`]: writing an event field by field ([`Recording::event`]).
//! - [`snapshot`]: a complete copy of a recording still being written.
//! - [`events`]: the standard event types heapsampler writes, ready to
//!   register, each declared once with a typed struct that writes it.
//!
//! Every list is written once. The pooled types are one table
//! (`pooled_types!`), from which every list of them is made; each typed
//! event is one declaration, its fields each stated once, from which its
//! registration and its write are made.
//!
//! Adding an event: declare it in [`events`] as the others are (see
//! [there](events#adding-an-event)). Adding a pooled type: a row of the
//! table, its value struct in [`pool`], and its class id (see `pooled.rs`).

#[macro_use]
mod pooled;

pub mod demote;
mod error;
pub mod event;
pub mod events;
pub mod field;

mod metadata;
pub mod pool;
pub mod recording;
mod sized;
pub mod snapshot;
mod tail;
mod types;
pub mod writer;

pub use demote::DemotableEvents;
pub use error::Error;
pub use event::{EventType, EventTypeBuilder, Value, ValueType, ValueTypeBuilder};
pub use field::{FieldSpec, FieldType, Unit, ValueTypeId};
pub use metadata::ClassId;
pub use pool::*;
pub use recording::{
    Clock, FileSink, JfrFile, Options, Recording, SeekableSink, Sink, StreamSink, TICKS_PER_SECOND,
    Ticks, ZstdFile,
};
pub use types::Setting;
pub use writer::EventWriter;
