//! A simulated service watched by [`Watch`]es as the agent would feed them:
//! at each collection, the tracked samples found live for the first time
//! enter, those found freed leave, and the watch checks.
//!
//! Most of a service's samples are of short-lived objects, which the watch
//! never sees (dead before the next collection), and drawing them one by
//! one is what would make a simulated week slow: they are drawn per
//! collection instead ([`Garbage`]), with the same law. A steady stream of
//! objects much smaller than the interval is sampled as a Poisson process
//! in time, of rate `bytes per second / interval`: sampled objects are the
//! stream's objects each kept with `p = 1 - exp(-size/interval)`, a
//! binomial count that is Poisson to `O(p)` (`1e-4` for 48 bytes at 512
//! KiB). Of a Poisson process each point kept independently (alive at the
//! collection, with probability `exp(-age/mean)` for an exponential life;
//! tracked, with `q`) gives independent Poisson counts of the kept and of
//! the rest (Poisson splitting): so the samples of `[a, b)` still live at
//! the collection at `t` are Poisson of mean `rate m (e^-(t-b)/m - e^-(t-a)/m)`,
//! the others Poisson of the remaining mean, independent (they only count
//! for the tracking controller); each one live lives on an exponential of
//! mean `m` from `t` (no memory). The other streams
//! (sessions, caches, batches, pools, a leak) are drawn sample by sample
//! as `programs` draws them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use heapsampler_core::sampling::bytes_weight;
use heapsampler_core::watch::{Group, Suspect, Watch};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::programs::{
    Controller, INTERVAL, KIB, Lifetime, MIB, Samples, Stream, Tracking, poisson,
};

/// A steady stream of short-lived objects, living an exponential time,
/// drawn per collection (module doc).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Garbage {
    pub(crate) site: usize,
    pub(crate) size: u64,
    pub(crate) bytes_per_second: f64,
    pub(crate) mean_life: f64,
}

impl Garbage {
    /// Samples a second.
    fn rate(&self) -> f64 {
        self.bytes_per_second / INTERVAL as f64
    }
}

/// A simulated service: streams drawn sample by sample, and garbage.
#[derive(Debug, Clone)]
pub(crate) struct Service {
    pub(crate) streams: Vec<Stream>,
    pub(crate) garbage: Vec<Garbage>,
}

/// The sites of [`steady_service`].
pub(crate) mod sites {
    pub(crate) const GARBAGE: [usize; 3] = [0, 1, 2];
    pub(crate) const SESSIONS: [usize; 2] = [3, 4];
    pub(crate) const CACHE: usize = 5;
    pub(crate) const BATCH: usize = 6;
    pub(crate) const POOL: usize = 7;
    pub(crate) const STATIC: usize = 8;
    pub(crate) const BUFFERS: usize = 9;
    pub(crate) const RARE: usize = 10;
    /// A site the service never allocates from.
    pub(crate) const NEW: usize = 11;
}

/// A cache of `bytes` of `size`-byte entries filled during the first
/// `fill` seconds, then turning over: each entry evicted after an
/// exponential time of mean `turnover` from the plateau on, replaced at
/// the rate that keeps the size.
fn cache(site: usize, size: u64, bytes: f64, fill: f64, turnover: f64) -> [Stream; 2] {
    let lifetime = Lifetime::Cache {
        plateau: fill,
        turnover,
    };
    [
        Stream {
            to: fill,
            ..Stream::steady(site, size, bytes / fill, lifetime)
        },
        Stream {
            from: fill,
            to: f64::INFINITY,
            ..Stream::steady(site, size, bytes / turnover, lifetime)
        },
    ]
}

/// A stream from the start on, for as long as the run.
fn forever(site: usize, size: u64, bytes_per_second: f64, lifetime: Lifetime) -> Stream {
    Stream {
        to: f64::INFINITY,
        ..Stream::steady(site, size, bytes_per_second, lifetime)
    }
}

