//! `heapsampler convert --format otlp`: the allocation samples of a
//! recording as an OpenTelemetry profiles export, an
//! `ExportProfilesServiceRequest` of opentelemetry-proto v1.10.0's
//! `profiles/v1development` (uncompressed protobuf: the body an OTLP/HTTP
//! collector takes at `/v1development/profiles`, where compression is the
//! sender's `Content-Encoding`, not the message's).
//!
//! The samples are gathered as [`pprof`] gathers them, by stack, class and
//! thread, with the same sample types (`alloc_objects` or `samples`,
//! `alloc_space`, and from liveness `inuse_objects`, `inuse_space`) and the
//! same rounding, so a type's total differs from `heapsampler top`'s by
//! less than half a unit per sample. OTLP has one sample type per
//! `Profile`: the request holds one profile per type, the default first
//! (pprof's default: `inuse_space` when there are lifetimes, else
//! `alloc_space`; viewers show `profiles[0]` first), then pprof's order.
//! A profile leaves out the samples whose value rounds to 0. The `inuse_`
//! profiles carry the attribute [`LIVE_KEY`], what live means in the
//! recording (as pprof's comment says it).
//!
//! Every profile shares one `ProfilesDictionary`, each of whose tables
//! begins with its zero value (`""`, `Function{}`, ...), as v1.10.0
//! requires: functions (`pkg.Class.method`, system name with the JVM
//! descriptor, no file: see [`pprof`]), locations (function and line, each
//! with [`FRAME_TYPE_KEY`] `jvm`), stacks (leaf first), and the attributes
//! of samples: the allocating thread's name ([`THREAD_KEY`], the semantic
//! conventions' `thread.name`), the allocated class ([`CLASS_KEY`]: the
//! conventions have no key for it), and on the samples of a site the
//! agent raised as a leak suspect while the program ran
//! (`heapsampler.LeakSuspect`: its allocation site, `top --by site`'s, and
//! class), when it first raised it ([`SUSPECT_KEY`]), so that a backend
//! filters the profiles to the suspects. The heap peaks the agent wrote are
//! not in the export: a peak is a moment's live set, which a profile of the
//! whole recording has no place for. No mapping: the frames are named.
//! The string table holds only what the dictionary and profiles refer to
//! (attribute values are their own strings).
//! Each profile has the recording's start and duration and pprof's
//! period.
//!
//! The resource, with OpenTelemetry's semantic conventions, from what the
//! recording says (an attribute is left out when it does not):
//!
//! | attribute | from |
//! |---|---|
//! | `service.name` | `unknown_service:java`, the conventions' default |
//! | `process.pid` | `jdk.JVMInformation` `pid` |
//! | `process.creation.time` | `jdk.JVMInformation` `jvmStartTime` (ISO 8601) |
//! | `process.runtime.name` | system property `java.runtime.name`, else `jdk.JVMInformation` `jvmName` |
//! | `process.runtime.version` | `java.runtime.version`, else `java.vm.version` |
//! | `process.runtime.description` | `java.vm.vendor`, `java.vm.name`, `java.vm.version` |
//! | `process.executable.path` | `java.home` + `/bin/java` |
//! | `process.owner` | `user.name` |
//! | `os.type` | `os.name`, else the `for linux-amd64` of `jvmVersion` (`linux`, `darwin`, `windows`, else lower case) |
//! | `os.version` | `os.version` |
//! | `host.arch` | `os.arch`, else as `os.type` (`amd64`, `arm64`, else as is) |
//! | `host.name` | environment variable `HOSTNAME` |
//!
//! System properties are `jdk.InitialSystemProperty` events, environment
//! variables `jdk.InitialEnvironmentVariable`; only the first chunk is
//! read for them (the JVM writes them at every chunk's start, and reading
//! every chunk's events twice cost a fifth of the export's time). HotSpot records only the VM's own properties there (no
//! `java.runtime.*`, `os.*`, `user.name`): hence the second sources. The
//! scope is `heapsampler` and its version.

use std::collections::HashMap;
use std::io::{self, Write};

use prost::Message;

use crate::Error;
use crate::analysis::leaks::ReadWatch;
use crate::analysis::liveness::{Ending, ReadEnding};
use crate::model::filter::Filter;
use crate::model::process::{self, Process};
use crate::model::text::iso;
use crate::model::watch::Watch;
use crate::output::pprof::{self, Gathered, Profiling};
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::chunk::Chunk;
use jfr_reader::file::RecordingFile;

