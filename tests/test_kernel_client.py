"""workbook.dev.kernel_client: a wait on a kernel socket survives a lost ZeroMQ wakeup.

The fake socket reproduces the stall nbconvert hit: a message becomes ready while the client waits,
but the awaitable ``poll`` is never woken by it (the edge-triggered FD signal is lost); only asking
the socket (``ZMQ_EVENTS``) shows the message.
"""

from __future__ import annotations

import asyncio
from queue import Empty
from typing import Any

import pytest
import zmq
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session

from workbook.dev.kernel_client import (
    CLIENT_CLASS,
    NBCONVERT_OPTION,
    SlicedKernelClient,
    SlicedSocketChannel,
    nbclient_config,
)


class _LostWakeupSocket:
    """A socket whose ``poll`` never sees a message that arrives after it started (a lost wakeup)."""

    def __init__(self, frames: list[bytes]) -> None:
        self._frames = frames
        self.ready = False
        self.polls: list[int | None] = []

    def get(self, option: int) -> int:
        assert option == zmq.EVENTS
        return zmq.POLLIN if self.ready else 0

    def poll(self, timeout: int | None = None, flags: int = zmq.POLLIN) -> Any:
        self.polls.append(timeout)
        ready_now = self.ready

        async def wait() -> int:
            if ready_now:
                return zmq.POLLIN
            if timeout is None:
                await asyncio.Event().wait()  # never woken
            await asyncio.sleep(timeout / 1000)  # type: ignore[operator]
            return 0  # the message arrived meanwhile, but the wakeup was lost

        return wait()

    async def recv_multipart(self, **kwargs: Any) -> list[bytes]:
        assert self.ready, "recv before the message was ready"
        return self._frames


def _channel(kind: type[AsyncZMQSocketChannel], *, slice_s: float = 0.05) -> tuple[Any, _LostWakeupSocket]:
    session = Session(key=b"k")
    message = session.msg("execute_reply", {"status": "ok"})
    frames = session.serialize(message)
    socket = _LostWakeupSocket(frames)
    channel = kind.__new__(kind)  # skip the isinstance check on a real asyncio socket
    channel.socket, channel.session = socket, session  # type: ignore[assignment]
    if isinstance(channel, SlicedSocketChannel):
        channel.slice_s = slice_s
    return channel, socket


async def _arrive_later(socket: _LostWakeupSocket, after: float = 0.02) -> None:
    await asyncio.sleep(after)
    socket.ready = True


def test_the_stock_channel_sleeps_through_a_ready_message() -> None:
    """The bug itself: with no timeout, jupyter_client's channel never returns the message."""

    async def run() -> None:
        channel, socket = _channel(AsyncZMQSocketChannel)
        arrival = asyncio.ensure_future(_arrive_later(socket))
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(channel.get_msg(timeout=None), 0.5)
        await arrival
        assert socket.ready and socket.polls == [None]

    asyncio.run(run())


def test_the_stock_channel_reports_empty_though_a_message_is_ready() -> None:
    """With a timeout, it waits all of it and then says nothing came (nbclient's cell timeout)."""

    async def run() -> None:
        channel, socket = _channel(AsyncZMQSocketChannel)
        arrival = asyncio.ensure_future(_arrive_later(socket))
        with pytest.raises(Empty):
            await channel.get_msg(timeout=0.3)
        await arrival
        assert socket.ready

    asyncio.run(run())


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_the_sliced_channel_returns_the_message_at_the_next_slice(timeout: float | None) -> None:
    """Lost wakeup or not, the message is returned once the running slice ends: the second poll at most."""

    async def run() -> None:
        channel, socket = _channel(SlicedSocketChannel, slice_s=0.05)
        arrival = asyncio.ensure_future(_arrive_later(socket, after=0.02))
        message = await asyncio.wait_for(channel.get_msg(timeout=timeout), 5)
        await arrival
        assert message["header"]["msg_type"] == "execute_reply"
        assert message["content"] == {"status": "ok"}
        assert socket.polls == [50]  # one slice slept through the lost wakeup; ZMQ_EVENTS then saw it

    asyncio.run(run())


def test_the_sliced_channel_takes_a_ready_message_without_waiting() -> None:
    async def run() -> None:
        channel, socket = _channel(SlicedSocketChannel)
        socket.ready = True
        message = await channel.get_msg(timeout=0)
        assert message["content"] == {"status": "ok"} and socket.polls == []

    asyncio.run(run())


def test_the_sliced_channel_keeps_the_timeout() -> None:
    """Nothing ever comes: ``queue.Empty`` once the whole timeout is spent, in slices no longer than asked."""

    async def run() -> None:
        channel, socket = _channel(SlicedSocketChannel, slice_s=0.05)
        with pytest.raises(Empty):
            await channel.get_msg(timeout=0.12)
        assert len(socket.polls) >= 3 and all(poll is not None and poll <= 50 for poll in socket.polls)
        assert sum(p for p in socket.polls if p is not None) <= 120

    asyncio.run(run())


def test_the_client_uses_sliced_channels_for_every_zmq_channel() -> None:
    for name in ("shell", "iopub", "stdin", "control"):
        assert SlicedKernelClient.class_traits()[f"{name}_channel_class"].default() is SlicedSocketChannel
    assert NBCONVERT_OPTION.split("=") == ["--KernelManager.client_class", CLIENT_CLASS]
    assert nbclient_config().KernelManager.client_class == "workbook.dev.kernel_client.SlicedKernelClient"


def test_a_notebook_runs_through_nbclient_with_the_sliced_client() -> None:
    """The real thing: a fresh kernel runs a two-cell notebook, its replies read through the sliced channels."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 20 + 1"), nbformat.v4.new_code_cell("print(x * 2)")]
    )
    clients: list[type] = []
    client = NotebookClient(notebook, config=nbclient_config(), kernel_name="python3", timeout=60)
    client.on_cell_executed = lambda cell, cell_index, execute_reply: clients.append(
        type(client.kc.shell_channel)  # type: ignore[union-attr]
    )
    client.execute()
    assert notebook.cells[1].outputs[0]["text"] == "42\n"
    assert clients == [SlicedSocketChannel, SlicedSocketChannel]


def test_cell_waits_reads_the_kernel_through_the_sliced_client(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat

    from workbook.dev import cell_waits

    path = tmp_path / "tiny.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('hi')")]), path)
    reads: list[float | None] = []
    original = SlicedSocketChannel.get_msg

    async def counted(self: SlicedSocketChannel, timeout: float | None = None) -> dict[str, Any]:
        reads.append(timeout)
        return await original(self, timeout)

    monkeypatch.setattr(SlicedSocketChannel, "get_msg", counted)
    waits = cell_waits.silent_waits(path, timeout=60)
    assert [wait.index for wait in waits] == [0]
    assert reads, "nbclient never read a message through SlicedSocketChannel"


def test_the_bench_runs_notebooks_through_nbconvert_with_the_sliced_client(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbook.dev import bench

    commands: list[list[str]] = []

    class _Refused(Exception):
        pass

    def popen(command: list[str], **kwargs: Any) -> Any:
        commands.append(command)
        raise _Refused

    monkeypatch.setattr(bench.subprocess, "Popen", popen)
    with pytest.raises(_Refused):
        bench._kernel_rss_after(tmp_path / "x.ipynb")
    assert "nbconvert" in commands[0] and NBCONVERT_OPTION in commands[0]
