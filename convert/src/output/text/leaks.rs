//! `heapsampler leaks`' answer in words, and the sentences the report
//! shows of it: the verdict, how it was reached, the suspects, the peak,
//! the live set against the heap, and why a recording cannot say; with
//! the times and growths as people read them ([`clock`], [`per_minute`]).

use std::fmt::Write as _;

use heapsampler_core::estimate::Interval;
use heapsampler_core::growth::{GrowthTest, NoVerdict};

use crate::analysis::leaks::{Leaks, MAX_CHECKPOINTS, Unanswered};
use crate::analysis::top::GroupBy;
use crate::model::watch::Site;
use crate::output::human::{describe, human_bytes, human_interval};

/// The verdict in one line: `2 suspects, growing +26.8 MB/min together
/// (+24.1 MB to +29.5 MB/min)`, `no site's live bytes grow`, or why the
/// recording cannot say.
pub fn verdict(leaks: &Leaks) -> String {
    let what = noun(leaks.by).0;
    match leaks.unanswered() {
        Some(Unanswered::NoLiveness) => {
            return "cannot say what leaks: the recording has no liveness events \
             (heapsampler.ObjectLifetime); record with heapsampler's agent, \
             liveness on (the default)"
                .to_owned();
        }
        Some(Unanswered::TooFewCollections(reason)) => {
            return format!(
                "cannot say what leaks: {}",
                too_few_collections(leaks, &reason)
            );
        }
        None => {}
    }
    match leaks.suspects.len() {
        0 => format!("no {what}'s live bytes grow"),
        n => {
            let together = leaks.suspects_growth();
            format!(
                "{n} suspect{}, growing {}{} ({})",
                if n == 1 { "" } else { "s" },
                per_minute(together.estimate),
                if n == 1 { "" } else { " together" },
                per_minute_interval(&together)
            )
        }
    }
}

/// How the verdict was reached, in a sentence: `from the live bytes of
/// 12 sites after each of 77 collections, fitted from 0:11 to 0:40
/// after a warm-up; the whole live set grows +51.6 MB/min (...)`.
/// `None` when the recording cannot say.
pub fn basis(leaks: &Leaks) -> Option<String> {
    if leaks.unanswered().is_some() {
        return None;
    }
    let growth = leaks.live_set_growth.as_ref().ok()?;
    let seconds = leaks.seconds();
    let window = &growth.window;
    Some(format!(
        "from the live bytes of {} {} after each of {} {}s, fitted from {} to {} \
         after a warm-up; the whole live set {} {} ({})",
        leaks.groups,
        noun(leaks.by).1,
        leaks.checkpoints.len(),
        collection_noun(leaks),
        clock(seconds[window.start]),
        clock(seconds[window.end - 1]),
        if growth.is_suspect() {
            "grows"
        } else {
            "changes by"
        },
        per_minute(growth.bytes_per_second),
        per_minute_interval(&growth.interval)
    ))
}

