//! Benchmarks of the sampling core: the costs the agent pays per allocation
//! sample (a distance draw, a weight, a ring-buffer push) and per garbage
//! collection (a liveness sweep, a watch's checkpoint), and what the
//! converter pays per sampled object for live series.
//!
//! Run with `cargo bench -p heapsampler-core --bench core`; results and the
//! targets are in BENCHMARKS.md.

use std::hint::black_box;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use heapsampler_core::growth::{Growth, GrowthTest, LiveSeries};
use heapsampler_core::liveness::{LivenessTable, TrackedObject};
use heapsampler_core::ring::ring_buffer;
use heapsampler_core::sampling::{SampleDistance, bytes_weight};
use heapsampler_core::watch::{MAX_SITES, Watch};

fn sampling(c: &mut Criterion) {
    let mut group = c.benchmark_group("sampling");
    group.throughput(Throughput::Elements(1));
    let mut distance = SampleDistance::new(512 * 1024, 1);
    group.bench_function("next_distance", |b| b.iter(|| distance.next_distance()));
    let mut size = 16u64;
    group.bench_function("bytes_weight", |b| {
        b.iter(|| {
            // Vary the size so the call cannot be hoisted out of the loop.
            size = (size * 33) & 0xf_fff8 | 16;
            bytes_weight(black_box(size), black_box(512 * 1024))
        })
    });
    group.finish();
}

/// Pushes `records` records of `LEN` bytes from `producers` threads through
/// a 256 KiB ring to a consumer on this thread; returns the time from the
/// start signal until the consumer has them all.
fn ring_run<const LEN: usize>(producers: u64, records: u64) -> Duration {
    let (producer, mut consumer) = ring_buffer(256 * 1024);
    let start = Barrier::new(producers as usize + 1);
    thread::scope(|scope| {
        for p in 0..producers {
            let (producer, start) = (producer.clone(), &start);
            let count = records / producers + u64::from(p < records % producers);
            scope.spawn(move || {
                let mut record = [0u8; LEN];
                start.wait();
                for seq in 0..count {
                    record[..8].copy_from_slice(&seq.to_le_bytes());
                    producer.push(&record).unwrap();
                }
            });
        }
        start.wait();
        let began = Instant::now();
        let mut received = 0u64;
        let mut checksum = 0u64;
        while received < records {
            received += consumer.drain(|r| checksum = checksum.wrapping_add(r[0] as u64)) as u64;
            consumer.wait(Duration::from_millis(10));
        }
        black_box(checksum);
        began.elapsed()
    })
}

fn ring(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring_64B_records");
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    for producers in [1, 2, 4] {
        group.bench_function(format!("{producers}_producers"), |b| {
            b.iter_custom(|iters| ring_run::<64>(producers, iters))
        });
    }
    group.finish();
    // The agent's record of a 64-frame stack: a 56-byte header, 10 bytes
    // a frame.
    let mut group = c.benchmark_group("ring_696B_records");
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    group.bench_function("1_producers", |b| {
        b.iter_custom(|iters| ring_run::<696>(1, iters))
    });
    group.finish();
    // The consumer alone, as the agent's writer drains: a 4 MiB ring filled
    // with 696-byte records (not timed), drained in batches of 64.
    const RECORDS: u64 = 5_000;
    let mut group = c.benchmark_group("ring_drain_696B_records");
    group.throughput(Throughput::Elements(RECORDS));
    group.bench_function("batches_of_64", |b| {
        let (producer, mut consumer) = ring_buffer(4 << 20);
        let record = [7u8; 696];
        b.iter_batched(
            || (0..RECORDS).for_each(|_| producer.push(&record).unwrap()),
            |()| {
                let mut checksum = 0u64;
                let drained = consumer.drain_batches(64, |batch| {
                    batch.iter().for_each(|r| checksum += r[695] as u64)
                });
                assert_eq!(drained as u64, RECORDS);
                checksum
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn liveness(c: &mut Criterion) {
    let mut group = c.benchmark_group("liveness");
    const ENTRIES: u64 = 100_000;
    group.throughput(Throughput::Elements(ENTRIES));
    group.bench_function("sweep_100k_10pct_dead", |b| {
        b.iter_batched(
            || {
                let mut table = LivenessTable::new();
                for id in 0..ENTRIES {
                    let object = TrackedObject {
                        handle: id,
                        allocation_time: id,
                        size: 64,
                        weight: 524_288,
                        gc_count_at_allocation: 0,
                    };
                    table.track(object);
                }
                table
            },
            |mut table| {
                let mut dead = 0u64;
                table.sweep(1, |h| h % 10 == 0, |d| dead += d.object.size);
                (table, dead)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// A million sampled objects over a thousand sites and 300 checkpoints, as
/// the converter builds one series per site: the adds, then every site's
/// estimates and growth.
fn live(c: &mut Criterion) {
    const SAMPLES: u64 = 1_000_000;
    const SITES: usize = 1000;
    const CHECKPOINTS: usize = 300;
    let seconds: Vec<f64> = (1..=CHECKPOINTS).map(|c| c as f64 * 12.0).collect();
    let build = || {
        let mut sites = vec![LiveSeries::new(CHECKPOINTS); SITES];
        // A fixed pseudo-random stream of ranges (an LCG): most objects
        // live a few checkpoints, every 16th to the end.
        let mut state = 1u64;
        for n in 0..SAMPLES {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let start = (state >> 33) as usize % CHECKPOINTS;
            let end = if n % 16 == 0 {
                CHECKPOINTS
            } else {
                start + (state >> 20) as usize % 8
            };
            let site = ((state >> 40) as usize % SITES) * (n as usize % 7 + 1) % SITES;
            sites[site].add(start..end, 524_300.0, Some(24));
        }
        sites
    };
    let mut group = c.benchmark_group("live");
    group.sample_size(10);
    group.throughput(Throughput::Elements(SAMPLES));
    group.bench_function("add_1m_samples_1000_sites", |b| b.iter(build));
    let sites = build();
    let memory: usize = sites.iter().map(LiveSeries::memory_bytes).sum();
    eprintln!("live series of 1000 sites, 1M samples: {memory} bytes");
    let test = GrowthTest::new(&seconds).expect("checkpoints enough for a verdict");
    group.bench_function("estimates_and_growth_1000_sites", |b| {
        b.iter(|| {
            sites
                .iter()
                .map(|site| test.fit(&site.estimates()))
                .filter(Growth::is_suspect)
                .count()
        })
    });
    group.finish();
}

/// What the agent's writer thread pays per checkpoint of a watch whose
/// table is full: 256 sites (and the rest) of steady live samples, each
/// with three days of history at every scale, tested over every window.
fn watch(c: &mut Criterion) {
    let mut watch = Watch::new();
    for site in 0..MAX_SITES as u64 {
        for _ in 0..8 + site % 5 {
            watch.enter(site, 524_800.0, 1024);
        }
    }
    let mut seconds = 0.0;
    while seconds < 3.0 * 86400.0 {
        seconds += 10.0;
        watch.checkpoint(seconds);
    }
    let mut group = c.benchmark_group("watch");
    group.bench_function("checkpoint_256_sites", |b| {
        b.iter(|| {
            seconds += 1.0;
            black_box(watch.checkpoint(seconds))
        })
    });
    group.finish();
}

// The macro defines an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, sampling, ring, liveness, live, watch);
}
criterion_main!(group::benches);
