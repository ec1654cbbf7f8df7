//! Leak suspects found while the program runs: each allocation site's
//! estimated live bytes after each collection, kept in bounded memory, and
//! tested for growth again and again, for days.
//!
//! The agent feeds a [`Watch`] on its writer thread, never in the
//! allocation callback nor in a collection's pause: after each collection
//! that frees what is dead (each one under G1, the major ones under
//! generational ZGC) it [enters](Watch::enter) the tracked samples the
//! collection found live for the first time, [leaves](Watch::leave) those
//! it found freed, and calls [`Watch::checkpoint`], which tests every group
//! and returns the suspects raised. A sample that died before a collection
//! saw it is neither entered nor left. A checkpoint with the table full
//! costs about 33 µs (`cargo bench -p heapsampler-core --bench core --
//! watch`: 256 sites with three days of history, on a shared machine); an enter or a leave, a binary search and
//! a few additions, and the first sample of a site not followed when the
//! table is full a scan of its 256 sites and 1,024 remembered ones.
//!
//! # What is kept
//!
//! - Groups: at most [`MAX_SITES`] = 256 sites on their own, and the rest.
//!   A sample of a site not followed makes room for it: a new slot while
//!   there is one, else the slot of the site of the fewest live bytes (of
//!   those, the lowest high), whose samples and history are added to the
//!   rest's. A leave goes to its site while that holds a live sample, else
//!   to the rest (which holds an evicted site's samples). A leak's site
//!   that holds more samples than the smallest of 256 sites is not
//!   evicted, however many sites come and go (tested with 9,000 of them: a
//!   leak from 0 is raised within a minute).
//! - Evicted sites: the watch remembers the highest level of up to
//!   [`MAX_PAST_SITES`] = 1,024 of them (those of the highest highs), and
//!   whether each was raised. A site that comes back starts with no
//!   samples and a level of 0 before, but with its old high: a batch's
//!   site, empty between batches and evicted then, is not a new site
//!   building a batch when it comes back (without this, the steady
//!   service with 400 more sites than the table holds raised the batch's
//!   site and the 1 MiB buffers' 166 times in 100 days under G1).
//! - History: per group and scale `k` (13 of them: windows of 30 s · 2^k,
//!   30 s to 34 hours), the group's point at the first checkpoint of each
//!   of the last four periods of half the scale's window. The times are
//!   the same for every group (each gets a point at each, 0 before it was
//!   seen), so a site's history adds to the rest's point by point. The two
//!   oldest of the four start the scale's windows, which are one to two of
//!   its lengths long.
//! - A point: the level (the estimated live bytes), its variance (the sum
//!   of the live samples' variance terms), the running sum of the variance
//!   terms of every sample that entered or left, and the highest level so
//!   far with its swing (below): 40 bytes. A site is 2,208 bytes (52
//!   points and its running sums), an evicted site remembered 32; a watch
//!   with both full holds 605,048 bytes (591 KiB), however many sites come
//!   (tested).
//!
//! # The test
//!
//! At each checkpoint `t`, for each group not raised yet, over each window
//! whose start `t₀` is after the first quarter of the uptime (the warm-up,
//! as [`GrowthTest`](crate::growth::GrowthTest)'s: what a service builds at
//! its start is in the warm-up once the uptime is four times the start;
//! short windows always fit later):
//!
//! 1. A significant rise: `z = Δ / √V > ` [`WINDOW_Z`] ` = 6`, with `Δ =
//!    L(t) - L(t₀)` the rise of the level and `V` its variance from
//!    sampling. The difference of the levels is the sum over the samples
//!    live at one end and not the other, whose inclusions are independent
//!    (the sampler's model, [`estimate`](crate::estimate)): its variance
//!    is the sum of their terms. `V` is the smaller of two sums that hold
//!    them: the terms of every sample that entered or left in between (the
//!    difference of the running sums, more than the variance by a sample
//!    that entered and left in between, counted twice), and those of the
//!    samples live at either end (more by those live at both).
//! 2. A new high: `L(t) - H(t₀) > ` [`NEW_HIGH_Z`] ` √(S(t) + S_H)`, `H(t₀)`
//!    the highest level at a checkpoint up to the window's start, `S` the
//!    sum of the live samples' swing terms (at `t`, and at that high).
//!    Sampling is not all that moves a level: a group's true live bytes
//!    swing (sessions, a periodic batch, a cache turning over at its
//!    plateau), and a rise over a window can be a swing. A leak keeps
//!    making new highs; a batch repeats its old peak; a cache at its
//!    plateau does neither. A sample's swing term is `weight²`, the
//!    variance term of a sample of unknown size: its sampling term
//!    `w²(1 - p)` and `w s`, the variance of the count of the `w / s`
//!    objects it stands for if they come and go at random (a Poisson
//!    process, whose count's variance is its mean). For small objects the
//!    two terms are one (`p → 0`). For objects far above the interval,
//!    sampled for sure, the sampling term is 0 and the count's swings are
//!    all there is: without them a site of 8 MiB objects living 2 s (one
//!    live on average) was raised in every simulated week, at a record of
//!    its count. A site first seen after the warm-up had 0 before: a new
//!    site that grows significantly is a suspect.
//! 3. A group is raised when a window passes both, and the window of the
//!    largest `z` is reported ([`Suspect`]): its growth is the rise over
//!    that window's length, with the 95% interval `± 1.96 √V / (t - t₀)`
//!    (sampling alone: for a leak at a steady rate that is all of it, its
//!    samples a random walk's steps, as [`growth`](crate::growth) says),
//!    and the live bytes now, with the [`estimate`](crate::estimate)
//!    interval of the live samples. A group is raised once: the watch
//!    keeps its level ([`Watch::live`]) but does not test it again while
//!    it is followed, nor when it comes back after an eviction while the
//!    watch remembers it.
//!
//! # How often a steady service raises a false suspect
//!
//! **The window test alone.** Each scale's windows start at the points
//! kept, two per window length: `Σ_k 2 · 86,400 s / (30 s · 2^k)` = 11,520
//! starts a group-day, each tested at the checkpoints of a window length.
//! Were they independent tests, `z > 6` (the normal tail 9.9e-10) would
//! give 1.1e-5 false rises a group-day, one in 343 days over a full table
//! of 257 groups. They are not: a window slid over time looks again and
//! again, and counts as more independent tests the higher the threshold
//! (for a process whose increments are a random walk's, the chance of
//! crossing a level `c` goes as `c φ(c)`, its tail as `φ(c) / c`).
//! Measured on a group whose true live bytes never change, 120 samples
//! live and 2 a second coming and going (example
//! `watch -- noise`, 400 days under G1): the largest `z` of a day's
//! windows passes 4 on 93.5% of days, 4.5 on 32%, 5 on 4.75%, 5.5 on 0.5%;
//! `P = 1 - exp(-M Q(c))` gives `M` = 86,000, 114,000, 170,000 and
//! 264,000 (of two days) effective tests a day, growing about as `c²`:
//! about 250,000 at 6, 2.5e-4 false rises a group-day. Few samples, or
//! skewed weights, do not make the normal tail too light: a steady group's
//! samples come and leave alike, and given which samples moved, `z` is
//! their terms summed with random signs over the root of their squares.
//! For terms alike (one size, one `q`) that is a binomial count's, whose
//! tail above 6 is far below the normal's for few samples (7.3e-12 at 37,
//! the fewest that pass; 1.4e-10 at 100) and within a few percent of it
//! for many (1.02e-9 at 1,000; 9.9e-10 in the limit); for unlike ones
//! (ZGC's weights `w / q`, `q` set each second) it is below `exp(-c²/2)`
//! (Hoeffding), 1.5e-8 at 6. No least number of samples is
//! needed: `z` is at most `√n` for `n` samples that moved, unless they are
//! of objects sampled for sure (no sampling error), which the new high
//! judges by their count. So the window test alone would let a full table
//! of such busy groups raise a false suspect every few weeks.
//!
//! **The new high** is what holds the rate: under a constant level it asks
//! the level's sampling error to beat its own record before the window by
//! three swings, which a record over hours makes far rarer than the
//! window's rise. On the same group, the whole test at 4 (and 2 for the
//! new high) never raised it in 400 days; at 3 and 2 on 1% of days.
//!
//! **A steady service** (`core/tests/service.rs`): about 40 MiB live in
//! request garbage (14 MiB/s on three sites, living 20 to 200 ms),
//! sessions (2 KiB living 8 s, 512 B living 30 s), a 16 MiB cache filled
//! in the first 10 minutes then turning over every 10, a batch of 8 MiB
//! built in 20 s every 5 minutes, a pool of 64 KiB buffers replaced every
//! 2 hours, static data, 1 MiB buffers living 2 s, a rare site; under G1
//! (a collection every 1 to 2 s, uniformly, each sample tracked) and
//! under generational ZGC (a major every 3 to 6 s, 16 samples tracked a
//! second: `q` about 0.47). Example `watch -- steady 300`: 300 weeks
//! (2,100 days) under each, no suspect: **a steady service raises a false
//! suspect at most once in 700 days** under each (0 in 2,100 days: at 95%,
//! fewer than 3 in 2,100). How far from raising one it stays, at lower
//! thresholds (the whole test at `z` and `h` for the new high): at 5 and
//! 3, 65 suspects under G1 and none under ZGC in the 2,100 days; at 6 and
//! 2, none; at 4.5 and 2, 182 and 1. Of the first 350 days (`watch --
//! steady 50`), every one was in the first 40 minutes (the cache's
//! start-up fill, and the batch's first cycles) but one, the batch's site
//! at 4.5 and 2 after two hours. With 400 more sites of a sample or two
//! live (`watch -- churn`, the table full: 56,000 evictions a day under
//! G1, 25,000 under ZGC), 100 days under each: no suspect, and at the
//! lower thresholds only those of the start-up and the batch's one.
//!
//! # How soon a leak is raised
//!
//! 500 KiB/s of 1 KiB objects (about one sample a second) from a moment
//! drawn in [30 s, 120 s] of a 180 s run of the service (its start-up
//! taking 5 s), 2,000 runs each (example `watch -- late`; the growth's
//! interval, at the raise, held the leak's growth over the window in 95.0%
//! to 96.1% of the raised runs of each case):
//!
//! | leak | within 60 s | median | 90% | 99% | longest |
//! |------|-------------|--------|-----|-----|---------|
//! | G1, a new site | 99.95% | 37.1 s | 45.6 s | 53.7 s | 60.3 s |
//! | G1, the sessions' site (2 MiB) | 98.40% | 40.8 s | 52.3 s | 61.5 s | 72.8 s |
//! | G1, the cache's site (16 MiB) | 97.00% | 41.2 s | 53.3 s | 66.5 s | (4 not in 180 s) |
//! | ZGC, a new site | 99.75% | 39.0 s | 47.5 s | 55.4 s | 63.3 s |
//! | ZGC, the sessions' site | 96.85% | 42.7 s | 54.5 s | 65.7 s | 83.0 s |
//! | ZGC, the cache's site | 93.10% | 43.6 s | 57.4 s | 72.3 s | (5 not in 180 s) |
//!
//! No other group was raised in any run, and no leaking site before its
//! leak. A rise of about 36 samples is what `z > 6` takes (`z ≈ √n` for
//! `n` samples that came), plus the live samples' terms on a site that
//! holds some: so a leak is raised after about 36 of its samples are
//! tracked. Under ZGC that is its samples times `q`, and the service above
//! allocates 16 MiB/s in all (`q` about 0.47): there the runs above give
//! it 4 MiB/s of garbage instead (7 MiB/s in all, `q` about 1). As the
//! share falls (example `watch -- share`, 500 runs each, a new site):
//! 8 MiB/s of garbage (11 in all, `q` 0.73), raised within 60 s in 91.8%
//! of runs (median 48.4 s); 14 (`q` 0.47), 6.4% (median 78.9 s, 16% not
//! in the run); 28 (`q` 0.26), none. Within a minute under ZGC at 16
//! tracked a second needs a JVM allocating under about 10 MiB/s in all.
//!
//! Slower leaks are raised at longer scales (example `watch -- slow`, 200
//! runs each, a new site in the service above, ZGC's `q` about 0.47):
//!
//! | leak | median | 90% | 99% | longest |
//! |------|--------|-----|-----|---------|
//! | 50 KiB/s from the third hour, G1 | 6.1 min | 7.9 min | 9.3 min | 9.8 min |
//! | 50 KiB/s from the third hour, ZGC | 12.1 min | 15.3 min | 16.8 min | 18.1 min |
//! | 50 KiB/s from the second day, G1 | 6.1 min | 7.9 min | 9.3 min | 9.8 min |
//! | 50 KiB/s from the second day, ZGC | 12.3 min | 15.1 min | 17.4 min | 19.9 min |
//! | 5 KiB/s from the second day, G1 | 61 min | 79 min | 93 min | 98 min |
//! | 5 KiB/s from the second day, ZGC | 2.0 h | 2.5 h | 2.8 h | 2.9 h |
//!
//! About 36 samples again: 50 KiB/s of 1 KiB objects is a sample every 10
//! s, 6 minutes for 36; ZGC tracks 0.47 of them. The growth's interval
//! held the leak's growth over the window in 93.5% to 95.5% of them.
//!
//! # Where it stops holding
//!
//! - A start-up still building when a quarter of the uptime has passed is
//!   growth: a fill of small objects at `g` bytes a second reaches `z ≈
//!   √(g W / T)` over a window `W` within it, so one of more than about
//!   36 samples (18 MiB at 512 KiB) in the last three quarters of it is
//!   raised during the start-up. The service's 16 MiB cache filled in 10
//!   minutes is below that, but not by much: its fill is what the lower
//!   thresholds raise.
//! - The swing term counts a count's swings as a Poisson process's. A
//!   group whose true live bytes swing more (objects coming in bursts, a
//!   batch of varying size) makes records that can pass it.
//! - The growth reported is over the window judged, which may start
//!   before the leak: it is then the leak's rate times the share of the
//!   window it leaked (0.76 to 0.84 of the rate on average in the runs
//!   above).
//! - Samples that entered and left within a window count twice in its
//!   variance: a leak on a site that turns its samples over quickly is
//!   found later than on a new one.
//! - A leak of objects far above the interval is judged by its count: its
//!   level must pass its high before the window by three swings of the
//!   objects live now and then; from none, at about 21 objects (the
//!   module's tests).
//! - The rest's high after an eviction is at most the true one (peaks
//!   between the points kept are missed): the rest is judged less
//!   strictly than a site. With 56,000 evictions a day it was not raised
//!   in the 100 days above.
//! - The agent's cap (256 samples tracked since the last major) is not
//!   modelled: at 16 a second and a major every 6 s at most, it is not
//!   reached.

