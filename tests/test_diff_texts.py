"""Whole file texts travel with the ``diff`` item they belong to (no table anywhere).

``file_diff``/``diff_of`` return a :class:`~acpio._protocol.diff_texts.TextsDiff`: its wire
bytes are the ``Diff``'s, it equals the ``Diff``, and a v1 client is shown the texts. A
diff without them (built by hand, decoded, loaded from a store after a restart) is shown
as its changes and patch, live and in a ``session/load`` replay.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio._protocol.diff_texts import TextsDiff, whole_texts
from acpio._protocol.peer import Peer
from acpio._wire.v1 import V1_WIRE
from acpio._wire.v1.encoding import V1Encoding
from acpio.store import InMemoryHistory, SqliteSessionStore
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


def _diff(tmp_path: Path) -> schema.Diff:
    return acpio.file_diff(os.fspath(tmp_path / "notes.txt"), "old line\n", "new line\n")


def _v1_items(encoding: V1Encoding, diff: schema.Diff, *, replay: bool) -> list[Any]:
    update = schema.ToolCallUpdate(tool_call_id="call", title="edit", content=[diff])
    (line,) = encoding.update_lines(update, replay=replay)
    content: list[Any] = msgspec.json.decode(line)["params"]["update"]["content"]
    return content


async def test_a_file_diff_carries_its_texts_and_encodes_as_the_diff(tmp_path: Path) -> None:
    diff = _diff(tmp_path)
    plain = schema.Diff(changes=diff.changes, patch=diff.patch)
    assert isinstance(diff, TextsDiff)
    assert schema.encode(diff) == schema.encode(plain)
    assert schema.encode([diff]) == schema.encode([plain])
    assert diff == plain and plain == diff
    assert (diff != plain) is False and (plain != diff) is False
    assert diff != schema.Diff(changes=diff.changes)
    path = os.fspath(tmp_path / "notes.txt")
    assert whole_texts(diff) == (("modify", path, "old line\n", "new line\n"),)
    assert whole_texts(plain) is None
    decoded = schema.decode(schema.encode(diff), schema.Diff)
    assert type(decoded) is schema.Diff and whole_texts(decoded) is None


async def test_v1_shows_the_texts_live_and_replayed_and_the_patch_without_them(
    tmp_path: Path,
) -> None:
    encoding = V1_WIRE.encoding("s", Peer(protocol_version=1))
    assert isinstance(encoding, V1Encoding)
    diff = _diff(tmp_path)
    path = os.fspath(tmp_path / "notes.txt")
    shown = {"type": "diff", "path": path, "oldText": "old line\n", "newText": "new line\n"}
    assert _v1_items(encoding, diff, replay=False) == [shown]
    encoding.reset()
    assert _v1_items(encoding, diff, replay=True) == [shown]  # a replay of the same item
    # A store after a restart gives back the decoded Diff: no texts, so the patch is shown.
    encoding.reset()
    stored = schema.decode(schema.encode(diff), schema.Diff)
    (item,) = _v1_items(encoding, stored, replay=True)
    text = item["content"]["text"]
    assert item["type"] == "content" and f"modify {path}" in text
    assert isinstance(diff.patch, schema.DiffPatch) and diff.patch.text in text


class _Editor(acpio.Agent):
    path = ""

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        diff = acpio.file_diff(self.path, "old line\n", "new line\n")
        async with session.tool_call("edit", kind="edit") as call:
            await call.append(diff)
        return "end_turn"


def _diff_items(client: MockClient) -> list[Any]:
    items: list[Any] = []
    for entry in client.transcript:
        message: Any = entry.message
        if not isinstance(message, dict) or message.get("method") != "session/update":
            continue
        content = message["params"]["update"].get("content")
        if isinstance(content, list):
            items.extend(content)
    return items


async def test_a_v1_replay_after_a_restart_shows_the_stored_diff_as_its_patch(
    tmp_path: Path,
) -> None:
    agent = _Editor()
    agent.path = os.fspath(tmp_path / "notes.txt")
    store_path = tmp_path / "sessions.sqlite3"
    with anyio.fail_after(30):
        with SqliteSessionStore(store_path) as store:
            async with MockClient(agent, store=store, protocol_version=1) as client:
                session = await client.new_session(cwd=tmp_path)
                await session.prompt("edit")
                live = _diff_items(client)
        assert {
            "type": "diff",
            "path": agent.path,
            "oldText": "old line\n",
            "newText": "new line\n",
        } in live
        with SqliteSessionStore(store_path) as store:
            async with MockClient(_Editor(), store=store, protocol_version=1) as client:
                await client.load_session(session.id, tmp_path)
                replayed = _diff_items(client)
    texts = [i["content"]["text"] for i in replayed if i.get("type") == "content"]
    assert texts, replayed
    assert f"modify {agent.path}" in texts[-1] and "+new line" in texts[-1]
    assert all(i.get("type") != "diff" for i in replayed)  # never a diff with invented texts


async def test_a_history_keeps_the_texts_of_its_newest_diffs_up_to_its_limit(
    tmp_path: Path,
) -> None:
    history = InMemoryHistory(acpio.HistoryLimits(diff_text_chars=100))
    texts = "x" * 30  # each diff carries 60 characters: old and new
    diffs = [
        acpio.file_diff(os.fspath(tmp_path / f"f{i}.txt"), texts, texts + f"{i}\n")
        for i in range(4)
    ]
    sizes = [60 + len(f"{i}\n") for i in range(4)]
    assert all(whole_texts(d) is not None for d in diffs)
    history.record(schema.ToolCallUpdate(tool_call_id="a", title="edit", content=[diffs[0]]))
    history.record(
        schema.ToolCallContentChunk(tool_call_id="a", content=diffs[1])
    )  # 124 characters: over the limit, the oldest lets go of its texts
    assert whole_texts(diffs[0]) is None and whole_texts(diffs[1]) is not None
    # The same item sent again is counted once.
    history.record(schema.ToolCallUpdate(tool_call_id="a", content=[diffs[1]]))
    assert whole_texts(diffs[1]) is not None and sizes[1] <= 100
    # A single diff above the limit keeps its texts: it is the newest (live v1 shows them).
    big = acpio.file_diff(os.fspath(tmp_path / "big.txt"), "a" * 200, "b" * 200)
    history.record(schema.ToolCallUpdate(tool_call_id="b", title="edit", content=[big]))
    assert whole_texts(big) is not None and whole_texts(diffs[1]) is None
    # Replay gives the items back: those that let go are shown by their patch on v1.
    encoding = V1_WIRE.encoding("s", Peer(protocol_version=1))
    assert isinstance(encoding, V1Encoding)
    shown = [
        item
        for update in history.replay()
        for line in encoding.update_lines(update, replay=True)
        for item in (msgspec.json.decode(line)["params"]["update"].get("content") or [])
    ]
    assert [item["type"] for item in shown] == ["content", "diff"]
    assert shown[1]["newText"] == "b" * 200
