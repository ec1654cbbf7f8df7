//! Snapshots: a complete recording of everything a file holds so far, taken
//! from a recording that may still be written, without touching it.
//!
//! A JFR file is a run of self-contained chunks. A writer that flushes (as
//! [`Recording`](crate::Recording) does) writes its bytes where readers skip
//! them (in the chunk's tail, or appended), then rewrites the chunk's
//! header, then turns the tail into its events, so the header always
//! describes bytes that are already on disk: besides headers and tails,
//! only the type ids of demotable events ([`crate::demote`]) are rewritten,
//! each in bytes of its width, to a type of the same fields, so a copy sees
//! each event whole under one type or the other.
//! A snapshot therefore copies each chunk as far as its header says, and
//! writes that header marked finished (and the last one final); a copy made
//! over a flush, which may hold the tail's new events with the header before
//! them, is made again. A chunk with no metadata yet (a chunk begun but
//! never flushed) is left out, as is a torn tail.
//!
//! Reading needs one open file: a writer that rotates (renames a shorter
//! copy over the recording) leaves an open descriptor on the old file, which
//! is then no longer written, so the snapshot is of one consistent state.

use std::fs::{self, File};
use std::io::{self, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jfr_format::{
    CHECKPOINT_EVENT_ID, ChunkHeader, FLAG_FINAL_CHUNK, GENERATION_FINISHED, HEADER_SIZE,
    MAX_VARINT_LEN, METADATA_EVENT_ID, read_varint,
};

/// The generation byte of a header the writer is rewriting (HotSpot's
/// guard): its other fields cannot be trusted until it changes.
const GENERATION_LOCKED: u8 = 255;

/// How often, and how long apart, a header that is being rewritten is read
/// again before the chunk is judged incomplete: about two seconds in all.
const HEADER_RETRIES: u32 = 200;
const HEADER_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// What a snapshot copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// Chunks copied.
    pub chunks: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Bytes of the source past the copied chunks that were left out: a
    /// chunk begun but not flushed yet, or a torn tail.
    pub left_out: u64,
}

