"""``acpio registry init`` and ``acpio registry check``: an ACP registry entry (``agent.json``).

How this works: :func:`entry_for` builds the entry of a Python package published
on PyPI (a ``uvx`` distribution pinned to ``PACKAGE==VERSION``), filling the name,
description and optional fields from the installed package's metadata where
there is one; ``check`` reports what :mod:`acpio._cli._registry_rules` finds
(the registry's schema and rules), one problem a line, each saying what to
change. The launch check (the registry's verifier) is
:mod:`acpio._cli._registry_launch`.

``cmd``: the newer CONTRIBUTING text documents ``"cmd"`` in a ``uvx`` entry
(run as ``uvx --from <package> <cmd>``), but the schema the CI validates with
allows only ``package``, ``args`` and ``env``, so an entry with ``cmd`` fails.
``init`` therefore never writes one: for a package whose console scripts do
not include one named like the package (which ``uvx <package>`` runs), it
stops and says to add such a script, which works with every version of the
registry.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ._failure import CliError
from ._registry_rules import (
    ENTRY_FILE,
    ICON_FILE,
    ID_PATTERN,
    PACKAGE_PATTERN,
    VERSION_PATTERN,
    icon_problems,
    problems,
    rule_problems,
    schema_problems,
)

__all__ = ["entry_for", "registry_command"]

# ------------------------------------------------------------------ init


def parse_requirement(text: str) -> tuple[str, str]:
    """``PACKAGE==VERSION`` as (package, version); :raises CliError: saying what to write."""
    if "==" not in text:
        hint = "e.g. `my-agent==1.0.0`"
        if "@" in text or ">" in text or "<" in text or "~" in text:
            raise CliError(
                f"pin the exact version with `==`: {text!r} is not PACKAGE==VERSION, " + hint,
                code=2,
            )
        raise CliError(
            f"give the version to publish: PACKAGE==VERSION ({hint}), not {text!r}", code=2
        )
    package, _, version = (part.strip() for part in text.partition("=="))
    if not PACKAGE_PATTERN.fullmatch(package):
        raise CliError(f"{package!r} is not a Python package name", code=2)
    if version.lower() == "latest":
        raise CliError(
            f"the registry refuses `latest`: give the exact version, e.g. `{package}==1.0.0`",
            code=2,
        )
    if not VERSION_PATTERN.fullmatch(version):
        raise CliError(
            f"{version!r} is not a numeric `x.y.z` version, which the registry "
            "requires (no pre-release or build suffix)",
            code=2,
        )
    return package, version


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def default_id(package: str) -> str:
    """The registry id for ``package``: its normalized name (:raises CliError: if none fits)."""
    candidate = _normalized(PACKAGE_PATTERN.fullmatch(package).group("name"))  # type: ignore[union-attr]
    if not ID_PATTERN.fullmatch(candidate):
        raise CliError(
            f"{package!r} makes no registry id ({candidate!r}): give one with --id, "
            "lowercase letters, digits and hyphens, starting with a letter",
            code=2,
        )
    return candidate


@dataclass(frozen=True)
class Installed:
    """What the installed distribution of the package says about itself."""

    version: str
    name: str
    summary: str | None
    scripts: tuple[str, ...]
    license: str | None
    authors: tuple[str, ...]
    repository: str | None


def installed(package: str) -> Installed | None:
    """The package's metadata in this environment, or ``None`` when it is not installed."""
    name = PACKAGE_PATTERN.fullmatch(package).group("name")  # type: ignore[union-attr]
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    fields = dist.metadata.json  # keys lowercased, repeated fields as lists

    def field(key: str) -> str:
        value = fields.get(key)
        return value.strip() if isinstance(value, str) else ""

    scripts = tuple(sorted(ep.name for ep in dist.entry_points if ep.group == "console_scripts"))
    authors = field("author_email") or field("author")
    project_urls = fields.get("project_url") or []
    urls = [
        u.partition(",")
        for u in ([project_urls] if isinstance(project_urls, str) else project_urls)
    ]
    repository = next(
        (
            url.strip()
            for label, _, url in urls
            if label.strip().lower() in ("repository", "source", "source code", "code")
            and url.strip().startswith("https://")
        ),
        None,
    )
    return Installed(
        version=dist.version,
        name=field("name") or name,
        summary=field("summary") or None,
        scripts=scripts,
        license=field("license_expression") or None,
        authors=tuple(a.strip() for a in authors.split(",") if a.strip()),
        repository=repository,
    )


