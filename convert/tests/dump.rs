//! `heapsampler dump` (of a running JVM's recording, and of a file being
//! written) and recordings bounded by `--max-size`, with a real JVM and the
//! real agent; every file checked by the JDK's own parser.

use heapsampler_test_support as support;

use heapsampler_test_support::{Deadline as _, heapsampler_exit};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn agent() -> PathBuf {
    support::agent_library()
}

/// The allocation samples in `file`, by the JDK's `jfr summary` (which
/// fails the test unless it reads the file), after checking that
/// `heapsampler summary` reads it too.
fn samples(file: &Path) -> u64 {
    let (code, stderr) = heapsampler_exit(["summary", file.to_str().unwrap()]);
    assert_eq!(
        code,
        Some(0),
        "heapsampler summary {}: {stderr}",
        file.display()
    );
    let summary = support::summary(file);
    support::summary_count(&summary, "jdk.ObjectAllocationSample")
}

#[test]
fn dump_a_running_jvm_and_a_file_being_written() {
    let dir = support::temp_dir("convert_dump");
    let file = dir.join("attached.jfr");
    let first = dir.join("first.jfr");
    let second = dir.join("second.jfr");
    let from_file = dir.join("from-file.jfr");
    let mut jvm = support::running_jvm();
    let pid = jvm.id().to_string();
    let agent = agent();
    let agent = agent.to_str().unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_owned();

    let (code, stderr) = heapsampler_exit(["dump", &pid, "-o", &path(&first), "--agent", agent]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("JVM {pid} wrote no snapshot")),
        "{stderr}"
    );
    assert!(!first.exists());

    let (code, stderr) = heapsampler_exit([
        "attach",
        &pid,
        "-o",
        &path(&file),
        "--interval",
        "64k",
        "--agent",
        agent,
    ]);
    assert_eq!(code, Some(0), "{stderr}");

    // The snapshot is there, complete, when dump returns.
    let (code, stderr) = heapsampler_exit(["dump", &pid, "-o", &path(&first), "--agent", agent]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("recording: {}", first.display())),
        "{stderr}"
    );
    let first_samples = samples(&first);

    // The recording goes on: a later snapshot has more.
    let deadline = Instant::now() + Duration::from_secs(60);
    let second_samples = loop {
        let (code, stderr) =
            heapsampler_exit(["dump", &pid, "-o", &path(&second), "--agent", agent]);
        assert_eq!(code, Some(0), "{stderr}");
        let samples = samples(&second);
        if samples > first_samples {
            break samples;
        }
        assert!(
            Instant::now() < deadline,
            "no more samples than {first_samples} in a minute"
        );
        std::thread::sleep(Duration::from_millis(200));
    };

    // A file being written, read without the agent's help.
    let (code, stderr) = heapsampler_exit(["dump", &path(&file), "-o", &path(&from_file)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("chunks"), "{stderr}");
    let from_file_samples = samples(&from_file);
    assert!(from_file_samples >= second_samples);

    let (code, stderr) = heapsampler_exit(["detach", &pid, "--agent", agent]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM still runs");
    jvm.kill().unwrap();
    jvm.wait().unwrap();
    // The recording itself was left whole by the snapshots.
    let all = samples(&file);
    assert!(all >= from_file_samples, "{all} < {from_file_samples}");
    assert_eq!(
        support::summary_count(&support::summary(&file), "heapsampler.ObjectLifetime"),
        all
    );
}

/// `heapsampler ARGS...` with its cache in `dir`, so that the agent it
/// would write out of itself is a file of its own there (another file
/// than any a JVM of the test loaded): its exit code and standard error.
fn heapsampler_cached_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = support::heapsampler_command(args)
        .env("XDG_CACHE_HOME", dir)
        .env_remove("HEAPSAMPLER_AGENT")
        .output_in_time();
    (output.status.code(), support::text(&output.stderr))
}

