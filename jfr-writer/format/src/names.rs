//! Every name the format gives a meaning to, written once: the metadata's
//! elements and attributes, the classes every recording declares, the
//! annotations and their unit values, and the event types and fields that
//! heapsampler writes or reads. The writer declares with these and the
//! reader looks up by them, so the two cannot spell a name differently.
//!
//! A test (`jfr-writer/format/tests/names.rs`) scans the workspace's non-test
//! sources (core, the writer, the agent, the reader and the command line)
//! and fails if any of these names is spelled there as a string literal.

/// Names of values the JDK gives a meaning to in its recordings.
pub mod class_loader {
    /// The name of the bootstrap class loader's `jdk.types.ClassLoader`,
    /// which has no class of its own (a null `type`), as JDK 17's and
    /// JDK 25's recordings write it.
    pub const BOOTSTRAP: &str = "bootstrap";
}

/// The elements of the metadata event's tree (`FORMAT.md` §6).
pub mod element {
    /// The tree's root.
    pub const ROOT: &str = "root";
    /// Holds the classes.
    pub const METADATA: &str = "metadata";
    /// A class: primitive, value type, event type or annotation type.
    pub const CLASS: &str = "class";
    /// A field of a class.
    pub const FIELD: &str = "field";
    /// A setting of an event type.
    pub const SETTING: &str = "setting";
    /// An annotation on a class, field or setting.
    pub const ANNOTATION: &str = "annotation";
    /// The time zone and locale, which the JDK's parser requires.
    pub const REGION: &str = "region";
}

/// The attributes of metadata elements.
pub mod attribute {
    /// A class's id.
    pub const ID: &str = "id";
    /// The name of a class, field or setting.
    pub const NAME: &str = "name";
    /// A class's super type ([`super::class::EVENT`] for event types).
    pub const SUPER_TYPE: &str = "superType";
    /// Present (`"true"`) on classes whose values readers unwrap.
    pub const SIMPLE_TYPE: &str = "simpleType";
    /// The class id of a field's, setting's or annotation's type.
    pub const CLASS: &str = "class";
    /// Present (`"true"`) on fields whose values are pool keys.
    pub const CONSTANT_POOL: &str = "constantPool";
    /// `"1"` on array fields.
    pub const DIMENSION: &str = "dimension";
    /// A setting's default value.
    pub const DEFAULT_VALUE: &str = "defaultValue";
    /// An annotation's single element.
    pub const VALUE: &str = "value";
    /// The region's locale.
    pub const LOCALE: &str = "locale";
    /// The region's offset from UTC.
    pub const GMT_OFFSET: &str = "gmtOffset";
}

/// Class names: primitives, `java.lang.String`, super types, and the
/// JDK's constant-pool types.
pub mod class {
    /// `boolean`.
    pub const BOOLEAN: &str = "boolean";
    /// `byte`.
    pub const BYTE: &str = "byte";
    /// `short`.
    pub const SHORT: &str = "short";
    /// `char`.
    pub const CHAR: &str = "char";
    /// `int`.
    pub const INT: &str = "int";
    /// `long`.
    pub const LONG: &str = "long";
    /// `float`.
    pub const FLOAT: &str = "float";
    /// `double`.
    pub const DOUBLE: &str = "double";
    /// `java.lang.String`.
    pub const STRING: &str = "java.lang.String";

    /// The super type of event types.
    pub const EVENT: &str = "jdk.jfr.Event";
    /// The super type of annotation types.
    pub const ANNOTATION: &str = "java.lang.annotation.Annotation";
    /// The super type of setting types.
    pub const SETTING_CONTROL: &str = "jdk.jfr.SettingControl";

    /// A thread.
    pub const THREAD: &str = "java.lang.Thread";
    /// A thread group.
    pub const THREAD_GROUP: &str = "jdk.types.ThreadGroup";
    /// A Java class.
    pub const CLASS: &str = "java.lang.Class";
    /// A class loader.
    pub const CLASS_LOADER: &str = "jdk.types.ClassLoader";
    /// A package.
    pub const PACKAGE: &str = "jdk.types.Package";
    /// A module.
    pub const MODULE: &str = "jdk.types.Module";
    /// A Java method.
    pub const METHOD: &str = "jdk.types.Method";
    /// A stack trace.
    pub const STACK_TRACE: &str = "jdk.types.StackTrace";
    /// A frame of a stack trace.
    pub const STACK_FRAME: &str = "jdk.types.StackFrame";
    /// A frame's type (simple type: its description).
    pub const FRAME_TYPE: &str = "jdk.types.FrameType";
    /// A symbol (simple type: its string).
    pub const SYMBOL: &str = "jdk.types.Symbol";

