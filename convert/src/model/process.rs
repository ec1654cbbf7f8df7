//! What a recording says of the JVM it was made in: `jdk.JVMInformation`
//! (pid, start, name and version), the system properties
//! (`jdk.InitialSystemProperty`) and the environment variables
//! (`jdk.InitialEnvironmentVariable`). The JDK and heapsampler's agent
//! write them at every chunk's start, as chunks are self-contained, so the
//! first chunk's are the recording's ([`read`]). What identifies a
//! recording among a fleet's (Parquet's columns) is read from here.
//!
//! HotSpot records only the VM's own properties (`java.vm.version`,
//! `java.home`..., no `java.runtime.*`, `os.*` or `user.name`).

use jfr_format::names::{event, field};

use crate::model::text::Flattener;
use jfr_reader::ReadError;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;

/// What a recording says of its JVM: one chunk's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Process {
    /// `jdk.JVMInformation`'s `pid`.
    pub pid: Option<i64>,
    /// `jdk.JVMInformation`'s `jvmStartTime`, milliseconds since the epoch.
    pub start_millis: Option<i64>,
    /// `jdk.JVMInformation`'s `jvmName` (`OpenJDK 64-Bit Server VM`).
    pub jvm_name: Option<String>,
    /// `jdk.JVMInformation`'s `jvmVersion`, the line of `java -version`
    /// that ends `for linux-amd64 JRE (...)`.
    pub jvm_version: Option<String>,
    /// System properties, in the order met, each once.
    pub properties: Vec<(String, String)>,
    /// Environment variables, in the order met, each once.
    pub environment: Vec<(String, String)>,
}

impl Process {
    /// The system property `key`, when the recording has it.
    pub fn property(&self, key: &str) -> Option<&str> {
        value_of(&self.properties, key)
    }

    /// The environment variable `key`, when the recording has it.
    pub fn variable(&self, key: &str) -> Option<&str> {
        value_of(&self.environment, key)
    }

    /// The JVM's feature release (17, 21, 25): the leading number of
    /// `java.vm.version` (`17.0.15+6-Debian-1deb12u1`), else of the version
    /// in `jvmVersion`'s parentheses (`... (25.0.3+9-LTS) for linux-amd64
    /// ...`).
    pub fn feature_release(&self) -> Option<u32> {
        let version = self.property("java.vm.version").or_else(|| {
            let text = self.jvm_version.as_deref()?;
            Some(&text[text.find('(')? + 1..])
        })?;
        let digits = version
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(version.len());
        version[..digits].parse().ok()
    }

    /// What a table of estimates from this JVM's heap sampler (JVMTI
    /// `SampledObjectAlloc`, what heapsampler's agent records) says under
    /// its intervals when the sampler is one before JDK 25: its byte
    /// bookkeeping around TLABs moves samples between objects
    /// (JDK-8356372, rewritten in JDK 25; measured in BENCHMARKS.md,
    /// "Intervals on the JVM's own sampler"), so its sites' estimates can
    /// be off by more than their intervals say.
    pub fn sampler_note(&self) -> Option<String> {
        let release = self.feature_release().filter(|r| *r < 25)?;
        Some(format!(
            "note: the intervals assume JDK 25's sampler: JDK {release}'s moves some samples \
             between objects of different sizes (JDK-8356372), and a site's estimate can be off \
             by more than its interval, most where arrays of KiBs are allocated beside small \
             objects (see README)"
        ))
    }
}

/// What `recording`'s first chunk says of its JVM, read anew from its
/// start (nothing when that chunk cannot be read: reading the recording
/// then says why; nor from a stream, which cannot be read again).
pub fn of_recording(recording: &RecordingFile) -> Process {
    let first = recording
        .reopen()
        .ok()
        .and_then(|mut file| file.next_chunk().ok().flatten());
    first
        .and_then(|raw| {
            let chunk = Chunk::read(&raw.bytes, raw.offset).ok()?;
            read(&chunk).ok()
        })
        .unwrap_or_default()
}

