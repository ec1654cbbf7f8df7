//! Declaring event types and writing events.
//!
//! An event type is declared once with an [`EventTypeBuilder`] and registered
//! with [`crate::Recording::register`], which returns an [`EventType`]. An
//! event is then written with [`crate::Recording::event`]: one call per field,
//! in declaration order, each checked against the declared type, and a
//! [`EventWriter::commit`]. A write may name its field first
//! ([`EventWriter::field`]), so that a field written in another field's place
//! is caught even when both have one type. A wrong or missing field is an
//! error at commit and the event is not written, so a mistake can never produce a file that
//! readers misparse. Pooled values are passed as the `*Ref` handles the
//! recording's pools hand out; keys are never the caller's arithmetic.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::format::names::{field as field_name, setting as setting_name};
use crate::format::{varint_len, write_string, write_varint, write_varint_i32};
use crate::metadata::ClassId;
use crate::pool::{
    ClassLoaderRef, ClassRef, ConstantRef, MethodRef, ModuleRef, PackageRef, PoolRef, Pools,
    StackTraceField, StackTraceRef, StringRef, ThreadGroupRef, ThreadRef,
};
use crate::{Error, Recording, Sink, Ticks};

/// The type of an event field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// `boolean`: one byte.
    Boolean,
    /// `byte`: one byte.
    Byte,
    /// `short`: a varint.
    Short,
    /// `char`: a UTF-16 code unit, a varint.
    Char,
    /// `int`: a varint.
    Int,
    /// `long`: a varint.
    Long,
    /// `float`: four bytes, big-endian.
    Float,
    /// `double`: eight bytes, big-endian.
    Double,
    /// `java.lang.String`, inline (or by reference to the String pool).
    String,
    /// `java.lang.Thread`, pooled.
    Thread,
    /// `java.lang.Class`, pooled.
    Class,
    /// `jdk.types.StackTrace`, pooled.
    StackTrace,
    /// `jdk.types.Method`, pooled.
    Method,
    /// `jdk.types.ClassLoader`, pooled.
    ClassLoader,
    /// `jdk.types.Package`, pooled.
    Package,
    /// `jdk.types.Module`, pooled.
    Module,
    /// `jdk.types.ThreadGroup`, pooled.
    ThreadGroup,
    /// A value type registered with [`crate::Recording::register_value_type`],
    /// written inline (its fields in place).
    Struct(ValueTypeId),
    /// A value type registered with [`crate::Recording::register_value_type`],
    /// held by key: a constant of the chunk ([`crate::Recording::constant`]).
    /// The JDK declares `jdk.types.OldObject`, `jdk.types.GCName` and most
    /// of its other value types so.
    Constant(ValueTypeId),
}

/// The id of a registered value type, for [`FieldType::Struct`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValueTypeId(pub(crate) ClassId);

/// One field's place in a layout: its type and whether it is an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) field_type: FieldType,
    pub(crate) array: bool,
}

impl Slot {
    pub(crate) const fn one(field_type: FieldType) -> Self {
        Self {
            field_type,
            array: false,
        }
    }
}

/// A setting of an event type, as the JDK declares them (`jdk.settings.*`):
/// what a recording's configuration may set for the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `enabled`: whether the event is recorded.
    Enabled,
    /// `stackTrace`: whether stack traces are recorded.
    StackTrace,
    /// `threshold`: the shortest duration recorded.
    Threshold,
    /// `period`: how often a periodic event is emitted.
    Period,
    /// `throttle`: the most events per time unit.
    Throttle,
    /// `cutoff`: the longest running time.
    Cutoff,
}

impl Setting {
    /// The setting's name in the metadata.
    pub fn name(self) -> &'static str {
        match self {
            Self::Enabled => setting_name::ENABLED,
            Self::StackTrace => setting_name::STACK_TRACE,
            Self::Threshold => setting_name::THRESHOLD,
            Self::Period => setting_name::PERIOD,
            Self::Throttle => setting_name::THROTTLE,
            Self::Cutoff => setting_name::CUTOFF,
        }
    }
}

