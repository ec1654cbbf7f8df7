//! `heapsampler demo`: records the bundled workload (a small order service
//! with allocation pressure and a leak, `Demo.java` beside this file),
//! has the JDK's own `jfr` check the recording, and leaves it with its CSV,
//! a flame graph and the report page in one folder. The source is built into this program, so the demo needs
//! only a JDK and the agent.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use heapsampler_cli::analysis::top::{GroupBy, Query, top};
use heapsampler_cli::model::filter::Filter;
use heapsampler_cli::output::text;
use heapsampler_cli::pipeline::Pipeline;
use jfr_format::names::event;
use jfr_reader::file::RecordingFile;

use crate::args::{FormatArg, Sampling};
use crate::convert;
use crate::jdk::find_tool;
use crate::record;

/// The workload's source, written out and compiled at each run.
const SOURCE: &str = include_str!("Demo.java");

/// The demo's files, all in one folder.
#[derive(Debug, Clone)]
struct Files {
    /// The folder.
    dir: PathBuf,
    /// The recording.
    recording: PathBuf,
    /// The samples as CSV.
    csv: PathBuf,
    /// The flame graph of the bytes allocated.
    flame: PathBuf,
    /// The report page.
    report: PathBuf,
}

impl Files {
    /// The files the demo writes into `dir`.
    fn in_dir(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            recording: dir.join("demo.jfr"),
            csv: dir.join("demo-samples.csv"),
            flame: dir.join("demo.svg"),
            report: dir.join("demo.html"),
        }
    }
}

/// How the workload's run ended.
enum Ended {
    /// It exited by itself: what it printed.
    Exited(String),
    /// It was still running at its deadline, and was killed.
    Killed,
}

/// `heapsampler demo`: records the workload into `dir` for `seconds`, has
/// the JDK check the recording, converts its samples and prints what
/// heapsampler finds in it. A workload still running `grace` after its
/// seconds is killed, and what its recording holds so far is shown.
pub fn run(dir: &Path, seconds: u32, grace: Duration, agent: Option<&Path>) -> Result<(), String> {
    let files = Files::in_dir(dir);
    let agent = crate::agent::find(agent)?;
    println!(
        "Recording a small order service for {seconds} s with the agent ({})...",
        agent.display()
    );
    let deadline = Duration::from_secs(seconds.into()) + grace;
    let said = match record_workload(&files, &agent, seconds, deadline)? {
        Ended::Exited(said) => said,
        Ended::Killed => {
            println!(
                "  the service had not exited {} s after its {seconds} s were up: killed it. \
                 What its recording holds so far:",
                grace.as_secs()
            );
            match record::report(&files.recording) {
                Ok(report) => report.lines().for_each(|line| println!("  {line}")),
                Err(message) => println!("  nothing readable yet ({message})"),
            }
            return Err(format!(
                "the demo's JVM hung (killed after {} s); its recording is {}",
                deadline.as_secs(),
                files.recording.display()
            ));
        }
    };
    println!("  the service said: {said}");
    let report = record::report(&files.recording)
        .map_err(|message| format!("the recording cannot be read: {message}"))?;
    report.lines().for_each(|line| println!("  {line}"));
    match check_with_jdk(&files.recording) {
        Some(Ok(events)) => println!("  the JDK's `jfr summary` reads it: {events} events"),
        Some(Err(message)) => {
            return Err(format!(
                "the JDK's jfr cannot read the recording: {message}"
            ));
        }
        None => println!("  (no `jfr` tool found to check it with the JDK's own parser)"),
    }
    let csv = convert::Options {
        output: Some(files.csv.clone()),
        events: vec![event::OBJECT_ALLOCATION_SAMPLE.to_owned()],
        stack_depth: 64,
        format: FormatArg::Csv,
        filter: Filter::default(),
        threads: 0,
        class_frame: true,
    };
    let outcome = convert::convert(&files.recording, &csv).map_err(|e| e.to_string())?;
    println!(
        "  samples as CSV: {} ({} rows)",
        files.csv.display(),
        outcome.events
    );
    let flame = convert::FlameOptions {
        output: Some(files.flame.clone()),
        ..convert::FlameOptions::default()
    };
    let drawn = convert::flame(&files.recording, &flame).map_err(|e| e.to_string())?;
    println!(
        "  flame graph: {} ({} stacks; open it in a browser: hover for details, click to \
         zoom, Ctrl-F to search)",
        files.flame.display(),
        drawn.stacks
    );
    let report = convert::ReportOptions {
        output: Some(files.report.clone()),
        by: GroupBy::AppSite,
    };
    let reported = convert::report(&files.recording, &report).map_err(|e| e.to_string())?;
    println!(
        "  report: {} (open it in a browser: {})",
        files.report.display(),
        reported.verdict
    );
    // The JVM's exit is collected before the final sweep: what is live is
    // what the program still reaches, the leak among it.
    for (live, title) in [
        (
            false,
            "Where the bytes were allocated (the first frame outside the JDK, estimated bytes):",
        ),
        (
            true,
            "Still live at the end, reachable after the exit's collection (a leak shows here):",
        ),
    ] {
        let query = Query {
            by: GroupBy::AppSite,
            live,
            min_gcs: 0,
        };
        let recording = RecordingFile::open(&files.recording).map_err(|e| e.to_string())?;
        let table = top(recording, query, &Pipeline::default()).map_err(|e| e.to_string())?;
        println!("\n{title}");
        print!("{}", text::top::render(&table, if live { 5 } else { 10 }));
    }
    let recording = files.recording.display();
    println!(
        "\nNext: open {recording} in JDK Mission Control, or try\n  \
         heapsampler leaks {recording}             (what is leaking, how fast)\n  \
         heapsampler top {recording} --by site    (the top frame, JDK code included)\n  \
         heapsampler top {recording} --by class\n  \
         heapsampler top {recording} --live\n  \
         heapsampler flame {recording} --live -o {dir}/demo-live.svg\n  \
         heapsampler convert {recording} --format collapsed -o {dir}/demo.collapsed",
        dir = files.dir.display()
    );
    Ok(())
}

