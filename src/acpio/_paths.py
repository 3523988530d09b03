"""Path rules of ACP: every path on the wire is absolute, never relative to the agent."""

from __future__ import annotations

from ._errors import LocalProtocolError

__all__ = ["is_absolute", "require_absolute"]


def is_absolute(path: object) -> bool:
    """True when ``path`` is a string holding an absolute POSIX or Windows path."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return False
    if path.startswith("/"):
        return True
    # Windows drive paths (C:\ or C:/) and UNC paths are absolute too.
    return (len(path) > 2 and path[1] == ":" and path[2] in "\\/") or path.startswith("\\\\")


def require_absolute(path: str, what: str = "path") -> str:
    """Return ``path`` unchanged if absolute.

    :raises LocalProtocolError: naming ``what`` when the path is relative or empty;
        ACP never interprets paths relative to the agent's own directory.
    """
    if not is_absolute(path):
        raise LocalProtocolError(
            f"{what} must be an absolute path, got {path!r}; ACP never resolves paths "
            "against the agent's own working directory"
        )
    return path
