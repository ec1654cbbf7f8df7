//! A JFR (JDK Flight Recorder) reader: any recording, the JDK's or one
//! written by `jfr-writer`, read chunk by chunk by each chunk's own
//! metadata.
//!
//! Built on `jfr-format`, the names and primitives of the format that the
//! writer uses too, so reader and writer cannot disagree. Every length read
//! from a file is checked before it is used; a malformed file is an error
//! naming the byte offset and what was expected there. The crate reads; it
//! creates no files and prints nothing.
//!
//! ```no_run
//! use jfr_format::names::event;
//! use jfr_reader::chunk::Chunk;
//! use jfr_reader::file::RecordingFile;
//!
//! let mut file = RecordingFile::open("alloc.jfr")?;
//! let mut samples = 0;
//! while let Some(raw) = file.next_chunk()? {
//!     let chunk = Chunk::read(&raw.bytes, raw.offset)?;
//!     let Some(class) = chunk.metadata.class_named(event::OBJECT_ALLOCATION_SAMPLE) else {
//!         continue;
//!     };
//!     for sample in chunk.events() {
//!         samples += u64::from(sample?.type_id == class.id);
//!     }
//! }
//! println!("{samples} allocation samples");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/event_counts.rs` goes further: events by type and the bytes
//! the allocation samples stand for (`cargo run -p jfr-reader --example
//! event_counts -- FILE`).
//!
//! The modules mirror the writer's:
//!
//! - [`file`](mod@file): a recording file (or any reader), plain or compressed,
//!   chunk by chunk;
//! - [`header`]: a chunk's fixed header, checked;
//! - [`metadata`]: a chunk's type system;
//! - [`pool`]: a chunk's constant pools, from the checkpoint chain;
//! - [`event`]: event framing, and the one decoder of events' fields (a
//!   plan per event type per chunk) that every output reads through;
//! - [`value`]: generic values of any class, for pools and for the fields
//!   the event decoder has no step of its own for;
//! - [`chunk`]: one chunk, tying these together;
//! - [`cursor`]: bounds-checked reads of the bytes.
//!
//! What a corrupt or hostile file cannot do (`tests/mutations.rs` and the
//! fuzz targets in `convert/fuzz` check it): make the reader panic;
//! make it allocate by a length it has not checked against the bytes there
//! (counts are checked against the bytes left, and vectors reserve at most
//! a fixed number of items before they are read); make it loop (the
//! checkpoint chain must move back through the chunk, nesting is limited,
//! and a class whose values take no bytes cannot be repeated without end);
//! or report an offset outside the file. Offsets are `u64` throughout.

pub mod chunk;
pub mod cursor;
pub mod event;
pub mod file;
pub mod header;
pub mod metadata;
pub mod pool;
pub mod value;

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::OnceLock;

/// A hash map keyed by ids and pool keys from the file, hashed by [`IdHash`].
pub type IdMap<K, V> = HashMap<K, V, IdHash>;

/// Hashes integers from the file: one 64x64-bit multiply, folded, per word,
/// starting from a per-process random seed. Several times faster than
/// std's SipHash on the reader's hot paths (a pool lookup per reference, a
/// class lookup per event), and a file still cannot aim its keys at one
/// bucket without knowing the seed (a chunk of colliding pool keys would
/// make loading its pools quadratic). Not a cryptographic hash: it is
/// enough that a file cannot predict where its keys land.
#[derive(Clone, Copy, Debug)]
pub struct IdHash {
    seed: u64,
}

impl Default for IdHash {
    fn default() -> Self {
        static SEED: OnceLock<u64> = OnceLock::new();
        let seed = *SEED.get_or_init(|| RandomState::new().hash_one(0x6a66_7221u64) | 1);
        Self { seed }
    }
}

impl BuildHasher for IdHash {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher(self.seed)
    }
}

/// The hasher [`IdHash`] builds.
#[derive(Clone, Copy, Debug)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(byte as u64);
        }
    }

    fn write_u64(&mut self, word: u64) {
        // The 128-bit product folded (as in wyhash): every input bit reaches
        // every output bit, so the low bits hashbrown indexes by are mixed.
        let product = ((self.0 ^ word) as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What went wrong reading a recording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The bytes at `offset` are not what the format requires there.
    #[error("at byte {offset}: expected {expected}")]
    Malformed {
        /// The file offset.
        offset: u64,
        /// What the format requires there.
        expected: String,
    },
}
