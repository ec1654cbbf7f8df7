//! What the agent's watch writes while the program runs (leak suspects it
//! raised, heap peaks with the live set by site), as every command shows
//! it: `leaks` and `report` say when the agent first raised each suspect
//! and list the sites it raised that are no suspect of theirs, `report`
//! shows the peaks, `summary` counts the events, `convert` writes them as
//! CSV, and its OTLP export's samples and Parquet rows of a raised site
//! say when it was first raised. The recording is made with jfr-writer, so
//! every figure is known:
//!
//! 60 s, a collection every second (`gcId` 1 to 59), the heap after each
//! (`jdk.GCHeapSummary`) `300 + 11 k` MiB of 1 GiB. Two sites sampled,
//! each sample with its `jdk.ObjectAllocationSample` and
//! `heapsampler.ObjectLifetime`:
//! - `Leak.add` (line 10, `byte[]`): 1,200 samples of 24 bytes evenly in
//!   time, never freed: a leak of 10.5 MB a second;
//! - `Cache.churn` (line 11, `String`): as many, each freed by the next
//!   collection.
//!
//! The agent's events: `Leak.add` raised after collections 20 and 40 (the
//! second in the second chunk); `Other.grow` (line 12, under `Other.run`
//! and `Main.main`, `String`), which has no samples, after collection 30;
//! the other sites after collection 50; heap peaks after collections 45
//! and 55, the last with three sites live.

use std::path::{Path, PathBuf};

use heapsampler_test_support::{self as support, Deadline, browser, heapsampler_ok};
use jfr_writer::events::{
    self, GarbageCollection, GcHeapSummary, GcTypes, HeapPeak, LeakSuspect, LiveSet,
    ObjectAllocationSample, ObjectLifetime, PeakLiveSite, VirtualSpace,
};
use jfr_writer::{
    ClassRef, FrameType, Options, Recording, Sink, StackFrame, StackTrace, StackTraceRef, Thread,
    ThreadRef, Ticks,
};

const SECOND: i64 = 1_000_000_000;
const MIB: i64 = 1 << 20;

/// The weight of a 24-byte sample at 512 KiB.
const WEIGHT: i64 = 524_300;

/// Samples of each site.
const SAMPLES: i64 = 1200;

/// The recording's length.
const LENGTH: i64 = 60 * SECOND;

/// The heap's maximum.
const HEAP_MAX: i64 = 1024 * MIB;

/// The heap in use after collection `k` (at `k` seconds).
fn heap_after(k: i64) -> i64 {
    (300 + 11 * k) * MIB
}

/// When collection `k` ends.
fn collection_end(k: i64) -> i64 {
    k * SECOND + SECOND / 100
}

/// The `n`th sample's allocation time (of `SAMPLES` evenly in 60 s).
fn allocated(n: i64) -> i64 {
    (2 * n + 1) * LENGTH / (2 * SAMPLES)
}

struct Site {
    thread: ThreadRef,
    class: ClassRef,
    stack: StackTraceRef,
}

/// A site of `frames` (`Owner.method:line`, top first) allocating `class`
/// on thread `n`.
fn site<S: Sink>(
    recording: &mut Recording<S>,
    n: i64,
    frames: &[(&str, i32)],
    class: &str,
) -> Site {
    let thread = recording.thread(Thread {
        os_name: format!("worker-{n}"),
        os_thread_id: 100 + n,
        java_name: format!("worker-{n}"),
        java_thread_id: n,
        group: None,
    });
    let class = support::class_of(recording, class);
    let frames = frames
        .iter()
        .map(|&(owner_method, line_number)| {
            let (owner, method) = owner_method.split_once('.').unwrap();
            StackFrame {
                method: support::method_of(recording, owner, method),
                line_number,
                bytecode_index: 0,
                frame_type: FrameType::JitCompiled,
            }
        })
        .collect();
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames,
    });
    Site {
        thread,
        class,
        stack,
    }
}

