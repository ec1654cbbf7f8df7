//! `heapsampler flame`: exact titles, widths and colours on a recording
//! written with known events (bytes, samples, live objects, filters, the
//! [truncated] frame), the errors, and real recordings (the agent's and the
//! JDK's) drawn in headless Chromium: the page's own script runs without
//! an error, the frames add up to the folded stacks, hovering shows a
//! frame's details, a click zooms, and its search finds a known method.

use heapsampler_test_support as support;

use std::path::{Path, PathBuf};

use heapsampler_cli::model::text::java_class_name;
use heapsampler_cli::output::human::human_bytes;
use heapsampler_test_support::browser::{self, chromium};
use heapsampler_test_support::{heapsampler, heapsampler_ok};
use jfr_writer::events::{self, ObjectAllocationSample, ObjectLifetime};
use jfr_writer::{FrameType, MethodRef, Options, Recording, StackFrame, StackTrace, Thread, Ticks};

/// One frame of a drawn graph, as the SVG has it.
#[derive(Debug, Clone, PartialEq)]
struct Frame {
    title: String,
    fill: String,
    y: u64,
    x: u64,
    width: u64,
}

impl Frame {
    /// The frame's name: its title before the details.
    fn name(&self) -> &str {
        &self.title[..self.title.rfind(" (").unwrap()]
    }
}

/// The frames of an SVG as inferno writes them (`<title>` then `<rect>`).
fn frames(svg: &str) -> Vec<Frame> {
    let frames = &svg[svg.find("<svg id=\"frames\"").expect("a frames element")..];
    frames
        .split("<title>")
        .skip(1)
        .map(|frame| {
            let (title, rest) = frame.split_once("</title>").unwrap();
            let rect = &rest[..rest.find("/>").unwrap()];
            let attribute = |name: &str| {
                let key = format!(" {name}=\"");
                let at = rect.find(&key).unwrap() + key.len();
                rect[at..].split('"').next().unwrap().to_owned()
            };
            Frame {
                title: title.replace("&apos;", "'").replace("&amp;", "&"),
                fill: attribute("fill"),
                y: attribute("y").parse().unwrap(),
                x: attribute("fg:x").parse().unwrap(),
                width: attribute("fg:w").parse().unwrap(),
            }
        })
        .collect()
}

/// The frames on the root, by name: (title, width).
fn root_children(frames: &[Frame]) -> Vec<(String, u64)> {
    let root = frames.iter().find(|f| f.name() == "all").expect("a root");
    let mut children: Vec<(String, u64)> = frames
        .iter()
        .filter(|f| f.y + 16 == root.y)
        .map(|f| (f.title.clone(), f.width))
        .collect();
    children.sort();
    children
}

/// A recording of known samples and lifetimes. Stacks, top first: 0 =
/// Cache.fill < Main.main; 1 = Arrays.copyOf < Parser.token < Main.main,
/// cut by the recorder (truncated). Samples: stack 0 on worker-0 (1000 and
/// 3000 bytes), stack 1 on worker-1 (500). Lifetimes: stack 0's 1000 still
/// live after 3 collections, its 3000 freed; stack 1's 500 live after none,
/// and 7000 bytes live but not tracked.
fn known(path: &Path) {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let samples = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let lifetimes = recording.register(events::object_lifetime()).unwrap();
    let fill = support::method_of(&mut recording, "app/Cache", "fill");
    let main = support::method_of(&mut recording, "app/Main", "main");
    let token = support::method_of(&mut recording, "app/Parser", "token");
    let copy = support::method_of(&mut recording, "java/util/Arrays", "copyOf");
    let mut stack = |truncated: bool, methods: &[MethodRef]| {
        recording.stack_trace(StackTrace {
            truncated,
            frames: methods
                .iter()
                .map(|&method| StackFrame {
                    method,
                    line_number: 1,
                    bytecode_index: 0,
                    frame_type: FrameType::Interpreted,
                })
                .collect(),
        })
    };
    let stacks = [
        stack(false, &[fill, main]),
        stack(true, &[copy, token, main]),
    ];
    let mut thread = |name: &str, id: i64| {
        recording.thread(Thread {
            os_name: name.into(),
            os_thread_id: id,
            java_name: name.into(),
            java_thread_id: id,
            group: None,
        })
    };
    let threads = [thread("worker-0", 1), thread("worker-1", 2)];
    let bytes = support::class_of(&mut recording, "[B");
    for (stack, weight, live, gcs_survived, tracked) in [
        (0, 1000, true, 3, true),
        (0, 3000, false, 1, true),
        (1, 500, true, 0, true),
        (1, 7000, true, 0, false),
    ] {
        if tracked {
            ObjectAllocationSample {
                start_time: Ticks(1),
                event_thread: Some(threads[stack]),
                stack_trace: stacks[stack].into(),
                object_class: Some(bytes),
                weight,
            }
            .write(&mut recording, &samples)
            .unwrap();
        }
        ObjectLifetime {
            start_time: Ticks(1),
            duration: 1,
            event_thread: Some(threads[stack]),
            stack_trace: stacks[stack].into(),
            object_class: Some(bytes),
            object_size: 64,
            weight,
            live,
            gcs_survived,
            freed_by_gc_id: if live { 0 } else { 2 },
            tracked,
            tracking_probability: if tracked { 1.0 } else { 0.0 },
        }
        .write(&mut recording, &lifetimes)
        .unwrap();
    }
    recording.close().unwrap();
}

