#!/usr/bin/python3
"""An order and its lines through SQLAlchemy's ORM, run by
test/t/integrations/python_clients.pl.

The models' keys have server_default snowid_next(); Order.lines is a
relationship.  Two orders: one whose keys the application takes first
(snowid_next_batch) and sets on the objects, one whose keys the server
fills in from the default (SQLAlchemy reads them back with RETURNING).
Each is added in one transaction and read back in a new session.  Connects
with the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER).  Prints
one line of JSON ({"order": "<id>", "lines": [...], "checks": n}) for the
first order and exits 0, or prints what failed and exits 1.
"""
import json
import sys

from sqlalchemy import BigInteger, Column, ForeignKey, Text, create_engine, text
from sqlalchemy.orm import Session, declarative_base, relationship

Base = declarative_base()
checks = 0


class Order(Base):
    __tablename__ = "orders"
    id = Column(BigInteger, primary_key=True, server_default=text("snowid_next()"))
    customer = Column(Text, nullable=False)
    lines = relationship("OrderLine", back_populates="order",
                         order_by="OrderLine.id")


class OrderLine(Base):
    __tablename__ = "order_lines"
    id = Column(BigInteger, primary_key=True, server_default=text("snowid_next()"))
    order_id = Column(BigInteger, ForeignKey("orders.id"), nullable=False)
    product = Column(Text, nullable=False)
    order = relationship("Order", back_populates="lines")


def check(ok, what):
    global checks
    if not ok:
        raise AssertionError("check failed: " + what)
    checks += 1


def server_text(session, key):
    """The server's own text of a key."""
    return session.execute(text("SELECT CAST(:k AS bigint)::text"),
                           {"k": key}).scalar_one()


def main():
    products = ["apple", "pear", "plum"]
    # no host, port or database in the URL: libpq takes them from PG*
    engine = create_engine("postgresql+psycopg2://", future=True)

    # the keys first, then the order and its lines, in one transaction
    with Session(engine, future=True) as session, session.begin():
        keys = session.execute(
            text("SELECT id FROM snowid_next_batch(4) AS id ORDER BY id")
        ).scalars().all()
        check(len(keys) == 4 and keys == sorted(set(keys)), "four keys, ascending")
        session.add(Order(id=keys[0], customer="alice", lines=[
            OrderLine(id=k, product=p) for k, p in zip(keys[1:], products)]))

    # keys from the server default: flushed with RETURNING
    with Session(engine, future=True) as session:
        with session.begin():
            bob = Order(customer="bob", lines=[OrderLine(product="fig"),
                                               OrderLine(product="kiwi")])
            session.add(bob)
        bob_key = bob.id
        bob_lines = [l.id for l in bob.lines]
        check(isinstance(bob_key, int) and bob_key > keys[-1],
              "server-default order key read back, above the batch")
        check(all(isinstance(k, int) and k > bob_key for k in bob_lines),
              "server-default line keys read back, above the order's")

    # read both back in a new session, through the relationship
    with Session(engine, future=True) as session:
        alice = session.get(Order, keys[0])
        check(alice is not None and alice.customer == "alice", "order read back")
        check([l.id for l in alice.lines] == keys[1:], "line keys read back")
        check([l.product for l in alice.lines] == products, "line products")
        check(all(l.order is alice for l in alice.lines), "line.order is the order")
        check(str(alice.id) == server_text(session, alice.id), "order key exact")
        for l in alice.lines:
            check(str(l.id) == server_text(session, l.id), "line key exact")
        bob = session.get(Order, bob_key)
        check(bob is not None and [l.id for l in bob.lines] == bob_lines,
              "server-default order and lines read back")

        print(json.dumps({"order": str(alice.id),
                          "lines": [str(l.id) for l in alice.lines],
                          "checks": checks}))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report any failure as exit status 1
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
