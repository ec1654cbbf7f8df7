//! The event model: what a recording's events mean to the analyses and
//! outputs, whatever reads them.

pub mod allocation;
pub mod filter;
pub mod samples;
pub mod text;
pub mod types;
