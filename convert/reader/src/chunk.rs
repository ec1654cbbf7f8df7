//! One chunk, read by its own metadata: its header, its metadata (shared
//! with the chunks before it that declare the same), its constant pools,
//! and its events in file order, each type's read by an [`EventPlan`]
//! (undecoded, or as values: [`Events`]).

use std::sync::{Arc, Mutex, PoisonError};

use jfr_format::{ChunkHeader, HEADER_SIZE};

use crate::ReadError;
use crate::cursor::Cursor;
use crate::event::{Event, EventPlan, Field, RawEvents, TypeMap};
use crate::header::chunk_header;
use crate::metadata::Metadata;
use crate::pool::Pools;
use crate::value::Value;

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
            if let Some((bytes, metadata)) = last.as_ref()
                && bytes.as_slice() == event
            {
                return Ok(Arc::clone(metadata));
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
    pools: Pools,
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
        let chunk = Self::read_if(bytes, offset, cache, |_| true)?;
        Ok(chunk.expect("a chunk whatever it declares is read"))
    }

    /// Reads the chunk as [`read_with`](Self::read_with) does if what it
    /// declares is `wanted`; `None` if not, its constant pools (most of
    /// the work of reading a chunk) left unread.
    pub fn read_if(
        bytes: &'a [u8],
        offset: u64,
        cache: Option<&MetadataCache>,
        wanted: impl FnOnce(&Metadata) -> bool,
    ) -> Result<Option<Self>, ReadError> {
        let header = chunk_header(bytes, offset)?;
        let bytes = &bytes[..header.chunk_size as usize];
        let at = header.metadata_offset as usize;
        let (data, base) = (&bytes[at..], offset + at as u64);
        let metadata = match cache {
            Some(cache) => cache.read(data, base)?,
            None => Arc::new(Metadata::read(&mut Cursor::new(data, base))?),
        };
        if !wanted(&metadata) {
            return Ok(None);
        }
        let pools = Pools::read(bytes, offset, &header, &metadata)?;
        Ok(Some(Self {
            header,
            metadata,
            bytes,
            offset,
            pools,
        }))
    }

    /// The chunk's size in bytes.
    pub fn size(&self) -> u64 {
        self.header.chunk_size
    }

    /// The pooled value a reference names; `Null` for a missing key (as
    /// the JDK and Mission Control read it). Other values come back as they are.
    pub fn resolve<'v>(&'v self, value: &'v Value) -> &'v Value {
        match value {
            Value::Ref { class_id, key } => self.pooled(*class_id, *key),
            other => other,
        }
    }

    /// The value pooled under `key` in the pool of `class_id`; `Null` when
    /// there is none.
    pub fn pooled(&self, class_id: u64, key: u64) -> &Value {
        self.pools.get(class_id, key).unwrap_or(&Value::Null)
    }

    /// The plan that reads events of type `type_id`; `None` when no event
    /// type has that id (such events are skipped, as the JDK skips them).
    pub fn plan(&self, type_id: u64) -> Option<EventPlan<'_>> {
        let class = self.metadata.class(type_id).filter(|c| c.is_event())?;
        Some(EventPlan::new(&self.metadata, class))
    }

    /// The events of the chunk, in file order, decoded into values.
    pub fn events(&self) -> Events<'_, 'a> {
        Events::new(self)
    }

    /// The events of the chunk in file order, undecoded: each one's place
    /// and type, its fields read with the type's [`plan`](Self::plan).
    /// Metadata and checkpoints are skipped; events of undeclared types are
    /// not (callers skip them, as [`events`](Self::events) does).
    pub fn raw_events(&self) -> RawEvents<'a> {
        RawEvents::new(&self.bytes[HEADER_SIZE..], self.offset + HEADER_SIZE as u64)
    }
}

/// The events of a chunk as values; metadata, checkpoints and undeclared
/// types are skipped.
pub struct Events<'c, 'a> {
    chunk: &'c Chunk<'a>,
    raw: RawEvents<'a>,
    plans: TypeMap<Option<EventPlan<'c>>>,
}

impl<'c, 'a> Events<'c, 'a> {
    pub(crate) fn new(chunk: &'c Chunk<'a>) -> Self {
        Self {
            chunk,
            raw: chunk.raw_events(),
            plans: TypeMap::default(),
        }
    }
}

impl Iterator for Events<'_, '_> {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let chunk = self.chunk;
        loop {
            let mut raw = match self.raw.next()? {
                Ok(raw) => raw,
                Err(error) => return Some(Err(error)),
            };
            let Some(plan) = self
                .plans
                .get_or_insert_with(raw.type_id, || chunk.plan(raw.type_id))
            else {
                continue; // undeclared: skipped, as the JDK does
            };
            let mut fields = Vec::with_capacity(plan.class().fields.len());
            let read = plan.read(&mut raw, &mut |_, field: Field<'_>| {
                fields.push(field.into_value());
            });
            if read.is_err() {
                self.raw.failed = true;
            }
            return Some(read.map(|()| Event {
                offset: raw.offset,
                size: raw.size,
                type_id: raw.type_id,
                fields,
            }));
        }
    }
}
