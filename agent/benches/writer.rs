//! The agent's writer thread per sample: a record from the ring turned into
//! a `jdk.ObjectAllocationSample`, its object tracked, and after the
//! collections that find it dead its `heapsampler.ObjectLifetime`, with
//! flushes as the agent makes them. The VM is a fake that answers at once,
//! so what is measured is the writer's own work.
//!
//! Three stack mixes:
//! - `repeated_stacks`: 1,000 stacks of depth 32 over and over, as in most
//!   applications; every stack after the first round is a cache hit.
//! - `recursive_stacks`: stacks of a recursive tree builder, as in the
//!   binary-trees workload: each level calls itself from one of two sites,
//!   so most stacks are new (the case that costs the writer most).
//! - `mutual_recursion`: stacks cut at 64 frames of eight methods calling
//!   each other, as in the deep-recursion workload: most are new too, each
//!   naming a few methods many times.
//!
//! Run with `cargo bench -p heapsampler-agent --bench writer`; results in
//! BENCHMARKS.md.

use heapsampler_test_support as support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use heapsampler_agent::environment::EnvironmentVm;
use heapsampler_agent::heap::HeapVm;
use heapsampler_agent::record::{RawFrame, SampleHeader, SampleRecord, Tracking};
use heapsampler_agent::roots::RootsVm;
use heapsampler_agent::threads::ThreadsVm;
use heapsampler_agent::writer::{
    ClassInfo, GcRecord, Loader, MethodInfo, RecordingSettings, Statistics, ThreadInfo, Vm, Writer,
};
use heapsampler_core::options::LiveMax;
use heapsampler_core::ring::RingStats;
use jfr_writer::{Options, Recording};
use support::Discard;

/// A VM that knows every method and class at once; nine objects in ten
/// are found collected at the first collection after their sample.
struct InstantVm;

/// The application's class loader, which defines the fake classes, as a
/// real JVM describes it.
fn app_loader() -> Loader {
    Loader::Object {
        class: Some(Box::new(ClassInfo {
            signature: "Ljdk/internal/loader/ClassLoaders$AppClassLoader;".to_owned(),
            hidden: false,
            loader: Loader::Boot,
        })),
        name: Some("app".to_owned()),
    }
}

impl Vm for InstantVm {
    fn method(&mut self, method: u64) -> Option<MethodInfo> {
        Some(MethodInfo {
            class: ClassInfo {
                signature: format!("Lcom/example/Type{};", method % 97),
                hidden: false,
                loader: app_loader(),
            },
            name: format!("method{method}"),
            descriptor: "(I)Ljava/lang/Object;".to_owned(),
            modifiers: 1,
            lines: (0..20).map(|n| (n * 4, 100 + n as i32)).collect(),
            native: false,
        })
    }
    fn class(&mut self, class: u64) -> Option<ClassInfo> {
        Some(ClassInfo {
            signature: format!("Lcom/example/Allocated{class};"),
            hidden: false,
            loader: app_loader(),
        })
    }
    fn thread(&mut self, thread: u64) -> ThreadInfo {
        ThreadInfo {
            java_name: format!("worker-{thread}"),
            java_thread_id: thread as i64,
            os_thread_id: 1000 + thread as i64,
        }
    }
    fn is_collected(&mut self, handle: u64) -> bool {
        !handle.is_multiple_of(10)
    }
    fn release(&mut self, _handle: u64) {}
}

impl HeapVm for InstantVm {}

impl RootsVm for InstantVm {}

impl EnvironmentVm for InstantVm {}

impl ThreadsVm for InstantVm {}

impl heapsampler_agent::writer::CanaryVm for InstantVm {}

/// xorshift64: the same stacks on every run, no dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The frames of the `i`th sample of a mix, top first.
type StackMaker = fn(&mut Random, usize, &mut Vec<RawFrame>);

/// One of 1,000 fixed stacks of depth 32.
fn repeated_stack(_: &mut Random, i: usize, frames: &mut Vec<RawFrame>) {
    let n = (i * 7) % 1000;
    frames.extend((0..32).map(|d| RawFrame {
        method: ((n * 31 + d * 7) % 500) as u64 + 1,
        location: (d as i64 * 4) % 80,
    }));
}

