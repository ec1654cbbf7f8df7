//! A recording: chunks written to a sink, flushed so that the file is a valid
//! recording after every flush.
//!
//! # What a flush does
//!
//! Events are encoded into memory as they are written. [`Recording::flush`]
//! then, for the current chunk, encodes:
//!
//! 1. the buffered events;
//! 2. a checkpoint with every constant the new events use that this chunk
//!    does not have yet (none if there are none: never an empty pool),
//!    linked to the chunk's previous checkpoint;
//! 3. the metadata if event types were registered since it was last written
//!    in this chunk (types are only ever added, so the newest metadata
//!    describes every event before it);
//! 4. the header describing the chunk with them: size, offsets, duration,
//!    generation 0 (finished);
//!
//! and only then writes them, so that the output is a complete recording of
//! everything flushed between any two of its writes: a chunk's first flush
//! appends it whole in one write; a later one writes its bytes inside the
//! filler the chunk ends with, where readers skip them, then the header,
//! then turns the filler into its events (`tail.rs`). A process killed
//! at any moment leaves a file that the JDK reads up to its last flush.
//! No header ever says "in progress": the JDK 25 parser waits for such a
//! header to change, and gives up on a file. When a chunk has grown past
//! [`Options::max_chunk_size`] or lived past [`Options::max_chunk_age`], the
//! next flush starts a new chunk, with its own metadata and pools on the same
//! clock. [`Recording::close`] marks the last chunk final.
//!
//! # Renaming events
//!
//! Events written demotable ([`Recording::begin_demotable`]) can be renamed
//! later, in place, to a twin type of the same fields
//! ([`Recording::demote`]), in ended chunks too where the sink can patch
//! them ([`Sink::ended_chunks_patchable_from`]): a snapshot written at each
//! chunk's end keeps the readers' name only in its newest copy
//! ([`crate::demote`]).

mod chunks;
pub(crate) mod clock;
mod constants;
mod demotion;
mod registry;
pub(crate) mod sink;
mod snapshots;

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::demote::Demotions;
use crate::error::Error;
use crate::pool::Pools;

use chunks::Chunk;
pub use clock::{Clock, TICKS_PER_SECOND, Ticks};
use registry::Registry;
pub use sink::{FileSink, JfrFile, SeekableSink, Sink, StreamSink, ZstdFile};

/// How a recording cuts its output into chunks.
#[derive(Debug, Clone)]
pub struct Options {
    /// A flush after a chunk grew past this many bytes starts a new chunk.
    pub max_chunk_size: u64,
    /// A flush after a chunk is this old starts a new chunk.
    pub max_chunk_age: Option<Duration>,
    /// Events buffered in memory beyond this many bytes are flushed at once,
    /// so memory stays bounded even if the caller never flushes.
    pub max_buffered_bytes: usize,
    /// Whether chunks end only when [`Recording::end_chunk`] says so, for a
    /// caller that writes events at each chunk's end: it asks
    /// [`Recording::chunk_is_due`] when the limits above are reached. By
    /// default a flush past a limit ends the chunk by itself.
    pub manual_chunk_ends: bool,
    /// Keep only the most recent whole chunks whose sizes add up to at most
    /// this many bytes (JFR's `maxsize`). Checked when a chunk ends, so the
    /// file holds at most this plus the chunk being written, and always the
    /// newest complete chunk, however large. Past the limit, the oldest
    /// chunks are dropped down to three quarters of it, so the copy a
    /// rotation makes comes once per quarter of the limit written. Chunks are then at most an
    /// eighth of it (`max_chunk_size` is lowered to that). Only a plain file
    /// made by [`Recording::create`] rotates.
    pub max_size: Option<u64>,
    /// Keep only the chunks that ended within this age (JFR's `maxage`),
    /// checked when a chunk ends; the newest complete chunk is always kept.
    /// Once a chunk is past the age, those past three quarters of it go too.
    /// Chunks then last at most an eighth of it (`max_chunk_age` is lowered
    /// to that). Only a plain file made by [`Recording::create`] rotates.
    pub max_age: Option<Duration>,
}

