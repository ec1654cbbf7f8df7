//! The writer's old objects: the tracked objects written as
//! `jdk.OldObjectSample` at each chunk's end and at the recording's end,
//! and the renaming of earlier chunk ends' to
//! `heapsampler.OldObjectSnapshot`.
//!
//! Each chunk's end writes the live set, so that a chunk read alone, or the
//! file of a JVM that was killed, has it; tools that read every chunk as
//! one (Mission Control's leak page) must see it once. So a chunk end's
//! old objects are written demotable (`Recording::begin_demotable`), and
//! once the next chunk end's are flushed, they are renamed
//! `heapsampler.OldObjectSnapshot`: the file holds one live set under the
//! JDK's name, the newest, or two if the JVM died between the flush and the
//! renaming, never none. An output that cannot rename (`.jfr.zst`) writes
//! them at the recording's end only, as the JDK does (and at a heap
//! exhaustion, as any output).
//!
//! A leak suspect's objects, with `roots=true`, are walked to their GC roots
//! when the watch raises it ([`OldObjects::remember`]); their paths are
//! remembered and written with them in every live set after, which puts them
//! first, so that Mission Control's leak page shows what holds them.
//!
//! Invariants: at most `cap` objects per live set, those with a remembered
//! path first, then the heaviest, the others counted as left out (at chunk
//! ends); an object's identity is its liveness handle, the same at every
//! chunk end; a path is remembered only while its object is tracked.

use heapsampler_core::liveness::TrackedObject;
use jfr_writer::events::{self, OldObjectSample, OldObjectTypes, ReferenceHolder};
use jfr_writer::{ConstantRef, DemotableEvents, EventType, Recording, Sink, Ticks};
use rustc_hash::{FxHashMap, FxHashSet};

use super::liveness::{Liveness, Tracked};
use super::pools::Pools;
use super::{ClassInfo, Loader, Vm};
use crate::roots::{Reference, RootPath};

/// What writes `jdk.OldObjectSample` events (see the module's doc).
pub(super) struct OldObjects {
    pub(super) event_type: EventType,
    /// `heapsampler.OldObjectSnapshot`, what earlier chunk ends' become.
    pub(super) snapshot_type: EventType,
    types: OldObjectTypes,
    /// Whether chunk ends write old objects: the output can rename them.
    pub(super) at_chunk_ends: bool,
    /// The newest chunk end's old objects, not renamed yet.
    pub(super) newest: Option<DemotableEvents>,
    /// The most events a chunk's end writes.
    pub(super) cap: usize,
    /// Live objects the cap left out, over all chunk ends so far.
    pub(super) left_out: u64,
    /// The paths to GC roots found for leak suspects' objects, by liveness
    /// handle.
    remembered: FxHashMap<u64, RootPath>,
}

impl OldObjects {
    /// Registers the event types; a chunk's end writes up to `cap` old
    /// objects.
    pub(super) fn register<S: Sink>(
        recording: &mut Recording<S>,
        cap: usize,
    ) -> Result<Self, jfr_writer::Error> {
        let types = OldObjectTypes::register(recording)?;
        Ok(Self {
            event_type: recording.register(events::old_object_sample(&types))?,
            snapshot_type: recording.register(events::old_object_snapshot(&types))?,
            types,
            at_chunk_ends: recording.can_demote(),
            newest: None,
            cap,
            left_out: 0,
            remembered: FxHashMap::default(),
        })
    }

