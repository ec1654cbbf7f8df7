//! The typed events of `jfr_writer::events` write exactly the fields their
//! declarations declare, in order: each typed event commits, and a field
//! written in the place of another of the same type fails the commit,
//! naming both, so a swap in a typed `write` fails the first test.

use std::io::Cursor;

use jfr_format::names::field;
use jfr_writer::events::{
    self, ActiveRecording, ActiveSetting, AgentStatistics, ClassLoadingStatistics,
    GarbageCollection, GcHeapSummary, GcTypes, HeapExhausted, HeapPeak, JdkGarbageCollection,
    JvmInformation, LeakSuspect, LiveSet, ObjectAllocationSample, ObjectLifetime, OldObjectSample,
    OldObjectTypes, PeakLiveSite, VirtualSpace,
};
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
        stack_trace: None.into(),
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
        stack_trace: None.into(),
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
        stack_trace: None.into(),
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
        stack_trace: None.into(),
        object_class: None,
        object_size: 24,
        weight: 512,
        live: false,
        gcs_survived: 1,
        freed_by_gc_id: 2,
        tracked: true,
        tracking_probability: 1.0,
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
        drawn_samples: 13,
        undrawn_samples: 14,
        capped_samples: 15,
        old_object_cap: 8,
        old_objects_left_out: 9,
        constants_held: 10,
        stack_traces_held: 11,
        threads_held: 12,
    }
    .write(&mut rec, &agent_statistics)
    .unwrap();

    let old_types = OldObjectTypes::register(&mut rec).unwrap();
    let old_object_sample = rec.register(events::old_object_sample(&old_types)).unwrap();
    let object = old_types
        .old_object(&mut rec, 0x10, None, Some("an object"), None)
        .unwrap();
    let root = old_types
        .gc_root(&mut rec, "Threads", "Stack Variable", None)
        .unwrap();
    OldObjectSample {
        start_time: at,
        duration: 0,
        event_thread: Some(thread),
        stack_trace: None.into(),
        allocation_time: at,
        object_size: 1,
        object_age: 2,
        last_known_heap_usage: 3,
        object: Some(object),
        array_elements: 4,
        root: Some(root),
    }
    .write(&mut rec, &old_object_sample)
    .unwrap();

    let gc_types = GcTypes::register(&mut rec).unwrap();
    let heap_summary = rec.register(events::gc_heap_summary(&gc_types)).unwrap();
    let when = gc_types.when(&mut rec, events::AFTER_GC).unwrap();
    GcHeapSummary {
        start_time: at,
        gc_id: 1,
        when: Some(when),
        heap_space: VirtualSpace {
            start: 2,
            committed_size: 3,
            reserved_size: 4,
        },
        heap_used: 5,
    }
    .write(&mut rec, &heap_summary)
    .unwrap();
    let jdk_collection = rec
        .register(events::jdk_garbage_collection(&gc_types))
        .unwrap();
    let name = gc_types.name(&mut rec, "G1 Old Generation").unwrap();
    JdkGarbageCollection {
        start_time: at,
        duration: 1,
        gc_id: 2,
        name: Some(name),
        cause: None,
        sum_of_pauses: 3,
        longest_pause: 4,
    }
    .write(&mut rec, &jdk_collection)
    .unwrap();
    let jvm_information = rec.register(events::jvm_information()).unwrap();
    JvmInformation {
        start_time: at,
        jvm_name: Some("VM"),
        jvm_version: Some("17"),
        jvm_arguments: None,
        jvm_flags: None,
        java_arguments: Some("Main"),
        jvm_start_time: 1,
        pid: 2,
    }
    .write(&mut rec, &jvm_information)
    .unwrap();
    let class_loading = rec.register(events::class_loading_statistics()).unwrap();
    ClassLoadingStatistics {
        start_time: at,
        loaded_class_count: 1,
        unloaded_class_count: 2,
    }
    .write(&mut rec, &class_loading)
    .unwrap();
    let heap_exhausted = rec.register(events::heap_exhausted()).unwrap();
    HeapExhausted {
        start_time: at,
        event_thread: Some(thread),
        stack_trace: None.into(),
        message: Some("Java heap space"),
        old_objects: 1,
    }
    .write(&mut rec, &heap_exhausted)
    .unwrap();
    let live_set = rec.register(events::live_set()).unwrap();
    LiveSet {
        start_time: at,
        collected: true,
        last_collection: at,
        collections: 2,
        live_objects: 3,
    }
    .write(&mut rec, &live_set)
    .unwrap();

    let leak_suspect = rec.register(events::leak_suspect()).unwrap();
    LeakSuspect {
        start_time: at,
        stack_trace: None.into(),
        gc_id: 1,
        object_class: None,
        other_sites: true,
        growth_rate: 2.0,
        growth_rate_low: 1.0,
        growth_rate_high: 3.0,
        window: 4,
        live_bytes: 5,
        live_bytes_low: 6,
        live_bytes_high: 7,
        live_samples: 8,
        heap_used: 9,
        heap_max: 10,
        time_to_heap_max: 11,
    }
    .write(&mut rec, &leak_suspect)
    .unwrap();
    let heap_peak = rec.register(events::heap_peak()).unwrap();
    HeapPeak {
        start_time: at,
        gc_id: 1,
        heap_used: 2,
        heap_max: 3,
        heap_share: 0.5,
        peak_threshold: 0.25,
        sites: 4,
    }
    .write(&mut rec, &heap_peak)
    .unwrap();
    let peak_live_site = rec.register(events::peak_live_site()).unwrap();
    PeakLiveSite {
        start_time: at,
        stack_trace: None.into(),
        gc_id: 1,
        object_class: None,
        other_sites: false,
        live_bytes: 2,
        live_bytes_low: 3,
        live_bytes_high: 4,
        live_samples: 5,
    }
    .write(&mut rec, &peak_live_site)
    .unwrap();

    assert_eq!(rec.events_written(), 16);
}

