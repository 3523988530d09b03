"""The mock client's link to the agent: requests, notifications and waits, with their failures.

How this works: every request, notification and wait of the kit (the
client's own, a session's, a turn's, the v1 side's) goes through the one
:class:`ClientLink` of a :class:`MockClient`, so they share its deadlines
(:class:`Waits`), its first recorded failure and its error context: the
agent's exit status and stderr, and the last messages of the transcript. The
client owns the lifecycle (it sets :attr:`ClientLink.connection`,
:attr:`ClientLink.task_group` and the in-process agent's end); the link only
uses them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, TypeVar

import anyio
import anyio.abc
import msgspec

from .._errors import ConnectionClosed, RequestError
from .._rpc.connection import Connection
from ._agent_process import STDERR_GRACE, AgentProcess
from ._transcript import Transcript
from ._waits import AgentExitedError, MockClientError, Waits

__all__ = ("ClientLink",)

T = TypeVar("T")

_CONTEXT_MESSAGES: Final = 20
_CONTEXT_STDERR: Final = 4000


class ClientLink:
    """Requests, notifications and waits of one mock client, bounded and failing together.

    ``timeout`` is the default bound, in seconds, of every wait and request.
    Every error raised here ends with the client's context (see the module
    docstring).
    """

    def __init__(
        self, timeout: float, transcript: Transcript, process: AgentProcess | None
    ) -> None:
        self.timeout = timeout
        self.transcript: Final = transcript
        self.process: Final = process
        self.connection: Connection | None = None
        """The client's connection, once entered."""
        self.task_group: anyio.abc.TaskGroup | None = None
        """The client's task group, while entered."""
        self.agent_done: anyio.Event | None = None
        """Set when an in-process agent ended (made on entry, in the test's event loop)."""
        self.agent_gone = False
        """The agent closed the connection while the client did not close it."""
        self.waits: Final = Waits(self.context)

    def changed(self) -> None:
        """Wake every waiter: something a test can observe changed."""
        self.waits.changed()

    def fail(self, failure: BaseException, *, cause: BaseException | None = None) -> None:
        """Record ``failure`` (only the first counts) and end every wait with it."""
        self.waits.fail(failure, cause=cause)

    def bound(self, timeout: float | None) -> float:
        """``timeout``, or the client's default when ``None``."""
        return self.timeout if timeout is None else timeout

    def deadline(self, timeout: float | None) -> float:
        """The monotonic time at which a wait of ``timeout`` (or the default) ends."""
        return time.monotonic() + self.bound(timeout)

    def context(self) -> str:
        """The agent's exit status and stderr, and the transcript's last messages."""
        parts: list[str] = []
        process = self.process
        if process is not None and process.pid is not None:
            code = process.returncode
            parts.append(
                f"agent process {process.pid}: "
                + ("still running" if code is None else f"exited with return code {code}")
            )
        if process is not None:
            stderr = process.stderr.decode("utf-8", "backslashreplace")
            if len(stderr) > _CONTEXT_STDERR:
                stderr = "..." + stderr[-_CONTEXT_STDERR:]
            parts.append(
                f"agent stderr ({process.stderr_total} bytes):\n{stderr}"
                if stderr
                else "agent stderr: (empty)"
            )
        parts.append(
            f"last messages ({len(self.transcript)} in the transcript):\n"
            + (self.transcript.format_tail(_CONTEXT_MESSAGES, width=300) or "(none)")
        )
        return "\n\n".join(parts)

    def error(self, kind: type[MockClientError], message: str) -> MockClientError:
        """An error of ``kind`` saying ``message``, followed by the client's context."""
        return self.waits.error(kind, message)

    def check_usable(self) -> Connection:
        """The connection; raises the recorded failure, or when the client was not entered."""
        if self.waits.failure is not None:
            raise self.waits.failure
        if self.connection is None:
            raise RuntimeError("use the MockClient as an async context manager first")
        return self.connection

    async def exited(self, doing: str) -> AgentExitedError:
        """The error for an agent that went away while the client was ``doing`` something."""
        if self.process is not None:
            # The agent usually exits right after closing its stdout: report its code.
            await self.process.settle()
        elif self.agent_done is not None:
            # An in-process agent that crashed is reported as the crash.
            with anyio.move_on_after(STDERR_GRACE):
                await self.agent_done.wait()
        error = self.error(AgentExitedError, f"the agent closed the connection {doing}")
        assert isinstance(error, AgentExitedError)
        return error

    async def request(
        self,
        method: str,
        params: object,
        decode: Callable[[msgspec.Raw], T],
        *,
        timeout: float | None,
        on_sent: Callable[[int], None] | None = None,
    ) -> T:
        """Send a request and return its decoded result, within ``timeout`` (or the default).

        :raises acpio.RequestError: when the agent answered with an error.
        :raises AgentExitedError: when the agent went away before answering.
        """
        connection = self.check_usable()
        try:
            with self.waits.deadline(self.bound(timeout), f"the response to {method}"):
                return await connection.request(method, params, decode, on_sent=on_sent)
        except ConnectionClosed:
            if self.waits.failure is not None:
                raise self.waits.failure from None
            raise await self.exited(f"before answering {method}") from None
        except RequestError as exc:
            if self.process is not None:
                exc.add_note(self.context())
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def notify(self, method: str, params: object) -> None:
        """Send a notification; raises the recorded failure, if any, once it is sent."""
        connection = self.check_usable()
        try:
            await connection.notify(method, params)
        except ConnectionClosed:
            raise await self.exited(f"before {method} could be sent") from None
        if self.waits.failure is not None:
            raise self.waits.failure

    async def wait_until(
        self,
        check: Callable[[], T | None],
        timeout: float | None,
        what: str,
    ) -> T:
        """Re-check ``check`` after every change until it gives a value (not ``None`` nor
        ``False``) and return it; ``what`` names the wait in its timeout error."""
        self.check_usable()
        with self.waits.deadline(self.bound(timeout), what):
            while True:
                value = check()
                if value is not None and value is not False:
                    return value
                if self.agent_gone:
                    raise await self.exited(f"while the test waited for {what}")
                await self.waits.next_change()
        raise AssertionError("unreachable")  # pragma: no cover
