//! Declaring event types and value types.
//!
//! An event type is declared once with an [`EventTypeBuilder`] and registered
//! with [`crate::Recording::register`], which returns an [`EventType`]; events
//! of it are then written with [`crate::Recording::event`] ([`crate::writer`]).
//! A value type (a struct that fields hold inline or as a constant of the
//! chunk) is declared with a [`ValueTypeBuilder`]; its values are given as
//! [`Value`]s.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use crate::field::{FieldSpec, FieldType, Slot, ValueTypeId};
use crate::metadata::ClassId;
use crate::pool::{ConstantRef, PoolRef, Pools};
use crate::types::Setting;
use jfr_format::names::field as field_name;
use jfr_format::{write_string, write_varint, write_varint_i32};

// `Value`, with a variant for each pooled type a field can hold, from the
// one table (`pooled_field_types!`).
macro_rules! value {
    ($( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*) => {
        /// A value for a struct field or an array element, where fields are
        /// given as data rather than one call each.
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
            $( $variant(Option<crate::pool::$reference>), )*
            /// A value of a registered value type: its fields in declaration
            /// order.
            Struct(&'a ValueType, &'a [Value<'a>]),
            /// A constant of the chunk, for a [`FieldType::Constant`] field;
            /// `None` is null.
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
                    $( Self::$variant(_) => FieldType::$variant, )*
                    Self::Struct(value_type, _) => FieldType::Struct(value_type.id),
                    Self::Constant(constant) => {
                        FieldType::Constant(ValueTypeId((*constant)?.class))
                    }
                    Self::Array(_) => return None,
                })
            }

            /// The ref of a pooled value (`Some(None)`: null), or `None` if
            /// the value is not pooled.
            fn pool_ref(&self) -> Option<Option<PoolRef>> {
                Some(match *self {
                    $( Self::$variant(r) => r.map(PoolRef::$variant), )*
                    _ => return None,
                })
            }
        }
    };
}

pooled_field_types!(value);

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
    /// The typed write (its `TypedWrite` identity) found to write every
    /// field of this type in order, by name and type (0: none yet). Its
    /// later events skip those checks.
    pub(crate) typed_write: Arc<AtomicUsize>,
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
