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

use std::borrow::Borrow;
use std::collections::VecDeque;
use std::fs;
use std::fs::File;
use std::io::{self, BufWriter, IoSlice, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::demote::{DemotableEvents, Demotions};
use crate::error::Error;
use crate::event::{
    EventType, EventTypeBuilder, Mismatch, Value, ValueType, ValueTypeBuilder, write_value,
};
use crate::field::{FieldSpec, Unit, ValueTypeId};
use crate::metadata::{ClassId, FieldDecl, Metadata, SettingDecl};
use crate::pool::{ConstantRef, Marked, PoolRef, PoolSizes, Pools, StackTrace, StackTraceRef};
use crate::sized::sized_len;
use crate::snapshot::Snapshot;
use crate::tail;
use crate::types::{StandardTypes, annotation, annotation_array, marker};
use jfr_format::names::{class as class_name, field as field_name, unit as unit_name};
use jfr_format::{
    CHECKPOINT_EVENT_ID, ChunkHeader, FLAG_COMPRESSED_INTS, FLAG_FINAL_CHUNK, GENERATION_FINISHED,
    HEADER_SIZE, VERSION_MAJOR, VERSION_MINOR, write_padded_varint, write_varint,
};

/// Ticks per second of every recording: ticks are nanoseconds.
pub const TICKS_PER_SECOND: i64 = 1_000_000_000;

/// A point on a recording's clock, in ticks (nanoseconds since the clock's
/// origin). Event start times and durations are in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticks(pub i64);

/// A recording's clock: monotonic ticks, anchored to the wall clock once so
/// that every chunk of a file shares one continuous time base.
///
/// It is `Copy` and `Send`: take timestamps on any thread (an allocation
/// callback, say) without touching the recording.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
    origin_epoch_nanos: i64,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let origin = Instant::now();
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        Self {
            origin,
            origin_epoch_nanos: since_epoch.as_nanos() as i64,
        }
    }

    /// The current time.
    #[inline]
    pub fn now(&self) -> Ticks {
        self.ticks_at(Instant::now())
    }

    /// The time of `instant` (before the origin: negative).
    pub fn ticks_at(&self, instant: Instant) -> Ticks {
        match instant.checked_duration_since(self.origin) {
            Some(after) => Ticks(after.as_nanos() as i64),
            None => Ticks(-(self.origin.duration_since(instant).as_nanos() as i64)),
        }
    }

    /// The wall-clock time of `ticks`, in nanoseconds since the Unix epoch:
    /// what readers show for it.
    pub fn epoch_nanos(&self, ticks: Ticks) -> i64 {
        self.origin_epoch_nanos + ticks.0
    }

    /// The ticks of a wall-clock time in nanoseconds since the Unix epoch:
    /// the inverse of [`Clock::epoch_nanos`], for times another clock gave
    /// (the JVM's, say). Before the origin: negative.
    ///
    /// ```
    /// let clock = jfr_writer::Clock::new();
    /// let now = clock.now();
    /// assert_eq!(clock.ticks_at_epoch_nanos(clock.epoch_nanos(now)), now);
    /// let earlier = clock.epoch_nanos(jfr_writer::Ticks(0)) - 5_000;
    /// assert_eq!(clock.ticks_at_epoch_nanos(earlier).0, -5_000);
    /// ```
    pub fn ticks_at_epoch_nanos(&self, epoch_nanos: i64) -> Ticks {
        Ticks(epoch_nanos.saturating_sub(self.origin_epoch_nanos))
    }
}

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

/// Where a recording's bytes go.
pub trait Sink {
    /// Appends bytes at the end of the output.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Appends `parts`, one after the other: in one write where the sink
    /// can, so that a reader of the output never sees some of them only
    /// (a chunk's first flush, header first, is appended so).
    fn append_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        parts.iter().try_for_each(|part| self.append(part))
    }
    /// Appends chunks of no events, complete each (the tail's
    /// spacers: `spacer(n)` makes one of `n` bytes, or more if `n` is below
    /// the least a spacer takes), adding up to at least `len` bytes;
    /// returns how many were appended. By default one spacer, in one
    /// append. A file appends them so that a process killed while it does
    /// leaves whole chunks only ([`JfrFile`]'s).
    fn append_spacers(&mut self, len: u64, spacer: &dyn Fn(u64) -> Vec<u8>) -> io::Result<u64> {
        let bytes = spacer(len);
        self.append(&bytes)?;
        Ok(bytes.len() as u64)
    }
    /// Overwrites bytes at `offset` (from the start of the output) in the
    /// current chunk, or in an ended one from
    /// [`ended_chunks_patchable_from`](Sink::ended_chunks_patchable_from) on.
    fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// The first output offset [`Sink::patch`] takes in a chunk that has
    /// ended (what a rotation dropped is before it), or `None` if ended
    /// chunks cannot be patched (a stream, written a chunk at a time).
    /// Demoting events ([`Recording::demote`]) needs it.
    fn ended_chunks_patchable_from(&self) -> Option<u64> {
        None
    }
    /// A flush is complete: make it durable where the sink can.
    fn flush(&mut self) -> io::Result<()>;
    /// The current chunk is complete and will not be patched again.
    fn end_chunk(&mut self) -> io::Result<()>;
    /// Writes a complete recording of everything flushed so far to the file
    /// `to` ([`crate::snapshot`]), with `tail` (encoded events) appended to
    /// its last chunk and `patches` (output offsets, sorted, and the bytes
    /// to write there) applied to the copy, leaving the output as it is.
    /// By default unsupported: only a file can be read back.
    fn snapshot(
        &mut self,
        to: &Path,
        tail: &[u8],
        patches: &[(u64, &[u8])],
    ) -> io::Result<Snapshot> {
        let _ = (to, tail, patches);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this recording's output cannot be read back for a snapshot",
        ))
    }
}

/// A sink for anything seekable (a file, a `Cursor<Vec<u8>>`): chunks are
/// written in place and their headers patched, so the output is a valid
/// recording after every flush.
#[derive(Debug)]
pub struct SeekableSink<W: Write + Seek> {
    inner: W,
    end: u64,
}

impl<W: Write + Seek> SeekableSink<W> {
    /// Writes to `inner` from its current position... which must be its start.
    pub fn new(inner: W) -> Self {
        Self { inner, end: 0 }
    }

