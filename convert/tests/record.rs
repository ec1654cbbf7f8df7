//! `heapsampler record -- java ...` with a real JVM and the real agent.

#[path = "../../jfr-writer/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The agent cargo built for this test run (a dev-dependency).
fn agent() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    deps.join("libheapsampler.so")
}

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/workloads/Scenarios.java")
}

#[test]
fn records_passes_the_exit_code_through_and_reports() {
    let dir = support::temp_dir("convert_record");
    let file = dir.join("run.jfr");
    let output = Command::new(env!("CARGO_BIN_EXE_heapsampler"))
        .args(["record", "--interval", "64k", "-o"])
        .arg(&file)
        .arg("--agent")
        .arg(agent())
        .arg("--")
        .arg("java")
        .arg(scenarios())
        .args(["exit", "3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(3),
        "the program's exit code: {stderr}"
    );
    let report: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("heapsampler: "))
        .collect();
    assert!(
        report
            .iter()
            .any(|l| l.contains(&format!("recording: {}", file.display()))),
        "{stderr}"
    );
    assert!(
        report
            .iter()
            .any(|l| l.contains("allocation samples: about")),
        "{stderr}"
    );
    assert!(
        report.iter().any(|l| l.contains("top allocation site: ")),
        "{stderr}"
    );
    // The file is a complete recording, by the JDK's own parser.
    assert!(support::summary_count(&support::summary(&file), "jdk.ObjectAllocationSample") > 0);
}

#[test]
fn a_missing_agent_or_program_is_said_clearly() {
    let missing = Command::new(env!("CARGO_BIN_EXE_heapsampler"))
        .args([
            "record",
            "--agent",
            "/no/such/libheapsampler.so",
            "--",
            "java",
            "-version",
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("--agent /no/such/libheapsampler.so: no such file")
    );
    let no_program = Command::new(env!("CARGO_BIN_EXE_heapsampler"))
        .args(["record"])
        .output()
        .unwrap();
    assert_eq!(no_program.status.code(), Some(2));
}
