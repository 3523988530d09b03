"""The transcript: exact bytes both ways, JSON Lines round trips, failure-report formatting."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from acpio.testing import Transcript, TranscriptEntry


def _transcript(*lines: tuple[str, bytes]) -> Transcript:
    ticks = iter([100.0] + [100.0 + 0.25 * i for i in range(1, len(lines) + 1)])
    transcript = Transcript(clock=lambda: next(ticks))
    for direction, data in lines:
        transcript.record(direction, data)  # type: ignore[arg-type]
    return transcript


REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2}}'
RESPONSE = b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "caf\\u00e9 \xe2\x98\x95"}}'
NOT_JSON = b"Traceback (most recent call last):"
NOT_UTF8 = b'{"jsonrpc":"2.0","method":"x","params":{"s":"\xff"}}'
PADDED = b'  {"jsonrpc":"2.0","method":"y"}\r'


def test_record_keeps_exact_bytes_direction_and_relative_time() -> None:
    transcript = _transcript(("client->agent", REQUEST + b"\n"), ("agent->client", RESPONSE))
    first, second = transcript
    assert (first.direction, first.time, first.data) == ("client->agent", 0.25, REQUEST)
    assert (second.direction, second.time, second.data) == ("agent->client", 0.5, RESPONSE)
    assert first.method == "initialize"
    assert second.method is None
    assert second.message == {"jsonrpc": "2.0", "id": 1, "result": {"text": "café ☕"}}
    assert transcript.messages("agent->client") == [second.message]
    assert transcript.messages(method="initialize") == [first.message]


def test_jsonl_round_trip_is_exact_for_any_line(tmp_path: Path) -> None:
    transcript = _transcript(
        ("client->agent", REQUEST),
        ("agent->client", RESPONSE),
        ("agent->client", NOT_JSON),
        ("agent->client", NOT_UTF8),
        ("agent->client", PADDED),
        ("agent->client", b""),
    )
    path = tmp_path / "t.jsonl"
    transcript.write_jsonl(path)
    loaded = Transcript.read_jsonl(path)
    assert loaded == transcript
    assert [entry.data for entry in loaded] == [entry.data for entry in transcript]

    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert len(records) == 6
    # A valid JSON line is embedded verbatim as "message", anything else as base64 "raw".
    assert records[0] == {
        "time": 0.25,
        "direction": "client->agent",
        "message": json.loads(REQUEST),
    }
    assert path.read_bytes().splitlines()[1].endswith(b'"message":' + RESPONSE + b"}")
    assert base64.b64decode(records[2]["raw"]) == NOT_JSON
    assert base64.b64decode(records[3]["raw"]) == NOT_UTF8
    assert base64.b64decode(records[4]["raw"]) == PADDED
    assert "message" not in records[2]


def test_real_times_survive_the_round_trip() -> None:
    transcript = Transcript()
    for _ in range(3):
        transcript.record("agent->client", b"{}")
    times = [entry.time for entry in transcript]
    assert times == sorted(times)
    assert [entry.time for entry in Transcript.from_jsonl(transcript.to_jsonl())] == times


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"not json", "not a transcript record"),
        (b'{"time": 1, "direction": "sideways", "message": {}}', "unknown direction"),
        (b'{"time": 1, "direction": "client->agent"}', 'needs "message" or "raw"'),
        (b'{"time": 1, "direction": "client->agent", "raw": "%%%"}', '"raw" is not base64'),
    ],
)
def test_malformed_records_name_their_line(line: bytes, problem: str) -> None:
    good = TranscriptEntry("client->agent", 0.0, b"{}").to_json()
    with pytest.raises(ValueError, match=f"line 3: .*{problem}"):
        Transcript.from_jsonl(good + b"\n\n" + line + b"\n")


def test_format_tail_for_failure_reports() -> None:
    transcript = _transcript(*[("agent->client", b'{"n":%d}' % i) for i in range(5)])
    tail = transcript.format_tail(2).splitlines()
    assert tail == [
        "... 3 earlier messages not shown",
        '   1.0000s agent->client {"n":3}',
        '   1.2500s agent->client {"n":4}',
    ]
    long = TranscriptEntry("client->agent", 0.0, b"x" * 1000)
    assert long.format(width=20).endswith("x" * 17 + "...")
    assert Transcript().format_tail() == ""
    assert transcript.format_tail(0) == "... 5 earlier messages not shown"
