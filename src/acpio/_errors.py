"""Every exception acpio raises, in one place.

The error codes come from the schema's ``ErrorCode`` (generated), so no
module spells a number: a handler raises :class:`RequestError` built by one
of its constructors, and the connection turns it into the error object on the
wire.
"""

from __future__ import annotations

from typing import Final, NoReturn

from .schema._generated import (
    AUTHENTICATION_REQUIRED as AUTH_REQUIRED,
)
from .schema._generated import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "AcpError",
    "AgentStateError",
    "ClientCapabilityError",
    "ConnectionClosed",
    "EditRefused",
    "ReadRefused",
    "FileChanged",
    "LibraryCreated",
    "LocalProtocolError",
    "RelativePathError",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "SessionStoreError",
    "SignInError",
    "library_created",
]


class AcpError(Exception):
    """Base class of every exception raised by acpio."""


class RequestError(AcpError):
    """Raised when a JSON-RPC request fails; carries the error object of the wire.

    Raise it from a handler to answer the peer with exactly this ``code``,
    ``message`` and ``data``; it is also raised to the caller of an outgoing
    request that the peer answered with an error.
    """

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    def __reduce__(self) -> tuple[type[RequestError], tuple[int, str, object]]:
        # Exceptions are rebuilt from ``args`` by default, which holds only the message.
        return (type(self), (self.code, self.message, self.data))

    def __str__(self) -> str:
        return f"{self.message} (JSON-RPC error {self.code})"

    @classmethod
    def parse_error(cls, message: str = "Parse error", data: object = None) -> RequestError:
        """The peer sent bytes that are not valid JSON (or not UTF-8): ``-32700``."""
        return cls(PARSE_ERROR, message, data)

    @classmethod
    def invalid_request(cls, message: str = "Invalid request", data: object = None) -> RequestError:
        """The JSON is not a valid JSON-RPC 2.0 request object: ``-32600``."""
        return cls(INVALID_REQUEST, message, data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        """The method does not exist or is not offered by this side: ``-32601``."""
        return cls(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})

    @classmethod
    def invalid_params(cls, message: str, data: object = None) -> RequestError:
        """The params do not match the method's schema: ``-32602``.

        The message names the offending field, e.g. ``"Expected `str`, got
        `int` - at `$.prompt[0].text`"``.
        """
        return cls(INVALID_PARAMS, f"Invalid params: {message}", data)

    @classmethod
    def internal_error(cls, message: str = "Internal error", data: object = None) -> RequestError:
        """The handler failed for a reason of its own: ``-32603``."""
        return cls(INTERNAL_ERROR, message, data)

    @classmethod
    def request_cancelled(cls, message: str = "Request cancelled") -> RequestError:
        """The request was cancelled (``$/cancel_request`` or shutdown): ``-32800``."""
        return cls(REQUEST_CANCELLED, message)

    @classmethod
    def auth_required(cls, message: str = "Authentication required") -> RequestError:
        """The operation needs authentication first: ``-32000``."""
        return cls(AUTH_REQUIRED, message)

    @classmethod
    def session_not_found(cls, session_id: str) -> RequestError:
        """The request names a session that does not exist or is not active: ``-32002``."""
        return cls(
            RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
        )

    @classmethod
    def unsupported_protocol_version(cls, requested: int, supported: list[int]) -> RequestError:
        """No supported protocol version is at or below the requested one: ``-32022``."""
        return cls(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {requested}; this agent supports {supported}",
            {"requested": requested, "supported": supported},
        )


class ConnectionClosed(AcpError):
    """Raised when the connection ended before an operation could finish.

    Every outgoing request still waiting for its response fails with this
    error as soon as the peer closes the stream, so nothing waits forever.
    """


class RequestTimeout(AcpError, TimeoutError):
    """Raised when the peer did not answer a request within its time limit.

    The request was withdrawn (``$/cancel_request``), so its answer, should
    it still come, is ignored. The message names the method, the request id
    and the limit. Requests to the client that may legitimately wait (a
    permission prompt, ``terminal/wait_for_exit``) have no such limit.
    """


class LocalProtocolError(AcpError, ValueError):
    """Raised when code on this side tries to send something the protocol forbids.

    Examples: a relative path where ACP requires an absolute one, a custom tool
    kind that does not start with ``_``, a status change after a final status.
    Nothing is sent when this is raised.
    """


class RemoteProtocolError(AcpError):
    """Raised when the peer sent something the protocol forbids.

    The connection answers such input with the matching JSON-RPC error and
    keeps serving; this exception reaches code that asked for a typed value.
    """


