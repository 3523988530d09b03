"""The testing kit's waits as a strictly typed test sees them (checked by running mypy)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_TEST_USING_THE_KIT = """
from typing import assert_type

from acpio.testing import ClientSession, MockClient, PermissionRequest, ToolCallView


async def waits(client: MockClient, session: ClientSession) -> None:
    def first_call() -> ToolCallView | None:
        return next(iter(session.view.tool_calls.values()), None)

    def first_request() -> PermissionRequest | None:
        return client.permission_requests[0] if client.permission_requests else None

    # Optional predicates give the found value itself: the wait never returns None.
    assert_type(await session.wait_for(first_call), ToolCallView)
    assert_type(await client.wait_for(first_request), PermissionRequest)
    assert_type(await client.wait_for(lambda: client.permission_requests), list[PermissionRequest])
    assert_type(await session.wait_for(lambda: session.view.state == "idle"), bool)
"""


def test_waiting_for_an_optional_value_gives_the_value_type(tmp_path: Path) -> None:
    source = tmp_path / "typed_test.py"
    source.write_text(textwrap.dedent(_TEST_USING_THE_KIT))
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
