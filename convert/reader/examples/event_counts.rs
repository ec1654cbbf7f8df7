//! Counts a recording's events by type, and sums the bytes its allocation
//! samples stand for: the reader alone, chunk by chunk.
//!
//! ```text
//! cargo run -p jfr-reader --example event_counts -- recording.jfr
//! ```

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;

use jfr_format::names::{event, field};
use jfr_reader::chunk::Chunk;
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;

/// What [`event_counts`] finds in a recording.
#[derive(Debug, Default)]
pub struct Counts {
    /// Events by type name.
    pub events: BTreeMap<String, u64>,
    /// The sum of `jdk.ObjectAllocationSample`'s `weight`.
    pub sampled_bytes: u64,
}

/// Reads `path` one chunk at a time: memory follows the largest chunk.
pub fn event_counts(path: &Path) -> Result<Counts, Box<dyn Error>> {
    let mut counts = Counts::default();
    let mut file = RecordingFile::open(path)?;
    while let Some(raw) = file.next_chunk()? {
        // Each chunk carries its own metadata: type ids and field orders
        // may differ from one chunk to the next.
        let chunk = Chunk::read(&raw.bytes, raw.offset)?;
        let weight = chunk
            .metadata
            .class_named(event::OBJECT_ALLOCATION_SAMPLE)
            .and_then(|class| {
                let index = class.fields.iter().position(|f| f.name == field::WEIGHT)?;
                Some((class.id, index))
            });
        for event in chunk.events() {
            let event = event?;
            let name = chunk.metadata.class(event.type_id).map_or("?", |c| &c.name);
            *counts.events.entry(name.to_owned()).or_default() += 1;
            if let Some((type_id, index)) = weight
                && event.type_id == type_id
                && let Some(&Value::Long(bytes)) = event.fields.get(index)
            {
                counts.sampled_bytes += bytes.max(0) as u64;
            }
        }
    }
    Ok(counts)
}

#[allow(dead_code)] // The test includes this file for `event_counts`.
fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args_os()
        .nth(1)
        .ok_or("usage: event_counts RECORDING.jfr")?;
    let counts = event_counts(Path::new(&path))?;
    for (name, count) in &counts.events {
        println!("{count:>10}  {name}");
    }
    println!("{:>10}  bytes sampled", counts.sampled_bytes);
    Ok(())
}
