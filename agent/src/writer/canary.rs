//! Canaries: objects of the agent's own, referenced by nothing but a weak
//! handle, whose clearing tells the watch that a collection marked the
//! samples allocated before them, where the JVM does not say so.
//!
//! The watch may judge a tracked sample only after a collection that would
//! have found it dead: then a handle still set means a live object. Where
//! the collector's notifications do not tell which collection that was, a
//! canary does, for it ages with the samples:
//!
//! - Generational ZGC ([`CanaryKind::Weak`]): its young collections keep
//!   what a weak handle points to and age it with the rest, until it is
//!   promoted (at most 15 young collections: `ZPageAge`'s survivor ages);
//!   only a major's old marking clears it. A canary made at `t` is cleared
//!   by the first major that marked it old; a sample allocated before `t`
//!   is at least as old (a young collection that found the canary found
//!   it too, pages age together), so it was old by then and that marking
//!   judged it: its handle is set only if it was reachable.
//! - G1 before JDK 21 ([`CanaryKind::TenuredThenWeak`]): young collections
//!   clear a young sample that died, and only a marking (whose end the JVM
//!   does not say) an old one. A canary held strongly until it is surely
//!   old (more collections than any tenuring threshold, 15), then only
//!   weakly from `t`, is cleared by the end of the first marking that began
//!   after `t`: every sample allocated before `t` and dead when that
//!   marking began was found dead, young by a young collection, old by the
//!   marking.
//!
//! Either way a canary cleared says: every sample allocated before its
//! time `t` (its [`Canary::since`]) is judged. The watch checks canaries
//! before it sweeps, so that a sample freed by the same marking is found
//! freed by that sweep.
//!
//! Invariants: at most [`MAX_FLYING`] canaries at once, made at most once
//! per [`SPACING`]; each handle is released exactly once (cleared, or at
//! [`Canaries::release_all`]); the time judged only grows.

use std::collections::VecDeque;

use jfr_writer::TICKS_PER_SECOND;

pub use crate::heap::CanaryKind;

/// The most canaries at once. Under generational ZGC a canary lives tens of
/// seconds (its promotion, then a major): at one a second this bounds the
/// handles the agent holds and coarsens, when a canary lives longer, the
/// time judged to a few canaries' spacing.
pub const MAX_FLYING: usize = 128;

/// The least time between two canaries, in recording ticks: the time
/// judged moves by about this much at most per canary.
pub const SPACING: i64 = TICKS_PER_SECOND;

/// More collections than any tenuring threshold (HotSpot's age field holds
/// 15, `MaxTenuringThreshold`'s most), plus one for a collection under way
/// when the canary was made.
pub const TENURED_AFTER: u64 = 17;

/// What canaries need of the JVM.
/// By default none can be made, and the watch judges as if no canary ever
/// cleared.
pub trait CanaryVm {
    /// A new object referenced by nothing but the handle returned: a weak
    /// (liveness) handle, or with `strong` a strong one for
    /// [`CanaryVm::weaken`]. `None` if none could be made.
    fn new_canary(&mut self, strong: bool) -> Option<u64> {
        let _ = strong;
        None
    }
    /// Turns a strong canary handle into a weak one (the strong one is
    /// released); `None` if it could not (the strong one is released too).
    fn weaken(&mut self, strong: u64) -> Option<u64> {
        let _ = strong;
        None
    }
    /// Whether a weak canary handle's object was collected.
    fn canary_cleared(&mut self, weak: u64) -> bool {
        let _ = weak;
        false
    }
    /// Releases a canary handle, weak or strong.
    fn release_canary(&mut self, handle: u64, strong: bool) {
        let _ = (handle, strong);
    }
}

#[derive(Debug, Clone, Copy)]
struct Canary {
    handle: u64,
    /// Held strongly until `collections` reaches this.
    strong_until: Option<u64>,
    /// Since when it is held weakly (ticks); when strong, when it was made.
    since: i64,
}

/// The canaries flying, oldest first.
#[derive(Debug)]
pub struct Canaries {
    kind: CanaryKind,
    flying: VecDeque<Canary>,
    last_made: Option<i64>,
    /// Every sample allocated before this (ticks) is judged.
    judged_until: i64,
}

impl Canaries {
    pub fn new(kind: CanaryKind) -> Self {
        Self {
            kind,
            flying: VecDeque::new(),
            last_made: None,
            judged_until: i64::MIN,
        }
    }

