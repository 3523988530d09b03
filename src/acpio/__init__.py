"""acpio: write the agent side of the Agent Client Protocol (draft v2) in async Python.

Subclass :class:`Agent`, implement :meth:`Agent.prompt`, and call :func:`run`.
Report work through the :class:`Session` you are given: messages, plans,
tool calls (:class:`ToolCallHandle`), terminals (:class:`TerminalHandle`),
permission requests (:class:`Outcome`) and diffs (:func:`file_diff`).
"""

from . import permission as permission
from . import schema as schema
from ._agent import Agent as Agent
from ._agent import AgentLimits as AgentLimits
from ._agent import default_session_store as default_session_store
from ._agent import run as run
from ._agent import serve as serve
from ._connection import Connection as Connection
from ._connection import MessageHandler as MessageHandler
from ._connection import RequestContext as RequestContext
from ._content import text_of as text_of
from ._diff import FileChange as FileChange
from ._diff import RelativePathError as RelativePathError
from ._diff import diff_of as diff_of
from ._diff import file_change as file_change
from ._diff import file_diff as file_diff
from ._errors import AcpError as AcpError
from ._errors import ConnectionClosed as ConnectionClosed
from ._errors import LocalProtocolError as LocalProtocolError
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
from ._session import MessageStream as MessageStream
from ._session import Session as Session
from ._session import SessionLimits as SessionLimits
from ._sqlite_store import SqliteSessionStore as SqliteSessionStore
from ._terminal import ExitStatus as ExitStatus
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
    "Connection",
    "ConnectionClosed",
    "ContentBlock",
    "ExitStatus",
    "FileChange",
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
    "Session",
    "SessionLimits",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "StreamPair",
    "TerminalHandle",
    "ToolCallHandle",
    "default_session_store",
    "diff_of",
    "file_change",
    "file_diff",
    "memory_stream_pair",
    "permission",
    "run",
    "schema",
    "serve",
    "stdio_streams",
    "text_of",
)
