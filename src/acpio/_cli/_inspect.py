"""``acpio inspect``: an interactive client for any agent, and ``--replay`` of a recording.

The agent runs under the testing kit's mock client (a subprocess over stdio).
Prompts are read from standard input, a terminal or a script alike: a line is
a prompt, a line ending with a backslash continues on the next. Permission
requests are answered at a prompt (or by ``--allow``/``--reject``). The first
Ctrl-C sends ``session/cancel`` for the running turn; a second one, Ctrl-C at
the prompt, Ctrl-D or ``/quit`` quits. In a terminal, Ctrl-D quits at any
moment, a turn running or not, and whatever the agent sends: permission
requests beyond :data:`MAX_WAITING_PERMISSIONS` waiting for the user are
dismissed at once (and not shown one by one), so a flood of them neither
queues up nor keeps the event loop from seeing Ctrl-C. Everything the agent
sends is shown through :mod:`._safe_text`. Protocol violations are shown
inline as they are found. ``--record`` writes the transcript as JSON Lines;
``--replay`` rebuilds the same log from a recording, no agent needed.

Elicitations are answered at a prompt too (a form field by field;
``--allow`` accepts with the defaults, or declines when a required field has
none; ``--reject`` declines). The session's
config options and slash commands are shown as the agent reports them;
``/config`` shows the options again and ``/config <id> <value>`` changes one
(``session/set_config_option``).
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import anyio
from rich.rule import Rule
from rich.text import Text

from .._errors import RequestError
from .._json import as_list, as_object
from ..testing import (
    ClientSession,
    ConformanceChecker,
    ElicitationPolicy,
    ElicitationRequest,
    MockClient,
    PermissionPolicy,
    PermissionRequest,
    Transcript,
    Turn,
)
from ._blocks import PROMPT_MARK
from ._drive import CommandStep, open_agent
from ._failure import CliError
from ._features import CONFIG_HELP, ElicitationAsker, config_block, parse_config_command
from ._input import LineInput
from ._log import SessionLog
from ._output import Output

__all__ = ["run_inspect", "run_replay"]

PolicyMode = Literal["ask", "allow", "reject"]

_ALLOW_WORDS: Final = frozenset({"y", "yes", "a", "allow"})
_ALWAYS_WORDS: Final = frozenset({"always", "aa"})
_REJECT_WORDS: Final = frozenset({"n", "no", "r", "reject"})
_CANCEL_WORDS: Final = frozenset({"c", "cancel"})
_QUIT_COMMANDS: Final = frozenset({"/quit", "/exit", "/q"})
_ANSWER_HELP: Final = "the option's number, y (allow), n (reject) or c (dismiss)"
#: Permission requests that may wait for the user at once; more are dismissed unseen.
MAX_WAITING_PERMISSIONS: Final = 16
#: Seconds quitting may take (stopping the agent, flushing) before the agent is killed and
#: the command exits anyway: Ctrl-C and Ctrl-D work whatever the agent does.
QUIT_GRACE: Final = 10.0


@dataclass
class _State:
    """What the Ctrl-C handler needs to know about the turn in flight."""

    session: ClientSession | None = None
    turn: Turn | None = None
    busy: bool = False
    cancel_requested: bool = False
    interrupted: bool = False
    quit_by: str | None = None
    turns: int = 0
    main_scope: anyio.CancelScope | None = None
    #: The agent's process id, to kill it if quitting does not finish in time.
    agent_pid: int | None = None
    #: What to tell the user when quitting had to be forced (the usual closing lines).
    summary: Callable[[], str] = field(default=lambda: "")
    _watchdog: threading.Timer | None = None

    def quit(self, by: str) -> None:
        """End the conversation now (Ctrl-C twice, or Ctrl-D in a terminal).

        The orderly way out (stop the agent, flush) gets :data:`QUIT_GRACE` seconds;
        then a watchdog thread, which needs nothing from the event loop, kills the
        agent's process group and exits the process.
        """
        if self.quit_by is None:
            self.quit_by = by
        self.interrupted = True
        if self.main_scope is not None:
            self.main_scope.cancel()
        if self._watchdog is None:
            self._watchdog = threading.Timer(QUIT_GRACE, self._force_exit)
            self._watchdog.daemon = True
            self._watchdog.start()

    def done(self) -> None:
        """The orderly way out finished: no forced exit."""
        if self._watchdog is not None:
            self._watchdog.cancel()

    def _force_exit(self) -> None:
        if self.agent_pid is not None:
            try:
                os.killpg(self.agent_pid, signal.SIGKILL)
            except OSError:
                with contextlib.suppress(OSError):
                    os.kill(self.agent_pid, signal.SIGKILL)
        message = (
            f"{self.summary()}quit ({self.quit_by}): the agent did not stop within "
            f"{QUIT_GRACE:g} s, so it was killed\n"
        )
        with contextlib.suppress(OSError):
            os.write(2, message.encode())
        os._exit(0)


def parse_answer(text: str, request: PermissionRequest) -> Mapping[str, object] | None:
    """The outcome a typed answer selects, or ``None`` when it is not understood."""
    answer = text.strip()
    word = answer.lower()
    option_id: str | None = None
    if word.isdigit():
        index = int(word) - 1
        ids = request.option_ids
        option_id = ids[index] if 0 <= index < len(ids) else None
    elif word in _ALWAYS_WORDS:
        option_id = request.option_of_kind("allow_always")
    elif word in _ALLOW_WORDS:
        option_id = request.option_of_kind("allow_once", "allow_always")
    elif word in _REJECT_WORDS:
        option_id = request.option_of_kind("reject_once", "reject_always")
    elif word in _CANCEL_WORDS:
        return {"outcome": "cancelled"}
    elif answer in request.option_ids:
        option_id = answer
    if option_id is None:
        return None
    return {"outcome": "selected", "optionId": option_id}


class _Asker:
    """Asks the person at the keyboard to answer each permission request (one at a time)."""

    def __init__(self, output: Output, reader: LineInput, state: _State) -> None:
        self.output = output
        self.reader = reader
        self.state = state
        self.log: SessionLog | None = None
        self.client: MockClient | None = None
        self.lock = anyio.Lock()
        self.eof = False
        self.waiting = 0
        self.dismissed = 0

    async def __call__(self, request: PermissionRequest) -> Mapping[str, object]:
        if self.waiting >= MAX_WAITING_PERMISSIONS or self.state.quit_by is not None:
            # A flood: dismissed unseen, so neither the queue nor the log grows with it.
            if not self.dismissed and self.state.quit_by is None:
                self.output.print(
                    Text(
                        f"⚠ more than {MAX_WAITING_PERMISSIONS} permission requests wait at "
                        "once: the agent's further requests are dismissed unseen",
                        style="yellow",
                    )
                )
            self.dismissed += 1
            return {"outcome": "cancelled"}
        self.waiting += 1
        try:
            return await self._ask(request)
        finally:
            self.waiting -= 1

    async def _ask(self, request: PermissionRequest) -> Mapping[str, object]:
        async with self.lock:
            if self.eof or self.state.quit_by is not None:
                return {"outcome": "cancelled"}
            if self.log is not None and self.client is not None:
                self.log.sync(self.client.transcript)  # the prompt is printed first
                self.log.show_permission(request.request_id)
            self.output.pause()
            while True:
                if self.eof or self.state.quit_by is not None:
                    return {"outcome": "cancelled"}
                if self.reader.interactive:
                    self.output.print(Text(f"  answer ({_ANSWER_HELP}): ", style="bold"), end="")
                line = await self.reader.readline()
                if line is None:
                    self.eof = True
                    if self.reader.interactive:
                        self.state.quit("Ctrl-D")
                    continue
                outcome = parse_answer(line, request)
                if outcome is not None:
                    self.output.resume()
                    return outcome
                self.output.print(
                    Text(f"  {line.strip()!r} is not an answer: type {_ANSWER_HELP}", "yellow")
                )


async def _watch_interrupts(state: _State, output: Output) -> None:
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            turn = state.turn
            if state.busy and not state.cancel_requested and (turn is None or not turn.done):
                state.cancel_requested = True
                output.print(
                    Text("^C cancelling the turn (press Ctrl-C again to quit)", style="yellow")
                )
                if turn is not None and state.session is not None:
                    await state.session.cancel()
            else:
                state.quit("Ctrl-C")


def _accept_with_defaults(request: ElicitationRequest) -> ElicitationPolicy:
    """``--allow``: accept with the defaults, or decline a form whose required fields have none."""
    schema_ = request.requested_schema
    props = as_object(schema_.get("properties")) or {}
    missing = [
        name
        for name in as_list(schema_.get("required")) or ()
        if not isinstance(name, str)
        or (prop := as_object(props.get(name))) is None
        or "default" not in prop
    ]
    return ElicitationPolicy.decline() if missing else ElicitationPolicy.accept()


def _elicitation_policy(mode: PolicyMode, asker: ElicitationAsker) -> ElicitationPolicy:
    if mode == "allow":
        return ElicitationPolicy.call(_accept_with_defaults)
    if mode == "reject":
        return ElicitationPolicy.decline()
    return ElicitationPolicy.call(asker)


def _policy(mode: PolicyMode, asker: _Asker) -> PermissionPolicy:
    if mode == "allow":
        return PermissionPolicy.allow()
    if mode == "reject":
        return PermissionPolicy.reject()
    return PermissionPolicy.call(asker)


async def run_inspect(
    output: Output,
    command: list[str],
    *,
    policy: PolicyMode = "ask",
    record: str | None = None,
    cwd: str | None = None,
    timeout: float = 30.0,  # noqa: ASYNC109 - the client's default request timeout
    reader: LineInput | None = None,
    protocol_version: int = 2,
) -> int:
    """Talk to the agent until the input ends or the user quits; 0 unless the agent failed.

    ``protocol_version=1`` speaks ACP v1, as today's editors do (the client runs the agent's
    terminal commands and serves its file reads and writes).
    """
    reader = reader if reader is not None else LineInput()
    directory = os.path.realpath(cwd or os.getcwd())
    if not os.path.isdir(directory):
        raise CliError(f"--cwd {directory} is not a directory", code=2)
    state = _State()
    asker = _Asker(output, reader, state)
    elicitation_asker = ElicitationAsker(output, reader, asker.lock)
    answered_by = {"ask": "you", "allow": "--allow", "reject": "--reject"}[policy]
    log = SessionLog(
        output,
        answered_by=answered_by,
        label=shlex.join(command),
        numbered_options=policy == "ask",
        permissions_on_demand=policy == "ask",
    )
    started: list[MockClient] = []
    step = CommandStep()
    turns = 0
    try:
        async with open_agent(
            command,
            log,
            output,
            step,
            policy=_policy(policy, asker),
            cwd=directory,
            timeout=timeout,
            show_violations=True,
            started=started,
            elicitation=_elicitation_policy(policy, elicitation_asker),
            protocol_version=protocol_version,
        ) as client:
            asker.log = log
            asker.client = client
            state.agent_pid = client.pid
            state.summary = lambda: (
                f"{asker.dismissed} permission requests dismissed unseen\n"
                if asker.dismissed
                else ""
            )
            elicitation_asker.before.append(lambda: log.sync(client.transcript))
            step.doing = "creating a session (session/new)"
            session = state.session = await client.new_session(directory)
            log.sync(client.transcript)
            output.note(
                "Type a prompt and press Enter (end a line with \\ to continue it on the next). "
                "Ctrl-C cancels the running turn, a second Ctrl-C quits; so do Ctrl-D and /quit. "
                f"{CONFIG_HELP}."
            )
            async with anyio.create_task_group() as group:
                group.start_soon(_watch_interrupts, state, output)
                with anyio.CancelScope() as scope:
                    state.main_scope = scope
                    turns = await _converse(
                        output=output,
                        reader=reader,
                        client=client,
                        session=session,
                        log=log,
                        state=state,
                        step=step,
                    )
                group.cancel_scope.cancel()
    finally:
        output.close()
        if record is not None and started:
            _write_record(output, started[0], record)
        state.done()
    if asker.dismissed:
        output.note(
            f"{asker.dismissed} permission request{'s' if asker.dismissed != 1 else ''} "
            f"dismissed unseen: more than {MAX_WAITING_PERMISSIONS} waited at once"
        )
    if state.interrupted:
        turns = state.turns
        output.note(f"quit ({state.quit_by or 'Ctrl-C'})")
    output.note(f"{turns} turn{'s' if turns != 1 else ''}; the agent was stopped.")
    return 0


async def _converse(
    *,
    output: Output,
    reader: LineInput,
    client: MockClient,
    session: ClientSession,
    log: SessionLog,
    state: _State,
    step: CommandStep,
) -> int:
    turns = 0
    while True:
        output.pause()
        if reader.interactive:
            output.print(Text(PROMPT_MARK, style="bold cyan"), end="")
        text = await reader.read_prompt()
        if text is None and reader.interactive:
            output.print("")
        if text is None or text.strip() in _QUIT_COMMANDS:
            return turns
        if not text.strip():
            continue
        if await _config_command(output, session, log, client, text):
            continue
        if reader.interactive:
            # The agent echoes the prompt as the user message: show it once.
            output.erase_lines(text.count("\n") + 1)
        output.resume()
        state.busy = True
        state.cancel_requested = False
        step.doing = f"sending the prompt {text.splitlines()[0][:60]!r}"
        output.status("waiting for the agent")
        turn = state.turn = await session.start_prompt(text)
        turns += 1
        state.turns = turns
        if state.cancel_requested:
            await session.cancel()
        step.doing = "waiting for the turn to end (idle)"
        if reader.interactive:
            async with anyio.create_task_group() as group:
                group.start_soon(_quit_at_eof, reader, state)
                await turn.wait(timeout=math.inf)
                group.cancel_scope.cancel()
        else:
            # A script's end comes right after its last prompt: that turn still runs out.
            await turn.wait(timeout=math.inf)
        state.turn = None
        state.busy = False
        output.status(None)
        log.sync(client.transcript)


async def _config_command(
    output: Output, session: ClientSession, log: SessionLog, client: MockClient, text: str
) -> bool:
    """Handle ``/config`` typed at the prompt; False when ``text`` is a prompt for the agent."""
    options = session.view.config_options or []
    command = parse_config_command(text, options)
    if command is None:
        return False
    output.resume()
    if command == "":
        output.print(config_block(options))
    elif isinstance(command, str):
        output.print(Text(command, style="yellow"))
    else:
        config_id, value = command
        try:
            state = await session.set_config_option(config_id, value)
        except RequestError as exc:
            output.print(Text(f"✗ {exc.message}", style="red"))
        else:
            log.sync(client.transcript)
            output.print(config_block(state))
    return True


async def _quit_at_eof(reader: LineInput, state: _State) -> None:
    """Ctrl-D while a turn runs quits, as it does at the prompt."""
    await reader.wait_eof()
    state.quit("Ctrl-D")


def _write_record(output: Output, client: MockClient, path: str) -> None:
    try:
        client.transcript.write_jsonl(path)
    except OSError as exc:
        raise CliError(f"could not write the transcript to {path}: {exc.strerror or exc}") from None
    output.note(f"transcript written to {path} ({len(client.transcript)} messages)")


async def run_replay(output: Output, path: str) -> int:
    """Show a recorded session again, rebuilt from the recorded messages."""
    try:
        transcript = Transcript.read_jsonl(path)
    except OSError as exc:
        raise CliError(f"could not read {path}: {exc.strerror or exc}", code=2) from None
    except ValueError as exc:
        raise CliError(
            f"{path} is not a transcript written by `acpio inspect --record` "
            f"(JSON Lines of {{time, direction, message}}): {exc}",
            code=2,
        ) from None
    await anyio.lowlevel.checkpoint()
    output.print(Rule(Text(f"replay of {os.path.basename(path)}", style="bold")))
    log = SessionLog(output, checker=ConformanceChecker(strict=False), feed_checker=True)
    for entry in transcript:
        log.feed(entry)
    log.finish()
    turns = len(log.stop_reasons)
    output.note(
        f"{len(transcript)} messages, {turns} turn{'s' if turns != 1 else ''}"
        + (f" (stop reasons: {', '.join(map(str, log.stop_reasons))})" if turns else "")
    )
    return 0