    /// The writer, after the recording is closed.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write + Seek> Sink for SeekableSink<W> {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.end += bytes.len() as u64;
        Ok(())
    }

    fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.inner.write_all(bytes)?;
        self.inner.seek(SeekFrom::Start(self.end))?;
        Ok(())
    }

    fn ended_chunks_patchable_from(&self) -> Option<u64> {
        Some(0)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn end_chunk(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A sink for a stream that cannot seek (a pipe, a compressor): each chunk is
/// kept in memory until it is complete, then written once. A flush makes
/// nothing visible; chunk rotation bounds the memory.
pub struct StreamSink<W: Write> {
    inner: W,
    chunk: Vec<u8>,
    /// The output offset of `chunk[0]`.
    chunk_start: u64,
}

impl<W: Write> StreamSink<W> {
    /// Writes complete chunks to `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            chunk: Vec::new(),
            chunk_start: 0,
        }
    }

    /// The writer, after the recording is closed.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Sink for StreamSink<W> {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.chunk.extend_from_slice(bytes);
        Ok(())
    }

    fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let at = offset
            .checked_sub(self.chunk_start)
            .map(|at| at as usize)
            .filter(|at| at + bytes.len() <= self.chunk.len())
            .ok_or_else(|| io::Error::other("patch outside the chunk being written"))?;
        self.chunk[at..at + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn end_chunk(&mut self) -> io::Result<()> {
        self.inner.write_all(&self.chunk)?;
        self.inner.flush()?;
        self.chunk_start += self.chunk.len() as u64;
        self.chunk.clear();
        Ok(())
    }
}

/// The sink of [`Recording::create`]: a plain `.jfr` file, or a
/// zstd-compressed stream for a name ending in `.zst`.
pub enum FileSink {
    /// An uncompressed file, valid after every flush.
    Plain(JfrFile),
    /// A zstd stream, written a whole chunk at a time.
    Zstd(StreamSink<ZstdFile>),
}

/// The page size a file's spacers are aligned to ([`JfrFile`]'s
/// `append_spacers`): Linux's on every machine the agent runs on (x86-64
/// and aarch64 kernels with 4 KiB pages; a larger page is a multiple).
const PAGE: u64 = 4096;

/// A plain `.jfr` file, written in place (chunks appended, headers patched)
/// and, with a `max_size` or `max_age` ([`Options`]), rotated when a chunk
/// ends: the oldest whole chunks are dropped by copying the kept ones to a
/// temporary file beside it and renaming that over it. A reader sees the
/// old file or the new one, never half of one, and a reader that opened the
/// old one keeps reading it unchanged.
///
/// Offsets given to [`Sink::patch`] count from the start of the whole
/// output, dropped chunks included.
pub struct JfrFile {
    path: PathBuf,
    /// Created (or emptied) by the first write, which writes a whole chunk
    /// ([`Recording::create`] makes one at once): the file is never seen
    /// empty but between the two.
    file: Option<BufWriter<File>>,
    /// Bytes in the file.
    len: u64,
    /// Bytes of the output dropped from the front of the file.
    dropped: u64,
    max_size: Option<u64>,
    max_age: Option<Duration>,
    /// The complete chunks in the file, oldest first.
    chunks: VecDeque<EndedChunk>,
    /// When the last flush was made: the age of a chunk counts from its last.
    last_flush: Instant,
}

/// How much of each limit a rotation keeps, in quarters of it.
const RETAINED_PER_QUARTER: u64 = 3;

/// A complete chunk of a [`JfrFile`].
#[derive(Debug, Clone, Copy)]
struct EndedChunk {
    size: u64,
    /// Its last flush.
    ended: Instant,
}

impl JfrFile {
    /// The file at `path`, created by the first write.
    fn create(path: &Path, options: &Options) -> Self {
        Self {
            path: path.to_owned(),
            file: None,
            len: 0,
            dropped: 0,
            max_size: options.max_size,
            max_age: options.max_age,
            chunks: VecDeque::new(),
            last_flush: Instant::now(),
        }
    }

    /// The file, created (or emptied) if it was not yet.
    fn file(&mut self) -> io::Result<&mut BufWriter<File>> {
        if self.file.is_none() {
            let file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&self.path)?;
            self.file = Some(BufWriter::with_capacity(256 * 1024, file));
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    /// How many of the oldest complete chunks the limits drop now: never
    /// the newest. Once the file is past a limit, chunks are dropped down to
    /// [`RETAINED_PER_QUARTER`] quarters of each limit, so that a rotation,
    /// which copies every kept byte, comes once per quarter of the limit
    /// written rather than at every chunk's end.
    fn chunks_to_drop(&self, now: Instant) -> usize {
        let age = |chunk: &EndedChunk| now.saturating_duration_since(chunk.ended);
        let over_size = self.max_size.is_some_and(|max| self.len > max);
        let over_age = self
            .max_age
            .is_some_and(|max| self.chunks.front().is_some_and(|c| age(c) > max));
        if !(over_size || over_age) {
            return 0;
        }
        let size_target = self.max_size.map(|max| max / 4 * RETAINED_PER_QUARTER);
        let age_target = self
            .max_age
            .map(|max| max / 4 * RETAINED_PER_QUARTER as u32);
        let mut kept_size = self.len;
        let mut drop = 0;
        for chunk in self.chunks.iter().take(self.chunks.len().saturating_sub(1)) {
            let too_big = size_target.is_some_and(|target| kept_size > target);
            let too_old = age_target.is_some_and(|target| age(chunk) > target);
            if !(too_big || too_old) {
                break;
            }
            kept_size -= chunk.size;
            drop += 1;
        }
        drop
    }

    /// Drops the `count` oldest chunks: copies the rest to a temporary file
    /// and renames it over the recording, then appends to that.
    fn drop_oldest(&mut self, count: usize) -> io::Result<()> {
        let dropped: u64 = self.chunks.iter().take(count).map(|c| c.size).sum();
        let kept = self.len - dropped;
        self.file()?.flush()?;
        let temporary = crate::snapshot::temporary_path(&self.path, "rotate");
        let copied = (|| {
            let mut out = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&temporary)?;
            let mut source = self.file()?.get_ref();
            source.seek(SeekFrom::Start(dropped))?;
            let copied = io::copy(&mut source.take(kept), &mut out)?;
            if copied != kept {
                return Err(io::Error::other(format!(
                    "rotating {}: copied {copied} of {kept} bytes",
                    self.path.display()
                )));
            }
            // Durable before it replaces the recording.
            out.sync_data()?;
            fs::rename(&temporary, &self.path)?;
            Ok(out)
        })();
        let out = match copied {
            Ok(out) => out,
            Err(e) => {
                let _ = fs::remove_file(&temporary);
                // The old file is intact; put its position back at its end.
                let len = self.len;
                self.file()?.get_ref().seek(SeekFrom::Start(len))?;
                return Err(e);
            }
        };
        // `out` is positioned at its end: appends go on there.
        self.file = Some(BufWriter::with_capacity(256 * 1024, out));
        self.len = kept;
        self.dropped += dropped;
        self.chunks.drain(..count);
        Ok(())
    }

    fn finish(mut self) -> io::Result<()> {
        self.file()?;
        let file = self.file.take().expect("opened above");
        file.into_inner().map_err(|e| e.into_error())?.sync_all()
    }
}

