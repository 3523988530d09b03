"""The testing view's fields can be found: ``help()`` and ``dir()`` list them with what
they hold, a misspelt one names the right one, and docs/testing.md lists every one."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from docs_pages import section

from acpio.testing import (
    ClientView,
    MessageView,
    PlanView,
    SessionView,
    TerminalView,
    ToolCallView,
)
from acpio.testing._view import fields_of

VIEWS = (SessionView, ClientView, ToolCallView, TerminalView, MessageView, PlanView)


def _help(obj: object) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        help(obj)
    return out.getvalue()


def test_help_lists_every_field_of_the_session_view_with_what_it_holds() -> None:
    shown = _help(SessionView)
    slots = SessionView.__slots__
    assert isinstance(slots, dict)
    for name, doc in slots.items():
        if name.startswith("_"):
            continue
        assert doc.strip(), name
        assert re.search(rf"^ \|  {name}\n \|      {re.escape(doc.split()[0])}", shown, re.M), name


def test_dir_lists_the_fields_on_the_class_and_on_a_view() -> None:
    for name in ("plans", "tool_calls", "terminals", "messages", "state", "agent_text"):
        assert name in dir(SessionView)
        assert name in dir(SessionView("s"))
    assert "sessions" in dir(ClientView)


def test_a_misspelt_field_names_the_closest_one_and_all_of_them() -> None:
    view = SessionView("s")
    with pytest.raises(AttributeError, match=r"did you mean 'plans'\?") as caught:
        view.plan  # type: ignore[attr-defined]  # noqa: B018
    assert caught.value.name == "plan" and caught.value.obj is view
    assert "tool_calls, terminals, messages, plans" in str(caught.value)
    with pytest.raises(AttributeError, match=r"did you mean 'tool_calls'\?"):
        view.tool_call  # type: ignore[attr-defined]  # noqa: B018
    call = ToolCallView("c")
    with pytest.raises(
        AttributeError, match=r"'ToolCallView' has no field 'stauts'; did you mean 'status'"
    ):
        call.stauts  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError, match="Its fields: id, command"):
        TerminalView("t").zzz  # type: ignore[attr-defined]  # noqa: B018


def test_a_field_nothing_resembles_gets_no_guess_and_hasattr_still_works() -> None:
    view = SessionView("s")
    with pytest.raises(AttributeError) as caught:
        view.xyzzy  # type: ignore[attr-defined]  # noqa: B018
    assert "did you mean" not in str(caught.value)
    assert not hasattr(view, "xyzzy") and hasattr(view, "plans")


def test_the_views_keep_their_fields_after_updates() -> None:
    view = SessionView("s")
    view.state = "running"
    assert view.busy and view.plans == {} and view.updates_applied == 0


def test_docs_testing_page_lists_every_field_of_every_view() -> None:
    page = section("docs/testing.md", "## What `session.view` holds")
    table = re.findall(r"^\| `(\w+)` \|", page, re.MULTILINE)
    assert table == fields_of(SessionView)
    for view in (ToolCallView, TerminalView, MessageView, PlanView):
        listed = page[page.index(f"- `{view.__name__}`") :].split("\n- ", 1)[0]
        assert set(re.findall(r"`(\w+)`", listed)) >= set(fields_of(view)), view.__name__
