#!/usr/bin/env python3
"""Generate acpio's protocol types from the vendored ACP draft v2 JSON Schema.

Usage::

    python scripts/gen_schema.py            # rewrite the generated files
    python scripts/gen_schema.py --check    # exit 1 when a committed file is stale
    python scripts/gen_schema.py --schema-dir DIR [--check]   # work on another copy

Reads ``schema.json`` and ``meta.json`` in the schema directory (default
``src/acpio/schema``) and writes ``_generated.py`` (the types), ``__init__.py`` (explicit
re-exports) and ``SOURCE.md`` (provenance) there. The output is deterministic and already in
``ruff format`` style. The script stops with an error on any schema shape it does not know, so a
schema update can never silently drop a type.

Mapping rules
-------------
* Object defs become Structs deriving from ``AcpStruct`` (camelCase wire names, unknown fields
  ignored). Python names are snake_case; ``_meta`` is the field ``meta``. Optional fields default
  to ``UNSET`` (typed ``X | None | UnsetType`` when the schema allows null, ``X | UnsetType``
  otherwise); ``None`` is an explicit JSON null. Array fields marked
  ``x-deserialize-default-on-null`` also accept null, as the reference SDK does.
* String/integer defs become type aliases (``SessionId = str``). Enums with a catch-all branch
  are open: the alias is ``str`` (``int`` for ``ErrorCode``) plus ``Known<Name>`` (a ``Literal``
  of the defined values) and ``KNOWN_<NAME>`` (a frozenset); closed enums are ``Literal``.
  ``ErrorCode`` values also get constants named after their titles (``PARSE_ERROR``...).
  Unions with an unconstrained branch (``ErrorData``, ``ElicitationContentValue``) and untyped
  properties (``rawInput``) are ``object``; such optional fields are typed plain ``object`` with
  an ``UNSET`` default (``object`` inside a union would send msgspec through ``dec_hook``).
* Unions (``anyOf`` of objects, tagged by a ``const`` property, with or without a catch-all
  ``other`` branch, plus untagged branches told apart by their required properties) get a marker
  class ``_<Union>Base`` that all variants inherit, decoded by ``UnionDecoder``; for type
  checkers the union name is an ``A | B | ...`` alias of the variant classes (plus
  ``Unknown<Union>`` when the union is open), so ``isinstance`` narrows it. A branch that
  refers to another union nests it (``state_update`` + ``state``).
  An object def with ``properties`` and an ``anyOf`` tagged on a property it does not declare is a
  union whose variants all carry those properties (``DiffChange``); when the tag property *is*
  declared, or the branches are ``oneOf`` of plain objects, the branches are only constraints and
  their properties are merged into one class as optional fields (``IdleStateUpdate`` gains
  ``error``; its tag values become the open enum ``StopReason``). An ``anyOf`` of arrays becomes a
  list of a union of the item types (``SessionConfigSelectOptions``).

Naming rules for union variants
-------------------------------
* Each variant class declares its discriminators first, as ``Literal`` fields with defaults
  (outer ones first), so they are always encoded.
* A def used as exactly one variant and nowhere else becomes that variant and keeps its name
  (``TextContent``, ``Diff``, ``IdleStateUpdate``...).
* A def used as several variants, or also used elsewhere, gets one class per variant named after
  the discriminator value in CamelCase plus a per-union suffix (``user_message_chunk`` ->
  ``UserMessageChunk``; ``DiffChange`` adds ``Change``: ``AddChange``), unless ``VARIANT_NAMES``
  says otherwise. Its other uses get the plain class without discriminators, named after the def,
  or ``<Def>Fields`` when a variant took that name: the ``tool_call_update`` session update is
  ``ToolCallUpdate`` and the permission subject's ``toolCall`` is ``ToolCallUpdateFields``. With
  no other use the def name becomes an alias of its variant classes (``ContentChunk``).
* Inline variants (no def) are named by ``VARIANT_NAMES``.
* Unknown values of an open union decode to ``Unknown<Union>``.

Not generated: the JSON-RPC envelopes (``AgentRequest``, ``ClientResponse``...: the connection
layer's job; they become the method tables ``AGENT_METHODS``, ``CLIENT_METHODS`` and
``PROTOCOL_METHODS``), the empty extension payloads (``ExtRequest``...), and the fragments merged
into other classes (``MERGED_FRAGMENTS``). Numeric and length limits are not enforced on decode.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCHEMA_DIR = ROOT / "src" / "acpio" / "schema"
SDK_ORIGIN = "@agentclientprotocol/sdk 2.4.0"
SOURCE_DATE = "2026-11-30"
LINE_LENGTH = 100
INDENT = "    "

# Suffix added to CamelCase discriminator values to name the variants of shared defs.
VARIANT_SUFFIX: dict[str, str] = {"DiffChange": "Change"}
# Explicit names for inline variants and for variants whose default name would be unclear.
VARIANT_NAMES: dict[tuple[str, str], str] = {
    ("SetSessionConfigOptionRequest", "id"): "SetSessionConfigOptionIdRequest",
    ("SetSessionConfigOptionRequest", "boolean"): "SetSessionConfigOptionBooleanRequest",
    ("CreateElicitationResponse", "decline"): "ElicitationDeclineAction",
    ("CreateElicitationResponse", "cancel"): "ElicitationCancelAction",
}
# Defs whose properties only ever appear merged into other classes.
MERGED_FRAGMENTS = frozenset(
    {"ErrorStopReason", "ElicitationSessionScope", "ElicitationRequestScope"}
)
# Item unions of array unions: their marker and decoder, no public alias.
ITEM_UNION_SUFFIX = "Item"

PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


class SchemaShapeError(Exception):
    """Raised when the schema contains a shape this generator does not know how to map."""


# --------------------------------------------------------------------------------------------
# Model


@dataclass
class Field:
    wire: str
    py: str
    ann: str
    required: bool
    nullable: bool
    doc: str | None
    literal: str | None = None  # fixed value for discriminators and single-value enums
    explicit_name: bool = False
    # Any JSON value: typed plain `object` (which includes None and UNSET) so that msgspec
    # decodes it natively instead of treating `object | ...` as a custom type.
    any_json: bool = False


@dataclass
class Struct:
    name: str
    doc: str
    fields: list[Field]
    bases: list[str] = field(default_factory=list)


@dataclass
class UnionType:
    name: str
    doc: str
    key: str | None
    variants: list[tuple[str, Struct | UnionType]] = field(default_factory=list)
    untagged: list[tuple[Struct, tuple[str, ...]]] = field(default_factory=list)
    open: bool = False
    fixed: list[tuple[str, str]] = field(default_factory=list)
    parent: UnionType | None = None
    public: bool = True

    @property
    def marker(self) -> str:
        return f"_{self.name}Base"

    @property
    def unknown(self) -> str:
        return f"Unknown{self.name}"

    @property
    def decoder_var(self) -> str:
        return f"_{snake(self.name).upper()}_DECODER"

    def members(self) -> list[str]:
        names: list[str] = []
        for _, target in self.variants:
            if isinstance(target, UnionType):
                names.extend(target.members())
            else:
                names.append(target.name)
        names.extend(struct.name for struct, _ in self.untagged)
        if self.open:
            names.append(self.unknown)
        return names


@dataclass
class Enum:
    name: str
    doc: str
    base: str  # "str" or "int"
    values: list[object]
    open: bool
    titles: list[str | None] = field(default_factory=list)


@dataclass
class Alias:
    name: str
    doc: str
    target: str


# --------------------------------------------------------------------------------------------
# Names


def snake(name: str) -> str:
    if name == "_meta":
        return "meta"
    result = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if keyword.iskeyword(result):
        result += "_"
    return result


def camel_value(value: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-/ ]+", value) if part)


def upper_snake(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", snake(text.replace(" ", "_"))).strip("_").upper()


def msgspec_camel(py_name: str) -> str:
    struct = msgspec.defstruct("Probe", [(py_name, int)], rename="camel")
    return msgspec.structs.fields(struct)[0].encode_name


def ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise SchemaShapeError(f"unsupported $ref {ref!r}")
    return ref[len(prefix) :]


# --------------------------------------------------------------------------------------------
# Schema analysis


def single_ref(schema: dict[str, object]) -> str | None:
    """The def a property schema refers to (directly, via a one-item allOf)."""
    if "$ref" in schema:
        return ref_name(str(schema["$ref"]))
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return ref_name(all_of[0]["$ref"])
    return None


def is_catch_all(branch: dict[str, object]) -> bool:
    return "not" in branch or (
        branch.get("title") in ("other", "unknown", "Other")
        and "const" not in branch
        and "$ref" not in branch
        and "allOf" not in branch
    )


def tag_of(branch: dict[str, object]) -> tuple[str, object] | None:
    props = branch.get("properties")
    if not isinstance(props, dict):
        return None
    consts = [(key, value["const"]) for key, value in props.items() if "const" in value]
    if len(consts) > 1:
        raise SchemaShapeError(f"branch with several consts: {branch}")
    return consts[0] if consts else None


class Generator:
    def __init__(self, schema: dict[str, object], meta: dict[str, object], digest: str) -> None:
        self.schema = schema
        self.defs: dict[str, dict[str, object]] = schema["$defs"]
        self.meta = meta
        self.digest = digest
        self.kinds = {name: self.kind_of(name, d) for name, d in self.defs.items()}
        self.plain_refs: dict[str, int] = dict.fromkeys(self.defs, 0)
        self.branch_refs: dict[str, list[tuple[str, str | None]]] = {n: [] for n in self.defs}
        self.count_refs()
        # Outputs, grouped by the def they come from (emitted in schema order).
        self.classes: dict[str, list[Struct | UnionType]] = {n: [] for n in self.defs}
        self.unions: list[UnionType] = []  # in dependency order (nested first)
        self.enums: list[Enum] = []
        self.aliases: dict[str, Alias] = {}
        self.late_aliases: list[tuple[str, str, list[str]]] = []  # name, doc, variant classes
        self.array_unions: list[tuple[str, str, list[str], UnionType]] = []
        self.type_names: dict[str, str] = {}  # def -> annotation name for plain references
        self.runtime_types: dict[str, str] = {}  # def -> runtime type (marker for unions)
        self.variant_names: set[str] = set()

    # ---- classification

    def kind_of(self, name: str, d: dict[str, object]) -> str:
        if d.get("x-docs-ignore") or not {k for k in d if k != "description"}:
            return "skip"
        if name in MERGED_FRAGMENTS:
            return "fragment"
        branches = d.get("anyOf") or d.get("oneOf")
        if d.get("type") == "object":
            return "object"
        if isinstance(branches, list):
            if all(is_catch_all(b) or "const" in b for b in branches) and all(
                b.get("type") in PRIMITIVES for b in branches
            ):
                return "enum"
            if any(not ({"type", "$ref", "allOf"} & b.keys()) for b in branches):
                return "any"
            if all(b.get("type") == "array" for b in branches):
                return "array_union"
            if all(b.get("type") in PRIMITIVES for b in branches):
                return "scalar_union"
            return "union"
        if d.get("type") in PRIMITIVES:
            return "scalar"
        raise SchemaShapeError(f"unsupported def {name}: {sorted(d)}")

    def union_branches(self, d: dict[str, object]) -> list[dict[str, object]] | None:
        """Branches of an object def's anyOf that make it a union (tag not a declared property)."""
        branches = d.get("anyOf")
        if not isinstance(branches, list):
            return None
        props = d.get("properties", {})
        for branch in branches:
            tag = tag_of(branch)
            if tag is not None:
                return None if tag[0] in props else branches
        return None

    def walk_plain(self, schema: object) -> None:
        if isinstance(schema, dict):
            if "$ref" in schema:
                self.plain_refs[ref_name(schema["$ref"])] += 1
            for value in schema.values():
                self.walk_plain(value)
        elif isinstance(schema, list):
            for item in schema:
                self.walk_plain(item)

    def count_refs(self) -> None:
        for name, d in self.defs.items():
            kind = self.kinds[name]
            if kind in ("skip", "enum", "scalar", "scalar_union", "any"):
                continue
            if kind == "array_union":
                for branch in d["anyOf"]:
                    target = single_ref(branch["items"])
                    assert target is not None
                    self.branch_refs[target].append((name, None))
                continue
            self.walk_plain(d.get("properties", {}))
            branches = d.get("anyOf") if kind == "union" else self.union_branches(d)
            merged = None if branches is not None else (d.get("anyOf") or d.get("oneOf"))
            for branch in branches or ():
                if is_catch_all(branch):
                    continue
                tag = tag_of(branch)
                props = {
                    k: v
                    for k, v in branch.get("properties", {}).items()
                    if tag is None or k != tag[0]
                }
                self.walk_plain(props)
                target = single_ref(branch)
                if target is not None:
                    self.branch_refs[target].append((name, None if tag is None else str(tag[1])))
            for branch in merged or ():
                if is_catch_all(branch):
                    continue
                target = single_ref(branch)
                if target is not None:
                    self.walk_plain(self.defs[target].get("properties", {}))

    # ---- building

    def build(self) -> None:
        for name, d in self.defs.items():
            kind = self.kinds[name]
            if kind == "scalar":
                self.aliases[name] = Alias(name, doc(d), PRIMITIVES[str(d["type"])])
            elif kind == "scalar_union":
                parts = [PRIMITIVES[str(b["type"])] for b in d["anyOf"]]
                self.aliases[name] = Alias(name, doc(d), " | ".join(parts))
            elif kind == "any":
                self.aliases[name] = Alias(name, doc(d), "object")
            elif kind == "enum":
                self.enums.append(self.build_enum(name, d))
        # Names first (fields refer to them), then the classes.
        for name in self.defs:
            self.assign_type_name(name)
        for name, d in self.defs.items():
            kind = self.kinds[name]
            if kind == "union" and not self.branch_refs[name]:
                self.build_union(name, d, d["anyOf"])
            elif kind == "object":
                branches = self.union_branches(d)
                if branches is not None:
                    self.build_union(name, d, branches, base=d)
                elif not self.branch_refs[name] or self.needs_plain(name):
                    self.find_plain(name)
            elif kind == "array_union":
                self.build_array_union(name, d)
        for name, d in self.defs.items():
            if self.kinds[name] == "object" and self.is_shared(name) and not self.needs_plain(name):
                variants = self.shared_variant_names(name)
                self.late_aliases.append((name, doc(d), variants))
        self.check_coverage()

    def is_shared(self, name: str) -> bool:
        refs = self.branch_refs[name]
        tagged = [r for r in refs if r[1] is not None]
        return len(tagged) > 1 or (len(tagged) == 1 and self.plain_refs[name] > 0)

    def needs_plain(self, name: str) -> bool:
        refs = self.branch_refs[name]
        return self.plain_refs[name] > 0 or any(value is None for _, value in refs)

    def shared_variant_names(self, name: str) -> list[str]:
        return [
            self.variant_name(union, value, name)
            for union, value in self.branch_refs[name]
            if value
        ]

    def variant_name(self, union: str, value: str, target: str | None) -> str:
        explicit = VARIANT_NAMES.get((union, value))
        if explicit is not None:
            return explicit
        if target is None:
            raise SchemaShapeError(f"inline variant {union}.{value} needs a VARIANT_NAMES entry")
        if not self.is_shared(target):
            return target
        return camel_value(value) + VARIANT_SUFFIX.get(union, "")

    def assign_type_name(self, name: str) -> None:
        kind = self.kinds[name]
        d = self.defs[name]
        if kind in ("skip", "fragment"):
            return
        if kind == "object" and self.union_branches(d) is None:
            if self.needs_plain(name) or not self.branch_refs[name]:
                taken = self.is_shared(name) and name in self.shared_variant_names(name)
                plain = f"{name}Fields" if taken else name
                self.type_names[name] = plain
                self.runtime_types[name] = plain
            else:
                self.type_names[name] = name
            return
        self.type_names[name] = name
        is_union = kind in ("union", "object", "array_union")
        self.runtime_types[name] = f"_{name}Base" if is_union and kind != "array_union" else name

    def build_enum(self, name: str, d: dict[str, object]) -> Enum:
        branches: list[dict[str, object]] = d.get("anyOf") or d.get("oneOf")
        values = [b["const"] for b in branches if "const" in b]
        titles = [b.get("title") for b in branches if "const" in b]
        is_open = any(is_catch_all(b) for b in branches)
        base = PRIMITIVES[str(branches[0]["type"])]
        return Enum(name, doc(d), base, values, is_open, titles)

    def annotate(self, schema: dict[str, object], where: str) -> tuple[str, bool]:
        """Annotation (without None/UNSET) of a property schema, and whether null is allowed."""
        target = single_ref(schema)
        if target is not None:
            return self.ref_type(target, where), False
        if "anyOf" in schema:
            branches: list[dict[str, object]] = schema["anyOf"]
            rest = [b for b in branches if b != {"type": "null"}]
            if len(rest) != 1:
                raise SchemaShapeError(f"unsupported inline anyOf at {where}")
            ann, _ = self.annotate(rest[0], where)
            return ann, len(rest) != len(branches)
        raw_type = schema.get("type")
        if raw_type is None:
            return "object", False
        types = raw_type if isinstance(raw_type, list) else [raw_type]
        nullable = "null" in types
        types = [t for t in types if t != "null"]
        if len(types) != 1:
            raise SchemaShapeError(f"unsupported type {raw_type} at {where}")
        (json_type,) = types
        if "const" in schema:
            return f"Literal[{lit(schema['const'])}]", nullable
        if json_type in PRIMITIVES:
            return PRIMITIVES[json_type], nullable
        if json_type == "array":
            item, _ = self.annotate(schema["items"], where)
            return f"list[{item}]", nullable
        if json_type == "object":
            extra = schema.get("additionalProperties", True)
            if extra is True:
                return "dict[str, object]", nullable
            value, _ = self.annotate(extra, where)
            return f"dict[str, {value}]", nullable
        raise SchemaShapeError(f"unsupported type {json_type} at {where}")

    def ref_type(self, target: str, where: str) -> str:
        if target not in self.type_names:
            raise SchemaShapeError(f"{where} refers to {target}, which has no type")
        if self.kinds[target] == "object" and target not in self.runtime_types:
            raise SchemaShapeError(f"{where} refers to {target}, which only exists as variants")
        return self.type_names[target]

    def make_fields(
        self,
        owner: str,
        props: dict[str, dict[str, object]],
        required: set[str],
        *,
        optional: bool = False,
    ) -> list[Field]:
        fields: list[Field] = []
        for wire, schema in props.items():
            ann, nullable = self.annotate(schema, f"{owner}.{wire}")
            if schema.get("x-deserialize-default-on-null"):
                nullable = True
            any_json = ann == "object" or (
                ann in self.aliases and self.aliases[ann].target == "object"
            )
            py = snake(wire)
            literal = None
            target = single_ref(schema)
            is_required = wire in required and not optional
            if target is not None and is_required and self.kinds[target] == "enum":
                enum = next(e for e in self.enums if e.name == target)
                if not enum.open and len(enum.values) == 1:
                    literal = lit(enum.values[0])
            fields.append(
                Field(
                    wire=wire,
                    py=py,
                    ann=ann,
                    required=is_required,
                    nullable=nullable,
                    doc=doc(schema) or None,
                    literal=literal,
                    explicit_name=msgspec_camel(py) != wire,
                    any_json=any_json,
                )
            )
        return fields

    def object_fields(self, name: str) -> list[Field]:
        """Fields of an object def, with constraint-only anyOf/oneOf branches merged in."""
        d = self.defs[name]
        props: dict[str, dict[str, object]] = dict(d.get("properties", {}))
        required = set(d.get("required", ()))
        fields = self.make_fields(name, props, required)
        branches = d.get("anyOf") or d.get("oneOf")
        if branches is None:
            return fields
        assert isinstance(branches, list)
        tag_key = None
        for branch in branches:
            tag = tag_of(branch)
            if tag is not None:
                tag_key = tag[0]
        if tag_key is not None:
            # A declared property constrained by the branches: an enum of its const values.
            values = [str(tag[1]) for b in branches if (tag := tag_of(b)) is not None]
            enum_name = tag_key[:1].upper() + tag_key[1:]
            if all(e.name != enum_name for e in self.enums):
                is_open = any(map(is_catch_all, branches))
                self.enums.append(Enum(enum_name, doc(props[tag_key]), "str", values, is_open))
            for f in fields:
                if f.wire == tag_key:
                    f.ann = enum_name
        seen = {f.wire for f in fields}
        for branch in branches:
            if is_catch_all(branch):
                continue
            target = single_ref(branch)
            if target is None:
                continue
            extra = {
                k: v for k, v in self.defs[target].get("properties", {}).items() if k not in seen
            }
            seen.update(extra)
            fields += self.make_fields(target, extra, set(), optional=True)
        return meta_last(fields)

    def plain_struct(self, name: str, class_name: str) -> Struct:
        return Struct(class_name, doc(self.defs[name]), self.object_fields(name))

    def add_struct(self, source: str, item: Struct | UnionType) -> None:
        self.classes.setdefault(source, []).append(item)

    def build_union(
        self,
        name: str,
        d: dict[str, object],
        branches: list[dict[str, object]],
        *,
        fixed: tuple[tuple[str, str], ...] = (),
        parent: UnionType | None = None,
        base: dict[str, object] | None = None,
        public: bool = True,
    ) -> UnionType:
        union = UnionType(name, doc(d), None, fixed=list(fixed), parent=parent, public=public)
        self.add_struct(name, union)
        base_fields: list[Field] = []
        if base is not None:
            base_props: dict[str, dict[str, object]] = base.get("properties", {})
            base_fields = self.make_fields(name, base_props, set(base.get("required", ())))
        for branch in branches:
            if is_catch_all(branch):
                union.open = True
                continue
            tag = tag_of(branch)
            target = single_ref(branch)
            if tag is None:
                if target is None or self.kinds[target] != "object":
                    raise SchemaShapeError(f"unsupported untagged branch in {name}")
                struct = self.find_plain(target)
                struct.bases.append(union.marker)
                required = tuple(self.defs[target].get("required", ()))
                union.untagged.append((struct, required))
                continue
            key, value = str(tag[0]), str(tag[1])
            if union.key not in (None, key):
                raise SchemaShapeError(f"{name} mixes discriminators {union.key} and {key}")
            union.key = key
            if target is not None and self.kinds[target] == "union":
                nested_def = self.defs[target]
                nested = self.build_union(
                    target,
                    nested_def,
                    nested_def["anyOf"],
                    fixed=(*fixed, (key, value)),
                    parent=union,
                )
                union.variants.append((value, nested))
                continue
            inline_props = {k: v for k, v in branch.get("properties", {}).items() if k != key}
            inline_required = set(branch.get("required", ())) - {key}
            outer_doc = "Discriminator of the enclosing union: always ``{}``."
            discriminators = [
                Field(k, snake(k), f"Literal[{q(v)}]", False, False, outer_doc.format(q(v)), q(v))
                for k, v in fixed
            ]
            tag_doc = f"Discriminator of `{name}`: always ``{q(value)}``."
            discriminators.append(
                Field(key, snake(key), f"Literal[{q(value)}]", False, False, tag_doc, q(value))
            )
            for f in discriminators:
                f.explicit_name = msgspec_camel(f.py) != f.wire
            body: list[Field] = []
            if target is not None:
                if self.kinds[target] != "object":
                    raise SchemaShapeError(f"{name}.{value} refers to non-object {target}")
                body = self.object_fields(target)
                class_doc = doc(self.defs[target])
            else:
                class_doc = doc(d)
            body += self.make_fields(name, inline_props, inline_required)
            body += base_fields
            class_name = self.variant_name(name, value, target)
            if class_name in self.variant_names:
                raise SchemaShapeError(f"duplicate variant class name {class_name}")
            self.variant_names.add(class_name)
            where = " and ".join(f"``{k}: {q(v)}``" for k, v in [*fixed, (key, value)])
            struct = Struct(
                class_name,
                f"{class_doc}\n\nVariant of `{name}` sent with {where}.",
                discriminators + dedupe(meta_last(body)),
                [union.marker],
            )
            self.add_struct(
                target if target is not None and not self.is_shared(target) else name, struct
            )
            union.variants.append((value, struct))
        if union.key is None and not union.untagged:
            raise SchemaShapeError(f"{name} has no variants")
        self.unions.append(union)
        return union

    def find_plain(self, name: str) -> Struct:
        for item in self.classes[name]:
            if isinstance(item, Struct) and item.name == self.type_names[name]:
                return item
        struct = self.plain_struct(name, self.type_names[name])
        self.add_struct(name, struct)
        return struct

    def build_array_union(self, name: str, d: dict[str, object]) -> None:
        item_name = f"{name}{ITEM_UNION_SUFFIX}"
        branches = []
        list_types = []
        for branch in d["anyOf"]:
            target = single_ref(branch["items"])
            if target is None:
                raise SchemaShapeError(f"{name}: array branch items must be a $ref")
            branches.append({"allOf": [{"$ref": f"#/$defs/{target}"}]})
            list_types.append(f"list[{self.type_names[target]}]")
        union = self.build_union(item_name, d, branches, public=False)
        self.classes[name].extend(self.classes.pop(item_name, []))
        self.array_unions.append((name, doc(d), list_types, union))

    def check_coverage(self) -> None:
        emitted = {s.name for items in self.classes.values() for s in items}
        for name, kind in self.kinds.items():
            if kind in ("skip", "fragment"):
                continue
            if name in self.aliases or any(e.name == name for e in self.enums):
                continue
            if name in emitted or any(n == name for n, *_ in self.late_aliases):
                continue
            if any(n == name for n, *_ in self.array_unions):
                continue
            if self.type_names.get(name) in emitted:
                continue
            raise SchemaShapeError(f"def {name} ({kind}) produced no type")

    # ---- methods

    def methods(self) -> dict[str, list[tuple[str, str, str | None]]]:
        results: set[str] = set()
        for envelope in ("AgentResponse", "ClientResponse"):
            for option in self.defs[envelope]["anyOf"]:
                for branch in option.get("properties", {}).get("result", {}).get("anyOf", []):
                    target = single_ref(branch)
                    if target is not None:
                        results.add(target)
        by_method: dict[str, dict[str, str]] = {}
        sides: dict[str, str] = {}
        for name, d in self.defs.items():
            method = d.get("x-method")
            if method is None:
                continue
            role = "result" if name in results else "params"
            slot = by_method.setdefault(str(method), {})
            if role in slot:
                raise SchemaShapeError(f"two {role} types for {method}")
            slot[role] = name
            side = str(d["x-side"])
            if sides.setdefault(str(method), side) != side:
                raise SchemaShapeError(f"{method} is on two sides")
        groups = {"agent": "agentMethods", "client": "clientMethods", "protocol": "protocolMethods"}
        tables: dict[str, list[tuple[str, str, str | None]]] = {}
        for side, meta_key in groups.items():
            listed = list(self.meta[meta_key].values())
            schema_side = sorted(m for m, s in sides.items() if s == side)
            if sorted(listed) != schema_side:
                raise SchemaShapeError(f"meta.json {meta_key} {listed} != schema {schema_side}")
            rows = []
            for method in listed:
                slot = by_method[method]
                params = self.runtime_types[slot["params"]]
                result = self.runtime_types[slot["result"]] if "result" in slot else None
                rows.append((method, params, result))
            tables[side] = rows
        return tables


