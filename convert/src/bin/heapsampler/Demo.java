import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The workload `heapsampler demo` records: a small order service with the
 * two memory problems a heap profiler is for.
 *
 * <ul>
 *   <li>Allocation pressure: every request is parsed into tokens, priced with
 *       boxed numbers and answered with a freshly built report, all garbage a
 *       moment later. {@code Report.render} allocates the most.
 *   <li>A leak: {@code SessionCache.remember} keeps a 4 KiB buffer for some
 *       orders and never evicts it, so its objects are still live at the end
 *       and have outlived many collections.
 * </ul>
 *
 * The leak is paced by the clock, not by how fast orders are served: it
 * keeps {@link SessionCache#BUDGET} over the run, whatever its length and
 * the machine's speed, so the demo never outgrows its heap (a fast machine
 * serves a million orders in 5 s; one leak per order would fill 256 MiB).
 *
 * Usage: java Demo [SECONDS] (default 5), on 4 worker threads.
 */
public final class Demo {
    /** Held for the service's life, as a real cache is: reachable at its exit. */
    static SessionCache sessions;

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 5;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        ExecutorService pool = Executors.newFixedThreadPool(4, runnable -> {
            Thread thread = new Thread(runnable);
            thread.setName("order-worker-" + thread.getId());
            return thread;
        });
        SessionCache cache = new SessionCache(TimeUnit.SECONDS.toNanos(seconds));
        sessions = cache;
        List<java.util.concurrent.Future<Long>> workers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            int seed = w;
            workers.add(pool.submit(() -> serve(seed, end, cache)));
        }
        long orders = 0;
        for (var worker : workers) {
            orders += worker.get();
        }
        pool.shutdown();
        System.out.printf("served %d orders; %d sessions cached (%d MiB never freed)%n",
                orders, cache.size(), (long) cache.size() * SessionCache.BUFFER / (1 << 20));
    }

    static long serve(int seed, long end, SessionCache cache) {
        long orders = 0;
        StringBuilder request = new StringBuilder();
        while (System.nanoTime() < end) {
            request.setLength(0);
            request.append("customer=").append(seed * 1_000_003L + orders)
                    .append("&items=").append(orders % 7 + 1)
                    .append("&sku=SKU-").append(orders % 113)
                    .append("&note=please deliver to the back door");
            Order order = Order.parse(request.toString());
            String response = Report.render(order);
            if (response.isEmpty()) {
                throw new IllegalStateException();
            }
            // Some orders open a session that is never closed.
            if (orders % 8 == 0) {
                cache.remember(order.customer);
            }
            orders++;
        }
        return orders;
    }

    record Order(String customer, int items, String sku, List<Integer> prices) {
        static Order parse(String request) {
            Map<String, String> fields = new HashMap<>();
            for (String pair : request.split("&")) {
                String[] kv = pair.split("=", 2);
                fields.put(kv[0], kv[1]);
            }
            int items = Integer.parseInt(fields.get("items"));
            List<Integer> prices = new ArrayList<>();
            for (int i = 0; i < items * 16; i++) {
                prices.add(1000 + (fields.get("sku").hashCode() + i) % 5000);
            }
            return new Order(fields.get("customer"), items, fields.get("sku"), prices);
        }
    }

    static final class Report {
        static String render(Order order) {
            StringBuilder out = new StringBuilder();
            long total = 0;
            for (Integer price : order.prices()) {
                total += price;
                out.append(order.sku()).append(" x1 @ ").append(price / 100.0).append('\n');
            }
            out.append("total ").append(String.format("%.2f", total / 100.0));
            return out.toString();
        }
    }

    static final class SessionCache {
        static final int BUFFER = 4 << 10;
        /** What the cache keeps by the end of the run, however long. */
        static final long BUDGET = 32L << 20;
        private final Map<String, byte[]> sessions = new HashMap<>();
        private final long start = System.nanoTime();
        /** Nanoseconds between two sessions kept: the run's length over BUDGET's buffers. */
        private final long period;

        SessionCache(long runNanos) {
            period = Math.max(1, runNanos / (BUDGET / BUFFER));
        }

        /** Keeps a buffer for the customer when the clock says one more is due. */
        synchronized void remember(String customer) {
            if (System.nanoTime() - start < sessions.size() * period) {
                return;
            }
            sessions.put(customer, new byte[BUFFER]);
        }

        synchronized int size() {
            return sessions.size();
        }
    }
}
