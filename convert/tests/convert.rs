//! `heapsampler convert` against `jfr print --json`: every
//! jdk.ObjectAllocationSample and jdk.ExecutionSample row of a real JDK
//! recording equals, value by value, what the JDK says about the same event.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use heapsampler_cli::model::text::java_class_name;
use heapsampler_test_support::heapsampler_command;
use serde_json::Value as Json;

/// A JDK 17 `profile` recording of an allocating workload, made once.
fn profile_recording() -> &'static Path {
    static RECORDING: OnceLock<PathBuf> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("profile-{}.jfr", std::process::id()));
        let workload = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/workloads/KnownAllocations.java");
        support::record_with_jfr(
            &path,
            &["settings=profile"],
            &[workload.to_str().unwrap(), "2", "256"],
        );
        path
    })
}

fn rows(recording: &Path, event: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let output = heapsampler_command([
        "convert",
        recording.to_str().unwrap(),
        "--events",
        event,
        "-o",
        "-",
    ])
    .output_in_time();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut reader = csv::Reader::from_reader(&output.stdout[..]);
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

fn instant(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .timestamp_nanos_opt()
        .unwrap()
}

/// A stack's first 64 frames from the JDK's JSON, top first, as
/// `pkg.Class.method`, followed by `(line)` when `lines` and known (none
/// when the stack is null). Frames whose method the JDK marks hidden (lambda
/// forms, lambda proxies) are left out, as `jfr print` leaves them out.
fn frame_list(stack: &Json, lines: bool) -> Vec<String> {
    let Some(frames) = stack["frames"].as_array() else {
        return Vec::new();
    };
    frames
        .iter()
        .filter(|frame| frame["method"]["hidden"] != true)
        .take(64)
        .map(|frame| {
            let method = &frame["method"];
            let class = java_class_name(method["type"]["name"].as_str().unwrap());
            let line = frame["lineNumber"].as_i64().unwrap();
            let name = method["name"].as_str().unwrap();
            if lines && line >= 0 {
                format!("{class}.{name}({line})")
            } else {
                format!("{class}.{name}")
            }
        })
        .collect()
}

/// A stack as our CSV writes it, from the JDK's JSON (empty when null).
fn frames(stack: &Json) -> String {
    frame_list(stack, true).join(";")
}

/// A thread as the CSV names it: its Java name, else its OS name. The JDK
/// samples threads that have no Java name yet (a thread still starting).
fn thread_name(thread: &Json) -> String {
    [&thread["javaName"], &thread["osName"]]
        .into_iter()
        .filter_map(Json::as_str)
        .find(|name| !name.is_empty())
        .unwrap_or_default()
        .to_owned()
}

fn json_events(recording: &Path, event: &str) -> Vec<Json> {
    // jfr print keeps 5 frames unless told otherwise.
    let output = Command::new("jfr")
        .args(["print", "--json", "--stack-depth", "64", "--events", event])
        .arg(recording)
        .output_in_time();
    let document: Json = serde_json::from_slice(&output.stdout).unwrap();
    document["recording"]["events"].as_array().unwrap().clone()
}

/// Compares our rows with the JDK's events as sorted tuples: jfr print
/// orders events by time, we by file position.
fn assert_same(mut ours: Vec<Vec<String>>, mut jdk: Vec<Vec<String>>) {
    assert_eq!(ours.len(), jdk.len());
    let key = |row: &Vec<String>| (instant(&row[0]), row[1..].to_vec());
    ours.sort_by_key(key);
    jdk.sort_by_key(key);
    for (mine, theirs) in ours.iter().zip(&jdk) {
        assert_eq!(
            instant(&mine[0]),
            instant(&theirs[0]),
            "{mine:?} vs {theirs:?}"
        );
        assert_eq!(mine[1..], theirs[1..]);
    }
}

#[test]
fn allocation_samples_equal_jfr_print_json() {
    let recording = profile_recording();
    let (header, rows) = rows(recording, "jdk.ObjectAllocationSample");
    assert_eq!(
        header,
        [
            "startTime",
            "eventThread",
            "stackTrace",
            "objectClass",
            "weight"
        ]
    );
    assert!(rows.len() > 20, "{} samples", rows.len());
    let events = json_events(recording, "jdk.ObjectAllocationSample");
    // The JDK marks the workers' lambda proxy frames hidden: stacks here
    // leave them out, as `jfr print` does.
    let hidden = |event: &Json| {
        event["values"]["stackTrace"]["frames"]
            .as_array()
            .is_some_and(|frames| frames.iter().any(|f| f["method"]["hidden"] == true))
    };
    assert!(events.iter().any(hidden), "no hidden frame to leave out");
    let jdk = events
        .iter()
        .map(|event| {
            let values = &event["values"];
            vec![
                values["startTime"].as_str().unwrap().to_owned(),
                thread_name(&values["eventThread"]),
                frames(&values["stackTrace"]),
                java_class_name(values["objectClass"]["name"].as_str().unwrap()),
                values["weight"].as_i64().unwrap().to_string(),
            ]
        })
        .collect();
    assert_same(rows, jdk);
}

#[test]
fn execution_samples_equal_jfr_print_json() {
    let recording = profile_recording();
    let (header, rows) = rows(recording, "jdk.ExecutionSample");
    assert_eq!(
        header,
        ["startTime", "sampledThread", "stackTrace", "state"]
    );
    assert!(!rows.is_empty());
    let jdk = json_events(recording, "jdk.ExecutionSample")
        .iter()
        .map(|event| {
            let values = &event["values"];
            vec![
                values["startTime"].as_str().unwrap().to_owned(),
                thread_name(&values["sampledThread"]),
                frames(&values["stackTrace"]),
                values["state"].as_str().unwrap().to_owned(),
            ]
        })
        .collect();
    assert_same(rows, jdk);
}

#[test]
fn several_types_go_to_a_folder_one_file_each() {
    let dir = support::temp_dir("convert_folder");
    let output = heapsampler_command([
        "convert",
        profile_recording().to_str().unwrap(),
        "--events",
        "jdk.ObjectAllocationSample,jdk.ExecutionSample",
        "-o",
    ])
    .arg(&dir)
    .output_in_time();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["jdk.ExecutionSample.csv", "jdk.ObjectAllocationSample.csv"]
    );
    // Several types cannot share standard output: bad usage.
    let refused =
        heapsampler_command(["convert", profile_recording().to_str().unwrap(), "-o", "-"])
            .output_in_time();
    assert_eq!(refused.status.code(), Some(2));
}

