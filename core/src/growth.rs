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
//! [`GrowthTest::fit`] works on the *increments* of block means, as those of a
//! random walk with drift:
//!
//! - The warm-up is the first quarter of the time from the first checkpoint
//!   to the last; the window is the checkpoints after it.
//! - The time from the warm-up's end to the last checkpoint is cut into
//!   `B = 8` blocks of equal time. Each block with a checkpoint gives a
//!   point: its checkpoints' mean time `t̄_j`, mean estimated live bytes
//!   `m_j` and mean estimated variance `v_j`.
//! - The growth is `ĝ = (m_b - m_1) / (t̄_b - t̄_1)` over the `b` points:
//!   the increments `d_j = m_{j+1} - m_j` summed over their times `Δ_j`.
//! - Its variance, if the live bytes are a random walk of variance `σ²` per
//!   second seen through the points: two points' means have the covariance
//!   `σ²` times the mean of `min(s, t)` over their checkpoints' times, so
//!   `Var(ĝ)` and the expected sum of squares `E[Q]`, `Q = Σ (d_j -
//!   ĝΔ_j)²/Δ_j`, are `σ²` times factors of the checkpoints' times alone
//!   (`E[Q] = σ² tr M`, `M` the covariance of the terms `(d_j - ĝΔ_j)/√Δ_j`
//!   per unit `σ²`). So `σ̂² = Q / tr M` and `se(ĝ)² = σ̂² Var(ĝ)/σ²`.
//!   With one checkpoint a block the increments are independent, of
//!   variance `σ² Δ_j`: `E[Q] = σ² (b - 2)` and `Var(ĝ) = σ² / ΣΔ`, the
//!   textbook. With many, evenly, in each of `b` equal blocks, adjacent
//!   increments share a block (lag-one correlation ¼, variance `(2/3) σ²
//!   Δ`): over `k = b - 1` of them `E[Q] = σ² ((2/3) k - (b - 4/3)/k)` and
//!   `Var(m_b - m_1) = σ² Δ (b - 4/3)` (tested in this module). Taking the
//!   increments as independent there makes the variance 1.54 times too
//!   small at `b = 8` (the interval covered a leak's rate in 87% of runs);
//!   the closed forms used at one checkpoint a block make it 1.54 times too
//!   large, at two 1.14: a short recording's blocks hold one or two, hence
//!   the factors from the times.
//! - The 95% interval is `ĝ ± max(t(ν) se, 1.96 √|v_b - v_1| / (t̄_b - t̄_1))`.
//!   Student's t on `ν` degrees of freedom, Satterthwaite's for `Q`: `ν =
//!   2 E[Q]² / Var(Q) = (tr M)² / tr M²`, which is `b - 2` with one
//!   checkpoint a block (`Q / σ²` is then a chi-square on them) and less
//!   when blocks hold many (5.46 of 6 at eight blocks, 1.92 of 2 at four:
//!   the shared blocks' correlation); `t` between whole degrees of freedom
//!   errs wide, by 3% at most. Or the sampling floor: the samples gained or
//!   lost between the first point and the last add their variances, which
//!   the estimates know (for a leak, `v_b - v_1 = σ² (t̄_b - t̄_1)`: the
//!   variance of the increment at one checkpoint a block, at most `k / (k -
//!   1/3)` of it with many, 1.05 at eight blocks and 1.13 at four). The t
//!   term's variance comes from a few degrees of freedom and can be small
//!   by luck when a group has few samples; the floor, from every sample,
//!   cannot.
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
//! series, and the increments over-estimate the variance of `m_b - m_1`:
//! for block means independent of each other (a memory shorter than a
//! block), 12.5 times at eight blocks of many checkpoints, 10.5 at eight of
//! one or two, 4 at four of one; less when the memory spans blocks, below 1
//! only when it is comparable to the whole window (the block means'
//! lag-one correlation near 1). The test is conservative there, the side
//! a leak detector must err on, and pays for it in power when a leak shares
//! its group with a large steady live set (below). A regression over the
//! block means with the sampling bound `v_1 + v_b` (which holds whatever
//! the samples' lifetimes) as its floor finds that leak at half the rate,
//! but its standard error is that of another estimator than the growth it
//! brackets, it assumes the block means of a steady group independent, and
//! it is a suspect as often as the nominal 2.5% on the rare site: not
//! chosen.
//!
//! # How few checkpoints
//!
//! A verdict needs [`GrowthTest::MIN_BLOCKS`] = 4 blocks holding a checkpoint
//! after the warm-up, so at least [`GrowthTest::MIN_CHECKPOINTS`] = 5
//! checkpoints in all (the warm-up holds the first); 5 evenly in time give
//! one. Fewer points would keep the false-positive rate (the factors and
//! `ν` hold for any), not the power: three points leave one degree of
//! freedom, `t(1) = 12.7` (against `t(2) = 4.3`), and in 30 s with four
//! checkpoints (three after the warm-up) the smallest leak found in nine
//! runs of ten was 900 MiB/min alone on its site (found in 93.5% of runs
//! even at that) and 1.04 GiB/min with the background: 11 and 4.8 times
//! what four points, of five checkpoints, find (below). So fewer than 5
//! checkpoints in all, fewer than 4 after the warm-up, or those after it
//! in fewer than 4 of the 8 blocks (bunched: most of them at the start, or
//! in a burst) give no verdict, and [`NoVerdict`] says which. Blocks are
//! not made fewer or longer when checkpoints are few: with the factors of
//! the checkpoints' own times a block of one is as good a point as any, and
//! more points give more degrees of freedom.
//!
//! # The figures
//!
//! Measured by simulation with the core's sampler model in
//! `core/tests/growth.rs` (`cargo test --release -p heapsampler-core --test
//! integration growth:: -- --nocapture` prints them), at 512 KiB: one-hour recordings with
//! a checkpoint every 12 s (300, what the converter keeps of a collection
//! every 2 s); and the same programs 120 times faster (each rate 120 times
//! higher, each time 120 times shorter: the same samples) in 30 s with a
//! checkpoint every 2 s (15, 11 after the warm-up) or every 6 s (5, the
//! fewest). Figures for the three in that order.
//!
//! - False positives, share of 400 runs in which a group that does not grow
//!   is a suspect: short-lived objects (1 MiB/s living 0.5 s) 0%, 0%, 0%;
//!   sessions of 2 KiB living 3 minutes (18 MB live) 0%, 0%, 0.75%, living
//!   6 minutes (longer than a block) 0%, 0%, 1.5%; a rare site (2.3 samples
//!   live on average) 0.25% in each; a cache filling 64 MiB during the
//!   first 12 minutes then turning over (entries live 17 minutes on
//!   average) 0.25%, 0.75%, 1.5%; a batch of 32 MiB built and freed every 5
//!   minutes, every 20 minutes (live for 10), and data kept from the first
//!   5 minutes, 0% in each. Under the nominal 2.5%: the design is
//!   conservative for stationary series, less so with fewer points.
//! - Coverage of a leak's true rate by the growth interval, 400 runs per
//!   rate, leaking 96-byte objects at 120, 480, 1920 and 7680 KiB/min in
//!   the hour (the first about 10 samples in the window): on a site of its
//!   own, 94.75%, 96.75%, 97.25%, 97.75%; 94.25%, 96.75%, 98.25%, 96.75%;
//!   95.5%, 99.25%, 99.25%, 98.5%. On a site that also holds 18 MB of
//!   sessions living 3 minutes and 1 MiB/s of short-lived objects, 98.25%
//!   to 99.75%; 98.75% to 100%; 98.5% to 99%.
//! - The smallest leak found (suspect) in 90% of runs, on a site of its
//!   own: 170 KiB/min (9.9 MiB in the hour); 19.9 MiB/min (the same 9.9 MiB
//!   in 30 s: fifteen checkpoints find what three hundred do); 79.5 MiB/min
//!   (40 MiB in 30 s, four times as much). On the site with sessions, whose
//!   stationary noise the increments count about ten times over: 960
//!   KiB/min (56 MiB); 134 MiB/min (67 MiB); 225 MiB/min (112 MiB).
//! - Two sites leaking 8 and 16 KiB/s in the hour, each with the sessions,
//!   rank right in 99.2% of 400 runs (99.7% expected from the growths'
//!   spreads).
//!
//! # A share of the samples tracked
//!
//! Where the agent tracks the liveness of only a share `q` of the samples
//! (on generational ZGC, set per second for about 16 tracked a second),
//! each tracked sample enters the series as `weight / q` with its size: a
//! sample of inclusion probability `p q` ([`estimate`](crate::estimate)
//! says why that gives the right variance and interval). The growth test
//! is unchanged: the increments of a leak are still those of a random walk,
//! of variance `1 / q` times as large per tracked sample. The same
//! simulations (`core/tests/growth.rs`, `thinned_*`), with the liveness of
//! 10% or 1% of the samples tracked, or of 16 a second in a busy JVM (the
//! program's own samples and 64 MiB/s of short-lived objects elsewhere,
//! 128 samples a second: `q` about 0.12 in the hour, 0.04 in 30 s with a
//! leak and its background), in the three recordings above:
//!
//! - False positives, over the same eight steady programs and 400 runs:
//!   at most 1.75% (the cache, 10%, five checkpoints), every other at 1%
//!   or below, most 0%; under the nominal 2.5%.
//! - Coverage of a leak's rate by the growth interval, 400 runs per rate,
//!   the rates of above times `1 / q` (as many tracked samples) or times 8
//!   at 16 a second: 95.0% to 100% in every case (94.75% once, at 16 a
//!   second in 30 s, alone), over the runs in which a tracked sample of the
//!   leak was live in the window (all of them here).
//! - The smallest leak found in 90% of runs (200 runs a rate, steps of
//!   2^¼), alone on its site and with the background. At 1% tracked: 17.8
//!   and 21.2 MiB/min in the hour (1.0 and 1.2 GiB leaked; 170 KiB/min and
//!   960 KiB/min tracking every sample: about `1/q` times the rate, as
//!   the variance grows as `1/q`); 2.1 and 3.0 GiB/min in 30 s with 15
//!   checkpoints; 7.0 GiB/min at the fewest, both. At 16 tracked a second
//!   in the busy JVM: 1.6 and 3.2 MiB/min in the hour (95 and 189 MiB);
//!   159 MiB/min and 1.0 GiB/min in 30 s (80 and 535 MiB); 757 MiB/min and
//!   3.0 GiB/min at the fewest. A rate aimed at in tracked samples a second
//!   sees a long recording well and a short one poorly: 30 s tracks 480
//!   samples where an hour tracks 57,600.
//!
//! Where it stops holding. A group whose live set varies slowly, on the scale
//! of the whole window (objects living most of an hour, a cache still filling
//! after the first quarter, a batch cycle of an hour), has a trend within the
//! window that no test over the window can tell from a leak: it may be a
//! suspect. In a short recording that scale is short: objects living tens
//! of seconds in a 30-second one, or the start-up's class data and caches
//! still filling after its first quarter. A leak that starts or stops
//! within the window is fitted as its average growth over the window.