/// The verdict, the suspects (at most `limit`), the peak and the
/// comparison with the heap, as text for a terminal; and what the agent's
/// watch raised and saw while the program ran, even when the recording
/// cannot say what leaks.
pub fn render(leaks: &Leaks, limit: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", verdict(leaks));
    if leaks.unanswered().is_some() {
        render_watch(leaks, limit, &mut out);
        return out;
    }
    let seconds = leaks.seconds();
    if let Some(basis) = basis(leaks) {
        let _ = writeln!(out, "{basis}");
    }
    if !leaks.suspects.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "suspects, fastest growth first:");
        // The agent's first raise, when the recording has its watch's
        // suspects.
        let watched = !leaks.timeline.watch.raised.is_empty();
        let raised = |cell: String| {
            if watched {
                format!("{cell:>7}  ")
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            out,
            "{:>4}  {:>13}  {:>25}  {:>11}  {:>17}  {:>7}  {:>5}  {}where",
            "#",
            "growth",
            "95% interval",
            "live at end",
            "95% interval",
            "age",
            "GCs",
            raised("raised".to_owned())
        );
        for (rank, suspect) in leaks.suspects.iter().take(limit).enumerate() {
            let end = suspect.live_at_end();
            let _ = writeln!(
                out,
                "{:>4}  {:>13}  {:>25}  {:>11}  {:>17}  {:>7}  {:>5}  {}{}",
                rank + 1,
                per_minute(suspect.growth.bytes_per_second),
                per_minute_interval(&suspect.growth.interval),
                human_bytes(end.bytes()),
                human_interval(&end.bytes_interval(), human_bytes),
                suspect.median_age_seconds.map_or("-".to_owned(), clock),
                suspect
                    .median_collections
                    .map_or("-".to_owned(), |n| n.to_string()),
                raised(
                    suspect
                        .first_raised_nanos
                        .map_or("-".to_owned(), |n| clock(leaks.timeline.seconds(n)))
                ),
                suspect.key
            );
            if !suspect.classes.is_empty() && leaks.by != GroupBy::Class {
                let classes: Vec<String> = suspect
                    .classes
                    .iter()
                    .map(|(class, e)| format!("{class} {}", human_bytes(e.bytes())))
                    .collect();
                let _ = writeln!(out, "{:>6}keeps {}", "", classes.join(", "));
            }
            if let Some(held) = &suspect.held_by {
                let _ = writeln!(
                    out,
                    "{:>6}held by {}  ({} of {} old objects with a path)",
                    "", held.path, held.objects, held.of
                );
            }
        }
        if leaks.suspects.len() > limit {
            let _ = writeln!(out, "and {} more", leaks.suspects.len() - limit);
        }
        let _ = writeln!(
            out,
            "age, GCs: the median age of the objects live at the end, and the {}s they \
             outlived",
            collection_noun(leaks)
        );
        if watched {
            let _ = writeln!(out, "raised: {FIRST_RAISED}; - when it did not");
        }
        if !leaks.paths_to_roots {
            let _ = writeln!(
                out,
                "no paths to GC roots recorded: record with --roots to see what holds them"
            );
        }
    }
    if !leaks.freed.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "grew, but what they held in the first half is gone at the end (old garbage \
             not yet collected, or a cache turning over; not a leak):"
        );
        for (key, growth) in leaks.freed.iter().take(limit) {
            let _ = writeln!(
                out,
                "{:>4}  {:>13}  {}",
                "",
                per_minute(growth.bytes_per_second),
                key
            );
        }
    }
    render_watch(leaks, limit, &mut out);
    if let Some(peak) = &leaks.peak {
        let _ = writeln!(out);
        let heap = peak.heap_used.map_or(String::new(), |used| {
            format!(", heap {} in use", human_bytes(used as f64))
        });
        let _ = writeln!(
            out,
            "peak: after {} {} at {}{heap}; live then, estimated {} ({}):",
            collection_noun(leaks),
            leaks.checkpoints[peak.checkpoint].gc_id,
            clock(seconds[peak.checkpoint]),
            human_bytes(peak.total.bytes()),
            human_interval(&peak.total.bytes_interval(), human_bytes),
        );
        for (rank, (key, live)) in peak.groups.iter().take(limit).enumerate() {
            let _ = writeln!(
                out,
                "{:>4}  {:>9}  {:>17}  {}",
                rank + 1,
                human_bytes(live.bytes()),
                human_interval(&live.bytes_interval(), human_bytes),
                key
            );
        }
    }
    if let Some(line) = against_the_heap(leaks) {
        let _ = writeln!(out);
        let _ = writeln!(out, "{line}");
    }
    if leaks.untracked.samples() > 0 {
        let _ = writeln!(
            out,
            "not followed: {} of objects at or above the agent's live_max size \
             (by default G1's humongous objects), whose lifetime is unknown",
            describe(&leaks.untracked)
        );
    }
    if let Some(line) = live_meaning(leaks) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// What "first raised" means, in a clause.
