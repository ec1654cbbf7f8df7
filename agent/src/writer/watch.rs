//! The writer's watch: each allocation site's live bytes after each
//! collection that frees what is dead, tested for growth by
//! [`heapsampler_core::watch::Watch`] on the writer thread, and what it
//! raises written as `heapsampler.LeakSuspect`; with a peak share, the
//! heap's new peaks as `heapsampler.HeapPeak` with the live set by site
//! (`heapsampler.PeakLiveSite`); and the sites of the most live bytes
//! with their growth lately (`heapsampler.WatchedSite`), at most every
//! [`WATCHED_SITES_EVERY`], for a view of the running recording.
//!
//! Invariants (the core watch's caller contract):
//! - A tracked sample enters its site once, at the first [`Judgment`] that
//!   found it live: allocated before the judgment's `until` and not found
//!   freed by the sweep before it. A sample that dies before is neither
//!   entered nor left.
//! - A sample that entered leaves once, when a sweep finds it freed.
//! - Judgments come only from collections that found dead whatever of the
//!   judged samples was dead: a collection that marked the whole heap
//!   ([`crate::heap::WholeHeapCollection`]: a full one, G1's marking from
//!   JDK 21, a cycle without generations, generational Shenandoah's old
//!   marking's end as its notifications tell it), or a canary found cleared
//!   ([`super::canary`]: generational ZGC, G1 before JDK 21). After a young
//!   collection an old object that died is not found dead yet (G1,
//!   Parallel, Serial, generational Shenandoah: until the next marking or
//!   full collection; generational ZGC's young collections keep whatever a
//!   weak handle points to), so a site whose objects die old would seem to grow until
//!   then (a cache turning over did, in a 3-minute run under G1).
//! - A site is its stack and its class: the stack's fingerprint and the
//!   class's key, both stable while the session runs, folded into 64 bits.
//!
//! A checkpoint runs once per pass of the writer's loop with a judgment in
//! it, after the collections' notifications were read (which is how the
//! agent learns of them), so that the heap figures are those of the
//! collection judged. A heap peak is looked for after any collection.

use heapsampler_core::estimate::Estimate;
use heapsampler_core::liveness::{LivenessTable, TrackedObject};
use heapsampler_core::watch::{Group, Suspect, Watch};
use jfr_format::NO_TIMESPAN;
use jfr_writer::events::{self, HeapPeak, LeakSuspect, PeakLiveSite, WatchedSite};
use jfr_writer::{ClassRef, EventType, Recording, Sink, StackTraceField, TICKS_PER_SECOND, Ticks};
use rustc_hash::FxHashMap;

use super::canary::{Canaries, CanaryKind, CanaryVm};
use super::liveness::Tracked;

/// The most `heapsampler.PeakLiveSite` events a peak writes: the sites of
/// the most live bytes, and the rest.
pub const MAX_PEAK_SITES: usize = 64;

/// The most `heapsampler.WatchedSite` events a judgment writes: the sites
/// of the most live bytes (as many as a terminal's view lists), and the
/// rest.
pub const WATCHED_SITES: usize = 20;

/// The least time between two judgments whose sites are written, ticks:
/// 21 events of about 60 bytes each, 11 MB a day at most (a judgment
/// comes at most once per collection that marked the heap).
pub const WATCHED_SITES_EVERY: i64 = 10 * TICKS_PER_SECOND;

/// The longest window a watched site's growth is measured over, seconds:
/// how it grew lately, not since the program started.
pub const TREND_HORIZON: f64 = 600.0;

/// The site of a sample: its stack's fingerprint and its class's key.
pub(super) fn site_of(stack_fingerprint: u128, class: u64) -> u64 {
    let mut bytes = [0u8; 24];
    bytes[..16].copy_from_slice(&stack_fingerprint.to_le_bytes());
    bytes[16..].copy_from_slice(&class.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// What the watch raised at a checkpoint, for the session to say and act
/// on.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A leak suspect, as its event says it.
    Leak {
        /// The site's class, by name (`None` for the other sites).
        class: Option<String>,
        /// The suspect's figures.
        suspect: Suspect,
        /// The heap in use after the collection, and its maximum (0:
        /// unknown).
        heap: (u64, u64),
    },
    /// A new heap peak past the share watched for.
    Peak {
        /// The heap in use after the collection.
        used: u64,
        /// The heap's maximum.
        max: u64,
    },
}

impl std::fmt::Display for Notice {
    /// The line the agent says on stderr.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Leak {
                class,
                suspect,
                heap: (used, max),
            } => {
                let what = match (suspect.group, class) {
                    (Group::Rest, _) => "the sites not followed one by one".to_owned(),
                    (Group::Site(_), Some(class)) => format!("a site of {class}"),
                    (Group::Site(_), None) => "a site".to_owned(),
                };
                let growth = &suspect.growth;
                write!(
                    f,
                    "leak suspect: {what} grows {}/s (95%: {} to {}/s) over the last {:.0} s, \
                     {} live now",
                    human_bytes(growth.estimate),
                    human_bytes(growth.low),
                    human_bytes(growth.high),
                    suspect.raised_at - suspect.window_start,
                    human_bytes(suspect.live.estimate),
                )?;
                let to_max = events::time_to_heap_max(*used, *max, growth.estimate);
                if to_max > 0 {
                    write!(
                        f,
                        "; at that rate the heap ({} of {}) is full in {}",
                        human_bytes(*used as f64),
                        human_bytes(*max as f64),
                        human_duration(to_max as f64 / 1e9)
                    )?;
                }
                write!(f, " (heapsampler.LeakSuspect, with its stack)")
            }
            Notice::Peak { used, max } => write!(
                f,
                "heap peak: {} in use after a collection, {:.0}% of its maximum {} \
                 (heapsampler.HeapPeak, with the live set by site)",
                human_bytes(*used as f64),
                *used as f64 / *max as f64 * 100.0,
                human_bytes(*max as f64)
            ),
        }
    }
}

