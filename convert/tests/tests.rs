//! The integration tests of heapsampler's command line, run as users run it:
//! one test binary for the whole crate (ripgrep's pattern), so that the suite
//! links once; each module is a file beside this one, and the helpers they
//! share come from `heapsampler-test-support` (`testdata/support`). The
//! README's commands are the one binary beside it (`readme.rs`: they
//! rebuild the workspace, see Cargo.toml).

mod carried_agent;
mod collapsed;
mod collections;
mod convert;
mod csv_rows;
mod diff;
mod dump;
mod environment;
mod flame;
mod follow;
mod generational_zgc;
mod killed;
mod leaks;
mod live;
mod mission_control;
mod old_objects;
mod otlp;
mod out_of_memory;
mod parquet;
mod pprof;
mod record;
mod report_page;
mod summary;
mod tlab;
mod top;
mod watch;
mod watch_view;
