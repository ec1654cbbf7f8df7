//! What a group of samples says about the allocations it stands for: the
//! estimated bytes and objects, the variance of each estimate, and a 95%
//! interval around it.
//!
//! # The estimates and their variances
//!
//! The sampler lays sample points on each thread's stream of allocated bytes
//! as a Poisson process of rate `1/T` (exponential distances of mean `T`), and
//! an object is sampled when at least one point falls in its bytes. So object
//! `i` of `s_i` bytes is sampled (`I_i = 1`) with probability
//! `p_i = 1 - exp(-s_i/T)`, and the `I_i` are **independent**: objects occupy
//! disjoint byte ranges, and the numbers of points of a Poisson process in
//! disjoint ranges are independent. Skipping the points after the first in a
//! sampled object and drawing the next distance afresh from the object's end
//! (what HotSpot does) changes nothing: by the exponential's lack of memory,
//! that fresh distance is distributed as the distance to the next point of
//! the same process past the object. Threads have their own processes.
//!
//! For a quantity `y_i` of each object (`s_i` for bytes, 1 for objects), the
//! Horvitz-Thompson estimate of the group's total `Y = Σ y_i` sums, over the
//! sampled objects only, `y_i / p_i`:
//!
//! ```text
//! Ŷ = Σ_i I_i y_i / p_i                       E[Ŷ] = Σ_i p_i y_i / p_i = Y
//! Var(Ŷ) = Σ_i (y_i/p_i)² p_i (1 - p_i) = Σ_i y_i² (1 - p_i) / p_i
//! ```
//!
//! (variances add because the `I_i` are independent; `Var(I_i) = p_i(1-p_i)`).
//! The variance is a sum over *all* objects, most of them never seen, so it
//! is itself estimated the Horvitz-Thompson way, each sampled object's term
//! divided by its `p_i` once more:
//!
//! ```text
//! V̂ = Σ_i I_i y_i² (1 - p_i) / p_i²           E[V̂] = Σ_i p_i y_i² (1 - p_i) / p_i² = Var(Ŷ)
//! ```
//!
//! so `V̂` is unbiased, term by term. For bytes that is `Σ s²(1-p)/p²`, for
//! objects `Σ (1-p)/p²`. An object much larger than `T` has `p → 1`: it is
//! certainly sampled, and its terms of `V̂` go to 0.
//!
//! A group is any set of objects chosen without looking at whether they were
//! sampled (an allocation site, a class, the objects still live at the end of
//! the recording): the same sums over its samples estimate its totals, and
//! groups that share no object have independent estimates, whose variances
//! add ([`Estimate::merge`]). Each sample carries the interval in force when
//! it was taken, so a group may span interval changes. When the interval is
//! set from earlier samples (the rate limiter), inclusions are no longer
//! independent, but each term's error `(I_i - p_i) y_i/p_i` still has mean 0
//! given the past, so the errors are uncorrelated and both `E[Ŷ] = Y` and
//! `E[V̂] = Var(Ŷ)` still hold (a martingale argument).
//!
//! # A share of the samples: liveness tracked with probability `q`
//!
//! Where only a share of the samples' liveness is tracked (the agent's on
//! generational ZGC, `ObjectLifetime.trackingProbability`), a sampled object
//! is tracked on a draw of its own with probability `q_i`, independent of
//! the sampler's points. An object's liveness is then known with
//! probability `π_i = p_i q_i`, independently of the others' (two
//! independent draws per object, each independent across objects), and a
//! group's live bytes are estimated the same Horvitz-Thompson way with `π_i`
//! in place of `p_i`: `Σ y/(p q)`, variance `Σ y²(1 - p q)/(p q)²`. A sample
//! as stored gives exactly these terms through
//! [`Estimate::add_weighted`] fed its size and `weight / q`: it takes
//! `p' = s / (weight/q) = p q` and `1 - p' = 1 - p q`, so the estimate term
//! is `s/(p q)`, the variance term `(s/(p q))² (1 - p q)`, the objects'
//! `1/(p q)`, and the interval's gamma scale `(s/(p q))(1 - p q)`, about
//! `T / q` for a small object: the interval is a Jeffreys interval on the
//! count of tracked samples, each standing for `T / q` bytes. Its width
//! grows as `1 / √q` at a fixed group: the interval says what tracking a
//! share costs. What the samples saw (`seen`, the lower bound's floor) is
//! the tracked objects' own bytes, which certainly existed. When `q` is set
//! from earlier samples (per window, for a number tracked a second), the
//! martingale argument above holds as it is: each term's inclusion
//! probability is known before its draws. Measured by simulation in
//! `core/tests/growth.rs` (`thinned_live_bytes_intervals_cover_95_percent`,
//! 3000 runs each, about 130 to 175 tracked samples live): the 95% interval
//! of a group's live bytes holds the truth in 94.83% of runs at `q = 10%`
//! with 96-byte objects, 94.53% with a mix of 48 B to 1 MiB; 95.37% and
//! 94.40% at 1%; 95.87% with `q` set each second for 16 tracked a second
//! while the rest of the JVM is busy half the time (`q` about 0.06 then,
//! 0.33 not); the mean estimate within 0.4% of the truth in each. Samples
//! not drawn carry no term: the tracked ones stand for them. Samples whose
//! `q` is 0 (excluded by size, or past the agent's cap) stand for nothing
//! and are reported apart; a cap that turns `q` to 0 after a count of
//! tracked samples makes which samples are excluded depend on the draws,
//! which the estimate does not correct for.
//!
//! # The interval
//!
//! The normal interval `Ŷ ± 1.96 √V̂` under-covers small groups: a group of
//! objects much smaller than `T` is a Poisson count of samples times `T`,
//! whose distribution is skewed right, and with a few samples the normal
//! interval is both too short above and too long below (at one sample it
//! reaches down to `-0.96 T`). [`Estimate::bytes_interval`] and
//! [`Estimate::objects_interval`] give instead a gamma interval, in the way
//! of Fay and Feuer (1997) for weighted sums of Poisson counts:
//!
//! - Take `Ŷ` as a gamma variable with the estimated mean and variance:
//!   shape `Ŷ²/V̂`, scale `V̂/Ŷ`. When every sample stands for the same `T`
//!   bytes that is the sample count `k` times `T`.
//! - Add half a sample to it, and take its 2.5% and 97.5% quantiles. For a
//!   count of `k` samples of weight `T` this is `T` times the Jeffreys
//!   interval for a Poisson mean (the gamma of shape `k + ½`), which Brown,
//!   Cai and DasGupta (2003) recommend over the exact (Garwood) interval:
//!   the exact one adds a whole sample to the upper bound and none to the
//!   lower, never covers less than 95% and therefore covers more on average
//!   (96.6% for 5 to 20 expected samples, 95.9% for 20 to 60): it is wider
//!   than it says. The half
//!   sample added is the seen one with the largest gamma scale (variance
//!   term over estimate term), `y(1-p)/p`: for bytes `s/(exp(s/T) - 1)`, at
//!   most `T` (reached by tiny objects), going to 0 for objects much larger
//!   than `T`, which are certainly sampled.
//! - The lower bound is never below what the samples *saw* (the bytes of the
//!   sampled objects, or their number): those objects certainly existed.
//!
//! The gamma quantiles come from the Wilson-Hilferty approximation (the cube
//! root of a gamma variable is nearly normal). For the gamma of mean `Y` and
//! variance `V` (here `Ŷ` and `V̂` with the half sample added) and its
//! relative standard error `r = √V / Y`, the quantile at normal deviate `z`
//! is `Y (1 - r²/9 + z r/3)³`: no division by the variance, so it gives the
//! point `Y` when the variance is 0, and it becomes the normal interval
//! `Y (1 ± 1.96 r)` as the group grows. Against the exact gamma quantiles it
//! is within 0.3% at the upper bound from one sample on; at the lower bound
//! it is lower (so wider, the safe side) at one or two samples (0.091 `T`
//! instead of 0.108 `T` at one) and within 1% from five on.
//!
//! Where it holds and where it stops. For a Poisson count of mean `μ`
//! samples, the coverage of this interval (computed exactly, over the
//! counts) oscillates around 95% as `μ` varies, as any interval for a
//! discrete count does: over `μ` from 5 to 20 it averages 95.0% and ranges
//! from 92.4% to 96.6%; from 20 to 60, 95.0% within [93.9%, 96.1%]; from 60
//! to 200, 95.0% within [94.3%, 95.7%]. Objects near or above `T` are less
//! discrete than a Poisson count, and their coverage is closer to 95%; a
//! group that mixes very different sizes covers a little more, as its added
//! half sample is the largest. The interval stops holding for what a report
//! lists *because* it was sampled: a site whose true allocation is below
//! the one-sample lower bound (about `T/11`) appears only when luck samples
//! it, and then its interval lies above the truth. The model also assumes
//! the JVM's sampler: every object's size known, and points laid as a
//! Poisson process of the recorded interval.

