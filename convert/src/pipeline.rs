//! The one chunk pipeline every command reads a recording through.
//!
//! A JFR file is a sequence of self-contained chunks (each has its own
//! metadata and constant pools), so the chunks are worked on at once, one
//! per thread, and what each makes is put together in file order:
//!
//! - Each thread takes the next chunk from the file (read under a lock, in
//!   file order; a chunk's number is its place in that order), decodes it
//!   and hands it to the [`Analysis`], whose [`chunk`](Analysis::chunk)
//!   work hands on one or more parts: a chunk's CSV rows block by block,
//!   a chunk's sums at its end.
//! - The parts are merged in chunk order ([`Analysis::merge`]): a part of
//!   the chunk whose turn it is right away, on the thread that made it
//!   (while it is still in that core's cache); the parts of a chunk not
//!   yet at its turn are held, and once the chunk is done its thread moves
//!   on to the next one, leaving them to be merged when the turn comes.
//!   So the result does not depend on which thread did what, nor on how
//!   many there were. Sums that could be added in any order (`top`'s) are
//!   merged in chunk order too: floating-point sums depend on their order,
//!   and in file order they are those of one thread reading the file
//!   through; it costs no thread a wait, as a chunk done early is parked.
//! - Memory stays bounded: at most one chunk per thread is read at a
//!   time, and the parts held wait within [`Pipeline::held_limit`] bytes (a
//!   thread with more to hold waits for the turn to move on).
//! - The first failure in chunk order is the one reported (a chunk that
//!   cannot be read, or whose events are malformed, after the parts it
//!   made before it failed are merged), and every thread stops.
//! - Progress is told in file order, after each chunk's parts are merged.
//!
//! A recording of one chunk, or one thread, is worked on entirely on the
//! calling thread.
//!
//! An analysis of its own, the events of each chunk in file order:
//!
//! ```no_run
//! use heapsampler_cli::Error;
//! use heapsampler_cli::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};
//! use jfr_reader::chunk::Chunk;
//! use jfr_reader::file::RecordingFile;
//!
//! struct EventsPerChunk;
//!
//! impl Analysis for EventsPerChunk {
//!     type Part = u64;
//!     type Merged = Vec<u64>;
//!
//!     fn chunk(
//!         &self,
//!         chunk: &Chunk<'_>,
//!         _context: &ChunkContext,
//!         hand_on: &mut dyn FnMut(u64) -> Result<(), Stopped>,
//!     ) -> Result<(), ChunkError> {
//!         let mut events = 0;
//!         for event in chunk.raw_events() {
//!             event?;
//!             events += 1;
//!         }
//!         Ok(hand_on(events)?)
//!     }
//!
//!     fn merge(&self, counts: &mut Vec<u64>, events: u64) -> Result<(), Error> {
//!         counts.push(events);
//!         Ok(())
//!     }
//!
//!     fn part_bytes(&self, _events: &u64) -> usize {
//!         8
//!     }
//! }
//!
//! let file = RecordingFile::open("alloc.jfr")?;
//! let ran = Pipeline::default().run(file, &EventsPerChunk, Vec::new(), &mut |_bytes| {})?;
//! println!("{:?}", ran.merged);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use jfr_reader::ReadError;
use jfr_reader::chunk::{Chunk, MetadataCache};
use jfr_reader::file::{FileError, RawChunk, RecordingFile};
use jfr_reader::metadata::Metadata;

use crate::Error;

/// Bytes the parts of chunks waiting for their turn hold at most at once,
/// by default. A thread with a part to hold waits when they are spent,
/// until its chunk's turn comes. Enough for a thread to convert a whole
/// chunk of a typical recording to CSV while the chunk before it is
/// written, which is what keeps every core busy; and memory stays bounded
/// by this, not by the recording.
pub const HELD_LIMIT: usize = 48 << 20;

/// What the work on one chunk knows beside the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkContext {
    /// The recording's start, in nanoseconds since the epoch: its first
    /// chunk's, which offsets such as `--from 30s` count from.
    pub recording_start: i64,
    /// Where the chunk starts in the recording (uncompressed).
    pub offset: u64,
}

/// A part could not be handed on: the pipeline has stopped, as a chunk
/// failed (this one's merge, or an earlier chunk), whose error is the one
/// reported. The chunk's work ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Why the work on a chunk ended early.
#[derive(Debug)]
pub enum ChunkError {
    /// An event of the chunk is malformed.
    Read(ReadError),
    /// The pipeline has stopped ([`Stopped`]).
    Stopped,
    /// Another failure.
    Failed(Error),
}

impl From<ReadError> for ChunkError {
    fn from(error: ReadError) -> Self {
        Self::Read(error)
    }
}

impl From<Stopped> for ChunkError {
    fn from(_: Stopped) -> Self {
        Self::Stopped
    }
}

/// What is made of a recording: work on each chunk, on any thread, that
/// hands on parts, and their merge, in chunk order.
///
/// An analysis that adds things up (`top`'s sums per site, the folded
/// stacks) hands on one part per chunk: its chunk's sums, merged into the
/// whole. One that writes as it goes (CSV) hands on its output in blocks,
/// which the merge writes. An analysis of what happens over time, such as
/// each site's live bytes at each collection, hands on its chunk's
/// collections and the merge appends them: chunks come in time order.
///
/// Two analyses run in one pass as the pair `(A, B)`, each on every chunk,
/// merged into `(A::Merged, B::Merged)`.
pub trait Analysis: Sync {
    /// What the work on a chunk hands on.
    type Part: Send;

