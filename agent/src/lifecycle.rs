//! The agent's sessions, from start to stop, in safe code that knows the
//! JVM only through a [`LifecycleVm`]: which session runs, starting one (at
//! `VMInit` or an attach), what an attach asks for (start, stop, a
//! snapshot, or a refusal that says why), and the one stop path, whoever
//! asks (`VMDeath`, `stop`, the end of `duration=`).
//!
//! [`Lifecycle`] owns what the callbacks and the lifecycle share: the
//! running session ([`Running`]), the session's collections for the GC
//! callbacks, and the lock that orders starts and stops.
//!
//! Invariants:
//! - One session at a time, and starts and stops happen one at a time:
//!   whoever starts or stops holds [`Lifecycle::order`], so a stop that
//!   comes late (a duration running out as a `stop` arrives) finds its own
//!   session or none, never the next one half started. Callbacks and the
//!   writer thread never take it.
//! - Callbacks hold the session's read lock ([`Lifecycle::session`]) while
//!   they work, so a stop, which takes the write lock before it closes the
//!   ring, waits for every callback in flight, and none starts after.
//! - The GC callbacks reach the session's collections without that lock
//!   ([`Lifecycle::collections`]): they run at a safepoint and must never
//!   wait for a thread that might itself wait for the safepoint's end.
//! - A stop forces its collection (if asked) while the writer runs, before
//!   the ring closes: the writer sweeps after it, and once more at the end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

use heapsampler_core::announcement::{self, Announcement};
use heapsampler_core::options::{LiveSetAt, LogLevel, Options};
use heapsampler_core::ring::{Consumer, ring_buffer};
use jfr_writer::Clock;
use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard};

use crate::record::max_record_len;
use crate::session::{self, RequestError, RunningCollections, Session, log, say};
use crate::tracking::{ExitCollection, StartVm};

/// An error of the JVM's, or of what the JVM's side prepared, as it tells
/// it.
pub type BoxedError = Box<dyn std::error::Error + Send + Sync>;

/// A call to the JVM that failed.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// Sampling, or an event it needs, could not be enabled.
    #[error("cannot start sampling: {0}")]
    StartSampling(#[source] BoxedError),
    /// The threads to sample could not be listed.
    #[error("cannot list threads: {0}")]
    ListThreads(#[source] BoxedError),
    /// A collection could not be forced.
    #[error("cannot force a garbage collection: {0}")]
    ForceCollection(#[source] BoxedError),
}

/// Why a session could not be started, stopped or dumped: each says so to
/// the user in one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A `stop` or `dump=` found no recording, and no other copy of the
    /// agent that samples.
    #[error("no recording is running")]
    NotRecording,
    /// A `stop` or `dump=` found no recording in this copy of the agent;
    /// another one samples here.
    #[error(
        "no recording is running in the agent loaded from {}; the agent loaded from {} \
         (version {}) samples in this JVM{}: load that file",
        this_library.as_ref().map_or_else(|| "this file".to_owned(), |p| p.display().to_string()),
        other.library.display(),
        other.version,
        other.recording.as_ref().map(|r| format!(" and records to {}", r.display())).unwrap_or_default()
    )]
    RecordingInAnother {
        /// The file this copy was loaded from, if known.
        this_library: Option<PathBuf>,
        /// The copy that samples.
        other: Announcement,
    },
    /// A start found a recording running.
    #[error("a recording is already running (to {}); attach with 'stop' first", file.display())]
    AlreadyRunning {
        /// The running recording's file.
        file: PathBuf,
    },
    /// A start found another copy of the agent recording.
    #[error(
        "a recording is already running (to {}), by the agent loaded from {} (version {}); \
         attach that file with 'stop' first",
        recording.display(),
        other.library.display(),
        other.version
    )]
    RunningInAnother {
        /// Its recording's file.
        recording: PathBuf,
        /// The copy that records.
        other: Announcement,
    },
    /// A start found another copy of the agent holding the sampling.
    #[error(
        "the agent loaded from {} (version {}) samples in this JVM (JVMTI lets one agent \
         sample): attach that file",
        other.library.display(),
        other.version
    )]
    SamplingInAnother {
        /// The copy that samples.
        other: Announcement,
    },
    /// The writer thread could not be started.
    #[error("cannot start the writer thread: {0}")]
    WriterThread(#[source] std::io::Error),
    /// The JVM refused a call.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// The writer took no snapshot request: the recording had ended.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The snapshot asked for was not written.
    #[error("cannot write a snapshot to {}: {why}", to.display())]
    Snapshot {
        /// Where it was to go.
        to: PathBuf,
        /// Why not.
        why: RequestError,
    },
    /// What the JVM's side prepared for a start failed (the JVMTI
    /// environment, the file).
    #[error(transparent)]
    Prepare(BoxedError),
}

