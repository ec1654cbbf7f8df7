//! Old objects in recordings of several chunks: each chunk's end writes the
//! live set as `jdk.OldObjectSample`, and renames the one before it
//! `heapsampler.OldObjectSnapshot` once its own is flushed. So Mission
//! Control's Memory Leak page (`jmc-check --leaks`) counts each live
//! object once, and a JVM killed after some chunk ends leaves the newest
//! live set under the JDK's name. Read by the JDK's `jfr` (17 and 25),
//! `RecordingFile`, Mission Control's parser and `heapsampler summary`;
//! JDK 25's `jfr view` shows them in its memory leak views.

use heapsampler_test_support::{self as support, DEADLINE, Deadline};

use heapsampler_test_support::{MissionControl, heapsampler_command, heapsampler_ok, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SAMPLE: &str = "jdk.OldObjectSample";
const SNAPSHOT: &str = "heapsampler.OldObjectSnapshot";

/// JDK 25's `jfr`, or `None`, having said that `what` is skipped, where
/// it is missing (never under `CI=true`, which has it).
fn jfr_25(what: &str) -> Option<PathBuf> {
    support::temurin_25(what).map(|home| home.join("bin/jfr"))
}

/// `heapsampler record` of `Scenarios paced SECONDS 16 leak` (16 MiB a
/// second, a quarter as much again kept reachable), at 64k, chunks ending
/// at every flush past `flags`' limits; not run yet.
fn record_command(recording: &Path, flags: &[&str], seconds: &str) -> Command {
    let mut command = heapsampler_command(["record"]);
    command
        .arg("-o")
        .arg(recording)
        .args(["--interval", "64k"])
        .args(flags)
        .arg("--agent")
        .arg(support::agent_library())
        .args(["--", "java", "-cp"])
        .arg(support::compiled_workload("Scenarios"))
        .args(["Scenarios", "paced", seconds, "16", "leak"]);
    command
}

/// The start times of the events of `event_type`, as `jfr print --json`
/// gives them (ISO-8601 text, which sorts as time does).
fn start_times(document: &serde_json::Value, event_type: &str) -> Vec<String> {
    support::json_events(document)
        .iter()
        .filter(|e| e["type"] == event_type)
        .map(|e| e["values"]["startTime"].as_str().unwrap().to_owned())
        .collect()
}

/// The count `heapsampler summary` gives for `event_type`.
fn our_count(summary: &str, event_type: &str) -> u64 {
    summary
        .lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some(event_type)).then(|| words.next().unwrap().parse().unwrap())
        })
        .unwrap_or(0)
}

/// What every reader says of a file whose newest live set is `samples`
/// events and whose earlier chunk ends' still in it are `snapshots`:
/// one live set under the JDK's name, each object once in Mission
/// Control, all of it written at one moment, after every renamed one.
fn assert_one_live_set(test: &str, path: &Path, samples: u64, snapshots: u64) {
    let summary = support::summary(path);
    assert_eq!(
        support::summary_count(&summary, SAMPLE),
        samples,
        "{summary}"
    );
    assert_eq!(
        support::summary_count(&summary, SNAPSHOT),
        snapshots,
        "{summary}"
    );
    let document = support::print_json(path);
    let newest = start_times(&document, SAMPLE);
    let moments: std::collections::BTreeSet<&String> = newest.iter().collect();
    assert_eq!(moments.len(), 1, "one moment's live set: {moments:?}");
    let renamed = start_times(&document, SNAPSHOT);
    let last_renamed = renamed.iter().max().unwrap();
    assert!(last_renamed < &newest[0], "{last_renamed} vs {}", newest[0]);
    // RecordingFile reads every chunk, each event under its type.
    let lines = support::dump_types(path, &[SAMPLE, SNAPSHOT]);
    let named = |name: &str| lines.iter().filter(|l| l.starts_with(name)).count() as u64;
    assert_eq!((named(SAMPLE), named(SNAPSHOT)), (samples, snapshots));
    if let Some(jmc) = MissionControl::find(test) {
        assert_eq!(jmc.leak_counts(path), (samples, samples, samples));
    }
    let (ours, _) = heapsampler_ok(["summary", path.to_str().unwrap()]);
    assert_eq!(our_count(&ours, SAMPLE), samples, "{ours}");
    assert_eq!(our_count(&ours, SNAPSHOT), snapshots, "{ours}");
}

