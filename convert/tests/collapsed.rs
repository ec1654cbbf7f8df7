//! `heapsampler convert --format collapsed` and the filters (--from, --to,
//! --thread, --class) on a recording written with known events: exact folded
//! lines and sums, exactly the expected events kept, usage errors exit 2.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use heapsampler_test_support::heapsampler_command;
use jfr_writer::{
    Class, ClassRef, EventTypeBuilder, FileSink, FrameType, Method, Options, Recording, StackFrame,
    StackTrace, StackTraceRef, Thread, Ticks, events,
};

/// One allocation sample of the known recording.
struct Sample {
    thread: &'static str,
    class: &'static str,
    stack: Option<usize>,
    weight: i64,
}

/// The samples, the k-th starting k.5 seconds after the recording's clock
/// was first read. Stacks (top first): 0 = Alloc.make:10 < Service.handle:20
/// < Main.main:30; 1 = the same methods on other lines; 2 = Alloc.make:10 <
/// Worker.run:5.
const SAMPLES: [Sample; 6] = [
    Sample {
        thread: "main",
        class: "[B",
        stack: Some(0),
        weight: 1000,
    },
    Sample {
        thread: "main",
        class: "java/lang/String",
        stack: Some(1),
        weight: 200,
    },
    Sample {
        thread: "worker-1",
        class: "[B",
        stack: Some(2),
        weight: 4000,
    },
    Sample {
        thread: "worker-2",
        class: "[I",
        stack: Some(2),
        weight: 30,
    },
    Sample {
        thread: "worker-1",
        class: "java/lang/String",
        stack: None,
        weight: 5,
    },
    Sample {
        thread: "main",
        class: "[B",
        stack: Some(0),
        weight: 600,
    },
];

/// `test.Tick` events (thread and stack, no weight, no class): their stacks.
const TICKS: [(&str, usize); 3] = [("main", 0), ("main", 1), ("worker-1", 2)];

/// The known recording and the wall-clock time (epoch nanoseconds) of each
/// sample, as the writer's clock says; written once per test binary.
fn recording() -> &'static (PathBuf, Vec<i64>) {
    static RECORDING: OnceLock<(PathBuf, Vec<i64>)> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let dir = support::temp_dir("convert_collapsed");
        let path = dir.join("known.jfr");
        let times = write(&path);
        // The JDK reads it, with the same counts.
        let summary = support::summary(&path);
        assert_eq!(
            support::summary_count(&summary, "jdk.ObjectAllocationSample"),
            SAMPLES.len() as u64
        );
        assert_eq!(
            support::summary_count(&summary, "test.Tick"),
            TICKS.len() as u64
        );
        (path, times)
    })
}

/// A class by its internal name (`java/lang/String`, `[B`).
fn class(recording: &mut Recording<FileSink>, name: &str) -> ClassRef {
    let name = recording.symbol(name);
    recording.class(Class {
        class_loader: None,
        name,
        package: None,
        modifiers: 0,
        hidden: false,
    })
}

