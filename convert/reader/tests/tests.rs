//! The integration tests of the JFR reader: one test binary for the whole
//! crate (ripgrep's pattern), so that the suite links once; each module is a
//! file beside this one, and the helpers they share come from `heapsampler-
//! test-support` (`testdata/support`).

mod chunk;
mod example;
mod large_file;
mod metadata;
mod mutations;
mod read_all;
