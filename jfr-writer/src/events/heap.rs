//! The JDK's events that describe the heap and the JVM around the samples,
//! declared as JDK 17 declares them, so that Mission Control's memory and
//! GC rules run: `jdk.GCHeapSummary`, `jdk.GarbageCollection`,
//! `jdk.JVMInformation` and `jdk.ClassLoadingStatistics`.

use super::simple_string;
use crate::error::Error;
use crate::event::{EventType, EventTypeBuilder, Value, ValueType, ValueTypeBuilder};
use crate::field::{FieldSpec, FieldType, Unit};
use crate::format::names::{class, event, field};
use crate::pool::ConstantRef;
use crate::recording::{Recording, Sink, Ticks};
use crate::types::Setting;

/// The value types of the GC events, registered with one recording.
#[derive(Debug, Clone)]
pub struct GcTypes {
    name: ValueType,
    cause: ValueType,
    when: ValueType,
    virtual_space: ValueType,
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
        })
    }

    /// A collector's name (`G1 Young Generation`) as a constant of the chunk.
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

fn gc_id() -> FieldSpec {
    FieldSpec::new(field::GC_ID, FieldType::Int)
        .unsigned()
        .relation(class::GC_ID)
        .label("GC Identifier")
}

/// `jdk.GCHeapSummary`, as the JDK declares it.
pub fn gc_heap_summary(types: &GcTypes) -> EventTypeBuilder {
    EventTypeBuilder::new(event::GC_HEAP_SUMMARY)
        .category(&["Java Virtual Machine", "GC", "Heap"])
        .label("Heap Summary")
        .setting(Setting::Enabled, "true")
        .field(gc_id())
        .field(FieldSpec::new(field::WHEN, FieldType::Constant(types.when.id())).label("When"))
        .field(
            FieldSpec::new(
                field::HEAP_SPACE,
                FieldType::Struct(types.virtual_space.id()),
            )
            .label("Heap Space"),
        )
        .field(
            FieldSpec::new(field::HEAP_USED, FieldType::Long)
                .unsigned()
                .unit(Unit::Bytes)
                .label("Heap Used")
                .description("Bytes allocated by objects in the heap"),
        )
}

/// A `jdk.GCHeapSummary`: the heap before or after a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcHeapSummary {
    /// When the heap was measured.
    pub start_time: Ticks,
    /// The collection's id, as its `jdk.GarbageCollection` has it.
    pub gc_id: i32,
    /// [`BEFORE_GC`] or [`AFTER_GC`] ([`GcTypes::when`]).
    pub when: Option<ConstantRef>,
    /// The heap's first address (0: unknown).
    pub start: i64,
    /// Bytes of the heap committed.
    pub committed_size: i64,
    /// Bytes of the heap reserved: the most it can grow to.
    pub reserved_size: i64,
    /// Bytes of the heap in use.
    pub heap_used: i64,
}

impl GcHeapSummary {
    /// Writes the event as `event_type`, registered from [`gc_heap_summary`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
        types: &GcTypes,
    ) -> Result<(), Error> {
        let space = [
            Value::Long(self.start),
            Value::Long(self.start.wrapping_add(self.committed_size)),
            Value::Long(self.committed_size),
            Value::Long(self.start.wrapping_add(self.reserved_size)),
            Value::Long(self.reserved_size),
        ];
        recording
            .typed_event(event_type, self.start_time)
            .field(field::GC_ID)
            .int(self.gc_id)
            .field(field::WHEN)
            .constant(self.when)
            .field(field::HEAP_SPACE)
            .value(Value::Struct(&types.virtual_space, &space))
            .field(field::HEAP_USED)
            .long(self.heap_used)
            .commit()
    }
}

/// `jdk.GarbageCollection`, as JDK 17 declares it.
pub fn jdk_garbage_collection(types: &GcTypes) -> EventTypeBuilder {
    let pause = |name: &str, label: &str, description: &str| {
        FieldSpec::new(name, FieldType::Long)
            .unsigned()
            .unit(Unit::TimespanTicks)
            .label(label)
            .description(description)
    };
    EventTypeBuilder::new(event::JDK_GARBAGE_COLLECTION)
        .category(&["Java Virtual Machine", "GC", "Collector"])
        .label("Garbage Collection")
        .description("Garbage collection performed by the JVM")
        .setting(Setting::Threshold, "0 ms")
        .setting(Setting::Enabled, "true")
        .with_duration()
        .field(gc_id())
        .field(
            FieldSpec::new(field::NAME, FieldType::Constant(types.name.id()))
                .label("Name")
                .description("The name of the Garbage Collector"),
        )
        .field(
            FieldSpec::new(field::CAUSE, FieldType::Constant(types.cause.id()))
                .label("Cause")
                .description("The reason for triggering this Garbage Collection"),
        )
        .field(pause(
            field::SUM_OF_PAUSES,
            "Sum of Pauses",
            "Sum of all the times in which Java execution was paused during the garbage \
             collection",
        ))
        .field(pause(
            field::LONGEST_PAUSE,
            "Longest Pause",
            "Longest individual pause during the garbage collection",
        ))
}

