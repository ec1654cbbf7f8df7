//! `heapsampler convert` against `jfr print --json`: every
//! jdk.ObjectAllocationSample and jdk.ExecutionSample row of a real JDK
//! recording equals, value by value, what the JDK says about the same event.

#[path = "../../jfr-writer/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use heapsampler_convert::export::java_class_name;
use serde_json::Value as Json;

/// A JDK 17 `profile` recording of an allocating workload, made once.
fn profile_recording() -> &'static Path {
    static RECORDING: OnceLock<PathBuf> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("profile-{}.jfr", std::process::id()));
        let workload = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/workloads/KnownAllocations.java");
        let status = Command::new("java")
            .arg(format!(
                "-XX:StartFlightRecording=filename={},settings=profile",
                path.display()
            ))
            .arg(workload)
            .args(["2", "256"])
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        path
    })
}

fn rows(recording: &Path, event: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let output = Command::new(env!("CARGO_BIN_EXE_heapsampler"))
        .args([
            "convert",
            recording.to_str().unwrap(),
            "--events",
            event,
            "-o",
            "-",
        ])
        .output()
        .unwrap();
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

/// A stack as our CSV writes it, from the JDK's JSON (empty when null).
fn frames(stack: &Json) -> String {
    let Some(frames) = stack["frames"].as_array() else {
        return String::new();
    };
    frames
        .iter()
        .take(64)
        .map(|frame| {
            let method = &frame["method"];
            let class = java_class_name(method["type"]["name"].as_str().unwrap());
            let line = frame["lineNumber"].as_i64().unwrap();
            let name = method["name"].as_str().unwrap();
            if line >= 0 {
                format!("{class}.{name}({line})")
            } else {
                format!("{class}.{name}")
            }
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn json_events(recording: &Path, event: &str) -> Vec<Json> {
    // jfr print keeps 5 frames unless told otherwise.
    let output = Command::new("jfr")
        .args(["print", "--json", "--stack-depth", "64", "--events", event])
        .arg(recording)
        .output()
        .unwrap();
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
    let jdk = json_events(recording, "jdk.ObjectAllocationSample")
        .iter()
        .map(|event| {
            let values = &event["values"];
            vec![
                values["startTime"].as_str().unwrap().to_owned(),
                values["eventThread"]["javaName"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
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
                values["sampledThread"]["javaName"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
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
    let output = Command::new(env!("CARGO_BIN_EXE_heapsampler"))
        .args([
            "convert",
            profile_recording().to_str().unwrap(),
            "--events",
            "jdk.ObjectAllocationSample,jdk.ExecutionSample",
            "-o",
        ])
        .arg(&dir)
        .output()
        .unwrap();
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
    // Several types cannot share standard output.
    let refused = Command::new(env!("CARGO_BIN_EXE_heapsampler"))
        .args(["convert", profile_recording().to_str().unwrap(), "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
}