use crate::sampling::sample_probability;

/// The normal deviate of a two-sided 95% interval: `Φ⁻¹(0.975)`.
pub(crate) const Z_95: f64 = 1.959_963_984_540_054;

/// The running sums of one estimated quantity (bytes or objects) over a
/// group's samples. Crate-visible for [`growth`](crate::growth), which keeps
/// differences of the additive ones (all but `largest_scale`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Sums {
    /// `Σ y/p`: the estimate.
    pub(crate) estimate: f64,
    /// `Σ y²(1-p)/p²`: the unbiased estimate of the estimate's variance.
    pub(crate) variance: f64,
    /// The largest `y(1-p)/p` of a sample, the gamma scale of one sample
    /// (its variance term over its estimate term): the sample of which the
    /// interval adds half. A maximum, not a sum: it cannot be subtracted.
    pub(crate) largest_scale: f64,
    /// `Σ y`: what the samples saw, a sure lower bound.
    pub(crate) seen: f64,
}

impl Sums {
    /// Adds one sampled object whose quantity is `y`, sampled with
    /// probability `p = 1 - q` (`q` passed separately: for `p` near 1,
    /// `1 - p` would lose the digits of `q`).
    fn add(&mut self, y: f64, p: f64, q: f64) {
        self.add_term(y / p, q, y);
    }

