import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A service with a 40 MiB steady live set that starts leaking late: what the
 * agent's watch is checked against.
 *
 * Usage: java LateLeak SECONDS LEAK_FROM_SECONDS|none
 *
 * One worker thread runs for SECONDS of wall time:
 * <ul>
 *   <li>a cache ({@code Cache.put}): 10,240 byte[4080] values, 40 MiB,
 *       filled at the start in well under a second, then turned over at
 *       256 KiB/s (a random value replaced), so that old values die in the
 *       old generation. One site fills and replaces: were they two, the
 *       replacements' site would grow as they take over (for minutes), which
 *       the watch rightly calls growth;
 *   <li>sessions ({@code Session.open}): 2 KiB buffers at 256 KiB/s, each
 *       dropped 2 s after it opened (512 KiB live);
 *   <li>request garbage ({@code Request.handle}): 4 MiB/s of small arrays
 *       and strings, dead a moment later;
 *   <li>from LEAK_FROM_SECONDS on, the leak ({@code Leak.keep}): byte[1008]
 *       arrays (1 KiB each) kept forever in a static list at 500 KiB/s.
 * </ul>
 * Every rate is paced by wall time, catching up when behind, so the leak's
 * kept bytes grow at its rate whatever the machine's load. The whole JVM
 * allocates about 5 MiB/s: under generational ZGC, where the agent tracks
 * about 16 samples a second, every sample at 512k is tracked.
 *
 * It prints, when the leak starts and at the end:
 * <pre>
 *   leak from EPOCH_MILLIS
 *   leaked N
 * </pre>
 * Run it from compiled classes (javac -d).
 */
public final class LateLeak {
    static final long NANOS_PER_SECOND = 1_000_000_000L;
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java LateLeak SECONDS LEAK_FROM_SECONDS|none");
            System.exit(2);
        }
        long seconds = Long.parseLong(args[0]);
        long leakFrom = args[1].equals("none") ? Long.MAX_VALUE : Long.parseLong(args[1]);
        long start = System.nanoTime();
        long end = start + seconds * NANOS_PER_SECOND;
        // The cache is filled at the first round, then turned over: by one
        // site, so that the values replaced and their replacements are the
        // same site's.
        Paced churn = new Paced(start, 64);
        long filled = 0;
        Paced sessions = new Paced(start, 128);
        Paced requests = new Paced(start, 1024);
        Paced leak = null;
        ArrayDeque<long[]> open = new ArrayDeque<>();
        for (long now = start; now < end; now = System.nanoTime()) {
            if (leak == null && (now - start) / NANOS_PER_SECOND >= leakFrom) {
                leak = new Paced(now, 500);
                System.out.println("leak from " + System.currentTimeMillis());
                System.out.flush();
            }
            while (filled < Cache.VALUES.length || churn.next(now)) {
                Cache.put(filled < Cache.VALUES.length ? (int) filled++ : -1);
            }
            while (!open.isEmpty() && open.peekFirst()[0] < now - 2 * NANOS_PER_SECOND) {
                open.pollFirst();
            }
            while (sessions.next(now)) {
                open.addLast(Session.open(now));
            }
            while (requests.next(now)) {
                sink = Request.handle(requests.done);
            }
            while (leak != null && leak.next(now)) {
                Leak.keep();
            }
            Thread.sleep(5);
        }
        System.out.println("leaked " + Leak.KEPT.size());
    }

    /** Counts a rate's units due by a moment: `perSecond` from `start`. */
    static final class Paced {
        final long start;
        final long perSecond;
        long done;

        Paced(long start, long perSecond) {
            this.start = start;
            this.perSecond = perSecond;
        }

        /** Whether one more unit is due at `now`; counts it. */
        boolean next(long now) {
            long due = (now - start) * perSecond / NANOS_PER_SECOND;
            if (done >= due) {
                return false;
            }
            done++;
            return true;
        }
    }

    static final class Cache {
        static final byte[][] VALUES = new byte[10_240][];
        static final SplittableRandom RANDOM = new SplittableRandom(7);

        /** Puts a value at `index`, or at a random one (-1). */
        static void put(int index) {
            VALUES[index < 0 ? RANDOM.nextInt(VALUES.length) : index] = new byte[4080];
        }
    }

    static final class Session {
        /** A session: its opening time, then its 2 KiB buffer's words. */
        static long[] open(long now) {
            long[] session = new long[254];
            session[0] = now;
            return session;
        }
    }

    static final class Request {
        /** 4 KiB of short-lived objects. */
        static Object handle(long id) {
            List<Object> parts = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                parts.add(new byte[240]);
                parts.add(Long.toString(id * 31 + i));
            }
            parts.add(new int[200]);
            return parts;
        }
    }

    static final class Leak {
        static final List<byte[]> KEPT = new ArrayList<>();

        static void keep() {
            KEPT.add(new byte[1008]);
        }
    }
}
