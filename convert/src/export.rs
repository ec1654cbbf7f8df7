//! `heapsampler convert`: events to CSV, one row per event and one column
//! per field in metadata order, nested values flattened the way a
//! spreadsheet wants them:
//!
//! - a thread is its Java name (the OS name when it has none);
//! - a class is its Java name: `java.lang.String`, `int[]`;
//! - a stack trace is its frames, top first, `pkg.Class.method(line)` joined
//!   with `;` (at most `stack_depth` of them);
//! - a method is `pkg.Class.method`; simple types (symbols, frame types)
//!   are their text; other pooled types their `name` field when they have one;
//! - a `@Timestamp` is ISO-8601 UTC with nanoseconds, a `@Timespan` is
//!   nanoseconds; booleans are `true`/`false`; null is empty.

use std::collections::HashMap;
use std::io::Write;

use jfr_writer::format::ChunkHeader;

use crate::read::ReadError;
use crate::read::chunk::{Chunk, Event, Value};
use crate::read::metadata::{ClassInfo, FieldInfo, Metadata};

/// How a column's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Plain,
    TimestampTicks,
    TimestampMillis,
    TimespanTicks,
    TimespanScale(i64),
}

fn unit(metadata: &Metadata, field: &FieldInfo) -> Unit {
    for annotation in &field.annotations {
        let name = metadata
            .class(annotation.class_id)
            .map_or("", |c| c.name.as_str());
        let value = annotation
            .values
            .iter()
            .find(|(k, _)| k == "value")
            .map(|(_, v)| v.as_str());
        match (name, value) {
            ("jdk.jfr.Timestamp", Some("TICKS")) => return Unit::TimestampTicks,
            ("jdk.jfr.Timestamp", Some("MILLISECONDS_SINCE_EPOCH")) => {
                return Unit::TimestampMillis;
            }
            ("jdk.jfr.Timespan", Some("TICKS")) => return Unit::TimespanTicks,
            ("jdk.jfr.Timespan", Some("MICROSECONDS")) => return Unit::TimespanScale(1_000),
            ("jdk.jfr.Timespan", Some("MILLISECONDS")) => return Unit::TimespanScale(1_000_000),
            ("jdk.jfr.Timespan", Some("SECONDS")) => return Unit::TimespanScale(1_000_000_000),
            _ => {}
        }
    }
    Unit::Plain
}

/// A class name as Java writes it: `java/lang/String` -> `java.lang.String`,
/// `[I` -> `int[]`, `[[Ljava/lang/String;` -> `java.lang.String[][]`.
pub fn java_class_name(internal: &str) -> String {
    let dimensions = internal.bytes().take_while(|&b| b == b'[').count();
    let element = &internal[dimensions..];
    let base = if dimensions == 0 {
        element.replace('/', ".")
    } else {
        match element {
            "Z" => "boolean".to_owned(),
            "B" => "byte".to_owned(),
            "C" => "char".to_owned(),
            "S" => "short".to_owned(),
            "I" => "int".to_owned(),
            "J" => "long".to_owned(),
            "F" => "float".to_owned(),
            "D" => "double".to_owned(),
            object => object
                .trim_start_matches('L')
                .trim_end_matches(';')
                .replace('/', "."),
        }
    };
    format!("{base}{}", "[]".repeat(dimensions))
}

/// Writes a chunk's events as CSV rows (one writer per event type).
pub struct Flattener<'c, 'a> {
    chunk: &'c Chunk<'a>,
    stack_depth: usize,
}

impl<'c, 'a> Flattener<'c, 'a> {
    /// Flattens values of `chunk`, keeping at most `stack_depth` frames.
    pub fn new(chunk: &'c Chunk<'a>, stack_depth: usize) -> Self {
        Self { chunk, stack_depth }
    }

    /// The column names of an event type.
    pub fn header(class: &ClassInfo) -> Vec<String> {
        class.fields.iter().map(|f| f.name.clone()).collect()
    }

