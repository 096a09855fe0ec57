#!/usr/bin/python3
"""Reference implementation of snowid's public ids (doc/public-ids.md).

Python 3 standard library only, written from the specification: SipHash-2-4,
the Feistel permutation of [0, 2^63), and the text with its Damm check
character.  test/t/core/public_ids.pl runs it against the SQL functions.

Usage:
  public_ids.py selftest [N]   SipHash's published vectors, the proof that
                               the check catches every single wrong character
                               and every swap of neighbours (all 32^3 cases),
                               and every such change of N sampled texts
                               refused (default 10000)
  public_ids.py vectors        the test vectors of doc/public-ids.md
  public_ids.py parse TEXT...  "KEYID|NUMBER" for each text, or "invalid"
  public_ids.py confusable A B "yes" if one wrong character count can turn
                               a public id of one key id into one of the
                               other (a key file must not hold both), or "no"
  public_ids.py check KEYID HEX
                               reads "id|number|text" lines (psql -At) on
                               stdin; exits 1 on the first that differs from
                               this implementation, else prints the count
"""

import random
import sys

MASK64 = (1 << 64) - 1
ROUNDS = 10
HIGH_BITS = 31
LOW_BITS = 32
BODY_SYMBOLS = 13
KEY_ID_MAX = 8
SYMBOLS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ALIASES = {"O": 0, "I": 1, "L": 1}


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK64


def siphash24(key, message):
    """SipHash-2-4 of bytes message under a 16-byte key, as an integer."""
    k0 = int.from_bytes(key[:8], "little")
    k1 = int.from_bytes(key[8:16], "little")
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def sipround():
        nonlocal v0, v1, v2, v3
        v0 = (v0 + v1) & MASK64
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & MASK64
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & MASK64
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & MASK64
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)

    n = len(message)
    tail = n - n % 8
    blocks = [int.from_bytes(message[i:i + 8], "little")
              for i in range(0, tail, 8)]
    blocks.append(int.from_bytes(message[tail:], "little") | ((n & 0xFF) << 56))
    for m in blocks:
        v3 ^= m
        sipround()
        sipround()
        v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        sipround()
    return v0 ^ v1 ^ v2 ^ v3