/// A tree builder's stack: the constructor, then 8 to 40 levels of the
/// builder each called from its left or right site, then the entry point.
fn recursive_stack(random: &mut Random, _: usize, frames: &mut Vec<RawFrame>) {
    let bits = random.next();
    let depth = 8 + (bits % 33) as usize;
    frames.push(RawFrame {
        method: 1,
        location: 5,
    });
    frames.extend((0..depth).map(|level| RawFrame {
        method: 2,
        location: if bits >> (8 + level) & 1 == 0 { 12 } else { 20 },
    }));
    frames.push(RawFrame {
        method: 3,
        location: 40,
    });
}

/// A stack cut at the depth limit, 64 frames, of recursion through eight
/// methods that call each other in turn, each from one of two sites, as in
/// the deep-recursion workload: most stacks are new, each naming eight
/// methods over and over.
fn mutual_recursion(random: &mut Random, _: usize, frames: &mut Vec<RawFrame>) {
    let bits = random.next();
    frames.extend((0..64).map(|level| RawFrame {
        method: 10 + level % 8,
        location: if bits >> level & 1 == 0 { 7 } else { 15 },
    }));
}

const SAMPLES_PER_GC: usize = 500;
const SAMPLES_PER_FLUSH: usize = 16_000;

/// Writes `samples` samples of a mix; returns the time the writer took.
fn write_samples(samples: u64, make_stack: StackMaker) -> Duration {
    let options = heapsampler_core::options::Options {
        file: "bench.jfr".into(),
        live_max: LiveMax::Unlimited,
        ..heapsampler_core::options::Options::defaults(0)
    };
    let settings = RecordingSettings::of(&options);
    let recording = Recording::to_writer(Discard(0), Options::default());
    let mut writer = Writer::new(recording, &settings).unwrap();
    let mut vm = InstantVm;
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    // Records are made before the clock starts, as the ring hands them over.
    let start = writer.clock().now().0;
    let records: Vec<Vec<u8>> = (0..samples as usize)
        .map(|i| {
            let mut frames = Vec::with_capacity(64);
            make_stack(&mut random, i, &mut frames);
            SampleRecord {
                header: SampleHeader {
                    thread: (i % 8) as u64 + 1,
                    ticks: start + i as i64 * 1000,
                    size: 24 + (i % 200) as u64 * 8,
                    interval: 512 * 1024,
                    class: (i % 40) as u64 + 1,
                    liveness_handle: i as u64 + 1,
                    tracking: Tracking::Drawn(1.0),
                    truncated: false,
                },
                frames,
            }
            .encode()
        })
        .collect();
    let began = Instant::now();
    let mut gcs = 0;
    for (i, record) in records.iter().enumerate() {
        writer.sample(&mut vm, record).unwrap();
        if (i + 1).is_multiple_of(SAMPLES_PER_GC) {
            gcs += 1;
            let at = start + i as i64 * 1000;
            let gc = GcRecord {
                id: gcs,
                start: at,
                end: at + 500,
            };
            writer.garbage_collection(&mut vm, gc).unwrap();
        }
        if (i + 1).is_multiple_of(SAMPLES_PER_FLUSH) {
            let statistics = Statistics {
                samples: i as u64 + 1,
                lost_samples: 0,
            };
            writer
                .flush(&mut vm, statistics, RingStats::default())
                .unwrap();
        }
    }
    let statistics = Statistics {
        samples,
        lost_samples: 0,
    };
    black_box(
        writer
            .finish(&mut vm, statistics, RingStats::default(), false)
            .unwrap(),
    );
    began.elapsed()
}

fn writer(c: &mut Criterion) {
    let mut group = c.benchmark_group("agent_writer");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(10));
    let mixes: [(&str, StackMaker); 3] = [
        ("repeated_stacks", repeated_stack),
        ("recursive_stacks", recursive_stack),
        ("mutual_recursion", mutual_recursion),
    ];
    for (name, make_stack) in mixes {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| write_samples(iters, make_stack))
        });
    }
    group.finish();
}

fn main() {
    // `--profile-once MIX N`: one pass of N samples, for callgrind.
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--profile-once") {
        let make_stack: StackMaker = match args.get(at + 1).map(String::as_str) {
            Some("repeated_stacks") => repeated_stack,
            Some("mutual_recursion") => mutual_recursion,
            _ => recursive_stack,
        };
        let samples = args
            .get(at + 2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(100_000);
        let elapsed = write_samples(samples, make_stack);
        println!("{samples} samples in {elapsed:?}");
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    writer(&mut criterion);
    criterion.final_summary();
}
