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
//! - [`format`](mod@format): the format's constants and primitives, shared with the reader.
//! - [`metadata`] and [`types`]: the type system, with the JDK's own types
//!   declared exactly as JDK 17 declares them.
//! - [`pool`]: constant pools (threads, classes, methods, stack traces, ...).
//! - [`event`]: declaring event types and writing events.
//! - [`recording`]: chunks, flushes and sinks, and files that keep only
//!   their most recent chunks ([`Options::max_size`], [`Options::max_age`]).
//! - [`snapshot`]: a complete copy of a recording still being written.
//! - [`events`]: the standard event types heapsampler writes, ready to
//!   register, each with a typed struct that writes it field by field.

pub mod event;
pub mod events;
pub use jfr_format as format;
pub mod metadata;
pub mod pool;
pub mod recording;
pub mod snapshot;
pub mod types;

use std::path::PathBuf;

pub use event::{
    EventType, EventTypeBuilder, EventWriter, FieldSpec, FieldType, Setting, Unit, Value,
    ValueType, ValueTypeBuilder, ValueTypeId,
};
pub use pool::{
    Class, ClassLoader, ClassLoaderRef, ClassRef, ConstantRef, FrameType, Marked, Method,
    MethodRef, Module, ModuleRef, Package, PackageRef, PoolRef, PoolSizes, StackFrame, StackTrace,
    StackTraceField, StackTraceRef, StringRef, SymbolRef, Thread, ThreadGroup, ThreadGroupRef,
    ThreadRef,
};
pub use recording::{
    Clock, FileSink, JfrFile, Options, Recording, SeekableSink, Sink, StreamSink, TICKS_PER_SECOND,
    Ticks, ZstdFile,
};

/// What can go wrong writing a recording.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing the output failed.
    #[error("writing the recording failed: {0}")]
    Io(#[from] std::io::Error),
    /// The output file could not be created.
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An event type of this name is already registered.
    #[error("event type {name} is already registered")]
    DuplicateType {
        /// The name.
        name: String,
    },
    /// A field was written with a type other than the declared one (or after
    /// the last field).
    #[error("{event}: field {field} is declared {declared:?} but was written as {written}")]
    FieldMismatch {
        /// The event type.
        event: String,
        /// The field.
        field: String,
        /// Its declared type (`None`: the event has no more fields).
        declared: Option<String>,
        /// The type written.
        written: String,
    },
    /// A field was written, named as another field than the one declared at
    /// its place ([`EventWriter::field`]).
    #[error("{event}: field {declared} is declared here, but field {written} was written")]
    FieldOrder {
        /// The event type.
        event: String,
        /// The field declared at that place.
        declared: String,
        /// The field the write named.
        written: String,
    },
    /// A field was declared as an array of pooled values (threads, classes,
    /// ...), which the JDK's parser cannot read.
    #[error("{type_name}: field {field} is an array of pooled values, which the JDK cannot read")]
    PooledArray {
        /// The event or value type.
        type_name: String,
        /// The field.
        field: String,
    },
    /// An event was committed before all its fields were written.
    #[error("{event}: field {field} was not written")]
    MissingField {
        /// The event type.
        event: String,
        /// The first field not written.
        field: String,
    },
    /// A pooled value's handle came from another recording.
    #[error("{event}: field {field} refers to a value from another recording")]
    ForeignReference {
        /// The event type.
        event: String,
        /// The field.
        field: String,
    },
    /// A field held a constant made in an earlier chunk: constants live for
    /// the chunk they are made in ([`Recording::constant`]).
    #[error("{event}: field {field} refers to a constant of an earlier chunk")]
    StaleConstant {
        /// The event or value type.
        event: String,
        /// The field.
        field: String,
    },
    /// A simple type was declared without exactly one field.
    #[error("{type_name} is declared simple but has {fields} fields: a simple type has one")]
    NotSimple {
        /// The value type.
        type_name: String,
        /// How many fields it has.
        fields: usize,
    },
    /// The event type was registered with another recording.
    #[error("event type {event} belongs to another recording")]
    ForeignEventType {
        /// The event type.
        event: String,
    },
}
