# Runs the Ruby recipes of doc/adopting.md, for test/t/integrations/ruby_activerecord.pl.
#
#   ruby check_activerecord.rb RECIPES orders
#       saves orders of 1, 3 and 5 lines with the recipe's save_order, reads
#       them back and checks every key; prints one line of JSON ({"order",
#       "lines", "orders", "checks"}: the first order)
#   ruby check_activerecord.rb RECIPES ids EPOCH_MS LAYOUT IDS TEXTS
#       prints "ms datacenter worker sequence" for each id of the file IDS,
#       then "t" or "f" for each text of the file TEXTS (public_id_checks?)
#
# RECIPES is the directory the test wrote the page's files into.  Connects
# with the libpq environment.  Exits 0, or prints what failed and exits 1.
require "json"

recipes, what = ARGV[0], ARGV[1]
$checks = 0

def check(ok, what)
  raise "check failed: #{what}" unless ok
  $checks += 1
end

begin
  if what == "ids"
    require File.join(recipes, "snowid_keys")
    epoch_ms, layout = Integer(ARGV[2]), ARGV[3]
    File.foreach(ARGV[4]) do |line|
      ts, dc, worker, seq = Snowid.decode(Integer(line), epoch_ms: epoch_ms, layout: layout)
      puts "#{(ts.to_r * 1000).to_i} #{dc} #{worker} #{seq}"
    end
    File.foreach(ARGV[5]) { |line| puts Snowid.public_id_checks?(line.chomp) ? "t" : "f" }
    exit 0
  end
  raise "unknown test #{what}" unless what == "orders"
  require File.join(recipes, "orders_activerecord")
  products = [%w[apple], %w[pear plum fig], %w[kiwi lime date sloe yuzu]]
  summary = nil
  products.each_with_index do |list, n|
    key = save_order("customer #{n}", list)
    check(key.is_a?(Integer), "the order key is an Integer")
    order = Order.find(key)
    lines = order.lines.order(:id).to_a
    check(lines.map(&:product) == list, "order #{n}: its lines read back")
    texts = Order.connection.select_rows(
      "SELECT id::text FROM order_lines WHERE order_id = #{Integer(key)} ORDER BY id").flatten
    check(lines.map { |l| l.id.to_s } == texts, "order #{n}: line keys exact")
    check(lines.all? { |l| l.order_id == key }, "order #{n}: lines point at the order")
    summary ||= { order: key.to_s, lines: texts }
  end
  puts JSON.generate(summary.merge(orders: products.size, checks: $checks))
rescue StandardError => e
  warn "#{e.class}: #{e.message}"
  exit 1
end
