"""One workload, two applications: the store's orders shaped for the customer who reads them, and
shaped for the warehouse that picks them.

The same generated orders are stored twice, in one database (``workbench_<learner>_store_apps``):

- ``orders`` (the customer application): one document per order, with each line's product name
  and price at the time of sale and the total, indexed ``{customerId: 1, createdAt: -1, _id: -1}``: "my
  10 newest orders" is one indexed read of whole orders.
- ``pick_lines`` (the warehouse application): one small document per order line, holding only what
  a picker needs (product, quantity, order, status), indexed ``{status: 1, productId: 1, _id: 1}``: the
  pick list (every paid line, in product order) is one indexed read.

Each application's read is also run against the other application's shape, where it can be
answered at all, so the table shows what a shape built for somebody else's read costs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pymongo import ASCENDING, DESCENDING
from pymongo.database import Database

from workbook.calls import measure_call
from workbook.errors import ArgumentTypeError, WorkbookError
from workbook.gc_pause import paused
from workbook.shapes.spec import Document

PICKABLE = "paid"
"""The order status the warehouse picks: paid, not yet shipped."""


def pick_lines(orders: list[Document]) -> list[Document]:
    """The warehouse's shape of ``orders``: one document per line, only what a picker needs.

    >>> pick_lines([{"_id": "o1", "status": "paid", "createdAt": 0, "customerId": "c",
    ...              "items": [{"productId": "p1", "name": "Mug", "price": 3.0, "quantity": 2}]}])
    [{'_id': 'o1:p1', 'orderId': 'o1', 'productId': 'p1', 'quantity': 2, 'status': 'paid', 'createdAt': 0}]
    """
    return [
        {
            "_id": f"{order['_id']}:{line['productId']}",
            "orderId": order["_id"],
            "productId": line["productId"],
            "quantity": line["quantity"],
            "status": order["status"],
            "createdAt": order["createdAt"],
        }
        for order in orders
        for line in order["items"]
    ]


@dataclass
class OrderApplications:
    """The store's orders in both applications' shapes, in one database.

    Used in a ``with`` block, the database is dropped when the block ends (measure, keep the table, free
    the memory): ``with load_applications(store) as apps: table = apps.measure()``.
    """

    db: Database

    def __enter__(self) -> OrderApplications:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.drop()

    def drop(self) -> None:
        """Drop both applications' database (the workbench's own; ``load_applications`` makes it again)."""
        from workbook.namespace import require_own_database

        require_own_database(self.db.name)
        self.db.client.drop_database(self.db.name)

    def my_orders(self, customer_id: str, limit: int = 10) -> list[Document]:
        """Customer application, its own shape: a customer's newest orders, one indexed read."""
        cursor = self.db.orders.find({"customerId": customer_id}).sort([("createdAt", -1), ("_id", -1)]).limit(limit)
        return list(cursor)

    def pick_list(self) -> list[Document]:
        """Warehouse application, its own shape: every line to pick, in product order, one indexed read."""
        cursor = self.db.pick_lines.find({"status": PICKABLE}, {"productId": 1, "quantity": 1, "orderId": 1})
        return list(cursor.sort([("productId", 1), ("_id", 1)]))

    def pick_list_from_orders(self) -> list[Document]:
        """The warehouse's read on the customer's shape: whole orders filtered, unwound and re-sorted."""
        pipeline: list[dict[str, Any]] = [
            {"$match": {"status": PICKABLE}},
            {"$unwind": "$items"},
            {"$project": {"productId": "$items.productId", "quantity": "$items.quantity", "orderId": "$_id"}},
            {"$sort": {"productId": 1, "orderId": 1}},
        ]
        return list(self.db.orders.aggregate(pipeline))

    def measure(self) -> pd.DataFrame:
        """Each application's read on each shape: round trips, documents examined and returned, bytes."""
        newest = self.db.orders.find_one(sort=[("createdAt", -1)])
        if newest is None:
            raise WorkbookError(f"{self.db.name}.orders is empty.", fix="Run load_applications(store) again.")
        customer = newest["customerId"]
        reads: list[tuple[str, str, Callable[[], Any] | None]] = [
            ("customer: my 10 newest orders", "orders (customer's shape)", lambda: self.my_orders(customer)),
            ("customer: my 10 newest orders", "pick_lines (warehouse's shape)", None),
            ("warehouse: today's pick list", "pick_lines (warehouse's shape)", self.pick_list),
            ("warehouse: today's pick list", "orders (customer's shape)", self.pick_list_from_orders),
        ]
        rows = []
        for application, shape, call in reads:
            row: dict[str, Any] = {"application": application, "shape": shape}
            if call is None:
                row["note"] = "cannot answer: the lines hold no customer, prices or totals"
            else:
                work = measure_call(self.db, call)
                row.update(
                    round_trips=work.round_trips,
                    docs_examined=work.docs_examined,
                    results=len(work.result),
                    bytes_returned=work.bytes_returned,
                    note="",
                )
            rows.append(row)
        frame = pd.DataFrame(rows).set_index(["application", "shape"])
        columns = ["round_trips", "docs_examined", "results", "bytes_returned", "note"]
        return frame[columns].astype({c: "Int64" for c in columns[:-1]})