use std::ops::Range;

use crate::estimate::{Estimate, Interval, Sums, Z_95};

/// The additive sums of one quantity: `Sums` without its largest scale.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Additive {
    pub(crate) estimate: f64,
    pub(crate) variance: f64,
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
/// Crate-visible for [`watch`](crate::watch), which keeps a site's live
/// samples as one running change.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Change {
    pub(crate) samples: i64,
    unsized_samples: i64,
    pub(crate) bytes: Additive,
    objects: Additive,
}

impl Change {
    /// The change of adding `estimate`'s samples.
    pub(crate) fn of(estimate: &Estimate) -> Self {
        Self {
            samples: estimate.samples as i64,
            unsized_samples: estimate.unsized_samples as i64,
            bytes: Additive::of(&estimate.bytes),
            objects: Additive::of(&estimate.objects),
        }
    }

    /// Adds `other` (`sign` 1) or takes it away (`sign` -1).
    pub(crate) fn add(&mut self, other: &Self, sign: i64) {
        self.samples += sign * other.samples;
        self.unsized_samples += sign * other.unsized_samples;
        self.bytes.add(&other.bytes, sign as f64);
        self.objects.add(&other.objects, sign as f64);
    }

    /// The estimate of the samples these running sums hold, with the
    /// largest scales (bytes, objects) of those received: no samples (or a
    /// count the rounding of differences left below one) is the empty
    /// estimate, exactly 0 whatever residue the sums kept.
    pub(crate) fn estimate(&self, largest_scale: (f64, f64)) -> Estimate {
        if self.samples <= 0 {
            return Estimate::new();
        }
        Estimate {
            samples: self.samples as u64,
            unsized_samples: self.unsized_samples.max(0) as u64,
            bytes: self.bytes.sums(largest_scale.0),
            objects: self.objects.sums(largest_scale.1),
        }
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
/// use heapsampler_core::growth::LiveSeries;
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
                running.estimate(self.largest_scale)
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
    /// The t interval's degrees of freedom: the effective ones of the
    /// increments' sum of squares at the points' times (module doc), at
    /// most `blocks - 2`, which they are when each block holds one
    /// checkpoint.
    pub degrees_of_freedom: f64,
}

/// Why the checkpoints' times give no growth verdict, whatever the live
/// bytes: the counts that fell short. The module doc says why the
/// thresholds are what they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoVerdict {
    /// Fewer than [`GrowthTest::MIN_CHECKPOINTS`] checkpoints in all.
    TooFewCheckpoints {
        /// The checkpoints.
        checkpoints: usize,
    },
    /// Fewer than [`GrowthTest::MIN_BLOCKS`] checkpoints after the warm-up.
    TooFewAfterWarmUp {
        /// The checkpoints in all.
        checkpoints: usize,
        /// Those after the warm-up.
        after_warm_up: usize,
        /// When the warm-up ends, in the checkpoints' seconds.
        warm_up_end: f64,
    },
    /// Enough checkpoints after the warm-up, but in fewer than
    /// [`GrowthTest::MIN_BLOCKS`] of the [`GrowthTest::BLOCKS`] blocks of equal
    /// time from the warm-up's end to the last checkpoint: bunched, they do
    /// not follow the live bytes through that time.
    Bunched {
        /// The checkpoints after the warm-up.
        after_warm_up: usize,
        /// The blocks holding one.
        blocks: usize,
        /// The warm-up's end, in the checkpoints' seconds.
        from: f64,
        /// The last checkpoint's time.
        to: f64,
    },
}

