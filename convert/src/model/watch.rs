//! What the agent's watch wrote while the program ran: the leak suspects it
//! raised (`heapsampler.LeakSuspect`), the heap peaks it saw
//! (`heapsampler.HeapPeak`, with the live set by site then,
//! `heapsampler.PeakLiveSite`), and the sites of the most live bytes as it
//! judged them (`heapsampler.WatchedSite`). [`WatchReader`] reads a
//! chunk's, into a [`Watch`]; the [`Watch`]es of a recording's chunks
//! merge, in chunk order, into the recording's.
//!
//! Memory is bounded by the sites, not by the events: the agent may raise
//! a site again and again over days, and a [`Raised`] keeps, per site, the
//! first time and the latest event. A peak's sites are kept for the last
//! peak only (the highest: a peak is higher than every one before it);
//! the peaks themselves are a few numbers each. The watched sites are kept
//! for the last judgment only.
//!
//! A site is read as the analyses read the samples' ([`Flattener`]): its
//! stack's frames, top first, joined with `;`, as deep as `top --by
//! app-site` reads them ([`STACK_DEPTH`]), and its class's Java name.

use heapsampler_core::estimate::Interval;
use jfr_format::NO_TIMESPAN;
use jfr_format::names::{event, field};

use crate::model::text::{Flattener, Unit, epoch_nanos, unit};
use jfr_reader::ReadError;
use jfr_reader::chunk::Chunk;
use jfr_reader::event::{EventPlan, Field, RawEvent};
use jfr_reader::value::Value;

/// How many frames of a site's stack are kept: as many as the deepest
/// grouping of the samples reads (`top --by app-site`), so that a site
/// falls in the group its samples fall in, whatever the grouping.
pub const STACK_DEPTH: usize = 64;

/// A site of the agent's watch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Site {
    /// Its stack's frames, top first, joined with `;` (at most
    /// [`STACK_DEPTH`]): `pkg.Class.method(line);...`. Empty without one.
    pub stack: String,
    /// Its objects' class's Java name (`byte[]`); empty without one.
    pub class: String,
    /// Whether it stands for every site beyond those the agent follows one
    /// by one (then it has no stack and no class).
    pub other_sites: bool,
}

impl Site {
    /// The top `n` frames of its stack, top first.
    pub fn top_frames(&self, n: usize) -> impl Iterator<Item = &str> {
        self.stack.split(';').filter(|f| !f.is_empty()).take(n)
    }
}

/// One `heapsampler.LeakSuspect`'s figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Raise {
    /// When it was raised, nanoseconds since the epoch.
    pub nanos: i64,
    /// The collection after which its growth was judged.
    pub gc_id: u64,
    /// How fast the site's live bytes grew, bytes per second, with its 95%
    /// interval.
    pub growth: Interval,
    /// The time whose growth was judged, nanoseconds.
    pub window_nanos: Option<i64>,
    /// The site's live bytes then, with their 95% interval.
    pub live: Interval,
    /// The tracked samples live at the site then.
    pub live_samples: u64,
    /// The heap in use after the collection.
    pub heap_used: Option<u64>,
    /// The heap's maximum.
    pub heap_max: Option<u64>,
    /// Nanoseconds until the heap's maximum at the growth rate; `None`
    /// when there is no such time (the rate never gets there).
    pub time_to_heap_max_nanos: Option<i64>,
}

/// A site the agent raised as a leak suspect: when first, and its latest
/// `heapsampler.LeakSuspect`.
#[derive(Debug, Clone, PartialEq)]
pub struct Raised {
    /// The site.
    pub site: Site,
    /// When the agent first raised it, nanoseconds since the epoch.
    pub first_nanos: i64,
    /// How many times it raised it.
    pub times: u64,
    /// The latest of its events (the one written last, of those at the
    /// same time).
    pub latest: Raise,
}

