//! The agent's watch events (`heapsampler.LeakSuspect`,
//! `heapsampler.HeapPeak`, `heapsampler.PeakLiveSite`,
//! `heapsampler.WatchedSite`), written by
//! jfr-writer and read by every program people read them with: the JDK's
//! parser (`jdk.jfr.consumer.RecordingFile`) reads every value as written,
//! `jfr print` and `jfr view` (JDK 17 and 25) show their units (rates in
//! bytes a second, a time to the heap's maximum of none as `N/A`), `jfr
//! summary` counts them, and Mission Control's parser reads them with no
//! warning, rates as bytes.

use heapsampler_test_support as support;

use std::path::Path;
use std::process::Command;

use jfr_format::NO_TIMESPAN;
use jfr_writer::events::{
    self, HeapPeak, LeakSuspect, PeakLiveSite, WatchedSite, time_to_heap_max,
};
use jfr_writer::{Options, Recording, Sink, StackFrame, StackTrace, Ticks};
use support::{Deadline, MissionControl, declaration, dump_types, metadata_of, temp_dir, text};

const MIB: i64 = 1 << 20;
const SECOND: i64 = 1_000_000_000;

/// A leak suspect at `com.example.Leak.add` (line 12), growing 12.5 kB/s
/// (1.5 kB/s to 20 kB/s) over 30 s, 50 MiB live of 800 MiB used of a
/// 1 GiB heap; the same for the other sites, whose rate never fills the
/// heap.
fn suspects<S: Sink>(recording: &mut Recording<S>, at: Ticks) -> [LeakSuspect; 2] {
    let method = support::method_of(recording, "com/example/Leak", "add");
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames: vec![StackFrame {
            method,
            line_number: 12,
            bytecode_index: 3,
            frame_type: jfr_writer::FrameType::JitCompiled,
        }],
    });
    let class = support::class_of(recording, "[B");
    let site = LeakSuspect {
        start_time: at,
        stack_trace: Some(stack).into(),
        gc_id: 7,
        object_class: Some(class),
        other_sites: false,
        growth_rate: 12_500.0,
        growth_rate_low: 1_500.0,
        growth_rate_high: 20_000.0,
        window: 30 * SECOND,
        live_bytes: 50 * MIB,
        live_bytes_low: 40 * MIB,
        live_bytes_high: 60 * MIB,
        live_samples: 100,
        heap_used: 800 * MIB,
        heap_max: 1024 * MIB,
        time_to_heap_max: time_to_heap_max((800 * MIB) as u64, (1024 * MIB) as u64, 12_500.0),
    };
    let others = LeakSuspect {
        stack_trace: None.into(),
        object_class: None,
        other_sites: true,
        growth_rate: -2.5,
        time_to_heap_max: time_to_heap_max((800 * MIB) as u64, (1024 * MIB) as u64, -2.5),
        ..site
    };
    [site, others]
}

fn peak(at: Ticks) -> HeapPeak {
    HeapPeak {
        start_time: at,
        gc_id: 9,
        heap_used: 900 * MIB,
        heap_max: 1024 * MIB,
        heap_share: 900.0 / 1024.0,
        peak_threshold: 0.8,
        sites: 2,
    }
}

