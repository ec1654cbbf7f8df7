//! The record an allocation callback pushes into the ring buffer, and its
//! decoding on the writer thread.
//!
//! The callback runs on the allocating Java thread, so the record holds only
//! what it can take cheaply and without looking anything up: opaque JVM
//! handles (method ids, the class's and the object's references, the
//! thread's key), the size, the time and the raw stack. The writer thread
//! resolves names later. Little-endian, fixed header, then the frames.
//!
//! [`SampleRecord`] builds a record; [`SampleView`] reads one where it lies,
//! without copying its frames.

use heapsampler_core::options::MAX_DEPTH;

/// One stack frame as JVMTI gives it: a method id and a bytecode location.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RawFrame {
    /// The `jmethodID`, as an integer.
    pub method: u64,
    /// The `jlocation`: the bytecode index, or -1 for a native method.
    /// A record keeps -1 and the indexes a method's code can have (below
    /// 65,535: the JVM limits code to 65,535 bytes); any other value comes
    /// back as -1, a frame without a line.
    pub location: i64,
}

/// Whether a sample's liveness is tracked, as the callback decided it
/// ([`crate::session::Session::tracking`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tracking {
    /// Liveness does not cover it: liveness is off, or the object is at
    /// or above the `live_max` size.
    Excluded,
    /// Covered, but the samples tracked since the last major collection
    /// reached the cap: not drawn, its liveness unknown.
    Capped,
    /// Drawn with this probability: tracked (if a handle could be made).
    Drawn(f64),
    /// Not drawn, at this probability: the tracked ones stand for it.
    NotDrawn(f64),
}

impl Tracking {
    /// The probability with which its liveness was to be tracked: 0 when
    /// excluded or capped.
    pub fn probability(self) -> f64 {
        match self {
            Tracking::Excluded | Tracking::Capped => 0.0,
            Tracking::Drawn(q) | Tracking::NotDrawn(q) => q,
        }
    }

    /// Its kind in a record's flags, above the truncation bit.
    fn kind(self) -> u32 {
        match self {
            Tracking::Excluded => 0,
            Tracking::Capped => 1,
            Tracking::Drawn(_) => 2,
            Tracking::NotDrawn(_) => 3,
        }
    }

    /// The tracking of a record's kind and probability word; `None` if
    /// they do not make one.
    fn decode(kind: u32, probability: f64) -> Option<Self> {
        let drawn = probability > 0.0 && probability <= 1.0;
        match kind {
            0 if probability == 0.0 => Some(Tracking::Excluded),
            1 if probability == 0.0 => Some(Tracking::Capped),
            2 if drawn => Some(Tracking::Drawn(probability)),
            3 if drawn => Some(Tracking::NotDrawn(probability)),
            _ => None,
        }
    }
}

/// What a record says of one sampled allocation, but its frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleHeader {
    /// The allocating thread's key in the agent's thread table.
    pub thread: u64,
    /// When the allocation was sampled, in recording ticks.
    pub ticks: i64,
    /// The object's size in bytes.
    pub size: u64,
    /// The sampling interval in force, in bytes (for the weight).
    pub interval: u64,
    /// The object's class: a key in the agent's class table.
    pub class: u64,
    /// A handle telling later whether the object is still live (a JNI weak
    /// global reference), or 0 when liveness is not tracked.
    pub liveness_handle: u64,
    /// Whether liveness was to be tracked, and with what probability.
    pub tracking: Tracking,
    /// Whether frames below the last one were left out.
    pub truncated: bool,
}

/// One sampled allocation, to encode.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRecord {
    /// All but the frames.
    pub header: SampleHeader,
    /// The frames, top first.
    pub frames: Vec<RawFrame>,
}

/// Bytes before the frames: six u64 fields, the tracking probability (an
/// f64), u32 flags (bit 0: truncated; bits 1 and 2: the tracking's kind),
/// a u32 count.
const HEADER_LEN: usize = 7 * 8 + 4 + 4;
/// Bytes per frame: the method id, then the location in two bytes. Deep
/// stacks make records long, and every byte of them crosses the ring from
/// the allocating thread's cache to the writer's.
const FRAME_LEN: usize = 8 + 2;
/// A frame's location in a record when it is -1 (or no bytecode index).
const NO_LOCATION: u16 = u16::MAX;

