// Writes cross-check vectors for skewer's UltraLogLog from hash4j's
// UltraLogLog (github.com/dynatrace-oss/hash4j). Run with hash4j's
// distinctcount classes on the class path:
//   javac -cp HASH4J_CLASSES Gen.java && java -cp HASH4J_CLASSES:. Gen > ultraloglog_hash4j.txt
import com.dynatrace.hash4j.distinctcount.UltraLogLog;
import java.security.MessageDigest;

public class Gen {
  // SplitMix64's finaliser: skewer's internal/hashx.Mix64.
  static long mix64(long x) {
    x ^= x >>> 30;
    x *= 0xbf58476d1ce4e5b9L;
    x ^= x >>> 27;
    x *= 0x94d049bb133111ebL;
    x ^= x >>> 31;
    return x;
  }

  static UltraLogLog build(int p, long n, long off) {
    UltraLogLog s = UltraLogLog.create(p);
    for (long i = 0; i < n; i++) s.add(mix64(off + i));
    return s;
  }

  static String sha256(byte[] b) throws Exception {
    StringBuilder sb = new StringBuilder();
    for (byte x : MessageDigest.getInstance("SHA-256").digest(b)) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }

  static String bits(double d) {
    return String.format("%016x", Double.doubleToRawLongBits(d));
  }

  static String estimates(UltraLogLog s) {
    return bits(s.getDistinctCountEstimate(UltraLogLog.OPTIMAL_FGRA_ESTIMATOR)) + " "
        + bits(s.getDistinctCountEstimate(UltraLogLog.MAXIMUM_LIKELIHOOD_ESTIMATOR));
  }

  public static void main(String[] args) throws Exception {
    System.out.println("# add p n off sha256(registers) fgra ml (estimates as IEEE-754 bits)");
    long[] ns = {0, 1, 2, 3, 10, 100, 1000, 10000, 100000, 1000000};
    int[] ps = {4, 5, 8, 10, 12, 14, 16, 20};
    for (int p : ps) {
      for (long n : ns) {
        if (p >= 16 && n > 100000) continue;
        long off = ((long) p << 40) | (n << 8);
        UltraLogLog s = build(p, n, off);
        System.out.println("add " + p + " " + n + " " + off + " " + sha256(s.getState()) + " " + estimates(s));
      }
    }
    System.out.println("# regs p n off hex(registers): full states at small precisions");
    for (int p : new int[] {4, 6}) {
      for (long n : new long[] {5, 50, 5000}) {
        long off = 7L << 50 | ((long) p << 40) | n;
        System.out.println("regs " + p + " " + n + " " + off + " " + hex(build(p, n, off).getState()));
      }
    }
    System.out.println("# state p hex(registers) fgra ml: synthetic valid states, many near both ends of the range");
    long seed = 0x5eed;
    for (int p : new int[] {4, 5, 7, 8}) {
      for (int kind = 0; kind < 6; kind++) {
        byte[] st = new byte[1 << p];
        for (int i = 0; i < st.length; i++) {
          seed = mix64(seed + 0x9e3779b97f4a7c15L);
          long u = seed >>> 1;
          int top; // bit position of the largest value, p-1..63, or -1 for empty
          switch (kind) {
            case 0: top = (u % 4 == 0) ? -1 : p - 1 + (int) ((u >>> 8) % 3); break; // small range
            case 1: top = 63 - (int) ((u >>> 8) % 2); break; // at and below the cap
            case 2: top = 63; break; // all at the cap
            case 3: top = (u % 3 == 0) ? -1 : p - 1 + (int) ((u >>> 8) % (64 - p + 1)); break; // anywhere
            case 4: top = 40 + (int) ((u >>> 8) % 24); break; // high intermediate up to the cap
            default: top = (u % 64 == 0) ? -1 : 63; break; // cap with a few empty
          }
          int l = (int) ((u >>> 20) & 3);
          if (top < 0) { st[i] = 0; continue; }
          if (top == p - 1) l = 0;
          if (top == p) l &= 2;
          st[i] = (byte) (4 * top + l);
        }
        if (kind == 2) { for (int i = 0; i < st.length; i++) st[i] = (byte) 255; }
        UltraLogLog s = UltraLogLog.wrap(st);
        System.out.println("state " + p + " " + hex(st) + " " + estimates(s));
      }
    }
    System.out.println("# merge pa na offa pb nb offb sha256(merged registers at min(pa,pb))");
    int[][] mp = {{8, 8}, {10, 10}, {8, 12}, {12, 8}, {4, 10}, {14, 14}};
    for (int[] q : mp) {
      for (long n : new long[] {100, 10000, 200000}) {
        long oa = 1L << 45 | n, ob = oa + n / 2; // half the hashes shared
        UltraLogLog m = UltraLogLog.merge(build(q[0], n, oa), build(q[1], n, ob));
        System.out.println("merge " + q[0] + " " + n + " " + oa + " " + q[1] + " " + n + " " + ob + " " + sha256(m.getState()));
      }
    }
    System.out.println("# downsize p n off q sha256(downsized registers)");
    for (int[] q : new int[][] {{12, 4}, {12, 8}, {12, 11}, {16, 10}, {10, 10}}) {
      for (long n : new long[] {1000, 100000}) {
        long off = 3L << 45 | n;
        System.out.println("downsize " + q[0] + " " + n + " " + off + " " + q[1] + " " + sha256(build(q[0], n, off).downsize(q[1]).getState()));
      }
    }
  }
}
