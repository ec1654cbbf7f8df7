//! `heapsampler convert --format otlp`, read by upstream's own definitions:
//! the Python package `opentelemetry-proto` decodes the request, and its
//! totals, stacks, attributes, resource and times are those of the
//! recording (`heapsampler top`, `top --live`). Without that package these
//! tests are skipped, unless CI=true. Also: the messages' Rust code is what
//! prost-build makes of `convert/proto/otlp/`.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use heapsampler_cli::analysis::fold::UNKNOWN_FRAME;
use heapsampler_cli::analysis::top::{self, GroupBy, Query, Table};
use heapsampler_cli::pipeline::Pipeline;
use heapsampler_test_support::heapsampler_ok;
use jfr_reader::file::RecordingFile;
use serde_json::Value;

/// The modules the decoding imports.
const MODULES: [&str; 1] =
    ["opentelemetry.proto.collector.profiles.v1development.profiles_service_pb2"];

/// Decodes the request in `sys.argv[1]` with upstream's Python classes
/// and prints what the tests check, as JSON: the resource's attributes, the
/// scope, each profile's type, unit, total, samples, time, duration,
/// period and attributes, whether each dictionary table's entry 0 is its zero value,
/// each profile's values by leaf site (`pkg.Class.method(line)`, as `top
/// --by site`), the distinct function names, threads and classes, and how
/// many samples lack a thread or class attribute, and the strings nothing
/// refers to.
const DECODE: &str = r#"
import json, sys
from opentelemetry.proto.collector.profiles.v1development.profiles_service_pb2 import ExportProfilesServiceRequest
request = ExportProfilesServiceRequest()
with open(sys.argv[1], "rb") as f:
    request.ParseFromString(f.read())
d = request.dictionary
s = d.string_table
def any_value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None
def attribute(index):
    a = d.attribute_table[index]
    return s[a.key_strindex], any_value(a.value)
def site(location):
    line = location.lines[0]
    name = s[d.function_table[line.function_index].name_strindex]
    return name if line.line == 0 else "%s(%d)" % (name, line.line)
zeros = {
    "string": s[0] == "",
    "mapping": d.mapping_table[0].ByteSize() == 0,
    "location": d.location_table[0].ByteSize() == 0,
    "function": d.function_table[0].ByteSize() == 0,
    "link": d.link_table[0].ByteSize() == 0,
    "attribute": d.attribute_table[0].ByteSize() == 0,
    "stack": d.stack_table[0].ByteSize() == 0,
}
[resource_profiles] = request.resource_profiles
[scope_profiles] = resource_profiles.scope_profiles
profiles, sites, threads, classes, unlabelled = [], {}, set(), set(), 0
for p in scope_profiles.profiles:
    kind = "%s/%s" % (s[p.sample_type.type_strindex], s[p.sample_type.unit_strindex])
    by_site = sites.setdefault(kind, {})
    for sample in p.samples:
        (value,) = sample.values
        stack = d.stack_table[sample.stack_index].location_indices
        leaf = site(d.location_table[stack[0]])
        by_site[leaf] = by_site.get(leaf, 0) + value
        attributes = dict(attribute(i) for i in sample.attribute_indices)
        if "thread.name" in attributes and "heapsampler.allocated_class" in attributes:
            threads.add(attributes["thread.name"])
            classes.add(attributes["heapsampler.allocated_class"])
        else:
            unlabelled += 1
    profiles.append({
        "type": kind,
        "total": sum(x.values[0] for x in p.samples),
        "samples": len(p.samples),
        "time": p.time_unix_nano,
        "duration": p.duration_nano,
        "period": p.period,
        "attributes": dict(attribute(i) for i in p.attribute_indices),
    })
functions = sorted({s[f.name_strindex] for f in d.function_table[1:]})
used = {0}
for f in d.function_table:
    used |= {f.name_strindex, f.system_name_strindex, f.filename_strindex}
for a in d.attribute_table:
    used |= {a.key_strindex, a.unit_strindex}
for p in scope_profiles.profiles:
    used |= {p.sample_type.type_strindex, p.sample_type.unit_strindex}
    used |= {p.period_type.type_strindex, p.period_type.unit_strindex}