/// A steady service of about 40 MiB live, its start-up (a cache, a pool
/// and static data filled) taking `fill` seconds, and `garbage` bytes a
/// second of request garbage:
///
/// - request garbage on three sites (48 B living 20 ms, 256 B living
///   50 ms, 2 KiB living 200 ms, in the shares 4:2:1);
/// - sessions: 2 KiB objects at 256 KiB/s living 8 s on average (2 MiB
///   live), 512 B at 128 KiB/s living 30 s (3.75 MiB);
/// - a cache of 16 MiB of 4 KiB entries, turning over in 10 minutes;
/// - a batch of 8 MiB of 16 KiB objects built over 20 s every 5 minutes,
///   freed 40 s after its start;
/// - a pool of 8 MiB of 64 KiB buffers, each replaced after 2 hours on
///   average;
/// - 8 MiB of 1 KiB objects kept from the start-up on;
/// - 1 MiB buffers at 2 MiB/s living 2 s (4 MiB live; sampled with
///   `p = 0.86`, their count's own swings larger than the sampling's);
/// - a rare site: 1 KiB at 1 KiB/s living 10 minutes (1.2 samples live).
pub(crate) fn steady_service(fill: f64, garbage: f64) -> Service {
    let mut streams = vec![
        forever(
            sites::SESSIONS[0],
            2048,
            256.0 * KIB,
            Lifetime::Exponential(8.0),
        ),
        forever(
            sites::SESSIONS[1],
            512,
            128.0 * KIB,
            Lifetime::Exponential(30.0),
        ),
        Stream {
            duty: Some((300.0, 20.0)),
            ..forever(
                sites::BATCH,
                16 * 1024,
                8.0 * MIB / 20.0,
                Lifetime::Batch {
                    period: 300.0,
                    freed_after: 40.0,
                },
            )
        },
        Stream {
            to: fill,
            ..Stream::steady(sites::STATIC, 1024, 8.0 * MIB / fill, Lifetime::Forever)
        },
        forever(
            sites::BUFFERS,
            1 << 20,
            2.0 * MIB,
            Lifetime::Exponential(2.0),
        ),
        forever(sites::RARE, 1024, KIB, Lifetime::Exponential(600.0)),
    ];
    streams.extend(cache(sites::CACHE, 4096, 16.0 * MIB, fill, 600.0));
    streams.extend(cache(sites::POOL, 64 * 1024, 8.0 * MIB, fill, 7200.0));
    let garbage = [(48, 4.0, 0.02), (256, 2.0, 0.05), (2048, 1.0, 0.2)]
        .into_iter()
        .zip(sites::GARBAGE)
        .map(|((size, share, mean_life), site)| Garbage {
            site,
            size,
            bytes_per_second: garbage * share / 7.0,
            mean_life,
        })
        .collect();
    Service { streams, garbage }
}

/// When collections come: each an independent uniform time from the one
/// before, in `[shortest, longest]` seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Collections {
    pub(crate) name: &'static str,
    pub(crate) shortest: f64,
    pub(crate) longest: f64,
}

/// G1's: a young collection every second or two, each one freeing what
/// is dead (every sample tracked).
pub(crate) const G1: Collections = Collections {
    name: "G1 (a collection every 1 to 2 s, every sample tracked)",
    shortest: 1.0,
    longest: 2.0,
};

/// Generational ZGC's: liveness known only at major collections, every
/// 3 to 6 s.
pub(crate) const ZGC_MAJORS: Collections = Collections {
    name: "generational ZGC (a major every 3 to 6 s, 16 tracked a second)",
    shortest: 3.0,
    longest: 6.0,
};

/// The two ways the agent watches: G1's collections with every sample
/// tracked, and ZGC's majors with 16 samples tracked a second.
pub(crate) fn trackings() -> [(Collections, Tracking); 2] {
    [
        (G1, Tracking::All),
        (
            ZGC_MAJORS,
            Tracking::Rate {
                per_second: 16.0,
                busy: None,
            },
        ),
    ]
}

