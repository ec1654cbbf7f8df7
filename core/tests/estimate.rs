//! The intervals of `estimate` hold their coverage, and its variance
//! estimates are unbiased, on a known allocation mix sampled many times by the
//! model of HotSpot's sampler.
//!
//! Every run samples the same stream of objects with its own seed, so the
//! runs are independent draws of what a profile of that program could have
//! been. Fixed seeds make the test repeatable; the tolerances (derived next
//! to each check) are wide enough for any seed and narrow enough to catch a
//! wrong formula.

use std::sync::OnceLock;

use heapsampler_core::estimate::{Estimate, Interval};
use heapsampler_core::sampling::{
    AllocationSampler, bytes_weight, sample_probability, size_from_weight,
};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const INTERVAL: u64 = 512 * KIB;

/// The mix: (object size, number of objects). Sizes well below the interval
/// (16 B, p = 3e-5; 1 KiB, p = 0.002), near it (100 KiB, p = 0.18) and above
/// it (2 MiB, p = 0.98). Expected samples per run: 32, 32, 57 and 15.7.
const MIX: [(u64, u64); 4] = [
    (16, 1 << 20),
    (KIB, 16 * KIB),
    (100 * KIB, 320),
    (2 * MIB, 16),
];

/// The share of objects still live at the end of the program, chosen at
/// random once (not by the sampler): the live objects are a group like any
/// other.
const LIVE_SHARE: f64 = 0.3;

/// Independent sampled runs of the mix. 2000 runs make the binomial standard
/// deviation of a measured 95% coverage sqrt(0.95 * 0.05 / 2000) = 0.49
/// points.
const RUNS: u64 = 2000;

#[derive(Clone, Copy)]
struct Allocation {
    size: u64,
    class: usize,
    live: bool,
    /// From the rare site: a small group (see [`RARE_SITE`]).
    rare: bool,
}

/// A rare allocation site: this many of the 1 KiB objects come from it, for
/// 4096 * 1 KiB / 512 KiB = 8 expected samples a run (p = 0.00195 each), the
/// group size where the normal interval is visibly short.
const RARE_SITE: usize = 4096;

/// The program: every object of the mix once, in a shuffled order (a fixed
/// seed), with its liveness at the end.
fn program() -> Vec<Allocation> {
    let mut rng = SmallRng::seed_from_u64(16);
    let mut stream: Vec<Allocation> = MIX
        .iter()
        .enumerate()
        .flat_map(|(class, &(size, count))| {
            (0..count).map(move |_| Allocation {
                size,
                class,
                live: false,
                rare: false,
            })
        })
        .collect();
    for a in &mut stream {
        a.live = rng.random_bool(LIVE_SHARE);
    }
    for a in stream.iter_mut().filter(|a| a.size == KIB).take(RARE_SITE) {
        a.rare = true;
    }
    stream.shuffle(&mut rng);
    stream
}

/// What one sampled run estimates: the whole mix, the live objects, each
/// size class and the rare site.
struct Run {
    total: Estimate,
    live: Estimate,
    classes: [Estimate; MIX.len()],
    rare: Estimate,
    /// The whole mix as a reader of the recording estimates it: from each
    /// sample's weight as stored (rounded), its size recovered from that
    /// weight and the interval.
    stored: Estimate,
    /// The whole mix from the stored weights without sizes, as for the
    /// JDK's own recordings.
    without_sizes: Estimate,
}

fn sample(stream: &[Allocation], seed: u64) -> Run {
    let mut sampler = AllocationSampler::new(INTERVAL, seed);
    let mut run = Run {
        total: Estimate::new(),
        live: Estimate::new(),
        classes: [Estimate::new(); MIX.len()],
        rare: Estimate::new(),
        stored: Estimate::new(),
        without_sizes: Estimate::new(),
    };
    for a in stream {
        if sampler.on_allocation(a.size) {
            let weight = bytes_weight(a.size, INTERVAL).round();
            let size = size_from_weight(weight as u64, INTERVAL, 8);
            assert_eq!(size, Some(a.size), "weight {weight}");
            run.stored.add_weighted(weight, size);
            run.without_sizes.add_weighted(weight, None);
            run.classes[a.class].add(a.size, INTERVAL);
            if a.live {
                run.live.add(a.size, INTERVAL);
            }
            if a.rare {
                run.rare.add(a.size, INTERVAL);
            }
        }
    }
    // The total is the merge of the classes, as a report sums its rows.
    for class in &run.classes {
        run.total.merge(class);
    }
    run
}

/// The program and its sampled runs, computed once for all the tests here.
fn program_and_runs() -> &'static (Vec<Allocation>, Vec<Run>) {
    static RUNS_OF_PROGRAM: OnceLock<(Vec<Allocation>, Vec<Run>)> = OnceLock::new();
    RUNS_OF_PROGRAM.get_or_init(|| {
        let stream = program();
        let runs = all_runs(&stream);
        assert_eq!(runs.len() as u64, RUNS);
        (stream, runs)
    })
}

