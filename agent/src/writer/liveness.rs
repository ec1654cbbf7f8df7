//! The writer's liveness tracking: the sampled objects tracked until a
//! collection finds them dead or the recording ends, and the
//! `heapsampler.ObjectLifetime` and `heapsampler.LiveSet` events that say
//! so.
//!
//! Invariants:
//! - Every sample gets exactly one `ObjectLifetime` (with liveness on): at
//!   once if it is not tracked (`tracked = false`: left out by the draw
//!   with the probability it was drawn with, or unknown with probability
//!   0), at the sweep that finds it collected, or at the end, `live =
//!   true`.
//! - A liveness handle is released exactly once: when found collected, or
//!   at the end.
//! - The collection count only grows: a collection reported late never
//!   lowers it.

use heapsampler_core::liveness::{LivenessTable, TrackedObject};
use jfr_writer::events::{LiveSet, ObjectLifetime};
use jfr_writer::{EventType, Marked, PoolRef, Recording, Sink, StackTraceRef, ThreadRef, Ticks};

use super::pools::PooledClass;
use super::{GcRecord, Vm};
use crate::record::{SampleHeader, Tracking};

/// What the liveness table holds per object: the JVM's handle, and the
/// pooled values its `ObjectLifetime` event will need.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tracked {
    pub(super) handle: u64,
    /// The probability with which its liveness was to be tracked: 0 if
    /// unknown.
    pub(super) probability: f64,
    /// Its allocation site, for the watch (`watch::site_of`).
    pub(super) site: u64,
    /// Whether it entered its site in the watch: found live by a
    /// collection that marked the whole heap.
    pub(super) entered: bool,
    pub(super) thread: ThreadRef,
    /// The receipt of its stack's mark for the sample's event: its
    /// lifetime's event in the same chunk writes the stack without a
    /// look-up.
    pub(super) stack: Marked<StackTraceRef>,
    pub(super) class: PooledClass,
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

/// The tracked objects, and the counts of samples by how they were tracked.
pub(super) struct Liveness {
    object_lifetime: EventType,
    live_set: EventType,
    /// Whether every sample gets an `ObjectLifetime`.
    live: bool,
    table: LivenessTable<Tracked>,
    gc_count: u64,
    /// When the last collection written ended (0, the recording's start,
    /// before any).
    last_gc_end: i64,
    /// Samples tracked for liveness.
    pub(super) drawn: u64,
    /// Samples the draw left untracked.
    pub(super) undrawn: u64,
    /// Samples whose liveness is unknown (size, cap, or no handle made).
    pub(super) untracked: u64,
    /// Of those, samples past the cap.
    pub(super) capped: u64,
}

impl Liveness {
    /// Tracking with the event types registered; none if not `live`.
    pub(super) fn new(object_lifetime: EventType, live_set: EventType, live: bool) -> Self {
        Self {
            object_lifetime,
            live_set,
            live,
            table: LivenessTable::new(),
            gc_count: 0,
            last_gc_end: 0,
            drawn: 0,
            undrawn: 0,
            untracked: 0,
            capped: 0,
        }
    }

    /// Whether samples' liveness is written.
    pub(super) fn is_on(&self) -> bool {
        self.live
    }

    /// Objects tracked now.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// The objects tracked now.
    pub(super) fn objects(&self) -> impl Iterator<Item = &TrackedObject<Tracked>> {
        self.table.iter()
    }

    /// The table of the objects tracked now, for the watch to mark those
    /// that entered it.
    pub(super) fn table_mut(&mut self) -> &mut LivenessTable<Tracked> {
        &mut self.table
    }

