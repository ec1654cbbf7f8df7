//! The events of the agent's watch, which follows each site's live bytes
//! while the program runs: `heapsampler.LeakSuspect`, a site whose live
//! bytes grew significantly, and at a new heap peak `heapsampler.HeapPeak`
//! with the live set by site then, one `heapsampler.PeakLiveSite` each
//! (the format has no readable array of pooled structs: one event per
//! site, joined to its peak by `gcId`); and, as it judges, the sites of
//! the most live bytes with their growth, `heapsampler.WatchedSite`, which
//! a view of the running recording reads (`heapsampler watch`) instead of
//! asking the agent for the live set.
//!
//! A site is one followed on its own, with its stack and class, or "the
//! other sites" (`otherSites`): every site beyond those followed one by
//! one, together, with no stack and no class.
//!
//! Estimates come with their 95% intervals, as three fields: the
//! estimate, its low end and its high end.

use jfr_format::NO_TIMESPAN;

use crate::event::EventTypeBuilder;
use crate::field::Unit;
use crate::pool::{ClassRef, StackTraceField};
use crate::types::Setting;
use jfr_format::names::{event, field};

typed_event! {
    /// `heapsampler.LeakSuspect`: a site whose live bytes, after the
    /// collections of a window, grew significantly.
    pub fn leak_suspect() -> EventTypeBuilder {
        EventTypeBuilder::new(event::LEAK_SUSPECT)
            .label("Leak Suspect")
            .description(
                "An allocation site whose live bytes grew significantly over the collections of \
                 a window, found by the heapsampler agent while the program ran: how fast, how \
                 much is live, and when the heap would be full at that rate",
            )
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::StackTrace, "true")
    }

    /// A `heapsampler.LeakSuspect`: a site whose live bytes grow.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct LeakSuspect {
        /// When the suspect was raised: the end of the collection after
        /// which the growth was judged.
        pub start_time: Ticks,
        /// The site's stack (none for the other sites).
        pub stack_trace: StackTraceField,
        /// The collection after which the growth was judged.
        pub gc_id: i32 => field::GC_ID
            .label("GC Identifier")
            .description(
                "The heapsampler.GarbageCollection after which the growth was judged",
            )
            .unsigned(),
        /// The class of the site's objects (none for the other sites).
        pub object_class: Option<ClassRef> => field::OBJECT_CLASS
            .label("Object Class")
            .description("The class of the objects allocated at the site"),
        /// Whether this stands for every site beyond those followed one by
        /// one.
        pub other_sites: bool => field::OTHER_SITES
            .label("Other Sites")
            .description(
                "Whether this is not one site but every site beyond those the agent follows one \
                 by one, together: then it has no stack trace and no class",
            ),
        /// How fast the live bytes grew over the window, bytes per second.
        pub growth_rate: f64 => field::GROWTH_RATE
            .label("Growth Rate")
            .description(
                "How fast the site's live bytes grew over the window judged: bytes per second, \
                 estimated from the samples",
            )
            .unit(Unit::BytesPerSecond),
        /// The low end of the growth rate's 95% interval.
        pub growth_rate_low: f64 => field::GROWTH_RATE_LOW
            .label("Growth Rate Low")
            .description("The low end of the growth rate's 95% interval")
            .unit(Unit::BytesPerSecond),
        /// The high end of the growth rate's 95% interval.
        pub growth_rate_high: f64 => field::GROWTH_RATE_HIGH
            .label("Growth Rate High")
            .description("The high end of the growth rate's 95% interval")
            .unit(Unit::BytesPerSecond),
        /// Nanoseconds from the window's first collection to its last,
        /// when the suspect was raised.
        pub window: i64 => field::WINDOW
            .label("Window")
            .description(
                "The time whose growth was judged: from the window's first collection to the \
                 one after which the suspect was raised",
            )
            .unit(Unit::TimespanNanos),
        /// The site's estimated live bytes after the collection.
        pub live_bytes: i64 => field::LIVE_BYTES
            .label("Live Bytes")
            .description("The site's live bytes after the collection, estimated from the samples")
            .unit(Unit::Bytes),
        /// The low end of the live bytes' 95% interval.
        pub live_bytes_low: i64 => field::LIVE_BYTES_LOW
            .label("Live Bytes Low")
            .description("The low end of the live bytes' 95% interval")
            .unit(Unit::Bytes),
        /// The high end of the live bytes' 95% interval.
        pub live_bytes_high: i64 => field::LIVE_BYTES_HIGH
            .label("Live Bytes High")
            .description("The high end of the live bytes' 95% interval")
            .unit(Unit::Bytes),
        /// The tracked samples live at the site after the collection.
        pub live_samples: i64 => field::LIVE_SAMPLES
            .label("Live Samples")
            .description("The tracked samples live at the site after the collection")
            .unsigned(),
        /// The heap in use after the collection.
        pub heap_used: i64 => field::HEAP_USED
            .label("Heap Used")
            .description("The heap in use after the collection")
            .unsigned()
            .unit(Unit::Bytes),
        /// The heap's maximum size.
        pub heap_max: i64 => field::HEAP_MAX
            .label("Heap Max")
            .description("The most the heap can grow to (-Xmx)")
            .unsigned()
            .unit(Unit::Bytes),
        /// Nanoseconds until the heap's maximum at the growth rate, or
        /// [`NO_TIMESPAN`] when that growth never reaches it
        /// ([`time_to_heap_max`]).
        pub time_to_heap_max: i64 => field::TIME_TO_HEAP_MAX
            .label("Time To Heap Max")
            .description(
                "How long until the heap in use reaches its maximum if the site keeps growing at \
                 the estimated rate and nothing else changes; N/A when the rate is not above \
                 zero",
            )
            .unit(Unit::TimespanNanos),
    }
}

