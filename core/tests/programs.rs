//! Simulated programs sampled by the core's model of HotSpot's sampler,
//! shared by the growth test's runs (`growth`) and the watch's (`watch`).
//!
//! A simulated program is a set of allocation streams (object size, bytes
//! per second, when it allocates, how long its objects live). Only the
//! sampled objects are drawn: the distance to the next sample point
//! (`SampleDistance`, the sampler's model) names the next sampled object of
//! a stream directly, as `AllocationSampler` would find it object by object
//! (checked in `growth`), so an hour of 10 MB/s costs its 70,000 samples,
//! not its objects. Each stream is sampled as its own thread. An object's
//! lifetime is drawn only when it is sampled: lifetimes are independent of
//! sampling.
//!
//! Where the liveness of only a share of the samples is tracked (the
//! agent's on generational ZGC), each tracked sample stands for the samples
//! not drawn, its weight over its tracking probability `q`: for the
//! estimator, a sample of inclusion probability `p q` ([`Tracking`],
//! [`Controller`]).

use heapsampler_core::sampling::SampleDistance;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub(crate) const KIB: f64 = 1024.0;
pub(crate) const MIB: f64 = 1024.0 * KIB;
pub(crate) const INTERVAL: u64 = 512 * 1024;
pub(crate) const HOUR: f64 = 3600.0;

/// How long a stream's objects live, in seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lifetime {
    /// Exponential, of this mean.
    Exponential(f64),
    /// Never freed: a leak, or what a program keeps to its end.
    Forever,
    /// A cache entry: nothing is evicted before `plateau`; from then on each
    /// entry lives an exponential time of mean `turnover` (random eviction
    /// at the rate of insertion keeps the cache's size).
    Cache { plateau: f64, turnover: f64 },
    /// Freed `freed_after` seconds after the start of the batch (a
    /// `period` of the stream's duty cycle) it was allocated in.
    Batch { period: f64, freed_after: f64 },
    /// Exactly this long: the live bytes at any time are known exactly.
    Fixed(f64),
}

impl Lifetime {
    /// The same lifetime, `speed` times shorter.
    pub(crate) fn faster(self, speed: f64) -> Self {
        match self {
            Lifetime::Exponential(mean) => Lifetime::Exponential(mean / speed),
            Lifetime::Fixed(length) => Lifetime::Fixed(length / speed),
            Lifetime::Forever => Lifetime::Forever,
            Lifetime::Cache { plateau, turnover } => Lifetime::Cache {
                plateau: plateau / speed,
                turnover: turnover / speed,
            },
            Lifetime::Batch {
                period,
                freed_after,
            } => Lifetime::Batch {
                period: period / speed,
                freed_after: freed_after / speed,
            },
        }
    }

    pub(crate) fn death(self, allocated: f64, rng: &mut SmallRng) -> f64 {
        let exponential = |mean: f64, rng: &mut SmallRng| -mean * (1.0 - rng.random::<f64>()).ln();
        match self {
            Lifetime::Exponential(mean) => allocated + exponential(mean, rng),
            Lifetime::Fixed(length) => allocated + length,
            Lifetime::Forever => f64::INFINITY,
            Lifetime::Cache { plateau, turnover } => {
                allocated.max(plateau) + exponential(turnover, rng)
            }
            Lifetime::Batch {
                period,
                freed_after,
            } => (allocated / period).floor() * period + freed_after,
        }
    }
}

/// Objects of one size allocated at a steady rate from `from` to `to`
/// seconds, during the first `active` seconds of each `period` when
/// `duty` is set, by one site.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stream {
    pub(crate) site: usize,
    pub(crate) size: u64,
    pub(crate) bytes_per_second: f64,
    pub(crate) from: f64,
    pub(crate) to: f64,
    pub(crate) duty: Option<(f64, f64)>,
    pub(crate) lifetime: Lifetime,
}

impl Stream {
    pub(crate) fn steady(
        site: usize,
        size: u64,
        bytes_per_second: f64,
        lifetime: Lifetime,
    ) -> Self {
        Stream {
            site,
            size,
            bytes_per_second,
            from: 0.0,
            to: HOUR,
            duty: None,
            lifetime,
        }
    }

