//! The report page (`output::report`) from hand-made data: a recording
//! with two suspects over 40 collections, five threads and two flame
//! graphs, and a JDK recording without liveness. Each page is written to a
//! file and opened in headless Chromium: no script error in the page or in
//! its flame graphs' frames (whose zoom and hover are tried), the verdict,
//! the suspects and every chart series in the DOM with the figures given,
//! nothing fetched from anywhere, the flame graphs' subtitles whole at
//! widths from 800 pixels up; and a full-page screenshot 1280 pixels wide,
//! kept beside the page for a person to look at.

use heapsampler_test_support as support;

use std::path::PathBuf;

use heapsampler_test_support::browser::{
    assert_self_contained, checked_in_browser, chromium, dumped_check, screenshot,
};

use heapsampler_cli::analysis::fold::{FoldedStacks, Totals};
use heapsampler_cli::output::flame::{self, Weight};
use heapsampler_cli::output::report::{
    Flame, HeapChart, Page, PeakRow, PeakSection, Series, Severity, SiteRow, SuspectRow, ThreadRow,
    Verdict, write_page,
};
use heapsampler_core::estimate::Interval;

/// `estimate` with a 95% interval `share` of it either side.
fn around(estimate: f64, share: f64) -> Interval {
    Interval {
        estimate,
        low: estimate * (1.0 - share),
        high: estimate * (1.0 + share),
    }
}

const CACHE_SITE: &str = "com.example.cache.SessionCache.put(SessionCache.java:88)";
// A constructor: its name is escaped in the HTML and in the chart.
const LISTENER_SITE: &str = "com.example.events.Bus.<init>(Bus.java:41)";

/// A flame graph as `heapsampler report` draws one, of a few stacks: its
/// subtitle left to the page.
fn flame_svg(title: &str, stacks: &[(&str, i64)]) -> String {
    let mut folded = FoldedStacks::new();
    for &(line, bytes) in stacks {
        folded.add(
            line,
            Totals {
                value: bytes,
                events: (bytes / 524_288).max(1) as u64,
            },
        );
    }
    flame::render(&folded, Weight::Bytes, title, None).unwrap()
}

