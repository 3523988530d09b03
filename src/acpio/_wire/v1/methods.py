"""The v1 method table: ACP v1 requests served by the same agent and sessions as v2.

How this works: when ``initialize`` asks for protocol version 1, the agent
server looks a v1 request's handler up with :meth:`V1Methods.get` (the table of
:data:`~acpio._wire.v1.V1_WIRE`). Each v1 method is the server's own with v1
shapes at the edges: the v1 params are decoded with msgspec straight into the
session's types (``session/new``, ``session/load``/``resume``,
``session/set_config_option``, ``session/set_mode``; a v1 stdio MCP server,
which has no ``type``, is tagged in the decoder's hook) and handed to the
server's typed entry (one implementation of every rule); methods whose v1
params have their v2 shape go to the server's handler as they came. The result
is projected back. What is v1's own lives here:

* ``initialize``: ``clientInfo``/``clientCapabilities`` in, ``agentInfo``,
  ``agentCapabilities`` (``loadSession``, ``promptCapabilities``,
  ``mcpCapabilities``, ``sessionCapabilities``, ``auth``) and ``authMethods``
  out, derived from the v2 capabilities the agent really has; the client's
  capabilities become the connection's :class:`~acpio._protocol.peer.Peer`.
* ``session/prompt`` is answered at the end of its turn with ``{stopReason}``
  (a queued prompt at the end of its own turn); a failed turn is a JSON-RPC
  error answer; the next queued turn starts only after that answer.
* ``session/load`` is ``session/resume`` with a replay from the start: the
  history goes out in v1 form before the answer.
* ``authenticate``/``logout`` are ``auth/login``/``auth/logout``.
* Every request's params are first read as the v1 schema says
  (:func:`acpio._wire.v1.lenient.lenient`: a ``null`` or a mismatched value of a
  field the schema marks so is absent). ``session/set_config_option`` without
  ``type`` (or with a ``type`` v1 does not know and a string value) sets a value id.
* Modes: the session's config option of category ``mode`` (a select) is v1's
  ``modes`` in the ``session/new``/``load``/``resume`` answers, and
  ``session/set_mode`` sets it through the same path as ``session/set_config_option``
  (the agent's ``set_config_option``, the same checks). A client change of the mode
  is followed by the update the client lacks: ``config_option_update`` after
  ``session/set_mode``, ``current_mode_update`` after ``session/set_config_option``;
  the agent's own changes carry both (:mod:`acpio._wire.v1.projection`).

The v2-only methods (``tool_call/cancel``, ``terminal/cancel``) are not in
the v1 table.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection
from typing import Final, TypeVar, cast

import anyio
import msgspec
from msgspec import UNSET, UnsetType

from ... import schema
from ..._errors import INTERNAL_ERROR, RequestError
from ..._features.mcp_transports import declared_transports
from ..._protocol.peer import TERMINAL_AUTH_META, Peer
from ..._rpc.connection import RequestContext
from ..._session.work import Work
from ...schema._base import dec_hook, join_error_path
from ..wire import Handler, ServerView
from .encoding import V1Encoding
from .lenient import lenient_raw, message_definition
from .projection import (
    META_KEY,
    V1Projection,
    V1Update,
    config_options,
    mode_option,
)
from .values import V1_STOP_REASONS

T = TypeVar("T")

__all__ = ["V1Methods", "v1_peer"]

logger = logging.getLogger(__name__)

_to_builtins = msgspec.json.Decoder().decode
_raw: Final = msgspec.json.encode


def _object(value: object) -> dict[str, object] | None:
    """``value`` as a JSON object (decoded JSON: its keys are strings), else None."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def _params(raw: msgspec.Raw | None) -> dict[str, object]:
    if raw is None:
        return {}
    try:
        value: object = _to_builtins(raw)
    except msgspec.DecodeError as exc:  # pragma: no cover - the envelope already parsed
        raise RequestError.invalid_params(str(exc)) from None
    params = _object(value)
    if params is None:
        raise RequestError.invalid_params("params must be an object")
    return params


