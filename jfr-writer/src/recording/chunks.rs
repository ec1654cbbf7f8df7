//! The recording's chunks: buffered events flushed into the current chunk
//! (see the module doc of [`crate::recording`] for what a flush does), a
//! new chunk started past a size or age limit (or when the caller says),
//! and the last chunk marked final.
//!
//! Owns `sink`, `chunk`, `next_chunk_start`, `output_end`, `events`,
//! `pool_bytes` and `events_written`. Invariant: the output is a complete
//! recording after every flush, no header ever says "in progress".

use std::time::Duration;

use crate::error::Error;
use crate::sized::sized_len;
use crate::tail;
use jfr_format::{
    CHECKPOINT_EVENT_ID, ChunkHeader, FLAG_COMPRESSED_INTS, FLAG_FINAL_CHUNK, GENERATION_FINISHED,
    HEADER_SIZE, VERSION_MAJOR, VERSION_MINOR, write_varint,
};

use super::Recording;
use super::clock::{TICKS_PER_SECOND, Ticks};
use super::sink::Sink;

/// The chunk being written.
#[derive(Debug)]
pub(super) struct Chunk {
    /// Output offset of the chunk's first byte.
    pub(super) start: u64,
    header: ChunkHeader,
    /// Bytes of the chunk on the sink, its tail included ([`crate::tail`]):
    /// what its header says. 0 until its first flush.
    pub(super) size: u64,
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

impl<S: Sink> Recording<S> {
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

    pub(super) fn sink(&mut self) -> &mut S {
        self.sink
            .as_mut()
            .expect("the sink is present until the recording is finished")
    }

    /// Writes everything buffered; afterwards the output is a complete
    /// recording of every event committed so far (for a seekable sink).
    pub fn flush(&mut self) -> Result<(), Error> {
        self.flush_chunk(false)
    }

    pub(super) fn flush_chunk(&mut self, last: bool) -> Result<(), Error> {
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
    pub(super) fn open_chunk(&mut self) -> Result<(), Error> {
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
        let sections = self.pools.write_pending(
            &self.registry.types,
            &mut chunk.frame_types_written,
            &mut rest,
        );
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
        if chunk.metadata_version != self.registry.metadata.version() {
            chunk.header.metadata_offset = chunk.end + (events.len() + rest.len()) as u64;
            self.registry.metadata.encode_event(now.0, &mut rest);
            chunk.metadata_version = self.registry.metadata.version();
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
    /// ([`Options::manual_chunk_ends`](super::Options::manual_chunk_ends)), for a writer that puts events at
    /// each chunk's end.
    pub fn end_chunks_manually(&mut self) {
        self.options.manual_chunk_ends = true;
    }

    /// Whether the chunk being written has reached its size limit (counting
    /// the events not flushed yet) or its age limit: with
    /// [`Options::manual_chunk_ends`](super::Options::manual_chunk_ends), the time to write the chunk's last
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