def doc(schema: dict[str, object]) -> str:
    return str(schema.get("description", "")).strip()


def meta_last(fields: list[Field]) -> list[Field]:
    return [f for f in fields if f.wire != "_meta"] + [f for f in fields if f.wire == "_meta"]


def dedupe(fields: list[Field]) -> list[Field]:
    seen: set[str] = set()
    result = []
    for f in fields:
        if f.wire not in seen:
            seen.add(f.wire)
            result.append(f)
    return result


# --------------------------------------------------------------------------------------------
# Formatting (ruff format style)


@dataclass
class Seq:
    prefix: str
    open: str
    items: list[Node]
    close: str


@dataclass
class KV:
    key: str
    value: Node


@dataclass
class Pipe:
    """A ``A | B | C`` type union."""

    items: list[str]


Node = str | Seq | KV | Pipe


def flat(node: Node) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, KV):
        return f"{node.key}: {flat(node.value)}"
    if isinstance(node, Pipe):
        return " | ".join(node.items)
    return node.prefix + node.open + ", ".join(flat(i) for i in node.items) + node.close


def fmt(node: Node, indent: str = "", lead: str = "", trail: str = "") -> list[str]:
    """Lay out an expression the way ruff format does: flat, hugged, or one item per line."""
    one_line = indent + lead + flat(node) + trail
    if len(one_line) <= LINE_LENGTH or isinstance(node, str):
        return [one_line]
    if isinstance(node, KV):
        return fmt(node.value, indent, lead + node.key + ": ", trail)
    inner = indent + INDENT
    if isinstance(node, Pipe):
        # Wrapped in parentheses: on one line if it fits there, else one operand per line.
        body = flat(node)
        if len(inner + body) <= LINE_LENGTH:
            return [indent + lead + "(", inner + body, indent + ")" + trail]
        operands = [inner + node.items[0]] + [f"{inner}| {item}" for item in node.items[1:]]
        return [indent + lead + "(", *operands, indent + ")" + trail]
    head = indent + lead + node.prefix + node.open
    body = ", ".join(flat(i) for i in node.items)
    if len(inner + body) <= LINE_LENGTH:
        return [head, inner + body, indent + node.close + trail]
    if len(node.items) == 1:
        # A sole argument is split on its own brackets, without a trailing comma.
        return [head, *fmt(node.items[0], inner), indent + node.close + trail]
    lines = [head]
    for item in node.items:
        lines += fmt(item, inner, "", ",")
    lines.append(indent + node.close + trail)
    return lines


