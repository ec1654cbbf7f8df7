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
//!
//! # Parts
//!
//! [`Writer`] owns the recording and its chunks: it ends a chunk (old
//! objects, statistics, what recent chunks did not use dropped, the next
//! chunk's settings), writes the snapshot and the end, and hands each
//! record and collection to the parts, each of which owns one share:
//!
//! - `pools`: methods, classes, threads and stacks resolved through the
//!   [`Vm`] once each and pooled, with the caches that find them again.
//! - `liveness`: the tracked objects, `heapsampler.ObjectLifetime` (one per
//!   sample) and `heapsampler.LiveSet`.
//! - `old_objects`: `jdk.OldObjectSample` at chunk ends and the end, and
//!   the renaming of earlier chunk ends' ones.
//! - `context`: the settings, the heap's context, the environment and the
//!   threads' allocated bytes.
//! - `watch`: each site's live bytes after each collection that marked
//!   the whole heap, the leak suspects raised from them and the heap's
//!   peaks.
//!
//! The parts use `pools` and none uses [`Writer`]; each takes the
//! recording as an argument.

mod canary;
mod context;
mod liveness;
mod old_objects;
mod pools;
mod watch;

use heapsampler_core::liveness::TrackedObject;
use heapsampler_core::ring::RingStats;
use heapsampler_core::sampling::bytes_weight;
use heapsampler_core::watch::{Group, Suspect};
use jfr_writer::events::{
    self, AgentStatistics, GarbageCollection, HeapExhausted, ObjectAllocationSample,
};
use jfr_writer::{EventType, PoolSizes, Recording, Sink, Ticks};

use crate::environment::{EnvironmentVm, ShutdownRecord};
use crate::heap::{HeapVm, Pause, WholeHeapCollection};
use crate::record::SampleView;
use crate::roots::{RootLimits, RootPath, RootsVm};
use crate::threads::ThreadsVm;
pub use canary::CanaryVm;
use context::Context;
use heapsampler_core::options::{LiveMax, Options};
use liveness::{Liveness, Tracked};
use old_objects::OldObjects;
use pools::Pools;
use watch::{HeapAfter, Judgment, Watching};
pub use watch::{MAX_PEAK_SITES, Notice};

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
pub trait Vm: HeapVm + RootsVm + EnvironmentVm + ThreadsVm + CanaryVm {
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
    /// Whether each site's live bytes are watched for leaks (with `live`).
    pub watch: bool,
    /// The share of the heap's maximum whose new peaks are written, if
    /// watched.
    pub peak_share: Option<f64>,
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
            watch: options.watches(),
            peak_share: options
                .on_peak
                .and(options.watches().then_some(options.peak_share)),
        }
    }
}

