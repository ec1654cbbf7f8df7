//! Writing events: [`crate::Recording::event`] and the [`EventWriter`] it
//! returns.
//!
//! An event is written one call per field, in declaration order, each
//! checked against the declared type, and a [`EventWriter::commit`]. A write
//! may name its field first ([`EventWriter::field`]), so that a field written
//! in another field's place is caught even when both have one type. A wrong
//! or missing field is an error at commit and the event is not written, so a
//! mistake can never produce a file that readers misparse. Pooled values are
//! passed as the `*Ref` handles the recording's pools hand out; keys are
//! never the caller's arithmetic.

use std::sync::atomic::Ordering;

use crate::error::Error;
use crate::event::{EventType, Mismatch, Value, write_value};
use crate::field::{FieldType, Slot};
use crate::pool::{ConstantRef, PoolRef, StackTraceField, StringRef};
use crate::recording::{Recording, Sink, Ticks};
use crate::sized::sized_len;
use jfr_format::{
    MAX_VARINT_LEN, StringEncoding, varint_len, write_padded_varint, write_string, write_varint,
    write_varint_i32,
};

impl<S: Sink> Recording<S> {
    /// Starts writing an event of type `event_type` that started at
    /// `start_time`. Write its fields in order, then commit.
    #[inline]
    pub fn event<'r>(
        &'r mut self,
        event_type: &'r EventType,
        start_time: Ticks,
    ) -> EventWriter<'r, S> {
        EventWriter::new(self, event_type, start_time, 0)
    }

    /// Starts an event as [`Recording::event`] does, for a typed event's
    /// write ([`crate::events`]), which `write` names: one chain of calls
    /// from here to the commit, naming every field, the same fields in the
    /// same order each time. Its first event of a type is checked field by
    /// field, as any event is; once one commits, the write is known to
    /// write that type right, and its later events of the type skip the
    /// names' and types' checks, which cost more than writing the values.
    /// Values are still checked: refs of another recording or of dropped
    /// values, stale constants.
    #[inline]
    pub(crate) fn typed_event<'r>(
        &'r mut self,
        event_type: &'r EventType,
        start_time: Ticks,
        write: TypedWrite,
    ) -> EventWriter<'r, S> {
        EventWriter::new(self, event_type, start_time, write.0)
    }
}

/// A typed event's write ([`crate::events`]), told from the others by a
/// hash of its struct's path, made at compile time: a constant the checks
/// compare with no load (an address of another crate's static would need
/// one each time).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TypedWrite(usize);

impl TypedWrite {
    /// The write of the struct at `path` (`module::Struct`): the path's
    /// FNV-1a hash, cut to 31 bits so that the checks compare it as an
    /// immediate operand, and never 0 (no typed write). Among the few dozen
    /// typed events, two sharing one is a chance in millions, and would
    /// only let one's write skip the checks given the other's type.
    pub(crate) const fn of(path: &str) -> Self {
        let bytes = path.as_bytes();
        let mut hash: u32 = 0x811c_9dc5;
        let mut i = 0;
        while i < bytes.len() {
            hash ^= bytes[i] as u32;
            hash = hash.wrapping_mul(0x0100_0193);
            i += 1;
        }
        let hash = hash & 0x7fff_ffff;
        Self(if hash == 0 { 1 } else { hash as usize })
    }
}

/// What went wrong writing an event, kept small (the writer is moved on every
/// call) and turned into an [`Error`] at commit.
#[derive(Debug, Clone, Copy)]
enum Failure {
    /// Field `index` (after `startTime`) was written as `written` (`None`:
    /// as an array, or a struct or array whose contents do not match).
    Mismatch {
        index: usize,
        written: Option<FieldType>,
    },
    /// Field `index` was named `written` ([`EventWriter::field`]) but is
    /// declared with another name.
    Misnamed { index: usize, written: &'static str },
    /// Field `index` holds a pooled value from another recording.
    ForeignReference { index: usize },
    /// Field `index` holds a constant of an earlier chunk.
    StaleConstant { index: usize },
    /// The event type was registered with another recording.
    ForeignEventType,
}

/// Writes one event, field by field. Dropping it without [`commit`](Self::commit)
/// discards the event.
#[must_use = "an event is written only when committed"]
pub struct EventWriter<'r, S: Sink> {
    recording: &'r mut Recording<S>,
    event_type: &'r EventType,
    /// Where this event's size placeholder is in the event buffer.
    start: usize,
    /// The index in `event_type.fields` of the next field.
    next: usize,
    /// Whether the fields' names and types are known right: the event is
    /// written by a typed write that wrote this event type right before.
    layout_known: bool,
    /// The typed write's identity ([`TypedWrite`]; 0: not a typed write).
    typed_write: usize,
    /// Whether its type id is written demotable
    /// ([`Recording::begin_demotable`]).
    demotable: bool,
    failure: Option<Failure>,
    committed: bool,
}

