//! A bounded ring buffer of variable-size records, many producers and one
//! consumer, that never drops a record: when it is full, a producer waits until
//! the consumer has made room (back-pressure).
//!
//! # How it works
//!
//! The buffer is an array of 64-bit words. A record is one header word
//! (`COMMITTED | length in bytes`) followed by its bytes, padded to whole words;
//! records wrap around the end of the array freely.
//!
//! - A producer reserves space by advancing `tail` with a compare-and-swap (so
//!   the records of one producer keep their order), copies its bytes in, then
//!   publishes the header with a release store.
//! - The consumer reads records from `head` in reservation order while their
//!   header is committed, zeroes the words it has read (so that a stale header
//!   is never mistaken for a new one), and advances `head`. It copies each
//!   record out before handing it over, alone or in a batch of the next few
//!   ([`Consumer::drain_batches`]).
//! - A producer that finds no room waits on a condition variable; the consumer
//!   wakes waiting producers after it advances `head`. A consumer with too
//!   little to read waits likewise, and the producer whose record brings the
//!   ring to the consumer's batch size ([`Consumer::set_batch`]) wakes it:
//!   with a batch, a busy consumer is woken once per batch, not once per
//!   record. Both hand-offs use the store-then-load pattern on sequentially
//!   consistent atomics, so a wake-up is never lost; the waits also time out
//!   as a second line of defence.
//! - [`Producer::close`] (or [`Consumer::close`]) sets a bit in `tail`: no
//!   reservation succeeds after it, waiting producers return
//!   [`PushError::Closed`] at once, and the consumer drains what was reserved
//!   before.
//!
//! Everything shared is an atomic, so this module needs no `unsafe`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// Set in `tail` once the ring is closed.
const CLOSED: u64 = 1 << 63;
/// Set in a header word once its record's bytes are all written.
const COMMITTED: u64 = 1 << 63;
/// Bytes per word.
const WORD: usize = 8;
/// Bytes per page of memory (the smallest on the machines the agent runs on).
const PAGE: usize = 4096;
/// Waits time out after this long and check again: not needed for
/// correctness, but a cheap guard against a wake-up lost to a bug.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// Why a record was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PushError {
    /// The ring was closed; nothing more is accepted.
    #[error("the ring buffer is closed")]
    Closed,
    /// The record can never fit, even in an empty ring.
    #[error(
        "a record of {len} bytes does not fit a ring buffer that holds records of at most {max} bytes"
    )]
    TooLarge {
        /// The record's length in bytes.
        len: usize,
        /// The largest record this ring holds, in bytes.
        max: usize,
    },
}

/// What the ring has seen: it reaches the recording as agent statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingStats {
    /// The ring's capacity in bytes (headers included).
    pub capacity_bytes: u64,
    /// Records handed to the consumer so far.
    pub records: u64,
    /// Payload bytes handed to the consumer so far.
    pub bytes: u64,
    /// How many times a producer found the ring full and waited (counted when
    /// the wait begins).
    pub producer_waits: u64,
    /// The total time producers spent waiting, for waits that have ended.
    pub producer_wait_time: Duration,
    /// The most bytes ever reserved and not yet consumed (headers and padding
    /// included): how close the ring came to full.
    pub high_water_bytes: u64,
}

/// Keeps a hot atomic on a cache line (pair) of its own: producers
/// advancing `tail` do not slow the consumer's `head` and the reverse, and
/// a counter every producer adds to does not slow the reads of what lies
/// next to it.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CachePadded<T>(pub T);

#[derive(Debug)]
struct Shared {
    words: Box<[AtomicU64]>,
    /// `words.len() - 1`; the length is a power of two.
    mask: u64,
    /// Next word to reserve (monotonic), with [`CLOSED`] once closed.
    tail: CachePadded<AtomicU64>,
    /// Next word the consumer reads (monotonic); only the consumer stores it.
    head: CachePadded<AtomicU64>,

