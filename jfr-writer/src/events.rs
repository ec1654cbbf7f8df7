//! The event types heapsampler writes, declared once here so the agent, the
//! tests and the converter agree on them. JDK event types are declared
//! exactly as JDK 17 declares them.
//!
//! Each event type has a declaration (a function returning its
//! [`EventTypeBuilder`], to register) and, right after it, a typed struct
//! whose fields are the event's in declaration order and whose `write`
//! names every field it writes ([`EventWriter::field`]), in one chain of
//! calls. Writing two fields of one type in the wrong order is then a
//! failed commit naming both fields, not a silent swap; a test writes every
//! typed event once. A typed write's first event of a type is checked so;
//! once one commits, its later ones (the same chain) skip the checks of
//! names and types.
//!
//! [`EventWriter::field`]: crate::EventWriter::field

mod heap;
mod old_objects;

pub use heap::{
    AFTER_GC, BEFORE_GC, ClassLoadingStatistics, GcHeapSummary, GcTypes, JdkGarbageCollection,
    JvmInformation, class_loading_statistics, gc_heap_summary, jdk_garbage_collection,
    jvm_information,
};
pub use old_objects::{OldObjectSample, OldObjectTypes, ReferenceHolder, old_object_sample};

use crate::error::Error;
use crate::event::{EventType, EventTypeBuilder, ValueTypeBuilder};
use crate::field::{FieldSpec, FieldType, Unit};
use crate::format::names::{event, field, setting};
use crate::pool::{ClassRef, StackTraceField, ThreadRef};
use crate::recording::{Recording, Sink, Ticks};
use crate::types::Setting;

/// A simple type of one string field, as the JDK declares its enumerations.
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

/// `jdk.ObjectAllocationSample`, as the JDK declares it: Mission Control's
/// allocation pages and rules read it.
pub fn object_allocation_sample() -> EventTypeBuilder {
    EventTypeBuilder::new(event::OBJECT_ALLOCATION_SAMPLE)
        .category(&["Java Application"])
        .label("Object Allocation Sample")
        .setting(Setting::StackTrace, "true")
        .setting(Setting::Throttle, setting::THROTTLE_OFF)
        .setting(Setting::Enabled, "false")
        .with_thread()
        .with_stack_trace()
        .field(
            FieldSpec::new(field::OBJECT_CLASS, FieldType::Class)
                .label("Object Class")
                .description("Class of allocated object"),
        )
        .field(
            FieldSpec::new(field::WEIGHT, FieldType::Long)
                .unit(Unit::Bytes)
                .label("Sample Weight")
                .description(
                    "The relative weight of the sample. Aggregating the weights for a large \
                     number of samples, for a particular class, thread or stack trace, gives a \
                     statistically accurate representation of the allocation pressure",
                ),
        )
}

/// A `jdk.ObjectAllocationSample`: one sampled allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectAllocationSample {
    /// When the object was allocated.
    pub start_time: Ticks,
    /// The allocating thread.
    pub event_thread: Option<ThreadRef>,
    /// Where it was allocated.
    pub stack_trace: StackTraceField,
    /// The allocated object's class.
    pub object_class: Option<ClassRef>,
    /// The allocated bytes the sample stands for.
    pub weight: i64,
}

impl ObjectAllocationSample {
    /// Writes the event as `event_type`, registered from
    /// [`object_allocation_sample`].
    #[inline]
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::EVENT_THREAD)
            .thread(self.event_thread)
            .field(field::STACK_TRACE)
            .stack_trace_field(self.stack_trace)
            .field(field::OBJECT_CLASS)
            .class(self.object_class)
            .field(field::WEIGHT)
            .long(self.weight)
            .commit()
    }
}

/// `jdk.ActiveRecording`, as the JDK declares it: which recording this is.
pub fn active_recording() -> EventTypeBuilder {
    EventTypeBuilder::new(event::ACTIVE_RECORDING)
        .label("Flight Recording")
        .category(&["Flight Recorder"])
        .setting(Setting::Threshold, "0 ns")
        .setting(Setting::StackTrace, "false")
        .setting(Setting::Enabled, "true")
        .with_duration()
        .with_thread()
        .with_stack_trace()
        .field(FieldSpec::new(field::ID, FieldType::Long).label("Id"))
        .field(FieldSpec::new(field::NAME, FieldType::String).label("Name"))
        .field(FieldSpec::new(field::DESTINATION, FieldType::String).label("Destination"))
        .field(
            FieldSpec::new(field::MAX_AGE, FieldType::Long)
                .label("Max Age")
                .unit(Unit::TimespanMillis),
        )
        .field(
            FieldSpec::new(field::FLUSH_INTERVAL, FieldType::Long)
                .label("Flush Interval")
                .unit(Unit::TimespanMillis),
        )
        .field(
            FieldSpec::new(field::MAX_SIZE, FieldType::Long)
                .label("Max Size")
                .unit(Unit::Bytes),
        )
        .field(
            FieldSpec::new(field::RECORDING_START, FieldType::Long)
                .label("Start Time")
                .unit(Unit::TimestampMillisSinceEpoch),
        )
        .field(
            FieldSpec::new(field::RECORDING_DURATION, FieldType::Long)
                .label("Recording Duration")
                .unit(Unit::TimespanMillis),
        )
}

