"""Generated from schema.json (sha256 b6c91055df549d6f1db1d76d692d0561dad433e03d8ed114ea9b5baed9da72c5, ACP draft v2 as shipped with @agentclientprotocol/sdk 2.4.0) by scripts/gen_schema.py. Do not edit.

The ACP draft v2 protocol types: one msgspec Struct per schema object, type aliases for
scalars and open enums, unions decoded through `acpio.schema._base`, and the method
tables. Regenerate with ``python scripts/gen_schema.py`` after updating schema.json
(see SOURCE.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args

import msgspec
from msgspec import UNSET, UnsetType

from ._base import AcpStruct, MethodSpec, UnionDecoder, UnknownVariant, register_unions


# ------------------------------------------------------------------------------------------------
# Scalar aliases


RequestId: TypeAlias = int | str
"""A JSON-RPC request ID: a string or an integer. Unlike base JSON-RPC, it MUST NOT be `null`.

The receiver MUST reply with the same value in the response. Each side chooses IDs for its own
requests, so the same ID can be in use in both directions. A sender MUST NOT reuse an ID while
a request with it is still awaiting a response.
"""

SessionId: TypeAlias = str
"""A unique identifier for a conversation session between a client and agent.

Each session has its own context, conversation history, and state, so one
agent can run several independent sessions.

See protocol docs: [Session ID](https://agentclientprotocol.com/protocol/v2/session-setup#session-id)
"""

ToolCallId: TypeAlias = str
"""Unique identifier for a tool call within a session."""

MediaType: TypeAlias = str
"""An Internet media type identifying the format of protocol content."""

AbsolutePath: TypeAlias = str
"""An absolute filesystem path used by the protocol.

Uses the native syntax of the machine the Agent runs on, such as `/home/user/project`,
`C:\\Users\\user\\project`, or `\\\\server\\share\\project`. It is not a URI.
"""

TerminalId: TypeAlias = str
"""Unique identifier for an agent-owned terminal within a session."""

PermissionOptionId: TypeAlias = str
"""Unique identifier for a permission option."""

ElicitationId: TypeAlias = str
"""Unique identifier for an elicitation."""

ProtocolVersion: TypeAlias = int
"""Protocol version identifier.

This version is only bumped for breaking changes.
Non-breaking changes should be introduced via capabilities.
"""

AuthMethodId: TypeAlias = str
"""Typed identifier used for auth method values on the wire."""

SessionConfigId: TypeAlias = str
"""Unique identifier for a session configuration option."""

SessionConfigValueId: TypeAlias = str
"""Unique identifier for a session configuration option value."""

SessionConfigGroupId: TypeAlias = str
"""Unique identifier for a session configuration option value group."""

SessionListCursor: TypeAlias = str
"""An opaque cursor used to paginate `session/list` results."""

MessageId: TypeAlias = str
"""Identifier for a message, unique among messages of the same type within a session.

Each message type, such as user messages, agent messages, and agent thoughts,
has its own ID space: messages of different types may share an ID and remain
distinct messages.
"""

ErrorData: TypeAlias = object
"""Schema for [`Error::data`]: the shapes ACP defines, or any other value."""

PlanId: TypeAlias = str
"""Unique identifier for a plan within a session."""

CompactionId: TypeAlias = str
"""Unique identifier for a context compaction within a session."""

ElicitationContentValue: TypeAlias = object
"""Allowed wire representations for `ElicitationContentValue`."""


# ------------------------------------------------------------------------------------------------
# Enums


ToolKind: TypeAlias = str
"""Categories of tools that can be invoked.

Tool kinds help clients choose appropriate icons and optimize how they
display tool execution progress.

See protocol docs: [Reporting](https://agentclientprotocol.com/protocol/v2/tool-calls#reporting)

Open string enum: values outside `KnownToolKind` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
"""The `ToolKind` values defined by this schema revision."""

KNOWN_TOOL_KIND: Final[frozenset[str]] = frozenset(get_args(KnownToolKind))
"""The `ToolKind` values defined by this schema revision, as a set."""

ToolCallStatus: TypeAlias = str
"""Execution status of a tool call.

Tool calls progress through different statuses during their lifecycle.

See protocol docs: [Status](https://agentclientprotocol.com/protocol/v2/tool-calls#status)

Open string enum: values outside `KnownToolCallStatus` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownToolCallStatus: TypeAlias = Literal[
    "pending", "in_progress", "paused", "completed", "failed", "cancelled"
]
"""The `ToolCallStatus` values defined by this schema revision."""

KNOWN_TOOL_CALL_STATUS: Final[frozenset[str]] = frozenset(get_args(KnownToolCallStatus))
"""The `ToolCallStatus` values defined by this schema revision, as a set."""

Role: TypeAlias = str
"""The sender or recipient of messages and data in a conversation.

Open string enum: values outside `KnownRole` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownRole: TypeAlias = Literal["assistant", "user"]
"""The `Role` values defined by this schema revision."""

KNOWN_ROLE: Final[frozenset[str]] = frozenset(get_args(KnownRole))
"""The `Role` values defined by this schema revision, as a set."""

IconTheme: TypeAlias = str
"""Theme an icon is designed for.

Open string enum: values outside `KnownIconTheme` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownIconTheme: TypeAlias = Literal["light", "dark"]
"""The `IconTheme` values defined by this schema revision."""

KNOWN_ICON_THEME: Final[frozenset[str]] = frozenset(get_args(KnownIconTheme))
"""The `IconTheme` values defined by this schema revision, as a set."""

DiffFileType: TypeAlias = str
"""Kind of file content represented by a diff change.

Open string enum: values outside `KnownDiffFileType` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownDiffFileType: TypeAlias = Literal["text", "binary", "directory", "symlink"]
"""The `DiffFileType` values defined by this schema revision."""

KNOWN_DIFF_FILE_TYPE: Final[frozenset[str]] = frozenset(get_args(KnownDiffFileType))
"""The `DiffFileType` values defined by this schema revision, as a set."""

DiffPatchFormat: TypeAlias = str
"""Text patch format used by `DiffPatch`.

Open string enum: values outside `KnownDiffPatchFormat` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownDiffPatchFormat: TypeAlias = Literal["git_patch"]
"""The `DiffPatchFormat` values defined by this schema revision."""

KNOWN_DIFF_PATCH_FORMAT: Final[frozenset[str]] = frozenset(get_args(KnownDiffPatchFormat))
"""The `DiffPatchFormat` values defined by this schema revision, as a set."""

PermissionOptionKind: TypeAlias = str
"""The type of permission option being presented to the user.

Helps clients choose appropriate icons and UI treatment.

Open string enum: values outside `KnownPermissionOptionKind` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownPermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always"
]
"""The `PermissionOptionKind` values defined by this schema revision."""

KNOWN_PERMISSION_OPTION_KIND: Final[frozenset[str]] = frozenset(get_args(KnownPermissionOptionKind))
"""The `PermissionOptionKind` values defined by this schema revision, as a set."""

ElicitationSchemaType: TypeAlias = Literal["object"]
"""Type discriminator for elicitation schemas.

Closed: no other value is valid.
"""

StringFormat: TypeAlias = str
"""String format types for string properties in elicitation schemas.

Open string enum: values outside `KnownStringFormat` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownStringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"]
"""The `StringFormat` values defined by this schema revision."""

KNOWN_STRING_FORMAT: Final[frozenset[str]] = frozenset(get_args(KnownStringFormat))
"""The `StringFormat` values defined by this schema revision, as a set."""

SessionConfigOptionCategory: TypeAlias = str
"""Semantic category for a session configuration option.

This is intended to help Clients distinguish broadly common selectors (e.g. model selector vs
session mode selector vs thought/reasoning level) for UX purposes (keyboard shortcuts, icons,
placement). It MUST NOT be required for correctness. Clients MUST handle missing or unknown
categories gracefully.

Category names beginning with `_` are free for custom use, like other ACP extension methods.
Category names that do not begin with `_` are reserved for the ACP spec.

Open string enum: values outside `KnownSessionConfigOptionCategory` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownSessionConfigOptionCategory: TypeAlias = Literal[
    "mode", "model", "model_config", "thought_level"
]
"""The `SessionConfigOptionCategory` values defined by this schema revision."""

KNOWN_SESSION_CONFIG_OPTION_CATEGORY: Final[frozenset[str]] = frozenset(
    get_args(KnownSessionConfigOptionCategory)
)
"""The `SessionConfigOptionCategory` values defined by this schema revision, as a set."""

ErrorCode: TypeAlias = int
"""Predefined error codes for common JSON-RPC and ACP-specific errors.

Standard errors use the JSON-RPC 2.0 codes. ACP-specific errors use the JSON-RPC
server-error range (-32000 to -32099), and request cancellation uses -32800 from the
range LSP reserves (-32899 to -32800).

Open integer enum: values outside `KnownErrorCode` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownErrorCode: TypeAlias = Literal[
    -32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002, -32022
]
"""The `ErrorCode` values defined by this schema revision."""

KNOWN_ERROR_CODE: Final[frozenset[int]] = frozenset(get_args(KnownErrorCode))
"""The `ErrorCode` values defined by this schema revision, as a set."""

PARSE_ERROR: Final = -32700
"""`ErrorCode`: Parse error."""

INVALID_REQUEST: Final = -32600
"""`ErrorCode`: Invalid request."""

METHOD_NOT_FOUND: Final = -32601
"""`ErrorCode`: Method not found."""

INVALID_PARAMS: Final = -32602
"""`ErrorCode`: Invalid params."""

INTERNAL_ERROR: Final = -32603
"""`ErrorCode`: Internal error."""

REQUEST_CANCELLED: Final = -32800
"""`ErrorCode`: Request cancelled."""

AUTHENTICATION_REQUIRED: Final = -32000
"""`ErrorCode`: Authentication required."""

RESOURCE_NOT_FOUND: Final = -32002
"""`ErrorCode`: Resource not found."""

UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""`ErrorCode`: Unsupported protocol version."""

PlanEntryPriority: TypeAlias = str
"""Priority levels for plan entries.

Used to indicate the relative importance or urgency of different
tasks in the execution plan.
See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v2/agent-plan#plan-entries)

Open string enum: values outside `KnownPlanEntryPriority` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownPlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
"""The `PlanEntryPriority` values defined by this schema revision."""

KNOWN_PLAN_ENTRY_PRIORITY: Final[frozenset[str]] = frozenset(get_args(KnownPlanEntryPriority))
"""The `PlanEntryPriority` values defined by this schema revision, as a set."""

PlanEntryStatus: TypeAlias = str
"""Status of a plan entry in the execution flow.

Tracks the lifecycle of each task from planning through completion.
See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v2/agent-plan#plan-entries)

Open string enum: values outside `KnownPlanEntryStatus` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownPlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed", "cancelled"]
"""The `PlanEntryStatus` values defined by this schema revision."""

KNOWN_PLAN_ENTRY_STATUS: Final[frozenset[str]] = frozenset(get_args(KnownPlanEntryStatus))
"""The `PlanEntryStatus` values defined by this schema revision, as a set."""

NoticeSeverity: TypeAlias = str
"""Severity hint for a session notice.

Open string enum: values outside `KnownNoticeSeverity` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownNoticeSeverity: TypeAlias = Literal["info", "warning", "error"]
"""The `NoticeSeverity` values defined by this schema revision."""

KNOWN_NOTICE_SEVERITY: Final[frozenset[str]] = frozenset(get_args(KnownNoticeSeverity))
"""The `NoticeSeverity` values defined by this schema revision, as a set."""

CompactionStatus: TypeAlias = str
"""Lifecycle state of a context compaction.

Open string enum: values outside `KnownCompactionStatus` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownCompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"]
"""The `CompactionStatus` values defined by this schema revision."""

KNOWN_COMPACTION_STATUS: Final[frozenset[str]] = frozenset(get_args(KnownCompactionStatus))
"""The `CompactionStatus` values defined by this schema revision, as a set."""

StopReason: TypeAlias = str
"""Why foreground work stopped. The value selects one of this type's variants, which may add fields of their own.

Optional. Omitted and `null` are equivalent and mean the agent is not reporting a stop reason; a malformed value is treated the same way.

See protocol docs: [Stop Reasons](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#stop-reasons)

Open string enum: values outside `KnownStopReason` (implementation-specific ones start with ``_``;
others are future ACP values) are kept verbatim and never treated as a known value.
"""

KnownStopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"
]
"""The `StopReason` values defined by this schema revision."""

KNOWN_STOP_REASON: Final[frozenset[str]] = frozenset(get_args(KnownStopReason))
"""The `StopReason` values defined by this schema revision, as a set."""


# ------------------------------------------------------------------------------------------------
# Union markers: runtime base classes of the variants of each union


