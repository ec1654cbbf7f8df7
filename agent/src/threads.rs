//! `jdk.ThreadAllocationStatistics`: the bytes each live Java thread
//! allocated since it started, as the JVM counts them exactly
//! (`com.sun.management.ThreadMXBean.getThreadAllocatedBytes`), written at
//! each flush and at the recording's end, so that an estimate from the
//! samples can be checked against the JVM's own count.
//!
//! One event per live platform thread the JVM lists (JVMTI's
//! `GetAllThreads`: application threads and the JDK's own Java threads,
//! such as `Reference Handler` or the JFR recorder's; not the JVM's
//! internal threads, which have no `java.lang.Thread`), except the agent's
//! writer thread: its allocations are the agent's reading of these very
//! figures and are never sampled. The JDK's recorder writes one for every
//! Java thread too. A thread that ended since the last flush has no event:
//! the JVM forgets a thread's count when it ends, so its last event is the
//! one at the last flush it was alive for, which may miss what it
//! allocated after it.
//!
//! The event's `thread` is the same `java.lang.Thread` constant as the
//! samples' `eventThread` for a thread the agent sampled (found by the
//! session's key, the thread's JVMTI tag), so that a reader joins the two
//! by constant, or by `javaThreadId` across chunks. A thread never
//! sampled gets a constant of its own, with its name and Java thread id
//! (its OS thread id is not known: 0).
//!
//! Read on the writer thread only, with one call for every thread; never
//! in the allocation callback (the JVM's GC callbacks may not call JNI).

use std::fmt;

use jfr_writer::events::{self, ThreadAllocationStatistics};
use jfr_writer::{EventType, Recording, Sink, Thread, ThreadRef, Ticks};
use rustc_hash::FxHashMap;

/// One live thread and what it allocated, as the JVM counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadAllocation {
    /// The session's key of the thread, if the allocation callback has
    /// sampled it (its samples' thread).
    pub key: Option<u64>,
    /// `Thread.getId()`.
    pub java_thread_id: i64,
    /// `Thread.getName()`.
    pub name: String,
    /// Bytes allocated since the thread started.
    pub allocated: u64,
}

/// Why the JVM gives no thread's allocated bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmeasured {
    /// The JVM cannot measure them
    /// (`isThreadAllocatedMemorySupported()` is false).
    Unsupported,
    /// The measurement is turned off
    /// (`isThreadAllocatedMemoryEnabled()` is false).
    Disabled,
    /// The management interface (`com.sun.management`, module
    /// jdk.management) is missing, or its call failed.
    Unavailable,
}

impl fmt::Display for Unmeasured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unmeasured::Unsupported => {
                "no jdk.ThreadAllocationStatistics: the JVM does not measure the bytes each \
                 thread allocates (ThreadMXBean.isThreadAllocatedMemorySupported() is false)"
            }
            Unmeasured::Disabled => {
                "no jdk.ThreadAllocationStatistics: the measurement of the bytes each thread \
                 allocates is disabled (ThreadMXBean.isThreadAllocatedMemoryEnabled() is false)"
            }
            Unmeasured::Unavailable => {
                "no jdk.ThreadAllocationStatistics: the JVM's ThreadMXBean \
                 (com.sun.management, module jdk.management) cannot be read"
            }
        })
    }
}

/// What the threads' allocated bytes ask of the JVM, on the writer thread.
pub trait ThreadsVm {
    /// Every live platform thread but the writer's own, with its allocated
    /// bytes, read in one call (none for now: the JVM is not asked while a
    /// failed read backs off); why not, if the JVM will not say.
    fn thread_allocations(&mut self) -> Result<Vec<ThreadAllocation>, Unmeasured> {
        Err(Unmeasured::Unavailable)
    }
    /// Told once per recording, at the first flush the JVM gave no
    /// figures: for the agent's log.
    fn unmeasured(&mut self, why: Unmeasured) {
        let _ = why;
    }
}

