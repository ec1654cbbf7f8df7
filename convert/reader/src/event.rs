//! Events: their framing (size, type, fields to the declared end) and the
//! one decoder of their fields, an [`EventPlan`] per event type per chunk.
//!
//! A plan is made once from the chunk's metadata: for each field, how its
//! bytes are read. [`EventPlan::read`] walks an event's bytes field by field
//! and hands each to a [`FieldVisitor`] as a [`Field`]: a number, a pool reference
//! (pool class and key, for the caller to resolve or look up in its own
//! cache), an inline string, or, for what has no step of its own (arrays,
//! inline objects, floats, chars), a generic [`Value`]. Every output (CSV
//! rows, the filter, `top`, folded stacks, the agent's statistics in
//! `summary`, and [`Event`]s of values) reads events through it, so they
//! decode, and fail, alike.

use std::borrow::Cow;

use jfr_format::{CHECKPOINT_EVENT_ID, METADATA_EVENT_ID};

use crate::cursor::{Cursor, RawString};
use crate::metadata::{ClassInfo, Kind, Metadata};
use crate::value::{Value, read_field, spend, value_budget};
use crate::{IdMap, ReadError};

/// An event not yet decoded.
#[derive(Debug, Clone)]
pub struct RawEvent<'a> {
    /// The file offset of the event.
    pub offset: u64,
    /// The event's size in bytes.
    pub size: u64,
    /// The event type's class id.
    pub type_id: u64,
    /// The event's fields: the bytes after its type id, to its declared end.
    pub(crate) fields: Cursor<'a>,
    /// The values these bytes may decode to (see [`value_budget`]).
    pub(crate) budget: u64,
}

/// The undecoded events of a chunk (`Chunk::raw_events`): metadata
/// and checkpoints are skipped, events of undeclared types are not. The
/// first error ends them.
pub struct RawEvents<'a> {
    cursor: Cursor<'a>,
    /// An event failed: no more follow.
    pub(crate) failed: bool,
}

impl<'a> RawEvents<'a> {
    /// The events in `bytes`, which stand at `offset` in the file.
    pub(crate) fn new(bytes: &'a [u8], offset: u64) -> Self {
        Self {
            cursor: Cursor::new(bytes, offset),
            failed: false,
        }
    }

    /// Reads one event's framing; `None` for metadata and checkpoints.
    #[inline]
    fn read_one(&mut self) -> Result<Option<RawEvent<'a>>, ReadError> {
        let offset = self.cursor.offset();
        let size = self.cursor.varint("an event size")?;
        let size_len = self.cursor.offset() - offset;
        if size > size_len && size - size_len > self.cursor.remaining() as u64 {
            // A filler of the metadata's type may run past the chunk's end
            // (into the chunk after it, being appended; see `jfr-writer`'s
            // `tail.rs`): the chunk's events end there, as the JDK and
            // Mission Control read it.
            let mut rest = self.cursor.clone();
            if rest.varint("an event type") == Ok(METADATA_EVENT_ID) {
                self.cursor = Cursor::new(&[], self.cursor.offset());
                return Ok(None);
            }
        }
        if size <= size_len || size - size_len > self.cursor.remaining() as u64 {
            return Err(ReadError::Malformed {
                offset,
                expected: format!("an event size within the chunk (and not 0), found {size}"),
            });
        }
        let body = self.cursor.bytes((size - size_len) as usize, "an event")?;
        let mut fields = Cursor::new(body, offset + size_len);
        let type_id = fields.varint("an event type")?;
        if type_id == METADATA_EVENT_ID || type_id == CHECKPOINT_EVENT_ID {
            return Ok(None);
        }
        // Readers skip to the declared end: trailing bytes inside an event are allowed.
        Ok(Some(RawEvent {
            offset,
            size,
            type_id,
            fields,
            budget: value_budget(body.len()),
        }))
    }
}

impl<'a> Iterator for RawEvents<'a> {
    type Item = Result<RawEvent<'a>, ReadError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed && self.cursor.remaining() > 0 {
            let result = self.read_one().transpose();
            if let Some(result) = result {
                self.failed = result.is_err();
                return Some(result);
            }
        }
        None
    }
}