/// A `jdk.GarbageCollection`: one collection, as the JVM reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JdkGarbageCollection {
    /// When it started.
    pub start_time: Ticks,
    /// Ticks it took.
    pub duration: i64,
    /// Its id: the JVM's count of collections by this collector.
    pub gc_id: i32,
    /// The collector ([`GcTypes::name`]).
    pub name: Option<ConstantRef>,
    /// Why it ran ([`GcTypes::cause`]), if known.
    pub cause: Option<ConstantRef>,
    /// Ticks Java code was paused, summed.
    pub sum_of_pauses: i64,
    /// The longest pause, in ticks.
    pub longest_pause: i64,
}

impl JdkGarbageCollection {
    /// Writes the event as `event_type`, registered from
    /// [`jdk_garbage_collection`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::DURATION)
            .duration(self.duration)
            .field(field::GC_ID)
            .int(self.gc_id)
            .field(field::NAME)
            .constant(self.name)
            .field(field::CAUSE)
            .constant(self.cause)
            .field(field::SUM_OF_PAUSES)
            .long(self.sum_of_pauses)
            .field(field::LONGEST_PAUSE)
            .long(self.longest_pause)
            .commit()
    }
}

/// `jdk.JVMInformation`, as the JDK declares it.
pub fn jvm_information() -> EventTypeBuilder {
    let text = |name: &str, label: &str| FieldSpec::new(name, FieldType::String).label(label);
    EventTypeBuilder::new(event::JVM_INFORMATION)
        .category(&["Java Virtual Machine"])
        .label("JVM Information")
        .description("Description of JVM and the Java application")
        .setting(Setting::Period, "beginChunk")
        .setting(Setting::Enabled, "true")
        .field(text(field::JVM_NAME, "JVM Name"))
        .field(text(field::JVM_VERSION, "JVM Version"))
        .field(text(field::JVM_ARGUMENTS, "JVM Command Line Arguments"))
        .field(text(field::JVM_FLAGS, "JVM Settings File Arguments"))
        .field(text(field::JAVA_ARGUMENTS, "Java Application Arguments"))
        .field(
            FieldSpec::new(field::JVM_START_TIME, FieldType::Long)
                .unit(Unit::TimestampMillisSinceEpoch)
                .label("JVM Start Time"),
        )
        .field(FieldSpec::new(field::PID, FieldType::Long).label("Process Identifier"))
}

/// A `jdk.JVMInformation`: which JVM this is and how it was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JvmInformation<'a> {
    /// When it was written.
    pub start_time: Ticks,
    /// `OpenJDK 64-Bit Server VM`.
    pub jvm_name: Option<&'a str>,
    /// The JVM's version line.
    pub jvm_version: Option<&'a str>,
    /// The JVM's arguments, space-separated.
    pub jvm_arguments: Option<&'a str>,
    /// Arguments from a settings file.
    pub jvm_flags: Option<&'a str>,
    /// The main class or jar and its arguments.
    pub java_arguments: Option<&'a str>,
    /// When the JVM started, in milliseconds since the Unix epoch.
    pub jvm_start_time: i64,
    /// The process id.
    pub pid: i64,
}

impl JvmInformation<'_> {
    /// Writes the event as `event_type`, registered from [`jvm_information`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::JVM_NAME)
            .string(self.jvm_name)
            .field(field::JVM_VERSION)
            .string(self.jvm_version)
            .field(field::JVM_ARGUMENTS)
            .string(self.jvm_arguments)
            .field(field::JVM_FLAGS)
            .string(self.jvm_flags)
            .field(field::JAVA_ARGUMENTS)
            .string(self.java_arguments)
            .field(field::JVM_START_TIME)
            .long(self.jvm_start_time)
            .field(field::PID)
            .long(self.pid)
            .commit()
    }
}

/// `jdk.ClassLoadingStatistics`, as the JDK declares it. Mission Control's
/// leak rule reads it to tell when the application has warmed up.
pub fn class_loading_statistics() -> EventTypeBuilder {
    EventTypeBuilder::new(event::CLASS_LOADING_STATISTICS)
        .category(&["Java Application", "Statistics"])
        .label("Class Loading Statistics")
        .setting(Setting::Period, "1000 ms")
        .setting(Setting::Enabled, "true")
        .field(
            FieldSpec::new(field::LOADED_CLASS_COUNT, FieldType::Long)
                .label("Loaded Class Count")
                .description("Number of classes loaded since JVM start"),
        )
        .field(
            FieldSpec::new(field::UNLOADED_CLASS_COUNT, FieldType::Long)
                .label("Unloaded Class Count")
                .description("Number of classes unloaded since JVM start"),
        )
}

/// A `jdk.ClassLoadingStatistics`: classes loaded and unloaded so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassLoadingStatistics {
    /// When they were counted.
    pub start_time: Ticks,
    /// Classes loaded since the JVM started.
    pub loaded_class_count: i64,
    /// Classes unloaded since the JVM started.
    pub unloaded_class_count: i64,
}

impl ClassLoadingStatistics {
    /// Writes the event as `event_type`, registered from
    /// [`class_loading_statistics`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::LOADED_CLASS_COUNT)
            .long(self.loaded_class_count)
            .field(field::UNLOADED_CLASS_COUNT)
            .long(self.unloaded_class_count)
            .commit()
    }
}
