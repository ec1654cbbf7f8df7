//! A JVM that runs out of heap: the bundled `OutOfMemory` workload leaks
//! 64 KiB `long[]` arrays from `Leak.keep` into a 64 MiB heap, beside twice
//! as many bytes of `byte[]` garbage from `Churn.garbage`, until an
//! `OutOfMemoryError`. The recording says that it ran out, when, and what
//! filled the heap, read by the JDK's `jfr` and by Mission Control's parser;
//! so it does when the JVM is killed right after, and with
//! `-XX:+ExitOnOutOfMemoryError` it holds what its last flush wrote.

use heapsampler_test_support::{self as support, DEADLINE, Deadline};

use heapsampler_test_support::{MissionControl, heapsampler, heapsampler_command, text};
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The heap the workload fills.
const HEAP: &str = "-Xmx64m";

/// `heapsampler record` of the workload, the JVM's arguments `jvm` first,
/// then the workload's `args`; not run yet.
fn record_command(recording: &Path, jvm: &[&str], args: &[&str]) -> Command {
    let mut command = heapsampler_command(["record"]);
    command
        .arg("-o")
        .arg(recording)
        .args(["--interval", "64k", "--agent"])
        .arg(support::agent_library())
        .args(["--", "java"])
        .args(jvm)
        .arg("-cp")
        .arg(support::compiled_workload("OutOfMemory"))
        .arg("OutOfMemory")
        .args(args);
    command
}

/// The values of each event of `event_type` in `path`, as the JDK reads them.
fn events_of(path: &Path, event_type: &str) -> Vec<serde_json::Value> {
    support::json_events(&support::print_json(path))
        .iter()
        .filter(|e| e["type"] == event_type)
        .map(|e| e["values"].clone())
        .collect()
}

/// The top frame's method of an event's stack trace, as `Class.method`.
fn top_frame(values: &serde_json::Value) -> String {
    let method = &values["stackTrace"]["frames"][0]["method"];
    format!(
        "{}.{}",
        method["type"]["name"].as_str().unwrap_or("?"),
        method["name"].as_str().unwrap_or("?")
    )
}

/// The method whose allocation failed, as the workload's `oom` line says
/// it (`oom 57 in OutOfMemory$Leak.keep`); `None` for another line.
fn failed_in(line: &str) -> Option<&str> {
    line.strip_prefix("oom ")?.split(" in ").nth(1)
}

/// What the recording of a JVM that ran out of heap holds, whatever became
/// of the JVM next: the JDK reads it; it marks the exhaustion, on the
/// thread that failed and where (`failed_in`, as the workload said); and
/// the old objects written with it, most of them `Leak.keep`'s (its arrays
/// fill the heap; `Churn.garbage`'s die at once, so few are live at any
/// moment). Mission Control parses it, where `test` has its checker.
fn assert_holds_the_exhaustion(test: &str, path: &Path, failed_in: &str) {
    let summary = support::summary(path);
    assert!(
        support::summary_count(&summary, "heapsampler.HeapExhausted") >= 1,
        "{summary}"
    );
    assert!(
        support::summary_count(&summary, "jdk.GCHeapSummary") > 0,
        "{summary}"
    );
    // The workload's, on main; the JVM's notification thread,
    // building a collection's notification in the full heap, can run out
    // too, and first.
    let markers = events_of(path, "heapsampler.HeapExhausted");
    let on_main = markers
        .iter()
        .find(|marker| marker["eventThread"]["javaName"] == "main")
        .unwrap_or_else(|| panic!("no exhaustion on main: {markers:#?}"));
    assert_eq!(on_main["message"], "Java heap space");
    assert_eq!(top_frame(on_main), failed_in);
    // One marker of a burst carries them: the first the writer took, which
    // need not be the first in time (each thread reports when its
    // callback gets there).
    let written: u64 = markers
        .iter()
        .map(|marker| marker["oldObjects"].as_u64().unwrap())
        .sum();
    assert!(
        written > 100,
        "{written} old objects with the markers: {markers:#?}"
    );
    let old_objects = events_of(path, "jdk.OldObjectSample");
    let leaked = old_objects
        .iter()
        .filter(|o| top_frame(o) == "OutOfMemory$Leak.keep")
        .count();
    // The leak is about 57 of the heap's 64 MiB: all but a few old objects.
    assert!(
        leaked * 10 >= old_objects.len() * 9,
        "{leaked} of {} old objects are Leak.keep's",
        old_objects.len()
    );
    let Some(jmc) = MissionControl::find(test) else {
        return;
    };
    let parsed = jmc.run([path.to_str().unwrap()]);
    let said = text(&parsed.stdout);
    assert!(
        matches!(parsed.status.code(), Some(0 | 1)) && said.contains("RESULT: parsed"),
        "Mission Control cannot parse {}: {said}{}",
        path.display(),
        text(&parsed.stderr)
    );
}

