//! Files written by jfr-writer, read by an independent Rust reader (`jfrs`),
//! chunk by chunk: a second opinion besides the JDK's.

use std::fs::File;

use jfr_writer::{
    Class, FrameType, Method, Options, Recording, StackFrame, StackTrace, Thread, Ticks, events,
};

/// What one allocation sample carries, as written and as read back.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    start_ticks: i64,
    thread: String,
    os_thread_id: i64,
    class: String,
    frames: Vec<(String, i32)>,
    weight: i64,
}

#[test]
fn jfrs_reads_every_chunk_and_value() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("jfrs_reads");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("alloc.jfr");
    let options = Options {
        max_chunk_size: 8 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();

    let mut written = Vec::new();
    let start = recording.clock().now();
    for i in 0..2000i64 {
        let n = i % 7;
        let name = format!("thread-{n}");
        let thread = recording.thread(Thread {
            os_name: name.clone(),
            os_thread_id: 500 + n,
            java_name: name.clone(),
            java_thread_id: n,
            group: None,
        });
        let class_name = format!("pkg/Type{}", i % 5);
        let class_symbol = recording.symbol(&class_name);
        let class = recording.class(Class {
            class_loader: None,
            name: class_symbol,
            package: None,
            modifiers: 1,
            hidden: false,
        });
        let mut frames = Vec::new();
        let mut expected_frames = Vec::new();
        for depth in 0..(1 + i % 4) {
            let method_name = format!("m{depth}");
            let (name, descriptor) = (recording.symbol(&method_name), recording.symbol("()V"));
            let method = recording.method(Method {
                class,
                name,
                descriptor,
                modifiers: 1,
                hidden: false,
            });
            let line = (i % 11 + depth) as i32;
            frames.push(StackFrame {
                method,
                line_number: line,
                bytecode_index: 0,
                frame_type: FrameType::JitCompiled,
            });
            expected_frames.push((method_name, line));
        }
        let stack = recording.stack_trace(StackTrace {
            truncated: false,
            frames,
        });
        let weight = 1000 + i;
        let at = Ticks(start.0 + i * 10);
        recording
            .event(&event, at)
            .thread(thread)
            .stack_trace(stack)
            .class(class)
            .long(weight)
            .commit()
            .unwrap();
        written.push(Sample {
            start_ticks: at.0,
            thread: name,
            os_thread_id: 500 + n,
            class: class_name,
            frames: expected_frames,
            weight,
        });
        if i % 250 == 249 {
            recording.flush().unwrap();
        }
    }
    recording.close().unwrap();

    let mut reader = jfrs::reader::JfrReader::new(File::open(&path).unwrap());
    let mut read = Vec::new();
    let mut chunks = 0;
    for chunk in reader.chunks() {
        let (mut chunk_reader, chunk) = chunk.expect("jfrs reads the chunk");
        chunks += 1;
        for event in chunk_reader.events(&chunk) {
            let event = event.expect("jfrs reads the event");
            if event.class.name() != "jdk.ObjectAllocationSample" {
                continue;
            }
            let value = event.value();
            let long = |accessor: Option<jfrs::reader::event::Accessor>| -> i64 {
                i64::try_from(accessor.expect("field present").value).expect("a long")
            };
            let string = |accessor: Option<jfrs::reader::event::Accessor>| -> String {
                <&str>::try_from(accessor.expect("field present").value)
                    .expect("a string")
                    .to_owned()
            };
            let thread = value.get_field("eventThread").expect("a thread");
            let frames = value
                .get_field("stackTrace")
                .and_then(|s| s.get_field("frames"))
                .and_then(|f| f.as_iter())
                .expect("frames")
                .map(|frame| {
                    let name = string(
                        frame
                            .get_field("method")
                            .and_then(|m| m.get_field("name"))
                            .and_then(|n| n.get_field("string")),
                    );
                    let line = i32::try_from(frame.get_field("lineNumber").unwrap().value).unwrap();
                    (name, line)
                })
                .collect();
            read.push(Sample {
                start_ticks: long(value.get_field("startTime")),
                thread: string(thread.get_field("javaName")),
                os_thread_id: long(thread.get_field("osThreadId")),
                class: string(
                    value
                        .get_field("objectClass")
                        .and_then(|c| c.get_field("name"))
                        .and_then(|n| n.get_field("string")),
                ),
                frames,
                weight: long(value.get_field("weight")),
            });
        }
    }
    assert!(chunks > 3, "8 KiB chunks: {chunks}");
    assert_eq!(read, written);
}
