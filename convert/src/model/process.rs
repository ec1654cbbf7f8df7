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
