import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * A service with leaks whose rates are known: what the leak analysis is
 * checked against.
 *
 * Usage: java Leaks SECONDS [leak-a KIB_PER_S] [leak-b KIB_PER_S]
 *                           [cache MIB] [garbage MIB_PER_S] [sessions KIB_PER_S]
 *                           [chains PER_S]
 *
 * Two worker threads, worker-0 and worker-1, run for SECONDS of wall time:
 * <ul>
 *   <li>background garbage (default 24 MiB/s in all): request-like work
 *       ({@code Request.parse}, {@code Pricing.quote}, {@code Response.render}:
 *       strings, maps, boxed numbers, builders) dead a moment later. Each
 *       worker allocates half the rate in all, as the JVM counts its bytes
 *       ({@code getCurrentThreadAllocatedBytes}), so requests fill what the
 *       other work leaves. With {@code -Xmn16m} (eden about 13 MiB) that is
 *       a young collection every half second or so: dozens in a run;
 *   <li>sessions on worker-0 (default 256 KiB/s): {@code Session.open}
 *       keeps a 2 KiB buffer, an attribute map and a name, each session
 *       closed 2 s after it opened: about 512 KiB of buffers live at any
 *       time, never growing. The shutdown closes the open ones, so none is
 *       live at the end;
 *   <li>{@code chains} on worker-1 (default none): {@code Chain.build}
 *       links 2,000 small nodes, walked once and dropped whole, PER_S a
 *       second: young garbage that reaches much (issue 45), part of the
 *       garbage's rate, not beside it;
 *   <li>{@code leak-a} on worker-0: {@code LeakA.keep} keeps byte[1008]
 *       arrays, forever reachable from a static list, at KIB_PER_S KiB per
 *       second;
 *   <li>{@code leak-b} on worker-1: {@code LeakB.keep} keeps long[62] arrays
 *       the same way, at its own rate;
 *   <li>{@code cache} on worker-1: {@code Cache.put} adds byte[4080] values
 *       to a map in insertion order; it grows to MIB MiB of values in the
 *       first fifth of the run, then each new entry evicts the oldest (the
 *       same insertion rate): its live bytes plateau. Its keys (Long), map
 *       entries and table are beside, about 2% of the values.
 * </ul>
 *
 * Every rate is paced by wall time, catching up when behind (Scenarios'
 * paced mode does the same): each quantity done by time t is its rate times
 * t, up to a few milliseconds of pacing and the scheduler's delays, so a
 * leak's kept bytes grow linearly in wall time whatever the machine's load,
 * and the run ends with exactly rate x SECONDS kept (the last round catches
 * up on what a late thread left).
 *
 * Object sizes assume a 64-bit JVM with compressed class pointers (the
 * default below 32 GiB of heap): an array takes a 16-byte header (mark word,
 * class pointer, length) and its elements, 8-aligned. So byte[1008] and
 * long[62] take 1024 and 512 bytes, and a leak of K KiB/s keeps exactly
 * K x SECONDS arrays of leak-a's or 2 x K x SECONDS of leak-b's; a cache
 * value, byte[4080], takes 4096.
 *
 * At the end the workers stop, the sessions close and System.gc() runs, so
 * that what is live at the end is what is reachable: the leaks and the
 * cache. It prints (bytes as the JVM sizes the arrays, above):
 * <pre>
 *   leak-a objects N bytes B rate BYTES_PER_S
 *   leak-b objects N bytes B rate BYTES_PER_S
 *   cache bytes B objects N
 *   collections N      (the JVM's, before the final System.gc())
 *   elapsed MS         (the workers' run, to the last catch-up)
 * </pre>
 * Run it from compiled classes (javac -d): a source launch's loader lets go
 * of the static fields when main returns, and the leaks with them.
 */
public final class Leaks {
    static final long NANOS_PER_SECOND = 1_000_000_000L;
    /** How long a worker sleeps between rounds of work. */
    static final long ROUND_MILLIS = 5;

    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        Settings settings;
        try {
            settings = Settings.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("Leaks: " + e.getMessage());
            System.err.println("usage: java Leaks SECONDS [leak-a KIB_PER_S] [leak-b KIB_PER_S]"
                    + " [cache MIB] [garbage MIB_PER_S] [sessions KIB_PER_S] [chains PER_S]");
            System.exit(2);
            return;
        }
        long start = System.nanoTime();
        long run = settings.seconds * NANOS_PER_SECOND;
        Paced leakA = new Paced(start, run, settings.leakAKibPerSecond * settings.seconds);
        Paced leakB = new Paced(start, run, 2 * settings.leakBKibPerSecond * settings.seconds);
        // The cache's whole capacity is inserted in each fifth of the run.
        Paced cache = new Paced(start, run, 5 * Cache.capacity(settings.cacheMib));
        Paced sessions = new Paced(start, run, settings.sessionsKibPerSecond * settings.seconds / 2);
        Paced chains = new Paced(start, run, settings.chainsPerSecond * settings.seconds);
        long garbagePerWorker = (settings.garbageMibPerSecond << 20) * settings.seconds / 2;
        Cache.resize(Cache.capacity(settings.cacheMib));

        Thread first = worker("worker-0", start, run, garbagePerWorker, now -> {
            while (leakA.next(now)) {
                LeakA.keep();
            }
            Session.closeOpenedBefore(now - 2 * NANOS_PER_SECOND);
            while (sessions.next(now)) {
                Session.open(sessions.done, now);
            }
        });
        Thread second = worker("worker-1", start, run, garbagePerWorker, now -> {
            while (leakB.next(now)) {
                LeakB.keep();
            }
            while (cache.next(now)) {
                Cache.put(cache.done);
            }
            while (chains.next(now)) {
                sink = Chain.walk(Chain.build(chains.done));
            }
        });
        first.start();
        second.start();
        first.join();
        second.join();
        long elapsed = System.nanoTime() - start;
        long collections = 0;
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            collections += Math.max(0, bean.getCollectionCount());
        }
        Session.closeAll();
        System.gc();

        System.out.println("leak-a objects " + LeakA.KEPT.size() + " bytes " + LeakA.KEPT.size() * LeakA.SIZE
                + " rate " + settings.leakAKibPerSecond * 1024);
        System.out.println("leak-b objects " + LeakB.KEPT.size() + " bytes " + LeakB.KEPT.size() * LeakB.SIZE
                + " rate " + settings.leakBKibPerSecond * 1024);
        System.out.println("cache bytes " + Cache.size() * Cache.SIZE + " objects " + Cache.size());
        System.out.println("collections " + collections);
        System.out.println("elapsed " + elapsed / 1_000_000);
    }

    /**
     * A worker that, every round, serves requests until its allocated
     * bytes, as the JVM counts them, reach its share of the garbage due,
     * then does its own work, each paced by the round's time; the first
     * round at or after the run's end catches everything up, and is the
     * last. Garbage goes first, so that the first allocation of a round
     * (the first after a collection the thread slept through, in a new
     * TLAB) is a request's: with the leaks first, JDK 17's samples put
     * leak-b above its kept bytes in six runs of six (by 3% to 70%); after
     * the garbage, within the sampling's noise either side.
     */
    static Thread worker(String name, long start, long run, long garbage, LongConsumer work) {
        return new Thread(() -> {
            var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long before = threads.getCurrentThreadAllocatedBytes();
            Paced allocated = new Paced(start, run, garbage);
            long request = 0;
            while (true) {
                long now = System.nanoTime();
                long due = allocated.due(now);
                while (threads.getCurrentThreadAllocatedBytes() - before < due) {
                    sink = Response.render(Request.parse(request), Pricing.quote(request));
                    request++;
                }
                work.accept(now);
                if (now - start >= run) {
                    return;
                }
                try {
                    Thread.sleep(ROUND_MILLIS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
        }, name);
    }

    /**
     * A quantity due in proportion to wall time: {@code total} by the end
     * of the run, none at its start.
     */
    static final class Paced {
        final long start;
        final long run;
        final long total;
        /** The units done so far (by {@link #next}). */
        long done;

        Paced(long start, long run, long total) {
            this.start = start;
            this.run = run;
            this.total = total;
        }

        /** What is due at {@code now}: from the run's end on, all of it. */
        long due(long now) {
            long elapsed = Math.min(Math.max(0, now - start), run);
            return elapsed == run ? total : (long) ((double) total * elapsed / run);
        }

        /** Whether one more unit is due at {@code now}; if so, it counts as done. */
        boolean next(long now) {
            if (done >= due(now)) {
                return false;
            }
            done++;
            return true;
        }
    }

    /** Kept forever: 1 KiB arrays. */
    static final class LeakA {
        /** byte[1008]'s bytes in the heap: a 16-byte header and 1008. */
        static final long SIZE = 1024;
        static final List<byte[]> KEPT = new ArrayList<>();

        static void keep() {
            KEPT.add(new byte[1008]);
        }
    }

    /** Kept forever: 512-byte arrays of another class. */
    static final class LeakB {
        /** long[62]'s bytes in the heap: a 16-byte header and 62 x 8. */
        static final long SIZE = 512;
        static final List<long[]> KEPT = new ArrayList<>();

        static void keep() {
            KEPT.add(new long[62]);
        }
    }

    /** A bounded cache in insertion order: the eldest entry goes first. */
    static final class Cache {
        /** byte[4080]'s bytes in the heap: a 16-byte header and 4080. */
        static final long SIZE = 4096;
        static Map<Long, byte[]> entries = new LinkedHashMap<>();

        static long capacity(long mib) {
            return (mib << 20) / SIZE;
        }

        static void resize(long capacity) {
            entries = new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, byte[]> eldest) {
                    return size() > capacity;
                }
            };
        }

        static void put(long key) {
            entries.put(key, new byte[4080]);
        }

        static long size() {
            return entries.size();
        }
    }

    /** A linked chain of small nodes, dropped whole once walked. */
    static final class Chain {
        static final int NODES = 2000;
        final Chain next;
        final long value;

        Chain(Chain next, long value) {
            this.next = next;
            this.value = value;
        }

        static Chain build(long seed) {
            Chain head = null;
            for (int i = 0; i < NODES; i++) {
                head = new Chain(head, seed + i);
            }
            return head;
        }

        static Long walk(Chain head) {
            long sum = 0;
            for (Chain node = head; node != null; node = node.next) {
                sum += node.value;
            }
            return sum;
        }
    }

    /** A session: lives 2 s, then is closed and dropped. */
    static final class Session {
        static final ArrayDeque<Session> OPEN = new ArrayDeque<>();
        final long opened;
        final String user;
        final Map<String, Object> attributes = new HashMap<>();
        final byte[] buffer = new byte[2048 - 16];

        Session(long id, long opened) {
            this.opened = opened;
            this.user = "user-" + id;
            attributes.put("locale", "en-GB");
            attributes.put("cart", new ArrayList<>(List.of(id, id + 1, id + 2)));
        }

        static void open(long id, long now) {
            OPEN.addLast(new Session(id, now));
        }

        static void closeOpenedBefore(long time) {
            while (!OPEN.isEmpty() && OPEN.peekFirst().opened < time) {
                OPEN.removeFirst();
            }
        }

        static void closeAll() {
            OPEN.clear();
        }
    }

    /** A parsed request: short-lived. */
    record Request(long id, String customer, int items, Map<String, String> fields) {
        static Request parse(long id) {
            String text = "customer=c" + (id * 7919 % 100_003) + "&items=" + (id % 9 + 1)
                    + "&sku=SKU-" + (id % 113) + "&note=leave at the door";
            Map<String, String> fields = new HashMap<>();
            for (String pair : text.split("&")) {
                String[] kv = pair.split("=", 2);
                fields.put(kv[0], kv[1]);
            }
            return new Request(id, fields.get("customer"), Integer.parseInt(fields.get("items")), fields);
        }
    }

    /** Prices as boxed numbers (above the Integer cache): short-lived. */
    static final class Pricing {
        static List<Integer> quote(long seed) {
            List<Integer> prices = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                prices.add(1000 + (int) ((seed * 31 + i * 17) % 5000));
            }
            return prices;
        }
    }

    /** A rendered response: short-lived. */
    static final class Response {
        static String render(Request request, List<Integer> prices) {
            StringBuilder out = new StringBuilder();
            long total = 0;
            for (int i = 0; i < request.items(); i++) {
                int price = prices.get(i);
                total += price;
                out.append(request.fields().get("sku")).append(" x1 @ ").append(price / 100.0).append('\n');
            }
            out.append("total for ").append(request.customer()).append(": ").append(total / 100.0);
            return out.toString();
        }
    }

    /** The command line, checked. */
    record Settings(long seconds, long leakAKibPerSecond, long leakBKibPerSecond, long cacheMib,
            long garbageMibPerSecond, long sessionsKibPerSecond, long chainsPerSecond) {
        static Settings parse(String[] args) {
            if (args.length == 0 || args.length % 2 == 0) {
                throw new IllegalArgumentException("expected SECONDS, then options each with a value");
            }
            long seconds = number("SECONDS", args[0]);
            if (seconds == 0) {
                throw new IllegalArgumentException("SECONDS must be at least 1");
            }
            long leakA = 0, leakB = 0, cache = 0, garbage = 24, sessions = 256, chains = 0;
            for (int i = 1; i < args.length; i += 2) {
                long value = number(args[i], args[i + 1]);
                switch (args[i]) {
                    case "leak-a" -> leakA = value;
                    case "leak-b" -> leakB = value;
                    case "cache" -> cache = value;
                    case "garbage" -> garbage = value;
                    case "sessions" -> sessions = value;
                    case "chains" -> chains = value;
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            return new Settings(seconds, leakA, leakB, cache, garbage, sessions, chains);
        }

        static long number(String name, String text) {
            try {
                long value = Long.parseLong(text);
                if (value < 0 || value > 1 << 20) {
                    throw new IllegalArgumentException(name + " " + text + ": expected 0 to 1048576");
                }
                return value;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " " + text + ": expected a whole number");
            }
        }
    }
}
