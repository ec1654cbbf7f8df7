//! `heapsampler top` and `convert --format collapsed` on recordings whose
//! allocations are the TLAB events: the JDK's, with the TLAB events on
//! alone or beside allocation sampling, and async-profiler's, written here
//! with known weights. Totals are checked against `jfr print --json`'s
//! values and against the weights written.

use heapsampler_test_support as support;

use std::path::{Path, PathBuf};

use heapsampler_cli::analysis::top::{self, GroupBy, Grouping, Groups, Query, Table};
use heapsampler_cli::model::allocation::Source;
use heapsampler_cli::output::human::human_bytes;
use heapsampler_cli::pipeline::Pipeline;
use heapsampler_test_support::heapsampler_ok;
use jfr_format::names::{event, field};
use jfr_reader::file::RecordingFile;
use jfr_writer::{
    EventTypeBuilder, FieldSpec, FieldType, FileSink, Options, Recording, Thread, Ticks, Unit,
    events,
};

/// `heapsampler top PATH ARGS...`'s table.
fn top_table(path: &Path, args: &[&str]) -> String {
    let mut all = vec!["top", path.to_str().unwrap()];
    all.extend(args);
    heapsampler_ok(&all).0
}

/// The library's table for `top` by site: its total is exact, where the
/// command line rounds.
fn top_exact(path: &Path) -> Table {
    let query = Query {
        by: GroupBy::Site,
        live: false,
        min_gcs: 0,
    };
    top::top(
        RecordingFile::open(path).unwrap(),
        query,
        &Pipeline::default(),
    )
    .unwrap()
}

/// The sum of the values of `convert --format collapsed` (ARGS added), and
/// its standard error.
fn collapsed_total(path: &Path, args: &[&str]) -> (i64, String) {
    let mut all = vec![
        "convert",
        path.to_str().unwrap(),
        "--format",
        "collapsed",
        "-o",
        "-",
    ];
    all.extend(args);
    let (stdout, stderr) = heapsampler_ok(&all);
    let total = stdout
        .lines()
        .map(|line| line.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap())
        .sum();
    (total, stderr)
}

/// A JDK 17 recording of one second of `AllocationMix` on 2 threads, with
/// the settings files given (`-XX:StartFlightRecording` merges them in
/// order).
fn jdk_recording(dir: &Path, name: &str, settings: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = dir.join(name);
    let settings: Vec<String> = settings
        .iter()
        .map(|s| match *s {
            "profile" => "settings=profile".to_owned(),
            file => format!("settings={}", root.join(file).display()),
        })
        .collect();
    let settings: Vec<&str> = settings.iter().map(String::as_str).collect();
    let workload = root.join("testdata/workloads/AllocationMix.java");
    support::record_with_jfr(&path, &settings, &[workload.to_str().unwrap(), "1", "2"]);
    path
}

/// Per event type, the events `jfr print --json` reads and the sum of
/// their `weight_field`: `(count, sum)`.
fn json_sums(document: &serde_json::Value, event_type: &str, weight_field: &str) -> (u64, i64) {
    let mut sums = (0, 0);
    for event in support::json_events(document) {
        if event["type"] == event_type {
            sums.0 += 1;
            sums.1 += event["values"][weight_field]
                .as_i64()
                .unwrap_or_else(|| panic!("{event_type}.{weight_field}: {event}"));
        }
    }
    sums
}

const TLAB_JFC: &str = "testdata/jfc/allocation-tlab.jfc";

