//! Property test: random events with random values, written, then read back
//! by the JDK's parser (through testdata/checker/RecordingDump.java) with
//! equal values. Each case starts a JVM, so there are few cases with many
//! events each.

use heapsampler_test_support as support;

use jfr_writer::{
    Class, EventTypeBuilder, FieldSpec, FieldType, FrameType, Method, Options, Recording,
    StackFrame, StackTrace, Thread, Ticks,
};
use proptest::prelude::*;
use support::{dump, quote, temp_dir};

#[derive(Debug, Clone)]
struct RandomEvent {
    thread: usize,
    depth: usize,
    delta_ticks: u32,
    b: bool,
    i8: i8,
    i16: i16,
    c: u16,
    i32: i32,
    i64: i64,
    f32: f32,
    f64: f64,
    text: Option<String>,
    flush_after: bool,
}

fn random_event() -> impl Strategy<Value = RandomEvent> {
    (
        (
            0usize..4,
            1usize..40,
            any::<u32>(),
            any::<bool>(),
            any::<i8>(),
            any::<i16>(),
            any::<u16>(),
        ),
        (
            any::<i32>(),
            any::<i64>(),
            // NaN payloads are not promised to survive Java's float boxing.
            any::<f32>().prop_filter("not NaN", |f| !f.is_nan()),
            any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
            proptest::option::of(".{0,40}"),
            proptest::bool::weighted(0.05),
        ),
    )
        .prop_map(
            |(
                (thread, depth, delta_ticks, b, i8, i16, c),
                (i32, i64, f32, f64, text, flush_after),
            )| {
                RandomEvent {
                    thread,
                    depth,
                    delta_ticks,
                    b,
                    i8,
                    i16,
                    c,
                    i32,
                    i64,
                    f32,
                    f64,
                    text,
                    flush_after,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn random_events_read_back_equal(events in proptest::collection::vec(random_event(), 1..300), chunk_kib in 4u64..64) {
        let dir = temp_dir("property");
        let path = dir.join("random.jfr");
        let options = Options { max_chunk_size: chunk_kib * 1024, ..Options::default() };
        let mut recording = Recording::create(&path, options).unwrap();
        let event_type = recording.register(
            EventTypeBuilder::new("test.Random")
                .with_duration()
                .with_thread()
                .with_stack_trace()
                .field(FieldSpec::new("b", FieldType::Boolean))
                .field(FieldSpec::new("i8", FieldType::Byte))
                .field(FieldSpec::new("i16", FieldType::Short))
                .field(FieldSpec::new("c", FieldType::Char))
                .field(FieldSpec::new("i32", FieldType::Int))
                .field(FieldSpec::new("i64", FieldType::Long))
                .field(FieldSpec::new("f32", FieldType::Float))
                .field(FieldSpec::new("f64", FieldType::Double))
                .field(FieldSpec::new("text", FieldType::String)),
        ).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|n| recording.thread(Thread {
                os_name: format!("os-{n}"),
                os_thread_id: 9000 + n,
                java_name: format!("java-{n}"),
                // From 1, as the JVM numbers them: JDK 21 and later read 0
                // as "not a Java thread" and report -1.
                java_thread_id: n + 1,
                group: None,
            }))
            .collect();
        let name = recording.symbol("p/Q");
        let class = recording.class(Class { class_loader: None, name, package: None, modifiers: 0, hidden: false });
        let (method_name, descriptor) = (recording.symbol("r"), recording.symbol("()V"));
        let method = recording.method(Method { class, name: method_name, descriptor, modifiers: 0, hidden: false });

        let mut at = recording.clock().now().0;
        let mut expected = Vec::new();
        for e in &events {
            at += e.delta_ticks as i64;
            let stack = recording.stack_trace(StackTrace {
                truncated: e.depth > 30,
                frames: (0..e.depth).map(|i| StackFrame {
                    method, line_number: i as i32, bytecode_index: 0, frame_type: FrameType::Native,
                }).collect(),
            });
            recording.event(&event_type, Ticks(at))
                .duration(e.delta_ticks as i64)
                .thread(threads[e.thread])
                .stack_trace(stack)
                .boolean(e.b).byte(e.i8).short(e.i16).char(e.c).int(e.i32).long(e.i64)
                .float(e.f32).double(e.f64).string(e.text.as_deref())
                .commit().unwrap();
            let frames: Vec<String> = (0..e.depth).map(|i| format!("p.Q.r()V:{i}:0:Native:0:false")).collect();
            expected.push(format!(
                "test.Random startTime={} duration={} eventThread=thread(\"java-{t}\",{},\"os-{t}\",{},null) \
                 stackTrace=stack({}:{}) b={} i8={} i16={} c=char:{} i32={} i64={} f32=float:{:x} f64=double:{:x} text={}",
                recording.clock().epoch_nanos(Ticks(at)), e.delta_ticks, e.thread + 1, 9000 + e.thread,
                e.depth > 30,
                frames.join(";"), e.b, e.i8, e.i16, e.c, e.i32, e.i64, e.f32.to_bits(), e.f64.to_bits(),
                quote(e.text.as_deref()), t = e.thread,
            ));
            if e.flush_after {
                recording.flush().unwrap();
            }
        }
        recording.close().unwrap();
        prop_assert_eq!(dump(&path), expected);
    }
}
