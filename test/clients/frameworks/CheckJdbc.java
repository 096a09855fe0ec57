// Runs the Java recipes of doc/adopting.md (SnowidKeys.java, Orders.java),
// for test/t/integrations/java_jdbc.pl, which compiles this file with them.
//
//   java CheckJdbc orders URL
//       saves orders of 1, 3 and 5 lines with Orders.save, reads them back
//       and checks every key; prints one line of JSON ({"order", "lines",
//       "orders", "checks"}: the first order)
//   java CheckJdbc ids EPOCH_MS LAYOUT IDS TEXTS
//       prints "ms datacenter worker sequence" for each id of the file IDS,
//       then "t" or "f" for each text of the file TEXTS (publicIdChecks)
//
// Exits 0, or prints what failed and exits 1.
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

public final class CheckJdbc {
    private static int checks;

    private static void check(boolean ok, String what) {
        if (!ok)
            throw new AssertionError("check failed: " + what);
        checks++;
    }

    private static void ids(String[] args) throws Exception {
        long epochMs = Long.parseLong(args[1]);
        String[] bits = args[2].split("/");
        int d = Integer.parseInt(bits[1]), w = Integer.parseInt(bits[2]), s = Integer.parseInt(bits[3]);
        StringBuilder out = new StringBuilder();

        for (String line : Files.readAllLines(Path.of(args[3]))) {
            SnowidKeys.Decoded x = SnowidKeys.Decoded.of(Long.parseLong(line), epochMs, d, w, s);
            out.append(x.time().toEpochMilli()).append(' ').append(x.datacenterId()).append(' ')
                .append(x.workerId()).append(' ').append(x.sequence()).append('\n');
        }
        for (String line : Files.readAllLines(Path.of(args[4])))
            out.append(SnowidKeys.publicIdChecks(line) ? "t\n" : "f\n");
        System.out.print(out);
    }

    private static void orders(String url) throws Exception {
        List<List<String>> products = List.of(List.of("apple"), List.of("pear", "plum", "fig"),
            List.of("kiwi", "lime", "date", "sloe", "yuzu"));
        SnowidKeys keys = new SnowidKeys(100, Duration.ofMinutes(1));
        String first = null;
        List<String> firstLines = null;

        try (Connection conn = DriverManager.getConnection(url)) {
            for (int n = 0; n < products.size(); n++) {
                long key = Orders.save(conn, keys, "customer " + n, products.get(n));
                List<String> texts = new ArrayList<>(), got = new ArrayList<>();

                try (PreparedStatement st = conn.prepareStatement(
                        "SELECT id, id::text AS text, product FROM order_lines WHERE order_id = ? ORDER BY 1")) {
                    st.setLong(1, key);
                    try (ResultSet rs = st.executeQuery()) {
                        while (rs.next()) {
                            check(Long.toString(rs.getLong(1)).equals(rs.getString(2)),
                                "order " + n + ": line key exact");
                            texts.add(rs.getString(2));
                            got.add(rs.getString(3));
                        }
                    }
                }
                check(got.equals(products.get(n)), "order " + n + ": its lines");
                if (first == null) {
                    first = Long.toString(key);
                    firstLines = texts;
                }
            }
        }
        System.out.println("{\"order\":\"" + first + "\",\"lines\":[\"" + String.join("\",\"", firstLines)
            + "\"],\"orders\":" + products.size() + ",\"checks\":" + checks + "}");
    }

    public static void main(String[] args) {
        try {
            if (args[0].equals("ids"))
                ids(args);
            else if (args[0].equals("orders"))
                orders(args[1]);
            else
                throw new IllegalArgumentException("unknown test " + args[0]);
        } catch (Throwable e) {
            System.err.println(e);
            System.exit(1);
        }
    }
}
