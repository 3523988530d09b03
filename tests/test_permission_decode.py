"""The one-pass permission answer decoder agrees with the general decoder on every answer.

``decode_permission_response`` reads the common answers (a selected or a
cancelled outcome) in one pass and everything else through ``schema.decode``;
whatever the client sends, the result (or the refusal) must be exactly what
the general decoder makes of it, and ``interpret_outcome`` must build the
same ``Outcome`` (its ``raw`` included) as from ``schema.to_builtins``.
"""

from __future__ import annotations

import msgspec
import pytest

from acpio import schema
from acpio._handles.permission import (
    Outcome,
    PermissionAnswer,
    decode_permission_response,
    interpret_outcome,
    option,
)

OPTIONS = [option("allow", "Allow", "allow_once"), option("no", "No", "reject_once")]

ANSWERS = [
    b'{"outcome":{"outcome":"selected","optionId":"allow"}}',
    b'{"outcome":{"outcome":"selected","optionId":"no"}}',
    b'{"outcome":{"outcome":"selected","optionId":"never-offered"}}',
    b'{"outcome":{"optionId":"allow","outcome":"selected"}}',
    b'{"outcome":{"outcome":"selected","optionId":"allow","extra":[1,{"a":2}]},"more":1}',
    b'{"outcome":{"outcome":"selected","optionId":"allow","_meta":{"k":[1,2]}}}',
    b'{"outcome":{"outcome":"selected","optionId":"allow","_meta":null}}',
    b'{"outcome":{"outcome":"selected","optionId":"allow"},"_meta":{"x":1}}',
    b'{"outcome":{"outcome":"selected","optionId":"allow"},"_meta":null}',
    b'{"outcome":{"outcome":"cancelled"}}',
    b'{"outcome":{"outcome":"cancelled","_meta":{"why":"user"}}}',
    b'{"_meta":{},"outcome":{"outcome":"cancelled","optionId":"allow"}}',
    b'{"outcome":{"outcome":"_custom","optionId":"allow"}}',
    b'{"outcome":{"outcome":"future_value"}}',
    # Malformed: the general decoder refuses these, so must the fast path.
    b'{"outcome":{"outcome":"selected"}}',
    b'{"outcome":{"outcome":"selected","optionId":7}}',
    b'{"outcome":{"outcome":"selected","optionId":null}}',
    b'{"outcome":{"outcome":"selected","optionId":"allow","_meta":5}}',
    b'{"outcome":{"outcome":"selected","optionId":"allow"},"_meta":"x"}',
    b'{"outcome":{"outcome":"cancelled","_meta":[]}}',
    b'{"outcome":{"outcome":5}}',
    b'{"outcome":{}}',
    b'{"outcome":"selected"}',
    b'{"outcome":null}',
    b"{}",
    b"null",
    b"[]",
    b'"selected"',
]


def general(raw: msgspec.Raw) -> schema.RequestPermissionResponse | None:
    try:
        return schema.decode(raw, schema.RequestPermissionResponse)
    except msgspec.ValidationError:
        return None


@pytest.mark.parametrize("answer", ANSWERS)
def test_fast_decoder_matches_the_general_decoder(answer: bytes) -> None:
    raw = msgspec.Raw(answer)
    expected = general(raw)
    got = decode_permission_response(raw)
    assert (got is None) == (expected is None)
    if got is not None and expected is not None:
        # The same JSON back, and the same meaning.
        assert schema.encode(got) == schema.encode(expected)
        if isinstance(got, PermissionAnswer):
            assert isinstance(
                expected.outcome,
                schema.SelectedPermissionOutcome | schema.CancelledPermissionOutcome,
            )
        else:
            assert got == expected
        outcome = interpret_outcome(got.outcome, OPTIONS)
        assert outcome == interpret_outcome(expected.outcome, OPTIONS)
        assert outcome.raw == schema.to_builtins(expected.outcome)


def test_a_malformed_answer_is_logged_and_never_approval(caplog: pytest.LogCaptureFixture) -> None:
    raw = msgspec.Raw(b'{"outcome":{"outcome":"selected","optionId":7}}')
    assert decode_permission_response(raw) is None
    assert "malformed permission response" in caplog.text


def test_outcomes_built_for_answers_equal_constructed_ones() -> None:
    selected = interpret_outcome(schema.SelectedPermissionOutcome(option_id="allow"), OPTIONS)
    assert selected == Outcome(
        "selected", "allow", "allow_once", {"outcome": "selected", "optionId": "allow"}
    )
    assert selected.allowed
    assert not selected.remembered
    assert repr(selected).startswith("Outcome(kind='selected', option_id='allow'")
