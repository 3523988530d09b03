"""The pydantic-ai block of docs/adapters.md (deps, pickers, an approval tool), driven as an
editor would.

The block is read from docs/adapters.md verbatim; its agent's model is replaced by a
scripted ``FunctionModel`` (pydantic-ai's ``Agent.override``), everything else
(the deps factory, the pickers, the approval tool) runs as written.
"""

from __future__ import annotations

import re
import textwrap
import types
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

import acpio
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

README = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
_FENCE = re.compile(r"^( *)```python\n(.*?)^\1```$", re.DOTALL | re.MULTILINE)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def readme_block(containing: str) -> types.ModuleType:
    (code,) = [
        textwrap.dedent(m.group(2))
        for m in _FENCE.finditer(README.read_text(encoding="utf-8"))
        if containing in m.group(2)
    ]
    module = types.ModuleType("readme_pydantic_ai_deps")
    source = "docs/adapters.md:pydantic_ai_deps"
    exec(compile(code, source, "exec", dont_inherit=True), module.__dict__)
    return module


async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
    """``list`` calls list_files, ``delete X`` calls delete_file; a tool's result is the answer."""
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returns and isinstance(last, ModelRequest):
        yield returns[0].model_response_str()
        return
    assert isinstance(last, ModelRequest)
    (text,) = [c for p in last.parts if isinstance(p, UserPromptPart) for c in p.content]
    if text == "list":
        yield {0: DeltaToolCall(name="list_files", json_args="{}")}
    else:
        path = text.removeprefix("delete ")
        yield {0: DeltaToolCall(name="delete_file", json_args=f'{{"path": "{path}"}}')}


async def test_readme_deps_pickers_and_approval_block(tmp_path: Path) -> None:
    block = readme_block("deps_factory=")
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    policy = PermissionPolicy.reject()
    with block.agent.override(model=FunctionModel(stream_function=script)):
        async with MockClient(block.served, cwd=tmp_path, policy=policy) as client:
            session = await client.new_session()
            assert session.view.config_values == {"model": "test", "mode": "ask"}
            await session.prompt("list")
            reply = acpio.text_of(session.view.agent_messages[-1].content)
            assert reply == '["a.txt","b.txt"]'

            await session.prompt("delete a.txt")  # asks; the user rejects
            assert len(client.permission_requests) == 1
            assert (tmp_path / "a.txt").exists()

            await session.set_config_option("mode", "code")
            await session.prompt("delete a.txt")  # Code mode: runs unasked
            assert len(client.permission_requests) == 1
            assert not (tmp_path / "a.txt").exists()