    /// One event's cells.
    pub fn row(&self, event: &Event) -> Vec<String> {
        let metadata = &self.chunk.metadata;
        let class = metadata
            .class(event.type_id)
            .expect("events have declared types");
        class
            .fields
            .iter()
            .zip(&event.fields)
            .map(|(field, value)| self.cell(field, value))
            .collect()
    }

    fn cell(&self, field: &FieldInfo, value: &Value) -> String {
        let value = self.chunk.resolve(value);
        let header = &self.chunk.header;
        match (unit(&self.chunk.metadata, field), value) {
            (Unit::TimestampTicks, Value::Long(ticks)) => iso(epoch_nanos(header, *ticks)),
            (Unit::TimestampMillis, Value::Long(millis)) => iso(millis.saturating_mul(1_000_000)),
            (Unit::TimespanTicks, Value::Long(ticks)) => ((*ticks as f64) * 1e9
                / header.ticks_per_second as f64)
                .round()
                .to_string(),
            (Unit::TimespanScale(scale), Value::Long(amount)) => {
                amount.saturating_mul(scale).to_string()
            }
            _ => self.text(value),
        }
    }

    /// The text of a value, as its CSV cell shows it (a thread's name, a
    /// class's Java name...), but without a field's unit applied.
    pub fn text(&self, value: &Value) -> String {
        let value = self.chunk.resolve(value);
        match value {
            Value::Null => String::new(),
            Value::Boolean(b) => b.to_string(),
            Value::Byte(v) => v.to_string(),
            Value::Short(v) => v.to_string(),
            Value::Char(v) => String::from_utf16_lossy(&[*v]),
            Value::Int(v) => v.to_string(),
            Value::Long(v) => v.to_string(),
            Value::Float(v) => v.to_string(),
            Value::Double(v) => v.to_string(),
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .map(|i| self.text(i))
                .collect::<Vec<_>>()
                .join(";"),
            Value::Ref { .. } => String::new(), // resolved above; a missing key is null
            Value::Object { class_id, fields } => self.object(*class_id, fields),
        }
    }