    producers_waiting: AtomicU64,
    room_lock: Mutex<()>,
    room: Condvar,

    consumer_parked: AtomicBool,
    /// Words reserved and not yet consumed at which a producer wakes the
    /// parked consumer (at least 1).
    batch_words: AtomicU64,
    /// A producer asked the consumer to act now ([`Producer::wake_consumer`]).
    wake_requested: AtomicBool,
    data_lock: Mutex<()>,
    data: Condvar,

    records: AtomicU64,
    bytes: AtomicU64,
    producer_waits: AtomicU64,
    producer_wait_ns: AtomicU64,
    high_water_words: AtomicU64,
}

/// Creates a ring of at least `capacity_bytes` bytes (rounded up to a power of
/// two, 64 bytes at least) and returns its two ends.
///
/// A record takes its length rounded up to 8 bytes, plus an 8-byte header; the
/// largest record is [`Producer::max_record_len`].
pub fn ring_buffer(capacity_bytes: usize) -> (Producer, Consumer) {
    let len = capacity_bytes.div_ceil(WORD).max(8).next_power_of_two();
    let words: Box<[AtomicU64]> = (0..len).map(|_| AtomicU64::new(0)).collect();
    // Written once now: a zeroed allocation this large is mapped a page at
    // a time on first write, and the first pass of producers through the
    // ring would take those page faults in their allocations.
    for word in words.iter().step_by(PAGE / WORD) {
        word.store(0, Ordering::Relaxed);
    }
    let shared = Arc::new(Shared {
        words,
        mask: len as u64 - 1,
        tail: CachePadded::default(),
        head: CachePadded::default(),
        producers_waiting: AtomicU64::new(0),
        room_lock: Mutex::new(()),
        room: Condvar::new(),
        consumer_parked: AtomicBool::new(false),
        batch_words: AtomicU64::new(1),
        wake_requested: AtomicBool::new(false),
        data_lock: Mutex::new(()),
        data: Condvar::new(),
        records: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        producer_waits: AtomicU64::new(0),
        producer_wait_ns: AtomicU64::new(0),
        high_water_words: AtomicU64::new(0),
    });
    (
        Producer {
            shared: Arc::clone(&shared),
        },
        Consumer {
            shared,
            head: 0,
            scratch: Vec::new(),
            ends: Vec::new(),
        },
    )
}

impl Shared {
    fn capacity_words(&self) -> u64 {
        self.mask + 1
    }

    fn word(&self, position: u64) -> &AtomicU64 {
        &self.words[(position & self.mask) as usize]
    }

    /// The `count` words from `position` on (`count` at most the ring's
    /// capacity): the run up to the array's end, then the rest from its
    /// start.
    fn words_from(&self, position: u64, count: usize) -> (&[AtomicU64], &[AtomicU64]) {
        let (wrapped, run) = self.words.split_at((position & self.mask) as usize);
        let in_run = count.min(run.len());
        (&run[..in_run], &wrapped[..count - in_run])
    }

    fn close(&self) {
        self.tail.0.fetch_or(CLOSED, Ordering::SeqCst);
        // Take each lock before notifying so a waiter between its check and
        // its wait cannot miss this.
        drop(self.room_lock.lock());
        self.room.notify_all();
        drop(self.data_lock.lock());
        self.data.notify_all();
    }

    /// Wakes the consumer if it is parked.
    fn wake_consumer(&self) {
        if self.consumer_parked.load(Ordering::SeqCst) {
            // Take the lock so a consumer between its check and its wait
            // cannot miss this.
            drop(self.data_lock.lock());
            self.data.notify_one();
        }
    }

    fn is_closed(&self) -> bool {
        self.tail.0.load(Ordering::SeqCst) & CLOSED != 0
    }