use crate::estimate::{Estimate, Interval, Z_95};
use crate::growth::Change;

/// The most sites followed one by one; the samples of the others are "the
/// rest", one group.
pub const MAX_SITES: usize = 256;

/// The shortest window, seconds. The windows of scale `k` are
/// `SHORTEST_WINDOW · 2^k` to twice that long.
pub const SHORTEST_WINDOW: f64 = 30.0;

/// The scales: windows from 30 s (to 60 s) up to 34 hours (to 68).
pub const SCALES: usize = 13;

/// The points kept per scale: the first checkpoint of each of the last four
/// periods of half the scale's shortest window. The two oldest start the
/// scale's windows.
const SLOTS: usize = 4;

/// How many standard deviations of its sampling error a group's rise over
/// a window must be for the window to be significant (the module doc says
/// what it holds alone, and with the new high).
pub const WINDOW_Z: f64 = 6.0;

/// How many standard deviations of the swings of its live samples a
/// group's level must be above its highest level before the window to be
/// a new high (module doc).
pub const NEW_HIGH_Z: f64 = 3.0;

/// What a suspect names: a site followed on its own, or the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// A site, by the caller's id.
    Site(u64),
    /// The samples of every site not followed on its own.
    Rest,
}

/// A leak suspect: a group whose live bytes rose significantly over a
/// window, to a level significantly above any it had before the window.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    /// The site, or the rest.
    pub group: Group,
    /// When it was raised: the checkpoint's seconds.
    pub raised_at: f64,
    /// The growth over the window that was judged (the rise over its
    /// length), bytes per second, with its 95% interval from the sampling
    /// error of that rise.
    pub growth: Interval,
    /// The live bytes at the checkpoint, with their 95% interval.
    pub live: Interval,
    /// Where the window started, the checkpoint's seconds: it ends at
    /// `raised_at`.
    pub window_start: f64,
}

