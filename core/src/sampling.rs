//! Poisson sampling of allocated bytes, and what one sample stands for.
//!
//! HotSpot's `ThreadHeapSampler` (JEP 331) and tcmalloc sample the stream of
//! allocated bytes as a Poisson process: the distance from one sample point to
//! the next is exponential with mean `T` (the sampling interval), and an object
//! is sampled when a sample point falls inside it. After a sample the next
//! distance is drawn afresh from the end of that object, so points that fall
//! in the same object are skipped. An object of `s` bytes is therefore sampled
//! with probability `p = 1 - exp(-s/T)`, and `s / p` is an unbiased estimate of
//! the bytes it stands for ([`bytes_weight`]).

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

/// The probability that an object of `size` bytes is sampled at mean interval
/// `interval`: `1 - exp(-size/interval)`, computed with `expm1` so that it keeps
/// full precision when `size` is tiny next to `interval`.
#[inline]
pub fn sample_probability(size: u64, interval: u64) -> f64 {
    if interval == 0 {
        return 1.0;
    }
    -(-(size as f64) / interval as f64).exp_m1()
}

/// The unbiased estimate of the allocated bytes that one sample of an object
/// of `size` bytes stands for, at mean interval `interval`:
/// `size / (1 - exp(-size/interval))`.
///
/// Close to `interval + size/2` when `size` is much smaller than `interval`,
/// `1.582 * interval` at `size == interval`, and close to `size` when `size`
/// is much larger. An interval of 0 (every allocation sampled) gives `size`.
/// A size of 0 cannot be sampled by a byte sampler; it gives the limit at 0,
/// `interval`, rather than 0/0.
#[inline]
pub fn bytes_weight(size: u64, interval: u64) -> f64 {
    if size == 0 {
        return interval as f64;
    }
    size as f64 / sample_probability(size, interval)
}

/// The unbiased estimate of the number of objects that one sample of an object
/// of `size` bytes stands for: `1 / (1 - exp(-size/interval))`.
///
/// A size of 0 is counted as 1 byte so that the estimate stays finite (a byte
/// sampler never samples an empty object).
#[inline]
pub fn object_weight(size: u64, interval: u64) -> f64 {
    1.0 / sample_probability(size.max(1), interval)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn rel_err(actual: f64, expected: f64) -> f64 {
        ((actual - expected) / expected).abs()
    }

    #[test]
    fn weight_at_size_equal_to_interval_is_1_582_times_interval() {
        let t = 512 * 1024;
        let expected = t as f64 / (1.0 - (-1.0f64).exp());
        assert!(rel_err(bytes_weight(t, t), expected) < 1e-15);
        assert!((bytes_weight(t, t) / t as f64 - 1.582).abs() < 0.0005);
        assert!(rel_err(object_weight(t, t), 1.0 / (1.0 - (-1.0f64).exp())) < 1e-15);
    }

    #[test]
    fn weight_of_tiny_object_keeps_full_precision() {
        // s = 8, T = 1 GiB: s/T = 7.45e-9. The naive 1 - exp(-x) loses about
        // half the digits here; the series T + s/2 + s^2/(12T) is exact to
        // far below f64 precision at this ratio.
        let (s, t) = (8u64, GIB);
        let series = t as f64 + s as f64 / 2.0 + (s * s) as f64 / (12.0 * t as f64);
        let w = bytes_weight(s, t);
        assert!(rel_err(w, series) < 1e-14, "weight {w}, series {series}");
        let count_series = t as f64 / s as f64 + 0.5 + s as f64 / (12.0 * t as f64);
        assert!(rel_err(object_weight(s, t), count_series) < 1e-14);
    }

    #[test]
    fn weight_of_huge_object_is_its_size() {
        let t = 512 * 1024;
        for s in [100 * t, 10_000 * t, u64::MAX] {
            let w = bytes_weight(s, t);
            assert!(rel_err(w, s as f64) < 1e-15, "size {s} weight {w}");
            assert_eq!(object_weight(s, t), 1.0);
        }
    }

    #[test]
    fn weights_stay_finite_at_the_edges() {
        for (s, t) in [
            (0, 0),
            (0, 1),
            (1, 0),
            (1, u64::MAX),
            (u64::MAX, 1),
            (0, u64::MAX),
        ] {
            let (w, c) = (bytes_weight(s, t), object_weight(s, t));
            assert!(w.is_finite() && w >= 0.0, "bytes_weight({s}, {t}) = {w}");
            assert!(c.is_finite() && c >= 1.0, "object_weight({s}, {t}) = {c}");
        }
        assert_eq!(bytes_weight(24, 0), 24.0, "interval 0 samples everything");
        assert_eq!(object_weight(24, 0), 1.0);
    }

    #[test]
    fn weight_is_monotone_in_size() {
        let t = 4096;
        let mut last = 0.0;
        for s in 1..20_000u64 {
            let w = bytes_weight(s, t);
            assert!(
                w > last,
                "weight must grow with size: w({s}) = {w} <= {last}"
            );
            last = w;
        }
    }

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