pub const FIRST_RAISED: &str = "when the agent, following the live bytes while the program ran, \
     first raised a site of the group as a leak suspect (heapsampler.LeakSuspect)";

/// The agent's watch, for a terminal: the suspects it raised that are not
/// among `leaks`' (all of them when the recording cannot say what leaks),
/// and its last heap peak with the live set by site then (at most `limit`
/// of each).
fn render_watch(leaks: &Leaks, limit: usize, out: &mut String) {
    let watch = &leaks.timeline.watch;
    if !leaks.raised_elsewhere.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "raised by the agent while the program ran{}, with the growth and live bytes it \
             wrote last:",
            if leaks.suspects.is_empty() {
                ""
            } else {
                ", not among the suspects above"
            }
        );
        let _ = writeln!(
            out,
            "{:>7}  {:>13}  {:>25}  {:>11}  {:>17}  where",
            "raised", "growth", "95% interval", "live bytes", "95% interval"
        );
        for raised in leaks.raised_elsewhere.iter().take(limit) {
            let latest = &raised.latest;
            let _ = writeln!(
                out,
                "{:>7}  {:>13}  {:>25}  {:>11}  {:>17}  {}",
                clock(leaks.timeline.seconds(raised.first_nanos)),
                per_minute(latest.growth.estimate),
                per_minute_interval(&latest.growth),
                human_bytes(latest.live.estimate),
                human_interval(&latest.live, human_bytes),
                site_text(&raised.site)
            );
        }
        if leaks.raised_elsewhere.len() > limit {
            let _ = writeln!(out, "and {} more", leaks.raised_elsewhere.len() - limit);
        }
    }
    if let Some((peak, sites)) = watch.last_peak() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "heap peaks the agent wrote: {}; the last, after collection {} at {}: {} in use of \
             {} ({:.0}%, past {:.0}%){}",
            watch.peaks.len(),
            peak.gc_id,
            clock(leaks.timeline.seconds(peak.nanos)),
            human_bytes(peak.heap_used as f64),
            human_bytes(peak.heap_max as f64),
            100.0 * peak.share,
            100.0 * peak.threshold,
            if sites.is_empty() {
                ""
            } else {
                "; live then, by site:"
            }
        );
        for (rank, site) in sites.iter().take(limit).enumerate() {
            let _ = writeln!(
                out,
                "{:>4}  {:>9}  {:>17}  {}",
                rank + 1,
                human_bytes(site.live.estimate),
                human_interval(&site.live, human_bytes),
                site_text(&site.site)
            );
        }
    }
}

/// A site of the agent's watch in a line: its top frames, and its class;
/// or the other sites.
pub fn site_text(site: &Site) -> String {
    let mut text = site_frames(site);
    if !site.class.is_empty() {
        text.push_str(&format!("  ({})", site.class));
    }
    text
}

/// A site of the agent's watch without its class: its top frames, caller
/// after callee (`Other.grow(12) < Other.run(30) < ...`), or the other
/// sites.
pub fn site_frames(site: &Site) -> String {
    if site.other_sites {
        return "the other sites (beyond those the agent follows one by one)".to_owned();
    }
    let frames: Vec<&str> = site.top_frames(SITE_FRAMES).collect();
    let mut text = if frames.is_empty() {
        GroupBy::Site.missing().to_owned()
    } else {
        frames.join(" < ")
    };
    if site.top_frames(usize::MAX).count() > frames.len() {
        text.push_str(" < ...");
    }
    text
}

/// How many frames of a site of the agent's watch are shown.
const SITE_FRAMES: usize = 3;