/// The messages of opentelemetry-proto v1.10.0 (in `convert/proto/otlp/`,
/// with its licence), as prost-build generates them: `tests/otlp.rs`
/// checks the generated code against the .proto files, and says how to
/// generate it again.
#[allow(missing_docs, clippy::all, rustdoc::all)]
pub mod proto {
    /// `opentelemetry.proto`.
    pub mod opentelemetry {
        pub mod proto {
            pub mod collector {
                pub mod profiles {
                    pub mod v1development {
                        include!(
                            "../../proto/otlp/opentelemetry.proto.collector.profiles.v1development.rs"
                        );
                    }
                }
            }
            pub mod profiles {
                pub mod v1development {
                    include!("../../proto/otlp/opentelemetry.proto.profiles.v1development.rs");
                }
            }
            pub mod common {
                pub mod v1 {
                    include!("../../proto/otlp/opentelemetry.proto.common.v1.rs");
                }
            }
            pub mod resource {
                pub mod v1 {
                    include!("../../proto/otlp/opentelemetry.proto.resource.v1.rs");
                }
            }
        }
    }
    pub use opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
    pub use opentelemetry::proto::common::v1::{
        AnyValue, InstrumentationScope, KeyValue, any_value,
    };
    pub use opentelemetry::proto::profiles::v1development::*;
    pub use opentelemetry::proto::resource::v1::Resource;
}

/// The attribute key of the allocating thread's name (semantic conventions).
pub const THREAD_KEY: &str = "thread.name";

/// The attribute key of the allocated class's Java name (`byte[]`,
/// `java.lang.String`): ours, the conventions have none.
pub const CLASS_KEY: &str = "heapsampler.allocated_class";

/// The attribute key of a location's kind of frame (semantic conventions),
/// `jvm` for every frame here.
pub const FRAME_TYPE_KEY: &str = "profile.frame.type";

/// The attribute key of the samples of a site the agent raised as a leak
/// suspect: when it first raised it, ISO 8601 UTC (ours, the conventions
/// have none).
pub const SUSPECT_KEY: &str = "heapsampler.leak_suspect.first_raised";

/// The attribute of the `inuse_` profiles that says what live means in the
/// recording ([`Ending::live_statement`]: on generational ZGC, as of the
/// last major collection; and the share of samples tracked). The semantic
/// conventions have no key for it.
pub const LIVE_KEY: &str = "heapsampler.live";

/// An OTLP profiles export request and what it was made of (as pprof's).
pub type Otlp = pprof::Profiled<proto::ExportProfilesServiceRequest>;

/// Reads the allocation samples of `file` that `filter` keeps, keeping the
/// `stack_depth` frames nearest the top of each stack, and what describes
/// its JVM, into an export, through `pipeline`, telling `progress` the
/// bytes read.
pub fn request(
    file: RecordingFile,
    filter: &Filter,
    stack_depth: usize,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Otlp, Error> {
    let profiling = Profiling {
        filter,
        stack_depth,
    };
    let ran = pipeline.run(
        file,
        &(profiling, (ReadProcess, (ReadEnding, ReadWatch))),
        (
            Gathered::new(),
            (Process::default(), (Ending::default(), Watch::default())),
        ),
        progress,
    )?;
    let (gathered, (process, (ending, watch))) = ran.merged;
    let pprof::Pprof { profile, contents } = pprof::build(gathered, &ending, ran.truncated);
    Ok(Otlp {
        profile: from_pprof(profile, &process, contents.live_meaning.as_deref(), &watch),
        contents,
    })
}

/// Writes `request` as protobuf, uncompressed.
pub fn write(request: &proto::ExportProfilesServiceRequest, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&request.encode_to_vec())?;
    out.flush()
}

