//! Samples a simulated allocation stream the way the JVM does and shows how
//! well the sampled weights estimate what was really allocated.
//!
//! ```text
//! cargo run --release -p heapsampler-core --example simulate -- [INTERVAL_BYTES] [GIB]
//! ```
//!
//! Defaults: the JVM's default interval (512 KiB) and 4 GiB allocated.

use heapsampler_core::sampling::{AllocationSampler, bytes_weight, object_weight};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A mix of object sizes, in bytes, and how often each range is allocated (per mille).
const MIX: [(u64, u64, u32); 6] = [
    (16, 64, 700),
    (64, 512, 250),
    (512, 8 << 10, 45),
    (8 << 10, 256 << 10, 4),
    (256 << 10, 1 << 20, 1),
    (1 << 20, 4 << 20, 1),
];

fn main() {
    let mut args = std::env::args().skip(1);
    let parse = |arg: Option<String>, default: u64, what: &str| match arg {
        None => default,
        Some(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("simulate: {what} must be a whole number, got {text:?}");
            std::process::exit(2)
        }),
    };
    let interval = parse(args.next(), 512 << 10, "INTERVAL_BYTES");
    let total = parse(args.next(), 4, "GIB") << 30;

    let mut sampler = AllocationSampler::new(interval, 1);
    let mut rng = SmallRng::seed_from_u64(2);
    let mut rows = [(0u64, 0u64, 0u64, 0f64, 0f64); MIX.len()];
    let mut allocated = 0;
    while allocated < total {
        let mut pick = rng.random_range(0..1001);
        let class = MIX
            .iter()
            .position(|&(_, _, per_mille)| {
                let hit = pick < per_mille;
                pick = pick.saturating_sub(per_mille);
                hit
            })
            .unwrap_or(MIX.len() - 1);
        let size = rng.random_range(MIX[class].0..MIX[class].1) & !7;
        allocated += size;
        let row = &mut rows[class];
        row.0 += size;
        row.1 += 1;
        if sampler.on_allocation(size) {
            row.2 += 1;
            row.3 += bytes_weight(size, interval);
            row.4 += object_weight(size, interval);
        }
    }

    println!(
        "interval {interval} bytes, {} MiB allocated",
        allocated >> 20
    );
    println!(
        "{:>19} {:>10} {:>10} {:>8} {:>8} {:>8}",
        "object size", "true MiB", "est. MiB", "error", "samples", "obj err"
    );
    for (&(low, high, _), &(bytes, count, samples, est_bytes, est_count)) in MIX.iter().zip(&rows) {
        println!(
            "{:>8} - {:>8} {:>10.1} {:>10.1} {:>7.2}% {:>8} {:>7.2}%",
            low,
            high,
            bytes as f64 / (1 << 20) as f64,
            est_bytes / (1 << 20) as f64,
            100.0 * (est_bytes / bytes as f64 - 1.0),
            samples,
            100.0 * (est_count / count as f64 - 1.0),
        );
    }
    let estimated: f64 = rows.iter().map(|r| r.3).sum();
    let samples: u64 = rows.iter().map(|r| r.2).sum();
    println!(
        "total: {:.1} MiB estimated from {samples} samples, error {:.2}%",
        estimated / (1 << 20) as f64,
        100.0 * (estimated / allocated as f64 - 1.0)
    );
}