/// A `heapsampler.HeapPeak`: the heap at a new peak.
#[derive(Debug, Clone, PartialEq)]
pub struct HeapPeak {
    /// When the collection ended, nanoseconds since the epoch.
    pub nanos: i64,
    /// The collection after which the peak was seen.
    pub gc_id: u64,
    /// The heap in use after it.
    pub heap_used: u64,
    /// The heap's maximum.
    pub heap_max: u64,
    /// The heap in use as a share of its maximum (0 to 1).
    pub share: f64,
    /// The share of its maximum a peak had to pass to be written.
    pub threshold: f64,
}

/// A `heapsampler.PeakLiveSite`: a site's live bytes at a heap peak.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakSite {
    /// The site.
    pub site: Site,
    /// Its live bytes, with their 95% interval.
    pub live: Interval,
    /// The tracked samples live there.
    pub live_samples: u64,
}

/// A `heapsampler.WatchedSite`: a site's live bytes, and how they grew
/// lately, as the watch judged them.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchedSite {
    /// The site.
    pub site: Site,
    /// Its live bytes, with their 95% interval.
    pub live: Interval,
    /// The tracked samples live there.
    pub live_samples: u64,
    /// How fast its live bytes grew, bytes per second, with its 95%
    /// interval, and over how many nanoseconds; `None` while the watch
    /// held no window.
    pub growth: Option<(Interval, i64)>,
}

/// The sites of one judgment of the watch.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// When the collection judged ended, nanoseconds since the epoch.
    pub nanos: i64,
    /// The collection judged.
    pub gc_id: u64,
    /// Its sites, in the order written (most live bytes first, the other
    /// sites last).
    pub sites: Vec<WatchedSite>,
}

/// What the agent's watch wrote: of one chunk, or merged over a
/// recording's chunks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watch {
    /// The sites raised as leak suspects, in the order first met.
    pub raised: Vec<Raised>,
    /// The heap peaks, in the order met.
    pub peaks: Vec<HeapPeak>,
    /// The sites live at the last peak (the one of the greatest
    /// collection id their events name), in the order met, and that
    /// collection.
    pub peak_sites: Option<(u64, Vec<PeakSite>)>,
    /// The last judgment's sites (the latest in time).
    pub judged: Option<Judged>,
}

impl Watch {
    /// Whether the recording has any of the watch's events.
    pub fn is_empty(&self) -> bool {
        self.raised.is_empty()
            && self.peaks.is_empty()
            && self.peak_sites.is_none()
            && self.judged.is_none()
    }

    /// Adds a `heapsampler.WatchedSite` of the judgment after collection
    /// `gc_id`, at `nanos`: kept if that is the last judgment met.
    fn watched_site(&mut self, nanos: i64, gc_id: u64, site: WatchedSite) {
        match &mut self.judged {
            Some(last) if (last.nanos, last.gc_id) == (nanos, gc_id) => last.sites.push(site),
            Some(last) if last.nanos > nanos => {}
            _ => {
                self.judged = Some(Judged {
                    nanos,
                    gc_id,
                    sites: vec![site],
                })
            }
        }
    }

    /// When the agent first raised the site of the samples whose stack's
    /// top frame is `top_frame` (`pkg.Class.method(line)`: their site, as
    /// `top --by site` groups them) and whose class is `class` (its Java
    /// name, empty without one), nanoseconds since the epoch; `None` if it
    /// raised no such site. Raised sites whose stacks part below their top
    /// frame are all the samples' site: the earliest of them.
    pub fn first_raised(&self, top_frame: &str, class: &str) -> Option<i64> {
        self.raised
            .iter()
            .filter(|r| {
                !r.site.other_sites
                    && r.site.class == class
                    && r.site.top_frames(1).next() == Some(top_frame)
            })
            .map(|r| r.first_nanos)
            .min()
    }