/// A sample's leave, ordered by the time its object dies.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Leave {
    died: f64,
    site: u64,
    weight: f64,
    size: u64,
}

impl Eq for Leave {}

impl PartialOrd for Leave {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Leave {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.died.total_cmp(&other.died)
    }
}

/// What a run found: each watch's suspects, and the collections.
#[derive(Debug, Clone, Default)]
pub(crate) struct Found {
    pub(crate) suspects: Vec<Vec<Suspect>>,
    pub(crate) checkpoints: u64,
    /// Tracked samples entered.
    pub(crate) entered: u64,
}

/// Runs `service` for `seconds`, seeded by `seed`, feeding each of
/// `watches` the tracked samples as the agent would at each collection.
pub(crate) fn run(
    service: &Service,
    seconds: f64,
    collections: Collections,
    tracking: Tracking,
    seed: u64,
    watches: &mut [Watch],
) -> Found {
    let mut streams: Vec<std::iter::Peekable<Samples>> = service
        .streams
        .iter()
        .enumerate()
        .map(|(n, stream)| {
            Samples::new(stream, seed.wrapping_mul(1000).wrapping_add(n as u64)).peekable()
        })
        .collect();
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xc011_ec75);
    let mut controller = Controller::new(tracking);
    let mut leaves: BinaryHeap<Reverse<Leave>> = BinaryHeap::new();
    let mut enters: Vec<(u64, f64, u64)> = Vec::new();
    let mut found = Found {
        suspects: vec![Vec::new(); watches.len()],
        ..Found::default()
    };
    let by_rate = matches!(tracking, Tracking::Rate { .. });
    let mut t = 0.0;
    while t < seconds {
        let previous = t;
        t += rng.random_range(collections.shortest..=collections.longest);
        // The interval to this collection, in pieces within which `q` is
        // fixed (the controller's windows).
        let mut from = previous;
        while from < t {
            controller.count_at(from, 0, &mut rng);
            let to = if by_rate {
                controller.window_end().min(t)
            } else {
                t
            };
            for stream in &mut streams {
                while let Some(sampled) = stream.next_if(|s| s.allocated < to) {
                    let q = controller.probability_at(sampled.allocated, &mut rng);
                    if sampled.died > t && rng.random::<f64>() < q {
                        let weight = bytes_weight(sampled.size, INTERVAL).round() / q;
                        enters.push((sampled.site as u64, weight, sampled.size));
                        if sampled.died.is_finite() {
                            leaves.push(Reverse(Leave {
                                died: sampled.died,
                                site: sampled.site as u64,
                                weight,
                                size: sampled.size,
                            }));
                        }
                    }
                }
            }
            for garbage in &service.garbage {
                let m = garbage.mean_life;
                let all = garbage.rate() * (to - from);
                let live = garbage.rate() * m * ((-(t - to) / m).exp() - (-(t - from) / m).exp());
                let (live, dead) = (poisson(live, &mut rng), poisson(all - live, &mut rng));
                let q = controller.count_at(from, live + dead, &mut rng);
                let weight = bytes_weight(garbage.size, INTERVAL).round() / q;
                for _ in 0..live {
                    if rng.random::<f64>() < q {
                        enters.push((garbage.site as u64, weight, garbage.size));
                        let life = -m * (1.0 - rng.random::<f64>()).ln();
                        leaves.push(Reverse(Leave {
                            died: t + life,
                            site: garbage.site as u64,
                            weight,
                            size: garbage.size,
                        }));
                    }
                }
            }
            from = to;
        }
        found.checkpoints += 1;
        found.entered += enters.len() as u64;
        for watch in watches.iter_mut() {
            for &(site, weight, size) in &enters {
                watch.enter(site, weight, size);
            }
        }
        enters.clear();
        while let Some(Reverse(leave)) = leaves.peek().copied() {
            if leave.died > t {
                break;
            }
            leaves.pop();
            for watch in watches.iter_mut() {
                watch.leave(leave.site, leave.weight, leave.size);
            }
        }
        for (watch, suspects) in watches.iter_mut().zip(&mut found.suspects) {
            suspects.extend(watch.checkpoint(t));
        }
    }
    found
}

