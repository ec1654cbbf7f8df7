//! The JFR binary format's names, constants and primitives, in both
//! directions.
//!
//! This crate is the one place that knows the header layout, the flag bits,
//! the string encodings, the varint and the names ([`names`]). `jfr-writer`
//! encodes with it and `jfr-reader` decodes with it, so they cannot
//! disagree; neither depends on the other. It is a crate of its own rather
//! than a module of the writer so that a program that only reads pulls in
//! no encoder.
//! [`guide`] is the format as our writer and reader rely on it, with the
//! JDK sources each point comes from (`FORMAT.md` beside this crate); code
//! comments cite its sections as `FORMAT.md §N`.

#[doc = include_str!("../FORMAT.md")]
pub mod guide {}
pub mod names;

use byteorder::{BigEndian, ByteOrder};

/// The first four bytes of every chunk: `"FLR\0"`.
pub const MAGIC: [u8; 4] = *b"FLR\0";
/// The major version we write (HotSpot 17 and 25 write 2).
pub const VERSION_MAJOR: u16 = 2;
/// The minor version we write (HotSpot writes 1).
pub const VERSION_MINOR: u16 = 1;
/// The size of a chunk header; the first event follows it.
pub const HEADER_SIZE: usize = 68;

/// Header flag: integers are varints. Mission Control honours it; the JDK
/// always reads varints. Always set.
pub const FLAG_COMPRESSED_INTS: u16 = 1;
/// Header flag: this is the recording's last chunk.
pub const FLAG_FINAL_CHUNK: u16 = 2;

/// Generation byte of a chunk that is finished: every offset in its header is
/// valid. Any other value means the chunk is still being written.
pub const GENERATION_FINISHED: u8 = 0;
/// Generation byte while a writer appends to a chunk (HotSpot uses 1..254).
pub const GENERATION_IN_PROGRESS: u8 = 1;

/// A `@Timespan` value that stands for none: the JDK writes `Long.MIN_VALUE`
/// so (a `jdk.ThreadPark` without a timeout), `jfr print` shows it as `N/A`
/// and `RecordedObject.getDuration` returns a `Duration` of
/// `Long.MIN_VALUE` seconds.
pub const NO_TIMESPAN: i64 = i64::MIN;

/// Event type id of the metadata event.
pub const METADATA_EVENT_ID: u64 = 0;
/// Event type id of a checkpoint (constant-pool) event.
pub const CHECKPOINT_EVENT_ID: u64 = 1;

/// The byte offsets of the chunk header's fields (all big-endian).
pub mod header_offset {
    /// `u32` magic.
    pub const MAGIC: usize = 0;
    /// `u16` major version.
    pub const MAJOR: usize = 4;
    /// `u16` minor version.
    pub const MINOR: usize = 6;
    /// `i64` chunk size in bytes, header included.
    pub const CHUNK_SIZE: usize = 8;
    /// `i64` offset of the newest checkpoint from the chunk start (0: none).
    pub const CONSTANT_POOL: usize = 16;
    /// `i64` offset of the metadata event from the chunk start.
    pub const METADATA: usize = 24;
    /// `i64` wall-clock start, nanoseconds since the Unix epoch.
    pub const START_NANOS: usize = 32;
    /// `i64` duration in nanoseconds.
    pub const DURATION_NANOS: usize = 40;
    /// `i64` tick counter at the chunk start.
    pub const START_TICKS: usize = 48;
    /// `i64` ticks per second.
    pub const TICKS_PER_SECOND: usize = 56;
    /// `u8` generation: [`super::GENERATION_FINISHED`] once the chunk is complete.
    pub const GENERATION: usize = 64;
    /// `u16` flags ([`super::FLAG_COMPRESSED_INTS`], [`super::FLAG_FINAL_CHUNK`]).
    pub const FLAGS: usize = 66;
}

/// How a string value is encoded: its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum StringEncoding {
    /// `null`; no body.
    Null = 0,
    /// `""`; no body.
    Empty = 1,
    /// A varint key into the chunk's `java.lang.String` pool.
    ConstantPool = 2,
    /// A varint byte length and UTF-8 bytes.
    Utf8 = 3,
    /// A varint count and that many UTF-16 code units, each a varint.
    CharArray = 4,
    /// A varint byte length and ISO-8859-1 bytes.
    Latin1 = 5,
}

