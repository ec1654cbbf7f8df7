//! A recording of generational ZGC whose agent tracked the liveness of a
//! share of the samples (5%), made with jfr-writer so that every figure is
//! known: `top --live`, `leaks` and `report` count each tracked sample as
//! its weight over its tracking probability, follow the live bytes after
//! the major collections only, and say what live means there.
//!
//! The recording: 60 s; a major collection every 5 s from 5 s (0.4 s long,
//! five pauses), a minor one every other second (three pauses), each a
//! `jdk.GarbageCollection` named `ZGC Major` or `ZGC Minor`, each pause a
//! `heapsampler.GarbageCollection` (JVMTI's count). Three sites, each
//! sample with its `jdk.ObjectAllocationSample`:
//! - `Leak.add`: 2,000 samples of 24 bytes evenly in time, never freed, one
//!   in 20 tracked (`trackingProbability` 0.05 on all): a leak of 2,000 x
//!   524,300 bytes in 60 s, 1,048.6 MB a minute;
//! - `Cache.churn`: the same, each object freed by the first major
//!   collection to start after its allocation (found dead at its last
//!   pause): after each major collection, what was allocated during it;
//! - `Big.alloc`: 3 samples of 4 MB the agent did not track (probability 0).

use std::path::{Path, PathBuf};

use heapsampler_test_support::{self as support, Deadline, browser, heapsampler_ok};
use jfr_writer::events::{
    self, GarbageCollection, GcTypes, JdkGarbageCollection, LiveSet, ObjectAllocationSample,
    ObjectLifetime,
};
use jfr_writer::{FrameType, Options, Recording, StackFrame, StackTrace, Thread, Ticks};

const SECOND: i64 = 1_000_000_000;

/// The weight of a 24-byte sample at 512 KiB.
const WEIGHT: i64 = 524_300;

/// The tracking probability of `Leak.add`'s and `Cache.churn`'s samples.
const SHARE: f64 = 0.05;

/// Samples of each of `Leak.add` and `Cache.churn`.
const SAMPLES: i64 = 2000;

/// The recording's length.
const LENGTH: i64 = 60 * SECOND;

/// A collection: (name, start, duration, its pauses' starts).
struct Collection {
    major: bool,
    start: i64,
    duration: i64,
    pauses: Vec<i64>,
}

/// The collections, in time order: majors at 5, 10, ... 55 s, minors at
/// the other whole seconds.
fn collections() -> Vec<Collection> {
    (1..60)
        .map(|second| {
            let start = second * SECOND;
            let major = second % 5 == 0;
            let offsets: &[i64] = if major {
                &[1, 100, 150, 250, 300]
            } else {
                &[1, 20, 40]
            };
            Collection {
                major,
                start,
                duration: if major { 400 } else { 50 } * SECOND / 1000,
                pauses: offsets
                    .iter()
                    .map(|ms| start + ms * SECOND / 1000)
                    .collect(),
            }
        })
        .collect()
}

/// The `n`th sample's allocation time (of `SAMPLES` evenly in 60 s).
fn allocated(n: i64) -> i64 {
    (2 * n + 1) * LENGTH / (2 * SAMPLES)
}