/// A group's growth lately: what [`Watch::trend`] gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// The rise of its live bytes over the window, over its length: bytes
    /// per second, with its 95% interval from the rise's sampling error
    /// (as a [`Suspect`]'s).
    pub growth: Interval,
    /// Where the window started, a checkpoint's seconds.
    pub window_start: f64,
    /// Where it ended: the last checkpoint's seconds.
    pub window_end: f64,
}

/// A group at a checkpoint, as its history keeps it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Point {
    /// The estimated live bytes.
    level: f64,
    /// Their variance: the sum of the live samples' variance terms.
    live_variance: f64,
    /// The sum of the variance terms of every sample that entered or left
    /// so far.
    change_variance: f64,
    /// The highest level at a checkpoint so far, and its live samples'
    /// swing terms.
    high: f64,
    high_swing: f64,
}

/// One group's live samples and history.
#[derive(Debug, Clone)]
struct Series {
    /// The live samples' sums.
    live: Change,
    /// The sum of the live samples' swing terms.
    live_swing: f64,
    /// The largest scales (bytes, objects) of the samples received, for
    /// the live bytes' interval.
    largest_scale: (f64, f64),
    /// As [`Point`]'s, now.
    change_variance: f64,
    high: f64,
    high_swing: f64,
    /// Per scale, the points at the times of [`Watch::times`].
    history: [[Point; SLOTS]; SCALES],
    raised: bool,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            live: Change::default(),
            live_swing: 0.0,
            largest_scale: (0.0, 0.0),
            change_variance: 0.0,
            high: 0.0,
            high_swing: 0.0,
            history: [[Point::default(); SLOTS]; SCALES],
            raised: false,
        }
    }
}