/// A value for a struct field or an array element, where fields are given
/// as data rather than one call each.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)] // Each variant holds the type its name says.
pub enum Value<'a> {
    Boolean(bool),
    Byte(i8),
    Short(i16),
    Char(u16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    String(Option<&'a str>),
    Thread(Option<ThreadRef>),
    Class(Option<ClassRef>),
    StackTrace(Option<StackTraceRef>),
    Method(Option<MethodRef>),
    ClassLoader(Option<ClassLoaderRef>),
    Package(Option<PackageRef>),
    Module(Option<ModuleRef>),
    ThreadGroup(Option<ThreadGroupRef>),
    /// A value of a registered value type: its fields in declaration order.
    Struct(&'a ValueType, &'a [Value<'a>]),
    /// A constant of the chunk, for a [`FieldType::Constant`] field; `None`
    /// is null.
    Constant(Option<ConstantRef>),
    /// An array: every element of the field's declared type.
    Array(&'a [Value<'a>]),
}

impl Value<'_> {
    /// The element type of a single value (`None` for an array).
    pub(crate) fn field_type(&self) -> Option<FieldType> {
        Some(match self {
            Self::Boolean(_) => FieldType::Boolean,
            Self::Byte(_) => FieldType::Byte,
            Self::Short(_) => FieldType::Short,
            Self::Char(_) => FieldType::Char,
            Self::Int(_) => FieldType::Int,
            Self::Long(_) => FieldType::Long,
            Self::Float(_) => FieldType::Float,
            Self::Double(_) => FieldType::Double,
            Self::String(_) => FieldType::String,
            Self::Thread(_) => FieldType::Thread,
            Self::Class(_) => FieldType::Class,
            Self::StackTrace(_) => FieldType::StackTrace,
            Self::Method(_) => FieldType::Method,
            Self::ClassLoader(_) => FieldType::ClassLoader,
            Self::Package(_) => FieldType::Package,
            Self::Module(_) => FieldType::Module,
            Self::ThreadGroup(_) => FieldType::ThreadGroup,
            Self::Struct(value_type, _) => FieldType::Struct(value_type.id),
            Self::Constant(constant) => FieldType::Constant(ValueTypeId((*constant)?.class)),
            Self::Array(_) => return None,
        })
    }

    fn pool_ref(&self) -> Option<Option<PoolRef>> {
        Some(match *self {
            Self::Thread(r) => r.map(PoolRef::Thread),
            Self::Class(r) => r.map(PoolRef::Class),
            Self::StackTrace(r) => r.map(PoolRef::StackTrace),
            Self::Method(r) => r.map(PoolRef::Method),
            Self::ClassLoader(r) => r.map(PoolRef::ClassLoader),
            Self::Package(r) => r.map(PoolRef::Package),
            Self::Module(r) => r.map(PoolRef::Module),
            Self::ThreadGroup(r) => r.map(PoolRef::ThreadGroup),
            _ => return None,
        })
    }
}

/// A declaration of a value type: a struct that event fields (and other
/// value types) hold inline.
#[derive(Debug, Clone)]
pub struct ValueTypeBuilder {
    pub(crate) name: String,
    pub(crate) label: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) fields: Vec<FieldSpec>,
    pub(crate) simple: bool,
}

impl ValueTypeBuilder {
    /// A value type named `name` (`myapp.types.Point`).
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            label: None,
            description: None,
            fields: Vec::new(),
            simple: false,
        }
    }

    /// `simpleType`: readers show the type's one field in its place, as the
    /// JDK's `jdk.types.GCName` reads as a string. A simple type must have
    /// exactly one field.
    pub fn simple(mut self) -> Self {
        self.simple = true;
        self
    }

    /// `@Label`.
    pub fn label(mut self, label: &str) -> Self {
        self.label = Some(label.to_owned());
        self
    }

    /// `@Description`.
    pub fn description(mut self, description: &str) -> Self {
        self.description = Some(description.to_owned());
        self
    }

    /// Adds a field.
    pub fn field(mut self, field: FieldSpec) -> Self {
        self.fields.push(field);
        self
    }
}

/// A registered value type, for [`FieldType::Struct`] and [`Value::Struct`].
#[derive(Debug, Clone)]
pub struct ValueType {
    pub(crate) id: ValueTypeId,
    pub(crate) name: Arc<str>,
    pub(crate) fields: Arc<[Slot]>,
    pub(crate) field_names: Arc<[String]>,
    pub(crate) recording_id: u64,
}

