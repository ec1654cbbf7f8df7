//! One chunk, read by its own metadata: constant pools from the checkpoint
//! chain, then events in file order, every value decoded generically.

use std::sync::{Arc, Mutex, PoisonError};

use jfr_writer::format::{
    CHECKPOINT_EVENT_ID, ChunkHeader, HEADER_SIZE, METADATA_EVENT_ID, StringEncoding,
};

use super::cursor::Cursor;
use super::metadata::{ClassInfo, FieldInfo, Kind, Metadata};
use super::{IdMap, ReadError, chunk_header};

/// Inline values nest at most this deep (a hostile metadata could declare a
/// class that contains itself).
const MAX_NESTING: usize = 32;

/// How many values the bytes of one event or checkpoint may decode to.
///
/// Every value either takes bytes of its own (a primitive, a string, a pool
/// key and an array's length each take at least one) or is an object, and an
/// object whose class has a field that takes bytes has such a value among
/// its at most `MAX_NESTING + 1` levels of descendants. So well-formed data
/// of `n` bytes decodes to at most `(MAX_NESTING + 2) * n` values, and this
/// budget never refuses it. What it refuses is a class whose values take no
/// bytes (no fields, or only fields of such classes), which a hostile
/// metadata can nest into billions of values read out of nothing, or repeat
/// in an array as long as the bytes left.
pub(crate) fn value_budget(bytes: usize) -> u64 {
    (MAX_NESTING as u64 + 2) * (bytes as u64 + 1)
}

/// Takes one value from `budget`, or fails at the cursor when none is left.
#[inline]
pub(crate) fn spend(cursor: &Cursor<'_>, budget: &mut u64) -> Result<(), ReadError> {
    match budget.checked_sub(1) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => Err(over_budget(cursor)),
    }
}

#[cold]
fn over_budget(cursor: &Cursor<'_>) -> ReadError {
    cursor.error(
        "values that take bytes, but these bytes decode to more values than they can \
         hold (a class whose values take no bytes?)",
    )
}

/// Vectors sized by a count from the file reserve at most this many items
/// up front. Counts are checked against the bytes left, but an item of one
/// byte decodes to a [`Value`] of 40: reserving what a corrupt count says
/// would let it claim 40 bytes of memory per byte of the chunk before the
/// first item fails. Past this, vectors grow with the items really read.
const MAX_RESERVE: usize = 1024;

/// A value, decoded by its class in the metadata.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` (a null string, or a pool key with no entry).
    Null,
    /// `boolean`.
    Boolean(bool),
    /// `byte`.
    Byte(i8),
    /// `short`.
    Short(i16),
    /// `char`, as a UTF-16 code unit.
    Char(u16),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `java.lang.String`.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An instance of a class with fields, in the metadata's field order.
    Object {
        /// The class id.
        class_id: u64,
        /// The field values.
        fields: Vec<Value>,
    },
    /// A constant-pool reference, resolved with [`Chunk::resolve`].
    Ref {
        /// The pool's class id.
        class_id: u64,
        /// The key.
        key: u64,
    },
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

/// The metadata read last, for the next chunk that declares the same: a
/// recording's chunks mostly repeat their metadata (tens or hundreds of KB
/// of type declarations), so it is read once, not once per chunk. Chunks
/// may be read on several threads with one cache.
#[derive(Debug, Default)]
pub struct MetadataCache {
    /// The bytes of the metadata event, and what they declare.
    last: Mutex<Option<(Vec<u8>, Arc<Metadata>)>>,
}

impl MetadataCache {
    /// The metadata event at the start of `data` (which stands at `base` in
    /// the file): the one read before if its bytes are the same (so it
    /// declares the same), else read now. An event that fails to read
    /// fails as it does without the cache.
    fn read(&self, data: &[u8], base: u64) -> Result<Arc<Metadata>, ReadError> {
        let mut cursor = Cursor::new(data, base);
        let event = cursor
            .varint("the metadata event's size")
            .ok()
            .and_then(|size| data.get(..usize::try_from(size).ok()?));
        if let Some(event) = event {
            let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((bytes, metadata)) = last.as_ref() {
                if bytes.as_slice() == event {
                    return Ok(Arc::clone(metadata));
                }
            }
        }
        let metadata = Arc::new(Metadata::read(&mut Cursor::new(data, base))?);
        if let Some(event) = event {
            *self.last.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((event.to_vec(), Arc::clone(&metadata)));
        }
        Ok(metadata)
    }
}

