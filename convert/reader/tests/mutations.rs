//! Real recordings, mutated with a seeded generator, read whole: every read
//! ends in a result or an error naming the byte offset, never a panic, never
//! a hang, and never an allocation sized by a corrupt length.
//!
//! Two recordings: one written by jfr-writer (several chunks, each with a
//! chain of checkpoints, stack traces, threads, classes and every primitive
//! type) and one by a JDK 17 JVM with `settings=profile`. The mutations:
//! flipped bits, runs of random bytes, varints replaced by 2^40, truncations
//! at many points, duplicated and swapped chunks, and header size and offset
//! fields set to values from 0 to 2^64 - 1. `convert/tests/chunk.rs` flips
//! one byte every 61 bytes of the JDK recording through `Chunk` alone; this
//! reads through `RecordingFile` as the commands do, and also watches time
//! and memory.

use heapsampler_test_support as support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::mpsc;
use std::time::Duration;

use jfr_format::{ChunkHeader, HEADER_SIZE, header_offset, read_varint, write_varint};
use jfr_reader::chunk::Chunk;
use jfr_writer::{EventTypeBuilder, FieldSpec, FieldType, Options, Recording, Ticks};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::read_all::{Totals, read_all};
use support::recordings::{chunk_spans, writer_recording};

/// Counts the bytes each thread has allocated and not freed, and the peak
/// and the largest single allocation since the thread last reset them.
/// Per thread, because the test harness runs tests (and so reads) in
/// parallel in this one binary; each read runs on a thread of its own.
struct Counting;

thread_local! {
    // `const` and without destructors, so using them inside the allocator
    // never allocates and works until the thread is gone.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note_alloc(size: usize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + size as isize);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

fn note_free(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get() - size as isize));
}

