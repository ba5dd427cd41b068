"""Check the diffs in patches/ on their own: plain (patched) mongoeco, its own wire server, real pymongo.

    cp -r "$(python -c 'import mongoeco, os; print(os.path.dirname(mongoeco.__file__))')" /tmp/patched/
    (cd /tmp/patched && patch -p1 < patches/mongoeco-4.11.0.diff)
    PYTHONPATH=/tmp/patched python patches/check_upstream.py     # unpatched mongoeco fails on the first line

No workbench code is imported. Prints what it measured.
"""
import asyncio
import datetime
import threading

from mongoeco.api import AsyncMongoClient
from mongoeco.engines.memory import MemoryEngine
from mongoeco.wire.proxy import AsyncMongoEcoProxyServer
from pymongo import MongoClient
from pymongo.errors import PyMongoError
from bson import Decimal128, Int64, DBRef, MinKey
loop = asyncio.new_event_loop(); threading.Thread(target=loop.run_forever, daemon=True).start()
proxy = AsyncMongoEcoProxyServer(client=AsyncMongoClient(MemoryEngine()))
addr = asyncio.run_coroutine_threadsafe(proxy.start(), loop).result()
client = MongoClient(addr.uri)
db = client.up
db.d.insert_one({"p": Decimal128("9.99"), "n": Int64(2**40), "r": DBRef("c", 1), "m": MinKey()})
print("bsonSize", next(db.d.aggregate([{"$project": {"s": {"$bsonSize": "$$ROOT"}}}]))["s"])
db.b.insert_many([{"a": 1}, {"a": 2}, {"a": "x"}, {"a": True}, {"a": datetime.datetime(2020, 1, 1)}])
print("bracket", db.b.count_documents({"a": {"$gt": 1}}))
print("fr", db.b.count_documents({"a": "X"}, collation={"locale": "fr", "strength": 2}))
print("capped", db.create_collection("cap", capped=True, size=4096.0).name)
db.acc.insert_one({"_id": 0, "n": 0})
errors = []
def worker():
    with client.start_session() as s:
        for _ in range(10):
            try: s.with_transaction(lambda ss: db.acc.update_one({"_id": 0}, {"$inc": {"n": 1}}, session=ss))
            except PyMongoError as e: errors.append(repr(e)[:80])
ts = [threading.Thread(target=worker) for _ in range(3)]; [t.start() for t in ts]; [t.join() for t in ts]
print("n", db.acc.find_one()["n"], "expected 30; errors", len(errors), errors[:1])