impl ValueType {
    /// The id to declare fields of this type with: `FieldType::Struct(id)`
    /// or `FieldType::Constant(id)`.
    pub fn id(&self) -> ValueTypeId {
        self.id
    }

    /// The value type's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a number means: the annotations readers use to show units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `@DataAmount("BYTES")`.
    Bytes,
    /// `@DataAmount("BITS")`.
    Bits,
    /// `@Timestamp("TICKS")`: a point in time on the recording's clock.
    TimestampTicks,
    /// `@Timestamp("MILLISECONDS_SINCE_EPOCH")`.
    TimestampMillisSinceEpoch,
    /// `@Timespan("TICKS")`: a duration on the recording's clock.
    TimespanTicks,
    /// `@Timespan("NANOSECONDS")`.
    TimespanNanos,
    /// `@Timespan("MILLISECONDS")`.
    TimespanMillis,
    /// `@Timespan("SECONDS")`.
    TimespanSeconds,
    /// `@Percentage`: a fraction between 0 and 1.
    Percentage,
    /// `@Frequency`: per second.
    Frequency,
    /// `@MemoryAddress`.
    MemoryAddress,
}

/// One field of an event type, beyond the standard leading ones.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    pub(crate) name: String,
    pub(crate) field_type: FieldType,
    pub(crate) label: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) unit: Option<Unit>,
    pub(crate) unsigned: bool,
    pub(crate) relation: Option<String>,
    pub(crate) array: bool,
}

impl FieldSpec {
    /// A field named `name` of type `field_type`.
    pub fn new(name: &str, field_type: FieldType) -> Self {
        Self {
            name: name.to_owned(),
            field_type,
            label: None,
            description: None,
            unit: None,
            unsigned: false,
            relation: None,
            array: false,
        }
    }

    /// Makes the field an array of its type. Avoid arrays of primitives in
    /// event types: JDK 17's `jfr print` fails on them (its `--json` and
    /// Mission Control do not).
    pub fn array(mut self) -> Self {
        self.array = true;
        self
    }

    pub(crate) fn slot(&self) -> Slot {
        Slot {
            field_type: self.field_type,
            array: self.array,
        }
    }

    /// `@Label`: the name tools show.
    pub fn label(mut self, label: &str) -> Self {
        self.label = Some(label.to_owned());
        self
    }

    /// `@Description`.
    pub fn description(mut self, description: &str) -> Self {
        self.description = Some(description.to_owned());
        self
    }

    /// The unit, so tools show `1.0 MB` rather than `1048576`.
    pub fn unit(mut self, unit: Unit) -> Self {
        self.unit = Some(unit);
        self
    }

    /// `@Unsigned`: the value is an unsigned number.
    pub fn unsigned(mut self) -> Self {
        self.unsigned = true;
        self
    }

    /// A relation annotation (`jdk.types.GcId`): fields of different events
    /// with one relation hold ids of one thing, which tools join on. The
    /// recording declares the annotation type, itself annotated
    /// `@Relational`, at its first use.
    pub fn relation(mut self, annotation: &str) -> Self {
        self.relation = Some(annotation.to_owned());
        self
    }
}

/// A declaration of an event type, to register with a recording.
///
/// Every event starts with `startTime`, then `duration` if it has one (the
/// JDK requires this order), then `eventThread` and `stackTrace` if it has
/// them, then its own fields.
#[derive(Debug, Clone)]
pub struct EventTypeBuilder {
    pub(crate) name: String,
    pub(crate) label: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) category: Vec<String>,
    pub(crate) experimental: bool,
    pub(crate) duration: bool,
    pub(crate) thread: bool,
    pub(crate) stack_trace: bool,
    pub(crate) fields: Vec<FieldSpec>,
    pub(crate) settings: Vec<(Setting, String)>,
}

