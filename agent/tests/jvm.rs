//! The agent in real JVMs (the JDK 17 on PATH): recordings checked with the
//! JDK's own parser.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use heapsampler_agent::heap::{CollectorKind, collector_kind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn agent() -> PathBuf {
    support::agent_library()
}

fn workload(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/workloads")
        .join(name)
}

/// Runs `java -agentpath:AGENT=OPTIONS WORKLOAD ARGS...`.
fn java(options: &str, workload_name: &str, args: &[&str]) -> Output {
    Command::new("java")
        .arg(format!("-agentpath:{}={options}", agent().display()))
        .arg("-Xmx512m")
        .arg(workload(workload_name))
        .args(args)
        .output_in_time()
}

/// The 1-based line of `text` in a workload's source: what the stack frame's
/// line number must be.
fn source_line(workload_name: &str, text: &str) -> usize {
    let source = std::fs::read_to_string(workload(workload_name)).unwrap();
    source
        .lines()
        .position(|l| l.contains(text))
        .expect("the line is in the source")
        + 1
}

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line
        .find(&format!(" {name}="))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        + name.len()
        + 2;
    let rest = &line[start..];
    // Values with spaces are quoted or bracketed; these fields are not.
    rest.split(' ').next().unwrap()
}

#[test]
fn known_allocations_are_sampled_with_stacks_threads_and_weights() {
    let dir = support::temp_dir("agent_known");
    let file = dir.join("known.jfr");
    let output = java(
        &format!("file={},interval=64k", file.display()),
        "KnownAllocations.java",
        &["4", "64"],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("heapsampler: recording allocations to"),
        "{stderr}"
    );
    let allocated: f64 = stdout
        .trim()
        .strip_prefix("allocated ")
        .unwrap()
        .parse()
        .unwrap();

    let summary = support::summary(&file);
    let lines = support::dump(&file);
    let of = |t: &str| {
        lines
            .iter()
            .filter(|l| l.starts_with(t))
            .collect::<Vec<_>>()
    };
    let samples = of("jdk.ObjectAllocationSample ");
    let lifetimes = of("heapsampler.ObjectLifetime ");
    assert_eq!(
        support::summary_count(&summary, "jdk.ObjectAllocationSample"),
        samples.len() as u64
    );
    assert_eq!(
        lifetimes.len(),
        samples.len(),
        "exactly one ObjectLifetime per sample"
    );
    assert_eq!(
        of("jdk.ActiveRecording ").len(),
        1,
        "the recording says what it is"
    );
    assert!(
        of("jdk.ActiveSetting ")
            .iter()
            .any(|l| l.contains("name=\"interval\" value=\"65536 bytes\"")),
        "the recording says its interval"
    );
    let statistics = of("heapsampler.AgentStatistics ");
    let last = statistics.last().expect("statistics at the end");
    assert_eq!(field(last, "samples"), samples.len().to_string(), "{last}");
    assert_eq!(field(last, "lostSamples"), "0");

    // The workload's own arrays: the top frame is allocateInts, at its line.
    let line = source_line("KnownAllocations.java", "return new int[LENGTH];");
    let top = format!("stackTrace=stack(false:KnownAllocations.allocateInts()[I:{line}:");
    let ours: Vec<_> = samples.iter().filter(|l| l.contains(&top)).collect();
    for line in &ours {
        assert_eq!(
            field(line, "objectClass"),
            "class([I,0,bootstrap)",
            "{line}"
        );
        assert!(
            line.contains("KnownAllocations.allocate(J)J:"),
            "the caller is in the stack: {line}"
        );
        assert!(line.contains("eventThread=thread(\"worker-"), "{line}");
    }
    let threads: std::collections::HashSet<&str> = ours
        .iter()
        .map(|l| &l[l.find("eventThread=thread(\"worker-").unwrap() + 20..][..8])
        .collect();
    assert_eq!(
        threads.len(),
        4,
        "samples from each of the 4 workers: {threads:?}"
    );

    // 256 MiB at a 64 KiB mean interval: about 4100 samples of int[1000]
    // (4016 bytes, well under the interval, so each weighs about 66 KB). The
    // estimate's relative standard deviation is about 1/sqrt(4100) = 1.6%;
    // 8% is five of them.
    let weights: f64 = ours
        .iter()
        .map(|l| field(l, "weight").parse::<f64>().unwrap())
        .sum();
    let error = (weights - allocated) / allocated;
    assert!(
        error.abs() < 0.08,
        "weights {weights} vs allocated {allocated}: {:.2}%",
        error * 100.0
    );
    assert!(ours.len() > 3000, "{} samples", ours.len());
}

#[test]
fn bad_options_stop_the_jvm_with_one_line_naming_them() {
    let dir = support::temp_dir("agent_options");
    let missing_dir = dir.join("no/such/dir/x.jfr");
    let cases = [
        (
            "interval=-5".to_owned(),
            "bad option 'interval=-5': expected a size in bytes",
        ),
        ("depth=0".to_owned(), "bad option 'depth=0'"),
        ("intervl=1k".to_owned(), "unknown option 'intervl'"),
        ("live=maybe".to_owned(), "bad option 'live=maybe'"),
        ("hidden=maybe".to_owned(), "bad option 'hidden=maybe'"),
        (format!("file={}", missing_dir.display()), "cannot create"),
    ];
    for (options, message) in cases {
        let output = Command::new("java")
            .arg(format!("-agentpath:{}={options}", agent().display()))
            .arg("-version")
            .output_in_time();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "{options}: the JVM must not start"
        );
        let ours: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("heapsampler:"))
            .collect();
        assert_eq!(ours.len(), 1, "{options}: one line: {stderr}");
        assert!(ours[0].contains(message), "{options}: {}", ours[0]);
    }
}

#[test]
fn rate_limits_samples_per_second() {
    let dir = support::temp_dir("agent_rate");
    let unlimited = dir.join("unlimited.jfr");
    let limited = dir.join("limited.jfr");
    // 4 threads x 512 MiB at a 16 KiB interval: about 130,000 samples unlimited.
    let run = |file: &Path, extra: &str| {
        let output = java(
            &format!("file={},interval=16k{extra}", file.display()),
            "KnownAllocations.java",
            &["4", "512"],
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        support::summary_count(&support::summary(file), "jdk.ObjectAllocationSample")
    };
    let free = run(&unlimited, "");
    let capped = run(&limited, ",rate=8000");
    // The limiter reacts within a 200 ms window (sooner once a window's
    // budget is spent), so a run of about a second stays far under the
    // unlimited count at 8000 samples/s.
    assert!(free > 100_000, "unlimited: {free} samples");
    assert!(
        capped * 3 < free,
        "limited to 8000/s: {capped} samples, unlimited {free}"
    );
    let lines = support::dump_types(&limited, &["jdk.ObjectAllocationSample"]);
    // And the weights still estimate the bytes, although the interval
    // changed under the threads: each sample carries the interval its
    // distance was drawn with (carrying the new interval instead gave +24%
    // in one CI run). The estimate's spread comes from the samples
    // themselves: each is an object of s bytes kept with probability
    // p = s / weight, so the sum of weights has variance
    // sum((1 - p) weight^2): about 2% here (11,000 samples), mostly from
    // those taken at the largest intervals. Runs at 2000/s spread 1.5
    // times wider than this says (the limiter's intervals follow the
    // samples themselves), so 6 of these deviations is at least 4 of the
    // real spread: a correct agent fails about 1 run in 16,000, and the
    // +24% of that bug is 10 or more.
    let weights: Vec<f64> = lines
        .iter()
        .filter(|l| l.contains("KnownAllocations.allocateInts()[I:"))
        .map(|l| field(l, "weight").parse::<f64>().unwrap())
        .collect();
    let estimate: f64 = weights.iter().sum();
    let size = 16.0 + 4.0 * 1000.0; // int[1000]
    let variance: f64 = weights
        .iter()
        .map(|w| (1.0 - size / w).max(0.0) * w * w)
        .sum();
    let deviation = variance.sqrt();
    let truth = 4.0 * 512.0 * 1048576.0;
    assert!(
        (estimate - truth).abs() < 6.0 * deviation,
        "estimated {estimate} of {truth} from {} samples: off by {:.1} standard deviations of {:.1}%",
        weights.len(),
        (estimate - truth) / deviation,
        100.0 * deviation / truth
    );
}

/// The scenarios compiled once per test binary (at `interval=0` a source
/// launch would sample javac's own allocations too).
fn classes() -> PathBuf {
    support::compiled_workload("Scenarios")
}

/// Starts `java -agentpath:AGENT=OPTIONS [JVM_ARGS] Scenarios ARGS...`.
fn scenario(options: &str, jvm_args: &[&str], args: &[&str]) -> Command {
    scenario_on(Path::new("java"), options, jvm_args, args)
}

/// [`scenario`] with the JVM `java`.
fn scenario_on(java: &Path, options: &str, jvm_args: &[&str], args: &[&str]) -> Command {
    let mut command = Command::new(java);
    command
        .arg(format!("-agentpath:{}={options}", agent().display()))
        .args(jvm_args)
        .arg("-cp")
        .arg(classes())
        .arg("Scenarios")
        .args(args);
    command
}

/// The recording's events by type, as the JDK reads them.
fn events(file: &Path) -> Events {
    let mut by_type = Events::new();
    for line in support::dump(file) {
        let name = line.split(' ').next().unwrap().to_owned();
        by_type.entry(name).or_default().push(line);
    }
    by_type
}

fn count(events: &Events, name: &str) -> usize {
    events.get(name).map_or(0, Vec::len)
}

/// Runs a scenario under the agent with `options` (and a `file=` of its
/// own), requires it to succeed and its recording to be complete, and
/// returns its standard output and the recording's events.
fn record(test: &str, options: &str, args: &[&str]) -> (String, Events) {
    record_in(test, options, &[], args)
}

/// [`record`], with arguments for the JVM.
fn record_in(test: &str, options: &str, jvm_args: &[&str], args: &[&str]) -> (String, Events) {
    let file = support::temp_dir(test).join("recording.jfr");
    let options = format!("file={},{options}", file.display());
    let output = scenario(options.trim_end_matches(','), jvm_args, args).output_in_time();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{test}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&file);
    assert_complete(&events);
    (stdout, events)
}

