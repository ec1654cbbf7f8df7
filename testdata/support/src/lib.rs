//! What the tests and benchmarks of several crates share, chiefly the
//! JDK's own parsers run on the files we write: `jfr summary`, `jfr print
//! --json`, and `testdata/checker/RecordingDump.java`, which reads with
//! `jdk.jfr.consumer.RecordingFile` and prints every field of every event.
//!
//! Files go under cargo's target directory (`target/tmp`, what cargo gives
//! integration tests as `CARGO_TARGET_TMPDIR`), found from the running test
//! binary, so a test's files stay beside the build that made them; or
//! under `HEAPSAMPLER_TEST_TMP` when set, so that two runs of the suite
//! from one build (under two JDKs at once, to load the machine) do not
//! write each other's files.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub mod browser;
mod cli;
mod process;
pub mod python;
pub mod recordings;

pub use cli::{
    JMC_CHECK_VARIABLE, MissionControl, heapsampler, heapsampler_command, heapsampler_exe,
    heapsampler_exit, heapsampler_ok, record_with_agent, text,
};

pub use process::{DEADLINE, Deadline, Watched};

/// `HEAPSAMPLER_TEST_TMP`, else `target/tmp`: the target directory is the first one up from the running
/// binary that holds cargo's `CACHEDIR.TAG`, or else the one holding the
/// binary's profile directory (`target/release/deps/test-hash`). Cargo
/// writes the tag only into a target directory it creates, so `target`
/// lacks it when a build with `CARGO_TARGET_DIR=target/other` made it.
fn target_tmp() -> PathBuf {
    static TMP: OnceLock<PathBuf> = OnceLock::new();
    TMP.get_or_init(|| {
        if let Some(tmp) = std::env::var_os("HEAPSAMPLER_TEST_TMP") {
            let tmp = PathBuf::from(tmp);
            std::fs::create_dir_all(&tmp).unwrap();
            return tmp;
        }
        let exe = std::env::current_exe().expect("the test binary's path");
        let above_profile = || {
            let deps = exe.parent().filter(|dir| dir.ends_with("deps"))?;
            deps.parent()?.parent()
        };
        let target = exe
            .ancestors()
            .find(|dir| dir.join("CACHEDIR.TAG").is_file())
            .or_else(above_profile)
            .unwrap_or_else(|| panic!("{} is not under a cargo target directory", exe.display()));
        let tmp = target.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        tmp
    })
    .clone()
}

/// `libheapsampler.so` as cargo built it for this test run, for the agent's
/// and the command line's tests: in the deps directory beside the test
/// binary. (The copy one level up is only refreshed by `cargo build`, so it
/// can be stale under `cargo test`.)
pub fn agent_library() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let built = deps.join("libheapsampler.so");
    assert!(
        built.exists(),
        "cargo builds {} with the tests",
        built.display()
    );
    built
}

/// The chunks of a recording, in order: each one's offset and header. Stops
/// at the first header that does not decode or claims no bytes (a chunk
/// still being written), so a file caught mid-write yields what is whole.
pub fn chunks(bytes: &[u8]) -> impl Iterator<Item = (usize, jfr_format::ChunkHeader)> + '_ {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let header = jfr_format::ChunkHeader::decode(bytes.get(at..)?)?;
        if header.chunk_size == 0 {
            return None;
        }
        let offset = at;
        at = at.saturating_add(header.chunk_size as usize);
        Some((offset, header))
    })
}

/// Whether `file` is a finished recording: its last chunk's header says
/// the chunk is complete and the recording's final one. A recording of
/// several chunks is finished only when its last is, whatever the first
/// says.
pub fn is_finished(file: &Path) -> bool {
    use jfr_format::{FLAG_FINAL_CHUNK, GENERATION_FINISHED};
    let Ok(bytes) = std::fs::read(file) else {
        return false;
    };
    for (_, header) in chunks(&bytes) {
        if header.generation != GENERATION_FINISHED {
            return false;
        }
        if header.flags & FLAG_FINAL_CHUNK != 0 {
            return true;
        }
    }
    false
}

