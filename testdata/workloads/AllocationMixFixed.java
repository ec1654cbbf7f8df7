import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * AllocationMix's mix as a fixed amount of work, for overhead measurements:
 * strings (concatenation, builders, splitting), collections (lists, maps,
 * deques) of boxed numbers, and short-lived arrays of varied types and sizes
 * (16 bytes to 128 KiB, log-uniform, so well below a G1 humongous object at
 * any heap of 256 MiB or more), on several threads; plus a slowly growing
 * long-lived cache (about 64 MiB at the default size) of which a part is
 * replaced as it goes, so some cached objects die old. Every thread draws
 * from its own seeded generator, so each run does the same work.
 *
 * Usage: java AllocationMixFixed.java [MILLION_OPERATIONS] [THREADS]
 *        (defaults: 54, 4; the operations are split between the threads)
 */
public final class AllocationMixFixed {
    static final Map<Integer, Object> CACHE = new ConcurrentHashMap<>();
    static final AtomicLong CACHED_BYTES = new AtomicLong();
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        long operations = (args.length > 0 ? Long.parseLong(args[0]) : 54) * 1_000_000L;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        List<Thread> workers = new ArrayList<>();
        long[] checksums = new long[threads];
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread worker = new Thread(() -> checksums[index] = work(index, operations / threads), "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        long checksum = 0;
        for (int t = 0; t < threads; t++) {
            workers.get(t).join();
            checksum += checksums[t];
        }
        System.out.println("allocation mix done: " + CACHE.size() + " cached (" + (CACHED_BYTES.get() >> 20)
                + " MiB), checksum " + checksum);
    }

    static long work(int thread, long operations) {
        SplittableRandom random = new SplittableRandom(1234 + thread);
        ArrayDeque<Object> recent = new ArrayDeque<>();
        long check = 0;
        for (long n = 0; n < operations; n++) {
            switch ((int) (n % 8)) {
                case 0 -> check += strings(random, n);
                case 1 -> check += boxing(random, n);
                case 2 -> check += map(random, n);
                case 3, 4 -> check += array(random);
                case 5 -> check += list(random, n);
                case 6 -> {
                    // Medium-lived: survives a few thousand operations.
                    recent.addLast(random.nextBoolean() ? "recent-" + n : new long[1 + random.nextInt(64)]);
                    if (recent.size() > 2000) {
                        check += recent.pollFirst() instanceof String s ? s.length() : 1;
                    }
                }
                default -> {
                    if (random.nextInt(128) == 0) {
                        check += cache(random, thread, n);
                    } else {
                        check += Integer.toHexString((int) n).length();
                    }
                }
            }
        }
        sink += check;
        return check;
    }

    static int strings(SplittableRandom random, long n) {
        String joined = "item-" + n + "/" + random.nextInt(1000) + ":" + (n * 31);
        StringBuilder builder = new StringBuilder();
        for (String part : joined.split("[-/:]")) {
            builder.append(part.toUpperCase()).append(',');
        }
        return builder.toString().hashCode() & 0xff;
    }

    static int boxing(SplittableRandom random, long n) {
        Long boxed = n * 17;
        Integer small = random.nextInt(100_000);
        Double ratio = small / 3.0;
        return (int) (boxed.hashCode() + small.hashCode() + ratio.intValue()) & 0xff;
    }

    static int map(SplittableRandom random, long n) {
        Map<String, Integer> map = new HashMap<>();
        int entries = 1 + random.nextInt(16);
        for (int i = 0; i < entries; i++) {
            map.put("k" + ((n + i) & 31), i);
        }
        return map.size();
    }

    static int list(SplittableRandom random, long n) {
        List<Long> list = new ArrayList<>();
        int entries = 1 + random.nextInt(32);
        for (int i = 0; i < entries; i++) {
            list.add(n + i);
        }
        return list.size();
    }

    /** An array of 16 bytes to 128 KiB, log-uniform, of one of four types. */
    static int array(SplittableRandom random) {
        int bytes = 1 << (4 + random.nextInt(14));
        bytes += random.nextInt(bytes);
        return switch (random.nextInt(4)) {
            case 0 -> new byte[bytes].length;
            case 1 -> new int[bytes / 4].length;
            case 2 -> new long[bytes / 8].length;
            default -> new Object[bytes / 8].length;
        };
    }

    /** Grows the cache by about 4 KiB, or replaces an entry once it is full. */
    static int cache(SplittableRandom random, int thread, long n) {
        int key = (int) (n / 8 * 64 + thread);
        Object value = random.nextBoolean() ? new byte[512 + random.nextInt(7 * 1024)] : ("cached-" + n).repeat(100);
        if (CACHED_BYTES.get() > (64 << 20)) {
            key = random.nextInt(Math.max(1, CACHE.size()));
        } else {
            CACHED_BYTES.addAndGet(value instanceof byte[] b ? b.length : 1400);
        }
        CACHE.put(key, value);
        return CACHE.size() & 1;
    }
}