/// The known recording, written into a fresh folder for `test`.
fn known_recording(test: &str) -> PathBuf {
    let path = support::temp_dir(test).join("known.jfr");
    known(&path);
    path
}

/// The known recording's flame graph drawn with `args`: its frames.
fn known_frames(test: &str, args: &[&str]) -> Vec<Frame> {
    let path = known_recording(test);
    let svg = path.with_extension("svg");
    let mut all = vec!["flame", path.to_str().unwrap(), "-o", svg.to_str().unwrap()];
    all.extend(args);
    heapsampler_ok(&all);
    frames(&std::fs::read_to_string(&svg).unwrap())
}

/// A fill's red, green and blue.
fn rgb(fill: &str) -> (u8, u8, u8) {
    let parts: Vec<u8> = fill
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .map(|c| c.parse().unwrap())
        .collect();
    (parts[0], parts[1], parts[2])
}

const CUT: &str = "[truncated];app.Main.main;app.Parser.token;java.util.Arrays.copyOf";

#[test]
fn frames_show_bytes_share_and_samples() {
    let path = known_recording("flame_bytes");
    let svg = path.with_extension("svg");
    // Written next to the recording by default.
    let stderr = heapsampler(["flame", path.to_str().unwrap()]).stderr;
    assert_eq!(
        String::from_utf8_lossy(&stderr),
        format!(
            "heapsampler: {}: a flame graph of 4.5 kB allocated (from 3 samples, 2 stacks); \
             open it in a browser\n",
            svg.display()
        )
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains(">Allocated bytes by stack: known.jfr<"),
        "the title"
    );
    assert!(
        text.contains(">4.5 kB allocated (estimated from 3 samples of jdk.ObjectAllocationSample)"),
        "the subtitle"
    );
    assert!(
        text.contains("blue: the JDK&apos;s, green: the class allocated<"),
        "the colours' legend"
    );
    let frames = frames(&text);
    let titles: Vec<&str> = frames.iter().map(|f| f.title.as_str()).collect();
    // Root first, sorted: [truncated] (500) before app.Main.main (4000);
    // the allocated class on top of each stack.
    for expected in [
        "all (4.5 kB, 100.00%, 3 samples)",
        "[truncated] (500 B, 11.11%, 1 sample)",
        "app.Main.main (500 B, 11.11%, 1 sample)",
        "app.Parser.token (500 B, 11.11%, 1 sample)",
        "java.util.Arrays.copyOf (500 B, 11.11%, 1 sample)",
        "byte[] (500 B, 11.11%, 1 sample)",
        "app.Main.main (4.0 kB, 88.89%, 2 samples)",
        "app.Cache.fill (4.0 kB, 88.89%, 2 samples)",
        "byte[] (4.0 kB, 88.89%, 2 samples)",
    ] {
        assert!(titles.contains(&expected), "{expected} in {titles:#?}");
    }
    assert_eq!(frames.len(), 9, "{titles:#?}");
    let top = |name: &str, x: u64| frames.iter().find(|f| f.name() == name && f.x == x);
    assert_eq!(
        top("byte[]", 0).unwrap().y + 16 * 5,
        top("all", 0).unwrap().y
    );
    assert_eq!(
        top("byte[]", 500).unwrap().y + 16 * 3,
        top("all", 0).unwrap().y
    );
    assert_eq!(
        root_children(&frames),
        [
            ("[truncated] (500 B, 11.11%, 1 sample)".to_owned(), 500),
            ("app.Main.main (4.0 kB, 88.89%, 2 samples)".to_owned(), 4000),
        ]
    );
    // The cut stack's marker is grey, the JDK's frame blue, ours warm.
    let fill = |name: &str| rgb(&frames.iter().find(|f| f.name() == name).unwrap().fill);
    assert_eq!(fill("[truncated]"), (170, 170, 170));
    let (r, _, b) = fill("java.util.Arrays.copyOf");
    assert!(b >= 215 && r < 160, "blue: {r} {b}");
    let (r, _, b) = fill("app.Cache.fill");
    assert!(r >= 205 && b <= 55, "warm: {r} {b}");
    for class in frames.iter().filter(|f| f.name() == "byte[]") {
        let (r, g, b) = rgb(&class.fill);
        assert!(g >= 200 && r <= 160 && b <= 140, "green: {}", class.fill);
    }
    // The folded stacks say the same.
    assert_eq!(
        collapsed(&path, "64"),
        [
            (format!("{CUT};byte[]_[k]"), 500),
            ("app.Main.main;app.Cache.fill;byte[]_[k]".to_owned(), 4000)
        ]
    );
    // Without the classes: the methods alone, and no green in the legend.
    let plain = path.with_extension("plain.svg");
    heapsampler_ok([
        "flame",
        path.to_str().unwrap(),
        "--no-class-frame",
        "-o",
        plain.to_str().unwrap(),
    ]);
    let plain = std::fs::read_to_string(&plain).unwrap();
    assert!(!plain.contains("green"));
    let methods = self::frames(&plain);
    assert_eq!(methods.len(), 7, "{methods:#?}");
    assert!(methods.iter().all(|f| f.name() != "byte[]"), "{methods:#?}");
}