/// 40 collections 15 s apart from 10 s on; the cache grows 20 MB/min and
/// the listeners 6.8 MB/min over 180 MB that stays; the 18th collection
/// has no heap summary.
fn leaking_page() -> Page {
    let times: Vec<f64> = (0..40).map(|n| 10.0 + 15.0 * n as f64).collect();
    let cache: Vec<Interval> = times
        .iter()
        .map(|t| around(20e6 * t / 60.0, 0.06))
        .collect();
    let listeners: Vec<Interval> = times
        .iter()
        .map(|t| around(6.8e6 * t / 60.0, 0.12))
        .collect();
    let heap_after = times
        .iter()
        .enumerate()
        .map(|(n, t)| (n != 17).then(|| 180e6 + 26.8e6 * t / 60.0 + 9e6 * (n as f64 * 0.7).sin()))
        .collect();
    let threads = [
        ("main", 1.2e9, Some(1.19e9)),
        ("worker-1", 6.1e9, Some(6.05e9)),
        ("worker-2", 5.9e9, Some(6.0e9)),
        ("worker-3", 5.3e9, Some(5.9e9)),
        ("Signal Dispatcher", 2e6, None),
    ];
    let app = "com.example.Main.main;com.example.Server.handle";
    Page {
        title: "service.jfr".into(),
        verdict: Verdict {
            headline: "The live set grows 26.8 MB/min; 2 suspects".into(),
            details: vec![
                "The suspects' live bytes grow collection after collection after the warm-up.".into(),
            ],
            severity: Severity::Suspects,
        },
        recording: vec![
            ("JVM".into(), "OpenJDK 64-Bit Server VM 17.0.12, G1".into()),
            ("Sampling interval".into(), "512 kB".into()),
            ("Length".into(), "10 min 5 s".into()),
            ("Samples".into(), "35,121".into()),
            ("Lost".into(), "none".into()),
        ],
        lacking: vec![],
        heap: Some(HeapChart {
            times,
            heap_after,
            series: vec![
                Series {
                    name: CACHE_SITE.into(),
                    values: cache,
                },
                Series {
                    name: LISTENER_SITE.into(),
                    values: listeners,
                },
            ],
        }),
        suspects: vec![
            SuspectRow {
                rank: 1,
                site: CACHE_SITE.into(),
                growth_per_minute: Interval {
                    estimate: 20e6,
                    low: 18.7e6,
                    high: 21.4e6,
                },
                live_at_end: around(198.3e6, 0.06),
                classes: vec![("byte[]".into(), 150e6), ("java.util.HashMap$Node".into(), 48e6)],
                median_age_seconds: Some(301.0),
                median_gcs_survived: Some(20.0),
                root_paths: vec![
                    "com.example.cache.SessionCache.sessions < java.util.HashMap.table < Thread main"
                        .into(),
                ],
                first_raised_seconds: None,
            },
            SuspectRow {
                rank: 2,
                site: LISTENER_SITE.into(),
                growth_per_minute: Interval {
                    estimate: 6.8e6,
                    low: 5.9e6,
                    high: 7.7e6,
                },
                live_at_end: around(67.4e6, 0.12),
                classes: vec![("com.example.events.Listener".into(), 67.4e6)],
                median_age_seconds: Some(290.0),
                median_gcs_survived: Some(19.0),
                root_paths: vec![],
                first_raised_seconds: None,
            },
        ],
        suspects_notes: vec![
            "A suspect's growth is above zero at 95% after the first 2 minutes.".into(),
        ],
        peak: Some(PeakSection {
            at_seconds: 580.0,
            heap_after: Some(449.5e6),
            rows: vec![
                PeakRow {
                    site: CACHE_SITE.into(),
                    live: around(193.3e6, 0.06),
                },
                PeakRow {
                    site: LISTENER_SITE.into(),
                    live: around(65.7e6, 0.12),
                },
            ],
        }),
        watch: None,
        flames: vec![
            Flame {
                heading: "Allocated bytes".into(),
                subtitle: "18.1 GB allocated (estimated from 34,567 samples of \
                           jdk.ObjectAllocationSample); warm: application code, blue: the \
                           JDK's, green: the class allocated"
                    .into(),
                svg: flame_svg(
                    "Allocated bytes by stack: service.jfr",
                    &[
                        (&format!("{app};com.example.cache.SessionCache.put;byte[]_[k]"), 9_000_000_000),
                        (&format!("{app};com.example.json.Parser.parse;char[]_[k]"), 7_500_000_000),
                        (&format!("{app};com.example.events.Bus.subscribe;com.example.events.Listener_[k]"), 1_600_000_000),
                    ],
                ),
            },
            Flame {
                heading: "Live bytes at the end".into(),
                subtitle: "265.7 MB still live at the end (reachable) (estimated from 507 \
                           samples of heapsampler.ObjectLifetime); warm: application code, \
                           blue: the JDK's, green: the class allocated"
                    .into(),
                svg: flame_svg(
                    "Live bytes by stack: service.jfr",
                    &[
                        (&format!("{app};com.example.cache.SessionCache.put;byte[]_[k]"), 198_300_000),
                        (&format!("{app};com.example.events.Bus.subscribe;com.example.events.Listener_[k]"), 67_400_000),
                    ],
                ),
            },
        ],
        top_sites: vec![
            SiteRow {
                site: CACHE_SITE.into(),
                allocated: around(9.0e9, 0.02),
                samples: 17_166,
            },
            SiteRow {
                site: "com.example.json.Parser.parse(Parser.java:120)".into(),
                allocated: around(7.5e9, 0.02),
                samples: 14_305,
            },
        ],
        threads: threads
            .iter()
            .map(|&(thread, estimated, jvm_counted)| ThreadRow {
                thread: thread.into(),
                estimated: around(estimated, 0.02),
                jvm_counted,
            })
            .collect(),
        threads_total: Some(ThreadRow {
            thread: "all threads".into(),
            estimated: around(18.502e9, 0.02),
            jvm_counted: Some(19.14e9),
        }),
        notes: vec!["Sites are the allocating frame of the application.".into()],
    }
}

