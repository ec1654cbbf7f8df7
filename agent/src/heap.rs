//! The heap's context around the samples, as the JDK's own recordings give
//! it, so that Mission Control's memory, GC and leak rules run on a
//! heapsampler recording: `jdk.GCHeapSummary` and `jdk.MetaspaceSummary`
//! before and after each collection, `jdk.GarbageCollection` with its
//! `jdk.YoungGarbageCollection` or `jdk.OldGarbageCollection`,
//! `jdk.GCPhasePause` for every stop-the-world pause, `jdk.JVMInformation`,
//! `jdk.GCConfiguration` and `jdk.GCHeapConfiguration` at the start of each
//! chunk, and `jdk.ClassLoadingStatistics` at every flush.
//!
//! The figures come from the JVM's management interface, asked through a
//! [`HeapVm`] on the writer thread only (JVMTI's GC callbacks may not call
//! JNI, and nothing of this runs in the allocation callback): every
//! collection from the collectors' notifications
//! (`GarbageCollectionNotificationInfo`: the collector, the cause as JFR
//! spells it, the collection's `GcInfo`), which a listener queues and the
//! writer drains when it polls (after the GC callbacks reported collections,
//! and at every flush); the JVM and its flags from the `RuntimeMXBean` and
//! `HotSpotDiagnosticMXBean`; the pauses from the GC callbacks
//! ([`HeapContext::pause`]).
//!
//! Collections are named as the JDK names them (`G1New`, `G1Full`,
//! `ParallelScavenge`, `ParallelOld`, `DefNew`, `SerialOld`, `Z`,
//! `ZGC Minor`, `ZGC Major`, `Shenandoah`), from the collector's
//! management name ([`collector_kind`]). A concurrent collector's
//! `... Pauses` notifications are not collections (the JDK's collection is
//! the cycle); G1's concurrent cycle (the JDK's `G1Old`) is not written:
//! JDK 17 notifies nothing of it, and 21+ notifies each of its pauses (as
//! `G1 Concurrent GC`, cause `No GC`), not the cycle and its cause.
//!
//! A pause belongs to the collection whose `GcInfo` times it holds (a
//! stop-the-world collection's: the JVM times the collection inside its
//! pause) or that holds it (every pause within a concurrent cycle), within
//! [`PAUSE_MATCH`] for the two clocks. The
//! collection's `sumOfPauses` and `longestPause` are its pauses' (without
//! one, a stop-the-world collection's own duration, a cycle's 0). A pause
//! no collection claims within [`PAUSE_WAIT`] (G1's Remark and Cleanup) has
//! a `gcId` of its own.
//!
//! What the management interface cannot give:
//! - **Sub-millisecond collection times.** `GcInfo` times are whole
//!   milliseconds since the JVM started: a collection's events are placed
//!   and sized to the millisecond (its pauses have the GC callbacks' exact
//!   times).
//! - **The tenuring threshold** of a young collection: written as 0.
//! - **Metaspace reservations and the collection threshold**: written as
//!   0, except the class space's reservation (its pool's maximum).
//! - **Collections before the listener was added** (the writer thread
//!   starts while the application runs): only each collector's last, from
//!   its last `GcInfo`, is written, without a cause and without its
//!   metaspace (taken before the agent loaded the management interface's
//!   classes, some hundreds of KiB that Mission Control would read as the
//!   application's metaspace growing); the others, and any refused by a
//!   full queue, are counted by the collectors' ids
//!   ([`HeapContext::collections_missed`]).
//!
//! `gcId` is one sequence across collectors (1, 2, ... in the order the
//! notifications are drained, by their start within one drain), the same
//! on a collection's summaries, young or old event and pauses (Mission
//! Control joins them on it). It is its own sequence: the collections the
//! management interface reports and those JVMTI reports
//! (`heapsampler.GarbageCollection`, whose ids `ObjectLifetime.freedByGcId`
//! names) need not be the same ones.

use std::ffi::CStr;
use std::time::Duration;

use jfr_writer::events::{
    self, AFTER_GC, BEFORE_GC, ClassLoadingStatistics, GcConfiguration, GcHeapConfiguration,
    GcHeapSummary, GcPhasePause, GcTypes, JdkGarbageCollection, JvmInformation, MetaspaceSizes,
    MetaspaceSummary, OldGarbageCollection, VirtualSpace, YoungGarbageCollection,
};
use jfr_writer::{EventType, Recording, Sink, TICKS_PER_SECOND, Ticks};

use crate::environment::VmFlag;

/// Which JVM this is and how it was started: the `RuntimeMXBean`'s answers
/// and a few system properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JvmInfo {
    /// `OpenJDK 64-Bit Server VM` (`getVmName()`).
    pub vm_name: String,
    /// `17.0.15+6-Debian-1deb12u1` (`getVmVersion()`).
    pub vm_version: String,
    /// The Java runtime's version (`java.runtime.version`), if known.
    pub runtime_version: Option<String>,
    /// The operating system's name (`os.name`: `Linux`), if known.
    pub os_name: Option<String>,
    /// The architecture (`os.arch`: `amd64`), if known.
    pub os_arch: Option<String>,
    /// The JVM's arguments (`getInputArguments()`), the agent's among them.
    pub arguments: Vec<String>,
    /// The main class or jar and its arguments (`sun.java.command`).
    pub java_command: Option<String>,
    /// How compressed references are encoded (`java.vm.compressedOopsMode`:
    /// `Zero based`, `32-bit`), the JDK's `NarrowOopMode` text; `None`
    /// without compressed references.
    pub compressed_oops_mode: Option<String>,
    /// When the JVM started, in milliseconds since the Unix epoch
    /// (`getStartTime()`): the origin of [`GcInfo`]'s times.
    pub start_millis: i64,
    /// The process id.
    pub pid: i64,
}

impl JvmInfo {
    /// The JVM's version as HotSpot writes it in `jdk.JVMInformation`
    /// (`OpenJDK 64-Bit Server VM (17.0.15+6) for linux-amd64 JRE
    /// (17.0.15+6), built on ...`), up to the build details, which the
    /// management interface does not give. Mission Control finds the Java
    /// version in it after `JRE (`, and some rules need that.
    pub fn version_line(&self) -> String {
        let mut line = format!("{} ({})", self.vm_name, self.vm_version);
        if let (Some(os), Some(arch)) = (&self.os_name, &self.os_arch) {
            let os = os.to_lowercase().replace(' ', "");
            line.push_str(&format!(" for {os}-{arch}"));
        }
        if let Some(runtime) = &self.runtime_version {
            line.push_str(&format!(" JRE ({runtime})"));
        }
        line
    }
}

/// The JVM's garbage collectors, as its management interface names them,
/// and the heap's size limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collectors {
    /// Each collector's name (`G1 Young Generation`, `G1 Old Generation`),
    /// in the order [`HeapVm::last_collection`] indexes them.
    pub names: Vec<String>,
    /// The most bytes the heap may grow to (`MemoryMXBean`'s heap
    /// `getMax()`, the JVM's `-Xmx`); 0 if undefined.
    pub heap_reserved: u64,
}

/// The heap pools' bytes in use and committed, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapUsage {
    /// Bytes in use.
    pub used: u64,
    /// Bytes committed.
    pub committed: u64,
}