/// A `jdk.ActiveRecording`: the recording's identity and limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveRecording<'a> {
    /// When the event was written.
    pub start_time: Ticks,
    /// Ticks it took (0: an instant).
    pub duration: i64,
    /// The thread that wrote it, if any.
    pub event_thread: Option<ThreadRef>,
    /// Where it was written from, if recorded.
    pub stack_trace: StackTraceField,
    /// The recording's id.
    pub id: i64,
    /// The recording's name.
    pub name: Option<&'a str>,
    /// Where the recording goes.
    pub destination: Option<&'a str>,
    /// How long data is kept, in milliseconds (0: no limit).
    pub max_age: i64,
    /// How often the recording is flushed, in milliseconds.
    pub flush_interval: i64,
    /// How much data is kept, in bytes (0: no limit).
    pub max_size: i64,
    /// When the recording started, in milliseconds since the Unix epoch.
    pub recording_start: i64,
    /// How long the recording runs, in milliseconds (0: until stopped).
    pub recording_duration: i64,
}

impl ActiveRecording<'_> {
    /// Writes the event as `event_type`, registered from [`active_recording`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::DURATION)
            .duration(self.duration)
            .field(field::EVENT_THREAD)
            .thread(self.event_thread)
            .field(field::STACK_TRACE)
            .stack_trace_field(self.stack_trace)
            .field(field::ID)
            .long(self.id)
            .field(field::NAME)
            .string(self.name)
            .field(field::DESTINATION)
            .string(self.destination)
            .field(field::MAX_AGE)
            .long(self.max_age)
            .field(field::FLUSH_INTERVAL)
            .long(self.flush_interval)
            .field(field::MAX_SIZE)
            .long(self.max_size)
            .field(field::RECORDING_START)
            .long(self.recording_start)
            .field(field::RECORDING_DURATION)
            .long(self.recording_duration)
            .commit()
    }
}

/// `jdk.ActiveSetting`, as the JDK declares it: one setting of one event
/// type (`enabled`, `stackTrace`, the sampling interval...).
pub fn active_setting() -> EventTypeBuilder {
    EventTypeBuilder::new(event::ACTIVE_SETTING)
        .label("Recording Setting")
        .category(&["Flight Recorder"])
        .setting(Setting::Threshold, "0 ns")
        .setting(Setting::StackTrace, "false")
        .setting(Setting::Enabled, "true")
        .with_duration()
        .with_thread()
        .with_stack_trace()
        .field(FieldSpec::new(field::ID, FieldType::Long).label("Event Id"))
        .field(FieldSpec::new(field::NAME, FieldType::String).label("Setting Name"))
        .field(FieldSpec::new(field::VALUE, FieldType::String).label("Setting Value"))
}

/// A `jdk.ActiveSetting`: the value of one setting of one event type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveSetting<'a> {
    /// When the event was written.
    pub start_time: Ticks,
    /// Ticks it took (0: an instant).
    pub duration: i64,
    /// The thread that wrote it, if any.
    pub event_thread: Option<ThreadRef>,
    /// Where it was written from, if recorded.
    pub stack_trace: StackTraceField,
    /// The id of the event type the setting is of ([`EventType::id`]).
    pub id: i64,
    /// The setting's name (`enabled`, `stackTrace`, ...).
    pub name: Option<&'a str>,
    /// Its value.
    pub value: Option<&'a str>,
}

impl ActiveSetting<'_> {
    /// Writes the event as `event_type`, registered from [`active_setting`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::DURATION)
            .duration(self.duration)
            .field(field::EVENT_THREAD)
            .thread(self.event_thread)
            .field(field::STACK_TRACE)
            .stack_trace_field(self.stack_trace)
            .field(field::ID)
            .long(self.id)
            .field(field::NAME)
            .string(self.name)
            .field(field::VALUE)
            .string(self.value)
            .commit()
    }
}

