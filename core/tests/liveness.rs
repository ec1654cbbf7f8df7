//! The liveness table without a JVM: handles are plain ids and a fake heap
//! (a set of collected ids) plays the garbage collector.

use std::collections::{HashMap, HashSet};

use heapsampler_core::liveness::{LivenessTable, TrackedObject, TrackingDraw};

fn object(id: u64, gc_count: u64) -> TrackedObject<u64> {
    TrackedObject {
        handle: id,
        allocation_time: 1000 + id,
        size: 16 + id,
        weight: 512 * 1024,
        gc_count_at_allocation: gc_count,
    }
}

#[test]
fn sweeps_report_each_death_once_with_its_gc_and_survival() {
    let mut table = LivenessTable::new();
    let mut collected = HashSet::new();
    let mut deaths = HashMap::new();

    // Objects 0..100 allocated before any GC, 100..200 after GC 1.
    for id in 0..100 {
        table.track(object(id, 0));
    }
    // GC 1 collects the even objects of the first batch.
    collected.extend((0..100).filter(|id| id % 2 == 0));
    let died = table.sweep(
        1,
        |h| collected.contains(h),
        |dead| {
            assert!(
                deaths
                    .insert(
                        dead.object.handle,
                        (dead.found_dead_at_gc, dead.gcs_survived)
                    )
                    .is_none()
            );
        },
    );
    assert_eq!(died, 50);
    for id in 100..200 {
        table.track(object(id, 1));
    }
    // GC 2 collects nothing new; GC 3 collects every third object.
    assert_eq!(
        table.sweep(
            2,
            |h| collected.contains(h),
            |_| panic!("nothing died in GC 2")
        ),
        0
    );
    collected.extend((0..200).filter(|id| id % 3 == 0));
    table.sweep(
        3,
        |h| collected.contains(h),
        |dead| {
            assert!(
                deaths
                    .insert(
                        dead.object.handle,
                        (dead.found_dead_at_gc, dead.gcs_survived)
                    )
                    .is_none()
            );
            assert_eq!(
                dead.object,
                object(dead.object.handle, dead.object.gc_count_at_allocation)
            );
        },
    );

    for id in 0..200u64 {
        let allocated_at_gc = if id < 100 { 0 } else { 1 };
        match deaths.get(&id) {
            Some(&(gc, survived)) if id < 100 && id % 2 == 0 => {
                assert_eq!((gc, survived), (1, 0), "object {id} died in the first GC");
            }
            Some(&(gc, survived)) => {
                assert_eq!(id % 3, 0, "object {id} must not have died");
                // Seen live at the sweep of GC 2: it outlived GCs up to 2.
                assert_eq!((gc, survived), (3, 2 - allocated_at_gc), "object {id}");
            }
            None => assert!(
                !collected.contains(&id),
                "object {id} died but was not reported"
            ),
        }
    }

    let live = table.finish();
    let live_ids: HashSet<u64> = live.iter().map(|l| l.object.handle).collect();
    let expected: HashSet<u64> = (0..200).filter(|id| !collected.contains(id)).collect();
    assert_eq!(live_ids, expected);
    assert_eq!(
        live.len() + deaths.len(),
        200,
        "every object reported exactly once"
    );
    for l in &live {
        assert_eq!(l.gcs_survived, 3 - l.object.gc_count_at_allocation);
    }
}

#[test]
fn sweeps_that_skip_collections_attribute_deaths_to_the_later_one() {
    let mut table = LivenessTable::new();
    table.track(object(1, 0));
    table.track(object(2, 0));
    table.sweep(4, |_| false, |_| unreachable!());
    // Collections 5 to 9 went by unswept; object 1 died in one of them.
    let mut seen = Vec::new();
    table.sweep(
        9,
        |h| *h == 1,
        |dead| seen.push((dead.found_dead_at_gc, dead.gcs_survived)),
    );
    assert_eq!(
        seen,
        vec![(9, 4)],
        "dead by 9, known to have outlived 1 to 4"
    );
}