    // The value types of the JDK's leak and GC events.
    /// An object a leak event names: its class, its referrer.
    pub const OLD_OBJECT: &str = "jdk.types.OldObject";
    /// A link of a reference chain: which field or element of which object.
    pub const REFERENCE: &str = "jdk.types.Reference";
    /// The element of an array a reference is.
    pub const OLD_OBJECT_ARRAY: &str = "jdk.types.OldObjectArray";
    /// The field a reference is.
    pub const OLD_OBJECT_FIELD: &str = "jdk.types.OldObjectField";
    /// The root a reference chain starts at.
    pub const OLD_OBJECT_GC_ROOT: &str = "jdk.types.OldObjectGcRoot";
    /// The subsystem a root is of (simple type: its text).
    pub const OLD_OBJECT_ROOT_SYSTEM: &str = "jdk.types.OldObjectRootSystem";
    /// The kind of a root (simple type: its text).
    pub const OLD_OBJECT_ROOT_TYPE: &str = "jdk.types.OldObjectRootType";
    /// A garbage collector's name (simple type).
    pub const GC_NAME: &str = "jdk.types.GCName";
    /// Why a collection ran (simple type).
    pub const GC_CAUSE: &str = "jdk.types.GCCause";
    /// Before or after a collection (simple type).
    pub const GC_WHEN: &str = "jdk.types.GCWhen";
    /// A reserved and committed range of memory.
    pub const VIRTUAL_SPACE: &str = "jdk.types.VirtualSpace";
    /// The relation annotation of fields that hold a collection's id.
    pub const GC_ID: &str = "jdk.types.GcId";

    // The value types of the JDK's environment events.
    /// Where a VM flag's value came from (simple type: its text).
    pub const FLAG_VALUE_ORIGIN: &str = "jdk.types.FlagValueOrigin";

    // The value types of the JDK's GC events.
    /// A metaspace's committed, used and reserved bytes (a struct).
    pub const METASPACE_SIZES: &str = "jdk.types.MetaspaceSizes";
    /// How compressed object pointers are encoded (simple type).
    pub const NARROW_OOP_MODE: &str = "jdk.types.NarrowOopMode";
}

/// The `jdk.jfr` annotation types.
pub mod annotation {
    /// `@Label`.
    pub const LABEL: &str = "jdk.jfr.Label";
    /// `@Description`.
    pub const DESCRIPTION: &str = "jdk.jfr.Description";
    /// `@Category`.
    pub const CATEGORY: &str = "jdk.jfr.Category";
    /// `@Experimental`.
    pub const EXPERIMENTAL: &str = "jdk.jfr.Experimental";
    /// `@Name`.
    pub const NAME: &str = "jdk.jfr.Name";
    /// `@ContentType`: marks the unit annotations.
    pub const CONTENT_TYPE: &str = "jdk.jfr.ContentType";
    /// `@Timestamp`: a point in time, with a [`super::unit`] value.
    pub const TIMESTAMP: &str = "jdk.jfr.Timestamp";
    /// `@Timespan`: a duration, with a [`super::unit`] value.
    pub const TIMESPAN: &str = "jdk.jfr.Timespan";
    /// `@DataAmount`: bytes or bits.
    pub const DATA_AMOUNT: &str = "jdk.jfr.DataAmount";
    /// `@Unsigned`.
    pub const UNSIGNED: &str = "jdk.jfr.Unsigned";
    /// `@Percentage`.
    pub const PERCENTAGE: &str = "jdk.jfr.Percentage";
    /// `@Frequency`.
    pub const FREQUENCY: &str = "jdk.jfr.Frequency";
    /// `@MemoryAddress`.
    pub const MEMORY_ADDRESS: &str = "jdk.jfr.MemoryAddress";
    /// `@BooleanFlag`.
    pub const BOOLEAN_FLAG: &str = "jdk.jfr.BooleanFlag";
    /// `@Relational`.
    pub const RELATIONAL: &str = "jdk.jfr.Relational";
    /// `@StackTrace`: whether an event type records stack traces.
    pub const STACK_TRACE: &str = "jdk.jfr.StackTrace";
    /// `@Enabled`.
    pub const ENABLED: &str = "jdk.jfr.Enabled";
}

