//! A group's live bytes after each of a recording's collections, and whether
//! they grow: the leak-suspect test.
//!
//! # The live series
//!
//! A sampled object stands for its weight while it is live: the group's live
//! bytes after checkpoint `c` (a collection) are estimated, as any group's
//! bytes are ([`estimate`](crate::estimate)), by the sums over the samples
//! live after `c`. Each sample is live after a contiguous range of
//! checkpoints (from the first collection after its allocation to the one
//! that freed it), so [`LiveSeries`] keeps, per checkpoint, only the change
//! of the additive sums there (the estimate, its variance, what was seen,
//! the counts): `+terms` where a range starts, `-terms` where it ends, a
//! difference array whose prefix sums are the estimates, exact but for the
//! rounding of those sums. A group of few samples holds about two changes
//! per sample (sparse), a large one one per checkpoint (dense), whichever is
//! smaller. Merging adds changes, so it gives the series of all the parts'
//! samples whatever the order, up to the order of floating-point sums.
//!
//! The interval's "largest scale" (the half sample the gamma interval adds)
//! is a maximum, which cannot be subtracted: the series uses the largest
//! over every sample it received, live or not at the checkpoint. Its upper
//! bound is therefore never below the one built from the live samples alone
//! (the safe side for "how much may be live"); the lower bound moves a
//! little either way (up by 0.003% of the estimate for one 1 KiB sample
//! against a 16 B one, down when the largest scale is far larger). With
//! objects much smaller than the interval every scale is the interval, and
//! the two intervals are the same.
//!
//! # The growth test
//!
//! The question is whether a group's live bytes keep growing after the
//! warm-up. The trap is that successive checkpoints share most of their
//! objects: a long-lived object is in many of them, and a leaked object that
//! was sampled stays in every later one. The estimates are strongly
//! autocorrelated, and a regression over per-collection points, whose
//! standard error assumes independent points, is far too sure of itself.
//!
//! [`Growth::fit`] works on the *increments* of block means, as those of a
//! random walk with drift:
//!
//! - The warm-up is the first quarter of the time from the first checkpoint
//!   to the last; the window is the checkpoints after it.
//! - The window is cut into `B = 8` blocks of equal time. Each block with a
//!   checkpoint gives a point: its checkpoints' mean time `t̄_j`, mean
//!   estimated live bytes `m_j` and mean estimated variance `v_j`.
//! - The growth is `ĝ = (m_b - m_1) / (t̄_b - t̄_1)` over the `b` points:
//!   the increments `d_j = m_{j+1} - m_j` summed over their times `Δ_j`.
//! - Its variance, if the live bytes are a random walk of variance `σ²` per
//!   second seen through block means: the increments of block means of a
//!   random walk are not independent (adjacent ones share a block, lag-one
//!   correlation ¼, variance `(2/3) σ² Δ`), and over `k = b - 1` equal
//!   increments `E[Σ (d_j - ĝΔ_j)²/Δ_j] = σ² ((2/3) k - (b - 4/3)/k)` while
//!   `Var(m_b - m_1) = σ² Δ (b - 4/3)`. So `σ̂²` is the sum of squares over
//!   that factor, and `se(ĝ)² = σ̂² Δ̄ (b - 4/3) / (ΣΔ)²`. (Taking the
//!   increments as independent, the textbook `σ̂² = Σ/(k-1)`, makes the
//!   variance 1.54 times too small at `b = 8`: the interval covered a leak's
//!   rate in 87% of runs.)
//! - The 95% interval is `ĝ ± max(t(b-2) se, 1.96 √|v_b - v_1| / (t̄_b - t̄_1))`,
//!   Student's t on `b - 2` degrees of freedom (6), or the sampling floor:
//!   the samples gained or lost between the first block and the last add
//!   their variances, which the estimates know (for a leak, `v_b - v_1` is
//!   the increment's variance to within 5%). The t term's variance comes from
//!   six degrees of freedom and can be small by luck when a group has few
//!   samples; the floor, from every sample, cannot.
//! - The group is a suspect when the interval's lower bound is above 0: a
//!   one-sided test at 2.5% (nominally).
//!
//! Why increments. For a leak, the estimate's error is a sum over the
//! leaked objects of independent terms `(I_i - p_i) s_i / p_i` accumulated
//! in allocation order: a random walk, whose increments over disjoint times
//! are independent with a variance proportional to the time, the model
//! above. A regression of levels on a random walk is the spurious
//! regression of Granger and Newbold (1974): its residuals are
//! autocorrelated and its t rejects far too often. For a group whose live
//! set does not grow (short-lived objects, sessions living minutes, a cache
//! at its plateau, a periodic batch) the block means are a stationary
//! series, and the increments over-estimate the variance of `m_b - m_1`, by
//! about `1.54 (1 - ρ₁)(B - 1) / (1 - ρ_{B-1})` (ρ the block means'
//! autocorrelations): above 1 unless the series' memory is comparable to the
//! whole window (ρ₁ near 1). The test is conservative there, the side a
//! leak detector must err on, and pays for it in power when a leak shares
//! its group with a large steady live set (below). A regression over the
//! block means with the sampling bound `v_1 + v_b` (which holds whatever
//! the samples' lifetimes) as its floor finds that leak at half the rate,
//! but its standard error is that of another estimator than the growth it
//! brackets, it assumes the block means of a steady group independent, and
//! it is a suspect as often as the nominal 2.5% on the rare site: not
//! chosen.
//!
//! # The figures
//!
//! Measured by simulation with the core's sampler model in
//! `core/tests/live.rs` (`cargo test --release -p heapsampler-core --test
//! live -- --nocapture` prints them): one-hour recordings at 512 KiB, a
//! checkpoint every 12 s (300, what the converter keeps of a collection
//! every 2 s).
//!
//! - False positives, share of 400 runs in which a group that does not grow
//!   is a suspect: short-lived objects (1 MiB/s living 0.5 s) 0%; sessions of
//!   2 KiB living 3 minutes (18 MB live) 0%, living 6 minutes (longer than
//!   a block) 0%; a rare site (2.3 samples live on average) 0.25%; a cache
//!   filling 64 MiB during the first 12 minutes then turning over (entries
//!   live 17 minutes on average) 0.25%; a batch of 32 MiB built and freed
//!   every 5 minutes 0%, every 20 minutes (live for 10) 0%; data kept from
//!   the first 5 minutes 0%. Under the nominal 2.5%: the design is
//!   conservative for stationary series.
//! - Coverage of a leak's true rate by the growth interval, 400 runs per
//!   rate, leaking 96-byte objects: on a site of its own, 94.5% at 120
//!   KiB/min (about 10 samples in the window), 96.75% at 480, 97.25% at
//!   1920, 97.5% at 7680; on a site that also holds 18 MB of sessions living
//!   3 minutes and 1 MiB/s of short-lived objects, 98.25% to 99.75%.
//! - The smallest leak found (suspect) in 90% of one-hour runs: 170 KiB/min
//!   (10 MiB an hour) on a site of its own; 960 KiB/min (56 MiB an hour) on
//!   the site with sessions, whose stationary noise the increments count
//!   about ten times over.
//! - Two sites leaking 8 and 16 KiB/s, each with the sessions, rank right
//!   in 99.2% of 400 runs (99.7% expected from the growths' spreads).
//!
//! Where it stops holding. A group whose live set varies slowly, on the scale
//! of the whole window (objects living most of an hour, a cache still filling
//! after the first quarter, a batch cycle of an hour), has a trend within the
//! window that no test over the window can tell from a leak: it may be a
//! suspect. A leak that starts or stops within the window is fitted as its
//! average growth over the window. Fewer than [`Growth::MIN_CHECKPOINTS`]
//! checkpoints after the warm-up give no verdict.

