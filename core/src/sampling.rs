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
}