/// One field of an event, as [`EventPlan::read`] hands it on.
#[derive(Debug, Clone, PartialEq)]
pub enum Field<'a> {
    /// An inline `long`.
    Long(i64),
    /// An inline `int`.
    Int(i32),
    /// An inline `short`.
    Short(i16),
    /// An inline `byte`.
    Byte(i8),
    /// An inline `boolean`.
    Boolean(bool),
    /// A key into the pool of `class_id` (a pooled field, or a string
    /// from the string pool).
    Pooled {
        /// The pool's class id.
        class_id: u64,
        /// The key.
        key: u64,
    },
    /// An inline string's UTF-8 bytes, not yet checked: invalid sequences
    /// read as U+FFFD ([`String::from_utf8_lossy`]).
    Utf8(&'a [u8]),
    /// An inline string in another encoding, decoded.
    Text(Cow<'a, str>),
    /// A null string.
    Null,
    /// Anything else (an array, an inline object, a float, a char),
    /// decoded generically.
    Value(Value),
}

impl Field<'_> {
    /// An integer field's value (`long`, `int`, `short`, `byte`).
    pub fn integer(&self) -> Option<i64> {
        match *self {
            Self::Long(v) => Some(v),
            Self::Int(v) => Some(v.into()),
            Self::Short(v) => Some(v.into()),
            Self::Byte(v) => Some(v.into()),
            _ => None,
        }
    }

    /// An integer field's value, if it is not negative: a count.
    pub fn count(&self) -> Option<u64> {
        self.integer().and_then(|v| u64::try_from(v).ok())
    }

    /// A numeric field's value: an integer's, or a `float`'s or `double`'s.
    pub fn number(&self) -> Option<f64> {
        match self {
            Self::Value(Value::Float(v)) => Some((*v).into()),
            Self::Value(Value::Double(v)) => Some(*v),
            other => other.integer().map(|v| v as f64),
        }
    }

    /// The field as a generic value, as an [`Event`] holds it.
    pub fn into_value(self) -> Value {
        match self {
            Self::Long(v) => Value::Long(v),
            Self::Int(v) => Value::Int(v),
            Self::Short(v) => Value::Short(v),
            Self::Byte(v) => Value::Byte(v),
            Self::Boolean(v) => Value::Boolean(v),
            Self::Pooled { class_id, key } => Value::Ref { class_id, key },
            Self::Utf8(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
            Self::Text(text) => Value::String(text.into_owned()),
            Self::Null => Value::Null,
            Self::Value(value) => value,
        }
    }
}

/// What takes the fields of an event as [`EventPlan::read`] reads them, in
/// order, each with its index. Every field comes to [`field`](Self::field)
/// unless the taker has a method of its own for its kind: a taker that
/// makes something of every field of many events (a CSV row) takes numbers,
/// pool keys and UTF-8 strings straight, without a [`Field`] between.
/// A closure `FnMut(usize, Field)` takes every field through `field`.
pub trait FieldVisitor<'a> {
    /// Takes field number `index`.
    fn field(&mut self, index: usize, field: Field<'a>);

    /// Takes an inline `long`.
    #[inline(always)]
    fn long(&mut self, index: usize, value: i64) {
        self.field(index, Field::Long(value));
    }

    /// Takes an inline `int`.
    #[inline(always)]
    fn int(&mut self, index: usize, value: i32) {
        self.field(index, Field::Int(value));
    }

    /// Takes an inline `short`.
    #[inline(always)]
    fn short(&mut self, index: usize, value: i16) {
        self.field(index, Field::Short(value));
    }

    /// Takes an inline `byte`.
    #[inline(always)]
    fn byte(&mut self, index: usize, value: i8) {
        self.field(index, Field::Byte(value));
    }

    /// Takes an inline `boolean`.
    #[inline(always)]
    fn boolean(&mut self, index: usize, value: bool) {
        self.field(index, Field::Boolean(value));
    }

    /// Takes a key into the pool of `class_id`.
    #[inline(always)]
    fn pooled(&mut self, index: usize, class_id: u64, key: u64) {
        self.field(index, Field::Pooled { class_id, key });
    }

    /// Takes an inline string's UTF-8 bytes, not yet checked.
    #[inline(always)]
    fn utf8(&mut self, index: usize, bytes: &'a [u8]) {
        self.field(index, Field::Utf8(bytes));
    }
}

impl<'a, F: FnMut(usize, Field<'a>)> FieldVisitor<'a> for F {
    #[inline(always)]
    fn field(&mut self, index: usize, field: Field<'a>) {
        self(index, field);
    }
}

/// How one field's bytes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Long,
    Int,
    Short,
    Byte,
    Boolean,
    /// An inline string or a key into the string pool of `class_id`.
    String {
        class_id: u64,
    },
    /// A key into the pool of `class_id`.
    Pooled {
        class_id: u64,
    },
    /// A generic value (also for a field of an undeclared class, whose
    /// decoding fails naming the field).
    Generic,
}

/// How the fields of one event type are read, made once per chunk from its
/// metadata.
#[derive(Debug, Clone)]
pub struct EventPlan<'m> {
    metadata: &'m Metadata,
    class: &'m ClassInfo,
    /// One per field of `class`, in order.
    steps: Vec<Step>,
}

impl<'m> EventPlan<'m> {
    /// The plan for events of `class`, one of `metadata`'s classes.
    pub fn new(metadata: &'m Metadata, class: &'m ClassInfo) -> Self {
        let steps = class
            .fields
            .iter()
            .map(|field| {
                let Some(field_class) = metadata.field_class(field) else {
                    return Step::Generic;
                };
                let class_id = field.class_id;
                match (field.array, field.constant_pool, field_class.kind) {
                    (true, _, _) => Step::Generic,
                    (false, true, _) => Step::Pooled { class_id },
                    (false, false, Kind::Long) => Step::Long,
                    (false, false, Kind::Int) => Step::Int,
                    (false, false, Kind::Short) => Step::Short,
                    (false, false, Kind::Byte) => Step::Byte,
                    (false, false, Kind::Boolean) => Step::Boolean,
                    (false, false, Kind::String) => Step::String { class_id },
                    (false, false, _) => Step::Generic,
                }
            })
            .collect();
        Self {
            metadata,
            class,
            steps,
        }
    }

