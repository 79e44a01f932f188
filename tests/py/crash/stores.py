# SPDX-License-Identifier: MIT
"""stores.py STORE write|check -- three transactions of a key-value store of
ALICE's study (lmdb, gdbm, leveldb), each said ("1", "2", "3") once it
returned; the check exits 3 when the store does not open or read, 4 when a
transaction said is missing.  stores.py leveldb log|prefix -- five puts of
10 kB without sync, each one write to LevelDB's log; the check exits 4
when the keys it holds are not the first k of them.  Run by Debian's
python3, whose modules these are (python3-lmdb, python3-gdbm,
python3-plyvel)."""
import os
import sys


def lmdb_store():
    import lmdb
    env = lmdb.open("db", map_size=1 << 20)

    def put(k, v):
        with env.begin(write=True) as t:
            t.put(k, v)

    def get(k):
        with env.begin() as t:
            return t.get(k)
    return put, get, lmdb.Error


def gdbm_store():
    import dbm.gnu
    db = dbm.gnu.open("db", "w" if sys.argv[2] == "write" else "r")

    def put(k, v):
        db[k] = v
        db.sync()
    return put, db.get, dbm.gnu.error


def leveldb_store():
    import plyvel
    db = plyvel.DB("db", create_if_missing=True)
    return lambda k, v: db.put(k, v, sync=True), db.get, plyvel.Error


STORES = {"lmdb": lmdb_store, "gdbm": gdbm_store, "leveldb": leveldb_store}


def unsynced_log(mode):
    import plyvel
    try:
        db = plyvel.DB("db")
    except plyvel.Error as e:
        print(e)
        return 3
    if mode == "log":
        for k in range(1, 6):
            db.put(b"k%d" % k, b"%d" % k * 10000)
        return 0
    keys = sorted(int(k[1:]) for k, v in db if v == b"%d" % int(k[1:]) * 10000)
    if keys != list(range(1, len(keys) + 1)):
        print("not a prefix:", keys)
        return 4
    return 0


def main():
    store, mode = sys.argv[1], sys.argv[2]
    if mode == "create":
        if store == "gdbm":
            import dbm.gnu
            dbm.gnu.open("db", "c").close()
        else:
            STORES[store]()
        return 0
    if mode in ("log", "prefix"):
        return unsynced_log(mode)
    try:
        put, get, _ = STORES[store]()
        if mode == "write":
            for k in range(1, 4):
                put(b"k%d" % k, b"v%d" % k * 500)
                print(k, flush=True)
            return 0
        for line in open(os.environ["CRASHTEST_OUTPUT"]):
            if get(b"k%d" % int(line)) != b"v%d" % int(line) * 500:
                return 4
    except Exception as e:  # the store's own errors: it cannot be opened or read
        print(e)
        return 3
    return 0


sys.exit(main())