/// The program `name` where the `PATH` has it.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|program| program.is_file())
}

/// Says that (part of) a test was skipped, and why, in one line on the
/// process's standard error itself: the test harness keeps what `eprintln!`
/// prints to itself unless the test fails, and a skip must be seen.
pub fn say_skipped(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `java`'s feature release (17, 25), as it says itself
/// (`java.specification.version`).
pub fn java_release(java: &Path) -> u32 {
    let output = Command::new(java)
        .args(["-XshowSettings:properties", "-version"])
        .output_in_time();
    let text = text(&output.stderr);
    text.lines()
        .find_map(|line| line.trim().strip_prefix("java.specification.version = "))
        .and_then(|version| version.parse().ok())
        .unwrap_or_else(|| panic!("no java.specification.version:\n{text}"))
}

/// Temurin 25's home, where its JDK is: generational ZGC (its only ZGC)
/// and generational Shenandoah, and the newer `jfr`. Without it the test
/// (or `what` of it) is skipped and says so, except in CI (`CI=true`),
/// whose image has it.
pub fn temurin_25(what: &str) -> Option<&'static Path> {
    let home = Path::new(TEMURIN_25);
    if home.join("bin/java").is_file() {
        return Some(home);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what}: CI=true and no {TEMURIN_25}"
    );
    say_skipped(format_args!("{what}: skipped: no {TEMURIN_25}"));
    None
}

/// Where Temurin 25 is installed, on this machine and in CI.
const TEMURIN_25: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";

/// A tool a test needs that a developer may lack (Chromium, Go): the first
/// of `names` on the `PATH`. Without it the test is skipped and says so,
/// except in CI (`CI=true`), where `.ci/run` installs it and its absence
/// fails the test.
pub fn needed_tool(test: &str, names: &[&str]) -> Option<PathBuf> {
    let found = names.iter().find_map(|name| on_path(name));
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: CI=true and none of {names:?} on the PATH: .ci/run installs it"
        );
        say_skipped(format_args!(
            "{test}: skipped: none of {names:?} on the PATH"
        ));
    }
    found
}

/// A fresh temporary directory for one test's files.
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = target_tmp().join("heapsampler-tests").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(command: &mut Command) -> String {
    let output = command.output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{stderr}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
            .chars()
            .take(2000)
            .collect::<String>()
    );
    String::from_utf8(output.stdout).expect("the JDK prints UTF-8")
}

/// `jfr summary FILE`: panics unless the JDK reads the file.
pub fn summary(path: &Path) -> String {
    run(Command::new("jfr").arg("summary").arg(path))
}

/// The event count `jfr summary` gives for `event_type` (0 if not listed).
pub fn summary_count(summary: &str, event_type: &str) -> u64 {
    summary
        .lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some(event_type)).then(|| words.next().unwrap().parse().unwrap())
        })
        .unwrap_or(0)
}

/// The chunk count `jfr summary` gives.
pub fn summary_chunks(summary: &str) -> u64 {
    summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("Chunks: "))
        .expect("jfr summary names the chunk count")
        .parse()
        .unwrap()
}

/// `jfr print --json FILE`, parsed.
pub fn print_json(path: &Path) -> serde_json::Value {
    let text = run(Command::new("jfr").args(["print", "--json"]).arg(path));
    serde_json::from_str(&text).expect("jfr print --json prints JSON")
}

/// The events of a `jfr print --json` document.
pub fn json_events(document: &serde_json::Value) -> &Vec<serde_json::Value> {
    document["recording"]["events"]
        .as_array()
        .expect("an events array")
}

/// `jfr print FILE` (the text form, which formats units).
pub fn print_text(path: &Path, event_type: &str) -> String {
    run(Command::new("jfr")
        .args(["print", "--events", event_type])
        .arg(path))
}