/// One memory pool's usage (`MemoryUsage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpaceUsage {
    /// Bytes in use.
    pub used: u64,
    /// Bytes committed.
    pub committed: u64,
    /// The most bytes it may grow to, if defined.
    pub max: Option<u64>,
}

/// The metaspace's pools at a collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Metaspace {
    /// The `Metaspace` pool: the whole metaspace, class space included.
    pub all: SpaceUsage,
    /// The `Compressed Class Space` pool, if the JVM has one.
    pub class_space: Option<SpaceUsage>,
}

/// A collection's figures, from its `com.sun.management.GcInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcInfo {
    /// `GcInfo.getId()`: the collector's count of collections, this one
    /// included.
    pub id: u64,
    /// When it started, in milliseconds since the JVM started.
    pub start_millis: i64,
    /// When it ended, in milliseconds since the JVM started.
    pub end_millis: i64,
    /// The heap before it: `getMemoryUsageBeforeGc()` summed over the
    /// heap's pools (`MemoryType.HEAP`).
    pub before: HeapUsage,
    /// The heap after it: `getMemoryUsageAfterGc()`, likewise.
    pub after: HeapUsage,
    /// The metaspace before it, if its pools are in the map.
    pub metaspace_before: Option<Metaspace>,
    /// The metaspace after it.
    pub metaspace_after: Option<Metaspace>,
}

/// A collection the JVM notified (`GarbageCollectionNotificationInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifiedCollection {
    /// The collector's management name (`getGcName()`: `PS Scavenge`).
    pub collector: String,
    /// Why it ran (`getGcCause()`: `System.gc()`), as JFR spells it;
    /// `None` for a collection known only from its collector's last
    /// `GcInfo`, from before the notifications began.
    pub cause: Option<String>,
    /// What it did (`getGcAction()`: `end of minor GC`, a Shenandoah
    /// pause's `Init Mark`); `None` where not known.
    pub action: Option<String>,
    /// Its figures (`getGcInfo()`).
    pub info: GcInfo,
}

/// Classes loaded and unloaded since the JVM started (the
/// `ClassLoadingMXBean`'s `getTotalLoadedClassCount()` and
/// `getUnloadedClassCount()`, the JDK's own figures for the event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassLoading {
    /// Classes loaded.
    pub loaded: u64,
    /// Classes unloaded.
    pub unloaded: u64,
}

/// What the heap's context asks of the JVM's management interface, on the
/// writer thread. Each answer is `None` (or empty) without one: the JVM
/// then has no heap events.
pub trait HeapVm {
    /// Which JVM this is and how it was started. Asked once, at the start.
    fn jvm_info(&mut self) -> Option<JvmInfo> {
        None
    }
    /// The JVM's garbage collectors. Asked once, at the start.
    fn collectors(&mut self) -> Option<Collectors> {
        None
    }
    /// The last collection of collector `collector` (an index into
    /// [`HeapVm::collectors`]), `None` if none or unknown. Asked once, at
    /// the start, after the notifications began.
    fn last_collection(&mut self, collector: usize) -> Option<GcInfo> {
        let _ = collector;
        None
    }
    /// The collections notified since the last call, in the order notified.
    /// Asked at every poll: must be cheap when there are none.
    fn notified_collections(&mut self) -> Vec<NotifiedCollection> {
        Vec::new()
    }
    /// A HotSpot flag (`MaxHeapSize`), `None` if unknown. Asked at the
    /// start only.
    fn vm_flag(&mut self, name: &CStr) -> Option<VmFlag> {
        let _ = name;
        None
    }
    /// Classes loaded and unloaded so far, `None` if unknown.
    fn class_loading(&mut self) -> Option<ClassLoading> {
        None
    }
}

/// What a collector's collections are, by its management name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectorKind {
    /// Young collections, one pause each: `jdk.YoungGarbageCollection`.
    Young(&'static str),
    /// Old (full) collections, one pause each: `jdk.OldGarbageCollection`.
    Old(&'static str),
    /// Concurrent cycles, whose pauses fall within them; neither young nor
    /// old event (as the JDK writes for ZGC and Shenandoah).
    Cycle(&'static str),
    /// Pauses, not collections: a concurrent collector's `... Pauses`, and
    /// G1's concurrent cycle's Remark and Cleanup (`G1 Concurrent GC`).
    Pauses,
    /// A collector this module does not know: written under its own name,
    /// as a collection of one pause.
    Unknown,
}

/// The JDK's name for generational ZGC's major collections.
pub const ZGC_MAJOR: &str = "ZGC Major";
/// The JDK's name for the collections of ZGC before generations (JDK 17).
const ZGC_NOT_GENERATIONAL: &str = "Z";
/// The JDK's name for Shenandoah's collections.
const SHENANDOAH: &str = "Shenandoah";
/// The JDK's name for Shenandoah's pauses, each notified with what it did
/// (`Init Mark`, `Final Mark`, ...).
const SHENANDOAH_PAUSES: &str = "Shenandoah Pauses";
/// The cause of Shenandoah's cycles that its heuristics start.
const SHENANDOAH_CONCURRENT: &str = "Concurrent GC";
/// G1's concurrent cycle's pauses (JDK 21 on): Remark, Cleanup.
const G1_CONCURRENT: &str = "G1 Concurrent GC";

/// What the collector of management name `collector` collects, and the
/// JDK's name for its collections (research: the same JVM's beans and JFR,
/// JDK 17 and 25).
pub fn collector_kind(collector: &str) -> CollectorKind {
    use CollectorKind::*;
    match collector {
        "G1 Young Generation" => Young("G1New"),
        "G1 Old Generation" => Old("G1Full"),
        "PS Scavenge" => Young("ParallelScavenge"),
        "PS MarkSweep" => Old("ParallelOld"),
        "Copy" => Young("DefNew"),
        "MarkSweepCompact" => Old("SerialOld"),
        "ZGC Cycles" => Cycle(ZGC_NOT_GENERATIONAL),
        "ZGC Minor Cycles" => Cycle("ZGC Minor"),
        "ZGC Major Cycles" => Cycle(ZGC_MAJOR),
        "Shenandoah Cycles" => Cycle(SHENANDOAH),
        G1_CONCURRENT => Pauses,
        name if name.ends_with(" Pauses") => Pauses,
        name if name.ends_with(" Cycles") => Cycle(""),
        _ => Unknown,
    }
}

/// Whether the collector of management name `collector` is Shenandoah's
/// cycles.
fn collection_kind_is_shenandoah(collector: &str) -> bool {
    collector_kind(collector) == CollectorKind::Cycle(SHENANDOAH)
}

/// `jdk.GCConfiguration`'s collectors for a JVM with these management
/// collectors, as the JDK names them; `None` if not known.
fn configured_collectors(names: &[String]) -> Option<(&'static str, &'static str)> {
    let has = |name: &str| names.iter().any(|n| n == name);
    Some(if has("G1 Young Generation") {
        ("G1New", "G1Old")
    } else if has("PS Scavenge") {
        ("ParallelScavenge", "ParallelOld")
    } else if has("Copy") {
        ("DefNew", "SerialOld")
    } else if has("ZGC Minor Cycles") {
        ("ZGC Minor", ZGC_MAJOR)
    } else if has("ZGC Cycles") {
        ("N/A", "Z")
    } else if has("Shenandoah Cycles") {
        ("N/A", "Shenandoah")
    } else {
        return None;
    })
}

/// How far a collection's `GcInfo` times (whole milliseconds since the
/// JVM's start, on another clock than the recording's) may fall outside a
/// stop-the-world pause, or a pause outside a concurrent cycle's times, for
/// the pause still to be the collection's.
pub const PAUSE_MATCH: Duration = Duration::from_millis(3);

/// How long a pause waits for the notification of its collection: longer
/// than a concurrent cycle, whose notification comes at its end.
pub const PAUSE_WAIT: Duration = Duration::from_secs(10);

/// The name the JDK gives the pause of a stop-the-world collection (G1's
/// young and full, Parallel's, Serial's), written for every pause: JVMTI
/// does not tell the others' (`Pause Mark Start`, `Pause Remark`) apart,
/// and Mission Control's rules do not read it.
pub const PAUSE_NAME: &str = "GC Pause";

/// A stop-the-world pause, from the GC callbacks, in recording ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    /// When it started.
    pub start: Ticks,
    /// When it ended.
    pub end: Ticks,
}

/// One collector as the notifications follow it.
#[derive(Debug, Clone)]
struct Collector {
    name: String,
    /// The `GcInfo` id of its collection written last; before any, of its
    /// last collection before the notifications began (0: none).
    written: u64,
}

/// The GC configuration, read once from the JVM's flags.
#[derive(Debug, Clone, Default)]
struct Configuration {
    collectors: Option<(&'static str, &'static str)>,
    parallel_gc_threads: i32,
    concurrent_gc_threads: i32,
    uses_dynamic_gc_threads: bool,
    explicit_gc_concurrent: bool,
    explicit_gc_disabled: bool,
    pause_target: i64,
    gc_time_ratio: i32,
    min_heap: i64,
    max_heap: i64,
    initial_heap: i64,
    compressed_oops: bool,
    object_alignment: i64,
    /// Whether Shenandoah runs generational (`ShenandoahGCMode`).
    shenandoah_generational: bool,
    /// Whether any flag was read: without, no configuration events.
    known: bool,
}

/// The event types of the heap's context.
#[derive(Debug)]
struct Types {
    gc: GcTypes,
    heap_summary: EventType,
    metaspace_summary: EventType,
    collection: EventType,
    young: EventType,
    old: EventType,
    pause: EventType,
    pause_level_1: EventType,
    configuration: EventType,
    heap_configuration: EventType,
    jvm_information: EventType,
    class_loading: EventType,
}

/// A collection that marks the whole heap, so that every object dead when
/// it began is found dead by its end (what a weak handle points to
/// included): a full collection, G1's marking (its end, JDK 21 on), a
/// cycle of a collector that is not generational, generational
/// Shenandoah's old marking (told by its notifications: from the end of the
/// one before, before which it began); generational ZGC's majors for the
/// cap on tracked samples. In recording ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeHeapCollection {
    /// When it began.
    pub start: i64,
    /// When it ended.
    pub end: i64,
}

