//! "Live" means reachable, or the output says it is not: a JVM that exits
//! is collected before the recording's final sweep; a running JVM's
//! `detach` and `dump` collect only with `--collect`; `top --live` and the
//! reports say which, with real JVMs and the real agent.

use heapsampler_test_support::{self as support, Deadline};

use heapsampler_test_support::heapsampler_command;
use heapsampler_test_support::{heapsampler, text};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The bytes `top --live` estimates live in `recording`, and the line that
/// says what live means there.
fn live_total(recording: &Path) -> (f64, String) {
    let top = heapsampler(["top", recording.to_str().unwrap(), "--live"]);
    let out = text(&top.stdout);
    assert!(top.status.success(), "{}", text(&top.stderr));
    let total = out
        .lines()
        .find_map(|line| line.strip_prefix("total: "))
        .and_then(|total| total.split(" estimated").next())
        .unwrap_or_else(|| panic!("no total in {out}"));
    let (number, unit) = total.split_once(' ').unwrap_or((total, "B"));
    let scale = match unit {
        "B" => 1.0,
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        other => panic!("unit {other} in {out}"),
    };
    let statement = out
        .lines()
        .find(|line| line.starts_with("live: "))
        .unwrap_or_else(|| panic!("no live: line in {out}"))
        .to_owned();
    (number.parse::<f64>().unwrap() * scale, statement)
}

/// `LiveAtExit 32 256` keeps 32 MiB of int[] and then makes 256 MiB of
/// garbage, in a young generation of 512 MiB: no collection runs before it
/// exits. The exit's collection leaves what it keeps live; without it
/// (`collect=false`, as every recording was before) the garbage counts as
/// live, and the output says so.
#[test]
fn live_at_the_exit_is_what_the_program_keeps() {
    let dir = support::temp_dir("convert_live_at_exit");
    let workload = support::compiled_workload("LiveAtExit");
    let jvm = ["-Xmx1g", "-Xmn512m", "-cp"];
    let collected = dir.join("collected.jfr");
    let output = heapsampler_command(["record"])
        .arg("-o")
        .arg(&collected)
        .args(["--interval", "64k", "--agent"])
        .arg(support::agent_library())
        .args(["--", "java"])
        .args(jvm)
        .arg(&workload)
        .args(["LiveAtExit", "32", "256"])
        .output_in_time();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let kept: f64 = text(&output.stdout)
        .trim()
        .strip_prefix("kept ")
        .and_then(|bytes| bytes.parse().ok())
        .unwrap_or_else(|| panic!("{}", text(&output.stdout)));
    assert!(
        stderr
            .contains("heapsampler: live: reachable at the end (collected before the final sweep)"),
        "{stderr}"
    );
    let (live, statement) = live_total(&collected);
    assert_eq!(
        statement,
        "live: reachable at the end (collected before the final sweep)"
    );
    // About 480 samples of the kept arrays: a 95% interval of about 9%,
    // and the JVM's own few live objects besides.
    assert!(
        (0.8 * kept..1.2 * kept).contains(&live),
        "{live} bytes live for {kept} kept"
    );

    let uncollected = dir.join("uncollected.jfr");
    let output = Command::new("java")
        .arg(format!(
            "-agentpath:{}=file={},interval=64k,collect=false",
            support::agent_library().display(),
            uncollected.display()
        ))
        .args(jvm)
        .arg(&workload)
        .args(["LiveAtExit", "32", "256"])
        .output_in_time();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let (garbage_too, statement) = live_total(&uncollected);
    // (No collection ran, unless the JVM's start asked for one.)
    assert!(
        statement.starts_with("live: not collected yet"),
        "{statement}"
    );
    // 288 MiB allocated after the JVM's start, none of it collected.
    assert!(
        garbage_too > 6.0 * kept,
        "{garbage_too} bytes live without the collection, {kept} kept"
    );
    // The live flame graphs say it under their titles too.
    for (recording, meaning) in [
        (&collected, "(reachable)"),
        (&uncollected, "(not collected yet: garbage included)"),
    ] {
        let svg = recording.with_extension("svg");
        let flame = heapsampler([
            "flame",
            recording.to_str().unwrap(),
            "--live",
            "-o",
            svg.to_str().unwrap(),
        ]);
        assert!(flame.status.success(), "{}", text(&flame.stderr));
        let drawn = std::fs::read_to_string(&svg).unwrap();
        assert!(
            drawn.contains(&format!("still live at the end {meaning}")),
            "{meaning} in {}",
            svg.display()
        );
    }
}

