"""``acpio check``'s second run: raw lines a well-behaved client never sends.

How this works: a fresh agent process is spoken to line by line
(:class:`~acpio._cli._probe.RawAgent`), every line it writes judged by a
conformance checker of its own: protocol version probes (an older and a
newer version than 2), a line that is not JSON, unknown methods and
notifications, ids that look alike (``"42"`` and ``42``), an empty batch, a
batch of notifications and a mixed batch, then end of input. Each probe
remembers the position of its line in the agent's output, so its answer is
looked for only after it; a notification that is never answered is proven
by a request sent after it being answered first.
"""

from __future__ import annotations

import json
from typing import Final

import anyio

from .. import schema
from .._json import as_object, get_field
from ..testing import ConformanceChecker
from ._check_rules import CheckOptions, CheckRun, error_of, short, shutdown_verdict, stderr_note
from ._probe import RawAgent, parse

__all__ = ["raw_run"]

CLIENT_INFO: Final[dict[str, object]] = {
    "name": "acpio-check",
    "version": "0.1.0",
    "title": "acpio check",
}
OLDER_VERSION: Final = 0  # below every version acpio speaks (1 and 2)
NEWER_VERSION: Final = 65535

_RAW_RULES: Final = [
    "version-older",
    "version-newer",
    "parse-error",
    "unknown-method",
    "unknown-extension",
    "unknown-notification",
    "ids",
    "batch-empty",
    "batch-notifications",
    "batch-mixed",
]


def _initialize(version: int) -> dict[str, object]:
    return {"protocolVersion": version, "info": CLIENT_INFO, "capabilities": {}}


async def raw_run(
    run: CheckRun, command: list[str], options: CheckOptions, cwd: str, checker: ConformanceChecker
) -> RawAgent | None:
    """Run the raw-line probes (versions, ids, batches, notifications) on a fresh agent."""
    agent = RawAgent(command, checker, timeout=options.timeout, cwd=None)
    try:
        async with agent:
            run.output.status("protocol version probes")
            await _versions(run, agent)
            run.output.status("malformed and unknown messages")
            await _malformed(run, agent)
            run.output.status("request ids")
            await _ids(run, agent)
            run.output.status("batches")
            await _batches(run, agent)
            run.output.status("closing stdin, waiting for the agent to exit")
            code, elapsed = await agent.close_stdin(options.exit_timeout)
            shutdown_verdict(run, code, elapsed, options, what=" (after the raw probes)")
    except OSError as exc:
        run.skip_rest(_RAW_RULES, f"could not start the agent again: {exc.strerror or exc}")
        return None
    except anyio.BrokenResourceError:
        pass
    run.skip_rest(
        _RAW_RULES,
        f"not reached: the agent stopped reading (exit code {agent.returncode})"
        + stderr_note(bytes(agent.stderr)),
    )
    return agent


async def _versions(run: CheckRun, agent: RawAgent) -> None:
    answer = await agent.request("check-v1", "initialize", _initialize(OLDER_VERSION))
    code, message = error_of(answer)
    result = answer.get("result") if isinstance(answer, dict) else None
    version = get_field(result, "protocolVersion")
    if answer is None:
        run.verdict("version-older", False, f"no answer within {agent.timeout:g}s")
    elif code == schema.UNSUPPORTED_PROTOCOL_VERSION:
        data = get_field(get_field(answer, "error"), "data")
        supported = get_field(data, "supported")
        run.verdict(
            "version-older",
            True,
            f"error -32022 (supported: {supported})"
            if supported is not None
            else "error -32022 (its data should list {requested, supported})",
        )
    elif isinstance(version, int) and version <= OLDER_VERSION:
        run.verdict("version-older", True, f"the agent speaks protocol {version}")
    elif isinstance(version, int):
        run.verdict(
            "version-older",
            False,
            f"asked for protocol {OLDER_VERSION}, the agent answered {version}: with no "
            "supported version at or below the requested one, initialization fails with "
            "-32022 {requested, supported}",
        )
    else:
        run.verdict(
            "version-older",
            False,
            f"answered with error {code}: {short(message)}"
            if code is not None
            else f"unexpected answer {short(str(answer))}",
        )
    answer = await agent.request("check-v65535", "initialize", _initialize(NEWER_VERSION))
    result = answer.get("result") if isinstance(answer, dict) else None
    version = get_field(result, "protocolVersion")
    if answer is None:
        run.verdict("version-newer", False, f"no answer within {agent.timeout:g}s")
    elif isinstance(version, int) and schema.PROTOCOL_VERSION <= version <= NEWER_VERSION:
        run.verdict("version-newer", True, f"protocolVersion {version}")
    else:
        code, message = error_of(answer)
        run.verdict(
            "version-newer",
            False,
            f"answered error {code}: {short(message)}"
            if code is not None
            else f"answered protocolVersion {version!r}",
        )


