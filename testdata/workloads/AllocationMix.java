import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An allocation-heavy mix on several threads: strings, boxed numbers, maps,
 * lists and arrays of varied sizes, nearly all short-lived, plus a
 * long-lived cache that grows with the clock to CACHE_BUDGET by the end,
 * however fast the machine runs the rest: what a live view must find.
 *
 * Usage: java AllocationMix.java [SECONDS] [THREADS]   (defaults: 5, 4)
 */
public final class AllocationMix {
    static final Map<Integer, byte[]> CACHE = new HashMap<>();
    /** What the cache keeps by the end of the run: 32 samples' worth at the default 512 KiB. */
    static final long CACHE_BUDGET = 16L << 20;
    static final int CACHE_ENTRY = 4 << 10;
    static final long START = System.nanoTime();
    /** Nanoseconds between two entries kept, set from the run's length. */
    static long period;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 5;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        period = Math.max(1, seconds * 1_000_000_000L / (CACHE_BUDGET / CACHE_ENTRY));
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> work(end), "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        System.out.println("allocation mix done: " + CACHE.size() + " cached, checksum " + sink);
    }

    /** Keeps every entry the clock says is due, so a thread held up catches up. */
    static void remember() {
        synchronized (CACHE) {
            while (System.nanoTime() - START >= CACHE.size() * period
                    && CACHE.size() < CACHE_BUDGET / CACHE_ENTRY) {
                CACHE.put(CACHE.size(), new byte[CACHE_ENTRY]);
            }
        }
    }

    static void work(long end) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long n = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++, n++) {
                switch ((int) (n % 5)) {
                    case 0 -> sink += ("item-" + n).length();
                    case 1 -> sink += Long.valueOf(n * 31).hashCode();
                    case 2 -> {
                        Map<String, Integer> map = new HashMap<>();
                        map.put("k" + (n & 7), (int) n);
                        sink += map.size();
                    }
                    case 3 -> sink += new int[1 + random.nextInt(256)].length;
                    default -> sink += new byte[1 << random.nextInt(18)].length;
                }
            }
            remember();
        }
    }
}