/// `heapsampler.ObjectLifetime`: one per sampled object, when a collection is
/// seen to have freed it or, if it is still live, at the end of the recording.
pub fn object_lifetime() -> EventTypeBuilder {
    EventTypeBuilder::new(event::OBJECT_LIFETIME)
        .label("Object Lifetime")
        .description(
            "A sampled object's life: freed by a garbage collection, or still live at the end",
        )
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .setting(Setting::StackTrace, "true")
        .with_duration()
        .with_thread()
        .with_stack_trace()
        .field(FieldSpec::new(field::OBJECT_CLASS, FieldType::Class).label("Object Class"))
        .field(
            FieldSpec::new(field::OBJECT_SIZE, FieldType::Long)
                .label("Object Size")
                .unit(Unit::Bytes),
        )
        .field(
            FieldSpec::new(field::WEIGHT, FieldType::Long)
                .label("Sample Weight")
                .description("The allocated bytes this sample stands for")
                .unit(Unit::Bytes),
        )
        .field(
            FieldSpec::new(field::LIVE, FieldType::Boolean)
                .label("Live")
                .description("Still reachable when the recording ended"),
        )
        .field(
            FieldSpec::new(field::GCS_SURVIVED, FieldType::Int)
                .label("GCs Survived")
                .description("Garbage collections the object is known to have outlived")
                .unsigned(),
        )
        .field(
            FieldSpec::new(field::FREED_BY_GC_ID, FieldType::Int)
                .label("Freed By GC")
                .description("The collection after which the object was found dead; 0 while live")
                .unsigned(),
        )
        .field(
            FieldSpec::new(field::TRACKED, FieldType::Boolean)
                .label("Tracked")
                .description(
                    "Whether liveness was tracked; false for objects at or above the agent's \
                     live_max size (by default G1's humongous objects), whose lifetime is unknown",
                ),
        )
}

/// A `heapsampler.ObjectLifetime`: how a sampled object's life ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectLifetime {
    /// When the object was allocated.
    pub start_time: Ticks,
    /// Ticks from its allocation to when it was found dead or the recording
    /// ended.
    pub duration: i64,
    /// The allocating thread.
    pub event_thread: Option<ThreadRef>,
    /// Where it was allocated.
    pub stack_trace: StackTraceField,
    /// Its class.
    pub object_class: Option<ClassRef>,
    /// Its size in bytes.
    pub object_size: i64,
    /// The allocated bytes its sample stands for.
    pub weight: i64,
    /// Still reachable when the recording ended.
    pub live: bool,
    /// Collections it is known to have outlived.
    pub gcs_survived: i32,
    /// The collection after which it was found dead; 0 while live.
    pub freed_by_gc_id: i32,
    /// Whether its liveness was tracked.
    pub tracked: bool,
}

impl ObjectLifetime {
    /// Writes the event as `event_type`, registered from [`object_lifetime`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::DURATION)
            .duration(self.duration)
            .field(field::EVENT_THREAD)
            .thread(self.event_thread)
            .field(field::STACK_TRACE)
            .stack_trace_field(self.stack_trace)
            .field(field::OBJECT_CLASS)
            .class(self.object_class)
            .field(field::OBJECT_SIZE)
            .long(self.object_size)
            .field(field::WEIGHT)
            .long(self.weight)
            .field(field::LIVE)
            .boolean(self.live)
            .field(field::GCS_SURVIVED)
            .int(self.gcs_survived)
            .field(field::FREED_BY_GC_ID)
            .int(self.freed_by_gc_id)
            .field(field::TRACKED)
            .boolean(self.tracked)
            .commit()
    }
}

/// `heapsampler.GarbageCollection`: a collection the agent saw.
pub fn garbage_collection() -> EventTypeBuilder {
    EventTypeBuilder::new(event::GARBAGE_COLLECTION)
        .label("Garbage Collection")
        .description("A garbage collection seen by the heapsampler agent")
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .setting(Setting::Threshold, "0 ns")
        .with_duration()
        .field(
            FieldSpec::new(field::GC_ID, FieldType::Int)
                .label("GC Identifier")
                .unsigned(),
        )
}

/// A `heapsampler.GarbageCollection`: a collection the agent saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GarbageCollection {
    /// When it started.
    pub start_time: Ticks,
    /// Ticks it took.
    pub duration: i64,
    /// Its number in the recording (1, 2, ...).
    pub gc_id: i32,
}

impl GarbageCollection {
    /// Writes the event as `event_type`, registered from
    /// [`garbage_collection`].
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
            .commit()
    }
}

