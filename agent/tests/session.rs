//! A recording session without a JVM: the writer loop over a fake VM, the
//! session's own collections, and which samples' liveness is tracked (the
//! size policy, the share and the cap).

use heapsampler_test_support as support;

use std::collections::HashSet;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use heapsampler_agent::environment::EnvironmentVm;
use heapsampler_agent::heap::{Collectors, GcInfo, HeapUsage, HeapVm, NotifiedCollection};
use heapsampler_agent::record::{RawFrame, SampleHeader, SampleRecord, Tracking};
use heapsampler_agent::roots::RootsVm;
use heapsampler_agent::session::{
    self, Collection, Collections, RequestError, RunningCollections, Session, SessionVm, claim_file,
};
use heapsampler_agent::threads::ThreadsVm;
use heapsampler_agent::tracking::{StartVm, TrackingPlan};
use heapsampler_agent::writer::{ClassInfo, Exhaustion, Loader, MethodInfo, ThreadInfo, Vm};
use heapsampler_core::liveness::TrackingDraw;
use heapsampler_core::options::{LiveMax, Options};
use heapsampler_core::ring::{WaitOutcome, ring_buffer};
use heapsampler_core::tracking::MAX_TRACKED_SINCE_MAJOR;
use jfr_writer::Recording;

#[derive(Default)]
struct FakeVm {
    collected: HashSet<u64>,
    released: Vec<u64>,
    /// How many times the writer said the session's duration was over.
    durations_over: usize,
    /// Generational ZGC's collections notified and not taken yet; `None`:
    /// no management interface.
    zgc: Option<Arc<Mutex<Vec<NotifiedCollection>>>>,
}

impl Vm for FakeVm {
    fn method(&mut self, _method: u64) -> Option<MethodInfo> {
        Some(MethodInfo {
            class: ClassInfo {
                signature: "LMain;".into(),
                hidden: false,
                loader: Loader::Unknown,
            },
            name: "allocate".into(),
            descriptor: "()V".into(),
            modifiers: 1,
            lines: vec![(0, 10)],
            native: false,
        })
    }
    fn class(&mut self, _class: u64) -> Option<ClassInfo> {
        Some(ClassInfo {
            signature: "[I".into(),
            hidden: false,
            loader: Loader::Boot,
        })
    }
    fn thread(&mut self, thread: u64) -> ThreadInfo {
        ThreadInfo {
            java_name: format!("worker-{thread}"),
            java_thread_id: thread as i64,
            os_thread_id: 100 + thread as i64,
        }
    }
    fn is_collected(&mut self, handle: u64) -> bool {
        self.collected.contains(&handle)
    }
    fn release(&mut self, handle: u64) {
        self.released.push(handle);
    }
}

impl HeapVm for FakeVm {
    fn collectors(&mut self) -> Option<Collectors> {
        self.zgc.as_ref()?;
        Some(Collectors {
            names: ["ZGC Minor Cycles", "ZGC Major Cycles"]
                .map(str::to_owned)
                .to_vec(),
            heap_reserved: 1 << 30,
        })
    }
    fn notified_collections(&mut self) -> Vec<NotifiedCollection> {
        self.zgc
            .as_ref()
            .map(|notified| std::mem::take(&mut *notified.lock().unwrap()))
            .unwrap_or_default()
    }
}

impl RootsVm for FakeVm {}

impl EnvironmentVm for FakeVm {}

impl heapsampler_agent::writer::CanaryVm for FakeVm {}

impl ThreadsVm for FakeVm {}

impl SessionVm for FakeVm {
    fn set_sampling_interval(&mut self, _interval: u64) {}

    /// As the agent's stop does, as far as the writer sees it.
    fn duration_over(&mut self, session: &Session) {
        self.durations_over += 1;
        session.producer().close();
    }
}

/// Options for a session writing `file`, flushed only at its end (the
/// flush timer never fires within a test).
fn options(file: &Path) -> Options {
    let mut options = Options::defaults(std::process::id());
    options.file = file.to_owned();
    options.flush = Duration::from_secs(3600);
    options.live = true;
    options.rate = None;
    options
}