typed_event! {
    /// `heapsampler.HeapPeak`: the heap after a collection higher than ever
    /// before, past the share of its maximum the agent watches for.
    pub fn heap_peak() -> EventTypeBuilder {
        EventTypeBuilder::new(event::HEAP_PEAK)
            .label("Heap Peak")
            .description(
                "The heap in use after a collection passed the share of its maximum the \
                 heapsampler agent watches for (its on-peak option), higher than any peak before. \
                 What was live then, by site, is the heapsampler.PeakLiveSite events of the same \
                 collection",
            )
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
    }

    /// A `heapsampler.HeapPeak`: the heap at a new peak.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct HeapPeak {
        /// When the collection ended.
        pub start_time: Ticks,
        /// The collection after which the peak was seen.
        pub gc_id: i32 => field::GC_ID
            .label("GC Identifier")
            .description("The heapsampler.GarbageCollection after which the peak was seen")
            .unsigned(),
        /// The heap in use after the collection.
        pub heap_used: i64 => field::HEAP_USED
            .label("Heap Used")
            .description("The heap in use after the collection")
            .unsigned()
            .unit(Unit::Bytes),
        /// The heap's maximum size.
        pub heap_max: i64 => field::HEAP_MAX
            .label("Heap Max")
            .description("The most the heap can grow to (-Xmx)")
            .unsigned()
            .unit(Unit::Bytes),
        /// `heap_used / heap_max`, between 0 and 1.
        pub heap_share: f64 => field::HEAP_SHARE
            .label("Share Of Heap Max")
            .description("The heap in use as a share of its maximum")
            .unit(Unit::Percentage),
        /// The share of the maximum a peak must pass to be written.
        pub peak_threshold: f64 => field::PEAK_THRESHOLD
            .label("Peak Threshold")
            .description(
                "The share of the heap's maximum a peak must pass to be written (the agent's \
                 on-peak option)",
            )
            .unit(Unit::Percentage),
        /// The `heapsampler.PeakLiveSite` events written with it.
        pub sites: i32 => field::SITES
            .label("Sites")
            .description(
                "The heapsampler.PeakLiveSite events written with it, one per site live then, \
                 most live bytes first",
            )
            .unsigned(),
    }
}

