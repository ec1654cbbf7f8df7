//! Reading JFR recordings, following each chunk's own metadata.
//!
//! Built on the format knowledge in `jfr_writer::format`, which the writer
//! uses too, so reader and writer cannot disagree. Every length read from a
//! file is checked before it is used; a malformed file is an error naming
//! the byte offset and what was expected there.
//!
//! [`file::RecordingFile`] reads a file (or any reader) chunk by chunk,
//! plain or compressed; [`chunk::Chunk`] reads one chunk: its metadata, its
//! constant pools (the checkpoint chain), and its events, every value
//! decoded generically by its class.
//!
//! What a corrupt or hostile file cannot do (`convert/tests/mutations.rs`
//! and the fuzz targets in `convert/fuzz` check it): make the reader panic;
//! make it allocate by a length it has not checked against the bytes there
//! (counts are checked against the bytes left, and vectors reserve at most
//! a fixed number of items before they are read); make it loop (the
//! checkpoint chain must move back through the chunk, nesting is limited,
//! and a class whose values take no bytes cannot be repeated without end);
//! or report an offset outside the file. Offsets are `u64` throughout.

pub mod chunk;
pub mod cursor;
pub mod file;
pub mod metadata;

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::OnceLock;

use jfr_writer::format::{ChunkHeader, HEADER_SIZE};

/// A hash map keyed by ids and pool keys from the file, hashed by [`IdHash`].
pub(crate) type IdMap<K, V> = HashMap<K, V, IdHash>;

/// Hashes integers from the file: one 64x64-bit multiply, folded, per word,
/// starting from a per-process random seed. Several times faster than
/// std's SipHash on the reader's hot paths (a pool lookup per reference, a
/// class lookup per event), and a file still cannot aim its keys at one
/// bucket without knowing the seed (a chunk of colliding pool keys would
/// make loading its pools quadratic). Not a cryptographic hash: it is
/// enough that a file cannot predict where its keys land.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdHash {
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
pub(crate) struct IdHasher(u64);

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

/// Reads and checks the header of the chunk at the start of `bytes`, which
/// stands at `offset` in the file: the magic, a version JDK tools read (1 or
/// 2), and a size and offsets that fit the chunk and the bytes at hand.
pub fn chunk_header(bytes: &[u8], offset: u64) -> Result<ChunkHeader, ReadError> {
    let malformed = |at: u64, expected: String| ReadError::Malformed {
        offset: at,
        expected,
    };
    if bytes.len() < HEADER_SIZE {
        return Err(malformed(
            offset,
            format!(
                "a {HEADER_SIZE}-byte chunk header, but only {} bytes remain",
                bytes.len()
            ),
        ));
    }
    let header = ChunkHeader::decode(bytes).ok_or_else(|| {
        malformed(
            offset,
            "the chunk magic \"FLR\\0\" (is this a JFR recording?)".to_owned(),
        )
    })?;
    if !(1..=2).contains(&header.major) {
        return Err(malformed(
            offset + 4,
            format!(
                "format version 1.x or 2.x, found {}.{}",
                header.major, header.minor
            ),
        ));
    }
    let size = header.chunk_size;
    if size < HEADER_SIZE as u64 || size > bytes.len() as u64 {
        return Err(malformed(
            offset + 8,
            format!(
                "a chunk size from {HEADER_SIZE} to the {} bytes left, found {size}",
                bytes.len()
            ),
        ));
    }
    for (field, at, value) in [
        ("metadata offset", 24, header.metadata_offset),
        ("constant pool offset", 16, header.constant_pool_offset),
    ] {
        if value != 0 && !(HEADER_SIZE as u64..size).contains(&value) {
            return Err(malformed(
                offset + at,
                format!("a {field} inside the {size}-byte chunk, found {value}"),
            ));
        }
    }
    if header.metadata_offset == 0 {
        return Err(malformed(
            offset + 24,
            "a metadata offset (0: the chunk was never finished)".to_owned(),
        ));
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> ChunkHeader {
        ChunkHeader {
            major: 2,
            minor: 1,
            chunk_size: 200,
            constant_pool_offset: 150,
            metadata_offset: 100,
            start_nanos: 1,
            duration_nanos: 2,
            start_ticks: 3,
            ticks_per_second: 1_000_000_000,
            generation: 0,
            flags: 1,
        }
    }

    fn check(header: ChunkHeader, len: usize) -> Result<ChunkHeader, ReadError> {
        let mut bytes = header.encode().to_vec();
        bytes.resize(len, 0);
        chunk_header(&bytes, 1000)
    }

    #[test]
    fn good_headers_pass_and_bad_ones_name_the_field() {
        assert_eq!(check(header(), 200), Ok(header()));
        let cases = [
            (
                ChunkHeader {
                    major: 3,
                    ..header()
                },
                200,
                "byte 1004: expected format version 1.x or 2.x, found 3.1",
            ),
            (
                header(),
                150,
                "byte 1008: expected a chunk size from 68 to the 150 bytes left, found 200",
            ),
            (
                ChunkHeader {
                    metadata_offset: 300,
                    ..header()
                },
                200,
                "byte 1024: expected a metadata offset inside",
            ),
            (
                ChunkHeader {
                    constant_pool_offset: 10,
                    ..header()
                },
                200,
                "byte 1016: expected a constant pool offset",
            ),
            (
                ChunkHeader {
                    metadata_offset: 0,
                    ..header()
                },
                200,
                "never finished",
            ),
        ];
        for (bad, len, message) in cases {
            let error = check(bad, len).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
        let zip = [b"PK\x03\x04".as_slice(), &[0u8; 100]].concat();
        let error = chunk_header(&zip, 0).unwrap_err();
        assert!(
            error.to_string().contains("is this a JFR recording?"),
            "{error}"
        );
    }
}
