//! The agent's sessions from start to stop without a JVM: what a start
//! enables and in which order, the one stop path (sampling off, the
//! collection asked for, the writer finished, the announcement withdrawn),
//! a late stop that finds a later session, and what an attach answers, over
//! a fake JVM that logs each call.

use std::collections::HashMap;
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use heapsampler_agent::lifecycle::{Error, Lifecycle, LifecycleVm, Running, VmError};
use heapsampler_agent::tracking::StartVm;
use heapsampler_core::announcement::property;
use heapsampler_core::options::{LiveSetAt, Options};
use heapsampler_core::ring::{Consumer, WaitOutcome};
use jfr_writer::Clock;

/// What the JVM's side of a fake session holds: whether its exit hook is
/// added.
#[derive(Default)]
struct Jvm {
    exit_hook: Mutex<bool>,
}

/// The calls made, in order, by the fake JVM and the fake writer thread.
type Calls = Arc<Mutex<Vec<String>>>;

/// A JVM whose collector is `collector` (a HotSpot flag: `UseG1GC`,
/// `UseZGC`), whose system properties are `properties`, and whose
/// collections finish as they are forced.
struct FakeJvm<'l> {
    lifecycle: &'l Lifecycle<Jvm>,
    collector: &'static str,
    properties: HashMap<String, String>,
    library: PathBuf,
    calls: Calls,
}

impl<'l> FakeJvm<'l> {
    fn new(lifecycle: &'l Lifecycle<Jvm>, collector: &'static str) -> Self {
        Self {
            lifecycle,
            collector,
            properties: HashMap::new(),
            library: PathBuf::from("/opt/heapsampler/libheapsampler.so"),
            calls: Calls::default(),
        }
    }

    fn call(&self, what: impl Into<String>) {
        self.calls.lock().unwrap().push(what.into());
    }

    fn calls(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl StartVm for FakeJvm<'_> {
    fn vm_flag(&mut self, name: &CStr) -> Option<String> {
        Some((name.to_str().unwrap() == self.collector).to_string())
    }

    fn system_property(&mut self, name: &str) -> Option<String> {
        self.properties.get(name).cloned()
    }

    fn collector_names(&mut self) -> Option<Vec<String>> {
        None
    }
}

impl LifecycleVm for FakeJvm<'_> {
    type Jvm = Jvm;

    fn start_events(&mut self) -> Result<(), VmError> {
        self.call("start events");
        Ok(())
    }

    fn start_sampling(&mut self, threads: Option<&glob::Pattern>) -> Result<(), VmError> {
        self.call(match threads {
            Some(pattern) => format!("start sampling {pattern}"),
            None => "start sampling".to_owned(),
        });
        Ok(())
    }

    fn stop_events(&mut self) {
        self.call("stop events");
    }

    fn stop_sampling(&mut self) {
        self.call("stop sampling");
    }

    fn stop_gc_events(&mut self) {
        self.call("stop gc events");
    }

    fn force_garbage_collection(&mut self) -> Result<(), VmError> {
        self.call("collect");
        self.lifecycle.collections().started(Instant::now());
        self.lifecycle.collections().finished(Instant::now());
        Ok(())
    }

    fn add_exit_hook(&mut self, jvm: &Jvm) -> bool {
        self.call("add exit hook");
        *jvm.exit_hook.lock().unwrap() = true;
        true
    }

    fn remove_exit_hook(&mut self, jvm: &Jvm, after_exit: bool) {
        if std::mem::take(&mut *jvm.exit_hook.lock().unwrap()) {
            self.call(format!("remove exit hook after_exit={after_exit}"));
        }
    }

    fn set_system_property(&mut self, name: &str, value: Option<&str>) {
        self.call(format!("set {name}={}", value.unwrap_or("(none)")));
        match value {
            Some(value) => self.properties.insert(name.to_owned(), value.to_owned()),
            None => self.properties.remove(name),
        };
    }

    fn library_path(&mut self) -> Option<PathBuf> {
        Some(self.library.clone())
    }

    fn release_free_memory(&mut self) {
        self.call("release memory");
    }
}

fn options(file: &str) -> Options {
    let mut options = Options::defaults(std::process::id());
    options.file = PathBuf::from(file);
    options
}

