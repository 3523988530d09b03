"""The transcript of a test connection: every line both ways, with direction and time.

How this works: the mock client hands each line to :meth:`Transcript.record` the
moment it is sent or received, so the transcript shows exactly what went over
the wire, in order, even lines that are not valid JSON. It is written as JSON
Lines, one object per message::

    {"time": 0.0012, "direction": "client->agent", "message": {"jsonrpc": "2.0", ...}}

A line that is valid JSON is embedded verbatim (the bytes on the wire, not a
re-encoding), so reading the file back gives the same bytes; any other line is
kept as base64 under ``"raw"`` instead of ``"message"``.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, overload

import msgspec

from .._json import JsonValue, decode_json, get_field

__all__ = ["AGENT_TO_CLIENT", "CLIENT_TO_AGENT", "Direction", "Transcript", "TranscriptEntry"]

Direction = Literal["client->agent", "agent->client"]
"""Which way a line went: written by the client, or written by the agent."""
CLIENT_TO_AGENT: Final[Direction] = "client->agent"
AGENT_TO_CLIENT: Final[Direction] = "agent->client"
_DIRECTIONS: Final = frozenset({CLIENT_TO_AGENT, AGENT_TO_CLIENT})
_DEFAULT_WIDTH: Final = 400

_decode_any = decode_json
_encode = msgspec.json.Encoder().encode


class _Record(msgspec.Struct, forbid_unknown_fields=False):
    time: float
    direction: str
    message: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    raw: str | msgspec.UnsetType = msgspec.UNSET


_decode_record = msgspec.json.Decoder(_Record).decode


def _is_json(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        _decode_any(data)
    except (UnicodeDecodeError, msgspec.DecodeError, RecursionError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class TranscriptEntry:
    """One line that went over the wire.

    ``data`` is the line exactly as sent or received, without its newline;
    ``time`` is in seconds since the transcript started (monotonic clock).
    """

    direction: Direction
    time: float
    data: bytes

    @property
    def message(self) -> JsonValue:
        """The line parsed as JSON, or ``None`` when it is not valid JSON."""
        try:
            return _decode_any(self.data)
        except (msgspec.DecodeError, RecursionError):
            return None

    @property
    def method(self) -> str | None:
        """The JSON-RPC ``method`` of a request or notification, else ``None``."""
        method = get_field(self.message, "method")
        return method if isinstance(method, str) else None

    def format(self, width: int = _DEFAULT_WIDTH) -> str:
        """One human-readable line: time, direction and the message (cut at ``width``)."""
        text = self.data.decode("utf-8", errors="backslashreplace")
        if len(text) > width:
            text = f"{text[: width - 3]}..."
        return f"{self.time:9.4f}s {self.direction} {text}"

    def to_json(self) -> bytes:
        """This entry as one JSON Lines record (without the newline)."""
        head = b'{"time":%s,"direction":"%s",' % (
            repr(float(self.time)).encode(),
            self.direction.encode(),
        )
        if self.data == self.data.strip() and _is_json(self.data):
            # Verbatim, so the file holds the exact bytes of the wire.
            return head + b'"message":' + self.data + b"}"
        return head + b'"raw":' + _encode(base64.b64encode(self.data).decode("ascii")) + b"}"

    @classmethod
    def from_json(cls, line: bytes | str) -> TranscriptEntry:
        """Parse one JSON Lines record written by :meth:`to_json`.

        :raises ValueError: when the record is malformed.
        """
        try:
            record = _decode_record(line)
        except msgspec.DecodeError as exc:
            raise ValueError(f"not a transcript record: {exc}") from None
        if record.direction not in _DIRECTIONS:
            raise ValueError(f"unknown direction {record.direction!r}")
        direction: Direction = (
            CLIENT_TO_AGENT if record.direction == CLIENT_TO_AGENT else AGENT_TO_CLIENT
        )
        if not isinstance(record.message, msgspec.UnsetType):
            data = bytes(record.message)
        elif isinstance(record.raw, str):
            try:
                data = base64.b64decode(record.raw, validate=True)
            except binascii.Error as exc:
                raise ValueError(f'"raw" is not base64: {exc}') from None
        else:
            raise ValueError('a transcript record needs "message" or "raw"')
        return cls(direction, record.time, data)


class Transcript(Sequence[TranscriptEntry]):
    """Every message of one connection, both directions, in the order they happened.

    Lines are recorded when the client sends them and when they arrive, so
    the order is the order seen by the client. It is a read-only sequence of
    :class:`TranscriptEntry`; :meth:`write_jsonl` and :meth:`read_jsonl` save
    and load it, :meth:`format_tail` shows the end of it in a failure report.
    """

    def __init__(
        self,
        entries: Iterable[TranscriptEntry] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: list[TranscriptEntry] = list(entries)
        self._clock = clock
        self._start = clock()

    def record(self, direction: Direction, data: bytes) -> TranscriptEntry:
        """Append one line (a trailing newline is dropped) and return its entry."""
        if data.endswith(b"\n"):
            data = data[:-1]
        entry = TranscriptEntry(direction, self._clock() - self._start, bytes(data))
        self._entries.append(entry)
        return entry

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> TranscriptEntry: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TranscriptEntry]: ...
    def __getitem__(self, index: int | slice) -> TranscriptEntry | Sequence[TranscriptEntry]:
        return self._entries[index]

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(self._entries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Transcript):
            return NotImplemented
        return self._entries == other._entries

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"<Transcript of {len(self._entries)} messages>"

    def messages(
        self, direction: Direction | None = None, *, method: str | None = None
    ) -> list[object]:
        """The parsed messages, optionally only one direction and/or one method."""
        return [
            entry.message
            for entry in self._entries
            if (direction is None or entry.direction == direction)
            and (method is None or entry.method == method)
        ]

    def format_tail(self, count: int = 50, *, width: int = _DEFAULT_WIDTH) -> str:
        """The last ``count`` lines, human-readable, for failure reports."""
        tail = self._entries[-count:] if count > 0 else []
        lines = [entry.format(width) for entry in tail]
        skipped = len(self._entries) - len(tail)
        if skipped > 0:
            lines.insert(0, f"... {skipped} earlier messages not shown")
        return "\n".join(lines)

    def to_jsonl(self) -> bytes:
        """The whole transcript as JSON Lines (one record per message)."""
        return b"".join(entry.to_json() + b"\n" for entry in self._entries)

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write the transcript to ``path`` as JSON Lines (replacing the file)."""
        with open(path, "wb") as file:
            file.write(self.to_jsonl())

    @classmethod
    def from_jsonl(cls, data: bytes | str) -> Transcript:
        """Parse JSON Lines written by :meth:`to_jsonl` (blank lines are skipped).

        :raises ValueError: naming the line number of a malformed record.
        """
        raw = data.encode() if isinstance(data, str) else data
        entries: list[TranscriptEntry] = []
        for number, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                entries.append(TranscriptEntry.from_json(line))
            except ValueError as exc:
                raise ValueError(f"line {number}: {exc}") from None
        return cls(entries)

    @classmethod
    def read_jsonl(cls, path: str | os.PathLike[str]) -> Transcript:
        """Read a transcript written by :meth:`write_jsonl`."""
        with open(path, "rb") as file:
            return cls.from_jsonl(file.read())
