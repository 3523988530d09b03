"""Sign-in for agents that need credentials: ready-made auth methods and an API key.

An agent that needs the user to sign in lists its methods in
``Agent.auth_methods`` and overrides the hooks they need:

- :func:`terminal_method` (``terminal``): the editor starts the agent again with the
  method's ``args`` (default ``--login``) in a terminal; :func:`acpio.run` then calls
  ``Agent.terminal_login`` instead of serving ACP. It is offered to clients that
  announce terminal sign-in, by ``clientCapabilities.auth.terminal`` or by the
  ``_meta`` marker ``"terminal-auth": true`` (shipping editors and the ACP registry's
  verifier); the latter also get the launch descriptor they read
  (``_meta["terminal-auth"]``: command, args, label).
- :func:`agent_method` (``agent``): the client calls ``auth/login`` (v1
  ``authenticate``) and ``Agent.login`` signs in by itself (a browser, a device code).
- :class:`ApiKey`: an environment variable, else a key stored under the user's state
  directory (``ACPIO_STATE_DIR`` or ``$XDG_STATE_HOME``) by ``ApiKey.ask`` in terminal
  sign-in, removed by ``ApiKey.clear`` in ``Agent.logout``. ACP v1 and v2 have no
  environment-variable method type, so a key from the environment is simply used:
  ``Agent.signed_in`` is true and no method needs to run.

``Agent.signed_in`` says whether the user is signed in; while it is false,
``session/new`` and ``session/resume`` are answered ``auth_required`` (``-32000``).
See docs/publishing.md.
"""

from ._agent.auth import ApiKey as ApiKey
from ._agent.auth import agent_method as agent_method
from ._agent.auth import terminal_method as terminal_method
from ._errors import SignInError as SignInError

__all__ = ("ApiKey", "SignInError", "agent_method", "terminal_method")