/// The recording: a suspect, a peak and its two sites (one of them the
/// other sites), and two watched sites (the other sites' with no window
/// yet) in the first chunk, the other sites' suspect in the second.
fn write(path: &Path) -> Ticks {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let suspect_type = recording.register(events::leak_suspect()).unwrap();
    let peak_type = recording.register(events::heap_peak()).unwrap();
    let site_type = recording.register(events::peak_live_site()).unwrap();
    let watched_type = recording.register(events::watched_site()).unwrap();
    let at = recording.clock().now();
    let [site, others] = suspects(&mut recording, at);
    site.write(&mut recording, &suspect_type).unwrap();
    let peak = peak(at);
    peak.write(&mut recording, &peak_type).unwrap();
    let live_site = PeakLiveSite {
        start_time: at,
        stack_trace: site.stack_trace,
        gc_id: peak.gc_id,
        object_class: site.object_class,
        other_sites: false,
        live_bytes: 300 * MIB,
        live_bytes_low: 280 * MIB,
        live_bytes_high: 320 * MIB,
        live_samples: 600,
    };
    live_site.write(&mut recording, &site_type).unwrap();
    PeakLiveSite {
        stack_trace: None.into(),
        object_class: None,
        other_sites: true,
        live_bytes: 2 * MIB,
        live_bytes_low: 0,
        live_bytes_high: 5 * MIB,
        live_samples: 4,
        ..live_site
    }
    .write(&mut recording, &site_type)
    .unwrap();
    let watched = WatchedSite {
        start_time: at,
        stack_trace: site.stack_trace,
        gc_id: 7,
        object_class: site.object_class,
        other_sites: false,
        live_bytes: 50 * MIB,
        live_bytes_low: 40 * MIB,
        live_bytes_high: 60 * MIB,
        live_samples: 100,
        growth_rate: 12_500.0,
        growth_rate_low: 1_500.0,
        growth_rate_high: 20_000.0,
        window: 600 * SECOND,
    };
    watched.write(&mut recording, &watched_type).unwrap();
    WatchedSite {
        stack_trace: None.into(),
        object_class: None,
        other_sites: true,
        growth_rate: f64::NAN,
        growth_rate_low: f64::NAN,
        growth_rate_high: f64::NAN,
        window: NO_TIMESPAN,
        ..watched
    }
    .write(&mut recording, &watched_type)
    .unwrap();
    recording.end_chunk().unwrap();
    // A chunk holds its own constants: the second makes them again.
    let [_, others_again] = suspects(&mut recording, at);
    assert_eq!(others_again, others);
    others.write(&mut recording, &suspect_type).unwrap();
    recording.close().unwrap();
    at
}

#[test]
fn watch_events_read_back_exactly_in_the_jdks_parser() {
    let dir = temp_dir("watch_events_exact");
    let path = dir.join("watch.jfr");
    write(&path);
    let lines = dump_types(
        &path,
        &[
            "heapsampler.LeakSuspect",
            "heapsampler.HeapPeak",
            "heapsampler.PeakLiveSite",
            "heapsampler.WatchedSite",
        ],
    );
    let epoch = support::dump_value(&lines[0], "startTime");
    let stack = "stack(false:com.example.Leak.add()V:12:3:JIT compiled:0:false)";
    let double = |value: f64| format!("double:{:x}", value.to_bits());
    let suspect = |stack: &str, class: &str, other: bool, rate: f64, time: i64| {
        format!(
            "heapsampler.LeakSuspect startTime={epoch} stackTrace={stack} gcId=7 \
             objectClass={class} otherSites={other} growthRate={} growthRateLow={} \
             growthRateHigh={} window={} liveBytes={} liveBytesLow={} liveBytesHigh={} \
             liveSamples=100 heapUsed={} heapMax={} timeToHeapMax={time}",
            double(rate),
            double(1_500.0),
            double(20_000.0),
            30 * SECOND,
            50 * MIB,
            40 * MIB,
            60 * MIB,
            800 * MIB,
            1024 * MIB,
        )
    };
    // 224 MiB to go at 12.5 kB/s: 18,790 s.
    let to_max = 224 * MIB * SECOND / 12_500;
    let peak_site = |stack: &str, class: &str, other: bool, live: [i64; 3], samples: i64| {
        format!(
            "heapsampler.PeakLiveSite startTime={epoch} stackTrace={stack} gcId=9 \
             objectClass={class} otherSites={other} liveBytes={} liveBytesLow={} \
             liveBytesHigh={} liveSamples={samples}",
            live[0], live[1], live[2]
        )
    };
    let watched_site = |stack: &str, class: &str, other: bool, rate: [f64; 3], window: i64| {
        format!(
            "heapsampler.WatchedSite startTime={epoch} stackTrace={stack} gcId=7 \
             objectClass={class} otherSites={other} liveBytes={} liveBytesLow={} \
             liveBytesHigh={} liveSamples=100 growthRate={} growthRateLow={} \
             growthRateHigh={} window={window}",
            50 * MIB,
            40 * MIB,
            60 * MIB,
            double(rate[0]),
            double(rate[1]),
            double(rate[2]),
        )
    };
    assert_eq!(
        lines,
        [
            suspect(stack, "class([B,0,null)", false, 12_500.0, to_max),
            format!(
                "heapsampler.HeapPeak startTime={epoch} gcId=9 heapUsed={} heapMax={} \
                 heapShare={} peakThreshold={} sites=2",
                900 * MIB,
                1024 * MIB,
                double(900.0 / 1024.0),
                double(0.8)
            ),
            peak_site(
                stack,
                "class([B,0,null)",
                false,
                [300 * MIB, 280 * MIB, 320 * MIB],
                600
            ),
            peak_site("null", "null", true, [2 * MIB, 0, 5 * MIB], 4),
            watched_site(
                stack,
                "class([B,0,null)",
                false,
                [12_500.0, 1_500.0, 20_000.0],
                600 * SECOND
            ),
            watched_site("null", "null", true, [f64::NAN; 3], NO_TIMESPAN),
            suspect("null", "null", true, -2.5, NO_TIMESPAN),
        ]
    );
    let summary = support::summary(&path);
    for (name, count) in [
        ("heapsampler.LeakSuspect", 2),
        ("heapsampler.HeapPeak", 1),
        ("heapsampler.PeakLiveSite", 2),
        ("heapsampler.WatchedSite", 2),
    ] {
        assert_eq!(support::summary_count(&summary, name), count, "{summary}");
    }
    assert_eq!(support::summary_chunks(&summary), 2, "{summary}");
}

