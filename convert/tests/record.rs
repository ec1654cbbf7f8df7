//! `heapsampler record -- COMMAND ...` with real JVMs and the real agent.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use heapsampler_test_support::heapsampler_command;
use heapsampler_test_support::heapsampler_exit;
use std::path::{Path, PathBuf};

fn agent() -> PathBuf {
    support::agent_library()
}

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/workloads/Scenarios.java")
}

#[test]
fn records_passes_the_exit_code_through_and_reports() {
    let dir = support::temp_dir("convert_record");
    let file = dir.join("run.jfr");
    let output = heapsampler_command(["record", "--interval", "64k", "-o"])
        .arg(&file)
        .arg("--agent")
        .arg(agent())
        .arg("--")
        .arg("java")
        .arg(scenarios())
        .args(["exit", "3"])
        .output_in_time();
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
    let missing = heapsampler_command([
        "record",
        "--agent",
        "/no/such/libheapsampler.so",
        "--",
        "java",
        "-version",
    ])
    .output_in_time();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("--agent /no/such/libheapsampler.so: no such file")
    );
    let no_program = heapsampler_command(["record"]).output_in_time();
    assert_eq!(no_program.status.code(), Some(2));
}

#[test]
fn bad_sampling_options_are_refused_before_java_starts() {
    let output = heapsampler_command(["record", "--interval", "12x", "--agent"])
        .arg(agent())
        // Would fail loudly if it ran.
        .args(["--", "/no/such/java"])
        .output_in_time();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad option 'interval=12x': expected a size in bytes"),
        "{stderr}"
    );
}

/// `javac`, which takes no `-agentpath:` among its own arguments, records
/// as `java` does: its one JVM's recording is the file asked for.
#[test]
fn records_any_command_that_starts_a_jvm() {
    let dir = support::temp_dir("convert_record_javac");
    let file = dir.join("javac.jfr");
    let classes = dir.join("classes");
    let output = heapsampler_command(["record", "-o"])
        .arg(&file)
        .arg("--agent")
        .arg(agent())
        .args(["--", "javac", "-d"])
        .arg(&classes)
        .arg(scenarios())
        .output_in_time();
    let stderr = support::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(classes.join("Scenarios.class").is_file(), "{stderr}");
    assert!(
        stderr.contains(&format!("heapsampler: recording: {}", file.display())),
        "{stderr}"
    );
    assert!(support::summary_count(&support::summary(&file), "jdk.ObjectAllocationSample") > 0);
    // Each JVM's file had its own name until it was the only one.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// `record -o OUTPUT -- sh SCRIPT`: the script starts two JVMs, one after
/// the other, in another folder; returns the recordings in `dir` by name,
/// after checking that each JVM had what the environment set in
/// `JAVA_TOOL_OPTIONS` too and that each recording is reported on.
fn record_a_script(dir: &Path, output: &str) -> Vec<PathBuf> {
    let script = dir.join("two-jvms.sh");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        &script,
        "set -e\n\
         cd \"$1\"\n\
         java -XshowSettings:properties -version 2>&1 | grep -F heapsampler.marker\n\
         java -cp \"$2\" Scenarios paced 1 8\n",
    )
    .unwrap();
    let output = heapsampler_command(["record", "--interval", "64k", "-o"])
        .arg(dir.join(output))
        .arg("--agent")
        .arg(agent())
        .args(["--", "sh"])
        .arg(&script)
        .arg(&elsewhere)
        .arg(support::compiled_workload("Scenarios"))
        .env("JAVA_TOOL_OPTIONS", "-Dheapsampler.marker=kept")
        .output_in_time();
    let (stdout, stderr) = (support::text(&output.stdout), support::text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("heapsampler.marker = kept"), "{stdout}");
    assert!(
        stderr.contains("heapsampler: 2 JVMs recorded, each to a file of its own:"),
        "{stderr}"
    );
    let mut recordings: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jfr"))
        .collect();
    recordings.sort();
    for recording in &recordings {
        assert!(
            stderr.contains(&format!("heapsampler: recording: {}", recording.display())),
            "{stderr}"
        );
    }
    recordings
}

/// The process id in `recording`'s name between `prefix` and `.jfr`.
fn pid_named(recording: &Path, prefix: &str) -> u32 {
    let name = recording.file_name().unwrap().to_str().unwrap();
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(".jfr"))
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("{name}: not {prefix}PID.jfr"))
}