    /// Tracks the object of sample `record`, written with `weight` on
    /// `thread` at `stack`, of `class`, allocated at `site`; or, if it is
    /// not to be tracked, writes its `ObjectLifetime` now.
    pub(super) fn sample<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        record: &SampleHeader,
        weight: i64,
        (thread, stack, class): (ThreadRef, Marked<StackTraceRef>, PooledClass),
        site: u64,
    ) -> Result<(), jfr_writer::Error> {
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
                site,
                entered: false,
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
            self.table.track(object);
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
            recording,
            &self.object_lifetime,
            &object,
            record.ticks,
            fate,
        )
    }

    /// The collections counted so far.
    pub(super) fn collections(&self) -> u64 {
        self.gc_count
    }

    /// Counts a finished collection.
    pub(super) fn collection(&mut self, gc: &GcRecord) {
        self.gc_count = self.gc_count.max(gc.id);
        self.last_gc_end = self.last_gc_end.max(gc.end);
    }

    /// Writes the lifetime of each tracked object that collection `gc_id`
    /// (or one before it) freed, found so at `at`, and hands it to
    /// `freed`.
    pub(super) fn sweep<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        gc_id: u64,
        at: i64,
        mut freed: impl FnMut(&TrackedObject<Tracked>),
    ) -> Result<(), jfr_writer::Error> {
        let mut written = Ok(());
        let object_lifetime = &self.object_lifetime;
        // Each death is written as the sweep finds it: gathering them first
        // would grow a vector as large as a young collection's die-off at
        // every sweep. A handle found cleared is released at once; the
        // sweep hands over each object it says is dead exactly once.
        self.table.sweep(
            gc_id,
            |tracked| {
                let collected = vm.is_collected(tracked.handle);
                if collected {
                    vm.release(tracked.handle);
                }
                collected
            },
            |dead| {
                freed(&dead.object);
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

    /// When the last collection seen ended (0 before any), in ticks.
    pub(super) fn last_collection_end(&self) -> i64 {
        self.last_gc_end
    }

    /// Sweeps once more after the last collection, at `at`: an object the
    /// ring handed over after the collection that freed it was not in the
    /// table when that collection was swept, and is found freed rather
    /// than called live.
    pub(super) fn sweep_last<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        at: i64,
        freed: impl FnMut(&TrackedObject<Tracked>),
    ) -> Result<(), jfr_writer::Error> {
        if self.gc_count > 0 {
            self.sweep(recording, vm, self.gc_count, at, freed)?;
        }
        Ok(())
    }

    /// Writes an `ObjectLifetime` with `live = true`, ended at `end`, for
    /// every object still tracked, which stays tracked (a snapshot's).
    pub(super) fn write_still_live<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        end: i64,
    ) -> Result<(), jfr_writer::Error> {
        for object in self.table.iter() {
            let fate = Fate::Live {
                gcs_survived: self.gc_count.saturating_sub(object.gc_count_at_allocation),
            };
            write_lifetime(recording, &self.object_lifetime, object, end, fate)?;
        }
        Ok(())
    }

    /// Ends the tracking: an `ObjectLifetime` with `live = true`, ended at
    /// `end`, for every object still tracked, its handle released. Returns
    /// how many there were.
    pub(super) fn finish<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        end: i64,
    ) -> Result<usize, jfr_writer::Error> {
        let table = std::mem::take(&mut self.table);
        let live_objects = table.len();
        for live in table.finish() {
            vm.release(live.object.handle.handle);
            let fate = Fate::Live {
                gcs_survived: live.gcs_survived,
            };
            write_lifetime(recording, &self.object_lifetime, &live.object, end, fate)?;
        }
        Ok(live_objects)
    }

    /// Writes `heapsampler.LiveSet`: how the `live_objects` objects live at
    /// `at` were found (`collected`: a collection was forced right
    /// before).
    pub(super) fn write_live_set<S: Sink>(
        &self,
        recording: &mut Recording<S>,
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
        .write(recording, &self.live_set)
    }

    /// The pooled values the tracked objects hold, which a chunk's end
    /// keeps.
    pub(super) fn pinned(&self) -> impl Iterator<Item = PoolRef> + '_ {
        self.table.iter().flat_map(|object| {
            let tracked = object.handle;
            [
                PoolRef::from(tracked.thread),
                tracked.stack.reference().into(),
                tracked.class.class.into(),
            ]
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
