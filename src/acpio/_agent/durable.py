"""A session's durable state: the agent's own state and the config values, kept by the store.

How this works: each session's :class:`DurableState` holds the state the
agent saved last (:meth:`acpio.Session.save_agent_state`) as the JSON value
agent code reads back (:attr:`acpio.Session.agent_state`) and as its encoded
bytes in the session's :class:`~acpio.store.SessionRecord`, with the
``agent_state_version`` it was saved with and the config options' current
values. Every save (of the agent's state, or after a config change) updates
the record and hands it to :meth:`~acpio.store.SessionStore.save_state`, which
queues the write (the SQLite store's writer commits it by the turn's end);
the store gives the record back in ``get`` when the session is reopened, and
the agent server restores it from there (``agent_server.py``).

One rule lives here: what can be saved. A value is encoded once with
msgspec's JSON encoder (so Structs are fine, and tuples come back as lists);
a value it refuses, or one over ``SessionLimits.max_agent_state_bytes``
encoded, raises :class:`~acpio.AgentStateError` before anything is stored.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

import msgspec

from .._errors import AgentStateError
from .._features.config import ConfigState
from .._store.history import SessionRecord, SessionStore

__all__ = ["DurableState", "decode_agent_state", "encode_agent_state"]

logger = logging.getLogger(__name__)

_encode: Final = msgspec.json.encode
_decode: Final = msgspec.json.decode


def encode_agent_state(value: object, max_bytes: int) -> bytes:
    """``value`` as JSON bytes, at most ``max_bytes`` long.

    :raises AgentStateError: for a value msgspec cannot encode as JSON, or a
        longer encoding.
    """
    try:
        encoded = _encode(value)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
        raise AgentStateError(
            f"the agent state cannot be saved: it is not JSON-encodable ({exc}); save dicts "
            "with str keys, lists, str, int, float, bool, None or msgspec Structs. "
            "Nothing was saved"
        ) from None
    if len(encoded) > max_bytes:
        raise AgentStateError(
            f"the agent state cannot be saved: it is {len(encoded)} bytes encoded, over the "
            f"session's limit of {max_bytes} (SessionLimits.max_agent_state_bytes). Nothing "
            "was saved"
        )
    return encoded


def decode_agent_state(data: bytes) -> object:
    """The JSON value of a stored state.

    :raises AgentStateError: when the stored bytes are not JSON.
    """
    try:
        return _decode(data)
    except msgspec.DecodeError as exc:
        raise AgentStateError(f"the stored agent state cannot be read ({exc})") from None


class DurableState:
    """One session's durable state (see the module docstring).

    Until :meth:`bind` gives it the session's record and store, saves only
    change what this object holds (a session made without a store).
    """

    __slots__ = ("config", "record", "restoring", "store", "value", "version")

    def __init__(self, config: ConfigState) -> None:
        self.config: Final = config
        self.value: object = None
        self.version: int = 1
        self.record: SessionRecord | None = None
        self.store: SessionStore | None = None
        #: True while a reopened session's hook runs: config changes are not saved yet.
        self.restoring: bool = False
        config.saver = self

    def bind(self, record: SessionRecord, store: SessionStore, version: int) -> None:
        """Keep this session's durable state in ``record``, saved through ``store``;
        ``version`` is the agent's ``agent_state_version``."""
        self.record = record
        self.store = store
        self.version = version

    async def save_agent_state(self, value: object, max_bytes: int) -> None:
        """Replace the agent state (see :meth:`acpio.Session.save_agent_state`).

        :raises AgentStateError: see :func:`encode_agent_state`; nothing changes then.
        """
        encoded = encode_agent_state(value, max_bytes)
        await self.put_encoded(encoded, self.version)

    async def put_encoded(self, encoded: bytes, version: int) -> None:
        """Take already checked bytes as the agent state, and save them."""
        self.value = _decode(encoded)
        record = self.record
        if record is not None:
            record.agent_state = encoded
            record.agent_state_version = version
            await self._save(record)

    async def save_config(self) -> None:
        """Save the config options' current values (after each change)."""
        record = self.record
        if record is None or self.restoring:
            return
        values = self.config.values()
        if values != record.config_values:
            record.config_values = values  # replaced, never changed in place
            await self._save(record)

    async def _save(self, record: SessionRecord) -> None:
        store = self.store
        # A store written before save_state existed keeps the state in the record only.
        save: Callable[[SessionRecord], Awaitable[None]] | None = getattr(store, "save_state", None)
        if save is not None:
            await save(record)