/// Each JVM a script starts records to a file of its own: the first to
/// start to the file asked for (replacing an earlier run's), the next with
/// its process id in the name; with `%p` in the name asked for, each with
/// its own. Every file is finished, and the workload's holds samples.
#[test]
fn records_every_jvm_a_script_starts() {
    let dir = support::temp_dir("convert_record_script");
    std::fs::write(dir.join("run.jfr"), "an earlier run's").unwrap();
    let recordings = record_a_script(&dir, "run.jfr");
    assert_eq!(recordings.len(), 2, "{recordings:?}");
    assert_eq!(recordings[1], dir.join("run.jfr"), "{recordings:?}");
    pid_named(&recordings[0], "run-");
    // The second JVM, the workload's, allocated.
    let samples = |recording: &Path| {
        support::summary_count(&support::summary(recording), "jdk.ObjectAllocationSample")
    };
    assert!(samples(&recordings[0]) > 0, "{recordings:?}");
    support::summary(&recordings[1]);

    let dir = support::temp_dir("convert_record_script_pids");
    let recordings = record_a_script(&dir, "each-%p.jfr");
    assert_eq!(recordings.len(), 2, "{recordings:?}");
    let pids: Vec<u32> = recordings.iter().map(|r| pid_named(r, "each-")).collect();
    assert_ne!(pids[0], pids[1]);
    assert!(recordings.iter().any(|r| samples(r) > 0), "{recordings:?}");
}

#[test]
fn attach_and_detach_a_running_jvm() {
    let dir = support::temp_dir("convert_attach");
    let file = dir.join("attached.jfr");
    let mut jvm = support::running_jvm();
    let pid = jvm.id().to_string();
    let agent = agent();
    let agent = agent.to_str().unwrap();
    let file_arg = file.to_str().unwrap();

    let (code, stderr) = heapsampler_exit(["detach", &pid, "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("has no heapsampler recording running"),
        "{stderr}"
    );

    let (code, stderr) = heapsampler_exit([
        "attach",
        &pid,
        "-o",
        file_arg,
        "--interval",
        "64k",
        "--agent",
        agent,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("recording JVM {pid} to {file_arg}")),
        "{stderr}"
    );
    let (code, stderr) = heapsampler_exit(["attach", &pid, "-o", file_arg, "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "a recording is already running in JVM {pid} (to {file_arg})"
        )),
        "{stderr}"
    );

    std::thread::sleep(std::time::Duration::from_millis(500));
    let (code, stderr) = heapsampler_exit(["detach", &pid, "--agent", agent]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("recording: {file_arg}")),
        "{stderr}"
    );
    // The JVM runs on; the file is finished, by the JDK's own parser.
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM still runs");
    jvm.kill().unwrap();
    jvm.wait().unwrap();
    let summary = support::summary(&file);
    let samples = support::summary_count(&summary, "jdk.ObjectAllocationSample");
    assert!(samples > 0, "{summary}");
    assert_eq!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
        samples
    );
}