/// A suspect raised after collection `k` growing `rate` bytes a second
/// (a fifth either side), `live` bytes live (a tenth either side).
fn suspect(site: Option<&Site>, k: i64, rate: f64, live: i64) -> LeakSuspect {
    let used = heap_after(k);
    LeakSuspect {
        start_time: Ticks(collection_end(k)),
        stack_trace: site.map(|s| s.stack).into(),
        gc_id: k as i32,
        object_class: site.map(|s| s.class),
        other_sites: site.is_none(),
        growth_rate: rate,
        growth_rate_low: rate * 0.8,
        growth_rate_high: rate * 1.2,
        window: 15 * SECOND,
        live_bytes: live,
        live_bytes_low: live - live / 10,
        live_bytes_high: live + live / 10,
        live_samples: live / WEIGHT,
        heap_used: used,
        heap_max: HEAP_MAX,
        time_to_heap_max: events::time_to_heap_max(used as u64, HEAP_MAX as u64, rate),
    }
}

/// The live bytes of the sites at the last peak: `Leak.add`, `Other.grow`,
/// the other sites.
const PEAK_LIVE: [i64; 3] = [560 * MIB, 60 * MIB, 5 * MIB];

fn write_recording(path: &Path) {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let gc = GcTypes::register(&mut recording).unwrap();
    let collection_event = recording.register(events::garbage_collection()).unwrap();
    let summary_event = recording.register(events::gc_heap_summary(&gc)).unwrap();
    let sample_event = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let lifetime_event = recording.register(events::object_lifetime()).unwrap();
    let live_set_event = recording.register(events::live_set()).unwrap();
    let suspect_event = recording.register(events::leak_suspect()).unwrap();
    let peak_event = recording.register(events::heap_peak()).unwrap();
    let peak_site_event = recording.register(events::peak_live_site()).unwrap();
    let leak = site(&mut recording, 0, &[("Leak.add", 10)], "[B");
    let cache = site(
        &mut recording,
        1,
        &[("Cache.churn", 11)],
        "java/lang/String",
    );
    let other = site(
        &mut recording,
        2,
        &[("Other.grow", 12), ("Other.run", 30), ("Main.main", 5)],
        "java/lang/String",
    );
    let after = gc.when(&mut recording, events::AFTER_GC).unwrap();
    for k in 1..60 {
        GarbageCollection {
            start_time: Ticks(k * SECOND),
            duration: SECOND / 100,
            gc_id: k as i32,
        }
        .write(&mut recording, &collection_event)
        .unwrap();
        GcHeapSummary {
            start_time: Ticks(collection_end(k)),
            gc_id: k as i32,
            when: Some(after),
            heap_space: VirtualSpace {
                start: 0x7000_0000,
                committed_size: HEAP_MAX,
                reserved_size: HEAP_MAX,
            },
            heap_used: heap_after(k),
        }
        .write(&mut recording, &summary_event)
        .unwrap();
    }
    for n in 0..SAMPLES {
        let at = allocated(n);
        // Freed by the next collection, found dead at its end.
        let next = at / SECOND + 1;
        for (site, freed) in [(&leak, None), (&cache, (next < 60).then_some(next))] {
            ObjectAllocationSample {
                start_time: Ticks(at),
                event_thread: Some(site.thread),
                stack_trace: Some(site.stack).into(),
                object_class: Some(site.class),
                weight: WEIGHT,
            }
            .write(&mut recording, &sample_event)
            .unwrap();
            let (end, freed_by_gc_id) = freed.map_or((LENGTH, 0), |k| (collection_end(k), k));
            ObjectLifetime {
                start_time: Ticks(at),
                duration: end - at,
                event_thread: Some(site.thread),
                stack_trace: Some(site.stack).into(),
                object_class: Some(site.class),
                object_size: 24,
                weight: WEIGHT,
                live: freed.is_none(),
                gcs_survived: 0,
                freed_by_gc_id: freed_by_gc_id as i32,
                tracked: true,
                tracking_probability: 1.0,
            }
            .write(&mut recording, &lifetime_event)
            .unwrap();
        }
    }
    suspect(Some(&leak), 20, 10.5e6, 210_000_000)
        .write(&mut recording, &suspect_event)
        .unwrap();
    suspect(Some(&other), 30, 12_500.0, 50 * MIB)
        .write(&mut recording, &suspect_event)
        .unwrap();
    HeapPeak {
        start_time: Ticks(collection_end(45)),
        gc_id: 45,
        heap_used: heap_after(45),
        heap_max: HEAP_MAX,
        heap_share: heap_after(45) as f64 / HEAP_MAX as f64,
        peak_threshold: 0.75,
        sites: 1,
    }
    .write(&mut recording, &peak_event)
    .unwrap();
    PeakLiveSite {
        start_time: Ticks(collection_end(45)),
        stack_trace: Some(leak.stack).into(),
        gc_id: 45,
        object_class: Some(leak.class),
        other_sites: false,
        live_bytes: 470 * MIB,
        live_bytes_low: 450 * MIB,
        live_bytes_high: 490 * MIB,
        live_samples: 900,
    }
    .write(&mut recording, &peak_site_event)
    .unwrap();
    // The rest in a chunk of its own: what the agent raised is gathered
    // over the chunks, first raise and last.
    recording.end_chunk().unwrap();
    suspect(Some(&leak), 40, 10.4e6, 420_000_000)
        .write(&mut recording, &suspect_event)
        .unwrap();
    suspect(None, 50, 2_000.0, 8 * MIB)
        .write(&mut recording, &suspect_event)
        .unwrap();
    HeapPeak {
        start_time: Ticks(collection_end(55)),
        gc_id: 55,
        heap_used: heap_after(55),
        heap_max: HEAP_MAX,
        heap_share: heap_after(55) as f64 / HEAP_MAX as f64,
        peak_threshold: 0.75,
        sites: 3,
    }
    .write(&mut recording, &peak_event)
    .unwrap();
    for (site, live) in [Some(&leak), Some(&other), None].into_iter().zip(PEAK_LIVE) {
        PeakLiveSite {
            start_time: Ticks(collection_end(55)),
            stack_trace: site.map(|s| s.stack).into(),
            gc_id: 55,
            object_class: site.map(|s| s.class),
            other_sites: site.is_none(),
            live_bytes: live,
            live_bytes_low: live - live / 20,
            live_bytes_high: live + live / 20,
            live_samples: live / WEIGHT,
        }
        .write(&mut recording, &peak_site_event)
        .unwrap();
    }
    LiveSet {
        start_time: Ticks(LENGTH),
        collected: false,
        last_collection: Ticks(collection_end(59)),
        collections: 59,
        live_objects: SAMPLES,
    }
    .write(&mut recording, &live_set_event)
    .unwrap();
    recording.close().unwrap();
}

