import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;

/**
 * The Benchmarks Game's binary-trees program, a GC benchmark: build one
 * long-lived tree, then allocate, walk and drop many short-lived trees of
 * depths 4, 6, ... MAX_DEPTH on a thread pool, and walk the long-lived tree
 * again at the end. A fixed amount of work: ROUNDS passes over the depths
 * (the original makes one pass), so the work grows linearly with ROUNDS and
 * doubles with each step of MAX_DEPTH. Ends with "work: N ms", the time it took.
 *
 * Usage: java BinaryTrees.java [ROUNDS] [MAX_DEPTH] [THREADS]
 *        (defaults: 9, 20, the available processors)
 */
public final class BinaryTrees {
    static final int MIN_DEPTH = 4;

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        int maxDepth = Math.max(MIN_DEPTH + 2, args.length > 1 ? Integer.parseInt(args[1]) : 20);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : Runtime.getRuntime().availableProcessors();

        long start = System.nanoTime();
        int stretchDepth = maxDepth + 1;
        System.out.println("stretch tree of depth " + stretchDepth + "\t check: " + bottomUpTree(stretchDepth).itemCheck());

        TreeNode longLivedTree = bottomUpTree(maxDepth);

        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long total = 0;
        for (int round = 0; round < rounds; round++) {
            List<Future<String>> results = new ArrayList<>();
            for (int d = MIN_DEPTH; d <= maxDepth; d += 2) {
                int depth = d;
                results.add(pool.submit(() -> {
                    int check = 0;
                    int iterations = 1 << (maxDepth - depth + MIN_DEPTH);
                    for (int i = 1; i <= iterations; ++i) {
                        check += bottomUpTree(depth).itemCheck();
                    }
                    return iterations + "\t trees of depth " + depth + "\t check: " + check;
                }));
            }
            for (Future<String> result : results) {
                String line = result.get();
                total += line.length();
                if (round == rounds - 1) {
                    System.out.println(line);
                }
            }
        }
        pool.shutdown();
        System.out.println("long lived tree of depth " + maxDepth + "\t check: " + longLivedTree.itemCheck()
                + "\t (" + rounds + " rounds, " + total + ")");
        System.out.println("work: " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }

    static TreeNode bottomUpTree(int depth) {
        return depth > 0 ? new TreeNode(bottomUpTree(depth - 1), bottomUpTree(depth - 1)) : new TreeNode(null, null);
    }

    static final class TreeNode {
        final TreeNode left;
        final TreeNode right;

        TreeNode(TreeNode left, TreeNode right) {
            this.left = left;
            this.right = right;
        }

        int itemCheck() {
            return left == null ? 1 : 1 + left.itemCheck() + right.itemCheck();
        }
    }
}
