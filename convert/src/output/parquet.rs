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
//! | `tracking_probability` | double, null | lifetimes: the probability with which its liveness was to be tracked ([`samples`]): a tracked row stands for `weight / tracking_probability` live bytes |
//! | `live` | boolean, null | lifetimes: still live at the end (null when not tracked) |
//! | `gcs_survived` | int64, null | lifetimes: the collections it outlived |
//! | `freed_by_gc_id` | int64, null | lifetimes: the `heapsampler.GarbageCollection` after which it was found dead (null while live) |
//! | `stack` | list of strings | the frames, top (the allocation site, `top`'s `site`) first: `pkg.Class.method(line)`; `[truncated]` last when frames nearer the root are missing |
//! | `leak_suspect_raised` | timestamp (µs, UTC), null | when the agent first raised the row's site (its stack's top frame and its class) as a leak suspect (`heapsampler.LeakSuspect`); null for the sites it did not raise |
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
//! `jdk.ObjectAllocationSample` (what `top` sums), live bytes
//! `SUM(weight / tracking_probability)` over `heapsampler.ObjectLifetime`
//! rows with `live` (what `top --live` sums: where the agent tracked only
//! a share of the samples, as on generational ZGC, each tracked one stands
//! for those not drawn). `--events` keeps some of these types only.
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
//! The sites the agent raised are matched to the rows as the OTLP export
//! matches them to its samples ([`Watch::first_raised`]). A row is
//! written once its chunk is read, so what the agent raised, in any chunk,
//! is read before the rows, in a pass of its own ([`ReadWatch`]: memory
//! follows the sites raised, not their events); the rows' pass reads the
//! recording again, which a stream cannot be.
//!
//! The file is written as the recording is read: each chunk's rows are
//! encoded into a row group (or several, of at most [`ROW_GROUP_ROWS`])
//! on the thread that read the chunk, and the row groups are appended in
//! chunk order ([`pipeline`](crate::pipeline)), so memory is bounded by a
//! few chunks' encoded rows, not by the recording. Columns are
//! zstd-compressed.
//!
//! The string columns' pages are encoded here (`StringColumn`), from
//! the numbers the chunk gives its strings as it reads them: parquet-rs's
//! writer, given arrow arrays, would hash every string of every row again
//! to find it in its dictionary. The other columns are arrow arrays, which
//! parquet-rs encodes. Given the string columns as arrow arrays instead,
//! parquet-rs took 1.51x the instructions (26.14 G against 17.34 G:
//! `valgrind --tool=callgrind heapsampler convert
//! target/bench-convert/big-30s-200mb.jfr --format parquet --threads 1`)
//! and 1.37x the wall time (1.66x on the agent's recording), the two
//! measured in one run (BENCHMARKS.md, "Tried, not kept").

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef, TimeUnit};
use bytes::Bytes;
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::basic::{Compression, Encoding, PageType, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, ColumnPath};

use crate::Error;
use crate::analysis::fold::TRUNCATED_FRAME;
use crate::analysis::leaks::ReadWatch;
use crate::model::allocation::Source;
use crate::model::filter::Filter;
use crate::model::process::{self, Process};
use crate::model::samples::{self, Kind, Sample, SampleVisitor};
use crate::model::text::{Flattener, epoch_nanos};
use crate::model::watch::Watch;
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

/// The columns' names, each once: the table's own vocabulary (some are
/// also JFR field names, with another meaning there).
pub mod column {
    /// See the [module doc](super).
    pub const RECORDING: &str = "recording";
    /// See the [module doc](super).
    pub const HOST: &str = "host";
    /// See the [module doc](super).
    pub const PID: &str = "pid";
    /// See the [module doc](super).
    pub const JVM_START: &str = "jvm_start";
    /// See the [module doc](super).
    pub const JVM_NAME: &str = "jvm_name";
    /// See the [module doc](super).
    pub const JVM_VERSION: &str = "jvm_version";
    /// See the [module doc](super).
    pub const EVENT: &str = "event";
    /// See the [module doc](super).
    pub const TIME: &str = "time";
    /// See the [module doc](super).
    pub const THREAD: &str = "thread";
    /// See the [module doc](super).
    pub const CLASS: &str = "class";
    /// See the [module doc](super).
    pub const WEIGHT: &str = "weight";
    /// See the [module doc](super).
    pub const SIZE: &str = "size";
    /// See the [module doc](super).
    pub const TRACKED: &str = "tracked";
    /// See the [module doc](super).
    pub const TRACKING_PROBABILITY: &str = "tracking_probability";
    /// See the [module doc](super).
    pub const LIVE: &str = "live";
    /// See the [module doc](super).
    pub const GCS_SURVIVED: &str = "gcs_survived";
    /// See the [module doc](super).
    pub const FREED_BY_GC_ID: &str = "freed_by_gc_id";
    /// See the [module doc](super).
    pub const STACK: &str = "stack";
    /// The stack's frames, as Parquet paths a list's items.
    pub const STACK_FRAMES: &str = "stack.list.item";
    /// See the [module doc](super).
    pub const LEAK_SUSPECT_RAISED: &str = "leak_suspect_raised";
}