/// Records each of `handles` as a sample taken now, then a collection
/// reported through `running` while the session runs, and runs the
/// session's writer to the end.
fn record_session(file: &PathBuf, running: &RunningCollections, vm: &mut FakeVm, handles: &[u64]) {
    let recording = Recording::create(file, jfr_writer::Options::default()).unwrap();
    let (producer, consumer) = ring_buffer(1 << 16);
    let collections = running.begin(producer.clone());
    let session = Session::new(
        options(file),
        recording.clock(),
        TrackingPlan::every_sample(u64::MAX),
        producer,
        collections,
    );
    for &handle in handles {
        let record = sample(&session, handle);
        session.count_sample();
        session.producer().push(&record).unwrap();
    }
    vm.collected.extend(handles.first());
    running.started(Instant::now());
    running.finished(Instant::now());
    session.producer().close();
    let sink = session::run_writer(&session, recording, consumer, vm).unwrap();
    sink.finish().unwrap();
    running.end();
}

fn field(line: &str, name: &str) -> i64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        .parse()
        .unwrap()
}

#[test]
fn a_collection_between_two_sessions_lands_in_neither() {
    let dir = support::temp_dir("session_gap");
    let running = RunningCollections::new();
    let mut vm = FakeVm::default();
    let first = dir.join("first.jfr");
    record_session(&first, &running, &mut vm, &[11, 12]);

    // Between the sessions: reported to no session.
    running.started(Instant::now());
    running.finished(Instant::now());

    let second = dir.join("second.jfr");
    record_session(&second, &running, &mut vm, &[21, 22]);
    assert_eq!(vm.released.len(), 4, "every handle released once");

    for file in [&first, &second] {
        let lines = support::dump(file);
        let of = |name: &str| -> Vec<&String> {
            lines
                .iter()
                .filter(|l| l.starts_with(&format!("{name} ")))
                .collect()
        };
        let samples = of("jdk.ObjectAllocationSample");
        let collections = of("heapsampler.GarbageCollection");
        assert_eq!(samples.len(), 2, "{}", file.display());
        assert_eq!(
            collections.len(),
            1,
            "{}: the session's own collection only: {collections:#?}",
            file.display()
        );
        assert_eq!(field(collections[0], "gcId"), 1);
        let first_sample = samples.iter().map(|l| field(l, "startTime")).min().unwrap();
        assert!(
            field(collections[0], "startTime") >= first_sample,
            "{}: a collection timed before the session's samples: {}",
            file.display(),
            collections[0]
        );
        let freed: Vec<i64> = of("heapsampler.ObjectLifetime")
            .iter()
            .map(|l| field(l, "freedByGcId"))
            .collect();
        assert_eq!(freed.iter().filter(|&&id| id == 1).count(), 1, "{freed:?}");
        assert_eq!(freed.len(), 2, "one lifetime per sample");
    }
}

#[test]
fn a_collection_whose_start_was_not_seen_starts_when_it_ends() {
    let collections = Collections::default();
    let (a, b, c) = (
        Instant::now(),
        Instant::now() + Duration::from_millis(5),
        Instant::now() + Duration::from_millis(9),
    );
    collections.finished(a);
    collections.started(b);
    collections.finished(c);
    assert_eq!(
        collections.take(),
        [
            Collection { start: a, end: a },
            Collection { start: b, end: c }
        ]
    );
    assert!(collections.take().is_empty(), "taken once");
}

/// The writer sleeps until samples or a flush are due, so a collection's
/// end must wake it: it sweeps and reads the collection's figures then.
#[test]
fn a_collections_end_wakes_the_writer() {
    let (producer, mut consumer) = ring_buffer(1 << 12);
    let collections = Collections::waking(producer);
    std::thread::scope(|scope| {
        // A minute: without the wake, the wait times out and the test fails.
        let writer = scope.spawn(move || consumer.wait(Duration::from_secs(60)));
        collections.started(Instant::now());
        collections.finished(Instant::now());
        assert_eq!(writer.join().unwrap(), WaitOutcome::Woken);
    });
    assert_eq!(collections.take().len(), 1);
}

#[test]
fn the_ring_is_closed_when_the_writer_loop_ends() {
    let dir = support::temp_dir("session_closes");
    let file = dir.join("closed.jfr");
    let recording = Recording::create(&file, jfr_writer::Options::default()).unwrap();
    let (producer, consumer) = ring_buffer(1 << 12);
    let session = Session::new(
        options(&file),
        recording.clock(),
        TrackingPlan::every_sample(u64::MAX),
        producer,
        std::sync::Arc::new(Collections::default()),
    );
    // The consumer's end closes it, as a VM death would.
    consumer.close();
    let sink = session::run_writer(&session, recording, consumer, &mut FakeVm::default()).unwrap();
    sink.finish().unwrap();
    assert!(session.producer().is_closed());
    assert_eq!(session.statistics().samples, 0);
}