fn write_recording(path: &Path) {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let gc = GcTypes::register(&mut recording).unwrap();
    let jdk_collection = recording
        .register(events::jdk_garbage_collection(&gc))
        .unwrap();
    let pause_event = recording.register(events::garbage_collection()).unwrap();
    let sample_event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let lifetime_event = recording.register(events::object_lifetime()).unwrap();
    let live_set_event = recording.register(events::live_set()).unwrap();
    let (major, minor) = (
        gc.name(&mut recording, "ZGC Major").unwrap(),
        gc.name(&mut recording, "ZGC Minor").unwrap(),
    );
    // The pauses' ids in time order, and when each major's last one was.
    let collections = collections();
    let mut pause_ids = Vec::new();
    for collection in &collections {
        for &start in &collection.pauses {
            pause_ids.push((start, pause_ids.len() as i32 + 1));
        }
    }
    let pause_of = |at: i64| pause_ids.iter().find(|(start, _)| *start == at).unwrap().1;
    let freed_by = |allocated: i64| {
        collections
            .iter()
            .find(|c| c.major && c.start > allocated)
            .map(|c| {
                let last = *c.pauses.last().unwrap();
                (last + SECOND / 2000, pause_of(last))
            })
    };
    let site = |recording: &mut Recording<_>, n: i64, owner: &str, class: &str| {
        let thread = recording.thread(Thread {
            os_name: format!("worker-{n}"),
            os_thread_id: 100 + n,
            java_name: format!("worker-{n}"),
            java_thread_id: n,
            group: None,
        });
        let class = support::class_of(recording, class);
        let (owner, method) = owner.split_once('.').unwrap();
        let method = support::method_of(recording, owner, method);
        let stack = recording.stack_trace(StackTrace {
            truncated: false,
            frames: vec![StackFrame {
                method,
                line_number: 10 + n as i32,
                bytecode_index: 0,
                frame_type: FrameType::Unknown,
            }],
        });
        (thread, class, stack)
    };
    let leak = site(&mut recording, 0, "Leak.add", "[B");
    let cache = site(&mut recording, 1, "Cache.churn", "java/lang/String");
    let big = site(&mut recording, 2, "Big.alloc", "[J");
    // (site, allocated, weight, size, probability, tracked, freed at and by)
    let mut lifetimes = Vec::new();
    for n in 0..SAMPLES {
        let at = allocated(n);
        let tracked = n % 20 == 0;
        lifetimes.push((leak, at, WEIGHT, 24, SHARE, tracked, None));
        lifetimes.push((cache, at, WEIGHT, 24, SHARE, tracked, freed_by(at)));
    }
    for n in 0..3 {
        let at = (10 + 20 * n) * SECOND;
        lifetimes.push((big, at, 4_000_000, 4_000_000, 0.0, false, None));
    }
    for collection in &collections {
        let name = if collection.major { major } else { minor };
        for &start in &collection.pauses {
            GarbageCollection {
                start_time: Ticks(start),
                duration: SECOND / 2000,
                gc_id: pause_of(start),
            }
            .write(&mut recording, &pause_event)
            .unwrap();
        }
        JdkGarbageCollection {
            start_time: Ticks(collection.start),
            duration: collection.duration,
            gc_id: if collection.major { 1000 } else { 0 } + (collection.start / SECOND) as i32,
            name: Some(name),
            cause: None,
            sum_of_pauses: 0,
            longest_pause: 0,
        }
        .write(&mut recording, &jdk_collection)
        .unwrap();
    }
    for &((thread, class, stack), at, weight, size, probability, tracked, freed) in &lifetimes {
        ObjectAllocationSample {
            start_time: Ticks(at),
            event_thread: Some(thread),
            stack_trace: Some(stack).into(),
            object_class: Some(class),
            weight,
        }
        .write(&mut recording, &sample_event)
        .unwrap();
        let (end, freed_by_gc_id, live) = match freed {
            Some((end, id)) if tracked => (end, id, false),
            _ => (LENGTH, 0, tracked),
        };
        ObjectLifetime {
            start_time: Ticks(at),
            duration: end - at,
            event_thread: Some(thread),
            stack_trace: Some(stack).into(),
            object_class: Some(class),
            object_size: size,
            weight,
            live,
            gcs_survived: 0,
            freed_by_gc_id,
            tracked,
            tracking_probability: probability,
        }
        .write(&mut recording, &lifetime_event)
        .unwrap();
    }
    LiveSet {
        start_time: Ticks(LENGTH),
        collected: false,
        last_collection: Ticks(pause_ids.last().unwrap().0 + SECOND / 2000),
        collections: pause_ids.len() as i64,
        live_objects: 0,
    }
    .write(&mut recording, &live_set_event)
    .unwrap();
    recording.close().unwrap();
    // The JDK reads it, with the counts written.
    let summary = support::summary(path);
    assert_eq!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
        2 * SAMPLES as u64 + 3
    );
    assert_eq!(
        support::summary_count(&summary, "jdk.GarbageCollection"),
        59
    );
    assert_eq!(
        support::summary_count(&summary, "heapsampler.GarbageCollection"),
        11 * 5 + 48 * 3
    );
}

/// The recording, written once per test binary.
fn recording() -> PathBuf {
    static MADE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let path = support::temp_dir("convert_generational_zgc").join("zgc.jfr");
        write_recording(&path);
        path
    })
    .clone()
}

/// What live means in this recording, as every output says it: 200 of
/// 4,003 samples tracked.
const LIVE_AS_OF_THE_LAST_MAJOR: &str = "live: as of the last major collection (generational \
     ZGC, whose young collections keep what the agent tracks), which ended at 55.40 s, 4.60 s \
     before the end; liveness tracked for 5.0% of samples";

