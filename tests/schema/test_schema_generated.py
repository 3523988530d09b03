"""The generated module is up to date, covers the schema, and its public surface is complete."""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from acpio import schema
from acpio.schema import (
    AGENT_METHODS,
    CANCEL_REQUEST_METHOD,
    CLIENT_METHODS,
    PROTOCOL_METHODS,
    PROTOCOL_VERSION,
    IdleStateUpdate,
    PromptRequest,
    PromptResponse,
    ToolCallUpdate,
    _generated,
    decode,
    encode,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "src" / "acpio" / "schema"
GENERATOR = ROOT / "scripts" / "gen_schema.py"
GENERATED_FILES = ("_generated.py", "__init__.py", "SOURCE.md")
VENDORED = ("schema.json", "meta.json")
# Defs deliberately without a type of their own (see the generator's docstring).
NOT_GENERATED = {
    "AgentRequest",
    "AgentResponse",
    "AgentNotification",
    "ClientRequest",
    "ClientResponse",
    "ClientNotification",
    "ExtRequest",
    "ExtResponse",
    "ExtNotification",
    "ErrorStopReason",
    "ElicitationSessionScope",
    "ElicitationRequestScope",
}


def run_generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def copy_schema_dir(target: Path, *, with_outputs: bool) -> None:
    for name in VENDORED + (GENERATED_FILES if with_outputs else ()):
        shutil.copyfile(SCHEMA_DIR / name, target / name)


def test_committed_files_are_up_to_date() -> None:
    result = run_generator("--check")
    assert result.returncode == 0, result.stderr


def test_regenerating_into_a_temp_dir_reproduces_the_committed_files(tmp_path: Path) -> None:
    copy_schema_dir(tmp_path, with_outputs=False)
    result = run_generator("--schema-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for name in GENERATED_FILES:
        assert (tmp_path / name).read_bytes() == (SCHEMA_DIR / name).read_bytes(), name


def test_check_mode_reports_a_stale_module_and_leaves_it_alone(tmp_path: Path) -> None:
    copy_schema_dir(tmp_path, with_outputs=True)
    stale = tmp_path / "_generated.py"
    stale.write_text(stale.read_text(encoding="utf-8") + "# hand edit\n", encoding="utf-8")
    before = stale.read_bytes()
    result = run_generator("--check", "--schema-dir", str(tmp_path))
    assert result.returncode == 1
    assert "_generated.py" in result.stderr
    assert "__init__.py" not in result.stderr
    assert stale.read_bytes() == before


def test_header_and_source_name_the_vendored_schema() -> None:
    digest = hashlib.sha256((SCHEMA_DIR / "schema.json").read_bytes()).hexdigest()
    header = (
        f"Generated from schema.json (sha256 {digest}, ACP draft v2 as shipped with "
        "@agentclientprotocol/sdk 2.4.0) by scripts/gen_schema.py. Do not edit."
    )
    assert (SCHEMA_DIR / "_generated.py").read_text(encoding="utf-8").startswith(f'"""{header}')
    source = (SCHEMA_DIR / "SOURCE.md").read_text(encoding="utf-8")
    assert digest in source
    assert hashlib.sha256((SCHEMA_DIR / "meta.json").read_bytes()).hexdigest() in source


def test_every_schema_def_has_a_type() -> None:
    defs = json.loads((SCHEMA_DIR / "schema.json").read_bytes())["$defs"]
    missing = [name for name in defs if name not in NOT_GENERATED and not hasattr(schema, name)]
    assert missing == []
    # Shared defs are split per variant; their other uses keep a discriminator-free class.
    assert hasattr(schema, "ToolCallUpdateFields")
    assert "session_update" not in schema.ToolCallUpdateFields.__struct_fields__


def test_package_reexports_every_generated_name() -> None:
    assert isinstance(schema.__all__, tuple)
    assert list(schema.__all__) == sorted(set(schema.__all__))
    assert set(_generated.__all__) <= set(schema.__all__)
    assert {"encode", "decode", "convert", "to_builtins", "AcpStruct", "UnknownVariant"} <= set(
        schema.__all__
    )
    for name in schema.__all__:
        assert not name.startswith("_")
        assert getattr(schema, name) is not None


def test_public_classes_and_functions_have_docstrings() -> None:
    undocumented = [
        name
        for name in schema.__all__
        if (inspect.isclass(obj := getattr(schema, name)) or inspect.isfunction(obj))
        and not (obj.__doc__ or "").strip()
    ]
    assert undocumented == []


def test_method_tables_match_meta_json() -> None:
    meta = json.loads((SCHEMA_DIR / "meta.json").read_bytes())
    assert PROTOCOL_VERSION == meta["version"] == 2
    assert list(AGENT_METHODS) == list(meta["agentMethods"].values())
    assert list(CLIENT_METHODS) == list(meta["clientMethods"].values())
    assert list(PROTOCOL_METHODS) == list(meta["protocolMethods"].values())
    assert CANCEL_REQUEST_METHOD == "$/cancel_request" in PROTOCOL_METHODS
    for table in (AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS):
        for name, spec in table.items():
            assert spec.method == name
    notifications = {
        name
        for table in (AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS)
        for name, spec in table.items()
        if spec.is_notification
    }
    expected = {"session/cancel", "session/update", "elicitation/complete", "$/cancel_request"}
    assert notifications == expected
    prompt = AGENT_METHODS["session/prompt"]
    assert (prompt.params, prompt.result) == (PromptRequest, PromptResponse)


def test_union_typed_method_params_decode_to_variants() -> None:
    spec = CLIENT_METHODS["elicitation/create"]
    request = decode(
        b'{"mode":"url","message":"Sign in","elicitationId":"e1","url":"https://x","sessionId":"s"}',
        spec.params,
    )
    assert isinstance(request, schema.ElicitationUrlMode)
    assert request.session_id == "s"
    assert request.request_id is msgspec.UNSET
    assert spec.result is not None
    response = decode(b'{"action":"decline"}', spec.result)
    assert isinstance(response, schema.ElicitationDeclineAction)


@pytest.mark.parametrize(
    ("update", "wire"),
    [
        (
            ToolCallUpdate(tool_call_id="c"),
            b'{"sessionUpdate":"tool_call_update","toolCallId":"c"}',
        ),
        (
            ToolCallUpdate(tool_call_id="c", title=None, content=None, raw_output=None),
            b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":null,'
            b'"content":null,"rawOutput":null}',
        ),
        (
            ToolCallUpdate(tool_call_id="c", content=[], meta={"k": None}),
            b'{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[],"_meta":{"k":null}}',
        ),
        (
            IdleStateUpdate(stop_reason="end_turn"),
            b'{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}',
        ),
    ],
)
def test_unset_is_omitted_and_none_is_null(update: msgspec.Struct, wire: bytes) -> None:
    assert encode(update) == wire
    assert decode(wire, type(update)) == update
    assert decode(wire, schema.SessionUpdate) == update


def test_unset_and_none_stay_distinct_after_decoding() -> None:
    omitted = decode(b'{"sessionUpdate":"tool_call_update","toolCallId":"c"}', ToolCallUpdate)
    cleared = decode(
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":null,"rawInput":null}',
        ToolCallUpdate,
    )
    assert omitted.title is msgspec.UNSET and omitted.raw_input is msgspec.UNSET
    assert cleared.title is None and cleared.raw_input is None
    assert omitted != cleared


def test_discriminators_are_always_encoded_and_checked() -> None:
    assert encode(schema.TextContent(text="hi")) == b'{"type":"text","text":"hi"}'
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.type`"):
        decode(b'{"type":"image","text":"hi"}', schema.TextContent)