#[test]
fn a_session_whose_duration_is_over_asks_once_to_be_stopped_and_finishes() {
    let dir = support::temp_dir("session_duration");
    let file = dir.join("timed.jfr");
    let recording = Recording::create(&file, jfr_writer::Options::default()).unwrap();
    let (producer, consumer) = ring_buffer(1 << 12);
    let mut options = options(&file);
    options.duration = Some(Duration::from_secs(1));
    let session = Session::new(
        options,
        recording.clock(),
        TrackingPlan::every_sample(u64::MAX),
        producer,
        std::sync::Arc::new(Collections::default()),
    );
    let mut vm = FakeVm::default();
    // Nothing closes the ring but the end of the duration.
    let started = Instant::now();
    let sink = session::run_writer(&session, recording, consumer, &mut vm).unwrap();
    sink.finish().unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "not before its end"
    );
    assert_eq!(vm.durations_over, 1, "asked once");
    assert!(session.producer().is_closed());
    // Finished: the JDK reads it.
    support::summary(&file);
}

#[test]
fn liveness_stops_at_g1_humongous_size_unless_told_otherwise() {
    let flags = |g1: Option<&'static str>, region: Option<&'static str>| {
        move |flag: &std::ffi::CStr| match flag.to_str().unwrap() {
            "UseG1GC" => g1.map(str::to_owned),
            "G1HeapRegionSize" => region.map(str::to_owned),
            other => panic!("asked for {other}"),
        }
    };
    let mut options = options(Path::new("unused.jfr"));
    options.live_max = LiveMax::Auto;
    let auto = |options: &Options, g1, region| session::live_max(options, flags(g1, region));
    assert_eq!(auto(&options, Some("true"), Some("4194304")), 2 << 20);
    assert_eq!(auto(&options, Some("true"), Some("junk")), 512 << 10);
    assert_eq!(auto(&options, Some("true"), Some("524288")), 512 << 10);
    assert_eq!(auto(&options, Some("false"), None), u64::MAX);
    assert_eq!(auto(&options, None, None), 512 << 10, "the JVM cannot say");
    options.live = false;
    assert_eq!(auto(&options, Some("true"), Some("4194304")), u64::MAX);
    options.live = true;
    options.live_max = LiveMax::Below(1000);
    assert_eq!(auto(&options, Some("true"), Some("4194304")), 1000);
    options.live_max = LiveMax::Unlimited;
    assert_eq!(auto(&options, Some("true"), Some("4194304")), u64::MAX);
}

/// A JVM as a session's start reads it: its flags, its Java version and
/// its collectors.
struct StartJvm {
    flags: Vec<(&'static str, &'static str)>,
    version: &'static str,
    collectors: Vec<&'static str>,
}

impl StartVm for StartJvm {
    fn vm_flag(&mut self, name: &CStr) -> Option<String> {
        let name = name.to_str().unwrap();
        self.flags
            .iter()
            .find(|(flag, _)| *flag == name)
            .map(|(_, value)| value.to_string())
    }
    fn system_property(&mut self, name: &str) -> Option<String> {
        (name == "java.specification.version").then(|| self.version.to_owned())
    }
    fn collector_names(&mut self) -> Option<Vec<String>> {
        Some(self.collectors.iter().map(|n| n.to_string()).collect())
    }
}

