//! `heapsampler convert --format parquet`: the allocation samples of a
//! recording as a Parquet table, one row per event, with the recording's
//! identity on every row, so that the files of many recordings (of many
//! hosts, processes and days) are one dataset to Spark, DuckDB, Trino or
//! any lake engine: `SELECT ... FROM 'recordings/*.parquet'`.
//!
//! The columns, in this order ([`schema`]):
//!
//! | column | type | what |
//! |---|---|---|
//! | `recording` | string | the recording as named to `convert` (its path) |
//! | `host` | string, null | the JVM's environment variable `HOSTNAME` (what a container or a login shell sets) |
//! | `pid` | int64, null | `jdk.JVMInformation` `pid` |
//! | `jvm_start` | timestamp (µs, UTC), null | `jdk.JVMInformation` `jvmStartTime` |
//! | `jvm_name` | string, null | `jdk.JVMInformation` `jvmName` |
//! | `jvm_version` | string, null | system property `java.vm.version`, else `jdk.JVMInformation` `jvmVersion` |
//! | `event` | string | the event type: `jdk.ObjectAllocationSample`, `heapsampler.ObjectLifetime`, `jdk.ObjectAllocationInNewTLAB`, `jdk.ObjectAllocationOutsideTLAB` |
//! | `time` | timestamp (µs, UTC), null | when the object was allocated (the event's `startTime`) |
//! | `thread` | string, null | the allocating thread's name |
//! | `class` | string, null | the allocated class's Java name (`byte[]`, `java.lang.String`) |
//! | `weight` | double | the bytes the event stands for (what `heapsampler top` sums) |
//! | `size` | int64, null | the object's size, when the recording tells it ([`samples`]) |
//! | `tracked` | boolean, null | lifetimes: whether the agent tracked the object's liveness |
//! | `live` | boolean, null | lifetimes: still live at the end (null when not tracked) |
//! | `gcs_survived` | int64, null | lifetimes: the collections it outlived |
//! | `freed_by_gc_id` | int64, null | lifetimes: the `heapsampler.GarbageCollection` after which it was found dead (null while live) |
//! | `stack` | list of strings | the frames, top (the allocation site, `top`'s `site`) first: `pkg.Class.method(line)`; `[truncated]` last when frames nearer the root are missing |
//!
//! The identity comes from the recording's first chunk
//! ([`crate::model::process`]); a value it does not tell is null.
//! Timestamps are microseconds: Spark reads no nanosecond timestamps.
//!
//! An allocation sampled by heapsampler's agent has two events, two rows:
//! its `jdk.ObjectAllocationSample` when it was allocated, and its
//! `heapsampler.ObjectLifetime` once a collection freed it or the
//! recording ended. The JDK's recordings have `jdk.ObjectAllocationSample`
//! and may have TLAB events, which record the same allocations. So a sum
//! of bytes is a sum over one `event`: allocated bytes over
//! `jdk.ObjectAllocationSample` (what `top` sums), live bytes over
//! `heapsampler.ObjectLifetime` rows with `live` (what `top --live`
//! sums). `--events` keeps some of these types only.
//!
//! Why the stack is a list of frames in each row, not an id into a second
//! table of stacks: one file per recording is what a lake holds and a glob
//! reads, with no join to get wrong across files and no ids to keep
//! apart between recordings; DuckDB and Spark index lists (`stack[1]`,
//! `element_at(stack, 1)`), search them (`list_contains`,
//! `array_contains`) and unnest them. Parquet's dictionary encoding stores
//! each distinct frame once per row group, and a row's frames as small
//! indexes (run-length encoded where rows repeat a stack): the file stays
//! compact without a stack table.
//!
//! The file is written as the recording is read: each chunk's rows are
//! encoded into a row group (or several, of at most [`ROW_GROUP_ROWS`])
//! on the thread that read the chunk, and the row groups are appended in
//! chunk order ([`pipeline`](crate::pipeline)), so memory is bounded by a
//! few chunks' encoded rows, not by the recording. Columns are
//! zstd-compressed.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::{Int8Type, Int32Type};
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int8Array, Int32Array, Int64Array,
    ListArray, StringArray, TimestampMicrosecondArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

