//! The event types heapsampler writes, declared once here so the agent, the
//! tests and the converter agree on them. JDK event types are declared
//! exactly as JDK 17 declares them.
//!
//! Each event type is one `typed_event!` declaration (a macro of this
//! module): a function returning its [`EventTypeBuilder`], to register, and
//! a typed struct whose `write` writes it. Each field is
//! stated once, in the struct, with its name in the format, its label, unit
//! and description; the declaration and the write are made from that one
//! list, so they cannot disagree on the fields or their order. The write
//! still names each field it writes ([`EventWriter::field`]), and its first
//! event of a type is checked field by field: given another event type, it
//! fails, naming the fields. Once one commits, its later events of that
//! type skip the checks of names and types.
//!
//! # Adding an event
//!
//! Name it and its fields in [`jfr_format::names`] (the reader shares
//! those names), then declare it beside the others, as
//! [`ObjectAllocationSample`] is. The struct's fields start with
//! `start_time`, then those of `duration`, `event_thread` and `stack_trace`
//! the event has, then its own, each with its name and annotations:
//!
//! ```text
//! pub cpu_load: f32 => field::MACHINE_TOTAL
//!     .label("Machine Total")
//!     .unit(Unit::Percentage),
//! ```
//!
//! A field of a value type (a constant of the chunk, such as a collector's
//! name, or a struct written inline) names its registered value type in
//! brackets, and the declaration takes the value types as its argument, as
//! [`jdk_garbage_collection`] does. Then write one in the test of every
//! typed event (`tests/typed_events.rs`), and, for a JDK event, compare its
//! declaration with the JDK's (`tests/jdk_reads.rs`).
//!
//! [`EventWriter::field`]: crate::EventWriter::field

#[macro_use]
mod typed;

mod environment;
mod gc;
mod heap;
mod old_objects;
mod watch;

pub use environment::{
    BooleanFlag, CpuInformation, CpuLoad, FlagTypes, InitialEnvironmentVariable,
    InitialSystemProperty, IntFlag, PhysicalMemory, Shutdown, StringFlag,
    ThreadAllocationStatistics, UnsignedLongFlag, boolean_flag, cpu_information, cpu_load,
    initial_environment_variable, initial_system_property, int_flag, physical_memory, shutdown,
    string_flag, thread_allocation_statistics, unsigned_long_flag,
};
pub use gc::{
    GcConfiguration, GcHeapConfiguration, GcPhasePause, GcPhasePauseLevel1, MetaspaceSizes,
    MetaspaceSummary, OldGarbageCollection, YoungGarbageCollection, gc_configuration,
    gc_heap_configuration, gc_phase_pause, gc_phase_pause_level_1, metaspace_summary,
    old_garbage_collection, young_garbage_collection,
};
pub use heap::{
    AFTER_GC, BEFORE_GC, ClassLoadingStatistics, GcHeapSummary, GcTypes, JdkGarbageCollection,
    JvmInformation, VirtualSpace, class_loading_statistics, gc_heap_summary,
    jdk_garbage_collection, jvm_information,
};
pub use old_objects::{
    OldObjectSample, OldObjectTypes, ReferenceHolder, old_object_sample, old_object_snapshot,
};
pub use watch::{
    HeapPeak, LeakSuspect, PeakLiveSite, WatchedSite, heap_peak, leak_suspect, peak_live_site,
    time_to_heap_max, watched_site,
};

use crate::event::EventTypeBuilder;
use crate::field::Unit;
use crate::pool::{ClassRef, StackTraceField, ThreadRef};
use crate::recording::Ticks;
use crate::types::Setting;
use jfr_format::names::{event, field, setting};

typed_event! {
    /// `jdk.ObjectAllocationSample`, as the JDK declares it: Mission Control's
    /// allocation pages and rules read it.
    pub fn object_allocation_sample() -> EventTypeBuilder {
        EventTypeBuilder::new(event::OBJECT_ALLOCATION_SAMPLE)
            .category(&["Java Application"])
            .label("Object Allocation Sample")
            .setting(Setting::StackTrace, "true")
            .setting(Setting::Throttle, setting::THROTTLE_OFF)
            .setting(Setting::Enabled, "false")
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
        pub object_class: Option<ClassRef> => field::OBJECT_CLASS
            .label("Object Class")
            .description("Class of allocated object"),
        /// The allocated bytes the sample stands for.
        pub weight: i64 => field::WEIGHT
            .unit(Unit::Bytes)
            .label("Sample Weight")
            .description(
                "The relative weight of the sample. Aggregating the weights for a large \
                 number of samples, for a particular class, thread or stack trace, gives a \
                 statistically accurate representation of the allocation pressure",
            ),
    }
}

