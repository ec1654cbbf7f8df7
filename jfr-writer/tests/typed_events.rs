//! The typed events of `jfr_writer::events` write exactly the fields their
//! declarations declare, in order: each typed event commits, and a field
//! written in the place of another of the same type fails the commit,
//! naming both, so a swap in a typed `write` fails the first test.

use std::io::Cursor;

use jfr_writer::events::{
    self, ActiveRecording, ActiveSetting, AgentStatistics, GarbageCollection,
    ObjectAllocationSample, ObjectLifetime,
};
use jfr_writer::format::names::field;
use jfr_writer::{Error, Options, Recording, SeekableSink, Thread, Ticks};

fn recording() -> Recording<SeekableSink<Cursor<Vec<u8>>>> {
    Recording::to_writer(Cursor::new(Vec::new()), Options::default())
}

#[test]
fn every_typed_event_commits_against_its_declaration() {
    let mut rec = recording();
    let at = rec.clock().now();
    let thread = rec.thread(Thread {
        os_name: "main".into(),
        os_thread_id: 1,
        java_name: "main".into(),
        java_thread_id: 1,
        group: None,
    });

    let allocation_sample = rec.register(events::object_allocation_sample()).unwrap();
    ObjectAllocationSample {
        start_time: at,
        event_thread: Some(thread),
        stack_trace: None,
        object_class: None,
        weight: 512,
    }
    .write(&mut rec, &allocation_sample)
    .unwrap();

    let active_recording = rec.register(events::active_recording()).unwrap();
    ActiveRecording {
        start_time: at,
        duration: 0,
        event_thread: None,
        stack_trace: None,
        id: 1,
        name: Some("test"),
        destination: Some("test.jfr"),
        max_age: 1,
        flush_interval: 2,
        max_size: 3,
        recording_start: 4,
        recording_duration: 5,
    }
    .write(&mut rec, &active_recording)
    .unwrap();

    let active_setting = rec.register(events::active_setting()).unwrap();
    ActiveSetting {
        start_time: at,
        duration: 0,
        event_thread: None,
        stack_trace: None,
        id: allocation_sample.id().get() as i64,
        name: Some("enabled"),
        value: Some("true"),
    }
    .write(&mut rec, &active_setting)
    .unwrap();

    let object_lifetime = rec.register(events::object_lifetime()).unwrap();
    ObjectLifetime {
        start_time: at,
        duration: 10,
        event_thread: Some(thread),
        stack_trace: None,
        object_class: None,
        object_size: 24,
        weight: 512,
        live: false,
        gcs_survived: 1,
        freed_by_gc_id: 2,
        tracked: true,
    }
    .write(&mut rec, &object_lifetime)
    .unwrap();

    let garbage_collection = rec.register(events::garbage_collection()).unwrap();
    GarbageCollection {
        start_time: at,
        duration: 10,
        gc_id: 1,
    }
    .write(&mut rec, &garbage_collection)
    .unwrap();

    let agent_statistics = rec.register(events::agent_statistics()).unwrap();
    AgentStatistics {
        start_time: at,
        samples: 1,
        events_written: 2,
        back_pressure_waits: 3,
        back_pressure_time: 4,
        tracked_objects: 5,
        bytes_written: 6,
        lost_samples: 0,
        untracked_objects: 7,
    }
    .write(&mut rec, &agent_statistics)
    .unwrap();

    assert_eq!(rec.events_written(), 6);
}

#[test]
fn a_field_written_in_the_place_of_another_of_its_type_fails_naming_both() {
    let mut rec = recording();
    let active_recording = rec.register(events::active_recording()).unwrap();
    let at = Ticks(rec.clock().now().0);
    // `maxAge` and `flushInterval` are both longs: only their names tell a
    // swap.
    let swapped = rec
        .event(&active_recording, at)
        .field(field::DURATION)
        .duration(0)
        .field(field::EVENT_THREAD)
        .thread(None)
        .field(field::STACK_TRACE)
        .stack_trace(None)
        .field(field::ID)
        .long(1)
        .field(field::NAME)
        .string(None)
        .field(field::DESTINATION)
        .string(None)
        .field(field::FLUSH_INTERVAL)
        .long(1000)
        .field(field::MAX_AGE)
        .long(0)
        .field(field::MAX_SIZE)
        .long(0)
        .field(field::RECORDING_START)
        .long(0)
        .field(field::RECORDING_DURATION)
        .long(0)
        .commit();
    assert!(
        matches!(&swapped, Err(Error::FieldOrder { event, declared, written })
            if event == "jdk.ActiveRecording" && declared == "maxAge" && written == "flushInterval"),
        "{swapped:?}"
    );
    assert_eq!(rec.events_written(), 0, "a refused event writes nothing");

    // Naming a field past the last one fails too.
    let garbage_collection = rec.register(events::garbage_collection()).unwrap();
    let extra = rec
        .event(&garbage_collection, at)
        .duration(0)
        .int(1)
        .field(field::GC_ID)
        .commit();
    assert!(
        matches!(&extra, Err(Error::FieldOrder { declared, written, .. })
            if declared.contains("none") && written == "gcId"),
        "{extra:?}"
    );
}
