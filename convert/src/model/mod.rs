//! The event model: what a recording's events mean to the analyses and
//! outputs, whatever reads them. Nothing here reads a whole recording: each
//! part works on one chunk (its metadata and pools), as the pipeline hands
//! chunks out.

pub mod allocation;
pub mod filter;
pub mod process;
pub mod samples;
pub mod text;
pub mod types;
pub mod watch;