    /// The same stream `speed` times faster: the same objects, allocated
    /// and freed at times `speed` times smaller.
    pub(crate) fn faster(self, speed: f64) -> Self {
        Stream {
            bytes_per_second: self.bytes_per_second * speed,
            from: self.from / speed,
            to: self.to / speed,
            duty: self
                .duty
                .map(|(period, active)| (period / speed, active / speed)),
            lifetime: self.lifetime.faster(speed),
            ..self
        }
    }

    /// The bytes the stream has allocated by `t` seconds.
    pub(crate) fn bytes_by(&self, t: f64) -> f64 {
        let span = t.clamp(self.from, self.to) - self.from;
        let active = match self.duty {
            None => span,
            Some((period, on)) => {
                let whole = (span / period).floor();
                whole * on + (span - whole * period).min(on)
            }
        };
        active * self.bytes_per_second
    }

    /// The seconds during which the stream allocates.
    pub(crate) fn active_seconds(&self) -> f64 {
        let span = self.to - self.from;
        match self.duty {
            None => span,
            Some((period, active)) => {
                let whole = (span / period).floor();
                whole * active + (span - whole * period).min(active)
            }
        }
    }

    /// The time at which the stream has allocated `bytes`.
    pub(crate) fn time_of(&self, bytes: f64) -> f64 {
        let active = bytes / self.bytes_per_second;
        match self.duty {
            None => self.from + active,
            Some((period, on)) => {
                let cycles = (active / on).floor();
                self.from + cycles * period + (active - cycles * on)
            }
        }
    }
}

/// A sampled object: when it was allocated, when it died, its size and site.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sampled {
    pub(crate) site: usize,
    pub(crate) size: u64,
    pub(crate) allocated: f64,
    pub(crate) died: f64,
}

/// Samples the stream's objects: `emit` gets each sampled one, in
/// allocation order ([`Samples`]).
pub(crate) fn sample_stream(stream: &Stream, seed: u64, mut emit: impl FnMut(Sampled)) {
    for sampled in Samples::new(stream, seed) {
        emit(sampled)
    }
}

/// The sampled objects of a stream, in allocation order.
///
/// With `D` the distance to the next sample point, counted from the start of
/// the next object, the `j`-th object from there (0-based) is the one
/// sampled when `D <= (j+1) size`, as `AllocationSampler::on_allocation`
/// decides object by object: `j = ceil(D / size) - 1`.
pub(crate) struct Samples {
    stream: Stream,
    distance: SampleDistance,
    lifetimes: SmallRng,
    /// The stream's objects.
    objects: u64,
    /// The index of the object after the last sampled one.
    next: u64,
}

impl Samples {
    pub(crate) fn new(stream: &Stream, seed: u64) -> Self {
        Samples {
            stream: *stream,
            distance: SampleDistance::new(INTERVAL, seed),
            lifetimes: SmallRng::seed_from_u64(seed ^ 0x5eed_11fe),
            objects: (stream.bytes_per_second * stream.active_seconds() / stream.size as f64)
                as u64,
            next: 0,
        }
    }
}

impl Iterator for Samples {
    type Item = Sampled;

    fn next(&mut self) -> Option<Sampled> {
        let stream = &self.stream;
        let index = self
            .next
            .saturating_add(self.distance.next_distance().div_ceil(stream.size) - 1);
        if index >= self.objects {
            // Past the end: the same for every later call.
            self.next = self.objects;
            return None;
        }
        self.next = index + 1;
        let allocated = stream.time_of((index * stream.size) as f64);
        Some(Sampled {
            site: stream.site,
            size: stream.size,
            allocated,
            died: stream.lifetime.death(allocated, &mut self.lifetimes),
        })
    }
}

/// How a run's samples' liveness is tracked.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tracking {
    /// Every sample's.
    All,
    /// Each sample's on a draw of its own, with this probability.
    Share(f64),
    /// With a probability `q` set per [`TRACKING_WINDOW`] from the samples
    /// of the windows before it, for about `per_second` tracked a second,
    /// as the agent's controller sets it: `q = min(1, R / E)`, `E` the
    /// samples a second, moved a quarter of the way to each window's rate
    /// and replaced by it when a window's count is three standard
    /// deviations above what `E` expects; `q = 1` in the first window. The
    /// program's own samples count, and those of `busy`, the rest of a busy
    /// JVM (small objects, sampled as a Poisson count of its bytes over the
    /// interval), whose liveness is not followed here.
    Rate {
        per_second: f64,
        busy: Option<Stream>,
    },
}

