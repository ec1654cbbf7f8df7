//! The JDK's events of the collectors, their pauses and configuration,
//! declared as JDK 17 declares them: `jdk.YoungGarbageCollection`,
//! `jdk.OldGarbageCollection`, `jdk.GCPhasePause` (and
//! `jdk.GCPhasePauseLevel1`, declared only), `jdk.MetaspaceSummary`,
//! `jdk.GCConfiguration` and `jdk.GCHeapConfiguration`. Their value types
//! are [`GcTypes`]'.

use super::heap::GcTypes;
use super::typed::{FieldValue, OfValueType};
use crate::event::{EventTypeBuilder, Value, ValueType};
use crate::field::{FieldType, Unit};
use crate::pool::{ConstantRef, ThreadRef};
use crate::recording::Sink;
use crate::types::Setting;
use crate::writer::EventWriter;
use jfr_format::names::{class, event, field};

/// A `jdk.types.MetaspaceSizes`: one space of the metaspace, written
/// inline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaspaceSizes {
    /// Bytes committed.
    pub committed: i64,
    /// Bytes in use.
    pub used: i64,
    /// Bytes reserved (0: not known).
    pub reserved: i64,
}

impl FieldValue for MetaspaceSizes {
    fn write<'r, S: Sink>(self, event: EventWriter<'r, S>) -> EventWriter<'r, S> {
        // As `GcTypes::register` declares it.
        event.struct_fields(&[
            Value::Long(self.committed),
            Value::Long(self.used),
            Value::Long(self.reserved),
        ])
    }
}

impl OfValueType for MetaspaceSizes {
    fn field_type(value_type: &ValueType) -> FieldType {
        FieldType::Struct(value_type.id())
    }
}