/// Starts a session whose writer thread drains the ring until it closes,
/// then says so in the calls.
fn start(lifecycle: &Lifecycle<Jvm>, jvm: &mut FakeJvm<'_>, options: Options) {
    let calls = Arc::clone(&jvm.calls);
    let writer = move |_: Arc<Running<Jvm>>, mut consumer: Consumer| {
        std::thread::Builder::new().spawn(move || {
            while consumer.wait(Duration::from_millis(10)) != WaitOutcome::Finished {
                consumer.drain(|_| {});
            }
            calls.lock().unwrap().push("writer finished".to_owned());
        })
    };
    lifecycle
        .start(options, Clock::new(), jvm, |_| Jvm::default(), writer)
        .unwrap();
}

/// Those of `calls` that set or clear the announcement.
fn announcements(calls: &[String]) -> Vec<&str> {
    calls
        .iter()
        .filter(|call| call.starts_with("set heapsampler."))
        .map(String::as_str)
        .collect()
}

/// Those of `calls` that are not announcements.
fn without_announcements(calls: &[String]) -> Vec<&str> {
    calls
        .iter()
        .filter(|call| !call.starts_with("set heapsampler."))
        .map(String::as_str)
        .collect()
}

#[test]
fn a_start_enables_events_before_sampling_and_announces_the_recording() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseG1GC");
    start(&lifecycle, &mut jvm, options("/tmp/a.jfr"));
    let calls = jvm.calls();
    assert_eq!(
        without_announcements(&calls),
        ["start events", "start sampling"]
    );
    let library = jvm.library.display().to_string();
    assert_eq!(
        announcements(&calls),
        [
            format!("set {}={}", property::VERSION, env!("CARGO_PKG_VERSION")),
            format!("set {}={library}", property::LIBRARY),
            format!("set {}=/tmp/a.jfr", property::RECORDING),
        ]
    );
    assert!(lifecycle.running().is_some_and(|running| running.id == 1));
    let _order = lifecycle.order();
    lifecycle.stop(&mut jvm, None, LiveSetAt::Stop, None);
}

#[test]
fn threads_of_a_name_are_sampled_one_by_one() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseG1GC");
    let mut options = options("/tmp/threads.jfr");
    options.threads = Some(glob::Pattern::new("worker-*").unwrap());
    start(&lifecycle, &mut jvm, options);
    assert_eq!(
        without_announcements(&jvm.calls()),
        ["start events", "start sampling worker-*"]
    );
    lifecycle.stop(&mut jvm, None, LiveSetAt::Stop, None);
}

#[test]
fn a_stop_collects_as_asked_while_the_writer_runs_then_finishes_it_and_withdraws() {
    for (at, collect, collects) in [
        // By default only the JVM's exit collects.
        (LiveSetAt::Exit, None, true),
        (LiveSetAt::Stop, None, false),
        (LiveSetAt::Stop, Some(true), true),
        (LiveSetAt::Exit, Some(false), false),
    ] {
        let lifecycle = Lifecycle::new();
        let mut jvm = FakeJvm::new(&lifecycle, "UseG1GC");
        start(&lifecycle, &mut jvm, options("/tmp/stop.jfr"));
        jvm.calls();
        lifecycle.stop(&mut jvm, None, at, collect);
        let calls = jvm.calls();
        let mut expected = vec!["stop events", "stop sampling"];
        if collects {
            expected.push("collect");
        }
        expected.extend(["writer finished", "stop gc events", "release memory"]);
        assert_eq!(
            without_announcements(&calls),
            expected,
            "{at:?} {collect:?}"
        );
        assert_eq!(
            announcements(&calls),
            [format!("set {}=(none)", property::RECORDING)]
        );
        assert!(lifecycle.running().is_none());
        // Stopped, a second stop has nothing to do.
        lifecycle.stop(&mut jvm, None, at, collect);
        assert_eq!(jvm.calls(), Vec::<String>::new());
    }
}

#[test]
fn a_late_stop_of_an_earlier_session_leaves_the_next_one_running() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseG1GC");
    start(&lifecycle, &mut jvm, options("/tmp/first.jfr"));
    lifecycle.stop(&mut jvm, Some(1), LiveSetAt::Stop, None);
    start(&lifecycle, &mut jvm, options("/tmp/second.jfr"));
    jvm.calls();
    // The first session's duration ran out as it was stopped.
    lifecycle.stop(&mut jvm, Some(1), LiveSetAt::Stop, None);
    assert_eq!(jvm.calls(), Vec::<String>::new());
    assert!(lifecycle.is_running(2));
    lifecycle.stop(&mut jvm, Some(2), LiveSetAt::Stop, None);
    assert!(lifecycle.running().is_none());
}