impl StringEncoding {
    /// The encoding for a tag byte, or `None` for an unknown tag.
    pub fn from_tag(tag: u8) -> Option<Self> {
        Some(match tag {
            0 => Self::Null,
            1 => Self::Empty,
            2 => Self::ConstantPool,
            3 => Self::Utf8,
            4 => Self::CharArray,
            5 => Self::Latin1,
            _ => return None,
        })
    }
}

/// The most bytes a varint takes: eight of 7 bits, then one of 8.
pub const MAX_VARINT_LEN: usize = 9;

/// Appends `value` as a JFR varint: 7 bits a byte, least significant first,
/// high bit set when more follow; the ninth byte carries 8 bits, so a 64-bit
/// value never needs ten. No zigzag: write negative numbers as their
/// two's-complement bit pattern, masked to the field's width (see
/// [`write_varint_i32`]).
#[inline]
pub fn write_varint(out: &mut Vec<u8>, value: u64) {
    if value < 0x80 {
        out.push(value as u8);
        return;
    }
    // Encode on the stack, then copy all nine bytes and cut back: a copy of
    // a known size is a few moves, where one of `len` bytes is a call to
    // `memcpy` (a tenth of a writer's time, two events a sample).
    let mut bytes = [0u8; MAX_VARINT_LEN];
    let mut rest = value;
    let mut len = 0;
    while len < MAX_VARINT_LEN - 1 && rest >= 0x80 {
        bytes[len] = rest as u8 | 0x80;
        rest >>= 7;
        len += 1;
    }
    // The last byte: below 0x80, or the ninth, which takes 8 bits whole.
    bytes[len] = rest as u8;
    let start = out.len();
    out.extend_from_slice(&bytes);
    out.truncate(start + len + 1);
}

/// Appends an `int` the way HotSpot does: masked to 32 bits, so `-1` takes
/// five bytes and Mission Control's unsigned read gives `2^32 - 1`, not
/// `2^64 - 1`.
#[inline]
pub fn write_varint_i32(out: &mut Vec<u8>, value: i32) {
    write_varint(out, value as u32 as u64);
}

/// The number of bytes [`write_varint`] uses for `value`.
#[inline]
pub fn varint_len(value: u64) -> usize {
    if value == 0 {
        return 1;
    }
    let bits = 64 - value.leading_zeros() as usize;
    bits.div_ceil(7).min(MAX_VARINT_LEN)
}

/// Writes `value` as a varint of exactly `width` bytes (padded with
/// continuation bytes), as writers do to patch a size in place later.
///
/// # Panics
/// If `width` is not in `1..=8` or `value` needs more than `7 * width` bits.
pub fn write_padded_varint(out: &mut [u8], mut value: u64) {
    let width = out.len();
    assert!(
        (1..=8).contains(&width) && value >> (7 * width) == 0,
        "{value} does not fit a {width}-byte padded varint"
    );
    for (i, byte) in out.iter_mut().enumerate() {
        let more = if i + 1 < width { 0x80 } else { 0 };
        *byte = (value & 0x7f) as u8 | more;
        value >>= 7;
    }
}

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncatedVarint;

/// Reads a varint from the start of `input`; returns it and its length.
#[inline(always)]
pub fn read_varint(input: &[u8]) -> Result<(u64, usize), TruncatedVarint> {
    read_varint_at(input, 0)
}

/// Reads the varint at `at` in `data` (none when `at` is past its end);
/// returns it and its length. The one decoder of the format's varints, for
/// every reader: most are one byte (type ids, pool keys, small numbers),
/// read inline where they are needed, without a call and without cutting
/// `data` first; a longer one is decoded a word at a time
/// (`long_varint`).
#[inline(always)]
pub fn read_varint_at(data: &[u8], at: usize) -> Result<(u64, usize), TruncatedVarint> {
    if let Some(&byte) = data.get(at)
        && byte < 0x80
    {
        return Ok((byte as u64, 1));
    }
    match long_varint(data, at) {
        (value, len) if len > 0 => Ok((value, len)),
        _ => Err(TruncatedVarint),
    }
}