frame_types = {attribute(i) for l in d.location_table[1:] for i in l.attribute_indices}
print(json.dumps({
    "resource": {a.key: any_value(a.value) for a in resource_profiles.resource.attributes},
    "scope": scope_profiles.scope.name,
    "profiles": profiles,
    "zeros": zeros,
    "sites": sites,
    "functions": functions,
    "frame_types": sorted("%s=%s" % t for t in frame_types),
    "threads": sorted(threads),
    "classes": sorted(classes),
    "unlabelled": unlabelled,
    "orphan_strings": [t for i, t in enumerate(s) if i not in used],
}))
"#;

/// What [`DECODE`] reads in `request`.
fn decode(python: &Path, request: &Path) -> Value {
    let output = Command::new(python)
        .args(["-c", DECODE])
        .arg(request)
        .output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "decoding {}: {stderr}",
        request.display()
    );
    serde_json::from_slice(&output.stdout).unwrap()
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

/// The profile of `kind` (`type/unit`).
fn profile<'v>(decoded: &'v Value, kind: &str) -> &'v Value {
    decoded["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} profile: {decoded}"))
}

/// Asserts that a profile's total is `expected` to within the rounding of
/// each of its samples (half a unit each: samples are summed as floating
/// point and rounded once, as pprof's).
fn assert_total(decoded: &Value, kind: &str, expected: f64) {
    let profile = profile(decoded, kind);
    let total = profile["total"].as_i64().unwrap();
    let samples = profile["samples"].as_u64().unwrap();
    let slack = samples as f64 / 2.0 + 1e-9 * expected;
    assert!(
        (total as f64 - expected).abs() <= slack,
        "{kind}: the export has {total}, top {expected} (slack {slack})"
    );
}

/// The recording's start and length in nanoseconds, from its chunk
/// headers: the first's start to the last's end.
fn span(recording: &Path) -> (u64, u64) {
    let bytes = std::fs::read(recording).unwrap();
    let headers: Vec<_> = support::chunks(&bytes).map(|(_, h)| h).collect();
    let start = headers.iter().map(|h| h.start_nanos).min().unwrap();
    let end = headers
        .iter()
        .map(|h| h.start_nanos + h.duration_nanos)
        .max()
        .unwrap();
    (start as u64, (end - start) as u64)
}

/// The fields of the recording's first `event_type` event, as `jfr print
/// --json` reads them.
fn first_event(recording: &Path, event_type: &str) -> Value {
    let document = support::print_json(recording);
    support::json_events(&document)
        .iter()
        .find(|e| e["type"] == event_type)
        .unwrap_or_else(|| panic!("no {event_type} in {}", recording.display()))["values"]
        .clone()
}