    /// What the parts are merged into.
    type Merged: Send;

    /// Works on `chunk`, handing its parts to `hand_on` in order. A part
    /// that cannot be handed on ([`Stopped`]) ends the work.
    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(Self::Part) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError>;

    /// Whether the work on a chunk that declares `metadata` may hand on
    /// parts or fail: if not, the chunk is not read further (nor its
    /// constant pools) and [`chunk`](Self::chunk) is not called. Every
    /// chunk by default.
    fn reads(&self, metadata: &Metadata) -> bool {
        let _ = metadata;
        true
    }

    /// The parts of the next chunk follow, in chunk order; called for
    /// every chunk, whether it hands on parts or not.
    fn begin_chunk(&self, merged: &mut Self::Merged) {
        let _ = merged;
    }

    /// Merges `part` into `merged`: in chunk order, and a chunk's parts in
    /// the order it handed them on.
    fn merge(&self, merged: &mut Self::Merged, part: Self::Part) -> Result<(), Error>;

    /// About how many bytes `part` holds, for the bound on the parts
    /// waiting for their turn.
    fn part_bytes(&self, part: &Self::Part) -> usize;
}

impl<A: Analysis> Analysis for &A {
    type Part = A::Part;
    type Merged = A::Merged;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(Self::Part) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        (**self).chunk(chunk, context, hand_on)
    }

    fn reads(&self, metadata: &Metadata) -> bool {
        (**self).reads(metadata)
    }

    fn begin_chunk(&self, merged: &mut Self::Merged) {
        (**self).begin_chunk(merged)
    }

    fn merge(&self, merged: &mut Self::Merged, part: Self::Part) -> Result<(), Error> {
        (**self).merge(merged, part)
    }

    fn part_bytes(&self, part: &Self::Part) -> usize {
        (**self).part_bytes(part)
    }
}

/// A part of one analysis of a pair.
#[derive(Debug)]
pub enum Either<A, B> {
    /// The first's.
    First(A),
    /// The second's.
    Second(B),
}

impl<A: Analysis, B: Analysis> Analysis for (A, B) {
    type Part = Either<A::Part, B::Part>;
    type Merged = (A::Merged, B::Merged);

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(Self::Part) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        self.0
            .chunk(chunk, context, &mut |part| hand_on(Either::First(part)))?;
        self.1
            .chunk(chunk, context, &mut |part| hand_on(Either::Second(part)))
    }

    fn reads(&self, metadata: &Metadata) -> bool {
        self.0.reads(metadata) || self.1.reads(metadata)
    }

    fn begin_chunk(&self, merged: &mut Self::Merged) {
        self.0.begin_chunk(&mut merged.0);
        self.1.begin_chunk(&mut merged.1);
    }

    fn merge(&self, merged: &mut Self::Merged, part: Self::Part) -> Result<(), Error> {
        match part {
            Either::First(part) => self.0.merge(&mut merged.0, part),
            Either::Second(part) => self.1.merge(&mut merged.1, part),
        }
    }

    fn part_bytes(&self, part: &Self::Part) -> usize {
        match part {
            Either::First(part) => self.0.part_bytes(part),
            Either::Second(part) => self.1.part_bytes(part),
        }
    }
}

/// How a recording is read: on how many threads, holding how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pipeline {
    /// Threads working on chunks; 0: one per core. With 1, or a recording
    /// of one chunk, everything happens on the calling thread. What is
    /// made is the same either way.
    pub threads: usize,
    /// Bytes the parts of chunks waiting for their turn may hold at once
    /// ([`HELD_LIMIT`] by default).
    pub held_limit: usize,
}

impl Default for Pipeline {
    /// One thread per core, holding at most [`HELD_LIMIT`].
    fn default() -> Self {
        Self {
            threads: 0,
            held_limit: HELD_LIMIT,
        }
    }
}

impl Pipeline {
    /// The pipeline on `threads` threads (0: one per core).
    pub fn on(threads: usize) -> Self {
        Self {
            threads,
            ..Self::default()
        }
    }
}

/// How the parts held by chunks waiting for their turn kept to their limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Held {
    /// The most bytes held at once.
    pub peak: usize,
    /// How many times a thread waited for held parts to be merged before
    /// it held more.
    pub waits: u64,
}

/// What a run of the pipeline made.
#[derive(Debug)]
pub struct Run<M> {
    /// The parts of every chunk, merged.
    pub merged: M,
    /// What [`RecordingFile::truncated`] says: where a torn last chunk
    /// starts, and the bytes it had.
    pub truncated: Option<(u64, u64)>,
    /// How the held parts kept to their limit, when several threads worked.
    pub held: Option<Held>,
    /// The recording, read to its end: what an analysis that needs another
    /// pass [reopens](RecordingFile::reopen).
    pub recording: RecordingFile,
}

impl Pipeline {
    /// Reads the recording `file` chunk by chunk, has `analysis` work on
    /// each, and merges their parts into `merged`, telling `progress` the
    /// bytes of the file read (as stored: see [`RawChunk::stored_end`])
    /// after each chunk.
    pub fn run<A: Analysis>(
        &self,
        file: RecordingFile,
        analysis: &A,
        merged: A::Merged,
        progress: &mut (dyn FnMut(u64) + Send),
    ) -> Result<Run<A::Merged>, Error> {
        let threads = match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let mut source = Source::new(file);
        let recording_start = source.start(threads);
        // Whether a second chunk is there tells whether more than one
        // thread has work.
        let parallel = threads > 1 && source.ahead.len() > 1;
        let work = Work {
            path: source.file.path().to_owned(),
            source: Mutex::new(source),
            metadata: MetadataCache::default(),
            context: ChunkContext {
                recording_start,
                offset: 0,
            },
            analysis,
            turn: Turn::new(analysis, merged, progress, self.held_limit),
        };
        if parallel {
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| work.work());
                }
            });
        } else {
            work.work();
        }
        let Work { source, turn, .. } = work;
        let state = turn
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(error) = state.failed {
            return Err(error);
        }
        let merged = turn
            .output
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .merged;
        let source = source.into_inner().unwrap_or_else(PoisonError::into_inner);
        Ok(Run {
            merged,
            truncated: source.file.truncated(),
            held: parallel.then_some(state.held),
            recording: source.file,
        })
    }
}

