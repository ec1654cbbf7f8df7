//! The table of sampled objects whose death we are waiting to see.
//!
//! Each sampled object is tracked through an opaque handle (for the agent, a JNI
//! weak reference) that can later tell whether the object was collected. After
//! a garbage collection the owner [sweeps](LivenessTable::sweep) the table with
//! a predicate "is this handle cleared?"; the dead entries come out with the
//! collection at which they were found dead and how many collections they
//! outlived. At the end of a recording, [`LivenessTable::finish`] hands back
//! the objects still live.
//!
//! The table has no capacity limit: every sample handed to it is tracked
//! until it is found dead or tracking ends. Memory is proportional to what
//! the table holds and is reported by [`LivenessTable::memory_bytes`]; each
//! entry is the owner's handle and the four numbers an object's lifetime
//! needs, nothing the owner can keep in its handle.
//!
//! Memory follows what is held with a lag of a few sweeps: the table keeps
//! room for the most it held at recent sweeps, a peak halved at each sweep
//! since. Most objects die young, so a table fills between two collections
//! and empties at each; giving its memory back at every sweep would fault
//! the same pages in again before the next one.

/// Which samples are tracked, each with probability `fraction` on its own
/// (the share [`crate::tracking::TrackingShare`] sets): one per allocating
/// thread, a SplitMix64 sequence from a seed the thread gives. Not for
/// secrets; independent enough that the tracked share of n samples is
/// binomial.
#[derive(Debug, Clone, Default)]
pub struct TrackingDraw {
    /// The sequence's state; 0 until seeded.
    state: u64,
}

impl TrackingDraw {
    /// Whether to track the next sample, with probability `fraction`
    /// (1 or more: always, without a draw). `seed` starts the sequence at
    /// the first draw: anything that differs between threads and runs.
    #[inline]
    pub fn track(&mut self, fraction: f64, seed: impl FnOnce() -> u64) -> bool {
        if fraction >= 1.0 {
            return true;
        }
        if self.state == 0 {
            self.state = seed() | 1;
        }
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The upper 53 bits, uniform in [0, 1).
        ((z >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < fraction
    }
}

/// One sampled object being tracked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedObject<H> {
    /// The handle that says whether the object is still live, with whatever
    /// else the owner needs when the object's life ends (its pooled stack,
    /// class and thread, for the agent).
    pub handle: H,
    /// When the object was allocated, in the owner's clock (nanoseconds, ticks...).
    pub allocation_time: u64,
    /// The object's size in bytes.
    pub size: u64,
    /// The bytes this sample stands for, rounded (see
    /// [`crate::sampling::bytes_weight`]).
    pub weight: u64,
    /// How many collections had finished when the object was allocated.
    pub gc_count_at_allocation: u64,
}

/// A tracked object found dead by a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadObject<H> {
    /// The object as it was tracked.
    pub object: TrackedObject<H>,
    /// The id (the running count) of the collection after which the sweep
    /// found it dead. It died in that collection or, when sweeps skip
    /// collections, in one since the previous sweep.
    pub found_dead_at_gc: u64,
    /// The collections it is known to have outlived: those up to the previous
    /// sweep, which saw it still live. Exact when every collection is swept.
    pub gcs_survived: u64,
}

/// A tracked object still live when tracking ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveObject<H> {
    /// The object as it was tracked.
    pub object: TrackedObject<H>,
    /// The collections it outlived, up to the last sweep.
    pub gcs_survived: u64,
}

/// Tracked objects, swept after garbage collections.
#[derive(Debug)]
pub struct LivenessTable<H> {
    objects: Vec<TrackedObject<H>>,
    /// The collection id of the last sweep: objects still present then had
    /// outlived every collection up to it.
    last_sweep_gc: u64,
    /// The most objects held at a sweep, halved at each sweep since: what
    /// the table is likely to hold again before the next one.
    recent_peak: usize,
}

impl<H> Default for LivenessTable<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H> LivenessTable<H> {
    /// An empty table.
    pub fn new() -> Self {
        Self {
            objects: Vec::new(),
            last_sweep_gc: 0,
            recent_peak: 0,
        }
    }

    /// Starts tracking `object`.
    pub fn track(&mut self, object: TrackedObject<H>) {
        self.objects.push(object);
    }

    /// After collection `gc_id` (the running count of collections), removes
    /// every object whose handle `is_cleared` says is cleared and hands it to
    /// `on_dead`. Returns how many died. Sweep ids must not go backwards.
    pub fn sweep(
        &mut self,
        gc_id: u64,
        mut is_cleared: impl FnMut(&H) -> bool,
        mut on_dead: impl FnMut(DeadObject<H>),
    ) -> usize {
        let outlived_up_to = self.last_sweep_gc;
        self.recent_peak = (self.recent_peak / 2).max(self.objects.len());
        let mut dead = 0;
        for object in self
            .objects
            .extract_if(.., |object| is_cleared(&object.handle))
        {
            dead += 1;
            let gcs_survived = outlived_up_to.saturating_sub(object.gc_count_at_allocation);
            on_dead(DeadObject {
                object,
                found_dead_at_gc: gc_id,
                gcs_survived,
            });
        }
        self.last_sweep_gc = self.last_sweep_gc.max(gc_id);
        // Give memory back once the recent peak, never below what is held,
        // does not need it (see the module's doc).
        let needed = self.recent_peak;
        if self.objects.capacity() > 64 && needed < self.objects.capacity() / 4 {
            self.objects.shrink_to(needed * 2);
        }
        dead
    }

    /// Ends tracking: returns the objects still live, in the order they were
    /// tracked, each with the collections it outlived (those up to the last
    /// sweep: sweep once more at the end for an exact count).
    pub fn finish(self) -> Vec<LiveObject<H>> {
        let last_sweep_gc = self.last_sweep_gc;
        self.objects
            .into_iter()
            .map(|object| LiveObject {
                gcs_survived: last_sweep_gc.saturating_sub(object.gc_count_at_allocation),
                object,
            })
            .collect()
    }

    /// The objects tracked now, in the order they were tracked.
    pub fn iter(&self) -> impl Iterator<Item = &TrackedObject<H>> {
        self.objects.iter()
    }

    /// The objects tracked now, in the order they were tracked, to update
    /// what their handles hold (not which objects are tracked).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut TrackedObject<H>> {
        self.objects.iter_mut()
    }

    /// How many objects are tracked.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether no object is tracked.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The memory the table holds, in bytes.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.objects.capacity() * std::mem::size_of::<TrackedObject<H>>()
    }
}
