//! The agent's watch in real JVMs, the late leak: a service with a
//! 40 MiB steady live set (`LateLeak`) that starts leaking 500 KiB/s at a
//! moment the test draws, in a 3-minute run, under G1 (Temurin 25: G1 says
//! when its marking ends from JDK 21 on, and the watch judges only
//! collections that mark the whole heap). The suspect is raised within 60
//! s of the leak's start and names the leaking site, the snapshot it took
//! (`on_leak=dump`) is a complete recording `jfr` reads, and the same
//! service without the leak raises no suspect. Under generational ZGC the
//! watch does not judge yet, and says why. The JVMs run at once: the
//! workload paces every rate by wall time, so a busy machine slows none of
//! them.

use heapsampler_test_support as support;
use heapsampler_test_support::{Deadline, Watched};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The run, seconds.
const RUN: u64 = 180;
/// How long after the leak's start the suspect must be raised.
const WITHIN: Duration = Duration::from_secs(60);

struct Run {
    name: String,
    file: PathBuf,
    leak_from: Option<u64>,
    jvm: Watched,
}

/// Starts `java` on `LateLeak` with the agent's defaults and
/// `on_leak=dump`, its leak from `leak_from` seconds if any.
fn start(name: &str, java: &Path, jvm_flags: &[&str], leak_from: Option<u64>, dir: &Path) -> Run {
    let file = dir.join(format!("{name}.jfr"));
    let jvm = Command::new(java)
        .arg(format!(
            "-agentpath:{}=file={},on_leak=dump",
            support::agent_library().display(),
            file.display()
        ))
        .args(jvm_flags)
        .arg("-cp")
        .arg(support::compiled_workload("LateLeak"))
        .arg("LateLeak")
        .arg(RUN.to_string())
        .arg(leak_from.map_or("none".to_owned(), |s| s.to_string()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn_within(Duration::from_secs(RUN + 180));
    Run {
        name: name.to_owned(),
        file,
        leak_from,
        jvm,
    }
}

/// Checks a finished run: with a leak, one suspect, of the leak's site,
/// raised within [`WITHIN`] of its start, said on stderr, and a snapshot
/// `jfr` reads; without, none.
fn check(run: Run) {
    let Run {
        name,
        file,
        leak_from,
        jvm,
    } = run;
    let output = jvm.wait_with_output();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{name}: {stdout}\n{stderr}");
    let suspects = support::dump_types(&file, &["heapsampler.LeakSuspect"]);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("heapsampler: leak suspect: "))
        .collect();
    let Some(leak_from) = leak_from else {
        assert!(suspects.is_empty(), "{name}: {suspects:#?}\n{stderr}");
        assert!(said.is_empty(), "{name}: {stderr}");
        return;
    };
    let leak_start_millis: i64 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("leak from "))
        .unwrap_or_else(|| panic!("{name}: no leak start in {stdout}"))
        .parse()
        .unwrap();
    assert_eq!(suspects.len(), 1, "{name}: the leak alone\n{suspects:#?}");
    let suspect = &suspects[0];
    assert!(
        support::dump_value(suspect, "stackTrace").contains("LateLeak$Leak.keep()"),
        "{name}: the leak's site\n{suspect}"
    );
    let raised_nanos: i64 = support::dump_value(suspect, "startTime").parse().unwrap();
    let after = Duration::from_nanos((raised_nanos - leak_start_millis * 1_000_000).max(0) as u64);
    eprintln!("{name}: the leak from {leak_from} s raised {after:.1?} after its start");
    assert!(
        raised_nanos > leak_start_millis * 1_000_000 && after <= WITHIN,
        "{name}: raised {after:?} after the leak's start (leak from {leak_from} s)\n{suspect}"
    );
    assert_eq!(said.len(), 1, "{name}: {stderr}");
    assert!(
        said[0].contains("a site of byte[] grows"),
        "{name}: {}",
        said[0]
    );
    let snapshot = heapsampler_core::options::with_process_id(&file, "leak-1");
    assert!(
        stderr.contains(&format!("wrote the snapshot {}", snapshot.display())),
        "{name}: {stderr}"
    );
    assert!(support::is_finished(&snapshot), "{name}: a complete file");
    let summary = support::summary(&snapshot);
    assert_eq!(
        support::summary_count(&summary, "heapsampler.LeakSuspect"),
        1,
        "{name}: {summary}"
    );
}

#[test]
fn a_late_leak_is_raised_within_a_minute_and_a_steady_service_raises_nothing() {
    let dir = support::temp_dir("agent_watch_late_leak");
    // A moment in [30 s, 120 s], new each run: said, to run it again.
    let draw = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let leak_from = 30 + draw % 91;
    eprintln!("the leak starts {leak_from} s into the run");
    let Some(home) = support::temurin_25("the watch under G1 and generational ZGC") else {
        return;
    };
    let java = home.join("bin/java");
    // G1 with a 16 MiB young generation (a collection every few seconds at
    // the service's 5 MiB/s) marking whenever the old generation passes a
    // fifth of the heap: every 12 to 30 s here, each marking's end a moment
    // the watch judges (by G1's defaults, minutes apart in this service).
    let g1 = [
        "-XX:+UseG1GC",
        "-Xmx256m",
        "-Xmn16m",
        "-XX:-G1UseAdaptiveIHOP",
        "-XX:InitiatingHeapOccupancyPercent=20",
    ];
    let runs = vec![
        start("g1-leak", &java, &g1, Some(leak_from), &dir),
        start("g1-steady", &java, &g1, None, &dir),
    ];
    for run in runs {
        check(run);
    }
}

/// Under generational ZGC the watch says at the start that it does not
/// judge, and why.
#[test]
fn under_generational_zgc_the_watch_says_it_does_not_judge_yet() {
    let Some(home) = support::temurin_25("the watch under generational ZGC") else {
        return;
    };
    let dir = support::temp_dir("agent_watch_zgc");
    let file = dir.join("zgc.jfr");
    let output = Command::new(home.join("bin/java"))
        .arg(format!(
            "-agentpath:{}=file={}",
            support::agent_library().display(),
            file.display()
        ))
        .args(["-XX:+UseZGC", "-Xmx256m", "-cp"])
        .arg(support::compiled_workload("LateLeak"))
        .args(["LateLeak", "1", "none"])
        .output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("heapsampler: watch: under generational ZGC a tracked sample's garbage"),
        "{stderr}"
    );
}
