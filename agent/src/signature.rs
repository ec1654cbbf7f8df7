//! Class signatures as JVMTI gives them (`Ljava/lang/String;`, `[I`,
//! `LMain$$Lambda$14.0x0000000800c03000;`), and the names made of them: the
//! internal name JFR pools, the Java name messages and referrer chains
//! show, and what a signature tells of its class.

use jfr_format::java_class_name;

/// Whether a class signature from JVMTI `GetClassSignature` is a hidden
/// class's: since JDK 15 the JVM gives a hidden class the signature
/// `L` + its name + `.` + a suffix + `;`, and no other class signature has
/// a `.` outside an array's element type (an array of hidden classes is not
/// hidden, as `Class.isHidden()` says of it). Before JDK 15 there are no
/// hidden classes, and the anonymous classes of lambdas are named with a
/// `/`: not hidden, as there.
pub fn is_hidden_signature(signature: &str) -> bool {
    signature.starts_with('L') && signature.contains('.')
}

/// Whether a class signature is a primitive array's (`[I`, `[[B` is not:
/// it holds arrays).
pub fn is_primitive_array(signature: &str) -> bool {
    let bytes = signature.as_bytes();
    bytes.len() == 2 && bytes[0] == b'['
}

/// The JVM's internal name of a class signature, as JFR pools it:
/// `Ljava/lang/String;` -> `java/lang/String`; arrays and primitives keep
/// their descriptor form (`[I`, `[Ljava/lang/String;`), which the JDK's tools
/// show as `int[]` and `java.lang.String[]`.
pub fn internal_name(signature: &str) -> &str {
    signature
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(signature)
}

/// A class's name as Java writes it, from its signature:
/// `Ljava/util/HashMap$Node;` -> `java.util.HashMap$Node`, `[I` -> `int[]`,
/// `[[Ljava/lang/String;` -> `java.lang.String[][]`.
pub fn external_name(signature: &str) -> String {
    java_class_name(internal_name(signature))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As JDK 17's JVMTI signs them, and `Class.isHidden()` answers
    /// (the JVM test `hidden_true_keeps_lambda_proxy_frames_marked_hidden`
    /// checks the same end to end).
    #[test]
    fn hidden_classes_are_told_by_their_signature() {
        for (signature, hidden) in [
            ("LMain$$Lambda$14.0x0000000800c03000;", true),
            ("Ljava/lang/invoke/LambdaForm$MH.0x0000000800c04400;", true),
            ("LMain;", false),
            ("Ljava/lang/String;", false),
            ("LMain$Inner;", false),
            // An array of a hidden class is not hidden.
            ("[LMain$$Lambda$14.0x0000000800c03000;", false),
            ("[I", false),
            ("I", false),
            // JDK 11's lambda proxies are VM anonymous classes, not hidden.
            ("LMain$$Lambda$14/0x0000000800c03000;", false),
        ] {
            assert_eq!(is_hidden_signature(signature), hidden, "{signature}");
        }
    }

    #[test]
    fn names_as_java_writes_them() {
        assert_eq!(
            external_name("Ljava/util/HashMap$Node;"),
            "java.util.HashMap$Node"
        );
        assert_eq!(external_name("[I"), "int[]");
        assert_eq!(
            external_name("[[Ljava/lang/String;"),
            "java.lang.String[][]"
        );
        assert!(is_primitive_array("[B") && is_primitive_array("[J"));
        assert!(!is_primitive_array("[[B") && !is_primitive_array("[Ljava/lang/Object;"));
        assert!(!is_primitive_array("Ljava/lang/Object;"));
    }
}
