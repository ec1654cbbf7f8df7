//! Why reading a recording, or making something of it, failed.

use std::io;
use std::path::PathBuf;

use jfr_reader::ReadError;
use jfr_reader::file::FileError;

use crate::model::allocation;

/// Why reading a recording, or making something of it, failed. Each says
/// which recording, and what to do where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The recording could not be opened or read, or is malformed.
    #[error(transparent)]
    Read(#[from] FileError),
    /// Writing the CSV of a recording failed.
    #[error("{}: {source}", recording.display())]
    Csv {
        /// The recording.
        recording: PathBuf,
        /// Why.
        source: CsvError,
    },
    /// Event types asked for that no chunk of the recording declares: a
    /// typo, or a recording made without them; not an empty result.
    #[error("{}", missing_types(recording, missing, present))]
    MissingTypes {
        /// The recording.
        recording: PathBuf,
        /// The types asked for that it lacks.
        missing: Vec<String>,
        /// The types it has, and their events, most first.
        present: Vec<(String, u64)>,
    },
    /// The recording has none of the allocation events a question reads
    /// (with `live`, none of the agent's liveness events).
    #[error("{} has no {}: {}", recording.display(), allocation::missing(*live), allocation::without(*live))]
    NoEvents {
        /// The recording.
        recording: PathBuf,
        /// Whether the question was of objects still live.
        live: bool,
    },
    /// An output could not be made.
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The output.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing an output failed: the error says which.
    #[error("{source}")]
    Write {
        /// Why.
        source: io::Error,
    },
    /// Writing the Parquet of a recording failed.
    #[error("{}: writing Parquet: {source}", recording.display())]
    Parquet {
        /// The recording.
        recording: PathBuf,
        /// Why.
        source: parquet::errors::ParquetError,
    },
    /// A flame graph would have nothing in it.
    #[error("{}: nothing to draw: {why}", recording.display())]
    NothingToDraw {
        /// The recording.
        recording: PathBuf,
        /// Why: what its events are, and what was asked of them.
        why: String,
    },
    /// A flame graph could not be drawn.
    #[error("{}: {why}", recording.display())]
    Draw {
        /// The recording.
        recording: PathBuf,
        /// What went wrong.
        why: String,
    },
}

/// What can go wrong writing CSV.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    /// The recording is malformed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing the output failed.
    #[error("writing CSV: {0}")]
    Io(#[from] io::Error),
    /// An output file or folder could not be made.
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Chunks declare an event type with different numbers of fields, which
    /// one CSV file cannot hold.
    #[error(
        "writing CSV: {name}: found rows with {found} fields, but the first rows have \
         {expected} fields (chunks declare the type differently)"
    )]
    Columns {
        /// The event type.
        name: String,
        /// The fields of its first rows.
        expected: usize,
        /// The fields of the rows that differ.
        found: usize,
    },
    /// The conversion stopped before this chunk's rows were handed on: an
    /// earlier chunk failed, whose error is the one reported.
    #[error("the conversion has stopped")]
    Stopped,
}

/// The message for event types asked for that `recording` does not have:
/// which types it has (`present`, most events first), and the nearest
/// name to each missing one, for a typo.
fn missing_types(
    recording: &std::path::Path,
    missing: &[String],
    present: &[(String, u64)],
) -> String {
    let nearest: Vec<&str> = missing
        .iter()
        .filter_map(|name| {
            present
                .iter()
                .map(|(candidate, _)| (strsim::jaro_winkler(name, candidate), candidate))
                .filter(|(similarity, _)| *similarity > 0.8)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, candidate)| candidate.as_str())
        })
        .collect();
    let mut message = format!(
        "{}: the recording has no {} events",
        recording.display(),
        missing.join(", ")
    );
    if !nearest.is_empty() {
        message += &format!(" (did you mean {}?)", nearest.join(", "));
    }
    const SHOWN: usize = 10;
    if present.is_empty() {
        message += "; it has no events at all";
    } else {
        let shown: Vec<String> = present
            .iter()
            .take(SHOWN)
            .map(|(name, count)| format!("{name} ({count})"))
            .collect();
        message += &format!("; its events, most first: {}", shown.join(", "));
        if present.len() > SHOWN {
            message += &format!(
                ", and {} more types (`heapsampler summary {}` lists them)",
                present.len() - SHOWN,
                recording.display()
            );
        }
    }
    message
}
