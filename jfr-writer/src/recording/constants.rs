//! The recording's pooled values as its users see them: stack traces
//! interned or added and marked for the chunk, what is held and dropped.
//!
//! Owns the use of `pools` (the pools themselves are [`crate::pool`]'s).
//! Invariant: a value a chunk's events refer to is written in that chunk's
//! pools, and what is dropped is what neither the ended chunk nor the new
//! one used, but what the caller pins.

use std::borrow::Borrow;

use crate::pool::{Marked, PoolRef, PoolSizes, StackTrace, StackTraceRef};

use super::{Recording, Sink};

impl<S: Sink> Recording<S> {
    /// Interns a stack trace. It is encoded at once, so it may be borrowed:
    /// a profiler that sees a new stack at almost every sample can build
    /// each one in the same `StackTrace`. A stack trace new to the
    /// recording is written in the chunk being built, as if an event used
    /// it: one is interned for that.
    pub fn stack_trace(&mut self, trace: impl Borrow<StackTrace>) -> StackTraceRef {
        self.pools.stack_trace(trace.borrow())
    }

    /// Adds a stack trace under a new key without looking for an equal one
    /// held, and marks it for the chunk being built, as
    /// [`Recording::stack_trace`] does a new one: the receipt says so. For a
    /// profiler that maps its own stacks to their refs, and so asks for
    /// each stack once: it saves hashing the encoded trace and a look-up in
    /// a large table, at its adding and again at its dropping. An equal
    /// trace added twice gets two keys, two constants of the same value,
    /// which JFR allows.
    pub fn add_stack_trace(&mut self, trace: impl Borrow<StackTrace>) -> Marked<StackTraceRef> {
        self.pools.add_stack_trace(trace.borrow())
    }

    /// Marks a stack trace for the chunk being built, as an event using it
    /// would, and returns the receipt ([`Marked`]): events of this chunk
    /// given it ([`crate::StackTraceField`]) write the key without looking
    /// the stack trace up. `None` if the recording does not hold it.
    pub fn mark_stack_trace(&mut self, reference: StackTraceRef) -> Option<Marked<StackTraceRef>> {
        self.pools.mark_stack_trace(reference)
    }

    /// Whether `marked` is a receipt for the chunk being built: if not, a
    /// profiler that keeps receipts marks the value again
    /// ([`Recording::mark_stack_trace`]) for the next events to use.
    pub fn is_marked<R>(&self, marked: Marked<R>) -> bool {
        self.pools.is_marked(marked)
    }

    /// Drops the pooled values that neither the chunk being built nor the
    /// one before it used, except those `pinned` names and what they refer
    /// to: a recording left running sees new stacks, classes and threads
    /// without end, and this bounds its memory by what recent chunks use.
    ///
    /// Best called right after a chunk ends ([`Recording::end_chunk`], or
    /// [`Recording::chunk_number`] changed at a flush): every chunk writes
    /// the values its events use, so nothing is lost by interning a dropped
    /// value again later, under a new key (keys are never reused). The refs
    /// of the values kept stay valid; a ref to a dropped one names nothing
    /// any more ([`Recording::holds`] says so, and an event given it fails
    /// with [`Error::ForeignReference`](crate::Error::ForeignReference)): `pinned` must name every ref its
    /// caller will use again without asking.
    pub fn drop_unused(&mut self, pinned: impl IntoIterator<Item = PoolRef>) {
        self.pools.drop_unused(pinned);
    }

    /// Whether the recording holds the value `reference` names: false once
    /// [`Recording::drop_unused`] dropped it.
    pub fn holds(&self, reference: impl Into<PoolRef>) -> bool {
        self.pools.holds(reference.into())
    }

    /// How many values each constant pool holds now.
    pub fn pool_sizes(&self) -> PoolSizes {
        self.pools.sizes()
    }
}
