//! `heapsampler top` on recordings with known weights: exact sums, order
//! and shares, by site, class and thread, and for what is still live.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::path::Path;

use heapsampler_cli::analysis::top::{GroupBy, Query};
use heapsampler_test_support::heapsampler_command;
use jfr_writer::{FrameType, Options, Recording, StackFrame, StackTrace, Thread, Ticks, events};

/// `heapsampler top PATH ARGS...`, whatever its outcome.
fn run_top(path: &Path, args: &[&str]) -> std::process::Output {
    heapsampler_command(["top"])
        .arg(path)
        .args(args)
        .output_in_time()
}

/// The table `heapsampler top PATH ARGS...` prints; it must succeed.
fn top(path: &Path, args: &[&str]) -> String {
    let output = run_top(path, args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The cells of each table line: separated by two spaces or more.
fn cells(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("total"))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// `(bytes, share, samples, where)` of each table line (cells 1, 3, 6, 7:
/// after the rank come bytes, their interval, share, objects, their
/// interval, samples, where).
fn lines(table: &str) -> Vec<(String, String, String, String)> {
    cells(table)
        .into_iter()
        .map(|c| (c[1].clone(), c[3].clone(), c[6].clone(), c[7].clone()))
        .collect()
}

/// Samples of three sites, classes and threads with weights 6, 3 and 1 MB
/// (each site on its own class and thread), plus lifetimes: the first
/// site's objects live, two after 5 collections and the last after none,
/// the second's live after 1, the third's freed but for one not tracked.
fn recording(path: &Path) {
    recording_with(path, false)
}

/// [`recording`], and with `old_objects` the paths to GC roots the agent's
/// `roots=true` writes: of the three live `Cache.fill` arrays, the two
/// that outlived 5 collections held by a map's node in a static field, the
/// young one by a thread's stack; `Parser.token`'s strings without a path.
fn recording_with(path: &Path, old_objects: bool) {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let old = old_objects.then(|| {
        let types = events::OldObjectTypes::register(&mut recording).unwrap();
        let event = recording
            .register(events::old_object_sample(&types))
            .unwrap();
        (types, event)
    });
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let lifetime = recording.register(events::object_lifetime()).unwrap();
    for (n, (site, class_name, weight, live, gcs)) in [
        ("Cache.fill", "[B", 2_000_000i64, true, 5),
        ("Parser.token", "java/lang/String", 1_000_000, true, 1),
        ("Log.line", "java/lang/StringBuilder", 500_000, false, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let thread = recording.thread(Thread {
            os_name: format!("worker-{n}"),
            os_thread_id: 100 + n as i64,
            java_name: format!("worker-{n}"),
            java_thread_id: n as i64,
            group: None,
        });
        let class = support::class_of(&mut recording, class_name);
        let (owner, method) = site.split_once('.').unwrap();
        let method = support::method_of(&mut recording, owner, method);
        let mut frames = vec![StackFrame {
            method,
            line_number: 10 + n as i32,
            bytecode_index: 0,
            frame_type: FrameType::Unknown,
        }];
        if n == 0 {
            // Cache.fill grows an array: the JDK's frames are on top.
            for (owner, name) in [
                ("java/util/Arrays", "copyOf"),
                ("jdk/internal/Grow", "grow"),
            ] {
                let jdk = support::method_of(&mut recording, owner, name);
                frames.insert(
                    0,
                    StackFrame {
                        method: jdk,
                        line_number: 7,
                        bytecode_index: 0,
                        frame_type: FrameType::Unknown,
                    },
                );
            }
        }
        let stack = recording.stack_trace(StackTrace {
            truncated: false,
            frames,
        });
        // Weights 6, 3 and 1.5 MB: each sample three times.
        for i in 0..3 {
            // The old object first, as the agent writes a chunk's old
            // objects before the lifetimes of the objects still live.
            if let (Some((types, event)), true) = (&old, live) {
                let object =
                    |recording: &mut Recording<_>, name| support::class_of(recording, name);
                let (root, referrer) = if n == 1 {
                    (None, None)
                } else if i < 2 {
                    let holder_class = object(&mut recording, "java/util/HashMap$Node");
                    let holder = types
                        .old_object(&mut recording, 0, Some(holder_class), None, None)
                        .unwrap();
                    let reference = types
                        .reference(
                            &mut recording,
                            events::ReferenceHolder::Field {
                                name: "value",
                                modifiers: 0,
                            },
                            holder,
                            0,
                        )
                        .unwrap();
                    let root = types
                        .gc_root(
                            &mut recording,
                            "Universe",
                            "Global Handle",
                            Some("Cache.entries"),
                        )
                        .unwrap();
                    (Some(root), Some(reference))
                } else {
                    let root = types
                        .gc_root(&mut recording, "Threads", "Stack Variable", None)
                        .unwrap();
                    (Some(root), None)
                };
                let object = types
                    .old_object(&mut recording, 0, Some(class), None, referrer)
                    .unwrap();
                events::OldObjectSample {
                    start_time: Ticks(5),
                    duration: 0,
                    event_thread: Some(thread),
                    stack_trace: Some(stack).into(),
                    allocation_time: Ticks(i),
                    object_size: 64,
                    object_age: 5 - i,
                    last_known_heap_usage: 0,
                    object: Some(object),
                    array_elements: i32::MIN,
                    root,
                }
                .write(&mut recording, event)
                .unwrap();
            }
            recording
                .event(&alloc, Ticks(i))
                .thread(thread)
                .stack_trace(stack)
                .class(class)
                .long(weight)
                .commit()
                .unwrap();
            recording
                .event(&lifetime, Ticks(i))
                .duration(1)
                .thread(thread)
                .stack_trace(stack)
                .class(class)
                .long(64)
                .long(weight)
                .boolean(live)
                .int(if n == 0 && i == 2 { 0 } else { gcs })
                .int(if live { 0 } else { 1 })
                // The last Log.line object was too large to track.
                .boolean(!(n == 2 && i == 2))
                .double(if n == 2 && i == 2 { 0.0 } else { 1.0 })
                .commit()
                .unwrap();
        }
    }
    recording.close().unwrap();
    // The JDK reads it too, with the same counts.
    let summary = support::summary(path);
    assert_eq!(
        support::summary_count(&summary, "jdk.ObjectAllocationSample"),
        9
    );
    assert_eq!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
        9
    );
}

#[test]
fn sums_weights_by_site_class_and_thread() {
    let dir = support::temp_dir("convert_top");
    let path = dir.join("known.jfr");
    recording(&path);
    let expect = |rows: [(&str, &str, &str); 3]| -> Vec<(String, String, String, String)> {
        rows.iter()
            .zip(["6.0 MB", "3.0 MB", "1.5 MB"])
            .map(|((share, samples, place), bytes)| {
                (
                    bytes.to_owned(),
                    (*share).to_owned(),
                    (*samples).to_owned(),
                    (*place).to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        lines(&top(&path, &[])),
        expect([
            ("57.1%", "3", "jdk.internal.Grow.grow(7)"),
            ("28.6%", "3", "Parser.token(11)"),
            ("14.3%", "3", "Log.line(12)")
        ])
    );
    // Past the JDK's frames, to the code that asked.
    assert_eq!(
        lines(&top(&path, &["--by", "app-site"])),
        expect([
            ("57.1%", "3", "Cache.fill(10)"),
            ("28.6%", "3", "Parser.token(11)"),
            ("14.3%", "3", "Log.line(12)")
        ])
    );
    assert_eq!(
        lines(&top(&path, &["--by", "class"])),
        expect([
            ("57.1%", "3", "byte[]"),
            ("28.6%", "3", "java.lang.String"),
            ("14.3%", "3", "java.lang.StringBuilder")
        ])
    );
    assert_eq!(
        lines(&top(&path, &["--by", "thread"])),
        expect([
            ("57.1%", "3", "worker-0"),
            ("28.6%", "3", "worker-1"),
            ("14.3%", "3", "worker-2")
        ])
    );
    assert!(top(&path, &[]).contains("total: 10.5 MB estimated from 9 samples"));
    assert_eq!(lines(&top(&path, &["-n", "1"])).len(), 1);
}

#[test]
fn live_objects_and_the_collections_they_outlived() {
    let dir = support::temp_dir("convert_top_live");
    let path = dir.join("known.jfr");
    recording(&path);
    let live = lines(&top(&path, &["--live"]));
    assert_eq!(live.len(), 2, "the freed site is not live: {live:?}");
    assert_eq!(live[0].3, "jdk.internal.Grow.grow(7)");
    assert_eq!(live[0].1, "66.7%");
    let old = lines(&top(
        &path,
        &["--live", "--min-gcs", "2", "--by", "app-site"],
    ));
    assert_eq!(
        old.len(),
        1,
        "only the objects that outlived 5 collections: {old:?}"
    );
    assert_eq!(old[0].3, "Cache.fill(10)");
    // The untracked object is neither live nor freed, and said so.
    assert!(
        top(&path, &["--live"])
            .contains("not tracked for liveness: 500.0 kB estimated from 1 samples (95% interval"),
        "{}",
        top(&path, &["--live"])
    );
    assert!(!top(&path, &[]).contains("not tracked"));
    // --min-gcs makes sense only with --live.
    let usage = run_top(&path, &["--min-gcs", "2"]);
    assert_eq!(usage.status.code(), Some(2));
}

/// A table's row, as [`held_rows`] reads it.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    samples: u64,
    key: String,
    held: Option<HeldBy>,
}

/// A row's held-by line: the path, and how many of how many objects.
#[derive(Debug, Clone, PartialEq)]
struct HeldBy {
    path: String,
    objects: u64,
    of: u64,
}

impl HeldBy {
    fn new(path: &str, objects: u64, of: u64) -> Self {
        let path = path.to_owned();
        Self { path, objects, of }
    }
}

/// A table's rows, each with its samples, its key, and its held-by line,
/// if it has one.
fn held_rows(table: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for line in table.lines().skip(1) {
        if line.starts_with("total") {
            break;
        }
        if let Some(held) = line.trim().strip_prefix("held by ") {
            let (path, counts) = held.rsplit_once("  (").unwrap();
            let counts = counts
                .strip_suffix(" old objects with a path)")
                .unwrap_or_else(|| panic!("{line}"));
            let (objects, of) = counts.split_once(" of ").unwrap();
            let row = rows.last_mut().unwrap_or_else(|| panic!("{table}"));
            assert!(row.held.is_none(), "two held-by lines for a row: {table}");
            row.held = Some(HeldBy::new(
                path,
                objects.parse().unwrap(),
                of.parse().unwrap(),
            ));
        } else {
            let cells: Vec<&str> = line
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            rows.push(Row {
                samples: cells[6].parse().unwrap(),
                key: cells[7].to_owned(),
                held: None,
            });
        }
    }
    rows
}

#[test]
fn live_sites_say_what_holds_most_of_their_objects() {
    let dir = support::temp_dir("convert_top_roots");
    let path = dir.join("roots.jfr");
    recording_with(&path, true);
    let summary = support::summary(&path);
    assert_eq!(support::summary_count(&summary, "jdk.OldObjectSample"), 6);
    let map = "java.util.HashMap$Node.value <- root Universe: Global Handle (Cache.entries)";
    for by in ["app-site", "class", "thread"] {
        let table = top(&path, &["--live", "--by", by]);
        let rows = held_rows(&table);
        assert_eq!(rows.len(), 2, "--by {by}:\n{table}");
        assert_eq!(
            rows[0].held,
            Some(HeldBy::new(map, 2, 3)),
            "--by {by}:\n{table}"
        );
        assert_eq!(rows[1].held, None, "no path for Parser.token: {table}");
        assert!(!table.contains("no paths to GC roots"), "{table}");
        // The young array is no longer counted, nor is its path: the row
        // and its held-by line count the same objects.
        let table = top(&path, &["--live", "--min-gcs", "2", "--by", by]);
        let rows = held_rows(&table);
        assert_eq!(rows.len(), 1, "--by {by} --min-gcs 2:\n{table}");
        assert_eq!(rows[0].samples, 2, "{table}");
        assert_eq!(rows[0].held, Some(HeldBy::new(map, 2, 2)), "{table}");
    }
    // Without --live the table is of allocations: no paths.
    assert!(!top(&path, &[]).contains("held by"));
    // The CSV shows each old object's chain, and its root.
    let output = heapsampler_command(["convert", "--events", "jdk.OldObjectSample", "-o", "-"])
        .arg(&path)
        .output_in_time();
    let csv = String::from_utf8(output.stdout).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (object, root) = (column("object"), column("root"));
    let cells: Vec<(String, String)> = rows
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[object].to_owned(), r[root].to_owned())
        })
        .collect();
    assert_eq!(
        cells[..3],
        [
            (
                "byte[] <- java.util.HashMap$Node.value".to_owned(),
                "Universe: Global Handle (Cache.entries)".to_owned()
            ),
            (
                "byte[] <- java.util.HashMap$Node.value".to_owned(),
                "Universe: Global Handle (Cache.entries)".to_owned()
            ),
            ("byte[]".to_owned(), "Threads: Stack Variable".to_owned()),
        ]
    );
    assert_eq!(cells[3], ("java.lang.String".to_owned(), String::new()));
}

/// A real recording with paths to GC roots, of several chunks: each
/// chunk's end writes the live set then as old objects (the earlier ones
/// renamed `heapsampler.OldObjectSnapshot`), so the file holds more old
/// objects than objects live at the end; and the leak's objects
/// outlived different numbers of collections. Whatever `--min-gcs` and
/// grouping, a row's held-by line counts only objects the row counts.
#[test]
fn held_by_lines_count_only_the_objects_their_row_counts() {
    let dir = support::temp_dir("convert_top_held_real");
    let path = dir.join("paced.jfr");
    support::record_with_agent(
        &path,
        &["--interval", "64k", "--roots", "--chunk-age", "1s"],
        "Scenarios",
        &["paced", "3", "16", "leak"],
    );
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        support::chunks(&bytes).count() >= 2,
        "3 s at a chunk age of 1 s"
    );
    // The earlier chunk ends' live sets are in the file too, renamed:
    // what counting every old object in the file would add.
    let earlier = support::summary_count(&support::summary(&path), "heapsampler.OldObjectSnapshot");
    assert!(earlier > 0, "{earlier} old objects of earlier chunk ends");
    let live = held_rows(&top(&path, &["--live", "--by", "class", "-n", "1000"]));
    // The leak (Paced.leak, a static list's byte arrays) is found held.
    let leak = live
        .iter()
        .find(|row| row.key == "byte[]")
        .unwrap_or_else(|| panic!("{live:?}"));
    let held = leak.held.as_ref().unwrap_or_else(|| panic!("{live:?}"));
    assert!(held.path.contains("Scenarios"), "{held:?}");
    assert!(held.of > 0 && held.of <= leak.samples, "{leak:?}");
    let mut leak_at = Vec::new();
    for min_gcs in ["0", "1", "2", "3", "4"] {
        for by in ["site", "app-site", "class", "thread"] {
            let table = top(
                &path,
                &["--live", "--min-gcs", min_gcs, "--by", by, "-n", "1000"],
            );
            assert!(!table.contains("no paths to GC roots"), "{table}");
            let rows = held_rows(&table);
            for row in &rows {
                if let Some(held) = &row.held {
                    assert!(
                        held.objects <= held.of && held.of <= row.samples,
                        "--min-gcs {min_gcs} --by {by}: {row:?}"
                    );
                    // A root with no text is no root.
                    assert!(!held.path.trim_end().ends_with("root"), "{table}");
                }
            }
            if by == "class" {
                let leak = rows.iter().find(|r| r.key == "byte[]");
                leak_at.push(
                    leak.map_or((0, 0), |r| (r.samples, r.held.as_ref().map_or(0, |h| h.of))),
                );
            }
        }
    }
    // A higher --min-gcs counts no more objects, and no more paths.
    assert!(
        leak_at
            .windows(2)
            .all(|w| w[1].0 <= w[0].0 && w[1].1 <= w[0].1),
        "byte[] (samples, paths) by --min-gcs 0 to 4: {leak_at:?}"
    );
}

