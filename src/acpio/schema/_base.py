"""Runtime support for the generated ACP protocol types.

How this works: every ACP object is a msgspec Struct derived from `AcpStruct`. ACP unions
(content blocks, session updates, permission outcomes, ...) are *not* msgspec tagged unions:
msgspec has no catch-all variant and ACP nests discriminators (`sessionUpdate: "state_update"`
plus `state: "idle"`). Instead each union has a marker class with empty ``__slots__`` that all of
its variant classes inherit. A field whose annotation is a marker is a custom type for msgspec, so
msgspec decodes the JSON value to builtins and calls `dec_hook`, which looks the marker up in the
registry filled by the generated module and dispatches on the discriminator value to the variant
Struct (through `msgspec.convert`). A discriminator value the schema does not define becomes an
`UnknownVariant` that keeps the whole payload verbatim; `enc_hook` turns it back into exactly that
payload. Variant classes carry their discriminators as `Literal` fields with defaults, declared
first, so they are always encoded and can never be decoded from another variant's payload.

A validation error raised inside the hook is reported by msgspec relative to the nested object
with the outer location appended (`... - at `$.text` - at `$.prompt[0]``); `join_error_path`
folds such chains into one full path (`$.prompt[0].text`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

import msgspec

from .._json import as_object

__all__ = (
    "AcpStruct",
    "MethodSpec",
    "UnionDecoder",
    "UnknownVariant",
    "dec_hook",
    "enc_hook",
    "join_error_path",
    "register_unions",
)


class AcpStruct(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=False):
    """Base class of every generated ACP object type.

    Wire names are camelCase; unknown fields are ignored on decode (forward compatible). Optional
    fields default to `msgspec.UNSET`, which msgspec never encodes: an omitted field stays omitted
    and `None` is always sent as an explicit JSON ``null`` (ACP's patch semantics: omitted =
    unchanged, null = clear). Discriminator fields have defaults and are always encoded.
    """


_Variant: TypeAlias = "type[AcpStruct] | UnionDecoder"


class UnknownVariant:
    """Base class of the ``Unknown<Union>`` types: an open-union value this SDK does not know.

    ACP open unions accept ``_``-prefixed implementation-specific discriminator values and
    reserve unknown non-underscore values for future ACP versions. Such a payload decodes to an
    `UnknownVariant` subclass whose `raw` is the whole JSON object, verbatim; encoding it writes
    `raw` back unchanged. It is never equal to, nor an instance of, a known variant, so an unknown
    value can never be mistaken for a known one (an unknown permission outcome is not approval).
    """

    __slots__ = ("raw",)

    _union: ClassVar[str] = ""
    _key: ClassVar[str] = ""
    _known: ClassVar[frozenset[str]] = frozenset()
    _fixed: ClassVar[tuple[tuple[str, str], ...]] = ()

    raw: dict[str, object]
    """The whole JSON object as received (or as given), re-encoded unchanged."""

    def __init__(self, raw: Mapping[str, object]) -> None:
        """Wrap a payload whose discriminator this SDK does not know.

        :raises TypeError: when the discriminator is missing or not a string.
        :raises ValueError: when the discriminator is a value the schema defines (use the
            variant's own class for those) or an outer discriminator is wrong.
        """
        payload = dict(raw)
        for key, value in self._fixed:
            if payload.get(key) != value:
                raise ValueError(f"{type(self).__name__} requires {key!r} == {value!r}")
        tag = payload.get(self._key)
        if not isinstance(tag, str):
            raise TypeError(f"{type(self).__name__} requires a string {self._key!r}")
        if tag in self._known:
            raise ValueError(
                f"{tag!r} is a known {self._union} {self._key!r}; use its variant class"
            )
        self.raw = payload

    def _tag(self, key: str) -> str:
        value = self.raw[key]
        if not isinstance(value, str):  # only reachable if `raw` was mutated
            raise TypeError(f"{key!r} is not a string in {self!r}")
        return value

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, UnknownVariant)
        return self.raw == other.raw

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable, like the Structs

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"


_PATH_SUFFIX = re.compile(r" - at `(\$[^`]*)`$")


def join_error_path(message: str) -> str:
    """Fold msgspec's chained locations into one path.

    ``"Expected `str`, got `int` - at `$.text` - at `$.prompt[0]`"`` becomes
    ``"Expected `str`, got `int` - at `$.prompt[0].text`"``; other messages are returned as is.
    """
    paths: list[str] = []
    rest = message
    while (match := _PATH_SUFFIX.search(rest)) is not None:
        paths.append(match.group(1))
        rest = rest[: match.start()]
    if len(paths) < 2:
        return message
    # The outermost location is appended last by msgspec.
    return f"{rest} - at `{paths[0]}{''.join(path[1:] for path in paths[1:])}`"


_JSON_TYPE_NAMES: Mapping[type, str] = {
    dict: "object",
    list: "array",
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    type(None): "null",
}


def _unknown_from_decoded(cls: type[UnknownVariant], raw: dict[str, object]) -> UnknownVariant:
    # The decoder already checked the discriminators; skip the copy and checks.
    obj = cls.__new__(cls)
    obj.raw = raw
    return obj


def _json_type(obj: object) -> str:
    return _JSON_TYPE_NAMES.get(type(obj), type(obj).__name__)


class UnionDecoder:
    """Decoder of one ACP union: dispatches a decoded JSON object to its variant class.

    `variants` maps discriminator values (of the `key` field) to variant Structs or to a nested
    union (whose variants all share that outer value). Objects without the `key` field are tried
    against the `untagged` variants (class plus the wire names it requires). An unknown
    discriminator value becomes `unknown` (open unions) or is a validation error (closed ones).
    """

    __slots__ = ("key", "name", "unknown", "untagged", "variants")

    def __init__(
        self,
        name: str,
        key: str | None,
        variants: Mapping[str, _Variant],
        *,
        unknown: type[UnknownVariant] | None = None,
        untagged: Sequence[tuple[type[AcpStruct], tuple[str, ...]]] = (),
    ) -> None:
        self.name = name
        self.key = key
        self.variants = dict(variants)
        self.unknown = unknown
        self.untagged = tuple(untagged)

    def decode(self, obj: object) -> object:
        """Decode builtins `obj` into the right variant.

        :raises TypeError: when `obj` or its discriminator has the wrong JSON type.
        :raises ValueError: when `obj` fits no variant.
        (msgspec turns both into a `msgspec.ValidationError` carrying the location.)
        """
        if (fields := as_object(obj)) is None:
            raise TypeError(f"Expected `object`, got `{_json_type(obj)}`")
        obj = fields
        key = self.key
        if key is None or key not in obj:
            if self.untagged:
                return self._decode_untagged(obj)
            raise ValueError(f"Object missing required field `{key}`")
        tag = obj[key]
        if not isinstance(tag, str):
            raise TypeError(f"Expected `str`, got `{_json_type(tag)}` - at `$.{key}`")
        variant = self.variants.get(tag)
        if variant is None:
            if self.unknown is None:
                raise ValueError(f"Invalid enum value {tag!r} - at `$.{key}`")
            return _unknown_from_decoded(self.unknown, obj)
        if isinstance(variant, UnionDecoder):
            return variant.decode(obj)
        return _convert(obj, variant)

    def _decode_untagged(self, obj: dict[str, object]) -> object:
        candidates = [cls for cls, required in self.untagged if all(k in obj for k in required)]
        if not candidates:
            # Report against the first variant: its error names the missing field.
            return _convert(obj, self.untagged[0][0])
        error: ValueError | None = None
        for cls in candidates:
            try:
                return _convert(obj, cls)
            except ValueError as exc:
                error = error or exc
        assert error is not None
        raise error


def _convert(obj: dict[str, object], cls: type[AcpStruct]) -> AcpStruct:
    try:
        return msgspec.convert(obj, cls, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        # Re-raised as a plain ValueError so msgspec appends the outer location.
        raise ValueError(join_error_path(str(exc))) from None


_UNIONS: dict[type, UnionDecoder] = {}


def register_unions(unions: Mapping[type, UnionDecoder]) -> None:
    """Register union decoders by marker class (called once by the generated module)."""
    _UNIONS.update(unions)


def dec_hook(tp: type, obj: object) -> object:
    """msgspec ``dec_hook`` decoding ACP unions (marker classes) from builtins.

    :raises NotImplementedError: for types that are not ACP unions (msgspec reports them).
    :raises TypeError, ValueError: when `obj` fits no variant of the union.
    """
    union = _UNIONS.get(tp)
    if union is None:
        if tp is object:  # msgspec treats `object` inside a union as a custom type
            return obj
        raise NotImplementedError(f"Type {tp!r} is not supported")
    if isinstance(obj, tp):  # already typed, e.g. convert() of built objects
        return obj
    return union.decode(obj)


def enc_hook(obj: object) -> object:
    """msgspec ``enc_hook`` writing `UnknownVariant` payloads back verbatim.

    :raises NotImplementedError: for any other unsupported object.
    """
    if isinstance(obj, UnknownVariant):
        return obj.raw
    raise NotImplementedError(f"Objects of type {type(obj).__name__} are not supported")


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One ACP method: its name, params type, and result type (`None` for a notification).

    Generated from the schema's ``x-method`` annotations. `params` and `result` are the types to
    pass to `acpio.schema.decode`/`convert`; for a union (e.g. elicitation requests) it is the
    union's runtime marker class, which those functions decode to the right variant.
    """

    method: str
    """The JSON-RPC method name, e.g. ``"session/prompt"``."""
    params: type[object]
    """Type of the request or notification ``params``."""
    result: type[object] | None
    """Type of the response ``result``; `None` when the method is a notification."""

    @property
    def is_notification(self) -> bool:
        """Whether the method is a notification (never answered)."""
        return self.result is None
