//! What can go wrong writing a recording.

use std::path::PathBuf;

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
    /// its place ([`EventWriter::field`](crate::EventWriter::field)).
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
    /// A pooled value's ref names no value the recording holds: it came
    /// from another recording, or [`Recording::drop_unused`](crate::Recording::drop_unused) dropped its
    /// value.
    #[error(
        "{event}: field {field} refers to a value the recording does not hold \
         (from another recording, or dropped as unused)"
    )]
    ForeignReference {
        /// The event type.
        event: String,
        /// The field.
        field: String,
    },
    /// A field held a constant made in an earlier chunk: constants live for
    /// the chunk they are made in ([`Recording::constant`](crate::Recording::constant)).
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
    /// Events could not be written demotable, or demoted
    /// ([`Recording::begin_demotable`](crate::Recording::begin_demotable)).
    #[error("cannot write {event} demotable to {demoted}: {reason}")]
    Demotion {
        /// The event type written demotable.
        event: String,
        /// The type it is demoted to.
        demoted: String,
        /// Why not.
        reason: &'static str,
    },
}
