import java.util.ArrayList;
import java.util.List;

/**
 * Leaks into its heap until the heap runs out: keeps 64 KiB long[] arrays
 * from one method (Leak.keep) in a static list, while another
 * (Churn.garbage) makes twice as many bytes of 4 KiB byte[] arrays that die
 * at once. Fixed work per step, and the steps go on until an OutOfMemoryError:
 * run it with a small heap (-Xmx64m), which sets how far it gets.
 *
 * Usage: java -Xmx64m OutOfMemory.java [exit|sleep SECONDS|again SECONDS]
 *   exit (default): catches the error, prints "oom MIB in METHOD" (the MiB
 *     kept, and the method whose allocation failed: OutOfMemory$Leak.keep or
 *     OutOfMemory$Churn.garbage) and returns from main, the leak still
 *     reachable;
 *   sleep SECONDS: as exit, then sleeps (a test kills it meanwhile);
 *   again SECONDS: as exit, then for that long asks for an array the full
 *     heap cannot hold and catches the error, again and again, between
 *     churns (a program that survives its OutOfMemoryError in a loop).
 */
public final class OutOfMemory {
    static final int LEAKED_LONGS = 8 * 1024;
    static final int LEAKED_BYTES = 8 * LEAKED_LONGS;
    static final int GARBAGE_BYTES = 4 * 1024;
    /** Churn's bytes per step: twice Leak's. */
    static final int GARBAGE_PER_STEP = 2 * LEAKED_BYTES / GARBAGE_BYTES;
    /** What "again" asks for: more than the whole heap (-Xmx64m). */
    static final int TOO_BIG = 128 << 20;

    static final List<long[]> KEPT = new ArrayList<>();
    static volatile byte[] sink;
    /**
     * Given back once the heap is full, so that what follows has room: the
     * lines printed, and whatever other threads (the JIT's, the agent's)
     * allocate meanwhile on a busy machine. A quarter of a MiB was too little
     * there: the print ran out of heap in its turn.
     */
    static byte[] reserve = new byte[4 << 20];

    public static void main(String[] args) throws Exception {
        String after = args.length > 0 ? args[0] : "exit";
        // A collection while the heap is empty, and time for the agent's
        // writer to read its figures (Java objects: once the heap is full
        // there is no room for them), so that the recording holds the
        // heap's summaries however busy the machine.
        System.gc();
        Thread.sleep(1000);
        // Which allocation finds the heap full is up to the collector and
        // whatever else allocates then (the JVM's GC notifications do, when
        // a listener asked for them): the one that failed is said.
        boolean keeping = false;
        try {
            while (true) {
                keeping = true;
                Leak.keep();
                keeping = false;
                Churn.garbage();
            }
        } catch (OutOfMemoryError e) {
            reserve = null;
        }
        // No string concatenation: its first use bootstraps classes.
        System.out.print("oom ");
        System.out.print((long) KEPT.size() * LEAKED_BYTES / (1 << 20));
        System.out.println(keeping ? " in OutOfMemory$Leak.keep" : " in OutOfMemory$Churn.garbage");
        System.out.flush();
        if (after.equals("sleep")) {
            Thread.sleep(Long.parseLong(args[1]) * 1000);
        }
        if (after.equals("again")) {
            long end = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
            while (System.nanoTime() < end) {
                try {
                    sink = new byte[TOO_BIG];
                } catch (OutOfMemoryError e) {
                    // As before: the leak stays, the heap stays full.
                }
                Churn.garbage();
            }
        }
    }

    static final class Leak {
        static void keep() {
            KEPT.add(new long[LEAKED_LONGS]);
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
