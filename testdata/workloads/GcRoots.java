import java.lang.ref.Reference;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps objects live in three known ways, for the paths to GC roots
 * (`roots=true`): each kept object is an array of a class of its own, so
 * its class tells how it is kept.
 *
 *   GcRoots$InStaticMap[]    values of the static HashMap GcRoots.MAP
 *   GcRoots$InThreadLocal[]  the value of the ThreadLocal GcRoots.LOCAL on
 *                            the thread "thread-local-holder", parked
 *   GcRoots$OnStack[]        a local variable of GcRoots.holdOnStack on the
 *                            thread "stack-holder", parked
 *
 * Usage: GcRoots [COUNT]: COUNT objects in the map (default 4). The arrays
 * are 100,000 references (400 KB with compressed oops): below G1's
 * humongous size from 1 MiB regions, and sampled with near certainty at
 * intervals up to 64 KiB. Prints "ready" once all are kept, then returns;
 * the holder threads are daemons, parked until the JVM ends.
 */
public final class GcRoots {
    static final Map<String, Object> MAP = new HashMap<>();
    static final ThreadLocal<Object> LOCAL = new ThreadLocal<>();
    static final int LENGTH = 100_000;
    static volatile boolean stop;

    static final class InStaticMap {}

    static final class InThreadLocal {}

    static final class OnStack {}

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        for (int i = 0; i < count; i++) {
            MAP.put("key-" + i, new InStaticMap[LENGTH]);
        }
        CountDownLatch ready = new CountDownLatch(2);
        Thread local = new Thread(() -> {
            LOCAL.set(new InThreadLocal[LENGTH]);
            ready.countDown();
            park();
        }, "thread-local-holder");
        Thread stack = new Thread(() -> holdOnStack(ready), "stack-holder");
        for (Thread thread : new Thread[] {local, stack}) {
            thread.setDaemon(true);
            thread.start();
        }
        ready.await();
        System.gc();
        System.out.println("ready");
    }

    static void holdOnStack(CountDownLatch ready) {
        Object kept = new OnStack[LENGTH];
        ready.countDown();
        park();
        Reference.reachabilityFence(kept);
    }

    static void park() {
        while (!stop) {
            LockSupport.park();
        }
    }
}
