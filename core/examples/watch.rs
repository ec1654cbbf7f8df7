//! The figures of the `watch` module doc: simulated services watched as
//! the agent watches them, by the core's model of the sampler, for far
//! longer than the suite's tests (`core/tests/watch.rs`) run them.
//!
//! ```text
//! cargo run --release -p heapsampler-core --example watch -- steady [WEEKS]
//! cargo run --release -p heapsampler-core --example watch -- noise [DAYS]
//! cargo run --release -p heapsampler-core --example watch -- churn [DAYS]
//! cargo run --release -p heapsampler-core --example watch -- late [RUNS]
//! cargo run --release -p heapsampler-core --example watch -- share [RUNS]
//! cargo run --release -p heapsampler-core --example watch -- slow [RUNS]
//! ```
//!
//! - `steady`: the 40 MiB steady service for WEEKS simulated weeks (500)
//!   under each tracking: the suspects raised, at the watch's thresholds
//!   and at lower ones (how far from them the service stays).
//! - `noise`: a group whose true live bytes never change (2 KiB objects
//!   at 1 MiB/s living exactly 60 s, 120 samples live, 2 a second coming
//!   and going), DAYS days (400) one day a run: the share of days in which
//!   its windows alone rise above 4 to 5.5 standard deviations, and the
//!   effective number of windows a day that makes of the normal tail;
//!   and of those in which it is a suspect at lower thresholds.
//! - `churn`: the same service with 400 more sites of one sample or two
//!   live, more than the table holds, for DAYS days (100).
//! - `late`: 500 KiB/s leaks from a moment in [30 s, 120 s] of 180 s runs,
//!   RUNS runs (2000) per case: the delays, and the growth reported.
//! - `share`: the late leak on a new site under ZGC as the service's
//!   garbage (so the share tracked) varies, RUNS runs (500) each.
//! - `slow`: 50 KiB/s leaks from a moment in the third hour of uptime and
//!   in the second day, 5 KiB/s in the second day, RUNS runs (200) each.
//!
//! The runs are spread over the machine's cores.

#[allow(dead_code)]
#[path = "../tests/programs.rs"]
mod programs;
#[allow(dead_code)]
#[path = "../tests/service.rs"]
mod service;

use heapsampler_core::watch::{NEW_HIGH_Z, Suspect, WINDOW_Z, Watch};
use programs::{KIB, Lifetime, MIB, Stream};
use service::{
    Leak, LeakRun, late_leak, late_leak_runs, leak_run, over_seeds, quantile, sites,
    steady_service, trackings,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_default();
    let count = args.next().map(|n| {
        n.parse::<u64>().unwrap_or_else(|_| {
            eprintln!("watch: the count must be a whole number, got {n:?}");
            std::process::exit(2)
        })
    });
    match what.as_str() {
        "steady" => steady(count.unwrap_or(500), false),
        "noise" => noise(count.unwrap_or(400)),
        "churn" => steady(count.unwrap_or(100), true),
        "late" => late(count.unwrap_or(2000)),
        "share" => share(count.unwrap_or(500)),
        "slow" => slow(count.unwrap_or(200)),
        _ => {
            eprintln!(
                "watch: say steady, noise, churn, late, share or slow (see the example's doc)"
            );
            std::process::exit(2)
        }
    }
}

/// The thresholds each steady run is watched at: the watch's, then lower
/// ones.
const THRESHOLDS: [(f64, f64); 4] = [
    (WINDOW_Z, NEW_HIGH_Z),
    (5.0, NEW_HIGH_Z),
    (WINDOW_Z, 2.0),
    (4.5, 2.0),
];

