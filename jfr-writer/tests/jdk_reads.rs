//! Files written by jfr-writer, read back by the JDK's own parsers (JDK 17's
//! `jfr summary`, `jfr print --json`, and `jdk.jfr.consumer.RecordingFile`
//! through testdata/checker/RecordingDump.java), with every field value
//! compared to what was written.

use heapsampler_test_support as support;

/// The example's own code, so this test checks what the example writes.
#[allow(dead_code)] // its `main` is not called here
#[path = "../examples/custom_event.rs"]
mod custom_event_example;

use std::fs;
use std::path::Path;

use jfr_writer::{
    Class, ClassRef, EventType, EventTypeBuilder, FieldSpec, FieldType, FrameType, Method, Options,
    Recording, StackFrame, StackTrace, StackTraceRef, Thread, ThreadGroup, ThreadRef, Ticks, Unit,
    events,
};
use support::{
    declaration, dump, metadata_of, print_json, print_text, quote, summary, summary_count, temp_dir,
};

/// A thread, a class and a two-frame stack, with the lines the checker
/// prints for them.
struct Fixture {
    thread: ThreadRef,
    thread_text: String,
    class: ClassRef,
    class_text: String,
    stack: StackTraceRef,
    stack_text: String,
}

fn fixture<S: jfr_writer::Sink>(recording: &mut Recording<S>, n: i64) -> Fixture {
    let system = recording.thread_group(ThreadGroup {
        parent: None,
        name: "system".into(),
    });
    let main = recording.thread_group(ThreadGroup {
        parent: Some(system),
        name: "main".into(),
    });
    let java_name = format!("worker-{n}");
    let thread = recording.thread(Thread {
        os_name: java_name.clone(),
        os_thread_id: 1000 + n,
        java_name: java_name.clone(),
        java_thread_id: 20 + n,
        group: Some(main),
    });
    let thread_text = format!(
        "thread({},{},{},{},\"main\"<\"system\")",
        quote(Some(&java_name)),
        20 + n,
        quote(Some(&java_name)),
        1000 + n
    );
    let name = recording.symbol(&format!("com/example/Cache{n}"));
    let class = recording.class(Class {
        class_loader: None,
        name,
        package: None,
        modifiers: 1,
        hidden: false,
    });
    let class_text = format!("class(com.example.Cache{n},1,null)");
    let (get, put) = (recording.symbol("get"), recording.symbol("put"));
    let (get_desc, put_desc) = (
        recording.symbol("(Ljava/lang/Object;)Ljava/lang/Object;"),
        recording.symbol("(JI[B)V"),
    );
    let method = |recording: &mut Recording<S>, name, descriptor, modifiers| {
        recording.method(Method {
            class,
            name,
            descriptor,
            modifiers,
            hidden: false,
        })
    };
    let get = method(recording, get, get_desc, 1);
    let put = method(recording, put, put_desc, 9);
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames: vec![
            StackFrame {
                method: put,
                line_number: 17 + n as i32,
                bytecode_index: 3,
                frame_type: FrameType::Inlined,
            },
            StackFrame {
                method: get,
                line_number: -1,
                bytecode_index: 0,
                frame_type: FrameType::Interpreted,
            },
        ],
    });
    let stack_text = format!(
        "stack(false:com.example.Cache{n}.put(JI[B)V:{}:3:Inlined:9:false;\
         com.example.Cache{n}.get(Ljava/lang/Object;)Ljava/lang/Object;:-1:0:Interpreted:1:false)",
        17 + n
    );
    Fixture {
        thread,
        thread_text,
        class,
        class_text,
        stack,
        stack_text,
    }
}

fn all_types_event() -> EventTypeBuilder {
    EventTypeBuilder::new("test.AllTypes")
        .label("All Types")
        .category(&["Test"])
        .with_duration()
        .with_thread()
        .with_stack_trace()
        .field(FieldSpec::new("b", FieldType::Boolean))
        .field(FieldSpec::new("i8", FieldType::Byte))
        .field(FieldSpec::new("i16", FieldType::Short))
        .field(FieldSpec::new("c", FieldType::Char))
        .field(FieldSpec::new("i32", FieldType::Int))
        .field(FieldSpec::new("i64", FieldType::Long).unit(Unit::Bytes))
        .field(FieldSpec::new("f32", FieldType::Float))
        .field(FieldSpec::new("f64", FieldType::Double))
        .field(FieldSpec::new("text", FieldType::String))
        .field(FieldSpec::new("objectClass", FieldType::Class))
}

/// One value of each primitive type, and the checker's text for it.
#[derive(Debug, Clone)]
struct Primitives {
    b: bool,
    i8: i8,
    i16: i16,
    c: u16,
    i32: i32,
    i64: i64,
    f32: f32,
    f64: f64,
    text: Option<String>,
}

impl Primitives {
    fn expected(&self) -> String {
        format!(
            "b={} i8={} i16={} c=char:{} i32={} i64={} f32=float:{:x} f64=double:{:x} text={}",
            self.b,
            self.i8,
            self.i16,
            self.c,
            self.i32,
            self.i64,
            self.f32.to_bits(),
            self.f64.to_bits(),
            quote(self.text.as_deref())
        )
    }
}

