//! What the event declarations share: [`typed_event!`], which declares an
//! event type and its typed struct from one list of fields, the Rust types
//! those fields hold, and [`simple_string`] for the JDK's enumerations.

use crate::event::{ValueType, ValueTypeBuilder};
use crate::field::{FieldSpec, FieldType};
use crate::pool::{ConstantRef, StackTraceField};
use crate::recording::{Sink, Ticks};
use crate::writer::EventWriter;

/// Declares an event type and its typed struct from one list of fields.
///
/// ```text
/// typed_event! {
///     /// `jdk.ObjectAllocationSample`, as the JDK declares it.
///     pub fn object_allocation_sample() -> EventTypeBuilder {
///         EventTypeBuilder::new(event::OBJECT_ALLOCATION_SAMPLE)
///             .label("Object Allocation Sample")
///             .setting(Setting::StackTrace, "true")
///     }
///
///     /// A `jdk.ObjectAllocationSample`: one sampled allocation.
///     #[derive(Debug, Clone, Copy, PartialEq)]
///     pub struct ObjectAllocationSample {
///         /// When the object was allocated.
///         pub start_time: Ticks,
///         /// The allocating thread.
///         pub event_thread: Option<ThreadRef>,
///         /// Where it was allocated.
///         pub stack_trace: StackTraceField,
///         /// The allocated object's class.
///         pub object_class: Option<ClassRef> => field::OBJECT_CLASS
///             .label("Object Class")
///             .description("Class of allocated object"),
///     }
/// }
/// ```
///
/// makes the function, which returns the builder with `with_thread()`,
/// `with_stack_trace()` and a [`FieldSpec`](crate::FieldSpec) per field
/// added, and the struct with a `write(&self, recording, event_type)` that
/// writes every field, named, in the same order.
///
/// - `start_time: Ticks` comes first; then, if the event has them and in
///   this order (the JDK's), the standard fields `duration: i64`,
///   `event_thread: Option<ThreadRef>` and `stack_trace: StackTraceField`,
///   given without a declaration: the JDK declares them alike for every
///   event. Another order is a compile error.
/// - Every other field is `name: Type => NAME` and [`FieldSpec`]'s
///   builder calls (label, description, unit, ...): `NAME` is the field's
///   name in the format (a constant of [`jfr_format::names::field`]),
///   and the field's type is its Rust type's ([`OfType`]).
/// - A field holding a registered value type (a constant of the chunk, or
///   a struct written inline) names it after `NAME`, in brackets:
///   `NAME [types.gc_name]`, its type then being `Constant` or `Struct` of
///   that value type ([`OfValueType`]). The declaring function takes the
///   value types as its one argument: `pub fn gc(types: &GcTypes) -> ...`.
///
/// [`FieldSpec`]: crate::FieldSpec
macro_rules! typed_event {
    (
        $(#[$declaration_attr:meta])*
        pub fn $declaration:ident($($context:ident: &$context_type:ty)?) -> EventTypeBuilder {
            $builder:expr
        }

        $(#[$attr:meta])*
        pub struct $event:ident $(<$lt:lifetime>)? {
            $(#[$start_attr:meta])*
            pub start_time: Ticks,
            $(
                $(#[$field_attr:meta])*
                pub $field:ident: $type:ty
                $(=> $($name:ident)::+ $([$value_type:expr])? $(.$method:ident($($arg:expr),* $(,)?))*)?
            ),* $(,)?
        }
    ) => {
        $(#[$declaration_attr])*
        pub fn $declaration($($context: &$context_type)?) -> $crate::event::EventTypeBuilder {
            $event::declaration($($context)?)
        }

        $(#[$attr])*
        pub struct $event $(<$lt>)? {
            $(#[$start_attr])*
            pub start_time: $crate::recording::Ticks,
            $(
                $(#[$field_attr])*
                pub $field: $type,
            )*
        }

        // The standard fields come first, in the JDK's order: the builder
        // puts them there whatever the order of the calls, so the struct
        // (and its write) must too.
        const _: () = assert!(
            $crate::events::typed::standard_fields_first(&[
                $(typed_event!(@rank $field $(=> $($name)::+)?)),*
            ]),
            concat!(
                stringify!($event), ": duration, event_thread and stack_trace come ",
                "right after start_time, in that order"
            ),
        );

        impl $(<$lt>)? $event $(<$lt>)? {
            fn declaration($($context: &$context_type)?) -> $crate::event::EventTypeBuilder {
                let builder: $crate::event::EventTypeBuilder = $builder;
                $(
                    let builder = typed_event!(
                        @declare builder, $field: $type
                        $(=> $($name)::+ $([$value_type])? $(.$method($($arg),*))*)?
                    );
                )*
                builder
            }

            #[doc = concat!(
                "Writes the event as `event_type`, registered from [`",
                stringify!($declaration), "`]."
            )]
            #[inline]
            pub fn write<S: $crate::recording::Sink>(
                &self,
                recording: &mut $crate::recording::Recording<S>,
                event_type: &$crate::event::EventType,
            ) -> Result<(), $crate::error::Error> {
                const WRITE: $crate::writer::TypedWrite = $crate::writer::TypedWrite::of(
                    concat!(module_path!(), "::", stringify!($event)),
                );
                let event = recording.typed_event(event_type, self.start_time, WRITE);
                $(
                    let event = typed_event!(
                        @write event, self, $field: $type $(=> $($name)::+)?
                    );
                )*
                event.commit()
            }
        }
    };

    // Where a field may come: 1 to 3 the standard fields, 4 the others.
    (@rank duration) => { 1 };
    (@rank event_thread) => { 2 };
    (@rank stack_trace) => { 3 };
    (@rank $field:ident => $($name:ident)::+) => { 4 };

    (@declare $builder:ident, duration: $type:ty) => { $builder.with_duration() };
    (@declare $builder:ident, event_thread: $type:ty) => { $builder.with_thread() };
    (@declare $builder:ident, stack_trace: $type:ty) => { $builder.with_stack_trace() };
    (
        @declare $builder:ident, $field:ident: $type:ty
        => $($name:ident)::+ [$value_type:expr] $(.$method:ident($($arg:expr),*))*
    ) => {
        $builder.field(
            $crate::field::FieldSpec::new(
                $($name)::+,
                <$type as $crate::events::typed::OfValueType>::field_type(&$value_type),
            )
            $(.$method($($arg),*))*
        )
    };
    (
        @declare $builder:ident, $field:ident: $type:ty
        => $($name:ident)::+ $(.$method:ident($($arg:expr),*))*
    ) => {
        $builder.field(
            $crate::field::FieldSpec::new(
                $($name)::+,
                <$type as $crate::events::typed::OfType>::FIELD_TYPE,
            )
            $(.$method($($arg),*))*
        )
    };

    // The standard fields are written with their own setters, whose
    // argument types check the fields' types.
    (@write $event:ident, $this:ident, duration: $type:ty) => {
        $event
            .field(::jfr_format::names::field::DURATION)
            .duration($this.duration)
    };
    (@write $event:ident, $this:ident, event_thread: $type:ty) => {
        $event
            .field(::jfr_format::names::field::EVENT_THREAD)
            .thread($this.event_thread)
    };
    (@write $event:ident, $this:ident, stack_trace: $type:ty) => {
        $event
            .field(::jfr_format::names::field::STACK_TRACE)
            .stack_trace_field($this.stack_trace)
    };
    (@write $event:ident, $this:ident, $field:ident: $type:ty => $($name:ident)::+) => {
        $crate::events::typed::FieldValue::write($this.$field, $event.field($($name)::+))
    };
}

/// Whether `ranks` ([`typed_event!`]'s `@rank` of each field after
/// `start_time`) put the standard fields first, each at most once, in order.
// Used only in typed_event!'s const assertion, which rustc 1.88 (the MSRV)
// does not count as a use.
#[allow(dead_code)]
pub(crate) const fn standard_fields_first(ranks: &[u8]) -> bool {
    let mut i = 1;
    while i < ranks.len() {
        let (before, rank) = (ranks[i - 1], ranks[i]);
        if rank < before || (rank == before && rank < 4) {
            return false;
        }
        i += 1;
    }
    true
}

/// A value a typed event's field holds, written with the setter of its
/// type.
pub(crate) trait FieldValue: Copy {
    /// Writes the value as the event's next field.
    fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S>;
}

/// A field value whose type in the format follows from its Rust type.
pub(crate) trait OfType: FieldValue {
    /// The field's type.
    const FIELD_TYPE: FieldType;
}

/// A field value of a registered value type: its field's type names the
/// value type.
pub(crate) trait OfValueType: FieldValue {
    /// The type of a field holding values of `value_type`.
    fn field_type(value_type: &ValueType) -> FieldType;
}

macro_rules! of_type {
    ($($type:ty => $field_type:ident, $setter:ident;)*) => {
        $(
            impl FieldValue for $type {
                #[inline(always)]
                fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S> {
                    event.$setter(self)
                }
            }

            impl OfType for $type {
                const FIELD_TYPE: FieldType = FieldType::$field_type;
            }
        )*
    };
}

of_type! {
    bool => Boolean, boolean;
    i8 => Byte, byte;
    i16 => Short, short;
    i32 => Int, int;
    i64 => Long, long;
    f32 => Float, float;
    f64 => Double, double;
    Option<&str> => String, string;
    StackTraceField => StackTrace, stack_trace_field;
}

/// A point in time on the recording's clock: a `long` of ticks.
impl FieldValue for Ticks {
    #[inline(always)]
    fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S> {
        event.long(self.0)
    }
}

impl OfType for Ticks {
    const FIELD_TYPE: FieldType = FieldType::Long;
}

// An optional ref of each pooled type a field can hold, from the one table
// (`pooled_field_types!`).
macro_rules! pooled_field_values {
    ($( $(#[$doc:meta])* $variant:ident($reference:ident) in $pool:ident, $one:ident; )*) => {
        $(
            impl FieldValue for Option<crate::pool::$reference> {
                #[inline(always)]
                fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S> {
                    event.$one(self)
                }
            }

            impl OfType for Option<crate::pool::$reference> {
                const FIELD_TYPE: FieldType = FieldType::$variant;
            }
        )*
    };
}

pooled_field_types!(pooled_field_values);

/// A constant of the chunk ([`crate::Recording::constant`]), held by key.
impl FieldValue for Option<ConstantRef> {
    #[inline(always)]
    fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S> {
        event.constant(self)
    }
}

impl OfValueType for Option<ConstantRef> {
    fn field_type(value_type: &ValueType) -> FieldType {
        FieldType::Constant(value_type.id())
    }
}

/// A simple type of one string field, as the JDK declares its enumerations
/// (`jdk.types.GCName`, `jdk.types.GCWhen`, ...).
pub(crate) fn simple_string(
    name: &str,
    label: &str,
    field_name: &str,
    field_label: &str,
) -> ValueTypeBuilder {
    ValueTypeBuilder::new(name)
        .label(label)
        .simple()
        .field(FieldSpec::new(field_name, FieldType::String).label(field_label))
}
