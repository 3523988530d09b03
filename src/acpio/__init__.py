"""acpio: write the agent side of the Agent Client Protocol (v1 and draft v2) in async Python.

Subclass :class:`Agent`, implement :meth:`Agent.prompt`, and call :func:`run`.
Report work through the :class:`Session` you are given: messages, plans,
tool calls (:class:`ToolCallHandle`), terminals (:class:`TerminalHandle`),
permission requests (:class:`Outcome`), diffs (:func:`file_diff`), config
options (:func:`select_option`, :func:`boolean_option`), slash commands
(:func:`command`) and questions to the user (:meth:`Session.elicit`).

This namespace is for agent authors: what ``class MyAgent(acpio.Agent)`` and
``acpio.run(MyAgent())`` use, the handles and results agent code receives,
the errors agent code may meet (the connection's included: a request to the
client, such as reading a file, raises :class:`ConnectionClosed` when the
client leaves first), and the limits it may set (:class:`AgentLimits`,
nesting :class:`SessionLimits` and :class:`HistoryLimits`). :func:`serve` is
here too, as the other way to start an agent (over streams of your own). The
rest lives in named submodules, imported with ``acpio``: :mod:`acpio.rpc` (the
JSON-RPC connection and byte streams, for clients, proxies and custom
transports), :mod:`acpio.store` (histories and session stores, with
:class:`~acpio.store.SessionStoreError`), :mod:`acpio.schema` (every protocol
type), :mod:`acpio.permission` (permission option presets), :mod:`acpio.auth`
(sign-in methods and an API key); and, imported by name, :mod:`acpio.testing`,
:mod:`acpio.mcp`, :mod:`acpio.adapters` and :mod:`acpio.remote` (serving an agent over
the remote transport).
"""

import typing as _typing

from . import rpc as rpc
from . import schema as schema
from ._agent.agent import Agent as Agent
from ._agent.serve import run as run
from ._agent.serve import serve as serve
from ._errors import AcpError as AcpError
from ._errors import AgentStateError as AgentStateError
from ._errors import ClientCapabilityError as ClientCapabilityError
from ._errors import ConnectionClosed as ConnectionClosed
from ._errors import EditRefused as EditRefused
from ._errors import LocalProtocolError as LocalProtocolError
from ._errors import ReadRefused as ReadRefused
from ._errors import RelativePathError as RelativePathError
from ._errors import RemoteProtocolError as RemoteProtocolError
from ._errors import RequestError as RequestError
from ._errors import RequestTimeout as RequestTimeout
from ._limits import AgentLimits as AgentLimits
from ._limits import HistoryLimits as HistoryLimits
from ._limits import SessionLimits as SessionLimits
from ._protocol.content import text_of as text_of
from .schema import ContentBlock as ContentBlock
from .schema import Implementation as Implementation

if _typing.TYPE_CHECKING:
    from . import auth as auth
    from . import permission as permission
    from . import store as store
    from ._agent.session import MessageStream as MessageStream
    from ._agent.session import Session as Session
    from ._features.commands import CommandInvocation as CommandInvocation
    from ._features.commands import command as command
    from ._features.config import SessionConfig as SessionConfig
    from ._features.config import boolean_option as boolean_option
    from ._features.config import select_option as select_option
    from ._features.elicitation import ElicitationResult as ElicitationResult
    from ._features.elicitation import ElicitationUnsupported as ElicitationUnsupported
    from ._handles.diff import FileChange as FileChange
    from ._handles.diff import diff_of as diff_of
    from ._handles.diff import file_change as file_change
    from ._handles.diff import file_diff as file_diff
    from ._handles.edits import DEFAULT_MAX_EDIT_BYTES as DEFAULT_MAX_EDIT_BYTES
    from ._handles.edits import EditConflict as EditConflict
    from ._handles.edits import FileEdit as FileEdit
    from ._handles.permission import Outcome as Outcome
    from ._handles.terminal import CommandResult as CommandResult
    from ._handles.terminal import ExitStatus as ExitStatus
    from ._handles.terminal import RunningCommand as RunningCommand
    from ._handles.terminal import TerminalHandle as TerminalHandle
    from ._handles.tool_call import ToolCallHandle as ToolCallHandle

#: The public names loaded on first use (the module that defines each, relative to this
#: package; a submodule is
#: itself the value): what agent code meets once a session exists, and the stores
#: ``run()`` opens, are not needed to answer ``initialize``. The ``TYPE_CHECKING``
#: imports above say the same to type checkers (tests/test_public_api.py keeps the two equal).
_LAZY: _typing.Final[dict[str, str]] = {
    "auth": ".auth",
    "permission": ".permission",
    "store": ".store",
    "MessageStream": "._agent.session",
    "Session": "._agent.session",
    "CommandInvocation": "._features.commands",
    "command": "._features.commands",
    "SessionConfig": "._features.config",
    "boolean_option": "._features.config",
    "select_option": "._features.config",
    "ElicitationResult": "._features.elicitation",
    "ElicitationUnsupported": "._features.elicitation",
    "FileChange": "._handles.diff",
    "diff_of": "._handles.diff",
    "file_change": "._handles.diff",
    "file_diff": "._handles.diff",
    "DEFAULT_MAX_EDIT_BYTES": "._handles.edits",
    "EditConflict": "._handles.edits",
    "FileEdit": "._handles.edits",
    "Outcome": "._handles.permission",
    "CommandResult": "._handles.terminal",
    "ExitStatus": "._handles.terminal",
    "RunningCommand": "._handles.terminal",
    "TerminalHandle": "._handles.terminal",
    "ToolCallHandle": "._handles.tool_call",
}

__version__ = "0.1.0"

__all__ = (
    "AcpError",
    "Agent",
    "AgentLimits",
    "AgentStateError",
    "ClientCapabilityError",
    "CommandInvocation",
    "CommandResult",
    "ConnectionClosed",
    "ContentBlock",
    "DEFAULT_MAX_EDIT_BYTES",
    "EditConflict",
    "EditRefused",
    "ElicitationResult",
    "ElicitationUnsupported",
    "ExitStatus",
    "FileChange",
    "FileEdit",
    "HistoryLimits",
    "Implementation",
    "LocalProtocolError",
    "MessageStream",
    "Outcome",
    "ReadRefused",
    "RelativePathError",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "RunningCommand",
    "Session",
    "SessionConfig",
    "SessionLimits",
    "TerminalHandle",
    "ToolCallHandle",
    "auth",
    "boolean_option",
    "command",
    "diff_of",
    "file_change",
    "file_diff",
    "permission",
    "rpc",
    "run",
    "schema",
    "select_option",
    "serve",
    "store",
    "text_of",
)


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'acpio' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    module = importlib.import_module(module_name, __name__)
    value = module if module_name == f".{name}" else getattr(module, name)
    globals()[name] = value  # later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