#[test]
fn a_jdk_recording_of_tlab_events_is_ranked_by_tlab_and_allocation_size() {
    let dir = support::temp_dir("convert_tlab_jdk");
    let path = jdk_recording(&dir, "tlab.jfr", &[TLAB_JFC]);
    let json = support::print_json(&path);
    let (inside, inside_bytes) = json_sums(&json, event::OBJECT_ALLOCATION_IN_NEW_TLAB, "tlabSize");
    let (outside, outside_bytes) = json_sums(
        &json,
        event::OBJECT_ALLOCATION_OUTSIDE_TLAB,
        "allocationSize",
    );
    assert!(inside > 0 && outside > 0, "{inside} {outside}");
    assert_eq!(
        json_sums(&json, event::OBJECT_ALLOCATION_SAMPLE, "weight").0,
        0
    );
    let expected = inside_bytes + outside_bytes;

    let table = top_exact(&path);
    assert_eq!(table.total.bytes(), expected as f64);
    assert_eq!(table.events, inside + outside);
    let text = top_table(&path, &[]);
    assert!(
        text.contains(&format!(
            "total: {} estimated from {} samples (95% interval ",
            human_bytes(expected as f64),
            inside + outside
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "from {inside} jdk.ObjectAllocationInNewTLAB events by tlabSize and {outside} \
             jdk.ObjectAllocationOutsideTLAB events by allocationSize\n"
        )),
        "{text}"
    );
    // Sites are ranked: the workload's own allocating lines are there.
    assert!(text.contains("AllocationMix.work("), "{text}");
    let classes = top_table(&path, &["--by", "class", "-n", "100"]);
    assert!(classes.contains(" byte[]\n"), "{classes}");

    // The folded stacks add up to the same bytes, and say what they fold.
    let (folded, stderr) = collapsed_total(&path, &[]);
    assert_eq!(folded, expected);
    assert!(
        stderr.contains(
            "folded jdk.ObjectAllocationInNewTLAB and jdk.ObjectAllocationOutsideTLAB events by \
             tlabSize and allocationSize"
        ),
        "{stderr}"
    );
    // Each TLAB type named alone folds by its own field.
    assert_eq!(
        collapsed_total(&path, &["--events", "jdk.ObjectAllocationInNewTLAB"]).0,
        inside_bytes
    );
    assert_eq!(
        collapsed_total(&path, &["--events", "jdk.ObjectAllocationOutsideTLAB"]).0,
        outside_bytes
    );
    // Each stack ends with the allocated class, marked as async-profiler
    // marks it: _[i] in a new TLAB, _[k] outside one.
    for (event, suffix) in [
        ("jdk.ObjectAllocationInNewTLAB", "_[i]"),
        ("jdk.ObjectAllocationOutsideTLAB", "_[k]"),
    ] {
        let (stdout, _) = heapsampler_ok([
            "convert",
            path.to_str().unwrap(),
            "--format",
            "collapsed",
            "--events",
            event,
            "-o",
            "-",
        ]);
        assert!(!stdout.is_empty(), "{event}");
        for line in stdout.lines() {
            let stack = line.rsplit_once(' ').unwrap().0;
            assert!(stack.ends_with(suffix), "{event}: {line}");
        }
    }
    // No file left beside the recording: the output went to stdout.
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert_eq!(files, ["tlab.jfr"]);
}

#[test]
fn a_recording_with_both_kinds_counts_the_samples_only() {
    let dir = support::temp_dir("convert_tlab_both");
    let path = jdk_recording(&dir, "both.jfr", &["profile", TLAB_JFC]);
    let json = support::print_json(&path);
    let (samples, sample_bytes) = json_sums(&json, event::OBJECT_ALLOCATION_SAMPLE, "weight");
    let (inside, inside_bytes) = json_sums(&json, event::OBJECT_ALLOCATION_IN_NEW_TLAB, "tlabSize");
    let (outside, _) = json_sums(
        &json,
        event::OBJECT_ALLOCATION_OUTSIDE_TLAB,
        "allocationSize",
    );
    assert!(samples > 0 && inside > 0, "{samples} {inside}");

    let table = top_exact(&path);
    assert_eq!(table.total.bytes(), sample_bytes as f64);
    assert_ne!(table.total.bytes(), (sample_bytes + inside_bytes) as f64);
    let text = top_table(&path, &[]);
    assert!(
        text.contains(&format!(
            "from {samples} jdk.ObjectAllocationSample events by weight\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "not added: {} jdk.ObjectAllocationInNewTLAB and jdk.ObjectAllocationOutsideTLAB \
             events, which record the same allocations\n",
            inside + outside
        )),
        "{text}"
    );

    let (folded, stderr) = collapsed_total(&path, &[]);
    assert_eq!(folded, sample_bytes);
    assert!(
        stderr.contains(&format!(
            "left out {} jdk.ObjectAllocationInNewTLAB and jdk.ObjectAllocationOutsideTLAB events",
            inside + outside
        )),
        "{stderr}"
    );
}