/// The `jdk.ThreadAllocationStatistics` type of one recording, and the
/// constants of the threads never sampled.
#[derive(Debug)]
pub struct ThreadAllocations {
    event_type: EventType,
    /// Threads no sample named, by Java thread id (never reused in a JVM's
    /// life): a constant each, until the chunks no longer hold it.
    unsampled: FxHashMap<i64, ThreadRef>,
    /// Whether the VM was told the figures are missing.
    said_unmeasured: bool,
}

impl ThreadAllocations {
    /// Registers the event type with `recording`.
    pub fn register<S: Sink>(recording: &mut Recording<S>) -> Result<Self, jfr_writer::Error> {
        Ok(Self {
            event_type: recording.register(events::thread_allocation_statistics())?,
            unsampled: FxHashMap::default(),
            said_unmeasured: false,
        })
    }

    /// What the recording's `jdk.ActiveSetting` events say of the type:
    /// (its id, the setting, its value). Written at each flush, every
    /// `flush_millis`.
    pub fn settings(&self, flush_millis: i64) -> Vec<(i64, &'static str, String)> {
        use jfr_format::names::setting::{ENABLED, PERIOD};
        let id = self.event_type.id().get() as i64;
        vec![
            (id, PERIOD, format!("{flush_millis} ms")),
            (id, ENABLED, "true".to_owned()),
        ]
    }

    /// The JVM's figures now; `None`, the VM told why once, if there are
    /// none.
    pub fn measure(&mut self, vm: &mut impl ThreadsVm) -> Option<Vec<ThreadAllocation>> {
        match vm.thread_allocations() {
            Ok(threads) => Some(threads),
            Err(why) => {
                if !std::mem::replace(&mut self.said_unmeasured, true) {
                    vm.unmeasured(why);
                }
                None
            }
        }
    }

    /// The constant of a thread no sample named.
    pub fn unsampled_thread<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        thread: &ThreadAllocation,
    ) -> ThreadRef {
        *self
            .unsampled
            .entry(thread.java_thread_id)
            .or_insert_with(|| {
                recording.thread(Thread {
                    os_name: thread.name.clone(),
                    os_thread_id: 0,
                    java_name: thread.name.clone(),
                    java_thread_id: thread.java_thread_id,
                    group: None,
                })
            })
    }

    /// Writes one event.
    pub fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        at: Ticks,
        thread: ThreadRef,
        allocated: u64,
    ) -> Result<(), jfr_writer::Error> {
        ThreadAllocationStatistics {
            start_time: at,
            allocated: allocated.min(i64::MAX as u64) as i64,
            thread: Some(thread),
        }
        .write(recording, &self.event_type)
    }

    /// Forgets the constants the recording no longer holds (at a chunk's
    /// end, after its pools dropped what neither chunk used).
    pub fn retain_held<S: Sink>(&mut self, recording: &Recording<S>) {
        self.unsampled
            .retain(|_, &mut thread| recording.holds(thread));
        self.unsampled.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Unsupported {
        told: Vec<Unmeasured>,
    }

    impl ThreadsVm for Unsupported {
        fn thread_allocations(&mut self) -> Result<Vec<ThreadAllocation>, Unmeasured> {
            Err(Unmeasured::Disabled)
        }
        fn unmeasured(&mut self, why: Unmeasured) {
            self.told.push(why);
        }
    }

    #[test]
    fn missing_figures_are_told_once() {
        let sink = jfr_writer::StreamSink::new(Vec::new());
        let mut recording = Recording::new(sink, jfr_writer::Options::default());
        let mut allocations = ThreadAllocations::register(&mut recording).unwrap();
        let mut vm = Unsupported { told: Vec::new() };
        assert_eq!(allocations.measure(&mut vm), None);
        assert_eq!(allocations.measure(&mut vm), None);
        assert_eq!(vm.told, vec![Unmeasured::Disabled]);
    }
}
