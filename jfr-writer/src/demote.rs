//! Demotable events: events written under one type whose type id is later
//! rewritten in place, in the file, to another type of the same fields
//! ([`Recording::begin_demotable`](crate::Recording::begin_demotable)).
//!
//! What it is for: a writer that puts a snapshot of some state in every
//! chunk (so that a chunk read alone, or a file whose writer was killed,
//! has it) while tools that read every chunk as one should see only the
//! newest. Each snapshot is written under the type tools read; once a newer
//! one is in the file, the older one's events are renamed to a twin type
//! that those tools ignore. No metadata is ever rewritten: both types are
//! declared in every chunk, and only the events' type ids change.
//!
//! A demotable event's type id is written as a varint of a fixed width,
//! the wider of the two types' ids (padded with continuation bytes where
//! its own id is shorter), so that the twin's id fits the same bytes.
//! Readers decode a varint by its continuation bits, so a padded id reads
//! as the plain one (FORMAT.md, §3 and §5).

/// The demotable events of a recording: where each one's type id is.
#[derive(Debug, Default)]
pub(crate) struct Demotions {
    /// The type id of the events written demotable now (0: none), as a
    /// plain number so that every event's check is one compare.
    pub(crate) writing: u64,
    /// The width of their type ids.
    pub(crate) width: usize,
    /// The group being written, and the groups ended and not demoted yet.
    groups: Vec<Group>,
    next_id: u64,
}

/// Events written demotable together.
#[derive(Debug)]
struct Group {
    id: u64,
    /// The id of the type they are demoted to.
    demoted_to: u64,
    width: usize,
    /// Offsets in the recording's event buffer of the type ids of those not
    /// flushed yet.
    buffered: Vec<usize>,
    /// Output offsets of the type ids of those flushed.
    written: Vec<u64>,
}

/// Where the type ids of a group of demotable events are, and what to
/// write there.
#[derive(Debug)]
pub(crate) struct Demotion {
    pub(crate) demoted_to: u64,
    pub(crate) width: usize,
    /// Output offsets.
    pub(crate) offsets: Vec<u64>,
}

/// A group of events written demotable
/// ([`Recording::end_demotable`](crate::Recording::end_demotable)), to give
/// to [`Recording::demote`](crate::Recording::demote) once they are to be
/// renamed.
#[derive(Debug)]
#[must_use = "the events stay under their type until demoted"]
pub struct DemotableEvents {
    pub(crate) id: u64,
    pub(crate) recording_id: u64,
    pub(crate) events: usize,
}

impl DemotableEvents {
    /// How many events the group holds.
    pub fn len(&self) -> usize {
        self.events
    }

    /// Whether the group holds no event.
    pub fn is_empty(&self) -> bool {
        self.events == 0
    }
}

impl Demotions {
    /// Starts a group: events of type `writing` are demotable until
    /// [`Demotions::end`]. Returns false if one is open.
    pub(crate) fn begin(&mut self, writing: u64, demoted_to: u64) -> bool {
        if self.writing != 0 {
            return false;
        }
        let width = jfr_format::varint_len(writing).max(jfr_format::varint_len(demoted_to));
        self.writing = writing;
        self.width = width;
        self.next_id += 1;
        self.groups.push(Group {
            id: self.next_id,
            demoted_to,
            width,
            buffered: Vec::new(),
            written: Vec::new(),
        });
        true
    }

    /// A demotable event was committed, its type id at `offset` in the
    /// event buffer.
    pub(crate) fn committed(&mut self, offset: usize) {
        if let Some(group) = self.groups.last_mut() {
            group.buffered.push(offset);
        }
    }

    /// Ends the open group: its id and how many events it holds. `None` if
    /// none is open.
    pub(crate) fn end(&mut self) -> Option<(u64, usize)> {
        if self.writing == 0 {
            return None;
        }
        self.writing = 0;
        self.groups
            .last()
            .map(|group| (group.id, group.buffered.len() + group.written.len()))
    }

    /// The event buffer was appended to the output at `output_offset`.
    pub(crate) fn flushed(&mut self, output_offset: u64) {
        for group in &mut self.groups {
            let buffered = group.buffered.drain(..);
            group
                .written
                .extend(buffered.map(|offset| output_offset + offset as u64));
        }
    }

    /// The event buffer was dropped unwritten (a failed flush): its events
    /// are no longer anywhere to demote.
    pub(crate) fn discarded(&mut self) {
        for group in &mut self.groups {
            group.buffered.clear();
        }
    }

    /// Whether some events of group `id` are still in the event buffer.
    pub(crate) fn buffered(&self, id: u64) -> bool {
        self.groups
            .iter()
            .any(|group| group.id == id && !group.buffered.is_empty())
    }

    /// The sorted output offsets of the flushed events of group `id`, and
    /// the id they are demoted to, encoded in their width: what
    /// [`Demotions::take`] would patch, for a copy of the output.
    pub(crate) fn patches(&self, id: u64) -> Option<(Vec<u64>, Vec<u8>)> {
        let group = self.groups.iter().find(|group| group.id == id)?;
        let mut offsets = group.written.clone();
        offsets.sort_unstable();
        let mut demoted_to = vec![0; group.width];
        jfr_format::write_padded_varint(&mut demoted_to, group.demoted_to);
        Some((offsets, demoted_to))
    }

    /// Takes the ended group `id` out, to demote its flushed events.
    pub(crate) fn take(&mut self, id: u64) -> Option<Demotion> {
        let at = self.groups.iter().position(|group| group.id == id)?;
        let group = self.groups.remove(at);
        debug_assert!(group.buffered.is_empty(), "flushed before it is demoted");
        Some(Demotion {
            demoted_to: group.demoted_to,
            width: group.width,
            offsets: group.written,
        })
    }
}