    fn stats(&self) -> RingStats {
        RingStats {
            capacity_bytes: self.capacity_words() * WORD as u64,
            records: self.records.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            producer_waits: self.producer_waits.load(Ordering::Relaxed),
            producer_wait_time: Duration::from_nanos(self.producer_wait_ns.load(Ordering::Relaxed)),
            high_water_bytes: self.high_water_words.load(Ordering::Relaxed) * WORD as u64,
        }
    }

    /// Blocks until `needed` words could fit after `tail`'s current position,
    /// or the ring is closed.
    fn wait_for_room(&self, needed: u64) -> Result<(), PushError> {
        let started = Instant::now();
        // Counted as it begins, so a producer blocked right now shows up.
        self.producer_waits.fetch_add(1, Ordering::Relaxed);
        self.producers_waiting.fetch_add(1, Ordering::SeqCst);
        // A full ring holds more than a batch, so the consumer was woken
        // already; this only makes sure.
        self.wake_consumer();
        let mut guard = self.room_lock.lock();
        let result = loop {
            let tail = self.tail.0.load(Ordering::SeqCst);
            if tail & CLOSED != 0 {
                break Err(PushError::Closed);
            }
            // No subtraction: `head` read after `tail` may already be past it.
            if tail + needed <= self.head.0.load(Ordering::SeqCst) + self.capacity_words() {
                break Ok(());
            }
            self.room.wait_for(&mut guard, WAIT_SLICE);
        };
        drop(guard);
        self.producers_waiting.fetch_sub(1, Ordering::SeqCst);
        let waited = started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        self.producer_wait_ns.fetch_add(waited, Ordering::Relaxed);
        result
    }
}

/// The writing end: cheap to clone, shared by every producing thread.
#[derive(Debug, Clone)]
pub struct Producer {
    shared: Arc<Shared>,
}

impl Producer {
    /// The largest record this ring can hold, in bytes.
    pub fn max_record_len(&self) -> usize {
        ((self.shared.capacity_words() - 1) as usize * WORD).min(u32::MAX as usize)
    }

    /// Appends one record. When the ring is full, waits until the consumer has
    /// made room: it never drops the record. Fails at once if the ring is
    /// closed, or if the record could never fit.
    pub fn push(&self, record: &[u8]) -> Result<(), PushError> {
        if record.len() > self.max_record_len() {
            return Err(PushError::TooLarge {
                len: record.len(),
                max: self.max_record_len(),
            });
        }
        let shared = &*self.shared;
        let needed = 1 + record.len().div_ceil(WORD) as u64;
        let mut tail = shared.tail.0.load(Ordering::Relaxed);
        let start = loop {
            if tail & CLOSED != 0 {
                return Err(PushError::Closed);
            }
            let head = shared.head.0.load(Ordering::Acquire);
            if tail + needed > head + shared.capacity_words() {
                shared.wait_for_room(needed)?;
                tail = shared.tail.0.load(Ordering::Relaxed);
                continue;
            }
            // SeqCst: pairs with the consumer's check of `tail` before it parks.
            match shared.tail.0.compare_exchange_weak(
                tail,
                tail + needed,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => break tail,
                Err(current) => tail = current,
            }
        };

        let mut chunks = record.chunks_exact(WORD);
        let mut position = start + 1;
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().expect("chunks_exact gives 8 bytes"));
            shared.word(position).store(word, Ordering::Relaxed);
            position += 1;
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; WORD];
            last[..rest.len()].copy_from_slice(rest);
            shared
                .word(position)
                .store(u64::from_le_bytes(last), Ordering::Relaxed);
        }
        // Release: the consumer that sees the header sees the bytes.
        shared
            .word(start)
            .store(COMMITTED | record.len() as u64, Ordering::Release);

        // The consumer may already have read this record: saturate.
        let used = (start + needed).saturating_sub(shared.head.0.load(Ordering::Acquire));
        if used > shared.high_water_words.load(Ordering::Relaxed) {
            shared.high_water_words.fetch_max(used, Ordering::Relaxed);
        }
        // SeqCst load of `consumer_parked` after the SeqCst reservation: either
        // a parking consumer sees this record, or this sees it parked. The
        // producer whose record ends past the batch is the one that wakes it.
        if used >= shared.batch_words.load(Ordering::Relaxed) {
            shared.wake_consumer();
        }
        Ok(())
    }

    /// Makes the consumer's [`Consumer::wait`] return now, whatever its
    /// batch, with [`WaitOutcome::Woken`]: for a producer that knows the
    /// consumer must act now.
    pub fn wake_consumer(&self) {
        // SeqCst store, then the SeqCst load of `consumer_parked`: either
        // the consumer sees the request before it parks, or this sees it
        // parked and wakes it.
        self.shared.wake_requested.store(true, Ordering::SeqCst);
        self.shared.wake_consumer();
    }

    /// Closes the ring: later pushes, and pushes waiting for room, fail with
    /// [`PushError::Closed`]; the consumer still drains what was pushed before.
    pub fn close(&self) {
        self.shared.close();
    }

    /// Whether the ring is closed.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// The counters so far.
    pub fn stats(&self) -> RingStats {
        self.shared.stats()
    }
}

