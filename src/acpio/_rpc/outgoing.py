"""The bounded, ordered buffer every outgoing message of a connection goes through.

How this works: senders append encoded lines; a single consumer (the
connection's writer task) takes everything queued so far as one block, so a
burst of small messages costs one write. At most ``limit`` bytes are queued:
a peer that stops reading makes senders wait instead of growing memory. The
buffer never reorders: a sender that must wait holds back every sender after
it, and waiting senders are served first come, first served, so a large
message is never starved by a stream of small ones. Control messages that
must go out promptly (a ``$/cancel_request``) skip the limit.

``put`` is on the path of every message sent: its common case is an append
and a counter, with no further call. Only a put into an empty buffer wakes
the consumer, or, when the connection's line channel installed an ``on_data``
hook (the asyncio channel over a descriptor it can write without blocking,
see :mod:`acpio._rpc.fd`), calls that hook instead: the channel then writes from
a loop callback and wakes its writer task only when the descriptor is full.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from .._errors import ConnectionClosed

__all__ = ["OutgoingBuffer"]


class OutgoingBuffer:
    """Bounded, ordered queue of encoded lines with a single consumer.

    At most ``limit`` bytes are queued (a single line larger than that is
    accepted into an empty buffer). Senders that must wait for space are
    served in arrival order, so a large message is never starved by a stream
    of small ones.
    """

    __slots__ = (
        "_blocked",
        "_chunks",
        "_closed",
        "_data_ready",
        "_limit",
        "_lock",
        "_size",
        "_space",
        "on_data",
    )

    def __init__(self, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = limit
        self._closed = False
        self._blocked = 0
        self._lock: anyio.Lock | None = None  # made when a sender first has to wait
        self._data_ready: anyio.Event | None = None
        self._space: anyio.Event | None = None
        self.on_data: Callable[[], None] | None = None
        """Called, instead of waking :meth:`take`, when a put makes the buffer non-empty."""

    @property
    def buffered(self) -> int:
        """Bytes accepted but not yet handed to the stream."""
        return self._size

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called; nothing more is accepted."""
        return self._closed

    async def put(self, line: bytes) -> None:
        """Queue ``line`` after everything queued before; wait while the buffer is full."""
        if self._closed:
            raise ConnectionClosed("the connection is closed")
        if not self.try_put(line):
            await self._put_when_room(line)

    def try_put(self, line: bytes) -> bool:
        """Queue ``line`` if that needs no waiting; False (nothing queued) when full or closed."""
        if self._closed or self._blocked or (self._size and self._size + len(line) > self._limit):
            return False
        self._append(line)
        return True

    def take_with(self, line: bytes) -> bytes | None:
        """:meth:`try_put` of ``line`` and :meth:`take_nowait` at once, for an inline write.

        Everything queued so far followed by ``line``, as one block; None (and
        nothing queued) when ``line`` would have to wait. The caller writes the
        block itself and gives back what it could not write with :meth:`unwrite`.
        """
        if self._closed or self._blocked or (self._size and self._size + len(line) > self._limit):
            return None
        chunks = self._chunks
        if not chunks:
            return line
        # No sender waits for space (none is blocked): there is no one to wake.
        chunks.append(line)
        data = b"".join(chunks)
        chunks.clear()
        self._size = 0
        return data

    def put_nowait(self, line: bytes) -> bool:
        """Queue a small control message even if the buffer is full; False once closed."""
        if self._closed:
            return False
        self._append(line)
        return True

    def _append(self, line: bytes) -> None:
        chunks = self._chunks
        chunks.append(line)
        self._size += len(line)
        if len(chunks) == 1:
            self._data_arrived()

    def _data_arrived(self) -> None:
        # The consumer waits only while the buffer is empty, so only the first
        # put into an empty buffer has anyone to wake.
        if self.on_data is not None:
            self.on_data()
        else:
            self.wake_consumer()

    def wake_consumer(self) -> None:
        """Wake :meth:`take` if it waits (it then returns whatever is queued)."""
        if self._data_ready is not None:
            self._data_ready.set()
            self._data_ready = None

    async def _put_when_room(self, line: bytes) -> None:
        self._blocked += 1
        try:
            # The lock queues waiting senders first come, first served.
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:
                while self._size and self._size + len(line) > self._limit and not self._closed:
                    space = self._space = anyio.Event()
                    await space.wait()
                if self._closed:
                    raise ConnectionClosed("the connection is closed")
                self.put_nowait(line)
        finally:
            self._blocked -= 1

    async def take(self) -> bytes | None:
        """Everything queued so far as one block; ``None`` once closed and drained."""
        while not self._chunks:
            if self._closed:
                return None
            event = self._data_ready = anyio.Event()
            await event.wait()
        return self.take_nowait()

    def take_nowait(self) -> bytes:
        """Everything queued so far as one block (empty if nothing is), without waiting.

        For a sender that writes in place of the idle writer task; whatever it
        cannot write goes back with :meth:`unwrite` before anything else runs.
        """
        chunks = self._chunks
        if not chunks:
            return b""
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._size = 0
        if self._space is not None:
            self._space.set()
            self._space = None
        return data

    def unwrite(self, data: bytes) -> None:
        """Put back, ahead of everything, the unwritten tail of a :meth:`take_nowait` block."""
        self._chunks.insert(0, data)
        self._size += len(data)
        self.wake_consumer()

    def close(self, *, discard: bool = False) -> None:
        """Accept nothing more; :meth:`take` still drains what was queued unless ``discard``."""
        self._closed = True
        if discard:
            self._chunks.clear()
            self._size = 0
        for event in (self._data_ready, self._space):
            if event is not None:
                event.set()
        self._data_ready = self._space = None
