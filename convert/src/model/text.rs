//! The text of values, as every output shows them (a CSV cell, a `top`
//! line, what `--thread` and `--class` match, a folded stack's frames):
//! nested values flattened the way a spreadsheet wants them, by
//! [`Flattener`], which makes each pooled value's text once per chunk:
//!
//! - a thread is its Java name (the OS name when it has none);
//! - a class is its Java name: `java.lang.String`, `int[]`;
//! - a stack trace is its frames, top first, `pkg.Class.method(line)` joined
//!   with `;` (at most `stack_depth` of them), without the frames whose
//!   method the recording marks hidden (`jdk.types.Method`'s `hidden`: the
//!   JDK marks lambda forms and the frames of hidden classes so, such as
//!   `Main$$Lambda$14+0x...run`), as `jfr print` leaves them out; every
//!   output reads stacks so (CSV, `top`, folded stacks, flame graphs,
//!   pprof);
//! - a method is `pkg.Class.method`; simple types (symbols, frame types)
//!   are their text; other pooled types their `name` field when they have one;
//! - a `@Timestamp` is ISO-8601 UTC with nanoseconds, a `@Timespan` is
//!   nanoseconds; booleans are `true`/`false`; null is empty.
//!
//! And whose code a frame's text names: the JDK's ([`is_jdk_frame`]), or
//! the program's first frame under the JDK's ([`app_frame`]), as `top
//! --by app-site` groups and the flame graphs colour them.

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;

use jfr_format::ChunkHeader;
pub use jfr_format::java_class_name;
use jfr_format::names::{annotation, attribute, class, field, unit as unit_name};

use jfr_reader::IdMap;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::Event;
use jfr_reader::metadata::{ClassInfo, FieldInfo, Metadata};
use jfr_reader::value::Value;

/// The most links of a reference chain shown: the JDK's leak profiler
/// cuts its chains shorter.
const MAX_CHAIN: usize = 1000;

/// How a column's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Plain,
    TimestampTicks,
    TimestampMillis,
    TimespanTicks,
    TimespanScale(i64),
}

pub(crate) fn unit(metadata: &Metadata, field: &FieldInfo) -> Unit {
    for annotation in &field.annotations {
        let name = metadata
            .class(annotation.class_id)
            .map_or("", |c| c.name.as_str());
        let value = annotation
            .values
            .iter()
            .find(|(k, _)| k == attribute::VALUE)
            .map(|(_, v)| v.as_str());
        let unit = match (name, value) {
            (annotation::TIMESTAMP, Some(unit_name::TICKS)) => Unit::TimestampTicks,
            (annotation::TIMESTAMP, Some(unit_name::MILLISECONDS_SINCE_EPOCH)) => {
                Unit::TimestampMillis
            }
            (annotation::TIMESPAN, Some(unit_name::TICKS)) => Unit::TimespanTicks,
            (annotation::TIMESPAN, Some(unit_name::MICROSECONDS)) => Unit::TimespanScale(1_000),
            (annotation::TIMESPAN, Some(unit_name::MILLISECONDS)) => Unit::TimespanScale(1_000_000),
            (annotation::TIMESPAN, Some(unit_name::SECONDS)) => Unit::TimespanScale(1_000_000_000),
            _ => continue,
        };
        return unit;
    }
    Unit::Plain
}

/// Writes a chunk's events as CSV rows (one writer per event type).
pub struct Flattener<'c, 'a> {
    chunk: &'c Chunk<'a>,
    stack_depth: usize,
    /// The text of each pooled value met so far: a stack trace, thread or
    /// class is flattened once per chunk, not once per event.
    texts: RefCell<IdMap<(u64, u64), String>>,
    /// Whether each pooled method met so far is marked hidden.
    hidden: RefCell<IdMap<(u64, u64), bool>>,
    /// How deep `text` is in references to pooled values: a corrupt file
    /// can chain them (or loop, which the cache's placeholder stops).
    depth: Cell<usize>,
    /// Each event type's column units, by type id.
    units: RefCell<IdMap<u64, Vec<Unit>>>,
    clock: RefCell<IsoClock>,
}

