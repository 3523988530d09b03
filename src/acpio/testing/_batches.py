"""JSON-RPC ids and batches: which array from the agent answers which client batch, and how well.

How this works: a client batch (a JSON array) that holds requests or invalid entries awaits one
array in reply; a batch of notifications awaits nothing; an empty batch awaits one ``-32600``
error object with id ``null``. `Batches.sent` notes each batch (its requests are registered by
the checker as usual). `Batches.reply` matches an array from the agent to the batch holding its
ids (or, when all its ids are ``null``, to the oldest batch) and judges it: a response for each
request, each once, none for anything else, and one error per invalid entry (by its id when
readable, else with id ``null``). It yields the responses for the checker to check one by one
like any response, and the violations found, in order.

An agent without batch support may refuse a whole batch with one error object with id ``null``
(the official TypeScript SDK does); `Batches.refused` then drops the oldest batch and marks its
requests as owed nothing. A single error with id ``null`` while a batch is pending is taken to
be that refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TypeAlias

from .._json import as_object
from ._rules import short as _short
from ._session_rules import JsonObject, Request, shown_id

__all__ = ("Batches", "BatchEvent", "id_key", "valid_id")

BatchEvent: TypeAlias = tuple[str, str | None] | JsonObject
"""What `Batches.reply` yields: ``(rule, None)`` when a rule examined the reply, ``(rule,
message)`` for a violation, or a response of the reply to check as a single response."""


def id_key(request_id: object) -> object:
    """The identity of a JSON-RPC id: 1, 1.0, True and "1" are different ids."""
    return (type(request_id).__name__, request_id)


def valid_id(request_id: object) -> bool:
    """Whether `request_id` is a usable JSON-RPC id (a string or an integer)."""
    return isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )


def _is_message(item: JsonObject) -> bool:
    return isinstance(item.get("method"), str) or "result" in item or "error" in item


@dataclass(slots=True)
class _Batch:
    """A client batch awaiting its reply: one array with a response per request."""

    requests: dict[object, Request] = field(default_factory=dict[object, Request])  # by id key
    invalid: int = 0  # entries that are no message and have no usable id: errors with id null
    invalid_ids: set[object] = field(default_factory=set[object])  # no message, but a usable id
    empty: bool = False  # [] is answered with one error object, never with an array


class Batches:
    """The client batches awaiting a reply (see the module docstring).

    ``pending`` is the checker's table of client requests not answered yet, by `id_key`: a
    batch's request is still owed a response while it is there.
    """

    def __init__(self, pending: MutableMapping[object, Request]) -> None:
        self._pending = pending
        self._batches: list[_Batch] = []  # oldest first
        self._notification_batches = 0  # sent; none of them may be answered

    def sent(self, items: list[object], register: Callable[[JsonObject], Request | None]) -> None:
        """Note a client batch; `register` handles one entry like a single client message and
        returns the request it registered, if any."""
        batch = _Batch(empty=not items)
        for entry in items:
            item = as_object(entry)
            if item is None:
                batch.invalid += 1
                continue
            request = register(item)
            if request is not None and valid_id(item["id"]):
                batch.requests[id_key(item["id"])] = request
            elif request is not None:
                batch.invalid += 1  # a request whose id is unusable: answered with id null
            elif not _is_message(item):
                if valid_id(item.get("id")):
                    batch.invalid_ids.add(id_key(item["id"]))
                else:
                    batch.invalid += 1
        if batch.empty or batch.requests or batch.invalid or batch.invalid_ids:
            self._batches.append(batch)
        else:
            self._notification_batches += 1

    def refused(self) -> None:
        """One error object with id ``null`` arrived: the oldest pending batch is refused as a
        whole (or an empty batch answered), and its requests are owed nothing."""
        self._prune()
        if not self._batches:
            return
        batch = self._batches.pop(0)
        for request in batch.requests.values():
            request.refused = True

    @property
    def pending(self) -> bool:
        """Whether a batch awaits its reply."""
        return bool(self._batches)

    def reply(self, items: list[object]) -> Iterator[BatchEvent]:
        """Judge an array from the agent (see `BatchEvent` for what is yielded)."""
        if not items and self._notification_batches and not any(b.empty for b in self._batches):
            self._notification_batches -= 1
            yield "no-reply-to-notification", None
            yield (
                "no-reply-to-notification",
                "an empty array [] answering a batch of notifications, which gets no reply at "
                "all (not even [])",
            )
            return
        if not items:
            yield (
                "jsonrpc",
                "an empty array: an array from the agent answers a client batch and holds at "
                "least one response",
            )
            return
        if not all(isinstance(item, dict) and "method" not in item for item in items):
            yield (
                "jsonrpc",
                "an array holding requests or notifications: agents send arrays only to answer "
                "a client batch, and then only responses",
            )
            return
        responses: list[JsonObject] = [item for item in items if isinstance(item, dict)]
        keys = [id_key(item.get("id")) for item in responses if valid_id(item.get("id"))]
        batch = self._batch_for(keys)
        if batch is None:
            if not keys and self._notification_batches:
                self._notification_batches -= 1
                yield "no-reply-to-notification", None
                yield (
                    "no-reply-to-notification",
                    "an array answering a batch of notifications, which gets no reply at all",
                )
            else:
                yield "jsonrpc", "an array of responses, but no client batch awaits a reply"
            return
        self._batches.remove(batch)
        if batch.empty:
            yield (
                "jsonrpc",
                "an array answering an empty batch: an empty batch is answered with one -32600 "
                "error object (id null), not an array",
            )
            return
        yield from self._judge(batch, responses)

    def _judge(self, batch: _Batch, responses: list[JsonObject]) -> Iterator[BatchEvent]:
        seen: set[object] = set()
        nulls = 0
        invalid = batch.invalid + len(batch.invalid_ids)
        for response in responses:
            response_id = response.get("id")
            if valid_id(response_id):
                response_key = id_key(response_id)
                if response_key in seen:
                    yield "jsonrpc", f"the batch reply answers id {_short(response_id)} twice"
                    continue
                seen.add(response_key)
                if response_key in batch.invalid_ids:
                    continue  # an error for an invalid entry, by its id: nothing pending
                if response_key not in batch.requests:
                    yield (
                        "jsonrpc",
                        f"the batch reply answers id {_short(response_id)}, which is not a "
                        "request of that batch",
                    )
                    continue
            elif response_id is None and "id" in response:
                nulls += 1
                if nulls > invalid:
                    yield (
                        "jsonrpc",
                        "the batch reply holds more errors with id null than the batch had "
                        f"invalid entries ({invalid})",
                    )
                    continue
            yield response
        # After the responses were checked (and their requests answered): what is missing.
        for request_key, request in batch.requests.items():
            if request_key not in seen and self._pending.get(request_key) is request:
                # Reported here, so not again as never answered.
                del self._pending[request_key]
                shown = shown_id(request_key)
                yield (
                    "jsonrpc",
                    f"the batch reply has no response to {request.method} (id {_short(shown)})",
                )
        unanswered = batch.invalid + len(batch.invalid_ids - seen) - nulls
        if unanswered > 0:
            entries = "entry" if unanswered == 1 else "entries"
            yield (
                "jsonrpc",
                f"the batch reply has no error for {unanswered} invalid {entries} of the batch "
                "(each gets its own -32600)",
            )

    def _batch_for(self, keys: list[object]) -> _Batch | None:
        """The batch an array answers: the one holding its ids, else (all ids null) the
        oldest."""
        self._prune()
        for batch in self._batches:
            if any(k in batch.requests or k in batch.invalid_ids for k in keys):
                return batch
        return None if keys or not self._batches else self._batches[0]

    def _prune(self) -> None:
        # A batch whose requests were all answered one by one awaits nothing any more.
        self._batches = [batch for batch in self._batches if self._awaits_reply(batch)]

    def _awaits_reply(self, batch: _Batch) -> bool:
        pending: Mapping[object, Request] = self._pending
        return (
            batch.empty
            or bool(batch.invalid or batch.invalid_ids)
            or any(pending.get(k) is request for k, request in batch.requests.items())
        )