impl Series {
    /// The point now, and its live samples' swing terms.
    fn point(&self) -> (Point, f64) {
        // No live sample: exactly 0, whatever residue the sums kept.
        let (level, live_variance, live_swing) = if self.live.samples > 0 {
            (
                self.live.bytes.estimate.max(0.0),
                self.live.bytes.variance.max(0.0),
                self.live_swing.max(0.0),
            )
        } else {
            (0.0, 0.0, 0.0)
        };
        let point = Point {
            level,
            live_variance,
            change_variance: self.change_variance,
            high: self.high,
            high_swing: self.high_swing,
        };
        (point, live_swing)
    }

    fn enter(&mut self, one: &Sample) {
        self.live.add(&one.change, 1);
        self.live_swing += one.swing;
        self.largest_scale.0 = self.largest_scale.0.max(one.scales.0);
        self.largest_scale.1 = self.largest_scale.1.max(one.scales.1);
        self.change_variance += one.change.bytes.variance;
    }

    fn leave(&mut self, one: &Sample) {
        self.live.add(&one.change, -1);
        self.live_swing -= one.swing;
        self.change_variance += one.change.bytes.variance;
    }

    /// Starts a site that comes back with what the watch remembers of it:
    /// its high, before every point (at least as high as it was then: the
    /// safe side), and whether it was raised.
    fn recall(&mut self, past: &Past) {
        self.high = past.high;
        self.high_swing = past.high_swing;
        self.raised = past.raised;
        for point in self.history.iter_mut().flatten() {
            point.high = past.high;
            point.high_swing = past.high_swing;
        }
    }

    /// Adds another group's samples and history (an evicted site's, to the
    /// rest's): the sums add, point by point, at the points' `times`. The
    /// highest level of the sum up to a point is taken as the highest of
    /// the parts' highs and of the sum's levels at the points kept up to
    /// it: at most the true one (peaks between the points kept, or of one
    /// part while the other was low, are missed), where the sum of the
    /// highs, at least the true one, would grow with every eviction until
    /// the rest could make no new high.
    fn absorb(&mut self, other: &Series, times: &[[f64; SLOTS]; SCALES]) {
        let (now, other_now) = (self.point().0, other.point().0);
        self.live.add(&other.live, 1);
        self.live_swing += other.live_swing;
        self.largest_scale.0 = self.largest_scale.0.max(other.largest_scale.0);
        self.largest_scale.1 = self.largest_scale.1.max(other.largest_scale.1);
        self.change_variance += other.change_variance;
        for (mine, theirs) in self.history.iter_mut().zip(&other.history) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.level += b.level;
                a.live_variance += b.live_variance;
                a.change_variance += b.change_variance;
                a.high = a.high.max(b.high);
                a.high_swing += b.high_swing;
            }
        }
        // The points in time order, each raising the high of those after.
        let mut order: Vec<(f64, usize, usize)> = (0..SCALES)
            .flat_map(|scale| (0..SLOTS).map(move |slot| (times[scale][slot], scale, slot)))
            .filter(|(time, _, _)| time.is_finite())
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut highest = 0.0f64;
        let mut at = 0;
        while at < order.len() {
            // Points of the same time (of several scales) are one point.
            let same = order[at..].partition_point(|p| p.0 == order[at].0);
            for &(_, scale, slot) in &order[at..at + same] {
                highest = highest.max(self.history[scale][slot].level);
            }
            for &(_, scale, slot) in &order[at..at + same] {
                let point = &mut self.history[scale][slot];
                point.high = point.high.max(highest);
            }
            at += same;
        }
        self.high = self
            .high
            .max(other.high)
            .max(highest)
            .max(now.level + other_now.level);
        self.high_swing += other.high_swing;
    }
}

/// One sample's terms.
struct Sample {
    change: Change,
    /// Its swing term, `weight²`.
    swing: f64,
    /// Its largest scales (bytes, objects).
    scales: (f64, f64),
}

impl Sample {
    /// A sample of `weight` bytes of liveness and `size`, as
    /// [`Estimate::add_weighted`] takes them; its swing term is the
    /// variance term of a sample whose size is not known (module doc).
    fn of(weight: f64, size: u64) -> Sample {
        let mut one = Estimate::new();
        one.add_weighted(weight, Some(size));
        let mut unsized_one = Estimate::new();
        unsized_one.add_weighted(weight, None);
        Sample {
            change: Change::of(&one),
            swing: unsized_one.bytes_variance(),
            scales: (one.bytes.largest_scale, one.objects.largest_scale),
        }
    }
}

/// A site followed on its own: the caller's id and its group.
#[derive(Debug, Clone)]
struct Site {
    id: u64,
    series: Series,
}

/// The most evicted sites whose high the watch remembers.
pub const MAX_PAST_SITES: usize = 4 * MAX_SITES;

/// What the watch remembers of an evicted site.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Past {
    id: u64,
    high: f64,
    high_swing: f64,
    raised: bool,
}

impl Past {
    fn of(id: u64, series: &Series) -> Past {
        Past {
            id,
            high: series.high,
            high_swing: series.high_swing,
            raised: series.raised,
        }
    }
}

/// Evicted sites remembered, by id: at most [`MAX_PAST_SITES`], those of
/// the highest highs (a low one matters least: a site that comes back
/// without it must still rise from 0).
#[derive(Debug, Clone, Default)]
struct Pasts(Vec<Past>);