/// References to pooled values are followed this deep for a cell's text;
/// the JDK's types nest four deep (a stack trace's frame's method's class's
/// name).
const MAX_REFERENCE_DEPTH: usize = 32;

impl<'c, 'a> Flattener<'c, 'a> {
    /// Flattens values of `chunk`, keeping at most `stack_depth` frames.
    pub fn new(chunk: &'c Chunk<'a>, stack_depth: usize) -> Self {
        Self {
            chunk,
            stack_depth,
            texts: RefCell::default(),
            hidden: RefCell::default(),
            depth: Cell::new(0),
            units: RefCell::default(),
            clock: RefCell::default(),
        }
    }

    /// The column names of an event type.
    pub fn header(class: &ClassInfo) -> Vec<String> {
        class.fields.iter().map(|f| f.name.clone()).collect()
    }

    /// Appends the text of one cell, a `value` in a column of `unit`, to
    /// `out`: what [`row`](Self::row) makes of it.
    pub(crate) fn cell_text(&self, unit: Unit, value: &Value, out: &mut String) {
        match (unit, value) {
            (Unit::Plain, Value::Ref { .. }) => out.push_str(&self.text(value)),
            (Unit::Plain, Value::String(text)) => out.push_str(text),
            (Unit::Plain, Value::Null) => {}
            _ => self.cell_into(unit, value, out),
        }
    }

    /// One event's cells.
    pub fn row(&self, event: &Event) -> Vec<String> {
        self.units_of(event)
            .iter()
            .zip(&event.fields)
            .map(|(unit, value)| self.cell(*unit, value))
            .collect()
    }

