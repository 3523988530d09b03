"""How the mock client waits: woken by changes, bounded by deadlines, ended by failures.

How this works: nothing in a test sleeps. Every wait of a :class:`MockClient`
is "until this predicate holds", re-checked each time :meth:`Waits.changed`
announces that something a test can observe changed (a line went over the
wire, an update was applied, a permission request arrived or was answered,
the agent went away). Each wait runs in a :meth:`Waits.deadline` scope: when
its time is up it raises :class:`AgentTimeoutError` naming what it waited
for. A failure the test did not ask about (:meth:`Waits.fail`) cancels every
such scope at once and is raised from each, so the test fails with the reason
instead of timing out. Errors carry the client's context: the agent's stderr
and the last messages of the transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

import anyio

from .._errors import AcpError

__all__ = ("AgentExitedError", "AgentTimeoutError", "MockClientError", "Waits")


class MockClientError(AcpError):
    """Raised when the agent under test did not do what the test waited for.

    The message ends with the agent's captured stderr and the last messages
    of the transcript, so the failure explains itself.
    """


class AgentTimeoutError(MockClientError, TimeoutError):
    """Raised when a wait or a request of the mock client ran out of time."""


class AgentExitedError(MockClientError):
    """Raised when the agent closed the connection (or its process exited) while awaited."""


class Waits:
    """The change signal, the deadlines and the first failure of one mock client.

    ``context`` describes the client's situation (stderr, transcript tail); it
    ends the message of every error made here.
    """

    def __init__(self, context: Callable[[], str]) -> None:
        self.failure: BaseException | None = None
        """The first failure recorded; raised from every wait from then on."""
        self._context = context
        self.scopes: set[anyio.CancelScope] = set()
        """The scopes of the waits running now (a failure cancels them)."""
        # Made by the first waiter, in the event loop of the test.
        self._change: anyio.Event | None = None

    def changed(self) -> None:
        """Wake every waiter: something a test can observe changed."""
        change = self._change
        if change is not None:
            self._change = None
            change.set()

    async def next_change(self) -> None:
        """Wait for the next :meth:`changed`."""
        change = self._change
        if change is None:
            change = self._change = anyio.Event()
        await change.wait()

    def fail(self, failure: BaseException, *, cause: BaseException | None = None) -> None:
        """Record ``failure`` (only the first counts) and end every wait with it."""
        if self.failure is not None:
            return
        if cause is not None and failure.__cause__ is None:
            failure.__cause__ = cause
        if not isinstance(failure, MockClientError):
            failure.add_note(self._context())
        self.failure = failure
        for scope in list(self.scopes):
            scope.cancel()
        self.changed()

    def error(self, kind: type[MockClientError], message: str) -> MockClientError:
        """An error of ``kind`` saying ``message``, followed by the client's context."""
        return kind(f"{message}\n\n{self._context()}")

    def deadline(self, timeout: float, what: str) -> _Deadline:
        """A scope for one wait of at most ``timeout`` seconds for ``what``."""
        return _Deadline(self, timeout, what)


class _Deadline:
    """A cancel scope for one wait: its deadline, and cancelled early by a client failure."""

    def __init__(self, waits: Waits, timeout: float, what: str) -> None:
        self._waits = waits
        self._timeout = timeout
        self._what = what
        self._scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)

    def __enter__(self) -> None:
        waits = self._waits
        waits.scopes.add(self._scope)
        if waits.failure is not None:
            self._scope.cancel()
        self._scope.__enter__()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._waits.scopes.discard(self._scope)
        # The return value of __exit__ differs between backends when nothing
        # was raised; cancelled_caught says whether this scope ended the wait.
        self._scope.__exit__(exc_type, exc, tb)
        if not self._scope.cancelled_caught:
            return
        failure = self._waits.failure
        if failure is not None:
            # The cancellation that woke us is an implementation detail.
            failure.__suppress_context__ = True
            raise failure
        raise self._waits.error(
            AgentTimeoutError,
            f"timed out after {self._timeout:g}s waiting for {self._what}",
        ) from None