#[test]
fn memory_follows_what_is_held() {
    let mut table = LivenessTable::new();
    let empty = table.memory_bytes();
    for id in 0..100_000 {
        table.track(object(id, 0));
    }
    let full = table.memory_bytes();
    let entry = std::mem::size_of::<TrackedObject<u64>>();
    assert!(full >= 100_000 * entry, "reports at least what it holds");
    assert!(full <= 2 * 100_000 * entry + empty, "and not much more");
    // Nearly all die, and the table stays small: the peak of 100,000
    // halves at each sweep, so by the seventh it needs room for
    // 100,000 / 2^6 = 1,562 objects, and the memory has gone back.
    table.sweep(1, |h| *h >= 100, |_| {});
    assert_eq!(table.len(), 100);
    for gc in 2..=7 {
        table.sweep(gc, |_| false, |_| {});
    }
    assert!(
        table.memory_bytes() <= 4 * 1_563 * entry + empty,
        "after the die-off: {}",
        table.memory_bytes()
    );
}

#[test]
fn a_table_that_fills_and_empties_between_collections_keeps_its_room() {
    // The common case: most objects die young, so between two collections
    // the table fills to about the same size, and each sweep empties it.
    // Keeping its room means no reallocation (and no fresh pages to fault
    // in) after the first cycle; it can fail if a sweep gives the memory
    // back.
    let mut table = LivenessTable::new();
    let entry = std::mem::size_of::<TrackedObject<u64>>();
    let mut sizes = Vec::new();
    for gc in 1..=20u64 {
        // 10,000 to 10,999 objects a cycle: cycles are alike, not equal.
        let count = 10_000 + (gc * 7_919) % 1_000;
        for id in 0..count {
            table.track(object(id, gc - 1));
        }
        let full = table.memory_bytes();
        let died = table.sweep(gc, |_| true, |_| {});
        assert_eq!(died as u64, count);
        assert!(table.is_empty());
        sizes.push((full, table.memory_bytes()));
    }
    assert!(
        sizes
            .iter()
            .all(|&(full, emptied)| emptied == full && emptied >= 11_000 * entry),
        "each sweep keeps the room the next cycle needs: {sizes:?}"
    );
}

/// The tracked share of many samples, on many threads each seeded as the
/// agent seeds them (a clock reading and an address: seeds that differ a
/// little), is the fraction: binomial, within 5 standard deviations (a
/// chance below 1 in 10^6 for a correct draw); and pairs of consecutive
/// draws are tracked together as often as independence says.
#[test]
fn each_sample_is_tracked_with_the_fraction_on_its_own() {
    for fraction in [0.5, 0.1, 0.01, 0.001] {
        let (threads, per_thread) = (1000u64, 2000u64);
        let (mut tracked, mut both) = (0u64, 0u64);
        for thread in 0..threads {
            let mut draw = TrackingDraw::default();
            let mut previous = false;
            for _ in 0..per_thread {
                let now = draw.track(fraction, || 1_700_000_000_000 + thread * 64);
                tracked += u64::from(now);
                both += u64::from(now && previous);
                previous = now;
            }
        }
        let n = (threads * per_thread) as f64;
        let within = |count: u64, p: f64| {
            let sd = (n * p * (1.0 - p)).sqrt();
            (count as f64 - n * p).abs() <= 5.0 * sd
        };
        assert!(within(tracked, fraction), "{fraction}: {tracked} of {n}");
        assert!(
            within(both, fraction * fraction),
            "{fraction}: {both} pairs of {n}"
        );
    }
}

#[test]
fn a_fraction_of_one_tracks_every_sample_without_drawing() {
    let mut draw = TrackingDraw::default();
    assert!((0..1000).all(|_| draw.track(1.0, || unreachable!("no draw at 1"))));
}