/// How canaries tell the watch that a marking ended, where the collector's
/// notifications do not ([`crate::writer`]'s canaries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanaryKind {
    /// Weak from the start: the young collections keep it and age it with
    /// the samples, a major clears it once it is old (generational ZGC).
    Weak,
    /// Held strongly until it is surely old, then weakly: a marking clears
    /// it (G1 before JDK 21).
    TenuredThenWeak,
}

/// Generational Shenandoah's old markings, told from its notifications in
/// the order the JVM sends them (research: the JDK 25 source,
/// `ShenandoahGenerationalControlThread`, `ShenandoahOldGC`, and its
/// notifications in Temurin 25). It notifies every cycle alike
/// (`Shenandoah Cycles`, `end of GC cycle`), but each pause by what it did
/// (`Shenandoah Pauses`, before the cycle's own notification): a young or
/// global cycle begins with an `Init Mark`; an old marking, begun by a young
/// cycle (its bootstrap) and carried on in cycles of its own between young
/// ones, ends in a cycle whose one pause is its `Final Mark`, after which
/// its weak roots are processed: a weak handle to an old object found dead
/// is cleared there. Young cycles clear what is young only (an old object
/// counts as live there), so only the end of an old marking (or a global
/// cycle, or a full collection, which this does not tell) finds dead every
/// sample that was.
///
/// An old marking ended in the cycle of a `Final Mark` and no `Init Mark`;
/// it began after the one before it ended (the old generation bootstraps
/// its next marking after its mixed collections), so when it ends, every
/// sample allocated before the previous one ended is judged. A marking
/// cut short at its `Final Mark` (an allocation failure, an explicit
/// collection, in a window of a safepoint) would look ended: the end is
/// believed only once the next cycle is one the heuristics started (cause
/// `Concurrent GC`); any other cycle, a gap in either collector's ids, or
/// notifications joined half way forget what was seen, and two ends must
/// be seen again before the next judgment.
#[derive(Debug, Default)]
struct OldMarkings {
    /// Whether a cycle was notified since the notifications began (or since
    /// a gap): the pauses seen are then the current cycle's.
    synced: bool,
    /// The last ids of the pauses and of the cycles notified.
    pause_id: Option<u64>,
    cycle_id: Option<u64>,
    /// The current cycle's pauses so far: an `Init Mark`, a `Final Mark`.
    init_mark: bool,
    final_mark: bool,
    /// The end of the cycle that ended an old marking, not yet believed
    /// (recording ticks).
    ended: Option<i64>,
    /// The end of the last one believed.
    last: Option<i64>,
}

impl OldMarkings {
    /// Forgets what was seen: the next cycle begins anew.
    fn forget(&mut self) {
        self.synced = false;
        self.init_mark = false;
        self.final_mark = false;
        self.ended = None;
        self.last = None;
    }

    /// Whether `id` follows `last` (the first id seen follows nothing).
    fn follows(last: &mut Option<u64>, id: u64) -> bool {
        let follows = last.is_none_or(|last| id == last + 1);
        *last = Some(id);
        follows
    }

    /// A pause notified, with what it did, in the order notified.
    fn pause(&mut self, id: u64, action: Option<&str>) {
        if !Self::follows(&mut self.pause_id, id) {
            self.forget();
        }
        match action {
            Some("Init Mark") => self.init_mark = true,
            Some("Final Mark") => self.final_mark = true,
            _ => {}
        }
    }

    /// A cycle notified, in the order notified, ended at `end` (ticks): the
    /// old marking believed ended now, if the one before it was too, as a
    /// collection from the end of the one before (every sample allocated
    /// before then is judged) to its own end.
    fn cycle(&mut self, id: u64, cause: Option<&str>, end: i64) -> Option<WholeHeapCollection> {
        let follows = Self::follows(&mut self.cycle_id, id);
        let (synced, init_mark, final_mark) = (self.synced, self.init_mark, self.final_mark);
        self.init_mark = false;
        self.final_mark = false;
        self.synced = true;
        if !follows || !synced || cause != Some(SHENANDOAH_CONCURRENT) {
            let synced = follows;
            self.forget();
            self.synced = synced;
            return None;
        }
        let mut judged = None;
        if let Some(ended) = self.ended.take() {
            if let Some(last) = self.last {
                judged = Some(WholeHeapCollection {
                    start: last,
                    end: ended,
                });
            }
            self.last = Some(ended);
        }
        if final_mark && !init_mark {
            self.ended = Some(end);
        }
        judged
    }
}