use crate::Error;
use crate::analysis::fold::TRUNCATED_FRAME;
use crate::model::allocation::Source;
use crate::model::filter::Filter;
use crate::model::process::{self, Process};
use crate::model::samples::{self, Kind, Sample, SampleVisitor};
use crate::model::text::{Flattener, epoch_nanos};
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_format::ChunkHeader;
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::Field;
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;

/// The kinds of events written, in the order of [`EVENT_TYPES`].
const SOURCES: [Source; 3] = [
    Source::AllocationSamples,
    Source::ObjectLifetimes,
    Source::TlabAllocations,
];

/// The event types written (`event`), by default all of them: the types
/// of the kinds read, in order: the samples, the lifetimes, the TLAB events.
pub const EVENT_TYPES: [&str; 4] = [
    jfr_format::names::event::OBJECT_ALLOCATION_SAMPLE,
    jfr_format::names::event::OBJECT_LIFETIME,
    jfr_format::names::event::OBJECT_ALLOCATION_IN_NEW_TLAB,
    jfr_format::names::event::OBJECT_ALLOCATION_OUTSIDE_TLAB,
];

/// The string columns (their Parquet paths).
const STRING_COLUMNS: [&str; 8] = [
    "recording",
    "host",
    "jvm_name",
    "jvm_version",
    "event",
    "thread",
    "class",
    "stack.list.item",
];

/// The most rows in a row group: a chunk's rows are one row group unless
/// it has more. Large enough for engines to read row groups efficiently,
/// small enough to bound what a thread holds encoded.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// Rows gathered into arrays before they are encoded: what a thread holds
/// unencoded.
const BATCH_ROWS: usize = 8192;

/// The index in [`EVENT_TYPES`] of a sample's event type.
fn type_index(kind: Kind) -> usize {
    SOURCES[..kind.source]
        .iter()
        .map(|s| s.types().len())
        .sum::<usize>()
        + kind.event_type
}

/// What identifies a recording among many: the same on each of its rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity {
    /// The recording as named (its path).
    pub recording: String,
    /// The JVM's `HOSTNAME`.
    pub host: Option<String>,
    /// The JVM's process id.
    pub pid: Option<i64>,
    /// When the JVM started, microseconds since the epoch.
    pub jvm_start_micros: Option<i64>,
    /// `OpenJDK 64-Bit Server VM`.
    pub jvm_name: Option<String>,
    /// `17.0.13+11-Debian-2`.
    pub jvm_version: Option<String>,
}

impl Identity {
    /// The identity of the recording named `recording`, from what its JVM
    /// says of itself.
    pub fn of(recording: String, process: &Process) -> Self {
        let text = |value: Option<&str>| value.filter(|v| !v.is_empty()).map(str::to_owned);
        Self {
            recording,
            host: text(process.variable("HOSTNAME")),
            pid: process.pid,
            jvm_start_micros: process.start_millis.map(|ms| ms.saturating_mul(1000)),
            jvm_name: text(process.jvm_name.as_deref()),
            jvm_version: text(process.property("java.vm.version"))
                .or_else(|| text(process.jvm_version.as_deref())),
        }
    }

    /// The identity of the recording `file`, named `recording`: what its
    /// first chunk says (nothing when that chunk cannot be read; reading
    /// the recording then says why).
    pub fn read(file: &Path, recording: String) -> Self {
        let first = RecordingFile::open(file)
            .ok()
            .and_then(|mut file| file.next_chunk().ok().flatten());
        let process = first
            .and_then(|raw| {
                let chunk = Chunk::read(&raw.bytes, raw.offset).ok()?;
                process::read(&chunk).ok()
            })
            .unwrap_or_default();
        Self::of(recording, &process)
    }
}

/// A string column's type: a dictionary of strings (each distinct string
/// once per batch), which Parquet stores as a plain string column.
fn dictionary(key: DataType) -> DataType {
    DataType::Dictionary(Box::new(key), Box::new(DataType::Utf8))
}