// SAFETY: every call goes to the system allocator with the caller's
// arguments unchanged; the counting only reads and writes thread-locals.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, passed on as is.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            note_alloc(layout.size());
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        note_free(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let new = unsafe { System.realloc(pointer, layout, new_size) };
        if !new.is_null() {
            note_free(layout.size());
            note_alloc(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How one guarded read ended.
struct Outcome {
    /// The read's result; the error as its message.
    result: Result<Totals, String>,
    /// The most bytes the read held allocated at once.
    peak: usize,
    /// Its largest single allocation.
    largest: usize,
}

/// A hang guard, not a performance assertion: a read of these recordings
/// (at most a few hundred KB) takes milliseconds; one still running after
/// this long is stuck in a loop, whatever the machine's load.
const HANG_GUARD: Duration = Duration::from_secs(10);

/// Reads `data` whole on a thread of its own, within the hang guard,
/// counting that thread's allocations. Panics (failing the test) if the
/// read panicked or hung; `what` says which mutation it was.
fn guarded_read(data: Vec<u8>, what: &str) -> Outcome {
    let (send, receive) = mpsc::channel();
    let len = data.len();
    std::thread::Builder::new()
        .name(format!("read {what}"))
        .spawn(move || {
            // The input is the caller's allocation, counted before the reset.
            let input = std::io::Cursor::new(data);
            LIVE.set(0);
            PEAK.set(0);
            LARGEST.set(0);
            let result = read_all("mutated.jfr", input).map_err(|e| e.to_string());
            let _ = send.send(Outcome {
                result,
                peak: PEAK.get().max(0) as usize,
                largest: LARGEST.get(),
            });
        })
        .unwrap();
    match receive.recv_timeout(HANG_GUARD) {
        Ok(outcome) => {
            if let Err(message) = &outcome.result {
                check_error(message, len, what);
            }
            outcome
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: the read still runs after {HANG_GUARD:?}: a hang")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("{what}: the read panicked (its message is above)")
        }
    }
}

/// An error names the file and a byte offset inside the input, and says
/// what was expected there.
fn check_error(message: &str, len: usize, what: &str) {
    let offset = message
        .strip_prefix("mutated.jfr: at byte ")
        .and_then(|rest| rest.split_once(": expected "))
        .and_then(|(offset, expected)| {
            (!expected.is_empty()).then_some(offset.parse::<u64>().ok()?)
        });
    match offset {
        Some(offset) => assert!(
            offset <= len as u64,
            "{what}: the error's offset is past the input's {len} bytes: {message}"
        ),
        None => panic!("{what}: not 'FILE: at byte N: expected ...': {message}"),
    }
}

/// The memory a read of `len` bytes may hold at once.
///
/// A read holds one chunk's bytes (at most the input) in a buffer that may
/// have doubled once while filling, the chunk's metadata as strings and
/// classes, and its constant pools as values: 40 bytes per `Value`, plus
/// the vectors and hash table around them. On the two unmutated recordings
/// that is 6 to 10 times the input (measured by `unmutated_reads_are_exact`,
/// which checks this bound too). Mutations that still parse change counts
/// only within the bytes there, so the same order holds; 32 times the input
/// leaves room for that, plus 2 MiB for the buffer the first read reserves
/// (1 MiB) and its doubling. What the bound is for: a length trusted without
/// a check asks for gigabytes (a random 5-byte varint is about 2^31, and
/// the varint mutations below write 2^40), far beyond it.
fn memory_bound(len: usize) -> usize {
    32 * len + (2 << 20)
}

/// The largest single allocation a read of `len` bytes may make: a chunk
/// buffer (up to the input, doubled while filling) or a vector of values
/// (24 to 40 bytes per value, each at least a byte of input, in a vector
/// that may have doubled). The same argument as for [`memory_bound`].
fn largest_bound(len: usize) -> usize {
    16 * len + (2 << 20)
}

fn check_memory(outcome: &Outcome, len: usize, what: &str) {
    assert!(
        outcome.peak <= memory_bound(len),
        "{what}: the read of {len} bytes held {} bytes at once, more than {}",
        outcome.peak,
        memory_bound(len)
    );
    assert!(
        outcome.largest <= largest_bound(len),
        "{what}: the read of {len} bytes allocated {} bytes at once, more than {}",
        outcome.largest,
        largest_bound(len)
    );
}

/// The offsets of every event of an unmutated recording (the offset of its
/// size varint), per chunk, including metadata and checkpoint events.
fn event_offsets(data: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::new();
    for (start, size) in chunk_spans(data) {
        let mut at = start + HEADER_SIZE;
        while at < start + size {
            offsets.push(at);
            at += read_varint(&data[at..]).unwrap().0 as usize;
        }
    }
    offsets
}

fn varint(value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    write_varint(&mut out, value);
    out
}

/// Checks an unmutated read against what the recording holds, and returns
/// its totals.
fn unmutated(data: &[u8], name: &str) -> Totals {
    let outcome = guarded_read(data.to_vec(), name);
    check_memory(&outcome, data.len(), name);
    let totals = outcome.result.clone().unwrap();
    let chunks = chunk_spans(data);
    assert_eq!(totals.chunks, chunks.len() as u64, "{name}");
    assert_eq!(
        totals.chunk_offsets,
        chunks.iter().map(|c| c.0 as u64).collect::<Vec<_>>()
    );
    assert_eq!(totals.truncated, None);
    eprintln!(
        "{name}: {} bytes, {} chunks, {} events, {} values; peak {} bytes ({:.1}x), largest allocation {}",
        data.len(),
        totals.chunks,
        totals.events,
        totals.values,
        outcome.peak,
        outcome.peak as f64 / data.len() as f64,
        outcome.largest
    );
    totals
}

/// The events read from each chunk alone.
fn events_per_chunk(data: &[u8]) -> Vec<u64> {
    chunk_spans(data)
        .iter()
        .map(|&(start, size)| {
            let chunk = Chunk::read(&data[start..start + size], start as u64).unwrap();
            chunk.events().map(Result::unwrap).count() as u64
        })
        .collect()
}

/// Every mutation of `data`, each read within the guards. `seed` makes the
/// run repeatable; a failure names the mutation, so it can be replayed.
fn mutate_and_read(data: &[u8], name: &str, seed: u64) {
    let original = unmutated(data, name);
    let chunks = chunk_spans(data);
    let per_chunk = events_per_chunk(data);
    assert_eq!(per_chunk.iter().sum::<u64>(), original.events);
    let events = event_offsets(data);
    let mut rng = SmallRng::seed_from_u64(seed);
    let len = data.len();
    let read = |mutated: Vec<u8>, what: String| {
        let mutated_len = mutated.len();
        let outcome = guarded_read(mutated, &what);
        check_memory(&outcome, mutated_len, &what);
        outcome.result
    };

    // Flipped bits: 1 to 4 bytes each xor a random non-zero mask.
    for round in 0..250 {
        let mut mutated = data.to_vec();
        let mut what = format!("{name} seed {seed} flip round {round}:");
        for _ in 0..rng.random_range(1..=4) {
            let at = rng.random_range(0..len);
            let mask = rng.random_range(1..=255u8);
            mutated[at] ^= mask;
            what += &format!(" byte {at} ^= {mask:#04x}");
        }
        let _ = read(mutated, what);
    }
    // Runs of 1 to 32 random bytes.
    for round in 0..100 {
        let mut mutated = data.to_vec();
        let at = rng.random_range(0..len);
        let run = rng.random_range(1..=32).min(len - at);
        rng.fill(&mut mutated[at..at + run]);
        let _ = read(
            mutated,
            format!("{name} seed {seed} random round {round}: {run} bytes at {at}"),
        );
    }
    // A varint (at an event's start: its size; or anywhere: whatever field
    // is there) replaced by 2^40, or by the largest value of its own length.
    for round in 0..150 {
        let at = if round % 2 == 0 {
            events[rng.random_range(0..events.len())]
        } else {
            rng.random_range(0..len)
        };
        let Ok((_, old_len)) = read_varint(&data[at..]) else {
            continue;
        };
        let new = if round % 3 == 0 {
            // Same length, all bits set: the layout around it is unchanged.
            let mut same = vec![0xff; old_len];
            same[old_len - 1] = if old_len == 9 { 0xff } else { 0x7f };
            same
        } else {
            varint(1 << 40)
        };
        let mutated = [&data[..at], &new, &data[at + old_len..]].concat();
        let _ = read(
            mutated,
            format!(
                "{name} seed {seed} varint round {round}: the {old_len}-byte varint at {at} \
                 replaced by {new:02x?}"
            ),
        );
    }
    // Truncations, at 150 points spread over the file and at every chunk
    // boundary (and just around it): the complete chunks before the cut
    // are read, and the cut chunk is reported with the bytes it had.
    let mut cuts: Vec<usize> = (0..150)
        .map(|i| i * len / 150 + rng.random_range(0..len / 150))
        .collect();
    for &(start, _) in &chunks {
        cuts.extend([
            start,
            start + 1,
            start + HEADER_SIZE - 1,
            start + HEADER_SIZE,
        ]);
    }
    // Cut at 0, nothing is left: not a recording (issue #19), an error.
    let empty = read(Vec::new(), format!("{name} cut at 0")).unwrap_err();
    assert!(
        empty.contains("at byte 0: expected a JFR recording, but the file is empty"),
        "{name} cut at 0: {empty}"
    );
    for cut in cuts.into_iter().filter(|&cut| 0 < cut && cut < len) {
        let what = format!("{name} cut at {cut}");
        let totals =
            read(data[..cut].to_vec(), what.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let complete = chunks
            .iter()
            .filter(|(start, size)| start + size <= cut)
            .count();
        assert_eq!(totals.chunks, complete as u64, "{what}");
        let cut_chunk = chunks
            .iter()
            .find(|(start, size)| *start < cut && cut < start + size);
        assert_eq!(
            totals.truncated,
            cut_chunk.map(|&(start, _)| (start as u64, (cut - start) as u64)),
            "{what}"
        );
        assert_eq!(
            totals.events,
            per_chunk[..complete].iter().sum::<u64>(),
            "{what}"
        );
    }
    // Each chunk duplicated: a file with one chunk more, read whole.
    for (i, &(start, size)) in chunks.iter().enumerate() {
        let mutated = [&data[..start + size], &data[start..]].concat();
        let what = format!("{name} chunk {i} duplicated");
        let totals = read(mutated, what.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(totals.chunks, chunks.len() as u64 + 1, "{what}");
        assert_eq!(totals.events, original.events + per_chunk[i], "{what}");
        assert_eq!(totals.chunk_offsets[i + 1], (start + size) as u64, "{what}");
    }
    // Two chunks swapped (each chunk stands alone): the same events.
    for round in 0..chunks.len().min(8).saturating_sub(1) {
        let (i, j) = (round, rng.random_range(round + 1..chunks.len()));
        let bytes = |k: usize| &data[chunks[k].0..chunks[k].0 + chunks[k].1];
        let mut mutated = Vec::with_capacity(len);
        for k in 0..chunks.len() {
            mutated.extend_from_slice(bytes(if k == i {
                j
            } else if k == j {
                i
            } else {
                k
            }));
        }
        let what = format!("{name} chunks {i} and {j} swapped");
        let totals = read(mutated, what.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(totals.chunks, chunks.len() as u64, "{what}");
        assert_eq!(totals.events, original.events, "{what}");
    }
    // The header's size and offsets, in every chunk, set to values from 0
    // to 2^64 - 1 (each as a big-endian u64 where the header has it).
    for (i, &(start, size)) in chunks.iter().enumerate() {
        let size = size as u64;
        for (field, at) in [
            ("chunk size", header_offset::CHUNK_SIZE),
            ("constant pool offset", header_offset::CONSTANT_POOL),
            ("metadata offset", header_offset::METADATA),
        ] {
            for value in [
                0,
                1,
                HEADER_SIZE as u64 - 1,
                HEADER_SIZE as u64,
                size - 1,
                size,
                size + 1,
                len as u64,
                1 << 32,
                1 << 40,
                i64::MAX as u64,
                u64::MAX,
                rng.random_range(0..size),
            ] {
                let mut mutated = data.to_vec();
                mutated[start + at..start + at + 8].copy_from_slice(&value.to_be_bytes());
                let _ = read(mutated, format!("{name} chunk {i}: {field} = {value}"));
            }
        }
    }
}

#[test]
fn mutated_writer_recordings_give_results_or_errors() {
    let data = writer_recording();
    let chunks = chunk_spans(&data);
    assert!(chunks.len() >= 4, "several chunks: {}", chunks.len());
    mutate_and_read(&data, "jfr-writer recording", 1);
}

#[test]
fn mutated_jdk_recordings_give_results_or_errors() {
    let data = std::fs::read(support::jdk_recording()).unwrap();
    mutate_and_read(&data, "JDK recording", 2);
}

/// `data`, a one-chunk recording, with the varint at `at`, inside the event
/// (or metadata or checkpoint) at `event`, replaced by `value`: the event's
/// size, the chunk's size and the header's offsets past `at` follow, so the
/// rest of the chunk is where the header says it is.
fn splice_varint(data: &[u8], event: usize, at: usize, value: u64) -> Vec<u8> {
    let (_, old_len) = read_varint(&data[at..]).unwrap();
    let new = varint(value);
    let mut out = [&data[..at], &new, &data[at + old_len..]].concat();
    let grow = new.len() as u64 - old_len as u64;
    // The size keeps its length: padded as HotSpot pads it, with
    // continuation bits on zero groups.
    let (size, size_len) = read_varint(&out[event..]).unwrap();
    let mut new_size = size + grow;
    for i in 0..size_len {
        let last = i == size_len - 1;
        out[event + i] = (new_size & 0x7f) as u8 | if last { 0 } else { 0x80 };
        new_size >>= 7;
    }
    assert_eq!(
        new_size, 0,
        "the event's size still fits its {size_len} bytes"
    );
    for field in [
        header_offset::CHUNK_SIZE,
        header_offset::CONSTANT_POOL,
        header_offset::METADATA,
    ] {
        let old = u64::from_be_bytes(out[field..field + 8].try_into().unwrap());
        if field == header_offset::CHUNK_SIZE || old > at as u64 {
            out[field..field + 8].copy_from_slice(&(old + grow).to_be_bytes());
        }
    }
    out
}

/// Skips `count` varints from `at`.
fn skip_varints(data: &[u8], mut at: usize, count: usize) -> usize {
    for _ in 0..count {
        at += read_varint(&data[at..]).unwrap().1;
    }
    at
}

/// Lengths set to 2^40 where the format has them: a metadata string count,
/// a checkpoint's pool count and a pool's entry count, a string's length,
/// an array's length, and a chunk size. Each is an error at that byte, and
/// no allocation follows the length.
#[test]
fn lengths_of_2_pow_40_are_errors_at_their_offset_not_allocations() {
    // Replaces the varint at `at` in the event at `event` by 2^40 and reads:
    // the error is at `at` and names the length.
    let check = |data: &[u8], event: usize, at: usize, what: &str| {
        let mutated = splice_varint(data, event, at, 1 << 40);
        let len = mutated.len();
        let outcome = guarded_read(mutated, what);
        check_memory(&outcome, len, what);
        let error = outcome
            .result
            .map(|_| ())
            .expect_err(&format!("{what}: a length of 2^40 is refused"));
        assert!(
            error.starts_with(&format!("mutated.jfr: at byte {at}: expected ")),
            "{what}: {error}"
        );
        assert!(error.contains("1099511627776"), "{what}: {error}");
    };

    let jdk = std::fs::read(support::jdk_recording()).unwrap();
    let header = ChunkHeader::decode(&jdk).unwrap();
    // The metadata event: size, type 0, start, duration, id, string count.
    let metadata = header.metadata_offset as usize;
    check(
        &jdk,
        metadata,
        skip_varints(&jdk, metadata, 5),
        "the metadata's string count",
    );
    // The newest checkpoint: size, type 1, start, duration, delta, a type
    // mask byte, the pool count; then the first pool's class id and its
    // entry count.
    let checkpoint = header.constant_pool_offset as usize;
    let pools = skip_varints(&jdk, checkpoint, 5) + 1;
    check(&jdk, checkpoint, pools, "a checkpoint's pool count");
    let entries = skip_varints(&jdk, pools, 2);
    check(&jdk, checkpoint, entries, "a pool's entry count");

    // A string's length and an array's length, in an event of our own
    // where they sit at known places.
    let dir = support::temp_dir("convert_mutations_lengths");
    let path = dir.join("lengths.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let custom = recording
        .register(
            EventTypeBuilder::new("test.Lengths")
                .field(FieldSpec::new("text", FieldType::String))
                .field(FieldSpec::new("numbers", FieldType::Int).array()),
        )
        .unwrap();
    recording
        .event(&custom, Ticks(1))
        .string(Some("abc"))
        .array(&[
            jfr_writer::Value::Int(1),
            jfr_writer::Value::Int(2),
            jfr_writer::Value::Int(3),
        ])
        .commit()
        .unwrap();
    recording.close().unwrap();
    let ours = std::fs::read(&path).unwrap();
    let event = event_offsets(&ours)
        .into_iter()
        .find(|&at| read_varint(&ours[skip_varints(&ours, at, 1)..]).unwrap().0 > 1)
        .unwrap();
    // Size, type, startTime; then the string (encoding 3, length 3, "abc")
    // and the array (length 3, then the items).
    let string = skip_varints(&ours, event, 3);
    assert_eq!(&ours[string..string + 6], &[3, 3, b'a', b'b', b'c', 3]);
    check(&ours, event, string + 1, "a string's length");
    check(&ours, event, string + 5, "an array's length");

    // A chunk size of 2^40 in a stream of unknown length: the buffer
    // follows the bytes that arrive, and the chunk is reported cut short.
    let mut mutated = jdk.clone();
    mutated[header_offset::CHUNK_SIZE..header_offset::CHUNK_SIZE + 8]
        .copy_from_slice(&(1u64 << 40).to_be_bytes());
    let len = mutated.len();
    let outcome = guarded_read(mutated, "a chunk size of 2^40");
    check_memory(&outcome, len, "a chunk size of 2^40");
    assert_eq!(
        outcome.result.unwrap().truncated,
        Some((0, len as u64)),
        "a chunk that claims more than the stream holds is cut short"
    );
}

/// The mutations above with fresh seeds, over and over, for a soak run by
/// hand (`MUTATION_SOAK_SECONDS`, default 600), ideally with overflow
/// checks on:
///
/// ```text
/// CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
///     cargo test --release -p jfr-reader --test integration mutations:: -- --ignored --nocapture
/// ```
#[test]
#[ignore = "a soak run of many minutes; run by hand"]
fn soak_with_fresh_seeds() {
    let seconds: u64 = std::env::var("MUTATION_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let writer = writer_recording();
    let jdk = std::fs::read(support::jdk_recording()).unwrap();
    let start = std::time::Instant::now();
    let mut seed = 1000;
    while start.elapsed() < Duration::from_secs(seconds) {
        mutate_and_read(&writer, "jfr-writer recording", seed);
        mutate_and_read(&jdk, "JDK recording", seed + 1);
        seed += 2;
    }
    eprintln!("soak: seeds 1000 to {seed} passed");
}