def siphash24_word(k0, k1, m, mask=MASK64):
    """SipHash-2-4 of one 64-bit word m as 8 little-endian bytes: the same
    as siphash24(), unrolled for the round function's one message length
    (mask is MASK64 as a local name, which is faster)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    # the word, then the last block: the length (8) in the top byte
    for block, rounds in ((m, 2), (8 << 56, 2), (None, 4)):
        if block is None:
            v2 ^= 0xFF
        else:
            v3 ^= block
        for _ in range(rounds):
            v0 = (v0 + v1) & mask
            v1 = ((v1 << 13) | (v1 >> 51)) & mask ^ v0
            v0 = ((v0 << 32) | (v0 >> 32)) & mask
            v2 = (v2 + v3) & mask
            v3 = ((v3 << 16) | (v3 >> 48)) & mask ^ v2
            v0 = (v0 + v3) & mask
            v3 = ((v3 << 21) | (v3 >> 43)) & mask ^ v0
            v2 = (v2 + v1) & mask
            v1 = ((v1 << 17) | (v1 >> 47)) & mask ^ v2
            v2 = ((v2 << 32) | (v2 >> 32)) & mask
        if block is not None:
            v0 ^= block
    return v0 ^ v1 ^ v2 ^ v3


_KEY_WORDS = {}


def round_function(key, rnd, half):
    """SipHash-2-4 of the 64-bit little-endian word (round << 32 | half)."""
    words = _KEY_WORDS.get(key)
    if words is None:
        words = _KEY_WORDS[key] = (int.from_bytes(key[:8], "little"),
                                   int.from_bytes(key[8:], "little"))
    return siphash24_word(words[0], words[1], (rnd << 32) | half)


def permute(key, id_):
    """The public number of an id in [0, 2^63)."""
    assert 0 <= id_ < 1 << 63
    high, low = id_ >> LOW_BITS, id_ & ((1 << LOW_BITS) - 1)
    for rnd in range(ROUNDS):
        if rnd % 2 == 0:
            high ^= round_function(key, rnd, low) & ((1 << HIGH_BITS) - 1)
        else:
            low ^= round_function(key, rnd, high) & ((1 << LOW_BITS) - 1)
    return (high << LOW_BITS) | low


def unpermute(key, number):
    """The id of a public number."""
    assert 0 <= number < 1 << 63
    high, low = number >> LOW_BITS, number & ((1 << LOW_BITS) - 1)
    for rnd in reversed(range(ROUNDS)):
        if rnd % 2 == 0:
            high ^= round_function(key, rnd, low) & ((1 << HIGH_BITS) - 1)
        else:
            low ^= round_function(key, rnd, high) & ((1 << LOW_BITS) - 1)
    return (high << LOW_BITS) | low


def double(x):
    """2x in GF(32) = GF(2)[x] / (x^5 + x^2 + 1)."""
    return ((x << 1) & 0x1F) ^ (0x05 if x & 0x10 else 0)


def op(state, symbol):
    """The quasigroup of the check: state o symbol = 2 * state + symbol."""
    return double(state) ^ symbol


def symbol_value(c):
    """The value of a character, 0 to 31, or None.  Only ASCII letters have
    a case here: str.upper() would turn a dotless i into I."""
    if not ("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9"):
        return None
    c = c.upper()
    if c in ALIASES:
        return ALIASES[c]
    i = SYMBOLS.find(c)
    return i if i >= 0 and c else None


def format_public(key_id, number):
    """The text of a number made with the key of key_id."""
    values = [symbol_value(c) for c in key_id]
    values += [(number >> (5 * i)) & 0x1F
               for i in reversed(range(BODY_SYMBOLS))]
    state = 0
    for v in values:
        state = op(state, v)
    check = op(state, 0)
    key = "".join(SYMBOLS[v] for v in values[:len(key_id)])
    body = "".join(SYMBOLS[v] for v in values[len(key_id):])
    return key + "-" + body + SYMBOLS[check]


def parse_public(text):
    """(key id, number) of a text, or None if it is not a public id.  A text
    of more than 64 bytes (UTF-8) is refused, not cut short."""
    if len(text.encode("utf-8")) > 64:
        return None
    values = []
    for c in text:
        if c == "-":
            continue
        v = symbol_value(c)
        if v is None:
            return None
        values.append(v)
    key_len = len(values) - (BODY_SYMBOLS + 1)
    if not 1 <= key_len <= KEY_ID_MAX:
        return None
    state = 0
    for v in values:
        state = op(state, v)
    if state != 0 or values[key_len] > 7:
        return None
    number = 0
    for v in values[key_len:key_len + BODY_SYMBOLS]:
        number = (number << 5) | v
    return "".join(SYMBOLS[v] for v in values[:key_len]), number


def key_ids_confusable(a, b):
    """Whether one wrong character count can turn a public id of key id a
    into a text that reads as one of key id b, or back: b is a with one
    symbol x put in at place p (or the other way round), where p is the end
    and x can begin a body (0 to 7), or x is 3 * s, s the check's state
    after the symbols before p, which s o x leaves as it is."""
    if len(a) > len(b):
        a, b = b, a
    if len(b) != len(a) + 1:
        return False
    state = 0
    for p in range(len(a) + 1):
        if a[:p] == b[:p] and a[p:] == b[p + 1:]:
            x = symbol_value(b[p])
            if (p == len(a) and x < 8) or x == double(state) ^ state:
                return True
        if p < len(a):
            state = op(state, symbol_value(a[p]))
    return False


def one_edit_reads(key_a, key_b, rng):
    """Whether some text of key_a, with one symbol put in or dropped
    anywhere, reads as a text of key_b: tried on a number whose first body
    symbols are each of 0 to 7 in turn."""
    for lead in range(8):
        number = (lead << 60) | (rng.randrange(8) << 55) | rng.randrange(1 << 55)
        chars = format_public(key_a, number).replace("-", "")
        for i in range(len(chars) + 1):
            for s in SYMBOLS:
                got = parse_public(chars[:i] + s + chars[i:])
                if got is not None and got[0] == key_b:
                    return True
        for i in range(len(chars)):
            got = parse_public(chars[:i] + chars[i + 1:])
            if got is not None and got[0] == key_b:
                return True
    return False


def prove_key_ids(rng, pairs):
    """A key file never holds two key ids that one wrong character count
    confuses: whenever a search of every insertion and deletion in texts of
    one key id finds a text of the other, key_ids_confusable() says so (it
    may say so of a few more: refusing a pair is safe).  Over sampled pairs
    of one- and two-symbol key ids, and of two- and three-symbol ones, that
    differ by one symbol put in."""
    cases = []
    for _ in range(pairs):
        a = "".join(rng.choice(SYMBOLS) for _ in range(rng.randint(1, 2)))
        p = rng.randint(0, len(a))
        cases.append((a, a[:p] + rng.choice(SYMBOLS) + a[p:]))
    found = 0
    for a, b in cases:
        if one_edit_reads(a, b, rng) or one_edit_reads(b, a, rng):
            assert key_ids_confusable(a, b), (a, b)
            found += 1
    for a, b in (("1", "01"), ("12", "120"), ("K1", "K10")):
        assert key_ids_confusable(a, b) and one_edit_reads(b, a, rng)
    assert not key_ids_confusable("K1", "K2")
    assert not key_ids_confusable("K1", "KA1")
    return len(cases), found


def prove_check():
    """The check catches every single wrong symbol and every swap of two
    different neighbours: o is a quasigroup (each row and column a
    permutation), weakly totally antisymmetric ((c o x) o y = (c o y) o x
    only if x = y), and a step is a permutation of the state, so a
    difference reached anywhere survives to the end."""
    for a in range(32):
        assert sorted(op(a, y) for y in range(32)) == list(range(32))
        assert sorted(op(x, a) for x in range(32)) == list(range(32))
    for c in range(32):
        for x in range(32):
            for y in range(32):
                if x != y:
                    assert op(op(c, x), y) != op(op(c, y), x)


def selftest(samples):
    # SipHash's own vectors: key 00..0f, messages 00..(n-1) (the paper's
    # appendix A and the reference implementation's vectors.h)
    key = bytes(range(16))
    assert siphash24(key, b"") == 0x726FDB47DD0E0E31
    assert siphash24(key, bytes(range(8))) == 0x93F5F5799A932462
    assert siphash24(key, bytes(range(15))) == 0xA129CA6149BE45E5
    rng = random.Random(22)
    for _ in range(1000):
        m = rng.randrange(1 << 64)
        k = rng.randrange(1 << 128).to_bytes(16, "little")
        assert siphash24(k, m.to_bytes(8, "little")) == siphash24_word(
            int.from_bytes(k[:8], "little"), int.from_bytes(k[8:], "little"), m)
    prove_check()
    # the inverse, which check() leaves to this (it checks SQL against
    # permute())
    for _ in range(samples):
        k = rng.randrange(1 << 128).to_bytes(16, "little")
        id_ = rng.randrange(1 << 63)
        assert unpermute(k, permute(k, id_)) == id_

    rejected = 0
    for _ in range(samples):
        key_id = "".join(rng.choice(SYMBOLS)
                         for _ in range(rng.randint(1, KEY_ID_MAX)))
        number = rng.randrange(1 << 63)
        text = format_public(key_id, number)
        assert parse_public(text) == (key_id, number)
        assert parse_public(text.lower()) == (key_id, number)
        chars = text.replace("-", "")
        for i, c in enumerate(chars):
            for s in SYMBOLS:
                if s != c:
                    assert parse_public(chars[:i] + s + chars[i + 1:]) is None
                    rejected += 1
        for i in range(len(chars) - 1):
            if chars[i] != chars[i + 1]:
                swapped = chars[:i] + chars[i + 1] + chars[i] + chars[i + 2:]
                assert parse_public(swapped) is None
                rejected += 1
    pairs, confused = prove_key_ids(rng, 80)
    print("selftest ok: %d changed texts rejected; of %d pairs of key ids,"
          " %d confused by one wrong character count, all refused"
          % (rejected, pairs, confused))


VECTOR_KEYS = [
    ("K1", bytes.fromhex("000102030405060708090a0b0c0d0e0f")),
    ("Z9", bytes.fromhex("f0e1d2c3b4a5968778695a4b3c2d1e0f")),
]
VECTOR_IDS = [0, 1, 2, 4096, 1 << 22, 1541815603606036480,
              7303347924938506240, (1 << 63) - 2, (1 << 63) - 1]


def vectors():
    print("| key id | key | id | number | text |")
    print("|---|---|---|---|---|")
    for key_id, key in VECTOR_KEYS:
        for id_ in VECTOR_IDS:
            number = permute(key, id_)
            assert unpermute(key, number) == id_
            print("| %s | %s | %d | %d | %s |"
                  % (key_id, key.hex(), id_, number,
                     format_public(key_id, number)))


def check(key_id, key_hex):
    key = bytes.fromhex(key_hex)
    n = 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        id_, number, text = line.split("|")
        id_, number = int(id_), int(number)
        want = permute(key, id_)
        if (number != want or text != format_public(key_id, want)
                or parse_public(text) != (key_id.upper(), want)):
            print("differs: %s (expected %d %s)"
                  % (line, want, format_public(key_id, want)))
            sys.exit(1)
        n += 1
    print("%d ids agree" % n)


def main(argv):
    if len(argv) >= 1 and argv[0] == "selftest":
        selftest(int(argv[1]) if len(argv) > 1 else 10000)
    elif argv == ["vectors"]:
        vectors()
    elif len(argv) >= 1 and argv[0] == "parse":
        for text in argv[1:]:
            got = parse_public(text)
            print("invalid" if got is None else "%s|%d" % got)
    elif len(argv) == 3 and argv[0] == "confusable":
        print("yes" if key_ids_confusable(argv[1].upper(), argv[2].upper())
              else "no")
    elif len(argv) == 3 and argv[0] == "check":
        check(argv[1], argv[2])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
