//! Turning sample records and collections into JFR events, for the
//! writer thread's loop ([`crate::session::run_writer`]).
//!
//! It resolves what the allocation callback left opaque (methods, classes,
//! threads) through a [`Vm`], once each, caches the results, deduplicates
//! stack traces, writes `jdk.ObjectAllocationSample` with the unbiased
//! weight, tracks live objects, and after each garbage collection writes
//! `heapsampler.GarbageCollection` and one `heapsampler.ObjectLifetime` for
//! every tracked object found dead. At the end every object still tracked
//! gets its `ObjectLifetime` with `live = true`: exactly one per sample. A
//! sample taken without a liveness handle gets its `ObjectLifetime` at
//! once, with `tracked = false`: one the draw left untracked with the
//! probability it was drawn with (the tracked ones stand for it), one whose
//! liveness is unknown (an object at or above the agent's `live_max` size,
//! or past the cap) with probability 0.
//!
//! At each chunk's end it writes the tracked objects as
//! `jdk.OldObjectSample` and renames the chunk end's before
//! `heapsampler.OldObjectSnapshot`, so that the file holds one live set
//! under the JDK's name (see `OldObjects`). It drops what recent chunks did
//! not use, from its caches and the recording's pools alike (the objects
//! still tracked keep theirs), so that memory follows what the program does
//! now, not all it ever did: a value seen again is resolved again.
//!
//! It knows the JVM only through [`Vm`], so it is tested with a fake one.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use heapsampler_core::liveness::{LivenessTable, TrackedObject};
use heapsampler_core::ring::RingStats;
use heapsampler_core::sampling::bytes_weight;
use jfr_format::names::{class_loader, setting};
use jfr_writer::events::{
    self, ActiveRecording, ActiveSetting, AgentStatistics, GarbageCollection, HeapExhausted,
    LiveSet, ObjectAllocationSample, ObjectLifetime, OldObjectSample, OldObjectTypes,
    ReferenceHolder,
};
use jfr_writer::{
    Class, ClassLoader, ClassLoaderRef, ClassRef, ConstantRef, DemotableEvents, EventType,
    FrameType, Marked, Method, MethodRef, PoolRef, PoolSizes, Recording, Sink, StackFrame,
    StackTrace, StackTraceRef, Thread, ThreadRef, Ticks,
};

use crate::environment::{Environment, EnvironmentVm, ShutdownRecord};
use crate::fingerprints::FingerprintMap;
use crate::heap::{HeapContext, HeapVm, Pause};
use crate::record::{RawFrame, SampleView, Tracking};
use crate::roots::{Reference, RootLimits, RootPath, RootsVm};
use crate::signature::internal_name;
use crate::threads::{ThreadAllocations, ThreadsVm};
use heapsampler_core::options::{LiveMax, Options};

/// A class as the JVM describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassInfo {
    /// The signature: `Ljava/lang/String;`, `[I`.
    pub signature: String,
    /// Whether the class is hidden (`Class.isHidden()`, JDK 15+): lambda
    /// proxies, lambda forms and the like. The JDK's recordings leave their
    /// frames out.
    pub hidden: bool,
    /// The loader that defined it.
    pub loader: Loader,
}

/// The loader that defined a class, as the JVM describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loader {
    /// The bootstrap loader (JVMTI's `GetClassLoader` gives null).
    Boot,
    /// A loader object: the application's (`app`), the platform's, or
    /// one of the program's own.
    Object {
        /// The loader's own class (`jdk/internal/loader/ClassLoaders$AppClassLoader`),
        /// `None` where the VM did not describe it.
        class: Option<Box<ClassInfo>>,
        /// Its name, `ClassLoader.getName()`: `app`, `platform`; `None` for
        /// an unnamed loader.
        name: Option<String>,
    },
    /// Not known: the VM could not tell, or the class is a stand-in.
    Unknown,
}

/// A method as the JVM describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodInfo {
    /// The declaring class.
    pub class: ClassInfo,
    /// The method name: `<init>`.
    pub name: String,
    /// The descriptor: `(I)V`.
    pub descriptor: String,
    /// Access modifiers.
    pub modifiers: i32,
    /// The line number table: (first bytecode index, line), any order; empty
    /// when the class has none.
    pub lines: Vec<(i64, i32)>,
    /// Whether the method is native.
    pub native: bool,
}

/// A thread as the JVM describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// `Thread.getName()`.
    pub java_name: String,
    /// `Thread.getId()`.
    pub java_thread_id: i64,
    /// The operating system's thread id.
    pub os_thread_id: i64,
}

/// What the writer asks of the JVM, on its own thread: beyond what the heap
/// context ([`HeapVm`]) and the paths to roots ([`RootsVm`]) ask.
pub trait Vm: HeapVm + RootsVm + EnvironmentVm + ThreadsVm {
    /// Describes a method, or `None` if it is gone (its class unloaded).
    fn method(&mut self, method: u64) -> Option<MethodInfo>;
    /// Describes a class from its key, or `None` if it is gone.
    fn class(&mut self, class: u64) -> Option<ClassInfo>;
    /// Describes a thread from its key. Asked again for a thread whose
    /// pooled value was dropped: the VM keeps what it knows of a thread
    /// until [`Vm::forget_gone`] finds it gone.
    fn thread(&mut self, thread: u64) -> ThreadInfo;
    /// Whether the object behind a liveness handle was collected.
    fn is_collected(&mut self, handle: u64) -> bool;
    /// Releases a liveness handle.
    fn release(&mut self, handle: u64);
    /// The length of the array behind a live liveness handle; `None` if
    /// it cannot be told.
    fn array_length(&mut self, handle: u64) -> Option<i32> {
        let _ = handle;
        None
    }
    /// Forgets what the VM holds for threads and classes that are gone (a
    /// thread collected, a class unloaded): their keys never come again.
    /// Called at each chunk's end.
    fn forget_gone(&mut self) {}
}

/// A method's line number table, sorted by start so that a frame's line is
/// a binary search: recursive code makes a new stack of many frames at
/// almost every sample, each frame's line looked up.
#[derive(Debug)]
struct LineTable(Box<[(i64, i32)]>);

impl LineTable {
    /// The table of (first bytecode index, line) entries in any order.
    fn new(mut lines: Vec<(i64, i32)>) -> Self {
        // Stable: of two entries with one start, the later one wins.
        lines.sort_by_key(|&(start, _)| start);
        Self(lines.into_boxed_slice())
    }

    /// The line of a bytecode index: the entry with the largest start at
    /// or before it; -1 when there is none (or no table).
    fn line(&self, location: i64) -> i32 {
        let after = self.0.partition_point(|&(start, _)| start <= location);
        after.checked_sub(1).map_or(-1, |at| self.0[at].1)
    }
}

/// The frames resolved lately, by method and location: recursion makes
/// new stacks out of a few call sites, so a new stack's frames are mostly
/// frames seen before, and a look-up here is one probe of a table in
/// cache, where resolving a frame probes the method map and searches the
/// method's line table. Direct-mapped: a frame takes the place of the one
/// it shares its place with. Emptied when pooled methods are dropped, since
/// a frame holds its method's ref.
struct FrameCache {
    /// `FRAME_CACHE_PLACES` places.
    places: Box<[Option<ResolvedFrame>]>,
}

/// A frame as the ring holds it, and what it resolved to.
#[derive(Debug, Clone, Copy)]
struct ResolvedFrame {
    raw: RawFrame,
    /// `None`: left out, a hidden frame.
    frame: Option<StackFrame>,
}

/// A power of two; 16 KiB of places.
const FRAME_CACHE_PLACES: usize = 512;

impl FrameCache {
    fn new() -> Self {
        Self {
            places: vec![None; FRAME_CACHE_PLACES].into_boxed_slice(),
        }
    }

