"""Testing kit for ACP agents: a mock client, state reconstruction and conformance checks.

:class:`MockClient` drives any ACP agent (an :class:`acpio.Agent` in-process,
or any command as a subprocess) the way an editor would, answers permission
requests by :class:`PermissionPolicy` and elicitations by
:class:`ElicitationPolicy`, rebuilds what an editor displays
(:class:`SessionView`), checks every message against the protocol
(:class:`ConformanceChecker`) and records the :class:`Transcript`. The pytest
plugin adds the ``acp_client`` and ``acp_client_factory`` fixtures and the
``acp_agent`` marker (see ``acpio.testing._pytest_plugin``)::

    async with MockClient(MyAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        result = await session.prompt("run ls")
        assert result.stop_reason == "end_turn"
"""

from ._client import MockClient as MockClient
from ._client_session import ClientSession as ClientSession
from ._client_session import PromptInput as PromptInput
from ._client_session import Turn as Turn
from ._client_session import TurnResult as TurnResult
from ._conformance import ConformanceChecker as ConformanceChecker
from ._elicitation_policy import ElicitationPolicy as ElicitationPolicy
from ._elicitation_policy import ElicitationPolicyError as ElicitationPolicyError
from ._elicitation_policy import ElicitationRequest as ElicitationRequest
from ._policy import PermissionPolicy as PermissionPolicy
from ._policy import PermissionPolicyError as PermissionPolicyError
from ._policy import PermissionRequest as PermissionRequest
from ._profiles import PROFILES as PROFILES
from ._profiles import ClientProfile as ClientProfile
from ._remote_client import Remote as Remote
from ._remote_client import RemoteLink as RemoteLink
from ._remote_client import ResumeFailed as ResumeFailed
from ._rules import RULES as RULES
from ._rules import ConformanceError as ConformanceError
from ._rules import ConformanceReport as ConformanceReport
from ._rules import Rule as Rule
from ._rules import Violation as Violation
from ._transcript import Transcript as Transcript
from ._transcript import TranscriptEntry as TranscriptEntry
from ._v1_rules import V1_RULES as V1_RULES
from ._view import ClientView as ClientView
from ._view import MessageView as MessageView
from ._view import PlanView as PlanView
from ._view import SessionView as SessionView
from ._view import TerminalView as TerminalView
from ._view import ToolCallView as ToolCallView
from ._waits import AgentExitedError as AgentExitedError
from ._waits import AgentTimeoutError as AgentTimeoutError
from ._waits import MockClientError as MockClientError

__all__ = (
    "PROFILES",
    "RULES",
    "V1_RULES",
    "AgentExitedError",
    "AgentTimeoutError",
    "ClientSession",
    "ClientProfile",
    "ClientView",
    "ConformanceChecker",
    "ConformanceError",
    "ConformanceReport",
    "ElicitationPolicy",
    "ElicitationPolicyError",
    "ElicitationRequest",
    "MessageView",
    "MockClient",
    "MockClientError",
    "PermissionPolicy",
    "PermissionPolicyError",
    "PermissionRequest",
    "PlanView",
    "PromptInput",
    "Remote",
    "RemoteLink",
    "ResumeFailed",
    "Rule",
    "SessionView",
    "TerminalView",
    "ToolCallView",
    "Transcript",
    "TranscriptEntry",
    "Turn",
    "TurnResult",
    "Violation",
)
