//! Demotable events ([`Recording::begin_demotable`]): a snapshot written at
//! each chunk's end under `jdk.OldObjectSample`, the one before renamed to
//! `heapsampler.OldObjectSnapshot` once the next is in the file, read by
//! the JDK (`jfr summary`, `jfr print`, `RecordingFile`) and by Mission
//! Control's leak model (`jmc-check --leaks`).

use heapsampler_test_support as support;

use std::path::Path;
use std::time::Duration;

use jfr_format::names::event;
use jfr_format::varint_len;
use jfr_writer::events::{self, OldObjectSample, OldObjectTypes};
use jfr_writer::{
    DemotableEvents, Error, EventType, EventTypeBuilder, FieldSpec, FieldType, FileSink, Options,
    Recording, Sink,
};
use support::{dump_types, json_events, print_json, summary, summary_chunks, summary_count};

struct Snapshots {
    types: OldObjectTypes,
    sample: EventType,
    snapshot: EventType,
}

/// Registers the old object types, then filler types until the next id
/// needs two varint bytes, then the twin: `jdk.OldObjectSample`'s id is
/// padded to the twin's width, which this proves readers accept.
fn register<S: Sink>(recording: &mut Recording<S>) -> Snapshots {
    let types = OldObjectTypes::register(recording).unwrap();
    let sample = recording
        .register(events::old_object_sample(&types))
        .unwrap();
    let mut filler = 0;
    let snapshot = loop {
        let probe = recording
            .register(
                EventTypeBuilder::new(&format!("test.Filler{filler}"))
                    .field(FieldSpec::new("n", FieldType::Int)),
            )
            .unwrap();
        filler += 1;
        if varint_len(probe.id().get() + 1) > 1 {
            break recording
                .register(events::old_object_snapshot(&types))
                .unwrap();
        }
    };
    assert_eq!(varint_len(sample.id().get()), 1, "{:?}", sample.id());
    assert_eq!(varint_len(snapshot.id().get()), 2, "{:?}", snapshot.id());
    Snapshots {
        types,
        sample,
        snapshot,
    }
}

/// Writes snapshot `number` of `objects` objects, demotable: each object's
/// size is the snapshot's number, its identity (address) its index.
fn write_snapshot<S: Sink>(
    recording: &mut Recording<S>,
    snapshots: &Snapshots,
    number: i64,
    objects: u64,
) -> DemotableEvents {
    recording
        .begin_demotable(&snapshots.sample, &snapshots.snapshot)
        .unwrap();
    let class = support::class_of(recording, "[J");
    for address in 1..=objects {
        let object = snapshots
            .types
            .old_object(recording, address, Some(class), None, None)
            .unwrap();
        let now = recording.clock().now();
        OldObjectSample {
            start_time: now,
            duration: 0,
            event_thread: None,
            stack_trace: None.into(),
            allocation_time: now,
            object_size: number,
            object_age: 0,
            last_known_heap_usage: 0,
            object: Some(object),
            array_elements: 8,
            root: None,
        }
        .write(recording, &snapshots.sample)
        .unwrap();
    }
    let group = recording.end_demotable().unwrap();
    assert_eq!(group.len() as u64, objects);
    group
}

/// The `objectSize` of each `jdk.OldObjectSample` and of each
/// `heapsampler.OldObjectSnapshot`, as `jfr print --json` reads them.
fn sizes(path: &Path) -> (Vec<i64>, Vec<i64>) {
    let document = print_json(path);
    let of = |name: &str| -> Vec<i64> {
        json_events(&document)
            .iter()
            .filter(|e| e["type"] == name)
            .map(|e| e["values"]["objectSize"].as_i64().expect("a size"))
            .collect()
    };
    (of(event::OLD_OBJECT_SAMPLE), of(event::OLD_OBJECT_SNAPSHOT))
}

