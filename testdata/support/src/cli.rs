//! The `heapsampler` command line as the tests run it, and Mission
//! Control's checker: every run under the tests' deadline.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::{Deadline, agent_library, compiled_workload};

/// The `heapsampler` executable cargo built for this test run: one level
/// up from the `deps` directory of the running test binary, where cargo
/// puts a package's executables for its integration tests (the path
/// `CARGO_BIN_EXE_heapsampler` names). Only `heapsampler-convert`'s tests
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
            "no heapsampler beside {}: only heapsampler-convert's tests build it",
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

/// Mission Control's parser and rules, headless (`shared/jmc/README.md`),
/// from the workspace's sibling `shared/` folder, as CI lays it out.
pub fn jmc_check<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    let jmc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/jmc/jmc-check");
    Command::new(jmc).args(args).output_in_time()
}