    fn place(raw: RawFrame) -> usize {
        // Fibonacci hashing of both words: method ids are aligned
        // pointers, locations small.
        let mixed = (raw.method ^ (raw.location as u64).rotate_left(32))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - FRAME_CACHE_PLACES.trailing_zeros())) as usize
    }

    /// What `raw` resolved to, if it is here.
    #[inline]
    fn get(&self, raw: RawFrame) -> Option<Option<StackFrame>> {
        match self.places[Self::place(raw)] {
            Some(held) if held.raw == raw => Some(held.frame),
            _ => None,
        }
    }

    fn insert(&mut self, raw: RawFrame, frame: Option<StackFrame>) {
        self.places[Self::place(raw)] = Some(ResolvedFrame { raw, frame });
    }

    fn clear(&mut self) {
        self.places.fill(None);
    }
}

/// A garbage collection the agent saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcRecord {
    /// The collection's number since the agent started (1, 2, ...).
    pub id: u64,
    /// When it started, in recording ticks.
    pub start: i64,
    /// When it finished, in recording ticks.
    pub end: i64,
}

/// A Java heap exhaustion, as the thread whose allocation failed reported
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exhaustion {
    /// A sample record ([`crate::record::SampleRecord`]) of no object: the
    /// failing thread's key, when it failed, and its stack.
    pub record: Vec<u8>,
    /// What the JVM said ran out: `Java heap space`.
    pub message: String,
}

/// The counters `heapsampler.AgentStatistics` reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Statistics {
    /// Samples the JVM handed the agent.
    pub samples: u64,
    /// Samples the ring refused (closed while they were taken). Always 0
    /// while recording: the ring makes producers wait instead.
    pub lost_samples: u64,
}

/// What a recording was started with, written as `jdk.ActiveRecording`
/// and `jdk.ActiveSetting` events at its start.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingSettings {
    /// Where the recording goes.
    pub destination: String,
    /// How often it is flushed, in milliseconds.
    pub flush_millis: i64,
    /// The mean sampling interval in bytes.
    pub interval: u64,
    /// The most frames per stack.
    pub depth: usize,
    /// Whether liveness is tracked.
    pub live: bool,
    /// Which objects liveness tracking covers, by size.
    pub live_max: LiveMax,
    /// The samples-per-second limit, if any.
    pub rate: Option<f64>,
    /// The thread-name glob, if any.
    pub threads: Option<String>,
    /// Whether frames of hidden classes are kept (marked hidden) rather
    /// than left out as the JDK's recordings do.
    pub hidden_frames: bool,
    /// The most `jdk.OldObjectSample` events a chunk's end (and the
    /// recording's) writes for the tracked objects live then, largest
    /// weight first (0: none).
    pub old_objects: usize,
    /// Whether, and how far, the end of the recording walks the heap for
    /// the old objects' paths to GC roots.
    pub roots: Option<RootLimits>,
    /// The most bytes of recent chunks kept (0: all).
    pub max_size: u64,
    /// The oldest chunks kept, in milliseconds (0: all).
    pub max_age_millis: i64,
    /// Whether the process's environment variables are written at each
    /// chunk's start.
    pub environment: bool,
}

impl RecordingSettings {
    /// The settings of a recording made with the agent's `options`.
    pub fn of(options: &Options) -> Self {
        Self {
            destination: options.file.display().to_string(),
            flush_millis: options.flush.as_millis() as i64,
            interval: options.interval,
            depth: options.depth,
            live: options.live,
            live_max: options.live_max,
            rate: options.rate,
            threads: options.threads.as_ref().map(|p| p.as_str().to_owned()),
            hidden_frames: options.hidden_frames,
            old_objects: options.old_objects,
            roots: options.roots.enabled.then_some(RootLimits {
                max_depth: options.roots.depth,
                budget: options.roots.time,
            }),
            max_size: options.max_size.unwrap_or(0),
            max_age_millis: options
                .max_age
                .map_or(0, |age| age.as_millis().min(i64::MAX as u128) as i64),
            environment: options.environment,
        }
    }
}

/// What the liveness table holds per object: the JVM's handle, and the
/// pooled values its `ObjectLifetime` event will need.
#[derive(Debug, Clone, Copy)]
struct Tracked {
    handle: u64,
    /// The probability with which its liveness was to be tracked: 0 if
    /// unknown.
    probability: f64,
    thread: ThreadRef,
    /// The receipt of its stack's mark for the sample's event: its
    /// lifetime's event in the same chunk writes the stack without a
    /// look-up.
    stack: Marked<StackTraceRef>,
    class: PooledClass,
}

/// A class as the writer pooled it.
#[derive(Debug, Clone, Copy)]
struct PooledClass {
    class: ClassRef,
    /// Whether it is an array class, whose objects have a length.
    array: bool,
}

/// What writes `jdk.OldObjectSample` events.
///
/// Each chunk's end writes the live set, so that a chunk read alone, or the
/// file of a JVM that was killed, has it; tools that read every chunk as
/// one (Mission Control's leak page) must see it once. So a chunk end's
/// old objects are written demotable ([`Recording::begin_demotable`]), and
/// once the next chunk end's are flushed, they are renamed
/// `heapsampler.OldObjectSnapshot`: the file holds one live set under the
/// JDK's name, the newest, or two if the JVM died between the flush and the
/// renaming, never none. An output that cannot rename (`.jfr.zst`) writes
/// them at the recording's end only, as the JDK does (and at a heap
/// exhaustion, as any output).
struct OldObjects {
    event_type: EventType,
    /// `heapsampler.OldObjectSnapshot`, what earlier chunk ends' become.
    snapshot_type: EventType,
    types: OldObjectTypes,
    /// Whether chunk ends write old objects: the output can rename them.
    at_chunk_ends: bool,
    /// The newest chunk end's old objects, not renamed yet.
    newest: Option<DemotableEvents>,
    /// The most events a chunk's end writes.
    cap: usize,
    /// Live objects the cap left out, over all chunk ends so far.
    left_out: u64,
}

/// How a sampled object's `ObjectLifetime` ends.
#[derive(Debug, Clone, Copy)]
enum Fate {
    /// Found collected after collection `gc_id`.
    Freed { gcs_survived: u64, gc_id: u64 },
    /// Still reachable when the recording ended.
    Live { gcs_survived: u64 },
    /// Not tracked, its liveness unknown: at or above the `live_max` size,
    /// or past the cap. Its probability is 0.
    Untracked,
    /// Not tracked: the draw left it out, the tracked ones stand for it.
    Undrawn,
}

/// A resolved method: its pooled ref, line table, whether it is native,
/// and whether its class is hidden.
#[derive(Debug)]
struct ResolvedMethod {
    method: MethodRef,
    lines: LineTable,
    native: bool,
    hidden: bool,
}