/// Generational ZGC: a share aimed at 16 a second and the cap by default,
/// or at `live_rate=N`; every sample with `live_rate=all` or without
/// liveness. JDK 17's ZGC and G1: every sample, unless `live_rate=N`, which
/// is not capped there.
#[test]
fn the_tracking_plan_follows_the_collector_and_live_rate() {
    let generational = || StartJvm {
        flags: vec![("UseZGC", "true"), ("UseG1GC", "false")],
        version: "25",
        collectors: vec!["ZGC Minor Cycles", "ZGC Major Cycles"],
    };
    let old_zgc = || StartJvm {
        flags: vec![("UseZGC", "true"), ("UseG1GC", "false")],
        version: "17",
        collectors: vec!["ZGC Cycles", "ZGC Pauses"],
    };
    let g1 = || StartJvm {
        flags: vec![
            ("UseZGC", "false"),
            ("UseG1GC", "true"),
            ("G1HeapRegionSize", "1048576"),
        ],
        version: "17",
        collectors: vec!["G1 Young Generation", "G1 Old Generation"],
    };
    let plan = |text: &str, mut jvm: StartJvm| {
        let options = Options::parse(Some(&format!("log=quiet,{text}")), 1).unwrap();
        session::tracking_plan(&options, &mut jvm)
    };
    let share = |live_max, per_second, capped| TrackingPlan {
        live_max,
        per_second: Some(per_second),
        capped,
    };
    assert_eq!(plan("", generational()), share(u64::MAX, 16.0, true));
    assert_eq!(
        plan("live_rate=auto", generational()),
        share(u64::MAX, 16.0, true)
    );
    assert_eq!(
        plan("live_rate=100", generational()),
        share(u64::MAX, 100.0, true)
    );
    let every = TrackingPlan::every_sample;
    assert_eq!(plan("live_rate=all", generational()), every(u64::MAX));
    assert_eq!(plan("live=false", generational()), every(u64::MAX));
    assert_eq!(plan("", old_zgc()), every(u64::MAX));
    assert_eq!(plan("", g1()), every(512 << 10));
    assert_eq!(plan("live_rate=5", g1()), share(512 << 10, 5.0, false));
}

/// Under the cap, every sample is drawn (at q = 1, before any window) until
/// 256 are tracked; then samples are capped, not drawn, until the writer
/// learns that a major collection ended, which lifts the cap.
#[test]
fn past_the_cap_samples_are_capped_until_a_major_collection_ends() {
    let dir = support::temp_dir("session_cap");
    let file = dir.join("capped.jfr");
    let recording = Recording::create(&file, jfr_writer::Options::default()).unwrap();
    let (producer, consumer) = ring_buffer(1 << 16);
    let running = RunningCollections::new();
    let collections = running.begin(producer.clone());
    let plan = TrackingPlan {
        live_max: 1 << 20,
        per_second: Some(16.0),
        capped: true,
    };
    let session = Session::new(
        options(&file),
        recording.clock(),
        plan,
        producer,
        collections,
    );
    let mut draw = TrackingDraw::default();
    let mut track = || session.tracking(24, 1, &mut draw, || 1);
    let first: Vec<Tracking> = (0..300).map(|_| track()).collect();
    let cap = MAX_TRACKED_SINCE_MAJOR as usize;
    assert!(
        first[..cap].iter().all(|&t| t == Tracking::Drawn(1.0)),
        "{first:?}"
    );
    assert!(
        first[cap..].iter().all(|&t| t == Tracking::Capped),
        "{first:?}"
    );
    assert_eq!(
        session.tracking(1 << 20, 1, &mut draw, || 1),
        Tracking::Excluded,
        "the size limit comes first"
    );

    let notified = Arc::new(Mutex::new(Vec::new()));
    let mut vm = FakeVm {
        zgc: Some(Arc::clone(&notified)),
        ..FakeVm::default()
    };
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| session::run_writer(&session, recording, consumer, &mut vm));
        // A major collection ends (which only majors tell: the writer test
        // `generational_zgc_majors_are_told_by_their_start`); the writer
        // takes it at the wake of the collection's end, and lifts the cap
        // in the same pass. A minute for a busy machine: the test fails
        // only if it never does.
        notified.lock().unwrap().push(NotifiedCollection {
            collector: "ZGC Major Cycles".to_owned(),
            cause: Some("Proactive".to_owned()),
            action: None,
            info: GcInfo {
                id: 1,
                start_millis: 0,
                end_millis: 1,
                before: HeapUsage::default(),
                after: HeapUsage::default(),
                metaspace_before: None,
                metaspace_after: None,
            },
        });
        running.started(Instant::now());
        running.finished(Instant::now());
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut draw = TrackingDraw::default();
        while session.tracking(24, 1, &mut draw, || 1) == Tracking::Capped {
            assert!(Instant::now() < deadline, "still capped after the major");
            std::thread::sleep(Duration::from_millis(10));
        }
        session.producer().close();
        writer.join().unwrap().unwrap().finish().unwrap();
    });
    running.end();
}

