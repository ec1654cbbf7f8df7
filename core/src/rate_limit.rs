//! Bounding the number of samples per second by adapting the sampling interval.
//!
//! At interval `T` a program that allocates `A` bytes per second yields about
//! `A / T` samples per second, so a long recording of a busy program can grow
//! without bound. [`RateLimiter`] watches the samples taken over short windows
//! (200 ms, as JFR's event throttle does), estimates the allocation rate from
//! them, and raises the interval to `A / R` when that exceeds the configured
//! interval, so that about `R` samples per second are taken. It never drops a
//! sample: every sample still carries the weight of the interval in force when
//! it was taken, so the estimates stay unbiased.
//!
//! A window also closes early once it has taken its whole budget (R x 200 ms
//! samples), so a burst overshoots by at most about one window's budget. When
//! half the budget or more came since the last observation, the burst's rate
//! is taken from those samples alone, not from the whole window, whose start
//! may have been quiet. The estimate rises at once when a window shows more
//! allocation and decays gradually when it shows less (one quiet window does
//! not open the gates).

use std::time::Duration;

/// The window JFR's throttle uses, and ours.
pub const WINDOW: Duration = Duration::from_millis(200);

/// How far the allocation-rate estimate moves toward a lower window's rate
/// each window: about five windows (one second) to settle after a burst.
const DECAY: f64 = 0.2;

/// Adapts a sampling interval so that at most about `max_samples_per_second`
/// samples are taken. Time is passed in (nanoseconds on any monotonic clock),
/// so it is deterministic to test.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    max_samples_per_second: f64,
    base_interval: u64,
    max_interval: u64,
    interval: u64,
    window_start_ns: Option<u64>,
    /// When `observe` was last called.
    last_observe_ns: Option<u64>,
    window_samples: u64,
    bytes_per_second: f64,
}

impl RateLimiter {
    /// A limiter for `max_samples_per_second` that never sets the interval below
    /// `base_interval` (the configured one) nor above `max_interval` (the
    /// largest the sampler accepts; JVMTI takes a `jint`).
    ///
    /// # Panics
    /// If `max_samples_per_second` is not a positive finite number, or
    /// `max_interval < base_interval`: both are programming errors, caught by
    /// the option parser before they reach here.
    pub fn new(max_samples_per_second: f64, base_interval: u64, max_interval: u64) -> Self {
        assert!(
            max_samples_per_second.is_finite() && max_samples_per_second > 0.0,
            "rate must be positive, got {max_samples_per_second}"
        );
        assert!(
            max_interval >= base_interval,
            "max_interval < base_interval"
        );
        Self {
            max_samples_per_second,
            base_interval,
            max_interval,
            interval: base_interval,
            window_start_ns: None,
            last_observe_ns: None,
            window_samples: 0,
            bytes_per_second: 0.0,
        }
    }

    /// The interval to sample at now, in bytes.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// The current estimate of the allocation rate, in bytes per second.
    pub fn estimated_bytes_per_second(&self) -> f64 {
        self.bytes_per_second
    }

    /// How many more samples the current window may take before it closes
    /// early (at least 1). A caller that sees samples late, in batches, can
    /// ask to be told as soon as this many more have been taken, so that a
    /// burst is still cut short at once.
    pub fn samples_left_in_window(&self) -> u64 {
        (self.window_budget() - self.window_samples as f64)
            .ceil()
            .max(1.0) as u64
    }

    /// A window's budget of samples.
    fn window_budget(&self) -> f64 {
        (self.max_samples_per_second * WINDOW.as_secs_f64()).max(1.0)
    }

