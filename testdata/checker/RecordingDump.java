import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.StringJoiner;

import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordedThreadGroup;
import jdk.jfr.consumer.RecordingFile;

/**
 * Reads a recording with the JDK's own parser (jdk.jfr.consumer.RecordingFile)
 * and prints every event on one line, every field in declaration order, with
 * full precision: times as nanoseconds since the epoch, durations in
 * nanoseconds, classes and methods by name and descriptor, frames with line,
 * bytecode index and type, threads with both names and ids. The Rust tests
 * compare these lines with what they wrote.
 *
 * Usage: java RecordingDump [--types TYPE,...] FILE.jfr
 *        java RecordingDump --settings FILE.jfr   (each event type's setting descriptors)
 *        java RecordingDump --count-each FILE.jfr...   (a line per file: its events
 *            as a number, or "error: " and why the JDK cannot read it; one JVM for many)
 * Exit code 1 (with the exception on stderr) if the JDK cannot read the file.
 */
public final class RecordingDump {
    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--settings")) {
            settings(Path.of(args[1]));
            return;
        }
        if (args.length > 0 && args[0].equals("--count-each")) {
            for (int f = 1; f < args.length; f++) {
                System.out.println(count(Path.of(args[f])));
            }
            return;
        }
        List<String> only = null;
        int i = 0;
        if (args.length > 1 && args[0].equals("--types")) {
            only = List.of(args[1].split(","));
            i = 2;
        }
        StringBuilder out = new StringBuilder(1 << 16);
        try (RecordingFile file = new RecordingFile(Path.of(args[i]))) {
            while (file.hasMoreEvents()) {
                RecordedEvent event = file.readEvent();
                String type = event.getEventType().getName();
                if (only != null && !only.contains(type)) {
                    continue;
                }
                out.append(type);
                for (ValueDescriptor field : event.getFields()) {
                    out.append(' ').append(field.getName()).append('=');
                    if (field.getName().equals("startTime")) {
                        out.append(nanos(event.getStartTime()));
                    } else if (field.getName().equals("duration")) {
                        out.append(event.getDuration().toNanos());
                    } else {
                        value(out, event.getValue(field.getName()));
                    }
                }
                out.append('\n');
                if (out.length() > 1 << 20) {
                    System.out.print(out);
                    out.setLength(0);
                }
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    /** The events of the file as the JDK reads them, or "error: " and why it cannot. */
    static String count(Path path) {
        long events = 0;
        try (RecordingFile file = new RecordingFile(path)) {
            while (file.hasMoreEvents()) {
                file.readEvent();
                events++;
            }
            return Long.toString(events);
        } catch (Exception | Error e) {
            return "error: " + String.valueOf(e).replace('\n', ' ');
        }
    }

    static void settings(Path path) throws Exception {
        try (RecordingFile file = new RecordingFile(path)) {
            for (jdk.jfr.EventType type : file.readEventTypes()) {
                for (jdk.jfr.SettingDescriptor setting : type.getSettingDescriptors()) {
                    System.out.println(type.getName() + " " + setting.getName() + "=" + setting.getDefaultValue()
                            + " " + setting.getTypeName() + " \"" + setting.getLabel() + "\"");
                }
            }
        }
    }

    static long nanos(Instant instant) {
        return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
    }

    static void value(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            quote(out, s);
        } else if (value instanceof Character c) {
            out.append("char:").append((int) c.charValue());
        } else if (value instanceof RecordedThread t) {
            out.append("thread(");
            quote(out, t.getJavaName());
            out.append(',').append(t.getJavaThreadId()).append(',');
            quote(out, t.getOSName());
            out.append(',').append(t.getOSThreadId()).append(',');
            RecordedThreadGroup group = t.getThreadGroup();
            if (group == null) {
                out.append("null");
            } else {
                quote(out, group.getName());
                RecordedThreadGroup parent = group.getParent();
                out.append('<');
                if (parent == null) {
                    out.append("null");
                } else {
                    quote(out, parent.getName());
                }
            }
            out.append(')');
        } else if (value instanceof RecordedStackTrace s) {
            out.append("stack(").append(s.isTruncated()).append(":");
            StringJoiner frames = new StringJoiner(";");
            for (RecordedFrame frame : s.getFrames()) {
                RecordedMethod method = frame.getMethod();
                frames.add(method.getType().getName() + "." + method.getName() + method.getDescriptor()
                        + ":" + frame.getLineNumber() + ":" + frame.getBytecodeIndex() + ":" + frame.getType()
                        + ":" + method.getModifiers() + ":" + method.isHidden());
            }
            out.append(frames).append(')');
        } else if (value instanceof RecordedClass c) {
            out.append("class(").append(c.getName()).append(',').append(c.getModifiers()).append(',');
            out.append(c.getClassLoader() == null ? "null" : String.valueOf(c.getClassLoader().getName()));
            out.append(')');
        } else if (value instanceof RecordedMethod m) {
            out.append("method(").append(m.getType().getName()).append('.').append(m.getName())
                    .append(m.getDescriptor()).append(')');
        } else if (value instanceof RecordedObject o) {
            out.append('{');
            String sep = "";
            for (ValueDescriptor field : o.getFields()) {
                out.append(sep).append(field.getName()).append('=');
                value(out, o.getValue(field.getName()));
                sep = ",";
            }
            out.append('}');
        } else if (value != null && value.getClass().isArray()) {
            out.append('[');
            int length = java.lang.reflect.Array.getLength(value);
            for (int i = 0; i < length; i++) {
                if (i > 0) {
                    out.append(',');
                }
                value(out, java.lang.reflect.Array.get(value, i));
            }
            out.append(']');
        } else if (value instanceof Float f) {
            out.append("float:").append(Integer.toHexString(Float.floatToRawIntBits(f)));
        } else if (value instanceof Double d) {
            out.append("double:").append(Long.toHexString(Double.doubleToRawLongBits(d)));
        } else {
            out.append(value);
        }
    }

    /** Quotes a string with every non-printable-ASCII character escaped as \\uXXXX. */
    static void quote(StringBuilder out, String s) {
        if (s == null) {
            out.append("null");
            return;
        }
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
                out.append(c);
            } else {
                out.append(String.format("\\u%04x", (int) c));
            }
        }
        out.append('"');
    }
}
