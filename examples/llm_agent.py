"""An LLM agent: a model loop whose tools run through acpio, their output going back to the model.

Each prompt adds a user message to the session's conversation and runs the loop:
the model streams its answer (``agent_message_chunk``) and its reasoning
(``agent_thought_chunk``) and may ask for tools; the agent runs each one as an ACP
tool call and gives the result back to the model, until the model answers
without asking for a tool. The tools:

* ``update_plan``: the model's plan, shown as the session's plan (``plan_update``);
* ``read_file``: a ``read`` tool call with the file's location; the text goes back;
* ``run_command``: asks permission for the exact command, runs it in a terminal
  the editor shows live, and gives the model the exit code and the (bounded) output;
* ``write_file``: shows the diff of the real file, asks, then writes atomically only
  if the file is still what the diff showed;
* every tool of the MCP servers the editor passed (``acpio.mcp``, the ``mcp`` extra),
  each call a tool call with the server's content, the text going back.

A "model" config option (category ``model``) picks the model; the next turn uses
the one chosen. A "mode" option (category ``mode``: v1 editors show it as their mode
selector) is ``code`` (every tool) or ``ask`` (the tools that change nothing: the
plan and ``read_file``). ``/compact`` asks the model for a summary of the conversation
(shown as a compaction) and replaces the history with it. A cancelled turn ends
``cancelled`` with no branch for it here: the running command is killed, a
pending permission request is withdrawn, and each open tool call ends
``cancelled``; the history keeps an answer for every tool use so the next turn
can go on.

The model is anything with the :class:`Model` protocol. By default two scripted
models run offline and deterministically (useful to try the agent and in tests).
To use a real one, set ``ACPIO_LLM_API_KEY`` (or ``OPENAI_API_KEY``) and optionally
``ACPIO_LLM_BASE_URL`` (any OpenAI-compatible ``/chat/completions`` endpoint:
OpenAI, vLLM, Ollama, LiteLLM...; default ``https://api.openai.com/v1``) and
``ACPIO_LLM_MODELS`` (comma-separated, first is the default; default
``gpt-4o-mini``): those models join the picker, first. :class:`ChatCompletionsModel`
uses the standard library only. For another provider, write a class with a
``name`` and a ``stream()`` that yields :class:`TextDelta`, :class:`ThoughtDelta`
and :class:`ToolUse`, and put it in ``LlmAgent.models``.

Run it as ``python examples/llm_agent.py`` (ACP draft v2 over stdio).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import logging
import os
import re
import urllib.request
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

import anyio

import acpio
from acpio import schema

try:  # The mcp extra: pip install "acpio[mcp]". Without it the agent has no MCP tools.
    import acpio.mcp as acpio_mcp
except ImportError:
    acpio_mcp = None  # type: ignore[assignment,unused-ignore]

logger = logging.getLogger("llm_agent")

MAX_ROUNDS = 25  # model calls per turn: a model that keeps asking for tools is stopped
READ_LIMIT = 64_000  # characters of a file given to the model
OUTPUT_LIMIT = 16_000  # bytes of command output given to the model (head and tail)
SYSTEM = "You are a coding agent working in {cwd}. Use the tools; keep answers short."
COMPACT = "Summarize the conversation so far in a few sentences, for yourself to continue from."

# ------------------------------------------------------------------ the model side


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ThoughtDelta:
    """A piece of the model's reasoning (shown as a thought, not part of the answer)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """The model asks for a tool; ``id`` is the model's own, to pair the result with it."""

    id: str
    name: str
    arguments: dict[str, object]


ModelEvent = TextDelta | ThoughtDelta | ToolUse


@dataclass(slots=True)
class Message:
    """One message of the conversation, in the shape chat models take."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_uses: list[ToolUse] = field(default_factory=list)  # assistant: the tools it asked for
    tool_use_id: str = ""  # tool: the ToolUse this result answers
    name: str = ""  # tool: the tool's name


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: a name, what it does, its arguments' JSON Schema."""

    name: str
    description: str
    parameters: Mapping[str, object]


class Model(Protocol):
    """A chat model that streams: text and thought deltas as they come, tool uses at the end."""

    name: str

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> AsyncGenerator[ModelEvent, None]: ...


