//! `jdk.OldObjectSample`, the JDK's leak event, and the value types it
//! holds by key, declared as JDK 17 declares them (with JDK 25's
//! `objectSize`): Mission Control's Memory Leak page and its leak rule read
//! them.
//!
//! An old object is a constant of its chunk ([`Recording::constant`]), as
//! are its referrer chain and root: make them right before the event.

use super::typed::simple_string;
use crate::error::Error;
use crate::event::{EventTypeBuilder, Value, ValueType, ValueTypeBuilder};
use crate::field::{FieldSpec, FieldType, Unit};
use crate::pool::{ClassRef, ConstantRef, StackTraceField, ThreadRef};
use crate::recording::{Recording, Sink, Ticks};
use crate::types::Setting;
use jfr_format::names::{class, event, field};

/// The value types of `jdk.OldObjectSample`, registered with one recording.
#[derive(Debug, Clone)]
pub struct OldObjectTypes {
    old_object: ValueType,
    reference: ValueType,
    array: ValueType,
    field: ValueType,
    gc_root: ValueType,
    root_system: ValueType,
    root_type: ValueType,
}

impl OldObjectTypes {
    /// Registers the types with `recording`.
    pub fn register<S: Sink>(recording: &mut Recording<S>) -> Result<Self, Error> {
        // OldObject and Reference refer to each other: Reference is named
        // before it is declared.
        let reference = recording.reserve_value_type(class::REFERENCE)?;
        let array = recording.register_value_type(
            ValueTypeBuilder::new(class::OLD_OBJECT_ARRAY)
                .label("Old Object Array")
                .field(
                    FieldSpec::new(field::SIZE, FieldType::Int)
                        .label("Array Size")
                        .description("Size of array"),
                )
                .field(
                    FieldSpec::new(field::INDEX, FieldType::Int)
                        .label("Index")
                        .description("Index in the array"),
                ),
        )?;
        let field_type = recording.register_value_type(
            ValueTypeBuilder::new(class::OLD_OBJECT_FIELD)
                .label("Old Object Field")
                .field(
                    FieldSpec::new(field::NAME, FieldType::String)
                        .label("Field")
                        .description("Name of field"),
                )
                .field(
                    FieldSpec::new(field::MODIFIERS, FieldType::Short)
                        .label("Field Modifiers")
                        .description("Field modifiers"),
                ),
        )?;
        let old_object = recording.register_value_type(
            ValueTypeBuilder::new(class::OLD_OBJECT)
                .label("Old Object")
                .field(
                    FieldSpec::new(field::ADDRESS, FieldType::Long)
                        .unsigned()
                        .unit(Unit::MemoryAddress)
                        .label("Memory Address"),
                )
                .field(FieldSpec::new(field::TYPE, FieldType::Class).label("Java Class"))
                .field(
                    FieldSpec::new(field::DESCRIPTION, FieldType::String)
                        .label("Object Description")
                        .description("Object description"),
                )
                .field(
                    FieldSpec::new(field::REFERRER, FieldType::Constant(reference))
                        .label("Referrer Object")
                        .description("Object referencing this object"),
                ),
        )?;
        let reference = recording.register_value_type(
            ValueTypeBuilder::new(class::REFERENCE)
                .label("Reference")
                .field(
                    FieldSpec::new(field::ARRAY, FieldType::Constant(array.id()))
                        .label("Array Information")
                        .description("Array or null if it is not an array"),
                )
                .field(
                    FieldSpec::new(field::FIELD, FieldType::Constant(field_type.id()))
                        .label("Field Information")
                        .description("Field or null if it is an array"),
                )
                .field(
                    FieldSpec::new(field::OBJECT, FieldType::Constant(old_object.id()))
                        .label("Object")
                        .description("Object holder for this reference"),
                )
                .field(
                    FieldSpec::new(field::SKIP, FieldType::Int)
                        .label("Skip Value")
                        .description("The object is this many hops away"),
                ),
        )?;
        let root_system = recording.register_value_type(simple_string(
            class::OLD_OBJECT_ROOT_SYSTEM,
            "GC Root System",
            field::SYSTEM,
            "System",
        ))?;
        let root_type = recording.register_value_type(simple_string(
            class::OLD_OBJECT_ROOT_TYPE,
            "GC Root Type",
            field::TYPE,
            "Type",
        ))?;
        let gc_root = recording.register_value_type(
            ValueTypeBuilder::new(class::OLD_OBJECT_GC_ROOT)
                .label("GC Root")
                .field(
                    FieldSpec::new(field::DESCRIPTION, FieldType::String)
                        .label("Root Description")
                        .description("Root information"),
                )
                .field(
                    FieldSpec::new(field::SYSTEM, FieldType::Constant(root_system.id()))
                        .label("System")
                        .description("The subsystem of origin for the root"),
                )
                .field(
                    FieldSpec::new(field::TYPE, FieldType::Constant(root_type.id()))
                        .label("Type")
                        .description("The root type"),
                ),
        )?;
        Ok(Self {
            old_object,
            reference,
            array,
            field: field_type,
            gc_root,
            root_system,
            root_type,
        })
    }

