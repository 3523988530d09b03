"""Sign-in: ready-made auth methods, who is offered terminal sign-in (``auth.terminal`` or the
``_meta`` marker), ``auth_required`` on ``session/new`` until signed in, ``logout``, the API key
kept under the state directory, and the example agent driven through sign-in over v2."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import acpio
from acpio import schema
from acpio._agent.auth import offered_methods, relaunch_command, requested_terminal_method
from acpio._protocol.peer import Peer
from acpio.auth import ApiKey, SignInError, agent_method, terminal_method
from acpio.testing import MockClient

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "signin_agent.py"
AUTH_REQUIRED = -32000


# ------------------------------------------------------------------ the methods


def test_terminal_method_needs_something_that_marks_the_sign_in_run() -> None:
    method = terminal_method()
    assert (method.method_id, method.args, method.type) == (
        "terminal-login",
        ["--login"],
        "terminal",
    )
    with pytest.raises(ValueError, match="needs args"):
        terminal_method(args=[])
    with pytest.raises(ValueError, match="not the string"):
        terminal_method(args="--login")
    with pytest.raises(ValueError, match="method_id"):
        agent_method("")
    with_env = terminal_method(args=(), env={"MY_AGENT_SETUP": "1"})
    assert with_env.env == [schema.EnvVariable(name="MY_AGENT_SETUP", value="1")]


def test_the_requested_terminal_method_is_read_from_argv_and_env() -> None:
    login = terminal_method("login", args=["--login"])
    setup = terminal_method("setup", args=["auth", "--login"])
    by_env = terminal_method("env", args=(), env={"SETUP": "1"})
    methods = [agent_method(), login, setup, by_env]
    assert requested_terminal_method(methods, [], {}) is None
    assert requested_terminal_method(methods, ["serve", "--acp"], {}) is None
    # Appended to the configured arguments (the protocol) or replacing them (the registry).
    assert requested_terminal_method(methods, ["--acp", "--login"], {}) is login
    assert requested_terminal_method(methods, ["--login"], {}) is login
    # The most specific match wins; arguments count only one after the other.
    assert requested_terminal_method(methods, ["auth", "--login"], {}) is setup
    assert requested_terminal_method(methods, ["--login", "auth"], {}) is login
    assert requested_terminal_method(methods, [], {"SETUP": "1"}) is by_env
    assert requested_terminal_method(methods, [], {"SETUP": "0"}) is None
    assert requested_terminal_method(None, ["--login"], {}) is None


def test_terminal_methods_go_only_to_clients_that_announce_terminal_sign_in() -> None:
    methods = [agent_method("a"), terminal_method("t")]
    assert offered_methods(methods, Peer()) == [methods[0]]
    assert offered_methods(methods, Peer(terminal_auth=True)) == methods
    legacy = offered_methods(methods, Peer(terminal_auth=True, terminal_auth_meta=True))
    assert legacy[0] == methods[0]
    terminal = legacy[1]
    assert isinstance(terminal, schema.AuthMethodTerminal) and isinstance(terminal.meta, dict)
    descriptor = terminal.meta["terminal-auth"]
    assert isinstance(descriptor, dict)
    # The command that starts this very program again, with the method's arguments.
    assert descriptor["command"] == sys.executable
    assert descriptor["args"][-1] == "--login"
    assert descriptor["label"] == terminal.name


def test_the_relaunch_command_names_the_program_without_its_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "agent.py"
    script.write_text("")
    monkeypatch.chdir(tmp_path)
    python = sys.executable
    # `python -u agent.py --acp`: the script made absolute, the agent's own arguments dropped.
    monkeypatch.setattr(sys, "orig_argv", [python, "-u", "agent.py", "--acp"])
    monkeypatch.setattr(sys, "argv", ["agent.py", "--acp"])
    assert relaunch_command() == [python, "-u", str(script)]
    # `python -m my_agent serve`
    monkeypatch.setattr(sys, "orig_argv", [python, "-m", "my_agent", "serve"])
    monkeypatch.setattr(sys, "argv", ["/site/my_agent/__main__.py", "serve"])
    assert relaunch_command() == [python, "-m", "my_agent"]
    # A console script (what `uvx my-agent` runs) is a script too.
    monkeypatch.setattr(sys, "orig_argv", [python, "/venv/bin/my-agent"])
    monkeypatch.setattr(sys, "argv", ["/venv/bin/my-agent"])
    assert relaunch_command() == [python, "/venv/bin/my-agent"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert relaunch_command() == [python]


# ------------------------------------------------------------------ the key


def test_api_key_prefers_the_environment_then_the_stored_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACPIO_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("MY_AGENT_KEY", raising=False)
    key = ApiKey("my agent", env="MY_AGENT_KEY")
    assert key.get() is None
    assert key.path == tmp_path / "my_agent" / "api-key"
    path = key.save("  sk-stored \n")
    assert key.get() == "sk-stored"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    monkeypatch.setenv("MY_AGENT_KEY", " ")  # blank: not a key
    assert key.get() == "sk-stored"
    monkeypatch.setenv("MY_AGENT_KEY", "sk-env")
    assert key.get() == "sk-env"
    assert key.clear() is True
    assert key.clear() is False
    assert key.get() == "sk-env"  # logout forgets the stored key only
    with pytest.raises(SignInError, match="no key was entered"):
        key.save("   ")
    with pytest.raises(ValueError, match="plain file name"):
        ApiKey("x", file_name="../key")


def test_api_key_lives_under_xdg_state_home_without_acpio_state_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACPIO_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    if sys.platform in ("win32", "darwin"):  # pragma: no cover - the platforms' own places
        return
    assert ApiKey("agent").path == tmp_path / "state" / "agent" / "api-key"


# ------------------------------------------------------------------ served


class KeyAgent(acpio.Agent):
    """Signs in with a key set on the object; offers both kinds of method."""

    info = acpio.Implementation(name="key-agent", version="1.0.0")
    auth_methods = (agent_method("browser", "Sign in with a browser"), terminal_method("tty"))

    def __init__(self) -> None:
        self.key: str | None = None
        self.logins: list[str] = []

    async def signed_in(self) -> bool:
        return self.key is not None

    async def login(self, method_id: str) -> None:
        self.logins.append(method_id)
        self.key = "from-browser"

    async def logout(self) -> None:
        self.key = None

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(f"key {self.key}")
        return "end_turn"


TERMINAL_AUTH = schema.ClientCapabilities(
    auth=schema.ClientAuthCapabilities(terminal=schema.TerminalAuthCapabilities())
)


def _method_ids(client: MockClient) -> list[str]:
    response = client.initialize_response
    assert response is not None
    methods = response.auth_methods if isinstance(response.auth_methods, list) else []
    return [m.method_id for m in methods if not isinstance(m, schema.UnknownVariant)]


@pytest.mark.anyio
async def test_v2_session_new_is_auth_required_until_agent_sign_in() -> None:
    agent = KeyAgent()
    async with MockClient(agent) as client:
        assert _method_ids(client) == ["browser"]  # no terminal sign-in announced
        with pytest.raises(acpio.RequestError) as refused:
            await client.new_session()
        assert refused.value.code == AUTH_REQUIRED
        # Every way to sign in, the terminal one too: a user can run it by hand.
        assert refused.value.message == (
            "Authentication required: sign in first ('Sign in with a browser': auth/login with "
            "methodId 'browser'; 'Sign in in a terminal': run `<the agent's command> --login` "
            "in a terminal)"
        )
        # Unknown methods are refused; the agent method signs in.
        with pytest.raises(acpio.RequestError, match="unknown auth method"):
            await client.request("auth/login", {"methodId": "nope"})
        assert await client.request("auth/login", {"methodId": "browser"}) == {}
        assert agent.logins == ["browser"]
        session = await client.new_session()
        assert (await session.prompt("hi")).text == "key from-browser"
        assert await client.request("auth/logout", {}) == {}
        with pytest.raises(acpio.RequestError) as again:
            await client.new_session()
        assert again.value.code == AUTH_REQUIRED


@pytest.mark.anyio
async def test_v2_terminal_methods_are_not_signed_in_through_auth_login() -> None:
    agent = KeyAgent()
    async with MockClient(agent, capabilities=TERMINAL_AUTH) as client:
        assert _method_ids(client) == ["browser", "tty"]
        with pytest.raises(acpio.RequestError) as refused:
            await client.request("auth/login", {"methodId": "tty"})
        assert refused.value.code == AUTH_REQUIRED
        assert "run `<the agent's command> --login` in a terminal" in refused.value.message
        assert agent.logins == []
        agent.key = "typed-in-a-terminal"  # what the terminal run stored
        assert await client.request("auth/login", {"methodId": "tty"}) == {}
        assert agent.logins == []


@pytest.mark.anyio
async def test_v2_client_announcing_terminal_auth_in_meta_gets_the_launch_descriptor() -> None:
    capabilities = schema.ClientCapabilities(meta={"terminal-auth": True})
    async with MockClient(KeyAgent(), capabilities=capabilities) as client:
        assert _method_ids(client) == ["browser", "tty"]
        response = client.initialize_response
        assert response is not None and isinstance(response.auth_methods, list)
        terminal = response.auth_methods[1]
        assert isinstance(terminal, schema.AuthMethodTerminal)
        assert isinstance(terminal.meta, dict) and "terminal-auth" in terminal.meta


def _v1_initialize(meta: dict[str, object] | None, auth: dict[str, object] | None) -> object:
    capabilities: dict[str, object] = {"fs": {"readTextFile": True}, "terminal": True}
    if meta is not None:
        capabilities["_meta"] = meta
    if auth is not None:
        capabilities["auth"] = auth
    return {
        "protocolVersion": 1,
        "clientInfo": {"name": "v1", "version": "1"},
        "clientCapabilities": capabilities,
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("meta", "auth", "offered"),
    [
        (None, None, ["browser"]),
        (None, {"terminal": True}, ["browser", "tty"]),
        # The registry's verifier and shipping editors: only the _meta marker.
        ({"terminal_output": True, "terminal-auth": True}, None, ["browser", "tty"]),
        ({"terminal-auth": False}, {"terminal": False}, ["browser"]),
    ],
)
async def test_v1_terminal_sign_in_is_offered_either_way_it_is_announced(
    meta: dict[str, object] | None, auth: dict[str, object] | None, offered: list[str]
) -> None:
    async with MockClient(KeyAgent(), initialize=False, protocol_version=1) as client:
        result = await client.request("initialize", _v1_initialize(meta, auth))
    assert isinstance(result, dict)
    methods = result["authMethods"]
    assert [m["id"] for m in methods] == offered
    assert result["agentCapabilities"]["auth"] == {"logout": {}}
    if "tty" in offered:
        tty = methods[1]
        assert tty["type"] == "terminal" and tty["args"] == ["--login"]
        assert ("_meta" in tty) == (meta is not None and meta.get("terminal-auth") is True)


# ------------------------------------------------------------------ the example, end to end


def _sign_in(state: Path, key_input: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """What the editor does for a terminal method: the agent's command plus the method's
    arguments, in a terminal (here: a pipe that types the key)."""
    env = {**os.environ, "ACPIO_STATE_DIR": str(state)}
    env.pop("SIGNIN_AGENT_API_KEY", None)
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        input=key_input,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_example_terminal_sign_in_stores_the_key(tmp_path: Path) -> None:
    failed = _sign_in(tmp_path, "\n", ["--login"])
    assert failed.returncode == 1
    assert "signin-agent: sign-in failed: no key was entered" in failed.stderr
    assert failed.stdout == ""
    done = _sign_in(tmp_path, "sk-test-9876\n", ["--login"])
    assert done.returncode == 0, done.stderr
    assert "API key for signin-agent: " in done.stderr
    stored = tmp_path / "signin-agent" / "api-key"
    assert stored.read_text() == "sk-test-9876\n"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600


@pytest.mark.anyio
async def test_the_example_is_driven_through_sign_in_over_v2(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "SIGNIN_AGENT_API_KEY"}
    env["ACPIO_STATE_DIR"] = str(tmp_path)
    command = [sys.executable, str(EXAMPLE)]
    async with MockClient(command, env=env, capabilities=TERMINAL_AUTH) as client:
        response = client.initialize_response
        assert response is not None and isinstance(response.auth_methods, list)
        (method,) = response.auth_methods
        assert isinstance(method, schema.AuthMethodTerminal)
        assert method.args == ["--login"]
        with pytest.raises(acpio.RequestError) as refused:
            await client.new_session()
        assert refused.value.code == AUTH_REQUIRED
        # The editor runs the terminal method, then asks again.
        args = method.args if isinstance(method.args, list) else []
        signed = _sign_in(tmp_path, "sk-live-4242\n", args)
        assert signed.returncode == 0, signed.stderr
        assert await client.request("auth/login", {"methodId": method.method_id}) == {}
        session = await client.new_session()
        result = await session.prompt("hello")
        assert result.text == "(key ...4242) You said: hello"
        assert await client.request("auth/logout", {}) == {}
        assert not (tmp_path / "signin-agent" / "api-key").exists()
        with pytest.raises(acpio.RequestError) as again:
            await client.new_session()
        assert again.value.code == AUTH_REQUIRED
