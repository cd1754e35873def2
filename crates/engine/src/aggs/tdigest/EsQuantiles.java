// How es_quantiles.txt (and the Java answers in rest/percentiles_tests.rs) were made: this
// program run against Elasticsearch's own libs/tdigest (org.elasticsearch.tdigest:
// MergingDigest, HybridDigest, Sort, ScaleFunction's K_2, AbstractTDigest; the 8.15-and-later
// sources with TDigestArrays), which are not copied here, with stand-ins for what those
// import: TDigest's and Centroid's members, Lucene's RamUsageEstimator,
// org.elasticsearch.core.Releasable[s], the arrays (`new TDigestArrays()` below hands out
// plain arrays), and SortingDigest, whose stand-in interpolates between values as
// Elasticsearch's REST tests expect of it (26.0 at the 25th of 1, 51, 101, 151: see
// search.aggregation/180_percentiles_tdigest_metric.yml). So the merging digest's lines check
// the port against Elasticsearch's code; the sorting digest's (1,999 values) the port's
// switch and interpolation against those tests' rule. Compile, and run:
//   java EsQuantiles table > es_quantiles.txt      java EsQuantiles documents
import org.elasticsearch.tdigest.*;
import org.elasticsearch.tdigest.arrays.TDigestArrays;
import java.util.*;

public class EsQuantiles {
    public static void main(String[] a) {
        if (a.length > 0 && a[0].equals("documents")) documents(); else table();
    }

    static long state;
    static double next(String gen, int i, int n) {
        state = state * 6364136223846793005L + 1442695040888963407L;
        switch (gen) {
            case "uniform": return (double) (state >>> 11) / 9007199254740992.0 * 1000.0;
            case "cubed": { double u = (double) (state >>> 11) / 9007199254740992.0; return u * u * u * 1e6; }
            case "ints": return (double) ((state >>> 33) % 1000);
            case "asc": return i;
            case "desc": return n - i;
            case "few": return (double) ((state >>> 33) % 3);
            default: throw new IllegalArgumentException(gen);
        }
    }
    static final double[] PERCENTS = {0, 0.1, 1, 5, 25, 50, 75, 95, 99, 99.9, 100};
    static TDigest fill(double c, String gen, int n, long seed) {
        state = seed;
        TDigest d = TDigest.createHybridDigest(new TDigestArrays(), c);
        for (int i = 0; i < n; i++) d.add(next(gen, i, n));
        return d;
    }
    static void print(String name, TDigest d) {
        StringBuilder sb = new StringBuilder(name);
        sb.append(' ').append(d.centroidCount());
        for (double p : PERCENTS) sb.append(' ').append(Long.toHexString(Double.doubleToRawLongBits(d.quantile(p / 100))));
        System.out.println(sb);
    }
    static void table() {
        double[] cs = {100, 200, 50, 5, 0, 30.4, 1000};
        String[] gens = {"uniform", "cubed", "ints", "asc", "desc", "few"};
        int[] ns = {1999, 2000, 2001, 5000, 100000};
        for (double c : cs) for (String g : gens) for (int n : ns) {
            if (c == 1000 && n < 100000) continue;
            print("one " + c + " " + g + " " + n, fill(c, g, n, 42));
        }
        // reduce: a fresh digest adds each part's digest in turn, as Elasticsearch reduces shards
        int[][] parts = {{1000, 999}, {1500, 1500}, {3000, 10}, {10, 3000}, {50000, 70000}, {1999, 1}};
        for (double c : new double[] {100, 50}) for (String g : gens) for (int[] p : parts) {
            TDigest merged = TDigest.createHybridDigest(new TDigestArrays(), c);
            long seed = 7;
            for (int n : p) { merged.add(fill(c, g, n, seed)); seed += 1; }
            print("reduce " + c + " " + g + " " + p[0] + "+" + p[1], merged);
        }
    }

    // The documents of the engine's percentiles test, fed as Elasticsearch feeds them.

    static double[] values(int i) {
        double v = (double) ((i * 7919L) % 10007) / 10.0;
        if (i % 7 == 0) { return new double[] {v / 2.0, v}; } // ascending, as doc values are read
        return new double[] {v};
    }
    static String hex(double d) { return Long.toHexString(Double.doubleToRawLongBits(d)); }

    static void printAt(String name, TDigest d, double[] percents) {
        StringBuilder sb = new StringBuilder(name);
        for (double p : percents) sb.append(' ').append(hex(d.quantile(p / 100)));
        System.out.println(sb);
    }
    static void documents() {
        int n = 6000;
        double[] ps = {1, 50, 99.9};
        TDigest all = TDigest.createHybridDigest(new TDigestArrays(), 100);
        Map<String, TDigest> byTag = new TreeMap<>();
        Map<String, TDigest> byTagMinute = new TreeMap<>();
        TDigest first = TDigest.createHybridDigest(new TDigestArrays(), 100);
        TDigest second = TDigest.createHybridDigest(new TDigestArrays(), 100);
        for (int i = 0; i < n; i++) {
            String tag = new String[] {"a", "b", "c"}[i % 3];
            String key = tag + "/" + (i % 4);
            for (double v : values(i)) {
                all.add(v);
                byTag.computeIfAbsent(tag, t -> TDigest.createHybridDigest(new TDigestArrays(), 100)).add(v);
                byTagMinute.computeIfAbsent(key, t -> TDigest.createHybridDigest(new TDigestArrays(), 10)).add(v);
                (i < 3000 ? first : second).add(v);
            }
        }
        printAt("all", all, ps);
        for (var e : byTag.entrySet()) printAt("tag " + e.getKey(), e.getValue(), ps);
        for (var e : byTagMinute.entrySet()) printAt("minute " + e.getKey(), e.getValue(), ps);
        TDigest reduced = TDigest.createHybridDigest(new TDigestArrays(), 100);
        reduced.add(first);
        reduced.add(second);
        printAt("two-indices", reduced, ps);
        System.out.println("merging: all " + ((HybridDigest) all).isMerging() + " tag a " + ((HybridDigest) byTag.get("a")).isMerging());
    }
}