typed_event! {
    /// `jdk.YoungGarbageCollection`, as the JDK declares it. Mission
    /// Control's leak rule counts these and the old ones.
    pub fn young_garbage_collection() -> EventTypeBuilder {
        EventTypeBuilder::new(event::YOUNG_GARBAGE_COLLECTION)
            .category(&["Java Virtual Machine", "GC", "Collector"])
            .label("Young Garbage Collection")
            .description("Extra information specific to Young Garbage Collections")
            .setting(Setting::Threshold, "0 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.YoungGarbageCollection`: the young collection of a
    /// `jdk.GarbageCollection` of the same `gcId`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct YoungGarbageCollection {
        /// When it started.
        pub start_time: Ticks,
        /// Ticks it took.
        pub duration: i64,
        /// Its collection's id.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
        /// The age from which it promoted objects (0: not known).
        pub tenuring_threshold: i32 => field::TENURING_THRESHOLD
            .unsigned()
            .label("Tenuring Threshold"),
    }
}

typed_event! {
    /// `jdk.OldGarbageCollection`, as the JDK declares it.
    pub fn old_garbage_collection() -> EventTypeBuilder {
        EventTypeBuilder::new(event::OLD_GARBAGE_COLLECTION)
            .category(&["Java Virtual Machine", "GC", "Collector"])
            .label("Old Garbage Collection")
            .description("Extra information specific to Old Garbage Collections")
            .setting(Setting::Threshold, "0 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.OldGarbageCollection`: the old (full) collection of a
    /// `jdk.GarbageCollection` of the same `gcId`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct OldGarbageCollection {
        /// When it started.
        pub start_time: Ticks,
        /// Ticks it took.
        pub duration: i64,
        /// Its collection's id.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
    }
}

typed_event! {
    /// `jdk.GCPhasePause`, as the JDK declares it.
    pub fn gc_phase_pause() -> EventTypeBuilder {
        EventTypeBuilder::new(event::GC_PHASE_PAUSE)
            .category(&["Java Virtual Machine", "GC", "Phases"])
            .label("GC Phase Pause")
            .setting(Setting::Threshold, "0 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.GCPhasePause`: one stop-the-world pause of a collection.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct GcPhasePause<'a> {
        /// When it started.
        pub start_time: Ticks,
        /// Ticks it took.
        pub duration: i64,
        /// The thread that paused the others (null: not known).
        pub event_thread: Option<ThreadRef>,
        /// The id of the collection it was part of.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
        /// The pause's name (`GC Pause`).
        pub name: Option<&'a str> => field::NAME.label("Name"),
    }
}

typed_event! {
    /// `jdk.GCPhasePauseLevel1`, as the JDK declares it: a pause's phases.
    /// Mission Control's long-pause rule runs only where the recording
    /// declares this type enabled.
    pub fn gc_phase_pause_level_1() -> EventTypeBuilder {
        EventTypeBuilder::new(event::GC_PHASE_PAUSE_LEVEL_1)
            .category(&["Java Virtual Machine", "GC", "Phases"])
            .label("GC Phase Pause Level 1")
            .setting(Setting::Threshold, "0 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.GCPhasePauseLevel1`: one phase of a pause.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct GcPhasePauseLevel1<'a> {
        /// When it started.
        pub start_time: Ticks,
        /// Ticks it took.
        pub duration: i64,
        /// The thread that ran it.
        pub event_thread: Option<ThreadRef>,
        /// The id of the collection it was part of.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
        /// The phase's name.
        pub name: Option<&'a str> => field::NAME.label("Name"),
    }
}

typed_event! {
    /// `jdk.MetaspaceSummary`, as the JDK declares it.
    pub fn metaspace_summary(types: &GcTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::METASPACE_SUMMARY)
            .category(&["Java Virtual Machine", "GC", "Heap"])
            .label("Metaspace Summary")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.MetaspaceSummary`: the metaspace before or after a
    /// collection.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MetaspaceSummary {
        /// When it was measured.
        pub start_time: Ticks,
        /// The collection's id.
        pub gc_id: i32 => field::GC_ID
            .unsigned()
            .relation(class::GC_ID)
            .label("GC Identifier"),
        /// Before or after the collection ([`GcTypes::when`]).
        pub when: Option<ConstantRef> => field::WHEN [types.when].label("When"),
        /// The size that triggers a collection (0: not known).
        pub gc_threshold: i64 => field::GC_THRESHOLD
            .unsigned()
            .unit(Unit::Bytes)
            .label("GC Threshold"),
        /// The whole metaspace.
        pub metaspace: MetaspaceSizes => field::METASPACE [types.metaspace_sizes]
            .label("Total"),
        /// Its non-class part.
        pub data_space: MetaspaceSizes => field::DATA_SPACE [types.metaspace_sizes]
            .label("Data"),
        /// The compressed class space.
        pub class_space: MetaspaceSizes => field::CLASS_SPACE [types.metaspace_sizes]
            .label("Class"),
    }
}

typed_event! {
    /// `jdk.GCConfiguration`, as the JDK declares it.
    pub fn gc_configuration(types: &GcTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::GC_CONFIGURATION)
            .category(&["Java Virtual Machine", "GC", "Configuration"])
            .label("GC Configuration")
            .description("The configuration of the garbage collector")
            .setting(Setting::Period, "everyChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.GCConfiguration`: the collectors and their flags.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct GcConfiguration {
        /// When it was written.
        pub start_time: Ticks,
        /// The young generation's collector ([`GcTypes::name`]).
        pub young_collector: Option<ConstantRef> => field::YOUNG_COLLECTOR [types.name]
            .label("Young Garbage Collector")
            .description("The garbage collector used for the young generation"),
        /// The old generation's collector ([`GcTypes::name`]).
        pub old_collector: Option<ConstantRef> => field::OLD_COLLECTOR [types.name]
            .label("Old Garbage Collector")
            .description("The garbage collector used for the old generation"),
        /// `ParallelGCThreads`.
        pub parallel_gc_threads: i32 => field::PARALLEL_GC_THREADS
            .unsigned()
            .label("Parallel GC Threads")
            .description("Number of parallel threads to use for garbage collection"),
        /// `ConcGCThreads`.
        pub concurrent_gc_threads: i32 => field::CONCURRENT_GC_THREADS
            .unsigned()
            .label("Concurrent GC Threads")
            .description("Number of concurrent threads to use for garbage collection"),
        /// `UseDynamicNumberOfGCThreads`.
        pub uses_dynamic_gc_threads: bool => field::USES_DYNAMIC_GC_THREADS
            .label("Uses Dynamic GC Threads")
            .description("Whether a dynamic number of GC threads are used or not"),
        /// `ExplicitGCInvokesConcurrent`.
        pub is_explicit_gc_concurrent: bool => field::IS_EXPLICIT_GC_CONCURRENT
            .label("Concurrent Explicit GC")
            .description("Whether System.gc() is concurrent or not"),
        /// `DisableExplicitGC`.
        pub is_explicit_gc_disabled: bool => field::IS_EXPLICIT_GC_DISABLED
            .label("Disabled Explicit GC")
            .description("Whether System.gc() will cause a garbage collection or not"),
        /// `MaxGCPauseMillis` if set, else `i64::MIN` (the JDK's "not set").
        pub pause_target: i64 => field::PAUSE_TARGET
            .unit(Unit::TimespanMillis)
            .label("Pause Target")
            .description("Target for GC pauses"),
        /// `GCTimeRatio`.
        pub gc_time_ratio: i32 => field::GC_TIME_RATIO
            .unsigned()
            .label("GC Time Ratio")
            .description("Target for runtime vs garbage collection time"),
    }
}

typed_event! {
    /// `jdk.GCHeapConfiguration`, as the JDK declares it.
    pub fn gc_heap_configuration(types: &GcTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::GC_HEAP_CONFIGURATION)
            .category(&["Java Virtual Machine", "GC", "Configuration"])
            .label("GC Heap Configuration")
            .description("The configuration of the garbage collected heap")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.GCHeapConfiguration`: the heap's sizes and references.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct GcHeapConfiguration {
        /// When it was written.
        pub start_time: Ticks,
        /// `MinHeapSize`.
        pub min_size: i64 => field::MIN_SIZE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Minimum Heap Size"),
        /// `MaxHeapSize`.
        pub max_size: i64 => field::MAX_SIZE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Maximum Heap Size"),
        /// `InitialHeapSize`.
        pub initial_size: i64 => field::INITIAL_SIZE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Initial Heap Size"),
        /// `UseCompressedOops`.
        pub uses_compressed_oops: bool => field::USES_COMPRESSED_OOPS
            .label("If Compressed Oops Are Used")
            .description("If compressed Oops (Ordinary Object Pointers) are enabled"),
        /// How compressed references are encoded ([`GcTypes::narrow_oop_mode`]).
        pub compressed_oops_mode: Option<ConstantRef> => field::COMPRESSED_OOPS_MODE
            [types.narrow_oop_mode]
            .label("Compressed Oops Mode")
            .description("The kind of compressed oops being used"),
        /// `ObjectAlignmentInBytes`.
        pub object_alignment: i64 => field::OBJECT_ALIGNMENT
            .unsigned()
            .unit(Unit::Bytes)
            .label("Object Alignment")
            .description("Object alignment (in bytes) on the heap"),
        /// Bits of a heap reference: 32 with compressed references, else 64.
        pub heap_address_bits: i8 => field::HEAP_ADDRESS_BITS
            .unsigned()
            .label("Heap Address Size")
            .description("Heap Address Size (in bits)"),
    }
}
