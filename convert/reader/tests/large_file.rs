//! Recordings past 4 GiB: every offset is a u64, so chunks, events and
//! errors past 2^32 are reported at their true offsets. Proved without 4 GiB
//! of disk or memory: `RecordingFile` reads a stream that repeats a real JDK
//! chunk until it is past 4 GiB, generated as it is read.

use heapsampler_test_support as support;

use std::io::{self, Read};

use jfr_format::ChunkHeader;
use jfr_reader::ReadError;
use jfr_reader::chunk::Chunk;
use jfr_reader::file::{FileError, RecordingFile};

/// `count` copies of `chunk`, back to back, with `patches` (offset in the
/// stream, bytes) laid over them; made as it is read.
struct Repeated {
    chunk: Vec<u8>,
    count: u64,
    patches: Vec<(u64, Vec<u8>)>,
    position: u64,
}

impl Repeated {
    fn len(&self) -> u64 {
        self.chunk.len() as u64 * self.count
    }
}

impl Read for Repeated {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let size = self.chunk.len() as u64;
        let left = self.len() - self.position;
        let within = (self.position % size) as usize;
        let n = buffer
            .len()
            .min(self.chunk.len() - within)
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        buffer[..n].copy_from_slice(&self.chunk[within..within + n]);
        let (start, end) = (self.position, self.position + n as u64);
        for (at, bytes) in &self.patches {
            for (i, byte) in bytes.iter().enumerate() {
                let at = at + i as u64;
                if (start..end).contains(&at) {
                    buffer[(at - start) as usize] = *byte;
                }
            }
        }
        self.position = end;
        Ok(n)
    }
}

/// The offset a `Malformed` error names.
fn offset_of(error: &ReadError) -> u64 {
    let ReadError::Malformed { offset, .. } = error;
    *offset
}

/// About 4.3 GB are read (copied from one chunk in memory, chunk by chunk
/// into the reader's buffer), of which the chunks past 4 GiB are parsed in
/// full: under a second in release on the project's 2-core machine.
#[test]
fn chunks_events_and_errors_past_4_gib_have_their_true_offsets() {
    let chunk = std::fs::read(support::jdk_recording()).unwrap();
    let size = chunk.len() as u64;
    assert_eq!(
        ChunkHeader::decode(&chunk).unwrap().chunk_size,
        size,
        "the JDK's recording is one chunk"
    );
    // The events of the chunk at offset 0: each copy has them at its own
    // offset plus these.
    let reference: Vec<u64> = Chunk::read(&chunk, 0)
        .unwrap()
        .events()
        .map(|e| e.unwrap().offset)
        .collect();
    assert!(reference.len() > 100);

    // Enough copies that the last four start past 2^32.
    let count = (1u64 << 32).div_ceil(size) + 4;
    let corrupt_event = count - 3; // an event of this chunk has size 0
    // This chunk's magic is "FLX\0": a corrupt chunk, as a chunk follows it
    // (at the end, it would be read as bytes a writer cut short).
    let corrupt_magic = count - 2;
    let victim = reference[reference.len() / 2];
    let event_error_at = corrupt_event * size + victim;
    let magic_error_at = corrupt_magic * size;
    assert!(corrupt_event * size > 1 << 32);
    let stream = Repeated {
        chunk,
        count,
        patches: vec![
            (event_error_at, vec![0]),
            (magic_error_at + 2, b"X".to_vec()),
        ],
        position: 0,
    };
    let total = stream.len();
    assert!(total > (1 << 32) + 2 * size);
    // Keep the reference chunk to compare parsed events with.
    let original = stream.chunk.clone();
    let mut recording = RecordingFile::from_reader("repeated.jfr", stream).unwrap();

    let mut chunks = 0u64;
    let mut past_4_gib = 0;
    let mut event_error = None;
    let error = loop {
        let raw = match recording.next_chunk() {
            Ok(Some(raw)) => raw,
            Ok(None) => panic!("the stream ended without the corrupt magic being seen"),
            Err(error) => break error,
        };
        assert_eq!(raw.offset, chunks * size, "chunk {chunks}");
        assert_eq!(raw.bytes.len() as u64, size, "chunk {chunks}");
        // Parse the first chunk and those that reach past 4 GiB in full;
        // the others are only carried through the stream (parsing all
        // 21,000 of them would take minutes and prove nothing more).
        if chunks == 0 || raw.offset + size > 1 << 32 {
            let parsed = Chunk::read(&raw.bytes, raw.offset).unwrap();
            let mut offsets = Vec::new();
            for event in parsed.events() {
                match event {
                    Ok(event) => offsets.push(event.offset),
                    Err(error) => {
                        event_error = Some((chunks, error));
                        break;
                    }
                }
            }
            if raw.offset > 1 << 32 {
                past_4_gib += 1;
                assert!(offsets.iter().all(|&o| o > 1 << 32));
            }
            let expected: Vec<u64> = reference.iter().map(|o| raw.offset + o).collect();
            if chunks == corrupt_event {
                assert_eq!(offsets, expected[..offsets.len()], "chunk {chunks}");
            } else {
                assert_eq!(offsets, expected, "chunk {chunks}");
                assert_eq!(raw.bytes, original, "chunk {chunks}");
            }
        }
        chunks += 1;
    };
    assert_eq!(chunks, corrupt_magic, "every chunk before the corrupt one");
    assert!(past_4_gib >= 2, "{past_4_gib} chunks parsed past 4 GiB");

    // The corrupt event, past 4 GiB, at its exact offset.
    let (in_chunk, event_error) = event_error.expect("the corrupt event is an error");
    assert_eq!(in_chunk, corrupt_event);
    assert_eq!(offset_of(&event_error), event_error_at, "{event_error}");
    assert!(event_error_at > 1 << 32);
    assert!(
        event_error
            .to_string()
            .contains(&format!("at byte {event_error_at}: expected an event size")),
        "{event_error}"
    );
    // The corrupt magic, at the chunk's exact offset.
    match error {
        FileError::Malformed { path, source } => {
            assert_eq!(path.to_str(), Some("repeated.jfr"));
            assert_eq!(offset_of(&source), magic_error_at, "{source}");
            assert!(magic_error_at > 1 << 32);
        }
        other => panic!("expected a malformed chunk, found {other}"),
    }
    assert!(magic_error_at < total);
}

/// A stream past 4 GiB whose last chunk is cut short: the cut is reported
/// at the chunk's true offset, with the bytes it had. Only the headers and
/// bytes pass through here; nothing is parsed, so this is the copy alone.
#[test]
fn a_chunk_cut_short_past_4_gib_is_reported_at_its_offset() {
    let chunk = std::fs::read(support::jdk_recording()).unwrap();
    let size = chunk.len() as u64;
    let count = (1u64 << 32).div_ceil(size) + 1;
    let stream = Repeated {
        chunk,
        count,
        patches: Vec::new(),
        position: 0,
    };
    let cut = 1000;
    let total = stream.len() - size + cut;
    let mut recording = RecordingFile::from_reader("cut.jfr", stream.take(total)).unwrap();
    let mut chunks = 0;
    while let Some(raw) = recording.next_chunk().unwrap() {
        assert_eq!(raw.offset, chunks * size);
        chunks += 1;
    }
    assert_eq!(chunks, count - 1);
    let last = (count - 1) * size;
    assert!(last > 1 << 32);
    assert_eq!(recording.truncated(), Some((last, cut)));
}