typed_event! {
    /// `jdk.ActiveRecording`, as the JDK declares it: which recording this is.
    pub fn active_recording() -> EventTypeBuilder {
        EventTypeBuilder::new(event::ACTIVE_RECORDING)
            .label("Flight Recording")
            .category(&["Flight Recorder"])
            .setting(Setting::Threshold, "0 ns")
            .setting(Setting::StackTrace, "false")
            .setting(Setting::Enabled, "true")
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
        pub id: i64 => field::ID.label("Id"),
        /// The recording's name.
        pub name: Option<&'a str> => field::NAME.label("Name"),
        /// Where the recording goes.
        pub destination: Option<&'a str> => field::DESTINATION.label("Destination"),
        /// How long data is kept, in milliseconds (0: no limit).
        pub max_age: i64 => field::MAX_AGE
            .label("Max Age")
            .unit(Unit::TimespanMillis),
        /// How often the recording is flushed, in milliseconds.
        pub flush_interval: i64 => field::FLUSH_INTERVAL
            .label("Flush Interval")
            .unit(Unit::TimespanMillis),
        /// How much data is kept, in bytes (0: no limit).
        pub max_size: i64 => field::MAX_SIZE
            .label("Max Size")
            .unit(Unit::Bytes),
        /// When the recording started, in milliseconds since the Unix epoch.
        pub recording_start: i64 => field::RECORDING_START
            .label("Start Time")
            .unit(Unit::TimestampMillisSinceEpoch),
        /// How long the recording runs, in milliseconds (0: until stopped).
        pub recording_duration: i64 => field::RECORDING_DURATION
            .label("Recording Duration")
            .unit(Unit::TimespanMillis),
    }
}

typed_event! {
    /// `jdk.ActiveSetting`, as the JDK declares it: one setting of one event
    /// type (`enabled`, `stackTrace`, the sampling interval...).
    pub fn active_setting() -> EventTypeBuilder {
        EventTypeBuilder::new(event::ACTIVE_SETTING)
            .label("Recording Setting")
            .category(&["Flight Recorder"])
            .setting(Setting::Threshold, "0 ns")
            .setting(Setting::StackTrace, "false")
            .setting(Setting::Enabled, "true")
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
        /// The id of the event type the setting is of
        /// ([`EventType::id`](crate::EventType::id)).
        pub id: i64 => field::ID.label("Event Id"),
        /// The setting's name (`enabled`, `stackTrace`, ...).
        pub name: Option<&'a str> => field::NAME.label("Setting Name"),
        /// Its value.
        pub value: Option<&'a str> => field::VALUE.label("Setting Value"),
    }
}

typed_event! {
    /// `heapsampler.ObjectLifetime`: one per sampled object, when a collection
    /// is seen to have freed it or, if it is still live, at the end of the
    /// recording.
    pub fn object_lifetime() -> EventTypeBuilder {
        EventTypeBuilder::new(event::OBJECT_LIFETIME)
            .label("Object Lifetime")
            .description(
                "A sampled object's life: freed by a garbage collection, or still live at the \
                 end",
            )
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::StackTrace, "true")
    }

    /// A `heapsampler.ObjectLifetime`: how a sampled object's life ended.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct ObjectLifetime {
        /// When the object was allocated.
        pub start_time: Ticks,
        /// Ticks from its allocation to when it was found dead or the
        /// recording ended.
        pub duration: i64,
        /// The allocating thread.
        pub event_thread: Option<ThreadRef>,
        /// Where it was allocated.
        pub stack_trace: StackTraceField,
        /// Its class.
        pub object_class: Option<ClassRef> => field::OBJECT_CLASS.label("Object Class"),
        /// Its size in bytes.
        pub object_size: i64 => field::OBJECT_SIZE
            .label("Object Size")
            .unit(Unit::Bytes),
        /// The allocated bytes its sample stands for.
        pub weight: i64 => field::WEIGHT
            .label("Sample Weight")
            .description("The allocated bytes this sample stands for")
            .unit(Unit::Bytes),
        /// Still reachable when the recording ended.
        pub live: bool => field::LIVE
            .label("Live")
            .description("Still reachable when the recording ended"),
        /// Collections it is known to have outlived.
        pub gcs_survived: i32 => field::GCS_SURVIVED
            .label("GCs Survived")
            .description("Garbage collections the object is known to have outlived")
            .unsigned(),
        /// The collection after which it was found dead; 0 while live.
        pub freed_by_gc_id: i32 => field::FREED_BY_GC_ID
            .label("Freed By GC")
            .description("The collection after which the object was found dead; 0 while live")
            .unsigned(),
        /// Whether its liveness was tracked.
        pub tracked: bool => field::TRACKED
            .label("Tracked")
            .description(
                "Whether liveness was tracked; false for objects at or above the agent's \
                 live_max size (by default G1's humongous objects) and past its cap, whose \
                 lifetime is unknown (trackingProbability 0), and for samples the draw left \
                 untracked when a share is tracked (trackingProbability above 0)",
            ),
        /// The probability with which its liveness was to be tracked,
        /// drawn at its allocation: a tracked sample stands for `1 /
        /// tracking_probability` samples' liveness.
        pub tracking_probability: f64 => field::TRACKING_PROBABILITY
            .label("Tracking Probability")
            .description(
                "The probability with which the sample's liveness was to be tracked: 1 when \
                 every sample is; 0 when its liveness is unknown (its size at or above live_max, \
                 or past the cap on samples tracked since the last major collection); between, \
                 when a share of samples is tracked (generational ZGC), and each tracked one \
                 stands for 1/probability samples' liveness",
            ),
    }
}

