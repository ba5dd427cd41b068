"""A Jupyter kernel client whose waits cannot miss a ready message (a maintainer's tool).

Re-executing a notebook with nbconvert or nbclient stalled intermittently on this machine: the
kernel had already sent a cell's ``execute_reply``, it sat in the client's shell socket, and the
client's asyncio wait on that socket was never woken. ZeroMQ signals readiness through an
edge-triggered file descriptor; when that edge is lost, pyzmq's ``await socket.poll(timeout)`` sleeps
through a message that is already there, until the cell's timeout (or forever without one).

:class:`SlicedKernelClient` is jupyter_client's ``AsyncKernelClient`` with channels that wait in short
slices (:data:`SLICE_S`): before and after each slice they ask the socket itself (``ZMQ_EVENTS``, which
also processes ZeroMQ's pending commands) whether a message is ready, so a lost wakeup costs at most
one slice. Timeouts keep their meaning: ``get_msg(timeout=t)`` raises :class:`queue.Empty` after ``t``
seconds with nothing ready; ``timeout=None`` waits until a message comes.

Use it everywhere the project runs notebooks through nbclient: :data:`NBCONVERT_OPTION` for
``jupyter nbconvert --execute``, :func:`nbclient_config` for ``nbclient.NotebookClient(config=...)``.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type
from traitlets.config import Config

SLICE_S = 1.0
"""The longest one wait on a socket lasts before the socket is asked again (the cost of a lost wakeup)."""


class SlicedSocketChannel(AsyncZMQSocketChannel):
    """An asyncio ZeroMQ channel whose ``get_msg`` waits in slices of :attr:`slice_s` seconds."""

    slice_s: float = SLICE_S

    def _ready(self) -> bool:
        """Whether a message is waiting, asked of the socket directly (not of its file descriptor)."""
        assert self.socket is not None
        return bool(int(self.socket.get(zmq.EVENTS)) & zmq.POLLIN)

    async def _message(self) -> dict[str, Any]:
        """The waiting message, read and deserialized with the channel's session (as jupyter_client does)."""
        assert self.socket is not None
        parts = await self.socket.recv_multipart()
        _, message = self.session.feed_identities(parts)
        return self.session.deserialize(message)

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        """The next message; :class:`queue.Empty` if none is ready within ``timeout`` seconds (``None``: wait)."""
        assert self.socket is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._ready():
                return await self._message()
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise Empty
            step = self.slice_s if remaining is None else min(self.slice_s, remaining)
            if await self.socket.poll(max(1, int(step * 1000))):
                return await self._message()


class SlicedKernelClient(AsyncKernelClient):
    """``AsyncKernelClient`` (what nbclient and ``nbconvert --execute`` use) with :class:`SlicedSocketChannel`."""

    shell_channel_class = Type(SlicedSocketChannel)
    iopub_channel_class = Type(SlicedSocketChannel)
    stdin_channel_class = Type(SlicedSocketChannel)
    control_channel_class = Type(SlicedSocketChannel)


CLIENT_CLASS = f"{__name__}.{SlicedKernelClient.__name__}"
"""The import path nbclient's kernel manager takes as its ``client_class``."""

NBCONVERT_OPTION = f"--KernelManager.client_class={CLIENT_CLASS}"
"""The ``jupyter nbconvert --execute`` option that runs a notebook with :class:`SlicedKernelClient`."""


def nbclient_config() -> Config:
    """A config for ``nbclient.NotebookClient(config=...)``: its kernel manager makes :class:`SlicedKernelClient`."""
    config = Config()
    config.KernelManager.client_class = CLIENT_CLASS
    return config
