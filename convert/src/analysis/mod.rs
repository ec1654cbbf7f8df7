//! The analyses: what a recording's events add up to. Each but
//! [`diff`], which compares two of `top`'s tables, is a
//! [`pipeline::Analysis`](crate::pipeline::Analysis): work on one chunk
//! that hands on the chunk's figures, and their merge in chunk order.

pub mod diff;
pub mod fold;
pub mod follow;
pub mod leaks;
pub mod liveness;
pub mod summary;
pub mod top;
