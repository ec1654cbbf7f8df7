//! The agent's writer with a fake VM: every sample becomes one
//! `jdk.ObjectAllocationSample` and exactly one `heapsampler.ObjectLifetime`,
//! methods resolve to names and lines, and the JDK's parser reads it all.

use heapsampler_test_support as support;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use heapsampler_agent::environment::{EnvironmentVm, VmFlag};
use heapsampler_agent::heap::{
    ClassLoading, Collectors, GcInfo, HeapUsage, HeapVm, JvmInfo, Metaspace, NotifiedCollection,
    SpaceUsage, WholeHeapCollection,
};
use heapsampler_agent::record::{RawFrame, SampleHeader, SampleRecord, Tracking};
use heapsampler_agent::roots::{GcRoot, Link, Reference, RootLimits, RootPath, RootsVm};
use heapsampler_agent::threads::{ThreadAllocation, ThreadsVm, Unmeasured};
use heapsampler_agent::writer::{
    CanaryVm, ClassInfo, GcRecord, Loader, MethodInfo, RecordingSettings, Statistics, ThreadInfo,
    Vm, Writer,
};
use heapsampler_core::options::{LiveMax, Options as AgentOptions};
use heapsampler_core::ring::RingStats;
use heapsampler_core::sampling::bytes_weight;
use jfr_writer::{Options, PoolSizes, Recording};

#[derive(Default)]
struct FakeVm {
    methods: HashMap<u64, MethodInfo>,
    classes: HashMap<u64, ClassInfo>,
    collected: HashSet<u64>,
    released: Vec<u64>,
    lookups: usize,
    array_lengths: HashMap<u64, i32>,
    paths: HashMap<u64, RootPath>,
    walks: Vec<Vec<u64>>,
    /// The management interface, if the fake JVM has one.
    management: Option<FakeManagement>,
    /// How many times the writer had the VM forget what is gone.
    forget_gone_calls: usize,
    /// The threads' allocated bytes the JVM gives; `None`: it cannot.
    thread_allocations: Option<Vec<ThreadAllocation>>,
    /// What the writer told of missing thread figures.
    unmeasured: Vec<Unmeasured>,
    /// Canaries, if the fake JVM makes them.
    canaries: Option<FakeCanaries>,
}

/// A fake JVM's canaries: the weak ones with the second each was made or
/// let go, and the strong ones. Cleared as `FakeVm::collected` says.
#[derive(Default)]
struct FakeCanaries {
    next: u64,
    weak: HashMap<u64, i64>,
    strong: HashSet<u64>,
    /// The second the writer is at.
    now: i64,
}

impl FakeCanaries {
    fn make(&mut self, strong: bool) -> u64 {
        self.next += 1;
        let handle = (1 << 40) + self.next;
        if strong {
            self.strong.insert(handle);
        } else {
            self.weak.insert(handle, self.now);
        }
        handle
    }
}

impl CanaryVm for FakeVm {
    fn new_canary(&mut self, strong: bool) -> Option<u64> {
        Some(self.canaries.as_mut()?.make(strong))
    }
    fn weaken(&mut self, strong: u64) -> Option<u64> {
        let canaries = self.canaries.as_mut()?;
        assert!(canaries.strong.remove(&strong), "a strong canary");
        Some(canaries.make(false))
    }
    fn canary_cleared(&mut self, weak: u64) -> bool {
        assert!(self.canaries.as_ref().unwrap().weak.contains_key(&weak));
        self.collected.contains(&weak)
    }
    fn release_canary(&mut self, handle: u64, strong: bool) {
        let canaries = self.canaries.as_mut().unwrap();
        let held = if strong {
            canaries.strong.remove(&handle)
        } else {
            canaries.weak.remove(&handle).is_some()
        };
        assert!(held, "a canary released once");
    }
}

