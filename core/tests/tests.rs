//! The integration tests of the core's statistics, ring, liveness table and
//! estimates: one test binary for the whole crate (ripgrep's pattern), so that
//! the suite links once; each module is a file beside this one, and the
//! helpers they share come from `heapsampler-test-support`
//! (`testdata/support`).

mod estimate;
mod growth;
mod liveness;
mod programs;
mod ring;
mod service;
mod statistics;
mod tracking;
mod watch;