/// The writer's state for one recording.
pub struct Writer<S: Sink> {
    recording: Recording<S>,
    allocation_sample: EventType,
    object_lifetime: EventType,
    garbage_collection: EventType,
    agent_statistics: EventType,
    heap_exhausted: EventType,
    live_set: EventType,
    // Fx-hashed: the keys are the JVM's and the agent's own ids, not
    // chosen by an attacker, and a look-up per frame must be cheap.
    methods: FxHashMap<u64, Option<ResolvedMethod>>,
    /// Frames resolved lately ([`FrameCache`]).
    frames: FrameCache,
    classes: FxHashMap<u64, PooledClass>,
    threads: FxHashMap<u64, ThreadRef>,
    /// Stack fingerprint ([`SampleView::stack_fingerprint`]) -> its pooled
    /// stack trace, with the receipt of its latest mark: the first sample
    /// of a stack in a chunk marks it, and the others write it without a
    /// look-up.
    stacks: FingerprintMap<Marked<StackTraceRef>>,
    /// Reused for the stack fingerprints of a batch of records
    /// ([`Writer::samples`]).
    fingerprints: Vec<Option<u128>>,
    /// Where a new stack's frames are gathered (see [`Writer::stack`]).
    trace: StackTrace,
    liveness: LivenessTable<Tracked>,
    gc_count: u64,
    /// When the last collection written ended (0, the recording's start,
    /// before any).
    last_gc_end: i64,
    /// Whether every sample gets an `ObjectLifetime`.
    live: bool,
    /// Whether frames of hidden classes are kept.
    hidden_frames: bool,
    /// The bootstrap loader, pooled at the first class it defined.
    boot_loader: Option<ClassLoaderRef>,
    /// Samples tracked for liveness.
    drawn: u64,
    /// Samples the draw left untracked.
    undrawn: u64,
    /// Samples whose liveness is unknown (size, cap, or no handle made).
    untracked: u64,
    /// Of those, samples past the cap.
    capped: u64,
    /// Records that could not be decoded (a bug if ever not 0).
    malformed: u64,
    /// `None` without liveness tracking or with `old_objects=0`.
    old_objects: Option<OldObjects>,
    /// Whether the end of the recording walks the heap for the old
    /// objects' paths to GC roots.
    roots: Option<RootLimits>,
    /// The heap's context: GC, heap and JVM events ([`crate::heap`]).
    heap: HeapContext,
    /// The recording's settings, written at every chunk's start.
    active: ActiveSettings,
    /// What the JVM runs on: processors, memory, flags, properties
    /// ([`crate::environment`]).
    environment: Environment,
    /// The JVM's count of each thread's allocated bytes, at each flush
    /// ([`crate::threads`]).
    thread_allocations: ThreadAllocations,
}

/// What a recording was started with, as the `jdk.ActiveRecording` and
/// `jdk.ActiveSetting` events that say it. Every chunk starts with them, as
/// in the JDK's recordings: a chunk read alone, or what a rotation
/// (`maxsize=`, `maxage=`) kept, still tells its settings.
struct ActiveSettings {
    recording_type: EventType,
    setting_type: EventType,
    destination: String,
    max_age_millis: i64,
    flush_millis: i64,
    max_size: i64,
    start_millis: i64,
    /// (the event type's id, the setting's name, its value)
    settings: Vec<(i64, &'static str, String)>,
}

impl ActiveSettings {
    /// Registers the event types, and says `settings` of the allocation
    /// sample and lifetime event types `[sample, lifetime]`.
    fn new<S: Sink>(
        recording: &mut Recording<S>,
        settings: &RecordingSettings,
        [sample, lifetime]: [&EventType; 2],
    ) -> Result<Self, jfr_writer::Error> {
        let now = recording.clock().now();
        let throttle = settings
            .rate
            .map_or(setting::THROTTLE_OFF.to_owned(), |rate| format!("{rate}/s"));
        let live_max = match settings.live_max {
            LiveMax::Auto => "auto".to_owned(),
            LiveMax::Below(bytes) => format!("{bytes} bytes"),
            LiveMax::Unlimited => "none".to_owned(),
        };
        let (sample, lifetime) = (sample.id().get() as i64, lifetime.id().get() as i64);
        let settings_said = vec![
            (sample, setting::ENABLED, "true".to_owned()),
            (sample, setting::STACK_TRACE, "true".to_owned()),
            (sample, setting::THROTTLE, throttle),
            (
                sample,
                setting::SAMPLING_INTERVAL,
                format!("{} bytes", settings.interval),
            ),
            (sample, "depth", settings.depth.to_string()),
            (
                sample,
                "threads",
                settings.threads.clone().unwrap_or_else(|| "*".to_owned()),
            ),
            (lifetime, setting::ENABLED, settings.live.to_string()),
            (lifetime, "liveMax", live_max),
        ];
        Ok(Self {
            recording_type: recording.register(events::active_recording())?,
            setting_type: recording.register(events::active_setting())?,
            destination: settings.destination.clone(),
            max_age_millis: settings.max_age_millis,
            flush_millis: settings.flush_millis,
            max_size: settings.max_size as i64,
            start_millis: recording.clock().epoch_nanos(now) / 1_000_000,
            settings: settings_said,
        })
    }

    /// Says `event_type` enabled, once.
    fn write_enabled_once<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        event_type: &EventType,
    ) -> Result<(), jfr_writer::Error> {
        ActiveSetting {
            start_time: recording.clock().now(),
            duration: 0,
            event_thread: None,
            stack_trace: None.into(),
            id: event_type.id().get() as i64,
            name: Some(setting::ENABLED),
            value: Some("true"),
        }
        .write(recording, &self.setting_type)
    }

    /// Writes the events, as of now.
    fn write<S: Sink>(&self, recording: &mut Recording<S>) -> Result<(), jfr_writer::Error> {
        let now = recording.clock().now();
        ActiveRecording {
            start_time: now,
            duration: 0,
            event_thread: None,
            stack_trace: None.into(),
            id: 1,
            name: Some("heapsampler"),
            destination: Some(&self.destination),
            max_age: self.max_age_millis,
            flush_interval: self.flush_millis,
            max_size: self.max_size,
            recording_start: self.start_millis,
            recording_duration: 0,
        }
        .write(recording, &self.recording_type)?;
        for (id, name, value) in &self.settings {
            ActiveSetting {
                start_time: now,
                duration: 0,
                event_thread: None,
                stack_trace: None.into(),
                id: *id,
                name: Some(name),
                value: Some(value),
            }
            .write(recording, &self.setting_type)?;
        }
        Ok(())
    }
}

/// Gives a map's memory back after a large drop.
fn shrink<K: std::hash::Hash + Eq, V>(map: &mut FxHashMap<K, V>) {
    if map.capacity() > 64 && map.len() < map.capacity() / 4 {
        map.shrink_to(map.len() * 2);
    }
}

/// The bootstrap loader as the JDK's recordings write it: named
/// "bootstrap", with no class of its own (HotSpot's `jfrTypeSet.cpp`
/// writes the boot loader's data so). Pooled once: the pools write it in
/// every chunk whose classes refer to it.
fn boot_loader<S: Sink>(
    recording: &mut Recording<S>,
    pooled: &mut Option<ClassLoaderRef>,
) -> ClassLoaderRef {
    *pooled.get_or_insert_with(|| {
        let name = recording.symbol(class_loader::BOOTSTRAP);
        recording.class_loader(ClassLoader {
            class: None,
            name: Some(name),
        })
    })
}

/// Pools a class with its loader, as the JDK's recordings write them: the
/// bootstrap loader as [`boot_loader`], any other with its class and name
/// (`app`, of class `jdk/internal/loader/ClassLoaders$AppClassLoader`).
/// The JDK's `jfr view` takes a frame for the application's
/// (`stackTrace.topApplicationFrame`, which its `memory-leaks-by-site`
/// groups by) only if its class has a loader not named `bootstrap`
/// (`jdk.jfr.internal.query.FieldBuilder.topApplicationFrame`): a class
/// with no loader is no application's. Loaders of one class and name are
/// one value.
fn class_named<S: Sink>(
    recording: &mut Recording<S>,
    pooled_boot_loader: &mut Option<ClassLoaderRef>,
    info: &ClassInfo,
) -> ClassRef {
    let class_loader = match &info.loader {
        Loader::Boot => Some(boot_loader(recording, pooled_boot_loader)),
        Loader::Object { class, name } => {
            let class = class
                .as_deref()
                .map(|class| class_named(recording, pooled_boot_loader, class));
            let name = name.as_deref().map(|name| recording.symbol(name));
            Some(recording.class_loader(ClassLoader { class, name }))
        }
        Loader::Unknown => None,
    };
    let name = recording.symbol(internal_name(&info.signature));
    recording.class(Class {
        class_loader,
        name,
        package: None,
        modifiers: 0,
        hidden: info.hidden,
    })
}