typed_event! {
    /// `heapsampler.GarbageCollection`: a collection the agent saw.
    pub fn garbage_collection() -> EventTypeBuilder {
        EventTypeBuilder::new(event::GARBAGE_COLLECTION)
            .label("Garbage Collection")
            .description("A garbage collection seen by the heapsampler agent")
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::Threshold, "0 ns")
    }

    /// A `heapsampler.GarbageCollection`: a collection the agent saw.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct GarbageCollection {
        /// When it started.
        pub start_time: Ticks,
        /// Ticks it took.
        pub duration: i64,
        /// Its number in the recording (1, 2, ...).
        pub gc_id: i32 => field::GC_ID.label("GC Identifier").unsigned(),
    }
}

typed_event! {
    /// `heapsampler.AgentStatistics`: the agent's counters, at every flush and
    /// at the end. `lostSamples` is always 0: the agent never drops a sample.
    pub fn agent_statistics() -> EventTypeBuilder {
        EventTypeBuilder::new(event::AGENT_STATISTICS)
            .label("Agent Statistics")
            .description("The heapsampler agent's counters since the recording started")
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::Period, "everyChunk")
    }

    /// A `heapsampler.AgentStatistics`: the agent's counters so far.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct AgentStatistics {
        /// When the counters were read.
        pub start_time: Ticks,
        /// Samples the JVM handed the agent.
        pub samples: i64 => field::SAMPLES.label("Samples").unsigned(),
        /// Events written.
        pub events_written: i64 => field::EVENTS_WRITTEN.label("Events Written").unsigned(),
        /// Times an allocating thread waited for room in the ring buffer.
        pub back_pressure_waits: i64 => field::BACK_PRESSURE_WAITS
            .label("Back-pressure Waits")
            .unsigned(),
        /// Nanoseconds allocating threads spent waiting for room.
        pub back_pressure_time: i64 => field::BACK_PRESSURE_TIME
            .label("Back-pressure Time")
            .description("Time allocating threads spent waiting for room in the ring buffer")
            .unit(Unit::TimespanNanos),
        /// Objects tracked for liveness now.
        pub tracked_objects: i64 => field::TRACKED_OBJECTS.label("Tracked Objects").unsigned(),
        /// Bytes of the recording written.
        pub bytes_written: i64 => field::BYTES_WRITTEN
            .label("Bytes Written")
            .unit(Unit::Bytes),
        /// Samples lost: always 0.
        pub lost_samples: i64 => field::LOST_SAMPLES.label("Lost Samples").unsigned(),
        /// Samples whose liveness is unknown.
        pub untracked_objects: i64 => field::UNTRACKED_OBJECTS
            .label("Untracked Objects")
            .unsigned()
            .description(
                "Samples whose liveness is unknown (trackingProbability 0): objects at or above \
                 the live_max size, and samples past the cap on those tracked since the last \
                 major collection (cappedSamples). Not the samples the draw left untracked \
                 (undrawnSamples), whose liveness the tracked ones stand for",
            ),
        /// Samples drawn for liveness tracking.
        pub drawn_samples: i64 => field::DRAWN_SAMPLES
            .label("Drawn Samples")
            .unsigned()
            .description(
                "Samples whose liveness is tracked: drawn with the tracking probability in force \
                 (every sample liveness covers, when it is 1)",
            ),
        /// Samples liveness covers that the draw left untracked.
        pub undrawn_samples: i64 => field::UNDRAWN_SAMPLES
            .label("Undrawn Samples")
            .unsigned()
            .description(
                "Samples liveness covers that the draw left untracked, when a share of the \
                 samples is tracked (generational ZGC, or the agent's live_rate=N): each tracked \
                 sample stands for 1/trackingProbability samples' liveness",
            ),
        /// Samples past the cap on those tracked since a major collection.
        pub capped_samples: i64 => field::CAPPED_SAMPLES
            .label("Capped Samples")
            .unsigned()
            .description(
                "Samples left untracked, their liveness unknown, because 256 samples allocated \
                 since the last major collection began were tracked (generational ZGC keeps what \
                 they reach until it ends)",
            ),
        /// The most old-object events a chunk carries.
        pub old_object_cap: i64 => field::OLD_OBJECT_CAP
            .label("Old Object Cap")
            .unsigned()
            .description(
                "The most jdk.OldObjectSample events a chunk carries for the sampled objects \
                 live at its end, largest weight first (the agent's old_objects option)",
            ),
        /// Live objects the cap left out of old-object events so far.
        pub old_objects_left_out: i64 => field::OLD_OBJECTS_LEFT_OUT
            .label("Old Objects Left Out")
            .unsigned()
            .description(
                "Live sampled objects the cap left out of jdk.OldObjectSample events, over all \
                 chunk ends so far",
            ),
        /// Values held in the recording's constant pools now.
        pub constants_held: i64 => field::CONSTANTS_HELD
            .label("Constants Held")
            .unsigned()
            .description(
                "Stack traces, methods, classes, threads and symbols held in memory now: what \
                     recent chunks used, and what the tracked objects hold",
            ),
        /// Stack traces held now.
        pub stack_traces_held: i64 => field::STACK_TRACES_HELD
            .label("Stack Traces Held")
            .unsigned(),
        /// Threads held now.
        pub threads_held: i64 => field::THREADS_HELD.label("Threads Held").unsigned(),
    }
}

