"""The LangGraph checkpointer of the adapter: in memory while a session runs, kept with it.

:class:`SessionCheckpointer` is LangGraph's own ``InMemorySaver`` (every feature
of a checkpointer: interrupts, resume, state reads) with two additions, both
built on the saver's public methods: :meth:`~SessionCheckpointer.export_thread`
turns a thread's latest checkpoint of every namespace, with its pending writes
(an unanswered interrupt is one), into a JSON value for
``Session.save_agent_state``, and :meth:`~SessionCheckpointer.import_thread`
puts such a value back. The adapter exports each session's thread at the end of
every turn and compacts it in memory to that same value, so what a process
holds is what a restarted one gets back.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata
from langgraph.checkpoint.memory import InMemorySaver

__all__ = ["STATE_FORMAT", "SessionCheckpointer"]

#: The version of the exported value's layout (``format`` in it).
STATE_FORMAT: Final = 1


def _typed(value: tuple[str, bytes]) -> list[str]:
    return [value[0], base64.b64encode(value[1]).decode("ascii")]


def _untyped(value: object) -> tuple[str, bytes]:
    if (
        not isinstance(value, list)
        or len(cast("list[object]", value)) != 2
        or not all(isinstance(part, str) for part in cast("list[object]", value))
    ):
        raise ValueError(f"a serialized value is [type, base64], not {value!r}")
    kind, data = cast("list[str]", value)
    return kind, base64.b64decode(data)


def _thread_config(thread_id: str, namespace: str | None = None) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if namespace is not None:
        configurable["checkpoint_ns"] = namespace
    return {"configurable": configurable}


class SessionCheckpointer(InMemorySaver):
    """An ``InMemorySaver`` whose threads can be exported to JSON and imported back.

    One thread per ACP session (the thread id is the session id). Only the latest
    checkpoint of each namespace is exported, with its pending writes: enough to
    continue the conversation and to resume a pending interrupt; earlier
    checkpoints (LangGraph's time travel) do not outlive the turn.
    """

    def has_thread(self, thread_id: str) -> bool:
        """True when the saver holds at least one checkpoint of ``thread_id``."""
        return bool(self.storage.get(thread_id))

    async def export_thread(self, thread_id: str) -> dict[str, object] | None:
        """The thread's latest checkpoints as JSON values; ``None`` for an unknown thread."""
        namespaces: list[dict[str, object]] = []
        seen: set[str] = set()
        async for saved in self.alist(_thread_config(thread_id)):
            namespace = str(saved.config.get("configurable", {}).get("checkpoint_ns", ""))
            if namespace in seen:
                continue  # listed newest first: the first one is the latest
            seen.add(namespace)
            writes = [
                [task_id, channel, *_typed(self.serde.dumps_typed(value))]
                for task_id, channel, value in saved.pending_writes or ()
            ]
            namespaces.append(
                {
                    "ns": namespace,
                    "checkpoint": _typed(self.serde.dumps_typed(saved.checkpoint)),
                    "metadata": _typed(self.serde.dumps_typed(saved.metadata)),
                    "writes": writes,
                }
            )
        if not namespaces:
            return None
        return {"format": STATE_FORMAT, "namespaces": namespaces}

    async def import_thread(self, thread_id: str, state: object) -> None:
        """Replace the thread with an exported value (see :meth:`export_thread`).

        :raises ValueError: when ``state`` is not such a value.
        """
        if (
            not isinstance(state, Mapping)
            or cast("Mapping[str, object]", state).get("format") != STATE_FORMAT
        ):
            raise ValueError(
                f"not a LangGraph thread saved by acpio (format {STATE_FORMAT} expected)"
            )
        entries = cast("Mapping[str, object]", state).get("namespaces")
        if not isinstance(entries, list):
            raise ValueError("a saved LangGraph thread lists its namespaces")
        decoded: list[tuple[str, Checkpoint, CheckpointMetadata, list[tuple[str, str, Any]]]] = []
        for entry in cast("list[object]", entries):
            if not isinstance(entry, Mapping):
                raise ValueError("a saved namespace is an object")
            fields = cast("Mapping[str, object]", entry)
            namespace = fields.get("ns")
            writes = fields.get("writes")
            if not isinstance(namespace, str) or not isinstance(writes, list):
                raise ValueError("a saved namespace has a name and a list of writes")
            pending: list[tuple[str, str, Any]] = []
            for write in cast("list[object]", writes):
                if not isinstance(write, list) or len(cast("list[object]", write)) != 4:
                    raise ValueError("a saved write is [task, channel, type, base64]")
                task_id, channel, kind, data = cast("list[object]", write)
                if not isinstance(task_id, str) or not isinstance(channel, str):
                    raise ValueError("a saved write names its task and channel")
                pending.append((task_id, channel, self.serde.loads_typed(_untyped([kind, data]))))
            checkpoint = cast(
                "Checkpoint", self.serde.loads_typed(_untyped(fields.get("checkpoint")))
            )
            metadata = cast(
                "CheckpointMetadata", self.serde.loads_typed(_untyped(fields.get("metadata")))
            )
            decoded.append((namespace, checkpoint, metadata, pending))
        await self.adelete_thread(thread_id)
        for namespace, checkpoint, metadata, pending in decoded:
            config = await self.aput(
                _thread_config(thread_id, namespace),
                checkpoint,
                metadata,
                dict(checkpoint["channel_versions"]),
            )
            by_task: dict[str, list[tuple[str, Any]]] = {}
            for task_id, channel, value in pending:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, task_writes in by_task.items():
                await self.aput_writes(config, task_writes, task_id)

    async def compact_thread(self, thread_id: str) -> dict[str, object] | None:
        """Export the thread and keep only what was exported; returns the exported value."""
        state = await self.export_thread(thread_id)
        if state is not None:
            await self.import_thread(thread_id, state)
        return state