/// The varint at `at` in `data` (of more than one byte, or none: the data
/// ends) and its length; a length of 0 when the data ends first. Returned
/// as a pair rather than a `Result`, so that it comes back in registers;
/// `data` is cut here, not where the varint is read.
#[inline(never)]
fn long_varint(data: &[u8], at: usize) -> (u64, usize) {
    let rest = data.get(at..).unwrap_or_default();
    // With eight bytes at hand, decode them at once: the first byte
    // without the continuation bit ends the varint, and the 7-bit groups
    // before it are packed together in three steps. A ninth byte, when all
    // eight continue, is taken whole.
    if let Some(bytes) = rest.first_chunk::<8>() {
        let word = u64::from_le_bytes(*bytes);
        let ends = !word & 0x8080_8080_8080_8080;
        let (used, len) = if ends == 0 {
            (word, MAX_VARINT_LEN)
        } else {
            let len = ends.trailing_zeros() as usize / 8 + 1;
            (word & (u64::MAX >> (64 - 8 * len)), len)
        };
        let mut value = used & 0x7f7f_7f7f_7f7f_7f7f;
        value = (value & 0x007f_007f_007f_007f) | ((value & 0x7f00_7f00_7f00_7f00) >> 1);
        value = (value & 0x0000_3fff_0000_3fff) | ((value & 0x3fff_0000_3fff_0000) >> 2);
        value = (value & 0x0000_0000_0fff_ffff) | ((value & 0x0fff_ffff_0000_0000) >> 4);
        if len == MAX_VARINT_LEN {
            let Some(&ninth) = rest.get(8) else {
                return (0, 0);
            };
            value |= (ninth as u64) << 56;
        }
        return (value, len);
    }
    // In the last seven bytes: not rare, since every event's last field
    // is there. Fewer than eight bytes: the ninth, taken whole, is never
    // reached.
    let mut value = 0;
    for (i, &byte) in rest.iter().enumerate() {
        value |= ((byte & 0x7f) as u64) << (7 * i);
        if byte < 0x80 {
            return (value, i + 1);
        }
    }
    (0, 0)
}

/// Appends a string value: `null`, empty, or UTF-8 with its byte length.
pub fn write_string(out: &mut Vec<u8>, value: Option<&str>) {
    match value {
        None => out.push(StringEncoding::Null as u8),
        Some("") => out.push(StringEncoding::Empty as u8),
        Some(text) => {
            out.push(StringEncoding::Utf8 as u8);
            write_varint(out, text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        }
    }
}

/// The fixed-width chunk header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Major format version.
    pub major: u16,
    /// Minor format version.
    pub minor: u16,
    /// Chunk size in bytes, header included.
    pub chunk_size: u64,
    /// Offset of the newest checkpoint from the chunk start (0: none).
    pub constant_pool_offset: u64,
    /// Offset of the metadata event from the chunk start.
    pub metadata_offset: u64,
    /// Wall-clock start, nanoseconds since the Unix epoch.
    pub start_nanos: i64,
    /// Duration in nanoseconds.
    pub duration_nanos: i64,
    /// Tick counter at the chunk start.
    pub start_ticks: i64,
    /// Ticks per second.
    pub ticks_per_second: i64,
    /// [`GENERATION_FINISHED`] when the chunk is complete.
    pub generation: u8,
    /// [`FLAG_COMPRESSED_INTS`] | [`FLAG_FINAL_CHUNK`].
    pub flags: u16,
}

