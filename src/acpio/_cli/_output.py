"""Where the CLI writes: a rich console, an optional live footer, an optional SVG recorder.

How this works: everything the commands show is an append-only log printed with
:meth:`Output.print`. In a terminal, work in progress (a running tool call, its
terminal's last lines, a spinner saying what we wait for) is drawn in a live
footer below the log and redrawn as it changes; once finished it is printed to
the log for good. In a pipe there is no footer and no colour: only the log.
With ``--svg`` a second console records the log alone (never the footer's
intermediate frames), so the picture is exactly the final output.

Footer parts are immutable snapshots built on the event loop thread; rich's
refresh thread only renders them (and animates spinners), so it never reads
state the loop is changing.
"""

from __future__ import annotations

import io
import os
from typing import Final, Literal

from rich.console import Console, Group, RenderableType
from rich.control import Control
from rich.live import Live
from rich.segment import ControlType
from rich.spinner import Spinner
from rich.text import Text

__all__ = ["ColorMode", "Output"]

ColorMode = Literal["auto", "always", "never"]

SVG_WIDTH: Final = 100
_REFRESH_PER_SECOND: Final = 12


class Output:
    """The log, the live footer and the recorder of one command run.

    ``live`` redraws a footer (only in a terminal); ``svg_title`` turns on
    recording for :meth:`save_svg`.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        color: ColorMode = "auto",
        record_svg: bool = False,
        live: bool | None = None,
    ) -> None:
        if console is None:
            console = _make_console(color)
        self.console = console
        self.live_enabled = _can_redraw(console) if live is None else live
        self.recorder: Console | None = None
        if record_svg:
            self.recorder = Console(
                file=io.StringIO(),
                record=True,
                width=SVG_WIDTH,
                force_terminal=True,
                color_system="truecolor",
                legacy_windows=False,
                highlight=False,
                soft_wrap=False,
            )
        self.quiet = False
        """Print the log only to the recording (the command writes something else)."""
        self._live: Live | None = None
        self._parts: dict[object, RenderableType] = {}
        self._status: str | None = None
        self._held = False

    @property
    def is_terminal(self) -> bool:
        """True when the log goes to an interactive terminal (colours, live footer)."""
        return self.live_enabled

    def print(self, *renderables: RenderableType, end: str = "\n") -> None:
        """Append to the log (above the footer), and to the recording."""
        if self.quiet:
            pass
        elif self.console.color_system is None and not self.live_enabled:
            # Plain text (a pipe, a file): no trailing blanks from padded layouts.
            with self.console.capture() as capture:
                self.console.print(*renderables, end=end)
            text = "\n".join(line.rstrip() for line in capture.get().split("\n"))
            self.console.file.write(text)
            self.console.file.flush()
        else:
            self.console.print(*renderables, end=end)
        if self.recorder is not None:
            self.recorder.print(*renderables, end=end)

    def note(self, text: str, style: str = "dim") -> None:
        """A short line of commentary in the log."""
        self.print(Text(text, style=style))

    # -- footer ------------------------------------------------------------------------------

    def set_part(self, key: object, renderable: RenderableType | None) -> None:
        """Show (or, with ``None``, remove) one part of the live footer."""
        if renderable is None:
            self._parts.pop(key, None)
        else:
            self._parts[key] = renderable
        self._refresh()

    def status(self, text: str | None) -> None:
        """Say what we are waiting for, with a spinner (terminal only); ``None`` clears it."""
        self._status = text
        self._refresh()

    def pause(self) -> None:
        """Remove the footer and keep it away until :meth:`resume` (while the user types)."""
        self._held = True
        self._status = None
        self._stop()

    def resume(self) -> None:
        """Show the footer again after :meth:`pause`."""
        self._held = False
        self._refresh()

    def erase_lines(self, count: int) -> None:
        """Erase the last ``count`` lines of a terminal (the user's typed input, which the log
        shows again as the agent echoes it)."""
        if self.live_enabled and count > 0 and not self.quiet:
            self.console.control(
                Control.move_to_column(0),
                *[Control((ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2))] * count,
            )

    def close(self) -> None:
        """Stop the live footer; the log stays."""
        self._parts.clear()
        self._status = None
        self._stop()

    def write_raw(self, text: str) -> None:
        """Write text to the log's stream as is (no markup, no wrapping): JSON output."""
        self.console.file.write(text)
        self.console.file.flush()

    def _refresh(self) -> None:
        if not self.live_enabled or self.quiet or self._held:
            return
        if not self._parts and self._status is None:
            self._stop()
            return
        items: list[RenderableType] = list(self._parts.values())
        if self._status is not None:
            items.append(Spinner("dots", Text(self._status, style="dim"), style="cyan"))
        group = Group(*items)
        if self._live is None:
            self._live = Live(
                group,
                console=self.console,
                auto_refresh=True,
                refresh_per_second=_REFRESH_PER_SECOND,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                vertical_overflow="visible",
            )
            self._live.start()
        else:
            self._live.update(group, refresh=True)

    def _stop(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    # -- export ------------------------------------------------------------------------------

    def save_svg(self, path: str | os.PathLike[str], title: str) -> None:
        """Write what the log showed as an SVG picture (rich's own export)."""
        if self.recorder is None:
            raise RuntimeError("recording was not enabled")
        self.recorder.save_svg(os.fspath(path), title=title)


def _can_redraw(console: Console) -> bool:
    # Forced colours in a pipe still get no redraw: a file must read top to bottom.
    try:
        tty = console.file.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and console.is_terminal and not console.is_dumb_terminal


def _make_console(color: ColorMode) -> Console:
    if color == "always":
        return Console(force_terminal=True, highlight=False)
    if color == "never":
        return Console(no_color=True, highlight=False, force_terminal=False)
    return Console(highlight=False)