def _is_error_reply(line: bytes, request_id: object) -> bool:
    message = parse(line)
    return (
        isinstance(message, dict)
        and "method" not in message
        and message.get("id", "missing") == request_id
    )


async def _expect_error(
    run: CheckRun, agent: RawAgent, rule: str, *, mark: int, request_id: object, code: int
) -> None:
    line = await agent.wait_line(lambda data: _is_error_reply(data, request_id), mark)
    if line is None:
        run.verdict(
            rule, False, f"no answer with id {json.dumps(request_id)} within {agent.timeout:g}s"
        )
        return
    got, message = error_of(parse(line))
    if got == code:
        run.verdict(rule, True, f"error {code}: {short(message, 80)}")
    else:
        run.verdict(
            rule, False, f"expected error {code}, got {short(line.decode(errors='replace'))}"
        )


async def _malformed(run: CheckRun, agent: RawAgent) -> None:
    mark = await agent.send(b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", ')
    await _expect_error(run, agent, "parse-error", mark=mark, request_id=None, code=-32700)
    mark = await agent.send_json(
        {"jsonrpc": "2.0", "id": "check-unknown", "method": "acpio/checkUnknownMethod"}
    )
    await _expect_error(
        run, agent, "unknown-method", mark=mark, request_id="check-unknown", code=-32601
    )
    mark = await agent.send_json(
        {"jsonrpc": "2.0", "id": "check-ext", "method": "_acpio/check/unknown", "params": {}}
    )
    await _expect_error(
        run, agent, "unknown-extension", mark=mark, request_id="check-ext", code=-32601
    )
    mark = await agent.send_json(
        {"jsonrpc": "2.0", "method": "acpio/checkUnknownNotification", "params": {}}
    )
    await agent.send_json({"jsonrpc": "2.0", "method": "_acpio/check/notification", "params": {}})
    synced = await agent.request("check-sync", "_acpio/check/sync", {})
    replies = [
        line
        for line in agent.lines[mark:]
        if isinstance(message := parse(line), dict)
        and "method" not in message
        and message.get("id") != "check-sync"
    ]
    if replies:
        run.verdict(
            "unknown-notification",
            False,
            f"the agent answered a notification: {short(replies[0].decode(errors='replace'))}",
        )
    elif synced is None:
        run.verdict(
            "unknown-notification",
            False,
            "after two unknown notifications the agent no longer answered requests",
        )
    else:
        run.verdict("unknown-notification", True, "both ignored")


def _batch_reply(line: bytes) -> bool:
    message = parse(line)
    if isinstance(message, list):
        return True
    if not isinstance(message, dict) or "method" in message:
        return False
    # A stray error for the batch's notification is judged by no-reply-to-notification.
    return message.get("id") == "check-b1" or (
        message.get("id") is None and error_of(message)[0] == -32600
    )


async def _batches(run: CheckRun, agent: RawAgent) -> None:
    mark = await agent.send(b"[]")
    line = await agent.wait_line(_batch_reply, mark)
    message = parse(line) if line is not None else None
    code, _ = error_of(message)
    if line is None:
        run.verdict("batch-empty", False, f"no answer within {agent.timeout:g}s")
    elif code == -32600 and isinstance(message, dict) and message.get("id") is None:
        run.verdict("batch-empty", True, "one -32600 error")
    else:
        run.verdict(
            "batch-empty",
            False,
            f"expected one -32600 error object, got {short(line.decode(errors='replace'))}",
        )
    await _notification_batch(run, agent)
    batch: list[object] = [
        {"jsonrpc": "2.0", "id": "check-b1", "method": "_acpio/check/batch", "params": {}},
        {"jsonrpc": "2.0", "method": "_acpio/check/batchNotification", "params": {}},
        1,
    ]
    mark = await agent.send(json.dumps(batch, separators=(",", ":")).encode())
    line = await agent.wait_line(_batch_reply, mark)
    run.verdict("batch-mixed", *_judge_mixed(line))


def _judge_mixed(line: bytes | None) -> tuple[bool, str]:
    if line is None:
        return False, "no answer to the batch"
    message = parse(line)
    shown = short(line.decode(errors="replace"))
    if isinstance(message, dict):
        if _refuses_batch(message):
            return True, "batches unsupported: one -32600 for the whole batch"
        return False, f"answered the batch entries one by one, not as an array: {shown}"
    if not isinstance(message, list):
        return False, f"unexpected answer {shown}"
    ids = [
        fields.get("id", "missing") for entry in message if (fields := as_object(entry)) is not None
    ]
    codes = [error_of(entry)[0] for entry in message]
    if sorted(map(str, ids)) == ["None", "check-b1"] and -32600 in codes:
        return True, "one array: the request's answer and a -32600 for the invalid entry"
    return False, f"the array should hold the request's answer and one -32600, got {shown}"


def _answers_id_like(line: bytes, shown: str) -> bool:
    """A response whose id is ``shown`` as a string or as a number."""
    message = parse(line)
    if not isinstance(message, dict) or "method" in message:
        return False
    response_id = message.get("id")
    return isinstance(response_id, str | int) and str(response_id) == shown


async def _ids(run: CheckRun, agent: RawAgent) -> None:
    """A string id that looks like a number, then that number: each comes back as sent."""
    for sent in ("42", 42):
        mark = await agent.send_json(
            {"jsonrpc": "2.0", "id": sent, "method": "_acpio/check/id", "params": {}}
        )
        line = await agent.wait_line(lambda data: _answers_id_like(data, "42"), mark)
        if line is None:
            run.verdict(
                "ids", False, f"no answer with id {json.dumps(sent)} within {agent.timeout:g}s"
            )
            return
        message = parse(line)
        echoed = message.get("id") if isinstance(message, dict) else None
        if type(echoed) is not type(sent) or echoed != sent:
            run.verdict(
                "ids",
                False,
                f"sent id {json.dumps(sent)}, answered with id {json.dumps(echoed)}: a response "
                "carries its request's id exactly",
            )
            return
    run.verdict("ids", True, 'id "42" answered as "42", id 42 as 42')


async def _notification_batch(run: CheckRun, agent: RawAgent) -> None:
    batch: list[object] = [
        {"jsonrpc": "2.0", "method": "_acpio/check/batchOnly", "params": {}},
        {"jsonrpc": "2.0", "method": "_acpio/check/batchOnly", "params": {}},
    ]
    mark = await agent.send(json.dumps(batch, separators=(",", ":")).encode())
    # The agent reads in order: once this is answered, any reply to the batch came first.
    synced = await agent.request("check-sync-batch", "_acpio/check/sync", {})
    replies = [
        line
        for line in agent.lines[mark:]
        if isinstance(message := parse(line), list)
        or (
            isinstance(message, dict)
            and "method" not in message
            and message.get("id") != "check-sync-batch"
        )
    ]
    refusal = len(replies) == 1 and _refuses_batch(parse(replies[0]))
    if replies and not refusal:
        run.verdict(
            "batch-notifications",
            False,
            f"the agent answered a batch of only notifications ({len(replies)} "
            f"{'replies' if len(replies) > 1 else 'reply'}): "
            f"{short(replies[0].decode(errors='replace'))}; it gets no reply at all, or one "
            "-32600 (id null) where batches are unsupported",
        )
    elif synced is None:
        run.verdict(
            "batch-notifications",
            False,
            "after a batch of notifications the agent no longer answered requests",
        )
    elif refusal:
        run.verdict("batch-notifications", True, "batches unsupported: one -32600 (id null)")
    else:
        run.verdict("batch-notifications", True, "no reply")


def _refuses_batch(message: object) -> bool:
    """One error object ``-32600`` with id ``null``: a whole JSON array refused (ACP does not
    use JSON-RPC batches; the official TypeScript SDK answers any array this way)."""
    fields = as_object(message)
    return (
        fields is not None
        and "id" in fields
        and fields["id"] is None
        and error_of(fields)[0] == -32600
    )
