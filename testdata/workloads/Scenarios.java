import java.util.ArrayList;
import java.util.List;

/**
 * Small programs the agent's tests run under the agent, one per mode.
 *
 *   exact              new int[5][5] x 1000 in one method (6000 objects)
 *   threads N MIB      N threads named worker-0.. each allocating MIB of int[]
 *   liveness           keeps 1000 byte[4096] reachable, drops 1000, System.gc()
 *   exit CODE          allocates, then System.exit(CODE)
 *   throw              allocates, then throws from main (uncaught)
 *   oom                allocates until OutOfMemoryError (uncaught)
 *   run SECONDS [N]    allocates on N threads (default 2) for SECONDS, after
 *                      printing "ready" (for signals and attaching)
 */
public final class Scenarios {
    static volatile Object sink;
    static final List<Object> KEPT = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "exact" -> exact();
            case "threads" -> threads(Integer.parseInt(args[1]), Long.parseLong(args[2]) << 20);
            case "liveness" -> liveness();
            case "exit" -> {
                churn(64 << 20);
                System.exit(Integer.parseInt(args[1]));
            }
            case "throw" -> {
                churn(64 << 20);
                throw new IllegalStateException("uncaught on purpose");
            }
            case "oom" -> oom();
            case "run" -> run(Long.parseLong(args[1]), args.length > 2 ? Integer.parseInt(args[2]) : 2);
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.out.println("done");
    }

    /**
     * With interval 0, the JVM samples every allocation only once this thread
     * has used up the TLAB it held and the distance to its first sample
     * (drawn before the interval applied): a GC retires the TLAB, and a few
     * MiB consume the rest. The JDK's own HeapMonitor tests do the same.
     */
    static void warmUp() {
        System.gc();
        churn(4 << 20);
    }

    static void exact() {
        warmUp();
        for (int i = 0; i < 1000; i++) {
            sink = allocateMatrix();
        }
    }

    static int[][] allocateMatrix() {
        return new int[5][5];
    }

    static void threads(int count, long bytes) throws InterruptedException {
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            Thread worker = new Thread(() -> churn(bytes), "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
    }

    static void churn(long bytes) {
        for (long done = 0; done < bytes; done += 4016) {
            sink = new int[1000];
        }
    }

    static void liveness() {
        warmUp();
        for (int i = 0; i < 1000; i++) {
            KEPT.add(keep());
            sink = drop();
        }
        sink = null;
        System.gc();
        System.gc();
    }

    static byte[] keep() {
        return new byte[4096];
    }

    static byte[] drop() {
        return new byte[4096];
    }

    static void oom() {
        List<long[]> hoard = new ArrayList<>();
        while (true) {
            hoard.add(new long[1 << 16]);
        }
    }

    static void run(long seconds, int threads) throws InterruptedException {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                while (System.nanoTime() < end) {
                    churn(1 << 20);
                }
            }, "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        System.out.println("ready");
        System.out.flush();
        for (Thread worker : workers) {
            worker.join();
        }
    }
}