/// A running JVM (`Scenarios run`, which keeps nothing for long): a dump
/// counts what no collection has freed yet unless asked to collect, and
/// says so; so does detach. Each snapshot ends as a
/// recording does: one lifetime per sample, the still live ones among
/// them.
#[test]
fn dumps_and_detach_say_whether_live_was_collected() {
    let dir = support::temp_dir("convert_live_dumps");
    let recording = dir.join("service.jfr");
    let mut jvm = support::running_jvm();
    let pid = jvm.id().to_string();
    let agent = support::agent_library();
    let agent = agent.to_str().unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let attached = heapsampler([
        "attach",
        &pid,
        "-o",
        recording.to_str().unwrap(),
        "--interval",
        "64k",
        "--agent",
        agent,
    ]);
    assert!(attached.status.success(), "{}", text(&attached.stderr));

    // Dumped again until a snapshot holds an object no collection has
    // reached: just after the attach, a loaded machine's JVM may have
    // allocated no sample yet, or seen each one freed already.
    let started = Instant::now();
    let (said, live, statement) = loop {
        let dumped = heapsampler(["dump", &pid, "-o", &path("now.jfr"), "--agent", agent]);
        let said = text(&dumped.stderr);
        assert!(dumped.status.success(), "{said}");
        let (live, statement) = live_total(Path::new(&path("now.jfr")));
        if live > 0.0 || started.elapsed() > Duration::from_secs(60) {
            break (said, live, statement);
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        said.contains("heapsampler: live: not collected yet"),
        "{said}"
    );
    assert!(
        statement.starts_with("live: not collected yet"),
        "{statement}"
    );
    assert!(live > 0.0, "the snapshot has live objects");

    let dumped = heapsampler([
        "dump",
        &pid,
        "-o",
        &path("collected.jfr"),
        "--collect",
        "--agent",
        agent,
    ]);
    let said = text(&dumped.stderr);
    assert!(dumped.status.success(), "{said}");
    // The service keeps nothing for long: what is live after the
    // collection is what it allocated since, a little or nothing.
    let (_, statement) = live_total(Path::new(&path("collected.jfr")));
    assert_eq!(
        statement,
        "live: reachable at the end (collected before the final sweep)"
    );
    for snapshot in ["now.jfr", "collected.jfr"] {
        let summary = support::summary(Path::new(&path(snapshot)));
        assert_eq!(
            support::summary_count(&summary, "heapsampler.ObjectLifetime"),
            support::summary_count(&summary, "jdk.ObjectAllocationSample"),
            "one lifetime per sample in {snapshot}"
        );
        assert_eq!(support::summary_count(&summary, "heapsampler.LiveSet"), 1);
    }

    // --collect asks a JVM: a file has none.
    let refused = heapsampler([
        "dump",
        recording.to_str().unwrap(),
        "-o",
        &path("copy.jfr"),
        "--collect",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));

    let detached = heapsampler(["detach", &pid, "--collect", "--agent", agent]);
    let said = text(&detached.stderr);
    assert!(detached.status.success(), "{said}");
    assert!(
        said.contains("heapsampler: live: reachable at the end (collected before the final sweep)"),
        "{said}"
    );
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM still runs");
    drop(jvm);
    // The snapshots' live objects were theirs alone: the recording has
    // each lifetime once, and one live set, its own.
    let summary = support::summary(&recording);
    assert_eq!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
        support::summary_count(&summary, "jdk.ObjectAllocationSample")
    );
    assert_eq!(support::summary_count(&summary, "heapsampler.LiveSet"), 1);
}

/// Every collector's JVM exits with its recording finished, and says
/// whether it collected: G1, Parallel and Serial collect at VMDeath, ZGC
/// and Shenandoah before it, in the agent's shutdown hook (their threads
/// have stopped by VMDeath: see `zgc_and_shenandoah_collect_before_the_exit`);
/// Epsilon never collects. A collector this JDK lacks is skipped.
#[test]
fn every_collector_exits_and_says_whether_it_collected() {
    let dir = support::temp_dir("convert_live_collectors");
    let workload = support::compiled_workload("LiveAtExit");
    let collectors: [(&[&str], bool); 6] = [
        (&["-XX:+UseG1GC"], true),
        (&["-XX:+UseParallelGC"], true),
        (&["-XX:+UseSerialGC"], true),
        (&["-XX:+UseShenandoahGC"], true),
        (&["-XX:+UseZGC"], true),
        (
            &["-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC"],
            false,
        ),
    ];
    for (flags, collects) in collectors {
        let flag = flags.last().unwrap();
        if !offered(Path::new("java"), flags) {
            continue;
        }
        let recording = dir.join(format!("{}.jfr", flag.trim_start_matches("-XX:+Use")));
        let output = Command::new("java")
            .arg(format!(
                "-agentpath:{}=file={},interval=64k",
                support::agent_library().display(),
                recording.display()
            ))
            .args(flags)
            .args(["-Xmx1g", "-Xmn512m", "-cp"])
            .arg(&workload)
            .args(["LiveAtExit", "8", "64"])
            .output_in_time();
        assert!(output.status.success(), "{flag}: {}", text(&output.stderr));
        let (_, statement) = live_total(&recording);
        assert_eq!(
            statement.starts_with("live: reachable at the end"),
            collects,
            "{flag}: {statement}"
        );
    }
}

