"""The acpio bench agent with layers of ``permission`` cut off, to see what each costs.

An analysis tool, not a peer: it reaches into acpio's internals. With
``ACPIO_BENCH_LAYERS`` set to

- ``connection``: each permission request is a bare ``Connection.request_prepared``
  of params encoded once (the request line, the pending request, the
  response's decode and dispatch);
- ``states``: the same asked through the session channel (``SessionChannel.ask``:
  pending terminal bytes, the session's own ``requires_action`` and
  ``running`` state updates around the request);
- ``full`` (or unset): the bench agent unchanged
  (``ToolCallHandle.request_permission``: option validation, the subject,
  interpreting the outcome against the offered options).

``notify`` and ``terminal`` prompts run as in ``bench_agent.py``. Measure with
``instructions.py --agent benchmarks/layers_agent.py``; the differences between
the layers are what each one costs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_agent import BenchAgent

import acpio
from acpio import schema
from acpio._handles.permission import decode_permission_response

LAYERS = os.environ.get("ACPIO_BENCH_LAYERS", "full")


class LayersAgent(BenchAgent):
    """Runs ``permission N`` through fewer layers, as ``ACPIO_BENCH_LAYERS`` says."""

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        words = acpio.text_of(prompt).split()
        if words[0] != "permission" or LAYERS == "full":
            return await super().prompt(session, prompt)
        call = await session.tool_call("bench", tool_call_id="bench")
        params = schema.RequestPermissionRequest(
            session_id=session.id,
            title="bench",
            subject=schema.ToolCallPermissionSubject(
                tool_call=schema.ToolCallUpdateFields(tool_call_id="bench")
            ),
            options=[acpio.permission.option("allow", "Allow", "allow_once")],
        )
        channel = session._channel  # the session's channel to its core
        # Encoded once, as ToolCallHandle.request_permission sends a request asked again.
        question = channel.permission_question(params, decode_permission_response)
        tail = question.tail
        assert tail is not None  # a v2 permission question is encoded once
        connection = channel._connection  # the connection alone, below the channel
        for _ in range(int(words[1])):
            if LAYERS == "states":
                await channel.ask(question)
            else:
                await connection.request_prepared(question.method, tail, question.decode)
        await call.complete()
        return "end_turn"


if __name__ == "__main__":
    if LAYERS not in ("connection", "states", "full"):
        raise SystemExit(f"ACPIO_BENCH_LAYERS must be connection, states or full, not {LAYERS!r}")
    acpio.run(LayersAgent())
