//! The JFR reader behind the `heapsampler` command line.
//!
//! - [`read`]: recordings read chunk by chunk, by their own metadata.
//! - [`summary`]: `heapsampler summary`.
//! - [`export`]: `heapsampler convert`, events to CSV.
//! - [`top`]: `heapsampler top`, where the bytes go.
//! - [`record`]: `heapsampler record -- java ...`.
//!
//! The other commands come next.

pub mod export;
pub mod read;
pub mod record;
pub mod summary;
pub mod top;