impl ChunkHeader {
    /// Encodes the header.
    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        use header_offset as at;
        let mut out = [0u8; HEADER_SIZE];
        out[at::MAGIC..at::MAGIC + 4].copy_from_slice(&MAGIC);
        BigEndian::write_u16(&mut out[at::MAJOR..], self.major);
        BigEndian::write_u16(&mut out[at::MINOR..], self.minor);
        BigEndian::write_u64(&mut out[at::CHUNK_SIZE..], self.chunk_size);
        BigEndian::write_u64(&mut out[at::CONSTANT_POOL..], self.constant_pool_offset);
        BigEndian::write_u64(&mut out[at::METADATA..], self.metadata_offset);
        BigEndian::write_i64(&mut out[at::START_NANOS..], self.start_nanos);
        BigEndian::write_i64(&mut out[at::DURATION_NANOS..], self.duration_nanos);
        BigEndian::write_i64(&mut out[at::START_TICKS..], self.start_ticks);
        BigEndian::write_i64(&mut out[at::TICKS_PER_SECOND..], self.ticks_per_second);
        out[at::GENERATION] = self.generation;
        BigEndian::write_u16(&mut out[at::FLAGS..], self.flags);
        out
    }

    /// Decodes a header, or `None` if `bytes` is shorter than a header or
    /// does not start with [`MAGIC`]. Versions and values are not judged here.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        use header_offset as at;
        if bytes.len() < HEADER_SIZE || bytes[..4] != MAGIC {
            return None;
        }
        Some(Self {
            major: BigEndian::read_u16(&bytes[at::MAJOR..]),
            minor: BigEndian::read_u16(&bytes[at::MINOR..]),
            chunk_size: BigEndian::read_u64(&bytes[at::CHUNK_SIZE..]),
            constant_pool_offset: BigEndian::read_u64(&bytes[at::CONSTANT_POOL..]),
            metadata_offset: BigEndian::read_u64(&bytes[at::METADATA..]),
            start_nanos: BigEndian::read_i64(&bytes[at::START_NANOS..]),
            duration_nanos: BigEndian::read_i64(&bytes[at::DURATION_NANOS..]),
            start_ticks: BigEndian::read_i64(&bytes[at::START_TICKS..]),
            ticks_per_second: BigEndian::read_i64(&bytes[at::TICKS_PER_SECOND..]),
            generation: bytes[at::GENERATION],
            flags: BigEndian::read_u16(&bytes[at::FLAGS..]),
        })
    }
}