    /// Adds one sample by its estimate term `w = y/p`, `q = 1 - p` and what
    /// it saw, `y`.
    fn add_term(&mut self, weight: f64, q: f64, seen: f64) {
        self.estimate += weight;
        self.variance += weight * weight * q;
        self.largest_scale = self.largest_scale.max(weight * q);
        self.seen += seen;
    }

    fn merge(&mut self, other: &Sums) {
        self.estimate += other.estimate;
        self.variance += other.variance;
        self.largest_scale = self.largest_scale.max(other.largest_scale);
        self.seen += other.seen;
    }

    /// The 95% gamma interval described in the module doc.
    fn interval(&self) -> Interval {
        let estimate = self.estimate;
        if estimate <= 0.0 {
            return Interval {
                estimate: 0.0,
                low: 0.0,
                high: 0.0,
            };
        }
        // Half a sample of the largest scale: shape + ½ when all scales are
        // equal (the Jeffreys interval).
        let scale = self.largest_scale;
        let (mean, variance) = (estimate + scale / 2.0, self.variance + scale * scale / 2.0);
        let low = gamma_quantile(mean, variance, -Z_95).max(self.seen);
        let high = gamma_quantile(mean, variance, Z_95);
        Interval {
            estimate,
            // The gamma's quantiles straddle its mean, and the half sample
            // moves that mean up by less than the width below it; the
            // min/max only guard rounding.
            low: low.min(estimate),
            high: high.max(estimate),
        }
    }
}

/// The quantile at normal deviate `z` of the gamma variable of mean `mean`
/// (> 0) and variance `variance`, by Wilson-Hilferty:
/// `mean (1 - r²/9 + z r/3)³` with `r = √variance / mean`. Negative bases
/// (far lower tail of a very skewed gamma) give 0: a gamma is never negative.
fn gamma_quantile(mean: f64, variance: f64, z: f64) -> f64 {
    let r = variance.sqrt() / mean;
    let base = 1.0 - r * r / 9.0 + z * r / 3.0;
    mean * base.max(0.0).powi(3)
}