/// The share of the time from the first checkpoint to the last that is
/// warm-up.
const WARM_UP: f64 = 0.25;

/// `t(df)`, the 97.5% quantile of Student's t on `df` = 1, 2, ...
/// degrees of freedom.
const STUDENT_T_975: [f64; 14] = [
    12.706_2, 4.302_7, 3.182_4, 2.776_4, 2.570_6, 2.446_9, 2.364_6, 2.306_0, 2.262_2, 2.228_1,
    2.201_0, 2.178_8, 2.160_4, 2.144_8,
];

const _: () = assert!(GrowthTest::BLOCKS - 2 <= STUDENT_T_975.len());
const _: () = assert!(GrowthTest::MIN_BLOCKS >= 4 && GrowthTest::MIN_BLOCKS <= GrowthTest::BLOCKS);

/// `t(df)` at `df` of 1 or more, not necessarily whole: between two whole
/// degrees of freedom of the table, `ln t` linear in `1/df`. That is never
/// below the true quantile (`ln t` is convex in `1/df` there) and within 3%
/// of it from 1 degree of freedom on (0.5% at the 1.9 of four blocks of many
/// checkpoints); tested in this module.
fn student_t_975(df: f64) -> f64 {
    let df = df.clamp(1.0, STUDENT_T_975.len() as f64);
    let below = df.floor();
    if below == df {
        return STUDENT_T_975[below as usize - 1];
    }
    let above = below + 1.0;
    let share = (1.0 / below - 1.0 / df) / (1.0 / below - 1.0 / above);
    let (low, high) = (
        STUDENT_T_975[below as usize - 1].ln(),
        STUDENT_T_975[above as usize - 1].ln(),
    );
    (low + share * (high - low)).exp()
}

