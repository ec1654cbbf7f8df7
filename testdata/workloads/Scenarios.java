import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Small programs the agent's tests run under the agent, one per mode.
 *
 *   exact              new int[5][5] x 1000 in one method (6000 objects)
 *   threads N MIB      N threads named worker-0.. each allocating MIB of int[]
 *   one-site N MIB     N threads named worker-0.. each allocating MIB of arrays
 *                      of its own class, all through Array.newInstance: one
 *                      allocation site, a class per thread; prints
 *                      "worker-T CLASS" for each (the array class's name)
 *   liveness           keeps 1000 byte[4096] reachable, drops 1000, System.gc()
 *   exit CODE [SECONDS] allocates, then, once SECONDS of wall time have
 *                      passed since the start (default 0), System.exit(CODE)
 *   throw              allocates, then throws from main (uncaught)
 *   oom                allocates until OutOfMemoryError (uncaught)
 *   unload ROUNDS [MS] each round defines Scenarios$Guest in a new class loader,
 *                      allocates in it, drops it and collects, so the class
 *                      unloads while its samples may still be queued, then
 *                      sleeps MS milliseconds (default 0); prints
 *                      "unloaded N" (classes the JVM unloaded)
 *   measured MIB [stay]
 *                      a thread named "measured" allocates MIB of int[1] and
 *                      prints "allocated N": the bytes the JVM counted for it
 *                      (ThreadMXBean.getThreadAllocatedBytes); with "stay",
 *                      the thread (a daemon) then waits, alive, until the JVM
 *                      exits, so that the JVM's count of it is read at the end
 *   humongous MIB      allocates MIB in short-lived 2 MiB byte arrays (G1
 *                      humongous objects), keeping the last 8 reachable
 *   run SECONDS [N]    allocates on N threads (default 2) for SECONDS, after
 *                      printing "ready" (for signals and attaching)
 *   heap STEPS MIB     keeps MIB more in 64 KiB arrays at each step, then
 *                      System.gc(); prints its collectors' names, then per step
 *                      "step N used BYTES gc EPOCH_MS NAME": the heap in use
 *                      right after the collection (Runtime's total - free), and
 *                      the collection System.gc() ran (the one that ended last),
 *                      by its start in ms since the epoch and its collector
 *   paced SECONDS MIB [leak]
 *                      allocates MIB MiB per second of wall time for SECONDS,
 *                      whatever the machine's load: SECONDS x MIB in all (it
 *                      catches up on time, and at the end, in
 *                      Paced.buffers and Paced.boxes); with "leak", also keeps
 *                      a quarter as much again reachable (Paced.leak); then
 *                      System.gc(), so that what is live at the end is what
 *                      is reachable, not what no collection has reached yet
 *   bursts N M         keeps 4 MiB (sampled objects to follow), then runs N
 *                      collections (System.gc()) back to back, sleeps nine
 *                      times as long as they took (at least a second), then
 *                      runs M more: collections bunched at the start (and at
 *                      the end), whatever the machine's speed, the first
 *                      burst a tenth of the time to the second at most
 */
public final class Scenarios {
    static volatile Object sink;
    static final List<Object> KEPT = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "exact" -> exact();
            case "threads" -> threads(Integer.parseInt(args[1]), Long.parseLong(args[2]) << 20);
            case "one-site" -> oneSite(Integer.parseInt(args[1]), Long.parseLong(args[2]) << 20);
            case "liveness" -> liveness();
            case "exit" -> {
                long until = System.nanoTime() + (args.length > 2 ? Long.parseLong(args[2]) : 0) * 1_000_000_000L;
                churn(64 << 20);
                Thread.sleep(Math.max(0, (until - System.nanoTime()) / 1_000_000));
                System.exit(Integer.parseInt(args[1]));
            }
            case "throw" -> {
                churn(64 << 20);
                throw new IllegalStateException("uncaught on purpose");
            }
            case "oom" -> oom();
            case "unload" -> unload(Integer.parseInt(args[1]), args.length > 2 ? Long.parseLong(args[2]) : 0);
            case "measured" -> measured(
                    Long.parseLong(args[1]) << 20, args.length > 2 && args[2].equals("stay"));
            case "humongous" -> humongous(Long.parseLong(args[1]));
            case "heap" -> heap(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            case "run" -> run(Long.parseLong(args[1]), args.length > 2 ? Integer.parseInt(args[2]) : 2);
            case "bursts" -> bursts(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            case "paced" -> Paced.run(Long.parseLong(args[1]), Long.parseLong(args[2]) << 20,
                    args.length > 3 && args[3].equals("leak"));
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

    static void oneSite(int count, long bytes) throws InterruptedException {
        Class<?>[] types = {String.class, Integer.class, Long.class, Thread.class, Object.class};
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            Class<?> type = types[t % types.length];
            Thread worker = new Thread(() -> {
                for (long done = 0; done < bytes; done += 16 + 4 * 64) {
                    sink = java.lang.reflect.Array.newInstance(type, 64);
                }
            }, "worker-" + t);
            System.out.println(worker.getName() + " " + type.arrayType().getName());
            workers.add(worker);
        }
        for (Thread worker : workers) {
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

    static void humongous(long mib) {
        Object[] recent = new Object[8];
        for (long i = 0; i < mib / 2; i++) {
            recent[(int) (i % recent.length)] = new byte[2 << 20];
        }
        sink = recent;
    }

    static void measured(long bytes, boolean stay) throws InterruptedException {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] counted = new long[1];
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread worker = new Thread(() -> {
            long id = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(id);
            allocateSmall(bytes);
            counted[0] = threads.getThreadAllocatedBytes(id) - before;
            done.countDown();
            while (stay) {
                java.util.concurrent.locks.LockSupport.park();
            }
        }, "measured");
        worker.setDaemon(stay);
        worker.start();
        done.await();
        if (!stay) {
            worker.join();
        }
        System.out.println("allocated " + counted[0]);
    }

    static void allocateSmall(long bytes) {
        for (long done = 0; done < bytes; done += 24) {
            sink = new int[1];
        }
    }

    /** Allocates in a class that is loaded, used and unloaded again and again. */
    public static final class Guest {
        // Its own field: defined by another loader, Guest is in another
        // runtime package and cannot reach Scenarios' fields.
        public static volatile Object held;

        /**
         * Arrays of this loader's Guest: their class unloads with it, so
         * the agent retires its references to the classes of samples while
         * allocation goes on. 1040 bytes each, with compressed references.
         */
        public static long allocate(int count) {
            long bytes = 0;
            for (int i = 0; i < count; i++) {
                held = new Guest[256];
                bytes += 1040;
            }
            return bytes;
        }
    }

    /** Defines Guest itself (not its parent), so each loader has its own copy. */
    static final class GuestLoader extends ClassLoader {
        GuestLoader() {
            super(Scenarios.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("Scenarios$Guest")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> loaded = findLoadedClass(name);
                if (loaded != null) {
                    return loaded;
                }
                try (InputStream in = getParent().getResourceAsStream("Scenarios$Guest.class")) {
                    byte[] bytes = in.readAllBytes();
                    return defineClass(name, bytes, 0, bytes.length);
                } catch (java.io.IOException e) {
                    throw new ClassNotFoundException(name, e);
                }
            }
        }
    }

    static void unload(int rounds, long pauseMillis) throws Exception {
        for (int round = 0; round < rounds; round++) {
            Class<?> guest = new GuestLoader().loadClass("Scenarios$Guest");
            guest.getMethod("allocate", int.class).invoke(null, 20_000);
            guest = null;
            sink = null;
            System.gc();
            Thread.sleep(pauseMillis);
        }
        System.out.println("unloaded " + ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
    }

    static void heap(int steps, int mib) throws InterruptedException {
        List<String> names = new ArrayList<>();
        for (java.lang.management.GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            names.add(bean.getName());
        }
        System.out.println("collectors " + String.join(",", names));
        long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
        List<byte[]> kept = new ArrayList<>();
        KEPT.add(kept);
        for (int step = 1; step <= steps; step++) {
            for (int i = 0; i < mib * 16; i++) {
                kept.add(new byte[(64 << 10) - 16]);
            }
            System.gc();
            // First, before this thread allocates again.
            Runtime runtime = Runtime.getRuntime();
            long used = runtime.totalMemory() - runtime.freeMemory();
            com.sun.management.GcInfo last = null;
            String collector = null;
            for (java.lang.management.GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
                // Collectors of pauses, not collections (JDK 21+'s G1
                // Concurrent GC: a concurrent cycle's may end after it).
                if (bean.getName().equals("G1 Concurrent GC") || bean.getName().endsWith(" Pauses")) {
                    continue;
                }
                com.sun.management.GcInfo info = ((com.sun.management.GarbageCollectorMXBean) bean).getLastGcInfo();
                if (info != null && (last == null || info.getEndTime() > last.getEndTime())) {
                    last = info;
                    collector = bean.getName();
                }
            }
            System.out.println("step " + step + " used " + used + " gc " + (jvmStart + last.getStartTime())
                    + " " + collector);
            // The agent's writer sees a collector's last collection only:
            // give it time to poll before this collector runs again. It
            // polls within 50 ms of a collection; a second leaves room for
            // a machine busy with other JVMs.
            Thread.sleep(1000);
        }
    }

    static void bursts(int first, int then) throws InterruptedException {
        for (int i = 0; i < 1024; i++) {
            KEPT.add(new byte[4096 - 16]);
        }
        long start = System.nanoTime();
        for (int i = 0; i < first; i++) {
            System.gc();
        }
        long took = System.nanoTime() - start;
        Thread.sleep(Math.max(1000, 9 * took / 1_000_000));
        for (int i = 0; i < then; i++) {
            System.gc();
        }
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

    /** Allocation at a steady rate of wall time, for comparing recordings. */
    static final class Paced {
        static void run(long seconds, long bytesPerSecond, boolean leak) throws InterruptedException {
            long start = System.nanoTime();
            long end = start + seconds * 1_000_000_000L;
            long allocated = 0;
            for (long now = start; now < end; now = System.nanoTime()) {
                long due = (long) ((now - start) / 1e9 * bytesPerSecond);
                while (allocated < due) {
                    allocated += round(leak);
                }
                Thread.sleep(5);
            }
            // The rest of the work, however late the last round woke: a
            // thread descheduled near the end would otherwise fall short.
            while (allocated < seconds * bytesPerSecond) {
                allocated += round(leak);
            }
            System.gc();
        }

        /** One round of the work; returns the bytes it allocates (and the leak's aside). */
        static long round(boolean leak) {
            buffers();
            boxes();
            if (leak) {
                leak();
            }
            return 2 * 16 * 1024;
        }

        /** 16 KiB in 1 KiB arrays. */
        static void buffers() {
            for (int i = 0; i < 16; i++) {
                sink = new byte[1024 - 16];
            }
        }

        /** 16 KiB in 16-byte objects. */
        static void boxes() {
            for (int i = 0; i < 1024; i++) {
                sink = new Object();
            }
        }

        /** 8 KiB kept: a quarter of what each round allocates. */
        static void leak() {
            for (int i = 0; i < 8; i++) {
                KEPT.add(new byte[1024 - 16]);
            }
        }
    }
}