/// The checker's classes, compiled once per test binary into the target dir.
fn checker_classes() -> &'static Path {
    static CLASSES: OnceLock<PathBuf> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../checker/RecordingDump.java");
        let classes = target_tmp().join("checker-classes");
        // Compile into a private directory, then rename: test binaries run in
        // parallel and must never see a half-written class file.
        let staging = classes.with_extension(format!("{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        run(Command::new("javac").arg("-d").arg(&staging).arg(&source));
        let _ = std::fs::remove_dir_all(&classes);
        if std::fs::rename(&staging, &classes).is_err() {
            // Another binary won the race with the same source: use its copy.
            let _ = std::fs::remove_dir_all(&staging);
        }
        classes
    })
}

/// Every event of the file, as the JDK reads it, one canonical line each.
pub fn dump(path: &Path) -> Vec<String> {
    dump_types(path, &[])
}

/// The value of field `name` in a line of [`dump_types`]: a quoted string
/// unquoted (its spaces kept), anything else up to the next space, comma
/// or closing brace (a field of an inline struct: `used` of
/// `metaspace={committed=1,used=2}`).
pub fn dump_value(line: &str, name: &str) -> String {
    let start = line
        .find(&format!(" {name}="))
        .or_else(|| line.find(&format!("{{{name}=")))
        .or_else(|| line.find(&format!(",{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        + name.len()
        + 2;
    let rest = &line[start..];
    match rest.strip_prefix('"') {
        Some(quoted) => quoted[..quoted.find('"').unwrap()].to_owned(),
        None => rest.split([' ', ',', '}']).next().unwrap().to_owned(),
    }
}

/// The events of the given types, as the JDK reads them.
pub fn dump_types(path: &Path, types: &[&str]) -> Vec<String> {
    let mut command = Command::new("java");
    command
        .arg("-cp")
        .arg(checker_classes())
        .arg("RecordingDump");
    if !types.is_empty() {
        command.arg("--types").arg(types.join(","));
    }
    run(command.arg(path)).lines().map(str::to_owned).collect()
}

/// A double field's value in a [`dump_types`] line, which prints it as
/// `double:` and its bits in hex.
pub fn dump_double(line: &str, name: &str) -> f64 {
    let value = dump_value(line, name);
    let bits = value.strip_prefix("double:").unwrap_or(&value);
    let bits = u64::from_str_radix(bits, 16)
        .unwrap_or_else(|e| panic!("{name}={value} is no double's bits ({e}) in {line}"));
    f64::from_bits(bits)
}

/// How many events the JDK reads in each of `paths`
/// (`jdk.jfr.consumer.RecordingFile`, one JVM for them all), or why it
/// cannot read one.
pub fn count_events_each(paths: &[PathBuf]) -> Vec<Result<u64, String>> {
    let mut command = Command::new("java");
    command
        .arg("-cp")
        .arg(checker_classes())
        .arg("RecordingDump")
        .arg("--count-each")
        .args(paths);
    let counts: Vec<Result<u64, String>> = run(&mut command)
        .lines()
        .map(|line| line.parse().map_err(|_| line.to_owned()))
        .collect();
    assert_eq!(counts.len(), paths.len(), "a line per file: {counts:?}");
    counts
}

/// A string as the checker prints it: quoted, every character outside
/// printable ASCII (and `"` and `\`) as `\uXXXX` per UTF-16 unit.
pub fn quote(text: Option<&str>) -> String {
    let Some(text) = text else {
        return "null".to_owned();
    };
    let mut out = String::from("\"");
    for unit in text.encode_utf16() {
        match unit {
            0x20..=0x7e if unit != b'"' as u16 && unit != b'\\' as u16 => {
                out.push(unit as u8 as char)
            }
            _ => out.push_str(&format!("\\u{unit:04x}")),
        }
    }
    out.push('"');
    out
}

/// Each event type's setting descriptors as the JDK reads them:
/// `TYPE NAME=DEFAULT SETTING_CLASS "LABEL"`.
pub fn settings(path: &Path) -> Vec<String> {
    let mut command = Command::new("java");
    command
        .arg("-cp")
        .arg(checker_classes())
        .arg("RecordingDump")
        .arg("--settings")
        .arg(path);
    run(&mut command).lines().map(str::to_owned).collect()
}

/// The class named `name` (internal form: `java/lang/String`, `[B`) in
/// a recording a test writes.
pub fn class_of<S: jfr_writer::Sink>(
    recording: &mut jfr_writer::Recording<S>,
    name: &str,
) -> jfr_writer::ClassRef {
    let name = recording.symbol(name);
    recording.class(jfr_writer::Class {
        class_loader: None,
        name,
        package: None,
        modifiers: 0,
        hidden: false,
    })
}

/// A `()V` method `name` of the class `owner` (internal form) in a
/// recording a test writes.
pub fn method_of<S: jfr_writer::Sink>(
    recording: &mut jfr_writer::Recording<S>,
    owner: &str,
    name: &str,
) -> jfr_writer::MethodRef {
    let class = class_of(recording, owner);
    let (name, descriptor) = (recording.symbol(name), recording.symbol("()V"));
    recording.method(jfr_writer::Method {
        class,
        name,
        descriptor,
        modifiers: 0,
        hidden: false,
    })
}

/// A stack of one frame, at line 1 of the `()V` method `name` of the class
/// `owner` (internal form), in a recording a test writes.
pub fn one_frame_stack<S: jfr_writer::Sink>(
    recording: &mut jfr_writer::Recording<S>,
    owner: &str,
    name: &str,
) -> jfr_writer::StackTraceRef {
    let method = method_of(recording, owner, name);
    recording.stack_trace(jfr_writer::StackTrace {
        truncated: false,
        frames: vec![jfr_writer::StackFrame {
            method,
            line_number: 1,
            bytecode_index: 0,
            frame_type: jfr_writer::FrameType::JitCompiled,
        }],
    })
}

/// The bundled workload `testdata/workloads/NAME.java`, which `java` runs
/// from source.
pub fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../workloads/{name}.java"))
}

/// The line (from 1) of the bundled workload `name` that holds `text`,
/// which must occur on exactly one line: a test names a site by its code,
/// so editing the workload above it does not break the test.
pub fn workload_line(name: &str, text: &str) -> usize {
    let path = workload(name);
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let lines: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains(text))
        .map(|(index, _)| index + 1)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "`{text}` on lines {lines:?} of {}",
        path.display()
    );
    lines[0]
}

