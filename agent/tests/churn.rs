//! Attaching and stopping the agent again and again in one JVM whose 8
//! threads allocate throughout: no crash, every recording complete by the
//! JDK's own `jfr summary`, and no memory left behind by a session (JNI
//! references, JVMTI environments, threads, buffers), measured as the
//! JVM's resident memory.
//!
//! `cargo test --release -p heapsampler-agent --test integration churn:: -- --nocapture`
//! prints the figures BENCHMARKS.md quotes.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::io::{BufRead, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Attach/stop cycles, and the cycle whose RSS is the baseline: by then the
/// JVM's own warm-up (JIT, class loading, the agent's first load) is done.
const CYCLES: usize = 100;
const BASELINE_CYCLE: usize = 10;

/// How much the JVM's resident memory may grow from cycle 10 to cycle 100:
/// 16 MiB, as the issue asks. The heap is pinned and touched at start
/// (`-Xms` = `-Xmx`, `-XX:+AlwaysPreTouch`), so what moves is the JVM's own
/// native memory (JIT code, metaspace, malloc arenas of 8 busy threads:
/// a few MiB) and whatever the agent keeps. A session's ring alone is 4 MiB,
/// so keeping one per cycle would add 360 MiB; 16 MiB over 90 cycles
/// catches any leak of 180 KiB or more per cycle.
const RSS_TOLERANCE: u64 = 16 << 20;

/// One attach or stop, or the wait for a recording's first flush, taking
/// longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The JVM's whole run: a hundred cycles take a minute or two on a loaded
/// machine; this only ends a hang.
const JVM_DEADLINE: Duration = Duration::from_secs(1200);

/// `VmRSS` or `Threads` of `/proc/PID/status`, in bytes for sizes.
fn status(pid: u32, key: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"));
    let mut words = line.split_whitespace();
    let number: u64 = words.next().unwrap().parse().unwrap();
    match words.next() {
        Some("kB") => number * 1024,
        _ => number,
    }
}