/// The value `jfr print --json` reads for system property `key`.
fn system_property(recording: &Path, key: &str) -> String {
    let document = support::print_json(recording);
    support::json_events(&document)
        .iter()
        .find(|e| e["type"] == "jdk.InitialSystemProperty" && e["values"]["key"] == key)
        .unwrap_or_else(|| panic!("no system property {key}"))["values"]["value"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Asserts what every export has: one resource and scope, each dictionary
/// table's zero value at 0, no string that nothing refers to, named frames
/// of kind jvm, and a thread and a class on every sample; and the resource as the recording describes its
/// JVM (`jfr print` reading jdk.JVMInformation and the system properties).
fn assert_common(decoded: &Value, recording: &Path) {
    for (table, zero) in decoded["zeros"].as_object().unwrap() {
        assert_eq!(zero, true, "{table}_table[0] is not its zero value");
    }
    assert_eq!(decoded["scope"], "heapsampler");
    assert_eq!(
        decoded["frame_types"],
        serde_json::json!(["profile.frame.type=jvm"])
    );
    assert_eq!(decoded["unlabelled"], 0, "samples without thread or class");
    // "There SHOULD NOT be orphaned (unreferenced) items in a dictionary."
    assert_eq!(decoded["orphan_strings"], serde_json::json!([]));
    let resource = &decoded["resource"];
    let jvm = first_event(recording, "jdk.JVMInformation");
    assert!(resource["process.pid"].as_i64().unwrap() > 0, "{resource}");
    assert_eq!(resource["process.pid"], jvm["pid"], "{resource}");
    assert!(jvm["jvmName"].as_str().is_some_and(|n| !n.is_empty()));
    assert_eq!(resource["service.name"], "unknown_service:java");
    assert_eq!(
        resource["process.runtime.version"],
        system_property(recording, "java.vm.version"),
        "{resource}"
    );
    assert_eq!(
        resource["process.runtime.name"], jvm["jvmName"],
        "{resource}"
    );
    let java = format!("{}/bin/java", system_property(recording, "java.home"));
    assert_eq!(resource["process.executable.path"], java.as_str());
    // HotSpot on this machine: `... for linux-amd64 JRE`.
    let platform = format!(
        "{}-{}",
        resource["os.type"].as_str().unwrap(),
        resource["host.arch"].as_str().unwrap()
    );
    assert!(
        jvm["jvmVersion"]
            .as_str()
            .unwrap()
            .contains(&format!(" for {platform} ")),
        "{platform}: {}",
        jvm["jvmVersion"]
    );
    let created = resource["process.creation.time"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(created).is_ok(),
        "{created}"
    );
    // The times: the recording's.
    let (start, length) = span(recording);
    for profile in decoded["profiles"].as_array().unwrap() {
        assert_eq!(profile["time"], start, "{profile}");
        assert_eq!(profile["duration"], length, "{profile}");
    }
}

/// Asserts that every leaf site of the profile of `kind` is one of
/// `table`'s sites, and that the largest is one of the largest there, to
/// within the profile's rounding (sites of one sample tie, and the export
/// and top break ties their own ways).
fn assert_sites(decoded: &Value, kind: &str, table: &Table, objects: bool) {
    let value = |key: &str| {
        let entry = table
            .entries
            .iter()
            .find(|e| e.key == key)
            .unwrap_or_else(|| panic!("{kind}: site {key} is not top's"));
        if objects {
            entry.estimate.objects()
        } else {
            entry.bytes()
        }
    };
    let sites = decoded["sites"][kind].as_object().unwrap();
    assert!(!sites.is_empty(), "{kind}: no samples");
    let mut largest = ("", 0);
    for (site, total) in sites {
        let site = if site == UNKNOWN_FRAME {
            GroupBy::Site.missing()
        } else {
            site.as_str()
        };
        value(site);
        let total = total.as_i64().unwrap();
        if total > largest.1 {
            largest = (site, total);
        }
    }
    let top_largest = table
        .entries
        .iter()
        .map(|e| {
            if objects {
                e.estimate.objects()
            } else {
                e.bytes()
            }
        })
        .fold(0.0, f64::max);
    let samples = profile(decoded, kind)["samples"].as_u64().unwrap() as f64;
    assert!(
        value(largest.0) >= top_largest - samples / 2.0,
        "{kind}: the export's largest site, {}, has {} in top, whose largest has {top_largest}",
        largest.0,
        value(largest.0)
    );
}

/// A second of `AllocationMix` on two threads, recorded with the agent
/// once for the tests here, as tests/pprof.rs records it: fixed work whose
/// cache keeps about 10 MiB to the end (live objects for the inuse types).
fn agent_recording() -> &'static Path {
    static RECORDING: OnceLock<PathBuf> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let dir = support::temp_dir("convert_otlp_agent");
        let path = dir.join("alloc.jfr");
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
fn opentelemetry_reads_an_agent_recording_as_top_sums_it() {
    let test = "opentelemetry_reads_an_agent_recording_as_top_sums_it";
    let Some(python) = support::python::needed_python(test, &MODULES) else {
        return;
    };
    let recording = agent_recording();
    let request = recording.with_file_name("alloc.otlp.pb");
    let stderr = heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "otlp",
        "-o",
        request.to_str().unwrap(),
    ])
    .1;
    assert!(stderr.is_empty(), "nothing to say: {stderr}");
    let decoded = decode(&python, &request);
    let types: Vec<&str> = decoded["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    // pprof's types, its default first.
    assert_eq!(
        types,
        [
            "inuse_space/bytes",
            "alloc_objects/count",
            "alloc_space/bytes",
            "inuse_objects/count"
        ]
    );
    let allocated = table(recording, GroupBy::Site, false);
    let live = table(recording, GroupBy::Site, true);
    assert_total(&decoded, "alloc_objects/count", allocated.total.objects());
    assert_total(&decoded, "alloc_space/bytes", allocated.total.bytes());
    assert_total(&decoded, "inuse_objects/count", live.total.objects());
    assert_total(&decoded, "inuse_space/bytes", live.total.bytes());
    assert_sites(&decoded, "alloc_objects/count", &allocated, true);
    assert_sites(&decoded, "alloc_space/bytes", &allocated, false);
    assert_sites(&decoded, "inuse_objects/count", &live, true);
    assert_sites(&decoded, "inuse_space/bytes", &live, false);
    // The workload's own frames, and its threads and classes as top's.
    let functions = decoded["functions"].as_array().unwrap();
    assert!(
        functions
            .iter()
            .any(|f| f.as_str().unwrap().starts_with("AllocationMixFixed.")),
        "{functions:?}"
    );
    for (by, attribute) in [(GroupBy::Thread, "threads"), (GroupBy::Class, "classes")] {
        let keys: BTreeSet<String> = table(recording, by, false)
            .entries
            .into_iter()
            .map(|e| e.key)
            .collect();
        let found: BTreeSet<String> = decoded[attribute]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(found, keys, "{attribute}");
    }
    assert!(decoded["threads"].to_string().contains("worker-0"));
    assert_eq!(profile(&decoded, "alloc_space/bytes")["period"], 131072);
    // What live means, on the in-use profiles only.
    for (kind, attributes) in [
        (
            "inuse_space/bytes",
            serde_json::json!({"heapsampler.live": LIVE_REACHABLE}),
        ),
        (
            "inuse_objects/count",
            serde_json::json!({"heapsampler.live": LIVE_REACHABLE}),
        ),
        ("alloc_space/bytes", serde_json::json!({})),
    ] {
        assert_eq!(profile(&decoded, kind)["attributes"], attributes, "{kind}");
    }
    assert_common(&decoded, recording);
}

/// What live means in a recording whose JVM exited, collected.
const LIVE_REACHABLE: &str = "live: reachable at the end (collected before the final sweep)";

#[test]
fn opentelemetry_reads_a_jdk_recording_as_samples_and_space() {
    let test = "opentelemetry_reads_a_jdk_recording_as_samples_and_space";
    let Some(python) = support::python::needed_python(test, &MODULES) else {
        return;
    };
    let dir = support::temp_dir("convert_otlp_jdk");
    let recording = dir.join("jdk.jfr");
    let workload = support::workload("AllocationMix");
    support::record_with_jfr(
        &recording,
        &["settings=profile"],
        &[workload.to_str().unwrap(), "1", "2"],
    );
    // Next to the recording by default; the same notes as pprof's.
    let stderr = heapsampler_ok(["convert", recording.to_str().unwrap(), "--format", "otlp"]).1;
    assert!(
        stderr.contains("no alloc_objects") && stderr.contains("no inuse_objects or inuse_space"),
        "{stderr}"
    );
    let decoded = decode(&python, &dir.join("jdk.otlp.pb"));
    let types: Vec<&str> = decoded["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["alloc_space/bytes", "samples/count"]);
    let allocated = table(&recording, GroupBy::Site, false);
    assert_eq!(
        profile(&decoded, "samples/count")["total"],
        allocated.total.samples()
    );
    assert_total(&decoded, "alloc_space/bytes", allocated.total.bytes());
    assert_sites(&decoded, "alloc_space/bytes", &allocated, false);
    // A throttled sampler has no one interval.
    assert_eq!(profile(&decoded, "alloc_space/bytes")["period"], 0);
    assert_common(&decoded, &recording);
}

/// Set to write convert/proto/otlp/'s Rust again from its .proto files,
/// instead of checking it.
const REGENERATE: &str = "HEAPSAMPLER_REGENERATE_PROTO";

/// The packages of the request and what it imports: one generated file each.
const PACKAGES: [&str; 4] = [
    "opentelemetry.proto.collector.profiles.v1development",
    "opentelemetry.proto.profiles.v1development",
    "opentelemetry.proto.common.v1",
    "opentelemetry.proto.resource.v1",
];

#[test]
fn the_otlp_code_is_what_prost_build_makes_of_the_protos() {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto/otlp");
    let out = support::temp_dir("convert_otlp_proto");
    let files = protox::compile(
        ["opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"],
        [&proto],
    )
    .unwrap();
    prost_build::Config::new()
        .out_dir(&out)
        .compile_fds(files)
        .unwrap();
    for package in PACKAGES {
        let name = format!("{package}.rs");
        let committed = proto.join(&name);
        let generated = std::fs::read_to_string(out.join(&name)).unwrap();
        if std::env::var_os(REGENERATE).is_some() {
            std::fs::write(&committed, &generated).unwrap();
        }
        assert!(
            std::fs::read_to_string(&committed).unwrap_or_default() == generated,
            "{} is not what prost-build makes of convert/proto/otlp/: write it again with \
             `{REGENERATE}=1 cargo test --release -p heapsampler-cli --test integration otlp::`",
            committed.display()
        );
    }
}