def _dec_hook(tp: type, obj: object) -> object:
    """The schema's union decoding, a v1 stdio MCP server (it has no ``type``) tagged first."""
    fields = _object(obj)
    # The union's marker class is the one base of its variants msgspec hands this hook.
    union = tp is not object and issubclass(schema.McpServerStdio, tp)
    if union and fields is not None and "type" not in fields:
        return dec_hook(tp, {**fields, "type": "stdio"})
    return dec_hook(tp, obj)


_decode_new: Final = msgspec.json.Decoder(schema.NewSessionRequest, dec_hook=_dec_hook).decode
_decode_resume: Final = msgspec.json.Decoder(schema.ResumeSessionRequest, dec_hook=_dec_hook).decode


class _ConfigParams(msgspec.Struct, kw_only=True, rename="camel"):
    """v1 ``session/set_config_option`` (``id`` for ``configId`` too; ``type`` optional)."""

    session_id: str
    config_id: str | UnsetType = UNSET
    id: str | UnsetType = UNSET
    type: object = UNSET
    value: object = UNSET
    meta: dict[str, object] | None | UnsetType = msgspec.field(name="_meta", default=UNSET)


class _ModeParams(msgspec.Struct, kw_only=True, rename="camel"):
    """v1 ``session/set_mode`` (each field checked with its own message)."""

    session_id: object = UNSET
    mode_id: object = UNSET


_decode_config: Final = msgspec.json.Decoder(_ConfigParams).decode
_decode_mode: Final = msgspec.json.Decoder(_ModeParams).decode


def _decoded(decode: Callable[[msgspec.Raw | bytes], T], raw: msgspec.Raw | None) -> T:
    """``raw`` params decoded (:raises RequestError: ``-32602`` naming the field)."""
    try:
        return decode(raw if raw is not None else b"{}")
    except msgspec.ValidationError as exc:
        raise RequestError.invalid_params(join_error_path(str(exc))) from None
    except msgspec.DecodeError as exc:  # pragma: no cover - the envelope already parsed
        raise RequestError.invalid_params(str(exc)) from None


def _flag(value: object, *keys: str) -> bool:
    for key in keys:
        fields = _object(value)
        if fields is None:
            return False
        value = fields.get(key)
    return value is True


def _present(value: object, *keys: str) -> bool:
    for key in keys:
        fields = _object(value)
        if fields is None:
            return False
        value = fields.get(key)
    return isinstance(value, dict)


def v1_peer(capabilities: object) -> Peer:
    """The peer of a v1 client, from its ``clientCapabilities`` (malformed parts: none)."""
    return Peer(
        protocol_version=1,
        terminal=_flag(capabilities, "terminal"),
        read_text_file=_flag(capabilities, "fs", "readTextFile"),
        write_text_file=_flag(capabilities, "fs", "writeTextFile"),
        elicitation_form=_present(capabilities, "elicitation", "form"),
        elicitation_url=_present(capabilities, "elicitation", "url"),
        notices=_present(capabilities, "session", "notices"),
        terminal_output=_flag(capabilities, "_meta", "terminal_output"),
        terminal_auth=_flag(capabilities, "auth", "terminal")
        or _flag(capabilities, "_meta", TERMINAL_AUTH_META),
        terminal_auth_meta=_flag(capabilities, "_meta", TERMINAL_AUTH_META),
    )


def _client_info(value: object) -> schema.Implementation:
    fields = _object(value)
    if fields is not None:
        name, version, title = fields.get("name"), fields.get("version"), fields.get("title")
        if isinstance(name, str) and isinstance(version, str):
            return schema.Implementation(
                name=name, version=version, title=title if isinstance(title, str) else UNSET
            )
    return schema.Implementation(name="unknown v1 client", version="")