/// Writes the TLAB events as async-profiler declares and writes them:
/// fields and order from async-profiler's `src/jfrMetadata.cpp`
/// (`jdk.ObjectAllocationInNewTLAB`: objectClass, allocationSize, tlabSize,
/// contextId; `jdk.ObjectAllocationOutsideTLAB`: objectClass,
/// allocationSize, contextId), values as `src/flightRecorder.cpp` writes
/// them (`allocationSize` the object's size and `tlabSize` the sample's
/// weight, `max(size, interval)`, in the new-TLAB event; the weight as
/// `allocationSize` outside). Returns the bytes per site written.
fn async_profiler_recording(path: &Path) -> [(&'static str, i64); 3] {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let sites = async_profiler_events(&mut recording);
    recording.close().unwrap();
    sites
}

/// Writes [`async_profiler_recording`]'s events into `recording`.
fn async_profiler_events(recording: &mut Recording<FileSink>) -> [(&'static str, i64); 3] {
    let bytes = |name: &str, label: &str| {
        FieldSpec::new(name, FieldType::Long)
            .unit(Unit::Bytes)
            .label(label)
    };
    let class_field =
        || FieldSpec::new(field::OBJECT_CLASS, FieldType::Class).label("Object Class");
    let context = || FieldSpec::new("contextId", FieldType::Long).label("Context ID");
    let in_new_tlab = recording
        .register(
            EventTypeBuilder::new(event::OBJECT_ALLOCATION_IN_NEW_TLAB)
                .label("Allocation in new TLAB")
                .category(&["Java Application"])
                .with_thread()
                .with_stack_trace()
                .field(class_field())
                .field(bytes(field::ALLOCATION_SIZE, "Allocation Size"))
                .field(bytes(field::TLAB_SIZE, "TLAB Size"))
                .field(context()),
        )
        .unwrap();
    let outside_tlab = recording
        .register(
            EventTypeBuilder::new(event::OBJECT_ALLOCATION_OUTSIDE_TLAB)
                .label("Allocation outside TLAB")
                .category(&["Java Application"])
                .with_thread()
                .with_stack_trace()
                .field(class_field())
                .field(bytes(field::ALLOCATION_SIZE, "Allocation Size"))
                .field(context()),
        )
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "worker".into(),
        os_thread_id: 7,
        java_name: "worker".into(),
        java_thread_id: 7,
        group: None,
    });
    let interval = 524_288;
    let site = |recording: &mut Recording<_>, method: &str| {
        support::one_frame_stack(recording, "app/Cache", method)
    };
    let small = site(recording, "small");
    let large = site(recording, "large");
    let huge = site(recording, "huge");
    let strings = support::class_of(recording, "java/lang/String");
    let arrays = support::class_of(recording, "[B");
    // Three small objects, each standing for the interval; one of 1 MiB,
    // larger than the interval, for itself.
    for (n, (stack, class, size)) in [
        (small, strings, 24),
        (small, strings, 24),
        (small, strings, 24),
        (large, arrays, 1_048_576),
    ]
    .into_iter()
    .enumerate()
    {
        recording
            .event(&in_new_tlab, Ticks(n as i64))
            .thread(thread)
            .stack_trace(stack)
            .class(class)
            .long(size)
            .long(size.max(interval))
            .long(0)
            .commit()
            .unwrap();
    }
    // Two allocations outside a TLAB.
    for n in 0..2 {
        recording
            .event(&outside_tlab, Ticks(10 + n))
            .thread(thread)
            .stack_trace(huge)
            .class(arrays)
            .long(4_000_000)
            .long(0)
            .commit()
            .unwrap();
    }
    [
        ("app.Cache.huge(1)", 8_000_000),
        ("app.Cache.small(1)", 3 * interval),
        ("app.Cache.large(1)", 1_048_576),
    ]
}