/// The growth test for one recording's checkpoints: what depends on their
/// times alone, made once for all its groups. That is the window, its
/// points (the blocks holding a checkpoint), and under the random walk of
/// the module doc, per unit of its variance a second, the variance of the
/// growth and the expected sum of squares of the increments, with that
/// sum's effective degrees of freedom.
///
/// ```
/// use heapsampler_core::estimate::Estimate;
/// use heapsampler_core::growth::{GrowthTest, NoVerdict};
///
/// let seconds: Vec<f64> = (1..=15).map(|c| 2.0 * f64::from(c)).collect();
/// let test = GrowthTest::new(&seconds).unwrap();
/// let growth = test.fit(&vec![Estimate::new(); 15]);
/// assert!(!growth.is_suspect());
/// assert_eq!(
///     GrowthTest::new(&seconds[..3]).unwrap_err(),
///     NoVerdict::TooFewCheckpoints { checkpoints: 3 }
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthTest {
    checkpoints: usize,
    window: Range<usize>,
    /// The point of each of the window's checkpoints, in order.
    point_of: Vec<usize>,
    /// Each point's mean time, seconds from the warm-up's end.
    times: Vec<f64>,
    /// `Var(ĝ) / σ²`.
    growth_variance: f64,
    /// `E[Σ (d_j - ĝΔ_j)²/Δ_j] / σ²`.
    expected_squares: f64,
    /// `2 E[Q]² / Var(Q)` of that sum of squares `Q`: Satterthwaite's.
    degrees_of_freedom: f64,
}