/// The 95% interval of a group that has no samples, whose samples would each
/// stand for about `scale` (bytes or objects): `[0, 2.46 scale]`. It is the
/// Jeffreys interval at a count of 0 (the gamma of shape ½), as
/// [`Estimate::bytes_interval`] computes it for a count of `k`; the exact
/// quantile is 2.51 `scale`. Comparing two recordings needs it: a site
/// missing from one was not necessarily absent from it, only unseen.
pub fn unseen_interval(scale: f64) -> Interval {
    let scale = scale.max(0.0);
    let high = if scale > 0.0 {
        gamma_quantile(scale / 2.0, scale * scale / 2.0, Z_95)
    } else {
        0.0
    };
    Interval {
        estimate: 0.0,
        low: 0.0,
        high,
    }
}

/// A 95% interval around an estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// The lower bound: never above `estimate`.
    pub low: f64,
    /// The upper bound: never below `estimate`.
    pub high: f64,
}

impl Interval {
    /// Whether `value` lies in the interval, bounds included.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }

    /// Half the interval's width, `(high - low) / 2`: the "±" of the
    /// estimate (the interval is not symmetric around it).
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// Whether the interval is wider than the estimate itself (half-width
    /// above the estimate): the estimate says little more than "some", which
    /// a report should mark. With objects much smaller than the interval this
    /// is a group of four samples or fewer.
    pub fn is_wider_than_estimate(&self) -> bool {
        self.half_width() > self.estimate
    }
}

/// The estimated bytes and objects of a group of samples, with their
/// variances and 95% intervals (derivation in the [module doc](self)).
///
/// ```
/// use heapsampler_core::estimate::Estimate;
///
/// let interval = 512 * 1024;
/// let mut site = Estimate::default();
/// for size in [24, 24, 4096, 3 << 20] {
///     site.add(size, interval);
/// }
/// let bytes = site.bytes_interval();
/// assert!(bytes.low <= site.bytes() && site.bytes() <= bytes.high);
/// // Everything seen certainly existed.
/// assert!(bytes.low >= (24 + 24 + 4096 + (3 << 20)) as f64);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    // Crate-visible for `live`, which rebuilds estimates from its sums.
    pub(crate) samples: u64,
    /// Samples added without their object's size: not in `objects`.
    pub(crate) unsized_samples: u64,
    pub(crate) bytes: Sums,
    pub(crate) objects: Sums,
}

impl Estimate {
    /// An estimate of no samples: all zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sample: an object of `size` bytes, sampled at mean interval
    /// `interval` (0: every allocation sampled).
    ///
    /// A size of 0 is taken as 1 byte, as in
    /// [`object_weight`](crate::sampling::object_weight): a byte sampler
    /// never samples an empty object, and this keeps every weight finite.
    pub fn add(&mut self, size: u64, interval: u64) {
        let size = size.max(1);
        let p = sample_probability(size, interval);
        // `exp(-s/T)` directly rather than `1 - p`: for large objects `p`
        // rounds to 1 while `q` still has all its digits.
        let q = if interval == 0 {
            0.0
        } else {
            (-(size as f64) / interval as f64).exp()
        };
        self.samples += 1;
        self.bytes.add(size as f64, p, q);
        self.objects.add(1.0, p, q);
    }

    /// Adds a sample as a recording stores it: `weight`, the bytes it
    /// stands for (`s/p`, rounded to a whole byte), and the object's size
    /// `s` when the recording tells it.
    ///
    /// - With the size, `p = s / weight`: the same terms as
    ///   [`add`](Self::add) with the interval the weight was computed at,
    ///   and [`bytes`](Self::bytes) is exactly the sum of the weights on
    ///   file.
    /// - Without it (the JDK's own sampler, which throttles by rate and
    ///   stores as the weight the bytes the thread allocated since its last
    ///   sample; or a TLAB event), the sample is taken as one of an object
    ///   much smaller than the interval, `p → 0`: estimate term `weight`,
    ///   variance term `weight²`, nothing seen. For an object that had a
    ///   larger `p` the true terms are `weight²(1-p)`, smaller: the interval
    ///   is wider than it need be, never narrower. The number of objects is
    ///   not known: [`objects_known`](Self::objects_known) turns false.
    pub fn add_weighted(&mut self, weight: f64, size: Option<u64>) {
        self.samples += 1;
        let weight = weight.max(0.0);
        match size {
            Some(size) if weight > 0.0 => {
                let size = size.max(1) as f64;
                // A weight below the size (rounding, or a writer's own
                // weighting) means certainly sampled.
                let p = (size / weight).min(1.0);
                let q = ((weight - size) / weight).max(0.0);
                self.bytes.add_term(weight, q, size);
                self.objects.add_term(1.0 / p, q, 1.0);
            }
            _ => {
                self.unsized_samples += 1;
                self.bytes.add_term(weight, 1.0, 0.0);
            }
        }
    }