fn write_all_types<S: jfr_writer::Sink>(
    recording: &mut Recording<S>,
    event: &EventType,
    fixture: &Fixture,
    start: Ticks,
    duration: i64,
    p: &Primitives,
) -> String {
    recording
        .event(event, start)
        .duration(duration)
        .thread(fixture.thread)
        .stack_trace(fixture.stack)
        .boolean(p.b)
        .byte(p.i8)
        .short(p.i16)
        .char(p.c)
        .int(p.i32)
        .long(p.i64)
        .float(p.f32)
        .double(p.f64)
        .string(p.text.as_deref())
        .class(fixture.class)
        .commit()
        .unwrap();
    format!(
        "test.AllTypes startTime={} duration={duration} eventThread={} stackTrace={} {} objectClass={}",
        recording.clock().epoch_nanos(start),
        fixture.thread_text,
        fixture.stack_text,
        p.expected(),
        fixture.class_text
    )
}

fn primitives(seed: i64) -> Primitives {
    Primitives {
        b: seed % 2 == 0,
        i8: (seed * 37) as i8,
        i16: (seed * 4099) as i16,
        c: (seed * 7919) as u16,
        i32: (seed * 1_000_003) as i32,
        i64: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15_u64 as i64),
        f32: seed as f32 / 3.0,
        f64: seed as f64 / 7.0,
        text: Some(format!("value {seed}")),
    }
}