    /// Checks the canaries at `now`, `collections` having been counted so
    /// far, and makes one if due. Returns the time before which every
    /// sample is judged now, if a canary cleared since the last call moved
    /// it.
    pub fn check(&mut self, vm: &mut impl CanaryVm, now: i64, collections: u64) -> Option<i64> {
        let before = self.judged_until;
        let mut kept = VecDeque::with_capacity(self.flying.len());
        for mut canary in self.flying.drain(..) {
            match canary.strong_until {
                Some(until) if collections >= until => {
                    // One that cannot be weakened is gone: its strong
                    // handle was released.
                    if let Some(weak) = vm.weaken(canary.handle) {
                        canary.handle = weak;
                        canary.strong_until = None;
                        canary.since = now;
                        kept.push_back(canary);
                    }
                }
                Some(_) => kept.push_back(canary),
                None if vm.canary_cleared(canary.handle) => {
                    vm.release_canary(canary.handle, false);
                    self.judged_until = self.judged_until.max(canary.since);
                }
                None => kept.push_back(canary),
            }
        }
        self.flying = kept;
        let due = self.last_made.is_none_or(|made| now - made >= SPACING);
        if due && self.flying.len() < MAX_FLYING {
            let strong = self.kind == CanaryKind::TenuredThenWeak;
            if let Some(handle) = vm.new_canary(strong) {
                self.flying.push_back(Canary {
                    handle,
                    strong_until: strong.then_some(collections + TENURED_AFTER),
                    since: now,
                });
                self.last_made = Some(now);
            }
        }
        (self.judged_until > before).then_some(self.judged_until)
    }

    /// Canaries flying now.
    #[cfg(test)]
    pub fn flying(&self) -> usize {
        self.flying.len()
    }

    /// Releases every canary's handle (the recording ends).
    pub fn release_all(&mut self, vm: &mut impl CanaryVm) {
        for canary in self.flying.drain(..) {
            vm.release_canary(canary.handle, canary.strong_until.is_some());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Handles by number: `true` if strong; a set of the cleared.
    #[derive(Default)]
    struct FakeVm {
        next: u64,
        live: HashMap<u64, bool>,
        cleared: Vec<u64>,
        released: Vec<u64>,
    }

    impl CanaryVm for FakeVm {
        fn new_canary(&mut self, strong: bool) -> Option<u64> {
            self.next += 1;
            self.live.insert(self.next, strong);
            Some(self.next)
        }
        fn weaken(&mut self, strong: u64) -> Option<u64> {
            assert_eq!(self.live.remove(&strong), Some(true));
            self.new_canary(false)
        }
        fn canary_cleared(&mut self, weak: u64) -> bool {
            assert_eq!(self.live.get(&weak), Some(&false));
            self.cleared.contains(&weak)
        }
        fn release_canary(&mut self, handle: u64, strong: bool) {
            assert_eq!(self.live.remove(&handle), Some(strong), "released once");
            self.released.push(handle);
        }
    }

    #[test]
    fn a_cleared_canary_judges_what_was_allocated_before_it_was_made() {
        let mut vm = FakeVm::default();
        let mut canaries = Canaries::new(CanaryKind::Weak);
        for second in 0..10 {
            assert_eq!(canaries.check(&mut vm, second * SPACING, 0), None);
        }
        assert_eq!(canaries.flying(), 10);
        // The third and fourth (made at 2 s and 3 s) cleared, the first two
        // not yet: what was allocated before 3 s is judged.
        vm.cleared.extend([3, 4]);
        assert_eq!(canaries.check(&mut vm, 10 * SPACING, 0), Some(3 * SPACING));
        // The first two clear later: the time judged does not go back.
        vm.cleared.extend([1, 2]);
        assert_eq!(canaries.check(&mut vm, 11 * SPACING, 0), None);
        assert_eq!(vm.released, [3, 4, 1, 2]);
        canaries.release_all(&mut vm);
        assert!(vm.live.is_empty(), "every handle released");
    }

    #[test]
    fn canaries_are_spaced_and_bounded() {
        let mut vm = FakeVm::default();
        let mut canaries = Canaries::new(CanaryKind::Weak);
        for pass in 0..10 * MAX_FLYING as i64 {
            canaries.check(&mut vm, pass * SPACING / 4, 0);
        }
        assert_eq!(canaries.flying(), MAX_FLYING);
        assert_eq!(vm.next, MAX_FLYING as u64);
    }

    #[test]
    fn a_tenured_canary_is_weakened_after_enough_collections_and_judges_from_then() {
        let mut vm = FakeVm::default();
        let mut canaries = Canaries::new(CanaryKind::TenuredThenWeak);
        canaries.check(&mut vm, 0, 5);
        assert_eq!(vm.live.get(&1), Some(&true));
        canaries.check(&mut vm, 1, 5 + TENURED_AFTER - 1);
        assert_eq!(vm.live.get(&1), Some(&true), "not tenured yet");
        canaries.check(&mut vm, 2 * SPACING, 5 + TENURED_AFTER);
        assert_eq!(vm.live.get(&1), None, "weakened");
        let weak = vm.next - 1;
        assert_eq!(vm.live.get(&weak), Some(&false));
        vm.cleared.push(weak);
        assert_eq!(
            canaries.check(&mut vm, 9 * SPACING, 5 + TENURED_AFTER),
            Some(2 * SPACING),
            "judged from when it was let go"
        );
        canaries.release_all(&mut vm);
        assert!(vm.live.is_empty(), "every handle released");
    }
}