impl Pasts {
    fn remember(&mut self, past: Past) {
        let at = match self.0.binary_search_by_key(&past.id, |p| p.id) {
            Ok(at) => {
                self.0[at] = past;
                return;
            }
            Err(at) => at,
        };
        if self.0.len() < MAX_PAST_SITES {
            self.0.insert(at, past);
            return;
        }
        let lowest = (0..self.0.len())
            .min_by(|&a, &b| self.0[a].high.total_cmp(&self.0[b].high))
            .expect("a full memory has sites");
        if self.0[lowest].high < past.high {
            self.0.remove(lowest);
            let at = self.0.partition_point(|p| p.id < past.id);
            self.0.insert(at, past);
        }
    }

    fn forget(&mut self, id: u64) -> Option<Past> {
        let at = self.0.binary_search_by_key(&id, |p| p.id).ok()?;
        Some(self.0.remove(at))
    }
}

/// Watches every site's live bytes for leaks (see the [module doc](self)).
///
/// ```
/// use heapsampler_core::watch::{Group, Watch};
///
/// let mut watch = Watch::new();
/// // Site 7 keeps one more 1 KiB object sampled at 512 KiB every second.
/// let mut raised = Vec::new();
/// for second in 1..=120 {
///     watch.enter(7, 524_800.0, 1024);
///     raised.extend(watch.checkpoint(f64::from(second)));
/// }
/// assert_eq!(raised.len(), 1);
/// let suspect = &raised[0];
/// assert_eq!(suspect.group, Group::Site(7));
/// assert!(suspect.growth.contains(524_800.0));
/// ```
#[derive(Debug, Clone)]
pub struct Watch {
    sites: Vec<Site>,
    /// `(site, slot in sites)`, by site: a lookup per sample in a few
    /// comparisons, and exactly as many bytes as it holds.
    index: Vec<(u64, usize)>,
    rest: Series,
    /// Per scale, the times of the points, `-inf` where none yet.
    times: [[f64; SLOTS]; SCALES],
    /// Per scale, the slot of the newest point and its period.
    newest: [usize; SCALES],
    period: [i64; SCALES],
    last_checkpoint: f64,
    window_z: f64,
    new_high_z: f64,
    /// What the watch remembers of evicted sites.
    past: Pasts,
    evictions: u64,
    lost_leaves: u64,
}

impl Default for Watch {
    fn default() -> Self {
        Self::new()
    }
}

impl Watch {
    /// A watch of no site yet, at the thresholds [`WINDOW_Z`] and
    /// [`NEW_HIGH_Z`].
    pub fn new() -> Self {
        Self::with_thresholds(WINDOW_Z, NEW_HIGH_Z)
    }

    /// A watch at other thresholds: for simulations that measure how far
    /// from them a program stays. A `new_high_z` of `-inf` tests the
    /// windows alone, without the new high.
    pub fn with_thresholds(window_z: f64, new_high_z: f64) -> Self {
        Watch {
            sites: Vec::new(),
            index: Vec::new(),
            rest: Series::default(),
            times: [[f64::NEG_INFINITY; SLOTS]; SCALES],
            newest: [0; SCALES],
            period: [i64::MIN; SCALES],
            last_checkpoint: 0.0,
            window_z,
            new_high_z,
            past: Pasts::default(),
            evictions: 0,
            lost_leaves: 0,
        }
    }

    /// A tracked sample of `site` found live by a collection for the first
    /// time: it counts from the next [`checkpoint`](Self::checkpoint) on.
    /// It stands for `weight` bytes of liveness (its weight over its
    /// tracking probability, as [`Estimate::add_weighted`] takes it), and
    /// its object has `size` bytes. A weight that is not a positive number
    /// stands for nothing and is ignored.
    pub fn enter(&mut self, site: u64, weight: f64, size: u64) {
        if !(weight.is_finite() && weight > 0.0) {
            return;
        }
        let one = Sample::of(weight, size);
        let slot = match self.slot(site) {
            Some(slot) => slot,
            None => self.admit(site),
        };
        self.sites[slot].series.enter(&one);
    }

    /// A tracked sample of `site` found freed, as it entered: it counts no
    /// more from the next [`checkpoint`](Self::checkpoint) on. It leaves
    /// its site while that holds a live sample, else the rest (where an
    /// evicted site's samples went); when neither holds one it was never
    /// entered, and is counted in [`lost_leaves`](Self::lost_leaves).
    pub fn leave(&mut self, site: u64, weight: f64, size: u64) {
        if !(weight.is_finite() && weight > 0.0) {
            return;
        }
        let one = Sample::of(weight, size);
        let series = match self.slot(site) {
            Some(slot) if self.sites[slot].series.live.samples > 0 => &mut self.sites[slot].series,
            _ if self.rest.live.samples > 0 => &mut self.rest,
            _ => {
                self.lost_leaves += 1;
                return;
            }
        };
        series.leave(&one);
    }

    /// The slot of a site followed on its own.
    fn slot(&self, site: u64) -> Option<usize> {
        let at = self.index.binary_search_by_key(&site, |&(id, _)| id).ok()?;
        Some(self.index[at].1)
    }

    /// The slot of a site not followed yet: a new one while there is room,
    /// else that of the site of the fewest live bytes (of those, the
    /// lowest high), whose samples and history go to the rest, and whose
    /// high the watch remembers. A site it remembers comes back with its
    /// high and whether it was raised.
    fn admit(&mut self, site: u64) -> usize {
        let mut series = Series::default();
        if let Some(past) = self.past.forget(site) {
            series.recall(&past);
        }
        let fresh = Site { id: site, series };
        let slot = if self.sites.len() < MAX_SITES {
            self.sites.push(fresh);
            self.sites.len() - 1
        } else {
            let rank = |s: &Site| (s.series.point().0.level, s.series.high);
            let slot = (0..self.sites.len())
                .min_by(|&a, &b| {
                    let (a, b) = (rank(&self.sites[a]), rank(&self.sites[b]));
                    a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
                })
                .expect("a full table has sites");
            let evicted = std::mem::replace(&mut self.sites[slot], fresh);
            self.rest.absorb(&evicted.series, &self.times);
            self.past.remember(Past::of(evicted.id, &evicted.series));
            if let Ok(at) = self.index.binary_search_by_key(&evicted.id, |&(id, _)| id) {
                self.index.remove(at);
            }
            self.evictions += 1;
            slot
        };
        if let Err(at) = self.index.binary_search_by_key(&site, |&(id, _)| id) {
            self.index.insert(at, (site, slot));
        }
        slot
    }

