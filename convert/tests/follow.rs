//! Following a recording while it is written, as `heapsampler watch` reads
//! the agent's file: each refresh sees what the last flush wrote; a chunk
//! that ended is read once (its bytes spoilt after, the refreshes go on);
//! a rotation that drops the oldest chunk is read from the start, with
//! nothing counted twice. The recording is made with jfr-writer, flushed
//! between refreshes: a collection a second, the heap after collection `k`
//! `100 + k` MiB, the watch's sites judged every 10 collections, a leak
//! suspect raised after collection 20.

use std::path::Path;

use heapsampler_cli::analysis::follow::{Follow, Followed};
use heapsampler_test_support as support;
use jfr_writer::events::{
    self, GarbageCollection, GcHeapSummary, GcTypes, LeakSuspect, VirtualSpace, WatchedSite,
};
use jfr_writer::{
    EventType, FileSink, FrameType, Options, Recording, StackFrame, StackTrace, StackTraceRef,
    Ticks,
};

const SECOND: i64 = 1_000_000_000;
const MIB: i64 = 1 << 20;

/// The recording being written, and its event types.
struct Writing {
    recording: Recording<FileSink>,
    gc: GcTypes,
    collection: EventType,
    summary: EventType,
    watched: EventType,
    suspect: EventType,
    leak: StackTraceRef,
    leak_class: jfr_writer::ClassRef,
}

impl Writing {
    fn create(path: &Path) -> Self {
        let mut recording = Recording::create(path, Options::default()).unwrap();
        let gc = GcTypes::register(&mut recording).unwrap();
        let collection = recording.register(events::garbage_collection()).unwrap();
        let summary = recording.register(events::gc_heap_summary(&gc)).unwrap();
        let watched = recording.register(events::watched_site()).unwrap();
        let suspect = recording.register(events::leak_suspect()).unwrap();
        let (leak, leak_class) = leak_site(&mut recording);
        Self {
            recording,
            gc,
            collection,
            summary,
            watched,
            suspect,
            leak,
            leak_class,
        }
    }

    /// Collections `ks` (at `k` seconds), the sites judged after every
    /// tenth, then a flush.
    fn collections(&mut self, ks: std::ops::RangeInclusive<i64>) {
        let after = self.gc.when(&mut self.recording, events::AFTER_GC).unwrap();
        for k in ks {
            GarbageCollection {
                start_time: Ticks(k * SECOND),
                duration: SECOND / 100,
                gc_id: k as i32,
            }
            .write(&mut self.recording, &self.collection)
            .unwrap();
            GcHeapSummary {
                start_time: Ticks(k * SECOND + SECOND / 100),
                gc_id: k as i32,
                when: Some(after),
                heap_space: VirtualSpace {
                    start: 0x7000_0000,
                    committed_size: 1024 * MIB,
                    reserved_size: 1024 * MIB,
                },
                heap_used: (100 + k) * MIB,
            }
            .write(&mut self.recording, &self.summary)
            .unwrap();
            if k % 10 == 0 {
                self.judged(k);
            }
        }
        self.recording.flush().unwrap();
    }

    /// The leaking site, `k` MiB live growing 1 MiB/s, and the other sites
    /// with no window yet.
    fn judged(&mut self, k: i64) {
        let leak = WatchedSite {
            start_time: Ticks(k * SECOND + SECOND / 100),
            stack_trace: Some(self.leak).into(),
            gc_id: k as i32,
            object_class: Some(self.leak_class),
            other_sites: false,
            live_bytes: k * MIB,
            live_bytes_low: k * MIB - MIB,
            live_bytes_high: k * MIB + MIB,
            live_samples: 2 * k,
            growth_rate: MIB as f64,
            growth_rate_low: 0.5 * MIB as f64,
            growth_rate_high: 1.5 * MIB as f64,
            window: 30 * SECOND,
        };
        leak.write(&mut self.recording, &self.watched).unwrap();
        WatchedSite {
            stack_trace: None.into(),
            object_class: None,
            other_sites: true,
            growth_rate: f64::NAN,
            growth_rate_low: f64::NAN,
            growth_rate_high: f64::NAN,
            window: jfr_format::NO_TIMESPAN,
            ..leak
        }
        .write(&mut self.recording, &self.watched)
        .unwrap();
        if k == 20 {
            LeakSuspect {
                start_time: leak.start_time,
                stack_trace: leak.stack_trace,
                gc_id: leak.gc_id,
                object_class: leak.object_class,
                other_sites: false,
                growth_rate: leak.growth_rate,
                growth_rate_low: leak.growth_rate_low,
                growth_rate_high: leak.growth_rate_high,
                window: leak.window,
                live_bytes: leak.live_bytes,
                live_bytes_low: leak.live_bytes_low,
                live_bytes_high: leak.live_bytes_high,
                live_samples: leak.live_samples,
                heap_used: 120 * MIB,
                heap_max: 1024 * MIB,
                time_to_heap_max: events::time_to_heap_max(
                    (120 * MIB) as u64,
                    (1024 * MIB) as u64,
                    leak.growth_rate,
                ),
            }
            .write(&mut self.recording, &self.suspect)
            .unwrap();
        }
    }
}

