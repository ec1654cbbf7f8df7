//! The ring buffer under load: nothing lost, nothing duplicated, per-producer
//! order kept, producers held back (not dropped) by a slow consumer, and a
//! close that releases producers blocked on a full ring.

use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use heapsampler_core::ring::{Consumer, Producer, PushError, WaitOutcome, ring_buffer};

/// A record: producer id, sequence number, then a filler whose length varies
/// with the sequence (0 to 48 bytes) and whose bytes are derived from both, so
/// a torn or misplaced record is caught.
fn record(producer: u32, seq: u64, buf: &mut Vec<u8>) {
    buf.clear();
    buf.extend_from_slice(&producer.to_le_bytes());
    buf.extend_from_slice(&seq.to_le_bytes());
    let filler = (seq % 49) as usize;
    buf.extend((0..filler).map(|i| (seq as usize + i + producer as usize) as u8));
}

fn check_record(bytes: &[u8]) -> (u32, u64) {
    let producer = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    let seq = u64::from_le_bytes(bytes[4..12].try_into().unwrap());
    let mut expected = Vec::new();
    record(producer, seq, &mut expected);
    assert_eq!(bytes, &expected[..], "record {producer}/{seq} is torn");
    (producer, seq)
}

fn spawn_producers(producer: &Producer, count: u32, records: u64) -> Vec<thread::JoinHandle<()>> {
    (0..count)
        .map(|id| {
            let producer = producer.clone();
            thread::spawn(move || {
                let mut buf = Vec::new();
                for seq in 0..records {
                    record(id, seq, &mut buf);
                    producer.push(&buf).expect("the ring is open");
                }
            })
        })
        .collect()
}

#[test]
fn eight_producers_a_million_records_each_through_a_tiny_ring() {
    const PRODUCERS: u32 = 8;
    const RECORDS: u64 = 1_000_000;
    // 4 KiB holds about 80 of these records (12 to 60 bytes plus a header).
    let (producer, mut consumer) = ring_buffer(4096);
    let handles = spawn_producers(&producer, PRODUCERS, RECORDS);

    let mut next_seq = vec![0u64; PRODUCERS as usize];
    let mut received = 0u64;
    while received < PRODUCERS as u64 * RECORDS {
        consumer.drain(|bytes| {
            let (id, seq) = check_record(bytes);
            assert_eq!(
                seq, next_seq[id as usize],
                "producer {id}: out of order or duplicated"
            );
            next_seq[id as usize] += 1;
            received += 1;
            // Deliberately slow: every 4096th record the consumer naps, long
            // enough for every producer to fill the ring and wait.
            if received.is_multiple_of(4096) {
                thread::sleep(Duration::from_micros(200));
            }
        });
        consumer.wait(Duration::from_secs(1));
    }
    for handle in handles {
        handle.join().unwrap();
    }
    assert!(
        next_seq.iter().all(|&n| n == RECORDS),
        "every record arrived: {next_seq:?}"
    );
    consumer.close();
    assert_eq!(consumer.drain(|_| panic!("nothing is left")), 0);
    assert_eq!(consumer.wait(Duration::from_secs(1)), WaitOutcome::Finished);

    let stats = consumer.stats();
    assert_eq!(stats.records, PRODUCERS as u64 * RECORDS);
    assert!(
        stats.producer_waits > 0,
        "a slow consumer must make producers wait"
    );
    assert!(stats.producer_wait_time > Duration::ZERO);
    // Full means: less room left than the largest record (8 + 60 bytes).
    assert!(
        stats.high_water_bytes > stats.capacity_bytes - 68,
        "the ring was full: {stats:?}"
    );
    assert!(stats.high_water_bytes <= stats.capacity_bytes);
}

#[test]
fn close_releases_producers_blocked_on_a_full_ring() {
    let (producer, mut consumer) = ring_buffer(256);
    let started = Barrier::new(5);
    let pushed = thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (producer, started) = (producer.clone(), &started);
                scope.spawn(move || {
                    started.wait();
                    let mut pushed = 0u64;
                    // Nobody consumes: each producer soon blocks on a full ring.
                    loop {
                        match producer.push(&[7; 24]) {
                            Ok(()) => pushed += 1,
                            Err(PushError::Closed) => return pushed,
                            Err(other) => panic!("unexpected {other}"),
                        }
                    }
                })
            })
            .collect();
        started.wait();
        // Wait until all four are blocked: the ring is full and each has waited.
        while producer.stats().producer_waits < 4 {
            thread::sleep(Duration::from_millis(1));
        }
        consumer.close();
        handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
    });
    // What was accepted before the close is still there, and only that.
    let mut drained = 0u64;
    while consumer.wait(Duration::from_secs(1)) == WaitOutcome::Ready {
        drained += consumer.drain(|r| assert_eq!(r, &[7; 24])) as u64;
    }
    assert_eq!(drained, pushed);
    assert_eq!(
        pushed,
        256 / 32,
        "a 256-byte ring holds eight 24-byte records"
    );
    assert!(consumer.is_finished());
}

#[test]
fn a_parked_consumer_is_woken_by_a_push() {
    let (producer, mut consumer) = ring_buffer(1024);
    let handle = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        producer.push(b"wake up").unwrap();
        producer
    });
    // A long timeout: returning Ready well before it means the push woke us.
    assert_eq!(consumer.wait(Duration::from_secs(60)), WaitOutcome::Ready);
    let mut got = Vec::new();
    consumer.drain(|r| got.push(r.to_vec()));
    assert_eq!(got, vec![b"wake up".to_vec()]);
    handle.join().unwrap();
}