/// The reading end. There is exactly one: it is not `Clone`.
#[derive(Debug)]
pub struct Consumer {
    shared: Arc<Shared>,
    /// The consumer's own copy of `shared.head`, published in batches.
    head: u64,
    /// Records are copied out of the ring into this, one after another,
    /// before the callback sees them.
    scratch: Vec<u8>,
    /// Where each record in `scratch` ends.
    ends: Vec<usize>,
}

/// Records drained from the ring, in order ([`Consumer::drain_batches`]).
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    bytes: &'a [u8],
    ends: &'a [usize],
}

impl<'a> Batch<'a> {
    /// The records, in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + Clone + 'a {
        let bytes = self.bytes;
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends)
            .map(move |(start, &end)| &bytes[start..end])
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none (never, as handed over).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// Why [`Consumer::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Records are waiting to be drained: a batch of them, or fewer once the
    /// timeout passed or the ring was closed.
    Ready,
    /// The timeout passed with nothing to read.
    TimedOut,
    /// A producer asked for the consumer now ([`Producer::wake_consumer`]),
    /// whether or not a batch is there.
    Woken,
    /// The ring is closed and everything in it has been drained.
    Finished,
}

impl Consumer {
    /// Sets how many bytes (headers included) must be waiting before
    /// [`Consumer::wait`] returns early, before its timeout; at most half
    /// the ring. The default, 0, returns as soon as any record is there.
    ///
    /// Waking a consumer costs two context switches; a consumer that keeps
    /// up with many records a second does better to sleep and take them a
    /// batch at a time. A full ring always wakes it.
    pub fn set_batch(&mut self, bytes: usize) {
        let words = (bytes.div_ceil(WORD) as u64).clamp(1, self.shared.capacity_words() / 2);
        self.shared.batch_words.store(words, Ordering::Relaxed);
    }

    /// Hands every record reserved before this call to `on_record`, in
    /// reservation order (so each producer's records in the order it pushed
    /// them), and returns how many there were. Stops early at a record whose
    /// producer is still copying it in; the next call picks it up.
    pub fn drain(&mut self, mut on_record: impl FnMut(&[u8])) -> usize {
        self.drain_batches(1, |batch| batch.iter().for_each(&mut on_record))
    }