/// A chunk found complete as far as its header says.
#[derive(PartialEq)]
struct Found {
    offset: u64,
    header: ChunkHeader,
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Copies the complete part of the recording in `from` (which may still be
/// written) to `to`: every chunk its header describes, headers marked
/// finished, the last one final, with `tail` (encoded events, whose
/// constants the last chunk's pools hold) appended to the last chunk. Reads
/// with positioned reads only, so a descriptor the writer itself appends
/// through may be given.
///
/// Fails if `from` is not a plain (uncompressed) JFR file or holds no
/// complete chunk yet.
///
/// `patches` (file offsets, sorted, and the bytes to write there) are
/// applied to the copy: events renamed in the copy only
/// ([`crate::Recording::end_snapshot_tail_demoting`]). A chunk is copied to
/// the offset it has in `from`, so a file offset is the copy's too.
fn copy_with_tail(
    from: &File,
    chunks: &[Found],
    source_len: u64,
    to: &mut impl Write,
    tail: &[u8],
    patches: &[(u64, &[u8])],
) -> io::Result<Snapshot> {
    let Some(last) = chunks.last() else {
        return Err(invalid(
            "no complete chunk yet (the recording has not been flushed)".to_owned(),
        ));
    };
    let copied_end = last.offset + last.header.chunk_size;
    let mut bytes = 0;
    let mut buffer = vec![0u8; 256 * 1024];
    for (index, chunk) in chunks.iter().enumerate() {
        let mut header = chunk.header;
        header.generation = GENERATION_FINISHED;
        let last = index + 1 == chunks.len();
        if last {
            header.flags |= FLAG_FINAL_CHUNK;
            header.chunk_size += tail.len() as u64;
        } else {
            header.flags &= !FLAG_FINAL_CHUNK;
        }
        to.write_all(&header.encode())?;
        let mut at = chunk.offset + HEADER_SIZE as u64;
        let end = chunk.offset + chunk.header.chunk_size;
        while at < end {
            let want = buffer.len().min((end - at) as usize);
            from.read_exact_at(&mut buffer[..want], at)?;
            apply_patches(&mut buffer[..want], at, patches);
            to.write_all(&buffer[..want])?;
            at += want as u64;
        }
        if last {
            to.write_all(tail)?;
        }
        bytes += header.chunk_size;
    }
    to.flush()?;
    Ok(Snapshot {
        chunks: chunks.len(),
        bytes,
        left_out: source_len.saturating_sub(copied_end),
    })
}

/// How many copies are made at most of a recording that changes while it
/// is copied.
const COPY_ATTEMPTS: u32 = 20;

/// Copies `from` to `out` as [`copy_with_tail`] does, again while the
/// copy is made over a flush of its writer (its chunks' headers or its
/// length differ after the copy): a flush also rewrites bytes of the last
/// chunk in place (its tail, turned into events once the header that
/// describes them is written, see `tail.rs`), which a copy must take with
/// that header.
fn copy_unchanged(
    from: &File,
    out: &mut File,
    tail: &[u8],
    patches: &[(u64, &[u8])],
) -> io::Result<Snapshot> {
    for _ in 0..COPY_ATTEMPTS {
        let chunks = find_chunks(from)?;
        let source_len = from.metadata()?.len();
        out.set_len(0)?;
        out.rewind()?;
        let snapshot = copy_with_tail(from, &chunks, source_len, out, tail, patches)?;
        if find_chunks(from)? == chunks && from.metadata()?.len() == source_len {
            return Ok(snapshot);
        }
    }
    Err(io::Error::other(format!(
        "the recording was written to during each of {COPY_ATTEMPTS} copies"
    )))
}

/// Writes the bytes of `patches` (sorted by offset) that fall in `bytes`,
/// read from offset `at`.
fn apply_patches(bytes: &mut [u8], at: u64, patches: &[(u64, &[u8])]) {
    let end = at + bytes.len() as u64;
    let first = patches.partition_point(|(offset, patch)| offset + patch.len() as u64 <= at);
    for &(offset, patch) in patches[first..]
        .iter()
        .take_while(|(offset, _)| *offset < end)
    {
        for (i, &byte) in patch.iter().enumerate() {
            let place = offset + i as u64;
            if (at..end).contains(&place) {
                bytes[(place - at) as usize] = byte;
            }
        }
    }
}

/// Writes a snapshot of the recording at `from` to the file `to`: opens
/// `from` once and copies its complete part into a
/// temporary file beside `to`, renamed to `to` when complete, so `to` is
/// never seen half written.
pub fn write_snapshot(from: &Path, to: &Path) -> io::Result<Snapshot> {
    let source = File::open(from)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open {}: {e}", from.display())))?;
    snapshot_file(&source, to, &[], &[]).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("snapshot of {} to {}: {e}", from.display(), to.display()),
        )
    })
}