impl EventTypeBuilder {
    /// An event type named `name` (`jdk.ObjectAllocationSample`,
    /// `myapp.CacheMiss`), with a start time and nothing else yet.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            label: None,
            description: None,
            category: Vec::new(),
            experimental: false,
            duration: false,
            thread: false,
            stack_trace: false,
            fields: Vec::new(),
            settings: Vec::new(),
        }
    }

    /// `@Label`: the name tools show.
    pub fn label(mut self, label: &str) -> Self {
        self.label = Some(label.to_owned());
        self
    }

    /// `@Description`.
    pub fn description(mut self, description: &str) -> Self {
        self.description = Some(description.to_owned());
        self
    }

    /// `@Category`: where tools file the event, outermost first.
    pub fn category(mut self, path: &[&str]) -> Self {
        self.category = path.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// `@Experimental`: tools hide the event by default.
    pub fn experimental(mut self) -> Self {
        self.experimental = true;
        self
    }

    /// Adds `duration` (ticks), right after `startTime`.
    pub fn with_duration(mut self) -> Self {
        self.duration = true;
        self
    }

    /// Adds `eventThread`: the thread the event happened in.
    pub fn with_thread(mut self) -> Self {
        self.thread = true;
        self
    }

    /// Adds `stackTrace`: where the event happened.
    pub fn with_stack_trace(mut self) -> Self {
        self.stack_trace = true;
        self
    }

    /// Declares a setting with its default value (`"true"`, `"20 ms"`,
    /// `"150/s"`, `"off"`), as the JDK's event types declare theirs.
    pub fn setting(mut self, setting: Setting, default_value: &str) -> Self {
        self.settings.push((setting, default_value.to_owned()));
        self
    }

    /// Adds a field after the standard ones and those added before.
    pub fn field(mut self, field: FieldSpec) -> Self {
        self.fields.push(field);
        self
    }

    /// The fields' slots in encoding order, standard fields included.
    pub(crate) fn layout(&self) -> Vec<Slot> {
        let mut layout = vec![Slot::one(FieldType::Long)];
        if self.duration {
            layout.push(Slot::one(FieldType::Long));
        }
        if self.thread {
            layout.push(Slot::one(FieldType::Thread));
        }
        if self.stack_trace {
            layout.push(Slot::one(FieldType::StackTrace));
        }
        layout.extend(self.fields.iter().map(FieldSpec::slot));
        layout
    }

    /// The field names in encoding order, standard fields included.
    pub(crate) fn field_names(&self) -> Vec<String> {
        let mut names = vec![field_name::START_TIME.to_owned()];
        if self.duration {
            names.push(field_name::DURATION.to_owned());
        }
        if self.thread {
            names.push(field_name::EVENT_THREAD.to_owned());
        }
        if self.stack_trace {
            names.push(field_name::STACK_TRACE.to_owned());
        }
        names.extend(self.fields.iter().map(|f| f.name.clone()));
        names
    }
}

/// A registered event type: what [`crate::Recording::event`] writes.
#[derive(Debug, Clone)]
pub struct EventType {
    pub(crate) id: ClassId,
    pub(crate) name: Arc<str>,
    /// Slots of the fields after `startTime`, in order.
    pub(crate) fields: Arc<[Slot]>,
    pub(crate) field_names: Arc<[String]>,
    /// The typed write ([`crate::Recording::typed_event`]'s call site, by
    /// address) found to write every field of this type in order, by name
    /// and type (0: none yet). Its later events skip those checks.
    pub(crate) typed_site: Arc<AtomicUsize>,
    /// Which recording registered it, so another recording refuses it.
    pub(crate) recording_id: u64,
}

impl EventType {
    /// The event type's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The class id the recording gave it.
    pub fn id(&self) -> ClassId {
        self.id
    }
}

/// Appends `body` preceded by its size as a varint, the size counting itself.
pub(crate) fn write_sized(out: &mut Vec<u8>, body: &[u8]) {
    let size = sized_len(body.len());
    write_varint(out, size as u64);
    out.extend_from_slice(body);
}

/// The total size of an event whose body (after the size) is `body_len`
/// bytes: `n = body_len + varint_len(n)`.
pub(crate) fn sized_len(body_len: usize) -> usize {
    let mut size = body_len + 1;
    while body_len + varint_len(size as u64) != size {
        size = body_len + varint_len(size as u64);
    }
    size
}

