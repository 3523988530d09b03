"""v1 shapes the testing kit turns into its own (v2) ones: session config options.

v1 names a config option's id ``id`` (v2: ``configId``) and a select group's id
``group`` (v2: ``groupId``); everything else has the same shape.
"""

from __future__ import annotations

from .. import schema
from .._json import JsonObject, as_list, as_object, get_field

__all__ = ["config_option", "config_options"]


def config_option(value: object) -> object:
    """A v1 session config option (a JSON object) in the kit's v2 shape."""
    # v1 names the option's id "id" (v2: "configId") and a group's id "group" (v2: "groupId").
    option = as_object(value)
    if option is None:
        return value
    converted: JsonObject = {key: value for key, value in option.items() if key != "id"}
    if "id" in option:
        converted["configId"] = option["id"]
    items = as_list(option.get("options"))
    if items is not None:
        converted["options"] = [_select_item(item) for item in items]
    return converted


def _select_item(value: object) -> object:
    item = as_object(value)
    if item is None:
        return value
    converted: JsonObject = {key: value for key, value in item.items() if key != "group"}
    if "group" in item:
        converted["groupId"] = item["group"]
    members = as_list(item.get("options"))
    if members is not None:
        converted["options"] = [_select_item(x) for x in members]
    return converted


def config_options(raw: object) -> list[schema.SessionConfigOption] | None:
    """The ``configOptions`` of a v1 answer as the kit's (v2) config options; None if absent."""
    options = as_list(get_field(raw, "configOptions"))
    if options is None:
        return None
    converted = [config_option(option) for option in options]
    return schema.decode(schema.encode(converted), list[schema.SessionConfigOption])
