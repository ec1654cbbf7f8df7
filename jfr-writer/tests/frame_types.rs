//! The frame-type keys and descriptions written are read right by both
//! kinds of reader: the JDK's tools, which show the description pooled
//! under a frame's key, and async-profiler's converter, which gives the raw
//! key its own meaning.

use heapsampler_test_support as support;

use std::fs::File;

use jfr_writer::{
    Class, FrameType, Method, Options, Recording, StackFrame, StackTrace, Thread, Ticks, events,
};

/// How async-profiler's converter reads a raw frame-type key: its
/// `one.convert.Frame` constants (`TYPE_INTERPRETED = 0` ... `TYPE_C1_COMPILED
/// = 6`; async-profiler/async-profiler, `src/converter/one/convert/Frame.java`).
/// `JfrConverter.resolveMethodName` leaves the class out of a frame's name
/// when `isNativeFrame` holds: key 4 (C++), key 5 (kernel), and key 3 when
/// the file's FrameType pool defines key 5 (`src/converter/one/convert/
/// JfrConverter.java`). Its flame graph indexes a 7-entry table by the key
/// (`FlameGraph.FRAME_SUFFIX`), so a key above 6 breaks it.
const ASYNC_PROFILER_TYPES: [&str; 7] = [
    "interpreted",
    "JIT compiled",
    "inlined",
    "native",
    "C++",
    "kernel",
    "C1 compiled",
];

/// async-profiler's keys whose frames keep their class, in a file whose
/// FrameType pool has no key 5: its Java frames.
const ASYNC_PROFILER_JAVA_KEYS: [u64; 5] = [0, 1, 2, 3, 6];

/// What async-profiler must read each of our frame types as.
fn async_profiler_meaning(frame_type: FrameType) -> &'static [&'static str] {
    match frame_type {
        FrameType::Interpreted => &["interpreted"],
        FrameType::JitCompiled => &["JIT compiled"],
        FrameType::Inlined => &["inlined"],
        FrameType::Native => &["native"],
        // It has no "unknown": any of its Java frame types, so that the
        // frame keeps its class.
        FrameType::Unknown => &["interpreted", "JIT compiled", "inlined", "C1 compiled"],
    }
}

/// One stack with a frame of every type, read back by jfrs (the raw keys
/// and the descriptions pooled under them) and by the JDK's `jfr print
/// --json` (the description it shows per frame).
#[test]
fn frame_types_read_right_by_the_jdk_and_by_async_profiler() {
    let dir = support::temp_dir("frame_types");
    let path = dir.join("frame_types.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "main".into(),
        os_thread_id: 7,
        java_name: "main".into(),
        java_thread_id: 1,
        group: None,
    });
    let name = recording.symbol("pkg/Frames");
    let class = recording.class(Class {
        class_loader: None,
        name,
        package: None,
        modifiers: 1,
        hidden: false,
    });
    let frames = FrameType::ALL
        .iter()
        .enumerate()
        .map(|(at, &frame_type)| {
            let (name, descriptor) = (recording.symbol(&format!("m{at}")), recording.symbol("()V"));
            let method = recording.method(Method {
                class,
                name,
                descriptor,
                modifiers: 1,
                hidden: false,
            });
            StackFrame {
                method,
                line_number: 10 + at as i32,
                bytecode_index: 0,
                frame_type,
            }
        })
        .collect();
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames,
    });
    recording
        .event(&event, Ticks(recording.clock().now().0))
        .thread(thread)
        .stack_trace(stack)
        .class(class)
        .long(1024)
        .commit()
        .unwrap();
    recording.close().unwrap();

    // The raw keys, and the description pooled under each, per frame.
    let mut reader = jfrs::reader::JfrReader::new(File::open(&path).unwrap());
    let mut read = Vec::new();
    for chunk in reader.chunks() {
        let (mut chunk_reader, chunk) = chunk.expect("jfrs reads the chunk");
        for event in chunk_reader.events(&chunk) {
            let event = event.expect("jfrs reads the event");
            let frames = event
                .value()
                .get_field("stackTrace")
                .and_then(|s| s.get_field("frames"))
                .and_then(|f| f.as_iter())
                .expect("frames");
            for frame in frames {
                let key = match frame.get_field_raw("type").expect("a type").value {
                    jfrs::reader::value_descriptor::ValueDescriptor::ConstantPool {
                        constant_index,
                        ..
                    } => *constant_index as u64,
                    other => panic!("a frame type is a pool reference, not {other:?}"),
                };
                let description = <&str>::try_from(
                    frame
                        .get_field("type")
                        .and_then(|t| t.get_field("description"))
                        .expect("a description")
                        .value,
                )
                .expect("a string")
                .to_owned();
                read.push((key, description));
            }
        }
    }
    assert_eq!(read.len(), FrameType::ALL.len());
    for (&frame_type, (key, description)) in FrameType::ALL.iter().zip(&read) {
        assert_eq!(*key, frame_type.key(), "{frame_type:?}");
        assert_eq!(description, frame_type.description(), "{frame_type:?}");
        let meaning = ASYNC_PROFILER_TYPES
            .get(*key as usize)
            .unwrap_or_else(|| panic!("{frame_type:?}: key {key} is past async-profiler's table"));
        assert!(
            async_profiler_meaning(frame_type).contains(meaning),
            "{frame_type:?}: async-profiler reads key {key} as {meaning}"
        );
        assert!(
            ASYNC_PROFILER_JAVA_KEYS.contains(key),
            "{frame_type:?}: async-profiler drops the class of key {key}"
        );
    }
    // Key 5 defined would make async-profiler read key 3 (Native) as a C
    // function.
    assert!(read.iter().all(|(key, _)| *key != 5));

    // The JDK shows each frame's description.
    let document = support::print_json(&path);
    let events = support::json_events(&document);
    assert_eq!(events.len(), 1);
    let shown: Vec<&str> = events[0]["values"]["stackTrace"]["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|frame| frame["type"].as_str().expect("a type text"))
        .collect();
    let expected: Vec<&str> = FrameType::ALL.iter().map(|t| t.description()).collect();
    assert_eq!(shown, expected);
}