    /// The event type.
    pub fn class(&self) -> &'m ClassInfo {
        self.class
    }

    /// The index of the field named `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.class.fields.iter().position(|f| f.name == name)
    }

    /// Reads `event`'s fields in order, handing each to `visitor`; the
    /// first error ends the walk. Every field is read, so an event that
    /// fails anywhere fails whatever the caller looks at.
    #[inline(always)]
    pub fn read<'a>(
        &self,
        event: &mut RawEvent<'a>,
        visitor: &mut impl FieldVisitor<'a>,
    ) -> Result<(), ReadError> {
        let cursor = &mut event.fields;
        let budget = &mut event.budget;
        for (index, &step) in self.steps.iter().enumerate() {
            // Each value takes one from the budget (generic ones inside
            // `read_field`), as `read_field` counts them.
            match step {
                Step::Long => {
                    spend(cursor, budget)?;
                    visitor.long(index, cursor.varint("a long")? as i64);
                }
                Step::Int => {
                    spend(cursor, budget)?;
                    visitor.int(index, cursor.varint("an int")? as i32);
                }
                Step::Short => {
                    spend(cursor, budget)?;
                    visitor.short(index, cursor.varint("a short")? as i16);
                }
                Step::Byte => {
                    spend(cursor, budget)?;
                    visitor.byte(index, cursor.u8("a byte")? as i8);
                }
                Step::Boolean => {
                    spend(cursor, budget)?;
                    visitor.boolean(index, cursor.u8("a boolean")? != 0);
                }
                Step::String { class_id } => {
                    spend(cursor, budget)?;
                    match cursor.raw_string("a string", true)? {
                        RawString::Utf8(bytes) => visitor.utf8(index, bytes),
                        RawString::Pooled(key) => visitor.pooled(index, class_id, key),
                        RawString::Null => visitor.field(index, Field::Null),
                        RawString::Text(text) => visitor.field(index, Field::Text(text)),
                    }
                }
                Step::Pooled { class_id } => {
                    spend(cursor, budget)?;
                    visitor.pooled(index, class_id, cursor.varint("a pool key")?);
                }
                Step::Generic => {
                    let field = &self.class.fields[index];
                    let value = read_field(self.metadata, cursor, field, 0, budget)?;
                    visitor.field(index, Field::Value(value));
                }
            }
        }
        Ok(())
    }

    /// Reads `event`'s fields and drops them: the event is checked, as
    /// every output checks the events it does not show.
    #[inline]
    pub fn skip(&self, event: &mut RawEvent<'_>) -> Result<(), ReadError> {
        self.read(event, &mut |_, _| {})
    }
}

/// Something kept per event type of a chunk, by type id: a table for the
/// small ids writers use (the JDK's are in the hundreds), a map for others.
#[derive(Debug)]
pub struct TypeMap<T> {
    /// Indexes into `items` by type id, below [`Self::SMALL`].
    small: Vec<u32>,
    /// Indexes into `items` of the other type ids.
    large: IdMap<u64, usize>,
    items: Vec<T>,
}

impl<T> Default for TypeMap<T> {
    fn default() -> Self {
        Self {
            small: Vec::new(),
            large: IdMap::default(),
            items: Vec::new(),
        }
    }
}

impl<T> TypeMap<T> {
    /// Ids below this are looked up in the table.
    const SMALL: u64 = 4096;
    /// An empty slot in the table.
    const NONE: u32 = u32::MAX;

    /// What is kept for `type_id`, made by `make` the first time.
    #[inline]
    pub fn get_or_insert_with(&mut self, type_id: u64, make: impl FnOnce() -> T) -> &mut T {
        let slot = match self.small.get(type_id as usize) {
            Some(&slot) if type_id < Self::SMALL && slot != Self::NONE => Some(slot as usize),
            _ => self.large.get(&type_id).copied(),
        };
        let index = match slot {
            Some(index) => index,
            None => self.insert(type_id, make()),
        };
        &mut self.items[index]
    }

    #[inline(never)]
    fn insert(&mut self, type_id: u64, item: T) -> usize {
        let index = self.items.len();
        self.items.push(item);
        match u32::try_from(index) {
            Ok(slot) if type_id < Self::SMALL && slot != Self::NONE => {
                let at = type_id as usize;
                if self.small.len() <= at {
                    self.small.resize(at + 1, Self::NONE);
                }
                self.small[at] = slot;
            }
            _ => {
                self.large.insert(type_id, index);
            }
        }
        index
    }
}

/// An event: its type and field values.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The file offset of the event.
    pub offset: u64,
    /// The event's size in bytes.
    pub size: u64,
    /// The event type's class id.
    pub type_id: u64,
    /// The field values, in the metadata's field order.
    pub fields: Vec<Value>,
}
