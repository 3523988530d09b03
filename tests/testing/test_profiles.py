"""What each editor profile displays for the shell and edit examples, a plan and a failure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import acpio
from acpio import schema
from acpio.testing import PROFILES, ClientProfile, MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = sorted(PROFILES)


def _agent(name: str) -> list[str]:
    return [sys.executable, str(EXAMPLES / f"{name}.py")]


class PlanAgent(acpio.Agent):
    """Shows a two-step plan and a reply."""

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        del prompt
        await session.plan(
            [
                schema.PlanEntry(content="read the file", priority="high", status="completed"),
                schema.PlanEntry(content="fix the bug", priority="medium", status="pending"),
            ]
        )
        await session.message("Planned.")
        return "end_turn"


# What each profile shows, per scenario (the lines must appear in this order).
SHELL_REJECTED = {
    "acpx": [
        "[tool] Run `echo hi` (pending)",
        "[permission] Allow Run `echo hi` [execute]? (y/N)",
        "[tool] Run `echo hi` (failed)",
        "    Permission denied: the command was not run.",
        "[done] end_turn",
    ],
    "python-sdk": [
        "permission: Run `echo hi` [execute] options: Allow once, Reject",
        "tool: Run `echo hi` [execute] failed",
        "  Permission denied: the command was not run.",
    ],
    "zed": [
        "## User",
        "run echo hi",
        "**Tool Call: Run `echo hi`**",
        "Status: Failed",
        "Permission denied: the command was not run.",
    ],
    "jetbrains": [
        "Run `echo hi`: failed",
        "  permission: Allow once / Reject",
        "  Permission denied: the command was not run.",
    ],
}


def _in_order(expected: list[str], shown: list[str]) -> bool:
    rest = iter(shown)
    return all(any(line == got for got in rest) for line in expected)


@pytest.mark.parametrize("name", NAMES)
async def test_initialize_announces_what_the_editor_announces(name: str) -> None:
    profile = PROFILES[name]
    async with MockClient(PlanAgent(), profile=name) as client:
        sent = client.transcript.messages("client->agent", method="initialize")[0]
    assert isinstance(sent, dict)
    params = sent["params"]
    assert params["protocolVersion"] == 1
    assert params["clientInfo"]["name"] == profile.client_info.name
    capabilities = params["clientCapabilities"]
    assert capabilities["terminal"] is profile.terminal
    assert capabilities["fs"] == {"readTextFile": profile.fs, "writeTextFile": profile.fs}
    for key, value in profile.extra_capabilities.items():
        assert capabilities[key] == value


@pytest.mark.parametrize("name", NAMES)
async def test_shell_rejected_shows_the_command_and_the_failure(name: str) -> None:
    async with MockClient(
        _agent("shell_agent"), profile=name, policy=PermissionPolicy.reject()
    ) as client:
        session = await client.new_session()
        await session.prompt("run echo hi")
        shown = client.shown()
    assert _in_order(SHELL_REJECTED[name], shown), shown


@pytest.mark.parametrize("name", NAMES)
async def test_shell_allowed_shows_the_terminal_or_its_output(name: str) -> None:
    async with MockClient(
        _agent("shell_agent"), profile=name, policy=PermissionPolicy.allow()
    ) as client:
        session = await client.new_session()
        await session.prompt("run echo shown-output")
        shown = client.shown()
    text = "\n".join(shown)
    if name == "acpx":
        # acpx runs the command in its own terminal and shows the terminal's id.
        assert "[tool] Run `echo shown-output` (completed)" in shown
        assert any(line.startswith("    [terminal] ") for line in shown), shown
        assert "[client] terminal/create (running)" in shown
    elif name == "python-sdk":
        # No terminal offered: the output arrives as the call's content.
        assert "tool: Run `echo shown-output` [execute] completed" in shown
        assert "shown-output" in text
    elif name == "zed":
        # Zed runs the command in its own terminal and shows the terminal's output.
        expected = ["**Tool Call: Run `echo shown-output`**", "Status: Completed", "Terminal:"]
        assert _in_order([*expected, "```", "shown-output", "```"], shown), shown
    else:
        assert "Run `echo shown-output`: completed" in shown
        assert "  terminal: " in text and "echo shown-output" in text, shown


@pytest.mark.parametrize("name", NAMES)
async def test_edit_permission_shows_the_edits_title(name: str, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    async with MockClient(
        _agent("edit_agent"), profile=name, policy=PermissionPolicy.allow(), cwd=tmp_path
    ) as client:
        session = await client.new_session()
        await session.prompt(f"write {target}\nhello")
        shown = client.shown()
    title = f"Create {target}"
    expected = {
        "acpx": [
            f"[permission] Allow {title} [edit]? (y/N)",
            f"[tool] {title} (completed)",
            f"    diff {target} (+1 lines)",
        ],
        "python-sdk": [
            f"permission: {title} [edit] options: Allow once, Reject",
            f"tool: {title} [edit] completed",
        ],
        "zed": [f"**Tool Call: {title}**", "Status: Completed", f"Diff: {target}", "```", "hello"],
        "jetbrains": [
            f"{title}: completed",
            "  permission: Allow once / Reject",
            f"  changed: {target}",
        ],
    }[name]
    assert _in_order(expected, shown), shown
    assert target.read_text() == "hello"


@pytest.mark.parametrize("name", NAMES)
async def test_plan_and_reply(name: str) -> None:
    async with MockClient(PlanAgent(), profile=name) as client:
        session = await client.new_session()
        await session.prompt("plan")
        shown = client.shown()
    expected = {
        "acpx": [
            "[plan]",
            "  - [completed] read the file",
            "  - [pending] fix the bug",
            "Planned.",
            "[done] end_turn",
        ],
        "python-sdk": [
            "reply: Planned.",
            "plan: [completed] read the file",
            "plan: [pending] fix the bug",
        ],
        "zed": ["## Assistant", "Planned.", "## Plan", "- [x] read the file", "- [ ] fix the bug"],
        "jetbrains": ["Plan", "  [completed] read the file", "  [pending] fix the bug", "Planned."],
    }[name]
    assert _in_order(expected, shown), shown


@pytest.mark.parametrize("name", NAMES)
async def test_the_permission_prompt_shows_the_command_and_the_edit(
    name: str, tmp_path: Path
) -> None:
    target = tmp_path / "d.txt"
    async with MockClient(
        _agent("shell_agent"), profile=name, policy=PermissionPolicy.reject()
    ) as client:
        session = await client.new_session()
        await session.prompt("run echo asked")
        (shell,) = client.permission_requests
    async with MockClient(
        _agent("edit_agent"), profile=name, policy=PermissionPolicy.reject(), cwd=tmp_path
    ) as client:
        session = await client.new_session()
        await session.prompt(f"write {target}\nhello")
        (edit,) = client.permission_requests
    profile = PROFILES[name]
    expected = {
        "acpx": (
            ["[permission] Allow Run `echo asked` [execute]? (y/N)"],
            [f"[permission] Allow Create {target} [edit]? (y/N)"],
        ),
        "python-sdk": (
            ["permission: Run `echo asked` [execute] options: Allow once, Reject"],
            [f"permission: Create {target} [edit] options: Allow once, Reject"],
        ),
        "zed": (
            [
                "**Tool Call: Run `echo asked`**",
                "Status: Waiting for confirmation",
                "[Allow once] [Reject]",
            ],
            [
                f"**Tool Call: Create {target}**",
                "Status: Waiting for confirmation",
                "[Allow once] [Reject]",
            ],
        ),
        "jetbrains": (
            ["Run `echo asked`: waiting for permission", "  permission: Allow once / Reject"],
            [f"Create {target}: waiting for permission", "  permission: Allow once / Reject"],
        ),
    }[name]
    assert (profile.render_permission(shell), profile.render_permission(edit)) == expected
    assert not target.exists()  # rejected: nothing written


async def test_zed_shows_a_pending_request_with_its_buttons() -> None:
    # Cut the wire right after the request: the card waits, with one button per option.
    async with MockClient(
        _agent("shell_agent"), profile="zed", policy=PermissionPolicy.reject()
    ) as client:
        session = await client.new_session()
        await session.prompt("run echo waiting")
        wire = list(client.transcript)
    cut = next(i for i, e in enumerate(wire) if e.method == "session/request_permission")
    shown = PROFILES["zed"].render(wire[: cut + 1])
    assert shown[-3:] == [
        "**Tool Call: Run `echo waiting`**",
        "Status: Waiting for confirmation",
        "[Allow once] [Reject]",
    ]
    # Answered "Reject", before the agent's own update: Zed marks the call rejected.
    answered = next(i for i, e in enumerate(wire) if i > cut and e.direction == "client->agent")
    assert PROFILES["zed"].render(wire[: answered + 1])[-1] == "Status: Rejected"


class CancelledStepAgent(acpio.Agent):
    """Shows a plan whose second step was cancelled."""

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        del prompt
        await session.plan(
            [
                schema.PlanEntry(content="read the file", priority="high", status="completed"),
                schema.PlanEntry(content="fix the bug", priority="medium", status="cancelled"),
            ]
        )
        return "end_turn"


@pytest.mark.parametrize("name", NAMES)
async def test_a_cancelled_step_never_shows_done(name: str) -> None:
    async with MockClient(CancelledStepAgent(), profile=name) as client:
        session = await client.new_session()
        await session.prompt("plan")
        shown = client.shown()
    step = [line for line in shown if "fix the bug" in line]
    assert len(step) == 1 and "(cancelled)" in step[0], shown
    assert "completed" not in step[0] and "[x]" not in step[0], shown


async def test_a_profile_must_display_as_a_known_client() -> None:
    with pytest.raises(ValueError, match="displays as acpx, python-sdk, zed or jetbrains"):
        ClientProfile(
            name="vim",  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
            client_info=schema.Implementation(name="vim", version="9"),
            fs=False,
            terminal=False,
        )


async def test_unknown_profile_is_refused_with_the_known_names() -> None:
    with pytest.raises(ValueError, match="unknown client profile 'vim'; known: acpx, jetbrains"):
        MockClient(PlanAgent(), profile="vim")


async def test_shown_without_a_profile_says_so() -> None:
    async with MockClient(PlanAgent()) as client:
        with pytest.raises(ValueError, match="no client profile"):
            client.shown()
        assert client.shown("acpx")[0] == "[client] initialize (running)"