    /// An object of `class` at `address`, held by `referrer` (`None`: held
    /// by the root, or unknown).
    ///
    /// Mission Control builds its reference tree by address: objects of one
    /// address are one node, and an address of 0 ends a chain. A writer
    /// that cannot know addresses gives each object a non-zero identity
    /// instead, the same for one object wherever it appears.
    pub fn old_object<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        address: u64,
        class: Option<ClassRef>,
        description: Option<&str>,
        referrer: Option<ConstantRef>,
    ) -> Result<ConstantRef, Error> {
        recording.constant(
            &self.old_object,
            &[
                Value::Long(address as i64),
                Value::Class(class),
                Value::String(description),
                Value::Constant(referrer),
            ],
        )
    }

    /// A reference held by `object` (an [`OldObjectTypes::old_object`]): its
    /// field `field` (name, modifiers) or its element `index` of an array
    /// of `size`, standing for `skip` links of the chain left out.
    pub fn reference<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        holder: ReferenceHolder<'_>,
        object: ConstantRef,
        skip: i32,
    ) -> Result<ConstantRef, Error> {
        let (array, field) = match holder {
            ReferenceHolder::Field { name, modifiers } => (
                None,
                Some(recording.constant(
                    &self.field,
                    &[Value::String(Some(name)), Value::Short(modifiers)],
                )?),
            ),
            ReferenceHolder::Element { size, index } => (
                Some(recording.constant(&self.array, &[Value::Int(size), Value::Int(index)])?),
                None,
            ),
            ReferenceHolder::Unknown => (None, None),
        };
        recording.constant(
            &self.reference,
            &[
                Value::Constant(array),
                Value::Constant(field),
                Value::Constant(Some(object)),
                Value::Int(skip),
            ],
        )
    }

    /// A root: `system` (`Universe`, `Threads`, ...), `root_type` (`Global
    /// Handle`, `Stack Variable`, ...) and what it is.
    pub fn gc_root<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        system: &str,
        root_type: &str,
        description: Option<&str>,
    ) -> Result<ConstantRef, Error> {
        let system = recording.constant(&self.root_system, &[Value::String(Some(system))])?;
        let root_type = recording.constant(&self.root_type, &[Value::String(Some(root_type))])?;
        recording.constant(
            &self.gc_root,
            &[
                Value::String(description),
                Value::Constant(Some(system)),
                Value::Constant(Some(root_type)),
            ],
        )
    }
}

/// Where a reference is held in the object that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceHolder<'a> {
    /// A field: its name and modifiers.
    Field {
        /// The field's name.
        name: &'a str,
        /// Its access modifiers.
        modifiers: i16,
    },
    /// An element of an array.
    Element {
        /// The array's length.
        size: i32,
        /// The element's index.
        index: i32,
    },
    /// Not known.
    Unknown,
}

typed_event! {
    /// `jdk.OldObjectSample`, as the JDK declares it.
    pub fn old_object_sample(types: &OldObjectTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::OLD_OBJECT_SAMPLE)
            .category(&["Java Virtual Machine", "Profiling"])
            .label("Old Object Sample")
            .description("A potential memory leak")
            .setting(Setting::StackTrace, "true")
            .setting(Setting::Cutoff, "0 ns")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.OldObjectSample`: a sampled object still live.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct OldObjectSample {
        /// When the event was written: when the object was seen live.
        pub start_time: Ticks,
        /// Ticks it took (0).
        pub duration: i64,
        /// The allocating thread.
        pub event_thread: Option<ThreadRef>,
        /// Where the object was allocated.
        pub stack_trace: StackTraceField,
        /// When it was allocated.
        pub allocation_time: Ticks => field::ALLOCATION_TIME
            .unsigned()
            .unit(Unit::TimestampTicks)
            .label("Allocation Time"),
        /// Its size in bytes.
        pub object_size: i64 => field::OBJECT_SIZE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Object Size"),
        /// Ticks from its allocation to `start_time`.
        pub object_age: i64 => field::OBJECT_AGE
            .unsigned()
            .unit(Unit::TimespanTicks)
            .label("Object Age"),
        /// Heap used after the last collection.
        pub last_known_heap_usage: i64 => field::LAST_KNOWN_HEAP_USAGE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Last Known Heap Usage"),
        /// The object ([`OldObjectTypes::old_object`]).
        pub object: Option<ConstantRef> => field::OBJECT [types.old_object].label("Object"),
        /// An array's length, or `i32::MIN` for an object that is no array.
        pub array_elements: i32 => field::ARRAY_ELEMENTS
            .label("Array Elements")
            .description(
                "If the object is an array, the number of elements, or minimum value for \
                 the type int if it is not an array",
            ),
        /// The root its reference chain starts at, if known.
        pub root: Option<ConstantRef> => field::ROOT [types.gc_root].label("GC Root"),
    }
}

/// `heapsampler.OldObjectSnapshot`: `jdk.OldObjectSample`'s twin, of the
/// same fields, to which the old objects of an earlier chunk's end are
/// demoted ([`Recording::begin_demotable`]) once a newer chunk end's are in
/// the file. Mission Control and the JDK then see the newest live set only,
/// each object once; heapsampler's tools can still read each chunk's.
pub fn old_object_snapshot(types: &OldObjectTypes) -> EventTypeBuilder {
    let mut builder = old_object_sample(types)
        .category(&["Java Application", "heapsampler"])
        .label("Old Object Snapshot")
        .description(
            "A sampled object live at an earlier chunk's end: jdk.OldObjectSample, renamed \
             once a later chunk's end wrote the live set again. Kept for heapsampler's tools",
        );
    builder.name = event::OLD_OBJECT_SNAPSHOT.to_owned();
    builder
}
