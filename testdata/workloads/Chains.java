import java.util.ArrayList;
import java.util.List;

/**
 * Young garbage that reaches much: builds linked chains of small nodes
 * (20,000 by default, 24 bytes each under ZGC, about 470 KiB a chain),
 * walks each once and drops it whole, so everything it allocates dies
 * young and a node that stays reachable keeps the nodes built before it
 * (issue 45's program: a collector that treats a sampled node as live
 * keeps most of its chain too). A fixed amount of work: CHAINS thousand
 * chains, split between THREADS threads. With LEAK_EVERY above 0, every
 * LEAK_EVERY-th chain of a thread also leaks one 1 KiB byte[] into a list
 * kept to the end, a small steady leak at a known rate per chain.
 *
 * Prints the chains built, the leaked arrays, a checksum and "work: N ms",
 * the time from the first chain to the last.
 *
 * Usage: java Chains.java [THOUSAND_CHAINS] [NODES] [THREADS] [LEAK_EVERY]
 *        (defaults: 20, 20000, 1, 0)
 */
public final class Chains {
    static final List<byte[]> LEAKED = new ArrayList<>();

    static final class Node {
        final Node next;
        final int value;

        Node(Node next, int value) {
            this.next = next;
            this.value = value;
        }
    }

    public static void main(String[] args) throws Exception {
        long chains = (args.length > 0 ? Long.parseLong(args[0]) : 20) * 1000L;
        int nodes = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        int leakEvery = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        long start = System.nanoTime();
        List<Thread> workers = new ArrayList<>();
        long[] checksums = new long[threads];
        for (int t = 0; t < threads; t++) {
            int index = t;
            long count = chains / threads;
            Thread worker = new Thread(() -> checksums[index] = build(count, nodes, leakEvery), "chains-" + t);
            workers.add(worker);
            worker.start();
        }
        long checksum = 0;
        for (int t = 0; t < threads; t++) {
            workers.get(t).join();
            checksum += checksums[t];
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        int leaked;
        synchronized (LEAKED) {
            leaked = LEAKED.size();
        }
        System.out.println("built " + chains / threads * threads + " chains of " + nodes + " nodes, leaked "
                + leaked + " arrays of 1 KiB, checksum " + checksum);
        System.out.println("work: " + millis + " ms");
    }

    static long build(long count, int nodes, int leakEvery) {
        long checksum = 0;
        for (long c = 1; c <= count; c++) {
            Node head = null;
            for (int i = 0; i < nodes; i++) {
                head = new Node(head, i);
            }
            // Walk it, so that the whole chain is reachable until here.
            for (Node n = head; n != null; n = n.next) {
                checksum += n.value;
            }
            if (leakEvery > 0 && c % leakEvery == 0) {
                byte[] leak = new byte[1024];
                leak[0] = (byte) c;
                synchronized (LEAKED) {
                    LEAKED.add(leak);
                }
            }
        }
        return checksum;
    }
}
