//! Following a recording as the agent writes it: what `heapsampler watch`
//! shows, read from the file alone, each refresh costing at most a chunk.
//!
//! The agent's file is a complete recording at every flush (a second by
//! default), and its watch writes what a view needs as it goes: the sites
//! of the most live bytes with their growth at its judgments
//! (`heapsampler.WatchedSite`), the suspects it raised, and the heap after
//! each collection (`jdk.GCHeapSummary`). So a [`Follow`] reads the file,
//! never asks the agent for a snapshot of it, and reads each chunk once
//! but the last, which grows until the agent ends it (at `chunk_size`, 12
//! MB by default, or `chunk_age`): a refresh reads the chunks ended since
//! the last one, and the last chunk again. A plain file is read from the
//! last chunk's offset ([`RecordingFile::open_at`]); a compressed one, or
//! one rewritten since (a rotation drops its oldest chunks, and the
//! offsets move), from its start, skipping the chunks folded already by
//! their start time.
//!
//! What is kept ([`Followed`]) is bounded: the last [`HEAP_POINTS`] heap
//! figures, counts, and the watch's sites ([`Watch`]: the sites raised and
//! the last judgment's).
//!
//! ```no_run
//! use heapsampler_cli::analysis::follow::Follow;
//!
//! let mut follow = Follow::new("/tmp/service.jfr");
//! loop {
//!     let now = follow.refresh()?;
//!     if let Some(judged) = &now.watch.judged {
//!         println!("{} sites judged", judged.sites.len());
//!     }
//!     std::thread::sleep(std::time::Duration::from_secs(2));
//! }
//! # Ok::<(), heapsampler_cli::Error>(())
//! ```

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use jfr_format::names::{event, field};
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, TypeMap};
use jfr_reader::file::RecordingFile;

use crate::Error;
use crate::analysis::leaks::{ReadTimeline, Timeline};
use crate::model::watch::Watch;
use crate::pipeline::{Analysis, ChunkContext, ChunkError, Pipeline, Stopped};

/// The most heap figures kept: wider than any terminal.
pub const HEAP_POINTS: usize = 1024;

/// What a followed recording holds so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Followed {
    /// The first chunk's start, nanoseconds since the epoch.
    pub start_nanos: Option<i64>,
    /// The last chunk's end (its last flush), nanoseconds since the epoch.
    pub end_nanos: i64,
    /// The heap in use after each collection, oldest first: the last
    /// [`HEAP_POINTS`].
    pub heap: VecDeque<u64>,
    /// The agent's collections.
    pub collections: u64,
    /// The samples the JVM handed the agent, as its last statistics said.
    pub samples: Option<u64>,
    /// What the agent's watch wrote.
    pub watch: Watch,
}

impl Followed {
    /// Seconds from the recording's start to `nanos`.
    pub fn seconds(&self, nanos: i64) -> f64 {
        (nanos - self.start_nanos.unwrap_or(nanos)) as f64 / 1e9
    }

    /// The recording's length so far, seconds.
    pub fn length(&self) -> f64 {
        self.seconds(self.end_nanos).max(0.0)
    }

    /// Adds a chunk's figures, after those added before.
    fn add(&mut self, chunk: &ChunkFigures) {
        let timeline = &chunk.timeline;
        self.start_nanos = self.start_nanos.or(timeline.start_nanos);
        self.end_nanos = self.end_nanos.max(timeline.end_nanos);
        let mut heap: Vec<_> = timeline
            .heap_after
            .iter()
            .map(|h| (h.nanos, h.used))
            .collect();
        heap.sort_unstable();
        self.heap.extend(heap.into_iter().map(|(_, used)| used));
        let over = self.heap.len().saturating_sub(HEAP_POINTS);
        self.heap.drain(..over);
        self.collections += timeline.collections.len() as u64;
        self.samples = chunk.samples.or(self.samples);
        self.watch.merge(timeline.watch.clone());
    }
}

/// A recording followed as it grows.
#[derive(Debug)]
pub struct Follow {
    path: PathBuf,
    /// What the chunks ended before the last read hold.
    folded: Followed,
    /// The start of the last chunk folded, nanoseconds since the epoch.
    folded_through: Option<i64>,
    /// Where the last chunk read starts, and its start in time: where the
    /// next refresh reads from, if that chunk is still there.
    last: Option<(u64, i64)>,
}

