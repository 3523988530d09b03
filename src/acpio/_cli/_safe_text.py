"""The one rule for showing text an agent sent: it reaches the terminal visible, never obeyed.

How this works: an agent controls every string the CLI shows (messages,
thoughts, notices, tool-call titles and text, terminal commands, permission
titles and commands, plans, paths, errors, its stderr). A terminal obeys
control characters, so a hostile agent could clear the screen and draw a
fake permission prompt, set the clipboard (OSC 52), plant links (OSC 8),
rename the window (OSC 0), switch to the alternate screen, or reorder what
is read with bidi overrides. So :func:`visible` replaces every character a
terminal might act on with an escape a person can read (``\\x1b``,
``\\u202e``, ``\\r``): C0 controls but newline and tab, DEL, C1 controls
(U+0080-U+009F, U+009B being CSI), bidi embeddings, overrides, isolates and
marks, and the line and paragraph separators. ``one_line=True`` also escapes
newline and tab, for what must stay on its own line (titles, commands,
paths): a title cannot push a fake prompt onto the next line. Every
renderable built from agent text goes through :func:`visible` (or
:func:`safe`, its :class:`~rich.text.Text` form).

The terminal pane is the one place that interprets anything:
:func:`terminal_text` keeps SGR sequences (``ESC [ ... m``: colours and
styles, turned into rich styles, never passed through) minus the styles
that hide or flash text, and shows every other escape sequence and control
character escaped like the rest. Agent Markdown is rendered without
hyperlinks, so a link shows its real target.
"""

from __future__ import annotations

import re
from typing import Final

from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text

__all__ = ["safe", "safe_markdown", "terminal_text", "visible"]

# Bidi controls: ALM, LRM, RLM, embeddings and overrides, isolates.
_BIDI: Final = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# What a terminal may act on: C0 (but \t and \n), DEL, C1, bidi, line/paragraph separators.
_UNSAFE: Final = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")
_UNSAFE_ONE_LINE: Final = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")
_NAMED: Final = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# SGR: the only sequence the terminal pane keeps (colours and styles).
_SGR: Final = re.compile("\x1b\\[[0-9;:]*m")
# Styles that hide text or make it flash: never taken from the agent.
_NO_HIDING: Final = Style(conceal=False, blink=False, blink2=False)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with every character a terminal could act on written as a visible escape.

    Newlines and tabs stay as they are unless ``one_line`` (see the module doc).
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text) if pattern.search(text) else text


def safe(text: object, style: str = "", *, one_line: bool = True) -> Text:
    """Agent text as a :class:`~rich.text.Text` (one line by default), made :func:`visible`."""
    return Text(visible(str(text), one_line=one_line), style=style)


def safe_markdown(text: str) -> Markdown:
    """Agent Markdown, made :func:`visible`, with links shown as their targets."""
    return Markdown(visible(text), hyperlinks=False)


def terminal_text(text: str) -> Text:
    """Terminal output: SGR colours and styles kept, everything else shown escaped."""
    position = 0
    pending = ""
    for match in _SGR.finditer(text):
        pending += visible(text[position : match.start()]) + match.group()
        position = match.end()
    pending += visible(text[position:])
    # Only SGR sequences are left to decode; rich turns them into styles.
    out = Text.from_ansi(pending)
    for span_index, span in enumerate(out.spans):
        if isinstance(span.style, Style):
            out.spans[span_index] = span._replace(style=span.style + _NO_HIDING)
    return out