/// The values of the unit annotations ([`annotation::TIMESTAMP`],
/// [`annotation::TIMESPAN`], [`annotation::DATA_AMOUNT`]).
pub mod unit {
    /// Ticks of the chunk's clock (timestamps and timespans).
    pub const TICKS: &str = "TICKS";
    /// Milliseconds since the Unix epoch (timestamps).
    pub const MILLISECONDS_SINCE_EPOCH: &str = "MILLISECONDS_SINCE_EPOCH";
    /// Nanoseconds (timespans).
    pub const NANOSECONDS: &str = "NANOSECONDS";
    /// Microseconds (timespans).
    pub const MICROSECONDS: &str = "MICROSECONDS";
    /// Milliseconds (timespans).
    pub const MILLISECONDS: &str = "MILLISECONDS";
    /// Seconds (timespans).
    pub const SECONDS: &str = "SECONDS";
    /// Bytes (data amounts).
    pub const BYTES: &str = "BYTES";
    /// Bits (data amounts).
    pub const BITS: &str = "BITS";
}

/// Event settings: their classes and the names event types declare them by.
pub mod setting {
    /// `enabled`.
    pub const ENABLED: &str = "enabled";
    /// `stackTrace`.
    pub const STACK_TRACE: &str = "stackTrace";
    /// `threshold`.
    pub const THRESHOLD: &str = "threshold";
    /// `period`.
    pub const PERIOD: &str = "period";
    /// `throttle`.
    pub const THROTTLE: &str = "throttle";
    /// `cutoff`.
    pub const CUTOFF: &str = "cutoff";
    /// heapsampler's setting of `jdk.ObjectAllocationSample`: the mean
    /// sampling interval, as `N bytes`. With the throttle off, it is the
    /// interval every sample's weight was computed at.
    pub const SAMPLING_INTERVAL: &str = "interval";
    /// The value of a [`THROTTLE`] that does not throttle.
    pub const THROTTLE_OFF: &str = "off";

    /// The class of [`ENABLED`].
    pub const ENABLED_CLASS: &str = "jdk.settings.Enabled";
    /// The class of [`STACK_TRACE`].
    pub const STACK_TRACE_CLASS: &str = "jdk.settings.StackTrace";
    /// The class of [`THRESHOLD`].
    pub const THRESHOLD_CLASS: &str = "jdk.settings.Threshold";
    /// The class of [`PERIOD`].
    pub const PERIOD_CLASS: &str = "jdk.settings.Period";
    /// The class of [`THROTTLE`].
    pub const THROTTLE_CLASS: &str = "jdk.settings.Throttle";
    /// The class of [`CUTOFF`].
    pub const CUTOFF_CLASS: &str = "jdk.settings.Cutoff";
}

