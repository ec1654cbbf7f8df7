//! `heapsampler convert --format pprof`, read by the real client: `go tool
//! pprof` reads the profiles of a JVM recorded with the agent and of one
//! recorded by the JDK alone, and its totals and top sites are those of
//! `heapsampler top`. Without Go these tests are skipped, unless CI=true.
//! Also: the profile's Rust code is what prost-build makes of
//! `convert/proto/profile.proto`.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use heapsampler_cli::analysis::fold::UNKNOWN_FRAME;
use heapsampler_cli::analysis::top::{self, Entry, GroupBy, Query, Table};
use heapsampler_cli::pipeline::Pipeline;
use heapsampler_test_support::heapsampler_ok;
use jfr_reader::file::RecordingFile;

/// `go tool pprof ARGS... PROFILE`'s output, which must succeed.
fn pprof(args: &[&str], profile: &Path) -> String {
    let output = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .arg(profile)
        .output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "go tool pprof {args:?}: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// What `go tool pprof -raw` reads in a profile: its sample types
/// (`type/unit`), the default one, each type's total over the samples,
/// and the number of samples.
#[derive(Debug)]
struct Raw {
    types: Vec<String>,
    default: String,
    totals: Vec<i64>,
    samples: usize,
}

/// Parses `-raw`: a line of sample types (the default marked `[dflt]`),
/// then one line per sample, its values before a `:` and its locations
/// after, each followed by a line of labels (`class:[...]`), then
/// `Locations`.
fn raw(profile: &Path) -> Raw {
    let text = pprof(&["-raw"], profile);
    let mut lines = text.lines().skip_while(|l| *l != "Samples:").skip(1);
    let header = lines.next().expect("a line of sample types");
    let types: Vec<String> = header
        .split_whitespace()
        .map(|t| t.trim_end_matches("[dflt]").to_owned())
        .collect();
    let default = header
        .split_whitespace()
        .find_map(|t| t.strip_suffix("[dflt]"))
        .expect("a default sample type")
        .to_owned();
    let mut totals = vec![0i64; types.len()];
    let mut samples = 0;
    for line in lines.take_while(|l| !l.starts_with("Locations")) {
        let Some((values, _)) = line.split_once(':') else {
            continue;
        };
        let values: Option<Vec<i64>> = values.split_whitespace().map(|v| v.parse().ok()).collect();
        // A labels line: `class:[...]`.
        let Some(values) = values.filter(|v| v.len() == types.len()) else {
            continue;
        };
        samples += 1;
        for (total, value) in totals.iter_mut().zip(values) {
            *total += value;
        }
    }
    assert!(samples > 0, "no samples read: {text}");
    Raw {
        types,
        default,
        totals,
        samples,
    }
}

/// The first row of `go tool pprof -top -lines -sample_index=TYPE`: a
/// function and its line, as `top --by site` writes a site,
/// `pkg.Class.method(line)` (no line when it is 0, unknown).
fn top_site(profile: &Path, sample_type: &str) -> String {
    let text = pprof(
        &["-top", "-lines", &format!("-sample_index={sample_type}")],
        profile,
    );
    assert!(
        text.lines().any(|l| l == format!("Type: {sample_type}")),
        "{text}"
    );
    let row = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap_or_else(|| panic!("no rows: {text}"));
    // flat flat% sum% cum cum% name :line; samples without a stack are
    // the one function [unknown], without a line, which top calls
    // "(no Java frames)".
    let cells: Vec<&str> = row.split_whitespace().collect();
    let name = cells[5];
    if name == UNKNOWN_FRAME {
        return GroupBy::Site.missing().to_owned();
    }
    match cells.get(6).map(|line| line.trim_start_matches(':')) {
        None | Some("0") => name.to_owned(),
        Some(line) => format!("{name}({line})"),
    }
}

/// `heapsampler top`'s table, from the library: exact figures, where the
/// command line rounds them.
fn table(path: &Path, by: GroupBy, live: bool) -> Table {
    let query = Query {
        by,
        live,
        min_gcs: 0,
    };
    top::top(
        RecordingFile::open(path).unwrap(),
        query,
        &Pipeline::default(),
    )
    .unwrap()
}

/// Asserts that a profile's `total` of `what` is `expected` to within
/// the rounding of each of its `samples` (half a unit each).
fn assert_total(what: &str, total: i64, expected: f64, samples: usize) {
    let slack = samples as f64 / 2.0 + 1e-9 * expected;
    assert!(
        (total as f64 - expected).abs() <= slack,
        "{what}: the profile has {total}, top {expected} (slack {slack})"
    );
}

/// Asserts that the site `go tool pprof` puts first for `sample_type` is
/// one of the largest of `table` (by objects or by bytes), to within the
/// rounding of the profile's `samples`. Not necessarily top's first: sites
/// of one sample of the same small class tie (by objects above all), and
/// pprof and top break ties their own ways.
fn assert_largest(profile: &Path, sample_type: &str, table: &Table, objects: bool, samples: usize) {
    let value = |entry: &Entry| {
        if objects {
            entry.estimate.objects()
        } else {
            entry.bytes()
        }
    };
    let largest = table.entries.iter().map(value).fold(0.0, f64::max);
    let site = top_site(profile, sample_type);
    let entry = table
        .entries
        .iter()
        .find(|e| e.key == site)
        .unwrap_or_else(|| panic!("{sample_type}: pprof's largest, {site}, is not top's"));
    assert!(
        value(entry) >= largest - samples as f64 / 2.0,
        "{sample_type}: pprof's largest, {site}, has {} in top, whose largest has {largest}",
        value(entry)
    );
}

/// A second of `AllocationMix` on two threads, recorded with the agent
/// once for all the tests here, at 128k: on a busy machine the second holds
/// little work, and at 512k the objects live at its end were once none.
fn agent_recording() -> &'static Path {
    static RECORDING: OnceLock<PathBuf> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let dir = support::temp_dir("convert_pprof_agent");
        let path = dir.join("alloc.jfr");
        // Fixed work whose cache keeps about 10 MiB to the end: live
        // objects for the inuse types once the exit's collection has freed
        // the garbage (80 samples or so).
        support::record_with_agent(
            &path,
            &["--interval", "128k"],
            "AllocationMixFixed",
            &["4", "2"],
        );
        path
    })
}

