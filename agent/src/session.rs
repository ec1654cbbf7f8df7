//! One recording session, from the first sample to the finished file, in
//! safe code that knows the JVM only through [`SessionVm`].
//!
//! A [`Session`] is what the allocation callbacks and the writer thread
//! share: the options, the ring's producing end, the sampling interval in
//! force, the counters, and the session's [`Collections`]. [`run_writer`] is
//! the writer thread's loop: it drains the ring into a [`Writer`], adapts the
//! sampling interval to the rate limit, writes the collections the GC
//! callbacks reported, flushes on schedule, and at the end writes what is
//! still live and finishes the recording.
//!
//! Invariants:
//! - The allocation callback's share of a session is a few relaxed atomics
//!   and a ring push: no lock, no allocation, nothing that waits on the
//!   writer except a full ring.
//! - A session's collections are its own: its [`Collections`] is created
//!   with it and dropped with it, and the GC callbacks reach it only through
//!   [`RunningCollections`] while the session runs, so a collection from
//!   before a session or from the gap between two never lands in it.
//! - The ring is closed when the writer loop ends for any reason (a panic
//!   included), so an allocating thread never waits for a writer that is
//!   gone.
//! - Every snapshot asked for ([`Session::request_dump`]) and every heap
//!   exhaustion reported ([`Session::report_exhaustion`]) is answered: by
//!   the writer, which owns the file, or, once its loop has ended, with an
//!   error; none is accepted after that.

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use heapsampler_core::liveness::TrackingDraw;
use heapsampler_core::options::{
    LiveMax, LiveRate, LogLevel, MAX_INTERVAL, Mode, Options, WatchAction,
};
use heapsampler_core::rate_limit::{RateLimiter, WINDOW};
use heapsampler_core::ring::{CachePadded, Consumer, Producer, RingStats, WaitOutcome};
use heapsampler_core::tracking::{
    self, AUTO_TRACKED_PER_SECOND, MAX_TRACKED_SINCE_MAJOR, TrackedSinceMajor, TrackingShare,
};
use jfr_writer::snapshot::Snapshot;
use jfr_writer::{Clock, Recording, Sink};
use parking_lot::Mutex;

use crate::environment::ShutdownRecord;
use crate::heap::WholeHeapCollection;
use crate::record::Tracking;
use crate::tracking::{self as plan, StartVm, TrackingPlan};
use crate::writer::{self, Exhaustion, GcRecord, RecordingSettings, Statistics, Writer};

/// Writes `message` on stderr if the options' log level is `level` or more.
pub fn log(options: &Options, level: LogLevel, message: impl std::fmt::Display) {
    if options.log >= level {
        say(message);
    }
}

/// One line on stderr. Never panics (a closed stderr must not kill a thread).
pub fn say(message: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "heapsampler: {message}");
}

/// What the writer loop asks of the JVM beyond what the [`Writer`] asks.
pub trait SessionVm: writer::Vm {
    /// Sets the JVM's mean sampling interval, in bytes: the rate limiter's
    /// lever.
    fn set_sampling_interval(&mut self, interval: u64);

    /// The session's `duration=` is over: stop it the one way a recording
    /// stops (stop sampling, wait for the callbacks in flight, close the
    /// ring), from another thread, for the writer loop goes on draining the
    /// ring until it is closed and then finishes the file. Called once.
    fn duration_over(&mut self, session: &Session);
}

/// A garbage collection as the GC callbacks saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collection {
    /// When it started (when it finished, if its start was not seen).
    pub start: Instant,
    /// When it finished.
    pub end: Instant,
}

/// The collections one session's GC callbacks reported and its writer has
/// not written yet. A plain mutex held for a push or a swap: GC callbacks
/// run at a safepoint and must never wait for a thread that might itself be
/// waiting for the safepoint to end.
#[derive(Debug, Default)]
pub struct Collections {
    log: Mutex<CollectionLog>,
    /// Collections finished so far: whether one ran between two moments.
    finished: AtomicU64,
    /// The session's ring, whose consumer (the writer) each collection's
    /// end wakes, so that it sweeps and reads the collection's figures at
    /// once and otherwise sleeps until samples or a flush are due. `None`
    /// for a writer driven by hand. The wake takes the ring's own lock,
    /// which no thread holds across a JNI call, so never waits for the
    /// safepoint to end either.
    writer: Option<Producer>,
}

#[derive(Debug, Default)]
struct CollectionLog {
    /// The start of the collection running now, if its start was seen.
    started: Option<Instant>,
    finished: Vec<Collection>,
}

impl Collections {
    /// Collections whose ends wake the consumer of `writer`'s ring.
    pub fn waking(writer: Producer) -> Self {
        Self {
            writer: Some(writer),
            ..Self::default()
        }
    }

    /// A collection started at `at`.
    pub fn started(&self, at: Instant) {
        self.log.lock().started = Some(at);
    }