    /// As [`Consumer::drain`], but hands the records over up to
    /// `max_records` at a time, so that the consumer can look at a batch's
    /// records before it handles them one by one (and start the memory
    /// loads each needs together, say).
    pub fn drain_batches(
        &mut self,
        max_records: usize,
        mut on_batch: impl FnMut(&Batch<'_>),
    ) -> usize {
        let max_records = max_records.max(1);
        let shared = &*self.shared;
        let end = shared.tail.0.load(Ordering::Acquire) & !CLOSED;
        // Publish `head` at least every quarter of the ring, so producers
        // waiting for room do not wait for a long drain to finish.
        let publish_every = (shared.capacity_words() / 4).max(1);
        let mut published = self.head;
        let (mut records, mut bytes) = (0usize, 0u64);
        self.scratch.clear();
        self.ends.clear();
        while self.head < end {
            let header = shared.word(self.head).load(Ordering::Acquire);
            if header & COMMITTED == 0 {
                break;
            }
            let len = (header & u32::MAX as u64) as usize;
            let payload_words = len.div_ceil(WORD) as u64;
            let start = self.scratch.len();
            self.scratch
                .resize(start + payload_words as usize * WORD, 0);
            let (run, wrapped) = shared.words_from(self.head + 1, payload_words as usize);
            let copied = self.scratch[start..].chunks_exact_mut(WORD);
            for (bytes, word) in copied.zip(run.iter().chain(wrapped)) {
                bytes.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
                word.store(0, Ordering::Relaxed);
            }
            shared.word(self.head).store(0, Ordering::Relaxed);
            self.scratch.truncate(start + len);
            self.ends.push(self.scratch.len());
            self.head += 1 + payload_words;
            records += 1;
            bytes += len as u64;
            // The batch's records are out of the ring: its room can go
            // back before they are handled.
            if self.head - published >= publish_every {
                self.publish_head();
                published = self.head;
            }
            if self.ends.len() == max_records {
                on_batch(&Batch {
                    bytes: &self.scratch,
                    ends: &self.ends,
                });
                self.scratch.clear();
                self.ends.clear();
            }
        }
        if self.head != published {
            self.publish_head();
        }
        if !self.ends.is_empty() {
            on_batch(&Batch {
                bytes: &self.scratch,
                ends: &self.ends,
            });
        }
        shared.records.fetch_add(records as u64, Ordering::Relaxed);
        shared.bytes.fetch_add(bytes, Ordering::Relaxed);
        records
    }

    /// Makes the space before `head` available to producers and wakes those
    /// waiting for it.
    fn publish_head(&self) {
        let shared = &*self.shared;
        // SeqCst store, then SeqCst load of the waiter count: either a waiting
        // producer sees the new head, or we see it waiting and wake it.
        shared.head.0.store(self.head, Ordering::SeqCst);
        if shared.producers_waiting.load(Ordering::SeqCst) > 0 {
            drop(shared.room_lock.lock());
            shared.room.notify_all();
        }
    }

    /// Waits until a batch of records is there to drain (see
    /// [`Consumer::set_batch`]), the ring is closed, or `timeout` passes;
    /// returns [`WaitOutcome::Ready`] if anything at all can be drained then.
    pub fn wait(&mut self, timeout: Duration) -> WaitOutcome {
        let shared = &*self.shared;
        let deadline = Instant::now() + timeout;
        loop {
            if shared.wake_requested.swap(false, Ordering::SeqCst) {
                return WaitOutcome::Woken;
            }
            let tail = shared.tail.0.load(Ordering::SeqCst);
            let waiting = (tail & !CLOSED) - self.head;
            let now = Instant::now();
            let enough = waiting >= shared.batch_words.load(Ordering::Relaxed)
                || tail & CLOSED != 0
                || now >= deadline;
            if waiting > 0 && enough {
                if shared.word(self.head).load(Ordering::Acquire) & COMMITTED != 0 {
                    return WaitOutcome::Ready;
                }
                // Reserved but still being copied in: only a memcpy away.
                if now >= deadline {
                    return WaitOutcome::TimedOut;
                }
                std::thread::yield_now();
                continue;
            }
            if tail & CLOSED != 0 {
                return WaitOutcome::Finished;
            }
            if now >= deadline {
                return WaitOutcome::TimedOut;
            }
            let mut guard = shared.data_lock.lock();
            shared.consumer_parked.store(true, Ordering::SeqCst);
            // SeqCst: pairs with a producer's reservation then its load of
            // `consumer_parked`: either we see its record or it sees us
            // parked. An unchanged `tail` also means "not closed"; likewise
            // for a wake request and `Producer::wake_consumer`.
            if shared.tail.0.load(Ordering::SeqCst) == tail
                && !shared.wake_requested.load(Ordering::SeqCst)
            {
                shared
                    .data
                    .wait_for(&mut guard, (deadline - now).min(WAIT_SLICE));
            }
            shared.consumer_parked.store(false, Ordering::SeqCst);
        }
    }

    /// Whether the ring is closed and nothing is left to drain.
    pub fn is_finished(&self) -> bool {
        let tail = self.shared.tail.0.load(Ordering::SeqCst);
        tail & CLOSED != 0 && tail & !CLOSED == self.head
    }

    /// Closes the ring, as [`Producer::close`] does.
    pub fn close(&self) {
        self.shared.close();
    }

    /// The counters so far.
    pub fn stats(&self) -> RingStats {
        self.shared.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain_all(consumer: &mut Consumer) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        consumer.drain(|r| out.push(r.to_vec()));
        out
    }

    #[test]
    fn records_of_every_length_round_trip_across_the_wrap() {
        let (producer, mut consumer) = ring_buffer(256);
        let mut expected = Vec::new();
        let mut got = Vec::new();
        for round in 0..50u8 {
            for len in 0..=17usize {
                let record: Vec<u8> = (0..len as u8).map(|b| b ^ round).collect();
                producer.push(&record).unwrap();
                expected.push(record);
                got.extend(drain_all(&mut consumer));
            }
        }
        assert_eq!(got, expected);
        let stats = consumer.stats();
        assert_eq!(stats.records, expected.len() as u64);
        assert_eq!(stats.producer_waits, 0);
    }

    #[test]
    fn too_large_record_is_refused_not_waited_for() {
        let (producer, _consumer) = ring_buffer(64);
        assert_eq!(producer.max_record_len(), 56);
        assert!(producer.push(&[0; 56]).is_ok());
        assert_eq!(
            producer.push(&[0; 57]),
            Err(PushError::TooLarge { len: 57, max: 56 })
        );
    }

    #[test]
    fn close_refuses_new_records_and_keeps_old_ones() {
        let (producer, mut consumer) = ring_buffer(1024);
        producer.push(b"first").unwrap();
        producer.push(b"second").unwrap();
        consumer.close();
        assert_eq!(producer.push(b"late"), Err(PushError::Closed));
        assert!(!consumer.is_finished());
        assert_eq!(consumer.wait(Duration::ZERO), WaitOutcome::Ready);
        assert_eq!(
            drain_all(&mut consumer),
            vec![b"first".to_vec(), b"second".to_vec()]
        );
        assert!(consumer.is_finished());
        assert_eq!(consumer.wait(Duration::from_secs(5)), WaitOutcome::Finished);
    }

    #[test]
    fn wait_times_out_when_empty() {
        let (_producer, mut consumer) = ring_buffer(1024);
        assert_eq!(
            consumer.wait(Duration::from_millis(1)),
            WaitOutcome::TimedOut
        );
    }

    #[test]
    fn high_water_mark_counts_headers_and_padding() {
        let (producer, mut consumer) = ring_buffer(1024);
        producer.push(&[1; 9]).unwrap(); // 1 header + 2 words
        producer.push(&[2; 8]).unwrap(); // 1 header + 1 word
        assert_eq!(producer.stats().high_water_bytes, 5 * 8);
        drain_all(&mut consumer);
        producer.push(&[3; 1]).unwrap();
        assert_eq!(producer.stats().high_water_bytes, 5 * 8);
    }
}