/// The workload catches the error, prints `oom`, and returns from main:
/// the record's report says the JVM ran out of memory and shows the leak
/// as the first live site, as `top --live` does; Mission Control's leak
/// page finds the leaked class.
#[test]
fn running_out_of_heap_is_recorded_with_what_filled_it() {
    let dir = support::temp_dir("convert_out_of_memory");
    let recording = dir.join("oom.jfr");
    let output = record_command(&recording, &[HEAP], &[]).output_in_time();
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stderr}");
    // The workload says where it ran out.
    let failed = stdout.lines().find_map(failed_in);
    let failed = failed.unwrap_or_else(|| panic!("no oom line: {stdout}"));
    assert!(
        stderr.contains("heapsampler: the JVM ran out of memory (Java heap space) at "),
        "{stderr}"
    );
    // The report's live table, and what live means.
    let report_rows: Vec<&str> = stderr
        .lines()
        .skip_while(|line| !line.contains("still live at the end, by the first frame"))
        .collect();
    assert!(
        report_rows
            .get(2)
            .is_some_and(|row| row.contains(" OutOfMemory$Leak.keep(")),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("heapsampler: live: reachable at the end (collected before the final sweep)"),
        "{stderr}"
    );
    assert_holds_the_exhaustion(
        "running_out_of_heap_is_recorded_with_what_filled_it",
        &recording,
        failed,
    );

    let top = heapsampler([
        "top",
        recording.to_str().unwrap(),
        "--live",
        "--by",
        "app-site",
    ]);
    let table = text(&top.stdout);
    assert!(top.status.success(), "{}", text(&top.stderr));
    let first_row = table.lines().nth(1).unwrap_or_default();
    assert!(first_row.contains(" OutOfMemory$Leak.keep("), "{table}");
    assert!(
        table.contains("live: reachable at the end (collected before the final sweep)"),
        "{table}"
    );

    // Mission Control's Memory Leak page: its trees are of the leaked
    // long[] arrays, more of them than of anything else.
    let Some(jmc) = MissionControl::find("running_out_of_heap_is_recorded_with_what_filled_it")
    else {
        return;
    };
    let leaks = jmc.run(["--leaks", recording.to_str().unwrap()]);
    let trees = text(&leaks.stdout);
    assert!(leaks.status.success(), "{trees}{}", text(&leaks.stderr));
    let count = |class: &str| {
        trees
            .lines()
            .skip_while(|line| !line.starts_with("TREES"))
            .skip(1)
            .take_while(|line| line.starts_with("  "))
            .filter(|line| line.trim_start().starts_with(class))
            .count()
    };
    assert!(count("long[]") > count("byte[]"), "{trees}");
    assert!(count("long[]") > 0, "{trees}");
}

/// Killed right after the error (SIGKILL, no exit of its own): the file is
/// complete up to the exhaustion, with its marker and old objects. It has
/// no live set, and `top --live` says why.
#[test]
fn a_jvm_killed_after_running_out_of_heap_leaves_what_filled_it() {
    let dir = support::temp_dir("convert_out_of_memory_killed");
    let recording = dir.join("killed.jfr");
    let mut running = record_command(&recording, &[HEAP], &["sleep", "600"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn_within(DEADLINE);
    // The workload says where it ran out.
    let failed = std::io::BufReader::new(running.stdout.as_mut().unwrap())
        .lines()
        .map_while(Result::ok)
        .find_map(|line| failed_in(&line).map(str::to_owned));
    let failed = failed.expect("the workload ended without running out of heap");
    // The marker was flushed before the error was thrown, so before `oom`.
    drop(running);

    assert_holds_the_exhaustion(
        "a_jvm_killed_after_running_out_of_heap_leaves_what_filled_it",
        &recording,
        &failed,
    );
    let summary = support::summary(&recording);
    assert_eq!(support::summary_count(&summary, "heapsampler.LiveSet"), 0);
    let top = heapsampler(["top", recording.to_str().unwrap(), "--live"]);
    let said = text(&top.stdout);
    assert!(top.status.success(), "{}", text(&top.stderr));
    assert!(
        said.contains("live: none known: the recording has no live set"),
        "{said}"
    );
}

/// With -XX:+ExitOnOutOfMemoryError HotSpot exits inside the failing
/// allocation (exit code 3), before it tells any agent: no marker, no live
/// set, and the file holds what its last flush wrote, whole. Flushed every
/// 20 ms here, so that the run (about 0.3 s of leaking) flushes at all.
#[test]
fn exit_on_out_of_memory_error_leaves_the_last_flush() {
    let dir = support::temp_dir("convert_out_of_memory_exit");
    let recording = dir.join("exited.jfr");
    let agent: PathBuf = support::agent_library();
    let output = Command::new("java")
        .arg(format!(
            "-agentpath:{}=file={},interval=64k,flush=20ms",
            agent.display(),
            recording.display()
        ))
        .args([HEAP, "-XX:+ExitOnOutOfMemoryError", "-cp"])
        .arg(support::compiled_workload("OutOfMemory"))
        .arg("OutOfMemory")
        .output_in_time();
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("Terminating due to java.lang.OutOfMemoryError"),
        "{}",
        text(&output.stdout)
    );
    let summary = support::summary(&recording);
    assert!(
        support::summary_count(&summary, "jdk.ObjectAllocationSample") > 0,
        "{summary}"
    );
    assert_eq!(
        support::summary_count(&summary, "heapsampler.HeapExhausted"),
        0
    );
    assert_eq!(support::summary_count(&summary, "heapsampler.LiveSet"), 0);
    let top = heapsampler(["top", recording.to_str().unwrap()]);
    assert!(top.status.success(), "{}", text(&top.stderr));
}
