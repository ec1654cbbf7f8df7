//! The JFR reader behind the `heapsampler` command line.
//!
//! - [`read`]: recordings read chunk by chunk, by their own metadata.
//! - [`summary`]: `heapsampler summary`.
//! - [`conversion`]: `heapsampler convert`, from reading to writing.
//! - [`export`]: the text of values, as every output shows them.
//! - [`rows`]: CSV rows, made as the event decoder reads the fields.
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