fn leak_site(recording: &mut Recording<FileSink>) -> (StackTraceRef, jfr_writer::ClassRef) {
    let method = support::method_of(recording, "com/example/Leak", "add");
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames: vec![StackFrame {
            method,
            line_number: 12,
            bytecode_index: 0,
            frame_type: FrameType::JitCompiled,
        }],
    });
    (stack, support::class_of(recording, "[B"))
}

/// The collections, the heap after the last, and the last judgment.
fn figures(followed: &Followed) -> (u64, Option<u64>, Option<u64>) {
    let judged = followed.watch.judged.as_ref().map(|j| j.gc_id);
    (followed.collections, followed.heap.back().copied(), judged)
}

#[test]
fn a_recording_is_followed_as_it_grows_each_ended_chunk_read_once() {
    let dir = support::temp_dir("follow");
    let path = dir.join("running.jfr");
    let mut writing = Writing::create(&path);
    let mut follow = Follow::new(&path);
    writing.recording.flush().unwrap();
    assert_eq!(figures(&follow.refresh().unwrap()), (0, None, None));

    writing.collections(1..=10);
    let now = follow.refresh().unwrap();
    assert_eq!(figures(&now), (10, Some(110 * MIB as u64), Some(10)));
    assert_eq!(now.heap.len(), 10);
    let judged = now.watch.judged.as_ref().unwrap();
    assert_eq!(judged.sites.len(), 2);
    let leak = &judged.sites[0];
    assert_eq!(leak.site.stack, "com.example.Leak.add(12)");
    assert_eq!(leak.live.estimate, (10 * MIB) as f64);
    let (growth, window) = leak.growth.unwrap();
    assert_eq!((growth.estimate, window), (MIB as f64, 30 * SECOND));
    assert!(judged.sites[1].site.other_sites && judged.sites[1].growth.is_none());
    assert!(now.watch.raised.is_empty());

    // A second chunk: the first ended, and is folded.
    writing.recording.end_chunk().unwrap();
    writing.collections(11..=20);
    let now = follow.refresh().unwrap();
    assert_eq!(figures(&now), (20, Some(120 * MIB as u64), Some(20)));
    assert_eq!(now.watch.raised.len(), 1);

    // The first chunk is not read again: spoilt, it changes nothing.
    let bytes = std::fs::read(&path).unwrap();
    let second = chunk_offsets(&bytes)[1];
    spoil(&path, 0, b"XXXX");
    writing.collections(21..=25);
    let now = follow.refresh().unwrap();
    assert_eq!(figures(&now), (25, Some(125 * MIB as u64), Some(20)));
    assert_eq!(now.heap.len(), 25);
    assert_eq!(now.watch.raised.len(), 1);

    // A rotation drops the first chunk (the file renamed over, as the
    // agent's rotation does): read from the start, the second chunk is the
    // one at 0, and nothing is counted twice.
    let bytes = std::fs::read(&path).unwrap();
    let rotated = dir.join("rotated.jfr");
    std::fs::write(&rotated, &bytes[second as usize..]).unwrap();
    std::fs::rename(&rotated, &path).unwrap();
    let now = follow.refresh().unwrap();
    assert_eq!(figures(&now), (25, Some(125 * MIB as u64), Some(20)));
    assert_eq!(now.heap.len(), 25);
    writing.recording.close().unwrap();
}

/// Where each chunk of a plain recording starts.
fn chunk_offsets(bytes: &[u8]) -> Vec<u64> {
    let mut offsets = Vec::new();
    let mut at = 0usize;
    while at + 16 <= bytes.len() {
        offsets.push(at as u64);
        let size = u64::from_be_bytes(bytes[at + 8..at + 16].try_into().unwrap());
        at += size as usize;
    }
    offsets
}

/// Writes `with` over the file's bytes at `at`, in place (as the agent's
/// own writes are: the follower's reads see it).
fn spoil(path: &Path, at: u64, with: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(with).unwrap();
}