/// `heapsampler.AgentStatistics`: the agent's counters, at every flush and at
/// the end. `lostSamples` is always 0: the agent never drops a sample.
pub fn agent_statistics() -> EventTypeBuilder {
    let count = |name: &str, label: &str| {
        FieldSpec::new(name, FieldType::Long)
            .label(label)
            .unsigned()
    };
    EventTypeBuilder::new(event::AGENT_STATISTICS)
        .label("Agent Statistics")
        .description("The heapsampler agent's counters since the recording started")
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .setting(Setting::Period, "everyChunk")
        .field(count(field::SAMPLES, "Samples"))
        .field(count(field::EVENTS_WRITTEN, "Events Written"))
        .field(count(field::BACK_PRESSURE_WAITS, "Back-pressure Waits"))
        .field(
            FieldSpec::new(field::BACK_PRESSURE_TIME, FieldType::Long)
                .label("Back-pressure Time")
                .description("Time allocating threads spent waiting for room in the ring buffer")
                .unit(Unit::TimespanNanos),
        )
        .field(count(field::TRACKED_OBJECTS, "Tracked Objects"))
        .field(
            FieldSpec::new(field::BYTES_WRITTEN, FieldType::Long)
                .label("Bytes Written")
                .unit(Unit::Bytes),
        )
        .field(count(field::LOST_SAMPLES, "Lost Samples"))
        .field(
            count(field::UNTRACKED_OBJECTS, "Untracked Objects").description(
                "Samples not tracked for liveness: objects at or above the live_max size",
            ),
        )
        .field(count(field::OLD_OBJECT_CAP, "Old Object Cap").description(
            "The most jdk.OldObjectSample events a chunk carries for the sampled objects live \
             at its end, largest weight first (the agent's old_objects option)",
        ))
        .field(
            count(field::OLD_OBJECTS_LEFT_OUT, "Old Objects Left Out").description(
                "Live sampled objects the cap left out of jdk.OldObjectSample events, over all \
                 chunk ends so far",
            ),
        )
        .field(count(field::CONSTANTS_HELD, "Constants Held").description(
            "Stack traces, methods, classes, threads and symbols held in memory now: what \
                 recent chunks used, and what the tracked objects hold",
        ))
        .field(count(field::STACK_TRACES_HELD, "Stack Traces Held"))
        .field(count(field::THREADS_HELD, "Threads Held"))
}

/// A `heapsampler.AgentStatistics`: the agent's counters so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentStatistics {
    /// When the counters were read.
    pub start_time: Ticks,
    /// Samples the JVM handed the agent.
    pub samples: i64,
    /// Events written.
    pub events_written: i64,
    /// Times an allocating thread waited for room in the ring buffer.
    pub back_pressure_waits: i64,
    /// Nanoseconds allocating threads spent waiting for room.
    pub back_pressure_time: i64,
    /// Objects tracked for liveness now.
    pub tracked_objects: i64,
    /// Bytes of the recording written.
    pub bytes_written: i64,
    /// Samples lost: always 0.
    pub lost_samples: i64,
    /// Samples not tracked for liveness.
    pub untracked_objects: i64,
    /// The most old-object events a chunk carries.
    pub old_object_cap: i64,
    /// Live objects the cap left out of old-object events so far.
    pub old_objects_left_out: i64,
    /// Values held in the recording's constant pools now.
    pub constants_held: i64,
    /// Stack traces held now.
    pub stack_traces_held: i64,
    /// Threads held now.
    pub threads_held: i64,
}

impl AgentStatistics {
    /// Writes the event as `event_type`, registered from
    /// [`agent_statistics`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::SAMPLES)
            .long(self.samples)
            .field(field::EVENTS_WRITTEN)
            .long(self.events_written)
            .field(field::BACK_PRESSURE_WAITS)
            .long(self.back_pressure_waits)
            .field(field::BACK_PRESSURE_TIME)
            .long(self.back_pressure_time)
            .field(field::TRACKED_OBJECTS)
            .long(self.tracked_objects)
            .field(field::BYTES_WRITTEN)
            .long(self.bytes_written)
            .field(field::LOST_SAMPLES)
            .long(self.lost_samples)
            .field(field::UNTRACKED_OBJECTS)
            .long(self.untracked_objects)
            .field(field::OLD_OBJECT_CAP)
            .long(self.old_object_cap)
            .field(field::OLD_OBJECTS_LEFT_OUT)
            .long(self.old_objects_left_out)
            .field(field::CONSTANTS_HELD)
            .long(self.constants_held)
            .field(field::STACK_TRACES_HELD)
            .long(self.stack_traces_held)
            .field(field::THREADS_HELD)
            .long(self.threads_held)
            .commit()
    }
}