/// The estimated live set after the last checkpoint set against the
/// heap the JVM had in use then, in a sentence; `None` without a heap
/// summary near it.
pub fn against_the_heap(leaks: &Leaks) -> Option<String> {
    let last = leaks.checkpoints.len().checked_sub(1)?;
    let used = leaks.heap_after(last)? as f64;
    let live = leaks.live_set[last];
    Some(format!(
        "after the last {} the sampled objects estimate a live set of {} ({}), \
         {:.0}% of the {} the heap had in use{}",
        collection_noun(leaks),
        human_bytes(live.bytes()),
        human_interval(&live.bytes_interval(), human_bytes),
        100.0 * live.bytes() / used.max(1.0),
        human_bytes(used),
        if live.bytes_interval().high < used {
            ": the rest is what the agent did not follow (objects allocated before it \
             started, objects at or above live_max, the JVM's own) and the collector's slack"
        } else {
            ""
        }
    ))
}

/// What the live bytes are, where that is not plain: on generational
/// ZGC as of each major collection, and the share of samples whose
/// liveness was tracked when not all were drawn. `None` otherwise.
pub fn live_meaning(leaks: &Leaks) -> Option<String> {
    let share = leaks.tracking.clause();
    if leaks.timeline.ending.generational_zgc.is_some() {
        let mut line = "live: as of each major collection (generational ZGC, whose young \
                        collections keep what the agent tracks)"
            .to_owned();
        if let Some(share) = share {
            line.push_str(&format!("; {share}"));
        }
        Some(line)
    } else if leaks.tracking.is_thinned() {
        share.map(|share| format!("{share}, each tracked one standing for those not drawn"))
    } else {
        None
    }
}

/// Why the collections give no verdict (`reason`), with their counts,
/// and what to do, as a clause (`leaks`' verdict and the report's list
/// of what is lacking say it): `3 collections, and a verdict needs at
/// least 5 (...); record longer, ...`.
pub fn too_few_collections(leaks: &Leaks, reason: &NoVerdict) -> String {
    followed_too_few(
        reason,
        leaks.checkpoints.len(),
        leaks.timeline.followed().len(),
        collection_noun(leaks),
    )
}

/// What a checkpoint is: `collection`, or on generational ZGC `major
/// collection`.
fn collection_noun(leaks: &Leaks) -> &'static str {
    if leaks.timeline.ending.generational_zgc.is_some() {
        "major collection"
    } else {
        "collection"
    }
}

/// What a group is, one and several: `("site", "sites")`, as `--by`
/// names it (an app-site is a site).
fn noun(by: GroupBy) -> (&'static str, String) {
    let one = match by {
        GroupBy::AppSite => GroupBy::Site.name(),
        _ => by.name(),
    };
    let several = if one.ends_with('s') {
        format!("{one}es")
    } else {
        format!("{one}s")
    };
    (one, several)
}

/// Why the collections give no verdict, with their counts, and what to do,
/// as a clause: `3 collections, and a verdict needs at least 5 (...);
/// record longer, ...`. The reason's counts are of the `followed`
/// collections (the checkpoints), which are all the recording's
/// `collections` unless there are more than [`MAX_CHECKPOINTS`]; a
/// collection is `what` (`collection`, `major collection`).
fn followed_too_few(reason: &NoVerdict, followed: usize, collections: usize, what: &str) -> String {
    let said = no_verdict(reason, what);
    if followed < collections {
        format!(
            "of the {collections} {what}s {followed} are followed (the last in each of \
             {MAX_CHECKPOINTS} equal slices of the time): {said}"
        )
    } else {
        said
    }
}