/// The recording, written once per test binary; the JDK reads it, with
/// the counts written.
fn recording() -> PathBuf {
    static MADE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let path = support::temp_dir("convert_watch").join("watch.jfr");
        write_recording(&path);
        let summary = support::summary(&path);
        for (name, count) in [
            ("heapsampler.LeakSuspect", 4),
            ("heapsampler.HeapPeak", 2),
            ("heapsampler.PeakLiveSite", 4),
            ("heapsampler.ObjectLifetime", 2 * SAMPLES as u64),
        ] {
            assert_eq!(support::summary_count(&summary, name), count, "{summary}");
        }
        path
    })
    .clone()
}

/// The cells of a line of a table of `leaks`, split at runs of two spaces.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// The line of `text` that holds `what`.
fn line_with<'t>(text: &'t str, what: &str) -> &'t str {
    text.lines()
        .find(|line| line.contains(what))
        .unwrap_or_else(|| panic!("no line with {what} in\n{text}"))
}

#[test]
fn leaks_says_when_the_agent_first_raised_each_suspect_and_what_else_it_raised() {
    let recording = recording();
    let (text, _) = heapsampler_ok(["leaks", recording.to_str().unwrap()]);
    assert!(text.starts_with("1 suspect, growing +"), "{text}");
    // The suspects' table has a column of when the agent first raised each
    // site: Leak.add after collection 20 (its second raise, after 40, in
    // the second chunk, is not the first).
    let header = line_with(&text, "95% interval");
    assert!(header.ends_with("raised  where"), "{text}");
    let row = cells(line_with(&text, "Leak.add(10)"));
    assert_eq!(row[row.len() - 2..], ["0:20", "Leak.add(10)"], "{text}");
    assert!(
        text.contains(
            "raised: when the agent, following the live bytes while the program ran, first \
             raised a site of the group as a leak suspect (heapsampler.LeakSuspect); - when it \
             did not"
        ),
        "{text}"
    );
    // Other.grow and the other sites are no suspect of leaks': listed
    // with their stacks' top frames, class, growth and interval.
    assert!(
        text.contains(
            "raised by the agent while the program ran, not among the suspects above, with \
             the growth and live bytes it wrote last:"
        ),
        "{text}"
    );
    let other = cells(line_with(&text, "Other.grow(12)"));
    assert_eq!(
        other,
        [
            "0:30",
            // 12.5 kB a second, 0.8 and 1.2 times that.
            "+750.0 kB/min",
            "+600.0 kB to +900.0 kB/min",
            "52.4 MB",
            "47.2-57.7 MB",
            "Other.grow(12) < Other.run(30) < Main.main(5)",
            "(java.lang.String)"
        ],
        "{text}"
    );
    let rest = cells(line_with(&text, "the other sites"));
    assert_eq!(rest[..2], ["0:50", "+120.0 kB/min"], "{text}");
    // The last heap peak, and what was live then, most first.
    let peak = line_with(&text, "heap peaks the agent wrote");
    assert_eq!(
        peak,
        "heap peaks the agent wrote: 2; the last, after collection 55 at 0:55: 949.0 MB in \
         use of 1.1 GB (88%, past 75%); live then, by site:"
    );
    let after: Vec<&str> = text
        .lines()
        .skip_while(|line| *line != peak)
        .skip(1)
        .take(3)
        .collect();
    assert_eq!(
        cells(after[0]),
        [
            "1",
            "587.2 MB",
            "557.8-616.6 MB",
            "Leak.add(10)",
            "(byte[])"
        ],
        "{text}"
    );
    assert!(
        after[1].contains("Other.grow(12) < Other.run(30)"),
        "{text}"
    );
    assert!(after[2].contains("the other sites"), "{text}");
}