/// Event type names: the JDK's that we write or read, and our own.
pub mod event {
    /// The JDK's allocation sample: what Mission Control's allocation
    /// pages and rules read, and what we write once per sample.
    pub const OBJECT_ALLOCATION_SAMPLE: &str = "jdk.ObjectAllocationSample";
    /// The JDK's event for an allocation that took a new TLAB (thread-local
    /// allocation buffer); async-profiler writes its allocation samples as it.
    pub const OBJECT_ALLOCATION_IN_NEW_TLAB: &str = "jdk.ObjectAllocationInNewTLAB";
    /// The JDK's event for an allocation outside any TLAB (a large object).
    pub const OBJECT_ALLOCATION_OUTSIDE_TLAB: &str = "jdk.ObjectAllocationOutsideTLAB";
    /// Which recording this is.
    pub const ACTIVE_RECORDING: &str = "jdk.ActiveRecording";
    /// One setting of one event type.
    pub const ACTIVE_SETTING: &str = "jdk.ActiveSetting";
    /// The JDK's CPU sample, whose thread is `sampledThread`.
    pub const EXECUTION_SAMPLE: &str = "jdk.ExecutionSample";
    /// The JDK's leak event: an object sampled long ago and still live.
    pub const OLD_OBJECT_SAMPLE: &str = "jdk.OldObjectSample";
    /// The JDK's heap usage before and after each collection.
    pub const GC_HEAP_SUMMARY: &str = "jdk.GCHeapSummary";
    /// The JDK's garbage collection event (ours is
    /// [`GARBAGE_COLLECTION`]).
    pub const JDK_GARBAGE_COLLECTION: &str = "jdk.GarbageCollection";
    /// The JVM's name, version, arguments and start time.
    pub const JVM_INFORMATION: &str = "jdk.JVMInformation";
    /// Classes loaded and unloaded so far.
    pub const CLASS_LOADING_STATISTICS: &str = "jdk.ClassLoadingStatistics";
    /// The JDK's event of a young collection (beside its
    /// [`JDK_GARBAGE_COLLECTION`]).
    pub const YOUNG_GARBAGE_COLLECTION: &str = "jdk.YoungGarbageCollection";
    /// The JDK's event of an old (full) collection.
    pub const OLD_GARBAGE_COLLECTION: &str = "jdk.OldGarbageCollection";
    /// The JDK's event of a stop-the-world GC pause.
    pub const GC_PHASE_PAUSE: &str = "jdk.GCPhasePause";
    /// The JDK's event of a pause's first-level phases.
    pub const GC_PHASE_PAUSE_LEVEL_1: &str = "jdk.GCPhasePauseLevel1";
    /// The JDK's metaspace sizes before and after each collection.
    pub const METASPACE_SUMMARY: &str = "jdk.MetaspaceSummary";
    /// The JDK's description of the collector's configuration.
    pub const GC_CONFIGURATION: &str = "jdk.GCConfiguration";
    /// The JDK's description of the heap's configuration.
    pub const GC_HEAP_CONFIGURATION: &str = "jdk.GCHeapConfiguration";
    /// Ours: a sampled object's life, freed or still live at the end.
    pub const OBJECT_LIFETIME: &str = "heapsampler.ObjectLifetime";
    /// Ours: a garbage collection the agent saw.
    pub const GARBAGE_COLLECTION: &str = "heapsampler.GarbageCollection";
    /// Ours: the agent's counters.
    pub const AGENT_STATISTICS: &str = "heapsampler.AgentStatistics";
    /// Ours: the Java heap was exhausted (an `OutOfMemoryError`).
    pub const HEAP_EXHAUSTED: &str = "heapsampler.HeapExhausted";
    /// Ours: how the live objects written at a recording's end (or in a
    /// snapshot) were found: right after a collection, or not.
    pub const LIVE_SET: &str = "heapsampler.LiveSet";
    /// Ours: a site whose live bytes the agent, watching while the program
    /// ran, found growing significantly.
    pub const LEAK_SUSPECT: &str = "heapsampler.LeakSuspect";
    /// Ours: the heap after a collection higher than ever before, past the
    /// share of its maximum the agent was asked to watch for.
    pub const HEAP_PEAK: &str = "heapsampler.HeapPeak";
    /// Ours: one site of the live set at a [`HEAP_PEAK`].
    pub const PEAK_LIVE_SITE: &str = "heapsampler.PeakLiveSite";
    /// Ours: one of the sites of the most live bytes, with its growth, each
    /// time the agent's watch judged.
    pub const WATCHED_SITE: &str = "heapsampler.WatchedSite";
    /// Ours: a `jdk.OldObjectSample` of an earlier chunk's end, renamed
    /// once a newer chunk end's is in the file, so that tools reading every
    /// chunk as one count each live object once.
    pub const OLD_OBJECT_SNAPSHOT: &str = "heapsampler.OldObjectSnapshot";

