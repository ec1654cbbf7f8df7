//! Recordings several tests read: made here, so that the tests can say
//! exactly what is in them.

use std::sync::OnceLock;

use jfr_writer::{
    Class, EventTypeBuilder, FieldSpec, FieldType, FrameType, Method, Options, Recording,
    StackFrame, StackTrace, Thread, ThreadGroup, Ticks, events,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate as support;

/// The chunks of a well-formed recording: (offset, size).
pub fn chunk_spans(data: &[u8]) -> Vec<(usize, usize)> {
    let chunks: Vec<(usize, usize)> = support::chunks(data)
        .map(|(offset, header)| (offset, header.chunk_size as usize))
        .collect();
    let end = chunks.last().map_or(0, |&(offset, size)| offset + size);
    assert_eq!(end, data.len(), "the chunks cover the recording");
    chunks
}

/// A recording from jfr-writer with several chunks, each with several
/// checkpoints (a flush every 40 events), and values of every kind: thread
/// groups, threads, classes, methods, stack traces of up to 24 frames,
/// inline and pooled strings, and every primitive type.
pub fn writer_recording() -> Vec<u8> {
    // Made once per test binary: tests run in parallel, and the file is
    // written to one place.
    static RECORDING: OnceLock<Vec<u8>> = OnceLock::new();
    RECORDING.get_or_init(make_writer_recording).clone()
}

fn make_writer_recording() -> Vec<u8> {
    let dir = support::temp_dir("convert_mutations");
    let path = dir.join("writer.jfr");
    let options = Options {
        max_chunk_size: 24 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let custom = recording
        .register(
            EventTypeBuilder::new("test.Everything")
                .with_duration()
                .with_thread()
                .with_stack_trace()
                .field(FieldSpec::new("z", FieldType::Boolean))
                .field(FieldSpec::new("b", FieldType::Byte))
                .field(FieldSpec::new("s", FieldType::Short))
                .field(FieldSpec::new("c", FieldType::Char))
                .field(FieldSpec::new("i", FieldType::Int))
                .field(FieldSpec::new("j", FieldType::Long))
                .field(FieldSpec::new("f", FieldType::Float))
                .field(FieldSpec::new("d", FieldType::Double))
                .field(FieldSpec::new("inline", FieldType::String))
                .field(FieldSpec::new("pooled", FieldType::String)),
        )
        .unwrap();
    let mut rng = SmallRng::seed_from_u64(6);
    let mut events = 0;
    for round in 0..12 {
        // New values in every round, so each flush sends pools of its own.
        let group = recording.thread_group(ThreadGroup {
            parent: None,
            name: format!("group-{round}"),
        });
        let thread = recording.thread(Thread {
            os_name: format!("os-{round}"),
            os_thread_id: 100 + round,
            java_name: format!("worker-{round} ✓"),
            java_thread_id: round,
            group: Some(group),
        });
        for _ in 0..40 {
            let name = recording.symbol(&format!("pkg/Class{}", rng.random_range(0..30)));
            let class = recording.class(Class {
                class_loader: None,
                name,
                package: None,
                modifiers: 1,
                hidden: false,
            });
            let depth = rng.random_range(1..24);
            let frames = (0..depth)
                .map(|frame| {
                    let method_name = recording.symbol(&format!("m{}", rng.random_range(0..50)));
                    let descriptor = recording.symbol("()V");
                    let method = recording.method(Method {
                        class,
                        name: method_name,
                        descriptor,
                        modifiers: 9,
                        hidden: false,
                    });
                    StackFrame {
                        method,
                        line_number: frame,
                        bytecode_index: frame * 3,
                        frame_type: FrameType::Interpreted,
                    }
                })
                .collect();
            let stack = recording.stack_trace(StackTrace {
                truncated: false,
                frames,
            });
            let ticks = Ticks(events);
            recording
                .event(&alloc, ticks)
                .thread(thread)
                .stack_trace(stack)
                .class(class)
                .long(rng.random_range(1..1 << 30))
                .commit()
                .unwrap();
            let pooled = recording.string(&format!("pooled {}", rng.random_range(0..10)));
            recording
                .event(&custom, ticks)
                .duration(7)
                .thread(thread)
                .stack_trace(stack)
                .boolean(rng.random())
                .byte(rng.random())
                .short(rng.random())
                .char(rng.random())
                .int(rng.random())
                .long(rng.random())
                .float(rng.random())
                .double(rng.random())
                .string(Some("inline text"))
                .pooled_string(pooled)
                .commit()
                .unwrap();
            events += 2;
        }
        recording.flush().unwrap();
    }
    recording.close().unwrap();
    std::fs::read(&path).unwrap()
}
