//! Snapshots: a complete copy of the recording so far, written to another
//! file while the recording goes on, with a tail of events of its own
//! ([`Recording::begin_snapshot_tail`]).
//!
//! Owns `tail_from`. Invariant: a snapshot's tail is in the snapshot
//! only: it is taken out of the recording's buffer whether the snapshot is
//! written or abandoned.

use std::path::Path;

use crate::demote::DemotableEvents;
use crate::error::Error;
use crate::snapshot::Snapshot;

use super::{Recording, Sink};

impl<S: Sink> Recording<S> {
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
}
