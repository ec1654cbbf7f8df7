//! How a JVM says which heapsampler agent is in it and whether it records:
//! system properties that the agent sets when a recording starts, the
//! recording's cleared when it stops.
//!
//! A JVM can hold several copies of the agent library at once: each file
//! loaded (`-agentpath:`, or `jcmd PID JVMTI.agent_load FILE`) is a library
//! of its own, with its own statics. Only the copy that started a
//! recording knows it, and only the first copy to record can sample at all
//! (JVMTI gives the sampling capability to one environment, which the
//! copy keeps for its next recordings). So a command that attaches, asks
//! for a snapshot or stops (`heapsampler attach`, `dump`, `detach PID`)
//! reads the announcement first (`jcmd PID VM.system_properties`) and
//! loads the file it names, the copy already loaded; and an attach, by any
//! copy, is refused while a recording runs.
//!
//! The properties are the JVM's Java system properties (what
//! `System.getProperty` answers), set over JNI: the program can see them,
//! as it can see any property set by an agent or a launcher.

use std::path::PathBuf;

/// The names of the properties, each once.
pub mod property {
    /// The agent's version (its package version, `0.1.0`).
    pub const VERSION: &str = "heapsampler.agent.version";
    /// The absolute path of the agent library that samples in this JVM:
    /// the file to load to reach it.
    pub const LIBRARY: &str = "heapsampler.agent.library";
    /// The absolute path of the recording it writes; not set when none
    /// runs.
    pub const RECORDING: &str = "heapsampler.recording";
}

/// The agent in a JVM, as it announces itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The agent's version.
    pub version: String,
    /// The agent library: the file to load to reach it.
    pub library: PathBuf,
    /// The recording's file, while one runs.
    pub recording: Option<PathBuf>,
}

impl Announcement {
    /// The properties to set, names and values; `None` to clear.
    pub fn properties(&self) -> [(&'static str, Option<String>); 3] {
        let text = |path: &PathBuf| path.display().to_string();
        [
            (property::VERSION, Some(self.version.clone())),
            (property::LIBRARY, Some(text(&self.library))),
            (property::RECORDING, self.recording.as_ref().map(text)),
        ]
    }

    /// The announcement the properties make, given what `lookup` answers
    /// for each name; `None` without an agent's version and library (no
    /// agent, or one that does not announce itself).
    pub fn from_properties(lookup: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Some(Self {
            version: lookup(property::VERSION)?,
            library: PathBuf::from(lookup(property::LIBRARY)?),
            recording: lookup(property::RECORDING).map(PathBuf::from),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read_back(announced: &Announcement) -> Option<Announcement> {
        let set: HashMap<&str, String> = announced
            .properties()
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?)))
            .collect();
        Announcement::from_properties(|name| set.get(name).cloned())
    }

    #[test]
    fn the_properties_read_back_as_the_announcement() {
        let recording = Announcement {
            version: "0.1.0".to_owned(),
            library: PathBuf::from("/opt/a b/libheapsampler.so"),
            recording: Some(PathBuf::from("/tmp/r=1.jfr")),
        };
        assert_eq!(read_back(&recording), Some(recording.clone()));
        let stopped = Announcement {
            recording: None,
            ..recording
        };
        assert_eq!(read_back(&stopped), Some(stopped));
    }

    #[test]
    fn without_a_version_or_a_library_there_is_no_announcement() {
        for name in [property::VERSION, property::LIBRARY] {
            let announcement = Announcement::from_properties(|asked| {
                (asked != name).then(|| "/something".to_owned())
            });
            assert_eq!(announcement, None, "without {name}");
        }
    }
}
