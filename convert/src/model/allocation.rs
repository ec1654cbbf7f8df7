//! Which events stand for allocated bytes, and which of their fields says
//! how many: what `top` sums and `convert --format collapsed` folds.
//!
//! Recordings hold allocations in one of two kinds of events, or both:
//!
//! - `jdk.ObjectAllocationSample`, by its `weight`: ours, and the JDK's
//!   allocation sampling (JDK 16 and later).
//! - `jdk.ObjectAllocationInNewTLAB` by its `tlabSize` and
//!   `jdk.ObjectAllocationOutsideTLAB` by its `allocationSize`: the JDK's
//!   TLAB events, weighted as Mission Control's `ALLOCATION_TOTAL` weights
//!   them (openjdk/jmc,
//!   `core/org.openjdk.jmc.flightrecorder/.../jdk/JdkAggregators.java`: an
//!   allocation in a new TLAB stands for the TLAB, one outside a TLAB for
//!   itself). async-profiler writes its allocation samples as these events
//!   with its weighted estimate in those same fields
//!   (async-profiler/async-profiler, `src/flightRecorder.cpp`: `tlabSize`
//!   and `allocationSize` are its `_total_size`, which
//!   `src/objectSampler.cpp` sets to the sample's size or the sampling
//!   interval, whichever is larger), so the one weighting serves both.
//!
//! Both kinds record the same allocations, so a figure comes from one
//! kind only: the samples when the recording has any, otherwise the TLAB
//! events ([`ALLOCATIONS`], in that order). Once a chunk has read an event
//! of one kind, those of the kinds after it are only counted
//! ([`FirstRead`]).
//!
//! Where an allocation event's type keeps what the analyses read of it
//! (its weight, stack trace, class, thread, size and liveness) is found
//! here, once per type from the chunk's metadata ([`AllocationFields`]),
//! for every reader of allocation events: the samples
//! ([`model::samples`](crate::model::samples)) and the folded stacks
//! ([`analysis::fold`](crate::analysis::fold)).

use std::sync::atomic::{AtomicUsize, Ordering};

use jfr_format::names::{event, field};
use jfr_reader::event::EventPlan;

/// An event type and the field of its events holding the bytes each
/// stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weighted {
    /// The event type's name.
    pub event_type: &'static str,
    /// The name of its field holding the bytes.
    pub weight: &'static str,
}

/// A kind of events a figure of bytes is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `jdk.ObjectAllocationSample`, by `weight`.
    AllocationSamples,
    /// `jdk.ObjectAllocationInNewTLAB` by `tlabSize` and
    /// `jdk.ObjectAllocationOutsideTLAB` by `allocationSize`.
    TlabAllocations,
    /// heapsampler's `heapsampler.ObjectLifetime`, by `weight`.
    ObjectLifetimes,
}

/// The kinds of allocation events, in the order a figure prefers them:
/// the first the recording has events of is read, the others left out.
pub const ALLOCATIONS: [Source; 2] = [Source::AllocationSamples, Source::TlabAllocations];

impl Source {
    /// The event types of this kind, each with its weight field.
    pub fn types(self) -> &'static [Weighted] {
        match self {
            Self::AllocationSamples => &[Weighted {
                event_type: event::OBJECT_ALLOCATION_SAMPLE,
                weight: field::WEIGHT,
            }],
            Self::TlabAllocations => &[
                Weighted {
                    event_type: event::OBJECT_ALLOCATION_IN_NEW_TLAB,
                    weight: field::TLAB_SIZE,
                },
                Weighted {
                    event_type: event::OBJECT_ALLOCATION_OUTSIDE_TLAB,
                    weight: field::ALLOCATION_SIZE,
                },
            ],
            Self::ObjectLifetimes => &[Weighted {
                event_type: event::OBJECT_LIFETIME,
                weight: field::WEIGHT,
            }],
        }
    }

    /// The index in [`types`](Self::types) of the type named `event_type`.
    pub fn position(self, event_type: &str) -> Option<usize> {
        self.types().iter().position(|t| t.event_type == event_type)
    }

    /// The event types' names, for messages: `a`, `a and b`.
    pub fn names(self) -> String {
        let names: Vec<&str> = self.types().iter().map(|t| t.event_type).collect();
        names.join(" and ")
    }
}

/// The kinds of events a question of bytes reads, in order of preference
/// (the figures come from the first the recording has events of):
/// allocated bytes from [`ALLOCATIONS`], or with `live`, bytes still live at
/// the end from the agent's liveness events.
pub fn sources(live: bool) -> &'static [Source] {
    if live {
        &[Source::ObjectLifetimes]
    } else {
        &ALLOCATIONS
    }
}

/// The events a recording without any of [`sources`]`(live)` lacks:
/// `jdk.ObjectAllocationSample events, nor ...`.
pub fn missing(live: bool) -> String {
    let kinds: Vec<String> = sources(live)
        .iter()
        .map(|source| format!("{} events", source.names()))
        .collect();
    kinds.join(", nor ")
}

