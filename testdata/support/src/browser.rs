//! A page in headless Chromium, as tests check what we write for browsers:
//! the DOM a check script reads once the page and its frames have loaded,
//! and screenshots for a person to look at.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{DEADLINE, Deadline, needed_tool};

/// Chromium, if the machine has it (see [`needed_tool`]).
pub fn chromium(test: &str) -> Option<PathBuf> {
    needed_tool(test, &["chromium", "chromium-browser", "google-chrome"])
}

/// Put first in the page and in each flame graph's frame: every error of
/// their scripts is kept.
const CATCH_ERRORS: &str = r#"<script>window.heapsamplerErrors = [];
window.addEventListener("error", function (e) {
    window.heapsamplerErrors.push(String(e.message) + " at " + e.lineno);
});</script>"#;

/// Put last in the page: once it and its frames have loaded, reads what a
/// test checks, hovers over and clicks the widest frame of each flame
/// graph, and writes it all into the document as URI-encoded JSON, which
/// Chromium's --dump-dom prints.
const CHECK: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
    var out = { errors: window.heapsamplerErrors, flames: [] };
    var data = function (e, names) {
        var o = {};
        names.forEach(function (n) {
            var v = e.getAttribute("data-" + n);
            o[n] = v === null ? null : (isNaN(parseFloat(v)) ? v : parseFloat(v));
        });
        return o;
    };
    try {
        var verdict = document.getElementById("verdict");
        out.verdict = verdict.querySelector("h1").textContent;
        out.severity = verdict.getAttribute("data-severity");
        out.lacking = document.getElementById("lacking") ? document.getElementById("lacking").textContent : null;
        out.noSuspects = document.getElementById("no-suspects") ? document.getElementById("no-suspects").textContent : null;
        out.suspects = Array.prototype.map.call(document.querySelectorAll("#suspects tr.suspect"), function (tr) {
            var o = data(tr, ["rank", "site", "growth", "growth-low", "growth-high", "live", "live-low", "live-high", "raised"]);
            o.text = tr.textContent.replace(/\s+/g, " ").trim();
            o.heldBy = tr.nextElementSibling.textContent.replace(/\s+/g, " ").trim();
            return o;
        });
        out.series = Array.prototype.map.call(document.querySelectorAll("#heap-series tbody tr"), function (tr) {
            return {
                seconds: parseFloat(tr.getAttribute("data-seconds")),
                cells: Array.prototype.map.call(tr.querySelectorAll("td[data-series]"), function (td) {
                    return data(td, ["series", "bytes", "low", "high"]);
                })
            };
        });
        var chart = document.querySelector("#heap-chart svg");
        out.chart = chart ? {
            width: chart.getBoundingClientRect().width,
            areas: Array.prototype.map.call(chart.querySelectorAll("polygon"), function (p) {
                return [p.getAttribute("data-series"), p.querySelector("title").textContent];
            }),
            heapLines: chart.querySelectorAll("polyline[data-series=heap]").length,
            heapPoints: chart.querySelectorAll("circle[data-series=heap]").length,
            texts: Array.prototype.map.call(chart.querySelectorAll("text"), function (t) { return t.textContent.trim(); })
        } : null;
        out.threads = Array.prototype.map.call(document.querySelectorAll("#threads tbody tr"), function (tr) {
            var o = data(tr, ["thread", "bytes"]);
            o.cells = Array.prototype.map.call(tr.children, function (c) { return c.textContent; });
            return o;
        });
        out.tables = {};
        ["agent-suspects", "heap-peaks", "peak-live-sites"].forEach(function (id) {
            var table = document.getElementById(id);
            out.tables[id] = table ? Array.prototype.map.call(table.querySelectorAll("tbody tr"), function (tr) {
                var o = data(tr, ["site", "raised", "growth", "growth-low", "growth-high", "live", "live-low", "live-high", "bytes", "gc-id"]);
                o.cells = Array.prototype.map.call(tr.children, function (c) { return c.innerText.replace(/\s+/g, " ").trim(); });
                return o;
            }) : null;
        });
        var resources = [];
        var fetched = function (w) {
            w.performance.getEntriesByType("resource").forEach(function (r) { resources.push(r.name); });
        };
        fetched(window);
        Array.prototype.forEach.call(document.querySelectorAll("iframe.flame"), function (frame) {
            var w = frame.contentWindow, d = frame.contentDocument;
            fetched(w);
            var f = { errors: w.heapsamplerErrors || ["no error catcher in the frame"] };
            f.total = typeof w.total_samples === "number" ? w.total_samples : null;
            var groups = d.getElementById("frames").children;
            f.frames = groups.length;
            var widest = null;
            for (var i = 0; i < groups.length; i++) {
                var r = groups[i].querySelector("rect");
                var title = groups[i].querySelector("title").textContent;
                if (title.indexOf("all (") === 0) continue;
                if (!widest || parseInt(r.getAttribute("fg:w")) > parseInt(widest.querySelector("rect").getAttribute("fg:w"))) widest = groups[i];
            }
            var rect = widest.querySelector("rect");
            f.label = widest.querySelector("text").textContent;
            rect.dispatchEvent(new w.MouseEvent("mouseover", { bubbles: true }));
            f.hovered = d.getElementById("details").textContent;
            rect.dispatchEvent(new w.MouseEvent("click", { bubbles: true }));
            f.zoomed = rect.getAttribute("width");
            f.unzoomShown = !d.getElementById("unzoom").classList.contains("hide");
            f.frameHeight = frame.getBoundingClientRect().height;
            f.svgHeight = d.querySelector("svg").getBoundingClientRect().height;
            out.flames.push(f);
        });
        out.resources = resources;
        out.text = document.body.innerText;
        out.height = document.documentElement.scrollHeight;
    } catch (e) {
        out.errors.push("the check: " + e + " " + e.stack);
    }
    var node = document.createElement("pre");
    node.id = "heapsampler-check";
    node.textContent = encodeURIComponent(JSON.stringify(out));
    document.body.appendChild(node);
}, 200); });
</script>"##;