type Events = std::collections::HashMap<String, Vec<String>>;

/// Every sample has exactly one lifetime event, and the agent's own count
/// of samples matches the events, with none lost.
fn assert_complete(events: &Events) {
    let samples = count(events, "jdk.ObjectAllocationSample");
    assert!(samples > 0, "no samples");
    assert_eq!(
        count(events, "heapsampler.ObjectLifetime"),
        samples,
        "one ObjectLifetime per sample"
    );
    let last = events["heapsampler.AgentStatistics"].last().unwrap();
    assert_eq!(field(last, "samples"), samples.to_string(), "{last}");
    assert_eq!(field(last, "lostSamples"), "0", "{last}");
}

#[test]
fn interval_zero_samples_every_allocation_exactly() {
    let (_, events) = record("agent_exact", "interval=0", &["exact"]);
    // After the workload's warm-up (see Scenarios.warmUp: the JVM applies
    // interval 0 only once a thread's TLAB and first drawn distance are
    // used up), new int[5][5] x 1000: 1000 outer arrays and 5000 inner ones, all
    // allocated with allocateMatrix (at its line) on top of the stack.
    let line = source_line("Scenarios.java", "return new int[5][5];");
    let top = format!("stackTrace=stack(false:Scenarios.allocateMatrix()[[I:{line}:");
    let ours: Vec<&String> = events["jdk.ObjectAllocationSample"]
        .iter()
        .filter(|l| l.contains(&top))
        .collect();
    // JDK 25 also allocates the java.lang.Class of int[][] there, the
    // first time: a real allocation, sampled like the others.
    let mirrors = ours
        .iter()
        .filter(|l| l.contains("objectClass=class(java.lang.Class,"))
        .count();
    assert!(mirrors <= 1, "{mirrors} Class objects");
    assert_eq!(ours.len(), 6000 + mirrors);
    let outer = ours
        .iter()
        .filter(|l| l.contains("objectClass=class([[I,"))
        .count();
    let inner = ours
        .iter()
        .filter(|l| l.contains("objectClass=class([I,"))
        .count();
    assert_eq!((outer, inner), (1000, 5000));
    for line in &ours {
        assert!(
            line.contains(";Scenarios.exact()V:"),
            "the caller follows: {line}"
        );
    }
}

#[test]
fn no_sample_is_lost_when_the_ring_is_full() {
    // Every allocation of 16 threads through a 4 KiB ring: the threads must
    // wait for the writer, and every sample must arrive.
    let (_, events) = record(
        "agent_no_loss",
        "interval=0,ring=4k,depth=16",
        &["threads", "16", "2"],
    );
    let workers = events["jdk.ObjectAllocationSample"]
        .iter()
        .filter(|l| l.contains("eventThread=thread(\"worker-"))
        .count();
    // 2 MiB of int[1000] per thread: 523 arrays each, 8368 in all, plus the
    // Thread objects' own allocations.
    assert!(workers >= 16 * 523, "{workers} samples from the workers");
    let last = events["heapsampler.AgentStatistics"].last().unwrap();
    assert_ne!(
        field(last, "backPressureWaits"),
        "0",
        "the ring must have been full: {last}"
    );
}

#[test]
fn live_objects_are_live_and_dropped_ones_are_freed() {
    let (_, events) = record("agent_liveness", "interval=0", &["liveness"]);
    let lifetimes = &events["heapsampler.ObjectLifetime"];
    let of = |method: &str, live: &str| {
        lifetimes
            .iter()
            .filter(|l| l.contains(&format!("stackTrace=stack(false:Scenarios.{method}()[B:")))
            .filter(|l| field(l, "live") == live)
            .count()
    };
    // Every allocation after the warm-up is sampled: all 1000 kept arrays are still live at
    // the end, and System.gc() freed all 1000 dropped ones.
    assert_eq!((of("keep", "true"), of("keep", "false")), (1000, 0));
    assert_eq!((of("drop", "false"), of("drop", "true")), (1000, 0));
    for line in lifetimes
        .iter()
        .filter(|l| l.contains("Scenarios.drop()") && field(l, "live") == "false")
    {
        assert_ne!(field(line, "freedByGcId"), "0", "{line}");
    }
    assert!(
        count(&events, "heapsampler.GarbageCollection") >= 2,
        "two System.gc() calls"
    );
    // The kept arrays are old objects at the end, with their length; the
    // dropped ones are not.
    let old_objects = &events["jdk.OldObjectSample"];
    let old_of = |method: &str| {
        old_objects
            .iter()
            .filter(|l| l.contains(&format!("stackTrace=stack(false:Scenarios.{method}()[B:")))
            .collect::<Vec<_>>()
    };
    assert_eq!((old_of("keep").len(), old_of("drop").len()), (1000, 0));
    for line in old_of("keep") {
        // Scenarios.keep allocates byte[4096].
        assert_eq!(field(line, "arrayElements"), "4096", "{line}");
        assert_ne!(field(line, "objectAge"), "0", "{line}");
        // The heap after the System.gc() calls held the 4 MB kept.
        let heap: u64 = field(line, "lastKnownHeapUsage").parse().unwrap();
        assert!(heap > 4_000_000, "{line}");
    }
}

/// The feature version of the `java` on the PATH: 17 here, 25 in
/// `.ci/run`'s second pass.
fn path_java_version() -> u32 {
    support::java_release(Path::new("java"))
}

/// Temurin 25's `java`, whose only ZGC is generational; `None` (said)
/// where it is not installed.
fn java_25(test: &str) -> Option<PathBuf> {
    support::temurin_25(test).map(|home| home.join("bin/java"))
}

/// Runs a scenario with `java` under the agent with `options` (and a
/// `file=` of its own) and `jvm_args`, requires it to succeed and its
/// recording to be complete; returns its standard error and the
/// recording's events, as the JDK 17 on PATH reads them.
fn record_with(
    java: &Path,
    test: &str,
    options: &str,
    jvm_args: &[&str],
    args: &[&str],
) -> (String, Events) {
    let file = support::temp_dir(test).join("recording.jfr");
    let options = format!("file={},{options}", file.display());
    let output = scenario_on(java, &options, jvm_args, args).output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{test}: {stderr}");
    let events = events(&file);
    assert_complete(&events);
    (stderr, events)
}

/// A lifetime's `trackingProbability`.
fn tracking_probability(line: &str) -> f64 {
    support::dump_double(line, "trackingProbability")
}

/// Checks a recording's liveness tracking against the probabilities its
/// lifetimes carry, and returns them: a tracked sample has the probability
/// it was drawn with, above 0; one the draw left out, its probability,
/// above 0; one whose liveness is unknown, 0. The agent's counts say the
/// same: drawn, undrawn, and untracked (the unknown ones, capped ones among
/// them).
fn tracking_probabilities(test: &str, events: &Events) -> Vec<(bool, f64)> {
    let lifetimes: Vec<(bool, f64)> = events["heapsampler.ObjectLifetime"]
        .iter()
        .map(|l| (field(l, "tracked") == "true", tracking_probability(l)))
        .collect();
    for &(tracked, q) in &lifetimes {
        assert!((0.0..=1.0).contains(&q), "{test}: {q}");
        assert!(!tracked || q > 0.0, "{test}: tracked at {q}");
    }
    let count = |f: &dyn Fn(bool, f64) -> bool| {
        lifetimes
            .iter()
            .filter(|&&(tracked, q)| f(tracked, q))
            .count()
            .to_string()
    };
    let last = events["heapsampler.AgentStatistics"].last().unwrap();
    assert_eq!(
        field(last, "drawnSamples"),
        count(&|t, _| t),
        "{test}: {last}"
    );
    assert_eq!(
        field(last, "undrawnSamples"),
        count(&|t, q| !t && q > 0.0),
        "{test}: {last}"
    );
    assert_eq!(
        field(last, "untrackedObjects"),
        count(&|_, q| q == 0.0),
        "{test}: {last}"
    );
    lifetimes
}