fn timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The frames of a stack: a list of strings.
fn frames_field() -> Arc<ArrowField> {
    Arc::new(ArrowField::new_list_field(
        dictionary(DataType::Int32),
        false,
    ))
}

/// The table's columns (see the [module doc](self)).
pub fn schema() -> SchemaRef {
    let string = || dictionary(DataType::Int32);
    Arc::new(Schema::new(vec![
        ArrowField::new("recording", string(), false),
        ArrowField::new("host", string(), true),
        ArrowField::new("pid", DataType::Int64, true),
        ArrowField::new("jvm_start", timestamp(), true),
        ArrowField::new("jvm_name", string(), true),
        ArrowField::new("jvm_version", string(), true),
        ArrowField::new("event", dictionary(DataType::Int8), false),
        ArrowField::new("time", timestamp(), true),
        ArrowField::new("thread", string(), true),
        ArrowField::new("class", string(), true),
        ArrowField::new("weight", DataType::Float64, false),
        ArrowField::new("size", DataType::Int64, true),
        ArrowField::new("tracked", DataType::Boolean, true),
        ArrowField::new("live", DataType::Boolean, true),
        ArrowField::new("gcs_survived", DataType::Int64, true),
        ArrowField::new("freed_by_gc_id", DataType::Int64, true),
        ArrowField::new("stack", DataType::List(frames_field()), false),
    ]))
}

/// How to write a recording's samples as Parquet.
#[derive(Debug, Clone)]
pub struct ParquetOptions<'o> {
    /// The event types to write, of [`EVENT_TYPES`]; empty: all of them.
    pub events: &'o [String],
    /// Which events to keep.
    pub filter: &'o Filter,
    /// Frames kept per stack, those nearest the top.
    pub stack_depth: usize,
    /// What identifies the recording, on every row.
    pub identity: &'o Identity,
}

/// What writing a recording as Parquet did.
#[derive(Debug, Clone, PartialEq)]
pub struct ParquetWritten {
    /// Rows written, per type of [`EVENT_TYPES`].
    pub rows: [u64; 4],
    /// Row groups written.
    pub row_groups: u64,
    /// What [`RecordingFile::truncated`] says of the recording.
    pub truncated: Option<(u64, u64)>,
}

impl ParquetWritten {
    /// Rows written.
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().sum()
    }
}

/// Event types of `events` that are not of [`EVENT_TYPES`].
pub fn unknown_types(events: &[String]) -> Vec<String> {
    events
        .iter()
        .filter(|name| !EVENT_TYPES.contains(&name.as_str()))
        .cloned()
        .collect()
}