#[test]
fn by_samples_frames_are_as_wide_as_their_samples() {
    let frames = known_frames("flame_samples", &["--samples"]);
    assert_eq!(
        root_children(&frames),
        [
            ("[truncated] (1 sample, 33.33%, 500 B)".to_owned(), 1),
            ("app.Main.main (2 samples, 66.67%, 4.0 kB)".to_owned(), 2),
        ]
    );
}

#[test]
fn live_objects_as_top_live_counts_them() {
    // Stack 0's 1000 bytes and stack 1's 500 are live; the untracked 7000
    // are left out, and said so.
    let path = known_recording("flame_live");
    let svg = path.with_extension("svg");
    let output = heapsampler([
        "flame",
        path.to_str().unwrap(),
        "--live",
        "-o",
        svg.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("left out 1 samples (7.0 kB) of objects the agent did not track"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1.5 kB still live (from 2 samples, 2 stacks)"),
        "{stderr}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.contains(">Live bytes by stack: known.jfr<"),
        "the title"
    );
    assert_eq!(
        root_children(&frames(&svg)),
        [
            ("[truncated] (500 B, 33.33%, 1 sample)".to_owned(), 500),
            ("app.Main.main (1.0 kB, 66.67%, 1 sample)".to_owned(), 1000),
        ]
    );
    // Only what outlived 2 collections.
    let frames = known_frames("flame_live_gcs", &["--live", "--min-gcs", "2"]);
    assert_eq!(
        root_children(&frames),
        [("app.Main.main (1.0 kB, 100.00%, 1 sample)".to_owned(), 1000)]
    );
}

#[test]
fn filters_and_depth_as_convert_has_them() {
    let frames = known_frames("flame_thread", &["--thread", "^worker-1$"]);
    assert_eq!(
        root_children(&frames),
        [("[truncated] (500 B, 100.00%, 1 sample)".to_owned(), 500)]
    );
    // One frame kept: every stack cut.
    let frames = known_frames("flame_depth", &["--depth", "1"]);
    assert_eq!(
        root_children(&frames),
        [("[truncated] (4.5 kB, 100.00%, 3 samples)".to_owned(), 4500)]
    );
}

#[test]
fn errors_name_what_is_wrong() {
    let known_path = known_recording("flame_errors");
    let dir = known_path.parent().unwrap();
    let known_path = known_path.to_str().unwrap();
    let fails = |args: &[&str], code: i32, message: &str| {
        let output = heapsampler(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        if code == 1 {
            // Ours; clap's usage errors show the usage too.
            assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        }
    };
    // Nothing passes the filter: nothing to draw, and no file.
    let out = dir.join("none.svg");
    fails(
        &[
            "flame",
            known_path,
            "--class",
            "String",
            "-o",
            out.to_str().unwrap(),
        ],
        1,
        "nothing to draw: none of its 3 jdk.ObjectAllocationSample events passed the filters",
    );
    assert!(!out.exists());
    // A recording without allocation events, and one without liveness.
    let empty = dir.join("no-samples.jfr");
    support::write_allocation_samples(&empty, 0, 1, 1 << 20);
    fails(
        &["flame", empty.to_str().unwrap()],
        1,
        "has no jdk.ObjectAllocationSample events, nor jdk.ObjectAllocationInNewTLAB and \
         jdk.ObjectAllocationOutsideTLAB events: record with heapsampler",
    );
    let samples = dir.join("samples.jfr");
    support::write_allocation_samples(&samples, 3, 1, 1 << 20);
    fails(
        &["flame", samples.to_str().unwrap(), "--live"],
        1,
        "has no heapsampler.ObjectLifetime events: --live reads the agent's liveness events",
    );
    fails(&["flame", "/no/such.jfr"], 1, "/no/such.jfr");
    // Usage: exit code 2.
    fails(&["flame", known_path, "--min-gcs", "2"], 2, "--live");
    fails(
        &["flame", known_path, "--from", "2m", "--to", "1m"],
        2,
        "--from must come before --to",
    );
}

/// The folded stacks of `recording`, `stack value` lines, as convert
/// writes them at `depth`.
fn collapsed(recording: &Path, depth: &str) -> Vec<(String, u64)> {
    heapsampler_ok([
        "convert",
        "--format",
        "collapsed",
        "--stack-depth",
        depth,
        "-o",
        "-",
        recording.to_str().unwrap(),
    ])
    .0
    .lines()
    .map(|line| {
        let (stack, value) = line.rsplit_once(' ').unwrap();
        (stack.to_owned(), value.parse().unwrap())
    })
    .collect()
}

/// What the page's script did, as the check script appended to a copy of
/// the SVG saw it (see [`browse`]).
#[derive(Debug)]
struct Browsed {
    /// Errors thrown by any script of the page.
    errors: Vec<String>,
    /// `total_samples`, which the page's init sets from the graph.
    total: Option<u64>,
    /// Every frame after init, as the live document has it.
    frames: Vec<Frame>,
    /// The details line after hovering over the widest frame on the root.
    hovered: String,
    /// The title of that frame.
    hovered_title: String,
    /// After a click on that frame: its box's width, and whether the
    /// "Reset Zoom" button shows.
    zoomed_width: String,
    unzoom_shown: bool,
    /// After the page's search for the term: what it says was matched, and
    /// how many boxes it coloured.
    matched: String,
    highlighted: u64,
}

/// The script put first in the copy of the SVG: every error of the page's
/// scripts is kept, from its first line on.
const CATCH_ERRORS: &str = r#"<script type="text/ecmascript"><![CDATA[
window.heapsamplerErrors = [];
window.addEventListener("error", function (e) {
    window.heapsamplerErrors.push(String(e.message) + " at " + e.lineno);
});
]]></script>"#;

/// The script put last: once the page has loaded and its own script has
/// laid the graph out, it hovers, clicks and searches as a person would,
/// and writes what it saw into the document, URI-encoded JSON in a text
/// element, which Chromium's --dump-dom prints.
const CHECK: &str = r##"<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () { setTimeout(function () {
    var out = { errors: window.heapsamplerErrors };
    try {
        out.total = typeof total_samples === "number" ? total_samples : null;
        var groups = document.getElementById("frames").children;
        var read = function () {
            var all = [];
            for (var i = 0; i < groups.length; i++) {
                var rect = groups[i].querySelector("rect");
                all.push({
                    title: groups[i].querySelector("title").textContent,
                    fill: rect.getAttribute("fill"),
                    y: parseInt(rect.getAttribute("y")),
                    x: parseInt(rect.getAttribute("fg:x")),
                    width: parseInt(rect.getAttribute("fg:w")),
                    shown: rect.getAttribute("width")
                });
            }
            return all;
        };
        out.frames = read();
        var root = out.frames.filter(function (f) { return f.title.indexOf("all (") === 0; })[0];
        var widest = -1;
        for (var i = 0; i < out.frames.length; i++) {
            var f = out.frames[i];
            if (f.y + 16 === root.y && (widest < 0 || f.width > out.frames[widest].width)) widest = i;
        }
        var target = groups[widest].querySelector("rect");
        target.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
        out.hovered = document.getElementById("details").textContent;
        out.hovered_title = out.frames[widest].title;
        target.dispatchEvent(new MouseEvent("click", { bubbles: true }));
        out.zoomed_width = target.getAttribute("width");
        out.unzoom_shown = !document.getElementById("unzoom").classList.contains("hide");
        unzoom();
        search(SEARCH_TERM);
        out.matched = document.getElementById("matched").textContent;
        var rects = document.querySelectorAll("#frames rect");
        out.highlighted = 0;
        for (var i = 0; i < rects.length; i++) {
            if (rects[i].getAttribute("fill") === searchcolor) out.highlighted++;
        }
    } catch (e) {
        out.errors.push("the check: " + e);
    }
    var node = document.createElementNS("http://www.w3.org/2000/svg", "text");
    node.setAttribute("id", "heapsampler-check");
    node.textContent = encodeURIComponent(JSON.stringify(out));
    document.documentElement.appendChild(node);
}, 100); });
]]></script>"##;