/// What a fake JVM's management interface answers.
struct FakeManagement {
    jvm: JvmInfo,
    collectors: Collectors,
    /// Each collector's last collection before the notifications began.
    last: Vec<Option<GcInfo>>,
    /// Notified collections not drained yet.
    notified: Vec<NotifiedCollection>,
    /// The JVM's flags: (name, value, origin).
    flags: Vec<(&'static str, &'static str, &'static str)>,
    classes: ClassLoading,
}

impl Vm for FakeVm {
    fn method(&mut self, method: u64) -> Option<MethodInfo> {
        self.lookups += 1;
        self.methods.get(&method).cloned()
    }
    fn class(&mut self, class: u64) -> Option<ClassInfo> {
        self.lookups += 1;
        self.classes.get(&class).cloned()
    }
    fn thread(&mut self, thread: u64) -> ThreadInfo {
        self.lookups += 1;
        ThreadInfo {
            java_name: if thread == 1 {
                "main".into()
            } else {
                format!("worker-{thread}")
            },
            java_thread_id: thread as i64 * 10,
            os_thread_id: 500 + thread as i64,
        }
    }
    fn is_collected(&mut self, handle: u64) -> bool {
        self.collected.contains(&handle)
    }
    fn forget_gone(&mut self) {
        self.forget_gone_calls += 1;
    }
    fn release(&mut self, handle: u64) {
        self.released.push(handle);
    }
    fn array_length(&mut self, handle: u64) -> Option<i32> {
        self.array_lengths.get(&handle).copied()
    }
}

impl EnvironmentVm for FakeVm {}

impl ThreadsVm for FakeVm {
    fn thread_allocations(&mut self) -> Result<Vec<ThreadAllocation>, Unmeasured> {
        self.thread_allocations
            .clone()
            .ok_or(Unmeasured::Unsupported)
    }
    fn unmeasured(&mut self, why: Unmeasured) {
        self.unmeasured.push(why);
    }
}

impl RootsVm for FakeVm {
    fn paths_to_roots(&mut self, handles: &[u64], _: &RootLimits) -> Vec<Option<RootPath>> {
        self.walks.push(handles.to_vec());
        handles.iter().map(|h| self.paths.get(h).cloned()).collect()
    }
}

impl HeapVm for FakeVm {
    fn jvm_info(&mut self) -> Option<JvmInfo> {
        Some(self.management.as_ref()?.jvm.clone())
    }
    fn collectors(&mut self) -> Option<Collectors> {
        Some(self.management.as_ref()?.collectors.clone())
    }
    fn last_collection(&mut self, collector: usize) -> Option<GcInfo> {
        self.management.as_ref()?.last[collector]
    }
    fn notified_collections(&mut self) -> Vec<NotifiedCollection> {
        self.management
            .as_mut()
            .map_or_else(Vec::new, |m| std::mem::take(&mut m.notified))
    }
    fn vm_flag(&mut self, name: &std::ffi::CStr) -> Option<VmFlag> {
        let name = name.to_str().ok()?;
        let &(_, value, origin) = self
            .management
            .as_ref()?
            .flags
            .iter()
            .find(|f| f.0 == name)?;
        Some(VmFlag {
            value: value.into(),
            origin: origin.into(),
        })
    }
    fn class_loading(&mut self) -> Option<ClassLoading> {
        Some(self.management.as_ref()?.classes)
    }
}

/// A class as the fake VM describes it: the bootstrap loader's classes are
/// those of the JDK (`java/...`) and arrays, the others the application
/// loader's, as in a real JVM; hidden ones are named as the JVM names
/// hidden classes (`Outer$$Lambda$14.0x...`).
fn class(signature: &str) -> ClassInfo {
    let boot = signature.starts_with("Ljava/") || signature.starts_with('[');
    ClassInfo {
        signature: signature.into(),
        hidden: signature.contains('.'),
        loader: if boot { Loader::Boot } else { app_loader() },
    }
}

/// The application's class loader, as a JDK 9 or later JVM describes it.
fn app_loader() -> Loader {
    Loader::Object {
        class: Some(Box::new(ClassInfo {
            signature: "Ljdk/internal/loader/ClassLoaders$AppClassLoader;".into(),
            hidden: false,
            loader: Loader::Boot,
        })),
        name: Some("app".into()),
    }
}

fn method(
    class_signature: &str,
    name: &str,
    descriptor: &str,
    lines: &[(i64, i32)],
    native: bool,
) -> MethodInfo {
    MethodInfo {
        class: class(class_signature),
        name: name.into(),
        descriptor: descriptor.into(),
        modifiers: 1,
        lines: lines.to_vec(),
        native,
    }
}

fn record(
    thread: u64,
    ticks: i64,
    class: u64,
    size: u64,
    handle: u64,
    truncated: bool,
    frames: &[(u64, i64)],
) -> Vec<u8> {
    SampleRecord {
        header: SampleHeader {
            thread,
            ticks,
            size,
            interval: 512 * 1024,
            class,
            liveness_handle: handle,
            tracking: if handle == 0 {
                Tracking::Excluded
            } else {
                Tracking::Drawn(1.0)
            },
            truncated,
        },
        frames: frames
            .iter()
            .map(|&(method, location)| RawFrame { method, location })
            .collect(),
    }
    .encode()
}

/// The settings of a recording into `path` at 512k, 64 frames, liveness
/// on for every size, no rate limit: what a test changes is named where it
/// uses them.
fn settings(path: &Path) -> RecordingSettings {
    let options = AgentOptions {
        file: path.to_owned(),
        live_max: LiveMax::Unlimited,
        ..AgentOptions::defaults(0)
    };
    RecordingSettings::of(&options)
}

/// A writer into a new recording at `path`.
fn new_writer(path: &Path, settings: &RecordingSettings) -> Writer<jfr_writer::FileSink> {
    Writer::new(
        Recording::create(path, Options::default()).unwrap(),
        settings,
    )
    .unwrap()
}

/// Ends `writer`'s recording with `samples` taken and none lost, and
/// finishes its file.
fn finish(writer: Writer<jfr_writer::FileSink>, vm: &mut FakeVm, samples: u64) {
    let statistics = Statistics {
        samples,
        lost_samples: 0,
    };
    writer
        .finish(vm, statistics, RingStats::default(), false)
        .unwrap()
        .finish()
        .unwrap();
}

#[test]
fn samples_lifetimes_and_collections_as_the_jdk_reads_them() {
    let dir = support::temp_dir("agent_writer");
    let path = dir.join("writer.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("Ljava/lang/String;", "<init>", "()V", &[], false));
    vm.methods.insert(
        2,
        method(
            "LMain;",
            "allocate",
            "(I)V",
            &[(9, 12), (0, 10), (5, 11)],
            false,
        ),
    );
    vm.methods
        .insert(3, method("LMain;", "nativeAlloc", "()V", &[], true));
    vm.classes.insert(100, class("[I"));
    vm.classes.insert(101, class("Ljava/lang/String;"));

    let settings = RecordingSettings {
        live_max: LiveMax::Below(1 << 20),
        rate: Some(200.0),
        ..settings(&path)
    };
    let mut writer = new_writer(&path, &settings);
    let t0 = writer.clock().now().0;
    let samples = [
        record(1, t0 + 10, 100, 24, 1001, false, &[(2, 6), (1, 0)]),
        record(2, t0 + 20, 101, 40, 1002, true, &[(3, -1)]),
        // Method 4 and class 102 are gone (their class was unloaded).
        record(1, t0 + 30, 102, 16, 1003, false, &[(4, 3), (2, 0)]),
        // The first sample's stack again, untracked: at the live_max size.
        record(2, t0 + 40, 100, 1 << 20, 0, false, &[(2, 6), (1, 0)]),
    ];
    // One batch, as the ring hands them over, with a malformed record
    // among them: skipped and counted, the others written in order.
    let (before, after) = samples.split_at(2);
    let batch = before
        .iter()
        .map(Vec::as_slice)
        .chain([b"garbage".as_slice()])
        .chain(after.iter().map(Vec::as_slice));
    writer.samples(&mut vm, batch).unwrap();
    assert_eq!(writer.malformed_records(), 1);
    let lookups = vm.lookups;
    writer.sample(&mut vm, &samples[3]).unwrap();
    assert_eq!(
        vm.lookups, lookups,
        "a known stack, class and thread are not looked up again"
    );

    vm.collected.insert(1001);
    writer
        .garbage_collection(
            &mut vm,
            GcRecord {
                id: 1,
                start: t0 + 50,
                end: t0 + 60,
            },
        )
        .unwrap();
    vm.collected.insert(1003);
    writer
        .garbage_collection(
            &mut vm,
            GcRecord {
                id: 2,
                start: t0 + 70,
                end: t0 + 90,
            },
        )
        .unwrap();
    assert_eq!(writer.tracked_objects(), 1);
    finish(writer, &mut vm, 5);
    assert_eq!(
        vm.released,
        vec![1001, 1003, 1002],
        "every handle released once"
    );

    let lines = support::dump(&path);
    let of = |t: &str| {
        lines
            .iter()
            .filter(|l| l.starts_with(t))
            .cloned()
            .collect::<Vec<_>>()
    };
    let epoch = |line: &str| -> i64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix("startTime="))
            .unwrap()
            .parse()
            .unwrap()
    };
    let allocations = of("jdk.ObjectAllocationSample ");
    assert_eq!(allocations.len(), 5);
    let base = epoch(&allocations[0]) - 10;
    let main = "thread(\"main\",10,\"main\",501,null)";
    let worker = "thread(\"worker-2\",20,\"worker-2\",502,null)";
    let stack1 = "stack(false:Main.allocate(I)V:11:6:Unknown:1:false;java.lang.String.<init>()V:-1:0:Unknown:1:false)";
    let weight = |size: u64| bytes_weight(size, 512 * 1024).round() as i64;
    assert_eq!(
        allocations[..4],
        [
            format!(
                "jdk.ObjectAllocationSample startTime={} eventThread={main} stackTrace={stack1} objectClass=class([I,0,bootstrap) weight={}",
                base + 10,
                weight(24)
            ),
            format!(
                "jdk.ObjectAllocationSample startTime={} eventThread={worker} stackTrace=stack(true:Main.nativeAlloc()V:-1:-1:Native:1:false) objectClass=class(java.lang.String,0,bootstrap) weight={}",
                base + 20,
                weight(40)
            ),
            format!(
                "jdk.ObjectAllocationSample startTime={} eventThread={main} stackTrace=stack(false:unknown.UnloadedClass.unknownMethod()V:-1:3:Unknown:0:false;Main.allocate(I)V:10:0:Unknown:1:false) objectClass=class(unknown.UnloadedClass,0,null) weight={}",
                base + 30,
                weight(16)
            ),
            format!(
                "jdk.ObjectAllocationSample startTime={} eventThread={worker} stackTrace={stack1} objectClass=class([I,0,bootstrap) weight={}",
                base + 40,
                weight(1 << 20)
            ),
        ]
    );
    assert_eq!(
        of("heapsampler.GarbageCollection "),
        [
            format!(
                "heapsampler.GarbageCollection startTime={} duration=10 gcId=1",
                base + 50
            ),
            format!(
                "heapsampler.GarbageCollection startTime={} duration=20 gcId=2",
                base + 70
            ),
        ]
    );
    // Array classes are pooled as HotSpot pools them ("[I"); `jfr print`
    // shows them the Java way.
    assert!(
        support::print_text(&path, "jdk.ObjectAllocationSample").contains("objectClass = int[]")
    );
    let all_lifetimes = of("heapsampler.ObjectLifetime ");
    assert_eq!(all_lifetimes.len(), 5, "one per sample: {all_lifetimes:#?}");
    let (lifetimes, untracked): (Vec<String>, Vec<String>) = all_lifetimes
        .into_iter()
        .partition(|l| l.ends_with(" tracked=true trackingProbability=double:3ff0000000000000"));
    assert_eq!(untracked.len(), 2, "{untracked:#?}");
    for line in &untracked {
        assert!(
            line.contains(&format!("startTime={} duration=0 ", base + 40))
                && line.contains(&format!("eventThread={worker}"))
                && line.ends_with(&format!(
                    "objectSize=1048576 weight={} live=false gcsSurvived=0 freedByGcId=0 tracked=false trackingProbability=double:0",
                    weight(1 << 20)
                )),
            "{line}"
        );
    }
    assert!(
        lifetimes[0].ends_with(&format!(
            "objectSize=24 weight={} live=false gcsSurvived=0 freedByGcId=1 tracked=true trackingProbability=double:3ff0000000000000",
            weight(24)
        )),
        "{}",
        lifetimes[0]
    );
    assert!(
        lifetimes[0].contains(&format!("startTime={} duration=50 ", base + 10)),
        "{}",
        lifetimes[0]
    );
    assert!(
        lifetimes[1].ends_with(
            "objectSize=16 weight=524296 live=false gcsSurvived=1 freedByGcId=2 tracked=true trackingProbability=double:3ff0000000000000"
        ),
        "{}",
        lifetimes[1]
    );
    assert!(
        lifetimes[2].contains(&format!("eventThread={worker}"))
            && lifetimes[2].ends_with(
                "live=true gcsSurvived=2 freedByGcId=0 tracked=true trackingProbability=double:3ff0000000000000"
            ),
        "{}",
        lifetimes[2]
    );
    // The one object live at the end is an old object, allocated by its
    // sample's thread and stack.
    let old_objects = of("jdk.OldObjectSample ");
    assert_eq!(old_objects.len(), 1, "{old_objects:#?}");
    assert!(
        old_objects[0].contains(&format!(
            "eventThread={worker} stackTrace=stack(true:Main.nativeAlloc()V:-1:-1:Native:1:false) \
             allocationTime="
        )) && old_objects[0].contains(" objectSize=40 ")
            && old_objects[0].contains(
                " object={address=1002,type=class(java.lang.String,0,bootstrap),description=null,\
                 referrer=null} arrayElements=-2147483648 root=null"
            ),
        "{}",
        old_objects[0]
    );
    let recordings = of("jdk.ActiveRecording ");
    assert_eq!(recordings.len(), 1);
    assert!(
        recordings[0].contains(&format!(
            "name=\"heapsampler\" destination={}",
            support::quote(Some(&path.display().to_string()))
        )),
        "{}",
        recordings[0]
    );
    assert!(
        recordings[0].contains(" flushInterval=1000 "),
        "{}",
        recordings[0]
    );
    let settings: Vec<String> = of("jdk.ActiveSetting ")
        .iter()
        .map(|l| {
            format!(
                "{}={}",
                l.split(" name=").nth(1).unwrap().split(' ').next().unwrap(),
                l.split(" value=").nth(1).unwrap()
            )
        })
        .collect();
    for expected in [
        "\"enabled\"=\"true\"",
        "\"throttle\"=\"200/s\"",
        "\"interval\"=\"524288 bytes\"",
        "\"depth\"=\"64\"",
        "\"liveMax\"=\"1048576 bytes\"",
    ] {
        assert!(
            settings.contains(&expected.to_owned()),
            "{expected} not in {settings:?}"
        );
    }
    // The settings name their event types by id, as the JDK's do.
    let active_settings = of("jdk.ActiveSetting ");
    let ids: std::collections::HashSet<&str> = active_settings
        .iter()
        .map(|l| l.split(" id=").nth(1).unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(
        ids.len(),
        3 + 10 + 1,
        "ObjectAllocationSample, ObjectLifetime, GCPhasePauseLevel1, the 10 environment \
         events and ThreadAllocationStatistics: {ids:?}"
    );
    let statistics = of("heapsampler.AgentStatistics ");
    assert_eq!(statistics.len(), 1);
    assert!(
        statistics[0].contains(" samples=5 ")
            && statistics[0].contains(
                " lostSamples=0 untrackedObjects=2 drawnSamples=3 undrawnSamples=0 \
                 cappedSamples=0 oldObjectCap=10000 oldObjectsLeftOut=0 "
            ),
        "{}",
        statistics[0]
    );
}

/// A `trackingProbability` as the JDK's parser prints it
/// (`double:3fd0000000000000`, the bits).
fn probability(line: &str) -> f64 {
    let bits = support::dump_value(line, "trackingProbability");
    let bits = bits.strip_prefix("double:").unwrap();
    f64::from_bits(u64::from_str_radix(bits, 16).unwrap())
}

/// Each sample's lifetime carries the probability its tracking was drawn
/// with: a tracked one (freed or live at the end) and one the draw left
/// out, theirs; one past the cap, at the live_max size, or drawn without a
/// handle (the JVM could make none), 0, their liveness unknown. The
/// statistics count each kind.
#[test]
fn each_lifetime_carries_its_tracking_probability_and_the_statistics_count_each_kind() {
    let dir = support::temp_dir("agent_writer_tracking");
    let path = dir.join("tracking.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LMain;", "allocate", "(I)V", &[(0, 10)], false));
    vm.classes.insert(100, class("[I"));
    let mut writer = new_writer(&path, &settings(&path));
    let t0 = writer.clock().now().0;
    // (size, handle, tracking): the size tells the samples apart.
    let samples = [
        (16, 1001, Tracking::Drawn(0.25)),
        (24, 1002, Tracking::Drawn(0.25)),
        (32, 0, Tracking::NotDrawn(0.25)),
        (40, 0, Tracking::NotDrawn(0.5)),
        (48, 0, Tracking::Capped),
        (56, 0, Tracking::Excluded),
        (64, 0, Tracking::Drawn(0.5)),
    ];
    for (at, &(size, handle, tracking)) in samples.iter().enumerate() {
        let bytes = SampleRecord {
            header: SampleHeader {
                thread: 1,
                ticks: t0 + at as i64,
                size,
                interval: 512 * 1024,
                class: 100,
                liveness_handle: handle,
                tracking,
                truncated: false,
            },
            frames: vec![RawFrame {
                method: 1,
                location: 0,
            }],
        }
        .encode();
        writer.sample(&mut vm, &bytes).unwrap();
    }
    vm.collected.insert(1001);
    writer
        .garbage_collection(
            &mut vm,
            GcRecord {
                id: 1,
                start: t0 + 10,
                end: t0 + 20,
            },
        )
        .unwrap();
    finish(writer, &mut vm, samples.len() as u64);

    let lines = support::dump(&path);
    let mut lifetimes: Vec<(u64, String, String, f64)> = lines
        .iter()
        .filter(|l| l.starts_with("heapsampler.ObjectLifetime "))
        .map(|l| {
            (
                support::dump_value(l, "objectSize").parse().unwrap(),
                support::dump_value(l, "tracked"),
                support::dump_value(l, "live"),
                probability(l),
            )
        })
        .collect();
    lifetimes.sort_by_key(|l| l.0);
    let expected = [
        (16, "true", "false", 0.25),
        (24, "true", "true", 0.25),
        (32, "false", "false", 0.25),
        (40, "false", "false", 0.5),
        (48, "false", "false", 0.0),
        (56, "false", "false", 0.0),
        (64, "false", "false", 0.0),
    ]
    .map(|(size, tracked, live, q)| (size, tracked.to_owned(), live.to_owned(), q));
    assert_eq!(lifetimes, expected);
    let statistics = lines
        .iter()
        .rfind(|l| l.starts_with("heapsampler.AgentStatistics "))
        .unwrap();
    for (name, count) in [
        ("drawnSamples", "2"),
        ("undrawnSamples", "2"),
        ("cappedSamples", "1"),
        ("untrackedObjects", "3"),
    ] {
        assert_eq!(support::dump_value(statistics, name), count, "{statistics}");
    }
}

#[test]
fn a_frame_whose_method_was_dropped_is_resolved_again() {
    // The writer keeps the frames it resolved lately. A chunk's end that
    // drops a method must drop its frames too: a stack made of them later
    // would name a method no chunk defines any more.
    let dir = support::temp_dir("agent_writer_frames");
    let path = dir.join("frames.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LOld;", "gone", "()V", &[(0, 10)], false));
    vm.methods
        .insert(2, method("LBusy;", "work", "()V", &[(0, 20)], false));
    vm.classes.insert(100, class("LItem;"));
    let options = Options {
        max_chunk_size: 16 * 1024,
        ..Options::default()
    };
    let mut writer =
        Writer::new(Recording::create(&path, options).unwrap(), &settings(&path)).unwrap();
    let t0 = writer.clock().now().0;
    const SAMPLES: u64 = 1000;
    let mut chunk_ends = 0;
    for i in 0..SAMPLES {
        // Method 1's one frame first and last; method 2's between, at a
        // few locations, which leave method 1's frame where the writer
        // keeps it.
        let last = i == SAMPLES - 1;
        let frames = if i == 0 || last {
            [(1, 5)]
        } else {
            [(2, (i % 3) as i64)]
        };
        let lookups = vm.lookups;
        let bytes = record(1, t0 + i as i64, 100, 24, 0, false, &frames);
        writer.sample(&mut vm, &bytes).unwrap();
        if last {
            assert_eq!(vm.lookups, lookups + 1, "method 1 asked of the VM again");
        }
        if (i + 1) % 50 == 0 {
            let forgotten = vm.forget_gone_calls;
            let statistics = Statistics {
                samples: i + 1,
                lost_samples: 0,
            };
            writer
                .flush(&mut vm, statistics, RingStats::default())
                .unwrap();
            chunk_ends += vm.forget_gone_calls - forgotten;
        }
    }
    assert!(chunk_ends >= 3, "16 KiB chunks: {chunk_ends} chunk ends");
    finish(writer, &mut vm, SAMPLES);
    let stacks = sample_stacks(&path);
    assert_eq!(stacks.len(), SAMPLES as usize);
    let gone = "stackTrace=stack(false:Old.gone()V:10:5:Unknown:1:false)";
    assert_eq!([&stacks[0], &stacks[SAMPLES as usize - 1]], [gone, gone]);
}

