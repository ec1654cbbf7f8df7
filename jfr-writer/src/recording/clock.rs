//! The recording's time base: ticks (nanoseconds) since a monotonic
//! origin, and their wall-clock time.
//!
//! Invariant: every timestamp of a recording comes from its one [`Clock`],
//! so events, chunks and the metadata agree on what a tick is.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Ticks per second of every recording: ticks are nanoseconds.
pub const TICKS_PER_SECOND: i64 = 1_000_000_000;

/// A point on a recording's clock, in ticks (nanoseconds since the clock's
/// origin). Event start times and durations are in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticks(pub i64);

/// A recording's clock: monotonic ticks, anchored to the wall clock once so
/// that every chunk of a file shares one continuous time base.
///
/// It is `Copy` and `Send`: take timestamps on any thread (an allocation
/// callback, say) without touching the recording.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
    origin_epoch_nanos: i64,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let origin = Instant::now();
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        Self {
            origin,
            origin_epoch_nanos: since_epoch.as_nanos() as i64,
        }
    }

    /// The current time.
    #[inline]
    pub fn now(&self) -> Ticks {
        self.ticks_at(Instant::now())
    }

    /// The time of `instant` (before the origin: negative).
    pub fn ticks_at(&self, instant: Instant) -> Ticks {
        match instant.checked_duration_since(self.origin) {
            Some(after) => Ticks(after.as_nanos() as i64),
            None => Ticks(-(self.origin.duration_since(instant).as_nanos() as i64)),
        }
    }

    /// The wall-clock time of `ticks`, in nanoseconds since the Unix epoch:
    /// what readers show for it.
    pub fn epoch_nanos(&self, ticks: Ticks) -> i64 {
        self.origin_epoch_nanos + ticks.0
    }

    /// The ticks of a wall-clock time in nanoseconds since the Unix epoch:
    /// the inverse of [`Clock::epoch_nanos`], for times another clock gave
    /// (the JVM's, say). Before the origin: negative.
    ///
    /// ```
    /// let clock = jfr_writer::Clock::new();
    /// let now = clock.now();
    /// assert_eq!(clock.ticks_at_epoch_nanos(clock.epoch_nanos(now)), now);
    /// let earlier = clock.epoch_nanos(jfr_writer::Ticks(0)) - 5_000;
    /// assert_eq!(clock.ticks_at_epoch_nanos(earlier).0, -5_000);
    /// ```
    pub fn ticks_at_epoch_nanos(&self, epoch_nanos: i64) -> Ticks {
        Ticks(epoch_nanos.saturating_sub(self.origin_epoch_nanos))
    }
}