/// What `jfr print` shows of the watch events, in the JDK `jfr` at `jfr`.
fn assert_printed_with_units(jfr: &Path, path: &Path) {
    let output = Command::new(jfr)
        .args([
            "print",
            "--events",
            "LeakSuspect,HeapPeak,PeakLiveSite,WatchedSite",
        ])
        .arg(path)
        .output_in_time();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed = text(&output.stdout);
    for shown in [
        "growthRate = 12.2 kB/s",
        "growthRateLow = 1.5 kB/s",
        "growthRateHigh = 19.5 kB/s",
        "window = 30.0 s",
        "liveBytes = 50.0 MB",
        "heapMax = 1.0 GB",
        // 18,790 s, as JDK 17 and 25 write hours.
        "timeToHeapMax = 5 h 13 m",
        // The other sites' rate never fills the heap.
        "timeToHeapMax = N/A",
        "growthRate = -2 byte/s",
        "otherSites = true",
        "com.example.Leak.add() line: 12",
        "heapShare = 87.89%",
        "peakThreshold = 80.00%",
        "liveBytes = 300.0 MB",
        // A watched site's window, and none yet.
        "window = 10 m",
        "growthRate = N/A",
    ] {
        assert!(printed.contains(shown), "{shown} not in\n{printed}");
    }
}

#[test]
fn jfr_print_and_view_show_the_watch_events_units() {
    let dir = temp_dir("watch_events_printed");
    let path = dir.join("watch.jfr");
    write(&path);
    assert_printed_with_units(Path::new("jfr"), &path);
    let Some(home) = support::temurin_25("jfr print and view of JDK 25") else {
        return;
    };
    let jfr = home.join("bin/jfr");
    assert_printed_with_units(&jfr, &path);
    let output = Command::new(&jfr)
        .args(["view", "--width", "300", "heapsampler.LeakSuspect"])
        .arg(&path)
        .output_in_time();
    let view = text(&output.stdout);
    assert!(output.status.success(), "{view}{}", text(&output.stderr));
    // A table with a row per suspect.
    for shown in [
        "Leak Suspect",
        "Growth Rate",
        "Time To Heap Max",
        "12.2 kB/s",
        "N/A",
    ] {
        assert!(view.contains(shown), "{shown} not in\n{view}");
    }
    let output = Command::new(&jfr)
        .args(["view", "heapsampler.HeapPeak"])
        .arg(&path)
        .output_in_time();
    let view = text(&output.stdout);
    assert!(view.contains("Share Of Heap Max"), "{view}");
    assert!(view.contains("87.89%"), "{view}");
}