/// A recording that keeps its last 3 s, in chunks of at most 375 ms (each
/// flush, every second, ends one), of a 6 s run that leaks 4 MiB a second:
/// at least 6 chunk ends, the oldest dropped. Its end's live set is the one
/// `jdk.OldObjectSample`: the objects still tracked at the end (each has an
/// `ObjectLifetime` with `live`; fewer than the cap of 10,000: some 380
/// leaked arrays at 64k), each once in Mission Control.
#[test]
fn a_rotated_recording_holds_its_ends_live_set_once_and_the_earlier_ones_renamed() {
    let dir = support::temp_dir("convert_old_objects_rotated");
    let path = dir.join("rotated.jfr");
    let output = record_command(&path, &["--max-age", "3s"], "6").output_in_time();
    assert!(output.status.success(), "{}", text(&output.stderr));

    let summary = support::summary(&path);
    assert!(support::summary_chunks(&summary) >= 3, "{summary}");
    let document = support::print_json(&path);
    let live_at_end = support::json_events(&document)
        .iter()
        .filter(|e| e["type"] == "heapsampler.ObjectLifetime" && e["values"]["live"] == true)
        .count() as u64;
    assert!(live_at_end > 100, "{live_at_end} live at the end");
    let snapshots = support::summary_count(&summary, SNAPSHOT);
    assert!(snapshots > 0, "earlier chunk ends' in the file: {summary}");
    assert_one_live_set(
        "a_rotated_recording_holds_its_ends_live_set_once_and_the_earlier_ones_renamed",
        &path,
        live_at_end,
        snapshots,
    );

    // JDK 25's parser reads the two types as 17's does.
    let Some(jfr_25) = jfr_25("JDK 25's reading") else {
        return;
    };
    let output = Command::new(jfr_25)
        .arg("summary")
        .arg(&path)
        .output_in_time();
    let summary_25 = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(support::summary_count(&summary_25, SAMPLE), live_at_end);
    assert_eq!(support::summary_count(&summary_25, SNAPSHOT), snapshots);
}

/// The chunks in the file, its length, and whether it ends where its last
/// chunk's header says, that header complete (no flush under way).
fn complete_chunks(path: &Path) -> (usize, usize, bool) {
    let Ok(bytes) = std::fs::read(path) else {
        return (0, 0, false);
    };
    let chunks: Vec<_> = support::chunks(&bytes).collect();
    let settled = chunks.last().is_some_and(|(offset, header)| {
        header.generation == jfr_format::GENERATION_FINISHED
            && offset + header.chunk_size as usize == bytes.len()
    });
    (chunks.len(), bytes.len(), settled)
}