def _v2_capabilities(peer: Peer) -> schema.ClientCapabilities:
    """What agent code sees of a v1 client's capabilities (the version-neutral part)."""
    if not (peer.elicitation_form or peer.elicitation_url):
        return schema.ClientCapabilities()
    return schema.ClientCapabilities(
        elicitation=schema.ElicitationCapabilities(
            form=schema.ElicitationFormCapabilities() if peer.elicitation_form else UNSET,
            url=schema.ElicitationUrlCapabilities() if peer.elicitation_url else UNSET,
        )
    )


def _auth_method(method: object) -> dict[str, object] | None:
    """The v1 shape of an offered method (``id`` for ``methodId``, ``env`` an object);
    ``None`` for a type v1 does not know."""
    if isinstance(method, schema.AuthMethodAgent):
        out: dict[str, object] = {"id": method.method_id, "name": method.name}
    elif isinstance(method, schema.AuthMethodTerminal):
        out = {"type": "terminal", "id": method.method_id, "name": method.name}
        if isinstance(method.args, list):
            out["args"] = list(method.args)
        if isinstance(method.env, list):
            out["env"] = {variable.name: variable.value for variable in method.env}
    else:
        return None
    if isinstance(method.description, str):
        out["description"] = method.description
    if isinstance(method.meta, dict):
        out["_meta"] = method.meta
    return out


def mcp_capabilities_v1(transports: Collection[str]) -> dict[str, bool]:
    """ACP v1's ``agentCapabilities.mcpCapabilities`` for the declared transports.

    The v1 ``initialize`` answer advertises exactly this: ``http`` and ``sse``
    true for the transports :func:`~acpio._features.mcp_transports.check_mcp_servers`
    accepts. v1 has no ``stdio`` flag (its clients take stdio for granted); a stdio
    server is still accepted only when ``stdio`` is declared, as on v2.

    :raises LocalProtocolError: for a transport acpio does not know.
    """
    declared = declared_transports(transports)
    return {"http": "http" in declared, "sse": "sse" in declared}


#: The v1 method table, built once for every connection: each v1 method's handler
#: (a method of :class:`V1Methods`), found by name when a request comes.
_TABLE: Final = {
    "initialize": "_initialize",
    "authenticate": "_authenticate",
    "logout": "_logout",
    "session/new": "_new_session",
    "session/load": "_load_session",
    "session/list": "_list_sessions",
    "session/resume": "_resume_session",
    "session/close": "_same",
    "session/delete": "_same",
    "session/prompt": "_prompt",
    "session/set_config_option": "_set_config_option",
    "session/set_mode": "_set_mode",
}


