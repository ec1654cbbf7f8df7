//! Files that keep only their most recent chunks (`max_size`, `max_age`),
//! and snapshots of recordings still being written, as the JDK's own
//! parser (`jfr`) reads them.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use heapsampler_test_support::{
    json_events, print_json, summary, summary_chunks, summary_count, temp_dir,
};
use jfr_writer::events::{self, ObjectAllocationSample};
use jfr_writer::snapshot::write_snapshot;
use jfr_writer::{Class, EventType, FileSink, Options, Recording, Thread, ThreadRef};

fn allocation_recording(
    path: &Path,
    options: Options,
) -> (Recording<FileSink>, EventType, ThreadRef) {
    let mut recording = Recording::create(path, options).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "t".into(),
        os_thread_id: 1,
        java_name: "t".into(),
        java_thread_id: 1,
        group: None,
    });
    (recording, alloc, thread)
}

/// Writes the sample numbered `n` (its weight).
fn write(recording: &mut Recording<FileSink>, alloc: &EventType, thread: ThreadRef, n: i64) {
    let sample = ObjectAllocationSample {
        start_time: recording.clock().now(),
        event_thread: Some(thread),
        stack_trace: None.into(),
        object_class: None,
        weight: n,
    };
    sample.write(recording, alloc).unwrap();
}

/// The weights of the allocation samples the JDK reads in `path`, in file
/// order.
fn weights(path: &Path) -> Vec<i64> {
    let document = print_json(path);
    json_events(&document)
        .iter()
        .filter(|e| e["type"] == "jdk.ObjectAllocationSample")
        .map(|e| e["values"]["weight"].as_i64().expect("a weight"))
        .collect()
}

/// Asserts that `weights` is `first..end` for some `first`: a contiguous
/// run of the most recent samples, none missing or repeated.
fn assert_most_recent_run(weights: &[i64], end: i64) -> i64 {
    let first = *weights.first().expect("some samples kept");
    let expected: Vec<i64> = (first..end).collect();
    assert!(
        weights == expected.as_slice(),
        "not the run {first}..{end}: {} samples, first {:?}, last {:?}",
        weights.len(),
        &weights[..weights.len().min(5)],
        &weights[weights.len().saturating_sub(5)..]
    );
    first
}

#[test]
fn max_size_keeps_the_most_recent_whole_chunks() {
    let dir = temp_dir("rotate_max_size");
    let path = dir.join("bounded.jfr");
    const MAX_SIZE: u64 = 64 * 1024;
    let options = Options {
        max_size: Some(MAX_SIZE),
        ..Options::default()
    };
    let (mut recording, alloc, thread) = allocation_recording(&path, options);
    // Chunks are an eighth of the limit; each may pass it by one flush.
    let chunk_bound = MAX_SIZE / 8 + 4 * 1024;
    let count = 40_000;
    let mut largest = 0;
    for n in 0..count {
        write(&mut recording, &alloc, thread, n);
        if n % 50 == 49 {
            recording.flush().unwrap();
            largest = largest.max(std::fs::metadata(&path).unwrap().len());
        }
    }
    assert!(
        recording.bytes_written() > 8 * MAX_SIZE,
        "the test writes many limits' worth: {}",
        recording.bytes_written()
    );
    recording.close().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        largest <= MAX_SIZE + chunk_bound && size <= MAX_SIZE + chunk_bound,
        "the file grew to {largest} bytes (at the end {size}), over {MAX_SIZE} + one chunk"
    );
    // A rotation drops down to three quarters of the limit.
    assert!(
        size >= MAX_SIZE / 4 * 3 - chunk_bound,
        "the most recent chunks within the limit are kept: {size} bytes"
    );
    assert!(
        !dir.read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")),
        "no temporary file left behind"
    );

    let summary = summary(&path);
    assert!(summary_chunks(&summary) >= 4, "{summary}");
    let weights = weights(&path);
    assert_eq!(
        summary_count(&summary, "jdk.ObjectAllocationSample"),
        weights.len() as u64
    );
    let first = assert_most_recent_run(&weights, count);
    assert!(first > 0, "old chunks were dropped");
}

#[test]
fn max_size_smaller_than_a_chunk_keeps_the_newest_chunks() {
    let dir = temp_dir("rotate_tiny");
    let path = dir.join("tiny.jfr");
    let options = Options {
        max_size: Some(1),
        max_chunk_size: 4 * 1024,
        ..Options::default()
    };
    let (mut recording, alloc, thread) = allocation_recording(&path, options);
    let count = 5_000;
    for n in 0..count {
        write(&mut recording, &alloc, thread, n);
        if n % 20 == 19 {
            recording.flush().unwrap();
        }
    }
    recording.close().unwrap();
    let summary = summary(&path);
    // The newest complete chunk survives every rotation: at the end, the
    // last chunk is it.
    assert_eq!(summary_chunks(&summary), 1, "{summary}");
    let first = assert_most_recent_run(&weights(&path), count);
    assert!(first > count / 2, "{first}");
}