/// The resource's attributes of `process`, as the module's table says.
pub fn resource_attributes(process: &Process) -> Vec<proto::KeyValue> {
    let mut attributes = vec![text("service.name", "unknown_service:java")];
    if let Some(pid) = process.pid {
        attributes.push(int("process.pid", pid));
    }
    if let Some(start) = process
        .start_millis
        .and_then(chrono::DateTime::from_timestamp_millis)
    {
        let start = start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        attributes.push(text("process.creation.time", &start));
    }
    let property = |key| process.property(key).filter(|v| !v.is_empty());
    let jvm_name = process.jvm_name.as_deref().filter(|n| !n.is_empty());
    if let Some(name) = property("java.runtime.name").or(jvm_name) {
        attributes.push(text("process.runtime.name", name));
    }
    let version = property("java.runtime.version").or(property("java.vm.version"));
    if let Some(version) = version {
        attributes.push(text("process.runtime.version", version));
    }
    // `... for linux-amd64 JRE (...)`: the platform HotSpot was built for.
    let platform = process
        .jvm_version
        .as_deref()
        .and_then(|v| v.split_once(" for ")?.1.split_whitespace().next())
        .and_then(|platform| platform.split_once('-'));
    let vm: Vec<&str> = ["java.vm.vendor", "java.vm.name", "java.vm.version"]
        .into_iter()
        .filter_map(property)
        .collect();
    if !vm.is_empty() {
        attributes.push(text("process.runtime.description", &vm.join(" ")));
    }
    if let Some(home) = property("java.home") {
        let java = format!("{}/bin/java", home.trim_end_matches('/'));
        attributes.push(text("process.executable.path", &java));
    }
    if let Some(user) = property("user.name") {
        attributes.push(text("process.owner", user));
    }
    if let Some(os) = property("os.name").or(platform.map(|(os, _)| os)) {
        let os = match os {
            "Linux" | "linux" => "linux".to_owned(),
            "bsd" | "macos" => "darwin".to_owned(),
            "Mac OS X" => "darwin".to_owned(),
            windows if windows.starts_with("Windows") => "windows".to_owned(),
            other => other.to_lowercase(),
        };
        attributes.push(text("os.type", &os));
    }
    if let Some(version) = property("os.version") {
        attributes.push(text("os.version", version));
    }
    if let Some(arch) = property("os.arch").or(platform.map(|(_, arch)| arch)) {
        let arch = match arch {
            "amd64" | "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        attributes.push(text("host.arch", arch));
    }
    if let Some(host) = process.variable("HOSTNAME").filter(|v| !v.is_empty()) {
        attributes.push(text("host.name", host));
    }
    attributes
}

fn text(key: &str, value: &str) -> proto::KeyValue {
    proto::KeyValue {
        key: key.to_owned(),
        value: Some(string_value(value)),
        ..proto::KeyValue::default()
    }
}

fn int(key: &str, value: i64) -> proto::KeyValue {
    proto::KeyValue {
        key: key.to_owned(),
        value: Some(proto::AnyValue {
            value: Some(proto::any_value::Value::IntValue(value)),
        }),
        ..proto::KeyValue::default()
    }
}

fn string_value(value: &str) -> proto::AnyValue {
    proto::AnyValue {
        value: Some(proto::any_value::Value::StringValue(value.to_owned())),
    }
}

/// Reading a recording's [`Process`].
#[derive(Debug, Clone, Copy)]
struct ReadProcess;

impl Analysis for ReadProcess {
    type Part = Process;
    type Merged = Process;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(Process) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        if context.offset != 0 {
            return Ok(());
        }
        Ok(hand_on(process::read(chunk)?)?)
    }

    fn merge(&self, process: &mut Process, part: Process) -> Result<(), Error> {
        // The first chunk's, the only part.
        *process = part;
        Ok(())
    }

    fn part_bytes(&self, part: &Process) -> usize {
        part.properties
            .iter()
            .chain(&part.environment)
            .map(|(k, v)| k.len() + v.len() + 48)
            .sum()
    }
}

/// Values stored once, indexed from 1 in order of arrival, after the
/// zero value at 0 (v1.10.0's dictionary tables).
#[derive(Debug)]
struct Indexed<T>(HashMap<T, i32>);

impl<T: std::hash::Hash + Eq + Clone> Indexed<T> {
    fn new() -> Self {
        Self(HashMap::new())
    }

    fn index(&mut self, value: &T) -> i32 {
        if let Some(&index) = self.0.get(value) {
            return index;
        }
        let index = self.0.len() as i32 + 1;
        self.0.insert(value.clone(), index);
        index
    }

    /// The values, in index order, after `zero`.
    fn into_table(self, zero: T) -> Vec<T> {
        let mut values: Vec<(i32, T)> = self.0.into_iter().map(|(v, i)| (i, v)).collect();
        values.sort_unstable_by_key(|&(i, _)| i);
        std::iter::once(zero)
            .chain(values.into_iter().map(|(_, v)| v))
            .collect()
    }
}

