//! Encoding `jdk.ObjectAllocationSample` events whose threads, stacks and
//! classes are already pooled: the writer's per-sample cost in the agent;
//! and pooling stack traces never seen before, its cost per new stack.
//!
//! Run with `cargo bench -p jfr-writer --bench encode`; results in BENCHMARKS.md.

use heapsampler_test_support as support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput};
use jfr_writer::events::ObjectAllocationSample;
use jfr_writer::{
    Class, ClassRef, FrameType, Method, MethodRef, Options, Recording, StackFrame, StackTrace,
    StackTraceRef, Thread, ThreadRef, Ticks, events,
};
use support::Discard;

struct Pooled {
    threads: Vec<ThreadRef>,
    methods: Vec<MethodRef>,
    stacks: Vec<StackTraceRef>,
    classes: Vec<ClassRef>,
}

/// 64 threads, 200 classes and 1000 stacks of depth 32: a busy application.
fn pool<S: jfr_writer::Sink>(recording: &mut Recording<S>) -> Pooled {
    let threads = (0..64)
        .map(|n| {
            recording.thread(Thread {
                os_name: format!("worker-{n}"),
                os_thread_id: 1000 + n,
                java_name: format!("worker-{n}"),
                java_thread_id: n,
                group: None,
            })
        })
        .collect();
    let classes: Vec<ClassRef> = (0..200)
        .map(|n| {
            let name = recording.symbol(&format!("com/example/Type{n}"));
            recording.class(Class {
                class_loader: None,
                name,
                package: None,
                modifiers: 1,
                hidden: false,
            })
        })
        .collect();
    let methods: Vec<_> = (0..500)
        .map(|n| {
            let (name, descriptor) = (
                recording.symbol(&format!("method{n}")),
                recording.symbol("(I)V"),
            );
            recording.method(Method {
                class: classes[n % 200],
                name,
                descriptor,
                modifiers: 1,
                hidden: false,
            })
        })
        .collect();
    let stacks = (0..1000)
        .map(|n| {
            let frames = (0..32)
                .map(|d| StackFrame {
                    method: methods[(n * 31 + d * 7) % 500],
                    line_number: d as i32,
                    bytecode_index: 0,
                    frame_type: FrameType::JitCompiled,
                })
                .collect();
            recording.stack_trace(StackTrace {
                truncated: false,
                frames,
            })
        })
        .collect();
    Pooled {
        threads,
        methods,
        stacks,
        classes,
    }
}

/// The `i`th sample: threads, stacks and classes picked round-robin,
/// written as the agent writes it.
#[inline]
fn write_sample<S: jfr_writer::Sink>(
    recording: &mut Recording<S>,
    event: &jfr_writer::EventType,
    pooled: &Pooled,
    start: i64,
    i: usize,
) {
    ObjectAllocationSample {
        start_time: Ticks(start + i as i64 * 997),
        event_thread: Some(pooled.threads[i % 64]),
        stack_trace: pooled.stacks[(i * 7) % 1000].into(),
        object_class: Some(pooled.classes[(i * 13) % 200]),
        weight: 524_288 + (i as i64 & 0xffff),
    }
    .write(recording, event)
    .unwrap();
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("jfr_writer");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("object_allocation_sample", |b| {
        b.iter_custom(|iters| {
            let mut recording = Recording::to_writer(Discard(0), Options::default());
            let event = recording
                .register(events::object_allocation_sample())
                .unwrap();
            let pooled = pool(&mut recording);
            let start = recording.clock().now().0;
            let began = Instant::now();
            for i in 0..iters as usize {
                write_sample(&mut recording, &event, &pooled, start, i);
            }
            recording.flush().unwrap();
            let elapsed = began.elapsed();
            black_box(recording.finish().unwrap());
            elapsed
        })
    });
    // Stacks never seen before, as on recursive code whose paths do not
    // repeat: each is encoded, looked up, added and marked. 10,000 into a
    // fresh recording each time, so that every measurement sees the same
    // pool sizes.
    const NEW_STACKS: usize = 10_000;
    group.throughput(Throughput::Elements(NEW_STACKS as u64));
    group.bench_function("new_stack_traces", |b| {
        b.iter_batched(
            || {
                let mut recording = Recording::to_writer(Discard(0), Options::default());
                let methods = pool(&mut recording).methods;
                let stacks: Vec<StackTrace> = (0..NEW_STACKS)
                    .map(|i| StackTrace {
                        truncated: false,
                        frames: (0..32)
                            .map(|d| StackFrame {
                                method: methods[(i >> (d % 16)) % 500],
                                line_number: (i + d) as i32,
                                bytecode_index: 0,
                                frame_type: FrameType::JitCompiled,
                            })
                            .collect(),
                    })
                    .collect();
                (recording, stacks)
            },
            |(mut recording, stacks)| {
                for stack in stacks {
                    black_box(recording.stack_trace(stack));
                }
                recording
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Prints the bytes one event takes in the file: over the first 10^6 events
/// (which carry the constants), and over the next 10^6 (events alone). The
/// timestamps are `offset_ns` into the recording: their varints grow from 5
/// bytes in the first seconds to 6 after about 35 seconds and stay so for 9
/// hours.
fn report_size(offset_ns: i64) {
    let options = Options {
        max_chunk_size: u64::MAX,
        ..Options::default()
    };
    let mut recording = Recording::to_writer(Discard(0), options);
    let event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let pooled = pool(&mut recording);
    recording.flush().unwrap();
    let start = recording.clock().now().0 + offset_ns;
    let n = 1_000_000;
    let mut sizes = Vec::new();
    for batch in 0..2 {
        let before = recording.bytes_written();
        for i in batch * n..(batch + 1) * n {
            write_sample(&mut recording, &event, &pooled, start, i);
        }
        recording.flush().unwrap();
        sizes.push((recording.bytes_written() - before) as f64 / n as f64);
    }
    println!(
        "jfr_writer/object_allocation_sample at {} s: {:.2} bytes per event with constants, {:.2} events alone",
        offset_ns / 1_000_000_000,
        sizes[0],
        sizes[1]
    );
}

fn main() {
    report_size(2_000_000_000);
    report_size(600_000_000_000);
    let mut criterion = Criterion::default().configure_from_args();
    encode(&mut criterion);
    criterion.final_summary();
}