typed_event! {
    /// `heapsampler.PeakLiveSite`: one site of the live set at a heap peak.
    pub fn peak_live_site() -> EventTypeBuilder {
        EventTypeBuilder::new(event::PEAK_LIVE_SITE)
            .label("Peak Live Site")
            .description(
                "One allocation site's live bytes at a heap peak: the heapsampler.HeapPeak of \
                 the same collection (GC Identifier)",
            )
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::StackTrace, "true")
    }

    /// A `heapsampler.PeakLiveSite`: a site's live bytes at a heap peak.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct PeakLiveSite {
        /// The peak's time: its `heapsampler.HeapPeak`'s.
        pub start_time: Ticks,
        /// The site's stack (none for the other sites).
        pub stack_trace: StackTraceField,
        /// The collection after which the peak was seen: its
        /// `heapsampler.HeapPeak`'s.
        pub gc_id: i32 => field::GC_ID
            .label("GC Identifier")
            .description(
                "The heapsampler.GarbageCollection after which the peak was seen: the \
                 heapsampler.HeapPeak's",
            )
            .unsigned(),
        /// The class of the site's objects (none for the other sites).
        pub object_class: Option<ClassRef> => field::OBJECT_CLASS
            .label("Object Class")
            .description("The class of the objects allocated at the site"),
        /// Whether this stands for every site beyond those followed one by
        /// one.
        pub other_sites: bool => field::OTHER_SITES
            .label("Other Sites")
            .description(
                "Whether this is not one site but every site beyond those the agent follows one \
                 by one, together: then it has no stack trace and no class",
            ),
        /// The site's estimated live bytes after the collection.
        pub live_bytes: i64 => field::LIVE_BYTES
            .label("Live Bytes")
            .description("The site's live bytes after the collection, estimated from the samples")
            .unit(Unit::Bytes),
        /// The low end of the live bytes' 95% interval.
        pub live_bytes_low: i64 => field::LIVE_BYTES_LOW
            .label("Live Bytes Low")
            .description("The low end of the live bytes' 95% interval")
            .unit(Unit::Bytes),
        /// The high end of the live bytes' 95% interval.
        pub live_bytes_high: i64 => field::LIVE_BYTES_HIGH
            .label("Live Bytes High")
            .description("The high end of the live bytes' 95% interval")
            .unit(Unit::Bytes),
        /// The tracked samples live at the site after the collection.
        pub live_samples: i64 => field::LIVE_SAMPLES
            .label("Live Samples")
            .description("The tracked samples live at the site after the collection")
            .unsigned(),
    }
}