use std::ops::Range;

use crate::estimate::{Estimate, Interval, Sums, Z_95};

/// The additive sums of one quantity: `Sums` without its largest scale.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Additive {
    estimate: f64,
    variance: f64,
    seen: f64,
}

impl Additive {
    fn of(sums: &Sums) -> Self {
        Self {
            estimate: sums.estimate,
            variance: sums.variance,
            seen: sums.seen,
        }
    }

    fn add(&mut self, other: &Self, sign: f64) {
        self.estimate += sign * other.estimate;
        self.variance += sign * other.variance;
        self.seen += sign * other.seen;
    }

    /// The sums these stand for, with `largest_scale`. Prefix sums of
    /// differences leave rounding residues: a variance or a count seen a hair
    /// below 0 is 0.
    fn sums(&self, largest_scale: f64) -> Sums {
        Sums {
            estimate: self.estimate.max(0.0),
            variance: self.variance.max(0.0),
            largest_scale,
            seen: self.seen.clamp(0.0, self.estimate.max(0.0)),
        }
    }
}

/// The change of the additive parts of an [`Estimate`] at one checkpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Change {
    samples: i64,
    unsized_samples: i64,
    bytes: Additive,
    objects: Additive,
}

impl Change {
    fn of(estimate: &Estimate) -> Self {
        Self {
            samples: estimate.samples as i64,
            unsized_samples: estimate.unsized_samples as i64,
            bytes: Additive::of(&estimate.bytes),
            objects: Additive::of(&estimate.objects),
        }
    }

