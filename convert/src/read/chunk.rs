//! One chunk, read by its own metadata: constant pools from the checkpoint
//! chain, then events in file order, every value decoded generically.

use std::collections::{HashMap, HashSet};

use jfr_writer::format::{
    CHECKPOINT_EVENT_ID, ChunkHeader, HEADER_SIZE, METADATA_EVENT_ID, StringEncoding,
};

use super::cursor::Cursor;
use super::metadata::{ClassInfo, Metadata};
use super::{ReadError, chunk_header};

/// Inline values nest at most this deep (a hostile metadata could declare a
/// class that contains itself).
const MAX_NESTING: usize = 32;

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

/// A chunk with its metadata and constant pools loaded.
#[derive(Debug)]
pub struct Chunk<'a> {
    /// The chunk's header.
    pub header: ChunkHeader,
    /// The chunk's metadata.
    pub metadata: Metadata,
    bytes: &'a [u8],
    offset: u64,
    pools: HashMap<(u64, u64), Value>,
}

impl<'a> Chunk<'a> {
    /// Reads the chunk at the start of `bytes` (which stands at `offset` in
    /// the file): its header, metadata and every constant pool.
    pub fn read(bytes: &'a [u8], offset: u64) -> Result<Self, ReadError> {
        let header = chunk_header(bytes, offset)?;
        let bytes = &bytes[..header.chunk_size as usize];
        let at = header.metadata_offset as usize;
        let metadata = Metadata::read(&mut Cursor::new(&bytes[at..], offset + at as u64))?;
        let mut chunk = Self {
            header,
            metadata,
            bytes,
            offset,
            pools: HashMap::new(),
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
    fn read_pools(&mut self) -> Result<(), ReadError> {
        let mut position = self.header.constant_pool_offset;
        let mut seen = HashSet::new();
        while position != 0 {
            if !seen.insert(position) || position < HEADER_SIZE as u64 || position >= self.size() {
                return Err(ReadError::Malformed {
                    offset: self.offset + position,
                    expected: "a checkpoint chain that moves back through the chunk without loops"
                        .to_owned(),
                });
            }
            let mut cursor = Cursor::new(&self.bytes[position as usize..], self.offset + position);
            let (delta, body) = self.read_checkpoint(&mut cursor)?;
            for (key, value) in body {
                self.pools.insert(key, value);
            }
            if delta == 0 {
                break;
            }
            position = position
                .checked_add_signed(delta)
                .ok_or_else(|| ReadError::Malformed {
                    offset: self.offset + position,
                    expected: format!("a checkpoint delta inside the chunk, found {delta}"),
                })?;
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn read_checkpoint(
        &self,
        cursor: &mut Cursor<'_>,
    ) -> Result<(i64, Vec<((u64, u64), Value)>), ReadError> {
        let start = cursor.offset();
        let size = cursor.varint("a checkpoint's size")?;
        let end = start + size;
        let type_id = cursor.varint("a checkpoint's type")?;
        if type_id != CHECKPOINT_EVENT_ID {
            return Err(ReadError::Malformed {
                offset: start,
                expected: format!("a checkpoint (type 1), found type {type_id}"),
            });
        }
        cursor.varint("a checkpoint's start time")?;
        cursor.varint("a checkpoint's duration")?;
        let delta = cursor.varint("a checkpoint's delta")? as i64;
        cursor.u8("a checkpoint's type mask")?;
        let pools = cursor.count("a checkpoint's pool count")?;
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
            for _ in 0..count {
                let key = cursor.varint("a pool key")?;
                let value = self.read_value(cursor, class, 0)?;
                // Newest first: the oldest definition is inserted last and wins.
                entries.push(((class_id, key), value));
            }
        }
        if cursor.offset() != end {
            return Err(ReadError::Malformed {
                offset: start,
                expected: format!(
                    "a checkpoint of {size} bytes, but its pools take {}",
                    cursor.offset() - start
                ),
            });
        }
        Ok((delta, entries))
    }

    /// Decodes one value of `class`.
    fn read_value(
        &self,
        cursor: &mut Cursor<'_>,
        class: &ClassInfo,
        depth: usize,
    ) -> Result<Value, ReadError> {
        if depth > MAX_NESTING {
            return Err(cursor.error(format!("values nested at most {MAX_NESTING} deep")));
        }
        Ok(match class.name.as_str() {
            "boolean" => Value::Boolean(cursor.u8("a boolean")? != 0),
            "byte" => Value::Byte(cursor.u8("a byte")? as i8),
            "short" => Value::Short(cursor.varint("a short")? as i16),
            "char" => Value::Char(cursor.varint("a char")? as u16),
            "int" => Value::Int(cursor.varint("an int")? as i32),
            "long" => Value::Long(cursor.varint("a long")? as i64),
            "float" => Value::Float(f32::from_be_bytes(
                cursor.bytes(4, "a float")?.try_into().expect("4 bytes"),
            )),
            "double" => Value::Double(f64::from_be_bytes(
                cursor.bytes(8, "a double")?.try_into().expect("8 bytes"),
            )),
            "java.lang.String" => {
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
            _ => {
                let mut fields = Vec::with_capacity(class.fields.len());
                for field in &class.fields {
                    let field_class = self.metadata.class(field.class_id).ok_or_else(|| {
                        cursor.error(format!(
                            "field {} of a declared class, found id {}",
                            field.name, field.class_id
                        ))
                    })?;
                    let one = |cursor: &mut Cursor<'_>| -> Result<Value, ReadError> {
                        if field.constant_pool {
                            Ok(Value::Ref {
                                class_id: field.class_id,
                                key: cursor.varint("a pool key")?,
                            })
                        } else {
                            self.read_value(cursor, field_class, depth + 1)
                        }
                    };
                    fields.push(if field.array {
                        let count = cursor.count("an array length")?;
                        let mut items = Vec::with_capacity(count);
                        for _ in 0..count {
                            items.push(one(cursor)?);
                        }
                        Value::Array(items)
                    } else {
                        one(cursor)?
                    });
                }
                Value::Object {
                    class_id: class.id,
                    fields,
                }
            }
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
            cursor: Cursor::new(&self.bytes[HEADER_SIZE..], self.offset + HEADER_SIZE as u64),
            failed: false,
        }
    }
}

/// The events of a chunk; metadata, checkpoints and undeclared types are skipped.
pub struct Events<'c, 'a> {
    chunk: &'c Chunk<'a>,
    cursor: Cursor<'a>,
    failed: bool,
}

impl Iterator for Events<'_, '_> {
    type Item = Result<Event, ReadError>;

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

impl Events<'_, '_> {
    /// Reads one event; `None` for one that is skipped.
    fn read_one(&mut self) -> Result<Option<Event>, ReadError> {
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
        let mut event = Cursor::new(body, offset + size_len);
        let type_id = event.varint("an event type")?;
        if type_id == METADATA_EVENT_ID || type_id == CHECKPOINT_EVENT_ID {
            return Ok(None);
        }
        let Some(class) = self.chunk.metadata.class(type_id).filter(|c| c.is_event()) else {
            return Ok(None); // undeclared: skipped, as the JDK does
        };
        // Readers skip to the declared end: trailing bytes inside an event are allowed.
        match self.chunk.read_value(&mut event, class, 0)? {
            Value::Object { fields, .. } => Ok(Some(Event {
                offset,
                size,
                type_id,
                fields,
            })),
            _ => unreachable!("an event class has fields"),
        }
    }
}
