#!/usr/bin/env bash
# Prove the lowest pydantic-ai-slim that the `pydantic-ai` extra accepts: build a fresh
# virtualenv with the extra and exactly that version (plus what the adapter's tests need) and
# run the pydantic-ai tests of tests/adapters in it (the LangGraph ones need their own
# extra). The newest version is what `scripts/test.sh` installs.
# Usage: bash scripts/pydantic_ai_range.sh [VERSION] [pytest args...]
# VERSION defaults to the lower bound written in pyproject.toml; the venv is
# .venv-pydantic-ai-VERSION (rebuilt from scratch on every run).
set -euo pipefail
cd "$(dirname "$0")/.."

lowest=$(sed -n 's/.*"pydantic-ai-slim\[mcp\]>=\([0-9.]*\)".*/\1/p' pyproject.toml | head -n 1)
version="$lowest"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then  # a first argument not starting with "-"
  version="$1"
  shift
fi
if [ -z "$version" ]; then
  echo "pydantic_ai_range.sh: no lower bound found in pyproject.toml's pydantic-ai extra" >&2
  exit 2
fi

venv=".venv-pydantic-ai-$version"
rm -rf "$venv"
python3 -m venv "$venv"
# The testing extra (pytest, jsonschema), the otel extra (the adapter's tracing tests), trio
# for the one trio test, and the official
# Python SDK client that drives the restart journey over protocol v1. The MCP SDK comes
# in whichever version that pydantic-ai's fastmcp accepts (the test server runs on both).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -e ".[testing,pydantic-ai,otel]" "pydantic-ai-slim[mcp]==$version" "trio>=0.25" \
  "agent-client-protocol==0.12.1"
installed=$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("pydantic-ai-slim"))')
if [ "$installed" != "$version" ]; then
  echo "pydantic_ai_range.sh: asked for pydantic-ai-slim $version, got $installed" >&2
  exit 2
fi
echo "pydantic-ai-slim $installed in $venv"
"$venv/bin/python" -m pytest tests/adapters/test_pydantic_ai*.py -q "$@"
