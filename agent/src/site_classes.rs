//! The class last allocated at each allocation site, per thread: how the
//! allocation callback finds a class's key without a JVMTI `GetTag`.
//!
//! An allocation site (the top frame's method and bytecode location) nearly
//! always allocates one class: `new Foo()` only ever makes a `Foo`. So a
//! thread keeps, per site, the class it saw there (as the session's weak
//! reference to the class) and the class's key. The callback checks the
//! guess with JNI `IsSameObject` against the weak reference, a call without
//! the tag map's lock, and asks JVMTI only when the guess is wrong or
//! missing (for a site the thread has not seen, the agent first tries the
//! class another thread saw there, checked the same way). A site is only
//! a hint: a wrong entry costs a look-up, never a wrong key.
//!
//! The table is direct-mapped, [`SiteClasses::SLOTS`] slots indexed by a
//! hash of the site: no probing, a site that collides takes the slot.
//!
//! Invariant: every class reference held is one the session has not
//! deleted. The owner empties the table ([`SiteClasses::validate`]) when the
//! stamp (the session, and the session's count of class references retired)
//! changes, and the session deletes a retired reference only once no
//! callback that could have seen the old stamp is still running.

/// One slot: empty when `class` is 0.
#[derive(Debug, Clone, Copy, Default)]
struct Site {
    method: u64,
    location: i64,
    /// The session's weak global reference to the class.
    class: u64,
    key: u64,
}

/// Sites to the class last allocated there (see the module's doc).
#[derive(Debug, Default)]
pub struct SiteClasses {
    /// [`Self::SLOTS`] long once used, empty before.
    slots: Vec<Site>,
    /// What the entries were made under: a session and its class epoch.
    stamp: (u64, u64),
}

impl SiteClasses {
    /// 8 KiB a thread that allocates. Not tuned: a thread allocating at
    /// more sites than this shares slots, and pays a `GetTag` on a miss.
    pub const SLOTS: usize = 256;

    /// Empties the table unless its entries were made under `stamp`.
    #[inline]
    pub fn validate(&mut self, stamp: (u64, u64)) {
        if self.stamp != stamp {
            self.slots.fill(Site::default());
            self.stamp = stamp;
        }
    }

    /// The class reference and key last seen at the site, if any.
    #[inline]
    pub fn get(&self, method: u64, location: i64) -> Option<(u64, u64)> {
        let site = self.slots.get(slot(method, location))?;
        (site.class != 0 && site.method == method && site.location == location)
            .then_some((site.class, site.key))
    }

    /// Remembers `class` (a weak reference, not 0) and its key for the
    /// site, in place of whatever shared its slot.
    pub fn insert(&mut self, method: u64, location: i64, class: u64, key: u64) {
        if self.slots.is_empty() {
            self.slots = vec![Site::default(); Self::SLOTS];
        }
        self.slots[slot(method, location)] = Site {
            method,
            location,
            class,
            key,
        };
    }
}

/// The slot of a site: the top bits of a multiplicative hash. Method ids
/// are aligned pointers and locations small, so both are mixed.
#[inline]
fn slot(method: u64, location: i64) -> usize {
    const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
    let mixed = (method ^ (location as u64).wrapping_mul(GOLDEN)).wrapping_mul(GOLDEN);
    (mixed >> (64 - SiteClasses::SLOTS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_finds_its_class_and_no_other_site_does() {
        let mut sites = SiteClasses::default();
        sites.validate((1, 0));
        assert_eq!(sites.get(0x7f00_1000, 4), None);
        sites.insert(0x7f00_1000, 4, 0xa1, 7);
        assert_eq!(sites.get(0x7f00_1000, 4), Some((0xa1, 7)));
        // Same method, another bytecode; another method, same bytecode.
        assert_eq!(sites.get(0x7f00_1000, 5), None);
        assert_eq!(sites.get(0x7f00_1008, 4), None);
    }

    #[test]
    fn sites_sharing_a_slot_replace_each_other() {
        let mut sites = SiteClasses::default();
        let first = (0x7f00_1000, 0);
        let other = (1..)
            .map(|location| (0x7f00_1000, location))
            .find(|&(m, l)| slot(m, l) == slot(first.0, first.1))
            .unwrap();
        sites.insert(first.0, first.1, 0xa1, 1);
        sites.insert(other.0, other.1, 0xa2, 2);
        assert_eq!(sites.get(first.0, first.1), None);
        assert_eq!(sites.get(other.0, other.1), Some((0xa2, 2)));
    }

    #[test]
    fn a_new_stamp_empties_the_table_and_the_same_stamp_keeps_it() {
        let mut sites = SiteClasses::default();
        sites.validate((1, 0));
        sites.insert(0x7f00_1000, 4, 0xa1, 7);
        sites.validate((1, 0));
        assert_eq!(sites.get(0x7f00_1000, 4), Some((0xa1, 7)));
        // A class reference retired in the session.
        sites.validate((1, 1));
        assert_eq!(sites.get(0x7f00_1000, 4), None);
        sites.insert(0x7f00_1000, 4, 0xa1, 7);
        // The next session: its references and keys are its own.
        sites.validate((2, 1));
        assert_eq!(sites.get(0x7f00_1000, 4), None);
    }

    #[test]
    fn sites_spread_over_the_slots() {
        // Method ids 8 bytes apart, a few bytecodes each, as in one class.
        let used: std::collections::HashSet<usize> = (0..64u64)
            .flat_map(|m| (0..4i64).map(move |l| slot(0x7f00_0000 + 8 * m, l * 3)))
            .collect();
        // 256 sites into 256 slots fill about 1 - 1/e of them at random.
        assert!(used.len() > 140, "{} slots used", used.len());
    }
}
