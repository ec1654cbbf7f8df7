//! Builds the agent library (`agent/cdylib`, `libheapsampler.so`) for the
//! `heapsampler` executable to carry, so that an executable installed alone
//! (`cargo install`) can still record: `src/bin/heapsampler/agent.rs`
//! writes it out when no other agent is named.
//!
//! Cargo cannot yet make one package's library an input of another's
//! binary on stable (artifact dependencies), so this runs Cargo itself, in
//! a target directory of its own under `OUT_DIR` (the outer build holds the
//! lock on its own), at the outer build's profile and target, sharing its
//! jobserver. Debug info is left out of the carried copy (2 MB rather than
//! 25); the library that `cargo build` puts in `target/` keeps it.
//!
//! Where the agent's sources are comes from the `heapsampler-agent`
//! dependency's build script (`DEP_HEAPSAMPLER_AGENT_ROOT`), so that one
//! way serves both places a build starts from:
//! - this repository: the agent's library package, `agent/cdylib`, built
//!   with the workspace's lock file (`--locked`);
//! - a published package (`cargo install heapsampler-cli`), where the
//!   agent is the package Cargo fetched and `agent/cdylib` is not there (a
//!   package holds no nested package): a library package made here, whose
//!   one source is the agent package's `library.rs` (the same file
//!   `agent/cdylib` builds), resolved `--offline` from what the outer build
//!   fetched, since this package depends on the agent and so on all of
//!   its dependencies.
//!
//! Cargo reruns this when a source the agent is built from changes: the
//! files the agent's own dependency file lists, the manifests of the
//! packages they belong to, and the lock file.
//!
//! That is a second compilation of the agent and its dependencies beside
//! the workspace's own (`agent/cdylib`), which Cargo cannot share: the
//! outer build holds the target directory. A developer who does not need
//! the executable to carry the agent sets `HEAPSAMPLER_NO_CARRIED_AGENT=1`
//! for the build: this then builds nothing, the executable carries no
//! library and uses the `libheapsampler.so` beside it, which the
//! workspace's build puts there (`target/release/`). Installs never set
//! it.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The agent's file name, as its package's `[lib] name` makes it.
const LIBRARY: &str = "libheapsampler.so";

/// Set (to anything but `0`), the executable carries no agent library.
const NO_CARRIED_AGENT: &str = "HEAPSAMPLER_NO_CARRIED_AGENT";

