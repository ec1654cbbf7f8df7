import java.util.ArrayList;
import java.util.List;

/**
 * Keeps a known number of bytes, then makes garbage, and exits without a
 * collection of its own: what is live at its end is what it keeps, however
 * much garbage no collection has freed yet. Fixed work. Run with a young
 * generation larger than its garbage (-Xmn512m for up to 400 MiB) and no
 * collection runs at all before the exit.
 *
 * Usage: java LiveAtExit KEPT_MIB GARBAGE_MIB [return|exit|halt]
 * Prints "kept BYTES": the bytes of the int[] Keep.keep allocated and kept,
 * by the JVM's own count of their size (16-byte header plus 4 bytes an
 * element). Then ends as its last argument says: returns from main (the
 * default), calls System.exit(0), or Runtime.halt(0), which runs no
 * shutdown hooks.
 */
public final class LiveAtExit {
    static final int LENGTH = 2000;
    static final long ARRAY_BYTES = 16 + 4L * LENGTH;
    static final List<int[]> KEPT = new ArrayList<>();
    static volatile Object sink;

    public static void main(String[] args) {
        long kept = Long.parseLong(args[0]) << 20;
        long garbage = Long.parseLong(args[1]) << 20;
        long keptBytes = 0;
        while (keptBytes < kept) {
            Keep.keep();
            keptBytes += ARRAY_BYTES;
        }
        for (long made = 0; made < garbage; made += 4096 + 16) {
            Churn.garbage();
        }
        // The last array made is garbage too: a sample of it must be freed.
        sink = null;
        System.out.println("kept " + keptBytes);
        System.out.flush();
        switch (args.length > 2 ? args[2] : "return") {
            case "return" -> { }
            case "exit" -> System.exit(0);
            case "halt" -> Runtime.getRuntime().halt(0);
            default -> throw new IllegalArgumentException("ends by return, exit or halt: " + args[2]);
        }
    }

    static final class Keep {
        static void keep() {
            KEPT.add(new int[LENGTH]);
        }
    }

    static final class Churn {
        static void garbage() {
            sink = new byte[4096];
        }
    }
}
