//! The JFR reader behind the `heapsampler` command line.
//!
//! - [`read`]: recordings read chunk by chunk, by their own metadata.
//! - [`summary`]: `heapsampler summary`.
//! - [`conversion`]: `heapsampler convert`, from reading to writing.
//! - [`export`]: events to CSV.
//! - [`rows`]: CSV rows straight from the events' bytes, the fast way.
//! - [`collapsed`]: events to folded stacks, for flame graphs.
//! - [`filter`]: which events to keep (time window, thread, class).
//! - [`progress`]: progress of long reads on a terminal.
//! - [`top`]: `heapsampler top`, where the bytes go.

pub mod collapsed;
pub mod conversion;
pub mod export;
pub mod filter;
pub mod progress;
pub mod read;
pub mod rows;
pub mod summary;
pub mod top;