typed_event! {
    /// `heapsampler.WatchedSite`: one of the sites of the most live bytes
    /// when the watch judged, with its growth.
    pub fn watched_site() -> EventTypeBuilder {
        EventTypeBuilder::new(event::WATCHED_SITE)
            .label("Watched Site")
            .description(
                "One of the allocation sites of the most live bytes after a collection the \
                 heapsampler agent's watch judged, with how fast its live bytes grew lately: \
                 the other sites of the same judgment share its GC Identifier",
            )
            .category(&["Java Application", "heapsampler"])
            .setting(Setting::Enabled, "true")
            .setting(Setting::StackTrace, "true")
    }

    /// A `heapsampler.WatchedSite`: a site's live bytes and growth as the
    /// watch judged them.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct WatchedSite {
        /// When the collection judged ended.
        pub start_time: Ticks,
        /// The site's stack (none for the other sites).
        pub stack_trace: StackTraceField,
        /// The collection judged.
        pub gc_id: i32 => field::GC_ID
            .label("GC Identifier")
            .description("The heapsampler.GarbageCollection after which the site was judged")
            .unsigned(),
        /// The class of the site's objects (none for the other sites).
        pub object_class: Option<ClassRef> => field::OBJECT_CLASS
            .label("Object Class")
            .description("The class of the objects allocated at the site"),
        /// Whether this stands for every site beyond those followed one by
        /// one.
        pub other_sites: bool => field::OTHER_SITES
            .label("Other Sites")
            .description(
                "Whether this is not one site but every site beyond those the agent follows one \
                 by one, together: then it has no stack trace and no class",
            ),
        /// The site's estimated live bytes after the collection.
        pub live_bytes: i64 => field::LIVE_BYTES
            .label("Live Bytes")
            .description("The site's live bytes after the collection, estimated from the samples")
            .unit(Unit::Bytes),
        /// The low end of the live bytes' 95% interval.
        pub live_bytes_low: i64 => field::LIVE_BYTES_LOW
            .label("Live Bytes Low")
            .description("The low end of the live bytes' 95% interval")
            .unit(Unit::Bytes),
        /// The high end of the live bytes' 95% interval.
        pub live_bytes_high: i64 => field::LIVE_BYTES_HIGH
            .label("Live Bytes High")
            .description("The high end of the live bytes' 95% interval")
            .unit(Unit::Bytes),
        /// The tracked samples live at the site after the collection.
        pub live_samples: i64 => field::LIVE_SAMPLES
            .label("Live Samples")
            .description("The tracked samples live at the site after the collection")
            .unsigned(),
        /// How fast the live bytes grew over the window, bytes per second
        /// (NaN before the watch holds a window).
        pub growth_rate: f64 => field::GROWTH_RATE
            .label("Growth Rate")
            .description(
                "How fast the site's live bytes grew over the window: bytes per second, \
                 estimated from the samples; NaN while the watch has judged too little of the \
                 program's run to hold a window",
            )
            .unit(Unit::BytesPerSecond),
        /// The low end of the growth rate's 95% interval.
        pub growth_rate_low: f64 => field::GROWTH_RATE_LOW
            .label("Growth Rate Low")
            .description("The low end of the growth rate's 95% interval")
            .unit(Unit::BytesPerSecond),
        /// The high end of the growth rate's 95% interval.
        pub growth_rate_high: f64 => field::GROWTH_RATE_HIGH
            .label("Growth Rate High")
            .description("The high end of the growth rate's 95% interval")
            .unit(Unit::BytesPerSecond),
        /// Nanoseconds from the window's first judgment to this one, or
        /// [`NO_TIMESPAN`] when there is no window yet.
        pub window: i64 => field::WINDOW
            .label("Window")
            .description(
                "The time whose growth the rate is: from the window's first judged collection \
                 to this one (at most the last ten minutes, after the program's first quarter \
                 of its run so far); N/A while there is none",
            )
            .unit(Unit::TimespanNanos),
    }
}

/// The time until a heap of `heap_used` bytes reaches `heap_max` growing
/// `bytes_per_second`, in nanoseconds, for
/// [`LeakSuspect::time_to_heap_max`]: 0 when it is there already;
/// [`NO_TIMESPAN`] when there is no such time, a rate of zero or less never
/// getting there or the maximum unknown (0), as the JDK writes a
/// `jdk.ThreadPark` without a timeout (`jfr print` shows `N/A`, Mission
/// Control -292 years); at most `i64::MAX - 1` nanoseconds (292 years:
/// `i64::MAX` is the JDK's "forever").
pub fn time_to_heap_max(heap_used: u64, heap_max: u64, bytes_per_second: f64) -> i64 {
    if heap_max == 0 {
        return NO_TIMESPAN;
    }
    if heap_used >= heap_max {
        return 0;
    }
    if bytes_per_second.is_nan() || bytes_per_second <= 0.0 {
        return NO_TIMESPAN;
    }
    let nanos = (heap_max - heap_used) as f64 / bytes_per_second * 1e9;
    // `as` saturates.
    (nanos as i64).min(i64::MAX - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_to_the_heaps_maximum_is_none_when_the_rate_never_gets_there() {
        // 512 MiB to go at 1 MiB/s: 512 s.
        assert_eq!(
            time_to_heap_max(512 << 20, 1 << 30, (1 << 20) as f64),
            512_000_000_000
        );
        assert_eq!(time_to_heap_max(1 << 30, 1 << 30, 1.0), 0, "full already");
        assert_eq!(time_to_heap_max(2 << 30, 1 << 30, -1.0), 0, "past it");
        for never in [0.0, -5.0, f64::NAN] {
            assert_eq!(time_to_heap_max(0, 1 << 30, never), NO_TIMESPAN, "{never}");
        }
        assert_eq!(time_to_heap_max(0, u64::MAX, 1e-9), i64::MAX - 1);
        assert_eq!(
            time_to_heap_max(1 << 20, 0, 1.0),
            NO_TIMESPAN,
            "no maximum known"
        );
    }
}
