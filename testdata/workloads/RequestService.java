import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

/**
 * Something like a small web service, as a fixed amount of work: client
 * threads write JSON requests as text; a pool of worker threads parses each
 * one into maps and lists, runs it against an in-memory store of accounts
 * and orders (look-ups, updates that copy records, searches that scan and
 * sort, an index kept current), renders a JSON response, and checksums its
 * UTF-8 bytes. The store grows as orders are placed (to several tens of MiB
 * at the default size: the newest 300,000 orders by id, and the last 10 in
 * each account's history), so part of the heap is long-lived and old objects
 * keep dying as records are replaced. Ends with "work: N ms", the time it
 * took.
 *
 * Usage: java RequestService.java [THOUSAND_REQUESTS] [WORKERS] [CLIENTS]
 *        (defaults: 300, 4, 2)
 */
public final class RequestService {
    static final int ACCOUNTS = 50_000;
    static final String[] PRODUCTS = {"apple", "banana", "cherry", "damson", "elderberry", "fig", "grape",
            "huckleberry", "kiwi", "lemon", "mango", "nectarine", "orange", "papaya", "quince", "raspberry"};

    record Order(long id, String product, int quantity, long cents, String note) {}

    record Account(String id, String name, String email, long balanceCents, int version, List<Order> history,
                   Map<String, String> tags) {}

    static final Map<String, Account> ACCOUNTS_BY_ID = new ConcurrentHashMap<>();
    static final Map<String, List<String>> ACCOUNTS_BY_PRODUCT = new ConcurrentHashMap<>();
    /** The most recent orders, by id (older ones stay only in their account's history). */
    static final Map<Long, Order> ORDERS = new ConcurrentHashMap<>();
    static final long ORDERS_KEPT = 300_000;

