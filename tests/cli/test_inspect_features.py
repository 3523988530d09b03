"""`acpio inspect` with config options, slash commands and elicitation prompts."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cli_helpers import Captured

from acpio import schema
from acpio._cli._features import (
    commands_block,
    config_block,
    elicitation_answer_line,
    parse_config_command,
)
from acpio._cli._input import LineInput
from acpio._cli._inspect import run_inspect, run_replay
from acpio.testing import ElicitationRequest

AGENT = [sys.executable, str(Path(__file__).with_name("features_agent.py"))]


async def _inspect(script: str, tmp_path: Path, **options: object) -> Captured:
    read_end, write_end = os.pipe()
    os.write(write_end, script.encode())
    os.close(write_end)
    captured = Captured()
    try:
        code = await run_inspect(
            captured.output,
            AGENT,
            cwd=str(tmp_path),
            reader=LineInput(read_end),
            **options,  # type: ignore[arg-type]
        )
    finally:
        os.close(read_end)
    assert code == 0
    return captured


@pytest.mark.anyio
async def test_config_commands_and_elicitation_in_inspect(tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    script = (
        "/config\n"
        "/config model smart\n"
        "/config model gpt-9\n"
        "/config thinking maybe\n"
        "hello\n"
        "ask\n"
        "Ada\n"
        "\n"
        "/compact tests\n"
        "url\n"
        "y\n"
    )
    captured = await _inspect(script, tmp_path, record=str(record))
    text = captured.text
    # The answer's options and commands, shown when the session starts.
    assert "⚙ config options" in text
    assert "Model [model]: fast* · smart" in text
    assert "Thinking [thinking]: off" in text
    assert "/compact <focus>  Summarize the conversation" in text
    # /config changed the model; a bad value is refused with the agent's sentence.
    assert "Model [model]: fast · smart*" in text
    assert "'gpt-9' is not a value of config option 'model'; choose one of: fast, smart" in text
    assert "thinking is on or off, not 'maybe'" in text
    assert "model is smart" in text
    # The form, field by field; the default filled the empty answer.
    assert "? Who are you?" in text
    assert "• Your name (string, required)" in text
    assert "• color (string: red, blue) default blue" in text
    assert "✓ accepted name=Ada, color=blue  (you)" in text
    assert "answer: accept {'name': 'Ada', 'color': 'blue'}" in text
    # The slash command ran as a command and turned thinking on (config_option_update).
    assert "compacting (focus 'tests')" in text
    assert "Thinking [thinking]: on" in text
    # URL mode and its completion.
    assert "open https://example.com/login" in text
    assert "✓ the agent says the URL interaction is complete" in text
    assert "url: accept" in text

    replayed = Captured()
    assert await run_replay(replayed.output, str(record)) == 0
    assert "? Who are you?" in replayed.text
    assert "✓ accepted name=Ada, color=blue" in replayed.text
    assert "Thinking [thinking]: on" in replayed.text


@pytest.mark.anyio
async def test_reject_declines_elicitations(tmp_path: Path) -> None:
    captured = await _inspect("ask\n", tmp_path, policy="reject")
    assert "✗ declined  (--reject)" in captured.text
    assert "answer: decline {}" in captured.text


@pytest.mark.anyio
async def test_allow_accepts_with_defaults_and_a_form_can_be_declined(tmp_path: Path) -> None:
    captured = await _inspect("ask\n", tmp_path, policy="allow")
    # The form's required name has no default: --allow cannot accept it for you.
    assert "✗ declined  (--allow)" in captured.text
    urls = await _inspect("url\n", tmp_path, policy="allow")
    assert "✓ accepted  (--allow)" in urls.text
    declined = await _inspect("ask\nn\n", tmp_path)
    assert "✗ declined  (you)" in declined.text


def test_parse_config_command() -> None:
    options = [
        schema.SessionConfigBoolean(config_id="thinking", name="T", current_value=False),
    ]
    assert parse_config_command("hello", options) is None
    assert parse_config_command("/configure", options) is None
    assert parse_config_command("/config", options) == ""
    assert parse_config_command("/config model smart", options) == ("model", "smart")
    assert parse_config_command("/config thinking on", options) == ("thinking", True)
    assert parse_config_command("/config thinking OFF", options) == ("thinking", False)
    assert parse_config_command("/config model", options) == (
        "usage: /config shows the session's options; /config <id> <value> changes one"
    )


def test_renderers_show_agent_text_as_plain_text() -> None:
    block = config_block(
        [schema.SessionConfigBoolean(config_id="x", name="[bold]a\x1b[31m", current_value=True)]
    )
    assert "[bold]a\\x1b[31m [x]: on" in str(block)
    assert "no slash commands" in str(commands_block([]))
    request = ElicitationRequest(1, {"mode": "form"}, cancelled_by_agent=True)
    assert "withdrawn by the agent" in str(elicitation_answer_line(request, ""))


@pytest.mark.anyio
async def test_inspect_shows_the_latest_usage_once_per_turn(tmp_path: Path) -> None:
    captured = await _inspect("usage\n", tmp_path, policy="allow")
    text = captured.text
    assert "context 2,500 / 200,000 tokens (1%) · cost 0.0456 USD" in text
    assert "1,500" not in text  # only the latest report of the turn is shown