/// The events of the heap's context and what is needed to write them: the
/// writer holds one ([`crate::writer::Writer`]).
#[derive(Debug)]
pub struct HeapContext {
    types: Types,
    started: bool,
    /// Kept to write `jdk.JVMInformation` again at the start of each chunk.
    jvm: Option<JvmInfo>,
    configuration: Configuration,
    /// The chunk the chunk-start events were written in last.
    jvm_chunk: u32,
    collectors: Vec<Collector>,
    heap_reserved: u64,
    /// Pauses no collection claimed yet, oldest first.
    pauses: Vec<Pause>,
    /// Collections since the recording's start known from their collector's
    /// last `GcInfo` at the start, written at the next poll, once their
    /// pauses are reported.
    early: Vec<NotifiedCollection>,
    /// Stop-the-world collections notified before their pause was
    /// reported, and those notified after them, in order: the JVM's
    /// notification thread may deliver a collection before the writer has
    /// taken its GC callbacks' pause. Written once the pause is in, or after
    /// [`PAUSE_WAIT`] without it.
    waiting: Vec<NotifiedCollection>,
    /// When the first of `waiting` began to wait, in recording ticks.
    waiting_since: Option<i64>,
    /// The last `gcId` given (0: none yet).
    gc_id: u32,
    missed: u64,
    /// Heap bytes in use after the collection that ended last, and when
    /// it ended (milliseconds since the JVM started).
    last_after: Option<(i64, u64)>,
    /// The generational ZGC major collections written since the last
    /// [`HeapContext::take_major_collections`].
    majors: Vec<WholeHeapCollection>,
    /// The collections that marked the whole heap written since the last
    /// [`HeapContext::take_whole_heap_collections`].
    whole_heap: Vec<WholeHeapCollection>,
    /// The collections written (not pauses): what ages an object.
    collections_written: u64,
    /// Under generational Shenandoah: the ends of its old markings.
    old_markings: OldMarkings,
}

impl HeapContext {
    /// Registers the event types with `recording`.
    pub fn register<S: Sink>(recording: &mut Recording<S>) -> Result<Self, jfr_writer::Error> {
        let gc = GcTypes::register(recording)?;
        let types = Types {
            heap_summary: recording.register(events::gc_heap_summary(&gc))?,
            metaspace_summary: recording.register(events::metaspace_summary(&gc))?,
            collection: recording.register(events::jdk_garbage_collection(&gc))?,
            young: recording.register(events::young_garbage_collection())?,
            old: recording.register(events::old_garbage_collection())?,
            pause: recording.register(events::gc_phase_pause())?,
            pause_level_1: recording.register(events::gc_phase_pause_level_1())?,
            configuration: recording.register(events::gc_configuration(&gc))?,
            heap_configuration: recording.register(events::gc_heap_configuration(&gc))?,
            jvm_information: recording.register(events::jvm_information())?,
            class_loading: recording.register(events::class_loading_statistics())?,
            gc,
        };
        Ok(Self {
            types,
            started: false,
            jvm: None,
            configuration: Configuration::default(),
            jvm_chunk: 0,
            collectors: Vec::new(),
            heap_reserved: 0,
            pauses: Vec::new(),
            early: Vec::new(),
            waiting: Vec::new(),
            waiting_since: None,
            gc_id: 0,
            missed: 0,
            last_after: None,
            majors: Vec::new(),
            whole_heap: Vec::new(),
            collections_written: 0,
            old_markings: OldMarkings::default(),
        })
    }

    /// `jdk.GCPhasePauseLevel1`, declared and never written: Mission
    /// Control's long-pause rule runs only where it is said enabled (the
    /// writer says so once per file).
    pub fn pause_level_1(&self) -> &EventType {
        &self.types.pause_level_1
    }