/// On generational ZGC the agent says, at start, that it tracks a share of
/// the samples and why; each sample is tracked with the probability its
/// lifetime carries: of the samples drawn (q above 0), the number tracked
/// is a sum of independent draws, whose mean is the sum of their q and
/// whose variance the sum of q(1 - q); it is within 5 standard deviations
/// of the mean, and 1 for the count's whole steps (a chance below 1 in
/// 10^5 for draws made as recorded). A share it is: 2 threads allocating
/// 64 MiB each at a 4 KiB interval take about 20,000 samples, at least 10
/// a millisecond, far more than the 16 a second aimed at, so most are
/// drawn with q below 1 (only the first window's few dozen, and those the
/// writer sees late, at 1).
#[test]
fn generational_zgc_tracks_a_known_share_of_the_samples() {
    let test = "generational_zgc_tracks_a_known_share_of_the_samples";
    let Some(java) = java_25(test) else {
        return;
    };
    let (stderr, events) = record_with(
        &java,
        "agent_zgc_share",
        "interval=4k",
        &["-XX:+UseZGC", "-Xmx1g"],
        &["threads", "2", "64"],
    );
    assert!(
        stderr.contains(
            "heapsampler: generational ZGC: liveness is tracked for a share of the samples, \
             about 16 a second, since its young collections keep"
        ) && stderr.contains("live_rate=all tracks every sample"),
        "{stderr}"
    );
    let lifetimes = tracking_probabilities(test, &events);
    let drawn: Vec<(bool, f64)> = lifetimes.iter().copied().filter(|l| l.1 > 0.0).collect();
    let tracked = drawn.iter().filter(|l| l.0).count() as f64;
    let mean: f64 = drawn.iter().map(|l| l.1).sum();
    let variance: f64 = drawn.iter().map(|l| l.1 * (1.0 - l.1)).sum();
    assert!(
        (tracked - mean).abs() <= 5.0 * variance.sqrt() + 1.0,
        "{tracked} tracked, {mean:.1} expected (variance {variance:.1}) of {} drawn",
        drawn.len()
    );
    assert!(lifetimes.len() >= 10_000, "{} samples", lifetimes.len());
    let at_one = lifetimes.iter().filter(|l| l.1 == 1.0).count();
    assert!(
        at_one * 10 < lifetimes.len(),
        "{at_one} of {} samples drawn at q = 1",
        lifetimes.len()
    );
}