impl GrowthTest {
    /// The blocks of equal time the time after the warm-up is cut into.
    pub const BLOCKS: usize = 8;

    /// The fewest blocks holding a checkpoint for a verdict: four points,
    /// three increments, about two degrees of freedom (module doc).
    pub const MIN_BLOCKS: usize = 4;

    /// The fewest checkpoints for a verdict: the warm-up holds at least the
    /// first, and [`MIN_BLOCKS`](Self::MIN_BLOCKS) must follow it. As many,
    /// evenly in time, give one.
    pub const MIN_CHECKPOINTS: usize = Self::MIN_BLOCKS + 1;

    /// The test for checkpoints at `seconds` (each one's time, seconds from
    /// the recording's start, ascending), or why they give no verdict on
    /// any group: too few, too few after the warm-up, or too bunched in
    /// time ([`NoVerdict`]).
    pub fn new(seconds: &[f64]) -> Result<GrowthTest, NoVerdict> {
        let checkpoints = seconds.len();
        if checkpoints < Self::MIN_CHECKPOINTS {
            return Err(NoVerdict::TooFewCheckpoints { checkpoints });
        }
        let (first, last) = (seconds[0], seconds[checkpoints - 1]);
        let warm_up_end = first + WARM_UP * (last - first).max(0.0);
        let start = seconds.partition_point(|&t| t < warm_up_end);
        let window = start..checkpoints;
        if window.len() < Self::MIN_BLOCKS {
            return Err(NoVerdict::TooFewAfterWarmUp {
                checkpoints,
                after_warm_up: window.len(),
                warm_up_end,
            });
        }
        // The blocks cut the time from the warm-up's end, not from the
        // first checkpoint after it: checkpoints bunched at the end of a
        // long window do not follow it, however many.
        let block_seconds = (last - warm_up_end) / Self::BLOCKS as f64;
        // Seconds from the warm-up's end, by block.
        let mut blocks: [Vec<f64>; Self::BLOCKS] = Default::default();
        let mut block_of = Vec::with_capacity(window.len());
        for &t in &seconds[window.clone()] {
            let block = if block_seconds > 0.0 {
                (((t - warm_up_end) / block_seconds) as usize).min(Self::BLOCKS - 1)
            } else {
                0
            };
            blocks[block].push(t - warm_up_end);
            block_of.push(block);
        }
        let held = blocks.iter().filter(|b| !b.is_empty()).count();
        if held < Self::MIN_BLOCKS {
            return Err(NoVerdict::Bunched {
                after_warm_up: window.len(),
                blocks: held,
                from: warm_up_end,
                to: last,
            });
        }
        let mut point_of_block = [0; Self::BLOCKS];
        let mut points: Vec<Vec<f64>> = Vec::with_capacity(held);
        for (block, mut times) in blocks.into_iter().enumerate() {
            if !times.is_empty() {
                times.sort_by(f64::total_cmp);
                point_of_block[block] = points.len();
                points.push(times);
            }
        }
        let point_of = block_of.iter().map(|&b| point_of_block[b]).collect();
        Ok(Self::of_points(checkpoints, window, point_of, &points))
    }