/// What went wrong writing an event, kept small (the writer is moved on every
/// call) and turned into an [`Error`] at commit.
#[derive(Debug, Clone, Copy)]
enum Failure {
    /// Field `index` (after `startTime`) was written as `written` (`None`:
    /// as an array, or a struct or array whose contents do not match).
    Mismatch {
        index: usize,
        written: Option<FieldType>,
    },
    /// Field `index` was named `written` ([`EventWriter::field`]) but is
    /// declared with another name.
    Misnamed { index: usize, written: &'static str },
    /// Field `index` holds a pooled value from another recording.
    ForeignReference { index: usize },
    /// Field `index` holds a constant of an earlier chunk.
    StaleConstant { index: usize },
    /// The event type was registered with another recording.
    ForeignEventType,
}

/// Writes one event, field by field. Dropping it without [`commit`](Self::commit)
/// discards the event.
#[must_use = "an event is written only when committed"]
pub struct EventWriter<'r, S: Sink> {
    recording: &'r mut Recording<S>,
    event_type: &'r EventType,
    /// Where this event's size placeholder is in the event buffer.
    start: usize,
    /// The index in `event_type.fields` of the next field.
    next: usize,
    /// Whether the fields' names and types are known right: the event is
    /// written by a typed write that wrote this event type right before.
    layout_known: bool,
    /// The typed write's call site, by address (0: not a typed write).
    typed_site: usize,
    failure: Option<Failure>,
    committed: bool,
}

// The writer moves by value through each call of a chain; the writers of
// single fields are inlined always, so that a chain keeps it in registers
// instead of copying it through every call.
impl<'r, S: Sink> EventWriter<'r, S> {
    /// `typed_site` is the address of a typed write's call site, or 0.
    #[inline(always)]
    pub(crate) fn new(
        recording: &'r mut Recording<S>,
        event_type: &'r EventType,
        start_time: Ticks,
        typed_site: usize,
    ) -> Self {
        let start = recording.events.len();
        let failure =
            (event_type.recording_id != recording.id).then_some(Failure::ForeignEventType);
        let buffer = &mut recording.events;
        buffer.push(0); // size placeholder, patched at commit
        write_varint(buffer, event_type.id.get());
        write_varint(buffer, start_time.0 as u64);
        // Relaxed: the address stands for code that never changes; a stale
        // 0 only costs the checks.
        let layout_known = typed_site != 0
            && failure.is_none()
            && event_type.typed_site.load(Ordering::Relaxed) == typed_site;
        Self {
            recording,
            event_type,
            start,
            next: 0,
            layout_known,
            typed_site,
            failure,
            committed: false,
        }
    }

    /// Checks that the next field is a single value of type `expected`; on a
    /// mismatch records the first failure and returns false.
    #[inline(always)]
    fn expect(&mut self, expected: FieldType) -> bool {
        if self.layout_known {
            self.next += 1;
            return true;
        }
        if self.failure.is_none()
            && self.event_type.fields.get(self.next) == Some(&Slot::one(expected))
        {
            self.next += 1;
            return true;
        }
        self.failure.get_or_insert(Failure::Mismatch {
            index: self.next,
            written: Some(expected),
        });
        false
    }

    /// The full error for a failure.
    fn error(&self, failure: Failure) -> Error {
        let event = self.event_type.name.to_string();
        // `field_names` starts with `startTime`; `fields` after it.
        let name = |index: usize| {
            self.event_type
                .field_names
                .get(index + 1)
                .cloned()
                .unwrap_or_else(|| "(none: all fields are written)".to_owned())
        };
        match failure {
            Failure::Mismatch { index, written } => Error::FieldMismatch {
                event,
                field: name(index),
                declared: self.event_type.fields.get(index).map(|slot| {
                    let array = if slot.array { "[]" } else { "" };
                    format!("{:?}{array}", slot.field_type)
                }),
                written: written.map_or_else(
                    || "an array, struct or array element of another type".to_owned(),
                    |w| format!("{w:?}"),
                ),
            },
            Failure::Misnamed { index, written } => Error::FieldOrder {
                event,
                declared: name(index),
                written: written.to_owned(),
            },
            Failure::ForeignReference { index } => Error::ForeignReference {
                event,
                field: name(index),
            },
            Failure::StaleConstant { index } => Error::StaleConstant {
                event,
                field: name(index),
            },
            Failure::ForeignEventType => Error::ForeignEventType { event },
        }
    }