typed_event! {
    /// `heapsampler.HeapExhausted`: the Java heap ran out (a Java heap
    /// `OutOfMemoryError`, as JVMTI's `ResourceExhausted` reports it), on the
    /// thread whose allocation failed.
    pub fn heap_exhausted() -> EventTypeBuilder {
        EventTypeBuilder::new(event::HEAP_EXHAUSTED)
            .label("Heap Exhausted")
            .description(
                "The Java heap was exhausted: an allocation failed and the JVM threw \
                 OutOfMemoryError. The live objects then are the jdk.OldObjectSample events \
                 that end the chunk",
            )
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::StackTrace, "true")
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
        pub message: Option<&'a str> => field::MESSAGE
            .label("Message")
            .description("What the JVM said ran out: Java heap space, GC overhead limit exceeded"),
        /// Old-object events written with it.
        pub old_objects: i64 => field::OLD_OBJECTS
            .label("Old Objects")
            .description(
                "jdk.OldObjectSample events written with it: the sampled objects live then, \
                 largest first; 0 when an exhaustion less than a minute before wrote them",
            )
            .unsigned(),
    }
}

typed_event! {
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
    }

    /// A `heapsampler.LiveSet`: how a recording's live objects were found.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct LiveSet {
        /// When the live set was taken.
        pub start_time: Ticks,
        /// Whether a collection was forced right before.
        pub collected: bool => field::COLLECTED
            .label("Collected")
            .description("Whether a collection was forced right before the live set was taken"),
        /// When the last collection before it ended (the recording's start if
        /// none).
        pub last_collection: Ticks => field::LAST_COLLECTION
            .label("Last Collection")
            .description(
                "When the last collection the agent saw before the live set ended; the \
                 recording's start if none",
            )
            .unit(Unit::TimestampTicks),
        /// Collections seen during the recording.
        pub collections: i64 => field::COLLECTIONS
            .label("Collections")
            .description("Collections the agent saw during the recording, the forced one included")
            .unsigned(),
        /// Sampled objects found live.
        pub live_objects: i64 => field::LIVE_OBJECTS
            .label("Live Objects")
            .description("Sampled objects found live, tracked for liveness")
            .unsigned(),
    }
}
