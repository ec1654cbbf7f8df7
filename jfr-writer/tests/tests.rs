//! jfr-writer's integration tests, one binary (as ripgrep's are): one link
//! of the crate and its dependencies rather than one per file. Run one
//! file's with its module name as the filter, e.g.
//! `cargo test --release -p jfr-writer --test integration rotate::`.

mod api;
mod demote;
mod environment_events;
mod frame_types;
mod jdk_reads;
mod jfrs_reads;
mod leak_and_gc_events;
mod property;
mod rotate;
mod typed_events;
mod watch_events;