    // What the JVM runs on, as the JDK writes it.
    /// The processors: type, sockets, cores, hardware threads.
    pub const CPU_INFORMATION: &str = "jdk.CPUInformation";
    /// The JVM's and the machine's recent CPU usage.
    pub const CPU_LOAD: &str = "jdk.CPULoad";
    /// The machine's physical memory, total and used.
    pub const PHYSICAL_MEMORY: &str = "jdk.PhysicalMemory";
    /// A boolean VM flag.
    pub const BOOLEAN_FLAG: &str = "jdk.BooleanFlag";
    /// An `int` VM flag.
    pub const INT_FLAG: &str = "jdk.IntFlag";
    /// An unsigned 64-bit VM flag (`size_t`, `uint64_t`).
    pub const UNSIGNED_LONG_FLAG: &str = "jdk.UnsignedLongFlag";
    /// A string VM flag.
    pub const STRING_FLAG: &str = "jdk.StringFlag";
    /// A system property as the JVM started with it.
    pub const INITIAL_SYSTEM_PROPERTY: &str = "jdk.InitialSystemProperty";
    /// An environment variable of the process at the JVM's start.
    pub const INITIAL_ENVIRONMENT_VARIABLE: &str = "jdk.InitialEnvironmentVariable";
    /// The JVM shutting down, and why.
    pub const SHUTDOWN: &str = "jdk.Shutdown";
    /// The bytes a Java thread allocated since it started, as the JVM
    /// counts them (`ThreadMXBean.getThreadAllocatedBytes`).
    pub const THREAD_ALLOCATION_STATISTICS: &str = "jdk.ThreadAllocationStatistics";
}

/// Field names, of events and of the constant-pool types.
pub mod field {
    // Every event's standard fields, in this order.
    /// When the event started, in ticks: every event's first field.
    pub const START_TIME: &str = "startTime";
    /// How long it took, in ticks: second when present.
    pub const DURATION: &str = "duration";
    /// The thread the event happened in.
    pub const EVENT_THREAD: &str = "eventThread";
    /// Where the event happened.
    pub const STACK_TRACE: &str = "stackTrace";
    /// The thread a sampling event (`jdk.ExecutionSample`) sampled.
    pub const SAMPLED_THREAD: &str = "sampledThread";

    // Allocation samples and lifetimes.
    /// The allocated object's class.
    pub const OBJECT_CLASS: &str = "objectClass";
    /// The bytes a sample stands for.
    pub const WEIGHT: &str = "weight";
    /// The sampled object's size in bytes.
    pub const OBJECT_SIZE: &str = "objectSize";
    /// The allocated object's size in bytes (the TLAB events).
    pub const ALLOCATION_SIZE: &str = "allocationSize";
    /// The size in bytes of the new TLAB an allocation took.
    pub const TLAB_SIZE: &str = "tlabSize";
    /// Still reachable when the recording ended.
    pub const LIVE: &str = "live";
    /// Collections the object is known to have outlived.
    pub const GCS_SURVIVED: &str = "gcsSurvived";
    /// The collection after which the object was found dead.
    pub const FREED_BY_GC_ID: &str = "freedByGcId";
    /// Whether liveness was tracked.
    pub const TRACKED: &str = "tracked";
    /// The probability with which a sample's liveness was tracked.
    pub const TRACKING_PROBABILITY: &str = "trackingProbability";
    /// A collection's number.
    pub const GC_ID: &str = "gcId";

    // The agent's statistics.
    /// Samples the JVM handed the agent.
    pub const SAMPLES: &str = "samples";
    /// Events written.
    pub const EVENTS_WRITTEN: &str = "eventsWritten";
    /// Times an allocating thread waited for room in the ring.
    pub const BACK_PRESSURE_WAITS: &str = "backPressureWaits";
    /// Time allocating threads spent waiting for room in the ring.
    pub const BACK_PRESSURE_TIME: &str = "backPressureTime";
    /// Objects tracked for liveness.
    pub const TRACKED_OBJECTS: &str = "trackedObjects";
    /// Bytes written.
    pub const BYTES_WRITTEN: &str = "bytesWritten";
    /// Samples lost: always 0.
    pub const LOST_SAMPLES: &str = "lostSamples";
    /// Samples whose liveness is unknown.
    pub const UNTRACKED_OBJECTS: &str = "untrackedObjects";
    /// Samples drawn for liveness tracking.
    pub const DRAWN_SAMPLES: &str = "drawnSamples";
    /// Samples liveness covers that the draw left untracked.
    pub const UNDRAWN_SAMPLES: &str = "undrawnSamples";
    /// Samples past the cap on those tracked since a major collection.
    pub const CAPPED_SAMPLES: &str = "cappedSamples";
    /// The most old-object events a chunk carries.
    pub const OLD_OBJECT_CAP: &str = "oldObjectCap";
    /// Live objects the cap left out of old-object events.
    pub const OLD_OBJECTS_LEFT_OUT: &str = "oldObjectsLeftOut";
    /// Values held in the recording's constant pools.
    pub const CONSTANTS_HELD: &str = "constantsHeld";
    /// Stack traces held in the recording's pool.
    pub const STACK_TRACES_HELD: &str = "stackTracesHeld";
    /// Threads held in the recording's pool.
    pub const THREADS_HELD: &str = "threadsHeld";