/// The largest record: a header and `MAX_DEPTH` frames.
pub const MAX_RECORD_LEN: usize = HEADER_LEN + MAX_DEPTH * FRAME_LEN;

/// The largest record with at most `depth` frames.
pub fn max_record_len(depth: usize) -> usize {
    HEADER_LEN + depth.min(MAX_DEPTH) * FRAME_LEN
}

/// Why a record could not be decoded: it was not written by [`SampleRecord::encode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed sample record of {len} bytes")]
pub struct MalformedRecord {
    /// The record's length.
    pub len: usize,
}

impl SampleRecord {
    /// Encodes the record into `out` (cleared first); `out` keeps its
    /// capacity, so a callback can reuse one buffer without allocating.
    pub fn encode_into(
        out: &mut Vec<u8>,
        header: &SampleHeader,
        frames: impl ExactSizeIterator<Item = RawFrame>,
    ) {
        out.clear();
        for value in [
            header.thread,
            header.ticks as u64,
            header.size,
            header.interval,
            header.class,
            header.liveness_handle,
            header.tracking.probability().to_bits(),
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        let flags = u32::from(header.truncated) | header.tracking.kind() << 1;
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&(frames.len() as u32).to_le_bytes());
        for frame in frames {
            let location = u16::try_from(frame.location)
                .ok()
                .filter(|&index| index != NO_LOCATION)
                .unwrap_or(NO_LOCATION);
            out.extend_from_slice(&frame.method.to_le_bytes());
            out.extend_from_slice(&location.to_le_bytes());
        }
    }

    /// Encodes the record.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.frames.len() * FRAME_LEN);
        Self::encode_into(&mut out, &self.header, self.frames.iter().copied());
        out
    }
}

/// A record as it lies in the ring: the header decoded, the frames left in
/// place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleView<'a> {
    /// All but the frames.
    pub header: SampleHeader,
    /// The encoded frames, [`FRAME_LEN`] bytes each.
    frames: &'a [u8],
}