    /// Whether every sample came with its object's size, so that
    /// [`objects`](Self::objects) and its interval estimate the number of
    /// objects (see [`add_weighted`](Self::add_weighted)).
    pub fn objects_known(&self) -> bool {
        self.unsized_samples == 0
    }

    /// Adds the samples of another group that shares no object with this
    /// one: the estimates and their variances add (the two are independent).
    pub fn merge(&mut self, other: &Estimate) {
        self.samples += other.samples;
        self.unsized_samples += other.unsized_samples;
        self.bytes.merge(&other.bytes);
        self.objects.merge(&other.objects);
    }

    /// The number of samples added.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The estimated bytes, `Σ s/p`: unbiased.
    pub fn bytes(&self) -> f64 {
        self.bytes.estimate
    }

    /// The estimated number of objects, `Σ 1/p`: unbiased.
    pub fn objects(&self) -> f64 {
        self.objects.estimate
    }

    /// The unbiased estimate of the variance of [`bytes`](Self::bytes),
    /// `Σ s²(1-p)/p²`.
    pub fn bytes_variance(&self) -> f64 {
        self.bytes.variance
    }

    /// The unbiased estimate of the variance of [`objects`](Self::objects),
    /// `Σ (1-p)/p²`.
    pub fn objects_variance(&self) -> f64 {
        self.objects.variance
    }

    /// The 95% interval of the estimated bytes. An estimate of no samples
    /// gives `[0, 0]`: a report never shows a group it has no sample of.
    pub fn bytes_interval(&self) -> Interval {
        self.bytes.interval()
    }

