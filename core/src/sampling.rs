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
//!
//! The weights are what the agent needs. The model of the sampler itself
//! (`SampleDistance`, `AllocationSampler`), which the statistics tests check
//! the weights against, is behind the `simulation` feature.

#[cfg(feature = "simulation")]
mod simulation;
#[cfg(feature = "simulation")]
pub use simulation::{AllocationSampler, SampleDistance};

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

/// The size of the object whose weight, rounded to a whole byte as
/// recordings store it, is `weight` at mean interval `interval`: the inverse
/// of [`bytes_weight`], for readers of recordings whose samples carry their
/// weight but not their size (`jdk.ObjectAllocationSample`).
///
/// Only sizes that are multiples of `alignment` are considered. HotSpot
/// aligns every object to 8 bytes (`ObjectAlignmentInBytes`, at least 8),
/// and [`bytes_weight`] grows by at least half a byte per byte of size, so
/// two sizes 8 bytes apart have weights at least 4 apart: the rounded weight
/// names one size exactly. `None` when no such size has that weight (a
/// weight below `interval`, which no object has, or one computed at another
/// interval).
pub fn size_from_weight(weight: u64, interval: u64, alignment: u64) -> Option<u64> {
    let alignment = alignment.max(1);
    let rounded = |units: u64| bytes_weight(units.saturating_mul(alignment), interval).round();
    let target = weight as f64;
    // bytes_weight(s) >= s, so the size is at most the weight: the smallest
    // multiple whose rounded weight reaches the target, found by bisection
    // (the weight is increasing in the size).
    let (mut low, mut high) = (1u64, weight / alignment + 1);
    if rounded(low) > target {
        return None;
    }
    while low < high {
        let middle = low + (high - low) / 2;
        if rounded(middle) < target {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    (rounded(low) == target).then(|| low * alignment)
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
    fn sizes_come_back_from_their_rounded_weights() {
        // Every aligned size up to 4 intervals and a spread of larger ones,
        // at intervals from tiny to 1 GiB: the weight as a recording stores
        // it (rounded) names the size again.
        for interval in [0, 1, 100, 32 * 1024, 512 * 1024, GIB] {
            let sizes = (1..=4 * interval.clamp(64, 512 * 1024) / 8)
                .step_by(7)
                .map(|k| 8 * k)
                .chain([8, 16, 24, 1 << 20, 3 << 30, 1 << 40]);
            for size in sizes {
                let weight = bytes_weight(size, interval).round() as u64;
                assert_eq!(
                    size_from_weight(weight, interval, 8),
                    Some(size),
                    "size {size} at interval {interval}, weight {weight}"
                );
            }
        }
    }

    #[test]
    fn weights_no_object_has_give_no_size() {
        let t = 512 * 1024;
        // Below the interval: the weight of no object.
        assert_eq!(size_from_weight(t - 10, t, 8), None);
        assert_eq!(size_from_weight(0, t, 8), None);
        // Between the weights of two aligned sizes (16 and 24 bytes weigh
        // T+8 and T+12).
        assert_eq!(bytes_weight(16, t).round() as u64, t + 8);
        assert_eq!(size_from_weight(t + 10, t, 8), None);
        // Alignment 1: sizes 19 and 20 both weigh T+10 once rounded (T+9.5
        // and T+10), and the smaller is given.
        assert_eq!(size_from_weight(t + 10, t, 1), Some(19));
        // Every allocation sampled: the weight is the size.
        assert_eq!(size_from_weight(40, 0, 8), Some(40));
        assert_eq!(size_from_weight(41, 0, 8), None);
        // No overflow at the top of the range (where f64 rounds sizes to
        // 2 KiB, so the size found is the aligned one nearest).
        assert!(size_from_weight(u64::MAX, t, 8).is_some_and(|s| s % 8 == 0));
    }
}
