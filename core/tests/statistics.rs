//! Statistical tests of the sampler: the distances are exponential with the
//! right mean, and summed weights estimate allocated bytes without bias.
//!
//! Every test uses fixed seeds, so it is repeatable; each tolerance is set at
//! four or more standard deviations of the estimate it checks (computed in the
//! comments), so a correct sampler passes for any seed while a biased one (a
//! wrong formula, a rounding off by one at small sizes, a wrong distribution)
//! fails.

use heapsampler_core::rate_limit::RateLimiter;
use heapsampler_core::sampling::{AllocationSampler, SampleDistance, bytes_weight, object_weight};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

#[test]
fn mean_distance_within_half_a_percent_over_a_million_draws() {
    // The standard deviation of an exponential equals its mean, so the mean of
    // n = 10^6 draws has a relative standard deviation of 1/sqrt(n) = 0.1%:
    // 0.5% is five of them.
    for (interval, seed) in [(512 * KIB, 1), (32 * KIB, 2), (MIB, 3), (100, 4)] {
        let mut distance = SampleDistance::new(interval, seed);
        let n = 1_000_000;
        let sum: u64 = (0..n).map(|_| distance.next_distance()).sum();
        let mean = sum as f64 / n as f64;
        // Whole bytes, floor(D) + 1, add about half a byte to the mean.
        let expected = interval as f64 + 0.5;
        let rel = (mean - expected).abs() / expected;
        assert!(
            rel < 0.005,
            "interval {interval}: mean {mean}, off by {:.3}%",
            rel * 100.0
        );
    }
}

#[test]
fn distances_pass_kolmogorov_smirnov_against_the_exponential() {
    // D_n = sup |F_n(x) - F(x)|. For n = 10^6 the critical value at
    // significance 0.001 is 1.949 / sqrt(n) = 0.00195. Rounding up to whole
    // bytes shifts F by at most 1/T, which is 2e-6 at T = 512 KiB.
    let interval = 512 * KIB;
    let mut distance = SampleDistance::new(interval, 7);
    let n = 1_000_000;
    let mut draws: Vec<u64> = (0..n).map(|_| distance.next_distance()).collect();
    draws.sort_unstable();
    let d = ks_statistic(&draws, |x| 1.0 - (-(x as f64) / interval as f64).exp());
    let critical = 1.949 / (n as f64).sqrt();
    assert!(d < critical, "D = {d}, critical {critical}");

    // The test has power: the same draws against a mean 1% off fail it.
    let wrong = ks_statistic(&draws, |x| {
        1.0 - (-(x as f64) / (interval as f64 * 1.01)).exp()
    });
    assert!(
        wrong > critical,
        "a 1% wrong mean must be detected, D = {wrong}"
    );
}