/// `heapsampler.HeapExhausted`: the Java heap ran out (a Java heap
/// `OutOfMemoryError`, as JVMTI's `ResourceExhausted` reports it), on the
/// thread whose allocation failed.
pub fn heap_exhausted() -> EventTypeBuilder {
    EventTypeBuilder::new(event::HEAP_EXHAUSTED)
        .label("Heap Exhausted")
        .description(
            "The Java heap was exhausted: an allocation failed and the JVM threw \
             OutOfMemoryError. The live objects then are the jdk.OldObjectSample events that \
             end the chunk",
        )
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .setting(Setting::StackTrace, "true")
        .with_thread()
        .with_stack_trace()
        .field(
            FieldSpec::new(field::MESSAGE, FieldType::String)
                .label("Message")
                .description(
                    "What the JVM said ran out: Java heap space, GC overhead limit exceeded",
                ),
        )
        .field(
            FieldSpec::new(field::OLD_OBJECTS, FieldType::Long)
                .label("Old Objects")
                .description(
                    "jdk.OldObjectSample events written with it: the sampled objects live then, \
                     largest first; 0 when an exhaustion less than a minute before wrote them",
                )
                .unsigned(),
        )
}

/// A `heapsampler.HeapExhausted`: the Java heap ran out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeapExhausted<'a> {
    /// When the allocation failed.
    pub start_time: Ticks,
    /// The thread whose allocation failed.
    pub event_thread: Option<ThreadRef>,
    /// Where it failed.
    pub stack_trace: StackTraceField,
    /// What the JVM said ran out.
    pub message: Option<&'a str>,
    /// Old-object events written with it.
    pub old_objects: i64,
}

impl HeapExhausted<'_> {
    /// Writes the event as `event_type`, registered from
    /// [`heap_exhausted`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::EVENT_THREAD)
            .thread(self.event_thread)
            .field(field::STACK_TRACE)
            .stack_trace_field(self.stack_trace)
            .field(field::MESSAGE)
            .string(self.message)
            .field(field::OLD_OBJECTS)
            .long(self.old_objects)
            .commit()
    }
}

/// `heapsampler.LiveSet`: how the live objects a recording's end writes
/// (`heapsampler.ObjectLifetime` with `live = true`) were found. Written
/// once, with them: at the recording's end, or in a snapshot.
pub fn live_set() -> EventTypeBuilder {
    EventTypeBuilder::new(event::LIVE_SET)
        .label("Live Set")
        .description(
            "How the objects still live at the recording's end were found: right after a \
             collection forced for the purpose (live means reachable), or as of the last \
             collection (live includes garbage made since)",
        )
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .field(
            FieldSpec::new(field::COLLECTED, FieldType::Boolean)
                .label("Collected")
                .description("Whether a collection was forced right before the live set was taken"),
        )
        .field(
            FieldSpec::new(field::LAST_COLLECTION, FieldType::Long)
                .label("Last Collection")
                .description(
                    "When the last collection the agent saw before the live set ended; the \
                     recording's start if none",
                )
                .unit(Unit::TimestampTicks),
        )
        .field(
            FieldSpec::new(field::COLLECTIONS, FieldType::Long)
                .label("Collections")
                .description(
                    "Collections the agent saw during the recording, the forced one included",
                )
                .unsigned(),
        )
        .field(
            FieldSpec::new(field::LIVE_OBJECTS, FieldType::Long)
                .label("Live Objects")
                .description("Sampled objects found live, tracked for liveness")
                .unsigned(),
        )
}

/// A `heapsampler.LiveSet`: how a recording's live objects were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSet {
    /// When the live set was taken.
    pub start_time: Ticks,
    /// Whether a collection was forced right before.
    pub collected: bool,
    /// When the last collection before it ended (the recording's start if
    /// none).
    pub last_collection: Ticks,
    /// Collections seen during the recording.
    pub collections: i64,
    /// Sampled objects found live.
    pub live_objects: i64,
}

impl LiveSet {
    /// Writes the event as `event_type`, registered from [`live_set`].
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), Error> {
        recording
            .typed_event(event_type, self.start_time)
            .field(field::COLLECTED)
            .boolean(self.collected)
            .field(field::LAST_COLLECTION)
            .long(self.last_collection.0)
            .field(field::COLLECTIONS)
            .long(self.collections)
            .field(field::LIVE_OBJECTS)
            .long(self.live_objects)
            .commit()
    }
}