/// The string columns (their Parquet paths).
const STRING_COLUMNS: [&str; 8] = [
    column::RECORDING,
    column::HOST,
    column::JVM_NAME,
    column::JVM_VERSION,
    column::EVENT,
    column::THREAD,
    column::CLASS,
    column::STACK_FRAMES,
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

    /// The identity of `file`, named `recording`: what its first chunk
    /// says ([`process::of_recording`]).
    pub fn read(file: &RecordingFile, recording: String) -> Self {
        Self::of(recording, &process::of_recording(file))
    }
}

fn timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The table's columns (see the [module doc](self)).
pub fn schema() -> SchemaRef {
    let string = || DataType::Utf8;
    let frames = ArrowField::new_list_field(DataType::Utf8, false);
    Arc::new(Schema::new(vec![
        ArrowField::new(column::RECORDING, string(), false),
        ArrowField::new(column::HOST, string(), true),
        ArrowField::new(column::PID, DataType::Int64, true),
        ArrowField::new(column::JVM_START, timestamp(), true),
        ArrowField::new(column::JVM_NAME, string(), true),
        ArrowField::new(column::JVM_VERSION, string(), true),
        ArrowField::new(column::EVENT, string(), false),
        ArrowField::new(column::TIME, timestamp(), true),
        ArrowField::new(column::THREAD, string(), true),
        ArrowField::new(column::CLASS, string(), true),
        ArrowField::new(column::WEIGHT, DataType::Float64, false),
        ArrowField::new(column::SIZE, DataType::Int64, true),
        ArrowField::new(column::TRACKED, DataType::Boolean, true),
        ArrowField::new(column::TRACKING_PROBABILITY, DataType::Float64, true),
        ArrowField::new(column::LIVE, DataType::Boolean, true),
        ArrowField::new(column::GCS_SURVIVED, DataType::Int64, true),
        ArrowField::new(column::FREED_BY_GC_ID, DataType::Int64, true),
        ArrowField::new(column::STACK, DataType::List(Arc::new(frames)), false),
        ArrowField::new(column::LEAK_SUSPECT_RAISED, timestamp(), true),
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
/// `out`, through `pipeline`, telling `progress` the bytes read by the
/// rows' pass (the first pass, over the watch's events alone, is told
/// nothing). `file` is read twice: one read from a stream is an error.
pub fn write(
    file: RecordingFile,
    options: &ParquetOptions<'_>,
    out: Box<dyn Write + Send>,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<ParquetWritten, Error> {
    let recording = file.path().to_owned();
    let read_watch = pipeline.run(file, &ReadWatch, Watch::default(), &mut |_| {})?;
    let file = read_watch.recording.reopen()?;
    let failed = |source| Error::Parquet {
        recording: recording.clone(),
        source,
    };
    let schema = schema();
    let time = ColumnPath::from(column::TIME);
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(format!("heapsampler {}", env!("CARGO_PKG_VERSION")))
        // Times are nearly all distinct and nearly in order: deltas, not a
        // dictionary that would overflow.
        .set_column_dictionary_enabled(time.clone(), false)
        .set_column_encoding(time, Encoding::DELTA_BINARY_PACKED)
        // The identity's pid and start are the same in every row: plain
        // pages of them compress to next to nothing, and a dictionary would
        // look up each value (a fiftieth of the time).
        .set_column_dictionary_enabled(ColumnPath::from(column::PID), false)
        .set_column_dictionary_enabled(ColumnPath::from(column::JVM_START), false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let parquet_schema = ArrowSchemaConverter::new()
        .convert(&schema)
        .map_err(failed)?;
    let string_columns = STRING_COLUMNS
        .iter()
        .map(|path| {
            parquet_schema
                .columns()
                .iter()
                .position(|leaf| leaf.path().string() == *path)
                .expect("the string columns are of the schema")
        })
        .collect();
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
        leaves: parquet_schema.columns().to_vec(),
        string_columns,
        factory,
        identity: options.identity,
        filter: options.filter,
        stack_depth: options.stack_depth,
        sources,
        wanted,
        watch: read_watch.merged,
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
    /// The Parquet columns, in order.
    leaves: Vec<ColumnDescPtr>,
    /// The index in `leaves` of each of [`STRING_COLUMNS`].
    string_columns: Vec<usize>,
    factory: ArrowRowGroupWriterFactory,
    identity: &'o Identity,
    filter: &'o Filter,
    stack_depth: usize,
    /// The kinds of events read: those with a type wanted.
    sources: Vec<Source>,
    /// Per type of [`EVENT_TYPES`], whether it is written.
    wanted: Vec<bool>,
    /// What the agent's watch raised, over the whole recording.
    watch: Watch,
}

/// The file being written, and what went into it.
struct Merged {
    writer: SerializedFileWriter<Box<dyn Write + Send>>,
    rows: [u64; 4],
    row_groups: u64,
}

/// A column chunk of a row group, encoded.
enum ColumnChunk {
    /// Encoded by parquet-rs's writer of arrow arrays.
    Arrow(ArrowColumnChunk),
    /// A string column's, encoded here ([`StringColumn`]): its pages, and
    /// what describes them.
    Strings(Bytes, ColumnCloseResult),
}

impl ColumnChunk {
    fn close(&self) -> &ColumnCloseResult {
        match self {
            ColumnChunk::Arrow(chunk) => chunk.close(),
            ColumnChunk::Strings(_, close) => close,
        }
    }
}

/// A row group, encoded: what the work on a chunk hands on.
pub struct RowGroup {
    /// Per Parquet column, in order.
    columns: Vec<ColumnChunk>,
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
        let failed = |source| {
            ChunkError::Failed(Error::Parquet {
                recording: self.recording.clone(),
                source,
            })
        };
        let mut strings = Strings::default();
        let identity = self.identity;
        let identity_strings = [
            Some(identity.recording.as_str()),
            identity.host.as_deref(),
            identity.jvm_name.as_deref(),
            identity.jvm_version.as_deref(),
        ]
        .map(|value| value.map(|value| strings.index(value)));
        let event_strings = EVENT_TYPES.map(|name| strings.index(name));
        let columns = self
            .string_columns
            .iter()
            .map(|&leaf| StringColumn::new(Arc::clone(&self.leaves[leaf])))
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed)?;
        let compressor = zstd::bulk::Compressor::new(ZstdLevel::default().compression_level())
            .map_err(|error| failed(error.into()))?;
        let mut rows = ChunkRows {
            writing: self,
            header: &chunk.header,
            sources: &self.sources,
            batch: Batch::default(),
            strings,
            identity_strings,
            event_strings,
            columns,
            compressor,
            threads_and_classes: IdMap::default(),
            stacks: IdMap::default(),
            frames: HashMap::new(),
            first_raised: HashMap::new(),
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
            Some(Ended::Failed(source)) => Err(failed(source)),
        }
    }

    fn merge(&self, merged: &mut Merged, group: RowGroup) -> Result<(), Error> {
        let failed = |source| Error::Parquet {
            recording: self.recording.clone(),
            source,
        };
        let mut row_group = merged.writer.next_row_group().map_err(failed)?;
        for column in group.columns {
            match column {
                ColumnChunk::Arrow(chunk) => chunk.append_to_row_group(&mut row_group),
                ColumnChunk::Strings(bytes, close) => row_group.append_column(&bytes, close),
            }
            .map_err(failed)?;
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

/// Strings of a chunk (threads, classes, frames, the identity's and the
/// event types), each once, numbered in order of arrival.
#[derive(Default)]
struct Strings {
    index: HashMap<String, u32>,
    values: Vec<String>,
}

impl Strings {
    fn index(&mut self, text: &str) -> u32 {
        if let Some(&index) = self.index.get(text) {
            return index;
        }
        let index = u32::try_from(self.values.len()).expect("a chunk's strings fit in u32");
        self.index.insert(text.to_owned(), index);
        self.values.push(text.to_owned());
        index
    }
}

/// Data pages end, at the end of a row, once they hold this many rows
/// (parquet-rs's default)...
const PAGE_ROWS: usize = 20_000;

/// ...or this many values (the frames of deep stacks).
const PAGE_VALUES: usize = 1 << 17;

/// A string column of a chunk's row groups, dictionary-encoded from the
/// chunk's own numbering of its strings ([`Strings`]): parquet-rs's
/// encoder takes values, and hashes and compares each against its
/// dictionary (a quarter of the time at 5 frames a row); here a value is
/// a number, and the row group's dictionary a vector indexed by it.
///
/// A row group's column chunk is what parquet-rs writes for a
/// dictionary-encoded column in format 1.0 pages: a dictionary page
/// (PLAIN: each string as its length and bytes) of the strings the row
/// group uses, in order of first use, then data pages of at most
/// [`PAGE_ROWS`] whole rows, each the repetition and definition levels
/// and the values' dictionary numbers in the RLE/bit-packed hybrid;
/// zstd-compressed, with an offset index and no statistics (the minimum
/// and maximum frame or thread of a page tell a query little).
struct StringColumn {
    descr: ColumnDescPtr,
    /// Whether a row is a list of strings (else one string or none).
    list: bool,
    /// Whether a row may have no string: a null, or an empty list.
    nullable: bool,
    /// Per string of the chunk, its number in the row group's dictionary
    /// plus one (0: not in it).
    numbers: Vec<u32>,
    /// The row group's dictionary: strings of the chunk, in order of their
    /// numbers.
    dictionary: Vec<u32>,
    /// The page being gathered: its values' dictionary numbers; per row of
    /// one string or none, its definition level (1: a string); per row of a
    /// list, its length (the levels follow).
    values: Vec<u32>,
    definitions: Vec<u32>,
    lengths: Vec<u32>,
    page_rows: usize,
    /// The row group's data pages, encoded, each with its rows.
    pages: Vec<(CompressedPage, usize)>,
    /// The rows and the levels (values and missing values) in `pages`.
    rows: usize,
    levels: usize,
}

impl StringColumn {
    fn new(descr: ColumnDescPtr) -> Result<Self, ParquetError> {
        let (list, nullable) = match (descr.max_rep_level(), descr.max_def_level()) {
            (0, 0) => (false, false),
            (0, 1) => (false, true),
            (1, 1) => (true, true),
            levels => {
                return Err(ParquetError::General(format!(
                    "column {} has the levels {levels:?} of no string column written",
                    descr.path()
                )));
            }
        };
        Ok(Self {
            descr,
            list,
            nullable,
            numbers: Vec::new(),
            dictionary: Vec::new(),
            values: Vec::new(),
            definitions: Vec::new(),
            lengths: Vec::new(),
            page_rows: 0,
            pages: Vec::new(),
            rows: 0,
            levels: 0,
        })
    }

    /// The number in the row group's dictionary of the chunk's string
    /// numbered `string`, added if new.
    fn number(&mut self, string: u32) -> u32 {
        let index = string as usize;
        if index >= self.numbers.len() {
            self.numbers.resize(index + 1, 0);
        }
        let slot = &mut self.numbers[index];
        if *slot == 0 {
            self.dictionary.push(string);
            *slot = self.dictionary.len() as u32;
        }
        *slot - 1
    }

    /// Appends a row of one string or none (null).
    fn push(&mut self, string: Option<u32>) {
        debug_assert!(!self.list && (self.nullable || string.is_some()));
        if let Some(string) = string {
            let number = self.number(string);
            self.values.push(number);
        }
        if self.nullable {
            self.definitions.push(u32::from(string.is_some()));
        }
        self.page_rows += 1;
    }

    /// Appends `rows` rows of the same one string or none (null).
    fn push_rows(
        &mut self,
        string: Option<u32>,
        mut rows: usize,
        compressor: &mut zstd::bulk::Compressor<'_>,
    ) -> Result<(), ParquetError> {
        debug_assert!(!self.list && (self.nullable || string.is_some()));
        let number = string.map(|string| self.number(string));
        while rows > 0 {
            let page_rows = rows.min(PAGE_ROWS.saturating_sub(self.page_rows).max(1));
            if let Some(number) = number {
                self.values.resize(self.values.len() + page_rows, number);
            }
            if self.nullable {
                let level = u32::from(number.is_some());
                self.definitions
                    .resize(self.definitions.len() + page_rows, level);
            }
            self.page_rows += page_rows;
            rows -= page_rows;
            if self.page_is_full() {
                self.encode_page(compressor)?;
            }
        }
        Ok(())
    }

    /// Appends a row of a list of strings.
    fn push_list(&mut self, strings: &[u32]) {
        debug_assert!(self.list);
        for &string in strings {
            let number = self.number(string);
            self.values.push(number);
        }
        self.lengths.push(strings.len() as u32);
        self.page_rows += 1;
    }

    fn page_is_full(&self) -> bool {
        self.page_rows >= PAGE_ROWS || self.values.len() >= PAGE_VALUES
    }

    /// Encodes the rows gathered as a data page.
    fn encode_page(
        &mut self,
        compressor: &mut zstd::bulk::Compressor<'_>,
    ) -> Result<(), ParquetError> {
        if self.page_rows == 0 {
            return Ok(());
        }
        let mut page = Vec::with_capacity(self.values.len() * 2 + self.page_rows / 2 + 16);
        let levels = if self.list {
            // An empty list has one level (its definition 0), and a list of
            // strings one per string.
            let levels = self.values.len() + self.lengths.iter().filter(|&&n| n == 0).count();
            put_levels(&mut page, |out| put_repetitions(out, &self.lengths, levels));
            put_levels(&mut page, |out| {
                if levels == self.values.len() {
                    put_run(out, 1, levels, 1);
                } else {
                    let definitions = self.lengths.iter().flat_map(|&length| {
                        std::iter::repeat_n(1, length as usize).chain((length == 0).then_some(0))
                    });
                    put_hybrid(out, &definitions.collect::<Vec<_>>(), 1);
                }
            });
            levels
        } else if self.nullable {
            put_levels(&mut page, |out| put_hybrid(out, &self.definitions, 1));
            self.definitions.len()
        } else {
            self.values.len()
        };
        let width = bit_width(self.dictionary.len().saturating_sub(1) as u32);
        page.push(width as u8);
        put_hybrid(&mut page, &self.values, width);
        let compressed = compressor.compress(&page)?;
        let data_page = Page::DataPage {
            buf: Bytes::from(compressed),
            num_values: levels as u32,
            encoding: Encoding::RLE_DICTIONARY,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        self.pages
            .push((CompressedPage::new(data_page, page.len()), self.page_rows));
        self.rows += self.page_rows;
        self.levels += levels;
        self.page_rows = 0;
        self.values.clear();
        self.definitions.clear();
        self.lengths.clear();
        Ok(())
    }

    /// The row group's column chunk, its strings those of `strings`; the
    /// column is then empty, for the chunk's next row group.
    fn close(
        &mut self,
        strings: &Strings,
        compressor: &mut zstd::bulk::Compressor<'_>,
    ) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
        self.encode_page(compressor)?;
        let mut plain = Vec::new();
        for &string in &self.dictionary {
            let text = strings.values[string as usize].as_bytes();
            plain.extend_from_slice(&(text.len() as u32).to_le_bytes());
            plain.extend_from_slice(text);
            self.numbers[string as usize] = 0;
        }
        let dictionary_page = Page::DictionaryPage {
            buf: Bytes::from(compressor.compress(&plain)?),
            num_values: self.dictionary.len() as u32,
            encoding: Encoding::PLAIN,
            is_sorted: false,
        };
        self.dictionary.clear();
        let data_pages = self.pages.len();
        let mut sink = TrackedWrite::new(Vec::new());
        let mut page_writer = SerializedPageWriter::new(&mut sink);
        let written = page_writer.write_page(CompressedPage::new(dictionary_page, plain.len()))?;
        let data_page_offset = written.compressed_size;
        let mut compressed = written.compressed_size;
        let mut uncompressed = written.uncompressed_size;
        let mut offsets = OffsetIndexBuilder::new();
        for (page, rows) in self.pages.drain(..) {
            let written = page_writer.write_page(page)?;
            offsets.append_offset_and_size(written.offset as i64, written.compressed_size as i32);
            offsets.append_row_count(rows as i64);
            compressed += written.compressed_size;
            uncompressed += written.uncompressed_size;
        }
        page_writer.close()?;
        let bytes = Bytes::from(sink.into_inner()?);
        debug_assert_eq!(bytes.len(), compressed);
        let metadata = ColumnChunkMetaData::builder(Arc::clone(&self.descr))
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_encodings(vec![
                Encoding::PLAIN,
                Encoding::RLE,
                Encoding::RLE_DICTIONARY,
            ])
            .set_page_encoding_stats(vec![
                PageEncodingStats {
                    page_type: PageType::DICTIONARY_PAGE,
                    encoding: Encoding::PLAIN,
                    count: 1,
                },
                PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::RLE_DICTIONARY,
                    count: data_pages as i32,
                },
            ])
            .set_total_compressed_size(compressed as i64)
            .set_total_uncompressed_size(uncompressed as i64)
            .set_num_values(self.levels as i64)
            .set_dictionary_page_offset(Some(0))
            .set_data_page_offset(data_page_offset as i64)
            .build()?;
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: self.rows as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(offsets.build()),
        };
        self.rows = 0;
        self.levels = 0;
        Ok((bytes, close))
    }
}

/// The bits that hold numbers up to `max`.
fn bit_width(max: u32) -> u32 {
    u32::BITS - max.leading_zeros()
}

/// Appends levels as a format 1.0 data page has them: their length in 4
/// bytes, then the levels (of at most 1) that `put` appends in the
/// RLE/bit-packed hybrid.
fn put_levels(out: &mut Vec<u8>, put: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    put(out);
    let length = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&length.to_le_bytes());
}

/// Appends the repetition levels of lists of `lengths`, `levels` in all,
/// bit-packed: 0 for each list's first string (or for an empty list), 1 for
/// the others.
fn put_repetitions(out: &mut Vec<u8>, lengths: &[u32], levels: usize) {
    let mut bits = vec![u8::MAX; levels.div_ceil(8)];
    let mut at = 0;
    for &length in lengths {
        bits[at / 8] &= !(1 << (at % 8));
        at += (length as usize).max(1);
    }
    if !levels.is_multiple_of(8) {
        // The last group's padding.
        bits[levels / 8] &= (1 << (levels % 8)) - 1;
    }
    // A group of 8 levels of 1 bit is a byte.
    for run in bits.chunks(PACKED_GROUPS) {
        put_varint(out, ((run.len() as u64) << 1) | 1);
        out.extend_from_slice(run);
    }
}

/// Appends a run of `count` times `value`, of `width` bits, in the hybrid.
fn put_run(out: &mut Vec<u8>, value: u32, count: usize, width: u32) {
    put_varint(out, (count as u64) << 1);
    let bytes = width.div_ceil(8) as usize;
    out.extend_from_slice(&value.to_le_bytes()[..bytes]);
}

/// The most groups of 8 values in one bit-packed run: its header is then
/// one byte, as parquet-rs writes it.
const PACKED_GROUPS: usize = 63;

/// Appends `values`, each of at most `width` bits, in Parquet's
/// RLE/bit-packed hybrid: runs of 8 or more equal values as the count and
/// the value, the others bit-packed, 8 values in `width` bytes.
fn put_hybrid(out: &mut Vec<u8>, values: &[u32], width: u32) {
    // Invariant: `values[packed..start]` are still to write, bit-packed;
    // `values[start..at]` are equal.
    let mut packed = 0;
    let mut start = 0;
    for at in 1..=values.len() {
        if at < values.len() && values[at] == values[start] {
            continue;
        }
        let mut run = at - start;
        if run >= 8 {
            // A bit-packed run holds whole groups of 8: the first of the
            // equal values complete its last group.
            let fill = (8 - (start - packed) % 8) % 8;
            if start > packed {
                put_packed(out, &values[packed..start + fill], width);
                run -= fill;
                packed = start + fill;
            }
            if run >= 8 {
                put_run(out, values[start], run, width);
                packed = at;
            }
        }
        start = at;
    }
    if packed < values.len() {
        put_packed(out, &values[packed..], width);
    }
}

/// Appends `values` bit-packed (the last group padded with zeros).
fn put_packed(out: &mut Vec<u8>, values: &[u32], width: u32) {
    for run in values.chunks(PACKED_GROUPS * 8) {
        let groups = run.len().div_ceil(8);
        put_varint(out, ((groups as u64) << 1) | 1);
        if width <= 16 {
            // A group's 8 values fit in 128 bits: its `width` bytes.
            for group in run.chunks(8) {
                let mut bits = 0u128;
                for (at, &value) in group.iter().enumerate() {
                    bits |= u128::from(value) << (at as u32 * width);
                }
                out.extend_from_slice(&bits.to_le_bytes()[..width as usize]);
            }
            continue;
        }
        // Invariant: fewer than 8 bits wait in `bits`, so a value of up to
        // 32 more fits.
        let mut bits = 0u64;
        let mut count = 0;
        for at in 0..groups * 8 {
            bits |= u64::from(run.get(at).copied().unwrap_or(0)) << count;
            count += width;
            while count >= 8 {
                out.push(bits as u8);
                bits >>= 8;
                count -= 8;
            }
        }
    }
}

/// Appends `value` as a ULEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Rows gathered for the columns written through arrow arrays, not yet
/// encoded: column by column.
#[derive(Default)]
struct Batch {
    time: Vec<Option<i64>>,
    weight: Vec<f64>,
    size: Vec<Option<i64>>,
    tracked: Vec<Option<bool>>,
    tracking_probability: Vec<Option<f64>>,
    live: Vec<Option<bool>>,
    gcs_survived: Vec<Option<i64>>,
    freed_by_gc_id: Vec<Option<i64>>,
    leak_suspect_raised: Vec<Option<i64>>,
}

impl Batch {
    fn len(&self) -> usize {
        self.weight.len()
    }
}

/// A row group being encoded.
struct Group {
    /// Per Parquet column, its writer (those of the string columns unused).
    writers: Vec<ArrowColumnWriter>,
    rows: [u64; 4],
}

/// The string columns, in the order of [`STRING_COLUMNS`].
const RECORDING: usize = 0;
const EVENT: usize = 4;
const THREAD: usize = 5;
const CLASS: usize = 6;
const STACK: usize = 7;

/// Turning a chunk's samples into row groups.
struct ChunkRows<'w, 'o, 'h> {
    writing: &'w Writing<'o>,
    header: &'w ChunkHeader,
    sources: &'w [Source],
    batch: Batch,
    strings: Strings,
    /// The string indexes of the identity's recording, host, JVM name and
    /// version, the first four of [`STRING_COLUMNS`]: the same in each row,
    /// written a batch at a time.
    identity_strings: [Option<u32>; 4],
    /// The string index of each of [`EVENT_TYPES`].
    event_strings: [u32; 4],
    /// The string columns, in the order of [`STRING_COLUMNS`].
    columns: Vec<StringColumn>,
    compressor: zstd::bulk::Compressor<'static>,
    /// The string index of each pooled thread and class (`None`: no text).
    threads_and_classes: IdMap<(u64, u64), Option<u32>>,
    /// The frames (string indexes) of each pooled stack trace.
    stacks: IdMap<(u64, u64), Box<[u32]>>,
    /// The string index of each frame: its pooled method and line.
    frames: HashMap<(u64, u64, Option<u32>), u32>,
    /// Per top frame and class of a stack (string indexes), when the agent
    /// first raised their site, microseconds since the epoch.
    first_raised: HashMap<(u32, Option<u32>), Option<i64>>,
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
        self.columns[EVENT].push(Some(self.event_strings[event]));
        self.columns[THREAD].push(thread);
        self.columns[CLASS].push(class);
        let top_frame = self.stack(text, &sample.stack_trace);
        let raised = self.first_raised(top_frame, class);
        let batch = &mut self.batch;
        batch.leak_suspect_raised.push(raised);
        batch.time.push(time);
        batch.weight.push(sample.weight);
        batch.size.push(size);
        let count = |n: u64| Some(n.min(i64::MAX as u64) as i64);
        if lifetime {
            let known = sample.tracked;
            batch.tracked.push(Some(sample.tracked));
            batch
                .tracking_probability
                .push(Some(sample.tracking_probability));
            batch.live.push(known.then_some(sample.live));
            batch.gcs_survived.push(count(sample.gcs_survived));
            let freed = known && !sample.live;
            batch
                .freed_by_gc_id
                .push(freed.then(|| count(sample.freed_by_gc_id)).flatten());
        } else {
            batch.tracked.push(None);
            batch.tracking_probability.push(None);
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
        for column in &mut self.columns {
            if column.page_is_full()
                && let Err(error) = column.encode_page(&mut self.compressor)
            {
                self.ended = Some(Ended::Failed(error));
                return;
            }
        }
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
    fn text_index(&mut self, text: &Flattener<'_, '_>, value: &Field<'_>) -> Option<u32> {
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

    /// Appends a row's frames: a stack trace's, made once per chunk. Its
    /// top frame, if it has frames.
    fn stack(&mut self, text: &Flattener<'_, '_>, stack_trace: &Field<'_>) -> Option<u32> {
        match *stack_trace {
            Field::Pooled { class_id, key } => {
                if !self.stacks.contains_key(&(class_id, key)) {
                    let frames = self.frames_of(text, &Value::Ref { class_id, key });
                    self.stacks.insert((class_id, key), frames);
                }
                let frames = &self.stacks[&(class_id, key)];
                self.columns[STACK].push_list(frames);
                frames.first().copied()
            }
            Field::Null => {
                self.columns[STACK].push_list(&[]);
                None
            }
            ref inline => {
                let frames = self.frames_of(text, &inline.clone().into_value());
                self.columns[STACK].push_list(&frames);
                frames.first().copied()
            }
        }
    }

    /// When the agent first raised the site of a row whose stack's top
    /// frame and class are `top_frame` and `class` (string indexes),
    /// microseconds since the epoch ([`Watch::first_raised`]).
    fn first_raised(&mut self, top_frame: Option<u32>, class: Option<u32>) -> Option<i64> {
        let watch = &self.writing.watch;
        if watch.raised.is_empty() {
            return None;
        }
        let strings = &self.strings.values;
        let text = |string: u32| strings[string as usize].as_str();
        let top_frame = top_frame?;
        *self
            .first_raised
            .entry((top_frame, class))
            .or_insert_with(|| {
                watch
                    .first_raised(text(top_frame), class.map_or("", text))
                    .map(|nanos| nanos.div_euclid(1000))
            })
    }

    /// The frames of a stack trace, as string indexes, top first.
    fn frames_of(&mut self, text: &Flattener<'_, '_>, stack_trace: &Value) -> Box<[u32]> {
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

    fn try_encode(&mut self, batch: Batch) -> Result<(), ParquetError> {
        let rows = batch.len();
        for (column, string) in self.identity_strings.into_iter().enumerate() {
            self.columns[RECORDING + column].push_rows(string, rows, &mut self.compressor)?;
        }
        let identity = self.writing.identity;
        // The columns that are not strings, in order.
        let arrays: [ArrayRef; 11] = [
            Arc::new(Int64Array::from(vec![identity.pid; rows])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![identity.jvm_start_micros; rows])
                    .with_timezone("UTC"),
            ),
            Arc::new(TimestampMicrosecondArray::from(batch.time).with_timezone("UTC")),
            Arc::new(Float64Array::from(batch.weight)),
            Arc::new(Int64Array::from(batch.size)),
            Arc::new(BooleanArray::from(batch.tracked)),
            Arc::new(Float64Array::from(batch.tracking_probability)),
            Arc::new(BooleanArray::from(batch.live)),
            Arc::new(Int64Array::from(batch.gcs_survived)),
            Arc::new(Int64Array::from(batch.freed_by_gc_id)),
            Arc::new(
                TimestampMicrosecondArray::from(batch.leak_suspect_raised).with_timezone("UTC"),
            ),
        ];
        let group = self.group.as_mut().expect("rows belong to a group");
        if group.writers.is_empty() {
            group.writers = self.writing.factory.create_column_writers(0)?;
        }
        // Each field is one Parquet column (the stack's is its list's
        // items): a field's index is its column's.
        let fields = self
            .writing
            .schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(column, _)| !self.writing.string_columns.contains(column));
        for ((column, field), array) in fields.zip(&arrays) {
            for leaf in compute_leaves(field, array)? {
                group.writers[column].write(&leaf)?;
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
        let group = match self.close_group(group) {
            Ok(group) => group,
            Err(error) => {
                self.ended = Some(Ended::Failed(error));
                return;
            }
        };
        if (self.hand_on)(group).is_err() {
            self.ended = Some(Ended::Stopped);
        }
    }

    /// The row group's column chunks.
    fn close_group(&mut self, group: Group) -> Result<RowGroup, ParquetError> {
        let mut columns = Vec::with_capacity(group.writers.len());
        for (column, writer) in group.writers.into_iter().enumerate() {
            let string = self
                .writing
                .string_columns
                .iter()
                .position(|&c| c == column);
            columns.push(match string {
                Some(string) => {
                    let (bytes, close) =
                        self.columns[string].close(&self.strings, &mut self.compressor)?;
                    ColumnChunk::Strings(bytes, close)
                }
                None => ColumnChunk::Arrow(writer.close()?),
            });
        }
        let bytes = columns
            .iter()
            .map(|c| c.close().metadata.compressed_size().max(0) as usize)
            .sum();
        Ok(RowGroup {
            columns,
            rows: group.rows,
            bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, ListArray, StringArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// Rows of a nullable string and of a list of strings.
    struct Rows {
        names: Vec<Option<u32>>,
        lists: Vec<Vec<u32>>,
    }

    /// Runs of equal values of lengths about a bit-packed group's 8, after
    /// groups left partial, among distinct values, enough for dictionary
    /// numbers of more than 16 bits.
    fn rows(count: usize) -> Rows {
        let runs = [7, 8, 9, 3, 100, 2, 16, 17];
        let mut names = Vec::with_capacity(count);
        let mut segment = 0;
        while names.len() < count {
            let run = match segment {
                10 => 5000,
                _ if segment % 50 == 49 => runs[segment / 50 % runs.len()],
                _ => 1,
            };
            let name = (segment % 41 != 0).then_some((segment * 7919 % 200_000) as u32);
            names.extend(std::iter::repeat_n(name, run.min(count - names.len())));
            segment += 1;
        }
        let lists = (0..count)
            .map(|row| {
                // The first pages without an empty list, the others with.
                let length = if row < 40_000 { 3 } else { row % 6 };
                (0..length)
                    .map(|at| (200_000 + (row + at) % 30) as u32)
                    .collect()
            })
            .collect();
        Rows { names, lists }
    }

    #[test]
    fn string_columns_encoded_here_read_back_through_parquet_rs() {
        let schema = Arc::new(Schema::new(vec![
            ArrowField::new("name", DataType::Utf8, true),
            ArrowField::new(
                "list",
                DataType::List(Arc::new(ArrowField::new_list_field(DataType::Utf8, false))),
                false,
            ),
            ArrowField::new("constant", DataType::Utf8, false),
        ]));
        let parquet_schema = ArrowSchemaConverter::new().convert(&schema).unwrap();
        let mut strings = Strings::default();
        for string in 0..200_030 {
            strings.index(&format!("s{string}"));
        }
        let constant = strings.index("constant");
        let mut columns: Vec<StringColumn> = parquet_schema
            .columns()
            .iter()
            .map(|leaf| StringColumn::new(Arc::clone(leaf)).unwrap())
            .collect();
        let mut compressor = zstd::bulk::Compressor::new(1).unwrap();
        let rows = rows(130_000);
        let distinct: std::collections::HashSet<_> = rows.names[..100_000].iter().collect();
        assert!(
            distinct.len() > 1 << 16,
            "the first row group's numbers have 17 bits"
        );
        let mut file = SerializedFileWriter::new(
            Vec::new(),
            parquet_schema.root_schema_ptr(),
            Arc::new(WriterProperties::builder().build()),
        )
        .unwrap();
        // Two row groups, the second from the columns the first left.
        for group in [0..100_000, 100_000..rows.names.len()] {
            for row in group.clone() {
                columns[0].push(rows.names[row]);
                columns[1].push_list(&rows.lists[row]);
                for column in &mut columns[..2] {
                    if column.page_is_full() {
                        column.encode_page(&mut compressor).unwrap();
                    }
                }
            }
            columns[2]
                .push_rows(Some(constant), group.len(), &mut compressor)
                .unwrap();
            let mut row_group = file.next_row_group().unwrap();
            for column in &mut columns {
                let (bytes, close) = column.close(&strings, &mut compressor).unwrap();
                row_group.append_column(&bytes, close).unwrap();
            }
            row_group.close().unwrap();
        }
        let bytes = Bytes::from(file.into_inner().unwrap());

        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        let text = |string: u32| format!("s{string}");
        let mut row = 0;
        for batch in reader {
            let batch = batch.unwrap();
            let names = batch
                .column(0)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            let lists = batch
                .column(1)
                .as_any()
                .downcast_ref::<ListArray>()
                .unwrap();
            let constants = batch
                .column(2)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            for at in 0..batch.num_rows() {
                let name = (!names.is_null(at)).then(|| names.value(at).to_owned());
                assert_eq!(name, rows.names[row].map(text), "row {row}");
                let list = lists.value(at);
                let list = list.as_any().downcast_ref::<StringArray>().unwrap();
                let list: Vec<&str> = list.iter().map(Option::unwrap).collect();
                let expected: Vec<String> = rows.lists[row].iter().copied().map(text).collect();
                assert_eq!(list, expected, "row {row}");
                assert_eq!(constants.value(at), "constant");
                row += 1;
            }
        }
        assert_eq!(row, rows.names.len());
    }
}