/// Why a recording has none of the events of [`sources`]`(live)`, and
/// what to do.
pub fn without(live: bool) -> &'static str {
    if live {
        "--live reads the agent's liveness events: record with heapsampler's agent and \
         liveness on (the default; live=false turns it off), or leave out --live to rank \
         what was allocated"
    } else {
        "record with heapsampler, or with JFR and allocation sampling on (JDK 16 or later: \
         settings=default or settings=profile), or with JFR's TLAB allocation events on"
    }
}

/// The first of several kinds of events, in order of preference, that the
/// chunks of a recording have read an event of so far, shared by the
/// chunks on every thread. A figure comes from the first kind the
/// recording has events of, so once any chunk has read an event of one
/// kind, the events of the kinds after it need only be counted (to say
/// they were left out), in whatever order the chunks are read. The kind
/// chosen at the end never had an event only counted: that would take an
/// event of a kind before it, which would then be the one chosen.
#[derive(Debug)]
pub struct FirstRead(AtomicUsize);

impl Default for FirstRead {
    /// None read yet.
    fn default() -> Self {
        Self(AtomicUsize::new(usize::MAX))
    }
}

impl FirstRead {
    /// Whether an event of the kind at `kind` (its place in the order of
    /// preference) is to be read, and not only counted: not when an event
    /// of a kind before it has been read. When it is, the kind counts as
    /// read.
    pub fn reads(&self, kind: usize) -> bool {
        let first = self.0.load(Ordering::Relaxed);
        if kind < first {
            self.0.fetch_min(kind, Ordering::Relaxed);
        }
        kind <= first
    }
}

/// The field of events of `event_type` holding the bytes they stand for:
/// that of its [`Source`] if it has one, otherwise `weight`.
pub fn weight_field(event_type: &str) -> &'static str {
    [
        Source::AllocationSamples,
        Source::TlabAllocations,
        Source::ObjectLifetimes,
    ]
    .iter()
    .flat_map(|source| source.types())
    .find(|t| t.event_type == event_type)
    .map_or(field::WEIGHT, |t| t.weight)
}

/// Where an allocation event's type keeps the fields the analyses read:
/// indexes into its fields, each `None` where the type has no such field
/// (the first of a name, should a type declare two). Found once per type
/// and chunk, from the chunk's metadata, so that reading an event costs a
/// comparison per field, not a look-up by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationFields {
    /// The bytes the event stands for: its type's [`weight_field`].
    pub weight: Option<usize>,
    /// `startTime`: for `heapsampler.ObjectLifetime`, when the object was
    /// allocated.
    pub start_time: Option<usize>,
    /// `stackTrace`.
    pub stack_trace: Option<usize>,
    /// `objectClass`.
    pub object_class: Option<usize>,
    /// `eventThread`.
    pub event_thread: Option<usize>,
    /// `objectSize` (`heapsampler.ObjectLifetime`).
    pub object_size: Option<usize>,
    /// `live`: still live at the end (`heapsampler.ObjectLifetime`).
    pub live: Option<usize>,
    /// `gcsSurvived`: collections outlived.
    pub gcs_survived: Option<usize>,
    /// `freedByGcId`: the collection after which it was found dead.
    pub freed_by_gc_id: Option<usize>,
    /// `tracked`: whether the agent tracked its liveness; a liveness event
    /// has one.
    pub tracked: Option<usize>,
    /// `trackingProbability`: the probability with which its liveness was
    /// to be tracked.
    pub tracking_probability: Option<usize>,
}

impl AllocationFields {
    /// Where events of the type of `plan` keep their fields.
    pub fn of(plan: &EventPlan<'_>) -> Self {
        let index = |name: &str| plan.field_index(name);
        Self {
            weight: index(weight_field(&plan.class().name)),
            start_time: index(field::START_TIME),
            stack_trace: index(field::STACK_TRACE),
            object_class: index(field::OBJECT_CLASS),
            event_thread: index(field::EVENT_THREAD),
            object_size: index(field::OBJECT_SIZE),
            live: index(field::LIVE),
            gcs_survived: index(field::GCS_SURVIVED),
            freed_by_gc_id: index(field::FREED_BY_GC_ID),
            tracked: index(field::TRACKED),
            tracking_probability: index(field::TRACKING_PROBABILITY),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_is_weighted_by_its_own_field() {
        assert_eq!(weight_field("jdk.ObjectAllocationInNewTLAB"), "tlabSize");
        assert_eq!(
            weight_field("jdk.ObjectAllocationOutsideTLAB"),
            "allocationSize"
        );
        assert_eq!(weight_field("jdk.ObjectAllocationSample"), "weight");
        assert_eq!(weight_field("test.Other"), "weight");
        assert_eq!(
            Source::TlabAllocations.position("jdk.ObjectAllocationOutsideTLAB"),
            Some(1)
        );
        assert_eq!(Source::AllocationSamples.position("test.Other"), None);
    }

    #[test]
    fn kinds_after_the_first_read_are_not_read() {
        let first = FirstRead::default();
        assert!(first.reads(1), "nothing read yet");
        assert!(first.reads(1), "the first read so far");
        assert!(first.reads(0), "one before it");
        assert!(!first.reads(1), "after the first read");
        assert!(!first.reads(2));
        assert!(first.reads(0));
    }
}
