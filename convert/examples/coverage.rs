//! How often our 95% intervals hold the truth on real JVM recordings
//! (issue 49): runs `testdata/workloads/Coverage.java`'s workloads, whose
//! sites allocate exactly what they print, many times under each JVM,
//! collector and interval asked, records each with `heapsampler record`,
//! and compares each site's estimate (`heapsampler top --by site`, from the
//! library) with its truth.
//!
//! Per site it prints: the samples a run (mean), the bias (mean estimate
//! over truth, less one) and the same in standard errors of that mean (by
//! the model: beyond about 3 a bias the runs resolve), the dispersion (the variance of the estimates
//! across runs over the mean variance the model gives each, `V̂`: 1 where
//! the model holds, with a standard error of about `√(2/(runs-1))`), and the
//! share of runs whose interval held the truth (bytes; objects where they
//! differ).
//!
//! ```sh
//! cargo build --release -p heapsampler-cli --examples
//! target/release/examples/coverage --runs 40 --workloads steady,large \
//!     --java /usr/lib/jvm/java-17-openjdk-amd64/bin/java --gc g1 --interval 64k
//! ```
//!
//! Recordings are kept in `--dir` (default `target/coverage`): a second
//! invocation with the same options reuses the runs it finds there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use heapsampler_cli::analysis::top::{self, GroupBy, Query};
use heapsampler_cli::pipeline::Pipeline;
use jfr_reader::file::RecordingFile;

/// What to run, from the command line.
struct Options {
    runs: usize,
    scale: u64,
    workloads: Vec<String>,
    javas: Vec<PathBuf>,
    gcs: Vec<String>,
    intervals: Vec<String>,
    dir: PathBuf,
    heapsampler: PathBuf,
    live: bool,
    /// More JVM options, for every run (and in the recordings' names).
    jvm_args: Vec<String>,
    /// With a number of seconds: measure the leak suspects' false
    /// positives on runs of `Leaks` without a leak instead.
    leaks: Option<u64>,
}

const WORKLOADS: &[&str] = &[
    "steady", "mixed", "bursts", "threads", "outside", "large", "gcs",
];

fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::to_owned).collect()
}

fn options() -> Options {
    let release = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let mut options = Options {
        runs: 40,
        scale: 64,
        workloads: WORKLOADS.iter().map(|w| w.to_string()).collect(),
        javas: vec![PathBuf::from("java")],
        gcs: vec!["g1".into()],
        intervals: vec!["64k".into(), "512k".into()],
        dir: PathBuf::from("target/coverage"),
        heapsampler: release.join("heapsampler"),
        live: false,
        jvm_args: Vec::new(),
        leaks: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => options.runs = value().parse().expect("--runs N"),
            "--scale" => options.scale = value().parse().expect("--scale MIB"),
            "--workloads" => options.workloads = list(&value()),
            "--java" => options.javas = list(&value()).into_iter().map(PathBuf::from).collect(),
            "--gc" => options.gcs = list(&value()),
            "--interval" => options.intervals = list(&value()),
            "--dir" => options.dir = PathBuf::from(value()),
            "--heapsampler" => options.heapsampler = PathBuf::from(value()),
            "--live" => options.live = true,
            "--jvm-args" => {
                options.jvm_args = value().split_whitespace().map(str::to_owned).collect()
            }
            "--leaks" => options.leaks = Some(value().parse().expect("--leaks SECONDS")),
            "-h" | "--help" => {
                println!(
                    "coverage [--runs 40] [--scale 64] [--workloads {}] [--java PATH,..] \
                     [--gc g1,zgc,parallel,shenandoah] [--interval 64k,512k] [--dir target/coverage] \
                     [--heapsampler PATH] [--live] [--jvm-args \"-XX:... ...\"] [--leaks SECONDS]",
                    WORKLOADS.join(",")
                );
                std::process::exit(0);
            }
            other => panic!("unknown option {other}; see --help"),
        }
    }
    options
}

fn gc_flags(gc: &str) -> &'static [&'static str] {
    match gc {
        "g1" => &["-XX:+UseG1GC"],
        "parallel" => &["-XX:+UseParallelGC"],
        "zgc" => &["-XX:+UseZGC"],
        "shenandoah" => &["-XX:+UseShenandoahGC"],
        other => panic!("unknown collector {other}"),
    }
}

/// The JVM's feature version, from `java -version`.
fn java_version(java: &Path) -> String {
    let output = Command::new(java)
        .arg("-version")
        .output()
        .expect("java -version");
    let text = String::from_utf8_lossy(&output.stderr);
    let quoted = text.split('"').nth(1).unwrap_or("?");
    quoted.split('.').next().unwrap_or("?").to_owned()
}

/// A site's truth and one run's estimate of it.
#[derive(Debug, Clone, Copy)]
struct Run {
    truth_bytes: f64,
    samples: u64,
    bytes: f64,
    bytes_variance: f64,
    bytes_covered: bool,
    objects_covered: bool,
}

