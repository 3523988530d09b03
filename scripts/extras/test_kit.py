"""The ``testing`` extra alone: acpio's pytest plugin and MockClient against the echo agent.

scripts/extras.sh copies this file next to the example agents and runs pytest on it in a
virtual environment that has only ``acpio[testing]`` (asyncio only: no trio there).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from echo_agent import EchoAgent

from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

ECHO = [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]


@pytest.mark.acp_agent(command=ECHO)
async def test_the_plugin_drives_a_subprocess_agent(acp_client: MockClient) -> None:
    session = await acp_client.new_session()
    result = await session.prompt("hello from the testing extra")
    assert result.stop_reason == "end_turn"
    assert result.text == "hello from the testing extra"
    assert acp_client.violations == []


@pytest.mark.acp_agent(agent=EchoAgent)
async def test_the_plugin_drives_an_in_process_agent(acp_client: MockClient) -> None:
    session = await acp_client.new_session()
    assert (await session.prompt("in process")).text == "in process"


async def test_mock_client_speaks_v1(tmp_path: Path) -> None:
    async with MockClient(ECHO, protocol_version=1, cwd=str(tmp_path)) as client:
        session = await client.new_session()
        result = await session.prompt("hello over v1")
        assert result.stop_reason == "end_turn"
        assert result.text == "hello over v1"
