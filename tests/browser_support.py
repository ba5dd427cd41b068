"""Helpers for the browser tests: a throwaway JupyterLab server and Debian chromium driven by playwright.

The server binds to 127.0.0.1 only, with a random token, a free port and its own runtime, workspace,
settings and IPython directories under the test's tmp_path, so it neither reads nor writes the
user's JupyterLab state. Playwright never downloads a browser here: it launches the system chromium.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium (``apt-get install chromium``; ``.ci/run`` installs it)."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Flags for a closed network: without the background-networking ones chromium keeps dialling out."""

SERVER_START_TIMEOUT = 60.0
"""Seconds to wait for the JupyterLab server to answer on its API."""


def load_factor() -> float:
    """How much slower than idle this machine is now: the load average per core, at least 1 (re-read each call)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None if they can."""
    if not CHROMIUM.exists():
        return f"needs Debian chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "needs the playwright Python package (pip install -e '.[test]')"
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "needs jupyterlab (pip install -e '.[test]')"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_notebook(path: Path, sources: list[str]) -> Path:
    """Write a notebook of code cells for the ``python3`` kernel (so JupyterLab asks no question)."""
    import nbformat  # comes with jupyterlab, which skip_reason checks for

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(notebook, path)
    return path


@dataclass
class LabServer:
    """A running JupyterLab server: where it listens and how to reach a notebook in the browser."""

    port: int
    token: str
    process: subprocess.Popen[bytes]
    log: Path
    runtime_dir: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        """The page that opens ``notebook`` (a path under the server's root) in JupyterLab."""
        return f"{self.base}/lab/tree/{notebook}?token={self.token}"

    def api(self, path: str = "") -> object:
        """GET ``/api{path}`` with the token and return the decoded JSON."""
        with urllib.request.urlopen(f"{self.base}/api{path}?token={self.token}", timeout=5) as response:
            return json.loads(response.read())

    def wait_for_connected_kernel(self, timeout: float, count: int = 1) -> None:
        """Wait until ``count`` kernels are idle with a page connected (the latest: the notebook just opened)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                kernels = self.api("/kernels")
            except urllib.error.HTTPError as error:
                # jupyter_server answers 500 while a kernel is still starting (list_kernels reads its
                # 'last_activity' before the kernel has one): not ready yet, ask again
                if error.code != 500:
                    raise
                time.sleep(0.25)
                continue
            ready = [k for k in kernels if k["execution_state"] == "idle" and k["connections"] > 0]  # type: ignore[index]
            if len(ready) >= count:
                return
            time.sleep(0.25)
        raise TimeoutError(f"no kernel idle and connected within {timeout:.0f} s: {self.api('/kernels')}")

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log (for failure messages)."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


def server_environment(home: Path, env: dict[str, str]) -> dict[str, str]:
    """The server's environment: ours, plus ``env``, with JupyterLab's writable state under ``home``.

    Only the runtime, workspace, user-settings and IPython directories move (and the notebook-signing
    key, by a flag): ``JUPYTER_DATA_DIR`` stays, and the venv's ``share/jupyter`` (labextensions, the
    python3 kernelspec) is found through ``sys.prefix`` as usual. ``MONGODB_URI`` is dropped so the
    kernel uses the in-process offline engine and nothing the test loads outlives the kernel.
    """
    environment = {key: value for key, value in os.environ.items() if key != "MONGODB_URI"}
    for name, variable in [
        ("runtime", "JUPYTER_RUNTIME_DIR"),
        ("workspaces", "JUPYTERLAB_WORKSPACES_DIR"),
        ("user-settings", "JUPYTERLAB_SETTINGS_DIR"),
        ("ipython", "IPYTHONDIR"),
        ("notary", None),  # --NotebookNotary.data_dir: it must exist
    ]:
        directory = home / name
        directory.mkdir(parents=True, exist_ok=True)
        if variable:
            environment[variable] = str(directory)
    # No "get Jupyter news?" toast over the notebook, no update check, no toasts at all.
    notifications = home / "user-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notifications.parent.mkdir(parents=True, exist_ok=True)
    notifications.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True}))
    # The kernelspec says "python": make it this venv's python.
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment.get("PATH", "")])
    environment["PYTHONUNBUFFERED"] = "1"
    environment.update(env)
    return environment


@contextmanager
def lab_server(root: Path, env: dict[str, str], home: Path) -> Iterator[LabServer]:
    """Start ``jupyter lab`` serving ``root`` on 127.0.0.1, wait until it answers, stop it afterwards.

    Stopping the server (SIGTERM, then SIGKILL after 15 s) shuts its kernels down too; the kernel
    processes are also killed directly in case the server could not.
    """
    port, token = free_port(), secrets.token_hex(16)
    log = home / "jupyter-lab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--NotebookNotary.data_dir={home / 'notary'}",  # not the user's notebook-signing key
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]
    home.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=server_environment(home, env),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    server = LabServer(port=port, token=token, process=process, log=log, runtime_dir=home / "runtime")
    try:
        _wait_until_answering(server)
        yield server
    finally:
        _stop(server)


_NOT_ANSWERING = (OSError, ValueError, http.client.HTTPException)
"""What urllib raises while a server starts or stops (URLError and socket errors are OSErrors)."""


def _wait_until_answering(server: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            server.api()
            return
        except _NOT_ANSWERING:
            time.sleep(0.25)
    raise TimeoutError(f"jupyter lab did not answer within {SERVER_START_TIMEOUT:.0f} s:\n{server.log_tail()}")


def _stop(server: LabServer) -> None:
    """Shut the kernels down, stop the server, then kill anything of ours still running."""
    process = server.process
    if process.poll() is None:
        try:
            for kernel in server.api("/kernels"):  # type: ignore[union-attr]
                request = urllib.request.Request(
                    f"{server.base}/api/kernels/{kernel['id']}?token={server.token}", method="DELETE"
                )
                urllib.request.urlopen(request, timeout=10).close()
        except _NOT_ANSWERING:
            pass  # the server is going down anyway, and its shutdown stops kernels too
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    # Kernels run in sessions of their own: kill any whose connection file is in this server's runtime dir.
    for pid in _processes_mentioning(f"{server.runtime_dir}{os.sep}"):
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _processes_mentioning(text: str) -> list[int]:
    """Process ids whose command line contains ``text`` (Linux ``/proc``; empty elsewhere)."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if text in entry.joinpath("cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in pids if pid != os.getpid()]


def artifacts_dir() -> Path:
    """``tests/artifacts``: screenshots the browser tests leave for a human to look at."""
    directory = Path(__file__).parent / "artifacts"
    directory.mkdir(exist_ok=True)
    return directory


def chromium_launch_options() -> dict[str, object]:
    """Keyword arguments for ``playwright.chromium.launch``: the system chromium, never a download."""
    return {"executable_path": str(CHROMIUM), "headless": True, "args": list(CHROMIUM_ARGS)}


__all__ = [
    "CHROMIUM",
    "LabServer",
    "artifacts_dir",
    "chromium_launch_options",
    "free_port",
    "lab_server",
    "skip_reason",
    "write_notebook",
]