class _RequestPermissionSubjectBase:
    """The operation requiring permission.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownRequestPermissionSubject`.

    Runtime marker class of the `RequestPermissionSubject` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _ToolCallContentBase:
    """Content produced by a tool call.

    Tool calls can produce different types of content including standard
    content blocks (text, images), file diffs, or display-only terminals.

    See protocol docs: [Content](https://agentclientprotocol.com/protocol/v2/tool-calls#content)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownToolCallContent`.

    Runtime marker class of the `ToolCallContent` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _ContentBlockBase:
    """Content blocks represent displayable information in the Agent Client Protocol.

    Content blocks appear in:
    - User prompts sent via `session/prompt`
    - Language model output reported through `session/update` notifications as
      message updates or streamed chunks
    - Progress updates and results from tool calls

    This structure is compatible with the Model Context Protocol (MCP), so agents can
    forward content from MCP tool outputs without transformation.

    See protocol docs: [Content](https://agentclientprotocol.com/protocol/v2/content)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownContentBlock`.

    Runtime marker class of the `ContentBlock` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _EmbeddedResourceResourceBase:
    """Resource content that can be embedded in a message.

    A union of its variant classes, told apart by the properties present.

    Runtime marker class of the `EmbeddedResourceResource` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _DiffChangeBase:
    """One file-level change described by a `Diff`.

    Structured change metadata lets clients identify affected files and
    operations without parsing the text patch.

    A union of its variant classes, told apart by ``operation``; other values decode to `UnknownDiffChange`.

    Runtime marker class of the `DiffChange` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _CreateElicitationRequestBase:
    """Request from the agent to elicit structured user input.

    The agent sends this to the client to request information from the user,
    either via a form or by directing them to a URL.
    Elicitations are tied to a session (optionally a tool call) or a request.

    A session-scoped request follows the aggregate foreground-state contract:
    agents SHOULD report `requires_action` when the whole foreground workflow is
    blocked on user action. Once reported, they MUST report `running` when progress
    resumes, or `idle` if work ends without resuming. Independent background requests
    and request-scoped elicitations do not themselves change session state.
    Accepting a URL does not mean the external interaction completed.

    Agents SHOULD cancel pending elicitations no longer needed by cancelled work.
    The request's scope alone does not establish that dependency.

    See protocol docs: [Elicitation](https://agentclientprotocol.com/protocol/v2/elicitation)

    A union of its variant classes, told apart by ``mode``; other values decode to `UnknownCreateElicitationRequest`.

    Runtime marker class of the `CreateElicitationRequest` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _ElicitationPropertySchemaBase:
    """Property schema for elicitation form fields.

    Each variant corresponds to a JSON Schema `"type"` value.
    Single-select enums use `type: "string"` with `enum` or `oneOf` set.
    Multi-select enums use `type: "array"`.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownElicitationPropertySchema`.

    Runtime marker class of the `ElicitationPropertySchema` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _MultiSelectItemsBase:
    """Items for a multi-select (array) property schema.

    A union of its variant classes, told apart by ``type`` or, without it, by the properties present; other values decode to `UnknownMultiSelectItems`.

    Runtime marker class of the `MultiSelectItems` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _AuthMethodBase:
    """Describes an available authentication method.

    The `type` field acts as the discriminator in the serialized JSON form.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownAuthMethod`.

    Runtime marker class of the `AuthMethod` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _SessionConfigOptionBase:
    """A session configuration option selector and its current state.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownSessionConfigOption`.

    Runtime marker class of the `SessionConfigOption` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _SessionConfigSelectOptionsItemBase:
    """Possible values for a session configuration option.

    A union of its variant classes, told apart by the properties present.

    Runtime marker class of the `SessionConfigSelectOptionsItem` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _AvailableCommandBase:
    """A command the agent advertises to the client.

    The `type` field acts as the discriminator in the serialized JSON form.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownAvailableCommand`.

    Runtime marker class of the `AvailableCommand` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _AvailableCommandInputBase:
    """The input specification for a command.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownAvailableCommandInput`.

    Runtime marker class of the `AvailableCommandInput` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _SessionUpdateBase:
    """Different types of updates that can be sent while a session exists.

    These updates report messages, progress, and other session activity.

    See protocol docs: [Agent Reports Output](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#3-agent-reports-output)

    A union of its variant classes, told apart by ``sessionUpdate``; other values decode to `UnknownSessionUpdate`.

    Runtime marker class of the `SessionUpdate` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _StateUpdateBase(_SessionUpdateBase):
    """A snapshot of the session's aggregate foreground activity.

    Foreground work is the agent's active response or workflow in the session,
    including model processing, tool execution, and waiting for user action needed
    to continue that work. It can start with a prompt or be agent-initiated, for
    example to pursue an ongoing goal or follow up on a completed background task.
    Either way, the agent MUST report `running` when foreground work starts,
    or `requires_action` if it starts blocked on user action, and `idle` when it
    ends. The agent SHOULD include a stop reason on that idle update.
    Agent-initiated work does not require a prompt request or a synthetic user
    message.

    `running` may precede user-message insertion, for example during a foreground
    hook. It is not acknowledgment of insertion, and rejecting a prompt does not
    itself end foreground work.

    Background activity can continue and emit other `session/update` notifications
    while `idle`. Those notifications, including a detached task's progress or
    completion, do not by themselves change this state. A permission request only
    warrants `requires_action` when foreground work is blocked on user action.

    The agent SHOULD report `requires_action` when the foreground workflow as a
    whole cannot progress without user action, including permissions or elicitations.
    Once reported, it MUST report `running` when progress resumes, or `idle` when
    work ends without resuming.
    If other foreground work can progress, the state remains `running`. Resolving
    one of several requests does not itself change the state. Agents SHOULD ignore
    responses for work that has already ended rather than use them to resume it.

    A new session defaults to idle until a state update reports otherwise.
    Resume MUST send a current-state snapshot after any replay and before its
    response. The snapshot reports foreground state after resuming.
    The response alone does not imply idle.
    Repeated snapshots are idempotent, not additional work, completions, or usage.
    A repeated state may carry updated information without another state transition.
    The agent MUST report `idle` when no foreground activity remains. Completing
    an individual activity while other foreground work continues does not require
    an idle boundary. Local commands use the same lifecycle even without model work.

    See protocol docs: [Session States](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#session-states)

    A union of its variant classes, told apart by ``state`` (``sessionUpdate: "state_update"``); other values decode to `UnknownStateUpdate`.

    Runtime marker class of the `StateUpdate` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _BackgroundWorkBase:
    """One piece of work running independently of the session's foreground work.

    Items reference entities the Client already tracks. The Agent MUST announce each item
    before the first snapshot that lists it, and MUST report a terminal's `exitStatus` or a
    tool call's final status before the snapshot that removes it. Each piece of work is
    listed once: process-backed work is listed as its terminal, not also as its tool call.

    See protocol docs: [Background Work](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#background-work)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownBackgroundWork`.

    Runtime marker class of the `BackgroundWork` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _PlanUpdateContentBase:
    """Updated content for a plan.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownPlanUpdateContent`.

    Runtime marker class of the `PlanUpdateContent` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _McpServerBase:
    """Configuration for connecting to an MCP (Model Context Protocol) server.

    MCP servers provide tools and context that the agent can use when
    processing prompts.

    See protocol docs: [MCP Servers](https://agentclientprotocol.com/protocol/v2/session-setup#mcp-servers)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownMcpServer`.

    Runtime marker class of the `McpServer` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _ReplayFromBase:
    """Inclusive cursor describing where replayed session history should begin.

    Replay includes the position identified by the cursor.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownReplayFrom`.

    Runtime marker class of the `ReplayFrom` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _SetSessionConfigOptionRequestBase:
    """Request parameters for setting a session configuration option.

    Agents MUST support this method for any session where they advertise config options.
    Agents MUST reject an unknown `configId` or invalid value with `-32602` and leave the
    configuration unchanged.

    See protocol docs: [Session Config Options](https://agentclientprotocol.com/protocol/v2/session-config-options#setting-a-config-option)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownSetSessionConfigOptionRequest`.

    Runtime marker class of the `SetSessionConfigOptionRequest` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _RequestPermissionOutcomeBase:
    """The outcome of a permission request.

    A union of its variant classes, told apart by ``outcome``; other values decode to `UnknownRequestPermissionOutcome`.

    Runtime marker class of the `RequestPermissionOutcome` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


class _CreateElicitationResponseBase:
    """Response from the client to an elicitation request.

    A union of its variant classes, told apart by ``action``; other values decode to `UnknownCreateElicitationResponse`.

    Runtime marker class of the `CreateElicitationResponse` union: every variant inherits it and
    `acpio.schema.decode` dispatches on it; type checkers see the union of the variants.
    """

    __slots__ = ()


# ------------------------------------------------------------------------------------------------
# Object types


class RequestPermissionRequest(AcpStruct, kw_only=True):
    """Request for user permission to proceed with an operation.

    Sent when the agent needs authorization before performing a sensitive operation.

    See protocol docs: [Requesting Permission](https://agentclientprotocol.com/protocol/v2/tool-calls#requesting-permission)
    """

    session_id: SessionId
    """The session ID for this request."""

    title: str
    """Human-readable title for the permission prompt.

    This title is specific to the permission prompt and does not update any
    subject's displayed title.
    """

    description: str | None | UnsetType = UNSET
    """Optional human-readable explanation of why permission is needed.

    This text is specific to the permission prompt and does not update any
    subject's displayed content. Omitted and `null` are equivalent and mean no separate
    permission description was provided.
    """

    subject: RequestPermissionSubject | None | UnsetType = UNSET
    """Optional structured context about the operation requiring permission.

    Omitted and `null` are equivalent and mean no structured subject was provided.
    """

    options: list[PermissionOption]
    """Available permission options for the user to choose from.
    Must contain at least one option.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownRequestPermissionSubject(UnknownVariant, _RequestPermissionSubjectBase):
    """A `RequestPermissionSubject` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "RequestPermissionSubject"
    _key = "type"
    _known = frozenset({"tool_call", "command"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class ToolCallUpdateFields(AcpStruct, kw_only=True):
    """Represents an upsert for a tool call that the language model has requested.

    Tool calls are actions that the agent executes on behalf of the language model,
    such as reading files, executing code, or fetching data from external sources.

    Only `toolCallId` is required. Other fields have patch semantics:
    omitted fields leave the existing tool call value unchanged, `null` clears or
    unsets the value, and concrete values replace the previous value. For
    collection fields, concrete arrays replace the previous collection, and both
    `null` and `[]` clear the collection. A concrete `_meta` object instead
    patches the stored metadata by top-level key. When a client receives a tool
    call ID it has not seen before, omitted fields start at their protocol defaults.

    See protocol docs: [Tool Calls](https://agentclientprotocol.com/protocol/v2/tool-calls)
    """

    tool_call_id: ToolCallId
    """Unique identifier for this tool call within the session."""

    name: str | None | UnsetType = UNSET
    """Programmatic name of the tool being invoked.

    This field is optional and has patch semantics. Omission means no
    change, `null` clears the name, and a string replaces it. For a tool
    call ID the client has not seen before, omission or `null` means that no
    tool name is available.
    """

    title: str | None | UnsetType = UNSET
    """Human-readable title describing what the tool is doing.

    Omission leaves the title unchanged, `null` unsets it, and a string replaces it.
    A new tool call starts without a title.
    """

    kind: ToolKind | None | UnsetType = UNSET
    """The category of tool being invoked.
    Helps clients choose appropriate icons and UI treatment.

    Omission leaves the kind unchanged, `null` resets it to `other`, and a value replaces it.
    A new tool call starts as `other`.
    """

    status: ToolCallStatus | None | UnsetType = UNSET
    """Current execution status of the tool call.

    Omission leaves the status unchanged, `null` resets it to `pending`, and a value
    replaces it. A new tool call starts as `pending`.
    """

    content: list[ToolCallContent] | None | UnsetType = UNSET
    """Content produced by the tool call."""

    locations: list[ToolCallLocation] | None | UnsetType = UNSET
    """File locations affected by this tool call.
    Enables "follow-along" features in clients.
    """

    raw_input: object = UNSET
    """Raw input parameters sent to the tool."""

    raw_output: object = UNSET
    """Raw output returned by the tool."""

    capabilities: ToolCallCapabilities | None | UnsetType = UNSET
    """Client-initiated controls this tool call currently supports, such as cancellation.

    Omission leaves the capabilities unchanged, `null` clears them, and an object replaces
    the whole previous value. A new tool call starts with none.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class UnknownToolCallContent(UnknownVariant, _ToolCallContentBase):
    """A `ToolCallContent` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "ToolCallContent"
    _key = "type"
    _known = frozenset({"content", "diff", "terminal"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class UnknownContentBlock(UnknownVariant, _ContentBlockBase):
    """A `ContentBlock` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "ContentBlock"
    _key = "type"
    _known = frozenset({"text", "image", "audio", "resource_link", "resource"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class Annotations(AcpStruct, kw_only=True):
    """Optional annotations for the client. The client can use annotations to inform how objects are used or displayed"""

    audience: list[Role] | None | UnsetType = UNSET
    """Intended recipients for this content, such as the user or assistant.

    Omitted and `null` are equivalent and mean no audience is specified.
    """

    last_modified: str | None | UnsetType = UNSET
    """Timestamp indicating when the underlying resource was last modified.

    Should be an ISO 8601 formatted string (e.g., "2025-01-12T15:00:58Z"), as in MCP.

    Omitted and `null` are equivalent and mean the modification time is not reported.
    """

    priority: float | None | UnsetType = UNSET
    """Relative importance of this content when clients choose what to surface, from 0 (least
    important) to 1 (most important).

    Omitted and `null` are equivalent and mean no priority is specified.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TextContent(AcpStruct, _ContentBlockBase, kw_only=True):
    """Text provided to or from an LLM.

    Variant of `ContentBlock` sent with ``type: "text"``.
    """

    type: Literal["text"] = "text"
    """Discriminator of `ContentBlock`: always ``"text"``."""

    text: str
    """Text payload carried by this content block."""

    annotations: Annotations | None | UnsetType = UNSET
    """Optional annotations that help clients decide how to display or route this content.

    Omitted and `null` are equivalent and mean no annotations are provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ImageContent(AcpStruct, _ContentBlockBase, kw_only=True):
    """An image provided to or from an LLM.

    Variant of `ContentBlock` sent with ``type: "image"``.
    """

    type: Literal["image"] = "image"
    """Discriminator of `ContentBlock`: always ``"image"``."""

    data: str
    """Base64-encoded media payload."""

    mime_type: MediaType
    """MIME type describing the encoded media payload."""

    uri: str | None | UnsetType = UNSET
    """URI associated with this resource or media payload.

    Omitted and `null` are equivalent and mean no URI is associated with the image.
    """

    annotations: Annotations | None | UnsetType = UNSET
    """Optional annotations that help clients decide how to display or route this content.

    Omitted and `null` are equivalent and mean no annotations are provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AudioContent(AcpStruct, _ContentBlockBase, kw_only=True):
    """Audio provided to or from an LLM.

    Variant of `ContentBlock` sent with ``type: "audio"``.
    """

    type: Literal["audio"] = "audio"
    """Discriminator of `ContentBlock`: always ``"audio"``."""

    data: str
    """Base64-encoded media payload."""

    mime_type: MediaType
    """MIME type describing the encoded media payload."""

    annotations: Annotations | None | UnsetType = UNSET
    """Optional annotations that help clients decide how to display or route this content.

    Omitted and `null` are equivalent and mean no annotations are provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Icon(AcpStruct, kw_only=True):
    """An optionally-sized icon that can be displayed in a user interface."""

    src: str
    """A standard URI pointing to an icon resource. MUST be an `https:` or `data:` URI.
    Clients reject other schemes, fetch without credentials, and do not follow
    scheme- or origin-changing redirects.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """Optional MIME type override if the source MIME type is missing or generic.

    Omitted and `null` are equivalent and mean the source MIME type is used.
    """

    sizes: list[str] | None | UnsetType = UNSET
    """Optional array of strings that specify sizes at which the icon can be used.
    Each string should be in `WxH` format (e.g., `"48x48"`, `"96x96"`) or
    `"any"` for scalable formats like SVG.

    If not provided, the client should assume that the icon can be used at any size.

    Omitted and `null` are equivalent and mean no sizes are specified.
    """

    theme: IconTheme | None | UnsetType = UNSET
    """Optional theme this icon is designed for.

    Omitted and `null` are equivalent and mean the icon is not theme-specific.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ResourceLink(AcpStruct, _ContentBlockBase, kw_only=True):
    """A link to a resource that the receiver may be able to read, included in a prompt or tool call result.

    Variant of `ContentBlock` sent with ``type: "resource_link"``.
    """

    type: Literal["resource_link"] = "resource_link"
    """Discriminator of `ContentBlock`: always ``"resource_link"``."""

    name: str
    """Human-readable name shown for this protocol object."""

    uri: str
    """URI associated with this resource or media payload."""

    title: str | None | UnsetType = UNSET
    """Optional display title for end-user UI.

    Omitted and `null` are equivalent and mean no title is provided.
    """

    description: str | None | UnsetType = UNSET
    """Optional human-readable details shown with this protocol object.

    Omitted and `null` are equivalent and mean no description is provided.
    """

    icons: list[Icon] | None | UnsetType = UNSET
    """Optional set of sized icons that the client can display in a user interface.

    Omitted and `null` are equivalent and mean no icons are provided.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type describing the encoded media payload.

    Omitted and `null` are equivalent and mean the MIME type is not specified.
    """

    size: int | None | UnsetType = UNSET
    """Optional size of the linked resource in bytes, if known.

    Omitted and `null` are equivalent and mean the size is not known.
    """

    annotations: Annotations | None | UnsetType = UNSET
    """Optional annotations that help clients decide how to display or route this content.

    Omitted and `null` are equivalent and mean no annotations are provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TextResourceContents(AcpStruct, _EmbeddedResourceResourceBase, kw_only=True):
    """Text-based resource contents."""

    text: str
    """Text payload carried by this content block."""

    uri: str
    """URI associated with this resource or media payload."""

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type describing the encoded media payload.

    Omitted and `null` are equivalent and mean the MIME type is not specified.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class BlobResourceContents(AcpStruct, _EmbeddedResourceResourceBase, kw_only=True):
    """Binary resource contents."""

    blob: str
    """Base64-encoded bytes for a binary resource payload."""

    uri: str
    """URI associated with this resource or media payload."""

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type describing the encoded media payload.

    Omitted and `null` are equivalent and mean the MIME type is not specified.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class EmbeddedResource(AcpStruct, _ContentBlockBase, kw_only=True):
    """The contents of a resource, embedded into a prompt or tool call result.

    Variant of `ContentBlock` sent with ``type: "resource"``.
    """

    type: Literal["resource"] = "resource"
    """Discriminator of `ContentBlock`: always ``"resource"``."""

    resource: EmbeddedResourceResource
    """Embedded resource payload, either text or binary data."""

    annotations: Annotations | None | UnsetType = UNSET
    """Optional annotations that help clients decide how to display or route this content.

    Omitted and `null` are equivalent and mean no annotations are provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Content(AcpStruct, _ToolCallContentBase, kw_only=True):
    """Standard content block (text, images, resources).

    Variant of `ToolCallContent` sent with ``type: "content"``.
    """

    type: Literal["content"] = "content"
    """Discriminator of `ToolCallContent`: always ``"content"``."""

    content: ContentBlock
    """The actual content block."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownDiffChange(UnknownVariant, _DiffChangeBase):
    """A `DiffChange` whose ``operation`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "DiffChange"
    _key = "operation"
    _known = frozenset({"add", "delete", "modify", "move", "copy"})

    @property
    def operation(self) -> str:
        """The unknown ``operation`` value."""
        return self._tag("operation")


class AddChange(AcpStruct, _DiffChangeBase, kw_only=True):
    """Operation metadata for add, delete, and modify changes.

    Variant of `DiffChange` sent with ``operation: "add"``.
    """

    operation: Literal["add"] = "add"
    """Discriminator of `DiffChange`: always ``"add"``."""

    path: AbsolutePath
    """Absolute path for the operation."""

    file_type: DiffFileType | None | UnsetType = UNSET
    """File content kind after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the content kind is unknown.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type of the file contents after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the MIME type is unknown.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class DeleteChange(AcpStruct, _DiffChangeBase, kw_only=True):
    """Operation metadata for add, delete, and modify changes.

    Variant of `DiffChange` sent with ``operation: "delete"``.
    """

    operation: Literal["delete"] = "delete"
    """Discriminator of `DiffChange`: always ``"delete"``."""

    path: AbsolutePath
    """Absolute path for the operation."""

    file_type: DiffFileType | None | UnsetType = UNSET
    """File content kind after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the content kind is unknown.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type of the file contents after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the MIME type is unknown.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ModifyChange(AcpStruct, _DiffChangeBase, kw_only=True):
    """Operation metadata for add, delete, and modify changes.

    Variant of `DiffChange` sent with ``operation: "modify"``.
    """

    operation: Literal["modify"] = "modify"
    """Discriminator of `DiffChange`: always ``"modify"``."""

    path: AbsolutePath
    """Absolute path for the operation."""

    file_type: DiffFileType | None | UnsetType = UNSET
    """File content kind after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the content kind is unknown.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type of the file contents after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the MIME type is unknown.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class MoveChange(AcpStruct, _DiffChangeBase, kw_only=True):
    """Operation metadata for move and copy changes.

    Variant of `DiffChange` sent with ``operation: "move"``.
    """

    operation: Literal["move"] = "move"
    """Discriminator of `DiffChange`: always ``"move"``."""

    old_path: AbsolutePath
    """Absolute path before the operation."""

    path: AbsolutePath
    """Absolute path after the operation."""

    file_type: DiffFileType | None | UnsetType = UNSET
    """File content kind after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the content kind is unknown.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type of the file contents after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the MIME type is unknown.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CopyChange(AcpStruct, _DiffChangeBase, kw_only=True):
    """Operation metadata for move and copy changes.

    Variant of `DiffChange` sent with ``operation: "copy"``.
    """

    operation: Literal["copy"] = "copy"
    """Discriminator of `DiffChange`: always ``"copy"``."""

    old_path: AbsolutePath
    """Absolute path before the operation."""

    path: AbsolutePath
    """Absolute path after the operation."""

    file_type: DiffFileType | None | UnsetType = UNSET
    """File content kind after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the content kind is unknown.
    """

    mime_type: MediaType | None | UnsetType = UNSET
    """MIME type of the file contents after the operation (for `delete`, of the deleted file).

    Omitted and `null` are equivalent and mean the MIME type is unknown.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class DiffPatch(AcpStruct, kw_only=True):
    """Renderable patch text and its format."""

    format: DiffPatchFormat
    """Patch format. The only ACP-defined value is `git_patch`."""

    text: str
    """Patch text in the format named by `format`."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Diff(AcpStruct, _ToolCallContentBase, kw_only=True):
    """File changes produced by a tool call.

    `changes` is authoritative for affected absolute paths and operations.
    `patch` optionally carries renderable text for some or all of those changes
    and MUST be consistent with `changes`. Agents SHOULD provide `patch` whenever
    feasible. Clients MUST handle diffs where `patch` is omitted or `null`.

    See protocol docs: [Content](https://agentclientprotocol.com/protocol/v2/tool-calls#content)

    Variant of `ToolCallContent` sent with ``type: "diff"``.
    """

    type: Literal["diff"] = "diff"
    """Discriminator of `ToolCallContent`: always ``"diff"``."""

    changes: list[DiffChange]
    """Structured file changes described by this diff.

    Clients can use this field without parsing patch text to determine affected paths.
    """

    patch: DiffPatch | None | UnsetType = UNSET
    """Renderable patch text for some or all of the structured changes.

    Agents SHOULD provide patch text whenever feasible. Omitted and `null` are
    equivalent and mean no renderable patch text was provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Terminal(AcpStruct, _ToolCallContentBase, kw_only=True):
    """A display-only reference to an agent-owned terminal.

    Terminal state and output are delivered separately through
    `terminal_update` and `terminal_output_chunk` session updates.

    Variant of `ToolCallContent` sent with ``type: "terminal"``.
    """

    type: Literal["terminal"] = "terminal"
    """Discriminator of `ToolCallContent`: always ``"terminal"``."""

    terminal_id: TerminalId
    """The ID of the terminal to display."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ToolCallLocation(AcpStruct, kw_only=True):
    """A file location being accessed or modified by a tool.

    Enables clients to implement "follow-along" features that track
    which files the agent is working with in real-time.

    See protocol docs: [Following the Agent](https://agentclientprotocol.com/protocol/v2/tool-calls#following-the-agent)
    """

    path: AbsolutePath
    """The absolute file path being accessed or modified."""

    line: int | None | UnsetType = UNSET
    """Optional 1-based line number within the file. Omitted and `null` are equivalent and
    mean no specific line. `0` is invalid.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ToolCallCapabilities(AcpStruct, kw_only=True):
    """Client-initiated controls a tool call currently supports.

    A malformed value falls back to no controls, so the Client never sends a request the
    Agent did not advertise.

    See protocol docs: [Cancelling Tool Calls](https://agentclientprotocol.com/protocol/v2/tool-calls#cancelling-tool-calls)
    """

    cancel: ToolCallCancelCapabilities | None | UnsetType = UNSET
    """Permits the Client to cancel this tool call with `tool_call/cancel`.

    Omitted and `null` are equivalent and mean unsupported. An object (including `{}`)
    means supported. Agents SHOULD stop advertising it once the tool call reaches a final status.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ToolCallCancelCapabilities(AcpStruct, kw_only=True):
    """Capability to cancel a tool call with `tool_call/cancel`.

    Supplying `{}` advertises support. An omitted or `null` `cancel` does not.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ToolCallPermissionSubject(AcpStruct, _RequestPermissionSubjectBase, kw_only=True):
    """Permission request details for a tool call.

    Variant of `RequestPermissionSubject` sent with ``type: "tool_call"``.
    """

    type: Literal["tool_call"] = "tool_call"
    """Discriminator of `RequestPermissionSubject`: always ``"tool_call"``."""

    tool_call: ToolCallUpdateFields
    """Details about the tool call requiring permission.

    Clients apply this to their stored tool call exactly like a `tool_call_update`
    notification, in the order it was received, before showing the prompt. A first-seen
    `toolCallId` creates the tool call.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CommandPermissionSubject(AcpStruct, _RequestPermissionSubjectBase, kw_only=True):
    """Permission request details for a command.

    Variant of `RequestPermissionSubject` sent with ``type: "command"``.
    """

    type: Literal["command"] = "command"
    """Discriminator of `RequestPermissionSubject`: always ``"command"``."""

    command: str
    """The command that would be run if permission is granted."""

    cwd: AbsolutePath
    """The absolute working directory for the command."""

    tool_call_id: ToolCallId | None | UnsetType = UNSET
    """The associated tool call, when known. Omitted and `null` are equivalent."""

    terminal_id: TerminalId | None | UnsetType = UNSET
    """The associated terminal, when already known. Omitted and `null` are equivalent."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PermissionOption(AcpStruct, kw_only=True):
    """An option presented to the user when requesting permission."""

    option_id: PermissionOptionId
    """Identifier for this permission option. MUST be unique within the request."""

    name: str
    """Human-readable label to display to the user."""

    kind: PermissionOptionKind
    """Hint about the nature of this permission option."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownCreateElicitationRequest(UnknownVariant, _CreateElicitationRequestBase):
    """A `CreateElicitationRequest` whose ``mode`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "CreateElicitationRequest"
    _key = "mode"
    _known = frozenset({"form", "url"})

    @property
    def mode(self) -> str:
        """The unknown ``mode`` value."""
        return self._tag("mode")


class ElicitationSchema(AcpStruct, kw_only=True):
    """Type-safe elicitation schema for requesting structured user input.

    This represents a JSON Schema object with primitive-typed properties,
    as required by the elicitation specification.
    """

    type: ElicitationSchemaType = "object"
    """Type discriminator. Always `"object"`. Any other value is rejected."""

    title: str | None | UnsetType = UNSET
    """Optional title for the schema.

    Optional. Omitted and `null` are equivalent and mean no title is provided.
    """

    properties: dict[str, ElicitationPropertySchema]
    """Property definitions (must be primitive types)."""

    required: list[str] | None | UnsetType = UNSET
    """List of required property names.

    Optional. Omitted and `null` are equivalent and mean no property names are required.
    """

    description: str | None | UnsetType = UNSET
    """Optional description of what this schema represents.

    Optional. Omitted and `null` are equivalent and mean no schema description is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownElicitationPropertySchema(UnknownVariant, _ElicitationPropertySchemaBase):
    """A `ElicitationPropertySchema` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "ElicitationPropertySchema"
    _key = "type"
    _known = frozenset({"string", "number", "integer", "boolean", "array"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class EnumOption(AcpStruct, kw_only=True):
    """A titled enum option with a const value, human-readable title, and optional description."""

    const: str
    """The constant value for this option."""

    title: str
    """Human-readable title for this option."""

    description: str | None | UnsetType = UNSET
    """Human-readable description.

    Optional. Omitted and `null` are equivalent and mean no description is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class StringPropertySchema(AcpStruct, _ElicitationPropertySchemaBase, kw_only=True):
    """Schema for string properties in an elicitation form.

    When `enum` or `oneOf` is set, this represents a single-select enum
    with `"type": "string"`.

    Variant of `ElicitationPropertySchema` sent with ``type: "string"``.
    """

    type: Literal["string"] = "string"
    """Discriminator of `ElicitationPropertySchema`: always ``"string"``."""

    title: str | None | UnsetType = UNSET
    """Optional title for the property.

    Optional. Omitted and `null` are equivalent and mean no title is provided.
    """

    description: str | None | UnsetType = UNSET
    """Human-readable description.

    Optional. Omitted and `null` are equivalent and mean no description is provided.
    """

    min_length: int | None | UnsetType = UNSET
    """Minimum string length.

    Optional. Omitted and `null` are equivalent and mean there is no minimum length constraint.
    """

    max_length: int | None | UnsetType = UNSET
    """Maximum string length.

    Optional. Omitted and `null` are equivalent and mean there is no maximum length constraint.
    """

    pattern: str | None | UnsetType = UNSET
    """Pattern the string must match, in ECMA-262 regular expression syntax.

    Optional. Omitted and `null` are equivalent and mean there is no pattern constraint.
    """

    format: StringFormat | None | UnsetType = UNSET
    """String format.

    Optional. Omitted and `null` are equivalent and mean there is no format constraint.
    """

    default: str | None | UnsetType = UNSET
    """Default value.

    Optional. Omitted and `null` are equivalent and mean no default value is provided.
    """

    enum: list[str] | None | UnsetType = UNSET
    """Enum values for untitled single-select enums.
    Must contain at least one value when present.
    Optional. Omitted and `null` are equivalent and mean no untitled single-select choices are
    declared by `enum`.
    """

    one_of: list[EnumOption] | None | UnsetType = UNSET
    """Titled enum options for titled single-select enums.
    Must contain at least one option when present.
    Optional. Omitted and `null` are equivalent and mean no titled single-select choices are
    declared by `oneOf`.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class NumberPropertySchema(AcpStruct, _ElicitationPropertySchemaBase, kw_only=True):
    """Schema for number (floating-point) properties in an elicitation form.

    Variant of `ElicitationPropertySchema` sent with ``type: "number"``.
    """

    type: Literal["number"] = "number"
    """Discriminator of `ElicitationPropertySchema`: always ``"number"``."""

    title: str | None | UnsetType = UNSET
    """Optional title for the property.

    Optional. Omitted and `null` are equivalent and mean no title is provided.
    """

    description: str | None | UnsetType = UNSET
    """Human-readable description.

    Optional. Omitted and `null` are equivalent and mean no description is provided.
    """

    minimum: float | None | UnsetType = UNSET
    """Minimum value (inclusive).

    Optional. Omitted and `null` are equivalent and mean there is no inclusive lower bound.
    """

    maximum: float | None | UnsetType = UNSET
    """Maximum value (inclusive).

    Optional. Omitted and `null` are equivalent and mean there is no inclusive upper bound.
    """

    default: float | None | UnsetType = UNSET
    """Default value.

    Optional. Omitted and `null` are equivalent and mean no default value is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class IntegerPropertySchema(AcpStruct, _ElicitationPropertySchemaBase, kw_only=True):
    """Schema for integer properties in an elicitation form.

    Variant of `ElicitationPropertySchema` sent with ``type: "integer"``.
    """

    type: Literal["integer"] = "integer"
    """Discriminator of `ElicitationPropertySchema`: always ``"integer"``."""

    title: str | None | UnsetType = UNSET
    """Optional title for the property.

    Optional. Omitted and `null` are equivalent and mean no title is provided.
    """

    description: str | None | UnsetType = UNSET
    """Human-readable description.

    Optional. Omitted and `null` are equivalent and mean no description is provided.
    """

    minimum: int | None | UnsetType = UNSET
    """Minimum value (inclusive).

    Optional. Omitted and `null` are equivalent and mean there is no inclusive lower bound.
    """

    maximum: int | None | UnsetType = UNSET
    """Maximum value (inclusive).

    Optional. Omitted and `null` are equivalent and mean there is no inclusive upper bound.
    """

    default: int | None | UnsetType = UNSET
    """Default value.

    Optional. Omitted and `null` are equivalent and mean no default value is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class BooleanPropertySchema(AcpStruct, _ElicitationPropertySchemaBase, kw_only=True):
    """Schema for boolean properties in an elicitation form.

    Variant of `ElicitationPropertySchema` sent with ``type: "boolean"``.
    """

    type: Literal["boolean"] = "boolean"
    """Discriminator of `ElicitationPropertySchema`: always ``"boolean"``."""

    title: str | None | UnsetType = UNSET
    """Optional title for the property.

    Optional. Omitted and `null` are equivalent and mean no title is provided.
    """

    description: str | None | UnsetType = UNSET
    """Human-readable description.

    Optional. Omitted and `null` are equivalent and mean no description is provided.
    """

    default: bool | None | UnsetType = UNSET
    """Default value.

    Optional. Omitted and `null` are equivalent and mean no default value is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownMultiSelectItems(UnknownVariant, _MultiSelectItemsBase):
    """A `MultiSelectItems` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "MultiSelectItems"
    _key = "type"
    _known = frozenset({"string"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class StringMultiSelectItems(AcpStruct, _MultiSelectItemsBase, kw_only=True):
    """String item schema for multi-select enum properties.

    Variant of `MultiSelectItems` sent with ``type: "string"``.
    """

    type: Literal["string"] = "string"
    """Discriminator of `MultiSelectItems`: always ``"string"``."""

    enum: list[str]
    """Allowed enum values. Must contain at least one value."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TitledMultiSelectItems(AcpStruct, _MultiSelectItemsBase, kw_only=True):
    """Items definition for titled multi-select enum properties."""

    any_of: list[EnumOption]
    """Titled enum options. Must contain at least one option."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class MultiSelectPropertySchema(AcpStruct, _ElicitationPropertySchemaBase, kw_only=True):
    """Schema for multi-select (array) properties in an elicitation form.

    Variant of `ElicitationPropertySchema` sent with ``type: "array"``.
    """

    type: Literal["array"] = "array"
    """Discriminator of `ElicitationPropertySchema`: always ``"array"``."""

    title: str | None | UnsetType = UNSET
    """Optional title for the property.

    Optional. Omitted and `null` are equivalent and mean no title is provided.
    """

    description: str | None | UnsetType = UNSET
    """Human-readable description.

    Optional. Omitted and `null` are equivalent and mean no description is provided.
    """

    min_items: int | None | UnsetType = UNSET
    """Minimum number of items to select.

    Optional. Omitted and `null` are equivalent and mean there is no minimum selection count.
    """

    max_items: int | None | UnsetType = UNSET
    """Maximum number of items to select.

    Optional. Omitted and `null` are equivalent and mean there is no maximum selection count.
    """

    items: MultiSelectItems
    """The items definition describing allowed values."""

    default: list[str] | None | UnsetType = UNSET
    """Default selected values.

    Optional. Omitted and `null` are equivalent and mean no default selections are provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationFormMode(AcpStruct, _CreateElicitationRequestBase, kw_only=True):
    """Form-based elicitation mode where the client renders a form from the provided schema.

    Variant of `CreateElicitationRequest` sent with ``mode: "form"``.
    """

    mode: Literal["form"] = "form"
    """Discriminator of `CreateElicitationRequest`: always ``"form"``."""

    requested_schema: ElicitationSchema
    """A JSON Schema describing the form fields to present to the user."""

    session_id: SessionId | UnsetType = UNSET
    """The session this elicitation is tied to."""

    tool_call_id: ToolCallId | None | UnsetType = UNSET
    """Optional tool call within the session.

    Optional. Omitted and `null` are equivalent and mean the elicitation is scoped to the
    session without a specific tool call.
    """

    request_id: RequestId | UnsetType = UNSET
    """The pending Client-to-Agent request this elicitation is tied to."""

    message: str
    """A human-readable message describing what input is needed."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationUrlMode(AcpStruct, _CreateElicitationRequestBase, kw_only=True):
    """URL-based elicitation mode where the client directs the user to a URL.

    Variant of `CreateElicitationRequest` sent with ``mode: "url"``.
    """

    mode: Literal["url"] = "url"
    """Discriminator of `CreateElicitationRequest`: always ``"url"``."""

    elicitation_id: ElicitationId
    """The unique identifier for this elicitation."""

    url: str
    """The URL to direct the user to."""

    session_id: SessionId | UnsetType = UNSET
    """The session this elicitation is tied to."""

    tool_call_id: ToolCallId | None | UnsetType = UNSET
    """Optional tool call within the session.

    Optional. Omitted and `null` are equivalent and mean the elicitation is scoped to the
    session without a specific tool call.
    """

    request_id: RequestId | UnsetType = UNSET
    """The pending Client-to-Agent request this elicitation is tied to."""

    message: str
    """A human-readable message describing what input is needed."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class InitializeResponse(AcpStruct, kw_only=True):
    """Response to the `initialize` method.

    Contains the negotiated protocol version and agent capabilities.

    See protocol docs: [Initialization](https://agentclientprotocol.com/protocol/v2/initialization)
    """

    protocol_version: ProtocolVersion
    """The highest protocol version supported by the agent that is at or below
    the version requested by the client. If no such version exists,
    initialization fails with error code -32022.

    The client must check that it supports this version and should disconnect
    if it does not.
    """

    info: Implementation
    """Information about the implementation sending this initialize response."""

    capabilities: AgentCapabilities | UnsetType = UNSET
    """Capabilities supported by the agent."""

    auth_methods: list[AuthMethod] | UnsetType = UNSET
    """Authentication methods supported by the agent.

    Optional. Omitted or empty means the agent does not advertise the
    `auth/login` and `auth/logout` methods. Supplying one or more methods means
    the agent MUST support both `auth/login` and `auth/logout`.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Implementation(AcpStruct, kw_only=True):
    """Metadata about the implementation of the client or agent.
    Describes the name and version of an ACP implementation, with an optional
    title for UI representation.
    """

    name: str
    """Intended for programmatic or logical use, but can be used as a display
    name fallback if title isn't present.
    """

    title: str | None | UnsetType = UNSET
    """Intended for UI and end-user contexts and optimized to be human-readable
    and easily understood.

    If not provided, the name should be used for display.

    Omitted and `null` are equivalent and mean the `name` is used for display.
    """

    version: str
    """Version of the implementation. Can be displayed to the user or used
    for debugging or metrics purposes. (e.g. "1.0.0").
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AgentCapabilities(AcpStruct, kw_only=True):
    """Capabilities supported by the agent.

    Advertised during initialization to inform the client about
    available features and content types.

    See protocol docs: [Agent Capabilities](https://agentclientprotocol.com/protocol/v2/initialization#agent-capabilities)
    """

    session: SessionCapabilities | None | UnsetType = UNSET
    """Session capabilities supported by the agent.

    Optional. Omitted and `null` are equivalent and mean the agent does not support the
    `session/*` methods. Supplying `{}` means the agent supports the
    baseline session methods: `session/new`, `session/list`,
    `session/resume`, `session/close`, `session/prompt`, `session/cancel`,
    and `session/update`.
    """

    auth: AgentAuthCapabilities | None | UnsetType = UNSET
    """Authentication-related extension capabilities supported by the agent.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise any
    authentication-related extensions. This field does not advertise support
    for `auth/login` or `auth/logout`. Those methods are advertised by a
    non-empty `authMethods` list in the `initialize` response.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionCapabilities(AcpStruct, kw_only=True):
    """Session capabilities supported by the agent.

    Supplying `{}` means the agent supports the baseline session methods:
    `session/new`, `session/list`, `session/resume`, `session/close`,
    `session/prompt`, `session/cancel`, and `session/update`.

    Agents that support sessions **MAY** support additional session methods,
    prompt content types, and MCP transports by specifying additional
    capabilities.

    See protocol docs: [Session Capabilities](https://agentclientprotocol.com/protocol/v2/initialization#session-capabilities)
    """

    prompt: PromptCapabilities | None | UnsetType = UNSET
    """Prompt capabilities supported by the agent in `session/prompt` requests.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise any
    prompt extensions beyond the baseline text and resource-link content
    required by `session/prompt`.
    """

    mcp: McpCapabilities | None | UnsetType = UNSET
    """MCP capabilities supported by the agent for session lifecycle requests.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise MCP
    server transport support for sessions.
    """

    delete: SessionDeleteCapabilities | None | UnsetType = UNSET
    """Whether the agent supports `session/delete`.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports deleting sessions from `session/list`.
    """

    additional_directories: SessionAdditionalDirectoriesCapabilities | None | UnsetType = UNSET
    """Whether the agent supports `additionalDirectories` on supported session lifecycle requests.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports `additionalDirectories` on
    supported session lifecycle requests.

    Agents may return `SessionInfo.additionalDirectories` to report the
    complete ordered additional-root list associated with a listed session.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PromptCapabilities(AcpStruct, kw_only=True):
    """Prompt capabilities supported by the agent in `session/prompt` requests.

    Baseline agent functionality requires support for `text`
    and `resource_link` content blocks in prompt requests.

    Other variants must be explicitly opted in to.
    Capabilities for different types of content in prompt requests.

    Indicates which content types beyond the baseline (text and resource links)
    the agent can process.

    See protocol docs: [Session Prompt Capabilities](https://agentclientprotocol.com/protocol/v2/initialization#session-prompt-capabilities)
    """

    image: PromptImageCapabilities | None | UnsetType = UNSET
    """Agent supports `image` content blocks.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports image content in prompts.
    """

    audio: PromptAudioCapabilities | None | UnsetType = UNSET
    """Agent supports `audio` content blocks.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports audio content in prompts.
    """

    embedded_context: PromptEmbeddedContextCapabilities | None | UnsetType = UNSET
    """Agent supports embedded context in `session/prompt` requests.

    When enabled, the Client is allowed to include `resource` content blocks
    in prompt requests for pieces of context that are referenced in the message.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports embedded context in prompts.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PromptImageCapabilities(AcpStruct, kw_only=True):
    """Capabilities for image content in prompt requests.

    Supplying `{}` means the agent supports image content in prompts.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PromptAudioCapabilities(AcpStruct, kw_only=True):
    """Capabilities for audio content in prompt requests.

    Supplying `{}` means the agent supports audio content in prompts.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PromptEmbeddedContextCapabilities(AcpStruct, kw_only=True):
    """Capabilities for embedded context in prompt requests.

    Supplying `{}` means the agent supports embedded context in prompts.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class McpCapabilities(AcpStruct, kw_only=True):
    """MCP capabilities supported by the agent for session lifecycle requests."""

    stdio: McpStdioCapabilities | None | UnsetType = UNSET
    """Agent supports `stdio` MCP servers.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports stdio MCP server transports.
    """

    http: McpHttpCapabilities | None | UnsetType = UNSET
    """Agent supports `http` MCP servers.

    Optional. Omitted and `null` are equivalent and mean the agent does not advertise support.
    Supplying `{}` means the agent supports HTTP MCP server transports.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class McpStdioCapabilities(AcpStruct, kw_only=True):
    """Capabilities for stdio MCP server transports.

    Supplying `{}` means the agent supports stdio MCP server transports.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class McpHttpCapabilities(AcpStruct, kw_only=True):
    """Capabilities for HTTP MCP server transports.

    Supplying `{}` means the agent supports HTTP MCP server transports.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionDeleteCapabilities(AcpStruct, kw_only=True):
    """Capabilities for the `session/delete` method.

    Supplying `{}` means the agent supports deleting sessions from `session/list`.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionAdditionalDirectoriesCapabilities(AcpStruct, kw_only=True):
    """Capabilities for additional session directories support.

    Supplying `{}` means the agent supports the `additionalDirectories` field on
    supported session lifecycle requests. Agents may return
    `SessionInfo.additionalDirectories` in `session/list` to report the
    complete ordered additional-root list associated with a listed session.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AgentAuthCapabilities(AcpStruct, kw_only=True):
    """Authentication-related extension capabilities supported by the agent.

    This object does not advertise support for `auth/login` or `auth/logout`.
    Those methods are advertised by a non-empty `authMethods` list in the
    `initialize` response.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownAuthMethod(UnknownVariant, _AuthMethodBase):
    """A `AuthMethod` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "AuthMethod"
    _key = "type"
    _known = frozenset({"terminal", "agent"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class EnvVariable(AcpStruct, kw_only=True):
    """An environment variable to set when launching a process."""

    name: str
    """The name of the environment variable."""

    value: str
    """The value to set for the environment variable."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AuthMethodTerminal(AcpStruct, _AuthMethodBase, kw_only=True):
    """Terminal-based authentication method.

    The client runs the configured agent program as a separate interactive
    process for the user to authenticate via a TUI. Agents MUST advertise this
    method only when the client enabled its terminal authentication capability.
    A zero exit status signals success. Any other termination signals failure.
    The client MUST NOT pass this method to `auth/login`.

    Variant of `AuthMethod` sent with ``type: "terminal"``.
    """

    type: Literal["terminal"] = "terminal"
    """Discriminator of `AuthMethod`: always ``"terminal"``."""

    method_id: AuthMethodId
    """Unique identifier for this authentication method."""

    name: str
    """Human-readable name of the authentication method."""

    description: str | None | UnsetType = UNSET
    """Optional human-readable description of this authentication method.

    Omitted and `null` are equivalent and mean no description is provided.
    """

    args: list[str] | None | UnsetType = UNSET
    """Additional arguments to append to the configured agent invocation for terminal auth."""

    env: list[EnvVariable] | None | UnsetType = UNSET
    """Additional environment variables to set on the configured agent invocation for terminal auth.
    Names MUST be unique. These values override same-named variables in the
    base launch configuration.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AuthMethodAgent(AcpStruct, _AuthMethodBase, kw_only=True):
    """Agent handles authentication itself through `auth/login`.

    The `type` discriminator value is `agent`.

    Variant of `AuthMethod` sent with ``type: "agent"``.
    """

    type: Literal["agent"] = "agent"
    """Discriminator of `AuthMethod`: always ``"agent"``."""

    method_id: AuthMethodId
    """Unique identifier for this authentication method."""

    name: str
    """Human-readable name of the authentication method."""

    description: str | None | UnsetType = UNSET
    """Optional human-readable description of this authentication method.

    Omitted and `null` are equivalent and mean no description is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class LoginAuthResponse(AcpStruct, kw_only=True):
    """Response to the `auth/login` method."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class LogoutAuthResponse(AcpStruct, kw_only=True):
    """Response to the `auth/logout` method."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class NewSessionResponse(AcpStruct, kw_only=True):
    """Response from creating a new session.

    New sessions default to `idle` until a state update reports otherwise.
    Updates may arrive before or after this response. Clients MUST NOT overwrite
    an already-reported state when the response arrives.

    See protocol docs: [Creating a Session](https://agentclientprotocol.com/protocol/v2/session-setup#creating-a-session)
    """

    session_id: SessionId
    """Unique identifier for the created session.

    Used in all subsequent requests for this conversation.
    """

    config_options: list[SessionConfigOption] | UnsetType = UNSET
    """Initial session configuration options.

    Optional. Omitted or empty means no config options are advertised.
    Senders MUST use an array, not `null`. Receivers treat `null` like omission.
    Later `config_option_update` notifications replace this list.
    """

    available_commands: list[AvailableCommand] | UnsetType = UNSET
    """Initial commands the agent can execute in this session.

    Optional. Omitted or empty means no initial commands are advertised.
    Senders MUST use an array, not `null`. Receivers treat `null` like omission.
    Later `available_commands_update` notifications replace this list.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownSessionConfigOption(UnknownVariant, _SessionConfigOptionBase):
    """A `SessionConfigOption` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "SessionConfigOption"
    _key = "type"
    _known = frozenset({"select", "boolean"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class SessionConfigSelectOption(AcpStruct, _SessionConfigSelectOptionsItemBase, kw_only=True):
    """A possible value for a session configuration option."""

    value: SessionConfigValueId
    """Unique identifier for this option value."""

    name: str
    """Human-readable label for this option value."""

    description: str | None | UnsetType = UNSET
    """Optional description for this option value.

    Omitted and `null` are equivalent and mean no description is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionConfigSelectGroup(AcpStruct, _SessionConfigSelectOptionsItemBase, kw_only=True):
    """A group of possible values for a session configuration option."""

    group_id: SessionConfigGroupId
    """Unique identifier for this group."""

    name: str
    """Human-readable label for this group."""

    options: list[SessionConfigSelectOption]
    """The set of option values in this group. MUST contain at least one value."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionConfigSelect(AcpStruct, _SessionConfigOptionBase, kw_only=True):
    """A single-value selector (dropdown) session configuration option payload.

    Variant of `SessionConfigOption` sent with ``type: "select"``.
    """

    type: Literal["select"] = "select"
    """Discriminator of `SessionConfigOption`: always ``"select"``."""

    current_value: SessionConfigValueId
    """The currently selected value. MUST be one of the `value`s in `options`."""

    options: SessionConfigSelectOptions
    """The set of selectable options. MUST contain at least one value, and each `value` MUST be
    unique within the option, including across groups.
    """

    config_id: SessionConfigId
    """Unique identifier for the configuration option."""

    name: str
    """Human-readable label for the option."""

    description: str | None | UnsetType = UNSET
    """Optional description for the Client to display to the user.

    Omitted and `null` are equivalent and mean no description is provided.
    """

    category: SessionConfigOptionCategory | None | UnsetType = UNSET
    """Optional semantic category for this option (UX only).

    Omitted and `null` are equivalent and mean no category is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionConfigBoolean(AcpStruct, _SessionConfigOptionBase, kw_only=True):
    """A boolean on/off toggle session configuration option payload.

    Variant of `SessionConfigOption` sent with ``type: "boolean"``.
    """

    type: Literal["boolean"] = "boolean"
    """Discriminator of `SessionConfigOption`: always ``"boolean"``."""

    current_value: bool
    """The current value of the boolean option."""

    config_id: SessionConfigId
    """Unique identifier for the configuration option."""

    name: str
    """Human-readable label for the option."""

    description: str | None | UnsetType = UNSET
    """Optional description for the Client to display to the user.

    Omitted and `null` are equivalent and mean no description is provided.
    """

    category: SessionConfigOptionCategory | None | UnsetType = UNSET
    """Optional semantic category for this option (UX only).

    Omitted and `null` are equivalent and mean no category is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownAvailableCommand(UnknownVariant, _AvailableCommandBase):
    """A `AvailableCommand` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "AvailableCommand"
    _key = "type"
    _known = frozenset({"command"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class UnknownAvailableCommandInput(UnknownVariant, _AvailableCommandInputBase):
    """A `AvailableCommandInput` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "AvailableCommandInput"
    _key = "type"
    _known = frozenset({"text"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class TextCommandInput(AcpStruct, _AvailableCommandInputBase, kw_only=True):
    """All text that was typed after the command name is provided as input.

    Variant of `AvailableCommandInput` sent with ``type: "text"``.
    """

    type: Literal["text"] = "text"
    """Discriminator of `AvailableCommandInput`: always ``"text"``."""

    hint: str
    """A hint to display when the input hasn't been provided yet"""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Command(AcpStruct, _AvailableCommandBase, kw_only=True):
    """A slash command the user can invoke by including it in a prompt.

    The `type` discriminator value is `command`.

    Variant of `AvailableCommand` sent with ``type: "command"``.
    """

    type: Literal["command"] = "command"
    """Discriminator of `AvailableCommand`: always ``"command"``."""

    name: str
    """Command name without the leading `/` (e.g., `create_plan`, `research_codebase`).

    MUST NOT contain whitespace and MUST be unique within the command list.
    """

    description: str
    """Human-readable description of what the command does."""

    input: AvailableCommandInput | None | UnsetType = UNSET
    """Input for the command if required

    Omitted and `null` are equivalent and mean the command takes no input.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ListSessionsResponse(AcpStruct, kw_only=True):
    """Response from listing sessions."""

    sessions: list[SessionInfo]
    """Array of session information objects."""

    next_cursor: SessionListCursor | None | UnsetType = UNSET
    """Opaque cursor token. If present, pass this in the next request's cursor parameter
    to fetch the next page. Omitted and `null` are equivalent and mean there are no more
    results. An empty string is a valid cursor, not the end of results.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionInfo(AcpStruct, kw_only=True):
    """Information about a session returned by session/list"""

    session_id: SessionId
    """Unique identifier for the session"""

    cwd: AbsolutePath
    """The working directory for this session. Must be an absolute path."""

    additional_directories: list[AbsolutePath] | None | UnsetType = UNSET
    """Additional workspace roots reported for this session. Each path must be absolute.

    When present, this is the complete ordered additional-root list reported
    by the Agent. Omitted and empty values are equivalent: the response
    reports no additional roots.
    """

    title: str | None | UnsetType = UNSET
    """Human-readable title for the session

    Omitted and `null` are equivalent and mean no title is provided.
    """

    updated_at: str | None | UnsetType = UNSET
    """RFC 3339 timestamp of last activity.

    Omitted and `null` are equivalent and mean the last activity time is not reported.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class DeleteSessionResponse(AcpStruct, kw_only=True):
    """Response from deleting a session."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ResumeSessionResponse(AcpStruct, kw_only=True):
    """Response from resuming an existing session.

    The agent MUST send a current `state_update` after any requested history
    replay and before this response, even without replay. The update reports
    foreground state after resuming. The response alone does not imply `idle`.

    See protocol docs: [Current-State Synchronization](https://agentclientprotocol.com/protocol/v2/session-setup#current-state-synchronization)
    """

    config_options: list[SessionConfigOption] | UnsetType = UNSET
    """Initial session configuration options.

    Optional. Omitted or empty means no config options are advertised.
    Senders MUST use an array, not `null`. Receivers treat `null` like omission.
    Later `config_option_update` notifications replace this list.
    """

    available_commands: list[AvailableCommand] | UnsetType = UNSET
    """Initial commands the agent can execute in this session.

    Optional. Omitted or empty means no initial commands are advertised.
    Senders MUST use an array, not `null`. Receivers treat `null` like omission.
    Later `available_commands_update` notifications replace this list.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CloseSessionResponse(AcpStruct, kw_only=True):
    """Response from closing a session."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CancelToolCallResponse(AcpStruct, kw_only=True):
    """Response from cancelling a tool call."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CancelTerminalResponse(AcpStruct, kw_only=True):
    """Response from cancelling a terminal."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SetSessionConfigOptionResponse(AcpStruct, kw_only=True):
    """Response to `session/set_config_option` method."""

    config_options: list[SessionConfigOption]
    """The full set of configuration options and their current values."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PromptResponse(AcpStruct, kw_only=True):
    """Response acknowledging that a user prompt was inserted into the ACP conversation.

    This response does not indicate that the prompt was merely received or held, nor that the
    agent has finished processing it.
    Processing and completion are reported through `state_update` session updates.

    Insertion is the logical addition of a user message with a message ID and a position
    relative to other messages in the ACP conversation.

    See protocol docs: [Prompt Accepted](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#2-prompt-accepted)
    """

    message_id: MessageId
    """Identifies the user message inserted into the ACP conversation.

    Required and non-null. Omission and explicit `null` are both invalid.

    The corresponding user-message session update carries this same identifier and may arrive
    before or after this response. Agents must echo the message during the live session, but are
    not required to retain it. If retained and replayed, the message keeps this identifier.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Error(AcpStruct, kw_only=True):
    """JSON-RPC error object.

    Represents an error that occurred during method execution, following the
    JSON-RPC 2.0 error object specification with optional additional data.

    See protocol docs: [JSON-RPC Error Object](https://www.jsonrpc.org/specification#error_object)
    """

    code: ErrorCode
    """A number indicating the error type that occurred.
    This must be an integer as defined in the JSON-RPC specification.
    """

    message: str
    """A string providing a short description of the error.
    The message should be limited to a concise single sentence.
    """

    data: ErrorData = UNSET
    """Optional primitive or structured value that contains additional information about the error.
    This may include debugging information or context-specific details.

    Omitted and `null` are equivalent and mean no additional data is provided. Some codes
    define a shape: [`UnsupportedProtocolVersionErrorData`] for `-32022`, and
    [`SessionNotFoundErrorData`] for `-32002` when a session is not found.
    """


class UnsupportedProtocolVersionErrorData(AcpStruct, kw_only=True):
    """Data for the `-32022` (Unsupported protocol version) error.

    See protocol docs: [Version Negotiation](https://agentclientprotocol.com/protocol/v2/initialization#version-negotiation)
    """

    requested: ProtocolVersion
    """The protocol version the Client requested."""

    supported: list[ProtocolVersion]
    """The protocol versions the Agent supports."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionNotFoundErrorData(AcpStruct, kw_only=True):
    """Data for the `-32002` (Resource not found) error when a session-scoped request names a
    session that does not exist or is not active.

    See protocol docs: [Unknown Sessions](https://agentclientprotocol.com/protocol/v2/error#unknown-sessions)
    """

    session_id: SessionId
    """The session ID from the request."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UpdateSessionNotification(AcpStruct, kw_only=True):
    """Notification containing a session update from the agent.

    Agents can send session updates at any point while the session exists.

    See protocol docs: [Agent Reports Output](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#3-agent-reports-output)
    """

    session_id: SessionId
    """The ID of the session this update pertains to."""

    update: SessionUpdate
    """The actual update content."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownSessionUpdate(UnknownVariant, _SessionUpdateBase):
    """A `SessionUpdate` whose ``sessionUpdate`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "SessionUpdate"
    _key = "sessionUpdate"
    _known = frozenset(
        {
            "user_message_chunk",
            "user_message",
            "agent_message_chunk",
            "agent_message",
            "agent_thought_chunk",
            "agent_thought",
            "state_update",
            "tool_call_content_chunk",
            "tool_call_update",
            "terminal_update",
            "terminal_output_chunk",
            "plan_update",
            "available_commands_update",
            "config_option_update",
            "session_info_update",
            "usage_update",
            "notice",
            "compaction_update",
            "compaction_summary_chunk",
        }
    )

    @property
    def session_update(self) -> str:
        """The unknown ``sessionUpdate`` value."""
        return self._tag("sessionUpdate")


class UserMessageChunk(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A streamed item of message content.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "user_message_chunk"``.
    """

    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    """Discriminator of `SessionUpdate`: always ``"user_message_chunk"``."""

    message_id: MessageId
    """A unique identifier for the message this chunk belongs to.

    All chunks belonging to the same message share the same `messageId`.
    Chunks for different messages can interleave.
    """

    content: ContentBlock
    """A single item of content"""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.
    This metadata is scoped to the chunk and does not patch stored metadata.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AgentMessageChunk(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A streamed item of message content.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "agent_message_chunk"``.
    """

    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    """Discriminator of `SessionUpdate`: always ``"agent_message_chunk"``."""

    message_id: MessageId
    """A unique identifier for the message this chunk belongs to.

    All chunks belonging to the same message share the same `messageId`.
    Chunks for different messages can interleave.
    """

    content: ContentBlock
    """A single item of content"""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.
    This metadata is scoped to the chunk and does not patch stored metadata.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AgentThoughtChunk(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A streamed item of message content.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "agent_thought_chunk"``.
    """

    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    """Discriminator of `SessionUpdate`: always ``"agent_thought_chunk"``."""

    message_id: MessageId
    """A unique identifier for the message this chunk belongs to.

    All chunks belonging to the same message share the same `messageId`.
    Chunks for different messages can interleave.
    """

    content: ContentBlock
    """A single item of content"""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.
    This metadata is scoped to the chunk and does not patch stored metadata.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ToolCallUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """Represents an upsert for a tool call that the language model has requested.

    Tool calls are actions that the agent executes on behalf of the language model,
    such as reading files, executing code, or fetching data from external sources.

    Only `toolCallId` is required. Other fields have patch semantics:
    omitted fields leave the existing tool call value unchanged, `null` clears or
    unsets the value, and concrete values replace the previous value. For
    collection fields, concrete arrays replace the previous collection, and both
    `null` and `[]` clear the collection. A concrete `_meta` object instead
    patches the stored metadata by top-level key. When a client receives a tool
    call ID it has not seen before, omitted fields start at their protocol defaults.

    See protocol docs: [Tool Calls](https://agentclientprotocol.com/protocol/v2/tool-calls)

    Variant of `SessionUpdate` sent with ``sessionUpdate: "tool_call_update"``.
    """

    session_update: Literal["tool_call_update"] = "tool_call_update"
    """Discriminator of `SessionUpdate`: always ``"tool_call_update"``."""

    tool_call_id: ToolCallId
    """Unique identifier for this tool call within the session."""

    name: str | None | UnsetType = UNSET
    """Programmatic name of the tool being invoked.

    This field is optional and has patch semantics. Omission means no
    change, `null` clears the name, and a string replaces it. For a tool
    call ID the client has not seen before, omission or `null` means that no
    tool name is available.
    """

    title: str | None | UnsetType = UNSET
    """Human-readable title describing what the tool is doing.

    Omission leaves the title unchanged, `null` unsets it, and a string replaces it.
    A new tool call starts without a title.
    """

    kind: ToolKind | None | UnsetType = UNSET
    """The category of tool being invoked.
    Helps clients choose appropriate icons and UI treatment.

    Omission leaves the kind unchanged, `null` resets it to `other`, and a value replaces it.
    A new tool call starts as `other`.
    """

    status: ToolCallStatus | None | UnsetType = UNSET
    """Current execution status of the tool call.

    Omission leaves the status unchanged, `null` resets it to `pending`, and a value
    replaces it. A new tool call starts as `pending`.
    """

    content: list[ToolCallContent] | None | UnsetType = UNSET
    """Content produced by the tool call."""

    locations: list[ToolCallLocation] | None | UnsetType = UNSET
    """File locations affected by this tool call.
    Enables "follow-along" features in clients.
    """

    raw_input: object = UNSET
    """Raw input parameters sent to the tool."""

    raw_output: object = UNSET
    """Raw output returned by the tool."""

    capabilities: ToolCallCapabilities | None | UnsetType = UNSET
    """Client-initiated controls this tool call currently supports, such as cancellation.

    Omission leaves the capabilities unchanged, `null` clears them, and an object replaces
    the whole previous value. A new tool call starts with none.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class UserMessage(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A user message upsert.

    Only `messageId` is required. `content` has patch semantics:
    an omitted field leaves existing message content unchanged, `null` clears the
    value, and a concrete array replaces the previous value. For a new
    `messageId`, omitted `content` starts empty. `content` is replaced as a
    whole array. Send `[]` or `null` to clear it.

    Message updates and chunks are applied in the order they are received. When
    a `user_message` update includes `content`, that array replaces any content
    previously accumulated for the message, including content from earlier
    chunks. Later chunks with the same `messageId` append to the current
    content.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "user_message"``.
    """

    session_update: Literal["user_message"] = "user_message"
    """Discriminator of `SessionUpdate`: always ``"user_message"``."""

    message_id: MessageId
    """A unique identifier for the message."""

    content: list[ContentBlock] | None | UnsetType = UNSET
    """Complete replacement content for this message."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class AgentMessage(AcpStruct, _SessionUpdateBase, kw_only=True):
    """An agent message upsert.

    Only `messageId` is required. `content` has patch semantics:
    an omitted field leaves existing message content unchanged, `null` clears the
    value, and a concrete array replaces the previous value. For a new
    `messageId`, omitted `content` starts empty. `content` is replaced as a
    whole array. Send `[]` or `null` to clear it.

    Message updates and chunks are applied in the order they are received. When
    an `agent_message` update includes `content`, that array replaces any
    content previously accumulated for the message, including content from
    earlier chunks. Later chunks with the same `messageId` append to the current
    content.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "agent_message"``.
    """

    session_update: Literal["agent_message"] = "agent_message"
    """Discriminator of `SessionUpdate`: always ``"agent_message"``."""

    message_id: MessageId
    """A unique identifier for the message."""

    content: list[ContentBlock] | None | UnsetType = UNSET
    """Complete replacement content for this message."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class AgentThought(AcpStruct, _SessionUpdateBase, kw_only=True):
    """An agent thought or reasoning message upsert.

    Only `messageId` is required. `content` has patch semantics:
    an omitted field leaves existing thought content unchanged, `null` clears the
    value, and a concrete array replaces the previous value. For a new
    `messageId`, omitted `content` starts empty. `content` is replaced as a
    whole array. Send `[]` or `null` to clear it.

    Message updates and chunks are applied in the order they are received. When
    an `agent_thought` update includes `content`, that array replaces any
    content previously accumulated for the thought, including content from
    earlier chunks. Later chunks with the same `messageId` append to the current
    content.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "agent_thought"``.
    """

    session_update: Literal["agent_thought"] = "agent_thought"
    """Discriminator of `SessionUpdate`: always ``"agent_thought"``."""

    message_id: MessageId
    """A unique identifier for the thought message."""

    content: list[ContentBlock] | None | UnsetType = UNSET
    """Complete replacement content for this thought message."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class UnknownBackgroundWork(UnknownVariant, _BackgroundWorkBase):
    """A `BackgroundWork` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "BackgroundWork"
    _key = "type"
    _known = frozenset({"terminal", "tool_call"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class BackgroundTerminal(AcpStruct, _BackgroundWorkBase, kw_only=True):
    """A listed terminal running in the background.

    Variant of `BackgroundWork` sent with ``type: "terminal"``.
    """

    type: Literal["terminal"] = "terminal"
    """Discriminator of `BackgroundWork`: always ``"terminal"``."""

    terminal_id: TerminalId
    """The ID of the listed terminal."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class BackgroundToolCall(AcpStruct, _BackgroundWorkBase, kw_only=True):
    """A listed tool call whose work continues in the background.

    Variant of `BackgroundWork` sent with ``type: "tool_call"``.
    """

    type: Literal["tool_call"] = "tool_call"
    """Discriminator of `BackgroundWork`: always ``"tool_call"``."""

    tool_call_id: ToolCallId
    """The ID of the listed tool call."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class RunningStateUpdate(AcpStruct, _StateUpdateBase, kw_only=True):
    """Foreground work is in progress.

    Variant of `StateUpdate` sent with ``sessionUpdate: "state_update"`` and ``state: "running"``.
    """

    session_update: Literal["state_update"] = "state_update"
    """Discriminator of the enclosing union: always ``"state_update"``."""

    state: Literal["running"] = "running"
    """Discriminator of `StateUpdate`: always ``"running"``."""

    background: list[BackgroundWork] | None | UnsetType = UNSET
    """Work running independently of foreground work, as a complete snapshot.

    Optional. Omitted and `null` are equivalent and mean the Agent is not reporting
    background work, not that nothing is running. `[]` means no background work is
    running. An Agent that reports background work MUST include it on every state
    update for the session. A malformed list is treated as not reported.

    See protocol docs: [Background Work](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#background-work)
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class IdleStateUpdate(AcpStruct, _StateUpdateBase, kw_only=True):
    """No foreground work is active. Background activity may continue.

    Agents SHOULD include a `stopReason` when the idle transition ends foreground
    work. An idle update that does not end foreground work need not include one.
    Receivers treat an omitted, `null`, or malformed `stopReason` as the agent not
    reporting one.
    Repeated or resume snapshots may carry the last stop reason for context.
    They MUST NOT be counted as new completions, cancellations, or additional usage.

    Variant of `StateUpdate` sent with ``sessionUpdate: "state_update"`` and ``state: "idle"``.
    """

    session_update: Literal["state_update"] = "state_update"
    """Discriminator of the enclosing union: always ``"state_update"``."""

    state: Literal["idle"] = "idle"
    """Discriminator of `StateUpdate`: always ``"idle"``."""

    background: list[BackgroundWork] | None | UnsetType = UNSET
    """Work running independently of foreground work, as a complete snapshot.

    Optional. Omitted and `null` are equivalent and mean the Agent is not reporting
    background work, not that nothing is running. `[]` means no background work is
    running. An Agent that reports background work MUST include it on every state
    update for the session. A malformed list is treated as not reported.

    See protocol docs: [Background Work](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#background-work)
    """

    stop_reason: StopReason | None | UnsetType = UNSET
    """Why foreground work stopped. The value selects one of this type's variants, which may add fields of their own.

    Optional. Omitted and `null` are equivalent and mean the agent is not reporting a stop reason; a malformed value is treated the same way.

    See protocol docs: [Stop Reasons](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#stop-reasons)
    """

    error: Error | None | UnsetType = UNSET
    """The failure, as a JSON-RPC error object.

    Optional. Omitted and `null` are equivalent and mean the agent is not reporting failure details.
    Agents SHOULD include it.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class RequiresActionStateUpdate(AcpStruct, _StateUpdateBase, kw_only=True):
    """The foreground workflow as a whole is blocked on user action.

    Agents SHOULD report this state when foreground work cannot progress without
    user action. Pending permissions or elicitations alone do not imply this
    state if other foreground work can progress, or if the requests belong only
    to independent background activity. Once reported, agents MUST report
    `running` when progress resumes, or `idle` if the work ends without resuming.
    Responding to one request does not itself imply `running`.

    Variant of `StateUpdate` sent with ``sessionUpdate: "state_update"`` and ``state: "requires_action"``.
    """

    session_update: Literal["state_update"] = "state_update"
    """Discriminator of the enclosing union: always ``"state_update"``."""

    state: Literal["requires_action"] = "requires_action"
    """Discriminator of `StateUpdate`: always ``"requires_action"``."""

    background: list[BackgroundWork] | None | UnsetType = UNSET
    """Work running independently of foreground work, as a complete snapshot.

    Optional. Omitted and `null` are equivalent and mean the Agent is not reporting
    background work, not that nothing is running. `[]` means no background work is
    running. An Agent that reports background work MUST include it on every state
    update for the session. A malformed list is treated as not reported.

    See protocol docs: [Background Work](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#background-work)
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownStateUpdate(UnknownVariant, _StateUpdateBase):
    """A `StateUpdate` whose ``state`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "StateUpdate"
    _key = "state"
    _known = frozenset({"running", "idle", "requires_action"})
    _fixed = (("sessionUpdate", "state_update"),)

    @property
    def session_update(self) -> Literal["state_update"]:
        """The ``sessionUpdate`` discriminator, always ``"state_update"``."""
        return "state_update"

    @property
    def state(self) -> str:
        """The unknown ``state`` value."""
        return self._tag("state")


class ToolCallContentChunk(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A streamed item of tool-call content.

    Tool-call content chunks append one `ToolCallContent` item to the current
    content for the matching `toolCallId`. Agents can send a `tool_call_update`
    with `content` when they need to replace the whole content collection
    instead.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "tool_call_content_chunk"``.
    """

    session_update: Literal["tool_call_content_chunk"] = "tool_call_content_chunk"
    """Discriminator of `SessionUpdate`: always ``"tool_call_content_chunk"``."""

    tool_call_id: ToolCallId
    """The ID of the tool call this content belongs to."""

    content: ToolCallContent
    """A single item of content produced by the tool call."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.
    This metadata is scoped to the chunk and does not patch stored metadata.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalOutput(AcpStruct, kw_only=True):
    """An authoritative replacement snapshot of terminal output bytes."""

    data: str
    """Base64-encoded replacement terminal output bytes."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalExitStatus(AcpStruct, kw_only=True):
    """Exit information for an agent-owned terminal.

    The presence of this object marks the terminal as exited, even when neither
    an exit code nor a signal is known.
    """

    exit_code: int | None | UnsetType = UNSET
    """Process exit code as the platform reports it, when known. Negative values are
    allowed, for example signed Windows exit codes. Omitted and `null` are equivalent.
    """

    signal: str | None | UnsetType = UNSET
    """Signal that terminated the process, when known.

    Agents should use the conventional platform signal name. POSIX examples
    include `SIGTERM`, `SIGKILL`, and `SIGINT`. Other platforms may use a
    platform-specific name. Omitted and `null` are equivalent.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalSize(AcpStruct, kw_only=True):
    """The size of an agent-owned terminal in character cells."""

    cols: int
    """Number of columns."""

    rows: int
    """Number of rows."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalCapabilities(AcpStruct, kw_only=True):
    """Client-initiated controls a terminal currently supports.

    A malformed value falls back to no controls, so the Client never sends a request the
    Agent did not advertise.

    See protocol docs: [Cancelling Terminals](https://agentclientprotocol.com/protocol/v2/tool-calls#cancelling-terminals)
    """

    cancel: TerminalCancelCapabilities | None | UnsetType = UNSET
    """Permits the Client to cancel this terminal with `terminal/cancel`.

    Omitted and `null` are equivalent and mean unsupported. An object (including `{}`)
    means supported. Agents SHOULD stop advertising it once the terminal reports `exitStatus`.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalCancelCapabilities(AcpStruct, kw_only=True):
    """Capability to cancel a terminal with `terminal/cancel`.

    Supplying `{}` advertises support. An omitted or `null` `cancel` does not.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """An upsert for the stored state of an agent-owned terminal.

    Only `terminalId` is required. Other fields have patch
    semantics: omitted fields leave the stored value unchanged, `null` clears
    it, and concrete values replace it. A concrete `_meta` object instead
    patches the stored metadata by top-level key. When the terminal ID is new,
    omitted fields start unknown.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "terminal_update"``.
    """

    session_update: Literal["terminal_update"] = "terminal_update"
    """Discriminator of `SessionUpdate`: always ``"terminal_update"``."""

    terminal_id: TerminalId
    """Unique identifier for this terminal within the session."""

    command: str | None | UnsetType = UNSET
    """The command being run."""

    cwd: AbsolutePath | None | UnsetType = UNSET
    """The absolute working directory of the command."""

    output: TerminalOutput | None | UnsetType = UNSET
    """An authoritative replacement snapshot of terminal output bytes."""

    exit_status: TerminalExitStatus | None | UnsetType = UNSET
    """Exit information. A concrete object marks the terminal as exited."""

    size: TerminalSize | None | UnsetType = UNSET
    """The terminal size the command runs with, when known.

    Clients can render output at this size so that column layouts, progress bars,
    and cursor-positioned output display as the program wrote them.
    """

    capabilities: TerminalCapabilities | None | UnsetType = UNSET
    """Client-initiated controls this terminal currently supports, such as cancellation.

    Omission leaves the capabilities unchanged, `null` clears them, and an object replaces
    the whole previous value. A new terminal starts with none.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class TerminalOutputChunk(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A chunk of bytes appended to an agent-owned terminal's output.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "terminal_output_chunk"``.
    """

    session_update: Literal["terminal_output_chunk"] = "terminal_output_chunk"
    """Discriminator of `SessionUpdate`: always ``"terminal_output_chunk"``."""

    terminal_id: TerminalId
    """The terminal receiving these bytes."""

    data: str
    """Independently base64-encoded terminal output bytes."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.
    This metadata is scoped to the chunk and does not patch stored metadata.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownPlanUpdateContent(UnknownVariant, _PlanUpdateContentBase):
    """A `PlanUpdateContent` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "PlanUpdateContent"
    _key = "type"
    _known = frozenset({"items"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class PlanEntry(AcpStruct, kw_only=True):
    """A single entry in the execution plan.

    Represents a task or goal that the assistant intends to accomplish
    as part of fulfilling the user's request.
    See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v2/agent-plan#plan-entries)
    """

    content: str
    """Human-readable description of what this task aims to accomplish."""

    priority: PlanEntryPriority
    """The relative importance of this task.
    Used to indicate which tasks are most critical to the overall goal.
    """

    status: PlanEntryStatus
    """Current execution status of this task."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PlanItems(AcpStruct, _PlanUpdateContentBase, kw_only=True):
    """A plan represented as structured entries.

    Variant of `PlanUpdateContent` sent with ``type: "items"``.
    """

    type: Literal["items"] = "items"
    """Discriminator of `PlanUpdateContent`: always ``"items"``."""

    plan_id: PlanId
    """The plan ID to update."""

    entries: list[PlanEntry]
    """The list of tasks to be accomplished.

    When updating an item-based plan, the agent must send a complete list of all entries
    with their current status. The client replaces that plan with each update.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PlanUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A content update for a plan identified by ID.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "plan_update"``.
    """

    session_update: Literal["plan_update"] = "plan_update"
    """Discriminator of `SessionUpdate`: always ``"plan_update"``."""

    plan: PlanUpdateContent
    """The updated plan content."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class AvailableCommandsUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """Available commands are ready or have changed

    Variant of `SessionUpdate` sent with ``sessionUpdate: "available_commands_update"``.
    """

    session_update: Literal["available_commands_update"] = "available_commands_update"
    """Discriminator of `SessionUpdate`: always ``"available_commands_update"``."""

    available_commands: list[AvailableCommand]
    """Commands the agent can execute."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ConfigOptionUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """Session configuration options have been updated.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "config_option_update"``.
    """

    session_update: Literal["config_option_update"] = "config_option_update"
    """Discriminator of `SessionUpdate`: always ``"config_option_update"``."""

    config_options: list[SessionConfigOption]
    """The full set of configuration options and their current values."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SessionInfoUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """Update to session metadata. All fields are optional to support partial updates.

    Agents send this notification to update session information like title or custom metadata.
    Clients can use it to keep session titles and state current.

    Omitted fields leave the existing session info unchanged. `null` clears the
    corresponding value. A concrete `_meta` object patches the stored metadata by
    top-level key.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "session_info_update"``.
    """

    session_update: Literal["session_info_update"] = "session_info_update"
    """Discriminator of `SessionUpdate`: always ``"session_info_update"``."""

    title: str | None | UnsetType = UNSET
    """Human-readable title for the session. Set to null to clear."""

    updated_at: str | None | UnsetType = UNSET
    """RFC 3339 timestamp of last activity. Set to null to clear."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class Cost(AcpStruct, kw_only=True):
    """Cost information for a session."""

    amount: float
    """Total cumulative cost for session."""

    currency: str
    """Unit of `amount`: an ISO 4217 currency code (e.g., "USD", "EUR") for money, or another
    unit such as "credits".
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UsageUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """Context window and cost update for a session.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "usage_update"``.
    """

    session_update: Literal["usage_update"] = "usage_update"
    """Discriminator of `SessionUpdate`: always ``"usage_update"``."""

    used: int
    """Tokens currently in context."""

    size: int
    """Total context window size in tokens."""

    cost: Cost | None | UnsetType = UNSET
    """Cumulative session cost.

    Omitted leaves the last reported cost unchanged. `null` clears it. A value replaces it.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class Notice(AcpStruct, _SessionUpdateBase, kw_only=True):
    """Fire-and-forget information for the user.

    Notices are live events rather than session history. Agents must not rely on
    a notice being received, displayed, or seen by the user.
    No Client capability is required, and unsupported Clients may ignore notices.

    See protocol docs: [Session Notices](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#session-notices)

    Variant of `SessionUpdate` sent with ``sessionUpdate: "notice"``.
    """

    session_update: Literal["notice"] = "notice"
    """Discriminator of `SessionUpdate`: always ``"notice"``."""

    severity: NoticeSeverity
    """Presentation severity hint."""

    title: str
    """Required non-empty plain-text title that can stand alone."""

    description: str | None | UnsetType = UNSET
    """Optional plain-text detail or guidance.

    Omitted and `null` are equivalent and mean no description was supplied.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CompactionUpdate(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A context compaction upsert. The first notification fixes the compaction's
    timeline position. Later updates with the same ID patch that entity in place.

    `summary`, `error`, and `_meta` have patch semantics: omission leaves the
    stored value unchanged, `null` clears it, and a concrete value replaces it.
    `summary: []` also clears the summary. A concrete `_meta` object patches the
    stored metadata by top-level key instead of replacing it.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "compaction_update"``.
    """

    session_update: Literal["compaction_update"] = "compaction_update"
    """Discriminator of `SessionUpdate`: always ``"compaction_update"``."""

    compaction_id: CompactionId
    """The Agent-owned ID of this compaction, unique within the session."""

    status: CompactionStatus
    """Current lifecycle status."""

    summary: list[ContentBlock] | None | UnsetType = UNSET
    """Complete replacement user-displayable summary content for the compaction."""

    error: str | None | UnsetType = UNSET
    """Human-readable error details for the compaction."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted leaves the stored metadata unchanged. `null`
    clears it. An object patches the stored metadata by top-level key: keys it omits are
    unchanged, a key set to `null` is removed, and any other value replaces that key's
    stored value without merging nested objects. Beyond this patch rule, implementations
    MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Metadata Patches](https://agentclientprotocol.com/protocol/v2/extensibility#metadata-patches)
    """


class CompactionSummaryChunk(AcpStruct, _SessionUpdateBase, kw_only=True):
    """A content block appended to a compaction's summary. A first-seen ID creates
    an in-progress compaction. Chunks append in receive order.

    Variant of `SessionUpdate` sent with ``sessionUpdate: "compaction_summary_chunk"``.
    """

    session_update: Literal["compaction_summary_chunk"] = "compaction_summary_chunk"
    """Discriminator of `SessionUpdate`: always ``"compaction_summary_chunk"``."""

    compaction_id: CompactionId
    """ID of the compaction whose summary receives this content."""

    content: ContentBlock
    """One content block to append."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.
    This metadata is scoped to the chunk and does not patch stored metadata.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CompleteElicitationNotification(AcpStruct, kw_only=True):
    """Notification sent by the agent when a URL-based elicitation is complete.

    This notification is not a foreground state update.
    """

    elicitation_id: ElicitationId
    """The ID of the elicitation that completed."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class InitializeRequest(AcpStruct, kw_only=True):
    """Request parameters for the initialize method.

    Sent by the client to establish connection and negotiate capabilities.

    See protocol docs: [Initialization](https://agentclientprotocol.com/protocol/v2/initialization)
    """

    protocol_version: ProtocolVersion
    """The latest protocol version supported by the client."""

    info: Implementation
    """Information about the implementation sending this initialize request."""

    capabilities: ClientCapabilities | UnsetType = UNSET
    """Capabilities supported by the client."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ClientCapabilities(AcpStruct, kw_only=True):
    """Capabilities supported by the client.

    Advertised during initialization to inform the agent about
    available features and methods.

    See protocol docs: [Client Capabilities](https://agentclientprotocol.com/protocol/v2/initialization#client-capabilities)
    """

    auth: ClientAuthCapabilities | None | UnsetType = UNSET
    """Authentication capabilities supported by the client.
    Determines which authentication method types the agent may include
    in its `InitializeResponse`.

    Optional. Omitted and `null` are equivalent and mean the client does not advertise any
    authentication-method extensions.
    """

    elicitation: ElicitationCapabilities | None | UnsetType = UNSET
    """Elicitation capabilities supported by the client.
    Determines which elicitation modes the agent may use.

    Optional. Omitted and `null` are equivalent and mean the client does not advertise
    elicitation support.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ClientAuthCapabilities(AcpStruct, kw_only=True):
    """Authentication capabilities supported by the client.

    Advertised during initialization to inform the agent which authentication
    method types the client can handle. This governs opt-in types that require
    additional client-side support.
    """

    terminal: TerminalAuthCapabilities | None | UnsetType = UNSET
    """Whether the client supports `terminal` authentication methods.

    Optional. Omitted and `null` are equivalent and mean the client does not advertise support.
    The client should supply `{}` only when it can reproduce the configured
    agent invocation in an interactive terminal. Supplying `{}` means the
    agent may include `terminal` entries in its authentication methods.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class TerminalAuthCapabilities(AcpStruct, kw_only=True):
    """Capabilities for terminal authentication methods.

    Supplying `{}` means the client can reproduce the configured agent
    invocation in an interactive terminal and supports terminal authentication
    methods.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationCapabilities(AcpStruct, kw_only=True):
    """Elicitation capabilities supported by the client."""

    form: ElicitationFormCapabilities | None | UnsetType = UNSET
    """Whether the client supports form-based elicitation.

    Optional. Omitted and `null` are equivalent and mean form support is not advertised.
    Supplying `{}` explicitly advertises form support.
    """

    url: ElicitationUrlCapabilities | None | UnsetType = UNSET
    """Whether the client supports URL-based elicitation.

    Optional. Omitted and `null` are equivalent and mean the client does not advertise support.
    Supplying `{}` means the client supports URL-based elicitation.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationFormCapabilities(AcpStruct, kw_only=True):
    """Form-based elicitation capabilities.

    Supplying `{}` means the client supports form-based elicitation.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationUrlCapabilities(AcpStruct, kw_only=True):
    """URL-based elicitation capabilities.

    Supplying `{}` means the client supports URL-based elicitation.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class LoginAuthRequest(AcpStruct, kw_only=True):
    """Request parameters for the `auth/login` method.

    Specifies which authentication method to use.

    Agents MUST support this method when their `initialize` response included
    a non-empty `authMethods` list. Clients MUST NOT call this method
    when `authMethods` was omitted or empty.
    """

    method_id: AuthMethodId
    """The ID of the authentication method to use.
    Must be one of the methods advertised in the initialize response.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class LogoutAuthRequest(AcpStruct, kw_only=True):
    """Request parameters for the `auth/logout` method.

    Terminates the current authenticated session.

    Agents MUST support this method when their `initialize` response included
    a non-empty `authMethods` list. Clients MUST NOT call this method
    when `authMethods` was omitted or empty.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class NewSessionRequest(AcpStruct, kw_only=True):
    """Request parameters for creating a new session.

    See protocol docs: [Creating a Session](https://agentclientprotocol.com/protocol/v2/session-setup#creating-a-session)
    """

    cwd: AbsolutePath
    """The working directory for this session. Must be an absolute path."""

    additional_directories: list[AbsolutePath] | None | UnsetType = UNSET
    """Additional workspace roots for this session. Each path must be absolute.

    These expand the session's workspace scope without changing `cwd`, which
    remains the base for relative paths. When omitted or empty, no
    additional roots are activated for the new session.
    """

    mcp_servers: list[McpServer] | None | UnsetType = UNSET
    """List of MCP (Model Context Protocol) servers the agent should connect to."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownMcpServer(UnknownVariant, _McpServerBase):
    """A `McpServer` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "McpServer"
    _key = "type"
    _known = frozenset({"http", "stdio"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class HttpHeader(AcpStruct, kw_only=True):
    """An HTTP header to set when making requests to the MCP server."""

    name: str
    """The name of the HTTP header."""

    value: str
    """The value to set for the HTTP header."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class McpServerHttp(AcpStruct, _McpServerBase, kw_only=True):
    """HTTP transport configuration for MCP.

    Variant of `McpServer` sent with ``type: "http"``.
    """

    type: Literal["http"] = "http"
    """Discriminator of `McpServer`: always ``"http"``."""

    name: str
    """Human-readable name identifying this MCP server."""

    url: str
    """URL to the MCP server."""

    headers: list[HttpHeader] | None | UnsetType = UNSET
    """HTTP headers to set when making requests to the MCP server. Headers the MCP transport
    defines are owned by the transport, and Agents use the transport's values for them.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class McpServerStdio(AcpStruct, _McpServerBase, kw_only=True):
    """Stdio transport configuration for MCP.

    Variant of `McpServer` sent with ``type: "stdio"``.
    """

    type: Literal["stdio"] = "stdio"
    """Discriminator of `McpServer`: always ``"stdio"``."""

    name: str
    """Human-readable name identifying this MCP server."""

    command: AbsolutePath
    """Absolute path to the MCP server executable."""

    args: list[str] | None | UnsetType = UNSET
    """Command-line arguments to pass to the MCP server."""

    env: list[EnvVariable] | None | UnsetType = UNSET
    """Environment variables to set when launching the MCP server. Names SHOULD be unique.
    Agents MAY reject duplicates with `-32602`, and otherwise the last entry wins.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ListSessionsRequest(AcpStruct, kw_only=True):
    """Request parameters for listing existing sessions."""

    cwd: AbsolutePath | None | UnsetType = UNSET
    """Filter sessions by working directory. Must be an absolute path.

    Only sessions whose `cwd` is this same directory match. Subdirectories and
    `additionalDirectories` don't. Agents MAY normalize paths when comparing.

    Omitted and `null` are equivalent and mean sessions are not filtered by working directory.
    """

    cursor: SessionListCursor | None | UnsetType = UNSET
    """Opaque cursor token from a previous response's nextCursor field for cursor-based pagination

    Omitted and `null` are equivalent and mean the first page is requested.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class DeleteSessionRequest(AcpStruct, kw_only=True):
    """Request parameters for deleting an existing session from `session/list`.

    Only available if the Agent supports the `session.delete` capability.
    """

    session_id: SessionId
    """The ID of the session to delete."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ResumeSessionRequest(AcpStruct, kw_only=True):
    """Request parameters for resuming an existing session.

    Resumes an existing session and optionally replays retained conversation
    history according to `replayFrom`.
    """

    session_id: SessionId
    """The ID of the session to resume."""

    cwd: AbsolutePath
    """The working directory for this session. Must be an absolute path.

    Clients MUST send the session's working directory. Agents MAY reject a different directory
    with `-32602`, and MAY normalize paths when comparing.
    """

    additional_directories: list[AbsolutePath] | None | UnsetType = UNSET
    """Additional workspace roots to activate for this session. Each path must be absolute.

    When omitted or empty, no additional roots are activated. When non-empty,
    this is the complete resulting additional-root list for the resumed
    session. It may differ from any previously used or reported list as long as
    the request `cwd` matches the session's `cwd`.
    """

    mcp_servers: list[McpServer] | None | UnsetType = UNSET
    """List of MCP servers to connect to for this session.

    The complete set of Client-provided servers. Omitted and `[]` mean none. Agents SHOULD
    NOT restore servers from earlier requests.
    """

    replay_from: ReplayFrom | None | UnsetType = UNSET
    """Inclusive cursor describing where conversation replay should begin.

    Optional. Omitted and `null` are equivalent and mean the Agent should resume without
    replaying previous conversation history. Replay cursors are inclusive:
    replay includes the position identified by the cursor. Supplying
    `{ "type": "start" }` means the Agent should replay all retained
    conversation history before responding.

    Agents MUST reject unsupported cursor types or malformed cursor values
    with `-32602` (Invalid params), rather than substituting another cursor
    or resuming without replay.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownReplayFrom(UnknownVariant, _ReplayFromBase):
    """A `ReplayFrom` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "ReplayFrom"
    _key = "type"
    _known = frozenset({"start"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class ReplayFromStart(AcpStruct, _ReplayFromBase, kw_only=True):
    """Inclusive replay cursor requesting replay from the start of retained conversation history.

    Variant of `ReplayFrom` sent with ``type: "start"``.
    """

    type: Literal["start"] = "start"
    """Discriminator of `ReplayFrom`: always ``"start"``."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CloseSessionRequest(AcpStruct, kw_only=True):
    """Request parameters for closing an active session.

    The Agent MUST cancel any ongoing work related to the session as if `session/cancel`
    was called, then free the resources associated with the session. Unlike `session/cancel`,
    closing also stops the session's background work. After the close response, the Agent
    sends no other messages for the session on that connection.

    Closing a session that does not exist or is not active SHOULD succeed, and Clients SHOULD
    treat a `-32002` response as a successful close.

    When closing cancels active foreground work, the Agent MUST send the final
    updates for that work and the idle `state_update` with `stopReason: "cancelled"`
    before responding successfully to `session/close`. Closing an idle session
    does not itself require another idle update.

    Closing also cancels pending `session/prompt` requests whose messages have not
    been inserted, including held prompts. If closing prevents a prompt's user message from being inserted, the
    Agent MUST answer that request with `-32800` (Request Cancelled). If the message
    has already been inserted, the Agent MUST respond successfully with its
    `messageId`. Prompt responses need not precede the close response.
    """

    session_id: SessionId
    """The ID of the session to close."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CancelToolCallRequest(AcpStruct, kw_only=True):
    """Request parameters for cancelling one tool call.

    Clients MUST NOT send it unless the tool call currently advertises `capabilities.cancel`.

    The Agent responds once it has accepted the cancellation. The response does not mean
    the work has stopped. The Agent confirms it with a `tool_call_update` to a final
    status: normally `cancelled`, or `completed` or `failed` if the work finished first.

    The Agent responds with `-32602` if the tool call is unknown, already final, or not
    cancellable. Cancelling a tool call does not change the foreground state by itself.

    See protocol docs: [Cancelling Tool Calls](https://agentclientprotocol.com/protocol/v2/tool-calls#cancelling-tool-calls)
    """

    session_id: SessionId
    """The ID of the session that owns the tool call."""

    tool_call_id: ToolCallId
    """The ID of the tool call to cancel."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CancelTerminalRequest(AcpStruct, kw_only=True):
    """Request parameters for cancelling one terminal.

    Clients MUST NOT send it unless the terminal currently advertises `capabilities.cancel`.

    The Agent responds once it has accepted the cancellation. The response does not mean
    the work has stopped. The Agent confirms it with a `terminal_update` that sets
    `exitStatus`. Cancelling stops the process but does not release the terminal, and does
    not change the status of a tool call that references it.

    The Agent responds with `-32602` if the terminal is unknown, has already exited, or is not
    cancellable. Cancelling a terminal does not change the foreground state by itself.

    See protocol docs: [Cancelling Terminals](https://agentclientprotocol.com/protocol/v2/tool-calls#cancelling-terminals)
    """

    session_id: SessionId
    """The ID of the session that owns the terminal."""

    terminal_id: TerminalId
    """The ID of the terminal to cancel."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownSetSessionConfigOptionRequest(UnknownVariant, _SetSessionConfigOptionRequestBase):
    """A `SetSessionConfigOptionRequest` whose ``type`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "SetSessionConfigOptionRequest"
    _key = "type"
    _known = frozenset({"id", "boolean"})

    @property
    def type(self) -> str:
        """The unknown ``type`` value."""
        return self._tag("type")


class SetSessionConfigOptionIdRequest(AcpStruct, _SetSessionConfigOptionRequestBase, kw_only=True):
    """Request parameters for setting a session configuration option.

    Agents MUST support this method for any session where they advertise config options.
    Agents MUST reject an unknown `configId` or invalid value with `-32602` and leave the
    configuration unchanged.

    See protocol docs: [Session Config Options](https://agentclientprotocol.com/protocol/v2/session-config-options#setting-a-config-option)

    Variant of `SetSessionConfigOptionRequest` sent with ``type: "id"``.
    """

    type: Literal["id"] = "id"
    """Discriminator of `SetSessionConfigOptionRequest`: always ``"id"``."""

    value: SessionConfigValueId
    """The value ID."""

    session_id: SessionId
    """The ID of the session to set the configuration option for."""

    config_id: SessionConfigId
    """The ID of the configuration option to set."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SetSessionConfigOptionBooleanRequest(
    AcpStruct, _SetSessionConfigOptionRequestBase, kw_only=True
):
    """Request parameters for setting a session configuration option.

    Agents MUST support this method for any session where they advertise config options.
    Agents MUST reject an unknown `configId` or invalid value with `-32602` and leave the
    configuration unchanged.

    See protocol docs: [Session Config Options](https://agentclientprotocol.com/protocol/v2/session-config-options#setting-a-config-option)

    Variant of `SetSessionConfigOptionRequest` sent with ``type: "boolean"``.
    """

    type: Literal["boolean"] = "boolean"
    """Discriminator of `SetSessionConfigOptionRequest`: always ``"boolean"``."""

    value: bool
    """The boolean value."""

    session_id: SessionId
    """The ID of the session to set the configuration option for."""

    config_id: SessionConfigId
    """The ID of the configuration option to set."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class PromptRequest(AcpStruct, kw_only=True):
    """Request parameters for sending a user prompt to the agent.

    Contains the user's message and any additional context.

    See protocol docs: [User Message](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#1-user-message)
    """

    session_id: SessionId
    """The ID of the session to send this user message to"""

    prompt: list[ContentBlock]
    """The blocks of content that compose the user's message.

    As a baseline, the Agent MUST support `text` and `resource_link` content blocks,
    while other variants are optionally enabled via `PromptCapabilities`.

    The Client MUST adapt its interface according to `PromptCapabilities`.

    The client MAY include referenced pieces of context as either
    `resource` or `resource_link` content blocks.

    When available, `resource` is preferred
    as it avoids extra round-trips and allows the message to include
    pieces of context from sources the agent may not have access to.

    Clients MUST NOT send an empty array. Agents MAY reject one with `-32602` without
    inserting it.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class RequestPermissionResponse(AcpStruct, kw_only=True):
    """Response to a permission request."""

    outcome: RequestPermissionOutcome
    """The user's decision on the permission request."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownRequestPermissionOutcome(UnknownVariant, _RequestPermissionOutcomeBase):
    """A `RequestPermissionOutcome` whose ``outcome`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "RequestPermissionOutcome"
    _key = "outcome"
    _known = frozenset({"cancelled", "selected"})

    @property
    def outcome(self) -> str:
        """The unknown ``outcome`` value."""
        return self._tag("outcome")


class CancelledPermissionOutcome(AcpStruct, _RequestPermissionOutcomeBase, kw_only=True):
    """The request was not approved and no option was selected.

    Variant of `RequestPermissionOutcome` sent with ``outcome: "cancelled"``.
    """

    outcome: Literal["cancelled"] = "cancelled"
    """Discriminator of `RequestPermissionOutcome`: always ``"cancelled"``."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class SelectedPermissionOutcome(AcpStruct, _RequestPermissionOutcomeBase, kw_only=True):
    """The user selected one of the provided options.

    Variant of `RequestPermissionOutcome` sent with ``outcome: "selected"``.
    """

    outcome: Literal["selected"] = "selected"
    """Discriminator of `RequestPermissionOutcome`: always ``"selected"``."""

    option_id: PermissionOptionId
    """The ID of the option the user selected."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class UnknownCreateElicitationResponse(UnknownVariant, _CreateElicitationResponseBase):
    """A `CreateElicitationResponse` whose ``action`` this SDK does not know: an ``_``-prefixed extension or a
    future ACP value. The whole object is kept verbatim in `raw` and re-encoded unchanged; it
    never equals, and is never an instance of, a known variant.
    """

    __slots__ = ()
    _union = "CreateElicitationResponse"
    _key = "action"
    _known = frozenset({"accept", "decline", "cancel"})

    @property
    def action(self) -> str:
        """The unknown ``action`` value."""
        return self._tag("action")


class ElicitationDeclineAction(AcpStruct, _CreateElicitationResponseBase, kw_only=True):
    """Response from the client to an elicitation request.

    Variant of `CreateElicitationResponse` sent with ``action: "decline"``.
    """

    action: Literal["decline"] = "decline"
    """Discriminator of `CreateElicitationResponse`: always ``"decline"``."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationCancelAction(AcpStruct, _CreateElicitationResponseBase, kw_only=True):
    """Response from the client to an elicitation request.

    Variant of `CreateElicitationResponse` sent with ``action: "cancel"``.
    """

    action: Literal["cancel"] = "cancel"
    """Discriminator of `CreateElicitationResponse`: always ``"cancel"``."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class ElicitationAcceptAction(AcpStruct, _CreateElicitationResponseBase, kw_only=True):
    """The user accepted the elicitation and provided content.

    Variant of `CreateElicitationResponse` sent with ``action: "accept"``.
    """

    action: Literal["accept"] = "accept"
    """Discriminator of `CreateElicitationResponse`: always ``"accept"``."""

    content: dict[str, ElicitationContentValue] | None | UnsetType = UNSET
    """The user-provided content, if any, as an object matching the requested schema.

    Omitted and `null` are equivalent and mean no content is provided.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CancelSessionNotification(AcpStruct, kw_only=True):
    """Notification to cancel a session's foreground work and its prompts not yet inserted.

    See protocol docs: [Cancellation](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#cancellation)
    """

    session_id: SessionId
    """The ID of the session to cancel operations for."""

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


class CancelRequestNotification(AcpStruct, kw_only=True):
    """Notification to cancel an ongoing request.

    See protocol docs: [Cancellation](https://agentclientprotocol.com/protocol/v2/cancellation)
    """

    request_id: RequestId
    """The ID of the request to cancel: a request that the sender of this notification issued.
    Receivers match it only against requests they received from that sender.
    """

    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Omitted and `null` are equivalent and mean no metadata.
    Implementations MUST NOT assign meaning to keys they do not recognize.

    See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v2/extensibility)
    """


# ------------------------------------------------------------------------------------------------
# Unions: a Union of the variant classes for type checkers, the marker at runtime


if TYPE_CHECKING:
    RequestPermissionSubject: TypeAlias = (
        ToolCallPermissionSubject | CommandPermissionSubject | UnknownRequestPermissionSubject
    )
    """The operation requiring permission.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownRequestPermissionSubject`.
    """
    ToolCallContent: TypeAlias = Content | Diff | Terminal | UnknownToolCallContent
    """Content produced by a tool call.

    Tool calls can produce different types of content including standard
    content blocks (text, images), file diffs, or display-only terminals.

    See protocol docs: [Content](https://agentclientprotocol.com/protocol/v2/tool-calls#content)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownToolCallContent`.
    """
    ContentBlock: TypeAlias = (
        TextContent
        | ImageContent
        | AudioContent
        | ResourceLink
        | EmbeddedResource
        | UnknownContentBlock
    )
    """Content blocks represent displayable information in the Agent Client Protocol.

    Content blocks appear in:
    - User prompts sent via `session/prompt`
    - Language model output reported through `session/update` notifications as
      message updates or streamed chunks
    - Progress updates and results from tool calls

    This structure is compatible with the Model Context Protocol (MCP), so agents can
    forward content from MCP tool outputs without transformation.

    See protocol docs: [Content](https://agentclientprotocol.com/protocol/v2/content)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownContentBlock`.
    """
    EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
    """Resource content that can be embedded in a message.

    A union of its variant classes, told apart by the properties present.
    """
    DiffChange: TypeAlias = (
        AddChange | DeleteChange | ModifyChange | MoveChange | CopyChange | UnknownDiffChange
    )
    """One file-level change described by a `Diff`.

    Structured change metadata lets clients identify affected files and
    operations without parsing the text patch.

    A union of its variant classes, told apart by ``operation``; other values decode to `UnknownDiffChange`.
    """
    CreateElicitationRequest: TypeAlias = (
        ElicitationFormMode | ElicitationUrlMode | UnknownCreateElicitationRequest
    )
    """Request from the agent to elicit structured user input.

    The agent sends this to the client to request information from the user,
    either via a form or by directing them to a URL.
    Elicitations are tied to a session (optionally a tool call) or a request.

    A session-scoped request follows the aggregate foreground-state contract:
    agents SHOULD report `requires_action` when the whole foreground workflow is
    blocked on user action. Once reported, they MUST report `running` when progress
    resumes, or `idle` if work ends without resuming. Independent background requests
    and request-scoped elicitations do not themselves change session state.
    Accepting a URL does not mean the external interaction completed.

    Agents SHOULD cancel pending elicitations no longer needed by cancelled work.
    The request's scope alone does not establish that dependency.

    See protocol docs: [Elicitation](https://agentclientprotocol.com/protocol/v2/elicitation)

    A union of its variant classes, told apart by ``mode``; other values decode to `UnknownCreateElicitationRequest`.
    """
    ElicitationPropertySchema: TypeAlias = (
        StringPropertySchema
        | NumberPropertySchema
        | IntegerPropertySchema
        | BooleanPropertySchema
        | MultiSelectPropertySchema
        | UnknownElicitationPropertySchema
    )
    """Property schema for elicitation form fields.

    Each variant corresponds to a JSON Schema `"type"` value.
    Single-select enums use `type: "string"` with `enum` or `oneOf` set.
    Multi-select enums use `type: "array"`.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownElicitationPropertySchema`.
    """
    MultiSelectItems: TypeAlias = (
        StringMultiSelectItems | TitledMultiSelectItems | UnknownMultiSelectItems
    )
    """Items for a multi-select (array) property schema.

    A union of its variant classes, told apart by ``type`` or, without it, by the properties present; other values decode to `UnknownMultiSelectItems`.
    """
    AuthMethod: TypeAlias = AuthMethodTerminal | AuthMethodAgent | UnknownAuthMethod
    """Describes an available authentication method.

    The `type` field acts as the discriminator in the serialized JSON form.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownAuthMethod`.
    """
    SessionConfigOption: TypeAlias = (
        SessionConfigSelect | SessionConfigBoolean | UnknownSessionConfigOption
    )
    """A session configuration option selector and its current state.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownSessionConfigOption`.
    """
    AvailableCommand: TypeAlias = Command | UnknownAvailableCommand
    """A command the agent advertises to the client.

    The `type` field acts as the discriminator in the serialized JSON form.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownAvailableCommand`.
    """
    AvailableCommandInput: TypeAlias = TextCommandInput | UnknownAvailableCommandInput
    """The input specification for a command.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownAvailableCommandInput`.
    """
    SessionUpdate: TypeAlias = (
        UserMessageChunk
        | UserMessage
        | AgentMessageChunk
        | AgentMessage
        | AgentThoughtChunk
        | AgentThought
        | RunningStateUpdate
        | IdleStateUpdate
        | RequiresActionStateUpdate
        | UnknownStateUpdate
        | ToolCallContentChunk
        | ToolCallUpdate
        | TerminalUpdate
        | TerminalOutputChunk
        | PlanUpdate
        | AvailableCommandsUpdate
        | ConfigOptionUpdate
        | SessionInfoUpdate
        | UsageUpdate
        | Notice
        | CompactionUpdate
        | CompactionSummaryChunk
        | UnknownSessionUpdate
    )
    """Different types of updates that can be sent while a session exists.

    These updates report messages, progress, and other session activity.

    See protocol docs: [Agent Reports Output](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#3-agent-reports-output)

    A union of its variant classes, told apart by ``sessionUpdate``; other values decode to `UnknownSessionUpdate`.
    """
    StateUpdate: TypeAlias = (
        RunningStateUpdate | IdleStateUpdate | RequiresActionStateUpdate | UnknownStateUpdate
    )
    """A snapshot of the session's aggregate foreground activity.

    Foreground work is the agent's active response or workflow in the session,
    including model processing, tool execution, and waiting for user action needed
    to continue that work. It can start with a prompt or be agent-initiated, for
    example to pursue an ongoing goal or follow up on a completed background task.
    Either way, the agent MUST report `running` when foreground work starts,
    or `requires_action` if it starts blocked on user action, and `idle` when it
    ends. The agent SHOULD include a stop reason on that idle update.
    Agent-initiated work does not require a prompt request or a synthetic user
    message.

    `running` may precede user-message insertion, for example during a foreground
    hook. It is not acknowledgment of insertion, and rejecting a prompt does not
    itself end foreground work.

    Background activity can continue and emit other `session/update` notifications
    while `idle`. Those notifications, including a detached task's progress or
    completion, do not by themselves change this state. A permission request only
    warrants `requires_action` when foreground work is blocked on user action.

    The agent SHOULD report `requires_action` when the foreground workflow as a
    whole cannot progress without user action, including permissions or elicitations.
    Once reported, it MUST report `running` when progress resumes, or `idle` when
    work ends without resuming.
    If other foreground work can progress, the state remains `running`. Resolving
    one of several requests does not itself change the state. Agents SHOULD ignore
    responses for work that has already ended rather than use them to resume it.

    A new session defaults to idle until a state update reports otherwise.
    Resume MUST send a current-state snapshot after any replay and before its
    response. The snapshot reports foreground state after resuming.
    The response alone does not imply idle.
    Repeated snapshots are idempotent, not additional work, completions, or usage.
    A repeated state may carry updated information without another state transition.
    The agent MUST report `idle` when no foreground activity remains. Completing
    an individual activity while other foreground work continues does not require
    an idle boundary. Local commands use the same lifecycle even without model work.

    See protocol docs: [Session States](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#session-states)

    A union of its variant classes, told apart by ``state`` (``sessionUpdate: "state_update"``); other values decode to `UnknownStateUpdate`.
    """
    BackgroundWork: TypeAlias = BackgroundTerminal | BackgroundToolCall | UnknownBackgroundWork
    """One piece of work running independently of the session's foreground work.

    Items reference entities the Client already tracks. The Agent MUST announce each item
    before the first snapshot that lists it, and MUST report a terminal's `exitStatus` or a
    tool call's final status before the snapshot that removes it. Each piece of work is
    listed once: process-backed work is listed as its terminal, not also as its tool call.

    See protocol docs: [Background Work](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle#background-work)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownBackgroundWork`.
    """
    PlanUpdateContent: TypeAlias = PlanItems | UnknownPlanUpdateContent
    """Updated content for a plan.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownPlanUpdateContent`.
    """
    McpServer: TypeAlias = McpServerHttp | McpServerStdio | UnknownMcpServer
    """Configuration for connecting to an MCP (Model Context Protocol) server.

    MCP servers provide tools and context that the agent can use when
    processing prompts.

    See protocol docs: [MCP Servers](https://agentclientprotocol.com/protocol/v2/session-setup#mcp-servers)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownMcpServer`.
    """
    ReplayFrom: TypeAlias = ReplayFromStart | UnknownReplayFrom
    """Inclusive cursor describing where replayed session history should begin.

    Replay includes the position identified by the cursor.

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownReplayFrom`.
    """
    SetSessionConfigOptionRequest: TypeAlias = (
        SetSessionConfigOptionIdRequest
        | SetSessionConfigOptionBooleanRequest
        | UnknownSetSessionConfigOptionRequest
    )
    """Request parameters for setting a session configuration option.

    Agents MUST support this method for any session where they advertise config options.
    Agents MUST reject an unknown `configId` or invalid value with `-32602` and leave the
    configuration unchanged.

    See protocol docs: [Session Config Options](https://agentclientprotocol.com/protocol/v2/session-config-options#setting-a-config-option)

    A union of its variant classes, told apart by ``type``; other values decode to `UnknownSetSessionConfigOptionRequest`.
    """
    RequestPermissionOutcome: TypeAlias = (
        CancelledPermissionOutcome | SelectedPermissionOutcome | UnknownRequestPermissionOutcome
    )
    """The outcome of a permission request.

    A union of its variant classes, told apart by ``outcome``; other values decode to `UnknownRequestPermissionOutcome`.
    """
    CreateElicitationResponse: TypeAlias = (
        ElicitationAcceptAction
        | ElicitationDeclineAction
        | ElicitationCancelAction
        | UnknownCreateElicitationResponse
    )
    """Response from the client to an elicitation request.

    A union of its variant classes, told apart by ``action``; other values decode to `UnknownCreateElicitationResponse`.
    """
    SessionConfigSelectOptions: TypeAlias = (
        list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
    )
    """Possible values for a session configuration option."""
else:
    RequestPermissionSubject = _RequestPermissionSubjectBase
    ToolCallContent = _ToolCallContentBase
    ContentBlock = _ContentBlockBase
    EmbeddedResourceResource = _EmbeddedResourceResourceBase
    DiffChange = _DiffChangeBase
    CreateElicitationRequest = _CreateElicitationRequestBase
    ElicitationPropertySchema = _ElicitationPropertySchemaBase
    MultiSelectItems = _MultiSelectItemsBase
    AuthMethod = _AuthMethodBase
    SessionConfigOption = _SessionConfigOptionBase
    AvailableCommand = _AvailableCommandBase
    AvailableCommandInput = _AvailableCommandInputBase
    SessionUpdate = _SessionUpdateBase
    StateUpdate = _StateUpdateBase
    BackgroundWork = _BackgroundWorkBase
    PlanUpdateContent = _PlanUpdateContentBase
    McpServer = _McpServerBase
    ReplayFrom = _ReplayFromBase
    SetSessionConfigOptionRequest = _SetSessionConfigOptionRequestBase
    RequestPermissionOutcome = _RequestPermissionOutcomeBase
    CreateElicitationResponse = _CreateElicitationResponseBase
    SessionConfigSelectOptions = list[_SessionConfigSelectOptionsItemBase]

DiffPathChange: TypeAlias = AddChange | DeleteChange | ModifyChange
"""Operation metadata for add, delete, and modify changes.

Any of its variant classes.
"""

DiffPathPairChange: TypeAlias = MoveChange | CopyChange
"""Operation metadata for move and copy changes.

Any of its variant classes.
"""

ContentChunk: TypeAlias = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk
"""A streamed item of message content.

Any of its variant classes.
"""


# ------------------------------------------------------------------------------------------------
# Union decoders


_REQUEST_PERMISSION_SUBJECT_DECODER = UnionDecoder(
    "RequestPermissionSubject",
    "type",
    {"tool_call": ToolCallPermissionSubject, "command": CommandPermissionSubject},
    unknown=UnknownRequestPermissionSubject,
)
_TOOL_CALL_CONTENT_DECODER = UnionDecoder(
    "ToolCallContent",
    "type",
    {"content": Content, "diff": Diff, "terminal": Terminal},
    unknown=UnknownToolCallContent,
)
_CONTENT_BLOCK_DECODER = UnionDecoder(
    "ContentBlock",
    "type",
    {
        "text": TextContent,
        "image": ImageContent,
        "audio": AudioContent,
        "resource_link": ResourceLink,
        "resource": EmbeddedResource,
    },
    unknown=UnknownContentBlock,
)
_EMBEDDED_RESOURCE_RESOURCE_DECODER = UnionDecoder(
    "EmbeddedResourceResource",
    None,
    {},
    untagged=[(TextResourceContents, ("text", "uri")), (BlobResourceContents, ("blob", "uri"))],
)
_DIFF_CHANGE_DECODER = UnionDecoder(
    "DiffChange",
    "operation",
    {
        "add": AddChange,
        "delete": DeleteChange,
        "modify": ModifyChange,
        "move": MoveChange,
        "copy": CopyChange,
    },
    unknown=UnknownDiffChange,
)
_CREATE_ELICITATION_REQUEST_DECODER = UnionDecoder(
    "CreateElicitationRequest",
    "mode",
    {"form": ElicitationFormMode, "url": ElicitationUrlMode},
    unknown=UnknownCreateElicitationRequest,
)
_ELICITATION_PROPERTY_SCHEMA_DECODER = UnionDecoder(
    "ElicitationPropertySchema",
    "type",
    {
        "string": StringPropertySchema,
        "number": NumberPropertySchema,
        "integer": IntegerPropertySchema,
        "boolean": BooleanPropertySchema,
        "array": MultiSelectPropertySchema,
    },
    unknown=UnknownElicitationPropertySchema,
)
_MULTI_SELECT_ITEMS_DECODER = UnionDecoder(
    "MultiSelectItems",
    "type",
    {"string": StringMultiSelectItems},
    unknown=UnknownMultiSelectItems,
    untagged=[(TitledMultiSelectItems, ("anyOf",))],
)
_AUTH_METHOD_DECODER = UnionDecoder(
    "AuthMethod",
    "type",
    {"terminal": AuthMethodTerminal, "agent": AuthMethodAgent},
    unknown=UnknownAuthMethod,
)
_SESSION_CONFIG_OPTION_DECODER = UnionDecoder(
    "SessionConfigOption",
    "type",
    {"select": SessionConfigSelect, "boolean": SessionConfigBoolean},
    unknown=UnknownSessionConfigOption,
)
_SESSION_CONFIG_SELECT_OPTIONS_ITEM_DECODER = UnionDecoder(
    "SessionConfigSelectOptionsItem",
    None,
    {},
    untagged=[
        (SessionConfigSelectOption, ("value", "name")),
        (SessionConfigSelectGroup, ("groupId", "name", "options")),
    ],
)
_AVAILABLE_COMMAND_DECODER = UnionDecoder(
    "AvailableCommand", "type", {"command": Command}, unknown=UnknownAvailableCommand
)
_AVAILABLE_COMMAND_INPUT_DECODER = UnionDecoder(
    "AvailableCommandInput",
    "type",
    {"text": TextCommandInput},
    unknown=UnknownAvailableCommandInput,
)
_STATE_UPDATE_DECODER = UnionDecoder(
    "StateUpdate",
    "state",
    {
        "running": RunningStateUpdate,
        "idle": IdleStateUpdate,
        "requires_action": RequiresActionStateUpdate,
    },
    unknown=UnknownStateUpdate,
)
_SESSION_UPDATE_DECODER = UnionDecoder(
    "SessionUpdate",
    "sessionUpdate",
    {
        "user_message_chunk": UserMessageChunk,
        "user_message": UserMessage,
        "agent_message_chunk": AgentMessageChunk,
        "agent_message": AgentMessage,
        "agent_thought_chunk": AgentThoughtChunk,
        "agent_thought": AgentThought,
        "state_update": _STATE_UPDATE_DECODER,
        "tool_call_content_chunk": ToolCallContentChunk,
        "tool_call_update": ToolCallUpdate,
        "terminal_update": TerminalUpdate,
        "terminal_output_chunk": TerminalOutputChunk,
        "plan_update": PlanUpdate,
        "available_commands_update": AvailableCommandsUpdate,
        "config_option_update": ConfigOptionUpdate,
        "session_info_update": SessionInfoUpdate,
        "usage_update": UsageUpdate,
        "notice": Notice,
        "compaction_update": CompactionUpdate,
        "compaction_summary_chunk": CompactionSummaryChunk,
    },
    unknown=UnknownSessionUpdate,
)
_BACKGROUND_WORK_DECODER = UnionDecoder(
    "BackgroundWork",
    "type",
    {"terminal": BackgroundTerminal, "tool_call": BackgroundToolCall},
    unknown=UnknownBackgroundWork,
)
_PLAN_UPDATE_CONTENT_DECODER = UnionDecoder(
    "PlanUpdateContent", "type", {"items": PlanItems}, unknown=UnknownPlanUpdateContent
)
_MCP_SERVER_DECODER = UnionDecoder(
    "McpServer", "type", {"http": McpServerHttp, "stdio": McpServerStdio}, unknown=UnknownMcpServer
)
_REPLAY_FROM_DECODER = UnionDecoder(
    "ReplayFrom", "type", {"start": ReplayFromStart}, unknown=UnknownReplayFrom
)
_SET_SESSION_CONFIG_OPTION_REQUEST_DECODER = UnionDecoder(
    "SetSessionConfigOptionRequest",
    "type",
    {"id": SetSessionConfigOptionIdRequest, "boolean": SetSessionConfigOptionBooleanRequest},
    unknown=UnknownSetSessionConfigOptionRequest,
)
_REQUEST_PERMISSION_OUTCOME_DECODER = UnionDecoder(
    "RequestPermissionOutcome",
    "outcome",
    {"cancelled": CancelledPermissionOutcome, "selected": SelectedPermissionOutcome},
    unknown=UnknownRequestPermissionOutcome,
)
_CREATE_ELICITATION_RESPONSE_DECODER = UnionDecoder(
    "CreateElicitationResponse",
    "action",
    {
        "accept": ElicitationAcceptAction,
        "decline": ElicitationDeclineAction,
        "cancel": ElicitationCancelAction,
    },
    unknown=UnknownCreateElicitationResponse,
)

register_unions(
    {
        _RequestPermissionSubjectBase: _REQUEST_PERMISSION_SUBJECT_DECODER,
        _ToolCallContentBase: _TOOL_CALL_CONTENT_DECODER,
        _ContentBlockBase: _CONTENT_BLOCK_DECODER,
        _EmbeddedResourceResourceBase: _EMBEDDED_RESOURCE_RESOURCE_DECODER,
        _DiffChangeBase: _DIFF_CHANGE_DECODER,
        _CreateElicitationRequestBase: _CREATE_ELICITATION_REQUEST_DECODER,
        _ElicitationPropertySchemaBase: _ELICITATION_PROPERTY_SCHEMA_DECODER,
        _MultiSelectItemsBase: _MULTI_SELECT_ITEMS_DECODER,
        _AuthMethodBase: _AUTH_METHOD_DECODER,
        _SessionConfigOptionBase: _SESSION_CONFIG_OPTION_DECODER,
        _SessionConfigSelectOptionsItemBase: _SESSION_CONFIG_SELECT_OPTIONS_ITEM_DECODER,
        _AvailableCommandBase: _AVAILABLE_COMMAND_DECODER,
        _AvailableCommandInputBase: _AVAILABLE_COMMAND_INPUT_DECODER,
        _SessionUpdateBase: _SESSION_UPDATE_DECODER,
        _StateUpdateBase: _STATE_UPDATE_DECODER,
        _BackgroundWorkBase: _BACKGROUND_WORK_DECODER,
        _PlanUpdateContentBase: _PLAN_UPDATE_CONTENT_DECODER,
        _McpServerBase: _MCP_SERVER_DECODER,
        _ReplayFromBase: _REPLAY_FROM_DECODER,
        _SetSessionConfigOptionRequestBase: _SET_SESSION_CONFIG_OPTION_REQUEST_DECODER,
        _RequestPermissionOutcomeBase: _REQUEST_PERMISSION_OUTCOME_DECODER,
        _CreateElicitationResponseBase: _CREATE_ELICITATION_RESPONSE_DECODER,
    }
)


# ------------------------------------------------------------------------------------------------
# Methods


PROTOCOL_VERSION: Final = 2
"""The ACP protocol version these types describe."""

CANCEL_REQUEST_METHOD: Final = "$/cancel_request"
"""Notification either side sends to cancel one of its own pending requests."""

AGENT_METHODS: Final[dict[str, MethodSpec]] = {
    "initialize": MethodSpec("initialize", InitializeRequest, InitializeResponse),
    "auth/login": MethodSpec("auth/login", LoginAuthRequest, LoginAuthResponse),
    "auth/logout": MethodSpec("auth/logout", LogoutAuthRequest, LogoutAuthResponse),
    "session/new": MethodSpec("session/new", NewSessionRequest, NewSessionResponse),
    "session/set_config_option": MethodSpec(
        "session/set_config_option",
        _SetSessionConfigOptionRequestBase,
        SetSessionConfigOptionResponse,
    ),
    "session/prompt": MethodSpec("session/prompt", PromptRequest, PromptResponse),
    "session/cancel": MethodSpec("session/cancel", CancelSessionNotification, None),
    "session/list": MethodSpec("session/list", ListSessionsRequest, ListSessionsResponse),
    "session/delete": MethodSpec("session/delete", DeleteSessionRequest, DeleteSessionResponse),
    "session/resume": MethodSpec("session/resume", ResumeSessionRequest, ResumeSessionResponse),
    "session/close": MethodSpec("session/close", CloseSessionRequest, CloseSessionResponse),
    "tool_call/cancel": MethodSpec(
        "tool_call/cancel", CancelToolCallRequest, CancelToolCallResponse
    ),
    "terminal/cancel": MethodSpec("terminal/cancel", CancelTerminalRequest, CancelTerminalResponse),
}
"""Methods the agent serves: requests and notifications the client sends."""

CLIENT_METHODS: Final[dict[str, MethodSpec]] = {
    "session/request_permission": MethodSpec(
        "session/request_permission", RequestPermissionRequest, RequestPermissionResponse
    ),
    "session/update": MethodSpec("session/update", UpdateSessionNotification, None),
    "elicitation/create": MethodSpec(
        "elicitation/create", _CreateElicitationRequestBase, _CreateElicitationResponseBase
    ),
    "elicitation/complete": MethodSpec(
        "elicitation/complete", CompleteElicitationNotification, None
    ),
}
"""Methods the client serves: requests and notifications the agent sends."""

PROTOCOL_METHODS: Final[dict[str, MethodSpec]] = {
    "$/cancel_request": MethodSpec("$/cancel_request", CancelRequestNotification, None)
}
"""Protocol-level notifications either side may send."""

__all__: tuple[str, ...] = (
    "AGENT_METHODS",
    "AUTHENTICATION_REQUIRED",
    "AbsolutePath",
    "AddChange",
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AgentMessage",
    "AgentMessageChunk",
    "AgentThought",
    "AgentThoughtChunk",
    "Annotations",
    "AudioContent",
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodId",
    "AuthMethodTerminal",
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "BackgroundTerminal",
    "BackgroundToolCall",
    "BackgroundWork",
    "BlobResourceContents",
    "BooleanPropertySchema",
    "CANCEL_REQUEST_METHOD",
    "CLIENT_METHODS",
    "CancelRequestNotification",
    "CancelSessionNotification",
    "CancelTerminalRequest",
    "CancelTerminalResponse",
    "CancelToolCallRequest",
    "CancelToolCallResponse",
    "CancelledPermissionOutcome",
    "ClientAuthCapabilities",
    "ClientCapabilities",
    "CloseSessionRequest",
    "CloseSessionResponse",
    "Command",
    "CommandPermissionSubject",
    "CompactionId",
    "CompactionStatus",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "CompleteElicitationNotification",
    "ConfigOptionUpdate",
    "Content",
    "ContentBlock",
    "ContentChunk",
    "CopyChange",
    "Cost",
    "CreateElicitationRequest",
    "CreateElicitationResponse",
    "DeleteChange",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "Diff",
    "DiffChange",
    "DiffFileType",
    "DiffPatch",
    "DiffPatchFormat",
    "DiffPathChange",
    "DiffPathPairChange",
    "ElicitationAcceptAction",
    "ElicitationCancelAction",
    "ElicitationCapabilities",
    "ElicitationContentValue",
    "ElicitationDeclineAction",
    "ElicitationFormCapabilities",
    "ElicitationFormMode",
    "ElicitationId",
    "ElicitationPropertySchema",
    "ElicitationSchema",
    "ElicitationSchemaType",
    "ElicitationUrlCapabilities",
    "ElicitationUrlMode",
    "EmbeddedResource",
    "EmbeddedResourceResource",
    "EnumOption",
    "EnvVariable",
    "Error",
    "ErrorCode",
    "ErrorData",
    "HttpHeader",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "Icon",
    "IconTheme",
    "IdleStateUpdate",
    "ImageContent",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "IntegerPropertySchema",
    "KNOWN_COMPACTION_STATUS",
    "KNOWN_DIFF_FILE_TYPE",
    "KNOWN_DIFF_PATCH_FORMAT",
    "KNOWN_ERROR_CODE",
    "KNOWN_ICON_THEME",
    "KNOWN_NOTICE_SEVERITY",
    "KNOWN_PERMISSION_OPTION_KIND",
    "KNOWN_PLAN_ENTRY_PRIORITY",
    "KNOWN_PLAN_ENTRY_STATUS",
    "KNOWN_ROLE",
    "KNOWN_SESSION_CONFIG_OPTION_CATEGORY",
    "KNOWN_STOP_REASON",
    "KNOWN_STRING_FORMAT",
    "KNOWN_TOOL_CALL_STATUS",
    "KNOWN_TOOL_KIND",
    "KnownCompactionStatus",
    "KnownDiffFileType",
    "KnownDiffPatchFormat",
    "KnownErrorCode",
    "KnownIconTheme",
    "KnownNoticeSeverity",
    "KnownPermissionOptionKind",
    "KnownPlanEntryPriority",
    "KnownPlanEntryStatus",
    "KnownRole",
    "KnownSessionConfigOptionCategory",
    "KnownStopReason",
    "KnownStringFormat",
    "KnownToolCallStatus",
    "KnownToolKind",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoginAuthRequest",
    "LoginAuthResponse",
    "LogoutAuthRequest",
    "LogoutAuthResponse",
    "METHOD_NOT_FOUND",
    "McpCapabilities",
    "McpHttpCapabilities",
    "McpServer",
    "McpServerHttp",
    "McpServerStdio",
    "McpStdioCapabilities",
    "MediaType",
    "MessageId",
    "ModifyChange",
    "MoveChange",
    "MultiSelectItems",
    "MultiSelectPropertySchema",
    "NewSessionRequest",
    "NewSessionResponse",
    "Notice",
    "NoticeSeverity",
    "NumberPropertySchema",
    "PARSE_ERROR",
    "PROTOCOL_METHODS",
    "PROTOCOL_VERSION",
    "PermissionOption",
    "PermissionOptionId",
    "PermissionOptionKind",
    "PlanEntry",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "PlanId",
    "PlanItems",
    "PlanUpdate",
    "PlanUpdateContent",
    "PromptAudioCapabilities",
    "PromptCapabilities",
    "PromptEmbeddedContextCapabilities",
    "PromptImageCapabilities",
    "PromptRequest",
    "PromptResponse",
    "ProtocolVersion",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "ReplayFrom",
    "ReplayFromStart",
    "RequestId",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "RequestPermissionSubject",
    "RequiresActionStateUpdate",
    "ResourceLink",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "Role",
    "RunningStateUpdate",
    "SelectedPermissionOutcome",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCapabilities",
    "SessionConfigBoolean",
    "SessionConfigGroupId",
    "SessionConfigId",
    "SessionConfigOption",
    "SessionConfigOptionCategory",
    "SessionConfigSelect",
    "SessionConfigSelectGroup",
    "SessionConfigSelectOption",
    "SessionConfigSelectOptions",
    "SessionConfigValueId",
    "SessionDeleteCapabilities",
    "SessionId",
    "SessionInfo",
    "SessionInfoUpdate",
    "SessionListCursor",
    "SessionNotFoundErrorData",
    "SessionUpdate",
    "SetSessionConfigOptionBooleanRequest",
    "SetSessionConfigOptionIdRequest",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
    "StateUpdate",
    "StopReason",
    "StringFormat",
    "StringMultiSelectItems",
    "StringPropertySchema",
    "Terminal",
    "TerminalAuthCapabilities",
    "TerminalCancelCapabilities",
    "TerminalCapabilities",
    "TerminalExitStatus",
    "TerminalId",
    "TerminalOutput",
    "TerminalOutputChunk",
    "TerminalSize",
    "TerminalUpdate",
    "TextCommandInput",
    "TextContent",
    "TextResourceContents",
    "TitledMultiSelectItems",
    "ToolCallCancelCapabilities",
    "ToolCallCapabilities",
    "ToolCallContent",
    "ToolCallContentChunk",
    "ToolCallId",
    "ToolCallLocation",
    "ToolCallPermissionSubject",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolCallUpdateFields",
    "ToolKind",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "UnknownAuthMethod",
    "UnknownAvailableCommand",
    "UnknownAvailableCommandInput",
    "UnknownBackgroundWork",
    "UnknownContentBlock",
    "UnknownCreateElicitationRequest",
    "UnknownCreateElicitationResponse",
    "UnknownDiffChange",
    "UnknownElicitationPropertySchema",
    "UnknownMcpServer",
    "UnknownMultiSelectItems",
    "UnknownPlanUpdateContent",
    "UnknownReplayFrom",
    "UnknownRequestPermissionOutcome",
    "UnknownRequestPermissionSubject",
    "UnknownSessionConfigOption",
    "UnknownSessionUpdate",
    "UnknownSetSessionConfigOptionRequest",
    "UnknownStateUpdate",
    "UnknownToolCallContent",
    "UnsupportedProtocolVersionErrorData",
    "UpdateSessionNotification",
    "UsageUpdate",
    "UserMessage",
    "UserMessageChunk",
)