/// A recording by the JDK's own recorder: allocation samples, no
/// liveness, no collections' summaries asked for.
fn jdk_page() -> Page {
    Page {
        title: "jdk-profile.jfr".into(),
        verdict: Verdict {
            headline: "Cannot tell what grows: this recording has no liveness".into(),
            details: vec![],
            severity: Severity::Unknown,
        },
        recording: vec![("JVM".into(), "OpenJDK 64-Bit Server VM 17.0.12".into())],
        lacking: vec![
            "It was made by the JDK's recorder, which does not say which sampled objects \
             stayed live: no live bytes per site, no suspects, no peak."
                .into(),
        ],
        flames: vec![Flame {
            heading: "Allocated bytes".into(),
            subtitle: "3.0 MB allocated (estimated from 6 samples of \
                       jdk.ObjectAllocationSample); warm: application code, blue: the JDK's, \
                       green: the class allocated"
                .into(),
            svg: flame_svg(
                "Allocated bytes by stack: jdk-profile.jfr",
                &[("app.Main.main;app.Work.run;int[]_[k]", 3_000_000)],
            ),
        }],
        ..Page::default()
    }
}

/// The page written into a fresh folder for `test`.
fn written(test: &str, page: &Page) -> PathBuf {
    let path = support::temp_dir(test).join("report.html");
    let mut file = std::fs::File::create(&path).unwrap();
    write_page(page, &mut file).unwrap();
    path
}

/// Whether a figure read back from the page is `given`: serde_json's
/// parser (without its exact float feature) may put a decimal one unit in
/// the last place off from the double written.
fn same(shown: &serde_json::Value, given: f64) -> bool {
    shown
        .as_f64()
        .is_some_and(|shown| (shown - given).abs() <= given.abs() * 1e-15)
}

/// The browsed flame graphs: each laid out by its own script, without an
/// error, its widest frame labelled, its details shown on hover, and
/// zoomed by a click; each frame as tall as its graph.
fn assert_flames_work(json: &serde_json::Value, count: usize) {
    let flames = json["flames"].as_array().unwrap();
    assert_eq!(flames.len(), count, "{json:#}");
    for flame in flames {
        assert_eq!(flame["errors"], serde_json::json!([]), "{flame:#}");
        assert!(flame["total"].as_u64().unwrap() > 0, "init ran: {flame:#}");
        assert!(flame["frames"].as_u64().unwrap() >= 4, "{flame:#}");
        assert!(!flame["label"].as_str().unwrap().is_empty(), "{flame:#}");
        assert!(
            flame["hovered"].as_str().unwrap().starts_with("Frame: "),
            "{flame:#}"
        );
        assert!(
            flame["zoomed"].as_str().unwrap().starts_with("100.0"),
            "{flame:#}"
        );
        assert_eq!(flame["unzoomShown"], true, "{flame:#}");
        let (frame, svg) = (
            flame["frameHeight"].as_f64().unwrap(),
            flame["svgHeight"].as_f64().unwrap(),
        );
        assert!(
            svg > 100.0 && frame >= svg && frame <= svg + 8.0,
            "{flame:#}"
        );
    }
}