    /// Adds `other` (`sign` 1) or takes it away (`sign` -1).
    fn add(&mut self, other: &Self, sign: i64) {
        self.samples += sign * other.samples;
        self.unsized_samples += sign * other.unsized_samples;
        self.bytes.add(&other.bytes, sign as f64);
        self.objects.add(&other.objects, sign as f64);
    }
}

/// The changes of a series, by checkpoint.
#[derive(Debug, Clone)]
enum Changes {
    /// `(checkpoint, change)` pairs in the order they came, several per
    /// checkpoint until [`LiveSeries::compact`] sums them: for groups with
    /// few samples next to the checkpoints.
    Sparse(Vec<(u32, Change)>),
    /// One change per checkpoint.
    Dense(Vec<Change>),
}

impl Default for Changes {
    fn default() -> Self {
        Changes::Sparse(Vec::new())
    }
}

/// A group's (a site's, a class's...) estimated live bytes and objects after
/// each of a recording's checkpoints (collections), built from its sampled
/// objects' live ranges (see the [module doc](self)).
///
/// ```
/// use heapsampler_core::live::LiveSeries;
///
/// let mut site = LiveSeries::new(4);
/// // Live after checkpoints 1 and 2, then freed; live from 2 to the end.
/// site.add(1..3, 524_300.0, Some(24));
/// site.add(2..4, 524_300.0, Some(24));
/// let bytes: Vec<f64> = site.estimates().iter().map(|e| e.bytes()).collect();
/// assert_eq!(bytes, [0.0, 524_300.0, 1_048_600.0, 524_300.0]);
/// ```
#[derive(Debug, Clone)]
pub struct LiveSeries {
    checkpoints: usize,
    changes: Changes,
    /// Sparse changes up to which no compaction is needed.
    compact_at: usize,
    /// The largest scale of a sample received, bytes and objects: maxima,
    /// not differences (module doc).
    largest_scale: (f64, f64),
}

/// Sparse changes below this many are never compacted: tiny groups stay
/// a few entries long. A series therefore holds at most
/// `max(16, 1.5 min(2 samples, checkpoints/2) + 8)` sparse entries of 72
/// bytes, or `checkpoints` dense ones of 64.
const MIN_COMPACT_AT: usize = 16;

impl LiveSeries {
    /// An empty series of `checkpoints` checkpoints.
    ///
    /// # Panics
    ///
    /// Above `u32::MAX` checkpoints (the converter keeps a few hundred).
    pub fn new(checkpoints: usize) -> Self {
        assert!(
            u32::try_from(checkpoints).is_ok(),
            "{checkpoints} checkpoints"
        );
        Self {
            checkpoints,
            changes: Changes::default(),
            compact_at: MIN_COMPACT_AT,
            largest_scale: (0.0, 0.0),
        }
    }

    /// The number of checkpoints.
    pub fn checkpoints(&self) -> usize {
        self.checkpoints
    }

