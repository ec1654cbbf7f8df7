//! CSV rows made straight from the bytes of a chunk's events, as
//! `heapsampler convert` writes them: one row per event, each cell the text
//! [`Flattener`] makes of the field's value (see [`export`](crate::model::text)),
//! escaped.
//!
//! Events are read by the chunk's [`EventPlan`]s: a number is printed
//! straight into the row, a pooled value (a stack trace, a thread, a class)
//! is flattened and escaped once per chunk and then copied, and only what
//! the plan hands on as a generic [`Value`] (arrays, inline objects,
//! floats, chars) is flattened from it. Escaping is the csv crate's own
//! (`csv_core`): a field is quoted when it holds a comma, a quote or a line
//! break, and a record with nothing in it is `""`.
//!
//! Rows come out per event type in blocks ([`Piece`]), so that a chunk's
//! rows can be written as they are made, or held while the chunk before it
//! is written: [`write_csv`] converts a recording through the
//! [pipeline](crate::pipeline), each chunk's blocks written in chunk order
//! into outputs the caller makes ([`Outputs`]), one per event type.

use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};

use crate::model::filter::{Check, ChunkFilter};
use jfr_reader::file::RecordingFile;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::Error;
pub use crate::error::CsvError;
use crate::model::filter::Filter;
use crate::model::text::{Flattener, IsoClock, Unit, epoch_nanos, unit};
use crate::model::types::Declared;
use crate::output::Outputs;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, FieldVisitor, TypeMap};
use jfr_reader::metadata::ClassInfo;
use jfr_reader::value::Value;

/// Rows of one event type are handed on in blocks of about this many bytes:
/// large enough that writing them costs few system calls, small enough to
/// stay in the cache until they are written.
pub const BLOCK: usize = 64 * 1024;

/// Buffers for rows, handed back once written so that the converting
/// threads fill the same memory again rather than fresh memory, which
/// costs a page fault per page.
#[derive(Debug, Default)]
pub struct Buffers {
    free: Mutex<Vec<Vec<u8>>>,
}

impl Buffers {
    /// At most this many are kept, more are freed: enough for the blocks
    /// being filled and written, not for every block that chunks waiting
    /// for their turn may hold.
    const KEPT: usize = 64;

    /// An empty buffer for a block of rows.
    pub fn take(&self) -> Vec<u8> {
        let free = self
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        free.unwrap_or_else(|| Vec::with_capacity(BLOCK + BLOCK / 4))
    }

    /// A buffer whose rows have been written. Small ones (of event types
    /// with few rows in a chunk) are not kept.
    pub fn give(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() < BLOCK {
            return;
        }
        buffer.clear();
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        if free.len() < Self::KEPT {
            free.push(buffer);
        }
    }
}

/// What converting a chunk hands on, in order.
#[derive(Debug)]
pub enum Piece {
    /// Rows of an event type follow in this chunk, as output `index`.
    Type {
        /// The chunk's own number for the type's output.
        index: usize,
        /// The type's name: its file is `NAME.csv`.
        name: String,
        /// How many columns its rows have.
        columns: usize,
        /// The header row (the field names), escaped, with its line end.
        header: Vec<u8>,
    },
    /// Rows of the type announced as `index`: whole lines, escaped.
    Rows {
        /// The type's output, as announced.
        index: usize,
        /// The rows.
        bytes: Vec<u8>,
        /// How many rows `bytes` holds.
        rows: u64,
    },
}

/// What is done with the events of one type.
struct TypeRows<'c> {
    /// How its fields are read.
    plan: EventPlan<'c>,
    /// Whether its rows are asked for; other events are read (so a
    /// malformed one fails the conversion) but not written.
    wanted: bool,
    /// Each field's unit.
    units: Vec<Unit>,
    /// The type's output in this chunk, once it has a row.
    output: Option<usize>,
}

