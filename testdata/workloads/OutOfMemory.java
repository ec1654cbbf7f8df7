import java.util.ArrayList;
import java.util.List;

/**
 * Leaks into its heap until the heap runs out: keeps 64 KiB byte arrays
 * from one method (Leak.keep) in a static list, while another
 * (Churn.garbage) makes twice as many bytes of 4 KiB arrays that die at
 * once. Fixed work per step, and the steps go on until an OutOfMemoryError:
 * run it with a small heap (-Xmx64m), which sets how far it gets.
 *
 * Usage: java -Xmx64m OutOfMemory.java [exit|sleep SECONDS|throw]
 *   exit (default): catches the error, prints "oom MIB" (the MiB kept) and
 *     returns from main, the leak still reachable;
 *   sleep SECONDS: as exit, then sleeps (a test kills it meanwhile);
 *   throw: lets the error end main uncaught.
 */
public final class OutOfMemory {
    static final int LEAKED_BYTES = 64 * 1024;
    static final int GARBAGE_BYTES = 4 * 1024;
    /** Churn's bytes per step: twice Leak's. */
    static final int GARBAGE_PER_STEP = 2 * LEAKED_BYTES / GARBAGE_BYTES;

    static final List<byte[]> KEPT = new ArrayList<>();
    static volatile byte[] sink;
    /** Given back once the heap is full, so that the lines after it can be printed. */
    static byte[] reserve = new byte[256 * 1024];

    public static void main(String[] args) throws Exception {
        String after = args.length > 0 ? args[0] : "exit";
        try {
            while (true) {
                Leak.keep();
                Churn.garbage();
            }
        } catch (OutOfMemoryError e) {
            reserve = null;
            if (after.equals("throw")) {
                throw e;
            }
        }
        System.out.println("oom " + (long) KEPT.size() * LEAKED_BYTES / (1 << 20));
        System.out.flush();
        if (after.equals("sleep")) {
            Thread.sleep(Long.parseLong(args[1]) * 1000);
        }
    }

    static final class Leak {
        static void keep() {
            KEPT.add(new byte[LEAKED_BYTES]);
        }
    }

    static final class Churn {
        static void garbage() {
            for (int i = 0; i < GARBAGE_PER_STEP; i++) {
                sink = new byte[GARBAGE_BYTES];
            }
        }
    }
}
