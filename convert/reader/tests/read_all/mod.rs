//! A full read of a recording, every chunk, every event and every value
//! resolved through the pools: what `heapsampler summary` and `convert` do
//! to a file, without their output. Shared by the mutation tests, the
//! large-file test and the fuzz target (`convert/fuzz`), so they all judge
//! the reader by the same read.

#![allow(dead_code)] // Each user takes a different part.

use std::collections::HashSet;
use std::io::Read;

use jfr_reader::chunk::Chunk;
use jfr_reader::file::{FileError, RecordingFile};
use jfr_reader::value::Value;

/// What a full read saw.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Totals {
    /// Complete chunks read.
    pub chunks: u64,
    /// The offset of each chunk, in order.
    pub chunk_offsets: Vec<u64>,
    /// Events read.
    pub events: u64,
    /// Values visited: event fields, array items, and pooled values (each
    /// pooled value once per chunk).
    pub values: u64,
    /// Set when the last chunk was cut short: its offset and its bytes.
    pub truncated: Option<(u64, u64)>,
}

/// Reads the recording `input` (plain, zstd or gzip) whole; `name` is what
/// errors call it. Errors are the reader's own: the first one ends the read.
pub fn read_all(name: &str, input: impl Read + Send + 'static) -> Result<Totals, FileError> {
    let mut file = RecordingFile::from_reader(name, input)?;
    let mut totals = Totals::default();
    let malformed = |source| FileError::Malformed {
        path: name.into(),
        source,
    };
    while let Some(raw) = file.next_chunk()? {
        let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(malformed)?;
        totals.chunks += 1;
        totals.chunk_offsets.push(raw.offset);
        let mut seen = HashSet::new();
        for event in chunk.events() {
            let event = event.map_err(malformed)?;
            assert!(
                chunk.metadata.class(event.type_id).is_some(),
                "an event of an undeclared type at byte {}",
                event.offset
            );
            totals.events += 1;
            for value in &event.fields {
                walk(&chunk, value, &mut seen, &mut totals.values);
            }
        }
    }
    totals.truncated = file.truncated();
    Ok(totals)
}

/// Visits `value` and everything it holds, following pool references; each
/// pooled value is visited once per chunk (`seen`), which also stops
/// reference cycles a corrupt file may hold.
fn walk(chunk: &Chunk<'_>, value: &Value, seen: &mut HashSet<(u64, u64)>, count: &mut u64) {
    *count += 1;
    match value {
        Value::Ref { class_id, key } if seen.insert((*class_id, *key)) => {
            walk(chunk, chunk.resolve(value), seen, count);
        }
        Value::Array(items) => items.iter().for_each(|v| walk(chunk, v, seen, count)),
        Value::Object { fields, .. } => fields.iter().for_each(|v| walk(chunk, v, seen, count)),
        Value::String(text) => {
            std::hint::black_box(text.len());
        }
        _ => {}
    }
}
