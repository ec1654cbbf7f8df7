//! Where a recording's bytes go ([`Sink`]): any seekable writer, a stream
//! written a chunk at a time, or the file of [`Recording::create`](super::Recording::create)
//! ([`FileSink`]), which keeps only its most recent chunks when asked
//! ([`Options::max_size`](super::Options::max_size), [`Options::max_age`](super::Options::max_age)).
//!
//! Invariants: a sink holds a complete recording after every flush; a
//! file that drops chunks is replaced whole (a reader sees the old file or
//! the new one), and offsets given to [`Sink::patch`] count from the
//! start of the whole output, dropped chunks included.

use std::collections::VecDeque;
use std::fs;
use std::fs::File;
use std::io::{self, BufWriter, IoSlice, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::snapshot::Snapshot;

use super::Options;

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
    /// Demoting events ([`Recording::demote`](super::Recording::demote)) needs it.
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

/// The sink of [`Recording::create`](super::Recording::create): a plain `.jfr` file, or a
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
    /// ([`Recording::create`](super::Recording::create) makes one at once): the file is never seen
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
    pub(super) fn create(path: &Path, options: &Options) -> Self {
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
    /// A zstd stream (level 3) into `file`.
    pub(super) fn new(file: BufWriter<File>) -> io::Result<Self> {
        Ok(Self {
            encoder: Some(zstd::Encoder::new(file, 3)?),
        })
    }

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
    /// ([`Recording::close`](super::Recording::close) does this; call it after [`Recording::finish`](super::Recording::finish).)
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