/// Without `--roots`, no path to a GC root was recorded: no held-by line,
/// and under a live table, how to record them.
#[test]
fn without_roots_no_row_says_what_holds_it() {
    let dir = support::temp_dir("convert_top_no_roots");
    let path = dir.join("paced.jfr");
    support::record_with_agent(
        &path,
        &["--interval", "64k"],
        "Scenarios",
        &["paced", "1", "16", "leak"],
    );
    // The old objects are there, with a null root.
    assert!(support::summary_count(&support::summary(&path), "jdk.OldObjectSample") > 0);
    let note = "no paths to GC roots recorded: record with --roots";
    for by in ["site", "class", "thread"] {
        let table = top(&path, &["--live", "--by", by]);
        assert!(!table.contains("held by"), "{table}");
        assert!(table.contains(note), "{table}");
        assert!(!held_rows(&table).is_empty(), "{table}");
        let table = top(&path, &["--by", by]);
        assert!(
            !table.contains(note) && !table.contains("held by"),
            "{table}"
        );
    }
}

#[test]
fn a_recording_without_the_events_asked_for_says_what_to_do() {
    let dir = support::temp_dir("convert_top_without");
    // No events at all: a recording closed as soon as it was made.
    let empty = dir.join("empty.jfr");
    Recording::create(&empty, Options::default())
        .unwrap()
        .close()
        .unwrap();
    // A JDK recording has allocation samples but not our liveness events.
    let jdk = support::jdk_recording();
    assert!(!top(jdk, &[]).is_empty());
    for (path, args, missing, advice) in [
        (
            empty.as_path(),
            &[][..],
            "jdk.ObjectAllocationSample",
            "record with heapsampler",
        ),
        (
            jdk,
            &["--live"][..],
            "heapsampler.ObjectLifetime",
            "leave out --live",
        ),
    ] {
        let output = run_top(path, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(output.stdout.is_empty());
        assert!(
            stderr.contains(&format!("has no {missing} events")) && stderr.contains(advice),
            "{stderr}"
        );
    }
}

#[test]
fn samples_without_a_stack_or_a_thread_name_say_which_is_missing() {
    let dir = support::temp_dir("convert_top_missing");
    let path = dir.join("missing.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    // As a virtual thread: no name, Java's or the OS's.
    let unnamed = recording.thread(Thread {
        os_name: String::new(),
        os_thread_id: 0,
        java_name: String::new(),
        java_thread_id: 42,
        group: None,
    });
    let class = support::class_of(&mut recording, "java/lang/String");
    recording
        .event(&alloc, Ticks(1))
        .thread(unnamed)
        .stack_trace(None)
        .class(class)
        .long(4096)
        .commit()
        .unwrap();
    recording.close().unwrap();
    let site = lines(&top(&path, &[]));
    assert_eq!(site[0].3, "(no Java frames)", "{site:?}");
    assert_eq!(
        lines(&top(&path, &["--by", "app-site"]))[0].3,
        "(no Java frames)"
    );
    assert_eq!(
        lines(&top(&path, &["--by", "thread"]))[0].3,
        "(unnamed thread)"
    );
    assert_eq!(
        lines(&top(&path, &["--by", "class"]))[0].3,
        "java.lang.String"
    );
}

/// A real recording's estimates of objects, from sizes recovered from the
/// samples' weights and the recorded interval: `KnownAllocations` allocates
/// a known number of `int[1000]` (4016 bytes each) from one site.
#[test]
fn objects_are_estimated_from_a_real_recording() {
    let dir = support::temp_dir("convert_top_objects");
    let path = dir.join("known.jfr");
    let stdout = support::record_with_agent(
        &path,
        &["--interval", "64k"],
        "KnownAllocations",
        &["2", "64"],
    );
    let bytes: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("allocated "))
        .unwrap()
        .parse()
        .unwrap();
    let objects = bytes / 4016.0;

    let query = Query {
        by: GroupBy::Site,
        live: false,
        min_gcs: 0,
    };
    let recording = jfr_reader::file::RecordingFile::open(&path).unwrap();
    let pipeline = heapsampler_cli::pipeline::Pipeline::default();
    let table = heapsampler_cli::analysis::top::top(recording, query, &pipeline).unwrap();
    assert!(table.total.objects_known());
    let site = table
        .entries
        .iter()
        .find(|e| e.key.starts_with("KnownAllocations.allocateInts("))
        .unwrap();
    // About 2000 samples of p = 1 - exp(-4016/65536) = 0.059: the estimate
    // is within 5 of its estimated standard deviations (2.2% here) of the
    // truth unless something is wrong (a chance of 6e-7 otherwise).
    let e = &site.estimate;
    for (name, estimate, variance, truth) in [
        ("objects", e.objects(), e.objects_variance(), objects),
        ("bytes", e.bytes(), e.bytes_variance(), bytes),
    ] {
        assert!(
            (estimate - truth).abs() <= 5.0 * variance.sqrt(),
            "{name}: estimated {estimate}, allocated {truth}, sd {}",
            variance.sqrt()
        );
    }
    // The table shows both, each with its interval.
    let text = top(&path, &["-n", "1"]);
    let cells = &cells(&text)[0];
    assert!(
        cells[7].starts_with("KnownAllocations.allocateInts("),
        "{text}"
    );
    assert!(cells[4] != "-" && cells[5].contains('-'), "{text}");
}

/// Under the agent's estimates, `top` says when the JVM's sampler is one
/// before JDK 25, which moves samples between objects beyond what the
/// intervals allow (BENCHMARKS.md, "Intervals on the JVM's own sampler"),
/// and says nothing of JDK 25's: the PATH's `java` (17, or 25 in .ci/run's
/// second pass) and Temurin 25 where it is installed.
#[test]
fn the_intervals_say_when_the_sampler_is_one_before_jdk_25() {
    let dir = support::temp_dir("convert_top_sampler");
    let mut javas = vec![std::path::PathBuf::from("java")];
    javas.extend(support::temurin_25("the sampler note").map(|home| home.join("bin/java")));
    for (index, java) in javas.iter().enumerate() {
        let release = support::java_release(java);
        let path = dir.join(format!("{index}-{release}.jfr"));
        let output = heapsampler_command(["record", "--interval", "64k", "-o"])
            .arg(&path)
            .arg("--agent")
            .arg(support::agent_library())
            .arg("--")
            .arg(java)
            .arg("-cp")
            .arg(support::compiled_workload("Scenarios"))
            .args(["Scenarios", "paced", "1", "8"])
            .output_in_time();
        assert!(output.status.success(), "{}", support::text(&output.stderr));
        for args in [&[][..], &["--live"][..]] {
            let table = top(&path, args);
            let note = table
                .lines()
                .find(|line| line.starts_with("note: the intervals"));
            if release < 25 {
                let note = note.unwrap_or_else(|| panic!("JDK {release}: {table}"));
                assert!(
                    note.contains(&format!("JDK {release}'s moves some samples")),
                    "{note}"
                );
            } else {
                assert!(note.is_none(), "JDK {release}: {table}");
            }
        }
    }
}