    /// Starts following the heap: reads the JVM's description and flags,
    /// writes the chunk-start events, and takes each collector's last
    /// collection before the notifications began: written (without a cause)
    /// if it started after the recording (the writer thread starts while
    /// the application runs, and may come after its first collections), the
    /// collector's earlier ones since the recording's start counted as
    /// missed; the last one's heap figure is the first
    /// [`HeapContext::last_known_heap_usage`]. Returns whether the JVM's
    /// management interface answered: without it, none of these events are
    /// written. Polls call it if it was not called.
    pub fn begin<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
    ) -> Result<bool, jfr_writer::Error> {
        self.started = true;
        self.jvm = vm.jvm_info();
        let collectors = vm.collectors();
        if let Some(collectors) = &collectors {
            self.configuration = read_configuration(vm, &collectors.names);
        }
        self.write_chunk_start(recording)?;
        let Some(collectors) = collectors else {
            return Ok(self.jvm.is_some());
        };
        self.heap_reserved = collectors.heap_reserved;
        self.collectors = collectors
            .names
            .into_iter()
            .map(|name| Collector { name, written: 0 })
            .collect();
        for at in 0..self.collectors.len() {
            let Some(last) = vm.last_collection(at) else {
                continue;
            };
            self.collectors[at].written = last.id;
            if self.jvm.is_some() && self.ticks_of(recording, last.start_millis).0 >= 0 {
                // In the recording: the last is known, and those before it
                // are all missed if the recording began with the JVM.
                if self.ticks_of(recording, 0).0 >= 0 {
                    self.missed += last.id.saturating_sub(1);
                }
                self.collectors[at].written = last.id.saturating_sub(1);
                self.early.push(NotifiedCollection {
                    collector: self.collectors[at].name.clone(),
                    cause: None,
                    action: None,
                    info: GcInfo {
                        metaspace_before: None,
                        metaspace_after: None,
                        ..last
                    },
                });
            } else {
                self.note_heap_after(&last);
            }
        }
        Ok(true)
    }

    /// A stop-the-world pause the GC callbacks reported: written with the
    /// collection that claims it ([`HeapContext::poll`]).
    pub fn pause(&mut self, pause: Pause) {
        self.pauses.push(pause);
    }

    /// Writes the collections notified since the last poll, in the order
    /// they started, each with its pauses, and the pauses no collection
    /// claimed within [`PAUSE_WAIT`].
    pub fn poll<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
    ) -> Result<(), jfr_writer::Error> {
        if !self.started {
            self.begin(recording, vm)?;
            return Ok(());
        }
        self.write_collections(recording, vm, false)?;
        let wait = ticks_in(PAUSE_WAIT);
        let now = recording.clock().now().0;
        self.write_unclaimed_pauses(recording, |pause| now - pause.end.0 > wait)
    }

    /// Writes the collections notified since the last poll and those
    /// waiting, in the order they started, up to the first stop-the-world
    /// one whose pause is not reported yet: that one and the rest wait for
    /// it, for [`PAUSE_WAIT`] at most (`all`: not at all).
    fn write_collections<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
        all: bool,
    ) -> Result<(), jfr_writer::Error> {
        let mut notified = vm.notified_collections();
        if self.configuration.shenandoah_generational {
            self.follow_old_markings(recording, &notified);
        }
        // A notification of an early collection replaces it: it has the
        // cause.
        let early = std::mem::take(&mut self.early).into_iter().filter(|early| {
            !notified
                .iter()
                .any(|n| n.collector == early.collector && n.info.id == early.info.id)
        });
        notified.extend(early.collect::<Vec<_>>());
        notified.append(&mut self.waiting);
        notified.sort_by_key(|n| (n.info.start_millis, n.info.end_millis));
        let now = recording.clock().now().0;
        let waited_enough = all
            || self
                .waiting_since
                .is_some_and(|since| now - since > ticks_in(PAUSE_WAIT));
        let mut notified = notified.into_iter();
        while let Some(collection) = notified.next() {
            if !waited_enough && self.lacks_pause(recording, &collection) {
                self.waiting.push(collection);
                self.waiting.extend(notified);
                self.waiting_since.get_or_insert(now);
                return Ok(());
            }
            self.write_notified(recording, &collection)?;
        }
        self.waiting_since = None;
        Ok(())
    }

    /// Follows generational Shenandoah's old markings through `notified`,
    /// in the order notified ([`OldMarkings`]): each one's end believed is
    /// a collection that marked the whole heap.
    fn follow_old_markings<S: Sink>(
        &mut self,
        recording: &Recording<S>,
        notified: &[NotifiedCollection],
    ) {
        for collection in notified {
            let id = collection.info.id;
            if collection.collector == SHENANDOAH_PAUSES {
                self.old_markings.pause(id, collection.action.as_deref());
            } else if collection_kind_is_shenandoah(&collection.collector) {
                let end = self.ticks_of(recording, collection.info.end_millis).0;
                let cause = collection.cause.as_deref();
                if let Some(marked) = self.old_markings.cycle(id, cause, end) {
                    self.whole_heap.push(marked);
                }
            }
        }
    }

    /// Whether `notified` is a stop-the-world collection none of the
    /// reported pauses could be the pause of.
    fn lacks_pause<S: Sink>(
        &self,
        recording: &Recording<S>,
        notified: &NotifiedCollection,
    ) -> bool {
        match collector_kind(&notified.collector) {
            CollectorKind::Young(_) | CollectorKind::Old(_) => {
                let start = self.ticks_of(recording, notified.info.start_millis);
                let end = self.ticks_of(recording, notified.info.end_millis);
                self.own_pause(start, end).is_none()
            }
            _ => false,
        }
    }

    /// The pause of a stop-the-world collection timed from `start` to
    /// `end`: the collection's span (its start's millisecond whole) lies
    /// within its pause however late a loaded machine ran the VM thread, so
    /// how far it falls outside a pause is the two clocks' difference, for
    /// its own pause alone. Of those within [`PAUSE_MATCH`], the least
    /// outside, then the nearest.
    fn own_pause(&self, start: Ticks, end: Ticks) -> Option<usize> {
        let tolerance = ticks_in(PAUSE_MATCH);
        let last = start.0 + ticks_in(Duration::from_millis(1));
        let outside = |pause: &Pause| (pause.start.0 - last).max(0) + (end.0 - pause.end.0).max(0);
        self.pauses
            .iter()
            .enumerate()
            .map(|(at, pause)| (at, outside(pause), (pause.start.0 - start.0).abs()))
            .filter(|&(_, outside, _)| outside <= tolerance)
            .min_by_key(|&(_, outside, distance)| (outside, distance))
            .map(|(at, _, _)| at)
    }

    /// At the recording's end: polls until every pause is claimed, for a
    /// while (the last collection, the agent's own, may be notified after
    /// its pause was reported), then writes the pauses left with ids of
    /// their own.
    pub fn end<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
    ) -> Result<(), jfr_writer::Error> {
        for _ in 0..END_POLLS {
            self.poll(recording, vm)?;
            let claimed = self.pauses.is_empty() && self.waiting.is_empty();
            if claimed || (self.collectors.is_empty() && self.waiting.is_empty()) {
                break;
            }
            std::thread::sleep(END_POLL_EVERY);
        }
        self.write_collections(recording, vm, true)?;
        self.write_unclaimed_pauses(recording, |_| true)
    }

    /// At a flush (and at the end): polls, writes
    /// `jdk.ClassLoadingStatistics`, and writes the chunk-start events
    /// (`jdk.JVMInformation`, `jdk.GCConfiguration`,
    /// `jdk.GCHeapConfiguration`) again if a new chunk began since they
    /// were written, so that each chunk, read alone, says which JVM it
    /// comes from (the JDK writes them at each chunk's beginning).
    pub fn at_flush<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
    ) -> Result<(), jfr_writer::Error> {
        self.poll(recording, vm)?;
        if self.jvm_chunk != recording.chunk_number() {
            self.write_chunk_start(recording)?;
        }
        if let Some(classes) = vm.class_loading() {
            ClassLoadingStatistics {
                start_time: recording.clock().now(),
                loaded_class_count: saturate(classes.loaded),
                unloaded_class_count: saturate(classes.unloaded),
            }
            .write(recording, &self.types.class_loading)?;
        }
        Ok(())
    }

    /// The bytes of the heap in use after the most recent collection the
    /// management interface reported (before the recording, if none since):
    /// what `jdk.OldObjectSample.lastKnownHeapUsage` says. `None` before
    /// any collection, or without the management interface.
    pub fn last_known_heap_usage(&self) -> Option<u64> {
        self.last_after.map(|(_, used)| used)
    }

    /// The heap's maximum size in bytes (`MaxHeapSize`), 0 if not known.
    pub fn max_heap(&self) -> u64 {
        self.configuration.max_heap.max(0) as u64
    }

    /// Collections of the recording not written: before the notifications
    /// began, or refused by a full queue (the collectors' ids tell).
    pub fn collections_missed(&self) -> u64 {
        self.missed
    }

    /// The generational ZGC major collections written since the last
    /// call: the collections that clear what weak handles point to there
    /// (its minor ones keep it).
    pub fn take_major_collections(&mut self) -> Vec<WholeHeapCollection> {
        std::mem::take(&mut self.majors)
    }

    /// The collections that marked the whole heap written since the last
    /// call ([`WholeHeapCollection`]): after them, the sampled objects
    /// still tracked are those live when they began (or allocated since).
    pub fn take_whole_heap_collections(&mut self) -> Vec<WholeHeapCollection> {
        std::mem::take(&mut self.whole_heap)
    }

    /// The collections written so far (not pauses).
    pub fn collections_written(&self) -> u64 {
        self.collections_written
    }

    /// How canaries tell when a marking ended in this JVM, if its
    /// collections do not say so.
    pub fn canary_kind(&self) -> Option<CanaryKind> {
        let has = |name: &str| self.collectors.iter().any(|c| c.name == name);
        if has("ZGC Minor Cycles") {
            Some(CanaryKind::Weak)
        } else if has("G1 Young Generation") && !has(G1_CONCURRENT) {
            Some(CanaryKind::TenuredThenWeak)
        } else {
            None
        }
    }

    /// What a user should know of when the watch judges in this JVM, where
    /// its collections do not say when they marked the whole heap.
    pub fn whole_heap_unknown(&self) -> Option<&'static str> {
        match self.canary_kind() {
            Some(CanaryKind::TenuredThenWeak) => Some(
                "under G1 before JDK 21 the JVM does not say when a marking ends (JDK 21 does): \
                 the watch learns it from an object of its own, held until it is old, then let \
                 go, and judges after the first marking past that (a leak is seen a few \
                 markings after it began)",
            ),
            // Measured: in a service whose request garbage dies at once,
            // its tracked samples were found freed 38 to 47 s after they
            // were allocated, at majors (3-minute runs, Temurin 25).
            Some(CanaryKind::Weak) => Some(
                "under generational ZGC a dead sample is found freed only by a major collection \
                 after its young collections promoted it: the watch judges a sample once an \
                 object of its own made after it is found freed (a leak is seen tens of seconds \
                 after it began)",
            ),
            None if self
                .collectors
                .iter()
                .any(|c| c.name == "Shenandoah Cycles")
                && self.configuration.shenandoah_generational =>
            {
                // Measured (LateLeak, 3-minute runs, Temurin 25, -Xmx256m,
                // its defaults): old markings ended at 9, 15, 112, 146 and
                // 155 s with the leak from 60 s (raised 86 s after it
                // began), at 9 and 15 s only without it.
                Some(
                    "under generational Shenandoah a sample that died old is found freed only \
                     when an old marking ends, which the JVM does not say: the watch tells each \
                     end from the order of the collector's notifications and then judges what \
                     was allocated before the end of the one before (a leak is seen a few old \
                     markings after it began; by its defaults they may be minutes apart)",
                )
            }
            None => None,
        }
    }

    fn note_heap_after(&mut self, info: &GcInfo) {
        if self
            .last_after
            .is_none_or(|(ended, _)| info.end_millis >= ended)
        {
            self.last_after = Some((info.end_millis, info.after.used));
        }
    }

    fn next_gc_id(&mut self) -> i32 {
        self.gc_id = self.gc_id.wrapping_add(1).max(1);
        (self.gc_id & i32::MAX as u32) as i32
    }

    fn write_chunk_start<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
    ) -> Result<(), jfr_writer::Error> {
        self.jvm_chunk = recording.chunk_number();
        let now = recording.clock().now();
        if let Some(jvm) = &self.jvm {
            let version = jvm.version_line();
            let arguments = jvm.arguments.join(" ");
            JvmInformation {
                start_time: now,
                jvm_name: Some(&jvm.vm_name),
                jvm_version: Some(&version),
                jvm_arguments: Some(&arguments),
                jvm_flags: None,
                java_arguments: jvm.java_command.as_deref(),
                jvm_start_time: jvm.start_millis,
                pid: jvm.pid,
            }
            .write(recording, &self.types.jvm_information)?;
        }
        let configuration = &self.configuration;
        if !configuration.known {
            return Ok(());
        }
        let gc = &self.types.gc;
        if let Some((young, old)) = configuration.collectors {
            // Constants live for one chunk: made right before their event.
            let (young, old) = (gc.name(recording, young)?, gc.name(recording, old)?);
            GcConfiguration {
                start_time: now,
                young_collector: Some(young),
                old_collector: Some(old),
                parallel_gc_threads: configuration.parallel_gc_threads,
                concurrent_gc_threads: configuration.concurrent_gc_threads,
                uses_dynamic_gc_threads: configuration.uses_dynamic_gc_threads,
                is_explicit_gc_concurrent: configuration.explicit_gc_concurrent,
                is_explicit_gc_disabled: configuration.explicit_gc_disabled,
                pause_target: configuration.pause_target,
                gc_time_ratio: configuration.gc_time_ratio,
            }
            .write(recording, &self.types.configuration)?;
        }
        let mode = self
            .jvm
            .as_ref()
            .and_then(|jvm| jvm.compressed_oops_mode.as_deref());
        let mode = mode
            .map(|mode| gc.narrow_oop_mode(recording, mode))
            .transpose()?;
        GcHeapConfiguration {
            start_time: now,
            min_size: configuration.min_heap,
            max_size: configuration.max_heap,
            initial_size: configuration.initial_heap,
            uses_compressed_oops: configuration.compressed_oops,
            compressed_oops_mode: mode,
            object_alignment: configuration.object_alignment,
            heap_address_bits: if configuration.compressed_oops {
                32
            } else {
                64
            },
        }
        .write(recording, &self.types.heap_configuration)
    }

    /// The recording's time of `millis` after the JVM's start; now if the
    /// JVM's start is not known.
    fn ticks_of<S: Sink>(&self, recording: &Recording<S>, millis: i64) -> Ticks {
        let clock = recording.clock();
        match &self.jvm {
            Some(jvm) => clock.ticks_at_epoch_nanos(
                jvm.start_millis
                    .saturating_add(millis)
                    .saturating_mul(1_000_000),
            ),
            None => clock.now(),
        }
    }

    fn write_notified<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        notified: &NotifiedCollection,
    ) -> Result<(), jfr_writer::Error> {
        let info = &notified.info;
        let at = match self
            .collectors
            .iter()
            .position(|c| c.name == notified.collector)
        {
            Some(at) => at,
            None => {
                self.collectors.push(Collector {
                    name: notified.collector.clone(),
                    written: 0,
                });
                self.collectors.len() - 1
            }
        };
        let collector = &mut self.collectors[at];
        if info.id <= collector.written {
            return Ok(());
        }
        self.missed += info.id - collector.written - 1;
        collector.written = info.id;
        let kind = collector_kind(&notified.collector);
        if kind != CollectorKind::Pauses {
            self.collections_written += 1;
        }
        let start = self.ticks_of(recording, info.start_millis);
        let end = self.ticks_of(recording, info.end_millis);
        let whole_heap = match kind {
            CollectorKind::Old(_) => true,
            // Not generational ZGC's majors: see `whole_heap_unknown`.
            CollectorKind::Cycle(name) => {
                name == ZGC_NOT_GENERATIONAL
                    || (name == SHENANDOAH && !self.configuration.shenandoah_generational)
            }
            // Its Remark (weak handles cleared) and Cleanup.
            CollectorKind::Pauses => notified.collector == G1_CONCURRENT,
            CollectorKind::Young(_) | CollectorKind::Unknown => false,
        };
        if whole_heap {
            self.whole_heap.push(WholeHeapCollection {
                start: start.0,
                end: end.0,
            });
        }
        let name = match kind {
            CollectorKind::Young(name) | CollectorKind::Old(name) => name,
            CollectorKind::Cycle(name) if !name.is_empty() => name,
            CollectorKind::Cycle(_) | CollectorKind::Unknown => notified.collector.as_str(),
            // Not a collection: its pause waits for its cycle's
            // notification, or gets an id of its own.
            CollectorKind::Pauses => return Ok(()),
        };
        if kind == CollectorKind::Cycle(ZGC_MAJOR) {
            self.majors.push(WholeHeapCollection {
                start: start.0,
                end: end.0,
            });
        }
        let tolerance = ticks_in(PAUSE_MATCH);
        let claimed: Vec<Pause> = match kind {
            CollectorKind::Cycle(_) => {
                let (within, others) = self.pauses.iter().partition(|pause| {
                    pause.start.0 >= start.0 - tolerance && pause.end.0 <= end.0 + tolerance
                });
                self.pauses = others;
                within
            }
            _ => self
                .own_pause(start, end)
                .map(|at| self.pauses.remove(at))
                .into_iter()
                .collect(),
        };
        let gc_id = self.next_gc_id();
        let duration = (end.0 - start.0).max(0);
        let (sum, longest) = if claimed.is_empty() {
            match kind {
                CollectorKind::Cycle(_) => (0, 0),
                _ => (duration, duration),
            }
        } else {
            let lengths = claimed
                .iter()
                .map(|pause| (pause.end.0 - pause.start.0).max(0));
            (lengths.clone().sum(), lengths.max().unwrap_or(0))
        };
        for pause in claimed {
            self.write_pause(recording, pause, gc_id)?;
        }
        self.write_summaries(recording, gc_id, info, start, end)?;
        let types = &self.types;
        let (name, cause) = (
            types.gc.name(recording, name)?,
            notified
                .cause
                .as_deref()
                .map(|cause| types.gc.cause(recording, cause))
                .transpose()?,
        );
        JdkGarbageCollection {
            start_time: start,
            duration,
            gc_id,
            name: Some(name),
            cause,
            sum_of_pauses: sum,
            longest_pause: longest,
        }
        .write(recording, &types.collection)?;
        match kind {
            CollectorKind::Young(_) => YoungGarbageCollection {
                start_time: start,
                duration,
                gc_id,
                // Not known (see the module's notes).
                tenuring_threshold: 0,
            }
            .write(recording, &types.young)?,
            CollectorKind::Old(_) => OldGarbageCollection {
                start_time: start,
                duration,
                gc_id,
            }
            .write(recording, &types.old)?,
            _ => {}
        }
        self.note_heap_after(info);
        Ok(())
    }

    /// `jdk.GCHeapSummary` and `jdk.MetaspaceSummary` before and after a
    /// collection.
    fn write_summaries<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        gc_id: i32,
        info: &GcInfo,
        start: Ticks,
        end: Ticks,
    ) -> Result<(), jfr_writer::Error> {
        let reserved = saturate(self.heap_reserved);
        let types = &self.types;
        for (when, at, usage, metaspace) in [
            (BEFORE_GC, start, info.before, info.metaspace_before),
            (AFTER_GC, end, info.after, info.metaspace_after),
        ] {
            // Constants live for one chunk: made right before their event.
            let when = types.gc.when(recording, when)?;
            GcHeapSummary {
                start_time: at,
                gc_id,
                when: Some(when),
                heap_space: VirtualSpace {
                    start: 0,
                    committed_size: saturate(usage.committed),
                    reserved_size: reserved.max(saturate(usage.committed)),
                },
                heap_used: saturate(usage.used),
            }
            .write(recording, &types.heap_summary)?;
            let Some(metaspace) = metaspace else {
                continue;
            };
            let class_space = metaspace.class_space.unwrap_or_default();
            let sizes = |used: u64, committed: u64, reserved: Option<u64>| MetaspaceSizes {
                committed: saturate(committed),
                used: saturate(used),
                reserved: reserved.map_or(0, saturate),
            };
            MetaspaceSummary {
                start_time: at,
                gc_id,
                when: Some(when),
                // Not known (see the module's notes).
                gc_threshold: 0,
                metaspace: sizes(metaspace.all.used, metaspace.all.committed, None),
                data_space: sizes(
                    metaspace.all.used.saturating_sub(class_space.used),
                    metaspace
                        .all
                        .committed
                        .saturating_sub(class_space.committed),
                    None,
                ),
                class_space: sizes(class_space.used, class_space.committed, class_space.max),
            }
            .write(recording, &types.metaspace_summary)?;
        }
        Ok(())
    }

    fn write_pause<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        pause: Pause,
        gc_id: i32,
    ) -> Result<(), jfr_writer::Error> {
        GcPhasePause {
            start_time: pause.start,
            duration: (pause.end.0 - pause.start.0).max(0),
            event_thread: None,
            gc_id,
            name: Some(PAUSE_NAME),
        }
        .write(recording, &self.types.pause)
    }

    /// Writes the pauses no collection claimed that `give_up` says not to
    /// wait for, each with a `gcId` of its own.
    fn write_unclaimed_pauses<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        give_up: impl Fn(&Pause) -> bool,
    ) -> Result<(), jfr_writer::Error> {
        let (left, waiting) = std::mem::take(&mut self.pauses)
            .into_iter()
            .partition(|pause| give_up(pause));
        self.pauses = waiting;
        let left: Vec<Pause> = left;
        for pause in left {
            let gc_id = self.next_gc_id();
            self.write_pause(recording, pause, gc_id)?;
        }
        Ok(())
    }
}

