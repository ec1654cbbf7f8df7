//! Finding the JDK's tools (`java`, `javac`, `jcmd`, `jfr`): a path given
//! on the command line, then `$JAVA_HOME/bin`, then the `PATH`.

use std::path::{Path, PathBuf};

/// Finds JDK tool `name`, or says where it looked and what to do.
pub fn find_tool(name: &str, explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        // Asked for by name: that one or an error, never a fallback.
        return if path.is_file() {
            Ok(path.to_owned())
        } else {
            Err(format!("{}: no such file", path.display()))
        };
    }
    let from_java_home =
        std::env::var_os("JAVA_HOME").map(|home| PathBuf::from(home).join("bin").join(name));
    let from_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .collect()
        })
        .unwrap_or_default();
    from_java_home
        .into_iter()
        .chain(from_path)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "cannot find {name} (looked in $JAVA_HOME/bin and the PATH): it comes with a \
                 JDK (11 or later); install one, e.g. Debian's openjdk-17-jdk-headless, or set \
                 JAVA_HOME"
            )
        })
}