/// Writes the samples of `file` as `options` say, as a Parquet file into
/// `out`, through `pipeline`, telling `progress` the bytes read.
pub fn write(
    file: RecordingFile,
    options: &ParquetOptions<'_>,
    out: Box<dyn Write + Send>,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<ParquetWritten, Error> {
    let recording = file.path().to_owned();
    let failed = |source| Error::Parquet {
        recording: recording.clone(),
        source,
    };
    let schema = schema();
    let column = |path: &str| ColumnPath::from(path);
    let mut properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(format!("heapsampler {}", env!("CARGO_PKG_VERSION")))
        // Times are nearly all distinct and nearly in order: deltas, not a
        // dictionary that would overflow.
        .set_column_dictionary_enabled(column("time"), false)
        .set_column_encoding(column("time"), Encoding::DELTA_BINARY_PACKED)
        .set_statistics_enabled(EnabledStatistics::Page);
    // The minimum and maximum of a page of frames, threads or classes tell
    // a query little, and cost two string comparisons per value: a tenth
    // of the time. (A recording's identity is one value per column chunk:
    // its dictionary, which an engine reads before the rows anyway.)
    for path in STRING_COLUMNS {
        properties =
            properties.set_column_statistics_enabled(column(path), EnabledStatistics::None);
    }
    let properties = properties.build();
    let parquet_schema = ArrowSchemaConverter::new()
        .convert(&schema)
        .map_err(failed)?;
    let writer =
        SerializedFileWriter::new(out, parquet_schema.root_schema_ptr(), Arc::new(properties))
            .map_err(failed)?;
    let factory = ArrowRowGroupWriterFactory::new(&writer, Arc::clone(&schema));
    let wanted: Vec<bool> = EVENT_TYPES
        .iter()
        .map(|name| options.events.is_empty() || options.events.iter().any(|e| e == name))
        .collect();
    let sources: Vec<Source> = SOURCES
        .iter()
        .copied()
        .filter(|source| {
            source
                .types()
                .iter()
                .any(|t| wanted[EVENT_TYPES.iter().position(|e| *e == t.event_type).unwrap()])
        })
        .collect();
    let writing = Writing {
        recording: recording.clone(),
        schema,
        factory,
        identity: options.identity,
        filter: options.filter,
        stack_depth: options.stack_depth,
        sources,
        wanted,
    };
    let merged = Merged {
        writer,
        rows: [0; 4],
        row_groups: 0,
    };
    let ran = pipeline.run(file, &writing, merged, progress)?;
    let Merged {
        writer,
        rows,
        row_groups,
    } = ran.merged;
    writer.close().map_err(failed)?;
    Ok(ParquetWritten {
        rows,
        row_groups,
        truncated: ran.truncated,
    })
}

/// Writing the samples of a recording: the work on each chunk, and the
/// row groups' merge into the file.
struct Writing<'o> {
    recording: PathBuf,
    schema: SchemaRef,
    factory: ArrowRowGroupWriterFactory,
    identity: &'o Identity,
    filter: &'o Filter,
    stack_depth: usize,
    /// The kinds of events read: those with a type wanted.
    sources: Vec<Source>,
    /// Per type of [`EVENT_TYPES`], whether it is written.
    wanted: Vec<bool>,
}

/// The file being written, and what went into it.
struct Merged {
    writer: SerializedFileWriter<Box<dyn Write + Send>>,
    rows: [u64; 4],
    row_groups: u64,
}

/// A row group, encoded: what the work on a chunk hands on.
pub struct RowGroup {
    columns: Vec<ArrowColumnChunk>,
    /// Rows per type of [`EVENT_TYPES`].
    rows: [u64; 4],
    /// The encoded bytes.
    bytes: usize,
}

impl std::fmt::Debug for RowGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowGroup")
            .field("rows", &self.rows)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl Analysis for Writing<'_> {
    type Part = RowGroup;
    type Merged = Merged;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(RowGroup) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let mut rows = ChunkRows {
            writing: self,
            header: &chunk.header,
            sources: &self.sources,
            batch: Batch::default(),
            strings: Strings::default(),
            threads_and_classes: IdMap::default(),
            stacks: IdMap::default(),
            frames: HashMap::new(),
            group: None,
            hand_on,
            ended: None,
        };
        samples::read_chunk(
            chunk,
            context.recording_start,
            &self.sources,
            self.filter,
            self.stack_depth,
            &mut rows,
        )?;
        if rows.ended.is_none() {
            rows.end_group();
        }
        match rows.ended {
            None => Ok(()),
            Some(Ended::Stopped) => Err(ChunkError::Stopped),
            Some(Ended::Failed(source)) => Err(ChunkError::Failed(Error::Parquet {
                recording: self.recording.clone(),
                source,
            })),
        }
    }

    fn merge(&self, merged: &mut Merged, group: RowGroup) -> Result<(), Error> {
        let failed = |source| Error::Parquet {
            recording: self.recording.clone(),
            source,
        };
        let mut row_group = merged.writer.next_row_group().map_err(failed)?;
        for column in group.columns {
            column.append_to_row_group(&mut row_group).map_err(failed)?;
        }
        row_group.close().map_err(failed)?;
        for (rows, more) in merged.rows.iter_mut().zip(group.rows) {
            *rows += more;
        }
        merged.row_groups += 1;
        Ok(())
    }

    fn part_bytes(&self, group: &RowGroup) -> usize {
        group.bytes
    }
}

/// Why the work on a chunk's rows ended before the chunk did.
enum Ended {
    Stopped,
    Failed(ParquetError),
}

