//! The heap's context around the samples, as the JDK's own recordings give
//! it, so that Mission Control's memory, GC and leak rules run on a
//! heapsampler recording: `jdk.GCHeapSummary` before and after each
//! collection, `jdk.GarbageCollection`, `jdk.JVMInformation` at the start
//! of each chunk, and `jdk.ClassLoadingStatistics` at every flush.
//!
//! The figures come from the JVM's management interface (the
//! `GarbageCollectorMXBean`s and their `com.sun.management.GcInfo`, the
//! `RuntimeMXBean`, the `ClassLoadingMXBean`), asked through a
//! [`HeapVm`] on the writer thread only: JVMTI's GC
//! callbacks may not call JNI, and nothing of this runs in the allocation
//! callback. The writer polls after the GC callbacks reported collections
//! and at every flush; a poll asks each collector how many collections it
//! has done, and only a collector that did more is asked for its last
//! `GcInfo`.
//!
//! What the management interface cannot give:
//! - **Every collection.** A collector's `GcInfo` is its *last* collection:
//!   when one collector ran several times between two polls, only the last
//!   is written, and the others are counted
//!   ([`HeapContext::collections_missed`]).
//! - **The cause.** `GcInfo` carries none; the JVM gives it only to
//!   listeners of its GC notifications (`GarbageCollectionNotificationInfo`),
//!   which would need a listener class defined in the JVM and run on the
//!   JVM's notification thread: not cheap, so `cause` is null.
//! - **Sub-millisecond times.** `GcInfo` times and durations are whole
//!   milliseconds since the JVM started: a collection's events are placed
//!   and sized to the millisecond (`heapsampler.GarbageCollection` has the
//!   JVMTI callbacks' exact times).
//!
//! `gcId` is one sequence across collectors (1, 2, ... in the order the
//! polls find the collections, by their start within one poll), the same on
//! a collection's two `jdk.GCHeapSummary` and its `jdk.GarbageCollection`
//! (Mission Control joins them on it). It is its own sequence: the
//! collections the management interface reports and those JVMTI reports
//! (`heapsampler.GarbageCollection`, whose ids `ObjectLifetime.freedByGcId`
//! names) need not be the same ones.
//!
//! A collector whose collections are concurrent cycles (ZGC's and
//! Shenandoah's `... Cycles`) has a cycle's length as its `GcInfo`
//! duration, not a pause: its pauses are written as 0.

use jfr_writer::events::{
    self, AFTER_GC, BEFORE_GC, ClassLoadingStatistics, GcHeapSummary, GcTypes,
    JdkGarbageCollection, JvmInformation, VirtualSpace,
};
use jfr_writer::{EventType, Recording, Sink, Ticks};

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
    /// When the JVM started, in milliseconds since the Unix epoch
    /// (`getStartTime()`): the origin of [`LastCollection`]'s times.
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
    /// in the order [`HeapVm::collection_counts`] and [`HeapVm::last_collection`]
    /// index them.
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

/// A collector's last collection, from its `GcInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastCollection {
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
    /// How many collections each of [`HeapVm::collectors`] has done, in
    /// its order; empty if unknown. Asked at every poll: must be cheap.
    fn collection_counts(&mut self) -> Vec<u64> {
        Vec::new()
    }
    /// The last collection of collector `collector` (an index into
    /// [`HeapVm::collectors`]), `None` if unknown. Asked only for a
    /// collector whose count grew.
    fn last_collection(&mut self, collector: usize) -> Option<LastCollection> {
        let _ = collector;
        None
    }
    /// Classes loaded and unloaded so far, `None` if unknown.
    fn class_loading(&mut self) -> Option<ClassLoading> {
        None
    }
}

/// Whether a collector's collections are concurrent cycles rather than
/// pauses: ZGC's and Shenandoah's `... Cycles` collectors. Their `GcInfo`
/// duration is the cycle's, not a pause's, so their pauses are written as
/// 0 (their pauses are the `... Pauses` collectors' collections).
fn concurrent(collector: &str) -> bool {
    collector.ends_with(" Cycles")
}

/// One collector as the poll follows it.
#[derive(Debug, Clone)]
struct Collector {
    name: String,
    /// Collections it had done at the last poll.
    count: u64,
    /// The `GcInfo` id of its collection written last; before any, of its
    /// last collection from before the recording (0: none).
    written: u64,
}