    // `heapsampler.HeapExhausted` and `heapsampler.LiveSet`.
    /// What the JVM said ran out: `Java heap space`.
    pub const MESSAGE: &str = "message";
    /// Old-object events written with an event.
    pub const OLD_OBJECTS: &str = "oldObjects";
    /// Whether a collection was forced right before the live set was taken.
    pub const COLLECTED: &str = "collected";
    /// When the last collection before the live set ended.
    pub const LAST_COLLECTION: &str = "lastCollection";
    /// Collections seen.
    pub const COLLECTIONS: &str = "collections";
    /// Objects found live.
    pub const LIVE_OBJECTS: &str = "liveObjects";

    // `heapsampler.LeakSuspect`, `heapsampler.HeapPeak`,
    // `heapsampler.PeakLiveSite` and `heapsampler.WatchedSite` (the heap's use after a collection is
    // [`HEAP_USED`], the collection [`GC_ID`]).
    /// Whether a site stands for every site beyond those followed one by one.
    pub const OTHER_SITES: &str = "otherSites";
    /// How fast live bytes grow, bytes per second: the estimate.
    pub const GROWTH_RATE: &str = "growthRate";
    /// The low end of the growth rate's 95% interval.
    pub const GROWTH_RATE_LOW: &str = "growthRateLow";
    /// The high end of the growth rate's 95% interval.
    pub const GROWTH_RATE_HIGH: &str = "growthRateHigh";
    /// The span of time whose growth was judged.
    pub const WINDOW: &str = "window";
    /// Estimated live bytes.
    pub const LIVE_BYTES: &str = "liveBytes";
    /// The low end of the live bytes' 95% interval.
    pub const LIVE_BYTES_LOW: &str = "liveBytesLow";
    /// The high end of the live bytes' 95% interval.
    pub const LIVE_BYTES_HIGH: &str = "liveBytesHigh";
    /// Tracked samples live.
    pub const LIVE_SAMPLES: &str = "liveSamples";
    /// The heap's maximum size.
    pub const HEAP_MAX: &str = "heapMax";
    /// The time until the heap's maximum at a growth rate.
    pub const TIME_TO_HEAP_MAX: &str = "timeToHeapMax";
    /// The heap's use as a share of its maximum.
    pub const HEAP_SHARE: &str = "heapShare";
    /// The share of the maximum a heap peak must pass to be written.
    pub const PEAK_THRESHOLD: &str = "peakThreshold";
    /// Sites written with a heap peak.
    pub const SITES: &str = "sites";

    // `jdk.ActiveRecording` and `jdk.ActiveSetting`.
    /// A recording's id, or the id of the event type a setting is of.
    pub const ID: &str = "id";
    /// Where the recording goes.
    pub const DESTINATION: &str = "destination";
    /// How long data is kept.
    pub const MAX_AGE: &str = "maxAge";
    /// How often the recording is flushed.
    pub const FLUSH_INTERVAL: &str = "flushInterval";
    /// How much data is kept.
    pub const MAX_SIZE: &str = "maxSize";
    /// When the recording started.
    pub const RECORDING_START: &str = "recordingStart";
    /// How long the recording runs.
    pub const RECORDING_DURATION: &str = "recordingDuration";
    /// A setting's value.
    pub const VALUE: &str = "value";