/// A JVM killed (SIGKILL) after two chunk ends: each chunk end renames
/// the one before right after its own flush, so once a third chunk is
/// in the file (a flush after the second end) the file holds one live set
/// under the JDK's name, the newest, and the earlier renamed. Killed a
/// quarter of a second after a flush is seen complete: the renaming after
/// it takes milliseconds, and the next flush comes a second after it; the
/// file is checked unchanged over that quarter second, so the kill does
/// not land in a flush.
#[test]
fn a_killed_jvm_leaves_its_newest_chunk_ends_live_set() {
    let dir = support::temp_dir("convert_old_objects_killed");
    let path: PathBuf = dir.join("killed.jfr");
    let mut running = record_command(&path, &["--chunk-age", "1s"], "60")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_within(DEADLINE);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            running.try_wait().unwrap().is_none(),
            "the recording ended before its third chunk"
        );
        assert!(Instant::now() < deadline, "no third chunk in 60 s");
        let seen = complete_chunks(&path);
        if seen.0 >= 3 && seen.2 {
            std::thread::sleep(Duration::from_millis(250));
            if complete_chunks(&path) == seen {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Kills heapsampler and the JVM, with their process group.
    drop(running);

    let summary = support::summary(&path);
    let samples = support::summary_count(&summary, SAMPLE);
    let snapshots = support::summary_count(&summary, SNAPSHOT);
    assert!(samples > 0 && snapshots > 0, "{summary}");
    assert_one_live_set(
        "a_killed_jvm_leaves_its_newest_chunk_ends_live_set",
        &path,
        samples,
        snapshots,
    );
    // The JVM's end never came: no end's live objects.
    assert_eq!(support::summary_count(&summary, "heapsampler.LiveSet"), 0);
}

/// `heapsampler dump` of a JVM whose recording has ended chunks: the
/// snapshot ends with the live set as the recording's end would write it,
/// the one under the JDK's name, and the newest chunk end's, which the
/// recording itself keeps under it until the next, is renamed in the
/// snapshot.
#[test]
fn a_dump_holds_its_own_live_set_once() {
    let dir = support::temp_dir("convert_old_objects_dump");
    let recording = dir.join("running.jfr");
    let snapshot = dir.join("snapshot.jfr");
    let agent = support::agent_library();
    let mut jvm = Command::new("java")
        .arg(format!(
            "-agentpath:{}=file={},interval=64k,chunk_age=1s",
            agent.display(),
            recording.display()
        ))
        .arg("-cp")
        .arg(support::compiled_workload("Scenarios"))
        .args(["Scenarios", "paced", "60", "16", "leak"])
        .stdout(Stdio::null())
        .spawn_within(DEADLINE);
    let deadline = Instant::now() + Duration::from_secs(60);
    while complete_chunks(&recording).0 < 2 {
        assert!(jvm.try_wait().unwrap().is_none(), "the JVM ended");
        assert!(Instant::now() < deadline, "no second chunk in 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, said) = heapsampler_ok([
        "dump",
        &jvm.id().to_string(),
        "-o",
        snapshot.to_str().unwrap(),
        "--agent",
        agent.to_str().unwrap(),
    ]);
    assert!(said.contains("recording:"), "{said}");
    drop(jvm);

    let summary = support::summary(&snapshot);
    let samples = support::summary_count(&summary, SAMPLE);
    let snapshots = support::summary_count(&summary, SNAPSHOT);
    assert!(samples > 0 && snapshots > 0, "{summary}");
    assert_one_live_set(
        "a_dump_holds_its_own_live_set_once",
        &snapshot,
        samples,
        snapshots,
    );
}

/// A `.jfr.zst` recording cannot rename what a chunk's end wrote once the
/// chunk is compressed: it writes old objects at its end only, as the JDK
/// does, all of them at one moment (read with `heapsampler`, which reads
/// zstd; the JDK's `jfr` does not).
#[test]
fn a_compressed_recording_writes_its_live_set_at_its_end_only() {
    let dir = support::temp_dir("convert_old_objects_zstd");
    let path = dir.join("compressed.jfr.zst");
    let output = record_command(&path, &["--chunk-age", "1s"], "4").output_in_time();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let file = path.to_str().unwrap();
    let (summary, _) = heapsampler_ok(["summary", file]);
    let chunks: u64 = summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("Chunks: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(chunks >= 2, "{summary}");
    assert!(our_count(&summary, SAMPLE) > 100, "{summary}");
    assert_eq!(our_count(&summary, SNAPSHOT), 0, "{summary}");
    let csv_path = dir.join("old.csv");
    heapsampler_ok([
        "convert",
        file,
        "--events",
        SAMPLE,
        "-o",
        csv_path.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let start = header.iter().position(|c| *c == "startTime").unwrap();
    let moments: std::collections::BTreeSet<&str> =
        rows.map(|row| row.split(',').nth(start).unwrap()).collect();
    assert_eq!(moments.len(), 1, "{moments:?}");
}

/// The cells of `column` in `jfr view VIEW FILE`'s table, one per row, as
/// JDK 25's `jfr` prints it: a title, the columns' names, a rule of dashes
/// as wide as each column (columns one space apart), a line per row.
fn view_column(jfr: &Path, view: &str, path: &Path, column: &str) -> (Vec<String>, String) {
    let output = Command::new(jfr)
        .arg("view")
        .arg(view)
        .arg(path)
        .output_in_time();
    let said = text(&output.stdout);
    assert!(output.status.success(), "{said}{}", text(&output.stderr));
    let lines: Vec<Vec<char>> = said.lines().map(|l| l.chars().collect()).collect();
    let rule = lines
        .iter()
        .position(|l| l.starts_with(&['-', '-']))
        .unwrap_or_else(|| panic!("no table in jfr view {view}:\n{said}"));
    assert!(rule > 0, "{said}");
    let mut spans = Vec::new();
    let mut start = None;
    for (at, c) in lines[rule].iter().chain([&' ']).enumerate() {
        match (c, start) {
            ('-', None) => start = Some(at),
            (' ', Some(from)) => {
                spans.push(from..at);
                start = None;
            }
            _ => {}
        }
    }
    let cell = |line: &[char], span: &std::ops::Range<usize>| -> String {
        let end = span.end.min(line.len());
        let start = span.start.min(end);
        line[start..end]
            .iter()
            .collect::<String>()
            .trim()
            .to_owned()
    };
    let span = spans
        .iter()
        .find(|span| cell(&lines[rule - 1], span) == column)
        .unwrap_or_else(|| panic!("no column {column} in jfr view {view}:\n{said}"));
    let cells = lines[rule + 1..]
        .iter()
        .take_while(|line| !line.iter().all(|c| c.is_whitespace()))
        .map(|line| cell(line, span))
        .collect();
    (cells, said)
}

/// The JDK's `jfr view memory-leaks-by-site` and `memory-leaks-by-class`
/// (JDK 21 and later) show the last batch of `jdk.OldObjectSample` (those
/// of the last one's end time) grouped by the allocation's top application
/// frame, the first whose class's loader is not the bootstrap loader, and
/// by the object's class. Of a program with two leaks, `Leaks` leaking
/// byte[1008] from `LeakA.keep` (256 KiB a second) and long[62] from
/// `LeakB.keep` (128 KiB a second) for 4 s, each leak's site and class are
/// a row. At 16k, LeakB's 512 KiB kept hold about 32 samples, so one at
/// least but for a chance of e^-32, and LeakA's twice as many. The JDK's
/// own recording of the program is the control: its views name the leaks
/// in the same words (its sampler keeps a dozen live objects of its
/// choosing, most of them the leaks', so it may miss one leak, never both
/// in five runs), and names the program's class loader as ours does.
#[test]
fn the_jdks_memory_leak_views_show_each_leaks_site_and_class() {
    let Some(jfr_25) = jfr_25("the JDK's memory leak views") else {
        return;
    };
    let dir = support::temp_dir("convert_old_objects_jfr_view");
    let ours = dir.join("ours.jfr");
    let theirs = dir.join("jdk.jfr");
    let args = ["4", "leak-a", "256", "leak-b", "128", "garbage", "8"];
    support::record_with_agent(&ours, &["--interval", "16k"], "Leaks", &args);
    let classes = support::compiled_workload("Leaks");
    let mut java_args = vec!["-cp", classes.to_str().unwrap(), "Leaks"];
    java_args.extend(args);
    support::record_with_jfr(&theirs, &["settings=profile"], &java_args);

    for (view, column, leaks) in [
        (
            "memory-leaks-by-site",
            "Application Method",
            ["Leaks$LeakA.keep()", "Leaks$LeakB.keep()"],
        ),
        (
            "memory-leaks-by-class",
            "Object Class",
            ["byte[]", "long[]"],
        ),
    ] {
        let (their_rows, their_table) = view_column(&jfr_25, view, &theirs, column);
        assert!(
            leaks
                .iter()
                .any(|leak| their_rows.iter().any(|row| row == leak)),
            "the JDK's own recording names no leak:\n{their_table}"
        );
        let (our_rows, our_table) = view_column(&jfr_25, view, &ours, column);
        for leak in leaks {
            assert!(
                our_rows.iter().any(|row| row == leak),
                "no row {leak} in ours:\n{our_table}\nthe JDK's:\n{their_table}"
            );
        }
    }
    // A class of the program names its loader as the JDK's recording does
    // (JDK 17's `jfr print`).
    let loader_of_leaks = |path: &Path| -> serde_json::Value {
        let document = support::print_json(path);
        support::json_events(&document)
            .iter()
            .filter(|e| e["type"] == SAMPLE)
            .flat_map(|e| e["values"]["stackTrace"]["frames"].as_array().unwrap())
            .map(|frame| &frame["method"]["type"])
            .find(|class| class["name"] == "Leaks")
            .unwrap_or_else(|| panic!("no frame of Leaks in {}", path.display()))["classLoader"]
            .clone()
    };
    let (our_loader, their_loader) = (loader_of_leaks(&ours), loader_of_leaks(&theirs));
    assert_eq!(our_loader["name"], "app", "{our_loader}");
    assert_eq!(our_loader["name"], their_loader["name"]);
    assert_eq!(
        our_loader["type"]["name"], their_loader["type"]["name"],
        "{our_loader} vs {their_loader}"
    );
    // Mission Control reads the loaders with no warning.
    let summary = support::summary(&ours);
    let samples = support::summary_count(&summary, SAMPLE);
    if let Some(jmc) =
        MissionControl::find("the_jdks_memory_leak_views_show_each_leaks_site_and_class")
    {
        assert_eq!(jmc.leak_counts(&ours), (samples, samples, samples));
    }
}