#[test]
fn a_page_with_suspects_shows_them_and_works_offline() {
    let page = leaking_page();
    let html = written("report_page_suspects", &page);
    let text = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&text);
    // One stylesheet, inline.
    assert_eq!(text.matches("<style>").count(), 1);
    let Some(chromium) = chromium("a_page_with_suspects_shows_them_and_works_offline") else {
        return;
    };
    let json = checked_in_browser(&chromium, &html);
    assert_eq!(
        json["errors"],
        serde_json::json!([]),
        "script errors: {json:#}"
    );
    assert_eq!(
        json["resources"],
        serde_json::json!([]),
        "fetched: {json:#}"
    );
    assert_eq!(json["verdict"], page.verdict.headline);
    assert_eq!(json["severity"], "suspects");

    // The suspects, in rank order, with their figures.
    let suspects = json["suspects"].as_array().unwrap();
    assert_eq!(suspects.len(), page.suspects.len());
    for (shown, given) in suspects.iter().zip(&page.suspects) {
        assert_eq!(shown["rank"], given.rank as f64);
        assert_eq!(shown["site"], given.site.as_str());
        for (key, value) in [
            ("growth", given.growth_per_minute.estimate),
            ("growth-low", given.growth_per_minute.low),
            ("growth-high", given.growth_per_minute.high),
            ("live", given.live_at_end.estimate),
            ("live-low", given.live_at_end.low),
            ("live-high", given.live_at_end.high),
        ] {
            assert!(same(&shown[key], value), "{key}: {value} in {shown:#}");
        }
    }
    let first = suspects[0]["text"].as_str().unwrap();
    for words in [
        "20.0 MB/min",
        "18.7-21.4 MB/min",
        "198.3 MB",
        "byte[] 150.0 MB",
        "5 min 1 s",
    ] {
        assert!(first.contains(words), "{words} in {first}");
    }
    assert_eq!(
        suspects[0]["heldBy"],
        format!("held by {}", page.suspects[0].root_paths[0])
    );
    assert_eq!(suspects[1]["heldBy"], "held by no paths to roots");

    // Every point of every series: the heap's and the two suspects'.
    let chart = page.heap.as_ref().unwrap();
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 40);
    for (at, row) in series.iter().enumerate() {
        assert!(same(&row["seconds"], chart.times[at]), "{row:#}");
        let cells = row["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 3, "{row:#}");
        assert_eq!(cells[0]["series"], "heap");
        match chart.heap_after[at] {
            Some(heap) => assert!(same(&cells[0]["bytes"], heap), "{row:#}"),
            None => assert_eq!(cells[0]["bytes"], serde_json::Value::Null, "{row:#}"),
        }
        for (cell, given) in cells[1..].iter().zip(&chart.series) {
            assert_eq!(cell["series"], given.name.as_str());
            let value = &given.values[at];
            assert!(same(&cell["bytes"], value.estimate), "{cell:#}");
            assert!(same(&cell["low"], value.low), "{cell:#}");
            assert!(same(&cell["high"], value.high), "{cell:#}");
        }
    }
    // The chart: one area per series, the heap line broken at the missing
    // summary into two, a point at each of the 39 summaries, legible
    // times and bytes on its axes.
    let drawn = &json["chart"];
    assert_eq!(
        drawn["areas"],
        serde_json::json!([[CACHE_SITE, CACHE_SITE], [LISTENER_SITE, LISTENER_SITE]]),
        "{drawn:#}"
    );
    assert_eq!(drawn["heapLines"], 2, "{drawn:#}");
    assert_eq!(drawn["heapPoints"], 39, "{drawn:#}");
    let labels: Vec<&str> = drawn["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for label in ["0:00", "5:00", "9:00", "100.0 MB", "400.0 MB", "bytes"] {
        assert!(labels.contains(&label), "{label} in {labels:?}");
    }
    assert!(drawn["width"].as_f64().unwrap() >= 900.0, "{drawn:#}");

    // The check against the JVM: worker-3's count lies outside.
    let threads = json["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 6, "5 threads and the total");
    let within: Vec<&str> = threads
        .iter()
        .map(|t| t["cells"][4].as_str().unwrap())
        .collect();
    assert_eq!(within, ["yes", "yes", "yes", "no", "", "no"]);
    assert_eq!(threads[1]["cells"][1], "6.1 GB");
    assert_eq!(threads[1]["cells"][2], "6.0-6.2 GB");
    assert_eq!(threads[1]["cells"][3], "6.0 GB");

    assert_flames_work(&json, 2);
    screenshot(&chromium, &html, json["height"].as_u64().unwrap());
}

#[test]
fn a_jdk_recording_page_says_what_it_lacks() {
    let page = jdk_page();
    let html = written("report_page_jdk", &page);
    let text = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&text);
    assert!(!text.contains("id=\"heap-chart\""), "no chart without data");
    assert!(!text.contains("id=\"peak\""));
    let Some(chromium) = chromium("a_jdk_recording_page_says_what_it_lacks") else {
        return;
    };
    let json = checked_in_browser(&chromium, &html);
    assert_eq!(
        json["errors"],
        serde_json::json!([]),
        "script errors: {json:#}"
    );
    assert_eq!(
        json["resources"],
        serde_json::json!([]),
        "fetched: {json:#}"
    );
    assert_eq!(json["verdict"], page.verdict.headline);
    assert_eq!(json["severity"], "unknown");
    let lacking = json["lacking"].as_str().unwrap();
    assert!(
        lacking.contains("does not say which sampled objects stayed live"),
        "{lacking}"
    );
    assert_eq!(
        json["noSuspects"],
        "Not known: this recording cannot show which sites grow."
    );
    assert_eq!(json["chart"], serde_json::Value::Null);
    assert_eq!(json["series"], serde_json::json!([]));
    assert_flames_work(&json, 1);
    screenshot(&chromium, &html, json["height"].as_u64().unwrap());
}

/// Put last in a page: once it and its frames have loaded, finds every
/// text that holds one of `WANTED` (its whitespace collapsed), in the page
/// and in each flame graph's frame, and writes each one's box and the
/// width of the page or frame that shows it, as URI-encoded JSON.
const SUBTITLE_CHECK: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
    var out = { texts: [], errors: [] };
    try {
        var documents = [["page", document]];
        Array.prototype.forEach.call(document.querySelectorAll("iframe.flame"), function (frame, at) {
            documents.push(["frame " + at, frame.contentDocument]);
        });
        documents.forEach(function (shown) {
            var d = shown[1];
            var walker = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT);
            for (var node = walker.nextNode(); node; node = walker.nextNode()) {
                var text = node.textContent.replace(/\s+/g, " ").trim();
                if (!WANTED.some(function (w) { return text.indexOf(w) >= 0; })) continue;
                var range = d.createRange();
                range.selectNodeContents(node);
                var box = range.getBoundingClientRect();
                out.texts.push({ in: shown[0], text: text, left: box.left, right: box.right,
                    lines: range.getClientRects().length, width: d.documentElement.clientWidth });
            }
        });
    } catch (e) {
        out.errors.push("the check: " + e + " " + e.stack);
    }
    var node = document.createElement("pre");
    node.id = "heapsampler-check";
    node.textContent = encodeURIComponent(JSON.stringify(out));
    document.body.appendChild(node);
}, 200); });
</script>"##;

