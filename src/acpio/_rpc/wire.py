"""JSON-RPC 2.0 messages as bytes: the envelope read from a line, the lines written back.

How this works: an incoming line decodes into an :class:`Envelope` whose
``params`` and ``result`` stay raw JSON, so this layer never builds protocol
types (a handler decodes its own params). Outgoing lines are concatenated
from pieces that are already JSON (a cached ``{"jsonrpc":"2.0","method":...``
prefix, the encoded params, the closing brace) instead of encoding a dict
per message. Error answers are built here in one place, so every refusal has
the same shape: ``id`` only when it was valid (an integer or a string, never
a bool or a float), otherwise ``null`` as JSON-RPC requires, and a message
short enough never to echo a hostile payload back at length.
"""

from __future__ import annotations

from typing import Final, cast

import msgspec

from .._errors import INTERNAL_ERROR, RequestError
from ..schema import CANCEL_REQUEST_METHOD

__all__ = [
    "CANCEL_REQUEST",
    "Answer",
    "RequestId",
    "DECODE_ERRORS",
    "LEADING_WHITESPACE",
    "NULL_ID_REPLY",
    "OPEN_BRACE",
    "OPEN_BRACKET",
    "Envelope",
    "Refused",
    "batch_line",
    "decode_batch",
    "decode_cancel",
    "decode_envelope",
    "describe",
    "encode_plain",
    "error_from_wire",
    "error_line",
    "is_decoder_recursion",
    "is_valid_id",
    "notification_prefix",
    "parse_error",
    "request_error_in",
    "request_method_part",
    "request_tail",
    "short",
    "valid_id_or_none",
]

RequestId = int | str
#: What a sent request gets back: its result as raw JSON, or the exception to raise.
Answer = msgspec.Raw | BaseException

CANCEL_REQUEST: Final = CANCEL_REQUEST_METHOD
_MAX_ERROR_TEXT: Final = 300
_MAX_CACHED_METHODS: Final = 256
LEADING_WHITESPACE: Final = frozenset(b" \t\r")
OPEN_BRACE: Final = ord("{")
OPEN_BRACKET: Final = ord("[")
NULL_ID_REPLY: Final = b'{"jsonrpc":"2.0","id":null,'


class Envelope(msgspec.Struct):
    """The fields of a JSON-RPC message; params stay raw until a handler decodes them."""

    jsonrpc: object = msgspec.UNSET
    id: object = msgspec.UNSET
    method: object = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: object = msgspec.UNSET


class Refused(Exception):
    """The answer of a request whose response could not be used (its message: why).

    The receiving half sets a request's waiter to it (an oversized or
    malformed response); the request turns it into the :class:`RequestError`
    it raises, naming the method and the request id.
    """


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: object = None


decode_envelope = msgspec.json.Decoder(Envelope).decode
decode_batch = msgspec.json.Decoder(list[msgspec.Raw]).decode
decode_cancel = msgspec.json.Decoder(_CancelParams).decode
encode_plain = msgspec.json.Encoder().encode
DECODE_ERRORS: Final = (msgspec.DecodeError, RecursionError)


_prefixes: dict[str, bytes] = {}


def notification_prefix(method: str) -> bytes:
    """``{"jsonrpc":"2.0","method":<method>,"params":`` (cached: methods are few)."""
    prefix = _prefixes.get(method)
    if prefix is None:
        prefix = b'{"jsonrpc":"2.0","method":' + encode_plain(method) + b',"params":'
        if len(_prefixes) < _MAX_CACHED_METHODS:
            _prefixes[method] = prefix
    return prefix


_method_parts: dict[str, bytes] = {}


def request_method_part(method: str) -> bytes:
    """``,"method":<method>,"params":``, what follows a request's id (cached: methods are few).

    A request line is ``{"jsonrpc":"2.0","id":<id>`` + this + params + ``}``.
    """
    part = _method_parts.get(method)
    if part is None:
        part = b',"method":' + encode_plain(method) + b',"params":'
        if len(_method_parts) < _MAX_CACHED_METHODS:
            _method_parts[method] = part
    return part


def request_tail(method: str, encoded_params: bytes | None) -> bytes:
    """What follows a request's id on its line: the method, the params and ``}\\n``.

    A request line is ``{"jsonrpc":"2.0","id":<id>`` + this; ``None`` omits
    params (JSON-RPC forbids ``"params": null``).
    """
    if encoded_params is None:
        return b',"method":' + encode_plain(method) + b"}\n"
    return request_method_part(method) + encoded_params + b"}\n"


def is_valid_id(value: object) -> bool:
    # bool is an int subclass, and floats are not ids: check the exact type.
    return type(value) is int or type(value) is str


def valid_id_or_none(value: object) -> RequestId | None:
    return value if type(value) is int or type(value) is str else None


def request_error_in(exc: Exception) -> RequestError | None:
    """The handler's RequestError, also when a task group wrapped it (alone) in a group."""
    while isinstance(exc, ExceptionGroup):
        inner = cast("ExceptionGroup[Exception]", exc).exceptions
        if len(inner) != 1:
            break
        exc = inner[0]
    return exc if isinstance(exc, RequestError) else None


def describe(exc: BaseException) -> str:
    # Only the type and the first line of the message reach the peer.
    text = str(exc).strip().partition("\n")[0]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def parse_error(exc: BaseException) -> RequestError:
    return RequestError.parse_error(short(f"Parse error: {exc}"))


def is_decoder_recursion(exc: BaseException) -> bool:
    """True for msgspec giving up on nesting (also alone inside an exception group)."""
    while isinstance(exc, BaseExceptionGroup):
        inner = cast("BaseExceptionGroup[BaseException]", exc).exceptions
        if len(inner) != 1:
            break
        exc = inner[0]
    return isinstance(exc, RecursionError) and "deserializ" in str(exc)


def short(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_TEXT else text[: _MAX_ERROR_TEXT - 3] + "..."


def error_line(request_id: RequestId | None, error: RequestError) -> bytes:
    body: dict[str, object] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    try:
        encoded = encode_plain(body)
    except (TypeError, ValueError, msgspec.EncodeError):
        encoded = encode_plain({"code": error.code, "message": error.message})
    return b'{"jsonrpc":"2.0","id":%b,"error":%b}\n' % (encode_plain(request_id), encoded)


def batch_line(replies: list[bytes]) -> bytes:
    return b"[" + b",".join([reply[:-1] for reply in replies]) + b"]\n"


def error_from_wire(error: object) -> RequestError:
    payload = error  # kept as given: the checks below narrow ``error``
    fields = cast("dict[str, object]", error) if isinstance(error, dict) else None
    if fields is not None:
        code = fields.get("code")
        message = fields.get("message")
        if type(code) is int and isinstance(message, str):
            return RequestError(code, message, fields.get("data"))
    return RequestError(
        INTERNAL_ERROR, short(f"malformed error object from the peer: {payload!r}"), payload
    )