    fn field<'v>(
        &'v self,
        class: &ClassInfo,
        fields: &'v [Value],
        name: &str,
    ) -> Option<(&'v Value, u64)> {
        let index = class.fields.iter().position(|f| f.name == name)?;
        Some((
            self.chunk.resolve(&fields[index]),
            class.fields[index].class_id,
        ))
    }

    fn object(&self, class_id: u64, fields: &[Value]) -> String {
        let metadata = &self.chunk.metadata;
        let Some(class) = metadata.class(class_id) else {
            return String::new();
        };
        let text = |name: &str| {
            self.field(class, fields, name)
                .map(|(v, _)| self.text(v))
                .unwrap_or_default()
        };
        match class.name.as_str() {
            "java.lang.Thread" => {
                let java_name = text("javaName");
                if java_name.is_empty() {
                    text("osName")
                } else {
                    java_name
                }
            }
            "java.lang.Class" => java_class_name(&text("name")),
            "jdk.types.Method" => format!("{}.{}", text("type"), text("name")),
            "jdk.types.StackTrace" => self.stack_frames(class, fields, true).join(";"),
            _ if class.simple_type && class.fields.len() == 1 => {
                fields.first().map(|v| self.text(v)).unwrap_or_default()
            }
            _ if class.fields.iter().any(|f| f.name == "name") => text("name"),
            _ => class
                .fields
                .iter()
                .zip(fields)
                .map(|(f, v)| format!("{}={}", f.name, self.text(v)))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The frames of a stack trace value, top first, at most `stack_depth`
    /// of them: `pkg.Class.method`, followed by `(line)` when `lines` is set
    /// and the line is known. Empty for a null stack trace.
    pub fn frames(&self, stack_trace: &Value, lines: bool) -> Vec<String> {
        match self.chunk.resolve(stack_trace) {
            Value::Object { class_id, fields } => match self.chunk.metadata.class(*class_id) {
                Some(class) if class.name == "jdk.types.StackTrace" => {
                    self.stack_frames(class, fields, lines)
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn stack_frames(&self, class: &ClassInfo, fields: &[Value], lines: bool) -> Vec<String> {
        let Some((Value::Array(frames), _)) = self.field(class, fields, "frames") else {
            return Vec::new();
        };
        frames
            .iter()
            .take(self.stack_depth)
            .map(|frame| self.frame(frame, lines))
            .collect()
    }

    /// `pkg.Class.method(line)`, or without the line when it is unknown or
    /// not wanted.
    fn frame(&self, frame: &Value, lines: bool) -> String {
        let Value::Object { class_id, fields } = self.chunk.resolve(frame) else {
            return String::new();
        };
        let Some(class) = self.chunk.metadata.class(*class_id) else {
            return String::new();
        };
        let method = self
            .field(class, fields, "method")
            .map(|(v, _)| self.text(v))
            .unwrap_or_default();
        match self.field(class, fields, "lineNumber") {
            Some((Value::Int(line), _)) if lines && *line >= 0 => format!("{method}({line})"),
            _ => method,
        }
    }
}

/// A `@Timestamp(TICKS)` value of a chunk as nanoseconds since the epoch,
/// by the chunk's own clock (its start in ticks and in nanoseconds).
pub fn epoch_nanos(header: &ChunkHeader, ticks: i64) -> i64 {
    let per_nano = header.ticks_per_second as f64 / 1e9;
    header.start_nanos + ((ticks - header.start_ticks) as f64 / per_nano) as i64
}

fn iso(nanos: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(nanos)
        .format("%Y-%m-%dT%H:%M:%S%.9fZ")
        .to_string()
}

/// Writes the events of `chunk` that `keep` accepts as CSV, one writer per
/// type (made on first need by `open`). Counts rows written per type in `rows`.
pub fn write_csv<W: Write>(
    chunk: &Chunk<'_>,
    keep: &dyn Fn(&ClassInfo, &Event) -> bool,
    stack_depth: usize,
    writers: &mut HashMap<String, csv::Writer<W>>,
    open: &mut dyn FnMut(&str) -> std::io::Result<W>,
    rows: &mut HashMap<String, u64>,
) -> Result<(), ExportError> {
    let flattener = Flattener::new(chunk, stack_depth);
    for event in chunk.events() {
        let event = event?;
        let class = chunk
            .metadata
            .class(event.type_id)
            .expect("events have declared types");
        if !keep(class, &event) {
            continue;
        }
        if !writers.contains_key(&class.name) {
            let mut writer = csv::Writer::from_writer(open(&class.name)?);
            writer.write_record(Flattener::header(class))?;
            writers.insert(class.name.clone(), writer);
        }
        let writer = writers.get_mut(&class.name).expect("just inserted");
        writer.write_record(flattener.row(&event))?;
        *rows.entry(class.name.clone()).or_insert(0) += 1;
    }
    Ok(())
}

/// What can go wrong exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The recording is malformed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing the output failed.
    #[error("writing CSV: {0}")]
    Io(#[from] std::io::Error),
    /// The CSV writer failed.
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_read_the_java_way() {
        assert_eq!(java_class_name("java/lang/String"), "java.lang.String");
        assert_eq!(java_class_name("[I"), "int[]");
        assert_eq!(
            java_class_name("[[Ljava/lang/String;"),
            "java.lang.String[][]"
        );
        assert_eq!(
            java_class_name("java/util/HashMap$Node"),
            "java.util.HashMap$Node"
        );
        assert_eq!(
            java_class_name("[Ljava/util/HashMap$Node;"),
            "java.util.HashMap$Node[]"
        );
    }
}