#[test]
fn go_reads_an_agent_recording_as_top_sums_it() {
    if support::needed_tool("go_reads_an_agent_recording_as_top_sums_it", &["go"]).is_none() {
        return;
    }
    let recording = agent_recording();
    let profile = recording.with_file_name("heap.pb.gz");
    let stderr = heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "pprof",
        "-o",
        profile.to_str().unwrap(),
    ])
    .1;
    assert!(stderr.is_empty(), "nothing to say: {stderr}");
    let raw = raw(&profile);
    assert_eq!(
        raw.types,
        [
            "alloc_objects/count",
            "alloc_space/bytes",
            "inuse_objects/count",
            "inuse_space/bytes"
        ]
    );
    assert_eq!(raw.default, "inuse_space/bytes");
    let allocated = table(recording, GroupBy::Site, false);
    let live = table(recording, GroupBy::Site, true);
    for (at, (estimate, objects)) in [
        (&allocated.total, true),
        (&allocated.total, false),
        (&live.total, true),
        (&live.total, false),
    ]
    .into_iter()
    .enumerate()
    {
        let expected = if objects {
            estimate.objects()
        } else {
            estimate.bytes()
        };
        assert_total(&raw.types[at], raw.totals[at], expected, raw.samples);
    }
    for (sample_type, table, objects) in [
        ("alloc_objects", &allocated, true),
        ("alloc_space", &allocated, false),
        ("inuse_objects", &live, true),
        ("inuse_space", &live, false),
    ] {
        assert_largest(&profile, sample_type, table, objects, raw.samples);
    }
    // The header: the recording's time and the agent's interval.
    let header = pprof(&["-raw"], &profile);
    assert!(header.contains("PeriodType: space bytes"), "{header}");
    assert!(header.contains("Period: 131072"), "{header}");
    // What live means, in the comment pprof shows with the in-use types.
    let comments = pprof(&["-comments"], &profile);
    assert_eq!(
        comments.trim(),
        "inuse_objects, inuse_space: live: reachable at the end (collected before the final \
         sweep)"
    );
}