    #[inline(always)]
    fn pooled(mut self, expected: FieldType, reference: Option<PoolRef>) -> Self {
        if self.expect(expected) {
            match reference {
                None => self.recording.events.push(0),
                Some(reference) if self.recording.pools.mark(reference) => {
                    write_varint(&mut self.recording.events, reference.key());
                }
                Some(_) => {
                    self.failure = Some(Failure::ForeignReference {
                        index: self.next - 1,
                    });
                }
            }
        }
        self
    }

    /// Names the field the next call writes, for a check: if the field
    /// declared at this place has another name, the commit fails with
    /// [`Error::FieldOrder`], naming both. Typed events (see
    /// [`crate::events`]) name every field, so that two fields of one type
    /// written in each other's place fail instead of swapping silently.
    #[inline(always)]
    pub fn field(mut self, name: &'static str) -> Self {
        // `field_names` starts with `startTime`; `fields` after it.
        if !self.layout_known
            && self.failure.is_none()
            && self
                .event_type
                .field_names
                .get(self.next + 1)
                .map(String::as_str)
                != Some(name)
        {
            self.failure = Some(Failure::Misnamed {
                index: self.next,
                written: name,
            });
        }
        self
    }

    /// The `duration` field, in ticks.
    #[inline(always)]
    pub fn duration(self, ticks: i64) -> Self {
        self.long(ticks)
    }

    /// A `long` field.
    #[inline(always)]
    pub fn long(mut self, value: i64) -> Self {
        if self.expect(FieldType::Long) {
            write_varint(&mut self.recording.events, value as u64);
        }
        self
    }

    /// An `int` field.
    #[inline(always)]
    pub fn int(mut self, value: i32) -> Self {
        if self.expect(FieldType::Int) {
            write_varint_i32(&mut self.recording.events, value);
        }
        self
    }

    /// A `short` field.
    pub fn short(mut self, value: i16) -> Self {
        if self.expect(FieldType::Short) {
            write_varint(&mut self.recording.events, value as u16 as u64);
        }
        self
    }

    /// A `char` field: one UTF-16 code unit.
    pub fn char(mut self, value: u16) -> Self {
        if self.expect(FieldType::Char) {
            write_varint(&mut self.recording.events, value as u64);
        }
        self
    }

    /// A `byte` field.
    pub fn byte(mut self, value: i8) -> Self {
        if self.expect(FieldType::Byte) {
            self.recording.events.push(value as u8);
        }
        self
    }

    /// A `boolean` field.
    #[inline(always)]
    pub fn boolean(mut self, value: bool) -> Self {
        if self.expect(FieldType::Boolean) {
            self.recording.events.push(value as u8);
        }
        self
    }

    /// A `float` field.
    pub fn float(mut self, value: f32) -> Self {
        if self.expect(FieldType::Float) {
            self.recording
                .events
                .extend_from_slice(&value.to_be_bytes());
        }
        self
    }

    /// A `double` field.
    pub fn double(mut self, value: f64) -> Self {
        if self.expect(FieldType::Double) {
            self.recording
                .events
                .extend_from_slice(&value.to_be_bytes());
        }
        self
    }

    /// A `String` field, written inline; `None` is `null`.
    pub fn string(mut self, value: Option<&str>) -> Self {
        if self.expect(FieldType::String) {
            write_string(&mut self.recording.events, value);
        }
        self
    }

    /// A `String` field, written as a reference to the String pool: worth it
    /// for a value repeated in many events.
    pub fn pooled_string(mut self, value: StringRef) -> Self {
        if self.expect(FieldType::String) {
            if self.recording.pools.mark(PoolRef::String(value)) {
                self.recording
                    .events
                    .push(crate::format::StringEncoding::ConstantPool as u8);
                write_varint(&mut self.recording.events, value.key());
            } else {
                self.failure = Some(Failure::ForeignReference {
                    index: self.next - 1,
                });
            }
        }
        self
    }