#[test]
fn every_primitive_type_reads_back_exactly() {
    let dir = temp_dir("every_primitive_type");
    let path = dir.join("types.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let f = fixture(&mut recording, 1);
    let edge_cases = [
        Primitives {
            b: true,
            i8: i8::MIN,
            i16: i16::MIN,
            c: 0,
            i32: i32::MIN,
            i64: i64::MIN,
            f32: f32::MIN_POSITIVE / 2.0, // subnormal
            f64: -0.0,
            text: None,
        },
        Primitives {
            b: false,
            i8: -1,
            i16: -1,
            c: u16::MAX,
            i32: -1,
            i64: -1,
            f32: f32::INFINITY,
            f64: f64::MAX,
            text: Some(String::new()),
        },
        Primitives {
            b: true,
            i8: i8::MAX,
            i16: i16::MAX,
            c: 0x263a, // ☺
            i32: i32::MAX,
            i64: i64::MAX,
            f32: -1.5,
            f64: f64::MIN_POSITIVE,
            text: Some("x".into()),
        },
    ];
    let start = recording.clock().now();
    let mut expected = Vec::new();
    for (i, p) in edge_cases.iter().enumerate() {
        let at = Ticks(start.0 + i as i64 * 1_000_003);
        expected.push(write_all_types(
            &mut recording,
            &event,
            &f,
            at,
            123_456_789 * i as i64,
            p,
        ));
    }
    recording.close().unwrap();

    assert_eq!(dump(&path), expected);
    let json = print_json(&path);
    let events = support::json_events(&json);
    assert_eq!(events.len(), 3);
    assert_eq!(events[2]["values"]["i64"], serde_json::json!(i64::MAX));
    assert_eq!(events[0]["values"]["eventThread"]["javaName"], "worker-1");
}

#[test]
fn strings_of_every_length_class_and_script() {
    let dir = temp_dir("strings");
    let path = dir.join("strings.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording
        .register(
            EventTypeBuilder::new("test.Text")
                .field(FieldSpec::new("text", FieldType::String))
                .field(FieldSpec::new("pooled", FieldType::String)),
        )
        .unwrap();
    // Lengths around each varint boundary of the byte length (127/128,
    // 16383/16384) and a long one; then non-ASCII text of 2, 3 and 4 bytes
    // per character (surrogate pairs in UTF-16), and control characters.
    let mut texts: Vec<Option<String>> = vec![None, Some(String::new())];
    for len in [1, 127, 128, 16_383, 16_384, 200_000] {
        texts.push(Some("a".repeat(len)));
    }
    texts.extend(
        [
            "Größe ändern: Ünïcödé",
            "日本語のテキスト",
            "emoji 🦀🚀 and 𝄞",
            "tab\tnewline\nquote\"backslash\\nul\u{0}",
            "ÿ Latin-1 range \u{80}\u{ff}",
        ]
        .map(|s| Some(s.to_owned())),
    );
    let start = recording.clock().now();
    let mut expected = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let at = Ticks(start.0 + i as i64);
        let pooled_text = format!("pooled {}", i % 3);
        let pooled = recording.string(&pooled_text);
        recording
            .event(&event, at)
            .string(text.as_deref())
            .pooled_string(pooled)
            .commit()
            .unwrap();
        expected.push(format!(
            "test.Text startTime={} text={} pooled={}",
            recording.clock().epoch_nanos(at),
            quote(text.as_deref()),
            quote(Some(&pooled_text))
        ));
    }
    recording.close().unwrap();
    assert_eq!(dump(&path), expected);
    summary(&path);
}

fn deep_stack<S: jfr_writer::Sink>(
    recording: &mut Recording<S>,
    depth: usize,
    truncated: bool,
) -> (StackTraceRef, String) {
    deep_stack_in(recording, "Recursive", depth, truncated)
}

/// A stack of `depth` frames of `class`'s `descend(I)V`, interned, and its
/// text as the dump prints it.
fn deep_stack_in<S: jfr_writer::Sink>(
    recording: &mut Recording<S>,
    class_name: &str,
    depth: usize,
    truncated: bool,
) -> (StackTraceRef, String) {
    let (trace, text) = deep_trace_in(recording, class_name, depth, truncated);
    (recording.stack_trace(trace), text)
}

/// The stack of [`deep_stack_in`], not yet in the recording.
fn deep_trace_in<S: jfr_writer::Sink>(
    recording: &mut Recording<S>,
    class_name: &str,
    depth: usize,
    truncated: bool,
) -> (StackTrace, String) {
    let name = recording.symbol(class_name);
    let class = recording.class(Class {
        class_loader: None,
        name,
        package: None,
        modifiers: 0,
        hidden: false,
    });
    let (method_name, descriptor) = (recording.symbol("descend"), recording.symbol("(I)V"));
    let method = recording.method(Method {
        class,
        name: method_name,
        descriptor,
        modifiers: 8,
        hidden: false,
    });
    let frames: Vec<StackFrame> = (0..depth)
        .map(|i| StackFrame {
            method,
            line_number: i as i32,
            bytecode_index: (i * 3) as i32,
            frame_type: if i % 2 == 0 {
                FrameType::JitCompiled
            } else {
                FrameType::Interpreted
            },
        })
        .collect();
    let text = frames
        .iter()
        .map(|f| {
            let kind = if f.frame_type == FrameType::JitCompiled {
                "JIT compiled"
            } else {
                "Interpreted"
            };
            format!(
                "{class_name}.descend(I)V:{}:{}:{kind}:8:false",
                f.line_number, f.bytecode_index
            )
        })
        .collect::<Vec<_>>()
        .join(";");
    (
        StackTrace { truncated, frames },
        format!("stack({truncated}:{text})"),
    )
}

#[test]
fn stacks_of_depth_1_and_2048() {
    let dir = temp_dir("stacks");
    let path = dir.join("stacks.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let f = fixture(&mut recording, 2);
    let mut expected = Vec::new();
    for (depth, truncated) in [(1, false), (2048, true), (2048, false)] {
        let (stack, text) = deep_stack(&mut recording, depth, truncated);
        let at = recording.clock().now();
        recording
            .event(&event, at)
            .thread(f.thread)
            .stack_trace(stack)
            .class(f.class)
            .long(4096)
            .commit()
            .unwrap();
        expected.push(format!(
            "jdk.ObjectAllocationSample startTime={} eventThread={} stackTrace={text} objectClass={} weight=4096",
            recording.clock().epoch_nanos(at),
            f.thread_text,
            f.class_text
        ));
    }
    recording.close().unwrap();
    assert_eq!(dump(&path), expected);
}

/// Writes `count` events over several threads and stacks, flushing every
/// `flush_every`; returns the lines the checker must print.
fn write_many<S: jfr_writer::Sink>(
    recording: &mut Recording<S>,
    event: &EventType,
    fixtures: &[Fixture],
    count: usize,
    flush_every: usize,
) -> Vec<String> {
    let start = recording.clock().now();
    let mut expected = Vec::with_capacity(count);
    for i in 0..count {
        let f = &fixtures[i % fixtures.len()];
        let at = Ticks(start.0 + i as i64 * 1000);
        expected.push(write_all_types(
            recording,
            event,
            f,
            at,
            i as i64,
            &primitives(i as i64),
        ));
        if (i + 1) % flush_every == 0 {
            recording.flush().unwrap();
        }
    }
    expected
}

#[test]
fn several_chunks_each_carry_their_constants() {
    let dir = temp_dir("chunks");
    let path = dir.join("chunks.jfr");
    let options = Options {
        max_chunk_size: 16 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let fixtures: Vec<Fixture> = (0..5).map(|n| fixture(&mut recording, n)).collect();
    let expected = write_many(&mut recording, &event, &fixtures, 3000, 100);
    recording.close().unwrap();

    let summary = summary(&path);
    let chunks: u64 = summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("Chunks: "))
        .expect("jfr summary names the chunk count")
        .parse()
        .unwrap();
    assert!(
        chunks >= 5,
        "16 KiB chunks for ~300 KiB of events: {chunks} chunks"
    );
    assert_eq!(summary_count(&summary, "test.AllTypes"), 3000);
    assert_eq!(dump(&path), expected);
    assert_chunks_stand_alone(&path, &expected);
}

#[test]
fn values_dropped_between_chunks_are_written_again() {
    // A recording that drops what recent chunks did not use at each new
    // chunk, as the agent does, but for one stack it holds throughout;
    // some stacks interned, some added.
    // Threads, classes, methods and stacks come and go: every chunk must
    // still carry each value its events use, and a value interned again
    // after being dropped must not take the key of another (the JDK's
    // parser reuses what a key meant in the previous chunk).
    let dir = temp_dir("drop_unused");
    let path = dir.join("drop.jfr");
    let options = Options {
        max_chunk_size: 8 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let f = fixture(&mut recording, 1);
    let (held, held_text) = deep_stack(&mut recording, 3, true);
    // A receipt for the first chunk, given in every chunk: in the later
    // ones the stack is marked as a plain ref is.
    let held_marked = recording.mark_stack_trace(held).unwrap();
    let mut expected = Vec::new();
    // Each stack and thread made, with the last chunk that used it.
    let mut made: Vec<(jfr_writer::PoolRef, u32)> = Vec::new();
    let mut chunk = recording.chunk_number();
    let mut most_held = 0;
    for round in 0..12usize {
        // Three classes in turn, a thread per round.
        let class = format!("Recursive{}", round % 3);
        let thread_name = format!("worker-{}", round % 4);
        let system = recording.thread_group(ThreadGroup {
            parent: None,
            name: "system".into(),
        });
        let pool = recording.thread_group(ThreadGroup {
            parent: Some(system),
            name: format!("pool-{}", round % 2),
        });
        let thread = recording.thread(Thread {
            os_name: thread_name.clone(),
            os_thread_id: 100 + (round % 4) as i64,
            java_name: thread_name.clone(),
            java_thread_id: 10 + (round % 4) as i64,
            group: Some(pool),
        });
        let thread_text = format!(
            "thread({},{},{},{},\"pool-{}\"<\"system\")",
            quote(Some(&thread_name)),
            10 + round % 4,
            quote(Some(&thread_name)),
            100 + round % 4,
            round % 2
        );
        for depth in 1..=20 {
            // Depths cycle with a shift per round, so a stack comes back
            // after having been dropped, in another slot.
            let depth = (depth + round * 7) % 40 + 4;
            let (trace, text) = deep_trace_in(&mut recording, &class, depth, round % 2 == 0);
            // Every third round adds its stacks unindexed, as the agent
            // does (a stack seen again gets a key of its own), and writes
            // them by their receipts.
            let stack = if round % 3 == 2 {
                recording.add_stack_trace(trace).into()
            } else {
                recording.stack_trace(trace).into()
            };
            for (stack, text) in [(stack, &text), (held_marked.into(), &held_text)] {
                let at = recording.clock().now();
                recording
                    .event(&event, at)
                    .thread(thread)
                    .stack_trace_field(stack)
                    .class(f.class)
                    .long(depth as i64)
                    .commit()
                    .unwrap();
                let stack = stack.reference().unwrap();
                made.push((stack.into(), recording.chunk_number()));
                expected.push(format!(
                    "jdk.ObjectAllocationSample startTime={} eventThread={thread_text} stackTrace={text} objectClass={} weight={depth}",
                    recording.clock().epoch_nanos(at),
                    f.class_text
                ));
            }
            made.push((thread.into(), recording.chunk_number()));
            most_held = most_held.max(recording.pool_sizes().stack_traces);
        }
        recording.flush().unwrap();
        if recording.chunk_number() != chunk {
            chunk = recording.chunk_number();
            recording.drop_unused([held.into()]);
            // Kept: what the chunk just ended used, and the held stack.
            let mut last_use = std::collections::HashMap::new();
            for &(value, used_in) in &made {
                let last = last_use.entry(value).or_insert(used_in);
                *last = used_in.max(*last);
            }
            for (value, used_in) in last_use {
                let kept = used_in + 1 >= chunk || value == held.into();
                assert_eq!(
                    recording.holds(value),
                    kept,
                    "{value:?} last used in chunk {used_in}, now {chunk}"
                );
            }
        }
    }
    recording.close().unwrap();
    assert!(
        chunk >= 6,
        "8 KiB chunks for 12 rounds of stacks: {chunk} chunks"
    );
    // What is held is exactly what the last two chunks used (checked at
    // each drop above): about four rounds' stacks of the twelve.
    let distinct: std::collections::HashSet<_> = made.iter().map(|(value, _)| value).collect();
    assert!(
        most_held * 2 < distinct.len(),
        "{most_held} stacks held at once, of {} distinct values",
        distinct.len()
    );
    let got = dump(&path);
    let first_difference = got.iter().zip(&expected).position(|(g, e)| g != e);
    if let Some(i) = first_difference {
        panic!(
            "event {i} of {}:\n got {}\nwant {}",
            expected.len(),
            got[i],
            expected[i]
        );
    }
    assert_eq!(got.len(), expected.len());
    assert_chunks_stand_alone(&path, &expected);
}

#[test]
fn a_stack_used_again_chunks_later_brings_all_its_methods_and_frame_types() {
    // Four methods of two classes, in runs and alternating as recursion
    // and callbacks make them, in every frame type. The stack is used in
    // the first chunk, held through a chunk where nothing uses it or its
    // methods, and used again in the third: that chunk, read alone, must
    // define each of its methods, classes and frame types again.
    let dir = temp_dir("stack_used_again");
    let path = dir.join("again.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let f = fixture(&mut recording, 1);
    let mut method = |class_name: &str, name: &str| {
        let class_symbol = recording.symbol(class_name);
        let class = recording.class(Class {
            class_loader: None,
            name: class_symbol,
            package: None,
            modifiers: 0,
            hidden: false,
        });
        let (name_symbol, descriptor) = (recording.symbol(name), recording.symbol("()V"));
        let method = recording.method(Method {
            class,
            name: name_symbol,
            descriptor,
            modifiers: 1,
            hidden: false,
        });
        (
            method,
            format!("{}.{name}()V", class_name.replace('/', ".")),
        )
    };
    let methods = [
        method("a/First", "x"),
        method("a/First", "y"),
        method("b/Second", "x"),
        method("b/Second", "z"),
    ];
    let kinds = [
        (FrameType::Interpreted, "Interpreted"),
        (FrameType::JitCompiled, "JIT compiled"),
        (FrameType::Inlined, "Inlined"),
        (FrameType::Native, "Native"),
    ];
    let order = [0, 0, 1, 0, 2, 3, 3, 1, 0, 2];
    let frames: Vec<StackFrame> = order
        .iter()
        .enumerate()
        .map(|(i, &m)| StackFrame {
            method: methods[m].0,
            line_number: i as i32,
            bytecode_index: 2 * i as i32,
            frame_type: kinds[i % kinds.len()].0,
        })
        .collect();
    let text = order
        .iter()
        .enumerate()
        .map(|(i, &m)| format!("{}:{i}:{}:{}:1:false", methods[m].1, 2 * i, kinds[i % 4].1))
        .collect::<Vec<_>>()
        .join(";");
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames,
    });
    let mut expected = Vec::new();
    for (chunk, used) in [(1, Some(stack)), (2, None), (3, Some(stack))] {
        assert_eq!(recording.chunk_number(), chunk);
        let at = recording.clock().now();
        recording
            .event(&event, at)
            .thread(f.thread)
            .stack_trace(used)
            .class(f.class)
            .long(chunk as i64)
            .commit()
            .unwrap();
        let stack_text = match used {
            Some(_) => format!("stack(false:{text})"),
            None => "null".to_owned(),
        };
        expected.push(format!(
            "jdk.ObjectAllocationSample startTime={} eventThread={} stackTrace={stack_text} objectClass={} weight={chunk}",
            recording.clock().epoch_nanos(at),
            f.thread_text,
            f.class_text
        ));
        if chunk < 3 {
            recording.end_chunk().unwrap();
            recording.drop_unused([stack.into()]);
        }
    }
    recording.close().unwrap();
    assert_eq!(dump(&path), expected);
    assert_chunks_stand_alone(&path, &expected);
}

#[test]
fn a_chunk_starts_before_its_first_event_not_at_its_first_flush() {
    // A recording shorter than its flush interval is flushed once, at the
    // end: its chunk must still span its events, or readers that go by the
    // chunk's time range (Mission Control's timeline) leave them out.
    let dir = temp_dir("chunk_span");
    let path = dir.join("span.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let fixtures = [fixture(&mut recording, 0)];
    let first = recording.clock().now();
    let mut expected = write_many(&mut recording, &event, &fixtures, 3, 1000);
    std::thread::sleep(std::time::Duration::from_millis(30));
    let last = recording.clock().now();
    expected.extend(write_many(&mut recording, &event, &fixtures, 1, 1000));
    let epoch = |ticks: Ticks| recording.clock().epoch_nanos(ticks);
    let (first, last) = (epoch(first), epoch(last));
    recording.close().unwrap();
    let bytes = fs::read(&path).unwrap();
    let header = jfr_format::ChunkHeader::decode(&bytes).unwrap();
    assert!(
        header.start_nanos <= first,
        "the chunk starts {} ns after its first event",
        header.start_nanos - first
    );
    assert!(header.start_nanos + header.duration_nanos >= last);
    assert_eq!(dump(&path), expected);
}

#[test]
fn a_type_registered_after_a_flush_is_declared_where_its_chunk_says() {
    // The second flush of this chunk writes events, then new constants,
    // then the metadata with the new type: each at the offset the chunk
    // header and the checkpoint chain give.
    let dir = temp_dir("late_type");
    let path = dir.join("late.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let first = [fixture(&mut recording, 0)];
    let mut expected = write_many(&mut recording, &event, &first, 5, 5);
    let later = recording
        .register(EventTypeBuilder::new("test.Later").field(FieldSpec::new("n", FieldType::Long)))
        .unwrap();
    let second = [fixture(&mut recording, 1)];
    expected.extend(write_many(&mut recording, &event, &second, 5, 100));
    let at = recording.clock().now();
    recording.event(&later, at).long(42).commit().unwrap();
    let later_line = format!(
        "test.Later startTime={} n=42",
        recording.clock().epoch_nanos(at)
    );
    recording.close().unwrap();
    let text = summary(&path);
    assert!(text.contains("Chunks: 1"), "{text}");
    assert_eq!(summary_count(&text, "test.Later"), 1, "{text}");
    let mut dumped = dump(&path);
    let position = dumped
        .iter()
        .position(|line| line.starts_with("test.Later"));
    let late = dumped.remove(position.expect("the late type's event is read"));
    assert_eq!(late, later_line);
    assert_eq!(dumped, expected);
}

#[test]
fn chunks_rotate_by_age() {
    let dir = temp_dir("chunk_age");
    let path = dir.join("age.jfr");
    let options = Options {
        max_chunk_age: Some(std::time::Duration::ZERO),
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let fixtures: Vec<Fixture> = (0..2).map(|n| fixture(&mut recording, n)).collect();
    // Every flush finds the chunk too old: 4 flushes with events, 4 chunks.
    let expected = write_many(&mut recording, &event, &fixtures, 40, 10);
    recording.close().unwrap();
    assert!(summary(&path).contains("Chunks: 4"), "{}", summary(&path));
    assert_eq!(dump(&path), expected);
    assert_chunks_stand_alone(&path, &expected);
}

#[test]
fn manual_chunk_ends_end_chunks_only_when_asked() {
    let dir = temp_dir("manual_chunk_ends");
    let path = dir.join("manual.jfr");
    let options = Options {
        max_chunk_age: Some(std::time::Duration::ZERO),
        manual_chunk_ends: true,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let fixtures: Vec<Fixture> = (0..2).map(|n| fixture(&mut recording, n)).collect();
    // Every flush finds the chunk due, and none ends it.
    let mut expected = write_many(&mut recording, &event, &fixtures, 40, 10);
    assert!(recording.chunk_is_due());
    recording.end_chunk().unwrap();
    // The next chunk is due as soon as it has events, at age 0.
    expected.extend(write_many(&mut recording, &event, &fixtures, 20, 10));
    assert!(recording.chunk_is_due());
    recording.close().unwrap();
    assert!(summary(&path).contains("Chunks: 2"), "{}", summary(&path));
    assert_eq!(dump(&path), expected);
    assert_chunks_stand_alone(&path, &expected);
}

/// Splits a recording at its chunk boundaries and has the JDK read each
/// chunk as a file of its own: each must carry every constant its events
/// use (Mission Control loads chunks independently; the JDK would otherwise
/// fill gaps from the previous chunk and hide them).
fn assert_chunks_stand_alone(path: &Path, expected: &[String]) {
    let bytes = fs::read(path).unwrap();
    let mut lines = Vec::new();
    let mut end = 0;
    for (index, (offset, header)) in support::chunks(&bytes).enumerate() {
        assert_eq!(header.generation, 0, "chunk {index} is finished");
        end = offset + header.chunk_size as usize;
        let last = end == bytes.len();
        assert_eq!(
            header.flags & jfr_format::FLAG_FINAL_CHUNK != 0,
            last,
            "final flag of chunk {index}"
        );
        let single = path.with_extension(format!("chunk{index}.jfr"));
        fs::write(&single, &bytes[offset..end]).unwrap();
        lines.extend(dump(&single));
    }
    assert_eq!(end, bytes.len(), "the chunks cover the recording");
    assert_eq!(lines, expected, "the chunks read one by one");
}

#[test]
fn a_copy_taken_after_a_flush_is_a_complete_recording() {
    let dir = temp_dir("copy_after_flush");
    let path = dir.join("live.jfr");
    let options = Options {
        max_chunk_size: 64 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let fixtures: Vec<Fixture> = (0..3).map(|n| fixture(&mut recording, n)).collect();
    let mut expected = Vec::new();
    for round in 0..4 {
        expected.extend(write_many(&mut recording, &event, &fixtures, 700, 700));
        // Right after the flush: copy the file while the recording goes on.
        let copy = dir.join(format!("copy-{round}.jfr"));
        fs::copy(&path, &copy).unwrap();
        let flushed = expected.len();
        // An event written after the copy (flushed by the next round) must
        // not be in it.
        let at = recording.clock().now();
        expected.push(write_all_types(
            &mut recording,
            &event,
            &fixtures[0],
            at,
            0,
            &primitives(0),
        ));
        assert_eq!(dump(&copy), expected[..flushed], "copy after round {round}");
    }
    recording.close().unwrap();
    assert_eq!(dump(&path), expected);
}

#[test]
fn a_million_events() {
    let dir = temp_dir("million");
    let path = dir.join("million.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let fixtures: Vec<Fixture> = (0..8).map(|n| fixture(&mut recording, n)).collect();
    let start = recording.clock().now();
    let mut weights = 0i64;
    for i in 0..1_000_000i64 {
        let f = &fixtures[(i % 8) as usize];
        let weight = 512 * 1024 + i % 4096;
        weights += weight;
        recording
            .event(&event, Ticks(start.0 + i))
            .thread(f.thread)
            .stack_trace(f.stack)
            .class(f.class)
            .long(weight)
            .commit()
            .unwrap();
        if i % 100_000 == 99_999 {
            recording.flush().unwrap();
        }
    }
    recording.close().unwrap();

    let summary = summary(&path);
    assert_eq!(
        summary_count(&summary, "jdk.ObjectAllocationSample"),
        1_000_000
    );
    let lines = support::dump_types(&path, &["jdk.ObjectAllocationSample"]);
    assert_eq!(lines.len(), 1_000_000);
    let sum: i64 = lines
        .iter()
        .map(|l| l.rsplit_once("weight=").unwrap().1.parse::<i64>().unwrap())
        .sum();
    assert_eq!(sum, weights, "every weight read back");
    assert_eq!(lines[999_999], {
        let f = &fixtures[7];
        format!(
            "jdk.ObjectAllocationSample startTime={} eventThread={} stackTrace={} objectClass={} weight={}",
            recording_epoch(&lines[0], start, Ticks(start.0 + 999_999)),
            f.thread_text,
            f.stack_text,
            f.class_text,
            512 * 1024 + 999_999 % 4096
        )
    });
}

/// The epoch time of `at`, from the first event's printed time (written at `start`).
fn recording_epoch(first_line: &str, start: Ticks, at: Ticks) -> i64 {
    let first: i64 = first_line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("startTime="))
        .unwrap()
        .parse()
        .unwrap();
    first + (at.0 - start.0)
}

#[test]
fn allocation_samples_show_units_and_stacks_in_jfr_print() {
    let dir = temp_dir("print_units");
    let path = dir.join("alloc.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let f = fixture(&mut recording, 3);
    let at = recording.clock().now();
    recording
        .event(&event, at)
        .thread(f.thread)
        .stack_trace(f.stack)
        .class(f.class)
        .long(1024 * 1024)
        .commit()
        .unwrap();
    recording.close().unwrap();
    let text = print_text(&path, "jdk.ObjectAllocationSample");
    assert!(text.contains("weight = 1.0 MB"), "units: {text}");
    assert!(text.contains("objectClass = com.example.Cache3"), "{text}");
    assert!(
        text.contains("eventThread = \"worker-3\" (javaThreadId = 23)"),
        "{text}"
    );
    assert!(
        text.contains("com.example.Cache3.put(long, int, byte[]) line: 20"),
        "{text}"
    );
}

#[test]
fn zstd_recordings_decompress_to_valid_recordings() {
    let dir = temp_dir("zstd");
    let path = dir.join("alloc.jfr.zst");
    let options = Options {
        max_chunk_size: 32 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let event = recording.register(all_types_event()).unwrap();
    let fixtures: Vec<Fixture> = (0..3).map(|n| fixture(&mut recording, n)).collect();
    let expected = write_many(&mut recording, &event, &fixtures, 2000, 250);
    recording.close().unwrap();

    let compressed = fs::read(&path).unwrap();
    assert_eq!(&compressed[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    let plain = dir.join("alloc.jfr");
    fs::write(&plain, zstd::decode_all(&compressed[..]).unwrap()).unwrap();
    assert!(compressed.len() < fs::metadata(&plain).unwrap().len() as usize);
    assert_eq!(dump(&plain), expected);
}

#[test]
fn the_standard_events_are_declared_as_the_jdk_declares_them() {
    let dir = temp_dir("standard_events");
    let path = dir.join("standard.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    for builder in [
        events::object_allocation_sample(),
        events::active_recording(),
        events::active_setting(),
        events::object_lifetime(),
        events::garbage_collection(),
        events::agent_statistics(),
        events::heap_exhausted(),
        events::live_set(),
    ] {
        recording.register(builder).unwrap();
    }
    recording.close().unwrap();
    let ours = metadata_of(Some(&path));
    let jdk = metadata_of(None);
    for name in [
        "jdk.ObjectAllocationSample",
        "jdk.ActiveRecording",
        "jdk.ActiveSetting",
        "java.lang.Thread",
        "java.lang.Class",
        "jdk.types.StackTrace",
        "jdk.types.StackFrame",
        "jdk.types.Method",
        "jdk.types.ClassLoader",
        "jdk.types.Package",
        "jdk.types.Module",
        "jdk.types.Symbol",
        "jdk.types.FrameType",
        "jdk.types.ThreadGroup",
        "jdk.jfr.Label",
        "jdk.jfr.Timestamp",
        "jdk.jfr.Timespan",
        "jdk.jfr.DataAmount",
        "jdk.jfr.ContentType",
        "jdk.jfr.Unsigned",
        "jdk.jfr.Category",
    ] {
        let (a, b) = (declaration(&ours, name), declaration(&jdk, name));
        assert_eq!(
            a, b,
            "{name} must be declared exactly as JDK 17 declares it"
        );
    }
}

#[test]
fn the_custom_event_example_opens_in_jfr_print() {
    let dir = temp_dir("example");
    let path = dir.join("out.jfr");
    custom_event_example::write(&path).unwrap();
    let text = print_text(&path, "demo.Order");
    for expected in [
        "demo.Order {",
        "payload = 1.0 MB",
        "discount = 15.00%",
        "latency = 2.50 ms",
        "grade = A",
        "note = \"gift wrap ✓\"",
        "eventThread = \"http-worker-1\" (javaThreadId = 31)",
        "demo.shop.Checkout.placeOrder(int, String) line: 88",
        "demo.shop.Checkout.handle(Request) line: 41",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert_eq!(support::summary_count(&summary(&path), "demo.Order"), 3);
}

#[test]
fn settings_are_declared_as_the_jdk_declares_them() {
    let dir = temp_dir("settings");
    let path = dir.join("settings.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    for builder in [
        events::object_allocation_sample(),
        events::active_recording(),
        events::active_setting(),
    ] {
        recording.register(builder).unwrap();
    }
    recording.close().unwrap();
    // Names, setting classes, labels and order as in a JDK recording. (JDK
    // 17 writes each default as the setting's own name; ours are JDK 25's.)
    let without_default = |line: &String| {
        let (head, rest) = line.split_once('=').unwrap();
        format!("{head} {}", rest.split_once(' ').unwrap().1)
    };
    let ours: Vec<String> = support::settings(&path)
        .iter()
        .map(without_default)
        .collect();
    for event in [
        "jdk.ObjectAllocationSample",
        "jdk.ActiveRecording",
        "jdk.ActiveSetting",
    ] {
        let of = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| l.starts_with(&format!("{event} ")))
                .cloned()
                .collect()
        };
        let jdk: Vec<String> = support::settings(support::jdk_recording())
            .iter()
            .map(without_default)
            .collect();
        assert_eq!(of(&ours), of(&jdk), "{event}");
    }
}

#[test]
fn value_types_and_arrays_read_back_exactly() {
    use jfr_writer::{Value, ValueTypeBuilder};
    let dir = temp_dir("value_types");
    let path = dir.join("shapes.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let point = recording
        .register_value_type(
            ValueTypeBuilder::new("test.types.Point")
                .label("Point")
                .field(FieldSpec::new("x", FieldType::Int))
                .field(FieldSpec::new("y", FieldType::Long).unit(Unit::Bytes))
                .field(FieldSpec::new("name", FieldType::String)),
        )
        .unwrap();
    let segment = recording
        .register_value_type(
            ValueTypeBuilder::new("test.types.Segment")
                .field(FieldSpec::new("from", FieldType::Struct(point.id())))
                .field(FieldSpec::new("to", FieldType::Struct(point.id())))
                .field(FieldSpec::new("tags", FieldType::String).array()),
        )
        .unwrap();
    let shapes = recording
        .register(
            EventTypeBuilder::new("test.Shapes")
                .with_thread()
                .field(FieldSpec::new("origin", FieldType::Struct(point.id())))
                .field(FieldSpec::new("names", FieldType::String).array())
                .field(FieldSpec::new("points", FieldType::Struct(point.id())).array())
                .field(FieldSpec::new("segment", FieldType::Struct(segment.id()))),
        )
        .unwrap();
    // The JDK cannot read arrays of pooled values: refused at registration.
    let pooled_array = recording.register(
        EventTypeBuilder::new("test.Threads")
            .field(FieldSpec::new("threads", FieldType::Thread).array()),
    );
    assert!(
        matches!(pooled_array, Err(jfr_writer::Error::PooledArray { ref field, .. }) if field == "threads"),
        "{pooled_array:?}"
    );
    let f = fixture(&mut recording, 4);
    let p = |x, y, name| [Value::Int(x), Value::Long(y), Value::String(name)];
    let (o, a, b) = (
        p(0, 0, Some("origin")),
        p(-1, 1 << 40, None),
        p(i32::MAX, -5, Some("b ✓")),
    );
    let (from, to) = (p(1, 2, Some("from")), p(3, 4, Some("to")));
    let tags = [
        Value::String(Some("x")),
        Value::String(None),
        Value::String(Some("")),
    ];
    let segment_value = [
        Value::Struct(&point, &from),
        Value::Struct(&point, &to),
        Value::Array(&tags),
    ];
    let at = recording.clock().now();
    recording
        .event(&shapes, at)
        .thread(f.thread)
        .value(Value::Struct(&point, &o))
        .array(&[Value::String(Some("first")), Value::String(Some("second"))])
        .array(&[Value::Struct(&point, &a), Value::Struct(&point, &b)])
        .value(Value::Struct(&segment, &segment_value))
        .commit()
        .unwrap();
    // An empty array, and contents of the wrong type.
    recording
        .event(&shapes, at)
        .thread(None)
        .value(Value::Struct(&point, &o))
        .array(&[])
        .array(&[])
        .value(Value::Struct(&segment, &segment_value))
        .commit()
        .unwrap();
    let wrong = recording
        .event(&shapes, at)
        .thread(None)
        .value(Value::Struct(
            &point,
            &[Value::Long(1), Value::Long(2), Value::String(None)],
        ))
        .array(&[])
        .array(&[])
        .value(Value::Struct(&segment, &segment_value))
        .commit();
    assert!(
        matches!(wrong, Err(jfr_writer::Error::FieldMismatch { ref field, .. }) if field == "origin"),
        "{wrong:?}"
    );
    let not_array = recording
        .event(&shapes, at)
        .thread(None)
        .value(Value::Struct(&point, &o))
        .string(Some("x"))
        .commit();
    assert!(
        matches!(not_array, Err(jfr_writer::Error::FieldMismatch { ref field, .. }) if field == "names")
    );
    recording.close().unwrap();

    let epoch = recording_time(&path);
    let expected_segment =
        "segment={from={x=1,y=2,name=\"from\"},to={x=3,y=4,name=\"to\"},tags=[\"x\",null,\"\"]}";
    assert_eq!(
        dump(&path),
        vec![
            format!(
                "test.Shapes startTime={epoch} eventThread={} origin={{x=0,y=0,name=\"origin\"}} \
                 names=[\"first\",\"second\"] points=[{{x=-1,y=1099511627776,name=null}},\
                 {{x=2147483647,y=-5,name=\"b \\u2713\"}}] {expected_segment}",
                f.thread_text
            ),
            format!(
                "test.Shapes startTime={epoch} eventThread=null origin={{x=0,y=0,name=\"origin\"}} \
                 names=[] points=[] {expected_segment}"
            ),
        ]
    );
}

/// The start time the JDK prints for the first event (all events of the
/// value-type test share it).
fn recording_time(path: &Path) -> i64 {
    dump(path)[0]
        .split_whitespace()
        .find_map(|w| w.strip_prefix("startTime="))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_recording_dropped_without_close_is_finished_and_readable() {
    let dir = temp_dir("dropped");
    let path = dir.join("dropped.jfr");
    let expected = {
        let mut recording = Recording::create(&path, Options::default()).unwrap();
        let event = recording.register(all_types_event()).unwrap();
        let f = fixture(&mut recording, 6);
        let at = recording.clock().now();
        // Written, never flushed: the drop must flush it.
        write_all_types(&mut recording, &event, &f, at, 5, &primitives(7))
    };
    let header = jfr_format::ChunkHeader::decode(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(header.generation, 0);
    assert_ne!(header.flags & jfr_format::FLAG_FINAL_CHUNK, 0);
    assert_eq!(dump(&path), vec![expected]);

    // The same for a zstd stream: the frame must be ended on drop.
    let compressed = dir.join("dropped.jfr.zst");
    let expected = {
        let mut recording = Recording::create(&compressed, Options::default()).unwrap();
        let event = recording.register(all_types_event()).unwrap();
        let f = fixture(&mut recording, 6);
        let at = recording.clock().now();
        write_all_types(&mut recording, &event, &f, at, 5, &primitives(7))
    };
    let plain = dir.join("dropped-zst.jfr");
    fs::write(
        &plain,
        zstd::decode_all(&fs::read(&compressed).unwrap()[..]).unwrap(),
    )
    .unwrap();
    assert_eq!(dump(&plain), vec![expected]);
}
