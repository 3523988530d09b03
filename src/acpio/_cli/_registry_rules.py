"""What the ACP registry refuses in an entry (``agent.json``), as problems that say what to change.

How this works: :func:`problems` checks an entry the way the registry's CI does: the
vendored schema (``registry/agent.schema.json``) first, each error said as what to
change, then the rules the schema does not express (numeric ``x.y.z`` versions, the id
equal to the entry's directory, no ``latest``, the pinned version equal to
``version``); :func:`icon_problems` reads ``icon.svg`` (16x16, ``currentColor`` only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast
from xml.etree import ElementTree

from .._json import JsonObject, as_object, get_field

__all__ = [
    "ENTRY_FILE",
    "ICON_FILE",
    "ID_PATTERN",
    "PACKAGE_PATTERN",
    "SCHEMA_PATH",
    "VERSION_PATTERN",
    "Problem",
    "icon_problems",
    "problems",
    "rule_problems",
    "schema_problems",
]

SCHEMA_PATH: Final = Path(__file__).with_name("registry") / "agent.schema.json"
ENTRY_FILE: Final = "agent.json"
ICON_FILE: Final = "icon.svg"
ID_PATTERN: Final = re.compile(r"[a-z][a-z0-9-]*")
VERSION_PATTERN: Final = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
# PEP 508 names, with optional extras: what `uvx` takes before `==`.
PACKAGE_PATTERN: Final = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?P<extras>\[[A-Za-z0-9._, -]*\])?"
)
# The registry's own reading of a pinned version: the first `=`/`@` run and the digits after.
_PINNED: Final = re.compile(r"[=@]+([\d.]+)")
_MAX_ICON_BYTES: Final = 65536
_ICON_COLORS: Final = frozenset({"currentcolor", "none", "inherit"})


@dataclass(frozen=True)
class Problem:
    """One reason the registry would refuse an entry: where, and what to change."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


# ------------------------------------------------------------------ checking


def _schema() -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads(SCHEMA_PATH.read_bytes()))


def _where(path: Iterator[object] | Any) -> str:
    parts = [str(part) for part in path]
    return ".".join(parts) if parts else "agent.json"


_HINTS: Final = {
    "id": "a lowercase id such as `my-agent` (the entry's directory has the same name)",
    "name": "the name editors show, e.g. `My Agent`",
    "version": "the version of the package, numeric `x.y.z`",
    "description": "one sentence that says what the agent does",
    "distribution": 'how editors start it, e.g. {"uvx": {"package": "my-agent==1.0.0"}} '
    "(`acpio registry init my-agent==1.0.0` writes one)",
}


def _schema_problem(error: Any) -> Problem:
    """A schema error said as what to change."""
    where = _where(error.absolute_path)
    validator: str = error.validator
    if validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        field = missing[0] if missing else "?"
        hint = _HINTS.get(field, "")
        return Problem(
            f"{where}.{field}" if where != "agent.json" else field,
            f"missing: add `{field}`" + (f", {hint}" if hint else ""),
        )
    if where == "id" and validator == "pattern":
        return Problem(
            "id",
            f"{error.instance!r} is not a registry id: use lowercase letters, digits and "
            "hyphens, starting with a letter (e.g. `my-agent`)",
        )
    if where == "version" and validator == "pattern":
        return Problem("version", f"{error.instance!r} is not a numeric `x.y.z` version")
    if where == "distribution" and validator == "minProperties":
        return Problem("distribution", "empty: add `uvx` (a PyPI package), `npx` or `binary`")
    if validator == "additionalProperties":
        extra = re.findall(r"'([^']+)' was unexpected", error.message)
        if where in ("distribution.uvx", "distribution.npx") and "cmd" in extra:
            return Problem(
                where,
                "`cmd` is not allowed by the registry's schema (only `package`, `args`, `env`): "
                "remove it and give the package a console script named like the package, "
                "which `uvx <package>` runs",
            )
        return Problem(
            where,
            f"remove {', '.join(f'`{e}`' for e in extra) or 'the field'}: "
            f"the registry's schema does not allow it ({error.message})",
        )
    return Problem(where, str(error.message))


def schema_problems(entry: object) -> list[Problem]:
    """The entry's schema violations (the vendored schema), in document order."""
    import jsonschema  # noqa: PLC0415 - the cli extra; only when checking

    # Typed as Any: the stubs' overloads leave iter_errors partly unknown.
    validator: Any = jsonschema.Draft7Validator(_schema())
    errors: list[Any] = sorted(validator.iter_errors(entry), key=lambda e: [str(p) for p in e.path])
    return [_schema_problem(error) for error in errors]


def _package_rules(kind: str, package: str, version: str) -> list[Problem]:
    where = f"distribution.{kind}.package"
    if re.search(r"[=@]\s*latest\b", package, re.IGNORECASE):
        return [
            Problem(
                where,
                f"{package!r} asks for `latest`: pin the exact version, "
                f"e.g. `{_bare(kind, package)}{_pin(kind)}{version}`",
            )
        ]
    found = _PINNED.search(package[1:] if kind == "npx" else package)
    if kind == "uvx" and re.search(r"[<>~!]", package):
        return [
            Problem(
                where,
                f"{package!r} is a version range: pin the exact version with `==` "
                f"(`{_bare(kind, package)}=={version}`)",
            )
        ]
    if found is None:
        return [
            Problem(
                where,
                f"{package!r} is not pinned: write "
                f"`{_bare(kind, package)}{_pin(kind)}{version}` so editors start "
                "the version this entry names",
            )
        ]
    if found.group(1) != version:
        return [
            Problem(
                where,
                f"pins {found.group(1)} but `version` is {version}: make them "
                f"equal (`{_bare(kind, package)}{_pin(kind)}{version}`)",
            )
        ]
    return []