// The writer moves by value through each call of a chain; the writers of
// single fields are inlined always, so that a chain keeps it in registers
// instead of copying it through every call.
impl<'r, S: Sink> EventWriter<'r, S> {
    /// `typed_write` is a typed write's identity, or 0.
    #[inline(always)]
    pub(crate) fn new(
        recording: &'r mut Recording<S>,
        event_type: &'r EventType,
        start_time: Ticks,
        typed_write: usize,
    ) -> Self {
        let start = recording.events.len();
        let failure =
            (event_type.recording_id != recording.id).then_some(Failure::ForeignEventType);
        // One compare for every event: `writing` is 0 (no class id) but
        // while demotable events are written.
        let demotable =
            event_type.id.get() == recording.demotions.writing && recording.tail_from.is_none();
        let buffer = &mut recording.events;
        buffer.push(0); // size placeholder, patched at commit
        if demotable {
            // A fixed width, which the type it is demoted to fits.
            let mut id = [0u8; MAX_VARINT_LEN];
            let id = &mut id[..recording.demotions.width];
            write_padded_varint(id, event_type.id.get());
            buffer.extend_from_slice(id);
        } else {
            write_varint(buffer, event_type.id.get());
        }
        write_varint(buffer, start_time.0 as u64);
        // Relaxed: the identity stands for code that never changes; a stale
        // 0 only costs the checks.
        let layout_known = typed_write != 0
            && failure.is_none()
            && event_type.typed_write.load(Ordering::Relaxed) == typed_write;
        Self {
            recording,
            event_type,
            start,
            next: 0,
            layout_known,
            typed_write,
            demotable,
            failure,
            committed: false,
        }
    }

    /// Checks that the next field is a single value of type `expected`; on a
    /// mismatch records the first failure and returns false.
    #[inline(always)]
    fn expect(&mut self, expected: FieldType) -> bool {
        if self.layout_known {
            self.next += 1;
            return true;
        }
        if self.failure.is_none()
            && self.event_type.fields.get(self.next) == Some(&Slot::one(expected))
        {
            self.next += 1;
            return true;
        }
        self.failure.get_or_insert(Failure::Mismatch {
            index: self.next,
            written: Some(expected),
        });
        false
    }

    /// The full error for a failure.
    fn error(&self, failure: Failure) -> Error {
        let event = self.event_type.name.to_string();
        // `field_names` starts with `startTime`; `fields` after it.
        let name = |index: usize| {
            self.event_type
                .field_names
                .get(index + 1)
                .cloned()
                .unwrap_or_else(|| "(none: all fields are written)".to_owned())
        };
        match failure {
            Failure::Mismatch { index, written } => Error::FieldMismatch {
                event,
                field: name(index),
                declared: self.event_type.fields.get(index).map(|slot| {
                    let array = if slot.array { "[]" } else { "" };
                    format!("{:?}{array}", slot.field_type)
                }),
                written: written.map_or_else(
                    || "an array, struct or array element of another type".to_owned(),
                    |w| format!("{w:?}"),
                ),
            },
            Failure::Misnamed { index, written } => Error::FieldOrder {
                event,
                declared: name(index),
                written: written.to_owned(),
            },
            Failure::ForeignReference { index } => Error::ForeignReference {
                event,
                field: name(index),
            },
            Failure::StaleConstant { index } => Error::StaleConstant {
                event,
                field: name(index),
            },
            Failure::ForeignEventType => Error::ForeignEventType { event },
        }
    }

