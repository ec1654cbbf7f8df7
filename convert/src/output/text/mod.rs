//! What the commands print for people, made from the analyses' data:
//! `top`'s table ([`top`]), `diff`'s comparison ([`diff`]), `leaks`'
//! answer and the report's sentences of it ([`leaks`]), and `summary`
//! ([`summary`]). Each returns text; the command line prints it.

pub mod diff;
pub mod leaks;
pub mod summary;
pub mod top;
