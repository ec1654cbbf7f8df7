//! CSV rows made straight from the bytes of a chunk's events, the fast way
//! `heapsampler convert` writes them: what
//! [`Flattener::write_row`](crate::export::Flattener::write_row) writes,
//! byte for byte, without decoding each event into a tree of values first.
//!
//! Each event type's fields are planned once per chunk: a number is decoded
//! and printed into the row, a pooled value (a stack trace, a thread, a
//! class) is flattened and escaped once per chunk and then copied, and only
//! what has no plan of its own (arrays, inline objects, floats, chars) is
//! decoded into a [`Value`] and flattened as before. Escaping is the csv
//! crate's own (`csv_core`): a field is quoted when it holds a comma, a
//! quote or a line break, and a record with nothing in it is `""`.
//!
//! Rows come out per event type in blocks ([`Piece`]), so that a chunk's
//! rows can be written as they are made, or held while the chunk before it
//! is written.

use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};

use crate::export::{ExportError, Flattener, IsoClock, Unit, epoch_nanos, unit};
use crate::filter::ChunkFilter;
use crate::read::chunk::{Chunk, Event, Value, spend};
use crate::read::cursor::Cursor;
use crate::read::metadata::{ClassInfo, FieldInfo, Kind};
use crate::read::{IdMap, ReadError};
use jfr_writer::format::StringEncoding;

/// Rows of one event type are handed on in blocks of about this many bytes:
/// large enough that writing them costs few system calls (writes of 8 KiB,
/// a `BufWriter`'s, cost the kernel about twice as much here), small enough
/// to stay in the cache until they are written.
pub const BLOCK: usize = 64 * 1024;

/// Buffers for rows, handed back once written so that the converting
/// threads fill the same memory again: fresh memory costs a page
/// fault per page, which on a virtual machine can cost more than the rows.
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

/// How one column is made.
#[derive(Debug, Clone, Copy)]
enum Column {
    /// An inline `long`, printed by its unit.
    Long(Unit),
    /// An inline `int`.
    Int,
    /// An inline `short`.
    Short,
    /// An inline `byte`.
    Byte,
    /// An inline `boolean`.
    Boolean,
    /// An inline string, or a reference into the string pool of `class_id`.
    String { class_id: u64 },
    /// A reference into the pool of `class_id`, shown as its text.
    Pooled { class_id: u64 },
    /// Anything else: decoded into a value and flattened.
    Generic(Unit),
}

/// What is done with the events of one type.
#[derive(Debug)]
struct Plan<'c> {
    class: &'c ClassInfo,
    /// Not an event type: skipped undecoded, as [`Chunk::events`] skips it.
    skip: bool,
    /// Whether its rows are asked for; other events are decoded (so a
    /// malformed one fails the conversion as before) but not written.
    wanted: bool,
    /// Each field's column, and its unit for a row made from values.
    columns: Vec<(Column, Unit, &'c FieldInfo)>,
    /// The type's output in this chunk, once it has a row.
    output: Option<usize>,
}

impl<'c> Plan<'c> {
    fn new(chunk: &'c Chunk<'_>, class: Option<&'c ClassInfo>, wanted: bool) -> Option<Self> {
        let class = class?;
        let metadata = &chunk.metadata;
        let columns = class
            .fields
            .iter()
            .map(|field| {
                let unit = unit(metadata, field);
                let Some(field_class) = metadata.field_class(field) else {
                    // Decoding it fails, naming the field, as before.
                    return (Column::Generic(unit), unit, field);
                };
                let column = match (field.array, field.constant_pool, field_class.kind) {
                    (true, _, _) => Column::Generic(unit),
                    (false, true, _) if unit == Unit::Plain => Column::Pooled {
                        class_id: field.class_id,
                    },
                    (false, true, _) => Column::Generic(unit),
                    (false, false, Kind::Long) => Column::Long(unit),
                    (false, false, Kind::Int) => Column::Int,
                    (false, false, Kind::Short) => Column::Short,
                    (false, false, Kind::Byte) => Column::Byte,
                    (false, false, Kind::Boolean) => Column::Boolean,
                    (false, false, Kind::String) => Column::String {
                        class_id: field_class.id,
                    },
                    (false, false, _) => Column::Generic(unit),
                };
                (column, unit, field)
            })
            .collect();
        Some(Self {
            class,
            skip: !class.is_event(),
            wanted,
            columns,
            output: None,
        })
    }
}

