import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Virtual threads (JDK 21+) allocating and blocking, for the agent's
 * robustness tests. Usage: java VirtualThreads.java TASKS
 */
public final class VirtualThreads {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        int tasks = Integer.parseInt(args[0]);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Long>> futures = new ArrayList<>();
            for (int i = 0; i < tasks; i++) {
                futures.add(executor.submit(VirtualThreads::work));
            }
            long total = 0;
            for (Future<Long> future : futures) {
                total += future.get();
            }
            System.out.println("allocated " + total);
        }
    }

    static long work() throws InterruptedException {
        long allocated = 0;
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 100; i++) {
                sink = new int[1000];
                allocated += 4016;
            }
            Thread.sleep(1); // unmount and mount again, maybe on another carrier
        }
        return allocated;
    }
}
