"""The config-and-commands rule, on the JSON an agent sends."""

from __future__ import annotations

from acpio.testing._feature_rules import command_problems, config_problems, setup_problems


def _select(config_id: str, current: object, *values: object) -> dict[str, object]:
    return {
        "type": "select",
        "configId": config_id,
        "name": config_id,
        "currentValue": current,
        "options": [{"value": v, "name": str(v)} for v in values],
    }


def test_config_problems() -> None:
    assert config_problems([_select("m", "a", "a", "b")]) == []
    assert config_problems(None) == []
    grouped = _select("m", "b")
    grouped["options"] = [{"groupId": "g", "name": "G", "options": [{"value": "b", "name": "B"}]}]
    assert config_problems([grouped]) == []
    assert config_problems([_select("m", "c", "a", "b")]) == [
        "config option 'm' has currentValue 'c', which it does not offer (['a', 'b'])"
    ]
    assert config_problems([_select("m", "a", "a"), _select("m", "a", "a")]) == [
        "config option id 'm' appears twice in one list"
    ]
    assert config_problems([_select("m", "a", "a", "a")]) == [
        "config option 'm' offers a value twice: ['a', 'a']"
    ]
    assert config_problems([_select("m", "a")]) == [
        "config option 'm' is a select that offers no values"
    ]
    boolean = {"type": "boolean", "configId": "t", "name": "T", "currentValue": True}
    assert config_problems([boolean]) == []


def test_command_problems() -> None:
    good = {"type": "command", "name": "plan", "description": "d"}
    assert command_problems([good]) == []
    assert command_problems([good, good]) == ["command 'plan' is advertised twice in one list"]
    assert command_problems([{**good, "name": "a b"}]) == [
        "command name 'a b' is empty or contains whitespace"
    ]
    assert command_problems([{"type": "_custom", "name": "a b"}]) == []


def test_setup_problems() -> None:
    result = {
        "sessionId": "s",
        "configOptions": [_select("m", "x", "a")],
        "availableCommands": [{"type": "command", "name": "", "description": "d"}],
    }
    assert len(setup_problems(result)) == 2
    assert setup_problems({"sessionId": "s"}) == []