/// Where each event type's [`Plan`] is, by type id: a table for the small
/// ids writers use (the JDK's are in the hundreds), a map for the others.
#[derive(Default)]
struct PlanIndex {
    small: Vec<u32>,
    large: IdMap<u64, usize>,
}

impl PlanIndex {
    /// Ids below this are looked up in the table.
    const SMALL: u64 = 4096;
    /// An empty slot in the table.
    const NONE: u32 = u32::MAX;

    #[inline]
    fn get(&self, type_id: u64) -> Option<usize> {
        if type_id < Self::SMALL {
            match self.small.get(type_id as usize) {
                Some(&slot) if slot != Self::NONE => return Some(slot as usize),
                _ => {}
            }
        }
        self.large.get(&type_id).copied()
    }

    fn insert(&mut self, type_id: u64, index: usize) {
        match u32::try_from(index) {
            Ok(slot) if type_id < Self::SMALL && slot != Self::NONE => {
                let at = type_id as usize;
                if self.small.len() <= at {
                    self.small.resize(at + 1, Self::NONE);
                }
                self.small[at] = slot;
            }
            _ => {
                self.large.insert(type_id, index);
            }
        }
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

/// The bytes of the UTF-8 string at `cursor` (after its encoding's tag)
/// when they are written as they are: most inline strings (a GC phase's
/// name) are short ASCII with nothing to quote, and are copied without
/// being checked as UTF-8 and for quotes apart. `None` for others, and for
/// bytes that fail to read (the caller reads them again the general way,
/// and fails the same way).
#[inline(always)]
fn plain_utf8<'a>(cursor: &mut Cursor<'a>, escaper: &Escaper) -> Option<&'a [u8]> {
    let len = usize::try_from(cursor.varint("a string").ok()?).ok()?;
    let bytes = cursor.bytes(len, "a string").ok()?;
    escaper.is_plain(bytes).then_some(bytes)
}

