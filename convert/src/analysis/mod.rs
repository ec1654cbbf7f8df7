//! The analyses: what a recording's events add up to.

pub mod diff;
pub mod fold;
pub mod liveness;
pub mod summary;
pub mod top;