/// How many chunks a `max_size` or `max_age` spans at least: chunks are cut
/// to this fraction of the limit, so dropping the oldest keeps most of it.
const CHUNKS_PER_LIMIT: u32 = 8;

impl Options {
    /// The chunk limits in force: `max_chunk_size` and `max_chunk_age`,
    /// lowered to a fraction of `max_size` and `max_age`.
    fn with_rotation_limits(mut self) -> Self {
        if let Some(max_size) = self.max_size {
            let size = (max_size / u64::from(CHUNKS_PER_LIMIT)).max(1);
            self.max_chunk_size = self.max_chunk_size.min(size);
        }
        if let Some(max_age) = self.max_age {
            let age = max_age / CHUNKS_PER_LIMIT;
            self.max_chunk_age = Some(self.max_chunk_age.map_or(age, |a| a.min(age)));
        }
        self
    }
}

impl Default for Options {
    /// Chunks of up to 12 MiB (the JDK's default), no age limit, at most
    /// 1 MiB of unflushed events, and every chunk kept.
    fn default() -> Self {
        Self {
            max_chunk_size: 12 << 20,
            max_chunk_age: None,
            max_buffered_bytes: 1 << 20,
            manual_chunk_ends: false,
            max_size: None,
            max_age: None,
        }
    }
}

/// Counts recordings, so an event type registered with one is refused by another.
static NEXT_RECORDING_ID: AtomicU64 = AtomicU64::new(1);

/// A JFR recording being written. See the [module docs](self) for the flush
/// protocol.
pub struct Recording<S: Sink> {
    pub(crate) id: u64,
    sink: Option<S>,
    options: Options,
    clock: Clock,
    registry: Registry,
    pub(crate) pools: Pools,
    /// Events written since the last flush.
    pub(crate) events: Vec<u8>,
    /// The pools a flush writes, kept between flushes for its capacity.
    pool_bytes: Vec<u8>,
    chunk: Option<Chunk>,
    /// When the next chunk begins: when the recording was created, then
    /// when the chunk before it was found full. Its events may be committed
    /// long before its first flush writes its header.
    next_chunk_start: Ticks,
    /// Output offset where the next chunk starts.
    output_end: u64,
    events_written: u64,
    /// While events are held for a snapshot's tail
    /// ([`Recording::begin_snapshot_tail`]): how many were written before.
    /// They stay buffered, however many.
    pub(crate) tail_from: Option<u64>,
    /// Where a constant is encoded before it is looked up.
    constant_scratch: Vec<u8>,
    /// The demotable events not demoted yet ([`Recording::begin_demotable`]).
    pub(crate) demotions: Demotions,
}

impl Recording<FileSink> {
    /// Creates the file at `path` and records into it: a plain `.jfr`, or a
    /// zstd-compressed stream when the name ends in `.zst` (which the JDK's
    /// `jfr` and Mission Control cannot read; `heapsampler convert` can).
    /// A plain file holds a complete recording from here on, of no events
    /// until the first flush.
    pub fn create(path: impl AsRef<Path>, options: Options) -> Result<Self, Error> {
        let path = path.as_ref();
        let create_error = |source| Error::Create {
            path: path.to_owned(),
            source,
        };
        let sink = if path.extension().is_some_and(|e| e == "zst") {
            if options.max_size.is_some() || options.max_age.is_some() {
                return Err(create_error(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a maximum size or age needs a plain .jfr file, not a .zst one",
                )));
            }
            let file = File::create(path).map_err(create_error)?;
            let file = BufWriter::with_capacity(256 * 1024, file);
            FileSink::Zstd(StreamSink::new(ZstdFile::new(file)?))
        } else {
            FileSink::Plain(JfrFile::create(path, &options))
        };
        let mut recording = Self::new(sink, options);
        // A complete recording from the start, of no events yet, written as
        // the file is created: a process killed before its first flush (a
        // JVM slow to start its writer) leaves a file that readers read.
        recording.flush().map_err(|error| match error {
            Error::Io(source) => create_error(source),
            other => other,
        })?;
        Ok(recording)
    }

    /// Flushes, marks the last chunk final and closes the file.
    pub fn close(self) -> Result<(), Error> {
        Ok(self.finish()?.finish()?)
    }
}

