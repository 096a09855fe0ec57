#!/usr/bin/python3
"""Runs the Python recipes of doc/adopting.md, for test/t/integrations/python_frameworks.pl.

    check_python.py RECIPES psycopg|sqlalchemy|django
        saves orders of 1, 3 and 5 lines with the recipe's save_order(),
        reads them back and checks every key; prints one line of JSON
        ({"order", "lines", "orders", "checks"}: the first order)
    check_python.py RECIPES ids EPOCH_MS LAYOUT IDS TEXTS
        prints "ms datacenter worker sequence" for each id of the file IDS,
        then "t" or "f" for each text of the file TEXTS (public_id_checks)

RECIPES is the directory the test wrote the page's files into.  Connects
with the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER).  Exits 0,
or prints what failed and exits 1.
"""
import json
import sys

checks = 0
PRODUCTS = [["apple"], ["pear", "plum", "fig"], ["kiwi", "lime", "date", "sloe", "yuzu"]]


def check(ok, what):
    global checks
    if not ok:
        raise AssertionError("check failed: " + what)
    checks += 1


def read_back(cur, order_key):
    """The order's customer and its lines' (key, key text, product), from the server."""
    cur.execute("SELECT l.id, l.id::text, l.product, o.customer, o.id::text FROM orders o"
                " JOIN order_lines l ON l.order_id = o.id WHERE o.id = %s ORDER BY l.id",
                (order_key,))
    return cur.fetchall()


def run_orders(save_order, cursor):
    summary = None
    for n, products in enumerate(PRODUCTS):
        order_key = save_order("customer %d" % n, products)
        check(isinstance(order_key, int), "the order key is a Python int")
        cur = cursor()
        rows = read_back(cur, order_key)
        check(len(rows) == len(products), "order %d: its lines read back" % n)
        check([r[2] for r in rows] == products, "order %d: its products: %r" % (n, rows))
        check(all(str(order_key) == r[4] for r in rows), "order %d: key exact" % n)
        check(all(isinstance(r[0], int) and str(r[0]) == r[1] for r in rows),
              "order %d: line keys exact" % n)
        if summary is None:
            summary = {"order": str(order_key), "lines": [r[1] for r in rows]}
    summary.update(orders=len(PRODUCTS), checks=checks)
    print(json.dumps(summary))
    return order_key


def main():
    recipes, what = sys.argv[1], sys.argv[2]
    sys.path.insert(0, recipes)
    if what == "ids":
        import snowid_keys
        epoch_ms, layout = int(sys.argv[3]), sys.argv[4]
        with open(sys.argv[5]) as f:
            for line in f:
                ts, dc, worker, seq = snowid_keys.decode(int(line), epoch_ms, layout)
                ms = (ts - snowid_keys.datetime(1970, 1, 1, tzinfo=snowid_keys.timezone.utc)) \
                    // snowid_keys.timedelta(milliseconds=1)
                print(ms, dc, worker, seq)
        with open(sys.argv[6]) as f:
            for line in f:
                print("t" if snowid_keys.public_id_checks(line.rstrip("\n")) else "f")
        return
    if what == "psycopg":
        import orders_psycopg
        run_orders(orders_psycopg.save_order, orders_psycopg.conn.cursor)
    elif what == "sqlalchemy":
        import orders_sqlalchemy_keys as recipe
        import psycopg2
        conn = psycopg2.connect("")
        conn.autocommit = True
        run_orders(recipe.save_order, conn.cursor)
    elif what == "django":
        import shop  # the page's settings and django.setup()
        shop_models = shop.shop_models
        from django.db import connection
        last = run_orders(shop_models.save_order, connection.cursor)
        order = shop_models.Order.objects.get(id=last)
        check(order.lines.count() == len(PRODUCTS[-1]), "Django reads an order's lines")
    else:
        raise ValueError("unknown framework " + what)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report any failure as exit status 1
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