/// Writes the workload's source into `files.dir`, compiles it there and
/// runs it for `seconds` under the agent with the launcher's default
/// options, killing it if it still runs at `deadline` from its start.
fn record_workload(
    files: &Files,
    agent: &Path,
    seconds: u32,
    deadline: Duration,
) -> Result<Ended, String> {
    let javac = find_tool("javac", None)?;
    let java = find_tool("java", None)?;
    std::fs::create_dir_all(&files.dir)
        .map_err(|e| format!("cannot create {}: {e}", files.dir.display()))?;
    let source = files.dir.join("Demo.java");
    std::fs::write(&source, SOURCE)
        .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
    // Compiled apart, not launched as source: javac's own allocations
    // would otherwise be sampled with the workload's.
    let classes = files.dir.join("classes");
    let compiled = Command::new(&javac)
        .arg("-d")
        .arg(&classes)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", javac.display()))?;
    if !compiled.status.success() {
        return Err(format!(
            "{} could not compile the demo (a JDK 17 or later is needed): {}",
            javac.display(),
            String::from_utf8_lossy(&compiled.stderr).trim()
        ));
    }
    // The options `record` has by default.
    let sampling = Sampling {
        interval: "512k".to_owned(),
        depth: 64,
        no_live: false,
        rate: None,
        keep_hidden_frames: false,
        no_environment: false,
        old_objects: heapsampler_core::options::DEFAULT_OLD_OBJECTS,
        roots: Default::default(),
        bounds: Default::default(),
        watch: Default::default(),
        agent: None,
    };
    let options = record::option_string(
        &files.recording,
        &sampling,
        &[(heapsampler_core::options::name::LOG, "quiet".into())],
    )?;
    let mut child = Command::new(&java)
        .arg(format!("-agentpath:{}={options}", agent.display()))
        // A small heap, so that collections happen and liveness shows; a
        // young generation of 16 MiB, a collection for each 16 MiB
        // allocated: dozens in the 5 s even on a slow or busy machine, so
        // that live bytes are followed from one to the next (the leak
        // analysis needs about twenty).
        .args(["-Xmx256m", "-Xmn16m", "-cp"])
        .arg(&classes)
        .arg("Demo")
        .arg(seconds.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", java.display()))?;
    // Read as it comes, so that a full pipe never stops the JVM.
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let until = Instant::now() + deadline;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Ended::Killed);
            }
            Err(e) => return Err(format!("cannot wait for {}: {e}", java.display())),
        }
    };
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    if !status.success() {
        return Err(format!(
            "the demo workload failed ({status}): {}",
            stderr.trim()
        ));
    }
    Ok(Ended::Exited(stdout.trim().to_owned()))
}

/// What the JDK's `jfr summary` says of the recording: `Ok(events)`, the
/// number of events it counted; `Err` with its complaint; `None` when no
/// `jfr` tool is installed.
fn check_with_jdk(recording: &Path) -> Option<Result<u64, String>> {
    let jfr = find_tool("jfr", None).ok()?;
    let output = match Command::new(&jfr).arg("summary").arg(recording).output() {
        Ok(output) => output,
        Err(e) => return Some(Err(format!("cannot run {}: {e}", jfr.display()))),
    };
    if !output.status.success() {
        return Some(Err(String::from_utf8_lossy(&output.stderr)
            .trim()
            .to_owned()));
    }
    // The table's rows: "  jdk.ObjectAllocationSample   2177   30450".
    let events = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [name, count, _size] if name.contains('.') => count.parse::<u64>().ok(),
                _ => None,
            }
        })
        .sum();
    Some(Ok(events))
}