/// A leak: objects of `size` bytes at `bytes_per_second` from `from`
/// seconds on, never freed, allocated by `site`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leak {
    pub(crate) site: usize,
    pub(crate) size: u64,
    pub(crate) bytes_per_second: f64,
    pub(crate) from: f64,
}

/// What a watch made of a leak in one run.
#[derive(Debug, Clone)]
pub(crate) struct LeakRun {
    pub(crate) leak: Leak,
    /// The suspect naming the leaking site, if it was raised.
    pub(crate) raised: Option<Suspect>,
    /// Suspects naming any other group.
    pub(crate) others: Vec<Suspect>,
}

impl LeakRun {
    /// Seconds from the leak's start to the suspect; infinite when none
    /// was raised.
    pub(crate) fn delay(&self) -> f64 {
        self.raised
            .as_ref()
            .map_or(f64::INFINITY, |s| s.raised_at - self.leak.from)
    }
}

/// Runs `service` with `leak` for `seconds` under a watch at its
/// defaults.
pub(crate) fn leak_run(
    service: &Service,
    leak: Leak,
    seconds: f64,
    (collections, tracking): (Collections, Tracking),
    seed: u64,
) -> LeakRun {
    let mut service = service.clone();
    service.streams.push(Stream {
        from: leak.from,
        to: f64::INFINITY,
        ..Stream::steady(
            leak.site,
            leak.size,
            leak.bytes_per_second,
            Lifetime::Forever,
        )
    });
    let mut watch = [Watch::new()];
    let found = run(&service, seconds, collections, tracking, seed, &mut watch);
    let (mine, others) = found
        .suspects
        .into_iter()
        .flatten()
        .partition::<Vec<_>, _>(|s| s.group == Group::Site(leak.site as u64));
    LeakRun {
        leak,
        raised: mine.into_iter().next(),
        others,
    }
}

/// The late leak of a short run: 500 KiB/s of 1 KiB objects at `site`,
/// from a moment in [30 s, 120 s) that `seed` picks (the seeds' moments
/// spread evenly: the fractional parts of multiples of the golden ratio).
pub(crate) fn late_leak(site: usize, seed: u64) -> Leak {
    Leak {
        site,
        size: 1024,
        bytes_per_second: 500.0 * KIB,
        from: 30.0 + 90.0 * (seed as f64 * 0.618_033_988_75).fract(),
    }
}

/// Runs of 180 s of `service` with the late leak at `site`, one per seed.
pub(crate) fn late_leak_runs(
    service: &Service,
    site: usize,
    tracking: (Collections, Tracking),
    seeds: std::ops::Range<u64>,
) -> Vec<LeakRun> {
    over_seeds(seeds, |seed| {
        leak_run(service, late_leak(site, seed), 180.0, tracking, seed)
    })
}

/// `f` of each seed of `seeds`, in order, spread over the machine's cores.
pub(crate) fn over_seeds<T: Send>(
    seeds: std::ops::Range<u64>,
    f: impl Fn(u64) -> T + Sync,
) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let per_thread = (seeds.end - seeds.start).div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|n| {
                let first = seeds.start + n * per_thread;
                let mine = first..(first + per_thread).min(seeds.end);
                scope.spawn(move || mine.map(f).collect::<Vec<T>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a run panicked"))
            .collect()
    })
}

/// The `share` quantile of `values` (sorted in place; infinite values
/// last).
pub(crate) fn quantile(values: &mut [f64], share: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let index = ((values.len() as f64 * share).ceil() as usize).clamp(1, values.len()) - 1;
    values[index]
}