/// Waits up to a minute (a generous bound on a busy machine) for `file` to
/// be finished.
fn wait_until_finished(file: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !support::is_finished(file) {
        assert!(
            std::time::Instant::now() < deadline,
            "{} not finished within a minute",
            file.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn attach_for_a_duration_stops_by_itself_and_the_jvm_takes_the_next_attach() {
    let dir = support::temp_dir("convert_attach_duration");
    let timed = dir.join("timed.jfr");
    let mut jvm = support::running_jvm();
    let pid = jvm.id().to_string();
    let agent = agent();
    let agent = agent.to_str().unwrap();
    let timed_arg = timed.to_str().unwrap();

    let (code, stderr) = heapsampler_exit([
        "attach",
        &pid,
        "-o",
        timed_arg,
        "--duration",
        "2s",
        "--interval",
        "64k",
        "--agent",
        agent,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("recording JVM {pid} to {timed_arg} for 2 s")),
        "{stderr}"
    );
    // This command is gone; the agent stops the recording by itself.
    wait_until_finished(&timed);
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM runs on");
    let summary = support::summary(&timed);
    let samples = support::summary_count(&summary, "jdk.ObjectAllocationSample");
    assert!(samples > 0, "{summary}");
    assert_eq!(
        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
        samples,
        "finished: one lifetime per sample"
    );
    let (code, stderr) = heapsampler_exit(["summary", timed_arg]);
    assert_eq!(code, Some(0), "{stderr}");

    // Nothing left to stop, and detach says why.
    let (code, stderr) = heapsampler_exit(["detach", &pid, "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "JVM {pid} has no heapsampler recording running: the recording to {timed_arg} \
             stopped by itself after its --duration of 2 s"
        )),
        "{stderr}"
    );

    // The agent takes the next attach; a detach before the duration stops it.
    let next = dir.join("next.jfr");
    let next_arg = next.to_str().unwrap();
    let (code, stderr) = heapsampler_exit([
        "attach",
        &pid,
        "-o",
        next_arg,
        "--duration",
        "1h",
        "--agent",
        agent,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = heapsampler_exit(["attach", &pid, "-o", next_arg, "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "a recording is already running in JVM {pid} (to {next_arg})"
        )),
        "{stderr}"
    );
    let (code, stderr) = heapsampler_exit(["detach", &pid, "--agent", agent]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("recording: {next_arg}")),
        "{stderr}"
    );
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM runs on");
    jvm.kill().unwrap();
    jvm.wait().unwrap();
    assert!(support::is_finished(&next));
    let summary = support::summary(&next);
    assert!(support::summary_count(&summary, "jdk.ObjectAllocationSample") > 0);
}

#[test]
fn attach_says_what_went_wrong() {
    let agent = agent();
    let agent = agent.to_str().unwrap();
    // No such process (pids are below 2^22 on Linux).
    let (code, stderr) = heapsampler_exit(["attach", "4999999", "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no JVM with pid 4999999"), "{stderr}");
    let (code, stderr) =
        heapsampler_exit(["attach", "1", "--jcmd", "/no/such/jcmd", "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("/no/such/jcmd: no such file"), "{stderr}");
    let (code, stderr) = heapsampler_exit(["attach", "1", "--depth", "0", "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("bad option 'depth=0'"), "{stderr}");
    for duration in ["0s", "31d"] {
        let (code, stderr) =
            heapsampler_exit(["attach", "1", "--duration", duration, "--agent", agent]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "bad option 'duration={duration}': expected a duration from 1s to 720h"
            )),
            "{stderr}"
        );
    }
    // A comma in a value would pass the rest to the agent as another option.
    for (flag, value, says) in [
        (
            "--duration",
            "2s,file=/tmp/elsewhere.jfr",
            "duration=2s,file=/tmp/elsewhere.jfr': a value",
        ),
        (
            "--interval",
            "64k,live=false",
            "interval=64k,live=false': a value",
        ),
        (
            "-o",
            "/tmp/a,b.jfr",
            "file=/tmp/a,b.jfr': the recording's path",
        ),
    ] {
        let (code, stderr) = heapsampler_exit(["attach", "1", flag, value, "--agent", agent]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("bad option '{says} cannot hold a comma")),
            "{stderr}"
        );
    }
    let (code, _) = heapsampler_exit(["attach", "not-a-pid"]);
    assert_eq!(code, Some(2));
}

/// The demo at its default length is the README's test (`readme.rs`);
/// here, its deadline. With no grace past its 2 seconds, the JVM (which
/// needs more than that from its start) is killed as hung: the demo says
/// so, shows what the recording holds so far, and exits 1.
#[test]
fn demo_kills_a_jvm_still_running_past_its_deadline() {
    let dir = support::temp_dir("convert_demo_deadline").join("demo");
    let output = heapsampler_command(["demo", "--seconds", "2", "--grace", "0", "--dir"])
        .arg(&dir)
        .arg("--agent")
        .arg(agent())
        .output_in_time();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("had not exited 0 s after its 2 s were up: killed it"),
        "{stdout}"
    );
    // What the file holds by its last flush, or that it holds nothing yet
    // (a JVM slow to start on a loaded machine may not have flushed).
    assert!(
        stdout.contains("allocation samples: about") || stdout.contains("nothing readable yet"),
        "{stdout}"
    );
    assert!(
        stderr.contains("heapsampler: the demo's JVM hung (killed after 2 s)"),
        "{stderr}"
    );
}

/// `heapsampler record` of a workload whose threads run lambdas: the
/// lambda proxy (a hidden class) is left out of every stack, as the JDK's
/// own recordings leave it out, so `top --by site` shows no `$$Lambda`
/// frame; `byte[]`'s loader reads as the JDK writes the bootstrap loader.
/// `heapsampler record` of one second of AllocationMix (on 2 threads, whose
/// work runs in a lambda) at 64k with `flags`, into a fresh folder named
/// `test`; the recording.
fn record_mix(test: &str, flags: &[&str]) -> PathBuf {
    let file = support::temp_dir(test).join("mix.jfr");
    let flags = [&["--interval", "64k"], flags].concat();
    support::record_with_agent(&file, &flags, "AllocationMix", &["1", "2"]);
    file
}

#[test]
fn recordings_leave_lambda_proxies_out_and_name_the_bootstrap_loader() {
    let file = record_mix("convert_record_hidden", &[]);

    // The JDK's parser: every sample's stack runs from the lambda's body
    // straight into Thread.run, with no hidden frame between.
    let document = support::print_json(&file);
    let samples: Vec<&serde_json::Value> = support::json_events(&document)
        .iter()
        .filter(|e| e["type"] == "jdk.ObjectAllocationSample")
        .collect();
    assert!(!samples.is_empty());
    let mut through_the_lambda = 0;
    for sample in &samples {
        let frames = sample["values"]["stackTrace"]["frames"]
            .as_array()
            .expect("frames");
        for pair in frames.windows(2) {
            let class = pair[0]["method"]["type"]["name"].as_str().unwrap();
            assert!(!class.contains("$$Lambda"), "{class}");
            assert_eq!(pair[0]["method"]["hidden"], false, "{class}");
            if pair[0]["method"]["name"] == "lambda$main$0" {
                through_the_lambda += 1;
                assert_eq!(
                    pair[1]["method"]["type"]["name"], "java/lang/Thread",
                    "the proxy's caller follows the lambda's body"
                );
            }
        }
        let class = &sample["values"]["objectClass"];
        if class["name"] == "[B" {
            assert_eq!(
                class["classLoader"],
                serde_json::json!({"type": null, "name": "bootstrap"}),
                "byte[]'s loader as the JDK writes it"
            );
        }
    }
    assert!(through_the_lambda > 0, "the workers' stacks were sampled");

    // The command line's top sites: no lambda proxy frame.
    let top = heapsampler_command(["top", "--by", "site"])
        .arg(&file)
        .output_in_time();
    let stdout = String::from_utf8_lossy(&top.stdout);
    assert_eq!(
        top.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&top.stderr)
    );
    assert!(stdout.contains("AllocationMix.work"), "{stdout}");
    assert!(!stdout.contains("$$Lambda"), "{stdout}");
}

#[test]
fn record_keeps_hidden_frames_when_asked_marked_hidden() {
    let file = record_mix("convert_record_keep_hidden", &["--keep-hidden-frames"]);
    // The JDK's parser: the lambda's proxy sits between its body and
    // Thread.run, its method and class marked hidden.
    let document = support::print_json(&file);
    let proxies: Vec<&serde_json::Value> = support::json_events(&document)
        .iter()
        .filter(|e| e["type"] == "jdk.ObjectAllocationSample")
        .filter_map(|e| e["values"]["stackTrace"]["frames"].as_array())
        .flatten()
        .map(|frame| &frame["method"])
        .filter(|method| {
            method["type"]["name"]
                .as_str()
                .is_some_and(|name| name.contains("$$Lambda"))
        })
        .collect();
    assert!(!proxies.is_empty(), "the workers' proxy frames are kept");
    for method in proxies {
        assert_eq!(method["hidden"], true, "{method}");
        assert_eq!(method["type"]["hidden"], true, "{method}");
    }
}

#[test]
fn the_old_object_cap_is_kept_and_what_it_left_out_is_said() {
    let file = support::temp_dir("convert_record_old_objects").join("liveness.jfr");
    support::record_with_agent(
        &file,
        &["--interval", "16k", "--old-objects", "5"],
        "Scenarios",
        &["liveness"],
    );
    let document = support::print_json(&file);
    let events = support::json_events(&document);
    let of = |name: &'static str| events.iter().filter(move |e| e["type"] == name);
    let live = of("heapsampler.ObjectLifetime")
        .filter(|e| e["values"]["live"] == true)
        .count();
    // Scenarios.liveness keeps 1000 arrays of 4 KiB: about 250 samples.
    assert!(live > 100, "{live} live objects");
    // One chunk: its end is the recording's.
    assert_eq!(of("jdk.OldObjectSample").count(), 5);
    let statistics = of("heapsampler.AgentStatistics").next_back().unwrap();
    assert_eq!(statistics["values"]["oldObjectCap"], 5);
    assert_eq!(statistics["values"]["oldObjectsLeftOut"], live - 5);
    let summary = heapsampler_command(["summary"]).arg(&file).output_in_time();
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(
        text.contains(&format!(
            "old objects: {} live objects left out of jdk.OldObjectSample by the cap of 5",
            live - 5
        )),
        "{text}"
    );
}

#[test]
fn record_passes_the_roots_options_to_the_agent() {
    let dir = support::temp_dir("convert_record_roots");
    let file = dir.join("roots.jfr");
    let output = heapsampler_command([
        "record",
        "--interval",
        "16k",
        "--roots",
        "--roots-depth",
        "8",
    ])
    .args(["--roots-time", "30s", "-o"])
    .arg(&file)
    .arg("--agent")
    .arg(agent())
    .args(["--", "java", "-cp"])
    .arg(support::compiled_workload("GcRoots"))
    .args(["GcRoots", "2"])
    .output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // The agent walked (its summary at log level info), within the depth
    // given: the map's values are 4 references from their class.
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("heapsampler: paths to roots: "))
        .unwrap_or_else(|| panic!("no walk: {stderr}"));
    assert!(summary.contains(" objects visited "), "{summary}");
    // top --live says what holds the map's values: the chain through the
    // map to the class's static field, and its root.
    let top = heapsampler_command(["top", "--live", "--by", "class"])
        .arg(&file)
        .output_in_time();
    let table = String::from_utf8_lossy(&top.stdout);
    let mut lines = table.lines();
    lines
        .find(|l| l.ends_with("  GcRoots$InStaticMap[]"))
        .unwrap_or_else(|| panic!("{table}"));
    assert_eq!(
        lines.next().map(str::trim),
        Some(
            "held by java.util.HashMap$Node.value <- java.util.HashMap$Node[] <- \
             java.util.HashMap.table <- java.lang.Class.MAP (Class Name: GcRoots) <- \
             root Class Loader Data: <unknown>  (2 of 2 old objects with a path)"
        ),
        "{table}"
    );
    // A bad value is refused by the agent's own parser, before the JVM runs.
    let refused = heapsampler_command(["record", "--roots", "--roots-time", "1d", "-o"])
        .arg(dir.join("refused.jfr"))
        .arg("--agent")
        .arg(agent())
        .args(["--", "java", "-version"])
        .output_in_time();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("bad option 'roots_time=1d'"), "{stderr}");
    // --roots-depth and --roots-time mean nothing without --roots.
    let alone = heapsampler_command(["record", "--roots-depth", "8", "--", "java", "-version"])
        .output_in_time();
    assert_eq!(alone.status.code(), Some(2), "clap's usage error");
}