/// Whether `java` runs with the JVM options `flags` (a collector this JDK
/// has); says it skips them if not.
fn offered(java: &Path, flags: &[&str]) -> bool {
    let offered = Command::new(java)
        .args(flags)
        .arg("-version")
        .output_in_time();
    if !offered.status.success() {
        support::say_skipped(format_args!(
            "skipped {flags:?}: {} has no such collector",
            java.display()
        ));
    }
    offered.status.success()
}

/// The tracked samples of one allocation site, by what the recording's end
/// found of their objects.
#[derive(Debug, Default)]
struct Lifetimes {
    live: usize,
    freed: usize,
}

/// What the recording of a JVM's exit says of its live objects.
#[derive(Debug)]
struct ExitLiveSet {
    /// The agent's lines.
    stderr: String,
    /// `top --live`'s line saying what live means.
    statement: String,
    /// The arrays `LiveAtExit` keeps (`Keep.keep`).
    kept: Lifetimes,
    /// Its garbage (`Churn.garbage`).
    garbage: Lifetimes,
}

/// Runs `LiveAtExit 8 64 ENDING` (8 MiB kept, then 64 MiB of garbage,
/// then `ending`: return, exit or halt) with `java` under the agent and
/// the JVM options `jvm`, requires it to exit with status 0, and reads
/// its recording: `top --live`'s statement, and the tracked samples of the
/// kept arrays and of the garbage as the JDK's parser reads their
/// lifetimes. A 2 GiB heap: none of these collectors starts a collection
/// for 72 MiB, so without the exit's collection the garbage is live.
fn live_set_at_exit(java: &Path, jvm: &[&str], ending: &str, recording: &Path) -> ExitLiveSet {
    let output = Command::new(java)
        .arg(format!(
            "-agentpath:{}=file={},interval=64k",
            support::agent_library().display(),
            recording.display()
        ))
        .args(jvm)
        .args(["-Xmx2g", "-cp"])
        .arg(support::compiled_workload("LiveAtExit"))
        .args(["LiveAtExit", "8", "64", ending])
        .output_in_time();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{jvm:?} {ending}: {stderr}");
    let (_, statement) = live_total(recording);
    let (mut kept, mut garbage) = (Lifetimes::default(), Lifetimes::default());
    for line in support::dump_types(recording, &["heapsampler.ObjectLifetime"]) {
        if support::dump_value(&line, "tracked") != "true" {
            continue;
        }
        let site = if line.contains("stackTrace=stack(false:LiveAtExit$Keep.keep()V") {
            &mut kept
        } else if line.contains("stackTrace=stack(false:LiveAtExit$Churn.garbage()V") {
            &mut garbage
        } else {
            continue;
        };
        match support::dump_value(&line, "live").as_str() {
            "true" => site.live += 1,
            _ => site.freed += 1,
        }
    }
    ExitLiveSet {
        stderr,
        statement,
        kept,
        garbage,
    }
}