fn value_of<'p>(pairs: &'p [(String, String)], key: &str) -> Option<&'p str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What an event tells of the process.
enum Describes<'c> {
    Jvm(EventPlan<'c>),
    Property(EventPlan<'c>),
    Environment(EventPlan<'c>),
}

/// What `chunk` says of its JVM (the first of each event where the chunk
/// repeats one).
pub fn read(chunk: &Chunk<'_>) -> Result<Process, ReadError> {
    let mut process = Process::default();
    let text = Flattener::new(chunk, 1);
    let mut types: TypeMap<Option<Describes<'_>>> = TypeMap::default();
    for raw_event in chunk.raw_events() {
        let mut raw_event = raw_event?;
        let Some(describes) = types.get_or_insert_with(raw_event.type_id, || {
            let plan = chunk.plan(raw_event.type_id)?;
            match plan.class().name.as_str() {
                event::JVM_INFORMATION => Some(Describes::Jvm(plan)),
                event::INITIAL_SYSTEM_PROPERTY => Some(Describes::Property(plan)),
                event::INITIAL_ENVIRONMENT_VARIABLE => Some(Describes::Environment(plan)),
                _ => None,
            }
        }) else {
            continue;
        };
        let plan = match describes {
            Describes::Jvm(plan) | Describes::Property(plan) | Describes::Environment(plan) => plan,
        };
        let names = &plan.class().fields;
        let (mut pid, mut start) = (None, None);
        let (mut jvm_name, mut jvm_version) = (Value::Null, Value::Null);
        let (mut key, mut value) = (Value::Null, Value::Null);
        plan.read(
            &mut raw_event,
            &mut |index: usize, field_value: Field<'_>| match names[index].name.as_str() {
                field::PID => pid = field_value.integer(),
                field::JVM_START_TIME => start = field_value.integer(),
                field::JVM_NAME => jvm_name = field_value.into_value(),
                field::JVM_VERSION => jvm_version = field_value.into_value(),
                field::KEY => key = field_value.into_value(),
                field::VALUE => value = field_value.into_value(),
                _ => {}
            },
        )?;
        match describes {
            Describes::Jvm(_) => {
                process.pid = process.pid.or(pid);
                process.start_millis = process.start_millis.or(start);
                process.jvm_name = process.jvm_name.take().or(Some(text.text(&jvm_name)));
                let version = Some(text.text(&jvm_version));
                process.jvm_version = process.jvm_version.take().or(version);
            }
            Describes::Property(_) | Describes::Environment(_) => {
                let list = if matches!(describes, Describes::Property(_)) {
                    &mut process.properties
                } else {
                    &mut process.environment
                };
                let key = text.text(&key);
                if !key.is_empty() && !list.iter().any(|(k, _)| *k == key) {
                    list.push((key, text.text(&value)));
                }
            }
        }
    }
    Ok(process)
}

#[cfg(test)]
mod tests {
    use super::Process;

    #[test]
    fn the_feature_release_is_read_from_the_vm_version_or_the_jvm_version() {
        let property = |version: &str| Process {
            properties: vec![("java.vm.version".into(), version.into())],
            ..Process::default()
        };
        assert_eq!(
            property("17.0.15+6-Debian-1deb12u1").feature_release(),
            Some(17)
        );
        assert_eq!(property("25.0.3+9-LTS").feature_release(), Some(25));
        let line = Process {
            jvm_version: Some(
                "OpenJDK 64-Bit Server VM (21.0.1+12-LTS) for linux-amd64 JRE (21.0.1+12-LTS)"
                    .into(),
            ),
            ..Process::default()
        };
        assert_eq!(line.feature_release(), Some(21));
        assert!(line.sampler_note().unwrap().contains("JDK 21's"));
        assert_eq!(property("25.0.3+9-LTS").sampler_note(), None);
        assert_eq!(Process::default().feature_release(), None);
        assert_eq!(Process::default().sampler_note(), None);
    }
}
