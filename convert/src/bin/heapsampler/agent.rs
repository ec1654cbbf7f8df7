//! The agent library that `record`, `attach`, `detach`, `dump` and `demo`
//! hand to a JVM: the one `--agent` or `$HEAPSAMPLER_AGENT` names, or the
//! one this executable carries (built into it by `convert/build.rs`),
//! written out once per build to a cache directory of the user's own. An
//! executable built with `HEAPSAMPLER_NO_CARRIED_AGENT` carries none and
//! uses the `libheapsampler.so` beside it, as the workspace's build leaves
//! them in `target/release/`.
//!
//! The carried library is written to
//! `$XDG_CACHE_HOME/heapsampler/` (or `~/.cache/heapsampler/`) as
//! `libheapsampler-VERSION-HASH.so`, the hash being of its bytes: builds
//! never share a file. Before each use the file is compared with the
//! carried bytes, and written again (to a temporary file, then renamed
//! over it) when they differ, so a truncated or altered copy is never
//! loaded, and two commands starting at once each rename a whole file.
//! The directory must be the user's own and writable by no one else, as a
//! library any other user could replace would run inside the JVM.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

/// The library this executable carries: empty when built without one.
const CARRIED: &[u8] = include_bytes!(env!("HEAPSAMPLER_CARRIED_AGENT"));

/// The agent library's file name.
const LIBRARY: &str = "libheapsampler.so";

/// The environment variable that names an agent library.
const AGENT_VARIABLE: &str = "HEAPSAMPLER_AGENT";

/// Permission bits that let users other than the owner write.
const WRITABLE_BY_OTHERS: u32 = 0o022;

/// The agent to use: `--agent`'s, else `$HEAPSAMPLER_AGENT`'s (either must
/// exist: a name given is never passed over), else the carried one,
/// written out to the cache, or, when none is carried, the one beside this
/// executable.
pub fn find(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return existing(path, "--agent");
    }
    if let Some(path) = std::env::var_os(AGENT_VARIABLE) {
        return existing(Path::new(&path), AGENT_VARIABLE);
    }
    if CARRIED.is_empty() {
        let executable = std::env::current_exe().map_err(|error| error.to_string())?;
        return beside(&executable);
    }
    let dir = cache_dir()?;
    write_out(&dir).map_err(|error| {
        format!(
            "cannot write the agent library to {}: {error}; give one with --agent or \
             {AGENT_VARIABLE}",
            dir.display()
        )
    })
}

/// The library beside `executable`, for an executable that carries none.
fn beside(executable: &Path) -> Result<PathBuf, String> {
    let path = executable.with_file_name(LIBRARY);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "this heapsampler was built with HEAPSAMPLER_NO_CARRIED_AGENT, so it carries no \
             agent library, and there is none beside it ({}): build both with `cargo build \
             --release`, or give one with --agent or {AGENT_VARIABLE}",
            path.display()
        ))
    }
}

fn existing(path: &Path, named_by: &str) -> Result<PathBuf, String> {
    if path.is_file() {
        Ok(path.to_owned())
    } else {
        Err(format!("{named_by} {}: no such file", path.display()))
    }
}

/// `$XDG_CACHE_HOME/heapsampler`, or `$HOME/.cache/heapsampler`.
fn cache_dir() -> Result<PathBuf, String> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let base = absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .ok_or_else(|| {
            format!(
                "no cache directory for the agent library (neither XDG_CACHE_HOME nor HOME \
                 is set): give one with --agent or {AGENT_VARIABLE}"
            )
        })?;
    Ok(base.join("heapsampler"))
}

/// The carried library in `dir` (made if missing), written unless a file
/// with its very bytes is there already.
fn write_out(dir: &Path) -> Result<PathBuf, String> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|error| error.to_string())?;
    let owner = own_uid()?;
    check_private(dir, owner)?;
    let name = format!(
        "libheapsampler-{}-{:016x}.so",
        env!("CARGO_PKG_VERSION"),
        xxh3_64(CARRIED)
    );
    let path = dir.join(name);
    if let Ok(metadata) = fs::symlink_metadata(&path) {
        let ours = metadata.is_file()
            && metadata.uid() == owner
            && metadata.mode() & WRITABLE_BY_OTHERS == 0;
        if ours && fs::read(&path).is_ok_and(|bytes| bytes == CARRIED) {
            return Ok(path);
        }
    }
    // A name no other running process writes to; the directory being
    // private, a stale one (from a process of the same id that died) is
    // ours to overwrite.
    let temporary = dir.join(format!(".libheapsampler.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&temporary)?;
        file.write_all(CARRIED)?;
        file.sync_all()?;
        fs::rename(&temporary, &path)
    })();
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(error.to_string());
    }
    Ok(path)
}

/// Fails unless `dir` is a directory (not a link to one) that `owner` owns
/// and no one else can write to.
fn check_private(dir: &Path, owner: u32) -> Result<(), String> {
    let metadata = fs::symlink_metadata(dir).map_err(|error| error.to_string())?;
    if !metadata.is_dir() {
        return Err("it is not a directory".to_owned());
    }
    if metadata.uid() != owner {
        return Err(format!(
            "it belongs to user {}, not to this one ({owner})",
            metadata.uid()
        ));
    }
    if metadata.mode() & WRITABLE_BY_OTHERS != 0 {
        return Err(format!(
            "other users can write to it (mode {:o}); `chmod go-w` it",
            metadata.mode() & 0o777
        ));
    }
    Ok(())
}

/// This process's user id: the owner of its own `/proc` entry.
fn own_uid() -> Result<u32, String> {
    fs::metadata("/proc/self")
        .map(|metadata| metadata.uid())
        .map_err(|error| format!("cannot tell this process's user (/proc/self: {error})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_executable_without_a_carried_agent_takes_the_one_beside_it() {
        let dir = std::env::temp_dir().join(format!("heapsampler-beside-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let executable = dir.join("heapsampler");
        let missing = beside(&executable).unwrap_err();
        assert!(
            missing.contains(&dir.join(LIBRARY).display().to_string()),
            "{missing}"
        );
        assert!(missing.contains("--agent"), "{missing}");
        fs::write(dir.join(LIBRARY), b"ELF").unwrap();
        assert_eq!(beside(&executable), Ok(dir.join(LIBRARY)));
        fs::remove_dir_all(&dir).unwrap();
    }
}
