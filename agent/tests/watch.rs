//! The agent's watch in real JVMs, the late leak: a service with a
//! 40 MiB steady live set (`LateLeak`) that starts leaking 500 KiB/s at a
//! moment the test draws, in a 3-minute run, under G1 (Temurin 25: G1 says
//! when its marking ends from JDK 21 on, and the watch judges only
//! collections that mark the whole heap). The suspect is raised within 60
//! s of the leak's start and names the leaking site, the snapshot it took
//! (`on_leak=dump`) is a complete recording `jfr` reads and, with
//! `roots=true`, holds the leak's samples with their paths to GC roots; the
//! same service without the leak raises no suspect. The same under generational
//! ZGC, where the watch judges by canaries and says so, within 100 s in a
//! 4-minute run (see [`ZGC`]); and under generational Shenandoah, where it
//! judges at the ends of old markings it tells from the collector's
//! notifications, and says so, within 100 s in a 4-minute run (see
//! [`SHENANDOAH`]). The JVMs run four at once (the Shenandoah pair once the
//! G1 pair is done): the workload paces every rate by wall time, so a busy
//! machine slows none of them.

use heapsampler_test_support as support;
use heapsampler_test_support::{Deadline, Watched};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long after the leak's start the suspect must be raised, and the
/// run's length in seconds (the leak starts at most 120 s in), by
/// collector. Under G1 the minute, in its 3-minute run. Under
/// generational ZGC no tracked sample can be told live until a major finds
/// it old, about 40 s after it was allocated in this service (its request
/// garbage was found freed 39.5 s after allocation at the median, 43.9 s at
/// most, in a run by its defaults), and the growth test then needs about
/// as long as under G1 (raised 75 s after the leak's start in that run):
/// 100 s, in a run of 4 minutes.
struct Collector {
    within: Duration,
    run: u64,
}

const G1: Collector = Collector {
    within: Duration::from_secs(60),
    run: 180,
};

const ZGC: Collector = Collector {
    within: Duration::from_secs(100),
    run: 240,
};

/// Under generational Shenandoah a sample that died old is found dead only
/// when an old marking ends, and the watch judges, at each end, what was
/// allocated before the end of the one before: by the collector's defaults
/// old markings may be minutes apart in this service (at 9 and 15 s, then
/// none in 165 s without the leak; 97 s apart after the leak's start with
/// it, raised 86 s after its start), so the run has one at least every
/// 10 s (`ShenandoahGuaranteedOldGCInterval`, as G1's run has its
/// markings' pace): raised 55 s after the leak's start in a 3-minute run,
/// no suspect in 17 judgments without it. As long as ZGC is allowed.
const SHENANDOAH: Collector = Collector {
    within: Duration::from_secs(100),
    run: 240,
};

struct Run {
    name: String,
    roots: bool,
    within: Duration,
    file: PathBuf,
    leak_from: Option<u64>,
    jvm: Watched,
}