impl<'c> TypeRows<'c> {
    fn new(chunk: &'c Chunk<'_>, type_id: u64, wanted: &dyn Fn(&str) -> bool) -> Option<Self> {
        let plan = chunk.plan(type_id)?;
        let class = plan.class();
        Some(Self {
            wanted: wanted(&class.name),
            units: class
                .fields
                .iter()
                .map(|field| unit(&chunk.metadata, field))
                .collect(),
            plan,
            output: None,
        })
    }
}

/// The rows of one event type in a chunk, not yet handed on.
struct Output {
    bytes: Vec<u8>,
    rows: u64,
    /// Whether its [`Piece::Type`] has been handed on.
    announced: bool,
}

/// Whether a cell's text needs quotes, and quoting it: the csv crate's
/// rules for its default writer.
struct Escaper {
    core: csv_core::Writer,
    /// The bytes that never need quotes nor make invalid UTF-8: ASCII other
    /// than the writer's special bytes.
    plain: [bool; 256],
}

impl Escaper {
    fn new() -> Self {
        let core = csv_core::Writer::new();
        let plain = std::array::from_fn(|b| b < 0x80 && !core.is_special_byte(b as u8));
        Self { core, plain }
    }

    /// Whether `field` is valid UTF-8 that is written as it is.
    #[inline]
    fn is_plain(&self, field: &[u8]) -> bool {
        field.iter().all(|&b| self.plain[b as usize])
    }

    /// Appends `field` to `out` as the csv crate writes it.
    fn escape_into(&self, out: &mut Vec<u8>, field: &[u8]) {
        if !self.core.should_quote(field) {
            out.extend_from_slice(field);
            return;
        }
        let quote = self.core.get_quote();
        out.push(quote);
        let start = out.len();
        // At most every byte doubled.
        out.resize(start + 2 * field.len(), 0);
        let (_, _, written) = csv_core::quote(
            field,
            &mut out[start..],
            quote,
            self.core.get_escape(),
            self.core.get_double_quote(),
        );
        out.truncate(start + written);
        out.push(quote);
    }

    /// The header row of an event type: its field names.
    fn header(&self, class: &ClassInfo) -> Vec<u8> {
        let mut header = Vec::new();
        for (i, field) in class.fields.iter().enumerate() {
            if i > 0 {
                header.push(b',');
            }
            self.escape_into(&mut header, field.name.as_bytes());
        }
        Self::end_record(&mut header, 0);
        header
    }

    /// Ends the record begun at `start` in `out`: a record with nothing in
    /// it is `""`, as the csv crate writes it (one empty field and no
    /// record at all would read alike otherwise).
    fn end_record(out: &mut Vec<u8>, start: usize) {
        if out.len() == start {
            out.extend_from_slice(b"\"\"");
        }
        out.push(b'\n');
    }
}

/// The texts of pooled values met so far in the chunk, escaped: each is
/// flattened and escaped once, then copied into every row that refers to it.
#[derive(Default)]
struct PoolTexts {
    ranges: IdMap<(u64, u64), (usize, usize)>,
    arena: Vec<u8>,
}

impl PoolTexts {
    /// Appends the escaped text of the pooled value `key` of `class_id`:
    /// inlined into every cell that has one, the text made out of line.
    #[inline(always)]
    fn append(
        &mut self,
        out: &mut Vec<u8>,
        class_id: u64,
        key: u64,
        flattener: &Flattener<'_, '_>,
        escaper: &Escaper,
    ) {
        let (start, end) = match self.ranges.get(&(class_id, key)) {
            Some(&range) => range,
            None => self.add(class_id, key, flattener, escaper),
        };
        out.extend_from_slice(&self.arena[start..end]);
    }