/// What the lifecycle asks of the JVM, on the thread that starts or stops
/// a session.
pub trait LifecycleVm: StartVm {
    /// What the JVM's side of a session holds (the agent's: its JVMTI
    /// environment, the callbacks' keys, the exit hook).
    type Jvm;

    /// Enables the events a session needs before sampling starts: the
    /// collections' starts and ends, threads' starts and ends, and where
    /// the JVM can, Java heap exhaustion.
    fn start_events(&mut self) -> Result<(), VmError>;
    /// Starts sampling on every thread (`threads` is `None`), or on those
    /// whose name matches (threads started later are checked as they
    /// start).
    fn start_sampling(&mut self, threads: Option<&glob::Pattern>) -> Result<(), VmError>;
    /// Disables heap exhaustion and threads' starts and ends.
    fn stop_events(&mut self);
    /// Disables sampling, on every thread.
    fn stop_sampling(&mut self);
    /// Disables the collections' starts and ends.
    fn stop_gc_events(&mut self);
    /// Forces a garbage collection, waiting for its end.
    fn force_garbage_collection(&mut self) -> Result<(), VmError>;
    /// Adds the shutdown hook on whose start the exit's collection runs
    /// ([`Lifecycle::collect_before_exit`]), kept in `jvm`; false if the
    /// JVM refused it.
    fn add_exit_hook(&mut self, jvm: &Self::Jvm) -> bool;
    /// Removes `jvm`'s exit hook, if any; `after_exit`: the JVM is exiting,
    /// and the hook has run or never will.
    fn remove_exit_hook(&mut self, jvm: &Self::Jvm, after_exit: bool);
    /// Sets a system property of the JVM, or clears it (`None`).
    fn set_system_property(&mut self, name: &str, value: Option<&str>);
    /// The file this copy of the agent was loaded from, if known.
    fn library_path(&mut self) -> Option<PathBuf>;
    /// Gives the memory the allocator holds free back to the system.
    fn release_free_memory(&mut self);
}

/// The running session and what the JVM's side of it holds.
pub struct Running<J> {
    /// What the callbacks and the writer thread share.
    pub session: Session,
    /// The session's number, from 1: a late stop names the one it ends.
    pub id: u64,
    /// The JVM's side of it.
    pub jvm: J,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// When the JVM's collector can collect for the exit's live set.
    exit_collection: ExitCollection,
    /// Whether the exit hook has started: the exit's collection is its.
    exit_hook_started: AtomicBool,
}

/// The sessions of one loaded agent (see the module's doc).
pub struct Lifecycle<J> {
    session: RwLock<Option<Arc<Running<J>>>>,
    collections: RunningCollections,
    next_id: AtomicU64,
    order: Mutex<()>,
}

impl<J> Default for Lifecycle<J> {
    fn default() -> Self {
        Self::new()
    }
}

impl<J> Lifecycle<J> {
    /// No session yet.
    pub const fn new() -> Self {
        Self {
            session: RwLock::new(None),
            collections: RunningCollections::new(),
            next_id: AtomicU64::new(1),
            order: Mutex::new(()),
        }
    }

