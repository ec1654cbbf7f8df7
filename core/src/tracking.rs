//! Which samples' liveness is tracked: a known share of them, aimed at a
//! number a second ([`TrackingShare`]), and a cap on those a collector
//! keeps alive for them ([`TrackedSinceMajor`]).
//!
//! A tracked sample holds a weak handle to its object. Generational ZGC's
//! young collections keep what a weak handle points to, and all it
//! reaches, until the next major collection, so there tracking costs the
//! program in proportion to the samples tracked *per second* (each pins
//! what it reaches for as long as majors take to come), not to the share
//! tracked. So the share `q` is set for a number of tracked samples a
//! second, `R`.
//!
//! **The share.** Within a window `q` is fixed, and each sample tracking
//! covers (an *eligible* one) is tracked on a draw of its own with
//! probability `q`; of `n` eligible samples, Binomial(n, q) are tracked,
//! `n q` on average. At `E` eligible samples a second that is `E q` a
//! second, so `q = min(1, R / E)` tracks `R` a second, or every sample when
//! fewer than `R` come. `q` is set from samples already seen, before the
//! samples it applies to, and each sample carries the `q` it was drawn
//! with: weighing a tracked sample by `1 / q` keeps any estimate of live
//! bytes unbiased whatever `q` the controller chose (each sample's
//! inclusion probability is known when it is drawn).
//!
//! **The rate `E`** is estimated per window ([`WINDOW`], 1 s) from the
//! eligible samples counted, before any draw: `q` does not change what it
//! is set from, so the loop cannot oscillate; only the counts' noise moves
//! `q`. That noise is smoothed: the estimate moves a quarter of the way to
//! each window's rate ([`SMOOTHING`]; a steady rate's estimate then varies
//! by `sqrt(1/7)` of one window's noise, and so does `q`). A rise beyond
//! noise (a window's count more than three standard deviations above what
//! the estimate expects, [`RISE`]) replaces the estimate at once: tracking
//! too many is what costs the program, so a burst lowers `q` at once, while
//! a fall raises it over a few windows.
//!
//! **Bursts.** A window also closes early once the samples it tracks are
//! expected to reach its budget, twice its aim (`B = 2 R` at 1 s), its rate
//! then taken from the burst's own samples when they are most of them.
//! (Closing at the aim itself would close the windows of a steady rate at a
//! count rather than a time, which biases the measured rate upwards, by
//! `n / (n - 1)` for `n` samples.) The writer sees samples late, in batches
//! and after a wake, and a burst goes on meanwhile: so the samples that
//! come after the budget is spent, before the writer has set the next `q`,
//! are drawn with a probability that falls with each of them,
//! [`probability_past_budget`]: the `n`-th gets `q / (1 + q n / B)^2`,
//! which sums to at most `B` over any number of them. A window tracks at
//! most about `2 B` samples, however late the writer, and each sample still
//! carries the probability it was drawn with.
//!
//! **The first window** tracks every sample, `q = 1`: no rate is known, and
//! 1 is exactly right for a program that samples fewer than `R` a second (a
//! service allocating under 8 MB/s at the default 512 KiB interval). A
//! busier program's first window ends after `B` samples (32 by default),
//! about `B` more drawn before the writer sees them, and `q` is set from
//! the rate they came at.
//!
//! **The cap.** However `q` is set, at most [`MAX_TRACKED_SINCE_MAJOR`]
//! samples allocated since the last major collection began are tracked:
//! past it, samples get `q = 0` (their liveness unknown, and counted) until
//! the next major ends. It bounds what tracking pins when majors stop
//! coming (they stretch to many seconds while the program pins more). The
//! cap is decided before the draw, so the samples it leaves to the draw
//! are still drawn with a known `q`.

use std::collections::VecDeque;
use std::time::Duration;

/// How long a window of [`TrackingShare`] lasts at most.
pub const WINDOW: Duration = Duration::from_secs(1);

/// How far the estimate of eligible samples a second moves toward each
/// window's rate.
pub const SMOOTHING: f64 = 0.25;

