"""Fast validation of agent messages against the draft v2 JSON Schema, with derived findings.

How this works: the official schema (the copy vendored in `acpio.schema`) is validated with
`jsonschema`, sped up in three ways that keep its meaning. Every ``$ref`` is replaced by the
definition it names (`_inline_refs`), so validation never resolves a reference. Subschemas are
entered without deriving a validator per subschema (`_descend`). And the schema's unions, which
are ``anyOf`` lists of discriminated variants plus an open catch-all, are evaluated by looking
at the discriminator: only the variant it selects is checked (equivalent to ``anyOf`` for these
shapes, ~10x faster, and the errors point inside the variant).

While validating, three findings are reported as errors of private "validators" that never make
an instance invalid: unknown non-``_`` values of open enums and unions (``custom-values``),
relative `AbsolutePath` values (``absolute-paths``) and invalid ``contentEncoding: base64``
strings (``base64``). All three are derived from the schema, so they follow it when the draft
changes. `Schema.check` returns the verdict and the findings; the checker reports them.
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import functools
import importlib.resources
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

from jsonschema import Draft202012Validator, validators

# jsonschema's stubs leave best_match's return type unannotated (cast where it is called).
from jsonschema.exceptions import (
    ValidationError,
    best_match,  # pyright: ignore[reportUnknownVariableType]
)

from .._json import as_list, as_object, decode_json, get_field
from .._protocol.paths import is_absolute as _is_absolute
from ._rules import short as _short

__all__ = (
    "Finding",
    "MethodDefs",
    "Schema",
    "SchemaCheck",
    "error_text",
    "is_absolute",
    "is_base64",
    "load_schema",
    "official",
)


# Finding "validators": errors carrying these never make an instance invalid; they are reported
# under their own rules.
_CUSTOM: Final = "acpio-custom-value"
_ABSOLUTE: Final = "acpio-absolute-path"
_BASE64: Final = "acpio-base64"
_FINDINGS: Final = frozenset({_CUSTOM, _ABSOLUTE, _BASE64})
_FINDING_RULES: Final[Mapping[str, str]] = {
    _CUSTOM: "custom-values",
    _ABSOLUTE: "absolute-paths",
    _BASE64: "base64",
}
# Which finding rules a validation run examined (for the report's "exercised" counts).
_touched: contextvars.ContextVar[set[str]] = contextvars.ContextVar("acpio_touched")


def _touch(rule: str) -> None:
    touched = _touched.get(None)
    if touched is not None:
        touched.add(rule)


def official(error: ValidationError) -> bool:
    """Whether `error` makes the instance invalid (it is not one of the findings)."""
    return error.validator not in _FINDINGS


def _has_official(errors: Iterable[ValidationError]) -> bool:
    return any(error.validator not in _FINDINGS for error in errors)


def is_absolute(path: str) -> bool:
    """Whether `path` is absolute in the native syntax of the agent's machine.

    The rule is acpio's one (:func:`acpio._protocol.paths.is_absolute`): POSIX, a Windows
    drive, or a UNC share; never a URI.
    """
    return _is_absolute(path)


def is_base64(data: str) -> bool:
    """Whether `data` is valid RFC 4648 base64 (standard alphabet, padded, no whitespace)."""
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class _Union:
    """An ``anyOf`` whose variants are told apart by a discriminator (or are string consts)."""

    name: str
    key: str | None  # the discriminator property; None for an enum of string consts
    table: Mapping[str, tuple[int, object]]
    rest: tuple[tuple[int, object, bool], ...]  # (index, branch, is an open catch-all)


_unions: dict[int, tuple[object, _Union | None]] = {}
_union_names: dict[int, str] = {}


def _const_tag(branch: Mapping[str, object]) -> tuple[str, str] | None:
    properties = as_object(branch.get("properties"))
    required = as_list(branch.get("required"))
    if branch.get("type") != "object" or properties is None:
        return None
    if required is None:
        return None
    for key in required:
        const = get_field(properties.get(key), "const") if isinstance(key, str) else None
        if isinstance(key, str) and isinstance(const, str):
            return key, const
    return None


def _is_catch_all(branch: Mapping[str, object], key: str | None) -> bool:
    target = as_object(branch if key is None else get_field(branch.get("properties", {}), key))
    return (
        target is not None
        and target.get("type") == "string"
        and not {"const", "enum", "pattern"} & target.keys()
    )


def _build_union(any_of: list[object]) -> _Union | None:
    enum_table: dict[str, tuple[int, object]] = {}
    object_table: dict[str, tuple[int, object]] = {}
    keys: set[str] = set()
    others: list[tuple[int, Mapping[str, object]]] = []
    for index, value in enumerate(any_of):
        branch = as_object(value)
        if branch is None:
            return None
        const = branch.get("const")
        if isinstance(const, str) and branch.get("type") == "string":
            if (
                not branch.keys() <= {"type", "const", "description", "title"}
                or const in enum_table
            ):
                return None
            enum_table[const] = (index, branch)
            continue
        tag = _const_tag(branch)
        if tag is None:
            others.append((index, branch))
            continue
        if tag[1] in object_table:
            return None
        keys.add(tag[0])
        object_table[tag[1]] = (index, branch)
    if enum_table and not object_table:
        key = None
        table = enum_table
    elif object_table and not enum_table and len(keys) == 1:
        key = next(iter(keys))
        table = object_table
    else:
        return None
    rest = tuple((index, branch, _is_catch_all(branch, key)) for index, branch in others)
    return _Union(_union_names.get(id(any_of), key or "enum"), key, table, rest)


def _union(any_of: list[object]) -> _Union | None:
    cached = _unions.get(id(any_of))
    if cached is not None and cached[0] is any_of:
        return cached[1]
    union = _build_union(any_of)
    _unions[id(any_of)] = (any_of, union)  # keeps any_of alive, so its id stays unique
    return union


def _try_rest(
    validator: Any, union: _Union, instance: object, unknown: str | None
) -> list[ValidationError] | None:
    """Findings to report if a non-const variant accepts `instance`, else `None`."""
    for index, branch, catch_all in union.rest:
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if _has_official(errors):
            continue
        if catch_all and unknown is not None and not unknown.startswith("_"):
            if union.key is None:
                what = f"{unknown!r} is not a {union.name} value"
            else:
                what = f"{union.key} {unknown!r} is not a {union.name} variant"
            errors.append(
                ValidationError(
                    f"{what} this protocol version defines, and custom values must start with '_'",
                    validator=_CUSTOM,
                    validator_value=union.name,
                    instance=unknown,
                    path=() if union.key is None else (union.key,),
                )
            )
        return errors
    return None


def _any_of_generic(
    validator: Any, any_of: list[object], instance: object
) -> Iterator[ValidationError]:
    context: list[ValidationError] = []
    for index, branch in enumerate(any_of):
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if not _has_official(errors):
            yield from errors
            return
        context.extend(errors)
    yield ValidationError(
        f"{_short(instance)} is not valid under any of the given schemas", context=context
    )


def _any_of(
    validator: Any, any_of: list[object], instance: object, schema: object
) -> Iterator[ValidationError]:
    union = _union(any_of)
    if union is not None:
        if any(catch_all for _, _, catch_all in union.rest):
            _touch("custom-values")
        if union.key is None:
            if isinstance(instance, str):
                if instance in union.table:
                    return
                found = _try_rest(validator, union, instance, instance)
                if found is not None:
                    yield from found
                    return
        elif (fields := as_object(instance)) is not None:
            tag = fields.get(union.key)
            if isinstance(tag, str):
                entry = union.table.get(tag)
                if entry is None:
                    # Only a non-const variant can accept an unknown discriminator.
                    found = _try_rest(validator, union, instance, tag)
                    if found is not None:
                        yield from found
                        return
                else:
                    # A variant requiring another const value cannot match: check this one.
                    index, branch = entry
                    errors = list(_descend(validator, instance, branch, schema_path=index))
                    if not _has_official(errors):
                        yield from errors
                        return
                    found = _try_rest(validator, union, instance, None)
                    if found is not None:
                        yield from found
                        return
                    yield from errors
                    return
    yield from _any_of_generic(validator, any_of, instance)


def _one_of_by_tag(validator: Any, union: _Union, instance: object) -> list[ValidationError] | None:
    """The ``oneOf`` findings when `instance`'s discriminator picks a const variant that
    accepts it and no other variant can (the other const variants require another value),
    else ``None``: then every branch is checked, as the generic rule does."""
    if union.key is None:
        tag = instance
    else:
        fields = as_object(instance)
        tag = None if fields is None else fields.get(union.key)
    entry = union.table.get(tag) if isinstance(tag, str) else None
    if entry is None:
        return None
    errors: list[ValidationError] = []
    if union.key is not None:
        index, branch = entry
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if _has_official(errors):
            return None
    for index, branch, _ in union.rest:
        if not _has_official(list(_descend(validator, instance, branch, schema_path=index))):
            return None  # two variants accept it: the generic rule reports that
    return errors


def _one_of(
    validator: Any, one_of: list[object], instance: object, schema: object
) -> Iterator[ValidationError]:
    union = _union(one_of)
    if union is not None:
        found = _one_of_by_tag(validator, union, instance)
        if found is not None:
            yield from found
            return
    context: list[ValidationError] = []
    valid: list[list[ValidationError]] = []
    for index, branch in enumerate(one_of):
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if _has_official(errors):
            context.extend(errors)
        else:
            valid.append(errors)
    if not valid:
        yield ValidationError(
            f"{_short(instance)} is not valid under any of the given schemas", context=context
        )
    elif len(valid) > 1:
        yield ValidationError(f"{_short(instance)} is valid under more than one of the schemas")
    else:
        yield from valid[0]


def _not(
    validator: Any, not_schema: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if not _has_official(_descend(validator, instance, not_schema)):
        yield ValidationError(f"{_short(instance)} should not be valid under {_short(not_schema)}")


_ORIGINAL: Final = Draft202012Validator.VALIDATORS


def _unevaluated_properties(
    validator: Any, value: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if value is True:  # the only use in the schema: nothing to check
        return
    yield from _ORIGINAL["unevaluatedProperties"](validator, value, instance, schema)


def _additional_properties(
    validator: Any, value: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if value is True:  # nearly every use in the schema: nothing to check
        return
    yield from _ORIGINAL["additionalProperties"](validator, value, instance, schema)


def _properties(
    validator: Any, properties: dict[str, object], instance: object, schema: object
) -> Iterator[ValidationError]:
    fields = as_object(instance)
    if fields is not None:
        for name, subschema in properties.items():
            if name in fields:
                yield from _descend(validator, fields[name], subschema, name, name)


def _items(
    validator: Any, items: object, instance: object, schema: dict[str, object]
) -> Iterator[ValidationError]:
    elements = as_list(instance)
    if elements is None or "prefixItems" in schema or items is False:
        yield from _ORIGINAL["items"](validator, items, instance, schema)
        return
    for index, item in enumerate(elements):
        yield from _descend(validator, item, items, index)


def _all_of(
    validator: Any, all_of: list[object], instance: object, schema: object
) -> Iterator[ValidationError]:
    for index, subschema in enumerate(all_of):
        yield from _descend(validator, instance, subschema, schema_path=index)


def _is_json_type(instance: object, name: object) -> bool:
    # JSON types of msgspec-decoded data; 2020-12 counts 1.0 as an integer.
    if name == "object":
        return isinstance(instance, dict)
    if name == "string":
        return isinstance(instance, str)
    if name == "array":
        return isinstance(instance, list)
    if name == "null":
        return instance is None
    if name == "boolean":
        return isinstance(instance, bool)
    if isinstance(instance, bool):
        return False
    if name == "integer":
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    return name == "number" and isinstance(instance, (int, float))


def _type(
    validator: Any, types: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    names = as_list(types) or [types]
    if not any(_is_json_type(instance, name) for name in names):
        yield ValidationError(f"{_short(instance)} is not of type {', '.join(map(repr, names))}")


def _descend(
    validator: Any,
    instance: object,
    schema: object,
    path: str | int | None = None,
    schema_path: str | int | None = None,
) -> Iterator[ValidationError]:
    """Validate `instance` against a subschema, like jsonschema's ``descend``.

    Unlike it, no validator object is derived per subschema (the schema holds no references
    to resolve, see `_inline_refs`): that derivation was half of the validation time.
    """
    if schema is True:
        return
    keywords_of = as_object(schema)
    if keywords_of is None:
        yield ValidationError(f"{_short(instance)} is not allowed here (false schema)")
        return
    keywords = validator.VALIDATORS
    for keyword, value in keywords_of.items():
        function = keywords.get(keyword)
        if function is None:
            continue
        for error in function(validator, value, instance, schema) or ():
            # Fill in what the keyword left unset, as jsonschema's own descend does.
            error._set(
                validator=keyword,
                validator_value=value,
                instance=instance,
                schema=schema,
                type_checker=validator.TYPE_CHECKER,
            )
            error.relative_schema_path.appendleft(keyword)
            if path is not None:
                error.relative_path.appendleft(path)
            if schema_path is not None:
                error.relative_schema_path.appendleft(schema_path)
            yield error


def _content_encoding(
    validator: Any, encoding: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if encoding == "base64" and isinstance(instance, str):
        _touch("base64")
        if not is_base64(instance):
            yield ValidationError(
                f"{_short(instance, 40)} is not valid RFC 4648 base64",
                validator=_BASE64,
                instance=instance,
            )


_ABSOLUTE_KEYWORD: Final = "x-acpio-absolute-path"


def _absolute_path(
    validator: Any, enabled: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if enabled is True and isinstance(instance, str):
        _touch("absolute-paths")
        if not is_absolute(instance):
            yield ValidationError(
                f"{instance!r} is not an absolute path", validator=_ABSOLUTE, instance=instance
            )


_Validator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "anyOf": _any_of,
        "oneOf": _one_of,
        "not": _not,
        "unevaluatedProperties": _unevaluated_properties,
        "additionalProperties": _additional_properties,
        "properties": _properties,
        "items": _items,
        "allOf": _all_of,
        "type": _type,
        "contentEncoding": _content_encoding,
        _ABSOLUTE_KEYWORD: _absolute_path,
    },
)


_ANNOTATIONS: Final = frozenset({"description", "title", "default", "examples"})


def _inline_refs(defs: dict[str, Any]) -> None:
    """Replace every ``{"$ref": "#/$defs/Name"}`` by the definition object itself.

    Validation then never resolves a reference (a third of jsonschema's time otherwise); the
    definitions are shared, not copied, so this is the same schema. A reference with sibling
    keywords becomes an ``allOf`` next to them, as 2020-12 evaluates ``$ref``; an ``allOf`` of
    one schema with only annotations beside it is replaced by that schema.
    """

    def target(value: object) -> object:
        node = as_object(value)
        if node is None:
            return value
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
            if len(node) == 1:
                return defs[ref[8:]]
            node = {key: value for key, value in node.items() if key != "$ref"}
            node["allOf"] = [*(as_list(node.get("allOf")) or ()), defs[ref[8:]]]
        all_of = as_list(node.get("allOf"))
        if all_of is not None and len(all_of) == 1 and node.keys() - _ANNOTATIONS == {"allOf"}:
            # {"description": ..., "allOf": [X]} validates exactly like X: skip a descent.
            return target(all_of[0])
        return node

    seen: set[int] = set()
    stack: list[object] = list(defs.values())
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if (fields := as_object(node)) is not None:
            for key, value in fields.items():
                if key not in ("properties", "$defs", "const", "enum", "default", "examples"):
                    fields[key] = target(value)
                    stack.append(fields[key])
                elif key in ("properties", "$defs") and (subs := as_object(value)) is not None:
                    for name, sub in subs.items():
                        subs[name] = target(sub)
                        stack.append(subs[name])
        elif (items := as_list(node)) is not None:
            for index, item in enumerate(items):
                items[index] = target(item)
                stack.append(items[index])


@dataclass(frozen=True, slots=True)
class MethodDefs:
    """The schema definitions of one method."""

    params: str | None
    """Definition name of the params."""
    result: str | None
    """Definition name of the successful result; `None` for a notification."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A schema-derived finding: a value that is valid but breaks another rule."""

    rule: str
    """The rule ID (``custom-values``, ``absolute-paths`` or ``base64``)."""
    text: str
    """Where in the instance and what is wrong."""
    path: tuple[str | int, ...]
    """Path of the value inside the instance."""


@dataclass(frozen=True, slots=True)
class SchemaCheck:
    """The outcome of validating one instance against one definition."""

    invalid: str | None
    """Where and why the instance is invalid (the most relevant error); `None` when valid."""
    findings: tuple[Finding, ...]
    """Every schema-derived finding, in validation order."""
    examined: frozenset[str]
    """The finding rules the validation examined (whether or not they found something)."""


class Schema:
    """The draft v2 schema prepared for checking: validators per definition, method tables."""

    def __init__(self, document: dict[str, Any]) -> None:
        """Prepare `document` (it is modified: references are inlined)."""
        self.document = document
        defs: dict[str, Any] = document["$defs"]
        self.defs = defs
        absolute = defs.get("AbsolutePath")
        if isinstance(absolute, dict):
            absolute[_ABSOLUTE_KEYWORD] = True
        _inline_refs(defs)
        for name, definition in defs.items():
            any_of = as_list(get_field(definition, "anyOf"))
            if any_of is not None:
                _union_names[id(any_of)] = name
        self._validators: dict[str, Any] = {}
        params: dict[tuple[str, str], str] = {}
        results: dict[tuple[str, str], str] = {}
        for name, definition in defs.items():
            method = get_field(definition, "x-method")
            side = get_field(definition, "x-side")
            if not isinstance(method, str) or not isinstance(side, str):
                continue
            (results if name.endswith("Response") else params)[(side, method)] = name
        # Methods the client handles (the agent may call them) and methods the agent handles.
        self.client_methods: dict[str, MethodDefs] = {}
        self.agent_methods: dict[str, MethodDefs] = {}
        for (side, method), name in params.items():
            defs_ = MethodDefs(name, results.get((side, method)))
            if side in ("client", "protocol"):
                self.client_methods[method] = defs_
            if side in ("agent", "protocol"):
                self.agent_methods[method] = defs_

    def validator(self, name: str) -> Any:
        """The (cached) jsonschema validator of definition `name`; its errors include the
        findings (see `official`)."""
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = _Validator(self.defs[name])
        return validator

    def check(self, name: str, instance: object) -> SchemaCheck:
        """Validate `instance` against definition `name`."""
        examined: set[str] = set()
        token = _touched.set(examined)
        try:
            errors = list(self.validator(name).iter_errors(instance))
        finally:
            _touched.reset(token)
        invalid = [error for error in errors if official(error)]
        findings = tuple(
            Finding(
                _FINDING_RULES[cast(str, error.validator)],
                error_text(error),
                tuple(error.absolute_path),
            )
            for error in errors
            if error.validator in _FINDINGS
        )
        return SchemaCheck(
            error_text(cast(ValidationError, best_match(invalid))) if invalid else None,
            findings,
            frozenset(examined),
        )


@functools.cache
def load_schema(path: str | None) -> Schema:
    """The schema at `path` (default: the vendored copy), loaded once per path.

    :raises ValueError: when the file is not an ACP JSON Schema.
    """
    if path is None:
        data = importlib.resources.files("acpio.schema").joinpath("schema.json").read_bytes()
    else:
        data = Path(path).read_bytes()
    document = as_object(decode_json(data))
    if document is None or not isinstance(document.get("$defs"), dict):
        raise ValueError(f"{path or 'acpio.schema/schema.json'} is not an ACP JSON Schema")
    return Schema(document)


def error_text(error: ValidationError) -> str:
    """Where the error is (a path like ``update.content[0]``) and what it says."""
    path = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    )
    message = error.message if len(error.message) <= 240 else error.message[:237] + "..."
    return f"{path.lstrip('.') or '(root)'}: {message}"