    public static void main(String[] args) throws Exception {
        long requests = (args.length > 0 ? Long.parseLong(args[0]) : 300) * 1000L;
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int clients = args.length > 2 ? Integer.parseInt(args[2]) : 2;

        long start = System.nanoTime();
        for (int i = 0; i < ACCOUNTS; i++) {
            String id = "acct-" + i;
            ACCOUNTS_BY_ID.put(id, new Account(id, "Customer " + i, "customer" + i + "@example.com", 100_000,
                    0, List.of(), Map.of("tier", i % 10 == 0 ? "gold" : "standard")));
        }
        for (String product : PRODUCTS) {
            ACCOUNTS_BY_PRODUCT.put(product, new ArrayList<>());
        }

        ExecutorService pool = Executors.newFixedThreadPool(workers, runnable -> {
            Thread thread = new Thread(runnable);
            thread.setName("http-worker-" + thread.getId());
            return thread;
        });
        BlockingQueue<Future<Long>> pending = new ArrayBlockingQueue<>(4096);
        List<Thread> clientThreads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int client = c;
            long count = requests / clients;
            Thread thread = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(42 + client);
                try {
                    for (long n = 0; n < count; n++) {
                        String request = request(random, client, n);
                        pending.put(pool.submit(() -> handle(request)));
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "client-" + c);
            clientThreads.add(thread);
            thread.start();
        }
        long checksum = 0;
        for (long n = 0; n < requests / clients * clients; n++) {
            checksum += pending.take().get();
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        System.out.println("served " + requests / clients * clients + " requests, " + ORDERS.size()
                + " orders stored, checksum " + checksum);
        System.out.println("work: " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }

    /** A request as a client would send it. */
    static String request(SplittableRandom random, int client, long n) {
        String account = "\"acct-" + random.nextInt(ACCOUNTS) + "\"";
        String id = "\"req-" + client + "-" + n + "\"";
        return switch (random.nextInt(10)) {
            case 0, 1, 2, 3 -> "{\"id\": " + id + ", \"op\": \"get\", \"account\": " + account + "}";
            case 4, 5, 6 -> {
                StringBuilder lines = new StringBuilder("[");
                int items = 1 + random.nextInt(5);
                for (int i = 0; i < items; i++) {
                    if (i > 0) {
                        lines.append(", ");
                    }
                    lines.append("{\"product\": \"").append(PRODUCTS[random.nextInt(PRODUCTS.length)])
                            .append("\", \"quantity\": ").append(1 + random.nextInt(9))
                            .append(", \"cents\": ").append(50 + random.nextInt(5000)).append('}');
                }
                lines.append(']');
                yield "{\"id\": " + id + ", \"op\": \"order\", \"account\": " + account + ", \"lines\": " + lines
                        + ", \"note\": \"please deliver after " + (8 + random.nextInt(10)) + " o'clock\"}";
            }
            case 7, 8 -> "{\"id\": " + id + ", \"op\": \"search\", \"product\": \""
                    + PRODUCTS[random.nextInt(PRODUCTS.length)] + "\", \"limit\": " + (5 + random.nextInt(20)) + "}";
            default -> "{\"id\": " + id + ", \"op\": \"rename\", \"account\": " + account
                    + ", \"name\": \"New Name " + n + "\", \"tags\": {\"source\": \"client-" + client
                    + "\", \"seq\": \"" + n + "\"}}";
        };
    }

    /** Parses, executes and renders one request; returns the response's checksum. */
    static long handle(String text) {
        Map<String, Object> request = asMap(new Json(text).value());
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("id", request.get("id"));
        String op = (String) request.get("op");
        switch (op) {
            case "get" -> get(request, response);
            case "order" -> order(request, response);
            case "search" -> search(request, response);
            case "rename" -> rename(request, response);
            default -> response.put("error", "unknown op " + op);
        }
        byte[] bytes = render(response, new StringBuilder()).toString().getBytes(StandardCharsets.UTF_8);
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return crc.getValue();
    }

    static void get(Map<String, Object> request, Map<String, Object> response) {
        Account account = ACCOUNTS_BY_ID.get((String) request.get("account"));
        response.put("account", describe(account));
        List<Object> orders = new ArrayList<>();
        for (Order order : account.history()) {
            orders.add(describe(order));
        }
        response.put("recentOrders", orders);
    }

    static final AtomicLong ORDER_IDS = new AtomicLong();

    static void order(Map<String, Object> request, Map<String, Object> response) {
        String accountId = (String) request.get("account");
        List<Object> placed = new ArrayList<>();
        List<Order> orders = new ArrayList<>();
        long total = 0;
        for (Object line : (List<?>) request.get("lines")) {
            Map<String, Object> item = asMap(line);
            int quantity = ((Long) item.get("quantity")).intValue();
            long cents = (Long) item.get("cents") * quantity;
            String product = (String) item.get("product");
            Order order = new Order(ORDER_IDS.incrementAndGet(), product, quantity, cents, (String) request.get("note"));
            ORDERS.put(order.id(), order);
            ORDERS.remove(order.id() - ORDERS_KEPT);
            orders.add(order);
            List<String> index = ACCOUNTS_BY_PRODUCT.get(product);
            synchronized (index) {
                index.add(accountId);
                if (index.size() > 4096) {
                    index.subList(0, 1024).clear();
                }
            }
            placed.add(describe(order));
            total += cents;
        }
        long charged = total;
        Account updated = ACCOUNTS_BY_ID.compute(accountId, (id, old) -> {
            List<Order> history = new ArrayList<>(old.history());
            history.addAll(orders);
            if (history.size() > 10) {
                history = new ArrayList<>(history.subList(history.size() - 10, history.size()));
            }
            return new Account(old.id(), old.name(), old.email(), old.balanceCents() - charged, old.version() + 1,
                    List.copyOf(history), old.tags());
        });
        response.put("orders", placed);
        response.put("totalCents", total);
        response.put("balanceCents", updated.balanceCents());
    }

    static void search(Map<String, Object> request, Map<String, Object> response) {
        String product = (String) request.get("product");
        int limit = ((Long) request.get("limit")).intValue();
        List<String> candidates;
        List<String> index = ACCOUNTS_BY_PRODUCT.get(product);
        synchronized (index) {
            int from = Math.max(0, index.size() - 64);
            candidates = new ArrayList<>(index.subList(from, index.size()));
        }
        List<Account> accounts = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String id : candidates) {
            Account account = ACCOUNTS_BY_ID.get(id);
            if (account != null && seen.add(id)) {
                accounts.add(account);
            }
        }
        accounts.sort((a, b) -> Long.compare(b.balanceCents(), a.balanceCents()));
        List<Object> results = new ArrayList<>();
        for (Account account : accounts.subList(0, Math.min(limit, accounts.size()))) {
            results.add(describe(account));
        }
        response.put("product", product);
        response.put("results", results);
    }

    static void rename(Map<String, Object> request, Map<String, Object> response) {
        Map<String, Object> tags = asMap(request.get("tags"));
        Account updated = ACCOUNTS_BY_ID.compute((String) request.get("account"), (id, old) -> {
            Map<String, String> merged = new LinkedHashMap<>(old.tags());
            tags.forEach((k, v) -> merged.put(k, String.valueOf(v)));
            return new Account(old.id(), (String) request.get("name"), old.email(), old.balanceCents(),
                    old.version() + 1, old.history(), Map.copyOf(merged));
        });
        response.put("account", describe(updated));
    }

    static Map<String, Object> describe(Account account) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", account.id());
        out.put("name", account.name());
        out.put("email", account.email());
        out.put("balance", String.format("%d.%02d", account.balanceCents() / 100, Math.abs(account.balanceCents() % 100)));
        out.put("version", (long) account.version());
        out.put("tags", new LinkedHashMap<String, Object>(account.tags()));
        return out;
    }