/// [`followed_too_few`]' reason, in the counts of the collections
/// followed, each a `what`.
fn no_verdict(reason: &NoVerdict, what: &str) -> String {
    let warm_up = format!("the first quarter of the time from the first {what} to the last");
    const SMALLER_HEAP: &str = "a smaller heap (-Xmx, -Xmn), so that the JVM collects more often";
    let needs = GrowthTest::MIN_BLOCKS;
    match *reason {
        NoVerdict::TooFewCheckpoints { checkpoints } => format!(
            "{checkpoints} {what}{}, and a verdict needs at least {} ({needs} after a \
             warm-up, {warm_up}); record longer, or with {SMALLER_HEAP}",
            if checkpoints == 1 { "" } else { "s" },
            GrowthTest::MIN_CHECKPOINTS,
        ),
        NoVerdict::TooFewAfterWarmUp {
            checkpoints,
            after_warm_up,
            warm_up_end,
        } => format!(
            "{after_warm_up} of the {checkpoints} {what}s came after the warm-up ({warm_up}, \
             to {}), and a verdict needs {needs} there; record longer, past the start-up, or \
             with {SMALLER_HEAP}",
            clock(warm_up_end)
        ),
        NoVerdict::Bunched {
            after_warm_up,
            blocks,
            from,
            to,
        } => format!(
            "the {after_warm_up} {what}s after the warm-up fall in {blocks} of the {} equal \
             slices of the time from its end to the last {what} ({} to {}), and a verdict \
             needs {needs} slices with one: bunched, they do not follow the live bytes over \
             time; record longer, or with {SMALLER_HEAP} and steadily",
            GrowthTest::BLOCKS,
            clock(from),
            clock(to)
        ),
    }
}

/// Seconds as a clock: `0:45`, `12:03`, `1:02:03`.
pub fn clock(seconds: f64) -> String {
    let whole = seconds.max(0.0).round() as u64;
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// A growth in bytes per second as people read it, per minute and signed:
/// `+12.0 MB/min`, `-300 kB/min`.
pub fn per_minute(bytes_per_second: f64) -> String {
    let amount = human_bytes(bytes_per_second.abs() * 60.0);
    // A change that rounds to nothing has no sign: `+0 B/min`, not `-0 B/min`.
    let sign = if bytes_per_second < 0.0 && amount != "0 B" {
        "-"
    } else {
        "+"
    };
    format!("{sign}{amount}/min")
}

/// A growth's 95% interval per minute, from one in bytes per second:
/// `+10.9 MB to +13.1 MB/min`.
pub fn per_minute_interval(interval: &Interval) -> String {
    format!(
        "{} to {}",
        per_minute(interval.low).trim_end_matches("/min"),
        per_minute(interval.high)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growth_that_rounds_to_nothing_has_no_minus_sign() {
        assert_eq!(per_minute(-1e-9), "+0 B/min");
        assert_eq!(per_minute(-0.1), "-6 B/min");
        assert_eq!(per_minute(500_000.0), "+30.0 MB/min");
    }
    use crate::analysis::leaks::Timeline;
    use crate::analysis::leaks::tests::collections;

    /// A thousand collections in the first second, then one at 100 s: of
    /// the checkpoints kept (the last in each 400th of the time, five), one
    /// follows the warm-up, and the refusal says both counts.
    #[test]
    fn a_refusal_says_how_many_collections_were_followed() {
        let mut ends: Vec<i64> = (0..1000).map(|i| i * 1_000_000).collect();
        ends.push(100_000_000_000);
        let timeline = Timeline {
            collections: collections(&ends),
            ..Timeline::default()
        };
        let kept = timeline.checkpoints();
        let seconds: Vec<f64> = kept.iter().map(|c| c.end_nanos as f64 / 1e9).collect();
        let reason = GrowthTest::new(&seconds).unwrap_err();
        assert!(
            matches!(
                reason,
                NoVerdict::TooFewAfterWarmUp {
                    checkpoints: 5,
                    after_warm_up: 1,
                    ..
                }
            ),
            "{reason:?}"
        );
        assert_eq!(
            followed_too_few(&reason, kept.len(), ends.len(), "collection"),
            "of the 1001 collections 5 are followed (the last in each of 400 equal slices of \
             the time): 1 of the 5 collections came after the warm-up (the first quarter of \
             the time from the first collection to the last, to 0:25), and a verdict needs 4 \
             there; record longer, past the start-up, or with a smaller heap (-Xmx, -Xmn), so \
             that the JVM collects more often"
        );
        assert!(
            followed_too_few(&reason, 5, 5, "collection")
                .starts_with("1 of the 5 collections came after")
        );
    }
}