/// The JVM a run records: which, its collector and heap, the interval.
#[derive(Clone, Copy)]
struct Jvm<'a> {
    java: &'a Path,
    gc: &'a str,
    interval: &'a str,
    heap: &'a [&'a str],
    classes: &'a Path,
}

/// `heapsampler record` of `main` (a class and its arguments) into `jfr`
/// under `jvm`, with `--jvm-args`; returns what the program printed.
fn record(options: &Options, jvm: Jvm<'_>, jfr: &Path, main: &[&str]) -> Vec<u8> {
    let output = Command::new(&options.heapsampler)
        .args(["record", "--interval", jvm.interval, "-o"])
        .arg(jfr)
        .arg("--")
        .arg(jvm.java)
        .args(jvm.heap)
        .args(gc_flags(jvm.gc))
        .args(&options.jvm_args)
        .arg("-cp")
        .arg(jvm.classes)
        .args(main)
        .output()
        .expect("heapsampler record");
    assert!(
        output.status.success(),
        "{}: {}",
        jfr.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// Records one run (unless its recording is already there) and reads it:
/// every site's truth and estimate.
fn run_once(
    options: &Options,
    classes: &Path,
    java: &Path,
    gc: &str,
    interval: &str,
    workload: &str,
    index: usize,
) -> BTreeMap<String, Run> {
    let name = format!(
        "{}-{gc}{}-{interval}-{workload}-{}-{index}",
        java_version(java),
        options.jvm_args.concat(),
        options.scale
    );
    let jfr = options.dir.join(format!("{name}.jfr"));
    let truth = options.dir.join(format!("{name}.truth"));
    if !truth.exists() {
        let scale = options.scale.to_string();
        let stdout = record(
            options,
            Jvm {
                java,
                gc,
                interval,
                heap: &["-Xmx1g"],
                classes,
            },
            &jfr,
            &["Coverage", workload, &scale],
        );
        std::fs::write(&truth, stdout).unwrap();
    }
    let truth = std::fs::read_to_string(&truth).unwrap();
    let query = Query {
        by: GroupBy::Site,
        live: options.live,
        min_gcs: 0,
    };
    let recording = RecordingFile::open(&jfr).unwrap_or_else(|e| panic!("{}: {e}", jfr.display()));
    let table = top::top(recording, query, &Pipeline::default())
        .unwrap_or_else(|e| panic!("{}: {e}", jfr.display()));
    let mut runs = BTreeMap::new();
    for line in truth.lines().filter(|l| l.starts_with("site ")) {
        let fields: Vec<&str> = line.split(' ').collect();
        let (site, objects, bytes) = (fields[1], fields[2], fields[3]);
        let prefix = format!("Coverage.{site}(");
        let mut estimate = heapsampler_core::estimate::Estimate::new();
        for entry in table.entries.iter().filter(|e| e.key.starts_with(&prefix)) {
            estimate.merge(&entry.estimate);
        }
        if options.live && site != "kept1k" {
            continue;
        }
        let truth_bytes: f64 = bytes.parse().unwrap();
        let truth_objects: f64 = objects.parse().unwrap();
        runs.insert(
            site.to_owned(),
            Run {
                truth_bytes,
                samples: estimate.samples(),
                bytes: estimate.bytes(),
                bytes_variance: estimate.bytes_variance(),
                bytes_covered: estimate.bytes_interval().contains(truth_bytes),
                objects_covered: estimate.objects_interval().contains(truth_objects),
            },
        );
    }
    runs
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0.0), |(s, n), v| (s + v, n + 1.0));
    sum / n
}

/// The leak suspects of runs of `Leaks` without a leak (a cache at its
/// plateau, sessions living 2 s, request garbage): per run, the groups
/// judged and the suspects among them, each a false positive.
fn false_leaks(options: &Options, seconds: u64) {
    let classes = options.dir.join("classes");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/workloads/Leaks.java");
    compile(options, &source, &classes);
    println!(
        "{:>4} {:<10} {:>5} {:>5} {:>7} {:>8} {:>9}",
        "jdk", "gc", "every", "runs", "judged", "suspects", "runs with"
    );
    for java in &options.javas {
        let version = java_version(java);
        for gc in &options.gcs {
            for interval in &options.intervals {
                let (mut judged, mut suspects, mut runs_with) = (0, 0, 0);
                for index in 0..options.runs {
                    let name = format!(
                        "leaks-{version}-{gc}{}-{interval}-{seconds}-{index}",
                        options.jvm_args.concat()
                    );
                    let jfr = options.dir.join(format!("{name}.jfr"));
                    if !jfr.exists() {
                        let run = Jvm {
                            java,
                            gc,
                            interval,
                            heap: &["-Xmx512m", "-Xmn16m"],
                            classes: &classes,
                        };
                        let seconds = seconds.to_string();
                        record(options, run, &jfr, &["Leaks", &seconds, "cache", "32"]);
                    }
                    let recording = RecordingFile::open(&jfr)
                        .unwrap_or_else(|e| panic!("{}: {e}", jfr.display()));
                    let found = heapsampler_cli::analysis::leaks::leaks(
                        recording,
                        GroupBy::Site,
                        &Pipeline::default(),
                        &mut |_, _| {},
                    )
                    .unwrap_or_else(|e| panic!("{}: {e}", jfr.display()));
                    judged += found.judged;
                    suspects += found.suspects.len();
                    runs_with += usize::from(!found.suspects.is_empty());
                    for suspect in &found.suspects {
                        eprintln!("\r{name}: suspect {}", suspect.key);
                    }
                    eprint!(
                        "\r{version} {gc} {interval} leaks: {}/{}",
                        index + 1,
                        options.runs
                    );
                }
                eprint!("\r\x1b[K");
                println!(
                    "{version:>4} {gc:<10} {interval:>5} {:>5} {judged:>7} {:>8} {:>9}",
                    options.runs,
                    format!(
                        "{suspects} ({:.2}%)",
                        100.0 * suspects as f64 / judged.max(1) as f64
                    ),
                    runs_with
                );
            }
        }
    }
}