/// All runs, spread over the machine's cores (runs are independent; the
/// order of the results is the order of the seeds).
fn all_runs(stream: &[Allocation]) -> Vec<Run> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let per_thread = RUNS.div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let seeds = (t * per_thread)..((t + 1) * per_thread).min(RUNS);
                scope.spawn(move || {
                    seeds
                        .map(|seed| sample(stream, 1000 + seed))
                        .collect::<Vec<Run>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a run panicked"))
            .collect::<Vec<Run>>()
    })
}

/// The true totals of a group of the stream: (bytes, objects).
fn truth(stream: &[Allocation], in_group: impl Fn(&Allocation) -> bool) -> (f64, f64) {
    let group = stream.iter().filter(|a| in_group(a));
    let (bytes, objects) = group.fold((0u64, 0u64), |(b, n), a| (b + a.size, n + 1));
    (bytes as f64, objects as f64)
}

/// A group of the program's objects: its name, which objects belong to it,
/// and its estimate in a run.
type Group = (&'static str, fn(&Allocation) -> bool, fn(&Run) -> &Estimate);

/// The share of runs whose interval contains `truth`.
fn coverage(runs: &[Run], truth: f64, interval: impl Fn(&Run) -> Interval) -> f64 {
    let covered = runs.iter().filter(|r| interval(r).contains(truth)).count();
    covered as f64 / runs.len() as f64
}

/// The textbook normal interval `Ŷ ± 1.96 √V̂` of the estimated bytes, which
/// the chosen interval replaces.
fn normal_bytes_interval(e: &Estimate) -> Interval {
    let half = 1.959_964 * e.bytes_variance().sqrt();
    Interval {
        estimate: e.bytes(),
        low: e.bytes() - half,
        high: e.bytes() + half,
    }
}

/// The intervals cover the true bytes and objects in 95% of runs: of the whole
/// mix, of its live objects, of each size class and of the rare site.
///
/// Tolerance: 2000 runs give a binomial standard deviation of 0.49 points on
/// a true 95% coverage; each check allows 4 of them, ±1.95 points, because
/// fourteen coverages are measured and each must pass (at 4 sd a correct
/// interval fails one of them with probability under 0.1%). Coverage of a
/// discrete count also oscillates with its expected value (module doc of
/// `estimate`: for a Poisson count of mean 8, as the rare site, it is 95.2%;
/// of mean 32, as the 16 B class, 94.9%), by less than that tolerance.
///
/// The 2 MiB class is the exception that proves the rule: its 16 objects are
/// each sampled with p = 0.98, so its estimate takes three values in 99.9% of
/// runs (all 16 sampled: 74%; 15: 22%; 14: 3.5%) and no interval can cover
/// exactly 95%. Ours covers the first two and misses the third: 96.5%
/// expected, and checked against that.
#[test]
fn intervals_cover_the_truth_in_95_percent_of_runs() {
    let (stream, runs) = program_and_runs();
    let tolerance = 4.0 * (0.95 * 0.05 / RUNS as f64).sqrt();
    let mut report = Vec::new();
    let mut check = |name: String, measured: f64, expected: f64| {
        report.push(format!("{name}: {:.2}%", measured * 100.0));
        assert!(
            (measured - expected).abs() <= tolerance,
            "{name}: coverage {:.2}%, expected {:.2}% ± {:.2}\n{}",
            measured * 100.0,
            expected * 100.0,
            tolerance * 100.0,
            report.join("\n"),
        );
    };

    let groups: [Group; 3] = [
        ("total", |_| true, |r| &r.total),
        ("live", |a| a.live, |r| &r.live),
        ("rare site", |a| a.rare, |r| &r.rare),
    ];
    for (name, in_group, estimate) in groups {
        let (bytes, objects) = truth(stream, in_group);
        let measured = coverage(runs, bytes, |r| estimate(r).bytes_interval());
        check(format!("{name} bytes"), measured, 0.95);
        let measured = coverage(runs, objects, |r| estimate(r).objects_interval());
        check(format!("{name} objects"), measured, 0.95);
    }

    // As a reader of the recording sees them: the same coverage.
    let (bytes, objects) = truth(stream, |_| true);
    let measured = coverage(runs, bytes, |r| r.stored.bytes_interval());
    check(
        "total bytes, from stored weights".to_owned(),
        measured,
        0.95,
    );
    let measured = coverage(runs, objects, |r| r.stored.objects_interval());
    check(
        "total objects, from stored weights".to_owned(),
        measured,
        0.95,
    );

    // P(all 16 sampled) + P(15 sampled), from p = 1 - exp(-4).
    let p = sample_probability(2 * MIB, INTERVAL);
    let two_mib_expected = p.powi(16) + 16.0 * p.powi(15) * (1.0 - p);
    for (class, &(size, _)) in MIX.iter().enumerate() {
        let expected = if size == 2 * MIB {
            two_mib_expected
        } else {
            0.95
        };
        let (bytes, objects) = truth(stream, |a| a.class == class);
        let measured = coverage(runs, bytes, |r| r.classes[class].bytes_interval());
        check(format!("{size} B class, bytes"), measured, expected);
        let measured = coverage(runs, objects, |r| r.classes[class].objects_interval());
        check(format!("{size} B class, objects"), measured, expected);
    }
    eprintln!("coverage over {RUNS} runs:\n{}", report.join("\n"));

    // Without sizes the interval is wider than it need be: it covers at
    // least 95% (here more: the 2 MiB objects, certainly sampled, count as
    // uncertain).
    let (bytes, _) = truth(stream, |_| true);
    let measured = coverage(runs, bytes, |r| r.without_sizes.bytes_interval());
    eprintln!("total bytes, no sizes: {:.2}%", measured * 100.0);
    assert!(
        measured >= 0.95 - tolerance,
        "total bytes without sizes: coverage {:.2}%",
        measured * 100.0
    );

    // The check can tell: on the same runs the normal interval covers the
    // rare site's bytes in about 89% of runs (89.2% computed exactly for a
    // Poisson count of mean 8), more than the tolerance below 95%.
    let (bytes, _) = truth(stream, |a| a.rare);
    let normal = coverage(runs, bytes, |r| normal_bytes_interval(&r.rare));
    eprintln!("normal interval, rare site bytes: {:.2}%", normal * 100.0);
    assert!(
        normal < 0.95 - tolerance,
        "the normal interval covers the rare site in {:.2}% of runs",
        normal * 100.0
    );
}

/// Over the runs, the estimates average to the truth, the variance estimates
/// average to the true variance `Σ y²(1-p)/p` (unbiased), and the estimates
/// spread by that variance (which is what independent inclusion predicts).
///
/// Tolerances, at 4 standard deviations of each mean over the 2000 runs,
/// from closed forms over the group's objects with `w = y/p`, `q = 1 - p`:
/// - the estimate: `Var(Ŷ) = Σ w² p q`;
/// - the variance estimate `V̂ = Σ I w² q`: `Var(V̂) = Σ w⁴ q² · p q`;
/// - the spread: the sample variance of `Ŷ` over `R` runs has variance
///   `(κ₄ + 2σ⁴)/R` for large `R`, where `σ² = Var(Ŷ)` and
///   `κ₄ = Σ w⁴ p q (1 - 6 p q)`, the summed fourth cumulants of the
///   independent terms.
#[test]
fn variance_estimates_are_unbiased() {
    let (stream, runs) = program_and_runs();
    let r = RUNS as f64;
    type Quantity = (
        &'static str,
        fn(&Allocation) -> f64,
        fn(&Estimate) -> (f64, f64),
    );
    let quantities: [Quantity; 2] = [
        (
            "bytes",
            |a| a.size as f64,
            |e| (e.bytes(), e.bytes_variance()),
        ),
        ("objects", |_| 1.0, |e| (e.objects(), e.objects_variance())),
    ];
    let groups: [Group; 4] = [
        ("total", |_| true, |r| &r.total),
        ("live", |a| a.live, |r| &r.live),
        ("16 B class", |a| a.class == 0, |r| &r.classes[0]),
        ("100 KiB class", |a| a.class == 2, |r| &r.classes[2]),
    ];
    for (group, in_group, estimate) in groups {
        for (quantity, y_of, read) in quantities {
            // The truth and the closed-form moments over the group's objects.
            let (mut truth, mut variance, mut var_of_v, mut kappa4) = (0.0, 0.0, 0.0, 0.0);
            for a in stream.iter().filter(|a| in_group(a)) {
                let y = y_of(a);
                let p = sample_probability(a.size, INTERVAL);
                let q = (-(a.size as f64) / INTERVAL as f64).exp();
                let w = y / p;
                truth += y;
                variance += w * w * p * q;
                var_of_v += w.powi(4) * q * q * p * q;
                kappa4 += w.powi(4) * p * q * (1.0 - 6.0 * p * q);
            }
            let name = format!("{group} {quantity}");
            let (estimates, variance_estimates): (Vec<f64>, Vec<f64>) =
                runs.iter().map(|run| read(estimate(run))).unzip();

            let mean = estimates.iter().sum::<f64>() / r;
            let tolerance = 4.0 * (variance / r).sqrt();
            assert!(
                (mean - truth).abs() <= tolerance,
                "{name}: mean estimate {mean}, truth {truth} ± {tolerance}"
            );

            let mean_v = variance_estimates.iter().sum::<f64>() / r;
            let tolerance = 4.0 * (var_of_v / r).sqrt();
            assert!(
                (mean_v - variance).abs() <= tolerance,
                "{name}: mean variance estimate {mean_v}, true variance {variance} ± {tolerance}"
            );

            let spread = estimates.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (r - 1.0);
            let tolerance = 4.0 * ((kappa4 + 2.0 * variance * variance) / r).sqrt();
            assert!(
                (spread - variance).abs() <= tolerance,
                "{name}: variance over runs {spread}, true variance {variance} ± {tolerance}"
            );
            eprintln!(
                "{name}: mean V̂ / Var = {:.4} (± {:.4}), variance over runs / Var = {:.4} (± {:.4})",
                mean_v / variance,
                4.0 * (var_of_v / r).sqrt() / variance,
                spread / variance,
                tolerance / variance,
            );
        }
    }
}