/// The events of the heap's context and what is needed to write them: the
/// writer holds one ([`crate::writer::Writer`]).
#[derive(Debug)]
pub struct HeapContext {
    gc: GcTypes,
    heap_summary: EventType,
    collection: EventType,
    jvm_information: EventType,
    class_loading: EventType,
    started: bool,
    /// Kept to write `jdk.JVMInformation` again at the start of each chunk.
    jvm: Option<JvmInfo>,
    /// The chunk `jdk.JVMInformation` was written in last.
    jvm_chunk: u32,
    collectors: Vec<Collector>,
    heap_reserved: u64,
    /// The last `gcId` given (0: none yet).
    gc_id: u32,
    missed: u64,
    /// Heap bytes in use after the collection that ended last, and when
    /// it ended (milliseconds since the JVM started).
    last_after: Option<(i64, u64)>,
}

impl HeapContext {
    /// Registers the event types with `recording`.
    pub fn register<S: Sink>(recording: &mut Recording<S>) -> Result<Self, jfr_writer::Error> {
        let gc = GcTypes::register(recording)?;
        Ok(Self {
            heap_summary: recording.register(events::gc_heap_summary(&gc))?,
            collection: recording.register(events::jdk_garbage_collection(&gc))?,
            jvm_information: recording.register(events::jvm_information())?,
            class_loading: recording.register(events::class_loading_statistics())?,
            gc,
            started: false,
            jvm: None,
            jvm_chunk: 0,
            collectors: Vec::new(),
            heap_reserved: 0,
            gc_id: 0,
            missed: 0,
            last_after: None,
        })
    }