    /// The lock whoever starts or stops a session holds throughout.
    pub fn order(&self) -> MutexGuard<'_, ()> {
        self.order.lock()
    }

    /// The running session, under the read lock: a callback holds it while
    /// it works.
    pub fn session(&self) -> RwLockReadGuard<'_, Option<Arc<Running<J>>>> {
        self.session.read()
    }

    /// The running session, if any, held without the lock.
    pub fn running(&self) -> Option<Arc<Running<J>>> {
        self.session.read().clone()
    }

    /// Whether session `id` is the one running.
    pub fn is_running(&self, id: u64) -> bool {
        self.session.read().as_ref().is_some_and(|r| r.id == id)
    }

    /// Whether no callback runs now: a `try_write` that succeeds is a
    /// moment with none, and the lock orders what came before it before
    /// every callback after it. Never waits for the lock: a callback
    /// holding it may be waiting for the writer to drain the ring.
    pub fn no_callback_running(&self) -> bool {
        self.session.try_write().is_some()
    }

    /// The running session's collections, for the GC callbacks.
    pub fn collections(&self) -> &RunningCollections {
        &self.collections
    }

    /// Starts a session recording with `options` on `clock` (the
    /// recording's): the ring, the session's collections, the writer
    /// thread (`spawn_writer`, which drains the ring's consumer), the
    /// events, the announcement and the exit hook, then sampling. `jvm`
    /// makes the JVM's side of the session from its id. The caller holds
    /// [`order`](Self::order).
    pub fn start<V: LifecycleVm<Jvm = J>>(
        &self,
        options: Options,
        clock: Clock,
        vm: &mut V,
        jvm: impl FnOnce(u64) -> J,
        spawn_writer: impl FnOnce(Arc<Running<J>>, Consumer) -> std::io::Result<JoinHandle<()>>,
    ) -> Result<(), Error> {
        // Room for two of the largest records at least, so a push never
        // waits forever.
        let ring_bytes = options.ring.max(2 * max_record_len(options.depth));
        let (producer, mut consumer) = ring_buffer(ring_bytes);
        // The writer wakes for a quarter of the ring, a collection's end,
        // or its timer: once per sample, the context switches would cost
        // more than writing the sample.
        consumer.set_batch(ring_bytes / 4);
        let plan = session::tracking_plan(&options, vm);
        let exit_collection = ExitCollection::of(vm);
        let collections = self.collections.begin(producer.clone());
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let running = Arc::new(Running {
            session: Session::new(options, clock, plan, producer, collections),
            id,
            jvm: jvm(id),
            writer: Mutex::new(None),
            exit_collection,
            exit_hook_started: AtomicBool::new(false),
        });
        let handle = match spawn_writer(Arc::clone(&running), consumer) {
            Ok(handle) => handle,
            Err(e) => {
                self.collections.end();
                return Err(Error::WriterThread(e));
            }
        };
        *running.writer.lock() = Some(handle);
        vm.start_events()?;
        let options = running.session.options();
        log(
            options,
            LogLevel::Info,
            format_args!(
                "recording allocations to {} (interval {} bytes, depth {}, liveness {})",
                options.file.display(),
                options.interval,
                options.depth,
                if options.live { "on" } else { "off" }
            ),
        );
        let filter = options.threads.clone();
        announce(vm, options);
        if exit_collection == ExitCollection::BeforeVmDeath
            && options.collects_at(LiveSetAt::Exit)
            && !vm.add_exit_hook(&running.jvm)
        {
            log(
                options,
                LogLevel::Info,
                "cannot add the shutdown hook that collects before the JVM's exit: \
                 the objects written as live at the exit will include garbage",
            );
        }
        *self.session.write() = Some(running);
        Ok(vm.start_sampling(filter.as_ref())?)
    }

    /// What an attach with `options` asks: a snapshot (`dump=`), a stop,
    /// or a start (`start`, when no recording runs here, by this copy of
    /// the agent or another); or an error saying why none can be. The
    /// caller holds [`order`](Self::order).
    pub fn attach<V: LifecycleVm<Jvm = J>>(
        &self,
        options: Options,
        vm: &mut V,
        start: impl FnOnce(Options, &mut V) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if let Some(to) = &options.dump {
            return self.dump(to, options.collects_at(LiveSetAt::Snapshot), vm);
        }
        let running = self
            .session
            .read()
            .as_ref()
            .map(|running| running.session.options().file.clone());
        match (options.stop, running) {
            (true, Some(_)) => {
                self.stop(vm, None, LiveSetAt::Stop, options.collect);
                Ok(())
            }
            (true, None) => Err(not_recording(vm)),
            (false, Some(file)) => Err(Error::AlreadyRunning { file }),
            (false, None) => match announced_by_another(vm) {
                Some(other) => Err(match other.recording.clone() {
                    Some(recording) => Error::RunningInAnother { recording, other },
                    None => Error::SamplingInAnother { other },
                }),
                None => start(options, vm),
            },
        }
    }

    /// `dump=PATH` at attach: asks the running recording's writer for a
    /// snapshot in `to` and waits until it is written (or has failed);
    /// with `collect`, after a forced collection, so that the snapshot's
    /// live objects are the reachable ones.
    pub fn dump<V: LifecycleVm<Jvm = J>>(
        &self,
        to: &Path,
        collect: bool,
        vm: &mut V,
    ) -> Result<(), Error> {
        // The session is held, not the lock: a `stop` meanwhile waits for
        // the writer, which answers (or refuses) the request before it ends.
        let running = self.running().ok_or_else(|| not_recording(vm))?;
        let collected = collect && force_collection(&running, vm);
        let answer = running.session.request_dump(to, collected)?;
        let outcome = answer
            .recv()
            .unwrap_or(Err(RequestError::EndedBeforeSnapshot));
        let snapshot = outcome.map_err(|why| Error::Snapshot {
            to: to.to_owned(),
            why,
        })?;
        log(
            running.session.options(),
            LogLevel::Info,
            format_args!(
                "snapshot of {} written to {} ({} chunks, {} bytes)",
                running.session.options().file.display(),
                to.display(),
                snapshot.chunks,
                snapshot.bytes
            ),
        );
        Ok(())
    }

    /// Stops sampling and waits until the recording is finished: the
    /// running session, or only session `only` if it is still the one
    /// running. What ends it is `at`: a collection is forced first if
    /// `collect` says so, or if not given, if the session's options do for
    /// `at`. The caller holds [`order`](Self::order).
    pub fn stop<V: LifecycleVm<Jvm = J>>(
        &self,
        vm: &mut V,
        only: Option<u64>,
        at: LiveSetAt,
        collect: Option<bool>,
    ) {
        let running = match self.session.read().as_ref() {
            Some(running) if only.is_none_or(|id| id == running.id) => Arc::clone(running),
            _ => return,
        };
        vm.stop_events();
        vm.stop_sampling();
        // Before the ring closes, while the writer runs: it sweeps after the
        // collection, and once more at the end for the objects still in the
        // ring then.
        if collect.unwrap_or_else(|| running.session.options().collects_at(at)) {
            collect_for_stop(&running, at, vm);
        }
        drop(running);
        // The write lock waits for callbacks in flight; none start after this.
        let Some(running) = self.session.write().take() else {
            return;
        };
        vm.remove_exit_hook(&running.jvm, at == LiveSetAt::Exit);
        running.session.producer().close();
        if let Some(writer) = running.writer.lock().take() {
            let _ = writer.join();
        }
        // The session is over: a collection from now on belongs to no
        // recording.
        self.collections.end();
        withdraw(vm);
        vm.stop_gc_events();
        // The last reference (the writer's went with it): the session's
        // memory is freed here, and given back.
        drop(running);
        vm.release_free_memory();
    }

    /// The exit hook's start, on its thread, as the JVM begins to exit: its
    /// collector's threads still run, and so do the program's own and its
    /// other shutdown hooks. Stops sampling and forces the exit's
    /// collection, as [`stop`](Self::stop) does at VMDeath under the other
    /// collectors: every sample is then of an object that was reachable at
    /// the collection or is found collected. VMDeath does the rest of the
    /// stop.
    pub fn collect_before_exit<V: LifecycleVm<Jvm = J>>(&self, running: &Running<J>, vm: &mut V) {
        running.exit_hook_started.store(true, Ordering::Release);
        {
            // A stop or an attach of another session meanwhile is not undone.
            let _order = self.order();
            if !self.is_running(running.id) {
                return;
            }
            vm.stop_sampling();
        }
        // Not under the order lock: a `Runtime.halt` meanwhile goes on to
        // VMDeath, whose stop must not wait for a collection the JVM's exit
        // may never finish.
        let collected = force_collection(running, vm);
        running.session.set_collected_at_end(collected);
    }
}