/// How many standard deviations (of a Poisson count) above what the
/// estimate expects a window's count must be for the estimate to jump to
/// its rate at once.
pub const RISE: f64 = 3.0;

/// The tracked samples a second `live_rate=auto` aims at on generational
/// ZGC. Measured there (BENCHMARKS.md, "Liveness under generational
/// ZGC"): 5 tracked a second cost a program that drops chains of 20,000
/// nodes nothing measurable, 48 cost it 11%, 438 (every sample) ten times
/// its time.
pub const AUTO_TRACKED_PER_SECOND: f64 = 16.0;

/// The most samples allocated since the last major collection began that
/// are tracked at once on generational ZGC.
pub const MAX_TRACKED_SINCE_MAJOR: u64 = 256;

/// Sets the share `q` of eligible samples tracked so that about
/// `tracked_per_second` are (see the module's doc). Time is passed in
/// (nanoseconds on any monotonic clock), so it is deterministic to test.
#[derive(Debug, Clone)]
pub struct TrackingShare {
    tracked_per_second: f64,
    probability: f64,
    window_start_ns: Option<u64>,
    /// When `observe` was last called.
    last_observe_ns: Option<u64>,
    /// Eligible samples in the current window.
    window_eligible: u64,
    /// The estimate of eligible samples a second; `None` before the first
    /// window closed.
    eligible_per_second: Option<f64>,
}

impl TrackingShare {
    /// A controller aiming at `tracked_per_second`, its first window at
    /// `q = 1`.
    ///
    /// # Panics
    /// If `tracked_per_second` is not a positive finite number: a
    /// programming error, caught by the option parser before it reaches
    /// here.
    pub fn new(tracked_per_second: f64) -> Self {
        assert!(
            tracked_per_second.is_finite() && tracked_per_second > 0.0,
            "tracked samples a second must be positive, got {tracked_per_second}"
        );
        Self {
            tracked_per_second,
            probability: 1.0,
            window_start_ns: None,
            last_observe_ns: None,
            window_eligible: 0,
            eligible_per_second: None,
        }
    }

    /// The probability with which an eligible sample is tracked now.
    pub fn probability(&self) -> f64 {
        self.probability
    }

    /// The estimate of eligible samples a second; 0 before the first
    /// window closed.
    pub fn estimated_eligible_per_second(&self) -> f64 {
        self.eligible_per_second.unwrap_or(0.0)
    }

    /// The samples a window is expected to track before it closes early,
    /// `B`: twice its aim.
    pub fn burst_budget(&self) -> f64 {
        2.0 * self.tracked_per_second * WINDOW.as_secs_f64()
    }

    /// How many more eligible samples the current window may see before
    /// it closes early (at least 1). A caller that sees samples late, in
    /// batches, can ask to be told once this many more have come, so that
    /// a burst is cut short at once.
    pub fn samples_left_in_window(&self) -> u64 {
        let left = self.burst_budget() / self.probability - self.window_eligible as f64;
        left.ceil().clamp(1.0, u64::MAX as f64) as u64
    }

