# SPDX-License-Identifier: MIT
"""stores.py STORE write|check -- three transactions of a key-value store of
ALICE's study (lmdb, gdbm, leveldb), each said ("1", "2", "3") once it
returned; the check exits 3 when the store does not open or read, 4 when a
transaction said is missing.  Run by Debian's python3, whose modules these
are (python3-lmdb, python3-gdbm, python3-plyvel)."""
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


def main():
    store, mode = sys.argv[1], sys.argv[2]
    if mode == "create":
        if store == "gdbm":
            import dbm.gnu
            dbm.gnu.open("db", "c").close()
        else:
            STORES[store]()
        return 0
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