/// Appends `value` in decimal, as `Display` prints it.
#[inline]
fn push_decimal(out: &mut Vec<u8>, value: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends `2026-11-22T10:15:00.123456789Z`, as
/// [`iso`](crate::export::iso) writes it.
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
    /// Appends one column's cell, read from `cursor`, to `out`; with `out`
    /// `None`, only reads it (and fails where writing it would).
    #[inline(always)]
    fn cell(
        &mut self,
        column: Column,
        field: &FieldInfo,
        cursor: &mut Cursor<'_>,
        budget: &mut u64,
        out: Option<&mut Vec<u8>>,
    ) -> Result<(), ReadError> {
        match column {
            Column::Long(unit) => {
                spend(cursor, budget)?;
                let value = cursor.varint("a long")? as i64;
                if let Some(out) = out {
                    self.long(out, unit, value);
                }
            }
            Column::Int => {
                spend(cursor, budget)?;
                let value = cursor.varint("an int")? as i32;
                if let Some(out) = out {
                    push_decimal(out, value.into());
                }
            }
            Column::Short => {
                spend(cursor, budget)?;
                let value = cursor.varint("a short")? as i16;
                if let Some(out) = out {
                    push_decimal(out, value.into());
                }
            }
            Column::Byte => {
                spend(cursor, budget)?;
                let value = cursor.u8("a byte")? as i8;
                if let Some(out) = out {
                    push_decimal(out, value.into());
                }
            }
            Column::Boolean => {
                spend(cursor, budget)?;
                let value = cursor.u8("a boolean")? != 0;
                if let Some(out) = out {
                    out.extend_from_slice(if value { b"true" } else { b"false" });
                }
            }
            Column::String { class_id } => {
                spend(cursor, budget)?;
                let mut peek = cursor.clone();
                let tag = peek.u8("a string")?;
                if tag == StringEncoding::ConstantPool as u8 {
                    *cursor = peek;
                    let key = cursor.varint("a string pool key")?;
                    if let Some(out) = out {
                        self.pools
                            .append(out, class_id, key, &self.flattener, &self.escaper);
                    }
                } else if let Some(text) = (tag == StringEncoding::Utf8 as u8)
                    .then(|| plain_utf8(&mut peek, &self.escaper))
                    .flatten()
                {
                    *cursor = peek;
                    if let Some(out) = out {
                        out.extend_from_slice(text);
                    }
                } else {
                    let text = cursor.borrowed_string("a string")?;
                    if let (Some(out), Some(text)) = (out, text) {
                        self.escaper.escape_into(out, text.as_bytes());
                    }
                }
            }
            Column::Pooled { class_id } => {
                spend(cursor, budget)?;
                let key = cursor.varint("a pool key")?;
                if let Some(out) = out {
                    self.pools
                        .append(out, class_id, key, &self.flattener, &self.escaper);
                }
            }
            Column::Generic(unit) => {
                let value = self.chunk.read_field(cursor, field, 0, budget)?;
                if let Some(out) = out {
                    self.value(out, unit, &value);
                }
            }
        }
        Ok(())
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

/// Converts the events of `chunk` whose type `wanted` accepts (and, when
/// given, that `filter` keeps) to CSV rows, handed to `emit` in blocks
/// (filled from `buffers`), with at most `stack_depth` frames per stack
/// trace. The rows are those [`Flattener::write_row`] writes, byte for
/// byte; a chunk that fails has its rows before the failing event handed on
/// first.
pub fn chunk_rows(
    chunk: &Chunk<'_>,
    stack_depth: usize,
    wanted: &dyn Fn(&str) -> bool,
    filter: Option<&ChunkFilter<'_, '_, '_>>,
    buffers: &Buffers,
    emit: &mut dyn FnMut(Piece) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let mut rows = Rows {
        chunk,
        flattener: Flattener::new(chunk, stack_depth),
        escaper: Escaper::new(),
        pools: PoolTexts::default(),
        clock: IsoClock::default(),
        text: String::new(),
    };
    let mut plans: Vec<Option<Plan<'_>>> = Vec::new();
    let mut plan_of = PlanIndex::default();
    let mut outputs: Vec<Output> = Vec::new();
    let result = (|| -> Result<(), ExportError> {
        for raw in chunk.raw_events() {
            let mut raw = raw?;
            let index = match plan_of.get(raw.type_id) {
                Some(index) => index,
                None => {
                    let class = chunk.metadata.class(raw.type_id);
                    let wanted = class.is_some_and(|c| wanted(&c.name));
                    plans.push(Plan::new(chunk, class, wanted));
                    plan_of.insert(raw.type_id, plans.len() - 1);
                    plans.len() - 1
                }
            };
            let Some(plan) = plans[index].as_mut().filter(|p| !p.skip) else {
                continue; // undeclared: skipped, as the JDK does
            };
            let cursor = &mut raw.fields;
            let budget = &mut raw.budget;
            if !plan.wanted {
                for &(column, _, field) in &plan.columns {
                    rows.cell(column, field, cursor, budget, None)?;
                }
                continue;
            }
            // Filtered: decoded whole for the filter to look at; a kept
            // event's row is made from its values.
            let event = match filter {
                Some(filter) => {
                    let fields = chunk.read_fields(cursor, plan.class, 0, budget)?;
                    let event = Event {
                        offset: raw.offset,
                        size: raw.size,
                        type_id: raw.type_id,
                        fields,
                    };
                    if !filter.keep(&event) {
                        continue;
                    }
                    Some(event)
                }
                None => None,
            };
            let output = match plan.output {
                Some(output) => output,
                None => {
                    outputs.push(Output {
                        bytes: Vec::new(),
                        rows: 0,
                        announced: false,
                    });
                    plan.output = Some(outputs.len() - 1);
                    outputs.len() - 1
                }
            };
            let out = &mut outputs[output].bytes;
            let start = out.len();
            match &event {
                Some(event) => {
                    for (i, (&(_, unit, _), value)) in
                        plan.columns.iter().zip(&event.fields).enumerate()
                    {
                        if i > 0 {
                            out.push(b',');
                        }
                        rows.value(out, unit, value);
                    }
                }
                None => {
                    for (i, &(column, _, field)) in plan.columns.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        if let Err(error) = rows.cell(column, field, cursor, budget, Some(out)) {
                            // No part of a row that failed is written.
                            out.truncate(start);
                            return Err(error.into());
                        }
                    }
                }
            }
            Escaper::end_record(out, start);
            // Announced after its first row is made: a type whose first
            // event fails has no file, as before.
            if !outputs[output].announced {
                emit(Piece::Type {
                    index: output,
                    name: plan.class.name.clone(),
                    columns: plan.class.fields.len(),
                    header: rows.escaper.header(plan.class),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::iso;

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