/// Strings of a chunk (threads, classes, frames), each once, numbered in
/// order of arrival.
#[derive(Default)]
struct Strings {
    index: HashMap<String, i32>,
    values: Vec<String>,
    /// Per string, its number in the batch being encoded (-1: not in it).
    in_batch: Vec<i32>,
    /// The strings of the batch being encoded, in its order.
    batch: Vec<i32>,
}

impl Strings {
    fn index(&mut self, text: &str) -> i32 {
        if let Some(&index) = self.index.get(text) {
            return index;
        }
        let index = self.values.len() as i32;
        self.index.insert(text.to_owned(), index);
        self.values.push(text.to_owned());
        index
    }

    /// The number in the batch's dictionary of the string numbered
    /// `index` in the chunk. A batch's dictionary holds the strings it
    /// uses only, so that a chunk of many distinct strings (a thread per
    /// task) does not copy them all into every batch.
    fn in_batch(&mut self, index: i32) -> i32 {
        self.in_batch.resize(self.values.len(), -1);
        let slot = &mut self.in_batch[index as usize];
        if *slot < 0 {
            *slot = self.batch.len() as i32;
            self.batch.push(index);
        }
        *slot
    }

    /// The batch's dictionary, and a fresh one for the next batch.
    fn take_batch(&mut self) -> ArrayRef {
        let values = StringArray::from_iter_values(
            self.batch.iter().map(|&index| &self.values[index as usize]),
        );
        for &index in &self.batch {
            self.in_batch[index as usize] = -1;
        }
        self.batch.clear();
        Arc::new(values)
    }
}

/// Rows gathered, not yet encoded: column by column.
#[derive(Default)]
struct Batch {
    event: Vec<i8>,
    time: Vec<Option<i64>>,
    thread: Vec<Option<i32>>,
    class: Vec<Option<i32>>,
    weight: Vec<f64>,
    size: Vec<Option<i64>>,
    tracked: Vec<Option<bool>>,
    live: Vec<Option<bool>>,
    gcs_survived: Vec<Option<i64>>,
    freed_by_gc_id: Vec<Option<i64>>,
    /// Where each row's frames start in `frames`, and the end.
    stack_offsets: Vec<i32>,
    frames: Vec<i32>,
}

impl Batch {
    fn len(&self) -> usize {
        self.event.len()
    }
}

/// A row group being encoded.
struct Group {
    writers: Vec<ArrowColumnWriter>,
    rows: [u64; 4],
}

/// Turning a chunk's samples into row groups.
struct ChunkRows<'w, 'o, 'h> {
    writing: &'w Writing<'o>,
    header: &'w ChunkHeader,
    sources: &'w [Source],
    batch: Batch,
    strings: Strings,
    /// The string index of each pooled thread and class (`None`: no text).
    threads_and_classes: IdMap<(u64, u64), Option<i32>>,
    /// The frames (string indexes) of each pooled stack trace.
    stacks: IdMap<(u64, u64), Box<[i32]>>,
    /// The string index of each frame: its pooled method and line.
    frames: HashMap<(u64, u64, Option<u32>), i32>,
    group: Option<Group>,
    hand_on: &'h mut dyn FnMut(RowGroup) -> Result<(), Stopped>,
    ended: Option<Ended>,
}