#[test]
fn under_a_collector_that_cannot_collect_at_vm_death_the_exit_hook_collects() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseZGC");
    start(&lifecycle, &mut jvm, options("/tmp/zgc.jfr"));
    assert_eq!(
        without_announcements(&jvm.calls()),
        ["start events", "add exit hook", "start sampling"]
    );
    let running = lifecycle.running().unwrap();
    lifecycle.collect_before_exit(&running, &mut jvm);
    drop(running);
    assert_eq!(jvm.calls(), ["stop sampling", "collect"]);
    // VMDeath: the hook collected, the stop does not again.
    lifecycle.stop(&mut jvm, None, LiveSetAt::Exit, None);
    assert_eq!(
        without_announcements(&jvm.calls()),
        [
            "stop events",
            "stop sampling",
            "remove exit hook after_exit=true",
            "writer finished",
            "stop gc events",
            "release memory"
        ]
    );
}

#[test]
fn a_stop_before_the_exit_removes_the_exit_hook_and_collects_itself() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseShenandoahGC");
    start(&lifecycle, &mut jvm, options("/tmp/shenandoah.jfr"));
    jvm.calls();
    lifecycle.stop(&mut jvm, None, LiveSetAt::Stop, Some(true));
    assert_eq!(
        without_announcements(&jvm.calls())[..4],
        [
            "stop events",
            "stop sampling",
            "collect",
            "remove exit hook after_exit=false"
        ]
    );
}

#[test]
fn an_attach_starts_stops_or_says_why_it_cannot() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseG1GC");
    let attach = |jvm: &mut FakeJvm<'_>, options: Options| {
        lifecycle.attach(options, jvm, |options, jvm| {
            start(&lifecycle, jvm, options);
            Ok(())
        })
    };
    let mut stop = options("/tmp/x.jfr");
    stop.stop = true;
    let refused = attach(&mut jvm, stop.clone()).unwrap_err();
    assert!(matches!(refused, Error::NotRecording), "{refused:?}");
    assert_eq!(refused.to_string(), "no recording is running");
    let mut dump = options("/tmp/x.jfr");
    dump.dump = Some(PathBuf::from("/tmp/snapshot.jfr"));
    let refused = attach(&mut jvm, dump).unwrap_err();
    assert!(matches!(refused, Error::NotRecording), "{refused:?}");
    attach(&mut jvm, options("/tmp/attached.jfr")).unwrap();
    let refused = attach(&mut jvm, options("/tmp/another.jfr")).unwrap_err();
    assert!(
        matches!(&refused, Error::AlreadyRunning { file } if file.as_os_str() == "/tmp/attached.jfr"),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        "a recording is already running (to /tmp/attached.jfr); attach with 'stop' first"
    );
    attach(&mut jvm, stop).unwrap();
    assert!(lifecycle.running().is_none());
}

#[test]
fn an_attach_names_the_other_copy_of_the_agent_that_samples() {
    let lifecycle = Lifecycle::new();
    let mut jvm = FakeJvm::new(&lifecycle, "UseG1GC");
    for (name, value) in [
        (property::VERSION, "0.0.9"),
        (property::LIBRARY, "/old/libheapsampler.so"),
        (property::RECORDING, "/tmp/old.jfr"),
    ] {
        jvm.properties.insert(name.to_owned(), value.to_owned());
    }
    let mut attach = |options: Options| {
        lifecycle.attach(options, &mut jvm, |_, _| {
            panic!("started beside another copy")
        })
    };
    let refused = attach(options("/tmp/new.jfr")).unwrap_err();
    assert!(
        matches!(&refused, Error::RunningInAnother { .. }),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        "a recording is already running (to /tmp/old.jfr), by the agent loaded from \
         /old/libheapsampler.so (version 0.0.9); attach that file with 'stop' first"
    );
    let mut stop = options("/tmp/new.jfr");
    stop.stop = true;
    let refused = attach(stop).unwrap_err();
    assert!(
        matches!(&refused, Error::RecordingInAnother { .. }),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        "no recording is running in the agent loaded from /opt/heapsampler/libheapsampler.so; \
         the agent loaded from /old/libheapsampler.so (version 0.0.9) samples in this JVM \
         and records to /tmp/old.jfr: load that file"
    );
}
