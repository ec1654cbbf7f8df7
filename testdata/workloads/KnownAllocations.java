import java.util.ArrayList;
import java.util.List;

/**
 * Allocates a known number of bytes of one type in one known method, on
 * named threads: what the agent's tests check the recording against.
 *
 * Usage: java KnownAllocations.java THREADS MIB_PER_THREAD
 * Prints "allocated BYTES" (the int[] bytes all threads allocated, by the
 * JVM's own count of their size: 16-byte header plus 4 bytes an element).
 */
public final class KnownAllocations {
    static final int LENGTH = 1000;
    static final long ARRAY_BYTES = 16 + 4L * LENGTH;
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long perThread = Long.parseLong(args[1]) << 20;
        List<Thread> workers = new ArrayList<>();
        long[] allocated = new long[threads];
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread worker = new Thread(() -> allocated[index] = allocate(perThread), "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            workers.get(t).join();
            total += allocated[t];
        }
        System.gc();
        System.out.println("allocated " + total);
    }

    static long allocate(long bytes) {
        long allocated = 0;
        while (allocated < bytes) {
            sink = allocateInts();
            allocated += ARRAY_BYTES;
        }
        return allocated;
    }

    static int[] allocateInts() {
        return new int[LENGTH];
    }
}