def docstring(text: str, indent: str) -> list[str]:
    text = text.strip()
    if not text:
        raise SchemaShapeError("empty docstring")
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    first, *rest = text.splitlines()
    rest = textwrap.dedent("\n".join(rest)).splitlines() if rest else []
    if not rest:
        return [f'{indent}"""{first.strip()}"""']
    lines = [f'{indent}"""{first.strip()}']
    lines += [f"{indent}{line.rstrip()}" if line.strip() else "" for line in rest]
    lines.append(f'{indent}"""')
    return lines


# --------------------------------------------------------------------------------------------
# Emission


def q(value: str) -> str:
    """A Python string literal in ruff's preferred (double) quotes."""
    if '"' in value or "\\" in value or not value.isprintable():
        raise SchemaShapeError(f"unsupported string literal {value!r}")
    return f'"{value}"'


def lit(value: object) -> str:
    return q(value) if isinstance(value, str) else repr(value)


def tuple_src(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


class Emitter:
    def __init__(self, gen: Generator) -> None:
        self.gen = gen
        self.lines: list[str] = []
        self.public: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def blank(self, count: int = 1) -> None:
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.lines.extend([""] * count)

    def header(self) -> str:
        return (
            f"Generated from schema.json (sha256 {self.gen.digest}, ACP draft v2 as shipped with "
            f"{SDK_ORIGIN}) by scripts/gen_schema.py. Do not edit."
        )

    def module(self) -> str:
        gen = self.gen
        intro = (
            "\n\nThe ACP draft v2 protocol types: one msgspec Struct per schema object,"
            " type aliases for\nscalars and open enums, unions decoded through"
            " `acpio.schema._base`, and the method\ntables. Regenerate with"
            " ``python scripts/gen_schema.py`` after updating schema.json\n(see SOURCE.md)."
        )
        self.add(*docstring(self.header() + intro, ""))
        self.blank()
        self.add(
            "from __future__ import annotations",
            "",
            "from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args",
            "",
            "import msgspec",
            "from msgspec import UNSET, UnsetType",
            "",
            "from ._base import AcpStruct, MethodSpec, UnionDecoder, UnknownVariant, "
            "register_unions",
        )
        self.section("Scalar aliases")
        for alias in gen.aliases.values():
            self.alias(alias.name, alias.target, alias.doc)
        self.section("Enums")
        for enum in gen.enums:
            self.enum(enum)
        self.section("Union markers: runtime base classes of the variants of each union")
        for union in self.ordered_unions():
            parent = f"({union.parent.marker})" if union.parent else ""
            self.add(f"class {union.marker}{parent}:")
            text = (
                f"{union.doc}{union_note(union)}\n\nRuntime marker class of the `{union.name}`"
                " union: every variant inherits it and\n`acpio.schema.decode` dispatches on it;"
                " type checkers see the union of the variants."
            )
            self.add(*docstring(text, INDENT))
            self.add("", f"{INDENT}__slots__ = ()")
            self.blank(2)
        self.section("Object types")
        for name in gen.classes:
            for item in gen.classes[name]:
                if isinstance(item, Struct):
                    self.struct(item)
                elif item.open:
                    self.unknown(item)
        self.section(
            "Unions: a Union of the variant classes for type checkers, the marker at runtime"
        )
        self.add("if TYPE_CHECKING:")
        for union in self.ordered_unions():
            if union.public:
                node = Pipe(union.members())
                self.add(*fmt(node, INDENT, f"{union.name}: TypeAlias = "))
                self.add(*docstring(union.doc + union_note(union), INDENT))
                self.public.append(union.name)
        for name, text, list_types, _ in gen.array_unions:
            node = Pipe(list_types)
            self.add(*fmt(node, INDENT, f"{name}: TypeAlias = "))
            self.add(*docstring(text, INDENT))
            self.public.append(name)
        self.add("else:")
        for union in self.ordered_unions():
            if union.public:
                self.add(f"{INDENT}{union.name} = {union.marker}")
        for name, _, _, union in gen.array_unions:
            self.add(f"{INDENT}{name} = list[{union.marker}]")
        self.blank()
        for name, text, members in gen.late_aliases:
            self.alias(name, Pipe(members), f"{text}\n\nAny of its variant classes.")
        self.section("Union decoders")
        for union in gen.unions:
            self.union_decoder(union)
        self.blank()
        entries: list[Node] = [KV(u.marker, u.decoder_var) for u in self.ordered_unions()]
        self.add(*fmt(Seq("register_unions", "(", [Seq("", "{", entries, "}")], ")")))
        self.section("Methods")
        tables = gen.methods()
        self.constant(
            "PROTOCOL_VERSION",
            "Final",
            str(gen.meta["version"]),
            "The ACP protocol version these types describe.",
        )
        cancel = next(m for m, _, _ in tables["protocol"] if m == "$/cancel_request")
        self.constant(
            "CANCEL_REQUEST_METHOD",
            "Final",
            q(cancel),
            "Notification either side sends to cancel one of its own pending requests.",
        )
        docs = {
            "agent": "Methods the agent serves: requests and notifications the client sends.",
            "client": "Methods the client serves: requests and notifications the agent sends.",
            "protocol": "Protocol-level notifications either side may send.",
        }
        for side in ("agent", "client", "protocol"):
            rows: list[Node] = [
                KV(q(method), Seq("MethodSpec", "(", [q(method), params, str(result)], ")"))
                for method, params, result in tables[side]
            ]
            table = f"{side.upper()}_METHODS"
            lead = f"{table}: Final[dict[str, MethodSpec]] = "
            self.add(*fmt(Seq("", "{", rows, "}"), "", lead))
            self.add(*docstring(docs[side], ""))
            self.public.append(table)
            self.blank()
        self.blank()
        self.public = sorted(set(self.public))
        self.add(
            *fmt(Seq("", "(", [q(n) for n in self.public], ")"), "", "__all__: tuple[str, ...] = ")
        )
        in_doc = False
        for line in self.lines:
            if line.count('"""') % 2 == 1:
                in_doc = not in_doc
            elif not in_doc and '"""' not in line and len(line) > LINE_LENGTH:
                raise SchemaShapeError(f"line too long in output: {line}")
        return "\n".join(self.lines).rstrip("\n") + "\n"

    def ordered_unions(self) -> list[UnionType]:
        ordered: list[UnionType] = []

        def visit(union: UnionType) -> None:
            if union in ordered:
                return
            if union.parent is not None:
                visit(union.parent)
            ordered.append(union)

        for union in self.gen.unions:
            visit(union)
        return ordered

    def section(self, title: str) -> None:
        self.blank(2)
        self.add(f"# {'-' * 96}", f"# {title}")
        self.blank(2)

    def alias(self, name: str, target: Node, text: str) -> None:
        self.add(*fmt(target, "", f"{name}: TypeAlias = "))
        self.add(*docstring(text, ""))
        self.blank()
        self.public.append(name)

    def constant(self, name: str, ann: str, value: Node, text: str) -> None:
        self.add(*fmt(value, "", f"{name}: {ann} = "))
        self.add(*docstring(text, ""))
        self.blank()
        self.public.append(name)

    def enum(self, enum: Enum) -> None:
        literal = Seq("Literal", "[", [lit(v) for v in enum.values], "]")
        if not enum.open:
            self.alias(enum.name, literal, enum.doc + "\n\nClosed: no other value is valid.")
            return
        kind = "integer" if enum.base == "int" else "string"
        self.alias(
            enum.name,
            enum.base,
            f"{enum.doc}\n\nOpen {kind} enum: values outside `Known{enum.name}` (implementation-"
            "specific ones start with ``_``;\nothers are future ACP values) are kept verbatim and "
            "never treated as a known value.",
        )
        self.alias(
            f"Known{enum.name}",
            literal,
            f"The `{enum.name}` values defined by this schema revision.",
        )
        self.constant(
            f"KNOWN_{upper_snake(enum.name)}",
            f"Final[frozenset[{enum.base}]]",
            Seq("frozenset", "(", [f"get_args(Known{enum.name})"], ")"),
            f"The `{enum.name}` values defined by this schema revision, as a set.",
        )
        for value, title in zip(enum.values, enum.titles, strict=False):
            if enum.base == "int" and title:
                self.constant(upper_snake(title), "Final", lit(value), f"`{enum.name}`: {title}.")

    def struct(self, struct: Struct) -> None:
        self.public.append(struct.name)
        bases: list[Node] = ["AcpStruct", *struct.bases, "kw_only=True"]
        self.add(*fmt(Seq(f"class {struct.name}", "(", bases, ")"), "", "", ":"))
        self.add(*docstring(struct.doc, INDENT))
        for f in struct.fields:
            self.add("")
            self.add(*self.field_lines(f))
        self.blank(2)

    def field_lines(self, f: Field) -> list[str]:
        ann = f.ann
        default: str | None
        if f.any_json:
            default = None if f.required else "UNSET"
        elif f.required or f.literal is not None:
            if f.nullable:
                ann += " | None"
            default = f.literal
        else:
            ann += " | None | UnsetType" if f.nullable else " | UnsetType"
            default = "UNSET"
        value = default
        if f.explicit_name:
            args = [f"name={q(f.wire)}"] + ([f"default={default}"] if default is not None else [])
            value = f"msgspec.field({', '.join(args)})"
        lines = [f"{INDENT}{f.py}: {ann}" + (f" = {value}" if value is not None else "")]
        if f.doc:
            lines += docstring(f.doc, INDENT)
        return lines

    def unknown(self, union: UnionType) -> None:
        assert union.key is not None
        name = union.unknown
        self.public.append(name)
        self.add(f"class {name}(UnknownVariant, {union.marker}):")
        text = (
            f"A `{union.name}` whose ``{union.key}`` this SDK does not know: an ``_``-prefixed"
            " extension or a\nfuture ACP value. The whole object is kept verbatim in `raw` and"
            " re-encoded unchanged; it\nnever equals, and is never an instance of, a known"
            " variant."
        )
        self.add(*docstring(text, INDENT))
        self.add("", f"{INDENT}__slots__ = ()")
        self.add(f"{INDENT}_union = {q(union.name)}")
        self.add(f"{INDENT}_key = {q(union.key)}")
        known: list[Node] = [q(value) for value, _ in union.variants]
        self.add(*fmt(Seq("frozenset", "(", [Seq("", "{", known, "}")], ")"), INDENT, "_known = "))
        if union.fixed:
            pairs = [tuple_src([q(k), q(v)]) for k, v in union.fixed]
            self.add(f"{INDENT}_fixed = {tuple_src(pairs)}")
        for key, value in union.fixed:
            self.add(
                "", f"{INDENT}@property", f"{INDENT}def {snake(key)}(self) -> Literal[{q(value)}]:"
            )
            self.add(*docstring(f"The ``{key}`` discriminator, always ``{q(value)}``.", INDENT * 2))
            self.add(f"{INDENT * 2}return {q(value)}")
        self.add("", f"{INDENT}@property", f"{INDENT}def {snake(union.key)}(self) -> str:")
        self.add(*docstring(f"The unknown ``{union.key}`` value.", INDENT * 2))
        self.add(f"{INDENT * 2}return self._tag({q(union.key)})")
        self.blank(2)

    def union_decoder(self, union: UnionType) -> None:
        args: list[Node] = [q(union.name), q(union.key) if union.key else "None"]
        variants: list[Node] = [
            KV(q(value), target.decoder_var if isinstance(target, UnionType) else target.name)
            for value, target in union.variants
        ]
        args.append(Seq("", "{", variants, "}"))
        if union.open:
            args.append(f"unknown={union.unknown}")
        if union.untagged:
            pairs: list[Node] = [
                tuple_src([s.name, tuple_src([q(k) for k in required])])
                for s, required in union.untagged
            ]
            args.append(Seq("untagged=", "[", pairs, "]"))
        self.add(*fmt(Seq("UnionDecoder", "(", args, ")"), "", f"{union.decoder_var} = "))


def union_note(union: UnionType) -> str:
    key = f"``{union.key}``" if union.key else "the properties present"
    note = f"\n\nA union of its variant classes, told apart by {key}"
    if union.fixed:
        note += " (" + ", ".join(f"``{k}: {q(v)}``" for k, v in union.fixed) + ")"
    if union.untagged and union.key:
        note += " or, without it, by the properties present"
    if union.open:
        note += f"; other values decode to `{union.unknown}`"
    return note + "."


# --------------------------------------------------------------------------------------------
# __init__.py and SOURCE.md

CODEC_EXPORTS = {
    "._base": ["AcpStruct", "MethodSpec", "UnknownVariant"],
    "._codec": ["convert", "decode", "encode", "to_builtins"],
}


def isort_key(name: str) -> tuple[int, str, str]:
    if name.isupper() and len(name) > 1:
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return (group, name.lower(), name)


def init_module(header: str, generated: list[str]) -> str:
    lines = docstring(
        "ACP draft v2 protocol types and their JSON codec.\n\n"
        + textwrap.fill(header, width=LINE_LENGTH - 4, break_on_hyphens=False)
        + "\n\nEvery schema object is a msgspec Struct (`AcpStruct`); open unions decode unknown"
        " values to\n``Unknown<Union>`` objects kept verbatim; `encode`/`decode`/`convert`/"
        "`to_builtins` are the codec.",
        "",
    )
    lines += ["", "from __future__ import annotations", ""]
    exports: list[str] = []
    for module, names in [*CODEC_EXPORTS.items(), ("._generated", generated)]:
        for name in sorted(names, key=isort_key):
            line = f"from {module} import {name} as {name}"
            if len(line) > LINE_LENGTH:
                line = f"from {module} import (\n{INDENT}{name} as {name},\n)"
            lines.append(line)
            exports.append(name)
    lines.append("")
    lines += fmt(
        Seq("", "(", [q(n) for n in sorted(exports)], ")"), "", "__all__: tuple[str, ...] = "
    )
    return "\n".join(lines) + "\n"


def source_md(digest: str, meta_digest: str) -> str:
    return f"""# Source of the vendored ACP schema

- `schema.json`: the ACP draft v2 JSON Schema as shipped with the official TypeScript SDK
  `{SDK_ORIGIN}`, taken from the project's shared reference copy
  (`acp-v2/schema.json`). sha256 `{digest}`.
- `meta.json`: the method-name table shipped alongside it (`acp-v2/meta.json`).
  sha256 `{meta_digest}`.
- Vendored on {SOURCE_DATE}. Both files are kept byte-identical to the reference copy.

`_generated.py` and `__init__.py` are generated from these files by `scripts/gen_schema.py`; do
not edit them by hand. To update the schema, replace `schema.json` and `meta.json`, update this
file, then run:

```sh
python scripts/gen_schema.py          # rewrite _generated.py, __init__.py and SOURCE.md
python scripts/gen_schema.py --check  # what the test suite runs: exit 1 when stale
```
"""


def generate(schema_dir: Path) -> dict[str, str]:
    schema_bytes = (schema_dir / "schema.json").read_bytes()
    meta_bytes = (schema_dir / "meta.json").read_bytes()
    digest = hashlib.sha256(schema_bytes).hexdigest()
    gen = Generator(json.loads(schema_bytes), json.loads(meta_bytes), digest)
    gen.build()
    emitter = Emitter(gen)
    module = emitter.module()
    return {
        "_generated.py": module,
        "__init__.py": init_module(emitter.header(), emitter.public),
        "SOURCE.md": source_md(digest, hashlib.sha256(meta_bytes).hexdigest()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    parser.add_argument("--schema-dir", type=Path, default=DEFAULT_SCHEMA_DIR)
    args = parser.parse_args(argv)
    outputs = generate(args.schema_dir)
    stale = []
    for filename, text in outputs.items():
        path = args.schema_dir / filename
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(path)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        names = ", ".join(str(p) for p in stale)
        print(
            f"stale generated files: {names}; run `python scripts/gen_schema.py`", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