    /// Adds a `heapsampler.LeakSuspect` of `site`.
    fn raise(&mut self, site: Site, raise: Raise) {
        match self.raised.iter_mut().find(|r| r.site == site) {
            Some(known) => {
                known.first_nanos = known.first_nanos.min(raise.nanos);
                known.times += 1;
                if raise.nanos >= known.latest.nanos {
                    known.latest = raise;
                }
            }
            None => self.raised.push(Raised {
                site,
                first_nanos: raise.nanos,
                times: 1,
                latest: raise,
            }),
        }
    }

    /// Adds a `heapsampler.PeakLiveSite` of the peak after collection
    /// `gc_id`: kept if that is the last peak met.
    fn peak_site(&mut self, gc_id: u64, site: PeakSite) {
        match &mut self.peak_sites {
            Some((last, sites)) if *last == gc_id => sites.push(site),
            Some((last, _)) if *last > gc_id => {}
            _ => self.peak_sites = Some((gc_id, vec![site])),
        }
    }

    /// Adds what was read of a chunk after those merged.
    pub fn merge(&mut self, chunk: Watch) {
        for raised in chunk.raised {
            match self.raised.iter_mut().find(|r| r.site == raised.site) {
                Some(known) => {
                    known.first_nanos = known.first_nanos.min(raised.first_nanos);
                    known.times += raised.times;
                    if raised.latest.nanos >= known.latest.nanos {
                        known.latest = raised.latest;
                    }
                }
                None => self.raised.push(raised),
            }
        }
        self.peaks.extend(chunk.peaks);
        if let Some((gc_id, sites)) = chunk.peak_sites {
            for site in sites {
                self.peak_site(gc_id, site);
            }
        }
        if let Some(judged) = chunk.judged {
            for site in judged.sites {
                self.watched_site(judged.nanos, judged.gc_id, site);
            }
        }
    }

    /// The last peak, with the sites live then (most bytes first), if the
    /// recording has a peak.
    pub fn last_peak(&self) -> Option<(&HeapPeak, Vec<&PeakSite>)> {
        let peak = self.peaks.iter().max_by_key(|p| (p.gc_id, p.nanos))?;
        let mut sites: Vec<&PeakSite> = match &self.peak_sites {
            Some((gc_id, sites)) if *gc_id == peak.gc_id => sites.iter().collect(),
            _ => Vec::new(),
        };
        sites.sort_by(|a, b| b.live.estimate.total_cmp(&a.live.estimate));
        Some((peak, sites))
    }

    /// About how many bytes it takes.
    pub fn bytes(&self) -> usize {
        let site = |s: &Site| s.stack.len() + s.class.len() + std::mem::size_of::<Site>();
        let raised: usize = self
            .raised
            .iter()
            .map(|r| site(&r.site) + std::mem::size_of::<Raised>())
            .sum();
        let sites: usize = self.peak_sites.as_ref().map_or(0, |(_, sites)| {
            sites
                .iter()
                .map(|s| site(&s.site) + std::mem::size_of::<PeakSite>())
                .sum()
        });
        let judged: usize = self.judged.as_ref().map_or(0, |judged| {
            judged
                .sites
                .iter()
                .map(|s| site(&s.site) + std::mem::size_of::<WatchedSite>())
                .sum()
        });
        raised + sites + judged + self.peaks.len() * std::mem::size_of::<HeapPeak>()
    }
}

/// Which of the watch's events an event type is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEvent {
    /// `heapsampler.LeakSuspect`.
    LeakSuspect,
    /// `heapsampler.HeapPeak`.
    HeapPeak,
    /// `heapsampler.PeakLiveSite`.
    PeakLiveSite,
    /// `heapsampler.WatchedSite`.
    WatchedSite,
}

