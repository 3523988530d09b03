"""acpio reads v1 messages as the vendored v1 schema says, and offers v1 modes.

The request shapes are derived from the schema, not listed by hand: every v1 request
an agent serves is sent in its minimal form (required fields only, each ``anyOf``
branch: a ``session/set_config_option`` without ``type`` is a value id), with each
field marked ``x-deserialize-default-on-null`` set to ``null``, and with each field
marked ``x-deserialize-default-on-error`` set to a value that does not match it; none
may be refused as invalid params. Client answers with default-on-error fields that do
not match (``exitCode`` ``1.5``, ``"0"``, ``2**64``, a numeric ``signal``) are read as
absent. Both anyio backends; every agent message is validated against the v1 schema
by the test client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from v1_client import V1Client, v1_client

import acpio
from acpio import schema
from acpio._wire.v1.lenient import lenient

pytestmark = pytest.mark.anyio

_SCHEMA: dict[str, Any] = json.loads(
    resources.files("acpio.schema").joinpath("v1/schema.json").read_text()
)
DEFS: dict[str, Any] = _SCHEMA["$defs"]
ON_NULL = "x-deserialize-default-on-null"
ON_ERROR = "x-deserialize-default-on-error"


class PickerAgent(acpio.Agent):
    """A model picker, a mode picker and a toggle; an auth method."""

    info = acpio.Implementation(name="pickers", version="1")
    config_options = (
        acpio.select_option("model", "Model", ["fast", "slow"], category="model"),
        acpio.select_option(
            "mode",
            "Mode",
            [
                schema.SessionConfigSelectOption(value="code", name="Code", description="All"),
                ("ask", "Ask"),
            ],
            category="mode",
        ),
        acpio.boolean_option("thinking", "Thinking"),
    )
    auth_methods = (schema.AuthMethodAgent(method_id="login", name="Log in"),)

    def __init__(self) -> None:
        self.set_calls: list[tuple[str, object]] = []

    async def set_config_option(
        self, session: acpio.Session, config_id: str, value: acpio.ConfigValue
    ) -> None:
        self.set_calls.append((config_id, value))
        if config_id == "model" and value == "slow":
            await session.config.set("mode", "ask")  # the agent moves the mode itself

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        if acpio.text_of(prompt) == "switch":
            await session.config.set("mode", "code" if session.config["mode"] == "ask" else "ask")
        await session.message(f"mode {session.config['mode']}")
        return "end_turn"

    async def login(self, method_id: str) -> None:
        return None

    async def logout(self) -> None:
        return None


# ------------------------------------------------------------ shapes from the schema


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _branches(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [_resolve(b) for b in node.get("anyOf", node.get("oneOf", []))] or [{}]


def _agent_requests() -> Iterator[tuple[str, str]]:
    for name, node in DEFS.items():
        if (
            node.get("x-side") == "agent"
            and name.endswith("Request")
            and name != "InitializeRequest"
        ):
            yield node["x-method"], name


def _sample(name: str, node: dict[str, Any], context: dict[str, Any]) -> Any:
    """A valid value of a required field (by its name; by its schema for a union's ``type``)."""
    node = _resolve(node)
    if "const" in node:
        return node["const"]
    if name == "value":
        return True if node.get("type") == "boolean" else context["value"]
    samples: dict[str, Any] = {
        "sessionId": context["session_id"],
        "cwd": context["cwd"],
        "mcpServers": [],
        "prompt": [{"type": "text", "text": "hello"}],
        "configId": context["config_id"],
        "modeId": "ask",
        "methodId": "login",
    }
    assert name in samples, f"the v1 schema requires {name!r}: give this test a sample of it"
    return samples[name]


def _mismatched(node: dict[str, Any]) -> Any:
    validator = Draft202012Validator({**node, "$defs": DEFS})
    for candidate in (1.5, "not-this", [1], {"x": 1}, True):
        if not validator.is_valid(candidate):
            return candidate
    raise AssertionError(f"no value mismatches {node}")


def _instances(definition: str, context: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The minimal requests of ``definition`` and their lenient variants, named."""
    node = DEFS[definition]
    for index, branch in enumerate(_branches(node)):
        boolean = _resolve(branch.get("properties", {}).get("value", {})).get("type") == "boolean"
        context = {**context, "config_id": "thinking" if boolean else "model"}
        properties = {**node.get("properties", {}), **branch.get("properties", {})}
        required = [*node.get("required", []), *branch.get("required", [])]
        minimal = {key: _sample(key, properties[key], context) for key in required}
        yield f"{definition} branch {index} minimal {sorted(minimal)}", minimal
        for key, prop in properties.items():
            if prop.get(ON_NULL):
                yield f"{definition} branch {index} {key}: null", {**minimal, key: None}
            if prop.get(ON_ERROR):
                bad = _mismatched(prop)
                yield f"{definition} branch {index} {key}: {bad!r}", {**minimal, key: bad}


def test_the_schema_walk_covers_what_real_clients_send() -> None:
    # The walk reaches the shapes of issue 21: set_config_option without `type`.
    context = {"session_id": "s", "cwd": "/tmp", "value": "slow"}
    shapes = [
        params
        for method, name in _agent_requests()
        if method == "session/set_config_option"
        for _, params in _instances(name, context)
    ]
    assert {"sessionId": "s", "configId": "model", "value": "slow"} in shapes
    assert any(shape.get("_meta") == 1.5 for shape in shapes)
    methods = {method for method, _ in _agent_requests()}
    assert {"session/set_mode", "session/new", "session/prompt", "session/load"} <= methods


async def test_every_v1_request_shape_the_schema_allows_is_accepted(tmp_path: Path) -> None:
    refused: list[str] = []
    async with v1_client(PickerAgent()) as client:
        for method, definition in _agent_requests():
            session_id = await client.new_session(os.fspath(tmp_path))
            context = {"session_id": session_id, "cwd": os.fspath(tmp_path), "value": "slow"}
            for label, params in _instances(definition, context):
                try:
                    await client.request(method, params)
                except acpio.RequestError as exc:
                    refused.append(f"{label}: {exc.code} {exc.message}")
    assert not refused, "\n".join(refused)


async def test_a_value_id_without_type_sets_the_option(tmp_path: Path) -> None:
    agent = PickerAgent()
    async with v1_client(agent) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        answer = await client.request(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "slow"},
        )
        values = {o["id"]: o["currentValue"] for o in answer["configOptions"]}
        assert values["model"] == "slow"
        # A boolean without `type` is not a value id: refused, naming what is accepted.
        with pytest.raises(acpio.RequestError) as raised:
            await client.request(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "thinking", "value": True},
            )
        assert raised.value.code == -32602 and '"type": "boolean"' in raised.value.message
    assert agent.set_calls == [("model", "slow")]


# ------------------------------------------------------------------------ modes


def _updates(client: V1Client, kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in client.messages
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind
    ]


async def test_the_mode_option_is_offered_as_v1_modes(tmp_path: Path) -> None:
    async with v1_client(PickerAgent()) as client:
        answer = await client.request("session/new", {"cwd": os.fspath(tmp_path), "mcpServers": []})
        expected = {
            "currentModeId": "code",
            "availableModes": [
                {"id": "code", "name": "Code", "description": "All"},
                {"id": "ask", "name": "Ask"},
            ],
        }
        assert answer["modes"] == expected
        session_id = answer["sessionId"]
        loaded = await client.load_session(session_id, os.fspath(tmp_path))
        assert loaded["modes"] == expected
        resumed = await client.request(
            "session/resume", {"sessionId": session_id, "cwd": os.fspath(tmp_path)}
        )
        assert resumed["modes"] == expected


async def test_no_mode_option_no_modes(tmp_path: Path) -> None:
    class Plain(acpio.Agent):
        info = acpio.Implementation(name="plain", version="1")
        config_options = (acpio.select_option("model", "Model", ["a", "b"], category="model"),)

        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            return "end_turn"

    async with v1_client(Plain()) as client:
        answer = await client.request("session/new", {"cwd": os.fspath(tmp_path), "mcpServers": []})
        assert "modes" not in answer and answer["configOptions"]


async def test_set_mode_runs_the_agents_set_config_option(tmp_path: Path) -> None:
    agent = PickerAgent()
    async with v1_client(agent) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        assert (
            await client.request("session/set_mode", {"sessionId": session_id, "modeId": "ask"})
            == {}
        )
        assert agent.set_calls == [("mode", "ask")]
        # The client's config options follow (its mode selector set itself).
        await client.until(lambda: bool(_updates(client, "config_option_update")))
        (update,) = _updates(client, "config_option_update")
        values = {o["id"]: o["currentValue"] for o in update["configOptions"]}
        assert values["mode"] == "ask"
        assert not _updates(client, "current_mode_update")
        await client.prompt(session_id, "what mode")
        assert client.view(session_id).agent_text.endswith("mode ask")
        # An unknown mode: -32602 naming the accepted ids; nothing changes.
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("session/set_mode", {"sessionId": session_id, "modeId": "fly"})
        assert raised.value.code == -32602
        assert "code" in raised.value.message and "ask" in raised.value.message
        assert agent.set_calls == [("mode", "ask")]


async def test_mode_moves_reach_the_client_as_current_mode_update(tmp_path: Path) -> None:
    async with v1_client(PickerAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        # The agent moves the mode during a turn: config_option_update + current_mode_update.
        await client.prompt(session_id, "switch")
        assert [u["currentModeId"] for u in _updates(client, "current_mode_update")] == ["ask"]
        # A config change of the mode option, and one the agent follows with a mode change.
        await client.request(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "mode", "value": "code"},
        )
        await client.until(lambda: len(_updates(client, "current_mode_update")) == 2)
        await client.request(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "model", "value": "slow"},
        )
        await client.until(lambda: len(_updates(client, "current_mode_update")) == 3)
        modes = [u["currentModeId"] for u in _updates(client, "current_mode_update")]
        assert modes == ["ask", "code", "ask"]


# ------------------------------------------------------------ the client's answers


class RunAgent(acpio.Agent):
    """Runs a command in the client's terminal and says how it ended."""

    info = acpio.Implementation(name="run", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Run", kind="execute") as call:
            terminal = await call.terminal()
            result = await terminal.run(["true"])
            await call.complete()
        await session.message(f"exit_code={result.exit_code} signal={result.signal}")
        return "end_turn"


def _terminal_answers(exit_status: dict[str, Any]) -> dict[str, Callable[[Any], Any]]:
    return {
        "terminal/create": lambda _: {"terminalId": "t1"},
        "terminal/output": lambda _: {
            "output": "done\n",
            "truncated": False,
            "exitStatus": exit_status,
        },
        "terminal/wait_for_exit": lambda _: exit_status,
        "terminal/kill": lambda _: {},
        "terminal/release": lambda _: {},
    }


@pytest.mark.parametrize(
    ("exit_status", "expected"),
    [
        ({"exitCode": 1.5}, "exit_code=None signal=None"),
        ({"exitCode": "0"}, "exit_code=None signal=None"),
        ({"exitCode": 2**64}, "exit_code=None signal=None"),
        ({"exitCode": None, "signal": 9}, "exit_code=None signal=None"),
        ({"exitCode": 3, "signal": 9}, "exit_code=3 signal=None"),
        ({"exitCode": 1.5, "signal": "SIGKILL"}, "exit_code=None signal=SIGKILL"),
        ({"exitCode": 0, "_meta": 7}, "exit_code=0 signal=None"),
    ],
    ids=["float", "string", "2**64", "numeric-signal", "code-and-bad-signal", "signal", "meta"],
)
async def test_default_on_error_fields_of_client_answers_are_absent(
    tmp_path: Path, exit_status: dict[str, Any], expected: str
) -> None:
    async with v1_client(RunAgent(), capabilities={"terminal": True}) as client:
        client.answers.update(_terminal_answers(exit_status))
        session_id = await client.new_session(os.fspath(tmp_path))
        answer = await client.prompt(session_id, "go")
        assert answer == {"stopReason": "end_turn"}
        assert client.view(session_id).agent_text == expected


async def test_a_bad_exit_status_object_is_no_exit_status(tmp_path: Path) -> None:
    # exitStatus itself is default-on-error: a number there is "not exited yet".
    answers = _terminal_answers({"exitCode": 0})
    polls: list[int] = []

    def output(_: Any) -> Any:
        polls.append(1)
        status: Any = 5 if len(polls) == 1 else {"exitCode": 0}
        return {"output": "", "truncated": False, "exitStatus": status}

    answers["terminal/output"] = output
    async with v1_client(RunAgent(), capabilities={"terminal": True}) as client:
        client.answers.update(answers)
        session_id = await client.new_session(os.fspath(tmp_path))
        assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
        assert client.view(session_id).agent_text == "exit_code=0 signal=None"
    assert len(polls) >= 2


def test_lenient_reading_follows_each_mark_at_every_depth() -> None:
    # skip-invalid-items drops the items that do not match, keeps the others.
    listed = lenient(
        "ListSessionsResponse",
        {"sessions": [{"sessionId": "a", "cwd": "/a"}, {"cwd": 3}], "nextCursor": 5},
    )
    assert listed == {"sessions": [{"sessionId": "a", "cwd": "/a"}]}
    # default-on-error inside a nested definition; what is not marked is left as it is.
    status = lenient(
        "TerminalOutputResponse",
        {"output": 1, "truncated": False, "exitStatus": {"exitCode": -1, "signal": "TERM"}},
    )
    assert status == {"output": 1, "truncated": False, "exitStatus": {"signal": "TERM"}}
    # default-on-null: null is absent.
    assert lenient("NewSessionRequest", {"cwd": "/", "mcpServers": None}) == {"cwd": "/"}


class AskAgent(acpio.Agent):
    """Asks permission for a tool call, then fills a form; says what it got."""

    info = acpio.Implementation(name="ask", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Touch", kind="edit") as call:
            outcome = await call.request_permission()
            await call.complete()
        form = await session.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        await session.message(f"allowed={outcome.allowed} form={form.action}:{form.content}")
        return "end_turn"


async def test_a_mismatched_meta_in_a_permission_or_form_answer_is_absent(
    tmp_path: Path,
) -> None:
    # `_meta` is default-on-error in both answers: a number there is no `_meta`, and the
    # answer stands (before, the permission answer read as "not approved").
    def allow(params: dict[str, Any]) -> dict[str, Any]:
        option = next(o for o in params["options"] if o["kind"] == "allow_once")
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}, "_meta": 5}

    async with v1_client(
        AskAgent(), policy=allow, capabilities={"elicitation": {"form": {}}}
    ) as client:
        client.answers["elicitation/create"] = lambda _: {
            "action": "accept",
            "content": {"name": "Ada"},
            "_meta": [1],
        }
        session_id = await client.new_session(os.fspath(tmp_path))
        assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
        assert client.view(session_id).agent_text == "allowed=True form=accept:{'name': 'Ada'}"


async def test_a_cancel_notification_with_a_mismatched_meta_still_cancels(tmp_path: Path) -> None:
    # Notifications are read the same way: CancelNotification's `_meta` is default-on-error.
    started = anyio.Event()

    class Slow(acpio.Agent):
        info = acpio.Implementation(name="slow", version="1")

        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            started.set()
            await anyio.sleep_forever()
            return "end_turn"

    async with v1_client(Slow()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        results: list[object] = []

        async def send() -> None:
            results.append(await client.prompt(session_id, "wait"))

        # A cancel read as malformed is ignored: the turn would never end (a failure here).
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(send)
                await started.wait()
                await client.connection.notify(
                    "session/cancel", {"sessionId": session_id, "_meta": "not an object"}
                )
        assert results == [{"stopReason": "cancelled"}]