    /// Flattens and escapes the pooled value `key` of `class_id` into the
    /// arena; returns where it is.
    #[inline(never)]
    fn add(
        &mut self,
        class_id: u64,
        key: u64,
        flattener: &Flattener<'_, '_>,
        escaper: &Escaper,
    ) -> (usize, usize) {
        let text = flattener.text(&Value::Ref { class_id, key });
        let start = self.arena.len();
        escaper.escape_into(&mut self.arena, text.as_bytes());
        let range = (start, self.arena.len());
        self.ranges.insert((class_id, key), range);
        range
    }
}

/// Appends `true` or `false`.
#[inline]
fn push_boolean(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends `value` in decimal, as `Display` prints it.
#[inline]
fn push_decimal(out: &mut Vec<u8>, value: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends `2026-11-22T10:15:00.123456789Z`, as
/// [`iso`](crate::model::text::iso) writes it.
fn push_timestamp(clock: &mut IsoClock, out: &mut Vec<u8>, nanos: i64) {
    out.extend_from_slice(clock.format(nanos));
}

/// Converts one chunk's events to CSV rows.
struct Rows<'c, 'a> {
    chunk: &'c Chunk<'a>,
    flattener: Flattener<'c, 'a>,
    escaper: Escaper,
    pools: PoolTexts,
    clock: IsoClock,
    /// A cell's text made by the flattener, reused from cell to cell.
    text: String,
}

impl Rows<'_, '_> {
    /// Appends the cell of a key into the pool of `class_id`, in a column
    /// of `unit`.
    #[inline(always)]
    fn pooled(&mut self, out: &mut Vec<u8>, unit: Unit, class_id: u64, key: u64) {
        if unit == Unit::Plain {
            self.pools
                .append(out, class_id, key, &self.flattener, &self.escaper);
        } else {
            self.value(out, unit, &Value::Ref { class_id, key });
        }
    }

    /// Appends the cell of an inline string's UTF-8 bytes.
    #[inline(always)]
    fn utf8(&mut self, out: &mut Vec<u8>, bytes: &[u8]) {
        // Most inline strings (a GC phase's name) are short ASCII with
        // nothing to quote: copied without checking them as UTF-8 and for
        // quotes apart.
        if self.escaper.is_plain(bytes) {
            out.extend_from_slice(bytes);
        } else if std::str::from_utf8(bytes).is_ok() {
            self.escaper.escape_into(out, bytes);
        } else {
            self.escaper
                .escape_into(out, String::from_utf8_lossy(bytes).as_bytes());
        }
    }

    /// Appends a `long` cell of `unit`.
    #[inline]
    fn long(&mut self, out: &mut Vec<u8>, unit: Unit, value: i64) {
        let header = &self.chunk.header;
        match unit {
            Unit::Plain => push_decimal(out, value),
            Unit::TimestampTicks => {
                push_timestamp(&mut self.clock, out, epoch_nanos(header, value))
            }
            Unit::TimestampMillis => {
                push_timestamp(&mut self.clock, out, value.saturating_mul(1_000_000))
            }
            Unit::TimespanTicks => {
                let nanos = ((value as f64) * 1e9 / header.ticks_per_second as f64).round();
                // As `Flattener::cell_into` prints it.
                if nanos.abs() < (1u64 << 53) as f64 {
                    push_decimal(out, nanos as i64);
                } else {
                    self.text.clear();
                    let _ = write!(self.text, "{nanos}");
                    out.extend_from_slice(self.text.as_bytes());
                }
            }
            Unit::TimespanScale(scale) => push_decimal(out, value.saturating_mul(scale)),
        }
    }

    /// Appends the cell of a decoded `value` in a column of `unit`.
    fn value(&mut self, out: &mut Vec<u8>, unit: Unit, value: &Value) {
        if let (Unit::Plain, Value::Ref { class_id, key }) = (unit, value) {
            self.pools
                .append(out, *class_id, *key, &self.flattener, &self.escaper);
            return;
        }
        self.text.clear();
        self.flattener.cell_text(unit, value, &mut self.text);
        self.escaper.escape_into(out, self.text.as_bytes());
    }
}

/// One row being made, cell by cell, as its event's fields are read; the
/// filter, when there is one, sees them on the way.
struct Cells<'r, 'c, 'a, 'f> {
    rows: &'r mut Rows<'c, 'a>,
    out: &'r mut Vec<u8>,
    units: &'r [Unit],
    filter: Option<(&'r ChunkFilter<'f, 'c, 'a>, &'r mut Check)>,
}

impl Cells<'_, '_, '_, '_> {
    /// Begins the cell of field `index` (`field` makes it for the filter);
    /// returns its unit.
    #[inline(always)]
    fn begin<'v>(&mut self, index: usize, field: impl FnOnce() -> Field<'v>) -> Unit {
        if let Some((filter, check)) = &mut self.filter {
            filter.see(check, index, &field());
        }
        if index > 0 {
            self.out.push(b',');
        }
        self.units[index]
    }
}

impl<'v> FieldVisitor<'v> for Cells<'_, '_, '_, '_> {
    #[inline(always)]
    fn field(&mut self, index: usize, field: Field<'v>) {
        if let Some((filter, check)) = &mut self.filter {
            filter.see(check, index, &field);
        }
        if index > 0 {
            self.out.push(b',');
        }
        let unit = self.units[index];
        match field {
            Field::Long(value) => self.rows.long(self.out, unit, value),
            Field::Int(value) => push_decimal(self.out, value.into()),
            Field::Short(value) => push_decimal(self.out, value.into()),
            Field::Byte(value) => push_decimal(self.out, value.into()),
            Field::Boolean(value) => push_boolean(self.out, value),
            Field::Pooled { class_id, key } => self.rows.pooled(self.out, unit, class_id, key),
            Field::Utf8(bytes) => self.rows.utf8(self.out, bytes),
            Field::Text(text) => self.rows.escaper.escape_into(self.out, text.as_bytes()),
            Field::Null => {}
            Field::Value(value) => self.rows.value(self.out, unit, &value),
        }
    }

    #[inline(always)]
    fn long(&mut self, index: usize, value: i64) {
        let unit = self.begin(index, || Field::Long(value));
        self.rows.long(self.out, unit, value);
    }

    #[inline(always)]
    fn int(&mut self, index: usize, value: i32) {
        self.begin(index, || Field::Int(value));
        push_decimal(self.out, value.into());
    }

    #[inline(always)]
    fn short(&mut self, index: usize, value: i16) {
        self.begin(index, || Field::Short(value));
        push_decimal(self.out, value.into());
    }

    #[inline(always)]
    fn byte(&mut self, index: usize, value: i8) {
        self.begin(index, || Field::Byte(value));
        push_decimal(self.out, value.into());
    }

    #[inline(always)]
    fn boolean(&mut self, index: usize, value: bool) {
        self.begin(index, || Field::Boolean(value));
        push_boolean(self.out, value);
    }

    #[inline(always)]
    fn pooled(&mut self, index: usize, class_id: u64, key: u64) {
        let unit = self.begin(index, || Field::Pooled { class_id, key });
        self.rows.pooled(self.out, unit, class_id, key);
    }

    #[inline(always)]
    fn utf8(&mut self, index: usize, bytes: &'v [u8]) {
        self.begin(index, || Field::Utf8(bytes));
        self.rows.utf8(self.out, bytes);
    }
}

/// Converts the events of `chunk` whose type `wanted` accepts (and, when
/// given, that `filter` keeps) to CSV rows, handed to `emit` in blocks
/// (filled from `buffers`), with at most `stack_depth` frames per stack
/// trace. Each cell is what [`Flattener::row`] makes of the event's value
/// there, escaped; a chunk that fails has its rows before the failing event
/// handed on first.
pub fn chunk_rows(
    chunk: &Chunk<'_>,
    stack_depth: usize,
    wanted: &dyn Fn(&str) -> bool,
    filter: Option<&ChunkFilter<'_, '_, '_>>,
    buffers: &Buffers,
    emit: &mut dyn FnMut(Piece) -> Result<(), CsvError>,
) -> Result<(), CsvError> {
    let mut rows = Rows {
        chunk,
        flattener: Flattener::new(chunk, stack_depth),
        escaper: Escaper::new(),
        pools: PoolTexts::default(),
        clock: IsoClock::default(),
        text: String::new(),
    };
    let mut types: TypeMap<Option<TypeRows<'_>>> = TypeMap::default();
    let mut outputs: Vec<Output> = Vec::new();
    let result = (|| -> Result<(), CsvError> {
        for raw in chunk.raw_events() {
            let mut raw = raw?;
            let Some(type_rows) =
                types.get_or_insert_with(raw.type_id, || TypeRows::new(chunk, raw.type_id, wanted))
            else {
                continue; // undeclared: skipped, as the JDK does
            };
            if !type_rows.wanted {
                type_rows.plan.skip(&mut raw)?;
                continue;
            }
            let output = *type_rows.output.get_or_insert_with(|| {
                outputs.push(Output {
                    bytes: Vec::new(),
                    rows: 0,
                    announced: false,
                });
                outputs.len() - 1
            });
            let type_rows = &*type_rows;
            let out = &mut outputs[output].bytes;
            let start = out.len();
            // The row is made as the fields are read; the filter sees them
            // on the way, and a row it does not keep is taken back.
            let mut check = filter.map(|filter| filter.check(raw.type_id));
            let mut cells = Cells {
                rows: &mut rows,
                out,
                units: &type_rows.units,
                filter: filter.zip(check.as_mut()),
            };
            if let Err(error) = type_rows.plan.read(&mut raw, &mut cells) {
                // No part of a row that failed is written.
                out.truncate(start);
                return Err(error.into());
            }
            if let (Some(filter), Some(check)) = (filter, check)
                && !filter.keeps(check)
            {
                out.truncate(start);
                continue;
            }
            Escaper::end_record(out, start);
            // Announced after its first row is made: a type whose first
            // event fails has no file.
            if !outputs[output].announced {
                let class = type_rows.plan.class();
                emit(Piece::Type {
                    index: output,
                    name: class.name.clone(),
                    columns: class.fields.len(),
                    header: rows.escaper.header(class),
                })?;
                outputs[output].announced = true;
            }
            outputs[output].rows += 1;
            if outputs[output].bytes.len() >= BLOCK {
                let bytes = std::mem::replace(&mut outputs[output].bytes, buffers.take());
                let rows = std::mem::take(&mut outputs[output].rows);
                emit(Piece::Rows {
                    index: output,
                    bytes,
                    rows,
                })?;
            }
        }
        Ok(())
    })();
    // What is left, also when an event failed: its rows came before it.
    for (index, output) in outputs.into_iter().enumerate() {
        if output.rows > 0 {
            emit(Piece::Rows {
                index,
                bytes: output.bytes,
                rows: output.rows,
            })?;
        }
    }
    result
}

impl From<Stopped> for CsvError {
    fn from(_: Stopped) -> Self {
        Self::Stopped
    }
}

/// What to convert to CSV.
#[derive(Debug, Clone, Default)]
pub struct CsvOptions {
    /// The event types to convert; empty: every type.
    pub events: Vec<String>,
    /// Frames kept per stack trace, those nearest the top.
    pub stack_depth: usize,
    /// Which events to keep.
    pub filter: Filter,
}

/// What a conversion to CSV wrote.
#[derive(Debug)]
pub struct CsvWritten {
    /// Rows written.
    pub rows: u64,
    /// Outputs made: one per event type with rows.
    pub outputs: usize,
    /// What [`RecordingFile::truncated`] says.
    pub truncated: Option<(u64, u64)>,
    /// How the held rows kept to their limit, when several threads
    /// converted.
    pub held: Option<crate::pipeline::Held>,
}

/// Converts the recording `file` to CSV as `options` say, through
/// `pipeline`, into outputs made by `outputs`, telling `progress` the bytes
/// read: the rows of each chunk, made on any core, are written in chunk
/// order, so the files are the same as when one thread does it all.
pub fn write_csv(
    file: RecordingFile,
    options: &CsvOptions,
    outputs: &mut dyn Outputs,
    pipeline: &Pipeline,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<CsvWritten, Error> {
    let path = file.path().to_owned();
    let job = CsvJob {
        recording: path.clone(),
        options,
        buffers: Buffers::default(),
        declared: Declared::new(&options.events),
    };
    let ran = pipeline.run(file, &job, CsvFiles::new(outputs), progress)?;
    let missing = job.declared.missing();
    if !missing.is_empty() {
        return Err(crate::analysis::summary::missing_types(
            &ran.recording,
            missing,
            pipeline,
        ));
    }
    let files = ran.merged;
    let outputs = files.files.len();
    let rows = files.finish().map_err(|source| job.failed(source))?;
    Ok(CsvWritten {
        rows,
        outputs,
        truncated: ran.truncated,
        held: ran.held,
    })
}

/// Converting a recording's chunks to CSV: each chunk's rows are handed on
/// in blocks and written in chunk order.
struct CsvJob<'o> {
    recording: PathBuf,
    options: &'o CsvOptions,
    /// Buffers for rows, used again once written.
    buffers: Buffers,
    /// Which of the types asked for the chunks declare.
    declared: Declared,
}

impl CsvJob<'_> {
    fn failed(&self, source: CsvError) -> Error {
        Error::Csv {
            recording: self.recording.clone(),
            source,
        }
    }
}

impl<'o> Analysis for CsvJob<'o> {
    type Part = Piece;
    type Merged = CsvFiles<'o>;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(Piece) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        self.declared.see(chunk);
        let types = &self.options.events;
        let wanted = |type_name: &str| types.is_empty() || types.iter().any(|t| t == type_name);
        let filter = &self.options.filter;
        let filter = (!filter.is_empty())
            .then(|| ChunkFilter::new(filter, filter.window(context.recording_start), chunk));
        let mut emit = |piece| Ok(hand_on(piece)?);
        let converted = chunk_rows(
            chunk,
            self.options.stack_depth,
            &wanted,
            filter.as_ref(),
            &self.buffers,
            &mut emit,
        );
        match converted {
            Ok(()) => Ok(()),
            Err(CsvError::Read(error)) => Err(ChunkError::Read(error)),
            Err(CsvError::Stopped) => Err(ChunkError::Stopped),
            Err(error) => Err(ChunkError::Failed(self.failed(error))),
        }
    }

    fn begin_chunk(&self, files: &mut CsvFiles<'o>) {
        files.chunk.clear();
    }

    fn merge(&self, files: &mut CsvFiles<'o>, piece: Piece) -> Result<(), Error> {
        files
            .write(piece, &self.buffers)
            .map_err(|source| self.failed(source))
    }

    fn part_bytes(&self, piece: &Piece) -> usize {
        match piece {
            Piece::Rows { bytes, .. } => bytes.len(),
            Piece::Type { header, .. } => header.len(),
        }
    }
}