#[test]
fn an_async_profiler_recording_is_summed_by_its_weights() {
    let dir = support::temp_dir("convert_tlab_async_profiler");
    let path = dir.join("async-profiler.jfr");
    let sites = async_profiler_recording(&path);
    // The JDK reads the file, with the values written.
    let json = support::print_json(&path);
    assert_eq!(
        json_sums(&json, event::OBJECT_ALLOCATION_IN_NEW_TLAB, "tlabSize"),
        (4, 3 * 524_288 + 1_048_576)
    );
    assert_eq!(
        json_sums(
            &json,
            event::OBJECT_ALLOCATION_IN_NEW_TLAB,
            "allocationSize"
        ),
        (4, 3 * 24 + 1_048_576)
    );
    assert_eq!(
        json_sums(
            &json,
            event::OBJECT_ALLOCATION_OUTSIDE_TLAB,
            "allocationSize"
        ),
        (2, 8_000_000)
    );
    let expected: i64 = sites.iter().map(|s| s.1).sum();

    let table = top_exact(&path);
    assert_eq!(table.total.bytes(), expected as f64);
    let exact: Vec<(&str, f64, u64)> = table
        .entries
        .iter()
        .map(|e| (e.key.as_str(), e.bytes(), e.samples()))
        .collect();
    assert_eq!(
        exact,
        [
            (sites[0].0, sites[0].1 as f64, 2),
            (sites[1].0, sites[1].1 as f64, 3),
            (sites[2].0, sites[2].1 as f64, 1),
        ]
    );
    let text = top_table(&path, &[]);
    // Bytes, share, objects (not known: TLAB events carry no sampled
    // object's size), samples and site of each row; the intervals are the
    // core's, tested there.
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .take(3)
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    let picked: Vec<[&str; 5]> = rows
        .iter()
        .map(|c| [c[1], c[3], c[4], c[6], c[7]])
        .collect();
    assert_eq!(
        picked,
        [
            ["8.0 MB", "75.3%", "-", "2", "app.Cache.huge(1)"],
            ["1.6 MB", "14.8%", "-", "3", "app.Cache.small(1)"],
            ["1.0 MB", "9.9%", "-", "1", "app.Cache.large(1)"],
        ],
        "{text}"
    );
    for needed in [
        "total: 10.6 MB estimated from 6 samples (95% interval ",
        "objects: not estimated",
        "from 4 jdk.ObjectAllocationInNewTLAB events by tlabSize and 2 \
         jdk.ObjectAllocationOutsideTLAB events by allocationSize\n",
    ] {
        assert!(text.contains(needed), "{needed}\n{text}");
    }
    assert_eq!(collapsed_total(&path, &[]).0, expected);
}

/// Writes three `jdk.ObjectAllocationSample` events at two sites into
/// `recording`; returns the lines `convert --format collapsed` folds them
/// into.
fn sample_events(recording: &mut Recording<FileSink>) -> [&'static str; 2] {
    let sample = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "main".into(),
        os_thread_id: 1,
        java_name: "main".into(),
        java_thread_id: 1,
        group: None,
    });
    let strings = support::class_of(recording, "java/lang/String");
    let arrays = support::class_of(recording, "[B");
    let mut site = |method: &str| support::one_frame_stack(recording, "app/Sampled", method);
    let (small, large) = (site("small"), site("large"));
    for (n, (stack, class, weight)) in [
        (small, strings, 512),
        (large, arrays, 4096),
        (small, strings, 512),
    ]
    .into_iter()
    .enumerate()
    {
        recording
            .event(&sample, Ticks(n as i64))
            .thread(thread)
            .stack_trace(stack)
            .class(class)
            .long(weight)
            .commit()
            .unwrap();
    }
    [
        "app.Sampled.large;byte[]_[k] 4096",
        "app.Sampled.small;java.lang.String_[k] 1024",
    ]
}

/// Writes a recording of two chunks at `path`, one of
/// [`sample_events`] and one of [`async_profiler_events`], the samples'
/// first or last; returns the lines `convert --format collapsed` folds the
/// samples into.
fn chunk_of_each_kind(path: &Path, samples_first: bool) -> [&'static str; 2] {
    // Small chunks: a flush ends the first.
    let options = Options {
        max_chunk_size: 1,
        ..Options::default()
    };
    let mut recording = Recording::create(path, options).unwrap();
    let expected = if samples_first {
        let expected = sample_events(&mut recording);
        recording.flush().unwrap();
        async_profiler_events(&mut recording);
        expected
    } else {
        async_profiler_events(&mut recording);
        recording.flush().unwrap();
        sample_events(&mut recording)
    };
    recording.close().unwrap();
    expected
}