    /// A checkpoint at `seconds` from the watch's start: the collection
    /// whose findings were just entered and left. Tests every group that
    /// was not raised yet, and returns those raised now. A time below the
    /// last checkpoint's (or not a number) is taken as the last one's.
    pub fn checkpoint(&mut self, seconds: f64) -> Vec<Suspect> {
        let t = if seconds.is_nan() {
            self.last_checkpoint
        } else {
            seconds.max(self.last_checkpoint)
        };
        self.last_checkpoint = t;
        let all = self
            .sites
            .iter_mut()
            .map(|site| &mut site.series)
            .chain(std::iter::once(&mut self.rest));
        for series in all {
            let (now, swing) = series.point();
            if now.level > series.high {
                series.high = now.level;
                series.high_swing = swing;
            }
        }
        for scale in 0..SCALES {
            let period = (t / (window_length(scale) / 2.0)).floor() as i64;
            if period == self.period[scale] {
                continue;
            }
            self.period[scale] = period;
            let slot = (self.newest[scale] + 1) % SLOTS;
            self.newest[scale] = slot;
            self.times[scale][slot] = t;
            for site in &mut self.sites {
                site.series.history[scale][slot] = site.series.point().0;
            }
            self.rest.history[scale][slot] = self.rest.point().0;
        }
        let thresholds = (self.window_z, self.new_high_z);
        let mut suspects = Vec::new();
        for site in &mut self.sites {
            let group = Group::Site(site.id);
            suspects.extend(judge(&mut site.series, group, t, &self.times, thresholds));
        }
        suspects.extend(judge(
            &mut self.rest,
            Group::Rest,
            t,
            &self.times,
            thresholds,
        ));
        suspects
    }

    /// A group's live bytes now; `None` for a site not followed on its
    /// own.
    pub fn live(&self, group: Group) -> Option<Estimate> {
        let series = match group {
            Group::Site(id) => &self.sites[self.slot(id)?].series,
            Group::Rest => &self.rest,
        };
        Some(series.live.estimate(series.largest_scale))
    }

    /// How fast a group's live bytes grew lately: over the longest window
    /// the watch holds that ends at the last checkpoint, is at least
    /// [`SHORTEST_WINDOW`] and at most `horizon` seconds long, and starts
    /// after the warm-up (as the test's windows do). `None` for a site not
    /// followed on its own, or before there is such a window. A site
    /// followed for less than the window had 0 before (as the test reads
    /// it): its rise is all it holds.
    pub fn trend(&self, group: Group, horizon: f64) -> Option<Trend> {
        let series = match group {
            Group::Site(id) => &self.sites[self.slot(id)?].series,
            Group::Rest => &self.rest,
        };
        let t = self.last_checkpoint;
        let (start, before) = self
            .times
            .iter()
            .zip(&series.history)
            .flat_map(|(starts, points)| starts.iter().zip(points))
            .filter(|&(&start, _)| {
                start >= t / 4.0 && t - start >= SHORTEST_WINDOW && t - start <= horizon
            })
            .min_by(|a, b| a.0.total_cmp(b.0))?;
        let now = series.point().0;
        let seconds = t - start;
        let growth = (now.level - before.level) / seconds;
        let half_width = Z_95 * rise_variance(&now, before).max(0.0).sqrt() / seconds;
        Some(Trend {
            growth: Interval {
                estimate: growth,
                low: growth - half_width,
                high: growth + half_width,
            },
            window_start: *start,
            window_end: t,
        })
    }

    /// Every group and its live bytes now: the sites followed on their own
    /// (in no particular order), then the rest.
    pub fn groups(&self) -> impl Iterator<Item = (Group, Estimate)> + '_ {
        self.sites
            .iter()
            .map(|site| (Group::Site(site.id), &site.series))
            .chain(std::iter::once((Group::Rest, &self.rest)))
            .map(|(group, series)| (group, series.live.estimate(series.largest_scale)))
    }

    /// The sites followed on their own: at most [`MAX_SITES`].
    pub fn sites(&self) -> usize {
        self.sites.len()
    }

    /// How many sites went to the rest to make room for others.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Leaves of samples that neither their site nor the rest held: never
    /// entered (a caller's error), and ignored.
    pub fn lost_leaves(&self) -> u64 {
        self.lost_leaves
    }

    /// The bytes the watch holds: itself, its sites and its index of
    /// them.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.sites.capacity() * std::mem::size_of::<Site>()
            + self.index.capacity() * std::mem::size_of::<(u64, usize)>()
            + self.past.0.capacity() * std::mem::size_of::<Past>()
    }
}

/// The shortest window of `scale`, seconds.
fn window_length(scale: usize) -> f64 {
    SHORTEST_WINDOW * (1u64 << scale) as f64
}

/// The window of the largest significant rise so far.
struct Window {
    z: f64,
    start: f64,
    before: Point,
}

