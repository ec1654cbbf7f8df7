import java.util.ArrayList;
import java.util.List;

/**
 * Allocation at the bottom of deep stacks, so that taking a sample's stack
 * trace is most of its cost: every thread evaluates random expression trees
 * by recursion through eight mutually recursive methods (the stack of a
 * sample is 100 to 300 frames deep, so a profiler's stack walk stops at its
 * depth limit, 64 frames by default for both heapsampler and JFR), allocating
 * a few small objects (boxed numbers, short arrays) in every call. The trees
 * take 64 shapes per thread, which makes thousands of distinct (truncated)
 * stacks, as a large application has. A fixed amount of work, the same in
 * every run.
 *
 * Usage: java DeepRecursion.java [THOUSAND_TREES] [THREADS]
 *        (defaults: 1500, 2; each tree is evaluated once)
 */
public final class DeepRecursion {
    /** Trees of this many shapes per thread, so the distinct stacks are thousands, not millions. */
    static final int SHAPES = 64;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        long trees = (args.length > 0 ? Long.parseLong(args[0]) : 1500) * 1000L;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        List<Thread> workers = new ArrayList<>();
        long[] results = new long[threads];
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread worker = new Thread(() -> results[index] = work(index, trees / threads), "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            workers.get(t).join();
            total += results[t];
        }
        System.out.println("deep recursion done: checksum " + total);
    }

    static long work(int thread, long trees) {
        long check = 0;
        for (long n = 0; n < trees; n++) {
            long seed = (thread * 7919L + n % SHAPES + 1) * 0x9E3779B97F4A7C15L;
            seed ^= seed >>> 29;
            // A path 100 to 300 calls deep, with a branch every few levels so a
            // tree holds a few hundred calls; the seed picks the methods.
            int depth = 100 + (int) ((seed >>> 33) % 201);
            check += dispatch(seed, depth, 0).longValue();
        }
        sink += check;
        return check;
    }

    /** The next call, one of eight methods, picked by the seed's bits at this depth. */
    static Long dispatch(long seed, int depth, int level) {
        if (level >= depth) {
            return (long) level;
        }
        long bits = Long.rotateLeft(seed, level * 3);
        return switch ((int) (bits & 7)) {
            case 0 -> add(seed, depth, level);
            case 1 -> mul(seed, depth, level);
            case 2 -> list(seed, depth, level);
            case 3 -> text(seed, depth, level);
            case 4 -> pair(seed, depth, level);
            case 5 -> array(seed, depth, level);
            case 6 -> branch(seed, depth, level);
            default -> wrap(seed, depth, level);
        };
    }

    static Long add(long seed, int depth, int level) {
        Long below = dispatch(seed, depth, level + 1);
        return below + level;
    }

    static Long mul(long seed, int depth, int level) {
        Long below = dispatch(seed, depth, level + 1);
        return below * 3 + 1;
    }

    static Long list(long seed, int depth, int level) {
        List<Long> values = new ArrayList<>(2);
        values.add(dispatch(seed, depth, level + 1));
        values.add((long) level);
        return values.get(0) ^ values.get(1);
    }

    static Long text(long seed, int depth, int level) {
        Long below = dispatch(seed, depth, level + 1);
        return (long) Long.toString(below & 0xffff).length() + below;
    }

    static Long pair(long seed, int depth, int level) {
        long[] pair = {level, dispatch(seed, depth, level + 1)};
        return pair[0] + pair[1];
    }

    static Long array(long seed, int depth, int level) {
        int[] scratch = new int[4 + (level & 15)];
        scratch[scratch.length - 1] = level;
        return dispatch(seed, depth, level + 1) + scratch[scratch.length - 1];
    }

    static Long branch(long seed, int depth, int level) {
        // A short side branch, so one tree holds several deep paths.
        Long side = dispatch(seed ^ level, Math.min(depth, level + 8), level + 1);
        return dispatch(seed, depth, level + 1) + side;
    }

    static Long wrap(long seed, int depth, int level) {
        Object[] box = {dispatch(seed, depth, level + 1)};
        return (Long) box[0] + 1;
    }
}
