"""The ``acpio`` command: ``demo``, ``inspect``, ``check``, ``serve`` and ``registry`` (needs the
``cli`` extra: rich, jsonschema; ``serve`` the ``remote`` extra).

How this works: :func:`main` parses the arguments, imports the chosen
command's module (so ``acpio --help`` stays fast and the core package never
imports rich), runs it under anyio and turns every expected failure into one
readable paragraph on stderr and an exit code: 0 success, 1 failure (a
failed check, an agent that broke), 2 usage errors, 130 interrupted.
``--debug`` shows Python tracebacks instead.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["main"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

_EPILOG: Final = """\
examples:
  acpio demo
  acpio inspect -- python examples/shell_agent.py
  acpio inspect --allow --record session.jsonl -- python my_agent.py
  acpio inspect --replay session.jsonl
  acpio check -- python my_agent.py
  acpio check --protocol 1 -- python my_agent.py
  acpio inspect --protocol 1 -- python my_agent.py
  acpio check --json --prompt "list the files" -- node dist/agent.js
  acpio registry init my-agent==1.0.0
  acpio registry check my-agent --launch -- python my_agent.py
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acpio",
        description="Try, watch and check ACP (Agent Client Protocol, draft v2) agents.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours and live redraw: auto (in a terminal), always, never",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show Python tracebacks and acpio's debug log"
    )
    parser.add_argument("--version", action="version", version=f"acpio {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="watch the example shell and edit agents at work (seconds, non-interactive)",
        description="Run the example shell and edit agents as subprocesses and show, live, "
        "what an editor would: prompts, tool calls, permission prompts and answers, "
        "terminal output, diffs, cancellation and stop reasons.",
    )
    demo.add_argument("--svg", metavar="FILE", help="also save what was shown as an SVG picture")
    demo.add_argument(
        "--examples", metavar="DIR", help="directory holding shell_agent.py and edit_agent.py"
    )
    demo.add_argument(
        "--workdir",
        metavar="DIR",
        help="project directory for the agents (default: a temporary one, removed afterwards)",
    )
    demo.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long any step may take (default 10)",
    )

    inspect = commands.add_parser(
        "inspect",
        help="an interactive client for any agent: prompts, live view, permission prompts",
        description="Start an agent and talk to it: type a prompt (end a line with \\ to "
        "continue it on the next), watch what it does, answer its permission requests. "
        "Ctrl-C cancels the running turn; a second Ctrl-C (or Ctrl-D, or /quit) quits.",
    )
    answer = inspect.add_mutually_exclusive_group()
    answer.add_argument("--allow", action="store_true", help="allow every permission request")
    answer.add_argument("--reject", action="store_true", help="reject every permission request")
    inspect.add_argument("--record", metavar="FILE", help="write the transcript as JSON Lines")
    inspect.add_argument(
        "--replay", metavar="FILE", help="show a recorded transcript again (no agent is started)"
    )
    inspect.add_argument(
        "--cwd",
        metavar="DIR",
        help="the session's working directory (default: the current directory)",
    )
    inspect.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long the agent may take to answer a request (default 30)",
    )
    inspect.add_argument("--svg", metavar="FILE", help="also save what was shown as an SVG picture")
    inspect.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        default=2,
        help="the ACP version to speak: 1 (today's editors) or 2 (draft; the default)",
    )
    inspect.add_argument("agent", nargs=argparse.REMAINDER, help="-- then the agent's command line")

    check = commands.add_parser(
        "check",
        help="run a conformance scenario against any agent and report rule by rule",
        description="Start the agent several times and exercise it over stdio: version "
        "negotiation, sessions, a prompt, a cancelled prompt, malformed and unknown messages, "
        "batches and shutdown. Every message is checked against the protocol's rules. "
        "Exit code 0 only when no mandatory rule fails.",
    )
    check.add_argument(
        "--prompt",
        default="Hello from acpio check! Please answer briefly.",
        help="text of the prompt turn",
    )
    check.add_argument(
        "--cancel-prompt",
        metavar="TEXT",
        help="text of the prompt that gets cancelled (default: --prompt); "
        "pick one that keeps the agent busy",
    )
    check.add_argument(
        "--allow",
        action="store_true",
        help="allow permission requests of the prompt turn (default: reject)",
    )
    check.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a request or a turn may take (default 10)",
    )
    check.add_argument(
        "--exit-timeout",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="how long the agent may take to exit once stdin closes (default 3)",
    )
    check.add_argument(
        "--cwd", metavar="DIR", help="sessions' working directory (default: a temporary one)"
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--svg", metavar="FILE", help="also save the report as an SVG picture")
    check.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        help="check only this ACP version (default: 2, then 1, each reported on its own)",
    )
    check.add_argument("agent", nargs=argparse.REMAINDER, help="-- then the agent's command line")
    _serve_parser(commands)
    _registry_parser(commands)
    return parser


def _registry_parser(commands: Any) -> None:
    from ._registry_args import add_registry_parser  # noqa: PLC0415 - argparse only

    add_registry_parser(commands)


def _serve_parser(commands: Any) -> None:
    from ._serve import add_serve_parser  # noqa: PLC0415 - the remote layer only when used

    add_serve_parser(commands)


def _version() -> str:
    from .. import __version__  # noqa: PLC0415 - keeps `acpio._cli` importable on its own

    return __version__


def _agent_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    command = list(args.agent)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error(
            f"{args.command}: give the agent's command after `--`, "
            f"e.g. `acpio {args.command} -- python my_agent.py`"
        )
    return command


def _run_registry(args: argparse.Namespace) -> int:
    """``acpio registry``: plain text, no rich; its failures as one paragraph on stderr."""
    try:
        importlib.import_module("jsonschema")
    except ImportError:
        print(
            "acpio: `acpio registry` needs the `cli` extra: pip install 'acpio[cli]'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from ._failure import CliError  # noqa: PLC0415
    from ._registry import registry_command  # noqa: PLC0415

    try:
        return registry_command(args)
    except CliError as error:
        print(f"acpio: {error.message}", file=sys.stderr)
        if error.detail:
            print("\n".join("    " + line for line in error.detail.splitlines()), file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        print("acpio: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``acpio`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit
    code (the console script passes it to ``sys.exit``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == "serve":
        from ._serve import serve_command  # noqa: PLC0415 - needs no rich

        logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING)
        return serve_command(args)
    if args.command == "registry":
        return _run_registry(args)
    try:
        importlib.import_module("rich")
    except ImportError:
        print(
            "acpio: the command-line tool needs the `cli` extra: pip install 'acpio[cli]'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from ._run import run  # noqa: PLC0415 - rich is imported only now

    logging.getLogger("acpio").addHandler(logging.NullHandler())
    if args.debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    command = None
    if args.command in ("inspect", "check") and not (args.command == "inspect" and args.replay):
        command = _agent_command(parser, args)
    elif args.command == "inspect" and args.agent and args.agent != ["--"]:
        parser.error("inspect: --replay shows a recording; do not give an agent command with it")
    return run(args, command)