/// Our folded stacks of one event type, with extra arguments, as a map; the
/// lines must come sorted by stack.
fn collapsed(recording: &Path, event: &str, args: &[&str]) -> BTreeMap<String, i64> {
    let output = heapsampler_command(["convert", recording.to_str().unwrap()])
        .args(["--format", "collapsed", "--events", event, "-o", "-"])
        .args(args)
        .output_in_time();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<(String, i64)> = text
        .lines()
        .map(|line| {
            let (stack, value) = line.rsplit_once(' ').unwrap();
            (stack.to_owned(), value.parse().unwrap())
        })
        .collect();
    assert!(lines.is_sorted(), "sorted by stack");
    let folded: BTreeMap<String, i64> = lines.into_iter().collect();
    folded
}

/// The JDK's events folded the same way: root first, `[unknown]` for no
/// stack, `[truncated]` first for a stack the JDK cut (at its depth, 64 by
/// default, which the conversion keeps too), the allocated class last
/// (`byte[]_[k]`) for an event with one, summing `value` of each event.
fn jdk_folded(events: &[&Json], value: impl Fn(&Json) -> i64) -> BTreeMap<String, i64> {
    let mut folded = BTreeMap::new();
    for event in events {
        let stack = &event["values"]["stackTrace"];
        let mut frames = frame_list(stack, false);
        frames.reverse();
        if stack["truncated"] == true && !frames.is_empty() {
            frames.insert(0, "[truncated]".to_owned());
        }
        if frames.is_empty() {
            frames.push("[unknown]".to_owned());
        }
        if let Some(class) = event["values"]["objectClass"]["name"].as_str() {
            frames.push(format!("{}_[k]", java_class_name(class)));
        }
        let stack = frames.join(";");
        *folded.entry(stack).or_insert(0) += value(event);
    }
    folded
}

fn weight(event: &Json) -> i64 {
    event["values"]["weight"].as_i64().unwrap()
}

#[test]
fn collapsed_allocations_equal_jfr_print_json_weights() {
    let recording = profile_recording();
    let jdk = json_events(recording, "jdk.ObjectAllocationSample");
    let all: Vec<&Json> = jdk.iter().collect();
    let ours = collapsed(recording, "jdk.ObjectAllocationSample", &[]);
    let expected = jdk_folded(&all, weight);
    assert!(expected.len() > 1, "{expected:?}");
    assert_eq!(
        ours.values().sum::<i64>(),
        all.iter().map(|e| weight(e)).sum::<i64>()
    );
    assert_eq!(ours, expected);
}

#[test]
fn collapsed_execution_samples_count_like_jfr_print_json() {
    let recording = profile_recording();
    let jdk = json_events(recording, "jdk.ExecutionSample");
    let all: Vec<&Json> = jdk.iter().collect();
    let ours = collapsed(recording, "jdk.ExecutionSample", &[]);
    assert_eq!(ours.values().sum::<i64>(), all.len() as i64);
    assert_eq!(ours, jdk_folded(&all, |_| 1));
}

