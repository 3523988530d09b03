"""Reading a token file: one bearer token per principal, for :class:`~acpio.remote.RemoteApp`.

How this works: each non-empty line not starting with ``#`` is
``PRINCIPAL TOKEN`` (whitespace between). The file holds secrets, so it is
refused when its group or others have any access to it, before a line is read.
Messages name the line number, never a token.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["read_token_file"]


def read_token_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """The tokens of a token file, each mapped to its principal (``tokens=`` of
    :class:`~acpio.remote.RemoteApp`).

    Each non-empty line not starting with ``#`` is ``PRINCIPAL TOKEN``; a
    principal may have several tokens (rotation), a token names one principal.

    :raises ValueError: when the file cannot be read, is accessible to its group
        or to others (POSIX: mode must be ``0600`` or stricter), has a line that
        is not two fields, names a token twice, or names no token at all.
    """
    where = Path(path)
    try:
        with open(where, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if os.name == "posix" and mode & 0o077:
                raise ValueError(
                    f"the token file {where} is accessible to its group or others "
                    f"(mode {stat.S_IMODE(mode):04o}); it holds secrets: "
                    f"run `chmod 600 {where}`"
                )
            data = file.read()
    except OSError as exc:
        raise ValueError(f"cannot read the token file {where}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"the token file {where} is not UTF-8 text") from None
    tokens: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(
                f"{where}, line {number}: expected `PRINCIPAL TOKEN` (two fields), "
                f"got {len(fields)} field{'s' if len(fields) != 1 else ''}"
            )
        principal, token = fields
        if token in tokens:
            raise ValueError(
                f"{where}, line {number}: this token is already given to "
                f"{tokens[token]!r}; each token names one principal"
            )
        tokens[token] = principal
    if not tokens:
        raise ValueError(f"the token file {where} names no `PRINCIPAL TOKEN` line")
    return tokens