/// Each flame graph's subtitle, its figure first, is shown whole at every
/// window width from 800 pixels up: every text holding it lies within the
/// width of the page or frame that shows it, wrapped where it does not fit
/// on one line (inferno's subtitle, one line of SVG text centred in a graph
/// narrower than it, lost both ends, the figure with the left one).
#[test]
fn the_flame_graphs_subtitles_fit_or_wrap_at_any_width_from_800_pixels() {
    let page = leaking_page();
    let html = written("report_page_subtitles", &page);
    let Some(chromium) =
        chromium("the_flame_graphs_subtitles_fit_or_wrap_at_any_width_from_800_pixels")
    else {
        return;
    };
    let subtitles: Vec<&str> = page.flames.iter().map(|f| f.subtitle.as_str()).collect();
    let text = std::fs::read_to_string(&html).unwrap();
    let body_end = text.rfind("</body>").expect("a body");
    let script = SUBTITLE_CHECK.replace("WANTED", &serde_json::to_string(&subtitles).unwrap());
    let checked = html.with_extension("subtitles.html");
    std::fs::write(
        &checked,
        [&text[..body_end], &script, &text[body_end..]].concat(),
    )
    .unwrap();
    let mut wrapped = false;
    for width in [800, 1024, 1280, 1600] {
        let json = dumped_check(&chromium, &checked, &format!("{width},900"));
        assert_eq!(json["errors"], serde_json::json!([]), "{json:#}");
        let texts = json["texts"].as_array().unwrap();
        for subtitle in &subtitles {
            assert!(
                texts.iter().any(|t| t["text"] == *subtitle),
                "{subtitle:?} not shown at {width} pixels: {json:#}"
            );
        }
        for shown in texts {
            let (left, right, room) = (
                shown["left"].as_f64().unwrap(),
                shown["right"].as_f64().unwrap(),
                shown["width"].as_f64().unwrap(),
            );
            assert!(
                left >= 0.0 && right <= room,
                "at {width} pixels, cut (from {left} to {right} of 0 to {room}): {shown:#}"
            );
            wrapped |= shown["lines"].as_u64().unwrap() > 1;
        }
    }
    // Both are longer than the page is wide at 800 pixels.
    assert!(wrapped, "no subtitle wrapped");
}