#[test]
fn mission_control_reads_the_watch_events_with_no_warning() {
    let test = "mission_control_reads_the_watch_events_with_no_warning";
    let dir = temp_dir("watch_events_jmc");
    let path = dir.join("watch.jfr");
    write(&path);
    let Some(jmc) = MissionControl::find(test) else {
        return;
    };
    let output = jmc.run([Path::new("--no-rules"), &path]);
    // Mission Control puts a no-break space between a number and its unit.
    let said = text(&output.stdout).replace('\u{a0}', " ");
    assert!(output.status.success(), "{said}{}", text(&output.stderr));
    assert!(!said.contains("LOG WARNING"), "{said}");
    for shown in [
        "heapsampler.LeakSuspect 2",
        "heapsampler.HeapPeak 1",
        "heapsampler.PeakLiveSite 2",
        "heapsampler.WatchedSite 2",
        "RESULT: parsed 7 events of 4 types",
        // Rates as bytes (its last unit annotation), times and shares in
        // their units.
        "growthRate=12.2 KiB",
        "window=30 s",
        "liveBytes=50 MiB",
        "stackTrace=<1 frames>",
        "heapShare=87.9 %",
        "timeToHeapMax=5 h 13 min",
    ] {
        assert!(said.contains(shown), "{shown} not in\n{said}");
    }
}

#[test]
fn the_rates_are_annotated_as_the_jdks_and_the_times_as_timespans() {
    let dir = temp_dir("watch_events_declared");
    let path = dir.join("declared.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    for builder in [
        events::leak_suspect(),
        events::heap_peak(),
        events::peak_live_site(),
        events::watched_site(),
    ] {
        recording.register(builder).unwrap();
    }
    recording.close().unwrap();
    let (ours, jdk) = (metadata_of(Some(&path)), metadata_of(None));
    // The JDK's rates: G1's allocation rate, a double in bytes a second.
    let jdk_rate = declaration(&jdk, "jdk.G1BasicIHOP");
    let annotations_of = |declared: &[String], field: &str| -> Vec<String> {
        let at = declared.iter().position(|l| l == field).unwrap();
        declared[..at]
            .iter()
            .rev()
            .take_while(|l| l.starts_with('@'))
            .filter(|l| !l.starts_with("@Label") && !l.starts_with("@Description"))
            .cloned()
            .collect()
    };
    let rate = annotations_of(&jdk_rate, "double recentAllocationRate;");
    assert_eq!(rate, ["@Frequency", "@DataAmount(\"BYTES\")"]);
    let suspect = declaration(&ours, "heapsampler.LeakSuspect");
    for field in ["growthRate", "growthRateLow", "growthRateHigh"] {
        assert_eq!(
            annotations_of(&suspect, &format!("double {field};")),
            rate,
            "{field}"
        );
    }
    for field in ["window", "timeToHeapMax"] {
        assert_eq!(
            annotations_of(&suspect, &format!("long {field};")),
            ["@Timespan(\"NANOSECONDS\")"],
            "{field}"
        );
    }
    let watched = declaration(&ours, "heapsampler.WatchedSite");
    assert_eq!(
        annotations_of(&watched, "double growthRate;"),
        rate,
        "growthRate"
    );
    assert_eq!(
        annotations_of(&watched, "long window;"),
        ["@Timespan(\"NANOSECONDS\")"]
    );
    let peak = declaration(&ours, "heapsampler.HeapPeak");
    assert_eq!(annotations_of(&peak, "double heapShare;"), ["@Percentage"]);
    assert!(
        peak.iter()
            .any(|l| l == "@Category({\"Java Application\", \"heapsampler\"})"),
        "{peak:?}"
    );
}