#[test]
fn max_age_drops_chunks_that_ended_before_it() {
    let dir = temp_dir("rotate_max_age");
    let path = dir.join("aged.jfr");
    let options = Options {
        max_age: Some(Duration::from_millis(400)),
        ..Options::default()
    };
    let (mut recording, alloc, thread) = allocation_recording(&path, options);
    let mut n = 0;
    // Until a chunk has been dropped: the first kept sample is not the
    // first written.
    let mut rounds = 0;
    loop {
        for _ in 0..20 {
            write(&mut recording, &alloc, thread, n);
            n += 1;
        }
        recording.flush().unwrap();
        std::thread::sleep(Duration::from_millis(10));
        rounds += 1;
        if rounds % 50 == 0 {
            let snapshot = dir.join(format!("snapshot-{rounds}.jfr"));
            write_snapshot(&path, &snapshot).unwrap();
            let first = assert_most_recent_run(&weights(&snapshot), n);
            if first > 0 {
                break;
            }
        }
        assert!(rounds < 100_000, "no chunk ever dropped");
    }
    recording.close().unwrap();
    let first = assert_most_recent_run(&weights(&path), n);
    assert!(first > 0);
}

#[test]
fn a_snapshot_is_everything_flushed_so_far() {
    let dir = temp_dir("snapshot_flushed");
    let path = dir.join("running.jfr");
    let options = Options {
        max_chunk_size: 8 * 1024,
        ..Options::default()
    };
    let (mut recording, alloc, thread) = allocation_recording(&path, options);
    for n in 0..2_000 {
        write(&mut recording, &alloc, thread, n);
        if n % 100 == 99 {
            recording.flush().unwrap();
        }
    }
    // Not flushed: not in a snapshot of the file.
    for n in 2_000..2_050 {
        write(&mut recording, &alloc, thread, n);
    }
    let from_file = dir.join("from-file.jfr");
    let taken = write_snapshot(&path, &from_file).unwrap();
    assert!(taken.chunks >= 2, "{taken:?}");
    assert_eq!(taken.bytes, std::fs::metadata(&from_file).unwrap().len());
    assert_eq!(weights(&from_file), (0..2_000).collect::<Vec<_>>());

    // The recording's own snapshot flushes first.
    let from_recording = dir.join("from-recording.jfr");
    recording.snapshot(&from_recording).unwrap();
    assert_eq!(weights(&from_recording), (0..2_050).collect::<Vec<_>>());
    let summary = summary(&from_recording);
    assert_eq!(summary_count(&summary, "jdk.ObjectAllocationSample"), 2_050);

    // And the recording goes on, untouched.
    for n in 2_050..3_000 {
        write(&mut recording, &alloc, thread, n);
    }
    recording.close().unwrap();
    assert_eq!(weights(&path), (0..3_000).collect::<Vec<_>>());
}