/// Asks the VM for a method and pools it; `None` if its class is gone. A
/// method of a hidden class is marked hidden, as the JDK marks the methods
/// it hides.
fn resolve_method<S: Sink>(
    recording: &mut Recording<S>,
    pooled_boot_loader: &mut Option<ClassLoaderRef>,
    vm: &mut impl Vm,
    id: u64,
) -> Option<ResolvedMethod> {
    let info = vm.method(id)?;
    let class = class_named(recording, pooled_boot_loader, &info.class);
    let name = recording.symbol(&info.name);
    let descriptor = recording.symbol(&info.descriptor);
    Some(ResolvedMethod {
        method: recording.method(Method {
            class,
            name,
            descriptor,
            modifiers: info.modifiers,
            hidden: info.class.hidden,
        }),
        lines: LineTable::new(info.lines),
        native: info.native,
        hidden: info.class.hidden,
    })
}

/// The referrer of an old object: the chain of `path`'s links as
/// constants, the link held by the root last.
fn referrer_chain<S: Sink>(
    recording: &mut Recording<S>,
    pooled_boot_loader: &mut Option<ClassLoaderRef>,
    types: &OldObjectTypes,
    path: &RootPath,
) -> Result<Option<ConstantRef>, jfr_writer::Error> {
    let mut referrer = None;
    for link in path.links.iter().rev() {
        let class = class_named(
            recording,
            pooled_boot_loader,
            &ClassInfo {
                signature: link.holder_class.clone(),
                hidden: false,
                loader: Loader::Unknown,
            },
        );
        // An identity, not an address (JVMTI gives none), that is never a
        // liveness handle (the sampled objects' identities): JNI references
        // point at 8-byte slots, weak ones tagged in the lowest bit, so no
        // handle ends in the bits 0b10.
        let identity = (link.holder << 3) | 0b10;
        let holder = types.old_object(
            recording,
            identity,
            Some(class),
            link.description.as_deref(),
            referrer,
        )?;
        let place = match &link.reference {
            Reference::Field { name, modifiers } => ReferenceHolder::Field {
                name,
                modifiers: *modifiers,
            },
            Reference::Element { length, index } => ReferenceHolder::Element {
                size: *length,
                index: *index,
            },
            Reference::Unknown => ReferenceHolder::Unknown,
        };
        referrer = Some(types.reference(recording, place, holder, 0)?);
    }
    Ok(referrer)
}

impl<S: Sink> Writer<S> {
    /// A writer into `recording`, with the standard event types registered
    /// and the recording's settings written (`jdk.ActiveRecording` and
    /// `jdk.ActiveSetting`, so analysis tools see what was enabled and how).
    pub fn new(
        mut recording: Recording<S>,
        settings: &RecordingSettings,
    ) -> Result<Self, jfr_writer::Error> {
        // Chunks end where the writer has written their old objects.
        recording.end_chunks_manually();
        let allocation_sample = recording.register(events::object_allocation_sample())?;
        let object_lifetime = recording.register(events::object_lifetime())?;
        let environment = Environment::register(&mut recording, settings.environment)?;
        let thread_allocations = ThreadAllocations::register(&mut recording)?;
        let mut active = ActiveSettings::new(
            &mut recording,
            settings,
            [&allocation_sample, &object_lifetime],
        )?;
        active
            .settings
            .extend(environment.settings(settings.flush_millis));
        active
            .settings
            .extend(thread_allocations.settings(settings.flush_millis));
        active.write(&mut recording)?;
        let heap = HeapContext::register(&mut recording)?;
        let old_objects = if settings.live && settings.old_objects > 0 {
            let types = OldObjectTypes::register(&mut recording)?;
            Some(OldObjects {
                event_type: recording.register(events::old_object_sample(&types))?,
                snapshot_type: recording.register(events::old_object_snapshot(&types))?,
                types,
                at_chunk_ends: recording.can_demote(),
                newest: None,
                cap: settings.old_objects,
                left_out: 0,
            })
        } else {
            None
        };
        Ok(Self {
            allocation_sample,
            object_lifetime,
            garbage_collection: recording.register(events::garbage_collection())?,
            agent_statistics: recording.register(events::agent_statistics())?,
            heap_exhausted: recording.register(events::heap_exhausted())?,
            live_set: recording.register(events::live_set())?,
            heap,
            recording,
            methods: FxHashMap::default(),
            frames: FrameCache::new(),
            classes: FxHashMap::default(),
            threads: FxHashMap::default(),
            stacks: FingerprintMap::new(),
            fingerprints: Vec::new(),
            trace: StackTrace::default(),
            liveness: LivenessTable::new(),
            gc_count: 0,
            last_gc_end: 0,
            live: settings.live,
            hidden_frames: settings.hidden_frames,
            boot_loader: None,
            drawn: 0,
            undrawn: 0,
            untracked: 0,
            capped: 0,
            malformed: 0,
            old_objects,
            roots: settings.roots,
            active,
            environment,
            thread_allocations,
        })
    }

    /// The recording's clock.
    pub fn clock(&self) -> jfr_writer::Clock {
        self.recording.clock()
    }

    /// Objects tracked for liveness now.
    pub fn tracked_objects(&self) -> usize {
        self.liveness.len()
    }

    /// Records that could not be decoded.
    pub fn malformed_records(&self) -> u64 {
        self.malformed
    }

    /// Starts the environment's events: what the JVM runs on, at the first
    /// chunk's start, and the CPU time the first `jdk.CPULoad` is measured
    /// from ([`Environment::begin`]).
    pub fn begin_environment(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        self.environment.begin(&mut self.recording, vm)
    }

    /// Writes `jdk.Shutdown`: the JVM shutting down, on the thread and at
    /// the stack its record holds (none: the launcher's thread, with no
    /// Java frames).
    pub fn shutdown(
        &mut self,
        vm: &mut impl Vm,
        shutdown: &ShutdownRecord,
    ) -> Result<(), jfr_writer::Error> {
        let Ok(view) = SampleView::decode(&shutdown.record) else {
            self.malformed += 1;
            return Ok(());
        };
        let thread = (view.header.thread != 0).then(|| self.thread(vm, view.header.thread));
        let stack = if view.frames().next().is_some() {
            Some(self.stack(vm, &view, view.stack_fingerprint()))
        } else {
            None
        };
        events::Shutdown {
            start_time: Ticks(view.header.ticks),
            event_thread: thread,
            stack_trace: stack.map_or(None.into(), Into::into),
            reason: Some(shutdown.reason),
        }
        .write(&mut self.recording, self.environment.shutdown_type())
    }

    /// Starts the heap's context: `jdk.JVMInformation`, and the
    /// collections so far taken as before the recording
    /// ([`HeapContext::begin`]). Returns whether the JVM's management
    /// interface answered.
    pub fn begin_heap_context(&mut self, vm: &mut impl Vm) -> Result<bool, jfr_writer::Error> {
        self.heap.begin(&mut self.recording, vm)
    }

    /// Writes the collections the JVM notified since the last poll, with
    /// their pauses ([`HeapContext::poll`]).
    pub fn poll_collections(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        self.heap.poll(&mut self.recording, vm)
    }

    /// Before a flush and at the end: the collections, the class loading
    /// statistics, and the JVM's information in a new chunk
    /// ([`HeapContext::at_flush`]).
    pub fn heap_statistics(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        self.heap.at_flush(&mut self.recording, vm)
    }

    /// The bytes of the heap in use after the most recent collection, if
    /// known ([`HeapContext::last_known_heap_usage`]).
    pub fn last_known_heap_usage(&self) -> Option<u64> {
        self.heap.last_known_heap_usage()
    }

    /// Collections of the recording not written: before the notifications
    /// began, or refused by a full queue ([`HeapContext::collections_missed`]).
    pub fn collections_missed(&self) -> u64 {
        self.heap.collections_missed()
    }