    /// Reports `samples` taken since the last call, at time `now_ns`. When a
    /// window has closed and the interval changes, returns the new interval,
    /// which the caller applies to its sampler.
    pub fn observe(&mut self, samples: u64, now_ns: u64) -> Option<u64> {
        let start = *self.window_start_ns.get_or_insert(now_ns);
        let step_ns = now_ns.saturating_sub(self.last_observe_ns.unwrap_or(now_ns));
        self.last_observe_ns = Some(now_ns);
        self.window_samples += samples;
        let elapsed_ns = now_ns.saturating_sub(start);
        // A window closes when its time is up, or early once it has used its
        // whole budget: a sudden burst is cut short at once, not after 200 ms.
        let budget = self.window_budget();
        let early = elapsed_ns < WINDOW.as_nanos() as u64;
        if early && (self.window_samples as f64) < budget {
            return None;
        }
        // Every sample in this window was taken at the current interval, so
        // samples x interval estimates the bytes allocated in it. Rates
        // from under 1 ms are noise.
        let rate = |samples: u64, ns: u64| {
            samples as f64 * self.interval as f64 * 1e9 / ns.max(1_000_000) as f64
        };
        let mut window_rate = rate(self.window_samples, elapsed_ns);
        if early && samples as f64 >= budget / 2.0 {
            // A burst spent half the budget or more since the last call.
            // Averaged over the whole window, its rate would count the quiet
            // time before it began, and the interval would take several
            // windows to catch up: the samples since the last call measure
            // the burst itself. (Fewer samples would measure mostly noise:
            // near the limit every window closes about full, a few samples
            // at a time.)
            window_rate = window_rate.max(rate(samples, step_ns));
        }
        self.bytes_per_second = if window_rate >= self.bytes_per_second {
            window_rate
        } else {
            self.bytes_per_second + DECAY * (window_rate - self.bytes_per_second)
        };
        self.window_start_ns = Some(now_ns);
        self.window_samples = 0;

        let wanted = (self.bytes_per_second / self.max_samples_per_second).ceil();
        // `as` saturates, then the clamp keeps the interval in its bounds.
        let interval = (wanted as u64).clamp(self.base_interval, self.max_interval);
        (interval != self.interval).then(|| {
            self.interval = interval;
            interval
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn no_change_within_a_window_under_budget() {
        // 100 samples/s: a 200 ms window's budget is 20 samples.
        let mut limiter = RateLimiter::new(100.0, 1024, 1 << 30);
        assert_eq!(limiter.observe(10, 0), None);
        assert_eq!(limiter.observe(9, 100 * MS), None);
        assert_eq!(limiter.interval(), 1024);
    }

    #[test]
    fn samples_left_count_down_the_window_budget() {
        // 100 samples/s: a 200 ms window's budget is 20 samples.
        let mut limiter = RateLimiter::new(100.0, 1024, 1 << 30);
        assert_eq!(limiter.samples_left_in_window(), 20);
        limiter.observe(15, 0);
        assert_eq!(limiter.samples_left_in_window(), 5);
        // The budget spent: the window closes, a new one begins.
        limiter.observe(5, 10 * MS);
        assert_eq!(limiter.samples_left_in_window(), 20);
        limiter.observe(30, 20 * MS);
        assert_eq!(limiter.samples_left_in_window(), 20, "closed again");
    }

    #[test]
    fn a_burst_closes_the_window_early() {
        // 1000 samples in the first 10 ms at 1 KiB: 102.4 MB/s; for 100
        // samples/s the interval must become 1,024,000 bytes at once.
        let mut limiter = RateLimiter::new(100.0, 1024, 1 << 30);
        limiter.observe(0, 0);
        assert_eq!(limiter.observe(1000, 10 * MS), Some(1_024_000));
    }

    #[test]
    fn a_burst_after_a_quiet_start_is_measured_by_its_own_samples() {
        // 100 samples/s. Quiet for 150 ms, then 1000 samples at 1 KiB in
        // 10 ms: 102.4 MB/s, so the interval must become 1,024,000 bytes at
        // once. Averaged over the window's 160 ms it would be 64,000.
        let mut limiter = RateLimiter::new(100.0, 1024, 1 << 30);
        limiter.observe(0, 0);
        assert_eq!(limiter.observe(0, 150 * MS), None);
        assert_eq!(limiter.observe(1000, 160 * MS), Some(1_024_000));
    }

    #[test]
    fn raises_interval_to_rate_over_limit() {
        // 2000 samples in 200 ms at 1 KiB: 10,240,000 bytes/s. For 100
        // samples/s the interval must become 102,400 bytes.
        let mut limiter = RateLimiter::new(100.0, 1024, 1 << 30);
        limiter.observe(0, 0);
        let new = limiter.observe(2000, 200 * MS);
        assert_eq!(new, Some(102_400));
        assert!((limiter.estimated_bytes_per_second() - 10_240_000.0).abs() < 1.0);
    }

    #[test]
    fn never_below_base_nor_above_max() {
        let mut limiter = RateLimiter::new(1000.0, 4096, 1 << 20);
        limiter.observe(0, 0);
        assert_eq!(
            limiter.observe(1, 200 * MS),
            None,
            "slow program: base stays"
        );
        assert_eq!(limiter.interval(), 4096);
        assert_eq!(limiter.observe(u64::MAX / 8192, 400 * MS), Some(1 << 20));
    }

    #[test]
    fn decays_back_to_base_when_allocation_stops() {
        let mut limiter = RateLimiter::new(10.0, 1000, u64::MAX);
        limiter.observe(0, 0);
        limiter.observe(1000, 200 * MS);
        assert!(limiter.interval() > 1000);
        let mut now = 200 * MS;
        for _ in 0..200 {
            now += 200 * MS;
            limiter.observe(0, now);
        }
        assert_eq!(limiter.interval(), 1000);
    }
}