/// A sample of `handle` taken now.
fn sample(session: &Session, handle: u64) -> Vec<u8> {
    SampleRecord {
        header: SampleHeader {
            thread: 1,
            ticks: session.clock().now().0,
            size: 24,
            interval: 512 * 1024,
            class: 1,
            liveness_handle: handle,
            tracking: if handle == 0 {
                Tracking::Excluded
            } else {
                Tracking::Drawn(1.0)
            },
            truncated: false,
        },
        frames: vec![RawFrame {
            method: 1,
            location: 0,
        }],
    }
    .encode()
}

#[test]
fn dumps_are_snapshots_taken_by_the_writer_and_refused_after_the_end() {
    let dir = support::temp_dir("session_dump");
    let file = dir.join("running.jfr");
    let recording = Recording::create(&file, session::recording_options(&options(&file))).unwrap();
    let (producer, consumer) = ring_buffer(1 << 16);
    let running = RunningCollections::new();
    let collections = running.begin(producer.clone());
    let session = Session::new(
        options(&file),
        recording.clock(),
        TrackingPlan::every_sample(u64::MAX),
        producer,
        collections,
    );
    let samples_in =
        |path: &Path| support::summary_count(&support::summary(path), "jdk.ObjectAllocationSample");
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut vm = FakeVm::default();
            session::run_writer(&session, recording, consumer, &mut vm)
                .unwrap()
                .finish()
                .unwrap();
        });
        for handle in 1..=3 {
            session.count_sample();
            session.producer().push(&sample(&session, handle)).unwrap();
        }
        // The flush timer never fires here: the dump itself flushes.
        let first = dir.join("first.jfr");
        let taken = session
            .request_dump(&first, false)
            .unwrap()
            .recv()
            .unwrap()
            .unwrap();
        assert_eq!(taken.bytes, std::fs::metadata(&first).unwrap().len());
        assert_eq!(samples_in(&first), 3);
        // Ended as the recording would end now: each sample's lifetime, the
        // objects still tracked live, and how that was found.
        let summary = support::summary(&first);
        assert_eq!(
            support::summary_count(&summary, "heapsampler.ObjectLifetime"),
            3
        );
        assert_eq!(support::summary_count(&summary, "jdk.OldObjectSample"), 3);
        let live_set = |path: &Path| {
            let events = support::json_events(&support::print_json(path)).clone();
            let sets: Vec<_> = events
                .into_iter()
                .filter(|e| e["type"] == "heapsampler.LiveSet")
                .collect();
            assert_eq!(sets.len(), 1, "one live set in {}", path.display());
            sets[0]["values"].clone()
        };
        let values = live_set(&first);
        assert_eq!(values["collected"], false);
        assert_eq!(values["liveObjects"], 3);

        for handle in 4..=5 {
            session.count_sample();
            session.producer().push(&sample(&session, handle)).unwrap();
        }
        let second = dir.join("second.jfr");
        session
            .request_dump(&second, true)
            .unwrap()
            .recv()
            .unwrap()
            .unwrap();
        assert_eq!(samples_in(&second), 5);
        assert_eq!(live_set(&second)["collected"], true);

        // A snapshot that cannot be written says why; the recording goes on.
        let error = session
            .request_dump(&dir.join("no/such/dir/x.jfr"), false)
            .unwrap()
            .recv()
            .unwrap()
            .unwrap_err();
        assert!(error.to_string().contains("No such file"), "{error}");

        session.producer().close();
        writer.join().unwrap();
    });
    let error = session
        .request_dump(&dir.join("late.jfr"), false)
        .unwrap_err();
    assert!(matches!(error, RequestError::Ended), "{error:?}");
    assert_eq!(error.to_string(), "the recording has ended");
    assert!(!dir.join("late.jfr").exists());
    running.end();
    assert_eq!(samples_in(&file), 5);
    // The snapshots' tails are theirs: the recording has each lifetime once.
    let summary = support::summary(&file);
    assert_eq!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
        5
    );
    assert_eq!(support::summary_count(&summary, "heapsampler.LiveSet"), 1);
}

