"""Running an agent under the mock client while the session log follows it.

:func:`open_agent` starts the agent (a subprocess, through the testing kit's
:class:`MockClient`, never strict: the CLI shows violations, it does not stop
at them), keeps a :class:`SessionLog` in step with the transcript in a
background task, and turns any failure into a :class:`CliError` paragraph that
names the step that failed and ends with the agent's stderr.
"""

from __future__ import annotations

import contextlib
import math
import shlex
from collections.abc import AsyncGenerator, Sequence
from typing import Final, cast

import anyio

from .._errors import AcpError
from ..testing import ElicitationPolicy, MockClient, PermissionPolicy
from ._failure import CliError, agent_failure
from ._log import SessionLog
from ._output import Output

__all__ = ["CommandStep", "follow", "leaf_error", "open_agent"]

#: The log catches up at least this often even if no change woke it (a client's
#: answer is written after the change it announces).
_TICK: Final = 0.1


class CommandStep:
    """What the command is doing right now, named in an error report."""

    def __init__(self, doing: str = "starting up (initialize)") -> None:
        self.doing = doing


def leaf_error(exc: BaseException) -> BaseException:
    """The exception that matters inside (nested) exception groups: a :class:`CliError`
    first, then any other exception that is not a cancellation."""
    if not isinstance(exc, BaseExceptionGroup):
        return exc
    leaves: list[BaseException] = []

    def walk(group: BaseExceptionGroup[BaseException]) -> None:
        for inner in group.exceptions:
            if isinstance(inner, BaseExceptionGroup):
                walk(cast("BaseExceptionGroup[BaseException]", inner))
            else:
                leaves.append(inner)

    group = cast("BaseExceptionGroup[BaseException]", exc)
    walk(group)
    cancelled = anyio.get_cancelled_exc_class()
    for kind in (CliError, KeyboardInterrupt, Exception):
        for leaf in leaves:
            if isinstance(leaf, kind) and not isinstance(leaf, cancelled):
                return leaf
    return leaves[0] if leaves else group


class _Grown:
    """True once the transcript holds more than ``seen`` messages."""

    def __init__(self, client: MockClient, seen: int) -> None:
        self.client = client
        self.seen = seen

    def __call__(self) -> bool:
        return len(self.client.transcript) != self.seen


async def follow(client: MockClient, log: SessionLog) -> None:
    """Keep ``log`` in step with the client's transcript until cancelled."""
    while True:
        log.sync(client.transcript)
        grown = _Grown(client, len(client.transcript))
        with anyio.move_on_after(_TICK):
            try:
                await client.wait_for(grown, timeout=math.inf, what="a message")
            except Exception:
                # The agent went away or the client failed: the command reports
                # that; the log keeps showing whatever still arrives.
                await anyio.sleep(_TICK)


@contextlib.asynccontextmanager
async def open_agent(
    command: Sequence[str],
    log: SessionLog,
    output: Output,
    step: CommandStep,
    *,
    policy: PermissionPolicy,
    cwd: str | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 - the client's default request timeout
    exit_timeout: float = 3.0,
    show_violations: bool = False,
    started: list[MockClient] | None = None,
    elicitation: ElicitationPolicy | None = None,
    protocol_version: int = 2,
) -> AsyncGenerator[MockClient]:
    """Start the agent, follow it with ``log``; failures become a :class:`CliError`.

    With ``show_violations`` the log shows the client's protocol violations as
    they are found. The client is appended to ``started`` before it starts
    (so a caller can save its transcript even when starting failed). With
    ``elicitation`` the client advertises elicitation and answers it so.
    """
    client = MockClient(
        list(command),
        protocol_version=protocol_version,
        # A v1 editor runs the agent's commands in its terminal and serves its file reads.
        client_terminal=protocol_version == 1,
        client_fs=protocol_version == 1,
        policy=policy,
        elicitation=elicitation,
        strict=False,
        timeout=timeout,
        cwd=cwd,
        exit_timeout=exit_timeout,
    )
    if show_violations:
        log.checker = client.checker
    if started is not None:
        started.append(client)
    output.status(f"starting {shlex.join(command)}")
    try:
        async with client:
            output.status(None)
            async with anyio.create_task_group() as group:
                group.start_soon(follow, client, log)
                yield client
                step.doing = "shutting down"
                log.sync(client.transcript)
                group.cancel_scope.cancel()
    except BaseException as exc:
        leaf = leaf_error(exc)
        if isinstance(leaf, AcpError | OSError):
            raise agent_failure(command, client, leaf, step.doing) from None
        if leaf is not exc and not isinstance(leaf, anyio.get_cancelled_exc_class()):
            raise leaf from None
        raise
    finally:
        output.status(None)
        log.sync(client.transcript)