#[test]
fn what_recent_chunks_did_not_use_is_dropped_but_not_what_tracked_objects_hold() {
    // A recording that keeps seeing new stacks (recursive code does), new
    // threads (virtual threads) and new classes must not keep them all: at
    // each chunk's end the writer drops what recent chunks did not use,
    // but not what a tracked object holds. Every event must still name its
    // own stack, thread and class as the JDK reads them, and so must the
    // lifetimes written at the end.
    let dir = support::temp_dir("agent_writer_chunks");
    let path = dir.join("chunks.jfr");
    let mut vm = FakeVm::default();
    for m in 1..=50 {
        vm.methods
            .insert(m, method("LDeep;", &format!("level{m}"), "()V", &[], false));
    }
    const CLASSES: u64 = 30;
    for c in 0..CLASSES {
        vm.classes.insert(100 + c, class(&format!("LItem{c};")));
    }
    let settings = settings(&path);
    let options = Options {
        max_chunk_size: 16 * 1024,
        ..Options::default()
    };
    let mut writer = Writer::new(Recording::create(&path, options).unwrap(), &settings).unwrap();
    let t0 = writer.clock().now().0;
    const SAMPLES: u64 = 3000;
    // A thread and a class for every 100 samples, never seen again.
    let thread_of = |i: u64| 2 + i / 100;
    let class_of = |i: u64| 100 + (i / 100) % CLASSES;
    let stack_of = |i: u64| {
        format!(
            "stackTrace=stack(false:Deep.level{}()V:-1:{i}:Unknown:1:false;Deep.level2()V:-1:0:Unknown:1:false)",
            1 + i % 50
        )
    };
    let mut most_held = PoolSizes::default();
    let mut sizes_after_drops = Vec::new();
    for i in 0..SAMPLES {
        // Every 100th object stays live to the end; the others are not
        // tracked, so their lifetimes are written at once.
        let handle = if i % 100 == 0 { 10_000 + i } else { 0 };
        let bytes = record(
            thread_of(i),
            t0 + i as i64,
            class_of(i),
            24,
            handle,
            false,
            &[(1 + i % 50, i as i64), (2, 0)],
        );
        writer.sample(&mut vm, &bytes).unwrap();
        let held = writer.pool_sizes();
        most_held.stack_traces = most_held.stack_traces.max(held.stack_traces);
        most_held.threads = most_held.threads.max(held.threads);
        most_held.classes = most_held.classes.max(held.classes);
        if (i + 1) % 50 == 0 {
            let statistics = Statistics {
                samples: i + 1,
                lost_samples: 0,
            };
            let forgotten = vm.forget_gone_calls;
            writer
                .flush(&mut vm, statistics, RingStats::default())
                .unwrap();
            if vm.forget_gone_calls > forgotten {
                sizes_after_drops.push(writer.pool_sizes());
            }
        }
    }
    // The recording's 30 threads and classes, and 3000 distinct stacks,
    // are not all held at once: about two chunks' worth, and what the 30
    // tracked objects hold.
    assert!(
        sizes_after_drops.len() >= 5,
        "16 KiB chunks: {} chunk ends",
        sizes_after_drops.len()
    );
    assert!(
        most_held.stack_traces < SAMPLES as usize / 3,
        "{} of {SAMPLES} distinct stacks held at once",
        most_held.stack_traces
    );
    // Pools stop growing: the last drop holds no more than the first,
    // but for the objects tracked since (one per 100 samples, each holding
    // a stack, a thread and a class).
    let first = sizes_after_drops[0];
    let last = *sizes_after_drops.last().unwrap();
    assert!(
        last.stack_traces <= first.stack_traces + 30 && last.threads <= first.threads + 30,
        "first drop kept {first:?}, last {last:?}"
    );
    finish(writer, &mut vm, SAMPLES);

    let lines = support::dump(&path);
    let samples: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("jdk.ObjectAllocationSample "))
        .collect();
    assert_eq!(samples.len(), SAMPLES as usize);
    let thread_text = |i: u64| {
        let key = thread_of(i);
        format!("thread(\"worker-{key}\",{},", key * 10)
    };
    let class_text = |i: u64| format!("objectClass=class(Item{}", class_of(i) - 100);
    for (i, line) in samples.iter().enumerate() {
        let i = i as u64;
        assert!(
            line.contains(&stack_of(i)) && line.contains(&thread_text(i)),
            "sample {i}: {line}"
        );
        assert!(line.contains(&class_text(i)), "sample {i}: {line}");
    }
    let live: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("heapsampler.ObjectLifetime ") && l.contains(" live=true "))
        .collect();
    assert_eq!(live.len(), (SAMPLES / 100) as usize);
    for (n, line) in live.iter().enumerate() {
        let i = n as u64 * 100;
        assert!(
            line.contains(&stack_of(i)) && line.contains(&thread_text(i)),
            "live {n}: {line}"
        );
        assert!(line.contains(&class_text(i)), "live {n}: {line}");
    }
}

/// Writes two samples through a writer with `hidden_frames` as given: one
/// whose stack runs through a lambda proxy (a hidden class), one whose only
/// frame is the proxy's. Returns the file.
fn record_through_a_lambda_proxy(name: &str, hidden_frames: bool) -> std::path::PathBuf {
    let dir = support::temp_dir(name);
    let path = dir.join("lambda.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LMain;", "work", "(J)V", &[(0, 48)], false));
    vm.methods.insert(
        2,
        method(
            "LMain$$Lambda$14.0x0000000800c03000;",
            "run",
            "()V",
            &[],
            false,
        ),
    );
    vm.methods.insert(
        3,
        method("Ljava/lang/Thread;", "run", "()V", &[(0, 840)], false),
    );
    vm.classes.insert(100, class("[B"));
    let settings = RecordingSettings {
        live: false,
        hidden_frames,
        ..settings(&path)
    };
    let mut writer = new_writer(&path, &settings);
    let t0 = writer.clock().now().0;
    for bytes in [
        record(1, t0 + 10, 100, 64, 0, false, &[(1, 3), (2, 1), (3, 4)]),
        record(1, t0 + 20, 100, 64, 0, false, &[(2, 1)]),
    ] {
        writer.sample(&mut vm, &bytes).unwrap();
    }
    finish(writer, &mut vm, 2);
    path
}

/// The stacks of the file's allocation samples, as the JDK reads them.
fn sample_stacks(path: &std::path::Path) -> Vec<String> {
    support::dump(path)
        .iter()
        .filter(|l| l.starts_with("jdk.ObjectAllocationSample "))
        .map(|l| {
            let start = l.find("stackTrace=").expect("a stack trace");
            let end = l.find(" objectClass=").expect("an object class");
            l[start..end].to_owned()
        })
        .collect()
}

#[test]
fn frames_of_hidden_classes_are_left_out_as_the_jdk_leaves_them_out() {
    let path = record_through_a_lambda_proxy("agent_writer_hidden_out", false);
    assert_eq!(
        sample_stacks(&path),
        [
            "stackTrace=stack(false:Main.work(J)V:48:3:Unknown:1:false;java.lang.Thread.run()V:840:4:Unknown:1:false)",
            // Every frame hidden: the sample stays, with an empty stack.
            "stackTrace=stack(false:)",
        ]
    );
}

#[test]
fn frames_of_hidden_classes_kept_on_request_are_marked_hidden() {
    let path = record_through_a_lambda_proxy("agent_writer_hidden_kept", true);
    assert_eq!(
        sample_stacks(&path),
        [
            "stackTrace=stack(false:Main.work(J)V:48:3:Unknown:1:false;Main$$Lambda$14.0x0000000800c03000.run()V:-1:1:Unknown:1:true;java.lang.Thread.run()V:840:4:Unknown:1:false)",
            "stackTrace=stack(false:Main$$Lambda$14.0x0000000800c03000.run()V:-1:1:Unknown:1:true)",
        ]
    );
    // The method's class is marked hidden too.
    let document = support::print_json(&path);
    let events = support::json_events(&document);
    let frames = events
        .iter()
        .find(|e| e["type"] == "jdk.ObjectAllocationSample")
        .expect("a sample")["values"]["stackTrace"]["frames"]
        .as_array()
        .expect("frames");
    let proxy = &frames[1]["method"];
    assert_eq!(proxy["hidden"], true, "{proxy}");
    assert_eq!(proxy["type"]["hidden"], true, "{proxy}");
    assert_eq!(frames[0]["method"]["type"]["hidden"], false);
}

/// A class names its loader as the JDK's own recordings do (`jfr print
/// --json` of one): the bootstrap loader `{"type": null, "name":
/// "bootstrap"}`, the application's named `app`, of its class (itself the
/// bootstrap loader's).
#[test]
fn classes_name_their_loaders_as_the_jdk_does() {
    let path = record_through_a_lambda_proxy("agent_writer_boot_loader", false);
    let document = support::print_json(&path);
    let sample = support::json_events(&document)
        .iter()
        .find(|e| e["type"] == "jdk.ObjectAllocationSample")
        .expect("a sample")
        .clone();
    let values = &sample["values"];
    let bootstrap = serde_json::json!({"type": null, "name": "bootstrap"});
    assert_eq!(values["objectClass"]["classLoader"], bootstrap, "byte[]");
    let frames = values["stackTrace"]["frames"].as_array().expect("frames");
    assert_eq!(
        frames[1]["method"]["type"]["classLoader"], bootstrap,
        "java.lang.Thread"
    );
    let app = &frames[0]["method"]["type"]["classLoader"];
    assert_eq!(
        app["name"], "app",
        "Main, of the application's loader: {app}"
    );
    assert_eq!(
        app["type"]["name"], "jdk/internal/loader/ClassLoaders$AppClassLoader",
        "{app}"
    );
    assert_eq!(app["type"]["classLoader"], bootstrap, "{app}");
}

/// `mode=discard`, the overhead benchmark's diagnostic: the writer drops
/// records unread but for their liveness handles, each released once.
#[test]
fn discarded_samples_release_their_handles_and_write_nothing() {
    let dir = support::temp_dir("agent_writer_discard");
    let path = dir.join("discard.jfr");
    let mut vm = FakeVm::default();
    let mut writer = new_writer(&path, &settings(&path));
    let t0 = writer.clock().now().0;
    let records = [
        record(1, t0 + 10, 100, 4112, 7, false, &[(1, 0)]),
        // Not tracked: no handle to release.
        record(1, t0 + 20, 100, 24, 0, false, &[(1, 0)]),
        record(2, t0 + 30, 100, 4112, 9, true, &[(1, 0), (1, 3)]),
    ];
    writer.discard_samples(&mut vm, records.iter().map(Vec::as_slice));
    finish(writer, &mut vm, 3);

    assert_eq!(vm.released, [7, 9]);
    assert_eq!(vm.lookups, 0, "no method, class or thread resolved");
    let written: Vec<String> = support::dump(&path)
        .into_iter()
        .filter(|l| {
            l.starts_with("jdk.ObjectAllocationSample ")
                || l.starts_with("heapsampler.ObjectLifetime ")
        })
        .collect();
    assert!(written.is_empty(), "{written:#?}");
}