/// A chunk with its metadata and constant pools loaded.
#[derive(Debug)]
pub struct Chunk<'a> {
    /// The chunk's header.
    pub header: ChunkHeader,
    /// The chunk's metadata (shared with other chunks that declare the same,
    /// when read through a [`MetadataCache`]).
    pub metadata: Arc<Metadata>,
    bytes: &'a [u8],
    offset: u64,
    pools: IdMap<(u64, u64), Value>,
}

impl<'a> Chunk<'a> {
    /// Reads the chunk at the start of `bytes` (which stands at `offset` in
    /// the file): its header, metadata and every constant pool.
    pub fn read(bytes: &'a [u8], offset: u64) -> Result<Self, ReadError> {
        Self::read_with(bytes, offset, None)
    }

    /// Reads the chunk as [`read`](Self::read) does, taking its metadata
    /// from `cache` when the chunk declares the same as the chunk before.
    pub fn read_with(
        bytes: &'a [u8],
        offset: u64,
        cache: Option<&MetadataCache>,
    ) -> Result<Self, ReadError> {
        let header = chunk_header(bytes, offset)?;
        let bytes = &bytes[..header.chunk_size as usize];
        let at = header.metadata_offset as usize;
        let (data, base) = (&bytes[at..], offset + at as u64);
        let metadata = match cache {
            Some(cache) => cache.read(data, base)?,
            None => Arc::new(Metadata::read(&mut Cursor::new(data, base))?),
        };
        let mut chunk = Self {
            header,
            metadata,
            bytes,
            offset,
            pools: IdMap::default(),
        };
        chunk.read_pools()?;
        Ok(chunk)
    }

    /// The chunk's size in bytes.
    pub fn size(&self) -> u64 {
        self.header.chunk_size
    }

    /// Walks the checkpoints from the newest back to the oldest. The JDK
    /// keeps the oldest value of a key defined twice; so do we.
    ///
    /// Each checkpoint must end at or before the start of the newer one that
    /// points to it: checkpoints are events, written one after another, so
    /// the chain moves back through the chunk. That also bounds the walk:
    /// no byte is decoded twice, so a corrupt delta cannot loop or make the
    /// walk quadratic in the chunk size.
    fn read_pools(&mut self) -> Result<(), ReadError> {
        // `chunk_header` checked that the newest is inside the chunk.
        let mut position = self.header.constant_pool_offset;
        // The checkpoint at `position` must end by here.
        let mut limit = self.size();
        while position != 0 {
            let (delta, delta_offset, body) = self.read_checkpoint(position, limit)?;
            for (key, value) in body {
                self.pools.insert(key, value);
            }
            if delta == 0 {
                break;
            }
            // Errors name the delta's own offset: the bytes it points to
            // may be anywhere, or past the end of the file.
            let older = position
                .checked_add_signed(delta)
                .filter(|next| (HEADER_SIZE as u64..position).contains(next))
                .ok_or_else(|| ReadError::Malformed {
                    offset: delta_offset,
                    expected: format!(
                        "a checkpoint delta back to an older checkpoint (from chunk byte \
                         {HEADER_SIZE} to before this one at chunk byte {position}), found {delta}"
                    ),
                })?;
            limit = position;
            position = older;
        }
        Ok(())
    }

