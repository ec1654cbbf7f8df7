//! The writer's context events: what the recording was started with
//! (`jdk.ActiveRecording`, `jdk.ActiveSetting`), the heap's context
//! ([`crate::heap`]), what the JVM runs on ([`crate::environment`]) and
//! each thread's allocated bytes ([`crate::threads`]), each written where
//! the JDK's recordings write them.
//!
//! Invariants: every chunk starts with the recording's settings, so a
//! chunk read alone, or what a rotation kept, still tells them; the type
//! with no events Mission Control must take as enabled is said enabled
//! once per file.

use heapsampler_core::options::LiveMax;
use jfr_format::names::setting;
use jfr_writer::events::{self, ActiveRecording, ActiveSetting};
use jfr_writer::{EventType, Recording, Sink};

use super::pools::Pools;
use super::{RecordingSettings, Vm};
use crate::environment::Environment;
use crate::heap::HeapContext;
use crate::threads::ThreadAllocations;

/// The context events' writers.
pub(super) struct Context {
    /// The heap's context: GC, heap and JVM events ([`crate::heap`]).
    pub(super) heap: HeapContext,
    /// The recording's settings, written at every chunk's start.
    active: ActiveSettings,
    /// What the JVM runs on: processors, memory, flags, properties
    /// ([`crate::environment`]).
    pub(super) environment: Environment,
    /// The JVM's count of each thread's allocated bytes, at each flush
    /// ([`crate::threads`]).
    pub(super) thread_allocations: ThreadAllocations,
}

impl Context {
    /// Registers the event types and writes the recording's settings, with
    /// `settings` of the allocation sample and lifetime event types
    /// `[sample, lifetime]`.
    pub(super) fn register<S: Sink>(
        recording: &mut Recording<S>,
        settings: &RecordingSettings,
        [sample, lifetime]: [&EventType; 2],
    ) -> Result<Self, jfr_writer::Error> {
        let environment = Environment::register(recording, settings.environment)?;
        let thread_allocations = ThreadAllocations::register(recording)?;
        let mut active = ActiveSettings::new(recording, settings, [sample, lifetime])?;
        active
            .settings
            .extend(environment.settings(settings.flush_millis));
        active
            .settings
            .extend(thread_allocations.settings(settings.flush_millis));
        active.write(recording)?;
        let heap = HeapContext::register(recording)?;
        Ok(Self {
            heap,
            active,
            environment,
            thread_allocations,
        })
    }

    /// At a chunk's start: the recording's settings and the environment's
    /// events of each chunk.
    pub(super) fn at_chunk_start<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
    ) -> Result<(), jfr_writer::Error> {
        self.active.write(recording)?;
        self.environment.at_chunk_start(recording, vm)
    }

    /// At each flush: the environment's periodic events, and a
    /// `jdk.ThreadAllocationStatistics` for each thread the JVM lists, its
    /// `thread` the samples' for a thread sampled ([`crate::threads`]).
    pub(super) fn at_flush<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        pools: &mut Pools,
        vm: &mut impl Vm,
    ) -> Result<(), jfr_writer::Error> {
        self.environment.at_flush(recording)?;
        let Some(threads) = self.thread_allocations.measure(vm) else {
            return Ok(());
        };
        let now = recording.clock().now();
        for allocation in &threads {
            let thread = match allocation.key {
                Some(key) => pools.thread(recording, vm, key),
                None => self
                    .thread_allocations
                    .unsampled_thread(recording, allocation),
            };
            self.thread_allocations
                .write(recording, now, thread, allocation.allocated)?;
        }
        Ok(())
    }

    /// Says `jdk.GCPhasePauseLevel1` enabled, in the file's last chunk
    /// (or a snapshot's tail): once per file, which every rotation keeps,
    /// for Mission Control takes a type with no events as enabled only if
    /// exactly one setting in the file says so (its long-pause rule needs
    /// it). A file cut short by a crash does not say it.
    pub(super) fn say_pause_phases_enabled<S: Sink>(
        &self,
        recording: &mut Recording<S>,
    ) -> Result<(), jfr_writer::Error> {
        self.active
            .write_enabled_once(recording, self.heap.pause_level_1())
    }
}

/// What a recording was started with, as the `jdk.ActiveRecording` and
/// `jdk.ActiveSetting` events that say it. Every chunk starts with them, as
/// in the JDK's recordings: a chunk read alone, or what a rotation
/// (`maxsize=`, `maxage=`) kept, still tells its settings.
pub(super) struct ActiveSettings {
    recording_type: EventType,
    setting_type: EventType,
    destination: String,
    max_age_millis: i64,
    flush_millis: i64,
    max_size: i64,
    start_millis: i64,
    /// (the event type's id, the setting's name, its value)
    pub(super) settings: Vec<(i64, &'static str, String)>,
}

impl ActiveSettings {
    /// Registers the event types, and says `settings` of the allocation
    /// sample and lifetime event types `[sample, lifetime]`.
    pub(super) fn new<S: Sink>(
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
    pub(super) fn write_enabled_once<S: Sink>(
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
    pub(super) fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
    ) -> Result<(), jfr_writer::Error> {
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
