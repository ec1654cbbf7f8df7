//! Fields: the type of a field ([`FieldType`]), what a number means
//! ([`Unit`]), and a field's declaration ([`FieldSpec`]), which event types
//! ([`crate::EventTypeBuilder`]) and value types
//! ([`crate::ValueTypeBuilder`]) are made of.

use crate::metadata::ClassId;

// `FieldType`, with a variant for each pooled type a field can hold, from
// the one table (`pooled_field_types!`).
macro_rules! field_type {
    ($( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*) => {
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
            $(
                $(#[$doc])*
                ///
                /// Pooled: the field holds its key.
                $variant,
            )*
            /// A value type registered with
            /// [`crate::Recording::register_value_type`], written inline (its
            /// fields in place).
            Struct(ValueTypeId),
            /// A value type registered with
            /// [`crate::Recording::register_value_type`], held by key: a
            /// constant of the chunk ([`crate::Recording::constant`]). The
            /// JDK declares `jdk.types.OldObject`, `jdk.types.GCName` and most
            /// of its other value types so.
            Constant(ValueTypeId),
        }
    };
}

pooled_field_types!(field_type);

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
    /// `@Frequency @DataAmount("BYTES")`: bytes per second, with the
    /// annotations the JDK gives its rates (`jdk.G1BasicIHOP`'s allocation
    /// rates; in bits, `jdk.NetworkUtilization`'s). `jfr print` and `jfr
    /// view` show `1.2 kB/s` whatever their order; Mission Control keeps a
    /// field's last unit annotation, and shows the JDK's rates (`@DataAmount`
    /// first) in hertz, these (`@DataAmount` last) in bytes: `1.2 KiB`.
    BytesPerSecond,
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