impl WatchEvent {
    /// The watch's event type named `name`, if it is one.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            event::LEAK_SUSPECT => Some(Self::LeakSuspect),
            event::HEAP_PEAK => Some(Self::HeapPeak),
            event::PEAK_LIVE_SITE => Some(Self::PeakLiveSite),
            event::WATCHED_SITE => Some(Self::WatchedSite),
            _ => None,
        }
    }
}

/// Reads the watch's events of one chunk.
pub struct WatchReader<'c, 'a> {
    chunk: &'c Chunk<'a>,
    text: Flattener<'c, 'a>,
}

/// The fields of one watch event, as read.
#[derive(Default)]
struct Read {
    start: Option<i64>,
    stack: Option<Value>,
    class: Option<Value>,
    other_sites: bool,
    gc_id: u64,
    growth: [Option<f64>; 3],
    window: Option<i64>,
    live: [Option<f64>; 3],
    live_samples: u64,
    heap_used: Option<u64>,
    heap_max: Option<u64>,
    to_heap_max: Option<i64>,
    share: Option<f64>,
    threshold: Option<f64>,
}

impl<'c, 'a> WatchReader<'c, 'a> {
    /// A reader of `chunk`'s watch events.
    pub fn new(chunk: &'c Chunk<'a>) -> Self {
        Self {
            chunk,
            text: Flattener::new(chunk, STACK_DEPTH),
        }
    }

    /// Reads `raw`, a `kind` of event laid out by `plan`, into `watch`. A
    /// field of another type than declared reads as absent; a timespan as
    /// its unit says (ticks, nanoseconds, ...).
    pub fn read(
        &self,
        kind: WatchEvent,
        plan: &EventPlan<'_>,
        raw: &mut RawEvent<'a>,
        watch: &mut Watch,
    ) -> Result<(), ReadError> {
        let metadata = &self.chunk.metadata;
        let header = &self.chunk.header;
        let fields = &plan.class().fields;
        let timespan_nanos = |index: usize, value: i64| match unit(metadata, &fields[index]) {
            _ if value == NO_TIMESPAN => None,
            Unit::TimespanTicks => {
                Some((value as f64 * 1e9 / header.ticks_per_second.max(1) as f64) as i64)
            }
            Unit::TimespanScale(scale) => Some(value.saturating_mul(scale)),
            _ => Some(value),
        };
        let mut read = Read::default();
        plan.read(
            raw,
            &mut |index: usize, value: Field<'a>| match fields[index].name.as_str() {
                field::START_TIME => read.start = value.integer(),
                field::STACK_TRACE => read.stack = Some(value.into_value()),
                field::OBJECT_CLASS => read.class = Some(value.into_value()),
                field::OTHER_SITES => read.other_sites = value == Field::Boolean(true),
                field::GC_ID => read.gc_id = value.count().unwrap_or(0),
                field::GROWTH_RATE => read.growth[0] = value.number(),
                field::GROWTH_RATE_LOW => read.growth[1] = value.number(),
                field::GROWTH_RATE_HIGH => read.growth[2] = value.number(),
                field::WINDOW => {
                    read.window = value.integer().and_then(|v| timespan_nanos(index, v))
                }
                field::LIVE_BYTES => read.live[0] = value.number(),
                field::LIVE_BYTES_LOW => read.live[1] = value.number(),
                field::LIVE_BYTES_HIGH => read.live[2] = value.number(),
                field::LIVE_SAMPLES => read.live_samples = value.count().unwrap_or(0),
                field::HEAP_USED => read.heap_used = value.count(),
                field::HEAP_MAX => read.heap_max = value.count(),
                field::TIME_TO_HEAP_MAX => {
                    read.to_heap_max = value.integer().and_then(|v| timespan_nanos(index, v));
                }
                field::HEAP_SHARE => read.share = value.number(),
                field::PEAK_THRESHOLD => read.threshold = value.number(),
                _ => {}
            },
        )?;
        let nanos = epoch_nanos(header, read.start.unwrap_or(header.start_ticks));
        match kind {
            WatchEvent::LeakSuspect => {
                let raise = Raise {
                    nanos,
                    gc_id: read.gc_id,
                    growth: interval(read.growth),
                    window_nanos: read.window,
                    live: interval(read.live),
                    live_samples: read.live_samples,
                    heap_used: read.heap_used,
                    heap_max: read.heap_max,
                    time_to_heap_max_nanos: read.to_heap_max,
                };
                watch.raise(self.site(&read), raise);
            }
            WatchEvent::HeapPeak => {
                let (used, max) = (read.heap_used.unwrap_or(0), read.heap_max.unwrap_or(0));
                let share = read
                    .share
                    .unwrap_or_else(|| used as f64 / max.max(1) as f64);
                watch.peaks.push(HeapPeak {
                    nanos,
                    gc_id: read.gc_id,
                    heap_used: used,
                    heap_max: max,
                    share,
                    threshold: read.threshold.unwrap_or(0.0),
                });
            }
            WatchEvent::PeakLiveSite => {
                let site = PeakSite {
                    site: self.site(&read),
                    live: interval(read.live),
                    live_samples: read.live_samples,
                };
                watch.peak_site(read.gc_id, site);
            }
            WatchEvent::WatchedSite => {
                // NaN until the watch holds a window.
                let growth = interval(read.growth);
                let growth = read
                    .window
                    .filter(|_| growth.estimate.is_finite())
                    .map(|window| (growth, window));
                let site = WatchedSite {
                    site: self.site(&read),
                    live: interval(read.live),
                    live_samples: read.live_samples,
                    growth,
                };
                watch.watched_site(nanos, read.gc_id, site);
            }
        }
        Ok(())
    }

    /// The site an event names.
    fn site(&self, read: &Read) -> Site {
        let text =
            |value: &Option<Value>| value.as_ref().map_or(String::new(), |v| self.text.text(v));
        Site {
            stack: text(&read.stack),
            class: text(&read.class),
            other_sites: read.other_sites,
        }
    }
}

