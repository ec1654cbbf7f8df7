//! Events written demotable, renamed later in place to a twin type
//! ([`Recording::begin_demotable`], [`Recording::demote`]).
//!
//! Owns `demotions`. Invariant: a demotable event is renamed at most once,
//! in the chunk it was written in, and only once what replaces it is in
//! the output.

use crate::demote::DemotableEvents;
use crate::error::Error;
use crate::event::EventType;
use jfr_format::write_padded_varint;

use super::{Recording, Sink};

impl<S: Sink> Recording<S> {
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
}
