//! The agent in real JVMs (the JDK 17 on PATH): recordings checked with the
//! JDK's own parser.

#[path = "../../jfr-writer/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `libheapsampler.so`, built by cargo next to this test's directory.
fn agent() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let candidates = [
        deps.parent().unwrap().join("libheapsampler.so"),
        deps.join("libheapsampler.so"),
    ];
    candidates
        .into_iter()
        .find(|p| p.exists())
        .expect("cargo builds libheapsampler.so with the tests")
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
        .output()
        .expect("java runs")
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
    let statistics = of("heapsampler.AgentStatistics ");
    let last = statistics.last().expect("statistics at the end");
    assert_eq!(field(last, "samples"), samples.len().to_string(), "{last}");
    assert_eq!(field(last, "lostSamples"), "0");

    // The workload's own arrays: the top frame is allocateInts, line 47.
    let ours: Vec<_> = samples
        .iter()
        .filter(|l| l.contains("stackTrace=stack(false:KnownAllocations.allocateInts()[I:47:"))
        .collect();
    for line in &ours {
        assert_eq!(field(line, "objectClass"), "class([I,0,null)", "{line}");
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
        (format!("file={}", missing_dir.display()), "cannot create"),
    ];
    for (options, message) in cases {
        let output = Command::new("java")
            .arg(format!("-agentpath:{}={options}", agent().display()))
            .arg("-version")
            .output()
            .unwrap();
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
    // 4 threads x 256 MiB at a 16 KiB interval: about 65,000 samples unlimited.
    let run = |file: &Path, extra: &str| {
        let output = java(
            &format!("file={},interval=16k{extra}", file.display()),
            "KnownAllocations.java",
            &["4", "256"],
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        support::summary_count(&support::summary(file), "jdk.ObjectAllocationSample")
    };
    let free = run(&unlimited, "");
    let capped = run(&limited, ",rate=500");
    // The limiter reacts within a 200 ms window, so a run of a second or two
    // keeps well under a third of the unlimited count at 500 samples/s.
    assert!(free > 30_000, "unlimited: {free} samples");
    assert!(
        capped * 3 < free,
        "limited to 500/s: {capped} samples, unlimited {free}"
    );
    // And the weights still estimate the bytes: the limited run's estimate
    // of the workload's int[] bytes is within 15% of the truth (a few
    // thousand samples: 2-3% standard deviation, plus the first window).
    let lines = support::dump_types(&limited, &["jdk.ObjectAllocationSample"]);
    let weights: f64 = lines
        .iter()
        .filter(|l| l.contains("KnownAllocations.allocateInts()[I:47:"))
        .map(|l| field(l, "weight").parse::<f64>().unwrap())
        .sum();
    let truth = 4.0 * 256.0 * 1048576.0;
    assert!(
        ((weights - truth) / truth).abs() < 0.15,
        "estimated {weights} of {truth}"
    );
}
