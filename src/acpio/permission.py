"""Permission option presets and the :class:`Outcome` of a permission request.

``ALLOW_OR_REJECT`` (allow once / reject once) is the usual set; ``ALL_OPTIONS``
adds the "always" variants. :func:`option` builds a custom option.

An :class:`Outcome` names what happened: ``allowed`` (the only approval),
``rejected`` (the user said no), ``dismissed`` (the prompt was dismissed),
``cancelled`` (the work was cancelled). A cancelled turn, or a call cancelled
inside its ``async with`` block, does not return an outcome at all:
``request_permission`` raises the cancellation, and the block ends the call
``cancelled``.
"""

from ._handles.permission import ALL_OPTIONS as ALL_OPTIONS
from ._handles.permission import ALLOW_ALWAYS as ALLOW_ALWAYS
from ._handles.permission import ALLOW_ONCE as ALLOW_ONCE
from ._handles.permission import ALLOW_OR_REJECT as ALLOW_OR_REJECT
from ._handles.permission import REJECT_ALWAYS as REJECT_ALWAYS
from ._handles.permission import REJECT_ONCE as REJECT_ONCE
from ._handles.permission import Outcome as Outcome
from ._handles.permission import interpret_outcome as interpret_outcome
from ._handles.permission import option as option

__all__ = (
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "ALLOW_OR_REJECT",
    "ALL_OPTIONS",
    "REJECT_ALWAYS",
    "REJECT_ONCE",
    "Outcome",
    "interpret_outcome",
    "option",
)