impl SampleVisitor for ChunkRows<'_, '_, '_> {
    fn sample(&mut self, text: &Flattener<'_, '_>, kind: Kind, sample: &Sample<'_>) {
        let kind = Kind {
            source: SOURCES
                .iter()
                .position(|s| *s == self.sources[kind.source])
                .expect("read sources are of SOURCES"),
            ..kind
        };
        let event = type_index(kind);
        if self.ended.is_some() || !self.writing.wanted[event] {
            return;
        }
        let lifetime = SOURCES[kind.source] == Source::ObjectLifetimes;
        let thread = self.text_index(text, &sample.event_thread);
        let class = self.text_index(text, &sample.object_class);
        let time = sample
            .start_time
            .map(|ticks| epoch_nanos(self.header, ticks).div_euclid(1000));
        let size = sample.size.map(|size| size.min(i64::MAX as u64) as i64);
        self.stack(text, &sample.stack_trace);
        let batch = &mut self.batch;
        batch.event.push(event as i8);
        batch.time.push(time);
        batch.thread.push(thread);
        batch.class.push(class);
        batch.weight.push(sample.weight);
        batch.size.push(size);
        let count = |n: u64| Some(n.min(i64::MAX as u64) as i64);
        if lifetime {
            let known = sample.tracked;
            batch.tracked.push(Some(sample.tracked));
            batch.live.push(known.then_some(sample.live));
            batch.gcs_survived.push(count(sample.gcs_survived));
            let freed = known && !sample.live;
            batch
                .freed_by_gc_id
                .push(freed.then(|| count(sample.freed_by_gc_id)).flatten());
        } else {
            batch.tracked.push(None);
            batch.live.push(None);
            batch.gcs_survived.push(None);
            batch.freed_by_gc_id.push(None);
        }
        self.group
            .get_or_insert_with(|| Group {
                writers: Vec::new(),
                rows: [0; 4],
            })
            .rows[event] += 1;
        if self.batch.len() >= BATCH_ROWS {
            self.encode_batch();
            let rows: u64 = self.group.as_ref().map_or(0, |g| g.rows.iter().sum());
            if rows >= ROW_GROUP_ROWS as u64 {
                self.end_group();
            }
        }
    }
}

