"""The arguments of ``acpio registry`` (argparse only: building the ``acpio`` parser must not
load the testing kit or jsonschema, which ``acpio serve`` with only the ``remote`` extra lacks)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_registry_parser"]


def add_registry_parser(commands: Any) -> None:
    """The ``registry`` command and its ``init`` and ``check`` subcommands."""
    registry = commands.add_parser(
        "registry",
        help="write and check an ACP registry entry (agent.json) for a Python agent",
        description="Publish an agent in the ACP registry: `init` writes its agent.json "
        "(a uvx distribution pinned to the version), `check` validates one as the "
        "registry's CI does and, with --launch, starts the agent as its verifier does.",
    )
    sub = registry.add_subparsers(dest="registry_command", metavar="SUBCOMMAND", required=True)
    init = sub.add_parser(
        "init",
        help="write agent.json for PACKAGE==VERSION (default: ID/agent.json)",
        description="Write the registry entry of a PyPI package: a uvx distribution pinned to "
        "the exact version. Name, description, authors, license and repository come from the "
        "installed package's metadata where there is one. uvx runs the console script named "
        "like the package; the registry's schema allows no `cmd`.",
    )
    init.add_argument("requirement", metavar="PACKAGE==VERSION", help="e.g. my-agent==1.0.0")
    init.add_argument("--id", help="the registry id (default: the package name, normalized)")
    init.add_argument("--name", help="the name editors show (default: the package's name)")
    init.add_argument("--description", help="one sentence (default: the package's summary)")
    init.add_argument(
        "--arg",
        action="append",
        metavar="ARG",
        help="an argument for the agent (repeatable; --arg=--acp for one that starts with -)",
    )
    init.add_argument(
        "-o", "--output", metavar="FILE", help="where to write (default ID/agent.json)"
    )
    init.add_argument("--force", action="store_true", help="replace an existing file")
    check = sub.add_parser(
        "check",
        help="validate agent.json (a file or an entry's directory); --launch starts the agent",
        description="Validate an entry against the registry's schema (vendored) and rules: id "
        "pattern and directory, numeric x.y.z version, the pinned package version equal to "
        "`version`, no `latest`, a distribution, icon.svg 16x16 with currentColor. With "
        "--launch -- COMMAND..., start the agent as the registry's verifier does and require "
        "an `agent` or `terminal` auth method in its initialize answer (without a command, "
        "the entry's uvx or npx package is started). Exit code 1 on any problem.",
    )
    check.add_argument(
        "target",
        nargs=argparse.REMAINDER,
        metavar="[PATH] [-- COMMAND ...]",
        help="agent.json or its directory (default ./agent.json); after `--`, the agent's "
        "command for --launch",
    )
    check.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long the launched agent may take to answer initialize (default 60)",
    )
    check.add_argument(
        "--launch",
        action="store_true",
        help="start the agent (the command after `--`, else the entry's package) and check "
        "that it offers sign-in as the registry's verifier requires",
    )
