//! The `heapsampler` command line as the tests run it, and Mission
//! Control's checker: every run under the tests' deadline.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::{Deadline, agent_library, compiled_workload};

/// The `heapsampler` executable cargo built for this test run: one level
/// up from the `deps` directory of the running test binary, where cargo
/// puts a package's executables for its integration tests (the path
/// `CARGO_BIN_EXE_heapsampler` names). Only `heapsampler-cli`'s tests
/// have it.
pub fn heapsampler_exe() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let built = exe
        .parent()
        .and_then(Path::parent)
        .map(|profile| profile.join("heapsampler"))
        .filter(|path| path.is_file());
    built.unwrap_or_else(|| {
        panic!(
            "no heapsampler beside {}: only heapsampler-cli's tests build it",
            exe.display()
        )
    })
}

/// `heapsampler ARGS...` to run: for a test that sets its folder or
/// environment first. Run it with [`Deadline`].
pub fn heapsampler_command<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Command {
    let mut command = Command::new(heapsampler_exe());
    command.args(args);
    command
}

/// `heapsampler ARGS...`, whatever its outcome.
pub fn heapsampler<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    heapsampler_command(args).output_in_time()
}

/// `heapsampler ARGS...`, which must succeed: its standard output and
/// standard error, as text. Fails the test with standard error otherwise.
pub fn heapsampler_ok<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> (String, String) {
    let mut command = heapsampler_command(args);
    let shown = format!("{:?}", command.get_args().collect::<Vec<_>>());
    let output = command.output_in_time();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "heapsampler {shown}: {stderr}");
    (text(&output.stdout), stderr)
}

/// `heapsampler ARGS...`, for a test of how it ends: its exit code and
/// standard error.
pub fn heapsampler_exit<S: AsRef<OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> (Option<i32>, String) {
    let output = heapsampler(args);
    (output.status.code(), text(&output.stderr))
}

/// What a program printed, as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `heapsampler record FLAGS... -o PATH -- java -cp ... NAME ARGS...`
/// with the agent this test run built, recording a bundled workload;
/// must succeed. Its standard output.
pub fn record_with_agent(path: &Path, flags: &[&str], name: &str, args: &[&str]) -> String {
    let output = heapsampler_command(["record"])
        .args(flags)
        .arg("-o")
        .arg(path)
        .arg("--agent")
        .arg(agent_library())
        .args(["--", "java", "-cp"])
        .arg(compiled_workload(name))
        .arg(name)
        .args(args)
        .output_in_time();
    assert!(
        output.status.success(),
        "heapsampler record {flags:?} -- java {name} {args:?}: {}",
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// The environment variable that names `jmc-check`, Mission Control's
/// parser and rules run headless (`shared/jmc/README.md` beside the
/// repository in CI, which `.ci/run` names here).
pub const JMC_CHECK_VARIABLE: &str = "HEAPSAMPLER_JMC_CHECK";

/// Mission Control's parser and rules, headless: `jmc-check`, which no
/// package registry offers, so a clone of the repository alone lacks it.
#[derive(Debug, Clone)]
pub struct MissionControl {
    program: PathBuf,
}

impl MissionControl {
    /// `jmc-check` where [`JMC_CHECK_VARIABLE`] names it. Without it, `None`
    /// and one line saying that `test`'s check of what Mission Control
    /// shows is skipped, except in CI (`CI=true`), where `.ci/run` names it
    /// and its absence fails the test. A name given that is no file fails
    /// the test anywhere: it was meant to run.
    pub fn find(test: &str) -> Option<Self> {
        let Some(program) = std::env::var_os(JMC_CHECK_VARIABLE) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{test}: CI=true and {JMC_CHECK_VARIABLE} is not set: .ci/run sets it to \
                 ../shared/jmc/jmc-check"
            );
            crate::say_skipped(format_args!(
                "{test}: skipped Mission Control's check: {JMC_CHECK_VARIABLE} does not name \
                 jmc-check (its parser and rules, headless), which CI has beside the repository"
            ));
            return None;
        };
        let program = PathBuf::from(program);
        assert!(
            program.is_file(),
            "{test}: {JMC_CHECK_VARIABLE}={} is no file",
            program.display()
        );
        Some(Self { program })
    }

    /// `jmc-check ARGS...`, under the tests' deadline, whatever its outcome.
    pub fn run<S: AsRef<OsStr>>(&self, args: impl IntoIterator<Item = S>) -> Output {
        Command::new(&self.program).args(args).output_in_time()
    }

    /// `jmc-check --leaks PATH`, which must succeed with no warning of
    /// Mission Control's parser: its count of old object events, and the
    /// leak objects and roots of the reference tree its Memory Leak page
    /// builds of them.
    pub fn leak_counts(&self, path: &Path) -> (u64, u64, u64) {
        let output = self.run([Path::new("--leaks"), path]);
        let said = text(&output.stdout);
        assert!(output.status.success(), "{said}{}", text(&output.stderr));
        assert!(said.contains("LOG warnings: 0"), "{said}");
        let number_after = |key: &str| -> u64 {
            let at = said.find(key).unwrap_or_else(|| panic!("{key} in {said}")) + key.len();
            said[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        (
            number_after("OldObjectSample events="),
            number_after("leakObjects="),
            number_after("rootObjects(trees)="),
        )
    }
}
