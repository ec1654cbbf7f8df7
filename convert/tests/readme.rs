//! The README's commands, run as written: the quick start's first command
//! (`cargo build --release && ./target/release/heapsampler demo`, the demo
//! at its default length) and every example that needs only what this
//! repository bundles. They are read from the README itself, so an example
//! that changes there changes here; the few that cannot run here are
//! skipped by a rule below that says why.
//!
//! The commands run one after another, each under a deadline, in a scratch
//! folder inside the target directory that links `target` and `testdata`
//! to the workspace's: the paths read as in the README, cargo finds the
//! workspace above, and the files they write stay out of the checkout.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A command of the README that cannot run in this test, and why; `None`
/// for one that runs.
fn skipped(command: &str) -> Option<&'static str> {
    if command.contains("PID") || command.contains("/tmp/service.jfr") {
        Some(
            "needs a JVM of the reader's (or its recording); the attach, detach and dump tests run these",
        )
    } else if command.starts_with("cargo test") {
        Some("the command that runs this test")
    } else if command.starts_with("curl ") {
        Some("needs an OpenTelemetry collector; tests/otlp.rs decodes what it would be sent")
    } else if command.starts_with("PATH=") {
        Some("the suite again under another JDK; .ci/run does it")
    } else {
        None
    }
}

/// Programs the README's examples run that the repository does not bundle
/// and a developer may lack.
const OUTSIDE_TOOLS: &[&str] = &["go"];

/// The commands of the README's `sh` blocks, in order: comments dropped,
/// a command's continuation lines (`\` at the end) joined.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in readme.lines() {
        let trimmed = line.trim();
        if !in_block {
            in_block = trimmed == "```sh";
            continue;
        }
        if trimmed == "```" {
            in_block = false;
            continue;
        }
        // A comment alone on its line, or after a command (`  # ...`).
        let code = match trimmed.find(" #") {
            Some(at) => &trimmed[..at],
            None if trimmed.starts_with('#') => "",
            None => trimmed,
        };
        let code = code.trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(code);
        let command = std::mem::take(&mut pending).trim().to_owned();
        if !command.is_empty() {
            commands.push(command);
        }
    }
    commands
}

/// How long a command may take: a build from a clean checkout (the
/// release profile's binaries where the tests built only their own) takes
/// minutes on two cores; every other command, seconds.
fn deadline(command: &str) -> Duration {
    if command.starts_with("cargo ") {
        Duration::from_secs(1200)
    } else {
        support::DEADLINE
    }
}