    /// Reports `eligible` samples seen since the last call, at time
    /// `now_ns`. When a window closes and `q` changes, returns the new `q`,
    /// which applies to the samples from now on.
    pub fn observe(&mut self, eligible: u64, now_ns: u64) -> Option<f64> {
        let start = *self.window_start_ns.get_or_insert(now_ns);
        let step_ns = now_ns.saturating_sub(self.last_observe_ns.unwrap_or(now_ns));
        self.last_observe_ns = Some(now_ns);
        self.window_eligible = self.window_eligible.saturating_add(eligible);
        let elapsed_ns = now_ns.saturating_sub(start);
        let budget = self.burst_budget();
        let early = elapsed_ns < WINDOW.as_nanos() as u64;
        if early && (self.window_eligible as f64 * self.probability) < budget {
            return None;
        }
        // Rates from under 1 ms are noise.
        let seconds = |ns: u64| ns.max(1_000_000) as f64 / 1e9;
        let count = self.window_eligible as f64;
        let window_rate = count / seconds(elapsed_ns);
        let mut estimate = match self.eligible_per_second {
            None => window_rate,
            Some(estimate) => {
                let expected = estimate * seconds(elapsed_ns);
                if count > expected + RISE * expected.sqrt() + RISE {
                    window_rate
                } else {
                    estimate + SMOOTHING * (window_rate - estimate)
                }
            }
        };
        if early && eligible as f64 * self.probability >= budget / 2.0 {
            // A burst brought half the budget or more since the last
            // call: averaged over the whole window, its rate would count
            // the quieter time before it, and q would take another window
            // to follow. The samples since the last call measure the
            // burst itself.
            estimate = estimate.max(eligible as f64 / seconds(step_ns));
        }
        self.eligible_per_second = Some(estimate);
        self.window_start_ns = Some(now_ns);
        self.window_eligible = 0;
        let estimate = self.estimated_eligible_per_second();
        let probability = if estimate <= self.tracked_per_second {
            1.0
        } else {
            self.tracked_per_second / estimate
        };
        (probability != self.probability).then(|| {
            self.probability = probability;
            probability
        })
    }
}

/// The probability with which to draw a sample that comes `past` samples
/// after the point where its window's budget `budget` (`B`) was spent at
/// probability `probability` (`q`), the writer not having set the next
/// one yet (`past` 0: not past it): `q / (1 + q past / B)^2`. However many
/// come, at most `B` of them are drawn on average (the sum is below the
/// integral from 0 to infinity of `q / (1 + q n / B)^2 dn`, which is `B`).
#[inline]
pub fn probability_past_budget(probability: f64, past: u64, budget: f64) -> f64 {
    if past == 0 {
        return probability;
    }
    let stretch = 1.0 + probability * past as f64 / budget;
    probability / (stretch * stretch)
}

/// The samples tracked since the last major collection began, for the cap
/// ([`MAX_TRACKED_SINCE_MAJOR`]): the writer notes the running count of
/// samples tracked as it goes, and learns of each major collection only
/// once it has ended, with its start. The count at a major's start is that
/// of the last note at or before it: at most the true count then, so the
/// samples counted since are never fewer than the true ones.
#[derive(Debug, Clone)]
pub struct TrackedSinceMajor {
    /// (time, samples tracked so far), oldest first, each count higher
    /// than the one before: the notes since the last major's start (and
    /// the one before it). The counts since then are at most the cap
    /// above the baseline, so this stays short.
    notes: VecDeque<(i64, u64)>,
    /// The samples tracked when the last major began.
    baseline: u64,
}

impl Default for TrackedSinceMajor {
    fn default() -> Self {
        Self::new()
    }
}

impl TrackedSinceMajor {
    /// Nothing tracked yet; the session's start counts as a major's.
    pub fn new() -> Self {
        Self {
            notes: VecDeque::from([(i64::MIN, 0)]),
            baseline: 0,
        }
    }

    /// `tracked` samples were tracked so far at time `at`.
    pub fn note(&mut self, at: i64, tracked: u64) {
        if self.notes.back().is_none_or(|&(_, last)| tracked > last) {
            self.notes.push_back((at, tracked));
        }
    }

    /// A major collection that began at `started` has ended: returns the
    /// samples tracked when it began, the new baseline (never lower than
    /// the last one).
    pub fn major_ended(&mut self, started: i64) -> u64 {
        // The last note at or before the start; the oldest kept if the
        // major began before all of them.
        let at = self
            .notes
            .iter()
            .rposition(|&(when, _)| when <= started)
            .unwrap_or(0);
        self.notes.drain(..at);
        self.baseline = self.baseline.max(self.notes.front().map_or(0, |&(_, n)| n));
        self.baseline
    }

    /// The samples tracked when the last major collection began.
    pub fn baseline(&self) -> u64 {
        self.baseline
    }

    /// The running count of samples tracked past which the cap holds:
    /// [`MAX_TRACKED_SINCE_MAJOR`] above the baseline.
    pub fn limit(&self) -> u64 {
        self.baseline.saturating_add(MAX_TRACKED_SINCE_MAJOR)
    }
}
