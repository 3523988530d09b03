"""acpio: write the agent side of the Agent Client Protocol (v1 and draft v2) in async Python.

Subclass :class:`Agent`, implement :meth:`Agent.prompt`, and call :func:`run`.
Report work through the :class:`Session` you are given: messages, plans,
tool calls (:class:`ToolCallHandle`), terminals (:class:`TerminalHandle`),
permission requests (:class:`Outcome`), diffs (:func:`file_diff`), config
options (:func:`select_option`, :func:`boolean_option`), slash commands
(:func:`command`) and questions to the user (:meth:`Session.elicit`).
"""

from . import permission as permission
from . import schema as schema
from ._agent import Agent as Agent
from ._agent import AgentLimits as AgentLimits
from ._commands import CommandInvocation as CommandInvocation
from ._commands import command as command
from ._config import SessionConfig as SessionConfig
from ._config import boolean_option as boolean_option
from ._config import select_option as select_option
from ._connection import Connection as Connection
from ._connection import MessageHandler as MessageHandler
from ._connection import RequestContext as RequestContext
from ._content import text_of as text_of
from ._diff import FileChange as FileChange
from ._diff import diff_of as diff_of
from ._diff import file_change as file_change
from ._diff import file_diff as file_diff
from ._edits import DEFAULT_MAX_EDIT_BYTES as DEFAULT_MAX_EDIT_BYTES
from ._edits import FileEdit as FileEdit
from ._elicitation import ElicitationResult as ElicitationResult
from ._elicitation import ElicitationUnsupported as ElicitationUnsupported
from ._errors import AcpError as AcpError
from ._errors import ClientCapabilityError as ClientCapabilityError
from ._errors import ConnectionClosed as ConnectionClosed
from ._errors import EditConflict as EditConflict
from ._errors import EditRefused as EditRefused
from ._errors import LocalProtocolError as LocalProtocolError
from ._errors import RelativePathError as RelativePathError
from ._errors import RemoteProtocolError as RemoteProtocolError
from ._errors import RequestError as RequestError
from ._errors import SessionStoreError as SessionStoreError
from ._history import History as History
from ._history import HistoryLimits as HistoryLimits
from ._history import InMemoryHistory as InMemoryHistory
from ._history import InMemorySessionStore as InMemorySessionStore
from ._history import SessionRecord as SessionRecord
from ._history import SessionStore as SessionStore
from ._permission import Outcome as Outcome
from ._serve import default_session_store as default_session_store
from ._serve import run as run
from ._serve import serve as serve
from ._session import MessageStream as MessageStream
from ._session import Session as Session
from ._session import SessionLimits as SessionLimits
from ._sqlite_store import SqliteSessionStore as SqliteSessionStore
from ._terminal import CommandResult as CommandResult
from ._terminal import ExitStatus as ExitStatus
from ._terminal import RunningCommand as RunningCommand
from ._terminal import TerminalHandle as TerminalHandle
from ._tool_call import ToolCallHandle as ToolCallHandle
from ._transport import StreamPair as StreamPair
from ._transport import memory_stream_pair as memory_stream_pair
from ._transport import stdio_streams as stdio_streams
from .schema import ContentBlock as ContentBlock
from .schema import Implementation as Implementation

__version__ = "0.1.0"

__all__ = (
    "AcpError",
    "Agent",
    "AgentLimits",
    "ClientCapabilityError",
    "CommandInvocation",
    "CommandResult",
    "Connection",
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
    "History",
    "HistoryLimits",
    "Implementation",
    "InMemoryHistory",
    "InMemorySessionStore",
    "LocalProtocolError",
    "MessageHandler",
    "MessageStream",
    "Outcome",
    "RelativePathError",
    "RemoteProtocolError",
    "RequestContext",
    "RequestError",
    "RunningCommand",
    "Session",
    "SessionConfig",
    "SessionLimits",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "StreamPair",
    "TerminalHandle",
    "ToolCallHandle",
    "boolean_option",
    "command",
    "default_session_store",
    "diff_of",
    "file_change",
    "file_diff",
    "memory_stream_pair",
    "permission",
    "run",
    "schema",
    "select_option",
    "serve",
    "stdio_streams",
    "text_of",
)
