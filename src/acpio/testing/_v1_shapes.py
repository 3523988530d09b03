"""v1 shapes the testing kit turns into its own (v2) ones: session config options.

v1 names a config option's id ``id`` (v2: ``configId``) and a select group's id
``group`` (v2: ``groupId``); everything else has the same shape.
"""

from __future__ import annotations

from .. import schema

__all__ = ["config_option", "config_options"]


def config_option(option: object) -> object:
    """A v1 session config option (a JSON object) in the kit's v2 shape."""
    # v1 names the option's id "id" (v2: "configId") and a group's id "group" (v2: "groupId").
    if not isinstance(option, dict):
        return option
    converted = {key: value for key, value in option.items() if key != "id"}
    if "id" in option:
        converted["configId"] = option["id"]
    items = option.get("options")
    if isinstance(items, list):
        converted["options"] = [_select_item(item) for item in items]
    return converted


def _select_item(item: object) -> object:
    if not isinstance(item, dict):
        return item
    converted = {key: value for key, value in item.items() if key != "group"}
    if "group" in item:
        converted["groupId"] = item["group"]
    if isinstance(item.get("options"), list):
        converted["options"] = [_select_item(x) for x in item["options"]]
    return converted


def config_options(raw: object) -> list[schema.SessionConfigOption] | None:
    """The ``configOptions`` of a v1 answer as the kit's (v2) config options; None if absent."""
    options = raw.get("configOptions") if isinstance(raw, dict) else None
    if not isinstance(options, list):
        return None
    converted = [config_option(option) for option in options]
    return schema.decode(schema.encode(converted), list[schema.SessionConfigOption])