fn write(path: &Path) -> Vec<i64> {
    // Small chunks and a flush midway: the samples span two chunks.
    let options = Options {
        max_chunk_size: 1,
        ..Options::default()
    };
    let mut recording = Recording::create(path, options).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let tick = recording
        .register(
            EventTypeBuilder::new("test.Tick")
                .with_thread()
                .with_stack_trace(),
        )
        .unwrap();
    let mut method = |class_name: &str, name: &str| {
        let class = class(&mut recording, class_name);
        let (name, descriptor) = (recording.symbol(name), recording.symbol("()V"));
        recording.method(Method {
            class,
            name,
            descriptor,
            modifiers: 0,
            hidden: false,
        })
    };
    let (make, handle) = (method("app/Alloc", "make"), method("app/Service", "handle"));
    let (main, run) = (method("app/Main", "main"), method("app/Worker", "run"));
    let stacks: Vec<StackTraceRef> = [
        vec![(make, 10), (handle, 20), (main, 30)],
        vec![(make, 11), (handle, 21), (main, 30)],
        vec![(make, 10), (run, 5)],
    ]
    .into_iter()
    .map(|frames| {
        recording.stack_trace(StackTrace {
            truncated: false,
            frames: frames
                .into_iter()
                .map(|(method, line_number)| StackFrame {
                    method,
                    line_number,
                    bytecode_index: 0,
                    frame_type: FrameType::Interpreted,
                })
                .collect(),
        })
    })
    .collect();
    let mut thread = |name: &str, id: i64| {
        recording.thread(Thread {
            os_name: name.into(),
            os_thread_id: 100 + id,
            java_name: name.into(),
            java_thread_id: id,
            group: None,
        })
    };
    let threads = [
        ("main", thread("main", 1)),
        ("worker-1", thread("worker-1", 2)),
        ("worker-2", thread("worker-2", 3)),
    ];
    let thread = |name: &str| threads.iter().find(|(n, _)| *n == name).unwrap().1;
    let origin = recording.clock().now().0;
    let mut times = Vec::new();
    for (k, sample) in SAMPLES.iter().enumerate() {
        let ticks = Ticks(origin + k as i64 * 1_000_000_000 + 500_000_000);
        times.push(recording.clock().epoch_nanos(ticks));
        let class = class(&mut recording, sample.class);
        recording
            .event(&alloc, ticks)
            .thread(thread(sample.thread))
            .stack_trace(sample.stack.map(|s| stacks[s]))
            .class(class)
            .long(sample.weight)
            .commit()
            .unwrap();
        if k == 2 {
            recording.flush().unwrap();
        }
    }
    for (k, (name, stack)) in TICKS.into_iter().enumerate() {
        recording
            .event(&tick, Ticks(origin + k as i64 * 100_000_000))
            .thread(thread(name))
            .stack_trace(stacks[stack])
            .commit()
            .unwrap();
    }
    recording.close().unwrap();
    times
}

/// `heapsampler convert` of the known recording, with `args`.
fn convert_recording(args: &[&str]) -> Output {
    heapsampler_command(["convert"])
        .arg(&recording().0)
        .args(args)
        .output_in_time()
}