def _pin(kind: str) -> str:
    return "@" if kind == "npx" else "=="


def _bare(kind: str, package: str) -> str:
    if kind == "npx":
        scope = package.startswith("@")
        head, _, _ = package[1 if scope else 0 :].partition("@")
        return ("@" if scope else "") + head
    return re.split(r"[=@<>!~ ]", package, maxsplit=1)[0]


def rule_problems(entry: JsonObject, directory: str | None) -> list[Problem]:
    """The registry's rules beyond the schema (fields of the wrong type are skipped: the
    schema reports them)."""
    found: list[Problem] = []
    entry_id = entry.get("id")
    if directory is not None and isinstance(entry_id, str) and entry_id != directory:
        found.append(
            Problem(
                "id",
                f"{entry_id!r} differs from its directory {directory!r}: "
                "the registry keeps an entry in a directory named like its "
                f"id, so rename one of them",
            )
        )
    version = entry.get("version")
    if isinstance(version, str) and not VERSION_PATTERN.fullmatch(version):
        found.append(
            Problem(
                "version",
                f"{version!r} is not a numeric `x.y.z` version (no "
                "pre-release or build suffix): release a plain version",
            )
        )
    distribution = as_object(entry.get("distribution"))
    if distribution is not None and isinstance(version, str):
        for kind in ("uvx", "npx"):
            package = get_field(distribution.get(kind), "package")
            if isinstance(package, str) and package:
                found += _package_rules(kind, package, version)
        binary = as_object(distribution.get("binary"))
        if binary is not None:
            for platform, target in binary.items():
                archive = get_field(target, "archive")
                if isinstance(archive, str) and "/latest/" in archive:
                    found.append(
                        Problem(
                            f"distribution.binary.{platform}.archive",
                            "a `/latest/` URL: link the release of this version",
                        )
                    )
    return found


def icon_problems(icon: Path) -> list[Problem]:
    """``icon.svg``: 16x16 (``width``/``height`` or ``viewBox``), monochrome ``currentColor``."""
    try:
        data = icon.read_bytes()
    except OSError as exc:
        return [Problem(ICON_FILE, f"cannot be read: {exc.strerror or exc}")]
    if len(data) > _MAX_ICON_BYTES:
        return [Problem(ICON_FILE, f"is {len(data)} bytes: a 16x16 icon needs far less")]
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return [Problem(ICON_FILE, "has a DOCTYPE or entities: remove them")]
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        return [Problem(ICON_FILE, f"is not well-formed XML: {exc}")]
    if root.tag.rpartition("}")[2] != "svg":
        return [Problem(ICON_FILE, "is not an SVG image (its root element is not <svg>)")]
    found: list[Problem] = []
    width, height = _size(root.get("width")), _size(root.get("height"))
    if width is None and height is None:
        box = (root.get("viewBox") or "").replace(",", " ").split()
        width, height = (_size(box[2]), _size(box[3])) if len(box) == 4 else (None, None)
    if width != 16 or height != 16:
        found.append(
            Problem(
                ICON_FILE,
                f"is {_shown(width)}x{_shown(height)}: make it 16x16 "
                '(width="16" height="16" viewBox="0 0 16 16")',
            )
        )
    colors: set[str] = set()
    for element in root.iter():
        for attribute in ("fill", "stroke"):
            if (value := element.get(attribute)) is not None:
                colors.add(value.strip())
        style = element.get("style") or ""
        colors.update(m.strip() for m in re.findall(r"(?:fill|stroke)\s*:\s*([^;]+)", style))
    hard = sorted(c for c in colors if c.lower() not in _ICON_COLORS)
    if hard:
        found.append(
            Problem(
                ICON_FILE,
                f"uses the colour(s) {', '.join(hard)}: use "
                '`fill="currentColor"` (or none/inherit) so it follows '
                "the editor's theme",
            )
        )
    if not any(c.lower() == "currentcolor" for c in colors) and b"currentColor" not in data:
        found.append(
            Problem(
                ICON_FILE,
                "does not use currentColor: draw it with "
                '`fill="currentColor"` or `stroke="currentColor"`',
            )
        )
    return found


def _size(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip().removesuffix("px"))
    except ValueError:
        return None


def _shown(size: float | None) -> str:
    return "?" if size is None else f"{size:g}"


def problems(entry: object, directory: str | None = None) -> list[Problem]:
    """Everything the registry's CI would refuse in ``entry`` (its parsed JSON); ``directory``
    is the entry's directory name when it sits in the registry's layout."""
    found = schema_problems(entry)
    if isinstance(entry, dict):
        rules = rule_problems(cast("JsonObject", entry), directory)
        seen = {str(p) for p in found}
        found += [p for p in rules if str(p) not in seen and not _covered(p, found)]
    return found


def _covered(problem: Problem, found: list[Problem]) -> bool:
    # The schema's not-anchored version pattern and ours may both refuse one version.
    return problem.where == "version" and any(p.where == "version" for p in found)