/// The collection a stop `at` asks for before the live set: forced now,
/// or at the JVM's exit under ZGC and Shenandoah, the one the exit hook
/// ran ([`Lifecycle::collect_before_exit`]), if any.
fn collect_for_stop<J>(running: &Running<J>, at: LiveSetAt, vm: &mut impl LifecycleVm) {
    let options = running.session.options();
    let collected = match (at, running.exit_collection) {
        (LiveSetAt::Exit, ExitCollection::BeforeVmDeath) => {
            if !running.exit_hook_started.load(Ordering::Acquire) {
                log(
                    options,
                    LogLevel::Info,
                    "no collection at the JVM's exit: it ran no shutdown hooks (Runtime.halt, \
                     or the hook was refused), and this collector cannot collect once it \
                     exits: the objects written as live include garbage",
                );
            }
            // The hook said whether it collected.
            return;
        }
        (LiveSetAt::Exit, ExitCollection::Never) => {
            log(
                options,
                LogLevel::Info,
                "no collection at the JVM's exit under this collector: the objects written as \
                 live include garbage",
            );
            false
        }
        _ => force_collection(running, vm),
    };
    running.session.set_collected_at_end(collected);
}

/// Forces a garbage collection before a live set is taken; returns
/// whether one finished meanwhile, as the GC callbacks saw it (a collector
/// may decline: Epsilon always).
fn force_collection<J>(running: &Running<J>, vm: &mut impl LifecycleVm) -> bool {
    let options = running.session.options();
    let collections = running.session.collections();
    let before = collections.finished_count();
    let started = Instant::now();
    if let Err(e) = vm.force_garbage_collection() {
        say(e);
        return false;
    }
    let collected = collections.finished_count() > before;
    log(
        options,
        LogLevel::Debug,
        format_args!(
            "forced a collection for the live set in {:.1} ms{}",
            started.elapsed().as_secs_f64() * 1e3,
            if collected {
                ""
            } else {
                ", but the collector ran none"
            }
        ),
    );
    collected
}