/// One CSV file being written: an event type's rows.
struct CsvFile {
    writer: Box<dyn Write + Send>,
    columns: usize,
    rows: u64,
}

/// The CSV files of a conversion, fed the [`Piece`]s of each chunk in
/// chunk order: a type's file is made (with its header) when its first
/// rows come.
pub struct CsvFiles<'o> {
    outputs: &'o mut dyn Outputs,
    by_name: HashMap<String, usize>,
    files: Vec<CsvFile>,
    /// The current chunk's outputs, as its pieces number them: the files
    /// they go to (`usize::MAX`: not announced).
    chunk: Vec<usize>,
}

impl<'o> CsvFiles<'o> {
    /// The output, made by `outputs` as the first rows of each type come.
    fn new(outputs: &'o mut dyn Outputs) -> Self {
        Self {
            outputs,
            by_name: HashMap::new(),
            files: Vec::new(),
            chunk: Vec::new(),
        }
    }

    /// Writes one piece of the current chunk, handing its buffer back to
    /// `buffers`.
    fn write(&mut self, piece: Piece, buffers: &Buffers) -> Result<(), CsvError> {
        match piece {
            Piece::Type {
                index: local,
                name,
                columns,
                header,
            } => {
                let index = match self.by_name.get(&name) {
                    Some(&index) => {
                        let expected = self.files[index].columns;
                        if expected != columns {
                            return Err(CsvError::Columns {
                                name,
                                expected,
                                found: columns,
                            });
                        }
                        index
                    }
                    None => {
                        let mut writer = self.outputs.create(&name)?;
                        writer.write_all(&header)?;
                        self.files.push(CsvFile {
                            writer,
                            columns,
                            rows: 0,
                        });
                        self.by_name.insert(name, self.files.len() - 1);
                        self.files.len() - 1
                    }
                };
                if self.chunk.len() <= local {
                    self.chunk.resize(local + 1, usize::MAX);
                }
                self.chunk[local] = index;
            }
            Piece::Rows { index, bytes, rows } => {
                let file = self
                    .chunk
                    .get(index)
                    .and_then(|&i| self.files.get_mut(i))
                    .ok_or_else(|| io::Error::other("rows of an event type not announced"))?;
                file.writer.write_all(&bytes)?;
                file.rows += rows;
                buffers.give(bytes);
            }
        }
        Ok(())
    }

