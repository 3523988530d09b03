"""`acpio registry`: `init` writes entries the vendored schema accepts, `check` refuses what the
registry's CI refuses (each with a message that says what to change), and `check --launch`
judges an agent's sign-in methods as the registry's verifier does."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import jsonschema
import pytest
from cli_helpers import example, run_cli

from acpio import __version__
from acpio._cli import main
from acpio._cli._failure import CliError
from acpio._cli._registry_launch import INITIALIZE, auth_types, launch_command
from acpio._cli._registry_rules import SCHEMA_PATH, problems

GOOD: dict[str, object] = {
    "id": "my-agent",
    "name": "My Agent",
    "version": "1.2.3",
    "description": "Answers prompts",
    "distribution": {"uvx": {"package": "my-agent==1.2.3"}},
}
ICON = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">'
ICON += '<path fill="currentColor" d="M0 0h16v16H0z"/></svg>'


def _entry(directory: Path, **changes: object) -> Path:
    entry = {key: value for key, value in {**GOOD, **changes}.items() if value is not None}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.json").write_text(json.dumps(entry))
    return directory


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["registry", "check", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_vendored_schema_is_the_registrys_byte_for_byte() -> None:
    data = SCHEMA_PATH.read_bytes()
    assert len(data) == 4203
    digest = hashlib.sha256(data).hexdigest()
    assert digest == "9ce5be43c7502d941b5f0e708df193c642b98791b19a357cf5a56698e1627d91"
    schema = json.loads(data)
    assert (
        schema["$id"] == "https://cdn.agentclientprotocol.com/registry/v1/latest/agent.schema.json"
    )


def _validate(path: Path) -> dict[str, object]:
    entry = json.loads(path.read_text())
    jsonschema.Draft7Validator(json.loads(SCHEMA_PATH.read_bytes())).validate(entry)
    return entry


def test_init_writes_a_pinned_uvx_entry_the_schema_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["registry", "init", "my_Agent==2.0.1", "--description", "Answers prompts"]) == 0
    entry = _validate(tmp_path / "my-agent" / "agent.json")
    assert entry == {
        "id": "my-agent",
        "name": "my_Agent",
        "version": "2.0.1",
        "description": "Answers prompts",
        "distribution": {"uvx": {"package": "my_Agent==2.0.1"}},
    }
    err = capsys.readouterr().err
    assert "is not installed here" in err and "icon.svg" in err
    # What init wrote, check passes (the directory is named like the id).
    code, out = _check(capsys, "my-agent")
    assert code == 0, out
    assert "passes" in out


def test_init_reads_the_installed_packages_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # acpio itself is installed here, with a console script named like the package.
    output = tmp_path / "agent.json"
    code = main(
        [
            "registry",
            "init",
            f"acpio=={__version__}",
            "--id",
            "acpio-demo",
            "--arg=--x",
            "-o",
            str(output),
        ]
    )
    assert code == 0, capsys.readouterr()
    entry = _validate(output)
    assert entry["id"] == "acpio-demo"
    assert entry["name"] == "acpio"
    assert isinstance(entry["description"], str) and "Agent Client Protocol" in entry["description"]
    assert entry["license"] == "Apache-2.0"
    assert entry["distribution"] == {"uvx": {"package": f"acpio=={__version__}", "args": ["--x"]}}
    # An existing file is kept unless --force.
    assert main(["registry", "init", f"acpio=={__version__}", "-o", str(output)]) == 1
    assert "--force" in capsys.readouterr().err


def test_init_refuses_a_package_without_a_console_script_named_like_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The official Python SDK installs no console script: `uvx agent-client-protocol` runs none.
    code = main(["registry", "init", "agent-client-protocol==0.12.1", "-o", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 1
    assert "allows no `cmd`" in err and "[project.scripts]" in err
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        ("my-agent", "PACKAGE==VERSION"),
        ("my-agent>=1.0.0", "pin the exact version"),
        ("my-agent==latest", "refuses `latest`"),
        ("my-agent==1.0.0rc1", "numeric `x.y.z`"),
        ("my-agent==1.0", "numeric `x.y.z`"),
        ("9lives==1.0.0", "give one with --id"),
    ],
)
def test_init_refuses_what_the_registry_would(
    requirement: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["registry", "init", requirement, "--description", "d", "-o", str(tmp_path / "a")]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "a").exists()


def test_init_refuses_a_bad_id_and_asks_for_a_description(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "a")
    assert main(["registry", "init", "x==1.0.0", "--id", "Bad_Id", "--description", "d"]) == 2
    assert "not a registry id" in capsys.readouterr().err
    assert main(["registry", "init", "not-installed-agent==1.0.0", "-o", out]) == 2
    assert "--description" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("changes", "where", "message"),
    [
        ({"id": "My_Agent"}, "id", "use lowercase letters, digits and hyphens"),
        ({"version": "1.2.3-beta"}, "version", "not a numeric `x.y.z` version"),
        ({"version": "latest"}, "version", "not a numeric `x.y.z` version"),
        (
            {"distribution": {"uvx": {"package": "my-agent@latest"}}},
            "distribution.uvx.package",
            "asks for `latest`: pin the exact version, e.g. `my-agent==1.2.3`",
        ),
        (
            {"distribution": {"uvx": {"package": "my-agent==latest"}}},
            "distribution.uvx.package",
            "asks for `latest`",
        ),
        (
            {"distribution": {"uvx": {"package": "my-agent==1.2.2"}}},
            "distribution.uvx.package",
            "pins 1.2.2 but `version` is 1.2.3: make them equal (`my-agent==1.2.3`)",
        ),
        (
            {"distribution": {"uvx": {"package": "my-agent>=1.2.3"}}},
            "distribution.uvx.package",
            "is a version range: pin the exact version with `==` (`my-agent==1.2.3`)",
        ),
        (
            {"distribution": {"uvx": {"package": "my-agent"}}},
            "distribution.uvx.package",
            "is not pinned: write `my-agent==1.2.3`",
        ),
        (
            {"distribution": {"npx": {"package": "@me/my-agent@1.0.0"}}},
            "distribution.npx.package",
            "pins 1.0.0 but `version` is 1.2.3: make them equal (`@me/my-agent@1.2.3`)",
        ),
        ({"distribution": None}, "distribution", "missing: add `distribution`"),
        ({"distribution": {}}, "distribution", "empty: add `uvx`"),
        ({"description": None}, "description", "missing: add `description`"),
        (
            {"distribution": {"uvx": {"package": "my-agent==1.2.3", "cmd": "serve"}}},
            "distribution.uvx",
            "`cmd` is not allowed by the registry's schema",
        ),
    ],
)
def test_check_refuses_each_rule_with_what_to_change(
    changes: dict[str, object],
    where: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _entry(tmp_path, **changes)
    code, out = _check(capsys, str(tmp_path / "agent.json"))
    assert code == 1
    assert f"  - {where}: " in out
    assert message in out


def test_check_wants_the_id_to_name_the_entrys_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _entry(tmp_path / "other-name")
    code, out = _check(capsys, str(tmp_path / "other-name"))
    assert code == 1
    assert "'my-agent' differs from its directory 'other-name'" in out
    # A file named directly is not in the registry's layout: no directory rule.
    assert _check(capsys, str(tmp_path / "other-name" / "agent.json"))[0] == 0
    _entry(tmp_path / "my-agent")
    assert _check(capsys, str(tmp_path / "my-agent"))[0] == 0


@pytest.mark.parametrize(
    ("icon", "message"),
    [
        (ICON.replace('"16"', '"24"').replace("0 0 16 16", "0 0 24 24"), "is 24x24: make it 16x16"),
        (ICON.replace("currentColor", "#ff0000"), "uses the colour(s) #ff0000"),
        ("<svg", "not well-formed XML"),
        ("<html/>", "not an SVG image"),
    ],
)
def test_check_reads_the_icon_when_there_is_one(
    icon: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _entry(tmp_path / "my-agent")
    (tmp_path / "my-agent" / "icon.svg").write_text(ICON)
    assert _check(capsys, str(tmp_path / "my-agent"))[0] == 0
    (tmp_path / "my-agent" / "icon.svg").write_text(icon)
    code, out = _check(capsys, str(tmp_path / "my-agent"))
    assert code == 1
    assert message in out


def test_check_of_a_missing_or_broken_file_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _check(capsys, str(tmp_path / "nothing.json"))
    assert code == 1 and "does not exist" in out and "registry init" in out
    (tmp_path / "agent.json").write_text("{not json")
    code, out = _check(capsys, str(tmp_path / "agent.json"))
    assert code == 1 and "is not JSON" in out


def test_every_problem_comes_with_its_place() -> None:
    found = problems({"id": 3, "version": "1", "distribution": {"uvx": {}}})
    assert {p.where for p in found} >= {"id", "version", "distribution.uvx.package", "name"}


def test_auth_types_follow_the_verifier() -> None:
    methods = [
        {"id": "a", "name": "A"},
        {"id": "t", "name": "T", "_meta": {"terminal-auth": {"command": "x"}}},
        {"id": "g", "name": "G", "_meta": {"agent-auth": True}},
        {"id": "e", "name": "E", "type": "env_var"},
        {"id": "x", "name": "X", "type": "terminal"},
    ]
    assert auth_types(methods) == [
        ("a", "agent"), ("t", "terminal"), ("g", "agent"), ("e", "env_var"), ("x", "terminal"),
    ]  # fmt: skip


def test_the_launch_check_sends_what_the_verifier_sends() -> None:
    params = INITIALIZE["params"]
    assert isinstance(params, dict)
    assert params["protocolVersion"] == 1
    assert params["clientCapabilities"]["_meta"] == {"terminal_output": True, "terminal-auth": True}
    assert "auth" not in params["clientCapabilities"]


def test_launch_check_refuses_the_echo_agent() -> None:
    result = run_cli("registry", "check", "--launch", "--", *example("echo_agent"))
    assert result.returncode == 1, result
    assert "must offer an auth method of type `agent` or `terminal`" in result.stderr
    assert "it offered no authMethods" in result.stderr
    assert "acpio.auth.terminal_method()" in result.stderr


def test_launch_check_passes_the_signin_example() -> None:
    result = run_cli("registry", "check", "--launch", "--", *example("signin_agent"))
    assert result.returncode == 0, result.stderr
    assert "passes the registry's launch check: it offers api-key (terminal)" in result.stdout


def test_launch_check_refuses_an_agent_that_prints_to_stdout(tmp_path: Path) -> None:
    script = tmp_path / "chatty.py"
    script.write_text("print('starting up')\n")
    result = run_cli("registry", "check", "--launch", "--", sys.executable, str(script))
    assert result.returncode == 1
    assert "not a protocol message" in result.stderr and "'starting up'" in result.stderr


def test_launch_check_combines_with_the_file_check(tmp_path: Path) -> None:
    _entry(tmp_path / "my-agent")
    result = run_cli(
        "registry", "check", str(tmp_path / "my-agent"), "--launch", "--", *example("echo_agent")
    )
    assert result.returncode == 1
    assert "passes the ACP registry's schema and rules" in result.stdout
    assert "it offered no authMethods" in result.stderr
    usage = run_cli("registry", "check", "--", *example("echo_agent"))
    assert usage.returncode == 2 and "for --launch" in usage.stderr


def test_launch_without_a_command_starts_the_entrys_package() -> None:
    assert launch_command(GOOD) == ["uvx", "my-agent==1.2.3"]
    npx = {"distribution": {"npx": {"package": "@me/agent@1.0.0", "args": ["--acp"]}}}
    assert launch_command(npx) == ["npx", "-y", "@me/agent@1.0.0", "--acp"]
    with pytest.raises(CliError, match="--launch needs the agent's command"):
        launch_command({"distribution": {"binary": {}}})


def test_launch_with_an_empty_command_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["registry", "check", "--launch", "--"]) == 2
    assert "give the agent's command after `--`" in capsys.readouterr().err


def test_check_takes_one_path_and_options_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["registry", "check", "a.json", "b.json"]) == 2
    assert "expected at most one PATH" in capsys.readouterr().err
    assert main(["registry", "check", "a.json", "--timeout", "3"]) == 2
    assert "options go before PATH" in capsys.readouterr().err