/// Standard output of a conversion that must succeed silently: no
/// progress, no warning (standard error is a pipe here).
fn stdout(args: &[&str]) -> String {
    let output = convert_recording(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {stderr}");
    assert_eq!(stderr, "", "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The folded lines of a conversion to standard output.
fn collapsed(args: &[&str]) -> Vec<String> {
    let mut all = vec!["--format", "collapsed", "-o", "-"];
    all.extend(args);
    stdout(&all).lines().map(str::to_owned).collect()
}

/// [`collapsed`] without the class frames: the stacks of methods.
fn methods(args: &[&str]) -> Vec<String> {
    let mut all = vec!["--no-class-frame"];
    all.extend(args);
    collapsed(&all)
}

const MAIN_STACK: &str = "app.Main.main;app.Service.handle;app.Alloc.make";
const WORKER_STACK: &str = "app.Worker.run;app.Alloc.make";

fn lines(expected: &[(&str, i64)]) -> Vec<String> {
    expected.iter().map(|(s, v)| format!("{s} {v}")).collect()
}

#[test]
fn folds_stacks_root_first_and_sums_weights() {
    // Stacks 0 and 1 differ only in lines: one flame-graph stack. The
    // sample without a stack counts as [unknown]. Each stack ends with the
    // allocated class, as async-profiler writes it. Sorted by stack, in
    // byte order ('[' before 'a').
    assert_eq!(
        collapsed(&[]),
        lines(&[
            ("[unknown];java.lang.String_[k]", 5),
            (&format!("{MAIN_STACK};byte[]_[k]"), 1000 + 600),
            (&format!("{MAIN_STACK};java.lang.String_[k]"), 200),
            (&format!("{WORKER_STACK};byte[]_[k]"), 4000),
            (&format!("{WORKER_STACK};int[]_[k]"), 30),
        ])
    );
    // Without the classes, the stacks of methods.
    assert_eq!(
        methods(&[]),
        lines(&[
            ("[unknown]", 5),
            (MAIN_STACK, 1000 + 200 + 600),
            (WORKER_STACK, 4000 + 30),
        ])
    );
    // The default type is jdk.ObjectAllocationSample: naming it changes nothing.
    assert_eq!(
        collapsed(&["--events", "jdk.ObjectAllocationSample"]),
        collapsed(&[])
    );
    // The top frame only: the stacks cut below it start with a marker
    // where their missing frames would be, so that no root is made up.
    assert_eq!(
        methods(&["--stack-depth", "1"]),
        lines(&[("[truncated];app.Alloc.make", 5830), ("[unknown]", 5)])
    );
    // A depth that keeps every frame of stack 2 but cuts stacks 0 and 1.
    assert_eq!(
        methods(&["--stack-depth", "2"]),
        lines(&[
            ("[truncated];app.Service.handle;app.Alloc.make", 1800),
            ("[unknown]", 5),
            (WORKER_STACK, 4030),
        ])
    );
}

#[test]
fn types_without_a_weight_count_events() {
    // Nor a class: no class frame.
    assert_eq!(
        collapsed(&["--events", "test.Tick"]),
        lines(&[(MAIN_STACK, 2), (WORKER_STACK, 1)])
    );
}

#[test]
fn collapsed_writes_a_file_next_to_the_recording_by_default() {
    let (path, _) = recording();
    let output = heapsampler_command(["convert", "--format", "collapsed", "--no-class-frame"])
        .arg(path)
        .output_in_time();
    assert!(output.status.success());
    let written = std::fs::read_to_string(path.with_file_name("known.collapsed")).unwrap();
    assert_eq!(
        written.lines().collect::<Vec<_>>(),
        lines(&[("[unknown]", 5), (MAIN_STACK, 1800), (WORKER_STACK, 4030)])
    );
}

#[test]
fn filters_select_by_thread_class_and_time() {
    assert_eq!(
        methods(&["--thread", "^worker-"]),
        lines(&[("[unknown]", 5), (WORKER_STACK, 4030)])
    );
    assert_eq!(
        methods(&["--thread", "^worker-2$"]),
        lines(&[(WORKER_STACK, 30)])
    );
    assert_eq!(
        methods(&["--class", r"^byte\[\]$"]),
        lines(&[(MAIN_STACK, 1600), (WORKER_STACK, 4000)])
    );
    assert_eq!(
        methods(&["--class", "String"]),
        lines(&[("[unknown]", 5), (MAIN_STACK, 200)])
    );
    // Offsets from the start: samples 2, 3 and 4 start at 2.5, 3.5 and 4.5 s
    // (give or take the moment between the recording's start and its clock's
    // first reading, far below half a second).
    assert_eq!(
        methods(&["--from", "2s", "--to", "5s"]),
        lines(&[("[unknown]", 5), (WORKER_STACK, 4030)])
    );
    assert_eq!(methods(&["--from", "5000ms"]), lines(&[(MAIN_STACK, 600)]));
    assert_eq!(methods(&["--to", "0.9s"]), lines(&[(MAIN_STACK, 1000)]));
    // Every filter at once: sample 1 alone.
    assert_eq!(
        methods(&["--from", "1s", "--to", "3s", "--thread", "main"]),
        lines(&[(MAIN_STACK, 200)])
    );
    // Nothing passes: empty output and a warning, not an error.
    let output = convert_recording(&["--format", "collapsed", "-o", "-", "--thread", "nobody"]);
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("no events of jdk.ObjectAllocationSample passed the filters")
    );
}

/// `2026-11-22T10:15:00.123456789Z` for epoch nanoseconds.
fn rfc3339(nanos: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(nanos)
        .format("%Y-%m-%dT%H:%M:%S%.9fZ")
        .to_string()
}

#[test]
fn absolute_times_make_a_half_open_window() {
    let times = &recording().1;
    // [time of sample 1, time of sample 3): samples 1 and 2, to the nanosecond.
    let (from, to) = (rfc3339(times[1]), rfc3339(times[3]));
    assert_eq!(
        methods(&["--from", &from, "--to", &to]),
        lines(&[(MAIN_STACK, 200), (WORKER_STACK, 4000)])
    );
    // One nanosecond later at both ends: samples 2 and 3.
    let (from, to) = (rfc3339(times[1] + 1), rfc3339(times[3] + 1));
    assert_eq!(
        methods(&["--from", &from, "--to", &to]),
        lines(&[(WORKER_STACK, 4030)])
    );
    // The same instant in another zone.
    let local = chrono::DateTime::from_timestamp_nanos(times[5])
        .with_timezone(&chrono::FixedOffset::east_opt(2 * 3600).unwrap())
        .to_rfc3339_opts(chrono::SecondsFormat::Nanos, false);
    assert!(local.ends_with("+02:00"), "{local}");
    assert_eq!(methods(&["--from", &local]), lines(&[(MAIN_STACK, 600)]));
}

#[test]
fn filters_apply_to_csv_rows() {
    let rows = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["--events", "jdk.ObjectAllocationSample", "-o", "-"];
        all.extend(args);
        let text = stdout(&all);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        let at = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (thread, weight) = (at("eventThread"), at("weight"));
        reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                (r[thread].to_owned(), r[weight].to_owned())
            })
            .collect()
    };
    let expect = |pairs: &[(&str, i64)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(t, w)| ((*t).to_owned(), w.to_string()))
            .collect()
    };
    assert_eq!(rows(&[]).len(), SAMPLES.len());
    assert_eq!(
        rows(&["--thread", "worker"]),
        expect(&[("worker-1", 4000), ("worker-2", 30), ("worker-1", 5)])
    );
    assert_eq!(
        rows(&["--class", r"\[\]$", "--from", "1s"]),
        expect(&[("worker-1", 4000), ("worker-2", 30), ("main", 600)])
    );
}