/// `12.3 MiB`.
fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `45 s`, `12 min`, `3.5 h`, `2.0 days`.
fn human_duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86_400.0)
    }
}

/// The heap after the collection judged: what the heap's context last
/// read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct HeapAfter {
    /// Bytes in use (`None`: not known).
    pub(super) used: Option<u64>,
    /// The maximum (0: not known).
    pub(super) max: u64,
}

/// A moment the watch may judge at: every tracked sample allocated before
/// `until` and not found freed since `at` is live (recording ticks). After
/// a collection that marked the whole heap, `until` is when it began; after
/// a canary cleared, when the canary was let go ([`super::canary`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Judgment {
    pub(super) until: i64,
    pub(super) at: i64,
}

/// The watch and its events.
pub(super) struct Watching {
    watch: Watch,
    leak_suspect: EventType,
    heap_peak: EventType,
    peak_live_site: EventType,
    watched_site: EventType,
    /// When the watched sites were last written, ticks.
    sites_written_at: Option<i64>,
    /// The share of the heap's maximum a peak must pass, if watched.
    peak_share: Option<f64>,
    /// The highest heap after a collection written as a peak.
    highest_peak: u64,
    /// The latest judgment due, not made yet, and the collections counted
    /// then.
    pending: Option<(u64, Judgment)>,
    /// Where the collector does not say when a marking ends: what tells.
    canaries: Option<Canaries>,
    notices: Vec<Notice>,
}

impl Watching {
    /// Registers the watch's events.
    pub(super) fn register<S: Sink>(
        recording: &mut Recording<S>,
        peak_share: Option<f64>,
    ) -> Result<Self, jfr_writer::Error> {
        Ok(Self {
            watch: Watch::new(),
            leak_suspect: recording.register(events::leak_suspect())?,
            heap_peak: recording.register(events::heap_peak())?,
            peak_live_site: recording.register(events::peak_live_site())?,
            watched_site: recording.register(events::watched_site())?,
            sites_written_at: None,
            peak_share,
            highest_peak: 0,
            pending: None,
            canaries: None,
            notices: Vec::new(),
        })
    }

    /// A sweep found `freed` collected: it leaves its site if it entered.
    pub(super) fn freed(&mut self, freed: &TrackedObject<Tracked>) {
        let tracked = &freed.handle;
        if tracked.entered {
            self.watch
                .leave(tracked.site, liveness_weight(freed), freed.size);
        }
    }

    /// A judgment is due, `gc_count` collections counted: the latest of
    /// those not made yet is made at the next checkpoint.
    pub(super) fn judged(&mut self, gc_count: u64, judgment: Judgment) {
        if self
            .pending
            .is_none_or(|(_, pending)| judgment.until >= pending.until)
        {
            self.pending = Some((gc_count, judgment));
        }
    }

    /// The canaries of a collector of `kind`, made at the first call.
    pub(super) fn canaries(&mut self, kind: CanaryKind) -> &mut Canaries {
        self.canaries.get_or_insert_with(|| Canaries::new(kind))
    }

    /// Releases the canaries' handles: the recording ends.
    pub(super) fn release_canaries(&mut self, vm: &mut impl CanaryVm) {
        if let Some(canaries) = self.canaries.as_mut() {
            canaries.release_all(vm);
        }
    }