/// The window of [`Tracking::Rate`]'s controller, seconds of the run.
pub(crate) const TRACKING_WINDOW: f64 = 1.0;

impl Tracking {
    /// The same tracking of a program `speed` times faster: the same, as
    /// the rate aimed at is a second's of the run, and the rest of the JVM
    /// allocates as it does (a program 120 times faster is a site of a JVM
    /// that allocates that much more, not a JVM 120 times busier).
    pub(crate) fn faster(self, _speed: f64) -> Self {
        self
    }
}

/// A Poisson count of mean `mean`: exactly, by multiplying uniforms, below
/// 30; else the normal approximation rounded (for the controller's input
/// only, whose exact law does not matter, only that it is set from the
/// past).
pub(crate) fn poisson(mean: f64, rng: &mut SmallRng) -> u64 {
    if mean < 30.0 {
        let limit = (-mean).exp();
        let (mut count, mut product) = (0, rng.random::<f64>());
        while product > limit {
            count += 1;
            product *= rng.random::<f64>();
        }
        count
    } else {
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        let z = (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        (mean + mean.sqrt() * z).round().max(0.0) as u64
    }
}

/// The controller of [`Tracking::Rate`] (and a fixed share).
pub(crate) struct Controller {
    tracking: Tracking,
    /// The probability in force.
    q: f64,
    /// Samples a second, once a window has ended.
    estimate: Option<f64>,
    /// The window's end, seconds.
    window_end: f64,
    /// The program's samples in the window so far.
    count: u64,
}

impl Controller {
    pub(crate) fn new(tracking: Tracking) -> Self {
        let q = match tracking {
            Tracking::Share(q) => q,
            _ => 1.0,
        };
        Controller {
            tracking,
            q,
            estimate: None,
            window_end: TRACKING_WINDOW,
            count: 0,
        }
    }

    /// The probability of a sample taken at `t` seconds, after the samples
    /// before it.
    pub(crate) fn probability_at(&mut self, t: f64, rng: &mut SmallRng) -> f64 {
        self.advance(t, rng);
        self.count += 1;
        self.q
    }

    /// `samples` samples taken at `t` seconds, after those before them,
    /// counted at once (their probability is [`probability_at`]'s for
    /// any of them: one per window).
    pub(crate) fn count_at(&mut self, t: f64, samples: u64, rng: &mut SmallRng) -> f64 {
        self.advance(t, rng);
        self.count += samples;
        self.q
    }

    /// When the window in force ends, seconds.
    pub(crate) fn window_end(&self) -> f64 {
        self.window_end
    }

    /// Closes the windows that end by `t`, setting `q` from each one's
    /// count.
    fn advance(&mut self, t: f64, rng: &mut SmallRng) {
        let Tracking::Rate { per_second, busy } = self.tracking else {
            return;
        };
        while t >= self.window_end {
            let start = self.window_end - TRACKING_WINDOW;
            let busy = busy.map_or(0, |b| {
                let bytes = b.bytes_by(self.window_end) - b.bytes_by(start);
                poisson(bytes / INTERVAL as f64, rng)
            });
            let count = (self.count + busy) as f64;
            let rate = count / TRACKING_WINDOW;
            let estimate = match self.estimate {
                Some(e) if count <= e * TRACKING_WINDOW + 3.0 * (e * TRACKING_WINDOW).sqrt() => {
                    e + 0.25 * (rate - e)
                }
                _ => rate,
            };
            self.estimate = Some(estimate);
            self.q = if estimate > per_second {
                per_second / estimate
            } else {
                1.0
            };
            self.count = 0;
            self.window_end += TRACKING_WINDOW;
        }
    }
}

/// The share of `values` for which `f` holds.
pub(crate) fn share<T>(values: &[T], f: impl Fn(&T) -> bool) -> f64 {
    values.iter().filter(|v| f(v)).count() as f64 / values.len() as f64
}

/// The binomial standard deviation of a rate `p` measured over `n` runs.
pub(crate) fn binomial_sd(p: f64, n: usize) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}
