//! The agent library the `heapsampler` executable carries: a copy of the
//! executable alone in a folder (as `cargo install` leaves it, no
//! `libheapsampler.so` beside it) records, writing the library to its
//! cache once, checked against the carried bytes before each use, safely
//! when two commands start at once, and never into a folder other users
//! can write. The README's test installs it with `cargo install` itself;
//! here the packages as they would be published are installed too, as
//! crates.io would give them to a user, with no repository around them.

use heapsampler_test_support as support;
use heapsampler_test_support::{DEADLINE, Deadline};

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A folder holding a copy of the executable alone, and a cache folder.
struct Installed {
    exe: PathBuf,
    cache: PathBuf,
    dir: PathBuf,
}

impl Installed {
    fn new(test: &str) -> Self {
        let dir = support::temp_dir(test);
        let bin = dir.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let exe = bin.join("heapsampler");
        std::fs::copy(support::heapsampler_exe(), &exe).unwrap();
        Self {
            exe,
            cache: dir.join("cache"),
            dir,
        }
    }

    /// An executable `cargo install` put in `dir/root/bin`.
    fn installed_in(dir: PathBuf) -> Self {
        Self {
            exe: dir.join("root/bin/heapsampler"),
            cache: dir.join("cache"),
            dir,
        }
    }

    /// `heapsampler ARGS` from the copy, with the cache folder as
    /// `XDG_CACHE_HOME` and no `HEAPSAMPLER_AGENT`.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.exe);
        command
            .args(args)
            .env("XDG_CACHE_HOME", &self.cache)
            .env_remove("HEAPSAMPLER_AGENT");
        command
    }

    /// `record -o NAME -- java Scenarios exit 0`: a short JVM run.
    fn record(&self, name: &str) -> Command {
        let workload = support::compiled_workload("Scenarios");
        let output = self.dir.join(name);
        let mut command = self.command(&["record", "--interval", "64k", "-o"]);
        command
            .arg(output)
            .args(["--", "java", "-cp"])
            .arg(workload)
            .args(["Scenarios", "exit", "0"]);
        command
    }

    /// The agent libraries written to the cache.
    fn cached(&self) -> Vec<PathBuf> {
        let dir = self.cache.join("heapsampler");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
            .unwrap_or_default();
        found.sort();
        found
    }
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_recorded(installed: &Installed, name: &str, output: &Output) {
    assert!(output.status.success(), "{}", text(output));
    let summary = support::summary(&installed.dir.join(name));
    assert!(
        support::summary_count(&summary, "jdk.ObjectAllocationSample") > 0,
        "{summary}"
    );
}

#[test]
fn a_lone_executable_records_with_the_agent_it_carries() {
    if !carries_agent("a_lone_executable_records_with_the_agent_it_carries") {
        return;
    }
    let installed = Installed::new("carried_agent_lone");
    assert!(installed.cached().is_empty());
    let first = installed.record("first.jfr").output_in_time();
    assert_recorded(&installed, "first.jfr", &first);

    // One library, named by version and hash, readable by the JVM, in a
    // folder of this user's that no one else can write to.
    let cached = installed.cached();
    assert_eq!(cached.len(), 1, "{cached:?}");
    let library = &cached[0];
    let name = library.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("libheapsampler-{}-", env!("CARGO_PKG_VERSION")))
            && name.ends_with(".so"),
        "{name}"
    );
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&installed.cache.join("heapsampler")), 0o700);
    assert_eq!(mode(library), 0o644);
    // The very library the build made, debug info aside: the same agent.
    let carried = std::fs::read(library).unwrap();
    assert!(carried.starts_with(b"\x7fELF"), "a shared library");

    // Used again as it is: not rewritten.
    let written_at = std::fs::metadata(library).unwrap().modified().unwrap();
    let second = installed.record("second.jfr").output_in_time();
    assert_recorded(&installed, "second.jfr", &second);
    assert_eq!(
        std::fs::metadata(library).unwrap().modified().unwrap(),
        written_at
    );

    // A copy cut short (a disk that filled, a hand that edited it) is found
    // different and written again whole before the JVM loads it.
    std::fs::write(library, &carried[..carried.len() / 2]).unwrap();
    let third = installed.record("third.jfr").output_in_time();
    assert_recorded(&installed, "third.jfr", &third);
    assert_eq!(std::fs::read(library).unwrap(), carried);
    assert_eq!(installed.cached(), cached, "no temporary file left behind");
}

#[test]
fn commands_starting_at_once_each_find_a_whole_library() {
    if !carries_agent("commands_starting_at_once_each_find_a_whole_library") {
        return;
    }
    let installed = Installed::new("carried_agent_at_once");
    let names: Vec<String> = (0..4).map(|i| format!("run{i}.jfr")).collect();
    let running: Vec<_> = names
        .iter()
        .map(|name| {
            installed
                .record(name)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn_within(DEADLINE)
        })
        .collect();
    for (name, run) in names.iter().zip(running) {
        assert_recorded(&installed, name, &run.wait_with_output());
    }
    assert_eq!(installed.cached().len(), 1, "{:?}", installed.cached());
}

#[test]
fn a_cache_others_can_write_to_is_refused_with_what_to_do() {
    if !carries_agent("a_cache_others_can_write_to_is_refused_with_what_to_do") {
        return;
    }
    let installed = Installed::new("carried_agent_shared_cache");
    let dir = installed.cache.join("heapsampler");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let output = installed.record("refused.jfr").output_in_time();
    let stderr = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot write the agent library to {}: other users can write to it (mode 777)",
            dir.display()
        )) && stderr.contains("give one with --agent or HEAPSAMPLER_AGENT"),
        "{stderr}"
    );
    assert!(installed.cached().is_empty(), "{:?}", installed.cached());
    assert!(!installed.dir.join("refused.jfr").exists());
}