    /// A collection finished at `at`; wakes the writer.
    pub fn finished(&self, at: Instant) {
        {
            let mut log = self.log.lock();
            let start = log.started.take().unwrap_or(at);
            log.finished.push(Collection { start, end: at });
        }
        self.finished.fetch_add(1, Ordering::Release);
        if let Some(writer) = &self.writer {
            writer.wake_consumer();
        }
    }

    /// How many collections finished so far.
    pub fn finished_count(&self) -> u64 {
        self.finished.load(Ordering::Acquire)
    }

    /// The finished collections not taken yet, oldest first.
    pub fn take(&self) -> Vec<Collection> {
        std::mem::take(&mut self.log.lock().finished)
    }
}

/// Where the GC callbacks find the running session's [`Collections`]: set
/// while a session runs, empty otherwise, so that a collection outside any
/// session is recorded nowhere. Its own plain mutex, for the reason given at
/// [`Collections`]; it is held for a clone or a swap only.
#[derive(Debug, Default)]
pub struct RunningCollections(Mutex<Option<Arc<Collections>>>);

impl RunningCollections {
    /// No session running.
    pub const fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// A new session's collections, which the GC callbacks report to from
    /// now until [`RunningCollections::end`], each end waking the consumer
    /// of `writer`'s ring.
    pub fn begin(&self, writer: Producer) -> Arc<Collections> {
        let collections = Arc::new(Collections::waking(writer));
        *self.0.lock() = Some(Arc::clone(&collections));
        collections
    }

    /// The session ended: collections from now on are recorded nowhere.
    pub fn end(&self) {
        *self.0.lock() = None;
    }

    /// The GC callback of a collection's start.
    pub fn started(&self, at: Instant) {
        if let Some(collections) = self.running() {
            collections.started(at);
        }
    }

    /// The GC callback of a collection's end.
    pub fn finished(&self, at: Instant) {
        if let Some(collections) = self.running() {
            collections.finished(at);
        }
    }

    fn running(&self) -> Option<Arc<Collections>> {
        self.0.lock().clone()
    }
}

/// What the allocation callbacks and the writer thread share for one
/// recording.
#[derive(Debug)]
pub struct Session {
    options: Options,
    clock: Clock,
    producer: Producer,
    collections: Arc<Collections>,
    /// Which samples' liveness is tracked.
    plan: TrackingPlan,
    /// When the session began, in the clock's ticks: the share's first
    /// window begins then, its samples counted from the first.
    started: u64,
    /// The probability with which a sample liveness covers is tracked now
    /// (an `f64`'s bits): 1 unless the plan sets a share, which the writer
    /// adapts ([`TrackingShare`]).
    tracking_probability: AtomicU64,
    /// The sample number past which the share's window has spent its
    /// budget: samples past it, taken before the writer sets the next
    /// share, are drawn with a falling probability
    /// ([`tracking::probability_past_budget`]). `u64::MAX` without a share.
    tracking_until: AtomicU64,
    /// The share's window budget ([`TrackingShare::burst_budget`]).
    tracking_budget: f64,
    /// Samples the plan's size limit excluded from liveness, counted only
    /// under a share (which is set from the others).
    excluded: AtomicU64,
    /// Samples tracked so far, counted only under the cap. Added to by
    /// the callbacks that track (a few a second), read by every callback
    /// that draws: a line of its own.
    tracked: CachePadded<AtomicU64>,
    /// While `tracked` is at or above it, samples are capped: the count of
    /// samples tracked when the last major collection began, plus the cap
    /// (`u64::MAX` without a cap).
    tracked_limit: AtomicU64,
    /// The sampling interval in force (the rate limiter raises it).
    interval: AtomicU64,
    /// Samples the JVM handed the callbacks. Every callback adds to it, so
    /// it has a cache line of its own: next to what callbacks only read
    /// (the interval, the options, the ring), each addition on another
    /// core would make their next read a miss.
    samples: CachePadded<AtomicU64>,
    /// When `samples` reaches this, the callback wakes the writer (which
    /// otherwise takes samples in batches): the rate limiter's window budget
    /// is spent. `u64::MAX` without a rate.
    wake_writer_at: AtomicU64,
    /// Samples the ring refused (closed while they were taken).
    lost: AtomicU64,
    /// Whether a collection was forced right before the ring closed: the
    /// live objects the recording's end writes are then the reachable ones.
    collected_at_end: AtomicBool,
    /// Snapshots and heap exhaustions for the writer, not taken yet.
    requests: Mutex<Requests>,
    /// The JVM shutting down, seen at VMDeath before the ring closed:
    /// written as the recording ends.
    shutdown: Mutex<Option<ShutdownRecord>>,
}

/// How a snapshot asked of the writer turned out: what it copied, or why
/// it failed.
pub type DumpOutcome = Result<Snapshot, RequestError>;