/// The JVM's attach socket, as `jcmd` finds or opens it: `/tmp/.java_pidPID`,
/// which the JVM creates when it receives SIGQUIT with an `.attach_pidPID`
/// file in its working directory. Talking to it directly spares a `jcmd`
/// (a JVM of its own, seconds on a busy machine) per attach and per stop.
fn attach_socket(pid: u32) -> PathBuf {
    let socket = PathBuf::from(format!("/tmp/.java_pid{pid}"));
    if !socket.exists() {
        let trigger = PathBuf::from(format!("/proc/{pid}/cwd/.attach_pid{pid}"));
        std::fs::write(&trigger, b"").unwrap();
        let sent = Command::new("kill")
            .args(["-QUIT", &pid.to_string()])
            .output_in_time();
        assert!(sent.status.success());
        let deadline = Instant::now() + TIMEOUT;
        while !socket.exists() {
            assert!(
                Instant::now() < deadline,
                "JVM {pid} opened no attach socket"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_file(trigger);
    }
    socket
}

/// Loads the agent into JVM `pid` with `options` through the attach
/// protocol (version 1: `load LIBRARY true OPTIONS`), as `jcmd PID
/// JVMTI.agent_load` does; returns what the JVM answered.
fn agent_load(socket: &Path, options: &str) -> String {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let library = support::agent_library();
    for word in ["1", "load", library.to_str().unwrap(), "true", options] {
        stream.write_all(word.as_bytes()).unwrap();
        stream.write_all(b"\0").unwrap();
    }
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// Whether the attach operation ran and the agent returned 0.
fn loaded(answer: &str) -> bool {
    answer.starts_with('0') && answer.contains("return code: 0")
}

/// What a session's chunk holds past its samples once its first flushes
/// are in, at most: the metadata three times over (the file's creation,
/// the writer's types, the heap's context), the environment and the
/// context events, 37.5 KiB in a recording of no sample that a loaded
/// machine made; then about 200 bytes a flush (`flush=50ms`), so that the
/// chunk passes this in seconds only with samples in it.
const CHUNK_BEYOND_SAMPLES: u64 = 64 * 1024;

/// Waits until `file`'s chunk has been flushed with samples in it (its
/// header complete and past [`CHUNK_BEYOND_SAMPLES`]).
fn wait_for_samples(file: &Path) {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let flushed = std::fs::read(file)
            .ok()
            .and_then(|bytes| jfr_format::ChunkHeader::decode(&bytes))
            .is_some_and(|header| {
                header.generation == 0 && header.chunk_size > CHUNK_BEYOND_SAMPLES
            });
        if flushed {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{}: no samples flushed",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_hundred_attach_stop_cycles_neither_crash_nor_leak() {
    let dir = support::temp_dir("agent_churn");
    let stderr = dir.join("jvm.stderr");
    let mut child = Command::new("java")
        .args(["-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "-cp"])
        .arg(support::compiled_workload("Scenarios"))
        .args(["Scenarios", "run", "3600", "8"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn_within(JVM_DEADLINE);
    let mut ready = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "ready");
    // Killed and reaped however the test ends.
    let mut jvm = child;
    let pid = jvm.id();
    // The JVM's own warm-up (C2 compiling the workload, its arenas) grows
    // its RSS by several MiB in the first seconds, agent or not: the cycles
    // start once it has settled, so that cycles 10 to 100 measure the agent.
    let settled = Instant::now() + Duration::from_secs(30);
    let mut rss = status(pid, "VmRSS");
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let now = status(pid, "VmRSS");
        if now.abs_diff(rss) < 1 << 20 || Instant::now() >= settled {
            break;
        }
        rss = now;
    }
    let socket = attach_socket(pid);
    let jvm_said = || std::fs::read_to_string(&stderr).unwrap_or_default();

    let mut files = Vec::new();
    let mut baseline = None;
    let started = Instant::now();
    let mut cycle_times = Vec::new();
    for cycle in 1..=CYCLES {
        let file = dir.join(format!("cycle-{cycle:03}.jfr"));
        let began = Instant::now();
        // A small interval, so samples really flow in each short recording.
        let answer = agent_load(
            &socket,
            &format!("file={},interval=16k,flush=50ms", file.display()),
        );
        assert!(
            loaded(&answer),
            "cycle {cycle}: attach: {answer}\n{}",
            jvm_said()
        );
        wait_for_samples(&file);
        let answer = agent_load(&socket, "stop");
        assert!(
            loaded(&answer),
            "cycle {cycle}: stop: {answer}\n{}",
            jvm_said()
        );
        cycle_times.push(began.elapsed());
        assert!(
            jvm.try_wait().unwrap().is_none(),
            "cycle {cycle}: the JVM died:\n{}",
            jvm_said()
        );
        files.push(file);
        if cycle % 10 == 0 {
            println!(
                "churn: cycle {cycle}: VmRSS {} KiB",
                status(pid, "VmRSS") >> 10
            );
        }
        if cycle == BASELINE_CYCLE {
            baseline = Some((status(pid, "VmRSS"), status(pid, "Threads")));
        }
    }
    let cycles_took = started.elapsed();
    let (rss_last, threads_last) = (status(pid, "VmRSS"), status(pid, "Threads"));
    let (rss_baseline, threads_baseline) = baseline.unwrap();
    drop(jvm);

    // Every recording finished and readable by the JDK's own parser, two
    // `jfr` at a time (one per core): checked after the cycles so that the
    // JVM's cycles follow each other closely.
    std::thread::scope(|scope| {
        for half in files.chunks(files.len().div_ceil(2)) {
            scope.spawn(move || {
                for file in half {
                    let summary = support::summary(file);
                    let samples = support::summary_count(&summary, "jdk.ObjectAllocationSample");
                    assert!(samples > 0, "{}: no samples\n{summary}", file.display());
                    assert_eq!(
                        support::summary_count(&summary, "heapsampler.ObjectLifetime"),
                        samples,
                        "{}: finished, one lifetime per sample",
                        file.display()
                    );
                }
            });
        }
    });

    let mut sorted = cycle_times.clone();
    sorted.sort();
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    println!(
        "churn: {CYCLES} attach/stop cycles in {:.1} s: per cycle median {} ms, max {} ms \
         (attach, first flush of samples, stop)",
        cycles_took.as_secs_f64(),
        sorted[sorted.len() / 2].as_millis(),
        sorted.last().unwrap().as_millis()
    );
    println!(
        "churn: VmRSS after cycle {BASELINE_CYCLE} {:.1} MiB, after cycle {CYCLES} {:.1} MiB \
         ({:+.1} MiB); threads {threads_baseline} -> {threads_last}",
        mib(rss_baseline),
        mib(rss_last),
        mib(rss_last) - mib(rss_baseline)
    );
    assert!(
        rss_last <= rss_baseline + RSS_TOLERANCE,
        "VmRSS grew from {rss_baseline} to {rss_last} bytes between cycles {BASELINE_CYCLE} and {CYCLES}"
    );
    // A thread left behind per session would add 90; the JVM starts and
    // ends compiler and GC threads on its own, a few at a time.
    assert!(
        threads_last <= threads_baseline + 8,
        "threads grew from {threads_baseline} to {threads_last}"
    );
}