impl Sink for JfrFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file()?.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn append_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        // Past the buffer, in one vectored write: buffered, a large part
        // would flush what is before it on its own.
        let file = self.file()?;
        file.flush()?;
        let file = file.get_mut();
        let mut slices: Vec<IoSlice<'_>> = parts.iter().map(|part| IoSlice::new(part)).collect();
        let mut left = &mut slices[..];
        let mut appended = 0;
        let result = loop {
            if left.is_empty() {
                break Ok(());
            }
            match file.write_vectored(left) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(written) => {
                    appended += written as u64;
                    IoSlice::advance_slices(&mut left, written);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.len += appended;
        result
    }

    /// Each spacer in a write of its own that ends on a page boundary of
    /// the file and crosses none: Linux cuts a write to a file short at a
    /// page boundary when its process is killed meanwhile (a fatal signal
    /// is checked before each page is copied), so one write of many pages
    /// could leave a spacer torn, which no reader reads. A page's rest too
    /// small for a spacer is taken with the next page: only such a first
    /// spacer crosses a boundary.
    fn append_spacers(&mut self, len: u64, spacer: &dyn Fn(u64) -> Vec<u8>) -> io::Result<u64> {
        self.file()?.flush()?;
        let mut appended = 0;
        while appended < len {
            let room = PAGE - self.len % PAGE;
            let mut piece = spacer(room);
            if piece.len() as u64 > room {
                piece = spacer(room + PAGE);
            }
            self.file()?.get_mut().write_all(&piece)?;
            self.len += piece.len() as u64;
            appended += piece.len() as u64;
        }
        Ok(appended)
    }

    fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let at = offset
            .checked_sub(self.dropped)
            .filter(|at| at + bytes.len() as u64 <= self.len)
            .ok_or_else(|| io::Error::other("patch outside the file (in a dropped chunk)"))?;
        let len = self.len;
        let file = self.file()?;
        file.seek(SeekFrom::Start(at))?;
        file.write_all(bytes)?;
        file.seek(SeekFrom::Start(len))?;
        Ok(())
    }

    fn ended_chunks_patchable_from(&self) -> Option<u64> {
        Some(self.dropped)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.last_flush = Instant::now();
        self.file()?.flush()
    }

    fn end_chunk(&mut self) -> io::Result<()> {
        let in_file: u64 = self.chunks.iter().map(|c| c.size).sum();
        let size = self.len - in_file;
        if size > 0 {
            self.chunks.push_back(EndedChunk {
                size,
                ended: self.last_flush,
            });
        }
        match self.chunks_to_drop(Instant::now()) {
            0 => Ok(()),
            count => self.drop_oldest(count),
        }
    }

    fn snapshot(
        &mut self,
        to: &Path,
        tail: &[u8],
        patches: &[(u64, &[u8])],
    ) -> io::Result<Snapshot> {
        self.file()?.flush()?;
        // Output offsets to the file's: what a rotation dropped is gone.
        let in_file: Vec<(u64, &[u8])> = patches
            .iter()
            .filter(|(offset, _)| *offset >= self.dropped)
            .map(|&(offset, bytes)| (offset - self.dropped, bytes))
            .collect();
        crate::snapshot::snapshot_file(self.file()?.get_ref(), to, tail, &in_file)
    }
}

impl std::fmt::Debug for JfrFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JfrFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("dropped", &self.dropped)
            .field("chunks", &self.chunks.len())
            .finish_non_exhaustive()
    }
}

/// A zstd-compressed file whose frame is finished even if it is dropped
/// unclosed (at a JVM's exit, say), so what was written stays readable.
pub struct ZstdFile {
    encoder: Option<zstd::Encoder<'static, BufWriter<File>>>,
}

impl ZstdFile {
    fn encoder(&mut self) -> &mut zstd::Encoder<'static, BufWriter<File>> {
        self.encoder.as_mut().expect("present until finished")
    }

    /// Ends the zstd frame and syncs the file.
    fn finish(mut self) -> io::Result<()> {
        let encoder = self.encoder.take().expect("present until finished");
        let file = encoder.finish()?.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    }
}

impl Write for ZstdFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.encoder().write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.encoder().flush()
    }
}

impl Drop for ZstdFile {
    fn drop(&mut self) {
        if let Some(encoder) = self.encoder.take() {
            let _ = encoder.finish().and_then(|mut file| file.flush());
        }
    }
}

impl std::fmt::Debug for FileSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Plain(_) => "FileSink::Plain",
            Self::Zstd(_) => "FileSink::Zstd",
        })
    }
}

impl FileSink {
    /// Finishes the output: ends the zstd frame, flushes and syncs the file.
    /// ([`Recording::close`] does this; call it after [`Recording::finish`].)
    pub fn finish(self) -> io::Result<()> {
        match self {
            Self::Plain(file) => file.finish(),
            Self::Zstd(sink) => sink.into_inner().finish(),
        }
    }
}

impl Sink for FileSink {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Plain(sink) => sink.append(bytes),
            Self::Zstd(sink) => sink.append(bytes),
        }
    }

    fn append_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        match self {
            Self::Plain(sink) => sink.append_parts(parts),
            Self::Zstd(sink) => sink.append_parts(parts),
        }
    }

    fn append_spacers(&mut self, len: u64, spacer: &dyn Fn(u64) -> Vec<u8>) -> io::Result<u64> {
        match self {
            Self::Plain(sink) => sink.append_spacers(len, spacer),
            Self::Zstd(sink) => sink.append_spacers(len, spacer),
        }
    }

    fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Plain(sink) => sink.patch(offset, bytes),
            Self::Zstd(sink) => sink.patch(offset, bytes),
        }
    }

    fn ended_chunks_patchable_from(&self) -> Option<u64> {
        match self {
            Self::Plain(sink) => sink.ended_chunks_patchable_from(),
            Self::Zstd(sink) => sink.ended_chunks_patchable_from(),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(sink) => sink.flush(),
            Self::Zstd(sink) => sink.flush(),
        }
    }

    fn end_chunk(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(sink) => sink.end_chunk(),
            Self::Zstd(sink) => sink.end_chunk(),
        }
    }

    fn snapshot(
        &mut self,
        to: &Path,
        tail: &[u8],
        patches: &[(u64, &[u8])],
    ) -> io::Result<Snapshot> {
        match self {
            Self::Plain(sink) => sink.snapshot(to, tail, patches),
            Self::Zstd(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a snapshot needs a plain .jfr recording, not a zstd-compressed one",
            )),
        }
    }
}