/// The match goes by the groups: by class, `Leak.add`'s class is the
/// suspect (`byte[]`), raised with it; by thread no site can be placed, and
/// every site raised is listed apart.
#[test]
fn a_raised_site_falls_in_the_group_its_samples_fall_in() {
    let recording = recording();
    let path = recording.to_str().unwrap();
    let (by_class, _) = heapsampler_ok(["leaks", path, "--by", "class"]);
    let row = cells(line_with(&by_class, "byte[]"));
    assert_eq!(row[row.len() - 2..], ["0:20", "byte[]"], "{by_class}");
    let (by_app_site, _) = heapsampler_ok(["leaks", path, "--by", "app-site"]);
    let row = cells(line_with(&by_app_site, "Leak.add(10)"));
    assert_eq!(
        row[row.len() - 2..],
        ["0:20", "Leak.add(10)"],
        "{by_app_site}"
    );
    let (by_thread, _) = heapsampler_ok(["leaks", path, "--by", "thread"]);
    let row = cells(line_with(&by_thread, "worker-0"));
    assert_eq!(row[row.len() - 2..], ["-", "worker-0"], "{by_thread}");
    let listed: Vec<&str> = by_thread
        .lines()
        .skip_while(|line| !line.starts_with("raised by the agent"))
        .skip(2)
        .take_while(|line| !line.is_empty())
        .collect();
    assert_eq!(listed.len(), 3, "{by_thread}");
    // Raised first after collection 20, in the first chunk; its growth the
    // one written last, after collection 40 in the second (10.4 MB/s).
    assert_eq!(
        cells(listed[0])[..2],
        ["0:20", "+624.0 MB/min"],
        "{by_thread}"
    );
    assert!(listed[0].ends_with("Leak.add(10)  (byte[])"), "{by_thread}");
}