    #[inline(always)]
    fn pooled(mut self, expected: FieldType, reference: Option<PoolRef>) -> Self {
        if self.expect(expected) {
            match reference {
                None => self.recording.events.push(0),
                Some(reference) if self.recording.pools.mark(reference) => {
                    write_varint(&mut self.recording.events, reference.key());
                }
                Some(_) => {
                    self.failure = Some(Failure::ForeignReference {
                        index: self.next - 1,
                    });
                }
            }
        }
        self
    }

    /// Names the field the next call writes, for a check: if the field
    /// declared at this place has another name, the commit fails with
    /// [`Error::FieldOrder`], naming both. Typed events (see
    /// [`crate::events`]) name every field, so that two fields of one type
    /// written in each other's place fail instead of swapping silently.
    #[inline(always)]
    pub fn field(mut self, name: &'static str) -> Self {
        // `field_names` starts with `startTime`; `fields` after it.
        if !self.layout_known
            && self.failure.is_none()
            && self
                .event_type
                .field_names
                .get(self.next + 1)
                .map(String::as_str)
                != Some(name)
        {
            self.failure = Some(Failure::Misnamed {
                index: self.next,
                written: name,
            });
        }
        self
    }

    /// The `duration` field, in ticks.
    #[inline(always)]
    pub fn duration(self, ticks: i64) -> Self {
        self.long(ticks)
    }

    /// A `long` field.
    #[inline(always)]
    pub fn long(mut self, value: i64) -> Self {
        if self.expect(FieldType::Long) {
            write_varint(&mut self.recording.events, value as u64);
        }
        self
    }

    /// An `int` field.
    #[inline(always)]
    pub fn int(mut self, value: i32) -> Self {
        if self.expect(FieldType::Int) {
            write_varint_i32(&mut self.recording.events, value);
        }
        self
    }

    /// A `short` field.
    pub fn short(mut self, value: i16) -> Self {
        if self.expect(FieldType::Short) {
            write_varint(&mut self.recording.events, value as u16 as u64);
        }
        self
    }

    /// A `char` field: one UTF-16 code unit.
    pub fn char(mut self, value: u16) -> Self {
        if self.expect(FieldType::Char) {
            write_varint(&mut self.recording.events, value as u64);
        }
        self
    }

    /// A `byte` field.
    pub fn byte(mut self, value: i8) -> Self {
        if self.expect(FieldType::Byte) {
            self.recording.events.push(value as u8);
        }
        self
    }

    /// A `boolean` field.
    #[inline(always)]
    pub fn boolean(mut self, value: bool) -> Self {
        if self.expect(FieldType::Boolean) {
            self.recording.events.push(value as u8);
        }
        self
    }

    /// A `float` field.
    pub fn float(mut self, value: f32) -> Self {
        if self.expect(FieldType::Float) {
            self.recording
                .events
                .extend_from_slice(&value.to_be_bytes());
        }
        self
    }

    /// A `double` field.
    pub fn double(mut self, value: f64) -> Self {
        if self.expect(FieldType::Double) {
            self.recording
                .events
                .extend_from_slice(&value.to_be_bytes());
        }
        self
    }

    /// A `String` field, written inline; `None` is `null`.
    pub fn string(mut self, value: Option<&str>) -> Self {
        if self.expect(FieldType::String) {
            write_string(&mut self.recording.events, value);
        }
        self
    }

    /// A `String` field, written as a reference to the String pool: worth it
    /// for a value repeated in many events.
    pub fn pooled_string(mut self, value: StringRef) -> Self {
        if self.expect(FieldType::String) {
            if self.recording.pools.mark(PoolRef::String(value)) {
                self.recording
                    .events
                    .push(StringEncoding::ConstantPool as u8);
                write_varint(&mut self.recording.events, value.key());
            } else {
                self.failure = Some(Failure::ForeignReference {
                    index: self.next - 1,
                });
            }
        }
        self
    }

    /// A stack trace field as typed events hold it: a ref with the receipt
    /// of its mark in this chunk ([`crate::Marked`]) is written without a
    /// look-up.
    #[inline(always)]
    pub fn stack_trace_field(mut self, value: StackTraceField) -> Self {
        match value.marked() {
            Some(marked) if self.recording.pools.is_marked(marked) => {
                if self.expect(FieldType::StackTrace) {
                    write_varint(&mut self.recording.events, marked.reference().key());
                }
                self
            }
            _ => self.pooled(
                FieldType::StackTrace,
                value.reference().map(PoolRef::StackTrace),
            ),
        }
    }