class V1Methods:
    """The v1 request handlers of one connection's agent server (see the module docstring).

    The table is the module's, shared by every connection: a connection holds
    this one object, and a request's handler is found by name when it comes.
    """

    __slots__ = ("server",)

    def __init__(self, server: ServerView) -> None:
        self.server: Final = server

    def get(self, method: str) -> Handler | None:
        """The handler of a v1 request (its params read as the v1 schema says), if any."""
        name = _TABLE.get(method)
        if name is None:
            return None
        if name == "_initialize":  # read field by field, leniently, in initialize()
            return self.server.initialize
        handler: Handler = (
            functools.partial(self._same, method) if name == "_same" else getattr(self, name)
        )
        return functools.partial(_read_leniently, method, handler)

    def notification_params(self, method: str, params: msgspec.Raw | None) -> msgspec.Raw | None:
        """A v1 notification's params as the v1 schema says to read them."""
        return lenient_raw(message_definition(method, "Notification"), params)

    async def _same(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        """A method whose v1 params and result have their v2 shape."""
        return await self.server.v2_requests[method](params, context)

    # ------------------------------------------------------------- initialize

    def initialize(self, raw: msgspec.Raw) -> object:
        """Make this a v1 connection from the client's ``initialize`` params; the v1 answer.

        Fills the connection's peer and the agent's ``client_info`` and
        ``client_capabilities``; the caller then runs the agent's
        ``on_initialize`` hook with the v2 form of the request.
        """
        server = self.server
        params = _params(raw)
        capabilities = params.get("clientCapabilities")
        server.peer = v1_peer(capabilities)
        agent = server.agent
        agent.client_info = _client_info(params.get("clientInfo"))
        agent.client_capabilities = _v2_capabilities(server.peer)
        v2 = server.capabilities()
        session = v2.session if isinstance(v2.session, schema.SessionCapabilities) else None
        prompt = session.prompt if session is not None else UNSET
        session_capabilities: dict[str, object] = {"list": {}, "resume": {}, "close": {}}
        if session is not None and isinstance(session.delete, schema.SessionDeleteCapabilities):
            session_capabilities["delete"] = {}
        if session is not None and isinstance(
            session.additional_directories, schema.SessionAdditionalDirectoriesCapabilities
        ):
            session_capabilities["additionalDirectories"] = {}
        agent_capabilities: dict[str, object] = {
            "loadSession": True,
            "promptCapabilities": {
                "image": isinstance(prompt, schema.PromptCapabilities)
                and isinstance(prompt.image, schema.PromptImageCapabilities),
                "audio": isinstance(prompt, schema.PromptCapabilities)
                and isinstance(prompt.audio, schema.PromptAudioCapabilities),
                "embeddedContext": isinstance(prompt, schema.PromptCapabilities)
                and isinstance(prompt.embedded_context, schema.PromptEmbeddedContextCapabilities),
            },
            "mcpCapabilities": mcp_capabilities_v1(agent.mcp_transports),
            "sessionCapabilities": session_capabilities,
        }
        methods = [
            converted
            for method in server.offered_auth_methods()
            if (converted := _auth_method(method)) is not None
        ]
        if agent.auth_methods:
            agent_capabilities["auth"] = {"logout": {}}
        info: dict[str, object] = {"name": agent.info.name, "version": agent.info.version}
        if isinstance(agent.info.title, str):
            info["title"] = agent.info.title
        return {
            "protocolVersion": 1,
            "agentCapabilities": agent_capabilities,
            "authMethods": methods,
            "agentInfo": info,
        }

    # ----------------------------------------------------------------- auth

    async def _authenticate(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        self.server.check_auth_method("authenticate")
        await self.server.v2_requests["auth/login"](params, context)
        return {}

    async def _logout(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        self.server.check_auth_method("logout")
        await self.server.v2_requests["auth/logout"](params, context)
        return {}

    # ------------------------------------------------------------- sessions

    async def _new_session(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        response = await self.server.new_session(_decoded(_decode_new, params), context)
        out: dict[str, object] = {"sessionId": response.session_id}
        self._config_fields(out, response.session_id, response.config_options)
        self._commands_after(response.session_id, response.available_commands, context)
        return out

    def _encoding(self, session_id: str) -> V1Encoding | None:
        """The v1 encoding of a session of this connection (None: no such session)."""
        core = self.server.cores.get(session_id)
        encoding = core.updates.encoding if core is not None else None
        return encoding if isinstance(encoding, V1Encoding) else None

    def _config_fields(self, out: dict[str, object], session_id: str, options: object) -> None:
        """``configOptions`` and ``modes`` of a session answer (the client now knows both)."""
        if not isinstance(options, list):
            return
        listed = cast("list[schema.SessionConfigOption]", options)
        out["configOptions"] = config_options(listed)
        encoding = self._encoding(session_id)
        if encoding is not None:
            state = encoding.projection.modes(listed)
            if state is not None:
                out["modes"] = state

    def _send_after(
        self,
        session_id: str,
        context: RequestContext,
        make: Callable[[V1Projection], list[V1Update]],
    ) -> None:
        """Send the v1 updates ``make`` returns right after this request's answer."""
        core = self.server.cores.get(session_id)
        encoding = self._encoding(session_id)
        if core is None or encoding is None:
            return
        updates = make(encoding.projection)
        if not updates:
            return
        lines = encoding.lines(updates)
        path = core.updates

        async def send() -> None:
            for line in lines:
                await path.send_line(line)

        def start() -> None:
            core.task_group.start_soon(send)

        context.after_response(start)

    def _commands_after(self, session_id: str, commands: object, context: RequestContext) -> None:
        """v1 answers carry no commands: send them as an update right after the answer."""
        session = self.server.sessions.get(session_id)
        if session is None or not isinstance(commands, list) or not commands:
            return
        listed = cast("list[schema.AvailableCommand]", commands)
        update = schema.AvailableCommandsUpdate(available_commands=list(listed))

        task_group = self.server.cores[session_id].task_group

        def send() -> None:
            task_group.start_soon(session.send, update)

        context.after_response(send)

    async def _resume(
        self, params: msgspec.Raw | None, context: RequestContext, *, replay: bool
    ) -> object:
        request = _decoded(_decode_resume, params)
        # v1 has no replayFrom: session/load replays from the start, session/resume not.
        request = msgspec.structs.replace(
            request, replay_from=schema.ReplayFromStart() if replay else UNSET
        )
        response = await self.server.resume_session(request, context)
        out: dict[str, object] = {}
        session_id = request.session_id
        self._config_fields(out, session_id, response.config_options)
        if replay:
            # session/load: everything of the session before its answer (clients
            # that stop reading the replay at the answer keep the commands too).
            await self._send_setup_now(session_id, response.available_commands)
        else:
            self._commands_after(session_id, response.available_commands, context)
        return out

    async def _send_setup_now(self, session_id: str, commands: object) -> None:
        """The updates held during a load's setup, then the commands, before the answer."""
        core = self.server.cores.get(session_id)
        if core is None:
            return
        await core.updates.release_setup_now()
        if isinstance(commands, list) and commands:
            listed = cast("list[schema.AvailableCommand]", commands)
            await core.session.send(schema.AvailableCommandsUpdate(available_commands=listed))

    async def _load_session(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        # The history is replayed, in v1 form, before this answer: editors reopen threads so.
        return await self._resume(params, context, replay=True)

    async def _resume_session(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        return await self._resume(params, context, replay=False)

    async def _list_sessions(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        return schema.to_builtins(await self.server.v2_requests["session/list"](params, context))

    async def _set_config_option(
        self, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        request = _decoded(_decode_config, params)
        config_id = request.config_id if isinstance(request.config_id, str) else request.id
        if not isinstance(config_id, str):
            raise RequestError.invalid_params("Object missing required field `configId`")
        value = request.value
        if request.type == "boolean":
            if not isinstance(value, bool):
                raise RequestError.invalid_params(
                    f"Expected `bool`, got `{_json_type(value)}` - at `$.value`"
                )
            typed: schema.SetSessionConfigOptionRequest = (
                schema.SetSessionConfigOptionBooleanRequest(
                    session_id=request.session_id,
                    config_id=config_id,
                    value=value,
                    meta=request.meta,
                )
            )
        else:
            # v1: a value id has no `type` (one v1 does not know, with a string, is one too).
            if not isinstance(value, str):
                raise RequestError.invalid_params(
                    "`value` must be a value id (a string), or a boolean with "
                    f'`"type": "boolean"`; got {_raw(value).decode()}'
                )
            typed = schema.SetSessionConfigOptionIdRequest(
                session_id=request.session_id, config_id=config_id, value=value, meta=request.meta
            )
        response = await self.server.set_config_option(typed)
        listed = list(response.config_options)
        # The answer carries the options; the client's mode selector needs its update.
        self._send_after(request.session_id, context, lambda p: p.mode_moved(listed))
        return {"configOptions": config_options(listed)}

    async def _set_mode(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        request = _decoded(_decode_mode, params)
        session_id, mode_id = request.session_id, request.mode_id
        if not isinstance(session_id, str):
            raise RequestError.invalid_params("`sessionId` must be a string")
        if not isinstance(mode_id, str):
            raise RequestError.invalid_params("`modeId` must be a string (a mode's id)")
        session = self.server.active(session_id)
        option = mode_option(self.server.cores[session.id].config.options)
        if option is None:
            raise RequestError.invalid_params(
                f"session {session_id} has no modes (no config option of category mode)"
            )
        response = await self.server.set_config_option(
            schema.SetSessionConfigOptionIdRequest(
                session_id=session_id, config_id=option.config_id, value=mode_id
            )
        )
        listed = list(response.config_options)

        def updates(projection: V1Projection) -> list[V1Update]:
            projection.mode_id = mode_id  # the client set it: it knows
            out: list[V1Update] = [
                {"sessionUpdate": "config_option_update", "configOptions": config_options(listed)}
            ]
            out.extend(projection.mode_moved(listed))  # the agent chose another one
            return out

        self._send_after(session_id, context, updates)
        return {}

    # ---------------------------------------------------------------- turns

    async def _prompt(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        server = self.server
        request = server.decode(params, schema.PromptRequest)
        session = server.active(request.session_id)
        if not request.prompt:
            raise RequestError.invalid_params("`prompt` must not be empty")
        turns = server.cores[session.id].turns
        work = turns.accept_prompt(
            list(request.prompt),
            answer_ends_turn=True,
            meta=request.meta if isinstance(request.meta, dict) else None,
        )
        record = server.records.get(session.id)
        if record is not None:
            record.touch()
        if turns.cancelled_by_earlier_cancel(context.sequence):
            # The client cancelled after sending this prompt, before it was accepted here.
            await session.cancel()
        context.after_response(lambda: turns.prompt_answered(work))
        # No early answer on v1: the turn goes on at once, answered when it ends.
        turns.prompt_responded(work)
        try:
            await work.ended.wait()
        except BaseException:
            # $/cancel_request of the prompt (or shutdown): v1 has no other way to say
            # "stop this turn", so the turn is cancelled, and its answer still comes last.
            with anyio.CancelScope(shield=True):
                if not work.ended.is_set():
                    turns.withdraw(work)
                with anyio.move_on_after(session.limits.cancel_grace + 1.0):
                    await work.ended.wait()
            turns.prompt_answered(work)
            raise
        return _answer(work)


def _json_type(value: object) -> str:
    """The JSON type of decoded ``value``, named as msgspec's messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool | int | float | str):
        return type(value).__name__
    return "array" if isinstance(value, list) else "object"


async def _read_leniently(
    method: str, handler: Handler, params: msgspec.Raw | None, context: RequestContext
) -> object:
    """``handler`` given its params as the v1 schema says to read them."""
    return await handler(lenient_raw(message_definition(method, "Request"), params), context)


def _answer(work: Work) -> object:
    """The v1 ``session/prompt`` answer for ended work (or the error answer)."""
    outcome = work.outcome
    if outcome is None or work.discarded:
        return {"stopReason": "cancelled"}
    stop_reason, error = outcome
    if stop_reason == "error":
        detail = error.message if error is not None else "the prompt handler failed"
        raise RequestError(
            INTERNAL_ERROR,
            f"The agent failed while answering this prompt ({detail}). The turn ended; "
            "send the prompt again, or see the agent's log for the traceback.",
        )
    if stop_reason in V1_STOP_REASONS:
        return {"stopReason": stop_reason}
    # A custom stop reason: v1's is a closed enum. The turn ended normally.
    return {"stopReason": "end_turn", "_meta": {META_KEY: {"stopReason": stop_reason}}}