/// At an attach too, the agent tells generational ZGC from the JVM's flags:
/// attached (with Temurin 25's jcmd) to a JVM whose two threads allocate
/// under ZGC, it says so on the JVM's stderr, and of the 500 samples and
/// more it records, only the first window's few dozen are drawn at q = 1,
/// the others with the share.
#[test]
fn an_attach_to_generational_zgc_tracks_a_share() {
    let test = "an_attach_to_generational_zgc_tracks_a_share";
    let Some(java) = java_25(test) else {
        return;
    };
    let file = support::temp_dir("agent_zgc_attach").join("attached.jfr");
    let mut child = Command::new(&java)
        .args(["-XX:+UseZGC", "-Xmx512m", "-cp"])
        .arg(classes())
        .args(["Scenarios", "run", "60", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_within(support::DEADLINE);
    let mut line = String::new();
    {
        use std::io::BufRead;
        let mut stdout = std::io::BufReader::new(child.stdout.as_mut().unwrap());
        stdout.read_line(&mut line).unwrap();
    }
    assert_eq!(line.trim(), "ready");
    let jcmd = |options: &str| {
        let output = Command::new(java.with_file_name("jcmd"))
            .arg(child.id().to_string())
            .arg("JVMTI.agent_load")
            .arg(agent())
            .arg(format!("\"{options}\""))
            .output_in_time();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let attached = jcmd(&format!("file={},interval=16k,flush=100ms", file.display()));
    assert!(attached.contains("return code: 0"), "{attached}");
    // Wait until the flushes have put 256 KiB in the file: thousands of
    // samples, each some 40 bytes with its lifetime (the JDK's parser
    // cannot count them in a file being written). Counted once it ends.
    let deadline = Instant::now() + Duration::from_secs(60);
    let flushed = || {
        std::fs::read(&file)
            .ok()
            .and_then(|bytes| jfr_format::ChunkHeader::decode(&bytes))
            .is_some_and(|header| header.chunk_size > 256 * 1024)
    };
    while !flushed() {
        assert!(
            Instant::now() < deadline,
            "256 KiB not written within a minute"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let stopped = jcmd("stop");
    assert!(stopped.contains("return code: 0"), "{stopped}");
    wait_until_finished(&file, &mut child);
    child.kill().unwrap();
    let stderr = String::from_utf8_lossy(&child.wait_with_output().stderr).into_owned();
    assert!(
        stderr.contains("heapsampler: generational ZGC: liveness is tracked for a share"),
        "{stderr}"
    );
    let events = events(&file);
    assert_complete(&events);
    let lifetimes = tracking_probabilities(test, &events);
    let at_one = lifetimes.iter().filter(|l| l.1 == 1.0).count();
    assert!(
        lifetimes.len() >= 500 && at_one <= 100,
        "{at_one} of {} samples drawn at q = 1",
        lifetimes.len()
    );
}

/// `live_rate=all` tracks every sample on generational ZGC, without the
/// line: the liveness scenario's 1,000 kept arrays are live at the end,
/// its 1,000 dropped ones freed by its `System.gc()` (a major collection).
#[test]
fn live_rate_all_tracks_every_sample_on_generational_zgc() {
    let test = "live_rate_all_tracks_every_sample_on_generational_zgc";
    let Some(java) = java_25(test) else {
        return;
    };
    let (stderr, events) = record_with(
        &java,
        "agent_zgc_all",
        "interval=0,live_rate=all",
        &["-XX:+UseZGC", "-Xmx512m"],
        &["liveness"],
    );
    assert!(!stderr.contains("a share of the samples"), "{stderr}");
    let lifetimes = tracking_probabilities(test, &events);
    assert!(
        lifetimes.iter().all(|&l| l == (true, 1.0)),
        "{:?}",
        lifetimes
            .iter()
            .filter(|&&l| l != (true, 1.0))
            .take(5)
            .collect::<Vec<_>>()
    );
    let of = |method: &str, live: &str| {
        events["heapsampler.ObjectLifetime"]
            .iter()
            .filter(|l| l.contains(&format!("stackTrace=stack(false:Scenarios.{method}()[B:")))
            .filter(|l| field(l, "live") == live)
            .count()
    };
    assert_eq!((of("keep", "true"), of("drop", "false")), (1000, 1000));
}

/// Every other collector tracks every sample, with probability 1, and
/// says nothing of a share: G1 and JDK 17's ZGC (not generational), and,
/// on Temurin 25, generational Shenandoah, whose young collections clear
/// weak handles.
#[test]
fn other_collectors_track_every_sample_with_probability_one() {
    let java = PathBuf::from("java");
    let mut runs = vec![(java.clone(), "agent_every_g1", vec!["-XX:+UseG1GC"])];
    // The PATH's java is 25 in `.ci/run`'s second pass: its ZGC is
    // generational, tested above.
    match path_java_version() {
        version if version < 21 => runs.push((java, "agent_every_zgc_17", vec!["-XX:+UseZGC"])),
        version => support::say_skipped(format_args!(
            "other_collectors_track_every_sample_with_probability_one: single-generation ZGC \
             skipped: the PATH's java is {version}"
        )),
    }
    if let Some(java) = java_25("other_collectors_track_every_sample_with_probability_one") {
        runs.push((
            java,
            "agent_every_shenandoah",
            vec!["-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational"],
        ));
    }
    for (java, test, jvm_args) in runs {
        let mut jvm_args = jvm_args;
        jvm_args.push("-Xmx512m");
        let (stderr, events) = record_with(
            &java,
            test,
            "interval=64k",
            &jvm_args,
            &["threads", "2", "32"],
        );
        assert!(
            !stderr.contains("a share of the samples"),
            "{test}: {stderr}"
        );
        let lifetimes = tracking_probabilities(test, &events);
        assert!(lifetimes.len() > 500, "{test}: {} samples", lifetimes.len());
        assert!(
            lifetimes.iter().all(|&l| l == (true, 1.0)),
            "{test}: {:?}",
            lifetimes
                .iter()
                .filter(|&&l| l != (true, 1.0))
                .take(5)
                .collect::<Vec<_>>()
        );
    }
}

/// The first frame of an event's stack that is the workload's own:
/// `Scenarios$Paced.leak()V`.
fn workload_site(line: &str) -> &str {
    let stack = field(line, "stackTrace");
    stack
        .trim_start_matches("stack(false:")
        .trim_start_matches("stack(true:")
        .split(';')
        .find(|frame| frame.starts_with("Scenarios"))
        .and_then(|frame| frame.split(':').next())
        .unwrap_or("(none)")
}

#[test]
fn a_leak_is_the_first_site_of_the_old_objects() {
    // 3 s at 24 MiB/s, and a quarter as much again kept
    // (Scenarios.Paced.leak): about 18 MiB live at the end, about 72
    // samples at 256k (a standard deviation of about 8.5). What the
    // other sites allocate dies at once, and the workload ends with
    // System.gc(), so none of it is an old object at the end.
    let (_, events) = record_in(
        "agent_leak_old_objects",
        "interval=256k",
        &["-Xmx64m"],
        &["paced", "3", "24", "leak"],
    );
    let mut sites: std::collections::HashMap<&str, usize> = Default::default();
    for line in &events["jdk.OldObjectSample"] {
        *sites.entry(workload_site(line)).or_default() += 1;
    }
    let mut ranked: Vec<(&str, usize)> = sites.into_iter().collect();
    ranked.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    assert_eq!(ranked[0].0, "Scenarios$Paced.leak()V", "{ranked:?}");
    // Every sampled leaked array is an old object at the end.
    let leaked = |lines: &[String], class: &str| {
        lines
            .iter()
            .filter(|l| workload_site(l) == "Scenarios$Paced.leak()V" && l.contains(class))
            .count()
    };
    let sampled = leaked(
        &events["jdk.ObjectAllocationSample"],
        "objectClass=class([B,",
    );
    // Fewer than 20 would be six standard deviations off.
    assert!(sampled > 20, "{sampled} samples of leaked arrays");
    assert_eq!(
        leaked(&events["jdk.OldObjectSample"], "type=class([B,"),
        sampled
    );
}

/// Runs the `humongous` scenario (2 MiB arrays) with `options` and
/// `jvm_args`; returns the lifetimes of the 2 MiB arrays and the agent's
/// count of untracked objects.
fn humongous_lifetimes(test: &str, options: &str, jvm_args: &[&str]) -> (Vec<String>, String) {
    let file = support::temp_dir(test).join("recording.jfr");
    let options = format!("file={},{options}", file.display());
    let output = scenario(&options, jvm_args, &["humongous", "64"]).output_in_time();
    assert!(
        output.status.success(),
        "{test}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&file);
    assert_complete(&events);
    let arrays: Vec<String> = events["heapsampler.ObjectLifetime"]
        .iter()
        .filter(|l| field(l, "objectSize").parse::<u64>().unwrap() >= 2 << 20)
        .cloned()
        .collect();
    assert!(
        arrays.len() >= 16,
        "{test}: {} arrays sampled",
        arrays.len()
    );
    let last = events["heapsampler.AgentStatistics"].last().unwrap();
    (arrays, field(last, "untrackedObjects").to_owned())
}

/// A weak reference to a G1 humongous object keeps G1 from reclaiming it
/// early, so by default such objects are not tracked (BENCHMARKS.md has
/// the measurements); under another collector, or with `live_max=none`,
/// they are.
#[test]
fn g1_humongous_objects_are_not_tracked_unless_asked() {
    let tracked = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| field(l, "tracked") == "true")
            .count()
    };
    // 1 MiB regions: 2 MiB arrays are humongous.
    let (g1, untracked) =
        humongous_lifetimes("agent_humongous_g1", "", &["-XX:+UseG1GC", "-Xmx256m"]);
    assert_eq!(tracked(&g1), 0, "{g1:#?}");
    assert!(
        g1.iter().all(|l| field(l, "live") == "false"
            && field(l, "duration") == "0"
            && field(l, "freedByGcId") == "0"),
        "{g1:#?}"
    );
    assert_eq!(untracked, g1.len().to_string());
    // 8 MiB regions: humongous from 4 MiB, so 2 MiB arrays are tracked.
    let (big_regions, _) = humongous_lifetimes(
        "agent_humongous_regions",
        "",
        &["-XX:+UseG1GC", "-Xmx256m", "-XX:G1HeapRegionSize=8m"],
    );
    assert_eq!(tracked(&big_regions), big_regions.len());
    let (parallel, untracked) = humongous_lifetimes(
        "agent_humongous_parallel",
        "",
        &["-XX:+UseParallelGC", "-Xmx256m"],
    );
    assert_eq!(tracked(&parallel), parallel.len());
    assert_eq!(untracked, "0");
    let (everything, _) = humongous_lifetimes(
        "agent_humongous_none",
        "live_max=none",
        &["-XX:+UseG1GC", "-Xmx256m"],
    );
    assert_eq!(tracked(&everything), everything.len());
    // Kept reachable to the end: the last 8 arrays are live.
    assert!(
        everything
            .iter()
            .filter(|l| field(l, "live") == "true")
            .count()
            >= 1,
        "{everything:#?}"
    );
    let (explicit, _) = humongous_lifetimes(
        "agent_humongous_explicit",
        "live_max=1m",
        &["-XX:+UseParallelGC"],
    );
    assert_eq!(tracked(&explicit), 0);
}

/// The diagnostic modes (floor: every sample's stack taken; discard: every
/// sample handed to the writer) write no samples: the file holds the
/// agent's count of samples and no sample events.
#[test]
fn diagnostic_modes_count_samples_and_write_none() {
    for mode in ["floor", "discard"] {
        let file = support::temp_dir(&format!("agent_{mode}")).join(format!("{mode}.jfr"));
        let output = scenario(
            &format!("file={},mode={mode},interval=64k", file.display()),
            &[],
            &["threads", "2", "16"],
        )
        .output_in_time();
        assert!(
            output.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let events = events(&file);
        assert_eq!(count(&events, "jdk.ObjectAllocationSample"), 0, "{mode}");
        assert_eq!(count(&events, "heapsampler.ObjectLifetime"), 0, "{mode}");
        let last = events["heapsampler.AgentStatistics"].last().unwrap();
        // 2 threads x 16 MiB at 64 KiB: about 512 samples; 256 would be 11
        // standard deviations short.
        let samples: u64 = field(last, "samples").parse().unwrap();
        assert!(samples > 256, "{mode}: {last}");
        assert_eq!(field(last, "lostSamples"), "0", "{mode}");
    }
}

#[test]
fn samples_carry_each_threads_name() {
    let (_, events) = record("agent_threads", "", &["threads", "8", "16"]);
    for t in 0..8 {
        let name = format!("eventThread=thread(\"worker-{t}\",");
        let n = events["jdk.ObjectAllocationSample"]
            .iter()
            .filter(|l| l.contains(&name))
            .count();
        // 16 MiB at 512 KiB: about 32 samples each; none is e^-32 unlikely.
        assert!(n > 0, "no sample from worker-{t}");
    }
}

#[test]
fn threads_allocating_other_classes_at_one_site_each_get_their_own() {
    // One site, a class per thread: a thread's first guess at the site is
    // another thread's class, and must be checked, not taken.
    let (stdout, events) = record("agent_one_site", "interval=16k", &["one-site", "5", "8"]);
    let workers: Vec<(&str, &str)> = stdout
        .lines()
        .filter(|l| l.starts_with("worker-"))
        .map(|l| l.split_once(' ').unwrap())
        .collect();
    assert_eq!(workers.len(), 5, "{stdout}");
    for &(thread, class) in &workers {
        let name = format!("eventThread=thread(\"{thread}\",");
        let samples: Vec<_> = events["jdk.ObjectAllocationSample"]
            .iter()
            .filter(|l| l.contains(&name))
            .collect();
        let own = format!("objectClass=class({class},");
        // 8 MiB at 16 KiB: about 512 samples each.
        let owned = samples.iter().filter(|l| l.contains(&own)).count();
        assert!(owned > 100, "{thread}: {owned} samples of {class}");
        // Another worker's class would be a guess taken unchecked. The JVM
        // itself now and then allocates something else with the loop's
        // back edge on top (a 24-byte byte[] in one run of six on JDK 25:
        // its size, not only its class, differs from the worker's arrays).
        let others: Vec<_> = samples
            .iter()
            .filter(|l| {
                workers.iter().any(|&(other, other_class)| {
                    other != thread && l.contains(&format!("objectClass=class({other_class},"))
                })
            })
            .collect();
        assert!(
            others.is_empty(),
            "{thread} allocates {class}, no other worker's class: {others:?}"
        );
    }
}

#[test]
fn every_ending_leaves_a_finished_readable_file() {
    let dir = support::temp_dir("agent_endings");
    let cases: [(&str, &[&str], &[&str], i32); 3] = [
        ("exit", &[], &["exit", "3"], 3),
        ("throw", &[], &["throw"], 1),
        ("oom", &["-Xmx64m"], &["oom"], 1),
    ];
    for (name, jvm_args, args, code) in cases {
        let file = dir.join(format!("{name}.jfr"));
        let output = scenario(&format!("file={}", file.display()), jvm_args, args).output_in_time();
        assert_eq!(
            output.status.code(),
            Some(code),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_finished(&file, name);
    }

    // SIGTERM: the JVM shuts down normally, and the agent finishes the file.
    let file = dir.join("sigterm.jfr");
    let child = start_and_wait_for_samples(&file);
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .output_in_time();
    let output = child.wait_with_output();
    assert_eq!(
        output.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_finished(&file, "sigterm");
}

#[test]
fn after_kill_9_the_file_is_readable_up_to_the_last_flush() {
    let dir = support::temp_dir("agent_kill9");
    let file = dir.join("killed.jfr");
    let mut child = start_and_wait_for_samples(&file);
    child.kill().unwrap(); // SIGKILL: no shutdown, no VMDeath
    child.wait().unwrap();
    let summary = support::summary(&file);
    assert!(
        support::summary_count(&summary, "jdk.ObjectAllocationSample") > 0,
        "{summary}"
    );
}

/// Starts the `run` scenario with a 100 ms flush and returns once a flush
/// has put samples in the file.
// The child is returned to the caller, which waits for it (and this function
// kills and reaps it before failing).
fn start_and_wait_for_samples(file: &Path) -> support::Watched {
    let options = format!("file={},flush=100ms", file.display());
    let mut child = scenario(&options, &[], &["run", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_within(support::DEADLINE);
    let deadline = Instant::now() + Duration::from_secs(60);
    // A flushed file with samples holds a checkpoint and the events: wait
    // until the header says the chunk is finished and has grown past the
    // metadata.
    loop {
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no flush with samples within a minute");
        }
        let flushed = std::fs::read(file)
            .ok()
            .and_then(|bytes| jfr_format::ChunkHeader::decode(&bytes))
            .is_some_and(|header| header.generation == 0 && header.chunk_size > 16 * 1024);
        if flushed {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_finished(file: &Path, name: &str) {
    assert!(support::is_finished(file), "{name}: not finished");
    let events = events(file);
    assert_complete(&events);
}

/// The newest JDK of version 21 or later under /usr/lib/jvm, if any.
fn newer_jdk() -> Option<(u32, PathBuf)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/usr/lib/jvm").ok()?.flatten() {
        let home = entry.path();
        let Ok(release) = std::fs::read_to_string(home.join("release")) else {
            continue;
        };
        let major = release
            .lines()
            .find_map(|l| l.strip_prefix("JAVA_VERSION=\""))
            .and_then(|v| v.split(['.', '"']).next()?.parse::<u32>().ok());
        if let Some(major) = major.filter(|&m| m >= 21)
            && home.join("bin/java").exists()
        {
            found.push((major, home));
        }
    }
    found.into_iter().max()
}

#[test]
fn virtual_threads_on_a_newer_jdk_are_sampled_as_themselves() {
    let Some((major, home)) = newer_jdk() else {
        support::say_skipped(format_args!(
            "virtual_threads_on_a_newer_jdk_are_sampled_as_themselves: skipped: no JDK 21 or \
             later under /usr/lib/jvm"
        ));
        return;
    };
    let dir = support::temp_dir("agent_virtual_threads");
    let file = dir.join("virtual.jfr");
    let output = Command::new(home.join("bin/java"))
        .arg(format!(
            "-agentpath:{}=file={},interval=64k",
            agent().display(),
            file.display()
        ))
        .arg(workload("VirtualThreads.java"))
        .arg("200")
        .output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "JDK {major}: {stderr}");
    // Read with the newer JDK's own parser too.
    let summary = Command::new(home.join("bin/jfr"))
        .arg("summary")
        .arg(&file)
        .output_in_time();
    assert!(
        summary.status.success(),
        "JDK {major} jfr summary: {}",
        String::from_utf8_lossy(&summary.stderr)
    );
    let events = events(&file);
    assert_complete(&events);
    // 200 virtual threads each allocating about 8 MB: at 64 KiB nearly all
    // are sampled, and each sample names its own (unnamed) virtual thread.
    let ids: std::collections::HashSet<&str> = events["jdk.ObjectAllocationSample"]
        .iter()
        .filter(|l| l.contains("VirtualThreads.work()J:"))
        .map(|l| {
            l.split("eventThread=thread(\"\",")
                .nth(1)
                .unwrap_or("")
                .split(',')
                .next()
                .unwrap()
        })
        .collect();
    assert!(
        ids.len() > 150,
        "JDK {major}: samples from {} distinct virtual threads",
        ids.len()
    );
}

#[test]
fn the_thread_filter_samples_only_matching_threads() {
    let (_, events) = record(
        "agent_thread_filter",
        "threads=worker-[02]",
        &["threads", "4", "16"],
    );
    let mut per_thread = std::collections::BTreeMap::<String, usize>::new();
    for line in &events["jdk.ObjectAllocationSample"] {
        let name = line
            .split("eventThread=thread(\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        *per_thread.entry(name.to_owned()).or_default() += 1;
    }
    // 16 MiB each at 512 KiB: about 32 samples for each matching worker
    // (none would be e^-32 unlikely), and none from any other thread.
    let names: Vec<&String> = per_thread.keys().collect();
    assert_eq!(names, ["worker-0", "worker-2"], "{per_thread:?}");
}

fn jcmd_load(pid: u32, options: &str) -> String {
    // jcmd's own parser would take `file=...` as its argument: quote it.
    let output = Command::new("jcmd")
        .arg(pid.to_string())
        .arg("JVMTI.agent_load")
        .arg(agent())
        .arg(format!("\"{options}\""))
        .output_in_time();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn epoch_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

#[test]
fn attach_stop_and_attach_again_while_threads_allocate() {
    let dir = support::temp_dir("agent_attach");
    let (mut child, pid) = allocating_without_agent();

    // Refused attaches leave the JVM running and the next attach working.
    assert!(jcmd_load(pid, "bogus=1").contains("return code: -1"));
    assert!(
        jcmd_load(pid, "stop").contains("return code: -1"),
        "nothing to stop yet"
    );

    let mut windows = Vec::new();
    for round in 0..3 {
        let file = dir.join(format!("window-{round}.jfr"));
        let before = epoch_nanos();
        assert!(
            jcmd_load(pid, &format!("file={},flush=100ms", file.display()))
                .contains("return code: 0")
        );
        assert!(
            jcmd_load(pid, "file=other.jfr").contains("return code: -1"),
            "one recording at a time"
        );
        std::thread::sleep(Duration::from_millis(300));
        assert!(jcmd_load(pid, "stop").contains("return code: 0"));
        windows.push((file, before, epoch_nanos()));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    for (file, start, end) in windows {
        let events = events(&file);
        assert_complete(&events);
        for line in &events["jdk.ObjectAllocationSample"] {
            let at: i64 = field(line, "startTime").parse().unwrap();
            assert!(
                (start..=end).contains(&at),
                "{}: a sample at {at} outside [{start}, {end}]",
                file.display()
            );
        }
    }
}

/// Waits up to a minute (generous, for a busy machine) until `file` is a
/// finished recording, or the JVM `child` has died.
fn wait_until_finished(file: &Path, child: &mut support::Watched) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if support::is_finished(file) {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the JVM died while {} was recorded",
            file.display()
        );
        assert!(
            Instant::now() < deadline,
            "{} not finished within a minute",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_duration_stops_the_recording_by_itself_and_the_agent_attaches_again() {
    let dir = support::temp_dir("agent_duration");
    let stderr = dir.join("jvm.stderr");
    let from_start = dir.join("from-start.jfr");
    // From the JVM's start, with -agentpath.
    let mut child = scenario(
        &format!("file={},duration=2s,flush=100ms", from_start.display()),
        &[],
        &["run", "120", "4"],
    )
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(&stderr).unwrap())
    .spawn_within(support::DEADLINE);
    let pid = child.id();
    // The JVM is killed and what it said shown, however the checks end.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until_finished(&from_start, &mut child);
        assert!(
            jcmd_load(pid, "stop").contains("return code: -1"),
            "no recording runs after its duration"
        );
        // Attached, for a duration: stops by itself again.
        let attached = dir.join("attached.jfr");
        assert!(
            jcmd_load(pid, &format!("file={},duration=1s", attached.display()))
                .contains("return code: 0")
        );
        wait_until_finished(&attached, &mut child);
        // Attached, stopped before its duration.
        let stopped = dir.join("stopped.jfr");
        assert!(
            jcmd_load(pid, &format!("file={},duration=1h", stopped.display()))
                .contains("return code: 0")
        );
        std::thread::sleep(Duration::from_millis(300));
        assert!(jcmd_load(pid, "stop").contains("return code: 0"));
        assert!(child.try_wait().unwrap().is_none(), "the JVM runs on");
        for file in [&from_start, &attached, &stopped] {
            assert_finished(file, &file.display().to_string());
        }
    }));
    let _ = child.kill();
    let _ = child.wait();
    if let Err(panic) = outcome {
        eprintln!(
            "the JVM's stderr:\n{}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
        std::panic::resume_unwind(panic);
    }
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert_eq!(
        said.matches("the recording's duration is over; stopping")
            .count(),
        2,
        "{said}"
    );
}

/// Runs `System.gc()` in the JVM `pid`.
fn jcmd_gc(pid: u32) {
    let output = Command::new("jcmd")
        .arg(pid.to_string())
        .arg("GC.run")
        .output_in_time();
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_collection_between_two_attaches_is_in_neither_recording() {
    let dir = support::temp_dir("agent_attach_gc_gap");
    let (mut child, pid) = allocating_without_agent();

    let mut windows = Vec::new();
    for round in 0..2 {
        // Between the recordings (and before the first): a collection
        // that belongs to neither.
        jcmd_gc(pid);
        let file = dir.join(format!("window-{round}.jfr"));
        let before = epoch_nanos();
        assert!(
            jcmd_load(pid, &format!("file={},flush=100ms", file.display()))
                .contains("return code: 0")
        );
        std::thread::sleep(Duration::from_millis(200));
        // And one for the recording, whatever the workload's own.
        jcmd_gc(pid);
        std::thread::sleep(Duration::from_millis(100));
        assert!(jcmd_load(pid, "stop").contains("return code: 0"));
        windows.push((file, before, epoch_nanos()));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    for (file, start, end) in windows {
        let events = events(&file);
        assert_complete(&events);
        let collections = &events["heapsampler.GarbageCollection"];
        for line in collections {
            let at: i64 = field(line, "startTime").parse().unwrap();
            assert!(
                (start..=end).contains(&at),
                "{}: a collection at {at} outside [{start}, {end}]: {line}",
                file.display()
            );
        }
        // Numbered 1, 2, ... in the order seen, none from another session.
        let ids: Vec<u64> = collections
            .iter()
            .map(|line| field(line, "gcId").parse().unwrap())
            .collect();
        assert_eq!(
            ids,
            (1..=ids.len() as u64).collect::<Vec<_>>(),
            "{}",
            file.display()
        );
        for line in &events["heapsampler.ObjectLifetime"] {
            let freed_by: u64 = field(line, "freedByGcId").parse().unwrap();
            assert!(freed_by <= ids.len() as u64, "{line}");
        }
        // The JVM's own account of the collections (its management
        // interface's) likewise has none from before the attach, though
        // the JVM reports the earlier ones to whoever asks.
        let reported = &events["jdk.GarbageCollection"];
        assert!(!reported.is_empty(), "{}", file.display());
        for line in reported {
            let at: i64 = field(line, "startTime").parse().unwrap();
            assert!(
                (start..=end).contains(&at),
                "{}: a collection at {at} outside [{start}, {end}]: {line}",
                file.display()
            );
        }
        assert_eq!(count(&events, "jdk.JVMInformation"), 1);
    }
}

/// Starts the scenario without the agent, stdout piped.
// The caller kills and waits for the child.
/// A JVM whose 8 threads allocate for up to a minute, without the agent,
/// once it says it is ready; and its pid.
fn allocating_without_agent() -> (support::Watched, u32) {
    use std::io::BufRead;
    let mut child = scenario_without_agent(&["run", "60", "8"]);
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let pid = child.id();
    (child, pid)
}

fn scenario_without_agent(args: &[&str]) -> support::Watched {
    Command::new("java")
        .arg("-cp")
        .arg(classes())
        .arg("Scenarios")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_within(support::DEADLINE)
}

/// Every sample, lifetime and old object names its stack, thread and class
/// as the JDK's parser reads it: none refers to a constant its chunk lacks
/// (the parser reads such a key as null).
fn assert_no_dangling_constants(events: &Events) {
    for (name, fields) in [
        (
            "jdk.ObjectAllocationSample",
            &["stackTrace", "eventThread", "objectClass"][..],
        ),
        (
            "heapsampler.ObjectLifetime",
            &["stackTrace", "eventThread", "objectClass"],
        ),
        (
            "jdk.OldObjectSample",
            &["stackTrace", "eventThread", "object"],
        ),
    ] {
        for line in events.get(name).into_iter().flatten() {
            for field in fields {
                assert!(!line.contains(&format!(" {field}=null")), "{line}");
            }
        }
    }
}

#[test]
fn classes_unloaded_while_their_samples_are_queued_do_not_crash() {
    // One-second chunks: each chunk's end drops the methods of the guest
    // classes unloaded since, and a new guest's are resolved afresh. A
    // class unloaded before the writer described it is named
    // `unknown.UnloadedClass`, as its frames are.
    let (stdout, events) = record(
        "agent_unload",
        "interval=16k,chunk_age=1s,flush=100ms",
        &["unload", "30", "100"],
    );
    let unloaded: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("unloaded "))
        .expect("the workload reports unloading")
        .parse()
        .unwrap();
    assert!(unloaded > 0, "the JVM must really have unloaded classes");
    // Each round allocates about 20 MB in Guest.allocate: its frames are
    // in the recording, resolved while the class was alive or, if not,
    // shown as an unloaded class's method.
    let guest = events["jdk.ObjectAllocationSample"]
        .iter()
        .filter(|l| {
            l.contains("Scenarios$Guest.allocate(I)J:") || l.contains("unknown.UnloadedClass")
        })
        .count();
    assert!(guest > 100, "{guest} samples from the guest classes");
    // Each guest allocates arrays of its own class, unloaded with it: the
    // agent's guess of a site's class is checked against the class and its
    // references retired while allocation goes on. A wrong guess, or a
    // reference deleted under a callback, would name another class here.
    // The one other class the site allocates: its first `new Guest[]`
    // creates the array class, whose `java.lang.Class` mirror the JVM
    // allocates (and may sample) there.
    let guest_arrays = events["jdk.ObjectAllocationSample"]
        .iter()
        .filter(|l| l.contains("Scenarios$Guest.allocate(I)J:"))
        .filter(|l| !l.contains("objectClass=class(java.lang.Class,"))
        .inspect(|l| {
            assert!(
                l.contains("objectClass=class([LScenarios$Guest;,")
                    || l.contains("objectClass=class(unknown.UnloadedClass,"),
                "{l}"
            )
        })
        .count();
    assert!(guest_arrays > 100, "{guest_arrays} samples of guest arrays");
    assert_no_dangling_constants(&events);
    let chunks = events["jdk.JVMInformation"].len();
    assert!(chunks >= 2, "{chunks} chunks");
}

#[test]
fn sample_counts_and_weights_match_the_bytes_the_jvm_counted() {
    let dir = support::temp_dir("agent_stat_rate");
    for (interval, mib) in [(1024u64, 32u64), (8192, 128)] {
        let file = dir.join(format!("rate-{interval}.jfr"));
        let options = format!("file={},interval={interval},live=false", file.display());
        let output = scenario(&options, &[], &["measured", &mib.to_string()]).output_in_time();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let counted: f64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("allocated "))
            .unwrap()
            .parse()
            .unwrap();
        let events = events(&file);
        let ours: Vec<&String> = events["jdk.ObjectAllocationSample"]
            .iter()
            .filter(|l| l.contains("eventThread=thread(\"measured\","))
            .collect();
        // About 32,000 and 16,000 samples of objects far smaller than the
        // interval, so the count is Poisson with mean bytes/interval (0.6%
        // and 0.8% standard deviation: 10% is far out) and the weights'
        // relative standard deviation about the same (5% is six of them).
        let expected = counted / interval as f64;
        let count_error = (ours.len() as f64 - expected) / expected;
        assert!(
            count_error.abs() < 0.10,
            "interval {interval}: {} samples, expected {expected:.0}",
            ours.len()
        );
        let weights: f64 = ours
            .iter()
            .map(|l| field(l, "weight").parse::<f64>().unwrap())
            .sum();
        let weight_error = (weights - counted) / counted;
        assert!(
            weight_error.abs() < 0.05,
            "interval {interval}: weights {weights} vs {counted} counted by the JVM"
        );
    }
}

/// With `hidden=true` the lambda proxy's frame (a hidden class) is kept
/// between the lambda's body and `Thread.run`, its method and class marked
/// hidden, as the JDK's parser reads them. (Left out by default: the
/// command line's test `recordings_leave_lambda_proxies_out_...`.)
#[test]
fn hidden_true_keeps_lambda_proxy_frames_marked_hidden() {
    let dir = support::temp_dir("agent_hidden_frames");
    let file = dir.join("mix.jfr");
    let output = java(
        &format!("file={},interval=64k,hidden=true", file.display()),
        "AllocationMix.java",
        &["1", "2"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document = support::print_json(&file);
    let mut proxies = 0;
    for sample in support::json_events(&document)
        .iter()
        .filter(|e| e["type"] == "jdk.ObjectAllocationSample")
    {
        let frames = sample["values"]["stackTrace"]["frames"]
            .as_array()
            .expect("frames");
        for frame in frames {
            let method = &frame["method"];
            let class = method["type"]["name"].as_str().unwrap();
            // The JVM names a hidden class `Name.<suffix>`: internal names
            // have no other '.' (lambda forms are hidden too).
            let hidden = class.contains('.');
            if class.contains("$$Lambda") {
                assert!(hidden, "{class}");
                proxies += 1;
            }
            assert_eq!(method["hidden"], hidden, "{class}");
            assert_eq!(method["type"]["hidden"], hidden, "{class}");
        }
    }
    assert!(proxies > 0, "the workers' lambda proxy was sampled");
}

/// The heap's context from the JVM's management interface: a workload
/// that keeps 16 MiB more at each step and calls System.gc() after each
/// finds, in the recording, that collection with the heap it printed.
#[test]
fn heap_summaries_after_each_collection_match_the_heap_the_workload_saw() {
    let file = support::temp_dir("agent_heap_context").join("heap.jfr");
    let options = format!("file={}", file.display());
    let child = scenario(
        &options,
        &["-Xmx256m", "-XX:+UseG1GC"],
        &["heap", "5", "16"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn_within(support::DEADLINE);
    let pid = child.id();
    let output = child.wait_with_output();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&file);
    assert_complete(&events);
    let collectors: Vec<&str> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("collectors "))
        .unwrap()
        .split(',')
        .collect();
    let collections = &events["jdk.GarbageCollection"];
    let summaries = &events["jdk.GCHeapSummary"];
    // Named as the JDK names its collectors' collections; one gcId
    // sequence, each with one summary before and one after.
    // The collectors of collections: not JDK 21+'s "G1 Concurrent GC",
    // whose notifications are of pauses.
    let jdk_name = |collector: &str| match collector_kind(collector) {
        CollectorKind::Young(name) | CollectorKind::Old(name) => Some(name),
        _ => None,
    };
    for line in collections {
        let name = support::dump_value(line, "name");
        assert!(
            collectors
                .iter()
                .any(|c| jdk_name(c) == Some(name.as_str())),
            "{name} of {collectors:?}"
        );
    }
    let ids: Vec<u64> = collections
        .iter()
        .map(|l| field(l, "gcId").parse().unwrap())
        .collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert_eq!(summaries.len(), 2 * ids.len());
    let summary = |gc_id: &str, when: &str| -> u64 {
        let found: Vec<&String> = summaries
            .iter()
            .filter(|l| field(l, "gcId") == gc_id && support::dump_value(l, "when") == when)
            .collect();
        assert_eq!(found.len(), 1, "gcId {gc_id} {when}: {found:#?}");
        field(found[0], "heapUsed").parse().unwrap()
    };

    let mut previous = 0;
    let steps: Vec<&str> = stdout.lines().filter(|l| l.starts_with("step ")).collect();
    assert_eq!(steps.len(), 5, "{stdout}");
    for step in steps {
        // step N used BYTES gc EPOCH_MS NAME
        let words: Vec<&str> = step.splitn(7, ' ').collect();
        let used: u64 = words[3].parse().unwrap();
        let at = words[5].parse::<i64>().unwrap() * 1_000_000;
        let collector = words[6];
        // The collection is placed at the JVM's own time for it (its
        // start, in ms since the JVM's start), so it is found exactly, by
        // its collector: on JDK 25 a concurrent cycle ("G1 Concurrent GC")
        // may start in the same millisecond.
        let collection = collections
            .iter()
            .find(|l| {
                field(l, "startTime") == at.to_string()
                    && Some(support::dump_value(l, "name").as_str()) == jdk_name(collector)
            })
            .unwrap_or_else(|| {
                panic!("{step}: no {collector} collection at {at} in {collections:#?}")
            });
        let gc_id = field(collection, "gcId");
        let after = summary(gc_id, "After GC");
        assert!(summary(gc_id, "Before GC") > 0);
        // The workload read the heap right after the collection; what was
        // allocated in between is the difference. G1 counts a thread's
        // TLAB as used in whole once handed out, and caps TLABs at half a
        // region (512 KiB with this heap's 1 MiB regions); the threads
        // that may allocate between the collection's end and the read are
        // the main thread (between System.gc()'s return and the read:
        // nothing), the agent's writer (its polls build GcInfo objects)
        // and the JDK's reference-processing threads (Reference Handler,
        // Finalizer, Common-Cleaner): at most 4 TLABs, 2 MiB, an eighth of
        // a step.
        let tolerance = 2 << 20;
        assert!(
            after.abs_diff(used) <= tolerance,
            "{step}: after GC {after} bytes in the recording, {used} seen by the workload"
        );
        // And the heap grows as the workload keeps more: 16 MiB a step.
        assert!(
            after > previous + (12 << 20),
            "{step}: {after} after {previous}"
        );
        previous = after;
    }

    let information = &events["jdk.JVMInformation"];
    assert_eq!(information.len(), 1, "{information:#?}");
    let jvm = &information[0];
    let arguments = support::dump_value(jvm, "jvmArguments");
    assert!(
        arguments.contains(&format!("-agentpath:{}=file=", agent().display()))
            && arguments.contains("-Xmx256m"),
        "{jvm}"
    );
    assert_eq!(
        support::dump_value(jvm, "javaArguments"),
        "Scenarios heap 5 16"
    );
    assert!(
        support::dump_value(jvm, "jvmVersion").contains(" JRE ("),
        "{jvm}"
    );
    assert_eq!(field(jvm, "pid"), pid.to_string(), "{jvm}");
    let classes = &events["jdk.ClassLoadingStatistics"];
    assert!(!classes.is_empty());
    let loaded: u64 = field(classes.last().unwrap(), "loadedClassCount")
        .parse()
        .unwrap();
    assert!(loaded > 400, "{}", classes.last().unwrap());
}

/// A runtime linked without the management modules (jlink) records as
/// before, only without the events they give, and the agent says why at
/// log level debug: without java.management there is no JVM information
/// either, without jdk.management (com.sun.management's GcInfo) no GC or
/// heap events.
#[test]
fn a_runtime_without_the_management_modules_records_without_their_events() {
    let dir = support::temp_dir("agent_jlinked");
    let cases = [
        ("java.base", "java.management", 0),
        ("java.base,java.management", "jdk.management", 1),
    ];
    for (modules, missing, jvm_information) in cases {
        let image = dir.join(modules.replace(',', "+"));
        let linked = Command::new("jlink")
            .args(["--add-modules", modules, "--output"])
            .arg(&image)
            .output_in_time();
        assert!(
            linked.status.success(),
            "jlink {modules}: {}",
            String::from_utf8_lossy(&linked.stderr)
        );
        let file = dir.join(format!("{}.jfr", modules.replace(',', "+")));
        let output = Command::new(image.join("bin/java"))
            .arg(format!(
                "-agentpath:{}=file={},log=debug",
                agent().display(),
                file.display()
            ))
            .arg("-Xmx32m")
            .arg("-cp")
            .arg(support::compiled_workload("KnownAllocations"))
            .args(["KnownAllocations", "2", "32"])
            .output_in_time();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{modules}: {stderr}");
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("heapsampler: no GC") && l.contains(missing)),
            "{modules}: {stderr}"
        );
        let events = events(&file);
        assert_complete(&events);
        assert!(
            count(&events, "heapsampler.GarbageCollection") > 0,
            "{modules}: the JVM collected"
        );
        assert_eq!(count(&events, "jdk.GarbageCollection"), 0, "{modules}");
        assert_eq!(count(&events, "jdk.GCHeapSummary"), 0, "{modules}");
        assert_eq!(
            count(&events, "jdk.JVMInformation"),
            jvm_information,
            "{modules}"
        );
        assert_eq!(
            count(&events, "jdk.ClassLoadingStatistics") > 0,
            jvm_information > 0,
            "{modules}"
        );
    }
}

/// Runs `GcRoots 4` (testdata/workloads/GcRoots.java) with `java` under the
/// agent with `roots=true`; returns the paths of the recording's
/// `jdk.OldObjectSample` events as the JDK's parser reads them (see
/// [`old_object_path`]), by the external name of the kept object's class,
/// and the agent's summary of the walk.
fn paths_to_roots(test: &str, java: &Path) -> (Vec<(String, String)>, String) {
    let file = support::temp_dir(test).join("roots.jfr");
    // The kept arrays are 400 KB: at a 16 KiB interval each is sampled
    // with probability 1 - exp(-24), and, below G1's humongous size (half
    // a 1 MiB region at -Xmx512m), tracked.
    let output = Command::new(java)
        .arg(format!(
            "-agentpath:{}=file={},interval=16k,roots=true",
            agent().display(),
            file.display()
        ))
        .arg("-Xmx512m")
        .arg("-cp")
        .arg(support::compiled_workload("GcRoots"))
        .arg("GcRoots")
        .arg("4")
        .output_in_time();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("ready"),
        "{test}: {stdout}\n{stderr}"
    );
    // The recording is whole as ever.
    assert_complete(&events(&file));
    let document = support::print_json(&file);
    let paths = support::json_events(&document)
        .iter()
        .filter(|e| e["type"] == "jdk.OldObjectSample" && !e["values"]["root"].is_null())
        .map(|e| old_object_path(&e["values"]))
        .collect();
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("heapsampler: paths to roots: "))
        .unwrap_or_else(|| panic!("{test}: no summary of the walk:\n{stderr}"))
        .to_owned();
    (paths, summary)
}

/// A class's name in `jdk.types.OldObject` (`[Ljava/util/HashMap$Node;`)
/// the Java way: `java.util.HashMap$Node[]`.
fn external(internal: &str) -> String {
    let dims = internal.chars().take_while(|&c| c == '[').count();
    let element = &internal[dims..];
    let element = element
        .strip_prefix('L')
        .and_then(|e| e.strip_suffix(';'))
        .unwrap_or(element);
    format!("{}{}", element.replace('/', "."), "[]".repeat(dims))
}

/// An old object's class and its path as the agent's debug log writes
/// one: `value : java.util.HashMap$Node <- [3] : java.util.HashMap$Node[16]
/// <- ... <- root: Class Loader Data, <unknown>`.
fn old_object_path(values: &serde_json::Value) -> (String, String) {
    let object = &values["object"];
    let class = external(object["type"]["name"].as_str().unwrap());
    let mut links = Vec::new();
    let mut referrer = &object["referrer"];
    while !referrer.is_null() {
        let holder = &referrer["object"];
        let mut class = external(holder["type"]["name"].as_str().unwrap());
        let place = if !referrer["field"].is_null() {
            referrer["field"]["name"].as_str().unwrap().to_owned()
        } else if !referrer["array"].is_null() {
            let array = &referrer["array"];
            class = format!("{}[{}]", class.trim_end_matches("[]"), array["size"]);
            format!("[{}]", array["index"])
        } else {
            "?".to_owned()
        };
        let mut link = format!("{place} : {class}");
        if let Some(description) = holder["description"].as_str() {
            link = format!("{link} {description}");
        }
        links.push(link);
        referrer = &holder["referrer"];
    }
    let root = &values["root"];
    let mut root_text = format!(
        "root: {}, {}",
        root["system"].as_str().unwrap(),
        root["type"].as_str().unwrap()
    );
    if let Some(description) = root["description"].as_str() {
        root_text = format!("{root_text}, {description}");
    }
    links.push(root_text);
    (class, links.join(" <- "))
}

/// The paths of the objects GcRoots keeps in a static map, a thread-local
/// and a parked thread's local variable: each root named as the JDK's leak
/// profiler names it, each chain as `jfr print` shows the JDK's.
fn assert_gc_roots_paths(jdk: &str, paths: &[(String, String)], summary: &str) {
    let of = |class: &str| -> Vec<&str> {
        paths
            .iter()
            .filter(|(c, _)| c == class)
            .map(|(_, p)| p.as_str())
            .collect()
    };
    // The map's four values, each at its own index of the 16-slot table.
    let in_map = of("GcRoots$InStaticMap[]");
    assert_eq!(in_map.len(), 4, "{jdk}: {paths:#?}");
    let mut slots = std::collections::HashSet::new();
    for path in in_map {
        let (slot, rest) = path
            .strip_prefix("value : java.util.HashMap$Node <- [")
            .and_then(|p| p.split_once(']'))
            .unwrap_or_else(|| panic!("{jdk}: {path}"));
        assert_eq!(
            rest,
            " : java.util.HashMap$Node[16] <- table : java.util.HashMap \
             <- MAP : java.lang.Class Class Name: GcRoots <- root: Class Loader Data, <unknown>",
            "{jdk}"
        );
        assert!(slots.insert(slot.parse::<u32>().unwrap()), "{jdk}: {path}");
    }
    let in_thread_local = of("GcRoots$InThreadLocal[]");
    assert_eq!(in_thread_local.len(), 1, "{jdk}: {paths:#?}");
    let (_, rest) = in_thread_local[0]
        .strip_prefix("value : java.lang.ThreadLocal$ThreadLocalMap$Entry <- [")
        .and_then(|p| p.split_once(']'))
        .unwrap_or_else(|| panic!("{jdk}: {}", in_thread_local[0]));
    assert_eq!(
        rest,
        " : java.lang.ThreadLocal$ThreadLocalMap$Entry[16] \
         <- table : java.lang.ThreadLocal$ThreadLocalMap \
         <- threadLocals : java.lang.Thread Thread Name: thread-local-holder \
         <- root: Threads, Global Object Handle, Thread Name: thread-local-holder",
        "{jdk}"
    );
    assert_eq!(
        of("GcRoots$OnStack[]"),
        ["root: Threads, Stack Variable, Thread Name: stack-holder"],
        "{jdk}"
    );
    // "paths to roots: N of M objects in X ms, V objects visited (...)"
    let counts: Vec<u64> = summary
        .trim_start_matches("heapsampler: paths to roots: ")
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(counts[0] as usize, paths.len(), "{jdk}: {summary}");
    assert!(counts[0] >= 6 && counts[0] <= counts[1], "{jdk}: {summary}");
    assert!(counts[3] > 1000, "{jdk}: objects visited: {summary}");
}

#[test]
fn roots_true_finds_the_paths_of_objects_in_a_static_map_a_thread_local_and_a_stack() {
    let (paths, summary) = paths_to_roots("agent_roots", Path::new("java"));
    assert_gc_roots_paths("JDK 17", &paths, &summary);
}

#[test]
fn roots_true_finds_the_same_paths_on_a_newer_jdk() {
    let Some((major, home)) = newer_jdk() else {
        support::say_skipped(format_args!(
            "roots_true_finds_the_same_paths_on_a_newer_jdk: skipped: no JDK 21 or later under \
             /usr/lib/jvm"
        ));
        return;
    };
    let (paths, summary) = paths_to_roots("agent_roots_newer", &home.join("bin/java"));
    assert_gc_roots_paths(&format!("JDK {major}"), &paths, &summary);
}

#[test]
fn pools_stop_growing_when_stacks_never_repeat_and_threads_come_and_go() {
    // The soak benchmark in miniature (bench/soak.sh): stacks that never
    // repeat and short-lived threads (virtual ones on JDK 21+), one-second
    // chunks. Each chunk's end drops what the ended chunk and the new one
    // did not use, so what the pools hold follows the last two chunks, not
    // the recording's whole past.
    const SECONDS: i64 = 14;
    let file = support::temp_dir("agent_soak").join("soak.jfr");
    let output = Command::new("java")
        .arg(format!(
            "-agentpath:{}=file={},interval=32k,chunk_age=1s,flush=250ms",
            agent().display(),
            file.display()
        ))
        // A small heap: collections every second or two free the sampled
        // objects, and with them the stacks they hold.
        .args(["-Xms64m", "-Xmx64m", "-cp"])
        .arg(support::compiled_workload("Soak"))
        .args(["Soak", &SECONDS.to_string(), "2000", "100", "64"])
        .output_in_time();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_no_dangling_constants(&events(&file));
    let threads: usize = stdout
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no thread count in {stdout:?}"));
    // (time, samples, objects tracked, stack traces held, threads held)
    let statistics: Vec<(i64, i64, i64, i64, i64)> =
        support::dump_types(&file, &["heapsampler.AgentStatistics"])
            .iter()
            .map(|line| {
                let number = |name| field(line, name).parse::<i64>().unwrap();
                (
                    number("startTime"),
                    number("samples"),
                    number("trackedObjects"),
                    number("stackTracesHeld"),
                    number("threadsHeld"),
                )
            })
            .collect();
    let (first, last) = (statistics[0], *statistics.last().unwrap());
    assert!(
        last.0 - first.0 > (SECONDS - 2) * 1_000_000_000,
        "{} statistics over {} ms",
        statistics.len(),
        (last.0 - first.0) / 1_000_000
    );
    // A chunk ends at the first flush a second after it began: two chunks
    // span at most 2.5 s. The stacks held are those the events of the last
    // two chunks used (samples, and the lifetimes and old objects of the
    // objects tracked then) and those the objects tracked now hold: at most
    // the stacks of the samples of the last 6 s and of the objects tracked
    // 6 s ago. The 3.5 s more allow for the writer's lag behind the
    // callbacks, which count samples as they are taken (a burst of new
    // virtual threads on a busy machine). Without drops the stacks held
    // would be almost every sample's.
    const WINDOW: i64 = 6_000_000_000;
    for &(at, samples, _, stacks_held, _) in &statistics {
        let Some(&(_, samples_before, tracked_before, ..)) =
            statistics.iter().rev().find(|s| s.0 <= at - WINDOW)
        else {
            continue;
        };
        let recent = samples - samples_before;
        assert!(
            stacks_held <= recent + tracked_before + 16,
            "at {} ms: {stacks_held} stack traces held; {recent} samples in the last 6 s, \
             {tracked_before} objects tracked 6 s before",
            (at - first.0) / 1_000_000
        );
    }
    assert!(
        last.3 * 3 < last.1,
        "{} of {} samples' stacks still held",
        last.3,
        last.1
    );
    // Each short-lived thread takes 64 paths (about 64 KiB, 2 samples at
    // 32k): most are sampled, about 4 in 14 within the last two chunks.
    assert!(
        (last.4 as usize) * 2 < threads,
        "{} threads held of {threads} started",
        last.4
    );
}

/// The `thread=thread(...)` (or `eventThread=`) value of a dumped event.
fn thread_value<'a>(line: &'a str, field_name: &str) -> &'a str {
    let start = line
        .find(&format!(" {field_name}=thread("))
        .unwrap_or_else(|| panic!("no {field_name} in {line}"))
        + field_name.len()
        + 2;
    let end = start + line[start..].find(')').unwrap() + 1;
    &line[start..end]
}

#[test]
fn thread_allocation_statistics_are_the_jvms_count_on_the_samples_thread() {
    let dir = support::temp_dir("agent_thread_allocations");
    let (ours, jdks) = (dir.join("ours.jfr"), dir.join("jdk.jfr"));
    // The thread allocates 64 MiB, then stays alive (parked) until the JVM
    // exits: both recorders read its count at their ends, after it
    // stopped allocating.
    let output = scenario(
        &format!("file={}", ours.display()),
        &[&format!(
            "-XX:StartFlightRecording:filename={}",
            jdks.display()
        )],
        &["measured", "64", "stay"],
    )
    .output_in_time();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let counted: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("allocated "))
        .unwrap()
        .parse()
        .unwrap();
    let statistics = |file: &Path| -> Vec<String> {
        support::dump_types(file, &["jdk.ThreadAllocationStatistics"])
            .into_iter()
            .filter(|l| l.contains(" thread=thread(\"measured\","))
            .collect()
    };
    let (our_statistics, jdk_statistics) = (statistics(&ours), statistics(&jdks));
    let (ours_last, jdk_last) = (
        our_statistics
            .last()
            .expect("no statistics of \"measured\""),
        jdk_statistics.last().expect("the JDK wrote none"),
    );
    let allocated: u64 = field(ours_last, "allocated").parse().unwrap();
    // The workload counted its loop alone; the thread's count also has its
    // start and the count's own reads: a few KiB. 256 KiB is far out.
    assert!(
        (counted..counted + (256 << 10)).contains(&allocated),
        "the JVM counted {allocated} bytes for the thread, the workload {counted}"
    );
    assert_eq!(
        allocated.to_string(),
        field(jdk_last, "allocated"),
        "ours: {ours_last}\nthe JDK's: {jdk_last}"
    );

    // The thread is the samples' constant: same name, Java id and OS id.
    let samples = support::dump_types(&ours, &["jdk.ObjectAllocationSample"]);
    let sampled = samples
        .iter()
        .find(|l| l.contains(" eventThread=thread(\"measured\","))
        .expect("no sample of \"measured\"");
    assert_eq!(
        thread_value(ours_last, "thread"),
        thread_value(sampled, "eventThread")
    );
    // And the JDK's own thread has the same Java thread id.
    let java_id = |thread: &str| thread.split(',').nth(1).unwrap().to_owned();
    assert_eq!(
        java_id(thread_value(ours_last, "thread")),
        java_id(thread_value(jdk_last, "thread"))
    );
}