    /// The column units of `event`'s type, worked out once per type.
    fn units_of(&self, event: &Event) -> std::cell::RefMut<'_, Vec<Unit>> {
        let metadata = &self.chunk.metadata;
        std::cell::RefMut::map(self.units.borrow_mut(), |units| {
            units.entry(event.type_id).or_insert_with(|| {
                let class = metadata
                    .class(event.type_id)
                    .expect("events have declared types");
                class.fields.iter().map(|f| unit(metadata, f)).collect()
            })
        })
    }

    fn cell(&self, unit: Unit, value: &Value) -> String {
        let mut out = String::new();
        self.cell_into(unit, value, &mut out);
        out
    }

    /// Appends a cell's text to `out`.
    fn cell_into(&self, unit: Unit, value: &Value, out: &mut String) {
        use std::fmt::Write as _;
        let header = &self.chunk.header;
        // Writing to a String cannot fail.
        let _ = match (unit, self.chunk.resolve(value)) {
            (Unit::TimestampTicks, Value::Long(ticks)) => {
                self.iso_into(epoch_nanos(header, *ticks), out);
                Ok(())
            }
            (Unit::TimestampMillis, Value::Long(millis)) => {
                self.iso_into(millis.saturating_mul(1_000_000), out);
                Ok(())
            }
            (Unit::TimespanTicks, Value::Long(ticks)) => {
                let nanos = ((*ticks as f64) * 1e9 / header.ticks_per_second as f64).round();
                // Whole numbers below 2^53 print the same as an integer,
                // which formats without the float machinery.
                if nanos.abs() < (1u64 << 53) as f64 {
                    push_integer(out, nanos as i64);
                    Ok(())
                } else {
                    write!(out, "{nanos}")
                }
            }
            (Unit::TimespanScale(scale), Value::Long(amount)) => {
                push_integer(out, amount.saturating_mul(scale));
                Ok(())
            }
            (_, Value::Long(v)) => {
                push_integer(out, *v);
                Ok(())
            }
            (_, Value::Int(v)) => {
                push_integer(out, *v as i64);
                Ok(())
            }
            _ => {
                self.text_into(value, out);
                Ok(())
            }
        };
    }

    /// Appends `2026-11-22T10:15:00.123456789Z` to `out`.
    fn iso_into(&self, nanos: i64, out: &mut String) {
        let mut clock = self.clock.borrow_mut();
        out.push_str(std::str::from_utf8(clock.format(nanos)).expect("ASCII"));
    }

    /// The text of a value, as its CSV cell shows it (a thread's name, a
    /// class's Java name...), but without a field's unit applied.
    pub fn text(&self, value: &Value) -> String {
        let Value::Ref { class_id, key } = *value else {
            return self.text_of(value);
        };
        if let Some(text) = self.texts.borrow().get(&(class_id, key)) {
            return text.clone();
        }
        if self.depth.get() >= MAX_REFERENCE_DEPTH {
            return String::new();
        }
        // A placeholder first: a reference met again while its own text is
        // being made (a loop in a corrupt file) reads as empty.
        self.texts
            .borrow_mut()
            .insert((class_id, key), String::new());
        self.depth.set(self.depth.get() + 1);
        let text = self.text_of(self.chunk.resolve(value));
        self.depth.set(self.depth.get() - 1);
        self.texts
            .borrow_mut()
            .insert((class_id, key), text.clone());
        text
    }

    /// The text of a value that is not a reference.
    fn text_of(&self, value: &Value) -> String {
        let mut out = String::new();
        self.text_of_into(value, &mut out);
        out
    }

    /// Appends the text of a value that is not a reference (a reference's
    /// is empty) to `out`: what [`text`](Self::text) gives for it.
    fn text_of_into(&self, value: &Value, out: &mut String) {
        use std::fmt::Write as _;
        // Writing to a String cannot fail.
        match value {
            Value::Null | Value::Ref { .. } => {} // a missing key is null
            Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Byte(v) => push_integer(out, (*v).into()),
            Value::Short(v) => push_integer(out, (*v).into()),
            Value::Char(v) => out.push_str(&String::from_utf16_lossy(&[*v])),
            Value::Int(v) => push_integer(out, (*v).into()),
            Value::Long(v) => push_integer(out, *v),
            Value::Float(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Double(v) => {
                let _ = write!(out, "{v}");
            }
            Value::String(s) => out.push_str(s),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(';');
                    }
                    self.text_into(item, out);
                }
            }
            Value::Object { class_id, fields } => self.object_into(*class_id, fields, out),
        }
    }

    /// Appends [`text`](Self::text) of `value` to `out`, without a `String`
    /// of its own when it is cached or not a reference.
    fn text_into(&self, value: &Value, out: &mut String) {
        let Value::Ref { class_id, key } = value else {
            return self.text_of_into(value, out);
        };
        if let Some(text) = self.texts.borrow().get(&(*class_id, *key)) {
            out.push_str(text);
            return;
        }
        out.push_str(&self.text(value));
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

    /// The text of field `name`, taken as it is (not resolved), so that a
    /// reference goes through the cache in [`text`](Self::text).
    fn field_text(&self, class: &ClassInfo, fields: &[Value], name: &str) -> String {
        class
            .fields
            .iter()
            .position(|f| f.name == name)
            .and_then(|index| fields.get(index))
            .map(|value| self.text(value))
            .unwrap_or_default()
    }

    /// Appends the text of an object of class `class_id`.
    fn object_into(&self, class_id: u64, fields: &[Value], out: &mut String) {
        let metadata = &self.chunk.metadata;
        let Some(class) = metadata.class(class_id) else {
            return;
        };
        let text = |name: &str| self.field_text(class, fields, name);
        let field_into = |name: &str, out: &mut String| {
            let index = class.fields.iter().position(|f| f.name == name);
            if let Some(value) = index.and_then(|index| fields.get(index)) {
                self.text_into(value, out);
            }
        };
        match class.name.as_str() {
            class::THREAD => {
                let java_name = text(field::JAVA_NAME);
                if java_name.is_empty() {
                    field_into(field::OS_NAME, out);
                } else {
                    out.push_str(&java_name);
                }
            }
            class::CLASS => out.push_str(&java_class_name(&text(field::NAME))),
            class::METHOD => {
                field_into(field::TYPE, out);
                out.push('.');
                field_into(field::NAME, out);
            }
            class::STACK_TRACE => self.stack_text(class, fields, out),
            class::OLD_OBJECT => self.old_object_text(class, fields, out),
            class::OLD_OBJECT_GC_ROOT => {
                field_into(field::SYSTEM, out);
                out.push_str(": ");
                field_into(field::TYPE, out);
                let description = text(field::DESCRIPTION);
                if !description.is_empty() {
                    out.push_str(" (");
                    out.push_str(&description);
                    out.push(')');
                }
            }
            _ if class.simple_type && class.fields.len() == 1 => {
                if let Some(value) = fields.first() {
                    self.text_into(value, out);
                }
            }
            _ if class.fields.iter().any(|f| f.name == field::NAME) => field_into(field::NAME, out),
            _ => {
                for (i, (field, value)) in class.fields.iter().zip(fields).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&field.name);
                    out.push('=');
                    self.text_into(value, out);
                }
            }
        }
    }

    /// Appends an old object and the chain of references that holds it,
    /// the object first: `byte[] <- java.util.HashMap$Node.value <-
    /// java.util.HashMap$Node[][12] <- java.util.HashMap.table`. A
    /// description follows its object in parentheses; links the recorder
    /// left out are counted (`<- (3 more) <-`).
    fn old_object_text(&self, class: &ClassInfo, fields: &[Value], out: &mut String) {
        let describe = |class: &ClassInfo, fields: &[Value], out: &mut String| {
            let description = self.field_text(class, fields, field::DESCRIPTION);
            if !description.is_empty() {
                let _ = write!(out, " ({description})");
            }
        };
        out.push_str(&self.field_text(class, fields, field::TYPE));
        describe(class, fields, out);
        let mut object = (class, fields);
        // Chains the JDK writes end; one in a malformed file may loop.
        for _ in 0..MAX_CHAIN {
            let Some((reference, links)) = self.object_field(object, field::REFERRER) else {
                return;
            };
            let Some(holder) = self.object_field((reference, links), field::OBJECT) else {
                return;
            };
            out.push_str(" <- ");
            if let Some((Value::Int(skip @ 1..), _)) = self.field(reference, links, field::SKIP) {
                let _ = write!(out, "({skip} more) <- ");
            }
            out.push_str(&self.field_text(holder.0, holder.1, field::TYPE));
            if let Some((c, f)) = self.object_field((reference, links), field::FIELD) {
                let _ = write!(out, ".{}", self.field_text(c, f, field::NAME));
            } else if let Some((c, f)) = self.object_field((reference, links), field::ARRAY) {
                let _ = write!(out, "[{}]", self.field_text(c, f, field::INDEX));
            }
            describe(holder.0, holder.1, out);
            object = holder;
        }
        out.push_str(" <- ...");
    }

    /// Field `name` of an object, when it is itself an object (resolved).
    fn object_field<'v>(
        &'v self,
        (class, fields): (&ClassInfo, &'v [Value]),
        name: &str,
    ) -> Option<(&'v ClassInfo, &'v [Value])> {
        match self.field(class, fields, name)? {
            (Value::Object { class_id, fields }, _) => {
                Some((self.chunk.metadata.class(*class_id)?, fields))
            }
            _ => None,
        }
    }

    /// The frames of a stack trace value, top first, hidden ones left out,
    /// at most `stack_depth` of them: `pkg.Class.method`, followed by
    /// `(line)` when `lines` is set and the line is known. Empty for a null
    /// stack trace.
    pub fn frames(&self, stack_trace: &Value, lines: bool) -> Vec<String> {
        match self.chunk.resolve(stack_trace) {
            Value::Object { class_id, fields } => match self.chunk.metadata.class(*class_id) {
                Some(class) if class.name == class::STACK_TRACE => {
                    self.stack_frames(class, fields, lines)
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// A stack trace value's frames, top first, hidden ones left out, at
    /// most `stack_depth` of them, each with its method and line, and
    /// whether frames beyond them are missing. Empty for a null stack
    /// trace.
    pub fn stack_parts(&self, stack_trace: &Value) -> Stack {
        let Value::Object { class_id, fields } = self.chunk.resolve(stack_trace) else {
            return Stack::default();
        };
        let Some(class) = self.chunk.metadata.class(*class_id) else {
            return Stack::default();
        };
        let Some((Value::Array(frames), _)) = self.field(class, fields, field::FRAMES) else {
            return Stack::default();
        };
        let shown: Vec<&Value> = self.shown(frames).collect();
        Stack {
            frames: shown
                .iter()
                .take(self.stack_depth)
                .map(|frame| self.frame_parts(frame))
                .collect(),
            truncated: self.is_cut(class, fields, shown.len()),
        }
    }

    /// Whether a stack trace of `frames` frames shown is cut, frames
    /// nearest the root missing: the recorder cut it at its depth (its
    /// `truncated` field), or it has more than the `stack_depth` frames
    /// kept.
    fn is_cut(&self, class: &ClassInfo, fields: &[Value], frames: usize) -> bool {
        frames > self.stack_depth
            || matches!(
                self.field(class, fields, field::TRUNCATED),
                Some((Value::Boolean(true), _))
            )
    }

    /// A frame's method (as the frame holds it) and line.
    fn frame_parts(&self, frame: &Value) -> Frame {
        let unknown = Frame {
            method: Value::Null,
            line: None,
        };
        let Value::Object { class_id, fields } = self.chunk.resolve(frame) else {
            return unknown;
        };
        let Some(class) = self.chunk.metadata.class(*class_id) else {
            return unknown;
        };
        let method = class
            .fields
            .iter()
            .position(|f| f.name == field::METHOD)
            .and_then(|index| fields.get(index))
            .cloned()
            .unwrap_or(Value::Null);
        let line = match self.field(class, fields, field::LINE_NUMBER) {
            Some((Value::Int(line), _)) => u32::try_from(*line).ok(),
            _ => None,
        };
        Frame { method, line }
    }

    /// The text of field `name` of an object value (resolved if it is a
    /// reference): a method's `descriptor`, say. Empty when it has none.
    pub fn field_text_of(&self, value: &Value, name: &str) -> String {
        match self.chunk.resolve(value) {
            Value::Object { class_id, fields } => self
                .chunk
                .metadata
                .class(*class_id)
                .map(|class| self.field_text(class, fields, name))
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn stack_frames(&self, class: &ClassInfo, fields: &[Value], lines: bool) -> Vec<String> {
        let Some((Value::Array(frames), _)) = self.field(class, fields, field::FRAMES) else {
            return Vec::new();
        };
        self.shown(frames)
            .take(self.stack_depth)
            .map(|frame| self.frame(frame, lines))
            .collect()
    }

    /// The frames of a stack trace's `frames` that stacks show, top first:
    /// those whose method is not marked hidden.
    fn shown<'v>(&'v self, frames: &'v [Value]) -> impl Iterator<Item = &'v Value> + 'v {
        frames.iter().filter(|frame| !self.is_hidden(frame))
    }

    /// Whether a frame's method is marked hidden (its `hidden` field is
    /// true), looked up once per pooled method.
    fn is_hidden(&self, frame: &Value) -> bool {
        let Value::Object { class_id, fields } = self.chunk.resolve(frame) else {
            return false;
        };
        let Some(method) = self
            .chunk
            .metadata
            .class(*class_id)
            .and_then(|class| class.fields.iter().position(|f| f.name == field::METHOD))
            .and_then(|index| fields.get(index))
        else {
            return false;
        };
        let key = match *method {
            Value::Ref { class_id, key } => Some((class_id, key)),
            _ => None,
        };
        if let Some(hidden) = key.and_then(|key| self.hidden.borrow().get(&key).copied()) {
            return hidden;
        }
        let hidden = match self.chunk.resolve(method) {
            Value::Object { class_id, fields } => {
                self.chunk.metadata.class(*class_id).is_some_and(|class| {
                    matches!(
                        self.field(class, fields, field::HIDDEN),
                        Some((Value::Boolean(true), _))
                    )
                })
            }
            _ => false,
        };
        if let Some(key) = key {
            self.hidden.borrow_mut().insert(key, hidden);
        }
        hidden
    }

    /// Hands the frames of a stack trace value to `frame` root first: the
    /// frames [`frames`](Self::frames) gives without lines, in the other
    /// order, without a `String` each (a folded stack is made of hundreds
    /// of them). An unreadable frame is handed over as empty. Returns
    /// whether the stack is cut, frames nearest the root missing: the
    /// recorder cut it at its depth (its `truncated` field), or it has more
    /// than `stack_depth` frames shown.
    pub fn frames_root_first(&self, stack_trace: &Value, frame: &mut dyn FnMut(&str)) -> bool {
        let metadata = &self.chunk.metadata;
        let Value::Object { class_id, fields } = self.chunk.resolve(stack_trace) else {
            return false;
        };
        let Some(class) = metadata
            .class(*class_id)
            .filter(|class| class.name == class::STACK_TRACE)
        else {
            return false;
        };
        let Some((Value::Array(frames), _)) = self.field(class, fields, field::FRAMES) else {
            return self.is_cut(class, fields, 0);
        };
        let shown: Vec<&Value> = self.shown(frames).collect();
        // Every frame of a stack is of one class: its method field is
        // looked up once.
        let mut method_field: Option<(u64, Option<usize>)> = None;
        for value in shown[..shown.len().min(self.stack_depth)].iter().rev() {
            let Value::Object { class_id, fields } = self.chunk.resolve(value) else {
                frame("");
                continue;
            };
            let index = match method_field {
                Some((id, index)) if id == *class_id => index,
                _ => {
                    let index = metadata
                        .class(*class_id)
                        .and_then(|c| c.fields.iter().position(|f| f.name == field::METHOD));
                    method_field = Some((*class_id, index));
                    index
                }
            };
            match index.and_then(|index| fields.get(index)) {
                Some(method @ Value::Ref { class_id, key }) => {
                    if !self.texts.borrow().contains_key(&(*class_id, *key)) {
                        self.text(method);
                    }
                    let texts = self.texts.borrow();
                    frame(texts.get(&(*class_id, *key)).map_or("", String::as_str));
                }
                Some(method) => frame(&self.text(method)),
                None => frame(""),
            }
        }
        self.is_cut(class, fields, shown.len())
    }

    /// Appends a stack trace's text: what [`stack_frames`](Self::stack_frames)
    /// gives with lines, joined with `;`, without a `String` per frame (a
    /// chunk's stack traces are many, and each is flattened once).
    fn stack_text(&self, class: &ClassInfo, fields: &[Value], out: &mut String) {
        let Some((Value::Array(frames), _)) = self.field(class, fields, field::FRAMES) else {
            return;
        };
        for (i, frame) in self.shown(frames).take(self.stack_depth).enumerate() {
            if i > 0 {
                out.push(';');
            }
            let Value::Object { class_id, fields } = self.chunk.resolve(frame) else {
                continue;
            };
            let Some(class) = self.chunk.metadata.class(*class_id) else {
                continue;
            };
            let method = class
                .fields
                .iter()
                .position(|f| f.name == field::METHOD)
                .and_then(|index| fields.get(index));
            match method {
                Some(method @ Value::Ref { class_id, key }) => {
                    let cached = self.texts.borrow().get(&(*class_id, *key)).is_some();
                    if !cached {
                        self.text(method);
                    }
                    if let Some(text) = self.texts.borrow().get(&(*class_id, *key)) {
                        out.push_str(text);
                    }
                }
                Some(method) => out.push_str(&self.text(method)),
                None => {}
            }
            if let Some((Value::Int(line), _)) = self.field(class, fields, field::LINE_NUMBER)
                && *line >= 0
            {
                out.push('(');
                push_integer(out, (*line).into());
                out.push(')');
            }
        }
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
        let method = self.field_text(class, fields, field::METHOD);
        match self.field(class, fields, field::LINE_NUMBER) {
            Some((Value::Int(line), _)) if lines && *line >= 0 => format!("{method}({line})"),
            _ => method,
        }
    }
}

/// A stack trace as [`Flattener::stack_parts`] reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stack {
    /// The frames, top (the allocation) first.
    pub frames: Vec<Frame>,
    /// Frames nearer the root are missing: the trace was cut at the
    /// agent's or JFR's depth when recorded (its `truncated` field), or
    /// had more frames than the flattener keeps.
    pub truncated: bool,
}

/// One frame of a [`Stack`].
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The frame's method, as the frame holds it: a pool reference in
    /// every recording seen, whose [`Flattener::text`], `pkg.Class.method`,
    /// is made once per chunk.
    pub method: Value,
    /// The line, when known.
    pub line: Option<u32>,
}

/// The packages of the JDK's own code, which `--by app-site` looks past.
const JDK_PACKAGES: [&str; 5] = ["java.", "javax.", "jdk.", "sun.", "com.sun."];

/// Whether `frame` (`pkg.Class.method`, with or without a line) is the
/// JDK's own code: in one of its packages.
pub fn is_jdk_frame(frame: &str) -> bool {
    JDK_PACKAGES.iter().any(|p| frame.starts_with(p))
}

/// The first frame of a stack (frames joined with `;`, top first) outside
/// the JDK's packages, or the top frame if there is none.
pub fn app_frame(stack: &str) -> &str {
    let top = stack.split(';').next().unwrap_or(stack);
    stack
        .split(';')
        .find(|frame| !is_jdk_frame(frame))
        .unwrap_or(top)
}

/// Appends `value` in decimal, as `Display` does, without the formatting
/// machinery (a large share of a CSV row's cost when every cell is a number).
fn push_integer(out: &mut String, value: i64) {
    out.push_str(itoa::Buffer::new().format(value));
}

/// A `@Timestamp(TICKS)` value of a chunk as nanoseconds since the epoch,
/// by the chunk's own clock (its start in ticks and in nanoseconds).
pub fn epoch_nanos(header: &ChunkHeader, ticks: i64) -> i64 {
    let per_nano = header.ticks_per_second as f64 / 1e9;
    // Saturating: a corrupt file's ticks must not overflow (a panic in
    // debug builds, a wrapped time in release).
    let since_start = ticks.saturating_sub(header.start_ticks) as f64 / per_nano;
    header.start_nanos.saturating_add(since_start as i64)
}

/// `2026-11-22T10:15:00.123456789Z` (without parsing a format string for
/// every cell).
pub(crate) fn iso(nanos: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(nanos)
        .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

/// Formats timestamps as [`iso`] does, the date and time only when the
/// second changes: events come roughly in time order, so most timestamps
/// only need their nanoseconds formatted.
#[derive(Debug, Default)]
pub(crate) struct IsoClock {
    /// The last second formatted.
    second: Option<i64>,
    /// The last timestamp formatted, `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`:
    /// the next one of the same second only rewrites its nanoseconds.
    text: Vec<u8>,
}

/// The decimal digits of 0 to 99, two by two.
const PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

impl IsoClock {
    /// `nanos` since the epoch as `2026-11-22T10:15:00.123456789Z` (ASCII).
    #[inline]
    pub(crate) fn format(&mut self, nanos: i64) -> &[u8] {
        let (second, fraction) = (
            nanos.div_euclid(1_000_000_000),
            nanos.rem_euclid(1_000_000_000),
        );
        if self.second != Some(second) {
            let text = iso(second.saturating_mul(1_000_000_000));
            self.text.clear();
            self.text
                .extend_from_slice(text.split('.').next().unwrap_or(&text).as_bytes());
            self.text.extend_from_slice(b".000000000Z");
            self.second = Some(second);
        }
        // The nine digits before the `Z`.
        let end = self.text.len() - 1;
        let digits = &mut self.text[end - 9..end];
        let mut rest = fraction as u32; // below 10^9
        for at in [7, 5, 3, 1] {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        digits[0] = b'0' + rest as u8;
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_as_display_does() {
        for value in [0, 7, -7, 10, 99, -100, 1 << 40, i64::MAX, i64::MIN] {
            let mut out = String::from("x");
            push_integer(&mut out, value);
            assert_eq!(out, format!("x{value}"));
        }
    }

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

    #[test]
    fn the_app_frame_is_the_first_outside_the_jdk() {
        let stack = "java.util.Arrays.copyOf(3537);jdk.internal.misc.X.y(1);App.grow(12);java.lang.Thread.run(840)";
        assert_eq!(app_frame(stack), "App.grow(12)");
        assert_eq!(app_frame("App.main(3)"), "App.main(3)");
        // Only the JDK's frames: the top one.
        assert_eq!(
            app_frame("java.lang.String.<init>(5);java.lang.Thread.run(840)"),
            "java.lang.String.<init>(5)"
        );
        // A package that only starts like the JDK's is the program's.
        assert_eq!(app_frame("javafx.Foo.bar(1)"), "javafx.Foo.bar(1)");
        assert_eq!(app_frame("java.a(1);javaish.B.c(2)"), "javaish.B.c(2)");
    }
}