    /// One sampled object, live after the checkpoints `live` (a half-open
    /// range of indices, clipped to the series; empty: nothing), whose sample
    /// stands for `weight` bytes and whose size is `size` when known: as
    /// [`Estimate::add_weighted`] takes them.
    pub fn add(&mut self, live: Range<usize>, weight: f64, size: Option<u64>) {
        let (start, end) = (live.start, live.end.min(self.checkpoints));
        if start >= end {
            return;
        }
        let mut one = Estimate::new();
        one.add_weighted(weight, size);
        self.note_scales(&one);
        let change = Change::of(&one);
        self.push(start, change, 1);
        // Live to the last checkpoint: nothing to take away.
        if end < self.checkpoints {
            self.push(end, change, -1);
        }
    }

    fn note_scales(&mut self, estimate: &Estimate) {
        self.largest_scale.0 = self.largest_scale.0.max(estimate.bytes.largest_scale);
        self.largest_scale.1 = self.largest_scale.1.max(estimate.objects.largest_scale);
    }

    fn push(&mut self, checkpoint: usize, change: Change, sign: i64) {
        match &mut self.changes {
            Changes::Dense(dense) => dense[checkpoint].add(&change, sign),
            Changes::Sparse(sparse) => {
                let mut signed = Change::default();
                signed.add(&change, sign);
                sparse.push((checkpoint as u32, signed));
                if sparse.len() >= self.compact_at {
                    self.compact();
                }
            }
        }
    }

    /// Sums the sparse changes of each checkpoint (in the order they came,
    /// so that the result does not depend on the sort), and turns dense once
    /// more than half the checkpoints have one (a sparse entry is 72 bytes,
    /// a dense one 64).
    fn compact(&mut self) {
        let Changes::Sparse(sparse) = &mut self.changes else {
            return;
        };
        let summed = sum_by_checkpoint(std::mem::take(sparse));
        if 2 * summed.len() > self.checkpoints {
            let mut dense = vec![Change::default(); self.checkpoints];
            for (checkpoint, change) in summed {
                dense[checkpoint as usize] = change;
            }
            self.changes = Changes::Dense(dense);
        } else {
            // Room for half as many again: compactions stay amortized
            // O(log n) per change, and the capacity within 1.5 times the
            // changes kept (plus a few).
            self.compact_at = summed.len() + (summed.len() / 2).max(MIN_COMPACT_AT / 2);
            let mut sparse = summed;
            sparse.reserve_exact(self.compact_at - sparse.len());
            sparse.shrink_to(self.compact_at);
            self.changes = Changes::Sparse(sparse);
        }
    }

    /// Adds another group's series of the same checkpoints.
    ///
    /// # Panics
    ///
    /// When the two series have different checkpoints: a programming error.
    pub fn merge(&mut self, other: &LiveSeries) {
        assert_eq!(
            self.checkpoints, other.checkpoints,
            "merging live series of different checkpoints"
        );
        self.largest_scale.0 = self.largest_scale.0.max(other.largest_scale.0);
        self.largest_scale.1 = self.largest_scale.1.max(other.largest_scale.1);
        for (checkpoint, change) in other.sorted_changes() {
            self.push(checkpoint as usize, change, 1);
        }
    }

    /// The changes summed by checkpoint, in checkpoint order; checkpoints of
    /// no change left out.
    fn sorted_changes(&self) -> Vec<(u32, Change)> {
        match &self.changes {
            Changes::Sparse(sparse) => sum_by_checkpoint(sparse.clone()),
            Changes::Dense(dense) => dense
                .iter()
                .enumerate()
                .filter(|(_, change)| **change != Change::default())
                .map(|(checkpoint, change)| (checkpoint as u32, *change))
                .collect(),
        }
    }

