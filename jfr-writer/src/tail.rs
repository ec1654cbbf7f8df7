//! How a flush writes a chunk so that the output is a complete recording
//! between any two of its writes: a process killed at any moment leaves a
//! file that readers read up to its last flush.
//!
//! The JDK's parser reads a file as a run of chunks that ends exactly at
//! the file's end, each finished (generation 0) with its metadata and
//! checkpoints where its header says: bytes after the last chunk are read
//! as a chunk, and fail. The header, which holds a chunk's size, is at the
//! chunk's start, so no single write can both add bytes to the last chunk
//! and count them. Hence the chunk's *tail*: every chunk ends with a filler
//! event of type 0 (the metadata event's id, which readers skip in the event
//! stream: the JDK and Mission Control read the metadata only where the
//! header points), whose size, a varint padded to a fixed width, is
//! rewritten in place. A chunk's first flush appends it, header, bytes and
//! tail, in one write. A later flush:
//!
//! 1. makes the tail long enough for its bytes, if it is not: appends
//!    *spacers*, chunks of no events, each complete in itself (a file that
//!    ends with them is more chunks; a file appends each in a write a kill
//!    cannot cut, [`Sink::append_spacers`]); stretches the tail over them,
//!    past the chunk's end (both parsers then go on at the chunk's end,
//!    where the first spacer begins); and sets the chunk's size to take
//!    them in;
//! 2. writes its bytes inside the tail, behind the tail's head, and a new
//!    tail's head after them: readers skip them;
//! 3. rewrites the header: the new metadata and checkpoint (inside the tail,
//!    found through the header), the duration, the final flag;
//! 4. writes the first bytes of its own over the tail's head, which turns
//!    the tail into its events, followed by the new tail.
//!
//! Each of these writes is small but the ones of step 2, which readers do
//! not see, and the spacers', each a page or less that appends a whole
//! chunk; a write can be cut short by a kill only while the writing thread
//! is inside it, and then only at a page boundary.

use std::io;

use crate::metadata::Metadata;
use crate::recording::sink::Sink;
use crate::sized::sized_len;
use jfr_format::{
    CHECKPOINT_EVENT_ID, ChunkHeader, FLAG_COMPRESSED_INTS, GENERATION_FINISHED, HEADER_SIZE,
    METADATA_EVENT_ID, header_offset, write_padded_varint, write_varint,
};

/// The tail's size: a varint padded to this width, rewritten in place
/// (any size below 2^56 bytes).
const SIZE_WIDTH: usize = 8;

/// The tail's head: its size, then its type id.
const HEAD_LEN: usize = SIZE_WIDTH + 1;

/// The head of a tail of `size` bytes (its head included).
fn head(size: u64) -> [u8; HEAD_LEN] {
    let mut head = [0u8; HEAD_LEN];
    write_padded_varint(&mut head[..SIZE_WIDTH], size);
    head[SIZE_WIDTH] = METADATA_EVENT_ID as u8;
    head
}

/// Appends a chunk's first flush: `header` (whose size this sets), `parts`
/// and the chunk's tail, its head alone, in one write where the sink can:
/// the chunk appears whole. Returns the chunk's size.
pub(crate) fn write_first<S: Sink + ?Sized>(
    sink: &mut S,
    header: &mut ChunkHeader,
    parts: &[&[u8]],
) -> io::Result<u64> {
    let written: u64 = parts.iter().map(|part| part.len() as u64).sum();
    header.chunk_size = HEADER_SIZE as u64 + written + HEAD_LEN as u64;
    let encoded = header.encode();
    let tail = head(HEAD_LEN as u64);
    let mut all = Vec::with_capacity(parts.len() + 2);
    all.push(&encoded[..]);
    all.extend_from_slice(parts);
    all.push(&tail[..]);
    sink.append_parts(&all)?;
    Ok(header.chunk_size)
}