#[test]
fn filters_on_a_jdk_recording_keep_what_jfr_print_json_says() {
    let recording = profile_recording();
    let jdk = json_events(recording, "jdk.ObjectAllocationSample");
    let thread = |event: &Json| thread_name(&event["values"]["eventThread"]);
    let time = |event: &Json| instant(event["values"]["startTime"].as_str().unwrap());
    // The workload allocates on worker-0 and worker-1.
    let on_worker_0: Vec<&Json> = jdk.iter().filter(|e| thread(e) == "worker-0").collect();
    assert!(!on_worker_0.is_empty() && on_worker_0.len() < jdk.len());
    assert_eq!(
        collapsed(
            recording,
            "jdk.ObjectAllocationSample",
            &["--thread", "^worker-0$"]
        ),
        jdk_folded(&on_worker_0, weight)
    );
    // The middle half of the samples by time, [from, to).
    let mut times: Vec<i64> = jdk.iter().map(time).collect();
    times.sort();
    let (from, to) = (times[times.len() / 4], times[times.len() * 3 / 4]);
    let in_window: Vec<&Json> = jdk
        .iter()
        .filter(|e| (from..to).contains(&time(e)))
        .collect();
    assert!(!in_window.is_empty() && in_window.len() < jdk.len());
    let rfc3339 = |nanos: i64| {
        chrono::DateTime::from_timestamp_nanos(nanos)
            .format("%Y-%m-%dT%H:%M:%S%.9fZ")
            .to_string()
    };
    assert_eq!(
        collapsed(
            recording,
            "jdk.ObjectAllocationSample",
            &["--from", &rfc3339(from), "--to", &rfc3339(to)]
        ),
        jdk_folded(&in_window, weight)
    );
    // The class as Java names it: the workload's int[] samples, not those
    // of the JDK's own start-up (byte[], String...).
    let ints: Vec<&Json> = jdk
        .iter()
        .filter(|e| {
            java_class_name(e["values"]["objectClass"]["name"].as_str().unwrap()) == "int[]"
        })
        .collect();
    assert!(!ints.is_empty() && ints.len() < jdk.len());
    assert_eq!(
        collapsed(
            recording,
            "jdk.ObjectAllocationSample",
            &["--class", r"^int\[\]$"]
        ),
        jdk_folded(&ints, weight)
    );
}

/// `heapsampler ARGS` run in `dir`: exit code, standard error, and the
/// files `dir` holds afterwards.
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, Vec<String>) {
    let output = heapsampler_command(args).current_dir(dir).output_in_time();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        files,
    )
}

