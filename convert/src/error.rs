//! Why reading a recording, or making something of it, failed.

use std::path::PathBuf;

use jfr_reader::file::FileError;

use crate::analysis::top::Query;
use crate::output::csv::CsvError;

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
    #[error("{} has no {}: {}", recording.display(), query(*live).missing(), query(*live).without_events())]
    NoEvents {
        /// The recording.
        recording: PathBuf,
        /// Whether the question was of objects still live.
        live: bool,
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

/// The question whose events a recording lacks, for its message.
fn query(live: bool) -> Query {
    Query {
        by: crate::analysis::top::GroupBy::Site,
        live,
        min_gcs: 0,
    }
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