/// A heap exhaustion's record: thread 7, now, the stack of one frame.
fn exhaustion(session: &Session) -> Exhaustion {
    let record = SampleRecord {
        header: SampleHeader {
            thread: 7,
            ticks: session.clock().now().0,
            size: 0,
            interval: 0,
            class: 0,
            liveness_handle: 0,
            tracking: Tracking::Excluded,
            truncated: false,
        },
        frames: vec![RawFrame {
            method: 1,
            location: 3,
        }],
    };
    Exhaustion {
        record: record.encode(),
        message: "Java heap space".to_owned(),
    }
}

/// Each heap exhaustion is written and flushed before it is answered; the
/// first ends its chunk with the old objects, those soon after only mark
/// themselves; after the end, none is taken.
#[test]
fn heap_exhaustions_are_written_before_they_are_answered() {
    let dir = support::temp_dir("session_exhausted");
    let file = dir.join("running.jfr");
    let recording = Recording::create(&file, session::recording_options(&options(&file))).unwrap();
    let (producer, consumer) = ring_buffer(1 << 16);
    let running = RunningCollections::new();
    let collections = running.begin(producer.clone());
    let session = Session::new(
        options(&file),
        recording.clock(),
        TrackingPlan::every_sample(u64::MAX),
        producer,
        collections,
    );
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut vm = FakeVm::default();
            session::run_writer(&session, recording, consumer, &mut vm)
                .unwrap()
                .finish()
                .unwrap();
        });
        for handle in 1..=4 {
            session.count_sample();
            session.producer().push(&sample(&session, handle)).unwrap();
        }
        // Two threads at once, then one more: answered once the file holds
        // them (the flush timer never fires here).
        let answers: Vec<_> = (0..2)
            .map(|_| session.report_exhaustion(exhaustion(&session)).unwrap())
            .collect();
        for answer in answers {
            answer.recv().unwrap().unwrap();
        }
        let summary = support::summary(&file);
        assert_eq!(
            support::summary_count(&summary, "heapsampler.HeapExhausted"),
            2
        );
        assert_eq!(support::summary_count(&summary, "jdk.OldObjectSample"), 4);
        assert_eq!(support::summary_chunks(&summary), 1, "the chunk ended");
        session
            .report_exhaustion(exhaustion(&session))
            .unwrap()
            .recv()
            .unwrap()
            .unwrap();
        let summary = support::summary(&file);
        assert_eq!(
            support::summary_count(&summary, "heapsampler.HeapExhausted"),
            3
        );
        assert_eq!(
            support::summary_count(&summary, "jdk.OldObjectSample"),
            4,
            "written again only a minute later"
        );
        session.producer().close();
        writer.join().unwrap();
    });
    let error = session.report_exhaustion(exhaustion(&session)).unwrap_err();
    assert!(matches!(error, RequestError::Ended), "{error:?}");
    assert_eq!(error.to_string(), "the recording has ended");
    running.end();
    let markers: Vec<serde_json::Value> = support::json_events(&support::print_json(&file))
        .iter()
        .filter(|e| e["type"] == "heapsampler.HeapExhausted")
        .map(|e| e["values"].clone())
        .collect();
    let old_objects: Vec<i64> = markers
        .iter()
        .map(|m| m["oldObjects"].as_i64().unwrap())
        .collect();
    assert_eq!(old_objects, [4, 0, 0]);
    for marker in &markers {
        assert_eq!(marker["message"], "Java heap space");
        assert_eq!(marker["eventThread"]["javaName"], "worker-7");
        assert_eq!(
            marker["stackTrace"]["frames"][0]["method"]["name"],
            "allocate"
        );
    }
}

/// `exclusive=true`: the first process to create the file writes it; the
/// next, finding it there, writes a name of its own, and the first's file
/// is left as it was.
#[test]
fn an_exclusive_file_goes_to_the_first_and_the_next_gets_its_pid() {
    let dir = support::temp_dir("agent_claim_file");
    let file = dir.join("run.jfr");
    assert_eq!(claim_file(&file, 7).unwrap(), file);
    // Claimed, the file is already a recording the JDK reads, and nothing
    // else is left in the folder.
    assert_eq!(
        support::count_events_each(std::slice::from_ref(&file))[0],
        Ok(0)
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::write(&file, "the first JVM's").unwrap();
    assert_eq!(claim_file(&file, 4242).unwrap(), dir.join("run-4242.jfr"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the first JVM's");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let missing = dir.join("no such folder").join("run.jfr");
    let error = claim_file(&missing, 7).unwrap_err();
    assert!(error.to_string().contains("cannot create"), "{error}");
}