fn compile(options: &Options, source: &Path, classes: &Path) {
    let javac = options.javas[0].with_file_name("javac");
    let status = Command::new(if javac.exists() {
        javac
    } else {
        PathBuf::from("javac")
    })
    .args(["--release", "17", "-d"])
    .arg(classes)
    .arg(source)
    .status()
    .expect("javac");
    assert!(status.success(), "javac {}", source.display());
}

fn main() {
    let options = options();
    std::fs::create_dir_all(&options.dir).unwrap();
    if let Some(seconds) = options.leaks {
        false_leaks(&options, seconds);
        return;
    }
    let classes = options.dir.join("classes");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/workloads/Coverage.java");
    compile(&options, &source, &classes);
    println!(
        "{:>4} {:<10} {:>5} {:<8} {:<12} {:>8} {:>7} {:>6} {:>10} {:>8} {:>8}",
        "jdk",
        "gc",
        "every",
        "workload",
        "site",
        "samples",
        "bias%",
        "bias/se",
        "dispersion",
        "bytes",
        "objects"
    );
    for java in &options.javas {
        let version = java_version(java);
        for gc in &options.gcs {
            for interval in &options.intervals {
                // Over the sites with at least 100 samples a run: runs, and
                // those whose bytes' and objects' intervals held the truth.
                let (mut judged, mut bytes_held, mut objects_held) = (0, 0, 0);
                for workload in &options.workloads {
                    let mut sites: BTreeMap<String, Vec<Run>> = BTreeMap::new();
                    for index in 0..options.runs {
                        let runs =
                            run_once(&options, &classes, java, gc, interval, workload, index);
                        for (site, run) in runs {
                            sites.entry(site).or_default().push(run);
                        }
                        eprint!(
                            "\r{version} {gc} {interval} {workload}: {}/{}",
                            index + 1,
                            options.runs
                        );
                    }
                    eprint!("\r\x1b[K");
                    for (site, runs) in &sites {
                        let n = runs.len() as f64;
                        let samples = mean(runs.iter().map(|r| r.samples as f64));
                        // Each run's error relative to its truth (the same in
                        // every run: fixed work), and in standard errors.
                        let relative = |r: &Run| (r.bytes - r.truth_bytes) / r.truth_bytes;
                        let bias = mean(runs.iter().map(relative));
                        let observed = runs
                            .iter()
                            .map(|r| (relative(r) - bias).powi(2))
                            .sum::<f64>()
                            / (n - 1.0);
                        let modelled = mean(
                            runs.iter()
                                .map(|r| r.bytes_variance / r.truth_bytes.powi(2)),
                        );
                        let bytes = runs.iter().filter(|r| r.bytes_covered).count();
                        let objects = runs.iter().filter(|r| r.objects_covered).count();
                        let mark = if samples >= 100.0 {
                            judged += runs.len();
                            bytes_held += bytes;
                            objects_held += objects;
                            ""
                        } else {
                            " (few)"
                        };
                        println!(
                            "{version:>4} {gc:<10} {interval:>5} {workload:<8} {site:<12} {samples:>8.1} {:>7.2} {:>7.2} {:>10.2} {:>8} {:>8}{mark}",
                            bias * 100.0,
                            bias / (modelled / n).sqrt(),
                            observed / modelled,
                            format!("{bytes}/{}", runs.len()),
                            format!("{objects}/{}", runs.len()),
                        );
                    }
                }
                let share = |held: usize| 100.0 * held as f64 / judged.max(1) as f64;
                println!(
                    "{version:>4} {gc:<10} {interval:>5} sites of 100 samples or more: bytes held {bytes_held}/{judged} ({:.1}%), objects {objects_held}/{judged} ({:.1}%)",
                    share(bytes_held),
                    share(objects_held),
                );
            }
        }
    }
}