/// The ring may hand the writer an object after the collection that freed
/// it has been swept (sampled just before a System.gc() at exit, say):
/// the recording's end sweeps once more, and finds it freed, not live.
#[test]
fn an_object_freed_before_the_writer_saw_it_is_not_called_live() {
    let dir = support::temp_dir("agent_writer_late");
    let path = dir.join("late.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LMain;", "drop", "()[B", &[], false));
    vm.classes.insert(100, class("[B"));
    let settings = settings(&path);
    let mut writer = new_writer(&path, &settings);
    let t0 = writer.clock().now().0;
    writer
        .sample(&mut vm, &record(1, t0 + 10, 100, 4112, 7, false, &[(1, 0)]))
        .unwrap();
    // The collection is swept before the second sample reaches the
    // writer; by then the collection has cleared its handle.
    vm.collected.insert(8);
    writer
        .garbage_collection(
            &mut vm,
            GcRecord {
                id: 1,
                start: t0 + 30,
                end: t0 + 40,
            },
        )
        .unwrap();
    writer
        .sample(&mut vm, &record(1, t0 + 20, 100, 4112, 8, false, &[(1, 0)]))
        .unwrap();
    finish(writer, &mut vm, 2);

    let lifetimes: Vec<String> = support::dump(&path)
        .into_iter()
        .filter(|l| l.starts_with("heapsampler.ObjectLifetime "))
        .collect();
    let fate = |line: &String| {
        ["live=", "freedByGcId="]
            .map(|name| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(name))
                    .unwrap()
                    .to_owned()
            })
            .join(" ")
    };
    let fates: Vec<String> = lifetimes.iter().map(fate).collect();
    // The freed one first (found at the end's sweep), then the live one.
    assert_eq!(fates, ["false 1", "true 0"], "{lifetimes:#?}");
    assert_eq!(vm.released.len(), 2, "both handles released");
}

#[test]
fn each_chunk_ends_with_its_live_objects_largest_first_the_earlier_renamed_and_the_last_with_their_roots()
 {
    let dir = support::temp_dir("agent_writer_old_objects");
    let path = dir.join("old.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LLeak;", "grow", "()V", &[(0, 7)], false));
    vm.classes.insert(100, class("[B"));
    let settings = RecordingSettings {
        old_objects: 3,
        roots: Some(RootLimits {
            max_depth: 8,
            budget: std::time::Duration::from_secs(1),
        }),
        ..settings(&path)
    };
    // Every flush finds the chunk old enough to end.
    let options = Options {
        max_chunk_age: Some(std::time::Duration::ZERO),
        ..Options::default()
    };
    let mut writer = Writer::new(Recording::create(&path, options).unwrap(), &settings).unwrap();
    let t0 = writer.clock().now().0;
    // Five arrays; the larger, the heavier its sample.
    for handle in 1..=5u64 {
        let size = 1000 * handle;
        vm.array_lengths.insert(handle, size as i32 - 16);
        let bytes = record(1, t0 + handle as i64, 100, size, handle, false, &[(1, 0)]);
        writer.sample(&mut vm, &bytes).unwrap();
    }
    let statistics = |samples| Statistics {
        samples,
        lost_samples: 0,
    };
    writer
        .flush(&mut vm, statistics(5), RingStats::default())
        .unwrap();
    // The heaviest is freed: the next chunk's end has the four others.
    vm.collected.insert(5);
    writer
        .garbage_collection(
            &mut vm,
            GcRecord {
                id: 1,
                start: t0 + 10,
                end: t0 + 20,
            },
        )
        .unwrap();
    writer
        .flush(&mut vm, statistics(5), RingStats::default())
        .unwrap();
    // The end walks the heap once, for the objects it reports.
    let map_path = RootPath {
        root: GcRoot {
            system: "Class Loader Data",
            kind: "Global Handle",
            description: Some("Leak.map".into()),
        },
        links: vec![
            Link {
                holder_class: "Ljava/util/HashMap$Node;".into(),
                description: None,
                holder: 7,
                reference: Reference::Field {
                    name: "value".into(),
                    modifiers: 0,
                },
            },
            Link {
                holder_class: "[Ljava/util/HashMap$Node;".into(),
                description: Some("the table".into()),
                holder: 8,
                reference: Reference::Element {
                    length: 16,
                    index: 4,
                },
            },
        ],
    };
    vm.paths.insert(4, map_path);
    finish(writer, &mut vm, 5);
    assert_eq!(
        vm.walks,
        vec![vec![4, 3, 2]],
        "one walk, for the reported objects"
    );

    assert!(support::summary(&path).contains("Chunks: 3"));
    // Every chunk end's, in file order: only the newest (the end's) under
    // the JDK's name, the earlier ones renamed once a newer was written.
    let old = support::dump_types(
        &path,
        &["jdk.OldObjectSample", "heapsampler.OldObjectSnapshot"],
    );
    let names: Vec<&str> = old.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            ["heapsampler.OldObjectSnapshot"; 6].as_slice(),
            &["jdk.OldObjectSample"; 3]
        ]
        .concat(),
        "{old:#?}"
    );
    let sizes: Vec<&str> = old
        .iter()
        .map(|l| {
            l.split(" objectSize=")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        sizes,
        [
            "5000", "4000", "3000", "4000", "3000", "2000", "4000", "3000", "2000"
        ],
        "each chunk's end: its live objects, heaviest first, three at most"
    );
    for line in &old {
        let size: i32 = line
            .split(" objectSize=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            line.contains(&format!(" arrayElements={} ", size - 16)),
            "an array's length: {line}"
        );
    }
    assert!(
        old[6].contains(
            "object={address=4,type=class([B,0,bootstrap),description=null,\
             referrer={array=null,field={name=\"value\",modifiers=0},\
             object={address=58,type=class(java.util.HashMap$Node,0,null),description=null,\
             referrer={array={size=16,index=4},field=null,\
             object={address=66,type=class([Ljava.util.HashMap$Node;,0,null),\
             description=\"the table\",referrer=null},skip=0}},skip=0}} arrayElements=3984 \
             root={description=\"Leak.map\",system=\"Class Loader Data\",type=\"Global Handle\"}"
        ),
        "{}",
        old[6]
    );
    assert!(old[7].ends_with(" root=null") && old[8].ends_with(" root=null"));
    // The cap and what it left out: 2 at the first end, 1 at each other.
    let statistics = support::dump_types(&path, &["heapsampler.AgentStatistics"]);
    assert!(
        statistics
            .last()
            .unwrap()
            .contains(" oldObjectCap=3 oldObjectsLeftOut=4 "),
        "{statistics:#?}"
    );
}

/// A fake JVM with G1's two collectors, started `started_before` ms
/// before the recording's clock origin (negative: after it), none of
/// whose collectors ran yet.
fn g1(writer: &Writer<jfr_writer::FileSink>, started_before: i64) -> FakeManagement {
    let origin_millis = writer.clock().epoch_nanos(jfr_writer::Ticks(0)) / 1_000_000;
    FakeManagement {
        jvm: JvmInfo {
            vm_name: "OpenJDK 64-Bit Server VM".into(),
            vm_version: "17.0.15+6".into(),
            runtime_version: Some("17.0.15+6".into()),
            os_name: Some("Linux".into()),
            os_arch: Some("amd64".into()),
            arguments: vec![
                "-Xmx1g".into(),
                "-agentpath:/x/libheapsampler.so=live=true".into(),
            ],
            java_command: Some("Leak 10".into()),
            compressed_oops_mode: Some("Zero based".into()),
            start_millis: origin_millis - started_before,
            pid: 4242,
        },
        collectors: Collectors {
            names: vec!["G1 Young Generation".into(), "G1 Old Generation".into()],
            heap_reserved: 1 << 30,
        },
        last: vec![None, None],
        notified: Vec::new(),
        flags: vec![
            ("MaxHeapSize", "1073741824", "VM_CREATION"),
            ("MinHeapSize", "8388608", "ERGONOMIC"),
            ("InitialHeapSize", "16777216", "ERGONOMIC"),
            ("UseCompressedOops", "true", "ERGONOMIC"),
            ("ObjectAlignmentInBytes", "8", "DEFAULT"),
            ("ParallelGCThreads", "2", "DEFAULT"),
            ("ConcGCThreads", "1", "ERGONOMIC"),
            ("UseDynamicNumberOfGCThreads", "true", "DEFAULT"),
            ("ExplicitGCInvokesConcurrent", "false", "DEFAULT"),
            ("DisableExplicitGC", "false", "DEFAULT"),
            ("MaxGCPauseMillis", "200", "DEFAULT"),
            ("GCTimeRatio", "12", "DEFAULT"),
        ],
        classes: ClassLoading {
            loaded: 512,
            unloaded: 3,
        },
    }
}

/// A collection of `id` from `start` to `end` ms after the JVM's start,
/// the heap `used` MiB before and `left` MiB after, 64 MiB committed
/// before and 96 after; the metaspace 6 MiB used (1 of it classes) before
/// and 5 (1) after, in 8 MiB committed (2 of classes, in 1 GiB reserved).
fn collection(id: u64, start: i64, end: i64, used: u64, left: u64) -> GcInfo {
    let metaspace = |used: u64| Metaspace {
        all: SpaceUsage {
            used: used << 20,
            committed: 8 << 20,
            max: None,
        },
        class_space: Some(SpaceUsage {
            used: 1 << 20,
            committed: 2 << 20,
            max: Some(1 << 30),
        }),
    };
    GcInfo {
        id,
        start_millis: start,
        end_millis: end,
        before: HeapUsage {
            used: used << 20,
            committed: 64 << 20,
        },
        after: HeapUsage {
            used: left << 20,
            committed: 96 << 20,
        },
        metaspace_before: Some(metaspace(6)),
        metaspace_after: Some(metaspace(5)),
    }
}

/// `collection` as notified by `collector` for `cause`.
fn notified(collector: &str, cause: &str, info: GcInfo) -> NotifiedCollection {
    NotifiedCollection {
        collector: collector.into(),
        cause: Some(cause.into()),
        action: None,
        info,
    }
}

/// The events of these types in the file, as the JDK's parser reads them,
/// with the start time of those written "now" (not from the JVM's times)
/// replaced by `NOW`.
fn heap_events(path: &Path) -> Vec<String> {
    const NOW: [&str; 4] = [
        "jdk.JVMInformation ",
        "jdk.ClassLoadingStatistics ",
        "jdk.GCConfiguration ",
        "jdk.GCHeapConfiguration ",
    ];
    support::dump_types(
        path,
        &[
            "jdk.JVMInformation",
            "jdk.GCConfiguration",
            "jdk.GCHeapConfiguration",
            "jdk.GCHeapSummary",
            "jdk.MetaspaceSummary",
            "jdk.GarbageCollection",
            "jdk.YoungGarbageCollection",
            "jdk.OldGarbageCollection",
            "jdk.GCPhasePause",
            "jdk.ClassLoadingStatistics",
        ],
    )
    .into_iter()
    .map(|line| {
        if NOW.iter().any(|t| line.starts_with(t)) {
            let time = line.split(' ').nth(1).unwrap().to_owned();
            line.replacen(&time, "startTime=NOW", 1)
        } else {
            line
        }
    })
    .collect()
}

/// `jdk.GCHeapSummary` and `jdk.MetaspaceSummary` as the JDK's parser
/// prints them: the heap's start is not known (0), its reserved size is
/// the fake JVM's 1 GiB; the metaspace as [`collection`] has it, its total
/// reservation and threshold not known (0).
fn summaries(at: i64, gc_id: u32, when: &str, committed_mib: u64, used_mib: u64) -> [String; 2] {
    let committed = committed_mib << 20;
    let metaspace_used = if when == "Before GC" { 6 } else { 5 };
    [
        format!(
            "jdk.GCHeapSummary startTime={at} gcId={gc_id} when=\"{when}\" \
             heapSpace={{start=0,committedEnd={committed},committedSize={committed},\
             reservedEnd=1073741824,reservedSize=1073741824}} heapUsed={}",
            used_mib << 20
        ),
        format!(
            "jdk.MetaspaceSummary startTime={at} gcId={gc_id} when=\"{when}\" gcThreshold=0 \
             metaspace={{committed=8388608,used={},reserved=0}} \
             dataSpace={{committed=6291456,used={},reserved=0}} \
             classSpace={{committed=2097152,used=1048576,reserved=1073741824}}",
            metaspace_used << 20,
            (metaspace_used - 1) << 20,
        ),
    ]
}

/// `jdk.GarbageCollection` as the JDK's parser prints it.
fn jdk_collection(
    at: i64,
    millis: i64,
    gc_id: u32,
    name: &str,
    cause: &str,
    pauses_nanos: i64,
) -> String {
    let nanos = millis * 1_000_000;
    format!(
        "jdk.GarbageCollection startTime={at} duration={nanos} gcId={gc_id} name=\"{name}\" \
         cause=\"{cause}\" sumOfPauses={pauses_nanos} longestPause={pauses_nanos}"
    )
}

fn pause(at: i64, nanos: i64, gc_id: u32) -> String {
    format!(
        "jdk.GCPhasePause startTime={at} duration={nanos} eventThread=null gcId={gc_id} \
         name=\"GC Pause\""
    )
}