    static Map<String, Object> describe(Order order) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("orderId", order.id());
        out.put("product", order.product());
        out.put("quantity", (long) order.quantity());
        out.put("cents", order.cents());
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object value) {
        return (Map<String, Object>) value;
    }

    static StringBuilder render(Object value, StringBuilder out) {
        if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                render(entry.getKey(), out).append(": ");
                render(entry.getValue(), out);
            }
            return out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(", ");
                }
                render(list.get(i), out);
            }
            return out.append(']');
        } else if (value instanceof String string) {
            out.append('"');
            for (int i = 0; i < string.length(); i++) {
                char c = string.charAt(i);
                if (c == '"' || c == '\\') {
                    out.append('\\');
                }
                out.append(c);
            }
            return out.append('"');
        } else {
            return out.append(value);
        }
    }

    /** A small JSON parser: objects, arrays, strings without escapes, integers. */
    static final class Json {
        final String text;
        int at;

        Json(String text) {
            this.text = text;
        }

        Object value() {
            skipSpace();
            char c = text.charAt(at);
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                at++;
                skipSpace();
                if (text.charAt(at) == '}') {
                    at++;
                    return map;
                }
                while (true) {
                    skipSpace();
                    String key = string();
                    skipSpace();
                    expect(':');
                    map.put(key, value());
                    skipSpace();
                    if (text.charAt(at++) == '}') {
                        return map;
                    }
                }
            } else if (c == '[') {
                List<Object> list = new ArrayList<>();
                at++;
                skipSpace();
                if (text.charAt(at) == ']') {
                    at++;
                    return list;
                }
                while (true) {
                    list.add(value());
                    skipSpace();
                    if (text.charAt(at++) == ']') {
                        return list;
                    }
                }
            } else if (c == '"') {
                return string();
            } else {
                int start = at;
                while (at < text.length() && (Character.isDigit(text.charAt(at)) || text.charAt(at) == '-')) {
                    at++;
                }
                return Long.valueOf(text.substring(start, at));
            }
        }

        String string() {
            expect('"');
            int start = at;
            while (text.charAt(at) != '"') {
                at++;
            }
            return text.substring(start, at++);
        }

        void expect(char c) {
            if (text.charAt(at++) != c) {
                throw new IllegalArgumentException("expected " + c + " at " + (at - 1) + " in " + text);
            }
        }

        void skipSpace() {
            while (at < text.length() && text.charAt(at) == ' ') {
                at++;
            }
        }
    }
}
