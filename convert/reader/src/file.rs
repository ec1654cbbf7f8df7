//! A recording file, read one chunk at a time: memory follows the largest
//! chunk, not the file. Compressed recordings (zstd, gzip) are recognised by
//! their first bytes, not their name. A last chunk cut short, or bytes
//! after the last chunk that are not one (a JVM killed while writing: a
//! flush appended to the last chunk before its header counted them) end the
//! reading with a warning, after every complete chunk; bytes that are not a
//! chunk but are followed by one are a corrupt chunk, an error.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jfr_format::{ChunkHeader, HEADER_SIZE, MAGIC};

use crate::ReadError;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// What a chunk's buffer reserves when the input's length is unknown.
const GROW_FROM: u64 = 1 << 20;

/// Why a file could not be read at all, or a chunk of it.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file's content is not a valid recording.
    #[error("{}: {source}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Where and what.
        source: ReadError,
    },
}

/// How the recording's bytes were stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// Plain JFR.
    Plain,
    /// zstd-compressed (what the agent writes for `.jfr.zst`).
    Zstd,
    /// gzip-compressed.
    Gzip,
}

/// A chunk's bytes and where it starts in the (uncompressed) recording.
#[derive(Debug)]
pub struct RawChunk {
    /// The chunk's offset in the uncompressed recording.
    pub offset: u64,
    /// The chunk's bytes, header included.
    pub bytes: Vec<u8>,
    /// How many bytes of the file as stored had been read once the chunk
    /// was: its end for a plain file, somewhat past it in a compressed one
    /// (the decompressor reads ahead). What progress is shown against.
    pub stored_end: u64,
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    /// Shared with the [`RecordingFile`], as the decompressor owns this.
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.read.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

/// A recording being read chunk by chunk.
pub struct RecordingFile {
    path: PathBuf,
    container: Container,
    input: Box<dyn Read + Send>,
    /// Bytes of the file as stored (compressed or not) read so far.
    stored: Arc<AtomicU64>,
    /// Bytes of the uncompressed recording read so far.
    offset: u64,
    /// The length of a plain file, when known.
    length: Option<u64>,
    /// Set when the last chunk was cut short: how many bytes it had.
    truncated: Option<(u64, u64)>,
    /// Opened from a path ([`open`](Self::open)), so that it can be read
    /// again ([`reopen`](Self::reopen)); a stream cannot.
    reopenable: bool,
}

impl std::fmt::Debug for RecordingFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingFile")
            .field("path", &self.path)
            .field("container", &self.container)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl RecordingFile {
    /// Opens a recording, plain or compressed.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, FileError> {
        let path = path.as_ref().to_owned();
        let io_error = |source| FileError::Io {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(io_error)?;
        // A plain file's length tells how much a chunk can really hold, so
        // its buffer is reserved once at the right size (see `next_chunk`).
        let length = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let mut recording = Self::from_reader(path, file)?;
        if recording.container == Container::Plain {
            recording.length = length;
        }
        recording.reopenable = true;
        Ok(recording)
    }

    /// A plain recording read from the chunk at `offset` on: a reader of a
    /// recording that grows reads the chunks it read before once, and
    /// comes back for the last. Only the bytes from `offset` on are read.
    /// Bytes there that are not a chunk's (a compressed recording, which
    /// cannot be read from the middle, or an offset that is no chunk's)
    /// are an error.
    pub fn open_at(path: impl AsRef<Path>, offset: u64) -> Result<Self, FileError> {
        let path = path.as_ref().to_owned();
        let io_error = |source| FileError::Io {
            path: path.clone(),
            source,
        };
        let mut file = File::open(&path).map_err(io_error)?;
        let length = file.metadata().map_err(io_error)?.len();
        file.seek(SeekFrom::Start(offset)).map_err(io_error)?;
        let mut magic = [0u8; 4];
        let read = read_up_to(&mut file, &mut magic).map_err(io_error)?;
        if read < magic.len() || magic != MAGIC {
            return Err(FileError::Malformed {
                path,
                source: ReadError::Malformed {
                    offset,
                    expected: "a chunk (\"FLR\\0\"): a compressed recording is read from its \
                               start, and no other offset is a chunk's"
                        .to_owned(),
                },
            });
        }
        file.seek(SeekFrom::Start(offset)).map_err(io_error)?;
        let mut recording = Self::from_reader(path.clone(), file)?;
        recording.offset = offset;
        recording.length = Some(length);
        recording.reopenable = true;
        Ok(recording)
    }

    /// The recording again, from its start, for another pass over it: the
    /// file [opened](Self::open) anew by its path, wherever this one has
    /// got to. A recording read from a stream
    /// ([`from_reader`](Self::from_reader)) cannot be read again: an error.
    pub fn reopen(&self) -> Result<Self, FileError> {
        if !self.reopenable {
            return Err(FileError::Io {
                path: self.path.clone(),
                source: io::Error::new(
                    io::ErrorKind::Unsupported,
                    "read from a stream, which cannot be read a second time",
                ),
            });
        }
        Self::open(&self.path)
    }

    /// Reads a recording, plain or compressed, from any reader; `name` is
    /// what errors call it. Nothing is buffered here: chunks are read whole,
    /// straight into their buffers (the decompressors buffer their input).
    /// The reader is `Send` so that a conversion's threads can take turns
    /// reading the next chunk.
    pub fn from_reader(
        name: impl Into<PathBuf>,
        input: impl Read + Send + 'static,
    ) -> Result<Self, FileError> {
        let stored = Arc::new(AtomicU64::new(0));
        let mut input = Counted {
            inner: input,
            read: Arc::clone(&stored),
        };
        let path = name.into();
        let io_error = |source| FileError::Io {
            path: path.clone(),
            source,
        };
        let mut magic = [0u8; 4];
        let read = read_up_to(&mut input, &mut magic).map_err(io_error)?;
        let input = io::Cursor::new(magic).take(read as u64).chain(input);
        let (container, input): (Container, Box<dyn Read + Send>) = if magic == ZSTD_MAGIC {
            let decoder = zstd::Decoder::new(input).map_err(io_error)?;
            (Container::Zstd, Box::new(decoder))
        } else if magic[..2] == GZIP_MAGIC {
            (
                Container::Gzip,
                Box::new(flate2::read::MultiGzDecoder::new(input)),
            )
        } else if magic == MAGIC || read < 4 {
            (Container::Plain, Box::new(input))
        } else {
            return Err(FileError::Malformed {
                path,
                source: ReadError::Malformed {
                    offset: 0,
                    expected: "a JFR recording (\"FLR\\0\"), or one compressed with zstd or gzip"
                        .to_owned(),
                },
            });
        };
        Ok(Self {
            path,
            container,
            input,
            stored,
            offset: 0,
            length: None,
            truncated: None,
            reopenable: false,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the file is stored.
    pub fn container(&self) -> Container {
        self.container
    }

    /// After reading stopped at a chunk cut short, or at bytes after the
    /// last chunk that are not one: where they begin and how many there
    /// were.
    pub fn truncated(&self) -> Option<(u64, u64)> {
        self.truncated
    }

    /// The next chunk's bytes; `None` at the end of the file, or after a
    /// chunk cut short (see [`truncated`](Self::truncated)).
    pub fn next_chunk(&mut self) -> Result<Option<RawChunk>, FileError> {
        self.next_chunk_in(Vec::new())
    }

    /// The next chunk's bytes, as [`next_chunk`](Self::next_chunk) reads
    /// them, in `buffer` (a chunk's bytes read before, whose memory is used
    /// again rather than fresh memory, which costs a page fault per page).
    pub fn next_chunk_in(&mut self, buffer: Vec<u8>) -> Result<Option<RawChunk>, FileError> {
        let offset = self.offset;
        let mut header = [0u8; HEADER_SIZE];
        let got = read_up_to(&mut self.input, &mut header).map_err(|source| self.io(source))?;
        if got == 0 && offset == 0 {
            // No chunk at all: not a recording, rather than one of no events.
            let empty = match self.container {
                Container::Plain => "a JFR recording, but the file is empty",
                _ => "a JFR recording, but the file is empty once decompressed",
            };
            return Err(self.malformed(0, empty));
        }
        if got == 0 {
            return Ok(None);
        }
        if got < HEADER_SIZE {
            self.truncated = Some((offset, got as u64));
            return Ok(None);
        }
        let Some(decoded) = ChunkHeader::decode(&header) else {
            // Bytes appended to the last chunk that its header does not
            // count yet (a flush cut short between its append and the
            // header's rewrite, by writers that append first) are followed
            // by no chunk; a chunk after them makes them a corrupt chunk,
            // and so does the file's first.
            if offset > 0 {
                let (chunk_after, rest) =
                    magic_after(&header[1..], &mut self.input).map_err(|e| self.io(e))?;
                if !chunk_after {
                    self.truncated = Some((offset, got as u64 + rest));
                    return Ok(None);
                }
            }
            return Err(self.malformed(offset, "the chunk magic \"FLR\\0\""));
        };
        let size = decoded.chunk_size;
        if size < HEADER_SIZE as u64 {
            return Err(self.malformed(
                offset + 8,
                &format!("a chunk size of at least {HEADER_SIZE}, found {size}"),
            ));
        }
        // Read the rest as it arrives: the allocation follows the bytes
        // really there, never the size the header claims. Reserved up front:
        // what a plain file still holds, or at most `GROW_FROM` (the buffer
        // doubles from there as bytes arrive).
        let rest = size - HEADER_SIZE as u64;
        let available = match self.length {
            Some(length) => length.saturating_sub(offset + HEADER_SIZE as u64),
            None => GROW_FROM,
        };
        // (On a 32-bit target a reservation past the address space is just
        // not made; the bytes that really arrive still grow the buffer.)
        let reserve = usize::try_from(rest.min(available)).unwrap_or(0);
        let mut bytes = buffer;
        bytes.clear();
        bytes.reserve(HEADER_SIZE.saturating_add(reserve));
        bytes.extend_from_slice(&header);
        let read = (&mut self.input)
            .take(rest)
            .read_to_end(&mut bytes)
            .map_err(|source| self.io(source))?;
        self.offset += HEADER_SIZE as u64 + read as u64;
        if (read as u64) < rest {
            self.truncated = Some((offset, HEADER_SIZE as u64 + read as u64));
            return Ok(None);
        }
        Ok(Some(RawChunk {
            offset,
            bytes,
            stored_end: self.stored.load(Ordering::Relaxed),
        }))
    }

    fn io(&self, source: io::Error) -> FileError {
        FileError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn malformed(&self, offset: u64, expected: &str) -> FileError {
        FileError::Malformed {
            path: self.path.clone(),
            source: ReadError::Malformed {
                offset,
                expected: expected.to_owned(),
            },
        }
    }
}

/// Reads until `buffer` is full or the input ends; returns the bytes read.
/// Whether the chunk magic occurs in `first` (bytes already read) or in
/// what `input` still holds, read to its end unless the magic is found
/// before; and how many bytes were read from `input`.
fn magic_after(first: &[u8], input: &mut impl Read) -> io::Result<(bool, u64)> {
    const KEEP: usize = MAGIC.len() - 1;
    let holds = |bytes: &[u8]| bytes.windows(MAGIC.len()).any(|window| window == MAGIC);
    if holds(first) {
        return Ok((true, 0));
    }
    // The last bytes seen, then what was read: a magic across two reads.
    let mut buffer = vec![0u8; KEEP + 64 * 1024];
    let mut kept = first.len().min(KEEP);
    buffer[..kept].copy_from_slice(&first[first.len() - kept..]);
    let mut read = 0u64;
    loop {
        let got = match input.read(&mut buffer[kept..]) {
            Ok(0) => return Ok((false, read)),
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        read += got as u64;
        let end = kept + got;
        if holds(&buffer[..end]) {
            return Ok((true, read));
        }
        let keep = end.min(KEEP);
        buffer.copy_within(end - keep..end, 0);
        kept = keep;
    }
}

fn read_up_to(input: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives at most `step` bytes a read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buffer.len()).min(self.bytes.len());
            buffer[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn the_magic_is_found_across_reads_and_across_the_bytes_already_read() {
        let mut rest = vec![7u8; 100_000];
        rest[70_000..70_004].copy_from_slice(&MAGIC);
        for step in [1, 3, 4, 5, 65_536, 1 << 20] {
            // Found by the read that ends it: at most a buffer's read past.
            let (found, read) = magic_after(b"head", &mut Trickle { bytes: &rest, step }).unwrap();
            assert!(found, "{step}");
            assert!((70_004..70_004 + 65_536).contains(&read), "{step}: {read}");
        }
        // Split between the bytes read already and the input.
        let found = magic_after(
            b"xxFL",
            &mut Trickle {
                bytes: b"R\0yy",
                step: 1,
            },
        )
        .unwrap();
        assert_eq!(found, (true, 2));
        // None: every byte is read and counted.
        let none = vec![b'F'; 70_001];
        let found = magic_after(
            b"FLR",
            &mut Trickle {
                bytes: &none,
                step: 4096,
            },
        )
        .unwrap();
        assert_eq!(found, (false, 70_001));
    }
}