def entry_for(
    package: str,
    version: str,
    *,
    entry_id: str | None = None,
    name: str | None = None,
    description: str | None = None,
    args: list[str] | None = None,
    metadata: Installed | None = None,
) -> tuple[dict[str, object], list[str]]:
    """The ``agent.json`` of ``package==version`` and the notes for its author.

    :raises CliError: when the registry would refuse what can be known here (an id,
        a missing description, no console script ``uvx <package>`` could run).
    """
    notes: list[str] = []
    entry_id = entry_id or default_id(package)
    if not ID_PATTERN.fullmatch(entry_id):
        raise CliError(
            f"--id {entry_id!r} is not a registry id: use lowercase letters, digits "
            "and hyphens, starting with a letter (e.g. `my-agent`)",
            code=2,
        )
    bare = PACKAGE_PATTERN.fullmatch(package).group("name")  # type: ignore[union-attr]
    if metadata is None:
        notes.append(
            f"{bare} is not installed here, so its metadata was not read: make sure "
            f"it installs a console script named `{bare}` (`uvx {bare}` runs that)"
        )
    else:
        if metadata.version != version:
            notes.append(
                f"the installed {bare} is {metadata.version}, the entry names "
                f"{version}: make sure {version} is published on PyPI"
            )
        if not any(_normalized(s) == _normalized(bare) for s in metadata.scripts):
            offered = ", ".join(f"`{s}`" for s in metadata.scripts) or "none"
            raise CliError(
                f"`uvx {bare}` runs the console script named `{bare}`, but {bare} installs "
                f"{offered}. The registry's schema allows no `cmd` in a uvx entry (the newer "
                "CONTRIBUTING text documents one, but CI validates with the schema, which "
                f'refuses it), so add `{bare} = "your_module:main"` under '
                "[project.scripts] in pyproject.toml, release, and run this again",
            )
    name = name or (metadata.name if metadata else None) or bare
    description = description or (metadata.summary if metadata else None)
    if not description:
        raise CliError(
            "the registry requires a description: give --description "
            "(or a Summary in the package's metadata)",
            code=2,
        )
    uvx: dict[str, object] = {"package": f"{package}=={version}"}
    if args:
        uvx["args"] = list(args)
    entry: dict[str, object] = {
        "id": entry_id,
        "name": name,
        "version": version,
        "description": description,
    }
    if metadata is not None and metadata.repository:
        entry["repository"] = metadata.repository
    if metadata is not None and metadata.authors:
        entry["authors"] = list(metadata.authors)
    if metadata is not None and metadata.license:
        entry["license"] = metadata.license
    entry["distribution"] = {"uvx": uvx}
    return entry, notes


# ------------------------------------------------------------------ the command


def _load(path: Path) -> tuple[object, str | None, Path]:
    """The entry at ``path`` (a file, or a directory holding agent.json), its directory name
    when ``path`` is a directory (the registry layout), and the file."""
    directory: str | None = None
    file = path
    if path.is_dir():
        directory = path.resolve().name
        file = path / ENTRY_FILE
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(
            f"{file} does not exist: write one with `acpio registry init "
            "PACKAGE==VERSION`, or give the path of an agent.json"
        ) from None
    except OSError as exc:
        raise CliError(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        return json.loads(text), directory, file
    except json.JSONDecodeError as exc:
        raise CliError(f"{file} is not JSON: {exc}") from None


def run_init(args: argparse.Namespace) -> int:
    """``acpio registry init``: write the entry; returns the exit code."""
    package, version = parse_requirement(args.requirement)
    entry, notes = entry_for(
        package,
        version,
        entry_id=args.id,
        name=args.name,
        description=args.description,
        args=args.arg,
        metadata=installed(package),
    )
    leftover = schema_problems(entry) + rule_problems(entry, None)
    if leftover:  # what was given by flags (a name, a description) can still be refused
        raise CliError("the entry would be refused: " + "; ".join(map(str, leftover)), code=2)
    output = Path(args.output) if args.output else Path(str(entry["id"])) / ENTRY_FILE
    if output.exists() and not args.force:
        raise CliError(f"{output} exists: pass --force to replace it, or -o another path")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(entry, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {output}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    icon = output.parent / ICON_FILE
    if not icon.exists():
        print(
            f"note: add {icon}: 16x16, drawn with currentColor (the registry requires it)",
            file=sys.stderr,
        )
    return 0


def run_check(args: argparse.Namespace) -> int:
    """``acpio registry check``: the file's problems, then the launch check if asked."""
    code = 0
    path, command = _target(args)
    entry: object = None
    if path is not None or not command:
        entry, directory, file = _load(Path(path or ENTRY_FILE))
        found = problems(entry, directory)
        icon = file.parent / ICON_FILE
        if icon.exists():
            found += icon_problems(icon)
        if found:
            print(
                f"{file}: the registry would refuse it ({len(found)} problem"
                f"{'' if len(found) == 1 else 's'}):"
            )
            for problem in found:
                print(f"  - {problem}")
            code = 1
        else:
            print(f"{file}: passes the ACP registry's schema and rules")
            if not icon.exists():
                print(
                    f"note: no {icon}: the registry requires a 16x16 icon drawn with "
                    "currentColor next to agent.json",
                    file=sys.stderr,
                )
    if args.launch:
        from ._registry_launch import launch_command, run_launch  # noqa: PLC0415

        code = max(code, run_launch(command or launch_command(entry), timeout=args.timeout))
    return code


def _target(args: argparse.Namespace) -> tuple[str | None, list[str] | None]:
    """``[PATH] [-- COMMAND...]`` as (path, command); sets ``args.launch`` when ``--launch``
    came after PATH (argparse leaves everything after the first positional to us).

    :raises CliError: for a command without --launch, an empty command, more than one PATH.
    """
    words: list[str] = list(args.target)
    command: list[str] | None = None
    if "--" in words:
        split = words.index("--")
        words, command = words[:split], words[split + 1 :]
    if "--launch" in words:
        words.remove("--launch")
        args.launch = True
    if command is not None and not args.launch:
        raise CliError(
            "a command after `--` is for --launch: `acpio registry check --launch -- "
            "python my_agent.py`",
            code=2,
        )
    if command is not None and not command:
        raise CliError(
            "give the agent's command after `--`, e.g. `acpio registry check "
            "--launch -- python my_agent.py`",
            code=2,
        )
    if len(words) > 1 or any(word.startswith("-") for word in words):
        raise CliError(
            f"expected at most one PATH, got {' '.join(words)!r}; options go before PATH, "
            "the agent's command after `--`",
            code=2,
        )
    return (words[0] if words else None), command


def registry_command(args: argparse.Namespace) -> int:
    """Run ``acpio registry init|check``; returns the exit code."""
    if args.registry_command == "init":
        return run_init(args)
    return run_check(args)