#[test]
fn a_consumer_with_a_batch_sleeps_until_the_batch_is_there() {
    // Records of 24 bytes take 32 in the ring (a header word): a batch of
    // 512 bytes is 16 of them.
    let (producer, mut consumer) = ring_buffer(4096);
    consumer.set_batch(512);
    let handle = thread::spawn(move || {
        for seq in 0..64u64 {
            let mut record = [0u8; 24];
            record[..8].copy_from_slice(&seq.to_le_bytes());
            producer.push(&record).unwrap();
            // Slow enough that a consumer woken by every push would see
            // one record at a time.
            thread::sleep(Duration::from_millis(1));
        }
        producer.push(&[0xff; 8]).unwrap();
        producer.close();
    });
    let mut batches = Vec::new();
    let mut next = 0u64;
    // Timeouts far longer than the test: each return is a batch or the close.
    while consumer.wait(Duration::from_secs(60)) == WaitOutcome::Ready {
        let drained = consumer.drain(|r| {
            if r.len() == 24 {
                assert_eq!(u64::from_le_bytes(r[..8].try_into().unwrap()), next);
                next += 1;
            }
        });
        batches.push(drained);
    }
    handle.join().unwrap();
    assert_eq!(next, 64);
    assert_eq!(batches.iter().sum::<usize>(), 65);
    // Every return but the one after the close had a whole batch.
    let (last, full) = batches.split_last().unwrap();
    assert!(
        full.iter().all(|&n| n >= 16),
        "woken before a batch was there: {batches:?}"
    );
    assert!(*last >= 1);
}

#[test]
fn a_producer_can_wake_a_batched_consumer_at_once() {
    let (producer, mut consumer) = ring_buffer(4096);
    consumer.set_batch(2048);
    // Asked before the wait: it returns at once, one record short of a batch.
    producer.push(b"now").unwrap();
    producer.wake_consumer();
    assert_eq!(consumer.wait(Duration::from_secs(60)), WaitOutcome::Woken);
    assert_eq!(consumer.drain(|r| assert_eq!(r, b"now")), 1);
    // Asked while it waits (or before: the outcome is the same).
    let handle = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        producer.push(b"again").unwrap();
        producer.wake_consumer();
        producer
    });
    assert_eq!(consumer.wait(Duration::from_secs(60)), WaitOutcome::Woken);
    handle.join().unwrap();
    assert_eq!(consumer.drain(|r| assert_eq!(r, b"again")), 1);
    // A request is used once.
    assert_eq!(
        consumer.wait(Duration::from_millis(1)),
        WaitOutcome::TimedOut
    );
}

#[test]
fn a_batched_consumer_under_back_pressure_loses_nothing() {
    // The batch is half the ring: producers fill it and must wake the
    // consumer themselves, again and again.
    let (producer, mut consumer) = ring_buffer(4096);
    consumer.set_batch(2048);
    let handles = spawn_producers(&producer, 4, 200_000);
    drop(producer);
    let mut next = [0u64; 4];
    drain_until(&mut consumer, 800_000, |bytes| {
        let (id, seq) = check_record(bytes);
        assert_eq!(seq, next[id as usize]);
        next[id as usize] += 1;
    });
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(next, [200_000; 4]);
    assert!(consumer.stats().producer_waits > 0);
}

/// Producers and a consumer that keeps up, with records that wrap the ring at
/// every offset: the exactly-once, in-order check without back-pressure.
#[test]
fn two_producers_with_a_fast_consumer() {
    let (producer, mut consumer) = ring_buffer(1 << 16);
    let handles = spawn_producers(&producer, 2, 200_000);
    drop(producer);
    let mut next = [0u64; 2];
    drain_until(&mut consumer, 400_000, |bytes| {
        let (id, seq) = check_record(bytes);
        assert_eq!(seq, next[id as usize]);
        next[id as usize] += 1;
    });
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(next, [200_000, 200_000]);
}

fn drain_until(consumer: &mut Consumer, total: u64, mut on_record: impl FnMut(&[u8])) {
    let mut received = 0u64;
    while received < total {
        received += consumer.drain(&mut on_record) as u64;
        consumer.wait(Duration::from_secs(1));
    }
}

#[test]
fn batches_hand_over_every_record_in_order_and_at_most_so_many_at_once() {
    // Two producers through a ring of about 80 records, drained in
    // batches of 1, 3 and 64: each producer's records come whole and in
    // order, and no batch is empty or larger than asked.
    for max in [1, 3, 64] {
        const RECORDS: u64 = 20_000;
        let (producer, mut consumer) = ring_buffer(4096);
        let handles = spawn_producers(&producer, 2, RECORDS);
        let mut next_seq = [0u64; 2];
        let mut received = 0;
        while received < 2 * RECORDS {
            let drained = consumer.drain_batches(max, |batch| {
                assert!(!batch.is_empty() && batch.len() <= max, "{}", batch.len());
                assert_eq!(batch.iter().count(), batch.len());
                for bytes in batch.iter() {
                    let (id, seq) = check_record(bytes);
                    assert_eq!(seq, next_seq[id as usize], "producer {id}");
                    next_seq[id as usize] += 1;
                }
            });
            received += drained as u64;
        }
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(next_seq, [RECORDS; 2]);
    }
}

/// Resident memory of this process, in bytes (Linux).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn a_new_ring_is_in_memory_before_the_first_push() {
    // Producers push from the JVM's allocating threads: a page of the ring
    // first written there is a page fault in an allocation. A 64 MiB ring
    // is resident once made; the other tests of this binary, running
    // alongside, hold a few KiB each.
    const SIZE: u64 = 64 << 20;
    let before = resident_bytes();
    let (producer, consumer) = ring_buffer(SIZE as usize);
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown >= SIZE * 15 / 16, "{grown} bytes resident more");
    drop((producer, consumer));
}