    /// Reads the checkpoint at chunk byte `position`, which must end by
    /// chunk byte `limit`: its delta to the previous one, the delta's file
    /// offset, and its entries.
    #[allow(clippy::type_complexity)]
    fn read_checkpoint(
        &self,
        position: u64,
        limit: u64,
    ) -> Result<(i64, u64, Vec<((u64, u64), Value)>), ReadError> {
        let start = self.offset + position;
        // `position < limit <= chunk size`, so these slices are in bounds.
        let mut cursor = Cursor::new(&self.bytes[position as usize..limit as usize], start);
        let size = cursor.varint("a checkpoint's size")?;
        let size_len = cursor.offset() - start;
        if size <= size_len || size > limit - position {
            return Err(ReadError::Malformed {
                offset: start,
                expected: format!(
                    "a checkpoint size from {} to the {} bytes before the newer checkpoint \
                     or the chunk's end, found {size}",
                    size_len + 1,
                    limit - position
                ),
            });
        }
        // From here the cursor sees the checkpoint's bytes only: every count
        // in it is checked against them, and no value runs past its end.
        let body = cursor.bytes((size - size_len) as usize, "a checkpoint")?;
        let mut cursor = Cursor::new(body, start + size_len);
        let type_id = cursor.varint("a checkpoint's type")?;
        if type_id != CHECKPOINT_EVENT_ID {
            return Err(ReadError::Malformed {
                offset: start,
                expected: format!("a checkpoint (type 1), found type {type_id}"),
            });
        }
        cursor.varint("a checkpoint's start time")?;
        cursor.varint("a checkpoint's duration")?;
        let delta_offset = cursor.offset();
        let delta = cursor.varint("a checkpoint's delta")? as i64;
        cursor.u8("a checkpoint's type mask")?;
        let pools = cursor.count("a checkpoint's pool count")?;
        let mut budget = value_budget(body.len());
        let mut entries = Vec::new();
        for _ in 0..pools {
            let at = cursor.offset();
            let class_id = cursor.varint("a pool's class id")?;
            let class = self
                .metadata
                .class(class_id)
                .ok_or_else(|| ReadError::Malformed {
                    offset: at,
                    expected: format!("a pool of a declared class, found class id {class_id}"),
                })?;
            let count = cursor.count("a pool's entry count")?;
            entries.reserve(count.min(MAX_RESERVE));
            for _ in 0..count {
                let key = cursor.varint("a pool key")?;
                let value = self.read_value(&mut cursor, class, 0, &mut budget)?;
                // Newest first: the oldest definition is inserted last and wins.
                entries.push(((class_id, key), value));
            }
        }
        if cursor.remaining() != 0 {
            return Err(ReadError::Malformed {
                offset: start,
                expected: format!(
                    "a checkpoint of {size} bytes, but its pools take {}",
                    cursor.offset() - start
                ),
            });
        }
        Ok((delta, delta_offset, entries))
    }

    /// Decodes one value of `class`, taking one from `budget` (see
    /// [`value_budget`]).
    fn read_value(
        &self,
        cursor: &mut Cursor<'_>,
        class: &ClassInfo,
        depth: usize,
        budget: &mut u64,
    ) -> Result<Value, ReadError> {
        spend(cursor, budget)?;
        Ok(match class.kind {
            Kind::Boolean => Value::Boolean(cursor.u8("a boolean")? != 0),
            Kind::Byte => Value::Byte(cursor.u8("a byte")? as i8),
            Kind::Short => Value::Short(cursor.varint("a short")? as i16),
            Kind::Char => Value::Char(cursor.varint("a char")? as u16),
            Kind::Int => Value::Int(cursor.varint("an int")? as i32),
            Kind::Long => Value::Long(cursor.varint("a long")? as i64),
            Kind::Float => Value::Float(f32::from_be_bytes(cursor.array("a float")?)),
            Kind::Double => Value::Double(f64::from_be_bytes(cursor.array("a double")?)),
            Kind::String => {
                let mut peek = cursor.clone();
                if peek.u8("a string")? == StringEncoding::ConstantPool as u8 {
                    *cursor = peek;
                    Value::Ref {
                        class_id: class.id,
                        key: cursor.varint("a string pool key")?,
                    }
                } else {
                    cursor
                        .string("a string")?
                        .map_or(Value::Null, Value::String)
                }
            }
            Kind::Object => Value::Object {
                class_id: class.id,
                fields: self.read_fields(cursor, class, depth, budget)?,
            },
        })
    }

    /// Decodes the fields of a value of `class`, in the metadata's order.
    pub(crate) fn read_fields(
        &self,
        cursor: &mut Cursor<'_>,
        class: &ClassInfo,
        depth: usize,
        budget: &mut u64,
    ) -> Result<Vec<Value>, ReadError> {
        if depth >= MAX_NESTING {
            return Err(cursor.error(format!("values nested at most {MAX_NESTING} deep")));
        }
        let mut fields = Vec::with_capacity(class.fields.len());
        for field in &class.fields {
            fields.push(self.read_field(cursor, field, depth, budget)?);
        }
        Ok(fields)
    }

