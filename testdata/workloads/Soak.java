import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a profiler left running for days meets: stacks that never repeat and
 * threads that come and go.
 * Usage: java Soak.java SECONDS PATHS_PER_SECOND THREADS_PER_SECOND PATHS_PER_THREAD
 *
 * Two workers each take PATHS_PER_SECOND paths of a recursion whose way
 * (left or right at each of 24 levels) comes from a random number, and
 * allocate 0.5 to 1.5 KiB at its end, so that almost every sampled stack is
 * new. Meanwhile THREADS_PER_SECOND short-lived threads (virtual on JDK 21
 * and later, platform threads before) each take PATHS_PER_THREAD such paths
 * and end. Both are paced by the clock in tenths of a second. Nothing is
 * kept: the live set stays small. Prints "threads N virtual|platform" at the
 * end.
 */
public final class Soak {
    static final int LEVELS = 24;
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        int pathsPerSecond = Integer.parseInt(args[1]);
        int threadsPerSecond = Integer.parseInt(args[2]);
        int pathsPerThread = Integer.parseInt(args[3]);
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        Method startVirtual = virtualThreads();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            Thread worker = new Thread(() -> {
                long tenth = start;
                while (System.nanoTime() < end) {
                    for (int path = 0; path < pathsPerSecond / 10; path++) {
                        descend(ThreadLocalRandom.current().nextLong(), LEVELS);
                    }
                    tenth += 100_000_000L;
                    pause(tenth);
                }
            }, "soak-worker-" + w);
            worker.start();
            workers.add(worker);
        }
        long started = 0;
        List<Thread> recent = new ArrayList<>();
        long tenth = start;
        while (System.nanoTime() < end) {
            for (int i = 0; i < threadsPerSecond / 10; i++) {
                Runnable task = () -> {
                    for (int path = 0; path < pathsPerThread; path++) {
                        descend(ThreadLocalRandom.current().nextLong(), LEVELS);
                    }
                };
                recent.add(startVirtual != null
                        ? (Thread) startVirtual.invoke(null, task)
                        : startPlatform(task, started));
                started++;
            }
            for (Thread thread : recent) {
                thread.join();
            }
            recent.clear();
            tenth += 100_000_000L;
            pause(tenth);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        System.out.println("threads " + started + (startVirtual != null ? " virtual" : " platform"));
    }

    /** Sleeps until System.nanoTime() reaches `until`, if it has not. */
    static void pause(long until) {
        long wait = until - System.nanoTime();
        if (wait > 0) {
            try {
                Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Thread.startVirtualThread on JDK 21 and later, else null. */
    static Method virtualThreads() {
        try {
            return Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    static Thread startPlatform(Runnable task, long n) {
        Thread thread = new Thread(task, "soak-" + n);
        thread.start();
        return thread;
    }

    /** Takes the path `bits` spells for `levels` more levels, then allocates. */
    static void descend(long bits, int levels) {
        if (levels == 0) {
            sink = new byte[512 + (int) (bits & 1023)];
            return;
        }
        if ((bits & 1) == 0) {
            left(bits >>> 1, levels - 1);
        } else {
            right(bits >>> 1, levels - 1);
        }
    }

    static void left(long bits, int levels) {
        descend(bits, levels);
    }

    static void right(long bits, int levels) {
        descend(bits, levels);
    }
}
