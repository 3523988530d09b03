"""Permission policies: what each one answers, on hand-written permission requests.

How the answers reach a real agent (and that odd answers are never approval)
is tested against the example agents in ``test_client.py``.
"""

from __future__ import annotations

import time

import anyio
import pytest
from anyio.abc import TaskStatus

from acpio import schema
from acpio.testing import PermissionPolicy, PermissionPolicyError, PermissionRequest

pytestmark = pytest.mark.anyio


def _option(option_id: str, kind: str) -> dict[str, object]:
    return {"optionId": option_id, "name": option_id.title(), "kind": kind}


def _request(*options: dict[str, object], subject: object = None) -> PermissionRequest:
    params: dict[str, object] = {
        "sessionId": "sess_1",
        "title": "Run `ls`?",
        "options": list(options),
    }
    if subject is not None:
        params["subject"] = subject
    return PermissionRequest(7, params, time.monotonic())


ALL = (
    _option("no", "reject_once"),
    _option("yes", "allow_once"),
    _option("always", "allow_always"),
    _option("never", "reject_always"),
    _option("custom", "_acme_maybe"),
)


async def test_allow_and_reject_pick_the_first_option_of_their_kinds() -> None:
    request = _request(*ALL)
    assert await PermissionPolicy.allow().decide(request) == {
        "outcome": "selected",
        "optionId": "yes",
    }
    assert await PermissionPolicy.reject().decide(request) == {
        "outcome": "selected",
        "optionId": "no",
    }
    assert await PermissionPolicy.allow("allow_always").decide(request) == {
        "outcome": "selected",
        "optionId": "always",
    }
    assert await PermissionPolicy.reject("reject_always").decide(request) == {
        "outcome": "selected",
        "optionId": "never",
    }


async def test_allow_without_an_allow_option_fails() -> None:
    request = _request(_option("no", "reject_once"), _option("custom", "_acme_maybe"))
    with pytest.raises(PermissionPolicyError, match="no option of kind allow_once or allow_always"):
        await PermissionPolicy.allow().decide(request)
    with pytest.raises(PermissionPolicyError, match="reject_once or reject_always"):
        await PermissionPolicy.reject().decide(_request(_option("yes", "allow_once")))


async def test_select_cancelled_and_raw_answer_exactly_what_they_say() -> None:
    request = _request(*ALL)
    assert await PermissionPolicy.select("not-offered").decide(request) == {
        "outcome": "selected",
        "optionId": "not-offered",
    }
    assert await PermissionPolicy.cancelled().decide(request) == {"outcome": "cancelled"}
    raw = PermissionPolicy.raw({"outcome": "_maybe", "_meta": {"why": "testing"}})
    first = await raw.decide(request)
    assert first == {"outcome": "_maybe", "_meta": {"why": "testing"}}
    # Each answer is a fresh object: a test mutating one does not change the next.
    first["outcome"] = "changed"
    assert (await raw.decide(request))["outcome"] == "_maybe"


async def test_never_waits_until_cancelled() -> None:
    request = _request(*ALL)
    finished = False

    async def answer(*, task_status: TaskStatus[None]) -> None:
        nonlocal finished
        task_status.started()
        await PermissionPolicy.never().decide(request)
        finished = True

    async with anyio.create_task_group() as group:
        await group.start(answer)
        # Once every task is blocked, the policy is known to be waiting, not answering.
        await anyio.wait_all_tasks_blocked()
        assert not finished
        group.cancel_scope.cancel()
    assert not finished


async def test_scripted_answers_in_order_then_fails() -> None:
    request = _request(*ALL)
    policy = PermissionPolicy.scripted(
        [PermissionPolicy.allow(), PermissionPolicy.reject(), PermissionPolicy.cancelled()]
    )
    answers = [await policy.decide(request) for _ in range(3)]
    assert answers == [
        {"outcome": "selected", "optionId": "yes"},
        {"outcome": "selected", "optionId": "no"},
        {"outcome": "cancelled"},
    ]
    with pytest.raises(PermissionPolicyError, match="all 3 scripted answers were used"):
        await policy.decide(request)


async def test_call_accepts_sync_and_async_functions_and_every_kind_of_answer() -> None:
    request = _request(*ALL)
    seen: list[PermissionRequest] = []

    def mapping(received: PermissionRequest) -> dict[str, object]:
        seen.append(received)
        return {"outcome": "selected", "optionId": received.option_ids[-1]}

    async def struct(received: PermissionRequest) -> schema.SelectedPermissionOutcome:
        return schema.SelectedPermissionOutcome(option_id="always")

    def delegate(received: PermissionRequest) -> PermissionPolicy:
        return PermissionPolicy.reject()

    assert await PermissionPolicy.call(mapping).decide(request) == {
        "outcome": "selected",
        "optionId": "custom",
    }
    assert seen == [request]
    assert await PermissionPolicy.call(struct).decide(request) == {
        "outcome": "selected",
        "optionId": "always",
    }
    assert await PermissionPolicy.call(delegate).decide(request) == {
        "outcome": "selected",
        "optionId": "no",
    }
    with pytest.raises(PermissionPolicyError, match="must return an outcome object"):
        await PermissionPolicy.call(lambda received: "allow").decide(request)  # type: ignore[arg-type, return-value]


def test_request_record_reads_the_params() -> None:
    command = _request(
        *ALL,
        subject={"type": "command", "command": "ls", "cwd": "/work", "toolCallId": "call_1"},
    )
    assert command.session_id == "sess_1"
    assert command.title == "Run `ls`?"
    assert command.option_ids == ["no", "yes", "always", "never", "custom"]
    assert command.option_of_kind("allow_always", "allow_once") == "yes"
    assert command.option_of_kind("_nothing") is None
    assert command.command == "ls"
    assert command.tool_call_id == "call_1"
    assert command.pending
    assert command.selected_option_id is None

    tool_call = _request(*ALL, subject={"type": "tool_call", "toolCall": {"toolCallId": "call_2"}})
    assert tool_call.tool_call_id == "call_2"
    assert tool_call.command is None

    # Malformed params never crash the record: fields are just absent.
    odd = PermissionRequest("x", {"options": "nope", "title": 3}, 0.0)
    assert (odd.options, odd.title, odd.session_id, odd.tool_call_id) == ([], None, None, None)


def test_policies_describe_themselves() -> None:
    assert repr(PermissionPolicy.allow()) == "PermissionPolicy.allow('allow_once', 'allow_always')"
    assert repr(PermissionPolicy.select("x")) == "PermissionPolicy.select('x')"
    assert repr(PermissionPolicy.never()) == "PermissionPolicy.never()"