    /// Decodes one field of a value at `depth` (below [`MAX_NESTING`]), as
    /// [`read_fields`](Self::read_fields) does: an array of items, or one
    /// item, each a pool reference or a value of the field's class. The CSV
    /// rows read the fields they cannot make straight from the bytes
    /// through this, so both ways decode (and fail) alike.
    // Inlined: this is every reader's innermost loop, and a call per field
    // cost it a fifth of its time.
    #[inline(always)]
    pub(crate) fn read_field(
        &self,
        cursor: &mut Cursor<'_>,
        field: &FieldInfo,
        depth: usize,
        budget: &mut u64,
    ) -> Result<Value, ReadError> {
        let field_class = self.metadata.field_class(field).ok_or_else(|| {
            cursor.error(format!(
                "field {} of a declared class, found id {}",
                field.name, field.class_id
            ))
        })?;
        let mut one = |cursor: &mut Cursor<'_>| -> Result<Value, ReadError> {
            if field.constant_pool {
                spend(cursor, budget)?;
                Ok(Value::Ref {
                    class_id: field.class_id,
                    key: cursor.varint("a pool key")?,
                })
            } else {
                self.read_value(cursor, field_class, depth + 1, budget)
            }
        };
        Ok(if field.array {
            let count = cursor.count("an array length")?;
            let mut items = Vec::with_capacity(count.min(MAX_RESERVE));
            for _ in 0..count {
                items.push(one(cursor)?);
            }
            Value::Array(items)
        } else {
            one(cursor)?
        })
    }

    /// The pooled value a reference names; `Null` for a missing key (as
    /// the JDK and Mission Control read it). Other values come back as they are.
    pub fn resolve<'v>(&'v self, value: &'v Value) -> &'v Value {
        match value {
            Value::Ref { class_id, key } => {
                self.pools.get(&(*class_id, *key)).unwrap_or(&Value::Null)
            }
            other => other,
        }
    }

    /// The events of the chunk, in file order.
    pub fn events(&self) -> Events<'_, 'a> {
        Events {
            chunk: self,
            raw: self.raw_events(),
        }
    }

    /// The events of the chunk in file order, undecoded: each one's place
    /// and type, and a cursor over its fields. Metadata and checkpoints are
    /// skipped; events of undeclared types are not (callers skip them, as
    /// [`events`](Self::events) does).
    pub(crate) fn raw_events(&self) -> RawEvents<'a> {
        RawEvents {
            cursor: Cursor::new(&self.bytes[HEADER_SIZE..], self.offset + HEADER_SIZE as u64),
            failed: false,
        }
    }
}

/// An event not yet decoded.
pub(crate) struct RawEvent<'a> {
    /// The file offset of the event.
    pub offset: u64,
    /// The event's size in bytes.
    pub size: u64,
    /// The event type's class id.
    pub type_id: u64,
    /// The event's fields: the bytes after its type id, to its declared end.
    pub fields: Cursor<'a>,
    /// The values these bytes may decode to (see [`value_budget`]).
    pub budget: u64,
}

/// The undecoded events of a chunk (see [`Chunk::raw_events`]).
pub(crate) struct RawEvents<'a> {
    cursor: Cursor<'a>,
    failed: bool,
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

impl<'a> RawEvents<'a> {
    /// Reads one event's framing; `None` for metadata and checkpoints.
    #[inline]
    fn read_one(&mut self) -> Result<Option<RawEvent<'a>>, ReadError> {
        let offset = self.cursor.offset();
        let size = self.cursor.varint("an event size")?;
        let size_len = self.cursor.offset() - offset;
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

/// The events of a chunk; metadata, checkpoints and undeclared types are skipped.
pub struct Events<'c, 'a> {
    chunk: &'c Chunk<'a>,
    raw: RawEvents<'a>,
}

impl Iterator for Events<'_, '_> {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let mut raw = match self.raw.next()? {
                Ok(raw) => raw,
                Err(error) => return Some(Err(error)),
            };
            let Some(class) = self
                .chunk
                .metadata
                .class(raw.type_id)
                .filter(|c| c.is_event())
            else {
                continue; // undeclared: skipped, as the JDK does
            };
            // An event is read by its fields whatever its class is called (a
            // corrupt metadata can name an event type `long`).
            let fields = self
                .chunk
                .read_fields(&mut raw.fields, class, 0, &mut raw.budget);
            if fields.is_err() {
                self.raw.failed = true;
            }
            return Some(fields.map(|fields| Event {
                offset: raw.offset,
                size: raw.size,
                type_id: raw.type_id,
                fields,
            }));
        }
    }
}
