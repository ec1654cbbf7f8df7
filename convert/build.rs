//! Builds the agent library (`agent/cdylib`, `libheapsampler.so`) for the
//! `heapsampler` executable to carry, so that an executable installed alone
//! (`cargo install`) can still record: `src/bin/heapsampler/agent.rs`
//! writes it out when no other agent is named.
//!
//! Cargo cannot yet make one package's library an input of another's
//! binary on stable (artifact dependencies), so this runs Cargo itself: the
//! agent's package from this workspace, in a target directory of its own
//! under `OUT_DIR` (the outer build holds the lock on its own), at the
//! outer build's profile and target, sharing its jobserver. Debug info is
//! left out of the carried copy (2 MB rather than 25); the library that
//! `cargo build` puts in `target/` keeps it.
//!
//! Cargo reruns this when a source the agent is built from changes: the
//! files the agent's own dependency file lists, the manifests of the
//! packages they belong to, and the lock file.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The agent's file name, as its package's `[lib] name` makes it.
const LIBRARY: &str = "libheapsampler.so";

fn main() {
    let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.join("..");
    let agent_manifest = workspace.join("agent/cdylib/Cargo.toml");
    if !agent_manifest.is_file() {
        fail(&format!(
            "the agent's sources are not beside this package ({} is missing): \
             heapsampler builds from its repository, where agent/ sits beside convert/",
            agent_manifest.display()
        ));
    }
    let target_dir = PathBuf::from(var("OUT_DIR")).join("agent");
    let (target, host) = (var("TARGET"), var("HOST"));
    // "release" for the release and bench profiles, "debug" for the others.
    let profile = var("PROFILE");

    let mut cargo = Command::new(env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    cargo
        .args(["build", "--locked", "--package", "heapsampler-agent-cdylib"])
        .arg("--manifest-path")
        .arg(&agent_manifest)
        .arg("--target-dir")
        .arg(&target_dir);
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
    let mut watched = vec![workspace.join("Cargo.lock")];
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

fn var(name: &str) -> String {
    env::var(name).unwrap_or_else(|_| fail(&format!("Cargo did not set {name}")))
}

fn fail(message: &str) -> ! {
    eprintln!("heapsampler-convert's build: {message}");
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
