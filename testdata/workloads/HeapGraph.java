import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Fills the heap with a long-lived object graph of the usual shapes, for
 * the cost of walking it (`roots=true`): a HashMap of customers, each with
 * a name, a small attribute map, a list of orders (boxed numbers, a status
 * string, an int[] of items, a small byte[] note), a TreeMap index by
 * name, a LinkedList of events, and Object[] pages of recent orders.
 *
 * Usage: HeapGraph [FRACTION]: fills until the heap in use after a full
 * collection is FRACTION (default 0.7) of -Xmx, prints "filled N MB in C
 * customers", and returns, all of it still reachable (the agent's walk runs
 * as the JVM ends).
 */
public final class HeapGraph {
    static final Map<String, Customer> CUSTOMERS = new HashMap<>();
    static final TreeMap<String, Customer> BY_NAME = new TreeMap<>();
    static final LinkedList<Event> EVENTS = new LinkedList<>();
    static final List<Object[]> PAGES = new ArrayList<>();
    static final String[] STATUS = {"new", "paid", "shipped", "returned"};

    record Event(long at, Customer customer, String kind) {}

    static final class Order {
        final long id;
        final Double amount;
        final String status;
        final int[] items;
        final byte[] note;

        Order(long id, int seed) {
            this.id = id;
            this.amount = seed * 1.5;
            this.status = STATUS[seed & 3];
            this.items = new int[1 + (seed & 7)];
            this.note = new byte[8 + (seed & 31)];
        }
    }

    static final class Customer {
        final String name;
        final Map<String, String> attributes = new HashMap<>();
        final List<Order> orders = new ArrayList<>();

        Customer(String name) {
            this.name = name;
        }
    }

    public static void main(String[] args) {
        double fraction = args.length > 0 ? Double.parseDouble(args[0]) : 0.7;
        Runtime runtime = Runtime.getRuntime();
        long target = (long) (runtime.maxMemory() * fraction);
        long orderId = 0;
        int customers = 0;
        Object[] page = new Object[1024];
        int inPage = 0;
        while (true) {
            for (int batch = 0; batch < 20_000; batch++, customers++) {
                Customer customer = new Customer("customer-" + customers);
                customer.attributes.put("tier", STATUS[customers & 3]);
                customer.attributes.put("region", "r" + (customers % 97));
                for (int o = 0; o < 4 + (customers & 3); o++) {
                    Order order = new Order(orderId++, customers + o);
                    customer.orders.add(order);
                    page[inPage++] = order;
                    if (inPage == page.length) {
                        PAGES.add(page);
                        page = new Object[1024];
                        inPage = 0;
                    }
                }
                CUSTOMERS.put(customer.name, customer);
                BY_NAME.put(customer.name, customer);
                if ((customers & 7) == 0) {
                    EVENTS.add(new Event(customers, customer, STATUS[customers & 3]));
                }
            }
            long used = runtime.totalMemory() - runtime.freeMemory();
            if (used >= target) {
                System.gc();
                used = runtime.totalMemory() - runtime.freeMemory();
                if (used >= target) {
                    System.out.println("filled " + (used >> 20) + " MB in " + customers + " customers");
                    return;
                }
            }
        }
    }
}