    /// Starts following the heap: writes `jdk.JVMInformation`, and the
    /// collections since the recording's start (the clock's origin) that
    /// the JVM reports already: the writer thread starts while the
    /// application runs, and may come after its first collections. Those
    /// before the recording's start (one attached to a running JVM) are not
    /// written; the last one's heap figure is the first
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
        self.write_jvm_information(recording)?;
        let Some(collectors) = vm.collectors() else {
            return Ok(self.jvm.is_some());
        };
        self.heap_reserved = collectors.heap_reserved;
        let counts = vm.collection_counts();
        // A recording that began before the JVM did (-agentpath) has seen
        // every collection; otherwise each collector's collections are in
        // it from its last one that started after the recording, if any.
        let from_jvm_start = self.jvm.as_ref().is_some_and(|jvm| {
            recording
                .clock()
                .ticks_at_epoch_nanos(jvm.start_millis.saturating_mul(1_000_000))
                .0
                >= 0
        });
        self.collectors = collectors
            .names
            .into_iter()
            .map(|name| Collector {
                name,
                count: 0,
                written: 0,
            })
            .collect();
        for (at, &count) in counts.iter().enumerate().take(self.collectors.len()) {
            if count == 0 || from_jvm_start {
                continue;
            }
            let written = match vm.last_collection(at) {
                Some(last)
                    if self.jvm.is_some() && self.ticks_of(recording, last.start_millis).0 >= 0 =>
                {
                    last.id.saturating_sub(1)
                }
                Some(last) => {
                    self.note_heap_after(&last);
                    last.id.max(count)
                }
                None => count,
            };
            self.collectors[at].written = written;
        }
        self.poll_counts(recording, vm, &counts)?;
        Ok(true)
    }

    /// Writes the collections the management interface reports since the
    /// last poll: for each collector that ran, its last collection (see
    /// the module's notes), as `jdk.GCHeapSummary` before and after it and
    /// `jdk.GarbageCollection`, in the order they started.
    pub fn poll<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
    ) -> Result<(), jfr_writer::Error> {
        if !self.started {
            self.begin(recording, vm)?;
            return Ok(());
        }
        if self.collectors.is_empty() {
            return Ok(());
        }
        let counts = vm.collection_counts();
        self.poll_counts(recording, vm, &counts)
    }

    fn poll_counts<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
        counts: &[u64],
    ) -> Result<(), jfr_writer::Error> {
        if counts.len() != self.collectors.len() {
            return Ok(());
        }
        let mut ran = Vec::new();
        for (at, &count) in counts.iter().enumerate() {
            let collector = &mut self.collectors[at];
            if count <= collector.count {
                continue;
            }
            collector.count = count;
            let Some(last) = vm.last_collection(at) else {
                continue;
            };
            let collector = &mut self.collectors[at];
            // Another collection may have ended between the count and
            // the GcInfo: the count only says whom to ask.
            collector.count = collector.count.max(last.id);
            if last.id <= collector.written {
                continue;
            }
            self.missed += last.id - collector.written - 1;
            collector.written = last.id;
            ran.push((at, last));
        }
        ran.sort_by_key(|(_, last)| (last.start_millis, last.end_millis));
        for (at, last) in ran {
            self.write_collection(recording, at, &last)?;
            self.note_heap_after(&last);
        }
        Ok(())
    }

    /// At a flush (and at the end): polls, writes
    /// `jdk.ClassLoadingStatistics`, and writes `jdk.JVMInformation` again
    /// if a new chunk began since it was written, so that each chunk, read
    /// alone, says which JVM it comes from (the JDK writes it at each
    /// chunk's beginning).
    pub fn at_flush<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl HeapVm,
    ) -> Result<(), jfr_writer::Error> {
        self.poll(recording, vm)?;
        if self.jvm_chunk != recording.chunk_number() {
            self.write_jvm_information(recording)?;
        }
        if let Some(classes) = vm.class_loading() {
            ClassLoadingStatistics {
                start_time: recording.clock().now(),
                loaded_class_count: saturate(classes.loaded),
                unloaded_class_count: saturate(classes.unloaded),
            }
            .write(recording, &self.class_loading)?;
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

    /// Collections not written because a later one of the same collector
    /// happened before the poll (its `GcInfo` replaced theirs).
    pub fn collections_missed(&self) -> u64 {
        self.missed
    }

    fn note_heap_after(&mut self, last: &LastCollection) {
        if self
            .last_after
            .is_none_or(|(ended, _)| last.end_millis >= ended)
        {
            self.last_after = Some((last.end_millis, last.after.used));
        }
    }

    fn write_jvm_information<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
    ) -> Result<(), jfr_writer::Error> {
        self.jvm_chunk = recording.chunk_number();
        let Some(jvm) = &self.jvm else {
            return Ok(());
        };
        let version = jvm.version_line();
        let arguments = jvm.arguments.join(" ");
        JvmInformation {
            start_time: recording.clock().now(),
            jvm_name: Some(&jvm.vm_name),
            jvm_version: Some(&version),
            jvm_arguments: Some(&arguments),
            jvm_flags: None,
            java_arguments: jvm.java_command.as_deref(),
            jvm_start_time: jvm.start_millis,
            pid: jvm.pid,
        }
        .write(recording, &self.jvm_information)
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

    fn write_collection<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        collector: usize,
        last: &LastCollection,
    ) -> Result<(), jfr_writer::Error> {
        self.gc_id = self.gc_id.wrapping_add(1).max(1);
        let gc_id = (self.gc_id & i32::MAX as u32) as i32;
        let start = self.ticks_of(recording, last.start_millis);
        let end = self.ticks_of(recording, last.end_millis);
        let duration = (end.0 - start.0).max(0);
        let reserved = saturate(self.heap_reserved);
        for (when, at, usage) in [(BEFORE_GC, start, last.before), (AFTER_GC, end, last.after)] {
            // Constants live for one chunk: made right before their event.
            let when = self.gc.when(recording, when)?;
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
            .write(recording, &self.heap_summary)?;
        }
        let name = &self.collectors[collector].name;
        let pause = if concurrent(name) { 0 } else { duration };
        let name = self.gc.name(recording, name)?;
        JdkGarbageCollection {
            start_time: start,
            duration,
            gc_id,
            name: Some(name),
            // GcInfo has no cause (see the module's notes).
            cause: None,
            sum_of_pauses: pause,
            longest_pause: pause,
        }
        .write(recording, &self.collection)
    }
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
    fn only_cycle_collectors_are_concurrent() {
        assert!(concurrent("ZGC Cycles") && concurrent("Shenandoah Cycles"));
        assert!(!concurrent("ZGC Pauses") && !concurrent("G1 Young Generation"));
        assert!(
            !concurrent("G1 Concurrent GC"),
            "its collections are pauses"
        );
    }
}
