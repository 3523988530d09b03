"""ACP draft v2 protocol types and their JSON codec.

Generated from schema.json (sha256
b6c91055df549d6f1db1d76d692d0561dad433e03d8ed114ea9b5baed9da72c5, ACP draft v2 as shipped with
@agentclientprotocol/sdk 2.4.0) by scripts/gen_schema.py. Do not edit.

Every schema object is a msgspec Struct (`AcpStruct`); open unions decode unknown values to
``Unknown<Union>`` objects kept verbatim; `encode`/`decode`/`convert`/`to_builtins` are the codec.
"""

from __future__ import annotations

from ._base import AcpStruct as AcpStruct
from ._base import MethodSpec as MethodSpec
from ._base import UnknownVariant as UnknownVariant
from ._codec import convert as convert
from ._codec import decode as decode
from ._codec import encode as encode
from ._codec import to_builtins as to_builtins
from ._generated import AGENT_METHODS as AGENT_METHODS
from ._generated import AUTHENTICATION_REQUIRED as AUTHENTICATION_REQUIRED
from ._generated import CANCEL_REQUEST_METHOD as CANCEL_REQUEST_METHOD
from ._generated import CLIENT_METHODS as CLIENT_METHODS
from ._generated import INTERNAL_ERROR as INTERNAL_ERROR
from ._generated import INVALID_PARAMS as INVALID_PARAMS
from ._generated import INVALID_REQUEST as INVALID_REQUEST
from ._generated import KNOWN_COMPACTION_STATUS as KNOWN_COMPACTION_STATUS
from ._generated import KNOWN_DIFF_FILE_TYPE as KNOWN_DIFF_FILE_TYPE
from ._generated import KNOWN_DIFF_PATCH_FORMAT as KNOWN_DIFF_PATCH_FORMAT
from ._generated import KNOWN_ERROR_CODE as KNOWN_ERROR_CODE
from ._generated import KNOWN_ICON_THEME as KNOWN_ICON_THEME
from ._generated import KNOWN_NOTICE_SEVERITY as KNOWN_NOTICE_SEVERITY
from ._generated import KNOWN_PERMISSION_OPTION_KIND as KNOWN_PERMISSION_OPTION_KIND
from ._generated import KNOWN_PLAN_ENTRY_PRIORITY as KNOWN_PLAN_ENTRY_PRIORITY
from ._generated import KNOWN_PLAN_ENTRY_STATUS as KNOWN_PLAN_ENTRY_STATUS
from ._generated import KNOWN_ROLE as KNOWN_ROLE
from ._generated import KNOWN_SESSION_CONFIG_OPTION_CATEGORY as KNOWN_SESSION_CONFIG_OPTION_CATEGORY
from ._generated import KNOWN_STOP_REASON as KNOWN_STOP_REASON
from ._generated import KNOWN_STRING_FORMAT as KNOWN_STRING_FORMAT
from ._generated import KNOWN_TOOL_CALL_STATUS as KNOWN_TOOL_CALL_STATUS
from ._generated import KNOWN_TOOL_KIND as KNOWN_TOOL_KIND
from ._generated import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from ._generated import PARSE_ERROR as PARSE_ERROR
from ._generated import PROTOCOL_METHODS as PROTOCOL_METHODS
from ._generated import PROTOCOL_VERSION as PROTOCOL_VERSION
from ._generated import REQUEST_CANCELLED as REQUEST_CANCELLED
from ._generated import RESOURCE_NOT_FOUND as RESOURCE_NOT_FOUND
from ._generated import UNSUPPORTED_PROTOCOL_VERSION as UNSUPPORTED_PROTOCOL_VERSION
from ._generated import AbsolutePath as AbsolutePath
from ._generated import AddChange as AddChange
from ._generated import AgentAuthCapabilities as AgentAuthCapabilities
from ._generated import AgentCapabilities as AgentCapabilities
from ._generated import AgentMessage as AgentMessage
from ._generated import AgentMessageChunk as AgentMessageChunk
from ._generated import AgentThought as AgentThought
from ._generated import AgentThoughtChunk as AgentThoughtChunk
from ._generated import Annotations as Annotations
from ._generated import AudioContent as AudioContent
from ._generated import AuthMethod as AuthMethod
from ._generated import AuthMethodAgent as AuthMethodAgent
from ._generated import AuthMethodId as AuthMethodId
from ._generated import AuthMethodTerminal as AuthMethodTerminal
from ._generated import AvailableCommand as AvailableCommand
from ._generated import AvailableCommandInput as AvailableCommandInput
from ._generated import AvailableCommandsUpdate as AvailableCommandsUpdate
from ._generated import BackgroundTerminal as BackgroundTerminal
from ._generated import BackgroundToolCall as BackgroundToolCall
from ._generated import BackgroundWork as BackgroundWork
from ._generated import BlobResourceContents as BlobResourceContents
from ._generated import BooleanPropertySchema as BooleanPropertySchema
from ._generated import CancelledPermissionOutcome as CancelledPermissionOutcome
from ._generated import CancelRequestNotification as CancelRequestNotification
from ._generated import CancelSessionNotification as CancelSessionNotification
from ._generated import CancelTerminalRequest as CancelTerminalRequest
from ._generated import CancelTerminalResponse as CancelTerminalResponse
from ._generated import CancelToolCallRequest as CancelToolCallRequest
from ._generated import CancelToolCallResponse as CancelToolCallResponse
from ._generated import ClientAuthCapabilities as ClientAuthCapabilities
from ._generated import ClientCapabilities as ClientCapabilities
from ._generated import CloseSessionRequest as CloseSessionRequest
from ._generated import CloseSessionResponse as CloseSessionResponse
from ._generated import Command as Command
from ._generated import CommandPermissionSubject as CommandPermissionSubject
from ._generated import CompactionId as CompactionId
from ._generated import CompactionStatus as CompactionStatus
from ._generated import CompactionSummaryChunk as CompactionSummaryChunk
from ._generated import CompactionUpdate as CompactionUpdate
from ._generated import CompleteElicitationNotification as CompleteElicitationNotification
from ._generated import ConfigOptionUpdate as ConfigOptionUpdate
from ._generated import Content as Content
from ._generated import ContentBlock as ContentBlock
from ._generated import ContentChunk as ContentChunk
from ._generated import CopyChange as CopyChange
from ._generated import Cost as Cost
from ._generated import CreateElicitationRequest as CreateElicitationRequest
from ._generated import CreateElicitationResponse as CreateElicitationResponse
from ._generated import DeleteChange as DeleteChange
from ._generated import DeleteSessionRequest as DeleteSessionRequest
from ._generated import DeleteSessionResponse as DeleteSessionResponse
from ._generated import Diff as Diff
from ._generated import DiffChange as DiffChange
from ._generated import DiffFileType as DiffFileType
from ._generated import DiffPatch as DiffPatch
from ._generated import DiffPatchFormat as DiffPatchFormat
from ._generated import DiffPathChange as DiffPathChange
from ._generated import DiffPathPairChange as DiffPathPairChange
from ._generated import ElicitationAcceptAction as ElicitationAcceptAction
from ._generated import ElicitationCancelAction as ElicitationCancelAction
from ._generated import ElicitationCapabilities as ElicitationCapabilities
from ._generated import ElicitationContentValue as ElicitationContentValue
from ._generated import ElicitationDeclineAction as ElicitationDeclineAction
from ._generated import ElicitationFormCapabilities as ElicitationFormCapabilities
from ._generated import ElicitationFormMode as ElicitationFormMode
from ._generated import ElicitationId as ElicitationId
from ._generated import ElicitationPropertySchema as ElicitationPropertySchema
from ._generated import ElicitationSchema as ElicitationSchema
from ._generated import ElicitationSchemaType as ElicitationSchemaType
from ._generated import ElicitationUrlCapabilities as ElicitationUrlCapabilities
from ._generated import ElicitationUrlMode as ElicitationUrlMode
from ._generated import EmbeddedResource as EmbeddedResource
from ._generated import EmbeddedResourceResource as EmbeddedResourceResource
from ._generated import EnumOption as EnumOption
from ._generated import EnvVariable as EnvVariable
from ._generated import Error as Error
from ._generated import ErrorCode as ErrorCode
from ._generated import ErrorData as ErrorData
from ._generated import HttpHeader as HttpHeader
from ._generated import Icon as Icon
from ._generated import IconTheme as IconTheme
from ._generated import IdleStateUpdate as IdleStateUpdate
from ._generated import ImageContent as ImageContent
from ._generated import Implementation as Implementation
from ._generated import InitializeRequest as InitializeRequest
from ._generated import InitializeResponse as InitializeResponse
from ._generated import IntegerPropertySchema as IntegerPropertySchema
from ._generated import KnownCompactionStatus as KnownCompactionStatus
from ._generated import KnownDiffFileType as KnownDiffFileType
from ._generated import KnownDiffPatchFormat as KnownDiffPatchFormat
from ._generated import KnownErrorCode as KnownErrorCode
from ._generated import KnownIconTheme as KnownIconTheme
from ._generated import KnownNoticeSeverity as KnownNoticeSeverity
from ._generated import KnownPermissionOptionKind as KnownPermissionOptionKind
from ._generated import KnownPlanEntryPriority as KnownPlanEntryPriority
from ._generated import KnownPlanEntryStatus as KnownPlanEntryStatus
from ._generated import KnownRole as KnownRole
from ._generated import KnownSessionConfigOptionCategory as KnownSessionConfigOptionCategory
from ._generated import KnownStopReason as KnownStopReason
from ._generated import KnownStringFormat as KnownStringFormat
from ._generated import KnownToolCallStatus as KnownToolCallStatus
from ._generated import KnownToolKind as KnownToolKind
from ._generated import ListSessionsRequest as ListSessionsRequest
from ._generated import ListSessionsResponse as ListSessionsResponse
from ._generated import LoginAuthRequest as LoginAuthRequest
from ._generated import LoginAuthResponse as LoginAuthResponse
from ._generated import LogoutAuthRequest as LogoutAuthRequest
from ._generated import LogoutAuthResponse as LogoutAuthResponse
from ._generated import McpCapabilities as McpCapabilities
from ._generated import McpHttpCapabilities as McpHttpCapabilities
from ._generated import McpServer as McpServer
from ._generated import McpServerHttp as McpServerHttp
from ._generated import McpServerStdio as McpServerStdio
from ._generated import McpStdioCapabilities as McpStdioCapabilities
from ._generated import MediaType as MediaType
from ._generated import MessageId as MessageId
from ._generated import ModifyChange as ModifyChange
from ._generated import MoveChange as MoveChange
from ._generated import MultiSelectItems as MultiSelectItems
from ._generated import MultiSelectPropertySchema as MultiSelectPropertySchema
from ._generated import NewSessionRequest as NewSessionRequest
from ._generated import NewSessionResponse as NewSessionResponse
from ._generated import Notice as Notice
from ._generated import NoticeSeverity as NoticeSeverity
from ._generated import NumberPropertySchema as NumberPropertySchema
from ._generated import PermissionOption as PermissionOption
from ._generated import PermissionOptionId as PermissionOptionId
from ._generated import PermissionOptionKind as PermissionOptionKind
from ._generated import PlanEntry as PlanEntry
from ._generated import PlanEntryPriority as PlanEntryPriority
from ._generated import PlanEntryStatus as PlanEntryStatus
from ._generated import PlanId as PlanId
from ._generated import PlanItems as PlanItems
from ._generated import PlanUpdate as PlanUpdate
from ._generated import PlanUpdateContent as PlanUpdateContent
from ._generated import PromptAudioCapabilities as PromptAudioCapabilities
from ._generated import PromptCapabilities as PromptCapabilities
from ._generated import PromptEmbeddedContextCapabilities as PromptEmbeddedContextCapabilities
from ._generated import PromptImageCapabilities as PromptImageCapabilities
from ._generated import PromptRequest as PromptRequest
from ._generated import PromptResponse as PromptResponse
from ._generated import ProtocolVersion as ProtocolVersion
from ._generated import ReplayFrom as ReplayFrom
from ._generated import ReplayFromStart as ReplayFromStart
from ._generated import RequestId as RequestId
from ._generated import RequestPermissionOutcome as RequestPermissionOutcome
from ._generated import RequestPermissionRequest as RequestPermissionRequest
from ._generated import RequestPermissionResponse as RequestPermissionResponse
from ._generated import RequestPermissionSubject as RequestPermissionSubject
from ._generated import RequiresActionStateUpdate as RequiresActionStateUpdate
from ._generated import ResourceLink as ResourceLink
from ._generated import ResumeSessionRequest as ResumeSessionRequest
from ._generated import ResumeSessionResponse as ResumeSessionResponse
from ._generated import Role as Role
from ._generated import RunningStateUpdate as RunningStateUpdate
from ._generated import SelectedPermissionOutcome as SelectedPermissionOutcome
from ._generated import (
    SessionAdditionalDirectoriesCapabilities as SessionAdditionalDirectoriesCapabilities,
)
from ._generated import SessionCapabilities as SessionCapabilities
from ._generated import SessionConfigBoolean as SessionConfigBoolean
from ._generated import SessionConfigGroupId as SessionConfigGroupId
from ._generated import SessionConfigId as SessionConfigId
from ._generated import SessionConfigOption as SessionConfigOption
from ._generated import SessionConfigOptionCategory as SessionConfigOptionCategory
from ._generated import SessionConfigSelect as SessionConfigSelect
from ._generated import SessionConfigSelectGroup as SessionConfigSelectGroup
from ._generated import SessionConfigSelectOption as SessionConfigSelectOption
from ._generated import SessionConfigSelectOptions as SessionConfigSelectOptions
from ._generated import SessionConfigValueId as SessionConfigValueId
from ._generated import SessionDeleteCapabilities as SessionDeleteCapabilities
from ._generated import SessionId as SessionId
from ._generated import SessionInfo as SessionInfo
from ._generated import SessionInfoUpdate as SessionInfoUpdate
from ._generated import SessionListCursor as SessionListCursor
from ._generated import SessionNotFoundErrorData as SessionNotFoundErrorData
from ._generated import SessionUpdate as SessionUpdate
from ._generated import SetSessionConfigOptionBooleanRequest as SetSessionConfigOptionBooleanRequest
from ._generated import SetSessionConfigOptionIdRequest as SetSessionConfigOptionIdRequest
from ._generated import SetSessionConfigOptionRequest as SetSessionConfigOptionRequest
from ._generated import SetSessionConfigOptionResponse as SetSessionConfigOptionResponse
from ._generated import StateUpdate as StateUpdate
from ._generated import StopReason as StopReason
from ._generated import StringFormat as StringFormat
from ._generated import StringMultiSelectItems as StringMultiSelectItems
from ._generated import StringPropertySchema as StringPropertySchema
from ._generated import Terminal as Terminal
from ._generated import TerminalAuthCapabilities as TerminalAuthCapabilities
from ._generated import TerminalCancelCapabilities as TerminalCancelCapabilities
from ._generated import TerminalCapabilities as TerminalCapabilities
from ._generated import TerminalExitStatus as TerminalExitStatus
from ._generated import TerminalId as TerminalId
from ._generated import TerminalOutput as TerminalOutput
from ._generated import TerminalOutputChunk as TerminalOutputChunk
from ._generated import TerminalSize as TerminalSize
from ._generated import TerminalUpdate as TerminalUpdate
from ._generated import TextCommandInput as TextCommandInput
from ._generated import TextContent as TextContent
from ._generated import TextResourceContents as TextResourceContents
from ._generated import TitledMultiSelectItems as TitledMultiSelectItems
from ._generated import ToolCallCancelCapabilities as ToolCallCancelCapabilities
from ._generated import ToolCallCapabilities as ToolCallCapabilities
from ._generated import ToolCallContent as ToolCallContent
from ._generated import ToolCallContentChunk as ToolCallContentChunk
from ._generated import ToolCallId as ToolCallId
from ._generated import ToolCallLocation as ToolCallLocation
from ._generated import ToolCallPermissionSubject as ToolCallPermissionSubject
from ._generated import ToolCallStatus as ToolCallStatus
from ._generated import ToolCallUpdate as ToolCallUpdate
from ._generated import ToolCallUpdateFields as ToolCallUpdateFields
from ._generated import ToolKind as ToolKind
from ._generated import UnknownAuthMethod as UnknownAuthMethod
from ._generated import UnknownAvailableCommand as UnknownAvailableCommand
from ._generated import UnknownAvailableCommandInput as UnknownAvailableCommandInput
from ._generated import UnknownBackgroundWork as UnknownBackgroundWork
from ._generated import UnknownContentBlock as UnknownContentBlock
from ._generated import UnknownCreateElicitationRequest as UnknownCreateElicitationRequest
from ._generated import UnknownCreateElicitationResponse as UnknownCreateElicitationResponse
from ._generated import UnknownDiffChange as UnknownDiffChange
from ._generated import UnknownElicitationPropertySchema as UnknownElicitationPropertySchema
from ._generated import UnknownMcpServer as UnknownMcpServer
from ._generated import UnknownMultiSelectItems as UnknownMultiSelectItems
from ._generated import UnknownPlanUpdateContent as UnknownPlanUpdateContent
from ._generated import UnknownReplayFrom as UnknownReplayFrom
from ._generated import UnknownRequestPermissionOutcome as UnknownRequestPermissionOutcome
from ._generated import UnknownRequestPermissionSubject as UnknownRequestPermissionSubject
from ._generated import UnknownSessionConfigOption as UnknownSessionConfigOption
from ._generated import UnknownSessionUpdate as UnknownSessionUpdate
from ._generated import UnknownSetSessionConfigOptionRequest as UnknownSetSessionConfigOptionRequest
from ._generated import UnknownStateUpdate as UnknownStateUpdate
from ._generated import UnknownToolCallContent as UnknownToolCallContent
from ._generated import UnsupportedProtocolVersionErrorData as UnsupportedProtocolVersionErrorData
from ._generated import UpdateSessionNotification as UpdateSessionNotification
from ._generated import UsageUpdate as UsageUpdate
from ._generated import UserMessage as UserMessage
from ._generated import UserMessageChunk as UserMessageChunk

__all__: tuple[str, ...] = (
    "AGENT_METHODS",
    "AUTHENTICATION_REQUIRED",
    "AbsolutePath",
    "AcpStruct",
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
    "MethodSpec",
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
    "UnknownVariant",
    "UnsupportedProtocolVersionErrorData",
    "UpdateSessionNotification",
    "UsageUpdate",
    "UserMessage",
    "UserMessageChunk",
    "convert",
    "decode",
    "encode",
    "to_builtins",
)