/// The chunks to work on: those read ahead, then the rest of the file.
struct Source {
    file: RecordingFile,
    ahead: VecDeque<Result<RawChunk, FileError>>,
    /// The file has ended, or failed.
    done: bool,
    /// Chunks taken so far.
    taken: u64,
    /// The bytes of a chunk worked on, to read another into.
    spare: Vec<u8>,
}

impl Source {
    fn new(file: RecordingFile) -> Self {
        Self {
            file,
            ahead: VecDeque::new(),
            done: false,
            taken: 0,
            spare: Vec::new(),
        }
    }

    /// Reads ahead the chunks `threads` threads start on (two when
    /// several: whether a second chunk is there tells whether more than one
    /// thread has work), and returns the recording's start in nanoseconds
    /// since the epoch: the first chunk's.
    fn start(&mut self, threads: usize) -> i64 {
        let chunks = if threads > 1 { 2 } else { 1 };
        while self.ahead.len() < chunks {
            match self.read().transpose() {
                Some(next) => self.ahead.push_back(next),
                None => break,
            }
        }
        match self.ahead.front() {
            Some(Ok(raw)) => jfr_reader::header::chunk_header(&raw.bytes, raw.offset)
                .map_or(0, |h| h.start_nanos),
            _ => 0,
        }
    }

    fn next(&mut self) -> Result<Option<RawChunk>, FileError> {
        match self.ahead.pop_front() {
            Some(next) => next.map(Some),
            None => self.read(),
        }
    }

    /// The next chunk from the file, if it has not ended or failed (the
    /// failure takes its place in the order too).
    fn read(&mut self) -> Result<Option<RawChunk>, FileError> {
        if self.done {
            return Ok(None);
        }
        let next = self.file.next_chunk_in(std::mem::take(&mut self.spare));
        self.done = !matches!(next, Ok(Some(_)));
        next
    }
}

/// What the threads share.
struct Work<'a, A: Analysis> {
    path: std::path::PathBuf,
    source: Mutex<Source>,
    /// The metadata the chunks declare, read once for all that repeat it.
    metadata: MetadataCache,
    context: ChunkContext,
    analysis: &'a A,
    turn: Turn<'a, A>,
}

/// How the work on a chunk ended.
enum Outcome {
    Done,
    Failed(Error),
    Stopped,
}

impl<A: Analysis> Work<'_, A> {
    /// A working thread: takes chunks until the file ends or a chunk fails.
    fn work(&self) {
        // Stops every thread, not only this one, if it panics: the others
        // would wait for its chunk's turn forever.
        struct Panicking<'t, 'a, A: Analysis>(&'t Turn<'a, A>);
        impl<A: Analysis> Drop for Panicking<'_, '_, A> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.stop();
                }
            }
        }
        let _panicking = Panicking(&self.turn);
        let mut spare = Vec::new();
        loop {
            let (seq, next) = {
                let mut source = self.source.lock().unwrap_or_else(PoisonError::into_inner);
                if spare.capacity() > source.spare.capacity() {
                    source.spare = std::mem::take(&mut spare);
                }
                if self.turn.stopped() {
                    return;
                }
                let Some(next) = source.next().transpose() else {
                    return;
                };
                // Still holding the source, so chunks are numbered in file
                // order.
                source.taken += 1;
                (source.taken - 1, next)
            };
            let mut parts = ChunkParts {
                seq,
                turn: &self.turn,
                held: Vec::new(),
                held_bytes: 0,
                begun: false,
            };
            let (outcome, end) = match next {
                Err(error) => (Outcome::Failed(error.into()), 0),
                Ok(raw) => {
                    let outcome = self.chunk(&raw, &mut parts);
                    let end = raw.stored_end;
                    spare = raw.bytes;
                    (outcome, end)
                }
            };
            if !parts.finish(outcome, end) {
                return;
            }
        }
    }

    /// Decodes `raw` and has the analysis work on it.
    fn chunk(&self, raw: &RawChunk, parts: &mut ChunkParts<'_, '_, A>) -> Outcome {
        let malformed = |source| {
            Error::Read(FileError::Malformed {
                path: self.path.clone(),
                source,
            })
        };
        let read = Chunk::read_if(&raw.bytes, raw.offset, Some(&self.metadata), |metadata| {
            self.analysis.reads(metadata)
        });
        let chunk = match read {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Outcome::Done,
            Err(error) => return Outcome::Failed(malformed(error)),
        };
        let context = ChunkContext {
            offset: raw.offset,
            ..self.context
        };
        let worked = self
            .analysis
            .chunk(&chunk, &context, &mut |part| parts.hand_on(part));
        match worked {
            Ok(()) => Outcome::Done,
            Err(ChunkError::Read(error)) => Outcome::Failed(malformed(error)),
            Err(ChunkError::Failed(error)) => Outcome::Failed(error),
            Err(ChunkError::Stopped) => Outcome::Stopped,
        }
    }
}