fn ks_statistic(sorted: &[u64], cdf: impl Fn(u64) -> f64) -> f64 {
    let n = sorted.len() as f64;
    sorted
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// Size classes of the simulated allocation stream: byte ranges and the share
/// of all bytes each one gets. Together they cover 8 B to 4 MiB, both sides of
/// the interval.
const SIZE_CLASSES: [(u64, u64, f64); 7] = [
    (8, 64, 0.08),
    (64, 512, 0.08),
    (512, 4 * KIB, 0.08),
    (4 * KIB, 32 * KIB, 0.08),
    (32 * KIB, 256 * KIB, 0.08),
    (256 * KIB, MIB, 0.20),
    (MIB, 4 * MIB, 0.40),
];

/// Samples a known stream of mixed sizes the way the JVM does (one sampler per
/// thread, each allocation tested against it) and checks the summed weights
/// against the true bytes, in total and per size class.
#[test]
fn summed_weights_estimate_allocated_bytes() {
    // T = 64 KiB and 8 GiB allocated. For objects much smaller than T the
    // relative standard deviation of a class's estimate is about
    // 1/sqrt(samples); the smallest classes get about 10,000 samples (1%, so
    // 5% is five deviations) and the total about 0.2% (2% is ten). Objects
    // larger than T are sampled almost surely, so their estimate varies far
    // less than 1/sqrt(samples); every class has at least 1000 samples.
    let interval = 64 * KIB;
    let total_target = 8 * 1024 * MIB;
    let threads = 4;
    let mut samplers: Vec<AllocationSampler> = (0..threads)
        .map(|t| AllocationSampler::new(interval, 100 + t))
        .collect();
    let mut rng = SmallRng::seed_from_u64(5);

    let classes = SIZE_CLASSES.len();
    let (mut true_bytes, mut est_bytes) = (vec![0u64; classes], vec![0f64; classes]);
    let (mut true_count, mut est_count) = (vec![0u64; classes], vec![0f64; classes]);
    let mut samples = vec![0u64; classes];
    let shares: Vec<f64> = SIZE_CLASSES.iter().map(|c| c.2).collect();
    let mut allocated = 0u64;
    let mut i = 0u64;
    while allocated < total_target {
        // Pick the class whose byte share lags most behind its target, so the
        // stream interleaves classes the way a real program does.
        let class = (0..classes)
            .min_by(|&a, &b| {
                let lag = |c: usize| true_bytes[c] as f64 / shares[c];
                lag(a).total_cmp(&lag(b))
            })
            .unwrap();
        let (low, high, _) = SIZE_CLASSES[class];
        let size = rng.random_range(low..high) & !7; // objects are 8-byte aligned
        true_bytes[class] += size;
        true_count[class] += 1;
        allocated += size;
        if samplers[(i % threads) as usize].on_allocation(size) {
            samples[class] += 1;
            est_bytes[class] += bytes_weight(size, interval);
            est_count[class] += object_weight(size, interval);
        }
        i += 1;
    }

    let total_true: u64 = true_bytes.iter().sum();
    let total_est: f64 = est_bytes.iter().sum();
    let total_rel = (total_est - total_true as f64).abs() / total_true as f64;
    assert!(
        total_rel < 0.02,
        "total bytes off by {:.2}%",
        total_rel * 100.0
    );

    let mut checked = 0;
    for class in 0..classes {
        if samples[class] < 1000 {
            continue;
        }
        checked += 1;
        let rel = (est_bytes[class] - true_bytes[class] as f64).abs() / true_bytes[class] as f64;
        let (low, high, _) = SIZE_CLASSES[class];
        assert!(
            rel < 0.05,
            "class {low}..{high}: {} samples, bytes off by {:.2}%",
            samples[class],
            rel * 100.0
        );
        let count_rel =
            (est_count[class] - true_count[class] as f64).abs() / true_count[class] as f64;
        assert!(
            count_rel < 0.05,
            "class {low}..{high}: object count off by {:.2}%",
            count_rel * 100.0
        );
    }
    assert_eq!(
        checked, classes,
        "every class must have 1000 samples: {samples:?}"
    );
}

/// The naive estimate (each sample counts `interval` bytes, as if every object
/// were small) is visibly wrong on large objects. The check above would catch
/// a weight formula that degenerated into it.
#[test]
fn naive_weight_would_fail_the_large_object_check() {
    let interval = 64 * KIB;
    let mut sampler = AllocationSampler::new(interval, 9);
    let size = 2 * MIB;
    let (mut true_bytes, mut naive, mut unbiased) = (0u64, 0f64, 0f64);
    for _ in 0..10_000 {
        true_bytes += size;
        if sampler.on_allocation(size) {
            naive += interval as f64;
            unbiased += bytes_weight(size, interval);
        }
    }
    assert!((unbiased / true_bytes as f64 - 1.0).abs() < 0.01);
    assert!(naive / (true_bytes as f64) < 0.1);
}

/// The limiter keeps a busy program near the configured rate, and the weights
/// (at the interval in force for each sample) still add up to the bytes.
#[test]
fn rate_limiter_bounds_samples_per_second_and_keeps_weights_unbiased() {
    let max_rate = 5000.0;
    let base = 16 * KIB;
    let mut limiter = RateLimiter::new(max_rate, base, 1 << 31);
    let mut sampler = AllocationSampler::new(base, 11);
    let mut rng = SmallRng::seed_from_u64(12);

    // 30 simulated seconds in 1 ms steps: a quiet phase (1 MiB/s: 64 samples/s
    // at the base interval, far under the limit), a busy one (1 GiB/s: 65,536
    // samples/s if unlimited), then quiet again.
    let unlimited_busy_rate = 65_536.0;
    let phase = |second: u64| {
        if (10..20).contains(&second) {
            1024 * MIB
        } else {
            MIB
        }
    };
    let (mut per_second, mut bytes_per_second) = (vec![0u64; 30], vec![0u64; 30]);
    let (mut true_bytes, mut est_bytes) = (0u64, 0f64);
    for ms in 0..30_000u64 {
        let second = ms / 1000;
        let budget = phase(second) / 1000;
        let (mut used, mut taken) = (0, 0);
        while used < budget {
            let size = rng.random_range(16..2048u64) & !7;
            used += size;
            if sampler.on_allocation(size) {
                taken += 1;
                est_bytes += bytes_weight(size, sampler.interval());
            }
        }
        true_bytes += used;
        bytes_per_second[second as usize] += used;
        per_second[second as usize] += taken;
        if let Some(interval) = limiter.observe(taken, (ms + 1) * 1_000_000) {
            sampler.set_interval(interval);
        }
    }

    // Busy phase after its first second: within [0.8, 1.1] x the limit each
    // second. Poisson noise on 5000 samples is 1.4%; the estimate from one
    // window (1000 samples, 3% noise) rises at once and decays slowly, which
    // biases the rate a little below the limit, never above.
    for (second, &count) in per_second.iter().enumerate().take(20).skip(11) {
        let ratio = count as f64 / max_rate;
        assert!(
            (0.8..1.1).contains(&ratio),
            "second {second}: {count} samples"
        );
    }
    // The burst's first second: at most one 200 ms window unlimited, then limited.
    let first = per_second[10] as f64;
    assert!(
        first < 0.2 * unlimited_busy_rate * 1.05 + 1.1 * max_rate,
        "first busy second: {first}"
    );
    // Quiet again: back to the base interval, every sample kept. The loop
    // overshoots each millisecond's budget, so expect the bytes it really
    // allocated over the base interval (about 100 samples a second, so 500 in
    // five seconds: Poisson noise 22, tolerance 100).
    assert_eq!(limiter.interval(), base);
    let quiet: u64 = per_second[25..30].iter().sum();
    let expected = bytes_per_second[25..30].iter().sum::<u64>() as f64 / base as f64;
    assert!(
        (quiet as f64 - expected).abs() < 100.0,
        "quiet seconds: {quiet} samples, expected {expected}"
    );

    // Total bytes: nearly all are in the busy phase, estimated from about
    // 63,000 samples (0.4% noise): 2% is five deviations.
    let rel = (est_bytes - true_bytes as f64).abs() / true_bytes as f64;
    assert!(
        rel < 0.02,
        "limited sampling misestimates bytes by {:.2}%",
        rel * 100.0
    );
}
