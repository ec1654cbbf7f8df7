//! The JDK's leak and GC events and their value types held by key
//! (constants of the chunk), written by jfr-writer and read back by the
//! JDK's own parser: declared as the JDK declares them, every value as
//! written, a reference chain across two chunks, and constants of an
//! earlier chunk refused.

use heapsampler_test_support as support;

use std::path::Path;

use jfr_writer::events::{
    self, ClassLoadingStatistics, GcHeapSummary, GcTypes, JdkGarbageCollection, JvmInformation,
    OldObjectSample, OldObjectTypes, ReferenceHolder, VirtualSpace,
};
use jfr_writer::{Error, Options, Recording, Sink, Ticks};
use support::{declaration, dump_types, metadata_of, temp_dir};

struct Types {
    old: OldObjectTypes,
    gc: GcTypes,
    old_object_sample: jfr_writer::EventType,
    heap_summary: jfr_writer::EventType,
    collection: jfr_writer::EventType,
    jvm: jfr_writer::EventType,
    classes: jfr_writer::EventType,
}

fn register<S: Sink>(recording: &mut Recording<S>) -> Types {
    let old = OldObjectTypes::register(recording).unwrap();
    let gc = GcTypes::register(recording).unwrap();
    for collector_event in [
        events::young_garbage_collection(),
        events::old_garbage_collection(),
        events::gc_phase_pause(),
        events::gc_phase_pause_level_1(),
        events::metaspace_summary(&gc),
        events::gc_configuration(&gc),
        events::gc_heap_configuration(&gc),
    ] {
        recording.register(collector_event).unwrap();
    }
    Types {
        old_object_sample: recording.register(events::old_object_sample(&old)).unwrap(),
        heap_summary: recording.register(events::gc_heap_summary(&gc)).unwrap(),
        collection: recording
            .register(events::jdk_garbage_collection(&gc))
            .unwrap(),
        jvm: recording.register(events::jvm_information()).unwrap(),
        classes: recording
            .register(events::class_loading_statistics())
            .unwrap(),
        old,
        gc,
    }
}

/// An old object held by a map's table, itself held by a static field:
/// `byte[]` <- `HashMap$Node.value` <- `HashMap$Node[3]` of 16 <- root.
fn write_leak<S: Sink>(
    recording: &mut Recording<S>,
    types: &Types,
    at: Ticks,
    n: i64,
) -> jfr_writer::ConstantRef {
    let bytes = support::class_of(recording, "[B");
    let node = support::class_of(recording, "java/util/HashMap$Node");
    let table = support::class_of(recording, "[Ljava/util/HashMap$Node;");
    let old = &types.old;
    let table_object = old
        .old_object(recording, 0x1000, Some(table), None, None)
        .unwrap();
    let in_table = old
        .reference(
            recording,
            ReferenceHolder::Element { size: 16, index: 3 },
            table_object,
            0,
        )
        .unwrap();
    let node_object = old
        .old_object(recording, 0, Some(node), Some("a node"), Some(in_table))
        .unwrap();
    let in_node = old
        .reference(
            recording,
            ReferenceHolder::Field {
                name: "value",
                modifiers: 16,
            },
            node_object,
            2,
        )
        .unwrap();
    let object = old
        .old_object(
            recording,
            0x2000 + n as u64,
            Some(bytes),
            None,
            Some(in_node),
        )
        .unwrap();
    let root = old
        .gc_root(recording, "Universe", "Global Handle", Some("Leak.map"))
        .unwrap();
    OldObjectSample {
        start_time: at,
        duration: 0,
        event_thread: None,
        stack_trace: None.into(),
        allocation_time: Ticks(at.0 - 1000),
        object_size: 120 + n,
        object_age: 1000,
        last_known_heap_usage: 1 << 20,
        object: Some(object),
        array_elements: 100,
        root: Some(root),
    }
    .write(recording, &types.old_object_sample)
    .unwrap();
    root
}

