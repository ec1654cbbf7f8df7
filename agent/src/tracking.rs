//! Which samples' liveness a session tracks, decided once at its start
//! (`VMInit` or an attach, [`crate::session::tracking_plan`]) so that
//! every sample is judged alike: the size limit (`live_max`), and, from the
//! collector and `live_rate=`, whether a share of the samples is tracked
//! ([`TrackingPlan`]); how the collector is told ([`generational_zgc`]);
//! and when it can collect for the exit's live set ([`ExitCollection`]).
//!
//! Generational ZGC's young collections keep what a weak handle points to,
//! and all it reaches, until the next major collection: there a tracked
//! sample of young garbage pins what it reaches for seconds, and tracking
//! every sample brought a program that drops linked chains to a tenth of
//! its speed (BENCHMARKS.md, issue 45). So on generational ZGC
//! `live_rate=auto` tracks a share of the samples, about
//! [`heapsampler_core::tracking::AUTO_TRACKED_PER_SECOND`] a second ([`heapsampler_core::tracking`]),
//! at most [`heapsampler_core::tracking::MAX_TRACKED_SINCE_MAJOR`] since
//! the last major collection. G1, Parallel, Serial, JDK 17's ZGC and
//! Shenandoah (generational too: its young collections clear weak handles)
//! track every sample.

use std::ffi::CStr;

/// What a session's start asks of the JVM, on the thread that starts it.
pub trait StartVm {
    /// One of the JVM's flags as text (`"true"`); `None` if the JVM has no
    /// such flag or cannot say.
    fn vm_flag(&mut self, name: &CStr) -> Option<String>;
    /// A Java system property; `None` if it is not set or cannot be read.
    fn system_property(&mut self, name: &str) -> Option<String>;
    /// The management names of the JVM's collectors (`ZGC Minor Cycles`);
    /// `None` without the management interface.
    fn collector_names(&mut self) -> Option<Vec<String>>;
}

/// Which samples' liveness a session tracks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackingPlan {
    /// Objects of this size and more are not tracked (`live_max`);
    /// `u64::MAX` tracks all.
    pub live_max: u64,
    /// The tracked samples a second the share is set for; `None`: every
    /// sample liveness covers is tracked.
    pub per_second: Option<f64>,
    /// Whether samples tracked since the last major collection are capped
    /// (generational ZGC).
    pub capped: bool,
}

impl TrackingPlan {
    /// Every sample below `live_max` tracked.
    pub fn every_sample(live_max: u64) -> Self {
        Self {
            live_max,
            per_second: None,
            capped: false,
        }
    }
}

/// The collector whose young collections keep weakly referenced objects.
const ZGC_MINOR_CYCLES: &str = "ZGC Minor Cycles";

/// Whether the JVM runs generational ZGC, and a line to say if its flags
/// and its collectors disagree.
///
/// From the flags: `UseZGC`, and `ZGenerational=true` on JDK 21 to 23
/// (JEP 439, opt-in on 21, the default from 23 by JEP 474), or any JDK
/// from 24 on, whose only ZGC is generational (JEP 490: the flag is gone,
/// and reading it fails); JDK 17's ZGC is not generational. Checked, when
/// `UseZGC` is not known false, against the collectors where the
/// management interface has them: a `ZGC Minor Cycles` collector exists
/// exactly under generational ZGC. The collectors win a disagreement: they
/// are what runs.
pub fn generational_zgc(vm: &mut impl StartVm) -> (bool, Option<String>) {
    let by_flags = match vm.vm_flag(c"UseZGC").as_deref() {
        Some("false") => return (false, None),
        Some(_) => match vm.vm_flag(c"ZGenerational").as_deref() {
            Some(generational) => Some(generational == "true"),
            None => vm
                .system_property("java.specification.version")
                .as_deref()
                .and_then(feature_version)
                .map(|version| version >= 24),
        },
        None => None,
    };
    let by_collectors = vm
        .collector_names()
        .map(|names| names.iter().any(|name| name == ZGC_MINOR_CYCLES));
    match (by_flags, by_collectors) {
        (Some(flags), Some(collectors)) if flags != collectors => (
            collectors,
            Some(format!(
                "the JVM's flags say {}generational ZGC, its collectors {}: taking the collectors' word",
                if flags { "" } else { "not " },
                if collectors {
                    "a ZGC Minor Cycles one"
                } else {
                    "no ZGC Minor Cycles one"
                }
            )),
        ),
        (_, Some(collectors)) => (collectors, None),
        (Some(flags), None) => (flags, None),
        (None, None) => (false, None),
    }
}