/// A snapshot's tail: events in the snapshot only, whose constants (a
/// class first used there) the snapshot's pools hold, while the recording
/// goes on without the events and with pools that still say everything its
/// own later events use.
#[test]
fn a_snapshots_tail_is_in_the_snapshot_only() {
    let dir = temp_dir("snapshot_tail");
    let path = dir.join("running.jfr");
    let (mut recording, alloc, thread) = allocation_recording(&path, Options::default());
    for n in 0..100 {
        write(&mut recording, &alloc, thread, n);
    }
    let class_named = |recording: &mut Recording<FileSink>, name: &str| {
        let name = recording.symbol(name);
        recording.class(Class {
            class_loader: None,
            name,
            package: None,
            modifiers: 0,
            hidden: false,
        })
    };
    let with_tail = dir.join("with-tail.jfr");
    let written = recording
        .snapshot_with(&with_tail, |recording| {
            let class = class_named(recording, "pkg/OnlyInTheTail");
            for n in 100..103 {
                ObjectAllocationSample {
                    start_time: recording.clock().now(),
                    event_thread: Some(thread),
                    stack_trace: None.into(),
                    object_class: Some(class),
                    weight: n,
                }
                .write(recording, &alloc)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(written.bytes, std::fs::metadata(&with_tail).unwrap().len());
    assert_eq!(weights(&with_tail), (0..103).collect::<Vec<_>>());
    let tail_classes: Vec<String> = json_events(&print_json(&with_tail))
        .iter()
        .filter(|e| e["values"]["weight"].as_i64() >= Some(100))
        .map(|e| e["values"]["objectClass"]["name"].to_string())
        .collect();
    assert_eq!(tail_classes, ["\"pkg/OnlyInTheTail\""; 3]);
    assert_eq!(
        recording.events_written(),
        100,
        "the tail is not the recording's"
    );

    // The recording goes on without the tail; a class the tail used first
    // is written for the recording's own events too.
    let class = class_named(&mut recording, "pkg/OnlyInTheTail");
    ObjectAllocationSample {
        start_time: recording.clock().now(),
        event_thread: Some(thread),
        stack_trace: None.into(),
        object_class: Some(class),
        weight: 100,
    }
    .write(&mut recording, &alloc)
    .unwrap();
    recording.close().unwrap();
    assert_eq!(weights(&path), (0..101).collect::<Vec<_>>());
    let last = json_events(&print_json(&path)).last().cloned().unwrap();
    assert_eq!(last["values"]["objectClass"]["name"], "pkg/OnlyInTheTail");
}

#[test]
fn snapshots_taken_while_the_file_rotates_are_consistent() {
    let dir = temp_dir("snapshot_rotating");
    let path = dir.join("rotating.jfr");
    let options = Options {
        max_size: Some(128 * 1024),
        ..Options::default()
    };
    let (mut recording, alloc, thread) = allocation_recording(&path, options);
    // One flush before the reader starts, so the file has a chunk.
    write(&mut recording, &alloc, thread, 0);
    recording.flush().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer_stop = Arc::clone(&stop);
    let writer = std::thread::spawn(move || {
        let mut n = 1;
        while !writer_stop.load(Ordering::Relaxed) {
            write(&mut recording, &alloc, thread, n);
            n += 1;
            if n % 10 == 0 {
                recording.flush().unwrap();
            }
        }
        recording.close().unwrap();
        n
    });
    let mut snapshots = Vec::new();
    while snapshots.len() < 40 {
        let to = dir.join(format!("snapshot-{}.jfr", snapshots.len()));
        write_snapshot(&path, &to).unwrap();
        snapshots.push(to);
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    // Each snapshot is one state of the file: a contiguous run of samples
    // (the JDK checks a few; the rest are checked by their chunk headers
    // through our own reading below).
    let mut firsts = Vec::new();
    for to in snapshots.iter().step_by(10) {
        let weights = weights(to);
        let last = *weights.last().unwrap();
        firsts.push(assert_most_recent_run(&weights, last + 1));
    }
    assert!(
        firsts.windows(2).all(|w| w[0] <= w[1]),
        "later snapshots start no earlier: {firsts:?}"
    );
    assert!(*firsts.last().unwrap() > 0, "the file rotated meanwhile");
    assert_most_recent_run(&weights(&path), written);
}

#[test]
fn bad_inputs_give_clear_errors() {
    let dir = temp_dir("snapshot_errors");
    let compressed = dir.join("a.jfr.zst");
    let options = Options {
        max_size: Some(1 << 20),
        ..Options::default()
    };
    let error = Recording::create(&compressed, options)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("needs a plain .jfr file, not a .zst one"),
        "{error}"
    );

    let not_jfr = dir.join("text.jfr");
    std::fs::write(
        &not_jfr,
        "hello, this is not a recording at all, not even close to one, really not at all",
    )
    .unwrap();
    let error = write_snapshot(&not_jfr, &dir.join("out.jfr"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("not an uncompressed JFR recording"),
        "{error}"
    );
    assert!(!dir.join("out.jfr").exists());

    let missing = write_snapshot(&dir.join("missing.jfr"), &dir.join("out.jfr"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("cannot open"), "{missing}");

    // A chunk begun but never flushed (as HotSpot begins one: size 68,
    // offsets 0, generation 1) has nothing to copy.
    let begun = dir.join("begun.jfr");
    let header = jfr_format::ChunkHeader {
        major: 2,
        minor: 1,
        chunk_size: jfr_format::HEADER_SIZE as u64,
        constant_pool_offset: 0,
        metadata_offset: 0,
        start_nanos: 1,
        duration_nanos: 0,
        start_ticks: 1,
        ticks_per_second: 1_000_000_000,
        generation: 1,
        flags: jfr_format::FLAG_COMPRESSED_INTS,
    };
    std::fs::write(&begun, header.encode()).unwrap();
    let error = write_snapshot(&begun, &dir.join("out.jfr"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("no complete chunk yet"), "{error}");

    // A recording just created is complete, of no events: copied whole.
    let created = dir.join("created.jfr");
    let (recording, _, _) = allocation_recording(&created, Options::default());
    let copied = write_snapshot(&created, &dir.join("out.jfr")).unwrap();
    assert_eq!((copied.chunks, copied.left_out), (1, 0));
    assert_eq!(summary_chunks(&summary(&dir.join("out.jfr"))), 1);

    // Never over the recording itself.
    let error = write_snapshot(&created, &created).unwrap_err().to_string();
    assert!(error.contains("overwrite the recording itself"), "{error}");
    drop(recording);
}