    /// The checkpoint due, at the judgment pending: each sample of `table`
    /// not entered yet and allocated before its `until` enters its site;
    /// the groups are judged, each suspect written (and kept for
    /// [`Watching::take_notices`]), and the watched sites, unless written
    /// less than [`WATCHED_SITES_EVERY`] before. Then, after any collection
    /// (`collections` counted so far), with a peak share, a new peak of
    /// `heap` is written with the live bytes by site as last judged.
    pub(super) fn checkpoint<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        table: &mut LivenessTable<Tracked>,
        heap: HeapAfter,
        collections: u64,
        mut class_name: impl FnMut(&Tracked) -> Option<String>,
    ) -> Result<(), jfr_writer::Error> {
        let mut suspects = Vec::new();
        let mut judged = None;
        if let Some((gc_count, judgment)) = self.pending.take() {
            for object in table.iter_mut() {
                if !object.handle.entered && (object.allocation_time as i64) < judgment.until {
                    object.handle.entered = true;
                    let weight = liveness_weight(object);
                    self.watch.enter(object.handle.site, weight, object.size);
                }
            }
            let seconds = judgment.at.max(0) as f64 / TICKS_PER_SECOND as f64;
            suspects = self.watch.checkpoint(seconds);
            judged = Some((gc_count, Ticks(judgment.at)));
        }
        let peak = self.new_peak(heap);
        let sites_due = judged.is_some_and(|(_, at)| {
            self.sites_written_at
                .is_none_or(|last| at.0 - last >= WATCHED_SITES_EVERY)
        });
        if suspects.is_empty() && peak.is_none() && !sites_due {
            return Ok(());
        }
        let sites = Sites::of(table);
        let (heap_used, heap_max) = (heap.used.unwrap_or(0), heap.max);
        if let Some((gc_count, now)) = judged {
            let gc_id = gc_count.min(i32::MAX as u64) as i32;
            for suspect in suspects {
                let one = sites.one(suspect.group);
                LeakSuspect {
                    start_time: now,
                    stack_trace: one.map_or(StackTraceField::from(None), |t| t.stack.into()),
                    gc_id,
                    object_class: one.map(|t| t.class.class),
                    other_sites: suspect.group == Group::Rest,
                    growth_rate: suspect.growth.estimate,
                    growth_rate_low: suspect.growth.low,
                    growth_rate_high: suspect.growth.high,
                    window: ((suspect.raised_at - suspect.window_start) * 1e9) as i64,
                    live_bytes: suspect.live.estimate as i64,
                    live_bytes_low: suspect.live.low as i64,
                    live_bytes_high: suspect.live.high as i64,
                    live_samples: sites.samples(suspect.group) as i64,
                    heap_used: saturate(heap_used),
                    heap_max: saturate(heap_max),
                    time_to_heap_max: events::time_to_heap_max(
                        heap_used,
                        heap_max,
                        suspect.growth.estimate,
                    ),
                }
                .write(recording, &self.leak_suspect)?;
                self.notices.push(Notice::Leak {
                    class: one.and_then(&mut class_name),
                    suspect,
                    heap: (heap_used, heap_max),
                });
            }
            if sites_due {
                self.write_watched_sites(recording, &sites, now, gc_id)?;
                self.sites_written_at = Some(now.0);
            }
        }
        if let Some(used) = peak {
            let now = recording.clock().now();
            let gc_id = collections.min(i32::MAX as u64) as i32;
            self.write_peak(recording, &sites, now, gc_id, used, heap.max)?;
            self.notices.push(Notice::Peak {
                used,
                max: heap.max,
            });
        }
        Ok(())
    }

    /// The heap in use after the collection, if it is a new peak past the
    /// share watched for.
    fn new_peak(&mut self, heap: HeapAfter) -> Option<u64> {
        let share = self.peak_share?;
        let used = heap.used?;
        if heap.max == 0 || (used as f64) < share * heap.max as f64 || used <= self.highest_peak {
            return None;
        }
        self.highest_peak = used;
        Some(used)
    }

    /// `heapsampler.HeapPeak` and the live set by site: the sites of the
    /// most live bytes, up to [`MAX_PEAK_SITES`] with the rest.
    fn write_peak<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        sites: &Sites,
        now: Ticks,
        gc_id: i32,
        used: u64,
        max: u64,
    ) -> Result<(), jfr_writer::Error> {
        let written = self.largest(sites, MAX_PEAK_SITES);
        HeapPeak {
            start_time: now,
            gc_id,
            heap_used: saturate(used),
            heap_max: saturate(max),
            heap_share: used as f64 / max as f64,
            peak_threshold: self.peak_share.unwrap_or(0.0),
            sites: written.len() as i32,
        }
        .write(recording, &self.heap_peak)?;
        for (group, live) in written {
            let site = SiteFields::of(sites, group, &live);
            PeakLiveSite {
                start_time: now,
                stack_trace: site.stack_trace,
                gc_id,
                object_class: site.object_class,
                other_sites: site.other_sites,
                live_bytes: site.live[0],
                live_bytes_low: site.live[1],
                live_bytes_high: site.live[2],
                live_samples: site.live_samples,
            }
            .write(recording, &self.peak_live_site)?;
        }
        Ok(())
    }

    /// The `n` sites of the most live bytes that hold a live sample (whose
    /// stack and class name them), most first, then the rest if it holds
    /// one.
    fn largest(&self, sites: &Sites, n: usize) -> Vec<(Group, Estimate)> {
        let mut groups: Vec<(Group, Estimate)> = self
            .watch
            .groups()
            .filter(|(group, live)| {
                live.samples() > 0 && (*group == Group::Rest || sites.one(*group).is_some())
            })
            .collect();
        groups.sort_by(|a, b| b.1.bytes().total_cmp(&a.1.bytes()));
        let rest = groups.iter().position(|(group, _)| *group == Group::Rest);
        let rest = rest.map(|at| groups.remove(at));
        groups.truncate(n);
        groups.extend(rest);
        groups
    }

    /// `heapsampler.WatchedSite`s: the sites of the most live bytes, up to
    /// [`WATCHED_SITES`] with the rest, and how each grew lately (over up
    /// to [`TREND_HORIZON`]).
    fn write_watched_sites<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        sites: &Sites,
        now: Ticks,
        gc_id: i32,
    ) -> Result<(), jfr_writer::Error> {
        for (group, live) in self.largest(sites, WATCHED_SITES) {
            let site = SiteFields::of(sites, group, &live);
            let trend = self.watch.trend(group, TREND_HORIZON);
            let growth = trend.map_or([f64::NAN; 3], |t| {
                [t.growth.estimate, t.growth.low, t.growth.high]
            });
            WatchedSite {
                start_time: now,
                stack_trace: site.stack_trace,
                gc_id,
                object_class: site.object_class,
                other_sites: site.other_sites,
                live_bytes: site.live[0],
                live_bytes_low: site.live[1],
                live_bytes_high: site.live[2],
                live_samples: site.live_samples,
                growth_rate: growth[0],
                growth_rate_low: growth[1],
                growth_rate_high: growth[2],
                window: trend.map_or(NO_TIMESPAN, |t| {
                    ((t.window_end - t.window_start) * 1e9) as i64
                }),
            }
            .write(recording, &self.watched_site)?;
        }
        Ok(())
    }

    /// What was raised since the last call.
    pub(super) fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// The sites followed on their own now.
    pub(super) fn sites(&self) -> usize {
        self.watch.sites()
    }
}