    /// A constant field ([`FieldType::Constant`]); `None` is null.
    pub fn constant(self, value: Option<ConstantRef>) -> Self {
        self.value(Value::Constant(value))
    }

    /// A field given as a [`Value`]: a struct of a registered value type, an
    /// array, or any single value.
    pub fn value(mut self, value: Value<'_>) -> Self {
        if self.failure.is_some() {
            return self;
        }
        let index = self.next;
        let recording = &mut *self.recording;
        let written = match self.event_type.fields.get(index) {
            Some(&slot) => write_value(
                &mut recording.events,
                &mut recording.pools,
                recording.id,
                slot,
                &value,
            ),
            None => Err(Mismatch::Type),
        };
        match written {
            Ok(()) => self.next += 1,
            Err(Mismatch::Type) => {
                self.failure = Some(Failure::Mismatch {
                    index,
                    written: value.field_type(),
                })
            }
            Err(Mismatch::Stale) => self.failure = Some(Failure::StaleConstant { index }),
        }
        self
    }

    /// A struct field ([`FieldType::Struct`]) given as its fields' values,
    /// in declaration order: the value type is the one the field declares.
    pub fn struct_fields(mut self, fields: &[Value<'_>]) -> Self {
        let declared = match self.event_type.fields.get(self.next) {
            Some(&Slot {
                field_type: FieldType::Struct(id),
                array: false,
            }) => self.recording.value_type(id).cloned(),
            _ => None,
        };
        match declared {
            Some(value_type) => self.value(Value::Struct(&value_type, fields)),
            None => {
                self.failure.get_or_insert(Failure::Mismatch {
                    index: self.next,
                    written: None,
                });
                self
            }
        }
    }

    /// An array field: every element of the field's declared type.
    pub fn array(self, elements: &[Value<'_>]) -> Self {
        self.value(Value::Array(elements))
    }

    /// Writes the event. Fails, and writes nothing, if a field had the wrong
    /// type or a field is missing; may fail with an I/O error if the event
    /// buffer was full and had to be flushed.
    pub fn commit(mut self) -> Result<(), Error> {
        if let Some(failure) = self.failure {
            return Err(self.error(failure)); // Drop discards the bytes.
        }
        if self.next != self.event_type.fields.len() {
            return Err(Error::MissingField {
                event: self.event_type.name.to_string(),
                field: self.event_type.field_names[self.next + 1].clone(),
            });
        }
        self.committed = true;
        if self.typed_write != 0 && !self.layout_known {
            // Every field was checked, by name and type: the typed write
            // writes this event type right, every time.
            self.event_type
                .typed_write
                .store(self.typed_write, Ordering::Relaxed);
        }
        let buffer = &mut self.recording.events;
        let body_len = buffer.len() - self.start - 1;
        let size = sized_len(body_len);
        if size < 0x80 {
            buffer[self.start] = size as u8;
        } else {
            let mut prefix = Vec::with_capacity(MAX_VARINT_LEN);
            write_varint(&mut prefix, size as u64);
            buffer.splice(self.start..self.start + 1, prefix);
        }
        if self.demotable {
            // The type id follows the size.
            let type_id_at = self.start + varint_len(size as u64);
            self.recording.demotions.committed(type_id_at);
        }
        self.recording.event_committed()
    }
}

// `EventWriter`'s setter of each pooled type a field can hold, from the
// one table (`pooled_field_types!`).
macro_rules! setters {
    ($( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*) => {
        impl<S: Sink> EventWriter<'_, S> {
            $(
                #[doc = concat!(
                    "A field of a pooled [`", stringify!($variant), "`](crate::",
                    stringify!($variant), "); `None` is null."
                )]
                #[inline(always)]
                pub fn $one(self, value: impl Into<Option<crate::pool::$reference>>) -> Self {
                    self.pooled(FieldType::$variant, value.into().map(PoolRef::$variant))
                }
            )*
        }
    };
}

pooled_field_types!(setters);

impl<S: Sink> Drop for EventWriter<'_, S> {
    fn drop(&mut self) {
        if !self.committed {
            self.recording.events.truncate(self.start);
        }
    }
}