#[test]
fn leak_and_gc_events_read_back_exactly_in_every_chunk() {
    let dir = temp_dir("leak_events");
    let path = dir.join("leak.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let types = register(&mut recording);
    let at = recording.clock().now();
    let first_root = write_leak(&mut recording, &types, at, 1);
    let (name, cause) = (
        types
            .gc
            .name(&mut recording, "G1 Young Generation")
            .unwrap(),
        types.gc.cause(&mut recording, "System.gc()").unwrap(),
    );
    for (when, used) in [(events::BEFORE_GC, 3 << 20), (events::AFTER_GC, 1 << 20)] {
        let when = types.gc.when(&mut recording, when).unwrap();
        GcHeapSummary {
            start_time: at,
            gc_id: 7,
            when: Some(when),
            heap_space: VirtualSpace {
                start: 0x7000_0000,
                committed_size: 8 << 20,
                reserved_size: 64 << 20,
            },
            heap_used: used,
        }
        .write(&mut recording, &types.heap_summary)
        .unwrap();
    }
    JdkGarbageCollection {
        start_time: at,
        duration: 5000,
        gc_id: 7,
        name: Some(name),
        cause: Some(cause),
        sum_of_pauses: 4000,
        longest_pause: 3000,
    }
    .write(&mut recording, &types.collection)
    .unwrap();
    JvmInformation {
        start_time: at,
        jvm_name: Some("OpenJDK 64-Bit Server VM"),
        jvm_version: Some("17.0.15+6"),
        jvm_arguments: Some("-Xmx1g -agentpath:x.so"),
        jvm_flags: None,
        java_arguments: Some("Leak 10"),
        jvm_start_time: 1_700_000_000_000,
        pid: 4242,
    }
    .write(&mut recording, &types.jvm)
    .unwrap();
    ClassLoadingStatistics {
        start_time: at,
        loaded_class_count: 512,
        unloaded_class_count: 3,
    }
    .write(&mut recording, &types.classes)
    .unwrap();
    recording.flush().unwrap();

    // A constant lives for its chunk: one made in the first chunk is
    // refused in the second, and the second makes its own.
    recording.end_chunk().unwrap();
    let stale = OldObjectSample {
        start_time: at,
        duration: 0,
        event_thread: None,
        stack_trace: None.into(),
        allocation_time: at,
        object_size: 0,
        object_age: 0,
        last_known_heap_usage: 0,
        object: None,
        array_elements: i32::MIN,
        root: Some(first_root),
    }
    .write(&mut recording, &types.old_object_sample);
    assert!(
        matches!(stale, Err(Error::StaleConstant { ref field, .. }) if field == "root"),
        "{stale:?}"
    );
    write_leak(&mut recording, &types, at, 2);
    recording.close().unwrap();

    let leaks = dump_types(&path, &["jdk.OldObjectSample"]);
    let epoch = start_time(&path);
    let expected = |n: i64| {
        format!(
            "jdk.OldObjectSample startTime={epoch} duration=0 eventThread=null stackTrace=null \
             allocationTime={} objectSize={} objectAge=1000 lastKnownHeapUsage=1048576 \
             object={{address={},type=class([B,0,null),description=null,\
             referrer={{array=null,field={{name=\"value\",modifiers=16}},\
             object={{address=0,type=class(java.util.HashMap$Node,0,null),\
             description=\"a node\",referrer={{array={{size=16,index=3}},field=null,\
             object={{address=4096,type=class([Ljava.util.HashMap$Node;,0,null),\
             description=null,referrer=null}},skip=0}}}},skip=2}}}} arrayElements=100 \
             root={{description=\"Leak.map\",system=\"Universe\",type=\"Global Handle\"}}",
            at.0 - 1000,
            120 + n,
            0x2000 + n,
        )
    };
    assert_eq!(leaks, vec![expected(1), expected(2)]);
    let gc = dump_types(
        &path,
        &[
            "jdk.GCHeapSummary",
            "jdk.GarbageCollection",
            "jdk.JVMInformation",
            "jdk.ClassLoadingStatistics",
        ],
    );
    let space = |used| {
        format!(
            "heapSpace={{start=1879048192,committedEnd={},committedSize=8388608,\
             reservedEnd={},reservedSize=67108864}} heapUsed={used}",
            0x7000_0000 + (8 << 20),
            0x7000_0000 + (64 << 20),
        )
    };
    assert_eq!(
        gc,
        vec![
            format!(
                "jdk.GCHeapSummary startTime={epoch} gcId=7 when=\"Before GC\" {}",
                space(3 << 20)
            ),
            format!(
                "jdk.GCHeapSummary startTime={epoch} gcId=7 when=\"After GC\" {}",
                space(1 << 20)
            ),
            format!(
                "jdk.GarbageCollection startTime={epoch} duration=5000 gcId=7 \
                 name=\"G1 Young Generation\" cause=\"System.gc()\" sumOfPauses=4000 \
                 longestPause=3000"
            ),
            format!(
                "jdk.JVMInformation startTime={epoch} jvmName=\"OpenJDK 64-Bit Server VM\" \
                 jvmVersion=\"17.0.15+6\" jvmArguments=\"-Xmx1g -agentpath:x.so\" jvmFlags=null \
                 javaArguments=\"Leak 10\" jvmStartTime=1700000000000 pid=4242"
            ),
            format!(
                "jdk.ClassLoadingStatistics startTime={epoch} loadedClassCount=512 \
                 unloadedClassCount=3"
            ),
        ]
    );
    let summary = support::summary(&path);
    assert_eq!(support::summary_count(&summary, "jdk.OldObjectSample"), 2);
}

/// The start time the JDK prints for the first event.
fn start_time(path: &Path) -> String {
    dump_types(path, &[])[0]
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("startTime="))
        .unwrap()
        .to_owned()
}