/// Tests `series` at `t` over each window of each scale that starts after
/// the warm-up; a suspect when one is significant and a new high.
fn judge(
    series: &mut Series,
    group: Group,
    t: f64,
    times: &[[f64; SLOTS]; SCALES],
    (window_z, new_high_z): (f64, f64),
) -> Option<Suspect> {
    if series.raised {
        return None;
    }
    let (now, swing) = series.point();
    let warm_up_end = t / 4.0;
    let mut best: Option<Window> = None;
    for (scale, (starts, points)) in times.iter().zip(&series.history).enumerate() {
        for (&start, before) in starts.iter().zip(points) {
            if start < warm_up_end || start > t - window_length(scale) {
                continue;
            }
            // Squares, without a root for the windows that fail (most).
            let above_high = now.level - before.high;
            let new_high = above_high > 0.0
                && above_high * above_high
                    > new_high_z.max(0.0).powi(2) * (swing + before.high_swing);
            if !new_high && new_high_z != f64::NEG_INFINITY {
                continue;
            }
            let rise = now.level - before.level;
            let variance = rise_variance(&now, before);
            if rise <= 0.0 || rise * rise <= window_z * window_z * variance {
                continue;
            }
            let z = rise / variance.sqrt();
            if best.as_ref().is_none_or(|b| z > b.z) {
                best = Some(Window {
                    z,
                    start,
                    before: *before,
                });
            }
        }
    }
    let window = best?;
    series.raised = true;
    let seconds = t - window.start;
    let growth = (now.level - window.before.level) / seconds;
    let half_width = Z_95 * rise_variance(&now, &window.before).sqrt() / seconds;
    Some(Suspect {
        group,
        raised_at: t,
        growth: Interval {
            estimate: growth,
            low: growth - half_width,
            high: growth + half_width,
        },
        live: series.live.estimate(series.largest_scale).bytes_interval(),
        window_start: window.start,
    })
}