/// A JVM allocating on 4 threads for up to a minute (`Scenarios run 60
/// 4`), started without the agent; returns once it says it is ready, for
/// a test to attach to. Killed when dropped, or after [`DEADLINE`].
pub fn running_jvm() -> Watched {
    running_jvm_with::<&str>(&[])
}

/// [`running_jvm`], started with the JVM's options `jvm` (an
/// `-agentpath:`, properties).
pub fn running_jvm_with<S: AsRef<std::ffi::OsStr>>(jvm: &[S]) -> Watched {
    use std::io::BufRead;
    let mut child = Command::new("java")
        .args(jvm)
        .arg(workload("Scenarios"))
        .args(["run", "60", "4"])
        .stdout(std::process::Stdio::piped())
        .spawn_within(DEADLINE);
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    child
}

/// A folder holding the bundled workload `name` compiled, made once per
/// test binary: a JVM that runs it from there starts at once, where a
/// source launch compiles it first, which takes a second or more on a busy
/// machine and allocates as much as a small workload (and all of it lands
/// in a recording).
pub fn compiled_workload(name: &str) -> PathBuf {
    static COMPILED: OnceLock<std::sync::Mutex<std::collections::HashMap<String, PathBuf>>> =
        OnceLock::new();
    let mut compiled = COMPILED.get_or_init(Default::default).lock().unwrap();
    compiled
        .entry(name.to_owned())
        .or_insert_with(|| {
            let dir = target_tmp().join(format!("workload-{name}-{}", std::process::id()));
            run(Command::new("javac")
                .arg("-d")
                .arg(&dir)
                .arg(workload(name)));
            dir
        })
        .clone()
}