/// A recording whose two chunks hold one kind of allocation events each:
/// the samples are folded, whether their chunk comes first or last and on
/// one thread or two, and every TLAB event is counted as left out, those
/// read after a chunk found samples too (they are read but no longer
/// folded).
#[test]
fn chunks_of_either_kind_fold_the_samples_in_any_order() {
    let dir = support::temp_dir("convert_tlab_chunks");
    for samples_first in [false, true] {
        let path = dir.join(format!("samples-first-{samples_first}.jfr"));
        let expected = chunk_of_each_kind(&path, samples_first);
        // The JDK reads both chunks, with every event.
        let summary = support::summary(&path);
        assert_eq!(support::summary_chunks(&summary), 2, "{summary}");
        for (event_type, events) in [
            (event::OBJECT_ALLOCATION_SAMPLE, 3),
            (event::OBJECT_ALLOCATION_IN_NEW_TLAB, 4),
            (event::OBJECT_ALLOCATION_OUTSIDE_TLAB, 2),
        ] {
            assert_eq!(
                support::summary_count(&summary, event_type),
                events,
                "{event_type}: {summary}"
            );
        }
        for threads in ["1", "2"] {
            let (stdout, stderr) = heapsampler_ok([
                "convert",
                path.to_str().unwrap(),
                "--format",
                "collapsed",
                "--threads",
                threads,
                "-o",
                "-",
            ]);
            let lines: Vec<&str> = stdout.lines().collect();
            let case = format!("samples first: {samples_first}, {threads} threads");
            assert_eq!(lines, expected, "{case}");
            assert!(
                stderr.contains(
                    "left out 6 jdk.ObjectAllocationInNewTLAB and \
                     jdk.ObjectAllocationOutsideTLAB events"
                ),
                "{case}: {stderr}"
            );
        }
    }
}

/// `top` on [`chunk_of_each_kind`]'s recordings: the samples are summed,
/// whether their chunk comes first or last and on one thread or two, and
/// every TLAB event is counted as not added, those read after a chunk
/// found samples too (they are read but no longer summed).
#[test]
fn chunks_of_either_kind_sum_the_samples_in_any_order() {
    let dir = support::temp_dir("convert_tlab_chunks_top");
    let query = Query {
        by: GroupBy::Site,
        live: false,
        min_gcs: 0,
    };
    for samples_first in [false, true] {
        let path = dir.join(format!("samples-first-{samples_first}.jfr"));
        chunk_of_each_kind(&path, samples_first);
        let case = format!("samples first: {samples_first}");
        let text = top_table(&path, &[]);
        for needed in [
            &format!(
                "total: {} estimated from 3 samples (95% interval ",
                human_bytes(5120.0)
            ),
            "from 3 jdk.ObjectAllocationSample events by weight\n",
            "not added: 6 jdk.ObjectAllocationInNewTLAB and jdk.ObjectAllocationOutsideTLAB \
             events, which record the same allocations\n",
        ] {
            assert!(text.contains(needed), "{case}: {needed}\n{text}");
        }
        for threads in [1, 2] {
            let file = RecordingFile::open(&path).unwrap();
            let table = Pipeline::on(threads)
                .run(file, &Grouping::new(query), Groups::new(query), &mut |_| {})
                .unwrap()
                .merged
                .table();
            let exact: Vec<(&str, f64, u64)> = table
                .entries
                .iter()
                .map(|e| (e.key.as_str(), e.bytes(), e.samples()))
                .collect();
            assert_eq!(
                exact,
                [
                    ("app.Sampled.large(1)", 4096.0, 1),
                    ("app.Sampled.small(1)", 1024.0, 2),
                ],
                "{case}, {threads} threads"
            );
            assert_eq!(table.source, Source::AllocationSamples, "{case}");
            assert_eq!(table.events, 3, "{case}");
            assert_eq!(
                table.left_out,
                [(Source::TlabAllocations, 6)],
                "{case}, {threads} threads"
            );
        }
    }
}