/// Runs of a steady service, each `days` long.
fn steady(count: u64, churn: bool) {
    let mut service = steady_service(600.0, 14.0 * MIB);
    let days = if churn {
        // 400 sites of 1 KiB objects at 2 KiB/s, each living 2 minutes
        // on average (one sample live or two), beyond the table's 256.
        service.streams.extend((0..400).map(|n| Stream {
            to: f64::INFINITY,
            ..Stream::steady(100 + n, 1024, 2.0 * KIB, Lifetime::Exponential(120.0))
        }));
        1.0
    } else {
        7.0
    };
    for (collections, tracking) in trackings() {
        let results = over_seeds(0..count, |seed| {
            let mut watches = THRESHOLDS.map(|(w, h)| Watch::with_thresholds(w, h));
            let found = service::run(
                &service,
                days * 86400.0,
                collections,
                tracking,
                seed,
                &mut watches,
            );
            (found, watches[0].evictions())
        });
        println!(
            "{} runs of {days} days ({} days) under {}: {} checkpoints, {} samples entered, {} evictions",
            count,
            count as f64 * days,
            collections.name,
            results.iter().map(|r| r.0.checkpoints).sum::<u64>(),
            results.iter().map(|r| r.0.entered).sum::<u64>(),
            results.iter().map(|r| r.1).sum::<u64>(),
        );
        for (n, (window_z, new_high_z)) in THRESHOLDS.iter().enumerate() {
            let suspects: Vec<_> = results.iter().flat_map(|r| &r.0.suspects[n]).collect();
            // The start-up fills the first ten minutes: judged as growth
            // until the uptime is four times that.
            let (start_up, later): (Vec<&Suspect>, Vec<&Suspect>) =
                suspects.iter().partition(|s| s.raised_at <= 2400.0);
            println!(
                "  at {window_z} and {new_high_z}: {} suspects in the first 40 minutes ({:?}), \
                 {} later {:?}",
                start_up.len(),
                start_up
                    .iter()
                    .map(|s| s.group)
                    .collect::<std::collections::BTreeSet<_>>(),
                later.len(),
                later
                    .iter()
                    .map(|s| (s.group, s.raised_at.round()))
                    .take(12)
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// The window test alone, and the whole test at lower thresholds, on a
/// group of constant true live bytes: sampling error alone.
fn noise(days: u64) {
    let service = service::Service {
        streams: vec![Stream {
            from: -60.0,
            to: f64::INFINITY,
            ..Stream::steady(0, 2048, MIB, Lifetime::Fixed(60.0))
        }],
        garbage: Vec::new(),
    };
    let alone = [4.0, 4.5, 5.0, 5.5];
    let whole = [(4.0, 2.0), (3.0, 2.0), (3.0, 1.0)];
    let thresholds: Vec<(f64, f64)> = alone
        .iter()
        .map(|&z| (z, f64::NEG_INFINITY))
        .chain(whole)
        .collect();
    let counts = over_seeds(0..days, |seed| {
        let mut watches: Vec<Watch> = thresholds
            .iter()
            .map(|&(w, h)| Watch::with_thresholds(w, h))
            .collect();
        let found = service::run(
            &service,
            86400.0,
            service::G1,
            programs::Tracking::All,
            seed,
            &mut watches,
        );
        found
            .suspects
            .iter()
            .map(|s| !s.is_empty())
            .collect::<Vec<bool>>()
    });
    println!(
        "a group of constant live bytes, {days} days under {}:",
        service::G1.name
    );
    for (n, (window_z, new_high_z)) in thresholds.iter().enumerate() {
        let share = counts.iter().filter(|c| c[n]).count() as f64 / days as f64;
        let what = if *new_high_z == f64::NEG_INFINITY {
            // P(a day's largest z > c) = 1 - exp(-M Q(c)).
            format!(
                "windows alone above {window_z}: {:.2}% of days, {:.0} effective windows a day",
                100.0 * share,
                -(1.0 - share).ln() / normal_tail(*window_z)
            )
        } else {
            format!(
                "suspect at {window_z} and {new_high_z}: {:.2}% of days",
                100.0 * share
            )
        };
        println!("  {what}");
    }
}

/// `P(Z > z)` of a standard normal `Z`, by the continued fraction of
/// Lentz for the complementary error function: to 1e-12 relative from
/// z = 3 on (where it is used).
fn normal_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    // erfc(x) = exp(-x²)/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))).
    let mut fraction = x;
    for k in (1..200).rev() {
        fraction = x + (k as f64 / 2.0) / fraction;
    }
    0.5 * (-x * x).exp() / (std::f64::consts::PI.sqrt() * fraction)
}

/// The late leaks of the suite's test, with many more runs.
fn late(count: u64) {
    let cases = [
        ("G1, a new site", 14.0, sites::NEW, 0),
        ("G1, the sessions' site", 14.0, sites::SESSIONS[0], 0),
        ("G1, the cache's site", 14.0, sites::CACHE, 0),
        ("ZGC (q about 1), a new site", 4.0, sites::NEW, 1),
        (
            "ZGC (q about 1), the sessions' site",
            4.0,
            sites::SESSIONS[0],
            1,
        ),
        ("ZGC (q about 1), the cache's site", 4.0, sites::CACHE, 1),
    ];
    for (name, garbage, site, tracking) in cases {
        let service = steady_service(5.0, garbage * MIB);
        let results = late_leak_runs(&service, site, trackings()[tracking], 0..count);
        report(name, &results);
    }
}

/// The delays of `results`, and what the suspects said of the leak.
fn report(name: &str, results: &[LeakRun]) {
    let mut delays: Vec<f64> = results.iter().map(LeakRun::delay).collect();
    let runs = results.len() as f64;
    let within = delays.iter().filter(|&&d| d <= 60.0).count() as f64 / runs;
    let raised: Vec<_> = results.iter().filter_map(|r| r.raised.as_ref()).collect();
    // The leak's own growth over the suspect's window: its rate times the
    // share of the window it leaked in.
    let truths: Vec<f64> = results
        .iter()
        .filter_map(|r| {
            let s = r.raised.as_ref()?;
            let leaked = s.raised_at - r.leak.from.max(s.window_start);
            Some(r.leak.bytes_per_second * leaked / (s.raised_at - s.window_start))
        })
        .collect();
    let covered = raised
        .iter()
        .zip(&truths)
        .filter(|(s, t)| s.growth.contains(**t))
        .count();
    let ratio = raised
        .iter()
        .zip(results.iter().filter(|r| r.raised.is_some()))
        .map(|(s, r)| s.growth.estimate / r.leak.bytes_per_second)
        .sum::<f64>()
        / raised.len().max(1) as f64;
    let others: usize = results.iter().map(|r| r.others.len()).sum();
    println!(
        "{name}: within 60 s in {:.2}% of {runs} runs; delay median {:.1} s, 90% {:.1} s, \
         99% {:.1} s, longest {:.1} s; not raised {}; other suspects {others}; growth \
         interval holds the leak's growth over the window in {:.1}%, estimate {:.2} of the \
         leak's rate on average",
        100.0 * within,
        quantile(&mut delays, 0.5),
        quantile(&mut delays, 0.9),
        quantile(&mut delays, 0.99),
        quantile(&mut delays, 1.0),
        results.len() - raised.len(),
        100.0 * covered as f64 / raised.len().max(1) as f64,
        ratio,
    );
}

/// The late leak on a new site under ZGC, as the share tracked falls.
fn share(count: u64) {
    for garbage in [2.0, 4.0, 8.0, 14.0, 28.0] {
        let service = steady_service(5.0, garbage * MIB);
        let name = format!("ZGC, a new site, {garbage} MiB/s of garbage");
        report(
            &name,
            &late_leak_runs(&service, sites::NEW, trackings()[1], 0..count),
        );
    }
}

/// Slow leaks: at 50 KiB/s from a moment in the third hour of uptime (the
/// suite's test) and in the second day, at 5 KiB/s in the second day.
fn slow(count: u64) {
    let service = steady_service(600.0, 14.0 * MIB);
    let hour = 3600.0;
    for (rate, from, to) in [
        (50.0, 2.0 * hour, 3.0 * hour),
        (50.0, 24.0 * hour, 48.0 * hour),
        (5.0, 24.0 * hour, 48.0 * hour),
    ] {
        for (collections, tracking) in trackings() {
            let results = over_seeds(0..count, |seed| {
                let leak = Leak {
                    bytes_per_second: rate * KIB,
                    from: from + (to - from) * (seed as f64 * 0.618_033_988_75).fract(),
                    ..late_leak(sites::NEW, seed)
                };
                leak_run(
                    &service,
                    leak,
                    to + 6.0 * hour,
                    (collections, tracking),
                    seed,
                )
            });
            let name = format!(
                "{rate} KiB/s from {} to {} h under {}",
                from / hour,
                to / hour,
                collections.name
            );
            report(&name, &results);
        }
    }
}
