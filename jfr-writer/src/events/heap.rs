//! The JDK's events that describe the heap and the JVM around the samples,
//! declared as JDK 17 declares them, so that Mission Control's memory and
//! GC rules run: `jdk.GCHeapSummary`, `jdk.GarbageCollection`,
//! `jdk.JVMInformation` and `jdk.ClassLoadingStatistics`; the collectors'
//! own events are in `gc.rs`.

use super::typed::{FieldValue, OfValueType, simple_string};
use crate::error::Error;
use crate::event::{EventTypeBuilder, Value, ValueType, ValueTypeBuilder};
use crate::field::{FieldSpec, FieldType, Unit};
use crate::pool::ConstantRef;
use crate::recording::{Recording, Sink};
use crate::types::Setting;
use crate::writer::EventWriter;
use jfr_format::names::{class, event, field};

/// The value types of the GC events, registered with one recording.
#[derive(Debug, Clone)]
pub struct GcTypes {
    pub(super) name: ValueType,
    cause: ValueType,
    pub(super) when: ValueType,
    virtual_space: ValueType,
    pub(super) metaspace_sizes: ValueType,
    pub(super) narrow_oop_mode: ValueType,
}

impl GcTypes {
    /// Registers the types with `recording`.
    pub fn register<S: Sink>(recording: &mut Recording<S>) -> Result<Self, Error> {
        let address = |name: &str, label: &str, description: &str| {
            FieldSpec::new(name, FieldType::Long)
                .unsigned()
                .unit(Unit::MemoryAddress)
                .label(label)
                .description(description)
        };
        let size = |name: &str, label: &str, description: &str| {
            FieldSpec::new(name, FieldType::Long)
                .unsigned()
                .unit(Unit::Bytes)
                .label(label)
                .description(description)
        };
        Ok(Self {
            name: recording.register_value_type(simple_string(
                class::GC_NAME,
                "GC Name",
                field::NAME,
                "Name",
            ))?,
            cause: recording.register_value_type(simple_string(
                class::GC_CAUSE,
                "GC Cause",
                field::CAUSE,
                "Cause",
            ))?,
            when: recording.register_value_type(simple_string(
                class::GC_WHEN,
                "GC When",
                field::WHEN,
                "When",
            ))?,
            virtual_space: recording.register_value_type(
                ValueTypeBuilder::new(class::VIRTUAL_SPACE)
                    .field(address(
                        field::START,
                        "Start Address",
                        "Start address of the virtual space",
                    ))
                    .field(address(
                        field::COMMITTED_END,
                        "Committed End Address",
                        "End address of the committed memory for the virtual space",
                    ))
                    .field(size(
                        field::COMMITTED_SIZE,
                        "Committed Size",
                        "Size of the committed memory for the virtual space",
                    ))
                    .field(address(
                        field::RESERVED_END,
                        "Reserved End Address",
                        "End address of the reserved memory for the virtual space",
                    ))
                    .field(size(
                        field::RESERVED_SIZE,
                        "Reserved Size",
                        "Size of the reserved memory for the virtual space",
                    )),
            )?,
            metaspace_sizes: recording.register_value_type(
                ValueTypeBuilder::new(class::METASPACE_SIZES)
                    .field(size(
                        field::COMMITTED,
                        "Committed",
                        "Committed memory for this space",
                    ))
                    .field(size(
                        field::USED,
                        "Used",
                        "Bytes allocated by objects in the space",
                    ))
                    .field(size(
                        field::RESERVED,
                        "Reserved",
                        "Reserved memory for this space",
                    )),
            )?,
            narrow_oop_mode: recording.register_value_type(simple_string(
                class::NARROW_OOP_MODE,
                "Narrow Oop Mode",
                field::MODE,
                "Mode",
            ))?,
        })
    }

    /// A collector's name (`G1New`) as a constant of the chunk.
    pub fn name<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        name: &str,
    ) -> Result<ConstantRef, Error> {
        recording.constant(&self.name, &[Value::String(Some(name))])
    }

    /// Why a collection ran (`System.gc()`, `G1 Evacuation Pause`).
    pub fn cause<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        cause: &str,
    ) -> Result<ConstantRef, Error> {
        recording.constant(&self.cause, &[Value::String(Some(cause))])
    }

    /// How compressed object pointers are encoded (`Zero based`), as a
    /// constant of the chunk.
    pub fn narrow_oop_mode<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        mode: &str,
    ) -> Result<ConstantRef, Error> {
        recording.constant(&self.narrow_oop_mode, &[Value::String(Some(mode))])
    }

    /// Before or after a collection ([`BEFORE_GC`], [`AFTER_GC`]).
    pub fn when<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        when: &str,
    ) -> Result<ConstantRef, Error> {
        recording.constant(&self.when, &[Value::String(Some(when))])
    }
}

/// `jdk.GCHeapSummary`'s `when` before a collection, as the JDK spells it:
/// Mission Control's rules select on it.
pub const BEFORE_GC: &str = "Before GC";
/// `jdk.GCHeapSummary`'s `when` after a collection.
pub const AFTER_GC: &str = "After GC";

/// A `jdk.types.VirtualSpace`: a range of memory reserved, and how much of
/// it is committed, from its start. Written inline, the ends from the sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualSpace {
    /// The first address (0: unknown).
    pub start: i64,
    /// Bytes committed.
    pub committed_size: i64,
    /// Bytes reserved: the most it can grow to.
    pub reserved_size: i64,
}

impl FieldValue for VirtualSpace {
    fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S> {
        // As `GcTypes::register` declares it.
        event.struct_fields(&[
            Value::Long(self.start),
            Value::Long(self.start.wrapping_add(self.committed_size)),
            Value::Long(self.committed_size),
            Value::Long(self.start.wrapping_add(self.reserved_size)),
            Value::Long(self.reserved_size),
        ])
    }
}