    /// The 95% interval of the estimated number of objects. An estimate of
    /// no samples gives `[0, 0]`.
    pub fn objects_interval(&self) -> Interval {
        self.objects.interval()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 512 * 1024;

    fn close(actual: f64, expected: f64, rel: f64) -> bool {
        (actual - expected).abs() <= rel * expected.abs()
    }

    #[test]
    fn one_sample_at_the_interval_size() {
        // s = T: p = 1 - 1/e = 0.632121, 1 - p = 1/e.
        // bytes: T/p = 1.581977 T; variance T² (1/e) / p² = 0.920674 T².
        // objects: 1/p = 1.581977; variance 0.920674.
        let mut e = Estimate::new();
        e.add(T, T);
        let t = T as f64;
        let p = 1.0 - (-1.0f64).exp();
        assert!(close(e.bytes(), t / p, 1e-14));
        assert!(close(e.bytes() / t, 1.581_977, 1e-6));
        assert!(close(e.bytes_variance() / (t * t), 0.920_674, 1e-6));
        assert!(close(e.objects(), 1.581_977, 1e-6));
        assert!(close(e.objects_variance(), 0.920_674, 1e-6));
        assert_eq!(e.samples(), 1);
    }

    #[test]
    fn sums_over_samples_of_different_sizes_and_intervals() {
        // 64 B at T = 64 KiB (x = 1/1024) and 1 MiB at T = 512 KiB (x = 2),
        // each term computed by hand from p = 1 - e^-x.
        let terms = |s: f64, x: f64| {
            let q = (-x).exp();
            let p = 1.0 - q;
            (s / p, s * s * q / (p * p), 1.0 / p, q / (p * p))
        };
        let a = terms(64.0, 1.0 / 1024.0);
        let b = terms(1048576.0, 2.0);
        let mut e = Estimate::new();
        e.add(64, 64 * 1024);
        e.add(1 << 20, T);
        assert!(close(e.bytes(), a.0 + b.0, 1e-12));
        assert!(close(e.bytes_variance(), a.1 + b.1, 1e-12));
        assert!(close(e.objects(), a.2 + b.2, 1e-12));
        assert!(close(e.objects_variance(), a.3 + b.3, 1e-12));
        // The 64 B sample stands for about one interval (65,568 B) and
        // dominates the variance; the 1 MiB one (p = 0.8647) for 1.1565 MiB.
        assert!(close(a.0, 65_568.0, 1e-4));
        assert!(close(b.0 / 1048576.0, 1.156_518, 1e-6));
    }

    #[test]
    fn objects_far_larger_than_the_interval_have_no_variance() {
        // s = 100 T: 1 - p = e^-100 = 3.7e-44, so each term of the bytes
        // variance is s² e^-100 (about 1e-11 bytes², an sd of 3e-6 bytes),
        // and at s = 10,000 T it underflows to exactly 0.
        let mut e = Estimate::new();
        for _ in 0..3 {
            e.add(100 * T, T);
        }
        let s = (100 * T) as f64;
        assert!(close(
            e.bytes_variance(),
            3.0 * s * s * (-100.0f64).exp(),
            1e-12
        ));
        assert!(e.bytes_variance().sqrt() < 1e-5);
        let i = e.bytes_interval();
        assert!(close(i.low, 3.0 * s, 1e-15) && close(i.high, 3.0 * s, 1e-15));

        let mut huge = Estimate::new();
        huge.add(10_000 * T, T);
        huge.add(u64::MAX, T);
        assert_eq!(huge.bytes_variance(), 0.0);
        assert_eq!(huge.objects_variance(), 0.0);
        assert_eq!(huge.objects(), 2.0);
        let i = huge.objects_interval();
        assert_eq!((i.low, i.high), (2.0, 2.0));
    }

    #[test]
    fn interval_zero_means_everything_was_seen() {
        let mut e = Estimate::new();
        e.add(24, 0);
        e.add(0, 0);
        assert_eq!(e.bytes(), 25.0, "a size of 0 counts as 1 byte");
        assert_eq!(e.objects(), 2.0);
        assert_eq!(e.bytes_variance(), 0.0);
        let i = e.bytes_interval();
        assert_eq!((i.low, i.estimate, i.high), (25.0, 25.0, 25.0));
    }

    /// Small objects: every sample stands for about `T`, so the interval must
    /// be `T` times the Jeffreys interval for a Poisson count of `k`, the
    /// 2.5% and 97.5% quantiles of the gamma of shape `k + ½` (reference
    /// values computed with mpmath's regularized incomplete gamma).
    #[test]
    fn small_objects_give_the_jeffreys_poisson_interval() {
        // (k, exact low, exact high, tolerance on low, tolerance on high)
        // Wilson-Hilferty is looser on the lower bound at one or two samples
        // (see the module doc): it errs lower there, never higher.
        let jeffreys = [
            (1, 0.107_897_6, 4.674_201_8, 0.17, 0.003),
            (2, 0.415_605_8, 6.416_251, 0.05, 0.003),
            (5, 1.907_874_1, 10.960_025, 0.01, 0.003),
            (10, 5.141_448_9, 17.739_438, 0.003, 0.003),
            (30, 20.651_569, 42.238_219, 0.003, 0.003),
        ];
        // 8 B at T = 1 GiB: p = 7.45e-9, and the weight and scale of each
        // sample differ from T by about s/2, 4e-9 relative: the Poisson limit.
        let (s, t) = (8u64, 1u64 << 30);
        for (k, low, high, tol_low, tol_high) in jeffreys {
            let mut e = Estimate::new();
            for _ in 0..k {
                e.add(s, t);
            }
            let i = e.bytes_interval();
            let (l, h) = (i.low / t as f64, i.high / t as f64);
            assert!(l <= low * 1.000_001, "k {k}: low {l} above exact {low}");
            assert!(close(l, low, tol_low), "k {k}: low {l}, exact {low}");
            assert!(close(h, high, tol_high), "k {k}: high {h}, exact {high}");
            assert!(close(i.estimate / t as f64, k as f64, 1e-8));
        }
    }

    #[test]
    fn lower_bound_never_below_what_was_seen() {
        // One 400 KiB sample at T = 512 KiB (p = 0.54): the gamma lower bound
        // would be far below 400 KiB, but that object existed.
        let mut e = Estimate::new();
        e.add(400 * 1024, T);
        assert_eq!(e.bytes_interval().low, (400 * 1024) as f64);
        assert_eq!(e.objects_interval().low, 1.0);
    }

    #[test]
    fn merge_equals_adding_all_samples() {
        let sizes = [16u64, 24, 1000, 70_000, 600_000, 3 << 20];
        let mut all = Estimate::new();
        let (mut left, mut right) = (Estimate::new(), Estimate::new());
        for (n, &s) in sizes.iter().enumerate() {
            all.add(s, T);
            if n % 2 == 0 {
                left.add(s, T)
            } else {
                right.add(s, T)
            }
        }
        left.merge(&right);
        assert_eq!(left.samples(), all.samples());
        assert!(close(left.bytes(), all.bytes(), 1e-14));
        assert!(close(left.bytes_variance(), all.bytes_variance(), 1e-14));
        let (a, b) = (left.bytes_interval(), all.bytes_interval());
        assert!(close(a.low, b.low, 1e-12) && close(a.high, b.high, 1e-12));
    }

    #[test]
    fn wider_than_estimate_marks_groups_of_few_small_samples() {
        // Small objects: the normal half-width 1.96 √k T is above k T while
        // k < 3.84, so up to k = 3; the skewed interval keeps it above at
        // k = 4 too (exact Jeffreys: [1.35, 9.51], half-width 4.08) but not at 5
        // ([1.91, 10.96], 4.53).
        for k in 1..=20u64 {
            let mut e = Estimate::new();
            for _ in 0..k {
                e.add(16, T);
            }
            let wide = e.bytes_interval().is_wider_than_estimate();
            assert_eq!(wide, k <= 4, "k = {k}: {:?}", e.bytes_interval());
        }
        let mut large = Estimate::new();
        large.add(4 << 20, T);
        assert!(!large.bytes_interval().is_wider_than_estimate());
        assert!(!Estimate::new().bytes_interval().is_wider_than_estimate());
    }

    #[test]
    fn a_sample_as_stored_weighs_as_its_size_and_interval_say() {
        use crate::sampling::bytes_weight;
        for size in [16, 1024, T, 10 * T] {
            let mut by_interval = Estimate::new();
            by_interval.add(size, T);
            let mut as_stored = Estimate::new();
            let weight = bytes_weight(size, T).round();
            as_stored.add_weighted(weight, Some(size));
            assert!(as_stored.objects_known());
            assert_eq!(as_stored.bytes(), weight);
            // The rounding of the stored weight is all that differs.
            let (a, b) = (as_stored.bytes_interval(), by_interval.bytes_interval());
            assert!(
                close(a.low, b.low, 1e-5) && close(a.high, b.high, 1e-5),
                "{size}: {a:?} {b:?}"
            );
            let (a, b) = (as_stored.objects_interval(), by_interval.objects_interval());
            assert!(
                close(a.low, b.low, 1e-3) && close(a.high, b.high, 1e-3),
                "{size}: {a:?} {b:?}"
            );
        }
    }

    #[test]
    fn a_sample_without_its_size_counts_as_a_small_object() {
        let mut e = Estimate::new();
        e.add_weighted(1000.0, None);
        e.add_weighted(3000.0, None);
        assert!(!e.objects_known());
        assert_eq!(e.samples(), 2);
        assert_eq!(e.bytes(), 4000.0);
        assert_eq!(e.bytes_variance(), 1000.0 * 1000.0 + 3000.0 * 3000.0);
        assert_eq!(e.objects(), 0.0);
        // Wider than the same weights with sizes known.
        let mut sized = Estimate::new();
        sized.add_weighted(1000.0, Some(800));
        sized.add_weighted(3000.0, Some(800));
        let (wide, narrow) = (e.bytes_interval(), sized.bytes_interval());
        assert!(wide.low < narrow.low && wide.high > narrow.high);
        // Merging keeps the objects unknown.
        sized.merge(&e);
        assert!(!sized.objects_known());
    }

    #[test]
    fn an_unseen_group_may_still_hold_two_and_a_half_samples() {
        let unseen = unseen_interval(T as f64);
        assert_eq!((unseen.estimate, unseen.low), (0.0, 0.0));
        // Exact: the 97.5% quantile of a gamma of shape ½, 2.5119.
        assert!(close(unseen.high, 2.5119 * T as f64, 0.03), "{unseen:?}");
        // One sample's interval starts below where no sample's ends.
        let mut one = Estimate::new();
        one.add(16, T);
        assert!(one.bytes_interval().low < unseen.high);
        assert_eq!(unseen_interval(0.0).high, 0.0);
    }
}