/// Whose turn it is to merge, the parts held until their turn, and what
/// they are merged into.
struct Turn<'a, A: Analysis> {
    analysis: &'a A,
    state: Mutex<TurnState<A::Part>>,
    /// The bound on [`TurnState::held_bytes`].
    limit: usize,
    changed: Condvar,
    /// What the parts are merged into, by the thread whose turn it is.
    output: Mutex<Output<'a, A::Merged>>,
}

struct TurnState<P> {
    /// The chunk whose parts are merged now.
    head: u64,
    /// Bytes of parts held by chunks waiting for their turn.
    held_bytes: usize,
    /// How `held_bytes` kept to the limit.
    held: Held,
    /// Chunks done before their turn, by number.
    parked: BTreeMap<u64, Parked<P>>,
    /// The first failure, in chunk order: every thread stops.
    failed: Option<Error>,
    /// A thread panicked: every thread stops.
    panicked: bool,
}

/// A chunk done before its turn: its parts, and how it ended.
struct Parked<P> {
    parts: Vec<P>,
    bytes: usize,
    outcome: Outcome,
    end: u64,
}

struct Output<'a, M> {
    merged: M,
    progress: &'a mut (dyn FnMut(u64) + Send),
}

impl<'a, A: Analysis> Turn<'a, A> {
    fn new(
        analysis: &'a A,
        merged: A::Merged,
        progress: &'a mut (dyn FnMut(u64) + Send),
        limit: usize,
    ) -> Self {
        Self {
            analysis,
            state: Mutex::new(TurnState {
                head: 0,
                held_bytes: 0,
                held: Held::default(),
                parked: BTreeMap::new(),
                failed: None,
                panicked: false,
            }),
            limit,
            changed: Condvar::new(),
            output: Mutex::new(Output { merged, progress }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TurnState<A::Part>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn output(&self) -> MutexGuard<'_, Output<'a, A::Merged>> {
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'g>(
        &self,
        state: MutexGuard<'g, TurnState<A::Part>>,
    ) -> MutexGuard<'g, TurnState<A::Part>> {
        self.changed
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn stopped(&self) -> bool {
        let state = self.lock();
        state.failed.is_some() || state.panicked
    }

    /// Takes `bytes` for a part that chunk `seq` holds until its turn,
    /// first waiting while the limit is spent: `Some(false)`. `Some(true)`
    /// when it is `seq`'s turn (nothing is taken: the part is merged now),
    /// `None` when the pipeline stopped.
    fn hold(&self, seq: u64, bytes: usize) -> Option<bool> {
        let mut state = self.lock();
        loop {
            if state.failed.is_some() || state.panicked {
                return None;
            }
            if state.head == seq {
                return Some(true);
            }
            if state.held_bytes + bytes <= self.limit {
                state.held_bytes += bytes;
                state.held.peak = state.held.peak.max(state.held_bytes);
                return Some(false);
            }
            state.held.waits += 1;
            state = self.wait(state);
        }
    }

    /// Parts held before their chunk's turn, `bytes` of them, are merged.
    fn release(&self, bytes: usize) {
        if bytes > 0 {
            let mut state = self.lock();
            state.held_bytes = state.held_bytes.saturating_sub(bytes);
            self.changed.notify_all();
        }
    }

    /// Merges `parts` (a chunk's, in its turn) after the chunk's beginning
    /// if `begin`.
    fn merge(&self, begin: bool, parts: impl IntoIterator<Item = A::Part>) -> Result<(), Error> {
        let mut output = self.output();
        if begin {
            self.analysis.begin_chunk(&mut output.merged);
        }
        parts
            .into_iter()
            .try_for_each(|part| self.analysis.merge(&mut output.merged, part))
    }

    /// The chunk whose turn it is is done, its parts merged: progress to
    /// its `end`.
    fn done(&self, end: u64) {
        let mut output = self.output();
        (output.progress)(end);
    }

    /// The chunk whose turn it is failed: every thread stops.
    fn fail(&self, error: Error) {
        let mut state = self.lock();
        state.failed.get_or_insert(error);
        self.changed.notify_all();
    }

    /// A thread panicked: every thread stops.
    fn stop(&self) {
        let mut state = self.lock();
        state.panicked = true;
        self.changed.notify_all();
    }

    /// Chunk `seq` is merged: the turn passes to the next chunk, and the
    /// chunks done before their turn are merged as it comes to them.
    /// False when one of them failed.
    fn pass(&self, seq: u64) -> bool {
        let mut next = seq + 1;
        loop {
            let parked = {
                let mut state = self.lock();
                if state.failed.is_some() || state.panicked {
                    return false;
                }
                state.head = next;
                match state.parked.remove(&next) {
                    Some(parked) => parked,
                    None => {
                        self.changed.notify_all();
                        return true;
                    }
                }
            };
            // Its turn: nobody else works on a parked chunk.
            let merged = self.merge(true, parked.parts);
            self.release(parked.bytes);
            let outcome = match merged {
                Err(error) => Outcome::Failed(error),
                Ok(()) => parked.outcome,
            };
            match outcome {
                Outcome::Done => self.done(parked.end),
                Outcome::Failed(error) => {
                    self.fail(error);
                    return false;
                }
                Outcome::Stopped => return false,
            }
            next += 1;
        }
    }
}

/// The parts of one chunk on their way to the merge: merged as they come
/// in the chunk's turn, held until then.
struct ChunkParts<'t, 'a, A: Analysis> {
    seq: u64,
    turn: &'t Turn<'a, A>,
    /// Parts made before the chunk's turn, and their bytes.
    held: Vec<A::Part>,
    held_bytes: usize,
    /// Whether the chunk's beginning has been merged.
    begun: bool,
}

impl<A: Analysis> ChunkParts<'_, '_, A> {
    fn hand_on(&mut self, part: A::Part) -> Result<(), Stopped> {
        let bytes = self.turn.analysis.part_bytes(&part);
        match self.turn.hold(self.seq, bytes) {
            None => Err(Stopped),
            Some(false) => {
                self.held_bytes += bytes;
                self.held.push(part);
                Ok(())
            }
            Some(true) => self.merge(Some(part)),
        }
    }

    /// Merges the held parts, then `part`; in the chunk's turn.
    fn merge(&mut self, part: Option<A::Part>) -> Result<(), Stopped> {
        let begin = !std::mem::replace(&mut self.begun, true);
        let merged = self.turn.merge(begin, self.held.drain(..).chain(part));
        self.turn.release(std::mem::take(&mut self.held_bytes));
        merged.map_err(|error| {
            self.turn.fail(error);
            Stopped
        })
    }

    /// Ends the chunk: in its turn, merges what it holds and passes the
    /// turn on (or fails every thread with its error, after its parts made
    /// before the error); before its turn, leaves its parts and how it
    /// ended to be merged when the turn comes. False when the threads stop.
    fn finish(mut self, outcome: Outcome, end: u64) -> bool {
        {
            let mut state = self.turn.lock();
            if state.failed.is_some() || state.panicked {
                return false;
            }
            if state.head != self.seq {
                if matches!(outcome, Outcome::Stopped) {
                    return false;
                }
                // The parts stay counted as held until they are merged.
                state.parked.insert(
                    self.seq,
                    Parked {
                        parts: std::mem::take(&mut self.held),
                        bytes: self.held_bytes,
                        outcome,
                        end,
                    },
                );
                return true;
            }
        }
        if self.merge(None).is_err() {
            return false;
        }
        match outcome {
            Outcome::Done => {
                self.turn.done(end);
                self.turn.pass(self.seq)
            }
            Outcome::Failed(error) => {
                self.turn.fail(error);
                false
            }
            Outcome::Stopped => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use crate::analysis::fold::{self, Fold, FoldJob};
    use crate::analysis::top::{GroupBy, Grouping, Groups, Query, Table};
    use crate::model::allocation::ALLOCATIONS;
    use crate::model::filter::Filter;
    use crate::model::samples::{self, Kind, Sample, SampleVisitor};
    use crate::model::text::Flattener;
    use crate::output::Outputs;
    use crate::output::csv::{self, CsvError, CsvOptions};
    use crate::output::pprof;
    use heapsampler_core::estimate::Estimate;
    use heapsampler_core::sampling::bytes_weight;
    use jfr_format::names::{event, setting};
    use jfr_writer::events::ActiveSetting;
    use jfr_writer::{
        Class, FrameType, Method, Recording, StackFrame, StackTrace, Thread, Ticks, events,
    };

    /// A folder of its own for a test.
    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("heapsampler-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The sampling interval of [`recording`]'s samples.
    const INTERVAL: u64 = 1024;

    /// A jfr-writer recording of many small chunks of allocation samples,
    /// each with a stack trace: a few KB of rows per chunk. The samples'
    /// sizes are known (from their weights and the sampling interval the
    /// settings name at each chunk's start).
    fn recording(path: &Path) {
        let options = jfr_writer::Options {
            max_chunk_size: 16 * 1024,
            ..jfr_writer::Options::default()
        };
        let mut recording = Recording::create(path, options).unwrap();
        let alloc = recording
            .register(events::object_allocation_sample())
            .unwrap();
        let settings = recording.register(events::active_setting()).unwrap();
        let interval = format!("{INTERVAL} bytes");
        let thread = recording.thread(Thread {
            os_name: "os".into(),
            os_thread_id: 1,
            java_name: "main".into(),
            java_thread_id: 1,
            group: None,
        });
        for n in 0..3000_u32 {
            // A new chunk may start after each flush: each starts with the
            // settings, as the agent's do.
            if n % 20 == 0 {
                for (name, value) in [
                    (setting::SAMPLING_INTERVAL, interval.as_str()),
                    (setting::THROTTLE, setting::THROTTLE_OFF),
                ] {
                    ActiveSetting {
                        start_time: Ticks(n.into()),
                        duration: 0,
                        event_thread: None,
                        stack_trace: None.into(),
                        id: alloc.id().get() as i64,
                        name: Some(name),
                        value: Some(value),
                    }
                    .write(&mut recording, &settings)
                    .unwrap();
                }
            }
            let name = recording.symbol(&format!("pkg/Class{}", n % 40));
            let class = recording.class(Class {
                class_loader: None,
                name,
                package: None,
                modifiers: 1,
                hidden: false,
            });
            let frames = (0..1 + n % 12)
                .map(|frame| {
                    let name = recording.symbol(&format!("m{}", (n + frame) % 50));
                    let descriptor = recording.symbol("()V");
                    StackFrame {
                        method: recording.method(Method {
                            class,
                            name,
                            descriptor,
                            modifiers: 9,
                            hidden: false,
                        }),
                        line_number: frame as i32,
                        bytecode_index: 0,
                        frame_type: FrameType::Interpreted,
                    }
                })
                .collect();
            let stack = recording.stack_trace(StackTrace {
                truncated: false,
                frames,
            });
            recording
                .event(&alloc, Ticks(n.into()))
                .thread(thread)
                .stack_trace(stack)
                .class(class)
                .long(bytes_weight(u64::from(n % 97 * 8 + 16), INTERVAL).round() as i64)
                .commit()
                .unwrap();
            // A chunk ends at a flush once it is over its size.
            if n % 20 == 19 {
                recording.flush().unwrap();
            }
        }
        recording.close().unwrap();
    }

    /// The offsets of the chunks of `file`.
    fn chunk_offsets(file: &Path) -> Vec<u64> {
        let mut offsets = Vec::new();
        let mut chunks = RecordingFile::open(file).unwrap();
        while let Some(raw) = chunks.next_chunk().unwrap() {
            offsets.push(raw.offset);
        }
        offsets
    }

    /// Breaks chunks `broken` of `file`: each claims a metadata offset past
    /// its end, so the file reads and the chunk does not. The message of
    /// the first one's error.
    fn break_chunks(file: &Path, broken: &[usize]) -> String {
        let offsets = chunk_offsets(file);
        assert!(offsets.len() > 20, "{} chunks", offsets.len());
        let mut bytes = std::fs::read(file).unwrap();
        for &chunk in broken {
            let at = offsets[chunk] as usize + 24;
            bytes[at..at + 8].copy_from_slice(&u64::MAX.to_be_bytes());
        }
        std::fs::write(file, bytes).unwrap();
        format!(
            "at byte {}: expected a metadata offset",
            offsets[broken[0]] + 24
        )
    }

    /// An analysis of which chunks come, in which order: each hands on its
    /// offset (after a pause that varies from chunk to chunk, so that the
    /// threads finish out of order) and fails at `fail_at`.
    struct Offsets {
        fail_at: Option<u64>,
    }

    impl Analysis for Offsets {
        type Part = u64;
        type Merged = Vec<u64>;

        fn chunk(
            &self,
            _chunk: &Chunk<'_>,
            context: &ChunkContext,
            hand_on: &mut dyn FnMut(u64) -> Result<(), Stopped>,
        ) -> Result<(), ChunkError> {
            let offset = context.offset;
            std::thread::sleep(std::time::Duration::from_micros(offset % 7 * 300));
            hand_on(offset)?;
            if Some(offset) == self.fail_at {
                return Err(ChunkError::Read(ReadError::Malformed {
                    offset,
                    expected: "no more, said the test".to_owned(),
                }));
            }
            Ok(())
        }

        fn merge(&self, offsets: &mut Vec<u64>, offset: u64) -> Result<(), Error> {
            offsets.push(offset);
            Ok(())
        }

        fn part_bytes(&self, _: &u64) -> usize {
            8
        }
    }

    #[test]
    fn parts_are_merged_in_chunk_order_on_any_number_of_threads() {
        let dir = folder("pipeline-order");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        let offsets = chunk_offsets(&file);
        for threads in [1, 2, 3, 8] {
            let mut read = Vec::new();
            let ran = Pipeline::on(threads)
                .run(
                    RecordingFile::open(&file).unwrap(),
                    &Offsets { fail_at: None },
                    Vec::new(),
                    &mut |bytes| read.push(bytes),
                )
                .unwrap();
            assert_eq!(ran.merged, offsets, "{threads} threads");
            assert_eq!(read.len(), offsets.len(), "progress after each chunk");
            assert!(read.is_sorted(), "{threads} threads: {read:?}");
            assert_eq!(read.last(), Some(&std::fs::metadata(&file).unwrap().len()));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// [`Offsets`] of the chunks that declare the type named `declared`.
    struct Declaring(&'static str);

    impl Analysis for Declaring {
        type Part = u64;
        type Merged = Vec<u64>;

        fn chunk(
            &self,
            chunk: &Chunk<'_>,
            context: &ChunkContext,
            hand_on: &mut dyn FnMut(u64) -> Result<(), Stopped>,
        ) -> Result<(), ChunkError> {
            Offsets { fail_at: None }.chunk(chunk, context, hand_on)
        }

        fn reads(&self, metadata: &Metadata) -> bool {
            metadata.class_named(self.0).is_some()
        }

        fn merge(&self, offsets: &mut Vec<u64>, offset: u64) -> Result<(), Error> {
            offsets.push(offset);
            Ok(())
        }

        fn part_bytes(&self, _: &u64) -> usize {
            8
        }
    }

    #[test]
    fn chunks_an_analysis_does_not_read_are_passed_over_and_progress_still_told() {
        let dir = folder("pipeline-reads");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        let offsets = chunk_offsets(&file);
        let end = std::fs::metadata(&file).unwrap().len();
        for threads in [1, 2, 3] {
            for (declared, read) in [
                (event::OBJECT_ALLOCATION_SAMPLE, offsets.as_slice()),
                ("no.such.Event", &[]),
            ] {
                let mut told = None;
                let ran = Pipeline::on(threads)
                    .run(
                        RecordingFile::open(&file).unwrap(),
                        &Declaring(declared),
                        Vec::new(),
                        &mut |bytes| told = Some(bytes),
                    )
                    .unwrap();
                assert_eq!(ran.merged, read, "{threads} threads, {declared}");
                assert_eq!(told, Some(end), "{threads} threads, {declared}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_first_failure_in_chunk_order_is_reported_after_the_parts_before_it() {
        let dir = folder("pipeline-failure");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        let offsets = chunk_offsets(&file);
        // Chunk 7 fails after handing on its part; chunk 20 is broken.
        let first = break_chunks(&file, &[20]);
        let fail_at = offsets[7];
        for threads in [1, 2, 3, 8] {
            let merged = Mutex::new(Vec::new());
            struct Keep<'m>(Offsets, &'m Mutex<Vec<u64>>);
            impl Analysis for Keep<'_> {
                type Part = u64;
                type Merged = ();
                fn chunk(
                    &self,
                    chunk: &Chunk<'_>,
                    context: &ChunkContext,
                    hand_on: &mut dyn FnMut(u64) -> Result<(), Stopped>,
                ) -> Result<(), ChunkError> {
                    self.0.chunk(chunk, context, hand_on)
                }
                fn merge(&self, _: &mut (), offset: u64) -> Result<(), Error> {
                    self.1.lock().unwrap().push(offset);
                    Ok(())
                }
                fn part_bytes(&self, _: &u64) -> usize {
                    8
                }
            }
            let analysis = Keep(
                Offsets {
                    fail_at: Some(fail_at),
                },
                &merged,
            );
            let file = RecordingFile::open(&file).unwrap();
            let error = Pipeline::on(threads)
                .run(file, &analysis, (), &mut |_| {})
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("no more, said the test"),
                "{threads} threads: {error}"
            );
            assert!(!error.contains(&first), "{threads} threads: {error}");
            assert_eq!(*merged.lock().unwrap(), offsets[..=7], "{threads} threads");
        }
        // Without the failure of chunk 7, the broken chunk's.
        for threads in [1, 2, 3, 8] {
            let file = RecordingFile::open(&file).unwrap();
            let error = Pipeline::on(threads)
                .run(file, &Offsets { fail_at: None }, Vec::new(), &mut |_| {})
                .unwrap_err()
                .to_string();
            assert!(error.contains(&first), "{threads} threads: {error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stacks_fold_the_same_on_any_number_of_threads() {
        let dir = folder("fold");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        let fold = |threads: usize| {
            let job = FoldJob {
                types: &[],
                sources: &ALLOCATIONS,
                // Some stacks cut, some not.
                fold: Fold {
                    stack_depth: 5,
                    live: None,
                    class_frame: true,
                },
                filter: &Filter::default(),
            };
            let file = RecordingFile::open(&file).unwrap();
            let folded = fold::fold(file, job, &Pipeline::on(threads), &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            let mut out = Vec::new();
            folded.stacks.write(&mut out).unwrap();
            (folded.stacks.folded(), String::from_utf8(out).unwrap())
        };
        let (events, one) = fold(1);
        assert_eq!(events, 3000);
        assert!(one.lines().any(|l| l.starts_with("[truncated];")), "{one}");
        assert!(one.lines().any(|l| !l.starts_with("[truncated];")), "{one}");
        for threads in [2, 3, 8] {
            assert!(fold(threads) == (events, one.clone()), "{threads} threads");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn top_and_pprof_are_the_same_on_any_number_of_threads() {
        let dir = folder("top-pprof");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        let made = |threads: usize| {
            let pipeline = Pipeline::on(threads);
            let tables: Vec<Table> = [GroupBy::Site, GroupBy::Class, GroupBy::AppSite]
                .into_iter()
                .map(|by| {
                    let query = Query {
                        by,
                        live: false,
                        min_gcs: 0,
                    };
                    let recording = RecordingFile::open(&file).unwrap();
                    let ran = pipeline
                        .run(
                            recording,
                            &Grouping::new(query),
                            Groups::new(query),
                            &mut |_| {},
                        )
                        .unwrap();
                    ran.merged.table()
                })
                .collect();
            let recording = RecordingFile::open(&file).unwrap();
            let profile =
                pprof::profile(recording, &Filter::default(), 64, &pipeline, &mut |_| {}).unwrap();
            let mut bytes = Vec::new();
            pprof::write(&profile.profile, &mut bytes).unwrap();
            (tables, bytes)
        };
        let (tables, profile) = made(1);
        assert!(tables[0].total.samples() > 0, "{:?}", tables[0]);
        let classes = tables[1].entries.iter();
        let classes = classes.filter(|entry| entry.key.contains("pkg.Class"));
        assert_eq!(classes.count(), 40, "{:?}", tables[1].entries);
        for threads in [2, 3, 8] {
            let (other_tables, other_profile) = made(threads);
            assert_eq!(other_tables, tables, "{threads} threads");
            assert!(
                other_profile == profile,
                "{threads} threads: another profile"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn estimates_add_up_samples_in_file_order_as_one_thread_does() {
        let dir = folder("file-order");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        // Each class's estimate, samples added one by one in file order,
        // and chunk by chunk (each chunk's sum added to the total).
        struct ByClass<'e>(&'e mut BTreeMap<String, Estimate>);
        impl SampleVisitor for ByClass<'_> {
            fn sample(&mut self, text: &Flattener<'_, '_>, _: Kind, sample: &Sample<'_>) {
                let class = text.text(&sample.object_class.clone().into_value());
                let estimate = self.0.entry(class).or_default();
                estimate.add_weighted(sample.weight, sample.size);
            }
        }
        let (mut in_order, mut by_chunk) = (BTreeMap::new(), BTreeMap::<_, Estimate>::new());
        let mut chunks = RecordingFile::open(&file).unwrap();
        let mut start = None;
        while let Some(raw) = chunks.next_chunk().unwrap() {
            let chunk = Chunk::read(&raw.bytes, raw.offset).unwrap();
            let start = *start.get_or_insert(chunk.header.start_nanos);
            let read = |visitor: &mut ByClass<'_>| {
                let filter = Filter::default();
                samples::read_chunk(&chunk, start, &ALLOCATIONS, &filter, 1, visitor).unwrap();
            };
            read(&mut ByClass(&mut in_order));
            let mut sums = BTreeMap::new();
            read(&mut ByClass(&mut sums));
            for (class, sum) in sums {
                by_chunk.entry(class).or_default().merge(&sum);
            }
        }
        assert!(in_order.values().all(Estimate::objects_known));
        // Sums of fractions of objects: in another order, other sums.
        assert!(in_order != by_chunk, "the order does not matter here");
        let query = Query {
            by: GroupBy::Class,
            live: false,
            min_gcs: 0,
        };
        for threads in [1, 2, 3] {
            let recording = RecordingFile::open(&file).unwrap();
            let table = Pipeline::on(threads)
                .run(
                    recording,
                    &Grouping::new(query),
                    Groups::new(query),
                    &mut |_| {},
                )
                .unwrap()
                .merged
                .table();
            let estimates: BTreeMap<String, Estimate> = table
                .entries
                .into_iter()
                .map(|entry| (entry.key, entry.estimate))
                .collect();
            assert!(estimates == in_order, "{threads} threads");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn folding_reports_the_first_broken_chunk_on_any_number_of_threads() {
        let dir = folder("fold-fail");
        let file = dir.join("broken.jfr");
        recording(&file);
        // Chunks 5 and 20 are broken: the first is reported.
        let first = break_chunks(&file, &[5, 20]);
        for threads in [1, 2, 3, 8] {
            let job = FoldJob {
                types: &[],
                sources: &ALLOCATIONS,
                fold: Fold {
                    stack_depth: 64,
                    live: None,
                    class_frame: true,
                },
                filter: &Filter::default(),
            };
            let recording = RecordingFile::open(&file).unwrap();
            match fold::fold(recording, job, &Pipeline::on(threads), &mut |_| {}) {
                Err(error @ Error::Read(_)) => {
                    let message = error.to_string();
                    assert!(message.contains(&first), "{threads} threads: {message}")
                }
                other => panic!("{threads} threads: {other:?}"),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// CSV outputs in memory, shared with the test.
    #[derive(Clone, Default)]
    struct Memory(Arc<Mutex<BTreeMap<String, Vec<u8>>>>);

    /// One type's output in [`Memory`].
    struct MemoryFile(Memory, String);

    impl Write for MemoryFile {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let mut files = self.0.0.lock().unwrap();
            files.get_mut(&self.1).unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Outputs for Memory {
        fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>, CsvError> {
            self.0.lock().unwrap().insert(name.to_owned(), Vec::new());
            Ok(Box::new(MemoryFile(self.clone(), name.to_owned())))
        }
    }

    /// Converts `file` to CSV on `threads` threads, holding at most
    /// `held_limit` bytes of rows before their turn: what was written, and
    /// the files.
    fn to_csv(
        file: &Path,
        threads: usize,
        held_limit: usize,
    ) -> (csv::CsvWritten, BTreeMap<String, Vec<u8>>) {
        let options = CsvOptions {
            events: vec![event::OBJECT_ALLOCATION_SAMPLE.to_owned()],
            stack_depth: 64,
            ..CsvOptions::default()
        };
        let mut memory = Memory::default();
        let pipeline = Pipeline {
            threads,
            held_limit,
        };
        let recording = RecordingFile::open(file).unwrap();
        let written = csv::write_csv(recording, &options, &mut memory, &pipeline, &mut |_| {})
            .unwrap_or_else(|e| panic!("{e}"));
        let files = memory.0.lock().unwrap().clone();
        (written, files)
    }

    #[test]
    fn chunks_waiting_for_their_turn_hold_no_more_rows_than_the_limit() {
        let dir = folder("held");
        let file = dir.join("many-chunks.jfr");
        recording(&file);
        let (one, expected) = to_csv(&file, 1, HELD_LIMIT);
        assert_eq!(one.held, None, "one thread holds nothing");
        assert_eq!(one.rows, 3000);
        // 0: nothing can be held, every thread waits for its turn before it
        // hands on any row. 30 KB: one chunk's rows (about 21 KB) but not
        // two, so that the third of three threads waits. The default: far
        // more than this recording has, so no thread ever waits.
        for (limit, threads, waits) in [
            (0, 2, true),
            (0, 3, true),
            (30_000, 3, true),
            (HELD_LIMIT, 2, false),
            (HELD_LIMIT, 3, false),
        ] {
            // Whether a thread finds the limit spent when it has rows, or
            // holds any, depends on the scheduler: on a busy 2-core machine
            // one thread may take the chunks in turn through a whole run
            // (3 runs in 10 did). That none of 10 runs of some 150 chunks
            // each ever does would mean the limit is not kept; the files
            // and the bound hold in every run.
            let mut seen = Vec::new();
            for _ in 0..10 {
                let (written, files) = to_csv(&file, threads, limit);
                let held = written.held.expect("several threads converted");
                let case = format!("{threads} threads, limit {limit}: {held:?}");
                assert!(files == expected, "{case}: other files");
                assert!(held.peak <= limit, "{case}");
                // Room for every chunk: no thread ever waits.
                assert!(waits || held.waits == 0, "{case}");
                let shown = (held.waits > 0) == waits && (held.peak > 0) == (limit > 0);
                seen.push(held);
                if shown {
                    break;
                }
            }
            let shown = seen
                .iter()
                .any(|h| (h.waits > 0) == waits && (h.peak > 0) == (limit > 0));
            assert!(
                shown,
                "{threads} threads, limit {limit}, in 10 runs: {seen:?}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
