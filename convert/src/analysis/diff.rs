//! `heapsampler diff`: what changed between two recordings, per site, class
//! or thread. Allocations compare as rates (bytes per second of each
//! recording), so recordings of different lengths compare; live objects
//! compare as the bytes still live at each recording's end.
//!
//! Each side's figure comes with its 95% interval ([`Estimate`]). A change
//! is *significant* when the two intervals do not overlap: a conservative
//! test (two estimates whose intervals touch can still differ at the 95%
//! level), chosen because it is the one a reader checks by eye on the
//! printed intervals. A group with no samples on one side gets the interval
//! of a group that had none ([`unseen_interval`]), each unseen sample
//! weighing what the group's samples weigh on the other side: a site that
//! one sample found in one recording is not significantly new.

use std::collections::HashMap;

use heapsampler_core::estimate::{Estimate, Interval, unseen_interval};

use crate::analysis::top::Table;

/// One group's figures in the two recordings.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The site, class or thread.
    pub key: String,
    /// The base recording's figure and its interval (per second for rates).
    pub base: Interval,
    /// The new recording's.
    pub new: Interval,
    /// Samples behind each side.
    pub samples: (u64, u64),
}

impl Change {
    /// New minus base.
    pub fn change(&self) -> f64 {
        self.new.estimate - self.base.estimate
    }

    /// Whether the two intervals are disjoint.
    pub fn is_significant(&self) -> bool {
        self.new.low > self.base.high || self.base.low > self.new.high
    }
}

/// What changed: every group of either recording, significant changes
/// first, each part by the size of its change.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The groups.
    pub changes: Vec<Change>,
    /// The whole of each recording (every group's samples together).
    pub total: Change,
    /// Whether the figures are rates (bytes per second).
    pub per_second: bool,
}

/// The figure of `estimate` in a recording of `seconds` (a rate when
/// `per_second`); for a group without samples there, the interval of an
/// unseen group whose samples weigh as `other`'s do.
fn figure(estimate: Option<&Estimate>, other: Option<&Estimate>, per: f64) -> Interval {
    let interval = match estimate {
        Some(estimate) if estimate.samples() > 0 => estimate.bytes_interval(),
        _ => {
            let scale = other
                .filter(|o| o.samples() > 0)
                .map_or(0.0, |o| o.bytes() / o.samples() as f64);
            unseen_interval(scale)
        }
    };
    Interval {
        estimate: interval.estimate / per,
        low: interval.low / per,
        high: interval.high / per,
    }
}

/// Compares the tables of two recordings, grouped the same way. With
/// `per_second`, each figure is divided by its recording's length.
pub fn diff(base: &Table, new: &Table, per_second: bool) -> Diff {
    let per = |table: &Table| {
        if per_second && table.seconds > 0.0 {
            table.seconds
        } else {
            1.0
        }
    };
    let (base_per, new_per) = (per(base), per(new));
    let base_groups: HashMap<&str, &Estimate> = base
        .entries
        .iter()
        .map(|e| (e.key.as_str(), &e.estimate))
        .collect();
    let new_groups: HashMap<&str, &Estimate> = new
        .entries
        .iter()
        .map(|e| (e.key.as_str(), &e.estimate))
        .collect();
    let keys = base
        .entries
        .iter()
        .map(|e| e.key.as_str())
        .chain(new.entries.iter().map(|e| e.key.as_str()))
        .filter({
            let mut seen = std::collections::HashSet::new();
            move |key| seen.insert(*key)
        });
    let mut changes: Vec<Change> = keys
        .map(|key| {
            let (b, n) = (base_groups.get(key).copied(), new_groups.get(key).copied());
            Change {
                key: key.to_owned(),
                base: figure(b, n, base_per),
                new: figure(n, b, new_per),
                samples: (
                    b.map_or(0, Estimate::samples),
                    n.map_or(0, Estimate::samples),
                ),
            }
        })
        .collect();
    changes.sort_by(|a, b| {
        b.is_significant()
            .cmp(&a.is_significant())
            .then_with(|| b.change().abs().total_cmp(&a.change().abs()))
            .then_with(|| a.key.cmp(&b.key))
    });
    let total = Change {
        key: "total".to_owned(),
        base: figure(Some(&base.total), Some(&new.total), base_per),
        new: figure(Some(&new.total), Some(&base.total), new_per),
        samples: (base.total.samples(), new.total.samples()),
    };
    Diff {
        changes,
        total,
        per_second,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::top::Entry;
    use crate::model::allocation::Source;

    const T: u64 = 512 * 1024;

    fn table(seconds: f64, groups: &[(&str, u64)]) -> Table {
        let mut total = Estimate::new();
        let entries = groups
            .iter()
            .map(|&(key, samples)| {
                let mut estimate = Estimate::new();
                for _ in 0..samples {
                    estimate.add(16, T);
                }
                total.merge(&estimate);
                Entry {
                    key: key.to_owned(),
                    estimate,
                    held_by: None,
                }
            })
            .collect();
        Table {
            entries,
            total,
            untracked: Estimate::new(),
            tracking: Default::default(),
            source: Source::AllocationSamples,
            events_by_type: vec![total.samples()],
            events: total.samples(),
            left_out: Vec::new(),
            seconds,
            interval: None,
            paths_to_roots: None,
        }
    }

    #[test]
    fn a_grown_site_comes_first_and_a_steady_one_is_not_significant() {
        // The new recording is twice as long: the steady site's rate is the
        // same, the leak's has grown tenfold.
        let base = table(10.0, &[("steady", 200), ("leak", 20), ("gone", 30)]);
        let new = table(20.0, &[("steady", 400), ("leak", 400), ("once", 1)]);
        let diff = diff(&base, &new, true);
        let order: Vec<(&str, bool)> = diff
            .changes
            .iter()
            .map(|c| (c.key.as_str(), c.is_significant()))
            .collect();
        assert_eq!(
            order,
            [
                ("leak", true),
                ("gone", true),
                // One sample in one recording, none in the other: unseen
                // is not absent.
                ("once", false),
                ("steady", false),
            ]
        );
        let steady = &diff.changes[3];
        assert!(steady.change().abs() < 0.01 * steady.base.estimate);
        let leak = &diff.changes[0];
        assert!(leak.change() > 0.0 && leak.new.low > leak.base.high);
        assert!(diff.total.is_significant());
    }

    #[test]
    fn live_bytes_compare_as_they_are() {
        let base = table(10.0, &[("cache", 10)]);
        let new = table(100.0, &[("cache", 10)]);
        let live = diff(&base, &new, false);
        assert_eq!(live.changes[0].change(), 0.0);
        let rate = diff(&base, &new, true);
        assert!(rate.changes[0].change() < 0.0);
        assert!(rate.changes[0].is_significant());
    }
}