impl ChunkRows<'_, '_, '_> {
    /// The string index of a thread's or class's text (`None`: it has none).
    fn text_index(&mut self, text: &Flattener<'_, '_>, value: &Field<'_>) -> Option<i32> {
        match *value {
            Field::Pooled { class_id, key } => {
                if let Some(&index) = self.threads_and_classes.get(&(class_id, key)) {
                    return index;
                }
                let name = text.text(&Value::Ref { class_id, key });
                let index = (!name.is_empty()).then(|| self.strings.index(&name));
                self.threads_and_classes.insert((class_id, key), index);
                index
            }
            Field::Null => None,
            ref inline => {
                let name = text.text(&inline.clone().into_value());
                (!name.is_empty()).then(|| self.strings.index(&name))
            }
        }
    }

    /// Appends a row's frames: a stack trace's, made once per chunk.
    fn stack(&mut self, text: &Flattener<'_, '_>, stack_trace: &Field<'_>) {
        if self.batch.stack_offsets.is_empty() {
            self.batch.stack_offsets.push(0);
        }
        match *stack_trace {
            Field::Pooled { class_id, key } => {
                if !self.stacks.contains_key(&(class_id, key)) {
                    let frames = self.frames_of(text, &Value::Ref { class_id, key });
                    self.stacks.insert((class_id, key), frames);
                }
                let frames = &self.stacks[&(class_id, key)];
                self.batch.frames.extend_from_slice(frames);
            }
            Field::Null => {}
            ref inline => {
                let frames = self.frames_of(text, &inline.clone().into_value());
                self.batch.frames.extend_from_slice(&frames);
            }
        }
        let end = i32::try_from(self.batch.frames.len()).expect("a batch's frames fit in i32");
        self.batch.stack_offsets.push(end);
    }

    /// The frames of a stack trace, as string indexes, top first.
    fn frames_of(&mut self, text: &Flattener<'_, '_>, stack_trace: &Value) -> Box<[i32]> {
        let stack = text.stack_parts(stack_trace);
        let mut frames = Vec::with_capacity(stack.frames.len() + 1);
        for frame in &stack.frames {
            let pooled = match frame.method {
                Value::Ref { class_id, key } => Some((class_id, key, frame.line)),
                _ => None,
            };
            if let Some(&index) = pooled.as_ref().and_then(|key| self.frames.get(key)) {
                frames.push(index);
                continue;
            }
            let mut name = text.text(&frame.method);
            if let Some(line) = frame.line {
                name.push('(');
                name.push_str(itoa::Buffer::new().format(line));
                name.push(')');
            }
            let index = self.strings.index(&name);
            if let Some(key) = pooled {
                self.frames.insert(key, index);
            }
            frames.push(index);
        }
        if stack.truncated {
            frames.push(self.strings.index(TRUNCATED_FRAME));
        }
        frames.into_boxed_slice()
    }

    /// Encodes the rows gathered into the row group's column writers.
    fn encode_batch(&mut self) {
        if self.batch.len() == 0 || self.ended.is_some() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        if let Err(error) = self.try_encode(batch) {
            self.ended = Some(Ended::Failed(error));
        }
    }

    fn try_encode(&mut self, mut batch: Batch) -> Result<(), ParquetError> {
        let rows = batch.len();
        let strings = &mut self.strings;
        for key in batch.thread.iter_mut().chain(&mut batch.class).flatten() {
            *key = strings.in_batch(*key);
        }
        for key in &mut batch.frames {
            *key = strings.in_batch(*key);
        }
        let values = strings.take_batch();
        let strings = |keys: Vec<Option<i32>>| -> ArrayRef {
            Arc::new(DictionaryArray::<Int32Type>::new(
                Int32Array::from(keys),
                Arc::clone(&values),
            ))
        };
        let identity = self.writing.identity;
        let constant = |value: Option<&str>| -> ArrayRef {
            let values: ArrayRef = Arc::new(StringArray::from_iter_values(value));
            let keys = Int32Array::from(vec![value.map(|_| 0); rows]);
            Arc::new(DictionaryArray::<Int32Type>::new(keys, values))
        };
        let event_names: ArrayRef = Arc::new(StringArray::from_iter_values(EVENT_TYPES));
        let frames =
            DictionaryArray::<Int32Type>::new(Int32Array::from(batch.frames), Arc::clone(&values));
        let stack = ListArray::try_new(
            frames_field(),
            OffsetBuffer::new(batch.stack_offsets.into()),
            Arc::new(frames),
            None,
        )?;
        let columns: [ArrayRef; 17] = [
            constant(Some(&identity.recording)),
            constant(identity.host.as_deref()),
            Arc::new(Int64Array::from(vec![identity.pid; rows])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![identity.jvm_start_micros; rows])
                    .with_timezone("UTC"),
            ),
            constant(identity.jvm_name.as_deref()),
            constant(identity.jvm_version.as_deref()),
            Arc::new(DictionaryArray::<Int8Type>::new(
                Int8Array::from(batch.event),
                event_names,
            )),
            Arc::new(TimestampMicrosecondArray::from(batch.time).with_timezone("UTC")),
            strings(batch.thread),
            strings(batch.class),
            Arc::new(Float64Array::from(batch.weight)),
            Arc::new(Int64Array::from(batch.size)),
            Arc::new(BooleanArray::from(batch.tracked)),
            Arc::new(BooleanArray::from(batch.live)),
            Arc::new(Int64Array::from(batch.gcs_survived)),
            Arc::new(Int64Array::from(batch.freed_by_gc_id)),
            Arc::new(stack),
        ];
        let group = self.group.as_mut().expect("rows belong to a group");
        if group.writers.is_empty() {
            group.writers = self.writing.factory.create_column_writers(0)?;
        }
        let mut writers = group.writers.iter_mut();
        for (array, field) in columns.iter().zip(self.writing.schema.fields()) {
            for leaf in compute_leaves(field, array)? {
                let writer = writers
                    .next()
                    .ok_or_else(|| ParquetError::General("a column without a writer".into()))?;
                writer.write(&leaf)?;
            }
        }
        Ok(())
    }

    /// Encodes what is left of the row group, and hands it on.
    fn end_group(&mut self) {
        self.encode_batch();
        let Some(group) = self.group.take() else {
            return;
        };
        if self.ended.is_some() {
            return;
        }
        let columns: Result<Vec<ArrowColumnChunk>, ParquetError> =
            group.writers.into_iter().map(|w| w.close()).collect();
        let columns = match columns {
            Ok(columns) => columns,
            Err(error) => {
                self.ended = Some(Ended::Failed(error));
                return;
            }
        };
        let bytes = columns
            .iter()
            .map(|c| c.close().metadata.compressed_size().max(0) as usize)
            .sum();
        let group = RowGroup {
            columns,
            rows: group.rows,
            bytes,
        };
        if (self.hand_on)(group).is_err() {
            self.ended = Some(Ended::Stopped);
        }
    }
}