/// The chunk being written.
#[derive(Debug)]
struct Chunk {
    /// Output offset of the chunk's first byte.
    start: u64,
    header: ChunkHeader,
    /// Bytes of the chunk on the sink, its tail included ([`crate::tail`]):
    /// what its header says. 0 until its first flush.
    size: u64,
    /// Where its events end and its tail begins, from its start: where the
    /// next flush writes.
    end: u64,
    /// Chunk-relative offset of the newest checkpoint (0: none yet).
    last_checkpoint: u64,
    /// The metadata version last written in this chunk (0: none yet).
    metadata_version: u64,
    /// Whether a flush wrote events to it: a chunk of none is not ended by
    /// a limit (the one [`Recording::create`] writes at once, say).
    holds_events: bool,
    /// The frame types this chunk's pools hold.
    frame_types_written: [bool; 5],
    /// Past its size or age limit: the next flush with events starts a new
    /// chunk (and the pools already mark constants for that one).
    full: bool,
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
    metadata: Metadata,
    types: StandardTypes,
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
    /// Value types reserved by name and not registered yet.
    reserved: Vec<ClassId>,
    /// Value types registered, for struct fields given as their fields
    /// ([`crate::EventWriter::struct_fields`]).
    value_types: Vec<ValueType>,
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
            FileSink::Zstd(StreamSink::new(ZstdFile {
                encoder: Some(zstd::Encoder::new(file, 3)?),
            }))
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
        let mut metadata = Metadata::empty();
        let types = StandardTypes::declare(&mut metadata);
        crate::pool::declare_classes(&mut metadata, &types);
        let clock = Clock::new();
        Self {
            id: NEXT_RECORDING_ID.fetch_add(1, Ordering::Relaxed),
            sink: Some(sink),
            options,
            clock,
            next_chunk_start: clock.now(),
            metadata,
            types,
            pools: Pools::new(),
            events: Vec::with_capacity(64 * 1024),
            pool_bytes: Vec::new(),
            chunk: None,
            output_end: 0,
            events_written: 0,
            tail_from: None,
            reserved: Vec::new(),
            value_types: Vec::new(),
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

    /// Registers an event type. Registering the same name twice is an error.
    pub fn register(&mut self, builder: EventTypeBuilder) -> Result<EventType, Error> {
        self.check_new_type(&builder.name, &builder.fields)?;
        self.declare_relations(&builder.fields);
        let t = self.types;
        let id = self.metadata.reserve(&builder.name);
        let field = |name: &str, class, constant_pool, annotations| FieldDecl {
            name: name.to_owned(),
            class,
            constant_pool,
            array: false,
            annotations,
        };
        let mut fields = vec![field(
            field_name::START_TIME,
            t.long,
            false,
            vec![
                t.label("Start Time"),
                annotation(t.timestamp, unit_name::TICKS),
            ],
        )];
        if builder.duration {
            fields.push(field(
                field_name::DURATION,
                t.long,
                false,
                vec![
                    t.label("Duration"),
                    annotation(t.timespan, unit_name::TICKS),
                ],
            ));
        }
        if builder.thread {
            fields.push(field(
                field_name::EVENT_THREAD,
                t.thread,
                true,
                vec![
                    t.label("Event Thread"),
                    t.describe("Thread in which event was committed in"),
                ],
            ));
        }
        if builder.stack_trace {
            fields.push(field(
                field_name::STACK_TRACE,
                t.stack_trace,
                true,
                vec![
                    t.label("Stack Trace"),
                    t.describe("Stack Trace starting from the method the event was committed in"),
                ],
            ));
        }
        for spec in &builder.fields {
            fields.push(self.field_decl(spec));
        }

        let mut annotations = Vec::new();
        if !builder.category.is_empty() {
            let path: Vec<&str> = builder.category.iter().map(String::as_str).collect();
            annotations.push(annotation_array(t.category, &path));
        }
        annotations.extend(builder.label.as_deref().map(|l| t.label(l)));
        annotations.extend(builder.description.as_deref().map(|d| t.describe(d)));
        if builder.experimental {
            annotations.push(marker(t.experimental));
        }
        let settings = builder
            .settings
            .iter()
            .map(|(setting, default_value)| SettingDecl {
                name: setting.name().to_owned(),
                class: t.setting(*setting),
                default_value: default_value.clone(),
                annotations: Vec::new(),
            })
            .collect();
        let class = self.metadata.class_mut(id);
        class.super_type = Some(class_name::EVENT);
        class.fields = fields;
        class.settings = settings;
        class.annotations = annotations;

        let layout = builder.layout();
        Ok(EventType {
            id,
            name: builder.name.as_str().into(),
            typed_write: std::sync::Arc::new(AtomicUsize::new(0)),
            fields: layout[1..].into(),
            field_names: builder.field_names().into(),
            recording_id: self.id,
        })
    }

    /// Reserves the name of a value type, to declare fields of it before it
    /// is registered: value types that refer to each other
    /// (`jdk.types.OldObject` and `jdk.types.Reference`). Register it later
    /// with [`Recording::register_value_type`] under the same name.
    pub fn reserve_value_type(&mut self, name: &str) -> Result<ValueTypeId, Error> {
        if self.metadata.class_id(name).is_some() {
            return Err(Error::DuplicateType {
                name: name.to_owned(),
            });
        }
        let id = self.metadata.reserve(name);
        self.reserved.push(id);
        Ok(ValueTypeId(id))
    }

    /// Registers a value type: a struct that fields of events (and of other
    /// value types) hold inline, declared with [`FieldType::Struct`](crate::FieldType::Struct), or by
    /// key as a constant of the chunk, declared with [`FieldType::Constant`](crate::FieldType::Constant).
    pub fn register_value_type(&mut self, builder: ValueTypeBuilder) -> Result<ValueType, Error> {
        let reserved = self
            .metadata
            .class_id(&builder.name)
            .filter(|id| self.reserved.contains(id));
        if reserved.is_none() {
            self.check_new_type(&builder.name, &builder.fields)?;
        } else {
            self.check_fields(&builder.name, &builder.fields)?;
        }
        if builder.simple && builder.fields.len() != 1 {
            return Err(Error::NotSimple {
                type_name: builder.name.clone(),
                fields: builder.fields.len(),
            });
        }
        self.declare_relations(&builder.fields);
        let t = self.types;
        let id = match reserved {
            Some(id) => {
                self.reserved.retain(|&r| r != id);
                id
            }
            None => self.metadata.reserve(&builder.name),
        };
        let fields = builder
            .fields
            .iter()
            .map(|spec| self.field_decl(spec))
            .collect();
        let mut annotations = Vec::new();
        annotations.extend(builder.label.as_deref().map(|l| t.label(l)));
        annotations.extend(builder.description.as_deref().map(|d| t.describe(d)));
        let class = self.metadata.class_mut(id);
        class.fields = fields;
        class.annotations = annotations;
        class.simple_type = builder.simple;
        let value_type = ValueType {
            id: ValueTypeId(id),
            name: builder.name.as_str().into(),
            fields: builder.fields.iter().map(FieldSpec::slot).collect(),
            field_names: builder.fields.iter().map(|f| f.name.clone()).collect(),
            recording_id: self.id,
        };
        self.value_types.push(value_type.clone());
        Ok(value_type)
    }

    /// The registered value type `id`.
    pub(crate) fn value_type(&self, id: ValueTypeId) -> Option<&ValueType> {
        self.value_types
            .iter()
            .find(|value_type| value_type.id == id)
    }

    /// Makes a constant of `value_type` from its fields, for
    /// [`FieldType::Constant`](crate::FieldType::Constant) fields of events and other constants in this
    /// chunk. Equal constants made in one chunk share one key. The constant
    /// is written with the chunk's next flush and is valid until the chunk
    /// ends: an event or constant of a later chunk that refers to it fails
    /// with [`Error::StaleConstant`]. So make constants right before the
    /// events that use them.
    pub fn constant(
        &mut self,
        value_type: &ValueType,
        fields: &[Value<'_>],
    ) -> Result<ConstantRef, Error> {
        if value_type.recording_id != self.id {
            return Err(Error::ForeignEventType {
                event: value_type.name.to_string(),
            });
        }
        let mut encoded = std::mem::take(&mut self.constant_scratch);
        encoded.clear();
        let mut result = Ok(());
        for (index, slot) in value_type.fields.iter().enumerate() {
            let field = || value_type.field_names[index].clone();
            let written = match fields.get(index) {
                Some(value) => write_value(&mut encoded, &mut self.pools, self.id, *slot, value),
                None => {
                    result = Err(Error::MissingField {
                        event: value_type.name.to_string(),
                        field: field(),
                    });
                    break;
                }
            };
            match written {
                Ok(()) => {}
                Err(Mismatch::Type) => {
                    result = Err(Error::FieldMismatch {
                        event: value_type.name.to_string(),
                        field: field(),
                        declared: Some(format!("{:?}", slot.field_type)),
                        written: fields[index].field_type().map_or_else(
                            || "an array, struct or array element of another type".to_owned(),
                            |w| format!("{w:?}"),
                        ),
                    });
                    break;
                }
                Err(Mismatch::Stale) => {
                    result = Err(Error::StaleConstant {
                        event: value_type.name.to_string(),
                        field: field(),
                    });
                    break;
                }
            }
        }
        if result.is_ok() && fields.len() > value_type.fields.len() {
            result = Err(Error::FieldMismatch {
                event: value_type.name.to_string(),
                field: "(none: all fields are written)".to_owned(),
                declared: None,
                written: format!("{} fields", fields.len()),
            });
        }
        let made = result.map(|()| {
            let (key, chunk) = self.pools.constant(value_type.id.0, &encoded);
            ConstantRef {
                class: value_type.id.0,
                key,
                chunk,
                recording: self.id,
            }
        });
        self.constant_scratch = encoded;
        made
    }

    /// Declares the relation annotations `fields` use and the recording
    /// does not declare yet.
    fn declare_relations(&mut self, fields: &[FieldSpec]) {
        for name in fields.iter().filter_map(|f| f.relation.as_deref()) {
            if self.metadata.class_id(name).is_none() {
                let id = self.metadata.reserve(name);
                let relational = marker(self.types.relational);
                let class = self.metadata.class_mut(id);
                class.super_type = Some(class_name::ANNOTATION);
                class.annotations = vec![relational];
            }
        }
    }

    /// A new type needs a new name, and no array of pooled values.
    fn check_new_type(&self, name: &str, fields: &[FieldSpec]) -> Result<(), Error> {
        if self.metadata.class_id(name).is_some() {
            return Err(Error::DuplicateType {
                name: name.to_owned(),
            });
        }
        self.check_fields(name, fields)
    }

    /// No array of pooled values, which the JDK cannot read.
    fn check_fields(&self, name: &str, fields: &[FieldSpec]) -> Result<(), Error> {
        if let Some(field) = fields
            .iter()
            .find(|f| f.array && self.field_decl(f).constant_pool)
        {
            return Err(Error::PooledArray {
                type_name: name.to_owned(),
                field: field.name.clone(),
            });
        }
        Ok(())
    }

    /// The metadata declaration of a field.
    fn field_decl(&self, spec: &FieldSpec) -> FieldDecl {
        let t = self.types;
        let (class, constant_pool) = t.class_of(spec.field_type);
        let mut annotations = Vec::new();
        if spec.unsigned {
            annotations.push(marker(t.unsigned));
        }
        annotations.extend(spec.relation.as_deref().map(|name| {
            marker(
                self.metadata
                    .class_id(name)
                    .expect("relations are declared before their fields"),
            )
        }));
        annotations.extend(spec.unit.map(|unit| match unit {
            Unit::Bytes => annotation(t.data_amount, unit_name::BYTES),
            Unit::Bits => annotation(t.data_amount, unit_name::BITS),
            Unit::TimestampTicks => annotation(t.timestamp, unit_name::TICKS),
            Unit::TimestampMillisSinceEpoch => {
                annotation(t.timestamp, unit_name::MILLISECONDS_SINCE_EPOCH)
            }
            Unit::TimespanTicks => annotation(t.timespan, unit_name::TICKS),
            Unit::TimespanNanos => annotation(t.timespan, unit_name::NANOSECONDS),
            Unit::TimespanMillis => annotation(t.timespan, unit_name::MILLISECONDS),
            Unit::TimespanSeconds => annotation(t.timespan, unit_name::SECONDS),
            Unit::Percentage => marker(t.percentage),
            Unit::Frequency => marker(t.frequency),
            Unit::MemoryAddress => marker(t.memory_address),
        }));
        annotations.extend(spec.label.as_deref().map(|l| t.label(l)));
        annotations.extend(spec.description.as_deref().map(|d| t.describe(d)));
        FieldDecl {
            name: spec.name.clone(),
            class,
            constant_pool,
            array: spec.array,
            annotations,
        }
    }

    /// Interns a stack trace. It is encoded at once, so it may be borrowed:
    /// a profiler that sees a new stack at almost every sample can build
    /// each one in the same `StackTrace`. A stack trace new to the
    /// recording is written in the chunk being built, as if an event used
    /// it: one is interned for that.
    pub fn stack_trace(&mut self, trace: impl Borrow<StackTrace>) -> StackTraceRef {
        self.pools.stack_trace(trace.borrow())
    }

    /// Adds a stack trace under a new key without looking for an equal one
    /// held, and marks it for the chunk being built, as
    /// [`Recording::stack_trace`] does a new one: the receipt says so. For a
    /// profiler that maps its own stacks to their refs, and so asks for
    /// each stack once: it saves hashing the encoded trace and a look-up in
    /// a large table, at its adding and again at its dropping. An equal
    /// trace added twice gets two keys, two constants of the same value,
    /// which JFR allows.
    pub fn add_stack_trace(&mut self, trace: impl Borrow<StackTrace>) -> Marked<StackTraceRef> {
        self.pools.add_stack_trace(trace.borrow())
    }

    /// Marks a stack trace for the chunk being built, as an event using it
    /// would, and returns the receipt ([`Marked`]): events of this chunk
    /// given it ([`crate::StackTraceField`]) write the key without looking
    /// the stack trace up. `None` if the recording does not hold it.
    pub fn mark_stack_trace(&mut self, reference: StackTraceRef) -> Option<Marked<StackTraceRef>> {
        self.pools.mark_stack_trace(reference)
    }

    /// Whether `marked` is a receipt for the chunk being built: if not, a
    /// profiler that keeps receipts marks the value again
    /// ([`Recording::mark_stack_trace`]) for the next events to use.
    pub fn is_marked<R>(&self, marked: Marked<R>) -> bool {
        self.pools.is_marked(marked)
    }

    /// Drops the pooled values that neither the chunk being built nor the
    /// one before it used, except those `pinned` names and what they refer
    /// to: a recording left running sees new stacks, classes and threads
    /// without end, and this bounds its memory by what recent chunks use.
    ///
    /// Best called right after a chunk ends ([`Recording::end_chunk`], or
    /// [`Recording::chunk_number`] changed at a flush): every chunk writes
    /// the values its events use, so nothing is lost by interning a dropped
    /// value again later, under a new key (keys are never reused). The refs
    /// of the values kept stay valid; a ref to a dropped one names nothing
    /// any more ([`Recording::holds`] says so, and an event given it fails
    /// with [`Error::ForeignReference`]): `pinned` must name every ref its
    /// caller will use again without asking.
    pub fn drop_unused(&mut self, pinned: impl IntoIterator<Item = PoolRef>) {
        self.pools.drop_unused(pinned);
    }

    /// Whether the recording holds the value `reference` names: false once
    /// [`Recording::drop_unused`] dropped it.
    pub fn holds(&self, reference: impl Into<PoolRef>) -> bool {
        self.pools.holds(reference.into())
    }

    /// How many values each constant pool holds now.
    pub fn pool_sizes(&self) -> PoolSizes {
        self.pools.sizes()
    }

    /// The chunk that events committed now go to: 1 for the first, and one
    /// more each time a flush starts a new chunk.
    pub fn chunk_number(&self) -> u32 {
        self.pools.chunk()
    }

    pub(crate) fn event_committed(&mut self) -> Result<(), Error> {
        self.events_written += 1;
        if self.events.len() >= self.options.max_buffered_bytes && self.tail_from.is_none() {
            self.flush()?;
        }
        Ok(())
    }

    fn sink(&mut self) -> &mut S {
        self.sink
            .as_mut()
            .expect("the sink is present until the recording is finished")
    }

    /// Writes everything buffered; afterwards the output is a complete
    /// recording of every event committed so far (for a seekable sink).
    pub fn flush(&mut self) -> Result<(), Error> {
        self.flush_chunk(false)
    }

    fn flush_chunk(&mut self, last: bool) -> Result<(), Error> {
        debug_assert!(
            self.tail_from.is_none(),
            "a snapshot's tail is held: ended or abandoned before a flush"
        );
        // A full chunk takes no more events, but a flush without any still
        // finishes it (it may be the last).
        if self.chunk.is_none() || !self.events.is_empty() {
            self.open_chunk()?;
        }
        let now = self.clock.now();
        let mut chunk = self.chunk.take().expect("a chunk was just started");
        let result = self.append_to_chunk(&mut chunk, now, last);
        self.chunk = Some(chunk);
        result
    }

    /// Makes the chunk being written one that takes events: the first one,
    /// or the next when this one is full.
    fn open_chunk(&mut self) -> Result<(), Error> {
        let previous = match &self.chunk {
            Some(chunk) if !chunk.full => return Ok(()),
            Some(full) => Some((full.start + full.size, full.header.start_ticks)),
            None => None,
        };
        if let Some((end, _)) = previous {
            self.sink().end_chunk()?;
            self.chunk = None;
            self.output_end = end;
        }
        self.start_chunk(previous.map(|(_, start_ticks)| start_ticks));
        Ok(())
    }

    /// Begins the next chunk. Nothing is written yet: its first flush
    /// writes its header, complete, before its first bytes.
    fn start_chunk(&mut self, previous_start_ticks: Option<i64>) {
        let mut start_ticks = self.next_chunk_start;
        if let Some(previous) = previous_start_ticks {
            // Chunks need distinct start times, or Mission Control drops one.
            start_ticks = start_ticks.max(Ticks(previous + 1));
        }
        let header = ChunkHeader {
            major: VERSION_MAJOR,
            minor: VERSION_MINOR,
            chunk_size: HEADER_SIZE as u64,
            constant_pool_offset: 0,
            metadata_offset: 0,
            start_nanos: self.clock.epoch_nanos(start_ticks),
            duration_nanos: 0,
            start_ticks: start_ticks.0,
            ticks_per_second: TICKS_PER_SECOND,
            generation: GENERATION_FINISHED,
            flags: FLAG_COMPRESSED_INTS,
        };
        self.chunk = Some(Chunk {
            start: self.output_end,
            header,
            size: 0,
            end: HEADER_SIZE as u64,
            last_checkpoint: 0,
            metadata_version: 0,
            holds_events: false,
            frame_types_written: [false; 5],
            full: false,
        });
    }

    /// Writes the buffered events, a checkpoint with the constants they
    /// brought in, and the metadata if it changed, then the chunk's header
    /// saying so, in an order that leaves the output a complete recording
    /// between any two writes ([`crate::tail`]).
    fn append_to_chunk(&mut self, chunk: &mut Chunk, now: Ticks, last: bool) -> Result<(), Error> {
        // The events, the checkpoint's head (small) behind them; then, from
        // their own buffer, its pools and the metadata if it changed. (Copied
        // behind the events, a flush of many new stack traces grew the
        // events buffer by megabytes, into fresh pages each time.)
        let mut events = std::mem::take(&mut self.events);
        let mut rest = std::mem::take(&mut self.pool_bytes);
        chunk.holds_events |= !events.is_empty();
        let checkpoint_offset = chunk.end + events.len() as u64;
        let sections =
            self.pools
                .write_pending(&self.types, &mut chunk.frame_types_written, &mut rest);
        // The JDK reads a checkpoint at the header's offset even when it is
        // 0, so a chunk's first flush writes one even with no pools in it.
        if sections > 0 || chunk.last_checkpoint == 0 {
            let mut head = Vec::with_capacity(40);
            write_varint(&mut head, CHECKPOINT_EVENT_ID);
            write_varint(&mut head, now.0 as u64);
            write_varint(&mut head, 0); // duration
            let delta = match chunk.last_checkpoint {
                0 => 0,
                previous => previous as i64 - checkpoint_offset as i64,
            };
            write_varint(&mut head, delta as u64);
            head.push(1); // type mask: FLUSH, a flush point for streaming readers
            write_varint(&mut head, sections);
            write_varint(&mut events, sized_len(head.len() + rest.len()) as u64);
            events.extend_from_slice(&head);
            chunk.last_checkpoint = checkpoint_offset;
        }
        if chunk.metadata_version != self.metadata.version() {
            chunk.header.metadata_offset = chunk.end + (events.len() + rest.len()) as u64;
            self.metadata.encode_event(now.0, &mut rest);
            chunk.metadata_version = self.metadata.version();
        }
        let written = (events.len() + rest.len()) as u64;
        chunk.header.constant_pool_offset = chunk.last_checkpoint;
        chunk.header.duration_nanos = (now.0 - chunk.header.start_ticks).max(0);
        if last {
            chunk.header.flags |= FLAG_FINAL_CHUNK;
        }

        let sink = self
            .sink
            .as_mut()
            .expect("the sink is present until the recording is finished");
        let result = if chunk.size == 0 {
            tail::write_first(sink, &mut chunk.header, &[&events, &rest])
        } else {
            tail::write_flush(
                sink,
                chunk.start,
                chunk.end,
                chunk.size,
                &mut chunk.header,
                &[&events, &rest],
            )
        };
        // Both buffers keep their capacity.
        events.clear();
        rest.clear();
        self.events = events;
        self.pool_bytes = rest;
        match result {
            Ok(_) => self.demotions.flushed(chunk.start + chunk.end),
            Err(_) => self.demotions.discarded(),
        }
        chunk.size = result?;
        chunk.end += written;
        sink.flush()?;

        if !chunk.full
            && chunk.holds_events
            && !self.options.manual_chunk_ends
            && self.limits_reached(chunk.size, chunk.header.start_ticks, now)
        {
            self.close_chunk(chunk, now);
        }
        Ok(())
    }

    /// Whether a chunk of `size` bytes started at `start_ticks` has reached
    /// the size or age limit at `now`.
    fn limits_reached(&self, size: u64, start_ticks: i64, now: Ticks) -> bool {
        size >= self.options.max_chunk_size
            || self.options.max_chunk_age.is_some_and(|age| {
                let lived = (now.0 - start_ticks).max(0) as u64;
                Duration::from_nanos(lived) >= age
            })
    }

    /// Closes `chunk` to new events: those committed from now on start the
    /// next chunk at the next flush.
    fn close_chunk(&mut self, chunk: &mut Chunk, now: Ticks) {
        chunk.full = true;
        self.next_chunk_start = now;
        // Events from now on go to the next chunk: their constants must be
        // marked for it, not for this one.
        self.pools.start_chunk();
    }

    /// Makes chunks end only at [`Recording::end_chunk`]
    /// ([`Options::manual_chunk_ends`]), for a writer that puts events at
    /// each chunk's end.
    pub fn end_chunks_manually(&mut self) {
        self.options.manual_chunk_ends = true;
    }

    /// Whether the chunk being written has reached its size limit (counting
    /// the events not flushed yet) or its age limit: with
    /// [`Options::manual_chunk_ends`], the time to write the chunk's last
    /// events and call [`Recording::end_chunk`].
    pub fn chunk_is_due(&self) -> bool {
        let now = self.clock.now();
        let buffered = self.events.len() as u64;
        match &self.chunk {
            Some(chunk) if !chunk.full => {
                self.limits_reached(chunk.size + buffered, chunk.header.start_ticks, now)
            }
            // The buffered events start the next chunk at their flush.
            _ => self.limits_reached(HEADER_SIZE as u64 + buffered, self.next_chunk_start.0, now),
        }
    }

    /// Ends the chunk being written: flushes it, and events committed from
    /// now on go to a new chunk, with their own constants.
    pub fn end_chunk(&mut self) -> Result<(), Error> {
        self.flush()?;
        let now = self.clock.now();
        if let Some(mut chunk) = self.chunk.take() {
            if !chunk.full {
                self.close_chunk(&mut chunk, now);
            }
            self.chunk = Some(chunk);
        }
        Ok(())
    }

    /// Whether events written demotable can be demoted wherever they are
    /// in the output ([`Recording::begin_demotable`]): not in a stream
    /// (`.jfr.zst`), which writes each chunk out once it ends.
    pub fn can_demote(&self) -> bool {
        self.sink
            .as_ref()
            .is_some_and(|sink| sink.ended_chunks_patchable_from().is_some())
    }

    /// Writes the events of `event_type` committed from now until
    /// [`end_demotable`](Self::end_demotable) demotable to `demoted`, a
    /// type of the same fields: [`demote`](Self::demote) later rewrites
    /// their type ids in the output to `demoted`'s, wherever the output
    /// still holds them ([`crate::demote`]). Events of a snapshot's tail
    /// ([`begin_snapshot_tail`](Self::begin_snapshot_tail)) are written as
    /// any event.
    ///
    /// Fails if the types are another recording's, if their fields differ,
    /// or if demotable events are being written already.
    pub fn begin_demotable(
        &mut self,
        event_type: &EventType,
        demoted: &EventType,
    ) -> Result<(), Error> {
        let refuse = |reason: &'static str| Error::Demotion {
            event: event_type.name.to_string(),
            demoted: demoted.name.to_string(),
            reason,
        };
        if event_type.recording_id != self.id || demoted.recording_id != self.id {
            return Err(refuse("registered with another recording"));
        }
        if event_type.fields != demoted.fields || event_type.field_names != demoted.field_names {
            return Err(refuse("their fields differ"));
        }
        if event_type.id == demoted.id {
            return Err(refuse("they are one type"));
        }
        if !self.demotions.begin(event_type.id.get(), demoted.id.get()) {
            return Err(refuse("demotable events are being written already"));
        }
        Ok(())
    }

    /// Ends the demotable events begun with
    /// [`begin_demotable`](Self::begin_demotable): the group to give to
    /// [`demote`](Self::demote). `None` if none were begun.
    pub fn end_demotable(&mut self) -> Option<DemotableEvents> {
        self.demotions.end().map(|(id, events)| DemotableEvents {
            id,
            recording_id: self.id,
            events,
        })
    }

    /// Rewrites the type ids of `events` to the type they were written
    /// demotable to, in place, and flushes: from then on the output holds
    /// them under that type. Events still buffered are flushed first.
    /// Those the output no longer holds (in chunks a rotation dropped), or
    /// cannot patch (in chunks a stream wrote out), are left: returns how
    /// many were rewritten.
    ///
    /// A reader that reads the output meanwhile sees each event under one
    /// type or the other: an id is rewritten in bytes of the same width, to
    /// a type of the same fields.
    pub fn demote(&mut self, events: DemotableEvents) -> Result<usize, Error> {
        if events.recording_id != self.id {
            return Err(Error::Demotion {
                event: format!("{} events", events.events),
                demoted: "their twin".to_owned(),
                reason: "written demotable by another recording",
            });
        }
        if self.demotions.buffered(events.id) {
            self.flush()?;
        }
        let Some(demotion) = self.demotions.take(events.id) else {
            return Ok(0);
        };
        let current_chunk = self.chunk.as_ref().map_or(self.output_end, |c| c.start);
        let first = self
            .sink()
            .ended_chunks_patchable_from()
            .unwrap_or(current_chunk);
        let mut id = [0u8; 8];
        let id = &mut id[..demotion.width];
        write_padded_varint(id, demotion.demoted_to);
        let sink = self.sink();
        let mut demoted = 0;
        for &offset in demotion.offsets.iter().filter(|&&offset| offset >= first) {
            sink.patch(offset, id)?;
            demoted += 1;
        }
        if demoted > 0 {
            sink.flush()?;
        }
        Ok(demoted)
    }

    /// Flushes, then writes a snapshot of the recording so far to the file
    /// `to` (written beside it and renamed, so never seen half written): a
    /// complete recording, its last chunk final, while this one goes on
    /// untouched. Fails for a sink that cannot be read back (a zstd stream).
    pub fn snapshot(&mut self, to: &Path) -> Result<Snapshot, Error> {
        self.snapshot_with(to, |_| Ok(()))
    }

    /// As [`snapshot`](Self::snapshot), with the events `write_tail`
    /// commits at the snapshot's end and nowhere else: what a recording's
    /// end would add, in a copy of a recording that goes on
    /// ([`begin_snapshot_tail`](Self::begin_snapshot_tail)). When
    /// `write_tail` fails, no snapshot is written.
    pub fn snapshot_with(
        &mut self,
        to: &Path,
        write_tail: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<Snapshot, Error> {
        self.begin_snapshot_tail()?;
        match write_tail(self) {
            Ok(()) => self.end_snapshot_tail(to),
            Err(error) => {
                self.abandon_snapshot_tail()?;
                Err(error)
            }
        }
    }

    /// Flushes, then holds the events committed from now on for a
    /// snapshot's tail: [`end_snapshot_tail`](Self::end_snapshot_tail)
    /// writes them at the end of a snapshot and nowhere else, and
    /// [`abandon_snapshot_tail`](Self::abandon_snapshot_tail) drops them.
    /// The constants they use are written to this recording too (a
    /// checkpoint no event of its refers to), so that its pools stay as
    /// their marks say; [`events_written`](Self::events_written) leaves
    /// them out.
    pub fn begin_snapshot_tail(&mut self) -> Result<(), Error> {
        self.flush()?;
        // The tail joins the chunk the file ends with, which must take
        // events: its pools mark constants for it.
        self.open_chunk()?;
        self.tail_from = Some(self.events_written);
        Ok(())
    }

    /// Writes a snapshot of the recording so far ([`snapshot`](Self::snapshot))
    /// ending with the events held since
    /// [`begin_snapshot_tail`](Self::begin_snapshot_tail).
    pub fn end_snapshot_tail(&mut self, to: &Path) -> Result<Snapshot, Error> {
        let tail = self.take_tail()?;
        Ok(self.sink().snapshot(to, &tail, &[])?)
    }

    /// As [`end_snapshot_tail`](Self::end_snapshot_tail), with `demoted`
    /// demoted in the snapshot only ([`demote`](Self::demote)): what the
    /// recording's end would rename when it writes the tail's events. The
    /// recording's own output keeps them as they are.
    pub fn end_snapshot_tail_demoting(
        &mut self,
        to: &Path,
        demoted: &DemotableEvents,
    ) -> Result<Snapshot, Error> {
        let tail = self.take_tail()?;
        let (offsets, id) = match self.demotions.patches(demoted.id) {
            Some(patches) if demoted.recording_id == self.id => patches,
            _ => (Vec::new(), Vec::new()),
        };
        let patches: Vec<(u64, &[u8])> = offsets.iter().map(|&at| (at, id.as_slice())).collect();
        Ok(self.sink().snapshot(to, &tail, &patches)?)
    }

    /// Drops the events held since
    /// [`begin_snapshot_tail`](Self::begin_snapshot_tail).
    pub fn abandon_snapshot_tail(&mut self) -> Result<(), Error> {
        self.take_tail().map(drop)
    }

    /// The events held for a snapshot's tail, taken out of the recording,
    /// whose constants are then written.
    fn take_tail(&mut self) -> Result<Vec<u8>, Error> {
        if let Some(events_written) = self.tail_from.take() {
            self.events_written = events_written;
        }
        let tail = std::mem::take(&mut self.events);
        self.flush()?;
        Ok(tail)
    }

    /// Flushes, marks the last chunk final and returns the sink.
    pub fn finish(mut self) -> Result<S, Error> {
        self.flush_chunk(true)?;
        self.sink().end_chunk()?;
        Ok(self
            .sink
            .take()
            .expect("the sink is present until the recording is finished"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A file's spacers each end on a page boundary of the file, and each
    /// is a page or less but a first one whose page had too little room
    /// left for a spacer (it takes the next page too); they add up to at
    /// least what was asked, and are all in the file.
    #[test]
    fn a_file_appends_its_spacers_a_page_at_a_time() {
        const LEAST: u64 = 200;
        let dir = std::env::temp_dir().join(format!("jfr-writer-spacers-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for (before, asked) in [
            (100, 10_000),
            (PAGE - 50, 5_000),
            (PAGE, 1),
            (3 * PAGE + 7, 70_000),
        ] {
            let path = dir.join(format!("{before}-{asked}.jfr"));
            let mut file = JfrFile::create(&path, &Options::default());
            file.append(&vec![1; before as usize]).unwrap();
            // (asked of the closure, made by it): a spacer is no smaller
            // than LEAST, and one larger than asked is not written.
            let made = RefCell::new(Vec::new());
            let spacer = |len: u64| {
                let piece = vec![0; len.max(LEAST) as usize];
                made.borrow_mut().push((len, piece.len() as u64));
                piece
            };
            let appended = file.append_spacers(asked, &spacer).unwrap();
            let written: Vec<u64> = made
                .into_inner()
                .into_iter()
                .filter(|&(len, piece)| piece == len)
                .map(|(_, piece)| piece)
                .collect();
            let mut end = before;
            for (i, &piece) in written.iter().enumerate() {
                end += piece;
                assert_eq!(end % PAGE, 0, "{before}+{asked}: a spacer ends at {end}");
                let most = if i == 0 { PAGE + LEAST } else { PAGE };
                assert!(
                    piece <= most,
                    "{before}+{asked}: spacer {i} of {piece} bytes"
                );
            }
            assert_eq!(appended, end - before, "{before}+{asked}");
            assert!(appended >= asked, "{before}+{asked}: {appended}");
            assert_eq!(fs::metadata(&path).unwrap().len(), end);
        }
        let _ = fs::remove_dir_all(&dir);
    }
}
