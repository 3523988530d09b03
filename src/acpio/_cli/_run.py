"""Runs one parsed ``acpio`` command under anyio and reports its failures readably."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Final

import anyio
from rich.console import Console
from rich.text import Text

from ._drive import leaf_error
from ._failure import CliError
from ._output import ColorMode, Output
from ._safe_text import safe, visible

__all__ = ["run"]

_SVG_TITLES: Final = {"demo": "acpio demo", "inspect": "acpio inspect", "check": "acpio check"}


async def _dispatch(args: argparse.Namespace, command: list[str] | None, output: Output) -> int:
    if args.command == "demo":
        from ._demo import run_demo  # noqa: PLC0415

        return await run_demo(
            output, examples=args.examples, workdir=args.workdir, timeout=args.timeout
        )
    if args.command == "inspect":
        from ._inspect import run_inspect, run_replay  # noqa: PLC0415

        if args.replay:
            return await run_replay(output, args.replay)
        assert command is not None
        return await run_inspect(
            output,
            command,
            policy="allow" if args.allow else "reject" if args.reject else "ask",
            record=args.record,
            cwd=args.cwd,
            timeout=args.timeout,
            protocol_version=args.protocol,
        )
    from ._check import CheckOptions, run_check  # noqa: PLC0415

    assert command is not None
    return await run_check(
        output,
        command,
        CheckOptions(
            prompt=args.prompt,
            cancel_prompt=args.cancel_prompt,
            allow=args.allow,
            timeout=args.timeout,
            exit_timeout=args.exit_timeout,
            cwd=args.cwd,
            json=args.json,
            protocols=(2, 1) if args.protocol is None else (args.protocol,),
        ),
    )


def report_error(error: CliError, color: ColorMode) -> None:
    """Print a CLI error as one paragraph on stderr, then its detail (indented)."""
    console = Console(
        stderr=True,
        highlight=False,
        no_color=color == "never",
        force_terminal=True if color == "always" else None,
    )
    # In a terminal rich wraps the paragraph; in a log or a pipe it stays one line.
    console.print(
        Text.assemble(("acpio: ", "bold red"), safe(error.message, one_line=False)),
        soft_wrap=not console.is_terminal,
    )
    if error.detail:
        # An agent's stderr: shown, never obeyed.
        indented = "\n".join("    " + line for line in visible(error.detail).splitlines())
        console.print(Text(indented, style="dim"), soft_wrap=True)


def _silence_stdout() -> None:
    # Python would report the broken pipe again when flushing stdout at exit.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def run(args: argparse.Namespace, command: list[str] | None) -> int:
    """Run the command; returns its exit code."""
    color: ColorMode = args.color
    svg = getattr(args, "svg", None)
    output = Output(color=color, record_svg=bool(svg))
    code = 1
    try:
        code = anyio.run(_dispatch, args, command, output)
    except BaseException as exc:
        leaf = leaf_error(exc)
        output.close()
        if isinstance(leaf, BrokenPipeError):
            # The reader went away (`acpio check | head`): nothing more to say.
            _silence_stdout()
            return 1
        if isinstance(leaf, CliError):
            report_error(leaf, color)
            code = leaf.code
        elif isinstance(leaf, KeyboardInterrupt):
            report_error(CliError("interrupted"), color)
            code = 130
        elif args.debug or not isinstance(leaf, Exception):
            raise
        else:
            report_error(
                CliError(
                    f"internal error: {leaf!r}. This is a bug in acpio; run the command again "
                    "with --debug to see the traceback, and please report it."
                ),
                color,
            )
            code = 1
    finally:
        output.close()
    if svg:
        try:
            output.save_svg(svg, title=_SVG_TITLES.get(args.command, "acpio"))
        except OSError as exc:
            report_error(CliError(f"could not write {svg}: {exc.strerror or exc}"), color)
            return 1
        print(f"acpio: saved {os.path.abspath(svg)}", file=sys.stderr)
    return code