#[test]
fn events_without_a_class_are_dropped_by_class() {
    let dir = support::temp_dir("convert_collapsed_class");
    let output = convert_recording(&["--class", ".", "-o", dir.to_str().unwrap()]);
    assert!(output.status.success());
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // test.Tick has no class field; the writer's bookkeeping events neither.
    assert_eq!(files, ["jdk.ObjectAllocationSample.csv"]);
    // Without --class, the ticks are there, and --thread keeps two of them.
    let ticks = stdout(&["--events", "test.Tick", "--thread", "main", "-o", "-"]);
    assert_eq!(ticks.lines().count(), 1 + 2, "{ticks}");
}

fn usage_error(args: &[&str], names: &str) {
    let output = convert_recording(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(names), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_values_are_usage_errors_that_name_them() {
    // `--from=-1s`: a value that starts with `-` needs the `=` form.
    for bad in ["30x", "yesterday", "2026-11-22T10:15:00", "-1s", "1,5s", ""] {
        usage_error(
            &[&format!("--from={bad}")],
            &format!("'{bad}' is not a time"),
        );
        usage_error(&[&format!("--to={bad}")], "500ms, 30s");
    }
    usage_error(
        &["--thread", "worker-[0-"],
        "'worker-[0-' is not a regular expression",
    );
    usage_error(&["--class", "(int"], "'(int' is not a regular expression");
    usage_error(&["--format", "svg"], "svg");
    usage_error(
        &["--from", "2m", "--to", "1m"],
        "--from must come before --to",
    );
    usage_error(
        &[
            "--format",
            "collapsed",
            "--events",
            "jdk.ObjectAllocationSample,test.Tick",
        ],
        "--format collapsed folds one event type",
    );
    usage_error(
        &["-o", "-"],
        "several event types cannot go to standard output",
    );
    // Only folded stacks have class frames to leave out.
    for format in ["csv", "pprof"] {
        usage_error(
            &["--format", format, "--no-class-frame", "-o", "-"],
            "--no-class-frame leaves the allocated class's frame out of folded stacks",
        );
    }
}

#[test]
fn stacks_the_recorder_cut_start_with_the_truncated_marker() {
    let dir = support::temp_dir("convert_collapsed_truncated");
    let path = dir.join("cut.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let class = class(&mut recording, "app/Alloc");
    let (name, descriptor) = (recording.symbol("make"), recording.symbol("()V"));
    let make = recording.method(Method {
        class,
        name,
        descriptor,
        modifiers: 0,
        hidden: false,
    });
    for (truncated, weight) in [(true, 100), (false, 20)] {
        let stack = recording.stack_trace(StackTrace {
            truncated,
            frames: vec![StackFrame {
                method: make,
                line_number: 1,
                bytecode_index: 0,
                frame_type: FrameType::Interpreted,
            }],
        });
        recording
            .event(&alloc, Ticks(1))
            .thread(None)
            .stack_trace(Some(stack))
            .class(class)
            .long(weight)
            .commit()
            .unwrap();
    }
    recording.close().unwrap();
    let output = heapsampler_command(["convert", "--format", "collapsed", "-o", "-"])
        .arg(&path)
        .output_in_time();
    assert!(output.status.success());
    // The class frame tops the stack, cut or not.
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "[truncated];app.Alloc.make;app.Alloc_[k] 100\napp.Alloc.make;app.Alloc_[k] 20\n"
    );
}