    /// The factors for points of checkpoints at `points` (each ascending,
    /// seconds from the warm-up's end; each point's all before the
    /// next's).
    fn of_points(
        checkpoints: usize,
        window: Range<usize>,
        point_of: Vec<usize>,
        points: &[Vec<f64>],
    ) -> GrowthTest {
        let b = points.len();
        let times: Vec<f64> = points
            .iter()
            .map(|p| p.iter().sum::<f64>() / p.len() as f64)
            .collect();
        // The covariance of the points' means of a random walk of variance
        // 1 a second: the mean over their checkpoints' pairs of `min(s, t)`.
        // Across points, `s` is always the earlier's; within one, each
        // checkpoint (in order) is the smaller of the pairs with itself and
        // with each later one.
        let within: Vec<f64> = points
            .iter()
            .map(|point| {
                let n = point.len();
                let pairs: f64 = point
                    .iter()
                    .enumerate()
                    .map(|(k, t)| t * (2 * (n - k) - 1) as f64)
                    .sum();
                pairs / (n * n) as f64
            })
            .collect();
        let covariance: Vec<Vec<f64>> = (0..b)
            .map(|i| {
                (0..b)
                    .map(|j| if i == j { within[i] } else { times[i.min(j)] })
                    .collect()
            })
            .collect();
        let quadratic = |x: &[f64], y: &[f64]| -> f64 {
            (0..b)
                .map(|i| (0..b).map(|j| x[i] * covariance[i][j] * y[j]).sum::<f64>())
                .sum()
        };
        let total = times[b - 1] - times[0];
        // The growth `(m_b - m_1) / ΣΔ` and each residual `(d_j - ĝΔ_j) /
        // √Δ_j` as weights on the points' means.
        let mut growth = vec![0.0; b];
        growth[0] = -1.0 / total;
        growth[b - 1] = 1.0 / total;
        let residuals: Vec<Vec<f64>> = times
            .windows(2)
            .enumerate()
            .map(|(j, pair)| {
                let dt = pair[1] - pair[0];
                let mut weights: Vec<f64> = growth.iter().map(|w| -dt * w).collect();
                weights[j + 1] += 1.0;
                weights[j] -= 1.0;
                weights.iter().map(|w| w / dt.sqrt()).collect()
            })
            .collect();
        // `Q` is the quadratic form of `M = R C Rᵀ`: for Gaussian means,
        // `E[Q] = tr M` and `Var(Q) = 2 tr M²`.
        let m: Vec<Vec<f64>> = residuals
            .iter()
            .map(|x| residuals.iter().map(|y| quadratic(x, y)).collect())
            .collect();
        let trace: f64 = (0..m.len()).map(|i| m[i][i]).sum();
        let trace_of_square: f64 = m.iter().flatten().map(|x| x * x).sum();
        GrowthTest {
            checkpoints,
            window,
            point_of,
            growth_variance: quadratic(&growth, &growth),
            expected_squares: trace,
            degrees_of_freedom: trace * trace / trace_of_square,
            times,
        }
    }

    /// Fits the trend of `live`, one estimate per checkpoint.
    ///
    /// # Panics
    ///
    /// When `live` has not one estimate per checkpoint: a programming error.
    pub fn fit(&self, live: &[Estimate]) -> Growth {
        assert_eq!(live.len(), self.checkpoints, "one estimate per checkpoint");
        let b = self.times.len();
        // (Σ bytes, Σ variance of bytes, checkpoints) per point.
        let mut sums = vec![(0.0, 0.0, 0usize); b];
        for (&point, estimate) in self.point_of.iter().zip(&live[self.window.clone()]) {
            let sum = &mut sums[point];
            sum.0 += estimate.bytes();
            sum.1 += estimate.bytes_variance();
            sum.2 += 1;
        }
        // (mean bytes, mean variance of bytes) of each point.
        let means: Vec<(f64, f64)> = sums
            .iter()
            .map(|&(bytes, variance, n)| (bytes / n as f64, variance / n as f64))
            .collect();
        let (first, last) = (means[0], means[b - 1]);
        let total_seconds = self.times[b - 1] - self.times[0];
        let growth = (last.0 - first.0) / total_seconds;
        let squares: f64 = (0..b - 1)
            .map(|j| {
                let dt = self.times[j + 1] - self.times[j];
                (means[j + 1].0 - means[j].0 - growth * dt).powi(2) / dt
            })
            .sum();
        let growth_variance = squares / self.expected_squares * self.growth_variance;
        // The sampling floor: what the samples added or lost between the
        // first point and the last add their variances (a leak's, exactly).
        let sampling_variance = (last.1 - first.1).abs() / total_seconds.powi(2);
        let half_width = (student_t_975(self.degrees_of_freedom) * growth_variance.sqrt())
            .max(Z_95 * sampling_variance.sqrt());
        Growth {
            bytes_per_second: growth,
            interval: Interval {
                estimate: growth,
                low: growth - half_width,
                high: growth + half_width,
            },
            window: self.window.clone(),
            blocks: b,
            degrees_of_freedom: self.degrees_of_freedom,
        }
    }
}