/// Why the writer did not do what a callback or an attach asked of it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RequestError {
    /// The writer loop had ended: it takes no request any more.
    #[error("the recording has ended")]
    Ended,
    /// The writer loop ended before it wrote the snapshot asked for.
    #[error("the recording ended before the snapshot")]
    EndedBeforeSnapshot,
    /// Writing failed: the writer's error, as it reads (the writer ends
    /// with the error itself, and an I/O error cannot be copied to each
    /// request it failed).
    #[error("{0}")]
    Failed(Arc<str>),
}

/// Why an `exclusive=true` recording's file could not be claimed
/// ([`claim_file`]).
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// The draft recording, written first, could not be.
    #[error("cannot create {}: {source}", file.display())]
    Draft {
        /// The file to claim.
        file: PathBuf,
        /// Why.
        source: jfr_writer::Error,
    },
    /// The draft could not be linked to the file's name.
    #[error("cannot create {}: {source}", file.display())]
    Link {
        /// The file to claim.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A snapshot asked of the writer.
#[derive(Debug)]
struct DumpRequest {
    to: PathBuf,
    /// Whether a collection was forced right before it was asked for.
    collected: bool,
    answer: mpsc::Sender<DumpOutcome>,
}

/// What waits for the writer thread.
#[derive(Debug, Default)]
struct Requests {
    /// The writer loop has ended: nothing is taken any more.
    closed: bool,
    dumps: Vec<DumpRequest>,
    /// Each answered once written (and flushed) or given up.
    exhaustions: Vec<(Exhaustion, mpsc::Sender<Result<(), RequestError>>)>,
}

/// How long the old objects written at a heap exhaustion stand for the
/// exhaustions that follow: a program that catches `OutOfMemoryError` and
/// goes on may exhaust the heap in a loop, on every thread, and each write
/// of the old objects ends a chunk. Each exhaustion still gets its marker.
pub const OLD_OBJECTS_AT_EXHAUSTION_EVERY: Duration = Duration::from_secs(60);

impl Session {
    /// A session recording with `options` on `clock` (the recording's),
    /// tracking the liveness of the samples `plan` says, pushing samples
    /// through `producer`, with the collections `collections` (from
    /// [`RunningCollections::begin`]).
    pub fn new(
        options: Options,
        clock: Clock,
        plan: TrackingPlan,
        producer: Producer,
        collections: Arc<Collections>,
    ) -> Self {
        Self {
            interval: AtomicU64::new(options.interval),
            options,
            clock,
            producer,
            collections,
            plan,
            started: clock.now().0.max(0) as u64,
            tracking_probability: AtomicU64::new(1f64.to_bits()),
            // The first window's, at q = 1, from the first sample: the
            // writer may take a while to start.
            tracking_until: AtomicU64::new(plan.per_second.map_or(u64::MAX, |rate| {
                TrackingShare::new(rate).samples_left_in_window()
            })),
            tracking_budget: plan
                .per_second
                .map_or(0.0, |rate| TrackingShare::new(rate).burst_budget()),
            excluded: AtomicU64::new(0),
            tracked: CachePadded(AtomicU64::new(0)),
            tracked_limit: AtomicU64::new(if plan.capped {
                MAX_TRACKED_SINCE_MAJOR
            } else {
                u64::MAX
            }),
            samples: CachePadded(AtomicU64::new(0)),
            wake_writer_at: AtomicU64::new(u64::MAX),
            lost: AtomicU64::new(0),
            collected_at_end: AtomicBool::new(false),
            requests: Mutex::new(Requests::default()),
            shutdown: Mutex::new(None),
        }
    }

    /// Reports the JVM shutting down (VMDeath), before the recording is
    /// stopped: its end writes it (`jdk.Shutdown`).
    pub fn report_shutdown(&self, shutdown: ShutdownRecord) {
        *self.shutdown.lock() = Some(shutdown);
    }

    /// Asks the writer for a snapshot of the recording so far in the file
    /// `to`, as if the recording ended now (its live objects at its end),
    /// and wakes it; the answer comes on the returned receiver. `collected`:
    /// a collection was forced right before. Fails if the recording has
    /// ended.
    pub fn request_dump(
        &self,
        to: &Path,
        collected: bool,
    ) -> Result<mpsc::Receiver<DumpOutcome>, RequestError> {
        let (answer, receiver) = mpsc::channel();
        self.request(|requests| {
            requests.dumps.push(DumpRequest {
                to: to.to_owned(),
                collected,
                answer,
            })
        })?;
        Ok(receiver)
    }

    /// Reports a Java heap exhaustion to the writer, which writes its marker
    /// (and the old objects, at most every
    /// [`OLD_OBJECTS_AT_EXHAUSTION_EVERY`]) and flushes; the answer comes
    /// on the returned receiver once the file holds them. Fails if the
    /// recording has ended.
    pub fn report_exhaustion(
        &self,
        exhaustion: Exhaustion,
    ) -> Result<mpsc::Receiver<Result<(), RequestError>>, RequestError> {
        let (answer, receiver) = mpsc::channel();
        self.request(|requests| requests.exhaustions.push((exhaustion, answer)))?;
        Ok(receiver)
    }

    /// Adds a request, unless the writer loop has ended, and wakes the
    /// writer.
    fn request(&self, add: impl FnOnce(&mut Requests)) -> Result<(), RequestError> {
        {
            let mut requests = self.requests.lock();
            if requests.closed {
                return Err(RequestError::Ended);
            }
            add(&mut requests);
        }
        self.producer.wake_consumer();
        Ok(())
    }

    /// The snapshots asked for since the last call.
    fn take_dumps(&self) -> Vec<DumpRequest> {
        std::mem::take(&mut self.requests.lock().dumps)
    }

    /// The heap exhaustions reported since the last call.
    fn take_exhaustions(&self) -> Vec<(Exhaustion, mpsc::Sender<Result<(), RequestError>>)> {
        std::mem::take(&mut self.requests.lock().exhaustions)
    }

    /// Refuses requests from now on, and answers those still waiting.
    fn close_requests(&self) {
        let (dumps, exhaustions) = {
            let mut requests = self.requests.lock();
            requests.closed = true;
            (
                std::mem::take(&mut requests.dumps),
                std::mem::take(&mut requests.exhaustions),
            )
        };
        for dump in dumps {
            let _ = dump.answer.send(Err(RequestError::EndedBeforeSnapshot));
        }
        for (_, answer) in exhaustions {
            let _ = answer.send(Err(RequestError::Ended));
        }
    }

    /// Says whether a collection was forced right before the recording's
    /// end (the ring's closing), for its live set ([`writer::Writer::finish`]).
    pub fn set_collected_at_end(&self, collected: bool) {
        self.collected_at_end.store(collected, Ordering::Relaxed);
    }

    /// The session's collections, as the GC callbacks report them.
    #[inline]
    pub fn collections(&self) -> &Collections {
        &self.collections
    }

    /// The options the session was started with.
    #[inline]
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The recording's clock.
    #[inline]
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The ring's producing end.
    #[inline]
    pub fn producer(&self) -> &Producer {
        &self.producer
    }

    /// Whether the liveness of sample number `taken` ([`Session::count_sample`]),
    /// of `size` bytes, is tracked: not if liveness does not cover it, nor
    /// past the cap; otherwise drawn on this thread's `draw` with the
    /// probability in force (`seed` starts the thread's sequence). A few
    /// relaxed atomics: the share and the cap, read; the count of samples
    /// tracked, added to when capped.
    #[inline]
    pub fn tracking(
        &self,
        size: u64,
        taken: u64,
        draw: &mut TrackingDraw,
        seed: impl FnOnce() -> u64,
    ) -> Tracking {
        if !self.options.live {
            return Tracking::Excluded;
        }
        if size >= self.plan.live_max {
            if self.plan.per_second.is_some() {
                self.excluded.fetch_add(1, Ordering::Relaxed);
            }
            return Tracking::Excluded;
        }
        // Decided before the draw, so that the samples drawn are drawn
        // with a known probability. Relaxed: callbacks racing past the
        // limit may track a few more than it, never fewer.
        if self.plan.capped
            && self.tracked.0.load(Ordering::Relaxed) >= self.tracked_limit.load(Ordering::Relaxed)
        {
            return Tracking::Capped;
        }
        let mut probability = f64::from_bits(self.tracking_probability.load(Ordering::Relaxed));
        // Relaxed: a probability and a bound from two windows make a
        // probability too, and the sample carries the one it is drawn with.
        let until = self.tracking_until.load(Ordering::Relaxed);
        if taken > until {
            probability =
                tracking::probability_past_budget(probability, taken - until, self.tracking_budget);
        }
        if !draw.track(probability, seed) {
            return Tracking::NotDrawn(probability);
        }
        if self.plan.capped {
            self.tracked.0.fetch_add(1, Ordering::Relaxed);
        }
        Tracking::Drawn(probability)
    }

    /// The sampling interval in force.
    #[inline]
    pub fn interval(&self) -> u64 {
        self.interval.load(Ordering::Relaxed)
    }

    /// Counts a sample; returns how many were taken, this one included.
    #[inline]
    pub fn count_sample(&self) -> u64 {
        self.samples.0.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Counts a sample the ring refused.
    #[inline]
    pub fn count_lost(&self) {
        self.lost.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the callback that took sample number `taken` wakes the
    /// writer: the rate limiter's budget for its window is spent.
    #[inline]
    pub fn wakes_writer(&self, taken: u64) -> bool {
        taken >= self.wake_writer_at.load(Ordering::Relaxed)
    }

    /// The counters `heapsampler.AgentStatistics` reports.
    pub fn statistics(&self) -> Statistics {
        Statistics {
            samples: self.samples.0.load(Ordering::Relaxed),
            lost_samples: self.lost.load(Ordering::Relaxed),
        }
    }

    /// What the recording was started with, as written at its start.
    fn settings(&self) -> RecordingSettings {
        RecordingSettings::of(&self.options)
    }
}

/// Closes the ring when the writer loop ends for any reason (a panic
/// included), so allocating threads never wait for a writer that is gone,
/// and answers the requests still waiting.
struct CloseOnExit<'a>(&'a Session);

impl Drop for CloseOnExit<'_> {
    fn drop(&mut self) {
        self.0.producer.close();
        self.0.close_requests();
    }
}

/// Records the writer takes from the ring at a time: their stack look-ups
/// overlap ([`Writer::samples`]), and a batch's records (under 30 KB at the
/// default depth) and the slots they look up stay in cache until written.
const SAMPLE_BATCH: usize = 32;

/// How often the writer looks at the rate limiter at least: a quarter of
/// its window, so that a burst raises the interval within the window.
const RATE_LIMIT_TICK: Duration = Duration::from_nanos((WINDOW.as_nanos() / 4) as u64);

/// How often the writer looks at the tracking share at least: a quarter of
/// its window.
const TRACKING_TICK: Duration = Duration::from_nanos((tracking::WINDOW.as_nanos() / 4) as u64);

/// The snapshots the watch took: how many, and when the last.
#[derive(Debug, Default)]
struct AutoDumps {
    taken: u64,
    last: Option<Instant>,
}

/// Says what the watch raised (at log level `info`), walks to the roots of
/// a suspect's samples (with `roots=true`), and takes a snapshot
/// where the options ask for one (`on_leak=dump`, `on_peak=dump`), at most
/// once per `auto_dump_every`: a snapshot skipped for that is said too.
fn answer_watch<S: Sink>(
    session: &Session,
    writer: &mut Writer<S>,
    vm: &mut impl SessionVm,
    notices: &[writer::Notice],
    ring: RingStats,
    dumps: &mut AutoDumps,
) -> Result<(), jfr_writer::Error> {
    let options = &session.options;
    let mut reason = None;
    for notice in notices {
        log(options, LogLevel::Info, notice);
        let (action, why) = match notice {
            writer::Notice::Leak { .. } => (Some(options.on_leak), "leak"),
            writer::Notice::Peak { .. } => (options.on_peak, "peak"),
        };
        if action == Some(WatchAction::Dump) {
            reason = reason.or(Some(why));
        }
    }
    // After the lines that say why, and before a snapshot, which shows
    // the paths.
    writer.walk_to_suspects_roots(vm, notices)?;
    let Some(reason) = reason else {
        return Ok(());
    };
    if let Some(last) = dumps
        .last
        .filter(|last| last.elapsed() < options.auto_dump_every)
    {
        log(
            options,
            LogLevel::Info,
            format_args!(
                "no snapshot for this {reason}: the last was {} s ago (auto_dump_every={} s)",
                last.elapsed().as_secs(),
                options.auto_dump_every.as_secs()
            ),
        );
        return Ok(());
    }
    dumps.taken += 1;
    dumps.last = Some(Instant::now());
    let to = options.auto_dump_path(reason, dumps.taken);
    // One flush makes the file hold every sample drained so far.
    writer.heap_statistics(vm)?;
    writer.flush(vm, session.statistics(), ring)?;
    match writer.snapshot(vm, &to, false) {
        Ok(_) => log(
            options,
            LogLevel::Info,
            format_args!("wrote the snapshot {}", to.display()),
        ),
        // The recording goes on: a snapshot that could not be written is
        // said, not fatal.
        Err(error) => say(format_args!(
            "writing the snapshot {} failed: {error}",
            to.display()
        )),
    }
    Ok(())
}

/// Moves the cap on samples tracked to the major collections that ended
/// since the last call: [`MAX_TRACKED_SINCE_MAJOR`] more than were tracked
/// when the last of them began. Says (at log level debug) when the cap
/// holds, once for each limit (`said`: the last said).
fn lift_cap(
    session: &Session,
    majors: &[WholeHeapCollection],
    since: &mut TrackedSinceMajor,
    said: &mut u64,
) {
    let before = since.limit();
    for major in majors {
        since.major_ended(major.start);
    }
    let limit = since.limit();
    if limit != before {
        session.tracked_limit.store(limit, Ordering::Relaxed);
    }
    let tracked = session.tracked.0.load(Ordering::Relaxed);
    if tracked >= limit && *said != limit {
        *said = limit;
        log(
            &session.options,
            LogLevel::Debug,
            format_args!(
                "liveness: {MAX_TRACKED_SINCE_MAJOR} samples tracked since the last major \
                 collection began; no more until the next one ends"
            ),
        );
    }
}

/// The writer thread's loop: writes `session`'s samples from `consumer` and
/// its collections into `recording` until the ring is closed and drained,
/// then finishes the recording and returns its sink. The ring is closed
/// when this returns, however it returns.
pub fn run_writer<S: Sink>(
    session: &Session,
    recording: Recording<S>,
    mut consumer: Consumer,
    vm: &mut impl SessionVm,
) -> Result<S, jfr_writer::Error> {
    let _close = CloseOnExit(session);
    write_recording(session, recording, &mut consumer, vm)
}

/// Says how writing the recording ended: at log level `info` on success,
/// always on failure.
pub fn report(session: &Session, outcome: &Result<(), jfr_writer::Error>) {
    let options = &session.options;
    match outcome {
        Ok(()) => {
            let statistics = session.statistics();
            log(
                options,
                LogLevel::Info,
                format_args!(
                    "wrote {} ({} samples, {} lost)",
                    options.file.display(),
                    statistics.samples,
                    statistics.lost_samples
                ),
            )
        }
        Err(error) => say(format_args!(
            "writing {} failed: {error}",
            options.file.display()
        )),
    }
}

fn write_recording<S: Sink>(
    session: &Session,
    recording: Recording<S>,
    consumer: &mut Consumer,
    vm: &mut impl SessionVm,
) -> Result<S, jfr_writer::Error> {
    let options = &session.options;
    let mut writer = Writer::new(recording, &session.settings())?;
    // The VM says (at log level debug) why, if it has no management
    // interface to answer.
    writer.begin_heap_context(vm)?;
    if let Some(limitation) = writer.watch_limitation() {
        log(options, LogLevel::Info, format_args!("watch: {limitation}"));
    }
    writer.begin_environment(vm)?;
    let clock = writer.clock();
    let mut next_flush = Instant::now() + options.flush;
    let mut gc_count = 0;
    let mut limiter = options
        .rate
        .map(|rate| RateLimiter::new(rate, options.interval, MAX_INTERVAL));
    let mut samples_seen = 0;
    let mut share = session.plan.per_second.map(|rate| {
        let mut share = TrackingShare::new(rate);
        share.observe(0, session.started);
        share
    });
    let mut eligible_seen = 0;
    let mut since_major = session.plan.capped.then(TrackedSinceMajor::new);
    let mut cap_said = 0;
    let mut old_objects_at_exhaustion: Option<Instant> = None;
    let mut auto_dumps = AutoDumps::default();
    // `None` once asked to stop, or without a duration.
    let mut deadline = options.duration.map(|duration| Instant::now() + duration);
    loop {
        // The limiter and the share first: draining a full ring takes
        // milliseconds, in which a burst goes on at the old interval and
        // share. Both count samples taken, not yet written: they bound
        // what is taken.
        let samples = session.samples.0.load(Ordering::Relaxed);
        let now = clock.now().0.max(0) as u64;
        // The callback that takes sample number `wake_at` wakes the writer.
        let mut wake_at = u64::MAX;
        if let Some(limiter) = limiter.as_mut() {
            if let Some(interval) = limiter.observe(samples - samples_seen, now) {
                // Records carry the interval they were taken at, so weights
                // stay right across the change.
                session.interval.store(interval, Ordering::Relaxed);
                vm.set_sampling_interval(interval);
                log(
                    options,
                    LogLevel::Debug,
                    format_args!("sampling interval now {interval} bytes"),
                );
            }
            samples_seen = samples;
            wake_at = wake_at.min(samples + limiter.samples_left_in_window());
        }
        if let Some(share) = share.as_mut() {
            let eligible = samples.saturating_sub(session.excluded.load(Ordering::Relaxed));
            if let Some(probability) = share.observe(eligible.saturating_sub(eligible_seen), now) {
                // Records carry the probability they were drawn with.
                session
                    .tracking_probability
                    .store(probability.to_bits(), Ordering::Relaxed);
                log(
                    options,
                    LogLevel::Debug,
                    format_args!(
                        "liveness: each sample now tracked with probability {probability:.3e} \
                         (about {:.0} samples a second)",
                        share.estimated_eligible_per_second()
                    ),
                );
            }
            eligible_seen = eligible.max(eligible_seen);
            let until = samples.saturating_add(share.samples_left_in_window());
            session.tracking_until.store(until, Ordering::Relaxed);
            wake_at = wake_at.min(until);
        }
        session.wake_writer_at.store(wake_at, Ordering::Relaxed);
        if let Some(since) = since_major.as_mut() {
            since.note(now as i64, session.tracked.0.load(Ordering::Relaxed));
        }
        let mut failed = None;
        consumer.drain_batches(SAMPLE_BATCH, |batch| {
            if options.mode == Mode::Discard {
                writer.discard_samples(vm, batch.iter());
            } else if failed.is_none() {
                failed = writer.samples(vm, batch.iter()).err();
            }
        });
        if let Some(error) = failed {
            return Err(error);
        }
        write_collections(session, &mut writer, vm, &clock, &mut gc_count)?;
        let majors = writer.take_major_collections();
        let notices = writer.watch(vm)?;
        if !notices.is_empty() {
            let ring = consumer.stats();
            answer_watch(session, &mut writer, vm, &notices, ring, &mut auto_dumps)?;
            next_flush = Instant::now() + options.flush;
        }
        // After the collections: the JVM collected before it gave up, and
        // the old objects are what that collection left.
        let exhaustions = session.take_exhaustions();
        if !exhaustions.is_empty() {
            let with_old_objects = old_objects_at_exhaustion
                .is_none_or(|at| at.elapsed() >= OLD_OBJECTS_AT_EXHAUSTION_EVERY);
            if with_old_objects {
                old_objects_at_exhaustion = Some(Instant::now());
            }
            let (reported, answers): (Vec<Exhaustion>, Vec<_>) = exhaustions.into_iter().unzip();
            let written = writer.heap_exhausted(
                vm,
                &reported,
                with_old_objects,
                session.statistics(),
                consumer.stats(),
            );
            next_flush = Instant::now() + options.flush;
            let outcome = written
                .as_ref()
                .map(|_| ())
                .map_err(|e| RequestError::Failed(e.to_string().into()));
            for answer in answers {
                let _ = answer.send(outcome.clone());
            }
            written?;
        }
        let dumps = session.take_dumps();
        if !dumps.is_empty() {
            // One flush makes the file hold every sample drained so far.
            writer.heap_statistics(vm)?;
            writer.flush(vm, session.statistics(), consumer.stats())?;
            next_flush = Instant::now() + options.flush;
            for dump in dumps {
                let outcome = writer
                    .snapshot(vm, &dump.to, dump.collected)
                    .map_err(|e| RequestError::Failed(e.to_string().into()));
                let _ = dump.answer.send(outcome);
            }
        }
        if Instant::now() >= next_flush {
            writer.heap_statistics(vm)?;
            writer.flush(vm, session.statistics(), consumer.stats())?;
            next_flush = Instant::now() + options.flush;
        }
        if let Some(since) = since_major.as_mut() {
            lift_cap(session, &majors, since, &mut cap_said);
        }
        if deadline.is_some_and(|end| Instant::now() >= end) {
            deadline = None;
            log(
                options,
                LogLevel::Info,
                "the recording's duration is over; stopping",
            );
            vm.duration_over(session);
        }
        // Asleep until a batch of samples, a collection's end, a snapshot
        // or the stop wakes it, or a flush or the duration's end is due. A
        // collection's notification is read soon after it ends, its pause
        // waiting for it. A rate limit needs its windows watched.
        let mut wake_by = next_flush;
        if let Some(end) = deadline {
            wake_by = wake_by.min(end);
        }
        let mut wait = wake_by.saturating_duration_since(Instant::now());
        if limiter.is_some() {
            wait = wait.min(RATE_LIMIT_TICK);
        }
        if share.is_some() {
            wait = wait.min(TRACKING_TICK);
        }
        if consumer.wait(wait) == WaitOutcome::Finished {
            break;
        }
    }
    // Collections since the last pass (a System.gc() just before exit)
    // decide which objects were still live.
    write_collections(session, &mut writer, vm, &clock, &mut gc_count)?;
    writer.heap_statistics(vm)?;
    if writer.collections_missed() > 0 {
        log(
            options,
            LogLevel::Debug,
            format_args!(
                "{} collections not written: before the GC notifications began, or refused by their full queue",
                writer.collections_missed()
            ),
        );
    }
    let shutdown = session.shutdown.lock().take();
    if let Some(shutdown) = shutdown {
        writer.shutdown(vm, &shutdown)?;
    }
    let collected = session.collected_at_end.load(Ordering::Relaxed);
    writer.finish(vm, session.statistics(), consumer.stats(), collected)
}

/// The file an `exclusive=true` recording writes (see
/// [`Options::exclusive`]): `file` when this process is the first to
/// create it, else `file` with process id `pid` in its name. Creating it
/// is the claim, atomic between the JVMs of one command; and the claimed
/// file is a complete recording (of no events) from the moment it exists,
/// written first under a name of this process's and linked to `file`, so
/// that a JVM killed before its writer starts leaves a file readers read.
pub fn claim_file(file: &Path, pid: u32) -> Result<PathBuf, ClaimError> {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let draft = file.with_file_name(format!(".{name}.claim-{pid}"));
    jfr_writer::Recording::create(&draft, jfr_writer::Options::default())
        .and_then(jfr_writer::Recording::close)
        .map_err(|source| ClaimError::Draft {
            file: file.to_owned(),
            source,
        })?;
    let claimed = match std::fs::hard_link(&draft, file) {
        Ok(()) => Ok(file.to_owned()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(
            heapsampler_core::options::with_process_id(file, &pid.to_string()),
        ),
        Err(source) => Err(ClaimError::Link {
            file: file.to_owned(),
            source,
        }),
    };
    let _ = std::fs::remove_file(&draft);
    claimed
}

/// The recording options of the agent's `options`: where chunks end
/// (`chunk_size=`, `chunk_age=`, lowered by the recording to a share of the
/// limits) and how the file keeps only its recent chunks (`maxsize=`,
/// `maxage=`).
pub fn recording_options(options: &Options) -> jfr_writer::Options {
    jfr_writer::Options {
        max_chunk_size: options.chunk_size,
        max_chunk_age: Some(options.chunk_age),
        max_size: options.max_size,
        max_age: options.max_age,
        ..jfr_writer::Options::default()
    }
}

/// Writes the collections the GC callbacks reported, and sweeps after each;
/// then, if there were any, what the JVM's management interface says of
/// them (JNI, which the GC callbacks themselves may not call).
fn write_collections<S: Sink>(
    session: &Session,
    writer: &mut Writer<S>,
    vm: &mut impl SessionVm,
    clock: &Clock,
    gc_count: &mut u64,
) -> Result<(), jfr_writer::Error> {
    let collections = session.collections.take();
    for collection in &collections {
        *gc_count += 1;
        let gc = GcRecord {
            id: *gc_count,
            start: clock.ticks_at(collection.start).0,
            end: clock.ticks_at(collection.end).0,
        };
        writer.garbage_collection(vm, gc)?;
    }
    if !collections.is_empty() {
        writer.poll_collections(vm)?;
    }
    Ok(())
}

/// Which samples' liveness a session with `options` in the JVM `vm`
/// tracks ([`crate::tracking`]), decided before sampling starts so that
/// every sample is judged alike. Says on stderr (at log level `info`) when
/// generational ZGC has a share of the samples tracked, and why.
pub fn tracking_plan(options: &Options, vm: &mut impl StartVm) -> TrackingPlan {
    let live_max = live_max(options, |flag| vm.vm_flag(flag));
    let every = TrackingPlan::every_sample(live_max);
    if !options.live || options.live_rate == LiveRate::All {
        return every;
    }
    let (generational_zgc, disagreement) = plan::generational_zgc(vm);
    if let Some(disagreement) = disagreement {
        log(options, LogLevel::Info, disagreement);
    }
    let per_second = match options.live_rate {
        LiveRate::PerSecond(rate) => rate,
        LiveRate::Auto if generational_zgc => AUTO_TRACKED_PER_SECOND,
        LiveRate::Auto | LiveRate::All => {
            log(
                options,
                LogLevel::Debug,
                "liveness: every sample is tracked (the collector is not generational ZGC)",
            );
            return every;
        }
    };
    if generational_zgc {
        log(
            options,
            LogLevel::Info,
            format_args!(
                "generational ZGC: liveness is tracked for a share of the samples, about \
                     {per_second} a second, since its young collections keep whatever a sample's \
                     weak handle points to, and all it reaches, until the next major collection; \
                     live_rate=all tracks every sample"
            ),
        );
    } else {
        log(
            options,
            LogLevel::Debug,
            format_args!(
                "liveness: a share of the samples is tracked, about {per_second} a second"
            ),
        );
    }
    TrackingPlan {
        live_max,
        per_second: Some(per_second),
        capped: generational_zgc,
    }
}

/// The size from which objects are not tracked for liveness, decided
/// before sampling starts so that every sample is judged alike. `vm_flag`
/// reads one of the JVM's flags (`UseG1GC`), `None` if the JVM cannot say.
pub fn live_max(options: &Options, vm_flag: impl FnMut(&CStr) -> Option<String>) -> u64 {
    match options.live_max {
        LiveMax::Below(bytes) => bytes,
        LiveMax::Unlimited => u64::MAX,
        LiveMax::Auto if !options.live => u64::MAX,
        LiveMax::Auto => {
            let limit = humongous_threshold(vm_flag);
            let message = match limit {
                Some(bytes) => {
                    format!("liveness: objects from {bytes} bytes (G1 humongous) are not tracked")
                }
                None => "liveness: every object is tracked (the collector is not G1)".to_owned(),
            };
            log(options, LogLevel::Debug, message);
            limit.unwrap_or(u64::MAX)
        }
    }
}

/// G1's smallest humongous object size: half of its smallest region.
const G1_MIN_HUMONGOUS: u64 = 512 << 10;

/// The size from which G1 allocates an object as humongous (half a region),
/// or `None` when the JVM does not run G1. A weak reference to a humongous
/// object keeps G1 from reclaiming it at the next young collection, which
/// can multiply the heap's footprint (see BENCHMARKS.md), so such objects
/// are not tracked. If the JVM cannot say, G1's smallest threshold.
fn humongous_threshold(mut vm_flag: impl FnMut(&CStr) -> Option<String>) -> Option<u64> {
    match vm_flag(c"UseG1GC").as_deref() {
        Some("true") => Some(
            vm_flag(c"G1HeapRegionSize")
                .and_then(|region| region.parse::<u64>().ok())
                .filter(|&region| region >= 2 * G1_MIN_HUMONGOUS)
                .map_or(G1_MIN_HUMONGOUS, |region| region / 2),
        ),
        Some(_) => None,
        None => Some(G1_MIN_HUMONGOUS),
    }
}