/// A class name as Java writes it: `java/lang/String` -> `java.lang.String`,
/// `[I` -> `int[]`, `[[Ljava/lang/String;` -> `java.lang.String[][]`.
pub fn java_class_name(internal: &str) -> String {
    let dimensions = internal.bytes().take_while(|&b| b == b'[').count();
    let element = &internal[dimensions..];
    let base = if dimensions == 0 {
        element.replace('/', ".")
    } else {
        match element {
            "Z" => names::class::BOOLEAN.to_owned(),
            "B" => names::class::BYTE.to_owned(),
            "C" => names::class::CHAR.to_owned(),
            "S" => names::class::SHORT.to_owned(),
            "I" => names::class::INT.to_owned(),
            "J" => names::class::LONG.to_owned(),
            "F" => names::class::FLOAT.to_owned(),
            "D" => names::class::DOUBLE.to_owned(),
            object => object
                .trim_start_matches('L')
                .trim_end_matches(';')
                .replace('/', "."),
        }
    };
    format!("{base}{}", "[]".repeat(dimensions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        write_varint(&mut out, value);
        out
    }

    #[test]
    fn varints_match_the_jdk_examples() {
        assert_eq!(varint(0), [0]);
        assert_eq!(varint(127), [0x7f]);
        assert_eq!(varint(128), [0x80, 0x01]);
        assert_eq!(varint(7340), [0xac, 0x39]);
        // long -1: nine bytes, the last taken whole.
        assert_eq!(varint(u64::MAX), [0xff; 9]);
        // int -1 is masked to 32 bits: five bytes.
        let mut out = Vec::new();
        write_varint_i32(&mut out, -1);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 0x0f]);
        // The JDK 17 recording's checkpoint delta -15252.
        assert_eq!(
            varint(-15252i64 as u64),
            [0xec, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn varints_round_trip_and_report_their_length() {
        let mut values = vec![0, 1, 127, 128, 16383, 16384, u64::MAX, i64::MIN as u64];
        values.extend((0..64).map(|shift| 1u64 << shift));
        values.extend((0..64).map(|shift| (1u64 << shift) - 1));
        for value in values {
            let bytes = varint(value);
            assert_eq!(bytes.len(), varint_len(value), "length of {value}");
            assert_eq!(read_varint(&bytes), Ok((value, bytes.len())), "{value}");
        }
    }

    #[test]
    fn padded_varints_read_like_minimal_ones() {
        let mut out = [0u8; 4];
        write_padded_varint(&mut out, 95);
        assert_eq!(out, [0xdf, 0x80, 0x80, 0x00]);
        assert_eq!(read_varint(&out), Ok((95, 4)));
    }

    #[test]
    fn truncated_varints_are_errors() {
        assert_eq!(read_varint(&[]), Err(TruncatedVarint));
        assert_eq!(read_varint(&[0x80, 0x80]), Err(TruncatedVarint));
        // Cut short anywhere, in the word or in the last bytes; nine bytes
        // always end one (the ninth is taken whole).
        for len in 0..=9 {
            for byte in [0x80u8, 0xff] {
                let read = read_varint(&vec![byte; len]);
                assert_eq!(read.is_ok(), len == 9, "{len} x {byte:#x}: {read:?}");
            }
        }
    }

    /// The varint at the start of `input` byte by byte, as the format
    /// defines it: what the word-at-a-time decoder is checked against.
    fn varint_by_bytes(input: &[u8]) -> Option<(u64, usize)> {
        let mut value = 0u64;
        for (i, &byte) in input.iter().enumerate().take(MAX_VARINT_LEN) {
            if i == MAX_VARINT_LEN - 1 {
                return Some((value | (byte as u64) << 56, MAX_VARINT_LEN));
            }
            value |= ((byte & 0x7f) as u64) << (7 * i);
            if byte & 0x80 == 0 {
                return Some((value, i + 1));
            }
        }
        None
    }

    #[test]
    fn varints_read_as_the_format_defines_them_at_any_distance_from_the_end() {
        let mut values = vec![0, 1, 0x7f, 0x80, 0x3fff, 0x4000, u64::MAX, u64::MAX >> 1];
        for bits in 0..64 {
            values.extend([1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 0x55]);
        }
        for value in values {
            let bytes = varint(value);
            // Followed by 0 to 9 bytes of anything: the decoder reads a
            // word ahead where it can, byte by byte in the last seven.
            for tail in 0..10 {
                let mut data = bytes.clone();
                data.extend(std::iter::repeat_n(0xff, tail));
                assert_eq!(
                    read_varint(&data),
                    Ok((value, bytes.len())),
                    "{value:#x} + {tail}"
                );
            }
        }
        // Padded and overlong encodings, and noise, as a byte-by-byte read
        // takes them.
        let mut data: Vec<u8> = Vec::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..4096 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            data.push(state as u8 | if state & 0x300 != 0 { 0x80 } else { 0 });
        }
        for at in 0..data.len() {
            let rest = &data[at..];
            assert_eq!(read_varint(rest).ok(), varint_by_bytes(rest), "at {at}");
            assert_eq!(read_varint_at(&data, at), read_varint(rest), "at {at}");
        }
        assert_eq!(read_varint_at(&data, data.len() + 1), Err(TruncatedVarint));
    }

    #[test]
    fn header_round_trips() {
        let header = ChunkHeader {
            major: 2,
            minor: 1,
            chunk_size: 466_527,
            constant_pool_offset: 466_432,
            metadata_offset: 8092,
            start_nanos: 0x18ea_5089_051b_5667,
            duration_nanos: 4_032_171_783,
            start_ticks: 381_001_677,
            ticks_per_second: 1_000_000_000,
            generation: 0,
            flags: 3,
        };
        let bytes = header.encode();
        assert_eq!(&bytes[..8], &[0x46, 0x4c, 0x52, 0x00, 0, 2, 0, 1]);
        assert_eq!(&bytes[64..], &[0, 0, 0, 3]);
        assert_eq!(ChunkHeader::decode(&bytes), Some(header));
        assert_eq!(ChunkHeader::decode(&bytes[..67]), None);
    }
}
