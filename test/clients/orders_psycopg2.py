#!/usr/bin/python3
"""An order and its lines through psycopg2, run by test/t/integrations/python_clients.pl.

Takes the keys of an order and its three lines first (snowid_next_batch),
inserts them in one transaction, reads them back and checks that every key
came back exactly: compared with the server's own text of it.  Connects
with the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER).  Prints
one line of JSON ({"order": "<id>", "lines": [...], "checks": n}) and
exits 0, or prints what failed and exits 1.
"""
import json
import sys

import psycopg2

checks = 0


def check(ok, what):
    global checks
    if not ok:
        raise AssertionError("check failed: " + what)
    checks += 1


def main():
    products = ["apple", "pear", "plum"]
    conn = psycopg2.connect("")
    try:
        # the keys first (the order's and one per line, ascending), then the
        # order and its lines, in one transaction ("with conn" commits)
        with conn, conn.cursor() as cur:
            cur.execute("SELECT id FROM snowid_next_batch(4) AS id ORDER BY id")
            keys = [row[0] for row in cur.fetchall()]
            check(len(keys) == 4, "four keys taken")
            check(all(isinstance(k, int) for k in keys), "keys are Python ints")
            check(keys == sorted(set(keys)), "keys ascend")
            order_key, *line_keys = keys
            cur.execute("INSERT INTO orders (id, customer) VALUES (%s, %s)",
                        (order_key, "alice"))
            cur.executemany(
                "INSERT INTO order_lines (id, order_id, product)"
                " VALUES (%s, %s, %s)",
                [(k, order_key, p) for k, p in zip(line_keys, products)])

        # read back by the order's key
        with conn, conn.cursor() as cur:
            cur.execute(
                "SELECT o.id, o.id::text, l.id, l.id::text, l.product"
                " FROM orders o JOIN order_lines l ON l.order_id = o.id"
                " WHERE o.id = %s ORDER BY l.id", (order_key,))
            rows = cur.fetchall()
        check(len(rows) == 3, "three lines read back")
        for i, (oid, otext, lid, ltext, product) in enumerate(rows):
            check(oid == order_key and str(oid) == otext,
                  "order key read back exactly")
            check(lid == line_keys[i] and str(lid) == ltext,
                  "line %d key read back exactly" % i)
            check(product == products[i], "line %d product" % i)

        print(json.dumps({"order": rows[0][1], "lines": [r[3] for r in rows],
                          "checks": checks}))
    finally:
        conn.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report any failure as exit status 1
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