    /// The estimate at each checkpoint (bytes and objects, with their
    /// intervals), in order. A checkpoint with no live sample has the empty
    /// estimate (all zero).
    pub fn estimates(&self) -> Vec<Estimate> {
        let changes = self.sorted_changes();
        let mut changes = changes.iter().peekable();
        let mut running = Change::default();
        (0..self.checkpoints)
            .map(|checkpoint| {
                while let Some((_, change)) = changes.next_if(|(at, _)| *at as usize == checkpoint)
                {
                    running.add(change, 1);
                }
                if running.samples <= 0 {
                    // Exactly empty, whatever residue the sums kept.
                    return Estimate::new();
                }
                Estimate {
                    samples: running.samples as u64,
                    unsized_samples: running.unsized_samples.max(0) as u64,
                    bytes: running.bytes.sums(self.largest_scale.0),
                    objects: running.objects.sums(self.largest_scale.1),
                }
            })
            .collect()
    }

    /// Heap bytes held, for the converter's memory accounting.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.changes {
                Changes::Sparse(sparse) => sparse.capacity() * std::mem::size_of::<(u32, Change)>(),
                Changes::Dense(dense) => dense.capacity() * std::mem::size_of::<Change>(),
            }
    }
}

/// A series of no checkpoints.
impl Default for LiveSeries {
    fn default() -> Self {
        Self::new(0)
    }
}

/// Two series are equal when they give the same changes at the same
/// checkpoints, however those were stored.
impl PartialEq for LiveSeries {
    fn eq(&self, other: &Self) -> bool {
        self.checkpoints == other.checkpoints
            && self.largest_scale == other.largest_scale
            && self.sorted_changes() == other.sorted_changes()
    }
}

/// Sums the changes of each checkpoint, in the order they came (a stable
/// sort), dropping those that are exactly nothing.
fn sum_by_checkpoint(mut changes: Vec<(u32, Change)>) -> Vec<(u32, Change)> {
    changes.sort_by_key(|(checkpoint, _)| *checkpoint);
    let mut summed: Vec<(u32, Change)> = Vec::with_capacity(changes.len());
    for (checkpoint, change) in changes {
        match summed.last_mut() {
            Some((last, sum)) if *last == checkpoint => sum.add(&change, 1),
            _ => summed.push((checkpoint, change)),
        }
    }
    summed.retain(|(_, change)| *change != Change::default());
    summed
}

/// How fast a group's live bytes grow after the warm-up, with a 95% interval,
/// and whether that growth is significantly above zero (a leak suspect). The
/// test and its figures are in the [module doc](self).
#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    /// Estimated growth of live bytes, bytes per second.
    pub bytes_per_second: f64,
    /// Its 95% interval (`estimate` = bytes_per_second), bytes per second.
    pub interval: Interval,
    /// The checkpoints the trend was fitted over (after the warm-up).
    pub window: Range<usize>,
    /// The blocks of the window that had a checkpoint: the points whose
    /// increments were fitted.
    pub blocks: usize,
    /// The t interval's degrees of freedom: `blocks - 2`.
    pub degrees_of_freedom: usize,
}

/// The share of the time from the first checkpoint to the last that is
/// warm-up.
const WARM_UP: f64 = 0.25;

/// The blocks of equal time the window is cut into.
const BLOCKS: usize = 8;

/// `t(df)`, the 97.5% quantile of Student's t on `df` = 1, 2, ...
/// degrees of freedom.
const STUDENT_T_975: [f64; 14] = [
    12.706_2, 4.302_7, 3.182_4, 2.776_4, 2.570_6, 2.446_9, 2.364_6, 2.306_0, 2.262_2, 2.228_1,
    2.201_0, 2.178_8, 2.160_4, 2.144_8,
];

const _: () = assert!(BLOCKS - 2 <= STUDENT_T_975.len());

impl Growth {
    /// The fewest checkpoints after the warm-up for a verdict: two per block.
    pub const MIN_CHECKPOINTS: usize = 2 * BLOCKS;