/// Runs `command` with `sh` in `dir`; panics with its output unless it
/// succeeds. Returns its standard output.
///
/// `cargo install` runs in the workspace itself (a package's path must be
/// where its workspace lists it) and installs into `dir/installed` (whose
/// `bin` is first on every command's `PATH`), building in a target
/// directory kept between runs (a clean one would build everything again,
/// twice in CI); the agent library an installed `heapsampler` writes out
/// goes to `dir/cache`.
fn run(dir: &Path, command: &str) -> String {
    let path = std::env::join_paths(std::iter::once(dir.join("installed/bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .env("CARGO_INSTALL_ROOT", dir.join("installed"))
        .env("XDG_CACHE_HOME", dir.join("cache"));
    if command.starts_with("cargo install") {
        // An install carries the agent, whatever a developer's own build
        // skips (`HEAPSAMPLER_NO_CARRIED_AGENT`, convert/build.rs).
        sh.current_dir(root())
            .env("CARGO_TARGET_DIR", root().join("target/readme-install"))
            .env_remove("HEAPSAMPLER_NO_CARRIED_AGENT");
    }
    let output = sh.output_within(deadline(command));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the README's `{command}` failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The path after `-o` in a command: the file it must have written.
fn output_file(command: &str) -> Option<&str> {
    let mut words = command.split_whitespace();
    words.find(|word| *word == "-o")?;
    words.next()
}

#[test]
fn the_readme_commands_run_as_written() {
    let dir = support::temp_dir("readme");
    for linked in ["target", "testdata"] {
        std::os::unix::fs::symlink(root().join(linked), dir.join(linked)).unwrap();
    }
    let commands = readme_commands();
    let quick_start = "cargo build --release && ./target/release/heapsampler demo";
    assert_eq!(
        commands.first().map(String::as_str),
        Some(quick_start),
        "the README's first command"
    );
    let (mut ran, mut without_tool) = (0, 0);
    for command in &commands {
        if let Some(why) = skipped(command) {
            eprintln!("skipped `{command}`: {why}");
            continue;
        }
        // A tool the README's table lists for skipped tests (`go`): its
        // commands are skipped, with one line, where it is missing (never
        // in CI, which installs it).
        let program = command.split_whitespace().next().unwrap_or_default();
        if OUTSIDE_TOOLS.contains(&program)
            && support::needed_tool(&format!("`{command}`"), &[program]).is_none()
        {
            without_tool += 1;
            continue;
        }
        let stdout = run(&dir, command);
        ran += 1;
        if command == quick_start {
            check_demo(&dir.join("heapsampler-demo"), &stdout);
        }
        if command.starts_with("cargo install") {
            // The executable alone: what it records with, it carries.
            let installed: Vec<_> = std::fs::read_dir(dir.join("installed/bin"))
                .unwrap()
                .map(|entry| entry.unwrap().file_name())
                .collect();
            assert_eq!(installed, ["heapsampler"], "{command}");
            // The demo wrote out its own; the installed one writes its.
            let _ = std::fs::remove_dir_all(dir.join("cache"));
        }
        if command.starts_with("heapsampler record") {
            let cached =
                std::fs::read_dir(dir.join("cache/heapsampler")).map_or(0, Iterator::count);
            assert_eq!(cached, 1, "`{command}` wrote out the agent it carries");
        }
        if command.contains(" diff base.jfr leak.jfr --by app-site") {
            // "what changed: the leak's site first".
            let first = stdout
                .lines()
                .find(|line| line.trim_start().starts_with('1'))
                .unwrap_or_else(|| panic!("a first row in {stdout}"));
            assert!(first.contains("Paced.leak"), "the leak first: {stdout}");
        }
        if let Some(file) = output_file(command) {
            let written = std::fs::metadata(dir.join(file)).map_or(0, |m| m.len());
            assert!(written > 0, "`{command}` wrote no {file}");
        }
    }
    // The quick start, recording, looking, pprof, the writer's example.
    assert!(
        ran + without_tool >= 25,
        "only {ran} of the README's commands ran ({without_tool} skipped for a missing tool)"
    );
}

/// What the demo at its default length must show: the JDK's parser agrees
/// with its files, and its first lines name the allocation pressure and
/// the leak.
fn check_demo(dir: &Path, stdout: &str) {
    let recording = dir.join("demo.jfr");
    let csv = dir.join("demo-samples.csv");
    // The JDK's parser agrees with the demo's own count of samples.
    let samples =
        support::summary_count(&support::summary(&recording), "jdk.ObjectAllocationSample");
    assert!(samples > 0);
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(rows as u64, samples, "one CSV row per sample");
    // The report names the leak's site as its suspect.
    let report = std::fs::read_to_string(dir.join("demo.html")).unwrap();
    assert!(
        report
            .contains("class=\"suspect\" data-rank=\"1\" data-site=\"Demo$SessionCache.remember("),
        "the leak a suspect in the report:\n{stdout}"
    );
    // The flame graph's root counts every sample (1,234: as titles write it).
    let svg = std::fs::read_to_string(dir.join("demo.svg")).unwrap();
    let digits = samples.to_string();
    let mut groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .map(|group| std::str::from_utf8(group).unwrap())
        .collect();
    groups.reverse();
    let root = format!(", 100.00%, {} samples)</title>", groups.join(","));
    assert!(svg.contains(&root), "{root} in the flame graph");
    for expected in [
        "Recording a small order service for 5 s".to_owned(),
        "the JDK's `jfr summary` reads it:".to_owned(),
        "samples as CSV: heapsampler-demo/demo-samples.csv".to_owned(),
        "flame graph: heapsampler-demo/demo.svg".to_owned(),
        // The leak, found: the cache keeps 32 MiB over the 5 s, some 60
        // samples, growing far above what the growth test needs.
        "report: heapsampler-demo/demo.html (open it in a browser: 1 suspect, growing +".to_owned(),
        "Where the bytes were allocated".to_owned(),
        "Still live at the end".to_owned(),
        "open heapsampler-demo/demo.jfr in JDK Mission Control".to_owned(),
    ] {
        assert!(stdout.contains(&expected), "{expected:?} in {stdout}");
    }
    // Both tables name the program's own code, past the JDK's frames; the
    // leak (a cache that only grows, 4 KiB a session) is what stays live.
    let (allocated, live) = stdout
        .split_once("Where the bytes were allocated")
        .and_then(|(_, rest)| rest.split_once("Still live at the end"))
        .unwrap();
    let first_row = |table: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with('1'))
            .unwrap_or_else(|| panic!("a first row in {table}"))
            .to_owned()
    };
    let first = first_row(allocated);
    assert!(first.contains("Demo"), "the program's own code: {first}");
    assert!(
        first_row(live).contains("Demo$SessionCache.remember"),
        "the leak first: {live}"
    );
    // ...and among the first lines, before any table.
    let leak = stdout
        .lines()
        .take(8)
        .find_map(|l| l.trim().strip_prefix("top live site: "))
        .unwrap_or_else(|| panic!("the leak in the first lines of {stdout}"));
    assert!(leak.starts_with("Demo$SessionCache.remember"), "{leak}");
    // The summary's headline names the table's first site, share and all.
    let headline = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("top allocation site: "))
        .unwrap_or_else(|| panic!("a headline in {stdout}"));
    let (site, rest) = headline.split_once(" (").unwrap();
    let share: f64 = rest.split_once('%').unwrap().0.parse().unwrap();
    // `#, bytes, interval, share, objects, interval, samples, where`:
    // cells apart by two spaces or more.
    let row: Vec<&str> = first
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let row_share: f64 = row[3].trim_end_matches('%').parse().unwrap();
    assert_eq!(site, *row.last().unwrap(), "{headline} against {first}");
    // The headline rounds to a whole percent, the table to a tenth.
    assert!(
        (share - row_share).abs() <= 0.55,
        "{headline} against {first}"
    );
}