#[test]
fn each_chunk_ends_with_a_snapshot_and_only_the_newest_keeps_the_jdk_name() {
    let dir = support::temp_dir("demote_chunk_ends");
    let path = dir.join("snapshots.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    recording.end_chunks_manually();
    let snapshots = register(&mut recording);
    assert!(recording.can_demote());
    // Growing live sets, as a leak's: 10, 20, 30, 40 objects, the same
    // identities each time.
    let mut previous = None;
    for number in 1..=4 {
        let group = write_snapshot(&mut recording, &snapshots, number, 10 * number as u64);
        recording.end_chunk().unwrap();
        if let Some(previous) = previous.replace(group) {
            assert_eq!(
                recording.demote(previous).unwrap(),
                10 * (number as usize - 1)
            );
        }
        // The file after each chunk end: one snapshot under the JDK's name.
        let (samples, snapshotted) = sizes(&path);
        assert_eq!(samples, vec![number; 10 * number as usize]);
        assert_eq!(
            snapshotted.len(),
            (1..number).map(|n| 10 * n as usize).sum::<usize>()
        );
    }
    recording.close().unwrap();

    let summary = summary(&path);
    assert_eq!(summary_chunks(&summary), 4, "{summary}");
    assert_eq!(
        summary_count(&summary, event::OLD_OBJECT_SAMPLE),
        40,
        "{summary}"
    );
    assert_eq!(
        summary_count(&summary, event::OLD_OBJECT_SNAPSHOT),
        60,
        "{summary}"
    );
    let (samples, snapshotted) = sizes(&path);
    assert_eq!(samples, vec![4; 40]);
    let mut expected: Vec<i64> = (1..=3).flat_map(|n| vec![n; 10 * n as usize]).collect();
    expected.sort();
    let mut snapshotted = snapshotted;
    snapshotted.sort();
    assert_eq!(snapshotted, expected);
    // RecordingFile reads every chunk, each event under its type.
    let lines = dump_types(
        &path,
        &[event::OLD_OBJECT_SAMPLE, event::OLD_OBJECT_SNAPSHOT],
    );
    let named = |name: &str| lines.iter().filter(|l| l.starts_with(name)).count();
    assert_eq!(named(event::OLD_OBJECT_SAMPLE), 40, "{lines:?}");
    assert_eq!(named(event::OLD_OBJECT_SNAPSHOT), 60, "{lines:?}");
    // Mission Control: 40 events, 40 objects, each its own root.
    if let Some(jmc) = support::MissionControl::find(
        "each_chunk_ends_with_a_snapshot_and_only_the_newest_keeps_the_jdk_name",
    ) {
        assert_eq!(jmc.leak_counts(&path), (40, 40, 40));
    }
}

#[test]
fn events_in_a_chunk_dropped_by_max_age_are_left_as_they_are() {
    let dir = support::temp_dir("demote_dropped");
    let path = dir.join("aged.jfr");
    // A chunk is dropped once it ended more than 2 s ago, down to those
    // that ended within 1.5 s: chunk 1 ends, 2.5 s pass, chunks 2 and 3
    // end within well under a second (the margin: 1.5 s): chunk 3's start
    // drops chunk 1 (never the newest complete chunk, 2), chunk 4's none.
    let options = Options {
        max_age: Some(Duration::from_secs(2)),
        manual_chunk_ends: true,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let snapshots = register(&mut recording);
    let first = write_snapshot(&mut recording, &snapshots, 1, 5);
    recording.end_chunk().unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let second = write_snapshot(&mut recording, &snapshots, 2, 6);
    recording.end_chunk().unwrap();
    let third = write_snapshot(&mut recording, &snapshots, 3, 7);
    recording.end_chunk().unwrap();
    let fourth = write_snapshot(&mut recording, &snapshots, 4, 8);
    recording.flush().unwrap();
    let summary_now = summary(&path);
    assert_eq!(
        summary_chunks(&summary_now),
        3,
        "chunk 1 dropped: {summary_now}"
    );
    // Demoted late, the first snapshot is no longer in the file: nothing
    // to rewrite, and no error.
    assert_eq!(recording.demote(first).unwrap(), 0);
    assert_eq!(recording.demote(second).unwrap(), 6);
    assert_eq!(recording.demote(third).unwrap(), 7);
    // The newest, still in the chunk being written, stays.
    drop(fourth);
    recording.close().unwrap();

    let summary = summary(&path);
    assert_eq!(summary_chunks(&summary), 3, "{summary}");
    assert_eq!(
        summary_count(&summary, event::OLD_OBJECT_SAMPLE),
        8,
        "{summary}"
    );
    assert_eq!(
        summary_count(&summary, event::OLD_OBJECT_SNAPSHOT),
        13,
        "{summary}"
    );
    let (samples, mut snapshotted) = sizes(&path);
    assert_eq!(samples, vec![4; 8]);
    snapshotted.sort();
    assert_eq!(snapshotted, [vec![2; 6], vec![3; 7]].concat());
    if let Some(jmc) =
        support::MissionControl::find("events_in_a_chunk_dropped_by_max_age_are_left_as_they_are")
    {
        assert_eq!(jmc.leak_counts(&path), (8, 8, 8));
    }
}

#[test]
fn a_snapshots_tail_demotes_in_the_snapshot_only() {
    let dir = support::temp_dir("demote_snapshot");
    let path = dir.join("running.jfr");
    let copy = dir.join("snapshot.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    recording.end_chunks_manually();
    let snapshots = register(&mut recording);
    let chunk_end = write_snapshot(&mut recording, &snapshots, 1, 5);
    recording.end_chunk().unwrap();
    // The tail: what the recording's end would write, not demotable.
    recording.begin_snapshot_tail().unwrap();
    let class = support::class_of(&mut recording, "[J");
    for address in 1..=3 {
        let object = snapshots
            .types
            .old_object(&mut recording, address, Some(class), None, None)
            .unwrap();
        let now = recording.clock().now();
        OldObjectSample {
            start_time: now,
            duration: 0,
            event_thread: None,
            stack_trace: None.into(),
            allocation_time: now,
            object_size: 2,
            object_age: 0,
            last_known_heap_usage: 0,
            object: Some(object),
            array_elements: 8,
            root: None,
        }
        .write(&mut recording, &snapshots.sample)
        .unwrap();
    }
    recording
        .end_snapshot_tail_demoting(&copy, &chunk_end)
        .unwrap();
    assert_eq!(sizes(&copy), (vec![2; 3], vec![1; 5]));
    if let Some(jmc) =
        support::MissionControl::find("a_snapshots_tail_demotes_in_the_snapshot_only")
    {
        assert_eq!(jmc.leak_counts(&copy), (3, 3, 3));
    }
    // The recording itself: the chunk end's as written.
    assert_eq!(sizes(&path), (vec![1; 5], vec![]));
    assert_eq!(recording.demote(chunk_end).unwrap(), 5);
    recording.close().unwrap();
    assert_eq!(sizes(&path), (vec![], vec![1; 5]));
}

#[test]
fn events_demoted_while_buffered_are_flushed_first() {
    let mut recording = Recording::to_writer(std::io::Cursor::new(Vec::new()), Options::default());
    let snapshots = register(&mut recording);
    let group = write_snapshot(&mut recording, &snapshots, 1, 3);
    assert_eq!(recording.demote(group).unwrap(), 3);
}

#[test]
fn demotion_refuses_what_it_cannot_do() {
    let dir = support::temp_dir("demote_refused");
    let mut recording = Recording::create(dir.join("refused.jfr"), Options::default()).unwrap();
    let snapshots = register(&mut recording);
    let other = recording
        .register(EventTypeBuilder::new("test.Other").field(FieldSpec::new("n", FieldType::Int)))
        .unwrap();
    let refused = |result: Result<(), Error>| match result {
        Err(Error::Demotion { reason, .. }) => reason,
        other => panic!("not refused: {other:?}"),
    };
    assert_eq!(
        refused(recording.begin_demotable(&snapshots.sample, &other)),
        "their fields differ"
    );
    assert_eq!(
        refused(recording.begin_demotable(&snapshots.sample, &snapshots.sample)),
        "they are one type"
    );
    let mut stranger: Recording<FileSink> =
        Recording::create(dir.join("stranger.jfr"), Options::default()).unwrap();
    let strangers = register(&mut stranger);
    assert_eq!(
        refused(recording.begin_demotable(&strangers.sample, &snapshots.snapshot)),
        "registered with another recording"
    );
    recording
        .begin_demotable(&snapshots.sample, &snapshots.snapshot)
        .unwrap();
    assert_eq!(
        refused(recording.begin_demotable(&snapshots.sample, &snapshots.snapshot)),
        "demotable events are being written already"
    );
    let group = recording.end_demotable().unwrap();
    assert!(group.is_empty());
    assert!(recording.end_demotable().is_none());
    // A stream writes each chunk out when it ends: nothing to patch there.
    let zstd = Recording::create(dir.join("stream.jfr.zst"), Options::default()).unwrap();
    assert!(!zstd.can_demote());
}
