//! Python, for the tests that read our files with upstream's own Python
//! libraries (OpenTelemetry's message definitions, DuckDB, Spark).
//!
//! `.ci/run` installs `testdata/python/requirements.txt` into a virtual
//! environment and names its interpreter in `HEAPSAMPLER_PYTHON`; elsewhere
//! the `python3` on the `PATH` is tried.

use std::path::PathBuf;
use std::process::Command;

use crate::Deadline as _;

/// The Python interpreter that imports every one of `modules`, or `None`
/// (the test is skipped and says so) where there is none, except in CI
/// (`CI=true`), where `.ci/run` installs them and their absence fails the
/// test.
pub fn needed_python(test: &str, modules: &[&str]) -> Option<PathBuf> {
    let python = std::env::var_os("HEAPSAMPLER_PYTHON")
        .map(PathBuf::from)
        .or_else(|| crate::on_path("python3"));
    let imports = |python: &PathBuf| {
        let statement = format!("import {}", modules.join(", "));
        Command::new(python)
            .args(["-c", &statement])
            .output_in_time()
            .status
            .success()
    };
    let found = python.filter(imports);
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: CI=true and no Python that imports {modules:?}: .ci/run installs \
             testdata/python/requirements.txt and sets HEAPSAMPLER_PYTHON"
        );
        crate::say_skipped(format_args!(
            "{test}: skipped: no Python that imports {modules:?}"
        ));
    }
    found
}