/// Without liveness, `leaks` cannot say what leaks, and still lists what
/// the agent raised and saw.
#[test]
fn a_recording_that_cannot_say_still_lists_what_the_agent_raised() {
    let path = support::temp_dir("convert_watch_only").join("watch-only.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let suspect_event = recording.register(events::leak_suspect()).unwrap();
    let leak = site(&mut recording, 0, &[("Leak.add", 10)], "[B");
    suspect(Some(&leak), 20, 10.5e6, 210_000_000)
        .write(&mut recording, &suspect_event)
        .unwrap();
    recording.close().unwrap();
    let (text, _) = heapsampler_ok(["leaks", path.to_str().unwrap()]);
    assert!(text.starts_with("cannot say what leaks: "), "{text}");
    assert!(
        text.contains("raised by the agent while the program ran, with the growth"),
        "{text}"
    );
    let row = cells(line_with(&text, "Leak.add(10)"));
    assert_eq!(row[..2], ["0:20", "+630.0 MB/min"], "{text}");
}

#[test]
fn summary_counts_the_watch_events() {
    let recording = recording();
    let (text, _) = heapsampler_ok(["summary", recording.to_str().unwrap()]);
    for (name, count) in [
        ("heapsampler.LeakSuspect", "4"),
        ("heapsampler.HeapPeak", "2"),
        ("heapsampler.PeakLiveSite", "4"),
    ] {
        let row = cells(line_with(&text, name));
        assert_eq!(row[..2], [name, count], "{text}");
    }
}

/// Mission Control's parser reads the watch's events, each of its counts,
/// with no warning, and its rules run with no exception.
#[test]
fn mission_control_reads_the_watch_events() {
    let test = "mission_control_reads_the_watch_events";
    let Some(mission_control) = support::MissionControl::find(test) else {
        return;
    };
    let recording = recording();
    let output = mission_control.run([recording.as_os_str()]);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(!said.contains("LOG WARNING"), "{said}");
    for line in [
        "heapsampler.LeakSuspect 4",
        "heapsampler.HeapPeak 2",
        "heapsampler.PeakLiveSite 4",
    ] {
        assert!(said.lines().any(|l| l == line), "{line}: {said}");
    }
    assert!(said.contains(", 0 exceptions"), "{said}");
}

/// `convert` writes any event type as CSV: the suspects' fields in their
/// order, each as written.
#[test]
fn the_suspects_convert_to_csv() {
    let recording = recording();
    let output = support::heapsampler_command([
        "convert",
        recording.to_str().unwrap(),
        "--events",
        "heapsampler.LeakSuspect",
        "-o",
        "-",
    ])
    .output_in_time();
    assert!(output.status.success(), "{}", support::text(&output.stderr));
    let mut reader = csv::Reader::from_reader(&output.stdout[..]);
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        header,
        [
            "startTime",
            "stackTrace",
            "gcId",
            "objectClass",
            "otherSites",
            "growthRate",
            "growthRateLow",
            "growthRateHigh",
            "window",
            "liveBytes",
            "liveBytesLow",
            "liveBytesHigh",
            "liveSamples",
            "heapUsed",
            "heapMax",
            "timeToHeapMax"
        ]
    );
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    assert_eq!(rows.len(), 4);
    let other = rows
        .iter()
        .find(|r| r[1].starts_with("Other.grow"))
        .unwrap();
    assert_eq!(other[1], "Other.grow(12);Other.run(30);Main.main(5)");
    assert_eq!(
        other[2..9],
        [
            "30",
            "java.lang.String",
            "false",
            "12500",
            "10000",
            "15000",
            "15000000000"
        ]
    );
    let rest = rows.iter().find(|r| r[4] == "true").unwrap();
    assert_eq!((rest[1].as_str(), rest[3].as_str()), ("", ""));
    // The heap's last 174 MiB at 2 kB/s, in nanoseconds.
    let to_max = (HEAP_MAX - heap_after(50)) as f64 / 2_000.0 * 1e9;
    assert_eq!(rest[15], (to_max as i64).to_string());
}