/// A recording attached to a JVM that ran for 10 s: the collections from
/// before it are left out (the last one's heap is the last known); those
/// notified after it are written in the order they started, each with one
/// gcId on its summaries, its collection, its young or old event and the
/// pause the GC callbacks reported within it, named as the JDK names
/// them, with the notified cause; a collector's ids left out are counted;
/// a pause no collection claims (G1's Remark) is written at the end with
/// an id of its own. The configuration comes from the JVM's flags.
#[test]
fn collections_from_the_jvms_notifications_as_the_jdk_reads_them() {
    let dir = support::temp_dir("agent_writer_heap");
    let path = dir.join("heap.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let mut jvm = g1(&writer, 10_000);
    // Before the recording: four young collections, one full one; the
    // young one ended last.
    jvm.last = vec![
        Some(collection(4, 9_000, 9_010, 40, 20)),
        Some(collection(1, 5_000, 5_100, 60, 10)),
    ];
    let epoch = |millis: i64| (jvm.jvm.start_millis + millis) * 1_000_000;
    let (at, at_end) = (epoch(10_100), epoch(10_102));
    let (full, full_end) = (epoch(10_300), epoch(10_350));
    let (young, young_end) = (epoch(10_400), epoch(10_403));
    let remark = epoch(10_200);
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    assert!(writer.begin_heap_context(&mut vm).unwrap());
    assert_eq!(writer.last_known_heap_usage(), Some(20 << 20));
    let clock = writer.clock();
    let ticks = |epoch_nanos: i64| clock.ticks_at_epoch_nanos(epoch_nanos).0;
    let gc = |writer: &mut Writer<_>, vm: &mut FakeVm, id, start, end| {
        let (start, end) = (ticks(start), ticks(end));
        writer
            .garbage_collection(vm, GcRecord { id, start, end })
            .unwrap();
    };

    // The pause is reported before its notification; it waits for it.
    gc(&mut writer, &mut vm, 1, at + 300_000, at + 2_100_000);
    writer.poll_collections(&mut vm).unwrap();
    let management = vm.management.as_mut().unwrap();
    management.notified = vec![notified(
        "G1 Young Generation",
        "G1 Evacuation Pause",
        collection(5, 10_100, 10_102, 30, 25),
    )];
    writer.poll_collections(&mut vm).unwrap();
    assert_eq!(writer.last_known_heap_usage(), Some(25 << 20));

    // A pause no collection is notified for; young collections 6 and 7
    // refused by a full queue; a full collection that started before 8.
    gc(&mut writer, &mut vm, 2, remark, remark + 1_000_000);
    gc(&mut writer, &mut vm, 3, full + 500_000, full_end - 200_000);
    let management = vm.management.as_mut().unwrap();
    management.notified = vec![
        notified(
            "G1 Young Generation",
            "G1 Evacuation Pause",
            collection(8, 10_400, 10_403, 50, 45),
        ),
        notified(
            "G1 Old Generation",
            "System.gc()",
            collection(2, 10_300, 10_350, 70, 35),
        ),
    ];
    writer.heap_statistics(&mut vm).unwrap();
    // Young 8 has no pause reported: it waits for one (the GC callbacks'
    // may come after the notification), and its collector's missed ids
    // are counted once it is written.
    assert_eq!(writer.collections_missed(), 0);
    assert_eq!(writer.last_known_heap_usage(), Some(35 << 20));
    writer.poll_collections(&mut vm).unwrap();
    assert_eq!(writer.collections_missed(), 0, "still waiting");
    // At the end it is written without one.
    finish(writer, &mut vm, 0);

    let jvm_start = vm.management.as_ref().unwrap().jvm.start_millis;
    let mut expected = vec![
        format!(
            "jdk.JVMInformation startTime=NOW jvmName=\"OpenJDK 64-Bit Server VM\" \
             jvmVersion=\"OpenJDK 64-Bit Server VM (17.0.15+6) for linux-amd64 JRE \
             (17.0.15+6)\" jvmArguments=\"-Xmx1g -agentpath:/x/libheapsampler.so=live=true\" \
             jvmFlags=null javaArguments=\"Leak 10\" jvmStartTime={jvm_start} pid=4242"
        ),
        // MaxGCPauseMillis has its default: no pause target (the JDK's
        // Long.MIN_VALUE).
        "jdk.GCConfiguration startTime=NOW youngCollector=\"G1New\" oldCollector=\"G1Old\" \
         parallelGCThreads=2 concurrentGCThreads=1 usesDynamicGCThreads=true \
         isExplicitGCConcurrent=false isExplicitGCDisabled=false \
         pauseTarget=-9223372036854775808 gcTimeRatio=12"
            .to_owned(),
        "jdk.GCHeapConfiguration startTime=NOW minSize=8388608 maxSize=1073741824 \
         initialSize=16777216 usesCompressedOops=true compressedOopsMode=\"Zero based\" \
         objectAlignment=8 heapAddressBits=32"
            .to_owned(),
        pause(at + 300_000, 1_800_000, 1),
    ];
    expected.extend(summaries(at, 1, "Before GC", 64, 30));
    expected.extend(summaries(at_end, 1, "After GC", 96, 25));
    expected.extend([
        jdk_collection(at, 2, 1, "G1New", "G1 Evacuation Pause", 1_800_000),
        format!(
            "jdk.YoungGarbageCollection startTime={at} duration=2000000 gcId=1 \
             tenuringThreshold=0"
        ),
        pause(full + 500_000, 49_300_000, 2),
    ]);
    expected.extend(summaries(full, 2, "Before GC", 64, 70));
    expected.extend(summaries(full_end, 2, "After GC", 96, 35));
    expected.extend([
        jdk_collection(full, 50, 2, "G1Full", "System.gc()", 49_300_000),
        format!("jdk.OldGarbageCollection startTime={full} duration=50000000 gcId=2"),
    ]);
    expected.push(
        "jdk.ClassLoadingStatistics startTime=NOW loadedClassCount=512 unloadedClassCount=3"
            .to_owned(),
    );
    // Without a pause reported, written at the end, its own length.
    expected.extend(summaries(young, 3, "Before GC", 64, 50));
    expected.extend(summaries(young_end, 3, "After GC", 96, 45));
    expected.extend([
        jdk_collection(young, 3, 3, "G1New", "G1 Evacuation Pause", 3_000_000),
        format!(
            "jdk.YoungGarbageCollection startTime={young} duration=3000000 gcId=3 \
             tenuringThreshold=0"
        ),
        pause(remark, 1_000_000, 4),
    ]);
    assert_eq!(heap_events(&path), expected);
    // `jfr print --json` reads the cause and the JDK's name.
    let document = support::print_json(&path);
    let events = support::json_events(&document);
    let collections: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "jdk.GarbageCollection")
        .collect();
    assert_eq!(collections.len(), 3);
    assert_eq!(collections[1]["values"]["name"], "G1Full");
    assert_eq!(collections[1]["values"]["cause"], "System.gc()");
}