    // The constant-pool types' fields.
    /// A name: of a thread group, a class (a symbol), a method, a setting...
    pub const NAME: &str = "name";
    /// A thread's name in the operating system.
    pub const OS_NAME: &str = "osName";
    /// A thread's id in the operating system.
    pub const OS_THREAD_ID: &str = "osThreadId";
    /// `Thread.getName()`.
    pub const JAVA_NAME: &str = "javaName";
    /// `Thread.getId()`.
    pub const JAVA_THREAD_ID: &str = "javaThreadId";
    /// A thread's group.
    pub const GROUP: &str = "group";
    /// A thread group's parent.
    pub const PARENT: &str = "parent";
    /// A class's or module's loader.
    pub const CLASS_LOADER: &str = "classLoader";
    /// A class's package.
    pub const PACKAGE: &str = "package";
    /// Access modifiers.
    pub const MODIFIERS: &str = "modifiers";
    /// Whether a class or method is hidden.
    pub const HIDDEN: &str = "hidden";
    /// A class loader's class, a method's class, or a frame's type.
    pub const TYPE: &str = "type";
    /// A package's module.
    pub const MODULE: &str = "module";
    /// Whether a package is exported.
    pub const EXPORTED: &str = "exported";
    /// A module's version.
    pub const VERSION: &str = "version";
    /// A module's location.
    pub const LOCATION: &str = "location";
    /// A method's descriptor: `(I)V`.
    pub const DESCRIPTOR: &str = "descriptor";
    /// Whether a stack trace was cut at the depth limit.
    pub const TRUNCATED: &str = "truncated";
    /// A stack trace's frames, top first.
    pub const FRAMES: &str = "frames";
    /// A frame's method.
    pub const METHOD: &str = "method";
    /// A frame's line (-1: unknown).
    pub const LINE_NUMBER: &str = "lineNumber";
    /// A frame's bytecode index.
    pub const BYTECODE_INDEX: &str = "bytecodeIndex";
    /// A frame type's text.
    pub const DESCRIPTION: &str = "description";
    /// A symbol's text.
    pub const STRING: &str = "string";

    // `jdk.OldObjectSample` and its value types.
    /// When a leak event's object was allocated.
    pub const ALLOCATION_TIME: &str = "allocationTime";
    /// How long the object has lived.
    pub const OBJECT_AGE: &str = "objectAge";
    /// Heap used after the last collection before the event.
    pub const LAST_KNOWN_HEAP_USAGE: &str = "lastKnownHeapUsage";
    /// The old object, or the object holding a reference.
    pub const OBJECT: &str = "object";
    /// An array's length, or `i32::MIN` for an object that is no array.
    pub const ARRAY_ELEMENTS: &str = "arrayElements";
    /// The root of the object's reference chain.
    pub const ROOT: &str = "root";
    /// An object's address (0: unknown).
    pub const ADDRESS: &str = "address";
    /// The reference that holds an object.
    pub const REFERRER: &str = "referrer";
    /// The array element a reference is.
    pub const ARRAY: &str = "array";
    /// The field a reference is.
    pub const FIELD: &str = "field";
    /// How many links of a chain a reference stands for.
    pub const SKIP: &str = "skip";
    /// An array's length.
    pub const SIZE: &str = "size";
    /// An element's index.
    pub const INDEX: &str = "index";
    /// The subsystem a root is of.
    pub const SYSTEM: &str = "system";