class ClientCapabilityError(LocalProtocolError):
    """Raised when agent code asks the client for a service it does not offer.

    The client did not advertise it in ``initialize`` (``fs.readTextFile``,
    ``fs.writeTextFile``), or the connection's protocol version has no such
    client service (v2 has no client file system). Nothing is sent.
    """


class EditRefused(AcpError):
    """Raised when a proposed or allowed file edit is refused; nothing was changed.

    ``str(exc)`` is one sentence for a person (it names the real path and why);
    the tool call has already been failed with it. Raised for a path outside
    the session's directories, something other than a regular file, a file
    over the size bound, or a write that failed.
    """


class ReadRefused(EditRefused):
    """Raised when :meth:`acpio.Session.read_file` refuses or fails to read a file.

    ``str(exc)`` is one sentence for a person: what was refused and why (a path
    outside the session's directories, not a regular file, over the size bound,
    missing, unreadable, or the editor's own refusal with its message and code).
    Nothing was read. A subclass of :class:`EditRefused`, so code that catches
    refused file access catches both.
    """


class FileChanged(EditRefused):
    """A file (or its directory) changed since the diff was shown; nothing was written.

    Raised by the file layer (:mod:`acpio._handles.edit_fs`); the edit API turns it
    into :class:`acpio.EditConflict` before agent code sees it.
    """


class RelativePathError(LocalProtocolError):
    """Raised when a path this side is about to send is not absolute.

    ACP requires every path on the wire (a ``cwd``, a location, a diff's
    ``path`` and ``oldPath``, the paths of its ``git_patch``) to be an absolute
    native path: POSIX (``/...``), a Windows drive (``C:\\...``) or a UNC share;
    nothing is ever resolved against the agent's own working directory. ``path``
    is the offending value. Nothing is sent when this is raised.
    """

    def __init__(self, path: object, what: str = "path") -> None:
        super().__init__(
            f"{what} must be an absolute path, got {path!r}; ACP never resolves paths "
            "against the agent's own working directory"
        )
        self.path = path
        self.what = what

    def __reduce__(self) -> tuple[type[RelativePathError], tuple[object, str]]:
        return (type(self), (self.path, self.what))


class AgentStateError(AcpError, ValueError):
    """Raised when an agent's durable session state cannot be saved or restored.

    :meth:`acpio.Session.save_agent_state` raises it for a value that is not
    JSON-encodable or is larger than ``SessionLimits.max_agent_state_bytes``
    (nothing is saved then); :meth:`acpio.Agent.migrate_agent_state` raises it
    (by default) for a stored state of another version, and the reopen
    (``session/resume``, ``session/load``) is then answered ``-32603`` with its
    message.
    """


class SessionStoreError(AcpError):
    """Raised when a session store cannot be opened: the file is unreadable, is not a
    session store, or was written by a newer acpio (its schema version is newer), or
    the database cannot be reached; and by a store call after the store could not
    keep what a session recorded (a write failed, or another process took the
    session over).

    :func:`acpio.run` reports it on stderr and keeps sessions in memory instead.
    """


class SignInError(AcpError):
    """Raised when terminal sign-in fails: no key was entered, or it could not be stored.

    :func:`acpio.run`, running ``Agent.terminal_login`` for the editor, prints its
    message on stderr and exits with status 1 (the editor then knows the user is
    not signed in).
    """


#: How to get an object of each library-created class instead of calling it.
_HOW_TO_GET: Final = {
    "Session": "an agent receives its sessions in Agent.prompt, on_new_session and "
    "on_resume_session",
    "ToolCallHandle": "use session.tool_call(...) (or session.reattach_tool_call(id))",
    "TerminalHandle": "use session.terminal(...) or tool_call.terminal(...)",
    "MessageStream": "use session.message_stream() or session.thought_stream()",
}


def library_created(name: str) -> TypeError:
    """The error for a direct call of a class whose objects only acpio creates."""
    how = _HOW_TO_GET.get(name, "acpio hands them out")
    return TypeError(
        f"{name} objects are created by acpio, not by calling {name}(...): {how}. "
        "To test an agent, drive it with acpio.testing (MockClient)."
    )


class LibraryCreated(type):
    """Metaclass of the classes whose objects only acpio creates (sessions, handles, ...).

    Calling such a class raises :class:`TypeError` saying how to get one; the
    library creates them with ``object.__new__(cls)`` and an explicit
    ``cls.__init__(obj, ...)``, fully typed.
    """

    def __call__(cls, *args: object, **kwargs: object) -> NoReturn:
        raise library_created(cls.__name__)
