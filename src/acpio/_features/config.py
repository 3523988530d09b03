"""Session config options: model, mode and other pickers the client shows for a session.

How this works: an agent declares its options with :func:`select_option` and
:func:`boolean_option` (as :attr:`acpio.Agent.config_options`, copied into every
new session, or per session from :meth:`acpio.Agent.on_new_session` with
:meth:`SessionConfig.replace`). Each session keeps its own
:class:`SessionConfig`: the current options, readable as a mapping
(``session.config["model"]`` is the current value), sent in the ``session/new``
and ``session/resume`` answers (``configOptions``).

A client change arrives as ``session/set_config_option``; :func:`set_from_client`
checks it against the session's options (an unknown ``configId``, a value the
select does not offer, or a boolean sent for a select is ``-32602`` naming what
is accepted, and nothing changes), applies it, calls
:meth:`acpio.Agent.set_config_option` (which may refuse by raising, restoring the
previous state, or adjust other options), and answers with the full new state.
The agent changes options itself with :meth:`SessionConfig.set` or
:meth:`SessionConfig.replace`; each change sends one ``config_option_update``
with the full list, except while the state is about to go out in an answer
(session setup, a ``set_config_option`` being answered). After every change
(the client's or the agent's) :attr:`ConfigState.saver` saves the values: the session
saves the current values as part of its durable state, and
:meth:`ConfigState.restore` puts saved values back when the session is reopened.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol, TypeAlias

import anyio
from msgspec import UNSET, UnsetType

from .. import schema
from .._errors import LocalProtocolError, RequestError
from .._protocol.values import check_update, require_value

if TYPE_CHECKING:
    from .._handles.host import HandleParts

__all__ = [
    "ConfigState",
    "ConfigValue",
    "SessionConfig",
    "boolean_option",
    "select_option",
    "set_from_client",
    "validate_config_options",
]

#: The value of a config option: a select's value id, or a boolean's state.
ConfigValue: TypeAlias = str | bool

SelectChoice: TypeAlias = schema.SessionConfigSelectOption | tuple[str, str] | str


def _check_category(category: str | None) -> None:
    if category is not None:
        require_value(
            category, schema.KNOWN_SESSION_CONFIG_OPTION_CATEGORY, "config option category"
        )


def _choice(choice: SelectChoice) -> schema.SessionConfigSelectOption:
    if isinstance(choice, schema.SessionConfigSelectOption):
        return choice
    if isinstance(choice, str):
        return schema.SessionConfigSelectOption(value=choice, name=choice)
    value, name = choice
    return schema.SessionConfigSelectOption(value=value, name=name)


def select_option(
    config_id: str,
    name: str,
    choices: Sequence[SelectChoice | schema.SessionConfigSelectGroup],
    *,
    default: str | None = None,
    category: str | None = None,
    description: str | None = None,
) -> schema.SessionConfigSelect:
    """A single-choice option (a dropdown): ``choices`` are its values, ``default`` the current.

    A choice is a ``(value, name)`` pair, a plain value (its own name), a
    :class:`~acpio.schema.SessionConfigSelectOption`, or a
    :class:`~acpio.schema.SessionConfigSelectGroup` of those. ``default`` is the
    first value unless given. ``category`` is ``model``, ``mode``,
    ``model_config``, ``thought_level`` or ``_``-prefixed (UX only).

    :raises LocalProtocolError: for no values, a repeated value, a ``default``
        that is not offered, or an unknown category.
    """
    items: list[schema.SessionConfigSelectOption | schema.SessionConfigSelectGroup] = [
        c if isinstance(c, schema.SessionConfigSelectGroup) else _choice(c) for c in choices
    ]
    values = _flat_values(items)
    if not values:
        raise LocalProtocolError(f"config option {config_id!r} offers no values")
    option = schema.SessionConfigSelect(
        config_id=config_id,
        name=name,
        current_value=default if default is not None else values[0],
        options=list(items),  # type: ignore[arg-type]
        category=UNSET if category is None else category,
        description=UNSET if description is None else description,
    )
    validate_config_options([option])
    return option


def boolean_option(
    config_id: str,
    name: str,
    *,
    default: bool = False,
    category: str | None = None,
    description: str | None = None,
) -> schema.SessionConfigBoolean:
    """An on/off option (a toggle), ``default`` off unless given.

    :raises LocalProtocolError: for an unknown category.
    """
    _check_category(category)
    return schema.SessionConfigBoolean(
        config_id=config_id,
        name=name,
        current_value=default,
        category=UNSET if category is None else category,
        description=UNSET if description is None else description,
    )


def _flat_values(items: Sequence[object]) -> list[str]:
    values: list[str] = []
    for item in items:
        if isinstance(item, schema.SessionConfigSelectGroup):
            values.extend(o.value for o in item.options)
        elif isinstance(item, schema.SessionConfigSelectOption):
            values.append(item.value)
    return values


def select_values(option: schema.SessionConfigSelect) -> list[str]:
    """Every value a select offers, groups flattened, in order."""
    return _flat_values(option.options)


def validate_config_options(options: Sequence[schema.SessionConfigOption]) -> None:
    """Check what the protocol requires of advertised options before they are sent.

    :raises LocalProtocolError: for a repeated ``configId``, a select with no
        values or a repeated value or a current value it does not offer, a
        category neither known nor ``_``-prefixed, or an unknown option type.
    """
    seen: set[str] = set()
    for option in options:
        if not isinstance(option, schema.SessionConfigSelect | schema.SessionConfigBoolean):
            raise LocalProtocolError(
                f"config options must be selects or booleans (select_option, boolean_option), "
                f"got {option!r}"
            )
        if option.config_id in seen:
            raise LocalProtocolError(f"config option id {option.config_id!r} is declared twice")
        seen.add(option.config_id)
        category = option.category
        _check_category(category if isinstance(category, str) else None)
        if isinstance(option, schema.SessionConfigSelect):
            values = select_values(option)
            if not values:
                raise LocalProtocolError(f"config option {option.config_id!r} offers no values")
            if len(set(values)) != len(values):
                raise LocalProtocolError(
                    f"config option {option.config_id!r} offers a value twice: {values}"
                )
            if option.current_value not in values:
                raise LocalProtocolError(
                    f"config option {option.config_id!r} has current value "
                    f"{option.current_value!r}, which it does not offer ({', '.join(values)})"
                )


def _with_value(
    option: schema.SessionConfigOption, value: ConfigValue
) -> schema.SessionConfigOption:
    if isinstance(option, schema.SessionConfigSelect):
        assert isinstance(value, str)
        return schema.SessionConfigSelect(
            config_id=option.config_id,
            name=option.name,
            current_value=value,
            options=option.options,
            description=option.description,
            category=option.category,
            meta=option.meta,
        )
    assert isinstance(option, schema.SessionConfigBoolean) and isinstance(value, bool)
    return schema.SessionConfigBoolean(
        config_id=option.config_id,
        name=option.name,
        current_value=value,
        description=option.description,
        category=option.category,
        meta=option.meta,
    )


class ConfigSaver(Protocol):
    """What keeps a session's config values (its durable state)."""

    async def save_config(self) -> None:
        """Save the current values (called after each change)."""
        ...