    // The GC events.
    /// Before or after a collection.
    pub const WHEN: &str = "when";
    /// The heap's reserved and committed memory.
    pub const HEAP_SPACE: &str = "heapSpace";
    /// Bytes of the heap in use.
    pub const HEAP_USED: &str = "heapUsed";
    /// A virtual space's first address.
    pub const START: &str = "start";
    /// The end of a virtual space's committed part.
    pub const COMMITTED_END: &str = "committedEnd";
    /// Bytes committed.
    pub const COMMITTED_SIZE: &str = "committedSize";
    /// The end of a virtual space's reserved part.
    pub const RESERVED_END: &str = "reservedEnd";
    /// Bytes reserved.
    pub const RESERVED_SIZE: &str = "reservedSize";
    /// Why a collection ran.
    pub const CAUSE: &str = "cause";
    /// A collection's pauses, summed.
    pub const SUM_OF_PAUSES: &str = "sumOfPauses";
    /// A collection's longest pause.
    pub const LONGEST_PAUSE: &str = "longestPause";
    /// The age at which a young collection promotes objects.
    pub const TENURING_THRESHOLD: &str = "tenuringThreshold";
    /// The metaspace size that triggers a collection.
    pub const GC_THRESHOLD: &str = "gcThreshold";
    /// The whole metaspace.
    pub const METASPACE: &str = "metaspace";
    /// The metaspace's non-class part.
    pub const DATA_SPACE: &str = "dataSpace";
    /// The compressed class space.
    pub const CLASS_SPACE: &str = "classSpace";
    /// Bytes committed.
    pub const COMMITTED: &str = "committed";
    /// Bytes in use.
    pub const USED: &str = "used";
    /// Bytes reserved.
    pub const RESERVED: &str = "reserved";
    /// The young generation's collector.
    pub const YOUNG_COLLECTOR: &str = "youngCollector";
    /// The old generation's collector.
    pub const OLD_COLLECTOR: &str = "oldCollector";
    /// `ParallelGCThreads`.
    pub const PARALLEL_GC_THREADS: &str = "parallelGCThreads";
    /// `ConcGCThreads`.
    pub const CONCURRENT_GC_THREADS: &str = "concurrentGCThreads";
    /// `UseDynamicNumberOfGCThreads`.
    pub const USES_DYNAMIC_GC_THREADS: &str = "usesDynamicGCThreads";
    /// `ExplicitGCInvokesConcurrent`.
    pub const IS_EXPLICIT_GC_CONCURRENT: &str = "isExplicitGCConcurrent";
    /// `DisableExplicitGC`.
    pub const IS_EXPLICIT_GC_DISABLED: &str = "isExplicitGCDisabled";
    /// `MaxGCPauseMillis`, when set.
    pub const PAUSE_TARGET: &str = "pauseTarget";
    /// `GCTimeRatio`.
    pub const GC_TIME_RATIO: &str = "gcTimeRatio";
    /// The heap's least size.
    pub const MIN_SIZE: &str = "minSize";
    /// The heap's initial size.
    pub const INITIAL_SIZE: &str = "initialSize";
    /// `UseCompressedOops`.
    pub const USES_COMPRESSED_OOPS: &str = "usesCompressedOops";
    /// How compressed object pointers are encoded.
    pub const COMPRESSED_OOPS_MODE: &str = "compressedOopsMode";
    /// `ObjectAlignmentInBytes`.
    pub const OBJECT_ALIGNMENT: &str = "objectAlignment";
    /// Bits of a heap reference.
    pub const HEAP_ADDRESS_BITS: &str = "heapAddressBits";
    /// A simple type's text (`jdk.types.NarrowOopMode`).
    pub const MODE: &str = "mode";

    // `jdk.JVMInformation` and `jdk.ClassLoadingStatistics`.
    /// The JVM's name.
    pub const JVM_NAME: &str = "jvmName";
    /// The JVM's version.
    pub const JVM_VERSION: &str = "jvmVersion";
    /// The JVM's command-line arguments.
    pub const JVM_ARGUMENTS: &str = "jvmArguments";
    /// Arguments from a settings file.
    pub const JVM_FLAGS: &str = "jvmFlags";
    /// The application's arguments: the main class and what follows.
    pub const JAVA_ARGUMENTS: &str = "javaArguments";
    /// When the JVM started.
    pub const JVM_START_TIME: &str = "jvmStartTime";
    /// The process id.
    pub const PID: &str = "pid";
    /// Classes loaded since the JVM started.
    pub const LOADED_CLASS_COUNT: &str = "loadedClassCount";
    /// Classes unloaded since the JVM started.
    pub const UNLOADED_CLASS_COUNT: &str = "unloadedClassCount";

    // The environment events (a flag's or property's name and value are
    // [`NAME`] and [`VALUE`], the CPU's description [`DESCRIPTION`]).
    /// The processor's type.
    pub const CPU: &str = "cpu";
    /// Processor sockets.
    pub const SOCKETS: &str = "sockets";
    /// Processor cores.
    pub const CORES: &str = "cores";
    /// Hardware threads.
    pub const HW_THREADS: &str = "hwThreads";
    /// The JVM's share of the CPUs in user mode.
    pub const JVM_USER: &str = "jvmUser";
    /// The JVM's share of the CPUs in the kernel.
    pub const JVM_SYSTEM: &str = "jvmSystem";
    /// The whole machine's share of the CPUs in use.
    pub const MACHINE_TOTAL: &str = "machineTotal";
    /// Physical memory in total.
    pub const TOTAL_SIZE: &str = "totalSize";
    /// Physical memory in use.
    pub const USED_SIZE: &str = "usedSize";
    /// Where a flag's value came from.
    pub const ORIGIN: &str = "origin";
    /// A property's or environment variable's key.
    pub const KEY: &str = "key";
    /// Why the JVM shut down.
    pub const REASON: &str = "reason";
    /// The thread an event is about, not the one that wrote it
    /// (`jdk.ThreadAllocationStatistics`).
    pub const THREAD: &str = "thread";
    /// Bytes a thread allocated since it started.
    pub const ALLOCATED: &str = "allocated";
}