/// A recording started with `-agentpath:` is reached by `dump PID` and
/// `detach PID` whatever agent the command carries or is given (each file a
/// JVM loads is an agent of its own, and only the one recording knows the
/// recording): they load the file the JVM's recording announces. An
/// `attach` meanwhile is refused, naming it.
#[test]
fn dump_and_detach_reach_a_recording_started_with_agentpath() {
    let dir = support::temp_dir("convert_dump_agentpath");
    // A name that jcmd's listing of properties escapes: a space, a colon,
    // an equals sign, a hash and a letter past ASCII.
    let file = dir.join("started at: #1 = Zürich.jfr");
    let snapshot = dir.join("snapshot.jfr");
    let other_agent = dir.join("libheapsampler-copy.so");
    std::fs::copy(agent(), &other_agent).unwrap();
    let agentpath = format!(
        "-agentpath:{}=file={},interval=64k",
        agent().display(),
        file.display()
    );
    let mut jvm = support::running_jvm_with(&[agentpath]);
    let pid = jvm.id().to_string();
    let path = |p: &Path| p.to_str().unwrap().to_owned();

    // The command's own agent, written out to the cache: not the JVM's.
    let (code, stderr) = heapsampler_cached_in(&dir, &["dump", &pid, "-o", &path(&snapshot)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(samples(&snapshot) > 0);

    let (code, stderr) = heapsampler_cached_in(
        &dir,
        &["attach", &pid, "-o", &path(&dir.join("second.jfr"))],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "a recording is already running in JVM {pid} (to {})",
            file.display()
        )) && stderr.contains(&format!("the agent loaded from {}", agent().display())),
        "{stderr}"
    );

    // Another file named: the recording's own is asked, and said to be.
    let (code, stderr) =
        heapsampler_cached_in(&dir, &["detach", &pid, "--agent", &path(&other_agent)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "JVM {pid} samples with the agent loaded from {}, not --agent's {}",
            agent().display(),
            other_agent.display()
        )),
        "{stderr}"
    );
    // The report of the recording the JVM announced, its name read back
    // from jcmd's escaped listing.
    assert!(
        stderr.contains(&format!("recording: {}", file.display())),
        "{stderr}"
    );
    let (code, stderr) = heapsampler_cached_in(&dir, &["detach", &pid]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("has no heapsampler recording running"),
        "{stderr}"
    );
    // The next attach goes through the copy that holds the JVM's sampling
    // (JVMTI lets one agent sample), not the command's own.
    let next = dir.join("next.jfr");
    let (code, stderr) = heapsampler_cached_in(&dir, &["attach", &pid, "-o", &path(&next)]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = heapsampler_cached_in(&dir, &["detach", &pid]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("recording: {}", next.display())),
        "{stderr}"
    );
    assert!(jvm.try_wait().unwrap().is_none(), "the JVM still runs");
    jvm.kill().unwrap();
    jvm.wait().unwrap();
    let recorded = samples(&file);
    assert!(recorded >= samples(&snapshot), "{recorded}");
    assert!(samples(&next) > 0);
}

/// A JVM whose recording is announced by another version of the agent:
/// the command says so before it asks that agent. (No agent of another
/// version is at hand, so the JVM announces one by its own properties,
/// naming this build's agent file, which then finds no recording to dump.)
#[test]
fn dump_says_when_another_version_records() {
    let dir = support::temp_dir("convert_dump_other_version");
    let announced = dir.join("elsewhere.jfr");
    let mut jvm = support::running_jvm_with(&[
        "-Dheapsampler.agent.version=0.0.1".to_owned(),
        format!("-Dheapsampler.agent.library={}", agent().display()),
        format!("-Dheapsampler.recording={}", announced.display()),
    ]);
    let pid = jvm.id().to_string();
    let snapshot = dir.join("snapshot.jfr");
    let (code, stderr) =
        heapsampler_cached_in(&dir, &["dump", &pid, "-o", snapshot.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "JVM {pid} samples with heapsampler 0.0.1's agent ({}); this is heapsampler {}",
            agent().display(),
            env!("CARGO_PKG_VERSION")
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("JVM {pid} wrote no snapshot")),
        "{stderr}"
    );
    jvm.kill().unwrap();
    jvm.wait().unwrap();
}

#[test]
fn dump_says_what_went_wrong() {
    let dir = support::temp_dir("convert_dump_errors");
    let text = dir.join("notes.jfr");
    std::fs::write(
        &text,
        "not a recording, and longer than a chunk header would be",
    )
    .unwrap();
    let out = dir.join("out.jfr");
    let (code, stderr) =
        heapsampler_exit(["dump", text.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("not an uncompressed JFR recording"),
        "{stderr}"
    );
    let (code, stderr) =
        heapsampler_exit(["dump", "/no/such/file.jfr", "-o", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot open /no/such/file.jfr"), "{stderr}");
    let (code, _) = heapsampler_exit(["dump", "4242"]);
    assert_eq!(code, Some(2), "-o is required");
    assert!(!out.exists());
}

#[test]
fn record_with_max_size_keeps_the_file_bounded() {
    let dir = support::temp_dir("convert_max_size");
    let file = dir.join("bounded.jfr");
    const MAX_SIZE: u64 = 1 << 20;
    support::record_with_agent(
        &file,
        &["--interval", "16k", "--max-size", "1m"],
        "Scenarios",
        // 2 threads allocating 1 GiB each: about 130,000 samples.
        &["threads", "2", "1024"],
    );
    let size = std::fs::metadata(&file).unwrap().len();
    let chunks = support::summary_chunks(&support::summary(&file));
    // The last rotation ran when the last chunk ended: the chunks kept fit
    // in the limit, or the newest alone is kept (the recording's end writes
    // a large one: an ObjectLifetime per object still tracked).
    assert!(
        chunks == 1 || size <= MAX_SIZE,
        "{chunks} chunks in {size} bytes with --max-size 1m"
    );
    // The samples kept, unless the recording's end came after a chunk end
    // with no sample since: then the end's chunk is the newest complete
    // one, kept, and the one before it, past the limit alone, is dropped
    // (each flush here writes over 1 MiB of samples; under load the JVM's
    // exit can take longer than a flush interval).
    let ending_alone = chunks == 1 && {
        let summary = support::summary(&file);
        support::summary_count(&summary, "heapsampler.LiveSet") == 1
            && support::summary_count(&summary, "jdk.ObjectAllocationSample") == 0
    };
    assert!(ending_alone || samples(&file) > 0);
    // More was written than kept: the oldest chunks were dropped.
    let document = support::print_json(&file);
    let written = support::json_events(&document)
        .iter()
        .filter(|e| e["type"] == "heapsampler.AgentStatistics")
        .filter_map(|e| e["values"]["bytesWritten"].as_i64())
        .max()
        .expect("statistics events");
    assert!(
        written as u64 > 2 * MAX_SIZE,
        "the workload wrote only {written} bytes: nothing to drop"
    );
    // Every chunk begins with the recording's settings, so what a rotation
    // kept still says them, the limit among them.
    let events = support::json_events(&document);
    let recordings: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "jdk.ActiveRecording")
        .collect();
    assert_eq!(recordings.len() as u64, chunks, "one per chunk");
    for recording in recordings {
        assert_eq!(
            recording["values"]["maxSize"].as_i64(),
            Some(MAX_SIZE as i64)
        );
    }
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "jdk.ActiveSetting" && e["values"]["name"] == "interval"),
        "the kept chunks say the sampling interval"
    );
}

