"""JSON-RPC 2.0 messages as bytes: the envelope read from a line, the lines written back.

How this works: an incoming line decodes into an :class:`_Envelope` whose
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

from typing import Final

import msgspec

from ._errors import INTERNAL_ERROR, RequestError
from .schema._generated import CANCEL_REQUEST_METHOD

__all__ = [
    "CANCEL_REQUEST",
    "RequestId",
    "_DECODE_ERRORS",
    "_LEADING_WHITESPACE",
    "_NULL_ID_REPLY",
    "_OPEN_BRACE",
    "_OPEN_BRACKET",
    "_Envelope",
    "_batch_line",
    "_decode_batch",
    "_decode_cancel",
    "_decode_envelope",
    "_describe",
    "_encode_plain",
    "_error_from_wire",
    "_error_line",
    "_is_decoder_recursion",
    "_is_valid_id",
    "_notification_prefix",
    "_parse_error",
    "_request_error_in",
    "_short",
    "_valid_id_or_none",
]

RequestId = int | str

CANCEL_REQUEST: Final = CANCEL_REQUEST_METHOD
_MAX_ERROR_TEXT: Final = 300
_MAX_CACHED_METHODS: Final = 256
_LEADING_WHITESPACE: Final = frozenset(b" \t\r")
_OPEN_BRACE: Final = ord("{")
_OPEN_BRACKET: Final = ord("[")
_NULL_ID_REPLY: Final = b'{"jsonrpc":"2.0","id":null,'


class _Envelope(msgspec.Struct):
    """The fields of a JSON-RPC message; params stay raw until a handler decodes them."""

    jsonrpc: object = msgspec.UNSET
    id: object = msgspec.UNSET
    method: object = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: object = msgspec.UNSET


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: object = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_batch = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode_cancel = msgspec.json.Decoder(_CancelParams).decode
_encode_plain = msgspec.json.Encoder().encode
_DECODE_ERRORS: Final = (msgspec.DecodeError, RecursionError)


_prefixes: dict[str, bytes] = {}


def _notification_prefix(method: str) -> bytes:
    """``{"jsonrpc":"2.0","method":<method>,"params":`` (cached: methods are few)."""
    prefix = _prefixes.get(method)
    if prefix is None:
        prefix = b'{"jsonrpc":"2.0","method":' + _encode_plain(method) + b',"params":'
        if len(_prefixes) < _MAX_CACHED_METHODS:
            _prefixes[method] = prefix
    return prefix


def _is_valid_id(value: object) -> bool:
    # bool is an int subclass, and floats are not ids: check the exact type.
    return type(value) is int or type(value) is str


def _valid_id_or_none(value: object) -> RequestId | None:
    return value if type(value) is int or type(value) is str else None


def _request_error_in(exc: Exception) -> RequestError | None:
    """The handler's RequestError, also when a task group wrapped it (alone) in a group."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, RequestError) else None


def _describe(exc: BaseException) -> str:
    # Only the type and the first line of the message reach the peer.
    text = str(exc).strip().partition("\n")[0]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _parse_error(exc: BaseException) -> RequestError:
    return RequestError.parse_error(_short(f"Parse error: {exc}"))


def _is_decoder_recursion(exc: BaseException) -> bool:
    """True for msgspec giving up on nesting (also alone inside an exception group)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return isinstance(exc, RecursionError) and "deserializ" in str(exc)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_TEXT else text[: _MAX_ERROR_TEXT - 3] + "..."


def _error_line(request_id: RequestId | None, error: RequestError) -> bytes:
    body: dict[str, object] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    try:
        encoded = _encode_plain(body)
    except (TypeError, ValueError, msgspec.EncodeError):
        encoded = _encode_plain({"code": error.code, "message": error.message})
    return b'{"jsonrpc":"2.0","id":%b,"error":%b}\n' % (_encode_plain(request_id), encoded)


def _batch_line(replies: list[bytes]) -> bytes:
    return b"[" + b",".join([reply[:-1] for reply in replies]) + b"]\n"


def _error_from_wire(error: object) -> RequestError:
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        if type(code) is int and isinstance(message, str):
            return RequestError(code, message, error.get("data"))
    return RequestError(
        INTERNAL_ERROR, _short(f"malformed error object from the peer: {error!r}"), error
    )