impl<W: Write + Seek> Recording<SeekableSink<W>> {
    /// Records into `writer` (a `Cursor<Vec<u8>>`, an open file...), which
    /// must be positioned at its start.
    pub fn to_writer(writer: W, options: Options) -> Self {
        Self::new(SeekableSink::new(writer), options)
    }
}

impl<S: Sink> Recording<S> {
    /// A recording into `sink`. Nothing is written until the first flush.
    pub fn new(sink: S, options: Options) -> Self {
        let options = options.with_rotation_limits();
        let id = NEXT_RECORDING_ID.fetch_add(1, Ordering::Relaxed);
        let clock = Clock::new();
        Self {
            id,
            sink: Some(sink),
            options,
            clock,
            next_chunk_start: clock.now(),
            registry: Registry::new(id),
            pools: Pools::new(),
            events: Vec::with_capacity(64 * 1024),
            pool_bytes: Vec::new(),
            chunk: None,
            output_end: 0,
            events_written: 0,
            tail_from: None,
            constant_scratch: Vec::new(),
            demotions: Demotions::default(),
        }
    }

    /// The recording's clock: take event timestamps from it.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Events committed so far.
    pub fn events_written(&self) -> u64 {
        self.events_written
    }

    /// Bytes written to the output so far (not counting buffered events).
    pub fn bytes_written(&self) -> u64 {
        self.output_end + self.chunk.as_ref().map_or(0, |c| c.size)
    }
}

// `Recording`'s interning method of each pooled type given as a string or
// a value, from the one table (`pooled_types!`). Stack traces have their
// own ([`Recording::stack_trace`]).
macro_rules! interning {
    (
        text { $( $(#[$tdoc:meta])* $text:ident($text_ref:ident) in $text_pool:ident, $text_one:ident; )* }
        value { $( $(#[$doc:meta])* $value:ident($reference:ident) in $pool:ident, $one:ident; )* }
        stack { $($stack:tt)* }
    ) => {
        impl<S: Sink> Recording<S> {
            $(
                #[doc = concat!(
                    "Interns a string as a [`", stringify!($text_ref), "`](crate::",
                    stringify!($text_ref), ")."
                )]
                pub fn $text_one(&mut self, text: &str) -> crate::pool::$text_ref {
                    self.pools.$text_one(text)
                }
            )*
            $(
                #[doc = concat!(
                    "Interns a [`", stringify!($value), "`](crate::", stringify!($value), ")."
                )]
                pub fn $one(&mut self, value: crate::pool::$value) -> crate::pool::$reference {
                    self.pools.$one(value)
                }
            )*
        }
    };
}

pooled_types!(interning);

impl<S: Sink> std::fmt::Debug for Recording<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("events_written", &self.events_written)
            .field("bytes_written", &self.bytes_written())
            .field("buffered_bytes", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl<S: Sink> Drop for Recording<S> {
    /// A recording dropped without [`finish`](Recording::finish) is finished
    /// here, errors ignored, so that the output is readable.
    fn drop(&mut self) {
        if self.sink.is_some() {
            // A snapshot's tail left held (a panic while writing it) is not
            // the recording's.
            if self.tail_from.is_some() {
                let _ = self.abandon_snapshot_tail();
            }
            let _ = self.flush_chunk(true);
            let _ = self.sink().end_chunk();
        }
    }
}