/// Under each of `collectors` (JVM options) that `java` has, a JVM that
/// returns from main or calls System.exit is collected before its
/// recording's end: every tracked sample of the garbage is found freed,
/// every one of the kept arrays live, and the outputs say live means
/// reachable. One that halts (`Runtime.halt`, which runs no shutdown
/// hooks) is not: its garbage is live, and the outputs say so.
fn collected_before_the_exit(test: &str, java: &Path, collectors: &[&[&str]]) {
    let dir = support::temp_dir(test);
    for &jvm in collectors {
        if !offered(java, jvm) {
            continue;
        }
        for ending in ["return", "exit", "halt"] {
            let name = format!("{}-{ending}", jvm.join("").replace("-XX:", ""));
            let at_exit = live_set_at_exit(java, jvm, ending, &dir.join(format!("{name}.jfr")));
            let ExitLiveSet {
                stderr,
                statement,
                kept,
                garbage,
            } = &at_exit;
            // Not one sample of the kept arrays is freed, with or without
            // the collection.
            assert_eq!(kept.freed, 0, "{name}: {at_exit:#?}");
            if ending == "halt" {
                assert!(
                    stderr.contains(
                        "heapsampler: no collection at the JVM's exit: it ran no shutdown hooks"
                    ),
                    "{name}: {stderr}"
                );
                assert!(
                    statement.starts_with("live: not collected yet"),
                    "{name}: {statement}"
                );
                // No collection freed the garbage sampled last, at least.
                assert!(garbage.live > 0, "{name}: {at_exit:#?}");
            } else {
                // On generational ZGC the share tracked follows.
                assert!(
                    statement.starts_with(
                        "live: reachable at the end (collected before the final sweep)"
                    ),
                    "{name}: {statement}\n{stderr}"
                );
                // A sample of the garbage tracked at least (about 1000 at
                // 64 KiB, all tracked unless the agent tracks a share), and
                // every one freed.
                assert!(garbage.freed > 0, "{name}: {at_exit:#?}");
                assert_eq!(garbage.live, 0, "{name}: {at_exit:#?}");
            }
        }
    }
}

/// ZGC and Shenandoah (the JDK 17 on PATH) stop their threads before the
/// agent hears of the exit (VMDeath), and a collection asked for then
/// never ends under ZGC: the agent collects earlier, as the JVM starts its
/// shutdown hooks.
#[test]
fn zgc_and_shenandoah_collect_before_the_exit() {
    collected_before_the_exit(
        "convert_live_exit_17",
        Path::new("java"),
        &[&["-XX:+UseZGC"], &["-XX:+UseShenandoahGC"]],
    );
}

/// Generational ZGC and generational Shenandoah (Temurin 25), as
/// [`zgc_and_shenandoah_collect_before_the_exit`]: the collection forced
/// is a major one, which frees what young collections keep (what weak
/// references point to).
#[test]
fn generational_zgc_and_shenandoah_collect_before_the_exit() {
    let Some(home) = support::temurin_25("generational_zgc_and_shenandoah_collect_before_the_exit")
    else {
        return;
    };
    let java = &home.join("bin/java");
    collected_before_the_exit(
        "convert_live_exit_25",
        java,
        &[
            &["-XX:+UseZGC"],
            &["-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational"],
        ],
    );
}

/// A recording attached to a running JVM under ZGC is collected before
/// the JVM's exit too: the agent adds its shutdown hook at the attach,
/// withdraws it at a detach (the next attach adds its own), and a SIGTERM
/// runs the shutdown hooks.
#[test]
fn an_attached_recording_under_zgc_is_collected_when_the_jvm_is_terminated() {
    let dir = support::temp_dir("convert_live_attached_zgc");
    let jvm = support::running_jvm_with(&["-XX:+UseZGC"]);
    let pid = jvm.id().to_string();
    let agent = support::agent_library();
    let agent = agent.to_str().unwrap();
    let attach = |recording: &Path| {
        let attached = heapsampler([
            "attach",
            &pid,
            "-o",
            recording.to_str().unwrap(),
            "--interval",
            "64k",
            "--agent",
            agent,
        ]);
        assert!(attached.status.success(), "{}", text(&attached.stderr));
    };
    let detached = dir.join("detached.jfr");
    attach(&detached);
    let detach = heapsampler(["detach", &pid, "--agent", agent]);
    assert!(detach.status.success(), "{}", text(&detach.stderr));
    let (_, statement) = live_total(&detached);
    // JDK 17's ZGC; generational ZGC's (the PATH's java is 25 in .ci/run's
    // second pass) says what its last major collection left, or that none
    // ran in the moments between the attach and the detach.
    assert!(
        statement.starts_with("live: not collected yet")
            || statement.starts_with("live: as of the last major collection")
            || statement.starts_with("live: as of no collection"),
        "{statement}"
    );

    let terminated = dir.join("terminated.jfr");
    attach(&terminated);
    Command::new("kill").args(["-TERM", &pid]).output_in_time();
    let output = jvm.wait_with_output();
    assert_eq!(output.status.code(), Some(143), "{}", text(&output.stderr));
    let (_, statement) = live_total(&terminated);
    // On generational ZGC the share tracked follows.
    assert!(
        statement.starts_with("live: reachable at the end (collected before the final sweep)"),
        "{statement}"
    );
}