impl Growth {
    /// Whether the growth is significantly above zero: the 95% interval's
    /// lower bound above 0, a one-sided test at 2.5% (its false-positive
    /// rate measured in the [module doc](self)).
    pub fn is_suspect(&self) -> bool {
        self.interval.low > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The design of `n` checkpoints a second in each of `b` whole seconds
    /// (block `j` the second from `j`), evenly within it.
    fn design(b: usize, n: usize) -> GrowthTest {
        let points: Vec<Vec<f64>> = (0..b)
            .map(|j| {
                (0..n)
                    .map(|i| j as f64 + (i as f64 + 0.5) / n as f64)
                    .collect()
            })
            .collect();
        GrowthTest::of_points(b * n, 0..b * n, Vec::new(), &points)
    }

    /// One checkpoint a block: the increments are independent, each of
    /// variance `σ² Δ`, so `Q / σ²` is a chi-square on `b - 2` degrees of
    /// freedom exactly, and `Var(ĝ) = σ² / ΣΔ`.
    #[test]
    fn one_checkpoint_a_block_is_the_textbook_random_walk() {
        for b in 4..=GrowthTest::BLOCKS {
            let d = design(b, 1);
            let k = (b - 1) as f64;
            assert!((d.expected_squares - (k - 1.0)).abs() < 1e-12, "{d:?}");
            assert!((d.degrees_of_freedom - (k - 1.0)).abs() < 1e-12, "{d:?}");
            assert!((d.growth_variance - 1.0 / k).abs() < 1e-12, "{d:?}");
        }
    }

    /// Many checkpoints a block: the module doc's closed forms for block
    /// means of a continuous random walk, `E[Q] = σ² ((2/3) k - (b - 4/3)/k)`
    /// and `Var(ĝ) = σ² Δ (b - 4/3) / (ΣΔ)²`, to the discreteness of 200
    /// checkpoints a block (1e-4); and fewer effective degrees of freedom
    /// than `b - 2` (5.46 at eight blocks, 1.92 at four).
    #[test]
    fn many_checkpoints_a_block_give_the_closed_forms() {
        for (b, df) in [(4, 1.92), (5, 2.81), (6, 3.69), (8, 5.46)] {
            let d = design(b, 200);
            let bf = b as f64;
            let k = bf - 1.0;
            let squares = 2.0 / 3.0 * k - (bf - 4.0 / 3.0) / k;
            let variance = (bf - 4.0 / 3.0) / (k * k);
            assert!((d.expected_squares / squares - 1.0).abs() < 1e-4, "{d:?}");
            assert!((d.growth_variance / variance - 1.0).abs() < 1e-4, "{d:?}");
            assert!((d.degrees_of_freedom - df).abs() < 0.01, "{d:?}");
        }
    }

    /// At whole degrees of freedom the table; between, at or above the true
    /// quantile and within 3% of it. The true ones computed by integrating
    /// Student's density (to 1e-4).
    #[test]
    fn t_between_whole_degrees_of_freedom_errs_wide_by_little() {
        for (df, t) in STUDENT_T_975.iter().enumerate() {
            assert_eq!(student_t_975(df as f64 + 1.0), *t);
        }
        for (df, truth) in [
            (1.25, 8.028),
            (1.5, 6.0167),
            (1.75, 4.9488),
            (1.92, 4.4791),
            (2.5, 3.5747),
            (2.9, 3.2454),
            (3.5, 2.9401),
            (5.47, 2.5055),
        ] {
            let t = student_t_975(df);
            assert!(
                t >= truth - 1e-4 && t <= 1.03 * truth,
                "t({df}) = {t}, truly {truth}"
            );
        }
    }
}
