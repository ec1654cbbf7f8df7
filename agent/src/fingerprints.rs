//! A map from stack fingerprints ([`crate::record::SampleView::stack_fingerprint`])
//! to what the writer made of each stack: its one look-up per sample, laid
//! out for one cache miss.
//!
//! With thousands of distinct stacks the map is larger than the cache, so
//! a look-up's first touch is a miss. A SwissTable (std's `HashMap`) reads
//! its control bytes and then the entry, elsewhere: two misses. Here a slot
//! is the fingerprint and the value, 32 bytes aligned, two to a cache line,
//! in one array probed linearly from the slot the fingerprint's low bits
//! name. Fingerprints are hashes already, so they are not hashed again.
//!
//! Invariant: at most half the slots are full, so every probe meets an empty
//! slot and stops, and the average probe reads one line.

/// One slot: empty when `value` is `None`.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct Slot<V> {
    fingerprint: u128,
    value: Option<V>,
}

/// Stack fingerprints to values (see the module's doc).
#[derive(Debug)]
pub struct FingerprintMap<V> {
    /// A power of two long, or empty.
    slots: Vec<Slot<V>>,
    len: usize,
}

/// The fewest slots of a map that holds anything.
const MIN_SLOTS: usize = 16;

impl<V: Copy> Default for FingerprintMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Copy> FingerprintMap<V> {
    /// An empty map, holding no memory.
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            len: 0,
        }
    }

    /// The value of `fingerprint`, if any: what the tests read (the writer
    /// changes values in place, [`FingerprintMap::get_mut`]).
    #[cfg(test)]
    pub fn get(&self, fingerprint: u128) -> Option<V> {
        if self.slots.is_empty() {
            return None;
        }
        let at = Self::probe(&self.slots, fingerprint).ok()?;
        self.slots[at].value
    }

    /// The value of `fingerprint`, to change in place.
    #[inline]
    pub fn get_mut(&mut self, fingerprint: u128) -> Option<&mut V> {
        if self.slots.is_empty() {
            return None;
        }
        let at = Self::probe(&self.slots, fingerprint).ok()?;
        self.slots[at].value.as_mut()
    }

    /// Reads the slot where each fingerprint's probe starts, so that
    /// look-ups of them soon after find their slots in cache. The loads do
    /// not depend on each other, so their misses overlap, where look-ups one
    /// at a time, each waited for, take the misses in turn.
    pub fn prefetch(&self, fingerprints: impl Iterator<Item = u128>) {
        if self.slots.is_empty() {
            return;
        }
        let mask = self.slots.len() - 1;
        let mut seen = 0;
        for fingerprint in fingerprints {
            seen ^= self.slots[fingerprint as usize & mask].fingerprint;
        }
        // Kept, so that the loads are made.
        std::hint::black_box(seen);
    }

    /// Sets the value of `fingerprint`.
    pub fn insert(&mut self, fingerprint: u128, value: V) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.rebuild((self.slots.len() * 2).max(MIN_SLOTS));
        }
        if Self::place(&mut self.slots, fingerprint, value) {
            self.len += 1;
        }
    }

    /// Keeps the entries whose value `keep` says to keep (`keep` may be
    /// asked more than once of an entry). The map keeps its memory unless
    /// an eighth of it would hold what is left: a map emptied in part at
    /// every chunk's end fills again in the next.
    pub fn retain(&mut self, mut keep: impl FnMut(V) -> bool) {
        let mut at = 0;
        while at < self.slots.len() {
            match self.slots[at].value {
                Some(value) if !keep(value) => {
                    // The slot is filled again from behind (or emptied):
                    // look at it again.
                    self.remove_at(at);
                    self.len -= 1;
                }
                _ => at += 1,
            }
        }
        if self.slots.len() > MIN_SLOTS && self.len * 8 < self.slots.len() {
            self.rebuild(self.len * 2);
        }
    }

    /// Moves the entries to a new array of at least `room` slots (none for
    /// an empty map).
    fn rebuild(&mut self, room: usize) {
        let slots = if room == 0 {
            Vec::new()
        } else {
            let empty = Slot {
                fingerprint: 0,
                value: None,
            };
            vec![empty; room.next_power_of_two().max(MIN_SLOTS)]
        };
        let old = std::mem::replace(&mut self.slots, slots);
        for slot in old {
            if let Some(value) = slot.value {
                Self::place(&mut self.slots, slot.fingerprint, value);
            }
        }
    }

    /// Empties slot `at` and moves back into it the first entry after it
    /// whose probe passes over it, then does the same for the slot that
    /// entry left, until an empty slot: every entry stays reachable from
    /// its home slot without empty slots between.
    fn remove_at(&mut self, mut at: usize) {
        let mask = self.slots.len() - 1;
        let mut next = (at + 1) & mask;
        while self.slots[next].value.is_some() {
            let home = self.slots[next].fingerprint as usize & mask;
            // Distances going forward, around the end: the entry may move
            // to `at` if `at` lies on its probe, from `home` to `next`.
            if (next.wrapping_sub(home) & mask) >= (next.wrapping_sub(at) & mask) {
                self.slots[at] = self.slots[next];
                at = next;
            }
            next = (next + 1) & mask;
        }
        self.slots[at].value = None;
    }

    /// Puts the entry in its slot; returns whether it is new. `slots` has
    /// an empty slot.
    fn place(slots: &mut [Slot<V>], fingerprint: u128, value: V) -> bool {
        let found = Self::probe(slots, fingerprint);
        let (Ok(at) | Err(at)) = found;
        slots[at] = Slot {
            fingerprint,
            value: Some(value),
        };
        found.is_err()
    }

    /// The slot holding `fingerprint` (`Ok`), or the empty slot its probe
    /// ends at (`Err`). `slots` has an empty slot.
    #[inline]
    fn probe(slots: &[Slot<V>], fingerprint: u128) -> Result<usize, usize> {
        let mask = slots.len() - 1;
        let mut at = fingerprint as usize & mask;
        loop {
            let slot = &slots[at];
            match slot.value {
                None => return Err(at),
                Some(_) if slot.fingerprint == fingerprint => return Ok(at),
                Some(_) => at = (at + 1) & mask,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Fingerprints that share their low bits (and so their first slot),
    /// and others spread out, as real ones are.
    fn fingerprints() -> Vec<u128> {
        let crowded = (0..40u128).map(|i| (i << 64) | 5);
        let spread =
            (0..2_000u128).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835));
        // The last slots' fingerprints, whose probes wrap around the end.
        let wrapping = (0..40u128).map(|i| (i << 64) | 0xffff_ffff);
        crowded.chain(spread).chain(wrapping).collect()
    }

    #[test]
    fn finds_what_was_inserted_and_nothing_else() {
        let mut map = FingerprintMap::new();
        let mut expected = HashMap::new();
        assert_eq!(map.get(5), None, "an empty map holds nothing");
        assert_eq!(map.get_mut(5), None);
        for (i, &fingerprint) in fingerprints().iter().enumerate() {
            map.insert(fingerprint, i as u32);
            expected.insert(fingerprint, i as u32);
            // Inserting again replaces the value, as does a change in
            // place.
            if i % 7 == 0 {
                map.insert(fingerprint, i as u32 + 1);
                expected.insert(fingerprint, i as u32 + 1);
            } else if i % 5 == 0 {
                *map.get_mut(fingerprint).unwrap() += 2;
                expected.insert(fingerprint, i as u32 + 2);
            }
        }
        assert_eq!(map.len, expected.len());
        for (&fingerprint, &value) in &expected {
            assert_eq!(map.get(fingerprint), Some(value), "{fingerprint:#x}");
        }
        for absent in [6, (41 << 64) | 5, u128::MAX, 0x1_0000_0000] {
            assert!(!expected.contains_key(&absent));
            assert_eq!(map.get(absent), None, "{absent:#x}");
            assert_eq!(map.get_mut(absent), None, "{absent:#x}");
        }
    }

    #[test]
    fn retain_keeps_the_rest_findable_and_gives_memory_back() {
        let mut map = FingerprintMap::new();
        let all = fingerprints();
        for (i, &fingerprint) in all.iter().enumerate() {
            map.insert(fingerprint, i);
        }
        let full = map.slots.capacity();
        // Every tenth kept: entries whose probes passed over the dropped
        // ones must still be found.
        map.retain(|i| i % 10 == 0);
        for (i, &fingerprint) in all.iter().enumerate() {
            let expected = (i % 10 == 0).then_some(i);
            assert_eq!(map.get(fingerprint), expected, "{fingerprint:#x}");
        }
        assert_eq!(map.len, all.len().div_ceil(10));
        assert!(
            map.slots.capacity() * 4 <= full,
            "{} slots of {full}",
            map.slots.capacity()
        );
        map.retain(|_| false);
        assert_eq!(map.len, 0);
        assert_eq!(map.slots.capacity(), 0);
        assert_eq!(map.get(all[0]), None);
    }

    #[test]
    fn rounds_of_inserts_and_partial_retains_agree_with_a_hash_map() {
        // As chunks come and go: a round inserts (crowded fingerprints
        // among them, so that probes run long and wrap), then drops a
        // pseudo-random share of the entries.
        let mut map = FingerprintMap::new();
        let mut expected: HashMap<u128, u64> = HashMap::new();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..30u64 {
            for _ in 0..(next() % 3_000) {
                let random = next();
                // A third share their low 6 bits with many others.
                let fingerprint = if random % 3 == 0 {
                    (u128::from(random) << 64) | 0x3f
                } else {
                    u128::from(random) | (u128::from(next()) << 64)
                };
                map.insert(fingerprint, random ^ round);
                expected.insert(fingerprint, random ^ round);
            }
            let share = next() % 4;
            map.retain(|value| value % 4 >= share);
            expected.retain(|_, value| *value % 4 >= share);
            assert_eq!(map.len, expected.len(), "round {round}");
            for (&fingerprint, &value) in &expected {
                assert_eq!(map.get(fingerprint), Some(value), "round {round}");
            }
        }
    }

    #[test]
    fn at_most_half_the_slots_are_full_and_a_slot_is_one_half_cache_line() {
        let mut map = FingerprintMap::new();
        for (i, fingerprint) in fingerprints().into_iter().enumerate() {
            map.insert(fingerprint, i as u32);
            assert!(map.len * 2 <= map.slots.len());
        }
        assert_eq!(std::mem::size_of::<Slot<u32>>(), 32);
        assert_eq!(std::mem::align_of::<Slot<u32>>(), 32);
    }
}