class ScriptedModel:
    """A deterministic stand-in for a model, so the agent runs offline and in tests.

    It reads the last user message line by line: ``read PATH``, ``run COMMAND``,
    ``write PATH TEXT`` and ``use TOOL JSON`` (any tool, e.g. an MCP one) are steps,
    done one tool call per reply with the plan kept up to date; then it answers
    with what each tool returned (so a test sees what reached the model). Any
    other prompt is echoed with the size of the context it was given.
    """

    _ids = itertools.count(1)

    def __init__(self, name: str, *, thinks: bool) -> None:
        self.name = name
        self.thinks = thinks

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> AsyncGenerator[ModelEvent, None]:
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        request = messages[last_user].content
        if request.startswith(COMPACT):
            asked = [m.content for m in messages[:last_user] if m.role == "user"]
            yield TextDelta(f"{last_user - 1} messages; the user asked: {'; '.join(asked)}.")
            return
        steps = [s for s in (self._step(line, tools) for line in request.splitlines()) if s]
        results = [m for m in messages[last_user:] if m.role == "tool" and m.name != "update_plan"]
        if self.thinks and len(messages) == last_user + 1:
            for word in f"The user wants {len(steps)} step(s).".split(" "):
                yield ThoughtDelta(word + " ")
        done, last = len(results), messages[-1]
        if steps and (done < len(steps) or last.name != "update_plan"):
            plan = [
                {"step": label, "status": "completed" if i < done else "in_progress"}
                for i, (label, _, _) in enumerate(steps)
                if i <= done
            ] + [{"step": label, "status": "pending"} for label, _, _ in steps[done + 1 :]]
            yield self._use("update_plan", {"steps": plan})
            if done < len(steps):
                yield self._use(steps[done][1], steps[done][2])
            return
        if steps:
            answer = "\n".join(f"- {m.name}: {m.content.strip()[:300]}" for m in results)
        else:
            answer = f"You said: {request} ({len(messages)} messages in context)"
        for piece in re.findall(r"\S*\s*", f"[{self.name}] {answer}"):
            if piece:
                yield TextDelta(piece)

    def _use(self, name: str, arguments: dict[str, object]) -> ToolUse:
        return ToolUse(f"scripted-{next(self._ids)}", name, arguments)

    @staticmethod
    def _step(line: str, tools: Sequence[ToolSpec]) -> tuple[str, str, dict[str, object]] | None:
        verb, _, rest = line.strip().partition(" ")
        if verb == "read" and rest:
            return f"Read {rest}", "read_file", {"path": rest}
        if verb == "run" and rest:
            return f"Run {rest}", "run_command", {"command": rest}
        if verb == "write" and rest:
            path, _, text = rest.partition(" ")
            return f"Write {path}", "write_file", {"path": path, "content": text + "\n"}
        if verb == "use" and rest:
            wanted, _, args = rest.partition(" ")
            names = [t.name for t in tools if t.name == wanted or t.name.endswith("__" + wanted)]
            return f"Use {wanted}", names[0] if names else wanted, json.loads(args or "{}")
        return None


class ChatCompletionsModel:
    """A real model behind an OpenAI-compatible ``/chat/completions`` endpoint, streamed.

    Standard library only: the blocking HTTP reads run in a worker thread, one
    line at a time, abandoned (and the response closed) when the turn is cancelled.
    An HTTP error (a bad key, an unknown model) ends the turn with stop reason
    ``error``, the error object saying what the server answered.
    """

    def __init__(self, name: str, *, base_url: str, api_key: str, timeout: float = 300.0) -> None:
        self.name = name
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.timeout = timeout

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> AsyncGenerator[ModelEvent, None]:
        body: dict[str, object] = {
            "model": self.name,
            "stream": True,
            "messages": [chat_message(m) for m in messages],
        }
        if tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": dict(t.parameters)}}
                for t in tools
            ]  # fmt: skip
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        open_ = functools.partial(urllib.request.urlopen, request, timeout=self.timeout)
        response = await anyio.to_thread.run_sync(open_, abandon_on_cancel=True)
        try:
            parser = ChatStreamParser()
            while not parser.done:
                line = await anyio.to_thread.run_sync(response.readline, abandon_on_cancel=True)
                if not line:
                    break
                for event in parser.feed(line):
                    yield event
            for event in parser.finish():
                yield event
        finally:
            response.close()


