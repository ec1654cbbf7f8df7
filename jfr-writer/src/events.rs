//! The event types heapsampler writes, declared once here so the agent, the
//! tests and the converter agree on them. JDK event types are declared
//! exactly as JDK 17 declares them.

use crate::event::{EventTypeBuilder, FieldSpec, FieldType, Setting, Unit};

/// `jdk.ObjectAllocationSample`, as the JDK declares it: Mission Control's
/// allocation pages and rules read it.
pub fn object_allocation_sample() -> EventTypeBuilder {
    EventTypeBuilder::new("jdk.ObjectAllocationSample")
        .category(&["Java Application"])
        .label("Object Allocation Sample")
        .setting(Setting::StackTrace, "true")
        .setting(Setting::Throttle, "off")
        .setting(Setting::Enabled, "false")
        .with_thread()
        .with_stack_trace()
        .field(
            FieldSpec::new("objectClass", FieldType::Class)
                .label("Object Class")
                .description("Class of allocated object"),
        )
        .field(
            FieldSpec::new("weight", FieldType::Long)
                .unit(Unit::Bytes)
                .label("Sample Weight")
                .description(
                    "The relative weight of the sample. Aggregating the weights for a large \
                     number of samples, for a particular class, thread or stack trace, gives a \
                     statistically accurate representation of the allocation pressure",
                ),
        )
}

/// `jdk.ActiveRecording`, as the JDK declares it: which recording this is.
pub fn active_recording() -> EventTypeBuilder {
    EventTypeBuilder::new("jdk.ActiveRecording")
        .label("Flight Recording")
        .category(&["Flight Recorder"])
        .setting(Setting::Threshold, "0 ns")
        .setting(Setting::StackTrace, "false")
        .setting(Setting::Enabled, "true")
        .with_duration()
        .with_thread()
        .with_stack_trace()
        .field(FieldSpec::new("id", FieldType::Long).label("Id"))
        .field(FieldSpec::new("name", FieldType::String).label("Name"))
        .field(FieldSpec::new("destination", FieldType::String).label("Destination"))
        .field(
            FieldSpec::new("maxAge", FieldType::Long)
                .label("Max Age")
                .unit(Unit::TimespanMillis),
        )
        .field(
            FieldSpec::new("flushInterval", FieldType::Long)
                .label("Flush Interval")
                .unit(Unit::TimespanMillis),
        )
        .field(
            FieldSpec::new("maxSize", FieldType::Long)
                .label("Max Size")
                .unit(Unit::Bytes),
        )
        .field(
            FieldSpec::new("recordingStart", FieldType::Long)
                .label("Start Time")
                .unit(Unit::TimestampMillisSinceEpoch),
        )
        .field(
            FieldSpec::new("recordingDuration", FieldType::Long)
                .label("Recording Duration")
                .unit(Unit::TimespanMillis),
        )
}

/// `jdk.ActiveSetting`, as the JDK declares it: one setting of one event
/// type (`enabled`, `stackTrace`, the sampling interval...).
pub fn active_setting() -> EventTypeBuilder {
    EventTypeBuilder::new("jdk.ActiveSetting")
        .label("Recording Setting")
        .category(&["Flight Recorder"])
        .setting(Setting::Threshold, "0 ns")
        .setting(Setting::StackTrace, "false")
        .setting(Setting::Enabled, "true")
        .with_duration()
        .with_thread()
        .with_stack_trace()
        .field(FieldSpec::new("id", FieldType::Long).label("Event Id"))
        .field(FieldSpec::new("name", FieldType::String).label("Setting Name"))
        .field(FieldSpec::new("value", FieldType::String).label("Setting Value"))
}

/// `heapsampler.ObjectLifetime`: one per sampled object, when a collection is
/// seen to have freed it or, if it is still live, at the end of the recording.
pub fn object_lifetime() -> EventTypeBuilder {
    EventTypeBuilder::new("heapsampler.ObjectLifetime")
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
        .field(FieldSpec::new("objectClass", FieldType::Class).label("Object Class"))
        .field(
            FieldSpec::new("objectSize", FieldType::Long)
                .label("Object Size")
                .unit(Unit::Bytes),
        )
        .field(
            FieldSpec::new("weight", FieldType::Long)
                .label("Sample Weight")
                .description("The allocated bytes this sample stands for")
                .unit(Unit::Bytes),
        )
        .field(
            FieldSpec::new("live", FieldType::Boolean)
                .label("Live")
                .description("Still reachable when the recording ended"),
        )
        .field(
            FieldSpec::new("gcsSurvived", FieldType::Int)
                .label("GCs Survived")
                .description("Garbage collections the object is known to have outlived")
                .unsigned(),
        )
        .field(
            FieldSpec::new("freedByGcId", FieldType::Int)
                .label("Freed By GC")
                .description("The collection after which the object was found dead; 0 while live")
                .unsigned(),
        )
        .field(
            FieldSpec::new("tracked", FieldType::Boolean)
                .label("Tracked")
                .description(
                    "Whether liveness was tracked; false for objects at or above the agent's \
                     live_max size (by default G1's humongous objects), whose lifetime is unknown",
                ),
        )
}

/// `heapsampler.GarbageCollection`: a collection the agent saw.
pub fn garbage_collection() -> EventTypeBuilder {
    EventTypeBuilder::new("heapsampler.GarbageCollection")
        .label("Garbage Collection")
        .description("A garbage collection seen by the heapsampler agent")
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .setting(Setting::Threshold, "0 ns")
        .with_duration()
        .field(
            FieldSpec::new("gcId", FieldType::Int)
                .label("GC Identifier")
                .unsigned(),
        )
}

/// `heapsampler.AgentStatistics`: the agent's counters, at every flush and at
/// the end. `lostSamples` is always 0: the agent never drops a sample.
pub fn agent_statistics() -> EventTypeBuilder {
    let count = |name: &str, label: &str| {
        FieldSpec::new(name, FieldType::Long)
            .label(label)
            .unsigned()
    };
    EventTypeBuilder::new("heapsampler.AgentStatistics")
        .label("Agent Statistics")
        .description("The heapsampler agent's counters since the recording started")
        .category(&["Java Application", "heapsampler"])
        .setting(Setting::Enabled, "true")
        .setting(Setting::Period, "everyChunk")
        .field(count("samples", "Samples"))
        .field(count("eventsWritten", "Events Written"))
        .field(count("backPressureWaits", "Back-pressure Waits"))
        .field(
            FieldSpec::new("backPressureTime", FieldType::Long)
                .label("Back-pressure Time")
                .description("Time allocating threads spent waiting for room in the ring buffer")
                .unit(Unit::TimespanNanos),
        )
        .field(count("trackedObjects", "Tracked Objects"))
        .field(
            FieldSpec::new("bytesWritten", FieldType::Long)
                .label("Bytes Written")
                .unit(Unit::Bytes),
        )
        .field(count("lostSamples", "Lost Samples"))
        .field(
            count("untrackedObjects", "Untracked Objects").description(
                "Samples not tracked for liveness: objects at or above the live_max size",
            ),
        )
}
