//! `heapsampler demo`: records the bundled workload (a small order service
//! with allocation pressure and a leak, `testdata/workloads/Demo.java`),
//! has the JDK's own `jfr` check the recording, and leaves it with its CSV
//! in one folder. The source is built into this program, so the demo needs
//! only a JDK and the agent.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::jdk::find_tool;
use crate::record;

/// The workload's source, written out and compiled at each run.
pub const SOURCE: &str = include_str!("../../testdata/workloads/Demo.java");

/// The demo's files, all in one folder.
#[derive(Debug, Clone)]
pub struct Files {
    /// The folder.
    pub dir: PathBuf,
    /// The recording.
    pub recording: PathBuf,
    /// The samples as CSV.
    pub csv: PathBuf,
}

impl Files {
    /// The files the demo writes into `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            recording: dir.join("demo.jfr"),
            csv: dir.join("demo-samples.csv"),
        }
    }
}

/// Writes the workload's source into `files.dir`, compiles it there and
/// runs it for `seconds` under the agent with the launcher's default
/// options. Returns what the workload printed.
pub fn record_workload(files: &Files, agent: &Path, seconds: u32) -> Result<String, String> {
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
    let options = record::agent_options(&files.recording, "512k", 64, true, None) + ",log=quiet";
    let output = Command::new(&java)
        .arg(format!("-agentpath:{}={options}", agent.display()))
        // A small heap, so that collections happen and liveness shows.
        .args(["-Xmx256m", "-cp"])
        .arg(&classes)
        .arg("Demo")
        .arg(seconds.to_string())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", java.display()))?;
    if !output.status.success() {
        return Err(format!(
            "the demo workload failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// What the JDK's `jfr summary` says of the recording: `Ok(events)`, the
/// number of events it counted; `Err` with its complaint; `None` when no
/// `jfr` tool is installed.
pub fn check_with_jdk(recording: &Path) -> Option<Result<u64, String>> {
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
