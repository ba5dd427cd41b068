"""pytest plugin for ``python -m workbook conformance``: points pymongo's own tests at the offline default.

Loaded with ``-p workbook.dev.conformance_plugin`` by :mod:`workbook.dev.conformance` only. pymongo's test
package reads ``DB_IP``/``DB_PORT``/``DB_USER``/``DB_PASSWORD`` when it is imported, so the offline
server starts (in the pytest process: it is in-process by design) before any conftest loads.
"""

from __future__ import annotations

import os
from typing import Any


def pytest_load_initial_conftests(early_config: Any, parser: Any, args: list[str]) -> None:
    """Start this process's offline server and hand its address and credentials to pymongo's tests."""
    from workbook.offline import USER, offline_server

    server = offline_server()
    os.environ.update(
        {"DB_IP": server.host, "DB_PORT": str(server.port), "DB_USER": USER, "DB_PASSWORD": server._password}
    )