/// How many times the end polls for the last notifications, and how often.
const END_POLLS: u32 = 10;
const END_POLL_EVERY: Duration = Duration::from_millis(20);

/// The GC configuration from the JVM's flags (research: the JDK's
/// `GCConfiguration` reads the same flags).
fn read_configuration(vm: &mut impl HeapVm, collectors: &[String]) -> Configuration {
    let mut flag = |name: &CStr| vm.vm_flag(name);
    let number = |flag: Option<VmFlag>| -> i64 {
        flag.and_then(|f| f.value.parse::<u64>().ok())
            .map_or(0, |n| n.min(i64::MAX as u64) as i64)
    };
    let boolean = |flag: Option<VmFlag>| flag.is_some_and(|f| f.value == "true");
    let max_heap = flag(c"MaxHeapSize");
    let known = max_heap.is_some();
    let pause_target = match flag(c"MaxGCPauseMillis") {
        // The JDK's "not set" when the flag has its default.
        Some(f) if f.origin != "DEFAULT" => number(Some(f)),
        _ => i64::MIN,
    };
    let collectors = configured_collectors(collectors);
    // The JDK writes no parallel threads for Serial.
    let parallel_gc_threads = match collectors {
        Some((_, "SerialOld")) => 0,
        _ => number(flag(c"ParallelGCThreads")) as i32,
    };
    Configuration {
        collectors,
        parallel_gc_threads,
        concurrent_gc_threads: number(flag(c"ConcGCThreads")) as i32,
        uses_dynamic_gc_threads: boolean(flag(c"UseDynamicNumberOfGCThreads")),
        explicit_gc_concurrent: boolean(flag(c"ExplicitGCInvokesConcurrent")),
        explicit_gc_disabled: boolean(flag(c"DisableExplicitGC")),
        pause_target,
        gc_time_ratio: number(flag(c"GCTimeRatio")) as i32,
        min_heap: number(flag(c"MinHeapSize")),
        max_heap: number(max_heap),
        initial_heap: number(flag(c"InitialHeapSize")),
        compressed_oops: boolean(flag(c"UseCompressedOops")),
        object_alignment: number(flag(c"ObjectAlignmentInBytes")),
        shenandoah_generational: flag(c"ShenandoahGCMode")
            .is_some_and(|f| f.value == "generational"),
        known,
    }
}