/// `text` as it reads in an HTML attribute (askama escapes so).
fn attribute_escaped(text: &str) -> String {
    text.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// Opens a copy of the page at `html`, `CATCH_ERRORS` first in it and in
/// each flame graph's frame, `CHECK` last, in headless Chromium and
/// returns the JSON the check wrote.
pub fn checked_in_browser(chromium: &Path, html: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(html).unwrap();
    let head = text.find("<head>").expect("a head") + "<head>".len();
    let body_end = text.rfind("</body>").expect("a body");
    let frame_head = attribute_escaped("<head>");
    let checked_text = [
        &text[..head],
        CATCH_ERRORS,
        &text[head..body_end],
        CHECK,
        &text[body_end..],
    ]
    .concat()
    .replace(
        &frame_head,
        &format!("{frame_head}{}", attribute_escaped(CATCH_ERRORS)),
    );
    let checked = html.with_extension("checked.html");
    std::fs::write(&checked, checked_text).unwrap();
    dumped_check(chromium, &checked, "1280,900")
}

/// Opens the page `checked` (a page with a check script that writes its
/// findings, URI-encoded JSON, into an element `heapsampler-check`) in
/// headless Chromium with a window of `size` ("width,height") and returns
/// that JSON.
pub fn dumped_check(chromium: &Path, checked: &Path, size: &str) -> serde_json::Value {
    // The document goes to a file: a pipe nobody reads while the browser
    // runs would fill, and stop it.
    let dumped = checked.with_extension("dom.txt");
    let mut child = browser(chromium, checked, size)
        .arg("--dump-dom")
        .arg(format!("file://{}", checked.display()))
        .stdout(std::fs::File::create(&dumped).unwrap())
        .stderr(Stdio::null())
        .spawn_within(DEADLINE);
    let status = child.wait().unwrap();
    assert!(
        !child.was_killed(),
        "chromium did not finish with {}",
        checked.display()
    );
    let dom = std::fs::read_to_string(&dumped).unwrap();
    let encoded = dom
        .split("id=\"heapsampler-check\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| {
            panic!(
                "no check result from chromium ({status}): {}",
                dom.chars().take(500).collect::<String>()
            )
        });
    serde_json::from_str(&percent_decode(encoded)).unwrap()
}

/// Chromium, headless, with a fresh profile beside `html` and a window of
/// `size` ("width,height"), in virtual time: timers wait for the page, no
/// wall-clock race on a busy machine.
fn browser(chromium: &Path, html: &Path, size: &str) -> Command {
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-first-run",
            "--mute-audio",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--window-size={size}"))
        .arg(format!(
            "--user-data-dir={}",
            html.with_extension("chromium-profile").display()
        ));
    command
}

/// A screenshot of the whole page at `html`, `height` pixels tall and 1280
/// wide, beside it as `.png`: for a person to look at.
pub fn screenshot(chromium: &Path, html: &Path, height: u64) -> PathBuf {
    let png = html.with_extension("png");
    let output = browser(chromium, html, &format!("1280,{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output_in_time();
    assert!(output.status.success(), "{output:?}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG at {}", png.display());
    eprintln!("the page as shown: {}", png.display());
    png
}

/// `%E2%9C%93` to its bytes, as `decodeURIComponent` does.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            out.push(u8::from_str_radix(&text[at + 1..at + 3], 16).unwrap());
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The page asks for nothing from elsewhere: no `src`, `href`, CSS `url()`
/// (but to an element of the same SVG, `url(#id)`) or `@import` to any
/// address, no linked file. (The `xmlns` of the SVGs name their
/// vocabularies; nothing is fetched from them.)
pub fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for reference in [
        "src=\"http",
        "src=&#34;http",
        "href=\"http",
        "href=&#34;http",
        "@import",
        "<link",
        "&#60;link",
        "<script src",
    ] {
        assert!(!lower.contains(reference), "the page holds {reference}");
    }
    for (at, _) in lower.match_indices("url(") {
        let target = &lower[at + "url(".len()..];
        assert!(
            target.starts_with('#'),
            "the page holds url({})",
            &target[..40]
        );
    }
}