/// Says in the JVM's system properties that this copy of the agent
/// samples here and records to `options.file`
/// ([`heapsampler_core::announcement`]). Unsaid when this library's path
/// is unknown: then nothing could name the copy to load.
fn announce(vm: &mut impl LifecycleVm, options: &Options) {
    let Some(library) = vm.library_path() else {
        return;
    };
    let announcement = Announcement {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        library,
        recording: Some(
            std::path::absolute(&options.file).unwrap_or_else(|_| options.file.clone()),
        ),
    };
    for (name, value) in announcement.properties() {
        vm.set_system_property(name, value.as_deref());
    }
}

/// Says that no recording runs; this copy still holds the sampling, for
/// its next recording.
fn withdraw(vm: &mut impl LifecycleVm) {
    vm.set_system_property(announcement::property::RECORDING, None);
}

/// Another copy of the agent (loaded from another file) that announces
/// itself in this JVM, if any.
fn announced_by_another(vm: &mut impl LifecycleVm) -> Option<Announcement> {
    let lookup = std::cell::RefCell::new(&mut *vm);
    let announced =
        Announcement::from_properties(|name| lookup.borrow_mut().system_property(name))?;
    (Some(&announced.library) != vm.library_path().as_ref()).then_some(announced)
}

/// Why a `stop` or `dump=` has no recording to reach through this copy of
/// the agent: none runs, or another copy is the one that samples here.
fn not_recording(vm: &mut impl LifecycleVm) -> Error {
    match announced_by_another(vm) {
        Some(other) => Error::RecordingInAnother {
            this_library: vm.library_path(),
            other,
        },
        None => Error::NotRecording,
    }
}