APPLICATIONS_SHAPE = "applications"
"""The name both applications' collections are kept under in the snapshot cache (beside the shapes)."""


def load_applications(dataset: Any, db: Database | None = None, *, progress: bool = True) -> OrderApplications:
    """Store ``dataset``'s orders in both applications' shapes (replacing what ``db`` held); returns them.

    A progress bar names each step (``progress=False`` hides it): storing and modelling both shapes
    takes seconds at ``small``. On the offline default the stored collections are kept in the snapshot
    cache, as a load's are (:mod:`workbook.snapshot`): the same orders again are restored from it.
    """
    from workbook import snapshot
    from workbook.connection import connect
    from workbook.datasets import Dataset
    from workbook.engine_reads import is_offline
    from workbook.loading import fill, warm_models
    from workbook.namespace import require_own_database
    from workbook.waiting import wait_bar

    if not isinstance(dataset, Dataset) or dataset.name != "store":
        raise ArgumentTypeError("dataset", dataset, 'the store, as workbook.generate("store", ...) returned it')
    db = db if db is not None else connect(database="store_apps", quiet=True)
    require_own_database(db.name)
    names = ["orders", "pick_lines"]
    offline = is_offline(db)
    with wait_bar(total=3, desc="store both applications' shapes", unit="step", progress=progress, delay=0) as bar:
        hashed, found = None, None
        if offline:
            hashed = snapshot.data_hash(dataset)  # taken once: find checks it, remember stores it
            found = snapshot.find(dataset, APPLICATIONS_SHAPE, scale=dataset.scale, seed=dataset.seed, hashed=hashed)
        if found is not None:
            bar.set_postfix_str("restored")
            snapshot.install_collections(db.name, found)
            bar.update(2)
        else:
            with paused():  # a load makes long-lived objects only: see workbook.gc_pause
                orders = [dict(order) for order in dataset.documents("orders")]
                for name in names:
                    db.drop_collection(name)
                newest = [("customerId", ASCENDING), ("createdAt", DESCENDING), ("_id", DESCENDING)]
                bar.set_postfix_str("orders")
                db.orders.create_index(newest, name="customer_newest")  # on the empty collection: then one pass
                fill(db, "orders", orders)
                bar.update()
                bar.set_postfix_str("pick_lines")
                pick_order = [("status", ASCENDING), ("productId", ASCENDING), ("_id", ASCENDING)]
                db.pick_lines.create_index(pick_order, name="pick_order")
                fill(db, "pick_lines", pick_lines(orders))
                bar.update()
            if offline:
                try:
                    snapshot.remember_collections(dataset, APPLICATIONS_SHAPE, db.name, names, {}, hashed)
                finally:
                    snapshot.BUILT.clear()
        bar.set_postfix_str("models")
        if offline:
            warm_models(db, names, progress=False)
        bar.update()
    return OrderApplications(db)