/// Writes a snapshot of the open recording `from` to the file `to`, as
/// [`write_snapshot`] does, with `tail` appended to its last chunk and
/// `patches` (file offsets, sorted, and the bytes to write there) applied
/// to the copy.
pub fn snapshot_file(
    from: &File,
    to: &Path,
    tail: &[u8],
    patches: &[(u64, &[u8])],
) -> io::Result<Snapshot> {
    if let Ok(existing) = fs::metadata(to) {
        use std::os::unix::fs::MetadataExt;
        let source = from.metadata()?;
        if existing.dev() == source.dev() && existing.ino() == source.ino() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the snapshot would overwrite the recording itself".to_owned(),
            ));
        }
    }
    let temporary = temporary_path(to, "snapshot");
    let result = (|| {
        let mut out = File::create(&temporary)?;
        let snapshot = copy_unchanged(from, &mut out, tail, patches)?;
        out.sync_all()?;
        fs::rename(&temporary, to)?;
        Ok(snapshot)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// A temporary file's path beside `path`, hidden, named for `path`, the
/// process and `purpose`: renamed over `path` once complete, so it is on the
/// same file system.
pub(crate) fn temporary_path(path: &Path, purpose: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{purpose}-{}.tmp", std::process::id()))
}

/// The chunks of `from` that are complete as far as their headers say, in
/// file order.
fn find_chunks(from: &File) -> io::Result<Vec<Found>> {
    let mut magic = [0u8; 4];
    if from.read_exact_at(&mut magic, 0).is_ok() && magic != jfr_format::MAGIC {
        return Err(invalid(
            "not an uncompressed JFR recording (no FLR magic at offset 0; \
             a .zst recording cannot be snapshot)"
                .to_owned(),
        ));
    }
    let mut chunks = Vec::new();
    let mut offset = 0u64;
    loop {
        let len = from.metadata()?.len();
        if offset + HEADER_SIZE as u64 > len {
            break;
        }
        match read_chunk(from, offset)? {
            Some(header) => {
                offset += header.chunk_size;
                chunks.push(Found {
                    offset: offset - header.chunk_size,
                    header,
                });
            }
            None => break,
        }
    }
    Ok(chunks)
}

/// The header of the chunk at `offset` if it describes a complete chunk
/// (re-reading a header that is being rewritten); `None` for a chunk begun
/// but not flushed, or bytes that are not a chunk (a torn tail).
fn read_chunk(from: &File, offset: u64) -> io::Result<Option<ChunkHeader>> {
    for _ in 0..HEADER_RETRIES {
        let mut first = [0u8; HEADER_SIZE];
        from.read_exact_at(&mut first, offset)?;
        let Some(header) = ChunkHeader::decode(&first) else {
            return Ok(None);
        };
        if header.generation == GENERATION_LOCKED {
            std::thread::sleep(HEADER_RETRY_PAUSE);
            continue;
        }
        if header.metadata_offset == 0 || header.constant_pool_offset == 0 {
            // Begun, never flushed: nothing in it to read.
            return Ok(None);
        }
        // A header read while it was rewritten might mix two flushes: read
        // it again, and check that its offsets point at its own events.
        let mut second = [0u8; HEADER_SIZE];
        from.read_exact_at(&mut second, offset)?;
        if first == second && describes_chunk(from, offset, &header)? {
            return Ok(Some(header));
        }
        std::thread::sleep(HEADER_RETRY_PAUSE);
    }
    Ok(None)
}

/// Whether `header` (at `offset`) is consistent with the bytes on disk: the
/// chunk is all there, and its metadata and newest checkpoint offsets point
/// at a metadata event and a checkpoint event that fit in it.
fn describes_chunk(from: &File, offset: u64, header: &ChunkHeader) -> io::Result<bool> {
    let size = header.chunk_size;
    if size < HEADER_SIZE as u64 || offset + size > from.metadata()?.len() {
        return Ok(false);
    }
    let event_fits = |at: u64, type_id: u64| -> io::Result<bool> {
        if at < HEADER_SIZE as u64 || at >= size {
            return Ok(false);
        }
        let mut head = [0u8; 2 * MAX_VARINT_LEN];
        let available = (size - at).min(head.len() as u64) as usize;
        from.read_exact_at(&mut head[..available], offset + at)?;
        let Ok((event_size, used)) = read_varint(&head[..available]) else {
            return Ok(false);
        };
        let Ok((id, _)) = read_varint(&head[used..available]) else {
            return Ok(false);
        };
        Ok(id == type_id && event_size > 0 && at + event_size <= size)
    };
    Ok(event_fits(header.metadata_offset, METADATA_EVENT_ID)?
        && event_fits(header.constant_pool_offset, CHECKPOINT_EVENT_ID)?)
}
