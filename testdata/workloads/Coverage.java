import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;

/**
 * Known allocations in fixed patterns, for measuring how the JVM's sampler
 * places its samples (bench/coverage): each site is a method of its own that
 * allocates one kind of object at one line, and the work is fixed, never
 * paced by the clock, so every run allocates exactly what it prints.
 *
 * Usage: java Coverage.java WORKLOAD [MIB]   (MIB: the scale, default 64)
 *
 * Prints one line a site: "site METHOD OBJECTS BYTES", the site's exact
 * count and bytes. Sizes assume 64-bit HotSpot's defaults (an array's
 * header 16 bytes, an Object 16 bytes), which the bench checks against the
 * sizes the samples carry.
 *
 * Workloads:
 * - steady:  1 KiB arrays kept to the end, each after 1 KiB of 16-byte
 *            garbage objects; one thread. The issue-49 pattern, unpaced.
 * - mixed:   arrays of 16 B to 64 KiB (log-uniform, seeded), one site for
 *            each of three size classes; one thread.
 * - bursts:  MIB/8 MiB bursts of 4 KiB arrays between as much of 64-byte
 *            arrays, eight times; one thread.
 * - threads: four threads started together, each allocating 1 KiB arrays
 *            and 48-byte arrays at two shared sites.
 * - outside: eight 1 KiB arrays, then one 16 KiB array (too large for the
 *            rest of a TLAB, so often allocated outside it); one thread.
 * - large:   256 KiB arrays and 1 KiB arrays, equal bytes; one thread.
 * - gcs:     a collection (System.gc()) every MIB/16 MiB of 1 KiB arrays,
 *            each followed by one 16-byte marker object.
 */
public final class Coverage {
    static volatile Object sink;
    static final List<Object> KEPT = new ArrayList<>();

    /** Per site: objects and bytes, in the order the sites are named. */
    static final java.util.Map<String, long[]> TRUTH = new java.util.LinkedHashMap<>();

    static void count(String site, long objects, long bytes) {
        long[] truth = TRUTH.computeIfAbsent(site, s -> new long[2]);
        truth[0] += objects;
        truth[1] += bytes;
    }

    public static void main(String[] args) throws Exception {
        long scale = (args.length > 1 ? Long.parseLong(args[1]) : 64) << 20;
        switch (args[0]) {
            case "steady" -> steady(scale);
            case "mixed" -> mixed(scale);
            case "bursts" -> bursts(scale);
            case "threads" -> threads(scale);
            case "outside" -> outside(scale);
            case "large" -> large(scale);
            case "gcs" -> gcs(scale);
            default -> throw new IllegalArgumentException(args[0]);
        }
        for (var site : TRUTH.entrySet()) {
            System.out.println("site " + site.getKey() + " " + site.getValue()[0] + " " + site.getValue()[1]);
        }
        System.out.println("kept " + KEPT.size());
    }

    static void steady(long scale) {
        long n = scale / 1024;
        for (long i = 0; i < n; i++) {
            for (int j = 0; j < 64; j++) {
                garbage16();
            }
            KEPT.add(kept1k());
        }
        count("garbage16", n * 64, n * 64 * 16);
        count("kept1k", n, n * 1024);
    }

    static void garbage16() {
        sink = new Object();
    }

    static byte[] kept1k() {
        return new byte[1024 - 16];
    }

    static void mixed(long scale) {
        SplittableRandom random = new SplittableRandom(49);
        long[] small = new long[2], medium = new long[2], large = new long[2];
        long total = 0;
        while (total < 3 * scale) {
            // 16 B to 64 KiB, log-uniform, a multiple of 8.
            long size = Math.max(16, (long) Math.pow(2, 4 + 12 * random.nextDouble()) & ~7L);
            int length = (int) size - 16;
            long[] truth;
            if (size < 256) {
                mixedSmall(length);
                truth = small;
            } else if (size < 8192) {
                mixedMedium(length);
                truth = medium;
            } else {
                mixedLarge(length);
                truth = large;
            }
            truth[0]++;
            truth[1] += size;
            total += size;
        }
        count("mixedSmall", small[0], small[1]);
        count("mixedMedium", medium[0], medium[1]);
        count("mixedLarge", large[0], large[1]);
    }

    static void mixedSmall(int length) {
        sink = new byte[length];
    }

    static void mixedMedium(int length) {
        sink = new byte[length];
    }

    static void mixedLarge(int length) {
        sink = new byte[length];
    }

    static void bursts(long scale) {
        long burst = scale / 8 / 4096, calm = scale / 8 / 64;
        for (int round = 0; round < 8; round++) {
            for (long i = 0; i < burst; i++) {
                burst4k();
            }
            for (long i = 0; i < calm; i++) {
                calm64();
            }
        }
        count("burst4k", 8 * burst, 8 * burst * 4096);
        count("calm64", 8 * calm, 8 * calm * 64);
    }

    static void burst4k() {
        sink = new byte[4096 - 16];
    }

    static void calm64() {
        sink = new byte[64 - 16];
    }

    static void threads(long scale) throws Exception {
        int threads = 4;
        long each = scale / threads / 1024;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (long i = 0; i < each; i++) {
                    shared1k();
                    for (int j = 0; j < 21; j++) {
                        shared48();
                    }
                }
            }, "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        count("shared1k", threads * each, threads * each * 1024);
        count("shared48", threads * each * 21, threads * each * 21 * 48);
    }

    static void shared1k() {
        sink = new byte[1024 - 16];
    }

    static void shared48() {
        sink = new byte[48 - 16];
    }

    static void outside(long scale) {
        long rounds = scale / (8 * 1024);
        for (long i = 0; i < rounds; i++) {
            for (int j = 0; j < 8; j++) {
                inside1k();
            }
            outside16k();
        }
        count("inside1k", rounds * 8, rounds * 8 * 1024);
        count("outside16k", rounds, rounds * 16384);
    }

    static void inside1k() {
        sink = new byte[1024 - 16];
    }

    static void outside16k() {
        sink = new byte[16384 - 16];
    }

    static void large(long scale) {
        long rounds = scale / (256 * 1024);
        for (long i = 0; i < rounds; i++) {
            large256k();
            for (int j = 0; j < 256; j++) {
                small1k();
            }
        }
        count("large256k", rounds, rounds * 256 * 1024);
        count("small1k", rounds * 256, rounds * 256 * 1024);
    }

    static void large256k() {
        sink = new byte[256 * 1024 - 16];
    }

    static void small1k() {
        sink = new byte[1024 - 16];
    }

    static void gcs(long scale) {
        long between = scale / 16 / 1024;
        for (int gc = 0; gc < 16; gc++) {
            System.gc();
            marker16();
            for (long i = 0; i < between; i++) {
                between1k();
            }
        }
        count("marker16", 16, 16 * 16);
        count("between1k", 16 * between, 16 * between * 1024);
    }

    static void marker16() {
        sink = new Object();
    }

    static void between1k() {
        sink = new byte[1024 - 16];
    }
}
