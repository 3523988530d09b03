"""An agent that needs an API key and lets the user sign in from the editor.

Run it as ``python examples/signin_agent.py``. Until a key is known, it answers
``session/new`` with ``auth_required`` (-32000), and its ``initialize`` offers a
terminal sign-in: the editor runs ``python examples/signin_agent.py --login`` in a
terminal, where the agent asks for the key and stores it under the user's state
directory (``$ACPIO_STATE_DIR/signin-agent/api-key``, else
``$XDG_STATE_HOME/signin-agent/api-key`` or ``~/.local/state/...``). The variable
``SIGNIN_AGENT_API_KEY`` signs the user in too. ``logout`` forgets the stored key.

The ACP registry lists only agents that offer an ``agent`` or ``terminal`` sign-in;
``acpio registry check --launch -- python examples/signin_agent.py`` checks that the
way the registry's verifier does. See docs/publishing.md.
"""

from __future__ import annotations

import acpio
from acpio.auth import ApiKey, terminal_method

# The key: the environment variable when set, else the file terminal sign-in wrote.
KEY = ApiKey("signin-agent", env="SIGNIN_AGENT_API_KEY")


class SignInAgent(acpio.Agent):
    """Answers prompts once the user has given it an API key."""

    info = acpio.Implementation(name="signin-agent", version="1.0.0", title="Sign-in example")
    # Offered to clients that announce terminal sign-in (auth.terminal or _meta terminal-auth).
    auth_methods = (
        terminal_method(
            "api-key",
            "Enter an API key",
            args=["--login"],
            description="Type the key in a terminal; it is kept for later sessions",
        ),
    )

    async def signed_in(self) -> bool:
        # Asked for each session/new and session/resume: auth_required while False.
        return KEY.get() is not None

    async def terminal_login(self, method_id: str) -> None:
        # acpio.run calls this instead of serving ACP when started with --login.
        KEY.ask(prompt="API key for signin-agent: ")

    async def logout(self) -> None:
        KEY.clear()

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        key = KEY.get()
        if key is None:  # signed out while the session was open
            raise acpio.RequestError.auth_required("signed out: sign in again")
        # A real agent would call its model with the key; this one shows which key it holds.
        await session.message(f"(key ...{key[-4:]}) You said: {acpio.text_of(prompt)}")
        return "end_turn"


if __name__ == "__main__":
    acpio.run(SignInAgent())