    /// Fits the trend of `live` (one estimate per checkpoint) over `seconds`
    /// (each checkpoint's time, seconds from the recording's start,
    /// ascending). `None` when fewer than [`MIN_CHECKPOINTS`](Self::MIN_CHECKPOINTS)
    /// checkpoints follow the warm-up, or when their times leave fewer than
    /// four blocks with a checkpoint (two degrees of freedom).
    ///
    /// # Panics
    ///
    /// When `seconds` and `live` differ in length: a programming error.
    pub fn fit(seconds: &[f64], live: &[Estimate]) -> Option<Growth> {
        assert_eq!(seconds.len(), live.len(), "one time per checkpoint");
        let (&first, &last) = (seconds.first()?, seconds.last()?);
        let span = last - first;
        if span.is_nan() || span <= 0.0 {
            return None;
        }
        let warm_up_end = first + WARM_UP * span;
        let start = seconds.partition_point(|&t| t < warm_up_end);
        let window = start..seconds.len();
        if window.len() < Self::MIN_CHECKPOINTS {
            return None;
        }
        let window_start = seconds[start];
        let block_seconds = (last - window_start) / BLOCKS as f64;
        if block_seconds.is_nan() || block_seconds <= 0.0 {
            return None;
        }
        // (Σ t, Σ bytes, Σ variance of bytes, checkpoints) per block.
        let mut sums = [(0.0, 0.0, 0.0, 0usize); BLOCKS];
        for (t, estimate) in seconds[window.clone()].iter().zip(&live[window.clone()]) {
            let block = (((t - window_start) / block_seconds) as usize).min(BLOCKS - 1);
            let sum = &mut sums[block];
            sum.0 += t;
            sum.1 += estimate.bytes();
            sum.2 += estimate.bytes_variance();
            sum.3 += 1;
        }
        // (mean time, mean bytes, mean variance of bytes) of each block.
        let points: Vec<(f64, f64, f64)> = sums
            .iter()
            .filter(|(_, _, _, n)| *n > 0)
            .map(|&(t, bytes, variance, n)| {
                let n = n as f64;
                (t / n, bytes / n, variance / n)
            })
            .collect();
        if points.len() < 4 {
            return None;
        }
        let increments: Vec<(f64, f64)> = points
            .windows(2)
            .map(|pair| (pair[1].0 - pair[0].0, pair[1].1 - pair[0].1))
            .collect();
        let total_seconds: f64 = increments.iter().map(|(dt, _)| dt).sum();
        let growth = (points[points.len() - 1].1 - points[0].1) / total_seconds;
        // The random walk seen through block means (module doc): with `b`
        // points and `k = b - 1` increments, `E[Σ (d_j - ĝΔ_j)²/Δ_j] =
        // σ² ((2/3) k - (b - 4/3) / k)` and `Var(ĝ) = σ² Δ̄ (b - 4/3) / (ΣΔ)²`.
        let (b, k) = (points.len() as f64, increments.len() as f64);
        let squares: f64 = increments
            .iter()
            .map(|(dt, d)| (d - growth * dt).powi(2) / dt)
            .sum();
        let variance_per_second = squares / (2.0 / 3.0 * k - (b - 4.0 / 3.0) / k);
        let mean_increment_seconds = total_seconds / k;
        let growth_variance =
            variance_per_second * mean_increment_seconds * (b - 4.0 / 3.0) / total_seconds.powi(2);
        let degrees_of_freedom = increments.len() - 1;
        // The sampling floor: what the samples added or lost between the
        // first block and the last add their variances (a leak's, exactly).
        let (first_block, last_block) = (points[0], points[points.len() - 1]);
        let sampling_variance = (last_block.2 - first_block.2).abs() / total_seconds.powi(2);
        let half_width = (STUDENT_T_975[degrees_of_freedom - 1] * growth_variance.sqrt())
            .max(Z_95 * sampling_variance.sqrt());
        Some(Growth {
            bytes_per_second: growth,
            interval: Interval {
                estimate: growth,
                low: growth - half_width,
                high: growth + half_width,
            },
            window,
            blocks: points.len(),
            degrees_of_freedom,
        })
    }

    /// Whether the growth is significantly above zero: the 95% interval's
    /// lower bound above 0, a one-sided test at 2.5% (its false-positive
    /// rate measured in the [module doc](self)).
    pub fn is_suspect(&self) -> bool {
        self.interval.low > 0.0
    }
}