/// The sizes of the chunks of `file`, from their headers.
fn chunk_sizes(file: &Path) -> Vec<u64> {
    let bytes = std::fs::read(file).unwrap();
    let mut sizes = Vec::new();
    let mut at = 0;
    while at + 68 <= bytes.len() {
        assert_eq!(&bytes[at..at + 4], b"FLR\0", "a chunk at {at}");
        let size = u64::from_be_bytes(bytes[at + 8..at + 16].try_into().unwrap());
        sizes.push(size);
        at += size as usize;
    }
    assert_eq!(at, bytes.len(), "chunks end at the file's end");
    sizes
}

#[test]
fn an_attached_recording_with_max_size_rotates_while_it_runs() {
    use std::os::unix::fs::MetadataExt;
    let dir = support::temp_dir("convert_attach_max_size");
    let file = dir.join("bounded.jfr");
    const MAX_SIZE: u64 = 1 << 20;
    let mut jvm = support::running_jvm();
    let pid = jvm.id().to_string();
    let agent = agent();
    let agent = agent.to_str().unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    let (code, stderr) = heapsampler_exit([
        "attach",
        &pid,
        "-o",
        &path(&file),
        "--interval",
        "32k",
        "--max-size",
        "1m",
        "--agent",
        agent,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    // A rotation renames a new file over the recording.
    let deadline = Instant::now() + Duration::from_secs(60);
    let first_inode = loop {
        if let Ok(metadata) = std::fs::metadata(&file) {
            break metadata.ino();
        }
        assert!(Instant::now() < deadline, "no recording file");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut snapshots_after_rotation = 0;
    let mut snapshots = 0;
    while snapshots_after_rotation < 2 {
        assert!(
            Instant::now() < deadline,
            "the recording did not rotate in a minute"
        );
        std::thread::sleep(Duration::from_millis(300));
        let snapshot = dir.join(format!("snapshot-{snapshots}.jfr"));
        let (code, stderr) = heapsampler_exit(["dump", &path(&file), "-o", &path(&snapshot)]);
        if stderr.contains("no complete chunk yet") {
            // Not flushed yet (the agent flushes every second).
            continue;
        }
        assert_eq!(code, Some(0), "{stderr}");
        snapshots += 1;
        // Complete chunks within the limit (or the newest alone), then the
        // chunk being written.
        let sizes = chunk_sizes(&snapshot);
        let complete = &sizes[..sizes.len() - 1];
        assert!(
            complete.len() <= 1 || complete.iter().sum::<u64>() <= MAX_SIZE,
            "chunks {sizes:?} with --max-size 1m"
        );
        if std::fs::metadata(&file).unwrap().ino() != first_inode {
            snapshots_after_rotation += 1;
            if snapshots_after_rotation == 2 {
                assert!(samples(&snapshot) > 0);
            }
        }
    }
    let (code, stderr) = heapsampler_exit(["detach", &pid, "--agent", agent]);
    assert_eq!(code, Some(0), "{stderr}");
    jvm.kill().unwrap();
    jvm.wait().unwrap();
    let sizes = chunk_sizes(&file);
    assert!(
        sizes.len() == 1 || sizes.iter().sum::<u64>() <= MAX_SIZE,
        "chunks {sizes:?} with --max-size 1m"
    );
    assert!(samples(&file) > 0);
}