/// A one-second JDK 17 recording of a JVM doing nothing (`-version`) with
/// the `profile` settings: the JDK's own declarations to compare with.
pub fn jdk_recording() -> &'static Path {
    static RECORDING: OnceLock<PathBuf> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let path = target_tmp().join(format!("jdk-{}.jfr", std::process::id()));
        record_with_jfr(&path, &["settings=profile"], &["-version"]);
        path
    })
}

/// Runs `java ARGS` with the JDK's own recorder on, writing `path` with the
/// recording options `options` (`settings=profile`, `settings=FILE.jfc`,
/// ...: `-XX:StartFlightRecording` merges settings in order); panics with
/// the JVM's output unless it succeeds.
pub fn record_with_jfr(path: &Path, options: &[&str], args: &[&str]) {
    let option = format!(
        "-XX:StartFlightRecording:filename={},{}",
        path.display(),
        options.join(",")
    );
    run(Command::new("java").arg(option).args(args));
}

/// Writes `count` `jdk.ObjectAllocationSample` events (weight = index, one
/// thread, no stack or class) in chunks of at most `max_chunk_size` bytes,
/// flushing every `flush_every` events: a small multi-chunk recording.
pub fn write_allocation_samples(path: &Path, count: i64, flush_every: i64, max_chunk_size: u64) {
    use jfr_writer::events::{self, ObjectAllocationSample};
    use jfr_writer::{Options, Recording, Thread, Ticks};
    let options = Options {
        max_chunk_size,
        ..Options::default()
    };
    let mut recording = Recording::create(path, options).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "t".into(),
        os_thread_id: 1,
        java_name: "t".into(),
        java_thread_id: 1,
        group: None,
    });
    for i in 0..count {
        let sample = ObjectAllocationSample {
            start_time: Ticks(i),
            event_thread: Some(thread),
            stack_trace: None.into(),
            object_class: None,
            weight: i,
        };
        sample.write(&mut recording, &alloc).unwrap();
        if i % flush_every == flush_every - 1 {
            recording.flush().unwrap();
        }
    }
    recording.close().unwrap();
}

/// Accepts and forgets every byte: a benchmark measures encoding, not
/// disks.
pub struct Discard(pub u64);

impl Write for Discard {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len() as u64;
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Discard {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        Ok(match position {
            SeekFrom::Start(at) => at,
            _ => self.0,
        })
    }
}

/// `jfr metadata [FILE]`: without a file, the JDK's own declarations.
pub fn metadata_of(path: Option<&Path>) -> String {
    let mut command = Command::new("jfr");
    command.arg("metadata");
    command.args(path);
    let output = command.output_in_time();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// One class's declaration in `jfr metadata` output, its annotations sorted
/// (their order is not part of the format).
pub fn declaration(metadata: &str, name: &str) -> Vec<String> {
    let marker = format!("@Name(\"{name}\")");
    let mut lines = metadata.lines().skip_while(|l| *l != marker);
    let mut block = Vec::new();
    let mut annotations = Vec::new();
    for line in &mut lines {
        let line = line.trim().to_owned();
        if line.starts_with('@') {
            annotations.push(line);
            continue;
        }
        annotations.sort();
        block.append(&mut annotations);
        if line == "}" {
            break;
        }
        block.push(line);
    }
    assert!(!block.is_empty(), "{name} is not declared");
    block
}