/// An estimate and its interval's ends, as three fields give them; an end
/// absent is the estimate, an estimate absent 0.
fn interval([estimate, low, high]: [Option<f64>; 3]) -> Interval {
    let estimate = estimate.unwrap_or(0.0);
    Interval {
        estimate,
        low: low.unwrap_or(estimate).min(estimate),
        high: high.unwrap_or(estimate).max(estimate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raise(nanos: i64, rate: f64) -> Raise {
        Raise {
            nanos,
            gc_id: 0,
            growth: interval([Some(rate), None, None]),
            window_nanos: None,
            live: interval([None, None, None]),
            live_samples: 0,
            heap_used: None,
            heap_max: None,
            time_to_heap_max_nanos: None,
        }
    }

    fn site(stack: &str) -> Site {
        Site {
            stack: stack.to_owned(),
            class: "byte[]".to_owned(),
            other_sites: false,
        }
    }

    fn peak_site(stack: &str, live: f64) -> PeakSite {
        PeakSite {
            site: site(stack),
            live: interval([Some(live), None, None]),
            live_samples: 1,
        }
    }

    /// Chunks merge in file order, but a chunk's events need not be in
    /// time order: the first raise is the earliest, the latest the last in
    /// time.
    #[test]
    fn a_site_keeps_its_first_raise_and_its_latest_over_the_chunks() {
        let mut first = Watch::default();
        first.raise(site("A.a(1)"), raise(20, 1.0));
        first.raise(site("B.b(2)"), raise(30, 5.0));
        first.raise(site("A.a(1)"), raise(10, 2.0));
        let mut second = Watch::default();
        second.raise(site("A.a(1)"), raise(40, 3.0));
        first.merge(second);
        assert_eq!(first.raised.len(), 2);
        let a = &first.raised[0];
        assert_eq!((a.first_nanos, a.times), (10, 3));
        assert_eq!(a.latest.growth.estimate, 3.0);
        assert_eq!(first.raised[1].site.stack, "B.b(2)");
    }

    /// A raised site is the samples' when its top frame and class are
    /// theirs, whatever the frames below; the sites past those followed
    /// one by one are no sample's.
    #[test]
    fn samples_take_the_first_raise_of_a_site_of_their_top_frame_and_class() {
        let mut watch = Watch::default();
        watch.raise(site("A.a(1);Main.main(2)"), raise(30, 1.0));
        watch.raise(site("A.a(1);Other.run(3)"), raise(20, 1.0));
        watch.raise(site("B.b(2)"), raise(10, 1.0));
        let other_sites = Site {
            stack: String::new(),
            class: String::new(),
            other_sites: true,
        };
        watch.raise(other_sites, raise(5, 1.0));
        assert_eq!(watch.first_raised("A.a(1)", "byte[]"), Some(20));
        assert_eq!(watch.first_raised("B.b(2)", "byte[]"), Some(10));
        assert_eq!(watch.first_raised("B.b(2)", "java.lang.String"), None);
        assert_eq!(watch.first_raised("A.a", "byte[]"), None);
        assert_eq!(watch.first_raised("Main.main(2)", "byte[]"), None);
        assert_eq!(watch.first_raised("", ""), None);
    }

    /// Only the last peak's sites are kept, whichever chunk they come in,
    /// and they are listed most bytes first.
    #[test]
    fn the_last_peaks_sites_are_kept() {
        let mut watch = Watch::default();
        for gc_id in [3, 7] {
            watch.peaks.push(HeapPeak {
                nanos: gc_id as i64,
                gc_id,
                heap_used: 1,
                heap_max: 2,
                share: 0.5,
                threshold: 0.4,
            });
        }
        watch.peak_site(3, peak_site("Old.x(1)", 9.0));
        let mut later = Watch::default();
        later.peak_site(7, peak_site("Small.y(2)", 1.0));
        later.peak_site(7, peak_site("Big.z(3)", 5.0));
        later.peak_site(3, peak_site("Old.w(4)", 9.0));
        watch.merge(later);
        let (peak, sites) = watch.last_peak().unwrap();
        assert_eq!(peak.gc_id, 7);
        let stacks: Vec<&str> = sites.iter().map(|s| s.site.stack.as_str()).collect();
        assert_eq!(stacks, ["Big.z(3)", "Small.y(2)"]);
    }

    /// Only the last judgment's sites are kept, whichever chunk they come
    /// in, in the order written.
    #[test]
    fn the_last_judgments_sites_are_kept() {
        let watched = |stack: &str| WatchedSite {
            site: site(stack),
            live: interval([Some(1.0), None, None]),
            live_samples: 1,
            growth: None,
        };
        let mut watch = Watch::default();
        watch.watched_site(10, 3, watched("Old.x(1)"));
        let mut later = Watch::default();
        later.watched_site(20, 5, watched("Big.z(3)"));
        later.watched_site(20, 5, watched("Small.y(2)"));
        later.watched_site(10, 3, watched("Old.w(4)"));
        watch.merge(later);
        let judged = watch.judged.unwrap();
        assert_eq!((judged.nanos, judged.gc_id), (20, 5));
        let stacks: Vec<&str> = judged.sites.iter().map(|s| s.site.stack.as_str()).collect();
        assert_eq!(stacks, ["Big.z(3)", "Small.y(2)"]);
    }

    #[test]
    fn an_interval_missing_an_end_is_the_estimate() {
        let whole = interval([Some(5.0), Some(4.0), Some(7.0)]);
        assert_eq!((whole.low, whole.estimate, whole.high), (4.0, 5.0, 7.0));
        let bare = interval([Some(5.0), None, Some(3.0)]);
        assert_eq!((bare.low, bare.estimate, bare.high), (5.0, 5.0, 5.0));
    }
}