/// The ticks of a duration.
fn ticks_in(duration: Duration) -> i64 {
    (duration.as_nanos() as i64).saturating_mul(TICKS_PER_SECOND) / 1_000_000_000
}

fn saturate(value: u64) -> i64 {
    value.min(i64::MAX as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jvm() -> JvmInfo {
        JvmInfo {
            vm_name: "OpenJDK 64-Bit Server VM".into(),
            vm_version: "17.0.15+6-Debian-1deb12u1".into(),
            runtime_version: Some("17.0.15+6-Debian-1deb12u1".into()),
            os_name: Some("Linux".into()),
            os_arch: Some("amd64".into()),
            arguments: vec![],
            java_command: None,
            compressed_oops_mode: None,
            start_millis: 0,
            pid: 1,
        }
    }

    #[test]
    fn the_version_line_is_hotspots_up_to_the_build() {
        assert_eq!(
            jvm().version_line(),
            "OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1) for linux-amd64 \
             JRE (17.0.15+6-Debian-1deb12u1)"
        );
        let bare = JvmInfo {
            runtime_version: None,
            os_arch: None,
            ..jvm()
        };
        assert_eq!(
            bare.version_line(),
            "OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1)"
        );
    }

    #[test]
    fn collectors_are_named_as_the_jdk_names_them() {
        use CollectorKind::*;
        for (bean, kind) in [
            ("G1 Young Generation", Young("G1New")),
            ("G1 Old Generation", Old("G1Full")),
            ("G1 Concurrent GC", Pauses),
            ("PS Scavenge", Young("ParallelScavenge")),
            ("PS MarkSweep", Old("ParallelOld")),
            ("Copy", Young("DefNew")),
            ("MarkSweepCompact", Old("SerialOld")),
            ("ZGC Cycles", Cycle("Z")),
            ("ZGC Pauses", Pauses),
            ("ZGC Minor Cycles", Cycle("ZGC Minor")),
            ("ZGC Major Pauses", Pauses),
            ("Shenandoah Cycles", Cycle("Shenandoah")),
            ("Shenandoah Pauses", Pauses),
            ("Epsilon", Unknown),
        ] {
            assert_eq!(collector_kind(bean), kind, "{bean}");
        }
        let names = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(
            configured_collectors(&names(&["ZGC Cycles", "ZGC Pauses"])),
            Some(("N/A", "Z"))
        );
        assert_eq!(
            configured_collectors(&names(&["ZGC Minor Cycles", "ZGC Major Cycles"])),
            Some(("ZGC Minor", "ZGC Major"))
        );
        assert_eq!(configured_collectors(&names(&["Epsilon"])), None);
    }

    /// Generational Shenandoah's notifications, in the order it sends them:
    /// each pause's, then its cycle's.
    struct Shenandoah {
        marks: OldMarkings,
        pauses: u64,
        cycles: u64,
        /// Each cycle's end, in ticks: one a cycle.
        now: i64,
    }

    impl Shenandoah {
        fn new() -> Self {
            Self {
                marks: OldMarkings::default(),
                pauses: 0,
                cycles: 0,
                now: 0,
            }
        }

        fn cycle_of(&mut self, pauses: &[&str], cause: &str) -> Option<WholeHeapCollection> {
            for action in pauses {
                self.pauses += 1;
                self.marks.pause(self.pauses, Some(action));
            }
            self.cycles += 1;
            self.now += 10;
            self.marks.cycle(self.cycles, Some(cause), self.now)
        }

        fn young(&mut self) -> Option<WholeHeapCollection> {
            let pauses = [
                "Init Mark",
                "Final Mark",
                "Init Update Refs",
                "Final Update Refs",
            ];
            self.cycle_of(&pauses, SHENANDOAH_CONCURRENT)
        }

        /// An old marking's cycle that ends it (its `Final Mark`), or that is
        /// cut short by a young one (no pause).
        fn old(&mut self, ends: bool) -> Option<WholeHeapCollection> {
            let pauses: &[&str] = if ends { &["Final Mark"] } else { &[] };
            self.cycle_of(pauses, SHENANDOAH_CONCURRENT)
        }
    }

    #[test]
    fn an_old_marking_believed_ended_judges_what_was_allocated_before_the_one_before() {
        let mut jvm = Shenandoah::new();
        // Joined half way through a young cycle: its Final Mark is no end.
        jvm.marks.pause(7, Some("Final Mark"));
        jvm.cycles = 3;
        assert_eq!(jvm.marks.cycle(4, Some(SHENANDOAH_CONCURRENT), 5), None);
        jvm.pauses = 7;
        jvm.cycles = 4;
        assert_eq!(jvm.young(), None);
        assert_eq!(jvm.marks.ended, None);
        // A bootstrap, the marking's cycle that ends it (at 30), believed at
        // the next young cycle: the first end seen judges nothing.
        assert_eq!(jvm.young(), None);
        assert_eq!(jvm.old(true), None);
        let first_end = jvm.now;
        assert_eq!(jvm.young(), None);
        assert_eq!(jvm.marks.last, Some(first_end));
        // The next marking, cut short by young cycles, then ended: what was
        // allocated before the first end is judged, at the second.
        for _ in 0..3 {
            assert_eq!(jvm.young(), None);
        }
        assert_eq!(jvm.old(false), None, "the filling of old regions");
        assert_eq!(jvm.young(), None, "the bootstrap");
        assert_eq!(jvm.old(false), None);
        assert_eq!(jvm.young(), None);
        assert_eq!(jvm.old(true), None, "not believed yet");
        let second_end = jvm.now;
        assert_eq!(
            jvm.young(),
            Some(WholeHeapCollection {
                start: first_end,
                end: second_end
            })
        );
        assert_eq!(jvm.young(), None);
        // A global cycle (an Init Mark) is not told from a young one: no end.
        assert_eq!(
            jvm.cycle_of(&["Init Mark", "Final Mark"], "System.gc()"),
            None
        );
    }

    #[test]
    fn an_end_is_forgotten_after_a_cycle_the_heuristics_did_not_start_or_a_gap() {
        let mut jvm = Shenandoah::new();
        assert_eq!(jvm.young(), None);
        assert_eq!(jvm.old(true), None);
        assert_eq!(jvm.young(), None);
        assert!(jvm.marks.last.is_some());
        // A Final Mark cut short by an allocation failure looks like an
        // end: the degenerated cycle after it is not believed, and forgets
        // the end before.
        assert_eq!(jvm.old(true), None);
        assert_eq!(
            jvm.cycle_of(&["Degenerated GC"], "Allocation Failure"),
            None
        );
        assert_eq!((jvm.marks.ended, jvm.marks.last), (None, None));
        assert_eq!(jvm.old(true), None);
        assert_eq!(jvm.young(), None, "one end seen again: no judgment");
        assert_eq!(jvm.old(true), None);
        assert!(jvm.young().is_some(), "two: judged");
        // A pause not notified (its id skipped): what was seen is
        // forgotten, and the cycle it was in is no end.
        jvm.pauses += 1;
        assert_eq!(jvm.old(true), None);
        assert_eq!(jvm.young(), None);
        assert_eq!((jvm.marks.ended, jvm.marks.last), (None, None));
        // Nor a cycle's.
        assert_eq!(jvm.old(true), None);
        assert_eq!(jvm.young(), None);
        assert_eq!(jvm.old(true), None);
        jvm.cycles += 1;
        assert_eq!(jvm.young(), None);
        assert_eq!((jvm.marks.ended, jvm.marks.last), (None, None));
    }
}