/// Starts `java` on `LateLeak` with the agent's defaults and
/// `on_leak=dump` (and `roots=true` if asked), its leak from `leak_from`
/// seconds if any.
fn start(
    name: &str,
    java: &Path,
    collector: &Collector,
    jvm_flags: &[&str],
    leak_from: Option<u64>,
    roots: bool,
    dir: &Path,
) -> Run {
    let file = dir.join(format!("{name}.jfr"));
    let jvm = Command::new(java)
        .arg(format!(
            "-agentpath:{}=file={},on_leak=dump{}",
            support::agent_library().display(),
            file.display(),
            if roots { ",roots=true" } else { "" }
        ))
        .args(jvm_flags)
        .arg("-cp")
        .arg(support::compiled_workload("LateLeak"))
        .arg("LateLeak")
        .arg(collector.run.to_string())
        .arg(leak_from.map_or("none".to_owned(), |s| s.to_string()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn_within(Duration::from_secs(collector.run + 180));
    Run {
        name: name.to_owned(),
        roots,
        within: collector.within,
        file,
        leak_from,
        jvm,
    }
}

/// Checks a finished run: with a leak, one suspect, of the leak's site,
/// raised within the collector's time of its start, said on stderr, and a
/// snapshot `jfr` reads; without, none.
fn check(run: Run) {
    let Run {
        name,
        roots,
        within,
        file,
        leak_from,
        jvm,
    } = run;
    let output = jvm.wait_with_output();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{name}: {stdout}\n{stderr}");
    if name.starts_with("zgc") {
        assert!(
            stderr.contains("heapsampler: watch: under generational ZGC a dead sample"),
            "{name}: {stderr}"
        );
    }
    if name.starts_with("shenandoah") {
        assert!(
            stderr.contains("heapsampler: watch: under generational Shenandoah a sample"),
            "{name}: {stderr}"
        );
    }
    let suspects = support::dump_types(&file, &["heapsampler.LeakSuspect"]);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("heapsampler: leak suspect: "))
        .collect();
    let Some(leak_from) = leak_from else {
        assert!(suspects.is_empty(), "{name}: {suspects:#?}\n{stderr}");
        // The watch judged, and wrote what it followed.
        let watched = support::dump_types(&file, &["heapsampler.WatchedSite"]);
        assert!(!watched.is_empty(), "{name}: no watched sites\n{stderr}");
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
        raised_nanos > leak_start_millis * 1_000_000 && after <= within,
        "{name}: raised {after:?} after the leak's start (leak from {leak_from} s)\n{suspect}"
    );
    assert_eq!(said.len(), 1, "{name}: {stderr}");
    assert!(
        said[0].contains("a site of byte[] grows"),
        "{name}: {}",
        said[0]
    );
    // The watched sites after the suspect name it, growing: what
    // `heapsampler watch` shows.
    let watched = support::dump_types(&file, &["heapsampler.WatchedSite"]);
    let leak_growth = watched
        .iter()
        // The arrays kept, not the list's own (ArrayList.grow under keep).
        .filter(|event| {
            support::dump_value(event, "stackTrace").starts_with("stack(false:LateLeak$Leak.keep()")
        })
        .filter(|event| {
            support::dump_value(event, "startTime")
                .parse::<i64>()
                .unwrap()
                >= raised_nanos
        })
        .map(|event| support::dump_double(event, "growthRateLow"))
        .next_back();
    assert!(
        leak_growth.is_some_and(|low| low > 0.0),
        "{name}: the leak's last watched site grows: {leak_growth:?} in {watched:#?}"
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
    if roots {
        // The suspect's samples, walked to their roots when it was raised,
        // are in the snapshot's live set with what holds them.
        let old = support::dump_types(&snapshot, &["jdk.OldObjectSample"]);
        let held = old
            .iter()
            .filter(|l| l.contains("LateLeak$Leak.keep()") && !l.contains(" root=null"))
            .count();
        assert!(held > 0, "{name}: {old:#?}");
        assert!(
            stderr.contains("heapsampler: paths to roots: "),
            "{name}: {stderr}"
        );
        // And Mission Control's Memory Leak page shows what holds them.
        if let Some(mission_control) = support::MissionControl::find(&name) {
            let output = mission_control.run([Path::new("--leaks"), &snapshot]);
            let said = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success(), "{name}: {said}");
            assert!(said.contains("LOG warnings: 0"), "{name}: {said}");
            assert!(
                said.lines()
                    .any(|l| l.trim_start().starts_with("byte[] <- ") && l.contains("[root: ")),
                "{name}: {said}"
            );
        }
    }
}

#[test]
fn a_late_leak_is_raised_in_time_and_a_steady_service_raises_nothing() {
    let dir = support::temp_dir("agent_watch_late_leak");
    // A moment in [30 s, 120 s], new each run: said, to run it again.
    let draw = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let leak_from = 30 + draw % 91;
    eprintln!("the leak starts {leak_from} s into the run");
    let Some(home) = support::temurin_25("the watch under G1, generational ZGC and Shenandoah")
    else {
        return;
    };
    let java = home.join("bin/java");
    // G1 with a 16 MiB young generation (a collection every few seconds at
    // the service's 5 MiB/s) marking whenever the old generation passes a
    // fifth of the heap, with one mixed collection after each marking (by
    // default up to eight, which spaced the markings 13 to 19 s apart on a
    // busy machine and the suspect up to 56 s after the leak's start):
    // every 9 to 10 s here, each marking's end a moment the watch judges (by
    // G1's defaults, minutes apart in this service).
    let g1 = [
        "-XX:+UseG1GC",
        "-Xmx256m",
        "-Xmn16m",
        "-XX:-G1UseAdaptiveIHOP",
        "-XX:InitiatingHeapOccupancyPercent=20",
        "-XX:G1MixedGCCountTarget=1",
    ];
    // Generational ZGC (Temurin 25's only ZGC) by its defaults: the watch
    // judges by canaries there, and says so at the start.
    let zgc = ["-XX:+UseZGC", "-Xmx256m"];
    // Generational Shenandoah with an old marking at least every 10 s (by
    // default at most every 10 minutes when the old generation does not
    // grow): the watch judges at their ends, and says so at the start.
    let shenandoah = [
        "-XX:+UseShenandoahGC",
        "-XX:ShenandoahGCMode=generational",
        "-Xmx256m",
        "-XX:+UnlockExperimentalVMOptions",
        "-XX:ShenandoahGuaranteedOldGCInterval=10000",
    ];
    let g1_runs = [
        start("g1-leak", &java, &G1, &g1, Some(leak_from), true, &dir),
        start("g1-steady", &java, &G1, &g1, None, false, &dir),
    ];
    let zgc_runs = [
        start("zgc-leak", &java, &ZGC, &zgc, Some(leak_from), false, &dir),
        start("zgc-steady", &java, &ZGC, &zgc, None, false, &dir),
    ];
    // Four JVMs at once at most: the Shenandoah pair once G1's is done.
    g1_runs.into_iter().for_each(check);
    let shenandoah_runs = [
        start(
            "shenandoah-leak",
            &java,
            &SHENANDOAH,
            &shenandoah,
            Some(leak_from),
            false,
            &dir,
        ),
        start(
            "shenandoah-steady",
            &java,
            &SHENANDOAH,
            &shenandoah,
            None,
            false,
            &dir,
        ),
    ];
    zgc_runs.into_iter().chain(shenandoah_runs).for_each(check);
}
