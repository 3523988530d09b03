"""JSON encoding and decoding of ACP protocol types.

One module-level msgspec encoder serves every message; decoders are created once per target type
and cached. Both use the hooks of `._base`, so open unions decode to their variant classes (or to
`Unknown<Union>` objects kept verbatim) and re-encode unchanged. Validation errors name the full
path of the bad value, e.g. ``Expected `str`, got `int` - at `$.prompt[0].text```.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar, overload

import msgspec

from ._base import dec_hook, enc_hook, join_error_path

__all__ = ("convert", "decode", "encode", "encoder", "to_builtins")

T = TypeVar("T")

encoder: Final = msgspec.json.Encoder(enc_hook=enc_hook)
"""The one JSON encoder of protocol objects (the framing module encodes with it too)."""
# The name the session layer imports today (its owner switches to ``encoder``; then drop it).
_encoder = encoder
_decoders: dict[object, msgspec.json.Decoder[Any]] = {}


def encode(obj: object) -> bytes:
    """Encode an ACP object (or any JSON-compatible value holding them) as compact JSON bytes.

    `msgspec.UNSET` fields are omitted and `None` is written as ``null``; unknown union values
    are written back exactly as they were received.
    """
    return encoder.encode(obj)


def _decoder(tp: object) -> msgspec.json.Decoder[Any]:
    try:
        decoder = _decoders.get(tp)
    except TypeError:  # an unhashable type expression: decode without caching
        return msgspec.json.Decoder(tp, dec_hook=dec_hook)
    if decoder is None:
        decoder = msgspec.json.Decoder(tp, dec_hook=dec_hook)
        _decoders[tp] = decoder
    return decoder


def _full_path_error(exc: msgspec.ValidationError) -> msgspec.ValidationError:
    message = str(exc)
    joined = join_error_path(message)
    return exc if joined == message else msgspec.ValidationError(joined)


@overload
def decode(data: bytes | str | msgspec.Raw, type: type[T]) -> T: ...
@overload
def decode(data: bytes | str | msgspec.Raw, type: object) -> Any: ...
def decode(data: bytes | str | msgspec.Raw, type: object) -> Any:
    """Decode JSON `data` into `type` (a generated Struct, a union such as `SessionUpdate`, or
    any msgspec-supported type built from them, e.g. ``list[ContentBlock]``).

    :raises msgspec.ValidationError: when the JSON does not match `type`; the message names the
        full path of the offending value.
    :raises msgspec.DecodeError: when `data` is not valid JSON.
    """
    try:
        return _decoder(type).decode(data)
    except msgspec.ValidationError as exc:
        raise _full_path_error(exc) from None


@overload
def convert(obj: object, type: type[T]) -> T: ...
@overload
def convert(obj: object, type: object) -> Any: ...
def convert(obj: object, type: object) -> Any:
    """Convert builtins (dicts, lists, str, ... as from `json.loads` or `to_builtins`) to `type`.

    :raises msgspec.ValidationError: when `obj` does not match `type`; the message names the
        full path of the offending value.
    """
    try:
        return msgspec.convert(obj, type, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        raise _full_path_error(exc) from None


def to_builtins(obj: object) -> object:
    """Convert ACP objects to JSON-compatible builtins (dicts with wire names, lists, ...).

    `msgspec.UNSET` fields are left out and unknown union values become their raw payload.
    """
    return msgspec.to_builtins(obj, enc_hook=enc_hook)