/// The export of a pprof profile: its tables become the dictionary (pprof
/// ids are 1-based, so an id is the index after OTLP's zero entries), each
/// sample type a profile; the `inuse_` ones with the attribute
/// [`LIVE_KEY`], `live_meaning`; the samples of the sites the `watch`
/// raised with [`SUSPECT_KEY`].
fn from_pprof(
    profile: pprof::proto::Profile,
    process: &Process,
    live_meaning: Option<&str>,
    watch: &Watch,
) -> proto::ExportProfilesServiceRequest {
    let pprof::proto::Profile {
        sample_type,
        sample: samples,
        location,
        function,
        string_table,
        time_nanos,
        duration_nanos,
        period_type,
        period,
        default_sample_type,
        ..
    } = profile;
    // The strings the export refers to, each once: not pprof's label keys,
    // nor its label values, which attributes hold themselves.
    let old = string_table;
    let mut strings: Indexed<String> = Indexed::new();
    let mut string = |text: &str| -> i32 {
        if text.is_empty() {
            0
        } else {
            strings.index(&text.to_owned())
        }
    };
    let (class_key, thread_key) = (string(CLASS_KEY), string(THREAD_KEY));
    let suspect_key = (!watch.raised.is_empty()).then(|| string(SUSPECT_KEY));
    // When the agent first raised the allocation site (the leaf frame,
    // `pkg.Class.method(line)`) and class of a sample, if it did.
    let first_raised = |sample: &pprof::proto::Sample| -> Option<i64> {
        if watch.raised.is_empty() {
            return None;
        }
        let leaf = location.get((*sample.location_id.first()? as usize).checked_sub(1)?)?;
        let line = leaf.line.first()?;
        let name = &old[function
            .get((line.function_id as usize).checked_sub(1)?)?
            .name as usize];
        let site = if line.line == 0 {
            name.clone()
        } else {
            format!("{name}({})", line.line)
        };
        let class = sample
            .label
            .iter()
            .find(|label| old[label.key as usize] == pprof::CLASS_LABEL)
            .map_or("", |label| old[label.str as usize].as_str());
        watch.first_raised(&site, class)
    };
    let suspects: Vec<Option<i64>> = samples.iter().map(first_raised).collect();
    // Attributes by key (string index) and value.
    let mut attributes: Indexed<(i32, String)> = Indexed::new();
    let frame_type = attributes.index(&(string(FRAME_TYPE_KEY), "jvm".to_owned()));
    let live =
        live_meaning.map(|meaning| attributes.index(&(string(LIVE_KEY), meaning.to_owned())));
    let mut stacks: Indexed<Vec<i32>> = Indexed::new();
    let function_table = std::iter::once(proto::Function::default())
        .chain(function.into_iter().map(|f| proto::Function {
            name_strindex: string(&old[f.name as usize]),
            system_name_strindex: string(&old[f.system_name as usize]),
            filename_strindex: string(&old[f.filename as usize]),
            start_line: f.start_line,
        }))
        .collect();
    let location_table = std::iter::once(proto::Location::default())
        .chain(location.into_iter().map(|l| {
            proto::Location {
                lines: l
                    .line
                    .into_iter()
                    .map(|line| proto::Line {
                        function_index: line.function_id as i32,
                        line: line.line,
                        column: line.column,
                    })
                    .collect(),
                attribute_indices: vec![frame_type],
                ..proto::Location::default()
            }
        }))
        .collect();
    // Each pprof sample's stack and attributes, then its values by type.
    let keyed: Vec<(i32, Vec<i32>)> = samples
        .iter()
        .zip(&suspects)
        .map(|(sample, first_raised)| {
            let locations: Vec<i32> = sample.location_id.iter().map(|&id| id as i32).collect();
            let stack = stacks.index(&locations);
            let mut sample_attributes: Vec<i32> = sample
                .label
                .iter()
                .filter_map(|label| {
                    let key = match old[label.key as usize].as_str() {
                        pprof::CLASS_LABEL => class_key,
                        pprof::THREAD_LABEL => thread_key,
                        _ => return None,
                    };
                    Some(attributes.index(&(key, old[label.str as usize].clone())))
                })
                .collect();
            if let Some((key, nanos)) = suspect_key.zip(*first_raised) {
                sample_attributes.push(attributes.index(&(key, iso(nanos))));
            }
            (stack, sample_attributes)
        })
        .collect();
    let mut value_type = |t: &pprof::proto::ValueType| proto::ValueType {
        type_strindex: string(&old[t.r#type as usize]),
        unit_strindex: string(&old[t.unit as usize]),
    };
    let period_type = period_type.as_ref().map(&mut value_type);
    let mut order: Vec<usize> = (0..sample_type.len()).collect();
    // The default first, the others in pprof's order.
    if let Some(at) = sample_type
        .iter()
        .position(|t| t.r#type == default_sample_type)
    {
        order.remove(at);
        order.insert(0, at);
    }
    let profiles = order
        .into_iter()
        .map(|at| proto::Profile {
            attribute_indices: live
                .filter(|_| old[sample_type[at].r#type as usize].starts_with("inuse_"))
                .into_iter()
                .collect(),
            sample_type: Some(value_type(&sample_type[at])),
            samples: samples
                .iter()
                .zip(&keyed)
                .filter(|(sample, _)| sample.value[at] != 0)
                .map(|(sample, (stack, attributes))| proto::Sample {
                    stack_index: *stack,
                    attribute_indices: attributes.clone(),
                    values: vec![sample.value[at]],
                    ..proto::Sample::default()
                })
                .collect(),
            time_unix_nano: time_nanos.max(0) as u64,
            duration_nano: duration_nanos.max(0) as u64,
            period_type,
            period,
            ..proto::Profile::default()
        })
        .collect();
    let attribute_table = attributes
        .into_table((0, String::new()))
        .into_iter()
        .map(|(key, value)| {
            if key == 0 {
                return proto::KeyValueAndUnit::default();
            }
            proto::KeyValueAndUnit {
                key_strindex: key,
                value: Some(string_value(&value)),
                unit_strindex: 0,
            }
        })
        .collect();
    let stack_table = stacks
        .into_table(Vec::new())
        .into_iter()
        .map(|location_indices| proto::Stack { location_indices })
        .collect();
    proto::ExportProfilesServiceRequest {
        resource_profiles: vec![proto::ResourceProfiles {
            resource: Some(proto::Resource {
                attributes: resource_attributes(process),
                ..proto::Resource::default()
            }),
            scope_profiles: vec![proto::ScopeProfiles {
                scope: Some(proto::InstrumentationScope {
                    name: "heapsampler".to_owned(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    ..proto::InstrumentationScope::default()
                }),
                profiles,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
        dictionary: Some(proto::ProfilesDictionary {
            mapping_table: vec![proto::Mapping::default()],
            location_table,
            function_table,
            link_table: vec![proto::Link::default()],
            string_table: strings.into_table(String::new()),
            attribute_table,
            stack_table,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resource's attributes as `key=value`, in order.
    fn attributes(process: &Process) -> Vec<String> {
        resource_attributes(process)
            .into_iter()
            .map(|kv| {
                let value = match kv.value.and_then(|v| v.value) {
                    Some(proto::any_value::Value::StringValue(text)) => text,
                    Some(proto::any_value::Value::IntValue(n)) => n.to_string(),
                    other => format!("{other:?}"),
                };
                format!("{}={value}", kv.key)
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn system_properties_come_before_what_jvm_information_tells() {
        // As a JVM that records the Java-level properties would.
        let process = Process {
            pid: Some(42),
            start_millis: Some(0),
            jvm_name: Some("OpenJDK 64-Bit Server VM".to_owned()),
            jvm_version: Some(
                "OpenJDK 64-Bit Server VM (21+35) for bsd-aarch64 JRE (21+35)".to_owned(),
            ),
            properties: pairs(&[
                ("java.runtime.name", "OpenJDK Runtime Environment"),
                ("java.runtime.version", "21+35"),
                ("java.vm.version", "21+35-vm"),
                ("os.name", "Mac OS X"),
                ("os.arch", "aarch64"),
                ("user.name", "duke"),
            ]),
            environment: pairs(&[("HOSTNAME", "build-7")]),
        };
        assert_eq!(
            attributes(&process),
            [
                "service.name=unknown_service:java",
                "process.pid=42",
                "process.creation.time=1970-01-01T00:00:00.000Z",
                "process.runtime.name=OpenJDK Runtime Environment",
                "process.runtime.version=21+35",
                "process.runtime.description=21+35-vm",
                "process.owner=duke",
                "os.type=darwin",
                "host.arch=arm64",
                "host.name=build-7",
            ]
        );
        // HotSpot's own: the platform it was built for.
        let hotspot = Process {
            properties: pairs(&[("java.vm.version", "21+35-vm")]),
            environment: Vec::new(),
            ..process
        };
        let found = attributes(&hotspot);
        assert!(found.contains(&"os.type=darwin".to_owned()), "{found:?}");
        assert!(found.contains(&"host.arch=arm64".to_owned()), "{found:?}");
        assert!(found.contains(&"process.runtime.name=OpenJDK 64-Bit Server VM".to_owned()));
        assert!(found.contains(&"process.runtime.version=21+35-vm".to_owned()));
        assert!(!found.iter().any(|a| a.starts_with("host.name")));
    }

    #[test]
    fn a_recording_that_says_nothing_of_its_jvm_has_the_service_name_alone() {
        assert_eq!(
            attributes(&Process::default()),
            ["service.name=unknown_service:java"]
        );
    }
}