/// The bytes of liveness a tracked sample stands for: its weight over the
/// probability it was tracked with.
fn liveness_weight(object: &TrackedObject<Tracked>) -> f64 {
    object.weight as f64 / object.handle.probability
}

fn saturate(bytes: u64) -> i64 {
    bytes.min(i64::MAX as u64) as i64
}

/// A group's fields as the site events (`heapsampler.PeakLiveSite`,
/// `heapsampler.WatchedSite`) write them: its stack and class (none for
/// the rest) and its live bytes with their interval.
struct SiteFields {
    stack_trace: StackTraceField,
    object_class: Option<ClassRef>,
    other_sites: bool,
    /// The estimate, the interval's low end and its high end.
    live: [i64; 3],
    live_samples: i64,
}

impl SiteFields {
    fn of(sites: &Sites, group: Group, live: &Estimate) -> Self {
        let one = sites.one(group);
        let interval = live.bytes_interval();
        Self {
            stack_trace: one.map_or(StackTraceField::from(None), |t| t.stack.into()),
            object_class: one.map(|t| t.class.class),
            other_sites: group == Group::Rest,
            live: [interval.estimate, interval.low, interval.high].map(|b| b as i64),
            live_samples: live.samples() as i64,
        }
    }
}

/// The tracked samples by site: one of each site's (whose stack and class
/// name it), and how many each has that entered.
struct Sites<'t> {
    by_site: FxHashMap<u64, (&'t Tracked, u64)>,
}

impl<'t> Sites<'t> {
    fn of(table: &'t LivenessTable<Tracked>) -> Self {
        let mut by_site: FxHashMap<u64, (&Tracked, u64)> = FxHashMap::default();
        for object in table.iter().filter(|object| object.handle.entered) {
            by_site
                .entry(object.handle.site)
                .or_insert((&object.handle, 0))
                .1 += 1;
        }
        Self { by_site }
    }

    /// A tracked sample of the group's (none for the rest).
    fn one(&self, group: Group) -> Option<&'t Tracked> {
        match group {
            Group::Site(site) => self.by_site.get(&site).map(|(one, _)| *one),
            Group::Rest => None,
        }
    }

    /// The group's samples that entered and are live (the rest's: not
    /// counted, 0).
    fn samples(&self, group: Group) -> u64 {
        match group {
            Group::Site(site) => self.by_site.get(&site).map_or(0, |(_, n)| *n),
            Group::Rest => 0,
        }
    }
}