#[test]
fn leak_and_gc_events_are_declared_as_the_jdk_declares_them() {
    let dir = temp_dir("leak_declarations");
    let path = dir.join("declared.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    register(&mut recording);
    recording.close().unwrap();
    let (ours, jdk) = (metadata_of(Some(&path)), metadata_of(None));
    for name in [
        "jdk.GCHeapSummary",
        "jdk.GarbageCollection",
        "jdk.JVMInformation",
        "jdk.ClassLoadingStatistics",
        "jdk.YoungGarbageCollection",
        "jdk.OldGarbageCollection",
        "jdk.GCPhasePause",
        "jdk.GCPhasePauseLevel1",
        "jdk.MetaspaceSummary",
        "jdk.GCConfiguration",
        "jdk.GCHeapConfiguration",
        "jdk.types.MetaspaceSizes",
        "jdk.types.NarrowOopMode",
        "jdk.types.OldObject",
        "jdk.types.Reference",
        "jdk.types.OldObjectArray",
        "jdk.types.OldObjectField",
        "jdk.types.OldObjectGcRoot",
        "jdk.types.OldObjectRootSystem",
        "jdk.types.OldObjectRootType",
        "jdk.types.GCName",
        "jdk.types.GCCause",
        "jdk.types.GCWhen",
        "jdk.types.VirtualSpace",
        "jdk.types.GcId",
    ] {
        let expected = declaration(&jdk, name);
        assert!(!expected.is_empty(), "the JDK declares no {name}");
        assert_eq!(
            declaration(&ours, name),
            expected,
            "{name} must be declared exactly as JDK 17 declares it"
        );
    }
    // jdk.OldObjectSample as JDK 25 declares it: JDK 17's, with the
    // object's size after its allocation time (`jfr-writer/format/FORMAT.md` §9).
    let mut expected = declaration(&jdk, "jdk.OldObjectSample");
    let at = expected
        .iter()
        .position(|line| line == "long allocationTime;")
        .unwrap();
    for (offset, line) in [
        "",
        "@DataAmount(\"BYTES\")",
        "@Label(\"Object Size\")",
        "@Unsigned",
        "long objectSize;",
    ]
    .into_iter()
    .enumerate()
    {
        expected.insert(at + 1 + offset, line.to_owned());
    }
    assert_eq!(declaration(&ours, "jdk.OldObjectSample"), expected);
}