/// When the JVM's collector can collect for the exit's live set. Its
/// concurrent threads have stopped by VMDeath (HotSpot's `before_exit`
/// stops them before it posts VMDeath).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCollection {
    /// At VMDeath: G1, Parallel and Serial collect on the VM thread.
    AtVmDeath,
    /// Only before VMDeath, while the shutdown hooks run: ZGC waits at
    /// VMDeath forever for its driver thread, which is gone, and so does
    /// JDK 17's Shenandoah; JDK 25's returns at once without collecting.
    BeforeVmDeath,
    /// Never: Epsilon, or a JVM that cannot say its collector.
    Never,
}

impl ExitCollection {
    /// The JVM's, from its flags.
    pub fn of(vm: &mut impl StartVm) -> Self {
        let mut uses = |flags: &[&CStr]| {
            flags
                .iter()
                .any(|flag| vm.vm_flag(flag).as_deref() == Some("true"))
        };
        if uses(&[c"UseG1GC", c"UseParallelGC", c"UseSerialGC"]) {
            Self::AtVmDeath
        } else if uses(&[c"UseZGC", c"UseShenandoahGC"]) {
            Self::BeforeVmDeath
        } else {
            Self::Never
        }
    }
}

/// The feature version of a `java.specification.version` (`17`, `25`;
/// `1.8` is 8).
pub fn feature_version(specification: &str) -> Option<u32> {
    let mut parts = specification.trim().split('.');
    match parts.next()?.parse().ok()? {
        1 => parts.next()?.parse().ok(),
        version => Some(version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JVM's flags, `java.specification.version` and collectors.
    struct Jvm {
        flags: Vec<(&'static str, &'static str)>,
        version: Option<&'static str>,
        collectors: Option<Vec<&'static str>>,
    }

    impl StartVm for Jvm {
        fn vm_flag(&mut self, name: &CStr) -> Option<String> {
            let name = name.to_str().unwrap();
            self.flags
                .iter()
                .find(|(flag, _)| *flag == name)
                .map(|(_, value)| value.to_string())
        }
        fn system_property(&mut self, name: &str) -> Option<String> {
            assert_eq!(name, "java.specification.version");
            self.version.map(str::to_owned)
        }
        fn collector_names(&mut self) -> Option<Vec<String>> {
            self.collectors
                .as_ref()
                .map(|names| names.iter().map(|n| n.to_string()).collect())
        }
    }

    const GENERATIONAL: &[&str] = &[
        "ZGC Minor Cycles",
        "ZGC Minor Pauses",
        "ZGC Major Cycles",
        "ZGC Major Pauses",
    ];
    const SINGLE: &[&str] = &["ZGC Cycles", "ZGC Pauses"];

    fn zgc(
        generational: Option<&'static str>,
        version: &'static str,
        collectors: Option<&[&'static str]>,
    ) -> Jvm {
        let mut flags = vec![("UseZGC", "true"), ("UseG1GC", "false")];
        if let Some(value) = generational {
            flags.push(("ZGenerational", value));
        }
        Jvm {
            flags,
            version: Some(version),
            collectors: collectors.map(<[_]>::to_vec),
        }
    }

    /// What each JDK answers (research: JDK 17 and 25's answers in issue
    /// 45's notes; JDK 21 to 23 by their JEPs): the flags and the
    /// collectors agree.
    #[test]
    fn generational_zgc_is_told_from_the_flags_and_the_collectors() {
        for (name, mut jvm, expected) in [
            ("25", zgc(None, "25", Some(GENERATIONAL)), true),
            ("24, no beans", zgc(None, "24", None), true),
            ("23", zgc(Some("true"), "23", Some(GENERATIONAL)), true),
            (
                "21 opted in",
                zgc(Some("true"), "21", Some(GENERATIONAL)),
                true,
            ),
            ("21", zgc(Some("false"), "21", Some(SINGLE)), false),
            ("21, no beans", zgc(Some("false"), "21", None), false),
            ("17", zgc(None, "17", Some(SINGLE)), false),
            ("17, no beans", zgc(None, "17", None), false),
            (
                "G1",
                Jvm {
                    flags: vec![("UseZGC", "false"), ("UseG1GC", "true")],
                    version: Some("25"),
                    collectors: Some(vec!["G1 Young Generation", "G1 Old Generation"]),
                },
                false,
            ),
            (
                "generational Shenandoah",
                Jvm {
                    flags: vec![("UseZGC", "false"), ("ShenandoahGCMode", "generational")],
                    version: Some("25"),
                    collectors: Some(vec!["Shenandoah Cycles", "Shenandoah Pauses"]),
                },
                false,
            ),
            (
                "nothing known",
                Jvm {
                    flags: vec![],
                    version: None,
                    collectors: None,
                },
                false,
            ),
        ] {
            assert_eq!(generational_zgc(&mut jvm), (expected, None), "{name}");
        }
    }

    /// Without the version the collectors decide; against the flags they
    /// win, and the disagreement is said.
    #[test]
    fn the_collectors_decide_what_the_flags_cannot_and_win_a_disagreement() {
        let mut unversioned = zgc(None, "", Some(GENERATIONAL));
        unversioned.version = None;
        assert_eq!(generational_zgc(&mut unversioned), (true, None));
        let (generational, said) = generational_zgc(&mut zgc(None, "17", Some(GENERATIONAL)));
        assert!(generational);
        assert_eq!(
            said.as_deref(),
            Some(
                "the JVM's flags say not generational ZGC, its collectors a ZGC Minor Cycles \
                 one: taking the collectors' word"
            )
        );
        let (generational, said) = generational_zgc(&mut zgc(Some("true"), "21", Some(SINGLE)));
        assert!(!generational);
        assert!(said.unwrap().contains("flags say generational ZGC"));
    }

    #[test]
    fn the_exit_is_collected_at_vm_death_before_it_or_never_by_the_flags() {
        let flags = |flags: Vec<(&'static str, &'static str)>| Jvm {
            flags,
            version: Some("25"),
            collectors: None,
        };
        for (name, mut jvm, expected) in [
            (
                "G1",
                flags(vec![("UseZGC", "false"), ("UseG1GC", "true")]),
                ExitCollection::AtVmDeath,
            ),
            (
                "Parallel",
                flags(vec![("UseParallelGC", "true")]),
                ExitCollection::AtVmDeath,
            ),
            (
                "Serial",
                flags(vec![("UseSerialGC", "true")]),
                ExitCollection::AtVmDeath,
            ),
            ("ZGC", zgc(None, "25", None), ExitCollection::BeforeVmDeath),
            (
                "Shenandoah",
                flags(vec![("UseShenandoahGC", "true")]),
                ExitCollection::BeforeVmDeath,
            ),
            (
                "Epsilon",
                flags(vec![("UseEpsilonGC", "true"), ("UseG1GC", "false")]),
                ExitCollection::Never,
            ),
            ("nothing known", flags(vec![]), ExitCollection::Never),
        ] {
            assert_eq!(ExitCollection::of(&mut jvm), expected, "{name}");
        }
    }

    #[test]
    fn feature_versions_are_read_old_and_new() {
        for (text, version) in [("17", Some(17)), ("25", Some(25)), ("1.8", Some(8))] {
            assert_eq!(feature_version(text), version, "{text}");
        }
        for bad in ["", "x", "1", "1.x"] {
            assert_eq!(feature_version(bad), None, "{bad}");
        }
    }
}