    /// When each generational ZGC major collection written since the last
    /// call began ([`HeapContext::take_major_collections`]).
    pub fn take_major_collections(&mut self) -> Vec<i64> {
        self.heap.take_major_collections()
    }

    /// Writes one sample record from the ring.
    pub fn sample(&mut self, vm: &mut impl Vm, bytes: &[u8]) -> Result<(), jfr_writer::Error> {
        self.samples(vm, std::iter::once(bytes))
    }

    /// Writes sample records from the ring, in order. The stack look-ups of
    /// them all start first: when most stacks are new the map of them is
    /// larger than the cache, and the records' loads of it, independent,
    /// wait for their misses together, where one record at a time waits
    /// for each.
    pub fn samples<'r>(
        &mut self,
        vm: &mut impl Vm,
        records: impl Iterator<Item = &'r [u8]> + Clone,
    ) -> Result<(), jfr_writer::Error> {
        let mut fingerprints = std::mem::take(&mut self.fingerprints);
        fingerprints.clear();
        fingerprints.extend(records.clone().map(|bytes| {
            SampleView::decode(bytes)
                .ok()
                .map(|view| view.stack_fingerprint())
        }));
        self.stacks.prefetch(fingerprints.iter().flatten().copied());
        let mut written = Ok(());
        for (bytes, fingerprint) in records.zip(&fingerprints) {
            written = match (SampleView::decode(bytes), fingerprint) {
                (Ok(view), Some(fingerprint)) => self.decoded_sample(vm, &view, *fingerprint),
                _ => {
                    self.malformed += 1;
                    Ok(())
                }
            };
            if written.is_err() {
                break;
            }
        }
        self.fingerprints = fingerprints;
        written
    }

    /// Drops sample records from the ring unwritten, releasing their
    /// liveness handles: `mode=discard`, which measures handing samples to
    /// the writer apart from writing them.
    pub fn discard_samples<'r>(
        &mut self,
        vm: &mut impl Vm,
        records: impl Iterator<Item = &'r [u8]>,
    ) {
        for bytes in records {
            match SampleView::decode(bytes) {
                Ok(view) if view.header.liveness_handle != 0 => {
                    vm.release(view.header.liveness_handle)
                }
                Ok(_) => {}
                Err(_) => self.malformed += 1,
            }
        }
    }

    /// Writes one decoded sample record whose stack has `fingerprint`.
    fn decoded_sample(
        &mut self,
        vm: &mut impl Vm,
        view: &SampleView,
        fingerprint: u128,
    ) -> Result<(), jfr_writer::Error> {
        let record = view.header;
        let thread = self.thread(vm, record.thread);
        let stack = self.stack(vm, view, fingerprint);
        let class = self.class(vm, record.class);
        let weight = bytes_weight(record.size, record.interval).round() as i64;
        ObjectAllocationSample {
            start_time: Ticks(record.ticks),
            event_thread: Some(thread),
            stack_trace: stack.into(),
            object_class: Some(class.class),
            weight,
        }
        .write(&mut self.recording, &self.allocation_sample)?;
        if !self.live {
            return Ok(());
        }
        let (probability, fate) = match (record.tracking, record.liveness_handle) {
            (Tracking::Drawn(probability), handle) if handle != 0 => (probability, None),
            (Tracking::NotDrawn(probability), _) => (probability, Some(Fate::Undrawn)),
            // A drawn sample whose handle could not be made is as unknown
            // as one never drawn.
            (Tracking::Drawn(_) | Tracking::Excluded | Tracking::Capped, _) => {
                (0.0, Some(Fate::Untracked))
            }
        };
        let object = TrackedObject {
            handle: Tracked {
                handle: record.liveness_handle,
                probability,
                thread,
                stack,
                class,
            },
            allocation_time: record.ticks as u64,
            size: record.size,
            weight: weight as u64,
            gc_count_at_allocation: self.gc_count,
        };
        let Some(fate) = fate else {
            self.drawn += 1;
            self.liveness.track(object);
            return Ok(());
        };
        // Not tracked: said so now.
        match fate {
            Fate::Undrawn => self.undrawn += 1,
            _ => {
                self.untracked += 1;
                self.capped += u64::from(record.tracking == Tracking::Capped);
            }
        }
        write_lifetime(
            &mut self.recording,
            &self.object_lifetime,
            &object,
            record.ticks,
            fate,
        )
    }

    /// Records a finished garbage collection and sweeps the liveness table:
    /// each tracked object found collected gets its `ObjectLifetime`.
    pub fn garbage_collection(
        &mut self,
        vm: &mut impl Vm,
        gc: GcRecord,
    ) -> Result<(), jfr_writer::Error> {
        self.gc_count = self.gc_count.max(gc.id);
        self.last_gc_end = self.last_gc_end.max(gc.end);
        self.heap.pause(Pause {
            start: Ticks(gc.start),
            end: Ticks(gc.end),
        });
        GarbageCollection {
            start_time: Ticks(gc.start),
            duration: gc.end - gc.start,
            gc_id: gc.id.min(i32::MAX as u64) as i32,
        }
        .write(&mut self.recording, &self.garbage_collection)?;
        self.sweep(vm, gc.id, gc.end)
    }

    /// Writes the lifetime of each tracked object that collection `gc_id`
    /// (or one before it) freed, found so at `at`.
    fn sweep(&mut self, vm: &mut impl Vm, gc_id: u64, at: i64) -> Result<(), jfr_writer::Error> {
        let Self {
            liveness,
            recording,
            object_lifetime,
            ..
        } = self;
        let mut written = Ok(());
        // Each death is written as the sweep finds it: gathering them first
        // would grow a vector as large as a young collection's die-off at
        // every sweep. A handle found cleared is released at once; the
        // sweep hands over each object it says is dead exactly once.
        liveness.sweep(
            gc_id,
            |tracked| {
                let collected = vm.is_collected(tracked.handle);
                if collected {
                    vm.release(tracked.handle);
                }
                collected
            },
            |dead| {
                if written.is_ok() {
                    let fate = Fate::Freed {
                        gcs_survived: dead.gcs_survived,
                        gc_id: dead.found_dead_at_gc,
                    };
                    written = write_lifetime(recording, object_lifetime, &dead.object, at, fate);
                }
            },
        );
        written
    }

    /// Writes `heapsampler.AgentStatistics` and flushes the recording.
    ///
    /// When the chunk has reached its size or age limit, its end first
    /// writes a `jdk.OldObjectSample` for each tracked object (up to the
    /// cap), so that the chunk read alone shows the live set at its end,
    /// and renames the chunk end's before `heapsampler.OldObjectSnapshot`;
    /// then what neither the ended chunk nor the new one used is dropped,
    /// from the recording's pools and the writer's caches, except what the
    /// tracked objects hold, and the new chunk starts with the recording's
    /// settings.
    pub fn flush(
        &mut self,
        vm: &mut impl Vm,
        statistics: Statistics,
        ring: RingStats,
    ) -> Result<(), jfr_writer::Error> {
        self.environment.at_flush(&mut self.recording)?;
        self.write_thread_allocations(vm)?;
        if self.recording.chunk_is_due() {
            let objects = self.chunk_end_old_objects();
            self.end_chunk(vm, &objects, statistics, ring)
        } else {
            self.write_statistics(statistics, ring)?;
            self.recording.flush()
        }
    }

    /// Ends the chunk: `objects` as old objects (demotable where the
    /// output can rename them, see [`OldObjects`]), the statistics; once
    /// that is flushed, the previous chunk end's old objects are renamed;
    /// then what neither the ended chunk nor the new one used is dropped
    /// (see [`Writer::flush`]), and the new chunk starts with the
    /// recording's settings.
    fn end_chunk(
        &mut self,
        vm: &mut impl Vm,
        objects: &[TrackedObject<Tracked>],
        statistics: Statistics,
        ring: RingStats,
    ) -> Result<(), jfr_writer::Error> {
        let now = self.recording.clock().now();
        let newest = match &self.old_objects {
            Some(old) if old.at_chunk_ends => {
                self.recording
                    .begin_demotable(&old.event_type, &old.snapshot_type)?;
                let written = self.write_old_objects(vm, now, objects, &[]);
                let newest = self.recording.end_demotable();
                written?;
                newest
            }
            // A heap exhaustion's, in a file that cannot rename them.
            _ => {
                self.write_old_objects(vm, now, objects, &[])?;
                None
            }
        };
        self.write_statistics(statistics, ring)?;
        self.recording.end_chunk()?;
        if let Some(newest) = newest {
            self.demote_chunk_end_old_objects(Some(newest))?;
        }
        self.drop_unused(vm);
        self.active.write(&mut self.recording)?;
        self.environment.at_chunk_start(&mut self.recording, vm)
    }

    /// Writes Java heap exhaustions: the collections the JVM reports since
    /// the last poll (it collected before it gave up: `jdk.GCHeapSummary`
    /// says what that left), a `heapsampler.HeapExhausted` for each, and,
    /// `with_old_objects`, the sampled objects still live as old objects,
    /// ending the chunk as a chunk's end does. Then the file holds them all
    /// (flushed), whatever becomes of the JVM next.
    pub fn heap_exhausted(
        &mut self,
        vm: &mut impl Vm,
        exhaustions: &[Exhaustion],
        with_old_objects: bool,
        statistics: Statistics,
        ring: RingStats,
    ) -> Result<(), jfr_writer::Error> {
        self.heap.poll(&mut self.recording, vm)?;
        let objects = if with_old_objects && self.old_objects.is_some() {
            Some(self.old_objects_to_write())
        } else {
            None
        };
        let mut old_objects = objects.as_ref().map_or(0, Vec::len) as i64;
        for exhaustion in exhaustions {
            let Ok(view) = SampleView::decode(&exhaustion.record) else {
                self.malformed += 1;
                continue;
            };
            let thread = self.thread(vm, view.header.thread);
            let stack = self.stack(vm, &view, view.stack_fingerprint());
            HeapExhausted {
                start_time: Ticks(view.header.ticks),
                event_thread: Some(thread),
                stack_trace: stack.into(),
                message: Some(&exhaustion.message),
                // The first of a burst carries them.
                old_objects: std::mem::take(&mut old_objects),
            }
            .write(&mut self.recording, &self.heap_exhausted)?;
        }
        match objects {
            Some(objects) => self.end_chunk(vm, &objects, statistics, ring),
            None => {
                self.write_statistics(statistics, ring)?;
                self.recording.flush()
            }
        }
    }

    /// Writes a snapshot of the recording so far to the file `to`, the
    /// recording going on untouched ([`Recording::snapshot`]), ended as the
    /// recording's end would end it: a last sweep (in the recording), then,
    /// in the snapshot only, the old objects (the newest chunk end's renamed
    /// in the snapshot, as the end renames them), an `ObjectLifetime` with
    /// `live = true` for every object still tracked, and the live set
    /// (`collected`: a collection was forced right before).
    pub fn snapshot(
        &mut self,
        vm: &mut impl Vm,
        to: &std::path::Path,
        collected: bool,
    ) -> Result<jfr_writer::snapshot::Snapshot, jfr_writer::Error> {
        let now = self.recording.clock().now().0;
        // As at the end (see `finish`).
        if self.gc_count > 0 {
            self.sweep(vm, self.gc_count, now)?;
        }
        self.recording.begin_snapshot_tail()?;
        match self.write_snapshot_tail(vm, now, collected) {
            // The tail's old objects are the snapshot's newest: the newest
            // chunk end's are renamed in it, as the end renames them.
            Ok(()) => match self
                .old_objects
                .as_ref()
                .and_then(|old| old.newest.as_ref())
            {
                Some(newest) => self.recording.end_snapshot_tail_demoting(to, newest),
                None => self.recording.end_snapshot_tail(to),
            },
            Err(error) => {
                self.recording.abandon_snapshot_tail()?;
                Err(error)
            }
        }
    }

    /// What a snapshot ends with ([`Writer::snapshot`]), as of `end`.
    fn write_snapshot_tail(
        &mut self,
        vm: &mut impl Vm,
        end: i64,
        collected: bool,
    ) -> Result<(), jfr_writer::Error> {
        self.say_pause_phases_enabled()?;
        if !self.live {
            return Ok(());
        }
        // The recording's count of objects the cap left out is its own.
        let left_out = self.old_objects.as_ref().map(|old| old.left_out);
        let objects = self.old_objects_to_write();
        if let (Some(old), Some(left_out)) = (self.old_objects.as_mut(), left_out) {
            old.left_out = left_out;
        }
        self.write_old_objects(vm, Ticks(end), &objects, &[])?;
        let Self {
            liveness,
            recording,
            object_lifetime,
            gc_count,
            ..
        } = self;
        for object in liveness.iter() {
            let fate = Fate::Live {
                gcs_survived: gc_count.saturating_sub(object.gc_count_at_allocation),
            };
            write_lifetime(recording, object_lifetime, object, end, fate)?;
        }
        self.write_live_set(end, collected, self.liveness.len())
    }

    /// Writes `heapsampler.LiveSet`: how the `live_objects` objects live at
    /// `at` were found.
    fn write_live_set(
        &mut self,
        at: i64,
        collected: bool,
        live_objects: usize,
    ) -> Result<(), jfr_writer::Error> {
        LiveSet {
            start_time: Ticks(at),
            collected,
            last_collection: Ticks(self.last_gc_end),
            collections: self.gc_count.min(i64::MAX as u64) as i64,
            live_objects: live_objects as i64,
        }
        .write(&mut self.recording, &self.live_set)
    }

    /// Drops the values neither the chunk just ended nor the new one used,
    /// from the recording's pools and the writer's caches, except those
    /// the tracked objects hold; and has the VM forget the threads and
    /// classes it holds that are gone. A value seen again is resolved
    /// again, under a new key.
    fn drop_unused(&mut self, vm: &mut impl Vm) {
        let pinned = self.liveness.iter().flat_map(|object| {
            let tracked = object.handle;
            [
                PoolRef::from(tracked.thread),
                tracked.stack.reference().into(),
                tracked.class.class.into(),
            ]
        });
        self.recording.drop_unused(pinned);
        let recording = &self.recording;
        // A method the VM could not describe is asked again.
        self.methods
            .retain(|_, m| m.as_ref().is_some_and(|m| recording.holds(m.method)));
        self.frames.clear();
        self.classes.retain(|_, c| recording.holds(c.class));
        self.threads.retain(|_, &mut t| recording.holds(t));
        self.stacks.retain(|s| recording.holds(s.reference()));
        if self.boot_loader.is_some_and(|b| !recording.holds(b)) {
            self.boot_loader = None;
        }
        shrink(&mut self.methods);
        shrink(&mut self.classes);
        shrink(&mut self.threads);
        self.thread_allocations.retain_held(recording);
        vm.forget_gone();
    }

    /// How many values the recording's pools hold now.
    pub fn pool_sizes(&self) -> PoolSizes {
        self.recording.pool_sizes()
    }

    fn write_statistics(
        &mut self,
        statistics: Statistics,
        ring: RingStats,
    ) -> Result<(), jfr_writer::Error> {
        let now = self.recording.clock().now();
        let held = self.recording.pool_sizes();
        let events = self.recording.events_written() as i64;
        let bytes = self.recording.bytes_written() as i64;
        AgentStatistics {
            start_time: now,
            samples: statistics.samples as i64,
            events_written: events,
            back_pressure_waits: ring.producer_waits as i64,
            back_pressure_time: ring.producer_wait_time.as_nanos().min(i64::MAX as u128) as i64,
            tracked_objects: self.liveness.len() as i64,
            bytes_written: bytes,
            lost_samples: statistics.lost_samples as i64,
            untracked_objects: self.untracked as i64,
            drawn_samples: self.drawn as i64,
            undrawn_samples: self.undrawn as i64,
            capped_samples: self.capped as i64,
            old_object_cap: self.old_objects.as_ref().map_or(0, |o| o.cap as i64),
            old_objects_left_out: self.old_objects.as_ref().map_or(0, |o| o.left_out as i64),
            constants_held: held.total() as i64,
            stack_traces_held: held.stack_traces as i64,
            threads_held: held.threads as i64,
        }
        .write(&mut self.recording, &self.agent_statistics)
    }

    /// Says `jdk.GCPhasePauseLevel1` enabled, in the file's last chunk
    /// (or a snapshot's tail): once per file, which every rotation keeps,
    /// for Mission Control takes a type with no events as enabled only if
    /// exactly one setting in the file says so (its long-pause rule needs
    /// it). A file cut short by a crash does not say it.
    fn say_pause_phases_enabled(&mut self) -> Result<(), jfr_writer::Error> {
        self.active
            .write_enabled_once(&mut self.recording, self.heap.pause_level_1())
    }

    /// Ends the recording: a last sweep, the old objects (with their paths
    /// to GC roots when asked), an `ObjectLifetime` with `live = true` for
    /// every object still tracked, the live set (`collected`: a collection
    /// was forced right before, so that live means reachable), the final
    /// statistics; then the file is closed. Returns the recording's sink.
    pub fn finish(
        mut self,
        vm: &mut impl Vm,
        statistics: Statistics,
        ring: RingStats,
        collected: bool,
    ) -> Result<S, jfr_writer::Error> {
        // The last collections' notifications, and their pauses.
        self.heap.end(&mut self.recording, vm)?;
        self.say_pause_phases_enabled()?;
        let end = self.recording.clock().now().0;
        // An object the ring handed over after the collection that freed
        // it was not in the table when that collection was swept: sweep
        // once more, so that it is found freed rather than called live.
        if self.gc_count > 0 {
            self.sweep(vm, self.gc_count, end)?;
        }
        let objects = self.old_objects_to_write();
        // Asked for, the walk runs even with no old object: the VM says
        // there is nothing to walk to.
        let paths = match self.roots {
            Some(limits) => {
                let handles: Vec<u64> = objects.iter().map(|o| o.handle.handle).collect();
                vm.paths_to_roots(&handles, &limits)
            }
            None => Vec::new(),
        };
        self.write_old_objects(vm, Ticks(end), &objects, &paths)?;
        let table = std::mem::take(&mut self.liveness);
        let live_objects = table.len();
        for live in table.finish() {
            vm.release(live.object.handle.handle);
            let fate = Fate::Live {
                gcs_survived: live.gcs_survived,
            };
            write_lifetime(
                &mut self.recording,
                &self.object_lifetime,
                &live.object,
                end,
                fate,
            )?;
        }
        if self.live {
            self.write_live_set(end, collected, live_objects)?;
        }
        self.environment.at_flush(&mut self.recording)?;
        self.write_thread_allocations(vm)?;
        self.write_statistics(statistics, ring)?;
        // The end's old objects are in the file before the last chunk
        // end's are renamed.
        self.recording.flush()?;
        self.demote_chunk_end_old_objects(None)?;
        self.recording.finish()
    }

    /// Renames the newest chunk end's old objects (see [`OldObjects`]):
    /// newer ones are in the file, flushed. `newer`: the chunk end's that
    /// are the newest from now on (`None`: the recording's end).
    fn demote_chunk_end_old_objects(
        &mut self,
        newer: Option<DemotableEvents>,
    ) -> Result<(), jfr_writer::Error> {
        let Some(old) = self.old_objects.as_mut() else {
            return Ok(());
        };
        match std::mem::replace(&mut old.newest, newer) {
            Some(previous) => self.recording.demote(previous).map(drop),
            None => Ok(()),
        }
    }

    /// The old objects a chunk's end writes ([`Writer::old_objects_to_write`]):
    /// none where the output cannot rename them later ([`OldObjects`]).
    fn chunk_end_old_objects(&mut self) -> Vec<TrackedObject<Tracked>> {
        match &self.old_objects {
            Some(old) if old.at_chunk_ends => self.old_objects_to_write(),
            _ => Vec::new(),
        }
    }

    /// The tracked objects a chunk's end reports as old objects: the
    /// largest weights first, up to the cap; the rest are counted as left
    /// out.
    fn old_objects_to_write(&mut self) -> Vec<TrackedObject<Tracked>> {
        let Some(old) = self.old_objects.as_mut() else {
            return Vec::new();
        };
        // References first: the table may hold millions of objects.
        let mut objects: Vec<&TrackedObject<Tracked>> = self.liveness.iter().collect();
        let heaviest_first = |a: &&TrackedObject<Tracked>, b: &&TrackedObject<Tracked>| {
            b.weight
                .cmp(&a.weight)
                .then(a.allocation_time.cmp(&b.allocation_time))
        };
        if objects.len() > old.cap {
            old.left_out += (objects.len() - old.cap) as u64;
            objects.select_nth_unstable_by(old.cap, heaviest_first);
            objects.truncate(old.cap);
        }
        objects.sort_unstable_by(heaviest_first);
        objects.into_iter().cloned().collect()
    }

    /// Writes a `jdk.OldObjectSample` for each of `objects`, seen live at
    /// `at`, with its path to a GC root where `paths` has one (`paths` is
    /// empty, or has one entry per object).
    ///
    /// All end at `at` (no duration): the JDK's `jfr view` memory leak
    /// views show one batch, the events ending when the last one read ends
    /// (`LAST_BATCH`: `jdk.jfr.internal.query.Histogram.add` and
    /// `Function.LastBatch`), so one live set must share one end time.
    fn write_old_objects(
        &mut self,
        vm: &mut impl Vm,
        at: Ticks,
        objects: &[TrackedObject<Tracked>],
        paths: &[Option<RootPath>],
    ) -> Result<(), jfr_writer::Error> {
        let Some(old) = self.old_objects.as_ref() else {
            return Ok(());
        };
        let heap_used = self
            .last_known_heap_usage()
            .map_or(0, |bytes| bytes.min(i64::MAX as u64) as i64);
        for (at_index, object) in objects.iter().enumerate() {
            let tracked = object.handle;
            let path = paths.get(at_index).and_then(Option::as_ref);
            let referrer = match path {
                Some(path) => {
                    referrer_chain(&mut self.recording, &mut self.boot_loader, &old.types, path)?
                }
                None => None,
            };
            let root = match path {
                Some(path) => Some(old.types.gc_root(
                    &mut self.recording,
                    path.root.system,
                    path.root.kind,
                    path.root.description.as_deref(),
                )?),
                None => None,
            };
            // JVMTI gives no addresses. Mission Control keys its reference
            // tree on the address (one node per address, 0 ends a chain), so
            // the object's is an identity: its liveness handle, the same at
            // every chunk end, unique among the objects tracked.
            let object_ref = old.types.old_object(
                &mut self.recording,
                tracked.handle,
                Some(tracked.class.class),
                None,
                referrer,
            )?;
            let array_elements = if tracked.class.array {
                vm.array_length(tracked.handle)
            } else {
                None
            };
            let allocation_time = object.allocation_time as i64;
            OldObjectSample {
                start_time: at,
                duration: 0,
                event_thread: Some(tracked.thread),
                stack_trace: tracked.stack.into(),
                allocation_time: Ticks(allocation_time),
                object_size: object.size as i64,
                object_age: (at.0 - allocation_time).max(0),
                last_known_heap_usage: heap_used,
                object: Some(object_ref),
                array_elements: array_elements.unwrap_or(i32::MIN),
                root,
            }
            .write(&mut self.recording, &old.event_type)?;
        }
        Ok(())
    }

    /// Writes a `jdk.ThreadAllocationStatistics` for each thread the JVM
    /// lists, its `thread` the samples' for a thread sampled
    /// ([`crate::threads`]).
    fn write_thread_allocations(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        let Some(threads) = self.thread_allocations.measure(vm) else {
            return Ok(());
        };
        let now = self.recording.clock().now();
        for allocation in &threads {
            let thread = match allocation.key {
                Some(key) => self.thread(vm, key),
                None => self
                    .thread_allocations
                    .unsampled_thread(&mut self.recording, allocation),
            };
            self.thread_allocations.write(
                &mut self.recording,
                now,
                thread,
                allocation.allocated,
            )?;
        }
        Ok(())
    }

    fn thread(&mut self, vm: &mut impl Vm, key: u64) -> ThreadRef {
        if let Some(&thread) = self.threads.get(&key) {
            return thread;
        }
        let info = vm.thread(key);
        let thread = self.recording.thread(Thread {
            os_name: info.java_name.clone(),
            os_thread_id: info.os_thread_id,
            java_name: info.java_name,
            java_thread_id: info.java_thread_id,
            group: None,
        });
        self.threads.insert(key, thread);
        thread
    }

    fn class(&mut self, vm: &mut impl Vm, key: u64) -> PooledClass {
        if let Some(&class) = self.classes.get(&key) {
            return class;
        }
        let class = match vm.class(key) {
            Some(info) => PooledClass {
                class: class_named(&mut self.recording, &mut self.boot_loader, &info),
                array: info.signature.starts_with('['),
            },
            // Unloaded before the writer saw it: named as a frame of an
            // unloaded class is, not left null.
            None => PooledClass {
                class: self.unloaded_class(),
                array: false,
            },
        };
        self.classes.insert(key, class);
        class
    }

    /// The pooled frame of a raw one, its method resolved once per method;
    /// `None` for a frame of a hidden class when those are left out.
    fn frame(&mut self, vm: &mut impl Vm, raw: RawFrame) -> Option<StackFrame> {
        let resolved = match self.methods.entry(raw.method) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => new.insert(resolve_method(
                &mut self.recording,
                &mut self.boot_loader,
                vm,
                raw.method,
            )),
        };
        if !self.hidden_frames && resolved.as_ref().is_some_and(|m| m.hidden) {
            return None;
        }
        let known = resolved.as_ref().map(|m| {
            (
                m.method,
                m.lines.line(raw.location),
                // JVMTI does not say whether a frame is interpreted,
                // compiled or inlined.
                if m.native {
                    FrameType::Native
                } else {
                    FrameType::Unknown
                },
            )
        });
        // The method's class is gone: keep the frame, say so.
        let (method, line, frame_type) =
            known.unwrap_or_else(|| (self.unknown_method(), -1, FrameType::Unknown));
        Some(StackFrame {
            method,
            line_number: line,
            bytecode_index: raw.location.clamp(-1, i32::MAX as i64) as i32,
            frame_type,
        })
    }

    /// The stack trace of a record whose stack has fingerprint `key`,
    /// added if new, with the receipt of its mark in this chunk.
    fn stack(&mut self, vm: &mut impl Vm, view: &SampleView, key: u128) -> Marked<StackTraceRef> {
        if let Some(stack) = self.stacks.get_mut(key) {
            if self.recording.is_marked(*stack) {
                return *stack;
            }
            // Held: `stacks` keeps only the stacks the recording holds.
            if let Some(marked) = self.recording.mark_stack_trace(stack.reference()) {
                *stack = marked;
                return marked;
            }
        }
        // Built in one `StackTrace` kept for the purpose: in recursive code
        // almost every sample's stack is new.
        let mut trace = std::mem::take(&mut self.trace);
        trace.truncated = view.header.truncated;
        trace.frames.clear();
        // Frames of hidden classes left out may leave no frame at all: the
        // sample still gets its (empty) stack trace.
        for raw in view.frames() {
            let resolved = self.frames.get(raw).unwrap_or_else(|| {
                let resolved = self.frame(vm, raw);
                self.frames.insert(raw, resolved);
                resolved
            });
            if let Some(frame) = resolved {
                trace.frames.push(frame);
            }
        }
        // Added, not interned: `stacks` asks the recording once per stack
        // it holds, so the recording's own look-up would find nothing.
        let stack = self.recording.add_stack_trace(&trace);
        self.trace = trace;
        self.stacks.insert(key, stack);
        stack
    }

    /// The class shown for a class, or a frame's, unloaded before the
    /// writer could resolve it.
    fn unloaded_class(&mut self) -> ClassRef {
        let unloaded = ClassInfo {
            signature: "Lunknown/UnloadedClass;".to_owned(),
            hidden: false,
            loader: Loader::Unknown,
        };
        class_named(&mut self.recording, &mut self.boot_loader, &unloaded)
    }

    /// The method shown for a frame whose class was unloaded before the
    /// writer could resolve it.
    fn unknown_method(&mut self) -> MethodRef {
        let class = self.unloaded_class();
        let name = self.recording.symbol("unknownMethod");
        let descriptor = self.recording.symbol("()V");
        self.recording.method(Method {
            class,
            name,
            descriptor,
            modifiers: 0,
            hidden: false,
        })
    }
}