fn main() {
    let agent_root = PathBuf::from(var("DEP_HEAPSAMPLER_AGENT_ROOT"));
    let out_dir = PathBuf::from(var("OUT_DIR"));
    println!("cargo::rerun-if-env-changed={NO_CARRIED_AGENT}");
    if env::var_os(NO_CARRIED_AGENT).is_some_and(|value| !value.is_empty() && value != "0") {
        // An empty library: the executable's sign that it carries none.
        let none = out_dir.join("no-carried-agent");
        std::fs::write(&none, [])
            .unwrap_or_else(|error| fail(&format!("writing {}: {error}", none.display())));
        println!(
            "cargo::rustc-env=HEAPSAMPLER_CARRIED_AGENT={}",
            none.display()
        );
        return;
    }
    let target_dir = out_dir.join("agent");
    let (target, host) = (var("TARGET"), var("HOST"));
    // "release" for the release and bench profiles, "debug" for the others.
    let profile = var("PROFILE");

    let mut cargo = Command::new(env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    cargo.args(["build", "--package", "heapsampler-agent-cdylib"]);
    let repository_package = agent_root.join("cdylib/Cargo.toml");
    // What the agent is built from, besides the files its dep-info lists.
    let mut watched = Vec::new();
    if repository_package.is_file() {
        cargo
            .arg("--locked")
            .arg("--manifest-path")
            .arg(&repository_package);
        // The workspace's, one level above the agent's package.
        watched.push(agent_root.join("../Cargo.lock"));
    } else {
        let manifest = library_package(&out_dir.join("agent-package"), &agent_root);
        cargo.arg("--offline").arg("--manifest-path").arg(manifest);
    }
    cargo.arg("--target-dir").arg(&target_dir);
    if profile == "release" {
        cargo.arg("--release");
    }
    if target != host {
        cargo.args(["--target", &target]);
    }
    for profile in ["RELEASE", "DEV"] {
        cargo
            .env(format!("CARGO_PROFILE_{profile}_DEBUG"), "false")
            .env(format!("CARGO_PROFILE_{profile}_STRIP"), "debuginfo");
    }
    // What the outer build set for its own compilations, not the agent's:
    // its target directory, and clippy's driver and lints under `cargo
    // clippy` (the agent is linted as a package of its own).
    for outer in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
    ] {
        cargo.env_remove(outer);
    }
    match cargo.status() {
        Ok(status) if status.success() => {}
        Ok(status) => fail(&format!("building the agent ({cargo:?}) failed: {status}")),
        Err(error) => fail(&format!("cannot run {cargo:?}: {error}")),
    }

    let mut built = target_dir;
    if target != host {
        built.push(&target);
    }
    built.push(&profile);
    let library = built.join(LIBRARY);
    let dep_info = built.join("libheapsampler.d");
    let sources = std::fs::read_to_string(&dep_info)
        .unwrap_or_else(|error| fail(&format!("reading {}: {error}", dep_info.display())));
    for source in dependencies(&sources) {
        if let Some(manifest) = package_manifest(&source) {
            watched.push(manifest);
        }
        watched.push(source);
    }
    watched.sort();
    watched.dedup();
    for path in watched {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    println!(
        "cargo::rustc-env=HEAPSAMPLER_CARRIED_AGENT={}",
        library.display()
    );
}

/// Writes, in `dir`, the manifest of a package that builds the agent
/// library from the agent package at `agent_root` (as `agent/cdylib` does
/// in the repository), and returns its path. A workspace of its own, so
/// that no workspace above `OUT_DIR` claims it.
fn library_package(dir: &Path, agent_root: &Path) -> PathBuf {
    let library = agent_root.join("library.rs");
    if !library.is_file() {
        fail(&format!(
            "the agent package at {} has no library.rs to build the agent library from",
            agent_root.display()
        ));
    }
    let manifest = format!(
        "# Made by heapsampler-cli's build script: the agent library of the\n\
         # heapsampler-agent package at {root}.\n\
         [package]\n\
         name = \"heapsampler-agent-cdylib\"\n\
         version = \"{version}\"\n\
         edition = \"2024\"\n\
         publish = false\n\
         \n\
         [lib]\n\
         name = \"heapsampler\"\n\
         crate-type = [\"cdylib\"]\n\
         path = {library}\n\
         \n\
         [dependencies]\n\
         heapsampler-agent = {{ path = {root_string} }}\n\
         \n\
         [workspace]\n",
        root = agent_root.display(),
        version = var("CARGO_PKG_VERSION"),
        library = toml_string(&library),
        root_string = toml_string(agent_root),
    );
    let path = dir.join("Cargo.toml");
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, manifest))
        .unwrap_or_else(|error| fail(&format!("writing {}: {error}", path.display())));
    path
}

/// `path` as a TOML string: a literal string, which takes any character
/// but the quote that ends it and control characters.
fn toml_string(path: &Path) -> String {
    let text = path
        .to_str()
        .unwrap_or_else(|| fail(&format!("{} is not UTF-8", path.display())));
    if text.contains('\'') || text.chars().any(char::is_control) {
        fail(&format!(
            "cannot name {text} in a Cargo manifest: it has a quote or a control character"
        ));
    }
    format!("'{text}'")
}

fn var(name: &str) -> String {
    env::var(name).unwrap_or_else(|_| fail(&format!("Cargo did not set {name}")))
}

fn fail(message: &str) -> ! {
    eprintln!("heapsampler-cli's build: {message}");
    std::process::exit(1)
}

/// The files a Makefile-style dependency file (`target: dep dep ...`, a
/// space in a name escaped as `\ `) says its target was made from.
fn dependencies(dep_info: &str) -> Vec<PathBuf> {
    let Some((_, list)) = dep_info
        .lines()
        .next()
        .and_then(|line| line.split_once(": "))
    else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = list.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

/// The manifest of the package `source` belongs to: the nearest
/// `Cargo.toml` above it.
fn package_manifest(source: &Path) -> Option<PathBuf> {
    source
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("Cargo.toml"))
        .find(|manifest| manifest.is_file())
}