/// Generational ZGC's major collections, the ones that clear what weak
/// handles point to there, are told from its minor ones and its pauses,
/// each by when it began, once.
#[test]
fn generational_zgc_majors_are_told_by_their_start() {
    let dir = support::temp_dir("agent_writer_majors");
    let path = dir.join("majors.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let mut jvm = g1(&writer, 1_000);
    jvm.collectors.names = [
        "ZGC Minor Cycles",
        "ZGC Minor Pauses",
        "ZGC Major Cycles",
        "ZGC Major Pauses",
    ]
    .map(str::to_owned)
    .to_vec();
    jvm.last = vec![None; 4];
    let epoch = |millis: i64| (jvm.jvm.start_millis + millis) * 1_000_000;
    let major = WholeHeapCollection {
        start: writer.clock().ticks_at_epoch_nanos(epoch(2_100)).0,
        end: writer.clock().ticks_at_epoch_nanos(epoch(2_400)).0,
    };
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    writer.begin_heap_context(&mut vm).unwrap();
    vm.management.as_mut().unwrap().notified = vec![
        notified(
            "ZGC Minor Cycles",
            "Allocation Rate",
            collection(1, 2_000, 2_010, 40, 20),
        ),
        notified(
            "ZGC Minor Pauses",
            "Allocation Rate",
            collection(1, 2_001, 2_001, 0, 0),
        ),
        notified(
            "ZGC Major Pauses",
            "Proactive",
            collection(1, 2_100, 2_100, 0, 0),
        ),
        notified(
            "ZGC Major Cycles",
            "Proactive",
            collection(1, 2_100, 2_400, 60, 10),
        ),
    ];
    writer.poll_collections(&mut vm).unwrap();
    assert_eq!(writer.take_major_collections(), [major]);
    assert_eq!(
        writer.take_major_collections(),
        [] as [WholeHeapCollection; 0],
        "taken once"
    );
    finish(writer, &mut vm, 0);
}

/// A concurrent collector (ZGC on JDK 17): its `ZGC Pauses` notifications
/// are not collections; its cycle, notified at its end, claims every pause
/// the GC callbacks reported within it, and sums them; it has neither young
/// nor old event; a pause outside any cycle gets an id of its own.
#[test]
fn a_concurrent_cycle_claims_the_pauses_within_it() {
    let dir = support::temp_dir("agent_writer_heap_cycle");
    let path = dir.join("cycle.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let mut jvm = g1(&writer, 1_000);
    jvm.collectors.names = vec!["ZGC Cycles".into(), "ZGC Pauses".into()];
    let epoch = |millis: i64| (jvm.jvm.start_millis + millis) * 1_000_000;
    let (cycle, cycle_end) = (epoch(2_000), epoch(2_080));
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    writer.begin_heap_context(&mut vm).unwrap();
    let clock = writer.clock();
    let pauses = [
        (cycle + 200_000, 30_000),
        (cycle + 40_000_000, 50_000),
        (cycle + 79_000_000, 20_000),
        // After the cycle's end.
        (cycle_end + 20_000_000, 10_000),
    ];
    for (at, (start, nanos)) in pauses.into_iter().enumerate() {
        let start = clock.ticks_at_epoch_nanos(start).0;
        writer
            .garbage_collection(
                &mut vm,
                GcRecord {
                    id: at as u64 + 1,
                    start,
                    end: start + nanos,
                },
            )
            .unwrap();
    }
    let pause_of = |id, start: i64| {
        notified(
            "ZGC Pauses",
            "System.gc()",
            collection(id, start, start, 0, 0),
        )
    };
    vm.management.as_mut().unwrap().notified = vec![
        pause_of(1, 2_000),
        pause_of(2, 2_040),
        pause_of(3, 2_079),
        notified(
            "ZGC Cycles",
            "System.gc()",
            collection(1, 2_000, 2_080, 40, 20),
        ),
    ];
    writer.poll_collections(&mut vm).unwrap();
    finish(writer, &mut vm, 0);

    let events = heap_events(&path);
    let of = |name: &str| -> Vec<&String> {
        events
            .iter()
            .filter(|e| e.starts_with(&format!("{name} ")))
            .collect()
    };
    assert_eq!(
        of("jdk.GarbageCollection"),
        [
            &jdk_collection(cycle, 80, 1, "Z", "System.gc()", 0).replace(
                "sumOfPauses=0 longestPause=0",
                "sumOfPauses=100000 longestPause=50000"
            )
        ]
    );
    assert_eq!(
        of("jdk.GCPhasePause"),
        [
            &pause(cycle + 200_000, 30_000, 1),
            &pause(cycle + 40_000_000, 50_000, 1),
            &pause(cycle + 79_000_000, 20_000, 1),
            &pause(cycle_end + 20_000_000, 10_000, 2),
        ]
    );
    assert!(
        of("jdk.YoungGarbageCollection").is_empty() && of("jdk.OldGarbageCollection").is_empty()
    );
    assert_eq!(of("jdk.MetaspaceSummary").len(), 2);
}

/// A loaded machine may run the VM thread late: a stop-the-world
/// collection the JVM timed 12 ms into its 20 ms pause still claims that
/// pause, not the one that ended 5 ms before the collection's start, which
/// gets an id of its own.
#[test]
fn a_collection_claims_the_pause_it_lies_within_however_late_it_was_timed() {
    let dir = support::temp_dir("agent_writer_heap_late");
    let path = dir.join("late.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let jvm = g1(&writer, 1_000);
    let started = jvm.jvm.start_millis;
    let epoch = |millis: i64| (started + millis) * 1_000_000;
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    writer.begin_heap_context(&mut vm).unwrap();
    let clock = writer.clock();
    // (start, nanos): a short pause, then the collection's own.
    let pauses = [(epoch(1_983), 2_000_000), (epoch(1_988), 20_000_000)];
    for (at, (start, nanos)) in pauses.into_iter().enumerate() {
        let start = clock.ticks_at_epoch_nanos(start).0;
        writer
            .garbage_collection(
                &mut vm,
                GcRecord {
                    id: at as u64 + 1,
                    start,
                    end: start + nanos,
                },
            )
            .unwrap();
    }
    vm.management.as_mut().unwrap().notified = vec![notified(
        "G1 Young Generation",
        "G1 Evacuation Pause",
        collection(1, 2_000, 2_007, 40, 20),
    )];
    writer.poll_collections(&mut vm).unwrap();
    finish(writer, &mut vm, 0);

    let events = heap_events(&path);
    let of = |name: &str| -> Vec<&String> {
        events
            .iter()
            .filter(|e| e.starts_with(&format!("{name} ")))
            .collect()
    };
    assert_eq!(
        of("jdk.GarbageCollection"),
        [&jdk_collection(
            epoch(2_000),
            7,
            1,
            "G1New",
            "G1 Evacuation Pause",
            20_000_000
        )]
    );
    assert_eq!(
        of("jdk.GCPhasePause"),
        [
            &pause(epoch(1_988), 20_000_000, 1),
            &pause(epoch(1_983), 2_000_000, 2),
        ]
    );
}

/// The JVM's notification thread may deliver a collection before the
/// writer has taken the GC callbacks' report of its pause (CI saw a G1 full
/// collection lose its pause so under load): the collection waits for its
/// pause, and the collections notified after it wait with it, in order.
#[test]
fn a_collection_notified_before_its_pause_waits_for_it() {
    let dir = support::temp_dir("agent_writer_heap_early_notification");
    let path = dir.join("early.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let jvm = g1(&writer, 1_000);
    let started = jvm.jvm.start_millis;
    let epoch = |millis: i64| (started + millis) * 1_000_000;
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    writer.begin_heap_context(&mut vm).unwrap();
    vm.management.as_mut().unwrap().notified = vec![
        notified(
            "G1 Old Generation",
            "System.gc()",
            collection(1, 2_000, 2_010, 70, 35),
        ),
        notified(
            "G1 Young Generation",
            "G1 Evacuation Pause",
            collection(1, 2_100, 2_102, 40, 20),
        ),
    ];
    writer.heap_statistics(&mut vm).unwrap();
    assert_eq!(writer.last_known_heap_usage(), None, "both wait");
    let clock = writer.clock();
    let pauses = [
        (epoch(2_000) + 100_000, 9_800_000),
        (epoch(2_100), 2_500_000),
    ];
    for (at, (start, nanos)) in pauses.into_iter().enumerate() {
        let start = clock.ticks_at_epoch_nanos(start).0;
        let gc = GcRecord {
            id: at as u64 + 1,
            start,
            end: start + nanos,
        };
        writer.garbage_collection(&mut vm, gc).unwrap();
    }
    writer.poll_collections(&mut vm).unwrap();
    assert_eq!(writer.last_known_heap_usage(), Some(20 << 20));
    finish(writer, &mut vm, 0);

    let events = heap_events(&path);
    let of = |name: &str| -> Vec<&String> {
        events
            .iter()
            .filter(|e| e.starts_with(&format!("{name} ")))
            .collect()
    };
    assert_eq!(
        of("jdk.GarbageCollection"),
        [
            &jdk_collection(epoch(2_000), 10, 1, "G1Full", "System.gc()", 9_800_000),
            &jdk_collection(
                epoch(2_100),
                2,
                2,
                "G1New",
                "G1 Evacuation Pause",
                2_500_000
            ),
        ]
    );
    assert_eq!(
        of("jdk.GCPhasePause"),
        [
            &pause(epoch(2_000) + 100_000, 9_800_000, 1),
            &pause(epoch(2_100), 2_500_000, 2),
        ]
    );
}

/// A recording made from the JVM's start (`-agentpath`) may see the
/// JVM's first collections only in their collector's last `GcInfo`, from
/// before the notifications began: the last is written at the next poll,
/// with its pause and heap summaries, without a cause and without its
/// metaspace (from before the agent's own classes), the earlier ones
/// counted.
#[test]
fn a_collection_before_the_notifications_began_is_written_without_its_cause() {
    let dir = support::temp_dir("agent_writer_heap_start");
    let path = dir.join("start.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let mut jvm = g1(&writer, -5);
    jvm.last = vec![Some(collection(3, 100, 104, 24, 8)), None];
    let at = (jvm.jvm.start_millis + 100) * 1_000_000;
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    assert!(writer.begin_heap_context(&mut vm).unwrap());
    assert_eq!(writer.collections_missed(), 2);
    let start = writer.clock().ticks_at_epoch_nanos(at + 500_000).0;
    writer
        .garbage_collection(
            &mut vm,
            GcRecord {
                id: 1,
                start,
                end: start + 3_000_000,
            },
        )
        .unwrap();
    writer.poll_collections(&mut vm).unwrap();
    assert_eq!(writer.last_known_heap_usage(), Some(8 << 20));
    finish(writer, &mut vm, 0);
    let events = heap_events(&path);
    let collections: Vec<&String> = events
        .iter()
        .filter(|e| e.starts_with("jdk.GarbageCollection "))
        .collect();
    assert_eq!(
        collections,
        [&jdk_collection(at, 4, 1, "G1New", "-", 3_000_000).replace("cause=\"-\"", "cause=null")]
    );
    assert!(
        events.contains(&pause(at + 500_000, 3_000_000, 1)),
        "{events:#?}"
    );
    let summaries = |name: &str| events.iter().filter(|e| e.starts_with(name)).count();
    assert_eq!(summaries("jdk.GCHeapSummary "), 2, "{events:#?}");
    assert_eq!(summaries("jdk.MetaspaceSummary "), 0, "{events:#?}");
}

/// Without the management interface (a jlinked runtime without
/// java.management) the recording is the same, without these events.
#[test]
fn without_the_management_interface_there_are_no_heap_events() {
    let dir = support::temp_dir("agent_writer_heap_none");
    let path = dir.join("none.jfr");
    let mut writer = new_writer(&path, &settings(&path));
    let mut vm = FakeVm::default();
    assert!(!writer.begin_heap_context(&mut vm).unwrap());
    writer.poll_collections(&mut vm).unwrap();
    writer.heap_statistics(&mut vm).unwrap();
    assert_eq!(writer.last_known_heap_usage(), None);
    finish(writer, &mut vm, 0);
    assert_eq!(heap_events(&path), Vec::<String>::new());
}

/// Each chunk, read alone, says which JVM it comes from: the JDK writes
/// `jdk.JVMInformation` at each chunk's start, and so does the writer at
/// the first flush of each chunk.
#[test]
fn every_chunk_carries_the_jvms_information_and_the_recordings_settings() {
    let dir = support::temp_dir("agent_writer_heap_chunks");
    let path = dir.join("chunks.jfr");
    let options = Options {
        max_chunk_size: 16 * 1024,
        ..Options::default()
    };
    let mut writer =
        Writer::new(Recording::create(&path, options).unwrap(), &settings(&path)).unwrap();
    let jvm = g1(&writer, 0);
    let mut vm = FakeVm {
        management: Some(jvm),
        ..FakeVm::default()
    };
    vm.methods
        .insert(1, method("LMain;", "work", "()V", &[], false));
    vm.classes.insert(100, class("[B"));
    // As the writer loop starts a recording.
    writer.begin_heap_context(&mut vm).unwrap();
    writer.begin_environment(&mut vm).unwrap();
    let t0 = writer.clock().now().0;
    for i in 0..2000u64 {
        let bytes = record(1, t0 + i as i64, 100, 24, 0, false, &[(1, i as i64)]);
        writer.sample(&mut vm, &bytes).unwrap();
        if (i + 1) % 100 == 0 {
            writer.heap_statistics(&mut vm).unwrap();
            writer
                .flush(
                    &mut vm,
                    Statistics {
                        samples: i + 1,
                        lost_samples: 0,
                    },
                    RingStats::default(),
                )
                .unwrap();
        }
    }
    // As the writer loop ends a recording.
    writer.heap_statistics(&mut vm).unwrap();
    finish(writer, &mut vm, 2000);
    let summary = support::summary(&path);
    let chunks = support::summary_chunks(&summary);
    assert!(chunks > 2, "{summary}");
    assert_eq!(
        support::summary_count(&summary, "jdk.JVMInformation"),
        chunks,
        "{summary}"
    );
    // The recording's settings too: a chunk a rotation kept says them.
    assert_eq!(
        support::summary_count(&summary, "jdk.ActiveRecording"),
        chunks,
        "{summary}"
    );
    assert_eq!(
        support::summary_count(&summary, "jdk.ActiveSetting"),
        (8 + 20 + 2) * chunks + 1,
        "six of the allocation samples, two of the lifetimes, of the 10 environment \
         events each enabled, 9 a period and Shutdown its stack traces, and \
         ThreadAllocationStatistics' enabled and period, per chunk; once in the file \
         jdk.GCPhasePauseLevel1's enabled: {summary}"
    );
    // What the JVM runs on, at each chunk's start too.
    assert_eq!(
        support::summary_count(&summary, "jdk.CPUInformation"),
        chunks,
        "{summary}"
    );
    // And the GC configuration, as the JDK writes it at each chunk's start.
    for name in ["jdk.GCConfiguration", "jdk.GCHeapConfiguration"] {
        assert_eq!(support::summary_count(&summary, name), chunks, "{summary}");
    }
    assert_eq!(
        support::summary_count(&summary, "jdk.ClassLoadingStatistics"),
        21,
        "one per flush and one at the end"
    );
}

/// A thread the JVM lists, with what it allocated.
fn allocation(
    key: Option<u64>,
    java_thread_id: i64,
    name: &str,
    allocated: u64,
) -> ThreadAllocation {
    ThreadAllocation {
        key,
        java_thread_id,
        name: name.into(),
        allocated,
    }
}

#[test]
fn each_flush_writes_every_threads_allocated_bytes_on_the_samples_thread() {
    let dir = support::temp_dir("agent_thread_allocations");
    let path = dir.join("threads.jfr");
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LMain;", "allocate", "()V", &[], false));
    vm.classes.insert(100, class("[I"));
    let mut writer = new_writer(&path, &settings(&path));
    let t0 = writer.clock().now().0;
    // Thread key 1 is sampled (the fake's "main", Java id 10); Java
    // thread 30 never is.
    writer
        .sample(&mut vm, &record(1, t0 + 10, 100, 24, 0, false, &[(1, 0)]))
        .unwrap();
    vm.thread_allocations = Some(vec![
        allocation(Some(1), 10, "main", 1000),
        allocation(None, 30, "idle", 5000),
    ]);
    let statistics = Statistics {
        samples: 1,
        lost_samples: 0,
    };
    writer
        .flush(&mut vm, statistics, RingStats::default())
        .unwrap();
    vm.thread_allocations = Some(vec![
        allocation(Some(1), 10, "main", 2000),
        allocation(None, 30, "idle", 5000),
    ]);
    finish(writer, &mut vm, 1);
    assert!(vm.unmeasured.is_empty());

    let main = "thread(\"main\",10,\"main\",501,null)";
    let idle = "thread(\"idle\",30,\"idle\",0,null)";
    let sample = support::dump_types(&path, &["jdk.ObjectAllocationSample"]);
    assert!(
        sample[0].contains(&format!("eventThread={main} ")),
        "{sample:?}"
    );
    let statistics: Vec<String> = support::dump_types(&path, &["jdk.ThreadAllocationStatistics"])
        .iter()
        .map(|line| {
            let (_, fields) = line.split_once(" allocated=").unwrap();
            format!("allocated={fields}")
        })
        .collect();
    assert_eq!(
        statistics,
        [
            format!("allocated=1000 thread={main}"),
            format!("allocated=5000 thread={idle}"),
            format!("allocated=2000 thread={main}"),
            format!("allocated=5000 thread={idle}"),
        ]
    );
}

#[test]
fn a_jvm_that_cannot_count_threads_bytes_gets_no_statistics_and_says_so_once() {
    let dir = support::temp_dir("agent_thread_allocations_unmeasured");
    let path = dir.join("threads.jfr");
    let mut vm = FakeVm::default();
    let mut writer = new_writer(&path, &settings(&path));
    let statistics = Statistics {
        samples: 0,
        lost_samples: 0,
    };
    writer
        .flush(&mut vm, statistics, RingStats::default())
        .unwrap();
    finish(writer, &mut vm, 0);
    assert_eq!(vm.unmeasured, [Unmeasured::Unsupported]);
    assert!(support::dump_types(&path, &["jdk.ThreadAllocationStatistics"]).is_empty());
    // Declared all the same: a reader tells "none measured" from "not
    // recorded".
    let declared = support::declaration(
        &support::metadata_of(Some(&path)),
        "jdk.ThreadAllocationStatistics",
    );
    assert!(declared.iter().any(|line| line.trim() == "long allocated;"));
}

/// A fake JVM's collectors, as its management interface names them.
struct WatchedCollectors {
    /// The one each second.
    young: &'static str,
    /// The one that marks the whole heap, every `every` seconds.
    whole_heap: &'static str,
    every: i64,
    /// Whether that one is a full collection, in place of that second's
    /// young one (whose pause it claims), rather than beside it.
    full: bool,
    /// When what a weak handle points to is found freed.
    cleared: Cleared,
}

/// When a fake JVM clears what a weak handle points to, garbage and
/// canaries.
#[derive(Clone, Copy)]
enum Cleared {
    /// At the next collection (G1, Parallel: the steady site's garbage dies
    /// young). No canary.
    Young,
    /// At the first collection that marks the whole heap this many seconds
    /// after it was made (generational ZGC: its young collections keep
    /// it, promote it, and a major clears it). Canaries made weak.
    AtWholeHeapAfter(i64),
    /// Garbage at the next collection; a weak canary at an unannounced
    /// marking every this many seconds (G1 before JDK 21). Canaries held
    /// until tenured.
    MarkingEvery(i64),
}

/// G1 on JDK 21 or later, marking each second: its young collection, and
/// its concurrent cycle's pause (Remark).
const G1_MARKING: WatchedCollectors = WatchedCollectors {
    young: "G1 Young Generation",
    whole_heap: "G1 Concurrent GC",
    every: 1,
    full: false,
    cleared: Cleared::Young,
};

/// Drives a writer as the session's loop does for `seconds` simulated
/// seconds: each second one sample of the leaking site (method 1,
/// `byte[]`) that stays live from `leak_from` on and one of a steady site
/// (method 2, `String`) freed by the next collection, then a collection
/// (`collectors.young`, notified), every `collectors.every` seconds one
/// that marks the whole heap, then the watch. Returns the notices, by
/// second.
fn drive_watch(
    writer: &mut Writer<jfr_writer::FileSink>,
    vm: &mut FakeVm,
    collectors: &WatchedCollectors,
    seconds: i64,
    leak_from: i64,
) -> Vec<(i64, heapsampler_agent::writer::Notice)> {
    const SECOND: i64 = 1_000_000_000;
    let mut jvm = g1(writer, 1_000);
    jvm.collectors.names = vec![collectors.young.into(), collectors.whole_heap.into()];
    jvm.last = vec![None, None];
    // Generational Shenandoah: its pauses notified, each by what it did,
    // before its cycle's notification.
    let shenandoah = collectors.young == "Shenandoah Cycles";
    if shenandoah {
        jvm.flags
            .push(("ShenandoahGCMode", "generational", "COMMAND_LINE"));
    }
    let (mut pauses, mut cycles) = (0, 0);
    vm.management = Some(jvm);
    writer.begin_heap_context(vm).unwrap();
    let t0 = writer.clock().now().0;
    // The JVM's milliseconds at tick `at`: the recording began 1 s after it.
    let millis = |at: i64| 1_000 + at / 1_000_000;
    let mut notices = Vec::new();
    let mut handle = 1000;
    // The steady site's garbage not cleared yet, with the second of each.
    let mut garbage: Vec<(u64, i64)> = Vec::new();
    if !matches!(collectors.cleared, Cleared::Young) {
        vm.canaries = Some(FakeCanaries::default());
    }
    for second in 1..=seconds {
        let at = t0 + second * SECOND;
        if let Some(canaries) = vm.canaries.as_mut() {
            canaries.now = second;
        }
        let marks = second % collectors.every == 0;
        if second >= leak_from {
            handle += 1;
            writer
                .sample(vm, &record(1, at, 100, 1024, handle, false, &[(1, 0)]))
                .unwrap();
        }
        handle += 1;
        writer
            .sample(vm, &record(1, at, 101, 24, handle, false, &[(2, 0)]))
            .unwrap();
        // The previous second's steady sample is dead: freed by this
        // collection, or kept until a major long after it.
        garbage.push((handle - 2, second - 1));
        let cleared_before = match collectors.cleared {
            Cleared::Young | Cleared::MarkingEvery(_) => Some(second),
            Cleared::AtWholeHeapAfter(lag) => marks.then_some(second - lag),
        };
        if let Some(before) = cleared_before {
            for (dead, _) in garbage.iter().filter(|(_, made)| *made <= before) {
                vm.collected.insert(*dead);
            }
            garbage.retain(|(_, made)| *made > before);
        }
        let canaries_before = match collectors.cleared {
            Cleared::Young => None,
            Cleared::AtWholeHeapAfter(_) => cleared_before,
            Cleared::MarkingEvery(every) => (second % every == 0).then_some(second - 1),
        };
        if let (Some(before), Some(canaries)) = (canaries_before, vm.canaries.as_ref()) {
            let cleared: Vec<u64> = canaries
                .weak
                .iter()
                .filter(|(_, made)| **made <= before)
                .map(|(handle, _)| *handle)
                .collect();
            vm.collected.extend(cleared);
        }
        let (start, end) = (at + SECOND / 2, at + SECOND / 2 + 1_000_000);
        writer
            .garbage_collection(
                vm,
                GcRecord {
                    id: second as u64,
                    start,
                    end,
                },
            )
            .unwrap();
        let id = second as u64;
        let mut notified_now = Vec::new();
        if shenandoah {
            // A young cycle; with an old marking's end, the cycle of its
            // Final Mark after it.
            let actions: &[&[&str]] = if marks {
                &[&["Init Mark", "Final Mark"], &["Final Mark"]]
            } else {
                &[&["Init Mark", "Final Mark"]]
            };
            for cycle in actions {
                for action in *cycle {
                    pauses += 1;
                    notified_now.push(NotifiedCollection {
                        action: Some((*action).into()),
                        ..notified(
                            collectors.whole_heap,
                            "Concurrent GC",
                            collection(pauses, millis(start), millis(start), 60, 60),
                        )
                    });
                }
                cycles += 1;
                notified_now.push(notified(
                    collectors.young,
                    "Concurrent GC",
                    collection(cycles, millis(start), millis(end), 60, 40),
                ));
            }
        } else if !(marks && collectors.full) {
            notified_now.push(notified(
                collectors.young,
                "Allocation Rate",
                collection(id, millis(start), millis(end), 60, 40),
            ));
        }
        if marks && !shenandoah {
            notified_now.push(notified(
                collectors.whole_heap,
                "No GC",
                collection(
                    id / collectors.every as u64,
                    millis(start),
                    millis(end),
                    40,
                    40,
                ),
            ));
        }
        vm.management.as_mut().unwrap().notified = notified_now;
        writer.poll_collections(vm).unwrap();
        let raised = writer.watch(vm).unwrap();
        writer.walk_to_suspects_roots(vm, &raised).unwrap();
        notices.extend(raised.into_iter().map(|notice| (second, notice)));
    }
    notices
}

fn watched_vm() -> FakeVm {
    let mut vm = FakeVm::default();
    vm.methods
        .insert(1, method("LCache;", "put", "(I)V", &[(0, 42)], false));
    vm.methods
        .insert(2, method("LSession;", "open", "()V", &[(0, 7)], false));
    vm.classes.insert(100, class("[B"));
    vm.classes.insert(101, class("Ljava/lang/String;"));
    vm
}

/// A site that keeps one more 1 KiB array sampled at 512k live each second
/// from second 60 (500 KiB/s) is raised once, with its stack, its class
/// and a growth interval that holds its rate; the steady site beside it is
/// not; the line the agent says names the class and the rate. The watched
/// sites are written every 10 s, with how each grew lately.
#[test]
fn the_watch_raises_a_growing_site_once_with_its_stack_and_class() {
    let dir = support::temp_dir("agent_writer_watch");
    let path = dir.join("watch.jfr");
    let mut vm = watched_vm();
    let mut writer = new_writer(&path, &settings(&path));
    let notices = drive_watch(&mut writer, &mut vm, &G1_MARKING, 240, 60);
    assert_eq!(notices.len(), 1, "{notices:#?}");
    let (second, notice) = &notices[0];
    let heapsampler_agent::writer::Notice::Leak { class, suspect, .. } = notice else {
        panic!("{notice:?}");
    };
    assert!(
        (61..=150).contains(second),
        "raised at {second} s, the leak from 60 s"
    );
    assert_eq!(class.as_deref(), Some("byte[]"));
    // The growth is over the window judged, which may start before the
    // leak: the rate times the share of the window it leaked (its samples
    // entered at the collections half a second after each).
    let rate = bytes_weight(1024, 512 * 1024);
    let window = suspect.raised_at - suspect.window_start;
    let leaked = suspect.raised_at - suspect.window_start.max(59.5);
    let expected = rate * leaked / window;
    assert!(
        (suspect.growth.estimate - expected).abs() < rate / window,
        "{suspect:?} vs {expected}"
    );
    let line = notice.to_string();
    assert!(
        line.starts_with("leak suspect: a site of byte[] grows "),
        "{line}"
    );
    assert!(
        line.contains("the heap (40.0 MiB of 1.0 GiB) is full in "),
        "{line}"
    );
    assert_eq!(writer.watched_sites(), 2);
    finish(writer, &mut vm, 0);

    let suspects = support::dump_types(&path, &["heapsampler.LeakSuspect"]);
    assert_eq!(suspects.len(), 1, "{suspects:#?}");
    let event = &suspects[0];
    let stack = support::dump_value(event, "stackTrace");
    assert!(stack.contains("Cache.put(I)V:42"), "{event}");
    assert!(event.contains(" objectClass=class([B,"), "{event}");
    assert_eq!(support::dump_value(event, "otherSites"), "false");
    assert_eq!(
        support::dump_value(event, "heapMax"),
        (1u64 << 30).to_string()
    );
    let samples: i64 = support::dump_value(event, "liveSamples").parse().unwrap();
    assert!(
        (36..=100).contains(&samples),
        "the leak's samples that entered: {event}"
    );

    // The watched sites: of judgments 10 s apart at least (a judgment each
    // second here), each naming the sites that hold live samples.
    let watched = support::dump_types(&path, &["heapsampler.WatchedSite"]);
    let mut judged: Vec<i64> = watched
        .iter()
        .map(|event| support::dump_value(event, "startTime").parse().unwrap())
        .collect();
    judged.dedup();
    assert!(
        judged.windows(2).all(|w| w[1] - w[0] >= 10_000_000_000),
        "{judged:?}"
    );
    assert!((20..=24).contains(&judged.len()), "{judged:?}");
    let last = |method: &str| {
        watched
            .iter()
            .rfind(|event| support::dump_value(event, "stackTrace").contains(method))
            .unwrap_or_else(|| panic!("no {method} in {watched:#?}"))
    };
    // At 240 s the window starts after the first quarter, in the leak: its
    // growth is the leak's rate, and the steady site's 0.
    let growth = |event: &str| {
        ["growthRate", "growthRateLow", "growthRateHigh"].map(|f| support::dump_double(event, f))
    };
    let [estimate, low, high] = growth(last("Cache.put"));
    assert!(low < rate && rate < high, "{estimate} ({low} to {high})");
    let window: i64 = support::dump_value(last("Cache.put"), "window")
        .parse()
        .unwrap();
    assert!(
        (30_000_000_000..=180_000_000_000).contains(&window),
        "{window}"
    );
    let [estimate, low, high] = growth(last("Session.open"));
    assert!(low <= 0.0 && 0.0 <= high, "{estimate} ({low} to {high})");
    // Before a window is held (the first quarter, and 30 s), none.
    let first = &watched[0];
    assert!(
        support::dump_double(first, "growthRate").is_nan(),
        "{first}"
    );
    assert_eq!(
        support::dump_value(first, "window"),
        jfr_format::NO_TIMESPAN.to_string()
    );
}

/// Without a leak the watch raises nothing, and with `watch=false` it
/// writes no event of its own.
#[test]
fn the_watch_raises_nothing_without_a_leak_and_is_off_when_told() {
    let dir = support::temp_dir("agent_writer_watch_none");
    for (name, watch, leak_from) in [("steady.jfr", true, i64::MAX), ("off.jfr", false, 60)] {
        let path = dir.join(name);
        let mut vm = watched_vm();
        let settings = RecordingSettings {
            watch,
            ..settings(&path)
        };
        let mut writer = new_writer(&path, &settings);
        let notices = drive_watch(&mut writer, &mut vm, &G1_MARKING, 240, leak_from);
        assert!(notices.is_empty(), "{name}: {notices:#?}");
        assert_eq!(writer.watch_limitation(), None);
        finish(writer, &mut vm, 0);
        assert!(
            support::dump_types(&path, &["heapsampler.LeakSuspect"]).is_empty(),
            "{name}"
        );
        let watched = support::dump_types(&path, &["heapsampler.WatchedSite"]);
        assert_eq!(watched.is_empty(), !watch, "{name}");
    }
}

/// Only collections that mark the whole heap are judged: Parallel's young
/// ones enter nothing (an old object dead is not found dead by them); a
/// full one enters what it found live, allocated before it began.
#[test]
fn only_collections_that_mark_the_whole_heap_are_judged() {
    let dir = support::temp_dir("agent_writer_watch_whole_heap");
    let path = dir.join("parallel.jfr");
    let mut vm = watched_vm();
    let mut writer = new_writer(&path, &settings(&path));
    let parallel = WatchedCollectors {
        young: "PS Scavenge",
        whole_heap: "PS MarkSweep",
        every: 5,
        full: true,
        cleared: Cleared::Young,
    };
    let raised = drive_watch(&mut writer, &mut vm, &parallel, 300, 1);
    assert_eq!(raised.len(), 1, "{raised:#?}");
    let (second, heapsampler_agent::writer::Notice::Leak { class, .. }) = &raised[0] else {
        panic!("{raised:?}");
    };
    assert!(*second % 5 == 0, "at a full collection, not at {second} s");
    assert!((30..=200).contains(second), "raised at {second} s");
    assert_eq!(class.as_deref(), Some("byte[]"));
    assert_eq!(writer.watch_limitation(), None);
    finish(writer, &mut vm, 0);
}

/// Where the collector does not say when a marking ends, canaries tell:
/// under generational ZGC, whose young collections keep a dead sample
/// until a major 40 s after it died, the steady site's pile of garbage
/// (40 s of it, judged as live at a major) raises nothing, and the leak
/// from 60 s is raised once its samples are judged; likewise under G1
/// before JDK 21, marking every 10 s unannounced. The watch says how it
/// judges there. Every canary's handle is released at the end.
#[test]
fn canaries_judge_where_the_collector_does_not_say_when_a_marking_ends() {
    let dir = support::temp_dir("agent_writer_watch_canaries");
    let zgc = WatchedCollectors {
        young: "ZGC Minor Cycles",
        whole_heap: "ZGC Major Cycles",
        every: 6,
        full: false,
        cleared: Cleared::AtWholeHeapAfter(40),
    };
    let g1_17 = WatchedCollectors {
        young: "G1 Young Generation",
        whole_heap: "G1 Old Generation",
        every: 1_000,
        full: true,
        cleared: Cleared::MarkingEvery(10),
    };
    // The leak's samples are judged no sooner than a canary made after
    // them is cleared: 40 s later under ZGC, at the first marking 17
    // collections after under G1.
    for (name, collectors, said, earliest, latest) in [
        ("zgc", &zgc, "generational ZGC", 60 + 40, 60 + 40 + 60),
        ("g1-17", &g1_17, "before JDK 21", 60 + 17, 60 + 17 + 60),
    ] {
        for leak_from in [60, i64::MAX] {
            let path = dir.join(format!("{name}-{leak_from}.jfr"));
            let mut vm = watched_vm();
            let mut writer = new_writer(&path, &settings(&path));
            let raised = drive_watch(&mut writer, &mut vm, collectors, 300, leak_from);
            if leak_from == i64::MAX {
                assert!(raised.is_empty(), "{name}: {raised:#?}");
            } else {
                assert_eq!(raised.len(), 1, "{name}: {raised:#?}");
                let (second, heapsampler_agent::writer::Notice::Leak { class, .. }) = &raised[0]
                else {
                    panic!("{raised:?}");
                };
                assert!(
                    (earliest..=latest).contains(second),
                    "{name}: raised at {second} s"
                );
                assert_eq!(class.as_deref(), Some("byte[]"));
            }
            let limitation = writer.watch_limitation().unwrap();
            assert!(limitation.contains(said), "{limitation}");
            finish(writer, &mut vm, 0);
            let canaries = vm.canaries.as_ref().unwrap();
            assert!(
                canaries.weak.is_empty() && canaries.strong.is_empty(),
                "{name}: every canary released"
            );
            assert!(canaries.next > 100, "{name}: {} canaries", canaries.next);
        }
    }
}

/// Under generational Shenandoah the watch judges at the ends of old
/// markings it tells from the order of the collector's notifications (a
/// cycle whose one pause is a Final Mark), each judging what was allocated
/// before the end of the one before: with one every 10 s, the leak from
/// 60 s is raised, and the steady site raises nothing, whether its garbage
/// dies young (found dead by the next young cycle) or old (only by an old
/// marking's end). The watch says how it judges there.
#[test]
fn generational_shenandoah_is_judged_at_the_ends_of_its_old_markings() {
    let dir = support::temp_dir("agent_writer_watch_shenandoah");
    for (name, cleared) in [
        ("young", Cleared::Young),
        ("old", Cleared::AtWholeHeapAfter(0)),
    ] {
        let shenandoah = WatchedCollectors {
            young: "Shenandoah Cycles",
            whole_heap: "Shenandoah Pauses",
            every: 10,
            full: false,
            cleared,
        };
        for leak_from in [60, i64::MAX] {
            let path = dir.join(format!("{name}-{leak_from}.jfr"));
            let mut vm = watched_vm();
            let mut writer = new_writer(&path, &settings(&path));
            let raised = drive_watch(&mut writer, &mut vm, &shenandoah, 300, leak_from);
            if leak_from == i64::MAX {
                assert!(raised.is_empty(), "{name}: {raised:#?}");
            } else {
                assert_eq!(raised.len(), 1, "{name}: {raised:#?}");
                let (second, heapsampler_agent::writer::Notice::Leak { class, .. }) = &raised[0]
                else {
                    panic!("{raised:?}");
                };
                assert!(
                    *second % 10 == 1,
                    "{name}: believed at the cycle after an end, not {second} s"
                );
                assert!((70..=160).contains(second), "{name}: raised at {second} s");
                assert_eq!(class.as_deref(), Some("byte[]"));
            }
            let limitation = writer.watch_limitation().unwrap();
            assert!(
                limitation.contains("generational Shenandoah"),
                "{limitation}"
            );
            finish(writer, &mut vm, 0);
        }
    }
}

/// With `roots=true` a suspect's live samples, and only those, are walked
/// to their GC roots when it is raised; the live set is written again with
/// them first and their paths, and the recording's end writes those paths
/// though its own walk finds none: the file's one live set under the JDK's
/// name shows what holds the leak, each object once.
#[test]
fn a_suspects_samples_are_walked_to_their_roots_and_keep_their_paths() {
    let dir = support::temp_dir("agent_writer_watch_roots");
    let path = dir.join("roots.jfr");
    let mut vm = watched_vm();
    let held_by = |handle: u64| RootPath {
        root: GcRoot {
            system: "Class Loader Data",
            kind: "Global Handle",
            description: Some("Cache.all".into()),
        },
        links: vec![Link {
            holder_class: "Ljava/util/ArrayList;".into(),
            description: None,
            holder: handle + 100_000,
            reference: Reference::Field {
                name: "elementData".into(),
                modifiers: 0,
            },
        }],
    };
    for handle in 1000..2000 {
        vm.paths.insert(handle, held_by(handle));
    }
    let settings = RecordingSettings {
        roots: Some(RootLimits {
            max_depth: 64,
            budget: std::time::Duration::from_secs(1),
        }),
        ..settings(&path)
    };
    let mut writer = new_writer(&path, &settings);
    let raised = drive_watch(&mut writer, &mut vm, &G1_MARKING, 240, 60);
    assert_eq!(raised.len(), 1, "{raised:#?}");
    assert_eq!(vm.walks.len(), 1, "one walk, at the suspect");
    // The leak's samples are the even handles from 1060 on, the steady
    // site's freed the next second.
    let walked = vm.walks[0].clone();
    assert!(walked.len() >= 20, "{walked:?}");
    assert!(
        walked.iter().all(|h| h % 2 == 0 && *h >= 1060),
        "only the suspect's samples: {walked:?}"
    );
    // The end's walk finds nothing: the suspect's paths are remembered.
    vm.paths.clear();
    finish(writer, &mut vm, 0);
    assert_eq!(vm.walks.len(), 2);

    let old = support::dump_types(&path, &["jdk.OldObjectSample"]);
    let addresses: Vec<u64> = old
        .iter()
        .map(|l| {
            l.split("object={address=")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    let distinct: HashSet<u64> = addresses.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        addresses.len(),
        "each object once: {old:#?}"
    );
    for handle in &walked {
        let line = old
            .iter()
            .find(|l| l.contains(&format!("object={{address={handle},")))
            .unwrap_or_else(|| panic!("{handle} in the live set: {old:#?}"));
        assert!(
            line.contains("java.util.ArrayList") && line.contains("Cache.all"),
            "{line}"
        );
    }
    let snapshots = support::dump_types(&path, &["heapsampler.OldObjectSnapshot"]);
    assert!(
        snapshots.iter().any(|l| l.contains("Cache.all")),
        "the suspect's live set, renamed at the end: {snapshots:#?}"
    );
}

/// With a peak share, a heap after a collection past it and above every
/// peak before writes `heapsampler.HeapPeak` and the live set by site; a
/// lower one does not.
#[test]
fn a_new_heap_peak_past_the_share_writes_the_live_set_by_site() {
    const SECOND: i64 = 1_000_000_000;
    let dir = support::temp_dir("agent_writer_peak");
    let path = dir.join("peak.jfr");
    let settings = RecordingSettings {
        peak_share: Some(0.5),
        ..settings(&path)
    };
    let mut writer = new_writer(&path, &settings);
    let mut vm = watched_vm();
    vm.management = Some(g1(&writer, 1_000));
    writer.begin_heap_context(&mut vm).unwrap();
    let t0 = writer.clock().now().0;
    let origin_millis = 1_000 + t0 / 1_000_000;
    let mut peaks = Vec::new();
    // The heap after each collection, MiB of the 1 GiB maximum: below the
    // share, past it, lower, higher.
    for (second, left) in [(1_i64, 300_u64), (2, 600), (3, 550), (4, 700)] {
        let at = t0 + second * SECOND;
        writer
            .sample(
                &mut vm,
                &record(1, at, 100, 1024, 10 + second as u64, false, &[(1, 0)]),
            )
            .unwrap();
        let gc = GcRecord {
            id: second as u64,
            start: at + SECOND / 2,
            end: at + SECOND / 2 + 1_000_000,
        };
        writer.garbage_collection(&mut vm, gc).unwrap();
        let millis = origin_millis + second * 1_000 + 500;
        // A full collection, which marks the whole heap: the site's
        // samples enter.
        vm.management.as_mut().unwrap().notified = vec![notified(
            "G1 Old Generation",
            "System.gc()",
            collection(second as u64, millis, millis + 1, left + 100, left),
        )];
        writer.poll_collections(&mut vm).unwrap();
        for notice in writer.watch(&mut vm).unwrap() {
            peaks.push((second, notice));
        }
    }
    let seconds: Vec<i64> = peaks.iter().map(|(second, _)| *second).collect();
    assert_eq!(seconds, [2, 4], "{peaks:#?}");
    assert_eq!(
        peaks[1].1,
        heapsampler_agent::writer::Notice::Peak {
            used: 700 << 20,
            max: 1 << 30
        }
    );
    finish(writer, &mut vm, 0);
    let events = support::dump_types(&path, &["heapsampler.HeapPeak", "heapsampler.PeakLiveSite"]);
    let names: Vec<&str> = events
        .iter()
        .map(|e| e.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "heapsampler.HeapPeak",
            "heapsampler.PeakLiveSite",
            "heapsampler.HeapPeak",
            "heapsampler.PeakLiveSite"
        ],
        "{events:#?}"
    );
    // At the second peak, each second's sample has entered.
    assert_eq!(support::dump_value(&events[3], "liveSamples"), "4");
    assert!(support::dump_value(&events[3], "stackTrace").contains("Cache.put"));
}