def chat_message(message: Message) -> dict[str, object]:
    """A :class:`Message` in the chat completions shape."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_use_id, "content": message.content}
    out: dict[str, object] = {"role": message.role, "content": message.content}
    if message.tool_uses:
        out["tool_calls"] = [
            {"id": u.id, "type": "function",
             "function": {"name": u.name, "arguments": json.dumps(u.arguments)}}
            for u in message.tool_uses
        ]  # fmt: skip
    return out


class ChatStreamParser:
    """Turns the server-sent event lines of a streamed chat completion into model events.

    Text and reasoning (``reasoning_content`` or ``reasoning``, as vLLM, DeepSeek and
    Ollama send it) come out as they arrive; tool calls arrive in fragments and come
    out whole from :meth:`finish`.
    """

    def __init__(self) -> None:
        self.done = False
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, line: bytes) -> list[ModelEvent]:
        """The events of one line of the response (``data: {...}``; others are ignored)."""
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            return []
        payload = text[len("data:") :].strip()
        if payload == "[DONE]":
            self.done = True
            return []
        events: list[ModelEvent] = []
        for choice in json.loads(payload).get("choices", [])[:1]:
            delta = choice.get("delta") or {}
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if thought:
                events.append(ThoughtDelta(thought))
            if delta.get("content"):
                events.append(TextDelta(delta["content"]))
            for fragment in delta.get("tool_calls") or ():
                call = self._calls.setdefault(fragment.get("index", 0), {"arguments": ""})
                function = fragment.get("function") or {}
                call.setdefault("id", fragment.get("id") or f"call_{len(self._calls)}")
                call.setdefault("name", function.get("name") or "")
                call["arguments"] += function.get("arguments") or ""
        return events

    def finish(self) -> list[ModelEvent]:
        """The tool uses the response asked for, in order."""
        uses: list[ModelEvent] = []
        for _, call in sorted(self._calls.items()):
            try:
                arguments = json.loads(call["arguments"] or "{}")
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):  # the tool then reports what is missing
                arguments = {"_unparsed": call["arguments"]}
            uses.append(ToolUse(call["id"], call["name"], arguments))
        return uses


def default_models(environ: Mapping[str, str] = os.environ) -> dict[str, Model]:
    """The models of the picker: the configured real ones first, then the scripted ones."""
    models: dict[str, Model] = {}
    api_key = environ.get("ACPIO_LLM_API_KEY") or environ.get("OPENAI_API_KEY")
    if api_key:
        base_url = environ.get("ACPIO_LLM_BASE_URL", "https://api.openai.com/v1")
        for name in environ.get("ACPIO_LLM_MODELS", "gpt-4o-mini").split(","):
            if name.strip():
                models[name.strip()] = ChatCompletionsModel(
                    name.strip(), base_url=base_url, api_key=api_key
                )
    models["scripted"] = ScriptedModel("scripted", thinks=True)
    models["scripted-terse"] = ScriptedModel("scripted-terse", thinks=False)
    return models


# ------------------------------------------------------------------ the agent side

# fmt: off
BUILTIN_TOOLS = (
    ToolSpec("update_plan", "Show your plan: every step with its status.", {
        "type": "object", "required": ["steps"],
        "properties": {"steps": {"type": "array", "items": {"type": "object", "properties": {
            "step": {"type": "string"},
            "status": {"enum": ["pending", "in_progress", "completed"]}}}}}}),
    ToolSpec("read_file", "Read a text file of the project.", {
        "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
    ToolSpec("run_command", "Run a shell command in the project (the user is asked first).", {
        "type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}}),
    ToolSpec("write_file", "Replace a file's content (the user sees the diff and is asked).", {
        "type": "object", "required": ["path", "content"],
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
)
# fmt: on
READ_ONLY_TOOLS = frozenset({"update_plan", "read_file"})
MODES = [
    schema.SessionConfigSelectOption(value="code", name="Code", description="Every tool"),
    schema.SessionConfigSelectOption(
        value="ask", name="Ask", description="Reads and plans; runs and writes nothing"
    ),
]
Tool = Callable[[acpio.Session, dict[str, object]], Awaitable[str]]


class LlmAgent(acpio.Agent):
    """Runs a model loop per prompt; every tool the model uses is an ACP tool call."""

    info = acpio.Implementation(name="llm-agent", version="1.0.0", title="LLM agent")
    mcp_transports = ("stdio", "http")  # what acpio.mcp can connect to
    models: ClassVar[dict[str, Model]] = default_models()
    config_options = (
        acpio.select_option("model", "Model", list(models), category="model"),
        acpio.select_option("mode", "Mode", MODES, category="mode"),
    )
    commands = (acpio.command("compact", "Summarize the conversation", hint="what to keep"),)

    def __init__(self) -> None:
        self.conversations: dict[str, list[Message]] = {}
        self._compactions = itertools.count(1)
        self._reported: set[tuple[str, str]] = set()  # (session, MCP server) warned about

    def _conversation(self, session: acpio.Session) -> list[Message]:
        return self.conversations.setdefault(
            session.id, [Message("system", SYSTEM.format(cwd=session.cwd))]
        )

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        conversation = self._conversation(session)
        conversation.append(Message("user", acpio.text_of(prompt)))
        model = self.models[str(session.config["model"])]  # chosen in the picker
        specs = list(BUILTIN_TOOLS)
        if session.config.get("mode") == "ask":  # the mode picker: only what changes nothing
            specs = [spec for spec in specs if spec.name in READ_ONLY_TOOLS]
        tools: dict[str, Tool] = {spec.name: getattr(self, spec.name) for spec in specs}
        for spec, mcp_call in await self._mcp_tools(session):
            specs.append(spec)
            tools[spec.name] = mcp_call
        for _ in range(MAX_ROUNDS):
            reply = await self._reply(session, model, conversation, specs)
            conversation.append(reply)
            if not reply.tool_uses:
                break
            for index, use in enumerate(reply.tool_uses):
                try:
                    result = await self._use(session, tools, use)
                except BaseException:  # cancelled: every tool use still gets an answer
                    conversation.extend(
                        Message("tool", "Cancelled by the user.", tool_use_id=u.id, name=u.name)
                        for u in reply.tool_uses[index:]
                    )
                    raise
                conversation.append(Message("tool", result, tool_use_id=use.id, name=use.name))
        else:
            await session.notice(f"Stopped after {MAX_ROUNDS} model calls", severity="warning")
        await session.usage(sum(len(m.content) for m in conversation) // 4, 128_000)
        return "end_turn"

    async def _reply(
        self,
        session: acpio.Session,
        model: Model,
        conversation: list[Message],
        specs: Sequence[ToolSpec],
    ) -> Message:
        """Stream one model reply to the session: its text and thoughts as they arrive."""
        text: list[str] = []
        uses: list[ToolUse] = []
        answer: acpio.MessageStream | None = None
        thought: acpio.MessageStream | None = None
        async with contextlib.aclosing(model.stream(conversation, specs)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    answer = answer or session.message_stream()
                    await answer.write(event.text)
                    text.append(event.text)
                elif isinstance(event, ThoughtDelta):
                    thought = thought or session.thought_stream()
                    await thought.write(event.text)
                else:
                    uses.append(event)
        return Message("assistant", "".join(text), tool_uses=uses)

    async def _use(self, session: acpio.Session, tools: Mapping[str, Tool], use: ToolUse) -> str:
        """Run one tool use; whatever happens, the model gets a text back."""
        tool = tools.get(use.name)
        if tool is None:
            return f"Error: there is no tool named {use.name!r}."
        try:
            return await tool(session, use.arguments)
        except Exception as exc:  # the tool call was failed; the model may try otherwise
            logger.warning("tool %s failed: %r", use.name, exc)
            return f"Error: {exc}"

    # ----------------------------------------------------------------- tools

    async def update_plan(self, session: acpio.Session, arguments: dict[str, object]) -> str:
        """The model's plan becomes the session's plan (``plan_update``, replaced whole)."""
        steps = arguments.get("steps")
        entries = [
            schema.PlanEntry(
                content=str(step.get("step")),
                priority="medium",
                status=status if status in schema.KNOWN_PLAN_ENTRY_STATUS else "pending",
            )
            for step in (steps if isinstance(steps, list) else [])
            if isinstance(step, dict) and isinstance(status := step.get("status"), str | None)
        ]
        await session.plan(entries)
        return "The plan is shown to the user."

    async def read_file(self, session: acpio.Session, arguments: dict[str, object]) -> str:
        """A ``read`` tool call at the file's real path; its text for the model.

        ``session.read_file`` does the safe part: a path relative to the project,
        inside the session's directories, a regular file, through the editor when it
        offers its buffers; its refusal is a sentence for the user and the model.
        """
        path = os.path.realpath(os.path.join(session.cwd, str(arguments["path"])))
        async with session.tool_call(
            f"Read {path}", kind="read", raw_input=arguments, locations=[path]
        ) as call:
            text = await session.read_file(str(arguments["path"]))
            if len(text) > READ_LIMIT:
                text = text[:READ_LIMIT] + f"\n[... cut at {READ_LIMIT} characters]"
            await call.append_text(text)
        return text

    async def run_command(self, session: acpio.Session, arguments: dict[str, object]) -> str:
        """Run a shell command once the user allowed it; exit code and output for the model."""
        command = str(arguments["command"])
        async with session.tool_call(
            f"Run `{command}`", kind="execute", raw_input=arguments
        ) as call:
            outcome = await call.request_permission(
                acpio.permission.ALLOW_OR_REJECT, command=command
            )
            if not outcome.allowed:  # a cancelled turn raises here instead: the call ends cancelled
                await call.fail("Permission denied: the command was not run.")
                return "The user did not allow this command; it was not run."
            await call.start()
            terminal = await call.terminal(command=command, cwd=session.cwd)
            result = await terminal.run_shell(command, output_limit=OUTPUT_LIMIT)
            status = f"exit code {result.exit_code}" if result.signal is None else result.signal
            if not result.success:
                await call.fail(f"The command failed ({status}).")
        return f"{status}\n{result.text}"

    async def write_file(self, session: acpio.Session, arguments: dict[str, object]) -> str:
        """Show the diff, ask, write only what was shown; the outcome for the model."""
        path = os.path.join(session.cwd, str(arguments["path"]))
        async with session.tool_call("Edit a file", kind="edit", raw_input=arguments) as call:
            edit = await call.propose_edit(path, str(arguments["content"]))  # shows the diff
            outcome = await call.request_permission(
                acpio.permission.ALLOW_OR_REJECT, title=f"{edit.title}?"
            )
            if not outcome.allowed:
                await call.fail("Permission denied: the file was not changed.")
                return "The user rejected this edit; the file was not changed."
            await call.start()
            await edit.apply()  # EditConflict if the file changed since the diff
        return f"{edit.title}: done."

    async def _mcp_tools(self, session: acpio.Session) -> list[tuple[ToolSpec, Tool]]:
        """The tools of the session's MCP servers, each named ``server__tool`` for the model."""
        if acpio_mcp is None or not session.mcp_servers:
            return []
        servers = await acpio_mcp.connect(session)  # once per session; closed with it
        for name, error in servers.errors.items():
            if (session.id, name) in self._reported:
                continue
            self._reported.add((session.id, name))
            await session.notice(
                f"MCP server {name} is unavailable", severity="warning", description=str(error)
            )
        found: list[tuple[ToolSpec, Tool]] = []
        for tool in await servers.list_tools():

            async def call_tool(
                session: acpio.Session, arguments: dict[str, object], tool: acpio_mcp.McpTool = tool
            ) -> str:
                async with session.tool_call(
                    f"{tool.title or tool.name} ({tool.server})", raw_input=arguments
                ) as call:
                    await call.start()
                    result = await servers.call_tool(tool, arguments)
                    for block in result.acp_content():
                        await call.append(schema.Content(content=block))
                    if result.is_error:
                        await call.fail(f"{tool.name} reported an error")
                return result.text

            name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{tool.server}__{tool.name}")[:64]
            found.append((ToolSpec(name, tool.description or "", tool.input_schema), call_tool))
        return found

    # ----------------------------------------------------------------- /compact

    async def command(self, session: acpio.Session, invocation: acpio.CommandInvocation) -> str:
        """``/compact [what to keep]``: the history becomes the model's summary of it."""
        conversation = self._conversation(session)
        model = self.models[str(session.config["model"])]
        keep = f" Keep: {invocation.input}" if invocation.input else ""
        request = [*conversation, Message("user", COMPACT + keep)]
        compaction_id = f"compaction-{next(self._compactions)}"
        await session.send(
            schema.CompactionUpdate(compaction_id=compaction_id, status="in_progress")
        )
        summary: list[str] = []
        async with contextlib.aclosing(model.stream(request, ())) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    summary.append(event.text)
                    await session.send(
                        schema.CompactionSummaryChunk(
                            compaction_id=compaction_id, content=schema.TextContent(text=event.text)
                        )
                    )
        await session.send(schema.CompactionUpdate(compaction_id=compaction_id, status="completed"))
        before = len(conversation)
        conversation[1:] = [
            Message("user", "Summary of the conversation so far: " + "".join(summary))
        ]
        await session.message(f"Compacted {before - 1} messages into a summary.")
        return "end_turn"


if __name__ == "__main__":
    acpio.run(LlmAgent())