class ConfigState:
    """The config options of one session as the library keeps them (see the module doc).

    :class:`SessionConfig` is the agent author's view of it; the session and
    ``session/set_config_option`` change it here. The invariant it keeps: every
    change outside an answer (session setup, a client change being answered)
    reaches the client as one ``config_option_update`` with the full list.
    """

    __slots__ = ("_channel", "client_lock", "options", "quiet", "saver")

    def __init__(self, channel: HandleParts) -> None:
        self._channel: Final = channel
        #: The options (replaced whole, never changed in place).
        self.options: Sequence[schema.SessionConfigOption] = ()
        self.quiet: int = 0  # >0 while the state goes out in an answer: no update needed
        self.client_lock: anyio.Lock | None = None  # one client change at a time
        #: Saves the values after each change of the options or their values (the session's
        #: durable state; an object, not a bound method: nothing made per session).
        self.saver: ConfigSaver | None = None

    async def changed(self) -> None:
        """Let :attr:`saver` save the values (once a change was applied)."""
        if self.saver is not None:
            await self.saver.save_config()

    def values(self) -> dict[str, ConfigValue]:
        """Each option's current value, by ``configId``."""
        return {
            o.config_id: o.current_value
            for o in self.options
            if isinstance(o, schema.SessionConfigSelect | schema.SessionConfigBoolean)
        }

    def restore(self, values: Mapping[str, object]) -> None:
        """Put saved values back without telling the client (a session being reopened).

        A value for an option the session no longer has, or that its option no
        longer accepts, is dropped: the option keeps its current value.
        """
        for config_id, value in values.items():
            try:
                checked = self.check_value(config_id, value)
            except ValueError:
                continue
            self.put(config_id, checked)

    def find(self, config_id: str) -> schema.SessionConfigSelect | schema.SessionConfigBoolean:
        """The option with this ``configId``; :raises KeyError: when there is none."""
        for option in self.options:
            if (
                isinstance(option, schema.SessionConfigSelect | schema.SessionConfigBoolean)
                and option.config_id == config_id
            ):
                return option
        raise KeyError(config_id)

    def ids(self) -> list[str]:
        """The ``configId`` of every option, in order."""
        return [o.config_id for o in self.options if not isinstance(o, schema.UnknownVariant)]

    def check_value(self, config_id: str, value: object) -> ConfigValue:
        """The value if ``config_id`` accepts it; a sentence saying what it accepts otherwise."""
        try:
            option = self.find(config_id)
        except KeyError:
            ids = ", ".join(self.ids()) or "none"
            raise ValueError(
                f"unknown config option {config_id!r}; this session's options are: {ids}"
            ) from None
        if isinstance(option, schema.SessionConfigBoolean):
            if type(value) is not bool:
                raise ValueError(
                    f"config option {config_id!r} is a boolean: set it to true or false "
                    f'(type "boolean"), got {value!r}'
                )
            return value
        values = select_values(option)
        if not isinstance(value, str):
            raise ValueError(
                f"config option {config_id!r} is a select: set it to one of its value ids "
                f'(type "id"): {", ".join(values)}; got {value!r}'
            )
        if value not in values:
            raise ValueError(
                f"{value!r} is not a value of config option {config_id!r}; "
                f"choose one of: {', '.join(values)}"
            )
        return value

    def put(self, config_id: str, value: ConfigValue) -> None:
        """Set one option's current value (already checked)."""
        self.options = [
            _with_value(o, value)
            if not isinstance(o, schema.UnknownVariant) and o.config_id == config_id
            else o
            for o in self.options
        ]

    def reset(self, options: Sequence[schema.SessionConfigOption]) -> None:
        """Take ``options`` (validated) without telling the client (session setup)."""
        validate_config_options(options)
        self.options = tuple(options)

    async def announce(self) -> None:
        """Send the full list, unless an answer being prepared carries it."""
        if self.quiet or self._channel.in_setup:
            return  # the answer being prepared carries the new state
        update = schema.ConfigOptionUpdate(config_options=list(self.options))
        check_update(update)  # as Session.send checks what the agent reports
        await self._channel.send(update)

    def answer_field(self) -> list[schema.SessionConfigOption] | UnsetType:
        """``configOptions`` for a session answer: the list, or omitted when there is none."""
        return list(self.options) if self.options else UNSET