/// The variance of the rise from `before` to `now` from sampling: the
/// terms of the samples that entered or left in between, or those of the
/// samples live at either end, whichever is smaller (module doc).
fn rise_variance(now: &Point, before: &Point) -> f64 {
    (now.change_variance - before.change_variance).min(now.live_variance + before.live_variance)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample of an object of 64 times the 512 KiB interval: certainly
    /// sampled, its weight its size, no sampling variance.
    const HUGE: u64 = 64 << 19;

    /// At every checkpoint, each scale whose windows fit in the time so far
    /// has a window start between one and two of its shortest windows
    /// back (and a checkpoint's spacing more), and none is shorter.
    #[test]
    fn each_scale_has_a_window_of_one_to_two_lengths() {
        let mut watch = Watch::new();
        let spacing = 0.7;
        let mut t = 0.0;
        while t < 4.0 * window_length(SCALES - 1) {
            t += spacing;
            watch.checkpoint(t);
            for scale in 0..SCALES {
                let length = window_length(scale);
                let ages: Vec<f64> = watch.times[scale]
                    .iter()
                    .map(|start| t - start)
                    .filter(|&age| age >= length)
                    .collect();
                assert!(
                    ages.iter()
                        .all(|&age| age < 2.0 * length + spacing || age.is_infinite())
                );
                if t >= 2.0 * length + spacing {
                    assert!(!ages.is_empty(), "scale {scale} at {t}");
                }
            }
        }
    }

    /// Objects certainly sampled, one every 10 s from 10 s: no sampling
    /// error, so any rise is significant, but a new high must be three
    /// swings above the high before the window (one object's size each,
    /// summed in squares): with `n` objects at `t` and the window starting
    /// at `t/4` at the earliest, `0.75 n > 3 √(1.25 n)`, so `n > 20`,
    /// and at 210 s at the earliest (the windows start at the points
    /// kept, a little later). Raised once, with the rise over its window
    /// as its growth and an interval of no width.
    #[test]
    fn an_exact_leak_is_raised_once_at_its_growth_over_the_window() {
        let mut watch = Watch::new();
        let mut raised = Vec::new();
        for second in 1..=600u32 {
            if second % 10 == 0 {
                watch.enter(5, HUGE as f64, HUGE);
            }
            raised.extend(watch.checkpoint(f64::from(second)));
        }
        assert_eq!(raised.len(), 1, "{raised:?}");
        let suspect = &raised[0];
        assert_eq!(suspect.group, Group::Site(5));
        assert!((210.0..=260.0).contains(&suspect.raised_at), "{suspect:?}");
        let objects = |t: f64| (t / 10.0).floor();
        let (start, end) = (suspect.window_start, suspect.raised_at);
        let rise = objects(end) - objects(start);
        assert!(
            rise > 3.0 * (objects(end) + objects(start)).sqrt(),
            "{suspect:?}"
        );
        let growth = suspect.growth;
        assert_eq!(growth.estimate, rise * HUGE as f64 / (end - start));
        assert_eq!(
            (growth.low, growth.high),
            (growth.estimate, growth.estimate)
        );
        assert_eq!(suspect.live.estimate, objects(end) * HUGE as f64);
    }

    /// A level that only repeats its old high (a batch built and freed)
    /// rises significantly over its window but is no new high.
    #[test]
    fn a_repeated_high_is_no_suspect() {
        let mut watch = Watch::new();
        for second in 1..=3000u32 {
            // Twenty objects built over 20 s of every 300, freed at 40 s.
            let phase = second % 300;
            if (1..=20).contains(&phase) {
                watch.enter(3, HUGE as f64, HUGE);
            } else if phase == 40 {
                for _ in 0..20 {
                    watch.leave(3, HUGE as f64, HUGE);
                }
            }
            assert_eq!(watch.checkpoint(f64::from(second)), [], "at {second}");
        }
    }

    /// The site of fewest live bytes makes room: its samples and history
    /// go to the rest, which then takes its leaves; a leave that neither
    /// its site nor the rest holds is lost.
    #[test]
    fn an_evicted_site_goes_to_the_rest_with_its_history() {
        let mut watch = Watch::new();
        for site in 0..MAX_SITES as u64 {
            for _ in 0..3 {
                watch.enter(site, HUGE as f64, HUGE);
            }
        }
        // Site 7 falls to one sample: the fewest.
        watch.leave(7, HUGE as f64, HUGE);
        watch.leave(7, HUGE as f64, HUGE);
        for second in 1..=100 {
            watch.checkpoint(f64::from(second));
        }
        let evicted = watch.sites[7].series.clone();
        watch.enter(1000, HUGE as f64, HUGE);
        assert_eq!(watch.evictions(), 1);
        assert_eq!(watch.live(Group::Site(7)), None);
        assert_eq!(watch.live(Group::Site(1000)).unwrap().samples(), 1);
        assert_eq!(watch.rest.history, evicted.history);
        assert_eq!(watch.live(Group::Rest).unwrap().bytes(), HUGE as f64);
        // Its leave goes to the rest; the next one has nowhere to go.
        watch.leave(7, HUGE as f64, HUGE);
        assert_eq!(watch.live(Group::Rest).unwrap().samples(), 0);
        assert_eq!(watch.lost_leaves(), 0);
        watch.leave(7, HUGE as f64, HUGE);
        assert_eq!(watch.lost_leaves(), 1);
        // The newcomer's history is that of a site with nothing before.
        let newcomer = &watch.sites[7].series;
        assert!(
            newcomer
                .history
                .iter()
                .flatten()
                .all(|p| *p == Point::default())
        );
    }

    /// A trend is the rise over the longest window held within the
    /// horizon, after the warm-up: none before there is one, a steady
    /// site's 0, a growing site's its rate (exactly: its samples' weights
    /// are all there is to its level).
    #[test]
    fn a_trend_is_the_rise_over_the_longest_window_within_the_horizon() {
        let mut watch = Watch::new();
        for _ in 0..100 {
            watch.enter(8, 524_800.0, 1024);
        }
        for second in 1..=1200u32 {
            watch.enter(7, 524_800.0, 1024);
            watch.checkpoint(f64::from(second));
            if second == 35 {
                // Windows start after the first quarter: none of 30 s yet.
                assert_eq!(watch.trend(Group::Site(7), 600.0), None);
            }
        }
        let growing = watch.trend(Group::Site(7), 600.0).unwrap();
        let window = 1200.0 - growing.window_start;
        // Scale 3's points are 120 s apart, and its oldest 360 to 480 s back.
        assert!((360.0..=600.0).contains(&window), "{window}");
        let rate = growing.growth;
        assert!((rate.estimate - 524_800.0).abs() < 1e-6, "{rate:?}");
        assert!(
            rate.low < rate.estimate && rate.estimate < rate.high,
            "{rate:?}"
        );
        let steady = watch.trend(Group::Site(8), 600.0).unwrap();
        assert_eq!(steady.window_start, growing.window_start);
        assert_eq!(steady.growth.estimate, 0.0);
        // A longer horizon, a longer window, up to the warm-up's end.
        let longer = watch.trend(Group::Site(7), 3600.0).unwrap();
        assert!(longer.window_start < growing.window_start);
        assert!(longer.window_start >= 300.0, "{longer:?}");
        assert_eq!(watch.trend(Group::Site(9), 600.0), None);
        assert!(watch.trend(Group::Rest, 600.0).is_some());
    }

    /// A batch site, empty between batches, evicted then for newcomers
    /// (every other site holds a sample), comes back with the high it
    /// had: its next batch repeats it, and is no suspect (without it, a
    /// site from 0 that builds 20 objects would be).
    #[test]
    fn an_evicted_site_comes_back_with_its_high() {
        let mut watch = Watch::new();
        let mut newcomer = 1000;
        for second in 1..=3000u32 {
            let phase = second % 300;
            if (1..=20).contains(&phase) {
                watch.enter(3, HUGE as f64, HUGE);
            } else if phase == 40 {
                for _ in 0..20 {
                    watch.leave(3, HUGE as f64, HUGE);
                }
            } else {
                watch.enter(newcomer, 524_800.0, 64);
                newcomer += 1;
            }
            assert_eq!(watch.checkpoint(f64::from(second)), [], "at {second}");
        }
        assert!(watch.evictions() > 2000);
        assert_eq!(watch.lost_leaves(), 0);
        // Evicted between batches, each time.
        assert_eq!(watch.live(Group::Site(3)), None);
        assert_eq!(watch.past.0.iter().filter(|p| p.id == 3).count(), 1);
    }

    /// Sites of a sample each, each evicted by the next (every other site
    /// holds two): first for 10 minutes churning, each sample leaving 5 s
    /// after it came (the rest absorbs a high of a sample a second, its
    /// level steady), then leaking, each sample kept. The rest holds the
    /// leak and is raised within a minute of its start; no site is.
    /// (Summing the highs it absorbs, the rest's high would be 600 samples
    /// above its level when the leak starts.)
    #[test]
    fn a_leak_spread_over_evicted_sites_is_raised_as_the_rest() {
        let mut watch = Watch::new();
        for site in 0..MAX_SITES as u64 - 1 {
            watch.enter(site, 524_800.0, 64);
            watch.enter(site, 524_800.0, 64);
        }
        let mut raised = Vec::new();
        for second in 1..=900u64 {
            if second > 5 && second <= 605 {
                watch.leave(10_000 + second - 5, 524_800.0, 64);
            }
            watch.enter(10_000 + second, 524_800.0, 64);
            raised.extend(watch.checkpoint(second as f64));
        }
        assert_eq!(watch.lost_leaves(), 0);
        assert_eq!(raised.len(), 1, "{raised:?}");
        assert_eq!(raised[0].group, Group::Rest);
        assert!(raised[0].raised_at <= 660.0, "{raised:?}");
    }

    /// Weights that stand for nothing are ignored; time never goes back.
    #[test]
    fn bad_input_is_ignored() {
        let mut watch = Watch::new();
        for weight in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            watch.enter(1, weight, 24);
            watch.leave(1, weight, 24);
        }
        assert_eq!((watch.sites(), watch.lost_leaves()), (0, 0));
        watch.checkpoint(100.0);
        watch.checkpoint(50.0);
        watch.checkpoint(f64::NAN);
        assert_eq!(watch.last_checkpoint, 100.0);
        assert_eq!(watch.times[0].iter().filter(|t| t.is_finite()).count(), 1);
    }

    /// The module doc's bytes per site, and per evicted site remembered.
    #[test]
    fn a_site_holds_its_documented_bytes() {
        assert_eq!(std::mem::size_of::<Point>(), 40);
        assert_eq!(std::mem::size_of::<Site>(), 2208);
        assert_eq!(std::mem::size_of::<Past>(), 32);
    }
}