#[test]
fn a_field_written_in_the_place_of_another_of_its_type_fails_naming_both() {
    let mut rec = recording();
    let active_recording = rec.register(events::active_recording()).unwrap();
    let at = Ticks(rec.clock().now().0);
    // `maxAge` and `flushInterval` are both longs: only their names tell a
    // swap. Written right first: a swap after a right write, and a name of
    // the right length but other text, still fail.
    let write = |rec: &mut jfr_writer::Recording<_>, eighth: &'static str, ninth: &'static str| {
        rec.event(&active_recording, at)
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
            .field(eighth)
            .long(1000)
            .field(ninth)
            .long(0)
            .field(field::MAX_SIZE)
            .long(0)
            .field(field::RECORDING_START)
            .long(0)
            .field(field::RECORDING_DURATION)
            .long(0)
            .commit()
    };
    write(&mut rec, field::MAX_AGE, field::FLUSH_INTERVAL).unwrap();
    let swapped = write(&mut rec, field::FLUSH_INTERVAL, field::MAX_AGE);
    assert!(
        matches!(&swapped, Err(Error::FieldOrder { event, declared, written })
            if event == "jdk.ActiveRecording" && declared == "maxAge" && written == "flushInterval"),
        "{swapped:?}"
    );
    let misspelt = write(&mut rec, "maxAgo", field::FLUSH_INTERVAL);
    assert!(
        matches!(&misspelt, Err(Error::FieldOrder { declared, written, .. })
            if declared == "maxAge" && written == "maxAgo"),
        "{misspelt:?}"
    );
    assert_eq!(rec.events_written(), 1, "a refused event writes nothing");

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

#[test]
fn a_typed_write_keeps_checking_what_it_has_not_written_right() {
    let mut rec = recording();
    let at = rec.clock().now();
    let sample = |event_thread| ObjectAllocationSample {
        start_time: at,
        event_thread,
        stack_trace: None.into(),
        object_class: None,
        weight: 512,
    };
    // Given another type, the typed write fails every time: a failed event
    // does not make the write known right for the type.
    let other_type = rec.register(events::garbage_collection()).unwrap();
    for _ in 0..2 {
        let refused = sample(None).write(&mut rec, &other_type);
        assert!(
            matches!(
                refused,
                Err(Error::FieldOrder { .. } | Error::FieldMismatch { .. })
            ),
            "{refused:?}"
        );
    }
    // Once one event of its own type committed, its later events skip the
    // names' and types' checks, but not the values': another recording's
    // thread is still refused.
    let allocation_sample = rec.register(events::object_allocation_sample()).unwrap();
    sample(None).write(&mut rec, &allocation_sample).unwrap();
    let mut other = recording();
    let foreign = other.thread(Thread {
        os_name: "other".into(),
        os_thread_id: 2,
        java_name: "other".into(),
        java_thread_id: 2,
        group: None,
    });
    let refused = sample(Some(foreign)).write(&mut rec, &allocation_sample);
    assert!(
        matches!(&refused, Err(Error::ForeignReference { field, .. }) if field == "eventThread"),
        "{refused:?}"
    );
    sample(None).write(&mut rec, &allocation_sample).unwrap();
    // Events of the type written otherwise are checked as before.
    let swapped = rec
        .event(&allocation_sample, at)
        .field(field::STACK_TRACE)
        .thread(None)
        .stack_trace(None)
        .class(None)
        .long(1)
        .commit();
    assert!(
        matches!(&swapped, Err(Error::FieldOrder { declared, written, .. })
            if declared == "eventThread" && written == "stackTrace"),
        "{swapped:?}"
    );
    assert_eq!(rec.events_written(), 2, "a refused event writes nothing");
}