/// The writer's state for one recording: the recording, whose chunks it
/// ends, and its parts, each owning one share of what is written.
pub struct Writer<S: Sink> {
    recording: Recording<S>,
    allocation_sample: EventType,
    garbage_collection: EventType,
    agent_statistics: EventType,
    heap_exhausted: EventType,
    /// Methods, classes, threads and stacks, resolved and pooled.
    pools: Pools,
    /// Reused for the stack fingerprints of a batch of records
    /// ([`Writer::samples`]).
    fingerprints: Vec<Option<u128>>,
    /// The tracked objects and their lifetimes.
    liveness: Liveness,
    /// `None` without liveness tracking or with `old_objects=0`.
    old_objects: Option<OldObjects>,
    /// `None` without the watch.
    watching: Option<Watching>,
    /// Whether the end of the recording walks the heap for the old
    /// objects' paths to GC roots.
    roots: Option<RootLimits>,
    /// The settings, the heap's context, the environment and the threads'
    /// allocated bytes.
    context: Context,
    /// Records that could not be decoded (a bug if ever not 0).
    malformed: u64,
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
        let context = Context::register(
            &mut recording,
            settings,
            [&allocation_sample, &object_lifetime],
        )?;
        let old_objects = if settings.live && settings.old_objects > 0 {
            Some(OldObjects::register(&mut recording, settings.old_objects)?)
        } else {
            None
        };
        let garbage_collection = recording.register(events::garbage_collection())?;
        let agent_statistics = recording.register(events::agent_statistics())?;
        let heap_exhausted = recording.register(events::heap_exhausted())?;
        let live_set = recording.register(events::live_set())?;
        let watching = if settings.live && settings.watch {
            Some(Watching::register(&mut recording, settings.peak_share)?)
        } else {
            None
        };
        Ok(Self {
            allocation_sample,
            garbage_collection,
            agent_statistics,
            heap_exhausted,
            recording,
            pools: Pools::new(settings.hidden_frames),
            fingerprints: Vec::new(),
            liveness: Liveness::new(object_lifetime, live_set, settings.live),
            old_objects,
            watching,
            roots: settings.roots,
            context,
            malformed: 0,
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
    /// from ([`Environment::begin`](crate::environment::Environment::begin)).
    pub fn begin_environment(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        self.context.environment.begin(&mut self.recording, vm)
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
        let recording = &mut self.recording;
        let thread =
            (view.header.thread != 0).then(|| self.pools.thread(recording, vm, view.header.thread));
        let stack = if view.frames().next().is_some() {
            Some(
                self.pools
                    .stack(recording, vm, &view, view.stack_fingerprint()),
            )
        } else {
            None
        };
        events::Shutdown {
            start_time: Ticks(view.header.ticks),
            event_thread: thread,
            stack_trace: stack.map_or(None.into(), Into::into),
            reason: Some(shutdown.reason),
        }
        .write(recording, self.context.environment.shutdown_type())
    }

    /// Starts the heap's context: `jdk.JVMInformation`, and the
    /// collections so far taken as before the recording
    /// ([`HeapContext::begin`](crate::heap::HeapContext::begin)). Returns
    /// whether the JVM's management interface answered.
    pub fn begin_heap_context(&mut self, vm: &mut impl Vm) -> Result<bool, jfr_writer::Error> {
        self.context.heap.begin(&mut self.recording, vm)
    }

    /// Writes the collections the JVM notified since the last poll, with
    /// their pauses ([`HeapContext::poll`](crate::heap::HeapContext::poll)).
    pub fn poll_collections(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        self.context.heap.poll(&mut self.recording, vm)
    }

    /// Before a flush and at the end: the collections, the class loading
    /// statistics, and the JVM's information in a new chunk
    /// ([`HeapContext::at_flush`](crate::heap::HeapContext::at_flush)).
    pub fn heap_statistics(&mut self, vm: &mut impl Vm) -> Result<(), jfr_writer::Error> {
        self.context.heap.at_flush(&mut self.recording, vm)
    }

    /// The bytes of the heap in use after the most recent collection, if
    /// known.
    pub fn last_known_heap_usage(&self) -> Option<u64> {
        self.context.heap.last_known_heap_usage()
    }

    /// Collections of the recording not written: before the notifications
    /// began, or refused by a full queue.
    pub fn collections_missed(&self) -> u64 {
        self.context.heap.collections_missed()
    }

    /// The generational ZGC major collections written since the last
    /// call.
    pub fn take_major_collections(&mut self) -> Vec<WholeHeapCollection> {
        self.context.heap.take_major_collections()
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
        self.pools
            .prefetch_stacks(fingerprints.iter().flatten().copied());
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
        let recording = &mut self.recording;
        let thread = self.pools.thread(recording, vm, record.thread);
        let stack = self.pools.stack(recording, vm, view, fingerprint);
        let class = self.pools.class(recording, vm, record.class);
        let weight = bytes_weight(record.size, record.interval).round() as i64;
        ObjectAllocationSample {
            start_time: Ticks(record.ticks),
            event_thread: Some(thread),
            stack_trace: stack.into(),
            object_class: Some(class.class),
            weight,
        }
        .write(recording, &self.allocation_sample)?;
        let site = watch::site_of(fingerprint, record.class);
        self.liveness
            .sample(recording, &record, weight, (thread, stack, class), site)
    }

    /// Records a finished garbage collection and sweeps the liveness table:
    /// each tracked object found collected gets its `ObjectLifetime`.
    pub fn garbage_collection(
        &mut self,
        vm: &mut impl Vm,
        gc: GcRecord,
    ) -> Result<(), jfr_writer::Error> {
        self.liveness.collection(&gc);
        self.context.heap.pause(Pause {
            start: Ticks(gc.start),
            end: Ticks(gc.end),
        });
        GarbageCollection {
            start_time: Ticks(gc.start),
            duration: gc.end - gc.start,
            gc_id: gc.id.min(i32::MAX as u64) as i32,
        }
        .write(&mut self.recording, &self.garbage_collection)?;
        let mut watching = self.watching.as_mut();
        self.liveness
            .sweep(&mut self.recording, vm, gc.id, gc.end, |freed| {
                if let Some(watching) = watching.as_mut() {
                    watching.freed(freed);
                }
            })
    }

    /// The watch's checkpoint after the collections of a pass of the
    /// writer's loop and their notifications: after a collection that
    /// marked the whole heap (then what is tracked is what was live when
    /// it began; the tracked objects are swept once more, for its
    /// notification comes after its pauses) the sites' live bytes and the
    /// suspects raised; after any, a new heap peak. Returns what was
    /// raised, for the session to say and act on; nothing without the
    /// watch.
    pub fn watch(&mut self, vm: &mut impl Vm) -> Result<Vec<Notice>, jfr_writer::Error> {
        let Some(watching) = self.watching.as_mut() else {
            return Ok(Vec::new());
        };
        let now = self.recording.clock().now().0;
        // Canaries before the sweep: one found cleared means a marking
        // ended, which the sweep then finds every sample it freed by. Their
        // clock is the collections' (a canary is made after the last one
        // ended: a sample allocated before then is older).
        let collected_at = self.liveness.last_collection_end();
        let canary = match self.context.heap.canary_kind() {
            Some(kind) => watching.canaries(kind).check(
                vm,
                collected_at,
                self.context.heap.collections_written(),
            ),
            None => None,
        };
        let judgments = self
            .context
            .heap
            .take_whole_heap_collections()
            .into_iter()
            .map(|c| Judgment {
                until: c.start,
                at: c.end,
            })
            .chain(canary.map(|until| Judgment {
                until,
                at: collected_at,
            }));
        if let Some(latest) = judgments.max_by_key(|j| j.until) {
            self.liveness
                .sweep_last(&mut self.recording, vm, now, |freed| watching.freed(freed))?;
            watching.judged(self.liveness.collections(), latest);
        }
        let heap = HeapAfter {
            used: self.context.heap.last_known_heap_usage(),
            max: self.context.heap.max_heap(),
        };
        let pools = &self.pools;
        let collections = self.liveness.collections();
        watching.checkpoint(
            &mut self.recording,
            self.liveness.table_mut(),
            heap,
            collections,
            |tracked| {
                let info = vm.class(pools.class_key(tracked.class.class)?)?;
                Some(crate::signature::external_name(&info.signature))
            },
        )?;
        Ok(watching.take_notices())
    }

    /// With `roots=true`, walks the heap for the paths from GC roots to
    /// the live samples of the sites the leak `notices` of a
    /// [`watch`](Self::watch) name (the heaviest, up to the old objects'
    /// cap: the walk pauses the JVM, up to `roots_time`), and writes the
    /// live set again with them first and their paths, so that the file's
    /// one live set under the JDK's name shows what holds them (in a file
    /// that can rename, as at a chunk's end; else at the end). Apart from
    /// the watch, so that the session says the suspect before the walk.
    pub fn walk_to_suspects_roots(
        &mut self,
        vm: &mut impl Vm,
        notices: &[Notice],
    ) -> Result<(), jfr_writer::Error> {
        let (Some(limits), Some(old)) = (self.roots, self.old_objects.as_mut()) else {
            return Ok(());
        };
        let sites: Vec<u64> = notices
            .iter()
            .filter_map(|notice| match notice {
                Notice::Leak {
                    suspect:
                        Suspect {
                            group: Group::Site(site),
                            ..
                        },
                    ..
                } => Some(*site),
                _ => None,
            })
            .collect();
        if sites.is_empty() {
            return Ok(());
        }
        let mut objects: Vec<_> = self
            .liveness
            .objects()
            .filter(|o| o.handle.entered && sites.contains(&o.handle.site))
            .collect();
        objects.sort_unstable_by_key(|o| std::cmp::Reverse(o.weight));
        objects.truncate(old.cap);
        let handles: Vec<u64> = objects.iter().map(|o| o.handle.handle).collect();
        let paths = vm.paths_to_roots(&handles, &limits);
        old.remember(&handles, paths);
        if !old.at_chunk_ends {
            return Ok(());
        }
        let live_set = old.suspect_live_set(&self.liveness);
        let (event_type, snapshot_type) = (old.event_type.clone(), old.snapshot_type.clone());
        let now = self.recording.clock().now();
        self.recording
            .begin_demotable(&event_type, &snapshot_type)?;
        let written = self.write_old_objects(vm, now, &live_set, &[]);
        let newest = self.recording.end_demotable();
        written?;
        self.recording.flush()?;
        if let (Some(newest), Some(old)) = (newest, self.old_objects.as_mut()) {
            old.demote(&mut self.recording, Some(newest))?;
        }
        Ok(())
    }

    /// Why the watch seldom judges in this JVM, if it does: its
    /// collections do not say when they marked the whole heap.
    pub fn watch_limitation(&self) -> Option<&'static str> {
        self.watching.as_ref()?;
        self.context.heap.whole_heap_unknown()
    }

    /// The sites the watch follows on their own now (0 without it).
    pub fn watched_sites(&self) -> usize {
        self.watching.as_ref().map_or(0, Watching::sites)
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
        self.context
            .at_flush(&mut self.recording, &mut self.pools, vm)?;
        if self.recording.chunk_is_due() {
            let objects = match self.old_objects.as_mut() {
                Some(old) => old.chunk_end_objects(&self.liveness),
                None => Vec::new(),
            };
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
        if let (Some(newest), Some(old)) = (newest, self.old_objects.as_mut()) {
            old.demote(&mut self.recording, Some(newest))?;
        }
        self.drop_unused(vm);
        self.context.at_chunk_start(&mut self.recording, vm)
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
        self.context.heap.poll(&mut self.recording, vm)?;
        let objects = match self.old_objects.as_mut() {
            Some(old) if with_old_objects => Some(old.choose(&self.liveness)),
            _ => None,
        };
        let mut old_objects = objects.as_ref().map_or(0, Vec::len) as i64;
        for exhaustion in exhaustions {
            let Ok(view) = SampleView::decode(&exhaustion.record) else {
                self.malformed += 1;
                continue;
            };
            let recording = &mut self.recording;
            let thread = self.pools.thread(recording, vm, view.header.thread);
            let stack = self
                .pools
                .stack(recording, vm, &view, view.stack_fingerprint());
            HeapExhausted {
                start_time: Ticks(view.header.ticks),
                event_thread: Some(thread),
                stack_trace: stack.into(),
                message: Some(&exhaustion.message),
                // The first of a burst carries them.
                old_objects: std::mem::take(&mut old_objects),
            }
            .write(recording, &self.heap_exhausted)?;
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
    /// recording going on untouched (`Recording::snapshot`), ended as the
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
        // As at the end (see `finish`); the watch goes on after it.
        let mut watching = self.watching.as_mut();
        self.liveness
            .sweep_last(&mut self.recording, vm, now, |freed| {
                if let Some(watching) = watching.as_mut() {
                    watching.freed(freed);
                }
            })?;
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
        self.context.say_pause_phases_enabled(&mut self.recording)?;
        if !self.liveness.is_on() {
            return Ok(());
        }
        // The recording's count of objects the cap left out is its own.
        let objects = match self.old_objects.as_mut() {
            Some(old) => {
                let left_out = old.left_out;
                let objects = old.choose(&self.liveness);
                old.left_out = left_out;
                objects
            }
            None => Vec::new(),
        };
        self.write_old_objects(vm, Ticks(end), &objects, &[])?;
        self.liveness.write_still_live(&mut self.recording, end)?;
        self.liveness
            .write_live_set(&mut self.recording, end, collected, self.liveness.len())
    }

    /// Writes the old objects `objects` live at `at`, with their paths to
    /// GC roots where `paths` has them ([`OldObjects::write`]); nothing
    /// without old objects.
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
            .context
            .heap
            .last_known_heap_usage()
            .map_or(0, |bytes| bytes.min(i64::MAX as u64) as i64);
        old.write(
            &mut self.recording,
            &mut self.pools,
            vm,
            at,
            heap_used,
            objects,
            paths,
        )
    }

    /// Drops the values neither the chunk just ended nor the new one used,
    /// from the recording's pools and the writer's caches, except those
    /// the tracked objects hold; and has the VM forget the threads and
    /// classes it holds that are gone. A value seen again is resolved
    /// again, under a new key.
    fn drop_unused(&mut self, vm: &mut impl Vm) {
        self.recording.drop_unused(self.liveness.pinned());
        self.pools.retain_held(&self.recording);
        self.context.thread_allocations.retain_held(&self.recording);
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
        let liveness = &self.liveness;
        AgentStatistics {
            start_time: now,
            samples: statistics.samples as i64,
            events_written: events,
            back_pressure_waits: ring.producer_waits as i64,
            back_pressure_time: ring.producer_wait_time.as_nanos().min(i64::MAX as u128) as i64,
            tracked_objects: liveness.len() as i64,
            bytes_written: bytes,
            lost_samples: statistics.lost_samples as i64,
            untracked_objects: liveness.untracked as i64,
            drawn_samples: liveness.drawn as i64,
            undrawn_samples: liveness.undrawn as i64,
            capped_samples: liveness.capped as i64,
            old_object_cap: self.old_objects.as_ref().map_or(0, |o| o.cap as i64),
            old_objects_left_out: self.old_objects.as_ref().map_or(0, |o| o.left_out as i64),
            constants_held: held.total() as i64,
            stack_traces_held: held.stack_traces as i64,
            threads_held: held.threads as i64,
        }
        .write(&mut self.recording, &self.agent_statistics)
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
        self.context.heap.end(&mut self.recording, vm)?;
        self.context.say_pause_phases_enabled(&mut self.recording)?;
        if let Some(watching) = self.watching.as_mut() {
            watching.release_canaries(vm);
        }
        let end = self.recording.clock().now().0;
        self.liveness
            .sweep_last(&mut self.recording, vm, end, |_| {})?;
        let objects = match self.old_objects.as_mut() {
            Some(old) => old.choose(&self.liveness),
            None => Vec::new(),
        };
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
        let live_objects = self.liveness.finish(&mut self.recording, vm, end)?;
        if self.liveness.is_on() {
            self.liveness
                .write_live_set(&mut self.recording, end, collected, live_objects)?;
        }
        self.context
            .at_flush(&mut self.recording, &mut self.pools, vm)?;
        self.write_statistics(statistics, ring)?;
        // The end's old objects are in the file before the last chunk
        // end's are renamed.
        self.recording.flush()?;
        if let Some(old) = self.old_objects.as_mut() {
            old.demote(&mut self.recording, None)?;
        }
        self.recording.finish()
    }
}