    /// Renames the newest chunk end's old objects: newer ones are in the
    /// file, flushed. `newer`: the chunk end's that are the newest from
    /// now on (`None`: the recording's end).
    pub(super) fn demote<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        newer: Option<DemotableEvents>,
    ) -> Result<(), jfr_writer::Error> {
        match std::mem::replace(&mut self.newest, newer) {
            Some(previous) => recording.demote(previous).map(drop),
            None => Ok(()),
        }
    }

    /// The old objects a chunk's end writes ([`OldObjects::choose`]):
    /// none where the output cannot rename them later.
    pub(super) fn chunk_end_objects(&mut self, liveness: &Liveness) -> Vec<TrackedObject<Tracked>> {
        if self.at_chunk_ends {
            self.choose(liveness)
        } else {
            Vec::new()
        }
    }

    /// The tracked objects a chunk's end reports as old objects: those
    /// with a remembered path first, then the largest weights, up to the
    /// cap; the rest are counted as left out. Forgets the paths of objects
    /// no longer tracked.
    pub(super) fn choose(&mut self, liveness: &Liveness) -> Vec<TrackedObject<Tracked>> {
        let (objects, left_out) = self.live_set(liveness);
        self.left_out += left_out;
        objects
    }

    /// [`OldObjects::choose`]'s objects and how many the cap left out,
    /// counting none.
    fn live_set(&mut self, liveness: &Liveness) -> (Vec<TrackedObject<Tracked>>, u64) {
        // References first: the table may hold millions of objects.
        let mut objects: Vec<&TrackedObject<Tracked>> = liveness.objects().collect();
        if !self.remembered.is_empty() {
            let tracked: FxHashSet<u64> = objects.iter().map(|o| o.handle.handle).collect();
            self.remembered.retain(|handle, _| tracked.contains(handle));
        }
        let remembered = &self.remembered;
        let first = |a: &&TrackedObject<Tracked>, b: &&TrackedObject<Tracked>| {
            let has_path = |o: &&TrackedObject<Tracked>| remembered.contains_key(&o.handle.handle);
            has_path(b)
                .cmp(&has_path(a))
                .then(b.weight.cmp(&a.weight))
                .then(a.allocation_time.cmp(&b.allocation_time))
        };
        let mut left_out = 0;
        if objects.len() > self.cap {
            left_out = (objects.len() - self.cap) as u64;
            objects.select_nth_unstable_by(self.cap, first);
            objects.truncate(self.cap);
        }
        objects.sort_unstable_by(first);
        (objects.into_iter().cloned().collect(), left_out)
    }

    /// Remembers the paths found for `handles` (one per handle, `None`
    /// where the walk found none).
    pub(super) fn remember(&mut self, handles: &[u64], paths: Vec<Option<RootPath>>) {
        for (handle, path) in handles.iter().zip(paths) {
            if let Some(path) = path {
                self.remembered.insert(*handle, path);
            }
        }
    }

    /// The live set after a leak suspect's walk: as a chunk's end's, the
    /// cap's leaving out not counted again.
    pub(super) fn suspect_live_set(&mut self, liveness: &Liveness) -> Vec<TrackedObject<Tracked>> {
        self.live_set(liveness).0
    }

    /// Writes a `jdk.OldObjectSample` for each of `objects`, seen live at
    /// `at` with `heap_used` bytes of heap in use, with its path to a GC
    /// root where `paths` has one (`paths` is empty, or has one entry per
    /// object), or else its remembered one.
    ///
    /// All end at `at` (no duration): the JDK's `jfr view` memory leak
    /// views show one batch, the events ending when the last one read ends
    /// (`LAST_BATCH`: `jdk.jfr.internal.query.Histogram.add` and
    /// `Function.LastBatch`), so one live set must share one end time.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        pools: &mut Pools,
        vm: &mut impl Vm,
        at: Ticks,
        heap_used: i64,
        objects: &[TrackedObject<Tracked>],
        paths: &[Option<RootPath>],
    ) -> Result<(), jfr_writer::Error> {
        for (at_index, object) in objects.iter().enumerate() {
            let tracked = object.handle;
            let path = paths
                .get(at_index)
                .and_then(Option::as_ref)
                .or_else(|| self.remembered.get(&tracked.handle));
            let referrer = match path {
                Some(path) => referrer_chain(recording, pools, &self.types, path)?,
                None => None,
            };
            let root = match path {
                Some(path) => Some(self.types.gc_root(
                    recording,
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
            let object_ref = self.types.old_object(
                recording,
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
            .write(recording, &self.event_type)?;
        }
        Ok(())
    }
}

/// The referrer of an old object: the chain of `path`'s links as
/// constants, the link held by the root last.
fn referrer_chain<S: Sink>(
    recording: &mut Recording<S>,
    pools: &mut Pools,
    types: &OldObjectTypes,
    path: &RootPath,
) -> Result<Option<ConstantRef>, jfr_writer::Error> {
    let mut referrer = None;
    for link in path.links.iter().rev() {
        let class = pools.class_named(
            recording,
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