impl OfValueType for VirtualSpace {
    fn field_type(value_type: &ValueType) -> FieldType {
        FieldType::Struct(value_type.id())
    }
}

typed_event! {
    /// `jdk.GCHeapSummary`, as the JDK declares it.
    pub fn gc_heap_summary(types: &GcTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::GC_HEAP_SUMMARY)
            .category(&["Java Virtual Machine", "GC", "Heap"])
            .label("Heap Summary")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.GCHeapSummary`: the heap before or after a collection.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct GcHeapSummary {
        /// When the heap was measured.
        pub start_time: Ticks,
        /// The collection's id, as its `jdk.GarbageCollection` has it.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
        /// [`BEFORE_GC`] or [`AFTER_GC`] ([`GcTypes::when`]).
        pub when: Option<ConstantRef> => field::WHEN [types.when].label("When"),
        /// The heap's addresses and sizes.
        pub heap_space: VirtualSpace => field::HEAP_SPACE [types.virtual_space]
            .label("Heap Space"),
        /// Bytes of the heap in use.
        pub heap_used: i64 => field::HEAP_USED
            .unsigned()
            .unit(Unit::Bytes)
            .label("Heap Used")
            .description("Bytes allocated by objects in the heap"),
    }
}

typed_event! {
    /// `jdk.GarbageCollection`, as JDK 17 declares it.
    pub fn jdk_garbage_collection(types: &GcTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::JDK_GARBAGE_COLLECTION)
            .category(&["Java Virtual Machine", "GC", "Collector"])
            .label("Garbage Collection")
            .description("Garbage collection performed by the JVM")
            .setting(Setting::Threshold, "0 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.GarbageCollection`: one collection, as the JVM reports it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct JdkGarbageCollection {
        /// When it started.
        pub start_time: Ticks,
        /// Ticks it took.
        pub duration: i64,
        /// Its id: the JVM's count of collections by this collector.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
        /// The collector ([`GcTypes::name`]).
        pub name: Option<ConstantRef> => field::NAME [types.name]
            .label("Name")
            .description("The name of the Garbage Collector"),
        /// Why it ran ([`GcTypes::cause`]), if known.
        pub cause: Option<ConstantRef> => field::CAUSE [types.cause]
            .label("Cause")
            .description("The reason for triggering this Garbage Collection"),
        /// Ticks Java code was paused, summed.
        pub sum_of_pauses: i64 => field::SUM_OF_PAUSES
            .unsigned()
            .unit(Unit::TimespanTicks)
            .label("Sum of Pauses")
            .description(
                "Sum of all the times in which Java execution was paused during the garbage \
                 collection",
            ),
        /// The longest pause, in ticks.
        pub longest_pause: i64 => field::LONGEST_PAUSE
            .unsigned()
            .unit(Unit::TimespanTicks)
            .label("Longest Pause")
            .description("Longest individual pause during the garbage collection"),
    }
}

typed_event! {
    /// `jdk.JVMInformation`, as the JDK declares it.
    pub fn jvm_information() -> EventTypeBuilder {
        EventTypeBuilder::new(event::JVM_INFORMATION)
            .category(&["Java Virtual Machine"])
            .label("JVM Information")
            .description("Description of JVM and the Java application")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.JVMInformation`: which JVM this is and how it was started.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct JvmInformation<'a> {
        /// When it was written.
        pub start_time: Ticks,
        /// `OpenJDK 64-Bit Server VM`.
        pub jvm_name: Option<&'a str> => field::JVM_NAME.label("JVM Name"),
        /// The JVM's version line.
        pub jvm_version: Option<&'a str> => field::JVM_VERSION.label("JVM Version"),
        /// The JVM's arguments, space-separated.
        pub jvm_arguments: Option<&'a str> => field::JVM_ARGUMENTS
            .label("JVM Command Line Arguments"),
        /// Arguments from a settings file.
        pub jvm_flags: Option<&'a str> => field::JVM_FLAGS.label("JVM Settings File Arguments"),
        /// The main class or jar and its arguments.
        pub java_arguments: Option<&'a str> => field::JAVA_ARGUMENTS
            .label("Java Application Arguments"),
        /// When the JVM started, in milliseconds since the Unix epoch.
        pub jvm_start_time: i64 => field::JVM_START_TIME
            .unit(Unit::TimestampMillisSinceEpoch)
            .label("JVM Start Time"),
        /// The process id.
        pub pid: i64 => field::PID.label("Process Identifier"),
    }
}

typed_event! {
    /// `jdk.ClassLoadingStatistics`, as the JDK declares it. Mission Control's
    /// leak rule reads it to tell when the application has warmed up.
    pub fn class_loading_statistics() -> EventTypeBuilder {
        EventTypeBuilder::new(event::CLASS_LOADING_STATISTICS)
            .category(&["Java Application", "Statistics"])
            .label("Class Loading Statistics")
            .setting(Setting::Period, "1000 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.ClassLoadingStatistics`: classes loaded and unloaded so far.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ClassLoadingStatistics {
        /// When they were counted.
        pub start_time: Ticks,
        /// Classes loaded since the JVM started.
        pub loaded_class_count: i64 => field::LOADED_CLASS_COUNT
            .label("Loaded Class Count")
            .description("Number of classes loaded since JVM start"),
        /// Classes unloaded since the JVM started.
        pub unloaded_class_count: i64 => field::UNLOADED_CLASS_COUNT
            .label("Unloaded Class Count")
            .description("Number of classes unloaded since JVM start"),
    }
}