    /// A thread field (`eventThread` or another); `None` is null.
    #[inline(always)]
    pub fn thread(self, value: impl Into<Option<ThreadRef>>) -> Self {
        self.pooled(FieldType::Thread, value.into().map(PoolRef::Thread))
    }

    /// A stack trace field; `None` is null.
    #[inline]
    pub fn stack_trace(self, value: impl Into<Option<StackTraceRef>>) -> Self {
        self.stack_trace_field(value.into().into())
    }

    /// A stack trace field as typed events hold it: a ref with the receipt
    /// of its mark in this chunk ([`crate::Marked`]) is written without a
    /// look-up.
    #[inline(always)]
    pub fn stack_trace_field(mut self, value: StackTraceField) -> Self {
        match value.marked() {
            Some(marked) if self.recording.pools.is_marked(marked) => {
                if self.expect(FieldType::StackTrace) {
                    write_varint(&mut self.recording.events, marked.reference().key());
                }
                self
            }
            _ => self.pooled(
                FieldType::StackTrace,
                value.reference().map(PoolRef::StackTrace),
            ),
        }
    }

    /// A class field; `None` is null.
    #[inline(always)]
    pub fn class(self, value: impl Into<Option<ClassRef>>) -> Self {
        self.pooled(FieldType::Class, value.into().map(PoolRef::Class))
    }

    /// A method field; `None` is null.
    pub fn method(self, value: impl Into<Option<MethodRef>>) -> Self {
        self.pooled(FieldType::Method, value.into().map(PoolRef::Method))
    }

    /// A class loader field; `None` is null.
    pub fn class_loader(self, value: impl Into<Option<ClassLoaderRef>>) -> Self {
        self.pooled(
            FieldType::ClassLoader,
            value.into().map(PoolRef::ClassLoader),
        )
    }

    /// A package field; `None` is null.
    pub fn package(self, value: impl Into<Option<PackageRef>>) -> Self {
        self.pooled(FieldType::Package, value.into().map(PoolRef::Package))
    }

    /// A module field; `None` is null.
    pub fn module(self, value: impl Into<Option<ModuleRef>>) -> Self {
        self.pooled(FieldType::Module, value.into().map(PoolRef::Module))
    }

    /// A thread group field; `None` is null.
    pub fn thread_group(self, value: impl Into<Option<ThreadGroupRef>>) -> Self {
        self.pooled(
            FieldType::ThreadGroup,
            value.into().map(PoolRef::ThreadGroup),
        )
    }

    /// A constant field ([`FieldType::Constant`]); `None` is null.
    pub fn constant(self, value: Option<ConstantRef>) -> Self {
        self.value(Value::Constant(value))
    }

    /// A field given as a [`Value`]: a struct of a registered value type, an
    /// array, or any single value.
    pub fn value(mut self, value: Value<'_>) -> Self {
        if self.failure.is_some() {
            return self;
        }
        let index = self.next;
        let recording = &mut *self.recording;
        let written = match self.event_type.fields.get(index) {
            Some(&slot) => write_value(
                &mut recording.events,
                &mut recording.pools,
                recording.id,
                slot,
                &value,
            ),
            None => Err(Mismatch::Type),
        };
        match written {
            Ok(()) => self.next += 1,
            Err(Mismatch::Type) => {
                self.failure = Some(Failure::Mismatch {
                    index,
                    written: value.field_type(),
                })
            }
            Err(Mismatch::Stale) => self.failure = Some(Failure::StaleConstant { index }),
        }
        self
    }