impl<'a> SampleView<'a> {
    /// Reads a record written by [`SampleRecord::encode`], checking every
    /// length.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, MalformedRecord> {
        let malformed = MalformedRecord { len: bytes.len() };
        let (header, frames) = bytes.split_at_checked(HEADER_LEN).ok_or(malformed)?;
        let word =
            |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let flags = u32::from_le_bytes(header[56..60].try_into().expect("4 bytes"));
        let count = u32::from_le_bytes(header[60..64].try_into().expect("4 bytes")) as usize;
        if count > MAX_DEPTH || frames.len() != count * FRAME_LEN || flags > 7 {
            return Err(malformed);
        }
        let tracking = Tracking::decode(flags >> 1, f64::from_bits(word(6))).ok_or(malformed)?;
        Ok(Self {
            header: SampleHeader {
                thread: word(0),
                ticks: word(1) as i64,
                size: word(2),
                interval: word(3),
                class: word(4),
                liveness_handle: word(5),
                tracking,
                truncated: flags & 1 == 1,
            },
            frames,
        })
    }

    /// The frames, top first.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = RawFrame> + 'a {
        self.frames.chunks_exact(FRAME_LEN).map(|frame| RawFrame {
            method: u64::from_le_bytes(frame[..8].try_into().expect("8 bytes")),
            location: match u16::from_le_bytes(frame[8..].try_into().expect("2 bytes")) {
                NO_LOCATION => -1,
                index => i64::from(index),
            },
        })
    }

    /// A 128-bit hash of the stack (its frames and whether it was cut),
    /// to stand for it as a cache key: storing every distinct stack's
    /// frames as a key would double what a recording of recursive code
    /// keeps. Two stacks share a fingerprint with a probability near
    /// 2^-128 per pair: after a billion distinct stacks, about 10^-21.
    pub fn stack_fingerprint(&self) -> u128 {
        xxhash_rust::xxh3::xxh3_128_with_seed(self.frames, u64::from(self.header.truncated))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(depth: usize) -> SampleRecord {
        SampleRecord {
            header: SampleHeader {
                thread: 7,
                ticks: -3,
                size: 1 << 40,
                interval: 512 * 1024,
                class: 0xdead_beef,
                liveness_handle: u64::MAX,
                tracking: Tracking::Drawn(0.015625),
                truncated: depth == MAX_DEPTH,
            },
            frames: (0..depth)
                .map(|i| RawFrame {
                    method: 0x7f00_0000_0000 + i as u64,
                    location: i as i64 - 1,
                })
                .collect(),
        }
    }

    #[test]
    fn records_round_trip_at_every_depth_bound() {
        for depth in [0, 1, 64, MAX_DEPTH] {
            let original = record(depth);
            let bytes = original.encode();
            assert!(bytes.len() <= MAX_RECORD_LEN);
            let view = SampleView::decode(&bytes).unwrap();
            let decoded = SampleRecord {
                header: view.header,
                frames: view.frames().collect(),
            };
            assert_eq!(decoded, original);
        }
    }

    #[test]
    fn locations_keep_every_bytecode_index_and_others_come_back_as_minus_one() {
        let mut original = record(10);
        let kept = [-1, 0, 1, 255, 256, 65_534];
        let lost = [-2, 65_535, 65_536, i64::MAX];
        for (frame, location) in original.frames.iter_mut().zip(kept.iter().chain(&lost)) {
            frame.location = *location;
        }
        let bytes = original.encode();
        let view = SampleView::decode(&bytes).unwrap();
        let locations: Vec<i64> = view.frames().map(|frame| frame.location).collect();
        assert_eq!(locations, [-1, 0, 1, 255, 256, 65_534, -1, -1, -1, -1]);
    }

    #[test]
    fn encode_into_reuses_the_buffer() {
        let mut buffer = Vec::with_capacity(MAX_RECORD_LEN);
        let capacity = buffer.capacity();
        let original = record(MAX_DEPTH);
        SampleRecord::encode_into(
            &mut buffer,
            &original.header,
            original.frames.iter().copied(),
        );
        assert_eq!(
            buffer.capacity(),
            capacity,
            "no reallocation in the callback"
        );
        assert_eq!(buffer, original.encode());
    }

    #[test]
    fn malformed_records_are_errors_not_panics() {
        let bytes = record(3).encode();
        for cut in 0..bytes.len() {
            assert!(SampleView::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(SampleView::decode(&extra).is_err());
        let mut bad_flags = bytes.clone();
        bad_flags[56] = 8;
        assert!(SampleView::decode(&bad_flags).is_err());
        // A probability that is not one, or one where none belongs.
        for (kind, probability) in [(2, 0.0), (3, 1.5), (2, f64::NAN), (0, 0.5), (1, 1.0)] {
            let mut bad = bytes.clone();
            bad[48..56].copy_from_slice(&f64::to_bits(probability).to_le_bytes());
            bad[56] = kind << 1;
            assert!(SampleView::decode(&bad).is_err(), "{kind} {probability}");
        }
    }

    #[test]
    fn every_tracking_round_trips_with_its_probability() {
        for tracking in [
            Tracking::Excluded,
            Tracking::Capped,
            Tracking::Drawn(1.0),
            Tracking::Drawn(1e-9),
            Tracking::NotDrawn(0.123_456_789),
        ] {
            for truncated in [false, true] {
                let mut original = record(2);
                original.header.tracking = tracking;
                original.header.truncated = truncated;
                let bytes = original.encode();
                let view = SampleView::decode(&bytes).unwrap();
                assert_eq!(view.header, original.header);
            }
        }
    }

    #[test]
    fn fingerprints_tell_stacks_apart() {
        let fingerprint = |record: &SampleRecord| {
            SampleView::decode(&record.encode())
                .unwrap()
                .stack_fingerprint()
        };
        let base = record(3);
        let mut other_thread = base.clone();
        other_thread.header.thread += 1;
        other_thread.header.size += 1;
        assert_eq!(fingerprint(&base), fingerprint(&other_thread));
        let mut cut = base.clone();
        cut.header.truncated = true;
        let mut moved = base.clone();
        moved.frames[2].location += 1;
        let mut shorter = base.clone();
        shorter.frames.pop();
        for different in [cut, moved, shorter] {
            assert_ne!(fingerprint(&base), fingerprint(&different));
        }
    }
}