#[test]
fn record_cuts_chunks_at_the_size_and_age_given() {
    let dir = support::temp_dir("convert_record_chunks");
    // By age: 4 seconds at 512k write far less than a chunk's default
    // 12 MB, and the default age is an hour, so without the flag this is
    // one chunk.
    let by_age = dir.join("age.jfr");
    support::record_with_agent(
        &by_age,
        &["--chunk-age", "1s"],
        "Scenarios",
        &["run", "4", "1"],
    );
    let chunks = support::summary_chunks(&support::summary(&by_age));
    assert!(chunks >= 2, "{chunks} chunks of at most 1s in 4s");
    // By size: a chunk ends at the first flush (each second) past 1 MB.
    // Fixed work, paced: 128 MiB a second for 5 s at 8k is about 80,000
    // samples, some 3 MB at about 38 bytes a sample (measured: 3.2 MB,
    // 2 chunks), spread over 5 flushes whatever the machine's load; the
    // count of samples varies by well under 1%, so 2 MB leaves a third.
    let by_size = dir.join("size.jfr");
    support::record_with_agent(
        &by_size,
        &["--chunk-size", "1m", "--interval", "8k"],
        "Scenarios",
        &["paced", "5", "128"],
    );
    let size = std::fs::metadata(&by_size).unwrap().len();
    assert!(size >= 2 << 20, "only {size} bytes written: nothing to cut");
    let chunks = support::summary_chunks(&support::summary(&by_size));
    assert!(
        chunks >= 2,
        "{chunks} chunks in {size} bytes with --chunk-size 1m"
    );
    // Out of range: refused by the agent's own parser before java starts.
    let (code, stderr) = heapsampler_exit([
        "record",
        "--chunk-age",
        "0s",
        "--agent",
        agent().to_str().unwrap(),
        "--",
        "/no/such/java",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("bad option 'chunk_age=0s'"), "{stderr}");
}
