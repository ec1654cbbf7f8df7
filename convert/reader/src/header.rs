//! The chunk header: the 68 fixed-width bytes before a chunk's events,
//! checked before anything in the chunk is read by it (the magic, a version
//! JDK tools read, and a size and offsets inside the chunk).

use jfr_format::{ChunkHeader, HEADER_SIZE};

use crate::ReadError;

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