    /// An array field: every element of the field's declared type.
    pub fn array(self, elements: &[Value<'_>]) -> Self {
        self.value(Value::Array(elements))
    }

    /// Writes the event. Fails, and writes nothing, if a field had the wrong
    /// type or a field is missing; may fail with an I/O error if the event
    /// buffer was full and had to be flushed.
    pub fn commit(mut self) -> Result<(), Error> {
        if let Some(failure) = self.failure {
            return Err(self.error(failure)); // Drop discards the bytes.
        }
        if self.next != self.event_type.fields.len() {
            return Err(Error::MissingField {
                event: self.event_type.name.to_string(),
                field: self.event_type.field_names[self.next + 1].clone(),
            });
        }
        self.committed = true;
        if self.typed_site != 0 && !self.layout_known {
            // Every field was checked, by name and type: the typed write
            // writes this event type right, every time.
            self.event_type
                .typed_site
                .store(self.typed_site, Ordering::Relaxed);
        }
        let buffer = &mut self.recording.events;
        let body_len = buffer.len() - self.start - 1;
        let size = sized_len(body_len);
        if size < 0x80 {
            buffer[self.start] = size as u8;
        } else {
            let mut prefix = Vec::with_capacity(crate::format::MAX_VARINT_LEN);
            write_varint(&mut prefix, size as u64);
            buffer.splice(self.start..self.start + 1, prefix);
        }
        self.recording.event_committed()
    }
}

/// Why a value could not be written in a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// Not of the slot's type, or a reference into another recording.
    Type,
    /// A constant of an earlier chunk.
    Stale,
}

/// Encodes `value` for a field of `slot` into `out`, marking the pooled
/// values it refers to in `pools` (of recording `recording`). On a mismatch
/// some bytes may have been written, which the caller drops.
pub(crate) fn write_value(
    out: &mut Vec<u8>,
    pools: &mut Pools,
    recording: u64,
    slot: Slot,
    value: &Value<'_>,
) -> Result<(), Mismatch> {
    if let Value::Array(elements) = value {
        if !slot.array {
            return Err(Mismatch::Type);
        }
        write_varint(out, elements.len() as u64);
        let element = Slot::one(slot.field_type);
        return elements
            .iter()
            .try_for_each(|e| write_value(out, pools, recording, element, e));
    }
    if slot.array {
        return Err(Mismatch::Type);
    }
    if let Value::Constant(constant) = *value {
        let FieldType::Constant(ValueTypeId(class)) = slot.field_type else {
            return Err(Mismatch::Type);
        };
        match constant {
            None => out.push(0),
            Some(c) if c.class != class || c.recording != recording => {
                return Err(Mismatch::Type);
            }
            Some(c) if !pools.is_current(c) => return Err(Mismatch::Stale),
            Some(c) => write_varint(out, c.key),
        }
        return Ok(());
    }
    if value.field_type() != Some(slot.field_type) {
        return Err(Mismatch::Type);
    }
    if let Some(reference) = value.pool_ref() {
        match reference {
            None => out.push(0),
            Some(r) if pools.mark(r) => write_varint(out, r.key()),
            Some(_) => return Err(Mismatch::Type),
        }
        return Ok(());
    }
    match *value {
        Value::Boolean(v) => out.push(v as u8),
        Value::Byte(v) => out.push(v as u8),
        Value::Short(v) => write_varint(out, v as u16 as u64),
        Value::Char(v) => write_varint(out, v as u64),
        Value::Int(v) => write_varint_i32(out, v),
        Value::Long(v) => write_varint(out, v as u64),
        Value::Float(v) => out.extend_from_slice(&v.to_be_bytes()),
        Value::Double(v) => out.extend_from_slice(&v.to_be_bytes()),
        Value::String(v) => write_string(out, v),
        Value::Struct(value_type, fields) => {
            if value_type.recording_id != recording || fields.len() != value_type.fields.len() {
                return Err(Mismatch::Type);
            }
            return value_type
                .fields
                .iter()
                .zip(fields.iter())
                .try_for_each(|(&slot, field)| write_value(out, pools, recording, slot, field));
        }
        _ => unreachable!("pooled values, constants and arrays are handled above"),
    }
    Ok(())
}

impl<S: Sink> Drop for EventWriter<'_, S> {
    fn drop(&mut self) {
        if !self.committed {
            self.recording.events.truncate(self.start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_themselves() {
        assert_eq!(sized_len(0), 1);
        assert_eq!(sized_len(126), 127);
        assert_eq!(sized_len(127), 129); // 127 + 2: 128 would need two bytes
        assert_eq!(sized_len(16381), 16383);
        assert_eq!(sized_len(16382), 16385);
        for body in 0..100_000 {
            let size = sized_len(body);
            assert_eq!(size, body + varint_len(size as u64));
        }
    }
}
