"""What a connection dispatches incoming messages to, and what a request handler knows.

These two names are the whole contract between the JSON-RPC layer
(:mod:`acpio._rpc.connection`, :mod:`acpio._rpc.incoming`) and whatever serves the
peer's requests (the ACP agent server, the testing kit's client): methods are
strings, params raw JSON. They live apart from the connection so that the
receiving half can name the handler without importing the connection.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import msgspec

from .wire import RequestId

__all__ = ["MessageHandler", "RequestContext"]

logger = logging.getLogger("acpio._rpc.connection")  # where these messages were always logged


@dataclass(slots=True)
class RequestContext:
    """What a request handler knows about the request it serves.

    Cancelling ``cancel_scope`` (or the peer's ``$/cancel_request``) ends
    the handler; the peer is then answered ``-32800``.
    """

    id: RequestId
    method: str
    cancel_scope: anyio.CancelScope
    sequence: int = 0
    """Position of the request among all messages received (see :attr:`Connection.received`)."""
    _after: list[Callable[[], None]] = field(default_factory=list[Callable[[], None]])

    def after_response(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` right after the response was queued for the peer.

        Used to start work whose first messages must follow the response
        (the prompt lifecycle's updates follow the ``session/prompt`` answer).
        """
        self._after.append(callback)

    def _run_after(self) -> None:
        for callback in self._after:
            try:
                callback()
            except Exception:
                logger.exception("after-response callback of %s failed", self.method)


class MessageHandler(Protocol):
    """What a connection dispatches incoming requests and notifications to.

    ``on_request`` returns the result object (anything the connection's
    encoder accepts) or raises :class:`RequestError`; any other exception is
    answered ``-32603`` and logged. An unknown method must raise
    :meth:`RequestError.method_not_found`. ``on_notification`` runs inline in
    arrival order, so it must not block for long; its exceptions are logged
    only, since a notification is never answered.
    """

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        """Serve one request: return its result or raise :class:`RequestError`."""
        ...

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        """Handle one notification, inline and in arrival order (never answered)."""
        ...


def run_after_response(context: RequestContext) -> None:
    """Run the callbacks ``context.after_response`` registered (once the response is queued)."""
    # The connection's entry point to the class's own step, kept off the public surface.
    context._run_after()  # pyright: ignore[reportPrivateUsage]
