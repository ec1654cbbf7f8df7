//! A model of HotSpot's heap sampler (JEP 331): exponential distances
//! between sample points and the per-thread sampler that applies them. The
//! agent does not use it (the JVM samples); the statistics tests, the
//! `simulate` example and the benchmarks do, as may any Rust program that
//! samples its own allocations. Behind the `simulation` feature so that the
//! agent does not build it or its random-number dependencies.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::Exp1;

/// Draws the distances, in bytes, between consecutive sample points: exponential
/// with a mean of `interval` bytes.
///
/// Seedable and cheap: one draw is a few nanoseconds, with no allocation and no
/// lock. An interval of 0 means "sample every allocation": every distance is 0.
#[derive(Debug, Clone)]
pub struct SampleDistance {
    interval: u64,
    /// `interval` as a float, converted once: u64 to f64 is several
    /// instructions on baseline x86-64 and would cost a third of a draw.
    interval_f64: f64,
    rng: SmallRng,
}

impl SampleDistance {
    /// A generator of distances with mean `interval` bytes, seeded with `seed`:
    /// the same seed gives the same sequence.
    pub fn new(interval: u64, seed: u64) -> Self {
        Self {
            interval,
            interval_f64: interval as f64,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The mean distance, in bytes.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Changes the mean distance for the draws that follow.
    pub fn set_interval(&mut self, interval: u64) {
        self.interval = interval;
        self.interval_f64 = interval as f64;
    }

    /// The number of bytes until the next sample point.
    ///
    /// The continuous exponential draw `D` becomes `floor(D) + 1` (as in
    /// HotSpot), so that "sample the allocation of `s` bytes when
    /// `s >= distance`" (what [`AllocationSampler`] does) happens exactly when
    /// `D < s`: with probability `1 - exp(-s/T)`.
    #[inline]
    pub fn next_distance(&mut self) -> u64 {
        if self.interval == 0 {
            return 0;
        }
        let standard: f64 = self.rng.sample(Exp1);
        // `as` truncates and saturates: an absurd interval cannot overflow.
        ((standard * self.interval_f64) as u64).saturating_add(1)
    }
}

/// The per-thread sampling state of the JVM's heap sampler: it is told every
/// allocation of one thread and says which ones are sampled.
///
/// This is the model our weights assume, and what a Rust program can use to
/// sample its own allocations.
#[derive(Debug, Clone)]
pub struct AllocationSampler {
    distance: SampleDistance,
    bytes_until_sample: u64,
}

impl AllocationSampler {
    /// A sampler with mean interval `interval` bytes (0: every allocation).
    pub fn new(interval: u64, seed: u64) -> Self {
        let mut distance = SampleDistance::new(interval, seed);
        let bytes_until_sample = distance.next_distance();
        Self {
            distance,
            bytes_until_sample,
        }
    }

    /// The mean interval in force, in bytes.
    pub fn interval(&self) -> u64 {
        self.distance.interval()
    }

    /// Changes the mean interval. The distance already drawn stands, as in
    /// HotSpot: by the exponential's lack of memory, the remaining part of it
    /// is still exponential with the old mean.
    pub fn set_interval(&mut self, interval: u64) {
        self.distance.set_interval(interval);
    }

    /// Records an allocation of `size` bytes; returns whether it is sampled.
    #[inline]
    pub fn on_allocation(&mut self, size: u64) -> bool {
        if size < self.bytes_until_sample {
            self.bytes_until_sample -= size;
            false
        } else {
            // Sample points that fall in the rest of this object are skipped;
            // the next distance counts from the object's end.
            self.bytes_until_sample = self.distance.next_distance();
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_zero_samples_every_allocation() {
        let mut sampler = AllocationSampler::new(0, 1);
        assert!((0..1000).all(|i| sampler.on_allocation(i % 64)));
    }

    #[test]
    fn huge_interval_saturates_instead_of_overflowing() {
        let mut distance = SampleDistance::new(u64::MAX, 3);
        let draws: Vec<u64> = (0..10_000).map(|_| distance.next_distance()).collect();
        assert!(draws.contains(&u64::MAX), "draws above 2^64 saturate");
    }

    #[test]
    fn distances_are_at_least_one_byte() {
        // At interval 1 about 63% of exponential draws are below 1 byte: they
        // must become 1, not 0, or every allocation would be sampled.
        let mut distance = SampleDistance::new(1, 4);
        assert!((0..10_000).all(|_| distance.next_distance() >= 1));
    }

    #[test]
    fn same_seed_same_distances() {
        let mut a = SampleDistance::new(1000, 42);
        let mut b = SampleDistance::new(1000, 42);
        let mut c = SampleDistance::new(1000, 43);
        let va: Vec<u64> = (0..100).map(|_| a.next_distance()).collect();
        let vb: Vec<u64> = (0..100).map(|_| b.next_distance()).collect();
        let vc: Vec<u64> = (0..100).map(|_| c.next_distance()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }
}