/// `1.0 GB` (`kB`, `MB`) in bytes.
fn bytes(text: &str) -> f64 {
    let (number, unit) = text.trim().split_once(' ').unwrap();
    let scale = match unit.trim_end_matches("/min") {
        "B" => 1.0,
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        other => panic!("unit {other} in {text}"),
    };
    number.trim_start_matches('+').parse::<f64>().unwrap() * scale
}

/// `857.9 MB-1.3 GB` or `1.1-1.3 GB` in bytes, the bounds split at
/// `between`; a lower bound without a unit has the upper's.
fn interval(text: &str, between: &str) -> (f64, f64) {
    let (low, high) = text.split_once(between).unwrap();
    let unit = high.trim().split(' ').nth(1).unwrap();
    let low = if low.trim().contains(' ') {
        low.to_owned()
    } else {
        format!("{low} {unit}")
    };
    (bytes(&low), bytes(high))
}

#[test]
fn top_live_counts_a_tracked_sample_for_those_not_drawn() {
    let recording = recording();
    let (table, _) = heapsampler_ok(["top", recording.to_str().unwrap(), "--live"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .take_while(|line| !line.starts_with("total"))
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    // Leak.add: 100 tracked samples, each standing for 524,300 / 0.05
    // bytes: 1,048.6 MB, not the 52.4 MB of their weights. Cache.churn:
    // the 8 tracked after the last major collection (55 s), 83.9 MB.
    assert_eq!(rows.len(), 2, "{table}");
    assert_eq!(
        (rows[0][1], rows[0][6], rows[0][7]),
        ("1.0 GB", "100", "Leak.add(10)"),
        "{table}"
    );
    assert_eq!(
        (rows[1][1], rows[1][6], rows[1][7]),
        ("83.9 MB", "8", "Cache.churn(11)"),
        "{table}"
    );
    // The interval of 100 samples of 10.5 MB each: about ±20%.
    let (low, high) = interval(rows[0][2], "-");
    assert!(
        low > 0.8e9 && low < 0.9e9 && high > 1.2e9 && high < 1.35e9,
        "{table}"
    );
    // Samples not drawn are not untracked: only Big.alloc's 3 are.
    assert!(
        table.contains("not tracked for liveness: 12.0 MB estimated from 3 samples"),
        "{table}"
    );
    assert!(table.contains(LIVE_AS_OF_THE_LAST_MAJOR), "{table}");
}

#[test]
fn leaks_follow_the_major_collections_and_find_the_leak_at_its_rate() {
    let recording = recording();
    let (text, _) = heapsampler_ok(["leaks", recording.to_str().unwrap()]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("1 suspect, growing +"), "{text}");
    // The checkpoints are the 11 major collections, not the 59
    // collections nor their 199 pauses.
    assert!(
        lines[1].starts_with("from the live bytes of 2 sites after each of 11 major collections"),
        "{text}"
    );
    // The leak's rate, 2,000 samples of 524,300 bytes in 60 s, within its
    // growth interval.
    let rate = (SAMPLES * WEIGHT) as f64;
    let row = lines
        .iter()
        .find(|line| line.contains("Leak.add(10)"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    // Printed a minute: the rate a minute is the 60 s's leak.
    let (low, high) = interval(cells[2], " to ");
    assert!(
        low < rate && rate < high,
        "{rate} not in {}: {text}",
        cells[2]
    );
    assert!(!text.contains("Cache.churn"), "not a suspect: {text}");
    assert!(
        text.contains(
            "live: as of each major collection (generational ZGC, whose young collections \
             keep what the agent tracks); liveness tracked for 5.0% of samples"
        ),
        "{text}"
    );
    assert!(
        text.contains("and the major collections they outlived"),
        "{text}"
    );
}

/// The report says it too, as Chromium shows the page: its verdict is
/// `leaks`', its details and the recording's facts say what live means,
/// and the live flame graph's subtitle says it.
#[test]
fn the_report_says_what_live_means() {
    let recording = recording();
    let html = recording.with_extension("html");
    heapsampler_ok([
        "report",
        recording.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    let Some(chromium) = browser::chromium("the_report_says_what_live_means") else {
        return;
    };
    let page = browser::checked_in_browser(&chromium, &html);
    assert_eq!(page["errors"], serde_json::json!([]), "{page:#}");
    let (leaks, _) = heapsampler_ok(["leaks", recording.to_str().unwrap()]);
    assert_eq!(
        page["verdict"].as_str().unwrap().trim(),
        leaks.lines().next().unwrap()
    );
    let text = page["text"].as_str().unwrap().replace('\n', " ");
    for said in [
        "Live: as of each major collection (generational ZGC, whose young collections keep \
         what the agent tracks); liveness tracked for 5.0% of samples.",
        "11 major (generational ZGC; 199 pauses)",
        LIVE_AS_OF_THE_LAST_MAJOR.trim_start_matches("live: "),
        "(as of the last major collection (generational ZGC); liveness tracked for 5.0% of \
         samples)",
    ] {
        assert!(text.contains(said), "{said}\nnot in\n{text}");
    }
    let shown = page["suspects"].as_array().unwrap();
    assert_eq!(shown.len(), 1, "{page:#}");
    assert_eq!(shown[0]["site"], "Leak.add(10)");
    // One point of the chart per major collection.
    assert_eq!(page["series"].as_array().unwrap().len(), 11, "{page:#}");
}

/// pprof's in-use types count the tracked samples as `top --live` does,
/// and the profile's comment says what live means, as `go tool pprof`
/// reads them.
#[test]
fn pprof_in_use_says_what_live_means() {
    let test = "pprof_in_use_says_what_live_means";
    if support::needed_tool(test, &["go"]).is_none() {
        return;
    }
    let recording = recording();
    let profile = recording.with_file_name("zgc.pb.gz");
    let (_, said) = heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "pprof",
        "-o",
        profile.to_str().unwrap(),
    ]);
    // Said where it is news.
    assert!(
        said.contains(&format!("inuse_: {LIVE_AS_OF_THE_LAST_MAJOR}")),
        "{said}"
    );
    let pprof = |args: &[&str]| {
        let output = std::process::Command::new("go")
            .args(["tool", "pprof"])
            .args(args)
            .arg(&profile)
            .output_in_time();
        assert!(output.status.success(), "{}", support::text(&output.stderr));
        support::text(&output.stdout)
    };
    assert_eq!(
        pprof(&["-comments"]).trim(),
        format!("inuse_objects, inuse_space: {LIVE_AS_OF_THE_LAST_MAJOR}")
    );
    // inuse_space's total: 108 tracked samples of 524,300 / 0.05 bytes.
    let top = pprof(&["-top", "-sample_index=inuse_space", "-unit=B"]);
    let total = 108.0 * WEIGHT as f64 / SHARE;
    let shown = top
        .lines()
        .find_map(|line| line.strip_prefix("Showing nodes accounting for "))
        .and_then(|rest| rest.rsplit(" of ").next())
        .and_then(|of| of.strip_suffix(" total"))
        .and_then(|bytes| bytes.strip_suffix('B'))
        .and_then(|bytes| bytes.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{top}"));
    assert!(
        (shown - total).abs() <= 1.0,
        "{shown} against {total}\n{top}"
    );
}

/// A tracked sample whose tracking probability is 0 would stand for
/// infinitely many: every output that reads liveness refuses it, naming
/// the field and where it is.
#[test]
fn a_tracking_probability_that_cannot_be_is_a_clear_error() {
    let path = support::temp_dir("convert_generational_zgc_bad").join("bad.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let lifetime_event = recording.register(events::object_lifetime()).unwrap();
    ObjectLifetime {
        start_time: Ticks(1),
        duration: 1,
        event_thread: None,
        stack_trace: None.into(),
        object_class: None,
        object_size: 24,
        weight: WEIGHT,
        live: true,
        gcs_survived: 0,
        freed_by_gc_id: 0,
        tracked: true,
        tracking_probability: 0.0,
    }
    .write(&mut recording, &lifetime_event)
    .unwrap();
    recording.close().unwrap();
    for args in [
        &["top", "--live"][..],
        &["leaks"],
        &["flame", "--live", "-o", "-"],
    ] {
        let output = support::heapsampler_command(&args[..1])
            .arg(&path)
            .args(&args[1..])
            .output_in_time();
        let stderr = support::text(&output.stderr);
        assert!(!output.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "expected heapsampler.ObjectLifetime's trackingProbability in (0, 1] for a \
                 tracked sample, found 0"
            ) && stderr.contains("at byte "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