#[test]
fn an_agent_named_by_the_environment_must_exist() {
    let installed = Installed::new("carried_agent_named");
    let output = installed
        .record("named.jfr")
        .env("HEAPSAMPLER_AGENT", "/no/such/libheapsampler.so")
        .output_in_time();
    let stderr = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("HEAPSAMPLER_AGENT /no/such/libheapsampler.so: no such file"),
        "{stderr}"
    );
    assert!(installed.cached().is_empty(), "named, so never written");
}

/// A cold release build of the command line and its agent on two busy
/// cores takes about 10 minutes; three times that is a hang.
const INSTALL_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// The Cargo running the tests, in `dir`.
/// Cargo in `dir`, building as an install does: with the agent carried,
/// whatever this build skipped.
fn cargo(dir: &Path) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(dir)
        .env_remove("HEAPSAMPLER_NO_CARRIED_AGENT");
    command
}

/// Whether the workspace's executable carries the agent: not when built
/// with `HEAPSAMPLER_NO_CARRIED_AGENT` (convert/build.rs), a developer's
/// switch, which CI never sets; then `test` is skipped and says so.
fn carries_agent(test: &str) -> bool {
    let skipped =
        option_env!("HEAPSAMPLER_NO_CARRIED_AGENT").is_some_and(|v| !v.is_empty() && v != "0");
    if skipped {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: CI=true and the executable was built with HEAPSAMPLER_NO_CARRIED_AGENT"
        );
        support::say_skipped(format_args!(
            "{test}: skipped: built with HEAPSAMPLER_NO_CARRIED_AGENT, the executable carries no agent"
        ));
    }
    !skipped
}

/// Runs `command`, which must succeed within the install's deadline.
fn succeed(command: &mut Command) {
    let output = command.output_within(INSTALL_DEADLINE);
    assert!(output.status.success(), "{command:?}: {}", text(&output));
}

#[test]
fn the_published_packages_install_a_heapsampler_that_records() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // Outside the workspace, as Cargo's own download folder is: a package
    // inside a workspace that does not list it is refused. One name per
    // checkout, so that a run's build replaces the last one's in the shared
    // target, and two checkouts' suites running at once do not share it.
    let checkout = {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        workspace.canonicalize().unwrap().hash(&mut hasher);
        hasher.finish()
    };
    let dir = std::env::temp_dir().join(format!("heapsampler-tests-published-{checkout:016x}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    // The packages as `cargo publish` would upload them (the agent's
    // library package and the test support are not published).
    let packaged = dir.join("target");
    succeed(
        cargo(&workspace)
            .args([
                "package",
                "--workspace",
                "--no-verify",
                "--offline",
                "--allow-dirty",
            ])
            .args(["--exclude", "heapsampler-agent-cdylib"])
            .args(["--exclude", "heapsampler-test-support"])
            .env("CARGO_TARGET_DIR", &packaged),
    );

    // Unpacked as Cargo unpacks what it downloads, and found by the
    // version their dependents ask for: a `[patch.crates-io]` in the
    // configuration of the folder where Cargo runs, which the agent's build
    // inside the install's build reads too.
    let crates = dir.join("crates");
    std::fs::create_dir(&crates).unwrap();
    let mut patches = String::from("[patch.crates-io]\n");
    for entry in std::fs::read_dir(packaged.join("package")).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .strip_suffix(".crate")
        else {
            continue;
        };
        // Stamped now (-m), not with the packaged times, so that Cargo
        // builds this run's sources rather than finding the last run's
        // artifacts, at the same paths, fresh.
        succeed(
            Command::new("tar")
                .arg("-xzmf")
                .arg(&path)
                .arg("-C")
                .arg(&crates),
        );
        let package = name
            .strip_suffix(&format!("-{}", env!("CARGO_PKG_VERSION")))
            .unwrap();
        patches += &format!("{package} = {{ path = {:?} }}\n", crates.join(name));
    }
    std::fs::create_dir(dir.join(".cargo")).unwrap();
    std::fs::write(dir.join(".cargo/config.toml"), &patches).unwrap();
    let agent = crates.join(format!("heapsampler-agent-{}", env!("CARGO_PKG_VERSION")));
    assert!(agent.join("library.rs").is_file(), "{patches}");
    assert!(
        !agent.join("cdylib").exists(),
        "a package holds no nested package: the agent's library package is not published"
    );

    // Built where the README's install builds, so that the dependencies
    // compiled there serve both.
    let install_target = workspace.join("target/readme-install");
    let convert = crates.join(format!("heapsampler-cli-{}", env!("CARGO_PKG_VERSION")));
    succeed(
        cargo(&dir)
            .args(["install", "--offline", "--locked", "--path"])
            .arg(&convert)
            .arg("--root")
            .arg(dir.join("root"))
            .env("CARGO_TARGET_DIR", &install_target),
    );
    let bin: Vec<_> = std::fs::read_dir(dir.join("root/bin"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(bin, ["heapsampler"]);

    // The agent was built from the published agent package.
    let built_from_it = std::fs::read_dir(install_target.join("release/build"))
        .unwrap()
        .filter_map(|entry| {
            std::fs::read_to_string(entry.unwrap().path().join("out/agent-package/Cargo.toml")).ok()
        })
        .any(|manifest| manifest.contains(agent.to_str().unwrap()));
    assert!(
        built_from_it,
        "no library package made from {}",
        agent.display()
    );

    let installed = Installed::installed_in(dir);
    let output = installed.record("published.jfr").output_in_time();
    assert_recorded(&installed, "published.jfr", &output);
    assert_eq!(installed.cached().len(), 1);
    std::fs::remove_dir_all(&installed.dir).unwrap();
}