#[test]
fn an_empty_file_is_not_a_recording_and_leaves_nothing_behind() {
    let dir = support::temp_dir("convert_empty_file");
    std::fs::write(dir.join("empty.jfr"), b"").unwrap();
    // Compressed, it is empty once decompressed.
    let nothing = zstd::encode_all(&b""[..], 3).unwrap();
    std::fs::write(dir.join("nothing.jfr.zst"), nothing).unwrap();
    let inputs = ["empty.jfr", "nothing.jfr.zst"];
    for args in [
        &["convert", "empty.jfr", "-o", "out.csv"][..],
        &["convert", "empty.jfr"],
        &["convert", "empty.jfr", "--format", "collapsed"],
        &["convert", "empty.jfr", "--format", "pprof"],
        &["convert", "empty.jfr", "--format", "otlp"],
        &["convert", "empty.jfr", "--format", "parquet"],
        &["convert", "nothing.jfr.zst", "-o", "out"],
        &["top", "empty.jfr"],
        &["summary", "empty.jfr"],
    ] {
        let (code, stderr, files) = run_in(&dir, args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        let compressed = if args[1].ends_with(".zst") {
            " once decompressed"
        } else {
            ""
        };
        assert!(
            stderr.contains(&format!(
                "{}: at byte 0: expected a JFR recording, but the file is empty{compressed}",
                args[1]
            )),
            "{args:?}: {stderr}"
        );
        assert_eq!(files, inputs, "{args:?} left files behind");
    }
}

/// A recording without allocation events: the profiles have nothing to
/// be made of and say so, as `top` does, writing nothing (and, reading the
/// allocation events themselves, take no `--events`); a table of none
/// is a table all the same (a lake may gather recordings of idle JVMs),
/// with the warning.
#[test]
fn a_recording_without_allocations_gives_no_profile_and_an_empty_table() {
    let dir = support::temp_dir("convert_no_allocations");
    jfr_writer::Recording::create(dir.join("idle.jfr"), jfr_writer::Options::default())
        .unwrap()
        .close()
        .unwrap();
    for format in ["pprof", "otlp"] {
        let (code, stderr, files) = run_in(&dir, &["convert", "idle.jfr", "--format", format]);
        assert_eq!(code, Some(1), "{format}: {stderr}");
        assert!(
            stderr.contains("has no jdk.ObjectAllocationSample events")
                && stderr.contains("record with heapsampler"),
            "{format}: {stderr}"
        );
        assert_eq!(files, ["idle.jfr"], "{format}: nothing written");
        // They read the allocation events themselves.
        let events = ["--events", "jdk.ExecutionSample"];
        let (code, stderr, _) = run_in(
            &dir,
            &[&["convert", "idle.jfr", "--format", format][..], &events].concat(),
        );
        assert_eq!(code, Some(2), "{format}: {stderr}");
        assert!(
            stderr.contains(&format!("--format {format}")) && stderr.contains("takes no --events"),
            "{format}: {stderr}"
        );
    }
    let (code, stderr, files) = run_in(&dir, &["convert", "idle.jfr", "--format", "parquet"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("no events of jdk.ObjectAllocationSample"),
        "{stderr}"
    );
    assert_eq!(files, ["idle.jfr", "idle.parquet"]);
    let table = std::fs::read(dir.join("idle.parquet")).unwrap();
    assert!(
        table.starts_with(b"PAR1") && table.ends_with(b"PAR1"),
        "a whole Parquet file: its footer written"
    );
}

#[test]
fn an_event_type_the_recording_lacks_is_an_error_that_names_what_it_has() {
    let dir = support::temp_dir("convert_missing_type");
    let recording = dir.join("profile.jfr");
    std::fs::copy(profile_recording(), &recording).unwrap();
    let summary = support::summary(&recording);
    // A typo, to CSV and to folded stacks: the nearest type is suggested.
    for args in [
        &[
            "convert",
            "profile.jfr",
            "--events",
            "jdk.ObjectAllocationSampel",
        ][..],
        &[
            "convert",
            "profile.jfr",
            "--events",
            "jdk.ObjectAllocationSampel",
            "-o",
            "x.csv",
        ],
        &[
            "convert",
            "profile.jfr",
            "--format",
            "collapsed",
            "--events",
            "jdk.ObjectAllocationSampel",
        ],
    ] {
        let (code, stderr, files) = run_in(&dir, args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("the recording has no jdk.ObjectAllocationSampel events")
                && stderr.contains("(did you mean jdk.ObjectAllocationSample?)"),
            "{args:?}: {stderr}"
        );
        assert_eq!(files, ["profile.jfr"], "{args:?} left files behind");
    }
    // No near name: the types the recording has, most events first, with
    // the counts the JDK's own summary gives.
    let (code, stderr, files) = run_in(
        &dir,
        &["convert", "profile.jfr", "--events", "no.such.Event"],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("did you mean"), "{stderr}");
    let samples = support::summary_count(&summary, "jdk.ObjectAllocationSample");
    assert!(samples > 0);
    assert!(
        stderr.contains(&format!("jdk.ObjectAllocationSample ({samples})")),
        "{stderr}"
    );
    assert!(
        stderr.contains("heapsampler summary profile.jfr"),
        "{stderr}"
    );
    assert_eq!(files, ["profile.jfr"]);
    // A type the recording declares but has no events of (after a filter
    // here) is an answer, not a mistake: a warning and an empty output.
    let (code, stderr, files) = run_in(
        &dir,
        &[
            "convert",
            "profile.jfr",
            "--events",
            "jdk.ObjectAllocationSample",
            "--thread",
            "^nobody$",
            "-o",
            "none.csv",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("no events of jdk.ObjectAllocationSample passed the filters"));
    assert_eq!(files, ["none.csv", "profile.jfr"]);
}

/// `heapsampler ... | head`: a reader that goes away before the output is
/// written ends the command quietly, with success, as it ends `rg` or
/// `jq`: no panic, no message.
#[test]
fn a_closed_standard_output_ends_each_command_quietly() {
    let recording = profile_recording().to_str().unwrap();
    for args in [
        &["top", recording][..],
        &["top", recording, "--by", "class", "-n", "1000"],
        &["diff", recording, recording],
        &["summary", recording],
        &["leaks", recording],
        &[
            "convert",
            recording,
            "--events",
            "jdk.ObjectAllocationSample",
            "-o",
            "-",
        ],
        &["convert", recording, "--format", "collapsed", "-o", "-"],
        &["convert", recording, "--format", "pprof", "-o", "-"],
    ] {
        let mut running = heapsampler_command(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn_within(support::DEADLINE);
        // Closed before the command has read the recording, so before it
        // writes anything.
        drop(running.stdout.take());
        let output = running.wait_with_output();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
}