/// Opens a copy of `svg` with the two scripts above in headless Chromium
/// and returns what the check saw, searching for `term` (a JavaScript
/// regular expression).
fn browse(chromium: &Path, svg: &Path, term: &str) -> Browsed {
    let check = CHECK.replace("SEARCH_TERM", &serde_json::to_string(term).unwrap());
    let json = run_in_browser(chromium, svg, &check);
    let text = |key: &str| json[key].as_str().unwrap_or_default().to_owned();
    Browsed {
        errors: errors(&json),
        total: json["total"].as_u64(),
        frames: json["frames"]
            .as_array()
            .map(|frames| {
                frames
                    .iter()
                    .map(|f| Frame {
                        title: f["title"].as_str().unwrap().to_owned(),
                        fill: f["fill"].as_str().unwrap().to_owned(),
                        y: f["y"].as_u64().unwrap(),
                        x: f["x"].as_u64().unwrap(),
                        width: f["width"].as_u64().unwrap(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        hovered: text("hovered"),
        hovered_title: text("hovered_title"),
        zoomed_width: text("zoomed_width"),
        unzoom_shown: json["unzoom_shown"] == true,
        matched: text("matched"),
        highlighted: json["highlighted"].as_u64().unwrap_or(0),
    }
}

/// The errors a check script's result lists.
fn errors(json: &serde_json::Value) -> Vec<String> {
    json["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

/// Opens a copy of `svg` with [`CATCH_ERRORS`] first and `check` last in
/// headless Chromium, 1400 by 900 pixels, and returns the JSON the check
/// wrote into the document (as [`CHECK`] does), `errors` among it.
fn run_in_browser(chromium: &Path, svg: &Path, check: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(svg).unwrap();
    let root = text.find("<svg ").unwrap();
    let opened = root + text[root..].find('>').unwrap() + 1;
    let closed = text.rfind("</svg>").unwrap();
    let checked = svg.with_extension("checked.svg");
    std::fs::write(
        &checked,
        [
            &text[..opened],
            CATCH_ERRORS,
            &text[opened..closed],
            check,
            &text[closed..],
        ]
        .concat(),
    )
    .unwrap();
    browser::dumped_check(chromium, &checked, "1400,900")
}

/// Draws `recording` at `depth` and checks it in Chromium against the
/// folded stacks of the same depth: no script error, the root's children
/// as wide as the folded stacks under each root frame (inferno leaves out
/// frames narrower than 0.01%), hover details, zoom, and the page's search
/// for `method` matching the share of the stacks through it.
fn check_in_browser(chromium: &Path, recording: &Path, depth: &str, method: &str) {
    let svg = recording.with_extension("svg");
    heapsampler_ok([
        "flame",
        recording.to_str().unwrap(),
        "--depth",
        depth,
        "-o",
        svg.to_str().unwrap(),
    ]);
    let stacks = collapsed(recording, depth);
    let total: u64 = stacks.iter().map(|(_, value)| value).sum();
    let browsed = browse(chromium, &svg, &format!("^{} ", method.replace('.', "\\.")));
    assert_eq!(browsed.errors, Vec::<String>::new(), "script errors");
    assert_eq!(browsed.total, Some(total), "the page's total_samples");
    // The root's children: the folded stacks summed by their root frame.
    let mut roots: Vec<(String, u64)> = Vec::new();
    for (stack, value) in &stacks {
        let root = stack.split(';').next().unwrap();
        match roots.iter_mut().find(|(name, _)| name == root) {
            Some((_, sum)) => *sum += value,
            None => roots.push((root.to_owned(), *value)),
        }
    }
    let mut expected: Vec<(String, u64)> = roots
        .into_iter()
        .filter(|(_, value)| *value as f64 >= total as f64 / 10_000.0)
        .collect();
    expected.sort();
    let mut drawn: Vec<(String, u64)> = root_children(&browsed.frames)
        .into_iter()
        .map(|(title, width)| (title[..title.rfind(" (").unwrap()].to_owned(), width))
        .collect();
    drawn.sort();
    assert_eq!(
        drawn, expected,
        "the root's children against the folded stacks"
    );
    let root = browsed.frames.iter().find(|f| f.name() == "all").unwrap();
    assert_eq!(root.width, total);
    // Each child's details: its bytes, as the folded stacks sum them.
    for frame in browsed.frames.iter().filter(|f| f.y + 16 == root.y) {
        let details = format!(" ({}, ", human_bytes(frame.width as f64));
        assert!(
            frame.title.contains(&details),
            "{details} in {}",
            frame.title
        );
        assert!(frame.title.ends_with(" samples)") || frame.title.ends_with(" sample)"));
    }
    assert!(
        drawn.iter().any(|(name, _)| name == "[truncated]"),
        "stacks cut at depth {depth}: {drawn:?}"
    );
    let truncated = browsed
        .frames
        .iter()
        .find(|f| f.name() == "[truncated]")
        .unwrap();
    assert_eq!(rgb(&truncated.fill), (170, 170, 170));
    // Hover, then zoom.
    assert_eq!(browsed.hovered, format!("Frame: {}", browsed.hovered_title));
    assert!(browsed.hovered.contains(" samples)"), "{}", browsed.hovered);
    assert_eq!(browsed.zoomed_width, "100.0000%");
    assert!(browsed.unzoom_shown);
    // The search: the share of the bytes under a frame of the method.
    let through: u64 = stacks
        .iter()
        .filter(|(stack, _)| stack.split(';').any(|frame| frame == method))
        .map(|(_, value)| value)
        .sum();
    assert!(through > 0, "{method} is in the stacks");
    let share = 100.0 * through as f64 / total as f64;
    let shown: f64 = browsed
        .matched
        .strip_prefix("Matched: ")
        .and_then(|m| m.strip_suffix('%'))
        .unwrap_or_else(|| panic!("{:?}", browsed.matched))
        .parse()
        .unwrap();
    // Shown to a tenth; frames under 0.01% are not drawn.
    assert!(
        (shown - share).abs() <= 0.15,
        "matched {shown}%, folded {share:.3}%"
    );
    assert!(browsed.highlighted > 0);
}

#[test]
fn an_agent_recording_draws_and_works_in_a_browser() {
    let Some(chromium) = chromium("an_agent_recording_draws_and_works_in_a_browser") else {
        return;
    };
    let dir = support::temp_dir("flame_agent_browser");
    let recording = dir.join("mix.jfr");
    support::record_with_agent(
        &recording,
        &["--interval", "64k"],
        "AllocationMix",
        &["1", "2"],
    );
    // Four frames: the workers' stacks (Thread.run, the lambda, work, the
    // collections under it) are cut.
    check_in_browser(&chromium, &recording, "4", "AllocationMix.work");
    // The graph's root says as many samples as the JDK counts.
    let svg = std::fs::read_to_string(recording.with_extension("svg")).unwrap();
    let samples =
        support::summary_count(&support::summary(&recording), "jdk.ObjectAllocationSample");
    let root = frames(&svg)
        .into_iter()
        .find(|f| f.name() == "all")
        .unwrap();
    assert!(
        root.title
            .ends_with(&format!(", 100.00%, {} samples)", thousands(samples))),
        "{} against {samples}",
        root.title
    );
}

#[test]
fn a_jdk_recording_draws_and_works_in_a_browser() {
    let Some(chromium) = chromium("a_jdk_recording_draws_and_works_in_a_browser") else {
        return;
    };
    let dir = support::temp_dir("flame_jdk_browser");
    let recording = dir.join("jdk.jfr");
    let workload = support::workload("AllocationMix");
    support::record_with_jfr(
        &recording,
        &["settings=profile"],
        &[workload.to_str().unwrap(), "1", "2"],
    );
    // The source launcher's compiler runs deeper than 16 frames; the
    // workers' stacks do not.
    check_in_browser(&chromium, &recording, "16", "AllocationMix.work");
}

/// A recording of three stacks under `app.Main.main` whose boxes are
/// 77%, 20% and 3% of the graph: `app.Other.run` allocating `byte[]`, and
/// `com.example.service.internal.OrderRepository`'s `findAll` (an
/// `ArrayList`) and `save` (an `Order`): names too long for their boxes.
fn long_names(path: &Path) {
    let mut recording = Recording::create(path, Options::default()).unwrap();
    let samples = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let repository = "com/example/service/internal/OrderRepository";
    let main = support::method_of(&mut recording, "app/Main", "main");
    let methods = [
        support::method_of(&mut recording, "app/Other", "run"),
        support::method_of(&mut recording, repository, "findAll"),
        support::method_of(&mut recording, repository, "save"),
    ];
    let classes = [
        "[B",
        "java/util/ArrayList",
        "com/example/service/internal/Order",
    ];
    for ((method, class), weight) in methods.into_iter().zip(classes).zip([77, 20, 3]) {
        let frames = [method, main]
            .into_iter()
            .map(|method| StackFrame {
                method,
                line_number: 1,
                bytecode_index: 0,
                frame_type: FrameType::Interpreted,
            })
            .collect();
        let stack = recording.stack_trace(StackTrace {
            truncated: false,
            frames,
        });
        let class = support::class_of(&mut recording, class);
        ObjectAllocationSample {
            start_time: Ticks(1),
            event_thread: None,
            stack_trace: stack.into(),
            object_class: Some(class),
            weight: weight * 1000,
        }
        .write(&mut recording, &samples)
        .unwrap();
    }
    recording.close().unwrap();
}

/// The check for labels: each box's name, short name, label and room (the
/// pixels inferno's script gives a label), and the widths the browser
/// draws the name and short name at; after load, and after a zoom on the
/// narrowest box.
const LABELS: &str = r##"<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () { setTimeout(function () {
    var out = { errors: window.heapsamplerErrors };
    try {
        var frames = document.getElementById("frames");
        var groups = frames.children;
        var read = function () {
            var all = [];
            for (var i = 0; i < groups.length; i++) {
                var g = groups[i];
                if (g.classList.contains("hide")) continue;
                var t = g.querySelector("text");
                var r = g.querySelector("rect");
                var name = g.querySelector("title").textContent.replace(/ \([^(]*\)$/, "");
                var label = t.textContent;
                var measure = function (text) {
                    t.textContent = text;
                    return t.getComputedTextLength();
                };
                var f = {
                    name: name,
                    short: g.getAttribute("data-short") || name,
                    label: label,
                    room: parseFloat(r.getAttribute("width")) * frames.attributes.width.value / 100 - 3
                };
                f.name_width = measure(f.name);
                f.short_width = measure(f.short);
                t.textContent = label;
                all.push(f);
            }
            return all;
        };
        out.loaded = read();
        for (var i = 0; i < groups.length; i++) {
            if (groups[i].querySelector("title").textContent.indexOf("com.example.service.internal.OrderRepository.save (") === 0) {
                zoom(groups[i]);
            }
        }
        out.zoomed = read();
    } catch (e) {
        out.errors.push("the check: " + e);
    }
    var node = document.createElementNS("http://www.w3.org/2000/svg", "text");
    node.setAttribute("id", "heapsampler-check");
    node.textContent = encodeURIComponent(JSON.stringify(out));
    document.documentElement.appendChild(node);
}, 100); });
]]></script>"##;

/// A box's label as the browser laid it out, with what decides it.
#[derive(Debug)]
struct Label {
    name: String,
    short: String,
    label: String,
    room: f64,
    name_width: f64,
    short_width: f64,
}

impl Label {
    /// The labels the check wrote under `key`.
    fn read(json: &serde_json::Value, key: &str) -> Vec<Label> {
        let text = |l: &serde_json::Value, key: &str| l[key].as_str().unwrap().to_owned();
        let number = |l: &serde_json::Value, key: &str| l[key].as_f64().unwrap();
        json[key]
            .as_array()
            .unwrap_or_else(|| panic!("no {key}: {json}"))
            .iter()
            .map(|l| Label {
                name: text(l, "name"),
                short: text(l, "short"),
                label: text(l, "label"),
                room: number(l, "room"),
                name_width: number(l, "name_width"),
                short_width: number(l, "short_width"),
            })
            .collect()
    }

    /// The label is the whole name if it fits its room, else the short
    /// name if that fits, else the short name cut at the right (or none):
    /// never the name cut in the middle of a word.
    fn check(&self) {
        let fits = |width: f64| width < self.room;
        if self.label == self.name {
            assert!(fits(self.name_width), "{self:?}");
        } else if self.label == self.short {
            assert!(!fits(self.name_width) && fits(self.short_width), "{self:?}");
        } else if let Some(cut) = self.label.strip_suffix("..") {
            assert!(!fits(self.short_width), "{self:?}");
            assert!(!cut.is_empty() && self.short.starts_with(cut), "{self:?}");
        } else {
            assert_eq!(self.label, "", "{self:?}");
        }
    }
}

#[test]
fn labels_drop_the_package_before_they_are_cut_in_a_browser() {
    let Some(chromium) = chromium("labels_drop_the_package_before_they_are_cut_in_a_browser")
    else {
        return;
    };
    let dir = support::temp_dir("flame_labels_browser");
    let recording = dir.join("long.jfr");
    long_names(&recording);
    let svg = dir.join("long.svg");
    heapsampler_ok([
        "flame",
        recording.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    let json = run_in_browser(&chromium, &svg, LABELS);
    assert_eq!(errors(&json), Vec::<String>::new(), "script errors");
    let (loaded, zoomed) = (Label::read(&json, "loaded"), Label::read(&json, "zoomed"));
    // The whole graph, then the zoomed box, its callers and itself.
    assert_eq!(loaded.len(), 8, "{loaded:#?}");
    assert_eq!(zoomed.len(), 4, "{zoomed:#?}");
    for label in loaded.iter().chain(&zoomed) {
        label.check();
    }
    let label_of = |labels: &[Label], name: &str| {
        labels
            .iter()
            .find(|l| l.name == name)
            .unwrap_or_else(|| panic!("{name}: {labels:#?}"))
            .label
            .clone()
    };
    // 20% of about 1380 pixels: room for the class and method, not for
    // the package (some 160 and 330 pixels in a 12 px font).
    let find_all = "com.example.service.internal.OrderRepository.findAll";
    assert_eq!(label_of(&loaded, find_all), "OrderRepository.findAll");
    assert_eq!(
        label_of(&loaded, "java.util.ArrayList"),
        "java.util.ArrayList"
    );
    // 3%: the short name cut; zoomed to the whole width, the full name.
    let save = "com.example.service.internal.OrderRepository.save";
    assert!(label_of(&loaded, save).starts_with("Ord"), "{loaded:#?}");
    assert_eq!(label_of(&zoomed, save), save);
    assert_eq!(
        label_of(&zoomed, "com.example.service.internal.Order"),
        "com.example.service.internal.Order"
    );
}

/// The methods the frames of `recording` mark hidden, as `pkg.Class.method`
/// (from `jfr print --json`, which shows every frame).
fn hidden_methods(recording: &Path) -> Vec<String> {
    let document = support::print_json(recording);
    let mut hidden: Vec<String> = support::json_events(&document)
        .iter()
        .filter_map(|event| event["values"]["stackTrace"]["frames"].as_array())
        .flatten()
        .map(|frame| &frame["method"])
        .filter(|method| method["hidden"] == true)
        .map(|method| {
            let class = method["type"]["name"].as_str().unwrap();
            format!(
                "{}.{}",
                java_class_name(class),
                method["name"].as_str().unwrap()
            )
        })
        .collect();
    hidden.sort();
    hidden.dedup();
    hidden
}

/// The JDK's recorder keeps the frames of lambda proxies and lambda forms,
/// marked hidden, and so does the agent with --keep-hidden-frames: the
/// flame graph, the folded stacks and the CSV leave them out, as `jfr
/// print` does, and the lambda's body sits on the frame that called the
/// proxy.
#[test]
fn frames_the_recording_marks_hidden_are_left_out() {
    let dir = support::temp_dir("flame_hidden");
    let workload = support::compiled_workload("AllocationMix");
    let jdk = dir.join("jdk.jfr");
    let settings = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/jfc/allocation-sample-unthrottled.jfc");
    support::record_with_jfr(
        &jdk,
        &[&format!("settings={}", settings.display())],
        &["-cp", workload.to_str().unwrap(), "AllocationMix", "1", "2"],
    );
    let agent = dir.join("agent.jfr");
    support::record_with_agent(
        &agent,
        &["--keep-hidden-frames", "--interval", "64k"],
        "AllocationMix",
        &["1", "2"],
    );
    for recording in [&jdk, &agent] {
        let hidden = hidden_methods(recording);
        // The workers' Runnable: AllocationMix$$Lambda$N+0x....run.
        assert!(
            hidden
                .iter()
                .any(|m| m.starts_with("AllocationMix$$Lambda")),
            "{}: {hidden:?}",
            recording.display()
        );
        let svg = recording.with_extension("svg");
        heapsampler_ok([
            "flame",
            recording.to_str().unwrap(),
            "-o",
            svg.to_str().unwrap(),
        ]);
        let frames = frames(&std::fs::read_to_string(&svg).unwrap());
        for frame in &frames {
            assert!(
                !hidden.iter().any(|m| m == frame.name()) && !frame.name().contains("$$Lambda"),
                "{}: {}",
                recording.display(),
                frame.title
            );
        }
        let body = frames
            .iter()
            .find(|f| f.name() == "AllocationMix.lambda$main$0")
            .unwrap_or_else(|| panic!("{frames:#?}"));
        // Straight on the thread's own frame, no proxy between: Thread.run,
        // or from JDK 21 Thread.runWith, through which run calls its task.
        assert!(
            frames.iter().any(|f| matches!(
                f.name(),
                "java.lang.Thread.run" | "java.lang.Thread.runWith"
            ) && f.y == body.y + 16
                && (f.x..f.x + f.width).contains(&body.x)),
            "the lambda's body on Thread.run: {frames:#?}"
        );
        let folded = collapsed(recording, "64");
        assert!(
            folded.iter().all(|(stack, _)| !stack.contains("$$Lambda")),
            "{folded:?}"
        );
        let csv = heapsampler_ok([
            "convert",
            recording.to_str().unwrap(),
            "--events",
            "jdk.ObjectAllocationSample",
            "-o",
            "-",
        ])
        .0;
        assert!(csv.contains("AllocationMix.lambda$main$0("), "{csv}");
        assert!(!csv.contains("$$Lambda"), "{csv}");
    }
}

/// `1234567` as `1,234,567`, as the titles write counts.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