    /// Flushes every file; returns the rows written.
    fn finish(mut self) -> Result<u64, CsvError> {
        for file in &mut self.files {
            file.writer.flush()?;
        }
        Ok(self.files.iter().map(|f| f.rows).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::text::iso;

    #[test]
    fn integers_print_as_display_does() {
        let mut values = vec![0, 7, -7, 9, 10, 99, 100, -100, 101, i64::MAX, i64::MIN];
        for power in 0..19 {
            let p = 10i64.pow(power);
            values.extend([p, p - 1, p + 1, -p, -(p - 1)]);
        }
        for value in values {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, value);
            assert_eq!(String::from_utf8(out).unwrap(), format!("x{value}"));
        }
    }

    #[test]
    fn timestamps_print_as_iso_does() {
        let mut clock = IsoClock::default();
        for nanos in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            1_795_342_500_123_456_789,
            1_795_342_500_100_000_000,
            1_795_342_500_000_000_009,
            -1,
            -1_000_000_001,
            i64::MAX,
            i64::MIN,
        ] {
            let mut out = Vec::new();
            push_timestamp(&mut clock, &mut out, nanos);
            assert_eq!(String::from_utf8(out).unwrap(), iso(nanos), "{nanos}");
        }
    }

    #[test]
    fn cells_are_escaped_as_the_csv_crate_does() {
        let escaper = Escaper::new();
        for field in [
            "",
            "plain",
            "a,b",
            "say \"hi\"",
            "two\nlines",
            "cr\r",
            "\"",
            "é ✓",
        ] {
            let mut ours = Vec::new();
            escaper.escape_into(&mut ours, field.as_bytes());
            ours.push(b',');
            escaper.escape_into(&mut ours, b"x");
            Escaper::end_record(&mut ours, 0);
            let mut writer = csv::Writer::from_writer(Vec::new());
            writer.write_record([field, "x"]).unwrap();
            assert_eq!(ours, writer.into_inner().unwrap(), "{field:?}");
        }
        // A record with nothing in it.
        let mut ours = Vec::new();
        Escaper::end_record(&mut ours, 0);
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.write_record([""]).unwrap();
        assert_eq!(ours, writer.into_inner().unwrap());
    }
}