#[test]
fn go_reads_a_jdk_recording_as_samples_and_space() {
    if support::needed_tool("go_reads_a_jdk_recording_as_samples_and_space", &["go"]).is_none() {
        return;
    }
    let dir = support::temp_dir("convert_pprof_jdk");
    let recording = dir.join("jdk.jfr");
    let workload = support::workload("AllocationMix");
    support::record_with_jfr(
        &recording,
        &["settings=profile"],
        &[workload.to_str().unwrap(), "1", "2"],
    );
    // Next to the recording by default.
    let stderr = heapsampler_ok(["convert", recording.to_str().unwrap(), "--format", "pprof"]).1;
    assert!(
        stderr.contains("no alloc_objects") && stderr.contains("no inuse_objects or inuse_space"),
        "{stderr}"
    );
    let profile = dir.join("jdk.pb.gz");
    let raw = raw(&profile);
    assert_eq!(raw.types, ["samples/count", "alloc_space/bytes"]);
    assert_eq!(raw.default, "alloc_space/bytes");
    let allocated = table(&recording, GroupBy::Site, false);
    assert_eq!(raw.totals[0], allocated.total.samples() as i64);
    assert_total(
        "alloc_space",
        raw.totals[1],
        allocated.total.bytes(),
        raw.samples,
    );
    assert_largest(&profile, "alloc_space", &allocated, false, raw.samples);
}

#[test]
fn filters_and_the_depth_apply_as_to_the_other_formats() {
    if support::needed_tool(
        "filters_and_the_depth_apply_as_to_the_other_formats",
        &["go"],
    )
    .is_none()
    {
        return;
    }
    let recording = agent_recording();
    let profile = recording.with_file_name("worker-0.pb.gz");
    heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "pprof",
        "--thread",
        "^worker-0$",
        "--stack-depth",
        "2",
        "-o",
        profile.to_str().unwrap(),
    ]);
    let by_thread = table(recording, GroupBy::Thread, false);
    let worker = by_thread
        .entries
        .iter()
        .find(|e| e.key == "worker-0")
        .expect("a thread worker-0");
    let raw = raw(&profile);
    assert_total("alloc_space", raw.totals[1], worker.bytes(), raw.samples);
    // Every stack of the workers is deeper than 2: each ends in
    // [truncated], under the two frames kept.
    let traces = pprof(&["-traces", "-sample_index=alloc_space"], &profile);
    // After the header, one section per sample, each closed by a line:
    // its labels (`thread:  worker-0`), then its frames leaf first, the
    // first after its value.
    let sections: Vec<&str> = traces.split("-----------+").collect();
    let stacks: Vec<Vec<&str>> = sections[1..sections.len() - 1]
        .iter()
        .map(|trace| {
            trace
                .lines()
                .skip(1)
                .filter(|l| !l.contains(":  "))
                .filter_map(|l| l.split_whitespace().last())
                .collect()
        })
        .collect();
    assert!(!stacks.is_empty(), "{traces}");
    for frames in &stacks {
        assert_eq!(frames.len(), 3, "{frames:?}");
        assert_eq!(frames[2], "[truncated]", "{frames:?}");
    }
    assert!(traces.contains("thread:  worker-0"), "{traces}");
    assert!(!traces.contains("thread:  worker-1"), "{traces}");
}

/// Set to write convert/proto/perftools.profiles.rs again from
/// profile.proto, instead of checking it.
const REGENERATE: &str = "HEAPSAMPLER_REGENERATE_PROTO";

#[test]
fn the_profile_code_is_what_prost_build_makes_of_the_proto() {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    let committed = proto.join("perftools.profiles.rs");
    let out = support::temp_dir("convert_pprof_proto");
    let files = protox::compile(["profile.proto"], [&proto]).unwrap();
    prost_build::Config::new()
        .out_dir(&out)
        .compile_fds(files)
        .unwrap();
    let generated = std::fs::read_to_string(out.join("perftools.profiles.rs")).unwrap();
    if std::env::var_os(REGENERATE).is_some() {
        std::fs::write(&committed, &generated).unwrap();
    }
    assert!(
        std::fs::read_to_string(&committed).unwrap() == generated,
        "{} is not what prost-build makes of profile.proto: write it again with \
         `{REGENERATE}=1 cargo test --release -p heapsampler-cli --test integration pprof::`",
        committed.display()
    );
}
