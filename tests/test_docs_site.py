"""The documentation site: every page is in mkdocs.yml's nav (``mkdocs build --strict`` in
scripts/test.sh fails otherwise; this says so sooner), every public module has an API
page, and docs/errors.md names every public exception with what raises it."""

from __future__ import annotations

import importlib
import re

import yaml
from docs_pages import REPO, pages, section, text

PUBLIC_MODULES = (
    "acpio",
    "acpio.rpc",
    "acpio.store",
    "acpio.testing",
    "acpio.remote",
    "acpio.mcp",
    "acpio.permission",
    "acpio.auth",
    "acpio.schema",
    "acpio.adapters.pydantic_ai",
    "acpio.adapters.langgraph",
)


def _nav_pages(entries: object) -> list[str]:
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    return []


def _config() -> dict[str, object]:
    # mkdocs.yml may hold python tags (none today); the nav is plain YAML.
    loaded = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_every_page_is_in_the_nav_once() -> None:
    nav = _nav_pages(_config()["nav"])
    on_disk = [page.removeprefix("docs/") for page in pages() if page != "README.md"]
    assert sorted(nav) == sorted(on_disk)


def test_every_public_module_has_an_api_page() -> None:
    directives = "".join(text(p) for p in pages() if p.startswith("docs/api/"))
    documented = set(re.findall(r"^::: ([\w.]+)$", directives, re.MULTILINE))
    assert documented == set(PUBLIC_MODULES)


def _public_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and obj not in found.values()
            ):
                found[f"{name}.{attr}"] = obj
    return found


def test_the_errors_page_names_every_public_exception() -> None:
    page = text("docs/errors.md")
    named = set(re.findall(r"^\| `([\w.]+)`", page, re.MULTILINE))
    exceptions = _public_exceptions()
    assert len(exceptions) >= 20
    assert named == set(exceptions), (
        sorted(set(exceptions) - named),
        sorted(named - set(exceptions)),
    )


def test_the_errors_page_sorts_agent_and_test_errors() -> None:
    testing = section("docs/errors.md", "## In tests (`acpio.testing`)")
    for name in _public_exceptions():
        if name.startswith("acpio.testing."):
            assert f"`{name}`" in testing
