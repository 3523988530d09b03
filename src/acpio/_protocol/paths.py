"""Path rules of ACP: every path on the wire is absolute, never relative to the agent.

This is the one place that decides what "absolute" means (POSIX, a Windows
drive or a UNC share, never empty and never holding NUL); every check of an
outgoing path (:func:`require_absolute`, raising
:class:`~acpio.RelativePathError`) and of an incoming one (:func:`is_absolute`)
goes through it.
"""

from __future__ import annotations

from .._errors import RelativePathError

__all__ = ["is_absolute", "is_local_absolute", "require_absolute"]


def is_absolute(path: object) -> bool:
    """True when ``path`` is a string holding an absolute POSIX or Windows path."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return False
    if path.startswith("/"):
        return True
    # Windows drive paths (C:\ or C:/) and UNC paths are absolute too.
    return (len(path) > 2 and path[1] == ":" and path[2] in "\\/") or path.startswith("\\\\")


def is_local_absolute(path: object) -> bool:
    """True for an absolute path this POSIX machine can open as it is (``/...``, no NUL).

    Stricter than :func:`is_absolute`: a Windows path is valid on the wire but names
    nothing here, and anything else would be resolved against the agent's own cwd.
    """
    return isinstance(path, str) and path.startswith("/") and "\x00" not in path


def require_absolute(path: str, what: str = "path") -> str:
    """Return ``path`` unchanged if absolute.

    :raises RelativePathError: naming ``what`` when the path is relative or empty;
        ACP never interprets paths relative to the agent's own directory.
    """
    if not is_absolute(path):
        raise RelativePathError(path, what)
    return path