class SessionConfig(Mapping[str, ConfigValue]):
    """The config options of one session and their current values (``session.config``).

    A mapping from ``configId`` to the current value (a select's value id, a
    boolean's state): ``session.config["model"]``. :attr:`options` is the full
    state as the client sees it. Every change keeps the protocol's rules (a
    select's current value is one of its values) and reaches the client as
    one ``config_option_update`` with the full list.
    """

    def __init__(self, state: ConfigState) -> None:
        if type(state) is not ConfigState:
            raise TypeError(
                "SessionConfig objects are created by acpio: use session.config of the "
                "session your agent was given"
            )
        self._state = state

    def __getitem__(self, config_id: str) -> ConfigValue:
        return self._state.find(config_id).current_value

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self._state.options)

    def __repr__(self) -> str:
        return f"<SessionConfig {dict(self)!r}>"

    @property
    def ids(self) -> list[str]:
        """The ``configId`` of every option, in order."""
        return self._state.ids()

    @property
    def options(self) -> list[schema.SessionConfigOption]:
        """The full current state (a copy), as sent in ``configOptions``."""
        return list(self._state.options)

    def option(self, config_id: str) -> schema.SessionConfigSelect | schema.SessionConfigBoolean:
        """The option with this ``configId``.

        :raises KeyError: when the session has no such option.
        """
        return self._state.find(config_id)

    async def set(self, config_id: str, value: ConfigValue) -> None:
        """Change one option's current value and tell the client (``config_option_update``).

        The new value is saved with the session (its durable state) and comes
        back when the session is reopened.

        :raises LocalProtocolError: for an unknown ``config_id`` or a value the
            option does not accept; nothing changes then.
        """
        state = self._state
        try:
            checked = state.check_value(config_id, value)
        except ValueError as exc:
            raise LocalProtocolError(str(exc)) from None
        if self[config_id] == checked:
            return
        state.put(config_id, checked)
        await state.announce()
        await state.changed()

    async def replace(self, options: Sequence[schema.SessionConfigOption]) -> None:
        """Replace the whole list (options added, removed or re-valued) and tell the client.

        :raises LocalProtocolError: for invalid options (see :func:`validate_config_options`).
        """
        validate_config_options(options)
        self._state.options = list(options)
        await self._state.announce()
        await self._state.changed()


async def set_from_client(
    state: ConfigState,
    request: schema.SetSessionConfigOptionRequest,
    apply: Callable[[str, ConfigValue], Awaitable[None]],
) -> schema.SetSessionConfigOptionResponse:
    """Serve ``session/set_config_option`` for a session's config ``state``.

    ``apply`` is the agent's :meth:`acpio.Agent.set_config_option` for the
    session (see the module docstring).

    :raises RequestError: ``-32602`` for an unknown option or value, leaving the
        configuration unchanged; whatever ``apply`` raises, after restoring the
        previous state.
    """
    if isinstance(request, schema.UnknownVariant):
        raise RequestError.invalid_params(
            f"unsupported config value type {request.raw.get('type')!r}; "
            'use "id" for selects or "boolean" for booleans'
        )
    if state.client_lock is None:
        state.client_lock = anyio.Lock()
    # One change at a time: a refused change restores exactly the state it replaced.
    async with state.client_lock:
        try:
            value = state.check_value(request.config_id, request.value)
        except ValueError as exc:
            raise RequestError.invalid_params(str(exc)) from None
        before = list(state.options)
        state.quiet += 1
        try:
            state.put(request.config_id, value)
            await apply(request.config_id, value)
        except BaseException:
            state.options = before
            raise
        finally:
            state.quiet -= 1
        await state.changed()
        return schema.SetSessionConfigOptionResponse(config_options=list(state.options))
