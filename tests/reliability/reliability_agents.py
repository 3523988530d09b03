"""Agents for the reliability tests; run one as ``python reliability_agents.py <name> <backend>``.

:class:`ScriptAgent` does what each prompt's text says, so one agent covers
every scenario: ``chunks N SIZE`` streams N message chunks of SIZE bytes
(numbered, so order and completeness can be checked), ``forever`` streams
until cancelled, ``terminal N SIZE`` streams N terminal writes, ``raise``
fails, ``hang`` waits until cancelled, ``stubborn TENTHS`` ignores
cancellation that many tenths of a second, ``permission`` asks once and reports the outcome,
``permissions K`` asks K times at once in one tool call, ``run COMMAND``
runs a shell command in a terminal (without asking), ``tryrun COMMAND``
too, reporting an error from it as a message and going on, ``guarded PATH``
appends a line to PATH only when allowed (with option ids unique to each
request). Every call records
what it sent in :attr:`ScriptAgent.sent`, so tests compare it with what arrived.

Extension requests: ``_echo`` answers its params, ``_hang`` waits until
cancelled, ``_raise`` fails, ``_stubborn`` ignores cancellation for a while.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel
import msgspec

import acpio


@dataclass
class Ledger:
    """What the agent sent for one session (the truth the client's view must match)."""

    chunks: int = 0
    chunk_bytes: int = 0
    terminal_bytes: int = 0
    tool_calls: dict[str, str] = field(default_factory=dict)  # id -> final status
    outcomes: list[str] = field(default_factory=list)


class ScriptAgent(acpio.Agent):
    """Does what the prompt says (see the module docstring)."""

    info = acpio.Implementation(name="script-agent", version="1.0.0")

    def __init__(self) -> None:
        self.sent: dict[str, Ledger] = defaultdict(Ledger)
        self.started = anyio.Event()
        self.progress = 0  # chunks sent by ``chunks``/``forever`` so far, all sessions
        self.requests = 0  # permission requests made by ``guarded``

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        self.started.set()
        words = acpio.text_of(prompt).split()
        verb, args = (words[0], words[1:]) if words else ("", [])
        ledger = self.sent[session.id]
        numbers = [int(a) for a in args if a.isdecimal() and len(a) < 6]
        needed = {"chunks": 2, "terminal": 2, "stubborn": 1, "permissions": 1}.get(verb, 0)
        if len(numbers) < needed:
            await session.message(f"{verb} needs {needed} small numbers")
            return "end_turn"
        if verb == "chunks":
            count, size = numbers[0], numbers[1]
            stream = session.message_stream()
            for index in range(count):
                text = f"{index:08d}".ljust(size, "x")
                await stream.write(text)
                ledger.chunks += 1
                ledger.chunk_bytes += len(text)
                self.progress += 1
        elif verb == "forever":
            stream = session.message_stream()
            index = 0
            while True:
                await stream.write(f"{index:08d} ")
                index += 1
                self.progress += 1
                await anyio.lowlevel.checkpoint()
        elif verb == "terminal":
            count, size = numbers[0], numbers[1]
            async with session.tool_call("terminal", kind="execute") as call:
                terminal = await call.terminal(command="generated")
                for index in range(count):
                    data = f"{index:08d}".encode().ljust(size, b".")
                    await terminal.write(data)
                    ledger.terminal_bytes += len(data)
                await terminal.exit(0)
            ledger.tool_calls[call.id] = call.status
        elif verb == "run":
            # No permission asked: for tests of process cleanup only.
            command = acpio.text_of(prompt).strip()[len("run ") :]
            async with session.tool_call("run", kind="execute") as call:
                terminal = await call.terminal(command=command)
                await terminal.run_shell(command, cwd=session.cwd)
        elif verb == "tryrun":
            command = acpio.text_of(prompt).strip()[len("tryrun ") :]
            async with session.tool_call("run", kind="execute") as call:
                terminal = await call.terminal(command=command)
                try:
                    result = await terminal.run_shell(command, cwd=session.cwd)
                except acpio.AcpError as exc:
                    await session.message(f"the command failed: {exc}")
                else:
                    await session.message(f"exit code {result.exit_code}")
        elif verb == "raise":
            raise RuntimeError("boom from the prompt handler")
        elif verb == "hang":
            await anyio.sleep_forever()
        elif verb == "stubborn":
            with anyio.CancelScope(shield=True):
                await anyio.sleep(numbers[0] / 10)
            await session.message("stubborn work went on after its idle")
        elif verb == "permission":
            async with session.tool_call("guarded", kind="execute") as call:
                outcome = await call.request_permission(acpio.permission.ALLOW_OR_REJECT)
                ledger.outcomes.append(outcome.kind if not outcome.allowed else "allowed")
                await session.message(f"outcome {outcome.kind} allowed={outcome.allowed}")
            ledger.tool_calls[call.id] = call.status
        elif verb == "guarded":
            # Fresh option ids in every request: an answer naming another request's
            # option must not count.
            self.requests += 1
            options = (
                acpio.permission.option(f"allow-{self.requests}", "Allow", "allow_once"),
                acpio.permission.option(f"reject-{self.requests}", "Reject", "reject_once"),
            )
            async with session.tool_call(f"append to {args[0]}", kind="edit") as call:
                outcome = await call.request_permission(options)
                if outcome.allowed:
                    with open(args[0], "a") as file:  # noqa: ASYNC230 - tiny, test only
                        file.write("ran\n")
                ledger.outcomes.append("allowed" if outcome.allowed else outcome.kind)
        elif verb == "permissions":
            count = numbers[0]
            async with session.tool_call("many", kind="execute") as call:
                errors: list[str] = []

                async def ask() -> None:
                    try:
                        outcome = await call.request_permission(acpio.permission.ALLOW_OR_REJECT)
                    except acpio.LocalProtocolError as exc:
                        errors.append(str(exc))
                    else:
                        ledger.outcomes.append(outcome.kind)

                async with anyio.create_task_group() as group:
                    for _ in range(count):
                        group.start_soon(ask)
                await session.message(f"refused {len(errors)}: {errors[:1]}")
        else:
            await session.message(f"unknown command {verb!r}")
        return "end_turn"

    async def ext_method(self, method: str, params: msgspec.Raw | None) -> object:
        if method == "_echo":
            return msgspec.json.decode(params) if params is not None else None
        if method == "_hang":
            await anyio.sleep_forever()
        if method == "_raise":
            raise RuntimeError("boom from an extension method")
        if method == "_stubborn":
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.3)
            return "finished anyway"
        raise acpio.RequestError.method_not_found(method)


AGENTS: dict[str, type[acpio.Agent]] = {"script": ScriptAgent}


def main(argv: list[str]) -> None:
    """``NAME BACKEND [--recursion-limit N] [--shutdown-grace SECONDS]``."""
    name, backend, *rest = argv
    options = dict(zip(rest[::2], rest[1::2], strict=True))
    if "--recursion-limit" in options:
        # Programs do raise it; the agent must then still refuse deep input safely.
        sys.setrecursionlimit(int(options["--recursion-limit"]))
    limits = acpio.AgentLimits(shutdown_grace=float(options.get("--shutdown-grace", 2.0)))
    acpio.run(AGENTS[name](), backend=backend, limits=limits)


if __name__ == "__main__":
    main(sys.argv[1:])