impl Follow {
    /// A follower of the recording at `path`, which has read nothing yet.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            path: path.as_ref().to_owned(),
            folded: Followed::default(),
            folded_through: None,
            last: None,
        }
    }

    /// What the recording holds now: the chunks ended since the last
    /// refresh are read and kept, and the last chunk is read again.
    pub fn refresh(&mut self) -> Result<Followed, Error> {
        let resumed = match self.last {
            Some((offset, start)) => match RecordingFile::open_at(&self.path, offset) {
                Ok(file) => {
                    let chunks = read(file)?;
                    // A rotation moved the chunks, or shortened the file:
                    // from the start.
                    chunks
                        .first()
                        .is_some_and(|c| c.timeline.start_nanos == Some(start))
                        .then_some(chunks)
                }
                Err(_) => None,
            },
            None => None,
        };
        let chunks = match resumed {
            Some(chunks) => chunks,
            None => read(RecordingFile::open(&self.path)?)?,
        };
        let mut unfolded: Vec<ChunkFigures> = chunks
            .into_iter()
            .filter(|c| {
                let start = c.timeline.start_nanos.unwrap_or(i64::MIN);
                self.folded_through.is_none_or(|through| start > through)
            })
            .collect();
        let Some(last) = unfolded.pop() else {
            return Ok(self.folded.clone());
        };
        // Every chunk but the last has ended: another follows it.
        for ended in &unfolded {
            self.folded.add(ended);
            self.folded_through = ended.timeline.start_nanos;
        }
        self.last = last.timeline.start_nanos.map(|start| (last.offset, start));
        let mut now = self.folded.clone();
        now.add(&last);
        Ok(now)
    }
}

/// Reads the chunks of `file` from where it stands, each on its own.
fn read(file: RecordingFile) -> Result<Vec<ChunkFigures>, Error> {
    Ok(Pipeline::default()
        .run(file, &ReadChunks, Vec::new(), &mut |_| {})?
        .merged)
}

/// A chunk's figures, and where it stands in the file.
#[derive(Debug)]
struct ChunkFigures {
    offset: u64,
    timeline: Timeline,
    samples: Option<u64>,
}

/// Each chunk's timeline (as `leaks` reads it: its span, collections, heap
/// after each, and the watch's events) and the agent's last count of
/// samples in it, chunk by chunk.
struct ReadChunks;

impl Analysis for ReadChunks {
    type Part = ChunkFigures;
    type Merged = Vec<ChunkFigures>;

    fn chunk(
        &self,
        chunk: &Chunk<'_>,
        context: &ChunkContext,
        hand_on: &mut dyn FnMut(ChunkFigures) -> Result<(), Stopped>,
    ) -> Result<(), ChunkError> {
        let mut timeline = Timeline::default();
        ReadTimeline.chunk(chunk, context, &mut |part| {
            timeline = part;
            Ok(())
        })?;
        Ok(hand_on(ChunkFigures {
            offset: context.offset,
            timeline,
            samples: last_samples(chunk)?,
        })?)
    }

    fn merge(&self, chunks: &mut Vec<ChunkFigures>, part: ChunkFigures) -> Result<(), Error> {
        chunks.push(part);
        Ok(())
    }

    fn part_bytes(&self, part: &ChunkFigures) -> usize {
        ReadTimeline.part_bytes(&part.timeline)
    }
}

/// The samples the last `heapsampler.AgentStatistics` of `chunk` counts.
fn last_samples(chunk: &Chunk<'_>) -> Result<Option<u64>, ChunkError> {
    let mut samples = None;
    let mut types: TypeMap<Option<EventPlan<'_>>> = TypeMap::default();
    for raw_event in chunk.raw_events() {
        let mut raw_event = raw_event?;
        let Some(plan) = types.get_or_insert_with(raw_event.type_id, || {
            chunk
                .plan(raw_event.type_id)
                .filter(|plan| plan.class().name == event::AGENT_STATISTICS)
        }) else {
            continue;
        };
        let fields = &plan.class().fields;
        plan.read(&mut raw_event, &mut |index: usize, value: Field<'_>| {
            if fields[index].name == field::SAMPLES {
                samples = value.count();
            }
        })?;
    }
    Ok(samples)
}