/// Writes a later flush's `parts` (encoded events, checkpoint, metadata:
/// what the chunk gains) to the chunk at `start` whose events end at `end`,
/// where its tail begins, and which is `size` bytes long; then `header`,
/// whose size this sets. Returns the chunk's new size. See the module docs
/// for the order and why.
pub(crate) fn write_flush<S: Sink + ?Sized>(
    sink: &mut S,
    start: u64,
    end: u64,
    size: u64,
    header: &mut ChunkHeader,
    parts: &[&[u8]],
) -> io::Result<u64> {
    let written: u64 = parts.iter().map(|part| part.len() as u64).sum();
    let mut size = size;
    header.chunk_size = size;
    if written == 0 {
        // Only the header has news: the duration, or the final flag.
        sink.patch(start, &header.encode())?;
        return Ok(size);
    }
    let new_end = end + written;
    let needed = new_end + HEAD_LEN as u64;
    if needed > size {
        let grown = size + sink.append_spacers(needed - size, &|len| spacer(header, len))?;
        // Past the chunk's end, into the spacer: readers go on at the
        // chunk's end.
        sink.patch(start + end, &head(grown - end))?;
        sink.patch(
            start + header_offset::CHUNK_SIZE as u64,
            &grown.to_be_bytes(),
        )?;
        size = grown;
        header.chunk_size = size;
    }
    // The parts and the new tail's head, all but their first HEAD_LEN bytes,
    // which go over the tail's head last.
    let tail = head(size - new_end);
    let mut first = [0u8; HEAD_LEN];
    let mut at = 0usize;
    for part in parts.iter().copied().chain([&tail[..]]) {
        let taken = HEAD_LEN.saturating_sub(at).min(part.len());
        first[at.min(HEAD_LEN)..at.min(HEAD_LEN) + taken].copy_from_slice(&part[..taken]);
        if taken < part.len() {
            sink.patch(start + end + (at + taken) as u64, &part[taken..])?;
        }
        at += part.len();
    }
    sink.patch(start, &header.encode())?;
    sink.patch(start + end, &first)?;
    Ok(size)
}

/// A chunk of no events, at least `len` bytes long, with the times of the
/// chunk of `header` (so that Mission Control, which drops a chunk that
/// starts when another does, drops it): its header, its tail over the
/// rest, and inside the tail the metadata and the checkpoint its header
/// points to: metadata of no types ([`Metadata::empty`]), and a checkpoint
/// of no pools.
fn spacer(header: &ChunkHeader, len: u64) -> Vec<u8> {
    let metadata_offset = (HEADER_SIZE + HEAD_LEN) as u64;
    let mut body = Vec::with_capacity(128);
    Metadata::empty().encode_event(header.start_ticks, &mut body);
    let checkpoint_offset = metadata_offset + body.len() as u64;
    let mut checkpoint = Vec::with_capacity(16);
    write_varint(&mut checkpoint, CHECKPOINT_EVENT_ID);
    write_varint(&mut checkpoint, header.start_ticks as u64);
    write_varint(&mut checkpoint, 0); // duration
    write_varint(&mut checkpoint, 0); // delta: the only checkpoint
    checkpoint.push(0); // type mask
    write_varint(&mut checkpoint, 0); // no pools
    write_varint(&mut body, sized_len(checkpoint.len()) as u64);
    body.extend_from_slice(&checkpoint);
    let size = len.max(metadata_offset + body.len() as u64);
    let spacer_header = ChunkHeader {
        chunk_size: size,
        constant_pool_offset: checkpoint_offset,
        metadata_offset,
        duration_nanos: 0,
        generation: GENERATION_FINISHED,
        flags: FLAG_COMPRESSED_INTS,
        ..*header
    };
    let mut out = Vec::with_capacity(size as usize);
    out.extend_from_slice(&spacer_header.encode());
    out.extend_from_slice(&head(size - HEADER_SIZE as u64));
    out.extend_from_slice(&body);
    out.resize(size as usize, 0);
    out
}