/// Writes an object's `heapsampler.ObjectLifetime`, ended at `end`.
fn write_lifetime<S: Sink>(
    recording: &mut Recording<S>,
    event_type: &EventType,
    object: &TrackedObject<Tracked>,
    end: i64,
    fate: Fate,
) -> Result<(), jfr_writer::Error> {
    let start = object.allocation_time as i64;
    let pooled = object.handle;
    let (live, gcs_survived, freed_by, tracked) = match fate {
        Fate::Freed {
            gcs_survived,
            gc_id,
        } => (false, gcs_survived, gc_id, true),
        Fate::Live { gcs_survived } => (true, gcs_survived, 0, true),
        Fate::Untracked | Fate::Undrawn => (false, 0, 0, false),
    };
    ObjectLifetime {
        start_time: Ticks(start),
        duration: (end - start).max(0),
        event_thread: Some(pooled.thread),
        stack_trace: pooled.stack.into(),
        object_class: Some(pooled.class.class),
        object_size: object.size as i64,
        weight: object.weight as i64,
        live,
        gcs_survived: gcs_survived.min(i32::MAX as u64) as i32,
        freed_by_gc_id: freed_by.min(i32::MAX as u64) as i32,
        tracked,
        tracking_probability: pooled.probability,
    }
    .write(recording, event_type)
}

#[cfg(test)]
mod tests {
    use super::LineTable;

    /// The definition: the entry with the largest start at or before the
    /// location, the last such entry on a tie; -1 when there is none.
    fn line_by_scan(lines: &[(i64, i32)], location: i64) -> i32 {
        lines
            .iter()
            .filter(|(start, _)| *start <= location)
            .max_by_key(|(start, _)| *start)
            .map_or(-1, |&(_, line)| line)
    }

    #[test]
    fn a_line_is_the_one_of_the_last_entry_starting_at_or_before_the_index() {
        let tables: [&[(i64, i32)]; 5] = [
            &[],
            &[(0, 10)],
            // Out of order, as JVMTI may give them.
            &[(9, 12), (0, 10), (5, 11)],
            // Two entries for one index (a line split by the compiler).
            &[(0, 1), (4, 2), (4, 3), (8, 4), (2, 5)],
            // No entry at index 0.
            &[(3, 30), (7, 31)],
        ];
        for lines in tables {
            let table = LineTable::new(lines.to_vec());
            for location in -2..14 {
                assert_eq!(
                    table.line(location),
                    line_by_scan(lines, location),
                    "{lines:?} at {location}"
                );
            }
        }
    }
}