/// The report, as Chromium shows it: the suspects' table says when the
/// agent first raised each, the sites it raised that are no suspect have a
/// table of their own, and the heap peaks it wrote theirs, with the live
/// set by site at the last.
#[test]
fn the_report_shows_what_the_agent_raised_and_its_peaks() {
    let test = "the_report_shows_what_the_agent_raised_and_its_peaks";
    let recording = recording();
    let html = recording.with_extension("html");
    heapsampler_ok([
        "report",
        recording.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    let Some(chromium) = browser::chromium(test) else {
        return;
    };
    let page = browser::checked_in_browser(&chromium, &html);
    assert_eq!(page["errors"], serde_json::json!([]), "{page:#}");
    let suspects = page["suspects"].as_array().unwrap();
    assert_eq!(suspects.len(), 1, "{page:#}");
    assert_eq!(suspects[0]["site"], "Leak.add(10)");
    // Raised after collection 20, which ended at 20.01 s on the clock of
    // the ticks written; the recording's start in seconds is the chunk's
    // (its header's start, taken within the moment of its creation from
    // the clock's start).
    let raised = suspects[0]["raised"].as_f64().unwrap();
    assert!((raised - 20.01).abs() < 1e-3, "{raised}");
    assert!(
        suspects[0]["text"].as_str().unwrap().ends_with("0:20"),
        "{page:#}"
    );
    let text = page["text"].as_str().unwrap();
    assert!(text.contains("First raised: when the agent"), "{text}");
    let agent = page["tables"]["agent-suspects"].as_array().unwrap();
    let cells_of = |row: &serde_json::Value| -> Vec<String> {
        row["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(agent.len(), 2, "{page:#}");
    assert_eq!(
        cells_of(&agent[0]),
        [
            "0:30",
            "Other.grow(12) < Other.run(30) < Main.main(5)",
            "java.lang.String",
            "750.0 kB/min 600.0-900.0 kB/min",
            "52.4 MB 47.2-57.7 MB"
        ]
    );
    // Per minute, as the suspects' growth.
    assert_eq!(agent[0]["growth"].as_f64().unwrap(), 12_500.0 * 60.0);
    assert!(
        cells_of(&agent[1])[1].starts_with("the other sites"),
        "{page:#}"
    );
    let peaks = page["tables"]["heap-peaks"].as_array().unwrap();
    assert_eq!(
        peaks.iter().map(cells_of).collect::<Vec<_>>(),
        [
            ["0:45", "45", "833.6 MB", "1.1 GB", "78%", "75%"],
            ["0:55", "55", "949.0 MB", "1.1 GB", "88%", "75%"],
        ]
    );
    let sites = page["tables"]["peak-live-sites"].as_array().unwrap();
    let live: Vec<f64> = sites.iter().map(|s| s["bytes"].as_f64().unwrap()).collect();
    assert_eq!(live, PEAK_LIVE.map(|b| b as f64));
    assert_eq!(
        cells_of(&sites[0])[..3],
        ["Leak.add(10)", "byte[]", "587.2 MB"]
    );
    browser::screenshot(&chromium, &html, page["height"].as_u64().unwrap_or(3000));
}

/// When the JDK reads the first raise of `Leak.add` (after collection 20),
/// nanoseconds since the epoch.
fn first_raise_of_leak(recording: &Path) -> i64 {
    let first = support::dump_types(recording, &["heapsampler.LeakSuspect"])
        .into_iter()
        .find(|line| support::dump_value(line, "gcId") == "20")
        .unwrap();
    support::dump_value(&first, "startTime").parse().unwrap()
}

/// Decodes the OTLP request in `sys.argv[1]` with upstream's Python
/// classes and prints, as JSON, each profile's samples: its type, each
/// sample's leaf site (`pkg.Class.method(line)`), class and attributes.
const DECODE_OTLP: &str = r#"
import json, sys
from opentelemetry.proto.collector.profiles.v1development.profiles_service_pb2 import ExportProfilesServiceRequest
request = ExportProfilesServiceRequest()
with open(sys.argv[1], "rb") as f:
    request.ParseFromString(f.read())
d = request.dictionary
s = d.string_table
def attributes(indices):
    out = {}
    for i in indices:
        a = d.attribute_table[i]
        out[s[a.key_strindex]] = getattr(a.value, a.value.WhichOneof("value"))
    return out
def site(stack_index):
    line = d.location_table[d.stack_table[stack_index].location_indices[0]].lines[0]
    name = s[d.function_table[line.function_index].name_strindex]
    return name if line.line == 0 else "%s(%d)" % (name, line.line)
print(json.dumps([
    {"type": s[p.sample_type.type_strindex],
     "samples": [{"site": site(x.stack_index), "attributes": attributes(x.attribute_indices)}
                 for x in p.samples]}
    for p in request.resource_profiles[0].scope_profiles[0].profiles
]))
"#;

/// OTLP: every sample of a site the agent raised says when it first raised
/// it, in every profile, as OpenTelemetry's own Python classes read the
/// export; no other sample does.
#[test]
fn otlp_samples_of_a_raised_site_say_when_it_was_first_raised() {
    let test = "otlp_samples_of_a_raised_site_say_when_it_was_first_raised";
    let Some(python) = support::python::needed_python(
        test,
        &["opentelemetry.proto.collector.profiles.v1development.profiles_service_pb2"],
    ) else {
        return;
    };
    let recording = recording();
    let request = recording.with_extension("otlp.pb");
    heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "otlp",
        "-o",
        request.to_str().unwrap(),
    ]);
    let output = std::process::Command::new(python)
        .args(["-c", DECODE_OTLP])
        .arg(&request)
        .output_in_time();
    assert!(output.status.success(), "{}", support::text(&output.stderr));
    let profiles: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let first = first_raise_of_leak(&recording);
    let profiles = profiles.as_array().unwrap();
    let types: Vec<&str> = profiles
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    // Without the sampling interval's setting, `samples` counts the
    // allocated samples (no object counts).
    assert_eq!(
        types,
        ["inuse_space", "samples", "alloc_space", "inuse_objects"]
    );
    for profile in profiles {
        let samples = profile["samples"].as_array().unwrap();
        for site in ["Leak.add(10)", "Cache.churn(11)"] {
            let of_site: Vec<&serde_json::Value> =
                samples.iter().filter(|s| s["site"] == site).collect();
            if site == "Cache.churn(11)" && profile["type"].as_str().unwrap().starts_with("inuse") {
                // Freed, but for the last second's.
                assert!(of_site.len() <= 1, "{profile:#}");
            } else {
                assert!(!of_site.is_empty(), "{site} in {profile:#}");
            }
            for sample in of_site {
                let raised = &sample["attributes"]["heapsampler.leak_suspect.first_raised"];
                if site == "Leak.add(10)" {
                    let at = chrono::DateTime::parse_from_rfc3339(raised.as_str().unwrap())
                        .unwrap()
                        .timestamp_nanos_opt()
                        .unwrap();
                    // The JDK and we turn ticks into time each in doubles.
                    assert!((at - first).abs() < 1000, "{at} against {first}");
                    assert_eq!(
                        sample["attributes"]["heapsampler.allocated_class"],
                        "byte[]"
                    );
                } else {
                    assert!(raised.is_null(), "{sample}");
                }
            }
        }
    }
}

/// Reads the Parquet table in `sys.argv[1]` with DuckDB and prints, as
/// JSON, per site (the stack's top frame), class and event: the rows, those
/// with `leak_suspect_raised`, its type, and its least and greatest value
/// in microseconds since the epoch.
const QUERY_PARQUET: &str = r#"
import duckdb, json, sys
print(json.dumps([list(r) for r in duckdb.sql(f"""
    SELECT stack[1], class, event, count(*), count(leak_suspect_raised),
        any_value(typeof(leak_suspect_raised)),
        min(epoch_us(leak_suspect_raised)), max(epoch_us(leak_suspect_raised))
    FROM read_parquet('{sys.argv[1]}') GROUP BY ALL ORDER BY ALL""").fetchall()]))
"#;

/// Parquet: every row of a site the agent raised, its allocation and its
/// lifetime, says when the agent first raised it, as DuckDB reads the
/// table; the other rows say nothing.
#[test]
fn parquet_rows_of_a_raised_site_say_when_it_was_first_raised() {
    let test = "parquet_rows_of_a_raised_site_say_when_it_was_first_raised";
    let Some(python) = support::python::needed_python(test, &["duckdb"]) else {
        return;
    };
    let recording = recording();
    let table = recording.with_extension("parquet");
    heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "parquet",
        "-o",
        table.to_str().unwrap(),
    ]);
    let output = std::process::Command::new(python)
        .args(["-c", QUERY_PARQUET])
        .arg(&table)
        .output_in_time();
    assert!(output.status.success(), "{}", support::text(&output.stderr));
    let groups: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let first = first_raise_of_leak(&recording);
    let groups = groups.as_array().unwrap();
    let sites: Vec<[&str; 3]> = groups
        .iter()
        .map(|g| [0, 1, 2].map(|at| g[at].as_str().unwrap()))
        .collect();
    let events = ["heapsampler.ObjectLifetime", "jdk.ObjectAllocationSample"];
    assert_eq!(
        sites,
        [
            ["Cache.churn(11)", "java.lang.String", events[0]],
            ["Cache.churn(11)", "java.lang.String", events[1]],
            ["Leak.add(10)", "byte[]", events[0]],
            ["Leak.add(10)", "byte[]", events[1]],
        ]
    );
    for group in groups {
        assert_eq!(group[3], SAMPLES, "{group}");
        assert_eq!(group[5], "TIMESTAMP WITH TIME ZONE", "{group}");
        if group[0] == "Leak.add(10)" {
            assert_eq!(group[4], SAMPLES, "every row of the site: {group}");
            assert_eq!(group[6], group[7], "one time: {group}");
            let at = group[6].as_i64().unwrap() * 1000;
            // The JDK and we turn ticks into time each in doubles; the
            // column holds microseconds.
            assert!((at - first).abs() < 2000, "{at} against {first}");
        } else {
            assert_eq!(group[4], 0, "no row of the site: {group}");
        }
    }
}
